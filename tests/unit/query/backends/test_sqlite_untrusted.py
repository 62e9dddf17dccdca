"""Untrusted feedback end to end on the embedded SQLite store."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from query.backends.sqlite import SQLiteStore
from query.store import IndexStore
from tests.conformance.untrusted_suite import UntrustedConformance


class TestSQLiteUntrusted(UntrustedConformance):
    @pytest.fixture
    async def store(self, tmp_path: Path) -> AsyncIterator[IndexStore]:
        s = SQLiteStore(tmp_path / "index.db")
        await s.start()
        yield s
        await s.stop()
