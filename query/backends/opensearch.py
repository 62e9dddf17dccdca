"""OpenSearch store: one index per deployment holding nugget versions and corpus passages.

- An index template with explicit mappings: governance fields as keyword/numeric fields,
  title/body/anchors as English-analyzed text, a ``knn_vector`` with the Lucene HNSW
  engine (no native library), and the record itself as stored binary.
- The governance filter sits inside the BM25 ``bool`` query and inside the ``knn``
  clause (Lucene efficient filtering), so ranking only ever sees allowed documents.
- Fusion is client-side (the neural-search hybrid query is not available here).
- Anchor vectors are stored (not indexed) beside the statement vector and rescore the
  k-NN hits (best cosine per nugget), so dense scores match the embedded store; unlike
  there, a nugget reachable only through an anchor is not added to the k-NN candidates.
- OpenSearch has no multi-document transactions: a write validates everything first,
  then sends its new versions and then the head flags they take over (see ``_apply``)
  and, if OpenSearch rejects an item, compensates (removes the new versions, restores
  the old heads) before raising, so a rejected call leaves no change.
- Writers in several processes or hosts are safe: each tenant has a commit point claimed
  with optimistic concurrency (:mod:`query.backends.guard`), so a write decided from
  heads that another writer has since moved is refused (WriteContentionError, nothing
  written) and retried by the index from a fresh read. The process-local lock only saves
  this process's writers from refusing each other.
- Nothing on the write path reads a whole lineage: the head is a size-1 query on the
  head flag, the version a request id produced a size-1 term query on ``request_id``,
  and a page of history a ``search_after`` query by (version, id).
- Items are keyed by tenant and id: a document's ``_id`` is :func:`os_id` (a digest of
  the tenant, then the item id), so two tenants' items with the same id never collide;
  every lookup filters by tenant, and hits report the item's own ``id`` field. An index
  made before (``_id`` = item id) is refused at start: re-create it.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import hashlib
import random
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

import numpy as np

from nuggetflow.errors import (
    BackendUnavailableError,
    ConfigError,
    NotFoundError,
    ValidationError,
    WriteContentionError,
    WritesPausedError,
)
from nuggetflow.logging import get_logger
from nuggetflow.settings import Settings
from query.backends.guard import CommitGuard, scope_of
from query.convert import (
    nugget_from_bytes,
    nugget_to_bytes,
    passage_from_bytes,
    passage_to_bytes,
)
from query.embeddings import Vector
from query.model import ItemType, Nugget, Passage, Publication, State, View
from query.store import (
    OPEN_END,
    DocumentHead,
    GovernanceFilter,
    Scored,
    WriterLock,
    check_vector,
    meta_prior,
    validate_passages,
    validate_write,
)
from query.traces import NuggetTrace
from query.usage import ReviewFlag, UsageRow, UsageTotals

log = get_logger(__name__)

#: How often a read answered in part (failed or missing shards, unreadable documents) is
#: asked in all, and the first pause between (doubling): a node that dies while a search
#: is on it fails its shard for that search only.
PARTIAL_READ_ATTEMPTS = 3
PARTIAL_READ_BACKOFF_SECONDS = 0.25

MAX_RESULTS = 10_000
FLAG_ATTEMPTS = 50  # review-flags updates tried before giving up under contention
# Recorded in the index mapping's _meta: how documents are addressed (tenant-scoped _id).
ID_SCHEME = "tenant-scoped-v2"


def os_id(tenant: str, item_id: str) -> str:
    """The ``_id`` of a tenant's item: 16 hex digits of the tenant's SHA-256, then the id
    (fixed length whatever the tenant's name, at most 17 + 400 bytes)."""
    return hashlib.sha256(tenant.encode()).hexdigest()[:16] + ":" + item_id


@dataclass(frozen=True)
class IndexLayout:
    """How the index is laid out on the cluster: shards, replicas and refresh interval,
    and the HNSW parameters of the vector field (NUGGETFLOW_OPENSEARCH_*). Shards and the
    HNSW parameters are fixed when an index is created (``nuggetflow reindex`` makes a new
    one); replicas and the refresh interval are applied to an existing index at start."""

    shards: int = 1
    replicas: int = 0
    refresh_interval: str = "1s"
    knn_m: int = 16
    knn_ef_construction: int = 100

    @classmethod
    def from_settings(cls, settings: Settings) -> IndexLayout:
        """The layout the settings ask for."""
        return cls(settings.opensearch_shards, settings.opensearch_replicas,
                   settings.opensearch_refresh_interval, settings.opensearch_knn_m,
                   settings.opensearch_knn_ef_construction)

    def dynamic(self) -> dict[str, Any]:
        """The settings an existing index takes."""
        return {"number_of_replicas": self.replicas, "refresh_interval": self.refresh_interval}

    def index_settings(self) -> dict[str, Any]:
        """The settings of a new index."""
        return {"index": {"knn": True, "number_of_shards": self.shards, **self.dynamic()}}


def _mappings(dim: int, layout: IndexLayout = IndexLayout()) -> dict[str, Any]:
    return {
        "dynamic": "strict",
        "_meta": {"nuggetflow_ids": ID_SCHEME},
        "properties": {
            "id": {"type": "keyword"},
            "doc_id": {"type": "keyword"},
            "digest": {"type": "keyword"},
            "tenant": {"type": "keyword"},
            "type": {"type": "byte"},
            "lineage": {"type": "keyword"},
            "version": {"type": "integer"},
            "is_head": {"type": "boolean"},
            "state": {"type": "byte"},
            "publication": {"type": "byte"},
            "t_start": {"type": "double"},
            "t_end": {"type": "double"},
            "kind": {"type": "byte"},
            "scope": {"type": "keyword"},
            "key": {"type": "keyword"},
            "event_id": {"type": "keyword"},
            "request_id": {"type": "keyword"},
            "meta": {"type": "float"},
            "title": {"type": "text", "analyzer": "english"},
            "body": {"type": "text", "analyzer": "english"},
            "anchors": {"type": "text", "analyzer": "english"},
            "vector": {"type": "knn_vector", "dimension": dim,
                       "method": {"name": "hnsw", "engine": "lucene",
                                  "space_type": "cosinesimil",
                                  "parameters": {
                                      "m": layout.knn_m,
                                      "ef_construction": layout.knn_ef_construction}}},
            "payload": {"type": "binary"},
            # float32 anchor vectors, concatenated; they rescore k-NN hits (not indexed)
            "anchor_vectors": {"type": "binary"},
        },
    }


class OpenSearchStore:
    """The OpenSearch :class:`~query.store.IndexStore` (see the module docstring)."""

    def __init__(self, url: str, index: str = "nuggetflow", dim: int = 384,
                 timeout: float = 30.0, *, auth: tuple[str, str] | None = None,
                 verify_certs: bool = True, ca_file: str = "", guarded: bool = True,
                 layout: IndexLayout | None = None) -> None:
        self.url = url
        self.index = index
        self.layout = layout or IndexLayout()
        self.dim = dim
        self.timeout = timeout
        self.auth = auth
        self.verify_certs = verify_certs
        self.ca_file = ca_file
        self._client: Any = None
        self._tenants: set[str] = set()
        self._traces_ready = False
        self._writer = WriterLock()
        #: False only in the test that shows what the process-local lock alone allows
        self.guarded = guarded
        self._flags_lock = asyncio.Lock()  # one flags update at a time in this process
        self._guard = CommitGuard(index, self._call, lambda: self._client, self._apply,
                                  self._undo)

    @classmethod
    def from_url(cls, url: str, settings: Settings) -> OpenSearchStore:
        """``opensearch://host:port`` (``opensearchs://`` for TLS; several nodes of a
        cluster as ``opensearch://h1:9200,h2:9200,h3:9200``), with basic auth when
        NUGGETFLOW_OPENSEARCH_USER is set (the password from its file) and the TLS
        settings NUGGETFLOW_OPENSEARCH_CA_FILE / _VERIFY_CERTS."""
        scheme, rest = url.split("://", 1)
        if not rest:
            raise ConfigError("opensearch:// needs host:port", field="NUGGETFLOW_STORE")
        http = "https" if scheme == "opensearchs" else "http"
        password = settings.opensearch_password_value()
        auth = (settings.opensearch_user, password) if settings.opensearch_user and password \
            else None
        if auth is not None and http == "http":
            log.warning("opensearch credentials sent without TLS (use opensearchs://)",
                        url=f"{http}://{rest}")
        if http == "https" and not settings.opensearch_verify_certs:
            log.warning("opensearch TLS certificate not verified "
                        "(NUGGETFLOW_OPENSEARCH_VERIFY_CERTS=false)", url=f"{http}://{rest}")
        return cls(f"{http}://{rest.rstrip('/')}", settings.opensearch_index,
                   settings.embedding_dim, auth=auth,
                   verify_certs=settings.opensearch_verify_certs,
                   ca_file=settings.opensearch_ca_file,
                   layout=IndexLayout.from_settings(settings))

    def hosts(self) -> list[str]:
        """The node URLs: ``http://a:9200,b:9200`` names a cluster by several nodes (the
        client spreads requests over them and retries on another when one is down)."""
        scheme = self.url.partition("://")[0]
        return [h if "://" in h else f"{scheme}://{h}"
                for h in (part.strip() for part in self.url.split(",")) if h]

    def client_options(self) -> dict[str, Any]:
        """Keyword arguments of the OpenSearch client: hosts, timeouts, auth and TLS."""
        options: dict[str, Any] = {"hosts": self.hosts(), "timeout": self.timeout,
                                   "max_retries": 2, "retry_on_timeout": True}
        if self.auth is not None:
            options["http_auth"] = self.auth
        if self.url.startswith("https://"):
            options["use_ssl"] = True
            options["verify_certs"] = self.verify_certs
            if not self.verify_certs:
                options["ssl_show_warn"] = False  # the setting says so; logged at start
            if self.ca_file:
                options["ca_certs"] = self.ca_file
        return options

    # --- lifecycle --------------------------------------------------------------------

    async def start(self) -> None:
        """Connect, install the index template, and create the index (``<name>-v1`` behind
        the alias ``<name>``) if there is none; an existing one takes the layout's
        replicas and refresh interval. An index made before aliases (a concrete index
        called ``<name>``) is used as it is; ``nuggetflow reindex`` moves it behind one."""
        if self._client is not None:
            return
        client = self._connect()
        await self._call(client.indices.put_index_template,
                         name=f"{self.index}-template", body={
                             "index_patterns": [self.index, f"{self.index}-v*"],
                             "template": {"settings": self.layout.index_settings(),
                                          "mappings": _mappings(self.dim, self.layout)}})
        concrete = await self.concrete_indices()
        if not concrete:
            await self.create_concrete(f"{self.index}-v1", alias=True)
        else:
            await self._check_existing_index()
            await self._call(client.indices.put_settings, index=self.index,
                             body={"index": self.layout.dynamic()})
        await self._guard.create(replicas=self.layout.replicas)
        for name, mappings in ((self.usage_index, _USAGE_MAPPINGS),
                               (self.flags_index, _FLAGS_MAPPINGS)):
            await self._create_side_index(name, mappings)

    @property
    def usage_index(self) -> str:
        """The index of usage counts (one document per tenant, version and day)."""
        return f"{self.index}-usage"

    @property
    def flags_index(self) -> str:
        """The index of review flags (one document per tenant, lineage and kind)."""
        return f"{self.index}-flags"

    @property
    def traces_index(self) -> str:
        """The index of nugget traces (one document per trace)."""
        return f"{self.index}-traces"

    async def _create_side_index(self, name: str, mappings: dict[str, Any]) -> None:
        from opensearchpy import RequestError

        # (a HEAD answered from the node's cluster state: every store that starts, one per
        # worker thread, would otherwise send the master a create it refuses)
        if await self._call(self._client.indices.exists, index=name):
            return
        try:
            await self._call(self._client.indices.create, index=name, body={
                "settings": {"number_of_shards": 1,
                             "number_of_replicas": self.layout.replicas},
                "mappings": mappings})
        except RequestError as err:
            if err.error != "resource_already_exists_exception":
                raise

    async def concrete_indices(self) -> list[str]:
        """The indices behind the configured name: those of the alias, the index of that
        name (made before aliases), or none."""
        reply = await self._call(self._client.indices.resolve_index, name=self.index)
        for alias in reply.get("aliases", []):
            if alias["name"] == self.index:
                return sorted(alias["indices"])
        return [i["name"] for i in reply.get("indices", []) if i["name"] == self.index]

    async def create_concrete(self, name: str, *, alias: bool) -> bool:
        """Create index ``name`` with this store's layout and mappings (behind the alias
        when ``alias``); False when it exists already (another process made it)."""
        from opensearchpy import RequestError

        body: dict[str, Any] = {"settings": self.layout.index_settings(),
                                "mappings": _mappings(self.dim, self.layout)}
        if alias:
            body["aliases"] = {self.index: {"is_write_index": True}}
        try:
            await self._call(self._client.indices.create, index=name, body=body)
        except RequestError as err:
            if err.error == "resource_already_exists_exception":
                return False
            raise
        log.info("opensearch index created", index=name, alias=self.index if alias else "",
                 shards=self.layout.shards, replicas=self.layout.replicas, url=self.url)
        return True

    def _connect(self) -> Any:
        from opensearchpy import AsyncOpenSearch

        self._client = AsyncOpenSearch(**self.client_options())
        return self._client

    async def _check_existing_index(self) -> None:
        """An index made by an older version: add the fields it lacks (never changes any),
        or refuse it when its documents are addressed by unscoped ids."""
        reply = await self._call(self._client.indices.get_mapping, index=self.index)
        mapping = next(iter(reply.values()))["mappings"]
        if mapping.get("_meta", {}).get("nuggetflow_ids") != ID_SCHEME:
            count = await self._call(self._client.count, index=self.index)
            if count["count"] > 0:
                await self.stop()
                raise ConfigError(
                    f"OpenSearch index {self.index!r} was made before tenant-scoped ids "
                    f"({count['count']} documents keyed by their bare ids): delete it and "
                    "ingest again, or use a new index name", field="NUGGETFLOW_OPENSEARCH_INDEX")
        new = _mappings(self.dim)
        await self._call(self._client.indices.put_mapping, index=self.index, body={
            "_meta": new["_meta"], "properties": {
                name: new["properties"][name]
                for name in ("anchor_vectors", "request_id", "doc_id", "digest")}})

    async def stop(self) -> None:
        """Close the client, and the connection to every node: the client closes only
        those it deems alive, so a node that was down when the store stopped would leave
        its HTTP session open."""
        if self._client is not None:
            await self._client.close()
            pool = getattr(self._client.transport, "connection_pool", None)
            for conn in getattr(pool, "orig_connections", ()):
                await conn.close()  # (a second close of a closed one does nothing)
            self._client = None

    async def drop(self) -> None:
        """Delete the whole index (tests and benchmarks only; governance never deletes).
        Works before :meth:`start` too (connecting only for this)."""
        started = self._client is not None
        if not started:
            self._connect()
        try:
            for name in await self.concrete_indices():
                await self._call(self._client.indices.delete, index=name,
                                 ignore_unavailable=True)
            await self._guard.drop()
            for name in (self.usage_index, self.flags_index):
                await self._call(self._client.indices.delete, index=name,
                                 ignore_unavailable=True)
        finally:
            if not started:
                await self.stop()

    async def _call(self, fn: Any, **kwargs: Any) -> Any:
        """One request; a read answered in part is asked again a few times (a node that
        died while the search was on it: the next attempt goes to a live copy), then is
        an error (``BackendUnavailableError``), never taken as the whole answer."""
        for attempt in range(1, PARTIAL_READ_ATTEMPTS + 1):
            reply = await self._request(fn, **kwargs)
            why = partial_read(reply)
            if not why:
                return reply
            if attempt < PARTIAL_READ_ATTEMPTS:
                log.warning("opensearch read answered in part, asking again", why=why,
                            attempt=attempt)
                await asyncio.sleep(PARTIAL_READ_BACKOFF_SECONDS * 2 ** (attempt - 1))
        # (a head read as absent would fork a lineage: the caller retries or fails)
        raise BackendUnavailableError(f"OpenSearch answered in part: {why}")

    async def _request(self, fn: Any, **kwargs: Any) -> Any:
        from opensearchpy import exceptions as exc

        if self._client is None:
            raise RuntimeError("OpenSearchStore.start() was not called")
        try:
            reply = await fn(**kwargs)
        except (exc.ConnectionError, exc.ConnectionTimeout) as err:
            raise BackendUnavailableError(f"OpenSearch at {self.url} unreachable: {err}") from err
        except exc.TransportError as err:
            if isinstance(err.status_code, int) and (err.status_code >= 500
                                                     or err.status_code == 429):
                raise BackendUnavailableError(f"OpenSearch error: {err}") from err
            if err.error == "cluster_block_exception":  # writes paused (a reindex)
                raise BackendUnavailableError(f"OpenSearch refuses writes for now: {err}"
                                              ) from err
            raise
        return reply

    # --- writes -----------------------------------------------------------------------

    async def ping(self) -> None:
        """Cluster health answers (BackendUnavailableError if the node is unreachable)."""
        await self._call(self._client.cluster.health)

    def writer(self, tenant: str = "",
               keys: Collection[tuple[str, str, str]] = ()) -> AbstractAsyncContextManager[None]:
        """See :meth:`query.store.IndexStore.writer`: the process-local lock, then the
        commit points of the tenant's ``keys`` read (:mod:`query.backends.guard`), so a
        write in this session is refused if another writer has committed on one of them
        (or on a key the write adds) meanwhile."""
        return self._session([scope_of(tenant, k) for k in keys])

    @contextlib.asynccontextmanager
    async def _session(self, scopes: Sequence[str]) -> AsyncIterator[None]:
        async with self._writer.hold():
            if not self.guarded:
                yield
                return
            async with self._guard.session(scopes):
                yield

    async def write_nuggets(self, versions: Sequence[Nugget], vectors: Sequence[Vector | None],
                            anchor_vectors: Sequence[Vector | None] | None = None) -> None:
        """Validate all, then one bulk request under the tenant's commit point; compensate
        on a rejected item. Outside a :meth:`writer` session, one is opened for the call."""
        scopes = [scope_of(n.tenant, n.key) for n in versions]
        if self.guarded and not self._guard.active():
            async with self._session(scopes):
                return await self.write_nuggets(versions, vectors, anchor_vectors)
        validate_write(versions, vectors, self.dim, anchor_vectors)
        existing = await self._existing([os_id(n.tenant, n.id) for n in versions])
        # keyed by _id (tenant-scoped)
        pending: dict[str, list[float]] = {}
        pending_anchors: dict[str, str] = {}
        ops: list[dict[str, Any]] = []
        for i, (n, v) in enumerate(zip(versions, vectors, strict=True)):
            key, parent = os_id(n.tenant, n.id), os_id(n.tenant, n.parent_id)
            if key in existing or key in pending:
                continue
            if v is None:
                vec = pending.get(parent) or await self._vector_of(parent, n.parent_id)
            else:
                vec = np.asarray(v, dtype=np.float32).tolist()
            pending[key] = vec
            anchors = "" if anchor_vectors is None else None
            if anchor_vectors is not None and anchor_vectors[i] is not None:
                anchors = base64.b64encode(
                    np.asarray(anchor_vectors[i], dtype=np.float32).tobytes()).decode()
            elif anchors is None:  # unchanged anchors: the parent's vectors
                anchors = (pending_anchors.get(parent) if parent in pending_anchors
                           else await self._anchors_of(parent) if n.parent_id else "")
            pending_anchors[key] = anchors or ""
            lineage = (n.tenant, n.lineage_id or n.id)
            for old in await self._heads_of(*lineage):
                if old not in pending:
                    ops += [{"update": {"_index": self.index, "_id": old}},
                            {"doc": {"is_head": False}}]
            for earlier in [i for i, src in _new_heads(ops) if src == lineage]:
                ops += [{"update": {"_index": self.index, "_id": earlier}},
                        {"doc": {"is_head": False}}]
            ops += [{"create": {"_index": self.index, "_id": key}},
                    self._nugget_doc(n, vec, pending_anchors[key])]
        if not ops:
            return
        if self.guarded:
            await self._guard.commit(scopes, ops)
            return
        try:
            await self._apply(ops, False)
        except BaseException:
            await self._undo(ops)
            raise

    async def _apply(self, ops: list[dict[str, Any]], replay: bool) -> None:
        """Send a write's operations: the new versions first (searchable when the request
        returns), then the head flags they take over. A reader in between sees the old
        and the new head (a head read takes the newest), never a lineage without one, as
        it could if one request's shards became searchable at different moments. On a
        replay, a version created already is not an error."""
        creates = [op for pair in _pairs(ops) if "create" in pair[0] for op in pair]
        updates = [op for pair in _pairs(ops) if "create" not in pair[0] for op in pair]
        if creates and updates:
            await self._bulk(creates, refresh=True, skip_existing=replay)
            try:
                await self._bulk(updates, skip_existing=replay)
            except WritesPausedError as err:  # half applied: not "nothing was written"
                raise BackendUnavailableError(f"{err} (after its new versions were "
                                              "written)") from err
        else:
            await self._bulk(ops, skip_existing=replay)

    async def _undo(self, ops: list[dict[str, Any]]) -> None:
        """Compensate a batch: remove the versions it creates, make the heads it demotes
        heads again."""
        created = [op["create"]["_id"] for op in ops if "create" in op]
        demoted = [op["update"]["_id"] for op in ops
                   if "update" in op and op["update"]["_id"] not in created]
        await self._compensate(created, demoted)

    async def _compensate(self, created: list[str], demoted: list[str],
                          restore: list[dict[str, Any]] | None = None) -> None:
        ops: list[dict[str, Any]] = [{"delete": {"_index": self.index, "_id": i}}
                                     for i in created]
        for old in demoted:
            ops += [{"update": {"_index": self.index, "_id": old}}, {"doc": {"is_head": True}}]
        ops += restore or []
        try:
            await self._client.bulk(body=ops, refresh="wait_for")
        except Exception as err:  # the original error is what the caller needs to see
            log.error("compensation after failed write did not complete", error=str(err))

    async def _bulk(self, ops: list[dict[str, Any]], refresh: str | bool = "wait_for",
                    *, skip_existing: bool = False) -> None:
        reply = await self._call(self._client.bulk, body=ops, refresh=refresh)
        if reply.get("errors"):
            failed = [item for item in reply["items"]
                      if next(iter(item.values())).get("error")
                      and not (skip_existing and "create" in item
                               and item["create"].get("status") == 409)]
            failed = await self._not_repeated(failed, ops)
            if not failed:
                return
            first = next(iter(failed[0].values()))
            blocked = sum(next(iter(i.values()))["error"].get("type") == "cluster_block_exception"
                          for i in failed)
            if blocked == len(reply["items"]):
                raise WritesPausedError("OpenSearch refuses writes for now (the index is "
                                        "write-blocked: a reindex); nothing was written")
            if blocked:
                raise BackendUnavailableError(f"OpenSearch refused {blocked} of "
                                              f"{len(reply['items'])} operations (writes "
                                              "paused by a reindex)")
            transient = [i for i in failed if _transient(next(iter(i.values())))]
            if transient:  # a shard without its primary, a node gone, a full queue: later
                raise BackendUnavailableError(
                    f"OpenSearch could not apply {len(transient)} of {len(reply['items'])} "
                    f"operations for now, first: {next(iter(transient[0].values()))['error']}")
            raise ValidationError(f"OpenSearch rejected {len(failed)} of {len(reply['items'])} "
                                  f"operations, first: {first.get('error')}", field="bulk")

    async def _not_repeated(self, failed: list[dict[str, Any]],
                            ops: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``failed`` without the creates refused because their document exists already
        with exactly the content sent: the client retries a request whose answer it lost
        (a timeout, a node that went down after applying it), so the retry meets the
        first attempt's document. A document with other content stays a conflict."""
        conflicts = {item["create"]["_id"] for item in failed
                     if "create" in item and item["create"].get("status") == 409}
        if not conflicts:
            return failed
        sent = {op["create"]["_id"]: ops[i + 1] for i, op in enumerate(ops)
                if "create" in op and op["create"]["_id"] in conflicts
                and ("payload" in ops[i + 1] or "digest" in ops[i + 1])}
        if not sent:
            return failed
        reply = await self._call(self._client.mget, index=self.index,
                                 body={"ids": sorted(sent)},
                                 _source_includes=list(_SAME_WRITE))
        stored = {d["_id"]: d.get("_source") for d in reply["docs"] if d.get("found")}
        repeated = {key for key, doc in sent.items()
                    if stored.get(key) == {f: doc[f] for f in _SAME_WRITE if f in doc}}
        if repeated:
            log.info("a retried bulk request met its own earlier attempt; taken as applied",
                     documents=len(repeated))
        return [item for item in failed
                if not ("create" in item and item["create"].get("_id") in repeated)]

    async def _existing(self, ids: Sequence[str]) -> set[str]:
        reply = await self._call(self._client.mget, index=self.index, body={"ids": list(ids)},
                                 _source=False)
        return {d["_id"] for d in reply["docs"] if d.get("found")}

    async def _vector_of(self, key: str, item_id: str) -> list[float]:
        """The vector of the document with ``_id`` key (``item_id`` for the message)."""
        from opensearchpy import NotFoundError as OSNotFound

        try:
            doc = await self._call(self._client.get, index=self.index, id=key,
                                   _source_includes="vector")
        except OSNotFound:
            doc = {}
        vec = doc.get("_source", {}).get("vector")
        if vec is None:
            raise ValidationError(f"no vector given and parent {item_id!r} has none",
                                  field="vectors")
        return list(vec)

    async def _heads_of(self, tenant: str, lineage: str) -> list[str]:
        reply = await self._search({"query": {"bool": {"filter": [
            {"term": {"tenant": tenant}}, {"term": {"lineage": lineage}},
            {"term": {"type": int(ItemType.NUGGET)}}, {"term": {"is_head": True}}]}},
            "_source": False, "size": 100})
        return [h["_id"] for h in reply["hits"]["hits"]]

    async def _anchors_of(self, key: str) -> str:
        from opensearchpy import NotFoundError as OSNotFound

        try:
            doc = await self._call(self._client.get, index=self.index, id=key,
                                   _source_includes="anchor_vectors")
        except OSNotFound:
            return ""
        return str(doc.get("_source", {}).get("anchor_vectors") or "")

    def _nugget_doc(self, n: Nugget, vec: list[float], anchors: str = "") -> dict[str, Any]:
        return {
            "anchor_vectors": anchors,
            "id": n.id, "tenant": n.tenant, "type": int(ItemType.NUGGET),
            "lineage": n.lineage_id or n.id, "version": n.version, "is_head": True,
            "state": int(n.state), "publication": int(n.publication),
            "t_start": n.validity.start.timestamp(),
            "t_end": n.validity.end.timestamp() if n.validity.end else OPEN_END,
            "kind": int(n.kind), "scope": n.fact.key[2], "key": "\x1f".join(n.key),
            "event_id": n.provenance.event_id, "request_id": n.request_id,
            "meta": meta_prior(n.rank, n.confidence),
            "title": n.title, "body": n.body, "anchors": "\n".join(n.anchors), "vector": vec,
            "payload": base64.b64encode(nugget_to_bytes(n)).decode(),
        }

    async def add_passages(self, passages: Sequence[Passage], vectors: Vector) -> int:
        """Bulk-create passages (ids the tenant has: skipped) and close earlier versions
        of their documents (see IndexStore.add_passages); returns how many were new. A
        failed bulk request is compensated (new passages removed, closed ones reopened)."""
        validate_passages(passages, vectors, self.dim)
        if not passages:
            return 0
        closing = await self._earlier_versions(passages)
        existing = await self._existing([os_id(p.tenant, p.id) for p in passages])
        ops: list[dict[str, Any]] = []
        for key, (old, start) in closing.items():
            ops += [{"update": {"_index": self.index, "_id": key}},
                    {"doc": self._validity_doc(dataclasses.replace(old, valid_to=start))}]
        fresh: set[str] = set()
        for p, v in zip(passages, vectors, strict=True):
            key = os_id(p.tenant, p.id)
            if key in existing or key in fresh:
                continue
            fresh.add(key)
            ops += [{"create": {"_index": self.index, "_id": key}}, {
                "id": p.id, "tenant": p.tenant, "type": int(ItemType.DOCUMENT),
                "lineage": p.doc_id, "doc_id": p.doc_id, "digest": p.digest,
                "version": p.version, "is_head": True, "state": int(State.ACTIVE),
                "publication": int(Publication.PUBLISHED), **self._validity_doc(p),
                "kind": 0, "scope": "", "key": "", "event_id": "", "meta": 0.5,
                "title": p.title, "body": p.text, "anchors": "",
                "vector": np.asarray(v, dtype=np.float32).tolist()}]
        if ops:
            try:
                await self._bulk(ops)
            except BaseException:
                restore: list[dict[str, Any]] = []
                for key, (old, _) in closing.items():
                    restore += [{"update": {"_index": self.index, "_id": key}},
                                {"doc": self._validity_doc(old)}]
                await self._compensate(list(fresh), [], restore)
                raise
            self._tenants.update(p.tenant for p in passages)
        return len(fresh)

    @staticmethod
    def _validity_doc(p: Passage) -> dict[str, Any]:
        """The fields of a passage document that change when its validity is closed."""
        return {"t_start": p.valid_from.timestamp(),
                "t_end": p.valid_to.timestamp() if p.valid_to else OPEN_END,
                "payload": base64.b64encode(passage_to_bytes(p)).decode()}

    async def _earlier_versions(self, passages: Sequence[Passage]
                                ) -> dict[str, tuple[Passage, datetime]]:
        """_id -> (stored passage, new end) for the passages of earlier versions that
        these passages' document versions close; ValidationError if one starts too late."""
        starts: dict[tuple[str, str], tuple[int, datetime]] = {}
        for p in passages:
            if p.version > 1:
                starts.setdefault((p.tenant, p.doc_id), (p.version, p.valid_from))
        out: dict[str, tuple[Passage, datetime]] = {}
        for (tenant, doc), (version, start) in starts.items():
            for key, old in (await self._valid_at(tenant, doc, start, below=version)).items():
                out[key] = (old, start)
        return out

    async def _valid_at(self, tenant: str, doc_id: str, at: datetime,
                        below: int | None = None) -> dict[str, Passage]:
        """_id -> stored passage of a document's passages (of versions below ``below``)
        still valid at ``at``; ValidationError when one starts at or after it (it could
        not be closed then)."""
        filters: list[dict[str, Any]] = [
            {"term": {"tenant": tenant}}, {"term": {"type": int(ItemType.DOCUMENT)}},
            {"term": {"doc_id": doc_id}}, {"range": {"t_end": {"gt": at.timestamp()}}}]
        if below is not None:
            filters.append({"range": {"version": {"lt": below}}})
        reply = await self._search({"size": MAX_RESULTS, "_source": ["payload"],
                                    "query": {"bool": {"filter": filters}}})
        out: dict[str, Passage] = {}
        for h in reply["hits"]["hits"]:
            old = passage_from_bytes(base64.b64decode(h["_source"]["payload"]))
            if old.valid_from >= at:
                raise ValidationError(
                    f"document {doc_id!r} cannot end its version {old.version} at "
                    f"{at.isoformat()}: that version starts at {old.valid_from.isoformat()}",
                    field="valid_from" if below is not None else "timestamp")
            out[h["_id"]] = old
        return out

    async def close_document(self, tenant: str, doc_id: str, at: datetime) -> list[str]:
        """See :meth:`query.store.IndexStore.close_document` (one bulk request of
        updates; a failed one is compensated: the passages it closed are reopened)."""
        closing = await self._valid_at(tenant, doc_id, at)
        if not closing:
            return []
        ops: list[dict[str, Any]] = []
        for key, old in closing.items():
            ops += [{"update": {"_index": self.index, "_id": key}},
                    {"doc": self._validity_doc(dataclasses.replace(old, valid_to=at))}]
        try:
            await self._bulk(ops)
        except BaseException:
            restore: list[dict[str, Any]] = []
            for key, old in closing.items():
                restore += [{"update": {"_index": self.index, "_id": key}},
                            {"doc": self._validity_doc(old)}]
            await self._compensate([], [], restore)
            raise
        return sorted(p.id for p in closing.values())

    async def document_heads(self, tenant: str,
                             doc_ids: Sequence[str]) -> dict[str, DocumentHead]:
        """See :meth:`query.store.IndexStore.document_heads` (one passage of each
        document's highest version, by field collapsing)."""
        out: dict[str, DocumentHead] = {}
        for i in range(0, len(doc_ids), 1000):
            chunk = list(doc_ids[i : i + 1000])
            reply = await self._search({
                "size": len(chunk), "_source": ["payload"],
                "query": {"bool": {"filter": [
                    {"term": {"tenant": tenant}}, {"term": {"type": int(ItemType.DOCUMENT)}},
                    {"terms": {"doc_id": chunk}}]}},
                "collapse": {"field": "doc_id"}, "sort": [{"version": "desc"}]})
            for h in reply["hits"]["hits"]:
                p = passage_from_bytes(base64.b64decode(h["_source"]["payload"]))
                out[p.doc_id] = DocumentHead(p.doc_id, p.version, p.digest, p.valid_from,
                                             p.valid_to)
        return out

    # --- reads ------------------------------------------------------------------------

    async def _search(self, body: dict[str, Any]) -> Any:
        return await self._call(self._client.search, index=self.index, body=body)

    async def get(self, tenant: str, item_id: str) -> Nugget:
        """One nugget version by id (NotFoundError otherwise)."""
        reply = await self._search({"query": {"bool": {"filter": [
            {"ids": {"values": [os_id(tenant, item_id)]}}, {"term": {"tenant": tenant}},
            {"term": {"type": int(ItemType.NUGGET)}}]}}, "_source": ["payload"], "size": 1})
        hits = reply["hits"]["hits"]
        if not hits:
            raise NotFoundError(f"no nugget {item_id!r} for tenant {tenant!r}", field="id")
        return nugget_from_bytes(base64.b64decode(hits[0]["_source"]["payload"]))

    async def _nuggets(self, filters: list[dict[str, Any]]) -> list[Nugget]:
        reply = await self._search({"query": {"bool": {"filter": filters}},
                                    "_source": ["payload"], "size": MAX_RESULTS,
                                    "sort": [{"version": "asc"}, {"id": "asc"}]})
        return [nugget_from_bytes(base64.b64decode(h["_source"]["payload"]))
                for h in reply["hits"]["hits"]]

    async def history(self, tenant: str, item_id: str) -> list[Nugget]:
        """Every version of the lineage of item_id, oldest first."""
        first = await self.get(tenant, item_id)
        return await self._nuggets([{"term": {"lineage": first.lineage_id or first.id}},
                                    {"term": {"tenant": tenant}},
                                    {"term": {"type": int(ItemType.NUGGET)}}])

    async def _version_of(self, tenant: str, item_id: str) -> tuple[str, int]:
        """(lineage, version) of a nugget version, from its id; NotFoundError if absent."""
        reply = await self._search({"query": {"bool": {"filter": [
            {"ids": {"values": [os_id(tenant, item_id)]}}, {"term": {"tenant": tenant}},
            {"term": {"type": int(ItemType.NUGGET)}}]}}, "_source": ["lineage", "version"],
            "size": 1})
        hits = reply["hits"]["hits"]
        if not hits:
            raise NotFoundError(f"no nugget {item_id!r} for tenant {tenant!r}", field="id")
        return str(hits[0]["_source"]["lineage"]), int(hits[0]["_source"]["version"])

    async def _first(self, filters: list[dict[str, Any]]) -> Nugget | None:
        """The newest version matching the filters (one document fetched)."""
        reply = await self._search({"query": {"bool": {"filter": filters}},
                                    "_source": ["payload"], "size": 1,
                                    "sort": [{"version": "desc"}, {"id": "desc"}]})
        hits = reply["hits"]["hits"]
        return (nugget_from_bytes(base64.b64decode(hits[0]["_source"]["payload"]))
                if hits else None)

    async def head(self, tenant: str, item_id: str) -> Nugget:
        """The head of item_id's lineage: its lineage, then a size-1 query on the head flag."""
        lineage, _ = await self._version_of(tenant, item_id)
        head = await self._first([{"term": {"lineage": lineage}}, {"term": {"tenant": tenant}},
                                  {"term": {"type": int(ItemType.NUGGET)}},
                                  {"term": {"is_head": True}}])
        if head is None:
            raise NotFoundError(f"no head for nugget {item_id!r}", field="id")
        return head

    async def history_page(self, tenant: str, item_id: str, limit: int,
                           after_id: str = "") -> list[Nugget]:
        """One page of item_id's lineage by (version, id), continued with search_after."""
        lineage, _ = await self._version_of(tenant, item_id)
        body: dict[str, Any] = {
            "query": {"bool": {"filter": [{"term": {"lineage": lineage}},
                                          {"term": {"tenant": tenant}},
                                          {"term": {"type": int(ItemType.NUGGET)}}]}},
            "_source": ["payload"], "size": limit,
            "sort": [{"version": "asc"}, {"id": "asc"}]}
        if after_id:
            try:
                after_lineage, after_version = await self._version_of(tenant, after_id)
            except NotFoundError:
                after_lineage, after_version = "", 0
            if after_lineage != lineage:
                raise ValidationError("not a version of this lineage", field="after_id")
            body["search_after"] = [after_version, after_id]
        reply = await self._search(body)
        return [nugget_from_bytes(base64.b64decode(h["_source"]["payload"]))
                for h in reply["hits"]["hits"]]

    async def lineage_version(self, tenant: str, item_id: str, number: int) -> Nugget:
        """Version ``number`` of item_id's lineage: its lineage, then a size-1 term query
        on the version number."""
        lineage, _ = await self._version_of(tenant, item_id)
        found = await self._first([{"term": {"lineage": lineage}}, {"term": {"tenant": tenant}},
                                   {"term": {"type": int(ItemType.NUGGET)}},
                                   {"term": {"version": number}}]) if number >= 1 else None
        if found is None:
            raise NotFoundError(f"nugget {item_id!r} has no version {number}", field="version")
        return found

    async def heads_page(self, tenant: str, publications: Sequence[Publication], limit: int,
                         after_id: str = "") -> list[Nugget]:
        """Heads in these review states: a filtered query sorted on ``id`` (a keyword with
        doc values), continued with search_after."""
        if not publications or limit <= 0:
            return []
        body: dict[str, Any] = {
            "query": {"bool": {"filter": [
                {"term": {"tenant": tenant}}, {"term": {"type": int(ItemType.NUGGET)}},
                {"term": {"is_head": True}},
                {"terms": {"publication": sorted({int(p) for p in publications})}}]}},
            "_source": ["payload"], "size": min(limit, MAX_RESULTS),
            "sort": [{"id": "asc"}], "track_total_hits": False}
        if after_id:
            body["search_after"] = [after_id]
        reply = await self._search(body)
        return [nugget_from_bytes(base64.b64decode(h["_source"]["payload"]))
                for h in reply["hits"]["hits"]]

    async def publication_counts(self) -> dict[tuple[str, Publication], int]:
        """Heads of nugget lineages counted per tenant and publication: a terms
        aggregation on the filtered heads (no documents fetched)."""
        reply = await self._search({
            "size": 0, "track_total_hits": False,
            "query": {"bool": {"filter": [{"term": {"type": int(ItemType.NUGGET)}},
                                          {"term": {"is_head": True}}]}},
            "aggs": {"tenants": {"terms": {"field": "tenant", "size": 10_000}, "aggs": {
                "publications": {"terms": {"field": "publication", "size": 16}}}}}})
        return {(t["key"], Publication(int(p["key"]))): int(p["doc_count"])
                for t in reply["aggregations"]["tenants"]["buckets"]
                for p in t["publications"]["buckets"]}

    async def find_by_request(self, tenant: str, lineage_id: str,
                              request_id: str) -> Nugget | None:
        """The version of the lineage produced by this request id (a size-1 term query)."""
        if not request_id:
            return None
        return await self._first([{"term": {"tenant": tenant}},
                                  {"term": {"lineage": lineage_id}},
                                  {"term": {"request_id": request_id}}])

    async def heads_by_key(self, tenant: str, key: tuple[str, str, str]) -> list[Nugget]:
        """Head versions with this governance key."""
        return await self._nuggets([{"term": {"tenant": tenant}},
                                    {"term": {"key": "\x1f".join(key)}},
                                    {"term": {"is_head": True}},
                                    {"term": {"type": int(ItemType.NUGGET)}}])

    async def find_by_event(self, tenant: str, event_id: str) -> list[Nugget]:
        """Head versions created from this feedback event."""
        return await self._nuggets([{"term": {"tenant": tenant}},
                                    {"term": {"event_id": event_id}},
                                    {"term": {"is_head": True}}])

    async def has_tenant(self, tenant: str) -> bool:
        """True when the tenant has stored items (positive answers are cached)."""
        if tenant in self._tenants:
            return True
        reply = await self._call(self._client.count, index=self.index,
                                 body={"query": {"term": {"tenant": tenant}}})
        if reply["count"] > 0:
            self._tenants.add(tenant)
            return True
        return False

    @staticmethod
    def governance_filter(flt: GovernanceFilter) -> list[dict[str, Any]]:
        """The governance filter as OpenSearch filter clauses."""
        t = flt.as_of.astimezone(UTC).timestamp()
        states = [int(State.ACTIVE)]
        if flt.view is View.ACTIVE_PLUS_CONTESTED:
            states.append(int(State.CONTESTED))
        clauses: list[dict[str, Any]] = [
            {"term": {"tenant": flt.tenant}}, {"term": {"is_head": True}},
            {"term": {"publication": int(Publication.PUBLISHED)}},
            {"terms": {"state": states}},
            {"range": {"t_start": {"lte": t}}}, {"range": {"t_end": {"gt": t}}},
        ]
        if not flt.include_documents:
            clauses.append({"term": {"type": int(ItemType.NUGGET)}})
        doc = {"term": {"type": int(ItemType.DOCUMENT)}}
        if flt.scopes:
            scopes = [" ".join(s.lower().split()) for s in flt.scopes]
            clauses.append({"bool": {"should": [doc, {"terms": {"scope": scopes}}],
                                     "minimum_should_match": 1}})
        if flt.kinds:
            clauses.append({"bool": {"should": [doc, {"terms": {"kind": [int(k) for k in
                                                                          flt.kinds]}}],
                                     "minimum_should_match": 1}})
        return clauses

    @staticmethod
    def _match(terms: Sequence[str]) -> dict[str, Any]:
        return {"multi_match": {"query": " ".join(terms), "type": "most_fields",
                                "fields": ["title^3", "body", "anchors^2"], "operator": "or"}}

    async def lexical(self, terms: Sequence[str], flt: GovernanceFilter,
                      limit: int) -> list[Scored]:
        """Governed BM25: the filter is a bool filter beside the match."""
        if not terms:
            return []
        reply = await self._search({
            "query": {"bool": {"must": [self._match(terms)],
                               "filter": self.governance_filter(flt)}},
            "size": limit, "_source": ["id", "type", "meta"], "track_total_hits": False})
        return [Scored(h["_source"]["id"], ItemType(h["_source"]["type"]), float(h["_score"]),
                       float(h["_source"]["meta"])) for h in reply["hits"]["hits"]]

    async def dense(self, vector: Vector, flt: GovernanceFilter, limit: int) -> list[Scored]:
        """Governed k-NN: the filter is inside the knn clause (efficient filtering)."""
        check_vector(vector, self.dim)
        q = np.asarray(vector, dtype=np.float32)
        reply = await self._search({
            "size": limit, "_source": ["id", "type", "meta", "anchor_vectors"],
            "query": {"knn": {"vector": {
                "vector": q.tolist(), "k": limit,
                "filter": {"bool": {"filter": self.governance_filter(flt)}}}}}})
        out = []
        for h in reply["hits"]["hits"]:
            # Lucene cosinesimil scores are (1 + cos) / 2; report the cosine like SQLite.
            cos = 2.0 * float(h["_score"]) - 1.0
            raw = h["_source"].get("anchor_vectors")
            if raw:  # a nugget's dense score is its best over its anchors too
                anchors = np.frombuffer(base64.b64decode(raw), dtype=np.float32)
                cos = max(cos, float((anchors.reshape(-1, self.dim) @ q).max()))
            out.append(Scored(h["_source"]["id"], ItemType(h["_source"]["type"]), cos,
                              float(h["_source"]["meta"])))
        out.sort(key=lambda sc: -sc.score)
        return out

    async def suppressed(self, terms: Sequence[str], flt: GovernanceFilter) -> int:
        """Head nuggets matching the terms that the filter excludes."""
        if not terms:
            return 0
        reply = await self._call(self._client.count, index=self.index, body={"query": {"bool": {
            "must": [self._match(terms)],
            "filter": [{"term": {"tenant": flt.tenant}}, {"term": {"is_head": True}},
                       {"term": {"type": int(ItemType.NUGGET)}}],
            "must_not": [{"bool": {"filter": self.governance_filter(flt)}}]}}})
        return int(reply["count"])

    async def fetch(self, tenant: str, ids: Sequence[str]) -> dict[str, Nugget | Passage]:
        """Records by id for this tenant."""
        if not ids:
            return {}
        reply = await self._call(self._client.mget, index=self.index,
                                 body={"ids": [os_id(tenant, i) for i in ids]},
                                 _source_includes=["payload", "tenant", "type", "id"])
        out: dict[str, Nugget | Passage] = {}
        for d in reply["docs"]:
            src = d.get("_source")
            if not d.get("found") or src is None or src["tenant"] != tenant:
                continue
            raw = base64.b64decode(src["payload"])
            out[src["id"]] = (nugget_from_bytes(raw) if src["type"] == ItemType.NUGGET
                              else passage_from_bytes(raw))
        return out

    async def statement_cosines(self, tenant: str, ids: Sequence[str],
                                vector: Vector) -> dict[str, float]:
        """Cosines with the nuggets' stored statement vectors (their ``vector`` field)."""
        if not ids:
            return {}
        check_vector(vector, self.dim)
        reply = await self._call(self._client.mget, index=self.index,
                                 body={"ids": [os_id(tenant, i) for i in ids]},
                                 _source_includes=["vector", "tenant", "type", "id"])
        q = np.asarray(vector, dtype=np.float32)
        out: dict[str, float] = {}
        for d in reply["docs"]:
            src = d.get("_source")
            if (not d.get("found") or src is None or src["tenant"] != tenant
                    or src["type"] != ItemType.NUGGET or not src.get("vector")):
                continue
            v = np.asarray(src["vector"], dtype=np.float32)
            norm = float(np.linalg.norm(v))
            out[src["id"]] = float(v @ q) / norm if norm > 0 else 0.0
        return out

    async def sample_passages(self, tenant: str, limit: int, seed: int = 0) -> list[Passage]:
        """A seeded random sample of the tenant's passages."""
        reply = await self._search({"size": limit, "_source": ["payload"], "query": {
            "function_score": {
                "query": {"bool": {"filter": [{"term": {"tenant": tenant}},
                                              {"term": {"type": int(ItemType.DOCUMENT)}}]}},
                "random_score": {"seed": seed, "field": "_seq_no"}}}})
        return [passage_from_bytes(base64.b64decode(h["_source"]["payload"]))
                for h in reply["hits"]["hits"]]

    async def overlay_scorer(self) -> OpenSearchOverlay:
        """A scratch index for the candidate, scored with the live index's statistics."""
        overlay = OpenSearchOverlay(self)
        await overlay.open()
        return overlay

    async def refresh(self) -> None:
        """Make bulk-loaded documents searchable now."""
        await self._call(self._client.indices.refresh, index=self.index)

    async def stats(self) -> dict[str, float]:
        """Document counts and index size."""
        counts = {}
        for t in ItemType:
            reply = await self._call(self._client.count, index=self.index,
                                     body={"query": {"term": {"type": int(t)}}})
            counts[t] = reply["count"]
        st = await self._call(self._client.indices.stats, index=self.index, metric="store")
        size = st["_all"]["total"]["store"]["size_in_bytes"]
        return {"nuggets": counts[ItemType.NUGGET], "passages": counts[ItemType.DOCUMENT],
                "index_bytes": size, **self._guard.counters()}

    # --- usage and review flags (query.usage) -----------------------------------------

    async def add_usage(self, rows: Sequence[UsageRow], flush_id: str) -> None:
        """Scripted upserts, one per row: a row's document remembers the last flush ids
        it took, so a retried flush is applied once (see IndexStore.add_usage)."""
        ops: list[dict[str, Any]] = []
        for r in rows:
            day = r.day.isoformat()
            ops.append({"update": {"_index": self.usage_index,
                                   "_id": os_id(r.tenant, f"{r.item_id}@{day}"),
                                   "retry_on_conflict": 5}})
            ops.append({"script": {"source": _ADD_USAGE, "lang": "painless", "params": {
                "f": flush_id, "c": r.considered, "r": r.retrieved, "k": r.cited}},
                "upsert": {"tenant": r.tenant, "item": r.item_id, "day": day,
                           "considered": r.considered, "retrieved": r.retrieved,
                           "cited": r.cited, "flushes": [flush_id]}})
        for i in range(0, len(ops), 1000):
            reply = await self._call(self._client.bulk, body=ops[i:i + 1000],
                                     refresh="wait_for")
            if reply.get("errors"):
                first = next(next(iter(item.values()))["error"] for item in reply["items"]
                             if next(iter(item.values())).get("error"))
                raise BackendUnavailableError(f"OpenSearch did not add usage counts: {first}")

    async def usage_totals(self, tenant: str, ids: Sequence[str],
                           since: date) -> dict[str, UsageTotals]:
        """A terms aggregation per item with sums, over the window's documents."""
        out: dict[str, UsageTotals] = {}
        for i in range(0, len(ids), 500):
            part = list(ids[i:i + 500])
            reply = await self._call(self._client.search, index=self.usage_index, body={
                "size": 0, "query": {"bool": {"filter": [
                    {"term": {"tenant": tenant}}, {"terms": {"item": part}},
                    {"range": {"day": {"gte": since.isoformat()}}}]}},
                "aggs": {"items": {"terms": {"field": "item", "size": len(part)}, "aggs": {
                    "considered": {"sum": {"field": "considered"}},
                    "retrieved": {"sum": {"field": "retrieved"}},
                    "cited": {"sum": {"field": "cited"}},
                    "when_cited": {"filter": {"range": {"cited": {"gt": 0}}},
                                   "aggs": {"last": {"max": {"field": "day"}}}}}}}})
            for b in reply["aggregations"]["items"]["buckets"]:
                last = b["when_cited"]["last"].get("value_as_string")
                out[b["key"]] = UsageTotals(
                    int(b["considered"]["value"]), int(b["retrieved"]["value"]),
                    int(b["cited"]["value"]), date.fromisoformat(last[:10]) if last else None)
        return out

    async def review_flags(self, tenant: str) -> list[ReviewFlag]:
        """The tenant's flags, by lineage then kind (a flag removed by an update is a
        document with an empty ``flag``)."""
        reply = await self._call(self._client.search, index=self.flags_index, body={
            "size": MAX_RESULTS, "query": {"term": {"tenant": tenant}},
            "sort": [{"lineage": "asc"}, {"kind": "asc"}]})
        return [ReviewFlag.from_json(h["_source"]["flag"]) for h in reply["hits"]["hits"]
                if h["_source"].get("flag")]

    async def update_review_flags(
            self, tenant: str,
            change: Callable[[list[ReviewFlag]], list[ReviewFlag]]) -> list[ReviewFlag]:
        """See :meth:`query.store.IndexStore.update_review_flags`: the read and the write
        run under the tenant's review-flags commit point (:mod:`query.backends.guard`),
        so a writer that committed in between makes this one read again and re-apply
        ``change``. The write indexes each flag that changed and empties each one that
        went (``index`` operations only, so a write left half done is completed by
        running it again)."""
        async with self._flags_lock:
            if not self.guarded:
                flags = change(await self.review_flags(tenant))
                await self.replace_review_flags(tenant, flags)
                return flags
            scope = "\x1f".join((tenant, "review-flags"))
            for attempt in range(FLAG_ATTEMPTS):
                try:
                    with self._guard.apart():
                        async with self._guard.session([scope]):
                            stored = await self.review_flags(tenant)
                            flags = change(stored)
                            ops = self._flag_ops(tenant, stored, flags)
                            if ops:  # (nothing changed: nothing to claim)
                                await self._guard.commit([scope], ops)
                            return flags
                except WriteContentionError:
                    await asyncio.sleep(random.uniform(0.01, 0.05) * (attempt + 1))
            raise BackendUnavailableError(
                f"the review flags of tenant {tenant!r} changed under every one of "
                f"{FLAG_ATTEMPTS} updates")

    def _flag_ops(self, tenant: str, stored: Sequence[ReviewFlag],
                  flags: Sequence[ReviewFlag]) -> list[dict[str, Any]]:
        """Index operations taking the tenant's flags from ``stored`` to ``flags``."""
        def doc_id(f: ReviewFlag) -> str:
            return os_id(tenant, f"{f.lineage_id}\x1f{f.kind.value}")

        new = {doc_id(f): f for f in flags}
        old = {doc_id(f): f for f in stored}
        ops: list[dict[str, Any]] = []
        for key, f in new.items():
            if old.get(key) != f:
                ops += [{"index": {"_index": self.flags_index, "_id": key}},
                        {"tenant": tenant, "lineage": f.lineage_id, "kind": f.kind.value,
                         "flag": f.to_json()}]
        for key, f in old.items():
            if key not in new:
                ops += [{"index": {"_index": self.flags_index, "_id": key}},
                        {"tenant": tenant, "lineage": f.lineage_id, "kind": f.kind.value,
                         "flag": ""}]
        return ops

    async def replace_review_flags(self, tenant: str, flags: Sequence[ReviewFlag]) -> None:
        """Index ``flags``, then delete the tenant's other flags (both visible at once)."""
        ids = [os_id(tenant, f"{f.lineage_id}\x1f{f.kind.value}") for f in flags]
        ops: list[dict[str, Any]] = []
        for flag, doc_id in zip(flags, ids, strict=True):
            ops.append({"index": {"_index": self.flags_index, "_id": doc_id}})
            ops.append({"tenant": tenant, "lineage": flag.lineage_id,
                        "kind": flag.kind.value, "flag": flag.to_json()})
        if ops:
            reply = await self._call(self._client.bulk, body=ops, refresh="wait_for")
            if reply.get("errors"):
                raise BackendUnavailableError("OpenSearch did not store every review flag")
        await self._call(self._client.delete_by_query, index=self.flags_index, refresh=True,
                         conflicts="proceed", body={"query": {"bool": {
                             "filter": [{"term": {"tenant": tenant}}],
                             "must_not": [{"ids": {"values": ids}}]}}})

    async def add_traces(self, traces: Sequence[NuggetTrace]) -> None:
        """Bulk ``create`` by trace id (one stored already stays as it is)."""
        ops: list[dict[str, Any]] = []
        for t in traces:
            ops.append({"create": {"_index": self.traces_index, "_id": os_id(t.tenant, t.id)}})
            ops.append({"id": t.id, "tenant": t.tenant, "lineage": t.lineage_id,
                        "at": t.at.isoformat(), "trace": t.to_json()})
        if not ops:
            return
        if not self._traces_ready:
            # made at the first trace, not at every start (most stores never write one)
            await self._create_side_index(self.traces_index, _TRACES_MAPPINGS)
            self._traces_ready = True
        reply = await self._call(self._client.bulk, body=ops, refresh="wait_for")
        for item in reply.get("items", []):
            err = item.get("create", {}).get("error")
            if err and err.get("type") != "version_conflict_engine_exception":
                raise BackendUnavailableError(f"OpenSearch did not store a trace: {err}")

    async def traces(self, tenant: str, lineage_id: str, limit: int = 100
                     ) -> list[NuggetTrace]:
        """The lineage's last ``limit`` traces, oldest first (none before the first trace
        made the index)."""
        if not self._traces_ready and not await self._call(self._client.indices.exists,
                                                            index=self.traces_index):
            return []
        reply = await self._call(self._client.search, index=self.traces_index, body={
            "size": min(limit, MAX_RESULTS), "query": {"bool": {"filter": [
                {"term": {"tenant": tenant}}, {"term": {"lineage": lineage_id}}]}},
            "sort": [{"at": "desc"}, {"id": "desc"}]})
        return [NuggetTrace.from_json(h["_source"]["trace"])
                for h in reversed(reply["hits"]["hits"])]


#: Adds a flush's counts once: the document keeps the ids of its last 32 flushes.
_ADD_USAGE = (
    "if (ctx._source.flushes == null) { ctx._source.flushes = []; }"
    "if (ctx._source.flushes.contains(params.f)) { ctx.op = 'none'; } else {"
    " ctx._source.considered += params.c; ctx._source.retrieved += params.r;"
    " ctx._source.cited += params.k; ctx._source.flushes.add(params.f);"
    " if (ctx._source.flushes.size() > 32) { ctx._source.flushes.remove(0); } }")
_USAGE_MAPPINGS: dict[str, Any] = {"dynamic": "strict", "properties": {
    "tenant": {"type": "keyword"}, "item": {"type": "keyword"}, "day": {"type": "date"},
    "considered": {"type": "long"}, "retrieved": {"type": "long"}, "cited": {"type": "long"},
    "flushes": {"type": "keyword", "index": False, "doc_values": False}}}
_TRACES_MAPPINGS: dict[str, Any] = {"dynamic": "strict", "properties": {
    "id": {"type": "keyword"}, "tenant": {"type": "keyword"}, "lineage": {"type": "keyword"},
    "at": {"type": "date"},
    "trace": {"type": "text", "index": False}}}
_FLAGS_MAPPINGS: dict[str, Any] = {"dynamic": "strict", "properties": {
    "tenant": {"type": "keyword"}, "lineage": {"type": "keyword"}, "kind": {"type": "keyword"},
    "flag": {"type": "text", "index": False}}}


#: The fields that identify one write of a document (a nugget's payload, a passage's
#: digest): a create refused because the document exists is the same write when these
#: are equal (see ``_not_repeated``).
_SAME_WRITE = ("tenant", "id", "lineage", "version", "payload", "digest")


def _pairs(ops: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Bulk operations as (action, document) pairs (every action here has a body)."""
    return list(zip(ops[::2], ops[1::2], strict=True))


def _new_heads(ops: list[dict[str, Any]]) -> list[tuple[str, tuple[str, str]]]:
    """(_id, (tenant, lineage)) of versions already queued in this bulk request."""
    out = []
    for i in range(0, len(ops), 2):
        if "create" in ops[i]:
            doc = ops[i + 1]
            out.append((ops[i]["create"]["_id"], (doc["tenant"], doc["lineage"])))
    return out


def _transient(item: dict[str, Any]) -> bool:
    """Whether a bulk item failed for a reason that passes (the engine's status 5xx or 429:
    a shard whose primary is not active, a node that left, a full write queue), not for
    what the operation itself holds (4xx: a mapping error, a version conflict)."""
    status = item.get("status")
    return isinstance(status, int) and (status >= 500 or status == 429)


def partial_read(reply: Any) -> str:
    """Why a read's answer is partial ('' when whole): a search or count with failed shards
    (no copy of a shard reachable, e.g. while a cluster loses nodes), fewer shards
    answering than it went to, or one timed out; or a multi-get with documents it could
    not read. A write's ``_shards`` (replica copies) is not a read's."""
    if not isinstance(reply, dict):
        return ""
    shards = reply.get("_shards")
    if isinstance(shards, dict) and ("hits" in reply or "count" in reply):
        if shards.get("failed"):
            return f"{shards['failed']} of {shards.get('total')} shards failed"
        answered = shards.get("successful", 0) + shards.get("skipped", 0)
        if isinstance(shards.get("total"), int) and answered < shards["total"]:
            return f"{answered} of {shards['total']} shards answered"
        if reply.get("timed_out") is True:
            return "the search timed out on a shard"
    docs = reply.get("docs")
    if isinstance(docs, list):
        errors = [d for d in docs if isinstance(d, dict) and "error" in d]
        if errors:
            return f"{len(errors)} of {len(docs)} documents unreadable"
    return ""


class OpenSearchOverlay:
    """Scores a candidate exactly as the live BM25 query would, without touching the index.

    The candidate goes into a private scratch index (concurrent probes never see each
    other's); the live lexical query then runs over the live and the scratch index with
    ``dfs_query_then_fetch``, which computes term statistics across both, restricted to
    the candidate's id: its score is the one it would get in the live index. Deleted
    documents still count in Lucene's statistics, so every new text of the candidate gets
    a fresh scratch index rather than an overwrite.
    """

    DOC_ID = "__nuggetflow_overlay_candidate__"

    def __init__(self, store: OpenSearchStore) -> None:
        self.store = store
        self.index = ""
        self._text: tuple[str, str, str] | None = None

    async def open(self) -> None:
        """Nothing to do until the first text arrives."""

    async def _load(self, text: tuple[str, str, str]) -> None:
        import uuid

        from opensearchpy import RequestError

        await self.close()
        self.index = f"{self.store.index}-overlay-{uuid.uuid4().hex[:12]}"
        try:
            await self.store._call(self.store._client.indices.create, index=self.index, body={
                "settings": {"index": {"knn": True, "number_of_shards": 1,
                                       "number_of_replicas": 0}},
                "mappings": _mappings(self.store.dim)})
        except RequestError as err:
            # The name is this overlay's own, fresh: an index of that name is its own
            # create, retried by the client after a node died with the answer.
            if err.error != "resource_already_exists_exception":
                raise
        title, body, anchors = text
        await self.store._call(self.store._client.index, index=self.index, id=self.DOC_ID,
                               body={"title": title, "body": body, "anchors": anchors,
                                     "type": int(ItemType.NUGGET)}, refresh=True)
        self._text = text

    async def score(self, terms: Sequence[str], title: str, body: str, anchors: str) -> float:
        """BM25 of the text for the OR-query of terms, with the live index's statistics."""
        if not terms:
            return 0.0
        if self._text != (title, body, anchors):
            await self._load((title, body, anchors))
        reply = await self.store._call(
            self.store._client.search, index=f"{self.store.index},{self.index}",
            search_type="dfs_query_then_fetch",
            body={"size": 1, "_source": False, "query": {"bool": {
                "must": [OpenSearchStore._match(terms)],
                "filter": [{"ids": {"values": [self.DOC_ID]}}]}}})
        hits = reply["hits"]["hits"]
        return float(hits[0]["_score"]) if hits else 0.0

    async def close(self) -> None:
        """Delete the scratch index."""
        if self.index:
            await self.store._call(self.store._client.indices.delete, index=self.index,
                                   ignore_unavailable=True)
            self.index = ""
            self._text = None
