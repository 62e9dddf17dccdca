"""SQLite: the work of a review does not grow with the lineage's history.

Counted in SQLite virtual-machine instructions (``set_progress_handler`` every step): a
deterministic measure of the rows a statement visits, unlike time.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from nuggetflow.settings import Settings
from query.backends.sqlite import SQLiteStore
from query.embeddings import MiniLMEmbedder
from query.index import NuggetIndex
from query.model import Nugget, Publication, next_version
from tests.helpers import T0, days, make_nugget


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "write-path.db")
    await s.start()
    yield s
    await s.stop()


async def chain(store: SQLiteStore, embedder: MiniLMEmbedder, first: Nugget,
                versions: int) -> list[Nugget]:
    """``first`` and ``versions - 1`` alternating unpublish/approve children, written."""
    await store.write_nuggets([first], [embedder.embed([first.text])[0]])
    out = [first]
    for i in range(versions - 1):
        pub = (Publication.UNPUBLISHED if out[-1].publication is Publication.PUBLISHED
               else Publication.PUBLISHED)
        out.append(next_version(out[-1], f"step {i}", T0 + days(1), publication=pub))
    await store.write_nuggets(out[1:], [None] * (versions - 1))
    return out


async def test_review_visits_as_many_rows_at_400_versions_as_at_10(
        store: SQLiteStore, embedder: MiniLMEmbedder) -> None:
    index = NuggetIndex(store, embedder, Settings.from_env({}))
    short = await chain(store, embedder, make_nugget(obj="Owner", sources=("a",)), 10)
    long = await chain(store, embedder, make_nugget(subject="export limit", obj="10 rows",
                                                    sources=("b",)), 400)
    steps = 0

    def tick() -> int:
        nonlocal steps
        steps += 1
        return 0

    async def two_reviews(lineage: list[Nugget]) -> int:
        nonlocal steps
        steps = 0
        store.db.set_progress_handler(tick, 1)
        try:
            await index.review("acme", lineage[0].id, "approve")
            await index.review("acme", lineage[-1].id, "unpublish")
        finally:
            store.db.set_progress_handler(None, 1)
        return steps

    for lineage in (short, long):  # warm up (first writes of a lineage, FTS merges)
        await two_reviews(lineage)
    at_10, at_400 = await two_reviews(short), await two_reviews(long)
    # Reading the whole lineage (as the write path once did) costs ~10x here.
    assert at_400 < 2 * at_10, (at_10, at_400)
    assert len(await store.history("acme", long[0].id)) == 404


def test_head_lookups_use_the_partial_index_on_heads(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "plan.db")
    store.start_sync()
    try:
        for sql in ("SELECT rowid FROM items WHERE lineage = ? AND is_head = 1",
                    "UPDATE items SET is_head = 0 WHERE lineage = ? AND is_head = 1"):
            plan = " ".join(str(r) for r in store.db.execute("EXPLAIN QUERY PLAN " + sql,
                                                             ("n-x",)))
            assert "items_lineage_head" in plan, plan
    finally:
        store.db.close()
