"""Unit tests for bench/corpora.py: roff man pages and Mallard pages on tiny inline samples."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

from bench.corpora import (
    ManText,
    debian_handbook_corpus,
    gnome_help_corpus,
    gnome_help_page,
    is_clean_sentence,
    main,
    manpage_texts,
    parse_manpage,
    pg_doc_corpus,
    roff_unescape,
    split_sentences,
    strip_numbering,
)

# --------------------------------------------------------------------------------------
# man pages
# --------------------------------------------------------------------------------------

FROBNICATE_1 = r""".\" A comment line that must never show up.
.TH FROBNICATE 1 "2024" "frob 1.0" "User Commands"
.de XX
Bogus macro body text that must not appear in the output at all.
..
.SH NAME
frobnicate \- adjust the frobs of a \fIwidget\fR tree
.SH SYNOPSIS
.B frobnicate
[\fB\-v\fR] \fIFILE\fR...
.SH DESCRIPTION
.B frobnicate
reads each \fIFILE\fR and adjusts its frobs \(em carefully \(em so that the
widget tree stays balanced.
It never touches files outside the current directory, e.g. \fB/etc/passwd\fR.
Short one here.
.PP
The default frob level is taken from the
.BR frob.conf (5)
file when it exists and is readable by the current user.
.nf
frobnicate \-v example.txt > out.txt
And this display line also must be dropped from the sentences.
.fi
.SH OPTIONS
.TP
.BR \-v ", " \-\-verbose
Print a message for every frob that is adjusted in the tree.
.TP
\fB\-n\fR, \fB\-\-dry\-run\fR
only show what would change
.IP "\fB\-q\fR" 4
Suppress all warnings, even the ones about unbalanced widget trees.
.if n \{\
Text shown on terminals only is part of the description too, you see.
.\}
.if t \{\
Text for typesetters only is never part of terminal output at all.
.\}
.SH "SEE ALSO"
The configuration file format is described in the frob.conf manual page.
"""

FROBNICATE_SENTENCES = (
    "frobnicate reads each FILE and adjusts its frobs — carefully — so that the widget "
    "tree stays balanced.",
    "It never touches files outside the current directory, e.g. /etc/passwd.",
    "The default frob level is taken from the frob.conf(5) file when it exists and is "
    "readable by the current user.",
    "Print a message for every frob that is adjusted in the tree.",
    "Suppress all warnings, even the ones about unbalanced widget trees.",
    "Text shown on terminals only is part of the description too, you see.",
)

FROB_MDOC = r""".Dd January 1, 2024
.Dt FROB 1
.Os
.Sh NAME
.Nm frob
.Nd frobnicate widget trees quickly
.Sh DESCRIPTION
The
.Nm
utility adjusts every widget listed on the command line
.Pq see Xr widget 5 .
With the
.Fl v
flag it also prints one line for every widget it adjusts.
"""

FROBD_8 = r""".TH FROBD 8
.SH NAME
frobd \- daemon that frobnicates widget trees in the background
.SH DESCRIPTION
Print a message for every frob that is adjusted in the tree.
The daemon wakes up once a minute and balances every registered widget tree.
"""


def _write_gz(path: Path, text: str) -> None:
    """Write ``text`` gzip-compressed to ``path``, creating parent folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write(text)


def _man_tree(root: Path) -> Path:
    """A tiny man tree: good pages, a redirect, a symlink, a broken and a German page."""
    _write_gz(root / "man1" / "frobnicate.1.gz", FROBNICATE_1)
    (root / "man1" / "frob.1").write_text(FROB_MDOC, encoding="utf-8")
    _write_gz(root / "man1" / "unfrob.1.gz", ".so man1/frobnicate.1\n")
    os.symlink("frobnicate.1.gz", root / "man1" / "frobnicate-alias.1.gz")
    _write_gz(root / "man7" / "broken.7.gz", ".TH BROKEN 7\n.SH DESCRIPTION\nNo name.\n")
    _write_gz(root / "man8" / "frobd.8.gz", FROBD_8)
    _write_gz(root / "de" / "man1" / "frobnicate.1.gz",
              FROBNICATE_1.replace("adjust the frobs", "stellt die Frobs ein"))
    return root


def test_roff_unescape_fonts_specials_and_strings() -> None:
    """Font switches vanish; dashes, quotes and predefined strings become text."""
    assert roff_unescape(r"\fBls\fR \-l \(em \(lqall\(rq \*(lqx\*(rq a\&.b\e") == (
        "ls -l — “all” “x” a.b\\")
    assert roff_unescape(r"\f(CWcode\fP\s-1SMALL\s0 \[u00E9]t\['e]") == "codeSMALL été"


def test_parse_manpage_name_line_and_paragraphs() -> None:
    """NAME description, kept sections only, tags/displays/false conditionals dropped."""
    name_line, paras = parse_manpage(FROBNICATE_1, "frobnicate")
    assert name_line == "adjust the frobs of a widget tree"
    assert paras == [
        "frobnicate reads each FILE and adjusts its frobs — carefully — so that the widget "
        "tree stays balanced. It never touches files outside the current directory, e.g. "
        "/etc/passwd. Short one here.",
        "The default frob level is taken from the frob.conf(5) file when it exists and is "
        "readable by the current user.",
        "Print a message for every frob that is adjusted in the tree.",
        "only show what would change",
        "Suppress all warnings, even the ones about unbalanced widget trees. Text shown on "
        "terminals only is part of the description too, you see.",
    ]


def test_parse_manpage_mdoc() -> None:
    """mdoc pages: .Nd is the NAME line, .Nm/.Fl/.Xr/.Pq render inline."""
    name_line, paras = parse_manpage(FROB_MDOC, "frob")
    assert name_line == "frobnicate widget trees quickly"
    assert paras == [
        "The frob utility adjusts every widget listed on the command line (see widget(5)). "
        "With the -v flag it also prints one line for every widget it adjusts."
    ]


def test_split_sentences_keeps_abbreviations_and_parentheses() -> None:
    """Boundaries need a capital next; "e.g." and initials do not end a sentence."""
    assert split_sentences("Use a flag (e.g. Foo) here. (It is optional.) J. Doe wrote it.") == [
        "Use a flag (e.g. Foo) here.", "(It is optional.)", "J. Doe wrote it."]


@pytest.mark.parametrize(
    ("sentence", "ok"),
    [
        ("The daemon wakes up once a minute and balances every widget tree.", True),
        ("frobd wakes up once a minute and balances every widget tree.", True),
        ("do not list implied entries ending with a tilde.", False),  # fragment
        ("Short one here.", False),  # fewer than 6 words
        ("The following options are accepted by the parser:", False),  # lead-in
        ("These flags are: --a-b, --c-d, --e-f, --g-h, --i-j, --k-l.", False),  # a list
    ],
)
def test_is_clean_sentence(sentence: str, ok: bool) -> None:
    """Real sentences pass; fragments, lead-ins and flag lists do not."""
    assert is_clean_sentence(sentence, "frobd") is ok


def test_manpage_texts_walks_english_tree(tmp_path: Path) -> None:
    """Reads .gz and plain pages, skips locales, redirects, symlinks and NAME-less pages."""
    root = _man_tree(tmp_path)
    items = list(manpage_texts(root))
    assert [i.page for i in items] == ["frob.1", "frobnicate.1", "frobd.8"]
    frob, frobnicate, frobd = items
    assert frob.name_line == "frobnicate widget trees quickly"
    assert frobnicate == ManText(
        "frobnicate.1", "adjust the frobs of a widget tree", FROBNICATE_SENTENCES,
        str(root / "man1" / "frobnicate.1.gz"))
    assert frobnicate.name == "frobnicate"
    # The sentence frobd shares with frobnicate is kept only once by default.
    assert frobd.sentences == (
        "The daemon wakes up once a minute and balances every registered widget tree.",)
    frobd_all = list(manpage_texts(root, unique=False))[-1]
    assert frobd_all.sentences[0] == "Print a message for every frob that is adjusted in the tree."
    assert [i.page for i in manpage_texts(root, limit=2, workers=2)] == ["frob.1", "frobnicate.1"]


def test_manpages_cli_writes_jsonl_and_queries(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """The CLI writes {id, page, title, text} lines and distinct NAME-line queries."""
    root = _man_tree(tmp_path / "man")
    out, queries = tmp_path / "out" / "man.jsonl", tmp_path / "out" / "queries.txt"
    assert main(["manpages", "--root", str(root), "--out", str(out), "--queries", str(queries),
                 "--workers", "1"]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert rows[0] == {
        "id": "frob.1#0", "page": "frob.1", "title": "frob: frobnicate widget trees quickly",
        "text": "The frob utility adjusts every widget listed on the command line "
                "(see widget(5)).",
    }
    assert len(rows) == 2 + len(FROBNICATE_SENTENCES) + 1
    assert queries.read_text(encoding="utf-8").splitlines() == [
        "frobnicate widget trees quickly",
        "adjust the frobs of a widget tree",
        "daemon that frobnicates widget trees in the background",
    ]
    assert "sentences written: 9" in capsys.readouterr().out


# --------------------------------------------------------------------------------------
# GNOME help (Mallard)
# --------------------------------------------------------------------------------------

TOPIC_PAGE = """<?xml version="1.0" encoding="utf-8"?>
<page xmlns="http://projectmallard.org/1.0/"
      xmlns:if="http://projectmallard.org/if/1.0/"
      xmlns:its="http://www.w3.org/2005/11/its"
      type="topic" style="task" id="files-copy">
  <info>
    <link type="guide" xref="files"/>
    <title type="link">Copy files</title>
    <title type="sort">copy</title>
    <credit type="author"><name>Jane Doe</name></credit>
    <desc>Copy or move items to a <gui>new</gui> folder.</desc>
  </info>
  <title>Copy or move files and folders</title>
  <!-- an XML comment is not text -->
  <p>A file can be copied by
  dragging it, or by pressing <keyseq><key>Ctrl</key><key>C</key></keyseq>.</p>
  <media type="image" src="figures/copy.png"><p>Screenshot caption</p></media>
  <comment><cite>editor</cite><p>Editorial note, not shown.</p></comment>
  <steps>
    <title>Copy and paste files</title>
    <item><p>Right-click and select <gui>Copy</gui>.</p></item>
    <item><p>Read <link xref="files-rename"/> or <link xref="#drag">
    dragging files
    </link>.</p></item>
  </steps>
  <if:choose>
    <if:when test="platform:gnome-classic"><p>Classic only text.</p></if:when>
    <if:else><p>Press the <media type="image" src="figures/ps.svg">PS</media> button
    (<media type="image" src="figures/icon.svg"/>) to continue.</p></if:else>
  </if:choose>
  <section id="drag">
    <title>Drag files</title>
    <note><p>You cannot copy into a <em>read-only</em> folder.</p></note>
    <table><tr><td><p>Copy</p></td><td><p>Ctrl+C</p></td></tr></table>
  </section>
</page>
"""

RENAME_PAGE = """<page xmlns="http://projectmallard.org/1.0/" type="topic" id="files-rename">
  <info><title type="link">Rename</title><desc>Change a file name.</desc></info>
  <title>Rename a file or folder</title>
  <p>Select the file and press <key>F2</key>.</p>
</page>
"""

GUIDE_PAGE = """<page xmlns="http://projectmallard.org/1.0/" type="guide" id="files">
  <info><desc>Find and manage files.</desc></info>
  <title>Files</title>
  <links type="topic"/>
</page>
"""


def _help_dir(root: Path) -> Path:
    """A folder with two topic pages and one links-only guide page."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "files-copy.page").write_text(TOPIC_PAGE, encoding="utf-8")
    (root / "files-rename.page").write_text(RENAME_PAGE, encoding="utf-8")
    (root / "files.page").write_text(GUIDE_PAGE, encoding="utf-8")
    (root / "legal.xml").write_text("<license/>", encoding="utf-8")
    return root


def test_gnome_help_page_extracts_visible_text(tmp_path: Path) -> None:
    """Title, desc and the visible text in document order, markup removed."""
    path = _help_dir(tmp_path) / "files-copy.page"
    titles = {"files-rename": "Rename", "files-copy#drag": "Drag files"}
    assert gnome_help_page(path, titles) == {
        "id": "files-copy",
        "title": "Copy or move files and folders",
        "desc": "Copy or move items to a new folder.",
        "text": "\n\n".join([
            "A file can be copied by dragging it, or by pressing Ctrl+C.",
            "Copy and paste files",
            "Right-click and select Copy.",
            "Read Rename or dragging files.",
            "Press the PS button to continue.",
            "Drag files",
            "You cannot copy into a read-only folder.",
            "Copy | Ctrl+C",
        ]),
        "url": "help:gnome-help/files-copy",
    }


def test_gnome_help_corpus_resolves_links_and_skips_empty_guides(tmp_path: Path) -> None:
    """Empty links take the target's link title; links-only guide pages are left out."""
    page_dir = _help_dir(tmp_path)
    records = gnome_help_corpus(page_dir)
    assert [r["id"] for r in records] == ["files-copy", "files-rename"]
    assert "Read Rename or dragging files." in records[0]["text"]
    assert records[1] == {
        "id": "files-rename", "title": "Rename a file or folder", "desc": "Change a file name.",
        "text": "Select the file and press F2.", "url": "help:gnome-help/files-rename",
    }
    with_empty = gnome_help_corpus(page_dir, include_empty=True)
    assert [r["id"] for r in with_empty] == ["files", "files-copy", "files-rename"]
    assert with_empty[0]["text"] == "" and with_empty[0]["title"] == "Files"


def test_gnome_help_cli_writes_corpus_and_titles(tmp_path: Path) -> None:
    """The CLI writes {id, tenant, title, text, url, desc} lines and a titles file."""
    page_dir = _help_dir(tmp_path / "help")
    out, titles = tmp_path / "o" / "corpus.jsonl", tmp_path / "o" / "titles.txt"
    assert main(["gnome-help", "--page-dir", str(page_dir), "--out", str(out),
                 "--titles", str(titles)]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [list(r) for r in rows] == [["id", "tenant", "title", "text", "url", "desc"]] * 2
    assert {r["tenant"] for r in rows} == {"gnome"}
    assert titles.read_text(encoding="utf-8").splitlines() == [
        "Copy or move files and folders", "Rename a file or folder"]


# --------------------------------------------------------------------------------------
# The Debian Administrator's Handbook (DocBook XHTML)
# --------------------------------------------------------------------------------------

_XHTML_HEAD = """<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<html xmlns="http://www.w3.org/1999/xhtml"><head><title>{title}</title>{links}</head><body>
<ul class="docnav top"><li class="previous"><a href="index.html"><strong>Prev</strong></a></li>
</ul>"""
_XHTML_TAIL = """<ul class="docnav"><li class="next"><a href="x.html">Next</a></li></ul>
</body></html>"""

HB_INDEX = _XHTML_HEAD.format(
    title="The Handbook", links='<link rel="next" href="frob.html" title="Chapter 1" />') + """
<div class="book"><div class="titlepage"><h1 class="title">The Handbook</h1></div>
<div class="legalnotice"><p>Legal text that is never read.</p></div></div>""" + _XHTML_TAIL

HB_CHAPTER = _XHTML_HEAD.format(
    title="Chapter 1. Frobbing", links='<link rel="up" href="index.html" />'
    '<link rel="next" href="sect.frob-tools.html" />') + """
<div class="chapter"><div class="titlepage"><div><div><h1 class="title">
<a xmlns="" id="frob"></a>Chapter 1. Frobbing <code class="command">widgets</code></h1>
</div></div></div>
<div class="toc"><dl class="toc"><dt><a href="frob.html#sect.frob-basics">1.1. Basics</a></dt>
</dl></div>
<div class="highlights"><div class="para">
  Frobbing is what keeps every widget tree balanced, and the administrators of this
  company learned it the hard way over many long nights in the server room.
</div></div>
<a id="id-1.2.3" class="indexterm"></a>
<div class="section"><div class="titlepage"><div><div><h2 class="title">
<a xmlns="" id="sect.frob-basics"></a>1.1. Basics of <code class="command">frob</code></h2>
</div></div></div>
<div class="para">
  The <code class="command">frob</code> command reads <code class="filename">/etc/frob.conf</code>
  and adjusts the frobs. It needs root rights:
</div>
<pre class="screen"><code class="computeroutput">$ </code><strong class="userinput"><code>sudo frob
  --all</code></strong>
frobbed 3 widgets
<code class="computeroutput"># </code><strong class="userinput"><code>frob -n</code></strong></pre>
<div class="example"><p class="title"><strong>Example 1.1. A frob.conf file</strong></p>
<div class="example-contents"><pre class="programlisting"># the level
level = 3
</pre></div></div>
<div class="figure"><p class="title"><strong>Figure 1.1. A frob</strong></p>
<div class="mediaobject"><img src="images/frob.png" alt="frob" /></div></div>
<div class="sidebar"><div class="titlepage"><div><div><p class="title"><strong>
<span class="emphasis"><em>TIP</em></span> Dry runs</strong></p></div></div></div>
<div class="para">Use <code class="command">frob -n</code> first; the manual is online.
<div xmlns="" class="url">→ <a xmlns="http://www.w3.org/1999/xhtml"
 href="https://frob.example/">https://frob.example/</a></div></div></div>
<div class="section"><div class="titlepage"><div><div><h3 class="title">
<a xmlns="" id="id-1.4.5.6"></a>1.1.1. Frob Levels</h3></div></div></div>
<div class="para">Levels go from 1 to 9, and the default level is 3 on every Debian system
  unless /etc/frob.conf says otherwise. Higher levels frob harder but take longer.</div>
<div class="itemizedlist"><ul><li class="listitem"><div class="para">Level 1: gentle</div></li>
<li class="listitem"><div class="para">Level 9: brutal</div></li></ul></div>
<div class="section"><div class="titlepage"><div><div><h4 class="title">
<a xmlns="" id="sect.frob-level-zero"></a>1.1.1.1. Level Zero</h4></div></div></div>
<div class="para">Level 0 disables frobbing.</div>
<div class="table"><p class="title"><strong>Table 1.1. Levels</strong></p>
<div class="table-contents"><table><tbody><tr><td>0</td><td>off</td></tr></tbody></table>
</div></div>
</div></div>
<div class="section"><div class="titlepage"><div><div><h3 class="title">
<a xmlns="" id="sect.frob-tiny"></a>1.1.2. Tiny</h3></div></div></div>
<div class="para">Too short to stand alone.</div></div>
</div></div>""" + _XHTML_TAIL

HB_SECT = _XHTML_HEAD.format(
    title="1.2. Tools", links='<link rel="up" href="frob.html" />'
    '<link rel="next" href="frob.html" />') + """
<div class="section"><div class="titlepage"><div><div><h2 class="title">
<a xmlns="" id="sect.frob-tools"></a>1.2. Tools</h2></div></div></div>
<div class="para">Only <code class="command">frob</code> itself.</div>
<div class="section"><div class="titlepage"><div><div><h3 class="title">
<a xmlns="" id="id-1.5.2"></a>1.2.1. Frob Levels</h3></div></div></div>
<div class="para">The tools accept the same levels as the frob command, from 1 to 9, and
  they refuse any level that /etc/frob.conf does not allow for the calling user.</div>
</div></div>""" + _XHTML_TAIL


def _handbook_dir(root: Path) -> Path:
    """A tiny en-US folder: index, one chapter file and one section file."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "index.html").write_text(HB_INDEX, encoding="utf-8")
    (root / "frob.html").write_text(HB_CHAPTER, encoding="utf-8")
    (root / "sect.frob-tools.html").write_text(HB_SECT, encoding="utf-8")
    return root


def test_debian_handbook_corpus_sections(tmp_path: Path) -> None:
    """One record per section; deep ones folded, short ones merged; commands kept."""
    records = debian_handbook_corpus(_handbook_dir(tmp_path), min_chars=80)
    assert [(r["id"], r["title"], r["url"]) for r in records] == [
        ("frob", "Frobbing widgets", "frob.html#frob"),
        ("frob-basics", "Basics of frob", "frob.html#sect.frob-basics"),
        ("frob-frob-levels", "Frob Levels (Basics of frob)", "frob.html#id-1.4.5.6"),
        ("frob-tools-frob-levels", "Frob Levels (Tools)", "sect.frob-tools.html#id-1.5.2"),
    ]
    chapter, basics, levels, tool_levels = records
    # "1.2. Tools" is too short: merged, title first, into its chapter (the "up" file).
    assert chapter["text"] == "\n\n".join([
        "Frobbing is what keeps every widget tree balanced, and the administrators of this "
        "company learned it the hard way over many long nights in the server room.",
        "Tools",
        "Only frob itself.",
    ])
    # The short "1.1.2. Tiny" is merged into 1.1; only typed commands of a screen are
    # kept; the example listing is kept without its caption; figures and index terms go.
    assert basics["text"] == "\n\n".join([
        "The frob command reads /etc/frob.conf and adjusts the frobs. It needs root rights:",
        "$ sudo frob --all\n# frob -n",
        "# the level\nlevel = 3",
        "TIP Dry runs",
        "Use frob -n first; the manual is online.",
        "https://frob.example/",
        "Tiny",
        "Too short to stand alone.",
    ])
    # "1.1.1.1." is folded into 1.1.1 with its title; table rows are "cell | cell".
    assert levels["text"].split("\n\n")[1:] == [
        "Level 1: gentle", "Level 9: brutal", "Level Zero", "Level 0 disables frobbing.",
        "0 | off"]
    assert tool_levels["text"].startswith("The tools accept the same levels")


def test_debian_handbook_corpus_keeps_deep_sections_when_folding_is_too_long(
    tmp_path: Path,
) -> None:
    """With a small max_chars, 1.1.1.1 stays a record of its own (if long enough)."""
    records = debian_handbook_corpus(_handbook_dir(tmp_path), min_chars=10, max_chars=100)
    assert "frob-level-zero" in [r["id"] for r in records]
    assert "Level Zero" not in next(r for r in records if r["id"] == "frob-frob-levels")["text"]


def test_debian_handbook_cli_writes_corpus_and_titles(tmp_path: Path) -> None:
    """The CLI writes {id, tenant, title, text, url} lines and a titles file."""
    html_dir = _handbook_dir(tmp_path / "html")
    out, titles = tmp_path / "o" / "corpus.jsonl", tmp_path / "o" / "titles.txt"
    assert main(["debian-handbook", "--html-dir", str(html_dir), "--out", str(out),
                 "--titles", str(titles), "--min-chars", "80"]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [list(r) for r in rows] == [["id", "tenant", "title", "text", "url"]] * 4
    assert {r["tenant"] for r in rows} == {"debian"}
    assert titles.read_text(encoding="utf-8").splitlines() == [r["title"] for r in rows]


# --------------------------------------------------------------------------------------
# PostgreSQL manual (DocBook XHTML)
# --------------------------------------------------------------------------------------

def _xhtml(title: str, up: str, nxt: str, body: str) -> str:
    """A chunked DocBook XHTML page with navigation bars around ``body``."""
    up_link = f'<a accesskey="u" href="{up}.html">Up</a>' if up else ""
    next_link = f'<a accesskey="n" href="{nxt}.html">Next</a>' if nxt else ""
    return f"""<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<html xmlns="http://www.w3.org/1999/xhtml"><head><title>{title}</title>
<link rel="next" href="{nxt}.html" /></head><body id="docContent">
<div class="navheader"><table><tr><th>{title}</th></tr><tr><td>{up_link}</td>
<td>{next_link}</td></tr></table><hr /></div>
{body}
<div class="navfooter"><hr /><table><tr><td>Prev</td><td>{up_link}</td></tr></table></div>
</body></html>
"""


PG_PAGES = {
    "index": ("PostgreSQL 15 Documentation", "", "datatype",
              '<div class="book"><p>The book index page.</p></div>'),
    "datatype": ("Chapter 8. Data Types", "index", "datatype-numeric",
                 '<div class="chapter" id="DATATYPE"><div class="titlepage"><h2 class="title">'
                 'Chapter 8. Data Types</h2></div><div class="toc"><dl><dt>8.1. Numeric Types'
                 '</dt></dl></div><p>PostgreSQL has a rich set of native data types.</p></div>'),
    "datatype-numeric": (
        "8.1. Numeric Types", "datatype", "app-psql",
        '<div class="sect1" id="DATATYPE-NUMERIC"><div class="titlepage"><div><h2 class="title">'
        '8.1. Numeric Types</h2></div></div><div class="toc"><dl><dt>8.1.1. Integer Types</dt>'
        '</dl></div><a id="id-1" class="indexterm"></a><p>\n  Numeric types consist of '
        '<code class="type">integer</code> and\n  <code class="type">numeric</code> types.</p>'
        '<div class="table"><p class="title"><strong>Table 8.2. Numeric Types</strong></p>'
        '<table><thead><tr><th>Name</th><th>Storage Size</th></tr></thead><tbody><tr>'
        '<td><code class="type">smallint</code></td><td>2 bytes</td></tr></tbody></table></div>'
        '<div class="sect2" id="DATATYPE-INT"><div class="titlepage"><h3 class="title">'
        '8.1.1. Integer Types</h3></div><p>The type <code>integer</code> is the common '
        'choice.<br />It is 4 bytes.</p><div class="note"><h3 class="title">Note</h3>'
        '<p>Out-of-range values raise an error.</p></div></div>'
        '<div class="sect2" id="id-1.2.3"><div class="titlepage"><h3 class="title">'
        '8.1.2. Data Types</h3></div><pre class="programlisting">SELECT 1::int;\n'
        'SELECT 2::bigint;</pre><ul><li><p>Use <code>bigint</code> for counters.</p></li>'
        '</ul></div></div>'),
    "app-psql": (
        "psql", "reference-client", "intro-other",
        '<div class="refentry" id="APP-PSQL"><div class="titlepage"></div>'
        '<div class="refnamediv"><h2><span class="refentrytitle">psql</span></h2>'
        '<p>psql — PostgreSQL interactive terminal</p></div><div class="refsynopsisdiv">'
        '<h2>Synopsis</h2><p>psql [option...] [dbname]</p></div><div class="refsect1" '
        'id="APP-PSQL-EXAMPLES"><h2>Examples</h2><p>Connect with <code>psql -d mydb</code>.'
        '</p><dl class="variablelist"><dt><span class="term"><code>\\x</code></span></dt>'
        '<dd><p>Expanded display.</p></dd></dl></div></div>'),
    "intro-other": ("Chapter 9. Functions", "index", "",
                    '<div class="chapter"><div class="titlepage"><h2>Chapter 9. Functions'
                    '</h2></div><p>Not chosen: another chapter.</p></div>'),
}


def _pg_dir(root: Path) -> Path:
    """A folder holding the tiny chunked manual of ``PG_PAGES``."""
    root.mkdir(parents=True, exist_ok=True)
    for stem, (title, up, nxt, body) in PG_PAGES.items():
        (root / f"{stem}.html").write_text(_xhtml(title, up, nxt, body), encoding="utf-8")
    return root


def test_strip_numbering() -> None:
    """Chapter, section and appendix numbers go; titles that only start with a word stay."""
    assert strip_numbering("8.1.1. Integer Types") == "Integer Types"
    assert strip_numbering("Chapter 8.  Data Types") == "Data Types"
    assert strip_numbering("F.12. dblink") == "dblink"
    assert strip_numbering("Part II. The SQL Language") == "The SQL Language"
    assert strip_numbering("pg_dump") == "pg_dump"
    assert strip_numbering("LIMIT and OFFSET") == "LIMIT and OFFSET"


def test_pg_doc_corpus_whole_pages(tmp_path: Path) -> None:
    """Short pages stay whole: navigation, TOC, index anchors and note labels are dropped."""
    records = pg_doc_corpus(_pg_dir(tmp_path), chapters=(8,), apps=("app-psql",),
                            min_chars=10, max_chars=6000)
    assert [r["id"] for r in records] == ["datatype", "datatype-numeric", "app-psql"]
    chapter, numeric, psql = records
    assert chapter == {
        "id": "datatype", "title": "Data Types",
        "text": "PostgreSQL has a rich set of native data types.",
        "url": "https://www.postgresql.org/docs/15/datatype.html", "page": "datatype",
    }
    assert numeric["title"] == "Numeric Types"
    assert numeric["text"] == "\n\n".join([
        "Numeric types consist of integer and numeric types.",
        "Table 8.2. Numeric Types",
        "Name | Storage Size",
        "smallint | 2 bytes",
        "Integer Types",
        "The type integer is the common choice. It is 4 bytes.",
        "Out-of-range values raise an error.",
        "Data Types",
        "SELECT 1::int; SELECT 2::bigint;",
        "Use bigint for counters.",
    ])
    assert psql["title"] == "psql"
    assert psql["text"] == "\n\n".join([
        "psql — PostgreSQL interactive terminal", "Synopsis", "psql [option...] [dbname]",
        "Examples", "Connect with psql -d mydb.", "\\x", "Expanded display."])


def test_pg_doc_corpus_splits_long_pages_into_sections(tmp_path: Path) -> None:
    """Long pages become an intro plus one record per section, with distinct titles."""
    records = pg_doc_corpus(_pg_dir(tmp_path), chapters=(8,), apps=("app-psql",),
                            min_chars=20, max_chars=120)
    by_id = {r["id"]: r for r in records}
    assert list(by_id) == ["datatype", "datatype-numeric", "datatype-int",
                           "datatype-numeric-2", "app-psql", "app-psql-examples"]
    assert by_id["datatype-numeric"]["text"] == (
        "Numeric types consist of integer and numeric types.\n\nTable 8.2. Numeric Types"
        "\n\nName | Storage Size\n\nsmallint | 2 bytes")
    assert by_id["datatype-int"]["title"] == "Integer Types"
    assert by_id["datatype-int"]["url"].endswith("datatype-numeric.html#DATATYPE-INT")
    assert by_id["datatype-int"]["text"].startswith("The type integer is the common choice.")
    # A section titled like another record's page gets its own page's title added.
    assert by_id["datatype"]["title"] == "Data Types"
    assert by_id["datatype-numeric-2"]["title"] == "Data Types (Numeric Types)"
    assert by_id["datatype-numeric-2"]["text"] == (
        "SELECT 1::int; SELECT 2::bigint;\n\nUse bigint for counters.")
    assert by_id["app-psql-examples"]["title"] == "psql: Examples"
    assert by_id["app-psql"]["text"] == (
        "psql — PostgreSQL interactive terminal\n\nSynopsis\n\npsql [option...] [dbname]")


def test_postgresql_cli_writes_corpus_and_titles(tmp_path: Path) -> None:
    """The CLI writes {id, tenant, title, text, url} lines and a titles file."""
    html_dir = _pg_dir(tmp_path / "html")
    out, titles = tmp_path / "o" / "corpus.jsonl", tmp_path / "o" / "titles.txt"
    assert main(["postgresql", "--html-dir", str(html_dir), "--out", str(out),
                 "--titles", str(titles), "--tenant", "acme"]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    # Only the numeric page has the default minimum of 200 characters; psql is shorter.
    assert [r["id"] for r in rows] == ["datatype-numeric"]
    assert [list(r) for r in rows] == [["id", "tenant", "title", "text", "url"]]
    assert {r["tenant"] for r in rows} == {"acme"}
    assert titles.read_text(encoding="utf-8").splitlines() == [r["title"] for r in rows]
