"""Correction lag and the review backlog (query/review_watch.py): the lag is recorded
where a correction becomes retrievable, once, and never for writes that publish nothing
new; the backlog counts come from the store."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from nuggetflow.settings import Settings
from query.backends.sqlite import SQLiteStore
from query.embeddings import MiniLMEmbedder
from query.index import NuggetIndex, Publishing
from query.metrics import Metrics
from query.model import Nugget, Provenance, Publication
from query.review_watch import ReviewWatch
from tests.helpers import T0, days, make_nugget


@pytest.fixture
async def index(tmp_path: Path, embedder: MiniLMEmbedder) -> AsyncIterator[NuggetIndex]:
    store = SQLiteStore(tmp_path / "review.db")
    index = NuggetIndex(store, embedder, Settings.from_env({}), clock=lambda: T0 + days(2))
    await index.start()
    yield index
    await index.stop()


def candidate(obj: str, event: str, subject: str = "portal password reset") -> Nugget:
    n = make_nugget(subject=subject, obj=obj, sources=(event,),
                    publication=Publication.PENDING_REVIEW)
    return n.__class__(**{**n.__dict__, "provenance": Provenance(
        event_id=event, tenant="acme", timestamp=T0 + timedelta(hours=3))})


def lag_samples(metrics: Metrics) -> dict[tuple[str, str], tuple[float, float]]:
    """(tenant, outcome) -> (count, sum) of the correction lag histogram."""
    out: dict[tuple[str, str], list[float]] = {}
    for family in metrics.registry.collect():
        for s in family.samples:
            if s.name == "nuggetflow_review_correction_lag_seconds_count":
                out.setdefault((s.labels["tenant"], s.labels["outcome"]), [0, 0])[0] = s.value
            if s.name == "nuggetflow_review_correction_lag_seconds_sum":
                out.setdefault((s.labels["tenant"], s.labels["outcome"]), [0, 0])[1] = s.value
    return {k: (v[0], v[1]) for k, v in out.items()}


async def test_an_approval_records_the_lag_from_the_feedback_once(
        index: NuggetIndex) -> None:
    metrics = Metrics.create(CollectorRegistry())
    ReviewWatch(index, metrics.review).attach().attach()  # attaching twice listens once
    head = await index.submit(candidate("Workspace Owner", "ev-1"))
    assert lag_samples(metrics) == {}, "a candidate waiting for review is not retrievable"
    approved = await index.review("acme", head.id, "approve", reviewer="kim",
                                  request_id="r-1")
    expected = (T0 + days(2) - (T0 + timedelta(hours=3))).total_seconds()
    assert lag_samples(metrics) == {("acme", "published"): (1.0, expected)}
    # a replayed request, an edit of the published nugget and an unpublish/approve cycle
    # publish nothing new
    await index.review("acme", head.id, "approve", reviewer="kim", request_id="r-1")
    await index.edit("acme", approved.id, "clearer", title="Who resets passwords in 8.2")
    await index.review("acme", approved.id, "unpublish", reviewer="kim")
    await index.review("acme", approved.id, "approve", reviewer="kim")
    assert lag_samples(metrics) == {("acme", "published"): (1.0, expected)}


async def test_a_correction_merged_into_a_published_nugget_counts_as_merged(
        index: NuggetIndex) -> None:
    seen: list[Publishing] = []
    index.publish_listeners.append(seen.append)
    first = await index.submit(candidate("Workspace Owner", "ev-1"))
    await index.review("acme", first.id, "approve")
    again = await index.submit(candidate("Workspace Owner", "ev-2"))
    await index.review("acme", again.id, "approve")
    assert [e.outcome for e in seen] == ["published", "merged"]
    assert all(e.lag_seconds == (T0 + days(2) - (T0 + timedelta(hours=3))).total_seconds()
               for e in seen)


async def test_a_rejection_records_nothing_and_a_failing_listener_breaks_no_write(
        index: NuggetIndex) -> None:
    def broken(_: Publishing) -> None:
        raise RuntimeError("boom")

    seen: list[Publishing] = []
    index.publish_listeners += [broken, seen.append]
    rejected = await index.submit(candidate("Workspace Owner", "ev-1"))
    await index.review("acme", rejected.id, "reject")
    approved = await index.submit(candidate("Billing Admin", "ev-3", subject="audit export"))
    head = await index.review("acme", approved.id, "approve")
    assert head.publication is Publication.PUBLISHED
    assert [e.lineage for e in seen] == [head.lineage_id]


async def test_the_backlog_sample_exports_every_state_of_every_tenant(
        index: NuggetIndex) -> None:
    metrics = Metrics.create(CollectorRegistry())
    watch = ReviewWatch(index, metrics.review)
    for i in range(3):
        await index.submit(candidate(f"Role {i}", f"ev-{i}", subject=f"subject {i}"))
    head = await index.submit(candidate("Role 9", "ev-9", subject="subject 9"))
    await index.review("acme", head.id, "approve")
    assert await watch.sample() == {("acme", "pending_review"): 3, ("acme", "published"): 1}
    values = {(s.labels["tenant"], s.labels["publication"]): s.value
              for family in metrics.registry.collect() for s in family.samples
              if s.name == "nuggetflow_review_nuggets"}
    assert values == {("acme", "pending_review"): 3.0, ("acme", "published"): 1.0}
