"""nuggetflow-client's feedback events and publisher: built and checked as the worker
checks them, produced as the worker reads them (the server's own parser decodes them)."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from aiokafka.errors import KafkaTimeoutError

from nuggetflow.errors import ValidationError
from nuggetflow_client import (
    FeedbackPublisher,
    InvalidArgument,
    Unavailable,
    feedback_event,
    publish_feedback,
)
from nuggetflow_client.feedback import EVENTS_TOPIC, encode_event, validate_event
from nuggetflow_client.v1 import feedback_pb2 as client_pb
from stream.events import parse_event
from stream.events import validate_event as server_validate
from stream.topics import TopicKind, Topics


class FakeProducer:
    """Records what is sent; acknowledges at once, or fails with ``error``."""

    def __init__(self, error: Exception | None = None) -> None:
        self.sent: list[tuple[str, bytes, bytes]] = []
        self.error = error

    async def send(self, topic: str, *, value: bytes, key: bytes) -> asyncio.Future[None]:
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self.error is not None:
            fut.set_exception(self.error)
        else:
            self.sent.append((topic, key, value))
            fut.set_result(None)
        return fut


def test_event_mirrors_the_proto_and_has_an_id_and_a_time() -> None:
    t = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)
    ev = feedback_event("acme", "who can reset passwords", answer="Admins can.",
                        rating="down", comment="Only Workspace Owners can.",
                        cited_documents=["n-1", "doc-2#0"], user="u-7", agent="chat",
                        event_id="ev-42", timestamp=t)
    assert (ev.event_id, ev.tenant, ev.query, ev.answer) == (
        "ev-42", "acme", "who can reset passwords", "Admins can.")
    assert (ev.feedback.rating, ev.feedback.comment) == ("down", "Only Workspace Owners can.")
    assert list(ev.cited_documents) == ["n-1", "doc-2#0"]
    assert (ev.user, ev.agent) == ("u-7", "chat")
    assert ev.timestamp.ToDatetime(tzinfo=UTC) == t
    fresh = feedback_event("acme", "q", rating="up")
    assert uuid.UUID(fresh.event_id) and fresh.event_id != feedback_event(
        "acme", "q", rating="up").event_id
    assert abs((fresh.timestamp.ToDatetime(tzinfo=UTC) - datetime.now(UTC)).total_seconds()) < 60
    naive = feedback_event("acme", "q", rating="up", timestamp=datetime(2026, 1, 1))
    assert naive.timestamp.ToDatetime(tzinfo=UTC) == datetime(2026, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(("changes", "field"), [
    ({"event_id": " "}, "event_id"),
    ({"tenant": ""}, "tenant"),
    ({"query": "  "}, "query"),
    ({"comment": " ", "rating": ""}, "feedback"),
    ({"rating": "meh"}, "feedback.rating"),
])
def test_checks_are_the_workers(changes: dict[str, str], field: str) -> None:
    """The client refuses exactly what the worker would dead-letter, naming the same field."""
    fields = {"event_id": "ev-1", "tenant": "acme", "query": "q", "comment": "wrong",
              "rating": "", **changes}
    with pytest.raises(InvalidArgument) as mine:
        feedback_event(**fields)  # type: ignore[arg-type]
    assert mine.value.field == field and mine.value.code == "INVALID_ARGUMENT"
    raw = client_pb.FeedbackEvent(
        event_id=fields["event_id"], tenant=fields["tenant"], query=fields["query"],
        feedback=client_pb.Feedback(rating=fields["rating"], comment=fields["comment"]))
    with pytest.raises(InvalidArgument):
        validate_event(raw)
    with pytest.raises(ValidationError) as theirs:
        # the two generated copies make one class at run time (same descriptor)
        server_validate(raw)  # type: ignore[arg-type]
    assert theirs.value.field == field


def test_a_lone_string_is_not_a_list_of_cited_ids() -> None:
    with pytest.raises(InvalidArgument) as err:
        feedback_event("acme", "q", rating="up", cited_documents="n-1")
    assert err.value.field == "cited_documents"


@pytest.mark.parametrize("wire_format", ["json", "protobuf"])
def test_encoded_events_decode_with_the_workers_parser(wire_format: Any) -> None:
    ev = feedback_event("acme", "was ist das? ünïcode", answer="a", comment="c",
                        cited_documents=["n-1"], agent="chat")
    key, value = encode_event(ev, wire_format)
    assert key == ev.tenant.encode(), "keyed by tenant, as nuggetflow publish does"
    assert value.lstrip().startswith(b"{") == (wire_format == "json")
    assert parse_event(value).SerializeToString() == ev.SerializeToString()
    if wire_format == "json":
        assert b'"eventId"' in value and b"\n" not in value, "one canonical JSON line"


async def test_publisher_produces_keyed_events_to_the_prefixed_topic() -> None:
    producer = FakeProducer()
    ev = feedback_event("acme", "q", rating="down", comment="no")
    async with FeedbackPublisher(topic_prefix="prod.", producer=producer) as pub:
        assert pub.topic == "prod." + EVENTS_TOPIC == Topics("prod.").name(TopicKind.EVENTS)
        await pub.publish(ev)
        bad = feedback_event("acme", "q", rating="up")
        bad.feedback.rating = "sideways"
        with pytest.raises(InvalidArgument):
            await pub.publish(bad)
    assert len(producer.sent) == 1, "an event the worker would refuse is not sent"
    topic, key, value = producer.sent[0]
    assert (topic, key) == ("prod.feedback.events", b"acme")
    assert parse_event(value) == ev

    binary = FakeProducer()
    async with FeedbackPublisher(producer=binary, wire_format="protobuf") as pub:
        await pub.publish(ev)
    assert binary.sent[0][0] == "feedback.events"
    assert binary.sent[0][2] == ev.SerializeToString()


def test_publish_feedback_blocks_until_every_event_is_acknowledged() -> None:
    producer = FakeProducer()
    first = feedback_event("acme", "q1", rating="down", comment="no")
    second = feedback_event("globex", "q2", rating="up")
    publish_feedback("unused:9092", first, second, topic_prefix="t.", wire_format="protobuf",
                     producer=producer)
    assert [(t, k) for t, k, _ in producer.sent] == [("t.feedback.events", b"acme"),
                                                    ("t.feedback.events", b"globex")]
    assert [parse_event(v) for _, _, v in producer.sent] == [first, second]
    bad = feedback_event("acme", "q", rating="up")
    bad.query = ""
    with pytest.raises(InvalidArgument) as err:
        publish_feedback("unused:9092", first, bad, producer=producer)
    assert err.value.field == "query" and len(producer.sent) == 2, "nothing more was sent"


async def test_publisher_errors() -> None:
    with pytest.raises(InvalidArgument) as err:
        FeedbackPublisher(producer=FakeProducer(), wire_format="xml")  # type: ignore[arg-type]
    assert err.value.field == "wire_format"
    pub = FeedbackPublisher(producer=FakeProducer(KafkaTimeoutError()))
    await pub.start()
    with pytest.raises(Unavailable) as down:
        await pub.publish(feedback_event("acme", "q", rating="up"))
    assert down.value.retriable and isinstance(down.value.__cause__, KafkaTimeoutError)
    not_started = FeedbackPublisher("127.0.0.1:1")
    with pytest.raises(RuntimeError, match="start"):
        await not_started.publish(feedback_event("acme", "q", rating="up"))
    await not_started.stop()


async def test_unreachable_broker_is_unavailable() -> None:
    pub = FeedbackPublisher("127.0.0.1:1", request_timeout_ms=2000)
    with pytest.raises(Unavailable):
        await pub.start()
