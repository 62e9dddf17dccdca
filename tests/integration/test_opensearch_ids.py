"""An OpenSearch index made before tenant-scoped ids: refused when it holds documents,
upgraded in place when it is empty."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from opensearchpy import AsyncOpenSearch

from nuggetflow.errors import ConfigError
from query.backends.opensearch import OpenSearchStore, _mappings

pytestmark = pytest.mark.integration


def _old_mappings() -> dict[str, Any]:
    old = _mappings(384)
    del old["_meta"]
    for name in ("doc_id", "digest"):
        del old["properties"][name]
    return old


async def _old_index(url: str, docs: int) -> str:
    name = f"test-old-{uuid.uuid4().hex[:12]}"
    client = AsyncOpenSearch(hosts=[url])
    await client.indices.create(index=name, body={
        "settings": {"index": {"knn": True, "number_of_shards": 1, "number_of_replicas": 0}},
        "mappings": _old_mappings()})
    for i in range(docs):
        await client.index(index=name, id=f"a11y#{i}", refresh=True,
                           body={"id": f"a11y#{i}", "tenant": "acme", "title": "A"})
    await client.close()
    return name


async def test_an_old_index_with_documents_is_refused(opensearch_url: str) -> None:
    name = await _old_index(opensearch_url, 1)
    store = OpenSearchStore(opensearch_url, index=name)
    try:
        with pytest.raises(ConfigError) as err:
            await store.start()
        assert err.value.field == "NUGGETFLOW_OPENSEARCH_INDEX"
        assert "before tenant-scoped ids" in str(err.value)
    finally:
        await store.drop()


async def test_an_empty_old_index_is_upgraded(opensearch_url: str) -> None:
    name = await _old_index(opensearch_url, 0)
    store = OpenSearchStore(opensearch_url, index=name)
    await store.start()
    try:
        assert await store.document_heads("acme", ["a11y"]) == {}
        await store.stop()
        await store.start()  # the second start finds the scheme recorded
    finally:
        await store.drop()
        await store.stop()
