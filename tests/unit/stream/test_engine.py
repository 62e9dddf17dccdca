"""The threaded engine: same results as inline, blocking LLM work off the event loop,
bounded INO concurrency."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from nuggetflow.settings import Settings
from optimizer.accounting import Meter
from optimizer.local import local_roles
from optimizer.roles import Roles
from optimizer.types import Answer, ContextPassage, Extraction, FeedbackContext
from query.backends.sqlite import SQLiteStore
from query.index import NuggetIndex
from stream.engine import InlineEngine, ThreadedEngine
from stream.events import parse_event, to_context
from tests.unit.stream.test_steps import fb


class SlowActionability:
    """A blocking LLM call (the openai client is synchronous)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.inner = local_roles().actionability

    def extract(self, ctx: FeedbackContext, meter: Meter) -> Extraction:
        time.sleep(self.seconds)
        return self.inner.extract(ctx, meter)


class CountingGenerator:
    """A generator role that blocks a little and records how many run at once."""

    running = 0
    peak = 0
    lock = threading.Lock()

    def __init__(self) -> None:
        self.inner = local_roles().generator

    def answer(self, query: str, passages: Sequence[ContextPassage], meter: Meter) -> Answer:
        cls = CountingGenerator
        with cls.lock:
            cls.running += 1
            cls.peak = max(cls.peak, cls.running)
        time.sleep(0.02)
        try:
            return self.inner.answer(query, passages, meter)
        finally:
            with cls.lock:
                cls.running -= 1


def engine(settings: Settings, index: NuggetIndex, path: Path, roles: Roles,
           concurrency: int = 2) -> ThreadedEngine:
    return ThreadedEngine(settings, index.embedder, lambda: SQLiteStore(path),
                          lambda: roles, concurrency)


async def ticks_during(coro: object) -> tuple[object, int]:
    """Run ``coro`` while counting 10 ms ticks of the event loop."""
    count = 0
    stop = asyncio.Event()

    async def ticker() -> None:
        nonlocal count
        while not stop.is_set():
            await asyncio.sleep(0.01)
            count += 1

    task = asyncio.create_task(ticker())
    try:
        result = await coro  # type: ignore[misc]
    finally:
        stop.set()
        await task
    return result, count


async def test_same_nugget_as_inline(index: NuggetIndex, stream_settings: Settings,
                                     tmp_path: Path) -> None:
    ctx = to_context(parse_event(fb("c1")))
    ex = local_roles().actionability.extract(ctx, Meter())
    inline = InlineEngine(index.store, index.embedder, local_roles(), stream_settings)
    threaded = engine(stream_settings, index, tmp_path / "index.db", local_roles())
    await inline.start()
    await threaded.start()
    try:
        a = await inline.optimize(ctx, ex)
        b = await threaded.optimize(ctx, ex)
        [ea] = await inline.extract([ctx])
        [eb] = await threaded.extract([ctx])
    finally:
        await threaded.stop()
        await inline.stop()
    assert a.nugget is not None and b.nugget is not None
    assert a.nugget.id == b.nugget.id and a.nugget.body == b.nugget.body
    assert ea == eb == ex
    assert a.accounting["calls_by_role"].get("actionability") is None  # not asked again


async def test_blocking_llm_calls_leave_the_loop_free(index: NuggetIndex,
                                                      stream_settings: Settings,
                                                      tmp_path: Path) -> None:
    roles = dataclasses.replace(local_roles(), actionability=SlowActionability(0.3))
    eng = engine(stream_settings, index, tmp_path / "index.db", roles)
    await eng.start()
    try:
        ctx = to_context(parse_event(fb("c2")))
        results, ticks = await ticks_during(eng.extract([ctx, ctx]))
    finally:
        await eng.stop()
    assert len(results) == 2  # type: ignore[arg-type]
    # 0.6 s of blocking calls; the loop kept running (heartbeats, fetches) meanwhile.
    assert ticks >= 30


async def test_ino_runs_off_loop_with_bounded_concurrency(index: NuggetIndex,
                                                           stream_settings: Settings,
                                                           tmp_path: Path) -> None:
    roles = dataclasses.replace(local_roles(), generator=CountingGenerator())
    eng = engine(stream_settings, index, tmp_path / "index.db", roles, concurrency=2)
    await eng.start()
    CountingGenerator.peak = 0
    try:
        ctxs = [to_context(parse_event(fb(f"c{i}", i=i))) for i in range(4)]
        exs = await eng.extract(ctxs)
        outcomes, ticks = await ticks_during(asyncio.gather(*(
            eng.optimize(c, e) for c, e in zip(ctxs, exs, strict=True))))  # type: ignore[arg-type]
    finally:
        await eng.stop()
    assert all(o.nugget is not None for o in outcomes)  # type: ignore[attr-defined]
    assert CountingGenerator.peak == 2  # two INO slots, never more
    assert ticks >= 10
