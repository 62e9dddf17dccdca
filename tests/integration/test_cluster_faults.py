"""Faults on real clusters: a 3-broker Kafka cluster and a 3-node OpenSearch cluster on
loopback (deploy/kafka/cluster.sh, deploy/opensearch/cluster.sh).

- Kafka: 1,000 mixed events stream through two workers while one broker is killed
  (kill -9) and later restarted; topics are replicated 3 times with min.insync.replicas 2
  and every producer uses acks=all with idempotence. Every actionable event gets exactly
  one nugget, every malformed one a dead letter, as in an undisturbed run.
- OpenSearch: two writer processes race on the same lineages over a cluster index with one
  replica while a node is killed; reads are answered throughout, every lineage stays a
  chain and every request is applied once.
"""

from __future__ import annotations

import asyncio
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from nuggetflow.errors import NuggetflowError
from nuggetflow.settings import Settings
from query.backends.opensearch import IndexLayout, OpenSearchStore
from query.embeddings import MiniLMEmbedder
from query.index import NuggetIndex
from stream.synthetic import mixed_events
from tests.integration.stream_support import Deployment
from tests.integration.test_opensearch_writers import TENANT, _faults, _race, _seed
from tests.integration.test_stream_kafka import (
    check_outcome,
    publish,
    reference_state,
    wait_done,
)
from tests.support.race_writer import DigestEmbedder

pytestmark = [pytest.mark.integration, pytest.mark.cluster, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
KAFKA = ROOT / "deploy/kafka/cluster.sh"
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


async def test_a_broker_killed_mid_stream_loses_and_repeats_nothing(
        kafka_cluster: str, tmp_path: Path, embedder: MiniLMEmbedder) -> None:
    dep = Deployment.create(kafka_cluster, tmp_path, NUGGETFLOW_STREAM_REPLICATION_FACTOR="3",
                            NUGGETFLOW_STREAM_MIN_INSYNC_REPLICAS="2",
                            NUGGETFLOW_REVIEW_POLICY="manual")
    await dep.add_corpus(embedder)
    mix = mixed_events(1000, seed=7)
    workers = [dep.worker("w1").start(), dep.worker("w2").start()]
    try:
        await publish(dep, mix.lines[:500])
        await asyncio.sleep(5)
        await asyncio.to_thread(_run, KAFKA, "kill", "2")
        await publish(dep, mix.lines[500:], start=501)  # two brokers left: acks=all, ISR 2
        await asyncio.sleep(10)
        await asyncio.to_thread(_run, KAFKA, "start-node", "2")
        await wait_done(dep, embedder, mix, workers, timeout=600)
    finally:
        for w in workers:
            assert w.stop() == 0, w.tail()
    # Nothing is published (manual review), so what INO optimizes against does not
    # depend on the order two workers took the events in: the index must equal the
    # in-process run's exactly.
    state = await check_outcome(dep, embedder, mix, auto_tenants=())
    assert state == await reference_state(dep, embedder, mix, tmp_path)
    letters = await dep.dead_letters()  # at least once, each with its source offset
    assert set(d.value for d in letters) == set(mix.malformed)
    assert len({d.source for d in letters}) == len(mix.malformed)


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
