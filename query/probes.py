"""Probe sessions: candidate nuggets overlaid on a tenant's frozen view, for a team's own
RAG agent to retrieve through (the external INO harness, README "External harness").

The optimizer opens a session with one or more candidates (never written to the index);
a Retrieve that carries the session id reads the session's :class:`FrozenView` with the
candidates overlaid by the same code path as the built-in harness
(:meth:`query.retrieval.Retriever.retrieve` with ``overlays`` and ``view``: the store's
overlay scorer for BM25, the candidate's own vectors for the dense side, then fusion and
the gate). What each probe call saw, and what ReportCitations said of it, is recorded in
the session, where the harness reads it; nothing of it reaches the citation ledger or the
production metrics.

Sessions are kept in the memory of the serving process: with several query service
workers (``NUGGETFLOW_SERVE_WORKERS`` > 1) a session exists only in the worker that
opened it, so the harness and the agent must reach that worker (one worker for probe
traffic, see the README). A session belongs to one tenant, expires
``ttl`` seconds after its last use (its scorers are released then: on OpenSearch a
scratch index per candidate), and a tenant holds at most
``NUGGETFLOW_PROBE_SESSIONS_PER_TENANT`` at once.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from nuggetflow.errors import NotFoundError, NuggetflowError, ValidationError
from nuggetflow.logging import get_logger
from nuggetflow.settings import Settings
from query.auth import PermissionDeniedError
from query.embeddings import Embedder
from query.model import utcnow
from query.retrieval import FrozenView, Overlay, RetrieveResult, make_overlay
from query.store import IndexStore

log = get_logger(__name__)

MAX_CANDIDATES = 16  # candidates per session
MAX_RECORDED = 256  # probe retrievals a session keeps (the oldest go first)
TRACE_DEPTH = 60  # fused candidates recorded per probe retrieval
SESSION_PREFIX = "ps-"


class SessionLimitError(NuggetflowError):
    """A tenant already holds as many probe sessions as allowed (RESOURCE_EXHAUSTED)."""


@dataclass(frozen=True)
class CandidateSpec:
    """A candidate as a client sends it (mirrors nuggetflow.v1.ProbeCandidate)."""

    id: str
    title: str
    body: str
    anchors: tuple[str, ...] = ()


@dataclass(frozen=True)
class ProbeItem:
    """One fused candidate of a probe retrieval, as the gate saw it."""

    id: str
    fused: float
    reranked: bool = False
    relevance: float = 0.0
    hit: bool = False
    title: str = ""
    text: str = ""


@dataclass
class ProbeRecord:
    """One probe Retrieve in a session, and the citations reported for it."""

    number: int
    request_id: str
    query: str
    items: list[ProbeItem]
    gated: bool
    hits: frozenset[str]
    cited: list[str] = field(default_factory=list)
    reported: bool = False


@dataclass
class ProbeSession:
    """A tenant's frozen view with candidates overlaid, and what probes did in it."""

    id: str
    tenant: str
    view: FrozenView
    overlays: tuple[Overlay, ...]
    ttl: float
    last_used: float
    records: OrderedDict[str, ProbeRecord] = field(default_factory=OrderedDict)
    numbered: int = 0

    @property
    def as_of(self) -> datetime:
        """The instant the view is frozen at."""
        return self.view.as_of

    @property
    def candidate_ids(self) -> list[str]:
        """The candidates' ids, in the order given."""
        return [o.id for o in self.overlays]

    def after(self, number: int) -> list[ProbeRecord]:
        """The recorded retrievals numbered above ``number``, oldest first."""
        return [r for r in self.records.values() if r.number > number]


@dataclass(frozen=True)
class ProbeCitations:
    """What a ReportCitations call in a session recorded."""

    accepted: int
    retrieved: int


class ProbeSessions:
    """The probe sessions of one serving process (see the module docstring)."""

    def __init__(self, store: IndexStore, embedder: Embedder, settings: Settings, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings
        self.clock = clock
        self._sessions: dict[str, ProbeSession] = {}

    def __len__(self) -> int:
        return len(self._sessions)

    async def open(self, tenant: str, candidates: Sequence[CandidateSpec],
                   as_of: datetime | None = None, ttl_seconds: float = 0) -> ProbeSession:
        """A new session; ValidationError naming the bad field, SessionLimitError when
        the tenant holds too many."""
        await self.sweep()
        ttl = self._ttl(ttl_seconds)
        specs = _checked(candidates)
        held = sum(1 for s in self._sessions.values() if s.tenant == tenant)
        if held >= self.settings.probe_sessions_per_tenant:
            raise SessionLimitError(
                f"tenant {tenant!r} holds {held} open probe sessions (the limit, "
                "NUGGETFLOW_PROBE_SESSIONS_PER_TENANT); close one or let it expire",
                field="tenant")
        overlays = await asyncio.to_thread(
            lambda: tuple(make_overlay(self.embedder, c.id, c.title, c.body, c.anchors)
                          for c in specs))
        session = ProbeSession(SESSION_PREFIX + uuid.uuid4().hex, tenant,
                               FrozenView(self.store, as_of or utcnow()), overlays, ttl,
                               self.clock())
        self._sessions[session.id] = session
        log.info("probe session opened", tenant=tenant, session=session.id,
                 candidates=len(overlays), ttl_s=ttl)
        return session

    def _ttl(self, ttl_seconds: float) -> float:
        if ttl_seconds < 0 or ttl_seconds > self.settings.probe_session_max_ttl_seconds:
            raise ValidationError(f"must be in 0..{self.settings.probe_session_max_ttl_seconds:g}",
                                  field="ttl_seconds")
        return float(ttl_seconds or self.settings.probe_session_ttl_seconds)

    async def get(self, tenant: str, session_id: str, field_name: str = "session_id"
                  ) -> ProbeSession:
        """The live session ``session_id`` of ``tenant`` (its expiry starts again):
        NotFoundError for an unknown, closed or expired id, PermissionDeniedError for
        another tenant's session."""
        await self.sweep()
        session = self._sessions.get(session_id)
        if session is None:
            raise NotFoundError(f"no probe session {session_id!r} (never opened, closed, or "
                                "expired)", field=field_name)
        if session.tenant != tenant:
            raise PermissionDeniedError(f"probe session {session_id!r} is not a session of "
                                        f"tenant {tenant!r}", field=field_name)
        session.last_used = self.clock()
        return session

    def record(self, session: ProbeSession, query: str, res: RetrieveResult) -> ProbeRecord:
        """Keep what a probe Retrieve saw: the fused candidates (with what the gate read
        of the re-ranked ones) and the hits."""
        reranked = {it.id: it for it in res.reranked}
        hits = {h.id: h for h in res.hits}
        items = []
        for item_id, fused in res.candidates[:TRACE_DEPTH]:
            rr, hit = reranked.get(item_id), hits.get(item_id)
            title = rr.title if rr is not None else hit.title if hit is not None else ""
            text = ("\n".join([rr.text, *rr.anchors]) if rr is not None
                    else hit.text if hit is not None else "")
            items.append(ProbeItem(item_id, fused, rr is not None,
                                   res.relevance.get(item_id, 0.0), hit is not None, title,
                                   text))
        session.numbered += 1
        rec = ProbeRecord(session.numbered, res.request_id, query, items, res.gated,
                          frozenset(hits))
        session.records[res.request_id] = rec
        while len(session.records) > MAX_RECORDED:
            session.records.popitem(last=False)
        return rec

    @staticmethod
    def report(session: ProbeSession, request_id: str,
               cited_ids: Sequence[str]) -> ProbeCitations:
        """Record the citations of a probe retrieval: NotFoundError (field
        ``request_id``) when the session has no such retrieval, ValidationError (field
        ``cited_ids``) naming ids it did not return."""
        rec = session.records.get(request_id)
        if rec is None:
            raise NotFoundError(f"no retrieval {request_id!r} in probe session {session.id!r}",
                                field="request_id")
        distinct = list(dict.fromkeys(cited_ids))
        unknown = [c for c in distinct if c not in rec.hits]
        if unknown:
            shown = ", ".join(repr(u) for u in unknown[:5])
            raise ValidationError(f"not retrieved by request {request_id!r}: {shown}",
                                  field="cited_ids")
        new = [c for c in distinct if c not in rec.cited]
        rec.cited.extend(new)
        rec.reported = True
        return ProbeCitations(len(new), len(rec.hits))

    async def close(self, tenant: str, session_id: str) -> bool:
        """Close a session (False when it was gone already); PermissionDeniedError for
        another tenant's."""
        session = self._sessions.get(session_id)
        if session is None:
            await self.sweep()
            return False
        if session.tenant != tenant:
            raise PermissionDeniedError(f"probe session {session_id!r} is not a session of "
                                        f"tenant {tenant!r}", field="session_id")
        del self._sessions[session_id]
        await session.view.close()
        log.info("probe session closed", tenant=tenant, session=session_id,
                 retrievals=session.numbered)
        return True

    async def sweep(self) -> int:
        """Drop the expired sessions (releasing their scorers); returns how many."""
        now = self.clock()
        expired = [s for s in self._sessions.values() if now - s.last_used > s.ttl]
        for s in expired:
            del self._sessions[s.id]
        for s in expired:
            try:
                await s.view.close()
            except Exception as exc:  # an expiry must not fail the call that noticed it
                log.warning("could not release an expired probe session's scorers",
                            session=s.id, error=str(exc))
        if expired:
            log.info("probe sessions expired", sessions=len(expired))
        return len(expired)

    async def close_all(self) -> None:
        """Close every session (the server stops)."""
        sessions, self._sessions = list(self._sessions.values()), {}
        for s in sessions:
            await s.view.close()


def _checked(candidates: Sequence[CandidateSpec]) -> list[CandidateSpec]:
    """The candidates with default ids given; ValidationError naming the field."""
    if len(candidates) > MAX_CANDIDATES:
        raise ValidationError(f"at most {MAX_CANDIDATES} candidates per session",
                              field="candidates")
    out: list[CandidateSpec] = []
    for n, c in enumerate(candidates, 1):
        item_id = c.id or f"probe:{n}"
        if not item_id.strip():
            raise ValidationError(f"candidate #{n}: id is blank", field="candidates.id")
        if not (c.title.strip() or c.body.strip()):
            raise ValidationError(f"candidate #{n} has neither title nor body",
                                  field="candidates.body")
        if any(not a.strip() for a in c.anchors):
            raise ValidationError(f"candidate #{n}: an anchor is empty",
                                  field="candidates.anchors")
        out.append(CandidateSpec(item_id, c.title, c.body, tuple(c.anchors)))
    ids = [c.id for c in out]
    if len(set(ids)) != len(ids):
        raise ValidationError("candidate ids must differ", field="candidates.id")
    return out
