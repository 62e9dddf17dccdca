"""A typed client of ``nuggetflow.v1.QueryService``: :class:`QueryClient` (blocking) and
:class:`AsyncQueryClient` (``grpc.aio``), the same methods on both.

What comes back: ``retrieve`` and ``report_citations``, the calls an assistant makes on
every answer, return small frozen dataclasses (:class:`Retrieval` of :class:`Hit`,
:class:`Citations`) with plain Python types (``datetime`` in UTC, ``str`` hit types); each
keeps the full reply message in ``proto``. The governance calls (``get_nugget``,
``review``, ``list_versions``, ``list_candidates``) return the ``nuggetflow.v1.Nugget``
message itself (typed by the generated ``.pyi``): the whole governed record, nothing
left out. ``list_review_flags`` and ``dismiss_review_flag`` return :class:`ReviewFlag`
tuples. A failed call raises a :class:`~nuggetflow_client.errors.ClientError` subclass.
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
    """One page of nuggets; ``next_page_token`` is "" on the last page; ``total_size``: how
    many match every page of a filtered or ordered candidates listing (else 0)."""

    nuggets: tuple[Nugget, ...]
    next_page_token: str
    total_size: int = 0


@dataclass(frozen=True)
class Edit:
    """An EditNugget reply: the version written (``saved``) or the one that would be, the
    factual guard's violations (none: it passed) and the fields that changed."""

    nugget: Nugget
    saved: bool
    violations: tuple[str, ...]
    changed_fields: tuple[str, ...]

    @property
    def guard_ok(self) -> bool:
        """The factual guard found nothing added."""
        return not self.violations


@dataclass(frozen=True)
class Neighbour:
    """Another lineage with the same governance key: ``relation`` is ``"duplicates"``,
    ``"supersedes"``, ``"superseded_by"``, ``"contests"`` or ``"same_key"``."""

    relation: str
    nugget: Nugget
    note: str


@dataclass(frozen=True)
class Neighbourhood:
    """A GetNeighbourhood reply; ``on_approval``: what approving a not yet published nugget
    would do ("" otherwise)."""

    nugget: Nugget
    neighbours: tuple[Neighbour, ...]
    on_approval: str


@dataclass(frozen=True)
class Usage:
    """How many Retrieve replies returned a nugget version, and how often it was cited."""

    id: str
    retrieved: int
    cited: int


@dataclass(frozen=True)
class ReviewFlag:
    """A published nugget sent back to review, and why. ``kind``: ``"uncited"``,
    ``"seldom_cited"``, ``"expiring"`` (its use, judged by the usage review), ``"buried"``
    or ``"redundant"`` (a corpus change, judged by the re-probe); the counts are its use
    over the review's window when it was raised (0 for the re-probe's flags)."""

    lineage_id: str
    version_id: str  # the version judged
    kind: str
    reason: str
    raised_at: datetime | None  # first raised about this version (UTC)
    considered: int  # its topic was queried (among a Retrieve's top candidates)
    retrieved: int
    cited: int
    dismissed: bool  # a reviewer kept the nugget as it is
    title: str


@dataclass(frozen=True)
class Identity:
    """What the token grants (WhoAmI): its tenants, or every tenant (``unrestricted``) on
    a service without tokens."""

    tenants: tuple[str, ...]
    unrestricted: bool
    token_id: str

    def may_use(self, tenant: str) -> bool:
        """True when the token is valid for ``tenant``."""
        return self.unrestricted or tenant in self.tenants


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
                    reason: str, target_version_id: str, request_id: str,
                    expected_version_id: str = "") -> qpb.ReviewRequest:
    return qpb.ReviewRequest(
        tenant=tenant, id=id,
        action=_enum(action, qpb.ReviewRequest.Action, "action"),
        reviewer=reviewer, reason=reason, target_version_id=target_version_id,
        request_id=request_id, expected_version_id=expected_version_id)


_ORDERS = {"id": qpb.LIST_ORDER_ID, "newest": qpb.LIST_ORDER_NEWEST_FIRST}
_VALIDITY = {"": qpb.VALIDITY_FILTER_UNSPECIFIED, "current": qpb.VALIDITY_FILTER_CURRENT,
             "expired": qpb.VALIDITY_FILTER_EXPIRED, "future": qpb.VALIDITY_FILTER_FUTURE}


@dataclass(frozen=True)
class _Listing:
    states: Sequence[str | int] = ()
    owner: str = ""
    query: str = ""
    order: str = "id"
    validity: str = ""
    as_of: datetime | None = None


def _candidates_request(tenant: str, publications: Sequence[str | int], page_size: int,
                        page_token: str, listing: _Listing = _Listing()
                        ) -> qpb.ListCandidatesRequest:
    if listing.order not in _ORDERS:
        raise InvalidArgument(f"order: unknown value {listing.order!r} (one of id, newest)",
                              code="INVALID_ARGUMENT", field="order")
    if listing.validity not in _VALIDITY:
        raise InvalidArgument(f"validity: unknown value {listing.validity!r} (one of "
                              "current, expired, future, or '' for any)",
                              code="INVALID_ARGUMENT", field="validity")
    req = qpb.ListCandidatesRequest(
        tenant=tenant, page_size=page_size, page_token=page_token,
        publications=[_enum(p, pb.Publication, "publications") for p in publications],
        states=[_enum(s, pb.NuggetState, "states") for s in listing.states],
        owner=listing.owner, query=listing.query, order=_ORDERS[listing.order],
        validity=_VALIDITY[listing.validity])
    if listing.as_of is not None:
        req.as_of.CopyFrom(_timestamp(listing.as_of))
    return req


def _edit_request(tenant: str, id: str, *, expected_version_id: str, title: str, body: str,
                  anchors: Sequence[str], fact: pb.FactTriple | None,
                  valid_from: datetime | None, valid_until: datetime | None, reviewer: str,
                  reason: str, dry_run: bool, request_id: str) -> qpb.EditNuggetRequest:
    if isinstance(anchors, str):
        raise InvalidArgument("anchors: a list of strings, not one string",
                              code="INVALID_ARGUMENT", field="anchors")
    req = qpb.EditNuggetRequest(
        tenant=tenant, id=id, expected_version_id=expected_version_id, title=title,
        body=body, anchors=list(anchors), reviewer=reviewer, reason=reason, dry_run=dry_run,
        request_id=request_id)
    if fact is not None:
        req.fact.CopyFrom(fact)
    if valid_from is not None:
        req.validity.start.CopyFrom(_timestamp(valid_from))
        if valid_until is not None:
            req.validity.end.CopyFrom(_timestamp(valid_until))
    elif valid_until is not None:
        raise InvalidArgument("validity: valid_until needs valid_from",
                              code="INVALID_ARGUMENT", field="validity")
    return req


def _edit(r: qpb.EditNuggetResponse) -> Edit:
    return Edit(nugget=r.nugget, saved=r.saved, violations=tuple(r.guard.violations),
                changed_fields=tuple(r.changed_fields))


def _neighbourhood(r: qpb.GetNeighbourhoodResponse) -> Neighbourhood:
    names = {v.number: v.name.lower() for v in qpb.Neighbour.Relation.DESCRIPTOR.values}
    return Neighbourhood(nugget=r.nugget, neighbours=tuple(
        Neighbour(names.get(n.relation, "same_key"), n.nugget, n.note) for n in r.neighbours),
        on_approval=r.on_approval)


def _usage_request(tenant: str, ids: Iterable[str]) -> qpb.GetUsageRequest:
    if isinstance(ids, str):
        raise InvalidArgument("ids: a list of ids, not one string", code="INVALID_ARGUMENT",
                              field="ids")
    return qpb.GetUsageRequest(tenant=tenant, ids=list(ids))


def _review_flags(flags: Iterable[qpb.ReviewFlag]) -> tuple[ReviewFlag, ...]:
    return tuple(ReviewFlag(lineage_id=f.lineage_id, version_id=f.version_id, kind=f.kind,
                            reason=f.reason, raised_at=_time(f, "raised_at"),
                            considered=f.considered, retrieved=f.retrieved, cited=f.cited,
                            dismissed=f.dismissed, title=f.title) for f in flags)


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
                        states: Sequence[str | int] = (), owner: str = "", query: str = "",
                        order: Literal["id", "newest"] = "id",
                        validity: Literal["", "current", "expired", "future"] = "",
                        as_of: datetime | None = None,
                        timeout: float | None = None) -> NuggetPage:
        """Heads of the tenant's lineages in these review states (names such as
        ``"pending_review"``, ``"published"``; default: what waits for review), filtered
        by lifecycle ``states`` (``"active"``, ``"deprecated"``, ``"contested"``),
        designated ``owner``, the words of ``query`` and ``validity`` at ``as_of``
        (default now), in id order or newest feedback first (``order="newest"``)."""
        r = self._call("ListCandidates", _candidates_request(
            tenant, publications, page_size, page_token,
            _Listing(states, owner, query, order, validity, as_of)), timeout)
        return NuggetPage(tuple(r.candidates), r.next_page_token, r.total_size)

    def review(self, tenant: str, id: str, action: ReviewAction | int, *, reviewer: str,
               reason: str = "", target_version_id: str = "", request_id: str = "",
               expected_version_id: str = "", timeout: float | None = None) -> Nugget:
        """Approve, reject, unpublish or revert (to ``target_version_id``) the nugget's
        current version; returns the version produced. Give a ``request_id`` (e.g. a
        UUID) and retry with the same one when the outcome is unclear: it applies once.
        ``expected_version_id``: the version you saw; Aborted if it is no longer current."""
        nugget: Nugget = self._call("Review", _review_request(
            tenant, id, action, reviewer, reason, target_version_id, request_id,
            expected_version_id), timeout)
        return nugget

    def edit_nugget(self, tenant: str, id: str, *, expected_version_id: str, title: str,
                    body: str, anchors: Sequence[str] = (), fact: pb.FactTriple | None = None,
                    valid_from: datetime | None = None, valid_until: datetime | None = None,
                    reviewer: str, reason: str = "", dry_run: bool = False,
                    request_id: str = "", timeout: float | None = None) -> Edit:
        """A new version with this content (title, body, anchors; ``fact`` and validity
        unchanged when None), made from ``expected_version_id`` (Aborted if it is no longer
        current). The factual guard checks it first: not saved when it objects
        (``violations``), when nothing changed, or with ``dry_run``."""
        return _edit(self._call("EditNugget", _edit_request(
            tenant, id, expected_version_id=expected_version_id, title=title, body=body,
            anchors=anchors, fact=fact, valid_from=valid_from, valid_until=valid_until,
            reviewer=reviewer, reason=reason, dry_run=dry_run, request_id=request_id),
            timeout))

    def get_neighbourhood(self, tenant: str, id: str, *,
                          timeout: float | None = None) -> Neighbourhood:
        """The other lineages with the nugget's governance key, and how each relates."""
        return _neighbourhood(self._call("GetNeighbourhood", qpb.GetNeighbourhoodRequest(
            tenant=tenant, id=id), timeout))

    def get_usage(self, tenant: str, ids: Iterable[str], *,
                  timeout: float | None = None) -> tuple[Usage, ...]:
        """How often each nugget version id was retrieved and cited."""
        r = self._call("GetUsage", _usage_request(tenant, ids), timeout)
        return tuple(Usage(u.id, u.retrieved, u.cited) for u in r.usage)

    def list_review_flags(self, tenant: str, *, include_dismissed: bool = False,
                          timeout: float | None = None) -> tuple[ReviewFlag, ...]:
        """The tenant's review flags as last stored (published nuggets sent back to review
        by their use or a corpus change), by lineage id then kind; the open ones unless
        ``include_dismissed``."""
        r = self._call("ListReviewFlags", qpb.ListReviewFlagsRequest(
            tenant=tenant, include_dismissed=include_dismissed), timeout)
        return _review_flags(r.flags)

    def dismiss_review_flag(self, tenant: str, lineage_id: str, kind: str = "", *,
                            reviewer: str = "",
                            timeout: float | None = None) -> tuple[ReviewFlag, ...]:
        """Keep the flagged nugget as it is: its flags of ``kind`` ("": every kind) are
        dismissed, and returned; NotFound when it has none (InvalidArgument for an
        unknown kind). Safe to retry."""
        r = self._call("DismissReviewFlag", qpb.DismissReviewFlagRequest(
            tenant=tenant, lineage_id=lineage_id, kind=kind, reviewer=reviewer), timeout)
        return _review_flags(r.flags)

    def who_am_i(self, *, timeout: float | None = None) -> Identity:
        """The tenants this client's token grants."""
        r = self._call("WhoAmI", qpb.WhoAmIRequest(), timeout)
        return Identity(tuple(r.tenants), r.unrestricted, r.token_id)

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
                              states: Sequence[str | int] = (), owner: str = "",
                              query: str = "", order: Literal["id", "newest"] = "id",
                              validity: Literal["", "current", "expired", "future"] = "",
                              as_of: datetime | None = None,
                              timeout: float | None = None) -> NuggetPage:
        """See :meth:`QueryClient.list_candidates`."""
        r = await self._call("ListCandidates", _candidates_request(
            tenant, publications, page_size, page_token,
            _Listing(states, owner, query, order, validity, as_of)), timeout)
        return NuggetPage(tuple(r.candidates), r.next_page_token, r.total_size)

    async def review(self, tenant: str, id: str, action: ReviewAction | int, *,
                     reviewer: str, reason: str = "", target_version_id: str = "",
                     request_id: str = "", expected_version_id: str = "",
                     timeout: float | None = None) -> Nugget:
        """See :meth:`QueryClient.review`."""
        nugget: Nugget = await self._call("Review", _review_request(
            tenant, id, action, reviewer, reason, target_version_id, request_id,
            expected_version_id), timeout)
        return nugget

    async def edit_nugget(self, tenant: str, id: str, *, expected_version_id: str,
                          title: str, body: str, anchors: Sequence[str] = (),
                          fact: pb.FactTriple | None = None,
                          valid_from: datetime | None = None,
                          valid_until: datetime | None = None, reviewer: str,
                          reason: str = "", dry_run: bool = False, request_id: str = "",
                          timeout: float | None = None) -> Edit:
        """See :meth:`QueryClient.edit_nugget`."""
        return _edit(await self._call("EditNugget", _edit_request(
            tenant, id, expected_version_id=expected_version_id, title=title, body=body,
            anchors=anchors, fact=fact, valid_from=valid_from, valid_until=valid_until,
            reviewer=reviewer, reason=reason, dry_run=dry_run, request_id=request_id),
            timeout))

    async def get_neighbourhood(self, tenant: str, id: str, *,
                                timeout: float | None = None) -> Neighbourhood:
        """See :meth:`QueryClient.get_neighbourhood`."""
        return _neighbourhood(await self._call("GetNeighbourhood", qpb.GetNeighbourhoodRequest(
            tenant=tenant, id=id), timeout))

    async def get_usage(self, tenant: str, ids: Iterable[str], *,
                        timeout: float | None = None) -> tuple[Usage, ...]:
        """See :meth:`QueryClient.get_usage`."""
        r = await self._call("GetUsage", _usage_request(tenant, ids), timeout)
        return tuple(Usage(u.id, u.retrieved, u.cited) for u in r.usage)

    async def list_review_flags(self, tenant: str, *, include_dismissed: bool = False,
                                timeout: float | None = None) -> tuple[ReviewFlag, ...]:
        """See :meth:`QueryClient.list_review_flags`."""
        r = await self._call("ListReviewFlags", qpb.ListReviewFlagsRequest(
            tenant=tenant, include_dismissed=include_dismissed), timeout)
        return _review_flags(r.flags)

    async def dismiss_review_flag(self, tenant: str, lineage_id: str, kind: str = "", *,
                                  reviewer: str = "",
                                  timeout: float | None = None) -> tuple[ReviewFlag, ...]:
        """See :meth:`QueryClient.dismiss_review_flag`."""
        r = await self._call("DismissReviewFlag", qpb.DismissReviewFlagRequest(
            tenant=tenant, lineage_id=lineage_id, kind=kind, reviewer=reviewer), timeout)
        return _review_flags(r.flags)

    async def who_am_i(self, *, timeout: float | None = None) -> Identity:
        """See :meth:`QueryClient.who_am_i`."""
        r = await self._call("WhoAmI", qpb.WhoAmIRequest(), timeout)
        return Identity(tuple(r.tenants), r.unrestricted, r.token_id)

    async def close(self) -> None:
        """Close the channel."""
        await self._channel.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.close()
