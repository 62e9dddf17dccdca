"""Faults on real clusters: a 3-broker Kafka cluster and a 3-node OpenSearch cluster on
loopback (deploy/kafka/cluster.sh, deploy/opensearch/cluster.sh).

- Both: 1,000 mixed events stream through two workers into a 3-shard, 1-replica index
  while a query service answers Retrieve calls; one broker is killed (kill -9) and later
  restarted, one node is killed. Topics are replicated 3 times with min.insync.replicas 2
  and every producer uses acks=all with idempotence. Every actionable event gets exactly
  one nugget, every malformed one a dead letter, the index equals an undisturbed run's
  (anchors: see the test) and every call is answered. Then node 3 rejoins (calls answered
  throughout) and the two nodes holding one shard are killed: with no quorum and a shard
  unreachable, calls get UNAVAILABLE (never a partial answer, never an answer without
  hits), and every call is answered once the cluster is whole again.
- OpenSearch: two writer processes race on the same lineages over a cluster index with one
  replica while a node is killed; reads are answered throughout, every lineage stays a
  chain and every request is applied once.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
import urllib.request
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from nuggetflow.errors import NuggetflowError
from nuggetflow.settings import Settings
from nuggetflow.v1 import query_service_pb2 as qpb
from nuggetflow.v1 import query_service_pb2_grpc as qpb_grpc
from query.backends.opensearch import IndexLayout, OpenSearchStore
from query.embeddings import MiniLMEmbedder
from query.index import NuggetIndex
from stream.synthetic import mixed_events
from tests.integration.stream_support import Deployment, WorkerProcess, wait_until
from tests.integration.test_opensearch_writers import TENANT, _faults, _race, _seed
from tests.integration.test_stream_kafka import (
    check_outcome,
    publish,
    reference_state,
    wait_done,
)
from tests.support.net import free_port
from tests.support.race_writer import DigestEmbedder

pytestmark = [pytest.mark.integration, pytest.mark.cluster, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
KAFKA = ROOT / "deploy/kafka/cluster.sh"
QUERY = "who can reset another user's password"
TOKEN = "cluster-faults-0123456789abcdef0123456789"
OPENSEARCH = ROOT / "deploy/opensearch/cluster.sh"


def _run(script: Path, *args: str, timeout: float = 600) -> str:
    proc = subprocess.run([str(script), *args], capture_output=True, text=True,
                          timeout=timeout)
    if proc.returncode != 0:
        pytest.fail(f"{script.name} {' '.join(args)} failed:\n{proc.stdout[-3000:]}"
                    f"{proc.stderr[-3000:]}")
    return proc.stdout.strip()


@pytest.fixture(scope="module")
def kafka_cluster() -> Iterator[str]:
    """The bootstrap list of a running 3-broker cluster (started here, stopped after)."""
    _run(KAFKA, "start")
    try:
        yield _run(KAFKA, "bootstrap").splitlines()[-1]
    finally:
        _run(KAFKA, "stop")


@pytest.fixture(scope="module")
def opensearch_cluster() -> Iterator[str]:
    """The node URLs of a running 3-node cluster, comma-separated."""
    _run(OPENSEARCH, "start")
    try:
        yield _run(OPENSEARCH, "urls").splitlines()[-1]
    finally:
        _run(OPENSEARCH, "stop")


def _get(url: str, path: str) -> Any:
    """GET a cluster API path from the first node that answers."""
    for node in url.split(","):
        try:
            with urllib.request.urlopen(f"{node}{path}", timeout=200) as reply:
                return json.loads(reply.read())
        except OSError:
            continue
    raise AssertionError(f"no node of {url} answers {path}")


def _settled(url: str, budget: float = 600) -> None:
    """Until the cluster is green with no shard moving (node 3 has taken its share, or the
    restarted nodes have recovered their copies). A precondition of the phase after it,
    not what is tested: the wait goes on while the cluster recovers (the health API
    answers 408 after each 60 s round), up to ``budget``; then the failure names the
    cluster's health and the shards not started."""
    deadline = time.monotonic() + budget
    path = ("/_cluster/health?wait_for_status=green&wait_for_no_relocating_shards=true"
            "&wait_for_no_initializing_shards=true&timeout=60s")
    while time.monotonic() < deadline:
        for node in url.split(","):
            try:
                with urllib.request.urlopen(f"{node}{path}", timeout=90) as reply:
                    health = json.loads(reply.read())
            except OSError:  # 408 (not green yet), a node still starting
                continue
            if health["status"] == "green" and not health["timed_out"]:
                return
        time.sleep(1)
    try:
        shards = [r for r in _get(url, "/_cat/shards?format=json") if r["state"] != "STARTED"]
        health = _get(url, "/_cluster/health")
    except AssertionError as err:
        raise AssertionError(f"the cluster is not green after {budget:.0f} s: {err}") from None
    raise AssertionError(f"the cluster is not green after {budget:.0f} s: {health}; "
                         f"shards not started: {shards}")


def _holders(url: str, index: str, shard: int) -> list[str]:
    """The cluster.sh numbers of the nodes holding a copy of one shard of the index."""
    rows = _get(url, f"/_cat/shards/{index}?format=json")
    return sorted(r["node"].removeprefix("os-node-") for r in rows
                  if int(r["shard"]) == shard and r["state"] == "STARTED")


def _records(state: dict[tuple[str, str], Any]) -> dict[tuple[str, str], Any]:
    """The state without anchors: (id, version, title, body, publication, state) of
    every version of every event's nugget(s), and the number of versions."""
    return {k: [[(v[0], v[1], v[2], v[3], v[5], v[6]) for v in lineage] for lineage in val]
            if isinstance(val, list) else val for k, val in state.items()}


class Querier:
    """Retrieve calls to a query service, one every 0.2 s, each outcome kept with the
    phase it fell in."""

    def __init__(self, port: int, url: str = "", index: str = "") -> None:
        self.port = port
        self.phase = "start"
        self.calls: list[tuple[str, str, int]] = []  # (phase, status code, hits)
        self.stop = asyncio.Event()
        self.url, self.index = url, index
        self.empty: list[str] = []  # the cluster as it was at each OK answer without hits

    async def _note_empty(self, phase: str) -> None:
        """What the cluster's shards of the index were when an answer came back empty
        (for the failure message: which copies answered)."""
        if not self.url:
            return
        try:
            rows = await asyncio.to_thread(_get, self.url,
                                           f"/_cat/shards/{self.index}?format=json")
            shards = " ".join(f"{r['shard']}{r['prirep']}:{r['state']}@{r.get('node')}"
                              for r in rows)
        except AssertionError as err:
            shards = str(err)
        self.empty.append(f"{time.strftime('%H:%M:%S')} {phase}: {shards}")

    def codes(self, phase: str) -> Counter[str]:
        return Counter(code for p, code, _ in self.calls if p == phase)

    async def run(self) -> None:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{self.port}") as channel:
            stub = qpb_grpc.QueryServiceStub(channel)  # type: ignore[no-untyped-call]
            while not self.stop.is_set():
                phase = self.phase
                try:
                    reply = await stub.Retrieve(
                        # (the corpus answers it: nothing is published in this test).
                        # Ungated: whether a passage passes the relevance gate depends on
                        # BM25 statistics that differ between the copies of a replicated
                        # shard; this test asks whether answers are whole, not relevant.
                        qpb.RetrieveRequest(tenant="acme", query=QUERY,
                                            include_documents=True, gate=qpb.GATE_OFF),
                        metadata=(("authorization", f"Bearer {TOKEN}"),), timeout=30)
                    self.calls.append((phase, "OK", len(reply.hits)))
                    if not reply.hits:
                        await self._note_empty(phase)
                except grpc.aio.AioRpcError as err:
                    self.calls.append((phase, err.code().name, 0))
                await asyncio.sleep(0.2)

    async def wait_for(self, code: str, timeout: float) -> None:
        async def seen() -> bool:
            return any(p == self.phase and c == code for p, c, _ in self.calls)

        await wait_until(seen, timeout, f"a {code} answer in phase {self.phase}")


@pytest.mark.timeout(2400)  # an in-process reference run, then the stream under faults
async def test_a_broker_and_a_node_killed_mid_stream_lose_and_repeat_nothing(
        kafka_cluster: str, opensearch_cluster: str, tmp_path: Path,
        embedder: MiniLMEmbedder) -> None:
    """Two workers stream 1,000 mixed events into a 3-shard, 1-replica index on the
    OpenSearch cluster while a query service answers Retrieve calls; a broker is killed
    (kill -9), then a node, then the broker comes back. The index ends as an undisturbed
    in-process run's on the same cluster, and every call is answered. Then node 3 comes
    back and the two nodes that hold one shard are killed (no quorum, a shard with no
    copy): calls get UNAVAILABLE, never a partial answer, and answers come back when the
    nodes do."""
    index = f"faults-{uuid.uuid4().hex[:8]}"
    store = {"NUGGETFLOW_STORE": "opensearch://" + opensearch_cluster.replace("http://", ""),
             "NUGGETFLOW_OPENSEARCH_INDEX": index, "NUGGETFLOW_OPENSEARCH_SHARDS": "3",
             "NUGGETFLOW_OPENSEARCH_REPLICAS": "1"}
    dep = Deployment.create(kafka_cluster, tmp_path, NUGGETFLOW_STREAM_REPLICATION_FACTOR="3",
                            NUGGETFLOW_STREAM_MIN_INSYNC_REPLICAS="2",
                            NUGGETFLOW_REVIEW_POLICY="manual", **store)
    mix = mixed_events(1000, seed=7)
    # Nothing is published (manual review), so what INO optimizes against does not depend
    # on the order two workers take the events in; the reference runs on the same cluster
    # (the lexical scores are OpenSearch's, not the single file's).
    expected = await reference_state(dep, embedder, mix, tmp_path,
                                     dep.settings.replace(opensearch_index=f"{index}-ref"))
    await dep.add_corpus(embedder)
    port = free_port()
    serve = dep.query_service("query", NUGGETFLOW_GRPC_PORT=str(port),
                              NUGGETFLOW_AUTH_TOKENS=json.dumps({TOKEN: ["acme"]})).start()
    querier = Querier(port, opensearch_cluster, index)
    asking = asyncio.create_task(querier.run())
    workers: list[WorkerProcess] = []
    killed: list[str] = []
    try:
        await querier.wait_for("OK", 60)
        querier.phase = "stream"
        for name in ("w1", "w2"):
            workers.append(dep.worker(name).start())
        await publish(dep, mix.lines[:400])
        await asyncio.sleep(5)
        await asyncio.to_thread(_run, KAFKA, "kill", "2")
        await publish(dep, mix.lines[400:], start=401)  # two brokers left: acks=all, ISR 2
        await asyncio.sleep(5)
        killed.append("3")
        await asyncio.to_thread(_run, OPENSEARCH, "kill", "3")
        await asyncio.sleep(10)
        await asyncio.to_thread(_run, KAFKA, "start-node", "2")
        await wait_done(dep, embedder, mix, workers, timeout=900)
        for w in workers:
            assert w.stop() == 0, w.tail()

        querier.phase = "rejoin"  # node 3 back; shards move to it
        await asyncio.to_thread(_run, OPENSEARCH, "start-node", "3")
        killed.clear()
        await asyncio.to_thread(_settled, opensearch_cluster)
        # Both copies of one shard gone with two nodes of three (no quorum either): the
        # node left cannot answer a search whole.
        querier.phase = "no quorum"
        killed.extend(await asyncio.to_thread(_holders, opensearch_cluster, index, 0))
        assert len(killed) == 2, killed
        for n in killed:
            await asyncio.to_thread(_run, OPENSEARCH, "kill", n)
        await querier.wait_for("UNAVAILABLE", 120)
        querier.phase = "recovery"
        await asyncio.gather(*(asyncio.to_thread(_run, OPENSEARCH, "start-node", n)
                               for n in killed))
        killed.clear()
        await querier.wait_for("OK", 180)
        # Until every copy is back the service may answer UNAVAILABLE (a search and a
        # read that disagree), never a partial answer; then every call is answered.
        await asyncio.to_thread(_settled, opensearch_cluster)
        querier.phase = "recovered"
        await asyncio.sleep(5)
        unavailable = serve.metric("nuggetflow_query_request_duration_seconds_count",
                                   method="Retrieve", code="UNAVAILABLE")
    finally:
        # The calls end before the service does (a call in flight while it stops would
        # fail, and count against the phase it started in).
        querier.stop.set()
        try:
            await asyncio.wait_for(asking, 60)
        finally:
            for w in workers:
                w.stop()
            served = serve.stop()
            await asyncio.gather(*(asyncio.to_thread(_run, OPENSEARCH, "start-node", n)
                                   for n in killed))
    assert served == 0, serve.tail()
    state = await check_outcome(dep, embedder, mix, auto_tenants=())
    # Every record as the undisturbed run has it: ids, versions, lineage, title, body,
    # publication and lifecycle state. Anchors too, but for a few nuggets (at most 1 %):
    # INO adds the words of the probes that failed, and a probe at the margin of the
    # ranking passes or fails with BM25 statistics that differ between the copies of a
    # replicated shard (deleted versions count until each copy merges them away); one
    # run measured 4 of 829 items with one word apart ("decide" / "follow") in one
    # anchor, and on one node a shuffled order changed nothing (README, "Real servers for
    # development").
    assert _records(state) == _records(expected)
    moved = [k for k in state if state[k] != expected[k]]
    assert len(moved) <= len(state) // 100, moved
    letters = await dep.dead_letters()  # at least once, each with its source offset
    # A good event is never dead-lettered, not even once while a node was down (its
    # failure is retried); when one is, the reason says which error was not seen as passing.
    wrong = [(d.stage, d.reason, d.error, d.source) for d in letters
             if d.value not in set(mix.malformed)]
    assert wrong == []
    assert set(d.value for d in letters) == set(mix.malformed)
    assert len({d.source for d in letters}) == len(mix.malformed)
    # Every call answered while a quorum existed
    for phase in ("stream", "rejoin", "recovered"):
        assert querier.codes(phase) == {"OK": querier.codes(phase)["OK"]}, (
            phase, querier.codes(phase))
    assert querier.codes("stream")["OK"] > 100
    # Without a quorum (and with shards unreachable): UNAVAILABLE, never another code
    assert set(querier.codes("no quorum")) <= {"OK", "UNAVAILABLE"}
    assert set(querier.codes("recovery")) <= {"OK", "UNAVAILABLE"}
    assert unavailable == querier.codes("no quorum")["UNAVAILABLE"] + \
        querier.codes("recovery")["UNAVAILABLE"]
    # Each answer with its hits: the corpus answers this query in every phase. (Earlier
    # runs asked for nuggets only, of which none is published here: those empty answers
    # were the test's, not the service's.)
    empty = Counter(p for p, code, hits in querier.calls if code == "OK" and not hits
                    and p in ("stream", "rejoin", "recovery", "recovered"))
    assert not empty, (f"OK answers without hits, by phase: {dict(empty)}; shards then: "
                       f"{querier.empty}; service log:\n{serve.tail(3000)}")


async def test_a_node_killed_while_two_processes_write_keeps_every_lineage_a_chain(
        opensearch_cluster: str) -> None:
    url = opensearch_cluster
    store = OpenSearchStore(url, index=f"cluster-{uuid.uuid4().hex[:12]}",
                            layout=IndexLayout(shards=3, replicas=1))
    index = NuggetIndex(store, DigestEmbedder(), Settings())
    await index.start()
    try:
        ids = await _seed(index)
        failures: list[str] = []
        reads = 0
        stop = asyncio.Event()

        async def reader() -> None:
            nonlocal reads
            while not stop.is_set():
                try:
                    await store.head(TENANT, ids["a"])
                    reads += 1
                except NuggetflowError as err:
                    failures.append(f"{time.monotonic():.1f} {err}")
                await asyncio.sleep(0.1)

        async def fault() -> None:
            await asyncio.sleep(8)  # the writers start 6 s after the race is launched
            await asyncio.to_thread(_run, OPENSEARCH, "kill", "3")

        reading = asyncio.create_task(reader())
        killing = asyncio.create_task(fault())
        records = await asyncio.to_thread(_race, url, store.index, ids, unguarded=False,
                                          edits=20, layout=(3, 1))
        await killing
        stop.set()
        await reading
        assert [r for r in records if r["outcome"] != "applied"] == []
        assert await _faults(index, ids, records) == []
        assert reads > 50 and failures == [], failures
    finally:
        await asyncio.to_thread(_run, OPENSEARCH, "start-node", "3")
        await store.drop()
        await index.stop()
