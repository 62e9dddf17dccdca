"""LexicalStats scores text outside the index exactly as FTS5's bm25() would inside it."""

from __future__ import annotations

import numpy as np
import pytest

from query.backends.sqlite import SQLiteStore
from query.model import View
from query.store import GovernanceFilter
from query.text import query_terms
from tests.helpers import T0, days, make_nugget, make_passage

PAGES = [
    ("Resetting your own password", "If your password reset isn't working, choose Forgot "
     "password on the login screen. A link is sent to you."),
    ("Using the admin panel", "The admin panel lists team members and their roles."),
    ("Roles", "The portal has three roles: Workspace Owner, Team Lead and Analyst."),
    ("Wallpaper", "Open Settings and choose Background to change the wallpaper."),
]


@pytest.mark.parametrize("query", [
    "user reset isn't working for my team lead",
    "who can reset another user's password in v8.2",
    "wallpaper",
])
def test_overlay_score_equals_fts5_bm25(query: str) -> None:
    store = SQLiteStore(":memory:")
    store.start_sync()
    passages = [make_passage(pid=f"p{i}#0", title=t, text=x) for i, (t, x) in enumerate(PAGES)]
    store.add_passages_sync(passages, np.full((len(passages), 384), 0.05, np.float32))
    n = make_nugget(title="Password reset role restriction in portal v8.2",
                    body="Only the Workspace Owner can reset another user's password.",
                    anchors=("who can reset passwords", "reset another user's password"))
    terms = query_terms(query)
    predicted = store.lexical_stats().score_sync(terms, n.title, n.body, "\n".join(n.anchors))
    store.write_nuggets_sync([n], [np.full(384, 0.05, np.float32)])
    flt = GovernanceFilter("acme", T0 + days(1), View.ACTIVE)
    actual = {s.id: s.score for s in store.lexical_sync(terms, flt, 100)}
    if predicted == 0.0:
        assert n.id not in actual
    else:
        assert actual[n.id] == pytest.approx(predicted, rel=1e-9)


def test_scorer_stays_exact_after_the_index_grows() -> None:
    """A long-lived scorer re-reads the statistics (document counts grew past the rows it
    first saw: the idf must not fail, and must match the live query)."""
    store = SQLiteStore(":memory:")
    store.start_sync()
    vec = np.full((1, 384), 0.05, np.float32)
    store.add_passages_sync([make_passage(pid="p0#0", title="Other", text="Nothing here.")], vec)
    scorer = store.lexical_stats()
    for i in range(1, 8):
        store.add_passages_sync([make_passage(pid=f"p{i}#0", title="Password reset",
                                              text="Reset your password.")], vec)
    n = make_nugget(title="Password reset by the owner", body="Only the owner can reset it.")
    terms = query_terms("password reset")
    predicted = scorer.score_sync(terms, n.title, n.body, "")
    store.write_nuggets_sync([n], [np.full(384, 0.05, np.float32)])
    actual = {s.id: s.score for s in store.lexical_sync(
        terms, GovernanceFilter("acme", T0 + days(1), View.ACTIVE), 100)}
    assert actual[n.id] == pytest.approx(predicted, rel=1e-9)
