"""Stream benchmark: events/s through ingest + actionability on a real Kafka broker.

One topic is filled with N feedback events (a realistic mix from
:func:`stream.synthetic.mixed_events`: about 10% corrections, 2% malformed records, 5%
re-deliveries, the rest vague, praise, tone or questions), then, side by side in one run,
each reader starts on the whole backlog with its own consumer group:

- ``raw``: a plain aiokafka consume loop that only reads the records (the ceiling);
- ``aiokafka_steps``: a hand-written aiokafka loop running the same ingest step as the
  worker (decode, validate, local actionability, produce corrections and dead letters,
  commit) — the same work without Faust;
- ``worker``: ``nuggetflow worker`` in its own process, running only the actionability
  agent (``NUGGETFLOW_STREAM_AGENTS=actionability``), LLM backend ``local``.

Rates are measured from each reader's first record to its last (start-up and group join
are not counted); the worker's progress is read from its Prometheus counter.

Usage: python -m bench.stream_bench [--events 100000] [--bootstrap 127.0.0.1:19092]
Needs a broker: deploy/kafka/broker.sh start. Writes bench/results/stream.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from nuggetflow.logging import configure
from nuggetflow.settings import Settings
from optimizer.local import local_roles
from query.backends.sqlite import SQLiteStore
from query.embeddings import MiniLMEmbedder
from query.index import NuggetIndex
from stream.engine import InlineEngine
from stream.metrics import WorkerMetrics as Metrics
from stream.records import Record
from stream.steps import Steps
from stream.synthetic import mixed_events
from stream.topics import TopicKind, Topics, ensure_topics
from tests.support.net import free_port, metric_sum, metrics_text

ROOT = Path(__file__).resolve().parent.parent


def log(msg: str) -> None:
    """Progress on stderr."""
    print(msg, file=sys.stderr, flush=True)


class Progress:
    """First/last record times of a reader, and the count seen at the first one."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.first_t = 0.0
        self.first_n = 0
        self.last_t = 0.0
        self.n = 0

    def seen(self, n: int) -> None:
        now = time.perf_counter()
        if self.n == 0 and n > 0:
            self.first_t, self.first_n = now, n
        self.n = n
        if n >= self.total:
            self.last_t = now

    @property
    def rate(self) -> float:
        """Records per second after the first observation."""
        span = self.last_t - self.first_t
        return (self.n - self.first_n) / span if span > 0 else float("inf")


async def fill(settings: Settings, topic: str, lines: list[bytes]) -> float:
    """Produce the events (keyed by tenant where parsable); returns events/s."""
    from stream.events import parse_event

    producer = AIOKafkaProducer(bootstrap_servers=settings.kafka_bootstrap, acks="all",
                                linger_ms=20, max_batch_size=256 * 1024)
    await producer.start()
    started = time.perf_counter()
    try:
        futures = []
        for raw in lines:
            try:
                key: bytes | None = parse_event(raw).tenant.encode()
            except Exception:
                key = None
            futures.append(await producer.send(topic, raw, key=key))
        for f in futures:
            await f
    finally:
        await producer.stop()
    return len(lines) / (time.perf_counter() - started)


async def raw_consumer(settings: Settings, topic: str, total: int) -> Progress:
    """A plain aiokafka loop that only reads."""
    progress = Progress(total)
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=settings.kafka_bootstrap,
                                group_id=f"bench-raw-{uuid.uuid4().hex[:6]}",
                                auto_offset_reset="earliest", enable_auto_commit=False)
    await consumer.start()
    try:
        n = 0
        while n < total:
            batch = await consumer.getmany(timeout_ms=1000, max_records=5000)
            n += sum(len(r) for r in batch.values())
            progress.seen(n)
        await consumer.commit()
    finally:
        await consumer.stop()
    return progress


async def aiokafka_steps(settings: Settings, topic: str, total: int,
                         embedder: MiniLMEmbedder, store: Path) -> Progress:
    """The worker's ingest step in a hand-written aiokafka loop (no Faust)."""
    progress = Progress(total)
    topics = Topics.from_settings(settings)
    outputs = {k: f"{topics.name(k)}.steps-bench" for k in TopicKind}
    await ensure_topics(settings, list(outputs.values()))
    index = NuggetIndex(SQLiteStore(store), embedder, settings)
    await index.start()
    engine = InlineEngine(index.store, embedder, local_roles(), settings)
    steps = Steps(index, engine, settings, Metrics.create().pipeline)  # as in the worker
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=settings.kafka_bootstrap,
                                group_id=f"bench-steps-{uuid.uuid4().hex[:6]}",
                                auto_offset_reset="earliest", enable_auto_commit=False)
    producer = AIOKafkaProducer(bootstrap_servers=settings.kafka_bootstrap, acks="all",
                                linger_ms=5)
    await consumer.start()
    await producer.start()
    try:
        n = 0
        while n < total:
            batch = await consumer.getmany(timeout_ms=1000,
                                           max_records=settings.stream_ingest_batch)
            for tp, recs in batch.items():
                records = [Record(r.value, r.key, tp.topic, tp.partition, r.offset,
                                  tuple(r.headers)) for r in recs]
                for result in await steps.ingest(records):
                    for e in result.emits:
                        await producer.send(outputs[e.kind], e.value, key=e.key,
                                            headers=list(e.headers))
                n += len(recs)
            if batch:
                await producer.flush()
                await consumer.commit()
            progress.seen(n)
    finally:
        await producer.stop()
        await consumer.stop()
        await index.stop()
    return progress




def counter(port: int, name: str) -> float:
    """Sum of a counter on a worker's /metrics (0 when unreachable)."""
    return metric_sum(metrics_text(port, timeout=2), name)


async def worker(env: dict[str, str], total: int, workdir: Path) -> Progress:
    """``nuggetflow worker`` (actionability only) in a child process, watched via /metrics."""
    port = free_port()
    progress = Progress(total)
    out = (workdir / "worker.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "worker"], cwd=ROOT, stdout=out,
        stderr=subprocess.STDOUT,
        env={**os.environ, **env, "NUGGETFLOW_METRICS_PORT": str(port),
             "NUGGETFLOW_STREAM_AGENTS": "actionability", "NUGGETFLOW_LOG_LEVEL": "ERROR"})
    try:
        deadline = time.monotonic() + 600
        while progress.n < total:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("worker failed: "
                                   + (workdir / "worker.log").read_text()[-3000:])
            progress.seen(int(counter(port, "nuggetflow_stream_events_total")))
            await asyncio.sleep(0.02)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
        out.close()
    return progress


async def run(args: argparse.Namespace) -> dict[str, Any]:
    """Fill the topic, then run the three readers one after the other."""
    prefix = f"bench-{uuid.uuid4().hex[:6]}."
    workdir = Path(tempfile.mkdtemp(prefix="nuggetflow-stream-bench-"))
    env = {"NUGGETFLOW_KAFKA_BOOTSTRAP": args.bootstrap, "NUGGETFLOW_STREAM_PREFIX": prefix,
           "NUGGETFLOW_STORE": f"sqlite:///{workdir}/worker.db", "NUGGETFLOW_LLM": "local"}
    settings = Settings.from_env(env)
    topic = Topics.from_settings(settings).name(TopicKind.EVENTS)
    await ensure_topics(settings)
    mix = mixed_events(args.events, actionable_share=0.1, malformed_share=0.02,
                       duplicate_share=0.05, seed=7)
    log(f"producing {args.events} events to {topic} ...")
    produce_rate = await fill(settings, topic, mix.lines)
    log(f"  {produce_rate:.0f} events/s")
    embedder = MiniLMEmbedder()
    embedder.warm_up()
    log("raw aiokafka consumer ...")
    raw = await raw_consumer(settings, topic, args.events)
    log(f"  {raw.rate:.0f} events/s")
    log("aiokafka loop + ingest step ...")
    steps = await aiokafka_steps(settings, topic, args.events, embedder,
                                 workdir / "steps.db")
    log(f"  {steps.rate:.0f} events/s")
    log("nuggetflow worker (Faust, actionability agent) ...")
    faust_worker = await worker(env, args.events, workdir)
    log(f"  {faust_worker.rate:.0f} events/s")
    return {
        "events": args.events,
        "events_per_s": round(faust_worker.rate, 1),
        "raw_consumer_events_per_s": round(raw.rate, 1),
        "ratio_to_raw": round(faust_worker.rate / raw.rate, 3),
        "aiokafka_steps_events_per_s": round(steps.rate, 1),
        "ratio_to_aiokafka_steps": round(faust_worker.rate / steps.rate, 3),
        "producer_events_per_s": round(produce_rate, 1),
        "mix": {"corrections": len(mix.actionable), "not_actionable": len(mix.not_actionable),
                "malformed": len(mix.malformed), "redeliveries": mix.duplicates},
        "goals": {"events_per_s": 2000, "ratio_to_raw": 0.5},
        "command": " ".join(["python -m bench.stream_bench", *sys.argv[1:]]),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "platform": platform.platform()},
        "notes": "Each reader starts on the full backlog with its own consumer group; rates "
                 "from its first to its last record. 'worker' is `nuggetflow worker` with only "
                 "the actionability agent and the local LLM backend, in its own process; "
                 "'aiokafka_steps' runs the same ingest step in a plain aiokafka loop; "
                 "'raw' only reads. The broker runs on the same 2 cores.",
    }


def main() -> None:
    """Run the benchmark and write bench/results/stream.json."""
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--bootstrap", default="127.0.0.1:" + os.environ.get(
        "NUGGETFLOW_KAFKA_PORT", "19092"))
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "stream.json"))
    args = ap.parse_args()
    configure("ERROR")  # dead letters are expected here; keep the output readable
    result = asyncio.run(run(args))
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
