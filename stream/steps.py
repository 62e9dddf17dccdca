"""The processing steps, as plain async functions over records (no Kafka in here).

=================  =====================  ==================================================
step               reads                  produces
=================  =====================  ==================================================
:meth:`ingest`     feedback.events        feedback.corrections (actionable events only)
:meth:`optimize`   feedback.corrections   nuggets.candidates (after INO and submission)
:meth:`publish`    nuggets.candidates     nuggets.reviews (approve, under the auto policy)
:meth:`review`     nuggets.reviews        nothing: applies the review to the index
:meth:`reprobe`    corpus.changes         nothing: re-probes the published nuggets a corpus
                                          change reaches and writes versions, flags, traces
=================  =====================  ==================================================

Any step may also produce a dead letter: a record that cannot be processed (malformed,
or failing for a non-retriable reason) goes to feedback.dead-letter with its original
bytes and the reason, and counts as done, so it never blocks its partition.
Retriable failures (an LLM endpoint or store that is down) are retried with exponential
backoff and jitter, forever: the record waits, nothing is dropped, and each retry is
counted in ``nuggetflow_stream_retries_total``.

Effects are idempotent, so at-least-once delivery never yields a second nugget:
a correction whose event already has a nugget (``store.find_by_event``) is not optimized
again (its candidate is re-announced instead); submission is idempotent by content; a
review's id is the request id of the version it produces, and a review whose id is
already on a version of the lineage is skipped (checked by the index under the writer
lock, the same way as a Review RPC's request id).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from google.protobuf.message import DecodeError

from nuggetflow.errors import (
    BudgetExceededError,
    InvalidTransitionError,
    NotFoundError,
    NuggetflowError,
    ValidationError,
)
from nuggetflow.logging import clip, get_logger
from nuggetflow.settings import Settings
from optimizer.pipeline import Outcome
from optimizer.reprobe import apply_reprobes
from optimizer.screen import screen
from query.convert import nugget_from_bytes, nugget_to_bytes
from query.corpus import CorpusChange
from query.index import Applied, NuggetIndex
from query.model import Nugget, Publication
from stream.engine import Engine, ExtractResult
from stream.events import parse_event, to_context
from stream.metrics import PipelineMetrics
from stream.records import (
    Correction,
    Emit,
    Record,
    ReviewEvent,
    StepResult,
    dead_letter,
    reason_of,
)
from stream.topics import TopicKind

log = get_logger(__name__)


def ids_in(value: bytes) -> tuple[str, str]:
    """Best effort (tenant, event id) of a record that failed validation, for its log
    line: read from the JSON object, or its "event" object, when there is one."""
    try:
        doc = json.loads(value)
    except (ValueError, UnicodeDecodeError):
        return "", ""
    if isinstance(doc, dict) and isinstance(doc.get("event"), dict):
        doc = doc["event"]
    if not isinstance(doc, dict):
        return "", ""
    event_id = next((doc[k] for k in ("eventId", "event_id") if isinstance(doc.get(k), str)),
                    "")
    tenant = doc["tenant"] if isinstance(doc.get("tenant"), str) else ""
    return clip(tenant), clip(event_id)
T = TypeVar("T")

AUTO_REVIEWER = "auto-publish"


def failure_reason(exc: BaseException) -> str:
    """The dead-letter reason code of a non-retriable failure."""
    if isinstance(exc, InvalidTransitionError):
        return "invalid_transition"
    if isinstance(exc, ValidationError):
        return reason_of(exc)
    if isinstance(exc, NotFoundError):
        return "not_found"
    if isinstance(exc, BudgetExceededError):
        return "budget"
    if isinstance(exc, NuggetflowError):
        # e.g. agent_refused (optimizer.external): a fixed code the error class declares
        return str(getattr(exc, "reason_code", "") or "error")
    return "internal"


class Steps:
    """The four steps over one index and one engine (see the module docstring)."""

    def __init__(self, index: NuggetIndex, engine: Engine, settings: Settings,
                 metrics: PipelineMetrics | None = None, *,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 jitter: Callable[[], float] = random.random) -> None:
        self.index = index
        self.engine = engine
        self.settings = settings
        self.metrics = metrics
        self._sleep = sleep
        self._jitter = jitter

    # --- helpers ----------------------------------------------------------------------

    def backoff(self, attempt: int) -> float:
        """Seconds to wait before retry ``attempt`` (1-based): doubling, capped, jittered."""
        base = min(self.settings.stream_retry_max_seconds,
                   self.settings.stream_retry_initial_seconds * 2 ** (attempt - 1))
        return float(base * (0.5 + 0.5 * self._jitter()))

    async def _wait_retry(self, agent: str, attempt: int, exc: NuggetflowError) -> None:
        delay = self.backoff(attempt)
        if self.metrics is not None:
            self.metrics.retry(agent)
        log.warning("retriable failure; the record waits", agent=agent, attempt=attempt,
                    delay_s=round(delay, 2), error=str(exc))
        await self._sleep(delay)

    async def _retrying(self, agent: str, call: Callable[[], Awaitable[T]]) -> T:
        attempt = 0
        while True:
            try:
                return await call()
            except NuggetflowError as exc:
                if not exc.retriable:
                    raise
                attempt += 1
                await self._wait_retry(agent, attempt, exc)

    def _dead(self, record: Record, agent: str, exc: BaseException, *, tenant: str = "",
              event_id: str = "") -> StepResult:
        reason = failure_reason(exc)
        field = getattr(exc, "field", None)
        if reason == "internal":
            log.error("unexpected failure; record dead-lettered", agent=agent,
                      source=record.source, exc_info=exc)
        else:
            log.warning("record dead-lettered", agent=agent, reason=reason,
                        source=record.source, tenant=tenant, event=event_id, error=str(exc))
        if self.metrics is not None:
            self.metrics.dead_letter(record.topic or "-", reason)
        emit = dead_letter(record, stage=agent, reason=reason, error=str(exc) or repr(exc),
                           field_name=field)
        return StepResult("dead_letter", (emit,), tenant=tenant, event_id=event_id,
                          detail=reason)

    def _count(self, agent: str, result: StepResult) -> StepResult:
        if self.metrics is not None:
            self.metrics.observe_event(agent, result.outcome)
        return result

    # --- feedback.events -> feedback.corrections --------------------------------------

    async def ingest(self, records: Sequence[Record]) -> list[StepResult]:
        """Decode, validate and classify a batch of feedback events (order kept)."""
        results: list[StepResult | None] = [None] * len(records)
        parsed = []
        for i, rec in enumerate(records):
            try:
                parsed.append((i, parse_event(rec.value)))
            except ValidationError as exc:
                tenant, event_id = ids_in(rec.value)
                results[i] = self._dead(rec, "actionability", exc, tenant=tenant,
                                        event_id=event_id)
        contexts = [to_context(msg) for _, msg in parsed]
        done: list[ExtractResult] = []
        attempt = 0
        while len(done) < len(contexts):
            part = await self.engine.extract(contexts[len(done):])
            if not part:
                raise RuntimeError("engine.extract returned nothing")
            last = part[-1]
            if isinstance(last, NuggetflowError) and last.retriable:
                done.extend(part[:-1])
                attempt += 1
                await self._wait_retry("actionability", attempt, last)
                continue
            done.extend(part)
            attempt = 0
        for (i, msg), ex in zip(parsed, done, strict=True):
            rec = records[i]
            if isinstance(ex, Exception):
                results[i] = self._dead(rec, "actionability", ex, tenant=msg.tenant,
                                        event_id=msg.event_id)
            elif ex.can_produce_nugget:
                value = Correction(msg, ex).to_bytes()
                results[i] = StepResult(
                    "correction", (Emit(TopicKind.CORRECTIONS, msg.tenant.encode(), value),),
                    tenant=msg.tenant, event_id=msg.event_id)
            else:
                log.info("not actionable", tenant=clip(msg.tenant), event=clip(msg.event_id),
                         label=ex.usefulness, reason=clip(ex.reason, 300))
                results[i] = StepResult("not_actionable", tenant=msg.tenant,
                                        event_id=msg.event_id, detail=ex.usefulness)
        return [self._count("actionability", r) for r in results if r is not None]

    # --- feedback.corrections -> nuggets.candidates -----------------------------------

    async def optimize(self, record: Record) -> StepResult:
        """INO for one actionable event, then submit the candidate (PENDING_REVIEW)."""
        return self._count("optimize", await self._optimize(record))

    async def _optimize(self, record: Record) -> StepResult:
        try:
            corr = Correction.from_bytes(record.value)
        except ValidationError as exc:
            tenant, event_id = ids_in(record.value)
            return self._dead(record, "optimize", exc, tenant=tenant, event_id=event_id)
        tenant, event_id = corr.event.tenant, corr.event.event_id
        existing = await self._retrying(
            "optimize", lambda: self.index.store.find_by_event(tenant, event_id))
        if existing:
            # Re-delivered: announce the nugget we have instead of making a second one.
            head = existing[0]
            log.info("event already has a nugget", tenant=tenant, event=event_id, id=head.id)
            return StepResult("duplicate", (self._candidate(head),), tenant=tenant,
                              event_id=event_id, nugget_id=head.id)
        ctx = to_context(corr.event)
        try:
            outcome = await self._retrying(
                "optimize", lambda: self.engine.optimize(ctx, corr.extraction))
        except Exception as exc:
            return self._dead(record, "optimize", exc, tenant=tenant, event_id=event_id)
        if outcome.nugget is None:
            return StepResult("not_actionable", tenant=tenant, event_id=event_id)
        self._observe_outcome(outcome)
        nugget = outcome.nugget
        try:
            head = await self._retrying("optimize", lambda: self.index.submit(nugget))
        except ValidationError as exc:
            return self._dead(record, "optimize", exc, tenant=tenant, event_id=event_id)
        log.info("candidate nugget", tenant=tenant, event=event_id, id=head.id,
                 passed=bool(outcome.result and outcome.result.passed))
        return StepResult("candidate", (self._candidate(head),), tenant=tenant,
                          event_id=event_id, nugget_id=head.id)

    @staticmethod
    def _candidate(n: Nugget) -> Emit:
        return Emit(TopicKind.CANDIDATES, n.tenant.encode(), nugget_to_bytes(n))

    def _observe_outcome(self, outcome: Outcome) -> None:
        if self.metrics is None or outcome.result is None:
            return
        r, tenant = outcome.result, outcome.context.tenant
        self.metrics.observe_ino(tenant, r.variant, r.iterations, r.passed)
        for it in r.history:
            for p in it.probes:
                self.metrics.observe_probe(tenant, r.variant, p.passed)
        self.metrics.observe_usage(outcome.accounting)

    # --- nuggets.candidates -> nuggets.reviews (review policy) ------------------------

    async def publish(self, record: Record) -> StepResult:
        """Apply the tenant's review policy to a candidate (manual: wait; auto: approve)."""
        return self._count("publish", await self._publish(record))

    async def _publish(self, record: Record) -> StepResult:
        try:
            nugget = nugget_from_bytes(record.value)
            if not nugget.tenant or not nugget.id:
                raise ValidationError("candidate has no tenant or id", field="nugget")
        except (DecodeError, ValidationError) as exc:
            err = exc if isinstance(exc, ValidationError) else ValidationError(
                f"not a Nugget protobuf: {exc}", field="event")
            return self._dead(record, "publish", err)
        tenant = nugget.tenant
        try:
            head = await self._retrying("publish", lambda: self._head_or_submit(nugget))
        except NuggetflowError as exc:
            return self._dead(record, "publish", exc, tenant=tenant,
                              event_id=nugget.provenance.event_id)
        base = StepResult("", tenant=tenant, event_id=head.provenance.event_id,
                          nugget_id=head.id)
        if head.publication is not Publication.PENDING_REVIEW:
            return dataclasses.replace(base, outcome="unchanged",
                                       detail=head.publication.name)
        if self.settings.policy_for(tenant) != "auto":
            return dataclasses.replace(base, outcome="pending_review")
        held = screen(head)
        if held:
            log.warning("candidate held for review", tenant=tenant, id=head.id,
                        event=head.provenance.event_id, reasons=held)
            return dataclasses.replace(base, outcome="held_for_review",
                                       detail="; ".join(held))
        review = ReviewEvent(tenant, head.id, "approve", reviewer=AUTO_REVIEWER,
                             reason="review policy auto",
                             review_id=f"auto:{head.lineage_id or head.id}")
        return dataclasses.replace(
            base, outcome="auto_approve",
            emits=(Emit(TopicKind.REVIEWS, tenant.encode(), review.to_bytes()),))

    async def _head_or_submit(self, nugget: Nugget) -> Nugget:
        try:
            return await self.index.head(nugget.tenant, nugget.id)
        except NotFoundError:
            pass
        # A candidate from another producer: submit it (once per event).
        existing = await self.index.store.find_by_event(nugget.tenant,
                                                        nugget.provenance.event_id)
        if existing and nugget.provenance.event_id:
            return existing[0]
        return await self.index.submit(nugget)

    # --- nuggets.reviews -> index -----------------------------------------------------

    async def review(self, record: Record) -> StepResult:
        """Apply one review (approve, reject, unpublish, revert, edit) to the index."""
        return self._count("review", await self._review(record))

    async def _review(self, record: Record) -> StepResult:
        try:
            ev = ReviewEvent.from_bytes(record.value)
        except ValidationError as exc:
            return self._dead(record, "review", exc)
        if not ev.review_id:
            ev = dataclasses.replace(ev, review_id=record.source)
        try:
            # The review id is the request id of the version it produces: the index
            # answers a review already applied to the lineage (under the writer lock,
            # reading no history) instead of writing again, as for a Review RPC.
            applied = await self._retrying("review", lambda: self._apply(ev))
        except NuggetflowError as exc:
            return self._dead(record, "review", exc, tenant=ev.tenant)
        head = applied.head
        if applied.replayed:
            return StepResult("duplicate", tenant=ev.tenant, nugget_id=head.id)
        log.info("review applied", tenant=ev.tenant, id=ev.id, action=ev.action,
                 reviewer=ev.reviewer, publication=head.publication.name,
                 state=head.state.name)
        return StepResult("applied", tenant=ev.tenant, nugget_id=head.id,
                          event_id=head.provenance.event_id, detail=head.publication.name)

    async def _apply(self, ev: ReviewEvent) -> Applied:
        reason = f"{ev.reason} {ev.tag}".strip()
        if ev.action == "edit":
            changes = dict(ev.changes)
            if "anchors" in changes:
                changes["anchors"] = tuple(changes["anchors"])
            return await self.index.apply_edit(ev.tenant, ev.id,
                                               f"by {ev.reviewer or 'unknown'}: {reason}",
                                               request_id=ev.review_id, **changes)
        return await self.index.apply_review(ev.tenant, ev.id, ev.action, reviewer=ev.reviewer,
                                             reason=reason,
                                             target_version_id=ev.target_version_id,
                                             request_id=ev.review_id)

    # --- corpus.changes -> index (re-probe) ------------------------------------------

    async def reprobe(self, record: Record) -> StepResult:
        """Re-probe the published nuggets a corpus change reaches; write what it found
        (re-optimized versions under the review policy, flags, traces)."""
        return self._count("reprobe", await self._reprobe(record))

    async def _reprobe(self, record: Record) -> StepResult:
        try:
            change = CorpusChange.from_bytes(record.value)
        except ValidationError as exc:
            return self._dead(record, "reprobe", exc)
        try:
            found = await self._retrying("reprobe", lambda: self.engine.reprobe(change))
            traces = await self._retrying(
                "reprobe", lambda: apply_reprobes(self.index, self.settings, change, found))
        except NuggetflowError as exc:
            return self._dead(record, "reprobe", exc, tenant=change.tenant)
        outcomes = Counter(t.outcome for t in traces)
        if self.metrics is not None:
            for outcome, n in outcomes.items():
                self.metrics.observe_reprobe(change.tenant, outcome, n)
        detail = ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())) or "none reached"
        return StepResult("reprobed", tenant=change.tenant, detail=detail)
