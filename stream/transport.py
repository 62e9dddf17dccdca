"""The Faust Kafka transport with an idempotent producer.

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

from faust.transport.drivers import TRANSPORTS
from faust.transport.drivers import aiokafka as driver
from faust.types import ProducerT

SCHEME = "nuggetflow-kafka"


class IdempotentProducer(driver.Producer):
    """Faust's producer with idempotence on (and therefore ``acks=all``)."""

    def _settings_extra(self) -> Mapping[str, Any]:
        return {**super()._settings_extra(), "acks": "all", "enable_idempotence": True}


class Transport(driver.Transport):
    """Faust's aiokafka transport making :class:`IdempotentProducer` producers."""

    Producer: ClassVar[type[ProducerT]] = IdempotentProducer


TRANSPORTS.aliases.setdefault(SCHEME, f"{__name__}:Transport")
