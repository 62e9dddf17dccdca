"""The CLI end to end on the embedded store (subprocesses, like a user runs it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def run(args: list[str], tmp: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NUGGETFLOW_STORE": f"sqlite:///{tmp}/cli.db"}
    proc = subprocess.run([sys.executable, "-m", "nuggetflow.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def test_help_lists_the_commands(tmp_path: Path) -> None:
    out = run(["--help"], tmp_path).stdout
    for cmd in ("demo", "ingest", "search", "history", "review", "settings", "serve"):
        assert cmd in out


def test_ingest_then_search(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(json.dumps(r) for r in [
        {"id": "wall", "tenant": "x", "title": "Change the wallpaper",
         "text": "Open Settings, choose Background and pick a picture."},
        {"id": "wifi", "tenant": "x", "title": "Connect to a wireless network",
         "text": "Open the system menu, select Wi-Fi and choose a network."}]) + "\n")
    ing = run(["ingest", str(corpus), "--tenant", "gnome"], tmp_path)
    assert json.loads(ing.stdout)["passages"] == 2
    assert "ingested 2 documents" in ing.stderr
    res = json.loads(run(["search", "how do I change my background picture", "--tenant",
                          "gnome", "--json"], tmp_path).stdout)
    assert res["hits"][0]["id"] == "wall#0"
    assert res["hits"][0]["type"] == "document"


def test_errors_are_clear_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "tenant": "t"}\n')
    proc = run(["ingest", str(bad)], tmp_path, check=False)
    assert proc.returncode == 2
    assert "text" in proc.stderr and "line 1" in proc.stderr
    proc = run(["search", "x", "--tenant", "nobody"], tmp_path, check=False)
    assert proc.returncode == 2 and "unknown tenant" in proc.stderr


def test_demo_runs_on_the_embedded_default(tmp_path: Path) -> None:
    out = run(["demo", "--workdir", str(tmp_path / "demo")], tmp_path).stdout
    assert "a pending nugget is never served" in out
    assert "succeeded by" in out
    assert "Password reset role restriction in portal v8.2" in out


def test_serve_starts_logs_ports_and_stops_on_sigterm(tmp_path: Path) -> None:
    import signal
    import time
    import urllib.request

    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    from nuggetflow.v1 import query_service_pb2 as qpb
    from nuggetflow.v1 import query_service_pb2_grpc as qpb_grpc

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "wall", "tenant": "gnome", "title": "Change the "
                                  "wallpaper", "text": "Open Settings and pick Background."}))
    run(["ingest", str(corpus), "--quiet"], tmp_path)
    log_path = tmp_path / "serve.log"
    env = {**os.environ, "NUGGETFLOW_STORE": f"sqlite:///{tmp_path}/cli.db",
           "NUGGETFLOW_LOG_FORMAT": "json"}
    with log_path.open("w") as log_file:
        proc = subprocess.Popen([sys.executable, "-m", "nuggetflow.cli", "serve", "--port", "0",
                                 "--metrics-port", "0"], cwd=ROOT, env=env,
                                stdout=subprocess.DEVNULL, stderr=log_file)
    try:
        started: dict[str, object] = {}
        deadline = time.monotonic() + 120
        while not started and time.monotonic() < deadline and proc.poll() is None:
            for line in log_path.read_text().splitlines():
                if line.startswith("{") and json.loads(line)["event"] == "query service started":
                    started = json.loads(line)
            time.sleep(0.2)
        assert started, log_path.read_text()
        assert "AUTH DISABLED" in log_path.read_text(), "open mode is logged loudly"
        grpc_port, metrics_port = started["grpc_port"], started["metrics_port"]
        with grpc.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
            health = health_pb2_grpc.HealthStub(channel)
            assert health.Check(health_pb2.HealthCheckRequest(), timeout=10).status == \
                health_pb2.HealthCheckResponse.SERVING
            stub = qpb_grpc.QueryServiceStub(channel)  # type: ignore[no-untyped-call]
            reply = stub.Retrieve(qpb.RetrieveRequest(tenant="gnome", query="wallpaper picture",
                                                      include_documents=True), timeout=30)
            assert reply.hits[0].id == "wall#0"
        with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics",
                                    timeout=10) as page:
            assert 'nuggetflow_query_retrieve_requests_total{tenant="gnome"} 1.0' in \
                page.read().decode()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
        assert "query service stopped" in log_path.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
