"""The four steps on a real index with the local backend: outputs, dead letters,
idempotent re-delivery, review policy, reviews, and retries with backoff."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Sequence

import pytest

from nuggetflow.errors import BackendUnavailableError, BudgetExceededError, NuggetflowError
from nuggetflow.settings import Settings
from optimizer.accounting import Meter
from optimizer.local import local_roles
from optimizer.pipeline import Outcome
from optimizer.reprobe import Reprobe
from optimizer.types import Extraction, FeedbackContext
from query.convert import nugget_from_bytes, nugget_to_bytes
from query.corpus import ChangedDocument, CorpusChange
from query.index import NuggetIndex
from query.model import Publication
from stream.engine import ExtractResult, InlineEngine
from stream.events import parse_event, to_context
from stream.metrics import WorkerMetrics as Metrics
from stream.records import Correction, DeadLetter, Emit, Record, ReviewEvent, StepResult
from stream.steps import Steps
from stream.synthetic import T0, correction, event, malformed
from stream.topics import TopicKind
from tests.unit.stream.conftest import make_steps


def value(m: Metrics, name: str, **labels: str) -> float:
    return m.registry.get_sample_value(name, labels) or 0.0


def fb(event_id: str, tenant: str = "globex", i: int = 0) -> bytes:
    """An actionable feedback event (the i-th distinct correction)."""
    q, a, c = correction(i)
    return json.dumps(event(event_id, tenant, q, a, c, minutes=i)).encode()


def vague(event_id: str, tenant: str = "globex") -> bytes:
    return json.dumps(event(event_id, tenant, "how do I reset my password?", "Use the link.",
                            "not helpful")).encode()


def rec(value: bytes, kind: TopicKind = TopicKind.EVENTS, offset: int = 0,
        key: bytes | None = None) -> Record:
    return Record(value, key, kind.value, 0, offset)


def only(emits: Sequence[Emit], kind: TopicKind) -> Emit:
    found = [e for e in emits if e.kind is kind]
    assert len(found) == 1, emits
    return found[0]


async def correction_record(steps: Steps, raw: bytes, offset: int = 0) -> Record:
    [result] = await steps.ingest([rec(raw)])
    assert result.outcome == "correction", result
    return rec(only(result.emits, TopicKind.CORRECTIONS).value, TopicKind.CORRECTIONS, offset)


# --- ingest ---------------------------------------------------------------------------


async def test_ingest_sorts_events_and_keeps_order(steps: Steps, metrics: Metrics) -> None:
    bad = [malformed(i) for i in range(7)]
    records = [rec(fb("e1")), rec(vague("e2")), *(rec(b, offset=10 + i) for i, b in
                                                 enumerate(bad))]
    results = await steps.ingest(records)
    assert [r.outcome for r in results] == ["correction", "not_actionable"] + ["dead_letter"] * 7
    corr = only(results[0].emits, TopicKind.CORRECTIONS)
    assert corr.key == b"globex"
    parsed = Correction.from_bytes(corr.value)
    assert parsed.event.event_id == "e1" and parsed.extraction.can_produce_nugget
    assert results[1].emits == () and results[1].detail == "vague_negative"
    letters = [DeadLetter.from_headers(e.value, e.headers) for r in results[2:] for e in r.emits]
    assert [d.value for d in letters] == bad  # the original bytes, unchanged
    assert {d.reason for d in letters} == {"decode", "invalid_field"}
    assert all(d.error and d.stage == "actionability" for d in letters)
    assert letters[1].field == "query" and letters[1].source == "feedback.events:0:11"
    assert value(metrics, "nuggetflow_stream_events_total", agent="actionability",
                 outcome="dead_letter") == 7
    assert value(metrics, "nuggetflow_stream_dead_letters_total", topic="feedback.events",
                 reason="decode") == 4


def fields_of(caplog: pytest.LogCaptureFixture, message: str) -> list[dict[str, object]]:
    return [dict(getattr(r, "fields", {}) or {}) for r in caplog.records
            if r.getMessage() == message]


async def test_every_decision_is_logged_with_its_reason(
        steps: Steps, caplog: pytest.LogCaptureFixture) -> None:
    """A not-actionable event says its label and reason; a dead letter says the tenant
    and event id the record carried, even when one of its fields is invalid."""
    bad = json.loads(vague("e-bad", tenant="initech"))
    bad["query"] = ""  # invalid field, ids still readable
    caplog.set_level("INFO")
    results = await steps.ingest([rec(vague("e-vague", tenant="initech")),
                                  rec(json.dumps(bad).encode(), offset=1)])
    assert [r.outcome for r in results] == ["not_actionable", "dead_letter"]
    [na] = fields_of(caplog, "not actionable")
    assert na["tenant"] == "initech" and na["event"] == "e-vague"
    assert na["label"] == "vague_negative" and na["reason"]
    [dl] = fields_of(caplog, "record dead-lettered")
    assert dl["tenant"] == "initech" and dl["event"] == "e-bad" and dl["reason"]


async def test_llm_calls_tokens_per_role_include_actionability(
        steps: Steps, metrics: Metrics) -> None:
    """Every role's calls and tokens reach the metrics: the actionability call of each
    event and the INO roles of each nugget (the local backend's tokens are estimates)."""
    record = await correction_record(steps, fb("e-usage"))
    assert value(metrics, "nuggetflow_llm_calls_total", role="actionability",
                 outcome="ok") == 1
    assert value(metrics, "nuggetflow_llm_tokens_total", role="actionability",
                 direction="prompt") > 0
    result = await steps.optimize(record)
    assert result.outcome == "candidate", result
    for role in ("generator", "anchors"):
        assert value(metrics, "nuggetflow_llm_calls_total", role=role, outcome="ok") >= 1
        assert value(metrics, "nuggetflow_llm_tokens_total", role=role,
                     direction="prompt") > 0


async def test_ingest_accepts_protobuf_binary(steps: Steps) -> None:
    binary = parse_event(fb("e-bin")).SerializeToString()
    [result] = await steps.ingest([rec(binary)])
    assert result.outcome == "correction" and result.event_id == "e-bin"


class FlakyEngine:
    """An LLM outage: each planned extraction call handles that many events, then fails
    with a retriable error; INO fails ``failures`` times."""

    def __init__(self, inner: InlineEngine, plan: list[int], failures: int = 0) -> None:
        self.inner = inner
        self.plan = plan
        self.failures = failures
        self.calls: list[int] = []

    async def start(self) -> None:
        await self.inner.start()

    async def stop(self) -> None:
        await self.inner.stop()

    async def extract(self, contexts: Sequence[FeedbackContext]) -> list[ExtractResult]:
        self.calls.append(len(contexts))
        if not self.plan:
            return await self.inner.extract(contexts)
        ok = self.plan.pop(0)
        out = await self.inner.extract(contexts[:ok])
        return [*out, BackendUnavailableError("LLM endpoint failed 5 times: 503")]

    async def optimize(self, ctx: FeedbackContext, extraction: Extraction) -> Outcome:
        if self.failures:
            self.failures -= 1
            raise BackendUnavailableError("LLM endpoint failed 5 times: 503")
        return await self.inner.optimize(ctx, extraction)

    async def reprobe(self, change: CorpusChange) -> list[Reprobe]:
        if self.failures:
            self.failures -= 1
            raise BackendUnavailableError("LLM endpoint failed 5 times: 503")
        return await self.inner.reprobe(change)


async def test_outage_makes_events_wait_with_backoff_none_dropped(
        index: NuggetIndex, stream_settings: Settings, metrics: Metrics,
        sleeps: list[float]) -> None:
    engine = FlakyEngine(InlineEngine(index.store, index.embedder, local_roles(),
                                      stream_settings), plan=[1, 0, 0, 1])
    steps = make_steps(index, engine, stream_settings, metrics, sleeps)
    records = [rec(fb(f"e{i}", i=i)) for i in range(3)]
    results = await steps.ingest(records)
    assert [r.outcome for r in results] == ["correction"] * 3
    assert [r.event_id for r in results] == ["e0", "e1", "e2"]
    # Each retry resumed where the last attempt had stopped.
    assert engine.calls == [3, 2, 2, 2, 1]
    assert sleeps == [0.01, 0.02, 0.04, 0.05]  # doubling from 0.01, capped at 0.05
    assert value(metrics, "nuggetflow_stream_retries_total", agent="actionability") == 4
    engine.failures = 2
    out = await steps.optimize(rec(only(results[0].emits, TopicKind.CORRECTIONS).value,
                                   TopicKind.CORRECTIONS))
    assert out.outcome == "candidate"
    assert value(metrics, "nuggetflow_stream_retries_total", agent="optimize") == 2
    assert value(metrics, "nuggetflow_stream_dead_letters_total", topic="feedback.events",
                 reason="decode") == 0
    # a corpus change waits out the outage too, then is re-probed (none dropped)
    engine.failures = 3
    change = CorpusChange("acme", (ChangedDocument("kb-x", 1, "new", ("kb-x#0",)),), T0)
    out = await steps.reprobe(rec(change.to_bytes(), TopicKind.CORPUS_CHANGES))
    assert out.outcome == "reprobed" and engine.failures == 0
    assert value(metrics, "nuggetflow_stream_retries_total", agent="reprobe") == 3


async def test_backoff_doubles_jitters_and_caps(steps: Steps) -> None:
    s = dataclasses.replace(steps.settings, stream_retry_initial_seconds=1.0,
                            stream_retry_max_seconds=60.0)
    low = Steps(steps.index, steps.engine, s, jitter=lambda: 0.0)
    high = Steps(steps.index, steps.engine, s, jitter=lambda: 1.0)
    assert [high.backoff(a) for a in (1, 2, 3, 7, 8)] == [1, 2, 4, 60, 60]
    assert [low.backoff(a) for a in (1, 2, 3)] == [0.5, 1, 2]


# --- optimize -------------------------------------------------------------------------


async def test_optimize_submits_one_candidate_and_redelivery_adds_none(
        steps: Steps, index: NuggetIndex, metrics: Metrics) -> None:
    corr = await correction_record(steps, fb("e1"))
    first = await steps.optimize(corr)
    assert first.outcome == "candidate" and first.nugget_id
    cand = nugget_from_bytes(only(first.emits, TopicKind.CANDIDATES).value)
    assert cand.id == first.nugget_id and cand.publication is Publication.PENDING_REVIEW
    assert cand.provenance.event_id == "e1" and cand.optimization
    # Re-delivered correction (crash before commit) and a duplicate event: no INO, no nugget.
    again = await steps.optimize(corr)
    dup = await steps.optimize(await correction_record(steps, fb("e1")))
    for r in (again, dup):
        assert r.outcome == "duplicate" and r.nugget_id == first.nugget_id
        assert nugget_from_bytes(only(r.emits, TopicKind.CANDIDATES).value).id == cand.id
    assert [n.id for n in await index.store.find_by_event("globex", "e1")] == [cand.id]
    assert value(metrics, "nuggetflow_ino_nuggets_total", tenant="globex", variant="E",
                 outcome="passed") + value(metrics, "nuggetflow_ino_nuggets_total",
                                           tenant="globex", variant="E",
                                           outcome="failed") == 1


class FailingEngine(InlineEngine):
    """INO raises the given error."""

    error: NuggetflowError

    async def optimize(self, ctx: FeedbackContext, extraction: Extraction) -> Outcome:
        raise self.error


@pytest.mark.parametrize("error, reason", [
    (BudgetExceededError("call budget of 40 used up", field="budget_calls"), "budget"),
    (NuggetflowError("odd"), "error"),
])
async def test_non_retriable_optimize_failures_are_dead_lettered(
        index: NuggetIndex, stream_settings: Settings, metrics: Metrics, sleeps: list[float],
        steps: Steps, error: NuggetflowError, reason: str) -> None:
    engine = FailingEngine(index.store, index.embedder, local_roles(), stream_settings)
    engine.error = error
    failing = make_steps(index, engine, stream_settings, metrics, sleeps)
    corr = await correction_record(steps, fb("e9"), offset=5)
    result = await failing.optimize(corr)
    assert result.outcome == "dead_letter" and result.event_id == "e9"
    dl = DeadLetter.from_headers(result.emits[0].value, result.emits[0].headers)
    assert dl.reason == reason and dl.stage == "optimize" and dl.value == corr.value
    assert dl.source == "feedback.corrections:0:5"
    assert not await index.store.find_by_event("globex", "e9") and sleeps == []


async def test_corrupt_correction_is_dead_lettered(steps: Steps) -> None:
    result = await steps.optimize(rec(b"{oops", TopicKind.CORRECTIONS))
    assert result.outcome == "dead_letter"
    assert DeadLetter.from_headers(b"", result.emits[0].headers).field == "correction"


# --- publish (review policy) ----------------------------------------------------------


async def candidate_of(steps: Steps, raw: bytes) -> Record:
    result = await steps.optimize(await correction_record(steps, raw))
    return rec(only(result.emits, TopicKind.CANDIDATES).value, TopicKind.CANDIDATES)


async def test_manual_policy_leaves_the_candidate_pending(steps: Steps,
                                                          index: NuggetIndex) -> None:
    cand = await candidate_of(steps, fb("m1", "globex"))
    result = await steps.publish(cand)
    assert result.outcome == "pending_review" and result.emits == ()
    head = await index.head("globex", result.nugget_id)
    assert head.publication is Publication.PENDING_REVIEW


async def test_auto_policy_emits_one_idempotent_approval(steps: Steps,
                                                         index: NuggetIndex) -> None:
    cand = await candidate_of(steps, fb("a1", "acme"))
    result = await steps.publish(cand)
    assert result.outcome == "auto_approve"
    review_emit = only(result.emits, TopicKind.REVIEWS)
    review = ReviewEvent.from_bytes(review_emit.value)
    assert (review.action, review.reviewer, review.review_id) == (
        "approve", "auto-publish", f"auto:{result.nugget_id}")
    review_rec = rec(review_emit.value, TopicKind.REVIEWS)
    applied = await steps.review(review_rec)
    assert applied.outcome == "applied" and applied.detail == "PUBLISHED"
    # Re-deliveries: the approval and the candidate change nothing.
    assert (await steps.review(review_rec)).outcome == "duplicate"
    assert (await steps.publish(cand)).outcome == "unchanged"
    history = await index.store.history("acme", result.nugget_id)
    assert [v.publication for v in history] == [Publication.PENDING_REVIEW,
                                               Publication.PUBLISHED]


async def test_candidate_from_another_producer_is_submitted_once(
        steps: Steps, index: NuggetIndex) -> None:
    engine = InlineEngine(index.store, index.embedder, local_roles(), steps.settings)
    msg = parse_event(fb("x1", "globex"))
    ctx = to_context(msg)
    ex = local_roles().actionability.extract(ctx, Meter())
    outcome = await engine.optimize(ctx, ex)
    assert outcome.nugget is not None
    raw = nugget_to_bytes(outcome.nugget)
    first = await steps.publish(rec(raw, TopicKind.CANDIDATES))
    second = await steps.publish(rec(raw, TopicKind.CANDIDATES, offset=1))
    assert first.outcome == second.outcome == "pending_review"
    assert len(await index.store.find_by_event("globex", "x1")) == 1


async def test_garbage_candidate_is_dead_lettered(steps: Steps) -> None:
    result = await steps.publish(rec(b"\x0a\xff\xff", TopicKind.CANDIDATES))
    assert result.outcome == "dead_letter"


# --- reviews --------------------------------------------------------------------------


async def review(steps: Steps, offset: int, **fields: object) -> StepResult:
    raw = json.dumps({"tenant": "globex", **fields}).encode()
    return await steps.review(rec(raw, TopicKind.REVIEWS, offset))


async def test_reviews_apply_each_action_once(steps: Steps, index: NuggetIndex) -> None:
    cand = await candidate_of(steps, fb("r1", "globex"))
    nid = (await steps.publish(cand)).nugget_id
    first_version = nid
    r = await review(steps, 0, id=nid, action="approve", reviewer="ann", review_id="rv-1")
    assert (r.outcome, r.detail) == ("applied", "PUBLISHED")
    assert (await review(steps, 0, id=nid, action="approve", reviewer="ann",
                         review_id="rv-1")).outcome == "duplicate"
    r = await review(steps, 1, id=nid, action="edit", reviewer="bob",
                     changes={"title": "Who may reset passwords (portal v8.0)"})
    assert r.outcome == "applied"
    head = await index.head("globex", nid)
    assert head.title == "Who may reset passwords (portal v8.0)"
    assert "[review nuggets.reviews:0:1]" in head.change_reason  # id from the offset
    r = await review(steps, 2, id=nid, action="unpublish", reviewer="cy", reason="stale")
    assert r.detail == "UNPUBLISHED"
    r = await review(steps, 3, id=nid, action="revert", target_version_id=first_version)
    assert r.outcome == "applied"
    history = await index.store.history("globex", nid)
    assert len(history) == 5 and history[-1].publication is Publication.PENDING_REVIEW
    # The same record delivered again changes nothing.
    assert (await review(steps, 3, id=nid, action="revert",
                         target_version_id=first_version)).outcome == "duplicate"
    assert len(await index.store.history("globex", nid)) == 5


async def test_a_review_delivered_twice_at_once_applies_once(steps: Steps,
                                                              index: NuggetIndex) -> None:
    """Two workers handed the same review record (a rebalance): the review id is checked
    under the writer lock, so the second is a duplicate, not a second approval (which
    used to fail as an invalid transition and go to the dead letters)."""
    cand = await candidate_of(steps, fb("r3", "globex"))
    nid = (await steps.publish(cand)).nugget_id
    raw = json.dumps({"tenant": "globex", "id": nid, "action": "approve",
                      "review_id": "rv-twice"}).encode()
    results = await asyncio.gather(steps.review(rec(raw, TopicKind.REVIEWS, 7)),
                                   steps.review(rec(raw, TopicKind.REVIEWS, 7)))
    assert sorted(r.outcome for r in results) == ["applied", "duplicate"]
    history = await index.store.history("globex", nid)
    assert [v.request_id for v in history] == ["", "rv-twice"], "the review id is stored"
    assert "[review rv-twice]" in history[-1].change_reason


async def test_failing_reviews_are_dead_lettered_with_their_reason(steps: Steps) -> None:
    cand = await candidate_of(steps, fb("r2", "globex"))
    nid = (await steps.publish(cand)).nugget_id
    cases = [({"id": "n-missing", "action": "approve"}, "not_found"),
             ({"id": nid, "action": "unpublish"}, "invalid_transition"),
             ({"id": nid, "action": "revert", "target_version_id": "n-other"},
              "invalid_field"),
             ({"id": nid, "action": "sing"}, "invalid_field")]
    for offset, (fields, reason) in enumerate(cases):
        r = await review(steps, offset, **fields)
        assert r.outcome == "dead_letter", fields
        assert DeadLetter.from_headers(b"", r.emits[0].headers).reason == reason, fields


async def test_openai_backend_tokens_and_cost_reach_the_metrics(
        index: NuggetIndex, stream_settings: Settings, metrics: Metrics,
        sleeps: list[float]) -> None:
    """The worker's steps with the openai backend against the scripted server: after an
    event is read and its nugget optimized, every role that called the API has its calls,
    prompt and completion tokens (from the API's usage) and cost (at the configured
    prices) in the metrics."""
    from optimizer.backends import make_roles
    from tests.fakes.openai_server import fake_openai

    with fake_openai() as server:
        settings = dataclasses.replace(
            stream_settings, llm="openai", openai_base_url=server.url,
            llm_price_input_per_mtok=1.0, llm_price_output_per_mtok=4.0,
            llm_timeout_seconds=5.0)
        roles = make_roles(settings, sleep=lambda s: None)
        engine = InlineEngine(index.store, index.embedder, roles, settings,
                              on_usage=metrics.pipeline.observe_usage)
        await engine.start()
        try:
            steps = make_steps(index, engine, settings, metrics, sleeps)
            record = await correction_record(steps, fb("e-openai"))
            await steps.optimize(record)
        finally:
            await engine.stop()
        called = sorted(set(server.roles()))
    assert "actionability" in called and len(called) >= 2, called
    for role in called:
        calls = value(metrics, "nuggetflow_llm_calls_total", role=role, outcome="ok")
        assert calls >= 1, role
        # the fake server reports 100 prompt and 20 completion tokens per call
        assert value(metrics, "nuggetflow_llm_tokens_total", role=role,
                     direction="prompt") == 100 * calls, role
        assert value(metrics, "nuggetflow_llm_tokens_total", role=role,
                     direction="completion") == 20 * calls, role
        assert value(metrics, "nuggetflow_llm_cost_dollars_total", role=role) == \
            pytest.approx(calls * (100 * 1.0 + 20 * 4.0) / 1e6), role
