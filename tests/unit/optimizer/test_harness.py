"""The probe harness: it retrieves through the service's retriever and gate, so a probe
sees what a user's Retrieve sees."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from nuggetflow.errors import NotFoundError
from nuggetflow.settings import Settings
from optimizer.accounting import Meter
from optimizer.harness import BuiltinHarness, make_candidate
from optimizer.local import local_roles
from optimizer.types import NuggetDraft
from query.backends.sqlite import SQLiteStore
from query.corpus import Document, passages_of
from query.embeddings import MiniLMEmbedder
from query.gate import FeatureReranker
from query.index import NuggetIndex
from query.model import ItemType
from query.retrieval import RetrieveRequest

CORPUS = Path(__file__).resolve().parents[3] / "bench" / "data" / "gnome-help" / "corpus.jsonl"
T0 = datetime(2025, 1, 1, tzinfo=UTC)
AS_OF = datetime(2025, 6, 1, tzinfo=UTC)


@pytest.fixture
async def index(embedder: MiniLMEmbedder, settings: Settings) -> AsyncIterator[NuggetIndex]:
    index = NuggetIndex(SQLiteStore(":memory:"), embedder, settings)
    await index.start()
    rows = [json.loads(line) for line in CORPUS.read_text().splitlines()[:80]]
    for r in rows:
        await index.ingest_passages(passages_of(
            Document(r["id"], "gnome", r["title"], r["text"], valid_from=T0), 800))
    yield index
    await index.stop()


@pytest.fixture
async def harness(index: NuggetIndex, settings: Settings) -> AsyncIterator[BuiltinHarness]:
    h = BuiltinHarness(index.store, index.embedder, local_roles().generator, settings,
                       as_of=AS_OF, gate=index.retriever.gate)
    yield h
    await h.close()


DRAFT = NuggetDraft(title="Screen reader shortcut",
                    body="Press Super+Alt+S to turn the screen reader on or off.",
                    anchors=("how do i make the computer read the screen aloud",))
QUERY = "how can i get the computer to read the screen aloud"


async def test_a_probe_sees_the_gated_list_a_user_would(harness: BuiltinHarness,
                                                        index: NuggetIndex) -> None:
    trace = await harness.run("gnome", "Turn on bounce keys", None, Meter())
    res = await index.retriever.retrieve(RetrieveRequest("gnome", "Turn on bounce keys",
                                                         as_of=AS_OF, k=3))
    assert res.gated and trace.reached == [h.id for h in res.hits]
    assert trace.rerank == pytest.approx(res.relevance)
    assert [i for i, _ in trace.retrieved] == [i for i, _ in res.candidates][:60]
    assert trace.reached and all(trace.rerank[i] >= 0.5 for i in trace.reached)
    fitted = index.retriever.gate.fitted("gnome")
    assert fitted is not None and isinstance(fitted.reranker, FeatureReranker)


async def test_the_candidate_is_gated_like_an_indexed_nugget(harness: BuiltinHarness,
                                                             embedder: MiniLMEmbedder) -> None:
    cand = make_candidate(embedder, "n-test", DRAFT)
    qvec = embedder.embed([QUERY])[0]
    assert cand.cosine(qvec) > cand.cosine(qvec, anchors=False) + 0.1  # anchor matched
    trace = await harness.run("gnome", QUERY, cand, Meter())
    assert "n-test" in trace.rerank and 0.0 <= trace.rerank["n-test"] <= 1.0
    assert "n-test" in trace.reached and trace.reached[0] == "n-test"
    assert "n-test" in trace.cited
    # Without its anchor vectors the same candidate is judged by its statement alone,
    # which is less probable.
    harness.anchor_vectors = False
    plain = await harness.run("gnome", QUERY, cand, Meter())
    assert plain.rerank.get("n-test", 0.0) < trace.rerank["n-test"]


async def test_an_off_topic_candidate_stays_below_the_gate(harness: BuiltinHarness,
                                                           embedder: MiniLMEmbedder) -> None:
    cand = make_candidate(embedder, "n-test", DRAFT)
    trace = await harness.run("gnome", "Turn on bounce keys", cand, Meter())
    assert "n-test" not in trace.reached
    reached_types = {i.split("#")[0] for i in trace.reached}
    assert reached_types and "n-test" not in reached_types


async def test_fixed_thresholds_keep_the_cosine_rule(index: NuggetIndex, settings: Settings,
                                                     embedder: MiniLMEmbedder) -> None:
    h = BuiltinHarness(index.store, embedder, local_roles().generator, settings,
                       as_of=AS_OF, threshold=0.3)
    try:
        cand = make_candidate(embedder, "n-test", DRAFT)
        trace = await h.run("gnome", QUERY, cand, Meter())
        assert all(v >= 0.3 for k, v in trace.rerank.items() if k in trace.reached)
        assert "n-test" in trace.reached
        # Uncalibrated: the rule's raw score, not a probability.
        assert h.gate.fitted("gnome") is not None
        assert h.gate.fitted("gnome").calibrate is None  # type: ignore[union-attr]
    finally:
        await h.close()


async def test_retrieve_without_the_gate_is_the_fused_order(index: NuggetIndex) -> None:
    res = await index.retriever.retrieve(RetrieveRequest("gnome", "bounce keys", as_of=AS_OF,
                                                         k=5), gate=False)
    assert not res.gated and res.relevance == {}
    assert [h.id for h in res.hits] == [i for i, _ in res.candidates][:5]
    assert all(h.type is ItemType.DOCUMENT for h in res.hits)


async def test_a_probe_on_a_tenant_with_nothing_indexed_yet_works(
        harness: BuiltinHarness, index: NuggetIndex, embedder: MiniLMEmbedder) -> None:
    # The tenant's first correction: its frozen view is empty, not an unknown tenant.
    cand = make_candidate(embedder, "n-first", DRAFT)
    trace = await harness.run("newcomer", QUERY, cand, Meter())
    assert trace.reached == ["n-first"] and trace.cited == ["n-first"]
    # A user's query for that tenant is still NOT_FOUND.
    with pytest.raises(NotFoundError):
        await index.retriever.retrieve(RetrieveRequest("newcomer", QUERY))


async def test_a_blank_probe_retrieves_nothing_instead_of_failing(
        harness: BuiltinHarness, embedder: MiniLMEmbedder) -> None:
    # A paraphrase of a query without words can be blank (the fuzzer found one).
    cand = make_candidate(embedder, "n-test", DRAFT)
    trace = await harness.run("gnome", "  ", cand, Meter())
    assert trace.reached == [] and trace.cited == [] and trace.retrieved == []


async def test_corpus_vocabulary_says_which_query_words_the_passages_use(
        index: NuggetIndex) -> None:
    from optimizer.pipeline import corpus_vocabulary
    from optimizer.types import Vocabulary

    vocab = await corpus_vocabulary(index.store, "gnome", "screen brightness wobblified",
                                    AS_OF, "screen brightness wobblified",
                                    embedder=index.embedder)
    assert isinstance(vocab, Vocabulary) and len(vocab) == 5
    assert {"screen", "brightness"} <= vocab.spoken  # the help pages say these
    assert "wobblified" not in vocab.spoken  # nobody writes this word
    assert not {"screen", "brightness"} & set(vocab)  # q0's own words are excluded
