"""Prometheus metrics of every nuggetflow process, declared in one place.

Metrics live on a :class:`~prometheus_client.CollectorRegistry` that the caller passes in
(never the library's global registry), so each test, and each process, gets its own.
Names follow the Prometheus conventions: ``nuggetflow_<subsystem>_<name>_<unit>``,
counters end in ``_total``, durations are in seconds.

Three typed groups:

- :class:`QueryMetrics`, incremented by the gRPC query service;
- :class:`PipelineMetrics`, incremented by the stream workers and the INO optimizer
  (those packages take it by injection; it is declared here so that the names, labels and
  the dashboards in ``deploy/grafana`` stay in one place);
- :class:`AlertThresholdMetrics`, the configured alert thresholds
  (``nuggetflow_alert_threshold_{seconds,ratio,messages,dollars}{alert}``) that the rules
  in ``deploy/prometheus/alerts.yml`` compare against.

Rates the dashboards compute (PromQL, per tenant):

- retrieval rate: ``rate(nuggetflow_query_retrieve_requests_with_nuggets_total)`` /
  ``rate(nuggetflow_query_retrieve_requests_total)`` (share of queries that got a nugget);
- citation rate: ``rate(nuggetflow_query_cited_items_total{type="nugget"})`` /
  ``rate(nuggetflow_query_retrieved_items_total{type="nugget"})`` (cited / retrieved).

Label values must come from small fixed sets (a tenant, a method name, a reason code),
never from free text such as error messages or queries.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import start_http_server
from prometheus_client.process_collector import ProcessCollector

from nuggetflow.errors import ConfigError
from nuggetflow.logging import get_logger
from nuggetflow.settings import Settings

log = get_logger(__name__)

NAMESPACE = "nuggetflow"
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.0075, 0.01, 0.015, 0.025, 0.05, 0.1,
                   0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
ITERATION_BUCKETS = (1, 2, 3, 4, 5, 8)


def _counter(reg: CollectorRegistry, subsystem: str, name: str, doc: str,
             labels: Sequence[str] = ()) -> Counter:
    return Counter(name, doc, labels, namespace=NAMESPACE, subsystem=subsystem, registry=reg)


def _gauge(reg: CollectorRegistry, subsystem: str, name: str, doc: str,
           labels: Sequence[str] = ()) -> Gauge:
    return Gauge(name, doc, labels, namespace=NAMESPACE, subsystem=subsystem, registry=reg)


def _histogram(reg: CollectorRegistry, subsystem: str, name: str, doc: str,
               labels: Sequence[str], buckets: Sequence[float]) -> Histogram:
    return Histogram(name, doc, labels, namespace=NAMESPACE, subsystem=subsystem,
                     registry=reg, buckets=buckets)


class QueryMetrics:
    """Metrics of the query service (subsystem ``query``)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        r, q = registry, "query"
        self.request_duration = _histogram(
            r, q, "request_duration_seconds",
            "Latency of query-service gRPC calls by method and status code (as measured "
            "by the server interceptor, including auth and error mapping).",
            ["method", "code"], LATENCY_BUCKETS)
        self.retrieve_requests = _counter(
            r, q, "retrieve_requests", "Successful Retrieve calls.", ["tenant"])
        self.retrieve_requests_with_nuggets = _counter(
            r, q, "retrieve_requests_with_nuggets",
            "Successful Retrieve calls whose hits include at least one nugget.", ["tenant"])
        self.retrieved_items = _counter(
            r, q, "retrieved_items",
            "Items returned by Retrieve, by type (nugget or document).", ["tenant", "type"])
        self.cited_items = _counter(
            r, q, "cited_items",
            "Retrieved items that clients reported as cited (ReportCitations), by type; "
            "each (request, item) counts once.", ["tenant", "type"])
        self.citation_reports = _counter(
            r, q, "citation_reports", "Successful ReportCitations calls.", ["tenant"])
        self.governance_suppressed = _counter(
            r, q, "governance_suppressed",
            "Head nuggets matching a query that governance kept out of the results "
            "(validity, lifecycle state or publication).", ["tenant"])
        self.query_vector_lookups = _counter(
            r, q, "query_vector_lookups",
            "Query vectors Retrieve needed, by result: hit (from the query-vector cache) "
            "or miss (embedded by the model).", ["result"])
        self.citation_ledger_entries = _gauge(
            r, q, "citation_ledger_entries",
            "Retrieve request ids currently remembered for ReportCitations.")
        self.probe_sessions = _gauge(
            r, q, "probe_sessions",
            "Probe sessions open in this process (INO's external harness; their calls "
            "count in no other query series but the latency of Retrieve.probe and "
            "ReportCitations.probe).")

    def observe_call(self, method: str, code: str, seconds: float) -> None:
        """Record one finished gRPC call."""
        self.request_duration.labels(method, code).observe(seconds)

    def observe_retrieve(self, tenant: str, nuggets: int, documents: int,
                         suppressed: int) -> None:
        """Record one successful Retrieve. A tenant's series start at 0 on its first
        request, so a tenant whose queries never reached a nugget shows a 0% retrieval
        rate instead of no series."""
        self.retrieve_requests.labels(tenant).inc()
        self.retrieve_requests_with_nuggets.labels(tenant).inc(1 if nuggets else 0)
        self.retrieved_items.labels(tenant, "nugget").inc(nuggets)
        self.retrieved_items.labels(tenant, "document").inc(documents)
        self.cited_items.labels(tenant, "nugget").inc(0)
        self.cited_items.labels(tenant, "document").inc(0)
        if suppressed:
            self.governance_suppressed.labels(tenant).inc(suppressed)

    def observe_query_vector(self, cached: bool) -> None:
        """Record whether a Retrieve's query vector came from the cache."""
        self.query_vector_lookups.labels("hit" if cached else "miss").inc()

    def observe_citations(self, tenant: str, nuggets: int, documents: int) -> None:
        """Record one successful ReportCitations with its newly counted citations."""
        self.citation_reports.labels(tenant).inc()
        if nuggets:
            self.cited_items.labels(tenant, "nugget").inc(nuggets)
        if documents:
            self.cited_items.labels(tenant, "document").inc(documents)


class PipelineMetrics:
    """Metrics of the stream workers and the INO optimizer (subsystems ino, llm, stream).

    Label conventions: ``tenant``; ``variant`` is the INO variant letter (A-E); ``role``
    is the LLM role (extractor, generator, judge, reflector, ...); ``reason`` is a short
    fixed code (``schema``, ``decode``, ``budget``, ...), never an error message.
    """

    def __init__(self, registry: CollectorRegistry) -> None:
        r = registry
        self.ino_iterations = _histogram(
            r, "ino", "iterations", "INO iterations a nugget needed (1..T) before it passed "
            "or the budget ran out.", ["tenant", "variant"], ITERATION_BUCKETS)
        self.ino_nuggets = _counter(
            r, "ino", "nuggets",
            "Nuggets that finished optimization, by outcome (passed or failed).",
            ["tenant", "variant", "outcome"])
        self.ino_probes = _counter(
            r, "ino", "probes", "Probe queries run against candidate nuggets, by result "
            "(pass: retrieved and cited; fail).", ["tenant", "variant", "result"])
        self.llm_calls = _counter(
            r, "llm", "calls", "LLM calls by role and outcome (ok or error).",
            ["role", "outcome"])
        self.llm_tokens = _counter(
            r, "llm", "tokens", "LLM tokens by role and direction (prompt or completion).",
            ["role", "direction"])
        self.llm_cost = _counter(
            r, "llm", "cost_dollars", "Estimated LLM spend in US dollars, by role.", ["role"])
        self.events = _counter(
            r, "stream", "events", "Events handled by stream agents, by agent and outcome.",
            ["agent", "outcome"])
        self.dead_letters = _counter(
            r, "stream", "dead_letters",
            "Events sent to the dead-letter topic, by source topic and reason code.",
            ["topic", "reason"])
        self.retries = _counter(
            r, "stream", "retries", "Retried operations in stream agents (retriable errors).",
            ["agent"])
        self.consumer_lag = _gauge(
            r, "stream", "consumer_lag_messages",
            "Messages between the committed offset and the end of each partition.",
            ["group", "topic", "partition"])

    def observe_ino(self, tenant: str, variant: str, iterations: int, passed: bool) -> None:
        """Record a nugget whose optimization finished."""
        self.ino_iterations.labels(tenant, variant).observe(iterations)
        self.ino_nuggets.labels(tenant, variant, "passed" if passed else "failed").inc()

    def observe_probe(self, tenant: str, variant: str, passed: bool) -> None:
        """Record one probe query."""
        self.ino_probes.labels(tenant, variant, "pass" if passed else "fail").inc()

    def observe_llm_call(self, role: str, *, ok: bool = True, prompt_tokens: int = 0,
                         completion_tokens: int = 0, cost_dollars: float = 0.0) -> None:
        """Record one LLM call with its token counts and estimated cost."""
        self.llm_calls.labels(role, "ok" if ok else "error").inc()
        if prompt_tokens:
            self.llm_tokens.labels(role, "prompt").inc(prompt_tokens)
        if completion_tokens:
            self.llm_tokens.labels(role, "completion").inc(completion_tokens)
        if cost_dollars:
            self.llm_cost.labels(role).inc(cost_dollars)

    def observe_usage(self, summary: dict[str, object]) -> None:
        """Record the LLM calls, tokens and cost of one meter (``Meter.summary()``), per
        role: an INO run or an actionability call."""
        calls = summary.get("calls_by_role", {})
        usage = summary.get("usage_by_role", {})
        if not isinstance(calls, dict) or not isinstance(usage, dict):
            return
        for role, n in calls.items():
            self.llm_calls.labels(role, "ok").inc(n)
            used = usage.get(role, {})
            for kind in ("prompt", "completion"):
                if used.get(f"{kind}_tokens"):
                    self.llm_tokens.labels(role, kind).inc(used[f"{kind}_tokens"])
            if used.get("cost_usd"):
                self.llm_cost.labels(role).inc(used["cost_usd"])

    def observe_event(self, agent: str, outcome: str) -> None:
        """Record one event handled by an agent (outcome: ok, skipped, dead_letter, ...)."""
        self.events.labels(agent, outcome).inc()

    def dead_letter(self, topic: str, reason: str) -> None:
        """Record one event sent to the dead-letter topic."""
        self.dead_letters.labels(topic, reason).inc()

    def retry(self, agent: str) -> None:
        """Record one retry."""
        self.retries.labels(agent).inc()

    def set_consumer_lag(self, group: str, topic: str, partition: int, lag: int) -> None:
        """Set the lag of one partition for one consumer group."""
        self.consumer_lag.labels(group, topic, str(partition)).set(lag)


class AlertThresholdMetrics:
    """The alert thresholds a process was configured with (subsystem ``alert``), one gauge
    per unit, labelled by the alert rule's name. ``deploy/prometheus/alerts.yml`` compares
    against them, so a threshold is a setting (``NUGGETFLOW_ALERT_*``) and follows the
    store in use instead of a number written into the rule.

    The query service exports its own alerts' thresholds (:meth:`export_query`), the stream
    worker its own (:meth:`export_worker`).
    """

    def __init__(self, registry: CollectorRegistry) -> None:
        r, a = registry, "alert"
        self.seconds = _gauge(
            r, a, "threshold_seconds",
            "Alert threshold in seconds (NuggetflowRetrieveLatencyHigh: Retrieve P99).",
            ["alert"])
        self.ratio = _gauge(
            r, a, "threshold_ratio",
            "Alert threshold as a ratio 0..1 (NuggetflowQueryErrorRateHigh: share of failing "
            "calls; NuggetflowINOPassRateLow: share of nuggets passing INO).", ["alert"])
        self.messages = _gauge(
            r, a, "threshold_messages",
            "Alert threshold in messages (NuggetflowConsumerLagHigh: consumer lag).",
            ["alert"])
        self.dollars = _gauge(
            r, a, "threshold_dollars",
            "Alert threshold in US dollars (NuggetflowLLMCostHigh: LLM spend in one hour).",
            ["alert"])

    def export_query(self, settings: Settings) -> None:
        """The query service's thresholds: Retrieve P99 (by store unless set), error ratio."""
        self.seconds.labels("NuggetflowRetrieveLatencyHigh").set(settings.alert_retrieve_p99())
        self.ratio.labels("NuggetflowQueryErrorRateHigh").set(settings.alert_error_ratio)

    def export_worker(self, settings: Settings) -> None:
        """The stream worker's thresholds: consumer lag, INO pass ratio, LLM spend."""
        self.messages.labels("NuggetflowConsumerLagHigh").set(
            settings.alert_consumer_lag_messages)
        self.ratio.labels("NuggetflowINOPassRateLow").set(settings.alert_ino_pass_ratio)
        self.dollars.labels("NuggetflowLLMCostHigh").set(
            settings.alert_llm_cost_dollars_per_hour)


@dataclass
class Metrics:
    """Every metric group on one registry (a process's metrics)."""

    registry: CollectorRegistry
    query: QueryMetrics
    pipeline: PipelineMetrics
    alerts: AlertThresholdMetrics

    @classmethod
    def create(cls, registry: CollectorRegistry | None = None, *,
               process: bool = False) -> Metrics:
        """All groups on ``registry`` (a new one if None); ``process`` adds process_* metrics."""
        registry = registry if registry is not None else CollectorRegistry()
        if process:
            ProcessCollector(registry=registry)
        return cls(registry, QueryMetrics(registry), PipelineMetrics(registry),
                   AlertThresholdMetrics(registry))


class MetricsServer:
    """``/metrics`` over HTTP for one registry (prometheus_client's server, in a thread)."""

    def __init__(self, registry: CollectorRegistry, host: str = "127.0.0.1",
                 port: int = 0) -> None:
        self.registry = registry
        self.host = host
        self.port = port
        self._httpd: WSGIServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> int:
        """Bind and serve; returns the bound port (useful with port 0)."""
        if self._httpd is not None:
            return self.port
        try:
            httpd, thread = start_http_server(self.port, addr=self.host, registry=self.registry)
        except OSError as exc:
            raise ConfigError(f"cannot serve /metrics on {self.host}:{self.port}: {exc}",
                              field="NUGGETFLOW_METRICS_PORT") from exc
        self._httpd, self._thread = httpd, thread
        self.port = int(httpd.server_port)
        log.info("metrics endpoint listening", host=self.host, port=self.port)
        return self.port

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._httpd is None:
            return
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = self._thread = None
