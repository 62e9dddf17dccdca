"""The governed nugget index: submit, review, edit, revert, ingest, retrieve.

:class:`NuggetIndex` ties a store, an embedder and the governance rules together. All
state changes go through it, so every change is a new version and governance runs
whenever a nugget becomes (or stays) published.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from datetime import datetime

import numpy as np

from nuggetflow.errors import InvalidTransitionError, NotFoundError, ValidationError
from nuggetflow.logging import get_logger
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
from query.retrieval import Retriever
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
        return (await self.store.history(tenant, item_id))[-1]

    async def review(self, tenant: str, item_id: str, action: str, *, reviewer: str = "",
                     reason: str = "", target_version_id: str = "") -> Nugget:
        """Apply a review action; returns the new head. Governance runs on approval."""
        if action not in REVIEW_ACTIONS:
            raise InvalidTransitionError(f"unknown action {action!r} "
                                         f"(one of {', '.join(REVIEW_ACTIONS)})", field="action")
        async with self.store.writer():
            return await self._review(tenant, item_id, action, reviewer, reason,
                                      target_version_id)

    async def _review(self, tenant: str, item_id: str, action: str, reviewer: str,
                      reason: str, target_version_id: str) -> Nugget:
        history = await self.store.history(tenant, item_id)
        head = history[-1]
        now = self.clock()
        note = f"{action} by {reviewer or 'unknown'}" + (f": {reason}" if reason else "")
        if action == "revert":
            target = next((v for v in history if v.id == target_version_id), None)
            if target is None:
                raise ValidationError(f"{target_version_id!r} is not a version of this nugget",
                                      field="target_version_id")
            restored = {f: getattr(target, f) for f in (*_CONTENT_FIELDS, "state", "rank",
                                                         "publication", "evidence")}
            new = next_version(head, f"revert to v{target.version} ({note})", now, **restored)
            return await self._commit(new, head, now)
        new_pub = transition(head.publication, action)
        new = next_version(head, note, now, publication=new_pub)
        return await self._commit(new, head, now)

    async def approve(self, tenant: str, item_id: str, reviewer: str = "auto") -> Nugget:
        """Shorthand for the approve review (auto-publish policy uses it)."""
        return await self.review(tenant, item_id, "approve", reviewer=reviewer)

    async def edit(self, tenant: str, item_id: str, reason: str, **changes: object) -> Nugget:
        """A new version with changed content fields (title, body, anchors, fact, ...)."""
        bad = set(changes) - set(_CONTENT_FIELDS)
        if bad:
            raise ValidationError(f"cannot edit {', '.join(sorted(bad))}", field=sorted(bad)[0])
        async with self.store.writer():
            head = await self.head(tenant, item_id)
            now = self.clock()
            new = plain_nugget(next_version(head, f"edit: {reason}", now, **changes))
            validate_nugget(new)
            return await self._commit(new, head, now)

    async def _commit(self, new: Nugget, parent: Nugget, now: datetime) -> Nugget:
        """Write ``new`` (a child of ``parent``) and whatever governance decides, atomically;
        return the new head. The caller holds ``store.writer()``."""
        others: list[Nugget] = []
        if new.publication is Publication.PUBLISHED and new.state is not State.DEPRECATED:
            others = [h for h in await self.store.heads_by_key(new.tenant, new.key)
                      if (h.lineage_id or h.id) != (new.lineage_id or new.id)]
            decision = resolve_publication(new, others, self.schema, now)
        else:
            decision = Decision("updated", [new])
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
        await self.store.write_nuggets(decision.writes, vectors, anchor_vectors)
        lineage = new.lineage_id or new.id
        head = decision.latest(lineage) or new
        log.info("nugget committed", tenant=new.tenant, lineage=lineage, outcome=decision.outcome,
                 writes=len(decision.writes), publication=head.publication.name,
                 state=head.state.name)
        return head

    async def ingest_passages(self, passages: Sequence[Passage]) -> int:
        """Embed and store corpus passages; returns how many were new."""
        if not passages:
            return 0
        vectors = self.embedder.embed([f"{p.title}\n{p.text}" for p in passages])
        return await self.store.add_passages(passages, vectors)
