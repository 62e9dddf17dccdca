"""The learned message check: when it may overrule the rules, what the shipped weights
decide on messages written for these tests, and that the weights match the sets they
were trained on (``python -m bench.train_actionability`` regenerates them)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from optimizer.accounting import Meter
from optimizer.local.actionability import LocalActionability
from optimizer.local.message_check import WEIGHTS, MessageCheck, may_veto, shipped_check
from optimizer.types import FeedbackContext
from query.embeddings import MiniLMEmbedder

ROOT = Path(__file__).resolve().parents[3]


def ctx(comment: str, rating: str = "", query: str = "how long do VPN sessions last",
        answer: str = "VPN sessions last 8 hours.") -> FeedbackContext:
    return FeedbackContext("e1", "t", query, answer, comment, rating)


def always_no(dim: int) -> MessageCheck:
    """Weights whose probability is about 0 for every message."""
    weights = np.zeros(dim + 6)
    weights[-1] = -20.0
    return MessageCheck(weights, "MiniLMEmbedder", dim, threshold=0.05)


@pytest.mark.parametrize(("kinds", "allowed"), [
    (["claim"], False),  # a plain statement is never overruled
    (["claim", "support"], False),
    (["opinion", "claim"], True),
    (["question", "claim", "praise"], True),
    (["chatter", "claim", "claim", "chatter"], False),  # long: the story speaks, not the claim
])
def test_the_check_may_only_overrule_short_mixed_messages(kinds: list[str],
                                                          allowed: bool) -> None:
    assert may_veto(kinds) is allowed


def test_a_veto_turns_an_accepted_short_mixed_message_down_and_says_why(
        embedder: MiniLMEmbedder) -> None:
    message = ctx("Wrong. VPN sessions end after 4 hours since the March change.", "down")
    rules = LocalActionability(embedder, message_check=False).extract(message, Meter())
    assert rules.can_produce_nugget
    vetoed = LocalActionability(embedder, check=always_no(embedder.dim)).extract(message,
                                                                                 Meter())
    assert not vetoed.can_produce_nugget
    assert vetoed.usefulness == "other" and "learned check 0.00 < 0.05" in vetoed.reason
    assert vetoed.body == "" and vetoed.title == ""


def test_a_plain_or_long_message_keeps_the_rules_verdict_whatever_the_check_says(
        embedder: MiniLMEmbedder) -> None:
    role = LocalActionability(embedder, check=always_no(embedder.dim))
    plain = ctx("VPN sessions end after 4 hours since the March change.")
    assert role.extract(plain, Meter()).can_produce_nugget
    long = ctx("Long story. On Monday the night team lost their sessions mid-shift and "
               "we spent an hour on it. VPN sessions end after 4 hours since the March "
               "change. We found out from the firewall log. Not fun.", "down")
    assert [s.kind for s in role.read(long)].count("claim") >= 1
    assert role.extract(long, Meter()).can_produce_nugget


def test_without_an_embedder_or_switched_off_there_is_no_check(
        embedder: MiniLMEmbedder) -> None:
    message = ctx("Wrong. VPN sessions end after 4 hours since the March change.", "down")
    assert LocalActionability(None, check=always_no(384)).extract(message, Meter()) \
        .can_produce_nugget
    assert LocalActionability(embedder, message_check=False,
                              check=always_no(embedder.dim)).extract(message, Meter()) \
        .can_produce_nugget


def test_weights_for_another_embedder_are_not_used(embedder: MiniLMEmbedder) -> None:
    other = MessageCheck(np.zeros(embedder.dim + 6), "OpenAIEmbedder", embedder.dim)
    assert not other.fits(embedder)
    message = ctx("Wrong. VPN sessions end after 4 hours since the March change.", "down")
    assert LocalActionability(embedder, check=other).extract(message, Meter()) \
        .can_produce_nugget


def test_the_shipped_check_turns_down_a_complaint_the_rules_read_as_a_claim(
        embedder: MiniLMEmbedder) -> None:
    complaint = ctx("The minibus booking page is so clunky on a phone, takes 5 taps to get "
                    "anywhere. Can it be simpler?", "down",
                    query="how do I book the minibus",
                    answer="Use the Fleet page on the intranet.")
    assert LocalActionability(embedder, message_check=False).extract(complaint, Meter()) \
        .can_produce_nugget
    verdict = LocalActionability(embedder).extract(complaint, Meter())
    assert not verdict.can_produce_nugget and "learned check" in verdict.reason


@pytest.mark.parametrize("comment", [
    "Wrong. Since the March change VPN sessions end after 4 hours and you have to sign "
    "in again.",
    "VPN sessions end after 4 hours since the March change. Is that written down "
    "anywhere official?",
])
def test_the_shipped_check_keeps_corrections_with_a_remark_beside_them(
        comment: str, embedder: MiniLMEmbedder) -> None:
    verdict = LocalActionability(embedder).extract(ctx(comment, "down"), Meter())
    assert verdict.can_produce_nugget, verdict.reason
    assert "4 hours" in verdict.body


def test_the_shipped_weights_load_and_match_the_sets_they_were_trained_on(
        embedder: MiniLMEmbedder) -> None:
    check = shipped_check()
    assert check is not None and check.fits(embedder)
    data = json.loads(WEIGHTS.read_text(encoding="utf-8"))
    assert len(data["trained_on"]) >= 20
    for name, digest in data["trained_on"].items():
        found = [p for p in (ROOT / "bench" / "data" / name / "cases.jsonl",
                             ROOT / "bench" / "blind" / name / "cases.jsonl") if p.exists()]
        assert found, f"{name}: trained on a set that is gone (rerun bench.train_actionability)"
        assert hashlib.sha256(found[0].read_bytes()).hexdigest()[:16] == digest, (
            f"{name} changed since the weights were trained: python -m "
            "bench.train_actionability")


def test_a_missing_or_malformed_weights_file_means_no_check(tmp_path: Path) -> None:
    assert shipped_check(tmp_path / "missing.json") is None
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"embedder": "MiniLMEmbedder", "dim": 384, "threshold": 0.1,
                               "weights": [0.0] * 10}), encoding="utf-8")
    assert shipped_check(bad) is None
