"""What flows between the steps: records read, records to emit, and their encodings.

- :class:`Record`: a record read from a topic (value, key, where it came from).
- :class:`Emit`: a record a step wants produced to a logical topic.
- :class:`Correction`: the value of ``feedback.corrections`` (JSON: the event in the
  proto's canonical JSON plus the actionability extraction, so the optimize step does not
  ask the LLM again).
- :class:`ReviewEvent`: the value of ``nuggets.reviews`` (JSON; the query service's
  ``ReviewRequest`` protobuf binary is accepted too).
- dead letters: the original bytes as the value, the reason and the source in headers
  (``nuggetflow-dl-*``), see :func:`dead_letter` and :class:`DeadLetter`.
"""

from __future__ import annotations

import dataclasses
import json
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError

from nuggetflow.errors import ValidationError
from nuggetflow.v1 import feedback_pb2, query_service_pb2
from optimizer.types import Extraction
from query.model import RECORD_ACTIONS
from stream.events import validate_event
from stream.topics import TopicKind

Headers = tuple[tuple[str, bytes], ...]

DL_PREFIX = "nuggetflow-dl-"
ERROR_MAX_CHARS = 1000
EDITABLE = ("title", "body", "anchors")


@dataclass(frozen=True)
class Record:
    """One record read from a topic (or, in the embedded runner, from a file line)."""

    value: bytes
    key: bytes | None = None
    topic: str = ""
    partition: int = -1
    offset: int = -1
    headers: Headers = ()

    @property
    def source(self) -> str:
        """``topic:partition:offset``: stable across re-deliveries of this record."""
        return f"{self.topic}:{self.partition}:{self.offset}"


@dataclass(frozen=True)
class Emit:
    """A record a step produces: logical topic, key (the tenant), value, headers."""

    kind: TopicKind
    key: bytes | None
    value: bytes
    headers: Headers = ()


@dataclass(frozen=True)
class StepResult:
    """What a step did with one record: an outcome code and the records to produce."""

    outcome: str
    emits: tuple[Emit, ...] = ()
    tenant: str = ""
    event_id: str = ""
    nugget_id: str = ""
    detail: str = ""


# --- dead letters --------------------------------------------------------------------


def dead_letter(record: Record, *, stage: str, reason: str, error: str,
                field_name: str | None = None) -> Emit:
    """The dead-letter record for ``record``: its original bytes, the reason in headers.

    ``reason`` is a short fixed code (metric label); ``error`` the human-readable message.
    """
    headers: list[tuple[str, bytes]] = [
        (DL_PREFIX + "reason", reason.encode()),
        (DL_PREFIX + "error", error[:ERROR_MAX_CHARS].encode("utf-8", "replace")),
        (DL_PREFIX + "stage", stage.encode()),
        (DL_PREFIX + "topic", record.topic.encode()),
        (DL_PREFIX + "partition", str(record.partition).encode()),
        (DL_PREFIX + "offset", str(record.offset).encode()),
        (DL_PREFIX + "time", f"{time.time():.3f}".encode()),
    ]
    if field_name:
        headers.append((DL_PREFIX + "field", field_name.encode()))
    return Emit(TopicKind.DEAD_LETTER, record.key, record.value, tuple(headers))


@dataclass(frozen=True)
class DeadLetter:
    """A dead-letter record read back (for tests, tools and the runner's report)."""

    value: bytes
    reason: str
    error: str
    stage: str
    source: str
    field: str = ""

    @classmethod
    def from_headers(cls, value: bytes, headers: Sequence[tuple[str, bytes]]) -> DeadLetter:
        """Parse the ``nuggetflow-dl-*`` headers of a dead-letter record."""
        h = {k.removeprefix(DL_PREFIX): v.decode("utf-8", "replace") for k, v in headers
             if k.startswith(DL_PREFIX)}
        return cls(value=value, reason=h.get("reason", ""), error=h.get("error", ""),
                   stage=h.get("stage", ""),
                   source=f"{h.get('topic', '')}:{h.get('partition', '')}:{h.get('offset', '')}",
                   field=h.get("field", ""))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the value as UTF-8 text when it is, else base64)."""
        import base64

        try:
            text: dict[str, str] = {"value": self.value.decode("utf-8")}
        except UnicodeDecodeError:
            text = {"value_base64": base64.b64encode(self.value).decode()}
        return {"reason": self.reason, "error": self.error, "stage": self.stage,
                "source": self.source, "field": self.field, **text}


def reason_of(exc: ValidationError) -> str:
    """The dead-letter reason code of a validation error."""
    code = getattr(exc, "reason_code", "")
    if code:
        return str(code)
    if exc.field == "event":
        return "decode"
    return "invalid_field"


# --- corrections ---------------------------------------------------------------------


@dataclass(frozen=True)
class Correction:
    """An actionable feedback event and its extraction (value of feedback.corrections)."""

    event: feedback_pb2.FeedbackEvent
    extraction: Extraction

    def to_bytes(self) -> bytes:
        """Compact JSON."""
        return json.dumps({"v": 1, "event": json_format.MessageToDict(self.event),
                           "extraction": dataclasses.asdict(self.extraction)},
                          ensure_ascii=False, separators=(",", ":")).encode()

    @classmethod
    def from_bytes(cls, raw: bytes) -> Correction:
        """Parse and validate; ValidationError naming the bad part."""
        try:
            doc = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ValidationError(f"not JSON: {exc}", field="correction") from exc
        if not isinstance(doc, dict) or not isinstance(doc.get("event"), dict) \
                or not isinstance(doc.get("extraction"), dict):
            raise ValidationError("expected {event: {...}, extraction: {...}}",
                                  field="correction")
        event = feedback_pb2.FeedbackEvent()
        try:
            json_format.ParseDict(doc["event"], event)
        except json_format.ParseError as exc:
            raise ValidationError(f"bad event: {exc}", field="correction.event") from exc
        validate_event(event)
        names = {f.name for f in dataclasses.fields(Extraction)}
        ex = doc["extraction"]
        if set(ex) - names or not {"usefulness", "can_produce_nugget", "reason"} <= set(ex):
            raise ValidationError("extraction fields do not match", field="correction.extraction")
        return cls(event, Extraction(**ex))


# --- reviews -------------------------------------------------------------------------


@dataclass(frozen=True)
class ReviewEvent:
    """A review action on a nugget, as carried on nuggets.reviews.

    ``review_id`` makes re-delivery idempotent: the version a review creates carries it as
    its ``request_id`` (and, for people, in its change reason), and a review whose id is
    already on a version of the lineage is skipped.
    Records without one get their ``topic:partition:offset`` (stable across re-deliveries).
    """

    tenant: str
    id: str
    action: str
    reviewer: str = ""
    reason: str = ""
    target_version_id: str = ""
    changes: Mapping[str, Any] = field(default_factory=dict)
    review_id: str = ""

    def validate(self) -> None:
        """ValidationError naming the first bad field."""
        for name in ("tenant", "id"):
            if not getattr(self, name).strip():
                raise ValidationError(f"{name} is missing or empty", field=name)
        if self.action not in RECORD_ACTIONS:
            raise ValidationError(f"action must be one of {', '.join(RECORD_ACTIONS)}, got "
                                  f"{self.action!r}", field="action")
        if self.action == "revert" and not self.target_version_id:
            raise ValidationError("revert needs target_version_id", field="target_version_id")
        if self.action == "edit":
            if not self.changes:
                raise ValidationError("edit needs changes", field="changes")
            bad = set(self.changes) - set(EDITABLE)
            if bad:
                raise ValidationError(f"cannot edit {', '.join(sorted(bad))} (only "
                                      f"{', '.join(EDITABLE)})", field="changes")
            for name in ("title", "body"):
                if name in self.changes and (not isinstance(self.changes[name], str)
                                             or not self.changes[name].strip()):
                    raise ValidationError(f"{name} must be a non-empty string",
                                          field=f"changes.{name}")
            anchors = self.changes.get("anchors", [])
            if not isinstance(anchors, list) or not all(isinstance(a, str) for a in anchors):
                raise ValidationError("anchors must be a list of strings",
                                      field="changes.anchors")
        elif self.changes:
            raise ValidationError("changes are only allowed with action edit", field="changes")

    def with_id(self) -> ReviewEvent:
        """A copy with a fresh review id when it has none (for producers)."""
        return self if self.review_id else dataclasses.replace(self,
                                                               review_id=uuid.uuid4().hex)

    def to_bytes(self) -> bytes:
        """Compact JSON."""
        doc = {k: v for k, v in dataclasses.asdict(self).items() if v not in ("", {}, None)}
        if self.changes:
            doc["changes"] = dict(self.changes)
        return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode()

    @classmethod
    def from_bytes(cls, raw: bytes) -> ReviewEvent:
        """JSON ReviewEvent or ``nuggetflow.v1.ReviewRequest`` binary; validated."""
        if raw.lstrip().startswith(b"{"):
            try:
                doc = json.loads(raw)
            except (ValueError, UnicodeDecodeError) as exc:
                raise ValidationError(f"not JSON: {exc}", field="review") from exc
            names = {f.name for f in dataclasses.fields(cls)}
            if not isinstance(doc, dict) or set(doc) - names:
                raise ValidationError(f"expected an object with fields {sorted(names)}",
                                      field="review")
            for k, v in doc.items():
                if k != "changes" and not isinstance(v, str):
                    raise ValidationError(f"{k} must be a string", field=k)
            if not isinstance(doc.get("changes", {}), dict):
                raise ValidationError("changes must be an object", field="changes")
            event = cls(**{**doc, "action": str(doc.get("action", "")).lower()})
        else:
            from query.convert import review_action_from_proto

            msg = query_service_pb2.ReviewRequest()
            try:
                msg.ParseFromString(raw)
            except DecodeError as exc:
                raise ValidationError(f"neither JSON nor a ReviewRequest: {exc}",
                                      field="review") from exc
            event = cls(msg.tenant, msg.id, review_action_from_proto(msg.action),
                        msg.reviewer, msg.reason, msg.target_version_id)
        event.validate()
        return event

    @property
    def tag(self) -> str:
        """What the resulting version's change reason carries to mark this review."""
        return f"[review {self.review_id}]"
