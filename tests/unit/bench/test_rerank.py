"""bench/rerank.py: which configuration is chosen, and reading an earlier eval.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.rerank import _variant, baseline, choose


def entry(gate: str, e: float, off: float, cpu: float) -> dict[str, Any]:
    return {"gate": gate, "embedder": "minilm://", "heldout_retrieval_e": e,
            "negative_offtopic_retrieval": off, "cpu_ms_per_query": cpu}


def test_the_best_trade_off_within_the_median_cpu_cost_is_chosen() -> None:
    entries = [entry("cosine", 0.84, 0.10, 5.0), entry("features", 0.84, 0.04, 6.0),
               entry("endpoint", 0.95, 0.00, 90.0)]
    choose(entries)
    assert [e["chosen"] for e in entries] == [False, True, False]  # endpoint too costly


def test_figures_are_read_from_an_evaluation_or_an_eval_json(tmp_path: Path) -> None:
    variants = {"A": {"heldout_retrieval": {"mean": 0.7}, "heldout_citation": {"mean": 0.6}},
                "E": {"heldout_retrieval": {"mean": 0.8}, "heldout_citation": {"mean": 0.7}}}
    assert _variant({"variants": variants}, "E", "heldout_citation") == 0.7
    assert _variant({"A": {"heldout_retrieval": 0.65}}, "A", "heldout_retrieval") == 0.65
    path = tmp_path / "eval.json"
    path.write_text(json.dumps({"command": "nuggetflow eval", "benchmarks": {
        "gnome-help": {"variants": variants, "negative_offtopic_retrieval": 0.1}}}))
    before = baseline(path)
    assert before is not None and before["command"] == "nuggetflow eval"
    assert before["benchmarks"]["gnome-help"] == {
        "heldout_retrieval_a": 0.7, "heldout_retrieval_e": 0.8, "heldout_citation_e": 0.7,
        "negative_offtopic_retrieval": 0.1}
    assert baseline(tmp_path / "missing.json") is None
