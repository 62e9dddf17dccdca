"""nuggetflow-client's QueryClient and AsyncQueryClient against the real query service
(SQLite store, seeded nuggets, per-tenant tokens) through a loopback channel.

The blocking client runs on a worker thread (``asyncio.to_thread``) so the in-process
grpc.aio server keeps serving on the test's event loop.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path

import pytest

from nuggetflow.settings import Settings
from nuggetflow_client import (
    AsyncQueryClient,
    ClientError,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    QueryClient,
    Unauthenticated,
    Unavailable,
)
from nuggetflow_client.v1 import nugget_pb2 as pb
from query.auth import TokenAuth
from query.embeddings import MiniLMEmbedder
from query.service import QueryServer
from tests.conformance.service_suite import (
    QUERY,
    TOKEN_ACME,
    TOKEN_GLOBEX,
    TOKENS,
    seed_nuggets,
)
from tests.helpers import T0, days
from tests.support.service import seeded_service

AS_OF = T0 + days(10)


@dataclass
class Served:
    server: QueryServer
    target: str
    ids: dict[str, str]


@pytest.fixture
async def served(tmp_path: Path, embedder: MiniLMEmbedder,
                 settings: Settings) -> AsyncIterator[Served]:
    nuggets = seed_nuggets()
    async with seeded_service(tmp_path / "client.db", embedder, settings, nuggets.values(),
                              auth=TokenAuth(TOKENS)) as s:
        yield Served(s.server, s.target, {k: v.id for k, v in nuggets.items()})


async def test_retrieve_and_report_citations(served: Served) -> None:
    async with AsyncQueryClient(served.target, TOKEN_ACME) as nf:
        found = await nf.retrieve("acme", QUERY, k=5, as_of=AS_OF)
        assert found.request_id and found.hits
        top = found.hits[0]
        assert top.id == served.ids["published"] and top.type == "nugget"
        assert top.lineage_id == top.id and top.version == 1
        assert top.title == "Password reset role restriction in portal v8.2"
        assert top.valid_from is not None and top.valid_from == T0
        assert top.valid_from.tzinfo is UTC and top.valid_until is None
        assert top.scores.fused > 0 and not top.contested
        assert top.nugget is not None and top.nugget.publication == pb.PUBLISHED
        assert top.nugget.anchors[0] == "which role can reset a teammate's password in v8.2"
        assert served.ids["pending"] not in [h.id for h in found.hits]
        assert found.context_block.startswith("Established facts:")
        assert found.proto.request_id == found.request_id

        cited = await nf.report_citations("acme", found.request_id, [top.id])
        assert (cited.accepted, cited.retrieved) == (1, len(found.hits))
        again = await nf.report_citations("acme", found.request_id, [top.id])
        assert again.accepted == 0, "a repeated report counts once"


async def test_retrieve_options(served: Served) -> None:
    async with AsyncQueryClient(served.target, TOKEN_ACME) as nf:
        before = await nf.retrieve("acme", QUERY, as_of=T0 - days(1))
        assert served.ids["published"] not in [h.id for h in before.hits], "not valid yet"
        q = "how many rows can an analyst export"
        active = await nf.retrieve("acme", q, as_of=AS_OF, gate=False)
        assert served.ids["contested"] not in [h.id for h in active.hits]
        both = await nf.retrieve("acme", q, as_of=AS_OF, contested=True, gate=False,
                                 fusion="rrf", kinds=["semantic_fact"])
        hit = next(h for h in both.hits if h.id == served.ids["contested"])
        assert hit.contested and not both.gated


async def test_blocking_client_reads_reviews_and_cites(served: Served) -> None:
    pending = served.ids["pending"]

    def work() -> None:
        with QueryClient(served.target, TOKEN_ACME, timeout=30) as nf:
            found = nf.retrieve("acme", QUERY, k=3, as_of=AS_OF)
            assert found.hits[0].id == served.ids["published"]
            assert nf.report_citations("acme", found.request_id,
                                       (h.id for h in found.hits[:1])).accepted == 1

            waiting = nf.list_candidates("acme")
            assert [n.id for n in waiting.nuggets] == [pending]
            assert waiting.next_page_token == ""
            assert waiting.nuggets[0].provenance.trigger_query == \
                "are password resets logged anywhere"
            published = nf.list_candidates("acme", publications=["published", "PENDING_REVIEW"])
            assert pending in [n.id for n in published.nuggets]
            assert served.ids["published"] in [n.id for n in published.nuggets]

            record = nf.get_nugget("acme", pending)
            assert record.publication == pb.PENDING_REVIEW and record.title

            approved = nf.review("acme", pending, "approve", reviewer="alice",
                                 reason="checked", request_id="req-1")
            assert approved.publication == pb.PUBLISHED and approved.version == 2
            assert approved.lineage_id == pending and approved.request_id == "req-1"
            retried = nf.review("acme", pending, "approve", reviewer="alice",
                                request_id="req-1")
            assert retried.id == approved.id, "the same request id applies once"
            assert nf.get_nugget("acme", pending).id == approved.id, "lineage id: the head"
            assert nf.get_nugget("acme", pending, version=1).id == pending
            versions = nf.list_versions("acme", pending)
            assert [v.version for v in versions.nuggets] == [1, 2]
            assert nf.list_candidates("acme").nuggets == ()

    await asyncio.to_thread(work)


async def test_errors_are_typed_and_carry_the_field(served: Served) -> None:
    async with AsyncQueryClient(served.target, TOKEN_ACME) as nf:
        found = await nf.retrieve("acme", QUERY, k=3, as_of=AS_OF)
        with pytest.raises(InvalidArgument) as bad:
            await nf.report_citations("acme", found.request_id, ["n-never-retrieved"])
        assert bad.value.field == "cited_ids" and bad.value.code == "INVALID_ARGUMENT"
        assert bad.value.method == "ReportCitations"
        assert bad.value.message.startswith("cited_ids:")
        assert isinstance(bad.value, ValueError) and isinstance(bad.value, ClientError)
        with pytest.raises(InvalidArgument) as bad:
            await nf.get_nugget("acme", served.ids["pending"], version=-1)
        assert bad.value.field == "version"
        with pytest.raises(InvalidArgument) as bad:
            await nf.list_versions("acme", served.ids["pending"], page_token="not-a-token")
        assert bad.value.field == "page_token"

        with pytest.raises(NotFound) as missing:
            await nf.report_citations("acme", "no-such-request", ["x"])
        assert missing.value.field == "request_id"
        with pytest.raises(NotFound) as missing:
            await nf.get_nugget("acme", "n-0000000000000000")
        assert missing.value.field == "id"
        with pytest.raises(PermissionDenied):
            await nf.retrieve("globex", QUERY)

        # refused before anything is sent: unknown names, one string for a list of ids
        with pytest.raises(InvalidArgument) as local:
            await nf.review("acme", served.ids["pending"], "bless", reviewer="x")  # type: ignore[arg-type]
        assert local.value.field == "action" and "approve" in local.value.message
        with pytest.raises(InvalidArgument) as local:
            await nf.report_citations("acme", found.request_id, "n-1")
        assert local.value.field == "cited_ids"
        with pytest.raises(InvalidArgument) as local:
            await nf.list_candidates("acme", publications=["waiting"])
        assert local.value.field == "publications"
        assert (await nf.get_nugget("acme", served.ids["pending"])).publication == \
            pb.PENDING_REVIEW, "nothing was reviewed"

    for token in (None, "not-a-valid-token-0123456789"):
        async with AsyncQueryClient(served.target, token) as anonymous:
            with pytest.raises(Unauthenticated):
                await anonymous.retrieve("acme", QUERY)
    async with AsyncQueryClient(served.target, TOKEN_GLOBEX) as globex:
        with pytest.raises(PermissionDenied) as denied:
            await globex.get_nugget("acme", served.ids["published"])
        assert denied.value.code == "PERMISSION_DENIED" and not denied.value.retriable


async def test_unreachable_service_is_unavailable() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there

    def call() -> None:
        with QueryClient(f"127.0.0.1:{port}", TOKEN_ACME, timeout=5) as nf, \
                pytest.raises(Unavailable) as down:
            nf.retrieve("acme", QUERY)
        assert down.value.retriable and down.value.method == "Retrieve"
        assert isinstance(down.value.__cause__, Exception)

    await asyncio.to_thread(call)
    async with AsyncQueryClient(f"127.0.0.1:{port}", TOKEN_ACME, timeout=5) as nf:
        with pytest.raises(Unavailable):
            await nf.get_nugget("acme", "n-1")


async def test_tls_to_a_plaintext_service_fails_as_unavailable(served: Served) -> None:
    """secure=True makes a TLS channel (system roots): the loopback service speaks
    plaintext, so the handshake fails and nothing is sent in the clear."""
    async with AsyncQueryClient(served.target, TOKEN_ACME, secure=True, timeout=5) as nf:
        with pytest.raises(Unavailable):
            await nf.retrieve("acme", QUERY)


async def test_the_readme_example_runs(served: Served, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's ten-line example, against this service (Kafka replaced by a recorder)."""
    import re

    import nuggetflow_client

    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text()
    section = readme.split("## Client (`nuggetflow-client`)", 1)[1]
    example = re.search(r"```python\n(.*?)```", section, re.S)
    assert example is not None
    code = example.group(1)
    assert len([line for line in code.splitlines() if line.strip()]) <= 10
    assert code == (Path(__file__).resolve().parents[3] / "client" / "README.md").read_text(
        ).split("```python\n", 1)[1].split("```", 1)[0], "both READMEs show the same example"
    published: list[tuple[str, object]] = []
    monkeypatch.setattr(nuggetflow_client, "publish_feedback",
                        lambda servers, *events: published.append((servers, events)))
    code = code.replace("localhost:50051", served.target).replace("<acme's token>", TOKEN_ACME)
    scope: dict[str, object] = {"my_generator": lambda q, ctx: f"From the facts: {ctx[:40]}"}
    await asyncio.to_thread(exec, compile(code, "README example", "exec"), scope)
    found = scope["found"]
    assert isinstance(found, nuggetflow_client.Retrieval) and found.hits
    [(servers, events)] = published
    assert servers == "localhost:9092"
    assert isinstance(events, tuple) and events[0].tenant == "acme"
    assert events[0].answer.startswith("From the facts: Established facts")
