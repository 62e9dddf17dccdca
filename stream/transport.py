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

from collections.abc import Mapping
from typing import Any, ClassVar

from aiokafka import TopicPartition
from faust.transport.drivers import TRANSPORTS
from faust.transport.drivers import aiokafka as driver
from faust.types import TP, ConsumerT, ProducerT

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


class Transport(driver.Transport):
    """Faust's aiokafka transport making :class:`IdempotentProducer` producers and
    :class:`FromCommittedConsumer` consumers."""

    Producer: ClassVar[type[ProducerT]] = IdempotentProducer
    Consumer: ClassVar[type[ConsumerT]] = FromCommittedConsumer


TRANSPORTS.aliases.setdefault(SCHEME, f"{__name__}:Transport")
