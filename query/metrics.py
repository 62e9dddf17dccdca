"""Prometheus metrics of every nuggetflow process, declared in one place.

Metrics live on a :class:`~prometheus_client.CollectorRegistry` that the caller passes in
(never the library's global registry), so each test, and each process, gets its own.
Names follow the Prometheus conventions: ``nuggetflow_<subsystem>_<name>_<unit>``,
counters end in ``_total``, durations are in seconds.

Typed groups:

- :class:`QueryMetrics`, incremented by the gRPC query service;
- the pipeline group (subsystems ino, llm, stream) is the stream's own
  (:class:`stream.metrics.PipelineMetrics`), declared with the helpers below so that
  every name follows the same conventions;
- :class:`ReviewMetrics`, the correction lag (feedback to publication) and the nuggets of
  each publication state (the review backlog);
- :class:`AlertThresholdMetrics`, the configured alert thresholds
  (``nuggetflow_alert_threshold_{seconds,ratio,messages,dollars,nuggets}{alert}``) that the
  rules in ``deploy/prometheus/alerts.yml`` compare against.

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


def counter(reg: CollectorRegistry, subsystem: str, name: str, doc: str,
             labels: Sequence[str] = ()) -> Counter:
    return Counter(name, doc, labels, namespace=NAMESPACE, subsystem=subsystem, registry=reg)


def gauge(reg: CollectorRegistry, subsystem: str, name: str, doc: str,
           labels: Sequence[str] = ()) -> Gauge:
    return Gauge(name, doc, labels, namespace=NAMESPACE, subsystem=subsystem, registry=reg)


def histogram(reg: CollectorRegistry, subsystem: str, name: str, doc: str,
               labels: Sequence[str], buckets: Sequence[float]) -> Histogram:
    return Histogram(name, doc, labels, namespace=NAMESPACE, subsystem=subsystem,
                     registry=reg, buckets=buckets)


class QueryMetrics:
    """Metrics of the query service (subsystem ``query``)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        r, q = registry, "query"
        self.request_duration = histogram(
            r, q, "request_duration_seconds",
            "Latency of query-service gRPC calls by method and status code (as measured "
            "by the server interceptor, including auth and error mapping).",
            ["method", "code"], LATENCY_BUCKETS)
        self.retrieve_requests = counter(
            r, q, "retrieve_requests", "Successful Retrieve calls.", ["tenant"])
        self.retrieve_requests_with_nuggets = counter(
            r, q, "retrieve_requests_with_nuggets",
            "Successful Retrieve calls whose hits include at least one nugget.", ["tenant"])
        self.retrieved_items = counter(
            r, q, "retrieved_items",
            "Items returned by Retrieve, by type (nugget or document).", ["tenant", "type"])
        self.cited_items = counter(
            r, q, "cited_items",
            "Retrieved items that clients reported as cited (ReportCitations), by type; "
            "each (request, item) counts once.", ["tenant", "type"])
        self.citation_reports = counter(
            r, q, "citation_reports", "Successful ReportCitations calls.", ["tenant"])
        self.governance_suppressed = counter(
            r, q, "governance_suppressed",
            "Head nuggets matching a query that governance kept out of the results "
            "(validity, lifecycle state or publication).", ["tenant"])
        self.query_vector_lookups = counter(
            r, q, "query_vector_lookups",
            "Query vectors Retrieve needed, by result: hit (from the query-vector cache) "
            "or miss (embedded by the model).", ["result"])
        self.citation_ledger_entries = gauge(
            r, q, "citation_ledger_entries",
            "Retrieve request ids currently remembered for ReportCitations.")
        self.probe_sessions = gauge(
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


#: Correction lag buckets: a minute to a month (review by a person takes hours or days).
LAG_BUCKETS = (60.0, 300.0, 900.0, 1800.0, 3600.0, 7200.0, 14400.0, 28800.0, 43200.0,
               86400.0, 172800.0, 345600.0, 604800.0, 1209600.0, 2592000.0)


class ReviewMetrics:
    """Corrections on their way to users (subsystem ``review``): the lag from a feedback
    event to the moment its nugget is published and retrievable, and the nuggets of each
    publication state (the review backlog). docs/architecture.md, "Correction lag"."""

    def __init__(self, registry: CollectorRegistry) -> None:
        r, s = registry, "review"
        self.correction_lag = histogram(
            r, s, "correction_lag_seconds",
            "From the feedback event's timestamp to the write that made its correction "
            "retrievable: the first publication of its nugget, or its merge into a "
            "published one (outcome).", ["tenant", "outcome"], LAG_BUCKETS)
        self.nuggets = gauge(
            r, s, "nuggets",
            "Nugget lineages per tenant by the publication state of their head (sampled by "
            "the query service every NUGGETFLOW_REVIEW_BACKLOG_INTERVAL_SECONDS): "
            "pending_review is the review backlog.", ["tenant", "publication"])
        self.usage_flags = gauge(
            r, s, "usage_flags",
            "Published nuggets sent back to review by their use, not dismissed, per tenant "
            "and kind (uncited, seldom_cited, expiring), as of the query service's last "
            "usage review (NUGGETFLOW_USAGE_REVIEW_INTERVAL_SECONDS).", ["tenant", "kind"])

    def set_usage_flags(self, tenant: str, kinds: Sequence[str]) -> None:
        """The tenant's open usage-review flags by kind (``kinds``: one entry per open
        flag); every kind is exported, 0 when it has none."""
        for kind in ("uncited", "seldom_cited", "expiring"):
            self.usage_flags.labels(tenant, kind).set(sum(k == kind for k in kinds))

    def observe_publication(self, tenant: str, outcome: str, seconds: float) -> None:
        """Record one correction made retrievable ``seconds`` after its feedback."""
        self.correction_lag.labels(tenant, outcome).observe(max(0.0, seconds))

    def set_counts(self, counts: dict[tuple[str, str], int]) -> None:
        """The latest counts by (tenant, publication name); a tenant's every state is
        exported (0 when it has none), so shares divide by a series that exists."""
        tenants = {t for t, _ in counts}
        states = {p for _, p in counts} | {"pending_review", "published"}
        for tenant in tenants:
            for state in states:
                self.nuggets.labels(tenant, state).set(counts.get((tenant, state), 0))
            for outcome in ("published", "merged"):
                # a tenant's lag series exist (at 0) before its first publication, so the
                # first one is an increase Prometheus can see
                self.correction_lag.labels(tenant, outcome)


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
        self.seconds = gauge(
            r, a, "threshold_seconds",
            "Alert threshold in seconds (NuggetflowRetrieveLatencyHigh: Retrieve P99).",
            ["alert"])
        self.ratio = gauge(
            r, a, "threshold_ratio",
            "Alert threshold as a ratio 0..1 (NuggetflowQueryErrorRateHigh: share of failing "
            "calls; NuggetflowINOPassRateLow: share of nuggets passing INO).", ["alert"])
        self.messages = gauge(
            r, a, "threshold_messages",
            "Alert threshold in messages (NuggetflowConsumerLagHigh: consumer lag).",
            ["alert"])
        self.dollars = gauge(
            r, a, "threshold_dollars",
            "Alert threshold in US dollars (NuggetflowLLMCostHigh: LLM spend in one hour).",
            ["alert"])
        self.nuggets = gauge(
            r, a, "threshold_nuggets",
            "Alert threshold in nuggets (NuggetflowReviewBacklogGrowing: nuggets waiting for "
            "review per tenant).", ["alert"])

    def export_query(self, settings: Settings) -> None:
        """The query service's thresholds: Retrieve P99 (by store unless set), error ratio,
        review backlog."""
        self.seconds.labels("NuggetflowRetrieveLatencyHigh").set(settings.alert_retrieve_p99())
        self.ratio.labels("NuggetflowQueryErrorRateHigh").set(settings.alert_error_ratio)
        self.nuggets.labels("NuggetflowReviewBacklogGrowing").set(
            settings.alert_review_backlog_nuggets)

    def export_worker(self, settings: Settings) -> None:
        """The stream worker's thresholds: consumer lag, INO pass ratio, LLM spend."""
        self.messages.labels("NuggetflowConsumerLagHigh").set(
            settings.alert_consumer_lag_messages)
        self.ratio.labels("NuggetflowINOPassRateLow").set(settings.alert_ino_pass_ratio)
        self.dollars.labels("NuggetflowLLMCostHigh").set(
            settings.alert_llm_cost_dollars_per_hour)


@dataclass
class Metrics:
    """The query service's metric groups on one registry (a process's metrics)."""

    registry: CollectorRegistry
    query: QueryMetrics
    alerts: AlertThresholdMetrics
    review: ReviewMetrics

    @classmethod
    def create(cls, registry: CollectorRegistry | None = None, *,
               process: bool = False) -> Metrics:
        """The groups on ``registry`` (a new one if None); ``process`` adds process_*
        metrics. (A stream worker's registry also has the pipeline group:
        :class:`stream.metrics.WorkerMetrics`.)"""
        registry = registry if registry is not None else CollectorRegistry()
        if process:
            ProcessCollector(registry=registry)
        return cls(registry, QueryMetrics(registry), AlertThresholdMetrics(registry),
                   ReviewMetrics(registry))


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
