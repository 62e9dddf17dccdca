"""The gRPC query service contract as tests, through a real channel on loopback.

Each backend's module subclasses :class:`ServiceSuite` and provides ``store`` (a started,
empty store); the suite builds the index, the data, a server with per-tenant tokens and
its own metrics registry, and a client. The same assertions run on SQLite and OpenSearch.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import grpc
import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from nuggetflow.settings import Settings
from nuggetflow.v1 import nugget_pb2 as pb
from nuggetflow.v1 import query_service_pb2 as qpb
from nuggetflow.v1 import query_service_pb2_grpc as qpb_grpc
from optimizer.guard import check_edit
from query.auth import TokenAuth
from query.embeddings import MiniLMEmbedder
from query.index import NuggetIndex
from query.interceptor import FIELD_METADATA_KEY
from query.metrics import Metrics
from query.model import Nugget, Provenance, Publication, State
from query.service import QueryServer, create_server, page_token
from query.store import IndexStore
from query.usage import FlagKind, ReviewFlag, UsagePolicy, raise_flags, review_usage
from tests.helpers import T0, days, make_nugget, make_passage
from tests.support.service import seed

TOKEN_ACME = "acme-token-0123456789abcdef"
TOKEN_GLOBEX = "globex-token-0123456789abcdef"
TOKEN_INITECH = "initech-token-0123456789abcdef"
TOKENS = {TOKEN_ACME: ["acme"], TOKEN_GLOBEX: ["globex"], TOKEN_INITECH: ["initech"]}
QUERY = "why can't my analyst reset another teammate's password"
INO_OUTCOME = {"variant": "E", "iterations": 2, "passed": True, "seed": 0}


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    """Call metadata carrying a bearer token."""
    return (("authorization", f"Bearer {token}"),)


def ts(t: datetime) -> Timestamp:
    """A protobuf Timestamp."""
    out = Timestamp()
    out.FromDatetime(t)
    return out


async def rpc_error(call: Awaitable[Any], code: grpc.StatusCode) -> grpc.aio.AioRpcError:
    """Await a call that must fail with ``code``; returns the error."""
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call
    assert err.value.code() == code, (err.value.code(), err.value.details())
    return err.value


def field_of(err: grpc.aio.AioRpcError) -> str | None:
    """The field named in the trailing metadata of an error."""
    for key, value in err.trailing_metadata() or ():
        if key == FIELD_METADATA_KEY:
            return str(value)
    return None


@dataclass
class Service:
    """A running server, its client stub and what the tests need to look at."""

    server: QueryServer
    channel: grpc.aio.Channel
    stub: Any
    metrics: Metrics
    index: NuggetIndex
    ids: dict[str, str] = field(default_factory=dict)

    async def retrieve(self, token: str = TOKEN_ACME, **kw: Any) -> qpb.RetrieveResponse:
        kw.setdefault("tenant", "acme")
        kw.setdefault("query", QUERY)
        kw.setdefault("as_of", ts(T0 + days(10)))
        reply: qpb.RetrieveResponse = await self.stub.Retrieve(
            qpb.RetrieveRequest(**kw), metadata=bearer(token))
        return reply

    def sample(self, name: str, **labels: str) -> float:
        """Current value of a metric sample (0 when absent)."""
        return self.metrics.registry.get_sample_value(name, labels) or 0.0


def seed_nuggets() -> dict[str, Nugget]:
    """The suite's nuggets (ids are content hashes, so stable across runs)."""
    published = make_nugget(
        title="Password reset role restriction in portal v8.2",
        body="In portal v8.2 only the Workspace Owner role can reset another user's "
             "password; the Analyst role can view team members but not reset.",
        anchors=("which role can reset a teammate's password in v8.2",
                 "can analysts reset other users' passwords"))
    contested = make_nugget(subject="analyst export limit", predicate="max_rows", obj="10,000",
                            title="Analyst export row limit", sources=("ev-c1",),
                            body="Analysts can export at most 10,000 rows per report.",
                            state=State.CONTESTED)
    pending = make_nugget(subject="password reset audit", predicate="logged_in", obj="audit log",
                          title="Password resets are audited", sources=("ev-p1",),
                          body="Every password reset of another user is written to the "
                               "audit log.", publication=Publication.PENDING_REVIEW,
                          optimization=INO_OUTCOME)
    pending = dataclasses.replace(pending, provenance=Provenance(
        event_id="ev-p1", trigger_query="are password resets logged anywhere",
        feedback_text="Wrong: resets of other users go to the audit log.", tenant="acme"))
    future = make_nugget(subject="portal v9 password reset", predicate="allowed_role",
                         obj="Admins", scope="portal v9", start=T0 + days(100),
                         title="Password reset role in portal v9", sources=("ev-f1",),
                         body="From portal v9 any Admin can reset another user's password.")
    globex = make_nugget("globex", subject="vpn password", predicate="rotation", obj="90 days",
                         scope="global", title="VPN password rotation", sources=("ev-g1",),
                         body="Globex VPN passwords must be reset every 90 days.")
    return {"published": published, "contested": contested, "pending": pending,
            "future": future, "globex": globex}


class ServiceSuite:
    """Subclasses provide ``store``: a started, empty IndexStore."""

    @pytest.fixture
    async def service(self, store: IndexStore, embedder: MiniLMEmbedder,
                      settings: Settings) -> AsyncIterator[Service]:
        index = NuggetIndex(store, embedder, settings)
        nuggets = seed_nuggets()
        values = list(nuggets.values())
        # concurrently: on OpenSearch both writes then wait for the same index refresh
        await asyncio.gather(
            seed(index, values),
            index.ingest_passages([
                make_passage(title="Resetting your own password",
                             text="If your password reset isn't working, use Forgot password "
                                  "on the login screen."),
                make_passage(pid="doc-2#0", title="Changing the wallpaper",
                             text="Open Settings and pick Background to change the wallpaper.")]))
        refresh = getattr(store, "refresh", None)
        if refresh is not None:
            await refresh()
        metrics = Metrics.create()
        server, port = create_server(index, settings, 0, metrics=metrics.query,
                                     auth=TokenAuth(TOKENS), guard=check_edit)
        await server.start()
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        stub = qpb_grpc.QueryServiceStub(channel)  # type: ignore[no-untyped-call]
        svc = Service(server, channel, stub, metrics, index,
                      {k: v.id for k, v in nuggets.items()})
        yield svc
        await channel.close()
        await server.stop(0)

    # Retrieve ---------------------------------------------------------------------------

    async def test_retrieve_returns_governed_hits(self, service: Service) -> None:
        reply = await service.retrieve(k=5)
        assert reply.request_id
        ids = [h.id for h in reply.hits]
        assert ids[0] == service.ids["published"]
        assert service.ids["pending"] not in ids, "unreviewed nuggets are never served"
        assert service.ids["future"] not in ids, "not valid yet at as_of"
        assert service.ids["globex"] not in ids, "another tenant's nugget"
        top = reply.hits[0]
        assert top.type == qpb.Hit.NUGGET
        assert top.title == "Password reset role restriction in portal v8.2"
        assert top.nugget.anchors[0] == "which role can reset a teammate's password in v8.2"
        assert top.nugget.state == pb.ACTIVE and top.nugget.publication == pb.PUBLISHED
        assert top.validity.start.ToDatetime().year == 2024
        assert not top.validity.HasField("end")
        assert top.scores.fused > 0 and top.scores.lexical > 0 and top.scores.dense > 0
        assert not top.contested
        assert reply.suppressed >= 1, "the pending and the future nugget match the query"
        assert reply.context_block.startswith("Established facts:")
        assert f"[{service.ids['published']}]" in reply.context_block
        assert all(h.type == qpb.Hit.NUGGET for h in reply.hits), "documents off by default"

    async def test_as_of_selects_what_was_valid_then(self, service: Service) -> None:
        before = await service.retrieve(as_of=ts(T0 - days(1)), k=10)
        assert service.ids["published"] not in [h.id for h in before.hits]
        later = await service.retrieve(as_of=ts(T0 + days(200)), k=10,
                                       query="which role can reset passwords in portal v9")
        assert service.ids["future"] in [h.id for h in later.hits]

    async def test_contested_only_in_the_contested_view_and_flagged(self,
                                                                    service: Service) -> None:
        q = "how many rows can an analyst export"
        active = await service.retrieve(query=q, k=10)
        assert service.ids["contested"] not in [h.id for h in active.hits]
        both = await service.retrieve(query=q, k=10, view=qpb.VIEW_ACTIVE_PLUS_CONTESTED)
        hit = next(h for h in both.hits if h.id == service.ids["contested"])
        assert hit.contested and hit.nugget.state == pb.CONTESTED
        assert "Disputed (conflicting reports; do not state as fact):" in both.context_block
        disputed = both.context_block.split("Disputed")[1]
        assert service.ids["contested"] in disputed

    async def test_documents_compete_when_asked(self, service: Service) -> None:
        reply = await service.retrieve(query="my own password reset isn't working", k=5,
                                       include_documents=True)
        docs = [h for h in reply.hits if h.type == qpb.Hit.DOCUMENT]
        assert docs and docs[0].doc_id == "doc-1" and docs[0].id == "doc-1#0"
        assert docs[0].validity.HasField("start") and not docs[0].HasField("nugget")
        assert "Passages:" in reply.context_block

    async def test_scope_and_kind_filters(self, service: Service) -> None:
        reply = await service.retrieve(k=10, scopes=["portal v9"])
        assert service.ids["published"] not in [h.id for h in reply.hits]
        reply = await service.retrieve(k=10, scopes=["portal v8.2"])
        assert service.ids["published"] in [h.id for h in reply.hits]
        reply = await service.retrieve(k=10, kinds=[pb.INSTRUCTION])
        assert not reply.hits

    # history and review --------------------------------------------------------------

    async def test_get_nugget_and_list_versions(self, service: Service) -> None:
        got = await service.stub.GetNugget(
            qpb.GetNuggetRequest(tenant="acme", id=service.ids["pending"]),
            metadata=bearer(TOKEN_ACME))
        assert got.title == "Password resets are audited"
        assert got.publication == pb.PENDING_REVIEW
        versions = await service.stub.ListVersions(
            qpb.ListVersionsRequest(tenant="acme", id=service.ids["published"]),
            metadata=bearer(TOKEN_ACME))
        assert [v.id for v in versions.versions] == [service.ids["published"]]

    async def test_review_lifecycle_over_grpc(self, service: Service) -> None:
        q = "is a password reset of another user audited"
        pending = service.ids["pending"]

        def served(reply: qpb.RetrieveResponse) -> bool:
            return any(h.nugget.lineage_id == pending for h in reply.hits)

        assert not served(await service.retrieve(query=q))
        approved = await service.stub.Review(
            qpb.ReviewRequest(tenant="acme", id=pending, action=qpb.ReviewRequest.APPROVE,
                              reviewer="alice", reason="checked"), metadata=bearer(TOKEN_ACME))
        assert approved.publication == pb.PUBLISHED and approved.parent_id == pending
        assert "approve by alice: checked" in approved.change_reason
        assert served(await service.retrieve(query=q))
        unpublished = await service.stub.Review(
            qpb.ReviewRequest(tenant="acme", id=approved.id,
                              action=qpb.ReviewRequest.UNPUBLISH), metadata=bearer(TOKEN_ACME))
        assert unpublished.publication == pb.UNPUBLISHED
        assert not served(await service.retrieve(query=q))
        reverted = await service.stub.Review(
            qpb.ReviewRequest(tenant="acme", id=pending, action=qpb.ReviewRequest.REVERT,
                              target_version_id=approved.id), metadata=bearer(TOKEN_ACME))
        assert reverted.publication == pb.PUBLISHED and reverted.version == 4
        assert served(await service.retrieve(query=q))
        versions = await service.stub.ListVersions(
            qpb.ListVersionsRequest(tenant="acme", id=pending), metadata=bearer(TOKEN_ACME))
        assert [v.publication for v in versions.versions] == [
            pb.PENDING_REVIEW, pb.PUBLISHED, pb.UNPUBLISHED, pb.PUBLISHED]
        rejected = await rpc_error(service.stub.Review(
            qpb.ReviewRequest(tenant="acme", id=pending, action=qpb.ReviewRequest.REJECT),
            metadata=bearer(TOKEN_ACME)), grpc.StatusCode.INVALID_ARGUMENT)
        assert rejected.details().startswith("action:")

    async def test_list_versions_pages(self, service: Service) -> None:
        pending = service.ids["pending"]
        md = bearer(TOKEN_ACME)
        for i in range(3):  # 7 versions: approve, then unpublish/approve pairs
            await service.stub.Review(qpb.ReviewRequest(
                tenant="acme", id=pending, action=qpb.ReviewRequest.APPROVE), metadata=md)
            if i < 2:
                await service.stub.Review(qpb.ReviewRequest(
                    tenant="acme", id=pending, action=qpb.ReviewRequest.UNPUBLISH), metadata=md)
        everything = await service.stub.ListVersions(
            qpb.ListVersionsRequest(tenant="acme", id=pending), metadata=md)
        assert len(everything.versions) == 6 and everything.next_page_token == ""
        assert [v.version for v in everything.versions] == [1, 2, 3, 4, 5, 6]
        pages: list[list[str]] = []
        token = ""
        while True:
            reply = await service.stub.ListVersions(qpb.ListVersionsRequest(
                tenant="acme", id=everything.versions[-1].id, page_size=4, page_token=token),
                metadata=md)
            pages.append([v.id for v in reply.versions])
            token = reply.next_page_token
            if not token:
                break
        assert [len(p) for p in pages] == [4, 2]
        assert [i for p in pages for i in p] == [v.id for v in everything.versions]
        big = await service.stub.ListVersions(qpb.ListVersionsRequest(
            tenant="acme", id=pending, page_size=1_000_000), metadata=md)
        assert len(big.versions) == 6, "page sizes above the maximum are the maximum"
        first = await service.stub.ListVersions(qpb.ListVersionsRequest(
            tenant="acme", id=pending, page_size=1), metadata=md)
        bad = (("page_size", {"page_size": -1}),
               ("page_token", {"page_token": "not-a-token"}),
               ("page_token", {"page_token": first.next_page_token,
                               "id": service.ids["published"]}))  # another lineage's token
        for field_name, fields in bad:
            request = qpb.ListVersionsRequest(tenant="acme", id=pending)
            for k, v in fields.items():
                setattr(request, k, v)
            err = await rpc_error(service.stub.ListVersions(request, metadata=md),
                                  grpc.StatusCode.INVALID_ARGUMENT)
            assert field_of(err) == field_name, err.details()

    async def test_get_nugget_by_lineage_id_is_the_head_by_version_id_that_version(
            self, service: Service) -> None:
        """The id rule: hits carry the lineage id and the version; GetNugget by a lineage
        id returns the head, by another version id that version, with ``version`` that
        version number (1 included, which the lineage id alone does not name)."""
        md = bearer(TOKEN_ACME)
        pending = service.ids["pending"]

        async def get(item: str, version: int = 0) -> pb.Nugget:
            reply: pb.Nugget = await service.stub.GetNugget(
                qpb.GetNuggetRequest(tenant="acme", id=item, version=version), metadata=md)
            return reply

        first = await get(pending)
        assert (first.id, first.version, first.publication) == (pending, 1, pb.PENDING_REVIEW)
        approved = await service.stub.Review(qpb.ReviewRequest(
            tenant="acme", id=pending, action=qpb.ReviewRequest.APPROVE), metadata=md)
        reply = await service.retrieve(query="is a password reset of another user audited",
                                       include_documents=True)
        hit = next(h for h in reply.hits if h.type == qpb.Hit.NUGGET and h.id == approved.id)
        assert (hit.lineage_id, hit.version) == (pending, 2)
        assert (hit.nugget.lineage_id, hit.nugget.version) == (pending, 2)
        assert all((h.lineage_id, h.version) == ("", 0) for h in reply.hits
                   if h.type == qpb.Hit.DOCUMENT)
        assert await get(hit.lineage_id) == approved, "the lineage id names the head"
        unpublished = await service.stub.Review(qpb.ReviewRequest(
            tenant="acme", id=hit.lineage_id, action=qpb.ReviewRequest.UNPUBLISH), metadata=md)
        assert unpublished.version == 3
        assert await get(pending) == unpublished, "the head moved: so did the lineage id"
        assert await get(hit.id) == approved, "a version id names that version"
        assert await get(unpublished.id) == unpublished
        assert await get(pending, version=1) == first
        assert await get(approved.id, version=1) == first, "any id of the lineage"
        assert await get(pending, version=2) == approved
        assert await get(approved.id, version=3) == unpublished
        err = await rpc_error(get(pending, version=4), grpc.StatusCode.NOT_FOUND)
        assert field_of(err) == "version"
        err = await rpc_error(get("n-0000000000000000", version=1), grpc.StatusCode.NOT_FOUND)
        assert field_of(err) == "id"
        err = await rpc_error(get(pending, version=-1), grpc.StatusCode.INVALID_ARGUMENT)
        assert field_of(err) == "version"

    async def test_list_candidates(self, service: Service, embedder: MiniLMEmbedder) -> None:
        """What waits for review: pending heads with title, body, provenance and INO
        outcome, in id order, a page at a time; other states on request; per tenant."""
        md = bearer(TOKEN_ACME)
        queued = [make_nugget(subject=f"queue item {i}", obj=f"value {i}", sources=(f"q{i}",),
                              publication=Publication.PENDING_REVIEW) for i in range(4)]
        draft = make_nugget(subject="draft item", sources=("d1",), publication=Publication.DRAFT)
        theirs = make_nugget("globex", subject="globex item", sources=("g2",),
                             publication=Publication.PENDING_REVIEW)
        extra = [*queued, draft, theirs]
        await seed(service.index, extra)

        async def listing(token: str = TOKEN_ACME,
                          **kw: Any) -> qpb.ListCandidatesResponse:
            kw.setdefault("tenant", "acme")
            reply: qpb.ListCandidatesResponse = await service.stub.ListCandidates(
                qpb.ListCandidatesRequest(**kw), metadata=bearer(token))
            return reply

        expected = sorted([service.ids["pending"], *(n.id for n in queued)])
        everything = await listing()
        assert [c.id for c in everything.candidates] == expected
        assert everything.next_page_token == ""
        shown = next(c for c in everything.candidates if c.id == service.ids["pending"])
        assert shown.title == "Password resets are audited"
        assert shown.body.startswith("Every password reset of another user")
        assert shown.lineage_id == shown.id and shown.version == 1
        assert shown.publication == pb.PENDING_REVIEW
        assert shown.provenance.event_id == "ev-p1"
        assert shown.provenance.trigger_query == "are password resets logged anywhere"
        assert shown.provenance.feedback_text.startswith("Wrong: resets of other users")
        assert (shown.optimization.variant, shown.optimization.iterations,
                shown.optimization.passed) == ("E", 2, True)
        pages, token = [], ""
        while True:
            page = await listing(page_size=2, page_token=token)
            pages.append([c.id for c in page.candidates])
            token = page.next_page_token
            if not token:
                break
        assert pages == [expected[:2], expected[2:4], expected[4:]]
        big = await listing(page_size=1_000_000)
        assert [c.id for c in big.candidates] == expected, "above the maximum: the maximum"
        drafts = await listing(publications=[pb.DRAFT])
        assert [c.id for c in drafts.candidates] == [draft.id]
        both = await listing(publications=[pb.DRAFT, pb.PENDING_REVIEW])
        assert [c.id for c in both.candidates] == sorted([*expected, draft.id])
        published = await listing(publications=[pb.PUBLISHED])
        assert {c.id for c in published.candidates} == {
            service.ids[k] for k in ("published", "contested", "future")}
        # a token continues the listing it came from, not another one
        first = await listing(page_size=1)
        err = await rpc_error(listing(publications=[pb.DRAFT], page_token=first.next_page_token),
                              grpc.StatusCode.INVALID_ARGUMENT)
        assert field_of(err) == "page_token"
        # a review takes a nugget out of the queue; the listing goes on after it
        approved = await service.stub.Review(qpb.ReviewRequest(
            tenant="acme", id=expected[1], action=qpb.ReviewRequest.APPROVE), metadata=md)
        rest = await listing(page_size=2, page_token=first.next_page_token)
        assert [c.id for c in rest.candidates] == expected[2:4]
        after = await listing(publications=[pb.PUBLISHED])
        assert approved.id in [c.id for c in after.candidates]
        assert expected[1] not in [c.id for c in (await listing()).candidates]
        # per tenant
        mine = await listing(TOKEN_GLOBEX, tenant="globex")
        assert [c.id for c in mine.candidates] == [theirs.id]
        assert theirs.id not in [c.id for c in (await listing()).candidates]
        none = await listing(TOKEN_INITECH, tenant="initech")
        assert list(none.candidates) == [] and none.next_page_token == ""

    async def test_list_candidates_cuts_large_records_like_hits(
            self, service: Service, embedder: MiniLMEmbedder, settings: Settings) -> None:
        big = make_nugget(subject="big item", sources=("big",),
                          publication=Publication.PENDING_REVIEW, optimization=INO_OUTCOME)
        big = dataclasses.replace(big, provenance=Provenance(
            event_id="big", feedback_text="x" * 50_000, tenant="acme"))
        await service.index.store.write_nuggets([big], [embedder.embed([big.text])[0]])
        reply = await service.stub.ListCandidates(qpb.ListCandidatesRequest(tenant="acme"),
                                                  metadata=bearer(TOKEN_ACME))
        shown = next(c for c in reply.candidates if c.id == big.id)
        assert len(shown.provenance.feedback_text) == settings.max_hit_chars
        assert shown.optimization.iterations == 2, "the INO outcome is kept"
        whole = await service.stub.GetNugget(qpb.GetNuggetRequest(tenant="acme", id=big.id),
                                             metadata=bearer(TOKEN_ACME))
        assert len(whole.provenance.feedback_text) == 50_000

    async def test_review_with_a_request_id_applies_once(self, service: Service) -> None:
        pending = service.ids["pending"]
        md = bearer(TOKEN_ACME)

        def review(action: qpb.ReviewRequest.Action.ValueType, request_id: str) -> Any:
            return service.stub.Review(qpb.ReviewRequest(
                tenant="acme", id=pending, action=action, reviewer="alice",
                request_id=request_id), metadata=md)

        approved = await review(qpb.ReviewRequest.APPROVE, "req-approve-1")
        assert approved.request_id == "req-approve-1" and approved.version == 2
        again = await review(qpb.ReviewRequest.APPROVE, "req-approve-1")  # a retry
        assert again == approved, "the same version, not a second one"
        # the id names the request: reused for another action, it returns the first result
        assert (await review(qpb.ReviewRequest.UNPUBLISH, "req-approve-1")) == approved
        unpublished = await review(qpb.ReviewRequest.UNPUBLISH, "req-unpublish-1")
        assert unpublished.version == 3 and unpublished.request_id == "req-unpublish-1"
        assert (await review(qpb.ReviewRequest.APPROVE, "req-approve-1")) == approved
        versions = await service.stub.ListVersions(
            qpb.ListVersionsRequest(tenant="acme", id=pending), metadata=md)
        assert [v.request_id for v in versions.versions] == [
            "", "req-approve-1", "req-unpublish-1"]
        # a request id is per lineage and per tenant
        published = await service.stub.Review(qpb.ReviewRequest(
            tenant="acme", id=service.ids["published"], action=qpb.ReviewRequest.UNPUBLISH,
            request_id="req-approve-1"), metadata=md)
        assert published.publication == pb.UNPUBLISHED and published.version == 2

    # citations --------------------------------------------------------------------------

    async def test_citations_are_checked_and_counted(self, service: Service) -> None:
        reply = await service.retrieve(k=5, include_documents=True)
        nugget_ids = [h.id for h in reply.hits if h.type == qpb.Hit.NUGGET]
        doc_ids = [h.id for h in reply.hits if h.type == qpb.Hit.DOCUMENT]
        assert nugget_ids and doc_ids
        cited = await service.stub.ReportCitations(
            qpb.ReportCitationsRequest(tenant="acme", request_id=reply.request_id,
                                       cited_ids=[nugget_ids[0], doc_ids[0]]),
            metadata=bearer(TOKEN_ACME))
        assert cited.accepted == 2 and cited.retrieved == len(reply.hits)
        again = await service.stub.ReportCitations(
            qpb.ReportCitationsRequest(tenant="acme", request_id=reply.request_id,
                                       cited_ids=[nugget_ids[0]]), metadata=bearer(TOKEN_ACME))
        assert again.accepted == 0, "a repeated report counts once"
        m = "nuggetflow_query_"
        assert service.sample(m + "retrieved_items_total", tenant="acme",
                              type="nugget") == len(nugget_ids)
        assert service.sample(m + "cited_items_total", tenant="acme", type="nugget") == 1
        assert service.sample(m + "cited_items_total", tenant="acme", type="document") == 1
        assert service.sample(m + "citation_reports_total", tenant="acme") == 2
        assert service.sample(m + "retrieve_requests_total", tenant="acme") == 1
        assert service.sample(m + "retrieve_requests_with_nuggets_total", tenant="acme") == 1

    async def test_use_is_counted_in_the_store_and_an_uncited_nugget_goes_to_review(
            self, service: Service, settings: Settings) -> None:
        """Retrieve and ReportCitations traffic: the counts reach the store (they outlive
        the server that gathered them) and the nugget whose topic is queried but that is
        never cited is flagged for review with the reason; the cited one is not."""
        published, contested = service.ids["published"], service.ids["contested"]
        md = bearer(TOKEN_ACME)
        for _ in range(3):
            reply = await service.retrieve(k=5)
            assert reply.hits[0].id == published
            await service.stub.ReportCitations(qpb.ReportCitationsRequest(
                tenant="acme", request_id=reply.request_id, cited_ids=[published]),
                metadata=md)
            reply = await service.retrieve(query="how many rows can an analyst export", k=5,
                                           view=qpb.VIEW_ACTIVE_PLUS_CONTESTED)
            assert contested in [h.id for h in reply.hits]  # retrieved, never cited
        before = await service.stub.GetUsage(qpb.GetUsageRequest(
            tenant="acme", ids=[published, contested]), metadata=md)
        assert (before.usage[0].retrieved, before.usage[0].cited) == (3, 3), \
            "counted before it is stored"
        assert await service.server.servicer.usage.flush(service.index.store) > 0
        # a new server on the same store (a restart): nothing gathered in memory
        server, port = create_server(service.index, settings, 0, metrics=Metrics.create().query,
                                     auth=TokenAuth(TOKENS), guard=check_edit)
        await server.start()
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                stub = qpb_grpc.QueryServiceStub(channel)  # type: ignore[no-untyped-call]
                after = await stub.GetUsage(qpb.GetUsageRequest(
                    tenant="acme", ids=[published, contested, "never"]), metadata=md)
        finally:
            await server.stop(0)
        assert [(u.retrieved, u.cited) for u in after.usage] == \
            [(u.retrieved, u.cited) for u in before.usage] + [(0, 0)]
        assert after.usage[1].retrieved == 3 and after.usage[1].cited == 0
        policy = UsagePolicy(window_days=7, min_topic_queries=3, min_retrievals=100)
        flags = await review_usage(service.index.store, "acme", policy)
        assert [(f.lineage_id, f.kind) for f in flags] == [(contested, FlagKind.UNCITED)]
        assert flags[0].reason.startswith("not cited in 7 days while its topic was queried")
        assert flags[0].title == "Analyst export row limit"
        assert await service.index.store.review_flags("acme") == flags

    async def test_review_flags_are_listed_as_stored_and_dismissed(
            self, service: Service) -> None:
        """ListReviewFlags reads the stored flags (the usage review's and the re-probe's;
        nothing is judged again: the open-ended nugget's `expiring` flag is listed as it
        was stored), open ones unless include_dismissed; DismissReviewFlag marks one kind
        or every kind of a lineage, NOT_FOUND when there is no such flag."""
        published, contested = service.ids["published"], service.ids["contested"]
        globex = service.ids["globex"]
        store, md = service.index.store, bearer(TOKEN_ACME)
        raised = datetime(2025, 3, 4, 5, 6, 7, tzinfo=UTC)
        uncited = ReviewFlag("acme", published, published, FlagKind.UNCITED,
                             "not cited in 30 days while its topic was queried 24 times "
                             "(returned 24 times)", raised, 24, 24, 0,
                             title="Password reset role restriction in portal v8.2")
        await raise_flags(store, "acme", [
            uncited,
            ReviewFlag("acme", published, published, FlagKind.EXPIRING,
                       "its validity ends on 2025-03-10, in 6 days", raised),
            ReviewFlag("acme", contested, contested, FlagKind.BURIED,
                       "2 of 3 probes fail since doc-2 changed", raised,
                       title="Analyst export row limit")])
        await raise_flags(store, "globex", [ReviewFlag(
            "globex", globex, globex, FlagKind.REDUNDANT, "doc-9 now states it", raised)])
        everything = sorted([(published, "uncited"), (published, "expiring"),
                             (contested, "buried")])

        async def listed(include_dismissed: bool = False) -> list[tuple[str, str, bool]]:
            reply = await service.stub.ListReviewFlags(qpb.ListReviewFlagsRequest(
                tenant="acme", include_dismissed=include_dismissed), metadata=md)
            return [(f.lineage_id, f.kind, f.dismissed) for f in reply.flags]

        reply = await service.stub.ListReviewFlags(qpb.ListReviewFlagsRequest(tenant="acme"),
                                                   metadata=md)
        assert [(f.lineage_id, f.kind) for f in reply.flags] == everything, \
            "the tenant's own flags only, by lineage id then kind"
        [wire] = [f for f in reply.flags if f.kind == "uncited"]
        assert (wire.version_id, wire.reason, wire.title) == (
            published, uncited.reason, uncited.title)
        assert (wire.considered, wire.retrieved, wire.cited, wire.dismissed) == (
            24, 24, 0, False)
        assert wire.raised_at.ToDatetime(tzinfo=UTC) == raised

        done = await service.stub.DismissReviewFlag(qpb.DismissReviewFlagRequest(
            tenant="acme", lineage_id=published, kind="uncited", reviewer="alice"),
            metadata=md)
        assert [(f.lineage_id, f.kind, f.dismissed) for f in done.flags] == [
            (published, "uncited", True)]
        assert await listed() == [(lin, k, False) for lin, k in everything
                                  if (lin, k) != (published, "uncited")]
        assert await listed(include_dismissed=True) == [
            (lin, k, (lin, k) == (published, "uncited")) for lin, k in everything]
        # "" dismisses every kind of the lineage; a dismissal again is no error (a retry)
        all_kinds = await service.stub.DismissReviewFlag(qpb.DismissReviewFlagRequest(
            tenant="acme", lineage_id=published), metadata=md)
        assert sorted(f.kind for f in all_kinds.flags) == ["expiring", "uncited"]
        assert all(f.dismissed for f in all_kinds.flags)
        assert await listed() == [(contested, "buried", False)]
        assert {(f.lineage_id, f.kind.value) for f in await store.review_flags("acme")
                if f.dismissed} == {(published, "uncited"), (published, "expiring")}, \
            "stored: the usage review keeps the dismissal while the version is the same"
        # no such flag on the lineage, or no flag at all: NOT_FOUND, field lineage_id
        for lineage, kind in ((contested, "expiring"), ("n-0000000000000000", "")):
            err = await rpc_error(service.stub.DismissReviewFlag(
                qpb.DismissReviewFlagRequest(tenant="acme", lineage_id=lineage, kind=kind),
                metadata=md), grpc.StatusCode.NOT_FOUND)
            assert field_of(err) == "lineage_id" and err.details().startswith("lineage_id:")
        assert await listed() == [(contested, "buried", False)], "nothing changed"
        assert service.sample("nuggetflow_query_request_duration_seconds_count",
                              method="DismissReviewFlag", code="NOT_FOUND") == 2
        # acme's dismissals never touch another tenant's flags
        assert [(f.lineage_id, f.dismissed) for f in await store.review_flags("globex")] == [
            (globex, False)]
        globex_reply = await service.stub.ListReviewFlags(qpb.ListReviewFlagsRequest(
            tenant="globex"), metadata=bearer(TOKEN_GLOBEX))
        assert [(f.lineage_id, f.kind) for f in globex_reply.flags] == [(globex, "redundant")]

    async def test_citation_errors(self, service: Service) -> None:
        reply = await service.retrieve(k=3)
        err = await rpc_error(service.stub.ReportCitations(
            qpb.ReportCitationsRequest(tenant="acme", request_id=reply.request_id,
                                       cited_ids=[reply.hits[0].id, "n-never-retrieved"]),
            metadata=bearer(TOKEN_ACME)), grpc.StatusCode.INVALID_ARGUMENT)
        assert err.details().startswith("cited_ids:") and "n-never-retrieved" in err.details()
        assert field_of(err) == "cited_ids"
        assert service.sample("nuggetflow_query_cited_items_total", tenant="acme",
                              type="nugget") == 0, "nothing counted when an id is rejected"
        err = await rpc_error(service.stub.ReportCitations(
            qpb.ReportCitationsRequest(tenant="acme", request_id="no-such-request",
                                       cited_ids=[reply.hits[0].id]),
            metadata=bearer(TOKEN_ACME)), grpc.StatusCode.NOT_FOUND)
        assert field_of(err) == "request_id"
        # another tenant cannot report on (or probe for) acme's request ids
        await rpc_error(service.stub.ReportCitations(
            qpb.ReportCitationsRequest(tenant="globex", request_id=reply.request_id,
                                       cited_ids=[reply.hits[0].id]),
            metadata=bearer(TOKEN_GLOBEX)), grpc.StatusCode.NOT_FOUND)

    # bad input --------------------------------------------------------------------------

    BAD_REQUESTS: tuple[tuple[str, str, dict[str, Any], str], ...] = (
        ("empty query", "Retrieve", {"query": ""}, "query"),
        ("blank query", "Retrieve", {"query": "  \t "}, "query"),
        ("query too long", "Retrieve", {"query": "password " * 300}, "query"),
        ("negative k", "Retrieve", {"k": -1}, "k"),
        ("k above 1000", "Retrieve", {"k": 1001}, "k"),
        ("missing tenant", "Retrieve", {"tenant": ""}, "tenant"),
        ("bad view enum", "Retrieve", {"view": 7}, "view"),
        ("bad fusion enum", "Retrieve", {"fusion": 9}, "fusion"),
        ("unspecified kind", "Retrieve", {"kinds": [0]}, "kinds"),
        ("unknown kind", "Retrieve", {"kinds": [1, 42]}, "kinds"),
        ("empty scope", "Retrieve", {"scopes": ["portal v8.2", ""]}, "scopes"),
        ("as_of out of range", "Retrieve", {"as_of": Timestamp(seconds=253402300800)},
         "as_of"),
        ("GetNugget without id", "GetNugget", {"id": ""}, "id"),
        ("GetNugget negative version", "GetNugget", {"id": "PUBLISHED", "version": -1},
         "version"),
        ("ListCandidates without tenant", "ListCandidates", {"tenant": ""}, "tenant"),
        ("ListCandidates negative page size", "ListCandidates", {"page_size": -1},
         "page_size"),
        ("ListCandidates unspecified publication", "ListCandidates", {"publications": [0]},
         "publications"),
        ("ListCandidates unknown publication", "ListCandidates", {"publications": [2, 9]},
         "publications"),
        ("ListCandidates bad page token", "ListCandidates", {"page_token": "not-a-token"},
         "page_token"),
        ("ListCandidates with a ListVersions token", "ListCandidates",
         {"page_token": page_token("n-1")}, "page_token"),
        ("GetNugget without tenant", "GetNugget", {"tenant": "", "id": "n-1"}, "tenant"),
        ("ListVersions without id", "ListVersions", {"id": " "}, "id"),
        ("unspecified review action", "Review", {"id": "n-1"}, "action"),
        ("unknown review action", "Review", {"id": "n-1", "action": 9}, "action"),
        ("review without id", "Review", {"action": 1}, "id"),
        ("revert without target", "Review", {"id": "PUBLISHED", "action": 4},
         "target_version_id"),
        ("revert to a foreign version", "Review",
         {"id": "PUBLISHED", "action": 4, "target_version_id": "n-elsewhere"},
         "target_version_id"),
        ("approve a published nugget", "Review", {"id": "PUBLISHED", "action": 1}, "action"),
        ("citations without request id", "ReportCitations", {"cited_ids": ["x"]},
         "request_id"),
        ("empty cited id", "ReportCitations", {"request_id": "r", "cited_ids": [""]},
         "cited_ids"),
        ("dismiss without lineage id", "DismissReviewFlag",
         {"lineage_id": " ", "kind": "uncited"}, "lineage_id"),
        ("dismiss an unknown flag kind", "DismissReviewFlag",
         {"lineage_id": "n-1", "kind": "stale"}, "kind"),
        ("dismiss an enum name as kind", "DismissReviewFlag",
         {"lineage_id": "n-1", "kind": "UNCITED"}, "kind"),
        ("flags without tenant", "ListReviewFlags", {"tenant": ""}, "tenant"),
    )

    @pytest.mark.parametrize(("case", "method", "fields", "field_name"), BAD_REQUESTS,
                             ids=[c[0] for c in BAD_REQUESTS])
    async def test_bad_input_is_invalid_argument_naming_the_field(
            self, service: Service, case: str, method: str, fields: dict[str, Any],
            field_name: str) -> None:
        request_types = {"Retrieve": qpb.RetrieveRequest, "GetNugget": qpb.GetNuggetRequest,
                         "ListVersions": qpb.ListVersionsRequest, "Review": qpb.ReviewRequest,
                         "ReportCitations": qpb.ReportCitationsRequest,
                         "ListCandidates": qpb.ListCandidatesRequest,
                         "ListReviewFlags": qpb.ListReviewFlagsRequest,
                         "DismissReviewFlag": qpb.DismissReviewFlagRequest}
        values: dict[str, Any] = {"tenant": "acme"}
        if method == "Retrieve":
            values["query"] = QUERY
        values.update(fields)
        if values.get("id") == "PUBLISHED":
            values["id"] = service.ids["published"]
        request = request_types[method](**values)
        err = await rpc_error(getattr(service.stub, method)(request, metadata=bearer(TOKEN_ACME)),
                              grpc.StatusCode.INVALID_ARGUMENT)
        assert err.details().startswith(f"{field_name}:"), err.details()
        assert field_of(err) == field_name
        assert service.sample("nuggetflow_query_request_duration_seconds_count",
                              method=method, code="INVALID_ARGUMENT") == 1

    # sizes: every string and repeated field is capped, and errors never echo the value --

    OVERSIZED: tuple[tuple[str, str, dict[str, Any], str], ...] = (
        ("tenant", "Retrieve", {"tenant": "a" * 201}, "tenant"),
        ("query", "Retrieve", {"query": "q" * 2001}, "query"),
        ("a scope", "Retrieve", {"scopes": ["portal v8.2", "s" * 201]}, "scopes"),
        ("too many scopes", "Retrieve", {"scopes": ["s"] * 1001}, "scopes"),
        ("too many kinds", "Retrieve", {"kinds": [1] * 1001}, "kinds"),
        ("GetNugget id", "GetNugget", {"id": "n" * 201}, "id"),
        ("ListVersions id", "ListVersions", {"id": "n" * 201}, "id"),
        ("page token", "ListVersions", {"id": "n-1", "page_token": "t" * 401}, "page_token"),
        ("candidates page token", "ListCandidates", {"page_token": "t" * 401}, "page_token"),
        ("too many publications", "ListCandidates", {"publications": [2] * 1001},
         "publications"),
        ("Review id", "Review", {"id": "n" * 201, "action": 1}, "id"),
        ("reviewer", "Review", {"id": "PENDING", "action": 1, "reviewer": "r" * 201},
         "reviewer"),
        ("reason", "Review", {"id": "PENDING", "action": 1, "reason": "r" * 1001}, "reason"),
        ("target version", "Review", {"id": "PENDING", "action": 4,
                                      "target_version_id": "t" * 201}, "target_version_id"),
        ("Review request id", "Review", {"id": "PENDING", "action": 1,
                                         "request_id": "q" * 201}, "request_id"),
        ("citation request id", "ReportCitations", {"request_id": "r" * 201,
                                                    "cited_ids": ["x"]}, "request_id"),
        ("cited id", "ReportCitations", {"request_id": "r", "cited_ids": ["x", "y" * 201]},
         "cited_ids"),
        ("too many cited ids", "ReportCitations", {"request_id": "r",
                                                   "cited_ids": ["x"] * 1001}, "cited_ids"),
    )

    @pytest.mark.parametrize(("case", "method", "fields", "field_name"), OVERSIZED,
                             ids=[c[0] for c in OVERSIZED])
    async def test_oversized_fields_are_refused_without_echo(
            self, service: Service, case: str, method: str, fields: dict[str, Any],
            field_name: str, caplog: pytest.LogCaptureFixture) -> None:
        request_types = {"Retrieve": qpb.RetrieveRequest, "GetNugget": qpb.GetNuggetRequest,
                         "ListVersions": qpb.ListVersionsRequest, "Review": qpb.ReviewRequest,
                         "ReportCitations": qpb.ReportCitationsRequest,
                         "ListCandidates": qpb.ListCandidatesRequest}
        values: dict[str, Any] = {"tenant": "acme"}
        if method == "Retrieve":
            values["query"] = QUERY
        values.update(fields)
        if values.get("id") == "PENDING":
            values["id"] = service.ids["pending"]
        err = await rpc_error(getattr(service.stub, method)(request_types[method](**values),
                                                            metadata=bearer(TOKEN_ACME)),
                              grpc.StatusCode.INVALID_ARGUMENT)
        assert field_of(err) == field_name
        assert err.details().startswith(f"{field_name}:"), err.details()
        assert len(err.details()) < 80, err.details()
        assert any(f" {n} " in err.details() for n in (200, 400, 1000, 2000)), "names the limit"
        assert "rrrr" not in err.details() and "yyyy" not in err.details()
        for record in caplog.records:
            assert len(record.getMessage()) < 300
            for value in getattr(record, "fields", {}).values():
                assert len(str(value)) < 400, "log lines never carry unbounded input"
        pending = await service.stub.GetNugget(
            qpb.GetNuggetRequest(tenant="acme", id=service.ids["pending"]),
            metadata=bearer(TOKEN_ACME))
        assert pending.version == 1, "nothing was written"

    async def test_a_cited_id_of_20000_characters(self, service: Service,
                                                  caplog: pytest.LogCaptureFixture) -> None:
        reply = await service.retrieve(k=3)
        huge = "n-" + "9" * 20_000
        err = await rpc_error(service.stub.ReportCitations(
            qpb.ReportCitationsRequest(tenant="acme", request_id=reply.request_id,
                                       cited_ids=[reply.hits[0].id, huge]),
            metadata=bearer(TOKEN_ACME)), grpc.StatusCode.INVALID_ARGUMENT)
        assert err.details() == "cited_ids: value #2 is longer than 200 characters"
        assert service.sample("nuggetflow_query_cited_items_total", tenant="acme",
                              type="nugget") == 0
        assert all("9" * 300 not in r.getMessage() and
                   all("9" * 300 not in str(v) for v in getattr(r, "fields", {}).values())
                   for r in caplog.records)

    # undecodable requests ---------------------------------------------------------------

    UNDECODABLE = (
        # tenant = "acme", id = 3 bytes that are not UTF-8
        ("invalid_utf8", b"\x0a\x04acme\x12\x03\xff\xfe\xfd",
         "request: not a valid request message (a string field is not valid UTF-8)"),
        # field 1, length-delimited, with a length varint that never ends
        ("corrupt", b"\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",
         "request: not a valid request message (corrupt protobuf)"),
    )

    async def test_undecodable_requests_are_invalid_argument_after_auth(
            self, service: Service, caplog: pytest.LogCaptureFixture) -> None:
        """Raw bytes through a real channel: with a token, INVALID_ARGUMENT with a short
        fixed message (counted, logged once per kind, no payload, no traceback); without
        one, UNAUTHENTICATED: an unauthenticated caller reaches nothing."""
        methods = ("Retrieve", "GetNugget", "ListVersions", "Review", "ReportCitations")
        for method in methods:
            raw = service.channel.unary_unary(f"/nuggetflow.v1.QueryService/{method}",
                                              request_serializer=None,
                                              response_deserializer=None)
            for _kind, payload, message in self.UNDECODABLE:
                for _ in range(3):
                    err = await rpc_error(raw(payload, metadata=bearer(TOKEN_ACME)),
                                          grpc.StatusCode.INVALID_ARGUMENT)
                    assert err.details() == message
                    assert field_of(err) == "request"
                await rpc_error(raw(payload), grpc.StatusCode.UNAUTHENTICATED)
                await rpc_error(raw(payload, metadata=bearer("not-a-real-token-xyz")),
                                grpc.StatusCode.UNAUTHENTICATED)
            count = "nuggetflow_query_request_duration_seconds_count"
            assert service.sample(count, method=method, code="INVALID_ARGUMENT") == 6
            assert service.sample(count, method=method, code="UNAUTHENTICATED") == 4
        check = service.channel.unary_unary("/grpc.health.v1.Health/Check",
                                            request_serializer=None, response_deserializer=None)
        for (_kind, _, message), payload in zip(  # no token needed, same decoding
                self.UNDECODABLE, (b"\x0a\x03\xff\xfe\xfd", self.UNDECODABLE[1][1]),
                strict=True):
            err = await rpc_error(check(payload), grpc.StatusCode.INVALID_ARGUMENT)
            assert err.details() == message
        lines = [r for r in caplog.records if r.getMessage() == "undecodable request refused"]
        assert sorted(r.fields["kind"] for r in lines) == [  # type: ignore[attr-defined]
            "corrupt", "invalid_utf8"], "logged once per kind, not once per call"
        assert all(r.exc_info is None for r in caplog.records), "no tracebacks"
        assert not any("Error parsing" in r.getMessage() or "\ufffd" in r.getMessage()
                       for r in caplog.records)
        assert (await service.retrieve()).hits, "the service is unaffected"

    async def test_undecodable_list_candidates_requests(self, service: Service) -> None:
        raw = service.channel.unary_unary("/nuggetflow.v1.QueryService/ListCandidates",
                                          request_serializer=None, response_deserializer=None)
        for payload, message in (
                # tenant "acme", page_token = 3 bytes that are not UTF-8
                (b"\x0a\x04acme\x22\x03\xff\xfe\xfd",
                 "request: not a valid request message (a string field is not valid UTF-8)"),
                (self.UNDECODABLE[1][1],
                 "request: not a valid request message (corrupt protobuf)")):
            err = await rpc_error(raw(payload, metadata=bearer(TOKEN_ACME)),
                                  grpc.StatusCode.INVALID_ARGUMENT)
            assert err.details() == message and field_of(err) == "request"
            await rpc_error(raw(payload), grpc.StatusCode.UNAUTHENTICATED)

    async def test_not_found(self, service: Service) -> None:
        err = await rpc_error(service.stub.GetNugget(
            qpb.GetNuggetRequest(tenant="acme", id="n-0000000000000000"),
            metadata=bearer(TOKEN_ACME)), grpc.StatusCode.NOT_FOUND)
        assert field_of(err) == "id"
        await rpc_error(service.stub.ListVersions(
            qpb.ListVersionsRequest(tenant="acme", id="n-0000000000000000"),
            metadata=bearer(TOKEN_ACME)), grpc.StatusCode.NOT_FOUND)
        err = await rpc_error(service.retrieve(TOKEN_INITECH, tenant="initech"),
                              grpc.StatusCode.NOT_FOUND)
        assert "unknown tenant" in err.details()

    # access -----------------------------------------------------------------------------

    async def test_missing_or_unknown_token_is_unauthenticated(self, service: Service) -> None:
        request = qpb.RetrieveRequest(tenant="acme", query=QUERY)
        await rpc_error(service.stub.Retrieve(request), grpc.StatusCode.UNAUTHENTICATED)
        await rpc_error(service.stub.Retrieve(request, metadata=bearer("not-a-real-token-xyz")),
                        grpc.StatusCode.UNAUTHENTICATED)
        await rpc_error(service.stub.Retrieve(
            request, metadata=(("authorization", f"Basic {TOKEN_ACME}"),)),
            grpc.StatusCode.UNAUTHENTICATED)
        assert service.sample("nuggetflow_query_request_duration_seconds_count",
                              method="Retrieve", code="UNAUTHENTICATED") == 3

    async def test_a_token_for_tenant_a_never_reads_tenant_b(self, service: Service) -> None:
        globex_id = service.ids["globex"]
        md = bearer(TOKEN_ACME)
        calls = [
            service.stub.Retrieve(qpb.RetrieveRequest(tenant="globex", query="vpn password"),
                                  metadata=md),
            service.stub.GetNugget(qpb.GetNuggetRequest(tenant="globex", id=globex_id),
                                   metadata=md),
            service.stub.ListVersions(qpb.ListVersionsRequest(tenant="globex", id=globex_id),
                                      metadata=md),
            service.stub.Review(qpb.ReviewRequest(tenant="globex", id=globex_id,
                                                  action=qpb.ReviewRequest.UNPUBLISH),
                                metadata=md),
            service.stub.ReportCitations(qpb.ReportCitationsRequest(
                tenant="globex", request_id="r", cited_ids=[globex_id]), metadata=md),
            service.stub.ListCandidates(qpb.ListCandidatesRequest(
                tenant="globex", publications=[pb.PUBLISHED]), metadata=md),
            service.stub.EditNugget(qpb.EditNuggetRequest(
                tenant="globex", id=globex_id, expected_version_id=globex_id, title="t",
                body="b"), metadata=md),
            service.stub.GetNeighbourhood(qpb.GetNeighbourhoodRequest(
                tenant="globex", id=globex_id), metadata=md),
            service.stub.GetUsage(qpb.GetUsageRequest(tenant="globex", ids=[globex_id]),
                                  metadata=md),
            service.stub.ListReviewFlags(qpb.ListReviewFlagsRequest(tenant="globex"),
                                         metadata=md),
            service.stub.DismissReviewFlag(qpb.DismissReviewFlagRequest(
                tenant="globex", lineage_id=globex_id), metadata=md),
        ]
        for call in calls:
            err = await rpc_error(call, grpc.StatusCode.PERMISSION_DENIED)
            assert "globex" in err.details()
        # naming its own tenant does not reach the other tenant's records either
        await rpc_error(service.stub.GetNugget(qpb.GetNuggetRequest(tenant="acme", id=globex_id),
                                               metadata=md), grpc.StatusCode.NOT_FOUND)
        # globex's own token works
        got = await service.stub.GetNugget(qpb.GetNuggetRequest(tenant="globex", id=globex_id),
                                           metadata=bearer(TOKEN_GLOBEX))
        assert got.title == "VPN password rotation"
        listed = await service.stub.ListCandidates(qpb.ListCandidatesRequest(
            tenant="globex", publications=[pb.PUBLISHED]), metadata=bearer(TOKEN_GLOBEX))
        assert [c.id for c in listed.candidates] == [globex_id]
        history = await service.stub.ListVersions(
            qpb.ListVersionsRequest(tenant="globex", id=globex_id), metadata=bearer(TOKEN_GLOBEX))
        assert [v.publication for v in history.versions] == [pb.PUBLISHED], "review refused"

    # probe sessions ----------------------------------------------------------------------

    CANDIDATE = qpb.ProbeCandidate(
        id="candidate:ev-probe", title="Team leads cannot reset passwords in portal v8.2",
        body="In portal v8.2 a team lead cannot reset another user's password; only the "
             "Workspace Owner can.",
        anchors=["my team lead cannot reset a teammate's password"])

    async def open_probe(self, service: Service, tenant: str = "acme",
                         token: str = TOKEN_ACME, **kw: Any) -> qpb.ProbeSession:
        kw.setdefault("candidates", [self.CANDIDATE])
        kw.setdefault("as_of", ts(T0 + days(10)))
        reply: qpb.ProbeSession = await service.stub.OpenProbeSession(
            qpb.OpenProbeSessionRequest(tenant=tenant, **kw), metadata=bearer(token))
        return reply

    async def test_a_probe_session_overlays_its_candidates_for_its_calls_only(
            self, service: Service) -> None:
        m = "nuggetflow_query_"
        session = await self.open_probe(service)
        assert session.session_id and list(session.candidate_ids) == ["candidate:ev-probe"]
        assert service.sample(m + "probe_sessions") == 1
        query = "why can't my team lead reset a teammate's password"
        probe = await service.retrieve(query=query, k=5, probe_session=session.session_id)
        ids = [h.id for h in probe.hits]
        assert "candidate:ev-probe" in ids, ids
        hit = probe.hits[ids.index("candidate:ev-probe")]
        assert hit.type == qpb.Hit.NUGGET and hit.title == self.CANDIDATE.title
        assert "[candidate:ev-probe]" in probe.context_block
        normal = await service.retrieve(query=query, k=5)
        assert "candidate:ev-probe" not in [h.id for h in normal.hits], "normal traffic"
        # Citations of a probe call go to the session, not the ledger or the counters.
        err = await rpc_error(service.stub.ReportCitations(
            qpb.ReportCitationsRequest(tenant="acme", request_id=probe.request_id,
                                       cited_ids=["candidate:ev-probe"]),
            metadata=bearer(TOKEN_ACME)), grpc.StatusCode.NOT_FOUND)
        assert field_of(err) == "request_id"
        cited = await service.stub.ReportCitations(
            qpb.ReportCitationsRequest(tenant="acme", request_id=probe.request_id,
                                       cited_ids=["candidate:ev-probe"],
                                       probe_session=session.session_id),
            metadata=bearer(TOKEN_ACME))
        assert cited.accepted == 1 and cited.retrieved == len(probe.hits)
        record = await service.stub.GetProbeSession(
            qpb.GetProbeSessionRequest(tenant="acme", session_id=session.session_id),
            metadata=bearer(TOKEN_ACME))
        [retrieval] = record.retrievals
        assert retrieval.number == 1 and retrieval.request_id == probe.request_id
        assert retrieval.query == query and retrieval.gated == probe.gated
        assert list(retrieval.cited_ids) == ["candidate:ev-probe"]
        assert retrieval.citations_reported
        items = {i.id: i for i in retrieval.items}
        assert items["candidate:ev-probe"].hit and items["candidate:ev-probe"].reranked
        assert "my team lead cannot reset" in items["candidate:ev-probe"].text  # anchors
        assert [i.id for i in retrieval.items if i.hit] == ids
        later = await service.stub.GetProbeSession(
            qpb.GetProbeSessionRequest(tenant="acme", session_id=session.session_id,
                                       after=1), metadata=bearer(TOKEN_ACME))
        assert not later.retrievals
        # Only the normal call shows in the production series.
        assert service.sample(m + "retrieve_requests_total", tenant="acme") == 1
        assert service.sample(m + "retrieved_items_total", tenant="acme",
                              type="nugget") == sum(h.type == qpb.Hit.NUGGET
                                                    for h in normal.hits)
        assert service.sample(m + "cited_items_total", tenant="acme", type="nugget") == 0
        assert service.sample(m + "citation_reports_total", tenant="acme") == 0
        assert service.sample(m + "citation_ledger_entries") == 1
        name = m + "request_duration_seconds_count"
        assert service.sample(name, method="Retrieve", code="OK") == 1
        assert service.sample(name, method="Retrieve.probe", code="OK") == 1
        assert service.sample(name, method="ReportCitations.probe", code="OK") == 1
        # Nothing was written: the candidate is not in the index.
        await rpc_error(service.stub.GetNugget(
            qpb.GetNuggetRequest(tenant="acme", id="candidate:ev-probe"),
            metadata=bearer(TOKEN_ACME)), grpc.StatusCode.NOT_FOUND)
        closed = await service.stub.CloseProbeSession(
            qpb.CloseProbeSessionRequest(tenant="acme", session_id=session.session_id),
            metadata=bearer(TOKEN_ACME))
        assert closed.closed and service.sample(m + "probe_sessions") == 0
        err = await rpc_error(service.retrieve(query=query, probe_session=session.session_id),
                              grpc.StatusCode.NOT_FOUND)
        assert field_of(err) == "probe_session"
        again = await service.stub.CloseProbeSession(
            qpb.CloseProbeSessionRequest(tenant="acme", session_id=session.session_id),
            metadata=bearer(TOKEN_ACME))
        assert not again.closed

    async def test_a_probe_scores_like_the_built_in_harness(
            self, service: Service, embedder: MiniLMEmbedder, settings: Settings) -> None:
        """The session's overlay is the built-in harness's code path: same fused list,
        same gate probabilities, same hits."""
        from optimizer.accounting import Meter
        from optimizer.harness import BuiltinHarness, make_candidate
        from optimizer.local import local_roles
        from optimizer.types import NuggetDraft

        c = self.CANDIDATE
        session = await self.open_probe(service)
        query = "team lead password reset not allowed"
        probe = await service.retrieve(query=query, k=3, probe_session=session.session_id,
                                       include_documents=True)
        record = await service.stub.GetProbeSession(
            qpb.GetProbeSessionRequest(tenant="acme", session_id=session.session_id),
            metadata=bearer(TOKEN_ACME))
        harness = BuiltinHarness(service.index.store, embedder, local_roles().generator,
                                 settings, as_of=T0 + days(10),
                                 gate=service.server.servicer.index.retriever.gate)
        try:
            cand = make_candidate(embedder, c.id, NuggetDraft(c.title, c.body,
                                                              tuple(c.anchors)))
            trace = await harness.run("acme", query, cand, Meter())
        finally:
            await harness.close()
        items = record.retrievals[0].items
        assert [i.id for i in items] == [i for i, _ in trace.retrieved]
        assert [round(i.fused, 6) for i in items] == [round(f, 6) for _, f in trace.retrieved]
        assert {i.id: round(i.relevance, 6) for i in items if i.reranked} == {
            k: round(v, 6) for k, v in trace.rerank.items()}
        assert [h.id for h in probe.hits] == trace.reached

    async def test_probe_session_of_another_tenant_or_expired(self, service: Service) -> None:
        globex = await self.open_probe(service, "globex", TOKEN_GLOBEX)
        err = await rpc_error(service.retrieve(probe_session=globex.session_id),
                              grpc.StatusCode.PERMISSION_DENIED)
        assert field_of(err) == "probe_session"
        for call in (service.stub.GetProbeSession(qpb.GetProbeSessionRequest(
                         tenant="acme", session_id=globex.session_id),
                         metadata=bearer(TOKEN_ACME)),
                     service.stub.CloseProbeSession(qpb.CloseProbeSessionRequest(
                         tenant="acme", session_id=globex.session_id),
                         metadata=bearer(TOKEN_ACME))):
            await rpc_error(call, grpc.StatusCode.PERMISSION_DENIED)
        # the session's own tenant, with a token that is not its own
        await rpc_error(service.retrieve(tenant="globex", probe_session=globex.session_id),
                        grpc.StatusCode.PERMISSION_DENIED)
        err = await rpc_error(service.retrieve(probe_session="ps-never-opened"),
                              grpc.StatusCode.NOT_FOUND)
        assert field_of(err) == "probe_session"
        acme = await self.open_probe(service, ttl_seconds=30)
        assert acme.ttl_seconds == 30
        await service.retrieve(probe_session=acme.session_id)  # in use: alive
        probes = service.server.servicer.probes
        real = probes.clock
        probes.clock = lambda: real() + 301  # past both sessions' expiry
        try:
            err = await rpc_error(service.retrieve(probe_session=acme.session_id),
                                  grpc.StatusCode.NOT_FOUND)
            assert field_of(err) == "probe_session" and "expired" in err.details()
            await rpc_error(service.stub.ReportCitations(
                qpb.ReportCitationsRequest(tenant="acme", request_id="r", cited_ids=["x"],
                                           probe_session=acme.session_id),
                metadata=bearer(TOKEN_ACME)), grpc.StatusCode.NOT_FOUND)
        finally:
            probes.clock = real
        assert len(probes) == 0, "expired sessions are dropped (globex's too)"

    async def test_probe_session_requests_are_checked(self, service: Service) -> None:
        async def bad(field_name: str, **kw: Any) -> None:
            err = await rpc_error(self.open_probe(service, **kw),
                                  grpc.StatusCode.INVALID_ARGUMENT)
            assert field_of(err) == field_name, err.details()

        await bad("candidates", candidates=[self.CANDIDATE] * 17)
        await bad("candidates.id", candidates=[self.CANDIDATE, self.CANDIDATE])
        await bad("candidates.body", candidates=[qpb.ProbeCandidate(id="x")])
        await bad("ttl_seconds", ttl_seconds=100_000)
        await bad("candidates.body", candidates=[qpb.ProbeCandidate(id="x", body="b" * 2001)])
        session = await self.open_probe(service, candidates=[
            qpb.ProbeCandidate(title="first"), qpb.ProbeCandidate(body="second")])
        assert list(session.candidate_ids) == ["probe:1", "probe:2"]
        err = await rpc_error(service.retrieve(probe_session=session.session_id,
                                               as_of=ts(T0 + days(11))),
                              grpc.StatusCode.INVALID_ARGUMENT)
        assert field_of(err) == "as_of"
        reply = await service.retrieve(probe_session=session.session_id, k=3)
        err = await rpc_error(service.stub.ReportCitations(
            qpb.ReportCitationsRequest(tenant="acme", request_id=reply.request_id,
                                       cited_ids=["n-not-a-hit"],
                                       probe_session=session.session_id),
            metadata=bearer(TOKEN_ACME)), grpc.StatusCode.INVALID_ARGUMENT)
        assert field_of(err) == "cited_ids"
        limit = service.index.settings.probe_sessions_per_tenant
        for _ in range(limit - 1):
            await self.open_probe(service)
        err = await rpc_error(self.open_probe(service), grpc.StatusCode.RESOURCE_EXHAUSTED)
        assert "NUGGETFLOW_PROBE_SESSIONS_PER_TENANT" in err.details()
        await self.open_probe(service, "globex", TOKEN_GLOBEX)  # per tenant
    # the review console's calls ---------------------------------------------------------

    async def test_edit_listing_neighbourhood_and_who_am_i(self, service: Service) -> None:
        md = bearer(TOKEN_ACME)
        pending = service.ids["pending"]
        head = await service.stub.GetNugget(qpb.GetNuggetRequest(tenant="acme", id=pending),
                                            metadata=md)
        edit = qpb.EditNuggetRequest(
            tenant="acme", id=pending, expected_version_id=pending, title=head.title,
            body=head.body + " It is kept for 400 days.", reviewer="alice", dry_run=True)
        refused = await service.stub.EditNugget(edit, metadata=md)
        assert not refused.saved and not refused.guard.ok
        assert any("'400'" in v for v in refused.guard.violations)
        edit.body, edit.title, edit.dry_run = head.body, "Are password resets audited?", False
        saved = await service.stub.EditNugget(edit, metadata=md)
        assert saved.saved and saved.nugget.version == 2 and list(saved.changed_fields) == [
            "title"]
        err = await rpc_error(service.stub.EditNugget(edit, metadata=md),
                              grpc.StatusCode.ABORTED)
        assert field_of(err) == "expected_version_id" and saved.nugget.id in err.details()
        listed = await service.stub.ListCandidates(qpb.ListCandidatesRequest(
            tenant="acme", publications=[pb.PUBLISHED, pb.PENDING_REVIEW],
            states=[pb.CONTESTED], order=qpb.LIST_ORDER_NEWEST_FIRST), metadata=md)
        assert [c.id for c in listed.candidates] == [service.ids["contested"]]
        assert listed.total_size == 1
        words = await service.stub.ListCandidates(qpb.ListCandidatesRequest(
            tenant="acme", query="AUDITED"), metadata=md)
        assert [c.lineage_id for c in words.candidates] == [pending]
        hood = await service.stub.GetNeighbourhood(qpb.GetNeighbourhoodRequest(
            tenant="acme", id=pending), metadata=md)
        assert hood.nugget.id == saved.nugget.id and hood.on_approval == "published"
        me = await service.stub.WhoAmI(qpb.WhoAmIRequest(), metadata=md)
        assert list(me.tenants) == ["acme"] and not me.unrestricted

    # metrics, health, reflection, limits -------------------------------------------------

    async def test_latency_is_measured_by_method_and_code(self, service: Service) -> None:
        await service.retrieve()
        await service.retrieve()
        name = "nuggetflow_query_request_duration_seconds"
        assert service.sample(name + "_count", method="Retrieve", code="OK") == 2
        assert 0 < service.sample(name + "_sum", method="Retrieve", code="OK") < 10
        assert service.sample(name + "_bucket", method="Retrieve", code="OK", le="+Inf") == 2

    async def test_repeated_queries_reuse_the_query_vector(self, service: Service) -> None:
        name = "nuggetflow_query_query_vector_lookups_total"
        hits, misses = service.sample(name, result="hit"), service.sample(name, result="miss")
        query = "which role resets passwords for analysts (cache check)"
        first = await service.retrieve(query=query)
        second = await service.retrieve(query=query)
        assert [h.id for h in first.hits] == [h.id for h in second.hits]
        assert service.sample(name, result="miss") == misses + 1
        assert service.sample(name, result="hit") == hits + 1

    async def test_health_and_reflection(self, service: Service) -> None:
        from grpc_health.v1 import health_pb2, health_pb2_grpc
        from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

        health = health_pb2_grpc.HealthStub(service.channel)
        for name in ("", "nuggetflow.v1.QueryService"):
            reply = await health.Check(health_pb2.HealthCheckRequest(service=name))
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
        refl = reflection_pb2_grpc.ServerReflectionStub(service.channel)
        names: list[str] = []
        async for reply in refl.ServerReflectionInfo(
                iter([reflection_pb2.ServerReflectionRequest(list_services="")])):
            names += [s.name for s in reply.list_services_response.service]
        assert "nuggetflow.v1.QueryService" in names and "grpc.health.v1.Health" in names

    async def test_oversized_request_is_refused(self, service: Service) -> None:
        huge = ["x" * 1000] * 2000  # ~2 MB, over the 1 MiB default limit
        await rpc_error(service.stub.ReportCitations(
            qpb.ReportCitationsRequest(tenant="acme", request_id="r", cited_ids=huge),
            metadata=bearer(TOKEN_ACME)), grpc.StatusCode.RESOURCE_EXHAUSTED)
