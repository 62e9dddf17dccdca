"""Conversion between the domain model (query.model) and the wire types (nuggetflow.v1)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from google.protobuf.timestamp_pb2 import Timestamp

from nuggetflow.errors import ValidationError
from nuggetflow.v1 import nugget_pb2 as pb
from query.model import (
    Evidence,
    FactTriple,
    Kind,
    Nugget,
    Passage,
    Provenance,
    Publication,
    Rank,
    State,
    Validity,
)


def ts_to_proto(value: datetime | None) -> Timestamp | None:
    """A Timestamp for an aware datetime (None stays None)."""
    if value is None:
        return None
    ts = Timestamp()
    ts.FromDatetime(value.astimezone(UTC))
    return ts


def ts_from_proto(msg: object, field_name: str) -> datetime | None:
    """The datetime of a Timestamp field, or None when the field is unset."""
    if not msg.HasField(field_name):  # type: ignore[attr-defined]
        return None
    ts: Timestamp = getattr(msg, field_name)
    return ts.ToDatetime(tzinfo=UTC)


def nugget_to_proto(n: Nugget) -> pb.Nugget:
    """The wire form of a nugget version."""
    msg = pb.Nugget(
        id=n.id, parent_id=n.parent_id, lineage_id=n.lineage_id or n.id, version=n.version,
        tenant=n.tenant, kind=pb.NuggetKind.ValueType(n.kind), title=n.title, body=n.body,
        anchors=list(n.anchors),
        fact=pb.FactTriple(subject=n.fact.subject, predicate=n.fact.predicate,
                           object=n.fact.object, scope=n.fact.scope),
        validity=pb.Validity(start=ts_to_proto(n.validity.start),
                             end=ts_to_proto(n.validity.end), inferred=n.validity.inferred),
        state=pb.NuggetState.ValueType(n.state), rank=pb.NuggetRank.ValueType(n.rank),
        confidence=n.confidence,
        publication=pb.Publication.ValueType(n.publication),
        provenance=pb.Provenance(
            event_id=n.provenance.event_id, trigger_query=n.provenance.trigger_query,
            corrected_answer=n.provenance.corrected_answer,
            feedback_text=n.provenance.feedback_text,
            cited_documents=list(n.provenance.cited_documents),
            timestamp=ts_to_proto(n.provenance.timestamp), tenant=n.provenance.tenant,
            owner=n.provenance.owner),
        evidence=[pb.Evidence(source_id=e.source_id, kind=e.kind,
                              observed_at=ts_to_proto(e.observed_at)) for e in n.evidence],
        created_at=ts_to_proto(n.created_at), change_reason=n.change_reason,
        merged_into=n.merged_into,
    )
    if n.optimization:
        msg.optimization.variant = str(n.optimization.get("variant", ""))
        msg.optimization.iterations = int(n.optimization.get("iterations", 0))
        msg.optimization.passed = bool(n.optimization.get("passed", False))
        msg.optimization.seed = int(n.optimization.get("seed", 0))
    return msg


def nugget_from_proto(msg: pb.Nugget) -> Nugget:
    """The domain form of a wire nugget; ValidationError names a malformed field."""
    start = ts_from_proto(msg.validity, "start") if msg.HasField("validity") else None
    if start is None:
        raise ValidationError("validity start is required", field="validity.start")
    try:
        kind = Kind(msg.kind or Kind.SEMANTIC_FACT)
        state = State(msg.state or State.ACTIVE)
        rank = Rank(msg.rank or Rank.NORMAL)
        publication = Publication(msg.publication or Publication.DRAFT)
    except ValueError as exc:
        raise ValidationError(str(exc), field="enum") from exc
    prov = msg.provenance
    return Nugget(
        id=msg.id, parent_id=msg.parent_id, lineage_id=msg.lineage_id, version=msg.version or 1,
        tenant=msg.tenant, kind=kind, title=msg.title, body=msg.body, anchors=tuple(msg.anchors),
        fact=FactTriple(msg.fact.subject, msg.fact.predicate, msg.fact.object,
                        msg.fact.scope or "global"),
        validity=Validity(start, ts_from_proto(msg.validity, "end"), msg.validity.inferred),
        state=state, rank=rank, confidence=msg.confidence, publication=publication,
        provenance=Provenance(
            event_id=prov.event_id, trigger_query=prov.trigger_query,
            corrected_answer=prov.corrected_answer, feedback_text=prov.feedback_text,
            cited_documents=tuple(prov.cited_documents),
            timestamp=ts_from_proto(prov, "timestamp"), tenant=prov.tenant, owner=prov.owner),
        evidence=tuple(Evidence(e.source_id, e.kind or "feedback",
                                ts_from_proto(e, "observed_at")) for e in msg.evidence),
        optimization=({"variant": msg.optimization.variant,
                       "iterations": msg.optimization.iterations,
                       "passed": msg.optimization.passed, "seed": msg.optimization.seed}
                      if msg.HasField("optimization") else None),
        created_at=ts_from_proto(msg, "created_at"), change_reason=msg.change_reason,
        merged_into=msg.merged_into,
    )


def nugget_to_bytes(n: Nugget) -> bytes:
    """Compact binary form used by the stores."""
    return nugget_to_proto(n).SerializeToString(deterministic=True)


def nugget_from_bytes(raw: bytes) -> Nugget:
    """Inverse of :func:`nugget_to_bytes`."""
    msg = pb.Nugget()
    msg.ParseFromString(raw)
    return nugget_from_proto(msg)


def nugget_to_json(n: Nugget) -> str:
    """The proto3 canonical JSON of a nugget (for CLI output and files)."""
    from google.protobuf import json_format

    return json.dumps(json_format.MessageToDict(nugget_to_proto(n)), ensure_ascii=False)


def passage_to_dict(p: Passage) -> dict[str, object]:
    """JSON-ready form of a corpus passage (times as epoch seconds)."""
    return {"id": p.id, "tenant": p.tenant, "doc_id": p.doc_id, "title": p.title,
            "text": p.text, "valid_from": p.valid_from.timestamp(),
            "valid_to": p.valid_to.timestamp() if p.valid_to else None, "url": p.url}


def passage_from_dict(d: dict[str, object]) -> Passage:
    """Inverse of :func:`passage_to_dict`."""
    valid_to = d.get("valid_to")
    return Passage(id=str(d["id"]), tenant=str(d["tenant"]), doc_id=str(d["doc_id"]),
                   title=str(d["title"]), text=str(d["text"]),
                   valid_from=datetime.fromtimestamp(float(d["valid_from"]), UTC),  # type: ignore[arg-type]
                   valid_to=(datetime.fromtimestamp(float(valid_to), UTC)  # type: ignore[arg-type]
                             if valid_to is not None else None), url=str(d.get("url", "")))


def passage_to_bytes(p: Passage) -> bytes:
    """Compact stored form of a passage."""
    return json.dumps(passage_to_dict(p), ensure_ascii=False).encode()


def passage_from_bytes(raw: bytes) -> Passage:
    """Inverse of :func:`passage_to_bytes`."""
    return passage_from_dict(json.loads(raw))
