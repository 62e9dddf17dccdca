"""The gate: re-ranking scores calibrated per tenant into a probability, and a threshold.

What reaches the generator is decided here (docs/architecture.md, "Re-ranking and the
gate"). Per tenant, the gate

1. mines training lists from the tenant's own corpus: a page's title is a query; the
   candidates retrieval returns for it are judged relevant when they come from that page
   and not when they come from another page (near pages included: they are what retrieval
   ranked high). Cosines and term coverage of mined items are measured on the passage text
   without its title, so a query never finds itself;
2. fits the configured :class:`~query.rerank.Reranker` on half of those lists and a
   Platt calibrator (logistic on the raw score) on the other half, so the probability is
   measured on lists the scorer did not learn from;
3. passes an item when its calibrated probability clears the tenant's threshold.

A tenant with too few pages for mining gets the fallback scorer, uncalibrated, and the
threshold of the legacy cosine rule (logged). Fitted gates are cached per tenant and
dropped when the tenant's corpus changes (:meth:`Gate.invalidate`).

Scorers here:

- ``features`` (the default): logistic regression over signals retrieval already has,
  listwise: the item's similarity (statement cosine, or its best anchor cosine shifted
  onto the statement scale), its margin over the best item of another source in the same
  list, and query-term coverage and its margin (BM25 is left out: on mined pairs the
  query is the page's title, which BM25 matches in the title field);
- ``cosine``: the earlier rule, 0.75 x cosine + 0.25 x coverage (no fit);
- ``endpoint``: an HTTP rerank endpoint (:mod:`query.rerankers`), calibrated the same way.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import random
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from nuggetflow.errors import ConfigError
from nuggetflow.logging import get_logger
from nuggetflow.settings import Settings
from query.rerank import Judged, Reranker, RerankItem, Scores
from query.text import coverage

log = get_logger(__name__)

FEATURES = ("similarity", "margin", "coverage", "coverage_margin", "bias")
MIN_LISTS = 20  # mined lists needed to fit and calibrate a tenant's gate
LEGACY_THRESHOLD = 0.45  # the cosine rule's threshold where nothing can be calibrated

Matrix = npt.NDArray[np.float64]
Candidates = Callable[[str, str], Awaitable[list[RerankItem]]]


def similarity(item: RerankItem, anchor_shift: float) -> float:
    """The item's dense similarity on the statement scale: its statement cosine, or its
    best anchor cosine less ``anchor_shift`` (anchors are query-like, and query-like
    texts resemble each other more than a query resembles a passage)."""
    if item.anchor_cosine > 0.0:
        return max(item.cosine, item.anchor_cosine - anchor_shift)
    return item.cosine


def features(query: str, items: Sequence[RerankItem], anchor_shift: float) -> Matrix:
    """One row of :data:`FEATURES` per item (listwise: margins compare an item with the
    best item of another source in the same list)."""
    n = len(items)
    x = np.zeros((n, len(FEATURES)))
    if not n:
        return x
    sim = np.array([similarity(it, anchor_shift) for it in items])
    cov = np.array([max(coverage(query, f"{it.title} {it.text}"),
                        coverage(query, " ".join(it.anchors)) if it.anchors else 0.0)
                    for it in items])
    origins = [it.origin for it in items]
    for i in range(n):
        others = [j for j in range(n) if origins[j] != origins[i]]
        best_sim = max((sim[j] for j in others), default=sim[i])
        best_cov = max((cov[j] for j in others), default=cov[i])
        x[i] = (sim[i], sim[i] - best_sim, cov[i], cov[i] - best_cov, 1.0)
    return x


def logistic_fit(x: Matrix, y: npt.NDArray[np.float64], l2: float = 1.0,
                 iterations: int = 50) -> npt.NDArray[np.float64]:
    """Weights of an L2-regularized logistic regression (Newton's method; the last
    column is the bias and is not regularized)."""
    w = np.zeros(x.shape[1])
    reg = np.full(x.shape[1], l2)
    reg[-1] = 0.0
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -30, 30)))
        grad = x.T @ (p - y) + reg * w
        hess = (x * (p * (1 - p))[:, None]).T @ x + np.diag(reg) + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.abs(step).max()) < 1e-8:
            break
    return w


class FeatureReranker:
    """Logistic regression over the signals retrieval has (:func:`features`), fitted on
    the tenant's mined lists; its raw score is the logit."""

    name = "features"

    def __init__(self, anchor_shift: float = 0.0, l2: float = 1.0) -> None:
        self.anchor_shift = anchor_shift
        self.l2 = l2
        self.weights: npt.NDArray[np.float64] | None = None

    async def fit(self, lists: Sequence[Judged]) -> None:
        """Fit the weights on every (query, item) of the lists."""
        rows = [features(j.query, j.items, self.anchor_shift) for j in lists if j.items]
        labels = [np.asarray(j.relevant, dtype=np.float64) for j in lists if j.items]
        if not rows:
            raise ValueError("no mined lists to fit on")
        self.weights = logistic_fit(np.vstack(rows), np.concatenate(labels), self.l2)

    async def scores(self, query: str, items: Sequence[RerankItem]) -> Scores:
        """The logit of each item (ValueError before :meth:`fit`)."""
        if self.weights is None:
            raise ValueError("FeatureReranker used before fit")
        out: Scores = features(query, items, self.anchor_shift) @ self.weights
        return out


class CosineReranker:
    """The earlier rule: 0.75 x similarity + 0.25 x coverage (nothing to fit)."""

    name = "cosine"

    def __init__(self, anchor_shift: float = 0.0) -> None:
        self.anchor_shift = anchor_shift

    async def fit(self, lists: Sequence[Judged]) -> None:
        """Nothing to learn."""

    async def scores(self, query: str, items: Sequence[RerankItem]) -> Scores:
        """0.75 x similarity + 0.25 x coverage per item."""
        x = features(query, items, self.anchor_shift)
        out: Scores = 0.75 * x[:, 0] + 0.25 * x[:, 2]
        return out


@dataclass
class Platt:
    """Maps a raw score to a probability: sigmoid(a * raw + b), fitted on labelled scores."""

    a: float = 1.0
    b: float = 0.0

    @classmethod
    def fit(cls, raw: Sequence[float], relevant: Sequence[bool]) -> Platt:
        """Fit on held-out (score, label) pairs; Platt's smoothed targets keep a perfect
        separation from giving probabilities of exactly 0 and 1."""
        y = np.asarray(relevant, dtype=np.float64)
        pos, neg = float(y.sum()), float(len(y) - y.sum())
        target = np.where(y > 0, (pos + 1) / (pos + 2), 1 / (neg + 2))
        x = np.column_stack([np.asarray(raw, dtype=np.float64), np.ones(len(y))])
        w = logistic_fit(x, target, l2=1e-3)
        return cls(float(w[0]), float(w[1]))

    def __call__(self, raw: Scores) -> Scores:
        out: Scores = 1.0 / (1.0 + np.exp(-np.clip(self.a * raw + self.b, -30, 30)))
        return out


@dataclass
class TenantGate:
    """A tenant's fitted scorer, calibration and threshold."""

    reranker: Reranker
    calibrate: Platt | None  # None: raw scores are compared with the threshold as they are
    threshold: float
    anchor_shift: float = 0.0
    report: dict[str, float] = field(default_factory=dict)

    async def probabilities(self, query: str, items: Sequence[RerankItem]) -> Scores:
        """Calibrated probability (or the raw score, uncalibrated) per item."""
        if not items:
            return np.zeros(0)
        raw = await self.reranker.scores(query, items)
        return self.calibrate(raw) if self.calibrate is not None else raw


def calibration_bins(prob: Sequence[float], relevant: Sequence[bool],
                     bins: int = 5) -> list[tuple[float, float, int]]:
    """(mean predicted, observed rate, count) per probability bin with any items."""
    p = np.asarray(prob, dtype=np.float64)
    y = np.asarray(relevant, dtype=np.float64)
    out = []
    edges = np.linspace(0.0, 1.0, bins + 1)
    for lo, hi in itertools.pairwise(edges):
        mask = (p >= lo) & ((p < hi) if hi < 1.0 else (p <= hi))
        if mask.any():
            out.append((float(p[mask].mean()), float(y[mask].mean()), int(mask.sum())))
    return out


def expected_calibration_error(prob: Sequence[float], relevant: Sequence[bool],
                               bins: int = 5) -> float:
    """Count-weighted mean |predicted - observed| over the bins."""
    rows = calibration_bins(prob, relevant, bins)
    total = sum(n for _, _, n in rows)
    return sum(n * abs(p - o) for p, o, n in rows) / total if total else 0.0


class Gate:
    """Per-tenant calibrated gates, fitted on demand from the tenant's corpus.

    ``kind``: ``features`` | ``cosine`` | ``endpoint`` (the NUGGETFLOW_RERANKER URL,
    :func:`query.rerankers.make_reranker_backend`) | ``off``. ``threshold`` is the probability an
    item needs (``thresholds`` overrides it per tenant).
    """

    def __init__(self, settings: Settings, *, kind: str | None = None,
                 threshold: float | None = None,
                 fixed: tuple[float, float] | None = None) -> None:
        """``fixed`` = (threshold, anchor threshold): the cosine rule, uncalibrated, with
        these thresholds for every tenant (tests and experiments)."""
        self.settings = settings
        self.fixed = fixed
        self.kind = kind if kind is not None else settings.gate
        self.threshold = threshold if threshold is not None else settings.gate_threshold
        self.thresholds = parse_thresholds(settings.gate_thresholds)
        self._gates: dict[str, TenantGate] = {}
        self._fit_locks: dict[str, threading.Lock] = {}
        if self.kind not in ("features", "cosine", "endpoint", "off"):
            raise ConfigError(f"unknown gate {self.kind!r} (features, cosine, endpoint, off)",
                              field="NUGGETFLOW_GATE")

    @property
    def enabled(self) -> bool:
        """False for ``off``: every candidate passes, ordered by fused score."""
        return self.kind != "off"

    def invalidate(self, tenant: str | None = None) -> None:
        """Forget the fitted gate of a tenant (all tenants: None); refitted on next use."""
        if tenant is None:
            self._gates.clear()
        else:
            self._gates.pop(tenant, None)

    def fitted(self, tenant: str) -> TenantGate | None:
        """The tenant's gate if it has been fitted."""
        return self._gates.get(tenant)

    async def for_tenant(self, tenant: str, candidates: Candidates,
                         titles: Callable[[str], Awaitable[list[tuple[str, str]]]],
                         shift: Callable[[str], Awaitable[float]]) -> TenantGate:
        """The tenant's gate, fitted on first use (see the module docstring).

        ``candidates(tenant, query)``: the mined query's candidate list with text-only
        signals; ``titles(tenant)``: (document id, title) of a sample of its pages;
        ``shift(tenant)``: the anchor-to-statement cosine shift.
        """
        if tenant in self._gates:
            return self._gates[tenant]
        if self.fixed is not None:
            tau, tau_anchor = self.fixed
            offset = max(0.0, tau_anchor - tau) / 0.75  # the rule weighs cosine by 0.75
            self._gates[tenant] = TenantGate(CosineReranker(offset), None, tau, offset)
            return self._gates[tenant]
        # Engines run INO slots on several threads, each with its own event loop: a
        # thread lock per tenant (acquired off the loop) makes one of them fit the
        # tenant while the others wait for its result.
        fit_lock = self._fit_locks.setdefault(tenant, threading.Lock())
        await asyncio.to_thread(fit_lock.acquire)
        try:
            if tenant not in self._gates:
                self._gates[tenant] = await self._fit(tenant, candidates, titles, shift)
            return self._gates[tenant]
        finally:
            fit_lock.release()

    def _threshold(self, tenant: str) -> float:
        return self.thresholds.get(tenant, self.threshold)

    async def _fit(self, tenant: str, candidates: Candidates,
                   titles: Callable[[str], Awaitable[list[tuple[str, str]]]],
                   shift: Callable[[str], Awaitable[float]]) -> TenantGate:
        anchor_shift = await shift(tenant)
        pages = await titles(tenant)
        lists: list[Judged] = []
        for doc_id, title in pages:
            items = await candidates(tenant, title)
            relevant = tuple(it.origin == doc_id for it in items)
            if any(relevant) and not all(relevant):
                lists.append(Judged(title, tuple(items), relevant))
        reranker = self._reranker(anchor_shift)
        if len(lists) < MIN_LISTS:
            fallback = CosineReranker(anchor_shift)
            log.info("gate: too few mined lists to calibrate; cosine rule", tenant=tenant,
                     lists=len(lists), threshold=LEGACY_THRESHOLD)
            return TenantGate(fallback, None, LEGACY_THRESHOLD, anchor_shift,
                              {"lists": float(len(lists))})
        random.Random(0).shuffle(lists)
        half = len(lists) // 2
        train, held = lists[:half], lists[half:]
        await reranker.fit(train)
        raw: list[float] = []
        labels: list[bool] = []
        for j in held:
            raw += [float(s) for s in await reranker.scores(j.query, j.items)]
            labels += list(j.relevant)
        platt = Platt.fit(raw, labels)
        prob = platt(np.asarray(raw))
        gate = TenantGate(reranker, platt, self._threshold(tenant), anchor_shift)
        passed = prob >= gate.threshold
        y = np.asarray(labels)
        gate.report = {
            "lists": float(len(lists)), "heldout_pairs": float(len(labels)),
            "ece": round(expected_calibration_error(prob.tolist(), labels), 4),
            "heldout_recall": round(float(passed[y].mean()) if y.any() else 0.0, 4),
            "heldout_false_pass": round(float(passed[~y].mean()) if (~y).any() else 0.0, 4),
        }
        log.info("gate fitted", tenant=tenant, kind=reranker.name,
                 threshold=gate.threshold, anchor_shift=round(anchor_shift, 4),
                 lists=len(lists), ece=gate.report["ece"],
                 heldout_recall=gate.report["heldout_recall"],
                 heldout_false_pass=gate.report["heldout_false_pass"])
        return gate

    def _reranker(self, anchor_shift: float) -> Reranker:
        if self.kind == "features":
            return FeatureReranker(anchor_shift)
        if self.kind == "cosine":
            return CosineReranker(anchor_shift)
        from query.rerankers import make_reranker_backend

        backend = make_reranker_backend(self.settings.reranker, self.settings)
        if backend is None:
            raise ConfigError("gate 'endpoint' needs a rerank URL", field="NUGGETFLOW_RERANKER")
        return backend


def parse_thresholds(text: str) -> dict[str, float]:
    """``tenant=0.6,other=0.4`` -> {tenant: 0.6, other: 0.4} (ConfigError when malformed)."""
    out: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        tenant, sep, value = part.partition("=")
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not sep or not tenant.strip() or not 0.0 <= number <= 1.0:
            raise ConfigError(f"expected tenant=probability in [0, 1], got {part!r}",
                              field="NUGGETFLOW_GATE_THRESHOLDS")
        out[tenant.strip()] = number
    return out
