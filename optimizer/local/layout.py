"""Layout that carries facts in a message: tables, configuration snippets, chat logs,
diffs, check-mark lists, value arrows and line labels.

People paste the facts they correct as a table ("| setting | rpt-ro | trk-db01 |") or as
the lines of a configuration file ("pool_mode: transaction", "[section]" then
"key = value"). Read line by line, a table row or a key alone is not a sentence; these
functions turn each into one statement built only from the cells and keys as typed, so
the sentence reader and the nugget body see "work_mem: rpt-ro = 64MB, trk-db01 = 16MB." and
"pgbouncer: pool_mode = transaction, default_pool_size = 20.".

Both work on text whose lines are the message's lines (``plain_text(...,
keep_lines=True)``); every other line is left as it is.
"""

from __future__ import annotations

import re
import textwrap

from optimizer.claims import (
    CHECK_MARKS,
    RULE_OR_NEGATION,
    STRONG_KINDS,
    clause_in_past,
    content_stems,
    english_word,
    is_question,
    items,
    past_tense,
    split_sentences,
    tokens,
)
from optimizer.lexicon import INSTRUCTION_VERBS
from optimizer.local.residue import CLOSING, SECOND_PERSON, SENDER_WORDS, strip_frame
from query.text import STOPWORDS

_ROW = re.compile(r"^\s*\|{1,2}(.*?)\|{1,2}\s*$")
_RULE_ROW = re.compile(r"^\s*\|?[\s:|+-]*-{2,}[\s:|+-]*\|?\s*$")
#: Header cells that only say "the value is in this column".
_PLAIN_HEADERS = frozenset({"value", "values", "setting value", ""})

#: "pool_mode: transaction", "max_connections = 64", "- retention_days: 14".
_PAIR = re.compile(r"^\s*(?:-\s+)?(?P<key>[a-z_][\w.\-/]*|[A-Za-z_][\w.\-/]*(?=\s*=))"
                   r"\s*(?P<sep>[:=])\s*(?P<value>\S.{0,79})$")
#: "pgbouncer:" (a YAML mapping) or "[tracking.events]" (an INI section).
_SECTION = re.compile(r"^\s*(?:(?P<yaml>[a-z_][\w.\-/]*):|\[(?P<ini>[\w.\-/: ]+)\])\s*$")


_CAPTION = re.compile(r"^(?:(?![.!?](?:\s|$))[^\d`|=])*:\s*$")


def _drop_caption(out: list[str]) -> str:
    """"From the facilities sheet:" above a table or snippet only points at it: it goes.
    Returns the scope it opened with ("On the bastion, our drop-in is:" -> "On the
    bastion, "), for the statements that replace what it pointed at ("" for none)."""
    blank = 0  # (a blank line may stand between the caption and what it points at)
    while blank < len(out) and not out[-1 - blank].strip():
        blank += 1
    last = out[-1 - blank] if blank < len(out) else ""
    if _CAPTION.match(last) and len(last.split()) <= 8:
        del out[len(out) - 1 - blank:]
        scope = re.match(r"^\s*((?:on|for|in|at)\s+[^,:]{1,40}),", last, re.IGNORECASE)
        return f"{scope.group(1)[0].upper()}{scope.group(1)[1:]}, " if scope else ""
    return ""


def _cells(line: str) -> list[str] | None:
    m = _ROW.match(line)
    if not m or ("|" not in m.group(1) and not line.strip().startswith("||")):
        return None
    return [c.strip() for c in re.split(r"\|{1,2}", m.group(1))]


#: A cell that says what its row's first cell does: "opens VetPulse", "is locked".
_PREDICATE_CELL = re.compile(r"(?!(?:yes|this|plus|less|alias|bus|gas|canvas)\b)"
                             r"(?:is|are|was|can|cannot|must|may|will|should|has|does|"
                             r"[a-z]{2,}(?<![su]s)s)\b[ \t]+\S")


def _row_sentence(header: list[str], row: list[str]) -> str:
    if len(row) == 1:
        return row[0]
    head, rest = row[0], row[1:]
    if re.match(r"\d", head) and header and re.fullmatch(r"[A-Za-z][\w -]{0,20}", header[0]) \
            and header[0].lower() not in _PLAIN_HEADERS and len(header) == len(row):
        head = f"{header[0]} {head}"  # ("VLAN | ..." over "30 newsroom | ...": VLAN 30)
    if len(rest) == 1 and _PREDICATE_CELL.match(rest[0]):
        return f"{head} {rest[0].rstrip('.')}."  # "Super+V | opens VetPulse"
    names = header[1:] if len(header) == len(row) else [""] * len(rest)
    parts = [(f"{n} = {c}" if n.lower() not in _PLAIN_HEADERS else c).strip()
             for n, c in zip(names, rest, strict=True) if c]
    return f"{head}: {', '.join(parts)}." if parts else head


#: The rule under the header of a table drawn with spaces: "-----   ----   ---".
_DASH_RULE = re.compile(r"^[ \t]*-{2,}(?:[ \t]+-{2,})+[ \t]*$")


def _aligned_cells(line: str, starts: list[int]) -> list[str] | None:
    """The cells of ``line`` cut at the column ``starts``, or None when a cut would
    split a word (the line is not a row of that table)."""
    if not line.strip() or "|" in line:
        return None
    for s in starts[1:]:
        if s < len(line) and s > 0 and not line[s - 1].isspace():
            return None
    bounds = [*starts, max(len(line), starts[-1]) + 1]
    cells = [line[bounds[k]:bounds[k + 1]].strip() for k in range(len(starts))]
    return cells if cells[0] else None


def aligned_tables_as_pipes(text: str) -> str:
    """A table drawn with spaces, each column's header underlined with dashes
    ("depot   host\n-----   ----\nHolm    dep-holm"), as a pipe table: its columns are
    where the dash runs start."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        rule = _DASH_RULE.match(lines[i + 1]) if i + 1 < len(lines) else None
        starts = [m.start() for m in re.finditer(r"-{2,}", lines[i + 1])] if rule else []
        header = _aligned_cells(lines[i], starts) if rule else None
        rows: list[list[str]] = []
        j = i + 2
        while header and j < len(lines) and (cells := _aligned_cells(lines[j], starts)):
            rows.append(cells)
            j += 1
        if header and rows:
            out.append("| " + " | ".join(header) + " |")
            out.append("|" + "---|" * len(header))
            out.extend("| " + " | ".join(r) + " |" for r in rows)
            i = j
            continue
        out.append(lines[i])
        i += 1
    return "\n".join(out)


def tables_as_statements(text: str) -> str:
    """Each data row of a pipe table as one line "first cell: header = cell, ..."
    (the header row and the rule under it go; "value" headers are left out; so does a
    caption line such as "From the facilities sheet:" above it)."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        block: list[list[str]] = []
        j = i
        while j < len(lines) and ((_RULE_ROW.match(lines[j]) and "|" in lines[j]) or
                                  _cells(lines[j]) is not None):
            cells = _cells(lines[j])
            if cells is not None and not _RULE_ROW.match(lines[j]):
                block.append(cells)
            j += 1
        if len(block) >= 2:
            scope = _drop_caption(out)
            header = block[0]
            out.extend(scope + _row_sentence(header, row) for row in block[1:])
            i = j
            continue
        out.append(lines[i])
        i += 1
    return "\n".join(out)


def config_as_statements(text: str) -> str:
    """Runs of two or more "key: value" / "key = value" lines (with the section or
    mapping line above them, if any) as one line "section: key = value, key = value."."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        j = i
        pairs: list[str] = []
        while j < len(lines) and (m := _PAIR.match(lines[j])):
            value = m.group("value").strip().rstrip(",;")
            if value.endswith(".") and not value.endswith(".."):
                value = value[:-1]  # (a line's own full stop: "passwd: files sss.")
            if m.group("sep") == ":" and (value.startswith("//") or len(value.split()) > 3):
                break  # "note: ..." prose or a URL's scheme, not a setting
            pairs.append(f"{m.group('key')} = {value}")
            j += 1
        if len(pairs) >= 2:
            section = _SECTION.match(out[-1]) if out else None
            if section:
                out.pop()
            name = (section.group("yaml") or section.group("ini")).strip() if section else ""
            scope = _drop_caption(out)
            out.append(scope + (f"{name}: " if name else "") + ", ".join(pairs) + ".")
            i = j
            continue
        out.append(lines[i])
        i += 1
    return "\n".join(out)


_PAIRS = re.compile(r"^[^\s=,:]+(?:\s[^\s=,:]+){0,2}\s=\s\S")


def states_pairs(text: str) -> bool:
    """True when text opens with "key = value" (what the two functions above write
    after the row's or section's name and its colon)."""
    return bool(_PAIRS.match(text.strip()))


_TIME = r"\d{1,2}:\d{2}(?::\d{2})?(?:\s?[AaPp][Mm])?"
#: "[09:14] priya: ...", "09:14 Priya Shah: ...", "priya [09:14]: ...", "<priya> ...",
#: "priya.shah 09:14: ...".
_CHAT_LINE = re.compile(
    r"^\s*(?:\[" + _TIME + r"\]\s*|" + _TIME + r"\s+)(?:<[^<>\n]{1,40}>|[\w.@-]+(?:\s[\w.-]+)?"
    r"(?:\s\([^()\n]{1,24}\))?:)"
    r"\s+|^\s*[\w.@-]+(?:\s[\w.-]+)?\s*\[" + _TIME + r"\]:?\s+|^\s*<[\w.@ -]{1,40}>\s+"
    # "declan.moore 19:42: ...", "Ana Lima 09:05: ...": a handle or a name, then the time
    r"|^\s*(?:[\w.@-]+|[A-Z][\w'-]+\s[A-Z][\w'-]+)\s+" + _TIME + r":\s+")


#: A comment of a pasted configuration line: "... 3142";   // in port only",
#: "--pull   # every 15 min", "SELECT now(); -- start of the transaction" (an SQL "--"
#: only after a statement's ";" or ")": in prose "--" is a dash); a whole-line comment.
_TRAILING_COMMENT = re.compile(r"(?:(?<=[\w\"'`;)\]])[ \t]*;?[ \t]+(?://|#)|"
                               r"(?<=[;)])[ \t]*;?[ \t]+--(?!-))"
                               r"[ \t]+(\S[^\n]*?)[ \t]*$",
                               re.MULTILINE)
_LINE_COMMENT = re.compile(r"^[ \t]*(?://|--(?!-))[ \t]+(?=\S)", re.MULTILINE)


def code_comments_as_text(text: str) -> str:
    """Comments of pasted configuration or code read as what they say: a trailing
    comment after a setting or a statement goes in brackets after it, a "// " or an SQL
    "-- " line loses its marker."""
    sign = re.search(r"\n[ \t]*--[ \t]+[A-Z][^\n.!?]{1,60}\s*$", text)
    if sign:  # "-- Facilities / Room Desk" closing the message: a signature, left as it is
        return code_comments_as_text(text[:sign.start()]) + text[sign.start():]
    return _LINE_COMMENT.sub("", _TRAILING_COMMENT.sub(r" (\1)", text))


#: "Aileen Ward: ..." / "aileen.ward: ...": a speaker's name (two capitalised words, or a
#: handle with a dot) before what they wrote, in a log without times.
_SPEAKER_LINE = re.compile(r"^\s*(?:(?P<who>(?-i:[A-Z][\w'-]+[ \t][A-Z][\w'-]+)|"
                           # ("BO1: ticket printer jammed", "DM: negative, ...": call signs)
                           r"(?-i:[A-Z]{1,4}\d{0,2})|"
                           r"[a-z][\w-]*\.[a-z][\w.-]*):|"
                           # "[Jun] but the upload isn't an anacron job": a name in brackets
                           r"\[(?P<bracket>(?-i:[A-Z][\w.'-]*)(?:[ \t](?-i:[A-Z][\w.'-]*))?)\]:?)"
                           r"[ \t]+(?=\S)")
#: A chat reaction under a line: ":+1: 3", ":white_check_mark: 2".
_REACTION_LINE = re.compile(r"^[ \t]*(?::[\w+-]+:[ \t]*\d*[ \t]*)+$")


def chat_as_lines(text: str) -> str:
    """A pasted chat log (two or more lines with a time stamp and a speaker, or
    "<nick>"; or three lines or more "First Last: ..." where someone speaks twice) as the
    lines people wrote, each read on its own, without who and when; a log of lines
    stamped "0810 - ..." or "19:30 - ..." loses its stamps too."""
    lines = text.splitlines()
    speakers = [m.group("who") or m.group("bracket")
                for m in map(_SPEAKER_LINE.match, lines) if m]
    if len(speakers) >= 3 and len(set(speakers)) < len(speakers) and len(set(speakers)) >= 2:
        # (the transcript's own header, "Ch 2 FOH radio, 19:12", and notes on it in
        # brackets, "(transcribed by Kofi, duty manager)", are no one's turn)
        first = next((i for i, line in enumerate(lines) if line.strip()), 0)
        if not _SPEAKER_LINE.match(lines[first]) and _verbless(lines[first]) and (
                re.search(r"\b\d{1,2}:\d{2}\b", lines[first]) or re.search(
                    _GENRE, lines[first], re.IGNORECASE)) and len(lines[first].split()) <= 8:
            lines = lines[first + 1:]
        lines = [_OVER_RADIO.sub("", _SPEAKER_LINE.sub("", line)) for line in lines
                 if not _REACTION_LINE.match(line)
                 and not re.fullmatch(r"[ \t]*\([^()\n]+\)[ \t]*", line)]
        lines = [line for line in lines if not _ACKNOWLEDGED.match(line)]
        text = "\n".join(lines)
    if sum(1 for line in lines if _LOG_STAMP.match(line)) >= 2:
        lines = [_LOG_STAMP.sub("", line) for line in lines]
        text = "\n".join(lines)
    if sum(1 for line in lines if _CHAT_LINE.match(line)) < 2:
        return text
    return "\n".join(_CHAT_LINE.sub("", _me_named(line)) for line in lines)


#: Who wrote a chat line, by first name: "[09:13] Callum (IT): ...".
_CHAT_SPEAKER = re.compile(r"^\s*(?:\[[^\]\n]{3,12}\]|\d{1,2}:\d{2})\s*(?P<who>(?-i:[A-Z][\w'-]+))"
                           r"(?:\s(?-i:[A-Z][\w'-]+))?(?:\s\([^()\n]{1,24}\))?:")
#: "ring me on ext 214": the writer as whom to contact.
_CONTACT_ME = re.compile(r"\b(?P<verb>ring|call|phone|ask|e-?mail|message|ping|contact|tell|see)"
                         r"\s+me\b", re.IGNORECASE)


def _me_named(line: str) -> str:
    """A chat line that says to contact "me" names its writer: "[09:13] Callum (IT): ...
    ring me on ext 214" reads "... ring Callum on ext 214" (the line loses who wrote it)."""
    m = _CHAT_SPEAKER.match(line)
    if m is None:
        return line
    who, rest = m.group("who"), line[m.end():]
    named = _CONTACT_ME.sub(lambda c: f"{c.group('verb')} {who}", rest)
    if named != rest:
        # ("ring me on ext 2214 and I fix it remotely": the writer goes on as "I")
        named = _AND_I.sub(lambda i: f"and {who} {_modal_said_of(i.group('modal'))}"
                           f"{i.group('verb')}" if i.group("modal") else
                           f"and {who} {_third_person(i.group('verb'))}", named)
    return line[:m.end()] + named


#: "... and I fix it", "and I'll reset it": the chat line's writer going on as "I".
_AND_I = re.compile(r"\band\s+I(?:(?P<modal>'ll|\s+will|\s+can)\s+|\s+)(?P<verb>(?-i:[a-z]+))\b")


_SAID_OF_ANOTHER = {"am": "is", "have": "has", "do": "does"}


def _modal_said_of(modal: str) -> str:
    """ "'ll" -> "will ", " can" -> "can "."""
    return ("will" if modal == "'ll" else modal.strip()) + " "


def _third_person(verb: str) -> str:
    """A verb in its base form said of one other person: "fix" -> "fixes", "try" ->
    "tries", "have" -> "has"; after "I", "am" -> "is", and a past form stays ("fixed",
    "was")."""
    if verb in _SAID_OF_ANOTHER:
        return _SAID_OF_ANOTHER[verb]
    if (verb.endswith("ed") and not verb.endswith("eed")) or verb in ("was", "were", "had",
                                                                      "did"):
        return verb
    if verb.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


#: A turn that only acknowledges the one before: "copy, calling Priya", "roger", "will do".
_ACKNOWLEDGED = re.compile(r"^[ \t]*(?:copy(?:[ \t]+that)?|roger|wilco|received|understood|"
                           r"affirm(?:ative)?|ok|okay|will[ \t]+do|standing[ \t]+by|on[ \t]+it|"
                           r"thanks|cheers|ta)\b[ \t]*(?:[,.!-][ \t]*[^.!?\n]{0,30})?[.!]?[ \t]*$",
                           re.IGNORECASE)
#: What a radio turn opens with for "no" and "yes": "negative, do not open the BOCA".
_OVER_RADIO = re.compile(r"^([ \t]*)(?:negative|affirmative)[ \t]*[,.!][ \t]*(?=\S)", re.IGNORECASE)


_LOG_STAMP = re.compile(r"^[ \t]*(?:[01]\d|2[0-3]):?[0-5]\d[ \t]*[-\u2013\u2014:][ \t]+(?=\S)")


#: "pg_partman. premake 3, ...": an identifier alone as the first sentence answers the
#: question; what follows is said of it.
_BARE_ANSWER = re.compile(r"^\s*(`[^`\n]+`|[A-Za-z][\w.-]*(?:_|\d|[a-z][.-][a-z])[\w.-]*?)"
                          r"[.!]\s+(?=\S)")


#: "Isn't it just Super+A? That jumps straight to the app grid.": a negative question
#: the writer goes on to back up is how a correction is put politely.
_NEGATIVE_QUESTION = re.compile(
    r"^(?P<lead>\s*)(?:isn't|is not|wasn't|aren't)\s+(?P<subj>it|that|this|they)\s+"
    r"(?P<rest>(?:just\s+|simply\s+|actually\s+)?[^?\n]{1,60}?)\s*\?+[ \t]+(?=[A-Z])",
    re.IGNORECASE)
#: The same asked of a named subject: "Isn't the billing run the one job that's
#: SERIALIZABLE, with 3 retries?", "Aren't the kiosks locked to the harbour image?" (the
#: subject ends where its predicate begins: an article, a particle or a participle).
_NEGATIVE_QUESTION_OF = re.compile(
    r"^(?P<lead>\s*)(?P<aux>isn't|is\s+not|aren't|are\s+not)\s+(?P<subj>(?:the|our|all|every|"
    r"each)\s+(?:[\w'-]+\s+){0,3}?[\w'-]+)\s+(?P<rest>(?:the|a|an|one|only|just|always|never|"
    r"still|already|on|in|at|under|behind|supposed|meant|\d|[a-z]+ed\b)[^?\n]{1,200}?)"
    r"\s*\?+[ \t]+(?=[A-Z])", re.IGNORECASE)
#: With a modal: "Shouldn't it be print-kl1, like every other box: role, then campus code,
#: then number?" says what it should be.
_NEGATIVE_MODAL_QUESTION = re.compile(
    r"^(?P<lead>\s*)(?P<modal>shouldn't|should\s+not|wouldn't|mustn't)\s+(?P<subj>it|that|"
    r"this|they)\s+be\s+(?P<rest>[^?\n]{1,200}?)\s*\?+[ \t]+(?=[A-Z])", re.IGNORECASE)
_UNSURE_TAIL = re.compile(r"\b(?:not sure|no idea|i think|maybe|perhaps|probably|i guess|"
                          r"might|could be|or (?:is|was) it|dunno|can't remember)\b|\?",
                          re.IGNORECASE)


#: A negative question about what holds ("Isn't the rule that X?", "Didn't we agree at
#: the March meeting that X?") that the writer answers yes at once ("Yes it is.", "Yes we
#: did:").
_ANSWERED_THAT = re.compile(
    r"(?P<lead>^|(?<=[.!?])[ \t]+|\n)[ \t]*(?:isn't|aren't|wasn't|weren't|didn't|don't|doesn't|"
    r"haven't|hasn't)\b[^?.!\n]{0,100}?\bthat[ \t]+(?P<x>[^?\n]{8,300}?)[ \t]*\?+[ \t]+"
    r"(?:yes|yep|yeah|indeed|of\s+course)\b(?:[, \t]+(?:it|we|they|he|she|that|there)\s+"
    r"(?:is|are|was|were|did|do|does|have|has)(?:n't)?\b)?[ \t]*[.:!;,\u2014\u2013-]*[ \t]*",
    re.IGNORECASE)


#: "Doesn't the licence mean we keep the logs 90 days? It does, which is why ...": a
#: negative question the writer answers yes at once, its verb one that says what a thing
#: means, needs or lets happen.
_AFFIRMED_DOES = re.compile(
    r"(?P<lead>^|(?<=[.!?])[ \t]+|\n)[ \t]*(?P<aux>doesn't|does[ \t]+not|don't|do[ \t]+not)[ \t]+"
    r"(?!(?:you|anyone|anybody|someone|somebody|people|i)\b)(?P<np>[^?\n]{2,60}?)[ \t]+"
    r"(?P<verb>mean|require|need|cover|include|allow|block|stop|forbid|ban)[ \t]+"
    r"(?P<rest>[^?\n]{6,300}?)[ \t]*\?+[ \t]+(?:(?:yes|yep|yeah|indeed|of[ \t]+course|correct|"
    r"exactly)\b[ \t,]*)?(?:(?:it|they|that|he|she)[ \t]+(?:does|do)\b|(?<=\s)(?:yes|yep|"
    r"yeah|indeed|correct|exactly)\b)[ \t]*(?P<tail>[.!,;:\u2014\u2013-]*)[ \t]*", re.IGNORECASE)


#: "Isn't Bluetooth switched off by policy on every PC? Yes, it is.", "And isn't pairing
#: anything IT's job? Also yes": a negative question about a state, answered yes at once.
_AFFIRMED_BE = re.compile(
    r"(?P<lead>^|(?<=[.!?])[ \t]+|(?<=[.!?][ \t])|\n)[ \t]*(?:(?:and|but|so)[ \t]+)?"
    r"(?P<aux>isn't|aren't|wasn't|"
    r"weren't)[ \t]+(?!(?:it|that|this|there)\b)(?P<x>[^?\n]{4,300}?)[ \t]*\?+[ \t]+"
    r"(?:(?:also|again)[ \t]+)?(?:yes|yep|yeah|indeed|of[ \t]+course|correct)\b"
    r"(?:[, \t]+(?:it|they|that|he|she)[ \t]+(?:is|are|was|were)\b)?[ \t]*"
    r"(?P<tail>[.!,;:\u2014\u2013-]*)[ \t]*",
    re.IGNORECASE)
#: Where the subject of such a question ends: before a participle, a possessive, an
#: article or an adverb of frequency ("Bluetooth | switched off", "pairing anything |
#: IT's job").
_SUBJECT_ENDS = re.compile(r"\s+(?=(?:\w+(?:ed|en)|set|kept|held|shut|run|\w+'s|a|an|the|only|"
                           r"always|never|still|part|on|off|in|at|allowed|banned|forbidden)\b)",
                           re.IGNORECASE)


def _affirmed_be(m: re.Match[str]) -> str:
    x = m.group("x")
    end = _SUBJECT_ENDS.search(x)
    if end is None or len(x[:end.start()].split()) > 4:
        return m.group(0)
    be = {"isn't": "is", "aren't": "are", "wasn't": "was", "weren't": "were"}[
        m.group("aux").lower()]
    said = f"{x[:1].upper()}{x[1:end.start()]} {be} {x[end.end():]}"
    return f"{m.group('lead')}{said}" + (", " if m.group("tail").startswith(",") else ". ")


def _affirmed_does(m: re.Match[str]) -> str:
    np, verb = m.group("np"), m.group("verb")
    if m.group("aux").lower().startswith("does"):
        verb = _third_person(verb)
    said = f"{np[:1].upper()}{np[1:]} {verb} {m.group('rest')}"
    return f"{m.group('lead')}{said}" + (", " if m.group("tail").startswith(",") else ". ")


def negative_question_as_claim(text: str) -> str:
    """A message that opens with a negative question naming a concrete value and goes
    on with a firm statement ("Isn't it just Super+A? That jumps straight to the app
    grid.") states the value: "It's just Super+A. That jumps ...". A question followed
    by doubt or another question stays a question, and so does one that names nothing
    concrete (a key, number, path, version). A negative question about what holds that
    the writer answers yes at once ("Isn't the rule that X? Yes it is.") states X."""
    def said(m: re.Match[str]) -> str:
        # ("Isn't it the case that X, and that Y? Yes, it is.": X, and Y)
        x = re.sub(r"(,?\s+(?:and|but|or))\s+that\s+(?=\w)", r"\1 ", m.group("x"))
        return f"{m.group('lead')}{x[:1].upper()}{x[1:]}. "
    text = _AFFIRMED_BE.sub(_affirmed_be, _AFFIRMED_DOES.sub(_affirmed_does,
                                                           _ANSWERED_THAT.sub(said, text)))
    m = _NEGATIVE_QUESTION.match(text) or _NEGATIVE_QUESTION_OF.match(text) or \
        _NEGATIVE_MODAL_QUESTION.match(text)
    if not m or not any(i.kind in STRONG_KINDS for i in items(m.group("rest"))):
        return text
    tail = text[m.end():]
    first = re.split(r"(?<=[.!?])\s+|\n", tail, maxsplit=1)[0]
    # (doubt in the next sentences too; a question further on is another matter: "... So
    # why would anyone run it by hand?")
    if _UNSURE_TAIL.search(first) or _UNSURE_TAIL.search(
            text[m.end():m.end() + 200].replace("?", " ")):
        return text
    subj = m.group("subj")
    purpose = re.fullmatch(r"(?:exactly|just|precisely)?\s*what\s+(?P<x>.+?)\s+(?P<be>is|are)\s+"
                           r"(?:there\s+)?for", m.group("rest"), re.IGNORECASE)
    if purpose and subj.lower() in ("that", "this", "it"):
        # "Isn't that exactly what the 'XID age' panel is for?" says what the panel is for
        x = purpose.group("x")
        return f"{m.group('lead')}{x[:1].upper()}{x[1:]} {purpose.group('be')} for exactly " \
            f"that. {tail}"
    if "modal" in m.groupdict():
        modal = "must" if m.group("modal").lower().startswith("must") else \
            m.group("modal").lower().split("n")[0].rstrip()
        return f"{m.group('lead')}{subj[:1].upper()}{subj[1:]} {modal} be {m.group('rest')}. {tail}"
    if "aux" in m.groupdict():
        verb = "are" if m.group("aux").lower().startswith("are") else "is"
        return f"{m.group('lead')}{subj[:1].upper()}{subj[1:]} {verb} {m.group('rest')}. {tail}"
    verb = "They're" if subj.lower() == "they" else subj.lower().capitalize() + "'s"
    return f"{m.group('lead')}{verb} {m.group('rest')}. {tail}"


#: "And doesn't it page the DBA on call once X passes 400 million?": a question put so that
#: it states what the thing does.
_DOES_NT_QUESTION = re.compile(
    r"(?P<lead>^|(?<=[.!?][ \t])|(?<=\n))(?:(?:and|but|so)[ \t]+)?(?P<aux>doesn't|does[ \t]+not|"
    r"don't|do[ \t]+not)[ \t]+(?P<subj>it|that|this|they|we)[ \t]+(?!you\b|know\b|think\b|"
    r"remember\b|see\b|mean\b)(?P<verb>[a-z]+)\b(?P<rest>[^?\n]*)\?", re.IGNORECASE)


def does_question_as_claim(text: str) -> str:
    """"And doesn't it page the DBA on call once mxid_age passes 400 million?" states "It
    pages the DBA on call once mxid_age passes 400 million." when the question names a
    number, a name or a path (a question about something vague stays one), and nothing
    around it says the writer is unsure."""
    def say(m: re.Match[str]) -> str:
        rest = m.group("rest")
        if not any(i.kind in STRONG_KINDS for i in items(rest)) or _UNSURE_TAIL.search(
                rest.replace("?", "")):
            return m.group(0)
        subj = m.group("subj")
        verb = m.group("verb")
        if m.group("aux").lower().startswith("does"):
            verb = _third_person(verb)
        return f"{m.group('lead')}{subj[:1].upper()}{subj[1:]} {verb}{rest}."
    return _DOES_NT_QUESTION.sub(say, text)


#: "Didn't anyone tell you that X?", "Has nobody noticed X?", "Don't you know X?": a
#: question that only asks why the reader has not heard of X, so it states X.
_REMINDER_QUESTION = re.compile(
    r"(?P<lead>^|(?<=[.!?]\s)|(?<=\n))[ \t]*"
    r"(?:(?:did|do|does|has|have|had|was|were)n't[ \t]+"
    r"(?P<who>anyone|anybody|someone|somebody|you|they|he|she|we|people|it)"
    r"|(?:did|do|does|has|have|had|was|were)[ \t]+(?:(?P<none>no[ \t]?one|nobody)"
    r"|(?:anyone|anybody|you|they)[ \t]+(?:ever[ \t]+)?not))"
    r"[ \t]+(?:(?:ever|already|even|actually|really)[ \t]+)?"
    r"(?:tell|told|mention|mentioned|notice|noticed|know|read|see|seen|hear|heard|say|said|"
    r"realise|realised|realize|realized|remember|inform|informed|warn|warned|announce|"
    r"announced|explain|explained|get[ \t]+the[ \t]+memo|been[ \t]+told|"
    # ("Didn't we agree at CAB that X?": what was agreed)
    r"agree|agreed|decide|decided|settle|settled)"
    r"(?:[ \t]+(?:you|us|them|anyone|everyone|anybody|him|her|the[ \t]+(?:bot|assistant|model|"
    r"ai|chatbot)))?"
    r"(?:[ \t]+(?:yet|already|before))?"
    r"(?:[ \t]+(?:at|in|on|during)[ \t]+(?:the[ \t]+)?[\w-]+(?:[ \t]+[\w-]+)?(?=[ \t]+that\b))?"
    r"[ \t]+(?:that[ \t]+)?"
    r"(?P<clause>(?!(?:why|how|where|when|what|which|who|whether|if|about)\b)"
    # (a dot inside a name ends nothing: "/etc/nftables.d/*.nft")
    r"(?:[^?.!\n]|\.(?=[\w*/])){12,}?)[ \t]*\?", re.IGNORECASE)


#: "Did you know that X?", "Were you aware that X?": the same, asked the other way round;
#: "And that Y?" right after one goes on stating.
_KNOW_QUESTION = re.compile(
    r"(?P<lead>^|(?<=[.!?]\s)|(?<=\n))[ \t]*(?:(?:did|do)[ \t]+(?:you|y'all|people|they)"
    r"[ \t]+(?:even[ \t]+|actually[ \t]+)?know|(?:were|are)[ \t]+(?:you|they)[ \t]+"
    r"(?:even[ \t]+)?aware)[ \t]+(?:that[ \t]+)?"
    r"(?P<clause>(?!(?:why|how|where|when|what|which|who|whether|if|about)\b)"
    r"[^?.!\n]{12,}?)[ \t]*\?", re.IGNORECASE)
_AND_THAT = re.compile(r"(?P<lead>(?<=\.)[ \t]+)and[ \t]+that[ \t]+(?P<clause>[^?.!\n]{12,}?)"
                       r"[ \t]*\?", re.IGNORECASE)


#: "Why would the looms go out to pool.ntp.org when VLAN 20 has no internet and warp runs
#: chrony for the site?": the "when" clause is what the writer states.
_WHY_WHEN = re.compile(r"(?P<lead>^|(?<=[.!?]\s)|(?<=\n))[ \t]*why[ \t]+(?:would|should|do|does|"
                       r"did|is|are)(?:n't)?[ \t]+(?:[^?.!\n]|\.(?=\w)){3,120}?[ \t]+when[ \t]+"
                       r"(?P<clause>[^?!\n]{12,}?)[ \t]*\?(?=[ \t]+[A-Z][^?\n]*[.!](?:\s|$))",
                       re.IGNORECASE)


def reminder_question_as_statement(text: str) -> str:
    """"Didn't anyone tell you that staff passwords can't be changed here?" states that
    staff passwords can't be changed here; "Hasn't anyone noticed the default printer is
    set per branch?" that the default printer is set per branch; "Did you know that X?
    And that Y?" states X and Y; "Why would X when Y?" before a statement states Y. A
    question of this shape about a wh-clause ("Didn't anyone say why ...?") asks, and
    stays."""
    def statement(m: re.Match[str]) -> str:
        clause = m.group("clause").strip()
        if len(tokens(clause)) < 3:
            return m.group(0)
        return f"{m.group('lead')}{clause[0].upper()}{clause[1:]}."
    reminded = _WHY_WHEN.sub(statement, _REMINDER_QUESTION.sub(statement, text))
    known = _KNOW_QUESTION.sub(statement, reminded)
    if known != text:  # ("... that X? And that Y?": Y is stated the same way)
        known = _AND_THAT.sub(statement, known)
    return known


#: ", so why would they use one?" after statements: the question is the writer's
#: rhetoric, the statements before it are what they say.
_RHETORICAL_TAIL = re.compile(r"(?P<head>(?:^|(?<=[.!?]\s)|(?<=\n))(?:[^.!?\n]|\.(?=\S)){30,}?),"
                              r"\s+(?P<conj>so)"
                              r"\s+(?P<wh>why|how|what|who)\s+(?P<rest>[^.!?\n]*\?)",
                              re.IGNORECASE)
_ASKING = re.compile(r"^(?:what|why|how|where|when|which|who|whom|whose|do|does|did|is|are|"
                     r"was|were|can|could|should|would|will|has|have)\b", re.IGNORECASE)


def rhetorical_tail_as_statement(text: str) -> str:
    """"The kiosks log in automatically, there's no password, so why would they use
    one?" states what comes before the question: the head becomes a sentence of its own
    and the question follows it (it is read as a question and left out). A head that
    is itself a question ("Is it X, so why ...?") stays as it was."""
    def split(m: re.Match[str]) -> str:
        head = m.group("head")
        if _ASKING.match(head.strip()) or is_question(head.strip() + ".") or \
                len(tokens(head)) < 6:
            return m.group(0)
        return f"{head}. {m.group('conj').capitalize()} {m.group('wh')} {m.group('rest')}"
    return _RHETORICAL_TAIL.sub(split, text)


_DASHED_PAIR = re.compile(r"^([ \t]*(?:[-*\u2022][ \t]+)?[\w][\w .'/&()]{0,40}?)[ \t]+"
                          r"[-\u2013\u2014][ \t]+(\S[^\n]{0,60})$")


def dashed_pairs_as_labels(text: str) -> str:
    """A run of two or more "name - value" lines ("Kingsmead - KM-MFP-1" under "the
    default per office:") as "name: value" lines, which read as labelled values."""
    lines = text.split("\n")
    pairs = [bool(_DASHED_PAIR.match(line)) for line in lines]
    out = []
    for i, line in enumerate(lines):
        run = (i > 0 and pairs[i - 1]) or (i + 1 < len(lines) and pairs[i + 1])
        out.append(_DASHED_PAIR.sub(r"\1: \2", line) if pairs[i] and run else line)
    return "\n".join(out)


_ADVICE = re.compile(r"\bif\s+i\s+were\s+you,?\s+i(?:'d|\s+would)(?:\s+(not|never)|(n't))?\s+"
                     r"([a-z]+)", re.IGNORECASE)


def advice_as_instruction(text: str) -> str:
    """Advice in the first person said as the instruction it is: "If I were you I'd use
    Super+L" -> "Use Super+L"; "If I were you I wouldn't promise X" -> "Do not promise X"."""
    def say(m: re.Match[str]) -> str:
        verb = m.group(3).lower()
        if m.group(1) or m.group(2):
            return ("Never " if (m.group(1) or "").lower() == "never" else "Do not ") + verb
        return verb[:1].upper() + verb[1:]
    return _ADVICE.sub(say, text)


def bare_answer_as_subject(text: str) -> str:
    """The message with a first sentence that is only an identifier ("pg_partman.")
    joined to the next as its label ("pg_partman: premake 3 ...")."""
    m = _BARE_ANSWER.match(text)
    return f"{m.group(1)}: {text[m.end():]}" if m else text


#: A unified diff's lines: "-old" and "+new" (and "@@"/"---"/"+++" headers).
_DIFF_LINE = re.compile(r"^\s*([-+])\s?(\S.*)$")
_DIFF_HEADER = re.compile(r"^\s*(?:@@(?:.*@@.*)?|-{3}\s+\S.*|\+{3}\s+\S.*)$")


def _diff_key(text: str) -> str:
    return re.split(r"[\s=:]+", text.strip(), maxsplit=1)[0].lower()


def diff_as_lines(text: str) -> str:
    """A pasted diff as the configuration it leaves: in a run of "-"/"+" lines where
    every "+" line replaces a "-" line with the same key ("- MaxSessions 20" then
    "+ MaxSessions 4"), the removed lines go and the added ones stay, as
    "MaxSessions = 4"; in any other run with a "-" line and two or more "+" lines (a
    runbook edited as a diff) the "-" lines go and the "+" lines stay as text. (A list
    of "-" bullets has no "+" line, or one stray "+", and is left alone.)"""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        j = i
        block: list[tuple[str, str]] = []
        while j < len(lines) and (_DIFF_HEADER.match(lines[j]) or _DIFF_LINE.match(lines[j])):
            m = _DIFF_LINE.match(lines[j])
            if m and not _DIFF_HEADER.match(lines[j]):
                block.append((m.group(1), m.group(2)))
            j += 1
        removed = {_diff_key(t) for sign, t in block if sign == "-"}
        added = [t for sign, t in block if sign == "+"]
        if added and all(_diff_key(t) in removed and not re.fullmatch(
                r"\d+[.)]?|--|#|//", _diff_key(t)) for t in added):
            # (a step number or a comment marker is no setting's key)
            scope = _drop_caption(out)
            out.extend(scope + _setting_line(t) for t in added)
            i = j
            continue
        gone = [t for sign, t in block if sign == "-"]
        paired = bool(added) and len(gone) == len(added) and \
            [sign for sign, _ in block] == ["-"] * len(gone) + ["+"] * len(added) and all(
                len(set(tokens(a)) & set(tokens(b)) - STOPWORDS) >= 2
                for a, b in zip(gone, added, strict=True))
        if (len(added) >= 2 and removed) or paired:
            # A runbook or a text changed as a diff: the removed lines are what no longer
            # holds (the answer's version), the added ones are the text now; so too a line
            # replaced by one that shares its words ("- charge money NOT NULL," then
            # "+ charge_pence integer NOT NULL,")
            out.extend(t.strip() for t in added)
            i = j
            continue
        out.append(lines[i])
        i += 1
    return "\n".join(out)


#: A command's verb after the program's name: "apt install", "systemctl enable".
_SUBCOMMANDS = frozenset("""install remove purge upgrade update enable disable start stop
restart reload mask unmask add del delete create drop set get run exec pull push clone
commit""".split())


def _setting_line(text: str) -> str:
    """ "MaxSessions 4" -> "MaxSessions = 4." ("key = value" and "key: value" stay)."""
    t = text.strip().rstrip(".;")
    if re.search(r"[=:]", t):
        return t + "."
    key, _, value = t.partition(" ")
    if value.split()[:1] and value.split()[0].lower() in _SUBCOMMANDS:
        return f"`{t}`."  # ("apt install sssd-ldap libnss-sss": a command, not a setting)
    return f"{key} = {value.strip()}." if value.strip() else t + "."


_MARKS = CHECK_MARKS
_MARK_LINE = re.compile(r"^\s*(?:[-*•]\s*)?(" + "|".join(sorted(map(re.escape, _MARKS),
                                                               key=len, reverse=True))
                        + r")\s*(\S.*)$")


def checkmarks_as_statements(text: str) -> str:
    """Two or more lines opening with a check mark or a cross ("✅ HTTP", "❌ SSH") as
    one statement per mark: "Allowed: HTTP, DNS. Not allowed: SSH." (what the marks mean,
    in words: ``claims.CHECK_MARKS``, which the evaluation reads as the feedback's words)."""
    lines = text.splitlines()
    if sum(1 for line in lines if _MARK_LINE.match(line)) < 2:
        return text
    out: list[str] = []
    groups: dict[str, list[str]] = {}
    for line in [*lines, ""]:
        m = _MARK_LINE.match(line)
        if m and not groups:
            _drop_caption(out)
        if m:
            groups.setdefault(_MARKS[m.group(1)], []).append(m.group(2).strip().rstrip(".;,"))
            continue
        if groups:
            out.extend(f"{word[0].upper()}{word[1:]}: {', '.join(things)}."
                       for word, things in groups.items())
            groups = {}
        out.append(line)
    return "\n".join(out[:-1])

#: "MTU 1400 → 1380", "timeout 30s -> 60s": a value changed to another.
_ARROW = re.compile(r"(?<![\w.])(\d[\w.:%/-]*(?:\s[a-zA-Z]{1,7}(?=\s*(?:→|->|=>|⟶)))?|"
                    r"[\w.-]*\d[\w.:%/-]*)\s*(?:→|->|=>|⟶)\s*"
                    r"(\d[\w.:%/-]*|[\w.-]*\d[\w.:%/-]*)(?![\w.])")


_ARROW_SIGN = r"(?:→|->|=>|⟶)"
#: "MaxSessions 10 → 4" as a line of its own: a setting and its new value.
_ARROW_SETTING = re.compile(r"^(\s*(?:[-*•]\s*)?)([A-Za-z][\w.-]*)\s+(\S+)\s*" + _ARROW_SIGN
                            + r"\s*(\S+)\s*$")
#: "tmux on login nodes → ✅ allowed", "keepalives → ❌ don't count": a label and what
#: holds for it (one arrow on the line; a menu path has several, or capitals both sides).
_ARROW_LABEL = re.compile(
    r"^(\s*(?:[-*•]\s*)?)([^\n→>]*?[A-Za-z][^\n→>]*?)\s*" + _ARROW_SIGN + r"\s*("
    + "|".join(sorted(map(re.escape, _MARKS), key=len, reverse=True)) + r")?\s*(.*)$")
_NEGATED = re.compile(r"\b(?:not|no|never|none|nothing|blocked|disabled|denied|forbidden|"
                      r"banned|off)\b|n't\b", re.IGNORECASE)


def _arrow_line(line: str) -> str:
    m = _ARROW_SETTING.match(line)
    if m and _ARROW.search(line) and (not english_word(m.group(2)) or not m.group(2).islower()):
        return f"{m.group(1)}{m.group(2)} = {m.group(4).rstrip('.;,')}."
    line = _ARROW.sub(r"\2", line)
    arrows = list(re.finditer(_ARROW_SIGN, line))
    if len(arrows) != 1:
        return line
    before = line[:arrows[0].start()]
    if before.count("(") > before.count(")"):
        return line  # "pg_backup_stop(wait_for_archive => true)": a call's named argument
    m = _ARROW_LABEL.match(line)
    if not m:
        return line
    lead, left, mark, right = m.group(1), m.group(2).strip(), m.group(3), m.group(4).strip()
    if not mark and not right[:1].islower():
        return line  # "go to Settings -> Privacy": a menu path
    word = _MARKS[mark] if mark else ""
    if word and right and (_NEGATED.search(right) or not word.startswith("not")):
        word = ""  # "❌ don't count as activity", "✅ QA staff only" say it in words already
    said = ", ".join(p for p in (word, right) if p)
    return f"{lead}{left}: {said}" if said else line


def arrows_as_values(text: str) -> str:
    """ "MTU 1400 → 1380" -> "MTU 1380": a value arrow leaves the value it points to (the
    one it points from is what the correction overturns); a setting's own line reads as
    "MaxSessions = 4.", and a label with an arrow to a check mark or a statement as "tmux
    on login nodes: allowed, ..." (a menu path's arrows stay)."""
    return "\n".join(_arrow_line(line) for line in text.split("\n"))


#: A label that opens a line and only frames what follows: review labels ("nit:",
#: "blocking:"), answer headings ("Short answer:", "TL;DR:"), report fields ("Root cause:",
#: "Action item:").
_LINE_LABEL = re.compile(
    r"^(\s*)(?:nit|nitpick|blocking|blocker|suggestion|question|fyi|note|nb|ps|p\.s\.|"
    r"heads[- ]up|tl;?dr|short answer|long answer|short version|long version|in short|"
    r"bottom line|summary|update|root cause|cause|action items?|fix|workaround|resolution|"
    r"impact|lesson learned|lessons learned|follow[- ]up|context|background|findings?|"
    r"decision|outcome|conclusion)\s*:\s+(?=\S)",
    re.IGNORECASE | re.MULTILINE)


#: A line labelled with a change of state: "- Removed: All Displays mapping (...)".
_STATE_LABEL = re.compile(
    r"^(?P<lead>[ \t]*(?:[-*+\u2022][ \t]+)?)(?P<state>removed|deleted|dropped|deprecated|"
    r"disabled|retired|banned|forbidden|not\s+allowed|no\s+longer\s+used|discontinued)"
    r"[ \t]*:[ \t]*(?P<what>[^(\n.;:]{2,80}?)(?P<rest>[ \t]*(?:\([^()\n]*\))?[ \t]*[.;]?)[ \t]*$",
    re.IGNORECASE | re.MULTILINE)


def state_labels_as_statements(text: str) -> str:
    """A line whose label is a change of state says it of what follows: "Removed: All
    Displays mapping (cursor lost)" reads "All Displays mapping is removed (cursor
    lost)." (the label is the fact; without it the line says the opposite)."""
    def say(m: re.Match[str]) -> str:
        rest = m.group("rest").strip().rstrip(".;")
        return (f"{m.group('lead')}{m.group('what').strip()} is {m.group('state').lower()}"
                f"{' ' + rest if rest else ''}.")
    return _STATE_LABEL.sub(say, text)


def strip_line_labels(text: str) -> str:
    """Review labels, answer headings and report field names at the start of a line
    go ("nit: use /etc/cron.d" -> "use /etc/cron.d"); what they introduce stays."""
    # (a plain word opening the line takes a capital: "Decision: fingerprint login is
    # disabled" -> "Fingerprint login is disabled"; "pg_dump", "firefox-esr" keep their case)
    text = _CAUSE_LINE.sub(lambda m: _cause_told(m, text), text)
    return _LINE_LABEL.sub(r"\1", re.sub(
        _LINE_LABEL.pattern + r"([a-z]+\b(?![-_.:/]\w))", lambda m: m.group(0)[:-len(
            m.group(2))] + _capital(m.group(2)[:1], m.group(2)[1:]) + m.group(2)[1:], text,
        flags=re.IGNORECASE | re.MULTILINE))


#: An incident's field that tells what went wrong: "Cause: the export lived in a personal
#: crontab and stopped when the account expired." (its first sentence)
_CAUSE_LINE = re.compile(r"^(?P<lead>[ \t]*)(?:root[ \t]+cause|cause|what[ \t]+happened|"
                         r"symptoms?|impact)[ \t]*:[ \t]+(?P<told>[^\n]*?(?:[.!?](?=\s|$)|$))",
                         re.IGNORECASE | re.MULTILINE)


#: A cause that is what a person did: "user tried to ...", "a clerk cancelled ...".
_SOMEONE_DID = re.compile(r"(?:an?\s+|the\s+|one\s+)?(?:user|users|someone|somebody|staff|clerk|"
                          r"customer|colleague|person|member|nurse|volunteer|student|tech|"
                          r"technician|operator|agent|driver|dev|developer)\b", re.IGNORECASE)


def _cause_told(m: re.Match[str], text: str) -> str:
    """A cause told in the past, every clause of it, with no rule in it goes: it is what
    happened once. One that names what the rest of the message does not (a script, a
    host, a default value: "... had its last step commented out in keeper_import.sh on
    util01") stays, as the only place the message says it."""
    told = m.group("told")
    clauses = [c for c in re.split(r"[,;]\s*|\s+(?:and|but|so|because|when)\s+|[.!?](?:\s|$)",
                                   told) if tokens(c)]
    rest = text[:m.start()] + text[m.end():]
    # (a number or a time in it is when or how much it went wrong; and what a person did
    # is their story, whatever it names: "user tried to copy X to a stick on ash-cons2")
    named = [i.text for i in items(told) if i.kind in STRONG_KINDS - {"number"}
             and i.text not in rest] if not _SOMEONE_DID.match(told) else []
    # (nor one the next sentence points back at: "... from the staff Wi-Fi (10.42.0.0/16).
    # That range is not in any pg_hba.conf")
    pointed = re.match(r"\s*(?:that|this|these|those|it)\b", text[m.end():], re.IGNORECASE)
    if clauses and all(clause_in_past(c) for c in clauses) and not named and not pointed and \
            not RULE_OR_NEGATION.search(told):
        return m.group("lead")
    return m.group(0)


_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(?P<text>[^#\n]*?)\s*#*\s*$")


_SHELL_COMMENT = re.compile(r"^[ \t]*#(?![#!])[ \t]?(?P<said>[^\n]*)$")


def shell_comments_as_text(text: str) -> str:
    """A pasted script's comments read as what they say, not as Markdown headings: in a
    message that opens with "#!" or has three comment lines in a row, the "#!" line goes,
    each "# " loses its mark, and a comment wrapped onto the next line is joined to it
    where its line cannot end ("lv_designs is only ever" / "grown with `lvresize ...`")."""
    lines = text.split("\n")
    marked = [bool(_SHELL_COMMENT.match(ln)) for ln in lines]
    runs = any(all(marked[i:i + 3]) for i in range(max(0, len(lines) - 2)))
    if not (text.lstrip().startswith("#!") or runs):
        return text
    out: list[str] = []
    comment: list[bool] = []  # whether each line of out was a comment
    for line, mark in zip(lines, marked, strict=True):
        if line.lstrip().startswith("#!"):
            continue
        m = _SHELL_COMMENT.match(line) if mark else None
        said = m.group("said").strip() if m else line
        if m and out and comment[-1] and out[-1] and (_GOES_ON.search(out[-1]) or (
                _GOES_ON_FROM.match(said) and not out[-1].rstrip().endswith(
                    (".", "!", "?", ":")))) and re.match(r"[a-z`]", said):
            out[-1] = f"{out[-1].rstrip()} {said}"
            continue
        out.append(said)
        comment.append(bool(m))
    return "\n".join(out)


def headings_as_labels(text: str) -> str:
    """A markdown heading scopes the lines under it ("## Ropewalk rooms" then "- Projector
    input is the HDMI plate by the door"): the heading goes in parentheses after the first
    line under it ("- Projector input is the HDMI plate by the door (Ropewalk rooms)."),
    so the scope stays with the facts once the heading line is gone, in the writer's
    words and without a label the reader would split off. Works on the raw message
    (before markdown is removed); a heading with nothing under it is left as it is."""
    lines = text.splitlines()
    out: list[str] = []
    pending = ""
    for line in lines:
        m = _HEADING.match(line)
        if m and m.group("text").strip():
            if pending:
                out.append(pending)
            pending = m.group("text").strip().rstrip(":")
            continue
        if pending and line.strip() and (_cells(line) is not None or _RULE_ROW.match(line)
                                         or line.lstrip().startswith(("```", "~~~"))):
            out.append(f"{pending}:")  # (over a table or a code block: its caption)
            pending = ""
        elif pending and line.strip():
            body = line.rstrip()
            end = body[-1] if body[-1] in ".!" else ""
            line = f"{body[:len(body) - len(end)]} ({pending}){end or '.'}"
            pending = ""
        out.append(line)
    if pending:
        out.append(pending)
    return "\n".join(out)


#: "[Voicemail transcript, 00:47]", "[Auto-translated from Polish]" opening the message.
_LEADING_NOTE = re.compile(r"^\s*\[[^\]\n]{3,120}\]\s*(?=\S)")


#: A header line naming who sends the message: "ANNOUNCEMENT from Marcus Oyelaran, Group
#: Operations Manager", "Memo from the Fleet Office", "PSA by IT:".
#: What follows "from" when it dates the message, not names its sender: "All staff - from
#: Monday 3 June the default applications are fixed" (what takes effect then is the text).
_FROM_A_DATE = (r"(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day|today|tomorrow|tonight|next|"
                r"now)\b|(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|"
                r"aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
                r"\s+\d|the\s+\d|\d")
_SENDER_HEADER = re.compile(r"^\s*(?:(?:" + SENDER_WORDS + r"\s*(?:[—–]|-{1,2})?\s*){1,2}"
                            r"(?:from|by)\s+(?![^\n]*\b(?:please|before\s+you)\b)"
                            r"(?!" + _FROM_A_DATE + r")[^\n.!?]{2,120}?|"
                            # "Night handover 02:10 — Lars → Rahul", "RE: FW: reefer plugs",
                            # "(transcribed from the whiteboard, photo in #ops)"
                            r"(?:(?:night|day|late|early|morning|evening|weekend)\s+)?(?:shift\s+)?"
                            r"hand-?over\b[^\n.!?]{0,80}|(?:(?:re|fw|fwd|aw|sv|vs)\s*:\s*)+"
                            r"[^\n]{1,100}|\([^()\n]{3,140}\)|"
                            # "To all teams with access to pgbill01:" (who it is for)
                            r"to\s+(?:all|every|everyone|anyone)\b[^\n.!?]{0,100}:)"
                            # ("ALL STAFF - message from Ruth Ashdown, Director of IT.";
                            # not "Note from X - please read before ...", which asks)
                            r"[:.]?[ \t]*\n", re.IGNORECASE)
#: Circled numbers as list markers: "① SET lock_timeout ...".
_CIRCLED = re.compile(r"^([ \t]*)[\u2460-\u2473\u2776-\u2793][ \t]*", re.MULTILINE)


def circled_numbers_as_bullets(text: str) -> str:
    """Lines numbered with circled digits ("① ...") as list items ("- ...")."""
    return _CIRCLED.sub(r"\1- ", text)


#: Words that name what kind of document a header line heads ("Minutes", "changelog",
#: "transcript", "review", "note(s)", "report", "handover", "write-up", "post-mortem").
_GENRE = (r"(?:minutes|change-?\s?log|log|logbook|transcript|review|notes?|comments?|report|"
          r"poster|sticker|quiz|checklist|glossary|talk|briefing|huddle|"
          r"summary|digest|hand-?over|write-?up|post-?mortem|retro(?:spective)?|resolution|"
          r"faq|radio)")
#: A document's header at the very start: an optional ticket id ("GDDB-4471 - "), up to two
#: words, the genre word, then its particulars after a comma, dash, parenthesis, colon or
#: "on/of/from/for/by" ("Image changelog, build 2024.09:", "Review on PR #318 (...), file
#: x.sql:", "Voicemail transcript (auto) - from Dr X, 08:52:", "Post-incident review, Harrow
#: Street outage (14 Feb)."); or the sender or source alone ("From Helen Achebe,
#: Information Governance Lead.", "From the OL wiki, page 'Signature pads':").
_FORWARDED = re.compile(r"(?:fwd?|forwarded)\b[: \t]+(?:[\w-]+[ \t]+){0,2}?from[ \t]+",
                        re.IGNORECASE)
_GENRE_HEAD = re.compile(
    # (an emoji or a mark before it; a bracketed banner is read by banner_removed)
    r"(?:[^\w\s\[\](){}<>]{1,3}[ \t]*)?(?:(?:ticket|case|incident|request|change)[ \t]+)?"
    # ("HelpPoint DESK-20931 — Resolution notes": the system's name before the id)
    r"(?:(?:[\w-]+[ \t]+){0,2}?[\w-]+[ \t]*#?\d+[ \t]*[-–—:][ \t]*)?"
    r"(?:(?:[\w-]+[ \t]+){0,2}" + _GENRE + r"(?=[ \t]*(?:[,(:–—-]|[ \t](?:on|of|from|for|by|"
    r"above|below|beside|next[ \t]+to)\b|"
    # ("Post-incident review PIR-2024-03 (extract)": the document's own code after it;
    # "CAB minutes 2024-02-08, item 4": its date)
    r"[ \t]+(?-i:[A-Z][\w-]*\d[\w-]*)\b|[ \t]+\d{4}-\d{2}-\d{2}\b|[.]?$))|"
    # ("Fwd SMS from Seun (on-call):": a forwarded message and whom it is from)
    + _FORWARDED.pattern + r"|"
    + SENDER_WORDS + r"[ \t]*(?:[—–]|-{1,2})?[ \t]*(?:from|by)[ \t]+(?!"
    + _FROM_A_DATE + r")|"
    # who it is for: "To all IT staff — a reminder ahead of the summer timetable."
    r"to[ \t]+all[ \t]+(?:[\w-]+[ \t]+){0,3}?(?:staff|teams?|users|colleagues|crews?|"
    r"employees|hands|managers|drivers|agents)\b|"
    r"from[ \t]+(?:(?-i:[A-Z][\w'-]+)[ \t]+(?-i:[A-Z][\w'-]+)(?=,)|(?:(?:the|our)[ \t]+)?"
    r"[^\n,:]{0,40}?\b(?:wiki|handbook|runbook|intranet|manual|guide|faq|page|sheet|docs|"
    # (a file's name is its own: "From CHANGELOG.md of circulo-api, v4.2.0" names a source)
    r"glossary|checklist|quiz|change-?log(?![.\w])|readme(?![.\w])|procedure|sop|"
    r"minutes|meeting|weekly|monthly|stand-?up|notes)\b))",
    re.IGNORECASE)
#: A notice's title on its own line, over the notice: "NOTICE — CHEESE PLANT PCs", "Memo:
#: Kiln Room" (a few words in capitals that name no value: "Notice - tills closed 14:00"
#: and "Notice: nobody logs in as root" say something).
_NOTICE_TITLE = re.compile(r"(?:[^\w\s]{1,3}[ \t]*)?(?:notice|memo|bulletin|circular|"
                           r"announcement|poster|sign)[ \t]*[-–—:|][ \t]*"
                           r"(?P<title>[^\W\d_][^\d\n]{0,40}?)[ \t]*[^\w\s]{0,3}", re.IGNORECASE)
#: The headers of an incident's story.
_INCIDENT_GENRE = re.compile(r"\b(?:post-?mortem|incident|outage|lessons?\s+learn(?:ed|t)|"
                             r"root\s+cause|retro(?:spective)?|what\s+happened)\b", re.IGNORECASE)
#: A word that says how things are now, not how they went (the incident readers of
#: ``optimizer.local.actionability`` share it).
PRESENT_RULE_WORD = re.compile(r"\b(?:must|never|always|only|is|are|now|can|may|should)\b",
                                re.IGNORECASE)
#: A word that makes a header a sentence: be, have, do, the modals, a negation.
_HEAD_VERB = re.compile(r"\b(?:is|are|was|were|be|been|has|have|had|do|does|did|don't|doesn't|"
                        r"can|cannot|can't|must|should|shall|will|won't|(?-i:may)|might|need|needs|"
                        r"never|not|no)\b", re.IGNORECASE)


def _verbless(text: str) -> bool:
    return not _HEAD_VERB.search(re.sub(r"\([^()]*\)|'[^'\n]*'|\"[^\"\n]*\"", " ", text))


#: A line that says a document changed, over the change: "Wiki page 'Storage layout' was
#: updated today, diff:".
_UPDATED_HEAD = re.compile(
    r"(?:[\w'-]+[ \t]+){0,3}?(?:wiki|page|doc|document|runbook|handbook|policy|procedure|faq|"
    r"readme|config|file|article)\b[^\n:]{0,60}?\b(?:was|has[ \t]+been|got)[ \t]+(?:updated|"
    r"changed|edited|amended|revised)\b[^\n:.]{0,40}:[ \t]*", re.IGNORECASE)


def genre_header_removed(text: str) -> str:
    """The message without the header that says what kind of document it is, who sends it
    or where it is copied from (``_GENRE_HEAD``, with no verb in it): its whole first line
    when that line is the header, else the header sentence or the label before a colon
    ("Contractor note (Tessellate IT, on site Weds): no staff account has admin" keeps
    what follows the colon). A ticket's id and state alone ("PSD-Network #5821 -
    resolved.") go the same way."""
    original = text
    for _ in range(3):
        lead = text.lstrip()
        first, nl, rest = lead.partition("\n")
        if nl and rest.strip() and _UPDATED_HEAD.fullmatch(first.strip()):
            text = rest
            continue
        if nl and rest.strip() and _GENRE_HEAD.match(first.strip()) and _verbless(first) \
                and not _header_needed(first, rest):
            # (when it takes effect is the text's, not the header's: "Announcement from X -
            # effective 1 March:" leaves "Effective 1 March: ...")
            when = _EFFECTIVE.search(first)
            # (and a list's first mark goes: "Effective 1 October: Passwords must ...")
            body = _LIST_MARK.sub("", rest.lstrip())
            text = f"{when[0].strip().rstrip(':')[:1].upper()}{when[0].strip().rstrip(':')[1:]}: " \
                f"{body}" if when else rest
            continue
        title = _NOTICE_TITLE.fullmatch(first.strip())
        if nl and rest.strip() and title and _verbless(first) and all(
                w[0].isupper() for w in re.findall(r"[^\W\d_][\w'-]{2,}", title.group("title"))):
            text = rest  # ("NOTICE — CHEESE PLANT PCs" over the notice's rules)
            continue
        head = _first_clause(first)
        # (a note's sender before a colon on the line of its text may scope it: "Note from
        # the yard: trailers are washed daily" stays)
        if head and (_GENRE_HEAD.match(head) or _TICKET_STATE.fullmatch(head)) and \
                _verbless(head) and not _SENT_BY.match(head) and not _header_needed(
                    head, lead[len(head):]):
            rest = lead[len(head):].lstrip(" \t")
            told = re.match(r"[^.!?\n]*[.!?]+[ \t]*", rest)
            if told and _INCIDENT_GENRE.search(head) and past_tense(told.group(0)) and \
                    not PRESENT_RULE_WORD.search(told.group(0)) and rest[told.end():].strip():
                # ("Post-mortem of INC-771 (May): a charger was left on and the breaker
                # tripped twice. Chargers are switched off ...": what happened goes too)
                rest = rest[told.end():]
            # (a sentence's first word takes a capital; a host's name keeps its case)
            text = rest[:1].upper() + rest[1:] if re.match(r"[a-z]+\b(?![-.]\w)", rest) \
                else rest
            continue
        break
    # (what a transcript's header announces may come in quotation marks: "Voicemail
    # transcript (07:42): 'Hi, it's Seun. ... Cheers.'" is Seun's text)
    quoted = re.fullmatch(r"\s*(['\"“‘])(.+?)([’”'\"])([.!]?)\s*", text, re.DOTALL)
    if text != original and quoted and {quoted[1], quoted[3]} in ({"'"}, {'"'}, {"“", "”"},
                                                                   {"‘", "’"}):
        return quoted[2] + quoted[4]
    return text


_MONTHS = frozenset("jan feb mar apr may jun jul aug sep sept oct nov dec january february march "
                    "april june july august september october november december".split())


def _header_needed(head: str, rest: str) -> bool:
    """The header says what the text needs: a machine or host the text does not name again
    ("CHANGELOG: wardrobe-pc1 image 2024.09"), or the organisation a "we"/"us" in the text
    stands for ("Contractor note (ClearView Imaging, ...): calibrated by us only")."""
    later = rest.lower()
    # (a document's version is no host: "Logging Standard v3")
    hosts = [h for h in re.findall(r"\b[a-z][a-z0-9]*(?:[-.][a-z0-9]+)*[-.]?[a-z]*\d[\w.-]*\b",
                                   head) if not re.fullmatch(r"v\d+(?:\.\d+)*", h)]
    if any(h.lower() not in later for h in hosts if re.search(r"[a-z]", h)):
        return True
    if re.search(r"\b(?:we|we'll|we're|we've|us|our)\b", rest, re.IGNORECASE) and \
            not _FORWARDED.match(head):  # (a forwarded text's "we" are its sender's)
        # (the header's first word has its capital for being first: "From the IT FAQ")
        names = re.findall(r"\b[A-Z][\w&'-]+", head.strip()[1:])
        # ("IT", "HR": a department's document, not the organisation's name)
        return any(n.lower() not in later and n.lower() not in _MONTHS and
                   n not in ("IT", "HR", "Ops", "OPS") and
                   not re.fullmatch(_GENRE, n, re.IGNORECASE) for n in names)
    return False


def _first_clause(line: str) -> str:
    """The line up to its first sentence end or colon outside brackets and quotes, with
    that mark ("" when there is none before the end of the line, or nothing after it)."""
    depth, quote = 0, ""
    for i, c in enumerate(line[:160]):
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"" and (i == 0 or not line[i - 1].isalnum()):
            quote = c
        else:
            depth += (c in "([{") - (c in ")]}")
            if depth <= 0 and c in ".!?:" and line[i + 1:i + 2] in (" ", "\t") and \
                    line[i + 1:].strip() and i >= 3:
                return line[:i + 1]
    return ""


_EFFECTIVE = re.compile(r"\b(?:effective|as\s+of|starting|valid\s+from)\s+(?:[^,;:\n]{0,12}?)"
                        r"(?:\d{1,4}|(?i:mon|tues|wednes|thurs|fri|satur|sun)day)[^,;:)\n]{0,20}",
                        re.IGNORECASE)
_LIST_MARK = re.compile(r"^[-*•][ \t]+")
_SENT_BY = re.compile(r"\s*(?:[^\w\s]{1,3}\s*)?" + SENDER_WORDS + r"\s*[—–-]?\s*(?:from|by)\b",
                      re.IGNORECASE)
#: A ticket's id and state: "PSD-Network #5821 - resolved.", "REQ-2291 closed."
_TICKET_STATE = re.compile(r"[\w-]+[ \t]*#?\d+[ \t]*[-–—:]?[ \t]*(?:resolved|closed|done|fixed|"
                           r"merged|completed)[.!]?", re.IGNORECASE)


_BOX_BORDER = re.compile(r"^[ \t]*\+[-=+]{3,}\+[ \t]*$")
_BOX_LINE = re.compile(r"^[ \t]*\|[ \t]*(?P<text>.*?)[ \t]*\|[ \t]*$")


#: A line the writer put in square brackets under a quoted line: their reply to it.
_BRACKETED_REPLY = re.compile(r"^[ \t]*\[(?P<reply>[^\[\]\n]*\s[^\[\]\n]*\s[^\[\]\n]*)\][ \t]*$")


def boxed_lines_unboxed(text: str) -> str:
    """Text drawn in a box of "+---+" borders and "| ... |" sides (a label or sticker typed
    out) as its plain lines: "| PRINTER: STORES-ZEBRA-1 |" reads "PRINTER: STORES-ZEBRA-1"
    (not a table row); and a reply the writer put in square brackets under a quoted line
    ("> enable the UDP input" / "[no, gull only takes TCP]") as its plain words."""
    lines = text.split("\n")
    for i in range(1, len(lines)):
        m = _BRACKETED_REPLY.match(lines[i])
        if m and lines[i - 1].lstrip().startswith(">"):
            lines[i] = m.group("reply").strip()
    return _boxed_lines_unboxed("\n".join(lines))


def _boxed_lines_unboxed(text: str) -> str:
    """Text drawn in a box of "+---+" borders and "| ... |" sides (a label or sticker typed
    out) as its plain lines: "| PRINTER: STORES-ZEBRA-1 |" reads "PRINTER: STORES-ZEBRA-1"
    (not a table row)."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        if _BOX_BORDER.match(lines[i]):
            j = i + 1
            inner: list[str] = []
            while j < len(lines) and (m := _BOX_LINE.match(lines[j])) and \
                    not _BOX_BORDER.match(lines[j]):
                inner.append(m.group("text"))
                j += 1
            if inner and j < len(lines) and _BOX_BORDER.match(lines[j]):
                out.extend(line for line in inner if line.strip())
                i = j + 1
                continue
        out.append(lines[i])
        i += 1
    return "\n".join(out)


# (one star each side once the Markdown reader took "**" for bold: "* SAVE PAPER *")
_STARRED_SLOGAN = re.compile(r"^[ \t]*([*=#~])\1*[ \t]+(?P<slogan>[^\n*=#~]{3,80}?)[ \t]+"
                             r"\1+[ \t]*(?:\n|$)", re.MULTILINE)


def banner_removed(text: str) -> str:
    """The message without a bracketed note that opens it ("[Voicemail transcript,
    00:47] Hi, ..."): a banner about the message, not part of it. Notes inside it
    ("[inaudible]") stay, as the transcript has them; so do check-mark boxes ("[x]",
    "[ ]") and a configuration section ("[Service]" on its own line). A header line that
    names the sender ("ANNOUNCEMENT from X, role") goes too."""
    text = genre_header_removed(text)
    # (a slogan between rows of stars: "*** SAVE PAPER - SAVE MONEY FOR PATIENT CARE ***")
    text = _STARRED_SLOGAN.sub(lambda m: "" if _verbless(m.group("slogan")) else m.group(0), text)
    for _ in range(3):  # ("RE: ..." over "(sent from the yard)" over the message)
        header = _SENDER_HEADER.match(text)
        if not header or not text[header.end():].strip():
            break
        text = text[header.end():]
    lines = text.lstrip().split("\n", 2)
    section = _SECTION.match(lines[0]) and len(lines) > 1 and _PAIR.match(lines[1])
    if not _LEADING_NOTE.match(text) or section:
        return text
    if _CHAT_LINE.match(lines[0]) and any(_CHAT_LINE.match(line)
                                          for line in text.lstrip().splitlines()[1:]):
        return text  # ("[09:12] ana: ..." opening a chat log: its first line's time)
    return _LEADING_NOTE.sub("", text, count=1)


#: A fact told as news to the writer: "I had a chat with Noa and the thing I didn't know is
#: that whoever patches re-baselines AIDE" (the fact is what follows "that").
_LEARNED = re.compile(r"(?:^|(?<=[.!?][ \t])|(?<=\n))[^.!?\n]*?\b(?:(?:the|one)[ \t]+(?:thing|bit|"
                      r"part)[ \t]+)?(?:i|we)[ \t]+(?:didn't|did[ \t]+not|never)[ \t]+(?:knew|know|"
                      r"realised|realized|realise|realize)[ \t]+(?:is|was)[ \t]+(?:that[ \t]+)?"
                      r"(?=[a-zA-Z])", re.IGNORECASE)


#: "the point Seun made, which I honestly didn't know, is that X": a point someone made,
#: told as news (the fact is X).
_POINT_MADE = re.compile(r"(?:^|(?<=[.!?][ \t])|(?<=\n))(?:(?:anyway|so|but|and)[ \t,]+)?the[ \t]+"
                         r"(?:point|thing|bit)[ \t]+(?-i:[A-Z][\w'-]+)(?:[ \t]+(?-i:[A-Z][\w'-]+))?"
                         r"[ \t]+(?:made|said|mentioned|raised|explained)[ \t]*"
                         r"(?:,[^,.!?\n]{0,60},)?[ \t]*(?:is|was)[ \t]+that[ \t]+(?=[a-zA-Z])",
                         re.IGNORECASE)


#: "tell them we don't need the IP": what the writer wants passed on to those asking (the
#: fact is what follows; not "tell the on-call in X ...", an order of its own).
_RELAY = re.compile(r"(?:^|(?<=[.!?][ \t])|(?<=\n))(?:(?:so|just|please|pls)[ \t,]+)?"
                    r"(?:if[ \t]+(?:anyone|someone|people|they)[ \t]+asks?,?[ \t]+)?"
                    r"(?:(?:so|just|please|pls)[ \t,]+)?"
                    r"(?:tell|remind)[ \t]+(?:them|people|users|everyone|callers|folks|"
                    # (not "tell them to use a cable": an order to them)
                    r"whoever[ \t]+asks)[ \t,:]+(?!to\b)(?:that[ \t]+)?(?P<first>[a-zA-Z])",
                    re.IGNORECASE)


def _capital(first: str, after: str) -> str:
    """The first letter of a word that now opens a sentence, in capitals when the word is
    an English one ("kiosks", not "passwd", "postgis", "catalog.taxa")."""
    tail = re.match(r"\w*", after)
    word = first + (tail.group(0) if tail else "")
    if english_word(word.lower()) and not re.match(r"[-_.:/]\w", after[len(word) - 1:]):
        return first.upper()
    return first


def learned_fact_unframed(text: str) -> str:
    """The fact a sentence tells as news to the writer, or asks to be passed on, without
    the telling ("... the thing I didn't know is that X" -> "X"; "the point Seun made,
    which I didn't know, is that X" -> "X"; "... rang back and the point is X" -> "X";
    "tell them X" -> "X")."""
    text = _POINT_MADE.sub("", _LEARNED.sub("", text))
    text = _THE_POINT_IS.sub(lambda m: _capital(m.group("first"), text[m.end():]), text)
    text = _RELAY.sub(lambda m: _capital(m.group("first"), text[m.end():]), text)
    return text.replace("\n\n\n", "\n\n")


#: "Anyway I got hold of Priya this morning and the point is you're not meant to X": what
#: the sentence comes to, after the story of how the writer learnt it.
_THE_POINT_IS = re.compile(r"(?:^|(?<=[.!?][ \t])|(?<=\n))[^.!?\n]{0,160}?\b(?:the[ \t]+(?:point|"
                           r"upshot|gist|short[ \t]+version|thing[ \t]+(?:everyone|everybody|"
                           r"you|people|we\s+all)[ \t]+(?:needs?|should|has|have)[ \t]+"
                           r"(?:to[ \t]+)?know)[ \t]+(?:is|was)|long[ \t]+story[ \t]+"
                           r"short|bottom[ \t]+line(?:[ \t]+is)?)[ \t]*[,:]?[ \t]+(?:that[ \t]+)?"
                           r"(?P<first>[a-zA-Z])", re.IGNORECASE)


#: Struck-through text: "~~5 minutes~~ 10 minutes" (markdown), "<s>old</s>", "<del>old</del>".
_STRUCK = re.compile(r"~~(?=\S)[^~\n]{1,80}?(?<=\S)~~[ \t]*|"
                     r"<(s|del|strike)>[^<\n]{1,80}</\1>[ \t]*", re.IGNORECASE)


def struck_through_removed(text: str) -> str:
    """The message without the words it strikes through: "the revert is ~~10 seconds~~ 20
    seconds" says the revert is 20 seconds, and the struck value is the one it replaces
    (a nugget must not state it as if it held)."""
    return _STRUCK.sub("", text)


#: Meeting minutes: decision and action labels, attendance lines, "AOB".
_DECISION = re.compile(r"\b(?:AGREED|DECIDED|RESOLVED|DECISION|CONFIRMED)\b\s*:?\s*|"
                       r"\b(?:Agreed|Decided|Resolved|Decision)\s*:\s*")
_ACTION = re.compile(r"\b(?:ACTION|Action(?=\s*(?:[A-Z][\w'-]*\s*)?:))\b"
                     r"(?:\s+(?:on\s+)?[A-Z][\w'-]*)?\s*:[^\n]*?"
                     r"(?=\s*\b(?:AGREED|DECIDED|RESOLVED|DECISION|NOTE|ACTION)\b|$)")
_ATTENDANCE = re.compile(r"^\s*(?:present|attendees|attending|apologies|absent|chair|"
                         r"minutes(?:\s+taken)?\s+by|in attendance)\s*:", re.IGNORECASE)
_MINUTES_HEADER = re.compile(r"\bminutes\b|\bmeeting\b", re.IGNORECASE)
_AGENDA_ITEM = re.compile(r"^\s*\d{1,2}[.)]\s+")
_AOB = re.compile(r"^\s*(?:\d{1,2}[.)]\s+)?(?:AOB|any other business)\b", re.IGNORECASE)


def minutes_as_decisions(text: str) -> str:
    """Meeting minutes read as what was decided: in a message with a decision label
    ("AGREED:", "Decision:") and an action or attendance line, the header naming the
    meeting, attendance, actions assigned to people ("ACTION Fiona: ..."), "AOB" and agenda
    items that decided nothing go; a decision keeps its words without the label, and a
    "NOTE:" keeps its own."""
    lines = text.split("\n")
    if not any(_DECISION.search(line) for line in lines) or not any(
            _ACTION.search(line) or _ATTENDANCE.match(line) for line in lines):
        return text
    out: list[str] = []
    for i, line in enumerate(lines):
        if _ATTENDANCE.match(line) or _AOB.match(line):
            continue
        if i == 0 and _MINUTES_HEADER.search(line) and not _DECISION.search(line):
            continue  # "Ops meeting 14/05 - minutes (Leith)", "Extract from IT minutes 02/04."
        line = _ACTION.sub("", line).rstrip()
        decision = _DECISION.search(line)
        if decision:
            line = line[decision.end():]
        elif _AGENDA_ITEM.match(line):
            continue  # "1. Café rota - no change.": an item that decided nothing
        if line.strip():
            out.append(line)
    return "\n".join(out)


_PRESENT = re.compile(r"^\s*(?:present|attendees|attending|apologies|absent|in attendance)\s*:",
                      re.IGNORECASE)
#: An action assigned to a person: "Actions: Priya to write the convention into RB-112."
_TO_DO = re.compile(r"^\s*(?:\d{1,2}[.)]\s+|[-*•]\s+)?actions?\s*:\s*(?-i:[A-Z])[\w'-]+"
                    r"(?:\s+(?:and|&)\s+(?-i:[A-Z])[\w'-]+)?\s+to\s+\w+", re.IGNORECASE)
#: An agenda item's title before what it says: "Item 3: fleet baseline. All six ..."
_ITEM_SEP = r"\s*(?:[:.)]|-{1,2}|[—–])\s*"  # "Item 3:", "Item 3 -", "Item 4 --", "Item 2 —"
_ITEM_TITLE = re.compile(r"^(\s*)(?:agenda\s+)?item\s*\d{1,2}" + _ITEM_SEP
                         + r"[^.:\n]{1,40}\.\s+(?=\S)", re.IGNORECASE | re.MULTILINE)


_ITEM_LABEL = re.compile(r"^\s*(?:agenda\s+)?item\s*\d{1,2}" + _ITEM_SEP, re.IGNORECASE)
#: A record's labelled lines: "Finding:", "Decision:", "Action:", "Status:".
_RECORD_LABEL = re.compile(r"^\s*(?:[-*•]\s+)?(?:findings?|decisions?|actions?|status|"
                           r"outcome|root\s+cause|resolution)\s*:", re.IGNORECASE | re.MULTILINE)
#: Who holds a record's item, or when it is due, alone on its line: "Owner: Priya Raman".
_HOLDER = re.compile(r"^\s*(?:[-*•]\s+)?(?:owners?|assignee|assigned\s+to|due(?:\s+date)?|"
                     r"deadline|next\s+review)\s*:\s*[^\n]{0,40}$", re.IGNORECASE)


def minutes_residue_removed(text: str) -> str:
    """What minutes carry besides what they record, in any message of two lines or more:
    attendance lines ("Present: ..."), "AOB" items, actions assigned to people ("Actions:
    Priya to ...", "- Action: Linh to update KB-0117."), an agenda item's own title ("Item
    3: fleet baseline.", "Item 3: Remote access" alone on its line) and, in a record with
    labelled lines ("Finding:", "Decision:"), who holds it or when it is due ("Owner:
    Priya Raman")."""
    lines = text.split("\n")
    if len([ln for ln in lines if ln.strip()]) < 2:
        return text
    record = _RECORD_LABEL.search(text) is not None
    kept = [ln for ln in lines if not (
        _PRESENT.match(ln) or _AOB.match(_ITEM_LABEL.sub("", ln)) or _TO_DO.match(ln) or (
            record and _HOLDER.match(ln) and _verbless(ln)) or (
            _ITEM_LABEL.match(ln) and re.fullmatch(r"[^.\n]{1,60}", _ITEM_LABEL.sub("", ln))
            and _verbless(ln)))]
    return _ITEM_TITLE.sub(r"\1", "\n".join(kept))


#: A labelled line of a record: "Observation: ...", "Agreed management action (owner: P.
#: Raghunathan): ...", "- Risk rating: Medium". The label is one to five words opening
#: the line with a capital, with no verb, and an aside in brackets may follow it.
_RECORD_LINE = re.compile(
    r"^(?P<lead>[ \t]*(?:[-*•][ \t]+)?)(?P<label>[A-Z][\w'/&.-]*(?:[ \t]+[\w'/&.-]+){0,4}?)"
    r"(?P<aside>[ \t]*\([^()\n]{1,80}\))?[ \t]*:[ \t]*(?P<value>(?!//)[^\n]*)$")
#: What a record keeps about itself, not about the world: its state, who owns, approved,
#: audited or worked it, when it is due, how it is filed and rated, and how a change is
#: undone ("Status: closed", "Approver: S. Kearney", "Risk rating: Medium", "Backout: ...").
_RECORD_BOOKKEEPING = frozenset((
    "status", "state", "owner", "owners", "approver", "approvers", "approved by", "auditor",
    "auditors", "technician", "assignee", "assigned to", "reported by", "raised by",
    "requested by", "logged by", "opened by", "closed by", "reviewer", "reviewers",
    "reviewed by", "author", "authors", "date", "due", "due date", "closure due",
    "closure date", "target date", "deadline", "priority", "severity", "risk", "risk rating",
    "rating", "level", "category", "area", "component", "ticket", "ref", "refs", "reference",
    "references", "evidence", "backout", "backout plan", "rollback plan", "version", "rev",
    "revision", "classification", "attendees", "present", "cc", "signed off by", "sign off",
    "caller", "called by", "re", "subject", "regarding", "shift", "logged", "resolved by",
    "handled by", "taken by"))
#: What a record saw once, before what it asks for: "Observation: two md5 lines were
#: found", "Issue: ..." (the standing rule is in the requirement it led to).
_RECORD_OBSERVED = frozenset((
    "observation", "observations", "finding", "findings", "what happened", "what we found",
    "detail of finding", "audit observation", "evidence found"))
#: What an audit asks for after what it observed (a ticket's "Rule:" or an ADR's
#: "Decision:" follows no observation: its "Issue:" may be the fact).
_RECORD_REQUIRES = frozenset((
    "requirement", "requirements", "action required", "required action", "agreed action",
    "management action", "agreed management action", "corrective action",
    "corrective actions", "preventive action", "recommendation", "recommendations"))
#: What a record asks for or decides: the standing rule the record carries.
#: (not "Action:" alone: "Action: Pieter to remove ..." assigns a task, see
#: ``minutes_residue_removed``)
_RECORD_RULE = _RECORD_REQUIRES | frozenset((
    "decision", "decisions", "resolution", "resolution note", "resolution notes", "rule",
    "rules", "policy", "standard", "change", "summary", "implementation", "process",
    "procedure", "outcome", "conclusion", "note", "notes", "details", "description",
    "advised", "advice", "advice given", "instruction", "instructions", "guidance"))
#: A record's header names the record: an id with letters and digits ("IA-2024-07",
#: "CR-0219", "SOP-DB-011"), or the kind of record and nothing that states anything.
_RECORD_CODE = re.compile(r"(?<![\w/.@-])[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)*-[A-Z0-9]*\d[A-Z0-9]*\b")
_RECORD_KIND = re.compile(
    r"\b(?:finding|audit|checklist|template|sop|adr|change|request|ticket|"
    r"incident|procedure|policy|standard|excerpt|extract|section|clause|record|register|"
    r"description|decision|review|notice|memo|minutes|report|note|form|specification|"
    r"work\s+instruction|bulletin|directive|advisory|log|call)\b", re.IGNORECASE)
#: Who owns, approved, wrote or reviewed a document, said on its last line.
_PERSON_BOOKKEEPING = frozenset(("owner", "document owner", "policy owner", "approver",
                                 "approved by", "author", "reviewed by", "signed off by",
                                 "issued by", "ref", "refs", "reference", "references"))
#: A section of a document: "section 4.1", "§ 7".
_SECTION_MARK = re.compile(r"\b(?:section|clause)[ \t]+\d+(?:\.\d+)*|§[ \t]*\d+(?:\.\d+)*",
                           re.IGNORECASE)
#: A revision or a version, which names a controlled document next to its code ("IT-PR-03
#: Secure Printing, rev 4", "ITS-STD-014 Logging Standard v3"; a changelog's "v4.2.0"
#: without one says since when).
_REVISION = re.compile(r"\b(?:rev(?:ision)?\.?[ \t]*(?:\d+|(?-i:[A-Z]))|v\d+(?:\.\d+)*)\b",
                       re.IGNORECASE)
#: Documents whose rules stand on their own authority: a policy, a standard, a notice, an
#: SOP, a procedure, an architecture decision record ("SEC-POL-07", "SOP-DB-011").
_CITED_KIND = re.compile(r"\b(?:polic(?:y|ies)|standards?(?![ \t]+changes?\b)|notices?|sops?|"
                         r"procedures?|work\s+"
                         r"instructions?|directives?|bulletins?|advisory|specifications?|adrs?|"
                         r"decision\s+records?|handbook|manual|runbook|guidelines?|pol|"
                         r"rev(?:ision)?\.?[ \t]*(?:\d+|(?-i:[A-Z]))|v\d+(?:\.\d+)*)\b",
                         re.IGNORECASE)
#: A record's line that files it: "Raised HD-20533.", "Logged as INC-88".
_FILED = re.compile(r"^[ \t]*(?:[-*•][ \t]+)?(?:raised|logged|opened|created|filed)[ \t]+"
                    r"(?:(?:as|a|ticket|incident|case)[ \t]+){0,2}[A-Z][A-Z0-9]*-\d+[ \t]*\.?"
                    r"[ \t]*$", re.IGNORECASE)


#: A clause's or an item's number opening its line: "4.2.1 Clients use sssd.", "[ ] 7b.
#: Then DROP ...", "AI-2: Jobs that run in one transaction ...".
_CLAUSE_NUMBER = re.compile(r"^(?P<lead>[ \t]*(?:\[[ xX]\][ \t]*)?)(?:\d{1,2}(?:\.\d{1,2}){1,3}\.?|"
                            r"\d{1,2}[a-z][.)]|[A-Z]{1,3}-\d{1,2}:?)[ \t]+(?=\S)")


def _record_label(m: re.Match[str]) -> str:
    return " ".join(m.group("label").lower().replace("-", " ").split()) \
        if _verbless(m.group("label")) else ""


#: A lead-in that ends in "it's:" before a list: "For PRN-ORCH-COL it's:".
_LEAD_IN_ITS = re.compile(r"[ \t]+(?:it's|it\s+is|it\s+goes|here's\s+how|like\s+this)[ \t]*:"
                          r"(?=[ \t]*\n)", re.IGNORECASE)


_SCOPED_LEAD = re.compile(r"(?:^|(?<=\n))[ \t]*(?P<scope>(?:for|on|in|at)[ \t]+[^\n:]{1,60}?)"
                          r"[ \t]+(?:it's|it\s+is|it\s+goes)[ \t]*:[ \t]*\n[ \t]*"
                          r"(?:\d{1,2}[.)]|[-*•])[ \t]+(?P<first>[A-Z][a-z'])", re.IGNORECASE)


def list_lead_trimmed(text: str) -> str:
    """"For PRN-ORCH-COL it's:" over numbered steps: the "it's" only points at the list,
    and the scope goes with the first step ("For PRN-ORCH-COL, don't power it off ..."),
    which a lead-in alone on its line would not keep."""
    def joined(m: re.Match[str]) -> str:
        word = re.match(r"[\w']+", text[m.start("first"):])
        common = word is not None and (word.group(0).lower() in STOPWORDS or word.group(
            0).lower() in INSTRUCTION_VERBS or word.group(0).lower().endswith("n't"))
        first = m.group("first").lower() if common else m.group("first")
        return f"{m.group('scope')}, {first}"  # (a name keeps its capital: "Bluetooth")
    return _LEAD_IN_ITS.sub(":", _SCOPED_LEAD.sub(joined, text, count=1))


#: A multiple-choice option on its own line: "(a) Yes, right-click > Add to Favorites".
_OPTION = re.compile(r"^[ \t]*\(?(?P<letter>[a-eA-E])[).][ \t]+(?P<text>\S[^\n]*)$", re.MULTILINE)
#: The line that gives the right option: "Correct answer: (c).", "Answer - c".
_RIGHT_OPTION = re.compile(r"(?:^|(?<=[.!?][ \t])|(?<=\n))[ \t]*(?:the[ \t]+)?(?:correct|right)?"
                           r"[ \t]*answer[ \t]*(?:is)?[ \t]*[:=—–-]?[ \t]*"
                           r"\(?(?P<letter>[a-eA-E])\)?[ \t]*[.!]?[ \t]*", re.IGNORECASE)


def quiz_answer_read(text: str) -> str:
    """A multiple-choice question with its answer key ("(a) Yes, right-click > Add to
    Favorites / (b) ... / (c) No - the dash is locked ... / Correct answer: (c).") keeps
    only the right option, said without its letter, in place of the question: the others
    are wrong by the writer's own key, and publishing them would publish what is false."""
    options = list(_OPTION.finditer(text))
    key = _RIGHT_OPTION.search(text)
    if len(options) < 2 or key is None:
        return text
    right = key.group("letter").lower()
    if right not in {o.group("letter").lower() for o in options}:
        return text
    # (the question the options answer goes: the right option says what holds)
    asked = re.search(r"(?:^|\n)[^\n]*\?[ \t]*\n[ \t]*$", text[:options[0].start()])
    if asked:
        text = text[:asked.start()] + "\n" + text[options[0].start():]
        options = list(_OPTION.finditer(text))
    for o in options[::-1]:
        keep = o.group("text") if o.group("letter").lower() == right else None
        end = o.end() + (1 if keep is None and text[o.end():o.end() + 1] == "\n" else 0)
        text = text[:o.start()] + (keep if keep is not None else "") + text[end:]
    key = _RIGHT_OPTION.search(text)
    return (text[:key.start()] + "\n" + text[key.end():]).strip() if key else text


#: The header of a shift's handover or a status log: "Handover – depot, nights → days, Tue",
#: "Shift log 14/03", "Status update (Tuesday)".
_HANDOVER_HEAD = re.compile(r"^[ \t]*(?:[^\w\s]{1,3}[ \t]*)?(?:(?:shift|night|day|late|early)"
                            r"[ \t]+)?(?:hand-?over|shift[ \t]+(?:log|notes?|report)|status[ \t]+"
                            r"(?:update|report)|end[ \t]+of[ \t]+(?:shift|day)[ \t]+(?:notes?|"
                            r"report))\b[^\n]{0,60}$", re.IGNORECASE)
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*•+]|\d{1,2}[.)])[ \t]+(?P<item>\S[^\n]*)$")
#: A handover header before its note on the same line: "Handover to late shift (A -> B): ".
_HANDOVER_INLINE = re.compile(r"^[ \t]*(?:(?:shift|night|day|late|early)[ \t]+)?hand-?over\b"
                              r"[^:\n.!?]{0,60}:[ \t]+(?=\S)", re.IGNORECASE)


def handover_status_removed(text: str) -> str:
    """A handover note's items that only report how things stand this shift ("- tanker 14
    late, in at 05:40", "- weighbridge printer low on dockets, box in the store") or what
    happened in it ("- Control 2 clock was 4 min out, raised") go; an item that states a
    rule (a modal, "never", "only", "stay", a ban, an instruction: "- kiosk1: Large Text
    stays ON ... Leave it.") stays, and so does everything outside the list but a header
    that names who handed over to whom and when ("HANDOVER 19:30 Thu - J. Armitage to T.
    Nowak"; "Shift handover - ward 4" names a scope and stays). A header on the note's
    own line ("Handover to late shift (Aoife -> Dan): X") goes, the note stays."""
    lines = text.split("\n")
    first = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if first is not None and (inline := _HANDOVER_INLINE.match(lines[first])):
        # ("Handover to late shift (Aoife -> Dan): X": the header before the note)
        lines[first] = lines[first][inline.end():]
        return "\n".join(lines)
    if first is None or not _HANDOVER_HEAD.match(lines[first]) or not _verbless(lines[first]):
        return text
    if re.search(r"\b\d{1,2}:\d{2}\b|\b(?:Mon|Tue|Tues|Wed|Thu|Thur|Thurs|Fri|Sat|Sun)\b|"
                 r"\bto\s+(?:[A-Z]\.\s*)?[A-Z][a-z]+\b|->|\u2192", lines[first]):
        lines[first] = ""  # (who handed over to whom, and when: no scope of the items)
    out = []
    for line in lines:
        m = _LIST_ITEM.match(line)
        item = m.group("item") if m else ""
        clauses = [c for c in re.split(r"[,;:]|[.!?](?=\s|$)", item) if tokens(c)]
        told = [clause_in_past(c) for c in clauses]
        if m and any(told) and all(t or (_verbless(c) and not (
                tokens(c)[:1] and tokens(c)[0] in INSTRUCTION_VERBS) and not re.search(
                r"(?i)\b(?:is|are|go|goes|must|should|needs?|has|have|gets?|uses?|runs?)\b", c))
                for t, c in zip(told, clauses, strict=True)) \
                and not RULE_OR_NEGATION.search(item) \
                and not re.search(r"\b(?:stays?|keep|leave|always|never|only|must|rule)\b",
                                  item, re.IGNORECASE):
            continue  # ("- Control 2 clock was 4 min out, raised.": what happened this shift)
        # (an item that names a command, a host, a path or a setting tells how things are
        # done: "- our probe runs `pg_isready -h cat1 ...` from mon2 every minute")
        if m and _verbless(item) and not RULE_OR_NEGATION.search(item) and not re.search(
                r"\b(?:stays?|keep|leave|always|ask|ring|call|use)\b", item, re.IGNORECASE) \
                and not re.match(r"[ \t]*[A-Z]?[a-z'-]+[ \t]*$", item) and "`" not in item \
                and not re.match(r"(?i)(?:if|when|whenever|unless|before|after)\b", item) \
                and not any(tokens(part)[:1] and tokens(part)[0] in INSTRUCTION_VERBS
                            for part in re.split(r"[:;,]|\b(?:then|and)\b", item)) \
                and not any(i.kind in ("dotted", "path", "url", "menu", "keys", "quoted")
                            for i in items(item)):
            continue
        out.append(line)
    return "\n".join(out)


#: A line that cites a controlled document before its text: "From DP-STD-07 \"Database
#: code standard\", rev 4, section 3.2:".
_CITATION = re.compile(r"^[ \t]*(?:(?:from|per|excerpt\s+from|extract\s+from|source)\b[ \t:]*)?"
                       r"(?=[^\n]*(?<![\w/.@-])[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)*-[A-Z0-9]*\d)"
                       r"[^\n]*?(?:\b(?:section|clause|§)[ \t]*(?P<section>\d+(?:\.\d+)*)"
                       r"[^\n]*?)?:[ \t]*$", re.IGNORECASE)


def records_read(text: str) -> str:
    """A record pasted as it is filed (an audit finding, a change request, a ticket, a
    checklist, an SOP's clauses) read for the rules it carries. Its first line goes when
    it only names the document ("AUDIT FINDING IA-2024-07 (Halden & Rowe)", "Server build
    checklist IT-CHK-03 (excerpt):", "ADR-017: Cross-cluster access from billing to
    SCADA"); a record's id before a rule loses only itself ("CR-0219 (approved 12/02):
    Disable Bluetooth file transfer ..." -> "Disable Bluetooth file transfer ...").
    Clause numbers opening two lines or more go ("4.2.1 Clients use sssd.", "7a. ...").
    When two lines or more after the first are "Label: value" lines and they are half of
    them or more, the lines that keep the record's own bookkeeping go ("Status: closed",
    "Risk rating: Medium", "Approver: ..."), and, when the record states a requirement or
    a decision, so does the observation that led to it ("Observation: ... were found set
    to Europe/London"); a requirement's or decision's label goes from its line ("Agreed
    management action (owner: ...): scram-sha-256 is ..." -> "scram-sha-256 is ..."); any
    other label stays, it says what its value is ("Retention: 25 months")."""
    lines = text.split("\n")
    filled = [i for i, ln in enumerate(lines) if ln.strip()]
    if (len(filled) < 3 and not (len(filled) == 2 and _CITATION.match(lines[filled[0]]))) \
            or _ticket_form(text):
        return text  # (a ticket's form is read field by field: form_fields_as_lines)
    section = _CITATION.match(lines[filled[0]]) or re.search(
        r"\b(?:section|clause|§)[ \t]*(?P<section>\d+(?:\.\d+)*)", lines[filled[0]], re.IGNORECASE)
    if section and section.group("section") and len(filled) > 1:
        # ("From DP-STD-07 ..., section 3.2:" over '"3.2 SECURITY DEFINER functions must
        # ...': the section's number opening its text is said)
        lines[filled[1]] = re.sub(rf"^([ \t]*[\"'“]?){re.escape(section.group('section'))}"
                                  r"\.?[ \t]+(?=\S)", r"\1", lines[filled[1]])
    if sum(bool(_CLAUSE_NUMBER.match(ln)) for ln in lines) >= 2:
        lines = [_CLAUSE_NUMBER.sub(r"\g<lead>", ln) for ln in lines]
    fields = {i: m for i in filled if (m := _RECORD_LINE.match(lines[i])) and _record_label(m)}
    labelled = len([i for i in fields if i != filled[0]])
    record = labelled >= 2 and 2 * labelled >= len(filled) - 1
    head = _record_head(lines[filled[0]], fields.get(filled[0]),
                        "\n".join(lines[filled[0] + 1:]), record)
    if head is not None and head.startswith("\0"):
        # the document's code goes after the first line it heads: "All profiles run in
        # enforce mode on production (SEC-POL-07)."
        fields.pop(filled[0], None)
        lines[filled[0]] = ""
        at = next((i for i in filled[1:] if lines[i].strip()), None)
        if at is not None:
            body = lines[at].rstrip()
            # (a quotation's source goes inside its marks, before its full stop: '"... in
            # the merge request (DP-STD-07 section 3.2)."')
            end = re.search(r"[.!:;]?[\"'”’]?$", body).group(0)  # type: ignore[union-attr]
            source = head[1:] + (f" section {section.group('section')}"
                                 if section and section.group("section") else "")
            close = end if end[:1] in ".!:;" else "." + end
            lines[at] = f"{body[:len(body) - len(end)]} ({source}){close}"
        head = ""
    elif head is not None:
        fields.pop(filled[0], None)
        lines[filled[0]] = head
    last = fields.get(filled[-1])
    if not record and last is not None and filled[-1] != filled[0] and \
            _record_label(last) in _PERSON_BOOKKEEPING and _verbless(last.group("value")):
        lines[filled[-1]] = ""  # ("Owner: Lindiwe Mokoena, Data Protection Officer" closing it)
    if not record or (len(fields) < 3 and head != ""):
        return "\n".join(ln for i, ln in enumerate(lines) if ln or i != filled[0])
    labels = {i: _record_label(m) for i, m in fields.items()}
    ruled = any(lb in _RECORD_REQUIRES for lb in labels.values())
    out: list[str] = []
    for i, line in enumerate(lines):
        m = fields.get(i)
        if m is None:
            if (line or i != filled[0]) and not _FILED.match(line):
                out.append(line)
            continue
        label, value = labels[i], m.group("value").strip()
        # (a version or a path in it is the record's fact: "Status: done (image 2025.03.2)")
        if label in _RECORD_BOOKKEEPING and (_verbless(value) or len(value.split()) <= 3) \
                and not (label in ("status", "state") and re.search(r"\d+\.\d+|(?:^|\s)/\w|://",
                                                                  value)):
            continue
        if label in _RECORD_OBSERVED and ruled:
            continue
        if label in _RECORD_RULE and value:
            out.append(m.group("lead") + _capital(value[:1], value[1:]) + value[1:])
            continue
        out.append(line)
    return "\n".join(out)


def _record_head(line: str, m: re.Match[str] | None, rest: str, record: bool) -> str | None:
    """The record's first line as it is read: "" when it names the document and states
    nothing the rest needs ("Internal audit finding IA-2024-07 (PCI DSS), status: open",
    "ADR-017: Cross-cluster access from billing to SCADA", "SOP-ST-04 Surtitles (Corn
    Exchange), extract:", over labelled lines "CR-0412 - Internal package repository"),
    its rule alone when only an id labels it ("CR-0219 (approved 12/02, CAB): Disable
    ..."), None when it stays as it is."""
    head = line.strip()
    if m is not None and m.group("value").strip():
        value = m.group("value").strip()
        label = m.group("label").split()
        if not _RECORD_CODE.fullmatch(label[0]):
            return None
        # (a title is short and names no value: "Cross-cluster access from billing to
        # SCADA"; "Store hop pellets at 2-4 °C in cold room B" is a rule; a revision or a
        # section is the document's: "IG-POL-014 Information Governance: Screen capture,
        # v3.2, section 4.1" cites a controlled document, whose code is the source)
        title = _SECTION_MARK.sub("", _REVISION.sub("", value)).strip(" ,;")
        if title and _verbless(title) and title.split()[0].lower() not in INSTRUCTION_VERBS \
                and len(title.split()) <= 8 and not re.search(r"\d", title) and \
                not _header_needed(head, rest):
            cited = title != value.strip(" ,;") or bool(_CITED_KIND.search(head))
            return f"\0{label[0]}" if cited else ""
        return m.group("lead") + value if len(label) <= 2 else None
    named = bool(_RECORD_CODE.search(head)) or head.lower().startswith("from ")
    # (one name, no sentence before it: "Good summary. From the PIR ...:" is the writer's)
    sentence = re.search(r"[.!?]\s", re.sub(r"\([^()]*\)|'[^'\n]*'|\"[^\"\n]*\"", "", head))
    # (over labelled lines the kind alone names it: "PHONE LOG - IT on-call - 02:47")
    kind = bool(_RECORD_KIND.search(head)) or bool(
        _RECORD_CODE.search(head) and _REVISION.search(head))
    if ((named and (record or kind)) or (record and kind)) and _verbless(head) and \
            len(head.split()) <= 16 and not sentence and not _header_needed(head, rest):
        code = _RECORD_CODE.search(head)
        # (a policy's or a procedure's code is where the rules come from; a finding's,
        # a ticket's or a change's is its filing)
        return f"\0{code.group(0)}" if code and _CITED_KIND.search(head) else ""
    return None


#: "Q: how long ...? A: 14 characters": a question and its answer, in the writer's words.
# (a numbered one too: "Q4. How does a clerk start Orca? A: Ctrl+Alt+O.")
_QA_PAIR = re.compile(r"(?:^|(?<=\s))Q\s*\d{0,3}\s*[:.)]\s*(?P<q>[^?\n]{3,200}\?)\s*A\s*[:.]\s*"
                      r"(?P<a>.+?)(?=\s*(?:^|(?<=\s))Q\s*\d{0,3}\s*[:.)]\s|\n|$)", re.MULTILINE)
_YES_NO = re.compile(r"^(?:do|does|did|can|could|is|are|was|were|will|would|should|shall|"
                     r"may|must|has|have|had|am)\b", re.IGNORECASE)


# (not "you": the one asked, whose answer this is; "Will you add me ...?" is a request)
#: A subject led by an article, up to three words, before the verb it asks about: "a
#: practice manager", "the nurses" ("Can a practice manager add ...?").
_NOUN_SUBJECT = (r"(?:a|an|the|our|any)\s+[\w-]+(?:\s+[\w-]+){0,2}?(?=\s+(?:just\s+|simply\s+)?"
                 r"(?:" + "|".join(sorted(INSTRUCTION_VERBS, key=len, reverse=True)) + r")\b)")
_ASKED = re.compile(r"^(?P<aux>do|does|can|should|must|may|will|is|are)\s+"
                    r"(?P<subj>we|i|they|staff|users|people|everyone|it|" + _NOUN_SUBJECT
                    + r")\s+(?P<rest>\S.*)$", re.IGNORECASE)
# ("No. Every jump host (jump01.mbw.local) ships ...": after "No." the next sentence is
# the tail, not more of the reply)
_REPLY = re.compile(r"^(?P<word>no|nope|never|yes|yep|yeah|correct)\b(?:\s*[.!]+\s*|"
                    r"[\s,]*(?P<more>(?:[^.!?]|[.!?](?=[^\s.!?]))*)[.!?]?\s*)",
                    re.IGNORECASE)  # (a dot inside a name, "common.store_code", ends nothing)


def _second_person(text: str) -> str:
    return re.sub(r"\b(?:" + "|".join(sorted(SECOND_PERSON, key=len, reverse=True)) + r")\b",
                  lambda m: SECOND_PERSON[m.group(0).lower()], text, flags=re.IGNORECASE)


#: The subject of a yes/no question the writer answers in prose: "Can staff open ...?",
#: "Is GUFW allowed?", "Can you create tables in public?" (there "you" is anyone).
_ASKED_IN_PROSE = re.compile(
    r"^(?P<aux>(?i:do|does|can|should|must|may|is|are))\s+(?P<subj>(?i:we|i|you|they|staff|"
    r"people|it)|[A-Z][\w.+-]*(?:\s+[A-Z][\w.+-]*){0,2}|(?i:" + _NOUN_SUBJECT + r")|"
    # (a group named by a plural: "volunteers", "agency nurses"; not "this", "access")
    r"(?:[a-z]+\s+)?[a-z]{2,}[a-hj-rtv-z]s)\s+"
    # (the subject ends there: not "Can anyone on the staff flip ...?")
    r"(?!(?i:on|in|at|of|for|from|with|by|the|a|an|to|who|that|which|and|or|here|there)\b)"
    r"(?P<rest>\S.*)$")
#: "Can staff open firewall ports on their laptop? No. firewalld is ...": a yes/no
#: question in prose, answered at once by its writer (the reply's own sentence with it).
_ANSWERED_QUESTION = re.compile(
    r"(?P<lead>^|(?<=[.!?:]\s)|(?<=\n))(?P<q>(?i:do|does|can|should|must|may|is|are)[ \t]+"
    r"[^?.!\n]{3,160}?)[ \t]*\?[ \t]+(?i:(?:also|again|still)[ \t]+)?"
    r"(?P<a>(?i:no|nope|yes|yep)\b(?:[ \t]*[.!]+(?=\s|$)|"
    r"[ \t]*(?:,|[\u2014\u2013]|-(?!\w))[ \t]*[^.!?\n]*[.!?]?))")


#: A parenthesis that opens a sentence, with the sentence after it: "(dictated on my phone,
#: sorry for any weirdness) Passwords expire after 90 days."
_LEADING_ASIDE = re.compile(r"(?:^|(?<=[.!?]\s)|(?<=\n))[ \t]*\((?P<aside>[^()\n]{3,200})\)"
                            r"[ \t]+(?=[A-Z0-9`\"'])")
#: How the message came to be, opening it: "this is dictated sorry for typos." (the
#: sentence after it may start in lower case).
_HOW_WRITTEN = re.compile(r"^[ \t]*(?:(?:this|it)(?:'s|\s+is|\s+was)\s+)?(?:dictated|typed|written|"
                          r"voice[- ]typed)(?:\s+(?:on|from|with|in)\s+(?:my|the|a)\s+\w+)?"
                          r"(?:[ \t,;-]+(?:so\s+)?sorry\s+for\s+(?:the\s+|any\s+)?(?:typos|"
                          r"mistakes|errors|weirdness))?[ \t]*[.!;:][ \t]*(?=\S)", re.IGNORECASE)
_MESSAGE_ASIDE = re.compile(r"^[ \t]*\((?P<aside>[^()\n]{3,60})\)[ \t]+(?=[a-z])")
#: An aside that bounds what follows in time or scope: "(since May)", "(except the tills)".
_SCOPE_IN_ASIDE = re.compile(r"\b(?:since|until|till|from|after|before|effective|as\s+of|"
                             r"starting|except|excluding)\b", re.IGNORECASE)


def leading_asides_removed(text: str) -> str:
    """A parenthesis that opens a sentence and names nothing (no number, key, path,
    name of a system, no rule word) is the writer's aside on how the message came to be
    ("(dictated on my phone walking to the green room, sorry for any weirdness)"): it
    goes, the sentence after it stays. One that names something ("(since 14 May)",
    "(on the kiosks only)") is part of what is said and stays."""
    def drop(m: re.Match[str]) -> str:
        aside = m.group("aside")
        if any(i.kind in STRONG_KINDS for i in items(aside)) or RULE_OR_NEGATION.search(aside) \
                or _SCOPE_IN_ASIDE.search(aside):
            return m.group(0)
        return ""
    # (opening the message, the aside may come before a word in lower case: "(dictated)
    # hi this is ...")
    return _LEADING_ASIDE.sub(drop, _MESSAGE_ASIDE.sub(drop, _HOW_WRITTEN.sub("", text, count=1),
                                                       count=1))


#: The writer turning from a joke to the rule: "Joking aside:", "But seriously,".
_JOKE_ENDS = re.compile(r"(?:^|(?<=[.!?])[ \t]+|(?<=\n))(?:(?:all[ \t]+)?(?:joking|jokes|kidding|"
                        r"humou?r)[ \t]+aside|(?:but[ \t]+)?seriously(?:[ \t]+though)?|"
                        r"on[ \t]+a[ \t]+(?:more[ \t]+)?serious[ \t]+note)[ \t]*[,:;.!—–-]+[ \t]*",
                        re.IGNORECASE)


#: A message that opens laughing or in irony: "Ha, ...", "Ah yes, the famous ...".
_LAUGH_OPENS = re.compile(r"^[ \t]*(?:ha(?:ha)*|heh|lol|lmao|ah[ \t]+yes|oh[ \t]+(?:please|sure|"
                          r"great|brilliant))\b", re.IGNORECASE)
#: Where such a message turns to the point.
_JOKE_TURNS = re.compile(r"(?:(?<=[.!?])[ \t]+|(?<=\n))(?:house[ \t]+rule[ \t]*:|for[ \t]+the[ \t]+"
                         r"record(?:[ \t]*,?[ \t]+though)?[ \t]*[,:]|that[ \t]+said[ \t]*,|"
                         r"in[ \t]+all[ \t]+seriousness[ \t]*,)[ \t]*", re.IGNORECASE)
#: A story announced as such: "So, long story, but the dye house had a bit of a week."
# (not "long story short", which turns to the point)
_STORY_ANNOUNCED = re.compile(r"\b(?:long[ \t]+story(?![ \t,]+short)|story[ \t]+time|"
                              r"funny[ \t]+story|a[ \t]+bit[ \t]+of[ \t]+a[ \t]+"
                              r"(?:week|day|night|morning)|you\s+won't\s+believe|"
                              # (an apology for the length, or for the day it has been:
                              # "Sorry this is long, it's been a day.")
                              r"sorry[ \t,]+(?:(?:this|it)(?:'s|[ \t]+is)|for[ \t]+the)[ \t]+"
                              r"(?:so[ \t]+|a[ \t]+bit[ \t]+)?(?:long|essay|rant|ramble)|"
                              r"(?:it's|it[ \t]+has)[ \t]+been[ \t]+a[ \t]+(?:long[ \t]+|"
                              r"rough[ \t]+|mad[ \t]+)?(?:day|week|night|shift|morning))\b",
                              re.IGNORECASE)
def _told_by_writer(sentence: str) -> str:
    """The sentence of a story the writer tells before "Anyway": "" when it opens with the
    writer or with what happened ("So I asked about this because ...", "Hello, Bernie here,
    I volunteer on Tuesdays ..."), the part after its colon when only its head does
    ("Tomasz explained it to me: X" -> "X"), the sentence as it is otherwise."""
    k = re.sub(r"^(?:(?:so|well|ok(?:ay)?|right|hello|hi|hey)\b[\s,!.:-]*)+", "", sentence,
               flags=re.IGNORECASE)
    k = re.sub(r"^[A-Z][a-z]+\s+here\b[\s,.:-]*", "", k)  # ("Bernie here, ...")
    head, colon, tail = k.partition(": ")

    def told(text: str, past: bool = True) -> bool:
        first = re.split(r"[,;]|\s+(?:and|but|because|so)\s+", text, maxsplit=1)[0]
        return bool(_FIRST_PERSON_WORD.search(first) or (past and past_tense(first))) and \
            not RULE_OR_NEGATION.search(first)
    if not told(head) or any(i.kind in STRONG_KINDS - {"name"} and (
            i.kind != "number" or any(c.isdigit() for c in i.text)) for i in items(k)):
        # (a story that gives values may hold the rule in them: "... in the end it isn't
        # the server at all (the role is capped with CONNECTION LIMIT 8, ...)")
        return sentence
    # (what somebody said or explained is told in the past by its nature; only the
    # writer's own part of it is the story)
    if colon and not told(tail, past=False):
        return tail
    # ("Then Tomasz explained that X": what was explained)
    said = strip_frame(re.sub(r"^(?:then|and)\s+", "", k, flags=re.IGNORECASE))
    return said if said != k and not told(said, past=False) else ""


_FIRST_PERSON_WORD = re.compile(r"\b(?:i|i'm|i've|i'd|me|my|we|we're|we've|our|us)\b",
                                re.IGNORECASE)
#: The turn from an announced story to its point: "Anyway ...".
_STORY_ENDS = re.compile(r"(?:(?<=[.!?])[ \t]+|(?<=\n))anyway\b[ \t]*[,.!:]?[ \t]*", re.IGNORECASE)


#: The writer's plain restatement of what the paragraph said in verse or in jest: "(Plain
#: version: internal certs come from the easy-rsa CA on kiln, ...)", "(Boring version:
#: ...)", "In plain words: ...".
_PLAIN_LABEL = (r"(?:(?:plain|boring|short|serious|sober|prose|real|non-rhyming|grown-up)[ \t]+"
                r"version|in[ \t]+plain[ \t]+(?:english|words|terms)|in[ \t]+other[ \t]+words|"
                r"translation|tl;?dr)[ \t]*:[ \t]*")
_PLAIN_VERSION = re.compile(r"\(" + _PLAIN_LABEL + r"(?P<plain>[^()]*(?:\([^()]*\)[^()]*)*)\)"
                            r"[ \t]*[.!]?[ \t]*$|(?:^|(?<=[.!?'\"\u2019\u201d])[ \t]+)"
                            + _PLAIN_LABEL + r"(?P<bare>[^()\n]+(?:\([^()\n]*\)[^()\n]*)*)$",
                            re.IGNORECASE)


def plain_version_read(text: str) -> str:
    """A paragraph that ends with its own plain version ("No Let's Encrypt for names that
    end .internal, / our own CA on kiln makes the process eternal: ... (Plain version:
    internal certs come from the easy-rsa CA on kiln, ...)") reads as the plain version:
    the writer says it is what the rest means. A plain version in a paragraph of its own
    stands for the paragraph before it (the verse)."""
    blocks = re.split(r"(\n[ \t]*\n)", text)
    for i in range(0, len(blocks), 2):
        m = _PLAIN_VERSION.search(blocks[i].rstrip())
        plain = ((m.group("plain") or m.group("bare") or "").strip() if m else "")
        if m and len(tokens(plain)) >= 4:
            blocks[i] = _capital(plain[:1], plain[1:]) + plain[1:] + (
                "" if plain.endswith((".", "!")) else ".")
            if m.start() == 0 and i >= 2:
                blocks[i - 2] = ""  # (the verse it restates)
    return "".join(blocks)


def joke_removed(text: str) -> str:
    """What the writer says before turning to the rule with "Joking aside:" or "But
    seriously," is the joke ("The last person who tried it wore the Vest of Shame at the
    post-mortem. Joking aside: X is banned." reads "X is banned."), and what a story the
    writer announced ("So, long story, but ...") tells before "Anyway" is the story. For
    a joke, the sentences of its paragraph before the turn go, up to one that states a
    rule (a modal, "never", "only", a ban), which stays; for a story, the announcement and
    the sentences told in the past with no rule word go, and what it says in the present
    ("The proofer is profiled centrally ...") stays."""
    m = _JOKE_ENDS.search(text)
    if m is None and _LAUGH_OPENS.match(text):
        # ("Ha, 'stop the firewall'. The last person who did that got to cycle in at 11pm.
        # House rule: never ...": a message that opens laughing turns at "House rule:" or
        # "For the record though,")
        m = _JOKE_TURNS.search(text)
    told = None
    if not m:
        told = _STORY_ANNOUNCED.search(text)
        m = _STORY_ENDS.search(text, told.end()) if told else None
    unannounced = False
    if not m:
        # ("So I asked about this because the office manager sent round that email ... and
        # we had the big row last month ... Anyway the thing nobody tells you is X": a
        # story the writer tells before turning to the point, unannounced)
        m = _STORY_ENDS.search(text)
        start = text.rfind("\n", 0, m.start()) + 1 if m else 0
        before = split_sentences(text[start:m.start()]) if m else []
        unannounced = bool(before) and bool(_FIRST_PERSON_WORD.search(before[0])) and any(
            past_tense(b) for b in before)
        if not unannounced:
            return text
    if m is None:
        return text
    start = text.rfind("\n", 0, m.start()) + 1
    kept = split_sentences(text[start:m.start()])
    if unannounced:
        # (what the writer tells of themselves or of what happened goes; a rule said on
        # the way stays, and so does what somebody explained: "Tomasz explained it to me:
        # X" keeps X)
        kept = [k for k in (_told_by_writer(k) for k in kept) if k]
    elif told is None:
        while kept and not RULE_OR_NEGATION.search(kept[-1]):
            kept.pop()
    else:
        # (told in the past: its first clause is; "... so proofs are meant to look a bit
        # washed out" is the present with participles)
        # ("... Mirela pointed out to me that all booking times are stored as X": what
        # was said is told in the present)
        kept = [k for k in kept if not _STORY_ANNOUNCED.search(k) and not (
            clause_in_past(re.split(r"[,;]|:(?!\d)|\band\b", strip_frame(k), maxsplit=1)[0])
            and not RULE_OR_NEGATION.search(k) and not re.search(
                r"\b(?:should|nobody|no\s+one|must|need\s+to|has\s+to|have\s+to)\b", k,
                re.IGNORECASE))]
    rest = text[m.end():]
    head = " ".join(kept)
    return text[:start] + (head + " " if head else "") + rest[:1].upper() + rest[1:]


#: One of a run of questions about what holds, put with "is/are" first ("Isn't X just a
#: link to Y?", "And aren't Z never to be pasted into email?").
_BE_QUESTION = re.compile(r"(?P<lead>^|(?<=[.!?])[ \t]+|\n[ \t]*)(?:(?:and|also|plus)[ \t]+)?"
                          r"(?P<aux>isn't|aren't|wasn't|weren't|is|are|was|were)(?:[ \t]+not)?"
                          r"[ \t]+(?P<x>[^?\n]{8,300}?)[ \t]*\?", re.IGNORECASE)
#: The writer's own "yes" to every question before it: "Yes to both.", "Yes, all three.",
#: "Yes and yes.", "Both yes.", "Yes on both counts."
_YES_TO_ALL = re.compile(r"[ \t]*(?:(?:yes|yep|yeah)[ \t]*(?:,[ \t]*|to[ \t]+|on[ \t]+|"
                         r"and[ \t]+yes\b)"
                         r"[ \t]*(?:(?:both|all|each|every)\b(?:[ \t]+(?:of[ \t]+them|two|three|"
                         r"four|counts|questions))?)?|(?:both|all[ \t]+(?:three|four))[ \t]+"
                         r"(?:yes|true))"
                         r"[ \t]*[.!]*", re.IGNORECASE)
#: Where a question's subject ends: the first of these words after it ("Isn't
#: ~/Pictures/Screenshots on the dispatch PCs | just a link ...").
_PREDICATE_START = re.compile(r"\b(?:just|simply|actually|really|still|always|never|only|not|"
                              r"also|supposed|meant|allowed|forbidden|banned|blocked|required|"
                              r"kept|set|stored|locked)\b", re.IGNORECASE)


def _be_statement(aux: str, x: str) -> str:
    """"Isn't" + "X just a link to Y" -> "X is just a link to Y" ("" when no word says
    where the subject ends)."""
    m = _PREDICATE_START.search(x, x.find(" ") + 1) if " " in x else None
    if m is None:
        m = re.search(r"\b(?:the|a|an)\b", x[x.find(" ") + 1:]) if " " in x else None
        if m is None:
            return ""
        at = x.find(" ") + 1 + m.start()
    else:
        at = m.start()
    subj, rest = x[:at].rstrip(), x[at:]
    verb = re.sub(r"n't$", "", aux.lower())
    return f"{subj[:1].upper()}{subj[1:]} {verb} {rest}."


def affirmed_questions_as_statements(text: str) -> str:
    """A run of yes/no questions about what holds that the writer answers yes to all at
    once ("Isn't X just a link to Y? And aren't Z never to be pasted into email? Yes to
    both.") states each: "X is just a link to Y. Z are never to be pasted into email."
    A run where some question's subject cannot be told from its predicate stays as
    written."""
    out, pos = [], 0
    while True:
        run = []
        m = _BE_QUESTION.search(text, pos)
        if m is None:
            break
        end = m.end()
        run.append(m)
        while (nxt := _BE_QUESTION.match(text, end)) is not None:
            run.append(nxt)
            end = nxt.end()
        yes = _YES_TO_ALL.match(text, end)
        said = [_be_statement(q.group("aux"), q.group("x")) for q in run]
        if yes is None or not yes.group(0).strip() or (len(run) < 2 and not re.search(
                r"\b(?:both|all|each|every)\b", yes.group(0), re.IGNORECASE)) or not all(said):
            out.append(text[pos:m.end()])
            pos = m.end()
            continue
        out.append(text[pos:run[0].start()] + run[0].group("lead") + " ".join(said))
        pos = yes.end()
    out.append(text[pos:])
    return "".join(out)


#: A quoted yes/no question (a reply's "> Can I just run X on Y?") and the reply's "No"
#: under it ("No, please don't.", "No please don't, it rewrites ...").
_QUOTED_QUESTION_NO = re.compile(
    r"^[ \t]*>[ \t]*(?P<q>(?i:do|does|can|should|must|may)[ \t]+[^?\n]{3,160}?)[ \t]*\?[ \t]*\n"
    r"(?:[ \t]*>?[ \t]*\n)*[ \t]*(?P<no>(?i:no|nope)\b[ \t,.!\u2014\u2013-]*(?:(?i:please[ \t]+)?"
    r"(?i:don'?t|do[ \t]+not)[ \t]*[,.!]+[ \t]*)?)(?P<next>[a-z]?)", re.MULTILINE)
#: (only a "don't" that ends its clause goes with the "No": "No, please don't touch Users"
#: keeps "please don't touch Users")


def quoted_question_answered(text: str) -> str:
    """A question quoted in a reply and answered "No" under it says what it asks, denied:
    "> Can I just run certbot --apache on slipway?" over "No please don't, it rewrites our
    vhost files." reads "You cannot run certbot --apache on slipway. It rewrites our vhost
    files." (the quoted line alone is the asker's and goes, and "No" alone states
    nothing)."""
    def said(m: re.Match[str]) -> str:
        out = _said_outright(m.group("q").strip(), "No.", _ASKED_IN_PROSE)
        if not out:
            return m.group(0)
        # (what follows "No please don't," starts a sentence)
        return f"{out} {m.group('next').upper()}"
    return _QUOTED_QUESTION_NO.sub(said, text)


def answered_questions_as_statements(text: str) -> str:
    """A yes/no question its writer answers at once, in prose, said as the statement it
    makes: "Can staff open firewall ports on their own laptop? No." -> "Staff cannot
    open firewall ports on their own laptop."; "Is GUFW allowed? No." -> "GUFW is not
    allowed."; "Also no, ..." answers the same way. (Only a subject that is a pronoun,
    a group named by a plural or a name: where a noun phrase ends in "Is the backup disk
    full?" is not read here, and the question stays.)"""
    def statement(m: re.Match[str]) -> str:
        reply = re.sub(r"^(\w+)[ \t]*(?:[\u2014\u2013]|-(?!\w))[ \t]*", r"\1, ",
                       m.group("a").strip())  # ("No - bookings go ...": "No, bookings ...")
        said = _said_outright(m.group("q").strip(), reply, _ASKED_IN_PROSE)
        # ("Do we even still run X? No" -> "We do not run X")
        said = re.sub(r"(?<=\bnot) (?:(?:even|still|really|actually|ever) )+", " ", said)
        return m.group("lead") + said.replace(" can not ", " cannot ") if said else m.group(0)
    return _ANSWERED_QUESTION.sub(statement, text)


def _said_outright(question: str, answer: str, asked: re.Pattern[str] = _ASKED) -> str:
    """"Should we add a default partition?" answered "No, deliberately not. A failed
    insert is our alarm." says "We should not add a default partition, deliberately not. A
    failed insert is our alarm." ("" when the question or the reply has another shape)."""
    q, r = asked.match(question), _REPLY.match(answer)
    if q is None or r is None:
        return ""
    aux, subj, rest = q.group("aux").lower(), q.group("subj"), q.group("rest")
    rest = re.sub(r"^(?:just|simply)\s+", "", rest, flags=re.IGNORECASE)  # ("Can I just run X?")
    negative = r.group("word").lower() in ("no", "nope", "never")
    if subj.lower() == "i":  # the asker: the reader of the nugget
        subj, rest = "you", _second_person(rest)
        aux = {"am": "are"}.get(aux, aux)
    if subj[:1].islower() or re.fullmatch(r"(?i:we|i|you|they|it)", subj):
        subj = subj[0].upper() + subj[1:].lower()  # (a name keeps its case: "GUFW")
    if aux in ("do", "does"):
        verb = ("do not " if aux == "do" else "does not ") if negative else ""
    else:
        verb = f"{aux} not " if negative else f"{aux} "
    more = (r.group("more") or "").strip(" ,")
    tail = answer[r.end():].strip()
    verb = "cannot " if verb == "can not " else verb
    return f"{subj} {verb}{rest}" + (f", {more}" if more else "") + "." + \
        (f" {tail}" if tail else "")


def qa_pairs_as_statements(text: str) -> str:
    """Self-answered questions ("Q: how long must it be? A: 14 characters minimum.") as
    statements that keep what was asked: "How long must it be: 14 characters minimum."
    (the asker's "I" is the reader's "you"); a yes/no question goes in parentheses after
    the answer's first sentence ("No (can the desk use Super+L). ..."). Without this the
    question is dropped as a question and the answer is left without its subject."""
    if not _QA_PAIR.search(text):
        return text

    def asker(question: str) -> str:
        question = re.sub(r"\bam(?=\s+i\b)", "are", question, flags=re.IGNORECASE)
        return re.sub(r"\b(?:" + "|".join(sorted(SECOND_PERSON, key=len, reverse=True)) + r")\b",
                      lambda m: SECOND_PERSON[m.group(0).lower()], question,
                      flags=re.IGNORECASE)

    def pair(m: re.Match[str]) -> str:
        raw = m.group("q").rstrip("? ").strip()
        question = asker(raw)
        answer = m.group("a").strip()
        said = _said_outright(raw, answer)
        if said:
            return said
        if _YES_NO.match(question):
            first, *rest = split_sentences(answer) or [answer]
            head = first.rstrip(".!?;")
            mark = first[len(head):] or "."
            return f"{head} ({question[0].lower()}{question[1:]}){mark} {' '.join(rest)}".strip()
        end = "" if answer[-1:] in ".!?" else "."
        return f"{question[0].upper()}{question[1:]}: {answer}{end}"

    return _QA_PAIR.sub(pair, text)


#: The fields of a report form and what each holds: the answer as the writer saw it
#: ("Actual:"), the report's own bookkeeping ("Component:", "Priority:"), what should
#: have been said ("Expected:"), free text ("Notes:", "Details:") and where it applies
#: ("Host:", "Site:").
_FORM_ROLES = {
    **dict.fromkeys(("actual", "actual result", "actual behaviour", "actual behavior",
                     "observed", "observed behaviour", "observed behavior", "got",
                     "answer given", "bot said", "assistant said", "current answer"),
                    "answer"),
    **dict.fromkeys(("component", "area", "module", "category", "priority", "severity",
                     "ticket", "status", "type", "reporter", "reported by", "queue",
                     "labels", "label"), "meta"),
    **dict.fromkeys(("expected", "expected result", "expected behaviour",
                     "expected behavior", "should be", "correct answer", "right answer"),
                    "expected"),
    **dict.fromkeys(("notes", "note", "details", "detail", "description", "comment",
                     "comments", "info", "additional info", "more info", "summary", "impact",
                     "reason", "rationale", "risk", "cause", "root cause", "why", "fix",
                     "workaround", "resolution", "solution", "correct", "correction",
                     "standard", "rule", "policy", "context", "background"), "note"),
    **dict.fromkeys(("refs", "ref", "references", "see also"), "meta"),
    **dict.fromkeys(("steps to reproduce", "steps", "repro"), "note"),
    **dict.fromkeys(("host", "hostname", "machine", "server", "device", "site", "location",
                     "room", "environment", "env", "cluster", "system", "building",
                     "applies to", "scope", "platform", "database", "db"), "scope"),
}
_FORM_FIELD = re.compile(r"(?:^|(?<=[\s.;|]))(?P<label>(?i:" + "|".join(
    re.escape(k).replace(r"\ ", r"[ \t]+") for k in sorted(_FORM_ROLES, key=len, reverse=True))
    + r"))(?:[ \t]*\((?P<whose>[^()\n]{1,30})\))?[ \t]*:[ \t]+(?=\S)", re.MULTILINE)
#: A field's value that reports the answer: "answer says rw", "told me to reboot", "(per
#: bot)".
_REPORTS_ANSWER = re.compile(r"^(?:the\s+)?(?:answer|bot|assistant|reply|it|you)?\s*(?:says|said|"
                             r"told(?:\s+me)?\s+to|told\s+me|tells\s+me|suggested|suggests|"
                             r"claims|claimed|wrote|recommends|recommended)\b|"
                             r"^(?:answer|bot|assistant)\b", re.IGNORECASE)
_ANSWER_SOURCE = re.compile(r"\b(?:per|by|from|says?|according\s+to)?\s*(?:the\s+)?(?:bot|"
                            r"assistant|answer|ai|chatbot)\b", re.IGNORECASE)


def _field_role(label: str, whose: str, value: str, answer: str) -> str:
    """What a field holds. "Actual:" is what happened in a bug report, but in feedback on an
    answer it is as often the answer itself: it is the answer's when its value reports or
    repeats the answer ("answer says rw", a quoted step the answer gave); "Expected (per
    bot):" is the answer's by its own note."""
    role = _FORM_ROLES[" ".join(label.lower().split())]
    if role not in ("answer", "expected"):
        return role
    if whose and _ANSWER_SOURCE.search(whose):
        return "answer"
    if _REPORTS_ANSWER.match(value.strip(" '\"`")):
        return "answer"
    if role == "answer" and answer:
        said = content_stems(answer)
        mine = content_stems(value)
        if mine and len(mine & said) < 0.5 * len(mine):
            return "note"  # "Actual: after a second one of them fails ...": what happens
    return role


def _form_fields(text: str) -> tuple[list[re.Match[str]], list[str], bool]:
    """A form's fields, what each holds, and whether the form is a ticket: three fields or
    more that open their lines, two of them its bookkeeping ("TICKET: DBA-4471", "TYPE:
    correction", "RULE: ...", "STATUS: closed")."""
    fields = [m for m in _FORM_FIELD.finditer(text)
              if m.group("label")[0].isupper() or m.start() == 0 or text[m.start() - 1] == "\n"]
    labelled = [_FORM_ROLES[" ".join(m.group("label").lower().split())] for m in fields]
    ticket = sum(m.start() == 0 or text[m.start() - 1] == "\n" for m in fields) >= 3 and \
        labelled.count("meta") >= 2
    return fields, labelled, ticket


def _ticket_form(text: str) -> bool:
    return _form_fields(text)[2]


def form_fields_as_lines(text: str, answer: str = "") -> str:
    """A report written as a form ("Component: Screen lock Expected: ... Actual: ...
    Notes: ...", on one line or several) read field by field: what the answer said
    ("Actual:") and the form's bookkeeping ("Component:", "Priority:") go; what should have
    been said and free text stay as statements without their labels; where it applies
    ("Host: obs-07") goes in brackets after the first sentence of the free text ("... is
    held (host obs-07)."). A field that opens its line ends with that line. Only a
    message with two or more such fields, one of them an expected or actual one, is a
    form; or a ticket: three fields or more at line starts, two of them bookkeeping."""
    fields, labelled, ticket = _form_fields(text)
    if len(fields) < 2 or not ({"answer", "expected"} & set(labelled) or ticket):
        return text
    roles = []
    for i, m in enumerate(fields):
        end = fields[i + 1].start() if i + 1 < len(fields) else len(text)
        roles.append(_field_role(m.group("label"), m.group("whose") or "",
                                 text[m.end():end].split("\n", 1)[0], answer))
    preamble = text[:fields[0].start()].strip()
    if ticket and re.fullmatch(r"(?i:ticket|case|incident|request|issue|change)\s*[#:]?\s*"
                               r"[\w.-]+", preamble):
        preamble = ""  # "TICKET IT-OPS-4471" over the fields: the ticket's number
    out = [(preamble, "note")]
    scopes = []
    for i, (m, role) in enumerate(zip(fields, roles, strict=True)):
        end = fields[i + 1].start() if i + 1 < len(fields) else len(text)
        line_end = text.find("\n", m.end())
        after = ""
        if 0 <= line_end < end and (m.start() == 0 or text[m.start() - 1] == "\n"):
            # "Actual: answer says rw" then "/export/raw is ...": the writer's own text
            after, end = text[line_end:end].strip(), line_end
        value = text[m.end():end].strip().rstrip(";,|").strip()
        if role == "scope" and value:
            scopes.append(f"{m.group('label').lower()} {value.rstrip('.')}")
        elif value and role not in ("answer", "meta"):
            out.append((value if value.endswith((".", "!", "?")) else value + ".", role))
        if after:
            out.append((after, "note"))
    kept = [(p, r) for p, r in out if p]
    if not scopes:
        return "\n".join(p for p, _ in kept)
    if not kept:
        return "\n".join(f"{s[0].upper()}{s[1:]}." for s in scopes)
    # (the scope goes with the free text, which states the facts, before what should have
    # been said, which often describes the answer: "Expected: say the kernel is held")
    at = next((i for i, (_, r) in enumerate(kept) if r == "note"), 0)
    first = kept[at][0]
    stop = re.search(r"[.!?](?=\s|$)", first)
    cut = stop.start() if stop else len(first)
    kept[at] = (f"{first[:cut].rstrip()} ({'; '.join(scopes)}){first[cut:]}", "note")
    return "\n".join(p for p, _ in kept)


#: A line of pasted log output: a syslog or ISO timestamp with seconds, or a program
#: with its process id ("chronyd[612]: ..."), at the start of the line.
#: What dpkg, apt and apt-cache print: "Setting up x (1.2-3) ...", "Processing triggers for
#: man-db (2.11.2-2) ...", "I: /vmlinuz.old is now a symlink ...", apt-cache policy's
#: "Installed: 1.2-3", "Version table:", " *** 22.05.8-4+nurc2 500", "500 https://... Packages".
_PACKAGE_TOOL_LINE = re.compile(
    r"^[ \t]*(?:(?:Setting\s+up|Unpacking|Preparing\s+to\s+unpack|Selecting\s+previously\s+"
    r"unselected\s+package|Processing\s+triggers\s+for|Removing|Purging\s+configuration\s+"
    r"files\s+for)\s+\S+(?:\s+\([^)\n]*\))?\s*(?:\.\.\.)?[ \t]*$|[IWEN]:[ \t][^\n]*$|"
    r"update-initramfs:[^\n]*$|(?:Installed|Candidate):[ \t]+\S+[ \t]*$|Version\s+table:[ \t]*$|"
    r"(?:\*\*\*[ \t]+)?\d[\w.:~+-]*[ \t]+-?\d{1,4}[ \t]*$|"
    r"-?\d{1,4}[ \t]+(?:https?://\S+|/var/lib/dpkg/status)\b[^\n]*$)", re.MULTILINE)


def _package_tool_output_removed(text: str) -> str:
    """Two or more lines of dpkg, apt or apt-cache output go (the lines the writer pasted
    from a package tool); one such line alone stays."""
    if len(_PACKAGE_TOOL_LINE.findall(text)) < 2:
        return text
    return _PACKAGE_TOOL_LINE.sub("", text)


_LOG_LINE = re.compile(r"^[ \t]*(?:(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[ \t]+\d{1,2}"
                       r"[ \t]+\d{2}:\d{2}:\d{2}\b|\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}"
                       r"(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?|[\w.@/-]+\[\d+\]:|"
                       # a program's own error line ("psql: error: ...", "ERROR:  deadlock
                       # detected", "FATAL:  password authentication failed")
                       r"[\w.-]+:[ \t]+(?:error|fatal|warning|panic|detail|hint|notice):|"
                       # GLib's "(org.gnome.Nautilus:4123): GVFS-WARNING **: ..."
                       # a web or print server's log: "E [12/Mar/2024:10:14:05 +0000] ...",
                       # "10.0.0.7 - - [03/Mar/2024:02:14:07 +0000] "GET / HTTP/1.1" 200"
                       r"(?:[A-Z][ \t]+|[\w.:-]+[ \t]+-[ \t]+\S+[ \t]+)?"
                       r"\[\d{1,2}/[A-Z][a-z]{2}/\d{4}:\d{2}:\d{2}:\d{2}(?:[ \t][+-]\d{4})?\]|"
                       r"(?:\*\*[ \t]*)?\([\w.-]+:\d+\):[ \t]+[\w-]*"
                       r"(?:WARNING|CRITICAL|ERROR|DEBUG|MESSAGE)"
                       r"\b|"
                       r"(?:ERROR|FATAL|PANIC|DETAIL|HINT|CONTEXT|STATEMENT|LOG):[ \t]{2}|"
                       # apt update's own lines: "Err:1 http://deb.debian.org/debian bookworm
                       # InRelease" (the indented reason under it continues it), "Hit:2 ..."
                       r"(?:Err|Hit|Get|Ign):\d+[ \t]+\S|"
                       # the kernel's ring buffer: "[ 8812.441203] ata2.00: ..."
                       r"\[[ \t]*\d+\.\d{3,}\][ \t]|"
                       # a query plan: "Seq Scan on t  (cost=0.00..98.40 rows=1 width=212)",
                       # "Planning Time: 0.213 ms", "QUERY PLAN", a psql prompt or a row count
                       r"[^\n]*\(cost=\d|(?:Planning|Execution)[ \t]+Time:|QUERY PLAN\b|"
                       r"-{5,}[ \t]*$|-{3,}(?:\+-{3,})+[ \t]*$|\(\d+ rows?\)[ \t]*$|"
                       r"[\w-]+=[*!(']?[>#][ \t]|"
                       # psql's own status lines: "Time: 3.112 ms", "Timing is on."
                       r"Time:[ \t]+\d+(?:\.\d+)?[ \t]+ms\b|(?:Timing|Expanded[ \t]+display|"
                       r"Pager[ \t]+usage|Null[ \t]+display)[ \t]+is\b[^\n]*\.[ \t]*$|"
                       # systemctl status and wget chatter
                       r"[●○×][ \t]+\S+\.(?:service|timer|socket|mount)\b|(?:Loaded|Active|Docs|"
                       r"Main PID|Tasks|Memory|CPU|CGroup|TriggeredBy):[ \t]|(?:Connecting to|"
                       r"Resolving|HTTP request sent|Proxy request sent|Length:|Saving to:)[ \t,]|"
                       # a shell prompt: the command the writer ran, not a statement
                       # ("$ df -h", "ops@bastion:~$ psql ...")
                       r"(?:[\w.-]+@[\w.-]+:[^\s$#]*[$#]|\$)[ \t]+\S)[^\n]*"
                       # and the indented lines that continue it
                       r"(?:\n[ \t]+\S[^\n]*)*$", re.MULTILINE)


#: A program's diagnostic: "lpstat: Unable to locate printer ...", "ssh: Could not resolve
#: hostname ...", "cp: cannot stat 'x': No such file or directory" (the program's name is no
#: English word: "note: cannot be changed" is the writer's).
_DIAGNOSTIC = re.compile(r"^[ \t]*(?P<prog>[a-z][\w.-]*):[ \t]+(?:[\w/.'-]+:[ \t]+)?"
                         r"(?i:unable[ \t]+to|cannot|can't|could[ \t]+not|couldn't|"
                         r"failed[ \t]+to|no[ \t]+such|permission[ \t]+denied|"
                         r"connection[ \t]+refused)\b[^\n]*$\n?",
                         re.MULTILINE)


_PROGRAM_LINE = re.compile(r"^[ \t]*(?P<prog>[a-z][\w.-]*):[ \t]+\S[^\n]*$\n?", re.MULTILINE)


def _diagnostics_removed(text: str) -> str:
    return _DIAGNOSTIC.sub(lambda m: "" if not english_word(m["prog"]) else m[0], text)


def log_lines_removed(text: str) -> str:
    """Pasted log output goes ("Mar 03 02:14:07 db-2 kernel: ...", "sshd[812]: ...",
    "2024-03-03T02:14:07Z ...", "psql: error: ...", "ERROR:  ...", with the indented
    lines that continue a line): what a program printed once is evidence of an event, not
    a statement of the writer's; the writer's own lines around it stay."""
    removed = _diagnostics_removed(_LOG_LINE.sub("", _PROMPT_BLOCK.sub("", _COLUMN_TABLE.sub(
        "", _APT_LINES.sub("", _log_blocks_removed(_package_tool_output_removed(
            _FENCED_SESSION.sub("", text))))))))
    if _PSQL_PROMPT.search(text):  # a command's tag alone on a line is psql's reply ("SET")
        removed = _COMMAND_TAG.sub("", removed)
    if removed != text:  # beside log output, an "Error: ..." line is output too, and so is
        # a program's line ("mdadm: /dev/md0 has been started with 1 drive")
        removed = _PROGRAM_LINE.sub(lambda m: "" if not english_word(m["prog"]) else m[0],
                                    _LOOSE_ERROR.sub("", removed))
    return removed


#: A program's table: a header of column names in capitals with a wide gap among them
#: ("NAME              SIZE TYPE MOUNTPOINT") and the rows under it up to a blank line.
_COLUMN_TABLE = re.compile(r"^[ \t]*(?=[^\n]*[A-Z][ \t]{2,}[A-Z])"
                           r"[A-Z][A-Z/%-]+"
                           r"(?:[ \t]+[A-Z][A-Z/%-]+){2,}[ \t]*\n(?:[ \t]*\S[^\n]*(?:\n|$))+",
                           re.MULTILINE)
#: apt's error, warning and note lines, two or more: "E: Could not get lock ...".
_APT_LINES = re.compile(r"(?:^[ \t]*[EWN]:[ \t][^\n]*(?:\n|$)){2,}", re.MULTILINE)
def _log_blocks_removed(text: str) -> str:
    """A paragraph that opens and closes with log lines is output all through ("ERROR:
    deadlock detected" / "DETAIL: Process 1 waits ..." / "Process 2 waits ..." / "CONTEXT:
    ..."): the unprefixed lines between are the program's too."""
    parts = re.split(r"(\n[ \t]*\n)", text)
    for i in range(0, len(parts), 2):
        lines = [ln for ln in parts[i].split("\n") if ln.strip()]
        if len(lines) >= 3 and all(_LOG_LINE.fullmatch(ln) for ln in (lines[0], lines[-1])):
            parts[i] = ""
    return "".join(parts)


_PSQL_PROMPT = re.compile(r"^[ \t]*[\w-]+=[*!(']?[>#][ \t]", re.MULTILINE)
_COMMAND_TAG = re.compile(r"^[ \t]*(?:SET|RESET|BEGIN|COMMIT|ROLLBACK|SAVEPOINT|VACUUM|ANALYZE|"
                          r"GRANT|REVOKE|CHECKPOINT|(?:CREATE|ALTER|DROP)[ \t]+(?:TABLE|INDEX|"
                          r"ROLE|VIEW|SCHEMA|EXTENSION|FUNCTION|SEQUENCE)|TRUNCATE[ \t]+TABLE|"
                          r"(?:INSERT[ \t]+\d+|UPDATE|DELETE|SELECT|COPY|MOVE|FETCH)[ \t]+\d+)"
                          r"[ \t]*$\n?", re.MULTILINE)


#: A ticket's header line: "TKT DESK-NET-2291 | status: closed | resolution: user error".
#: (fields split by "|", one of them a status or a resolution; a form's own "Status:"
#: line is read with the form, see form_fields_as_lines)
_TICKET_LINE = re.compile(r"^(?=[^\n]*\|)(?=[^\n]*\b(?i:status|resolution)[ \t]*:)[^\n]*$",
                          re.MULTILINE)
#: A forwarded e-mail's header lines ("From: ...", "Date: ...", two or more) at the top of
#: the message: the writer passes the mail on as what they have to say. (Under the
#: writer's own lines a forwarded thread is quoted, and goes whole: see strip_quoted.)
_MAIL_HEADERS = re.compile(r"\A\s*(?:-{2,}[ \t]*(?i:forwarded message|original message)"
                           r"[ \t]*-*[ \t]*\n)?(?:[ \t]*(?:From|To|Cc|Sent|Date|Subject):"
                           r"[ \t][^\n]*(?:\n|\Z)){2,}")


def bookkeeping_removed(text: str) -> str:
    """A ticket's header line ("TKT 2291 | status: closed") and the header lines of an
    e-mail forwarded as the whole message ("From:", "Date:", "Subject:") go: who, when
    and in what state, not what holds. (And an arrow that opens a line is a list item's
    mark: "-> print to X".)"""
    text = _REVISION_LINE.sub("", _TICKET_LINE.sub("", text))
    return _ARROW_BULLET.sub(r"\1- ", _MAIL_HEADERS.sub("", text))


#: One line of code set apart inside a sentence: "The pipeline runs\n\n```\ndput x\n```\n\n
#: on a tag", "Our line is:\n\ndeb https://...\n\nand it goes in ...". (The sentence goes on
#: in lower case after it; an unfenced line only after a colon.)
_CODE_IN_SENTENCE = re.compile(
    r"(?P<head>[^\s.!?:][ \t]*|:[ \t]*)\n(?:[ \t]*\n)*[ \t]*(?:```|~~~)[\w+-]*[ \t]*\n"
    r"[ \t]*(?P<code>[^\n`]+?)[ \t]*\n[ \t]*(?:```|~~~)[ \t]*\n(?:[ \t]*\n)*(?=[ \t]*[a-z])|"
    r"(?P<head2>:[ \t]*)\n(?:[ \t]*\n)+[ \t]*(?P<code2>[^\n`]{3,200}?)[ \t]*\n(?:[ \t]*\n)+"
    r"(?=[ \t]*(?:and|then|which|but|so|on|in|it|that)\b)")


def code_in_sentence_joined(text: str) -> str:
    """A line of code set apart in the middle of a sentence is quoted where it stands:
    "The pipeline runs `dput rotamo ../*.changes` on a tag"."""
    def join(m: re.Match[str]) -> str:
        head = (m.group("head") or m.group("head2")).rstrip().rstrip(":")  # ("Our line is:")
        code = m.group("code") or m.group("code2")
        return f"{head} `{code.strip()}` "
    return _CODE_IN_SENTENCE.sub(join, text)


#: A page's revision line over its diff: "Wiki: Desktop/Privacy, revision 41 -> 42 (edited
#: by s.lindqvist)", "rev 7 → 8, changed by ops".
_REVISION_LINE = re.compile(r"^[^\n]*\b(?i:revision|rev\.?)[ \t]+\d+(?:[ \t]*(?:->|→|=>)[ \t]*\d+)?"
                            r",?[ \t]*\(?(?i:edited|changed|updated|saved)[ \t]+by[ \t]+[^\n]*$\n?",
                            re.MULTILINE)


_ARROW_BULLET = re.compile(r"^([ \t]*)(?:->|=>|→|⇒)[ \t]+(?=\S)", re.MULTILINE)


#: A command at a shell prompt and what it printed: the lines under it up to a blank
#: line, a list item or a line that ends a sentence ("$ df -h /home" over its table).
#: (A file shown with cat, head, tail or grep is the setting the writer points at: it
#: stays, "$ cat /etc/apt/preferences.d/x" over "Pin-Priority: 1001". An ellipsis ends no
#: sentence: "Adding user `x' to group `y' ...".)
_PROMPT_BLOCK = re.compile(r"^[ \t]*\$[ \t]+(?!(?:sudo[ \t]+)?(?:cat|head|tail|grep|zcat|less|"
                           r"more)\b)\S[^\n]*(?:\n(?![ \t]*(?:$|\d{1,2}[.)][ \t]|[-*\u2022][ \t]|"
                           r"\$[ \t]))(?![^\n]*(?<!\.\.)[.!?:][ \t]*$)[^\n]*)*", re.MULTILINE)


#: "Run this in Terminal and paste it:" over "$ cat /etc/hv-release": the line points at the
#: command under it.
_POINTED_COMMAND = re.compile(
    r"^(?P<lead>[^\n]*\b(?:run|type|enter|paste|use|try|execute)\b[^\n:]{0,40}?)\b"
    r"(?P<this>this|the\s+following|these|that)\b(?P<rest>[^\n:]{0,40}):[ \t]*\n"
    r"(?P<gap>(?:[ \t]*\n)?)(?P<prompt>[ \t]*\$[ \t]+(?P<cmd>\S[^\n]*?))[ \t]*$",
    re.IGNORECASE | re.MULTILINE)


def pointed_command_named(text: str) -> str:
    """A line that points at the shell command under it ("Run this in Terminal:" over
    "$ cat /etc/hv-release") names the command ("Run `cat /etc/hv-release` in Terminal:"):
    the command is what the line says to do, and the prompt block under it may go as
    output."""
    def name(m: re.Match[str]) -> str:
        return (f"{m.group('lead')}`{m.group('cmd').strip('`')}`{m.group('rest')}:\n"
                f"{m.group('gap')}{m.group('prompt')}")
    return _POINTED_COMMAND.sub(name, text)


#: A code block the writer then says in words: "```yaml ... ```\n\ni.e. Firefox ESR is the
#: default ..." (the words are the statement; the block is what they read).
#: A fenced code block, from its opening fence to its closing one (end of line not taken).
_FENCED_BLOCK = (r"[ \t]*(?P<fence>```|~~~)[^\n]*\n(?:(?![ \t]*(?P=fence))[^\n]*\n)*?"
                 r"[ \t]*(?P=fence)[ \t]*")
_RESTATED_CODE = re.compile(r"^" + _FENCED_BLOCK + r"\n(?:[ \t]*\n)*[ \t]*"
                            r"(?:i\.e\.|(?:ie|that[ \t]+is|that[ \t]+means|meaning|in[ \t]+other"
                            r"[ \t]+words|in[ \t]+plain[ \t]+(?:english|words)|translation)\b)"
                            r"[,:]?[ \t]+(?P<first>\w)",
                            re.MULTILINE | re.IGNORECASE)


#: A fenced code block shown as an example, with the sentence that shows it: "For
#: reference, this is what a correct reservation looks like in our DHCP config:" (not
#: "this is what ours looks like:", "our line looks like this:": the house's own lines).
_EXAMPLE_CODE = re.compile(r"(?:(?<=[.!?])[ \t]+|^[ \t]*)[^.!?\n]*(?:\bfor[ \t]+example\b|"
                           r"\be\.g\.|\ban?[ \t]+example\b|\ba[ \t]+sample\b|\bwhat[ \t]+an?"
                           r"[ \t]+(?:[\w-]+[ \t]+){0,3}?looks[ \t]+like\b)[^.!?\n]*:[ \t]*\n"
                           r"(?:[ \t]*\n)*" + _FENCED_BLOCK + r"(?:\n|$)",
                           re.MULTILINE | re.IGNORECASE)


def restated_code_removed(text: str) -> str:
    """A fenced code block the writer then says in words ("i.e. ...", "in other words,
    ...") gives way to the words: they are the statement, the block is what they read;
    one shown as an example ("For reference, this is what X looks like:") goes with the
    sentence that shows it (one host's lines are no rule)."""
    text = _EXAMPLE_CODE.sub("\n", text)
    return _RESTATED_CODE.sub(lambda m: m.group("first").upper(), text)


#: A line labelled with what to do or not to do: "DO: run X", "DON'T: run Y by hand",
#: "Never: Z" (the label is the rule's own word).
_DO_LABEL = re.compile(r"^(?P<lead>[ \t]*(?:[-*+\u2022][ \t]+)?)(?P<label>do|dos|don'?t|don\u2019t|"
                       r"donts|do[ \t]+not|never|avoid)[ \t]*:[ \t]+(?P<first>\w)",
                       re.IGNORECASE | re.MULTILINE)


def do_labels_read(text: str) -> str:
    """ "DON'T: run migration files by hand" reads "Don't run migration files by hand",
    "DO: run them through the wrapper" reads "Run them through the wrapper": the label of a
    do/don't line is its rule's own verb, and a reader that dropped it as a label would
    publish the opposite."""
    def read(m: re.Match[str]) -> str:
        label = m.group("label").lower().replace("\u2019", "'")
        first = m.group("first")
        if label in ("do", "dos"):
            return f"{m.group('lead')}{first.upper()}"
        said = {"dont": "Don't", "don't": "Don't", "donts": "Don't", "never": "Never",
                "avoid": "Avoid"}.get(label, "Do not")
        # ("DON'T: Run X" -> "Don't run X"; "DON'T: SSH into X" keeps the acronym)
        acronym = bool(re.match(r"[A-Z]{2}", text[m.start("first"):]))
        return f"{m.group('lead')}{said} {first if acronym else first.lower()}"
    return _DO_LABEL.sub(read, text)


#: A file shown at a shell prompt ("$ head -3 /etc/nftables.conf") with its lines under it,
#: then, after them, the writer's word that points back at it ("^ that's the file on every
#: host, ...", "This is our config on all boxes").
_SHOWN_FILE = re.compile(
    r"^[ \t]*\$[ \t]+(?:sudo[ \t]+)?(?P<cmd>cat|head|tail|less|more|bat)(?:[ \t]+-[\w-]+)*[ \t]+"
    r"(?P<path>/[\w./*@:+-]+)[ \t]*\n(?P<out>(?:[ \t]*(?!\$)\S[^\n]*\n)+?)(?:[ \t]*\n)*"
    r"[ \t]*\^?[ \t]*(?P<ptr>(?:that|this)(?:'s|[ \t]+is)[ \t]+(?=(?:the|our)[ \t]+(?:file|"
    r"config|configuration|conf|setup|one|version|copy|header|start)\b))",
    re.MULTILINE | re.IGNORECASE)


#: ... or announced before it, by a line that ends in a colon.
_ANNOUNCED_FILE = re.compile(
    r"(?<=:)[ \t]*\n(?:[ \t]*\n)*[ \t]*\$[ \t]+(?:sudo[ \t]+)?(?:cat|head|tail|less|more|bat)"
    r"(?:[ \t]+-[\w-]+)*[ \t]+(?P<path>/[\w./*@:+-]+)[ \t]*\n(?P<out>(?:[ \t]*(?!\$)\S[^\n]*"
    r"(?:\n|$))+)")


def shown_file_read(text: str) -> str:
    """A file shown at a shell prompt, with the writer's word about it after its lines,
    reads as sentences about the file by name: "$ head -3 /etc/nftables.conf" over
    "flush ruleset" and 'include "/etc/nftables.d/*.nft"', then "^ that's the file on every
    one of our hosts", reads '/etc/nftables.conf: flush ruleset; include
    "/etc/nftables.d/*.nft".' and "/etc/nftables.conf is the file on every one of our
    hosts" (no word the writer did not write). (Its comment lines, a "#!" among them, are
    not its settings; a file shown with no word after it is left to the setting
    readers.)"""
    def read(m: re.Match[str]) -> str:
        lines = [ln.strip() for ln in m.group("out").splitlines()
                 if ln.strip() and not ln.strip().startswith("#")]
        if not lines:
            return m.group(0)
        path = m.group("path")
        return f"{path}: {'; '.join(ln.rstrip(';') for ln in lines)}.\n\n{path} is "
    text = _SHOWN_FILE.sub(read, text)

    def announced(m: re.Match[str]) -> str:
        lines = [ln.strip() for ln in m.group("out").splitlines()
                 if ln.strip() and not ln.strip().startswith("#")]
        head = (split_sentences(text[:m.start()].rsplit("\n", 1)[-1]) or [""])[-1]
        if not lines or _POINTED_COMMAND.match(head) or re.match(
                r"(?i)\s*(?:run|type|enter|paste|use|try|execute)\b", head):
            return m.group(0)  # ("Run this in Terminal and paste it:": a step, not a file)
        # (its lines as code, whose case is the file's: "%admins ALL=(ALL:ALL) ALL")
        return f"\n{m.group('path')}: {'; '.join(f'`{ln.rstrip(chr(59))}`' for ln in lines)}.\n"
    # ("This is what goes on every club machine:" over "$ cat /etc/apt/apt.conf.d/01proxy"
    # and its lines: the head announces the file, which keeps its name)
    return _ANNOUNCED_FILE.sub(announced, text)


#: A code block that opens with a command at a shell prompt (not a file shown with cat):
#: the command and everything it printed, up to the closing fence.
_FENCED_SESSION = re.compile(r"^[ \t]*(?P<fence>```|~~~)[\w+-]*[ \t]*\n(?:[ \t]*\n)*[ \t]*\$[ \t]+"
                             r"(?!(?:sudo[ \t]+)?(?:cat|head|tail|grep|zcat|less|more)\b)"
                             r"[^\n]*\n(?:(?![ \t]*(?P=fence))[^\n]*\n)*?"
                             r"[ \t]*(?P=fence)[ \t]*$\n?", re.MULTILINE)


_LOOSE_ERROR = re.compile(r"^[ \t]*(?:Error|Warning|Fatal|Exception|Traceback)\b[^\n]*$",
                          re.MULTILINE)


#: A commit message's bookkeeping: its header ("fix(bot): don't recommend money") says
#: what changed in the answer, its trailers ("Refs: OPS-12", "Signed-off-by: ...") who and
#: where; the body between them is the writer's text.
_COMMIT_LINE = re.compile(
    r"^[ \t]*(?:(?:fix|feat|chore|docs|refactor|style|test|perf|build|ci|revert)"
    r"(?:\([^)\n]*\))?!?:[ \t][^\n]*|(?:refs?|references|fixes|closes|resolves|see|ticket|"
    r"jira|issue|signed-off-by|co-authored-by|reviewed-by|acked-by):[ \t]*[^\n]{1,80})$",
    re.IGNORECASE | re.MULTILINE)


#: A closing alone on its line ("Kind regards", "Thanks,") or the "-- " line over a
#: signature.
_CLOSING_LINE = re.compile(r"^[ \t]*(?:(?i:" + CLOSING + r")[ \t]*[,!.]?|--[ \t]?)[ \t]*$",
                           re.MULTILINE)
#: What marks the lines under a closing as a signature: an address, a telephone, a web
#: page, a legal notice.
_SIGNATURE_MARK = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+|\bwww\.|https?://|(?i:\b(?:tel|phone|"
                             r"mobile|mob|fax|cell)\b\.?:?)|\+\d[\d ()-]{6,}|(?i:confidential|"
                             r"intended recipient|disclaimer|registered (?:office|in)|"
                             r"before printing)")
#: A legal notice under a message: "CONFIDENTIALITY NOTICE: This e-mail and any
#: attachments are confidential ...", to the end of its paragraph.
_LEGAL_NOTICE = re.compile(r"^[ \t]*(?:(?i:confidentiality notice|disclaimer|legal notice)"
                           r"\b|(?i:this (?:e-?mail|message)(?: and any (?:attachments?|files?)"
                           r"(?: transmitted with it)?)? (?:is|are|may (?:be|contain)) "
                           r"(?:confidential|intended|privileged)))[^\n]*(?:\n[ \t]*\S[^\n]*)*",
                           re.MULTILINE)
_POSTSCRIPT = re.compile(r"^[ \t]*(?i:p\.?\s?s\.?)[:,]?[ \t]+\S", re.MULTILINE)


#: A message's last lines, after a blank line: a name and a role under it, with no closing
#: word ("Priya Raman\nHead of IT").
_NAME_AND_ROLE_END = re.compile(
    r"\n[ \t]*\n[ \t]*[A-Z][\w'’.-]+(?:[ \t]+[A-Z][\w'’.-]+){1,2}[ \t]*\n[ \t]*"
    r"(?=[^\n]{0,40}\b(?:Head|Manager|Lead|Director|Administrator|Officer|Engineer|Coordinator|Chair|Supervisor|"
    r"Specialist|Analyst|Technician|Admin|Assistant)\b)[^\n.!?]{2,60}[ \t]*\s*\Z")


#: A name and a role closing the message's last line, after its last sentence: "... do not
#: change. Oksana Hrytsenko, practice manager Riverside Quay" (a sign-off without a
#: closing word; no word of the name is an English word, the role has no verb).
_NAME_ROLE_TAIL = re.compile(r"(?<=[.!?])[ \t]+(?P<name>[A-Z][\w'’-]+(?:[ \t]+[A-Z][\w'’.-]+){1,2})"
                             r"[ \t]*,[ \t]*(?P<role>[^\n.!?]{2,60})[.]?\s*\Z")


def _name_role_tail_removed(text: str) -> str:
    m = _NAME_ROLE_TAIL.search(text)
    if m and not any(english_word(w) for w in m["name"].split()) and _verbless(m["role"]) \
            and len(tokens(m["role"])) <= 6:
        return text[:m.start()]
    return text


def signature_removed(text: str) -> str:
    """An e-mail without what is under its closing: a closing alone on its line ("Kind
    regards", "--") with a signature under it (an address, a telephone, a web page, a
    legal notice, or a few lines of name and title with no sentence in them) ends the
    message, but for a postscript ("P.S. ..."). A legal notice goes wherever it is."""
    text = _name_role_tail_removed(_NAME_AND_ROLE_END.sub("", _LEGAL_NOTICE.sub("", text)))
    for m in _CLOSING_LINE.finditer(text):
        if len(tokens(text[:m.start()])) < 3:
            continue
        tail = text[m.end():]
        ps = _POSTSCRIPT.search(tail)
        signature = tail[:ps.start()] if ps else tail
        lines = [ln.strip() for ln in signature.splitlines() if ln.strip()]
        short = len(lines) <= 4 and not any(re.search(r"[.!?]$", ln) and len(tokens(ln)) > 4
                                             for ln in lines)
        if _SIGNATURE_MARK.search(signature) or short:
            return (text[:m.start()].rstrip() + ("\n\n" + tail[ps.start():].strip()
                                                 if ps else "")).strip()
    return text


#: ``git log``'s header over a commit: "commit 4be19c2", "Author: ...", "Date: ...".
_GIT_LOG_HEADER = re.compile(r"^[ \t]*commit[ \t]+[0-9a-f]{7,40}\b[^\n]*\n(?:[ \t]*(?:Author|Date|"
                             r"Merge|AuthorDate|Commit|CommitDate):[^\n]*\n)*",
                             re.IGNORECASE | re.MULTILINE)


def commit_lines_removed(text: str) -> str:
    """A message written as a commit ("fix(bot): ..." over a body, "Refs: X" under it)
    without its header and trailers; only a message with a header is read so, and only
    when text remains. Pasted from ``git log`` (alone or under a line that introduces it),
    the commit's own header goes and its
    message loses the log's indentation and its hard wraps (``wrapped_lines_joined``)."""
    log = _GIT_LOG_HEADER.search(text)
    if log:
        # (a commit body is hard-wrapped at 72 columns: its lines are read as sentences;
        # what comes before the header, "From the config repo's log:", stays)
        head = text[:log.start()].strip()
        body = wrapped_lines_joined(textwrap.dedent(text[log.end():]).strip("\n"),
                                    at_width=True)
        text = f"{head}\n\n{body}" if head else body
    subject = re.match(r"^[ \t]*(?:fix|feat|chore|docs|refactor|style|test|perf|build|ci|revert)"
                       r"(?:\([^)\n]*\))?!?:[ \t]+(?P<says>[^\n]*)", text, re.IGNORECASE)
    if not subject:
        return text
    rest = _COMMIT_LINE.sub("", text).strip()
    says = subject.group("says").strip()
    # (a subject that states how things are, "docs(pki): internal certs come from the
    # internal CA only", is the rule in short; one that says what the commit does, "fix:
    # stop suggesting X", is about the commit)
    if rest and says and says.split()[0].lower() not in INSTRUCTION_VERBS | _COMMIT_VERBS \
            and len(says.split()) >= 4:
        rest = f"{_capital(says[:1], says[1:])}{says[1:].rstrip('.')}.\n\n{rest}"
    return rest or text


#: What a commit's subject says it does: "fix: stop ...", "docs: clarify ...".
_COMMIT_VERBS = frozenset("""fix fixes fixed bump bumps stop make makes document documents
note notes say says tell mention clarify correct drop revert rework refactor tweak tidy
explain improve rewrite reword mark allow prefer pin unpin adjust""".split())


_LIST_START = re.compile(r"^[ \t]*(?:[-*+>\u2022|#]|\d{1,2}[.)](?=[ \t]|$)|[A-Za-z][.)][ \t])")
# a setting, with its comment: "cron.timezone = 'Europe/London'   # schedules are local"
_LONE_PAIR = re.compile(r"^[ \t]*[\w.-]+[ \t]*[=:][ \t]*(?:'[^'\n]*'|\"[^\"\n]*\"|[^\s,]*)"
                        r"[ \t]*(?:(?:#|//|--|;)[^\n]*)?$")


def wrapped_lines_joined(text: str, at_width: bool = False) -> str:
    """Prose hard-wrapped at a fixed width (a commit body, a mail from a text client) as
    the sentences it is: a long line that does not end a sentence, followed by a line that
    goes on in lower case, is one line with it. List items, quoted lines and lone
    settings stay lines. Text known to be wrapped (``at_width``: a commit body from ``git
    log``) goes on whatever the case of the next line ("... and the" / "ACME client must
    not ..."), and after a colon ("Root cert:" / "/usr/local/...")."""
    lines = text.split("\n")
    out: list[str] = []
    goes_on = r"^[ \t]*(?:[a-z]|[A-Z0-9/~*'\"(])" if at_width else r"^[ \t]*[a-z]"
    ends = r"[\w,):]$" if at_width else r"[\w,)]$"
    for line in lines:
        prev = out[-1] if out else ""
        if (len(prev.strip()) >= 40 and re.search(ends, prev.rstrip())
                and re.match(goes_on, line) and not _LIST_START.match(line)
                and not re.match(r"^[ \t]*[\w.@-]{1,24}:[ \t]", line)  # ("sam: ...")
                and not _CHAT_LINE.match(line) and not _SPEAKER_LINE.match(line)
                and not _LIST_START.match(prev) and not _LONE_PAIR.match(line)
                and not _LONE_PAIR.match(prev)):
            out[-1] = prev.rstrip() + " " + line.strip()
        else:
            out.append(line)
    return "\n".join(out)


#: A line that cannot end a sentence: it ends with a comma or with a word that needs what
#: follows ("... which took ages because the door code had changed again" / "and nobody
#: told nights").
_GOES_ON = re.compile(r"(?:,|\b(?:and|or|but|the|a|an|to|of|with|which|that|because|from|"
                      r"in|on|at|for|so|then|when|where|who|is|are|was|were|ever|be|been|by|"
                      r"into|than|has|have|must|can|will|should|would|could)\b)[ \t]*$",
                      re.IGNORECASE)


#: A line of a rota: a day or a date, then who works it ("Sat 11 - Hamza", "Mon  tech
#: DSM: Inês  ASM: Kofi", "4 May: Tomasz").
_ROTA_LINE = re.compile(r"^[ \t]*(?:[-*•][ \t]+)?(?:(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|"
                        r"sun)(?:day|nesday|sday|urday|rsday)?\.?|\d{1,2}(?:st|nd|rd|th)?[ \t]+"
                        r"[A-Za-z]{3,9}|\d{1,2}[/.]\d{1,2}(?:[/.]\d{2,4})?)\b[^\n]{1,80}$",
                        re.IGNORECASE)
#: The title over a rota: "Weekend DBA rota, May", "SM rota wk 37 (Playhouse)".
_ROTA_TITLE = re.compile(r"\b(?:rota|roster|duty\s+list|on-?call\s+(?:list|plan)|cover\s+plan)\b",
                         re.IGNORECASE)


def rota_removed(text: str) -> str:
    """A rota pasted over a rule (its title line, then two lines or more of a day and who
    works it) goes: who is on which Saturday in May is no standing fact; the note under it
    stays ("Note at the bottom of the rota page: reindexing is done only by the weekend
    DBA")."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        j = i + 1
        while j < len(lines) and _ROTA_LINE.match(lines[j]) and _verbless(lines[j]) and \
                not re.search(r"\b(?:only|always|never|must|every)\b", lines[j], re.IGNORECASE):
            j += 1
        if _ROTA_TITLE.search(line) and _verbless(line) and j - i - 1 >= 2 and \
                len(line.split()) <= 12:
            i = j
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


#: Lines labelled with the state before a change and the state after it: "BEFORE: hand-written
#: host files", "AFTER: hosts are generated from the inventory".
# (a note on when may sit between the label and its colon: "AFTER (since the VLAN
# rework):", "New (since the 16 upgrade):")
# ("Old way (before HB-18822):", "New way:", "Previous setup:", "Current process:")
_WAY = r"(?:[ \t]+(?:way|setup|set-up|process|procedure|method|rule|config|version|approach))?"
_BEFORE_LINE = re.compile(r"^[ \t]*(?:[-*•][ \t]+)?(?:the[ \t]+)?(?:before|old" + _WAY
                          + r"|previously|previous" + _WAY + r"|was)"
                          r"(?:[ \t]*\([^()\n]{1,60}\))?[ \t]*:[ \t]*", re.IGNORECASE)
_AFTER_LINE = re.compile(r"^[ \t]*(?:[-*•][ \t]+)?(?:the[ \t]+)?(?:after|new" + _WAY
                         + r"|now|current" + _WAY + r")(?:[ \t]*\((?P<when>[^()\n]"
                         r"{1,60})\))?[ \t]*:[ \t]*(?=\S)", re.IGNORECASE)

#: The after label later in a line that opens with the before label.
_AFTER_IN_LINE = re.compile(r"(?<=[.!;])[ \t]+(?=(?:the[ \t]+)?(?:after|new" + _WAY + r"|now|"
                            r"current" + _WAY + r")(?:[ \t]*\([^()\n]{1,60}\))?[ \t]*:)",
                            re.IGNORECASE)


def before_after_read(text: str) -> str:
    """A change told as "BEFORE:" and "AFTER:" lines leaves what holds after it: the
    before lines state what the change overturned and go (a nugget says only the
    writer's words, and none of them says the old way is gone), the after lines lose
    their label, and a title line that announces the pair ("Before / after, since
    INK-4410:") goes. A message with only one of the two labels is left alone."""
    # ("Old way (2022): X. New way (since the audit): Y." on one line: each label opens
    # a line of its own)
    text = "\n".join(_AFTER_IN_LINE.sub("\n", ln) if _BEFORE_LINE.match(ln) else ln
                     for ln in text.split("\n"))
    lines = text.split("\n")
    if not (any(_BEFORE_LINE.match(ln) for ln in lines) and
            any(_AFTER_LINE.match(ln) for ln in lines)):
        return text
    out = []
    for line in lines:
        if _BEFORE_LINE.match(line):
            continue
        if re.search(r"\bbefore\b", line, re.IGNORECASE) and re.search(
                r"\bafter\b", line, re.IGNORECASE) and line.rstrip().endswith(":") and \
                _verbless(line):
            continue
        m = _AFTER_LINE.match(line)
        if m:
            line = line[:m.start()] + _capital(line[m.end()], line[m.end() + 1:]) + \
                line[m.end() + 1:]
            if m.group("when"):  # ("(since the VLAN rework)" goes after what it dates)
                body = line.rstrip()
                first = re.search(r"[.!](?=\s+[A-Z])", body)  # (its first sentence)
                if first:
                    line = (f"{body[:first.start()]} ({m.group('when')})"
                            f"{body[first.start():]}")
                else:
                    end = body[-1] if body[-1] in ".!" else ""
                    line = f"{body[:len(body) - len(end)]} ({m.group('when')}){end or '.'}"
        out.append(line)
    return "\n".join(out)


#: A statement that runs on into a question: "The CA line sits in ssh_known_hosts on every
#: laptop - so if you still see the prompt, isn't it just that ...?" (the statement stands
#: on its own; the question after the dash is the writer's guess).
_RUNS_ON_INTO = re.compile(r"(?P<lead>^|(?<=[.!?][ \t])|(?<=\n))"
                           r"(?P<stmt>(?:[^.!?\n]|\.(?=\w)){40,}?)[ \t]+(?:[—–]|-{1,2})[ \t]+"
                           r"(?P<q>(?:so|and|but)\b[^.!?\n]*\?)")
_QUESTION_START = re.compile(r"(?:who|what|when|where|why|how|which|is|are|was|were|do|does|did|"
                             r"can|could|should|would|will|has|have|had|isn't|aren't|doesn't|"
                             r"don't|didn't|hasn't|haven't|won't|wouldn't|shouldn't|can't)\b",
                             re.IGNORECASE)


def statement_before_question_split(text: str) -> str:
    """A long statement that runs on into a question after a dash ends where the dash is:
    "X sits in Y on every laptop - so if you still see the prompt, isn't it just Z?" reads
    "X sits in Y on every laptop. So if ... Z?" (a sentence that opens as a question stays
    whole)."""
    def split(m: re.Match[str]) -> str:
        stmt = m.group("stmt").strip()
        if _QUESTION_START.match(stmt) or len(stmt.split()) < 8:
            return m.group(0)
        q = m.group("q")
        return f"{m.group('lead')}{stmt}. {q[:1].upper()}{q[1:]}"
    return _RUNS_ON_INTO.sub(split, text)


#: An analogy that says what holds: "Chromium is to our workstations what WD-40 is to an
#: oxygen system: not approved."
_ANALOGY = re.compile(r"(?P<lead>^|(?<=[.!?][ \t])|(?<=\n))(?P<a>[^.!?:\n]{2,60}?)[ \t]+(?:is|are)"
                      r"[ \t]+to[ \t]+(?P<b>[^.!?:\n]{2,60}?)[ \t]+what[ \t]+[^.!?:\n]{2,60}?[ \t]+"
                      r"(?:is|are)[ \t]+to[ \t]+[^.!?:\n]{2,60}?[ \t]*:[ \t]*(?P<p>[^.!?\n]+)",
                      re.IGNORECASE)


def analogy_as_statement(text: str) -> str:
    """"A is to B what C is to D: P" says "A is P for B" ("Chromium is to our
    workstations what WD-40 is to an oxygen system: not approved." reads "Chromium is not
    approved for our workstations."); the comparison is the writer's colour."""
    return _ANALOGY.sub(lambda m: f"{m.group('a')} is {m.group('p').strip()} for "
                        f"{m.group('b')}", text)


#: A line that goes on from the one before: "and nobody told nights."
_GOES_ON_FROM = re.compile(r"^[ \t]*(?:and|or|but|which|because|so|then|who|whose|where)\b")


def broken_lines_joined(text: str) -> str:
    """Prose broken into short lines (typed on a phone, pasted from a narrow window) as
    the sentences it is: a line that ends with a comma or a word that needs what follows,
    and a next line that goes on in lower case, are one line. List items, chat lines and
    settings stay lines."""
    out: list[str] = []
    fenced = False
    for line in text.split("\n"):
        prev = out[-1] if out else ""
        fence = line.lstrip().startswith(("```", "~~~"))
        fenced ^= fence
        # (never in a code block or at its fence; a data row, "eos-main,10.40.0.10,", is no
        # prose: prose has words)
        if not fenced and not fence and len(prev.split()) >= 3 and \
                not prev.lstrip().startswith(("```", "~~~")) and \
                (_GOES_ON.search(prev) or (_GOES_ON_FROM.match(line) and not re.search(
                r"[.!?:;][ \t]*$", prev))) and re.match(r"^[ \t]*[a-z]", line) \
                and not _LIST_START.match(line) and not _LIST_START.match(prev) \
                and not re.match(r"^[ \t]*[\w.@-]{1,24}:[ \t]", line) \
                and not _CHAT_LINE.match(line) and not _SPEAKER_LINE.match(line) \
                and not _LONE_PAIR.match(line) and not _LONE_PAIR.match(prev):
            out[-1] = prev.rstrip() + " " + line.strip()
        else:
            out.append(line)
    return "\n".join(out)


_BARE_BULLET = re.compile(r"^[ \t]*(?:[-*\u2022]|\d{1,2}[.)])[ \t]+(\S[^\n]{0,40}?)[ \t]*[.;,]?"
                          r"[ \t]*$")


def value_lists_joined(text: str) -> str:
    """A list of bare values under a line that ends in a colon ("Approved extensions:"
    then "- pg_trgm", "- pgcrypto", ...) read as one sentence ("Approved extensions:
    pg_trgm, pgcrypto and postgis."): each value alone says nothing, and a reader that
    drops one value drops part of the rule. Items of three words or more, or with a verb
    of their own, are statements and stay lines."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        values: list[str] = []
        j = i + 1
        if line.rstrip().endswith(":"):
            while j < len(lines) and (m := _BARE_BULLET.match(lines[j])) and \
                    len(m.group(1).split()) <= 2 and not _VERB_LIKE.search(m.group(1)):
                values.append(m.group(1).strip())
                j += 1
        if len(values) >= 2:
            joined = ", ".join(values[:-1]) + " and " + values[-1]
            out.append(f"{line.rstrip()} {joined}.")
            i = j
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


_VERB_LIKE = re.compile(r"\b(?:is|are|was|were|has|have|must|can|can't|cannot|don't|never|"
                        r"not|only|use|run|go)\b", re.IGNORECASE)


#: The first line of an SQL statement written over several lines.
_SQL_START = re.compile(r"^[ \t]*(?:CREATE|ALTER|SELECT|INSERT|UPDATE|DELETE|GRANT|REVOKE|DROP|"
                        r"VACUUM|REINDEX|COPY|TRUNCATE|CLUSTER|COMMENT\s+ON|WITH)\b[^\n]*$")


def sql_statements_joined(text: str) -> str:
    """An SQL statement pasted over several lines ("CREATE INDEX ... gin" / "ON t USING
    GIN (...)" / "TABLESPACE fastssd;   -- all indexes go to fastssd") read as one code
    span, and the comment after its end as a line of its own: a reader that splits the
    statement at its line breaks states halves of it."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        if not _SQL_START.match(lines[i]) or lines[i].rstrip().endswith(";"):
            out.append(lines[i])
            i += 1
            continue
        j, parts, note = i, [], ""
        while j < len(lines) and j - i < 12:
            code, _, comment = lines[j].partition(" --")
            parts.append(code.strip())
            if code.rstrip().endswith(";"):
                note = comment.strip()
                break
            if comment:  # a comment inside the statement: not a statement we can join
                parts = []
                break
            j += 1
        if not parts or not parts[-1].endswith(";"):
            out.append(lines[i])
            i += 1
            continue
        out.append("`" + " ".join(p for p in parts if p) + "`")
        if note:
            out.append(note[0].upper() + note[1:] + ("" if note.endswith((".", "!")) else "."))
        i = j + 1
    return "\n".join(out)


#: "Per Data Governance Policy DGP-9, please note the following. Dumps ...": the scope
#: the message announces, and what it announces.
_ANNOUNCED = re.compile(r"(?P<scope>\b(?:per|under|according\s+to|as\s+of|following)\s+"
                        r"[^,.!?\n]{3,60}),"
                        r"[ \t]*(?:please\s+)?(?:note|be\s+aware\s+of|observe)\s+the\s+following"
                        r"[ \t]*[.:][ \t]*(?P<first>\S)", re.IGNORECASE)


def announced_scope_joined(text: str) -> str:
    """"Per Policy DGP-9, please note the following. Dumps of X may only ..." reads "Per
    Policy DGP-9, dumps of X may only ...": the announcement goes, its scope stays with
    the first statement it announces."""
    return _ANNOUNCED.sub(lambda m: f"{m.group('scope')}, {m.group('first').lower()}"
                          if not re.match(r"[A-Z]{2}", text[m.start('first'):m.start('first') + 2])
                          else f"{m.group('scope')}, {m.group('first')}", text)


#: "- too loud? shut the door": a fragment asked as a condition, then what to do.
_FRAGMENT_QUESTION = re.compile(
    r"(?:(?<=[.!;:][ \t])|(?<=^)|(?P<dash>[ \t]+[-\u2013\u2014]+(?=[ \t])))(?P<space>[ \t]*)"
    r"(?P<cond>(?!(?:what|why|how|who|where|when|which|is|are|am|was|were|do|does|did|can|could|should|would|will|shall|may|might|any|"
    r"anyone|anybody|has|have|had|isn't|aren't|don't|doesn't|didn't|right|ok|okay|really|"
    r"sure|yes|no)\b)[A-Za-z][\w'-]*(?:[ \t]+[\w'-]+){0,2})\?[ \t]+(?P<then>[a-z])",
    re.IGNORECASE | re.MULTILINE)


def fragment_questions_as_conditions(text: str) -> str:
    """A few words asked as a question and answered at once with what to do ("PagerLink
    is never muted - too loud? shut the door", "changes don't stick. wrong default?
    raise PSD-Print") is a condition: "... If too loud, shut the door"."""
    def condition(m: re.Match[str]) -> str:
        verb = re.match(r"[\w'-]+", text[m.start("then"):])
        if not verb or verb.group(0).lower() not in _WHAT_TO_DO:
            return m.group(0)  # ("Port 22? No, ...", "Explain analyse? The replica."): a reply
        cond = m.group("cond")
        if cond[1:2].islower():
            cond = cond[0].lower() + cond[1:]
        lead = ". " if m.group("dash") else m.group("space")
        return f"{lead}If {cond}, {m.group('then').lower()}"

    return _FRAGMENT_QUESTION.sub(condition, text)


#: Verbs that say what to do, for a condition's answer ("too loud? shut the door").
_WHAT_TO_DO = INSTRUCTION_VERBS | frozenset(
    "shut report wait ring phone tell take bring don't do never try send give".split())


#: The header of a quiz's answer key and its question numbers: "Answer key from last
#: week's induction quiz, Q7: X", "Q8: Y".
_ANSWER_KEY_HEAD = re.compile(r"(?im)^[ \t]*(?:the[ \t]+)?answer[ \t]+key[ \t]+(?:from|for|to|of)"
                              r"[^,:\n]{1,60}(?:,[ \t]*|:[ \t]+)(?=\S)")
_QUESTION_NUMBER = re.compile(r"(?:(?<=^)|(?<=[.!?][ \t])|(?<=\n))[ \t]*Q[ \t]?\d{1,2}[ \t]*[:.)]"
                              r"[ \t]+(?=\S)", re.MULTILINE)


def quiz_key_read(text: str) -> str:
    """ "Answer key from last week's induction quiz, Q7: incident files are named X. Q8:
    the folder is the year." reads "Incident files are named X. The folder is the year.":
    the key's header and its question numbers only say where the answers come from."""
    out = _ANSWER_KEY_HEAD.sub("", text)
    if out == text:
        return text
    out = _QUESTION_NUMBER.sub("\x00", out)  # (where an answer starts: a capital)
    out = re.sub(r"(?m)(?:^[ \t]*|\x00)([a-z])", lambda m: m.group(0)[:-1] + m.group(1).upper(),
                 out)
    return out.replace("\x00", "")
