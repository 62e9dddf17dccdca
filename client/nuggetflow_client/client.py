"""A typed client of ``nuggetflow.v1.QueryService``: :class:`QueryClient` (blocking) and
:class:`AsyncQueryClient` (``grpc.aio``), the same methods on both.

What comes back: ``retrieve`` and ``report_citations``, the calls an assistant makes on
every answer, return small frozen dataclasses (:class:`Retrieval` of :class:`Hit`,
:class:`Citations`) with plain Python types (``datetime`` in UTC, ``str`` hit types); each
keeps the full reply message in ``proto``. The governance calls (``get_nugget``,
``review``, ``list_versions``, ``list_candidates``) return the ``nuggetflow.v1.Nugget``
message itself (typed by the generated ``.pyi``): the whole governed record, nothing
left out. A failed call raises a :class:`~nuggetflow_client.errors.ClientError` subclass.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, Self, TypeVar, cast

import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from nuggetflow_client.errors import InvalidArgument, from_rpc_error
from nuggetflow_client.v1 import nugget_pb2 as pb
from nuggetflow_client.v1 import query_service_pb2 as qpb
from nuggetflow_client.v1 import query_service_pb2_grpc as qpb_grpc

if TYPE_CHECKING:
    from google.protobuf.internal.enum_type_wrapper import _EnumTypeWrapper

Nugget = pb.Nugget
_V = TypeVar("_V", bound=int)
DEFAULT_TIMEOUT = 10.0  # seconds per call; None: no deadline
ReviewAction = Literal["approve", "reject", "unpublish", "revert"]


# --- results --------------------------------------------------------------------------


@dataclass(frozen=True)
class Scores:
    """Component scores of a hit; ``relevance`` is the calibrated probability that it
    answers the query (0 when the gate was off)."""

    lexical: float
    dense: float
    metadata: float
    fused: float
    relevance: float


@dataclass(frozen=True)
class Hit:
    """One retrieved item: a nugget (``type == "nugget"``) or a corpus passage."""

    type: Literal["nugget", "document"]
    id: str  # nugget: the id of the version served (cite this); document: the passage id
    title: str
    text: str
    scores: Scores
    contested: bool  # disputed: do not state as fact
    lineage_id: str  # nugget: pass to get_nugget/review to act on it as it is now
    version: int
    valid_from: datetime | None  # validity of the fact (or of the passage's document)
    valid_until: datetime | None  # None: open
    inferred_validity: bool
    doc_id: str  # document hits: the corpus document
    url: str
    nugget: Nugget | None = field(repr=False)  # the governed record (nugget hits)
    proto: qpb.Hit = field(repr=False, compare=False)


@dataclass(frozen=True)
class Retrieval:
    """A Retrieve reply. Pass ``request_id`` and the ids an answer used to
    ``report_citations``; ``context_block`` is ready to put in a generator's prompt."""

    request_id: str
    hits: tuple[Hit, ...]
    context_block: str
    gated: bool  # the hits cleared the tenant's re-ranking threshold (else: fused order)
    suppressed: int  # matches removed by governance (pending, expired, contested, ...)
    proto: qpb.RetrieveResponse = field(repr=False, compare=False)


@dataclass(frozen=True)
class Citations:
    """A ReportCitations reply: ids newly counted, and how many the request retrieved."""

    accepted: int
    retrieved: int


@dataclass(frozen=True)
class NuggetPage:
    """One page of nuggets; ``next_page_token`` is "" on the last page."""

    nuggets: tuple[Nugget, ...]
    next_page_token: str


# --- requests and replies (shared by both clients) ------------------------------------


def _timestamp(t: datetime) -> Timestamp:
    out = Timestamp()
    out.FromDatetime(t if t.tzinfo else t.replace(tzinfo=UTC))
    return out


def _time(msg: Any, name: str) -> datetime | None:
    if not msg.HasField(name):
        return None
    value: datetime = getattr(msg, name).ToDatetime(tzinfo=UTC)
    return value


def _enum(value: str | int, enum: _EnumTypeWrapper[_V], what: str, prefix: str = "") -> _V:
    """An enum value from its number (sent as it is) or its name (any case, ``prefix``
    optional); InvalidArgument naming ``what`` for an unknown name."""
    if isinstance(value, int):
        return cast(_V, value)
    name = value.strip().upper().replace("-", "_").replace(" ", "_")
    for candidate in (name, prefix + name):
        try:
            return enum.Value(candidate)
        except ValueError:
            continue
    names = ", ".join(v.name.lower() for v in enum.DESCRIPTOR.values
                      if not v.name.endswith("UNSPECIFIED"))
    raise InvalidArgument(f"{what}: unknown value {value!r} (one of {names})",
                          code="INVALID_ARGUMENT", field=what)


def _retrieve_request(tenant: str, query: str, *, k: int, as_of: datetime | None,
                      contested: bool, scopes: Sequence[str], kinds: Sequence[str | int],
                      include_documents: bool, fusion: str | None,
                      gate: bool | None) -> qpb.RetrieveRequest:
    req = qpb.RetrieveRequest(
        tenant=tenant, query=query, k=k, scopes=list(scopes),
        kinds=[_enum(x, pb.NuggetKind, "kinds") for x in kinds],
        include_documents=include_documents,
        view=qpb.VIEW_ACTIVE_PLUS_CONTESTED if contested else qpb.VIEW_ACTIVE)
    if as_of is not None:
        req.as_of.CopyFrom(_timestamp(as_of))
    if fusion is not None:
        req.fusion = _enum(fusion, qpb.Fusion, "fusion", "FUSION_")
    if gate is not None:
        req.gate = qpb.GATE_ON if gate else qpb.GATE_OFF
    return req


def _hit(h: qpb.Hit) -> Hit:
    s = h.scores
    return Hit(type="document" if h.type == qpb.Hit.DOCUMENT else "nugget", id=h.id,
               title=h.title, text=h.text,
               scores=Scores(s.lexical, s.dense, s.metadata, s.fused, s.relevance),
               contested=h.contested, lineage_id=h.lineage_id, version=h.version,
               valid_from=_time(h.validity, "start"), valid_until=_time(h.validity, "end"),
               inferred_validity=h.inferred_validity, doc_id=h.doc_id, url=h.url,
               nugget=h.nugget if h.HasField("nugget") else None, proto=h)


def _retrieval(r: qpb.RetrieveResponse) -> Retrieval:
    return Retrieval(request_id=r.request_id, hits=tuple(_hit(h) for h in r.hits),
                     context_block=r.context_block, gated=r.gated, suppressed=r.suppressed,
                     proto=r)


def _citations_request(tenant: str, request_id: str,
                       cited_ids: Iterable[str]) -> qpb.ReportCitationsRequest:
    if isinstance(cited_ids, str):  # a lone id would be sent as its characters
        raise InvalidArgument("cited_ids: a list of ids, not one string",
                              code="INVALID_ARGUMENT", field="cited_ids")
    return qpb.ReportCitationsRequest(tenant=tenant, request_id=request_id,
                                      cited_ids=list(cited_ids))


def _review_request(tenant: str, id: str, action: ReviewAction | int, reviewer: str,
                    reason: str, target_version_id: str,
                    request_id: str) -> qpb.ReviewRequest:
    return qpb.ReviewRequest(
        tenant=tenant, id=id,
        action=_enum(action, qpb.ReviewRequest.Action, "action"),
        reviewer=reviewer, reason=reason, target_version_id=target_version_id,
        request_id=request_id)


def _candidates_request(tenant: str, publications: Sequence[str | int], page_size: int,
                        page_token: str) -> qpb.ListCandidatesRequest:
    return qpb.ListCandidatesRequest(
        tenant=tenant, page_size=page_size, page_token=page_token,
        publications=[_enum(p, pb.Publication, "publications") for p in publications])


def _channel_credentials(secure: bool, credentials: grpc.ChannelCredentials | None
                         ) -> grpc.ChannelCredentials | None:
    if credentials is not None:
        return credentials
    return grpc.ssl_channel_credentials() if secure else None


class _Base:
    """What both clients share: the token metadata and the default deadline."""

    def __init__(self, token: str | None, timeout: float | None) -> None:
        self.timeout = timeout
        self._metadata: tuple[tuple[str, str], ...] = (
            (("authorization", f"Bearer {token}"),) if token else ())

    def _kw(self, timeout: float | None) -> dict[str, Any]:
        return {"metadata": self._metadata,
                "timeout": self.timeout if timeout is None else timeout}


# --- the blocking client --------------------------------------------------------------


class QueryClient(_Base):
    """A blocking client of the query service.

    ``target`` is ``host:port``; ``token`` the tenant's bearer token (None: send none, for
    a development server without tokens). ``timeout`` is each call's deadline in seconds
    (None: none); every method takes ``timeout=`` to override it for one call (None
    there: the client's). TLS:
    ``secure=True`` (system roots) or ``credentials=grpc.ssl_channel_credentials(...)``;
    ``options`` are gRPC channel options. Use it as a context manager, or ``close()`` it.
    Thread-safe, like the channel under it.
    """

    def __init__(self, target: str, token: str | None = None, *,
                 timeout: float | None = DEFAULT_TIMEOUT, secure: bool = False,
                 credentials: grpc.ChannelCredentials | None = None,
                 options: Sequence[tuple[str, Any]] = ()) -> None:
        super().__init__(token, timeout)
        creds = _channel_credentials(secure, credentials)
        self._channel: grpc.Channel = (
            grpc.secure_channel(target, creds, options=list(options)) if creds is not None
            else grpc.insecure_channel(target, options=list(options)))
        self._stub = qpb_grpc.QueryServiceStub(self._channel)  # type: ignore[no-untyped-call]

    def _call(self, method: str, request: Any, timeout: float | None) -> Any:
        try:
            return getattr(self._stub, method)(request, **self._kw(timeout))
        except grpc.RpcError as exc:
            raise from_rpc_error(exc, method) from exc

    def retrieve(self, tenant: str, query: str, *, k: int = 10, as_of: datetime | None = None,
                 contested: bool = False, scopes: Sequence[str] = (),
                 kinds: Sequence[str | int] = (), include_documents: bool = False,
                 fusion: Literal["minmax", "rrf"] | None = None, gate: bool | None = None,
                 timeout: float | None = None) -> Retrieval:
        """Governed retrieval: the tenant's published nuggets valid at ``as_of`` (default:
        now), contested ones too with ``contested=True``; corpus passages compete with
        ``include_documents=True``. ``gate``: None for the server's default, False for the
        fused top-k without the re-ranking gate."""
        return _retrieval(self._call("Retrieve", _retrieve_request(
            tenant, query, k=k, as_of=as_of, contested=contested, scopes=scopes, kinds=kinds,
            include_documents=include_documents, fusion=fusion, gate=gate), timeout))

    def report_citations(self, tenant: str, request_id: str, cited_ids: Iterable[str], *,
                         timeout: float | None = None) -> Citations:
        """Which hits of the Retrieve call ``request_id`` an answer cited (hit ids)."""
        r = self._call("ReportCitations", _citations_request(tenant, request_id, cited_ids),
                       timeout)
        return Citations(accepted=r.accepted, retrieved=r.retrieved)

    def get_nugget(self, tenant: str, id: str, *, version: int = 0,
                   timeout: float | None = None) -> Nugget:
        """A lineage id: the current version; another version id: that version;
        ``version=N``: version N of the lineage."""
        nugget: Nugget = self._call(
            "GetNugget", qpb.GetNuggetRequest(tenant=tenant, id=id, version=version), timeout)
        return nugget

    def list_versions(self, tenant: str, id: str, *, page_size: int = 0,
                      page_token: str = "", timeout: float | None = None) -> NuggetPage:
        """The versions of a lineage, oldest first, a page at a time."""
        r = self._call("ListVersions", qpb.ListVersionsRequest(
            tenant=tenant, id=id, page_size=page_size, page_token=page_token), timeout)
        return NuggetPage(tuple(r.versions), r.next_page_token)

    def list_candidates(self, tenant: str, *, publications: Sequence[str | int] = (),
                        page_size: int = 0, page_token: str = "",
                        timeout: float | None = None) -> NuggetPage:
        """Heads of the tenant's lineages in these review states (names such as
        ``"pending_review"``, ``"published"``; default: what waits for review)."""
        r = self._call("ListCandidates", _candidates_request(
            tenant, publications, page_size, page_token), timeout)
        return NuggetPage(tuple(r.candidates), r.next_page_token)

    def review(self, tenant: str, id: str, action: ReviewAction | int, *, reviewer: str,
               reason: str = "", target_version_id: str = "", request_id: str = "",
               timeout: float | None = None) -> Nugget:
        """Approve, reject, unpublish or revert (to ``target_version_id``) the nugget's
        current version; returns the version produced. Give a ``request_id`` (e.g. a
        UUID) and retry with the same one when the outcome is unclear: it applies once."""
        nugget: Nugget = self._call("Review", _review_request(
            tenant, id, action, reviewer, reason, target_version_id, request_id), timeout)
        return nugget

    def close(self) -> None:
        """Close the channel (calls in flight are cancelled)."""
        self._channel.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


# --- the asyncio client ---------------------------------------------------------------


class AsyncQueryClient(_Base):
    """The same client on ``grpc.aio``: every method is a coroutine; ``async with`` or
    ``await close()``. Create it inside the event loop that uses it."""

    def __init__(self, target: str, token: str | None = None, *,
                 timeout: float | None = DEFAULT_TIMEOUT, secure: bool = False,
                 credentials: grpc.ChannelCredentials | None = None,
                 options: Sequence[tuple[str, Any]] = ()) -> None:
        super().__init__(token, timeout)
        creds = _channel_credentials(secure, credentials)
        self._channel: grpc.aio.Channel = (
            grpc.aio.secure_channel(target, creds, options=list(options))
            if creds is not None else grpc.aio.insecure_channel(target, options=list(options)))
        self._stub = qpb_grpc.QueryServiceStub(self._channel)  # type: ignore[no-untyped-call]

    async def _call(self, method: str, request: Any, timeout: float | None) -> Any:
        try:
            return await getattr(self._stub, method)(request, **self._kw(timeout))
        except grpc.RpcError as exc:
            raise from_rpc_error(exc, method) from exc

    async def retrieve(self, tenant: str, query: str, *, k: int = 10,
                       as_of: datetime | None = None, contested: bool = False,
                       scopes: Sequence[str] = (), kinds: Sequence[str | int] = (),
                       include_documents: bool = False,
                       fusion: Literal["minmax", "rrf"] | None = None,
                       gate: bool | None = None, timeout: float | None = None) -> Retrieval:
        """See :meth:`QueryClient.retrieve`."""
        return _retrieval(await self._call("Retrieve", _retrieve_request(
            tenant, query, k=k, as_of=as_of, contested=contested, scopes=scopes, kinds=kinds,
            include_documents=include_documents, fusion=fusion, gate=gate), timeout))

    async def report_citations(self, tenant: str, request_id: str, cited_ids: Iterable[str],
                               *, timeout: float | None = None) -> Citations:
        """See :meth:`QueryClient.report_citations`."""
        r = await self._call("ReportCitations",
                             _citations_request(tenant, request_id, cited_ids), timeout)
        return Citations(accepted=r.accepted, retrieved=r.retrieved)

    async def get_nugget(self, tenant: str, id: str, *, version: int = 0,
                         timeout: float | None = None) -> Nugget:
        """See :meth:`QueryClient.get_nugget`."""
        nugget: Nugget = await self._call(
            "GetNugget", qpb.GetNuggetRequest(tenant=tenant, id=id, version=version), timeout)
        return nugget

    async def list_versions(self, tenant: str, id: str, *, page_size: int = 0,
                            page_token: str = "", timeout: float | None = None) -> NuggetPage:
        """See :meth:`QueryClient.list_versions`."""
        r = await self._call("ListVersions", qpb.ListVersionsRequest(
            tenant=tenant, id=id, page_size=page_size, page_token=page_token), timeout)
        return NuggetPage(tuple(r.versions), r.next_page_token)

    async def list_candidates(self, tenant: str, *, publications: Sequence[str | int] = (),
                              page_size: int = 0, page_token: str = "",
                              timeout: float | None = None) -> NuggetPage:
        """See :meth:`QueryClient.list_candidates`."""
        r = await self._call("ListCandidates", _candidates_request(
            tenant, publications, page_size, page_token), timeout)
        return NuggetPage(tuple(r.candidates), r.next_page_token)

    async def review(self, tenant: str, id: str, action: ReviewAction | int, *,
                     reviewer: str, reason: str = "", target_version_id: str = "",
                     request_id: str = "", timeout: float | None = None) -> Nugget:
        """See :meth:`QueryClient.review`."""
        nugget: Nugget = await self._call("Review", _review_request(
            tenant, id, action, reviewer, reason, target_version_id, request_id), timeout)
        return nugget

    async def close(self) -> None:
        """Close the channel."""
        await self._channel.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.close()
