"""One writer and concurrent readers on the same SQLite file, in separate processes."""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

import numpy as np

from query.backends.sqlite import SQLiteStore
from query.model import View
from query.store import GovernanceFilter
from query.text import query_terms
from tests.helpers import T0, days, make_nugget

N = 40


def _writer(path: str, ready: mp.synchronize.Event) -> None:
    store = SQLiteStore(path)
    store.start_sync()
    ready.set()
    rng = np.random.default_rng(0)
    for i in range(N):
        n = make_nugget(obj=f"Role {i}", subject=f"subject {i}", sources=(f"ev-{i}",))
        v = rng.normal(size=384).astype(np.float32)
        store.write_nuggets_sync([n], [v / np.linalg.norm(v)])


def test_reader_process_sees_every_committed_write(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.db")
    reader = SQLiteStore(path)
    reader.start_sync()
    ctx = mp.get_context("spawn")
    ready = ctx.Event()
    proc = ctx.Process(target=_writer, args=(path, ready))
    proc.start()
    assert ready.wait(60)
    flt = GovernanceFilter("acme", T0 + days(1), View.ACTIVE)
    seen_counts = []
    q = np.ones(384, dtype=np.float32) / np.sqrt(384)
    while proc.is_alive():
        lex = reader.lexical_sync(query_terms("role"), flt, 1000)
        seen_counts.append(len(lex))
    proc.join(60)
    assert proc.exitcode == 0
    assert seen_counts == sorted(seen_counts), "readers never see a write disappear"
    assert len(reader.lexical_sync(query_terms("role"), flt, 1000)) == N
    dense = reader.dense_sync(q, flt, 1000)
    assert len(dense) == N, "the reader's vector index picked up the other process's rows"
