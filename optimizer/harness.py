"""The production RAG agent as a test harness: retrieve, gate, generate with citations,
and report the whole trace.

Retrieval and the gate are the query service's own (:class:`query.retrieval.Retriever`),
so a probe sees exactly what a user's Retrieve would. Probing overlays a candidate on a
*frozen view* of the tenant index (:class:`query.retrieval.FrozenView`): the store read at
a fixed ``as_of`` with BM25 statistics frozen when the view is first scored against; the
candidate is scored by the store's own overlay scorer (exact BM25 as if indexed) and by
cosine with its vectors. Nothing is written to the live index, and each candidate lives
only in its own probe call, so concurrent probes of different candidates never see each
other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

import numpy as np

from nuggetflow.logging import get_logger
from nuggetflow.settings import Settings
from optimizer.accounting import Meter
from optimizer.roles import GeneratorRole
from optimizer.types import Answer, ContextPassage, NuggetDraft
from query.embeddings import Embedder, Vector
from query.gate import Gate
from query.model import ItemType, embedding_text
from query.retrieval import FrozenView, Overlay, Retriever, RetrieveRequest, make_overlay
from query.store import IndexStore

log = get_logger(__name__)

TOP_K = 60


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
        return self.overlay(anchors).cosine(qvec)

    def overlay(self, anchors: bool = True) -> Overlay:
        """The candidate as the retriever overlays it (without anchor vectors when
        ``anchors`` is False)."""
        d = self.draft
        return Overlay(self.id, d.title, d.body, tuple(d.anchors), self.vector,
                       self.anchor_vectors if anchors else None)


@dataclass(frozen=True)
class RagTrace:
    """Everything the agent did for one query."""

    query: str
    retrieved: list[tuple[str, float]]  # (id, fused score), best first, top-k
    rerank: dict[str, float]  # gate probabilities of the re-ranked candidates
    reached: list[str]  # ids handed to the generator
    cited: list[str]
    answer: str
    titles: dict[str, str] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)
    note: str = ""  # what the harness could not observe, and how it counted it


class RagHarness(Protocol):
    """Answers a query for a tenant, optionally with a candidate overlaid, with a trace."""

    async def run(self, tenant: str, query: str, candidate: Candidate | None,
                  meter: Meter) -> RagTrace:
        """Retrieve, re-rank, generate; report ids, scores, citations and the answer."""


class BuiltinHarness:
    """The built-in agent over a store: the service's retriever and gate, then the
    generator on the ``top_n`` items that passed.

    ``gate``: share one (its per-tenant fits) between harnesses; ``threshold``: the
    earlier cosine rule with fixed thresholds instead (one value, or statement and anchor
    thresholds), uncalibrated. ``anchor_vectors=False`` overlays candidates without
    their anchor vectors (an evaluation variant).
    """

    def __init__(self, store: IndexStore, embedder: Embedder, generator: GeneratorRole,
                 settings: Settings, *, as_of: datetime | None = None, top_n: int = 3,
                 threshold: float | tuple[float, float] | None = None,
                 anchor_vectors: bool = True, gate: Gate | None = None) -> None:
        self.store = store
        self.embedder = embedder
        self.generator = generator
        self.settings = settings
        self.view = FrozenView(store, as_of)
        self.top_n = top_n
        if threshold is not None:
            fixed = (threshold, threshold) if isinstance(threshold, float | int) else threshold
            gate = Gate(settings, kind="cosine", fixed=(float(fixed[0]), float(fixed[1])))
        self.gate = gate or Gate(settings)
        self.retriever = Retriever(store, embedder, settings, gate=self.gate)
        self.anchor_vectors = anchor_vectors

    @property
    def as_of(self) -> datetime:
        """The instant the view is frozen at."""
        return self.view.as_of

    async def close(self) -> None:
        """Release the frozen view's scorer."""
        await self.view.close()

    async def run(self, tenant: str, query: str, candidate: Candidate | None,
                  meter: Meter) -> RagTrace:
        """One pass of the agent (see the module docstring). A blank query (a paraphrase
        of a query without words can be one) retrieves nothing."""
        if not query.strip():
            return RagTrace(query, [], {}, [], [], "I could not find this.")
        overlay = candidate.overlay(self.anchor_vectors) if candidate is not None else None
        res = await self.retriever.retrieve(
            RetrieveRequest(tenant, query, as_of=self.view.as_of, k=self.top_n),
            overlay=overlay, view=self.view, count_suppressed=False)
        titles = {it.id: it.title for it in res.reranked}
        texts = {it.id: "\n".join([it.text, *it.anchors]) for it in res.reranked}
        hits = res.hits
        for h in hits:
            titles.setdefault(h.id, h.title)
            texts.setdefault(h.id, h.text)
        reached = [h.id for h in hits]
        answer = self.generator.answer(query, [
            ContextPassage(h.id, h.title, h.text, h.type is ItemType.NUGGET,
                           res.relevance.get(h.id, h.fused))
            for h in hits], meter) if hits else Answer("I could not find this.", ())
        return RagTrace(query, res.candidates[:TOP_K], res.relevance, reached,
                        list(answer.cited), answer.text, titles, texts)


def make_candidate(embedder: Embedder, candidate_id: str, draft: NuggetDraft) -> Candidate:
    """A candidate with its statement vector and one vector per anchor (made as a probe
    session of the query service makes its candidates: :func:`query.retrieval.make_overlay`)."""
    ov = make_overlay(embedder, candidate_id, draft.title, draft.body, draft.anchors)
    return Candidate(candidate_id, draft, ov.vector, ov.anchor_vectors)


def embed_draft(embedder: Embedder, draft: NuggetDraft) -> Vector:
    """The vector the index would store for this draft."""
    text = embedding_text(draft.title, draft.body, draft.anchors)
    return np.asarray(embedder.embed([text])[0], dtype=np.float32)
