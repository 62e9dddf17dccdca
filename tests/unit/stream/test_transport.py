"""The worker's Kafka consumer (stream.transport): what it does beyond Faust's, and pins of
the Faust and aiokafka behaviour it makes up for (each fails when a release changes it, so
the override can be reconsidered)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from faust.transport.consumer import Consumer
from faust.types import TP

from nuggetflow.settings import Settings
from stream.app import create_app
from stream.transport import FromCommittedConsumer

TOPIC = "feedback.corrections"


@pytest.fixture
def consumer() -> Iterator[FromCommittedConsumer]:
    """The worker app's own consumer (not started: nothing here talks to a broker)."""
    app = create_app(Settings.from_env({"NUGGETFLOW_KAFKA_BOOTSTRAP": "127.0.0.1:9"}))
    made = app.consumer
    assert isinstance(made, FromCommittedConsumer)
    yield made


def fetched(monkeypatch: pytest.MonkeyPatch, batches: list[list[tuple[TP, int]]]) -> None:
    """Faust's own fetch returns these (partition, offset) batches, one per call."""
    calls = iter(batches)

    async def getmany(self: Any, timeout: float) -> AsyncIterator[tuple[TP, Any]]:
        for tp, offset in next(calls):
            yield tp, SimpleNamespace(offset=offset)

    monkeypatch.setattr(Consumer, "getmany", getmany)


async def handed_on(consumer: FromCommittedConsumer) -> list[int]:
    return [m.offset async for _, m in consumer.getmany(timeout=0)]


async def test_a_partition_without_a_commit_is_rewound_to_its_start() -> None:
    """Why the worker's consumer rewinds: aiokafka's seek_to_committed leaves a partition
    without a committed offset where its last fetch ended, and the events Faust cleared
    from its agents' buffers on the rebalance would never come again."""
    from aiokafka import TopicPartition

    fresh, kept = TopicPartition(TOPIC, 3), TopicPartition(TOPIC, 0)
    sought: list[TopicPartition] = []

    async def seek_to_committed() -> dict[TopicPartition, int | None]:
        return {fresh: None, kept: 68}

    async def seek_to_beginning(*tps: TopicPartition) -> None:
        sought.extend(tps)

    consumer = SimpleNamespace(_thread=SimpleNamespace(
        seek_to_committed=seek_to_committed, seek_to_beginning=seek_to_beginning))
    committed = await FromCommittedConsumer.seek_to_committed(consumer)  # type: ignore[arg-type]
    assert sought == [fresh] and committed == {fresh: None, kept: 68}


async def test_after_a_seek_the_commit_waits_for_the_first_offset_of_each_partition(
        consumer: FromCommittedConsumer, monkeypatch: pytest.MonkeyPatch) -> None:
    """A partition with a commit starts from it; one without starts from its first offset
    (Faust records no committed offset for it): either way no run of later
    acknowledgements is committed before that offset's event is acknowledged."""
    kept, fresh = TP(TOPIC, 0), TP(TOPIC, 1)

    async def perform_seek(self: Any) -> None:  # Faust's: committed offsets, None for none
        self._committed_offset.update({kept: 40, fresh: None})

    async def earliest_offsets(*tps: TP) -> dict[TP, int]:
        assert tps == (fresh,)
        return {fresh: 0}

    monkeypatch.setattr(Consumer, "perform_seek", perform_seek)
    monkeypatch.setattr(consumer, "assignment", lambda: {kept, fresh})
    monkeypatch.setattr(consumer, "earliest_offsets", earliest_offsets)
    await consumer.perform_seek()
    assert consumer._committed_offset[fresh] == 0
    for tp, done in ((kept, [41, 42]), (fresh, [1, 2])):  # the first is in flight (or lost)
        consumer._acked[tp] = list(done)
        consumer._acked_index[tp] = set(done)
        assert consumer._new_offset(tp) is None
    consumer._acked[kept].insert(0, 40)
    consumer._acked_index[kept].add(40)
    assert consumer._new_offset(kept) == 43


async def test_an_event_fetched_again_after_a_seek_back_is_handed_on_not_dropped(
        consumer: FromCommittedConsumer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The read offset stands at 12 (an event of the batch fetched before the seek back to
    5 was handed on after it): Faust would drop 5..12 as read. Here they are handed on,
    and nothing between counts as acknowledged."""
    tp = TP(TOPIC, 0)
    consumer._committed_offset[tp] = 5
    consumer._fetch_from = {tp: 5}
    consumer._read_offset[tp] = 12
    fetched(monkeypatch, [[(tp, 5), (tp, 6)], [(tp, 7)]])
    assert await handed_on(consumer) == [5, 6]
    assert consumer._read_offset[tp] is None  # Faust's drop test passes every offset
    assert await handed_on(consumer) == [7]
    assert not consumer._gap[tp]
    consumer._acked[tp], consumer._acked_index[tp] = [6, 7], {6, 7}
    assert consumer._new_offset(tp) is None  # 5 is not done


async def test_offsets_the_fetch_skipped_count_as_done_and_nothing_else(
        consumer: FromCommittedConsumer, monkeypatch: pytest.MonkeyPatch) -> None:
    """A transaction marker at 40 (the committed offset) and at 43: the fetch returns 41,
    42, 44. The markers count as done (the commit is not held for them forever); 42 still
    in flight holds the commit at 42."""
    tp = TP(TOPIC, 2)
    consumer._committed_offset[tp] = 40
    consumer._fetch_from = {tp: 40}
    fetched(monkeypatch, [[(tp, 41), (tp, 42), (tp, 44)]])
    assert await handed_on(consumer) == [41, 42, 44]
    assert sorted((i.begin, i.end) for i in consumer._gap[tp]) == [(40, 41), (43, 44)]
    consumer._acked[tp], consumer._acked_index[tp] = [41, 44], {41, 44}
    assert consumer._new_offset(tp) == 42
    consumer._committed_offset[tp] = 42
    consumer._acked[tp].append(42)
    consumer._acked_index[tp].add(42)
    assert consumer._new_offset(tp) == 45


def test_aiokafka_does_not_rewind_a_partition_without_a_commit() -> None:
    """The behaviour FromCommittedConsumer.seek_to_committed makes up for (if aiokafka
    starts seeking such a partition to its reset position, this fails and the override
    could go)."""
    import inspect

    from aiokafka import AIOKafkaConsumer

    source = inspect.getsource(AIOKafkaConsumer.seek_to_committed)
    assert "if offset and offset > 0:" in source


def test_faust_drops_events_below_its_read_offset() -> None:
    """The behaviour FromCommittedConsumer.getmany makes up for: Faust's fetch loop hands
    on only offsets at or past the read offset and counts a jump as a gap."""
    import inspect

    source = inspect.getsource(Consumer._drain_messages)
    assert "if r_offset is None or offset >= r_offset:" in source
    assert "await self._add_gap(tp, r_offset + 1, offset)" in source


def test_faust_would_commit_past_an_event_in_flight() -> None:
    """Why the commit waits (FromCommittedConsumer._new_offset) and the optimize agent
    acknowledges in order: Faust's commit takes the first run of acknowledged offsets
    even when the committed offset's event is still being processed (if a Faust release
    stops doing that, this fails and the overrides could go)."""
    from collections import defaultdict

    from intervaltree import IntervalTree  # type: ignore[import-untyped]

    tp = TP("feedback.corrections", 0)
    consumer = SimpleNamespace(_acked=defaultdict(list), _acked_index=defaultdict(set),
                               _gap=defaultdict(IntervalTree),
                               _committed_offset=defaultdict(lambda: None))
    consumer._committed_offset[tp] = 40  # the next offset to read; 40 is in flight
    consumer._acked[tp] = [41, 42]
    consumer._acked_index[tp] = {41, 42}
    assert Consumer._new_offset(consumer, tp) == 43  # type: ignore[arg-type]


async def test_the_livelock_check_skips_a_partition_whose_position_is_being_reset(
        consumer: FromCommittedConsumer, monkeypatch: pytest.MonkeyPatch) -> None:
    """After a rewind to the start aiokafka knows no position for the partition until the
    reset is done, and reading it asserts (the pin below): Faust's livelock check read it
    mid-rebalance and crashed a worker. The consumer skips the check for that partition
    and leaves every other to Faust's."""
    from aiokafka.consumer.subscription_state import TopicPartitionState

    resetting = TopicPartitionState(assignment=None)
    with pytest.raises(AssertionError):  # aiokafka's: no position while resetting
        _ = resetting.position
    placed = TopicPartitionState(assignment=None)
    placed.seek(12)
    states = {0: resetting, 1: placed}
    assignment = SimpleNamespace(state_value=lambda tp: states[tp.partition])
    fetcher = SimpleNamespace(_subscriptions=SimpleNamespace(
        subscription=SimpleNamespace(assignment=assignment)))
    monkeypatch.setattr(consumer, "_thread", SimpleNamespace(
        _ensure_consumer=lambda: SimpleNamespace(_fetcher=fetcher)))
    from faust.transport.drivers import aiokafka as driver

    checked: list[TP] = []
    monkeypatch.setattr(driver.Consumer, "verify_event_path",
                        lambda self, now, tp: checked.append(tp))
    consumer.verify_event_path(0.0, TP(TOPIC, 0))
    consumer.verify_event_path(0.0, TP(TOPIC, 1))
    assert checked == [TP(TOPIC, 1)]
