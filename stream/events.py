"""Feedback events: the FeedbackEvent of protos/ as protobuf binary or canonical JSON."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import UTC
from pathlib import Path

from google.protobuf import json_format
from google.protobuf.message import DecodeError

from nuggetflow.errors import ValidationError
from nuggetflow.inputs import read_lines
from nuggetflow.v1 import feedback_pb2
from optimizer.types import FeedbackContext


def parse_event(raw: bytes | str) -> feedback_pb2.FeedbackEvent:
    """Decode canonical JSON (text starting with ``{``) or protobuf binary; validate.

    Raises ValidationError naming the problem; the caller dead-letters the raw bytes.
    """
    data = raw.encode() if isinstance(raw, str) else raw
    msg = feedback_pb2.FeedbackEvent()
    stripped = data.lstrip()
    if stripped.startswith(b"{"):
        try:
            json_format.Parse(stripped.decode("utf-8"), msg)
        except (json_format.ParseError, UnicodeDecodeError) as exc:
            raise ValidationError(f"not a FeedbackEvent in JSON: {exc}", field="event") from exc
    else:
        try:
            msg.ParseFromString(data)
        except DecodeError as exc:
            raise ValidationError(f"neither JSON nor protobuf: {exc}", field="event") from exc
    validate_event(msg)
    return msg


def validate_event(msg: feedback_pb2.FeedbackEvent) -> None:
    """Required fields: event_id, tenant, query, and a rating or a comment."""
    for name in ("event_id", "tenant", "query"):
        if not getattr(msg, name).strip():
            raise ValidationError(f"{name} is missing or empty", field=name)
    if not (msg.feedback.comment.strip() or msg.feedback.rating.strip()):
        raise ValidationError("feedback has neither rating nor comment", field="feedback")
    if msg.feedback.rating not in ("", "up", "down"):
        raise ValidationError(f"rating must be up, down or empty, got {msg.feedback.rating!r}",
                              field="feedback.rating")


def to_context(msg: feedback_pb2.FeedbackEvent) -> FeedbackContext:
    """The optimizer's view of an event."""
    ts = msg.timestamp.ToDatetime(tzinfo=UTC) if msg.HasField("timestamp") else None
    return FeedbackContext(event_id=msg.event_id, tenant=msg.tenant, query=msg.query,
                           answer=msg.answer, comment=msg.feedback.comment,
                           rating=msg.feedback.rating,
                           cited_documents=tuple(msg.cited_documents), timestamp=ts,
                           user=msg.user, agent=msg.agent)


def read_events(path: str | Path) -> Iterable[tuple[int, bytes]]:
    """(line number, raw line) of a JSONL file or ``-`` for stdin; blank lines skipped.

    A file is read and checked whole, now: InputError (one line, exit status 2 in the
    CLI) when it is missing, a directory, unreadable, binary or not UTF-8 text, naming
    the line. Standard input is a stream: its lines come as they arrive, and one that is
    not an event (not UTF-8 either) is rejected by :func:`parse_event` like any other.
    """
    if str(path) == "-":
        return _stdin_lines()
    return [(number, line) for number, line in read_lines(path) if line.strip()]


def _stdin_lines() -> Iterator[tuple[int, bytes]]:
    import sys

    for number, line in enumerate(sys.stdin.buffer, start=1):
        if line.strip():
            yield number, line.rstrip(b"\n")
