"""The gRPC query service (grpc.aio): governed retrieval, history, the review queue, review,
review flags, citations.

- :class:`QueryServicer` implements ``nuggetflow.v1.QueryService`` over a
  :class:`~query.index.NuggetIndex`; handlers raise ``nuggetflow.errors`` and never set
  status codes themselves: :class:`~query.interceptor.ServiceInterceptor` maps them,
  checks tokens and deadlines and measures latency, in one place.
- a ledger (:mod:`query.citations`) remembers what recent Retrieve calls returned, so
  that ReportCitations can check cited ids and the citation rate is exact per tenant.
- probe sessions (:mod:`query.probes`): a Retrieve or ReportCitations that carries a
  ``probe_session`` reads the session's frozen view with its candidates overlaid and is
  recorded there, never in the ledger or the production metrics.
- :func:`create_server` builds a server (bound, not started) with the standard health
  service and server reflection; :func:`serve` runs one until SIGTERM/SIGINT, then stops
  gracefully (``stop(grace)``: in-flight calls finish, new ones are refused).
- :func:`run` is ``nuggetflow serve``: one process, or (``NUGGETFLOW_SERVE_WORKERS`` > 1)
  a supervisor of worker processes that share the gRPC port (SO_REUSEPORT: the kernel
  spreads client connections over them), a citation ledger file and the store; worker
  ``i`` serves /metrics on ``metrics_port + i``; a worker that dies is restarted.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import multiprocessing
import signal
import threading
import time
from collections.abc import Awaitable, Callable
from datetime import date
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from nuggetflow.errors import (
    BackendUnavailableError,
    ConfigError,
    NotFoundError,
    ValidationError,
)
from nuggetflow.logging import clip, get_logger
from nuggetflow.settings import Settings
from nuggetflow.v1 import nugget_pb2 as pb
from nuggetflow.v1 import query_service_pb2 as qpb
from nuggetflow.v1 import query_service_pb2_grpc as qpb_grpc
from query.auth import TokenAuth, server_auth
from query.citations import CitationLedger, Ledger, SQLiteLedger
from query.convert import (
    candidates_to_proto,
    edit_changes_from_proto,
    flag_kind_from_proto,
    listing_from_proto,
    nugget_to_proto,
    probe_candidates_from_proto,
    probe_record_to_proto,
    probe_session_to_proto,
    publications_from_proto,
    relation_to_proto,
    retrieve_request_from_proto,
    retrieve_result_to_proto,
    review_action_from_proto,
    review_flag_to_proto,
    ts_from_proto,
)
from query.index import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, EditGuard, NuggetIndex
from query.interceptor import CALLER, ServiceInterceptor
from query.limits import RequestLimits
from query.metrics import Metrics, MetricsServer, QueryMetrics
from query.model import ItemType
from query.probes import ProbeSessions
from query.retrieval import RetrieveRequest
from query.review_watch import ReviewWatch
from query.usage import UsagePolicy, UsageRecorder, UsageTotals, dismiss_flag, review_loop

log = get_logger(__name__)

SERVICE_NAME: str = qpb.DESCRIPTOR.services_by_name["QueryService"].full_name
# DEFAULT_PAGE_SIZE (page size when a request leaves it 0) and MAX_PAGE_SIZE (larger ones
# are treated as this) come from query.index, shared by ListVersions and ListCandidates.
PAGE_TOKEN_VERSION = "v1"


# --- the servicer ----------------------------------------------------------------------


def _require_id(value: str, name: str) -> str:
    """``value`` unless blank (lengths are checked for every field by the interceptor)."""
    if not value.strip():
        raise ValidationError(f"{name} is empty", field=name)
    return value


def page_token(after_id: str) -> str:
    """The opaque ListVersions page token that continues after version ``after_id``."""
    raw = f"{PAGE_TOKEN_VERSION}:{after_id}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def after_id_of(token: str) -> str:
    """The version id a page token continues after ("" for no token); ValidationError
    (field ``page_token``) for a token this service did not make."""
    if not token:
        return ""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
    except (ValueError, UnicodeDecodeError):
        raw = ""
    version, _, after = raw.partition(":")
    if version != PAGE_TOKEN_VERSION or not after:
        raise ValidationError("not a page token of this service", field="page_token")
    return after


class QueryServicer(qpb_grpc.QueryServiceServicer):
    """nuggetflow.v1.QueryService over a NuggetIndex (errors are raised, not set)."""

    def __init__(self, index: NuggetIndex, metrics: QueryMetrics, ledger: Ledger,
                 probes: ProbeSessions | None = None, guard: EditGuard | None = None,
                 usage: UsageRecorder | None = None) -> None:
        self.index = index
        self.metrics = metrics
        self.ledger = ledger
        #: retrieval and citation counts per version and day, added to the store in
        #: batches (query.usage)
        self.usage = usage or UsageRecorder()
        self.probes = probes or ProbeSessions(index.store, index.embedder, index.settings)
        self._guard = guard

    @property
    def guard(self) -> EditGuard:
        """The factual-preservation guard EditNugget runs: given by the caller that builds
        the server (the CLI and the demo pass ``optimizer.guard.check_edit``; query does
        not import the optimizer)."""
        if self._guard is None:
            raise ConfigError("EditNugget needs the factual guard: create_server(guard=...)",
                              field="guard")
        return self._guard

    async def Retrieve(self, request: qpb.RetrieveRequest,
                       context: grpc.aio.ServicerContext) -> qpb.RetrieveResponse:
        """Governed hybrid retrieval: filter by tenant, time, state, THEN rank."""
        req = retrieve_request_from_proto(request, self.index.settings.grpc_max_query_chars)
        if request.probe_session:
            return await self._probe_retrieve(req, request.probe_session)
        res = await self.index.retriever.retrieve(req)
        nuggets = [h.id for h in res.hits if h.type is ItemType.NUGGET]
        documents = [h.id for h in res.hits if h.type is ItemType.DOCUMENT]
        self.ledger.remember(res.request_id, req.tenant, nuggets, documents)
        self.usage.considered(req.tenant, set(res.considered) | set(nuggets))
        self.usage.retrieved(req.tenant, nuggets)
        self.metrics.citation_ledger_entries.set(len(self.ledger))
        self.metrics.observe_retrieve(req.tenant, len(nuggets), len(documents), res.suppressed)
        if res.query_vector_cached is not None:
            self.metrics.observe_query_vector(res.query_vector_cached)
        return retrieve_result_to_proto(res)

    async def _probe_retrieve(self, req: RetrieveRequest,
                              session_id: str) -> qpb.RetrieveResponse:
        """A Retrieve in a probe session: the session's frozen view with its candidates
        overlaid (the built-in harness's code path), recorded in the session only."""
        session = await self.probes.get(req.tenant, session_id, "probe_session")
        if req.as_of is not None and req.as_of != session.as_of:
            raise ValidationError("must be unset or the probe session's as_of "
                                  f"({session.as_of.isoformat()})", field="as_of")
        req = dataclasses.replace(req, as_of=session.as_of)
        res = await self.index.retriever.retrieve(req, overlays=session.overlays,
                                                  view=session.view, count_suppressed=False)
        self.probes.record(session, req.query, res)
        return retrieve_result_to_proto(res)

    async def GetNugget(self, request: qpb.GetNuggetRequest,
                        context: grpc.aio.ServicerContext) -> pb.Nugget:
        """One nugget version, published or not: by a lineage id the head, by any other
        version id that version, with ``version`` > 0 that version number of the lineage
        (:meth:`NuggetIndex.nugget`)."""
        return nugget_to_proto(await self.index.nugget(
            request.tenant, _require_id(request.id, "id"), request.version))

    async def ListCandidates(self, request: qpb.ListCandidatesRequest,
                             context: grpc.aio.ServicerContext) -> qpb.ListCandidatesResponse:
        """One page of what waits for review (:meth:`NuggetIndex.candidates`, which
        ``nuggetflow candidates`` calls too)."""
        publications = publications_from_proto(request.publications)
        page = await self.index.candidates(request.tenant, publications, request.page_size,
                                           request.page_token, listing_from_proto(request))
        return candidates_to_proto(page)

    async def ListVersions(self, request: qpb.ListVersionsRequest,
                           context: grpc.aio.ServicerContext) -> qpb.ListVersionsResponse:
        """One page of the versions of the lineage of ``id``, oldest first (nothing is
        ever deleted); ``next_page_token`` continues, "" on the last page."""
        item_id = _require_id(request.id, "id")
        if request.page_size < 0:
            raise ValidationError(f"must be in 0..{MAX_PAGE_SIZE}", field="page_size")
        size = min(request.page_size or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
        after = after_id_of(request.page_token)
        try:
            page = await self.index.store.history_page(request.tenant, item_id, size + 1,
                                                       after_id=after)
        except ValidationError as exc:
            if exc.field != "after_id":
                raise
            raise ValidationError("not a page token of this lineage",
                                  field="page_token") from None
        more = len(page) > size
        page = page[:size]
        return qpb.ListVersionsResponse(versions=[nugget_to_proto(v) for v in page],
                                        next_page_token=page_token(page[-1].id) if more else "")

    async def Review(self, request: qpb.ReviewRequest,
                     context: grpc.aio.ServicerContext) -> pb.Nugget:
        """Approve, reject, unpublish or revert; returns the version the review produced.

        Writes honour the deadline themselves (the interceptor does not cancel them): the
        review is refused with DEADLINE_EXCEEDED, nothing written, when the deadline has
        passed before its write begins; once the write has begun it is finished and the
        reply says so. With a ``request_id`` already applied to the lineage, nothing is
        written and that request's version is returned.
        """
        action = review_action_from_proto(request.action)
        item_id = _require_id(request.id, "id")
        if action == "revert":
            _require_id(request.target_version_id, "target_version_id")
        remaining = context.time_remaining()
        deadline = None if remaining is None else time.monotonic() + remaining
        # index.apply_review holds the store's writer lock (across worker processes on
        # SQLite).
        applied = await self.index.apply_review(
            request.tenant, item_id, action, reviewer=request.reviewer,
            reason=request.reason, target_version_id=request.target_version_id,
            request_id=request.request_id, deadline=deadline,
            expected_version_id=request.expected_version_id)
        head = applied.head
        log.info("review replayed" if applied.replayed else "review applied",
                 tenant=clip(request.tenant), id=clip(item_id), action=action,
                 reviewer=clip(request.reviewer), request_id=clip(request.request_id),
                 head=head.id, publication=head.publication.name)
        return nugget_to_proto(head)

    async def EditNugget(self, request: qpb.EditNuggetRequest,
                         context: grpc.aio.ServicerContext) -> qpb.EditNuggetResponse:
        """A new version with the edited content, made from ``expected_version_id``
        (ABORTED when the head is another version) and checked by the factual guard first:
        written unless ``dry_run``, the guard objects or nothing changed. The deadline is
        honoured like Review's."""
        item_id = _require_id(request.id, "id")
        _require_id(request.expected_version_id, "expected_version_id")
        changes = edit_changes_from_proto(request)
        remaining = context.time_remaining()
        deadline = None if remaining is None else time.monotonic() + remaining
        outcome = await self.index.checked_edit(
            request.tenant, item_id, expected_version_id=request.expected_version_id,
            changes=changes, guard=self.guard, reviewer=request.reviewer,
            reason=request.reason, dry_run=request.dry_run, request_id=request.request_id,
            deadline=deadline)
        log.info("edit saved" if outcome.saved else "edit not saved",
                 tenant=clip(request.tenant), id=clip(item_id), dry_run=request.dry_run,
                 reviewer=clip(request.reviewer), changed=",".join(outcome.changed),
                 violations=len(outcome.violations), head=outcome.nugget.id)
        return qpb.EditNuggetResponse(
            nugget=nugget_to_proto(outcome.nugget),
            guard=qpb.GuardVerdict(ok=not outcome.violations,
                                   violations=list(outcome.violations)),
            saved=outcome.saved, changed_fields=outcome.changed)

    async def GetNeighbourhood(self, request: qpb.GetNeighbourhoodRequest,
                               context: grpc.aio.ServicerContext
                               ) -> qpb.GetNeighbourhoodResponse:
        """The other lineages with the nugget's governance key and how each relates."""
        head, relations, outcome = await self.index.neighbourhood(
            request.tenant, _require_id(request.id, "id"))
        return qpb.GetNeighbourhoodResponse(
            nugget=nugget_to_proto(head), neighbours=[relation_to_proto(r) for r in relations],
            on_approval=outcome)

    async def GetUsage(self, request: qpb.GetUsageRequest,
                       context: grpc.aio.ServicerContext) -> qpb.GetUsageResponse:
        """How often each nugget version was retrieved and cited: the store's usage
        counts (every process that serves it, since the version was first retrieved) plus
        what this process gathered and has not stored yet."""
        if any(not i.strip() for i in request.ids):
            raise ValidationError("an id is empty", field="ids")
        ids = list(request.ids)
        stored = await self.index.store.usage_totals(request.tenant, ids, date.min)
        pending = self.usage.pending(request.tenant, ids)
        totals = [stored.get(i, UsageTotals()) + pending.get(i, UsageTotals()) for i in ids]
        return qpb.GetUsageResponse(usage=[
            qpb.Usage(id=i, retrieved=t.retrieved, cited=t.cited)
            for i, t in zip(ids, totals, strict=True)])

    async def ListReviewFlags(self, request: qpb.ListReviewFlagsRequest,
                              context: grpc.aio.ServicerContext
                              ) -> qpb.ListReviewFlagsResponse:
        """The tenant's stored review flags, as the last usage review and re-probe left
        them (nothing is judged here), by lineage id then kind; open ones only unless
        ``include_dismissed``."""
        flags = await self.index.store.review_flags(request.tenant)
        return qpb.ListReviewFlagsResponse(flags=[
            review_flag_to_proto(f) for f in flags
            if request.include_dismissed or not f.dismissed])

    async def DismissReviewFlag(self, request: qpb.DismissReviewFlagRequest,
                                context: grpc.aio.ServicerContext
                                ) -> qpb.DismissReviewFlagResponse:
        """Keep a flagged nugget as it is: mark the lineage's flags (of ``kind``; "": every
        kind) dismissed (:func:`query.usage.dismiss_flag`, as ``nuggetflow usage-review
        --dismiss``). NOT_FOUND when the lineage has no such flag. Dismissing is
        idempotent, so a retry after an unclear outcome is safe."""
        lineage = _require_id(request.lineage_id, "lineage_id")
        kind = flag_kind_from_proto(request.kind)
        done = await dismiss_flag(self.index.store, request.tenant, lineage, kind)
        if not done:
            what = f"{kind.value} flag" if kind is not None else "review flag"
            raise NotFoundError(f"no {what} on this lineage", field="lineage_id")
        log.info("review flag dismissed", tenant=clip(request.tenant), lineage=clip(lineage),
                 kinds=",".join(f.kind.value for f in done),
                 reviewer=clip(request.reviewer))
        return qpb.DismissReviewFlagResponse(flags=[review_flag_to_proto(f) for f in done])

    async def WhoAmI(self, request: qpb.WhoAmIRequest,
                     context: grpc.aio.ServicerContext) -> qpb.WhoAmIResponse:
        """The tenants the caller's token grants (unrestricted without tokens)."""
        caller = CALLER.get()
        return qpb.WhoAmIResponse(tenants=sorted(caller.tenants),
                                  unrestricted=caller.unrestricted, token_id=caller.token_id)

    async def ReportCitations(self, request: qpb.ReportCitationsRequest,
                              context: grpc.aio.ServicerContext
                              ) -> qpb.ReportCitationsResponse:
        """Record which retrieved items an answer cited (for the citation rate)."""
        _require_id(request.request_id, "request_id")
        if any(not c.strip() for c in request.cited_ids):
            raise ValidationError("an id is empty", field="cited_ids")
        if request.probe_session:
            session = await self.probes.get(request.tenant, request.probe_session,
                                            "probe_session")
            probe = self.probes.report(session, request.request_id, list(request.cited_ids))
            return qpb.ReportCitationsResponse(accepted=probe.accepted,
                                               retrieved=probe.retrieved)
        outcome = self.ledger.report(request.tenant, request.request_id,
                                     list(request.cited_ids))
        self.usage.cited(request.tenant, outcome.nugget_ids)
        self.metrics.observe_citations(request.tenant, outcome.nuggets, outcome.documents)
        return qpb.ReportCitationsResponse(accepted=outcome.nuggets + outcome.documents,
                                           retrieved=outcome.retrieved)


    async def OpenProbeSession(self, request: qpb.OpenProbeSessionRequest,
                               context: grpc.aio.ServicerContext) -> qpb.ProbeSession:
        """A probe session of the tenant with the candidates overlaid (never indexed)."""
        try:
            session = await self.probes.open(
                request.tenant, probe_candidates_from_proto(request.candidates),
                ts_from_proto(request, "as_of"), request.ttl_seconds)
        finally:
            self.metrics.probe_sessions.set(len(self.probes))
        return probe_session_to_proto(session)

    async def GetProbeSession(self, request: qpb.GetProbeSessionRequest,
                              context: grpc.aio.ServicerContext
                              ) -> qpb.GetProbeSessionResponse:
        """The session and its probe retrievals numbered above ``after``."""
        session = await self.probes.get(request.tenant,
                                        _require_id(request.session_id, "session_id"))
        if request.after < 0:
            raise ValidationError("must be >= 0", field="after")
        return qpb.GetProbeSessionResponse(
            session=probe_session_to_proto(session),
            retrievals=[probe_record_to_proto(r) for r in session.after(request.after)])

    async def CloseProbeSession(self, request: qpb.CloseProbeSessionRequest,
                                context: grpc.aio.ServicerContext
                                ) -> qpb.CloseProbeSessionResponse:
        """Close a session now (its scorers are released)."""
        try:
            closed = await self.probes.close(request.tenant,
                                             _require_id(request.session_id, "session_id"))
        finally:
            self.metrics.probe_sessions.set(len(self.probes))
        return qpb.CloseProbeSessionResponse(closed=closed)


# --- server ----------------------------------------------------------------------------


class QueryServer:
    """A bound grpc.aio server with its health service; start, stop(grace), wait."""

    def __init__(self, server: grpc.aio.Server, health_servicer: Any, port: int,
                 servicer: QueryServicer) -> None:
        self.grpc_server = server
        self.health = health_servicer
        self.port = port
        self.servicer = servicer

    async def start(self) -> None:
        """Start serving; health reports SERVING for "" and the QueryService."""
        await self.grpc_server.start()
        for name in ("", SERVICE_NAME):
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)

    async def watch_backend(self, probe: Callable[[], Awaitable[object]],
                            interval: float) -> None:
        """Keep the health status in step with the store, until cancelled.

        Every ``interval`` seconds runs ``probe`` (a cheap store call): NOT_SERVING while
        it fails (backend unavailable, any error, or no answer within ``interval``), so
        load balancers and readiness probes route around the process; SERVING again once
        it succeeds. Calls keep their own status meanwhile (UNAVAILABLE).
        """
        serving = True
        while True:
            try:
                await asyncio.wait_for(probe(), timeout=interval)
                ok, error = True, ""
            except asyncio.CancelledError:
                raise
            except BackendUnavailableError as exc:
                ok, error = False, str(exc)
            except TimeoutError:
                ok, error = False, f"no answer within {interval:g}s"
            except Exception as exc:  # health must not die with the probe
                ok, error = False, f"{type(exc).__name__}: {exc}"
            if ok != serving:
                serving = ok
                status = (health_pb2.HealthCheckResponse.SERVING if ok
                          else health_pb2.HealthCheckResponse.NOT_SERVING)
                for name in ("", SERVICE_NAME):
                    await self.health.set(name, status)
                if ok:
                    log.info("backend reachable again; health SERVING")
                else:
                    log.warning("backend unreachable; health NOT_SERVING", error=error)
            await asyncio.sleep(interval)

    async def stop(self, grace: float | None = None) -> None:
        """Health NOT_SERVING, refuse new calls, let in-flight ones finish for ``grace`` s;
        then close the probe sessions."""
        await self.health.enter_graceful_shutdown()
        await self.grpc_server.stop(grace)
        await self.servicer.probes.close_all()

    async def wait_for_termination(self) -> None:
        """Return when the server has stopped."""
        await self.grpc_server.wait_for_termination()


def _address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"


def create_server(index: NuggetIndex, settings: Settings, port: int = 0, *,
                  metrics: QueryMetrics | None = None, auth: TokenAuth | None = None,
                  ledger: Ledger | None = None, reuse_port: bool = False,
                  guard: EditGuard | None = None) -> tuple[QueryServer, int]:
    """A QueryService server bound to ``settings.serve_host:port`` (0: any free port).

    The index must be started by the caller. ``metrics`` defaults to a fresh registry's,
    ``auth`` to the settings' tokens (:func:`~query.auth.server_auth`: ConfigError without
    any unless ``settings.insecure_dev``), ``ledger`` to an in-memory one. ``reuse_port``
    lets worker processes share the port (off otherwise, so a second server on a taken
    port fails instead of binding silently). ``guard`` is the factual guard EditNugget runs
    (without one, EditNugget fails: INTERNAL, logged). Returns the server (not
    started) and the bound port.
    """
    metrics = metrics if metrics is not None else Metrics.create().query
    auth = auth if auth is not None else server_auth(settings)
    server = grpc.aio.server(
        interceptors=[ServiceInterceptor(auth, metrics, RequestLimits.from_settings(settings))],
        options=[("grpc.max_receive_message_length", settings.grpc_max_message_bytes),
                 ("grpc.so_reuseport", 1 if reuse_port else 0)])
    if ledger is None:
        ledger = CitationLedger(settings.citation_ledger_size)
    servicer = QueryServicer(index, metrics, ledger, guard=guard)
    qpb_grpc.add_QueryServiceServicer_to_server(servicer, server)  # type: ignore[no-untyped-call]
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server)
    address = _address(settings.serve_host, port)
    try:
        bound = server.add_insecure_port(address)
    except RuntimeError as exc:
        raise ConfigError(f"cannot bind {address}: {exc}", field="NUGGETFLOW_GRPC_PORT") from exc
    if not bound:
        raise ConfigError(f"cannot bind {address}", field="NUGGETFLOW_GRPC_PORT")
    return QueryServer(server, health_servicer, int(bound), servicer), int(bound)


async def serve(settings: Settings, index: NuggetIndex, *,
                stop_event: asyncio.Event | None = None, worker: int | None = None,
                guard: EditGuard | None = None) -> None:
    """Run the query service (and /metrics) until SIGTERM/SIGINT or ``stop_event``.

    Starts ``index`` (and warms its embedder up, so the first query is not slow), binds
    ``settings.grpc_port`` and ``settings.metrics_port``, logs the bound ports, and on the
    signal stops gracefully within ``settings.grpc_grace_seconds``. As ``worker`` i of
    several, it shares the port and the citation ledger file with its siblings.
    """
    auth = server_auth(settings)  # before anything starts: no tokens, no service
    metrics = Metrics.create(process=True)
    metrics.alerts.export_query(settings)
    await index.start()
    metrics_server = MetricsServer(metrics.registry, settings.serve_host, settings.metrics_port)
    try:
        warm_up = getattr(index.embedder, "warm_up", None)
        if callable(warm_up):
            await asyncio.to_thread(warm_up)
        ledger: Ledger | None = None
        if worker is not None:
            ledger = SQLiteLedger(settings.citation_ledger_path, settings.citation_ledger_size)
        server, port = create_server(index, settings, settings.grpc_port,
                                     metrics=metrics.query, auth=auth, ledger=ledger,
                                     reuse_port=worker is not None, guard=guard)
        metrics_port = metrics_server.start()
        await server.start()
        log.info("query service started", host=settings.serve_host, grpc_port=port,
                 worker=worker if worker is not None else "-",
                 metrics_port=metrics_port, store=settings.store.split("://")[0],
                 max_message_bytes=settings.grpc_max_message_bytes)
        watcher = asyncio.create_task(server.watch_backend(index.store.ping,
                                                           settings.health_check_seconds))
        review = ReviewWatch(index, metrics.review,
                             settings.review_backlog_interval_seconds).attach()
        backlog = asyncio.create_task(review.run())
        usage = server.servicer.usage
        flusher = asyncio.create_task(usage.run(index.store, settings.usage_flush_seconds))
        usage_review = None if not settings.usage_review_interval_seconds else \
            asyncio.create_task(review_loop(index.store, UsagePolicy.from_settings(settings),
                                            settings.usage_review_interval_seconds,
                                            metrics.review.set_usage_flags))
        stop_event = stop_event or asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop_event.set)
        try:
            await stop_event.wait()
        finally:
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(sig)
        log.info("query service stopping", grace_seconds=settings.grpc_grace_seconds)
        watcher.cancel()
        backlog.cancel()
        flusher.cancel()
        if usage_review is not None:
            usage_review.cancel()
        await server.stop(settings.grpc_grace_seconds)
        try:
            rows = await usage.flush(index.store)
        except Exception as exc:
            log.error("usage counts of this process lost at stop", rows=len(usage),
                      error=str(exc) or repr(exc))
        else:
            log.info("query service stopped", usage_rows_stored=rows)
    finally:
        metrics_server.stop()
        await index.stop()


# --- worker processes ------------------------------------------------------------------

IndexFactory = Callable[[Settings], NuggetIndex]
RESTART_DELAY_SECONDS = 1.0


def _worker_main(settings: Settings, worker: int, build_index: IndexFactory,
                 guard: EditGuard | None = None) -> None:
    """Entry point of worker process ``worker`` (spawned: configures its own logging)."""
    from nuggetflow.logging import configure

    configure(settings.log_level, settings.log_format)
    if settings.metrics_port:
        settings = settings.replace(metrics_port=settings.metrics_port + worker)
    asyncio.run(serve(settings, build_index(settings), worker=worker, guard=guard))


def run(settings: Settings, build_index: IndexFactory, guard: EditGuard | None = None) -> int:
    """``nuggetflow serve``: one process, or a supervisor of ``serve_workers`` workers.

    The supervisor starts the workers, restarts one that exits on its own (after
    RESTART_DELAY_SECONDS), and on SIGTERM/SIGINT passes the signal on and waits for
    them (grace period plus 5 s, then kills). Returns the exit code.
    """
    server_auth(settings, announce=settings.serve_workers > 1)  # refuse before any worker
    workers = settings.serve_workers
    if workers == 1:
        asyncio.run(serve(settings, build_index(settings), guard=guard))
        return 0
    if settings.grpc_port == 0:
        raise ConfigError("several workers need a fixed port (not 0)",
                          field="NUGGETFLOW_GRPC_PORT")
    if settings.metrics_port and settings.metrics_port + workers - 1 > 65535:
        raise ConfigError(f"worker metrics ports {settings.metrics_port}.."
                          f"{settings.metrics_port + workers - 1} exceed 65535",
                          field="NUGGETFLOW_METRICS_PORT")
    ctx = multiprocessing.get_context("spawn")
    stopping = threading.Event()

    def start(i: int) -> multiprocessing.process.BaseProcess:
        proc = ctx.Process(target=_worker_main, args=(settings, i, build_index, guard),
                           name=f"nuggetflow-serve-{i}", daemon=False)
        proc.start()
        log.info("worker started", worker=i, pid=proc.pid)
        return proc

    def on_signal(signum: int, _frame: object) -> None:
        stopping.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    procs = {i: start(i) for i in range(workers)}
    log.info("query service supervisor running", workers=workers, grpc_port=settings.grpc_port,
             ledger=settings.citation_ledger_path)
    try:
        while not stopping.wait(0.5):
            for i, proc in list(procs.items()):
                if proc.exitcode is not None and not stopping.is_set():
                    log.error("worker exited; restarting", worker=i, exit_code=proc.exitcode)
                    time.sleep(RESTART_DELAY_SECONDS)
                    procs[i] = start(i)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        log.info("stopping workers", workers=len(procs))
        for proc in procs.values():
            if proc.exitcode is None and proc.pid is not None:
                proc.terminate()  # SIGTERM: each worker stops gracefully
        deadline = time.monotonic() + settings.grpc_grace_seconds + 5
        for proc in procs.values():
            proc.join(max(0.0, deadline - time.monotonic()))
            if proc.exitcode is None:
                log.warning("worker did not stop in time; killing", pid=proc.pid)
                proc.kill()
                proc.join()
    return 0
