"""Hybrid retrieval: validation errors name the field, fusion, hits and context block."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import datetime
from pathlib import Path

import pytest

from nuggetflow.errors import NotFoundError, ValidationError
from nuggetflow.settings import Settings
from query.backends.sqlite import SQLiteStore
from query.embeddings import MiniLMEmbedder
from query.fusion import fuse_minmax, fuse_rrf
from query.index import NuggetIndex
from query.model import ItemType, Nugget, Passage, Publication, Validity
from query.retrieval import RetrieveRequest
from query.store import Scored
from tests.helpers import T0, days, make_nugget, make_passage


@pytest.fixture
async def index(tmp_path: Path, embedder: MiniLMEmbedder, settings: Settings
                ) -> AsyncIterator[NuggetIndex]:
    idx = NuggetIndex(SQLiteStore(tmp_path / "r.db"), embedder, settings)
    await idx.start()
    await idx.ingest_passages([
        make_passage(title="Resetting your own password",
                     text="If your password reset isn't working, use Forgot password."),
        make_passage(pid="doc-2#0", title="Changing the wallpaper",
                     text="Open Settings and pick Background to change the wallpaper.")])
    sub = await idx.submit(make_nugget(publication=Publication.DRAFT))
    await idx.approve("acme", sub.id)
    yield idx
    await idx.stop()


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"query": ""}, "query"), ({"query": "   "}, "query"), ({"k": 0}, "k"), ({"k": -3}, "k"),
    ({"k": 1001}, "k"), ({"tenant": ""}, "tenant"), ({"fusion": "sum"}, "fusion"),
    ({"as_of": datetime(2024, 1, 1)}, "as_of"), ({"query": "x" * 2001}, "query"),
])
async def test_bad_requests_name_the_field(index: NuggetIndex, kwargs: dict[str, object],
                                           field: str) -> None:
    base: dict[str, object] = {"tenant": "acme", "query": "password", "k": 5}
    base.update(kwargs)
    with pytest.raises(ValidationError) as err:
        await index.retriever.retrieve(RetrieveRequest(**base))  # type: ignore[arg-type]
    assert err.value.field == field


async def test_unknown_tenant_is_not_found(index: NuggetIndex) -> None:
    with pytest.raises(NotFoundError) as err:
        await index.retriever.retrieve(RetrieveRequest("initech", "password"))
    assert err.value.field == "tenant"


def test_validity_end_before_start_is_rejected() -> None:
    with pytest.raises(ValidationError) as err:
        Validity(T0, T0 - days(1))
    assert err.value.field == "validity.end"
    with pytest.raises(ValidationError):
        Validity(T0, T0)


async def test_hits_mix_documents_and_nuggets_with_component_scores(index: NuggetIndex
                                                                    ) -> None:
    res = await index.retriever.retrieve(RetrieveRequest(
        "acme", "who can reset another user's password", as_of=T0 + days(1), k=3))
    types = [h.type for h in res.hits]
    assert ItemType.NUGGET in types and ItemType.DOCUMENT in types
    for h in res.hits:
        assert 0.0 <= h.lexical <= 1.0 and 0.0 <= h.dense <= 1.0
        assert h.fused == pytest.approx(0.4 * h.lexical + 0.5 * h.dense + 0.1 * h.metadata)
    assert [h.fused for h in res.hits] == sorted((h.fused for h in res.hits), reverse=True)
    assert "Established facts:" in res.context_block and "Passages:" in res.context_block
    lex = await index.retriever.retrieve(RetrieveRequest(
        "acme", "wallpaper", as_of=T0 + days(1), k=3, fusion="rrf"), lexical_only=True)
    assert lex.hits[0].title == "Changing the wallpaper" and lex.hits[0].dense == 0.0


def test_minmax_fusion_normalizes_each_retriever() -> None:
    lex = [Scored("a", ItemType.NUGGET, 10.0, 1.0), Scored("b", ItemType.DOCUMENT, 5.0, 0.5)]
    den = [Scored("b", ItemType.DOCUMENT, 0.9, 0.5), Scored("c", ItemType.NUGGET, 0.3, 0.0)]
    fused = {f.id: f for f in fuse_minmax(lex, den, 0.4, 0.5, 0.1)}
    assert fused["a"].lexical == 1.0 and fused["a"].dense == 0.0
    assert fused["b"].lexical == 0.0 and fused["b"].dense == 1.0
    assert fused["a"].fused == pytest.approx(0.4 + 0.1)
    assert fused["b"].fused == pytest.approx(0.5 + 0.05)
    assert fused["c"].fused == pytest.approx(0.0)


def test_rrf_sums_reciprocal_ranks() -> None:
    lex = [Scored("a", ItemType.NUGGET, 10.0), Scored("b", ItemType.NUGGET, 5.0)]
    den = [Scored("b", ItemType.NUGGET, 0.9)]
    fused = fuse_rrf(lex, den, k=60)
    assert [f.id for f in fused] == ["b", "a"]
    assert fused[0].fused == pytest.approx(1 / 62 + 1 / 61)


async def test_a_hit_carries_at_most_max_hit_chars(tmp_path: Path, embedder: MiniLMEmbedder
                                                   ) -> None:
    """A huge stored passage (a 2 MB single word, as old ingestion stored them) does not
    make every Retrieve of its tenant too large: title and text are cut."""
    settings = Settings.from_env({}, max_hit_chars=300)
    idx = NuggetIndex(SQLiteStore(tmp_path / "big.db"), embedder, settings)
    await idx.start()
    big = make_passage(pid="big#0", title="Huge " + "t" * 5000, text="w" * 2_000_000)
    small = make_passage(pid="small#0", title="Huge page about huge things", text="Small.")
    await idx.store.add_passages([big, small], embedder.embed(["huge", "huge things"]))
    res = await idx.retriever.retrieve(RetrieveRequest("acme", "huge", k=5,
                                                       as_of=T0 + days(1)))
    hits = {h.id: h for h in res.hits}
    assert set(hits) == {"big#0", "small#0"}
    assert len(hits["big#0"].text) == 300 and hits["big#0"].text.endswith("…")
    assert len(hits["big#0"].title) == 300
    assert hits["small#0"].text == "Small."
    assert len(res.context_block) < 1000
    await idx.stop()


async def test_a_hit_carries_a_bounded_nugget_record(tmp_path: Path, embedder: MiniLMEmbedder,
                                                     settings: Settings) -> None:
    """A nugget made from a huge feedback message, with a long optimization trace and
    many anchors, does not make a Retrieve response huge: the hit's record is cut
    (GetNugget still returns all of it)."""
    import dataclasses

    from query.model import Provenance

    idx = NuggetIndex(SQLiteStore(tmp_path / "big.db"), embedder, settings)
    await idx.start()
    try:
        big = make_nugget(publication=Publication.DRAFT)
        big = dataclasses.replace(
            big, anchors=tuple(f"reset question {i}" for i in range(60)),
            provenance=Provenance(event_id="ev-big", feedback_text="x" * 200_000,
                                  corrected_answer="y" * 50_000, tenant="acme"),
            optimization={"history": [{"probes": ["z" * 10_000] * 20}]})
        sub = await idx.submit(big)
        await idx.approve("acme", sub.id)
        res = await idx.retriever.retrieve(RetrieveRequest("acme", "password reset", k=5))
        [hit] = [h for h in res.hits if h.type is ItemType.NUGGET]
        rec = hit.record
        cap = settings.max_hit_chars
        assert rec is not None and not isinstance(rec, type(None))
        assert len(rec.provenance.feedback_text) == cap  # type: ignore[union-attr]
        assert len(rec.provenance.corrected_answer) == cap  # type: ignore[union-attr]
        assert len(rec.anchors) == 20 and rec.optimization is None  # type: ignore[union-attr]
        full = await idx.head("acme", sub.id)
        assert len(full.provenance.feedback_text) == 200_000 and full.optimization
    finally:
        await idx.stop()


@pytest.mark.parametrize("gate", [False, True])
async def test_candidates_whose_records_cannot_be_read_make_the_answer_unavailable(
        index: NuggetIndex, monkeypatch: pytest.MonkeyPatch, gate: bool) -> None:
    """A search that finds candidates whose records the store then does not return (a
    cluster whose copies disagree while it recovers) is no empty answer: the caller gets
    BackendUnavailableError (UNAVAILABLE) and retries, never a partial list."""
    from nuggetflow.errors import BackendUnavailableError

    req = RetrieveRequest("acme", "who can reset another user's password",
                          as_of=T0 + days(1), k=3, gate=gate)
    whole = await index.retriever.retrieve(req)
    assert whole.hits
    fetch = index.store.fetch

    async def without_the_first(tenant: str, ids: Sequence[str]
                                ) -> dict[str, Nugget | Passage]:
        records = await fetch(tenant, ids)
        records.pop(whole.hits[0].id, None)
        return records

    monkeypatch.setattr(index.store, "fetch", without_the_first)
    with pytest.raises(BackendUnavailableError, match="could not be read"):
        await index.retriever.retrieve(req)


def test_at_most_the_set_number_of_passages_of_one_document_pass() -> None:
    from query.retrieval import _per_document
    records: dict[str, Nugget | Passage] = {
        p.id: p for p in (make_passage(pid="manual-vacuum#0"), make_passage(pid="manual-vacuum#1"),
                          make_passage(pid="manual-vacuum#2"), make_passage(pid="manual-locks#0"))}
    nugget = make_nugget()
    records[nugget.id] = nugget
    ranked = ["manual-vacuum#0", "manual-vacuum#1", "manual-vacuum#2", nugget.id,
              "manual-locks#0"]
    # one passage per manual page: the nugget and the other page move up into the top 3
    assert _per_document(ranked, records, 1)[:3] == ["manual-vacuum#0", nugget.id,
                                                     "manual-locks#0"]
    assert _per_document(ranked, records, 2)[:3] == [*ranked[:2], nugget.id]
    assert _per_document(ranked, records, 0) == ranked  # no limit
    # a probe's overlay has no record here and is its own document
    assert _per_document(["overlay:1", *ranked], records, 1)[:2] == ["overlay:1",
                                                                      "manual-vacuum#0"]


def test_a_negative_passage_limit_is_a_config_error() -> None:
    from nuggetflow.errors import ConfigError
    with pytest.raises(ConfigError) as err:
        Settings(passages_per_document=-1).validate()
    assert "NUGGETFLOW_PASSAGES_PER_DOCUMENT" in str(err.value.field or err.value)
