"""Producing to the topics with aiokafka: feedback events (``nuggetflow publish``) and
review events (``nuggetflow review-event``; :class:`ReviewProducer` for services)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaConnectionError, KafkaError

from nuggetflow.errors import BackendUnavailableError, NuggetflowError
from nuggetflow.logging import get_logger
from nuggetflow.settings import Settings
from query.corpus import CorpusChange
from stream.events import parse_event
from stream.records import ReviewEvent
from stream.topics import TopicKind, Topics, bootstrap_servers, kafka_client_options

log = get_logger(__name__)

FORMATS = ("json", "protobuf")
PENDING_MAX = 10_000


@dataclass
class PublishReport:
    """What ``publish`` did: sent, rejected (line and reason), time."""

    sent: int = 0
    rejected: list[tuple[int, str]] = field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> dict[str, Any]:
        """JSON-ready totals."""
        return {"sent": self.sent, "rejected": len(self.rejected),
                "rejections": [{"line": n, "reason": r} for n, r in self.rejected],
                "seconds": round(self.seconds, 2),
                "events_per_s": round(self.sent / self.seconds, 1) if self.seconds else 0.0}


async def start_producer(settings: Settings) -> Any:
    """A started idempotent producer (acks=all); BackendUnavailableError when unreachable."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap_servers(settings), acks="all",
                                enable_idempotence=True, linger_ms=5,
                                **kafka_client_options(settings))
    try:
        await producer.start()
    except KafkaConnectionError as exc:
        await producer.stop()
        raise BackendUnavailableError(f"Kafka at {settings.kafka_bootstrap} cannot be "
                                      f"reached: {exc}", field="NUGGETFLOW_KAFKA_BOOTSTRAP"
                                      ) from exc
    return producer


async def publish_events(settings: Settings, lines: Iterable[tuple[int, bytes]], *,
                         fmt: str = "json", validate: bool = True,
                         progress: Callable[[PublishReport], None] | None = None,
                         progress_every: int = 500) -> PublishReport:
    """Produce feedback events to feedback.events, keyed by tenant.

    With ``validate`` (the default) a line that is not a valid FeedbackEvent is rejected
    here with its reason and not sent; without it every line is sent as it is (the
    worker dead-letters what is malformed). ``fmt`` is the wire format of valid events:
    ``json`` (the line itself) or ``protobuf`` (binary).
    """
    if fmt not in FORMATS:
        raise NuggetflowError(f"format must be one of {', '.join(FORMATS)}", field="format")
    topic = Topics.from_settings(settings).name(TopicKind.EVENTS)
    report = PublishReport()
    started = time.perf_counter()
    producer = await start_producer(settings)
    try:
        pending = []
        for number, raw in lines:
            try:
                msg = parse_event(raw)
            except NuggetflowError as exc:
                if validate:
                    report.rejected.append((number, str(exc)))
                    continue
                key, value = None, raw
            else:
                key = msg.tenant.encode()
                value = msg.SerializeToString() if fmt == "protobuf" else raw
            pending.append(await producer.send(topic, value=value, key=key))
            report.sent += 1
            if len(pending) >= PENDING_MAX:  # bound memory: wait for the acks so far
                for fut in pending:
                    await fut
                pending.clear()
            if progress is not None and report.sent % progress_every == 0:
                report.seconds = time.perf_counter() - started
                progress(report)
        for fut in pending:
            await fut
    except KafkaError as exc:
        raise BackendUnavailableError(f"producing to {topic} failed: {exc}") from exc
    finally:
        await producer.stop()
    report.seconds = time.perf_counter() - started
    log.info("events published", topic=topic, sent=report.sent,
             rejected=len(report.rejected), seconds=round(report.seconds, 2))
    return report


class ReviewProducer:
    """A long-lived producer of reviews to nuggets.reviews (for services such as the query
    service's Review call): ``start()`` once, ``publish()`` per review, ``stop()``."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.topic = Topics.from_settings(settings).name(TopicKind.REVIEWS)
        self._producer: Any = None

    async def start(self) -> None:
        """Connect (BackendUnavailableError when Kafka cannot be reached)."""
        if self._producer is None:
            self._producer = await start_producer(self.settings)

    async def stop(self) -> None:
        """Flush and disconnect."""
        if self._producer is not None:
            await self._producer.stop()
            self._producer = None

    async def publish(self, review: ReviewEvent) -> ReviewEvent:
        """Validate, give it a review id if it has none, produce it keyed by tenant and
        wait for the broker's acknowledgement; returns the review as sent.

        ValidationError for a bad review (nothing sent); BackendUnavailableError when the
        broker does not acknowledge it.
        """
        if self._producer is None:
            raise RuntimeError("ReviewProducer.start() was not called")
        review = review.with_id()
        review.validate()
        try:
            await (await self._producer.send(self.topic, value=review.to_bytes(),
                                             key=review.tenant.encode()))
        except KafkaError as exc:
            raise BackendUnavailableError(f"producing to {self.topic} failed: {exc}") from exc
        log.info("review published", topic=self.topic, tenant=review.tenant, id=review.id,
                 action=review.action, review_id=review.review_id)
        return review


async def publish_review(settings: Settings, review: ReviewEvent) -> ReviewEvent:
    """Validate and produce one review (connects, sends, disconnects)."""
    review = review.with_id()
    review.validate()
    producer = ReviewProducer(settings)
    await producer.start()
    try:
        return await producer.publish(review)
    finally:
        await producer.stop()


async def publish_changes(settings: Settings, changes: Sequence[CorpusChange]) -> int:
    """Produce corpus changes to corpus.changes, keyed by tenant, in order (the worker's
    reprobe agent reads them); the number sent. BackendUnavailableError when the broker
    does not acknowledge one; the error's ``sent`` attribute says how many went before
    it (the caller keeps the rest: ``nuggetflow ingest`` writes them to a file)."""
    topic = Topics.from_settings(settings).name(TopicKind.CORPUS_CHANGES)
    producer = await start_producer(settings)
    sent = 0
    try:
        for change in changes:
            await (await producer.send(topic, value=change.to_bytes(),
                                       key=change.tenant.encode()))
            sent += 1
    except KafkaError as exc:
        err = BackendUnavailableError(f"producing to {topic} failed: {exc}")
        err.sent = sent  # type: ignore[attr-defined]
        raise err from exc
    finally:
        await producer.stop()
    log.info("corpus changes published", topic=topic, sent=sent)
    return sent
