"""The nuggetflow-client wheel in a fresh virtualenv talks to a real deployment.

The wheel is built from client/ (pip, no build isolation) and installed with its
dependencies from the package index into a new venv that has neither the server nor
onnxruntime nor faiss. Scripts run there:

- against ``nuggetflow serve`` from this checkout (SQLite store with seeded nuggets, a
  token file): retrieve, report citations, read a nugget, a typed error with its field;
- installed as the README says (``pip install './client[kafka]'``, pip building it with
  setuptools from the index), against a real broker and ``nuggetflow worker``: feedback
  published by the client (canonical JSON and protobuf binary) is read by the worker
  without dead letters and becomes a candidate; the client then finds it in the review
  queue of ``nuggetflow serve``, approves it and retrieves it.

Nothing here skips: a venv or an install that fails, or a server that does not start,
fails the test.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from nuggetflow_client.v1 import nugget_pb2
from query.backends.sqlite import SQLiteStore
from query.embeddings import MiniLMEmbedder
from stream.events import parse_event
from stream.synthetic import correction
from stream.topics import TopicKind
from tests.conformance.service_suite import QUERY, seed_nuggets
from tests.integration.stream_support import Deployment, read_topic, wait_until
from tests.support.net import free_port as _free_port

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "client-dist-token-0123456789"
HEAVY = ("nuggetflow", "query", "onnxruntime", "faiss", "numpy", "tokenizers", "aiokafka")
# the environment of everything run in the fresh venv: nothing of this checkout on the path
CLEAN_ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}

ASSISTANT = r"""
import importlib.util, json, sys
from datetime import datetime, timezone

from nuggetflow_client import InvalidArgument, NotFound, QueryClient, feedback_event

target, token, query = sys.argv[1:4]
with QueryClient(target, token, timeout=60) as nf:
    found = nf.retrieve("acme", query, k=3, as_of=datetime(2024, 1, 11, tzinfo=timezone.utc))
    top = found.hits[0]
    cited = nf.report_citations("acme", found.request_id, [top.id])
    record = nf.get_nugget("acme", top.lineage_id)
    try:
        nf.report_citations("acme", found.request_id, ["n-never-retrieved"])
    except InvalidArgument as exc:
        invalid = {"code": exc.code, "field": exc.field, "method": exc.method}
    try:
        nf.get_nugget("acme", "n-0000000000000000")
    except NotFound as exc:
        missing = exc.field
print(json.dumps({
    "request_id": found.request_id, "hits": [h.id for h in found.hits],
    "top": {"type": top.type, "title": top.title, "valid_from": top.valid_from.isoformat()},
    "context_block": found.context_block,
    "citations": {"accepted": cited.accepted, "retrieved": cited.retrieved},
    "record": {"id": record.id, "publication": record.publication,
               "anchors": list(record.anchors)},
    "invalid": invalid, "missing": missing,
    "event_ok": bool(feedback_event("acme", query, rating="up").event_id),
    "client_file": __import__("nuggetflow_client").__file__,
    "importable": {m: importlib.util.find_spec(m) is not None for m in sys.argv[4].split(",")},
}))
"""

PUBLISH = r"""
import asyncio, json, sys

from nuggetflow_client import FeedbackPublisher, feedback_event, publish_feedback

bootstrap, prefix, query, answer, comment = sys.argv[1:6]


async def main():
    correction = feedback_event("acme", query, answer=answer, rating="down", comment=comment,
                                user="user-1", agent="chat", event_id="client-1")
    chat = feedback_event("acme", "q?", answer="a.", comment="meh", event_id="client-2")
    async with FeedbackPublisher(bootstrap, topic_prefix=prefix) as pub:
        await pub.publish(correction)
    return pub.topic, correction, chat

topic, correction, chat = asyncio.run(main())
publish_feedback(bootstrap, chat, topic_prefix=prefix, wire_format="protobuf")  # blocking
print(json.dumps({"topic": topic,
                  "events": [e.SerializeToString().hex() for e in (correction, chat)]}))
"""

REVIEW = r"""
import json, sys

from nuggetflow_client import QueryClient

target, token, query = sys.argv[1:4]
with QueryClient(target, token, timeout=120) as nf:
    waiting = nf.list_candidates("acme")
    mine = [n for n in waiting.nuggets if n.provenance.event_id == "client-1"]
    approved = nf.review("acme", mine[0].lineage_id, "approve", reviewer="assistant-team",
                         reason="checked", request_id="client-review-1")
    found = nf.retrieve("acme", query, k=5, gate=False)
    cited = nf.report_citations("acme", found.request_id, [approved.id])
    left = [n.id for n in nf.list_candidates("acme").nuggets]
print(json.dumps({
    "waiting": [n.provenance.event_id for n in waiting.nuggets],
    "candidate": {"id": mine[0].id, "publication": mine[0].publication,
                  "trigger_query": mine[0].provenance.trigger_query},
    "approved": {"id": approved.id, "publication": approved.publication,
                 "version": approved.version, "request_id": approved.request_id},
    "hits": [h.id for h in found.hits], "accepted": cited.accepted,
    "left": left,
}))
"""




def _run(cmd: list[str], what: str, timeout: float, *, env: dict[str, str] | None = None,
         cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                          cwd=cwd)
    if proc.returncode != 0:
        pytest.fail(f"{what} failed ({proc.returncode}):\n{proc.stdout[-3000:]}"
                    f"\n{proc.stderr[-3000:]}")
    return proc


def _in_venv(py: Path, script: str, *args: str, cwd: Path, what: str) -> dict[str, object]:
    """Run a script with the venv's python, isolated (-I), from ``cwd``; its last line of
    output is JSON."""
    path = cwd / "script.py"
    path.write_text(script)
    proc = _run([str(py), "-I", str(path), *args], what, 300, env=CLEAN_ENV, cwd=cwd)
    out: dict[str, object] = json.loads(proc.stdout.splitlines()[-1])
    return out


@pytest.fixture(scope="module")
def client_wheel(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The wheel of client/, built by pip from a copy (no build files left in client/),
    and the copy."""
    tmp = tmp_path_factory.mktemp("client-wheel")
    src = tmp / "client"
    shutil.copytree(ROOT / "client", src, ignore=shutil.ignore_patterns(
        "__pycache__", "build", "*.egg-info", "dist"))
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
          "--disable-pip-version-check", "-q", str(src), "-w", str(tmp / "dist")],
         "pip wheel client/", 300)
    (wheel,) = (tmp / "dist").glob("nuggetflow_client-*.whl")
    return wheel, src


def make_venv(where: Path, dist: Path, extra: str = "") -> tuple[Path, dict[str, float]]:
    """A new venv with ``dist`` (a wheel, or the client's source folder as in
    ``pip install ./client``) with ``extra`` and the dependencies; its python and the
    seconds each step took."""
    t = time.monotonic()
    venv = where / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], "python -m venv", 300)
    timings = {"venv": time.monotonic() - t}
    t = time.monotonic()
    py = venv / "bin" / "python"
    spec = f"{dist}[{extra}]" if extra else str(dist)
    _run([str(py), "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "-q",
          spec], f"pip install {spec} (dependencies from the package index)", 600,
         env=CLEAN_ENV)
    timings["install"] = time.monotonic() - t
    return py, timings


def _installed(py: Path) -> dict[str, str]:
    listed = _run([str(py), "-m", "pip", "list", "--format=json",
                   "--disable-pip-version-check"], "pip list", 120, env=CLEAN_ENV)
    return {d["name"].lower().replace("_", "-"): d["version"] for d in json.loads(listed.stdout)}


@contextmanager
def serving(workdir: Path, store: str, tokens: dict[str, list[str]]) -> Iterator[int]:
    """``nuggetflow serve`` from this checkout on ``store``; yields its gRPC port."""
    token_file = workdir / "tokens.json"
    token_file.write_text(json.dumps(tokens))
    port, metrics = _free_port(), _free_port()
    env = {**os.environ, "NUGGETFLOW_STORE": store,
           "NUGGETFLOW_AUTH_TOKENS_FILE": str(token_file),
           "NUGGETFLOW_GRPC_GRACE_SECONDS": "1"}
    log_path = workdir / "serve.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "app.cli", "serve", "--host",
                                 "127.0.0.1", "--port", str(port), "--metrics-port",
                                 str(metrics), "--workers", "1"],
                                cwd=ROOT, env=env, stderr=log)
    try:
        deadline = time.monotonic() + 180
        while True:
            if proc.poll() is not None:
                pytest.fail(f"nuggetflow serve exited ({proc.returncode}):\n"
                            + log_path.read_text()[-3000:])
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{metrics}/metrics", timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("nuggetflow serve did not start:\n"
                                + log_path.read_text()[-3000:])
                time.sleep(0.3)
        yield port
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def test_client_wheel_in_a_fresh_venv_talks_to_the_service(
        client_wheel: tuple[Path, Path], tmp_path: Path, embedder: MiniLMEmbedder) -> None:
    py, timings = make_venv(tmp_path, client_wheel[0])

    # Only the client and its two dependencies (and what they need): no server, no models.
    installed = _installed(py)
    assert installed["nuggetflow-client"] == "0.1.0"
    assert installed["grpcio"] == "1.85.1" and installed["protobuf"] == "7.36.2"
    for heavy in ("nuggetflow", "onnxruntime", "faiss-cpu", "numpy", "tokenizers",
                  "aiokafka", "faust-streaming", "opensearch-py"):
        assert heavy not in installed, heavy
    for module in ("onnxruntime", "faiss"):
        failed = subprocess.run([str(py), "-I", "-c", f"import {module}"], env=CLEAN_ENV,
                                capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert failed.returncode != 0 and "ModuleNotFoundError" in failed.stderr, module

    store = SQLiteStore(tmp_path / "nf.db")
    store.start_sync()
    nuggets = seed_nuggets()
    values = list(nuggets.values())
    store.write_nuggets_sync(values, list(embedder.embed([n.embedding_text for n in values])))
    asyncio.run(store.stop())
    ids = {k: v.id for k, v in nuggets.items()}
    with serving(tmp_path, f"sqlite:///{tmp_path}/nf.db", {TOKEN: ["acme"]}) as port:
        t = time.monotonic()
        out = _in_venv(py, ASSISTANT, f"127.0.0.1:{port}", TOKEN, QUERY, ",".join(HEAVY),
                       cwd=tmp_path, what="the client script in the fresh venv")
        timings["calls"] = time.monotonic() - t
    print("fresh-venv timings (s):", {k: round(v, 1) for k, v in timings.items()})

    assert str(out["client_file"]).startswith(str(py.parent.parent)), "the wheel ran"
    assert out["importable"] == dict.fromkeys(HEAVY, False)
    hits = out["hits"]
    assert isinstance(hits, list) and hits[0] == ids["published"] and out["request_id"]
    assert ids["pending"] not in hits, "unreviewed nuggets are never served"
    assert out["top"] == {"type": "nugget",
                          "title": "Password reset role restriction in portal v8.2",
                          "valid_from": "2024-01-01T00:00:00+00:00"}
    assert str(out["context_block"]).startswith("Established facts:")
    assert out["citations"] == {"accepted": 1, "retrieved": len(hits)}
    assert out["record"] == {
        "id": ids["published"], "publication": nugget_pb2.PUBLISHED,
        "anchors": ["which role can reset a teammate's password in v8.2",
                    "can analysts reset other users' passwords"]}
    assert out["invalid"] == {"code": "INVALID_ARGUMENT", "field": "cited_ids",
                              "method": "ReportCitations"}
    assert out["missing"] == "id" and out["event_ok"]


async def test_kafka_extra_feedback_reaches_the_worker_and_the_review_queue(
        client_wheel: tuple[Path, Path], kafka_bootstrap: str, tmp_path: Path,
        embedder: MiniLMEmbedder) -> None:
    dep = Deployment.create(kafka_bootstrap, tmp_path, NUGGETFLOW_REVIEW_POLICY="manual")
    await dep.add_corpus(embedder)
    # the README's way: pip install './client[kafka]' (from the source folder, pip builds)
    py, timings = make_venv(tmp_path, client_wheel[1], "kafka")
    installed = _installed(py)
    assert installed["aiokafka"] == "0.14.0"
    assert not {"nuggetflow", "onnxruntime", "faiss-cpu", "numpy"} & set(installed)

    query, answer, comment = correction(0)
    prefix = dep.env["NUGGETFLOW_STREAM_PREFIX"]
    sent = _in_venv(py, PUBLISH, kafka_bootstrap, prefix, query, answer, comment,
                    cwd=tmp_path, what="publishing feedback from the fresh venv")
    topic = dep.topics.name(TopicKind.EVENTS)
    assert sent["topic"] == topic

    # on the topic as nuggetflow publish puts it: keyed by tenant, JSON then binary
    records = await read_topic(kafka_bootstrap, topic)
    assert [r.key for r in records] == [b"acme", b"acme"]
    assert records[0].value.startswith(b"{") and not records[1].value.startswith(b"{")
    events = sent["events"]
    assert isinstance(events, list)
    assert [parse_event(r.value).SerializeToString().hex() for r in records] == events

    worker = dep.worker("w").start()
    try:
        async def candidate() -> bool:
            index_store = SQLiteStore(dep.store_path)
            await index_store.start()
            try:
                return bool(await index_store.find_by_event("acme", "client-1"))
            finally:
                await index_store.stop()

        await wait_until(candidate, 120, "the candidate from the client's feedback",
                         worker.tail)
    finally:
        assert worker.stop() == 0, worker.tail()
    assert await dep.dead_letters() == [], "the worker read both formats"

    with serving(tmp_path, dep.env["NUGGETFLOW_STORE"], {TOKEN: ["acme"]}) as port:
        out = _in_venv(py, REVIEW, f"127.0.0.1:{port}", TOKEN, query, cwd=tmp_path,
                       what="reviewing from the fresh venv")
    print("fresh-venv [kafka] timings (s):", {k: round(v, 1) for k, v in timings.items()})
    assert out["waiting"] == ["client-1"], "the correction waits for review; the chat not"
    candidate_ = out["candidate"]
    approved = out["approved"]
    assert isinstance(candidate_, dict) and isinstance(approved, dict)
    assert candidate_["publication"] == nugget_pb2.PENDING_REVIEW
    assert candidate_["trigger_query"] == query
    assert approved["publication"] == nugget_pb2.PUBLISHED and approved["version"] == 2
    assert approved["request_id"] == "client-review-1"
    hits = out["hits"]
    assert isinstance(hits, list) and approved["id"] in hits, "the approved nugget is served"
    assert out["accepted"] == 1 and out["left"] == []
