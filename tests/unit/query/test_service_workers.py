"""`nuggetflow serve --workers 2`: worker processes share the port, the store and the
citation ledger; a killed worker is restarted; SIGTERM stops them all."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from nuggetflow.v1 import query_service_pb2 as qpb
from nuggetflow.v1 import query_service_pb2_grpc as qpb_grpc
from query.embeddings import MiniLMEmbedder
from tests.conformance.service_suite import seed_nuggets
from tests.support.net import free_port as _free_port
from tests.support.service import served_file_env

ROOT = Path(__file__).resolve().parents[3]
TOKEN = "workers-test-token-0123456789"
METADATA = (("authorization", f"Bearer {TOKEN}"),)
CHANNELS = 16




def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry.name))
    return out


def _retrieve_count(port: int) -> float:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("nuggetflow_query_request_duration_seconds_count")
               and 'method="Retrieve"' in line and 'code="OK"' in line)


def _wait(check: object, seconds: float, what: str,
          proc: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"nuggetflow serve exited ({proc.returncode}) before {what}")
        try:
            if check():  # type: ignore[operator]
                return
        except Exception:  # not up yet
            pass
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def served(tmp_path: Path, embedder: MiniLMEmbedder) -> Iterator[tuple[subprocess.Popen[bytes],
                                                                        int, int]]:
    port, metrics = _free_port(), _free_port()
    env = {**served_file_env(tmp_path / "nf.db", embedder, seed_nuggets().values(),
                             {TOKEN: ["acme"]}),
           "NUGGETFLOW_CITATION_LEDGER_PATH": str(tmp_path / "ledger.db")}
    with open(tmp_path / "serve.log", "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "app.cli", "serve", "--workers",
                                 "2", "--port", str(port), "--metrics-port", str(metrics)],
                                cwd=ROOT, env=env, stderr=log)
    try:
        for m in (metrics, metrics + 1):
            _wait(lambda m=m: _retrieve_count(m) >= 0, 120, f"worker metrics on {m}", proc)
        yield proc, port, metrics
    finally:
        if proc.poll() is None:
            proc.kill()
            for child in _children(proc.pid):
                os.kill(child, signal.SIGKILL)
            proc.wait()


async def _traffic(port: int) -> tuple[int, int]:
    """Retrieve on each of CHANNELS connections, report citations on the next one.
    Returns (retrieves, accepted citations)."""
    opts = [("grpc.use_local_subchannel_pool", 1)]  # one TCP connection per channel
    channels = [grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=opts)
                for _ in range(CHANNELS)]
    try:
        stubs = [qpb_grpc.QueryServiceStub(c) for c in channels]  # type: ignore[no-untyped-call]
        accepted = 0
        for i, stub in enumerate(stubs):
            res = await stub.Retrieve(qpb.RetrieveRequest(
                tenant="acme", query="who can reset another user's password", k=3),
                metadata=METADATA, timeout=30)
            assert res.hits, "the seeded nugget is found"
            other = stubs[(i + 1) % CHANNELS]  # likely served by the other worker
            rep = await other.ReportCitations(qpb.ReportCitationsRequest(
                tenant="acme", request_id=res.request_id, cited_ids=[res.hits[0].id]),
                metadata=METADATA, timeout=30)
            accepted += rep.accepted
        return len(stubs), accepted
    finally:
        for c in channels:
            await c.close()


def test_workers_share_port_ledger_and_restart(
        served: tuple[subprocess.Popen[bytes], int, int]) -> None:
    proc, port, metrics = served
    with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
        health = health_pb2_grpc.HealthStub(ch)
        assert health.Check(health_pb2.HealthCheckRequest(), timeout=10).status == \
            health_pb2.HealthCheckResponse.SERVING

    calls, accepted = asyncio.run(_traffic(port))
    # Every report was accepted, whichever worker got it: the ledger is shared.
    assert accepted == calls
    per_worker = [_retrieve_count(metrics), _retrieve_count(metrics + 1)]
    assert sum(per_worker) == calls
    assert min(per_worker) > 0, f"connections were not spread over the workers: {per_worker}"

    workers = [w for w in _children(proc.pid)  # not multiprocessing's resource tracker
               if "spawn_main" in Path(f"/proc/{w}/cmdline").read_text()]
    assert len(workers) == 2
    os.kill(workers[0], signal.SIGKILL)
    _wait(lambda: len([w for w in _children(proc.pid) if w not in workers]) >= 1, 60,
          "a restarted worker")
    for m in (metrics, metrics + 1):
        _wait(lambda m=m: _retrieve_count(m) >= 0, 120, f"worker metrics on {m} after restart")

    def traffic_ok() -> bool:
        return asyncio.run(_traffic(port)) == (CHANNELS, CHANNELS)

    _wait(traffic_ok, 60, "all calls to succeed after the restart")

    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0
    assert _children(proc.pid) == []
