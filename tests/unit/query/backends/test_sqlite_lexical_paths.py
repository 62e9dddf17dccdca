"""The prefiltered lexical path returns exactly what filtering inside SQL returns."""

from __future__ import annotations

import numpy as np
import pytest

from query.backends import sqlite as sqlite_backend
from query.backends.sqlite import SQLiteStore
from query.model import State, View
from query.store import GovernanceFilter
from query.text import query_terms
from tests.helpers import T0, days, make_nugget


def _store() -> SQLiteStore:
    store = SQLiteStore(":memory:")
    store.start_sync()
    rng = np.random.default_rng(1)
    nuggets = []
    for i in range(120):  # strong matches, all deprecated: they crowd the BM25 prefix
        nuggets.append(make_nugget(subject=f"password reset password {i}", obj=f"Role {i}",
                                   title=f"password reset password policy {i}",
                                   state=State.DEPRECATED, sources=(f"d{i}",)))
    for i in range(30):  # weaker matches, active
        nuggets.append(make_nugget(subject=f"account {i}", obj=f"Owner {i}",
                                   title=f"account recovery note {i}",
                                   body=f"Ask the owner to reset the password of account {i}.",
                                   sources=(f"a{i}",)))
    vecs = rng.normal(size=(len(nuggets), 384)).astype(np.float32)
    store.write_nuggets_sync(nuggets, list(vecs / np.linalg.norm(vecs, axis=1, keepdims=True)))
    return store


@pytest.mark.parametrize("limit", [5, 10, 200])
def test_fast_path_equals_sql_filtering(limit: int, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store()
    flt = GovernanceFilter("acme", T0 + days(1), View.ACTIVE)
    terms = query_terms("reset password")
    fast = store.lexical_sync(terms, flt, limit)
    monkeypatch.setattr(sqlite_backend, "FAST_PATH_SHARE", 2.0)  # never take the fast path
    slow = store.lexical_sync(terms, flt, limit)
    assert [s.id for s in fast] == [s.id for s in slow]
    assert [s.score for s in fast] == pytest.approx([s.score for s in slow])
    assert len(fast) == min(limit, 30)
    assert all(s.id for s in fast)


def test_fast_path_falls_back_when_the_prefix_is_all_suppressed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store()
    calls: list[int] = []
    original = store._lexical_prefiltered

    def spy(*args: object, **kwargs: object) -> object:
        result = original(*args, **kwargs)  # type: ignore[arg-type]
        calls.append(0 if result is None else 1)
        return result

    monkeypatch.setattr(store, "_lexical_prefiltered", spy)
    flt = GovernanceFilter("acme", T0 + days(1), View.ACTIVE)
    got = store.lexical_sync(query_terms("reset password"), flt, 5)
    assert calls == [0]  # the 20-row prefix held no allowed row: SQL filtering took over
    assert len(got) == 5
