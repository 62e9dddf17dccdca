"""A read OpenSearch answers in part (shards or documents it could not reach) is an
error, retried by the caller, never taken as the whole answer: a head read as absent
while its shard is down would let a writer start a second lineage."""

from __future__ import annotations

from typing import Any

import pytest

from nuggetflow.errors import BackendUnavailableError
from query.backends.opensearch import OpenSearchStore, partial_read

WHOLE_SEARCH = {"_shards": {"total": 3, "successful": 3, "skipped": 0, "failed": 0},
                "hits": {"hits": []}}
PART_SEARCH = {"_shards": {"total": 3, "successful": 2, "skipped": 0, "failed": 1},
               "hits": {"hits": [{"_id": "x"}]}}


@pytest.mark.parametrize(("reply", "why"), [
    (WHOLE_SEARCH, ""),
    (PART_SEARCH, "1 of 3 shards failed"),
    ({"_shards": {"total": 2, "failed": 2}, "count": 0}, "2 of 2 shards failed"),
    ({"_shards": {"total": 2, "successful": 1, "failed": 1}, "result": "created"}, ""),
    ({"docs": [{"_id": "a", "found": True}, {"_id": "b", "found": False}]}, ""),
    ({"docs": [{"_id": "a", "found": True}, {"_id": "b", "error": {"type": "no_shard"}}]},
     "1 of 2 documents unreadable"),
    ({"acknowledged": True}, ""),
    ([], ""),
])
def test_partial_read(reply: Any, why: str) -> None:
    assert partial_read(reply) == why


async def test_a_partial_search_raises_unavailable() -> None:
    store = OpenSearchStore("http://127.0.0.1:1", index="partial")
    store._client = object()  # _call only checks it is set

    async def search(**_: Any) -> Any:
        return PART_SEARCH

    async def whole(**_: Any) -> Any:
        return WHOLE_SEARCH

    with pytest.raises(BackendUnavailableError, match="1 of 3 shards failed"):
        await store._call(search, index="partial", body={})
    assert await store._call(whole, index="partial", body={}) == WHOLE_SEARCH
