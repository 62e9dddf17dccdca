"""The gate conformance suite on the embedded SQLite store."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from query.backends.sqlite import SQLiteStore
from query.store import IndexStore
from tests.conformance.gate_suite import GateConformance


class TestSQLiteGate(GateConformance):
    @pytest.fixture
    async def store(self) -> AsyncIterator[IndexStore]:
        s = SQLiteStore(":memory:")
        await s.start()
        yield s
        await s.stop()
