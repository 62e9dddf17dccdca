"""Conversion between the domain model (query.model) and the wire types (nuggetflow.v1)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from google.protobuf.timestamp_pb2 import Timestamp

from nuggetflow.errors import ValidationError
from nuggetflow.v1 import nugget_pb2 as pb
from nuggetflow.v1 import query_service_pb2 as qpb
from query.model import (
    Evidence,
    FactTriple,
    ItemType,
    Kind,
    Nugget,
    Passage,
    Provenance,
    Publication,
    Rank,
    State,
    Validity,
    View,
)
from query.retrieval import MAX_QUERY_CHARS, Hit, RetrieveRequest, RetrieveResult
from query.usage import FlagKind, ReviewFlag

if TYPE_CHECKING:
    from query.governance import Relation
    from query.index import CandidatePage, Listing
    from query.probes import CandidateSpec, ProbeRecord, ProbeSession

DEFAULT_K = 10
_VIEWS = {qpb.VIEW_UNSPECIFIED: View.ACTIVE, qpb.VIEW_ACTIVE: View.ACTIVE,
          qpb.VIEW_ACTIVE_PLUS_CONTESTED: View.ACTIVE_PLUS_CONTESTED}
_FUSIONS: dict[int, str | None] = {qpb.FUSION_UNSPECIFIED: None, qpb.FUSION_MINMAX: "minmax",
                                   qpb.FUSION_RRF: "rrf"}
_GATES: dict[int, bool | None] = {qpb.GATE_UNSPECIFIED: None, qpb.GATE_ON: True,
                                  qpb.GATE_OFF: False}
#: The proto's review action enum, by the index's action name.
REVIEW_ACTION_NAMES: dict[int, str] = {
    qpb.ReviewRequest.APPROVE: "approve", qpb.ReviewRequest.REJECT: "reject",
    qpb.ReviewRequest.UNPUBLISH: "unpublish", qpb.ReviewRequest.REVERT: "revert"}


def ts_to_proto(value: datetime | None) -> Timestamp | None:
    """A Timestamp for an aware datetime (None stays None)."""
    if value is None:
        return None
    ts = Timestamp()
    ts.FromDatetime(value.astimezone(UTC))
    return ts


def ts_from_proto(msg: object, field_name: str) -> datetime | None:
    """The datetime of a Timestamp field, or None when the field is unset.

    ValidationError naming the field when the value is outside the datetime range.
    """
    if not msg.HasField(field_name):  # type: ignore[attr-defined]
        return None
    ts: Timestamp = getattr(msg, field_name)
    try:
        return ts.ToDatetime(tzinfo=UTC)
    except (ValueError, OverflowError) as exc:
        raise ValidationError(f"timestamp out of range ({exc})", field=field_name) from None


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
            owner=n.provenance.owner, rating=n.provenance.rating, user=n.provenance.user,
            agent=n.provenance.agent),
        evidence=[pb.Evidence(source_id=e.source_id, kind=e.kind,
                              observed_at=ts_to_proto(e.observed_at)) for e in n.evidence],
        created_at=ts_to_proto(n.created_at), change_reason=n.change_reason,
        merged_into=n.merged_into, request_id=n.request_id, reviewer=n.reviewer,
    )
    if n.optimization:
        msg.optimization.CopyFrom(trace_to_proto(n.optimization))
    return msg


def trace_to_proto(trace: dict[str, Any]) -> pb.OptimizationTrace:
    """The wire form of an optimization trace (:meth:`OptimizationResult.to_dict`): the
    outcome and, when kept, every round's probes, edits, guard rejections and cost. A trace
    of another shape keeps what it has (a probe given as a bare string is its query; a
    round that is not a mapping is left out)."""
    msg = pb.OptimizationTrace(
        variant=str(trace.get("variant", "")), iterations=int(trace.get("iterations", 0)),
        passed=bool(trace.get("passed", False)), seed=int(trace.get("seed", 0)),
        probe_queries=[str(q) for q in trace.get("probes", ())])
    for r in trace.get("history", ()):
        if not isinstance(r, dict):
            continue
        it = msg.history.add(
            iteration=int(r.get("iteration", 0)), passed=bool(r.get("passed", False)),
            edits=[str(e) for e in r.get("edits", ())],
            llm_calls=int(r.get("llm_calls", 0)), tokens=int(r.get("tokens", 0)),
            seconds=float(r.get("seconds", 0.0)), cost_usd=float(r.get("cost_usd", 0.0)),
            rejected_edits=[str(e) for e in r.get("rejected", ())])
        for probe in r.get("probes", ()):
            p = probe if isinstance(probe, dict) else {"query": probe}
            it.probes.add(
                query=str(p.get("query", "")), retrieved=bool(p.get("retrieved")),
                cited=bool(p.get("cited")), rank=int(p.get("rank", 0)),
                competitors=[str(c) for c in p.get("competitors", ())],
                answer=str(p.get("answer", "")), held_out=bool(p.get("held_out")),
                reached_generator=bool(p.get("reached_generator")),
                rerank_score=float(p.get("rerank_score", 0.0)))
    return msg


def trace_from_proto(msg: pb.OptimizationTrace) -> dict[str, Any]:
    """Inverse of :func:`trace_to_proto` (the dict shape INO writes)."""
    out: dict[str, Any] = {"variant": msg.variant, "iterations": msg.iterations,
                           "passed": msg.passed, "seed": msg.seed}
    if msg.probe_queries:
        out["probes"] = list(msg.probe_queries)
    if msg.history:
        out["history"] = [{
            "iteration": r.iteration, "passed": r.passed, "edits": list(r.edits),
            "llm_calls": r.llm_calls, "tokens": r.tokens, "seconds": r.seconds,
            "cost_usd": r.cost_usd, "rejected": list(r.rejected_edits),
            "probes": [{"query": p.query, "retrieved": p.retrieved,
                        "reached_generator": p.reached_generator, "cited": p.cited,
                        "rank": p.rank, "rerank_score": p.rerank_score,
                        "competitors": list(p.competitors), "answer": p.answer,
                        "held_out": p.held_out} for p in r.probes]} for r in msg.history]
        out["rejected_revisions"] = [list(r.rejected_edits) for r in msg.history
                                     if r.rejected_edits]
    return out


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
            timestamp=ts_from_proto(prov, "timestamp"), tenant=prov.tenant, owner=prov.owner,
            rating=prov.rating, user=prov.user, agent=prov.agent),
        evidence=tuple(Evidence(e.source_id, e.kind or "feedback",
                                ts_from_proto(e, "observed_at")) for e in msg.evidence),
        optimization=(trace_from_proto(msg.optimization)
                      if msg.HasField("optimization") else None),
        created_at=ts_from_proto(msg, "created_at"), change_reason=msg.change_reason,
        merged_into=msg.merged_into, request_id=msg.request_id, reviewer=msg.reviewer,
    )


def nugget_to_bytes(n: Nugget) -> bytes:
    """Compact binary form used by the stores."""
    return nugget_to_proto(n).SerializeToString(deterministic=True)


def nugget_from_bytes(raw: bytes) -> Nugget:
    """Inverse of :func:`nugget_to_bytes`."""
    msg = pb.Nugget()
    msg.ParseFromString(raw)
    return nugget_from_proto(msg)


def nugget_to_dict(n: Nugget) -> dict[str, Any]:
    """The proto3 canonical JSON form of a nugget, as a dict."""
    from google.protobuf import json_format

    out: dict[str, Any] = json_format.MessageToDict(nugget_to_proto(n))
    return out


def nugget_to_json(n: Nugget) -> str:
    """The proto3 canonical JSON of a nugget (for CLI output and files)."""
    return json.dumps(nugget_to_dict(n), ensure_ascii=False)


def passage_to_dict(p: Passage) -> dict[str, object]:
    """JSON-ready form of a corpus passage (times as epoch seconds)."""
    return {"id": p.id, "tenant": p.tenant, "doc_id": p.doc_id, "title": p.title,
            "text": p.text, "valid_from": p.valid_from.timestamp(),
            "valid_to": p.valid_to.timestamp() if p.valid_to else None, "url": p.url,
            "version": p.version, "digest": p.digest}


def passage_from_dict(d: dict[str, object]) -> Passage:
    """Inverse of :func:`passage_to_dict`."""
    valid_to = d.get("valid_to")
    return Passage(id=str(d["id"]), tenant=str(d["tenant"]), doc_id=str(d["doc_id"]),
                   title=str(d["title"]), text=str(d["text"]),
                   valid_from=datetime.fromtimestamp(float(d["valid_from"]), UTC),  # type: ignore[arg-type]
                   valid_to=(datetime.fromtimestamp(float(valid_to), UTC)  # type: ignore[arg-type]
                             if valid_to is not None else None), url=str(d.get("url", "")),
                   version=int(d.get("version", 1)),  # type: ignore[call-overload]
                   digest=str(d.get("digest", "")))


def passage_to_bytes(p: Passage) -> bytes:
    """Compact stored form of a passage."""
    return json.dumps(passage_to_dict(p), ensure_ascii=False).encode()


def passage_from_bytes(raw: bytes) -> Passage:
    """Inverse of :func:`passage_to_bytes`."""
    return passage_from_dict(json.loads(raw))


# --- query service messages -----------------------------------------------------------


def retrieve_request_from_proto(msg: qpb.RetrieveRequest,
                                max_query_chars: int = MAX_QUERY_CHARS) -> RetrieveRequest:
    """The domain request of a wire request; ValidationError names the bad field.

    Wire defaults: ``k`` 0 means 10, an unset ``as_of`` means now, VIEW_UNSPECIFIED means
    ACTIVE and FUSION_UNSPECIFIED / GATE_UNSPECIFIED the server's default. The request is
    fully validated.
    """
    view = _VIEWS.get(msg.view)
    if view is None:
        raise ValidationError(f"unknown view {msg.view}", field="view")
    fusion = _FUSIONS.get(msg.fusion, "invalid")
    if fusion == "invalid":
        raise ValidationError(f"unknown fusion {msg.fusion}", field="fusion")
    if msg.gate not in _GATES:
        raise ValidationError(f"unknown gate {msg.gate}", field="gate")
    kinds: list[Kind] = []
    for value in msg.kinds:
        try:
            kinds.append(Kind(value))
        except ValueError:
            raise ValidationError(f"unknown nugget kind {value}", field="kinds") from None
    if any(not s.strip() for s in msg.scopes):
        raise ValidationError("a scope is empty", field="scopes")
    req = RetrieveRequest(
        tenant=msg.tenant, query=msg.query, as_of=ts_from_proto(msg, "as_of"), view=view,
        k=msg.k or DEFAULT_K, scopes=tuple(msg.scopes), kinds=tuple(kinds),
        include_documents=msg.include_documents, fusion=fusion, gate=_GATES[msg.gate])
    req.validate(max_query_chars)
    return req


def validity_to_proto(start: datetime, end: datetime | None,
                      inferred: bool = False) -> pb.Validity:
    """A wire validity interval ([start, end), end unset when open)."""
    return pb.Validity(start=ts_to_proto(start), end=ts_to_proto(end), inferred=inferred)


def hit_to_proto(h: Hit) -> qpb.Hit:
    """The wire form of one ranked hit (for nugget hits: the record, its lineage id and
    version number; ``id`` is the version's id)."""
    msg = qpb.Hit(
        type=qpb.Hit.NUGGET if h.type is ItemType.NUGGET else qpb.Hit.DOCUMENT, id=h.id,
        title=h.title, text=h.text,
        scores=qpb.Scores(lexical=h.lexical, dense=h.dense, metadata=h.metadata, fused=h.fused,
                          relevance=h.relevance),
        contested=h.contested, inferred_validity=h.inferred_validity)
    if isinstance(h.record, Nugget):
        msg.nugget.CopyFrom(nugget_to_proto(h.record))
        msg.lineage_id = h.record.lineage_id or h.record.id
        msg.version = h.record.version
        v = h.record.validity
        msg.validity.CopyFrom(validity_to_proto(v.start, v.end, v.inferred))
    elif isinstance(h.record, Passage):
        msg.validity.CopyFrom(validity_to_proto(h.record.valid_from, h.record.valid_to))
        msg.doc_id = h.record.doc_id
        msg.url = h.record.url
    return msg


def retrieve_result_to_proto(res: RetrieveResult) -> qpb.RetrieveResponse:
    """The wire response of a retrieval (hits, suppressed count, context block)."""
    return qpb.RetrieveResponse(request_id=res.request_id,
                                hits=[hit_to_proto(h) for h in res.hits],
                                suppressed=res.suppressed, context_block=res.context_block,
                                gated=res.gated)


def publications_from_proto(values: Sequence[int]) -> tuple[Publication, ...]:
    """The review states of a ListCandidates request; ValidationError (field
    ``publications``) for PUBLICATION_UNSPECIFIED or an unknown value."""
    out: list[Publication] = []
    for value in values:
        try:
            out.append(Publication(value))
        except ValueError:
            names = ", ".join(p.name for p in Publication)
            raise ValidationError(f"unknown publication {value} (one of {names})",
                                  field="publications") from None
    return tuple(out)


def candidates_to_proto(page: CandidatePage) -> qpb.ListCandidatesResponse:
    """The wire response of one page of the review queue."""
    return qpb.ListCandidatesResponse(candidates=[nugget_to_proto(n) for n in page.candidates],
                                      next_page_token=page.next_page_token,
                                      total_size=page.total)


_VALIDITY_FILTERS = {qpb.VALIDITY_FILTER_UNSPECIFIED: "", qpb.VALIDITY_FILTER_CURRENT: "current",
                     qpb.VALIDITY_FILTER_EXPIRED: "expired", qpb.VALIDITY_FILTER_FUTURE: "future"}


def listing_from_proto(msg: qpb.ListCandidatesRequest) -> Listing:
    """The filters and order of a ListCandidates request; ValidationError names a bad
    ``states``, ``order`` or ``validity``."""
    from query.index import Listing

    states: list[State] = []
    for value in msg.states:
        try:
            states.append(State(value))
        except ValueError:
            raise ValidationError(f"unknown nugget state {value} (one of ACTIVE, DEPRECATED, "
                                  "CONTESTED)", field="states") from None
    if msg.order not in (qpb.LIST_ORDER_UNSPECIFIED, qpb.LIST_ORDER_ID,
                         qpb.LIST_ORDER_NEWEST_FIRST):
        raise ValidationError(f"unknown order {msg.order}", field="order")
    validity = _VALIDITY_FILTERS.get(msg.validity)
    if validity is None:
        raise ValidationError(f"unknown validity filter {msg.validity}", field="validity")
    return Listing(states=tuple(sorted(set(states))), owner=msg.owner.strip(),
                   query=msg.query.strip(), newest_first=msg.order == qpb.LIST_ORDER_NEWEST_FIRST,
                   validity=validity, as_of=ts_from_proto(msg, "as_of"))


def edit_changes_from_proto(msg: qpb.EditNuggetRequest) -> dict[str, Any]:
    """The content fields an EditNugget request sets (title, body, anchors; fact and
    validity when given); ValidationError names a malformed one."""
    if not msg.title.strip():
        raise ValidationError("title is empty", field="title")
    if not msg.body.strip():
        raise ValidationError("body is empty", field="body")
    if any(not a.strip() for a in msg.anchors):
        raise ValidationError("an anchor is empty", field="anchors")
    changes: dict[str, Any] = {"title": msg.title.strip(), "body": msg.body.strip(),
                               "anchors": tuple(a.strip() for a in msg.anchors)}
    if msg.HasField("fact"):
        f = msg.fact
        for name in ("subject", "predicate", "object"):
            if not getattr(f, name).strip():
                raise ValidationError(f"fact {name} is empty", field=f"fact.{name}")
        changes["fact"] = FactTriple(f.subject.strip(), f.predicate.strip(), f.object.strip(),
                                     f.scope.strip() or "global")
    if msg.HasField("validity"):
        start = ts_from_proto(msg.validity, "start")
        if start is None:
            raise ValidationError("validity start is required", field="validity.start")
        changes["validity"] = Validity(start, ts_from_proto(msg.validity, "end"),
                                       msg.validity.inferred)
    return changes


_RELATIONS = {"duplicates": qpb.Neighbour.DUPLICATES, "supersedes": qpb.Neighbour.SUPERSEDES,
              "superseded_by": qpb.Neighbour.SUPERSEDED_BY, "contests": qpb.Neighbour.CONTESTS,
              "same_key": qpb.Neighbour.SAME_KEY}


def relation_to_proto(r: Relation) -> qpb.Neighbour:
    """The wire form of a governance relation."""
    return qpb.Neighbour(relation=_RELATIONS[r.kind], nugget=nugget_to_proto(r.other),
                         note=r.note)


def review_action_from_proto(action: int) -> str:
    """The review action name of a wire enum value; ValidationError(field="action")."""
    name = REVIEW_ACTION_NAMES.get(action)
    if name is None:
        raise ValidationError(f"unknown review action {action} (one of APPROVE, REJECT, "
                              "UNPUBLISH, REVERT)", field="action")
    return name


def review_flag_to_proto(f: ReviewFlag) -> qpb.ReviewFlag:
    """A stored review flag on the wire (its kind as the FlagKind value)."""
    return qpb.ReviewFlag(lineage_id=f.lineage_id, version_id=f.version_id,
                          kind=f.kind.value, reason=f.reason,
                          raised_at=ts_to_proto(f.raised_at), considered=f.considered,
                          retrieved=f.retrieved, cited=f.cited, dismissed=f.dismissed,
                          title=f.title)


def flag_kind_from_proto(kind: str) -> FlagKind | None:
    """The flag kind a request names ("": None, every kind); ValidationError(field="kind")
    for a name that is not one."""
    if not kind:
        return None
    try:
        return FlagKind(kind)
    except ValueError:
        names = ", ".join(k.value for k in FlagKind)
        raise ValidationError(f"unknown flag kind (one of {names}, or empty for every "
                              "kind)", field="kind") from None


def probe_candidates_from_proto(values: Sequence[qpb.ProbeCandidate]) -> list[CandidateSpec]:
    """The candidates of an OpenProbeSession request (checked by the session store)."""
    from query.probes import CandidateSpec

    return [CandidateSpec(c.id, c.title, c.body, tuple(c.anchors)) for c in values]


def probe_session_to_proto(session: ProbeSession) -> qpb.ProbeSession:
    """The wire form of an open probe session."""
    return qpb.ProbeSession(session_id=session.id, as_of=ts_to_proto(session.as_of),
                            ttl_seconds=round(session.ttl),
                            candidate_ids=session.candidate_ids)


def probe_record_to_proto(rec: ProbeRecord) -> qpb.ProbeRetrieval:
    """The wire form of one probe retrieval and its reported citations."""
    return qpb.ProbeRetrieval(
        number=rec.number, request_id=rec.request_id, query=rec.query, gated=rec.gated,
        items=[qpb.ProbeItem(id=i.id, fused=i.fused, reranked=i.reranked,
                             relevance=i.relevance, hit=i.hit, title=i.title, text=i.text)
               for i in rec.items],
        cited_ids=rec.cited, citations_reported=rec.reported)
