"""Governed hybrid retrieval: filter (tenant, time, state, publication) THEN rank.

The store applies the governance filter inside both the BM25 and the k-NN query; this
module embeds the query, fuses the two candidate lists (min-max or RRF), and builds hits
with their component scores, flags and a ready generator context block.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from nuggetflow.errors import BackendUnavailableError, NotFoundError, ValidationError
from nuggetflow.logging import get_logger
from nuggetflow.settings import Settings
from query.embeddings import CachedVectors, Embedder, QueryEmbeddings, Vector
from query.fusion import Fused, fuse
from query.gate import Gate
from query.model import (
    ItemType,
    Kind,
    Nugget,
    Passage,
    State,
    View,
    embedding_text,
    ensure_utc,
    utcnow,
)
from query.rerank import RerankItem
from query.store import GovernanceFilter, IndexStore, OverlayScorer, Scored
from query.text import query_terms

MAX_K = 1000
MAX_QUERY_CHARS = 2000  # default of NUGGETFLOW_GRPC_MAX_QUERY_CHARS

log = get_logger(__name__)


@dataclass(frozen=True)
class RetrieveRequest:
    """A governed retrieval request (mirrors nuggetflow.v1.RetrieveRequest)."""

    tenant: str
    query: str
    as_of: datetime | None = None
    view: View = View.ACTIVE
    k: int = 10
    scopes: tuple[str, ...] = ()
    kinds: tuple[Kind, ...] = ()
    include_documents: bool = True
    fusion: str | None = None  # None: the settings' default
    gate: bool | None = None  # None: the settings' default (on unless NUGGETFLOW_GATE=off)

    def validate(self, max_query_chars: int = MAX_QUERY_CHARS) -> None:
        """Raise ValidationError naming the first bad field."""
        if not self.tenant.strip():
            raise ValidationError("tenant is empty", field="tenant")
        if not self.query.strip():
            raise ValidationError("query is empty", field="query")
        if len(self.query) > max_query_chars:
            raise ValidationError(f"longer than {max_query_chars} characters",
                                  field="query")
        if not 0 < self.k <= MAX_K:
            raise ValidationError(f"k must be in 1..{MAX_K}, got {self.k}", field="k")
        if self.as_of is not None:
            ensure_utc(self.as_of, "as_of")
        if self.fusion not in (None, "minmax", "rrf"):
            raise ValidationError(f"fusion must be minmax or rrf, got {self.fusion!r}",
                                  field="fusion")


@dataclass(frozen=True)
class Hit:
    """One ranked item: a nugget or a corpus passage, with component scores and flags."""

    type: ItemType
    id: str
    title: str
    text: str
    lexical: float
    dense: float
    metadata: float
    fused: float
    contested: bool = False
    inferred_validity: bool = False
    record: Nugget | Passage | None = None
    relevance: float = 0.0  # the gate's calibrated probability (0: not gated)


@dataclass
class RetrieveResult:
    """Ranked hits plus what governance suppressed and a generator context block.

    With the gate on, ``hits`` are the candidates whose calibrated probability cleared
    the tenant's threshold, most probable first, and ``relevance`` holds the probability
    of every re-ranked candidate (passed or not); ``candidates`` is the fused list before
    the gate, (id, fused score) best first, for traces.
    """

    request_id: str
    hits: list[Hit]
    suppressed: int
    context_block: str
    timings_ms: dict[str, float] = field(default_factory=dict)
    query_vector_cached: bool | None = None  # None: lexical only
    relevance: dict[str, float] = field(default_factory=dict)
    candidates: list[tuple[str, float]] = field(default_factory=list)
    gated: bool = False
    reranked: list[RerankItem] = field(default_factory=list)  # what the gate read
    #: the stored nuggets among the top NUGGETFLOW_RERANK_DEPTH fused candidates (whether
    #: or not the gate passed them): their topic was queried (usage counts)
    considered: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Overlay:
    """A candidate nugget overlaid on a frozen view for one probe: scored as if it were
    indexed (the store's overlay scorer for BM25, its own vectors for the dense side),
    never written, and seen only by the call that carries it."""

    id: str
    title: str
    body: str
    anchors: tuple[str, ...]
    vector: Vector
    anchor_vectors: Vector | None = None  # one row per anchor

    def cosine(self, qvec: Vector, anchors: bool = True) -> float:
        """The dense score the stores would give it: the best of its indexed vector and
        (with ``anchors``) its anchors' vectors."""
        best = float(self.vector @ qvec)
        if anchors and self.anchor_vectors is not None and len(self.anchor_vectors):
            best = max(best, float((self.anchor_vectors @ qvec).max()))
        return best


class FrozenView:
    """A tenant index read at a fixed instant, with the BM25 statistics an overlay is
    scored against frozen when first needed. Close it to release the scorers.

    A view overlays one candidate at a time (the built-in harness: one scorer), or
    several at once (a probe session: one scorer per candidate, by ``key``, as a store's
    scorer may hold one text at a time)."""

    def __init__(self, store: IndexStore, as_of: datetime | None = None) -> None:
        self.store = store
        self.as_of = as_of or utcnow()
        self._scorers: dict[str, OverlayScorer] = {}

    async def scorer(self, key: str = "") -> OverlayScorer:
        """The overlay scorer of ``key`` (made on first use)."""
        scorer = self._scorers.get(key)
        if scorer is None:
            scorer = self._scorers[key] = await self.store.overlay_scorer()
        return scorer

    async def close(self) -> None:
        """Release the scorers."""
        scorers, self._scorers = list(self._scorers.values()), {}
        for scorer in scorers:
            await scorer.close()


def make_overlay(embedder: Embedder, item_id: str, title: str, body: str,
                 anchors: Sequence[str]) -> Overlay:
    """A candidate as it would be indexed: the vector of its embedding text and one
    vector per anchor (the built-in harness and probe sessions both make theirs here)."""
    vector = np.asarray(embedder.embed([embedding_text(title, body, anchors)])[0],
                        dtype=np.float32)
    anchor_vectors = (np.asarray(embedder.embed(list(anchors)), dtype=np.float32)
                      if anchors else None)
    return Overlay(item_id, title, body, tuple(anchors), vector, anchor_vectors)


MINED_PAGES = 80  # pages of a tenant's corpus whose titles train its gate
MINED_TEXT_CHARS = 400  # a mined passage is embedded from its first characters only
MINED_TITLE_WORDS = 24  # a mined query is at most this long (titles can be anything)
MINED_TITLE_CHARS = 300


class Retriever:
    """Governed hybrid retrieval over an :class:`~query.store.IndexStore`: candidates
    (BM25 + dense with anchors, optionally a probe's overlay), fusion, then the gate
    (:mod:`query.gate`). The query service, the INO probe harness and the evaluation all
    retrieve through this class, so a probe sees what a user would."""

    def __init__(self, store: IndexStore, embedder: Embedder, settings: Settings,
                 gate: Gate | None = None) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings
        self.queries = QueryEmbeddings(embedder, settings.query_embedding_cache)
        self.gate = gate or Gate(settings)
        # Vectors of texts no store keeps: a probe overlay's statement, a nugget the store
        # has no vector for, mined passages' openings; keyed by text.
        self._vectors = CachedVectors(embedder, 50_000)

    async def retrieve(self, req: RetrieveRequest, *, lexical_only: bool = False,
                       count_suppressed: bool = True, overlay: Overlay | None = None,
                       view: FrozenView | None = None,
                       gate: bool | None = None,
                       overlays: Sequence[Overlay] = ()) -> RetrieveResult:
        """Run a governed hybrid query; ValidationError/NotFoundError on bad input.

        ``overlay`` (with the ``view`` it is scored against) adds a probe's candidate,
        ``overlays`` several (a probe session's), each scored as if it alone were indexed;
        ``gate`` overrides the settings (None: on unless NUGGETFLOW_GATE=off; a
        lexical-only query is never gated: the gate needs cosines).
        """
        added = {o.id: o for o in (*overlays, *((overlay,) if overlay is not None else ()))}
        req.validate(self.settings.grpc_max_query_chars)
        # A probe's frozen view of a tenant with nothing indexed yet is a valid, empty
        # view (its first correction); a user's query for an unknown tenant is NOT_FOUND.
        if view is None and not await self.store.has_tenant(req.tenant):
            raise NotFoundError(f"unknown tenant {req.tenant!r}", field="tenant")
        timings: dict[str, float] = {}
        as_of = req.as_of or (view.as_of if view is not None else None) or utcnow()
        flt = GovernanceFilter(tenant=req.tenant, as_of=as_of, view=req.view,
                               scopes=req.scopes, kinds=req.kinds,
                               include_documents=req.include_documents)
        terms = query_terms(req.query)
        depth = max(self.settings.candidate_k, req.k)
        t0 = time.perf_counter()
        # A cached query vector is used at once; otherwise the query is embedded on the
        # model thread while BM25 runs here.
        cached = None if lexical_only else self.queries.cached(req.query)
        embedding = None if lexical_only or cached is not None else asyncio.ensure_future(
            self.queries.embed(req.query))
        try:
            lexical = await self.store.lexical(terms, flt, depth)
        except BaseException:
            if embedding is not None:
                embedding.cancel()
            raise
        timings["lexical"] = (time.perf_counter() - t0) * 1000
        dense: list[Scored] = []
        vector: Vector | None = None
        if not lexical_only:
            t1 = time.perf_counter()
            vector = await embedding if embedding is not None else cached
            assert vector is not None
            timings["embed"] = (time.perf_counter() - t1) * 1000  # waited beyond BM25
            t2 = time.perf_counter()
            dense = await self.store.dense(vector, flt, depth)
            timings["dense"] = (time.perf_counter() - t2) * 1000
        if added and vector is not None:
            frozen = view or FrozenView(self.store, as_of)
            for ov in added.values():
                scorer = await frozen.scorer("" if len(added) == 1 else ov.id)
                ls = await scorer.score(terms, ov.title, ov.body, "\n".join(ov.anchors))
                lexical = _insert(lexical, Scored(ov.id, ItemType.NUGGET, ls, 0.5), depth,
                                  ls > 0)
                dense = _insert(dense, Scored(ov.id, ItemType.NUGGET, ov.cosine(vector), 0.5),
                                depth, True)
        fused = fuse(lexical, dense, self.settings, req.fusion)
        use_gate = gate if gate is not None else (
            req.gate if req.gate is not None else self.gate.enabled)
        relevance: dict[str, float] = {}
        items: list[RerankItem] = []
        if use_gate and vector is not None:
            t3 = time.perf_counter()
            top = fused[: self.settings.rerank_depth]
            records = await self._records(req.tenant, [f.id for f in top
                                                       if f.id not in added])
            floor = min((d.score for d in dense), default=0.0)
            stored = await self.store.statement_cosines(
                req.tenant, [f.id for f in top if isinstance(records.get(f.id), Nugget)],
                vector)
            items = self._rerank_items(top, records, vector, added, floor, stored)
            tenant_gate = await self.gate.for_tenant(req.tenant, self._mined_candidates,
                                                     self._page_titles, self._anchor_shift)
            probs = await tenant_gate.probabilities(req.query, items)
            relevance = {it.id: float(p) for it, p in zip(items, probs, strict=True)}
            by_id = {f.id: f for f in top}
            passed = [i for i in sorted(relevance, key=lambda i: -relevance[i])
                      if relevance[i] >= tenant_gate.threshold]
            chosen = [by_id[i] for i in _per_document(
                passed, records, self.settings.passages_per_document)][: req.k]
            timings["gate"] = (time.perf_counter() - t3) * 1000
        else:
            chosen = fused[: req.k]
            records = {}
        wanted = [f.id for f in chosen if f.id not in records and f.id not in added]
        if wanted:
            records = {**records, **await self._records(req.tenant, wanted)}
        cap = self.settings.max_hit_chars
        hits = [dataclasses.replace(
                    _overlay_hit(f, added[f.id], cap) if f.id in added
                    else _hit(f, records[f.id], cap), relevance=relevance.get(f.id, 0.0))
                for f in chosen if f.id in records or f.id in added]
        suppressed = await self.store.suppressed(terms, flt) if count_suppressed else 0
        timings["total"] = (time.perf_counter() - t0) * 1000
        return RetrieveResult(uuid.uuid4().hex, hits, suppressed, context_block(hits), timings,
                              None if lexical_only else cached is not None, relevance,
                              [(f.id, f.fused) for f in fused], use_gate and vector is not None,
                              items, [f.id for f in fused[: self.settings.rerank_depth]
                                      if f.type is ItemType.NUGGET and f.id not in added])

    async def _records(self, tenant: str, ids: Sequence[str]) -> dict[str, Nugget | Passage]:
        """The records of the candidates a search found; BackendUnavailableError when one
        of them cannot be read (a search and a read that disagree, e.g. on a cluster whose
        shards are still recovering, or a write being undone: an answer without them
        would be a partial one, and a retry gets the whole)."""
        records = await self.store.fetch(tenant, ids)
        missing = [i for i in ids if i not in records]
        if missing:
            log.warning("records of search candidates not found", tenant=tenant,
                        candidates=len(ids), missing=len(missing), first=missing[0])
            raise BackendUnavailableError(
                f"the index found {len(ids)} candidates but {len(missing)} of their records "
                "could not be read; retry")
        return records

    def _rerank_items(self, top: Sequence[Fused], records: dict[str, Nugget | Passage],
                      qvec: Vector, overlays: dict[str, Overlay],
                      floor: float, stored: dict[str, float]) -> list[RerankItem]:
        """What the gate reads per candidate: texts, BM25, the statement's cosine (a
        nugget's title + body, without anchors: ``stored``, the store's cosine with the
        vector it keeps; a probe's overlay and a nugget the store has no vector for are
        embedded, once per text) and a nugget's best anchor cosine. A passage that was no
        dense candidate gets ``floor``, the lowest dense candidate's cosine (its own is at
        most that), so no passage is embedded on the query path."""
        statements = {f.id: f"{rec.title}\n{rec.body}" for f in top
                      if isinstance(rec := records.get(f.id), Nugget) and f.id not in stored}
        for oid, ov in overlays.items():
            statements[oid] = f"{ov.title}\n{ov.body}"
        cosines = dict(stored)
        cosines.update({i: float(v @ qvec) for i, v in zip(
            statements, self._vectors(list(statements.values())), strict=True)})
        items: list[RerankItem] = []
        for f in top:
            overlay = overlays.get(f.id)
            if overlay is not None:
                items.append(RerankItem(f.id, ItemType.NUGGET, overlay.title, overlay.body,
                                        overlay.anchors, f.raw_lexical, cosines[f.id],
                                        overlay.cosine(qvec), f.id))
                continue
            rec = records.get(f.id)
            if isinstance(rec, Nugget):
                items.append(RerankItem(f.id, ItemType.NUGGET, rec.title, rec.body,
                                        rec.anchors, f.raw_lexical,
                                        cosines[f.id], f.raw_dense or 0.0,
                                        rec.lineage_id or f.id))
            elif isinstance(rec, Passage):
                cos = f.raw_dense if f.raw_dense is not None else min(floor, 1.0)
                items.append(RerankItem(f.id, ItemType.DOCUMENT, rec.title, rec.text, (),
                                        f.raw_lexical, cos, 0.0, rec.doc_id))
        return items

    async def _page_titles(self, tenant: str) -> list[tuple[str, str]]:
        """(document id, title) of up to MINED_PAGES pages of the tenant, seeded."""
        passages = await self.store.sample_passages(tenant, 5 * MINED_PAGES, seed=0)
        pages: dict[str, str] = {}
        for p in passages:
            title = " ".join(p.title.split()[:MINED_TITLE_WORDS])[:MINED_TITLE_CHARS]
            if title and len(pages) < MINED_PAGES:
                pages.setdefault(p.doc_id, title)
        return list(pages.items())

    async def _mined_candidates(self, tenant: str, query: str) -> list[RerankItem]:
        """The ungated candidates of a mined query (a page title), documents only, with
        cosine and coverage measured on the passage text alone (no title: the query must
        not find itself)."""
        res = await self.retrieve(RetrieveRequest(tenant, query, k=self.settings.rerank_depth),
                                  count_suppressed=False, gate=False)
        passages = [h.record for h in res.hits if isinstance(h.record, Passage)]
        qvec = await self.queries.embed(query)
        vectors = self._vectors([p.text[:MINED_TEXT_CHARS] for p in passages])
        lexical = {h.id: h.lexical for h in res.hits}
        return [RerankItem(p.id, ItemType.DOCUMENT, "", p.text, (), lexical.get(p.id, 0.0),
                           float(v @ qvec), 0.0, p.doc_id)
                for p, v in zip(passages, vectors, strict=True)]

    async def _anchor_shift(self, tenant: str) -> float:
        """How much more a query-like text resembles an unrelated query than an unrelated
        passage does: the 99th percentile of title-title cosines of different pages less
        that of title-passage cosines (>= 0), measured on a sample of the corpus."""
        passages = await self.store.sample_passages(tenant, 200, seed=1)
        if len(passages) < 20:
            return 0.0
        titles = [p.title or p.text[:60] for p in passages]
        tv = self.embedder.embed(titles)
        pv = self.embedder.embed([p.text[:MINED_TEXT_CHARS] for p in passages])
        n = len(passages)
        tt, tp = [], []
        for i in range(n):
            j = (i + n // 2) % n
            if passages[j].doc_id != passages[i].doc_id:
                tt.append(float(tv[i] @ tv[j]))
                tp.append(float(tv[i] @ pv[j]))
        if not tt:
            return 0.0
        return max(0.0, float(np.percentile(tt, 99) - np.percentile(tp, 99)))


def _insert(items: list[Scored], cand: Scored, depth: int, keep: bool) -> list[Scored]:
    """The list with the overlay candidate placed by score (replacing a stored copy)."""
    if not keep:
        return items
    merged = [s for s in items if s.id != cand.id] + [cand]
    merged.sort(key=lambda s: -s.score)
    return merged[:depth]


def _overlay_hit(f: Fused, overlay: Overlay, max_chars: int) -> Hit:
    """The hit of a probe's overlay candidate (it has no stored record)."""
    return Hit(ItemType.NUGGET, f.id, cut_text(overlay.title, max_chars),
               cut_text(overlay.body, max_chars), f.lexical, f.dense, f.metadata, f.fused)


def cut_text(text: str, max_chars: int) -> str:
    """The text, cut to at most ``max_chars`` characters ending in "…" when longer."""
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


MAX_HIT_ANCHORS = 20


def hit_record(record: Nugget, max_chars: int) -> Nugget:
    """The nugget record a hit carries: its text fields cut to ``max_chars``, at most
    MAX_HIT_ANCHORS anchors and no optimization trace (GetNugget returns the whole
    record), so one large record cannot make a Retrieve response too large."""
    prov = record.provenance
    return dataclasses.replace(
        record, title=cut_text(record.title, max_chars), body=cut_text(record.body, max_chars),
        anchors=tuple(cut_text(a, max_chars) for a in record.anchors[:MAX_HIT_ANCHORS]),
        provenance=dataclasses.replace(
            prov, trigger_query=cut_text(prov.trigger_query, max_chars),
            corrected_answer=cut_text(prov.corrected_answer, max_chars),
            feedback_text=cut_text(prov.feedback_text, max_chars),
            cited_documents=prov.cited_documents[:MAX_HIT_ANCHORS]),
        optimization=None)


def _hit(f: Fused, record: Nugget | Passage, max_chars: int) -> Hit:
    """A hit; its title and text are cut to ``max_chars`` (NUGGETFLOW_MAX_HIT_CHARS), so
    no stored item, however large, makes a response too large to send."""
    if isinstance(record, Nugget):
        return Hit(ItemType.NUGGET, f.id, cut_text(record.title, max_chars),
                   cut_text(record.body, max_chars), f.lexical, f.dense, f.metadata, f.fused,
                   contested=record.state is State.CONTESTED,
                   inferred_validity=record.validity.inferred,
                   record=hit_record(record, max_chars))
    return Hit(ItemType.DOCUMENT, f.id, cut_text(record.title, max_chars),
               cut_text(record.text, max_chars), f.lexical, f.dense, f.metadata, f.fused,
               record=record)


def context_block(hits: list[Hit]) -> str:
    """Generator context: established facts, disputed claims (flagged), then passages.

    Contested nuggets never appear as facts: they go in a separate "Disputed" section.
    """
    facts = [h for h in hits if h.type is ItemType.NUGGET and not h.contested]
    disputed = [h for h in hits if h.type is ItemType.NUGGET and h.contested]
    passages = [h for h in hits if h.type is ItemType.DOCUMENT]
    parts: list[str] = []
    if facts:
        parts.append("Established facts:")
        parts += [f"- [{h.id}] {h.title}: {h.text}" for h in facts]
    if disputed:
        parts.append("Disputed (conflicting reports; do not state as fact):")
        parts += [f"- [{h.id}] {h.title}: {h.text}" for h in disputed]
    if passages:
        parts.append("Passages:")
        parts += [f"- [{h.id}] {h.title}: {h.text}" for h in passages]
    return "\n".join(parts)


def _per_document(ranked: Sequence[str], records: dict[str, Nugget | Passage],
                  limit: int) -> list[str]:
    """``ranked`` with at most ``limit`` passages of one corpus document (0: all): three
    passages of one manual page would otherwise fill a three-item context on their shared
    likeness to the query, and push out a nugget or another page that passed the gate.
    Nuggets and probe overlays are their own documents."""
    if limit <= 0:
        return list(ranked)
    seen: dict[str, int] = {}
    out = []
    for i in ranked:
        rec = records.get(i)
        if isinstance(rec, Passage):
            seen[rec.doc_id] = seen.get(rec.doc_id, 0) + 1
            if seen[rec.doc_id] > limit:
                continue
        out.append(i)
    return out
