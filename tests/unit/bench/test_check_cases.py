"""Unit tests for bench/check_cases.py on a tiny hand-written data folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.check_cases import check_folder, main


def _case(cid: str, actionable: bool, **over: Any) -> dict[str, Any]:
    case: dict[str, Any] = {
        "id": cid, "tenant": "t", "query": "how do I frob", "answer": "Use frob -x.",
        "feedback": {"rating": "down", "comment": "Use frob -y here."},
        "actionable": actionable,
        "heldout": ["frob flags", "which frob option"] if actionable else [],
        "facts": ["Use frob -y."] if actionable else [],
        "negatives": ["unfrob a widget"] if actionable else [],
        "cited": ["frob"], "competitor": "frob" if actionable else "",
    }
    case.update(over)
    return case


def _folder(root: Path, cases: list[dict[str, Any]]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    corpus = [{"id": "frob", "tenant": "t", "title": "Frob", "text": "x", "url": "u"},
              {"id": "unfrob", "tenant": "t", "title": "Unfrob", "text": "y", "url": "v"}]
    (root / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in corpus))
    (root / "titles.txt").write_text("Frob\nUnfrob\n")
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    return root


def test_check_folder_accepts_a_valid_folder(tmp_path: Path) -> None:
    """A well-formed folder has no problems and the counts add up."""
    folder = _folder(tmp_path, [_case("c1", True), _case("n1", False)])
    counts, problems = check_folder(folder, heldout=2, negatives=1)
    assert problems == []
    assert counts["actionable"] == 1 and counts["non_actionable"] == 1 and counts["corpus"] == 2


def test_check_folder_reports_each_problem(tmp_path: Path) -> None:
    """Duplicate ids, unknown refs, bad heldout and non-actionable leftovers are reported."""
    folder = _folder(tmp_path, [
        _case("c1", True, heldout=["how do I frob", "how do I frob"], competitor="nope"),
        _case("c1", True, feedback={"rating": "meh", "comment": "x"}),
        _case("n1", False, facts=["A fact."]),
    ])
    _, problems = check_folder(folder, heldout=3)
    assert "case id 'c1' occurs 2 times" in problems
    assert "c1: heldout queries are not distinct" in problems
    assert "c1: a heldout query equals the query" in problems
    assert "c1: 'nope' is not a corpus id" in problems
    assert "c1: 2 heldout queries, expected 3" in problems
    assert "c1: rating 'meh' is not up/down/empty" in problems
    assert "n1: not actionable but has facts" in problems


def test_check_cases_cli_exit_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Exit 0 and "OK" for a good folder, 1 when titles.txt is out of step."""
    folder = _folder(tmp_path, [_case("c1", True)])
    assert main([str(folder)]) == 0
    assert capsys.readouterr().out.rstrip().endswith("OK")
    (folder / "titles.txt").write_text("Frob\nFrob\n")
    assert main([str(folder)]) == 1
    out = capsys.readouterr().out
    assert "titles.txt is not the corpus titles in order" in out
