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
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import numpy as np

from nuggetflow.errors import (
    ConflictError,
    DeadlineExceededError,
    InvalidTransitionError,
    NotFoundError,
    ValidationError,
    WriteContentionError,
)
from nuggetflow.logging import clip, get_logger
from nuggetflow.settings import Settings
from query.embeddings import Embedder, Vector
from query.governance import (
    Decision,
    PredicateSchema,
    Relation,
    neighbourhood,
    resolve_publication,
    transition,
)
from query.model import (
    REVIEW_ACTIONS,
    Nugget,
    Passage,
    Publication,
    State,
    content_hash,
    first_version_id,
    next_version,
    plain_nugget,
    utcnow,
    validate_nugget,
)
from query.retrieval import Retriever, hit_record
from query.store import IndexStore

log = get_logger(__name__)

_CONTENT_FIELDS = ("title", "body", "anchors", "fact", "validity", "kind", "confidence")


def build_index(settings: Settings) -> NuggetIndex:
    """The governed index for these settings (store and embedder picked by URL)."""
    from query.backends import make_store
    from query.embeddings import make_embedder

    return NuggetIndex(make_store(settings), make_embedder(settings), settings)


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
        #: Called after each write that made a correction retrievable (see Publishing):
        #: the processes that review (query service, stream worker) record the lag.
        self.publish_listeners: list[Callable[[Publishing], None]] = []

    async def start(self) -> None:
        """Start the store."""
        await self.store.start()

    async def stop(self) -> None:
        """Stop the store."""
        await self.store.stop()

    def vectors_for(self, nuggets: Sequence[Nugget]) -> tuple[Vector, list[Vector]]:
        """The dense vectors a write stores for these versions, made the way every write
        makes them: one from each version's ``embedding_text`` and one per anchor."""
        return self._embed(nuggets), [self._embed_anchors(n) for n in nuggets]

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

        async def attempt() -> Nugget | None:
            async with self.store.writer(candidate.tenant, [candidate.key]):
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

        stored = await _retrying(attempt, tenant=candidate.tenant, doing="submit")
        assert stored is not None
        return stored

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
                         page_size: int = 0, page_token: str = "",
                         listing: Listing | None = None) -> CandidatePage:
        """One page of what waits for review (ListCandidates, ``nuggetflow candidates``):
        the heads of the tenant's lineages whose publication is one of ``publications``
        (none given: PENDING_REVIEW), in id order. ``page_size`` 0 means
        DEFAULT_PAGE_SIZE, larger than MAX_PAGE_SIZE means MAX_PAGE_SIZE; pass
        ``next_page_token`` back for the next page ("" on the last). Text fields are cut
        at ``NUGGETFLOW_MAX_HIT_CHARS`` as in Retrieve hits (the INO outcome is kept):
        :meth:`nugget` gives the whole record. ValidationError names ``page_size`` or
        ``page_token``.

        ``listing`` filters (lifecycle states, designated owner, words, validity) and
        orders (id, or newest feedback first) the listing; with any of them the heads in
        ``publications`` are read whole, filtered and sorted, and ``total`` counts the
        matches of every page."""
        if page_size < 0:
            raise ValidationError(f"must be in 0..{MAX_PAGE_SIZE}, got {page_size}",
                                  field="page_size")
        size = min(page_size or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
        wanted = tuple(sorted(set(publications))) or (Publication.PENDING_REVIEW,)
        if listing is not None and not listing.plain:
            return await self._listing_page(tenant, wanted, size, page_token, listing)
        after = _candidates_after(page_token, wanted)
        page = await self.store.heads_page(tenant, wanted, size + 1, after_id=after)
        more = len(page) > size
        page = page[:size]
        return CandidatePage(self._shown(page),
                             _candidates_token(page[-1].id, wanted) if more else "", wanted)

    def _shown(self, page: Sequence[Nugget]) -> list[Nugget]:
        """Listed heads: text cut as in Retrieve hits, the INO outcome without its rounds
        (GetNugget has the whole trace)."""
        cap = self.settings.max_hit_chars
        return [dataclasses.replace(hit_record(n, cap), optimization=_outcome(n.optimization))
                for n in page]

    async def _listing_page(self, tenant: str, wanted: tuple[Publication, ...], size: int,
                            page_token: str, listing: Listing) -> CandidatePage:
        at = listing.as_of or self.clock()
        matches: list[Nugget] = []
        after = ""
        while True:
            chunk = await self.store.heads_page(tenant, wanted, MAX_PAGE_SIZE, after_id=after)
            matches += [n for n in chunk if listing.matches(n, at)]
            if len(chunk) < MAX_PAGE_SIZE:
                break
            after = chunk[-1].id
        prefix = _listing_prefix(wanted, listing)
        cursor = _listing_cursor(page_token, prefix)
        if listing.newest_first:
            matches.sort(key=_newest_key, reverse=True)
            bound = _parse_newest(cursor) if cursor else None
            rest = [n for n in matches if bound is None or _newest_key(n) < bound]
        else:
            matches.sort(key=lambda n: n.id)
            rest = [n for n in matches if n.id > cursor]
        page = rest[:size]
        token = ""
        if len(rest) > size:
            last = page[-1]
            mark = (f"{_newest_key(last)[0].isoformat()}|{last.id}" if listing.newest_first
                    else last.id)
            token = _encode_token(f"{prefix}:{mark}")
        return CandidatePage(self._shown(page), token, wanted, total=len(matches))

    async def neighbourhood(self, tenant: str, item_id: str
                            ) -> tuple[Nugget, list[Relation], str]:
        """The head of ``item_id``'s lineage, how every other lineage with its governance
        key relates to it (:func:`query.governance.neighbourhood`), and for a nugget not
        yet published the governance outcome approving it now would have ("" otherwise)."""
        head = await self.store.head(tenant, item_id)
        others = [h for h in await self.store.heads_by_key(tenant, head.key)
                  if _lineage(h) != _lineage(head)]
        relations, outcome = neighbourhood(head, others, self.schema, self.clock())
        return head, relations, outcome

    async def review(self, tenant: str, item_id: str, action: str, *, reviewer: str = "",
                     reason: str = "", target_version_id: str = "", request_id: str = "",
                     deadline: float | None = None, expected_version_id: str = "") -> Nugget:
        """Apply a review action; returns the version it produced (the new head; with a
        request id already applied, the version that request produced). Governance runs
        on approval.

        See :meth:`apply_review` for ``request_id`` and ``deadline``.
        """
        return (await self.apply_review(tenant, item_id, action, reviewer=reviewer,
                                        reason=reason, target_version_id=target_version_id,
                                        request_id=request_id, deadline=deadline,
                                        expected_version_id=expected_version_id)).head

    async def apply_review(self, tenant: str, item_id: str, action: str, *,
                           reviewer: str = "", reason: str = "", target_version_id: str = "",
                           request_id: str = "", deadline: float | None = None,
                           expected_version_id: str = "") -> Applied:
        """Apply a review action once; returns the version it produced.

        ``request_id`` (optional, chosen by the caller) makes the call idempotent: when a
        version of this lineage already carries it, nothing is written and that version
        is returned (``replayed``). ``deadline`` (``time.monotonic()`` seconds, optional):
        waiting for the writer lock and reading stop there, and the write does not begin
        once it has passed (DeadlineExceededError, nothing written); a write that has
        begun is finished, even if the caller is cancelled meanwhile.
        ``expected_version_id`` (optional): the version the reviewer saw; when the head is
        another version, ConflictError (field ``expected_version_id``), nothing written.
        The new version records ``reviewer``.
        """
        if action not in REVIEW_ACTIONS:
            raise InvalidTransitionError(f"unknown action {action!r} "
                                         f"(one of {', '.join(REVIEW_ACTIONS)})", field="action")

        async def plan(head: Nugget, now: datetime) -> Nugget:
            _expect(head, expected_version_id)
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
                                    reviewer=reviewer, **restored)
            return next_version(head, note, now, reviewer=reviewer,
                                publication=transition(head.publication, action))

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

    async def checked_edit(self, tenant: str, item_id: str, *, expected_version_id: str,
                           changes: dict[str, object], guard: EditGuard, reviewer: str = "",
                           reason: str = "", dry_run: bool = False, request_id: str = "",
                           deadline: float | None = None) -> EditOutcome:
        """An edit as a reviewer makes it (EditNugget): made from ``expected_version_id``
        (ConflictError, field ``expected_version_id``, when the head is another version:
        a concurrent edit or review), checked by ``guard`` (the factual-preservation guard:
        the lineage's first version, the edited version -> violations) and written as a
        new version unless ``dry_run``, the guard objects, or nothing changed. Returns the
        version written (``saved``) or the one that would be, the verdict and the fields
        that changed. ``request_id`` and ``deadline`` as in :meth:`apply_review`."""
        bad = set(changes) - set(_CONTENT_FIELDS)
        if bad:
            raise ValidationError(f"cannot edit {', '.join(sorted(bad))}", field=sorted(bad)[0])
        if not expected_version_id.strip():
            raise ValidationError("the version the edit was made from is required",
                                  field="expected_version_id")
        checked: dict[str, Any] = {}

        async def plan(head: Nugget, now: datetime) -> Nugget:
            _expect(head, expected_version_id)
            note = f"edit by {reviewer or 'unknown'}" + (f": {reason}" if reason else "")
            new = plain_nugget(next_version(head, note, now, reviewer=reviewer, **changes))
            validate_nugget(new)
            changed = [f for f in _EDITED_FIELDS if getattr(new, f) != getattr(head, f)]
            first = await self.store.lineage_version(tenant, _lineage(head), 1)
            violations = tuple(guard(first, new)) if changed else ()
            checked.update(changed=changed, violations=violations)
            if dry_run or not changed or violations:
                raise _NotWritten(new)
            return new

        try:
            applied = await self._write(tenant, item_id, plan, request_id, deadline)
        except _NotWritten as held:
            return EditOutcome(held.version, saved=False,
                               violations=checked.get("violations", ()),
                               changed=checked.get("changed", []))
        return EditOutcome(applied.head, saved=True,
                           violations=checked.get("violations", ()),
                           changed=checked.get("changed", []), replayed=applied.replayed)

    async def _write(self, tenant: str, item_id: str,
                     plan: Callable[[Nugget, datetime], Awaitable[Nugget]],
                     request_id: str, deadline: float | None) -> Applied:
        """:meth:`_write_once`, again from a fresh read while another writer's commit
        refuses it (WriteContentionError), within the deadline."""
        keys: frozenset[tuple[str, str, str]] = frozenset()

        async def attempt() -> Applied:
            nonlocal keys
            if not keys:  # the session names the keys it decides on: the head's, first
                async with _until(deadline, "reading the nugget"):
                    keys = frozenset({(await self.store.head(tenant, item_id)).key})
            while True:
                try:
                    return await self._write_once(tenant, item_id, plan, request_id,
                                                  deadline, keys)
                except _MoreKeys as more:
                    keys = keys | more.keys

        return await _retrying(attempt, tenant=tenant, doing="write", deadline=deadline)

    async def _write_once(self, tenant: str, item_id: str,
                          plan: Callable[[Nugget, datetime], Awaitable[Nugget]],
                          request_id: str, deadline: float | None,
                          keys: frozenset[tuple[str, str, str]]) -> Applied:
        """One read-decide-write in a writer session on ``keys``: read the head (never
        the whole lineage), answer a request id already applied, derive the new version
        with ``plan``, run governance, check the deadline, write (to the end). When the
        head or the decision has a key the session does not name (a concurrent edit
        moved the fact), _MoreKeys before anything is written."""
        async with _writer_until(self.store, tenant, keys, deadline):
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
            needed = {head.key, *(v.key for v in prepared.decision.writes)}
            if not needed <= keys:
                raise _MoreKeys(frozenset(needed))
            if deadline is not None and time.monotonic() >= deadline:
                raise DeadlineExceededError("deadline passed before the write began; "
                                            "nothing was written")
            await _to_the_end(self.store.write_nuggets(*prepared.batch), prepared.describe,
                              tenant=tenant, lineage=_lineage(head),
                              request_id=clip(request_id), version=prepared.head.id)
            self._announce(head, prepared.head, now)
            return Applied(prepared.head, replayed=False)

    def _announce(self, before: Nugget, after: Nugget, now: datetime) -> None:
        """Tell the listeners when this write made a correction retrievable: the lineage's
        head was a draft or waited for review, and is now published (and not deprecated
        by governance), or merged into a published nugget as its evidence."""
        if before.publication not in (Publication.DRAFT, Publication.PENDING_REVIEW) or \
                not self.publish_listeners:
            return
        if after.publication is Publication.PUBLISHED and after.state is not State.DEPRECATED:
            outcome = "published"
        elif after.merged_into:
            outcome = "merged"
        else:
            return
        event = Publishing(after.tenant, _lineage(after), outcome,
                           after.provenance.timestamp, now)
        for listener in self.publish_listeners:
            try:
                listener(event)
            except Exception as exc:  # a metric must never fail a committed write
                log.error("publish listener failed", tenant=after.tenant, exc_info=exc)

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

    async def remove_document(self, tenant: str, doc_id: str, at: datetime) -> list[str]:
        """End a corpus document's validity at ``at`` (``as_of`` queries before still see
        it); the ids of the passages closed (see IndexStore.close_document)."""
        closed = await self.store.close_document(tenant, doc_id, at)
        if closed:
            self.retriever.gate.invalidate(tenant)  # refitted on the changed corpus
        return closed


DEFAULT_PAGE_SIZE = 100  # ListCandidates (and ListVersions) page size when left 0
MAX_PAGE_SIZE = 1000  # larger page sizes are treated as this
_CANDIDATES_TOKEN = "c1"


@dataclass(frozen=True)
class CandidatePage:
    """One page of the review queue: head versions in id order, the token of the next
    page ("" on the last) and the publications listed (``total``: how many match every
    page, for a filtered or ordered listing; 0 otherwise)."""

    candidates: list[Nugget]
    next_page_token: str
    publications: tuple[Publication, ...]
    total: int = 0


VALIDITY_FILTERS = ("", "current", "expired", "future")


@dataclass(frozen=True)
class Listing:
    """Filters and order of a review-queue or knowledge listing (ListCandidates)."""

    states: tuple[State, ...] = ()
    owner: str = ""
    query: str = ""
    newest_first: bool = False
    validity: str = ""  # one of VALIDITY_FILTERS ("": any)
    as_of: datetime | None = None

    def __post_init__(self) -> None:
        if self.validity not in VALIDITY_FILTERS:
            raise ValidationError(f"unknown validity filter {self.validity!r}",
                                  field="validity")

    @property
    def plain(self) -> bool:
        """True when nothing filters or orders (the id-order listing of the store)."""
        return not (self.states or self.owner or self.query.strip() or self.newest_first
                    or self.validity)

    def matches(self, n: Nugget, at: datetime) -> bool:
        """Whether head ``n`` passes every filter, validity judged at ``at``."""
        if self.states and n.state not in self.states:
            return False
        if self.owner and n.provenance.owner != self.owner:
            return False
        if self.query.strip():
            hay = "\n".join([n.title, n.body, *n.anchors, n.fact.subject, n.fact.object,
                              n.fact.scope]).lower()
            if not all(w in hay for w in self.query.lower().split()):
                return False
        v = n.validity
        if self.validity == "current":
            return v.contains(at)
        if self.validity == "expired":
            return v.end is not None and v.end <= at
        if self.validity == "future":
            return v.start > at
        return True

    def fingerprint(self, publications: Sequence[Publication]) -> str:
        """What a page token of this listing is bound to."""
        return content_hash([int(p) for p in publications], sorted(int(s) for s in self.states),
                            self.owner, self.query, self.newest_first, self.validity,
                            self.as_of.isoformat() if self.as_of else "")[:12]


EditGuard = Callable[[Nugget, Nugget], Sequence[str]]
_EDITED_FIELDS = ("title", "body", "anchors", "fact", "validity")


@dataclass(frozen=True)
class EditOutcome:
    """What :meth:`NuggetIndex.checked_edit` did: the version written (``saved``) or the
    one it would write, the guard's violations and the fields the edit changed."""

    nugget: Nugget
    saved: bool
    violations: tuple[str, ...] = ()
    changed: list[str] = dataclasses.field(default_factory=list)
    replayed: bool = False


class _NotWritten(Exception):
    """Raised inside a write plan to stop before writing (dry run, guard refusal)."""

    def __init__(self, version: Nugget) -> None:
        super().__init__("not written")
        self.version = version


def _expect(head: Nugget, expected_version_id: str) -> None:
    """ConflictError unless ``head`` is the version the caller saw (none given: any)."""
    if expected_version_id and expected_version_id != head.id:
        raise ConflictError(
            f"the nugget changed meanwhile: its current version is {head.id} (v{head.version},"
            f" {head.change_reason or 'no reason given'}); nothing was written",
            field="expected_version_id", current=head)


def _outcome(trace: dict[str, Any] | None) -> dict[str, Any] | None:
    """The INO outcome of a trace, without its rounds."""
    if not trace:
        return trace
    return {k: trace[k] for k in ("variant", "iterations", "passed", "seed") if k in trace}


def _newest_key(n: Nugget) -> tuple[datetime, str]:
    when = n.provenance.timestamp or n.created_at or n.validity.start
    return (when, n.id)


def _parse_newest(cursor: str) -> tuple[datetime, str]:
    when, _, nid = cursor.partition("|")
    try:
        return (datetime.fromisoformat(when), nid)
    except ValueError:
        raise ValidationError("not a page token of this listing", field="page_token") from None


def _listing_prefix(publications: Sequence[Publication], listing: Listing) -> str:
    return f"{_LISTING_TOKEN}:{listing.fingerprint(publications)}"


def _encode_token(raw: str) -> str:
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _listing_cursor(token: str, prefix: str) -> str:
    """Where a filtered listing's page token continues ("" for none); ValidationError
    (field ``page_token``) for a token of another listing."""
    if not token:
        return ""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
    except (ValueError, UnicodeDecodeError):
        raw = ""
    if not raw.startswith(prefix + ":") or len(raw) == len(prefix) + 1:
        raise ValidationError("not a page token of this listing (its filters or order "
                              "differ)", field="page_token")
    return raw[len(prefix) + 1:]


_LISTING_TOKEN = "c2"


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
class Publishing:
    """A correction that a write made retrievable: its lineage, how (``published``, or
    ``merged`` into a published nugget as evidence), the feedback's time and the write's."""

    tenant: str
    lineage: str
    outcome: str
    feedback_at: datetime | None
    at: datetime

    @property
    def lag_seconds(self) -> float | None:
        """Seconds from the feedback to the write (None when the feedback had no time)."""
        if self.feedback_at is None:
            return None
        return (self.at - self.feedback_at).total_seconds()


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
async def _writer_until(store: IndexStore, tenant: str, keys: frozenset[tuple[str, str, str]],
                        deadline: float | None) -> AsyncIterator[None]:
    """Hold ``store.writer(tenant, keys)``, waiting for it until ``deadline`` at most."""
    async with contextlib.AsyncExitStack() as stack:
        async with _until(deadline, "waiting for the writer lock"):
            await stack.enter_async_context(store.writer(tenant, keys))
        yield


class _MoreKeys(Exception):
    """A write session must name more governance keys than it did (nothing written)."""

    def __init__(self, keys: frozenset[tuple[str, str, str]]) -> None:
        super().__init__("more keys")
        self.keys = keys


_T = TypeVar("_T")

#: Attempts of one write while other writers' commits refuse it (WriteContentionError).
WRITE_ATTEMPTS = 12


async def _retrying(attempt: Callable[[], Awaitable[_T]], *, tenant: str, doing: str,
                     deadline: float | None = None) -> _T:
    """Run ``attempt`` until no other writer's commit refuses it: each refusal means
    nothing was written, so the attempt reads the heads again and decides again. A short
    random pause (growing) lets the other writer finish; the last refusal is raised after
    WRITE_ATTEMPTS, or when the next pause would pass the deadline."""
    for n in range(1, WRITE_ATTEMPTS + 1):
        try:
            return await attempt()
        except WriteContentionError:
            pause = random.uniform(0.01, 0.05) * n
            late = deadline is not None and time.monotonic() + pause >= deadline
            if n == WRITE_ATTEMPTS or late:
                log.warning("write refused by other writers' commits; giving up",
                            tenant=tenant, doing=doing, attempts=n)
                raise
            log.info("another writer committed first; reading again", tenant=tenant,
                     doing=doing, attempt=n)
            await asyncio.sleep(pause)
    raise AssertionError("unreachable")


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
