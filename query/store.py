"""The index store Protocol: one contract, two backends (embedded SQLite, OpenSearch).

A store keeps immutable nugget versions and corpus passages for many tenants. Exactly
one version per nugget lineage is the *head*; only heads are retrievable. Governance
filters (tenant, validity at ``as_of``, lifecycle state, publication, scope, kind) are
applied inside the lexical and the dense query, before ranking, never to a ranked list.
The conformance suite in ``tests/conformance`` states the contract as tests and runs on
every backend.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import threading
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Protocol

import numpy as np

from nuggetflow.errors import ValidationError
from query.embeddings import Vector
from query.model import ItemType, Kind, Nugget, Passage, Publication, View, validate_nugget
from query.traces import NuggetTrace
from query.usage import ReviewFlag, UsageRow, UsageTotals

OPEN_END = 1.0e12  # epoch seconds standing for "no end" (year 33658)
MAX_ID_BYTES = 400  # item ids, UTF-8 (OpenSearch _id holds at most 512 bytes)


@dataclass(frozen=True)
class GovernanceFilter:
    """What a query may see. Documents pass on tenant and validity only."""

    tenant: str
    as_of: datetime
    view: View = View.ACTIVE
    scopes: tuple[str, ...] = ()
    kinds: tuple[Kind, ...] = ()
    include_documents: bool = True


@dataclass(frozen=True)
class DocumentHead:
    """The latest stored version of a tenant's corpus document (from its passages)."""

    doc_id: str
    version: int
    digest: str
    valid_from: datetime
    valid_to: datetime | None = None


@dataclass(frozen=True)
class Scored:
    """One candidate from a retriever: item id, type, raw score and metadata prior."""

    id: str
    type: ItemType
    score: float
    meta: float = 0.5


def meta_prior(rank: int, confidence: float) -> float:
    """Metadata prior in [0, 1]: Preferred rank and high confidence score higher."""
    rank_part = {1: 1.0, 2: 0.5, 3: 0.0}.get(rank, 0.5)
    return 0.5 * rank_part + 0.5 * max(0.0, min(1.0, confidence))


class OverlayScorer(Protocol):
    """Scores text as the store's lexical retriever would if the text were indexed.

    Probing overlays a candidate on a frozen view of the index: nothing is written.
    """

    async def score(self, terms: Sequence[str], title: str, body: str, anchors: str) -> float:
        """The lexical score the text would get for these query terms (0: no match)."""

    async def close(self) -> None:
        """Release whatever the scorer holds (scratch tables or indexes)."""


class IndexStore(Protocol):
    """Storage and candidate generation for the governed index.

    Writes are atomic: either every version (and its vector) of a call is stored and the
    heads move, or nothing changes. Nothing is ever deleted.
    """

    async def start(self) -> None:
        """Open connections, create schema, load in-memory structures."""

    async def stop(self) -> None:
        """Flush and close."""

    async def ping(self) -> None:
        """A cheap reachability check (BackendUnavailableError when unreachable)."""

    def writer(self, tenant: str = "",
               keys: Collection[tuple[str, str, str]] = ()) -> AbstractAsyncContextManager[None]:
        """One read-decide-write sequence of ``tenant`` on the lineages with governance
        ``keys`` (the keys of the heads it will read and derive from), such that two
        writers never both commit versions derived from the same heads, in this process
        or any other.

        The SQLite file: exclusive, an flock beside it for every key (the stream worker
        and every query-service worker take turns). OpenSearch: optimistic, a commit point
        per key read when the session begins; a write in the session after another writer
        has committed on one of these keys, or on a key the write adds, raises
        WriteContentionError (nothing written) and the caller reads again
        (:class:`query.index.NuggetIndex` retries); a process-local lock keeps this
        process's own writers from refusing each other.
        """

    async def write_nuggets(self, versions: Sequence[Nugget], vectors: Sequence[Vector | None],
                            anchor_vectors: Sequence[Vector | None] | None = None) -> None:
        """Store new versions; each becomes the head of its lineage.

        ``vectors[i]`` is the embedding of ``versions[i].text``; ``None`` reuses the
        vector of the version's parent (its text did not change). ``anchor_vectors[i]``
        has one row per anchor of ``versions[i]`` (``None``: the parent's, its anchors
        did not change; the argument omitted: no anchor vectors). A nugget's dense score
        is the best cosine over its statement vector and its anchor vectors. A version id
        that is already stored is skipped (idempotent re-delivery).
        """

    async def add_passages(self, passages: Sequence[Passage], vectors: Vector) -> int:
        """Store corpus passages; returns how many were new.

        Items are keyed by tenant and id: a passage id the tenant already has is skipped
        (another tenant's passage with the same id is a different item). Passages of
        version k > 1 of a document close, in the same atomic write, the validity of the
        tenant's passages of earlier versions of it that are still valid at their
        ``valid_from`` (``valid_to`` becomes that instant); ValidationError, nothing
        written, when such a passage does not start before it. One call holds at most
        one version of a document, and all of that version's passages.
        """

    async def close_document(self, tenant: str, doc_id: str, at: datetime) -> list[str]:
        """End, at ``at``, the validity of the tenant's passages of ``doc_id`` that are
        still valid then: the document is removed from ``at`` on (``as_of`` queries before
        it still see it). Returns the ids of the passages closed (none when nothing of the
        document is valid at ``at``: closing twice is harmless); ValidationError, nothing
        written, when one of them starts at or after ``at``."""

    async def document_heads(self, tenant: str,
                             doc_ids: Sequence[str]) -> dict[str, DocumentHead]:
        """The latest stored version of each of these documents of the tenant (documents
        without passages are left out)."""

    async def get(self, tenant: str, item_id: str) -> Nugget:
        """One nugget version by id; NotFoundError when absent for this tenant."""

    async def history(self, tenant: str, item_id: str) -> list[Nugget]:
        """All versions of the lineage of ``item_id``, oldest first (tools and tests; the
        service and the write path never read a whole lineage)."""

    async def head(self, tenant: str, item_id: str) -> Nugget:
        """The head version of the lineage of ``item_id`` (any version id of it), read
        directly: the cost does not grow with the lineage. NotFoundError when absent."""

    async def history_page(self, tenant: str, item_id: str, limit: int,
                           after_id: str = "") -> list[Nugget]:
        """Up to ``limit`` versions of the lineage of ``item_id``, oldest first, starting
        after the version ``after_id`` ("" : from the first). Reads one page, not the
        lineage. NotFoundError when ``item_id`` is absent; ValidationError (field
        ``after_id``) when ``after_id`` is not a version of the same lineage and tenant."""

    async def lineage_version(self, tenant: str, item_id: str, number: int) -> Nugget:
        """Version ``number`` (1: the first) of the lineage of ``item_id`` (its lineage id
        or any version id of it). NotFoundError when ``item_id`` is absent (field ``id``)
        or its lineage has no version ``number`` (field ``version``)."""

    async def heads_page(self, tenant: str, publications: Sequence[Publication], limit: int,
                         after_id: str = "") -> list[Nugget]:
        """Up to ``limit`` head versions of the tenant's nugget lineages whose head's
        publication is one of ``publications`` (the review queue: PENDING_REVIEW), in id
        order (of the head version's id), starting after the id ``after_id`` ("" : from
        the first; it need not be stored). Reads the page through an index on (tenant,
        publication, id) of heads, never the tenant's other nuggets. Empty
        ``publications``: nothing."""

    async def publication_counts(self) -> dict[tuple[str, Publication], int]:
        """Nugget lineages per (tenant, publication state of the head), every tenant: the
        review backlog (PENDING_REVIEW) beside what is published. Read from the index of
        heads by publication, never the nuggets themselves."""

    async def find_by_request(self, tenant: str, lineage_id: str,
                              request_id: str) -> Nugget | None:
        """The version of this lineage that the request ``request_id`` produced (its
        ``request_id`` field), or None. Versions carrying a request id are indexed by it."""

    async def heads_by_key(self, tenant: str, key: tuple[str, str, str]) -> list[Nugget]:
        """Head versions of every lineage with this governance key."""

    async def find_by_event(self, tenant: str, event_id: str) -> list[Nugget]:
        """Head versions whose provenance event id is ``event_id``."""

    async def has_tenant(self, tenant: str) -> bool:
        """True when the tenant has any stored item."""

    async def lexical(self, terms: Sequence[str], flt: GovernanceFilter,
                      limit: int) -> list[Scored]:
        """BM25 over title, body and anchors of items passing ``flt``; best first."""

    async def dense(self, vector: Vector, flt: GovernanceFilter, limit: int) -> list[Scored]:
        """Cosine similarity of items passing ``flt``; best first."""

    async def suppressed(self, terms: Sequence[str], flt: GovernanceFilter) -> int:
        """Head nuggets of the tenant matching ``terms`` lexically that ``flt`` excludes."""

    async def fetch(self, tenant: str, ids: Sequence[str]) -> dict[str, Nugget | Passage]:
        """Records by id (missing ids are left out)."""

    async def statement_cosines(self, tenant: str, ids: Sequence[str],
                                vector: Vector) -> dict[str, float]:
        """The cosine of ``vector`` with each nugget's stored statement vector (the one
        ``write_nuggets`` was given: title and body, no anchors), by id; ids that are not
        nuggets of the tenant are left out. The gate reads it instead of embedding the
        statement again on the query path."""

    async def sample_passages(self, tenant: str, limit: int, seed: int = 0) -> list[Passage]:
        """Up to ``limit`` corpus passages of the tenant, chosen by ``seed`` (calibration)."""

    async def overlay_scorer(self) -> OverlayScorer:
        """BM25 statistics frozen now, to score a candidate that is not in the index."""

    async def stats(self) -> dict[str, float]:
        """Counts and sizes, for logs and benchmarks."""

    async def add_usage(self, rows: Sequence[UsageRow], flush_id: str) -> None:
        """Add the rows' counts to the stored counts of (tenant, version id, day)
        (:mod:`query.usage`). A flush id applied before is not applied again (a retry
        after a lost answer)."""

    async def usage_totals(self, tenant: str, ids: Sequence[str],
                           since: date) -> dict[str, UsageTotals]:
        """Each version's counts summed over the days from ``since`` on (ids never counted
        are left out)."""

    async def review_flags(self, tenant: str) -> list[ReviewFlag]:
        """The tenant's stored review flags, by lineage id then kind."""

    async def replace_review_flags(self, tenant: str, flags: Sequence[ReviewFlag]) -> None:
        """Store ``flags`` as the tenant's review flags (the earlier ones go)."""

    async def update_review_flags(
            self, tenant: str,
            change: Callable[[list[ReviewFlag]], list[ReviewFlag]]) -> list[ReviewFlag]:
        """Store ``change(stored flags)`` as the tenant's review flags, read and written
        as one step: two processes updating a tenant's flags at once (the usage review, a
        re-probe, a reviewer's dismissal) never lose each other's change. Returns what
        was stored."""

    async def add_traces(self, traces: Sequence[NuggetTrace]) -> None:
        """Keep ``traces`` beside their nuggets (:mod:`query.traces`); a trace whose id is
        stored already is kept once."""

    async def traces(self, tenant: str, lineage_id: str, limit: int = 100
                     ) -> list[NuggetTrace]:
        """The lineage's last ``limit`` traces, oldest first."""


# --- validation shared by every backend (before anything is written) -----------------


def check_vector(v: Vector, dim: int) -> None:
    """ValidationError unless v is a finite vector of the store's dimension."""
    arr = np.asarray(v)
    if arr.ndim != 1 or arr.shape[0] != dim:
        raise ValidationError(f"vector has shape {arr.shape}, expected ({dim},)",
                              field="vector")
    if not np.all(np.isfinite(arr)):
        raise ValidationError("vector has NaN or infinite values", field="vector")


def validate_write(versions: Sequence[Nugget], vectors: Sequence[Vector | None], dim: int,
                   anchor_vectors: Sequence[Vector | None] | None = None) -> None:
    """Check a write_nuggets batch whole, so a bad item means nothing is written."""
    if len(versions) != len(vectors):
        raise ValidationError(f"{len(versions)} versions but {len(vectors)} vectors",
                              field="vectors")
    if anchor_vectors is not None and len(anchor_vectors) != len(versions):
        raise ValidationError(f"{len(versions)} versions but {len(anchor_vectors)} anchor "
                              "vector sets", field="anchor_vectors")
    for i, (n, v) in enumerate(zip(versions, vectors, strict=True)):
        validate_nugget(n)
        if not n.id:
            raise ValidationError("version has no id", field="id")
        if v is not None:
            check_vector(v, dim)
        a = None if anchor_vectors is None else anchor_vectors[i]
        if a is not None:
            arr = np.asarray(a)
            if arr.shape != (len(n.anchors), dim) or not np.all(np.isfinite(arr)):
                raise ValidationError(f"anchor vectors of {n.id!r} have shape {arr.shape}, "
                                      f"expected ({len(n.anchors)}, {dim}), finite",
                                      field="anchor_vectors")


def validate_passages(passages: Sequence[Passage], vectors: Vector, dim: int) -> None:
    """Check an add_passages batch whole."""
    if len(passages) != len(vectors):
        raise ValidationError(f"{len(passages)} passages but {len(vectors)} vectors",
                              field="vectors")
    versions: dict[tuple[str, str], tuple[int, datetime]] = {}
    for p in passages:
        for name in ("id", "tenant", "doc_id", "text"):
            if not str(getattr(p, name)).strip():
                raise ValidationError(f"{name} is empty", field=name)
        for name in ("id", "tenant", "doc_id", "title", "text", "url", "digest"):
            try:
                str(getattr(p, name)).encode("utf-8")
            except UnicodeEncodeError:
                raise ValidationError(f"{name} of {p.id!r} is not encodable as UTF-8",
                                      field=name) from None
        if len(p.id.encode()) > MAX_ID_BYTES:
            raise ValidationError(f"id longer than {MAX_ID_BYTES} bytes", field="id")
        if p.valid_from.tzinfo is None:
            raise ValidationError("datetime must be timezone-aware", field="valid_from")
        if p.valid_to is not None and p.valid_to <= p.valid_from:
            raise ValidationError("valid_to <= valid_from", field="valid_to")
        if p.version < 1:
            raise ValidationError(f"version {p.version} of {p.id!r} < 1", field="version")
        got = versions.setdefault((p.tenant, p.doc_id), (p.version, p.valid_from))
        if got != (p.version, p.valid_from):
            raise ValidationError(f"passages of document {p.doc_id!r} with different "
                                  "versions or starts in one call", field="version")
    for v in vectors:
        check_vector(v, dim)


class WriterLock:
    """The lock behind ``IndexStore.writer()``: a thread lock (this process: any event
    loop or thread) plus, with a path, an exclusive ``flock`` on that file (other
    processes). Acquired on a worker thread, so a waiting writer never blocks the loop.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._local = threading.Lock()

    def _acquire(self) -> int | None:
        self._local.acquire()
        if self.path is None:
            return None
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except BaseException:
                os.close(fd)
                raise
        except BaseException:
            self._local.release()
            raise
        return fd

    def _release(self, fd: int | None) -> None:
        try:
            if fd is not None:
                fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)
        finally:
            self._local.release()

    @contextlib.asynccontextmanager
    async def hold(self) -> AsyncIterator[None]:
        """Hold the lock for the body of an ``async with``.

        A caller cancelled while waiting (a deadline) does not leak the lock: the thread
        still acquires it, and it is released as soon as that happens.
        """
        pending = asyncio.get_running_loop().run_in_executor(None, self._acquire)
        try:
            fd = await asyncio.shield(pending)
        except asyncio.CancelledError:
            pending.add_done_callback(
                lambda f: None if f.cancelled() or f.exception() else self._release(f.result()))
            raise
        try:
            yield
        finally:
            self._release(fd)
