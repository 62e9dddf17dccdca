"""The gRPC query service on the embedded SQLite store, through a real loopback channel.

The backend-independent contract runs from :mod:`tests.conformance.service_suite`; this
module adds what needs a controllable store: deadlines, backend down and recovery,
unexpected errors, graceful stop; plus the citation ledger and the open (dev) mode.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from nuggetflow.errors import BackendUnavailableError
from nuggetflow.settings import Settings
from nuggetflow.v1 import query_service_pb2 as qpb
from query.auth import TokenAuth
from query.backends.sqlite import SQLiteStore
from query.embeddings import MiniLMEmbedder, Vector
from query.index import NuggetIndex
from query.metrics import Metrics
from query.model import Nugget, Publication
from query.service import SERVICE_NAME, create_server
from query.store import GovernanceFilter, IndexStore, Scored
from tests.conformance.service_suite import (
    QUERY,
    TOKEN_ACME,
    TOKENS,
    Service,
    ServiceSuite,
    bearer,
    rpc_error,
    seed_nuggets,
)
from tests.support.service import seed


class TestSQLiteService(ServiceSuite):
    @pytest.fixture
    async def store(self, tmp_path: Path) -> AsyncIterator[IndexStore]:
        s = SQLiteStore(tmp_path / "service.db")
        await s.start()
        yield s
        await s.stop()


class FlakyStore(SQLiteStore):
    """A SQLite store that can be made unreachable, slow, or broken, and then healed."""

    down = False
    delay = 0.0
    broken = False
    cancelled = 0
    block_decide = 0.0  # seconds heads_by_key blocks the event loop (no await can cut in)
    write_delay = 0.0  # seconds write_nuggets waits (awaiting) before it writes
    #: when set, write_nuggets sets ``writing`` and waits for the gate before it writes
    write_gate: asyncio.Event | None = None
    writing: asyncio.Event | None = None

    def _check(self) -> None:
        if self.down:
            raise BackendUnavailableError("store at /secret/path unreachable: refused")
        if self.broken:
            raise RuntimeError("boom at /secret/path")

    async def has_tenant(self, tenant: str) -> bool:
        self._check()
        return await super().has_tenant(tenant)

    async def get(self, tenant: str, item_id: str) -> Nugget:
        self._check()
        return await super().get(tenant, item_id)

    async def head(self, tenant: str, item_id: str) -> Nugget:
        self._check()
        return await super().head(tenant, item_id)

    async def heads_page(self, tenant: str, publications: Sequence[Publication], limit: int,
                         after_id: str = "") -> list[Nugget]:
        self._check()
        return await super().heads_page(tenant, publications, limit, after_id)

    async def ping(self) -> None:
        self._check()
        if self.delay:
            await asyncio.sleep(self.delay)
        await super().ping()

    async def heads_by_key(self, tenant: str, key: tuple[str, str, str]) -> list[Nugget]:
        if self.block_decide:
            time.sleep(self.block_decide)
        return await super().heads_by_key(tenant, key)

    async def write_nuggets(self, versions: Sequence[Nugget], vectors: Sequence[Vector | None],
                            anchor_vectors: Sequence[Vector | None] | None = None) -> None:
        if self.write_delay:
            await asyncio.sleep(self.write_delay)
        if self.write_gate is not None and self.writing is not None:
            self.writing.set()
            await self.write_gate.wait()
        await super().write_nuggets(versions, vectors, anchor_vectors)

    async def lexical(self, terms: Sequence[str], flt: GovernanceFilter,
                      limit: int) -> list[Scored]:
        if self.delay:
            try:
                await asyncio.sleep(self.delay)
            except asyncio.CancelledError:
                self.cancelled += 1
                raise
        return await super().lexical(terms, flt, limit)


@pytest.fixture
async def flaky(tmp_path: Path, embedder: MiniLMEmbedder,
                settings: Settings) -> AsyncIterator[tuple[Service, FlakyStore]]:
    store = FlakyStore(tmp_path / "flaky.db")
    await store.start()
    index = NuggetIndex(store, embedder, settings)
    nuggets = list(seed_nuggets().values())
    await seed(index, nuggets)
    metrics = Metrics.create()
    server, port = create_server(index, settings, metrics=metrics.query, auth=TokenAuth(TOKENS))
    await server.start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    from nuggetflow.v1 import query_service_pb2_grpc as qpb_grpc

    stub = qpb_grpc.QueryServiceStub(channel)  # type: ignore[no-untyped-call]
    yield Service(server, channel, stub, metrics, index), store
    await channel.close()
    await server.stop(0)
    await store.stop()


async def test_backend_down_is_unavailable_then_recovers(
        flaky: tuple[Service, FlakyStore]) -> None:
    service, store = flaky
    assert (await service.retrieve()).hits
    store.down = True
    err = await rpc_error(service.retrieve(), grpc.StatusCode.UNAVAILABLE)
    assert "secret" not in err.details(), "backend addresses are not leaked"
    await rpc_error(service.stub.GetNugget(qpb.GetNuggetRequest(tenant="acme", id="n-1"),
                                           metadata=bearer(TOKEN_ACME)),
                    grpc.StatusCode.UNAVAILABLE)
    await rpc_error(service.stub.ListCandidates(qpb.ListCandidatesRequest(tenant="acme"),
                                                metadata=bearer(TOKEN_ACME)),
                    grpc.StatusCode.UNAVAILABLE)
    store.down = False
    assert (await service.retrieve()).hits, "the service recovers when the backend returns"
    assert service.sample("nuggetflow_query_request_duration_seconds_count",
                          method="Retrieve", code="UNAVAILABLE") == 1
    assert service.sample("nuggetflow_query_request_duration_seconds_count",
                          method="Retrieve", code="OK") == 2


async def test_health_follows_the_backend(flaky: tuple[Service, FlakyStore]) -> None:
    service, store = flaky
    health = health_pb2_grpc.HealthStub(service.channel)

    async def status() -> int:
        reply = await health.Check(health_pb2.HealthCheckRequest(service=SERVICE_NAME))
        return int(reply.status)

    async def becomes(want: int) -> None:
        for _ in range(200):
            if await status() == want:
                return
            await asyncio.sleep(0.02)
        raise AssertionError(f"health never became {want}")

    watcher = asyncio.create_task(service.server.watch_backend(store.ping, 0.05))
    try:
        await becomes(health_pb2.HealthCheckResponse.SERVING)
        store.down = True
        await becomes(health_pb2.HealthCheckResponse.NOT_SERVING)
        store.down = False
        await becomes(health_pb2.HealthCheckResponse.SERVING)
        store.delay = 0.5  # a store that does not answer within the interval
        await becomes(health_pb2.HealthCheckResponse.NOT_SERVING)
        store.delay = 0.0
        await becomes(health_pb2.HealthCheckResponse.SERVING)
    finally:
        watcher.cancel()


async def test_unexpected_errors_are_internal_without_internals(
        flaky: tuple[Service, FlakyStore], caplog: pytest.LogCaptureFixture) -> None:
    service, store = flaky
    store.broken = True
    err = await rpc_error(service.retrieve(), grpc.StatusCode.INTERNAL)
    assert "boom" not in err.details() and "secret" not in err.details()
    error_id = err.details().split("id ")[1].rstrip(")")
    logged = [r for r in caplog.records if r.getMessage() == "query call failed"]
    assert logged and logged[0].fields["error_id"] == error_id  # type: ignore[attr-defined]
    assert logged[0].exc_info is not None, "the traceback is logged server-side"


async def test_deadline_is_honoured_and_work_cancelled(
        flaky: tuple[Service, FlakyStore]) -> None:
    service, store = flaky
    store.delay = 2.0
    started = asyncio.get_running_loop().time()
    await rpc_error(service.stub.Retrieve(qpb.RetrieveRequest(tenant="acme", query=QUERY),
                                          metadata=bearer(TOKEN_ACME), timeout=0.3),
                    grpc.StatusCode.DEADLINE_EXCEEDED)
    assert asyncio.get_running_loop().time() - started < 1.5
    for _ in range(50):  # the server side finishes right after the client gave up
        if store.cancelled:
            break
        await asyncio.sleep(0.02)
    assert store.cancelled == 1, "the server stopped working on the expired call"
    assert service.sample("nuggetflow_query_request_duration_seconds_count",
                          method="Retrieve", code="DEADLINE_EXCEEDED") == 1
    store.delay = 0.0
    reply = await service.stub.Retrieve(qpb.RetrieveRequest(tenant="acme", query=QUERY),
                                        metadata=bearer(TOKEN_ACME), timeout=10)
    assert reply.hits


async def eventually(check: Callable[[], Awaitable[bool]], seconds: float = 5.0) -> None:
    """Wait until ``check()`` holds (the server side finishes after the client gave up)."""
    for _ in range(int(seconds / 0.02)):
        if await check():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("never happened")


async def versions_of(service: Service, nugget_id: str) -> int:
    reply = await service.stub.ListVersions(
        qpb.ListVersionsRequest(tenant="acme", id=nugget_id), metadata=bearer(TOKEN_ACME))
    return len(reply.versions)


async def test_review_past_its_deadline_before_the_write_writes_nothing(
        flaky: tuple[Service, FlakyStore]) -> None:
    """Issue 18 #10: the deadline passes while the review decides (the loop is blocked, so
    no timer can cut in); the write must not begin: DEADLINE_EXCEEDED and no new version
    (it used to commit v2 while the client saw DEADLINE_EXCEEDED)."""
    service, store = flaky
    pending = seed_nuggets()["pending"].id
    store.block_decide = 0.3
    approve = qpb.ReviewRequest(tenant="acme", id=pending, action=qpb.ReviewRequest.APPROVE)
    await rpc_error(service.stub.Review(approve, metadata=bearer(TOKEN_ACME), timeout=0.1),
                    grpc.StatusCode.DEADLINE_EXCEEDED)

    async def finished() -> bool:  # the server side has answered, one way or the other
        return any(service.sample("nuggetflow_query_request_duration_seconds_count",
                                  method="Review", code=code)
                   for code in ("OK", "DEADLINE_EXCEEDED", "CANCELLED"))

    await eventually(finished)
    assert await versions_of(service, pending) == 1, "nothing was written"
    assert service.sample("nuggetflow_query_request_duration_seconds_count",
                          method="Review", code="DEADLINE_EXCEEDED") == 1
    store.block_decide = 0.0
    approved = await service.stub.Review(approve, metadata=bearer(TOKEN_ACME), timeout=10)
    assert approved.version == 2


async def test_a_begun_write_is_finished_and_its_retry_applies_once(
        flaky: tuple[Service, FlakyStore]) -> None:
    """The deadline passes during the write: the write is not abandoned half way; the
    client's outcome is unclear, and a retry with the same request id returns the version
    that was written instead of writing another."""
    service, store = flaky
    pending = seed_nuggets()["pending"].id
    # (the write begins, then waits until the deadline has passed: no timing decides it)
    store.writing, store.write_gate = asyncio.Event(), asyncio.Event()
    approve = qpb.ReviewRequest(tenant="acme", id=pending, action=qpb.ReviewRequest.APPROVE,
                                request_id="req-slow")
    call = asyncio.ensure_future(rpc_error(
        service.stub.Review(approve, metadata=bearer(TOKEN_ACME), timeout=2.0),
        grpc.StatusCode.DEADLINE_EXCEEDED))
    await asyncio.wait_for(store.writing.wait(), 10)
    await call  # the deadline passed while the write was under way
    store.write_gate.set()

    async def written() -> bool:
        return await versions_of(service, pending) == 2

    await eventually(written)
    store.write_gate = None
    retried = await service.stub.Review(approve, metadata=bearer(TOKEN_ACME), timeout=10)
    assert retried.version == 2 and retried.request_id == "req-slow"
    assert await versions_of(service, pending) == 2, "applied once"


async def test_graceful_stop_finishes_in_flight_calls_and_refuses_new_ones(
        flaky: tuple[Service, FlakyStore]) -> None:
    service, store = flaky
    store.delay = 0.5
    in_flight = asyncio.ensure_future(service.retrieve())
    await asyncio.sleep(0.2)
    await service.server.stop(grace=5)
    reply = await in_flight
    assert reply.hits, "the in-flight call completed during the grace period"
    await rpc_error(service.retrieve(), grpc.StatusCode.UNAVAILABLE)


async def test_no_tokens_refuses_to_start_without_insecure_dev(
        tmp_path: Path, embedder: MiniLMEmbedder, settings: Settings) -> None:
    from nuggetflow.errors import ConfigError

    assert TokenAuth.from_settings(settings).open and not settings.insecure_dev
    store = SQLiteStore(tmp_path / "closed.db")
    with pytest.raises(ConfigError) as err:
        create_server(NuggetIndex(store, embedder, settings), settings)
    assert err.value.field == "NUGGETFLOW_AUTH_TOKENS_FILE"
    assert "--insecure-dev" in str(err.value) and "NUGGETFLOW_INSECURE_DEV" in str(err.value)


async def test_open_mode_without_tokens_only_in_insecure_dev(
        tmp_path: Path, embedder: MiniLMEmbedder, settings: Settings,
        caplog: pytest.LogCaptureFixture) -> None:
    settings = settings.replace(insecure_dev=True)
    assert TokenAuth.from_settings(settings).open
    store = SQLiteStore(tmp_path / "open.db")
    await store.start()
    index = NuggetIndex(store, embedder, settings)
    await seed(index, list(seed_nuggets().values()))
    with caplog.at_level("WARNING"):
        server, port = create_server(index, settings)
    assert any("INSECURE DEV MODE" in r.getMessage() and r.levelname == "WARNING"
               for r in caplog.records)
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            from nuggetflow.v1 import query_service_pb2_grpc as qpb_grpc

            stub = qpb_grpc.QueryServiceStub(channel)  # type: ignore[no-untyped-call]
            for tenant in ("acme", "globex"):
                reply = await stub.Retrieve(qpb.RetrieveRequest(tenant=tenant, query="password"))
                assert reply.hits and all(h.nugget.tenant == tenant for h in reply.hits)
    finally:
        await server.stop(0)
        await store.stop()


async def test_second_server_on_a_taken_port_fails_clearly(
        flaky: tuple[Service, FlakyStore], settings: Settings) -> None:
    from nuggetflow.errors import ConfigError

    service, _ = flaky
    with pytest.raises(ConfigError) as err:
        create_server(service.index, settings, service.server.port, auth=TokenAuth(TOKENS))
    assert err.value.field == "NUGGETFLOW_GRPC_PORT"
