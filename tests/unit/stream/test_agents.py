"""The Faust agents with ``agent.test_context()`` (no broker): each wraps its step, emits
the step's records to the sink, and yields the outcome; per-tenant ordering."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from nuggetflow.settings import Settings
from query.convert import nugget_from_bytes
from query.index import NuggetIndex
from query.model import Publication
from stream.agents import Agents, InOrderAcks, KeyedLocks, RecentlyHandled, register_agents
from stream.app import create_app
from stream.records import DeadLetter, Emit, Record, ReviewEvent
from stream.steps import Steps
from stream.synthetic import correction, event, malformed
from stream.topics import TopicKind, Topics


class RecordingSink:
    """Collects what the agents produce."""

    def __init__(self) -> None:
        self.emits: list[Emit] = []

    async def emit(self, emit: Emit) -> None:
        self.emits.append(emit)

    def of(self, kind: TopicKind) -> list[Emit]:
        return [e for e in self.emits if e.kind is kind]


@pytest.fixture
def sink() -> RecordingSink:
    return RecordingSink()


@pytest.fixture
def agents(steps: Steps, stream_settings: Settings, sink: RecordingSink) -> Iterator[Agents]:
    app = create_app(stream_settings)
    yield register_agents(app, Topics(), steps, sink, stream_settings)


def fb(event_id: str, tenant: str, i: int) -> bytes:
    q, a, c = correction(i)
    return json.dumps(event(event_id, tenant, q, a, c, minutes=i)).encode()


async def test_pipeline_through_the_four_agents(agents: Agents, sink: RecordingSink,
                                                index: NuggetIndex) -> None:
    vague = json.dumps(event("e2", "acme", "q?", "a.", "not helpful")).encode()
    async with agents.actionability.test_context() as agent:
        for raw in (fb("e1", "acme", 0), vague, malformed(0)):
            await agent.put(raw, key=b"acme")
        outcomes = [o for batch in agent.results.values() for o in batch]
    assert outcomes == ["correction", "not_actionable", "dead_letter"]
    [dead] = sink.of(TopicKind.DEAD_LETTER)
    assert DeadLetter.from_headers(dead.value, dead.headers).reason == "decode"
    assert dead.value == malformed(0)

    [corr] = sink.of(TopicKind.CORRECTIONS)
    async with agents.optimize.test_context() as agent:
        await agent.put(corr.value, key=corr.key)
        await agent.put(corr.value, key=corr.key)  # re-delivered
        assert list(agent.results.values()) == ["candidate", "duplicate"]
    cands = sink.of(TopicKind.CANDIDATES)
    assert len(cands) == 2 and len({nugget_from_bytes(c.value).id for c in cands}) == 1

    async with agents.publish.test_context() as agent:
        await agent.put(cands[0].value, key=cands[0].key)
        assert list(agent.results.values()) == ["auto_approve"]  # acme: auto policy
    [approve] = sink.of(TopicKind.REVIEWS)
    assert ReviewEvent.from_bytes(approve.value).action == "approve"

    async with agents.review.test_context() as agent:
        await agent.put(approve.value, key=approve.key)
        await agent.put(approve.value, key=approve.key)
        assert list(agent.results.values()) == ["applied", "duplicate"]
    [nugget] = await index.store.find_by_event("acme", "e1")
    assert nugget.publication is Publication.PUBLISHED


async def test_optimize_agent_runs_tenants_concurrently_in_order(
        agents: Agents, sink: RecordingSink) -> None:
    async with agents.actionability.test_context() as agent:
        for i, tenant in enumerate(["acme", "globex", "acme", "globex"]):
            await agent.put(fb(f"o{i}", tenant, i), key=tenant.encode())
    corrections = sink.of(TopicKind.CORRECTIONS)
    assert len(corrections) == 4
    async with agents.optimize.test_context() as agent:
        for c in corrections:
            await agent.put(c.value, key=c.key, wait=False)
        for _ in range(200):
            if len(agent.results) == 4:
                break
            await asyncio.sleep(0.05)
        assert sorted(agent.results.values()) == ["candidate"] * 4
    order = [nugget_from_bytes(c.value).provenance.event_id
             for c in sink.of(TopicKind.CANDIDATES)]
    assert [e for e in order if e in ("o0", "o2")] == ["o0", "o2"]  # acme in order
    assert [e for e in order if e in ("o1", "o3")] == ["o1", "o3"]  # globex in order


def delivered(partition: int, offset: int) -> Any:
    """A stand-in for a Faust event: only where it came from matters here."""
    return SimpleNamespace(message=SimpleNamespace(tp=("feedback.corrections", partition),
                                                   offset=offset))


async def test_in_order_acks_wait_for_the_events_delivered_before() -> None:
    acked: list[tuple[int, int]] = []

    async def ack(done: Any) -> None:
        acked.append((done.message.tp[1], done.message.offset))

    acks = InOrderAcks()
    p0 = [delivered(0, o) for o in (7, 8, 9)]
    p1 = delivered(1, 3)
    for one in (*p0, p1):
        acks.received(one, ack)
    await acks.done(p0[1])  # 8 finished while 7 is in flight: nothing to commit yet
    await acks.done(p0[2])
    assert acked == []
    await acks.done(p1)  # another partition does not wait for partition 0
    assert acked == [(1, 3)]
    await acks.done(p0[0])  # 7 done: 7, 8 and 9 in delivery order
    assert acked == [(1, 3), (0, 7), (0, 8), (0, 9)]
    assert len(acks) == 0
    with pytest.raises(KeyError, match="not noted"):
        await acks.done(delivered(0, 11))  # never noted: a bug, not a silent ack


async def test_an_event_delivered_again_after_a_rewind_holds_back_later_acks() -> None:
    """A rebalance rewinds the partition (its fetched events were cleared): 0 and 1 come
    again while 2, delivered before the rewind, is still in flight. 2 finishing first
    acknowledges nothing (that would commit past 0 and 1)."""
    acked: list[int] = []

    async def ack(done: Any) -> None:
        acked.append(done.message.offset)

    acks = InOrderAcks()
    late = delivered(0, 2)
    acks.received(late, ack)
    again = [delivered(0, o) for o in (0, 1, 2)]
    for one in again:
        acks.received(one, ack)
    await acks.done(late)
    assert acked == []
    await acks.done(again[0])
    await acks.done(again[1])
    assert acked == [0, 1, 2]  # the finished 2 (either delivery) follows 0 and 1
    await acks.done(again[2])
    assert acked == [0, 1, 2, 2] and len(acks) == 0


async def test_keyed_locks_serialize_a_key_not_others() -> None:
    locks = KeyedLocks()
    done: list[str] = []

    async def job(name: str, key: bytes, seconds: float) -> None:
        async with locks.hold(key):
            await asyncio.sleep(seconds)
            done.append(name)

    await asyncio.gather(job("a-slow", b"a", 0.1), job("a-fast", b"a", 0),
                         job("b-fast", b"b", 0))
    assert done == ["b-fast", "a-slow", "a-fast"]
    assert len(locks) == 0  # nothing kept for idle keys


def test_a_worker_runs_only_the_agents_it_is_given(steps: Steps, stream_settings: Settings,
                                                   sink: RecordingSink) -> None:
    settings = stream_settings.replace(stream_agents="actionability, review")
    app = create_app(settings)
    agents = register_agents(app, Topics("p."), steps, sink, settings)
    assert agents.optimize is None and agents.publish is None
    assert [a.name for a in agents] == ["actionability", "review"]
    assert sorted(t for a in agents for t in a.channel.topics) == [
        "p.feedback.events", "p.nuggets.reviews"]


def test_recently_handled_remembers_the_latest_records() -> None:
    memo = RecentlyHandled(size=2)
    a, b, c = (Record(b"", None, "t", 0, i) for i in range(3))
    memo.add(a)
    memo.add(b)
    assert a in memo and Record(b"other", b"k", "t", 0, 0) in memo  # identity = source
    memo.add(c)
    assert a not in memo and b in memo and c in memo
    assert Record(b"", None, "t", 1, 1) not in memo


def test_faust_keeps_its_state_under_var_not_in_the_working_directory(
        stream_settings: Settings) -> None:
    app = create_app(stream_settings)
    datadir = Path(app.conf.datadir)
    assert datadir.parts[:2] == ("var", "faust") and datadir.name == app.conf.id
