"""INO end to end through a team's own agent, every part its own process: the query
service (``nuggetflow serve``), the reference agent (``examples/agent``) and the worker
on the embedded runner (``nuggetflow run`` with ``NUGGETFLOW_HARNESS=external``).

The worked example's correction goes through the runner twice, on two copies of one
index: with the built-in harness and through the agent (same local generator). Both must
optimize it the same way (same final nugget and INO outcome; and, from ``nuggetflow
optimize``, which writes the whole trace, the same probes, ranks, scores, answers and
revisions); the probes must leave no trace in the service's production metrics or in
the index (only the submitted candidate is written, by the runner), and every probe
session is closed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from nuggetflow.settings import Settings
from query.backends.sqlite import SQLiteStore
from query.corpus import Document, passages_of
from query.embeddings import MiniLMEmbedder
from query.index import NuggetIndex
from query.model import Nugget, Publication
from stream.synthetic import PORTAL, T0, event
from tests.integration.stream_support import ROOT
from tests.support.net import free_port, metrics_text, samples
from tests.unit.optimizer.test_worked_example import EVENT

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TOKEN = "worker-token-0123456789abcdef"


class Process:
    """A child process with its log in a file; stopped with SIGTERM."""

    def __init__(self, name: str, args: list[str], env: dict[str, str], log: Path) -> None:
        self.name = name
        self.log = log
        with log.open("ab") as out:
            self.proc = subprocess.Popen(args, cwd=ROOT, env={**os.environ, **env},
                                         stdout=out, stderr=subprocess.STDOUT)

    def tail(self, n: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-n:]

    def alive(self) -> None:
        if self.proc.poll() is not None:
            pytest.fail(f"{self.name} exited ({self.proc.returncode}):\n{self.tail()}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def wait_for(check: Any, what: str, proc: Process, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        proc.alive()
        if check():
            return
        time.sleep(0.3)
    pytest.fail(f"{what} not ready in {seconds:g} s:\n{proc.tail()}")


def serving(port: int) -> bool:
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            reply = health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(),
                                                         timeout=2)
            return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)
    except grpc.RpcError:
        return False


def metrics(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return samples(metrics_text(port))


def nuggetflow(store: Path, log: Path, *args: str, **env: str) -> dict[str, Any]:
    """A ``nuggetflow`` command on ``store``; its JSON summary (the last line)."""
    proc = subprocess.run(
        [sys.executable, "-m", "app.cli", *args], cwd=ROOT, capture_output=True,
        text=True, timeout=600, env={**os.environ, "NUGGETFLOW_STORE": f"sqlite:///{store}",
                                     "NUGGETFLOW_LOG_LEVEL": "INFO", **env})
    log.write_text(proc.stdout + proc.stderr)
    assert proc.returncode == 0, proc.stderr[-4000:]
    summary: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return summary


def run_worker(store: Path, feedback: Path, log: Path, **env: str) -> dict[str, Any]:
    """``nuggetflow run`` (the worker's steps on the embedded runner) on one event."""
    return nuggetflow(store, log, "run", str(feedback), "--policy", "manual", **env)


def traces(store: Path, feedback: Path, out: Path, **env: str) -> dict[str, Any]:
    """``nuggetflow optimize``: the same INO, with the whole per-probe trace written out
    (the runner keeps only its outcome on the nugget); timings and call counts dropped."""
    nuggetflow(store, out.with_suffix(".log"), "optimize", "--feedback", str(feedback),
               "--out", str(out), **env)
    [line] = out.read_text().splitlines()
    opt: dict[str, Any] = json.loads(line)["optimization"]
    for h in opt["history"]:
        for k in ("seconds", "llm_calls", "tokens"):
            h.pop(k)
    return opt


async def stored(store: Path, embedder: MiniLMEmbedder) -> list[Nugget]:
    index = NuggetIndex(SQLiteStore(store), embedder, Settings.from_env({}))
    await index.start()
    try:
        heads = await index.store.find_by_event("acme", EVENT.event_id)
        stats = await index.store.stats()
        assert stats["nuggets"] == len(heads), "nothing but the submitted candidate"
        return heads
    finally:
        await index.stop()


def comparable(n: Nugget) -> dict[str, Any]:
    """The candidate the runner submitted: its text and INO's outcome (without what the
    run cost: time, calls and tokens differ by harness, the agent's call is one more)."""
    return {"title": n.title, "body": n.body, "anchors": n.anchors,
            "optimization": without_cost(n.optimization)}


_COST_KEYS = ("second", "call", "token", "cost")


def without_cost(value: Any) -> Any:
    """``value`` with every mapping key that names a cost (seconds, calls, tokens, cost)
    left out, at any depth."""
    if isinstance(value, dict):
        return {k: without_cost(v) for k, v in value.items()
                if not any(word in k for word in _COST_KEYS)}
    if isinstance(value, list):
        return [without_cost(v) for v in value]
    return value


async def test_ino_through_the_reference_agent_as_through_the_built_in_harness(
        tmp_path: Path, embedder: MiniLMEmbedder) -> None:
    external_db, builtin_db = tmp_path / "external.db", tmp_path / "builtin.db"
    index = NuggetIndex(SQLiteStore(external_db), embedder, Settings.from_env({}))
    await index.start()
    try:
        for doc_id, title, text in PORTAL:
            await index.ingest_passages(passages_of(Document(doc_id, "acme", title, text,
                                                             valid_from=T0), 800))
    finally:
        await index.stop()
    shutil.copy(external_db, builtin_db)
    feedback = tmp_path / "feedback.jsonl"
    feedback.write_text(json.dumps(event(EVENT.event_id, "acme", EVENT.query, EVENT.answer,
                                         EVENT.comment)) + "\n")

    grpc_port, metrics_port, agent_port = free_port(), free_port(), free_port()
    serve = Process("nuggetflow serve", [sys.executable, "-m", "app.cli", "serve"], {
        "NUGGETFLOW_STORE": f"sqlite:///{external_db}", "NUGGETFLOW_GRPC_PORT": str(grpc_port),
        "NUGGETFLOW_METRICS_PORT": str(metrics_port),
        "NUGGETFLOW_AUTH_TOKENS": json.dumps({TOKEN: ["acme"]})}, tmp_path / "serve.log")
    agent: Process | None = None
    try:
        wait_for(lambda: serving(grpc_port), "the query service", serve)
        agent = Process("the reference agent", [
            sys.executable, "-m", "examples.agent.agent", "--port", str(agent_port),
            "--query-service", f"127.0.0.1:{grpc_port}", "--token", TOKEN],
            {}, tmp_path / "agent.log")
        wait_for(lambda: '"agent"' in agent.tail() if agent else False, "the agent", agent)
        external = {"NUGGETFLOW_HARNESS": "external",
                    "NUGGETFLOW_AGENT_URL": f"http://127.0.0.1:{agent_port}/answer",
                    "NUGGETFLOW_PROBE_SERVICE": f"127.0.0.1:{grpc_port}",
                    "NUGGETFLOW_PROBE_SERVICE_TOKEN": TOKEN}
        summary = run_worker(external_db, feedback, tmp_path / "run-external.log",
                             **external)
        assert summary["candidates"] == 1 and summary["dead_letters"] == 0, summary
        ext_trace = traces(external_db, feedback, tmp_path / "external.jsonl", **external)
        after = metrics(metrics_port)
    finally:
        if agent is not None:
            agent.stop()
        serve.stop()
    reference = run_worker(builtin_db, feedback, tmp_path / "run-builtin.log")
    assert reference["candidates"] == 1, reference
    ref_trace = traces(builtin_db, feedback, tmp_path / "builtin.jsonl")

    [ext] = await stored(external_db, embedder)
    [ref] = await stored(builtin_db, embedder)
    assert ext.publication is Publication.PENDING_REVIEW
    assert ext.optimization is not None and ext.optimization["passed"]
    assert comparable(ext) == comparable(ref)
    # The whole trace: probes, ranks, gate scores, competitors, answers, revisions.
    assert ext_trace == ref_trace
    assert ext_trace["passed"] and ext_trace["iterations"] == ext.optimization["iterations"]
    probes = [p for h in ext_trace["history"] for p in h["probes"]]
    assert probes and all("note" not in p for p in probes)
    assert all(p["reached_generator"] and p["cited"] for p in ext_trace["history"][-1][
        "probes"])

    def value(name: str, **labels: str) -> float:
        return after.get((name, tuple(sorted(labels.items()))), 0.0)

    m = "nuggetflow_query_"
    duration = m + "request_duration_seconds_count"
    rounds = len(ext_trace["history"])  # the runner's INO and optimize's, the same work
    assert value(duration, method="Retrieve.probe", code="OK") == 2 * len(probes)
    assert value(duration, method="OpenProbeSession", code="OK") == 2 * rounds
    assert value(duration, method="CloseProbeSession", code="OK") == 2 * rounds
    assert value(duration, method="Retrieve", code="OK") == 0
    assert value(duration, method="ReportCitations", code="OK") == 0
    for name in ("retrieve_requests_total", "retrieve_requests_with_nuggets_total",
                 "citation_reports_total"):
        assert value(m + name, tenant="acme") == 0, name
    for kind in ("nugget", "document"):
        assert value(m + "retrieved_items_total", tenant="acme", type=kind) == 0
        assert value(m + "cited_items_total", tenant="acme", type=kind) == 0
    assert value(m + "citation_ledger_entries") == 0
    assert value(m + "probe_sessions") == 0, "every session was closed"


async def test_the_reference_agent_publishes_feedback_to_kafka(kafka_bootstrap: str) -> None:
    """POST /feedback's publisher: a FeedbackEvent the worker can read, keyed by tenant."""
    import asyncio
    import uuid

    from examples.agent.agent import FeedbackPublisher, feedback_event
    from stream.events import parse_event
    from tests.integration.stream_support import read_topic

    topic = f"it-{uuid.uuid4().hex[:8]}.feedback.events"
    publisher = await asyncio.to_thread(FeedbackPublisher, kafka_bootstrap, topic)
    try:
        sent = feedback_event({"tenant": "acme", "query": EVENT.query, "answer": EVENT.answer,
                               "comment": EVENT.comment, "rating": "down"})
        await asyncio.to_thread(publisher.publish, sent)
    finally:
        await asyncio.to_thread(publisher.close)
    [record] = await read_topic(kafka_bootstrap, topic)
    assert record.key == b"acme"
    got = parse_event(record.value)
    assert got.event_id == sent.event_id and got.feedback.comment == EVENT.comment
