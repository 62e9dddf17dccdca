"""The corpus release of bench/living_bench.py: the pages users asked about first, within
the share of passages, each a changed version of its page."""

from __future__ import annotations

from bench.living_bench import NOTE, release
from optimizer.evaluation import Case
from query.corpus import Document


def case(cid: str, competitor: str, actionable: bool = True) -> Case:
    return Case(cid, "t", f"question {cid}?", f"answer {cid}.", "", "", actionable,
                competitor=competitor)


def test_the_release_revises_asked_pages_first_within_the_share() -> None:
    docs = [Document(f"d{i}", "t", f"Page {i}", f"Text of page {i}.") for i in range(20)]
    passages = {d.id: 2 for d in docs}  # 40 passages: a 25 % share is 10 of them
    cases = [case("c1", "d3"), case("c2", "d3"), case("c3", "d7"),
             case("n1", "d9", actionable=False)]
    changed, kinds = release(docs, cases, 0.25, passages, seed=1)
    by_id = {d.id: d for d in changed}
    assert kinds == {"faq": 2, "note": 3} and len(changed) == 5
    assert "Frequently asked: question c1? answer c1. question c2? answer c2." in by_id["d3"].text
    assert by_id["d7"].text.startswith("Text of page 7.")
    notes = [d for d in changed if d.id not in ("d3", "d7")]
    assert all(d.text.endswith(NOTE) for d in notes)
    assert release(docs, cases, 0.25, passages, seed=1) == (changed, kinds), "seeded"
