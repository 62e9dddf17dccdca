"""Text utilities shared by every backend: query terms, character n-gram Jaccard.

Words are split where SQLite FTS5's unicode61 tokenizer splits them (the embedded store's
FTS5 table uses it; :mod:`query.unicode61` lists its token characters): letters and
numbers of every script are word characters, so an Arabic, Cyrillic or accented query has
terms like an English one.
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Callable

from query.unicode61 import TOKEN_RANGES


def _char_class(ranges: tuple[tuple[int, int], ...]) -> str:
    """A regex character class matching the code points of ``ranges``."""
    parts = [re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
             for a, b in ranges]
    return "[" + "".join(parts) + "]"


TOKEN_CHAR = _char_class(TOKEN_RANGES)
# A word: a run of token characters; runs joined by "." or "'" stay one term ("v8.2",
# "user's"), which FTS5 then matches as a phrase.
_WORD = re.compile(f"{TOKEN_CHAR}+(?:[.']{TOKEN_CHAR}+)*")

# A short English stopword list: query terms that carry no retrieval signal. Both
# backends drop the same words so their lexical results are comparable.
STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
    ]
)


def words(text: str) -> list[str]:
    """Lowercased word tokens, split as FTS5's unicode61 splits them (keeps version
    numbers such as 8.2 together)."""
    return [w.lower() for w in _WORD.findall(text)]


def query_terms(text: str, limit: int = 32) -> list[str]:
    """Distinct non-stopword terms of a query, in order, at most ``limit``."""
    seen: dict[str, None] = {}
    for w in words(text):
        if w not in STOPWORDS:
            seen.setdefault(w, None)
    return list(seen)[:limit]


_SUFFIXES = ("ingly", "edly", "ing", "ed", "es", "s", "ly")


def stem(word: str) -> str:
    """A light suffix stripper, enough to compare words across inflections."""
    w = word.lower().removesuffix("'s").replace("'", "")
    for suf in _SUFFIXES:
        if len(w) > len(suf) + 2 and w.endswith(suf):
            w = w[: -len(suf)]
            if suf in ("ing", "ed", "ingly", "edly") and len(w) > 3 and w[-1] == w[-2] \
                    and w[-1] not in "lsz":
                w = w[:-1]
            break
    return w[:-1] if len(w) > 3 and w.endswith("e") else w


@functools.lru_cache(maxsize=16_384)
def content_stem_set(text: str) -> frozenset[str]:
    """Stems of the distinct non-stopword words of text (one-letter words dropped);
    cached, as the gate reads the same passages for many queries."""
    return frozenset(stem(w) for w in words(text) if w not in STOPWORDS and len(w) > 1)


def coverage(query: str, text: str) -> float:
    """Fraction of the query's content stems that occur in text (0.0 for no terms)."""
    q = content_stem_set(query)
    return len(q & content_stem_set(text)) / len(q) if q else 0.0


def char_ngrams(text: str, n: int = 3) -> set[str]:
    """Character n-grams of the normalized text (padded so short strings still compare)."""
    norm = " ".join(words(text))
    padded = f" {norm} "
    if len(padded) <= n:
        return {padded}
    return {padded[i : i + n] for i in range(len(padded) - n + 1)}


def jaccard(a: str, b: str, n: int = 3) -> float:
    """Jaccard similarity of character n-gram sets (1.0 for identical normalized text)."""
    ga, gb = char_ngrams(a, n), char_ngrams(b, n)
    if not ga and not gb:
        return 1.0
    return len(ga & gb) / len(ga | gb)


_SCRIPT = re.compile(r"<(script|style)\b[^>]*>.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)
# HTML elements (the standard's names), or any tag that carries attributes: "<Enter>" and
# "<Tab>" in a correction are key names, not markup.
_HTML_ELEMENTS = (
    "a|abbr|address|area|article|aside|audio|b|base|bdi|bdo|blockquote|body|br|button|"
    "canvas|caption|cite|code|col|colgroup|data|datalist|dd|del|details|dfn|dialog|div|dl|"
    "dt|em|embed|fieldset|figcaption|figure|footer|form|frame|frameset|h[1-6]|head|header|"
    "hr|html|i|iframe|img|input|ins|kbd|label|legend|li|link|main|map|mark|math|menu|meta|"
    "meter|nav|noscript|object|ol|optgroup|option|output|p|param|picture|pre|progress|q|"
    "rp|rt|ruby|s|samp|script|section|select|slot|small|source|span|strong|style|sub|"
    "summary|sup|svg|table|tbody|td|template|textarea|tfoot|th|thead|time|title|tr|track|"
    "u|ul|var|video|wbr|xmp|marquee|applet|base|basefont|blink|font|center|image")
# (a bare element joined to a name by "_" is a placeholder, "ix_<table>_<columns>"; with
# attributes or as a closing tag it is markup wherever it is)
# (a bare element name glued to a hyphen or an underscore is a placeholder of a name:
# "<CODE>-FRONT-A4", "theatre-<CODE>", "db_<ID>")
_TAG = re.compile(r"(?<![_-])<(?:(?i:" + _HTML_ELEMENTS + r")\b[^<>]*/?>(?![_-])|/(?i:"
                  + _HTML_ELEMENTS + r")\b[^<>]*>)"
                  r"|</?[A-Za-z][\w:-]*\s+[^<>]*=[^<>]*/?>"
                  r"|</[A-Za-z][\w:-]*\s*>")


def has_markup(text: str) -> bool:
    """True when text contains HTML tags, comments or scripts (also entity-encoded)."""
    return any(bool(_TAG.search(t) or _COMMENT.search(t) or _SCRIPT.search(t))
               for t in (text, html.unescape(text)))


_MD_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
# _emphasis_ (not snake_case: the underscores stand apart from words; nor a name's parts
# around a placeholder, "grp_<db>_owner", "<db>_retired_<YYYYMMDD>": an opening
# underscore follows a space or an opening mark, a closing one comes before one)
_MD_EM = re.compile(r"(?<![^\s(\[\"'“‘])_(?=[^\s_])([^_\n]+?)(?<=[^\s_])_"
                    r"(?![^\s.,;:!?)\]\"'”’])")
_MD_FENCE = re.compile(r"^[ \t]*(?:```|~~~)[\w+-]*[ \t]*$", re.MULTILINE)
_MD_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+", re.MULTILINE)
_MD_TASK = re.compile(r"^([ \t]*(?:[-*+][ \t]+)?)\[[ xX✓✔]\][ \t]+", re.MULTILINE)
# Wiki markup of issue trackers (Jira, Confluence): {code:sql} ... {code} and {noformat}
# blocks, {quote} blocks, h3. headings, bq. quotes, {{monospace}}, *bold*, [~user]
# mentions and [label|https://...] links.
_WIKI_BLOCK = re.compile(r"\{(?:code|noformat|panel)(?::[^{}\n]*)?\}")
_WIKI_QUOTE = re.compile(r"\{quote\}(.*?)\{quote\}", re.DOTALL)
_WIKI_HEADING = re.compile(r"^[ \t]*h[1-6]\.[ \t]+", re.MULTILINE)
_WIKI_BQ = re.compile(r"^[ \t]*bq\.[ \t]+", re.MULTILINE)
_WIKI_MONO = re.compile(r"\{\{([^{}\n]+?)\}\}")
# (the starred text has a letter or digit: "OnCalendar=*-*-* 00:30" is a value, not bold;
# nor is a glob, "kf-*-desk-*": stars next to "-", "." or "/" are wildcards)
_WIKI_STRONG = re.compile(r"(?<![\w*`/.-])\*(?=[^\s*./-])(?=[^*`\n]*?[A-Za-z0-9][^*`\n]*?\*)"
                          r"([^*`\n]+?)(?<=[^\s*./-])\*(?![\w*/.-])")
_WIKI_MENTION = re.compile(r"\[~([\w.-]+)\]")
_WIKI_LINK = re.compile(r"\[([^\[\]|\n]+)\|((?:https?|mailto):[^\[\]\s]+)\]")
_CODE_SPAN = re.compile(r"(`+)[^`\n]*?\1")


def outside_code(pattern: re.Pattern[str], repl: str | Callable[[re.Match[str]], str],
                 text: str) -> str:
    """``pattern.sub(repl, ...)`` on the parts of text outside `code spans`."""
    out, last = [], 0
    for m in _CODE_SPAN.finditer(text):
        out.append(pattern.sub(repl, text[last:m.start()]))
        out.append(m.group())
        last = m.end()
    out.append(pattern.sub(repl, text[last:]))
    return "".join(out)


def _wiki_quote(m: re.Match[str]) -> str:
    return "\n".join("> " + line for line in m.group(1).strip().splitlines()) + "\n"


def plain_markup(text: str) -> str:
    """Text with the markup that only styles or frames it taken out: Markdown emphasis
    (**bold**, __bold__), code-fence lines, ATX headings and task boxes ("- [x] "), and
    issue-tracker wiki
    markup (code/noformat block lines, h1.-h6. headings, *bold*, {{monospace}} as a
    `code span`, [~user] as @user, [label|url] as "label (url)"; {quote} blocks and bq.
    lines become "> " quoted lines). What the markup enclosed stays."""
    text = _WIKI_QUOTE.sub(_wiki_quote, text)
    text = _WIKI_BQ.sub("> ", text)
    text = _WIKI_BLOCK.sub("\n", text)
    text = _WIKI_MONO.sub(r"`\1`", text)
    text = _WIKI_MENTION.sub(r"@\1", text)
    text = _WIKI_LINK.sub(r"\1 (\2)", text)
    text = _WIKI_HEADING.sub("", text)
    text = _MD_HEADING.sub("", text)
    text = _MD_TASK.sub(r"\1", text)
    text = outside_code(_MD_STRONG, r"\2", text)
    text = outside_code(_MD_EM, r"\1", text)
    text = outside_code(_WIKI_STRONG, r"\1", text)
    return _MD_FENCE.sub("", text)


def plain_text(text: str, *, keep_lines: bool = False) -> str:
    """Text without HTML: scripts, styles and comments dropped, tags removed, entities
    decoded, whitespace collapsed (within lines only, with ``keep_lines``: a message's
    bullets, greeting and sign-off are lines of their own). Nuggets are stored as plain
    text; whatever renders them escapes on the way out. Markup that only styles goes too
    (``plain_markup``)."""
    text = _SCRIPT.sub(" ", text)
    text = _COMMENT.sub(" ", text)
    text = outside_code(_TAG, " ", text)  # "`arch-proj <code>`": a placeholder, not markup
    text = html.unescape(text)
    text = _SCRIPT.sub(" ", text)  # markup that was entity-encoded
    text = _COMMENT.sub(" ", text)
    text = outside_code(_TAG, " ", text)
    text = plain_markup(text)
    if keep_lines:
        lines = (" ".join(line.split()) for line in text.splitlines())
        return "\n".join(line for line in lines if line)
    return " ".join(text.split())
