"""The governance benchmark on a small world: governed retrieval is temporally correct and
conflict-free, contested values are flagged, and the ungoverned baseline is not."""

from __future__ import annotations

from bench.governance_bench import generate, queries, run


def test_world_has_every_scenario_and_ground_truth() -> None:
    w = generate(14, seed=1)
    assert sorted(set(w.scenario.values())) == ["contested", "evidence_wins", "multi",
                                                "old_superior", "rename", "resolved",
                                                "succession"]
    qs = queries(w, 1)
    assert any(w.true_at(k, t) is None for k, t in qs)  # disputed
    assert any(w.true_at(k, t) == frozenset() for k, t in qs)  # before anything was true
    assert any(len(w.true_at(k, t) or ()) == 2 for k, t in qs)  # multi-valued


async def test_governed_index_beats_the_baseline() -> None:
    figures = await run(14, seed=1)
    assert figures["temporal_correctness"] == 1.0
    assert figures["conflict_rate"] == 0.0
    assert figures["contested_flagged_in_active_plus_contested"] == 1.0
    assert figures["baseline_temporal_correctness"] < 0.8
    assert figures["baseline_conflict_rate"] > 0.2
    assert figures["context_tokens_median"] < figures["baseline_context_tokens_median"]
