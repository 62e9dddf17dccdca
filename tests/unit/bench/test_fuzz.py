"""The fuzz drivers of bench/fuzz.py with a few cases each: they run every case and find
no failure (the bench runs them at scale and records the counts in hardening.json)."""

from __future__ import annotations

from bench.fuzz import fuzz_corpus, fuzz_feedback, fuzz_grpc


def test_feedback_fuzz_finds_no_failure() -> None:
    report = fuzz_feedback(40, seed=1)
    assert report.cases == 40 and report.failures == []
    assert report.outcomes.get("dead_letter", 0) > 0  # the strategies reach every path


def test_grpc_fuzz_finds_no_failure() -> None:
    report = fuzz_grpc(40, seed=1)
    assert report.cases == 40 and report.failures == []


def test_corpus_fuzz_finds_no_failure() -> None:
    report = fuzz_corpus(25, seed=1)
    assert report.cases == 25 and report.failures == []
    assert report.outcomes.get("accepted", 0) > 0 and report.outcomes.get("refused", 0) > 0
