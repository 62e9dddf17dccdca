"""How the parts are put together, in one place for every command and the demo.

The commands of :mod:`app.cli` and :mod:`app.stream_commands` and the demo build the
same things: settings with command-line flags on top, the governed index (store and
embedder picked by the settings), the LLM roles, the optimizer with its probe harness,
the in-process engine, and a stream worker with its threaded engine. They get them here,
so each is built one way. Heavy modules are imported inside the functions: ``nuggetflow
--help`` stays instant.
"""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nuggetflow.settings import Settings

if TYPE_CHECKING:
    from optimizer.external import ExternalHarness
    from optimizer.harness import BuiltinHarness
    from optimizer.pipeline import Optimizer
    from optimizer.roles import Roles
    from query.index import NuggetIndex
    from stream.app import WorkerParts
    from stream.engine import InlineEngine
    from stream.metrics import WorkerMetrics


def with_flags(settings: Settings, args: argparse.Namespace,
               flags: Mapping[str, str]) -> Settings:
    """``settings`` with each flag the user gave set on its setting.

    ``flags`` maps an argument name to the setting it overrides (``{"port":
    "grpc_port"}``); a flag left at ``None`` keeps the setting's value."""
    changes: dict[str, Any] = {setting: getattr(args, flag) for flag, setting in flags.items()
                               if getattr(args, flag, None) is not None}
    return settings.replace(**changes) if changes else settings


def scratch_index(settings: Settings, path: Path) -> NuggetIndex:
    """A fresh embedded index in the single file ``path`` with the configured embedder
    (not started): the demo's, and each benchmark's in ``nuggetflow eval``."""
    from query.backends.sqlite import SQLiteStore
    from query.embeddings import make_embedder
    from query.index import NuggetIndex

    return NuggetIndex(SQLiteStore(path, settings.embedding_dim), make_embedder(settings),
                       settings)


def open_index(settings: Settings) -> NuggetIndex:
    """The governed index for these settings (not started)."""
    from query.index import build_index

    return build_index(settings)


async def with_index(settings: Settings, fn: Callable[[NuggetIndex], Awaitable[int]]) -> int:
    """Run ``fn`` on a started index and stop the index afterwards, whatever happens."""
    index = open_index(settings)
    await index.start()
    try:
        return await fn(index)
    finally:
        await index.stop()


def make_roles_for(settings: Settings, index: NuggetIndex) -> Roles:
    """The configured LLM roles, sharing the index's embedder."""
    from optimizer.backends import make_roles

    return make_roles(settings, embedder=index.embedder)


def make_optimizer(settings: Settings, index: NuggetIndex,
                   roles: Roles | None = None
                   ) -> tuple[Optimizer, BuiltinHarness | ExternalHarness]:
    """The optimizer over this index with the configured probe harness (close the harness
    when done)."""
    from optimizer.backends import make_harness
    from optimizer.pipeline import Optimizer

    roles = roles or make_roles_for(settings, index)
    harness = make_harness(settings, index.store, index.embedder, roles.generator)
    return Optimizer(index.store, index.embedder, roles, settings, harness=harness), harness


def make_inline_engine(settings: Settings, index: NuggetIndex,
                       roles: Roles | None = None) -> InlineEngine:
    """The in-process engine (the embedded runner's and the demo's), not started."""
    from stream.engine import InlineEngine

    return InlineEngine(index.store, index.embedder, roles or make_roles_for(settings, index),
                        settings)


@asynccontextmanager
async def inline_engine(settings: Settings, index: NuggetIndex,
                        roles: Roles | None = None) -> AsyncIterator[InlineEngine]:
    """:func:`make_inline_engine`, started, and stopped when the block ends."""
    engine = make_inline_engine(settings, index, roles)
    await engine.start()
    try:
        yield engine
    finally:
        await engine.stop()


def make_worker(settings: Settings, *, metrics: WorkerMetrics | None = None,
                serve_metrics: bool = True) -> WorkerParts:
    """A stream worker for these settings: the index, a threaded engine whose threads
    each open their own store and roles, and the worker's metrics, assembled by
    :func:`stream.app.build_worker` (no I/O until the worker starts)."""
    from optimizer.backends import make_roles
    from query.backends import make_store
    from stream.agents import enabled_agents
    from stream.app import build_worker
    from stream.engine import ThreadedEngine
    from stream.metrics import WorkerMetrics

    metrics = metrics or WorkerMetrics.create(process=True)
    pipeline = metrics.pipeline

    def on_llm_retry(role: str, kind: str) -> None:
        pipeline.observe_llm_call(role, ok=False)

    index = open_index(settings)
    engine = ThreadedEngine(settings, index.embedder, lambda: make_store(settings),
                            lambda: make_roles(settings, embedder=index.embedder,
                                               on_retry=on_llm_retry),
                            settings.stream_optimize_concurrency
                            if "optimize" in enabled_agents(settings) else 0,
                            on_usage=pipeline.observe_usage)
    return build_worker(settings, index, engine, metrics, serve_metrics=serve_metrics)
