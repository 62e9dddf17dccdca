"""The postings path (numpy BM25 + governance columns) ranks exactly as FTS5 does in SQL."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from query.backends.sqlite import SQLiteStore
from query.model import Kind, State, View, next_version
from query.store import GovernanceFilter, Scored
from query.text import query_terms
from tests.helpers import T0, days, make_nugget, make_passage

WORDS = ("password reset owner team lead admin panel role wallpaper screen printer "
         "network wifi bluetooth battery sound keyboard shortcut backup files folder "
         "account login portal workspace analyst share link expire invite guest").split()


# Words of other scripts (Arabic, Cyrillic, Greek, CJK, Devanagari, accented Latin): the
# query terms split them as FTS5's unicode61 does, so the postings path serves them too.
WORLD = ("كلمة المرور إعادة تعيين المالك الشاشة الطابعة пароль сброс владелец экран принтер "
         "сеть κωδικός οθόνη δίκτυο 密码 重置 屏幕 打印机 パスワード 画面 पासवर्ड स्क्रीन "
         "mot passe réinitialiser propriétaire écran imprimante réseau Straße größe naïve "
         "café ÉCRAN").split()


def _unit(rng: np.random.Generator, n: int) -> list[np.ndarray]:
    v = rng.normal(size=(n, 384)).astype(np.float32)
    return list(v / np.linalg.norm(v, axis=1, keepdims=True))


def _sentence(rnd: random.Random, lo: int, hi: int, vocabulary: Sequence[str] = WORDS) -> str:
    return " ".join(rnd.choice(vocabulary) for _ in range(rnd.randint(lo, hi)))


def _random_store(seed: int, path: str | Path = ":memory:",
                  vocabulary: Sequence[str] = WORDS) -> SQLiteStore:
    """Passages and nugget histories (superseded versions, states, validity, scopes)."""
    rnd = random.Random(seed)
    rng = np.random.default_rng(seed)
    store = SQLiteStore(path)
    store.start_sync()
    passages = [make_passage(pid=f"p{i}#0", title=_sentence(rnd, 1, 4, vocabulary),
                             text=_sentence(rnd, 5, 30, vocabulary)) for i in range(60)]
    store.add_passages_sync(passages, np.stack(_unit(rng, len(passages))))
    for i in range(80):
        n = make_nugget(subject=f"subject {i}", kind=rnd.choice(list(Kind)), obj=f"Value {i}",
                        title=_sentence(rnd, 2, 6, vocabulary),
                        body=_sentence(rnd, 4, 20, vocabulary),
                        anchors=tuple(_sentence(rnd, 1, 4, vocabulary)
                                      for _ in range(rnd.randint(0, 3))),
                        state=rnd.choice([State.ACTIVE, State.ACTIVE, State.DEPRECATED,
                                          State.CONTESTED]),
                        start=T0 + days(rnd.randint(-5, 5)),
                        scope=rnd.choice(["v8.2", "v9.0", "all"]), sources=(f"s{i}",),
                        tenant=rnd.choice(["acme", "acme", "globex"]))
        store.write_nuggets_sync([n], _unit(rng, 1))
        if rnd.random() < 0.3:  # a new version supersedes it (the old one stays in FTS5)
            child = next_version(n, "edit", now=T0, body=_sentence(rnd, 4, 12, vocabulary))
            store.write_nuggets_sync([child], [None])
    return store


def _same_ranking(fast: list[Scored], slow: list[Scored]) -> None:
    assert [s.score for s in fast] == pytest.approx([s.score for s in slow], rel=1e-9)
    assert [s.type for s in fast] == [s.type for s in slow] or len(
        {round(s.score, 9) for s in fast}) < len(fast)  # types may differ only among ties
    if fast:
        cut = fast[-1].score
        assert ({s.id for s in fast if s.score > cut + 1e-9}
                == {s.id for s in slow if s.score > cut + 1e-9})
        assert {s.id: s.meta for s in fast}.items() >= {
            s.id: s.meta for s in slow if s.score > cut + 1e-9}.items()


@pytest.mark.parametrize(("seed", "vocabulary"), [
    *((seed, WORDS) for seed in range(6)), *((seed, WORLD) for seed in range(3)),
    *((seed, WORDS + WORLD) for seed in range(3))])
def test_postings_rank_like_fts5_with_the_filter_in_sql(seed: int,
                                                        vocabulary: Sequence[str]) -> None:
    store = _random_store(seed, vocabulary=vocabulary)
    rnd = random.Random(100 + seed)
    for _ in range(25):
        terms = query_terms(_sentence(rnd, 1, 6, vocabulary))
        assert terms, "every query has terms, in every script"
        flt = GovernanceFilter(
            rnd.choice(["acme", "globex"]), T0 + days(rnd.randint(-6, 8)),
            rnd.choice([View.ACTIVE, View.ACTIVE_PLUS_CONTESTED]),
            scopes=rnd.choice([(), ("v8.2",), ("v9.0", "v8.2")]),
            kinds=rnd.choice([(), (Kind.SEMANTIC_FACT,), (Kind.INSTRUCTION,)]),
            include_documents=rnd.random() < 0.7)
        limit = rnd.choice([1, 5, 10, 60])
        assert store._match(store.prune_terms(terms)) is not None  # the postings path ran
        _same_ranking(store.lexical_sync(terms, flt, limit),
                      store.lexical_sql(terms, flt, limit))
        assert asyncio.run(store.suppressed(terms, flt)) == store.suppressed_sql(terms, flt)


def test_phrase_terms_go_to_fts5() -> None:
    store = SQLiteStore(":memory:")
    store.start_sync()
    n = make_nugget(title="Password reset in portal v8.2",
                    body="Only the Workspace Owner can reset another user's password.")
    store.write_nuggets_sync([n], _unit(np.random.default_rng(0), 1))
    terms = query_terms("reset in v8.2")
    assert "v8.2" in terms
    assert store._match(terms) is None  # "v8.2" is two tokens: a phrase
    flt = GovernanceFilter("acme", T0 + days(1), View.ACTIVE)
    assert [s.id for s in store.lexical_sync(terms, flt, 5)] == [n.id]


def test_rows_written_by_another_process_reach_the_postings(tmp_path: Path) -> None:
    path = tmp_path / "x.db"
    writer = _random_store(1, path)
    reader = SQLiteStore(path)
    reader.start_sync()
    flt = GovernanceFilter("acme", T0 + days(1), View.ACTIVE)
    terms = query_terms("zebra crossing")
    assert reader.lexical_sync(terms, flt, 5) == []
    fresh = make_nugget(subject="zebra", obj="Crossing", title="Zebra crossing rules",
                        body="Zebra crossings are marked in white.")
    writer.write_nuggets_sync([fresh], _unit(np.random.default_rng(2), 1))
    got = reader.lexical_sync(terms, flt, 5)
    assert [s.id for s in got] == [fresh.id]
    _same_ranking(got, reader.lexical_sql(terms, flt, 5))
    assert reader._match(terms) is not None


def test_postings_survive_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "x.db"
    first = _random_store(3, path)
    flt = GovernanceFilter("acme", T0 + days(1), View.ACTIVE)
    terms = query_terms("password reset owner wifi")
    before = first.lexical_sync(terms, flt, 10)
    asyncio.run(first.stop())
    again = SQLiteStore(path)
    again.start_sync()  # bulk load through fts5vocab
    after = again.lexical_sync(terms, flt, 10)
    assert [s.id for s in after] == [s.id for s in before]
    assert [s.score for s in after] == pytest.approx([s.score for s in before], rel=1e-12)


def test_rows_without_tokens_keep_the_postings_in_step(tmp_path: Path) -> None:
    """A passage whose text has no token (punctuation only) is still an FTS5 row: the
    postings count it, so they keep serving after a restart."""
    path = tmp_path / "x.db"
    store = SQLiteStore(path)
    store.start_sync()
    rng = np.random.default_rng(0)
    store.add_passages_sync([make_passage(pid="p0#0", title="...", text="!!"),
                             make_passage(pid="p1#0", title="Wallpaper", text="Change it.")],
                            np.stack(_unit(rng, 2)))
    asyncio.run(store.stop())
    again = SQLiteStore(path)
    again.start_sync()
    terms = query_terms("wallpaper")
    assert again._match(terms) is not None
    flt = GovernanceFilter("acme", T0 + days(1), View.ACTIVE)
    _same_ranking(again.lexical_sync(terms, flt, 5), again.lexical_sql(terms, flt, 5))
