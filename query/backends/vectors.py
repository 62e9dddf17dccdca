"""In-memory governed vector index used by the embedded store.

Governance columns live in numpy arrays aligned with the vectors, so the filter of a query
is one vectorized mask, computed before ranking. With few allowed rows the search is exact
(a matrix-vector product over just those rows); with many it is HNSW (faiss) restricted
to the allowed rows by a bitmap selector: filtering inside the graph search, as Lucene's
efficient k-NN filtering does, not after it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import faiss
import numpy as np
import numpy.typing as npt

from nuggetflow.logging import get_logger
from query.model import ItemType, Publication, State, View
from query.store import GovernanceFilter

log = get_logger(__name__)

HNSW_M = 32
EF_CONSTRUCTION = 80


@dataclass(frozen=True)
class VectorMeta:
    """Governance columns of one row (same order as the SQL select)."""

    rowid: int
    tenant: int
    type: int
    is_head: int
    state: int
    publication: int
    t_start: float
    t_end: float
    kind: int
    scope: int
    meta: float


_COLUMNS: dict[str, npt.DTypeLike] = {
    "rowid": np.int64, "tenant": np.int32, "type": np.int8, "is_head": np.bool_,
    "state": np.int8, "publication": np.int8, "t_start": np.float64, "t_end": np.float64,
    "kind": np.int8, "scope": np.int32, "meta": np.float32,
}


class VectorIndex:
    """Vectors plus governance columns; rows are appended, columns updated in place."""

    def __init__(self, dim: int, exact_threshold: int = 4096) -> None:
        self.dim = dim
        self.exact_threshold = exact_threshold
        self._lock = threading.RLock()
        self._n = 0
        self._cols: dict[str, npt.NDArray[np.generic]] = {
            name: np.zeros(0, dtype=dt) for name, dt in _COLUMNS.items()}
        self._matrix: npt.NDArray[np.float32] = np.zeros((0, dim), dtype=np.float32)
        self._pos: dict[int, int] = {}
        self._hnsw: faiss.Index = faiss.IndexHNSWFlat(dim, HNSW_M, faiss.METRIC_INNER_PRODUCT)
        self._hnsw.hnsw.efConstruction = EF_CONSTRUCTION
        # Anchor vectors: rows appended in write order, each owned by a row position.
        self._anchors: npt.NDArray[np.float32] = np.zeros((0, dim), dtype=np.float32)
        self._anchor_owner: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._anchor_hnsw: faiss.Index = faiss.IndexHNSWFlat(dim, HNSW_M,
                                                             faiss.METRIC_INNER_PRODUCT)
        self._anchor_hnsw.hnsw.efConstruction = EF_CONSTRUCTION

    def __len__(self) -> int:
        return self._n

    def _grow(self, extra: int) -> None:
        need = self._n + extra
        cap = len(self._cols["rowid"])
        if need <= cap:
            return
        new_cap = max(need, cap * 2, 1024)
        for name, arr in self._cols.items():
            grown = np.zeros(new_cap, dtype=arr.dtype)
            grown[: self._n] = arr[: self._n]
            self._cols[name] = grown
        matrix = np.zeros((new_cap, self.dim), dtype=np.float32)
        matrix[: self._n] = self._matrix[: self._n]
        self._matrix = matrix

    def load(self, metas: Sequence[VectorMeta], matrix: npt.NDArray[np.float32],
             cache: Path, seq: int) -> None:
        """Fill from stored rows; reuse the HNSW cache file when it matches."""
        with self._lock:
            self._append(metas, matrix, add_to_graph=False)
            graph = _read_cache(cache, seq, self._n, self.dim)
            if graph is not None:
                self._hnsw = graph
            else:
                if self._n:
                    log.info("building HNSW graph", rows=self._n)
                self._hnsw.add(np.ascontiguousarray(self._matrix[: self._n]))

    def save(self, cache: Path, seq: int) -> None:
        """Write the HNSW graph (a cache; SQLite stays the source of truth)."""
        with self._lock:
            if self._n == 0:
                return
            tmp = cache.with_suffix(f".{os.getpid()}.tmp")  # workers may save at once
            faiss.write_index(self._hnsw, str(tmp))
            tmp.replace(cache)
            cache.with_suffix(".seq").write_text(f"{seq} {self._n}\n")

    def _append(self, metas: Sequence[VectorMeta], matrix: npt.NDArray[np.float32],
                add_to_graph: bool) -> None:
        if not metas:
            return
        self._grow(len(metas))
        start = self._n
        for name in _COLUMNS:
            self._cols[name][start : start + len(metas)] = [getattr(m, name) for m in metas]
        self._matrix[start : start + len(metas)] = matrix
        for i, m in enumerate(metas):
            self._pos[m.rowid] = start + i
        self._n += len(metas)
        if add_to_graph:
            self._hnsw.add(np.ascontiguousarray(matrix, dtype=np.float32))

    def upsert_many(self, metas: Sequence[VectorMeta],
                    vectors: Sequence[npt.NDArray[np.float32]]) -> None:
        """Append new rows (in rowid order) and update the columns of known ones."""
        with self._lock:
            fresh: list[tuple[VectorMeta, npt.NDArray[np.float32]]] = []
            for meta, vec in zip(metas, vectors, strict=True):
                pos = self._pos.get(meta.rowid)
                if pos is None:
                    fresh.append((meta, vec))
                    continue
                for name in _COLUMNS:
                    self._cols[name][pos] = getattr(meta, name)
            if fresh:
                self._append([m for m, _ in fresh], np.stack([v for _, v in fresh]),
                             add_to_graph=True)

    def mask(self, flt: GovernanceFilter, tenant: int,
             scopes: tuple[int, ...]) -> npt.NDArray[np.bool_]:
        """Rows that the governance filter allows."""
        n = self._n
        return _allowed({k: v[:n] for k, v in self._cols.items()}, flt, tenant, scopes)

    @property
    def positions(self) -> dict[int, int]:
        """rowid -> row position (read-only view; rows keep their position forever)."""
        return self._pos

    def rows(self, rowids: Sequence[int]) -> dict[int, npt.NDArray[np.float32]]:
        """The stored vector of each known rowid (unknown ones are left out)."""
        with self._lock:
            return {r: self._matrix[p].copy() for r in rowids
                    if (p := self._pos.get(r)) is not None}

    def rowids_at(self, positions: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """The rowids of rows at these positions."""
        return np.asarray(self._cols["rowid"][positions], dtype=np.int64)

    def filter_at(self, positions: npt.NDArray[np.int64], flt: GovernanceFilter, tenant: int,
                  scopes: tuple[int, ...]) -> tuple[npt.NDArray[np.bool_], int]:
        """For rows at these positions: which the filter allows, and how many head nuggets
        of the tenant it excludes (the suppressed count)."""
        with self._lock:
            cols = {k: v[positions] for k, v in self._cols.items()}
        allowed = _allowed(cols, flt, tenant, scopes)
        suppressed = ((cols["tenant"] == tenant) & cols["is_head"]
                      & (cols["type"] == int(ItemType.NUGGET)) & ~allowed)
        return allowed, int(np.count_nonzero(suppressed))

    def add_anchors(self, owner_rowids: Sequence[int],
                    vectors: npt.NDArray[np.float32]) -> None:
        """Anchor vectors (row i owned by stored row ``owner_rowids[i]``), searched
        alongside their owners' own vectors. Rows of unknown owners are skipped."""
        with self._lock:
            found = [self._pos.get(r) for r in owner_rowids]
            keep = [i for i, p in enumerate(found) if p is not None]
            if not keep:
                return
            rows = np.ascontiguousarray(np.asarray(vectors, dtype=np.float32)
                                        .reshape(-1, self.dim)[keep])
            self._anchors = np.concatenate([self._anchors, rows])
            self._anchor_owner = np.concatenate(
                [self._anchor_owner, np.asarray([found[i] for i in keep], dtype=np.int64)])
            self._anchor_hnsw.add(rows)

    def search(self, vector: npt.NDArray[np.float32], flt: GovernanceFilter, tenant: int,
               scopes: tuple[int, ...], limit: int) -> list[tuple[int, float, float]]:
        """(rowid, cosine, meta prior) of the best allowed rows, best first.

        A row's cosine is the best over its own vector and its anchor vectors: rows are
        searched by both, then merged per row.
        """
        with self._lock:
            allowed = self.mask(flt, tenant, scopes)
            idx = np.flatnonzero(allowed)
            if idx.size == 0:
                return []
            q = np.ascontiguousarray(vector, dtype=np.float32).reshape(1, self.dim)
            pos, sims = _top(self._matrix, self._hnsw, allowed, idx, q, limit,
                             self.exact_threshold)
            if len(self._anchors):
                a_allowed = allowed[self._anchor_owner]
                a_idx = np.flatnonzero(a_allowed)
                if a_idx.size:
                    a_pos, a_sims = _top(self._anchors, self._anchor_hnsw, a_allowed, a_idx,
                                         q, limit, self.exact_threshold)
                    best = dict(zip(pos.tolist(), sims.tolist(), strict=True))
                    for owner, sim in zip(self._anchor_owner[a_pos].tolist(), a_sims.tolist(),
                                          strict=True):
                        if owner not in best:  # found by an anchor: its own cosine too
                            best[owner] = float(self._matrix[owner] @ q[0])
                        best[owner] = max(best[owner], sim)
                    order = sorted(best, key=lambda p: -best[p])[:limit]
                    pos = np.asarray(order, dtype=np.int64)
                    sims = np.asarray([best[p] for p in order], dtype=np.float32)
            rowids = self._cols["rowid"][pos]
            metas = self._cols["meta"][pos]
            return [(int(r), float(s), float(m)) for r, s, m in zip(rowids, sims, metas,
                                                                     strict=True)]


def _top(matrix: npt.NDArray[np.float32], graph: faiss.Index, allowed: npt.NDArray[np.bool_],
         idx: npt.NDArray[np.int64], q: npt.NDArray[np.float32], limit: int,
         exact_threshold: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """Best ``limit`` allowed rows of ``matrix`` by inner product with ``q``: exact over
    few allowed rows, HNSW restricted to them by a bitmap selector otherwise."""
    k = min(limit, idx.size)
    if idx.size <= exact_threshold:
        scores = matrix[idx] @ q[0]
        top = np.argpartition(-scores, k - 1)[:k] if k < idx.size else np.arange(idx.size)
        top = top[np.argsort(-scores[top])]
        return idx[top], scores[top]
    bitmap = np.packbits(allowed, bitorder="little")
    sel = faiss.IDSelectorBitmap(len(allowed), faiss.swig_ptr(bitmap))
    params = faiss.SearchParametersHNSW(  # type: ignore[attr-defined]
        sel=sel, efSearch=max(2 * k, 96))
    dist, ids = graph.search(q, k, params=params)
    keep = ids[0] >= 0
    return ids[0][keep].astype(np.int64), dist[0][keep]


def _allowed(c: dict[str, Any], flt: GovernanceFilter, tenant: int,
             scopes: tuple[int, ...]) -> npt.NDArray[np.bool_]:
    """The governance filter over columns (all rows, or a gathered subset)."""
    t = flt.as_of.timestamp()
    state = c["state"] == int(State.ACTIVE)
    if flt.view is View.ACTIVE_PLUS_CONTESTED:
        state |= c["state"] == int(State.CONTESTED)
    m = ((c["tenant"] == tenant) & c["is_head"]
         & (c["publication"] == int(Publication.PUBLISHED))
         & state & (c["t_start"] <= t) & (c["t_end"] > t))
    is_doc = c["type"] == int(ItemType.DOCUMENT)
    if not flt.include_documents:
        m &= ~is_doc
    if scopes:
        m &= is_doc | np.isin(c["scope"], scopes)
    if flt.kinds:
        m &= is_doc | np.isin(c["kind"], [int(k) for k in flt.kinds])
    out: npt.NDArray[np.bool_] = m
    return out


def _read_cache(cache: Path, seq: int, n: int, dim: int) -> faiss.Index | None:
    stamp = cache.with_suffix(".seq")
    if not cache.is_file() or not stamp.is_file():
        return None
    try:
        saved_seq, saved_n = (int(x) for x in stamp.read_text().split())
        if saved_seq != seq or saved_n != n:
            return None
        graph = faiss.read_index(str(cache))
    except (OSError, ValueError, RuntimeError) as exc:
        log.warning("HNSW cache unreadable; rebuilding", path=str(cache), error=str(exc))
        return None
    if graph.ntotal != n or graph.d != dim:
        return None
    return graph
