"""NuggetIndex writes: deadlines (checked before the write begins), writes that are never
abandoned half way, and request ids applied once per lineage."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from nuggetflow.errors import DeadlineExceededError
from nuggetflow.settings import Settings
from query.backends.sqlite import SQLiteStore
from query.embeddings import MiniLMEmbedder, Vector
from query.index import NuggetIndex
from query.model import Nugget, Publication
from tests.helpers import make_nugget


class SlowWrites(SQLiteStore):
    """A SQLite store whose writes wait (awaiting) before they write."""

    write_delay = 0.0

    async def write_nuggets(self, versions: Sequence[Nugget], vectors: Sequence[Vector | None],
                            anchor_vectors: Sequence[Vector | None] | None = None) -> None:
        await asyncio.sleep(self.write_delay)
        await super().write_nuggets(versions, vectors, anchor_vectors)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SlowWrites]:
    s = SlowWrites(tmp_path / "writes.db")
    await s.start()
    yield s
    await s.stop()


@pytest.fixture
async def pending(store: SlowWrites, embedder: MiniLMEmbedder) -> Nugget:
    n = make_nugget(publication=Publication.PENDING_REVIEW)
    await store.write_nuggets([n], [embedder.embed([n.text])[0]])
    return n


def index_of(store: SlowWrites, embedder: MiniLMEmbedder) -> NuggetIndex:
    return NuggetIndex(store, embedder, Settings.from_env({}))


async def test_a_passed_deadline_writes_nothing(store: SlowWrites, embedder: MiniLMEmbedder,
                                                pending: Nugget) -> None:
    index = index_of(store, embedder)
    with pytest.raises(DeadlineExceededError, match="nothing was written"):
        await index.review("acme", pending.id, "approve", deadline=time.monotonic() - 0.001)
    with pytest.raises(DeadlineExceededError):
        await index.edit("acme", pending.id, "late", title="Late",
                         deadline=time.monotonic() - 0.001)
    assert [v.id for v in await store.history("acme", pending.id)] == [pending.id]


async def test_the_deadline_passes_while_waiting_for_the_writer_lock(
        store: SlowWrites, embedder: MiniLMEmbedder, pending: Nugget) -> None:
    index = index_of(store, embedder)
    async with store.writer():  # another writer holds the lock past the deadline
        started = time.monotonic()
        with pytest.raises(DeadlineExceededError, match="writer lock"):
            await index.review("acme", pending.id, "approve", deadline=started + 0.1)
        assert time.monotonic() - started < 1.0
    await asyncio.sleep(0.05)
    assert len(await store.history("acme", pending.id)) == 1, "nothing written afterwards"
    assert (await index.review("acme", pending.id, "approve")).version == 2, "lock released"


async def test_a_begun_write_is_finished_when_the_caller_is_cancelled(
        store: SlowWrites, embedder: MiniLMEmbedder, pending: Nugget,
        caplog: pytest.LogCaptureFixture) -> None:
    index = index_of(store, embedder)
    store.write_delay = 0.2
    call = asyncio.ensure_future(index.review("acme", pending.id, "approve",
                                              request_id="req-1"))
    await asyncio.sleep(0.1)  # the write has begun (it is waiting inside write_nuggets)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    history = await store.history("acme", pending.id)
    assert [v.version for v in history] == [1, 2], "applied whole, once"
    assert any(r.getMessage().startswith("write finished after its call was cancelled")
               for r in caplog.records)
    store.write_delay = 0.0
    again = await index.apply_review("acme", pending.id, "approve", request_id="req-1")
    assert again.replayed and again.head == history[1]


async def test_a_request_id_applies_once_under_concurrency(
        store: SlowWrites, embedder: MiniLMEmbedder, pending: Nugget) -> None:
    index = index_of(store, embedder)
    results = await asyncio.gather(*(
        index.apply_review("acme", pending.id, "approve", request_id="same")
        for _ in range(5)))
    assert len({r.head.id for r in results}) == 1
    assert sorted(r.replayed for r in results) == [False, True, True, True, True]
    edits = await asyncio.gather(*(
        index.apply_edit("acme", pending.id, "retitle", request_id="edit-1", title="New")
        for _ in range(3)))
    assert [e.replayed for e in edits].count(False) == 1
    assert len(await store.history("acme", pending.id)) == 3
