"""Fidelity of a nugget to the correction it came from, decided mechanically.

Discoverability (retrieved, cited) says nothing about whether a nugget says what the user
said. These checks do, per case, from the benchmark's gold ``facts`` and the original
``answer`` (docs/architecture.md, "Nugget quality"):

- **fact coverage**: a gold fact is stated by a nugget when every concrete item of the
  fact (numbers, versions, names, quoted strings, key combinations, menu paths,
  addresses, paths, roles) appears in the nugget's title or body, and either at least
  60% of the fact's content words (by stem) do too, or the fact's embedding is within
  cosine 0.8 of one of the nugget's sentences;
- **unsupported text**: a title or body sentence with a content word that occurs in
  neither the feedback nor the trigger query (template text, invented qualifiers);
- **stale claim**: the nugget states, outside a negated clause, a value of the original
  answer that the correction overturns: a value the gold facts negate ("not in
  Displays", "no longer"), or a concrete value the facts replace with another of the
  same kind (a menu path by a menu path, a number by a number);
- **answer verdict** (the judge's compliance axis): an answer *addresses* the correction
  when it covers every gold fact, is *partial* when it covers some, *contradicts* it
  when it states an overturned value and covers none, and otherwise *misses* it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from optimizer.claims import (
    ATTITUDE_START,
    CHECK_MARKS,
    CONVERSATION_REFERENCE,
    REPAIR_CUE,
    REPAIR_VALUE,
    SHORTHAND,
    STANCE_START,
    STRONG_KINDS,
    TYPOS,
    WORD_NUMBER,
    Item,
    clause_of,
    content_stems,
    is_negated,
    is_self_introduction,
    items,
    named_take_backs,
    normalize,
    number_value,
    plain_voice,
    repaired_value,
    scrapped_spans,
    split_sentences,
    statement_taken_back,
    tokens,
)
from query.text import STOPWORDS, stem

WORD_RECALL_MIN = 0.6
COSINE_MIN = 0.8

Embed = Callable[[Sequence[str]], np.ndarray]


def _present(item: Item, text_norm: str, text_keys: set[str]) -> bool:
    """An item of a fact is present in a text when its normalized form is; a menu path
    when each of its parts is (a fact may join "Settings > Multitasking" and "Hot
    Corner" that the text names apart); a name or role when each of its words is (by
    stem); a number when the text has that number."""
    if item.key in text_keys or item.key in text_norm:
        return True
    if "=" in item.key and item.key in re.sub(r"\s*=\s*", "=", text_norm):
        return True  # "sslmode=verify-full" is stated by "sslmode = verify-full"
    text_stems = {stem(t) for t in tokens(text_norm)}
    if item.kind == "menu":
        return all(re.search(rf"(?<!\w){re.escape(normalize(p))}(?!\w)", text_norm)
                   for p in item.text.split(">") if p.strip())
    if item.kind in ("name", "role"):
        return all(stem(t) in text_stems for t in tokens(item.text))
    if item.kind == "number":
        digits = re.findall(r"\d+(?:[.,:]\d+)*", item.text)
        numbers = set(re.findall(r"\d+(?:[.,:]\d+)*", text_norm))
        return bool(digits) and all(d in numbers for d in digits)
    return False


@dataclass(frozen=True)
class FactVerdict:
    """Whether one gold fact is stated, and why not."""

    fact: str
    covered: bool
    missing_items: tuple[str, ...] = ()
    word_recall: float = 0.0
    cosine: float = 0.0


def fact_coverage(fact: str, text: str, embed: Embed | None = None,
                  source: str | None = None) -> FactVerdict:
    """Is ``fact`` stated by ``text`` (a nugget's title and body, or an answer)?

    With ``source`` (the feedback and query a nugget was made from), a concrete item of
    the fact that the source does not contain is not required, and the word recall
    counts only the fact's words that the source has (when at least two do): a nugget
    can only state what the user wrote, and a gold fact may name the organisation or
    use a word the user never did."""
    norm = normalize(text)
    keys = {i.key for i in items(text)}
    required = items(fact)
    if source is not None:
        src_norm, src_keys = normalize(source), {i.key for i in items(source)}
        required = [i for i in required if _present(i, src_norm, src_keys)]
    missing = tuple(i.text for i in required if not _present(i, norm, keys))
    want = content_stems(fact)
    if source is not None:
        written = want & content_stems(source)
        if len(written) >= 2:
            want = written
    recall = len(want & content_stems(text)) / len(want) if want else 1.0
    cosine = 0.0
    if embed is not None and recall < WORD_RECALL_MIN and not missing:
        parts = [p for p in split_sentences(text) if p.strip()] or [text]
        vecs = embed([fact, *parts])
        cosine = float(max(vecs[0] @ v for v in vecs[1:]))
    covered = not missing and (recall >= WORD_RECALL_MIN or cosine >= COSINE_MIN)
    return FactVerdict(fact, covered, missing, round(recall, 3), round(cosine, 3))


def unsupported_text(title: str, body: str, feedback: str, query: str) -> list[str]:
    """Title or body parts with content words found in neither the feedback nor the
    query, as "part: word, word"."""
    # A check mark or cross says "allowed" / "not allowed" (see claims.CHECK_MARKS), chat
    # shorthand is read written out ("pls" says "please": claims.SHORTHAND), and so are
    # mended misspellings (claims.TYPOS).
    said = " ".join([word for mark, word in CHECK_MARKS.items() if mark in feedback] + [
        full for short, full in SHORTHAND.items()
        if re.search(rf"(?<![\w/.-]){re.escape(short)}(?![\w/.-])", feedback, re.IGNORECASE)] + [
        # (a misspelling the reader mends says the word: "pasword" says "password")
        right for typo, right in TYPOS.items()
        if re.search(rf"(?<![\w/.-]){re.escape(typo)}(?![\w/-]|\.\w)", feedback, re.IGNORECASE)])
    # (a footnote mark glued to a word is no part of it: "water.¹", "stored¹")
    unmarked = re.sub(r"[¹²³⁴⁵⁶⁷⁸⁹⁰]+", " ", feedback)
    # (and so is what a dictating writer spoke: "coxswain dot boathouse dot lan" says
    # coxswain.boathouse.lan, "ten dot forty one dot ten dot two" says 10.41.10.2)
    spoken = plain_voice(feedback)
    support = content_stems(f"{feedback}\n{unmarked}\n{spoken}\n{query}\n{said}")
    # A pronoun's contraction is no content of its own ("It's 30s" for "its 30s").
    support |= {stem(t) for t in tokens(body) if "'" in t and t.split("'", 1)[0] in STOPWORDS}
    support_numbers = {t for t in tokens(f"{feedback}\n{spoken}\n{query}")
                       if any(c.isdigit() for c in t)}
    # (a number the writer spelled out is supported as digits: "one hundred and twenty")
    support_numbers |= {str(number_value(m.group(0))) for m in re.finditer(
        r"\b" + WORD_NUMBER + r"\b", f"{feedback}\n{query}", re.IGNORECASE)}
    # A name put together from parts the writer wrote ("gw-hq.example" after "gw-ash.example
    # ... edit: gw-hq, not gw-ash") invents nothing.
    pieces = {p for w in support for p in re.split(r"[.\-_/]+", w) if p}
    out = []
    for part in [title, *split_sentences(body)]:
        # ("cannot" is "can not", two function words, as "can't" is: "Can staff X? No."
        # said as "Staff cannot X" adds no content)
        extra = sorted(w for w in content_stems(re.sub(r"(?i)\bcannot\b", "can not", part))
                       - support
                       if not (any(c.isdigit() for c in w) and w in support_numbers)
                       and not (re.search(r"[.\-_/]", w) and all(
                           p in pieces for p in re.split(r"[.\-_/]+", w) if p)))
        if extra:
            out.append(f"{part.strip()}: {', '.join(extra)}")
    return out


# ("I&O", "I/O" are names, not the writer.)
_FIRST_PERSON_SINGULAR = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|(?i:me|my|mine|myself))\b"
                                    r"(?![&/])")
_THANKS = re.compile(r"\b(?:thanks|thank you|thx|cheers|hi|hello|hey|sorry)\b", re.IGNORECASE)
_INTERJECTION_START = re.compile(r"^(?:(?:ha|haha|lol|ok|okay|fine|well|yes|yeah|yep|nope|wow|"
                                 r"hmm|sure|thanks|careful)\b\s*[,!:]|(?:yes|yeah|yep|nope|nah|"
                                 r"lol|haha|ugh|hmm)\s)|^(?:you're |you are )?right(?: that|,)",
                                 re.IGNORECASE)
#: A verdict on what was said before ("That was true until last summer.", "That's the
#: normal rule, but ...").
_VERDICT_START = re.compile(r"^(?:(?:that|this|it)(?:'s|\s+is|\s+was)|is|was)\s+(?:(?:only|"
                            r"still|mostly|partly|not)\s+)?(?:right|true|correct|wrong|fine|"
                            r"outdated|the\s+(?:normal|usual|general|old)\s+rule)\b|"
                            r"^(?:that|this|it)\s+(?:does(?:n't| not)\s+|not\s+)(?:help\b|"
                            r"work\s*[.!]*$)", re.IGNORECASE)
#: A spoken filler or tag left in the text ("you just, like, press", "Er, ...").
_FILLER_LEFT = re.compile(r",\s*(?:like|yeah|you know|right)\s*,|^(?:er|erm|um|uh)\b|"
                          r"\b(?:um|uh|erm)\b", re.IGNORECASE)
#: A field of a report form kept with its label ("Actual: says ...", "Expected: ...").
_FORM_FIELD = re.compile(r"\b(?:actual|expected|observed|component)(?:\s+(?:result|behaviou?r))?"
                         r"\s*:", re.IGNORECASE)
#: A farewell or a social remark that closes a message ("See you on Friday!").
_FAREWELL = re.compile(r"^(?:see you|have a (?:nice|good|great)|take care|all the best|"
                       r"good luck)\b", re.IGNORECASE)
_TEAM_STORY = re.compile(r"\b(?:cost|took|bit|burned|burnt|hit|caught|wasted)\s+(?:me|us)\b",
                         re.IGNORECASE)


def conversational_text(title: str, body: str) -> list[str]:
    """Parts of a nugget that are talk, not knowledge, as "part: why" (a surface check
    of the published text, independent of how it was written): in the body, the first
    person singular (the writer's story: "I pasted it", "my script"), what something cost
    or did to the writer ("it took us a day", "this bit us"), a sentence that opens with an
    interjection or an agreement ("Ha, ...", "Fine, ...", "Right that ..."), an elliptical
    reply ("Not on a Friday."), the writer introducing themself ("Ana from Unit 4
    here."), a stance ("Honestly, ..."), a verdict on what was said ("That was true until
    May."), a question or "!!"; in the title or the body, thanks or
    greetings and references to the conversation ("your answer", "you said"). A title may ask the
    user's question in the user's words ("Do I have to eject the USB drive?")."""
    out = []
    for m in _THANKS.finditer(title):
        out.append(f"{title.strip()}: {m.group(0)}")
    for m in CONVERSATION_REFERENCE.finditer(title):
        out.append(f"{title.strip()}: {m.group(0)}")
    for part in split_sentences(body):
        p = part.strip()
        why = []
        # "Databases > My accounts": the words of a menu, a quote or a name are not talk.
        masked = p
        for it in items(p):
            if it.kind in ("menu", "quoted", "name"):
                masked = masked[:it.start] + " " * (it.end - it.start) + masked[it.end:]
        if person := _FIRST_PERSON_SINGULAR.search(masked):
            why.append(f"first person ({person.group(0)})")
        if _INTERJECTION_START.match(p):
            why.append("opens with an interjection or agreement")
        if story := _TEAM_STORY.search(masked):
            why.append(f"the writer's story ({story.group(0)})")
        if re.match(r"(?i)^not\b(?!\s+(?:allowed|permitted|supported|recommended|available|"
                    r"needed|required|possible|installed|enabled)\b)", p) and len(tokens(p)) <= 4:
            why.append("an elliptical reply")
        if is_self_introduction(p):
            why.append("the writer introducing themself")
        if STANCE_START.match(p):
            why.append("opens with the writer's stance")
        if ATTITUDE_START.match(p):
            why.append("opens with the writer's attitude")
        if _VERDICT_START.match(p):
            why.append("a verdict on what was said before")
        if filler := _FILLER_LEFT.search(masked):
            why.append(f"a spoken filler ({filler.group(0).strip(' ,')})")
        if form := _FORM_FIELD.search(masked):
            why.append(f"a report form's field ({form.group(0)})")
        if _FAREWELL.match(p):
            why.append("a farewell")
        if p.endswith("?") or "!!" in p:
            why.append("a question or exclamations")
        if thanks := _THANKS.search(p):
            why.append(f"thanks or greeting ({thanks.group(0)})")
        if ref := CONVERSATION_REFERENCE.search(p):
            why.append(f"refers to the conversation ({ref.group(0)})")
        if why:
            out.append(f"{p}: {'; '.join(why)}")
    return out


def _value_keys(item: Item) -> set[str]:
    keys = {item.key}
    if item.kind == "menu":
        keys.add(normalize(item.text.split(">")[-1]))
    return keys


#: Kinds whose values fill one slot of an answer: a menu path replaced by another menu
#: path is overturned. Other kinds (numbers, names, identifiers) must share a context word
#: with the value that replaces them ("5 minutes" by "15 minutes").
_SLOT_KINDS = frozenset({"menu", "keys", "path", "url", "email"})


def _context(text: str, item: Item, width: int = 3) -> set[str]:
    before = tokens(text[:item.start])[-width:]
    after = tokens(text[item.end:])[:width]
    return content_stems(" ".join(before + after))


#: Verbs that change a setting: "staff cannot change the Automatic Suspend delays",
#: "Automatic Screen Lock cannot be switched off" deny a change and leave the setting
#: they name standing, so that name is the topic, not an overturned value.
_CHANGE_VERB = re.compile(
    r"\b(?:can ?not|can't|cannot|won't|will not|may not|must not|mustn't|are not|aren't|"
    r"is not|isn't|not|never|no one can|nobody can)\s+(?:be\s+|been\s+|get\s+)?"
    r"(?:\w+ly\s+)?(?:chang|modif|edit|alter|adjust|lengthen|shorten|extend|rais|lower|"
    r"increas|decreas|overrid|overridden|switch(?:ed)? off|turn(?:ed)? off|switch(?:ed)? on|"
    r"turn(?:ed)? on|disabl|enabl|unset|reset|customi[sz]|renam|mov|delet|remov|uninstall)\w*",
    re.IGNORECASE)


def _negates_value(fact: str, item: Item) -> bool:
    """``is_negated`` for a value, except where the negation denies a change to what the
    item names ("cannot be switched off"), or where it belongs to another value that only
    places this one: "does not appear under Networks in Other Locations" and "Night Light
    is not in Displays" overturn Networks and Displays, not Other Locations or Night
    Light."""
    if not is_negated(fact, item) or _CHANGE_VERB.search(clause_of(fact, item)):
        return False
    clause = clause_of(fact, item)
    at = fact.find(clause)
    if at < 0:
        return True
    others = [o for o in items(fact) if o.start != item.start and o.kind != "role"
              and at <= o.start and o.end <= at + len(clause)]
    for neg in _NEGATION.finditer(fact, at, at + len(clause)):
        if neg.end() <= item.start:
            # "not ... Networks in Other Locations": a nearer value is the negated one.
            if any(neg.end() <= o.start and o.end <= item.start and
                   not re.fullmatch(r"[\s,]*(?:or|nor|and)?\s*", fact[o.end:item.start])
                   for o in others):
                return False
        elif neg.start() >= item.end and any(
                o.start >= neg.end() and (_PLACE.fullmatch(fact[neg.end():o.start]) or
                                          _object_of(fact[neg.end():o.start]))
                for o in others):
            # "Night Light is not in Displays", "gw-2 no longer accepts RSA keys": what
            # follows the negation is negated, not the subject ("X is not allowed on
            # office PCs" still negates X: the PCs only scope it).
            return False
    return True


def _object_of(between: str) -> bool:
    """The words between a negation and a value make the value a verb's object ("no
    longer accepts"), not a scope after a participle ("not allowed on")."""
    toks = tokens(between)
    return 0 < len(toks) <= 3 and not set(toks) & _PREPOSITIONS


_PREPOSITIONS = frozenset("""on in at for to under from by with within inside across via
into onto""".split())
_NEGATION = re.compile(r"\b(?:not|no|never|nor|cannot)\b|n't\b", re.IGNORECASE)
_PLACE = re.compile(r"\s*(?:longer\s+|anymore\s+)?(?:in|under|on|at|inside|within|part of|"
                    r"listed (?:in|under))\s+(?:the\s+)?", re.IGNORECASE)


def overturned_values(answer: str, facts: Sequence[str], feedback: str = "") -> set[str]:
    """Keys of the answer's values that the gold facts overturn (see the module
    docstring); the last part of a menu path counts as a value of its own.

    A value is overturned when a fact negates it, or when it is absent from the facts
    and a fact states a new value of the same kind in its place (for numbers, names and
    identifiers: with a context word in common) that the feedback does not itself state
    next to the old one."""
    positive: set[str] = set()
    negative: set[str] = set()
    new_values: list[tuple[str, set[str]]] = []  # (kind, context) of the facts' new values
    answer_norm = normalize(answer)
    for fact in facts:
        for it in items(fact):
            keys = _value_keys(it)
            (negative if _negates_value(fact, it) else positive).update(keys)
            if it.key not in answer_norm:
                new_values.append((it.kind, _context(fact, it)))
    stated = {it.key for it in items(feedback) if not is_negated(feedback, it)} \
        if feedback else set()
    out = set()
    for it in items(answer):
        if it.kind == "role":
            continue
        context = _context(answer, it)
        for key in _value_keys(it):
            # A value inside a longer one of the facts ("CorpNet" in "CorpNet Wi-Fi")
            # takes that one's polarity.
            if key in positive or any(key in p.split() or f" {key} " in f" {p} "
                                      for p in positive):
                continue
            if key in negative or any(f" {key} " in f" {n} " for n in negative):
                out.add(key)
                continue
            replaced = it.kind in STRONG_KINDS and any(
                kind == it.kind and (kind in _SLOT_KINDS or ctx & context)
                for kind, ctx in new_values)
            if replaced and key not in stated:
                out.add(key)
    return out


#: Cosine (MiniLM) from which a sentence naming an overturned value restates the
#: answer's claim about it ("Use Alt+Shift to switch layouts" against "Press Alt+Shift to
#: cycle between your layouts": 0.79) rather than saying something else of it ("Alt+Shift
#: is the Windows habit": 0.50; "Super+N does nothing here": 0.21).
RESTATES = 0.65


#: A negation that governs what follows it ("DON'T: run ...", "never run ...", "do not
#: just run ...": at most one word between, no comma).
_NEGATOR = r"(?:don'?t|do\s+not|never|must\s+not|mustn'?t|can'?t|cannot|won'?t|should\s+not|" \
           r"shouldn'?t|no\s+longer)"


def negation_lost(body: str, feedback: str) -> list[str]:
    """Sentences of the body that say what a sentence of the feedback says, but without
    the negation the feedback put before it: "DON'T: run migration files by hand against
    prod" published as "Run migration files by hand against prod." The body sentence's
    content words (three or more) are all in one feedback sentence, whose negation stands
    right before the body sentence's first content word; the body sentence has no
    negation of its own."""
    # (read as the reader reads it: a dictated "full stop" ends a sentence)
    sources = [s for line in plain_voice(feedback).splitlines() for s in split_sentences(line)]
    out = []
    for part in split_sentences(body):
        stems = content_stems(part)
        if len(stems) < 3 or is_negated_text(part):
            continue
        first = next((t for t in tokens(part) if t not in STOPWORDS), "")
        for src in sources:
            if stems <= content_stems(src) and first and re.search(
                    rf"(?i)\b{_NEGATOR}[ \t:]*(?:[a-z][\w-]*[ \t]+)?{re.escape(first)}\b", src):
                out.append(part.strip())
                break
    return out


def is_negated_text(text: str) -> bool:
    """Any negation in the text: "not", "no", "never", a negative contraction."""
    return any(t in ("not", "no", "never", "nobody", "none", "nothing", "cannot") or
               t.endswith("n't") for t in tokens(text))


def stale_claims(title: str, body: str, answer: str, facts: Sequence[str],
                 feedback: str = "", embed: Embed | None = None) -> list[str]:
    """The overturned values of the answer that the title or body states outside a
    negated clause; with ``embed``, only where the sentence restates what the answer
    said of that value (cosine >= ``RESTATES`` with an answer sentence naming it): the
    value named with another predicate ("passwd -l alone still lets them in") is the
    correction speaking of it, not the stale claim."""
    # (a range's second end counts: "01:00-04:00")
    out: set[str] = {f"{v} (taken back by the writer)" for v in taken_back(feedback)
                      if re.search(rf"(?<![\w.:/@])(?<![A-Za-z_]-){re.escape(v)}(?![\w@/+])",
                                   f"{title}\n{body}")}
    out |= {f"{part} (the writer's negation is lost)" for part in negation_lost(body, feedback)}
    stale = overturned_values(answer, facts, feedback)
    if not stale:
        return sorted(out)
    # A question ("Where is /var/log/syslog?") asks; it does not state the value.
    parts = ([] if title.rstrip().endswith("?") else [title]) + split_sentences(body)
    claims = split_sentences(answer)
    for part in parts:
        found = [(it, _value_keys(it) & stale) for it in items(part) if it.kind != "role"]
        # A sentence that negates a value and then says what that value really is
        # ("That's not Night Light, Night Light changes colour") is a contrast.
        negated_here = {k for it, hit in found if hit and is_negated(part, it) for k in hit}
        for it, hit in found:
            if hit and not is_negated(part, it) and not _moved_from(part, it):
                out |= {k for k in hit - negated_here
                        if embed is None or _restates(part, k, claims, embed)}
    return sorted(out)


#: A value the writer repairs at once: "45, sorry, 25", "B07, no wait, B17", "UTC+1 - I
#: mean UTC".
_TAKEN_BACK = re.compile(r"(?<![\w.:/@-])(?P<value>[A-Za-z0-9][\w.:/%+@-]*[\w%+]|\d)[ \t]*"
                         r"[-–—,(;][ \t]*(?:(?:no|nope)\b[ \t]*[,!]?[ \t]*)?(?:sorry|no wait|"
                         # ("revoke CONNECT, wait 30 days": "wait" as an instruction)
                         r"wait(?=[ \t]*[,:!–—-])|i mean|i meant|correction|make that|"
                         r"or rather|scratch that|my bad)\b"
                         # (a value follows: "not on the 18th, sorry." apologises)
                         r"(?=[ \t]*[,:]?[ \t]*(?:it'?s[ \t]+|it[ \t]+is[ \t]+)?[\w\"'`])",
                         re.IGNORECASE)


#: A repair sent after the value, on its own line or as its own sentence (a chat line's
#: time and name before it): "[09:42] ana: sorry, '3s'", "Sorry, 07:45."
_REPAIR_AFTER = re.compile(rf"(?:^|(?<=[.!?\n]))[ \t]*(?:\[[^\]\n]*\][ \t]*)?(?:[\w.-]+:[ \t]+)?"
                           rf"{REPAIR_CUE}[ \t]+{REPAIR_VALUE}"
                           r"[ \t]*(?:[.!,]|$|[ \t](?:last|this|since|because|so)\b)",
                           re.IGNORECASE | re.MULTILINE)


def _repaired_after(feedback: str) -> list[str]:
    """The values a repair sent after them takes back (see
    :func:`optimizer.claims.repaired_value`: "'5s'" before "sorry, '3s'")."""
    out = []
    for m in _REPAIR_AFTER.finditer(feedback):
        old = repaired_value(feedback[:m.start()], m.group("new"))
        if old is not None:
            out.append(old.group(0).strip("'\""))
    return out


#: A number with its unit taken back by the same words with another number: "every 15
#: minutes — sorry, every 30 minutes".
_TAKEN_BACK_UNIT = re.compile(r"(?<![\w.:/@-])(?P<value>\d[\w.:/%+-]*)[ \t]+[a-z]+[ \t]*"
                              r"[—–-]+[ \t]*(?:no[ \t,]+)?(?:sorry|wait|i[ \t]+mean)\b[,:]?[ \t]+"
                              r"(?:[a-z]+[ \t]+)?\d", re.IGNORECASE)


def taken_back(feedback: str) -> list[str]:
    """The values (with a digit, or a code in capitals) the feedback names only to take
    them back at once, or takes back in a repair sent after them ("... '5s'" then "sorry,
    '3s'"), or names again to take it back ("I said 60 - ... it's 90 days now"); a value
    it also names elsewhere is not one of them."""
    # (a statement taken back and given again with a new value takes back that value
    # only, as the reader reads it: "four weekly backups on vault1. Scratch that, that was
    # the old rule. It's six now" keeps vault1)
    read, replaced = statement_taken_back(feedback)
    scrapped = [i.text for begin, end in scrapped_spans(read)
                for i in items(read[begin:end]) if i.kind in STRONG_KINDS] + replaced
    # (a value named again to take it back is named twice: "kept for 60 days. Sorry, I
    # said 60 - ..., the retention is 90 days now.")
    out = [b.old for b in named_take_backs(feedback)]
    out += [v for v in [*_repaired_after(feedback), *scrapped,
                        *(m.group("value") for m in _TAKEN_BACK_UNIT.finditer(feedback))]
            if len(re.findall(rf"(?<![\w.:/@-]){re.escape(v)}(?![\w@/+])", feedback)) == 1]
    for m in _TAKEN_BACK.finditer(feedback):
        value = m.group("value")
        if not (any(c.isdigit() for c in value) or sum(c.isupper() for c in value) >= 2):
            continue
        named = re.findall(rf"(?<![\w.:/@-]){re.escape(value)}(?![\w@/+])", feedback)
        if len(named) == 1:
            out.append(value)
    return out


def _moved_from(sentence: str, item: Item) -> bool:
    """"moved the dump from /etc/cron.d/x to x.timer": the value it moved from is the old
    one, named as such."""
    return bool(re.search(r"\bfrom\s+$", sentence[:item.start], re.IGNORECASE)
                and re.match(r"\s+(?:to|into|onto)\s+\S", sentence[item.end:], re.IGNORECASE))


def _restates(sentence: str, key: str, answer_sentences: Sequence[str], embed: Embed) -> bool:
    said = [a for a in answer_sentences if any(key in _value_keys(it) for it in items(a))]
    if not said:
        return True
    vecs = embed([sentence, *said])
    return float(np.max(vecs[1:] @ vecs[0])) >= RESTATES


@dataclass
class NuggetFidelity:
    """Every fidelity verdict on one nugget."""

    facts: list[FactVerdict] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    conversational: list[str] = field(default_factory=list)

    @property
    def fact_recall(self) -> float:
        """Share of the gold facts the nugget states."""
        return sum(f.covered for f in self.facts) / len(self.facts) if self.facts else 1.0


def judge_nugget(title: str, body: str, *, feedback: str, query: str, answer: str,
                 facts: Sequence[str], embed: Embed | None = None) -> NuggetFidelity:
    """Fact coverage, unsupported text, stale claims and conversational text of one
    nugget."""
    text = f"{title}\n{body}"
    return NuggetFidelity(
        facts=[fact_coverage(f, text, embed, source=f"{feedback}\n{query}") for f in facts],
        unsupported=unsupported_text(title, body, feedback, query),
        stale=stale_claims(title, body, answer, facts, feedback, embed),
        conversational=conversational_text(title, body))


def answer_verdict(answer_text: str, facts: Sequence[str], original_answer: str,
                   embed: Embed | None = None) -> str:
    """addresses | partial | misses | contradicts (see the module docstring)."""
    text = answer_text
    covered = [fact_coverage(f, text, embed).covered for f in facts] if facts else []
    if covered and all(covered):
        return "addresses"
    if any(covered):
        return "partial"
    overturned = overturned_values(original_answer, facts)
    if overturned and stale_claims("", text, original_answer, facts):
        return "contradicts"
    return "misses"
