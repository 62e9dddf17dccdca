"""Publishing user feedback to nuggetflow's ``feedback.events`` topic.

:func:`feedback_event` builds a ``nuggetflow.v1.FeedbackEvent`` and checks it the way the
worker does (event_id, tenant and query set; a rating or a comment; rating ``up``,
``down`` or empty), so a bad event fails here instead of in the dead-letter topic.
:class:`FeedbackPublisher` produces events as the worker reads them and as
``nuggetflow publish`` sends them: to ``<topic_prefix>feedback.events``, keyed by the
tenant (UTF-8), the value the event's canonical proto JSON (``wire_format="json"``, the
default) or protobuf binary (``"protobuf"``); the worker accepts both. It needs the
``kafka`` extra (``pip install 'nuggetflow-client[kafka]'``, aiokafka); without it,
creating a publisher raises ImportError saying so. Building events does not.
:func:`publish_feedback` is the blocking one-shot form for synchronous code.

Delivery is at least once: if ``publish`` fails or its outcome is unclear, publish the
same event again. The worker makes one nugget per ``event_id``, so a re-delivery with the
same id is harmless, and a new id would be a new event.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Literal, Self

from google.protobuf import json_format

from nuggetflow_client.errors import InvalidArgument, Unavailable
from nuggetflow_client.v1 import feedback_pb2

FeedbackEvent = feedback_pb2.FeedbackEvent
EVENTS_TOPIC = "feedback.events"
RATINGS = ("", "up", "down")
WireFormat = Literal["json", "protobuf"]
KAFKA_EXTRA_HINT = ("FeedbackPublisher needs aiokafka: pip install 'nuggetflow-client[kafka]' "
                    "(or pass producer=, an aiokafka producer of your own)")


def validate_event(event: FeedbackEvent) -> None:
    """The worker's checks: InvalidArgument naming the field when it would refuse it."""
    for name in ("event_id", "tenant", "query"):
        if not getattr(event, name).strip():
            raise InvalidArgument(f"{name} is missing or empty", code="INVALID_ARGUMENT",
                                  field=name)
    if not (event.feedback.comment.strip() or event.feedback.rating.strip()):
        raise InvalidArgument("feedback has neither rating nor comment",
                              code="INVALID_ARGUMENT", field="feedback")
    if event.feedback.rating not in RATINGS:
        raise InvalidArgument(f"rating must be up, down or empty, got "
                              f"{event.feedback.rating!r}", code="INVALID_ARGUMENT",
                              field="feedback.rating")


def feedback_event(tenant: str, query: str, *, answer: str = "", rating: str = "",
                   comment: str = "", cited_documents: Sequence[str] = (), user: str = "",
                   agent: str = "", event_id: str | None = None,
                   timestamp: datetime | None = None) -> FeedbackEvent:
    """A checked FeedbackEvent: a user's ``rating`` (``"up"``/``"down"``) and/or
    ``comment`` on the ``answer`` an assistant gave to ``query``; ``cited_documents``
    the ids the answer cited; ``agent`` the assistant ("chat", "ticket", ...).
    ``event_id`` defaults to a new UUID and ``timestamp`` to now (a naive time is UTC)."""
    if isinstance(cited_documents, str):
        raise InvalidArgument("a list of ids, not one string", code="INVALID_ARGUMENT",
                              field="cited_documents")
    event = FeedbackEvent(event_id=event_id if event_id is not None else uuid.uuid4().hex,
                          tenant=tenant, query=query, answer=answer,
                          feedback=feedback_pb2.Feedback(rating=rating, comment=comment),
                          cited_documents=list(cited_documents), user=user, agent=agent)
    t = timestamp if timestamp is not None else datetime.now(UTC)
    event.timestamp.FromDatetime(t if t.tzinfo else t.replace(tzinfo=UTC))
    validate_event(event)
    return event


def encode_event(event: FeedbackEvent, wire_format: WireFormat = "json") -> tuple[bytes, bytes]:
    """(key, value) of the Kafka record for an event: the tenant, and the event as
    canonical proto JSON or protobuf binary."""
    if wire_format == "json":
        value = json_format.MessageToJson(event, indent=None, ensure_ascii=False).encode()
    elif wire_format == "protobuf":
        value = event.SerializeToString()
    else:
        raise InvalidArgument(f"must be json or protobuf, got {wire_format!r}",
                              code="INVALID_ARGUMENT", field="wire_format")
    return event.tenant.encode(), value


def _kafka_errors() -> tuple[type[BaseException], ...]:
    """aiokafka's error root, or nothing to catch when aiokafka is not installed (a
    producer passed in that is not aiokafka's raises its own errors)."""
    try:
        from aiokafka.errors import KafkaError
    except ImportError:
        return ()
    return (KafkaError,)


class FeedbackPublisher:
    """Produces feedback events to ``<topic_prefix>feedback.events``.

    ``bootstrap_servers``: ``"host:port,..."`` or a list. ``topic_prefix``: the
    deployment's ``NUGGETFLOW_STREAM_PREFIX`` (e.g. ``"prod."``). The producer is
    idempotent with ``acks="all"`` (as the server's own); ``producer_options`` go to
    ``aiokafka.AIOKafkaProducer`` (security settings, ...). ``producer``: an aiokafka
    producer you start and stop yourself, used instead.

    ``async with FeedbackPublisher(...) as pub: await pub.publish(event)``
    """

    def __init__(self, bootstrap_servers: str | Sequence[str] = "localhost:9092", *,
                 topic_prefix: str = "", wire_format: WireFormat = "json",
                 producer: Any = None, **producer_options: Any) -> None:
        encode_event(FeedbackEvent(), wire_format)  # InvalidArgument for a bad format, now
        self.topic = f"{topic_prefix}{EVENTS_TOPIC}"
        self.wire_format: WireFormat = wire_format
        self._own = producer is None
        if producer is None:
            try:
                from aiokafka import AIOKafkaProducer
            except ImportError as exc:
                raise ImportError(KAFKA_EXTRA_HINT) from exc
            servers = ([s.strip() for s in bootstrap_servers.split(",") if s.strip()]
                       if isinstance(bootstrap_servers, str) else list(bootstrap_servers))
            options = {"acks": "all", "enable_idempotence": True, "linger_ms": 5,
                       **producer_options}
            producer = AIOKafkaProducer(bootstrap_servers=servers, **options)
        self._producer = producer
        self._started = not self._own

    async def start(self) -> None:
        """Connect (Unavailable when the brokers cannot be reached)."""
        if self._started:
            return
        try:
            await self._producer.start()
        except _kafka_errors() as exc:
            await self._producer.stop()
            raise Unavailable(f"Kafka cannot be reached: {exc}", code="UNAVAILABLE",
                              method="publish") from exc
        self._started = True

    async def stop(self) -> None:
        """Flush what is pending and disconnect (a producer passed in is left alone)."""
        if self._own and self._started:
            await self._producer.stop()
            self._started = False

    async def publish(self, event: FeedbackEvent) -> None:
        """Check the event, produce it and wait for the brokers' acknowledgement.

        InvalidArgument (nothing sent) for an event the worker would refuse; Unavailable
        when it was not acknowledged (publish the same event again)."""
        if not self._started:
            raise RuntimeError("FeedbackPublisher.start() was not called "
                               "(or use it as 'async with')")
        validate_event(event)
        key, value = encode_event(event, self.wire_format)
        try:
            await (await self._producer.send(self.topic, value=value, key=key))
        except _kafka_errors() as exc:
            raise Unavailable(f"producing to {self.topic} failed: {exc}",
                              code="UNAVAILABLE", method="publish") from exc

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.stop()


def publish_feedback(bootstrap_servers: str | Sequence[str], *events: FeedbackEvent,
                     topic_prefix: str = "", wire_format: WireFormat = "json",
                     **options: Any) -> None:
    """Blocking: connect, publish ``events`` in order (each acknowledged), disconnect.

    For synchronous code (it runs its own event loop; inside a running loop use
    :class:`FeedbackPublisher`). Every event is checked before anything is sent.
    ``options`` go to :class:`FeedbackPublisher` (``producer=``, aiokafka settings).
    """
    for event in events:
        validate_event(event)

    async def run() -> None:
        async with FeedbackPublisher(bootstrap_servers, topic_prefix=topic_prefix,
                                     wire_format=wire_format, **options) as pub:
            for event in events:
                await pub.publish(event)

    asyncio.run(run())
