"""The Faust app factory and the worker (``nuggetflow worker``).

No module-level app: :func:`create_app` builds one per call from the settings (broker
URL, group id = prefix + app id, partitions, timeouts), and :func:`build_worker` assembles
a worker process around the governed index and the threaded engine it is given (built by
``app.wiring.make_worker``): the four agents, the Prometheus endpoint and the consumer-lag
sampler.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import faust
from mode import Service

from nuggetflow.logging import get_logger
from nuggetflow.settings import Settings
from query.index import NuggetIndex
from query.metrics import MetricsServer
from query.review_watch import ReviewWatch
from stream import transport
from stream.agents import Agents, FaustSink, enabled_agents, register_agents
from stream.engine import Engine
from stream.lag import LagMonitor
from stream.metrics import WorkerMetrics
from stream.steps import Steps
from stream.topics import (
    AGENT_SOURCES,
    Topics,
    bootstrap_servers,
    ensure_topics,
    faust_credentials,
    group_id,
    kafka_client_options,
)

log = get_logger(__name__)

def create_app(settings: Settings, **overrides: Any) -> faust.App:
    """A Faust app for these settings (``overrides`` go to Faust's own settings)."""
    session = settings.stream_session_timeout_seconds
    conf: dict[str, Any] = {
        "broker": [f"{transport.SCHEME}://{s}" for s in bootstrap_servers(settings)],
        "store": "memory://",
        "autodiscover": False,
        "web_enabled": False,
        "topic_partitions": settings.stream_partitions,
        "topic_replication_factor": settings.stream_replication_factor,
        "topic_disable_leader": True,
        "consumer_auto_offset_reset": "earliest",
        "broker_commit_interval": settings.stream_commit_interval_seconds,
        "broker_session_timeout": session,
        "broker_heartbeat_interval": min(3.0, session / 3),
        "producer_acks": -1,
        "stream_wait_empty": True,
        "worker_redirect_stdouts": False,
        # Faust's own state (its default is "<app id>-data" in the working directory,
        # which left one folder per consumer group wherever a worker was started).
        "datadir": str(Path("var") / "faust" / group_id(settings)),
    }
    credentials = faust_credentials(settings)
    if credentials is not None:
        conf["broker_credentials"] = credentials
    conf.update(overrides)
    # Faust creates its datadir without parents.
    Path(conf["datadir"]).parent.mkdir(parents=True, exist_ok=True)
    return faust.App(group_id(settings), **conf)


class StreamRuntime(Service):
    """What a worker runs beside the app: index, engine, /metrics and the lag sampler.

    Passed to the Faust worker before the app, so it starts first and stops last.
    """

    def __init__(self, settings: Settings, index: NuggetIndex, engine: Engine,
                 metrics: WorkerMetrics, *, serve_metrics: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.settings = settings
        self.index = index
        self.engine = engine
        self.metrics = metrics
        self.metrics_server = MetricsServer(metrics.registry, settings.serve_host,
                                            settings.metrics_port) if serve_metrics else None
        topics = Topics.from_settings(settings)
        self.lag = LagMonitor(bootstrap_servers(settings), group_id(settings),
                              [topics.name(AGENT_SOURCES[a]) for a in enabled_agents(settings)],
                              metrics.pipeline, kafka_client_options(settings))

    async def on_start(self) -> None:
        """Open the index, warm up the embedder, start threads and /metrics."""
        await ensure_topics(self.settings)
        await self.index.start()
        warm_up = getattr(self.index.embedder, "warm_up", None)
        if callable(warm_up):
            warm_up()
        await self.engine.start()
        if self.metrics_server is not None:
            self.metrics_server.start()
        if self.settings.stream_lag_interval_seconds > 0:
            await self.lag.start()
            self.add_future(self._sample_lag())
        log.info("stream worker runtime started", group=group_id(self.settings),
                 agents=self.settings.stream_agents,
                 store=self.settings.store, llm=self.settings.llm,
                 optimize_concurrency=self.settings.stream_optimize_concurrency)

    async def _sample_lag(self) -> None:
        interval = self.settings.stream_lag_interval_seconds
        while not self.should_stop:
            try:
                await self.lag.sample()
            except Exception as exc:  # lag is diagnostics: never stop the worker for it
                log.warning("consumer lag sample failed", error=str(exc) or repr(exc))
            await self.sleep(interval)

    async def on_stop(self) -> None:
        """Stop in reverse order (the app has already committed and stopped)."""
        await self.lag.stop()
        await self.engine.stop()
        await self.index.stop()
        if self.metrics_server is not None:
            self.metrics_server.stop()
        log.info("stream worker runtime stopped")


@dataclass
class WorkerParts:
    """Everything :func:`build_worker` wires together (tests reach into it)."""

    app: faust.App
    agents: Agents
    steps: Steps
    runtime: StreamRuntime
    metrics: WorkerMetrics


def build_worker(settings: Settings, index: NuggetIndex, engine: Engine,
                 metrics: WorkerMetrics, *, serve_metrics: bool = True) -> WorkerParts:
    """Assemble a worker from its index, engine and metrics (``app.wiring.make_worker``
    builds those from the settings); no I/O: it all happens when the worker starts."""
    metrics.alerts.export_worker(settings)
    ReviewWatch(index, metrics.review).attach()  # the reviews this worker applies
    steps = Steps(index, engine, settings, metrics.pipeline)
    app = create_app(settings)
    topics = Topics.from_settings(settings)
    agents = register_agents(app, topics, steps, FaustSink(app, topics), settings)
    runtime = StreamRuntime(settings, index, engine, metrics, serve_metrics=serve_metrics)
    return WorkerParts(app, agents, steps, runtime, metrics)


def run_worker(settings: Settings, parts: WorkerParts) -> int:
    """Run a worker until SIGTERM/SIGINT (commits processed offsets, then stops)."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    worker = faust.Worker(parts.app, parts.runtime, loop=loop, loglevel=settings.log_level,
                          override_logging=False, redirect_stdouts=False, quiet=True)
    worker.spinner = None  # a terminal progress spinner: noise in logs and pipes
    try:
        worker.execute_from_commandline()
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else 0
    return 0
