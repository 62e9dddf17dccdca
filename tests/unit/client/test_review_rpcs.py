"""The RPCs the review console needs, through nuggetflow-client against the real service
(SQLite store, per-tenant tokens): EditNugget (guard verdict, dry run, expected version),
Review's expected version, filtered and newest-first ListCandidates, GetNeighbourhood,
GetUsage, WhoAmI, ListReviewFlags and DismissReviewFlag, and the whole optimization trace
in GetNugget."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from nuggetflow.settings import Settings
from nuggetflow_client import (
    Aborted,
    AsyncQueryClient,
    InvalidArgument,
    NotFound,
    QueryClient,
    ReviewFlag,
    Unauthenticated,
)
from nuggetflow_client.v1 import nugget_pb2 as pb
from optimizer.guard import check_edit
from query.auth import TokenAuth
from query.backends.sqlite import SQLiteStore
from query.embeddings import MiniLMEmbedder
from query.index import NuggetIndex
from query.metrics import Metrics
from query.model import Nugget, Provenance, Publication, State
from query.service import QueryServer, create_server
from query.usage import FlagKind, raise_flags
from query.usage import ReviewFlag as StoredFlag
from tests.conformance.service_suite import TOKEN_ACME, TOKEN_GLOBEX, TOKENS
from tests.helpers import T0, days, make_nugget
from tests.support.service import seeded_service

TRACE = {
    "variant": "E", "iterations": 2, "passed": True, "seed": 0,
    "probes": ["who resets passwords", "password reset role"],
    "history": [
        {"iteration": 1, "passed": False, "edits": ["rejected: title/body introduces '7'"],
         "rejected": ["title/body introduces '7'"], "llm_calls": 3, "tokens": 120,
         "seconds": 0.5, "cost_usd": 0.0012,
         "probes": [{"query": "who resets passwords", "retrieved": True,
                     "reached_generator": False, "cited": False, "rank": 4,
                     "rerank_score": 0.2, "competitors": ["Reset a password (help page)"],
                     "answer": "Any admin can.", "held_out": False}]},
        {"iteration": 2, "passed": True, "edits": ["anchor added"], "rejected": [],
         "llm_calls": 2, "tokens": 80, "seconds": 0.4, "cost_usd": 0.0008, "probes": []},
    ],
}


def candidate(tenant: str = "acme", *, obj: str = "Workspace Owner", event: str = "ev-1",
              hours: int = 0, owner: str = "alice", **kw: object) -> Nugget:
    n = make_nugget(tenant, obj=obj, sources=(event,), start=T0 + days(hours / 24),
                    publication=Publication.PENDING_REVIEW, **kw)  # type: ignore[arg-type]
    return dataclasses.replace(n, provenance=Provenance(
        event_id=event, trigger_query="who can reset a teammate's password",
        corrected_answer="Any Admin can reset it.",
        feedback_text=f"Wrong: in portal v8.2 only the {obj} can reset it.",
        timestamp=T0 + days(hours / 24), tenant=tenant, owner=owner, rating="down",
        user="u1", agent="chat"), optimization=TRACE)


@dataclass
class Served:
    server: QueryServer
    index: NuggetIndex
    target: str


@pytest.fixture
async def served(tmp_path: Path, embedder: MiniLMEmbedder,
                 settings: Settings) -> AsyncIterator[Served]:
    async with seeded_service(tmp_path / "console.db", embedder, settings,
                              auth=TokenAuth(TOKENS), guard=check_edit) as s:
        yield Served(s.server, s.index, s.target)


async def test_edit_runs_the_guard_refuses_added_numbers_and_stale_versions(
        served: Served) -> None:
    n = await served.index.submit(candidate())
    async with AsyncQueryClient(served.target, TOKEN_ACME) as c:
        dry = await c.edit_nugget("acme", n.id, expected_version_id=n.id,
                                  title="Who resets a teammate's password",
                                  body=n.body, anchors=list(n.anchors), reviewer="alice",
                                  dry_run=True)
        assert dry.guard_ok and not dry.saved and dry.changed_fields == ("title",)
        assert (await c.get_nugget("acme", n.id)).version == 1, "a dry run writes nothing"
        added = await c.edit_nugget("acme", n.id, expected_version_id=n.id, title=n.title,
                                    body=n.body + " It takes 45 minutes.", reviewer="alice")
        assert not added.saved and any("'45'" in v for v in added.violations)
        saved = await c.edit_nugget("acme", n.id, expected_version_id=n.id,
                                    title="Who resets a teammate's password", body=n.body,
                                    reviewer="alice", reason="clearer title")
        assert saved.saved and saved.nugget.version == 2 and saved.nugget.reviewer == "alice"
        assert "edit by alice: clearer title" in saved.nugget.change_reason
        with pytest.raises(Aborted) as stale:  # a second reviewer edited version 1 too
            await c.edit_nugget("acme", n.id, expected_version_id=n.id, title="Other title",
                                body=n.body, reviewer="bob")
        assert stale.value.field == "expected_version_id"
        assert saved.nugget.id in stale.value.message
        with pytest.raises(Aborted):
            await c.review("acme", n.id, "approve", reviewer="bob", expected_version_id=n.id)
        approved = await c.review("acme", n.id, "approve", reviewer="bob",
                                  expected_version_id=saved.nugget.id)
        assert approved.publication == pb.PUBLISHED and approved.reviewer == "bob"
        with pytest.raises(InvalidArgument) as empty:
            await c.edit_nugget("acme", n.id, expected_version_id=approved.id, title=" ",
                                body=n.body, reviewer="bob")
        assert empty.value.field == "title"
        with pytest.raises(NotFound):
            await c.edit_nugget("acme", "n-unknown", expected_version_id="n-unknown",
                                title="t", body="b", reviewer="bob")


async def test_listing_filters_orders_newest_first_and_pages(served: Served) -> None:
    old = await served.index.submit(candidate(event="ev-old", hours=1, owner="alice"))
    new = await served.index.submit(candidate(event="ev-new", hours=5, owner="bob",
                                              subject="vpn token lifetime", obj="8 hours"))
    mid = await served.index.submit(candidate(event="ev-mid", hours=3, owner="alice",
                                              subject="printer quota", obj="200 pages"))
    async with AsyncQueryClient(served.target, TOKEN_ACME) as c:
        first = await c.list_candidates("acme", order="newest", page_size=2)
        assert [x.id for x in first.nuggets] == [new.id, mid.id] and first.total_size == 3
        rest = await c.list_candidates("acme", order="newest", page_size=2,
                                       page_token=first.next_page_token)
        assert [x.id for x in rest.nuggets] == [old.id] and not rest.next_page_token
        mine = await c.list_candidates("acme", order="newest", owner="alice")
        assert [x.id for x in mine.nuggets] == [mid.id, old.id]
        assert [x.id for x in (await c.list_candidates("acme", query="PRINTER")).nuggets] \
            == [mid.id]
        assert not (await c.list_candidates("acme", states=["contested"])).nuggets
        assert not (await c.list_candidates("acme", validity="future")).nuggets
        with pytest.raises(InvalidArgument) as bad:
            await c.list_candidates("acme", owner="bob", page_token=first.next_page_token)
        assert bad.value.field == "page_token"
        listed = first.nuggets[0]
        assert listed.optimization.passed and not listed.optimization.history, \
            "a listing carries the INO outcome, not its rounds"
        whole = await c.get_nugget("acme", new.id)
        assert [r.iteration for r in whole.optimization.history] == [1, 2]
        r1 = whole.optimization.history[0]
        assert list(r1.rejected_edits) == ["title/body introduces '7'"]
        assert r1.cost_usd == pytest.approx(0.0012) and r1.llm_calls == 3
        assert list(r1.probes[0].competitors) == ["Reset a password (help page)"]
        assert whole.provenance.rating == "down" and whole.provenance.agent == "chat"
        assert whole.provenance.user == "u1" and whole.provenance.owner == "bob"


async def test_neighbourhood_says_what_approval_would_do(served: Served) -> None:
    live = await served.index.submit(candidate(event="ev-a"))
    live = await served.index.approve("acme", live.id, reviewer="alice")
    rival = await served.index.submit(candidate(event="ev-b", obj="Team Lead"))
    twin = await served.index.submit(candidate(event="ev-c", obj="Workspace Owner.",
                                               title="Owner resets passwords"))
    async with AsyncQueryClient(served.target, TOKEN_ACME) as c:
        hood = await c.get_neighbourhood("acme", rival.id)
        assert hood.on_approval == "contested"
        assert [(n.relation, n.nugget.lineage_id) for n in hood.neighbours
                if n.nugget.lineage_id == live.lineage_id] == [("contests", live.lineage_id)]
        twin_hood = await c.get_neighbourhood("acme", twin.id)
        assert twin_hood.on_approval == "merged"
        assert ("duplicates", live.lineage_id) in [(n.relation, n.nugget.lineage_id)
                                                   for n in twin_hood.neighbours]
        live_hood = await c.get_neighbourhood("acme", live.id)
        assert live_hood.on_approval == "" and len(live_hood.neighbours) == 2


async def test_usage_counts_retrievals_and_citations(served: Served) -> None:
    n = await served.index.submit(candidate())
    n = await served.index.approve("acme", n.id, reviewer="alice")
    async with AsyncQueryClient(served.target, TOKEN_ACME) as c:
        hits = await c.retrieve("acme", "who can reset a teammate's password in portal v8.2",
                                gate=False)
        assert n.id in [h.id for h in hits.hits]
        await c.retrieve("acme", "password reset workspace owner", gate=False)
        await c.report_citations("acme", hits.request_id, [n.id])
        [usage, none] = await c.get_usage("acme", [n.id, "n-never"])
        assert (usage.retrieved, usage.cited) == (2, 1)
        assert (none.retrieved, none.cited) == (0, 0)


async def test_review_flags_are_listed_and_dismissed(served: Served) -> None:
    n = await served.index.submit(candidate())
    head = await served.index.approve("acme", n.id, reviewer="alice")
    raised = datetime(2025, 3, 4, 5, 6, 7, tzinfo=UTC)
    reason = "not cited in 30 days while its topic was queried 24 times (returned 24 times)"
    await raise_flags(served.index.store, "acme", [
        StoredFlag("acme", head.lineage_id, head.id, FlagKind.UNCITED, reason, raised,
                   24, 24, 0, title=head.title),
        StoredFlag("acme", head.lineage_id, head.id, FlagKind.EXPIRING,
                   "its validity ends on 2025-03-10, in 6 days", raised)])
    uncited = ReviewFlag(lineage_id=head.lineage_id, version_id=head.id, kind="uncited",
                         reason=reason, raised_at=raised, considered=24, retrieved=24,
                         cited=0, dismissed=False, title=head.title)
    async with AsyncQueryClient(served.target, TOKEN_ACME) as c:
        flags = await c.list_review_flags("acme")
        assert [f.kind for f in flags] == ["expiring", "uncited"]
        assert flags[1] == uncited
        done = await c.dismiss_review_flag("acme", head.lineage_id, "uncited",
                                           reviewer="alice")
        assert done == (dataclasses.replace(uncited, dismissed=True),)
        assert [f.kind for f in await c.list_review_flags("acme")] == ["expiring"]
        with pytest.raises(InvalidArgument) as bad:
            await c.dismiss_review_flag("acme", head.lineage_id, "stale")
        assert bad.value.field == "kind"
        with pytest.raises(InvalidArgument) as empty:
            await c.dismiss_review_flag("acme", "", "uncited")
        assert empty.value.field == "lineage_id"

    def blocking() -> None:
        with QueryClient(served.target, TOKEN_ACME) as nf:
            assert [f.kind for f in nf.list_review_flags("acme", include_dismissed=True)] \
                == ["expiring", "uncited"]
            every = nf.dismiss_review_flag("acme", head.lineage_id)  # "": every kind
            assert [(f.kind, f.dismissed) for f in every] == [("expiring", True),
                                                              ("uncited", True)]
            assert nf.list_review_flags("acme") == ()
            with pytest.raises(NotFound) as none:
                nf.dismiss_review_flag("acme", head.lineage_id, "buried")
            assert none.value.field == "lineage_id"

    await asyncio.to_thread(blocking)


async def test_who_am_i_names_the_tokens_tenants(served: Served) -> None:
    async with AsyncQueryClient(served.target, TOKEN_GLOBEX) as c:
        me = await c.who_am_i()
        assert me.tenants == ("globex",) and not me.unrestricted and me.may_use("globex")
        assert not me.may_use("acme")
    async with AsyncQueryClient(served.target, None) as anonymous:
        with pytest.raises(Unauthenticated):
            await anonymous.who_am_i()


def test_state_filter_values_are_the_lifecycle_states() -> None:
    assert {s.name for s in State} == {"ACTIVE", "DEPRECATED", "CONTESTED"}


async def test_a_server_built_without_the_guard_saves_no_edit(
        tmp_path: Path, embedder: MiniLMEmbedder, settings: Settings) -> None:
    """query never imports the optimizer: whoever builds the server hands the guard over,
    and without one EditNugget fails (INTERNAL) instead of saving an unchecked edit."""
    from nuggetflow_client import ClientError

    index = NuggetIndex(SQLiteStore(tmp_path / "bare.db"), embedder, settings)
    await index.start()
    # (no tokens: an explicitly insecure local service, as `serve --insecure-dev`)
    server, port = create_server(index, settings.replace(insecure_dev=True), 0,
                                 metrics=Metrics.create().query)
    await server.start()
    try:
        n = await index.submit(candidate())
        async with AsyncQueryClient(f"127.0.0.1:{port}") as c:
            with pytest.raises(ClientError) as err:
                await c.edit_nugget("acme", n.id, expected_version_id=n.id, title="Other",
                                    body=n.body, reviewer="alice")
            assert err.value.code == "INTERNAL"
        assert (await index.head("acme", n.id)).version == 1
    finally:
        await server.stop(0)
        await index.stop()
