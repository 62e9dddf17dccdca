"""In-memory postings mirror of the embedded store's FTS5 index: governed BM25 in numpy.

FTS5 ranks an OR-query by calling its ``bm25()`` function on every matching row and
sorting; with common words at 100,000 rows that is thousands of calls per query (about
5 ms), and counting what governance suppressed costs another full match. This index
keeps, per token, the positions of the rows that contain it and their column-weighted
frequencies, plus each row's length, so a query is a few vectorized array operations:

    score(row) = sum over terms t: idf(t) * f * (k1 + 1) / (f + k1 * (1 - b + b * D / avgdl))

with f the weighted frequency of t in the row, D the row's length in tokens, idf =
ln((N - n + 0.5) / (n + 0.5)) floored at 1e-6: exactly FTS5's bm25() (k1 = 1.2,
b = 0.75, the store's column weights), so the two paths rank identically; a test checks it.

Positions are the vector index's row positions, so the governance columns kept there
filter the matches (before ranking) and count the suppressed ones. Rows are only ever
appended (the store never rewrites an FTS row). Tokens come from FTS5 itself: the bulk
load reads the index through ``fts5vocab``, new rows are split by a scratch FTS5 table
with the same tokenizer. Terms that tokenize into several tokens (phrases such as "8.2")
are not handled here: the store falls back to FTS5 for those queries.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from nuggetflow.logging import get_logger

log = get_logger(__name__)

K1 = 1.2
B = 0.75
COLUMNS = ("title", "body", "anchors")
_TERM_CACHE_MAX = 100_000

Positions = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]
# Stored postings are half as wide: row positions fit int32, weighted frequencies (sums of
# small column weights) are exact in float32; scoring widens them to 64 bits.
StoredPositions = npt.NDArray[np.int32]
StoredFreqs = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Matches:
    """Rows matching a query (vector-index positions, ascending) and their BM25 scores."""

    positions: Positions
    scores: Floats


class Tokenizer:
    """FTS5's own tokenizer (the store's settings) through a scratch in-memory table."""

    def __init__(self, tokenize: str) -> None:
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._db.execute(f"CREATE VIRTUAL TABLE t USING fts5 ({', '.join(COLUMNS)},"
                         f" tokenize='{tokenize}')")
        self._db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        self._terms: dict[str, tuple[str, ...]] = {}

    def rows(self, rows: Sequence[tuple[int, str, str, str]]) -> list[tuple[str, int, str]]:
        """(token, rowid, column) for every token instance of the given rows."""
        db = self._db
        db.execute("DELETE FROM t")
        db.executemany("INSERT INTO t (rowid, title, body, anchors) VALUES (?, ?, ?, ?)", rows)
        out = db.execute("SELECT term, doc, col FROM v").fetchall()
        db.execute("DELETE FROM t")
        return out

    def columns(self, title: str, body: str, anchors: str) -> list[list[str]]:
        """The token stream of each column (title, body, anchors), in text order."""
        db = self._db
        db.execute("INSERT INTO t (rowid, title, body, anchors) VALUES (1, ?, ?, ?)",
                   (title, body, anchors))
        cols: dict[str, list[str]] = {c: [] for c in COLUMNS}
        for term, col in db.execute("SELECT term, col FROM v ORDER BY col, offset"):
            cols[col].append(term)
        db.execute("DELETE FROM t")
        return [cols[c] for c in COLUMNS]

    def term(self, text: str) -> tuple[str, ...]:
        """The tokens of a query term, in order (cached)."""
        got = self._terms.get(text)
        if got is None:
            got = tuple(self.columns(text, "", "")[0])
            if len(self._terms) >= _TERM_CACHE_MAX:
                self._terms.clear()
            self._terms[text] = got
        return got

    def close(self) -> None:
        """Release the scratch database."""
        self._db.close()


class PostingsIndex:
    """Token -> (row positions, weighted frequencies); row lengths; exact FTS5 BM25."""

    def __init__(self, weights: Sequence[float], tokenize: str) -> None:
        self.weights = {c: float(w) for c, w in zip(COLUMNS, weights, strict=True)}
        self.tokenizer = Tokenizer(tokenize)
        # Bulk-loaded postings: one CSR layout; later rows in small per-token chunks,
        # merged into one array pair the first time a query reads that token.
        self._base: dict[str, tuple[int, int]] = {}
        self._base_pos: StoredPositions = np.zeros(0, np.int32)
        self._base_freq: StoredFreqs = np.zeros(0, np.float32)
        self._extra: dict[str, list[tuple[StoredPositions, StoredFreqs]]] = {}
        self._merged: dict[str, tuple[StoredPositions, StoredFreqs]] = {}
        self._length: Floats = np.zeros(0, np.float64)
        self._has = np.zeros(0, np.bool_)
        self.rows = 0
        self.tokens = 0.0

    # --- loading ----------------------------------------------------------------------

    def load(self, db: sqlite3.Connection, table: str, pos_of: dict[int, int]) -> None:
        """Read every token instance of the FTS5 ``table`` (``fts5vocab`` 'instance')."""
        db.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{table}_instances"
                   f" USING fts5vocab(main, '{table}', 'instance')")
        instances = db.execute(f"SELECT term, doc, col FROM temp.{table}_instances").fetchall()
        # Every row of the store has an FTS5 row, also one without any token.
        self._add(instances, pos_of, bulk=True, rowids=list(pos_of))
        if instances:
            log.info("postings loaded", instances=len(instances), tokens=len(self._base),
                     rows=self.rows)

    def add_rows(self, rows: Sequence[tuple[int, str, str, str]],
                 pos_of: dict[int, int]) -> None:
        """Index new rows: (rowid, title, body, anchors); rows already known are skipped."""
        fresh = [r for r in rows if not self.has(pos_of.get(r[0], -1))]
        if fresh:
            self._add(self.tokenizer.rows(fresh), pos_of, bulk=False,
                      rowids=[r[0] for r in fresh])

    def has(self, position: int) -> bool:
        """Whether the row at this position is indexed."""
        return 0 <= position < len(self._has) and bool(self._has[position])

    def _grow(self, size: int) -> None:
        if size <= len(self._length):
            return
        cap = max(size, 2 * len(self._length), 1024)
        self._length = np.concatenate([self._length, np.zeros(cap - len(self._length))])
        self._has = np.concatenate([self._has, np.zeros(cap - len(self._has), np.bool_)])

    def _add(self, instances: Sequence[tuple[str, int, str]], pos_of: dict[int, int], *,
             bulk: bool, rowids: Sequence[int] = ()) -> None:
        """Aggregate (token, rowid, column) instances into per-(token, row) postings."""
        new_rows = {pos_of[r] for r in rowids if r in pos_of}
        if not instances:
            self._mark(new_rows)
            return
        n = len(instances)
        ids: dict[str, int] = {}
        tid = np.fromiter((ids.setdefault(t, len(ids)) for t, _d, _c in instances), np.int64, n)
        pos = np.fromiter((pos_of.get(d, -1) for _t, d, _c in instances), np.int64, n)
        wts = np.fromiter((self.weights[c] for _t, _d, c in instances), np.float64, n)
        if (pos < 0).any():
            raise RuntimeError(f"{int((pos < 0).sum())} FTS5 token instances belong to rows "
                               "the vector index does not hold")
        self._grow(int(pos.max()) + 1)
        np.add.at(self._length, pos, 1.0)
        self._mark(set(np.unique(pos).tolist()) | new_rows)
        self.tokens += float(n)
        order = np.lexsort((pos, tid))
        tid, pos, wts = tid[order], pos[order], wts[order]
        first = np.flatnonzero(np.r_[True, (tid[1:] != tid[:-1]) | (pos[1:] != pos[:-1])])
        rtid = tid[first]
        rpos = pos[first].astype(np.int32)
        rfreq = np.add.reduceat(wts, first).astype(np.float32)
        spans = np.flatnonzero(np.r_[True, rtid[1:] != rtid[:-1]])
        ends = np.r_[spans[1:], len(rtid)]
        names = list(ids)
        if bulk and not self._base:
            self._base_pos, self._base_freq = rpos, rfreq
            for s, e in zip(spans.tolist(), ends.tolist(), strict=True):
                self._base[names[rtid[s]]] = (s, e)
            return
        for s, e in zip(spans.tolist(), ends.tolist(), strict=True):
            name = names[rtid[s]]
            self._extra.setdefault(name, []).append((rpos[s:e], rfreq[s:e]))
            self._merged.pop(name, None)

    def _mark(self, positions: set[int]) -> None:
        if not positions:
            return
        self._grow(max(positions) + 1)
        idx = np.fromiter(positions, np.int64, len(positions))
        self.rows += int((~self._has[idx]).sum())
        self._has[idx] = True

    # --- queries ----------------------------------------------------------------------

    def postings(self, token: str) -> tuple[StoredPositions, StoredFreqs] | None:
        """Positions (ascending) and weighted frequencies of the rows holding a token."""
        merged = self._merged.get(token)
        if merged is not None:
            return merged
        parts: list[tuple[StoredPositions, StoredFreqs]] = []
        span = self._base.get(token)
        if span is not None:
            parts.append((self._base_pos[span[0]:span[1]], self._base_freq[span[0]:span[1]]))
        extra = self._extra.get(token)
        if not extra:
            return parts[0] if parts else None
        parts += extra
        pos = np.concatenate([p for p, _ in parts])
        freq = np.concatenate([f for _, f in parts])
        order = np.argsort(pos, kind="stable")
        merged = (pos[order], freq[order])
        self._merged[token] = merged
        return merged

    def tokens_of(self, terms: Sequence[str]) -> list[str] | None:
        """One token per term, or None if any term is a phrase (several tokens)."""
        out: list[str] = []
        for term in terms:
            toks = self.tokenizer.term(term)
            if len(toks) > 1:
                return None
            if toks:
                out.append(toks[0])
        return out

    def match(self, tokens: Sequence[str]) -> Matches:
        """Every row containing at least one token, with its FTS5 bm25() score.

        Each token counts once per occurrence in ``tokens`` (as FTS5 counts each phrase
        of an OR-query), so the scores equal ``-bm25(fts, weights)``.
        """
        empty = Matches(np.zeros(0, np.int64), np.zeros(0, np.float64))
        if not tokens or self.rows == 0:
            return empty
        n_rows = self.rows
        avgdl = self.tokens / n_rows
        all_pos: list[Positions] = []
        all_score: list[Floats] = []
        for token in tokens:
            got = self.postings(token)
            if got is None:
                continue
            pos, freq = got[0].astype(np.int64), got[1].astype(np.float64)
            idf = math.log((n_rows - len(pos) + 0.5) / (len(pos) + 0.5))
            idf = idf if idf > 0 else 1e-6
            norm = K1 * (1 - B + B * self._length[pos] / avgdl)
            all_pos.append(pos)
            all_score.append(idf * (freq * (K1 + 1)) / (freq + norm))
        if not all_pos:
            return empty
        if len(all_pos) == 1:
            return Matches(all_pos[0], all_score[0])
        pos = np.concatenate(all_pos)
        uniq, inverse = np.unique(pos, return_inverse=True)
        scores = np.bincount(inverse, weights=np.concatenate(all_score)).astype(np.float64)
        return Matches(uniq, scores)

    def close(self) -> None:
        """Release the tokenizer's scratch database."""
        self.tokenizer.close()


def top_k(matches: Matches, allowed: npt.NDArray[np.bool_], k: int) -> list[tuple[int, float]]:
    """(position, score) of the best ``k`` allowed matches, best first; ties by position."""
    pos = matches.positions[allowed]
    scores = matches.scores[allowed]
    if len(pos) == 0 or k <= 0:
        return []
    if len(pos) > k:
        keep = np.argpartition(-scores, k - 1)[:k]
        # Include every row tied with the k-th score, so the tie-break is by position.
        cut = scores[keep].min()
        keep = np.flatnonzero(scores >= cut)
        pos, scores = pos[keep], scores[keep]
    order = np.lexsort((pos, -scores))[:k]
    return [(int(p), float(s)) for p, s in zip(pos[order], scores[order], strict=True)]
