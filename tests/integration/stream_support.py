"""Helpers for the stream tests on a real broker: a deployment per test (unique topic
prefix and consumer group, its own store), worker processes, topic readers, state."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient

from nuggetflow.settings import Settings
from query.backends import make_store
from query.corpus import Document, passages_of
from query.embeddings import Embedder
from query.index import NuggetIndex
from stream.lag import LagMonitor
from stream.records import DeadLetter
from stream.synthetic import T0, portal_corpus
from stream.topics import TopicKind, Topics, group_id
from tests.support.net import free_port, metric_sum

ROOT = Path(__file__).resolve().parents[2]
TENANTS = ("acme", "globex")




@dataclass
class Deployment:
    """One isolated deployment on the shared broker: prefix, group, store, settings."""

    bootstrap: str
    workdir: Path
    env: dict[str, str] = field(default_factory=dict)

    @classmethod
    def create(cls, bootstrap: str, workdir: Path, **env: str) -> Deployment:
        prefix = f"it-{uuid.uuid4().hex[:8]}."
        base = {"NUGGETFLOW_KAFKA_BOOTSTRAP": bootstrap, "NUGGETFLOW_STREAM_PREFIX": prefix,
                "NUGGETFLOW_STORE": f"sqlite:///{workdir}/index.db",
                "NUGGETFLOW_STREAM_SESSION_TIMEOUT_SECONDS": "6",
                "NUGGETFLOW_STREAM_COMMIT_INTERVAL_SECONDS": "1",
                "NUGGETFLOW_STREAM_LAG_INTERVAL_SECONDS": "1",
                "NUGGETFLOW_LOG_LEVEL": "INFO"}
        return cls(bootstrap, workdir, {**base, **env})

    @property
    def settings(self) -> Settings:
        return Settings.from_env(self.env)

    @property
    def topics(self) -> Topics:
        return Topics.from_settings(self.settings)

    @property
    def store_path(self) -> Path:
        return self.workdir / "index.db"

    async def add_corpus(self, embedder: Embedder, settings: Settings | None = None,
                         tenants: Sequence[str] = TENANTS) -> None:
        """The portal corpus for each tenant, in this deployment's store (or the store of
        ``settings``)."""
        settings = settings or self.settings
        index = NuggetIndex(make_store(settings), embedder, settings)
        await index.start()
        try:
            for tenant in tenants:
                for rec in portal_corpus(tenant):
                    await index.ingest_passages(passages_of(Document(
                        rec["id"], tenant, rec["title"], rec["text"], valid_from=T0), 800))
        finally:
            await index.stop()

    def worker(self, name: str, **env: str) -> WorkerProcess:
        return WorkerProcess(name, {**self.env, **env}, self.workdir / f"{name}.log")

    def query_service(self, name: str, **env: str) -> WorkerProcess:
        """``nuggetflow serve`` on this deployment's store (``NUGGETFLOW_GRPC_PORT`` and
        the auth settings in ``env``)."""
        return WorkerProcess(name, {**self.env, **env}, self.workdir / f"{name}.log",
                             command=("serve",))

    async def lag(self) -> dict[tuple[str, int], int]:
        """The group's lag on the five source topics, from the broker."""
        kinds = (TopicKind.EVENTS, TopicKind.CORRECTIONS, TopicKind.CANDIDATES,
                 TopicKind.REVIEWS, TopicKind.CORPUS_CHANGES)
        mon = LagMonitor(self.bootstrap.split(","), group_id(self.settings),
                         [self.topics.name(k) for k in kinds])
        await mon.start()
        try:
            return await mon.sample()
        finally:
            await mon.stop()

    async def members(self) -> int:
        """Members of the consumer group when it is stable (0 while it rebalances)."""
        admin = AIOKafkaAdminClient(bootstrap_servers=self.bootstrap)
        await admin.start()
        try:
            [resp] = await admin.describe_consumer_groups([group_id(self.settings)])
        finally:
            await admin.close()
        [group] = resp.to_object()["groups"]
        return len(group["members"]) if group["state"] == "Stable" else 0

    async def dead_letters(self) -> list[DeadLetter]:
        return [DeadLetter.from_headers(r.value, r.headers)
                for r in await read_topic(self.bootstrap,
                                          self.topics.name(TopicKind.DEAD_LETTER))]


class WorkerProcess:
    """``nuggetflow worker`` (or another long-running command, such as ``serve``) as a
    child process with its own /metrics port and log."""

    def __init__(self, name: str, env: dict[str, str], log: Path,
                 command: Sequence[str] = ("worker",)) -> None:
        self.name = name
        self.command = list(command)
        self.port = free_port()
        self.env = {**os.environ, **env, "NUGGETFLOW_METRICS_PORT": str(self.port)}
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> WorkerProcess:
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen([sys.executable, "-m", "app.cli", *self.command],
                                         cwd=ROOT, env=self.env, stdout=out,
                                         stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"worker {self.name} exited: {self.tail()}")
            if self.metrics_text():
                return self
            time.sleep(0.2)
        raise AssertionError(f"worker {self.name} not ready in 60 s: {self.tail()}")

    def metrics_text(self) -> str:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics",
                                        timeout=2) as r:
                return str(r.read().decode())
        except OSError:
            return ""

    def metric(self, name: str, **labels: str) -> float:
        """Sum of the samples of ``name`` matching ``labels`` (0 when absent)."""
        return metric_sum(self.metrics_text(), name, **labels)

    def stop(self, timeout: float = 60) -> int:
        """SIGTERM (commits what is done), then wait."""
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else 0
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"worker {self.name} ignored SIGTERM: {self.tail()}"
                                 ) from None

    def kill(self) -> None:
        """kill -9: no commit, no cleanup."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def tail(self, n: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-n:] if self.log.exists() else ""


async def read_topic(bootstrap: str, topic: str) -> list[Any]:
    """Every record of a topic, from the beginning to the current end."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        [desc] = await admin.describe_topics([topic])
    finally:
        await admin.close()
    parts = [TopicPartition(topic, p["partition"]) for p in desc["partitions"]]
    if not parts:
        return []
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None,
                                enable_auto_commit=False, auto_offset_reset="earliest")
    await consumer.start()
    try:
        consumer.assign(parts)
        starts = await consumer.beginning_offsets(parts)
        ends = await consumer.end_offsets(parts)
        total = sum(ends[tp] - starts[tp] for tp in parts)
        for tp in parts:
            consumer.seek(tp, starts[tp])
        out: list[Any] = []
        deadline = time.monotonic() + 60
        while len(out) < total and time.monotonic() < deadline:
            batch = await consumer.getmany(timeout_ms=1000)
            for tp, records in batch.items():
                out.extend(r for r in records if r.offset < ends[tp])
        if len(out) < total:
            raise AssertionError(f"read {len(out)} of {total} records of {topic}")
        return out
    finally:
        await consumer.stop()


async def trace_events(dep: Deployment, event_ids: Sequence[str],
                       workers: Sequence[WorkerProcess] = ()) -> str:
    """Where each event is: its records on the feedback and corrections topics (partition,
    offset), the group's committed offset of those partitions, and the worker log lines
    that name it. For the failure message of an event that never got its nugget."""
    committed: dict[TopicPartition, int] = {}
    admin = AIOKafkaAdminClient(bootstrap_servers=dep.bootstrap)
    await admin.start()
    try:
        offsets = await admin.list_consumer_group_offsets(group_id(dep.settings))
        committed = {tp: meta.offset for tp, meta in offsets.items()}
    except Exception as err:  # a report: say what could not be read
        committed = {}
        lines = [f"committed offsets unread ({type(err).__name__}: {err})"]
    else:
        lines = []
    finally:
        await admin.close()
    for kind in (TopicKind.EVENTS, TopicKind.CORRECTIONS):
        topic = dep.topics.name(kind)
        try:
            records = await read_topic(dep.bootstrap, topic)
        except Exception as err:
            lines.append(f"{topic}: unread ({type(err).__name__}: {err})")
            continue
        for event_id in event_ids:
            needle = f'"{event_id}"'.encode()
            at = [(r.partition, r.offset) for r in records if needle in r.value]
            marks = ", ".join(
                f"p{p}@{o} (committed {committed.get(TopicPartition(topic, p), 'none')})"
                for p, o in at)
            lines.append(f"{event_id} on {kind.value}: {marks or 'absent'}")
    for w in workers:
        text = w.log.read_text(errors="replace") if w.log.exists() else ""
        for event_id in event_ids:
            named = [ln for ln in text.splitlines() if event_id in ln]
            lines.append(f"{w.name} log lines naming {event_id}: {len(named)}")
            lines.extend(f"  {ln[:300]}" for ln in named[:6])
    return "\n".join(lines)


async def wait_until(check: Callable[[], Awaitable[bool]], timeout: float,
                     what: str, on_timeout: Callable[[], str] = lambda: "") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if await check():
            return
        await asyncio.sleep(0.5)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}\n"
                         + on_timeout())


async def nugget_state(settings: Settings, embedder: Embedder,
                       events: Iterable[tuple[str, str]]) -> dict[tuple[str, str], Any]:
    """For each (tenant, event id): every version of its nugget(s), as comparable tuples;
    plus ``("*", "versions")``: all nugget versions in the store (the settings' store)."""
    index = NuggetIndex(make_store(settings), embedder, settings)
    await index.start()
    try:
        state: dict[tuple[str, str], Any] = {}
        for tenant, event_id in sorted(events):
            heads = await index.store.find_by_event(tenant, event_id)
            state[(tenant, event_id)] = [
                [(v.id, v.version, v.title, v.body, v.anchors, v.publication.name,
                  v.state.name) for v in await index.store.history(tenant, h.id)]
                for h in heads]
        state[("*", "versions")] = (await index.store.stats())["nuggets"]
        return state
    finally:
        await index.stop()


async def count_nuggets(settings: Settings, embedder: Embedder,
                        events: Sequence[tuple[str, str]]) -> int:
    """How many of ``events`` have a nugget now (in the settings' store)."""
    return len(events) - len(await without_nugget(settings, embedder, events))


async def without_nugget(settings: Settings, embedder: Embedder,
                         events: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The ``events`` that have no nugget now (in the settings' store)."""
    index = NuggetIndex(make_store(settings), embedder, settings)
    await index.start()
    try:
        return [(t, e) for t, e in events if not await index.store.find_by_event(t, e)]
    finally:
        await index.stop()
