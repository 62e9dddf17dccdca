"""Benchmark corpora built from documentation that ships with a Debian system.

Three extractors live here, all stdlib-only:

* :func:`manpage_texts` walks ``/usr/share/man/man1`` .. ``man8`` and turns the roff
  source of every English man page into a NAME line (a natural "query") and a list of
  clean English sentences taken from the DESCRIPTION, option and sub-command sections
  (``--sections`` changes which).  The roff is
  parsed with regular expressions rather than rendered through groff, which keeps a
  full pass over ~22k pages well under a minute.
* :func:`gnome_help_corpus` converts the Mallard ``.page`` files of Debian's
  ``gnome-user-docs`` package (GNOME help, CC-BY-SA-3.0) into one record per page.
* :func:`debian_handbook_corpus` converts the English DocBook XHTML of Debian's
  ``debian-handbook`` package (The Debian Administrator's Handbook, GPL-2+ or
  CC-BY-SA-3.0) into one record per section.
* :func:`pg_doc_corpus` converts chosen chapters of the DocBook XHTML manual in
  Debian's ``postgresql-doc-15`` package (PostgreSQL licence) into one record per
  page, or per section where a page is long.

Command line::

    python -m bench.corpora manpages --out man.jsonl [--queries man-queries.txt] [--limit N]
    python -m bench.corpora gnome-help --deb auto --out corpus.jsonl --titles titles.txt
    python -m bench.corpora debian-handbook --deb auto --out corpus.jsonl --titles titles.txt
    python -m bench.corpora postgresql --deb auto --out corpus.jsonl --titles titles.txt
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
import unicodedata
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "DEBIAN_HANDBOOK_SUBDIR",
    "GNOME_HELP_SUBDIR",
    "PG_DOC_APPS",
    "PG_DOC_CHAPTERS",
    "ManText",
    "clean_sentences",
    "debian_handbook_corpus",
    "gnome_help_corpus",
    "gnome_help_page",
    "is_clean_sentence",
    "main",
    "manpage_texts",
    "parse_manpage",
    "pg_doc_corpus",
    "read_manpage",
    "roff_unescape",
    "split_sentences",
    "strip_numbering",
]

# --------------------------------------------------------------------------------------
# Man pages
# --------------------------------------------------------------------------------------

MIN_WORDS = 6
MAX_WORDS = 60

#: Sections whose prose we keep (a regex searched in the upper-cased heading): the
#: description and everything describing options, flags, arguments and sub-commands.
DEFAULT_SECTIONS = r"DESCRIPTION|OPTION|FLAGS|ARGUMENTS|PARAMETERS|COMMANDS"
#: A wider choice that also takes the general prose sections.
WIDE_SECTIONS = DEFAULT_SECTIONS + r"|OVERVIEW|INTRODUCTION|USAGE|NOTES|ENVIRONMENT"
_MAN_DIR = re.compile(r"man[1-8]")

#: Two-character special characters (``\(xx`` / ``\[xx]``) → text.
_SPECIAL: dict[str, str] = {
    "em": "—", "en": "–", "hy": "-", "mi": "-", "aq": "'", "dq": '"', "lq": "“",
    "rq": "”", "oq": "‘", "cq": "’", "Bq": "„", "bq": "‚", "Fo": "«", "Fc": "»",
    "fo": "‹", "fc": "›", "bu": "•", "co": "©", "rg": "®", "tm": "™", "mu": "×",
    "di": "÷", "de": "°", ">=": "≥", "<=": "≤", "!=": "≠", "==": "≡", "->": "→",
    "<-": "←", "<>": "↔", "=>": "⇒", "+-": "±", "ua": "↑", "da": "↓", "sl": "/",
    "rs": "\\", "ti": "~", "ha": "^", "ga": "`", "aa": "´", "sc": "§", "ps": "¶",
    "bv": "|", "or": "|", "ba": "|", "br": "│", "ul": "_", "ru": "_", "pl": "+",
    "eq": "=", "ci": "○", "sq": "□", "fm": "′", "sd": "″", "dg": "†", "dd": "‡",
    "ct": "¢", "Po": "£", "Ye": "¥", "Eu": "€", "eu": "€", "ss": "ß", "ae": "æ",
    "AE": "Æ", "oe": "œ", "OE": "Œ", "/o": "ø", "/O": "Ø", "%0": "‰", "12": "½",
    "14": "¼", "34": "¾", "if": "∞", "pd": "∂", "sr": "√", "**": "∗", "lh": "☜",
    "rh": "☞", "at": "@", "sh": "#", "Do": "$", "lB": "[", "rB": "]", "lC": "{",
    "rC": "}", "la": "⟨", "ra": "⟩", "an": "-", "hA": "⇔", "tf": "∴", "no": "¬",
    "pc": "·", "OK": "✓", "--": "—", "sp": " ", "nb": "", "PI": "π", "*p": "π",
    "*a": "α", "*b": "β", "*g": "γ", "*d": "δ", "*e": "ε", "*l": "λ", "*m": "μ",
    "*s": "σ", "*t": "τ", "*W": "Ω", "*S": "Σ", "*D": "Δ", "u-": "-",
}
_ACCENTS = {"'": "\u0301", "`": "\u0300", "^": "\u0302", ":": "\u0308", "~": "\u0303",
            ",": "\u0327", "v": "\u030c", "o": "\u030a"}

#: Predefined strings (``\*(xx``), mostly from the man, mdoc and pod2man preambles.
_STRINGS: dict[str, str] = {
    "lq": "“", "rq": "”", 'L"': '"', 'R"': '"', "C`": '"', "C'": '"', "--": "—",
    "PI": "π", "Tm": "™", "R": "®", "Aq": "'", "S": "", "HF": "", "ga": "`", "aa": "´",
    "Lq": "“", "Rq": "”", "Ba": "|", "Le": "≤", "Ge": "≥", "Pi": "π", "If": "∞",
    "Am": "&", "Na": "NaN", "Ne": "≠", "Lt": "<", "Gt": ">", "Px": "POSIX", "Ai": "ANSI",
}

_ESCAPE = re.compile(
    r"""\\(?:
        (?P<font>f(?:\[[^\]\n]*\]|\(..|.))
      | (?P<size>s(?:[-+]?\d{1,2}|[-+]?\(\d\d|[-+]?\[[^\]\n]*\]|[-+]?'[^'\n]*'))
      | \((?P<spec2>..)
      | \[(?P<specl>[^\]\n]*)\]
      | \*(?:\((?P<str2>..)|\[(?P<strl>[^\]\n]*)\]|(?P<str1>.))
      | (?P<reg>n[-+]?(?:\(..|\[[^\]\n]*\]|.))
      | (?P<numchr>N'(?P<num>\d+)')
      | (?P<cname>C'(?P<cval>[^'\n]*)')
      | (?P<delim>[hvwoblLDRXZxSHABVYFM]'[^'\n]*')
      | (?P<color>[mMgkYV](?:\[[^\]\n]*\]|\(..|.))
      | (?P<arg>\$(?:\d|\*|@))
      | (?P<zw>z)
      | (?P<one>.)
    )""",
    re.VERBOSE,
)
_ONE: dict[str, str] = {
    "-": "-", " ": " ", "~": " ", "0": " ", "e": "\\", "E": "\\", "\\": "\\", "'": "'",
    "`": "`", ".": ".", "t": " ", "_": "_", "|": "", "^": "", "&": "", ")": "",
    "%": "", ":": "", "/": "", ",": "", "c": "", "{": "", "}": "", "a": "", "p": "",
    "r": "", "u": "", "d": "", "!": "", "?": "", '"': "",
}
_COMMENT = re.compile(r'^((?:[^\\\n]|\\[^"#\n])*)\\["#].*$', re.MULTILINE)
_CONTINUATION = re.compile(r"(?<!\\)\\\n")
_CONTROL = re.compile(r"^[.'][ \t]*([^\s\\]*)[ \t]*(.*)$")
_SPACES = re.compile(r"\s+")
_ARG = re.compile(r'"((?:[^"]|"")*)"?|(\S+)')
_NAME_SPLIT = re.compile(r"\s+(?:-{1,2}|—|–)\s+")


def _special(name: str) -> str:
    """Render a named roff special character (``\\(xx`` or ``\\[name]``)."""
    got = _SPECIAL.get(name)
    if got is not None:
        return got
    if len(name) == 2 and name[0] in _ACCENTS and name[1].isalpha():
        return unicodedata.normalize("NFC", name[1] + _ACCENTS[name[0]])
    if name.startswith("u") and len(name) >= 5:
        try:
            return "".join(chr(int(part, 16)) for part in name[1:].split("_"))
        except ValueError:
            return ""
    if name.startswith("char") and name[4:].isdigit():
        return chr(int(name[4:]))
    return ""


def roff_unescape(text: str, strings: dict[str, str] | None = None) -> str:
    """Replace roff escapes (fonts, specials, strings, motions…) in ``text`` with plain text.

    ``strings`` holds page-defined ``.ds`` strings; they take precedence over the
    predefined ones.  Unknown escapes render as nothing.
    """
    if "\\" not in text:
        return text
    local = strings or {}

    def repl(m: re.Match[str]) -> str:
        kind = m.lastgroup
        if kind in ("font", "size", "reg", "delim", "color", "arg", "zw"):
            return ""
        if kind == "spec2" or kind == "specl":
            return _special(m.group(kind))
        if kind in ("str2", "strl", "str1"):
            name = m.group(kind)
            if name in local:
                return local[name]
            return _STRINGS.get(name, "")
        if kind == "numchr":
            code = int(m.group("num"))
            return chr(code) if 0 < code < 0x110000 else ""
        if kind == "cname":
            return _special(m.group("cval"))
        if kind == "one":
            char = m.group("one")
            return _ONE.get(char, char)
        return ""

    return _ESCAPE.sub(repl, text)


def _split_args(rest: str) -> list[str]:
    """Split a macro's argument string the way roff does (double quotes group words)."""
    out: list[str] = []
    for m in _ARG.finditer(rest):
        quoted, bare = m.group(1), m.group(2)
        out.append(quoted.replace('""', '"') if quoted is not None else bare)
    return out


def _eval_condition(cond: str) -> bool:
    """Evaluate a roff ``.if`` condition as nroff/groff would for terminal output.

    Only the common cases are understood (``n``, ``t``, ``\\n(.g`` and their
    negations); anything else counts as false so its body is skipped.
    """
    negate = cond.startswith("!")
    core = cond[1:] if negate else cond
    value = core == "n" or core in ("\\n(.g", "\\n[.g]")
    return value != negate


# mdoc (BSD) support: just enough to read the few mdoc pages a Debian system ships.
_MDOC_QUOTES = {"Dq": ("“", "”"), "Sq": ("‘", "’"), "Qq": ('"', '"'), "Pq": ("(", ")"),
                "Op": ("[", "]"), "Bq": ("[", "]"), "Brq": ("{", "}"), "Aq": ("⟨", "⟩")}
_MDOC_DROP = {"Ns", "No", "Li", "Em", "Sy", "Ar", "Pa", "Ev", "Cm", "Va", "Dv", "Ic",
              "Tn", "Ql", "Er", "Fa", "Fn", "Ft", "Ad", "Lk", "Mt", "Sx", "Ms", "Ux",
              "Bx", "At", "St", "Ot", "Oc", "Oo", "Qo", "Qc", "Do", "Dc", "So", "Sc",
              "Po", "Pc", "Bo", "Bc", "Ao", "Ac", "Eo", "Ec", "Es", "Bro", "Brc"}
_PUNCT_TOKEN = re.compile(r"^[.,:;)\]?!]+$")


def _mdoc_inline(args: list[str], page_name: str) -> str:
    """Render the arguments of a callable mdoc macro line to text."""
    out: list[str] = []
    closers: list[str] = []
    prefix = ""
    glue = False
    i = 0
    while i < len(args):
        tok = args[i]
        i += 1
        if tok in _MDOC_QUOTES:
            opener, closer = _MDOC_QUOTES[tok]
            prefix += opener
            closers.append(closer)
            continue
        if tok == "Fl":
            prefix += "-"
            if i >= len(args) or args[i] in _MDOC_DROP or _PUNCT_TOKEN.match(args[i]):
                out.append(prefix)
                prefix = ""
            continue
        if tok == "Nm":
            if i >= len(args) or _PUNCT_TOKEN.match(args[i]) or args[i] in _MDOC_DROP:
                out.append(prefix + page_name)
                prefix = ""
            continue
        if tok == "Xr" and i + 1 < len(args):
            out.append(f"{prefix}{args[i]}({args[i + 1]})")
            prefix = ""
            i += 2
            continue
        if tok == "Ns":
            glue = True
            continue
        if tok in _MDOC_DROP:
            continue
        if _PUNCT_TOKEN.match(tok) and out:
            if closers:
                out[-1] += "".join(reversed(closers))
                closers.clear()
            out[-1] += tok
            continue
        if glue and out:
            out[-1] += prefix + tok
        else:
            out.append(prefix + tok)
        prefix = ""
        glue = False
    if closers and out:
        out[-1] += "".join(reversed(closers))
    return " ".join(out)


@dataclass
class _RoffState:
    """Mutable state of :func:`parse_manpage` while it walks the roff lines."""

    page_name: str
    keep_section: re.Pattern[str]
    strings: dict[str, str] = field(default_factory=dict)
    section: str = ""
    heading_next: bool = False
    tags_pending: int = 0
    name_parts: list[str] = field(default_factory=list)
    name_done: bool = False
    mdoc_desc: str = ""
    para: list[str] = field(default_factory=list)
    paras: list[str] = field(default_factory=list)
    glue_next: bool = False

    def brk(self) -> None:
        """End the current paragraph (a roff "break")."""
        if self.section == "NAME":
            if self.name_parts:
                self.name_done = True
        elif self.para:
            self.paras.append(" ".join(self.para))
        self.para = []
        self.glue_next = False

    def add(self, text: str, *, glue: bool = False) -> bool:
        """Append rendered text to the current paragraph; ``False`` if it was dropped."""
        text = text.strip()
        if self.heading_next and text:  # ".SH" alone: the heading is on the next line
            self.section = _SPACES.sub(" ", text).upper()
            self.heading_next = False
            return False
        if self.tags_pending:
            if text:
                self.tags_pending -= 1
            return False
        if not text or text in _BULLETS:
            return False
        if self.section == "NAME":
            if not self.name_done:
                self.name_parts.append(text)
            return True
        if not self.keep_section.search(self.section):
            return False
        if (glue or self.glue_next) and self.para:
            self.para[-1] += text
        else:
            self.para.append(text)
        self.glue_next = False
        return True


_BULLETS = frozenset({"•", "·", "-", "*", "o", "+", "—", "–", "○", "□"})
_BREAKS = frozenset(
    {"PP", "LP", "P", "HP", "sp", "Sp", "br", "RS", "RE", "in", "ti", "Pp", "Lp", "Bl",
     "El", "D1", "Dl", "ne", "bp", "TH", "Dd", "Dt", "Os", "PD"}
)
_FONT_JOINED = frozenset({"BR", "RB", "BI", "IB", "IR", "RI"})
_FONT_SPACED = frozenset({"B", "I", "SM", "SB", "CW", "CR", "CB", "CI"})
_SKIP_BLOCKS: dict[str, str] = {
    "nf": "fi", "EX": "EE", "Vb": "Ve", "TS": "TE", "EQ": "EN", "Bd": "Ed", "PS": "PE",
    "DS": "DE", "cW": "cE", "ig": "..", "de": "..", "de1": "..", "am": "..", "am1": "..",
    "dei": "..", "ami": "..",
}
_MDOC_INLINE = frozenset(_MDOC_QUOTES) | _MDOC_DROP | {"Fl", "Nm", "Xr"}


def parse_manpage(
    source: str, page_name: str = "", sections: str | re.Pattern[str] = DEFAULT_SECTIONS,
) -> tuple[str, list[str]]:
    """Parse roff (man or mdoc) source into ``(name_line, paragraphs)``.

    ``name_line`` is the NAME section's one-line description (the part after the
    dash); ``paragraphs`` are the rendered paragraphs of the sections whose upper-cased
    heading matches ``sections`` (searched, not anchored), option tags excluded.
    Displays (``.nf``/``.EX``/tables), macro definitions and false conditionals are
    skipped.
    """
    source = _CONTINUATION.sub("", source.replace("\r\n", "\n"))
    source = _COMMENT.sub(r"\1", source)
    lines = source.split("\n")
    st = _RoffState(page_name=page_name, keep_section=re.compile(sections))
    skip_end = ""
    brace_depth = 0
    last_ie = True
    n = len(lines)
    i = 0
    while i < n:
        line = lines[i]
        i += 1
        if brace_depth:
            brace_depth += line.count("\\{") - line.count("\\}")
            brace_depth = max(brace_depth, 0)
            continue
        if skip_end:
            m = _CONTROL.match(line)
            if m and (m.group(1) == skip_end or (skip_end == ".." and m.group(1) == ".")):
                skip_end = ""
            continue
        if not line:
            st.brk()
            continue
        if line[0] not in ".'":
            if line[0] in " \t":
                st.brk()
            if st.add(roff_unescape(line, st.strings)):
                st.glue_next = line.endswith("\\c")
            continue
        m = _CONTROL.match(line)
        if m is None:
            continue
        macro, rest = m.group(1), m.group(2)
        if not macro:
            continue
        # Conditionals: run the body when true, skip it (and its \{ \} block) when false.
        while macro in ("if", "ie", "el", "while"):
            if macro == "el":
                cond_true = not last_ie
                body = rest
            else:
                parts = rest.split(None, 1)
                cond = parts[0] if parts else ""
                body = parts[1] if len(parts) > 1 else ""
                cond_true = _eval_condition(cond) and macro != "while"
                if macro == "ie":
                    last_ie = cond_true
            body = body.strip()
            if not cond_true:
                brace_depth = max(body.count("\\{") - body.count("\\}"), 0)
                macro = ""
                break
            body = body.removeprefix("\\{").lstrip()
            m2 = _CONTROL.match(body)
            if m2 is None:
                if body and body[0] not in ".'":
                    st.add(roff_unescape(body, st.strings))
                macro = ""
                break
            macro, rest = m2.group(1), m2.group(2)
        if not macro:
            continue
        if macro in _SKIP_BLOCKS:
            st.brk()
            skip_end = _SKIP_BLOCKS[macro]
            if macro == "Bd" and "-literal" not in rest and "-unfilled" not in rest:
                skip_end = ""  # filled displays are ordinary prose
            if macro == "ig" and rest.strip():
                skip_end = rest.split()[0]
            elif macro.startswith(("de", "am")):
                args = rest.split()
                if len(args) > 1:
                    skip_end = args[1]
            continue
        if macro == "ds" or macro == "ds1":
            parts = rest.split(None, 1)
            if parts:
                value = parts[1] if len(parts) > 1 else ""
                st.strings[parts[0]] = roff_unescape(value.removeprefix('"'), st.strings)
            continue
        if macro in ("SH", "Sh", "SS", "Ss"):
            st.brk()
            st.tags_pending = 0
            if macro in ("SH", "Sh"):
                heading = roff_unescape(" ".join(_split_args(rest)), st.strings)
                heading = _SPACES.sub(" ", heading).strip().upper()
                st.section = heading
                st.heading_next = not heading
            continue
        if macro in ("TP", "TQ"):
            st.brk()
            st.tags_pending = 1
            continue
        if macro == "IP":
            st.brk()
            continue
        if macro == "It":
            st.brk()
            continue
        if macro in _BREAKS:
            st.brk()
            continue
        if macro == "Nd":
            st.mdoc_desc = roff_unescape(rest, st.strings).strip().strip('"')
            continue
        if macro in _FONT_JOINED or macro in _FONT_SPACED:
            args = _split_args(rest)
            if not args:
                continue
            sep = "" if macro in _FONT_JOINED else " "
            st.add(roff_unescape(sep.join(args), st.strings))
            continue
        if macro in ("UR", "MT"):
            continue
        if macro in ("UE", "ME"):
            tail = roff_unescape(rest, st.strings).strip()
            if tail:
                st.add(tail, glue=True)
            continue
        if macro in _MDOC_INLINE:
            text = _mdoc_inline([macro, *_split_args(rest)], page_name)
            text = roff_unescape(text, st.strings)
            if macro == "Nm" and st.section == "NAME":
                continue
            st.add(text, glue=_PUNCT_TOKEN.match(text) is not None)
            continue
        # Any other request or macro: no text.
    st.brk()
    name_line = ""
    if st.mdoc_desc:
        name_line = st.mdoc_desc
    elif st.name_parts:
        whole = _SPACES.sub(" ", " ".join(st.name_parts)).strip()
        parts = _NAME_SPLIT.split(whole, maxsplit=1)
        if len(parts) == 2:
            name_line = parts[1].strip()
    return _SPACES.sub(" ", name_line).strip(), [_SPACES.sub(" ", p).strip() for p in st.paras]


# Sentence splitting and filtering -----------------------------------------------------

_ABBREV = frozenset(
    {"e.g.", "i.e.", "etc.", "vs.", "cf.", "approx.", "eg.", "ie.", "resp.", "viz.",
     "Dr.", "Mr.", "Mrs.", "Ms.", "No.", "Fig.", "fig.", "al.", "Jr.", "Inc.",
     "Ltd.", "St.", "incl.", "min.", "max.", "sec.", "ca.", "esp.", "Vol.", "vol.",
     "Sect.", "sect.", "Ch.", "ch.", "Ref.", "ref.", "Ex.", "ex.", "op.", "pp.", "p."}
)
_SENT_END = re.compile(r"[.!?][\"'”’)\]]*(?=\s+[\"'“‘(\[]*[A-Z0-9])")
_INITIAL = re.compile(r"[A-Za-z]\.")
_ENDS_SENTENCE = re.compile(r"[.!?][\"'”’)]*$")
_STOPWORD_TEXT = (
    "a an the and or but if of to in on at by for with from as is are was were be been "
    "being this that these those it its not no can may will would should must which who "
    "when where how what than then so such all any each other into over under about has "
    "have had do does did only also more most some there their they you your we our he "
    "she his her one both either neither whether while because before after until between "
    "without within through per via instead same used use uses using"
)
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_PROSE_PUNCT = frozenset(".,;:!?'\"“”‘’()-—–")
_CODE_TOKEN = re.compile(r"[=/{}\[\]<>|$_@#*`\\]|^-|::|\(\)")


def split_sentences(paragraph: str) -> list[str]:
    """Split a paragraph into sentences, keeping common abbreviations intact."""
    out: list[str] = []
    start = 0
    for m in _SENT_END.finditer(paragraph):
        piece = paragraph[start:m.end()].strip()
        last_word = piece.rsplit(" ", 1)[-1].lstrip("(\"'“‘[")
        if last_word in _ABBREV or _INITIAL.fullmatch(last_word):
            continue  # "e.g. Foo", "J. Smith": not a boundary
        if piece:
            out.append(piece)
        start = m.end()
    tail = paragraph[start:].strip()
    if tail:
        out.append(tail)
    return out


def _names_page(word: str, page_name: str) -> bool:
    """Whether ``word`` is the page's command name (``git`` also names ``git-add``)."""
    if not page_name:
        return False
    word = word.removesuffix("()")
    return word == page_name or word == re.split(r"[-_.]", page_name, maxsplit=1)[0]


def is_clean_sentence(sentence: str, page_name: str = "") -> bool:
    """Decide whether ``sentence`` is a clean English sentence worth indexing.

    It must have 6..60 words, start with a capital letter (or the page's own command
    name, as in "grep searches …"), end with sentence punctuation, be mostly letters
    in Latin script, contain English function words and few code-like tokens, and have
    balanced parentheses.
    """
    words = sentence.split()
    if not MIN_WORDS <= len(words) <= MAX_WORDS:
        return False
    first = sentence[0]
    quoted_capital = first in "\"“'(" and sentence[1:2].isupper()
    if not (first.isupper() or quoted_capital or _names_page(words[0], page_name)):
        return False
    if not _ENDS_SENTENCE.search(sentence) or sentence.endswith(("..", "...")):
        return False
    if "\t" in sentence or "\ufffd" in sentence:
        return False
    letters = sum(ch.isalpha() for ch in sentence)
    other = sum(not ch.isspace() and not ch.isalpha() and ch not in _PROSE_PUNCT
                for ch in sentence)
    if letters < 0.8 * (letters + other):
        return False
    if not sentence.isascii() and sum(ord(ch) > 0x24F for ch in sentence if ch.isalpha()):
        return False  # non-Latin script: not English
    lowered = [w.strip(".,;:!?()\"'“”‘’").lower() for w in words]
    stop = sum(w in _STOPWORDS for w in lowered)
    if stop < max(1.0, 0.12 * len(words)):
        return False
    code = sum(bool(_CODE_TOKEN.search(w)) for w in words)
    if code > 0.2 * len(words):
        return False
    upper_words = sum(w.isupper() and len(w) > 1 for w in words)
    if upper_words > 0.5 * len(words):
        return False
    return sentence.count("(") == sentence.count(")")


def _trim_parens(sentence: str) -> str:
    """Drop the unmatched "(" opening or ")" closing a sentence of a parenthetical run."""
    opened, closed = sentence.count("("), sentence.count(")")
    if opened == closed + 1 and sentence.startswith("("):
        return sentence[1:].lstrip()
    if closed == opened + 1 and sentence.endswith(")") and sentence[-2:-1] in ".!?":
        return sentence[:-1]
    return sentence


def clean_sentences(paragraphs: Iterable[str], page_name: str = "") -> list[str]:
    """Split ``paragraphs`` into sentences and keep the clean ones, deduplicated in order."""
    seen: set[str] = set()
    out: list[str] = []
    for para in paragraphs:
        for sentence in split_sentences(para):
            sentence = _trim_parens(sentence)
            if sentence not in seen and is_clean_sentence(sentence, page_name):
                seen.add(sentence)
                out.append(sentence)
    return out


@dataclass(frozen=True, slots=True)
class ManText:
    """One man page reduced to benchmark text.

    ``page`` is the file name without ``.gz`` (``"ls.1"``), ``name_line`` the NAME
    description (``"list directory contents"``), ``sentences`` the clean sentences.
    """

    page: str
    name_line: str
    sentences: tuple[str, ...]
    path: str = ""

    @property
    def name(self) -> str:
        """The page name without its section suffix (``"ls"`` for ``"ls.1"``)."""
        return _page_name(self.page)


def _page_name(page: str) -> str:
    """Strip the section suffix: ``"ls.1"`` → ``"ls"``, ``"CA.pl.1ssl"`` → ``"CA.pl"``."""
    stem, dot, suffix = page.rpartition(".")
    return stem if dot and suffix[:1].isdigit() else page


def read_manpage(path: str | os.PathLike[str]) -> str:
    """Read a man page's roff source, decompressing ``.gz`` and tolerating bad bytes."""
    p = os.fspath(path)
    if p.endswith(".gz"):
        with gzip.open(p, "rb") as fh:
            raw = fh.read()
    else:
        with open(p, "rb") as fh:
            raw = fh.read()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _extract(path: str, sections: str = DEFAULT_SECTIONS) -> ManText | None:
    """Read and parse one man page file; ``None`` if it is a redirect or fails to parse."""
    page = os.path.basename(path).removesuffix(".gz")
    try:
        source = read_manpage(path)
        if source.lstrip().startswith(".so ") and source.count("\n") <= 2:
            return None  # a ".so other.1" redirect
        name = _page_name(page)
        name_line, paras = parse_manpage(source, name, sections)
    except (OSError, EOFError, ValueError, RecursionError, gzip.BadGzipFile):
        return None
    if not name_line:
        return None
    return ManText(page, name_line, tuple(clean_sentences(paras, name)), path)


def _extract_many(paths: Sequence[str], sections: str) -> list[ManText | None]:
    """Worker entry point: extract a batch of pages."""
    return [_extract(p, sections) for p in paths]


def _man_files(root: str | os.PathLike[str]) -> list[str]:
    """List the English man page files under ``root``/man1..man8 (no symlinks, sorted)."""
    out: list[str] = []
    base = os.fspath(root)
    for sub in sorted(os.listdir(base)):
        if not _MAN_DIR.fullmatch(sub):
            continue  # localized trees (de/, fr/, …) and anything else
        d = os.path.join(base, sub)
        if not os.path.isdir(d):
            continue
        for entry in sorted(os.scandir(d), key=lambda e: e.name):
            if entry.is_symlink() or not entry.is_file():
                continue
            out.append(entry.path)
    return out


def _parsed_pages(files: Sequence[str], sections: str, workers: int,
                  ) -> Iterator[ManText | None]:
    """Parse ``files`` in order, in this process or in ``workers`` processes."""
    if workers <= 1:
        for path in files:
            yield _extract(path, sections)
        return
    batch = 200
    batches = [files[k:k + batch] for k in range(0, len(files), batch)]
    pool = ProcessPoolExecutor(max_workers=workers)
    try:
        for results in pool.map(_extract_many, batches, [sections] * len(batches)):
            yield from results
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def manpage_texts(
    root: str | os.PathLike[str] = "/usr/share/man",
    limit: int | None = None,
    *,
    sections: str = DEFAULT_SECTIONS,
    unique: bool = True,
    workers: int = 1,
) -> Iterator[ManText]:
    """Yield a :class:`ManText` for every parseable English man page under ``root``.

    Only ``root/man1`` .. ``root/man8`` are read (localized trees such as ``de/`` are
    skipped), symlinks are skipped as duplicates, ``.gz`` is read transparently and
    pages that are redirects, lack a NAME line or fail to parse are skipped.  ``limit``
    caps the number of pages yielded.  ``sections`` is a regex searched in upper-cased
    section headings to choose which sections' prose is kept.  With ``unique`` (the
    default) a sentence already yielded for an earlier page is dropped, so boilerplate
    shared by many pages (gcloud's global flags, GNU's bug-report lines…) appears once;
    a page can then come with no sentences but is still yielded for its NAME line.
    ``workers > 1`` parses in that many processes; the order of results is the same
    either way (sorted by section directory, then file name).
    """
    files = _man_files(root)
    seen: set[str] = set()
    yielded = 0
    for item in _parsed_pages(files, sections, workers):
        if item is None:
            continue
        if unique:
            fresh = tuple(s for s in item.sentences if s not in seen)
            seen.update(fresh)
            if len(fresh) != len(item.sentences):
                item = ManText(item.page, item.name_line, fresh, item.path)
        yield item
        yielded += 1
        if limit is not None and yielded >= limit:
            return


# --------------------------------------------------------------------------------------
# GNOME help (Mallard)
# --------------------------------------------------------------------------------------

GNOME_HELP_SUBDIR = "usr/share/help/C/gnome-help"
_MAL = "{http://projectmallard.org/1.0/}"
_IF = "{http://projectmallard.org/if/1.0/}"
_IF_TEST = f"{_IF}test"
#: Conditional tokens that hold when rendering for a stock GNOME desktop (not Classic).
_TRUE_TOKENS = frozenset({"platform:gnome", "platform:gnome-shell", "action:install",
                          "target:html", "target:help"})
_SKIP_ELEMENTS = frozenset({f"{_MAL}info", f"{_MAL}media", f"{_MAL}comment",
                            f"{_MAL}links", "{http://www.w3.org/2001/XInclude}include"})
_LEAF_BLOCKS = frozenset(
    f"{_MAL}{t}" for t in ("p", "title", "subtitle", "code", "screen", "desc", "cite")
)


_CLOSING_PUNCT = frozenset(".,;:!?)")
_EMPTY_PARENS = re.compile(r" ?\( ?\)")


def _if_true(test: str) -> bool:
    """Evaluate a Mallard conditional ``test`` (OR of comma groups of ANDed tokens)."""
    for group in test.split(","):
        tokens = group.split()
        if all((t[1:] not in _TRUE_TOKENS) if t.startswith("!") else (t in _TRUE_TOKENS)
               for t in tokens):
            return True
    return False


def _norm(text: str) -> str:
    """Collapse whitespace runs to single spaces, drop empty "( )" left by icons, strip."""
    return _EMPTY_PARENS.sub("", _SPACES.sub(" ", text)).strip()


class _MallardRenderer:
    """Render the visible text of Mallard elements, resolving empty links to titles."""

    def __init__(self, titles: dict[str, str], page_id: str = "") -> None:
        self.titles = titles
        self.page_id = page_id

    def visible(self, el: ET.Element) -> bool:
        """Whether ``el`` is shown (not a skipped element, conditional holds)."""
        if el.tag in _SKIP_ELEMENTS or not isinstance(el.tag, str):
            return False
        test = el.get(_IF_TEST)
        return test is None or _if_true(test)

    def inline(self, el: ET.Element) -> str:
        """Render ``el`` and its descendants as one run of inline text."""
        tag = el.tag
        if tag == f"{_MAL}link" and not "".join(el.itertext()).strip():
            target = el.get("xref") or ""
            if target.startswith("#"):
                target = self.page_id + target  # a section of this page
            return self.titles.get(target) or self.titles.get(target.split("#")[0]) or (
                el.get("href") or "")
        if tag in (f"{_MAL}keyseq", f"{_MAL}guiseq"):
            sep = " ▸ " if tag == f"{_MAL}guiseq" else "+"
            if tag == f"{_MAL}keyseq" and el.get("type") == "sequence":
                sep = " "
            parts = [_norm(self.inline(c)) for c in el if self.visible(c)]
            return sep.join(p for p in parts if p)
        if tag == f"{_IF}choose":
            chosen = self._choose(el)
            return "".join(self.inline(c) for c in chosen)
        out = [el.text or ""]
        for child in el:
            tail = child.tail or ""
            if child.tag == f"{_MAL}media":
                # An inline icon: its fallback text ("PS", "settings") stands in for it.
                test = child.get(_IF_TEST)
                if test is None or _if_true(test):
                    out.append(" ".join("".join(child.itertext()).split()))
                out.append(tail)
                continue
            if self.visible(child):
                rendered = self.inline(child)
                if tail[:1] in _CLOSING_PUNCT:
                    rendered = rendered.rstrip()  # "<link>permissions\n</link>." → "permissions."
                out.append(rendered)
            out.append(tail)
        return "".join(out)

    def _choose(self, el: ET.Element) -> list[ET.Element]:
        """Children of the branch an ``if:choose`` renders (first true ``when``, else ``else``)."""
        for branch in el:
            if branch.tag == f"{_IF}when" and _if_true(branch.get("test", "")):
                return list(branch)
            if branch.tag == f"{_IF}else":
                return list(branch)
        return []

    def blocks(self, el: ET.Element, out: list[str]) -> None:
        """Append the text of each visible block under ``el`` to ``out``, in order."""
        for child in el:
            if not self.visible(child):
                continue
            tag = child.tag
            if tag == f"{_IF}choose":
                for picked in self._choose(child):
                    self._block_or_descend(picked, out)
                continue
            self._block_or_descend(child, out)

    def _block_or_descend(self, child: ET.Element, out: list[str]) -> None:
        """Render ``child`` as one block if it is a leaf block, else recurse into it."""
        if not self.visible(child):
            return
        if child.tag in _LEAF_BLOCKS or not any(isinstance(c.tag, str) for c in child):
            text = _norm(self.inline(child))
            if text:
                out.append(text)
            return
        if child.tag == f"{_MAL}tr":
            cells: list[str] = []
            for cell in child:
                parts: list[str] = []
                self._block_or_descend(cell, parts)
                if parts:
                    cells.append(" ".join(parts))
            if cells:
                out.append(" | ".join(cells))  # one line per table row
            return
        if child.tag == f"{_IF}if":
            if _if_true(child.get("test", "")):
                self.blocks(child, out)
            return
        self.blocks(child, out)


def _page_title(root: ET.Element) -> str:
    """The page title: the page's own ``<title>``, else the info "text", "link", any title."""
    own = root.find(f"{_MAL}title")
    if own is not None and own.get("type") in (None, "text"):
        return _norm("".join(own.itertext()))
    by_type: dict[str | None, str] = {}
    info = root.find(f"{_MAL}info")
    if info is not None:
        for t in info.findall(f"{_MAL}title"):
            by_type.setdefault(t.get("type"), _norm("".join(t.itertext())))
    for kind in ("text", None, "link", "sort"):
        if by_type.get(kind):
            return by_type[kind]
    return ""


def gnome_help_page(path: str | os.PathLike[str], titles: dict[str, str] | None = None,
                    ) -> dict[str, str]:
    """Convert one Mallard ``.page`` file into ``{"id", "title", "desc", "text", "url"}``.

    ``titles`` maps page (and ``page#section``) ids to titles so that empty
    ``<link xref=…/>`` elements render as their target's title, as Yelp shows them.
    Blocks (paragraphs, list items, steps, table cells, section titles…) are separated
    by blank lines; ``<info>``, media, editorial comments and generated link lists are
    left out; conditional content is rendered for a stock GNOME (not Classic) desktop.
    """
    root = ET.parse(path).getroot()
    page_id = root.get("id") or Path(path).stem
    renderer = _MallardRenderer(titles or {}, page_id)
    desc = ""
    info = root.find(f"{_MAL}info")
    if info is not None:
        desc_el = info.find(f"{_MAL}desc")
        if desc_el is not None:
            desc = _norm(renderer.inline(desc_el))
    blocks: list[str] = []
    own_title = root.find(f"{_MAL}title")
    for child in root:
        if child is own_title:
            continue
        if child.tag == f"{_IF}choose":
            for picked in renderer._choose(child):
                renderer._block_or_descend(picked, blocks)
        else:
            renderer._block_or_descend(child, blocks)
    return {
        "id": page_id,
        "title": _page_title(root),
        "desc": desc,
        "text": "\n\n".join(blocks),
        "url": f"help:gnome-help/{page_id}",
    }


def _collect_titles(files: Sequence[Path]) -> dict[str, str]:
    """Map page ids and ``page#section`` ids to their titles for link resolution."""
    titles: dict[str, str] = {}
    for f in files:
        try:
            root = ET.parse(f).getroot()
        except ET.ParseError:
            continue
        page_id = root.get("id") or f.stem
        link_title = ""
        info = root.find(f"{_MAL}info")
        if info is not None:
            for t in info.findall(f"{_MAL}title"):
                if t.get("type") == "link" and not link_title:
                    link_title = _norm("".join(t.itertext()))
        titles[page_id] = link_title or _page_title(root)
        for sec in root.iter(f"{_MAL}section"):
            sid = sec.get("id")
            st = sec.find(f"{_MAL}title")
            if sid and st is not None:
                titles[f"{page_id}#{sid}"] = _norm("".join(st.itertext()))
    return titles


def gnome_help_corpus(
    page_dir: str | os.PathLike[str], *, include_empty: bool = False,
) -> list[dict[str, str]]:
    """Convert every ``*.page`` file in ``page_dir`` (GNOME help, C locale) to a record.

    Records are sorted by page id; each has ``id``, ``title``, ``desc``, ``text`` and
    ``url`` (``help:gnome-help/<id>``).  Files that are not well-formed XML are skipped,
    and so are pages without visible text of their own (guide pages that only list
    generated links) unless ``include_empty`` is true.
    """
    files = sorted(Path(page_dir).glob("*.page"))
    titles = _collect_titles(files)
    out: list[dict[str, str]] = []
    for f in files:
        try:
            record = gnome_help_page(f, titles)
        except ET.ParseError:
            continue
        if record["text"] or include_empty:
            out.append(record)
    out.sort(key=lambda r: r["id"])
    return out


# --------------------------------------------------------------------------------------
# The Debian Administrator's Handbook (DocBook XHTML)
# --------------------------------------------------------------------------------------

DEBIAN_HANDBOOK_SUBDIR = "usr/share/doc/debian-handbook/html/en-US"
#: Sections numbered this deep or less ("6.2.1.") become records of their own; deeper
#: ones ("6.2.1.1.") are folded, title and text, into the record that encloses them
#: unless that record would grow beyond :data:`HANDBOOK_MAX_CHARS`.
HANDBOOK_RECORD_DEPTH = 3
#: A record with less text than this is merged into its parent record (a top-level one
#: is dropped).
HANDBOOK_MIN_CHARS = 250
#: Deeper sections stay records of their own when folding them all into their parent
#: would make it longer than this.
HANDBOOK_MAX_CHARS = 6000
#: Program listings (configuration files, scripts) longer than this are left out.
HANDBOOK_MAX_LISTING_LINES = 15
#: Sections left out (by anchor, with everything under them): the foreword and preface
#: are about the book, not about Debian, and the acknowledgments are a list of names.
#: The title page, legal notice and table of contents (``index.html``) are never read.
HANDBOOK_SKIP = frozenset({"foreword", "preface", "sect.acknowledgments"})

_HB_SECTIONS = frozenset({"chapter", "appendix", "preface", "section", "article"})
_HB_BLOCKS = frozenset({"div", "p", "ul", "ol", "li", "dl", "dt", "dd", "table", "thead",
                        "tbody", "tfoot", "tr", "pre", "blockquote", "h1", "h2", "h3", "h4",
                        "h5", "h6"})
#: Elements (by class) whose text is never shown in a record: index anchors, chapter
#: tables of contents, figures and images, navigation.
_HB_DROP_CLASSES = frozenset({"indexterm", "toc", "figure", "mediaobject", "docnav",
                              "callout", "legalnotice"})
_HB_DROP_TAGS = frozenset({"img", "script", "style", "head", "colgroup", "col"})
#: Containers whose own numbered caption ("Example 6.1. …") is left out.
_HB_CAPTIONED = frozenset({"example", "informalexample", "table", "informaltable"})
_HB_NUMBER = re.compile(
    r"^(?:(?:Chapter|Appendix|Part)\s+)?(?P<num>[A-Z0-9]+(?:\.[0-9]+)*)\.\s+(?P<title>.+)$")
_HB_AUTO_ID = re.compile(r"^id-[0-9.]+$")
_HB_SLUG = re.compile(r"[^a-z0-9]+")
_USERINPUT_ON, _USERINPUT_OFF = "\x01", "\x02"  # brackets around typed input
_HB_TYPED = re.compile(f"{_USERINPUT_ON}(.*?){_USERINPUT_OFF}", re.DOTALL)


def _hb_norm(text: str) -> str:
    """:func:`_norm` after removing the typed-input brackets."""
    return _norm(text.replace(_USERINPUT_ON, "").replace(_USERINPUT_OFF, ""))


def _local(el: ET.Element) -> str:
    """The element's tag without its XML namespace ("" for comments and PIs)."""
    return el.tag.rsplit("}", 1)[-1] if isinstance(el.tag, str) else ""


def _classes(el: ET.Element) -> set[str]:
    """The element's ``class`` attribute as a set of class names."""
    return set((el.get("class") or "").split())


def _hb_slug(text: str) -> str:
    """Lower-case ``text`` and join its alphanumeric runs with hyphens."""
    return _HB_SLUG.sub("-", text.lower()).strip("-")


def _hb_dropped(el: ET.Element) -> bool:
    """Whether ``el`` and everything under it is left out of the text."""
    tag = _local(el)
    return not tag or tag in _HB_DROP_TAGS or bool(_classes(el) & _HB_DROP_CLASSES)


def _hb_is_section(el: ET.Element) -> bool:
    """Whether ``el`` is a chapter, appendix, preface or section container."""
    return _local(el) == "div" and bool(_classes(el) & _HB_SECTIONS)


@dataclass
class _HbSection:
    """One section record while the handbook is read (before short ones are merged)."""

    id: str
    title: str
    depth: int
    url: str
    parent: _HbSection | None
    blocks: list[str] = field(default_factory=list)
    merged: bool = False

    @property
    def text(self) -> str:
        """The record text: its blocks separated by blank lines."""
        return "\n\n".join(self.blocks)


class _HandbookReader:
    """Render the visible text of the DocBook XHTML files of the Debian handbook."""

    def __init__(self) -> None:
        self.records: list[_HbSection] = []
        self.ids: set[str] = set()
        self.file_record: dict[str, _HbSection] = {}
        self.skipped_files: set[str] = set()

    # -- inline and block text --------------------------------------------------------

    def inline(self, el: ET.Element) -> str:
        """Render ``el`` and its descendants as one run of inline text."""
        out = [el.text or ""]
        for child in el:
            if not _hb_dropped(child):
                text = self.inline(child)
                if "userinput" in _classes(child):
                    text = _USERINPUT_ON + text + _USERINPUT_OFF
                elif "url" in _classes(child):
                    text = " " + text.replace("→", " ") + " "
                out.append(text)
            out.append(child.tail or "")
        return "".join(out)

    def _flush(self, buf: list[str], out: list[str]) -> None:
        text = _hb_norm("".join(buf))
        if text:
            out.append(text)
        buf.clear()

    def flow(self, el: ET.Element, out: list[str], *, skip_caption: bool = False) -> None:
        """Append the blocks under ``el`` to ``out``: inline runs and nested blocks, in order."""
        buf = [el.text or ""]
        for child in el:
            if _hb_dropped(child) or (skip_caption and "title" in _classes(child)):
                buf.append(child.tail or "")
                continue
            if _local(child) in _HB_BLOCKS:
                self._flush(buf, out)
                self.block(child, out)
            else:
                buf.append(self.inline(child))
            buf.append(child.tail or "")
        self._flush(buf, out)

    def block(self, el: ET.Element, out: list[str]) -> None:
        """Append the text of one block element (and the blocks inside it) to ``out``."""
        tag, classes = _local(el), _classes(el)
        if tag == "pre":
            out.extend(self._code(el))
        elif "url" in classes:
            text = _hb_norm(self.inline(el).replace("→", " "))  # "→ https://…" link lines
            if text:
                out.append(text)
        elif tag == "tr":
            cells: list[str] = []
            for cell in el:
                parts: list[str] = []
                self.flow(cell, parts)
                if parts:
                    cells.append(" ".join(parts))
            if cells:
                out.append(" | ".join(cells))
        else:
            self.flow(el, out, skip_caption=bool(classes & _HB_CAPTIONED))

    def _code(self, pre: ET.Element) -> list[str]:
        """A ``pre`` block as one block of lines, or nothing.

        ``screen`` blocks keep only the command lines the user types (with their ``$``
        or ``#`` prompt), not the output; listings (configuration files, scripts) are kept
        whole when they have at most :data:`HANDBOOK_MAX_LISTING_LINES` lines.
        """
        raw = self.inline(pre)
        lines: list[str] = []
        if "screen" in _classes(pre):
            for m in _HB_TYPED.finditer(raw):
                prompt = raw[raw.rfind("\n", 0, m.start()) + 1:m.start()].strip()[-1:]
                text = _norm(f"{prompt if prompt in ('$', '#') else ''} {m.group(1)}")
                if text not in ("", "$", "#"):
                    lines.append(text)
        else:
            lines = [_hb_norm(line) for line in raw.split("\n") if line.strip()]
            if len(lines) > HANDBOOK_MAX_LISTING_LINES:
                lines = []
        return ["\n".join(lines)] if lines else []

    # -- sections ---------------------------------------------------------------------

    def heading(self, sec: ET.Element) -> tuple[str, str, int]:
        """``(title, anchor, depth)`` of a section container, from its title page."""
        for el in sec.iter():
            if _local(el) in ("h1", "h2", "h3", "h4", "h5", "h6") and "title" in _classes(el):
                anchor = next((a.get("id") or "" for a in el.iter()
                               if _local(a) == "a" and a.get("id")), "")
                text = _hb_norm(self.inline(el))
                m = _HB_NUMBER.match(text)
                if m:
                    return m.group("title"), anchor or sec.get("id") or "", len(
                        m.group("num").split("."))
                return text, anchor or sec.get("id") or "", int(_local(el)[1])
            if _hb_is_section(el) and el is not sec:
                break
        return "", sec.get("id") or "", 1

    def _new_id(self, anchor: str, title: str, file: str) -> str:
        """A stable record id: the anchor without ``sect.``, or (for a generated anchor)
        the file name plus the first five words of the title; ``-2``… on collision."""
        base = anchor.removeprefix("sect.")
        if not base or _HB_AUTO_ID.match(base):
            words = "-".join(_hb_slug(title).split("-")[:5])
            base = file.removesuffix(".html").removeprefix("sect.") + "-" + words
        base = _hb_slug(base) or "section"
        out, k = base, 2
        while out in self.ids:
            out, k = f"{base}-{k}", k + 1
        self.ids.add(out)
        return out

    def section(self, sec: ET.Element, file: str, parent: _HbSection | None) -> None:
        """Read one record-level section (and, recursively, the sections inside it)."""
        title, anchor, depth = self.heading(sec)
        if anchor in HANDBOOK_SKIP:
            return
        rec = _HbSection(self._new_id(anchor, title, file), title, depth,
                         f"{file}#{anchor}" if anchor else file, parent)
        self.records.append(rec)
        self._fill(sec, rec, file)

    def _fill(self, sec: ET.Element, rec: _HbSection, file: str) -> None:
        for child in sec:
            if _hb_dropped(child) or "titlepage" in _classes(child):
                continue
            if _hb_is_section(child):
                self.section(child, file, rec)
            elif _local(child) in _HB_BLOCKS:
                self.block(child, rec.blocks)

    def page(self, path: Path) -> None:
        """Read the top-level section containers of one XHTML file.

        Their parent is the first record of the file ``<link rel="up">`` points to (the
        chapter of a ``sect.*.html`` file); a file whose "up" file was skipped is skipped.
        """
        root = ET.parse(path).getroot()
        up = next((el.get("href") or "" for el in root.iter()
                   if _local(el) == "link" and el.get("rel") == "up"), "")
        if up in self.skipped_files:
            self.skipped_files.add(path.name)
            return
        body = next((el for el in root if _local(el) == "body"), None)
        if body is None:
            return
        before = len(self.records)
        for child in body:
            if _hb_is_section(child):
                self.section(child, path.name, self.file_record.get(up))
        if len(self.records) > before:
            self.file_record[path.name] = self.records[before]
        else:
            self.skipped_files.add(path.name)


def _handbook_order(html_dir: Path) -> list[Path]:
    """The XHTML files in reading order: the ``rel="next"`` chain from ``index.html``.

    ``index.html`` itself (title page, legal notice, table of contents) is not read.
    Files the chain never reaches are appended in name order.
    """
    order: list[Path] = []
    seen = {"index.html"}
    current: str | None = "index.html"
    while current is not None:
        path = html_dir / current
        if not path.is_file():
            break
        nxt: str | None = None
        for el in ET.parse(path).getroot().iter():
            if _local(el) == "link" and el.get("rel") == "next":
                nxt = (el.get("href") or "").split("#")[0] or None
                break
        if current not in ("index.html",):
            order.append(path)
        if nxt is None or nxt in seen:
            break
        seen.add(nxt)
        current = nxt
    rest = sorted(p for p in html_dir.glob("*.html") if p.name not in seen)
    return order + rest


def debian_handbook_corpus(
    html_dir: str | os.PathLike[str], *, min_chars: int = HANDBOOK_MIN_CHARS,
    max_chars: int = HANDBOOK_MAX_CHARS,
) -> list[dict[str, str]]:
    """Convert the English XHTML of the Debian Administrator's Handbook into section records.

    One record per section numbered at most :data:`HANDBOOK_RECORD_DEPTH` deep
    (chapter introductions, ``6.2.`` and ``6.2.1.`` sections).  Deeper sections are
    folded into the record that encloses them, title first, unless together they would
    make it longer than ``max_chars``; then each stays a record.  Nothing is split, so a
    long section without sub-sections stays one long record.  A record whose text is
    shorter than ``min_chars`` is merged into its parent (deepest first), or dropped
    when it has none.  Records come in reading order, each as ``{"id", "title", "text",
    "url"}``: ``id`` is the section's anchor without ``sect.`` (or the parent id plus a
    slug of the title when the anchor is generated), ``title`` the section title without
    its number, ``url`` ``<file>#<anchor>``.  Titles shared by several records get the
    parent record's title in parentheses so that every title is distinct.
    """
    reader = _HandbookReader()
    for path in _handbook_order(Path(html_dir)):
        try:
            reader.page(path)
        except ET.ParseError:
            continue
    records = reader.records
    for depth in sorted({r.depth for r in records}, reverse=True):
        children: dict[int, list[_HbSection]] = {}
        for rec in records:
            if rec.depth == depth and not rec.merged:
                children.setdefault(id(rec.parent), []).append(rec)
        for group in children.values():
            parent = group[0].parent
            fold = depth > HANDBOOK_RECORD_DEPTH and parent is not None and len(parent.text) + sum(
                len(r.title) + len(r.text) + 4 for r in group) <= max_chars
            for rec in group:
                if fold or len(rec.text) < min_chars:
                    if parent is not None and rec.blocks:
                        parent.blocks.extend([rec.title, *rec.blocks])
                    rec.merged = True
    kept = [r for r in records if not r.merged and r.title]
    counts: dict[str, int] = {}
    for r in kept:
        counts[r.title.lower()] = counts.get(r.title.lower(), 0) + 1
    out: list[dict[str, str]] = []
    for r in kept:
        title = r.title
        if counts[title.lower()] > 1 and r.parent is not None:
            title = f"{title} ({r.parent.title})"
        out.append({"id": r.id, "title": title, "text": r.text, "url": r.url})
    return out


def _download_deb(package: str, dest: str) -> Path:
    """Fetch ``package``'s .deb into ``dest`` with ``apt-get download``; return its path."""
    subprocess.run(["apt-get", "download", package], cwd=dest, check=True,
                   stdout=subprocess.DEVNULL)
    debs = sorted(Path(dest).glob(f"{package}_*.deb"))
    if not debs:
        raise FileNotFoundError(f"apt-get download {package} produced no .deb")
    return debs[-1]


def _extract_deb(deb: Path, dest: str, subdir: str = GNOME_HELP_SUBDIR) -> Path:
    """Unpack the ``subdir`` tree of ``deb`` into ``dest``; return ``dest/subdir``.

    Only files under ``subdir`` are written (gnome-user-docs carries ~40 translations,
    debian-handbook ~25), streaming ``dpkg-deb --fsys-tarfile`` through :mod:`tarfile`.
    """
    page_dir = Path(dest) / subdir
    prefix = subdir.rstrip("/") + "/"
    with subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb)],
                          stdout=subprocess.PIPE) as proc:
        assert proc.stdout is not None
        with tarfile.open(fileobj=proc.stdout, mode="r|") as tar:
            for member in tar:
                name = member.name.removeprefix("./")
                if not member.isfile() or not name.startswith(prefix) or ".." in name:
                    continue
                src = tar.extractfile(member)
                if src is None:
                    continue
                target = Path(dest) / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(src.read())
    if proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, ["dpkg-deb", "--fsys-tarfile"])
    if not page_dir.is_dir():
        raise FileNotFoundError(f"{deb} has no {subdir}")
    return page_dir


# --------------------------------------------------------------------------------------
# PostgreSQL documentation (DocBook XHTML)
# --------------------------------------------------------------------------------------

#: Debian package of the PostgreSQL 15 manual and the folder of its HTML pages.
PG_DOC_PACKAGE = "postgresql-doc-15"
PG_DOC_SUBDIR = f"usr/share/doc/{PG_DOC_PACKAGE}/html"
#: Where a record's page lives upstream (``url`` = this + file name + ``#`` + anchor).
PG_DOC_URL = "https://www.postgresql.org/docs/15/"
#: The chapters taken by default: the tutorial (1-3), the SQL language (4-11, 13, 14;
#: not full text search or parallel query) and the administration chapters that a
#: database team's users meet (21 authentication, 22 roles, 23 databases, 25
#: maintenance, 26 backup).
PG_DOC_CHAPTERS: tuple[int, ...] = (
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 21, 22, 23, 25, 26)
#: Reference pages taken by default: the client programs such a team's users run.
PG_DOC_APPS: tuple[str, ...] = (
    "app-psql", "app-pgdump", "app-pgrestore", "app-pg-dumpall", "app-createdb",
    "app-dropdb", "app-createuser", "app-pg-isready", "app-vacuumdb", "app-reindexdb")
PG_MIN_CHARS = 200
PG_MAX_CHARS = 6000

_XH = "{http://www.w3.org/1999/xhtml}"
_XH_BLOCKS = frozenset(f"{_XH}{t}" for t in (
    "p", "div", "pre", "ul", "ol", "li", "dl", "dt", "dd", "table", "thead", "tbody",
    "tfoot", "tr", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote",
    "colgroup", "col", "hr"))
_XH_HEADINGS = frozenset(f"{_XH}h{n}" for n in range(1, 7))
_XH_SKIP_CLASSES = frozenset({"navheader", "navfooter", "toc", "list-of-tables",
                              "list-of-examples", "list-of-figures"})
#: Sectioning ``div`` classes a long page is split along (outermost first).
_XH_SECTIONS = frozenset({"sect1", "sect2", "sect3", "sect4", "sect5", "refsect1",
                          "refsect2", "refsect3", "simplesect", "section"})
_ADMONITIONS = frozenset({"note", "tip", "warning", "caution", "important"})
_NUMBERING = re.compile(
    r"^(?:(?:Chapter|Appendix|Part)\s+)?(?:[0-9]+|[A-Z]|[IVXLC]+)(?:\.[0-9]+)*\.\s+")
_CHAPTER = re.compile(r"^Chapter\s+([0-9]+)\.")


def strip_numbering(title: str) -> str:
    """``"8.1.1. Integer Types"`` → ``"Integer Types"``; ``"Chapter 8. Data Types"`` too."""
    return _NUMBERING.sub("", _norm(title))


class _XhtmlRenderer:
    """Render the visible text of DocBook XHTML as blocks, one per paragraph or row."""

    def __init__(self, skip: Iterable[ET.Element] = ()) -> None:
        self.skip = {id(e) for e in skip}

    def hidden(self, el: ET.Element) -> bool:
        """Whether ``el`` shows no text: navigation, TOC, scripts or an excluded element."""
        if id(el) in self.skip or not isinstance(el.tag, str):
            return True
        if el.tag in (f"{_XH}script", f"{_XH}style", f"{_XH}head"):
            return True
        return bool(_classes(el) & _XH_SKIP_CLASSES)

    def inline(self, el: ET.Element) -> str:
        """Visible text of ``el`` with every tag removed (``<br>`` becomes a space)."""
        out = [el.text or ""]
        for child in el:
            if not self.hidden(child):
                out.append(" " if child.tag == f"{_XH}br" else self.inline(child))
            out.append(child.tail or "")
        return "".join(out)

    def _heading(self, el: ET.Element, parent: ET.Element) -> str:
        """A heading's text without its numbering; ``""`` for an admonition's label."""
        text = strip_numbering(self.inline(el))
        if _classes(parent) & _ADMONITIONS and text.lower() in _ADMONITIONS:
            return ""  # the "Note" / "Tip" label of an admonition box
        return text

    def blocks(self, el: ET.Element, out: list[str]) -> None:
        """Append the text of each visible block inside ``el`` to ``out``, in order."""
        pending: list[str] = [el.text or ""]

        def flush() -> None:
            text = _norm("".join(pending))
            if text:
                out.append(text)
            pending.clear()

        for child in el:
            if self.hidden(child):
                pending.append(child.tail or "")
                continue
            if child.tag not in _XH_BLOCKS:
                pending.append(" " if child.tag == f"{_XH}br" else self.inline(child))
                pending.append(child.tail or "")
                continue
            flush()
            if child.tag in _XH_HEADINGS:
                text = self._heading(child, el)
                if text:
                    out.append(text)
            elif child.tag == f"{_XH}tr":
                cells: list[str] = []
                for cell in child:
                    if self.hidden(cell):
                        continue
                    parts: list[str] = []
                    self.blocks(cell, parts)
                    if parts:
                        cells.append(" ".join(parts))
                if cells:
                    out.append(" | ".join(cells))  # one line per table row
            elif any(c.tag in _XH_BLOCKS for c in child.iter() if c is not child):
                self.blocks(child, out)
            else:
                text = _norm(self.inline(child))
                if text:
                    out.append(text)
            pending.append(child.tail or "")
        flush()


def _xh_title(el: ET.Element) -> str:
    """The title of a page's main ``div`` or of a section: its first heading."""
    for h in el.iter():
        if h.tag in _XH_HEADINGS:
            return strip_numbering("".join(h.itertext()))
    return ""


def _xh_own_heading(el: ET.Element) -> ET.Element | None:
    """The element holding ``el``'s own title (``div.titlepage`` or the first heading)."""
    for child in el:
        if "titlepage" in _classes(child) and any(
                c.tag in _XH_HEADINGS for c in child.iter()):
            return child
        if child.tag in _XH_HEADINGS:
            return child
    return None


@dataclass
class _PgPage:
    """One chunked HTML page of the PostgreSQL manual."""

    stem: str
    title: str
    up: str
    next: str
    main: ET.Element
    kind: str


def _pg_read_page(path: Path) -> _PgPage | None:
    """Parse one XHTML page; ``None`` for pages without a main content ``div``."""
    root = ET.parse(path).getroot()
    body = root.find(f"{_XH}body")
    if body is None:
        return None
    mains = [d for d in body if d.tag == f"{_XH}div" and not _classes(d) & _XH_SKIP_CLASSES]
    if not mains:
        return None
    up = nxt = ""
    for a in body.iter(f"{_XH}a"):
        if a.get("accesskey") == "u" and not up:
            up = (a.get("href") or "").split("#")[0]
        elif a.get("accesskey") == "n" and not nxt:
            nxt = (a.get("href") or "").split("#")[0]
    head_title = root.find(f"{_XH}head/{_XH}title")
    title = _norm("".join(head_title.itertext())) if head_title is not None else ""
    main = mains[0]
    return _PgPage(path.stem, title, up.removesuffix(".html"), nxt.removesuffix(".html"), main,
                   (main.get("class") or "").split()[0] if main.get("class") else "")


def _pg_chapter(stem: str, pages: dict[str, _PgPage]) -> int | None:
    """The number of the chapter ``stem`` belongs to (walking "Up" links), if any."""
    seen: set[str] = set()
    while stem in pages and stem not in seen:
        seen.add(stem)
        m = _CHAPTER.match(pages[stem].title)
        if m:
            return int(m.group(1))
        stem = pages[stem].up
    return None


def _pg_records(page: _PgPage, min_chars: int, max_chars: int) -> list[dict[str, str]]:
    """Records for one page: the whole page if it fits ``max_chars``, else its sections.

    A page (or section) longer than ``max_chars`` is split along its sub-sections: the
    text before the first one becomes a record titled like the page, then each
    sub-section is handled the same way.  Pieces shorter than ``min_chars``, and
    pieces still too long that have no sub-sections, are dropped.
    """
    refname = ""
    if page.kind == "refentry":
        refname = strip_numbering(page.title)
    out: list[dict[str, str]] = []

    def render(node: ET.Element, exclude: Sequence[ET.Element]) -> str:
        blocks: list[str] = []
        _XhtmlRenderer(exclude).blocks(node, blocks)
        return "\n\n".join(blocks)

    def add(text: str, title: str, rid: str, anchor: str) -> None:
        if min_chars <= len(text) <= max_chars:
            url = f"{PG_DOC_URL}{page.stem}.html" + (f"#{anchor}" if anchor else "")
            out.append({"id": rid, "title": title, "text": text, "url": url,
                        "page": page.stem})

    def walk(node: ET.Element, title: str, rid: str, anchor: str) -> None:
        own = _xh_own_heading(node)
        skip = [own] if own is not None else []
        for div in node:  # a reference page's name heading repeats its title
            if div.tag == f"{_XH}div" and "refnamediv" in _classes(div):
                skip.extend(h for h in div if h.tag in _XH_HEADINGS)
        text = render(node, skip)
        if len(text) <= max_chars:
            add(text, title, rid, anchor)
            return
        subs = [c for c in node if c.tag == f"{_XH}div" and _classes(c) & _XH_SECTIONS]
        if not subs:
            return
        add(render(node, skip + subs), title, rid, anchor)
        for k, sub in enumerate(subs, 1):
            sub_title = _xh_title(sub)
            if refname:
                sub_title = f"{refname}: {sub_title}"
            sid = sub.get("id") or ""
            sub_rid = sid.lower() if sid and not sid.startswith("id-") else f"{rid}-{k}"
            walk(sub, sub_title, sub_rid, sid)

    walk(page.main, strip_numbering(page.title), page.stem, "")
    return out


def pg_doc_corpus(
    html_dir: str | os.PathLike[str], *, chapters: Iterable[int] = PG_DOC_CHAPTERS,
    apps: Iterable[str] = PG_DOC_APPS, min_chars: int = PG_MIN_CHARS,
    max_chars: int = PG_MAX_CHARS,
) -> list[dict[str, str]]:
    """Convert the chosen pages of the PostgreSQL HTML manual into records.

    A page is chosen when it belongs (through its "Up" links) to one of ``chapters``
    or its file name (without ``.html``) is in ``apps``.  Each record has ``id`` (a
    stable slug: the page's file name, or a section's anchor in lower case),
    ``title`` (numbering removed), ``text`` (visible text, markup removed, blocks
    separated by blank lines), ``url`` and ``page`` (the file name it came from).
    Navigation bars, tables of contents, index anchors and admonition labels are left
    out; table rows become ``a | b | c`` lines.  Titles are made distinct by adding
    the page title in parentheses to repeated ones; a record whose title is still
    repeated is dropped.  Records keep the manual's page order.
    """
    folder = Path(html_dir)
    pages: dict[str, _PgPage] = {}
    for f in sorted(folder.glob("*.html")):
        try:
            page = _pg_read_page(f)
        except ET.ParseError:
            continue
        if page is not None:
            pages[page.stem] = page
    wanted_chapters, wanted_apps = set(chapters), set(apps)
    order = _pg_page_order(pages)
    records: list[dict[str, str]] = []
    for stem in order:
        if stem in wanted_apps or _pg_chapter(stem, pages) in wanted_chapters:
            records.extend(_pg_records(pages[stem], min_chars, max_chars))
    counts: dict[str, int] = {}
    for r in records:
        counts[r["title"].lower()] = counts.get(r["title"].lower(), 0) + 1
    seen_titles: set[str] = set()
    seen_ids: set[str] = set()
    out: list[dict[str, str]] = []
    for r in records:
        title = r["title"]
        if counts[title.lower()] > 1:
            page_title = strip_numbering(pages[r["page"]].title)
            if page_title.lower() != title.lower():
                title = f"{title} ({page_title})"
        if title.lower() in seen_titles or r["id"] in seen_ids:
            continue
        seen_titles.add(title.lower())
        seen_ids.add(r["id"])
        out.append({**r, "title": title})
    return out


def _pg_page_order(pages: dict[str, _PgPage]) -> list[str]:
    """Page stems in reading order (following "Next" links from ``index``)."""
    order: list[str] = []
    seen: set[str] = set()
    stem = "index"
    while stem in pages and stem not in seen:
        seen.add(stem)
        order.append(stem)
        stem = pages[stem].next
    order.extend(s for s in sorted(pages) if s not in seen)  # pages off the chain
    return order


# --------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------

def _write_jsonl(path: str, rows: Iterable[dict[str, Any]]) -> int:
    """Write ``rows`` as UTF-8 JSON lines to ``path``; return the number written."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with open(path, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            n += 1
    return n


def _cmd_manpages(args: argparse.Namespace) -> int:
    """``manpages`` sub-command: write sentence JSONL (and optionally NAME-line queries)."""
    t0 = time.perf_counter()
    queries: list[str] = []
    seen_queries: set[str] = set()
    stats = {"pages": 0, "pages_with_sentences": 0}

    def rows() -> Iterator[dict[str, Any]]:
        for item in manpage_texts(args.root, args.limit, sections=args.sections,
                                  unique=not args.keep_duplicates, workers=args.workers):
            stats["pages"] += 1
            stats["pages_with_sentences"] += bool(item.sentences)
            q = item.name_line
            if len(q.split()) >= 3 and q.lower() not in seen_queries:
                seen_queries.add(q.lower())
                queries.append(q)
            title = f"{item.name}: {item.name_line}"
            for k, sentence in enumerate(item.sentences):
                yield {"id": f"{item.page}#{k}", "page": item.page, "title": title,
                       "text": sentence}

    n = _write_jsonl(args.out, rows())
    if args.queries:
        Path(args.queries).parent.mkdir(parents=True, exist_ok=True)
        Path(args.queries).write_text("".join(q + "\n" for q in queries), encoding="utf-8")
    dt = time.perf_counter() - t0
    print(f"man pages parsed: {stats['pages']} ({stats['pages_with_sentences']} with sentences)")
    print(f"sentences written: {n} to {args.out}")
    if args.queries:
        print(f"queries written: {len(queries)} to {args.queries}")
    print(f"elapsed: {dt:.1f}s")
    return 0


def _source_dir(args: argparse.Namespace, package: str, subdir: str, tmp: str,
                given: str | None) -> Path:
    """The folder to read: ``given`` (already unpacked), or ``subdir`` of the package's
    .deb (``--deb auto`` downloads it with apt-get)."""
    if given:
        return Path(given)
    deb = Path(args.deb) if args.deb != "auto" else _download_deb(package, tmp)
    return _extract_deb(deb, os.path.join(tmp, "root"), subdir)


def _write_corpus(args: argparse.Namespace, label: str, records: Sequence[dict[str, str]],
                  extra: Sequence[str] = (), started: float = 0.0) -> int:
    """Write corpus rows (id, tenant, title, text, url and ``extra`` fields) and, with
    ``--titles``, the titles; print what was written."""
    rows = [{"id": r["id"], "tenant": args.tenant, "title": r["title"], "text": r["text"],
             "url": r["url"], **{k: r[k] for k in extra}} for r in records]
    n = _write_jsonl(args.out, rows)
    if args.titles:
        Path(args.titles).parent.mkdir(parents=True, exist_ok=True)
        titles = [r["title"] for r in rows if r["title"]]
        Path(args.titles).write_text("".join(t + "\n" for t in titles), encoding="utf-8")
    size = Path(args.out).stat().st_size
    mean = sum(len(r["text"]) for r in rows) / n if n else 0.0
    print(f"{label} written: {n} to {args.out} ({size:,} bytes, mean text {mean:,.0f} chars)")
    if args.titles:
        print(f"titles written to {args.titles}")
    print(f"elapsed: {time.perf_counter() - started:.1f}s")
    return 0


def _cmd_gnome_help(args: argparse.Namespace) -> int:
    """``gnome-help`` sub-command: convert the gnome-user-docs .deb into corpus JSONL."""
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="gnome-help-") as tmp:
        page_dir = _source_dir(args, "gnome-user-docs", GNOME_HELP_SUBDIR, tmp, args.page_dir)
        records = gnome_help_corpus(page_dir, include_empty=args.include_empty)
    return _write_corpus(args, "gnome-help pages", records, ("desc",), t0)


def _cmd_debian_handbook(args: argparse.Namespace) -> int:
    """``debian-handbook`` sub-command: convert the debian-handbook .deb into corpus JSONL."""
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="debian-handbook-") as tmp:
        html_dir = _source_dir(args, "debian-handbook", DEBIAN_HANDBOOK_SUBDIR, tmp,
                               args.html_dir)
        records = debian_handbook_corpus(html_dir, min_chars=args.min_chars,
                                         max_chars=args.max_chars)
    return _write_corpus(args, "debian-handbook sections", records, (), t0)


def _cmd_postgresql(args: argparse.Namespace) -> int:
    """``postgresql`` sub-command: convert the postgresql-doc .deb into corpus JSONL."""
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="pg-doc-") as tmp:
        html_dir = _source_dir(args, args.package, f"usr/share/doc/{args.package}/html", tmp,
                               args.html_dir)
        records = pg_doc_corpus(html_dir)
    return _write_corpus(args, "postgresql records", records, (), t0)


def _parser() -> argparse.ArgumentParser:
    """Build the argument parser of the ``python -m bench.corpora`` CLI."""
    p = argparse.ArgumentParser(prog="python -m bench.corpora", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    m = sub.add_parser("manpages", help="man pages -> sentence JSONL (+ NAME-line queries)")
    m.add_argument("--out", required=True, help="output JSONL of {id, page, title, text}")
    m.add_argument("--queries", help="also write distinct NAME lines (>= 3 words) here")
    m.add_argument("--limit", type=int, default=None, help="stop after N pages")
    m.add_argument("--root", default="/usr/share/man", help="man tree (default %(default)s)")
    m.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                   help="parser processes (default: CPU count)")
    m.add_argument("--sections", default=DEFAULT_SECTIONS,
                   help="regex over upper-cased section headings to keep "
                   "(default %(default)r)")
    m.add_argument("--keep-duplicates", action="store_true",
                   help="keep sentences already written for an earlier page")
    m.set_defaults(func=_cmd_manpages)
    g = sub.add_parser("gnome-help", help="gnome-user-docs .deb -> corpus JSONL")
    src = g.add_mutually_exclusive_group(required=True)
    src.add_argument("--deb", help="path to gnome-user-docs_*.deb, or 'auto' to apt-get it")
    src.add_argument("--page-dir", help="an already unpacked .../help/C/gnome-help folder")
    g.add_argument("--out", required=True, help="output corpus JSONL")
    g.add_argument("--titles", help="also write page titles, one per line, here")
    g.add_argument("--include-empty", action="store_true",
                   help="keep guide pages that have no text of their own")
    g.add_argument("--tenant", default="gnome", help="tenant field (default %(default)s)")
    g.set_defaults(func=_cmd_gnome_help)
    d = sub.add_parser("debian-handbook", help="debian-handbook .deb -> section corpus JSONL")
    src = d.add_mutually_exclusive_group(required=True)
    src.add_argument("--deb", help="path to debian-handbook_*.deb, or 'auto' to apt-get it")
    src.add_argument("--html-dir", help="an already unpacked .../html/en-US folder")
    d.add_argument("--out", required=True, help="output corpus JSONL")
    d.add_argument("--titles", help="also write section titles, one per line, here")
    d.add_argument("--min-chars", type=int, default=HANDBOOK_MIN_CHARS,
                   help="merge shorter sections into their parent (default %(default)s)")
    d.add_argument("--max-chars", type=int, default=HANDBOOK_MAX_CHARS,
                   help="fold deeper sections only while the record stays this short "
                   "(default %(default)s)")
    d.add_argument("--tenant", default="debian", help="tenant field (default %(default)s)")
    d.set_defaults(func=_cmd_debian_handbook)
    pg = sub.add_parser("postgresql", help="postgresql-doc-15 .deb -> corpus JSONL")
    pg_src = pg.add_mutually_exclusive_group(required=True)
    pg_src.add_argument("--deb", help="path to postgresql-doc-15_*.deb, or 'auto' to apt-get it")
    pg_src.add_argument("--html-dir", help="an already unpacked .../postgresql-doc-15/html")
    pg.add_argument("--package", default=PG_DOC_PACKAGE,
                    help="Debian package for --deb auto (default %(default)s)")
    pg.add_argument("--out", required=True, help="output corpus JSONL")
    pg.add_argument("--titles", help="also write record titles, one per line, here")
    pg.add_argument("--tenant", default="pg", help="tenant field (default %(default)s)")
    pg.set_defaults(func=_cmd_postgresql)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit status."""
    args = _parser().parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    return func(args)


if __name__ == "__main__":
    sys.exit(main())
