"""One writer and concurrent readers on the same SQLite file, in separate processes."""

from __future__ import annotations

import itertools
import multiprocessing as mp
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from query.backends.sqlite import SQLiteStore
from query.embeddings import Vector
from query.model import View
from query.store import GovernanceFilter
from query.text import query_terms
from tests.helpers import T0, days, make_nugget

N = 40
EDITS = 30


def _writer(path: str, ready: mp.synchronize.Event) -> None:
    store = SQLiteStore(path)
    store.start_sync()
    ready.set()
    rng = np.random.default_rng(0)
    for i in range(N):
        n = make_nugget(obj=f"Role {i}", subject=f"subject {i}", sources=(f"ev-{i}",))
        v = rng.normal(size=384).astype(np.float32)
        store.write_nuggets_sync([n], [v / np.linalg.norm(v)])


def test_reader_process_sees_every_committed_write(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.db")
    reader = SQLiteStore(path)
    reader.start_sync()
    ctx = mp.get_context("spawn")
    ready = ctx.Event()
    proc = ctx.Process(target=_writer, args=(path, ready))
    proc.start()
    assert ready.wait(60)
    flt = GovernanceFilter("acme", T0 + days(1), View.ACTIVE)
    seen_counts = []
    q = np.ones(384, dtype=np.float32) / np.sqrt(384)
    while proc.is_alive():
        lex = reader.lexical_sync(query_terms("role"), flt, 1000)
        seen_counts.append(len(lex))
    proc.join(60)
    assert proc.exitcode == 0
    assert seen_counts == sorted(seen_counts), "readers never see a write disappear"
    assert len(reader.lexical_sync(query_terms("role"), flt, 1000)) == N
    dense = reader.dense_sync(q, flt, 1000)
    assert len(dense) == N, "the reader's vector index picked up the other process's rows"


class HashEmbedder:
    """Deterministic unit vectors from the text (no model: fast in child processes)."""

    dim = 384

    def embed(self, texts: Sequence[str]) -> Vector:
        out = []
        for t in texts:
            v = np.random.default_rng(abs(hash(t)) % 2**32).normal(size=384)
            out.append(v / np.linalg.norm(v))
        return np.asarray(out, dtype=np.float32)

    embed_queries = embed  # no query prefix


def _editor(path: str, nugget_id: str, who: str, edits: int, go: mp.synchronize.Event) -> None:
    import asyncio

    from nuggetflow.settings import Settings
    from query.index import NuggetIndex

    async def run() -> None:
        store = SQLiteStore(path)
        await store.start()
        index = NuggetIndex(store, HashEmbedder(), Settings.from_env({}))
        assert go.wait(60)
        for i in range(edits):
            await index.edit("acme", nugget_id, f"{who} edit {i}",
                             body=f"Edited by {who}, round {i}.")
        await store.stop()

    asyncio.run(run())


def test_two_processes_editing_one_nugget_keep_a_single_chain(tmp_path: Path) -> None:
    """Each edit reads the head and writes its child: without the writer lock across
    processes, two editors derive children of the same head and the lineage forks."""
    import asyncio

    path = str(tmp_path / "shared.db")
    store = SQLiteStore(path)
    store.start_sync()
    n = make_nugget()
    store.write_nuggets_sync([n], [HashEmbedder().embed([n.embedding_text])[0]])
    ctx = mp.get_context("spawn")
    go = ctx.Event()
    procs = [ctx.Process(target=_editor, args=(path, n.id, who, EDITS, go)) for who in "ab"]
    for p in procs:
        p.start()
    go.set()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    history = asyncio.run(store.history("acme", n.id))
    assert len(history) == 1 + 2 * EDITS
    assert [v.version for v in history] == list(range(1, len(history) + 1))
    for parent, child in itertools.pairwise(history):
        assert child.parent_id == parent.id, "the lineage forked"
    heads = store.db.execute("SELECT count(*) FROM items WHERE lineage = ? AND is_head = 1",
                             (n.id,)).fetchone()[0]
    assert heads == 1


def test_anchor_vectors_reach_readers_and_survive_restarts(tmp_path: Path) -> None:
    """Anchor vectors written by one connection reach another one's vector index (via the
    change log) and are loaded again on start."""
    import asyncio

    path = tmp_path / "a.db"
    writer, reader = SQLiteStore(path), SQLiteStore(path)
    writer.start_sync()
    reader.start_sync()
    emb = HashEmbedder()
    n = make_nugget(anchors=("first anchor text", "second anchor text"))
    anchors = emb.embed(list(n.anchors))
    writer.write_nuggets_sync([n], [emb.embed([n.embedding_text])[0]], [anchors])
    flt = GovernanceFilter("acme", T0 + days(1), View.ACTIVE)
    for store in (reader, writer):
        hits = store.dense_sync(anchors[1], flt, 5)
        assert hits[0].id == n.id and abs(hits[0].score - 1.0) < 1e-5
    asyncio.run(writer.stop())
    asyncio.run(reader.stop())
    again = SQLiteStore(path)
    again.start_sync()
    hits = again.dense_sync(anchors[0], flt, 5)
    assert hits[0].id == n.id and abs(hits[0].score - 1.0) < 1e-5


def test_a_writer_cancelled_while_waiting_does_not_keep_the_lock(tmp_path: Path) -> None:
    """A deadline that cancels a writer queued behind another one must not leave the
    writer lock held once the queued acquisition completes."""
    import asyncio

    store = SQLiteStore(tmp_path / "w.db")
    store.start_sync()

    async def run() -> None:
        async with store.writer():
            waiter = asyncio.ensure_future(store.writer().__aenter__())
            await asyncio.sleep(0.05)  # queued behind the holder
            waiter.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiter
        async with asyncio.timeout(5):  # the lock is free again for the next writer
            async with store.writer():
                pass

    asyncio.run(run())
