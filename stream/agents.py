"""Faust agents: thin wrappers that feed Kafka records to :mod:`stream.steps`.

=================  =====================  =============================================
agent              consumes               notes
=================  =====================  =============================================
actionability      feedback.events        batches (``take_events``), extraction off-loop
optimize           feedback.corrections   ``concurrency`` actors; one tenant in order
publish            nuggets.candidates     review policy per tenant
review             nuggets.reviews        governance on approval (dedup, conflicts)
reprobe            corpus.changes         one change at a time per tenant
=================  =====================  =============================================

An event is acknowledged right after its step returned and its output records were
handed to the producer (not earlier, and not later: see :func:`ack`), and never before
the events delivered ahead of it on its partition (:class:`InOrderAcks`, for the
optimize agent's actors); Faust flushes the producer before it commits offsets, so a
crash re-delivers unfinished events (at least once) and the steps' idempotent effects
keep the outcome exactly-once. Every agent
yields its step outcomes (which is also what ``agent.test_context()`` records in unit
tests).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import faust
from faust.types import EventT, StreamT

from nuggetflow.settings import Settings
from stream.records import Emit, Record, StepResult
from stream.steps import Steps
from stream.topics import AGENT_SOURCES, TopicKind, Topics

INGEST_WITHIN_SECONDS = 0.05  # longest wait to fill an actionability batch
REDELIVERED = "redelivered"  # outcome of a record this worker had already handled


class Sink(Protocol):
    """Where agents put the records their steps produce."""

    async def emit(self, emit: Emit) -> None:
        """Hand one record to the producer (delivery is confirmed before the commit)."""


class FaustSink:
    """Produces through the Faust app's producer to the deployment's topics."""

    def __init__(self, app: faust.App, topics: Topics) -> None:
        self._topics = {kind: raw_topic(app, topics.name(kind)) for kind in TopicKind}

    async def emit(self, emit: Emit) -> None:
        """Send to the topic of ``emit.kind`` (keyed by tenant)."""
        await self._topics[emit.kind].send(key=emit.key, value=emit.value,
                                           headers=list(emit.headers))


def raw_topic(app: faust.App, name: str) -> Any:
    """A Faust topic whose keys and values are raw bytes."""
    return app.topic(name, key_type=bytes, value_type=bytes, key_serializer="raw",
                     value_serializer="raw")


def _headers(raw: Any) -> tuple[tuple[str, bytes], ...]:
    if not raw:
        return ()
    items = raw.items() if isinstance(raw, Mapping) else raw
    return tuple((str(k), bytes(v) if v is not None else b"") for k, v in items)


def record_of(event: EventT[Any]) -> Record:
    """The step input of a Faust event (value and key as bytes, where it came from)."""
    msg = event.message
    value = event.value
    key = event.key
    return Record(value=value if isinstance(value, bytes) else str(value).encode(),
                  key=key if isinstance(key, bytes) or key is None else str(key).encode(),
                  topic=msg.topic, partition=msg.partition, offset=msg.offset,
                  headers=_headers(msg.headers))


async def ack(stream: StreamT[bytes], events: Iterable[EventT[Any]]) -> None:
    """Acknowledge events as soon as their outputs are with the producer.

    Faust would ack them itself when the agent asks for the next event (or batch); doing
    it here closes the gap in which a stopping or rebalancing worker has finished an event
    but not acknowledged it, which would have it processed again elsewhere. Acking twice
    is harmless.
    """
    for event in events:
        await stream.ack(event)


class RecentlyHandled:
    """The most recent records (topic, partition, offset) this process fully handled.

    Faust may deliver a record again to the same worker after a rebalance when the commit
    of its offset was discarded; a record found here is skipped: its outputs are already
    with this process's producer (had producing failed, the worker would have crashed and
    this memory with it).
    """

    def __init__(self, size: int = 100_000) -> None:
        self.size = size
        self._seen: OrderedDict[tuple[str, int, int], None] = OrderedDict()

    def __contains__(self, record: Record) -> bool:
        return (record.topic, record.partition, record.offset) in self._seen

    def add(self, record: Record) -> None:
        """Remember a handled record (forgetting the oldest beyond ``size``)."""
        self._seen[(record.topic, record.partition, record.offset)] = None
        while len(self._seen) > self.size:
            self._seen.popitem(last=False)


@dataclass
class _Delivered:
    event: EventT[Any]
    ack: Callable[[EventT[Any]], Awaitable[Any]]
    finished: bool = False


class InOrderAcks:
    """Acknowledges each partition's events in the order they were delivered.

    An agent with several actors finishes events out of order, and Faust (0.15.3) commits
    the first run of consecutive acknowledged offsets even when an earlier offset is still
    in flight: a worker that then stops, or loses the partition, has committed past an
    event it never finished, and nobody processes it again. Here an event is acknowledged
    only once every event delivered before it on its partition is done, so the committed
    offset never passes unfinished work (a stop re-delivers the unfinished events and
    those done after them; the steps' idempotent effects absorb the repeats).
    """

    def __init__(self) -> None:
        self._waiting: dict[Any, deque[_Delivered]] = {}

    def received(self, event: EventT[Any],
                 ack: Callable[[EventT[Any]], Awaitable[Any]]) -> None:
        """Note a delivered event and how to acknowledge it (call before any await).

        Events wait in offset order: after a rebalance rewinds a partition, an event
        delivered again comes after later ones still in flight, and none of those is
        acknowledged before it (an acknowledgement would commit past it)."""
        queue = self._waiting.setdefault(event.message.tp, deque())
        entry = _Delivered(event, ack)
        offset = event.message.offset
        if not queue or queue[-1].event.message.offset <= offset:
            queue.append(entry)
            return
        at = next(i for i, d in enumerate(queue) if d.event.message.offset > offset)
        queue.insert(at, entry)

    async def done(self, event: EventT[Any]) -> None:
        """Mark ``event`` finished; acknowledge its partition's finished prefix."""
        tp = event.message.tp
        queue = self._waiting.get(tp, deque())
        entry = next((d for d in queue if d.event is event), None)
        if entry is None:
            raise KeyError(f"event at {tp}:{event.message.offset} was not noted as received")
        entry.finished = True
        while queue and queue[0].finished:
            head = queue.popleft()
            await head.ack(head.event)
        if not queue:
            self._waiting.pop(tp, None)

    def __len__(self) -> int:
        return sum(len(q) for q in self._waiting.values())


class KeyedLocks:
    """One FIFO lock per key, dropped when unused: keeps a tenant's records in order
    while records of other tenants run concurrently."""

    def __init__(self) -> None:
        self._locks: dict[bytes | None, tuple[asyncio.Lock, int]] = {}

    @asynccontextmanager
    async def hold(self, key: bytes | None) -> AsyncIterator[None]:
        """Hold the key's lock (waiters are served in arrival order)."""
        lock, users = self._locks.get(key, (asyncio.Lock(), 0))
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[key]
            if users <= 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)

    def __len__(self) -> int:
        return len(self._locks)




def enabled_agents(settings: Settings) -> list[str]:
    """The agents NUGGETFLOW_STREAM_AGENTS names, in flow order."""
    wanted = {a.strip() for a in settings.stream_agents.split(",")}
    return [name for name in AGENT_SOURCES if name in wanted]


@dataclass(frozen=True)
class Agents:
    """The agents of a worker (Faust ``AgentT`` objects; None when not enabled)."""

    actionability: Any = None
    optimize: Any = None
    publish: Any = None
    review: Any = None
    reprobe: Any = None

    def __iter__(self) -> Iterator[Any]:
        return iter(a for a in (self.actionability, self.optimize, self.publish,
                                self.review, self.reprobe) if a is not None)


def register_agents(app: faust.App, topics: Topics, steps: Steps, sink: Sink,
                    settings: Settings) -> Agents:
    """Define the enabled agents on ``app`` (no module-level app: one call per worker or
    test)."""
    tenant_locks = KeyedLocks()
    handled = RecentlyHandled()
    in_order = InOrderAcks()  # shared by the optimize agent's actors

    def redelivered(agent: str) -> str:
        if steps.metrics is not None:
            steps.metrics.observe_event(agent, REDELIVERED)
        return REDELIVERED

    async def emit_all(result: StepResult, record: Record) -> None:
        for emit in result.emits:
            await sink.emit(emit)
        handled.add(record)

    async def actionability(stream: StreamT[bytes]) -> AsyncIterator[list[str]]:
        # take_events is on faust's Stream, not on its StreamT interface.
        take_events = stream.take_events  # type: ignore[attr-defined]
        async for events in take_events(settings.stream_ingest_batch,
                                        within=INGEST_WITHIN_SECONDS):
            records = [record_of(e) for e in events]
            fresh = [r for r in records if r not in handled]
            results = dict(zip((id(r) for r in fresh), await steps.ingest(fresh),
                               strict=True))
            outcomes = []
            for record in records:
                result = results.get(id(record))
                if result is None:
                    outcomes.append(redelivered("actionability"))
                    continue
                await emit_all(result, record)
                outcomes.append(result.outcome)
            await ack(stream, events)
            yield outcomes

    async def one(agent: str, event: EventT[Any],
                  step: Callable[[Record], Awaitable[StepResult]],
                  done: Callable[[EventT[Any]], Awaitable[Any]]) -> str:
        record = record_of(event)
        if record in handled:
            outcome = redelivered(agent)
        else:
            result = await step(record)
            await emit_all(result, record)
            outcome = result.outcome
        await done(event)
        return outcome

    async def optimize(stream: StreamT[bytes]) -> AsyncIterator[str]:
        # Several actors share this agent's events: acknowledgements are ours, in order.
        manual = stream.noack()  # type: ignore[attr-defined]  # on Stream, not StreamT
        async for event in manual.events():
            # Before any await, so this (and the lock order) is offset order in a partition.
            in_order.received(event, manual.ack)
            async with tenant_locks.hold(event.key if isinstance(event.key, bytes) else None):
                outcome = await one("optimize", event, steps.optimize, in_order.done)
            yield outcome

    async def publish(stream: StreamT[bytes]) -> AsyncIterator[str]:
        async for event in stream.events():
            yield await one("publish", event, steps.publish, stream.ack)

    async def review(stream: StreamT[bytes]) -> AsyncIterator[str]:
        async for event in stream.events():
            yield await one("review", event, steps.review, stream.ack)

    async def reprobe(stream: StreamT[bytes]) -> AsyncIterator[str]:
        async for event in stream.events():
            async with tenant_locks.hold(event.key if isinstance(event.key, bytes) else None):
                outcome = await one("reprobe", event, steps.reprobe, stream.ack)
            yield outcome

    def topic(kind: TopicKind) -> Any:
        return raw_topic(app, topics.name(kind))

    bodies = {"actionability": actionability, "optimize": optimize, "publish": publish,
              "review": review, "reprobe": reprobe}
    made: dict[str, Any] = {}
    for name in enabled_agents(settings):
        concurrency = settings.stream_optimize_concurrency if name == "optimize" else 1
        made[name] = app.agent(topic(AGENT_SOURCES[name]), name=name,
                               concurrency=concurrency)(bodies[name])
    return Agents(**made)
