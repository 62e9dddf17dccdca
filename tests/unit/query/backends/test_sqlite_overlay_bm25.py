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
