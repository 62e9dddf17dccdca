"""The store conformance suite on the embedded SQLite backend."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from query.backends.sqlite import SQLiteStore
from query.store import IndexStore
from tests.conformance.store_suite import StoreConformance


class TestSQLiteStore(StoreConformance):
    @pytest.fixture
    async def store(self, tmp_path: Path) -> AsyncIterator[IndexStore]:
        s = SQLiteStore(tmp_path / "index.db")
        await s.start()
        self._open = s
        yield s
        await self._open.stop()

    async def reopen(self, store: IndexStore) -> IndexStore:
        assert isinstance(store, SQLiteStore)
        await store.stop()
        fresh = SQLiteStore(store.path)
        await fresh.start()
        self._open = fresh
        return fresh

    def twin(self, store: IndexStore) -> IndexStore:
        assert isinstance(store, SQLiteStore)
        return SQLiteStore(store.path)
