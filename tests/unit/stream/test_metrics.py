"""The stream's pipeline metrics: conventional names and units, on a worker's registry
beside the groups every process has."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from stream.metrics import WorkerMetrics


def value(reg: CollectorRegistry, name: str, **labels: str) -> float:
    return reg.get_sample_value(name, labels) or 0.0


def test_pipeline_metrics_names_and_units() -> None:
    m = WorkerMetrics.create()
    p = m.pipeline
    p.observe_ino("acme", "E", iterations=2, passed=True)
    p.observe_ino("acme", "E", iterations=3, passed=False)
    p.observe_probe("acme", "E", passed=True)
    p.observe_llm_call("reflector", prompt_tokens=900, completion_tokens=120, cost_dollars=0.01)
    p.observe_llm_call("judge", ok=False)
    p.observe_event("optimize", "ok")
    p.dead_letter("feedback.events", "schema")
    p.retry("optimize")
    p.set_consumer_lag("nuggetflow", "feedback.events", 0, 42)
    r = m.registry
    assert value(r, "nuggetflow_ino_iterations_sum", tenant="acme", variant="E") == 5
    assert value(r, "nuggetflow_ino_iterations_bucket", tenant="acme", variant="E",
                 le="2.0") == 1
    assert value(r, "nuggetflow_ino_nuggets_total", tenant="acme", variant="E",
                 outcome="passed") == 1
    assert value(r, "nuggetflow_ino_probes_total", tenant="acme", variant="E",
                 result="pass") == 1
    assert value(r, "nuggetflow_llm_tokens_total", role="reflector", direction="prompt") == 900
    assert value(r, "nuggetflow_llm_cost_dollars_total", role="reflector") == 0.01
    assert value(r, "nuggetflow_llm_calls_total", role="judge", outcome="error") == 1
    assert value(r, "nuggetflow_stream_events_total", agent="optimize", outcome="ok") == 1
    assert value(r, "nuggetflow_stream_dead_letters_total", topic="feedback.events",
                 reason="schema") == 1
    assert value(r, "nuggetflow_stream_retries_total", agent="optimize") == 1
    assert value(r, "nuggetflow_stream_consumer_lag_messages", group="nuggetflow",
                 topic="feedback.events", partition="0") == 42
    names = {metric.name for metric in r.collect()}
    assert all(n.startswith("nuggetflow_") for n in names)



def test_a_workers_registry_has_the_query_and_alert_groups_too() -> None:
    m = WorkerMetrics.create()
    m.query.observe_call("Retrieve", "OK", 0.01)
    names = {metric.name for metric in m.registry.collect()}
    assert "nuggetflow_ino_iterations" in names
    assert any(n.startswith("nuggetflow_query_") for n in names)
    assert any(n.startswith("nuggetflow_alert_") for n in names)
