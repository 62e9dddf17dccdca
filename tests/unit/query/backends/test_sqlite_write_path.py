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


def test_the_review_queue_reads_a_range_of_its_own_index(tmp_path: Path) -> None:
    """A page of the review queue is one range read of items_review per state (no scan,
    no sort), and a file made before the index has it once it is opened."""
    from query.backends.sqlite import HEADS_PAGE_SQL

    path = tmp_path / "queue.db"
    store = SQLiteStore(path)
    store.start_sync()
    store.db.execute("DROP INDEX items_review")  # as in a file from before the queue
    store.db.close()
    store = SQLiteStore(path)
    store.start_sync()
    try:
        plan = " ".join(str(r) for r in store.db.execute("EXPLAIN QUERY PLAN " + HEADS_PAGE_SQL,
                                                         (1, 2, "", 10)))
        assert "USING INDEX items_review (tenant=? AND publication=? AND id>?)" in plan, plan
        assert "SCAN" not in plan and "TEMP B-TREE" not in plan, plan
    finally:
        store.db.close()


async def test_the_review_queue_visits_as_many_rows_beside_400_published_as_beside_10(
        store: SQLiteStore, embedder: MiniLMEmbedder) -> None:
    vector = embedder.embed(["one vector for all"])[0]

    async def add(prefix: str, count: int, publication: Publication) -> None:
        batch = [make_nugget(obj=f"{prefix} {i}", sources=(f"{prefix}-{i}",),
                             publication=publication) for i in range(count)]
        await store.write_nuggets(batch, [vector] * count)

    steps = 0

    def tick() -> int:
        nonlocal steps
        steps += 1
        return 0

    async def one_page() -> int:
        nonlocal steps
        steps = 0
        store.db.set_progress_handler(tick, 1)
        try:
            page = await store.heads_page("acme", [Publication.PENDING_REVIEW], 10)
        finally:
            store.db.set_progress_handler(None, 1)
        assert len(page) == 3
        return steps

    await add("pending", 3, Publication.PENDING_REVIEW)
    await add("published", 10, Publication.PUBLISHED)
    await one_page()  # warm up
    beside_10 = await one_page()
    await add("more published", 390, Publication.PUBLISHED)
    beside_400 = await one_page()
    assert beside_400 < 1.5 * beside_10, (beside_10, beside_400)
