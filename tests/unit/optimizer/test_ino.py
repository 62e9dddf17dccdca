"""The INO loop itself: a revision that adds a fact is rejected by the factual guard inside
the loop (not only when the guard is called on its own), the draft that gets published
keeps the user's facts, and a loop that passes stops."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from optimizer.accounting import Meter
from optimizer.harness import Candidate, RagTrace
from optimizer.ino import optimize
from optimizer.local import local_roles
from optimizer.roles import ReflectionInput
from optimizer.types import Extraction, NuggetDraft, Revision
from query.embeddings import Vector

CONTEXT = ("how long are returns accepted\nReturns are accepted for 30 days.\n"
           "Returns are accepted for 14 days at the outlet stores, 30 days elsewhere.")
EXTRACTION = Extraction("actionable_correction", True, "", title="How long are returns "
                        "accepted?", body="Returns are accepted for 14 days at the outlet "
                        "stores, 30 days elsewhere.", subject="returns accepted",
                        predicate="limit", object="14")
START = NuggetDraft(EXTRACTION.title, EXTRACTION.body, ("return window outlet",))


class Embed:
    """A constant embedder: the loop only needs vectors of the right shape."""

    dim = 8

    def embed(self, texts: Sequence[str]) -> Vector:
        return np.full((len(texts), 8), 1 / np.sqrt(8), dtype=np.float32)

    embed_queries = embed  # no query prefix


class Harness:
    """Passes every probe once the draft's anchors contain ``passing_word``."""

    def __init__(self, passing_word: str = "") -> None:
        self.passing_word = passing_word
        self.seen: list[NuggetDraft] = []

    async def run(self, tenant: str, query: str, candidate: Candidate | None,
                  meter: Meter) -> RagTrace:
        assert candidate is not None
        self.seen.append(candidate.draft)
        ok = bool(self.passing_word) and any(self.passing_word in a
                                              for a in candidate.draft.anchors)
        ids = [candidate.id] if ok else []
        return RagTrace(query, [(candidate.id, 1.0)], {candidate.id: 0.9 if ok else 0.1},
                        ids, ids, "...", {candidate.id: candidate.draft.title}, {})


class AddsAFact:
    """A reflector that slips a new number into the body (and a harmless anchor)."""

    def revise(self, inp: ReflectionInput, meter: Meter) -> Revision:
        meter.check("reflector")
        d = inp.draft
        return Revision(NuggetDraft(d.title, d.body + " Receipts older than 90 days are "
                                    "never refunded.", (*d.anchors, "refund window")),
                        ("body: added a sentence",))


class AddsAnAnchor:
    def revise(self, inp: ReflectionInput, meter: Meter) -> Revision:
        meter.check("reflector")
        d = inp.draft
        return Revision(NuggetDraft(d.title, d.body, (*d.anchors, "refund rules at outlet stores")),
                        ("anchor+",))


async def _run(reflector: object, harness: Harness) -> object:
    roles = replace(local_roles(), reflector=reflector)  # type: ignore[arg-type]
    return await optimize(candidate_id="candidate:e1", start=START, extraction=EXTRACTION,
                          q0="how long are returns accepted",
                          probes=["how long are returns accepted", "refund days outlet"],
                          context=CONTEXT, tenant="shop", harness=harness, roles=roles,
                          embedder=Embed(), meter=Meter(), max_iterations=3)


async def test_a_revision_that_adds_a_fact_is_rejected_inside_the_loop() -> None:
    harness = Harness()
    result = await _run(AddsAFact(), harness)
    assert result.rejected and any("'90'" in v for v in result.rejected[0])  # type: ignore[attr-defined]
    assert result.draft == START  # type: ignore[attr-defined]
    assert all("90" not in d.body for d in harness.seen)  # never probed, never published
    assert result.history[0].edits[0].startswith("rejected:")  # type: ignore[attr-defined]
    assert not result.passed  # type: ignore[attr-defined]


async def test_an_accepted_revision_is_probed_and_the_loop_stops_when_it_passes() -> None:
    harness = Harness(passing_word="refund")
    result = await _run(AddsAnAnchor(), harness)
    assert result.passed and result.iterations == 2  # type: ignore[attr-defined]
    assert result.rejected == []  # type: ignore[attr-defined]
    assert "refund rules at outlet stores" in result.draft.anchors  # type: ignore[attr-defined]
    assert result.draft.body == START.body  # type: ignore[attr-defined]
