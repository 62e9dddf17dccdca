"""The nuggetflow-client wheel in a fresh virtualenv talks to a real ``nuggetflow serve``.

The wheel is built from client/ (pip, no build isolation), installed with its
dependencies (grpcio and protobuf from the package index) into a new venv that has
neither the server nor onnxruntime nor faiss, and a script run there retrieves, reports
citations, reads a nugget and gets a typed error from a service started from this
checkout (SQLite store with seeded nuggets, a token file). Nothing here skips: a venv or
an install that fails, or a server that does not start, fails the test.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from nuggetflow_client.v1 import nugget_pb2
from query.backends.sqlite import SQLiteStore
from query.embeddings import MiniLMEmbedder
from tests.conformance.service_suite import QUERY, seed_nuggets

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "client-dist-token-0123456789"
HEAVY = ("nuggetflow", "query", "onnxruntime", "faiss", "numpy", "tokenizers", "aiokafka")

SCRIPT = r"""
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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run(cmd: list[str], what: str, timeout: float, *, env: dict[str, str] | None = None,
         cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                          cwd=cwd)
    if proc.returncode != 0:
        pytest.fail(f"{what} failed ({proc.returncode}):\n{proc.stdout[-3000:]}"
                    f"\n{proc.stderr[-3000:]}")
    return proc


@pytest.fixture
def fresh_venv(tmp_path: Path) -> Iterator[tuple[Path, dict[str, float]]]:
    """A new venv with only the client wheel and its dependencies; and the timings."""
    timings: dict[str, float] = {}
    started = time.monotonic()
    src = tmp_path / "client-src"
    shutil.copytree(ROOT / "client", src, ignore=shutil.ignore_patterns(
        "__pycache__", "build", "*.egg-info", "dist"))
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
          "--disable-pip-version-check", "-q", str(src), "-w", str(tmp_path / "dist")],
         "pip wheel client/", 300)
    (wheel,) = (tmp_path / "dist").glob("nuggetflow_client-*.whl")
    timings["wheel"] = time.monotonic() - started

    t = time.monotonic()
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], "python -m venv", 300)
    timings["venv"] = time.monotonic() - t
    t = time.monotonic()
    py = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    _run([str(py), "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "-q",
          str(wheel)], "pip install the client wheel (grpcio, protobuf from the index)", 600,
         env=env)
    timings["install"] = time.monotonic() - t
    yield py, timings


@pytest.fixture
def served(tmp_path: Path, embedder: MiniLMEmbedder) -> Iterator[tuple[int, dict[str, str]]]:
    """``nuggetflow serve`` from this checkout on a seeded SQLite store, with a token."""
    store = SQLiteStore(tmp_path / "nf.db")
    store.start_sync()
    nuggets = seed_nuggets()
    values = list(nuggets.values())
    store.write_nuggets_sync(values, list(embedder.embed([n.embedding_text for n in values])))
    asyncio.run(store.stop())
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({TOKEN: ["acme"]}))
    port, metrics = _free_port(), _free_port()
    env = {**os.environ, "NUGGETFLOW_STORE": f"sqlite:///{tmp_path}/nf.db",
           "NUGGETFLOW_AUTH_TOKENS_FILE": str(tokens),
           "NUGGETFLOW_GRPC_GRACE_SECONDS": "1"}
    log_path = tmp_path / "serve.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "nuggetflow.cli", "serve", "--host",
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
        yield port, {k: v.id for k, v in nuggets.items()}
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def test_client_wheel_in_a_fresh_venv_talks_to_the_service(
        fresh_venv: tuple[Path, dict[str, float]], served: tuple[int, dict[str, str]],
        tmp_path: Path) -> None:
    py, timings = fresh_venv
    port, ids = served
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}

    # Only the client and its two dependencies (and what they need): no server, no models.
    listed = _run([str(py), "-m", "pip", "list", "--format=json",
                   "--disable-pip-version-check"], "pip list", 120, env=env)
    installed = {d["name"].lower().replace("_", "-"): d["version"]
                 for d in json.loads(listed.stdout)}
    assert installed["nuggetflow-client"] == "0.1.0"
    assert installed["grpcio"] == "1.85.1" and installed["protobuf"] == "7.36.2"
    for heavy in ("nuggetflow", "onnxruntime", "faiss-cpu", "numpy", "tokenizers",
                  "aiokafka", "faust-streaming", "opensearch-py"):
        assert heavy not in installed, heavy
    for module in ("onnxruntime", "faiss"):
        failed = subprocess.run([str(py), "-I", "-c", f"import {module}"], env=env,
                                capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert failed.returncode != 0 and "ModuleNotFoundError" in failed.stderr, module

    script = tmp_path / "assistant.py"
    script.write_text(SCRIPT)
    t = time.monotonic()
    ran = _run([str(py), "-I", str(script), f"127.0.0.1:{port}", TOKEN, QUERY,
                ",".join(HEAVY)], "the client script in the fresh venv", 300, env=env,
               cwd=tmp_path)
    timings["calls"] = time.monotonic() - t
    out = json.loads(ran.stdout.splitlines()[-1])
    print("fresh-venv timings (s):", {k: round(v, 1) for k, v in timings.items()})

    assert out["client_file"].startswith(str(py.parent.parent)), "the installed wheel ran"
    assert not any(out["importable"].values()), out["importable"]
    assert out["hits"][0] == ids["published"] and out["request_id"]
    assert ids["pending"] not in out["hits"], "unreviewed nuggets are never served"
    assert out["top"] == {"type": "nugget",
                          "title": "Password reset role restriction in portal v8.2",
                          "valid_from": "2024-01-01T00:00:00+00:00"}
    assert out["context_block"].startswith("Established facts:")
    assert out["citations"] == {"accepted": 1, "retrieved": len(out["hits"])}
    assert out["record"]["id"] == ids["published"]
    assert out["record"]["publication"] == nugget_pb2.PUBLISHED
    assert out["record"]["anchors"][0] == "which role can reset a teammate's password in v8.2"
    assert out["invalid"] == {"code": "INVALID_ARGUMENT", "field": "cited_ids",
                              "method": "ReportCitations"}
    assert out["missing"] == "id" and out["event_ok"]
