"""Corpus ingestion on the embedded store (the shared suite)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from nuggetflow.settings import Settings
from query.backends.sqlite import SQLiteStore
from query.embeddings import MiniLMEmbedder
from query.index import NuggetIndex
from tests.conformance.corpus_suite import CorpusConformance


class TestSQLiteCorpus(CorpusConformance):
    @pytest.fixture
    async def index(self, tmp_path: Path, embedder: MiniLMEmbedder,
                    settings: Settings) -> AsyncIterator[NuggetIndex]:
        idx = NuggetIndex(SQLiteStore(tmp_path / "c.db"), embedder, settings)
        await idx.start()
        yield idx
        await idx.stop()
