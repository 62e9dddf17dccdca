"""The OpenSearch store's client over several node URLs, one of them down (a real node and
a port nothing listens on): requests go to the live node, and stopping the store closes
the connection to every node, the dead one too (the client alone closes only those it
deems alive, and the dead node's HTTP session leaked: "Unclosed client session")."""

from __future__ import annotations

import uuid

import pytest

from query.backends.opensearch import OpenSearchStore
from tests.support.net import free_port

pytestmark = pytest.mark.integration


async def test_stop_closes_the_session_of_a_node_that_is_down(opensearch_url: str) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    store = OpenSearchStore(f"{dead},{opensearch_url}", index=f"cli-{uuid.uuid4().hex[:12]}")
    await store.start()
    try:
        for _ in range(6):  # the client picks nodes in turn: the dead one fails over
            await store.ping()
        assert store._client is not None
        pool = store._client.transport.connection_pool
        connections = list(pool.orig_connections)
        assert len(connections) == 2
        assert len(pool.connections) == 1, "the dead node is out of the live list"
        sessions = [c.session for c in connections]
        assert all(s is not None for s in sessions), "both were used"
    finally:
        await store.drop()
        await store.stop()
    assert all(s.closed for s in sessions)
    assert all(c.session is None for c in connections)
