"""Where the LLM and INO work runs: inline (embedded runner, tests) or in threads (worker).

Both engines offer the same three operations to the steps:

- :meth:`Engine.extract`: actionability + extraction for a batch of events;
- :meth:`Engine.optimize`: INO for one actionable event, given its extraction (the
  optimizer is handed the extraction, so the LLM is not asked twice);
- :meth:`Engine.reprobe`: re-probing (and re-optimizing) the published nuggets a corpus
  change reaches (:mod:`optimizer.reprobe`; the steps write what it found).

:class:`ThreadedEngine` keeps the worker's event loop free while LLM calls block (the
openai client is synchronous) and INO computes: extraction runs on one executor thread,
and each of ``concurrency`` INO slots is a thread with its own event loop, its own store
connection and roles. Each optimization probes a view of the index frozen when it starts
(a harness per event); the gate is fitted once per tenant and shared by the slots. Kafka
heartbeats and fetches continue meanwhile, so long LLM work neither stalls the consumer
nor triggers a rebalance.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Protocol, TypeVar

from nuggetflow.errors import NuggetflowError
from nuggetflow.logging import get_logger
from nuggetflow.settings import Settings
from optimizer.accounting import Budget, Meter
from optimizer.pipeline import Outcome, optimize_event
from optimizer.reprobe import Reprobe, reprobe_change
from optimizer.roles import Roles
from optimizer.types import Extraction, FeedbackContext
from query.corpus import CorpusChange
from query.embeddings import Embedder
from query.gate import Gate
from query.store import IndexStore

log = get_logger(__name__)
T = TypeVar("T")

ExtractResult = Extraction | Exception


class Engine(Protocol):
    """Runs actionability and INO for the steps."""

    async def start(self) -> None:
        """Acquire threads and connections."""

    async def stop(self) -> None:
        """Release them (waits for work in progress)."""

    async def extract(self, contexts: Sequence[FeedbackContext]) -> list[ExtractResult]:
        """Extraction per event, in order; the exception instead when it failed.

        Stops at the first *retriable* error: the list is then shorter than ``contexts``
        only by the events after it, which were not tried (the caller retries from there).
        """

    async def optimize(self, ctx: FeedbackContext, extraction: Extraction) -> Outcome:
        """Run INO for an actionable event (errors propagate)."""

    async def reprobe(self, change: CorpusChange) -> list[Reprobe]:
        """Re-probe the published nuggets a corpus change reaches (writes nothing)."""


#: Called with ``Meter.summary()`` of every actionability call (the worker's metrics).
UsageHook = Callable[[dict[str, object]], None]


def _extract_batch(roles: Roles, budget: Budget, contexts: Sequence[FeedbackContext],
                   on_usage: UsageHook | None = None) -> list[ExtractResult]:
    out: list[ExtractResult] = []
    for ctx in contexts:
        meter = Meter(budget)
        try:
            out.append(roles.actionability.extract(ctx, meter))
        except Exception as exc:  # reported per event: one bad event must not stop others
            out.append(exc)
            if isinstance(exc, NuggetflowError) and exc.retriable:
                break
        finally:
            if on_usage is not None and meter.total_calls:
                on_usage(meter.summary())
    return out


class InlineEngine:
    """Everything in the caller's event loop (embedded runner, unit tests)."""

    def __init__(self, store: IndexStore, embedder: Embedder, roles: Roles,
                 settings: Settings, on_usage: UsageHook | None = None) -> None:
        self.on_usage = on_usage
        self.store = store
        self.embedder = embedder
        self.roles = roles
        self.settings = settings
        self.gate = Gate(settings)

    async def start(self) -> None:
        """Nothing to acquire."""

    async def stop(self) -> None:
        """Nothing to release."""

    async def extract(self, contexts: Sequence[FeedbackContext]) -> list[ExtractResult]:
        """See :meth:`Engine.extract`."""
        return _extract_batch(self.roles, Budget(self.settings.budget_calls,
                                                 self.settings.budget_tokens), contexts,
                              self.on_usage)

    async def optimize(self, ctx: FeedbackContext, extraction: Extraction) -> Outcome:
        """See :meth:`Engine.optimize`."""
        return await optimize_event(self.store, self.embedder, self.roles, self.settings,
                             self.gate, ctx, extraction)

    async def reprobe(self, change: CorpusChange) -> list[Reprobe]:
        """See :meth:`Engine.reprobe`."""
        return await reprobe_change(self.store, self.embedder, self.roles, self.settings,
                                    self.gate, change)


class _Slot:
    """A thread running its own event loop, with a store and roles of its own."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.store: IndexStore | None = None
        self.roles: Roles | None = None

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()
        self.loop.close()

    async def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on this slot's loop; await it from the caller's loop."""
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))

    def shutdown(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=30)


class ThreadedEngine:
    """Extraction on an executor thread, INO on ``concurrency`` thread slots (the worker)."""

    def __init__(self, settings: Settings, embedder: Embedder,
                 store_factory: Callable[[], IndexStore],
                 roles_factory: Callable[[], Roles], concurrency: int,
                 on_usage: UsageHook | None = None) -> None:
        self.on_usage = on_usage
        self.settings = settings
        self.embedder = embedder
        self.store_factory = store_factory
        self.roles_factory = roles_factory
        self.concurrency = concurrency
        self._roles: Roles | None = None
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
        self._slots: list[_Slot] = []
        self._free: asyncio.Queue[_Slot] | None = None
        self.gate = Gate(settings)

    async def start(self) -> None:
        """Start the extraction thread and the INO slots (each opens its store)."""
        self._roles = self.roles_factory()
        self._executor = concurrent.futures.ThreadPoolExecutor(1, "nuggetflow-extract")
        self._free = asyncio.Queue()
        for i in range(self.concurrency):
            slot = _Slot(f"nuggetflow-ino-{i}")
            slot.thread.start()
            await slot.call(self._open(slot))
            self._slots.append(slot)
            self._free.put_nowait(slot)
        log.info("optimizer threads started", slots=self.concurrency)

    async def _open(self, slot: _Slot) -> None:
        slot.store = self.store_factory()
        await slot.store.start()
        slot.roles = self.roles_factory()

    @staticmethod
    async def _close(slot: _Slot) -> None:
        if slot.store is not None:
            await slot.store.stop()

    async def stop(self) -> None:
        """Wait for running work, close every slot's store, stop the threads."""
        for slot in self._slots:
            try:
                await slot.call(self._close(slot))
            finally:
                slot.shutdown()
        self._slots.clear()
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None

    async def extract(self, contexts: Sequence[FeedbackContext]) -> list[ExtractResult]:
        """See :meth:`Engine.extract` (runs on the extraction thread)."""
        if self._roles is None or self._executor is None:
            raise RuntimeError("ThreadedEngine.start() was not called")
        budget = Budget(self.settings.budget_calls, self.settings.budget_tokens)
        return await asyncio.get_running_loop().run_in_executor(
            self._executor, _extract_batch, self._roles, budget, list(contexts),
            self.on_usage)

    async def _on_slot(self, work: Callable[[IndexStore, Roles], Coroutine[Any, Any, T]]) -> T:
        """Run ``work(store, roles)`` on a free INO slot (waits for one)."""
        if self._free is None or not self._slots:
            raise RuntimeError("ThreadedEngine has no INO slots (not started, or "
                               "concurrency 0)")
        slot = await self._free.get()
        try:
            if slot.store is None or slot.roles is None:
                raise RuntimeError(f"optimizer slot {slot.name} is not open")
            return await slot.call(work(slot.store, slot.roles))
        finally:
            self._free.put_nowait(slot)

    async def optimize(self, ctx: FeedbackContext, extraction: Extraction) -> Outcome:
        """See :meth:`Engine.optimize` (runs on a free slot; waits for one)."""
        return await self._on_slot(lambda store, roles: optimize_event(
            store, self.embedder, roles, self.settings, self.gate, ctx, extraction))

    async def reprobe(self, change: CorpusChange) -> list[Reprobe]:
        """See :meth:`Engine.reprobe` (runs on a free INO slot; waits for one)."""
        return await self._on_slot(lambda store, roles: reprobe_change(
            store, self.embedder, roles, self.settings, self.gate, change))
