"""The stream's metrics: the pipeline group (subsystems ino, llm, stream) the workers,
the steps and the lag sampler increment, and a worker process's registry, which holds it
beside the groups every process has (:class:`query.metrics.Metrics`). Names follow the
conventions of :mod:`query.metrics` (docs/architecture.md, "Contracts")."""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client import CollectorRegistry

from query.metrics import ITERATION_BUCKETS, Metrics, counter, gauge, histogram


class PipelineMetrics:
    """Metrics of the stream workers and the INO optimizer (subsystems ino, llm, stream).

    Label conventions: ``tenant``; ``variant`` is the INO variant letter (A-E); ``role``
    is the LLM role (extractor, generator, judge, reflector, ...); ``reason`` is a short
    fixed code (``schema``, ``decode``, ``budget``, ...), never an error message.
    """

    def __init__(self, registry: CollectorRegistry) -> None:
        r = registry
        self.ino_iterations = histogram(
            r, "ino", "iterations", "INO iterations a nugget needed (1..T) before it passed "
            "or the budget ran out.", ["tenant", "variant"], ITERATION_BUCKETS)
        self.ino_nuggets = counter(
            r, "ino", "nuggets",
            "Nuggets that finished optimization, by outcome (passed or failed).",
            ["tenant", "variant", "outcome"])
        self.ino_probes = counter(
            r, "ino", "probes", "Probe queries run against candidate nuggets, by result "
            "(pass: retrieved and cited; fail).", ["tenant", "variant", "result"])
        self.reprobes = counter(
            r, "reprobe", "nuggets", "Published nuggets re-probed after a corpus change, by "
            "outcome (passed, reoptimized, proposed, redundant, buried, superseded).",
            ["tenant", "outcome"])
        self.llm_calls = counter(
            r, "llm", "calls", "LLM calls by role and outcome (ok or error).",
            ["role", "outcome"])
        self.llm_tokens = counter(
            r, "llm", "tokens", "LLM tokens by role and direction (prompt or completion).",
            ["role", "direction"])
        self.llm_cost = counter(
            r, "llm", "cost_dollars", "Estimated LLM spend in US dollars, by role.", ["role"])
        self.events = counter(
            r, "stream", "events", "Events handled by stream agents, by agent and outcome.",
            ["agent", "outcome"])
        self.dead_letters = counter(
            r, "stream", "dead_letters",
            "Events sent to the dead-letter topic, by source topic and reason code.",
            ["topic", "reason"])
        self.retries = counter(
            r, "stream", "retries", "Retried operations in stream agents (retriable errors).",
            ["agent"])
        self.consumer_lag = gauge(
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

    def observe_reprobe(self, tenant: str, outcome: str, n: int = 1) -> None:
        """Record ``n`` nuggets re-probed with ``outcome``."""
        self.reprobes.labels(tenant, outcome).inc(n)

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


@dataclass
class WorkerMetrics(Metrics):
    """A stream worker's registry: the query, alert and review groups and the pipeline
    group."""

    pipeline: PipelineMetrics

    @classmethod
    def create(cls, registry: CollectorRegistry | None = None, *,
               process: bool = False) -> WorkerMetrics:
        """Every group on ``registry`` (a new one if None); ``process`` adds process_*."""
        base = Metrics.create(registry, process=process)
        return cls(base.registry, base.query, base.alerts, base.review,
                   PipelineMetrics(base.registry))
