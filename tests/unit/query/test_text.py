"""Query terms split words like FTS5's unicode61 tokenizer, in every script."""

from __future__ import annotations

import importlib.util
import sqlite3
import sys
from pathlib import Path

import pytest

from query.text import has_markup, jaccard, plain_text, query_terms, words
from query.unicode61 import TOKEN_RANGES

ROOT = Path(__file__).resolve().parents[3]


def _fts5_tokens(text: str) -> list[str]:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5 (a, tokenize='unicode61')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    db.execute("INSERT INTO t (rowid, a) VALUES (1, ?)", (text,))
    return [r[0] for r in db.execute("SELECT term FROM v ORDER BY offset")]


@pytest.mark.parametrize(("query", "terms"), [
    ("كيف أغير كلمة المرور", ["كيف", "أغير", "كلمة", "المرور"]),
    ("Как сбросить пароль?", ["как", "сбросить", "пароль"]),
    ("パスワードを変更する 東京", ["パスワードを変更する", "東京"]),
    ("Où est le café déjà-vu", ["où", "est", "le", "café", "déjà", "vu"]),
    ("who can reset another user's password in v8.2", ["reset", "another", "user's",
                                                        "password", "v8.2"]),
])
def test_query_terms_of_every_script(query: str, terms: list[str]) -> None:
    assert query_terms(query) == terms


@pytest.mark.parametrize("text", [
    "مَرْحَبًا بالعالم، كيف حالك؟", "हिन्दी भाषा में लिखा", "Привет, мир! Ёлка-палка",
    "東京都に住む 北京", "Ελληνικά γράμματα", "naïve café — ½ ①② x_y", "love🥰you 😀 ok"])
def test_words_split_where_fts5_splits(text: str) -> None:
    """Without the "." / "'" joins, the words are FTS5's tokens (before its folding)."""
    got = [w for word in words(text) for w in _fts5_tokens(word)]
    assert got == _fts5_tokens(text)
    assert len(words(text)) == len(_fts5_tokens(text))


def test_the_token_table_is_what_this_sqlite_uses() -> None:
    """query/unicode61.py equals what scripts/gen_unicode61.py derives from FTS5 now."""
    spec = importlib.util.spec_from_file_location("gen_unicode61",
                                                  ROOT / "scripts" / "gen_unicode61.py")
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    sys.modules["gen_unicode61"] = gen
    spec.loader.exec_module(gen)
    assert tuple(gen.token_ranges()) == TOKEN_RANGES


def test_jaccard_tells_non_latin_texts_apart() -> None:
    assert jaccard("إعادة تعيين كلمة المرور", "تغيير خلفية سطح المكتب") < 0.3
    assert jaccard("Сброс пароля", "Сброс пароля") == 1.0


def test_plain_text_can_keep_a_messages_lines() -> None:
    msg = "Hi all,\n\n- <b>Broken</b> chargers:  B-104\n- Spare ones: 65 W\r\nCheers"
    assert plain_text(msg) == "Hi all, - Broken chargers: B-104 - Spare ones: 65 W Cheers"
    assert plain_text(msg, keep_lines=True) == (
        "Hi all,\n- Broken chargers: B-104\n- Spare ones: 65 W\nCheers")


def test_plain_text_takes_out_issue_tracker_markup_and_keeps_what_it_encloses() -> None:
    msg = ("h2. Printer queue\n[~mbauer] the default tray is *tray 2* on {{prn-lab-3}}"
           " ([setup notes|https://wiki.example.org/prn]).\n{noformat}\nlpstat -p prn-lab-3\n"
           "{noformat}\n{quote}Tray 1 is the default.{quote}\nbq. use tray 1")
    assert plain_text(msg, keep_lines=True) == (
        "Printer queue\n@mbauer the default tray is tray 2 on `prn-lab-3`"
        " (setup notes (https://wiki.example.org/prn)).\nlpstat -p prn-lab-3\n"
        "> Tray 1 is the default.\n> use tray 1")


def test_plain_text_leaves_globs_products_and_code_spans_alone() -> None:
    msg = "### Cleanup\nDelete *.tmp and *.bak, keep `find . -name '*.log*'`; 3*4*5 is 60"
    assert plain_text(msg, keep_lines=True) == (
        "Cleanup\nDelete *.tmp and *.bak, keep `find . -name '*.log*'`; 3*4*5 is 60")


def test_a_tag_shaped_placeholder_in_a_code_span_stays_and_one_outside_goes() -> None:
    msg = "Run `archive-job <code> --dry-run` first. <b>Then</b> run it for real."
    assert plain_text(msg) == "Run `archive-job <code> --dry-run` first. Then run it for real."
    # A script is dropped wherever it sits, code span or not.
    assert "alert" not in plain_text("Use `<script>alert(1)</script>` here")


def test_a_placeholder_joined_to_a_name_stays_and_markup_glued_to_words_goes() -> None:
    # "<time>" and "<table>" are HTML elements; joined to a name by "_" they are placeholders
    assert plain_text("name = ix_<table>_<columns>") == "name = ix_<table>_<columns>"
    assert plain_text("cue_<time>_<deck>.lx") == "cue_<time>_<deck>.lx"
    assert plain_text("one<br>two") == "one two"
    assert plain_text("x<b>bold</b> y") == "x bold y"
    assert has_markup("a<img src=x onerror=alert(1)>")


def test_a_tag_name_glued_to_a_hyphen_is_a_placeholder_not_markup() -> None:
    text = "Bays print to <SITE>-BAY-2 and the dock to dock-<ID>; <b>mind</b> the gap."
    assert plain_text(text) == "Bays print to <SITE>-BAY-2 and the dock to dock-<ID>; mind the gap."
    assert not has_markup("trucks report to <CODE>-GATE-1")
    assert has_markup("<b>mind</b> the gap")


def test_stars_of_a_glob_are_wildcards_not_bold() -> None:
    assert plain_text("Not tracked on till-*-front-* machines; *only* the back office.") == \
        "Not tracked on till-*-front-* machines; only the back office."
    assert plain_text("Logs go to /var/log/*/app and *.gz files are pruned.") == \
        "Logs go to /var/log/*/app and *.gz files are pruned."


def test_underscores_around_a_placeholder_are_parts_of_a_name_not_emphasis() -> None:
    text = ("Jobs run as the ops_<site>_runner user, logs go to a named log_ folder; "
            "archives become <team>_old_<date>. This is _not_ optional (_ever_).")
    assert plain_text(text) == (
        "Jobs run as the ops_<site>_runner user, logs go to a named log_ folder; "
        "archives become <team>_old_<date>. This is not optional (ever).")
