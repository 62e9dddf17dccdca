"""A read OpenSearch answers in part (shards or documents it could not reach) is an
error, retried by the caller, never taken as the whole answer: a head read as absent
while its shard is down would let a writer start a second lineage."""

from __future__ import annotations

from typing import Any

import pytest

from nuggetflow.errors import BackendUnavailableError, ValidationError
from query.backends.opensearch import OpenSearchStore, partial_read

WHOLE_SEARCH = {"_shards": {"total": 3, "successful": 3, "skipped": 0, "failed": 0},
                "hits": {"hits": []}}
PART_SEARCH = {"_shards": {"total": 3, "successful": 2, "skipped": 0, "failed": 1},
               "hits": {"hits": [{"_id": "x"}]}}


@pytest.mark.parametrize(("reply", "why"), [
    (WHOLE_SEARCH, ""),
    (PART_SEARCH, "1 of 3 shards failed"),
    ({"_shards": {"total": 2, "failed": 2}, "count": 0}, "2 of 2 shards failed"),
    # shards the search went to that neither answered nor failed, or a shard timed out
    ({"_shards": {"total": 3, "successful": 2, "skipped": 0, "failed": 0},
      "hits": {"hits": []}}, "2 of 3 shards answered"),
    ({"_shards": {"total": 3, "successful": 1, "skipped": 2, "failed": 0},
      "hits": {"hits": []}}, ""),
    ({**WHOLE_SEARCH, "timed_out": True}, "the search timed out on a shard"),
    ({**WHOLE_SEARCH, "timed_out": False}, ""),
    ({"_shards": {"total": 2, "successful": 1, "failed": 1}, "result": "created"}, ""),
    ({"docs": [{"_id": "a", "found": True}, {"_id": "b", "found": False}]}, ""),
    ({"docs": [{"_id": "a", "found": True}, {"_id": "b", "error": {"type": "no_shard"}}]},
     "1 of 2 documents unreadable"),
    ({"acknowledged": True}, ""),
    ([], ""),
])
def test_partial_read(reply: Any, why: str) -> None:
    assert partial_read(reply) == why


async def test_a_partial_search_is_asked_again_then_raises_unavailable(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A node that died while a search was on it fails its shard for that search: the read
    is asked again (here the second answer is whole); one that stays partial is an error
    after the last attempt, never the answer."""
    import query.backends.opensearch as module

    monkeypatch.setattr(module, "PARTIAL_READ_BACKOFF_SECONDS", 0.0)
    store = OpenSearchStore("http://127.0.0.1:1", index="partial")
    store._client = object()  # _call only checks it is set
    asked: list[str] = []

    async def search(**_: Any) -> Any:
        asked.append("part")
        return PART_SEARCH

    async def then_whole(**_: Any) -> Any:
        asked.append("then")
        return PART_SEARCH if len(asked) == 1 else WHOLE_SEARCH

    assert await store._call(then_whole, index="partial", body={}) == WHOLE_SEARCH
    assert asked == ["then", "then"]
    asked.clear()
    with pytest.raises(BackendUnavailableError, match="1 of 3 shards failed"):
        await store._call(search, index="partial", body={})
    assert asked == ["part"] * module.PARTIAL_READ_ATTEMPTS


def _bulk_reply(*items: tuple[int, str]) -> dict[str, Any]:
    return {"errors": any(status >= 300 for status, _ in items), "items": [
        {"create": {"_id": f"n{i}", "status": status}
         | ({"error": {"type": kind, "reason": kind}} if status >= 300 else {})}
        for i, (status, kind) in enumerate(items)]}


@pytest.mark.parametrize("failure", [(503, "unavailable_shards_exception"),
                                     (500, "node_not_connected_exception"),
                                     (429, "rejected_execution_exception")])
async def test_a_bulk_item_that_failed_for_now_is_retriable(failure: tuple[int, str]) -> None:
    """A write whose item met a shard without an active primary (a node was killed) is
    tried again, not rejected as invalid: the stream would dead-letter a good event."""
    store = OpenSearchStore("http://127.0.0.1:1", index="partial")
    store._client = type("Client", (), {"bulk": staticmethod(
        lambda **_: _async(_bulk_reply((201, ""), failure)))})()
    with pytest.raises(BackendUnavailableError, match=failure[1]):
        await store._bulk([{"create": {"_id": "n0"}}, {}, {"create": {"_id": "n1"}}, {}])


async def test_a_bulk_item_the_engine_rejects_is_a_validation_error() -> None:
    store = OpenSearchStore("http://127.0.0.1:1", index="partial")
    store._client = type("Client", (), {"bulk": staticmethod(
        lambda **_: _async(_bulk_reply((201, ""), (400, "mapper_parsing_exception"))))})()
    with pytest.raises(ValidationError, match="mapper_parsing_exception"):
        await store._bulk([{"create": {"_id": "n0"}}, {}, {"create": {"_id": "n1"}}, {}])


async def _async(value: Any) -> Any:
    return value


class _RetriedClient:
    """A bulk reply whose creates were refused as existing (409), and the documents that
    exist under those ids."""

    def __init__(self, stored: dict[str, dict[str, Any]]) -> None:
        self.stored = stored
        self.mgets: list[list[str]] = []

    async def bulk(self, **_: Any) -> Any:
        return _bulk_reply(*[(409, "version_conflict_engine_exception")] * len(self.stored))

    async def mget(self, *, body: dict[str, Any], **_: Any) -> Any:
        self.mgets.append(body["ids"])
        return {"docs": [{"_id": i, "found": i in self.stored, "_source": self.stored.get(i)}
                         for i in body["ids"]]}


def _doc(payload: str) -> dict[str, Any]:
    return {"tenant": "acme", "id": "n-1", "lineage": "n-1", "version": 1, "payload": payload,
            "title": "t", "vector": [0.5]}


async def test_a_create_met_by_its_own_earlier_attempt_is_applied() -> None:
    """The client retries a bulk request whose answer it lost (a node killed after it
    wrote): the retry's create meets the first attempt's document. Same content: the
    write happened once and the event is not dead-lettered."""
    store = OpenSearchStore("http://127.0.0.1:1", index="partial")
    client = _RetriedClient({"n0": {k: v for k, v in _doc("AAA").items()
                                    if k not in ("title", "vector")}})
    store._client = client
    await store._bulk([{"create": {"_id": "n0"}}, _doc("AAA")])
    assert client.mgets == [["n0"]]


async def test_a_create_met_by_another_document_is_a_conflict() -> None:
    store = OpenSearchStore("http://127.0.0.1:1", index="partial")
    store._client = _RetriedClient({"n0": {"tenant": "acme", "id": "n-1", "lineage": "n-1",
                                           "version": 1, "payload": "BBB"}})
    with pytest.raises(ValidationError, match="version_conflict"):
        await store._bulk([{"create": {"_id": "n0"}}, _doc("AAA")])


async def test_an_overlay_whose_create_was_retried_after_a_lost_answer_opens() -> None:
    """A node dies after creating the overlay's scratch index and before answering: the
    client's retry meets the index it made. The name is fresh per overlay, so it is the
    overlay's own and the probe goes on (it was a dead letter in the cluster fault test)."""
    from opensearchpy import RequestError

    from query.backends.opensearch import OpenSearchOverlay

    store = OpenSearchStore("http://127.0.0.1:1", index="faults")
    indexed: list[str] = []

    class Indices:
        async def create(self, **_: Any) -> Any:
            raise RequestError(400, "resource_already_exists_exception", "already exists")

        async def delete(self, **_: Any) -> Any:
            return {"acknowledged": True}

    class Client:
        indices = Indices()

        async def index(self, **kw: Any) -> Any:
            indexed.append(kw["index"])
            return {"result": "created"}

    store._client = Client()
    overlay = OpenSearchOverlay(store)
    await overlay._load(("Title", "Body", ""))
    assert indexed == [overlay.index] and overlay.index.startswith("faults-overlay-")


async def test_an_overlay_create_refused_for_another_reason_still_fails() -> None:
    from opensearchpy import RequestError

    from query.backends.opensearch import OpenSearchOverlay

    store = OpenSearchStore("http://127.0.0.1:1", index="faults")

    class Indices:
        async def create(self, **_: Any) -> Any:
            raise RequestError(400, "mapper_parsing_exception", "bad mapping")

    class Client:
        indices = Indices()

    store._client = Client()
    with pytest.raises(RequestError):
        await OpenSearchOverlay(store)._load(("Title", "Body", ""))
