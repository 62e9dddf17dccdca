"""Request size limits: every string and repeated field of every QueryService request."""

from __future__ import annotations

import pytest
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from nuggetflow.errors import ValidationError
from nuggetflow.settings import Settings
from nuggetflow.v1 import nugget_pb2 as pb
from nuggetflow.v1 import query_service_pb2 as qpb
from query.limits import RequestLimits

SERVICE = qpb.DESCRIPTOR.services_by_name["QueryService"]
REQUESTS: dict[str, type[Message]] = {m.input_type.name: getattr(qpb, m.input_type.name)
                                       for m in SERVICE.methods}
STRING_FIELDS = [(name, f.name) for name, cls in REQUESTS.items()
                 for f in cls.DESCRIPTOR.fields if f.type == FieldDescriptor.TYPE_STRING]


def test_every_request_has_string_fields_to_check() -> None:
    assert set(REQUESTS) == {"RetrieveRequest", "GetNuggetRequest", "ListVersionsRequest",
                             "ListCandidatesRequest", "ReviewRequest", "ReportCitationsRequest",
                             "OpenProbeSessionRequest", "GetProbeSessionRequest",
                             "CloseProbeSessionRequest", "EditNuggetRequest",
                             "GetNeighbourhoodRequest", "GetUsageRequest", "WhoAmIRequest",
                             "ListReviewFlagsRequest", "DismissReviewFlagRequest"}
    assert len(STRING_FIELDS) >= 21
    assert not qpb.WhoAmIRequest.DESCRIPTOR.fields, "WhoAmI carries nothing (token only)"


@pytest.mark.parametrize("field", ["title", "body", "anchors"])
def test_probe_candidate_texts_are_capped_like_a_query(field: str) -> None:
    from nuggetflow.v1 import query_service_pb2 as qpb

    limits = RequestLimits.from_settings(Settings.from_env({
        "NUGGETFLOW_GRPC_MAX_ID_CHARS": "10", "NUGGETFLOW_GRPC_MAX_QUERY_CHARS": "30"}))
    assert limits.chars_for("ProbeCandidate", field) == 30
    assert limits.chars_for("ProbeCandidate", "id") == 10

    def request(value: str) -> qpb.OpenProbeSessionRequest:
        cand = qpb.ProbeCandidate(id="c")
        if field == "anchors":
            cand.anchors.append(value)
        else:
            setattr(cand, field, value)
        return qpb.OpenProbeSessionRequest(tenant="acme", candidates=[cand])

    limits.check(request("x" * 30))
    with pytest.raises(ValidationError) as err:
        limits.check(request("x" * 31))
    assert err.value.field == f"candidates.{field}"


@pytest.mark.parametrize(("message", "field"), STRING_FIELDS,
                         ids=[f"{m}.{f}" for m, f in STRING_FIELDS])
def test_every_string_field_is_capped_without_echo(message: str, field: str) -> None:
    limits = RequestLimits.from_settings(Settings.from_env({
        "NUGGETFLOW_GRPC_MAX_ID_CHARS": "10", "NUGGETFLOW_GRPC_MAX_QUERY_CHARS": "30",
        "NUGGETFLOW_GRPC_MAX_TEXT_CHARS": "20"}))
    cls = REQUESTS[message]
    descriptor = cls.DESCRIPTOR.fields_by_name[field]
    limit = limits.chars_for(message, field)
    assert limit == {"RetrieveRequest.query": 30, "ReviewRequest.reason": 20,
                     "ListVersionsRequest.page_token": 20,
                     "ListCandidatesRequest.page_token": 20,
                     "ListCandidatesRequest.query": 20, "EditNuggetRequest.title": 20,
                     "EditNuggetRequest.body": 30, "EditNuggetRequest.reason": 20,
                     }.get(f"{message}.{field}", 10)

    def with_value(value: str) -> Message:
        request: Message = cls()
        if descriptor.is_repeated:
            getattr(request, field).append(value)
        else:
            setattr(request, field, value)
        return request

    limits.check(with_value("é" * limit))  # characters, not bytes
    with pytest.raises(ValidationError) as err:
        limits.check(with_value("Z" * (limit + 1)))
    assert err.value.field == field
    assert f"longer than {limit} characters" in str(err.value)
    assert "ZZ" not in str(err.value)


def test_an_edited_fact_is_checked_as_free_text() -> None:
    limits = RequestLimits(id_chars=10, text_chars=20)
    limits.check(qpb.EditNuggetRequest(fact=pb.FactTriple(object="o" * 20)))
    with pytest.raises(ValidationError) as err:
        limits.check(qpb.EditNuggetRequest(fact=pb.FactTriple(object="o" * 21)))
    assert err.value.field == "fact.object"
    with pytest.raises(ValidationError) as err:
        limits.check(qpb.EditNuggetRequest(fact=pb.FactTriple(scope="s" * 11)))
    assert err.value.field == "fact.scope"


def test_repeated_fields_are_capped_in_count() -> None:
    limits = RequestLimits(list_items=3)
    limits.check(qpb.ReportCitationsRequest(cited_ids=["a", "b", "c"]))
    for request, field in ((qpb.ReportCitationsRequest(cited_ids=["a"] * 4), "cited_ids"),
                           (qpb.RetrieveRequest(scopes=["s"] * 4), "scopes"),
                           (qpb.RetrieveRequest(kinds=[pb.SEMANTIC_FACT] * 4), "kinds")):
        with pytest.raises(ValidationError) as err:
            limits.check(request)
        assert err.value.field == field and "more than 3 values" in str(err.value)


@pytest.mark.parametrize("var", ["NUGGETFLOW_GRPC_MAX_ID_CHARS",
                                 "NUGGETFLOW_GRPC_MAX_QUERY_CHARS",
                                 "NUGGETFLOW_GRPC_MAX_TEXT_CHARS",
                                 "NUGGETFLOW_GRPC_MAX_LIST_ITEMS"])
def test_limits_are_settings(var: str) -> None:
    from nuggetflow.errors import ConfigError

    with pytest.raises(ConfigError) as err:
        Settings.from_env({var: "0"})
    assert err.value.field == var
    defaults = RequestLimits.from_settings(Settings.from_env({}))
    assert defaults == RequestLimits(200, 2000, 1000, 1000)
