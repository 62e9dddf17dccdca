"""The governed nugget index: submit, review, edit, revert, ingest, retrieve.

:class:`NuggetIndex` ties a store, an embedder and the governance rules together. All
state changes go through it, so every change is a new version and governance runs
whenever a nugget becomes (or stays) published.

A review or edit reads the lineage's head (never the whole lineage), so its cost does not
grow with history; it may carry a caller's request id (applied once per lineage) and a
deadline (checked right before the write begins; a write that has begun is finished).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from nuggetflow.errors import (
    DeadlineExceededError,
    InvalidTransitionError,
    NotFoundError,
    ValidationError,
)
from nuggetflow.logging import clip, get_logger
from nuggetflow.settings import Settings
from query.embeddings import Embedder, Vector
from query.governance import Decision, PredicateSchema, resolve_publication, transition
from query.model import (
    Nugget,
    Passage,
    Publication,
    State,
    first_version_id,
    next_version,
    plain_nugget,
    utcnow,
    validate_nugget,
)
from query.retrieval import Retriever, hit_record
from query.store import IndexStore

log = get_logger(__name__)

REVIEW_ACTIONS = ("approve", "reject", "unpublish", "revert")
_CONTENT_FIELDS = ("title", "body", "anchors", "fact", "validity", "kind", "confidence")


class NuggetIndex:
    """Facade over the store that enforces versioning, review and governance."""

    def __init__(self, store: IndexStore, embedder: Embedder, settings: Settings,
                 schema: PredicateSchema | None = None,
                 clock: Callable[[], datetime] = utcnow) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings
        self.schema = schema or PredicateSchema.from_file(settings.predicate_schema)
        self.clock = clock
        self.retriever = Retriever(store, embedder, settings)

    async def start(self) -> None:
        """Start the store."""
        await self.store.start()

    async def stop(self) -> None:
        """Stop the store."""
        await self.store.stop()

    def _embed(self, nuggets: Sequence[Nugget]) -> Vector:
        return self.embedder.embed([n.embedding_text for n in nuggets])

    def _embed_anchors(self, nugget: Nugget) -> Vector:
        """One vector per anchor (the nugget's dense score is its best over these too)."""
        if not nugget.anchors:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        return self.embedder.embed(list(nugget.anchors))

    async def submit(self, candidate: Nugget, *, publication: Publication =
                     Publication.PENDING_REVIEW) -> Nugget:
        """Store a new candidate (first version of a lineage) awaiting review.

        Idempotent: the id is a hash of tenant, key, content, event and validity start, so
        a re-delivered candidate returns the stored head instead of a second nugget.
        """
        if publication not in (Publication.DRAFT, Publication.PENDING_REVIEW):
            raise ValidationError("a new candidate is DRAFT or PENDING_REVIEW",
                                  field="publication")
        candidate = plain_nugget(candidate)
        validate_nugget(candidate)
        nid = first_version_id(candidate)
        vector = self._embed([candidate])[0]  # before the lock: writers wait less
        anchors = self._embed_anchors(candidate)
        async with self.store.writer():
            try:
                return await self.head(candidate.tenant, nid)
            except NotFoundError:
                pass
            first = dataclasses.replace(candidate, id=nid, parent_id="", lineage_id=nid,
                                        version=1, publication=publication,
                                        created_at=self.clock(),
                                        change_reason=candidate.change_reason or "submitted")
            await self.store.write_nuggets([first], [vector], [anchors])
        log.info("nugget submitted", tenant=first.tenant, id=nid, title=first.title)
        return first

    async def head(self, tenant: str, item_id: str) -> Nugget:
        """The current version of the lineage that ``item_id`` belongs to."""
        return await self.store.head(tenant, item_id)

    async def nugget(self, tenant: str, item_id: str, version: int = 0) -> Nugget:
        """The nugget an id names (GetNugget): a lineage id (the id of a lineage's first
        version) names the lineage, so its head is returned; any other version id names
        that version. ``version`` > 0 asks for that version number of the lineage of
        ``item_id`` instead (1: the first version, which its lineage id alone does not
        name). NotFoundError (field ``id``, or ``version`` for a number the lineage does not
        have); ValidationError (field ``version``) for a negative number."""
        if version < 0:
            raise ValidationError(f"must be >= 0, got {version}", field="version")
        if version:
            return await self.store.lineage_version(tenant, item_id, version)
        head = await self.store.head(tenant, item_id)
        if item_id in (head.id, _lineage(head)):
            return head
        return await self.store.get(tenant, item_id)

    async def candidates(self, tenant: str, publications: Sequence[Publication] = (),
                         page_size: int = 0, page_token: str = "") -> CandidatePage:
        """One page of what waits for review (ListCandidates, ``nuggetflow candidates``):
        the heads of the tenant's lineages whose publication is one of ``publications``
        (none given: PENDING_REVIEW), in id order. ``page_size`` 0 means
        DEFAULT_PAGE_SIZE, larger than MAX_PAGE_SIZE means MAX_PAGE_SIZE; pass
        ``next_page_token`` back for the next page ("" on the last). Text fields are cut
        at ``NUGGETFLOW_MAX_HIT_CHARS`` as in Retrieve hits (the INO outcome is kept):
        :meth:`nugget` gives the whole record. ValidationError names ``page_size`` or
        ``page_token``."""
        if page_size < 0:
            raise ValidationError(f"must be in 0..{MAX_PAGE_SIZE}, got {page_size}",
                                  field="page_size")
        size = min(page_size or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
        wanted = tuple(sorted(set(publications))) or (Publication.PENDING_REVIEW,)
        after = _candidates_after(page_token, wanted)
        page = await self.store.heads_page(tenant, wanted, size + 1, after_id=after)
        more = len(page) > size
        page = page[:size]
        cap = self.settings.max_hit_chars
        shown = [dataclasses.replace(hit_record(n, cap), optimization=n.optimization)
                 for n in page]
        return CandidatePage(shown, _candidates_token(page[-1].id, wanted) if more else "",
                             wanted)

    async def review(self, tenant: str, item_id: str, action: str, *, reviewer: str = "",
                     reason: str = "", target_version_id: str = "", request_id: str = "",
                     deadline: float | None = None) -> Nugget:
        """Apply a review action; returns the version it produced (the new head; with a
        request id already applied, the version that request produced). Governance runs
        on approval.

        See :meth:`apply_review` for ``request_id`` and ``deadline``.
        """
        return (await self.apply_review(tenant, item_id, action, reviewer=reviewer,
                                        reason=reason, target_version_id=target_version_id,
                                        request_id=request_id, deadline=deadline)).head

    async def apply_review(self, tenant: str, item_id: str, action: str, *,
                           reviewer: str = "", reason: str = "", target_version_id: str = "",
                           request_id: str = "", deadline: float | None = None) -> Applied:
        """Apply a review action once; returns the version it produced.

        ``request_id`` (optional, chosen by the caller) makes the call idempotent: when a
        version of this lineage already carries it, nothing is written and that version
        is returned (``replayed``). ``deadline`` (``time.monotonic()`` seconds, optional):
        waiting for the writer lock and reading stop there, and the write does not begin
        once it has passed (DeadlineExceededError, nothing written); a write that has
        begun is finished, even if the caller is cancelled meanwhile.
        """
        if action not in REVIEW_ACTIONS:
            raise InvalidTransitionError(f"unknown action {action!r} "
                                         f"(one of {', '.join(REVIEW_ACTIONS)})", field="action")

        async def plan(head: Nugget, now: datetime) -> Nugget:
            note = f"{action} by {reviewer or 'unknown'}" + (f": {reason}" if reason else "")
            if action == "revert":
                try:
                    target = await self.store.get(tenant, target_version_id)
                except NotFoundError:
                    target = None
                if target is None or _lineage(target) != _lineage(head):
                    raise ValidationError(f"{target_version_id!r} is not a version of this "
                                          "nugget", field="target_version_id")
                restored = {f: getattr(target, f) for f in (*_CONTENT_FIELDS, "state",
                                                             "rank", "publication",
                                                             "evidence")}
                return next_version(head, f"revert to v{target.version} ({note})", now,
                                    **restored)
            return next_version(head, note, now, publication=transition(head.publication,
                                                                        action))

        return await self._write(tenant, item_id, plan, request_id, deadline)

    async def approve(self, tenant: str, item_id: str, reviewer: str = "auto",
                      request_id: str = "") -> Nugget:
        """Shorthand for the approve review (auto-publish policy uses it)."""
        return await self.review(tenant, item_id, "approve", reviewer=reviewer,
                                 request_id=request_id)

    async def edit(self, tenant: str, item_id: str, reason: str, *, request_id: str = "",
                   deadline: float | None = None, **changes: object) -> Nugget:
        """A new version with changed content fields (title, body, anchors, fact, ...)."""
        return (await self.apply_edit(tenant, item_id, reason, request_id=request_id,
                                      deadline=deadline, **changes)).head

    async def apply_edit(self, tenant: str, item_id: str, reason: str, *,
                         request_id: str = "", deadline: float | None = None,
                         **changes: object) -> Applied:
        """:meth:`edit` once (``request_id`` and ``deadline`` as in :meth:`apply_review`)."""
        bad = set(changes) - set(_CONTENT_FIELDS)
        if bad:
            raise ValidationError(f"cannot edit {', '.join(sorted(bad))}", field=sorted(bad)[0])

        async def plan(head: Nugget, now: datetime) -> Nugget:
            new = plain_nugget(next_version(head, f"edit: {reason}", now, **changes))
            validate_nugget(new)
            return new

        return await self._write(tenant, item_id, plan, request_id, deadline)

    async def _write(self, tenant: str, item_id: str,
                     plan: Callable[[Nugget, datetime], Awaitable[Nugget]],
                     request_id: str, deadline: float | None) -> Applied:
        """One read-decide-write under the writer lock: read the head (never the whole
        lineage), answer a request id already applied, derive the new version with
        ``plan``, run governance, check the deadline, write (to the end)."""
        async with _writer_until(self.store, deadline):
            async with _until(deadline, "reading the nugget"):
                head = await self.store.head(tenant, item_id)
                if request_id:
                    done = await self.store.find_by_request(tenant, _lineage(head), request_id)
                    if done is not None:
                        log.info("request already applied; nothing written", tenant=tenant,
                                 lineage=_lineage(head), request_id=clip(request_id),
                                 version=done.id)
                        return Applied(done, replayed=True)
                now = self.clock()
                new = await plan(head, now)
                prepared = await self._prepare(new, head, now, request_id)
            if deadline is not None and time.monotonic() >= deadline:
                raise DeadlineExceededError("deadline passed before the write began; "
                                            "nothing was written")
            await _to_the_end(self.store.write_nuggets(*prepared.batch), prepared.describe,
                              tenant=tenant, lineage=_lineage(head),
                              request_id=clip(request_id), version=prepared.head.id)
            return Applied(prepared.head, replayed=False)

    async def _prepare(self, new: Nugget, parent: Nugget, now: datetime,
                       request_id: str = "") -> _Prepared:
        """What writing ``new`` (a child of ``parent``) means: governance's versions and
        their vectors. The version of ``new``'s lineage that is written last (the new
        head) carries ``request_id``. The caller holds ``store.writer()``."""
        others: list[Nugget] = []
        if new.publication is Publication.PUBLISHED and new.state is not State.DEPRECATED:
            others = [h for h in await self.store.heads_by_key(new.tenant, new.key)
                      if _lineage(h) != _lineage(new)]
            decision = resolve_publication(new, others, self.schema, now)
        else:
            decision = Decision("updated", [new])
        lineage = _lineage(new)
        if request_id:
            last = max((i for i, v in enumerate(decision.writes) if _lineage(v) == lineage),
                       default=None)
            if last is not None:
                decision.writes[last] = dataclasses.replace(decision.writes[last],
                                                            request_id=request_id)
        # Every write is a child of a head read above: reuse its vector when the embedded
        # text is unchanged (the store copies it), embed otherwise.
        known = {n.id: n for n in (parent, *others)}
        vectors: list[Vector | None] = []
        anchor_vectors: list[Vector | None] = []
        for v in decision.writes:
            p = known.get(v.parent_id)
            same_text = p is not None and v.embedding_text == p.embedding_text
            vectors.append(None if same_text else self._embed([v])[0])
            same_anchors = p is not None and v.anchors == p.anchors
            anchor_vectors.append(None if same_anchors else self._embed_anchors(v))
        return _Prepared(decision, decision.latest(lineage) or new, vectors, anchor_vectors)

    async def ingest_passages(self, passages: Sequence[Passage]) -> int:
        """Embed and store corpus passages; returns how many were new."""
        if not passages:
            return 0
        vectors = self.embedder.embed([f"{p.title}\n{p.text}" for p in passages])
        added = await self.store.add_passages(passages, vectors)
        for tenant in {p.tenant for p in passages}:
            self.retriever.gate.invalidate(tenant)  # refitted on the changed corpus
        return added


DEFAULT_PAGE_SIZE = 100  # ListCandidates (and ListVersions) page size when left 0
MAX_PAGE_SIZE = 1000  # larger page sizes are treated as this
_CANDIDATES_TOKEN = "c1"


@dataclass(frozen=True)
class CandidatePage:
    """One page of the review queue: head versions in id order, the token of the next
    page ("" on the last) and the publications listed."""

    candidates: list[Nugget]
    next_page_token: str
    publications: tuple[Publication, ...]


def _candidates_token(after_id: str, publications: Sequence[Publication]) -> str:
    """The opaque token continuing a listing of ``publications`` after ``after_id``."""
    raw = f"{_CANDIDATES_TOKEN}:{','.join(str(int(p)) for p in publications)}:{after_id}"
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _candidates_after(token: str, publications: Sequence[Publication]) -> str:
    """The id a candidates token continues after ("" for none); ValidationError (field
    ``page_token``) for a token not made by a listing of the same publications."""
    if not token:
        return ""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
    except (ValueError, UnicodeDecodeError):
        raw = ""
    kind, _, rest = raw.partition(":")
    listed, _, after = rest.partition(":")
    if kind != _CANDIDATES_TOKEN or not after:
        raise ValidationError("not a page token of ListCandidates", field="page_token")
    if listed != ",".join(str(int(p)) for p in publications):
        raise ValidationError("a page token of a listing of other publications",
                              field="page_token")
    return after


@dataclass(frozen=True)
class Applied:
    """The outcome of a review or edit: the version the request produced, and whether it
    had been produced before (a request id already applied: nothing was written)."""

    head: Nugget
    replayed: bool


@dataclass(frozen=True)
class _Prepared:
    """A governance decision ready to write: versions, vectors, the lineage's new head."""

    decision: Decision
    head: Nugget
    vectors: list[Vector | None]
    anchor_vectors: list[Vector | None]

    @property
    def batch(self) -> tuple[list[Nugget], list[Vector | None], list[Vector | None]]:
        """The arguments of ``store.write_nuggets``."""
        return self.decision.writes, self.vectors, self.anchor_vectors

    def describe(self) -> None:
        """Log the committed decision."""
        head = self.head
        log.info("nugget committed", tenant=head.tenant, lineage=_lineage(head),
                 outcome=self.decision.outcome, writes=len(self.decision.writes),
                 publication=head.publication.name, state=head.state.name)


def _lineage(n: Nugget) -> str:
    return n.lineage_id or n.id


@contextlib.asynccontextmanager
async def _until(deadline: float | None, doing: str) -> AsyncIterator[None]:
    """Bound the body by ``deadline`` (monotonic seconds; None: unbounded); a body that
    runs past it is cancelled and DeadlineExceededError is raised."""
    if deadline is None:
        yield
        return
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise DeadlineExceededError(f"deadline passed before {doing}; nothing was written")
    try:
        async with asyncio.timeout(remaining) as scope:
            yield
    except TimeoutError:
        if scope.expired():
            raise DeadlineExceededError(f"deadline passed while {doing}; nothing was "
                                        "written") from None
        raise


@contextlib.asynccontextmanager
async def _writer_until(store: IndexStore, deadline: float | None) -> AsyncIterator[None]:
    """Hold ``store.writer()``, waiting for it until ``deadline`` at most."""
    async with contextlib.AsyncExitStack() as stack:
        async with _until(deadline, "waiting for the writer lock"):
            await stack.enter_async_context(store.writer())
        yield


async def _to_the_end(write: Awaitable[None], committed: Callable[[], None],
                      **about: Any) -> None:
    """Run a write that has begun to its end, even when the caller is cancelled meanwhile
    (a deadline, a client that went away, a server stop): a write is applied whole or not
    at all, and never abandoned half way. The caller's cancellation is raised afterwards
    (logged with ``about``); a retry with the same request id then returns what was
    written."""
    task = asyncio.ensure_future(write)
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        while not task.done():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait([task])
        if not task.cancelled() and task.exception() is None:
            committed()
            log.warning("write finished after its call was cancelled; it is applied",
                        **about)
        raise
    committed()
