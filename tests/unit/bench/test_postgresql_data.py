"""Structure checks of the held-out PostgreSQL benchmark in bench/data/postgresql.

These tests look only at the shape of the data (fields, counts, ids, references); they
do not depend on what the cases say, so that nobody tunes anything on them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from optimizer.evaluation import read_cases

FOLDER = Path(__file__).resolve().parents[3] / "bench" / "data" / "postgresql"
CASE_KEYS = ["id", "tenant", "query", "answer", "feedback", "actionable", "heldout", "facts",
             "negatives", "cited", "competitor"]


def _jsonl(name: str) -> list[dict[str, Any]]:
    """The rows of ``FOLDER / name``."""
    with (FOLDER / name).open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def _norm(text: str) -> str:
    """Lower case, punctuation runs folded to one space."""
    return re.sub(r"\W+", " ", text.lower()).strip()


@pytest.fixture(scope="module")
def corpus() -> list[dict[str, Any]]:
    """The corpus records."""
    return _jsonl("corpus.jsonl")


@pytest.fixture(scope="module")
def cases() -> list[dict[str, Any]]:
    """The feedback cases."""
    return _jsonl("cases.jsonl")


def test_corpus_records(corpus: list[dict[str, Any]]) -> None:
    """250-400 records with the five fields, unique ids and titles, 200-6000 chars of text."""
    assert 250 <= len(corpus) <= 400
    assert all(list(r) == ["id", "tenant", "title", "text", "url"] for r in corpus)
    assert {r["tenant"] for r in corpus} == {"pg"}
    assert len({r["id"] for r in corpus}) == len(corpus)
    assert len({r["title"].lower() for r in corpus}) == len(corpus)
    assert all(200 <= len(r["text"]) <= 6000 for r in corpus)
    assert all(not re.match(r"^\d+(\.\d+)*\.\s", r["title"]) for r in corpus)
    titles = (FOLDER / "titles.txt").read_text(encoding="utf-8").splitlines()
    assert titles == [r["title"] for r in corpus]


def test_cases_shape_and_counts(cases: list[dict[str, Any]]) -> None:
    """The GNOME case format, unique ids, and at least 45 + 25 cases."""
    assert all(list(c) == CASE_KEYS for c in cases)
    assert len({c["id"] for c in cases}) == len(cases)
    assert {c["tenant"] for c in cases} == {"pg"}
    assert all(set(c["feedback"]) == {"rating", "comment"} for c in cases)
    assert all(c["feedback"]["rating"] in ("up", "down", "") for c in cases)
    assert all(c["feedback"]["comment"].strip() for c in cases)
    actionable = [c for c in cases if c["actionable"] is True]
    other = [c for c in cases if c["actionable"] is False]
    assert len(actionable) + len(other) == len(cases)
    assert len(actionable) >= 45 and len(other) >= 25
    assert all(c["id"].startswith("c") for c in actionable)
    assert all(c["id"].startswith("n") for c in other)


def test_corrections_have_probes(cases: list[dict[str, Any]]) -> None:
    """Each correction: facts, 5 distinct held-out queries unlike its query, 2 negatives."""
    for c in (c for c in cases if c["actionable"]):
        heldout = {_norm(q) for q in c["heldout"]}
        negatives = {_norm(q) for q in c["negatives"]}
        assert c["facts"] and all(f.strip() for f in c["facts"]), c["id"]
        assert len(c["heldout"]) == 5 and len(heldout) == 5, c["id"]
        assert _norm(c["query"]) not in heldout | negatives, c["id"]
        assert len(c["negatives"]) == 2 and len(negatives) == 2, c["id"]
        assert not heldout & negatives, c["id"]


def test_non_actionable_items_are_bare(cases: list[dict[str, Any]]) -> None:
    """Non-actionable items carry no held-out queries, facts, negatives or competitor."""
    for c in (c for c in cases if not c["actionable"]):
        assert c["heldout"] == [] and c["facts"] == [] and c["negatives"] == [], c["id"]
        assert c["competitor"] == "", c["id"]


def test_cited_and_competitor_ids_exist(
    cases: list[dict[str, Any]], corpus: list[dict[str, Any]],
) -> None:
    """Every cited and competitor id names a corpus record."""
    ids = {r["id"] for r in corpus}
    for c in cases:
        assert set(c["cited"]) <= ids, c["id"]
        assert c["competitor"] == "" or c["competitor"] in ids, c["id"]


def test_read_cases_parses_the_file(cases: list[dict[str, Any]]) -> None:
    """The evaluation's reader accepts the file, for the whole file and for tenant pg."""
    assert len(read_cases(FOLDER / "cases.jsonl")) == len(cases)
    assert len(read_cases(FOLDER / "cases.jsonl", tenant="pg")) == len(cases)
