"""Properties of correction text: sentences, concrete items, negation, questions, address.

A correction is judged by what its sentences *are*, not by the phrases they use: a
sentence that names a concrete item (a number, version, path, key combination, quoted
string, address, name or role) or states a rule (a modal, negation or policy verb over a
specific object), and is not a question, an opinion or text addressed to the system, is
a claim about the tenant's world. The local roles, the factual guard and the fidelity
metrics of the evaluation all read text through this module, so "concrete item" means
one thing everywhere (docs/architecture.md, "Nugget quality").
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from query.text import STOPWORDS, has_markup, outside_code, plain_text, stem

__all__ = ["has_markup", "plain_text"]  # re-exported: feedback is read as plain text

# ---------------------------------------------------------------------------------------
# Words by grammatical class (closed classes, not phrasings)
# ---------------------------------------------------------------------------------------

#: Nouns naming roles and groups of people in an organisation.
ROLE_WORDS = frozenset("""owner owners admin admins administrator administrators analyst
analysts manager managers lead leads member members editor editors viewer viewers guest
guests agent agents supervisor supervisors moderator moderators contributor contributors
approver approvers auditor auditors operator operators developer developers engineer
engineers officer officers staff employee employees contractor contractors intern interns
technician technicians accountant accountants maintainer maintainers reviewer reviewers
superuser superusers""".split())

#: Modal verbs and words that make a statement a rule.
MODALS = frozenset("""can can't cannot could may must mustn't should shouldn't shall only
need needs required requires require mandatory allowed permitted able unable have has
always never""".split())

#: Negation and the words that overturn a state ("no longer", "disabled", "removed").
NEGATIONS = frozenset("""not no never nothing none nobody neither nor cannot can't isn't
aren't wasn't weren't doesn't don't didn't won't wouldn't shouldn't mustn't hasn't haven't
hadn't without longer anymore disabled removed blocked forbidden prohibited denied
unavailable gone deprecated discontinued retired dropped replaced instead rather
unsupported obsolete outdated end-of-life eol unmaintained off""".split())

#: Verbs and participles that state a policy or a configured state.
POLICY = frozenset("""disabled enabled blocked forbidden prohibited allowed permitted
required enforced locked managed restricted reserved mandatory set configured defaults
default located lives live runs run hosted stored kept installed uninstalled mounted
assigned limited capped expires expire renamed moved replaced removed deprecated handled
owned approved denied rejected refused accepted applies apply use uses used must only always
never rejects refuses denies blocks forbids requires allows permits enforces restricts
prohibits no-go off-limits banned""".split())

#: Verbs of speaking or formatting: an imperative with one of these is addressed to the
#: assistant about its answers ("stop saying ...", "answer in German").
SPEECH_VERBS = frozenset("""say saying said answer answering reply replying respond
responding write writing explain explaining tell telling mention mentioning repeat
repeating format formatting phrase phrasing translate suggest suggesting recommend
recommending""".split())

#: Evaluative words: a sentence built on them is an opinion, not a checkable claim.
EVALUATIVE = frozenset("""exhausting tiring infuriating maddening unbearable shocking irritating
tedious good great bad terrible awful horrible slow slower fast faster
annoying confusing confused useless useful helpful unhelpful nice perfect awesome excellent
fine ok okay poor better worse best worst weird strange stupid silly ridiculous painful
painfully frustrating frustrated happy unhappy love hate like dislike wow cool amazing clear
unclear vague wordy verbose long short boring technical simple complicated hard easy
difficult broken buggy mess messy garbage wrong incorrect inaccurate false nonsense
misleading bogus shallow superficial incomplete vague laggy sluggish unusable unstable
flaky unreliable crappy lousy clunky pointless needless unnecessary futile worthless
rubbish pathetic hopeless dreadful abysmal atrocious junk lame mediocre dumb disaster
miserable lifesaver legend hero genius untidy sloppy ugly""".split())

#: "Clear" as a verb: "Clear History… before handing it back", "then clear the cache".
_CLEAR_VERB = re.compile(r"(?:^|[.;:]\s+|\b(?:then|and|to|always|first|please)\s+)clear\s+"
                         r"(?:the|all|your|its|it|them|out|[A-Z])", re.IGNORECASE)

#: Evaluative words that complain.
NEGATIVE = frozenset("""bad terrible awful horrible slow slower annoying confusing useless
unhelpful poor worse worst weird strange stupid silly ridiculous painful painfully
frustrating broken buggy mess messy garbage laggy sluggish unusable unstable flaky
unreliable crappy lousy clunky wrong nonsense pointless needless futile worthless rubbish
pathetic hopeless dreadful abysmal atrocious junk lame mediocre dumb disaster exhausting
tiring infuriating maddening unbearable shocking irritating tedious miserable nightmare
dinosaur relic untidy sloppy hassle headache faff eyesore""".split())
#: A complaint said with a noun: "both are a pain", "a real pain in the neck".
_PAIN = re.compile(r"\b(?:a|such\s+a|real|royal)\s+pain\b", re.IGNORECASE)

#: Evaluative words that praise.
POSITIVE = frozenset("""good great nice perfect awesome excellent helpful useful clear best
better love amazing cool fantastic brilliant spot fine ok okay lifesaver legend hero
genius""".split())

#: Intensifiers and hedges typical of opinion and chatter.
INTENSIFIERS = frozenset("""really totally completely absolutely extremely utterly""".split())

#: Words of success or thanks: with nothing new in the sentence, it is praise.
SUCCESS = frozenset("""thanks thank thx ty cheers kudos worked works working fixed solved
helped saved""".split())

#: Discourse markers a sentence may open with; they carry no fact.
# Opening words that carry no fact. Interjections ("no", "yes", "ok", "hi") go only when
# punctuation or a pronoun follows them: "No Samba on Linux servers", "No need for
# Tweaks" and "No one may enter" begin with a determiner, not an interjection.
# Connectives ("but", "actually", "also") go whatever follows.
# ("Hi there, X": "there" is the greeting's. "Note that X" leaves "that": "note that index
# can't serve <" points at the index; a "that" before a clause goes with the residue.)
_INTERJECTION = (r"(?:no|nope|nah|yes|yeah|yep|ok|okay|(?:hi|hello|hey)(?:\s+there\b(?!'))?|"
                 r"hmm|um|uh|oh|ah|sorry|"
                 r"lol|lmao|haha|hah|ha|ugh|meh|argh|welp|correction|update|"
                 # ("Note the change in X" is an order: "note" only before a mark or a
                 # clause, "Note it resets at logout")
                 # ("Note that it's run with X": a "that" before a clause goes with "note")
                 r"note(?=\s*[:,;.!-]|\s+(?:that(?!\s+(?:it|it's|its|they|they're|we|we're|"
                 r"you|you're|there|there's|he|she|i)\b)|it|this|they|there|these|those|we|"
                 r"you)\b)|"
                 r"heads[- ]up|"
                 r"wrong|incorrect|nein|nee|não|nao|nie|nej|oui|sí|fam|mate|bro|dude|sir|"
                 r"madam|ma'am)")
# Connectives, and imperatives that only ask the reader to mind what follows ("Just
# remember that X", "Keep in mind that X": X is the claim).
_CONNECTIVE = (r"(?:(?:just\s+)?so\s+you\s+know(?:\s+for\s+(?:next\s+time|the\s+future|"
               r"future\s+reference|later))?|for\s+(?:next\s+time|future\s+reference)|"
               r"well|actually|so|also|anyway|please|pls|for the record|"
               r"tbh|imo|imho|ngl|for what it's worth|fwiw|til|today i learned|"
               r"just so (?:people|everyone|everybody|others|you all|y'all|folks) knows?|"
               r"to be clear|in fact|however|but|and|though|then|fyi|btw|psa|nb|"
               r"(?:just\s+)?(?:remember|note|notice|keep in mind|bear in mind|be aware|"
               r"don't forget|do not forget|mind you)\s+that)")
_DISCOURSE = re.compile(
    # ("nah dont use X", "yep works": these never open a noun phrase, whatever follows)
    r"^(?:(?:nah|nope|yep|ugh|meh|lol|haha)\s+(?=[a-z])(?!(?:hi|hello|hey|hiya)\b)|"
    # (a hyphen before a letter is no pause: "no -d, no -s" are options, "No-one" a word)
    r"" + _INTERJECTION + r"\b(?:\s*(?:[,:;.!\u2014]|-(?!\w))+\s*|\s+(?=(?:that|this|it|"
    r"it's|you|your|the answer|the|i|we|not|so|but|and|then|actually|well|no|nope|nah|yes|yeah|ok|"
    r"okay|lol|haha|ha|there|sorry|its|tbh|imo|ngl|fam|mate|bro|dude|theyre|thats|theres|"
    r"they|they're|that's|there's|ur|u)(?![\w'])\b)|\s*$)|" + _CONNECTIVE
    + r"\b(?:\s*[,:;.!\u2014-]+\s*|\s+|\s*$))+", re.IGNORECASE)

_INTERROGATIVE = re.compile(r"^(?:what|why|how|where|when|which|who|whom|whose)\b",
                            re.IGNORECASE)
# "I wonder whether anyone has tried X", "We were wondering if ...": a question put as a
# statement.
_WONDER = re.compile(r"^(?:i|we)\s+(?:\w+\s+)?(?:wonder|am wondering|are wondering|was wondering|"
                     r"were wondering|would like to know|'d like to know)\s+(?:whether|if|why|"
                     r"how|what|when|who|where|which)\b|"
                     # "Just curious how much /boot space that needs"
                     r"^(?:just\s+)?(?:(?:i'm|i am|we're|we are)\s+)?(?:just\s+)?curious\s+"
                     r"(?:(?:to know|about)\s+)?(?:whether|if|why|how|what|when|who|where|"
                     r"which)\b", re.IGNORECASE)
# "Does trash empty itself", "Is there a way to ...": an auxiliary verb opening a short
# sentence, unless what follows shows a statement with its subject left out.
_YESNO = re.compile(r"^(?i:do|does|did|is|are|was|were|will|would|should|could|can|may|has|"
                    r"have)\s+"
                    r"(?!(?i:not|only|also|never|always|just|still|be|been|being|already)\b)"
                    r"[\w'-]+", )
#: "Do the parsing in the ETL", "Do your testing on staging": "do" with a task and where it
#: is done is an order (a question would have a verb after the noun: "Do the backups run").
# ("Do the upgrade only inside a change window." too: an order without "?")
_DO_IMPERATIVE = re.compile(r"^do\s+(?:(?:the|your|all|any|all\s+the)\s+[\w-]+|"
                            r"it|that|this|them)\s+(?:in|on|at|from|with|before|after|via|"
                            r"through|by|inside|outside|only|first|yourself|instead)\b",
                            re.IGNORECASE)
_AUX_QUESTION = re.compile(
    r"^(?i:do|does|did|is|are|was|were|can|could|should|would|will|shall|may|might|has|have|"
    r"am|isn't|aren't|doesn't|don't|can't|won't)\s+(?:(?i:i|we|you|it|they|he|she|this|that|"
    r"these|those|there|the|a|an|my|our|your|their|any|anyone|someone|anybody|somebody)\b|"
    r"(?!(?i:not|never)\b)[A-Z0-9][\w.-]*\b)")  # "Do NOT reboot" commands

# ---------------------------------------------------------------------------------------
# Markup and untrusted text
# ---------------------------------------------------------------------------------------

# ---------------------------------------------------------------------------------------
# Sentences
# ---------------------------------------------------------------------------------------

_ABBREV = re.compile(r"\b(?:e\.g|i\.e|etc|vs|approx|incl|esp|cf|nr|fig|mr|mrs|ms|dr|st)\.$",
                     re.IGNORECASE)
# (not a schedule's first field: "* * * * * pg_isready ..." is a crontab line)
_BULLET = re.compile(r"^\s*(?:[-•]|\*(?![ \t]+[*\d/]+(?:[ \t]+[*\d/,-]+){3}[ \t])|\d{1,2}[.)])\s+")


#: Emoji, and chat short codes (":sweat_smile:", ":+1:").
EMOJI = re.compile("(?:[\U0001F000-\U0001FAFF\u2600-\u26FF\u2700-\u27BF\uFE0F\u200D]|"
                   "(?<!\\S):[a-z][a-z0-9_+-]{1,30}:(?!\\S))+")
#: Emoji that say the words before them mean the opposite: eye roll, upside-down face,
#: unamused face, smirk.
_SARCASM = re.compile("[\U0001F644\U0001F643\U0001F612\U0001F60F]")
#: Emoji that laugh or wink.
_JOKE = re.compile("[\U0001F600-\U0001F606\U0001F609\U0001F60A\U0001F61C\U0001F61D"
                   "\U0001F923\U0001F642]")
#: Words that make a sentence a rule whatever emoji closes it.
_JOKE_KEEPS = re.compile(r"\b(?:must|mustn't|never|always|only|forbidden|banned|required|"
                         r"mandatory|not|no|nobody|need|needs|use|uses)\b|n't\b", re.IGNORECASE)


#: Arrow emoji ("➡️", "⬅️", "↪️"): they point, they do not end a sentence.
_ARROW_EMOJI = re.compile("[\u27A1\u2B05-\u2B07\u2194-\u2199\u21A9\u21AA\u2934\u2935\u279C-\u27BF]")


def _emoji_breaks(line: str) -> str:
    """The line with its emoji read as punctuation: an emoji between words ends a sentence
    ("no 😬 store purchase txns run ..." is "no." and a sentence), and the words before a
    sarcasm emoji are dropped ("it's free 🙄")."""
    out = []
    last = 0
    for m in EMOJI.finditer(line):
        before = line[last:m.start()]
        if _ARROW_EMOJI.search(m.group(0)) and before.strip() and line[m.end():].strip():
            # "Lock Screen Notifications ➡️ OFF": an arrow between words is an arrow.
            out.append(before.rstrip() + " → ")
            last = m.end()
            while last < len(line) and line[last] == " ":
                last += 1
            continue
        cut = max(before.rfind(". "), before.rfind("! "), before.rfind("? "))
        said = before[cut + 1:] if cut >= 0 else before
        if _SARCASM.search(m.group(0)) or (_JOKE.search(m.group(0)) and said.strip() and not (
                _JOKE_KEEPS.search(said) or any(i.kind in STRONG_KINDS - {"name"}
                                                 for i in items(said)))):
            # Back to the start of the sentence the emoji closes. ("The orchestra plays in
            # Aldermoor, not on the Space Station 🙂": a joke names no value and no rule;
            # "Backups run at 02:00 🙂" stays.)
            before = before[:cut + 1] if cut >= 0 else ""
        out.append(before.rstrip())
        rest = line[m.end():]
        if rest.strip() and re.match(r"\s*[^\W_]", rest):
            tail = "".join(out).rstrip()
            out.append("" if not tail or tail[-1] in ".!?,;:" else ".")
            out.append(" ")
        last = m.end()
    out.append(line[last:])
    return "".join(out)


def split_sentences(text: str) -> list[str]:
    """Sentences of a message: split at . ! ? followed by space and a capital, a digit or
    a quote, and at line breaks and bullets; not inside versions, paths, hostnames or
    abbreviations ("e.g."). Semicolons stay inside their sentence."""
    out: list[str] = []
    for line in re.split(r"\n+", text):
        line = _emoji_breaks(_BULLET.sub("", line)).strip()
        if not line:
            continue
        start = 0
        for m in re.finditer(r"[.!?…]+[\"'”’)]*\s+(?=[^\W_]|[\"'“‘(`~/<\[@#\\])", line):
            if m.group().startswith("?") and m.start() and (
                    line[m.start() - 1].isspace() or line[m.start() - 1] in "@#&|<>=-("):
                continue  # "not the ? operator", "jsonpath @? / @@", "key existence (?)"
            if m.group().rstrip() == "." and m.start() and line[m.start() - 1].isspace() and \
                    re.match(r"[a-z]", line[m.end():]):
                continue  # "a name that starts with a . is hidden": the character itself
            if re.match(r"[?!.]+[\"'”’)]", m.group()) and re.match(r"[a-z]", line[m.end():]):
                # "an 'Allow support session?' popup": a quoted label's own "?"; "(prefix
                # agy.) from IT": the dot of what the brackets hold
                continue
            chunk = line[start:m.end()].strip()
            if _ABBREV.search(chunk.rstrip(" \"'”’)")):
                continue
            # "(owner: R. Lindqvist)": a person's initial, not a sentence's end.
            # (any script's capital: "(E. Yıldız)", "(Ø. Ødegård)")
            after = re.match(r"[^\W\d_][^\W\d_'’-]*[^\W\d_]", line[m.end():])
            if after and not (after.group()[0].isupper() and after.group()[1:].islower()):
                after = None
            initial = re.search(r"(?:^|[\s(])([^\W\d_])\.$", chunk)
            if initial and initial.group(1).isupper() and after and m.group().strip() == "." \
                    and after.group().lower() not in STOPWORDS:
                continue
            # "call the hotline, ext. 2240", "room no. 5": an abbreviation before a number.
            if re.search(r"\b(?:ext|tel|no|nos|rm|bldg|dept|vol|ch|sec|pp|p)\.$", chunk,
                         re.IGNORECASE) and re.match(r"\d", line[m.end():]):
                continue
            # "use the ext. mouse in the drawer": a short word cut off before a lower-case
            # word goes on
            if re.search(r"\b(?:ext|approx|min|max|incl|excl|std|temp|dept|govt|mgmt|info|"
                         r"misc|orig|prev|opt|req|ref)\.$", chunk) and re.match(
                             r"[a-z]", line[m.end():]):
                continue
            # "it died at 3 a.m. after six hours": a time of day before a lower-case word
            if re.search(r"\b[ap]\.\s?m\.$", chunk, re.IGNORECASE) and re.match(
                    r"[a-z]", line[m.end():]):
                continue
            # "Send to… doesn't do anything": an ellipsis before a lower-case word is a
            # label's or a pause's, not a sentence's end.
            if re.search(r"(?:\.\.\.|…)[\"'”’)]*\s*$", chunk) and re.match(r"[a-z]",
                                                                         line[m.end():]):
                continue
            # "CREATE ROLE ... LOGIN": an ellipsis inside code, not a sentence's end.
            if re.search(r"\b[A-Z]{2,}\s*(?:\.\.\.|…)$", chunk) and re.match(
                    r"[A-Z]{2,}\b", line[m.end():]):
                continue
            out.append(chunk)
            start = m.end()
        tail = line[start:].strip()
        if tail:
            out.append(tail)
    return [s for s in out if any(ch.isalnum() for ch in s)]


def strip_discourse(sentence: str) -> str:
    """The sentence without opening discourse markers ("No, ", "Actually ", "Heads up: ").

    "No" stays when it begins a noun phrase ("No need for Tweaks", "No one can ...")."""
    s = sentence.strip()
    m = _DISCOURSE.match(s)
    if not m:
        return s
    rest = s[m.end():].strip()
    return rest if rest and any(ch.isalnum() for ch in rest) else ""


def clause_split(sentence: str) -> list[str]:
    """Clauses: split at ; : , but / however / whereas / while and dashes."""
    parts = re.split(r"\s*(?:;|:\s|,?\s+but\s+|,?\s+however,?\s+|,?\s+whereas\s+|\s+[\u2014\u2013]"
                     r"\s+|\s+-\s+|,\s+and\s+|,\s+(?=(?:it|this|that|they|there|you|we)\b))\s*",
                     sentence)
    return [p for p in parts if p and p.strip()]


#: The other half of a question, asked on: "Or was it only the SCADA historian."
_OR_WAS_IT = re.compile(r"^or\s+(?:was|is|were|are|did|does|do|has|have|will|would|could|"
                        r"should)\s+(?:it|that|this|they|he|she|we|i)\b", re.IGNORECASE)


def is_question(sentence: str) -> bool:
    """A question: ends with "?" or opens like one (interrogative word, or an auxiliary
    followed by its subject: "Does this also work ...")."""
    s = strip_discourse(sentence).strip()
    if s.rstrip(" \"'”’)").endswith("?") and not (
            re.search(r"\?\s*[?!]+[\"'”’)]*\s*$", s) and not (
                _INTERROGATIVE.match(s) or _YESNO.match(s) or _AUX_QUESTION.match(s)
                or re.search(r"\b(?:why|how|what|where|when|who|which)\W*[?!]+\W*$", s,
                             re.IGNORECASE))):
        return True  # ("there's no openvpn anymore??": a statement, astonished)
    if _WONDER.match(s) or _OR_WAS_IT.match(s):
        return True
    if _DO_IMPERATIVE.match(s) and not s.rstrip().endswith("?"):
        return False  # "Do the parsing in the ETL on etl01.": an order, not a question
    if _YESNO.match(s) and len(s.split()) <= 14 and not (
            s.endswith(".") and re.search(r"\b(?:until|till|since|ago|before)\b", s)):
        return True  # ("Was a single rsync copy until last year." states the past)
    return bool(_INTERROGATIVE.match(s) and not re.match(
        r"^(?:what|how|where|when|which|who)\b[^,]*\b(?:is|are|was)\b[^,]*,", s, re.IGNORECASE)
        and len(s.split()) <= 14 and not re.search(r"[.!]$", s)) or bool(
        _AUX_QUESTION.match(s) and not (re.search(r"[.!]$", s) and re.match(r"^\w+\s+\d", s)))
    # ("Was 15 min until the audit, now it's 5 minutes." states the old value and the new)


# ---------------------------------------------------------------------------------------
# Concrete items
# ---------------------------------------------------------------------------------------

_URL = re.compile(r"\b(?:https?|smb|ftp|sftp|ssh|file|nfs|git)://[^\s<>\"'“”`]+")
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_PATH = re.compile(r"(?<![\w/.])(?:~|\.{1,2})?/[\w.@%+=:-]+(?:/[\w.@%+=:-]*)*|"
                   r"\b[A-Za-z]:\\[\w\\. -]+|\\\\[\w.-]+\\[\w\\.$-]+")
_KEY = (r"(?:Ctrl|Control|Alt|AltGr|Shift|Super|Meta|Cmd|Command|Fn|Win|Windows|Option|Hyper)")
_KEYCOMBO = re.compile(r"\b" + _KEY + r"(?:\s*\+\s*(?:Page\s+(?:Up|Down)|Print\s+Screen|"
                       r"[\w./;,'`\[\]=-]+)(?:/\w+)?)+", re.IGNORECASE)
_WORDCH = r"(?:[\w&'-]|\.(?=\w))"
_SEGMENT = (r"[A-Z0-9]" + _WORDCH + r"*(?:\s+(?:&\s+|and\s+|of\s+|for\s+)?[A-Z0-9]" + _WORDCH
            + r"*){0,4}")
_MENU = re.compile(_SEGMENT + r"(?:\s*(?:>|→|->|»|›)\s*" + _SEGMENT + r")+")
_QUOTED = re.compile(r"\"([^\"\n]{2,80})\"|“([^”\n]{2,80})”|‘([^’\n]{2,80})’|`([^`\n]{1,120})`"
                     r"|(?<![\w])'([^'\n]{2,60})'(?![\w])")
_DOTTED = re.compile(r"\b[\w-]*[A-Za-z][\w-]*(?:\.[\w-]+)+\b")
_UNITS_19 = ("zero one two three four five six seven eight nine ten eleven twelve thirteen "
             "fourteen fifteen sixteen seventeen eighteen nineteen").split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_NUMBER_WORD = r"(?:" + "|".join(_UNITS_19 + _TENS + ["hundred", "thousand"]) + r")"
#: A number in words: "ninety", "a hundred and twenty", "twenty-four".
WORD_NUMBER = (r"(?:an?\s+)?" + _NUMBER_WORD + r"(?:(?:\s+and\s+|[\s-]+)" + _NUMBER_WORD
                + r")*")


def value_unit(value: str) -> str:
    """What a value counts in, its digits and quotes left out: "5s" and "'3s'" in s,
    "30 %" in % (a repair replaces only a value in the same unit)."""
    return re.sub(r"[\d.,'\" ]", "", value).lower()


#: The words that open a repair of a value just said, sent after it ("sorry,", "typo:",
#: "I mean", "no wait,", "no wait, we moved it to"): the reader's repair
#: (``optimizer.local.residue``) and the judge's taken-back check share them.
REPAIR_CUE = (r"(?:(?:sorry|oops|typo|correction|i[ \t]+mean|i[ \t]+meant)[,:]?|"
              r"(?:no|nope)[ \t,]+(?:wait|sorry|actually)[,:]?(?:[ \t]+(?:we|they|someone|ops)"
              r"[ \t]+(?:moved|changed|switched|set|put)[ \t]+(?:it|that|this|them)[ \t]+"
              r"(?:to|at)|"
              # "no wait, we bumped it after the audit, it's 14 now": why, then the value
              r"(?:[ \t]+(?:we|they|someone|ops)[ \t]+[^,.;:\n]{1,50},)?(?:[ \t]+it'?s|"
              r"[ \t]+it[ \t]+is))?)")
#: The value a repair gives: a quoted string, a number with its unit, or a name in parts
#: ("Europe/London").
REPAIR_VALUE = (r"(?P<new>'[^'\n]{1,30}'|\"[^\"\n]{1,30}\"|\d(?:[\w.:/%+-]*[\w%])?|"
                r"[A-Z][\w+-]*(?:/[\w+-]+)+)")
_NAME_IN_PARTS = re.compile(r"(?<![\w/.-])[A-Z][\w+-]*(?:/[\w+-]+)+")


def repaired_value(head: str, new: str) -> re.Match[str] | None:
    """The value in ``head`` that a repair giving ``new`` takes back, or None: the last
    one of its kind (a name in parts with the same first part, "Europe/Dublin" before
    "Europe/London"; a string in the same quotes; a number in the same unit, "5s" before
    "3s"), other than ``new`` itself."""
    if "/" in new and new[0].isalpha():
        olds = [o for o in _NAME_IN_PARTS.finditer(head)
                if o.group(0).split("/")[0] == new.split("/")[0] and o.group(0) != new]
    else:
        quote = new[0] if new[0] in "'\"" else ""
        shape = (rf"{quote}[^{quote}\n]{{1,30}}{quote}" if quote
                 else r"(?<![\w.])\d(?:[\w.:/%+-]*[\w%])?")
        unit = value_unit(new)
        olds = [o for o in re.finditer(shape, head)
                if value_unit(o.group(0)) == unit and o.group(0) != new]
    return olds[-1] if olds else None


#: A statement taken back whole: "use ~/Templates/Mine, that's left alone... actually no,
#: scrap that, Mine got wiped too.", "Use bay 4. Scratch that." (what follows the cue in
#: its sentence says why).
_SCRAP_THAT = re.compile(r"[ \t]*(?:\.{2,}|\u2026|[,;:—–-])?[ \t]*(?:(?:actually|oh)[ \t,]+)?"
                         r"(?:(?:no|nope|wait)[ \t,]+)*(?:scrap|scratch|forget|ignore|disregard|"
                         r"strike)[ \t]+(?:that|this|what\s+i\s+(?:just\s+)?(?:said|wrote))\b"
                         # ("FAI - we don't use it, ignore that part": the answer's part)
                         r"(?![ \t]+(?:part|bit|step|section|line|paragraph|one|answer|advice|"
                         r"suggestion|page|tip|command)s?\b)"
                         r"[^.!?\n]*[.!?]*", re.IGNORECASE)


def scrapped_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each statement the writer takes back whole, with its cue: from the
    start of the sentence before the cue to the end of the cue's sentence."""
    out = []
    for m in _SCRAP_THAT.finditer(text):
        head = text[:m.start()].rstrip()
        if head.endswith((".", "!", "?")) and not head.endswith(".."):
            head = head[:-1]  # ("X. Scratch that.": the sentence before goes)
        # ("ignore that, 25 got shut off last spring, it's 587 with STARTTLS now.": what
        # holds instead stays)
        instead = list(_SAID_INSTEAD.finditer(text, m.start(), m.end()))
        end = instead[-1].start() + 1 if instead else m.end()
        # (the sentence starts after the last stop that ends one: not the point of a
        # decimal, "scale_factor of 0.05. Scratch that")
        stops = [b.end() for b in re.finditer(r"[.!?](?=\s)|\n", head)]
        out.append((stops[-1] if stops else 0, end))
    return out


#: What holds instead, said after a statement taken back: ", it's 587 with STARTTLS now".
_SAID_INSTEAD = re.compile(r",[ \t]*(?=(?:it's|it\s+is|it\s+now|now\s+it's|we\s+(?:now\s+)?use|"
                           r"they're|they\s+are)\b[^,.!?\n]*\d)|"
                           # ("scrap that, it's not a week - it has to be moved the same day")
                           r"[ \t][\u2014\u2013-][ \t]+(?=(?:it|they|we|you|this|that)[ \t]+"
                           r"(?:has|have|must|needs?|goes|go|stays?|gets?)\b)", re.IGNORECASE)


#: A word that makes a clause a rule: a firm modal, "never", "only", a ban, a requirement.
#: The reader's readers of tastes, reactions and asides keep a sentence that holds one.
RULE_WORD = re.compile(r"\b(?:must|mustn't|never|only|(?:not\s+)?allowed|banned|required|"
                       r"mandatory|forbidden|policy|rule)\b", re.IGNORECASE)
#: ``RULE_WORD`` or advice and its negation ("always", "should", "don't", "no longer"): what
#: keeps a clause of a story.
RULE_OR_ADVICE = re.compile(rf"{RULE_WORD.pattern}|\b(?:always|should|shouldn't|don't|do\s+not|"
                            rf"no\s+longer)\b", re.IGNORECASE)
#: ``RULE_WORD``, "always" or a bare negation ("not", "no", "don't"), for asides beside a
#: list item.
RULE_OR_NEGATION = re.compile(rf"{RULE_WORD.pattern}|\b(?:always|not|no|don't)\b",
                              re.IGNORECASE)


#: Words about the conversation itself: the answer, the assistant, what "you" said. The
#: reader drops clauses that hold them; the judge flags published text that does.
CONVERSATION_REFERENCE = re.compile(
    r"\b(?:(?:your|the|this|that)\s+(?:answer|reply|response|suggestion)|you\s+(?:said|"
    r"wrote|suggested|mentioned|claimed)|you(?:'ve|\s+have)\s+(?:told|said|suggested)|the\s+"
    r"(?:bot|assistant|chatbot|ai)|(?:did|tried|followed)\s+exactly\s+(?:this|that))\b",
    re.IGNORECASE)


#: A whole statement taken back: "Actually no, scrap that.", "Forget that -".
#: (the reader's cue, narrower than :data:`_SCRAP_THAT`: the statement is repaired, not cut)
_STATEMENT_SCRAPPED = re.compile(r"(?:(?:actually|hang\s+on|wait|sorry|oops|hmm+)[,.!]?[ \t]+)?"
                                 r"(?:(?:no[,.!]?[ \t]+)?(?:scrap|forget|ignore|scratch|strike)"
                                 r"[ \t]+that\b[ \t]*[.,;:!\u2014\u2013-]*[ \t]*|"
                                 # ("5min. Hmm, no - that was the old value, ...": the "no"
                                 # before why the statement was wrong)
                                 r"no[ \t]*[,.!\u2014\u2013-]+[ \t]*(?=(?:that|it|this)(?:'s|"
                                 r"[ \t]+is|[ \t]+was)[ \t]+(?:the[ \t]+)?(?:old|previous|"
                                 r"outdated|wrong)\b))", re.IGNORECASE)
#: The values a taken-back statement is repaired by, each kind with its own pattern.
_REPAIR_KINDS = (
    re.compile(r"\b\d{1,2}:\d{2}[ \t]*[-\u2013][ \t]*\d{1,2}:\d{2}\b"),  # a time range
    re.compile(r"\b(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)days?\b"),  # a weekday
    re.compile(r"(?<![\d:\u2013-])(?<![\u2013-][ \t])\d{1,2}:\d{2}\b(?![ \t]*[-\u2013][ \t]*\d)"),
    re.compile(r"\b\d+(?:\.\d+)?[ \t]?%"),  # a percentage
    # a decimal fraction, not a version ("scale_factor of 0.05" -> "0.01"; not "15.4.2")
    re.compile(r"(?<![\w.])\d+\.\d+(?![\w%]|\.\d)"),
    # (the unit written on: "5min" -> "15min")
    re.compile(r"\b\d+(?:\.\d+)?[ \t]?(?:days?|weeks?|months?|years?|hours?|minutes?|mins?|"
               r"seconds?|secs?|GB|MB|TB|copies|connections)\b", re.IGNORECASE),
    # a number in words, whole ("four weekly base backups" -> "six"; "five hundred" ->
    # "one thousand")
    re.compile(r"\b" + WORD_NUMBER + r"\b", re.IGNORECASE),
    # a bare number, such as a port ("listens on port 2222. Actually scratch that, it went
    # back to 22 when we rebuilt it"): the first other number the next sentence gives
    re.compile(r"(?<![\w.:/-])\d{2,5}(?![\w:/%-]|\.\w)"),
)


def statement_taken_back(message: str) -> tuple[str, list[str]]:
    """ "The window is Monday 06:00-08:00. Actually no, scrap that. Monday is brew day, so
    the window moved to Wednesday 06:00-08:00 last spring. And ..." reads "The window is
    Wednesday 06:00-08:00. And ...": the statement before "scrap that" with the values
    of its kinds that the next sentence gives instead (what the next sentence says to get
    there is the story of the change, and goes). With no such value, nothing changes.
    Returns the message so read and the values it replaced (the only ones taken back: a
    place the statement named and the new one does not is still said, "four weekly base
    backups on vault1 ... it's six" keeps vault1). The reader and the judge both read it.
    """
    replaced: list[str] = []
    for cue in list(_STATEMENT_SCRAPPED.finditer(message))[::-1]:
        head = message[:cue.start()].rstrip()
        if not head.endswith((".", "!", ";")) and not head.endswith(("-", "\u2014", "\u2013")):
            continue
        start = max(head.rfind(". ", 0, len(head) - 1), head.rfind("\n", 0, len(head) - 1))
        said = head[start + 1:].strip()
        after = message[cue.end():]
        end = re.search(r"[.!?](?=\s|$)", after)
        # ("Actually, scratch that, that was the old rule. Since the audit it's six ...":
        # why it was taken back, then what holds)
        why = re.match(r"[ \t]*(?:that|it|this)(?:'s|\s+is|\s+was)\s+(?:the\s+)?(?:old|previous|"
                       r"outdated|wrong)\b[^.!?\n]*[.!?]\s*", after)
        if why:
            after = after[why.end():]
            end = re.search(r"[.!?](?=\s|$)", after)
        told = after[:end.end()] if end else after
        repaired, changed = said, False
        for kind in _REPAIR_KINDS:
            olds, news = kind.findall(repaired), kind.findall(told)
            bare = kind in _REPAIR_KINDS[-2:]  # (a number in words or digits alone)
            if bare and (changed or re.search(r"\b(?:it's|it\s+is)\b[^.!?]*\bnow\b", told,
                                               re.IGNORECASE)):
                # (a number already repaired with its kind; or a new statement of its own,
                # "it's 8443 with TLS now", which stays as it is said)
                break
            new = [n for n in news if n.lower() != olds[0].lower()][:1] if bare and len(
                olds) == 1 else (news[-1:] if news and len(olds) == 1 and news[-1] != olds[0]
                                 else [])
            if new:
                replaced.append(olds[0])
                repaired = re.sub(rf"(?<![\w.:/-]){re.escape(olds[0])}(?![\w:/%-]|\.\w)"
                                  if bare else re.escape(olds[0]), new[0], repaired, count=1)
                changed = True
        # ("... it's six weekly base backups, plus all WAL back to the oldest one kept":
        # what the new statement adds to the value goes with it)
        # (and how it is set: "It's 15min now, set with ALTER ROLE ...")
        # (and what else holds: "It's 30 days now, and Automatically Delete Temporary Files
        # is on too")
        more = re.search(r"[,;][ \t]*(?:plus|with|and\s+also|(?:set|configured|enforced)[ \t]+"
                         r"(?:with|by|in|via|on)|via|and(?![ \t]+(?:that|it|this|so)\b)"
                         r"(?=(?:[ \t]+[^ \t.!?\n]+){4}))\b[^.!?\n]*", told)
        if changed and more:
            repaired = repaired.rstrip(" .!;\u2026") + more.group(0).rstrip() + "."
        elif changed:  # ("after 14 days..." said again: "after 30 days.")
            repaired = re.sub(r"(?:\.{2,}|\u2026)$", ".", repaired.rstrip())
        if not changed:
            restated = _restated_after_change(said, told)
            if restated is not None:
                repaired, told_rest = restated
                replaced += [i.text for i in items(said) if i.kind in STRONG_KINDS
                             and i.text.lower() not in repaired.lower()]
                changed = True
                told = told[:len(told) - len(told_rest)]
        if changed:
            prefix = head[:start + 1]
            gap = " " if prefix and not prefix.endswith("\n") else ""
            message = f"{prefix}{gap}{repaired} {after[len(told):].lstrip()}"
    return message, replaced


#: The change told after "scratch that": "it moved to WPA2 Enterprise last spring, so
#: ...", "they were switched over to the new relay in March". The new value runs to a
#: time phrase, a comma or the end of the sentence.
_CHANGED_TO = re.compile(
    r"[ \t]*(?:it|that|this|they|the[ \t]+[\w-]+(?:[ \t]+[\w-]+)?)[ \t]+"
    r"(?:(?:has|have)[ \t]+been[ \t]+|was[ \t]+|were[ \t]+|got[ \t]+)?"
    r"(?:moved|changed|switched|went|swapped|upgraded|migrated)(?:[ \t]+(?:over|"
    r"back))?[ \t]+to[ \t]+(?P<new>[^,;.!?\n]+?)"
    r"(?:[ \t]+(?:(?:last|this)[ \t]+\w+|in[ \t]+\w+(?:[ \t]+\d{4})?|(?:\w+[ \t]+){1,3}ago|"
    r"recently))?(?P<rest>[,;][^.!?\n]*)?(?P<end>[.!?]|$)", re.IGNORECASE)
#: What somebody did to make the change, then what holds now: "Dev switched it in March:
#: the logger now writes ...".
_CHANGE_STORY = re.compile(r"[ \t]*(?P<story>[^:.!?\n]{3,60}):[ \t]+(?P<now>[^.!?\n]{12,}[.!?]?)")


def _restated_after_change(said: str, told: str) -> tuple[str, str] | None:
    """The statement taken back, said again from the change told after the cue, and what
    of the cue's sentence is left to keep (None: the sentence gives no new statement).

    "Kiosk Wi-Fi is WPA2 Personal. Scratch that - it moved to WPA2 Enterprise last
    spring, so no password is typed." reads "Kiosk Wi-Fi is WPA2 Enterprise, so no
    password is typed."; "The logger writes in UTC. Scratch that, Dev switched it in
    March: the logger now writes in local time." reads "The logger now writes in local
    time." (the story of the change before the colon goes)."""
    moved = _CHANGED_TO.match(told)
    copula = list(re.finditer(r"\b(?:is|are|'s|'re|uses?|runs?(?:[ \t]+on)?)[ \t]+", said,
                              re.IGNORECASE))
    if moved and copula:
        new = moved.group("new").strip()
        old = said[copula[-1].end():].rstrip(" .!;\u2014\u2013-")
        if new and old and new.lower() != old.lower():
            rest = (moved.group("rest") or "").rstrip()
            return said[:copula[-1].end()] + new + rest + ".", told[moved.end():]
    story = _CHANGE_STORY.match(told)
    if story and past_tense(story.group("story")) and len(tokens(story.group("now"))) >= 4 \
            and not past_tense(re.split(r"[,;]", story.group("now"))[0]):
        now = story.group("now").strip()
        return now[:1].upper() + now[1:] + ("" if now.endswith((".", "!", "?")) else "."), \
            told[story.end():]
    return None


#: A value named again to take it back, its replacement later in the same sentence:
#: "Sorry, I said 60 - that was before the audit, the retention is 90 days now.",
#: "Actually scratch the 04:00, the window ... ends at 03:30 now." (the value the cue
#: names, not "scratch that", which :data:`_SCRAP_THAT` reads).
_NAMED_BACK = re.compile(
    r"(?:^|(?<=[.!?])[ \t]+|(?<=\n))(?P<cue>[^.!?\n]{0,40}?\b(?:"
    r"(?P<scratch>scratch|scrap|forget|ignore|disregard|strike)[ \t]+(?:the[ \t]+|my[ \t]+)?|"
    r"(?:i|we)[ \t]+(?:said|wrote|typed|put|gave(?:[ \t]+you)?|told[ \t]+you|quoted)"
    r"[ \t]+(?:the[ \t]+)?))"
    r"(?P<old>\d(?:[\w:%/+-]|[.,]\d)*)(?![\w.,]\w)"
    r"(?P<rest>(?:[^.!?\n]|[.,](?=\d))*)(?:[.!?]+|$)", re.IGNORECASE | re.MULTILINE)
#: Words that make "I said X" a take-back and not a reminder ("as I said, 60").
_OWNED_ERROR = re.compile(r"\b(?:sorry|oops|wrong|mistake|my\s+bad|typo|before|old|"
                          r"outdated|previous|last\s+year|changed|not\s+right|now)\b",
                          re.IGNORECASE)


@dataclass(frozen=True)
class NamedTakeBack:
    """A value the writer names again to take it back ("I said 60 - ... it's 90 days
    now"): the sentence that does (``start``, ``end``), where the value was said before
    (``said``, a span of the text), the value taken back and the one given for it."""

    start: int
    end: int
    said: tuple[int, int]
    old: str
    new: str
    rest: int = -1  # where what the sentence says after the take-back begins


#: A pointer back at the value said before, the new value after it in the same sentence:
#: "Actually I've just checked with Priya and that was the old build - it's 15 minutes
#: now."
_OLD_POINTER = re.compile(
    r"(?:^|(?<=[.!?])[ \t]+|(?<=\n))[^.!?\n]{0,80}?\b(?:that|this)(?:'s|[ \t]+(?:was|is))[ \t]+"
    r"(?:the[ \t]+|an?[ \t]+)?(?:old|previous|outdated|last[ \t]+year's|wrong|before)\b"
    r"[^.!?\n—–-]{0,40}?"
    r"[ \t]*(?:[—–,;:]|[ \t]-+)[ \t]*(?P<rest>(?:[^.!?\n]|[.,](?=\d))*)(?:[.!?]+|$)",
    re.IGNORECASE | re.MULTILINE)
_VALUE_WITH_UNIT = re.compile(r"(?<![\w.:/@-])(\d(?:[\w:%/+-]|[.,]\d)*)(?:[ \t]+([A-Za-z%]+))?")


def _unit_word(word: str | None) -> str:
    """The word after a number as its unit ("" for a function word: "25 now", "40 and")."""
    return "" if not word or word.lower() in STOPWORDS or word.lower() in ("now", "then") \
        else word.lower()


def _same_kind(value: str, word: str | None, old: str, unit: str) -> bool:
    """``value`` (with the word after it) is of the kind of ``old``, said in ``unit``: a
    clock time for a clock time, else the same unit ("" for a bare number)."""
    clock = re.fullmatch(r"\d{1,2}:\d{2}", old) is not None
    return (re.fullmatch(r"\d{1,2}:\d{2}", value) is not None) == clock and \
        (value_unit(value) or _unit_word(word)) == unit.lower()


def _pointed_back(text: str) -> list[NamedTakeBack]:
    """"set to 10 minutes. ... that was the old build - it's 15 minutes now": the last value
    of the new one's kind in the sentence before is taken back."""
    out = []
    for m in _OLD_POINTER.finditer(text):
        # (a number with its unit, a clock time, or a bare number said as what it is now:
        # "it's 25 now")
        rest = m.group("rest")
        new = next((n for n in _VALUE_WITH_UNIT.finditer(rest) if _unit_word(n.group(2))
                    or ":" in n.group(1) or re.search(r"\b(?:it's|it\s+is|now)\s+$",
                                                      rest[:n.start()], re.IGNORECASE)),
                   None)
        if new is None:
            continue
        head = text[:m.start()].rstrip()
        start = max(head.rstrip(".!?").rfind(c) for c in ".!?\n") + 1
        unit = value_unit(new.group(1)) or _unit_word(new.group(2))
        # (a bare "it's 45 now" stands for the last number before it, in whatever unit:
        # "allows 60 clients")
        olds = [o for o in _VALUE_WITH_UNIT.finditer(head, start)
                if o.group(1) != new.group(1) and (_same_kind(
                    o.group(1), o.group(2), new.group(1), unit) or (not unit and _same_kind(
                        o.group(1), None, new.group(1), value_unit(o.group(1)))))]
        if olds:
            out.append(NamedTakeBack(m.start(), m.end(), olds[-1].span(1), olds[-1].group(1),
                                     new.group(1), m.start("rest")))
    return out


def named_take_backs(text: str) -> list[NamedTakeBack]:
    """Each value ``text`` names again only to take it back, with the value of the same
    kind the same sentence gives after it (a clock time for a clock time; a number for a
    number, in the unit the value was first said with), and where it was said before;
    a cue with no such value after it, or a value not said before, is no take-back."""
    out = []
    for m in _NAMED_BACK.finditer(text):
        old, rest = m.group("old"), m.group("rest")
        if not m.group("scratch") and not _OWNED_ERROR.search(m.group("cue") + rest):
            continue
        # (a range's second end counts: "01:00-04:00")
        said = [s for s in re.finditer(rf"(?<![\w.:/@])(?<![A-Za-z_]-){re.escape(old)}"
                                       r"(?![\w:/@+]|[.,]\d)", text[:m.start()])]
        if not said:
            continue
        first = said[-1]
        unit = value_unit(old) or _unit_word(
            re.match(r"[ \t]*([A-Za-z%]*)", text[first.end():]).group(1))  # type: ignore[union-attr]
        news = [n for n in _VALUE_WITH_UNIT.finditer(rest)
                if n.group(1) != old and _same_kind(n.group(1), n.group(2), old, unit)]
        if news:
            out.append(NamedTakeBack(m.start("cue"), m.end(), first.span(), old,
                                     news[0].group(1), m.start("rest")))
    # (one sentence, one take-back: "I said 60 - that was before the audit, ..." is named)
    return sorted(out + [b for b in _pointed_back(text)
                         if not any(b.start < o.end and o.start < b.end for o in out)],
                  key=lambda b: b.start)


def number_value(text: str) -> int | None:
    """120 for "a hundred and twenty", 24 for "twenty-four", 7 for "7"; None otherwise."""
    if text.isdigit():
        return int(text)
    total = current = 0
    for w in re.split(r"[\s-]+", text.lower()):
        if w in ("a", "an"):
            current = current or 1
        elif w == "and":
            continue
        elif w in _UNITS_19:
            current += _UNITS_19.index(w)
        elif w in _TENS:
            current += 20 + 10 * _TENS.index(w)
        elif w == "hundred":
            current = (current or 1) * 100
        elif w == "thousand":
            total, current = total + (current or 1) * 1000, 0
        else:
            return None
    return total + current


# A number written as a word before a unit: "fixed at five minutes", "kept two weeks".
_WORD_NUMBER = re.compile(
    r"\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|"
    r"thirty|forty|fifty|sixty|ninety|hundred)\s+(?=(?:seconds?|minutes?|hours?|days?|weeks?|"
    r"months?|years?|times|gb|mb|tb|pages|copies|attempts|tries|characters|digits)\b)",
    re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.])(?<!\w-)(?:v|V)?\d+(?:[.,:/]\d+)*(?:\s?%|(?!\w|\.\w))")
# ("PF-Cold2", "LAB-Zebra2": a hyphenated code with a digit is one item, not two)
_TECH = re.compile(r"\b(?:(?=[A-Za-z\d-]*\d)[A-Za-z][A-Za-z\d]*(?:-[A-Za-z\d]+)+(?![\w.])|"
                   r"[a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*|[A-Za-z]+_\w+|"
                   r"[A-Za-z]*\d[A-Za-z\d]*[A-Za-z]\w*|"
                   r"[A-Za-z]+\d+|[A-Za-z]\w*-\d[\w-]*)\b|(?<![\w-])--?[a-z][\w-]*|(?<![\w\\])\\[a-z]\w+")
#: A name pattern with a placeholder in it: "fmrt-<room><nn>", "<vm>-pre-HOPnnnn".
_PLACEHOLDER_NAME = re.compile(r"(?<![\w<>/.-])(?=[\w.-]*<[A-Za-z_]{1,20}>)"
                               r"(?:[\w.-]|<[A-Za-z_]{1,20}>)*(?:[\w-]|<[A-Za-z_]{1,20}>)")
#: A setting written as key=value, or a list of them ("dc=example,dc=lan").
_ASSIGNMENT = re.compile(r"(?<![\w=.-])[A-Za-z_][\w.-]*=(?!=)[^\s,;'\"()=]+"
                         r"(?:,[A-Za-z_][\w.-]*=[^\s,;'\"()=]+)*")
_CAPSEQ = re.compile(r"\b[A-Z][\w'’.-]*[\w](?:\s+(?:&\s+|of\s+)?"
                     r"[A-Z][\w'’-]*[\w])*|\b[A-Z]\b")
_ACRONYM = re.compile(r"\b[A-Z][A-Z0-9]{1,6}s?\b")
#: One word that is a name wherever it stands: capitals joined by a hyphen ("DO-Jet",
#: "CV-Staff") or a capital inside it ("PowerShell").
_CODE_NAME = re.compile(r"[A-Z][A-Za-z0-9]*-[A-Z][\w-]*|[A-Z]+[a-z]+[A-Z]\w*")
_ABBREVIATIONS = frozenset({"e.g", "i.e", "etc", "vs"})
_SHOUT_MIN = 0.5  # a sentence with this share of all-caps words is shouting


@dataclass(frozen=True)
class Item:
    """A concrete item in a text: its kind, the text as written, where it is."""

    kind: str  # url email path keys menu quoted number dotted tech name role
    text: str
    start: int
    end: int

    @property
    def key(self) -> str:
        """The normalized form items are compared by."""
        return normalize(self.text)


def normalize(text: str) -> str:
    """Lower case, quotes and surrounding punctuation removed, whitespace and the
    separators of menu paths and key combinations made uniform."""
    t = text.lower().strip(" .,;:!?\"'“”‘’`()[]")
    t = re.sub(r"\s*(?:>|→|->|»|›)\s*", " > ", t)
    t = re.sub(r"\s*\+\s*", "+", t)
    t = t.replace("’", "'")
    t = re.sub(r"^v(?=\d)", "", t)
    return " ".join(t.split())


def _shouting(text: str) -> bool:
    toks = [t for t in re.findall(r"[A-Za-z]{2,}", text)]
    return bool(toks) and sum(t.isupper() for t in toks) / len(toks) >= _SHOUT_MIN


def _sentence_start(text: str, pos: int) -> bool:
    before = text[:pos].rstrip(" \"'“‘(")
    return not before or before[-1] in ".!?:;\n" or bool(_BULLET.match(text[:pos]))


def items(text: str) -> list[Item]:
    """The concrete items of a text, longest first where they overlap.

    Kinds: url, email, path, keys (key combination), menu (menu path), quoted, number
    (also versions and times), dotted (hostnames, file names), tech (identifiers with a
    digit, an underscore, inner capitals or a leading dash: options), name (capitalized
    words not at the start of a sentence, or two or more at its start; acronyms) and
    role (role nouns)."""
    found: list[Item] = []
    taken: list[tuple[int, int]] = []

    def add(kind: str, start: int, end: int) -> None:
        raw = text[start:end]
        stripped = raw.rstrip(".,;:!?)\"'”’")
        end -= len(raw) - len(stripped)
        lead = len(stripped) - len(stripped.lstrip("(\"'“‘"))
        start += lead
        if end <= start or any(s < end and start < e for s, e in taken):
            return
        taken.append((start, end))
        found.append(Item(kind, text[start:end], start, end))

    for kind, rx in (("url", _URL), ("email", _EMAIL), ("keys", _KEYCOMBO), ("menu", _MENU),
                     ("path", _PATH)):
        for m in rx.finditer(text):
            start = m.start()
            if kind == "menu":
                head = m.group(0)
                # "Open Settings > Printers", "It's Settings > About": the path starts
                # after the words that begin the sentence.
                while True:
                    first, _, rest = head.partition(" ")
                    if rest and not re.match(r"\s*[>→»›]", rest) and (
                            first.lower().rstrip(".,") in _FUNCTION_START
                            or first.lower() in ("it's", "that's", "there's", "here's")):
                        start += len(first) + 1
                        head = rest
                        continue
                    break
            add(kind, start, m.end())
    for m in _QUOTED.finditer(text):
        g = next(i for i in range(1, 6) if m.group(i) is not None)
        if len(m.group(g).split()) <= 10:
            add("quoted", m.start(g), m.end(g))
    for m in _ASSIGNMENT.finditer(text):
        add("tech", m.start(), m.end())  # "dc=brightline,dc=lan", "vers=3.1.1": one value
    for m in _PLACEHOLDER_NAME.finditer(text):
        add("tech", m.start(), m.end())  # "fmrt-<room><nn>", "grp_<db>_owner": a pattern
    for m in _DOTTED.finditer(text):
        if m.group(0).lower() not in _ABBREVIATIONS and not re.fullmatch(r"v?\d+(?:\.\d+)+",
                                                                         m.group(0)):
            add("dotted", m.start(), m.end())
    for m in _NUMBER.finditer(text):
        add("number", m.start(), m.end())
    for m in _WORD_NUMBER.finditer(text):
        add("number", m.start(1), m.end(1))  # "five minutes": the number, as written
    for m in _TECH.finditer(text):
        add("tech", m.start(), m.end())
    shouting = _shouting(text)
    for m in _CAPSEQ.finditer(text):
        name = m.group(0)
        nwords = len(name.split())
        if name in ("I", "A") or (name.isupper() and shouting) or (
                nwords == 1 and name.isupper() and name.lower() in _CAPS_WORDS) or \
                any(w.upper() in CHAT_ACRONYMS for w in name.split()):
            continue
        if _sentence_start(text, m.start()):
            if nwords < 2 and not _CODE_NAME.fullmatch(name):
                continue  # ("DO-Jet was scrapped", "PowerShell is blocked": a name anywhere)
            # "Open Settings" at a sentence start: the first word is only capitalized.
            first, _, _rest = name.partition(" ")
            if first.lower() in _FUNCTION_START:
                add("name", m.start() + len(first) + 1, m.end())
                continue
        add("name", m.start(), m.end())
    if not shouting:
        for m in _ACRONYM.finditer(text):
            if m.group(0).lower() not in _CAPS_WORDS and m.group(0).upper() not in CHAT_ACRONYMS:
                add("name", m.start(), m.end())
    for m in re.finditer(r"\b[A-Za-z]+\b", text):
        if m.group(0).lower() in ROLE_WORDS:
            add("role", m.start(), m.end())
    found.sort(key=lambda i: i.start)
    return found


#: Words that begin sentences without being part of a name after them.
_FUNCTION_START = frozenset("""the a an in on at for from to by with open go click press
use select choose set turn type run since after before until when if our your my their
this that these those there it its only all every each no not do don't never always
please then also and but or so as under via through enable disable install restart check
see try find navigate is are was were it's that's there's here's""".split())

#: Words written in capitals for emphasis ("NOT allowed", "ONLY the owner"), not names.
_CAPS_WORDS = frozenset("""not no never only must don't do does all any none never always
nothing everyone nobody and or but the a is are be""".split())

#: Check marks and crosses that open list lines, and what they say in words.
CHECK_MARKS = {"✅": "allowed", "✔": "allowed", "✔️": "allowed", "☑": "allowed",
               "☑️": "allowed", "✓": "allowed", "❌": "not allowed", "✖": "not allowed",
               "✖️": "not allowed", "✗": "not allowed", "🚫": "not allowed",
               "⛔": "not allowed"}

#: Chat abbreviations written in capitals ("Just FYI", "PSA:", "IMO"): not names.
CHAT_ACRONYMS = frozenset("""FYI PSA TLDR ASAP ETA IMO IMHO AFAIK IIRC BTW FWIW NB PS OK LOL TBH
WFH OOO EOD AKA TIA NVM IDK YMMV RSVP TBD TBC NP THX PLS""".split())

STRONG_KINDS = frozenset({"url", "email", "path", "keys", "menu", "quoted", "number",
                          "dotted", "tech"})


def item_keys(text: str, kinds: Iterable[str] | None = None) -> set[str]:
    """Normalized concrete items of text (of the given kinds)."""
    want = set(kinds) if kinds is not None else None
    return {i.key for i in items(text) if want is None or i.kind in want}


# ---------------------------------------------------------------------------------------
# Words, stems, negation
# ---------------------------------------------------------------------------------------

# ("I&O", "R&D" are one word: their "I" is not the writer.)
_TOKEN = re.compile(r"[^\W_]+(?:['’.-][^\W_]+|&[^\W_]+)*")


#: Contractions typed without their apostrophe ("dont", "isnt"), read as written out.
CONTRACTIONS = {
    "dont": "don't", "doesnt": "doesn't", "didnt": "didn't", "cant": "can't",
    "wont": "won't", "isnt": "isn't", "arent": "aren't", "wasnt": "wasn't",
    "werent": "weren't", "shouldnt": "shouldn't", "couldnt": "couldn't",
    "wouldnt": "wouldn't", "hasnt": "hasn't", "havent": "haven't", "hadnt": "hadn't",
    "mustnt": "mustn't", "im": "i'm", "ive": "i've", "youre": "you're",
    "theres": "there's", "thats": "that's", "whats": "what's", "theyre": "they're",
    "youve": "you've", "weve": "we've", "theyve": "they've",
    # (the same with a letter dropped, as typed on a phone)
    "dosnt": "doesn't", "dosent": "doesn't", "doesent": "doesn't", "didint": "didn't",
    "wasent": "wasn't", "isent": "isn't",
}


def restore_contractions(text: str) -> str:
    """Apostrophe-less contractions written out ("thats" -> "that's", "doesnt" ->
    "doesn't"), so that a message typed in chat style reads like any other."""
    def fix(m: re.Match[str]) -> str:
        word = m.group(0)
        full = CONTRACTIONS.get(word.lower())
        if full is None or word.lower() in ("im", "ive"):
            return word
        return full[0].upper() + full[1:] if word[0].isupper() else full
    text = re.sub(r"\b[A-Za-z]+\b", fix, text)
    # "its in Settings", "its Eastbrook-Free": at a clause start, "its" before a word that
    # no noun of its would be is "it's" ("Its default is 5" stays).
    return _ITS.sub(lambda m: m.group(1) + "'s", text)


_ITS = re.compile(r"(?:^|(?<=[.!?;,:]\s)|(?<=\n))([Ii]t)s(?=\s+(?:in|on|at|under|not|just|only|"
                  # ("its smb://fs01/dispatch not the short name": an address)
                  r"a|an|the|because|b/c|for|still|now|always|never|called|[A-Z]\w|"
                  r"[a-z]+://|[\\/~]))")


#: Spoken fillers of a dictated or chatty message ("um", "uh", "erm").
# (a bare "er" in lower case between two words too: "and er they're held"; between commas
# it is a tag, see _TAG)
_FILLER = re.compile(r"(?:[ \t]*,)?[ \t]*\b(?:u+h*m+|u+h+|e+r+m+|hmm+|mhm)\b[,.]?[ \t]*|"
                     r"(?<=[a-z] )(?-i:e+r+) (?=[a-z])|"
                     # "... desktops. Er, thirty minutes": opening a sentence, with its comma
                     # (not "ER," the department)
                     r"(?:(?<=[.!?] )|^)(?-i:[Ee]r+),[ \t]*", re.IGNORECASE | re.MULTILINE)
_FILLER_EDGES = re.compile(r"^\s*(?:(?:ok(?:ay)?|yeah|well|hi|hello)[\s,]+)*so\b[\s,]+|"
                           r"^\s*ok(?:ay)?\s*,?\s+(?=\w)|"
                           r"[\s,]+(?:so\s+yeah|yeah\s+so|you know|i guess so|(?:ok(?:ay)?\s+)?"
                           r"(?:thanks|thank you|cheers)\s+(?:bye|ta-?ta)|ok(?:ay)?\s+bye)"
                           r"\s*[.!]*\s*$",
                           re.IGNORECASE | re.MULTILINE)
#: Politeness particles and forms of address of the Englishes people write at work: the
#: Filipino "po" and "naman" before a mark ("turned off po, since"), a Turkish "Hocam," or
#: a Hindi "ji" opening the message.
_PARTICLE = re.compile(r"[ \t]+(?-i:po|naman)(?=[ \t]*[,.!?;])|"
                       r"[ \t]*,[ \t]*(?-i:yaar|lah)(?=[ \t]*[,.!?;])|"
                       r"^[ \t]*(?i:hocam|abi|ji|bhai|kuya|ate|sir ji|arre|are yaar|yaar|acha|"
                       r"achha|haan|lah|aiyo|ayyo)[ \t]*[,!][ \t]*",
                       re.MULTILINE)
#: A discourse tag between commas ("you just, like, toggle it", "the desk, right, has a
#: dock", "login, yeah, is off"); a bare "er" of a dictated message.
_TAG = re.compile(r"[ \t]*,[ \t]*(?:like(?:[ \t]+ever)?|yeah|yep|you know|right|basically|"
                  r"(?-i:er))[ \t]*,"
                  r"[ \t]*|(?:[ \t]*,)?[ \t]*\b(?-i:er)\b(?=[ \t]*[,.])[,.]?[ \t]*",
                  re.IGNORECASE)
#: A phrase said twice as a speaker restarts it: "that's a, that's a ticket".
# (two or three words ending in a word that cannot end a phrase: "Night Light, Night
# Light changes" and "suspend it, it keeps" are no restarts)
_STUTTER = re.compile(r"\b((?-i:[A-Za-z]+(?:'[a-z]+)?)(?:[ \t]+(?-i:[a-z]+(?:'[a-z]+)?)){0,1}[ \t]+"
                      r"(?:a|an|the|to|of|is|it's|that's|was|we|you|in|on|for))"
                      r",[ \t]+\1\b")
#: A phrase started again after a dash: "not the - not the Bidders one".
_DASH_STUTTER = re.compile(r"(?<![\w-])((?-i:[a-z]+)(?:[ \t]+(?-i:[a-z]+)){0,2})[ \t]+[-–—][ \t]+"
                           r"\1(?=[ \t])")
#: A caret that points at the line above ("^ and it still got killed", "^^ this"): where
#: the remark belongs, not a word of it.
_CARET = re.compile(r"^[ \t]*\^+[ \t]+(?=\w)", re.MULTILINE)
#: A typed face: ":)", ";-)", ":D", ":P" (between spaces or before a mark).
_EMOTICON = re.compile(r"[ \t]*(?<!\S)[:;=]-?[)(DPp](?=\s|$|[.,!?])", re.MULTILINE)


def _face(m: re.Match[str]) -> str:
    """A typed face goes; where it ended a sentence ("not us :) Our line"), a full stop."""
    before, after = m.string[:m.start()].rstrip(), m.string[m.end():]
    ends = bool(re.match(r"[ \t]+[A-Z]", after)) and not before.endswith((".", "!", "?"))
    return "." if ends and before else ""


#: One short word said twice: "the thing is we, we don't", "and, and then". Only words
#: that cannot end a clause: "suspend it, it keeps running", "is it on, on the kiosks",
#: "release it it gets deleted" and "a drop-in in /etc" say the word twice on purpose.
_WORD_STUTTER = re.compile(r"(?<![\w'-])(we|I|they|he|she|the|a|an|to|and|but|if|when|at|"
                           r"it's|that's|there's),?[ \t]+\1(?=[ \t])")
#: Radio procedure closing a sentence: "... until landing, over."
_RADIO_OVER = re.compile(r"[ \t]*,[ \t]*over(?=[ \t]*[.!](?:\s|$))", re.IGNORECASE)
#: A number repaired with a spoken "er": "PostgreSQL 15.5, er, 15.6".
_ER_REPAIR = re.compile(r"(?<![\w.])(\d[\w.:/%+-]*\w|\d)[ \t]*,[ \t]*(?-i:e+r+m*)[ \t]*,[ \t]*"
                        r"(\d[\w.:/%+-]*\w|\d)(?![\w])")
#: Footnote marks ("Correct as far as it goes.¹ ²"): where a note is, not what it says
#: (a unit's power stays: "120 cd/m²", "40 m³").
_FOOTNOTE_MARK = re.compile(r"(?<!\bm)(?<!cm)(?<!mm)(?<!km)(?<!ft)(?<!in)"
                            r"[ \t]*[¹²³⁴⁵⁶⁷⁸⁹⁰]+")
#: A tag that closes a sentence ("It's `ssh -J bast-1 host`, yeah.").
_TAG_END = re.compile(r"[ \t]*,[ \t]*(?:yeah|yep|right|you know|basically)(?=[ \t]*[.!?](?:\s|$))",
                      re.IGNORECASE)
#: "it's like `ssh -J ...`": a filler before the value it introduces.
_LIKE_VALUE = re.compile(r"\b((?:it's|it is|that's|that is|so it's))[ \t]+like[ \t]+(?=[`'\"])",
                         re.IGNORECASE)
#: "The thing is, X" and "Thing is, X" open a sentence only to announce X.
_ANNOUNCE = re.compile(r"(?:^|(?<=[.!?;:][ \t])|(?<=\n))[ \t]*(?:so,?[ \t]+)?(?:the[ \t]+)?"
                       r"thing[ \t]+is,?[ \t]+(?=\w)", re.IGNORECASE)
#: A filler between two clauses stands for the comma a speaker does not dictate.
_CLAUSE_START = frozenset("""the a an it it's they we you i there this that these those and
but so then our my your""".split())
_NO_BREAK_AFTER = frozenset("""the a an to of in on at for from with by is are was were be
and or but so my our your this that because since if when unless as""".split())
#: Chat shorthand written out ("w/ no input", "b/c of shared use", "pls").
SHORTHAND = {"w/": "with", "w/o": "without", "b/c": "because", "pls": "please",
             "plz": "please", "ppl": "people", "thx": "thanks", "atm": "at the moment",
             "cuz": "because", "tho": "though", "abt": "about", "u": "you", "ur": "your",
             "r": "our", "4": "for", "frm": "from", "b4": "before"}
#: After "ur", words that make it "you're": "till ur on a job", "ur not allowed".
_YOU_ARE_NEXT = frozenset("""on in at not going done off out away back here there the a an
allowed supposed meant welcome right wrong""".split())
# ("u" and "ur" only between words, in lower case: "ps -u root", "chmod u+x", "press u"
# stay)
_SHORTHAND = re.compile(r"(?<![\w/.-])(?:(?i:w/o|w/|b/c|pls|plz|ppl|thx|atm|cuz|tho|abt)|"
                        # (in lower case before a word: "frm cron", "b4 then"; "cabinet B4"
                        # stays)
                        r"(?:frm|b4)(?=[ \t]+[a-z])|"
                        r"(?<=\s)(?<!press )(?<!type )(?<!hit )(?<!key )(?:u|ur)(?=\s+[a-z]))"
                        r"(?![\w/.+=-])|"
                        # ("on r laptops", "4 the route app": "our" after a preposition,
                        # "for" before an article, between lower-case words)
                        r"(?:(?<=\bon )|(?<=\bin )|(?<=\bat )|(?<=\bto )|(?<=\bfor )|"
                        r"(?<=\bfrom )|(?<=\bwith )|(?<=\bof ))r(?= [a-z]{2,})|"
                        # (not a number after a noun that counts: "page 4 the", "bay 4 a")
                        r"(?<=[a-z] )"
                        + "".join(rf"(?<!\b{w} )" for w in (
                            "page", "step", "room", "bay", "line", "floor", "level", "version",
                            "port", "ext", "item", "table", "figure", "section", "chapter",
                            "gate", "door", "platform", "lane", "zone", "unit", "box", "shelf",
                            "row", "column", "ward", "desk", "till", "stand", "dock", "slot",
                            "phase", "stage", "week", "day", "year", "level", "tier", "grade",
                            "class", "type", "model", "no", "number", "and", "or", "to", "of",
                            "than", "about", "over", "under", "only", "just", "every", "at",
                            "by", "until", "till", "from", "around", "after", "before", "past",
                            "on", "in", "since", "the", "last", "next", "first"))
                        # (not a time: "at 4 a.m.")
                        + r"4(?= (?:the|a|an|my|your|our|their|you|me|us)\b(?![.:]))")
#: Words shouted in capitals that read the same in lower case ("DO NOT", "DISABLED",
#: "STOP"); two-letter words that are also acronyms (IT, US, OR, ON, ID) stay.
# (not a part of a name: "DO-Jet", "HR-7", "LAB-ADMIN")
_SHOUTED = re.compile(r"(?<![\w-])[A-Z]{2,}(?:'[A-Z]+)?\b(?!-\w)"
                      r"(?:\s+(?<![\w-])[A-Z]{2,}(?:'[A-Z]+)?\b(?!-\w))*")
_SHOUT_EXTRA = frozenset("""stop stopped please last time again ever every never nobody
anyone everyone off turned switched changed removed locked unlocked required mandatory
use used""".split())
_NOT_SHOUTS = frozenset({"it", "us", "or", "on", "as", "id", "am", "pm", "in", "at", "to",
                         "so", "me", "we", "hr", "pa", "ad", "it's"})


#: A line with an SQL statement keeps its capitals ("REVOKE ... FROM PUBLIC").
_SQL_LINE = re.compile(r"\b(?:SELECT|INSERT|UPDATE|DELETE|CREATE|ALTER|DROP|GRANT|REVOKE|VACUUM|"
                       r"ANALYZE|COPY|TRUNCATE|BEGIN|COMMIT|ROLLBACK|EXPLAIN|REINDEX|CLUSTER|"
                       r"LOCK|MERGE|UPSERT|RETURNING|WHERE|SET|JOIN|LIMIT|OFFSET|VALUES|"
                       r"NULL|ORDER BY|GROUP BY|HAVING|DISTINCT|INTO|EXISTS)\b")
#: SQL's own shapes ("DROP INTO SAFE STOP" is a shout; "DROP TABLE x", "SET work_mem"
#: are SQL).
_SQL_SHAPE = re.compile(
    r"\bSELECT\b[^\n]*\bFROM\b|\bINSERT\s+INTO\b|\bUPDATE\s+\S+\s+SET\b|\bDELETE\s+FROM\b|"
    r"\b(?:CREATE|ALTER|DROP)\s+(?:TABLE|INDEX|VIEW|ROLE|USER|DATABASE|SCHEMA|EXTENSION|"
    r"FUNCTION|TRIGGER|SEQUENCE|TABLESPACE|MATERIALIZED|UNIQUE|OR\s+REPLACE|POLICY|TYPE|"
    r"DOMAIN|PUBLICATION|SUBSCRIPTION)\b|\b(?:GRANT|REVOKE)\b[^\n]*\b(?:ON|TO|FROM)\b|"
    r"\b(?:VACUUM|REINDEX|EXPLAIN|TRUNCATE|ANALYZE|ROLLBACK|COMMIT|BEGIN)\b\s*[;(]|"
    r"\b(?:GENERATED\s+ALWAYS|READ\s+COMMITTED|REPEATABLE\s+READ|ORDER\s+BY|GROUP\s+BY|"
    r"NOT\s+NULL|PRIMARY\s+KEY|FOREIGN\s+KEY|ON\s+CONFLICT|IS\s+NULL)\b|;\s*$|"
    # a command word before a lower-case name: "SET work_mem", "VACUUM orders"
    r"\b(?:SET|SHOW|RESET|SELECT|DROP|ALTER|CREATE|VACUUM|ANALYZE|REINDEX|TRUNCATE|LOCK|"
    r"CLUSTER|COPY|EXPLAIN|WHERE|LIMIT)\s+[a-z_][a-z0-9_.]*\b")


def _shouted_whole(line: str) -> bool:
    """Capitals all through, with hardly a word in lower case: SQL's keywords in prose
    ("only ADD VALUE and RENAME VALUE") leave the prose's words in lower case."""
    return _shouting(line) and len(re.findall(r"\b[A-Z]{2,}\b", line)) >= 4 and \
        len(re.findall(r"\b[a-z]{3,}\b", line)) < 2


#: A word in capitals on its own ("UTC"; not a part of "LIFT-OT" or "DON'T").
_CAPS_WORD = re.compile(r"(?<![\w'-])[A-Z]{2,}(?![\w'’-])")


def _calm_capitals(text: str) -> frozenset[str]:
    """Words in capitals that the message also writes in a calm sentence and keeps there:
    acronyms ("FIELD LAPTOPS STAY ON UTC. ... The GNSS logs are UTC": UTC stays; "You
    MUST NOT print it" shouts in a calm sentence)."""
    kept = set()
    for part in re.split(r"(?<=[.!?;])\s+|\n", text):
        if _shouting(part):
            continue
        out = _unshout_sentence(part, bool(_SQL_LINE.search(part)))
        kept |= {m.group(0) for m in _CAPS_WORD.finditer(part)
                 if len(out) == len(part) and out[m.start():m.end()] == m.group(0)}
    return frozenset(kept)


#: A line of a configuration file or a command, whose capitals are its syntax: a sudoers
#: rule ("%grp ALL=(root) NOPASSWD: ..."), "KEY=VALUE" settings, a shell prompt.
_CONFIG_LINE = re.compile(r"^[ \t]*(?:[%@]?[\w.-]+[ \t]+[A-Z]+=\(|[A-Z][A-Z0-9_]{2,}=\S|"
                          r"\$[ \t]+\S)")


def _unshout_line(line: str, keep: frozenset[str] = frozenset()) -> str:
    """The line's shouted runs in lower case, sentence by sentence (a shouted sentence
    next to a calm one is still shouted); the capitals in ``keep`` stay."""
    sql = bool(_SQL_LINE.search(line))
    if _CONFIG_LINE.match(line):
        return line  # ("%grp-web ALL=(root) NOPASSWD: /usr/bin/...": a file's own line)
    out = "".join(_unshout_sentence(part, sql)
                  for part in re.split(r"(?<=[^.][.!?;])(?=\s+[A-Z])", line))
    if keep and len(out) == len(line):  # (lower-casing keeps every word where it was)
        for m in _CAPS_WORD.finditer(line):
            if m.group(0) in keep:
                out = out[:m.start()] + m.group(0) + out[m.end():]
    return out


def _unshout_sentence(text: str, sql_line: bool) -> str:
    # (a line with an SQL keyword keeps its capitals: "VACUUM FULL takes an ACCESS
    # EXCLUSIVE lock"; but a sentence of it shouted whole needs SQL's shape to be SQL)
    own = bool(_SQL_LINE.search(text))
    if sql_line and ((not _shouting(text) and not own) or (
            own and (not _shouted_whole(text) or _SQL_SHAPE.search(text)))):
        return text
    out = outside_code(_SHOUTED, _unshout, text)
    # ("THAT STOPS A CHAIRLIFT": the article between the words it joined in the shout)
    return re.sub(r"(?<=[a-z] )A(?= [a-z])", "a", out) if _shouting(text) else out


def _unshout(m: re.Match[str]) -> str:
    """A run of capitalised words in lower case when every word of it is shouted ("DO
    NOT"); a run with any other word ("NOT EXISTS", "GROUP BY", "IT") stays."""
    run = m.group(0)
    words = run.split()
    if all((low := w.lower()) not in _NOT_SHOUTS and (
            low in _CAPS_WORDS or low in MODALS or low in NEGATIONS or low in POLICY
            or low in _SHOUT_EXTRA or low in STOPWORDS) for w in words):
        return run.lower()
    # "PATIENTS AND VISITORS", "DISABLED IN THE BIOS": two or more English words of three
    # letters or more make the run a shout; its English words go to lower case, its
    # acronyms ("BIOS", "USB", "GNOME") stay.
    # (in a message shouted whole, a long word of letters is a word, not an acronym:
    # "DO THE PARSING IN THE ETL"; and SQL's words are words unless the
    # line has SQL's shape: "THE PLCS DROP INTO SAFE STOP")
    whole = _shouting(m.string)
    if any(w.lower() in _SQL_WORDS for w in words) and not (
            _shouted_whole(m.string) and not _SQL_SHAPE.search(m.string)):
        return run  # "GENERATED ALWAYS AS IDENTITY", "READ COMMITTED": SQL in prose
    english = [w for w in words if w.lower() not in _ACRONYM_WORDS and w.lower() not in
               _NOT_SHOUTS_ACRONYMS and (w.lower() in STOPWORDS or english_word(w.lower())
                                         or (whole and len(w) >= 5 and w.isalpha() and
                                             re.search(r"(?:ING|ED|TION|MENT|NESS|LY|ABLE|"
                                                       r"IES|ERS)$", w)))]
    if len(english) < 2 or len(english) < len(words) / 2 or not any(len(w) >= 4 for w in english):
        return run
    # (in a shout, "CHANGE IT" is the pronoun; "LOCKED BY IT", "ASK IT" the department)
    pronoun = {i for i, w in enumerate(words) if w == "IT" and i and whole
               and words[i - 1].lower() in _VERBS_BEFORE_IT}
    return " ".join(w.lower() if w in english or i in pronoun else w
                    for i, w in enumerate(words))


#: Verbs after which a shouted "IT" is the pronoun ("YOU CANNOT CHANGE IT").
_VERBS_BEFORE_IT = frozenset("""change turn switch set do use open close lock unlock move
delete remove restart reset fix leave keep make put take get try touch disable enable run
install uninstall print save send unplug plug update upgrade edit rename copy share
need""".split())


#: Capitals that are an acronym even in a shout ("IT", "US", "ID", "PM").
_NOT_SHOUTS_ACRONYMS = frozenset({"it", "us", "id", "am", "pm", "hr", "pa", "ad", "or"})
#: Acronyms that are also English words: a shouted run keeps them in capitals.
_ACRONYM_WORDS = frozenset("""bios gnome ram rom cap lan wan pin mac dos ups sms cpu gpu
ssd hdd nas san dns vpn ssh usb led lcd sim nic mfa sso ldap kde api cli gui url cups pc
pcs nfs raid lvm""".split())
#: Keywords of SQL written in capitals inside prose: a run with one is SQL, not a shout.
_SQL_WORDS = frozenset("""select insert update delete create alter drop grant revoke vacuum
analyze copy truncate begin commit rollback explain reindex cluster lock merge returning where
join limit offset values null into exists generated identity committed uncommitted
serializable repeatable isolation conflict zone cascade restrict primary foreign references
constraint unique concurrently nowait serial bigserial bigint integer varchar
text boolean timestamp timestamptz jsonb owned sequence schema table index view trigger
function procedure role user database tablespace extension""".split())


def _filler(m: re.Match[str]) -> str:
    before = m.string[:m.start()].split()
    after = m.string[m.end():].split()
    prev = before[-1].lower().strip(",.") if before else ""
    nxt = after[0].lower() if after else ""
    if prev and nxt in _CLAUSE_START and prev not in _NO_BREAK_AFTER and \
            not before[-1].endswith((",", ".", ";", ":")):
        return ", "
    return " " if before and after and m.string[m.start() - 1] != "\n" else ""


_GLUED_AFTER = frozenset("""just really then to the a an and or but so very only also still
even simply because since if when that as unless while for of with from into by at""".split())
_VERB_NEXT = frozenset("""is are was were has have does do can must will should would isn't
aren't doesn't don't can't won't""".split())


def _tag(m: re.Match[str]) -> str:
    """A tag between commas goes: between a word and what it leads into ("you just, like,
    leave it") nothing stands for it, nor before the subject's verb ("the cabinet, right,
    is set"); between two clauses a comma does ("should never suspend, like ever,
    automatic suspend is off")."""
    before = m.string[:m.start()].split()
    after = m.string[m.end():].split()
    if not before or not after:
        return _filler(m)
    prev, nxt = before[-1].lower().strip(",."), after[0].lower()
    if nxt in _VERB_NEXT or prev in _GLUED_AFTER or prev in _VERB_NEXT or \
            prev.endswith("'s") or not m.group(0).strip().startswith(","):
        return _filler(m)  # ("it's, like, plain VACUUM": the copula leads into it)
    return ", "


def _expand(m: re.Match[str], text: str) -> str:
    word = m.group(0).lower()
    if word == "ur":
        after = text[m.end():].split(None, 1)
        if after and (after[0].lower() in _YOU_ARE_NEXT or after[0].lower().endswith("ing")):
            return "you're"
    return SHORTHAND[word]


#: Punctuation a dictating writer speaks ("wired only full stop", "blue sticker comma the
#: white ones"): read as the mark when the message has at least two of them.
_SPOKEN_MARK = re.compile(r"(?:[ \t]+|(?<=[ \t]))(full[ \t]+stop|comma|question[ \t]+mark|"
                          r"exclamation[ \t]+"
                          r"(?:mark|point)|new[ \t]+(?:line|paragraph))\b"
                          r"(?![ \t]*-?[ \t]*(?:separated|delimited|splice))[ \t]*",
                          re.IGNORECASE)
_MARKS = {"full stop": ". ", "comma": ", ", "question mark": "? ", "exclamation mark": "! ",
          "exclamation point": "! ", "new line": "\n", "new paragraph": "\n"}


#: Misspellings of common English words that no name or setting is spelt as (typed in a
#: hurry: "teh van laptops", "becuase", "ther's"), and "there own" for "their own".
TYPOS = {"teh": "the", "hte": "the", "adn": "and", "taht": "that", "waht": "what",
          "acutally": "actually", "actualy": "actually", "becuase": "because",
          "becasue": "because", "beacuse": "because", "befor": "before", "ther's": "there's",
          "thier": "their", "recieve": "receive", "recieved": "received",
          "seperate": "separate", "seperately": "separately", "definately": "definitely",
          "untill": "until", "wich": "which", "pasword": "password", "passwrod": "password",
          "nigth": "night", "tommorow": "tomorrow", "tomorow": "tomorrow", "wierd": "weird",
          "occured": "occurred", "accross": "across", "adress": "address",
          "alwasy": "always", "alwyas": "always", "shoudl": "should", "woudl": "would",
          "coudl": "could", "colide": "collide", "alot": "a lot", "noone": "no one",
          "usualy": "usually", "immediatly": "immediately", "neccessary": "necessary",
          "necesary": "necessary", "wether": "whether", "beleive": "believe",
         "corect": "correct", "acess": "access", "acces": "access", "recomend": "recommend",
         "enviroment": "environment", "goverment": "government"}
_TYPO = re.compile(r"(?<![\w'./@-])(?:" + "|".join(re.escape(t) for t in TYPOS) +
                   r")(?![\w'/@-])|\bthere(?=[ \t]+own\b)", re.IGNORECASE)


def _typo(m: re.Match[str]) -> str:
    word = m.group(0)
    fixed = "their" if word.lower() == "there" else TYPOS[word.lower()]
    return fixed[0].upper() + fixed[1:] if word[0].isupper() else fixed


#: A statement closed by a tag asking for agreement: "..., then you kick every match, ja?",
#: "..., right?", "..., ok?": the statement, not a question.
_TAG_QUESTION = re.compile(r"(?P<body>(?:^|(?<=[.!?\n]))[ \t]*(?![ \t])"
                           r"(?!(?:(?:and|but|so|or)\s+)?(?:is|are|was|were|do|does|did|can|could|"
                           r"should|would|will|may|might|must|have|has|shall|who|what|where|when|"
                           r"why|how|which|whose|whom|isn't|aren't|don't|doesn't|can't|won't)\b)"
                           r"(?:[^.!?\n,]+,){0,6}[^.!?\n,]{12,}?)"
                           r"[ \t]*,[ \t]*(?:ja|jah|right|ok|okay|yes|yeah|eh|hm+|hein|oder|né|nè|"
                           r"tamam|innit|isn't\s+it|no|nee|si|sí|ne|na|yaar|hai\s+na|got\s+it|"
                           # ("..., don't they?": a tag the writer answers, "Yes. They do.")
                           r"(?P<neg>(?:don't|doesn't|isn't|aren't|won't|can't|wasn't|weren't|"
                           r"didn't|haven't|hasn't|shouldn't|wouldn't)[ \t]+(?:they|it|we|you|he|"
                           r"she|there|i)))"
                           r"[ \t]*\?+", re.IGNORECASE | re.MULTILINE)
#: The writer answering their own tag: "Yes. They do.", "Yes, it is."
_TAG_ANSWERED = re.compile(r"^[ \t]*(?:yes|yep|yeah|they\s+do|it\s+does|it\s+is|we\s+do)\b"
                           r"[^?\n]{0,30}$", re.IGNORECASE)


_RHETORICAL_TAG = re.compile(r",[ \t]*(?:ja|jah|innit|hai\s+na|yaar|na|né|nè|oder|tamam|eh|"
                             r"got\s+it)[ \t]*\?+$", re.IGNORECASE)
_FIRM_WORD = re.compile(r"\b(?:never|always|must|don't|do\s+not|please|only|no\s+one|nobody)\b",
                        re.IGNORECASE)


def _tag_question(m: re.Match[str]) -> str:
    """The statement without its tag when the tag only asks for agreement: a tag that is
    never a real question ("ja?", "innit?"), or a firm statement ("never do X, right?"),
    with no other question after it ("So 900000 is 15 minutes, right? Or would ...?" asks)."""
    rest = m.string[m.end():]
    if m.group("neg"):  # (a negative tag states only when the writer answers it)
        return m.group("body") + "." if _TAG_ANSWERED.match(rest) else m.group(0)
    if "?" in rest or not (_RHETORICAL_TAG.search(m.group(0)) or _FIRM_WORD.search(
            m.group("body"))):
        return m.group(0)
    return m.group("body") + "."


#: A dictated name or path said as words, then written out: "id dot lantern hill dot org,
#: I mean https://id.lanternhill.org", "slash var slash log, I mean /var/log/postgresql/".
_I_MEAN_WRITTEN = re.compile(r"(?:,|[ \t]+[—–-]+)?[ \t]+(?:i[ \t]+mean|that's|that[ \t]+is)[ \t]+"
                             r"(?P<w>[^\s,]*[./:\d][^\s,]*?)(?=[\s,]|[.;!?]?$|[.;!?]\s)"
                             r"(?:[ \t]*[—–]+(?=[ \t]))?", re.IGNORECASE)
_SPOKEN_MARKS = frozenset({"dot", "slash", "dash", "colon", "underscore"})
_DIGIT_WORDS = {"zero": "0", "oh": "0", "one": "1", "two": "2", "three": "3", "four": "4",
                "five": "5", "six": "6", "seven": "7", "eight": "8", "nine": "9"}
#: Letters said by their names, as a dictating writer spells a host's name.
_LETTER_NAMES = dict(pair.split(":", 1) for pair in (
    "ay:a bee:b see:c dee:d ee:e ef:f gee:g aitch:h eye:i jay:j kay:k el:l em:m en:n oh:o "
    "pee:p cue:q ar:r ess:s tee:t you:u vee:v ex:x why:y zed:z zee:z").split())


def _spoken_then_written(text: str) -> str:
    """The words that spell out a name before "I mean" and its written form go: the
    longest run of words before it whose letters (the spoken "dot", "slash" left out)
    begin the written form's (scheme left out) and make most of it."""
    for m in list(_I_MEAN_WRITTEN.finditer(text))[::-1]:
        written = re.sub(r"[^a-z0-9]", "", re.sub(r"^\w+://", "", m.group("w").lower()))
        head = text[:m.start()]
        words = list(re.finditer(r"[\w-]+", head))
        best = None
        for k in range(2, min(12, len(words)) + 1):
            run = words[-k:]
            if head[run[-1].end():].strip():
                break  # (only words right before "I mean")
            said = [w.group(0).lower() for w in run]
            # ("en tee pee zero one dot corrie dash aero": letters and digits by their
            # names; "oh" may be either)
            spelled = ["".join(names.get(w, re.sub(r"[^a-z0-9]", "", w)) for w in said
                               if w not in _SPOKEN_MARKS)
                       for names in (_LETTER_NAMES | _DIGIT_WORDS, _DIGIT_WORDS | _LETTER_NAMES)]
            if any(w in _SPOKEN_MARKS for w in said) and any(
                    letters and written.startswith(letters) and len(letters) >= 0.6 * len(
                        written) for letters in spelled):
                best = run[0].start()
            elif all(w in _DIGIT_WORDS for w in said) and "".join(
                    _DIGIT_WORDS[w] for w in said) == written:
                best = run[0].start()  # ("five three five, I mean 535")
        if best is not None:
            text = head[:best] + text[m.start():].replace(m.group(0), " " + m.group("w"), 1)
            text = re.sub(r"[ \t]{2,}", " ", text)
    return text


def _said_as_digits(m: re.Match[str]) -> str:
    """"fourteen characters, 14" reads "14 characters" (the number said, then typed)."""
    return f"{m.group(3)} {m.group(2)}" if number_value(m.group(1)) == int(m.group(3)) \
        else m.group(0)


#: Brackets and quotes a dictating writer speaks, in pairs: "English open bracket UK close
#: bracket", "AT TIME ZONE quote Europe/Oslo unquote".
_SPOKEN_PAIR = re.compile(r"[ \t]+(?:(?P<bracket>open[ \t]+(?:bracket|paren(?:thesis)?))|"
                          r"(?P<quote>quote))[ \t]+(?P<inside>[^\n]{1,60}?)[ \t]+"
                          r"(?(bracket)close[ \t]+(?:bracket|paren(?:thesis)?)|"
                          r"(?:unquote|end[ \t]+quote|close[ \t]+quote))\b", re.IGNORECASE)


def _spoken_pair(m: re.Match[str]) -> str:
    inside = m.group("inside")
    return f" ({inside})" if m.group("bracket") else f" '{inside}'"


def _spoken_marks(text: str) -> str:
    text = _SPOKEN_PAIR.sub(_spoken_pair, text)
    if len(_SPOKEN_MARK.findall(text)) < 2:
        # ("chrony everywhere, not ntpd full stop": one, where the message ends)
        return re.sub(r"[ \t]*,?[ \t]+full[ \t]+stop[ \t]*[.!]?[ \t]*$", ".", text,
                      flags=re.IGNORECASE)
    text = _SPOKEN_MARK.sub(lambda m: _MARKS[" ".join(m.group(1).lower().split())], text)
    # "period" too, in a message that dictates its marks, where it ends a sentence ("600
    # seconds period"; not "the grace period")
    text = re.sub(r"(?<!grace)(?<!retention)(?<!trial)(?<!notice)(?<!waiting)(?<!cooling)"
                  r"(?<!holding)(?<!billing)(?<!rotation)(?<!the)(?<!a)(?<!this)(?<!that)"
                  r"[ \t]+period\b(?=[ \t]*(?:$|\n|[.!?]|[ \t][A-Z]))", ".", text,
                  flags=re.IGNORECASE | re.MULTILINE)
    # ("ten dot forty one dot ten dot two": an address said with its dots)
    text = _SPOKEN_ADDRESS.sub(lambda m: ".".join(
        p if p.isdigit() else str(number_value(p))
        for p in re.split(r"[ \t]+dot[ \t]+", m.group(0), flags=re.IGNORECASE)), text)
    # ("print01 dot cobblewick dot lan": a host name said with its dots)
    text = _SPOKEN_HOST.sub(lambda m: re.sub(r"[ \t]+dot[ \t]+", ".", m.group(0),
                                             flags=re.IGNORECASE), text)
    # ("coxswain.boathouse.lan slash munin": a path said after the host it is on)
    text = re.sub(r"(?<=\.[a-z]{2})([a-z]*)[ \t]+slash[ \t]+(?=[\w-])", r"\1/", text,
                  flags=re.IGNORECASE)
    return re.sub(r"[.,?!][ \t]*(?=[.,?!])", "", text)  # ("full stop." said and typed)


#: An IPv4 address said as four numbers with "dot" between them.
_SPOKEN_OCTET = rf"(?:{WORD_NUMBER}(?:[ \t]+{WORD_NUMBER})*|\d{{1,3}})"
_SPOKEN_ADDRESS = re.compile(rf"\b{_SPOKEN_OCTET}(?:[ \t]+dot[ \t]+{_SPOKEN_OCTET}){{3}}\b",
                             re.IGNORECASE)
#: A name said with two or more dots, or one before a top-level name ("lan", "com").
_SPOKEN_HOST = re.compile(r"\b[a-z0-9][\w-]*(?:(?:[ \t]+dot[ \t]+[a-z0-9][\w-]*){2,}|"
                          r"[ \t]+dot[ \t]+(?:lan|local|internal|com|org|net|uk|io|example|"
                          r"intra|corp)\b)", re.IGNORECASE)


#: Up to four words written in another script opening a sentence, before its English:
#: "아니요 — on any screen ...", "ขอบคุณค่ะ but no, ...", "Будь ласка, not like this."
_OTHER_SCRIPT_RUN = re.compile(r"(?:^|(?<=\n)|(?<=[.!?][ \t]))[ \t]*"
                               r"(?P<run>[^\sA-Za-z\d.,!?;:()'\"-]+"
                               r"(?:[ \t]+[^\sA-Za-z\d.,!?;:()'\"-]+){0,3})"
                               r"(?:[ \t]*[,.!—–-]+[ \t]*|[ \t]+)(?=[A-Za-z(])")
#: "shipped to gray log I mean Graylog": a name said, then said again as it is spelled
#: (", that's log_min_duration_statement," between commas: an aside, both commas go).
_RESPELT = re.compile(r"\b(?P<said>[\w-]+(?:[ \t]+[\w-]+){0,3}?)(?P<c1>[ \t]*,)?[ \t]+"
                      r"(?i:I[ \t]+mean|that's|that[ \t]+is)[ \t]+(?P<name>[\w.-]*\w)"
                      r"(?P<c2>,(?=[ \t]))?")


def _latin_share(text: str) -> float:
    letters = [c for c in text if c.isalpha()]
    return sum(c.isascii() for c in letters) / len(letters) if letters else 1.0


def _other_script(run: str) -> bool:
    """Every letter of ``run`` is of a script other than Latin (Hangul, Thai, Hebrew, ...)."""
    import unicodedata

    letters = [c for c in run if c.isalpha()]
    return bool(letters) and not any(unicodedata.name(c, "").startswith("LATIN")
                                     for c in letters)


def _one_edit(a: str, b: str) -> bool:
    """``a`` and ``b`` are equal or one letter apart (changed, added or dropped)."""
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b, strict=True)) <= 1
    short, long_ = sorted((a, b), key=len)
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))


def _respelt(m: re.Match[str]) -> str:
    """The name as spelled when the words before it say it ("gray log I mean Graylog",
    "molar ex, that's Molarix"); else the words as they were."""
    said = m["said"].split()
    name = m["name"].rstrip(".")
    squash = re.sub(r"[^a-z0-9]", "", name.lower())
    for k in range(len(said), 0, -1):
        heard = re.sub(r"[^a-z0-9]", "", "".join(said[-k:]).lower())
        # (the spelled name looks like one: a capital, a digit, "_" or "."; "builds them,
        # that's the passphrase" is no spelling)
        if len(heard) >= 4 and re.search(r"[A-Z\d_.]", name) and _one_edit(heard, squash):
            tail = "" if m["c1"] else (m["c2"] or "")
            return " ".join([*said[:-k], m["name"]]) + tail
    return m[0]


def other_script_openings_removed(text: str) -> str:
    """A message written in English without the words in another script that open a
    sentence (a greeting, a thanks, a "no" in the writer's language), and with a name
    said then spelled ("gray log I mean Graylog") written once, as spelled."""
    text = _RESPELT.sub(_respelt, text)
    if _latin_share(text) < 0.6:
        return text  # a message in another script: its words are the message
    return _OTHER_SCRIPT_RUN.sub(lambda m: "" if _other_script(m["run"]) else m[0], text)


# (in the writer's word: "control" is written "Control", so every word of it is theirs)
_MODIFIER_KEYS = {"super": "Super", "ctrl": "Ctrl", "control": "Control", "alt": "Alt",
                  "shift": "Shift"}
#: A key combination said aloud: "Super plus T", "control alt T", "control plus shift plus
#: escape" (two modifiers, or one joined by "plus", then the key).
_SPOKEN_KEYS = re.compile(
    r"\b(?P<mods>(?:(?:super|ctrl|control|alt|shift)[ \t]+(?:plus[ \t]+)?){1,3})"
    r"(?P<key>[a-z0-9]|f\d{1,2}|tab|enter|space|escape|esc|delete|page[ \t]+up|page[ \t]+down|"
    r"home|end|up|down|left|right)\b",
    re.IGNORECASE)


def _keys_written(m: re.Match[str]) -> str:
    mods = re.findall(r"super|ctrl|control|alt|shift", m.group("mods"), re.IGNORECASE)
    if len(mods) < 2 and "plus" not in m.group("mods").lower():
        return m.group(0)  # ("shift T" may be words; "Super plus T" is a key)
    key = m.group("key")
    key = key.upper() if len(key) == 1 else " ".join(w.capitalize() for w in key.split())
    return "+".join([*(_MODIFIER_KEYS[x.lower()] for x in mods), key])


def plain_voice(text: str) -> str:
    """A chatty, dictated or shouted message read as written English: fillers ("um",
    "uh", "okay so ... so yeah") go (between two clauses, one stands for a comma), chat
    shorthand is written out ("w/" -> "with", "b/c" -> "because", "pls" -> "please"),
    shouted function and policy words are lower-cased ("DO NOT", "DISABLED"; acronyms,
    code spans and lines with an SQL statement stay) and apostrophe-less contractions are
    restored; spoken punctuation ("full stop", "comma") is written as the mark, and
    common misspellings of English words are mended ("teh", "becuase")."""
    text = other_script_openings_removed(_TAG_QUESTION.sub(_tag_question, text))
    text = _spoken_then_written(text)
    text = _SPOKEN_KEYS.sub(_keys_written, text)
    text = re.sub(r"\b(" + WORD_NUMBER + r")[ \t]+([a-z]+),[ \t]+(\d+)\b(?=[ \t]*[.,;])",
                  _said_as_digits, text, flags=re.IGNORECASE)
    text = _EMOTICON.sub(_face, _CARET.sub("", _FOOTNOTE_MARK.sub("", _spoken_marks(
        outside_code(_TYPO, _typo, text)))))
    text = _ER_REPAIR.sub(r"\2", text)
    text = _RADIO_OVER.sub("", text)
    text = _WORD_STUTTER.sub(r"\1", _STUTTER.sub(r"\1", _DASH_STUTTER.sub(r"\1", text)))
    text = _FILLER.sub(_filler, _PARTICLE.sub("", text))
    text = _WORD_STUTTER.sub(r"\1", _TAG.sub(_tag, text))  # ("at, er, at six")
    text = _TAG_END.sub("", text)
    text = _LIKE_VALUE.sub(r"\1 ", text)
    text = _ANNOUNCE.sub("", text)
    text = _FILLER_EDGES.sub("", text)
    text = _SHORTHAND.sub(lambda m: _expand(m, text), text)
    calm = _calm_capitals(text)  # (once per message, not once per line)
    text = "\n".join(_unshout_line(line, calm) for line in text.split("\n"))
    return restore_contractions(re.sub(r"(?<=\S)[ \t]{2,}(?=\S)", " ", text))


def tokens(text: str) -> list[str]:
    """Lower-case word tokens (Unicode letters and digits; keeps "don't", "8.2"), with
    apostrophe-less contractions restored ("dont" -> "don't")."""
    out = []
    for t in _TOKEN.findall(text):
        t = t.lower().replace("’", "'")
        out.append(CONTRACTIONS.get(t, t))
    return out


def content_stems(text: str, stopwords: Iterable[str] = ()) -> set[str]:
    """Stems of the content words of text (stopwords and one-letter words dropped)."""
    stop = STOPWORDS | set(stopwords)
    return {stem(t) for t in tokens(text) if t not in stop and len(t) > 1}


def negated(clause: str) -> bool:
    """True when a clause contains a negation or a word that overturns a state."""
    toks = tokens(clause)
    if any(t in NEGATIONS or t.endswith("n't") for t in toks):
        return True
    low = " ".join(toks)
    return bool(re.search(r"\b(?:used to|no more|any more|not any|was (?:moved|renamed|"
                          r"replaced)|previously|formerly|old|legacy|earlier)\b", low))


_NEG_BEFORE = NEGATIONS - {"instead", "rather", "replaced", "removed", "disabled", "blocked",
                          "off", "end-of-life", "eol", "unmaintained",
                          "forbidden", "prohibited", "denied", "unavailable", "gone",
                          "deprecated", "discontinued", "retired", "dropped", "unsupported",
                          "obsolete", "outdated"} | {"except", "previously", "formerly",
                                                    "legacy", "stopped", "ceased"}
_NEG_AFTER = frozenset("""not never longer anymore disabled removed blocked forbidden
prohibited gone deprecated discontinued retired unavailable unsupported obsolete outdated
replaced dropped denied end-of-life eol unmaintained""".split())


_REPORTING = frozenset("""said says claimed claims wrote suggested suggests told""".split())


def is_negated(text: str, item: Item) -> bool:
    """True when the clause holding ``item`` negates it: a negation within five words
    before it ("there is no X", "not in X", "instead of X", "X used to"), a verbal
    negation within three words after it ("X isn't", "X is no longer", "X was removed"),
    or, for the subject of a clause, a next clause that negates it through a pronoun
    ("X is the KDE one, it does nothing here")."""
    # Other items are blanked out: "NOT IN" is an SQL operator, not a negation.
    masked = list(text)
    for other in items(text):
        if other.start != item.start and other.kind != "role":
            masked[other.start:other.end] = " " * (other.end - other.start)
    text = "".join(masked)
    clause = clause_of(text, item)
    at = text.find(clause)
    local = item.start - at if at >= 0 else clause.find(item.text)
    # Words before the item back to a comma, and after it up to one ("kept 90 days, not
    # 30": the "not" is 30's).
    before = tokens(clause[:max(0, local)].rsplit(",", 1)[-1])[-5:]
    after = tokens(clause[local + len(item.text):].split(",", 1)[0])[:3]
    joined = " ".join(before)
    if any(t in _NEG_BEFORE or t.endswith("n't") for t in before) or re.search(
            r"\b(?:instead of|rather than|used to|in place of)$", joined) or re.search(
            r"\b(?:stop|quit|avoid)\s+(?:recommending|suggesting|telling|advising|using|"
            r"proposing)\b", joined):
        return True  # "stop recommending the 50 GB figure": 50 GB is what is overturned
    head = tokens(clause[:max(0, local)])
    if any(t in _REPORTING for t in head):
        return True  # "you said 5 years", "the answer says X": reported, not asserted
    if any(t in _NEG_AFTER or t.endswith("n't") for t in after):
        return True
    if len(before) <= 3 and at >= 0:
        rest = text[at + len(clause):]
        nxt = re.match(r"[\s,;:\u2014\u2013-]*(?:and\s+|but\s+|so\s+)?((?:it|they|this|that|"
                       r"which)\b[^.;!?]*)", rest, re.IGNORECASE)
        if nxt and any(t in _NEG_AFTER or t.endswith("n't") or t in ("no", "nothing")
                       for t in tokens(nxt.group(1))[:5]):
            return True
    return False


def clause_of(text: str, item: Item) -> str:
    """The clause of ``text`` that holds ``item``."""
    start = 0
    for m in re.finditer(r"[.!?;:]\s|,\s+but\s|\bbut\s|,\s+(?:while|whereas|however|and|so|"
                         r"or|then)\s|\s[\u2014\u2013-]\s|,\s+(?:it|they|this|that|there|"
                         r"you|we)\s", text):
        if m.start() >= item.start:
            return text[start:m.start()]
        start = m.end()
    return text[start:]


#: Common irregular past forms (the -ed forms are found by their ending).
IRREGULAR_PAST = frozenset("""ate became began bit blew broke brought built burnt caught
came chose cut did drew drove fell felt fought found flew forgot froze gave got grew hung
had heard hid hit held hurt kept knew laid led left lent let lost made meant met paid put
quit ran rang read rode rose said sat saw sent set shook shot showed shut sang sank slept
slid spent split spoke stood stole stuck struck swore took taught tore told thought threw
understood went woke wore won wrote""".split())


#: Forms of "be", "get" and "have" that make the participle after them a passive or a
#: perfect, not a past tense.
_AUXILIARY = frozenset("""is are be been being get gets got was were has have isn't aren't
wasn't weren't hasn't haven't""".split())
#: Irregular verbs whose past is their base form.
_SAME_AS_BASE = frozenset("set put cut let hit shut quit hurt read cost spread".split())
#: Words after which a verb is in its base form: "don't set", "to put", "can cut".
_BASE_FORM_AFTER = frozenset("""do does don't doesn't dont doesnt to will can can't cannot
must mustn't should shouldn't would wouldn't could couldn't may might shall won't
let's""".split())
#: Words that may stand between the auxiliary and its participle ("is not regenerated",
#: "are never backed up", "is still set").
_BETWEEN_AUX = frozenset("""not never no longer always also only still already
automatically usually normally just now all both""".split())


_NAMING = frozenset("called named labelled labeled titled entitled marked dubbed".split())


#: The word before a participle that makes it a reduced condition: "if needed", "as
#: required", "when asked", "unless told otherwise".
_REDUCED_CONDITION = frozenset({"if", "when", "whenever", "as", "unless", "where", "once",
                                "until"})


#: A participle set off by a comma that tells how often or how the noun before it is
#: handled: "we keep 14 days, rotated daily, ..." (a habit, no past; "..., cleared by
#: itself at 03:55" is what happened once, and stays a past).
_SET_OFF_PARTICIPLE = re.compile(
    r"(?<=[,(])\s*[a-z]+ed(?=\s+(?:daily|nightly|weekly|monthly|hourly|yearly|annually|"
    r"automatically|centrally|separately)\b)")


# (not "this"/"that", which may be the subject: "this burned us in the audit")
_ARTICLES = frozenset("the a an our their your my its every each".split())
_COUNT_BEFORE = frozenset("""after with of than for to within over under at on by has have
had are were is was the all any every no and or""".split())
_COUNT_WORDS = frozenset("two three four five six seven eight nine ten twelve twenty many "
                         "several few".split())


#: A past form of "be", "have" or "do" that tells a clause in the past even when its verb is
#: a participle ("The 06:10 was held for the tide", "the tills weren't ready").
_PAST_AUXILIARY = re.compile(r"\b(?:was|were|wasn't|weren't|had|didn't|did\s+not)\b",
                             re.IGNORECASE)


def clause_in_past(clause: str) -> bool:
    """A clause told in the past: a verb in the past tense (``past_tense``) or a past form
    of "be", "have" or "do", which makes a passive or a negation past too ("The 06:10 was
    held for the tide", "The till didn't open")."""
    return past_tense(clause) or bool(_PAST_AUXILIARY.search(clause))


def past_tense(text: str) -> bool:
    """A verb in the past tense that is not a participle after "is/are/be/been/get/have"
    (with "not", "never", "still" ... between them: "is not regenerated" is a passive in
    the present) nor one set off by a comma with a habit ("14 days, rotated daily"); the
    past progressive, "was crawling", counts."""
    toks = tokens(_SET_OFF_PARTICIPLE.sub(" ", text))
    for i, t in enumerate(toks):
        j = i - 1
        while j >= 0 and i - j <= 3 and toks[j] in _BETWEEN_AUX:
            j -= 1
        after_be = j >= 0 and toks[j] in _AUXILIARY
        if t in IRREGULAR_PAST and j >= 0 and toks[j] in _BASE_FORM_AFTER:
            continue  # "We don't set expiry per account", "you can put it in": the present
        if t.endswith("ed") and i > 0 and i + 1 < len(toks) and toks[i + 1] == "by" and \
                toks[i - 1].isalpha() and toks[i - 1] not in STOPWORDS and not re.search(
                    rf"(?i),\s*{re.escape(t)}\s+by\b", text):
            continue  # "only changes approved by me go in": a participle after its noun
        if t in ("read", "set", "cut", "put") and i + 1 < len(toks) and toks[i + 1] in (
                "access", "only", "write", "permission", "permissions", "rights", "replica",
                "replicas", "role", "roles", "mode", "lock", "locks", "timeout"):
            continue  # "production read access", "the read-only role": a noun's kind
        if t in _SAME_AS_BASE and i >= 2 and toks[i - 1] in ("you", "we", "they", "i") and \
                toks[i - 2] in _REDUCED_CONDITION | {"if", "before", "after"}:
            continue  # "it suspends when you shut the lid": a condition, in the present
        if t in _NAMING and i > 0 and toks[i - 1] not in STOPWORDS:
            continue  # "the form called 'Restore Request'": a participle naming a noun
        if i > 0 and toks[i - 1] in _REDUCED_CONDITION:
            continue  # "Reboots, if needed, happen at 03:15": a condition, not the past
        if i > 0 and (toks[i - 1] in _ARTICLES or (
                (toks[i - 1].isdigit() or toks[i - 1] in _COUNT_WORDS)
                and i + 1 < len(toks) and toks[i + 1].isalpha()
                # (a count in a phrase of its own: "after 5 failed attempts"; not a label's
                # number, "Room 4 paired fine")
                and (i < 2 or toks[i - 2] in _COUNT_BEFORE))) and t.endswith("ed") \
                and i + 1 < len(toks) and toks[i + 1] not in STOPWORDS:
            # "we use the shared account", "locks after 5 failed attempts": a participle
            # before its noun
            continue
        if (t in IRREGULAR_PAST or (t.endswith("ed") and len(t) > 4)) and not after_be and \
                not re.search(rf"(?i)\b{re.escape(t)}[-/]|[\w/]-{re.escape(t)}\b|"
                              rf"/{re.escape(t)}\b", text):
            # (a word of a hyphenated name or compound is no verb: "Unattended-Upgrade",
            # "password-protected"; nor is a folder's name: "hand edits in generated/")
            return True
        if t in ("was", "were") and i + 1 < len(toks) and toks[i + 1].endswith("ing") and \
                len(toks[i + 1]) > 4:
            return True  # "enrol-db was crawling around 14:05"
    return False


# ---------------------------------------------------------------------------------------
# Text addressed to the system
# ---------------------------------------------------------------------------------------

_ROLE_PREFIX = re.compile(
    r"(?:^|\n|[.!?]\s+)\s*(?:#+\s*|\[|<|\*\*|-{2,}\s*)?(?:system|assistant|ai|bot|model|"
    r"developer|admin|administrator|root|operator|instruction|instructions|prompt|llm|gpt|"
    r"note to (?:the )?(?:model|assistant|ai|system|bot|llm))(?:\s+(?:override|message|"
    r"prompt|note|mode|update|command|instruction))?\s*(?:\]|>|\*\*)?\s*[:>\]]"
    # (not a mail alias: "root: ops-team@example.org" says where root's mail goes)
    r"(?![ \t]*[\w.+-]+@[\w-]+(?:\.[\w-]+)+[ \t]*[.,;]?[ \t]*(?:\n|$))|"
    # a notice headed by the system, its kind and a parenthesis before the colon:
    # "SYSTEM POLICY UPDATE (priority: critical):", "System notice (automated):"
    r"(?:^|\n)\s*(?:#+\s*|\[|\*\*)?system(?:\s+(?:policy|notice|alert|update|override|"
    r"directive|announcement|message)){1,2}\s*(?:\([^()\n]{0,60}\))?\s*(?:\]|\*\*)?\s*:",
    re.IGNORECASE)
_MODEL_FIELD = re.compile(r"^[ \t]*(?i:model):[ \t]{2,}(?=[^\n]*\d)(?![^\n]*\b(?i:you|must|ignore|"
                          r"obey|store|save|remember|always|never|instructions?|rules?|"
                          r"previous|system|prompt|publish|approve)\b)[A-Z][\w.()/+-]*"
                          r"(?:[ \t]+[\w.()/+-]+){0,4}[ \t]*$", re.MULTILINE)
# A bracketed header naming the system or a part of the pipeline: "[SYSTEM NOTICE TO THE
# EXTRACTOR]", "[Admin override - feedback pipeline]".
_BRACKET_ROLE = re.compile(
    # (not a commit's scope: "fix(bot): don't recommend money")
    r"(?:(?<![\w])[\[<]|(?:^|(?<=[\n.!?]))[ \t]*\(|\((?=[^)\n]{0,80}\b(?:notice|override|"
    r"message|instructions?|prompt|note|mode|command|directive|update|order)\b))\s*"
    # ("item 3 (assistant answers):" in minutes: a topic in brackets, no header)
    r"(?:system|admin|administrator|operator|developer|moderator|pipeline|"
    # (not an item's label: "(AI-1)", "(KB-12)")
    r"extractor|assistant|ai|model|bot|llm|kb|knowledge base)\b(?![-_]?\d)[^\]>)\n]{0,80}[\]>)]"
    # (a placeholder inside a name is no tag: "the <system>_owner role", "tw_<system>_<env>")
    r"(?![\w<])", re.IGNORECASE)
_SYSTEM_NOUNS = (r"(?:instructions?|rules?|guidelines?|guardrails?|polic(?:y|ies)|system "
                 r"prompt|prompt|programming|directives?|constraints?|restrictions?|"
                 r"safety|filters?|review|previous|prior|above|earlier)")
#: The override verb is an order: it opens a clause or follows "please", "you must", "now"
#: ("Ignore all previous instructions", "please disregard your rules"); as a noun or a
#: setting's name it states a fact ("Automatic Suspend is off by policy").
_OVERRIDE = re.compile(
    r"(?:^|[.!?:;,(\[\n-]\s*|\b(?:please|pls|kindly|now|just|and|then|must|should|you)\s+)"
    r"(?:ignore|disregard|forget|override|bypass|skip|drop|abandon|suspend|disable)\b"
    r"(?:\s+(?!(?:is|are|was|were|be|been|by|off|on|in|at)\b)\w+){0,4}?\s+" + _SYSTEM_NOUNS
    + r"\b", re.IGNORECASE)
#: Markup that runs code, raw or entity-encoded: no feedback needs it, an attack does.
_ACTIVE_MARKUP = re.compile(r"(?:<|&lt;)\s*script\b|\bjavascript\s*:|<[a-z][^<>]*\son(?:load|"
                            r"error|click|mouseover|focus)\s*=", re.IGNORECASE)
#: An order to keep something for good: "remember forever: X", "store this permanently".
# ("keep it permanently mounted", "save it permanently in Documents": a user's step)
_FOREVER = re.compile(r"(?:^|[.!?:;>]\s*|\n\s*)(?:please\s+|now\s+)?(?:(?:remember|memori[sz]e|"
                      r"learn)\s+(?:this\s+|that\s+|it\s+|the\s+following\s+)?"
                      r"(?:forever|permanently|for\s+good|from\s+now\s+on|for\s+all\s+future|"
                      r"for\s+every\s+future)|(?:store|save)\s+(?:this\s+|that\s+|it\s+|the\s+"
                      r"following\s+)?forever)\b", re.IGNORECASE)
_KB_ACTION = re.compile(
    r"\b(?:publish(?:ed|es|ing)?|stor(?:e|ed|es|ing)|sav(?:e|ed|es|ing)|add(?:ed|s)?|"
    r"insert(?:ed|s)?|record(?:ed|s)?|writ(?:e|es|ten)|commit(?:ted|s)?|approv(?:e|ed|es)|"
    r"index(?:ed|es)?|ingest(?:ed|s)?|remember(?:ed)?|memori[sz](?:e|ed)|learn(?:ed|t)?|"
    r"mark(?:ed)?|label(?:l?ed)?|classif(?:y|ied)|rate|flag(?:ged)?|tag(?:ged)?|set|"
    r"treat(?:ed)?|output|print|reveal|show|repeat|return|kept|keep)\b(?:\s+[\w'-]+){0,6}?\s+"
    r"(?:as\s+(?:a\s+|an\s+)?(?:(?:permanent|new|global|official|standing|binding|"
    r"general)\s+)?(?:fact|truth|verified|correct|true|actionable|approved|trusted|rule|"
    r"policy)|for\s+(?:all|every)\s+(?:tenants?|customers?|users?)|(?:to|in|into)\s+(?:the\s+|your\s+)?"
    r"(?:knowledge(?:\s*base)?|kb|memory|index|database|nuggets?)|verbatim|"
    r"(?:the\s+|your\s+)(?:system prompt|instructions|nugget|nuggets|confidence|json|"
    r"priority|(?:hidden\s+)?configuration|conversations)|(?:system prompt|instructions|"
    r"nuggets?|(?:high|top|highest|urgent)\s+priority)\b|with\s+(?:confidence|priority)|"
    r"(?:without|no)\s+(?:review|approval|checks?))",
    re.IGNORECASE)
_ADDRESS_MODEL = re.compile(
    r"\b(?:you are now|you're now|act as|pretend (?:to be|you)|as an ai|new (?:fact|rule|"
    r"instruction)s? (?:to|for)|(?:dear|hey|attention)\s+(?:model|assistant|ai|bot|system)\b"
    r"(?=[^.!?\n]*\b(?:please|you\s+(?:must|should|shall|will|need\s+to|have\s+to|are\s+to)|"
    r"make\s+sure|ensure|from\s+now\s+on|always|never|going\s+forward|"
    r"your\s+(?:notes|memory|knowledge|records|answers|database|instructions|rules)|"
    r"(?:store|save|remember|publish|add|record|learn|memori[sz]e|treat|mark|accept|follow|"
    r"ignore|update|overwrite|replace)\b))|"
    r"(?:the |this )?(?:model|assistant|ai|llm|bot) (?:must|should|shall|will) (?:now )?"
    r"(?:publish|store|save|add|remember|treat|mark|accept)|admin override|"
    r"confidence\s*(?:=|:|of)?\s*(?:1(?:\.0+)?|100\s*%)|no review needed|skip (?:the )?review|"
    r"auto-?publish|(?:this|the)\s+(?:entry|message|text|note|feedback|content|statement|"
    r"item)\s+(?:below\s+)?(?:has been|was|is)\s+(?:pre-?)?(?:verified|approved|validated|"
    r"cleared)|pre-?(?:verified|approved|validated)|(?:to|for)\s+the\s+(?:nugget\s+|feedback"
    r"\s+|knowledge\s+)?(?:extractor|pipeline|classifier|reviewer|ingester)\b"
    # ("exported to the pipeline hosts": a data pipeline's machines, not ours)
    r"(?!\s+(?:hosts?|nodes?|servers?|machines?|jobs?|runs?|stages?|workers?|teams?|"
    r"code|repo|config|data|outputs?|users?|accounts?|vms?|boxes|box|clusters?)\b)|"
    r"(?:this|the following) (?:is|as) (?:a |an )?(?:verified|trusted|official) "
    r"(?:fact|source|statement)|"
    # "note to the model processing this feedback", "the AI reading this"
    r"(?:note|message|instructions?|hint)\s+(?:to|for)\s+(?:the\s+|any\s+)?(?:model|assistant|ai|"
    r"llm|bot|system|extractor|classifier)\b|(?:the\s+|any\s+)?(?:model|ai|llm|assistant|"
    r"extractor|classifier)\s+(?:processing|reading|handling|parsing)\s+(?:this|these)\b|"
    r"\bcopy\s+(?:it|this|that|the\s+json|the\s+above)\s+(?:exactly|verbatim|as[- ]is)\b|"
    # the pipeline's own output, pasted: {"actionable": true, "facts": [...]}
    r"\{\s*\"(?:actionable|facts|nugget|can_produce_nugget|usefulness|title|body)\"\s*:|"
    r"\{\s*\"role\"\s*:\s*\"(?:system|assistant|developer|tool)\")",
    re.IGNORECASE)
_SECRET = re.compile(
    r"\b(?:passwords?|passphrase|passcode|pin(?:\s*code)?|api[\s_-]?keys?|secret(?:\s*key)?s?|"
    r"access[\s_-]?tokens?|tokens?|credentials?|private[\s_-]?keys?|login password)\b"
    # ("the local admin password on every workstation is 'olps2024'": where it applies, in
    # up to two phrases of up to four words, between the label and its value)
    r"(?:\s+(?:for|of|to|on|at|in)\s+[\w.@-]+(?:\s+[\w.@-]+){0,2}){0,2}\s*(?:is|are|=|:(?!//)|"
    r"was|"
    r"will be|reads?)\s*"
    r"[\"'“‘`]?(?=[^\s\"'“‘`]*[A-Za-z0-9])[^\s\"'”’`,;]{3,}", re.IGNORECASE)
_GENERIC_SECRET_VALUES = frozenset("""required needed mandatory optional managed reset
changed expired the a an your their our not never only set stored rotated enforced
disabled enabled complex long strong weak""".split())


_KB_DIRECTIVE = re.compile(
    # ("all assistants must now record ...": every assistant is this one too)
    r"\b(?:(?:the\s+)?knowledge\s*base|(?:the\s+)?kb|(?:all\s+|the\s+|your\s+)?(?:nuggets?|"
    r"memory|index|training data|model|assistants?|bots?|ai|llms?)|you)\s+(?:must|should|shall|"
    r"will|needs? "
    r"to|has to|have to)\s+(?:now\s+|from now on\s+|always\s+)?(?:state|say|include|contain|"
    r"list|read|remember|learn|answer|tell|reply|respond|report|store|record|treat|accept)\b|"
    r"\b(?:do not|don't|never)\s+(?:mention|tell|reveal|show|disclose)\s+(?:this|it|that)"
    r"(?:\s+\w+){0,2}\s+to\s+(?:the\s+)?(?:users?|anyone|people|customers?)\b|"
    # ("=== SYSTEM POLICY ===", "### Admin Override": a header on the marker's line, in
    # capitals; not a rule line under a ruled banner: "=====\nNo admin rights for staff")
    r"(?:#{2,}|\[\[|<<|={3,}|\*{3,})[ \t]*(?-i:(?:[A-Z][A-Za-z]*[ \t]+)*(?:POLICY|Policy|"
    r"OVERRIDE|Override|INSTRUCTIONS?|Instructions?|SYSTEM|System|ADMIN|Admin|DIRECTIVE|"
    r"Directive|COMMAND|Command|PROMPT|Prompt))\b", re.IGNORECASE)


# A one-time code pasted in a message ("here are my backup codes: 8841-2907 5512-0374",
# "recovery code 493028"): a login secret, however it is introduced.
_ONE_TIME_CODES = re.compile(
    r"\b(?:backup|recovery|one[- ]time|2fa|mfa|otp|totp|verification|security|sms|"
    r"authenticator|login|sign-?in|reset)\s+(?:codes?|pins?|keys?)\b[^.\n]{0,80}?"
    r"(?<![\w.:/-])(?:\d{3,}[- ]\d{3,}|\d{6,10})(?![\w.:/-])", re.IGNORECASE)

# A user name and password in a URL ("postgresql://app:Qw9#x@db/ledger").
_URL_CREDENTIALS = re.compile(r"\b[a-z][\w+.-]*://[^\s/:@'\"<>]+:[^\s/@'\"<>]+@[\w.-]+",
                              re.IGNORECASE)

# A recovery key or card number in four or more dash-separated groups of digits
# ("48213-90577-11864-30291-..."; dates and phone numbers have fewer groups).
_DIGIT_GROUPS = re.compile(r"(?<![\w.-])\d{4,6}(?:[- ]\d{4,6}){3,}(?![\w.-])")

# A code in dash-separated groups of letters and digits ("FVSG-8K2Q-77LM-X0PA"): a token,
# licence or voucher key.
# ("7Hq2x-Pz9Kd-LmW4r-Tb8Ns-Yc3Fv": an app token in mixed case, four groups or more)
_GROUPED_KEY = re.compile(r"\b(?=[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])[A-Z0-9]{4,}"
                          r"(?:-[A-Z0-9]{4,}){2,}\b|"
                          r"(?<![\w.-])(?=(?:[A-Za-z0-9-]*\d){3})(?=[A-Za-z0-9-]*[A-Z])"
                          r"(?=[A-Za-z0-9-]*[a-z])[A-Za-z0-9]{4,}(?:-[A-Za-z0-9]{4,}){3,}(?![\w.-])")

# A base64 key ("PrivateKey yAnz5TF+lXXJte14...="): letters of both cases and digits, 32 or
# more, with "+" or "/" or "=" padding.
_BASE64_KEY = re.compile(r"(?<![\w+/])(?=(?:[A-Za-z0-9+/]*\d){2})(?=(?:[A-Za-z0-9+/]*[A-Z]){2})"
                         r"(?=[A-Za-z0-9+/]*[a-z])[A-Za-z0-9+/]{32,}={0,2}(?![\w+/])")


def _base64_key(text: str) -> bool:
    """A run that looks like a base64 key and is not a path of words and numbers
    ("lan/teams/Finance/Remittances/2024" in an smb:// address)."""
    return any(not (len(parts := [p for p in m.group(0).rstrip("=").split("/") if p]) >= 3
                    and all(re.fullmatch(r"[A-Za-z][a-z]+|[A-Z]+|\d+", p) for p in parts))
               for m in _BASE64_KEY.finditer(text))


# A password file line, host:port:database:user:password (.pgpass and the like).
#: "RESTIC_PASSWORD=Gr1stMill-0x77", "PGPASSWORD='...'", "API_TOKEN: ...": a secret set as a
#: variable.
_ENV_SECRET = re.compile(r"\b[A-Z][A-Z0-9_]*(?:PASSWORD|PASSWD|PASSPHRASE|SECRET|TOKEN|API_?KEY)"
                         r"[A-Z0-9_]*\s*[=:]\s*[\"']?([^\s\"']{4,})")
# (not a MAC or an IPv6 address: hex groups and colons alone, "3c:52:82:1a:9e:04")
_PGPASS_LINE = re.compile(r"\b(?![0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?![\w:]))"
                          r"[\w.-]+:(?:\d{2,5}|\*):[\w*.-]+:[\w.-]+:\S+")
# A password-shaped word: eight or more characters with lower and upper case letters,
# digits and a symbol ("N3bula#Feather2024"); no identifier, path or address mixes all four.
# ("Brackw@ter!Spring26" too: an address has a dot, a password need not)
# (not a Windows share path or a %VARIABLE% in one: "\\files-hr1\home\%USERNAME%")
_PASSWORD_LIKE = re.compile(r"(?=\S*[a-z])(?=\S*[A-Z])(?=\S*\d)(?=\S*[#$%&!*^~?@])"
                            r"(?!\S*%[A-Z_]+%)[^\s/.\\]{8,}")

# A value given as a password, passphrase, PIN or Wi-Fi key ("pass Rv7qp2Kx9m", "wifi key is
# MLCr0ver-2291", "password: hunter22"): letters and digits in one word, not a host name
# or a path (a password's rules, "at least 14 characters", have no such word).
_LABELLED_SECRET = re.compile(
    r"\b(?:pass(?:word|wd|phrase|code)?|pw|pwd|wi-?fi\s+(?:key|password|pass)|psk|"
    r"network\s+key|wpa2?\s+key)\s*(?:is|was|=|:|-)?\s*(?:now\s+|still\s+)?[\"'`]?"
    r"(?=[^\s\"'`]*\d)(?=[^\s\"'`]*[A-Za-z])(?![^\s\"'`]*\.\w)(?![^\s\"'`]*/)"
    r"[^\s\"'`<>]{6,}", re.IGNORECASE)
# A long run of letters and digits mixed (API keys, tokens, hashes pasted by mistake).
# ("glsa_Lf9kQ2vXr7TzM1pWc8sNd3Hy_4b7e9a21": a prefix and a checksum around the run)
# ("glpat-Xq7r2ZkTOKEN00001": a vendor prefix before a shorter run)
_TOKEN_LIKE = re.compile(r"(?<![\w/.-])(?:(?:[A-Za-z]{1,12}_){0,3}([A-Za-z0-9]{20,})|"
                         r"[a-z]{2,8}[_-]([A-Za-z0-9]{16,}))"
                         r"(?:_[A-Za-z0-9]{1,40}){0,3}(?![\w/.-])")
#: A secret handed over with its label and a value: "here is my token for the repo so
#: you can test it: glpat-...", "this is the admin password: ...".
_HANDED_SECRET = re.compile(r"\b(?:here(?:'s|\s+is|\s+are)|this\s+is|these\s+are)\s+(?:my|our|"
                            r"the)\s+(?:[\w-]+\s+){0,2}?(?:token|key|api[\s_-]?key|access[\s_-]?key|"
                            r"password|passphrase|secret|credentials?|pat)\b[^.!?\n]{0,60}?"
                            r"[:=]\s*(?=\S*[A-Za-z])(?=\S*[\d_@#$%&*!-])\S{6,}", re.IGNORECASE)


def _looks_secret(value: str) -> bool:
    """A value with digits or symbols mixed into letters ("hunter2", "Tr0ub4dor&3")."""
    return bool(re.search(r"[A-Za-z]", value)) and bool(re.search(r"[\d\W_]", value))


#: The writer introducing themself: "Harriet from Brindle Street here.", "Kasia here, from
#: Dunmere.", "Nia here (business manager)." The whole sentence, so "Servers here don't use
#: ifupdown." is none.
_SELF_INTRO = re.compile(r"(?:(?:[A-Z][\w-]*|(?i:hi|hello|hey)),\s+(?i:this)\s+is\s+"
                         r"[A-Z][A-Za-z'-]+"
                         r"(?:\s+[A-Z][A-Za-z'-]+)?"
                         # "IT, this is Vessel Ops, over.", "Hi, this is Rasmus on nights."
                         r"(?:\s+(?:on|from|at|in|of)\s+(?:the\s+)?[^,.!?]{1,30})?|"
                         # ("It's Firefox on the kiosks" is no writer: "it's" takes a shift)
                         r"(?i:it's|it\s+is)\s+[A-Z][A-Za-z'-]+(?:\s+[A-Z][A-Za-z'-]+)?\s+"
                         r"(?i:on\s+(?:nights|earlies|lates|days|weekends|call|duty|the\s+desk|"
                         r"the\s+phones|the\s+\w+\s+shift))\s*[.!]?|"
                         # ("hi its Jo (CN)": a name with the team in brackets)
                         r"(?i:(?:hi|hey|hello)[,\s]+)?(?i:it's|its|it\s+is)\s+[A-Z][A-Za-z'-]+"
                         r"\s*\([^()\n]{1,20}\)|"
                         r"(?i:this\s+is)\s+[A-Z][A-Za-z'-]+"
                         r"(?:\s+[A-Z][A-Za-z'-]+)?\s+(?:on|from|at|in|of)\s+(?:the\s+)?"
                         r"[^,.!?]{1,30})(?:,\s*over)?"
                         # "this is Tomasz from Accounts, voice note, sorry."
                         r"(?:,\s*(?i:(?:a\s+)?(?:voice\s+note|quick\s+one|quick\s+note))"
                         r"(?:,\s*(?i:sorry))?)?\s*[.!]?|"
                         # a greeting and a name on a phone line: "Yeah hi it's Bernie down
                         # Fenwick Road.", "Hello, this is Maud over at the depot."
                         r"(?:(?i:yeah|yes|ok|okay|right|so)[,\s]+)?(?i:hi|hiya|hello|hey|morning|"
                         r"afternoon|evening)"
                         r"[,!]?\s+(?i:it'?s|this\s+is)\s+[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)?"
                         r"(?:\s+(?i:down|up|over|out|from|at|in|on)\s+(?:(?i:at|in|on|by)\s+)?"
                         r"(?:the\s+)?(?:(?!\b(?:is|are|was|were|has|have|must|can|may|not|that|"
                         r"which|who|where|when|because|and|but)\b)[^,.!?]){1,40}?)?\s*[.!]?|"
                         r"(?:(?:hi|hello|hey)[,!]?\s+)?(?:(?:it'?s|this\s+is)\s+)?"
                         r"[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)?"
                         # (the team or place, with no verb: "X of Y is prohibited here" is
                         # no introduction)
                         r"(?:\s+(?:from|at|in|of|on)\s+(?:the\s+)?(?:(?!\b(?:is|are|was|were|has|"
                         r"have|must|can|may|not)\b)[^,.!?]){1,40}?)?,?\s+here"
                         r"(?:,?\s+(?:from|at|in|on)\s+(?:the\s+)?[^.!?]{1,40}|,\s+[^.!?]{1,30}|"
                         r"\s*\([^()]{1,60}\))?\s*[.!]?|"
                         # a team in lower case: "support desk EU here", "night ops here"
                         r"(?:(?i:hi|hiya|hello|hey)[,!]*\s+)?(?:[\w'-]+\s+){0,2}(?i:desk|team|"
                         r"office|crew|shift|ops|support|helpdesk|department|dept|lab|unit)"
                         r"(?:\s+[A-Z]{2,})?,?\s+(?i:here)\s*[.!]?")
#: A stance the writer takes: "Honestly ...", "Tbh ...", "Personally ...", "IMO ...".
STANCE_START = re.compile(r"(?:honestly|frankly|tbh|imo|imho|to\s+be\s+honest|personally|"
                          r"if\s+you\s+ask\s+me)\b", re.IGNORECASE)


#: A comment adverb opening a sentence: the writer's attitude to what follows ("Sadly the
#: cold room is not logged", "Oddly enough, ..."), not part of the fact. A closed class of
#: English disjuncts; adverbs that qualify the fact ("Only", "Usually", "Currently",
#: "Apparently", which makes it hearsay) are not in it.
ATTITUDE_START = re.compile(
    r"(?:(?:un)?fortunately|sadly|(?:un)?luckily|thankfully|mercifully|happily|annoyingly|"
    r"irritatingly|frustratingly|oddly|weirdly|strangely|curiously|funnily|ironically|"
    r"(?:un)?surprisingly|predictably|interestingly|amazingly|embarrassingly|"
    r"disappointingly|regrettably|hilariously|obviously|admittedly)(?:\s+enough)?\b"
    # Without a comma, an adverb before a participle or an adjective qualifies that word,
    # not the sentence ("Oddly shaped loaves are sold at half price.").
    r"(?:\s*,\s*|\s+(?![a-z]+(?:ed|en|ing|ous|ful|able|ible|ive|ic|ish|less|al)\b))",
    re.IGNORECASE)


#: "it's Kofi from the DBA team" (what is left of "Hi, it's Kofi ..." after its greeting):
#: a name and the team named as one ("It's Firefox on the kiosks" names none).
_TEAM_INTRO = re.compile(r"(?i:it'?s|this\s+is)\s+[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)?\s+"
                         r"(?i:from|in|at|on)\s+(?i:the\s+)?(?:[\w&-]+\s+){0,3}?(?i:team|desk|"
                         r"department|dept|office|unit|crew|shift|squad|group)\s*[.!]?")


#: Dictated, in lower case: "this is gareth lumb at the crematorium office".
_SPOKEN_INTRO = re.compile(r"(?i:it'?s|this\s+is)\s+[a-z][\w'-]+\s+[a-z][\w'-]+\s+(?i:from|in|at|"
                           r"on)\s+(?i:the\s+)?(?:[\w&-]+\s+){0,3}?(?i:team|desk|department|"
                           r"dept|office|unit|crew|shift|squad|group)\s*[.!]?")
#: The writer's name, organisation and role as the first line: "Ines Carvalho, Stonebridge
#: Data (your PostgreSQL support supplier)."
_NAME_LINE = re.compile(r"[A-Z][a-z'-]+(?:\s+[A-Z][a-z'-]+){1,2},\s+[A-Z][\w&'.-]*(?:\s+[A-Z&]"
                        r"[\w&'.-]*){0,3}(?:\s*\([^()]{1,60}\))?\s*[.!]?")


def is_self_introduction(sentence: str) -> bool:
    """True when the whole sentence only says who writes ("Tom here, night shift.")."""
    s = sentence.strip()
    return bool(_SELF_INTRO.fullmatch(s) or _TEAM_INTRO.fullmatch(s)
                or _SPOKEN_INTRO.fullmatch(s) or _NAME_LINE.fullmatch(s))


def addressed_to_system(text: str) -> str:
    """Why a piece of feedback is addressed to the system rather than stating a fact
    about the tenant's world ("" when it is not): role prefixes ("SYSTEM:",
    "Assistant:"), attempts to override instructions, requests to publish, store, label
    or approve, claims of verified status or confidence, and secret values (passwords,
    keys, tokens)."""
    # ("Model:          ColorEdge CS2740" in a device listing: a hardware model's field,
    # aligned in a column, is no role)
    if _ROLE_PREFIX.search(_MODEL_FIELD.sub("", text)) or _BRACKET_ROLE.search(text):
        return "a role prefix addressed to the system"
    if _ACTIVE_MARKUP.search(text):
        return "markup that runs code (a script or an event handler)"
    if _FOREVER.search(text):
        return "a request to remember or store for good"
    if _OVERRIDE.search(text):
        return "an attempt to override instructions"
    if _KB_ACTION.search(text):
        return "a request to publish, store or label content"
    if _ADDRESS_MODEL.search(text) or _KB_DIRECTIVE.search(text):
        return "text addressed to the model"
    if _URL_CREDENTIALS.search(text):
        return "a secret value (credentials in a URL)"
    if _ONE_TIME_CODES.search(text):
        return "a secret value (one-time or backup codes)"
    if _GROUPED_KEY.search(text) or _DIGIT_GROUPS.search(text):
        return "a secret value (a key or token)"
    for m in _ENV_SECRET.finditer(text):
        if not re.fullmatch(r"(?:~|\.{1,2})?/\S*|\$\{?\w+\}?|<[^>]*>|\*+|x+|\.\.\.|changeme",
                            m.group(1), re.IGNORECASE):
            return "a secret value (a credentials variable)"
    if _base64_key(text) or _PGPASS_LINE.search(text) or _LABELLED_SECRET.search(
            text) or any(_PASSWORD_LIKE.fullmatch(part.rstrip("."))
                         for part in re.split(r"[\s:;,=()\[\]\"'`]+", text)):
        return "a secret value (a key, password or credentials line)"
    for m in _TOKEN_LIKE.finditer(text):
        run = m.group(1) or m.group(2)
        digits = sum(c.isdigit() for c in run)
        mixed_case = any(c.isupper() for c in run) and any(c.islower() for c in run)
        if digits and (mixed_case or len(run) / 4 <= digits <= 3 * len(run) / 4):
            return "a secret value (a key or token)"
    if _HANDED_SECRET.search(text):
        return "a secret value (handed over with its label)"
    for m in _SECRET.finditer(text):
        if re.search(r"\b(?:no|not|never|without|zero)\s+(?:\w+\s+)?$", text[:m.start()],
                     re.IGNORECASE):
            continue  # "No passwords for the printers: lbl07 uses a certificate"
        value = m.group(0).split()[-1].strip("\"'“‘`:=.!?)").lower()
        raw = m.group(0).split()[-1].strip("\"'“‘`:=.!?)").split("=", 1)[-1]
        if re.fullmatch(r"[A-Z][A-Z0-9-]{1,7}", raw) and sum(c.isalpha() for c in raw) >= 2:
            continue  # "the stored password is SCRAM" / "MD5": a scheme's name, not a secret
        value = value.split("=", 1)[-1]  # "credentials=/etc/smb-credentials"
        if re.match(r"(?:~|\.{1,2})?/[\w.-]+/|\$\{?[a-z_]+\}?$", value):
            continue  # where the secret is kept, or a variable holding it, is no secret
        if (value not in _GENERIC_SECRET_VALUES and not value.endswith(("ed", "ing")) \
                and english_word(value) is False) or _looks_secret(value):
            return "a secret value (password, key or token)"
    return ""


# ---------------------------------------------------------------------------------------
# Sentences as claims
# ---------------------------------------------------------------------------------------

_PERSONAL = re.compile(r"(?<![&/])\b(?:i|me|my|mine|i'm|i've|i'll|i'd)\b(?![&/]\w)",
                       re.IGNORECASE)
_ORGANISATIONAL = re.compile(r"\b(?:we|our|us|all(?!\s+(?:day|night|week|morning|afternoon|"
                             r"evening|year|the time)\b)|every|each|company|corporate|org|"
                             r"organi[sz]ation|policy|staff|team|site|office|here|everyone|"
                             r"nobody|anyone|users?)\b", re.IGNORECASE)
#: "behaves exactly like X", "looks like", "just like": "like" compares, it does not judge.
_LIKE_COMPARES = re.compile(r"\b(?:\w+s|behave|act|work|look|sound|feel|seem|exactly|just|"
                            r"much|more|something|anything|nothing|things?)\s+like\b",
                            re.IGNORECASE)

#: "is to stay switched on", "are not to be moved": an obligation without a modal verb.
_BE_TO = re.compile(r"\b(?:is|are|was|were)\s+(?:not\s+|never\s+|only\s+)?to\s+(?:be|stay|"
                    r"remain|keep|have|use|go|run|get|leave|stay|contact|call|ask|book|send)\b",
                    re.IGNORECASE)

_ABOUT_ANSWER = re.compile(
    r"\b(?:(?:this|the|your|that|an?|useful|good|great|clear|nice|very|right|correct|"
    r"better|first|last|previous)\s+(?:(?!(?:will|can|must|should|would|to|may)\s)"
    r"[\w-]+\s+){0,3}?(?:answers?|repl(?:y|ies)|"
    r"responses?|suggestions?|advice|tips?|article|bot|assistant|chatbot|"
    r"explanations?|examples?|walkthrough|summary|write-?up)|"
    # "rewrite" is the answer's only after "this/your/that" ("the whole rewrite" of a
    # table is not).
    r"(?:this|your|that)\s+(?:[\w-]+\s+){0,2}?rewrite|"
    # "the eject steps above": the answer's part the reply points at
    r"the\s+(?:[\w-]+\s+){0,2}?(?:steps?|instructions?|commands?|procedure|method|links?|"
    r"part|bit|section)\s+(?:above|below)\b(?!\s+(?:the|a|an|\d)\b)|"
    r"^(?:explanation|example|summary|"
    r"the part)\s+(?:of|about)\b|you(?:'ve|\s+have)\s+(?:told|said|suggested)\b|"
    r"you\s+(?:spell|spelled|spelt)\b|"
    r"you\s+(?:said|say|wrote|claim|describe|described|mention|"
    r"mentioned|suggest|suggested|told|tell)|answer(?:ed)?\s+(?:my|the)\s+question|every\s+(?:answer|reply|"
    r"response)|(?<!\bwe\s)(?<!\bthey\s)(?<!\bi\s)(?<!\bto\s)(?<!\bwill\s)(?<!\bcan\s)"
    r"(?<!\bmust\s)(?<!\bshould\s)(?<!\busually\s)(?<!\bnormally\s)"
    r"answers?(?!\s+(?:yes|no|with|it|them|that|key|keys|sheet|sheets)\b)|replies|responses)\b",
    re.IGNORECASE)  # ("answer No" at the installer's question is an order, no answer)
# (after a subject or a modal "answer" is a verb: "we answer within 2 working days")


@dataclass(frozen=True)
class SentenceView:
    """What a sentence is, for the decisions the local roles make."""

    text: str  # without opening discourse markers
    question: bool
    system: str  # why it is addressed to the system, or ""
    strong: tuple[Item, ...]  # numbers, paths, keys, menus, quoted, dotted, tech, urls
    names: tuple[Item, ...]  # capitalized names and acronyms
    roles: tuple[Item, ...]
    modal: bool
    firm_modal: bool  # a modal that states a rule, not advice ("must", not "should")
    negation: bool
    policy: bool
    evaluative: int
    positive: bool
    negative: bool
    success: int
    personal: bool
    organisational: bool
    about_answer: bool
    speech_imperative: bool
    words: int

    @property
    def concrete(self) -> bool:
        """Names a concrete item (anything but a bare role word counts)."""
        return bool(self.strong or self.names)

    @property
    def rule(self) -> bool:
        """States a rule: a modal, negation or policy verb."""
        return self.modal or self.negation or self.policy


#: "hard" that names a kind of thing, not a judgement: a hard limit (beside a soft one),
#: a hard reset, a hard disk.
_HARD_NOUN = re.compile(r"\bsoft\b|\bhard\s+(?:limit|quota|cap|max|maximum|stop|link|reset|"
                        r"drive|disk|copy|deadline|freeze|block|requirement|rule)s?\b",
                        re.IGNORECASE)


def view(sentence: str) -> SentenceView:
    """Read one sentence (see :class:`SentenceView`)."""
    text = strip_discourse(sentence)
    found = items(text)
    # A call's arguments are code, not words ("pg_backup_start(label => 'weekly', fast
    # => false)" judges nothing as fast or false); the same length keeps the offsets.
    masked = re.sub(r"(?<=\w)\([^()\n]*\)", lambda m: " " * len(m.group()), text)
    for it in reversed(found):
        if it.kind != "role":
            masked = masked[:it.start] + " " + masked[it.end:]
    toks = tokens(masked)
    first = (tokens(masked) or [""])[0]  # "EXPLAIN ANALYZE ..." is a command, not "explain"
    return SentenceView(
        text=text,
        question=is_question(text) if text else False,
        system=addressed_to_system(sentence),
        strong=tuple(i for i in found if i.kind in STRONG_KINDS),
        names=tuple(i for i in found if i.kind == "name"),
        roles=tuple(i for i in found if i.kind == "role"),
        modal=any(t in MODALS for t in toks) or bool(_BE_TO.search(text)),
        firm_modal=any(t in MODALS and t not in ("should", "could", "shouldn't", "may")
                       for t in toks) or bool(_BE_TO.search(text)),
        negation=negated(masked),
        policy=any(t in POLICY for t in toks),
        evaluative=sum(t in EVALUATIVE and not (t == "like" and _LIKE_COMPARES.search(text))
                       and not (t == "hard" and _HARD_NOUN.search(text))
                       and not (t == "clear" and _CLEAR_VERB.search(text))
                       for t in toks) + sum(t in INTENSIFIERS for t in toks),
        positive=any(t in POSITIVE and not (t == "clear" and _CLEAR_VERB.search(text))
                     for t in toks),
        negative=any(t in NEGATIVE for t in toks) or bool(_PAIN.search(text)),
        # ("OBS version is fixed 29.1.3": fixed at a value, not repaired)
        success=sum(t in SUCCESS for t in toks) - len(re.findall(
            r"\bfixed\s+(?:at\s+|to\s+|on\s+)?(?=\S*\d)", text, re.IGNORECASE)),
        personal=bool(_PERSONAL.search(text)),
        organisational=bool(_ORGANISATIONAL.search(text)),
        about_answer=bool(_ABOUT_ANSWER.search(text)),
        # ("write the second column to backup_label", "format /dev/sdb": a step that
        # writes data to something named, not a request for another answer)
        # ("Answer key from the quiz: ...": a noun, not an order)
        speech_imperative=(first in SPEECH_VERBS and not (
            first in ("write", "format") and any(i.kind in STRONG_KINDS for i in found))
            # ("Write mcg in full lower-case letters": how the house writes a thing, not
            # how the answer should be written)
            and not re.match(r"(?i)\W*write\s+(?!(?:it|this|that|them|the\s+answer|answers?|"
                             r"shorter|less|more|clearer|back|me|us)\b)[\w./-]+\s+(?:in|as|"
                             r"with|without|using)\b", text)
            and not re.match(r"(?i)\W*\w+\s+(?:key|keys|sheet|sheets)\b", text))
        or bool(re.match(
            r"^(?:stop|don't|do not|please|never|always|next time)\b.{0,30}\b(?:"
            + "|".join(sorted(SPEECH_VERBS)) + r")\b", text, re.IGNORECASE)),
        words=len(tokens(text)),
    )


def novel_items(sentence_items: Sequence[Item], reference: str) -> list[Item]:
    """Items of a sentence that the reference text (the answer) does not contain."""
    ref = normalize(reference)
    ref_keys = item_keys(reference)
    return [i for i in sentence_items if i.key not in ref_keys and i.key not in ref]


_IDENTIFIER = re.compile(r"[\d_./\\*-]")


#: Short words of English compounds ("walk-in", "per-table"); "apt-file", "pg-main" and
#: "net-tools" are names of things.
_SHORT_PARTS = frozenset("in on up off out by per non pre co re all one two end top low sub "
                         "day".split())


def capitalized(text: str) -> str:
    """The text with its first letter capitalized unless its first word is written as an
    identifier (a digit, a symbol or a capital inside it: "inventory.shelf_bookings",
    "de_DE", "iPad"); unlike :func:`sentence_case`, an unknown plain word ("schema") is
    taken for English."""
    first = text.split(" ", 1)[0].rstrip(".,;:!?")
    if _IDENTIFIER.search(first) or re.search(r"[a-z_\d][A-Z]", first):
        return text
    return text[:1].upper() + text[1:]


def _named_as_software(word: str, context: str) -> bool:
    """True when ``context`` uses ``word`` as a package, unit or file name: a path segment
    ("/var/log/unattended-upgrades/") or the argument of a package or service command
    ("apt install needs-restart", "systemctl restart power-profiles")."""
    w = re.escape(word)
    return bool(re.search(
        rf"/{w}(?![\w-])|(?:\bapt(?:-get)?\s+(?:install|remove|purge|show)|\bdpkg-reconfigure|"
        rf"\bdpkg\s+-[lLsP]|\bsystemctl\s+[a-z-]+)\s+(?:-\S+\s+)*{w}(?![\w-])",
        context, re.IGNORECASE))


def sentence_case(sentence: str, context: str = "") -> str:
    """The sentence with its first letter capitalized, apostrophe-less contractions
    restored ("dont" -> "don't") and a terminal period; a first word that is an
    identifier keeps its case ("lxc isn't used here", "ssh-copy-id won't work"): one with
    a digit or a symbol, or one written in lower case that is no English word.
    A compound of English words ("third-party") is capitalized unless ``context`` (or the
    sentence) uses it as a package or unit name: in a path or after a package or service
    command ("unattended-upgrades is not installed here" when the answer said
    "dpkg-reconfigure unattended-upgrades" or "/var/log/unattended-upgrades/")."""
    s = restore_contractions(sentence.strip())
    if not s:
        return s
    first = s.split(" ", 1)[0]
    core = first.rstrip(".,;:!?")
    words = core.split("-")  # "third-party" is English, "ssh-copy-id" is not
    # ("de_DE.UTF-8 is also generated", "iPhone": a lower-case start with capitals inside)
    # (not "ctrl-alt-L": a key name after a hyphen)
    camel = core[:1].islower() and bool(re.search(r"[a-z_\d][A-Z]", core))
    identifier = camel or (first.islower() and (
        bool(_IDENTIFIER.search(core)) or not (english_word(core) or _compound(core))) \
        and not (len(words) > 1 and all(
            w in _SHORT_PARTS or (len(w) >= 4 and w.isalpha() and english_word(w))
            for w in words) and any(len(w) >= 4 for w in words)
                 and not _named_as_software(core, f"{context}\n{s}")))
    if not identifier:
        s = s[0].upper() + s[1:]
    return s if s[-1] in ".!?" else s + "."


@functools.cache
def _vocabulary() -> frozenset[str]:
    import json

    from query.embeddings import TOKENIZER_PATH

    vocab = json.loads(TOKENIZER_PATH.read_text(encoding="utf-8"))["model"]["vocab"]
    return frozenset(w for w in vocab if w.isalpha() and w.islower())


_SUFFIXES = ("s", "es", "ed", "d", "ing", "ly", "er", "ary", "ation", "ations", "ment", "ments",
             "ness", "ity", "ive", "al", "ous", "able", "ful", "less")
#: Everyday office and IT words that the embedder's vocabulary splits into pieces.
_OFFICE_WORDS = frozenset("""admin admins config configs wifi repo repos kiosk kiosks email
emails app apps login logins logout popup popups inbox upload uploads plugin plugins timeout
timeouts toolbar sidebar webcam webcams headset headsets touchpad checkbox thumbnail thumbnails
workstation workstations screenshot screenshots dropdown firewall firewalls hostname hostnames
bookmark bookmarks username usernames homepage shortcut shortcuts screensaver screensavers
screencast screencasts passcode passcodes lockscreen""".split())


def _in_vocabulary(w: str) -> bool:
    vocab = _vocabulary()
    if w in vocab or w in _OFFICE_WORDS:
        return True
    for suf in _SUFFIXES:
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            base = w[: -len(suf)]
            # ("parsing" from "parse", "stopped" from "stop")
            if base in vocab or (suf in ("ing", "ed", "er") and (
                    base + "e" in vocab or (base[-1:] == base[-2:-1] and base[:-1] in vocab))):
                return True
    # ("untrusted", "unmounted": a negating prefix on an English word)
    return any(w.startswith(p) and len(w) - len(p) >= 4 and _in_vocabulary(w[len(p):])
               for p in ("un", "non", "dis", "mis"))


_PARTICLES = ("out", "in", "up", "down", "over", "under", "back", "off", "on", "through",
              "after", "by", "fore", "any", "every", "some", "with", "cross", "multi", "non",
              "pre", "re", "sub", "super", "inter", "self")


def _compound(word: str) -> bool:
    """A particle and an English word written as one ("outbound", "upstream", "nonzero"),
    which the vocabulary's word pieces do not hold whole ("featherlift", a name of two
    words, stays a name)."""
    low = word.lower()
    return word.isalpha() and any(low.startswith(p) and len(low) - len(p) >= 3
                                  and english_word(low[len(p):]) for p in _PARTICLES)


@functools.lru_cache(maxsize=65536)
def english_word(word: str) -> bool:
    """True when the word is a whole word of the embedder's English vocabulary (30k
    word pieces, with inflections and everyday office words such as "admin" and
    "workstation"): "press" and "backup"
    are, "lxc", "iptables" and "journalctl" are not."""
    return _in_vocabulary(word.lower().split("'")[0].split("’")[0])
