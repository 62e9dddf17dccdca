"""The gate: listwise features, the logistic scorer, Platt calibration, per-tenant fits."""

from __future__ import annotations

import random

import numpy as np
import pytest

from nuggetflow.errors import ConfigError
from nuggetflow.settings import Settings
from query.gate import (
    FEATURES,
    CosineReranker,
    FeatureReranker,
    Gate,
    Platt,
    calibration_bins,
    expected_calibration_error,
    features,
    parse_thresholds,
    similarity,
)
from query.model import ItemType
from query.rerank import Judged, Reranker, RerankItem


def passage(pid: str, doc: str, text: str, cosine: float) -> RerankItem:
    return RerankItem(pid, ItemType.DOCUMENT, "", text, (), 0.0, cosine, 0.0, doc)


def nugget(nid: str, body: str, cosine: float, anchor: float,
           anchors: tuple[str, ...] = ("a query-like anchor",)) -> RerankItem:
    return RerankItem(nid, ItemType.NUGGET, "Title", body, anchors, 0.0, cosine, anchor, nid)


def test_similarity_takes_an_anchor_match_only_after_the_shift() -> None:
    item = nugget("n", "body", cosine=0.40, anchor=0.70)
    assert similarity(item, 0.1) == pytest.approx(0.60)
    assert similarity(item, 0.5) == pytest.approx(0.40)  # the statement wins
    assert similarity(passage("p", "d", "t", 0.55), 0.3) == pytest.approx(0.55)


def test_margins_compare_with_the_best_item_of_another_source() -> None:
    items = [passage("d1#0", "d1", "printer settings", 0.80),
             passage("d1#1", "d1", "printer queue", 0.70),  # same page: not a rival
             passage("d2#0", "d2", "scanner", 0.50)]
    x = features("printer settings", items, 0.0)
    margin = FEATURES.index("margin")
    assert x[0, margin] == pytest.approx(0.30)
    assert x[1, margin] == pytest.approx(0.20)  # its best rival is d2, not its sibling
    assert x[2, margin] == pytest.approx(-0.30)
    cov = FEATURES.index("coverage")
    assert x[0, cov] == pytest.approx(1.0) and x[2, cov] == 0.0
    assert x[:, FEATURES.index("bias")].tolist() == [1.0, 1.0, 1.0]
    assert features("q", [], 0.0).shape == (0, len(FEATURES))


def synthetic_lists(n: int, seed: int) -> list[Judged]:
    """Lists in which the relevant item is the one most similar to the query, by a
    margin that varies; words of the query appear in relevant texts more often."""
    rng = random.Random(seed)
    out = []
    for k in range(n):
        query = f"topic{k} setting"
        items, labels = [], []
        for j in range(6):
            relevant = j == 0
            cos = rng.uniform(0.55, 0.9) if relevant else rng.uniform(0.2, 0.6)
            text = f"topic{k} setting page" if relevant and rng.random() < 0.8 else "other"
            items.append(passage(f"d{j}#0", f"d{j}", text, cos))
            labels.append(relevant)
        order = list(range(6))
        rng.shuffle(order)
        out.append(Judged(query, tuple(items[i] for i in order),
                          tuple(labels[i] for i in order)))
    return out


async def test_feature_reranker_ranks_the_relevant_item_first_on_lists_it_never_saw() -> None:
    scorer = FeatureReranker()
    assert isinstance(scorer, Reranker)
    await scorer.fit(synthetic_lists(80, seed=1))
    test = synthetic_lists(40, seed=2)
    top1 = 0
    for j in test:
        s = await scorer.scores(j.query, j.items)
        top1 += j.relevant[int(np.argmax(s))]
    assert top1 / len(test) >= 0.9
    assert scorer.weights is not None and scorer.weights[FEATURES.index("margin")] > 0


async def test_feature_reranker_refuses_to_score_before_fit() -> None:
    with pytest.raises(ValueError, match="before fit"):
        await FeatureReranker().scores("q", [passage("p", "d", "t", 0.5)])


def test_platt_probabilities_match_observed_rates_in_bins() -> None:
    rng = np.random.default_rng(0)
    raw = rng.uniform(-4, 4, 20_000)
    truth = 1 / (1 + np.exp(-(1.5 * raw - 1.0)))
    labels = rng.random(raw.size) < truth
    platt = Platt.fit(raw.tolist(), labels.tolist())
    assert platt.a == pytest.approx(1.5, abs=0.1) and platt.b == pytest.approx(-1.0, abs=0.1)
    prob = platt(raw)
    for predicted, observed, count in calibration_bins(prob.tolist(), labels.tolist()):
        assert count > 100
        assert abs(predicted - observed) < 0.03
    assert expected_calibration_error(prob.tolist(), labels.tolist()) < 0.02
    # A scorer that ignores the score gets the base rate, not a confident probability.
    flat = Platt.fit(np.zeros(1000).tolist(), (rng.random(1000) < 0.2).tolist())
    assert flat(np.array([5.0]))[0] == pytest.approx(0.2, abs=0.05)


def test_calibration_error_sees_an_overconfident_scorer() -> None:
    labels = [True, False] * 500
    assert expected_calibration_error([0.95] * 1000, labels) == pytest.approx(0.45)


def test_thresholds_per_tenant_parse_or_name_the_setting() -> None:
    assert parse_thresholds(" acme=0.6, globex=0.25 ") == {"acme": 0.6, "globex": 0.25}
    assert parse_thresholds("") == {}
    for bad in ("acme", "acme=high", "acme=1.5", "=0.3"):
        with pytest.raises(ConfigError) as err:
            parse_thresholds(bad)
        assert err.value.field == "NUGGETFLOW_GATE_THRESHOLDS"


def test_settings_refuse_an_unknown_gate_and_an_endpoint_without_url() -> None:
    with pytest.raises(ConfigError) as err:
        Settings.from_env({"NUGGETFLOW_GATE": "magic"})
    assert err.value.field == "NUGGETFLOW_GATE"
    with pytest.raises(ConfigError):
        Settings.from_env({"NUGGETFLOW_GATE": "endpoint"})
    with pytest.raises(ConfigError) as err:
        Settings.from_env({"NUGGETFLOW_GATE_THRESHOLD": "1.2"})
    assert err.value.field == "NUGGETFLOW_GATE_THRESHOLD"


class Corpus:
    """Mining callbacks over synthetic pages: the page's own passage answers its title."""

    def __init__(self, pages: int) -> None:
        self.lists = {f"page {i} title": synthetic_lists(1, seed=i)[0] for i in range(pages)}
        self.fits = 0

    async def titles(self, tenant: str) -> list[tuple[str, str]]:
        self.fits += 1
        return [(next(it.origin for it, r in zip(j.items, j.relevant, strict=True) if r), q)
                for q, j in self.lists.items()]

    async def candidates(self, tenant: str, query: str) -> list[RerankItem]:
        return list(self.lists[query].items)

    async def shift(self, tenant: str) -> float:
        return 0.1


async def test_gate_fits_per_tenant_once_reports_and_refits_after_invalidate() -> None:
    corpus = Corpus(60)
    gate = Gate(Settings(gate_thresholds="strict=0.9"))
    g = await gate.for_tenant("acme", corpus.candidates, corpus.titles, corpus.shift)
    assert isinstance(g.reranker, FeatureReranker) and g.calibrate is not None
    assert g.threshold == 0.5 and g.anchor_shift == 0.1
    assert g.report["lists"] == 60 and 0 <= g.report["ece"] < 0.2
    assert g.report["heldout_recall"] > g.report["heldout_false_pass"]
    assert await gate.for_tenant("acme", corpus.candidates, corpus.titles,
                                 corpus.shift) is g
    assert corpus.fits == 1
    strict = await gate.for_tenant("strict", corpus.candidates, corpus.titles, corpus.shift)
    assert strict.threshold == 0.9
    gate.invalidate("acme")
    assert gate.fitted("acme") is None and gate.fitted("strict") is strict
    await gate.for_tenant("acme", corpus.candidates, corpus.titles, corpus.shift)
    assert corpus.fits == 3
    probs = await g.probabilities("page 1 title", list(corpus.lists["page 1 title"].items))
    assert ((probs >= 0) & (probs <= 1)).all()


async def test_a_small_corpus_falls_back_to_the_cosine_rule_uncalibrated() -> None:
    corpus = Corpus(5)
    g = await Gate(Settings()).for_tenant("tiny", corpus.candidates, corpus.titles,
                                          corpus.shift)
    assert isinstance(g.reranker, CosineReranker) and g.calibrate is None
    assert g.threshold == pytest.approx(0.45)


async def test_fixed_thresholds_give_the_cosine_rule_with_the_anchor_offset() -> None:
    corpus = Corpus(60)
    gate = Gate(Settings(), fixed=(0.4, 0.55))
    g = await gate.for_tenant("t", corpus.candidates, corpus.titles, corpus.shift)
    assert corpus.fits == 0 and g.calibrate is None and g.threshold == 0.4
    assert g.anchor_shift == pytest.approx(0.2)
    # 0.75 x max(0.3, 0.8 - 0.2) + 0.25 x coverage(0)
    [score] = await g.probabilities("zzz", [nugget("n", "body", 0.3, 0.8)])
    assert score == pytest.approx(0.45)


def test_slots_on_several_event_loops_fit_a_tenant_once() -> None:
    import asyncio
    import threading

    corpus = Corpus(40)
    gate = Gate(Settings())
    got: list[object] = []

    async def slow_titles(tenant: str) -> list[tuple[str, str]]:
        await asyncio.sleep(0.2)  # the other slot arrives while this one fits
        return await corpus.titles(tenant)

    def slot() -> None:
        got.append(asyncio.run(gate.for_tenant("acme", corpus.candidates, slow_titles,
                                               corpus.shift)))

    threads = [threading.Thread(target=slot) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert corpus.fits == 1 and len(got) == 3 and got[0] is got[1] is got[2]
