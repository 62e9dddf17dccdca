"""The re-ranking stage: scorers behind one small Protocol, calibrated per tenant.

A :class:`Reranker` scores (query, item) pairs with a raw score (higher: more likely to
answer the query). Raw scores are not comparable across scorers or tenants, so the gate
(:mod:`query.gate`) calibrates them per tenant into a probability on pairs mined from the
tenant's own corpus and passes what clears the tenant's threshold (docs/architecture.md,
"Re-ranking and the gate").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from query.model import ItemType

Scores = npt.NDArray[np.float64]


@dataclass(frozen=True)
class RerankItem:
    """One candidate as the re-ranker sees it, with the signals retrieval already has.

    ``text`` is what the generator would read (a nugget's body, a passage's text);
    ``anchors`` are a nugget's retrieval anchors (query-like; the generator never reads
    them). ``bm25`` is the raw lexical score (0: not a lexical candidate); ``cosine`` the
    query's cosine with the statement (title + text); ``anchor_cosine`` its best cosine
    with an anchor (0: no anchors).
    """

    id: str
    type: ItemType
    title: str
    text: str
    anchors: tuple[str, ...] = ()
    bm25: float = 0.0
    cosine: float = 0.0
    anchor_cosine: float = 0.0
    source: str = ""  # what the item comes from: a passage's document id, a nugget's id

    @property
    def origin(self) -> str:
        """The document a passage belongs to, or the item itself."""
        return self.source or self.id


@dataclass(frozen=True)
class Judged:
    """A query mined from a tenant's corpus, its candidate list as retrieval returned it,
    and which candidates answer it (training data for a re-ranker and its calibration)."""

    query: str
    items: tuple[RerankItem, ...]
    relevant: tuple[bool, ...]


@runtime_checkable
class Reranker(Protocol):
    """Scores (query, item) pairs; one instance per tenant (``fit`` may specialize it)."""

    name: str

    async def fit(self, lists: Sequence[Judged]) -> None:
        """Learn from the tenant's mined lists (a pre-trained scorer may do nothing)."""

    async def scores(self, query: str, items: Sequence[RerankItem]) -> Scores:
        """One raw score per item, in order; higher means more likely relevant. Items are
        the query's whole candidate list, so a scorer may compare them (listwise)."""
