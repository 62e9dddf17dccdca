"""The Faust Kafka transport with an idempotent producer and a consumer that loses no
fetched event on a rebalance.

Faust's aiokafka producer asks for ``acks=all`` when told to (``producer_acks=-1``) but
turns idempotence on only inside transactions, so a retried send after a lost
acknowledgement can write a record twice. Every record the worker produces (corrections,
candidates, review requests, dead letters) goes through this producer instead, with
``enable_idempotence=True``: the broker drops a retried duplicate. The transport is Faust's
own otherwise; ``create_app`` names it by the URL scheme :data:`SCHEME`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any, ClassVar

from aiokafka import TopicPartition
from faust.transport.drivers import TRANSPORTS
from faust.transport.drivers import aiokafka as driver
from faust.types import TP, ConsumerT, Message, ProducerT

from nuggetflow.logging import get_logger

SCHEME = "nuggetflow-kafka"

log = get_logger(__name__)


class IdempotentProducer(driver.Producer):
    """Faust's producer with idempotence on (and therefore ``acks=all``)."""

    def _settings_extra(self) -> Mapping[str, Any]:
        return {**super()._settings_extra(), "acks": "all", "enable_idempotence": True}


class FromCommittedConsumer(driver.Consumer):
    """Faust's consumer that, after a rebalance, also rewinds the partitions nothing was
    committed for.

    On a rebalance Faust clears the events its agents had fetched but not yet taken
    (``clear_on_resume``) and seeks every partition back to its committed offset, so they
    are fetched again. aiokafka's ``seek_to_committed`` skips a partition without a
    committed offset (a new group, or one whose first commit is still due), which then
    goes on from where the cleared events ended: they are never delivered, and the first
    acknowledgement after them commits past them. Such a partition is sought to its
    first offset instead (``consumer_auto_offset_reset`` is "earliest"); what this worker
    already handled comes again and is skipped (``RecentlyHandled``, idempotent steps).
    """

    _fetch_from: dict[TP, int]  # per partition: the next offset its fetch returns

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._fetch_from = {}

    async def seek_to_committed(self) -> Mapping[TP, int]:
        """Seek every assigned partition to its committed offset, or to its first."""
        committed = await self._thread.seek_to_committed()
        fresh = sorted(tp for tp, offset in committed.items() if not offset or offset < 0)
        if fresh:
            await self._thread.seek_to_beginning(
                *(TopicPartition(tp.topic, tp.partition) for tp in fresh))
            log.info("partitions without a committed offset rewound to their start",
                     partitions=",".join(f"{tp.topic}:{tp.partition}" for tp in fresh))
        return committed

    async def perform_seek(self) -> None:
        """Seek as :meth:`seek_to_committed` does, and note where each partition's fetch
        starts: its committed offset, or its first offset for a partition without one
        (which Faust records as no committed offset, as it does a committed 0, so that any
        run of acknowledged offsets would be committed)."""
        await super().perform_seek()
        assigned = self.assignment()
        unknown = [tp for tp in assigned if self._committed_offset.get(tp) is None]
        if unknown:
            first = await self.earliest_offsets(*unknown)
            for tp, offset in first.items():
                if offset is not None and offset >= 0:
                    self._committed_offset[tp] = offset
        starts = {tp: self._committed_offset.get(tp) for tp in assigned}
        self._fetch_from = {tp: offset for tp, offset in starts.items() if offset is not None}

    async def getmany(self, timeout: float) -> AsyncIterator[tuple[TP, Message]]:
        """Faust's fetch, with no event dropped or skipped by its read offsets.

        Faust drops a fetched event whose offset is below the partition's read offset
        (the last one it handed on), and when an event's offset jumps past it, counts the
        offsets between, and the event's own, as acknowledged (a gap: a compacted topic or
        a transaction marker). After a seek back, an event handed on late from the batch
        fetched before the seek moves the read offset past the events the seek is to
        deliver again: they were dropped, and the gap let the next commit pass them.

        Here the read offset never drops an event (the steps absorb one that comes
        twice), and a gap is what the fetch itself skipped: the offsets between where the
        partition's fetch stood (since the last seek) and the event it returned, which
        hold no event to acknowledge (transaction markers, compacted records).
        """
        read_offsets = self._read_offset
        async for tp, message in super().getmany(timeout):
            offset = message.offset
            expected = self._fetch_from.get(tp)
            if expected is not None and offset > expected:
                # (not Faust's _add_gap, which leaves out the committed offset itself)
                self._gap[tp].addi(expected, offset)
                self._gap[tp].merge_overlaps()
            if expected is None or offset >= expected:
                self._fetch_from[tp] = offset + 1
            elif (read := read_offsets.get(tp)) is not None and offset <= read:
                log.info("event fetched again after a seek", offset=offset,
                         partition=f"{tp.topic}:{tp.partition}", read_offset=read)
            read_offsets[tp] = None  # Faust's drop and gap by read offset: see above
            yield tp, message

    def verify_event_path(self, now: float, tp: TP) -> None:
        """Faust's check that a partition's events still flow, skipped while aiokafka has
        no position for the partition: after :meth:`seek_to_committed` rewinds it, the
        position is unknown until the reset is done, and Faust's check reads it with an
        assertion (which crashed a worker mid-rebalance)."""
        try:
            fetcher = self._thread._ensure_consumer()._fetcher
            state = fetcher._subscriptions.subscription.assignment.state_value(
                TopicPartition(tp.topic, tp.partition))
        except (AttributeError, KeyError):  # (no assignment yet: Faust's own check decides)
            state = None
        if state is not None and not state.has_valid_position:
            return None
        super().verify_event_path(now, tp)

    def _new_offset(self, tp: TP) -> int | None:
        """The offset to commit for ``tp``: Faust's, but never past the committed offset
        before its event is acknowledged (or known to be a gap).

        Faust (0.15.3) commits the first run of acknowledged offsets when it starts one
        past the committed offset (for a transaction marker there), so with 40 committed
        (40 the next to read) and 41, 42 acknowledged it commits 43 while 40 is still
        unfinished, or was never delivered (cleared from an agent's buffer by a
        rebalance): if the partition then moves, 40 is lost. The gaps this consumer
        records are what the fetch skipped, so a marker at 40 is one of them.
        """
        acked = self._acked[tp]
        committed = self._committed_offset[tp]
        if acked and committed is not None and committed not in self._acked_index[tp] \
                and not self._gap[tp].overlaps(committed):
            return None
        offset: int | None = super()._new_offset(tp)
        return offset


class Transport(driver.Transport):
    """Faust's aiokafka transport making :class:`IdempotentProducer` producers and
    :class:`FromCommittedConsumer` consumers."""

    Producer: ClassVar[type[ProducerT]] = IdempotentProducer
    Consumer: ClassVar[type[ConsumerT]] = FromCommittedConsumer


TRANSPORTS.aliases.setdefault(SCHEME, f"{__name__}:Transport")
