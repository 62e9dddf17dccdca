"""Corpus ingestion on a real OpenSearch node (the shared suite)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from nuggetflow.settings import Settings
from query.backends.opensearch import OpenSearchStore
from query.embeddings import MiniLMEmbedder
from query.index import NuggetIndex
from tests.conformance.corpus_suite import CorpusConformance

pytestmark = pytest.mark.integration


class TestOpenSearchCorpus(CorpusConformance):
    @pytest.fixture
    async def index(self, opensearch_url: str, embedder: MiniLMEmbedder,
                    settings: Settings) -> AsyncIterator[NuggetIndex]:
        store = OpenSearchStore(opensearch_url, index=f"test-{uuid.uuid4().hex[:12]}")
        idx = NuggetIndex(store, embedder, settings)
        await idx.start()
        yield idx
        await store.drop()
        await idx.stop()
