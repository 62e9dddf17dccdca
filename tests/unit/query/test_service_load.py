"""The query service under concurrent load (issue 18): 2,000 Retrieves with 16 in flight
through a real channel while other tasks review (over gRPC) and edit (in process) the
same nugget. Every call must succeed and the lineage must stay a single chain. No
timing is asserted.
"""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

import grpc
import pytest

from nuggetflow.settings import Settings
from nuggetflow.v1 import query_service_pb2 as qpb
from nuggetflow.v1 import query_service_pb2_grpc as qpb_grpc
from query.auth import TokenAuth
from query.backends.sqlite import SQLiteStore
from query.embeddings import MiniLMEmbedder
from query.index import NuggetIndex
from query.metrics import Metrics
from query.service import create_server
from tests.conformance.service_suite import TOKEN_ACME, TOKENS, bearer, seed_nuggets, ts
from tests.helpers import T0, days
from tests.support.service import seed

RETRIEVES = 2000
IN_FLIGHT = 16
REVIEWS = 40
EDITS = 40
QUERIES = ("why can't my analyst reset another teammate's password",
           "who may reset passwords in portal v8.2",
           "how many rows can an analyst export",
           "is a password reset of another user audited",
           "password rotation for the vpn")


@pytest.mark.slow
async def test_retrieves_reviews_and_edits_at_once_all_succeed(
        tmp_path: Path, embedder: MiniLMEmbedder, settings: Settings) -> None:
    store = SQLiteStore(tmp_path / "load.db")
    await store.start()
    nuggets = seed_nuggets()
    index = NuggetIndex(store, embedder, settings)
    await seed(index, nuggets.values())
    server, port = create_server(index, settings, 0, metrics=Metrics.create().query,
                                 auth=TokenAuth(TOKENS))
    await server.start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    stub = qpb_grpc.QueryServiceStub(channel)  # type: ignore[no-untyped-call]
    target = nuggets["published"].id
    md = bearer(TOKEN_ACME)
    failures: list[str] = []
    counter = itertools.count()

    async def retriever() -> int:
        done = 0
        while (i := next(counter)) < RETRIEVES:
            try:
                reply = await stub.Retrieve(qpb.RetrieveRequest(
                    tenant="acme", query=QUERIES[i % len(QUERIES)], as_of=ts(T0 + days(10)),
                    k=5), metadata=md, timeout=30)
                assert reply.request_id
                done += 1
            except (grpc.aio.AioRpcError, AssertionError) as exc:
                failures.append(f"Retrieve {i}: {exc}")
        return done

    async def reviewer() -> int:
        done = 0
        for i in range(REVIEWS):  # the only task changing publication: always allowed
            action = qpb.ReviewRequest.UNPUBLISH if i % 2 == 0 else qpb.ReviewRequest.APPROVE
            request = qpb.ReviewRequest(tenant="acme", id=target, action=action,
                                        reviewer="load", request_id=f"load-{i}")
            try:
                first = await stub.Review(request, metadata=md, timeout=30)
                if i % 5 == 0:  # a retry of the same request changes nothing
                    again = await stub.Review(request, metadata=md, timeout=30)
                    assert again == first, f"retry of load-{i} wrote again"
                done += 1
            except (grpc.aio.AioRpcError, AssertionError) as exc:
                failures.append(f"Review {i}: {exc}")
            await asyncio.sleep(0)
        return done

    async def editor() -> int:
        done = 0
        for i in range(EDITS):
            try:
                await index.edit("acme", target, f"load edit {i}",
                                 body=f"In portal v8.2 only the Workspace Owner role can reset "
                                      f"another user's password (revision {i}).")
                done += 1
            except Exception as exc:
                failures.append(f"edit {i}: {type(exc).__name__}: {exc}")
            await asyncio.sleep(0.005)
        return done

    try:
        results = await asyncio.gather(*(retriever() for _ in range(IN_FLIGHT)), reviewer(),
                                       editor())
    finally:
        await channel.close()
        await server.stop(0)
    try:
        assert failures == []
        assert sum(results[:IN_FLIGHT]) == RETRIEVES
        assert results[IN_FLIGHT:] == [REVIEWS, EDITS]
        history = await store.history("acme", target)
        assert len(history) == 1 + REVIEWS + EDITS
        assert [v.version for v in history] == list(range(1, len(history) + 1))
        for parent, child in itertools.pairwise(history):
            assert child.parent_id == parent.id, "every version is a child of the last"
        assert (await store.head("acme", target)) == history[-1], "one head: the last"
        assert sorted(v.request_id for v in history if v.request_id) == sorted(
            f"load-{i}" for i in range(REVIEWS))
    finally:
        await store.stop()
