"""Fixtures for the stream tests: a tenant index with the portal corpus, the steps on it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from nuggetflow.settings import Settings
from optimizer.local import local_roles
from query.backends.sqlite import SQLiteStore
from query.corpus import Document, passages_of
from query.embeddings import MiniLMEmbedder
from query.index import NuggetIndex
from stream.engine import Engine, InlineEngine
from stream.metrics import WorkerMetrics as Metrics
from stream.steps import Steps
from stream.synthetic import T0, portal_corpus

TENANTS = ("acme", "globex")


@pytest.fixture
def stream_settings(tmp_path: Path) -> Settings:
    """Settings for one test: its own store file, fast retries, acme auto-publishes."""
    return Settings.from_env({}, store=f"sqlite:///{tmp_path}/index.db",
                             review_policy_tenants="acme=auto",
                             stream_retry_initial_seconds=0.01,
                             stream_retry_max_seconds=0.05)


async def add_corpus(index: NuggetIndex, tenants: tuple[str, ...] = TENANTS) -> None:
    """The portal corpus for each tenant."""
    for tenant in tenants:
        for rec in portal_corpus(tenant):
            await index.ingest_passages(passages_of(Document(
                rec["id"], tenant, rec["title"], rec["text"], valid_from=T0), 800))


@pytest.fixture
async def index(stream_settings: Settings, embedder: MiniLMEmbedder,
                tmp_path: Path) -> AsyncIterator[NuggetIndex]:
    """A started index on a file with the portal corpus for acme and globex."""
    idx = NuggetIndex(SQLiteStore(tmp_path / "index.db"), embedder, stream_settings)
    await idx.start()
    await add_corpus(idx)
    yield idx
    await idx.stop()


@pytest.fixture
def metrics() -> Metrics:
    """Metrics on a registry of the test's own."""
    return Metrics.create()


@pytest.fixture
def sleeps() -> list[float]:
    """The backoff sleeps the steps asked for (they do not really sleep in unit tests)."""
    return []


def make_steps(index: NuggetIndex, engine: Engine, settings: Settings, metrics: Metrics,
               sleeps: list[float]) -> Steps:
    """Steps whose backoff sleeps are recorded in ``sleeps`` (jitter fixed at its max)."""

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    return Steps(index, engine, settings, metrics.pipeline, sleep=sleep, jitter=lambda: 1.0)


@pytest.fixture
async def steps(index: NuggetIndex, stream_settings: Settings, metrics: Metrics,
                sleeps: list[float]) -> AsyncIterator[Steps]:
    """The steps on the index, with the local backend run inline."""
    engine = InlineEngine(index.store, index.embedder, local_roles(), stream_settings,
                          on_usage=metrics.pipeline.observe_usage)
    await engine.start()
    yield make_steps(index, engine, stream_settings, metrics, sleeps)
    await engine.stop()
