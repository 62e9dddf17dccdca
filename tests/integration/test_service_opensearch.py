"""The gRPC query service on a real OpenSearch node, through a real loopback channel.

The service suite runs on the shared session node (an index per test). The outage test
starts a second node of its own (other ports, its own state dir), stops it under a running
service and starts it again: calls fail with UNAVAILABLE meanwhile and succeed afterwards.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest

from nuggetflow.settings import Settings
from nuggetflow.v1 import query_service_pb2 as qpb
from nuggetflow.v1 import query_service_pb2_grpc as qpb_grpc
from query.auth import TokenAuth
from query.backends.opensearch import OpenSearchStore
from query.embeddings import MiniLMEmbedder
from query.index import NuggetIndex
from query.metrics import Metrics
from query.model import first_version_id
from query.service import create_server
from query.store import IndexStore
from tests.conformance.service_suite import (
    TOKEN_ACME,
    TOKENS,
    Service,
    ServiceSuite,
    bearer,
    rpc_error,
    seed_nuggets,
)
from tests.support.net import free_port as _free_port
from tests.support.service import seed as seed_with_vectors

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
NODE = ROOT / "deploy" / "opensearch" / "node.sh"


class TestOpenSearchService(ServiceSuite):
    @pytest.fixture
    async def store(self, opensearch_url: str) -> AsyncIterator[IndexStore]:
        s = OpenSearchStore(opensearch_url, index=f"svc-{uuid.uuid4().hex[:12]}")
        await s.start()
        yield s
        await s.drop()
        await s.stop()




class PrivateNode:
    """A second OpenSearch node (own ports and state dir) that a test may stop and start."""

    def __init__(self, var_dir: Path) -> None:
        self.http_port, self.transport_port = _free_port(), _free_port()
        self.env = {**os.environ, "NUGGETFLOW_OPENSEARCH_PORT": str(self.http_port),
                    "NUGGETFLOW_OPENSEARCH_TRANSPORT_PORT": str(self.transport_port),
                    "NUGGETFLOW_VAR_DIR": str(var_dir), "NUGGETFLOW_OPENSEARCH_HEAP": "512m"}
        self.url = f"http://127.0.0.1:{self.http_port}"

    def run(self, command: str) -> None:
        proc = subprocess.run([str(NODE), command], env=self.env, capture_output=True,
                              text=True, timeout=600)
        if proc.returncode != 0:
            pytest.fail(f"node.sh {command} failed:\n{proc.stdout[-2000:]}{proc.stderr[-3000:]}")


@pytest.fixture
def private_node(tmp_path: Path) -> Iterator[PrivateNode]:
    node = PrivateNode(tmp_path / "var")
    node.run("start")
    try:
        yield node
    finally:
        node.run("stop")


async def test_node_down_is_unavailable_and_the_service_recovers(
        private_node: PrivateNode, embedder: MiniLMEmbedder, settings: Settings) -> None:
    store = OpenSearchStore(private_node.url, index="outage", timeout=5.0)
    await store.start()
    nuggets = list(seed_nuggets().values())
    await seed_with_vectors(NuggetIndex(store, embedder, settings), nuggets)
    await store.refresh()
    metrics = Metrics.create()
    server, port = create_server(NuggetIndex(store, embedder, settings), settings,
                                 metrics=metrics.query, auth=TokenAuth(TOKENS))
    await server.start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    stub = qpb_grpc.QueryServiceStub(channel)  # type: ignore[no-untyped-call]
    service = Service(server, channel, stub, metrics, NuggetIndex(store, embedder, settings))
    published = seed_nuggets()["published"].id
    try:
        assert (await service.retrieve()).hits[0].id == published

        private_node.run("stop")
        err = await rpc_error(service.retrieve(), grpc.StatusCode.UNAVAILABLE)
        assert str(private_node.http_port) not in err.details(), "no backend address leaked"
        await rpc_error(stub.GetNugget(qpb.GetNuggetRequest(tenant="acme", id=published),
                                       metadata=bearer(TOKEN_ACME)),
                        grpc.StatusCode.UNAVAILABLE)

        private_node.run("start")
        assert (await service.retrieve()).hits[0].id == published, "recovered after restart"
        got = await stub.GetNugget(qpb.GetNuggetRequest(tenant="acme", id=published),
                                   metadata=bearer(TOKEN_ACME))
        assert got.id == published
        assert service.sample("nuggetflow_query_request_duration_seconds_count",
                              method="Retrieve", code="UNAVAILABLE") == 1
    finally:
        await channel.close()
        await server.stop(0)
        await store.stop()


async def test_candidates_command_on_opensearch(opensearch_url: str,
                                                embedder: MiniLMEmbedder,
                                                settings: Settings) -> None:
    """`nuggetflow candidates` on an OpenSearch store lists the pending heads (title, body,
    provenance), in id order, paged, like on the embedded one."""
    import json
    import sys

    from query.model import Publication, next_version

    index = f"cli-{uuid.uuid4().hex[:12]}"
    store = OpenSearchStore(opensearch_url, index=index)
    await store.start()
    try:
        seed = seed_nuggets()
        more = [dataclasses.replace(seed["pending"], title=f"Pending {i}",
                                    provenance=dataclasses.replace(
                                        seed["pending"].provenance, event_id=f"ev-q{i}"))
                for i in range(2)]
        more = [dataclasses.replace(n, id=first_version_id(n), lineage_id=first_version_id(n))
                for n in more]
        nuggets = [*seed.values(), *more]
        await seed_with_vectors(NuggetIndex(store, embedder, settings), nuggets)
        approved = next_version(more[1], "approve", publication=Publication.PUBLISHED)
        await store.write_nuggets([approved], [None])
        env = {**os.environ, "NUGGETFLOW_STORE": "opensearch://" + opensearch_url.split("://")[1],
               "NUGGETFLOW_OPENSEARCH_INDEX": index}

        def cli(*args: str) -> str:
            proc = subprocess.run([sys.executable, "-m", "app.cli", "candidates",
                                   "--tenant", "acme", *args], cwd=ROOT, env=env,
                                  capture_output=True, text=True, timeout=300)
            assert proc.returncode == 0, proc.stderr
            return proc.stdout

        queue = sorted([seed["pending"].id, more[0].id])
        out = cli()
        assert [line.split()[0] for line in out.splitlines() if line.startswith("n-")] == queue
        assert "    title: Password resets are audited\n" in out
        assert "    body:  Every password reset of another user is written to the audit" in out
        assert "query: are password resets logged anywhere" in out
        assert "INO: variant E, 2 round(s), passed" in out
        assert "Pending 1" not in out and "VPN password rotation" not in out
        first = cli("--limit", "1")
        token = first.split("--page-token ")[1].split(")")[0]
        rest = json.loads(cli("--page-token", token, "--json"))
        assert [c["id"] for c in rest["candidates"]] == queue[1:]
        done = json.loads(cli("--state", "published", "--json"))
        assert approved.id in [c["id"] for c in done["candidates"]]
    finally:
        await store.drop()
        await store.stop()
