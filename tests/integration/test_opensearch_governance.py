"""The governance property test (random histories) on a real OpenSearch node."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from hypothesis import HealthCheck, given, settings

from query.backends.opensearch import OpenSearchStore
from query.embeddings import MiniLMEmbedder
from tests.unit.query.test_governance_properties import histories, run_history

pytestmark = pytest.mark.integration


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(history=histories)
def test_governed_views_hold_on_opensearch(history: list[object], embedder: MiniLMEmbedder,
                                           opensearch_url: str) -> None:
    async def run() -> None:
        store = OpenSearchStore(opensearch_url, index=f"prop-{uuid.uuid4().hex[:12]}")
        try:
            await run_history(history, embedder, store)
        finally:
            await store.start()
            await store.drop()
            await store.stop()

    asyncio.run(run())
