"""The gate conformance suite on a real OpenSearch node."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from query.backends.opensearch import OpenSearchStore
from query.store import IndexStore
from tests.conformance.gate_suite import GateConformance

pytestmark = pytest.mark.integration


class TestOpenSearchGate(GateConformance):
    @pytest.fixture
    async def store(self, opensearch_url: str) -> AsyncIterator[IndexStore]:
        s = OpenSearchStore(opensearch_url, index=f"test-{uuid.uuid4().hex[:12]}")
        await s.start()
        yield s
        await s.drop()
        await s.stop()
