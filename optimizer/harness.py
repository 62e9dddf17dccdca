"""The production RAG agent as a test harness: retrieve (top-k 60), re-rank with a
calibrated threshold, generate with citations, and report the whole trace.

Probing overlays a candidate on a *frozen view* of the tenant index: the view is the
store read at a fixed ``as_of`` with BM25 statistics frozen when the view is made; the
candidate is scored by the store's own overlay scorer (exact BM25 as if indexed) and by
cosine with its embedding, then merged into the candidate lists. Nothing is written to
the live index, and each candidate lives only in its own probe call, so concurrent probes
of different candidates never see each other.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

import numpy as np

from nuggetflow.logging import get_logger
from nuggetflow.settings import Settings
from optimizer.accounting import Meter
from optimizer.local.lexicon import coverage
from optimizer.roles import GeneratorRole
from optimizer.types import Answer, ContextPassage, NuggetDraft
from query.embeddings import Embedder, Vector
from query.fusion import fuse
from query.model import ItemType, Nugget, Passage, View, embedding_text, utcnow
from query.store import GovernanceFilter, IndexStore, OverlayScorer, Scored
from query.text import query_terms

log = get_logger(__name__)

TOP_K = 60
RERANK_DEPTH = 10
DEFAULT_THRESHOLD = 0.45


@dataclass(frozen=True)
class Candidate:
    """A nugget under optimization, overlaid on the frozen view for a probe."""

    id: str
    draft: NuggetDraft
    vector: Vector
    anchor_vectors: Vector | None = None  # one row per anchor (multi-vector dense)

    def cosine(self, qvec: Vector, anchors: bool = True) -> float:
        """Dense similarity: the best of the statement's vector and (with ``anchors``)
        its anchors' vectors, as the stores score a nugget."""
        best = float(self.vector @ qvec)
        if anchors and self.anchor_vectors is not None and len(self.anchor_vectors):
            best = max(best, float((self.anchor_vectors @ qvec).max()))
        return best


@dataclass(frozen=True)
class RagTrace:
    """Everything the agent did for one query."""

    query: str
    retrieved: list[tuple[str, float]]  # (id, fused score), best first, top-k
    rerank: dict[str, float]  # re-ranking scores of the top RERANK_DEPTH
    reached: list[str]  # ids handed to the generator
    cited: list[str]
    answer: str
    titles: dict[str, str] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)


class RagHarness(Protocol):
    """Answers a query for a tenant, optionally with a candidate overlaid, with a trace."""

    async def run(self, tenant: str, query: str, candidate: Candidate | None,
                  meter: Meter) -> RagTrace:
        """Retrieve, re-rank, generate; report ids, scores, citations and the answer."""


def rerank_score(cosine: float, query: str, text: str) -> float:
    """The re-ranker: cosine similarity blended with query-term coverage."""
    return 0.75 * cosine + 0.25 * coverage(query, text)


class BuiltinHarness:
    """The built-in agent over a store: hybrid retrieval, calibrated re-ranking, generator.

    ``threshold`` is the re-ranking score an item needs to reach the generator (one value,
    or statement and anchor thresholds); ``None`` calibrates both per tenant on the
    tenant's corpus (see :meth:`calibrate`).
    """

    def __init__(self, store: IndexStore, embedder: Embedder, generator: GeneratorRole,
                 settings: Settings, *, as_of: datetime | None = None, top_n: int = 3,
                 threshold: float | tuple[float, float] | None = None,
                 anchor_vectors: bool = True) -> None:
        self.store = store
        self.embedder = embedder
        self.generator = generator
        self.settings = settings
        self.as_of = as_of or utcnow()
        self.top_n = top_n
        self._fixed: tuple[float, float] | None = (
            (threshold, threshold) if isinstance(threshold, float | int) else threshold)
        self.anchor_vectors = anchor_vectors
        self._thresholds: dict[str, tuple[float, float]] = {}
        self._scorer: OverlayScorer | None = None
        # The view is frozen, so an item's text vector never changes: embed it once.
        self._item_vectors: dict[str, Vector] = {}

    async def close(self) -> None:
        """Release the frozen view's scorer."""
        if self._scorer is not None:
            await self._scorer.close()
            self._scorer = None

    async def thresholds(self, tenant: str) -> tuple[float, float]:
        """(statement threshold, anchor threshold) for a tenant (see :meth:`calibrate`)."""
        if self._fixed is not None:
            return self._fixed
        if tenant not in self._thresholds:
            self._thresholds[tenant] = await self.calibrate(tenant)
        return self._thresholds[tenant]

    async def calibrate(self, tenant: str, sample: int = 200,
                        seed: int = 0) -> tuple[float, float]:
        """Pick thresholds so that unrelated pairs pass about 1% of the time: the 99th
        percentile of the re-ranking scores of (title, passage of another page) pairs
        for statements, and of (title, title of another page) pairs for anchors (an
        anchor is query-like, and queries resemble each other more than passages).

        Fewer than 20 passages: the default threshold (0.45) for both.
        """
        passages = await self.store.sample_passages(tenant, sample, seed)
        if len(passages) < 20:
            log.info("rerank threshold: default (small corpus)", tenant=tenant,
                     passages=len(passages), threshold=DEFAULT_THRESHOLD)
            return DEFAULT_THRESHOLD, DEFAULT_THRESHOLD
        titles = [p.title or p.text[:60] for p in passages]
        qv = self.embedder.embed_queries(titles)
        pv = self.embedder.embed([f"{p.title}\n{p.text}" for p in passages])
        n = len(passages)
        neg, pos, neg_anchor = [], [], []
        for i in range(n):
            j = (i + n // 2) % n
            if passages[j].doc_id != passages[i].doc_id:
                neg.append(rerank_score(float(qv[i] @ pv[j]), titles[i],
                                        f"{passages[j].title} {passages[j].text}"))
                neg_anchor.append(rerank_score(float(qv[i] @ qv[j]), titles[i], titles[j]))
            pos.append(rerank_score(float(qv[i] @ pv[i]), titles[i],
                                    f"{passages[i].title} {passages[i].text}"))
        neg.sort()
        neg_anchor.sort()
        tau = neg[min(len(neg) - 1, int(0.99 * len(neg)))]
        tau_anchor = max(tau, neg_anchor[min(len(neg_anchor) - 1, int(0.99 * len(neg_anchor)))])
        recall = sum(p >= tau for p in pos) / len(pos)
        log.info("rerank threshold calibrated", tenant=tenant, threshold=round(tau, 4),
                 anchor_threshold=round(tau_anchor, 4),
                 positive_pass_rate=round(recall, 3), negatives=len(neg),
                 negative_median=round(statistics.median(neg), 4))
        return tau, tau_anchor

    async def run(self, tenant: str, query: str, candidate: Candidate | None,
                  meter: Meter) -> RagTrace:
        """One pass of the agent (see the module docstring)."""
        flt = GovernanceFilter(tenant=tenant, as_of=self.as_of, view=View.ACTIVE)
        terms = query_terms(query)
        qvec = self.embedder.embed_queries([query])[0]
        lexical = await self.store.lexical(terms, flt, TOP_K)
        dense = await self.store.dense(qvec, flt, TOP_K)
        texts: dict[str, str] = {}  # what the re-ranker reads
        bodies: dict[str, str] = {}  # what the generator reads (a nugget's anchors are not)
        titles: dict[str, str] = {}
        vectors: dict[str, Vector] = {}
        if candidate is not None:
            if self._scorer is None:
                self._scorer = await self.store.overlay_scorer()
            d = candidate.draft
            ls = await self._scorer.score(terms, d.title, d.body, "\n".join(d.anchors))
            ds = candidate.cosine(qvec, self.anchor_vectors)
            lexical = _insert(lexical, Scored(candidate.id, ItemType.NUGGET, ls, 0.5), ls > 0)
            dense = _insert(dense, Scored(candidate.id, ItemType.NUGGET, ds, 0.5), True)
            titles[candidate.id] = d.title
            texts[candidate.id] = f"{d.body}\n" + "\n".join(d.anchors)
            bodies[candidate.id] = d.body
            vectors[candidate.id] = candidate.vector
        fused = fuse(lexical, dense, self.settings)[:TOP_K]
        top = fused[:RERANK_DEPTH]
        records = await self.store.fetch(tenant, [f.id for f in top if f.id not in texts])
        for f in top:
            rec = records.get(f.id)
            if isinstance(rec, Nugget):
                titles[f.id], texts[f.id] = rec.title, f"{rec.body}\n" + "\n".join(rec.anchors)
                bodies[f.id] = rec.body
            elif isinstance(rec, Passage):
                titles[f.id], texts[f.id] = rec.title, rec.text
                bodies[f.id] = rec.text
        # The re-ranker judges the statement: a nugget's cosine is its title + body
        # vector's (its anchors only helped it into the candidates), a passage's its own.
        vectors.update({f.id: self._item_vectors[f.id] for f in top
                        if f.id in self._item_vectors})
        missing = [f.id for f in top if f.id in texts and f.id not in vectors
                   and (f.raw_dense is None or f.type is ItemType.NUGGET)]
        if missing:
            for fid, vec in zip(missing, self.embedder.embed(
                    [f"{titles[i]}\n{bodies[i]}" for i in missing]), strict=True):
                vectors[fid] = self._item_vectors[fid] = vec
        tau, tau_anchor = await self.thresholds(tenant)
        rerank: dict[str, float] = {}
        for f in top:
            if f.id not in texts:
                continue
            text = f"{titles[f.id]} {texts[f.id]}"
            best = None  # a nugget's best cosine over statement and anchors
            if candidate is not None and f.id == candidate.id:
                cos = candidate.cosine(qvec, anchors=False)
                best = candidate.cosine(qvec, self.anchor_vectors)
            elif f.type is ItemType.NUGGET or f.raw_dense is None:
                cos = float(vectors[f.id] @ qvec)
                best = f.raw_dense if f.type is ItemType.NUGGET else None
            else:
                cos = f.raw_dense
            score = rerank_score(cos, query, text)
            if best is not None and best > cos:  # matched through an anchor: its threshold
                score = max(score, rerank_score(best, query, text) - (tau_anchor - tau))
            rerank[f.id] = score
        reached = [i for i in sorted(rerank, key=lambda i: -rerank[i]) if rerank[i] >= tau]
        reached = reached[: self.top_n]
        kinds = {f.id: f.type for f in top}
        answer = self.generator.answer(query, [
            ContextPassage(i, titles[i], bodies[i], kinds[i] is ItemType.NUGGET, rerank[i])
            for i in reached], meter) if reached else Answer("I could not find this.", ())
        return RagTrace(query, [(f.id, f.fused) for f in fused], rerank, reached,
                        list(answer.cited), answer.text, titles, texts)

def _insert(items: list[Scored], cand: Scored, keep: bool) -> list[Scored]:
    if not keep:
        return items
    merged = [s for s in items if s.id != cand.id] + [cand]
    merged.sort(key=lambda s: -s.score)
    return merged[:TOP_K]


def make_candidate(embedder: Embedder, candidate_id: str, draft: NuggetDraft) -> Candidate:
    """A candidate with its statement vector and one vector per anchor."""
    anchors = np.asarray(embedder.embed(list(draft.anchors)), dtype=np.float32) \
        if draft.anchors else None
    return Candidate(candidate_id, draft, embed_draft(embedder, draft), anchors)


def embed_draft(embedder: Embedder, draft: NuggetDraft) -> Vector:
    """The vector the index would store for this draft."""
    text = embedding_text(draft.title, draft.body, draft.anchors)
    return np.asarray(embedder.embed([text])[0], dtype=np.float32)
