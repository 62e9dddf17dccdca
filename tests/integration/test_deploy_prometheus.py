"""deploy/ with the real tools: docker-compose config, promtool, and a real Prometheus
(Debian's package, started by deploy/prometheus/prometheus.sh on its own port and data
dir) scraping a running query service; every dashboard expression is run against it.

A tool or server that cannot be installed or started fails these tests, never skips them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
import os
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import grpc
import pytest

from nuggetflow.settings import Settings
from nuggetflow.v1 import query_service_pb2 as qpb
from nuggetflow.v1 import query_service_pb2_grpc as qpb_grpc
from query.auth import TokenAuth
from query.backends.sqlite import SQLiteStore
from query.embeddings import MiniLMEmbedder
from query.index import NuggetIndex
from query.metrics import Metrics, MetricsServer
from query.model import Passage, Provenance, Publication, utcnow
from query.review_watch import ReviewWatch
from query.service import create_server
from tests.conformance.service_suite import (
    QUERY,
    TOKEN_ACME,
    TOKEN_GLOBEX,
    TOKEN_INITECH,
    TOKENS,
    bearer,
    seed_nuggets,
    ts,
)
from tests.helpers import T0, days, make_nugget
from tests.support.net import free_port
from tests.support.service import seed as seed_with_vectors

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
PROMETHEUS_SH = DEPLOY / "prometheus" / "prometheus.sh"
DASHBOARD = DEPLOY / "grafana" / "dashboards" / "nuggetflow.json"
RATE_WINDOW = "15s"  # stands in for Grafana's $__rate_interval (scrapes every second here)
CORE_PANELS = ("Retrieval rate per tenant", "Citation rate per tenant",
               "Retrieve latency P50 / P99", "Latency P99 by method",
               "Retrieve requests per second", "Nuggets retrieved and cited per second",
               "Correction lag P50 / P90 per tenant", "Share of nuggets waiting for review",
               "Review backlog per tenant", "Corrections made retrievable per hour")


def run(*cmd: str, cwd: Path = ROOT, env: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(cmd), cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)


def test_compose_file_is_valid_for_docker_compose() -> None:
    proc = run(str(DEPLOY / "compose-check.sh"))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_compose_check_rejects_a_broken_file(tmp_path: Path) -> None:
    broken = tmp_path / "docker-compose.yml"
    text = (DEPLOY / "docker-compose.yml").read_text()
    broken.write_text(text.replace("    ports:", "    portz:", 1))
    proc = run(str(DEPLOY / "compose-check.sh"), str(broken))
    assert proc.returncode != 0 and "portz" in proc.stderr


@pytest.mark.parametrize("config", ["prometheus.yml", "prometheus.compose.yml"])
def test_prometheus_configs_pass_promtool(config: str) -> None:
    proc = run(str(PROMETHEUS_SH), "check", str(DEPLOY / "prometheus" / config))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "11 rules found" in proc.stdout


def test_alert_rules_fire_as_specified() -> None:
    proc = run("promtool", "test", "rules", "alerts_test.yml", cwd=DEPLOY / "prometheus")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SUCCESS" in proc.stdout


# --- a real Prometheus scraping a running query service ----------------------------------




@dataclass
class Prometheus:
    """A Prometheus started by prometheus.sh on its own port and data dir."""

    url: str
    env: dict[str, str]

    def get(self, path: str, **params: str) -> dict[str, Any]:
        query = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{self.url}{path}?{query}", timeout=10) as reply:
            data: dict[str, Any] = json.loads(reply.read())
            return data

    def query(self, expr: str) -> dict[str, Any]:
        try:
            return self.get("/api/v1/query", query=expr)
        except urllib.error.HTTPError as err:  # 400 with the parser's message
            body: dict[str, Any] = json.loads(err.read())
            return body


@dataclass
class Target:
    """The query service under test and the port Prometheus scrapes."""

    metrics_port: int
    grpc_port: int
    to_review: dict[str, str]  # tenant -> a nugget waiting for review, its feedback 2 h old


@pytest.fixture
async def target(tmp_path: Path, embedder: MiniLMEmbedder,
                 settings: Settings) -> AsyncIterator[Target]:
    store = SQLiteStore(tmp_path / "prom.db")
    await store.start()
    # a correction per tenant that waits for review; its feedback came two hours ago
    waiting = {tenant: dataclasses.replace(make_nugget(
        tenant, subject="shared drive quota", predicate="limit", obj="50 GB",
        sources=(f"ev-q-{tenant}",), publication=Publication.PENDING_REVIEW),
        provenance=Provenance(event_id=f"ev-q-{tenant}", tenant=tenant,
                              timestamp=utcnow() - timedelta(hours=2)))
        for tenant in ("acme", "globex")}
    nuggets = [*seed_nuggets().values(), *waiting.values()]
    await seed_with_vectors(NuggetIndex(store, embedder, settings), nuggets)
    index = NuggetIndex(store, embedder, settings)
    # A tenant with a corpus and no nuggets: its Retrieves never return one.
    await index.ingest_passages([Passage("vpn#0", "initech", "vpn", "VPN",
                                         "Reset your VPN password at the service desk.",
                                         T0)])
    metrics = Metrics.create(process=True)
    metrics.alerts.export_query(settings)  # as `nuggetflow serve` does
    backlog = asyncio.create_task(ReviewWatch(index, metrics.review, 0.5).attach().run())
    server, port = create_server(index, settings,
                                 metrics=metrics.query, auth=TokenAuth(TOKENS))
    http = MetricsServer(metrics.registry, "127.0.0.1", 0)
    metrics_port = http.start()
    await server.start()
    yield Target(metrics_port, port, {t: n.id for t, n in waiting.items()})
    backlog.cancel()
    await server.stop(0)
    http.stop()
    await store.stop()


@pytest.fixture
def prometheus(tmp_path: Path, target: Target) -> Iterator[Prometheus]:
    port = free_port()
    config = tmp_path / "prometheus.yml"
    # Targets come from a file the script writes, as in deploy/prometheus/prometheus.yml.
    config.write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        f"rule_files: ['{DEPLOY / 'prometheus' / 'alerts.yml'}']\n"
        "scrape_configs:\n"
        "  - job_name: nuggetflow-query\n"
        f"    file_sd_configs: [{{files: ['{tmp_path / 'targets'}/query*.json'],"
        " refresh_interval: 1s}]\n")
    env = {**os.environ, "NUGGETFLOW_PROMETHEUS_PORT": str(port),
           "NUGGETFLOW_VAR_DIR": str(tmp_path / "var"),
           "NUGGETFLOW_PROMETHEUS_TARGETS": str(tmp_path / "targets")}
    wrote = run(str(PROMETHEUS_SH), "targets", "query", f"127.0.0.1:{target.metrics_port}",
                env=env)
    assert wrote.returncode == 0, wrote.stderr
    proc = run(str(PROMETHEUS_SH), "start", str(config), env=env)
    if proc.returncode != 0:
        pytest.fail("Prometheus did not start:\n" + proc.stdout + proc.stderr)
    try:
        yield Prometheus(f"http://127.0.0.1:{port}", env)
    finally:
        run(str(PROMETHEUS_SH), "stop", env=env)


async def traffic(grpc_port: int, seconds: float) -> int:
    """Retrieve + ReportCitations for two tenants, plus some rejected calls."""
    calls = 0
    async with grpc.aio.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
        stub = qpb_grpc.QueryServiceStub(channel)  # type: ignore[no-untyped-call]
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for tenant, token, query in (("acme", TOKEN_ACME, QUERY),
                                         ("globex", TOKEN_GLOBEX, "reset vpn password"),
                                         ("initech", TOKEN_INITECH, "reset vpn password")):
                reply = await stub.Retrieve(qpb.RetrieveRequest(
                    tenant=tenant, query=query, as_of=ts(T0 + days(10)), k=5),
                    metadata=bearer(token))
                calls += 1
                if reply.hits:  # initech has no nuggets: its queries never reach one
                    await stub.ReportCitations(qpb.ReportCitationsRequest(
                        tenant=tenant, request_id=reply.request_id,
                        cited_ids=[reply.hits[0].id]), metadata=bearer(token))
                    calls += 1
            with pytest.raises(grpc.aio.AioRpcError):
                await stub.Retrieve(qpb.RetrieveRequest(tenant="acme", query=QUERY, k=5000),
                                    metadata=bearer(TOKEN_ACME))
            await asyncio.sleep(0.05)
    return calls


def dashboard_exprs() -> list[tuple[str, str]]:
    data = json.loads(DASHBOARD.read_text())
    out = []
    for panel in data["panels"]:
        for t in panel.get("targets", []):
            expr = (t["expr"].replace("$__rate_interval", RATE_WINDOW)
                    .replace("$__range", "5m").replace("$tenant", ".*"))
            assert "$" not in expr, f"unhandled Grafana variable in {expr}"
            out.append((panel["title"], expr))
    return out


async def test_prometheus_scrapes_the_service_and_every_panel_query_runs(
        target: Target, prometheus: Prometheus) -> None:
    # Two bursts of traffic with scrapes in between, so every counter has increased
    # between two samples of the rate window.
    await traffic(target.grpc_port, 3.0)
    await asyncio.sleep(1.5)
    assert await traffic(target.grpc_port, 4.0) > 20
    # a knowledge owner approves acme's waiting correction: its lag is recorded, and
    # acme's backlog shrinks while globex's stays (inside every panel's rate window)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{target.grpc_port}") as channel:
        stub = qpb_grpc.QueryServiceStub(channel)  # type: ignore[no-untyped-call]
        approve = qpb.ReviewRequest(tenant="acme", id=target.to_review["acme"],
                                    action=qpb.ReviewRequest.APPROVE, reviewer="kim",
                                    request_id="kim-approves-quota")
        await stub.Review(approve, metadata=bearer(TOKEN_ACME))
        await asyncio.sleep(1.5)  # (a retry of the same request: applied once, and the
        await stub.Review(approve, metadata=bearer(TOKEN_ACME))  # Review series moves)
    await asyncio.sleep(2.5)

    up = prometheus.query('up{job="nuggetflow-query"}')
    assert up["status"] == "success" and up["data"]["result"][0]["value"][1] == "1"

    failures, empty = [], []
    results: dict[str, list[dict[str, Any]]] = {}
    for title, expr in dashboard_exprs():
        reply = prometheus.query(expr)
        if reply.get("status") != "success":
            failures.append(f"{title}: {expr}: {reply.get('error')}")
            continue
        results.setdefault(title, []).extend(reply["data"]["result"])
    assert not failures, "\n".join(failures)
    for title in CORE_PANELS:
        values = [float(r["value"][1]) for r in results.get(title, [])]
        if not values or not all(math.isfinite(v) for v in values):
            empty.append(f"{title}: {results.get(title)}")
    assert not empty, "core panels without data:\n" + "\n".join(empty)

    by_tenant = {r["metric"]["tenant"]: float(r["value"][1])
                 for r in results["Retrieval rate per tenant"]}
    # A tenant whose queries never reached a nugget reads 0%, not a missing series.
    assert by_tenant == {"acme": 1.0, "globex": 1.0, "initech": 0.0}, by_tenant
    citation = {r["metric"]["tenant"]: float(r["value"][1])
                for r in results["Citation rate per tenant"]}
    assert set(citation) == {"acme", "globex"}
    # The panel divides two rate()s, each extrapolated over its own samples, so under load
    # it can read a little above 1; the counters themselves never cite more than they
    # retrieved, which is checked exactly.
    assert all(0 < v <= 1.05 for v in citation.values()), citation
    totals = {}
    for name in ("cited", "retrieved"):
        reply = prometheus.query(
            f'sum by (tenant) (nuggetflow_query_{name}_items_total{{type="nugget"}})')
        totals[name] = {r["metric"]["tenant"]: float(r["value"][1])
                        for r in reply["data"]["result"]}
    assert all(0 < totals["cited"][t] <= totals["retrieved"][t] for t in citation), totals
    p50, p99 = (float(r["value"][1]) for r in results["Retrieve latency P50 / P99"])
    assert 0 < p50 <= p99 < 1.0
    # Review: acme's correction was made retrievable about two hours after its feedback
    # (the lag's buckets around it are 1 h and 2 h wide); globex's still waits.
    lag = {r["metric"]["tenant"]: float(r["value"][1])
           for r in results["Correction lag P50 / P90 per tenant"]}
    assert set(lag) == {"acme"} and 3600 <= lag["acme"] <= 14400, lag
    waiting = {r["metric"]["tenant"]: float(r["value"][1])
               for r in results["Review backlog per tenant"]}
    assert waiting == {"acme": 1.0, "globex": 1.0}, waiting  # acme: the suite's own
    share = {r["metric"]["tenant"]: float(r["value"][1])
             for r in results["Share of nuggets waiting for review"]}
    assert share["globex"] == 0.5 and 0 < share["acme"] < 0.5, share

    rules = prometheus.get("/api/v1/rules")
    assert rules["status"] == "success"
    health = {r["name"]: r["health"] for g in rules["data"]["groups"] for r in g["rules"]}
    assert len(health) == 11
    for _ in range(20):  # rules are evaluated every second; wait for the first round
        if all(h == "ok" for h in health.values()):
            break
        await asyncio.sleep(0.5)
        rules = prometheus.get("/api/v1/rules")
        health = {r["name"]: r["health"] for g in rules["data"]["groups"] for r in g["rules"]}
    assert all(h == "ok" for h in health.values()), health

    # The rules compare against the thresholds the service exports (settings, by store).
    threshold = prometheus.query(
        'nuggetflow_alert_threshold_seconds{alert="NuggetflowRetrieveLatencyHigh"}')
    assert [float(r["value"][1]) for r in threshold["data"]["result"]] == [0.025]
    ratio = prometheus.query(
        'nuggetflow_alert_threshold_ratio{alert="NuggetflowQueryErrorRateHigh"}')
    assert [float(r["value"][1]) for r in ratio["data"]["result"]] == [0.05]
    rule = next(r for g in rules["data"]["groups"] for r in g["rules"]
                if r["name"] == "NuggetflowRetrieveLatencyHigh")
    # The rule's comparison with the exported threshold set to zero: one result shows
    # that the P99 joins the gauge by job (a join that never matches could never fire).
    p99_expr, _, _ = rule["query"].partition(">")
    joined = prometheus.query(f"{p99_expr} > on (job) max by (job) "
                              f"(nuggetflow_alert_threshold_seconds * 0)")
    assert len(joined["data"]["result"]) == 1, joined
    alerts = prometheus.get("/api/v1/alerts")["data"]["alerts"]
    assert not [a for a in alerts if a["labels"]["alertname"]
                == "NuggetflowAlertThresholdsMissing"], alerts
