"""Usage counts and the review they drive (query.usage) on the embedded store."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import date, datetime
from pathlib import Path

import pytest

from nuggetflow.errors import BackendUnavailableError
from query.backends.sqlite import SQLiteStore
from query.embeddings import MiniLMEmbedder
from query.model import Nugget, Publication, State, next_version
from query.usage import (
    FlagKind,
    ReviewFlag,
    UsagePolicy,
    UsageRecorder,
    UsageRow,
    UsageTotals,
    dismiss_flag,
    judge,
    published_tenants,
    raise_flags,
    review_usage,
)
from tests.helpers import T0, days, make_nugget

NOW = T0 + days(100)
POLICY = UsagePolicy(window_days=30, min_topic_queries=10, min_retrievals=20,
                     min_citation_rate=0.1, expiry_days=14)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "usage.db")
    await s.start()
    yield s
    await s.stop()


async def put(store: SQLiteStore, embedder: MiniLMEmbedder, *nuggets: Nugget) -> None:
    await store.write_nuggets(list(nuggets), list(embedder.embed([n.text for n in nuggets])))


def day(n: int) -> date:
    return (NOW - days(n)).date()


def test_each_rule_says_why() -> None:
    head = make_nugget()
    assert judge(head, UsageTotals(considered=9, retrieved=2), POLICY, NOW) == [], \
        "under the topic threshold"
    [(kind, why)] = judge(head, UsageTotals(considered=12, retrieved=4), POLICY, NOW)
    assert kind is FlagKind.UNCITED
    assert why == "not cited in 30 days while its topic was queried 12 times (returned 4 times)"
    [(kind, why)] = judge(head, UsageTotals(considered=40, retrieved=30, cited=2), POLICY, NOW)
    assert kind is FlagKind.SELDOM_CITED and "retrieved 30 times" in why and "cited 2" in why
    assert judge(head, UsageTotals(considered=40, retrieved=30, cited=3), POLICY, NOW) == [], \
        "10 % is the bar, not under it"
    ending = make_nugget(end=NOW + days(5))
    [(kind, why)] = judge(ending, UsageTotals(), POLICY, NOW)
    assert kind is FlagKind.EXPIRING and "in 5 days" in why
    assert judge(make_nugget(end=NOW + days(20)), UsageTotals(), POLICY, NOW) == []


async def test_an_unused_nugget_goes_to_review_with_its_reason(
        store: SQLiteStore, embedder: MiniLMEmbedder) -> None:
    used = make_nugget(obj="Workspace Owner", sources=("ev-used",))
    unused = make_nugget(obj="Team Lead", subject="vpn token", sources=("ev-unused",))
    seldom = make_nugget(obj="Printer admin", subject="printer", sources=("ev-seldom",))
    draft = make_nugget(obj="Draft", subject="draft", sources=("ev-draft",),
                        publication=Publication.PENDING_REVIEW)
    old_news = make_nugget(obj="Deprecated", subject="old", sources=("ev-old",),
                           state=State.DEPRECATED)
    await put(store, embedder, used, unused, seldom, draft, old_news)
    await store.add_usage([
        UsageRow("acme", used.id, day(3), 30, 20, 8),
        UsageRow("acme", unused.id, day(3), 15, 2, 0),
        UsageRow("acme", unused.id, day(45), 0, 0, 5),  # cited, but before the window
        UsageRow("acme", seldom.id, day(2), 40, 25, 1),
        UsageRow("acme", draft.id, day(2), 40, 0, 0),
        UsageRow("acme", old_news.id, day(2), 40, 0, 0)], "f1")
    flags = await review_usage(store, "acme", POLICY, NOW)
    assert {(f.lineage_id, f.kind) for f in flags} == {
        (unused.id, FlagKind.UNCITED), (seldom.id, FlagKind.SELDOM_CITED)}
    [flag] = [f for f in flags if f.kind is FlagKind.UNCITED]
    assert flag.reason == ("not cited in 30 days while its topic was queried 15 times "
                           "(returned 2 times)")
    assert (flag.version_id, flag.title, flag.raised_at) == (unused.id, unused.title, NOW)
    assert await store.review_flags("acme") == sorted(flags, key=lambda f: f.lineage_id)

    # a later review keeps when the flag was first raised; a reviewer's dismissal stays
    [dismissed] = await dismiss_flag(store, "acme", seldom.id)
    again = await review_usage(store, "acme", POLICY, NOW + days(1))
    by_kind = {f.kind: f for f in again}
    assert by_kind[FlagKind.UNCITED].raised_at == NOW
    assert by_kind[FlagKind.SELDOM_CITED].dismissed and dismissed.dismissed

    # a new version starts with no counts: its flags go
    edited = next_version(unused, "edit", NOW, title="VPN tokens are reset by Team Leads")
    await store.write_nuggets([edited], [None])
    after_edit = await review_usage(store, "acme", POLICY, NOW + days(1))
    assert [f.lineage_id for f in after_edit] == [seldom.id]
    assert await published_tenants(store) == ["acme"]


async def test_flags_a_corpus_change_raised_stay_through_usage_reviews_for_their_version(
        store: SQLiteStore, embedder: MiniLMEmbedder) -> None:
    buried = make_nugget(obj="Workspace Owner", sources=("ev-buried",))
    other = make_nugget(obj="Team Lead", subject="vpn token", sources=("ev-other",))
    await put(store, embedder, buried, other)
    await raise_flags(store, "acme", [
        ReviewFlag("acme", buried.id, buried.id, FlagKind.BURIED, "2 of 5 probes fail", NOW,
                   title=buried.title),
        ReviewFlag("acme", other.id, other.id, FlagKind.REDUNDANT, "kb-7 says it", NOW)])
    # raised again by a later change: the first time and a dismissal are kept
    await dismiss_flag(store, "acme", other.id, FlagKind.REDUNDANT)
    await raise_flags(store, "acme", [ReviewFlag("acme", other.id, other.id,
                                                 FlagKind.REDUNDANT, "kb-8 says it too",
                                                 NOW + days(1))])
    flags = await review_usage(store, "acme", POLICY, NOW + days(2))
    by_lineage = {f.lineage_id: f for f in flags}
    assert by_lineage[buried.id].kind is FlagKind.BURIED, "usage review keeps it"
    again = by_lineage[other.id]
    assert (again.reason, again.raised_at, again.dismissed) == ("kb-8 says it too", NOW, True)
    # a new version of the buried nugget: its flag is about the old one and goes
    edited = next_version(buried, "edit", NOW, title="Only the Workspace Owner resets it")
    await store.write_nuggets([edited], [None])
    after = await review_usage(store, "acme", POLICY, NOW + days(3))
    assert [(f.lineage_id, f.kind) for f in after] == [(other.id, FlagKind.REDUNDANT)]


class FailingStore:
    """A store whose add_usage fails until told otherwise (a unit test's stand-in)."""

    def __init__(self) -> None:
        self.fail = True
        self.rows: list[UsageRow] = []
        self.flush_ids: list[str] = []

    async def add_usage(self, rows: Sequence[UsageRow], flush_id: str) -> None:
        if self.fail:
            raise BackendUnavailableError("store down")
        self.rows += rows
        self.flush_ids.append(flush_id)


async def test_a_batch_the_store_did_not_confirm_is_sent_again_with_its_id() -> None:
    clock = [datetime(2026, 3, 1, 12, tzinfo=T0.tzinfo)]
    recorder = UsageRecorder(lambda: clock[0])
    recorder.considered("acme", ["n1", "n2"])
    recorder.retrieved("acme", ["n1"])
    recorder.cited("acme", ["n1"])
    store = FailingStore()
    with pytest.raises(BackendUnavailableError):
        await recorder.flush(store)  # type: ignore[arg-type]
    recorder.retrieved("acme", ["n1"])  # arrives while the store is down
    assert recorder.pending("acme", ["n1", "n9"]) == {
        "n1": UsageTotals(1, 2, 1, date(2026, 3, 1))}
    store.fail = False
    assert await recorder.flush(store) == 3  # type: ignore[arg-type]
    assert store.rows == [UsageRow("acme", "n1", date(2026, 3, 1), 1, 1, 1),
                          UsageRow("acme", "n2", date(2026, 3, 1), 1, 0, 0),
                          UsageRow("acme", "n1", date(2026, 3, 1), 0, 1, 0)]
    # the batch that failed went first, under the id it had: a store that applied it and
    # lost the answer applies it once (see the store conformance test)
    assert len(store.flush_ids) == 2 and len(recorder) == 0
    assert await recorder.flush(store) == 0  # type: ignore[arg-type]
    clock[0] = datetime(2026, 3, 2, 9, tzinfo=T0.tzinfo)
    recorder.cited("acme", ["n1"])
    await recorder.flush(store)  # type: ignore[arg-type]
    assert store.rows[-1] == UsageRow("acme", "n1", date(2026, 3, 2), 0, 0, 1), "per day"
    assert len(set(store.flush_ids)) == 3


async def test_a_failed_batch_keeps_its_id_when_sent_again() -> None:
    recorder = UsageRecorder()
    recorder.retrieved("acme", ["n1"])
    store = FailingStore()
    attempts: list[str] = []
    real = store.add_usage

    async def remember(rows: Sequence[UsageRow], flush_id: str) -> None:
        attempts.append(flush_id)
        await real(rows, flush_id)

    store.add_usage = remember  # type: ignore[method-assign]
    with pytest.raises(BackendUnavailableError):
        await recorder.flush(store)  # type: ignore[arg-type]
    store.fail = False
    await recorder.flush(store)  # type: ignore[arg-type]
    assert attempts[0] == attempts[1]


def test_open_flags_are_exported_per_kind_every_kind_at_zero_when_none() -> None:
    from prometheus_client import CollectorRegistry

    from query.metrics import ReviewMetrics

    registry = CollectorRegistry()
    metrics = ReviewMetrics(registry)
    metrics.set_usage_flags("acme", ["uncited", "uncited", "expiring"])

    def value(kind: str) -> float | None:
        return registry.get_sample_value("nuggetflow_review_usage_flags",
                                         {"tenant": "acme", "kind": kind})

    assert (value("uncited"), value("seldom_cited"), value("expiring")) == (2.0, 0.0, 1.0)
    metrics.set_usage_flags("acme", [])  # dismissed or resolved: back to 0
    assert value("uncited") == 0.0
