"""QueryEmbeddings: the LRU cache and the batching model thread in front of an embedder."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence

import numpy as np
import pytest

from nuggetflow.errors import BackendUnavailableError
from query.embeddings import QueryEmbeddings, Vector


class SlowEmbedder:
    """Deterministic vectors (a hash of the text), a fixed delay per call; records calls."""

    dim = 8

    def __init__(self, delay: float = 0.02, fail: int = 0) -> None:
        self.delay = delay
        self.fail = fail
        self.calls: list[list[str]] = []
        self.threads: set[str] = set()

    def embed(self, texts: Sequence[str]) -> Vector:
        self.calls.append(list(texts))
        self.threads.add(threading.current_thread().name)
        time.sleep(self.delay)
        if self.fail:
            self.fail -= 1
            raise BackendUnavailableError("model down")
        return np.stack([expected(t) for t in texts])

    embed_queries = embed  # no query prefix


def expected(text: str) -> Vector:
    rng = np.random.default_rng(abs(hash(text)) % 2**32)
    v = rng.normal(size=8).astype(np.float32)
    out: Vector = v / np.linalg.norm(v)
    return out


def test_repeated_queries_come_from_the_cache() -> None:
    emb = SlowEmbedder(delay=0)
    q = QueryEmbeddings(emb, cache_size=2)

    async def run() -> None:
        for text in ["a", "b", "a", "a", "c", "a", "b"]:
            assert np.array_equal(await q.embed(text), expected(text))

    asyncio.run(run())
    # "a" stays cached (recently used); "b" was evicted by "c" and embedded again.
    assert emb.calls == [["a"], ["b"], ["c"], ["b"]]
    assert (q.hits, q.misses) == (3, 4)
    assert all(name.startswith("query-embed") for name in emb.threads)


def test_cached_vectors_are_read_only() -> None:
    q = QueryEmbeddings(SlowEmbedder(delay=0))
    v = asyncio.run(q.embed("x"))
    with pytest.raises(ValueError):
        v[0] = 1.0


def test_concurrent_misses_share_model_calls() -> None:
    emb = SlowEmbedder(delay=0.05)
    q = QueryEmbeddings(emb, cache_size=0, max_batch=8)
    texts = [f"query {i}" for i in range(20)] + ["query 3", "query 3"]

    async def run() -> list[Vector]:
        return await asyncio.gather(*(q.embed(t) for t in texts))

    got = asyncio.run(run())
    for t, v in zip(texts, got, strict=True):
        assert np.array_equal(v, expected(t))
    # 22 waiting queries, 8 a call (duplicates within a call embedded once).
    assert [len(c) for c in emb.calls] == [8, 8, 5]
    assert set(t for c in emb.calls for t in c) == set(texts)


def test_a_lone_query_does_not_wait_for_company() -> None:
    emb = SlowEmbedder(delay=0.05)
    q = QueryEmbeddings(emb, cache_size=0)

    async def run() -> None:
        first = asyncio.ensure_future(q.embed("first"))
        await asyncio.sleep(0.01)  # "first" is on the model thread, alone
        rest = [asyncio.ensure_future(q.embed(f"next {i}")) for i in range(3)]
        await asyncio.gather(first, *rest)

    asyncio.run(run())
    assert emb.calls == [["first"], ["next 0", "next 1", "next 2"]]


def test_a_model_error_reaches_every_waiter_and_the_next_call_works() -> None:
    emb = SlowEmbedder(delay=0.02, fail=1)
    q = QueryEmbeddings(emb)

    async def run() -> list[Vector | BaseException]:
        return await asyncio.gather(*(q.embed(f"t{i}") for i in range(5)),
                                    return_exceptions=True)

    got = asyncio.run(run())
    assert all(isinstance(g, BackendUnavailableError) for g in got)  # one call, failed
    assert len(emb.calls) == 1
    assert np.array_equal(asyncio.run(q.embed("t1")), expected("t1"))  # not cached as error


def test_a_cancelled_waiter_does_not_disturb_the_others() -> None:
    emb = SlowEmbedder(delay=0.05)
    q = QueryEmbeddings(emb, cache_size=0)

    async def run() -> tuple[Vector, Vector]:
        first = asyncio.ensure_future(q.embed("first"))
        await asyncio.sleep(0.01)  # "first" is on the model thread now
        doomed = asyncio.ensure_future(q.embed("doomed"))
        kept = asyncio.ensure_future(q.embed("kept"))
        await asyncio.sleep(0)
        doomed.cancel()
        return await first, await kept

    a, b = asyncio.run(run())
    assert np.array_equal(a, expected("first")) and np.array_equal(b, expected("kept"))
    assert emb.calls == [["first"], ["kept"]]  # the cancelled text was never embedded
