"""Property tests: random histories of inserts, edits, conflicts and reviews.

After every history, for several as_of times, the ACTIVE view returns exactly the head
nuggets that are published, Active and valid at as_of; ACTIVE_PLUS_CONTESTED adds the
Contested ones, flagged. Nothing is ever lost: every version written stays readable.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from nuggetflow.errors import InvalidTransitionError
from nuggetflow.settings import Settings
from query.backends.sqlite import SQLiteStore
from query.embeddings import MiniLMEmbedder
from query.governance import PredicateSchema
from query.index import NuggetIndex
from query.model import Nugget, Publication, State, View
from query.retrieval import RetrieveRequest
from query.store import IndexStore
from tests.helpers import T0, days, make_nugget

OBJECTS = ["Workspace Owner", "Admin", "Analyst", "Team Lead", "workspace owner."]
SCOPES = ["portal v8.2", "portal v9.0"]


@dataclass(frozen=True)
class Submit:
    obj: int
    scope: int
    sources: tuple[str, ...]
    start: int
    length: int | None


@dataclass(frozen=True)
class Review:
    target: int
    action: str


@dataclass(frozen=True)
class Edit:
    target: int


@dataclass(frozen=True)
class Revert:
    target: int


submits = st.builds(
    Submit, st.integers(0, len(OBJECTS) - 1), st.integers(0, len(SCOPES) - 1),
    st.lists(st.sampled_from([f"ev-{i}" for i in range(6)]), min_size=1, max_size=4,
             unique=True).map(tuple),
    st.integers(0, 100), st.one_of(st.none(), st.integers(1, 100)))
histories = st.lists(st.one_of(
    submits, submits,
    st.builds(Review, st.integers(0, 20), st.sampled_from(["approve", "approve", "reject",
                                                           "unpublish"])),
    st.builds(Edit, st.integers(0, 20)), st.builds(Revert, st.integers(0, 20))), max_size=14)


async def run_history(history: list[object], embedder: MiniLMEmbedder,
                      store: IndexStore | None = None) -> None:
    """Apply a random history to a fresh store and check the governed views."""
    idx = NuggetIndex(store or SQLiteStore(":memory:"), embedder, Settings.from_env({}),
                      PredicateSchema(), clock=lambda: T0 + days(500))
    await idx.start()
    lineages: list[str] = []
    written = 0
    for step, op in enumerate(history):
        if isinstance(op, Submit):
            n = make_nugget(obj=OBJECTS[op.obj], scope=SCOPES[op.scope], sources=op.sources,
                            start=T0 + days(op.start),
                            end=None if op.length is None else T0 + days(op.start + op.length),
                            publication=Publication.DRAFT, title=f"password reset rule {step}")
            lineages.append((await idx.submit(n)).id)
            continue
        if not lineages:
            continue
        target = lineages[op.target % len(lineages)]  # type: ignore[attr-defined]
        try:
            if isinstance(op, Review):
                await idx.review("acme", target, op.action, reviewer="prop")
            elif isinstance(op, Edit):
                await idx.edit("acme", target, "reword",
                               body=f"Reworded at step {step}: password reset rule.")
            elif isinstance(op, Revert):
                hist = await idx.store.history("acme", target)
                await idx.review("acme", target, "revert", target_version_id=hist[0].id)
        except InvalidTransitionError:
            pass

    heads: list[Nugget] = []
    for lin in lineages:
        hist = await idx.store.history("acme", lin)
        assert hist[0].id == lin and all(h.lineage_id == lin for h in hist)
        # lineage is a chain: every version's parent is the version before it
        assert [h.parent_id for h in hist] == ["", *(h.id for h in hist[:-1])]
        assert [h.version for h in hist] == list(range(1, len(hist) + 1))
        written += len(hist)
        heads.append(hist[-1])
    assert len({h.id for h in heads}) == len(heads)

    for t in (-1, 0, 30, 99, 150, 250):
        as_of = T0 + days(t)
        for view in (View.ACTIVE, View.ACTIVE_PLUS_CONTESTED):
            allowed = {State.ACTIVE} | ({State.CONTESTED} if view is View.ACTIVE_PLUS_CONTESTED
                                        else set())
            expect = {h.id for h in heads if h.publication is Publication.PUBLISHED
                      and h.state in allowed and h.validity.contains(as_of)}
            if not lineages:
                continue
            res = await idx.retriever.retrieve(RetrieveRequest(
                "acme", "password reset rule", as_of=as_of, view=view, k=1000,
                include_documents=False))
            got = {h.id for h in res.hits}
            assert got == expect, (t, view)
            for h in res.hits:
                rec = h.record
                assert isinstance(rec, Nugget)
                assert rec.state is not State.DEPRECATED
                assert rec.validity.contains(as_of)
                assert rec.publication is Publication.PUBLISHED
                assert h.contested == (rec.state is State.CONTESTED)
                if view is View.ACTIVE:
                    assert not h.contested
    await idx.stop()


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(history=histories)
# Two values from one event, both approved: the second contests the first, and its own
# version (not a child of a version never stored) carries the Contested state.
@example(history=[Submit(0, 0, ("ev-0",), 0, None), Review(0, "approve"),
                  Submit(1, 0, ("ev-0",), 0, None), Review(1, "approve")])
# A value with fewer sources than the Active one is deprecated the same way.
@example(history=[Submit(0, 0, ("ev-0", "ev-1"), 0, None), Review(0, "approve"),
                  Submit(1, 0, ("ev-2",), 0, None), Review(1, "approve")])
def test_governed_views_hold_for_random_histories(history: list[object],
                                                  embedder: MiniLMEmbedder) -> None:
    asyncio.run(run_history(history, embedder))
