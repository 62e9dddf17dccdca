"""``nuggetflow reindex``: move the OpenSearch index to a new one behind its alias.

The configured index name is an alias of a concrete index (``<name>-v1``, ``<name>-v2``,
...). A reindex creates the next one with the current settings (shards, replicas, HNSW
parameters, the embedder's dimension), copies every document into it (OpenSearch's own
``_reindex``, or with ``re_embed`` each nugget and passage embedded again by the
configured embedder, for a new embedding model), checks the counts, then moves the alias in
one atomic request and deletes the old index. Reads answer throughout, from the old index
until the alias moves; writes are refused while the copy runs (the old index is
write-blocked so nothing written meanwhile is left behind): they fail as retriable
(BackendUnavailableError: the stream worker retries the event, gRPC answers UNAVAILABLE)
and succeed again once the alias has moved. An index made before aliases (a concrete
index with the configured name) is replaced by the alias in the same atomic request.
"""

from __future__ import annotations

import base64
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from nuggetflow.errors import ConfigError, NuggetflowError
from nuggetflow.logging import get_logger
from query.backends.opensearch import OpenSearchStore
from query.convert import nugget_from_bytes, passage_from_bytes
from query.embeddings import Embedder
from query.model import ItemType

log = get_logger(__name__)

BATCH = 256


@dataclass(frozen=True)
class ReindexReport:
    """What a reindex did."""

    alias: str
    old: str
    new: str
    documents: int
    re_embedded: bool
    seconds: float
    old_deleted: bool

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return dict(self.__dict__)


async def reindex(store: OpenSearchStore, *, embedder: Embedder | None = None,
                  keep_old: bool = False,
                  progress: Callable[[int, int], None] | None = None) -> ReindexReport:
    """Copy the index behind ``store.index`` into a new one and move the alias to it
    (see the module docstring). ``embedder`` given: embed every document again (its
    dimension must be the store's). ``progress(done, total)`` is called per batch."""
    if embedder is not None and embedder.dim != store.dim:
        raise ConfigError(f"the embedder gives {embedder.dim}-dimensional vectors, the "
                          f"store expects {store.dim}", field="NUGGETFLOW_EMBEDDING_DIM")
    started = time.perf_counter()
    client = store._client
    current = await store.concrete_indices()
    if len(current) != 1:
        raise ConfigError(f"{store.index!r} names {len(current)} indices ({current}); a "
                          "reindex needs exactly one", field="NUGGETFLOW_OPENSEARCH_INDEX")
    old = current[0]
    legacy = old == store.index
    if embedder is None:
        mapping = await store._call(client.indices.get_mapping, index=old)
        dim = mapping[old]["mappings"]["properties"]["vector"]["dimension"]
        if dim != store.dim:
            raise ConfigError(f"{old} holds {dim}-dimensional vectors and the store expects "
                              f"{store.dim}: reindex with --re-embed",
                              field="NUGGETFLOW_EMBEDDING_DIM")
    new = await _next_name(store, old)
    await store.create_concrete(new, alias=False)
    await store._call(client.indices.put_settings, index=old,
                      body={"index": {"blocks": {"write": True}}})
    log.info("reindex: writes to the old index paused", old=old, new=new)
    try:
        total = (await store._call(client.count, index=old))["count"]
        if embedder is None:
            await _copy(store, old, new)
        else:
            await _copy_embedded(store, old, new, embedder, total, progress)
        await store._call(client.indices.refresh, index=new)
        copied = (await store._call(client.count, index=new))["count"]
        if copied != total:
            raise NuggetflowError(f"the new index holds {copied} documents, the old {total}; "
                                  "nothing was switched")
        actions: list[dict[str, Any]] = [
            {"remove_index": {"index": old}} if legacy else
            {"remove": {"index": old, "alias": store.index}},
            {"add": {"index": new, "alias": store.index, "is_write_index": True}}]
        await store._call(client.indices.update_aliases, body={"actions": actions})
    except BaseException:
        await store._call(client.indices.put_settings, index=old,
                          body={"index": {"blocks": {"write": False}}})
        await store._call(client.indices.delete, index=new, ignore_unavailable=True)
        log.error("reindex failed; the old index is unchanged and takes writes again",
                  old=old)
        raise
    deleted = legacy  # removed by the alias request
    if not legacy:
        if keep_old:
            await store._call(client.indices.put_settings, index=old,
                              body={"index": {"blocks": {"write": False}}})
        else:
            await store._call(client.indices.delete, index=old)
            deleted = True
    report = ReindexReport(store.index, old, new, total, embedder is not None,
                           round(time.perf_counter() - started, 2), deleted)
    log.info("reindex done", **report.to_dict())
    return report


async def _next_name(store: OpenSearchStore, old: str) -> str:
    """``<alias>-v<n+1>`` after ``old`` (v1 after an index made before aliases); a
    leftover of a failed reindex with that name (not behind the alias) is removed."""
    match = re.fullmatch(re.escape(store.index) + r"-v(\d+)", old)
    name = f"{store.index}-v{int(match.group(1)) + 1 if match else 1}"
    if await store._call(store._client.indices.exists, index=name):
        log.warning("reindex: removing a leftover index of an earlier run", index=name)
        await store._call(store._client.indices.delete, index=name)
    return name


async def _copy(store: OpenSearchStore, old: str, new: str) -> None:
    """OpenSearch's ``_reindex`` (vectors copied as they are)."""
    reply = await store._call(store._client.reindex, body={
        "source": {"index": old, "size": 500}, "dest": {"index": new, "op_type": "create"}},
        wait_for_completion=True, refresh=True, request_timeout=3600)
    if reply.get("failures"):
        raise NuggetflowError(f"reindex failures: {reply['failures'][:3]}")


async def _copy_embedded(store: OpenSearchStore, old: str, new: str, embedder: Embedder,
                         total: int, progress: Callable[[int, int], None] | None) -> None:
    """Every document read in (tenant, id) order (search_after; the old index is
    write-blocked, so the order is stable), embedded again, written."""
    after: list[Any] | None = None
    done = 0
    while True:
        body: dict[str, Any] = {"size": BATCH, "sort": [{"tenant": "asc"}, {"id": "asc"}],
                                "query": {"match_all": {}}}
        if after is not None:
            body["search_after"] = after
        hits = (await store._call(store._client.search, index=old, body=body))["hits"]["hits"]
        if not hits:
            return
        ops: list[dict[str, Any]] = []
        for hit, doc in zip(hits, _embedded([h["_source"] for h in hits], embedder),
                            strict=True):
            ops += [{"create": {"_index": new, "_id": hit["_id"]}}, doc]
        await store._bulk(ops, refresh=False)
        done += len(hits)
        after = hits[-1]["sort"]
        if progress is not None:
            progress(done, total)


def _embedded(docs: list[dict[str, Any]], embedder: Embedder) -> list[dict[str, Any]]:
    """The documents with statement and anchor vectors made by ``embedder``: a nugget's
    statement is its ``embedding_text``, a passage's its title and text."""
    texts: list[str] = []
    anchors: list[list[str]] = []
    for d in docs:
        raw = base64.b64decode(d["payload"])
        if d.get("type") == int(ItemType.NUGGET):
            n = nugget_from_bytes(raw)
            texts.append(n.embedding_text)
            anchors.append(list(n.anchors) if d.get("anchor_vectors") else [])
        else:
            p = passage_from_bytes(raw)
            texts.append(f"{p.title}\n{p.text}")
            anchors.append([])
    vectors = embedder.embed(texts)
    out = []
    for d, vec, anchor_texts in zip(docs, vectors, anchors, strict=True):
        doc = {**d, "vector": np.asarray(vec, dtype=np.float32).tolist()}
        if anchor_texts:
            doc["anchor_vectors"] = base64.b64encode(np.asarray(
                embedder.embed(anchor_texts), dtype=np.float32).tobytes()).decode()
        out.append(doc)
    return out
