"""The store conformance suite on a real OpenSearch node."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from query.backends.opensearch import OpenSearchStore
from query.store import IndexStore
from tests.conformance.store_suite import StoreConformance

pytestmark = pytest.mark.integration


class TestOpenSearchStore(StoreConformance):
    @pytest.fixture
    async def store(self, opensearch_url: str) -> AsyncIterator[IndexStore]:
        s = OpenSearchStore(opensearch_url, index=f"test-{uuid.uuid4().hex[:12]}")
        await s.start()
        self._open = s
        yield s
        await self._open.drop()
        await self._open.stop()

    async def reopen(self, store: IndexStore) -> IndexStore:
        assert isinstance(store, OpenSearchStore)
        await store.stop()
        fresh = OpenSearchStore(store.url, index=store.index)
        await fresh.start()
        self._open = fresh
        return fresh

    def twin(self, store: IndexStore) -> IndexStore:
        assert isinstance(store, OpenSearchStore)
        return OpenSearchStore(store.url, index=store.index)
