"""`nuggetflow serve` stores what it counted when it stops, a restarted service answers
GetUsage from the store, and `nuggetflow usage-review` flags the nugget whose topic is
queried but which is never cited (real processes on the embedded store)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from nuggetflow.v1 import query_service_pb2 as qpb
from nuggetflow.v1 import query_service_pb2_grpc as qpb_grpc
from query.embeddings import MiniLMEmbedder
from tests.conformance.service_suite import seed_nuggets
from tests.support.net import free_port
from tests.support.service import served_file_env
from tests.unit.query.test_service_workers import _wait

ROOT = Path(__file__).resolve().parents[3]
TOKEN = "usage-restart-token-0123456789"
METADATA = (("authorization", f"Bearer {TOKEN}"),)


@pytest.fixture
def env(tmp_path: Path, embedder: MiniLMEmbedder) -> Iterator[dict[str, str]]:
    yield {**served_file_env(tmp_path / "nf.db", embedder, seed_nuggets().values(),
                             {TOKEN: ["acme"]}),
           # the flush on stop is what this test shows: no periodic one meanwhile
           "NUGGETFLOW_USAGE_FLUSH_SECONDS": "3600", "NUGGETFLOW_USAGE_MIN_TOPIC_QUERIES": "3",
           "NUGGETFLOW_LOG_FORMAT": "json"}


def _serve(env: dict[str, str], log: Path) -> tuple[subprocess.Popen[bytes], int]:
    port, metrics = free_port(), free_port()
    with open(log, "ab") as out:
        proc = subprocess.Popen([sys.executable, "-m", "app.cli", "serve", "--port", str(port),
                                 "--metrics-port", str(metrics)], cwd=ROOT, env=env,
                                stderr=out)

    def up() -> bool:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            grpc.channel_ready_future(ch).result(timeout=2)
        return True

    _wait(up, 120, "the query service", proc)
    return proc, port


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 0


def test_counts_survive_a_restart_and_the_uncited_nugget_is_flagged(
        env: dict[str, str], tmp_path: Path) -> None:
    ids = {k: v.id for k, v in seed_nuggets().items()}
    published, contested = ids["published"], ids["contested"]
    proc, port = _serve(env, tmp_path / "serve.log")
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            stub = qpb_grpc.QueryServiceStub(ch)  # type: ignore[no-untyped-call]
            for _ in range(4):
                reply = stub.Retrieve(qpb.RetrieveRequest(
                    tenant="acme", query="who can reset another user's password", k=5),
                    metadata=METADATA, timeout=30)
                stub.ReportCitations(qpb.ReportCitationsRequest(
                    tenant="acme", request_id=reply.request_id, cited_ids=[published]),
                    metadata=METADATA, timeout=30)
                reply = stub.Retrieve(qpb.RetrieveRequest(
                    tenant="acme", query="how many rows can an analyst export", k=5,
                    view=qpb.VIEW_ACTIVE_PLUS_CONTESTED), metadata=METADATA, timeout=30)
                assert contested in [h.id for h in reply.hits]
    finally:
        _stop(proc)
    stopped = [json.loads(line) for line in (tmp_path / "serve.log").read_text().splitlines()
               if line.startswith("{")]
    assert any(e.get("event") == "query service stopped" and e.get("usage_rows_stored", 0) > 0
               for e in stopped), "the counts were stored at stop"

    proc, port = _serve(env, tmp_path / "serve2.log")
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            stub = qpb_grpc.QueryServiceStub(ch)  # type: ignore[no-untyped-call]
            usage = stub.GetUsage(qpb.GetUsageRequest(tenant="acme", ids=[published, contested]),
                                  metadata=METADATA, timeout=30).usage
    finally:
        _stop(proc)
    assert [(u.retrieved, u.cited) for u in usage] == [(4, 4), (4, 0)]

    out = subprocess.run([sys.executable, "-m", "app.cli", "usage-review", "--tenant", "acme",
                          "--json"], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=300, check=True)
    flags = {f["lineage_id"]: f for f in json.loads(out.stdout)}
    # the portal v9 nugget (valid today) shares the cited one's topic and is never cited
    # either; the cited one is not flagged
    assert sorted(flags) == sorted([contested, ids["future"]])
    assert {f["kind"] for f in flags.values()} == {"uncited"}
    assert flags[contested]["reason"] == ("not cited in 30 days while its topic was queried "
                                          "4 times (returned 4 times)")
    listed = subprocess.run([sys.executable, "-m", "app.cli", "usage-review", "--tenant", "acme"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
                            check=True).stdout
    assert "Analyst export row limit" in listed and "uncited" in listed
    subprocess.run([sys.executable, "-m", "app.cli", "usage-review", "--tenant", "acme",
                    "--dismiss", contested], cwd=ROOT, env=env, capture_output=True,
                   timeout=300, check=True)
    after = json.loads(subprocess.run(
        [sys.executable, "-m", "app.cli", "usage-review", "--tenant", "acme", "--json"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=True).stdout)
    assert [f["lineage_id"] for f in after] == [ids["future"]], \
        "a dismissed flag is not listed again while the version is the same"
