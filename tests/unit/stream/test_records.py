"""Record encodings: corrections, reviews (JSON and ReviewRequest binary), dead letters."""

from __future__ import annotations

import json

import pytest

from nuggetflow.errors import ValidationError
from nuggetflow.v1 import query_service_pb2
from optimizer.types import Extraction
from stream.events import parse_event
from stream.records import Correction, DeadLetter, Record, ReviewEvent, dead_letter
from stream.synthetic import correction, event
from stream.topics import TopicKind


def test_correction_round_trip() -> None:
    q, a, c = correction(0)
    msg = parse_event(json.dumps(event("e1", "acme", q, a, c)))
    ex = Extraction("actionable_correction", True, "cue", title="T", body="B b b b b.",
                    subject="s", predicate="allowed_role", object="o", scope="portal v8.0")
    back = Correction.from_bytes(Correction(msg, ex).to_bytes())
    assert back.event == msg and back.extraction == ex


@pytest.mark.parametrize("raw, field", [
    (b"not json", "correction"),
    (b'{"event": {}, "extraction": {}}', "event_id"),
    (b'{"event": {"eventId": "e", "tenant": "t", "query": "q", "feedback": {"rating": "up"}},'
     b' "extraction": {"usefulness": "x"}}', "correction.extraction"),
    (b'{"event": {"nope": 1}, "extraction": {}}', "correction.event"),
])
def test_bad_corrections_name_the_field(raw: bytes, field: str) -> None:
    with pytest.raises(ValidationError) as err:
        Correction.from_bytes(raw)
    assert err.value.field == field


def test_review_json_round_trip_and_fresh_ids() -> None:
    r = ReviewEvent("acme", "n-1", "edit", reviewer="ann", reason="typo",
                    changes={"title": "New", "anchors": ["a", "b"]})
    a, b = r.with_id(), r.with_id()
    assert a.review_id and a.review_id != b.review_id
    back = ReviewEvent.from_bytes(a.to_bytes())
    assert back == ReviewEvent("acme", "n-1", "edit", "ann", "typo", "",
                               {"title": "New", "anchors": ["a", "b"]}, a.review_id)
    assert back.tag == f"[review {a.review_id}]"


def test_review_request_protobuf_is_accepted() -> None:
    msg = query_service_pb2.ReviewRequest(tenant="acme", id="n-1",
                                          action=query_service_pb2.ReviewRequest.REVERT,
                                          reviewer="bob", target_version_id="n-0")
    r = ReviewEvent.from_bytes(msg.SerializeToString())
    assert (r.tenant, r.id, r.action, r.reviewer, r.target_version_id) == (
        "acme", "n-1", "revert", "bob", "n-0")
    assert r.review_id == ""  # the review step uses the record's topic:partition:offset


@pytest.mark.parametrize("doc, field", [
    ({"tenant": "acme", "id": "n", "action": "publish"}, "action"),
    ({"tenant": "", "id": "n", "action": "approve"}, "tenant"),
    ({"tenant": "acme", "id": "n", "action": "revert"}, "target_version_id"),
    ({"tenant": "acme", "id": "n", "action": "edit"}, "changes"),
    ({"tenant": "acme", "id": "n", "action": "edit", "changes": {"state": "x"}}, "changes"),
    ({"tenant": "acme", "id": "n", "action": "edit", "changes": {"title": ""}},
     "changes.title"),
    ({"tenant": "acme", "id": "n", "action": "edit", "changes": {"anchors": "a"}},
     "changes.anchors"),
    ({"tenant": "acme", "id": "n", "action": "approve", "changes": {"title": "x"}},
     "changes"),
    ({"tenant": "acme", "id": "n", "action": "approve", "extra": 1}, "review"),
    ({"tenant": "acme", "id": 3, "action": "approve"}, "id"),
])
def test_bad_reviews_name_the_field(doc: dict[str, object], field: str) -> None:
    with pytest.raises(ValidationError) as err:
        ReviewEvent.from_bytes(json.dumps(doc).encode())
    assert err.value.field == field


def test_review_action_names_are_case_insensitive() -> None:
    raw = json.dumps({"tenant": "acme", "id": "n", "action": "APPROVE"}).encode()
    assert ReviewEvent.from_bytes(raw).action == "approve"


def test_dead_letter_keeps_the_bytes_and_says_why() -> None:
    rec = Record(b"\xff\xfe garbage", b"acme", "p.feedback.events", 3, 42)
    emit = dead_letter(rec, stage="actionability", reason="decode", error="x" * 5000,
                       field_name="event")
    assert emit.kind is TopicKind.DEAD_LETTER and emit.key == b"acme"
    assert emit.value == rec.value
    dl = DeadLetter.from_headers(emit.value, emit.headers)
    assert (dl.reason, dl.stage, dl.source, dl.field) == (
        "decode", "actionability", "p.feedback.events:3:42", "event")
    assert len(dl.error) == 1000  # bounded
    assert "value_base64" in dl.to_dict()  # not UTF-8


def test_dead_letter_reasons_come_from_the_error_not_from_its_backend() -> None:
    from nuggetflow.errors import LLMOutputError
    from stream.records import reason_of

    assert reason_of(LLMOutputError("generator: malformed reply after 3 tries")) == \
        "llm_output"
    assert reason_of(ValidationError("bad tenant", field="tenant")) == "invalid_field"
    assert reason_of(ValidationError("not JSON", field="event")) == "decode"
