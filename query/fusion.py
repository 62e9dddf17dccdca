"""Score fusion of lexical and dense candidates (min-max weighted, or RRF)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nuggetflow.settings import Settings
from query.model import ItemType
from query.store import Scored


@dataclass(frozen=True)
class Fused:
    """A fused candidate with its component scores (normalized for min-max)."""

    id: str
    type: ItemType
    lexical: float
    dense: float
    metadata: float
    fused: float
    raw_lexical: float = 0.0  # BM25 score before normalization (0: not a lexical candidate)
    raw_dense: float | None = None  # cosine before normalization (None: not a dense candidate)


def _minmax(cands: Sequence[Scored]) -> dict[str, float]:
    if not cands:
        return {}
    scores = [c.score for c in cands]
    lo, hi = min(scores), max(scores)
    span = hi - lo
    return {c.id: (1.0 if span <= 0 else (c.score - lo) / span) for c in cands}


def fuse_minmax(lexical: Sequence[Scored], dense: Sequence[Scored], w_lexical: float,
                w_dense: float, w_meta: float) -> list[Fused]:
    """s = w_l * minmax(bm25) + w_d * minmax(cosine) + w_m * metadata prior; best first."""
    lex, den = _minmax(lexical), _minmax(dense)
    info = {c.id: c for c in (*dense, *lexical)}
    raw_l = {c.id: c.score for c in lexical}
    raw_d = {c.id: c.score for c in dense}
    out = []
    for cid, c in info.items():
        l_s, d_s = lex.get(cid, 0.0), den.get(cid, 0.0)
        out.append(Fused(cid, c.type, l_s, d_s, c.meta,
                         w_lexical * l_s + w_dense * d_s + w_meta * c.meta,
                         raw_l.get(cid, 0.0), raw_d.get(cid)))
    out.sort(key=lambda f: (-f.fused, f.id))
    return out


def fuse_rrf(lexical: Sequence[Scored], dense: Sequence[Scored], k: int = 60) -> list[Fused]:
    """Reciprocal rank fusion: sum over retrievers of 1 / (k + rank); best first."""
    lex = {c.id: 1.0 / (k + i + 1) for i, c in enumerate(lexical)}
    den = {c.id: 1.0 / (k + i + 1) for i, c in enumerate(dense)}
    info = {c.id: c for c in (*dense, *lexical)}
    raw_l = {c.id: c.score for c in lexical}
    raw_d = {c.id: c.score for c in dense}
    out = [Fused(cid, c.type, lex.get(cid, 0.0), den.get(cid, 0.0), c.meta,
                 lex.get(cid, 0.0) + den.get(cid, 0.0), raw_l.get(cid, 0.0), raw_d.get(cid))
           for cid, c in info.items()]
    out.sort(key=lambda f: (-f.fused, f.id))
    return out


def fuse(lexical: Sequence[Scored], dense: Sequence[Scored], settings: Settings,
         how: str | None = None) -> list[Fused]:
    """Fuse with the configured method (``how`` overrides ``settings.fusion``)."""
    if (how or settings.fusion) == "rrf":
        return fuse_rrf(lexical, dense, settings.rrf_k)
    return fuse_minmax(lexical, dense, settings.weight_lexical, settings.weight_dense,
                       settings.weight_metadata)
