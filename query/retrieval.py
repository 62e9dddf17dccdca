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
from dataclasses import dataclass, field
from datetime import datetime

from nuggetflow.errors import NotFoundError, ValidationError
from nuggetflow.settings import Settings
from query.embeddings import Embedder, QueryEmbeddings
from query.fusion import Fused, fuse
from query.model import ItemType, Kind, Nugget, Passage, State, View, ensure_utc, utcnow
from query.store import GovernanceFilter, IndexStore, Scored
from query.text import query_terms

MAX_K = 1000
MAX_QUERY_CHARS = 2000  # default of NUGGETFLOW_GRPC_MAX_QUERY_CHARS


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


@dataclass
class RetrieveResult:
    """Ranked hits plus what governance suppressed and a generator context block."""

    request_id: str
    hits: list[Hit]
    suppressed: int
    context_block: str
    timings_ms: dict[str, float] = field(default_factory=dict)
    query_vector_cached: bool | None = None  # None: lexical only


class Retriever:
    """Hybrid retrieval over an :class:`~query.store.IndexStore`."""

    def __init__(self, store: IndexStore, embedder: Embedder, settings: Settings) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings
        self.queries = QueryEmbeddings(embedder, settings.query_embedding_cache)

    async def retrieve(self, req: RetrieveRequest, *, lexical_only: bool = False,
                       count_suppressed: bool = True) -> RetrieveResult:
        """Run a governed hybrid query; ValidationError/NotFoundError on bad input."""
        req.validate(self.settings.grpc_max_query_chars)
        if not await self.store.has_tenant(req.tenant):
            raise NotFoundError(f"unknown tenant {req.tenant!r}", field="tenant")
        timings: dict[str, float] = {}
        flt = GovernanceFilter(tenant=req.tenant, as_of=req.as_of or utcnow(), view=req.view,
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
        if not lexical_only:
            t1 = time.perf_counter()
            vector = await embedding if embedding is not None else cached
            assert vector is not None
            timings["embed"] = (time.perf_counter() - t1) * 1000  # waited beyond BM25
            t2 = time.perf_counter()
            dense = await self.store.dense(vector, flt, depth)
            timings["dense"] = (time.perf_counter() - t2) * 1000
        fused = fuse(lexical, dense, self.settings, req.fusion)[: req.k]
        records = await self.store.fetch(req.tenant, [f.id for f in fused])
        cap = self.settings.max_hit_chars
        hits = [_hit(f, records[f.id], cap) for f in fused if f.id in records]
        suppressed = await self.store.suppressed(terms, flt) if count_suppressed else 0
        timings["total"] = (time.perf_counter() - t0) * 1000
        return RetrieveResult(uuid.uuid4().hex, hits, suppressed, context_block(hits), timings,
                              None if lexical_only else cached is not None)

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
