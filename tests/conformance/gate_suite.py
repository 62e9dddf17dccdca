"""The gate on a store: fitted on the tenant's own corpus, calibrated, applied the same
way to Retrieve and to a probe, and refitted when the corpus changes.

Every backend's test module subclasses :class:`GateConformance` and provides the
``store`` fixture (a started, empty store). The corpus is the first 60 pages of the
shipped GNOME help corpus, enough for the feature scorer to be fitted and calibrated.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from nuggetflow.settings import Settings
from optimizer.accounting import Meter
from optimizer.harness import BuiltinHarness, make_candidate
from optimizer.local import local_roles
from optimizer.types import NuggetDraft
from query.corpus import Document, passages_of
from query.embeddings import MiniLMEmbedder
from query.gate import FeatureReranker
from query.index import NuggetIndex
from query.model import FactTriple, ItemType, Nugget, Validity
from query.retrieval import RetrieveRequest
from query.store import IndexStore

CORPUS = Path(__file__).resolve().parents[2] / "bench" / "data" / "gnome-help" / "corpus.jsonl"
T0 = datetime(2025, 1, 1, tzinfo=UTC)
AS_OF = datetime(2025, 6, 1, tzinfo=UTC)
TENANT = "acme"


class GateConformance:
    """Subclasses provide ``store`` (a started, empty store)."""

    @pytest.fixture
    async def index(self, store: IndexStore, embedder: MiniLMEmbedder) -> NuggetIndex:
        index = NuggetIndex(store, embedder, Settings.from_env({}))
        rows = [json.loads(line) for line in CORPUS.read_text().splitlines()[:60]]
        for r in rows:
            await index.ingest_passages(passages_of(
                Document(r["id"], TENANT, r["title"], r["text"], valid_from=T0), 800))
        return index

    async def test_the_gate_is_fitted_on_the_corpus_and_passes_the_answering_page(
            self, index: NuggetIndex) -> None:
        res = await index.retriever.retrieve(RetrieveRequest(
            TENANT, "how do I stop keys repeating when I press them twice", as_of=AS_OF, k=3))
        assert res.gated and res.hits
        fitted = index.retriever.gate.fitted(TENANT)
        assert fitted is not None and isinstance(fitted.reranker, FeatureReranker)
        assert fitted.report["ece"] < 0.15  # calibrated on lists it did not learn from
        assert fitted.report["heldout_recall"] > 3 * fitted.report["heldout_false_pass"]
        assert all(h.relevance >= fitted.threshold for h in res.hits)
        assert [h.relevance for h in res.hits] == sorted((h.relevance for h in res.hits),
                                                         reverse=True)
        assert res.hits[0].record is not None
        assert res.hits[0].record.doc_id == "a11y-bouncekeys"  # type: ignore[union-attr]

    async def test_a_published_nugget_passes_for_its_question_not_for_another_page(
            self, index: NuggetIndex) -> None:
        sub = await index.submit(Nugget(
            tenant=TENANT, title="Bounce keys delay on company laptops",
            body="On company laptops the bounce keys acceptance delay is fixed at 0.5 "
                 "seconds by policy and the slider is greyed out.",
            anchors=("bounce keys slider greyed out", "cannot change bounce keys delay"),
            fact=FactTriple("bounce keys delay", "is fixed at", "0.5 seconds", "laptops"),
            validity=Validity(T0)))
        await index.approve(TENANT, sub.id, reviewer="test")
        head = await index.head(TENANT, sub.id)
        hit = await index.retriever.retrieve(RetrieveRequest(
            TENANT, "why can't I change the bounce keys delay slider", as_of=AS_OF, k=3))
        assert head.id in [h.id for h in hit.hits]
        other = await index.retriever.retrieve(RetrieveRequest(
            TENANT, "Accessibility", as_of=AS_OF, k=3))
        assert head.id not in [h.id for h in other.hits]
        assert other.relevance.get(head.id, 0.0) < hit.relevance[head.id]

    async def test_a_probe_and_retrieve_return_the_same_gated_list(
            self, index: NuggetIndex, embedder: MiniLMEmbedder) -> None:
        settings = Settings.from_env({})
        harness = BuiltinHarness(index.store, embedder, local_roles().generator, settings,
                                 as_of=AS_OF, gate=index.retriever.gate)
        try:
            for query in ("Turn on bounce keys", "make the pointer bigger",
                          "read the screen aloud"):
                trace = await harness.run(TENANT, query, None, Meter())
                res = await index.retriever.retrieve(RetrieveRequest(TENANT, query,
                                                                     as_of=AS_OF, k=3))
                assert trace.reached == [h.id for h in res.hits]
                assert trace.rerank == pytest.approx(res.relevance)
            cand = make_candidate(embedder, "candidate:x", NuggetDraft(
                "Bounce keys delay on company laptops",
                "On company laptops the bounce keys acceptance delay is fixed at 0.5 "
                "seconds by policy.", ("cannot change bounce keys delay",)))
            trace = await harness.run(TENANT, "bounce keys delay cannot be changed", cand,
                                      Meter())
            assert "candidate:x" in trace.reached
            # The probe's candidate was never written: Retrieve does not see it.
            res = await index.retriever.retrieve(RetrieveRequest(
                TENANT, "bounce keys delay cannot be changed", as_of=AS_OF, k=3))
            assert "candidate:x" not in res.relevance
        finally:
            await harness.close()

    async def test_a_corpus_change_refits_the_gate(self, index: NuggetIndex) -> None:
        await index.retriever.retrieve(RetrieveRequest(TENANT, "bounce keys", as_of=AS_OF))
        first = index.retriever.gate.fitted(TENANT)
        assert first is not None
        await index.ingest_passages(passages_of(Document(
            "vpn", TENANT, "Connect to the company VPN", "Open Settings, Network, VPN and "
            "import the profile from the intranet.", valid_from=T0), 800))
        assert index.retriever.gate.fitted(TENANT) is None
        res = await index.retriever.retrieve(RetrieveRequest(
            TENANT, "how do I connect to the company VPN", as_of=AS_OF, k=3))
        assert index.retriever.gate.fitted(TENANT) is not first
        assert [h.id for h in res.hits][:1] == ["vpn#0"]
        assert all(h.type is ItemType.DOCUMENT for h in res.hits)
