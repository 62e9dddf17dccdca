"""bench/extract_check.py on a small folder written for this test (a pottery studio):
the figures come from the configured local roles and the evaluation's fidelity judge, and a
stand-in extractor that drops a fact and keeps the superseded value is scored down."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.extract_check import check_set, main
from optimizer.accounting import Meter
from optimizer.types import Extraction, FeedbackContext
from query.embeddings import MiniLMEmbedder

CASES: list[dict[str, Any]] = [
    {"id": "a1", "query": "kiln firing days",
     "answer": "The kiln is fired every Friday; pieces go on the green shelf by 20:00 "
     "on Thursday.",
     "feedback": {"rating": "down", "comment": "Glaze firings run on Tuesdays now and "
                  "bisque firings on Saturdays. Pieces go on the green shelf by 18:00 "
                  "the day before."},
     "actionable": True, "facts": ["Glaze firings run on Tuesdays.",
                                   "Bisque firings run on Saturdays.",
                                   "Pieces go on the green shelf by 18:00 the day before."]},
    {"id": "a2", "query": "how much clay can members buy",
     "answer": "Members can buy as much clay as they want.",
     "feedback": {"rating": "", "comment": "Members may buy at most 3 bags of stoneware "
                  "a month; porcelain is sold to instructors only."},
     "actionable": True, "facts": ["Members may buy at most 3 bags of stoneware a month.",
                                   "Porcelain is sold to instructors only."]},
    {"id": "n1", "query": "is the wheel room open on sunday",
     "answer": "The wheel room is open on Sundays from 10 to 16.",
     "feedback": {"rating": "up", "comment": "lovely, thank you so much"},
     "actionable": False, "facts": []},
]


def _folder(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "cases.jsonl").write_text("".join(json.dumps({
        "tenant": "studio", "heldout": [], "negatives": [], "cited": [], "competitor": "",
        **c}) + "\n" for c in CASES))
    return root


def test_the_local_roles_are_scored_with_the_fidelity_judge(tmp_path: Path,
                                                             capsys: Any) -> None:
    """The CLI prints one line per set and writes the figures, the command included."""
    folder = _folder(tmp_path / "pottery")
    out = tmp_path / "fig.json"
    assert main([str(folder), "--json", str(out), "--show", "all"]) == 0
    data = json.loads(out.read_text())
    fig = data["sets"]["pottery"]
    assert data["command"].startswith("python -m bench.extract_check")
    assert fig["cases"] == 3
    cm = fig["actionability_confusion"]
    assert cm == {"tp": 2, "fp": 0, "fn": 0, "tn": 1}
    assert 0.0 <= fig["fact_recall"] <= fig["fact_recall_extracted"] <= 1.0
    printed = capsys.readouterr().out
    assert "pottery" in printed and "--- a1" in printed and "--- n1" in printed


class _Sloppy:
    """Keeps the answer's superseded hour and drops every fact but the first."""

    def extract(self, ctx: FeedbackContext, meter: Meter) -> Extraction:
        if "Tuesdays" not in ctx.comment:
            return Extraction("none", False, "nothing to keep")
        return Extraction("correction", True, "stand-in", title="Kiln shelf: 20:00",
                          body="Pieces go on the green shelf by 20:00 on Thursday. Glaze "
                          "firings run on Tuesdays now.")


def test_a_nugget_that_loses_facts_and_keeps_the_old_value_is_scored_down(
        tmp_path: Path) -> None:
    """One of five facts stated, a missed case, and the stale 20:00 are all counted."""
    folder = _folder(tmp_path / "pottery")
    res = check_set(folder, _Sloppy().extract, MiniLMEmbedder())
    fig = res.figures()
    assert fig["actionability_errors"] == ["a2"]
    assert fig["fact_recall"] == pytest.approx(1 / 5, abs=1e-4)
    assert fig["fact_recall_extracted"] == pytest.approx(1 / 3, abs=1e-4)
    assert fig["stale_claim_rate"] == 1.0
    flagged = [r.case.id for r in res.cases if r.flagged]
    assert flagged == ["a1"]
