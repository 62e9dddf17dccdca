"""Each governance rule of docs/architecture.md, "Governance", one test each, through
NuggetIndex on SQLite."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from nuggetflow.errors import ConfigError, InvalidTransitionError, ValidationError
from nuggetflow.settings import Settings
from query.backends.sqlite import SQLiteStore
from query.embeddings import MiniLMEmbedder
from query.governance import PredicateSchema, is_duplicate, transition
from query.index import NuggetIndex
from query.model import Nugget, Publication, State, View
from query.retrieval import RetrieveRequest
from tests.helpers import T0, days, make_nugget

pytestmark = pytest.mark.asyncio


@pytest.fixture
async def index(tmp_path: Path, embedder: MiniLMEmbedder, settings: Settings
                ) -> AsyncIterator[NuggetIndex]:
    schema = PredicateSchema.from_mapping({"supported_browser": "multi"})
    idx = NuggetIndex(SQLiteStore(tmp_path / "g.db"), embedder, settings, schema,
                      clock=lambda: T0 + days(200))
    await idx.start()
    yield idx
    await idx.stop()


async def publish(index: NuggetIndex, n: Nugget) -> Nugget:
    sub = await index.submit(n)
    return await index.approve(n.tenant, sub.id, reviewer="test")


async def head(index: NuggetIndex, n: Nugget) -> Nugget:
    return await index.head(n.tenant, n.id if n.id else n.lineage_id)


async def visible(index: NuggetIndex, query: str, view: View = View.ACTIVE,
                  as_of_days: float = 300) -> list[Nugget]:
    res = await index.retriever.retrieve(RetrieveRequest(
        "acme", query, as_of=T0 + days(as_of_days), view=view, k=20, include_documents=False))
    return [h.record for h in res.hits if isinstance(h.record, Nugget)]


def cand(obj: str, sources: tuple[str, ...], **kw: object) -> Nugget:
    n = make_nugget(obj=obj, sources=sources, publication=Publication.DRAFT, **kw)  # type: ignore[arg-type]
    return n


async def test_key_normalizes_subject_but_not_meaning() -> None:
    a = make_nugget(subject="  Portal   Password Reset ")
    b = make_nugget(subject="portal password reset")
    assert a.key == b.key
    assert a.key != make_nugget(scope="portal v9.0").key


async def test_dedup_merges_and_accumulates_evidence(index: NuggetIndex) -> None:
    first = await publish(index, cand("Workspace Owner", ("ev-1",)))
    dup = await publish(index, cand("workspace owner.", ("ev-2",), title="Owner resets"))
    assert dup.publication is Publication.UNPUBLISHED
    assert dup.merged_into == first.lineage_id
    dup_history = await index.store.history("acme", dup.id)
    assert dup_history[-1].parent_id == dup_history[-2].id  # no dangling parent
    merged = await index.head("acme", first.id)
    assert merged.sources == {"ev-1", "ev-2"}
    assert merged.version == first.version + 1
    assert [n.id for n in await visible(index, "workspace owner password reset")] == [merged.id]


async def test_near_equal_threshold_is_jaccard_085() -> None:
    a = make_nugget(obj="Workspace Owner role")
    assert is_duplicate(a, make_nugget(obj="Workspace Owner role."))
    assert not is_duplicate(a, make_nugget(obj="Workspace Admin role"))


async def test_succession_for_later_start_ends_the_old_value(index: NuggetIndex) -> None:
    old = await publish(index, cand("Admin", ("ev-1",)))
    new = await publish(index, cand("Workspace Owner", ("ev-2",), start=T0 + days(100)))
    old_head = await index.head("acme", old.id)
    assert old_head.state is State.ACTIVE and old_head.validity.end == T0 + days(100)
    assert new.state is State.ACTIVE
    assert [n.fact.object for n in await visible(index, "password reset", as_of_days=50)] == [
        "Admin"]
    assert [n.fact.object for n in await visible(index, "password reset", as_of_days=150)] == [
        "Workspace Owner"]
    assert len(await index.store.history("acme", old.id)) == 3  # nothing deleted


async def test_disjoint_validity_needs_no_change(index: NuggetIndex) -> None:
    old = await publish(index, cand("Admin", ("ev-1",), end=T0 + days(10)))
    new = await publish(index, cand("Owner", ("ev-2",), start=T0 + days(20)))
    assert (await index.head("acme", old.id)).validity.end == T0 + days(10)
    assert new.state is State.ACTIVE


async def test_overlap_two_sources_deprecate_old(index: NuggetIndex) -> None:
    old = await publish(index, cand("Admin", ("ev-1",)))
    new = await publish(index, cand("Workspace Owner", ("ev-2", "ev-3")))
    assert (await index.head("acme", old.id)).state is State.DEPRECATED
    assert new.state is State.ACTIVE
    seen = await visible(index, "password reset", view=View.ACTIVE_PLUS_CONTESTED)
    assert [n.fact.object for n in seen] == ["Workspace Owner"]


async def test_overlap_old_with_superior_evidence_deprecates_candidate(
        index: NuggetIndex) -> None:
    old = await publish(index, cand("Admin", ("ev-1", "ev-2", "ev-3")))
    new = await publish(index, cand("Workspace Owner", ("ev-4", "ev-5")))
    assert new.state is State.DEPRECATED and new.publication is Publication.PUBLISHED
    assert (await index.head("acme", old.id)).state is State.ACTIVE


async def test_overlap_weak_evidence_makes_both_contested(index: NuggetIndex) -> None:
    old = await publish(index, cand("Admin", ("ev-1",)))
    new = await publish(index, cand("Workspace Owner", ("ev-2",)))
    assert (await index.head("acme", old.id)).state is State.CONTESTED
    assert new.state is State.CONTESTED
    assert await visible(index, "password reset") == []
    flagged = await index.retriever.retrieve(RetrieveRequest(
        "acme", "password reset", as_of=T0 + days(300), view=View.ACTIVE_PLUS_CONTESTED))
    assert {h.contested for h in flagged.hits} == {True}
    assert "Disputed" in flagged.context_block
    assert "Established facts" not in flagged.context_block


async def test_dispute_resolves_at_three_sources(index: NuggetIndex) -> None:
    old = await publish(index, cand("Admin", ("ev-1",)))
    new = await publish(index, cand("Workspace Owner", ("ev-2",)))
    # Two more independent confirmations of "Workspace Owner" arrive and merge.
    await publish(index, cand("Workspace Owner", ("ev-3",), title="Owner only"))
    assert (await index.head("acme", new.id)).state is State.CONTESTED  # 2 sources: not yet
    await publish(index, cand("Workspace Owner", ("ev-4",), title="Owner only!"))
    winner = await index.head("acme", new.id)
    assert winner.state is State.ACTIVE and len(winner.sources) == 3
    assert (await index.head("acme", old.id)).state is State.DEPRECATED


async def test_new_value_joining_dispute_stays_contested(index: NuggetIndex) -> None:
    await publish(index, cand("Admin", ("ev-1",)))
    await publish(index, cand("Workspace Owner", ("ev-2",)))
    third = await publish(index, cand("Team Lead", ("ev-3", "ev-4")))
    assert third.state is State.CONTESTED


async def test_multi_valued_predicate_accepts_concurrent_values(index: NuggetIndex) -> None:
    a = await publish(index, cand("Firefox", ("ev-1",), predicate="supported_browser"))
    b = await publish(index, cand("Chrome", ("ev-2",), predicate="supported_browser"))
    assert (await index.head("acme", a.id)).state is State.ACTIVE
    assert b.state is State.ACTIVE


async def test_predicate_schema_from_file(tmp_path: Path) -> None:
    f = tmp_path / "schema.json"
    f.write_text('{"supported_browser": "multi", "allowed_role": "functional"}')
    schema = PredicateSchema.from_file(f)
    assert not schema.is_functional("Supported_Browser")
    assert schema.is_functional("allowed_role") and schema.is_functional("unknown")
    f.write_text('{"x": "sometimes"}')
    with pytest.raises(ConfigError):
        PredicateSchema.from_file(f)


async def test_publication_transitions() -> None:
    assert transition(Publication.PENDING_REVIEW, "approve") is Publication.PUBLISHED
    assert transition(Publication.PUBLISHED, "unpublish") is Publication.UNPUBLISHED
    assert transition(Publication.UNPUBLISHED, "approve") is Publication.PUBLISHED
    with pytest.raises(InvalidTransitionError) as err:
        transition(Publication.REJECTED, "approve")
    assert err.value.field == "action"
    with pytest.raises(InvalidTransitionError):
        transition(Publication.PUBLISHED, "reject")


async def test_unpublish_is_reversible_and_keeps_history(index: NuggetIndex) -> None:
    pub = await publish(index, cand("Workspace Owner", ("ev-1",)))
    un = await index.review("acme", pub.id, "unpublish", reviewer="r", reason="wrong scope")
    assert un.publication is Publication.UNPUBLISHED
    assert await visible(index, "password reset") == []
    again = await index.review("acme", pub.id, "approve", reviewer="r")
    assert again.publication is Publication.PUBLISHED
    hist = await index.store.history("acme", pub.id)
    assert [h.publication for h in hist] == [Publication.PENDING_REVIEW, Publication.PUBLISHED,
                                             Publication.UNPUBLISHED, Publication.PUBLISHED]
    assert all(h.parent_id == hist[i].id for i, h in enumerate(hist[1:]))


async def test_reject_hides_and_revert_restores_content(index: NuggetIndex) -> None:
    pub = await publish(index, cand("Workspace Owner", ("ev-1",)))
    edited = await index.edit("acme", pub.id, "typo", title="Workspace Owner resets passwords")
    assert edited.title == "Workspace Owner resets passwords" and edited.version == 3
    back = await index.review("acme", pub.id, "revert", reviewer="r", target_version_id=pub.id)
    assert back.title == pub.title and back.version == 4
    other = await index.submit(cand("Admin", ("ev-9",), scope="portal v9"))
    rejected = await index.review("acme", other.id, "reject", reviewer="r")
    assert rejected.publication is Publication.REJECTED
    with pytest.raises(ValidationError):
        await index.review("acme", pub.id, "revert", target_version_id="n-nope")


async def test_submit_is_idempotent_for_redelivered_candidates(index: NuggetIndex) -> None:
    a = await index.submit(cand("Workspace Owner", ("ev-1",)))
    b = await index.submit(cand("Workspace Owner", ("ev-1",)))
    assert a.id == b.id
    assert len(await index.store.history("acme", a.id)) == 1


async def test_neighbourhood_reads_recorded_relations() -> None:
    """A published nugget's neighbours as the records state them (no approval to predict):
    a value it deprecated, one whose validity ended where it starts, a merged duplicate,
    a dispute, and a multi-valued predicate."""
    from query.governance import neighbourhood

    me = make_nugget(obj="Team Lead", sources=("e1", "e2"), start=T0 + days(10))
    deprecated = make_nugget(obj="Admin", sources=("e3",), state=State.DEPRECATED,
                             start=T0 + days(5))
    ended = make_nugget(obj="Owner", sources=("e4",), start=T0, end=T0 + days(10))
    merged = dataclasses.replace(make_nugget(obj="Team Lead.", sources=("e5",)),
                                 merged_into=me.id, publication=Publication.UNPUBLISHED)
    relations, outcome = neighbourhood(me, [deprecated, ended, merged], PredicateSchema(),
                                       T0 + days(20))
    assert outcome == ""
    assert [(r.kind, r.other.id) for r in relations] == [
        ("supersedes", deprecated.id), ("supersedes", ended.id), ("duplicates", merged.id)]
    rival = make_nugget(obj="Analyst", sources=("e6",), state=State.CONTESTED,
                        start=T0 + days(10))
    contested = dataclasses.replace(me, state=State.CONTESTED)
    [r] = neighbourhood(contested, [rival], PredicateSchema(), T0 + days(20))[0]
    assert r.kind == "contests"
    multi = PredicateSchema.from_mapping({"allowed_role": "multi"})
    [r] = neighbourhood(me, [rival], multi, T0 + days(20))[0]
    assert r.kind == "same_key"
