"""A query service over a seeded SQLite index, for tests and benchmarks that talk to it
over gRPC: one way to seed (vectors made as every write makes them, anchors included),
serve on a free port and stop again."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nuggetflow.settings import Settings
from query.backends.sqlite import SQLiteStore
from query.embeddings import Embedder
from query.index import NuggetIndex
from query.metrics import Metrics
from query.model import Nugget
from query.service import QueryServer, create_server


@dataclass
class Served:
    """A running service: its index, server and ``host:port`` target."""
    index: NuggetIndex
    server: QueryServer
    port: int

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"


async def seed(index: NuggetIndex, nuggets: Iterable[Nugget]) -> None:
    """Write these versions as they are (no governance), with the product's vectors."""
    values = list(nuggets)
    if values:
        vectors, anchors = index.vectors_for(values)
        await index.store.write_nuggets(values, list(vectors), list(anchors))


def served_file_env(path: Path, embedder: Embedder, nuggets: Iterable[Nugget],
                    tokens: dict[str, list[str]]) -> dict[str, str]:
    """Seed the SQLite file ``path`` with ``nuggets`` (the store's own vectors from the
    statement text) and write ``tokens`` beside it: the environment a ``nuggetflow serve``
    process started by a test reads (store, tokens file, a short grace period)."""
    import asyncio
    import json
    import os

    store = SQLiteStore(path)
    store.start_sync()
    values = list(nuggets)
    store.write_nuggets_sync(values, list(embedder.embed([n.embedding_text for n in values])))
    asyncio.run(store.stop())
    token_file = path.with_name("tokens.json")
    token_file.write_text(json.dumps(tokens))
    return {**os.environ, "NUGGETFLOW_STORE": f"sqlite:///{path}",
            "NUGGETFLOW_AUTH_TOKENS_FILE": str(token_file), "NUGGETFLOW_GRPC_GRACE_SECONDS": "1"}


@asynccontextmanager
async def seeded_service(path: Path, embedder: Embedder, settings: Settings,
                         nuggets: Iterable[Nugget] = (), *, metrics: Metrics | None = None,
                         **server: Any) -> AsyncIterator[Served]:
    """Serve an index at ``path`` seeded with ``nuggets`` (``server`` goes to
    ``create_server``: auth, guard, ...) until the block ends."""
    index = NuggetIndex(SQLiteStore(path, settings.embedding_dim), embedder, settings)
    await index.start()
    try:
        await seed(index, nuggets)
        grpc_server, port = create_server(index, settings, 0,
                                          metrics=(metrics or Metrics.create()).query, **server)
        await grpc_server.start()
        try:
            yield Served(index, grpc_server, port)
        finally:
            await grpc_server.stop(0)
    finally:
        await index.stop()
