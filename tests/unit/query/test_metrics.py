"""Metrics: injected registries, conventional names, the rates the dashboards compute."""

from __future__ import annotations

import urllib.request

import pytest
from prometheus_client import CollectorRegistry

from nuggetflow.errors import ConfigError
from query.metrics import Metrics, MetricsServer


def value(reg: CollectorRegistry, name: str, **labels: str) -> float:
    return reg.get_sample_value(name, labels) or 0.0


def test_each_registry_is_independent() -> None:
    a, b = Metrics.create(), Metrics.create()
    a.query.observe_retrieve("acme", nuggets=2, documents=1, suppressed=3)
    assert value(a.registry, "nuggetflow_query_retrieve_requests_total", tenant="acme") == 1
    assert value(b.registry, "nuggetflow_query_retrieve_requests_total", tenant="acme") == 0


def test_retrieval_and_citation_rates_are_computable() -> None:
    m = Metrics.create()
    q = m.query
    q.observe_retrieve("acme", nuggets=2, documents=3, suppressed=1)
    q.observe_retrieve("acme", nuggets=0, documents=5, suppressed=0)
    q.observe_citations("acme", nuggets=1, documents=2)
    r = m.registry
    requests = value(r, "nuggetflow_query_retrieve_requests_total", tenant="acme")
    with_nuggets = value(r, "nuggetflow_query_retrieve_requests_with_nuggets_total",
                         tenant="acme")
    assert with_nuggets / requests == 0.5  # retrieval rate
    cited = value(r, "nuggetflow_query_cited_items_total", tenant="acme", type="nugget")
    retrieved = value(r, "nuggetflow_query_retrieved_items_total", tenant="acme", type="nugget")
    assert cited / retrieved == 0.5  # citation rate
    assert value(r, "nuggetflow_query_retrieved_items_total", tenant="acme",
                 type="document") == 8
    assert value(r, "nuggetflow_query_governance_suppressed_total", tenant="acme") == 1


def test_a_tenant_without_nugget_hits_has_zero_series_not_none() -> None:
    m = Metrics.create()
    m.query.observe_retrieve("initech", nuggets=0, documents=4, suppressed=0)
    r = m.registry
    for name, labels in (("nuggetflow_query_retrieve_requests_with_nuggets_total", {}),
                         ("nuggetflow_query_retrieved_items_total", {"type": "nugget"}),
                         ("nuggetflow_query_cited_items_total", {"type": "nugget"})):
        assert r.get_sample_value(name, {"tenant": "initech", **labels}) == 0.0, name


def test_metrics_endpoint_serves_the_registry() -> None:
    m = Metrics.create(process=True)
    m.query.observe_call("Retrieve", "OK", 0.004)
    server = MetricsServer(m.registry, "127.0.0.1", 0)
    port = server.start()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
            body = reply.read().decode()
        assert ('nuggetflow_query_request_duration_seconds_count{code="OK",method="Retrieve"}'
                ' 1.0') in body
        assert "process_cpu_seconds_total" in body
        taken = MetricsServer(m.registry, "127.0.0.1", port)
        with pytest.raises(ConfigError) as err:
            taken.start()
        assert err.value.field == "NUGGETFLOW_METRICS_PORT"
    finally:
        server.stop()


def test_alert_thresholds_are_exported_from_the_settings() -> None:
    """alerts.yml compares against these gauges: each rule's threshold is a setting, and
    the Retrieve P99 one follows the store unless set."""
    from pathlib import Path

    import yaml

    from nuggetflow.settings import Settings

    query, worker = Metrics.create(), Metrics.create()
    query.alerts.export_query(Settings.from_env({"NUGGETFLOW_STORE": "opensearch://os:9200"}))
    worker.alerts.export_worker(Settings.from_env({
        "NUGGETFLOW_ALERT_CONSUMER_LAG_MESSAGES": "5000",
        "NUGGETFLOW_ALERT_LLM_COST_DOLLARS_PER_HOUR": "3.5"}))
    exported = {
        "NuggetflowRetrieveLatencyHigh": (query, "nuggetflow_alert_threshold_seconds", 0.2),
        "NuggetflowQueryErrorRateHigh": (query, "nuggetflow_alert_threshold_ratio", 0.05),
        "NuggetflowConsumerLagHigh": (worker, "nuggetflow_alert_threshold_messages", 5000),
        "NuggetflowINOPassRateLow": (worker, "nuggetflow_alert_threshold_ratio", 0.8),
        "NuggetflowLLMCostHigh": (worker, "nuggetflow_alert_threshold_dollars", 3.5),
    }
    for alert, (metrics, name, expected) in exported.items():
        assert value(metrics.registry, name, alert=alert) == expected, alert
    # the query service exports only its own alerts' thresholds, the worker its own
    assert query.registry.get_sample_value("nuggetflow_alert_threshold_messages",
                                           {"alert": "NuggetflowConsumerLagHigh"}) is None
    rules = yaml.safe_load((Path(__file__).resolve().parents[3] / "deploy" / "prometheus"
                            / "alerts.yml").read_text())
    by_name = {r["alert"]: r["expr"] for g in rules["groups"] for r in g["rules"]}
    for alert, (_, name, _) in exported.items():
        assert f'{name}{{alert="{alert}"}}' in by_name[alert], alert
