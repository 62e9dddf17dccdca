"""Nugget titles and scopes from the user's own words.

A title says what the nugget is about: the trigger query made into a topic or a question
("Why can't my analyst reset another teammate's password from the admin panel?",
"Show battery % in top bar (GNOME 46)"). It is never a fragment cut out of the
correction and never asserts a value the correction overturns; when the query itself
states such a value, the first claim of the body is the title instead.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from optimizer.claims import (
    CONTRACTIONS,
    english_word,
    is_negated,
    is_question,
    items,
    normalize,
    plain_text,
    split_sentences,
    tokens,
)
from optimizer.fidelity import overturned_values
from query.text import STOPWORDS

MAX_TITLE_WORDS = 14
#: A question keeps its whole wording up to this length ("If I restore a plain dump with
#: psql, does it stop at the first error?"): cut, either half is a fragment.
MAX_QUESTION_WORDS = 22
_CONDITION = re.compile(r"^(?:if|when|whenever|unless|once|after|before|while|since)\b",
                        re.IGNORECASE)

_POLITE_HEAD = re.compile(r"^(?:(?:hi|hello|hey|dear \w+|please|pls|plz|help|urgent|quick "
                          r"question|question)\b[\s,:!.-]*)+", re.IGNORECASE)
# ("help" only as a plea: "..., help!", "please help"; "remote help" is a noun)
_POLITE_TAIL = re.compile(r"(?:[\s,]*\b(?:thanks|thank you|thx|ty|(?:pls|please|plz)(?:\s+help)?|"
                          r"asap)\b[\s!.?]*|\s*[,!?.:-]\s*help\b[\s!.?]*|\s+help\s*!+\s*)+$",
                          re.IGNORECASE)
# Contractions typed without their apostrophe, and the lone lower-case "i".
_CONTRACTIONS = {**CONTRACTIONS, "im": "I'm", "ive": "I've", "i": "I", "hows": "how's",
                 "wheres": "where's", "whos": "who's"}
_SCOPE = re.compile(
    r"\b(?i:in|on|since|from|for|with|after|before|until|as of|under)\s+"
    r"((?:[A-Z][\w-]*\s+)?(?:v|version\s+)?\d+(?:\.\d+)*)(?![.\d:])"
    r"|\b([A-Za-z][\w-]*\s+v\d+(?:\.\d+)*|(?i:version)\s+\d+(?:\.\d+)*"
    r"|[A-Z][\w-]*\s+\d+\.\d+(?:\.\d+)?)(?![.\d:])")


#: Nouns that number things rather than name product versions.
_COUNTED = frozenset("""vlan port floor room building level step page line row column section
chapter table figure ticket rack slot bay queue zone site area office desk lane gate day
days week weeks month months year years hour hours minute minutes second seconds item
option phase stage tier group team wave round batch node host server disk drive
partition volume channel band""".split())


def scope_of(text: str) -> str:
    """A product or version scope the text names ("GNOME 46", "portal v8.2"), or ""."""
    for m in _SCOPE.finditer(text):
        value = " ".join((m.group(1) or m.group(2)).split())
        if m.group(1) and not re.match(r"[A-Z]", value) and not value.lower().startswith(
                ("v", "version")):
            continue  # "since 2019", "for 15": a bare number is not a scope
        if re.match(r"^(?:[A-Z][\w-]*\s+)?\d{1,2}:\d{2}$", value):
            continue
        if re.search(r"\d+\.\d+\.\d+\.\d+", value):
            continue  # an IP address
        number = value.split()[-1].lstrip("vV")
        if "." not in number and len(number) > 2 and not value.lower().startswith(
                ("v", "version")):
            continue  # "UDP 51820", "Office 2019": a port or a year, not a release
        if value.split()[0].lower() in _COUNTED:
            continue  # "VLAN 10", "floor 3": a numbered thing, not a product version
        return value
    return ""


_IDENTIFIER = re.compile(r"[\w-][\d_./\\()\[\]]|[\d_./\\()]\w|\w-\w*\d")


def identifier(word: str, *sources: str) -> bool:
    """A word written in lower case that names something in a system and keeps its
    case at the start of a title: one with digits or symbols inside ("pg_dump",
    "now()", "pkg.example.internal", "ssh-keygen"), a short one without a vowel ("vpn",
    "psql"), or one that is no English word and that the sources use as a command
    (followed by an option: "journalctl -u ...") or begin a sentence with in lower
    case."""
    core = word.strip("?!,;:\"'")
    if not core or core != core.lower() or not re.search(r"[a-z]", core):
        return False
    if _IDENTIFIER.search(core):
        return True
    if english_word(core):
        return False
    if len(core) <= 4 and not re.search(r"[aeiouy]", core) and core not in ("ctrl", "cmd",
                                                                            "fn", "esc"):
        # "vpn", "ntp", "psql", "dpkg": an acronym or a program's name, as typed ("Vpn"
        # would be wrong either way, and which of the two it is cannot be told here).
        return True
    word_rx = re.escape(core)
    return any(re.search(r"(?<![\w-])" + word_rx + r"\s+--?[a-zA-Z]|(?:^|[.!?:]\s+)" + word_rx
                         + r"\b", src) for src in sources)


def topic_of(query: str, *sources: str) -> str:
    """The trigger query as a topic or question: greetings and politeness removed,
    apostrophe-less contractions and a lower-case "i" fixed, first letter capitalized
    unless the first word is an identifier (see :func:`identifier`; ``sources`` are
    the texts that show how it is written), a question ending in "?"."""
    q = " ".join(plain_text(query).split())
    q = _POLITE_HEAD.sub("", q).strip()
    q = _POLITE_TAIL.sub("", q).strip()
    # "word ?" at the end, "word , next": stray spaces (a "?" inside stays: an operator).
    q = re.sub(r"\s+([!.,;:])(?=\s|$)|\s+(\?)$", r"\1\2", q)
    words = []
    for w in q.split(" "):
        core = w.rstrip("?!.,;:")
        fixed = _CONTRACTIONS.get(core.lower()) if core.islower() or core == "I" else None
        words.append(fixed + w[len(core):] if fixed else w)
    q = " ".join(words).strip()
    sentences = split_sentences(q) if q else []
    if len(sentences) > 1 and is_question(sentences[0]) and len(
            [t for t in tokens(sentences[0]) if t not in STOPWORDS]) >= 2:
        # ("How do I turn the volume down? The alerts are really loud": the question,
        # then why it is asked; a question after its context needs the context: "A
        # phlebotomist left. How do I disable her account?")
        q = sentences[0].strip()
    if not q:
        return ""
    question = is_question(q)
    q = q.rstrip("?!.,;: ")
    if len(q.split()) > (MAX_QUESTION_WORDS if question else MAX_TITLE_WORDS):
        # The part that asks ("..., how do I restore it?"), else the first part.
        parts = [p for p in re.split(r"\s*[,;]\s*|\s+\(|\s+-\s+", q) if len(p.split()) >= 3]
        asks = [p for p in parts if is_question(p) and not _CONDITION.match(p) and not (
            set(tokens(p)) & {"it", "that", "this", "they", "them", "those"})]
        pick = asks[0] if asks else parts[0] if parts else q
        if not _CONDITION.match(pick):
            q, question = pick.rstrip("?!.,;: "), pick in asks
    if not identifier(q.split(" ", 1)[0], *sources):
        q = q[0].upper() + q[1:]
    return q + "?" if question else q


def asserts(text: str, keys: set[str]) -> list[str]:
    """The keys (of items other than role words) that text states outside a negated
    clause."""
    return sorted({it.key for it in items(text) if it.key in keys and it.kind != "role"
                   and not is_negated(text, it)})


def restore_case(title: str, *sources: str) -> str:
    """Acronyms the user typed in lower case take the capitals the sources write them
    with ("gnome" -> "GNOME") when the sources never write them otherwise."""
    forms: dict[str, set[str]] = {}
    for src in sources:
        for w in re.findall(r"[^\W_][\w-]*", src):
            forms.setdefault(w.lower(), set()).add(w)
    out = []
    for i, w in enumerate(title.split(" ")):
        core = w.strip("?!.,;:()\"'")
        seen = forms.get(core.lower(), set())
        # A word that is no English word: "vpn" -> "VPN"; or a short one the sources
        # write as an acronym, on its own ("USB drives" makes "usb" "USB"), but not
        # "drop" -> "DROP" because an SQL statement in the answer ("DROP VALUE") writes
        # it in capitals next to other capitals.
        if len(core) >= 2 and core.lower() not in STOPWORDS and len(seen) == 1 and (
                upper := next(iter(seen))).isupper() and (
                core == core.lower() or (i == 0 and core == core.capitalize())) and (
                not english_word(core) or (len(core) <= 4 and _acronym_use(upper, sources))):
            w = w.replace(core, upper, 1)
        out.append(w)
    return " ".join(out)


def _acronym_use(upper: str, sources: Sequence[str]) -> bool:
    """Some source writes ``upper`` between words that are not in capitals."""
    rx = re.compile(r"(\S*)\s+" + re.escape(upper) + r"\b[\s,.;:)]*(\S*)|^" + re.escape(upper)
                    + r"\b[\s,.;:)]*(\S*)", re.MULTILINE)
    for src in sources:
        for m in rx.finditer(src):
            near = [w for w in m.groups() if w]
            if not any(re.fullmatch(r"[A-Z][A-Z0-9_]+", w.strip("(),.;:")) for w in near):
                return True
    return False


def title_for(query: str, body: str, answer: str, scope: str) -> str:
    """The nugget's title (see the module docstring)."""
    topic = restore_case(topic_of(query, body, answer), body, answer)
    question = topic.endswith("?")
    if not topic or len(tokens(topic)) < 2 or (
            not question and asserts(topic, overturned_values(answer, [body]))):
        first = split_sentences(body)[0] if body else ""
        topic = first.rstrip(".!")
        for cut in (r"\s*[;,]\s*|\s+-\s+", r"\s+\(|\s+(?:and|but|because|so|which)\s+"):
            if len(topic.split()) > MAX_TITLE_WORDS:
                head = re.split(cut, topic)[0]
                topic = head if len(head.split()) >= 3 else topic
        question = False
    if scope and scope != "global" and not question and normalize(scope) not in \
            normalize(topic):
        topic = f"{topic} ({scope})"
    return topic


_TASK_HEAD = re.compile(
    r"^(?:(?:how(?:\s+(?:long|many|much|often|soon))?|why|what|where|when|which|who)(?:'s)?"
    r"\b(?:\s+(?:do|does|did|can|can't|cannot|"
    r"could|should|would|will|is|isn't|are|aren't|was|to|i|we|you|my|our|the|it|there|"
    r"doesn't|don't|won't))*|(?:can|could|is|are|do|does|did|should|will)\s+(?:i|we|you|"
    r"my|our|the)|is it possible to|i (?:want|need|would like) to|i want|help me)\s+",
    re.IGNORECASE)


def task_of(query: str) -> str:
    """What the trigger query asks about, as a short phrase: question words, auxiliaries
    and possessives dropped ("why can't my analyst reset another teammate's password
    from the admin panel?" -> "analyst reset another teammate's password from the admin
    panel")."""
    q = " ".join(plain_text(query).split()).rstrip("?!. ")
    q = _POLITE_HEAD.sub("", q)
    q = _TASK_HEAD.sub("", q)
    q = re.sub(r"\b(?:my|our|your|his|her|their)\s+", "", q, flags=re.IGNORECASE)
    words = q.split()
    return " ".join(words[:10]).lower()
