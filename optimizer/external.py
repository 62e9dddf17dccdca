"""The external harness: INO probes a team's own RAG agent (README "External harness").

For each probe, :class:`ExternalHarness` makes sure a probe session of the query service
holds the candidate (one session per candidate revision: :mod:`query.probes`), then POSTs
the probe to the team's agent endpoint::

    {"query": "...", "tenant": "acme", "session_id": "ps-...", "probe_id": "..."}

The agent answers as it would answer a user, retrieving through the query service with
``probe_session`` set to the session id, and replies with JSON::

    {"answer": "...", "retrieved": [ids], "context": [ids], "cited": [ids]}

(``cited`` may be left out, or null, when the agent reports citations through
ReportCitations with the session id instead; ``request_ids`` may name the Retrieve calls
the answer used; ``usage`` {"prompt_tokens", "completion_tokens"} is metered when given.)
The harness then reads from the session what those Retrieve calls saw (the fused
candidates, the gate's probabilities, the texts of the re-ranked items) and builds the
same :class:`~optimizer.harness.RagTrace` as the built-in harness: the agent's ``context``
is what reached its generator, its ``cited`` (or the session's reported citations) what
the answer cited. An agent that reports no citations at all gets the probe counted as not
cited, with a note in the trace saying so.

Failures follow the LLM backend's contract (:mod:`optimizer.openai_backend`): timeouts,
connection errors, 408, 429 and 5xx are retried with exponential backoff up to
``NUGGETFLOW_AGENT_MAX_ATTEMPTS`` and then raise :class:`BackendUnavailableError`
(retriable: the stream keeps the event and tries it again later); a reply that breaks the
contract is retried the same way and then raises :class:`AgentOutputError` (the stream
dead-letters the event with reason ``agent_output``, its original bytes kept); another
4xx raises :class:`AgentRefusedError` at once (reason ``agent_refused``). At most
``NUGGETFLOW_AGENT_CONCURRENCY`` agent requests are in flight per process.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import random
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc

from nuggetflow.errors import (
    BackendUnavailableError,
    ConfigError,
    NotFoundError,
    NuggetflowError,
    ValidationError,
)
from nuggetflow.logging import clip, get_logger
from nuggetflow.settings import Settings
from nuggetflow.v1 import query_service_pb2 as qpb
from nuggetflow.v1 import query_service_pb2_grpc as qpb_grpc
from optimizer.accounting import Meter
from optimizer.harness import Candidate, RagTrace
from query.convert import ts_to_proto
from query.model import utcnow

if TYPE_CHECKING:
    from query.index import NuggetIndex

log = get_logger(__name__)

MAX_REPLY_BYTES = 4 * 1024 * 1024
BACKOFF_CAP_SECONDS = 10.0
TRANSIENT_HTTP = frozenset({408, 429, 500, 502, 503, 504})
NO_ANSWER = "I could not find this."


class AgentOutputError(ValidationError):
    """The agent's replies did not follow the contract, every attempt (dead letter
    reason ``agent_output``)."""

    reason_code = "agent_output"


class AgentRefusedError(NuggetflowError):
    """The agent answered a probe with a 4xx status other than 408 and 429 (dead letter
    reason ``agent_refused``): trying again cannot help."""

    reason_code = "agent_refused"


@dataclass(frozen=True)
class AgentReply:
    """What the agent reported for one probe."""

    answer: str
    retrieved: list[str]
    context: list[str]
    cited: list[str] | None  # None: not reported in the reply
    request_ids: list[str]
    prompt_tokens: int = 0
    completion_tokens: int = 0


def _ids(d: dict[str, Any], key: str, required: bool) -> list[str] | None:
    value = d.get(key)
    if value is None:
        if required:
            raise ValueError(f"{key!r} is missing (a list of ids)")
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"{key!r} must be a list of non-empty strings")
    return list(dict.fromkeys(value))


def parse_reply(raw: bytes) -> AgentReply:
    """The agent's reply; ValueError saying what breaks the contract."""
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    answer = data.get("answer")
    if not isinstance(answer, str):
        raise ValueError("'answer' must be a string")
    usage = data.get("usage") or {}
    if not isinstance(usage, dict):
        raise ValueError("'usage' must be an object")
    tokens = [usage.get(k, 0) for k in ("prompt_tokens", "completion_tokens")]
    if not all(isinstance(t, int) and t >= 0 for t in tokens):
        raise ValueError("'usage' token counts must be integers >= 0")
    return AgentReply(answer, _ids(data, "retrieved", True) or [],
                      _ids(data, "context", True) or [], _ids(data, "cited", False),
                      _ids(data, "request_ids", False) or [], tokens[0], tokens[1])


_LIMITS: dict[tuple[str, int], threading.BoundedSemaphore] = {}
_LIMITS_LOCK = threading.Lock()


def _limit(url: str, concurrency: int) -> threading.BoundedSemaphore:
    """The process-wide limit of requests in flight to ``url`` (shared by every harness,
    whatever thread or event loop it runs on)."""
    with _LIMITS_LOCK:
        return _LIMITS.setdefault((url, concurrency), threading.BoundedSemaphore(concurrency))


class AgentClient:
    """POSTs probes to the agent endpoint: timeout, retries with backoff, a concurrency
    limit (see the module docstring)."""

    def __init__(self, settings: Settings, *, sleep: Callable[[float], None] = time.sleep
                 ) -> None:
        if not settings.agent_url:
            raise ConfigError("the external harness needs the agent's endpoint",
                              field="NUGGETFLOW_AGENT_URL")
        self.url = settings.agent_url
        self.timeout = settings.agent_timeout_seconds
        self.attempts = settings.agent_max_attempts
        self.api_key = settings.agent_api_key
        self._limit = _limit(self.url, settings.agent_concurrency)
        self._sleep = sleep

    async def ask(self, payload: dict[str, Any], meter: Meter | None = None) -> AgentReply:
        """The agent's reply to one probe (runs the blocking request on a thread)."""
        return await asyncio.to_thread(self.post, payload, meter)

    def post(self, payload: dict[str, Any], meter: Meter | None = None) -> AgentReply:
        """See :meth:`ask`."""
        body = json.dumps(payload).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        malformed = ""
        transient = ""
        for attempt in range(1, self.attempts + 1):
            if attempt > 1:
                if meter is not None:
                    meter.retries += 1
                delay = min(BACKOFF_CAP_SECONDS, 0.5 * 2 ** (attempt - 2)) * (
                    0.5 + random.random())
                log.warning("agent probe failed; retrying", url=self.url, attempt=attempt - 1,
                            error=clip(malformed or transient, 200), delay_s=round(delay, 2))
                self._sleep(delay)
            malformed = transient = ""
            request = urllib.request.Request(self.url, data=body, headers=headers,
                                             method="POST")
            try:
                with self._limit, urllib.request.urlopen(request, timeout=self.timeout) as resp:
                    raw = resp.read(MAX_REPLY_BYTES + 1)
            except urllib.error.HTTPError as exc:
                if exc.code in TRANSIENT_HTTP:
                    transient = f"HTTP {exc.code}"
                    continue
                raise AgentRefusedError(f"the agent at {self.url} refused the probe: HTTP "
                                        f"{exc.code} {clip(exc.reason, 100)}",
                                        field="NUGGETFLOW_AGENT_URL") from None
            except (OSError, http.client.HTTPException) as exc:  # timeouts, refused, reset
                reason = getattr(exc, "reason", exc)
                if isinstance(reason, TimeoutError) or "timed out" in str(reason):
                    transient = f"timed out after {self.timeout:g} s"
                else:
                    transient = f"{type(reason).__name__}: {clip(reason, 100)}"
                continue
            if len(raw) > MAX_REPLY_BYTES:
                malformed = f"reply larger than {MAX_REPLY_BYTES} bytes"
                continue
            try:
                return parse_reply(raw)
            except ValueError as exc:
                malformed = str(exc)
        if malformed:
            raise AgentOutputError(f"the agent at {self.url} broke the reply contract "
                                   f"{self.attempts} times: {malformed}", field="agent")
        raise BackendUnavailableError(f"the agent at {self.url} failed {self.attempts} "
                                      f"times: {transient}")


_GRPC_RETRIABLE = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED,
                             grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.ABORTED})


def _mapped(exc: grpc.aio.AioRpcError, what: str) -> NuggetflowError:
    """The error-tree form of a failed probe-service call."""
    code, details = exc.code(), exc.details() or ""
    if code in _GRPC_RETRIABLE:
        return BackendUnavailableError(f"probe service: {what}: {code.name} {details}")
    if code is grpc.StatusCode.NOT_FOUND:
        return NotFoundError(f"probe service: {what}: {details}", field="probe_session")
    if code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
        return ConfigError(f"probe service: {what}: {code.name} {details}",
                           field="NUGGETFLOW_PROBE_SERVICE_TOKEN")
    if code is grpc.StatusCode.INVALID_ARGUMENT:
        return ValidationError(f"probe service: {what}: {details}", field="candidate")
    return BackendUnavailableError(f"probe service: {what}: {code.name} {details}")


class ProbeServiceClient:
    """The harness's side of probe sessions (one channel per harness and event loop)."""

    def __init__(self, settings: Settings) -> None:
        self.address = settings.probe_service
        self.timeout = max(10.0, settings.agent_timeout_seconds)
        self.metadata = ((("authorization", f"Bearer {settings.probe_service_token}"),)
                         if settings.probe_service_token else ())
        self._channel: grpc.aio.Channel | None = None
        self._stub: Any = None

    def _client(self) -> Any:
        if self._stub is None:
            self._channel = grpc.aio.insecure_channel(
                self.address, options=[("grpc.max_receive_message_length", 64 << 20)])
            self._stub = qpb_grpc.QueryServiceStub(self._channel)  # type: ignore[no-untyped-call]
        return self._stub

    async def _call(self, method: str, request: Any, what: str) -> Any:
        try:
            return await getattr(self._client(), method)(request, metadata=self.metadata,
                                                        timeout=self.timeout)
        except grpc.aio.AioRpcError as exc:
            raise _mapped(exc, what) from None

    async def open(self, tenant: str, candidate: Candidate | None,
                   as_of: datetime) -> qpb.ProbeSession:
        """A session with the candidate (or none) on the view frozen at ``as_of``."""
        cands = [] if candidate is None else [qpb.ProbeCandidate(
            id=candidate.id, title=candidate.draft.title, body=candidate.draft.body,
            anchors=list(candidate.draft.anchors))]
        reply: qpb.ProbeSession = await self._call(
            "OpenProbeSession", qpb.OpenProbeSessionRequest(
                tenant=tenant, candidates=cands, as_of=ts_to_proto(as_of)),
            "OpenProbeSession")
        return reply

    async def retrievals(self, tenant: str, session_id: str,
                         after: int) -> list[qpb.ProbeRetrieval]:
        """The session's probe retrievals numbered above ``after``."""
        reply: qpb.GetProbeSessionResponse = await self._call(
            "GetProbeSession", qpb.GetProbeSessionRequest(tenant=tenant, session_id=session_id,
                                                          after=after), "GetProbeSession")
        return list(reply.retrievals)

    async def close_session(self, tenant: str, session_id: str) -> None:
        """Close a session (best effort: it expires anyway)."""
        try:
            await self._call("CloseProbeSession", qpb.CloseProbeSessionRequest(
                tenant=tenant, session_id=session_id), "CloseProbeSession")
        except NuggetflowError as exc:
            log.warning("could not close a probe session", session=session_id, error=str(exc))

    async def close(self) -> None:
        """Close the channel."""
        if self._channel is not None:
            await self._channel.close()
            self._channel = self._stub = None


@dataclass
class _Open:
    key: tuple[object, ...]
    tenant: str
    session_id: str
    seen: int = 0


class ExternalHarness:
    """A :class:`~optimizer.harness.RagHarness` that probes the team's agent (see the
    module docstring). Its view is frozen at ``as_of`` (now by default), as the built-in
    harness's; :meth:`close` closes its session and channel."""

    def __init__(self, settings: Settings, *, as_of: datetime | None = None,
                 agent: AgentClient | None = None,
                 service: ProbeServiceClient | None = None) -> None:
        self.settings = settings
        self.as_of = as_of or utcnow()
        self.agent = agent or AgentClient(settings)
        self.service = service or ProbeServiceClient(settings)
        self._open: _Open | None = None

    async def close(self) -> None:
        """Close the open session and the channel."""
        if self._open is not None:
            await self.service.close_session(self._open.tenant, self._open.session_id)
            self._open = None
        await self.service.close()

    async def _session(self, tenant: str, candidate: Candidate | None,
                       fresh: bool = False) -> _Open:
        """The session holding this candidate revision (a new one when it changed)."""
        key: tuple[object, ...] = (tenant, None) if candidate is None else (
            tenant, candidate.id, candidate.draft)
        if self._open is not None and self._open.key == key and not fresh:
            return self._open
        if self._open is not None:
            await self.service.close_session(self._open.tenant, self._open.session_id)
            self._open = None
        session = await self.service.open(tenant, candidate, self.as_of)
        self._open = _Open(key, tenant, session.session_id)
        return self._open

    async def run(self, tenant: str, query: str, candidate: Candidate | None,
                  meter: Meter) -> RagTrace:
        """One probe through the agent (see the module docstring). A blank query
        retrieves nothing, as with the built-in harness."""
        if not query.strip():
            return RagTrace(query, [], {}, [], [], NO_ANSWER)
        for attempt in (1, 2):
            session = await self._session(tenant, candidate, fresh=attempt > 1)
            meter.check("agent")
            reply = await self.agent.ask({"query": query, "tenant": tenant,
                                          "session_id": session.session_id,
                                          "probe_id": uuid.uuid4().hex}, meter)
            meter.record("agent", reply.prompt_tokens, reply.completion_tokens)
            try:
                records = await self.service.retrievals(tenant, session.session_id,
                                                        session.seen)
            except NotFoundError:
                if attempt == 2:
                    raise
                # The session expired while the agent worked: probe again in a new one.
                log.warning("probe session expired during a probe; opening a new one",
                            tenant=tenant, session=session.session_id)
                continue
            if records:
                session.seen = max(r.number for r in records)
            return trace_of(query, candidate.id if candidate else None, reply, records,
                            session.session_id)
        raise AssertionError("unreachable")


def trace_of(query: str, candidate_id: str | None, reply: AgentReply,
             records: Sequence[qpb.ProbeRetrieval], session_id: str) -> RagTrace:
    """The built-in harness's trace from the agent's reply and the session's record of
    the Retrieve calls it made for this probe."""
    notes: list[str] = []
    if reply.request_ids:
        wanted = set(reply.request_ids)
        named = [r for r in records if r.request_id in wanted]
        if len(named) < len(wanted):
            notes.append("some request_ids the agent named were not made in its probe "
                         "session")
        records = named or records
    if not records:
        notes.append(f"the agent made no Retrieve call with probe session {session_id}: "
                     "nothing it used came from the frozen view with the candidate")
        main: qpb.ProbeRetrieval | None = None
    else:
        main = next((r for r in records if candidate_id is not None
                     and any(i.id == candidate_id and i.hit for i in r.items)), records[0])
    if main is not None and len(records) > 1:
        notes.append(f"the agent made {len(records)} Retrieve calls; the trace ranks the "
                     f"candidate in call #{main.number}")
    retrieved = [(i.id, i.fused) for i in main.items] if main is not None else []
    rerank = {i.id: i.relevance for i in main.items if i.reranked} if main else {}
    titles: dict[str, str] = {}
    texts: dict[str, str] = {}
    for r in records:
        for i in r.items:
            if i.title or i.text:
                titles.setdefault(i.id, i.title)
                texts.setdefault(i.id, i.text)
    if reply.cited is not None:
        cited = reply.cited
    else:
        reported = [r for r in records if r.citations_reported]
        cited = list(dict.fromkeys(c for r in reported for c in r.cited_ids))
        if not reported:
            notes.append("the agent reported no citations (no 'cited' in its reply and no "
                         "ReportCitations with the probe session): counted as not cited")
    return RagTrace(query, retrieved, rerank, list(reply.context), cited,
                    reply.answer or NO_ANSWER, titles, texts, "; ".join(notes))


ROOT = Path(__file__).resolve().parents[1]
AGENT_START_SECONDS = 120.0


@asynccontextmanager
async def probe_deployment(index: NuggetIndex, settings: Settings, tenants: Sequence[str],
                           agent_url: str = "") -> AsyncIterator[Settings]:
    """For ``nuggetflow eval --harness external``: a query service over ``index`` and
    an agent. Without ``agent_url``: the service on a free loopback port with a fresh
    token for ``tenants``, and the reference agent (examples/agent) started as a process
    with the generator the settings configure (the local one with the embedder, or the
    openai endpoint and the generator's model). With ``agent_url`` (the team's agent):
    the service at ``NUGGETFLOW_PROBE_SERVICE`` with ``NUGGETFLOW_PROBE_SERVICE_TOKEN``
    (none: open), where that agent must retrieve from. Yields the settings of the
    external harness that probes through them."""
    import os
    import secrets
    import subprocess
    import sys

    from query.auth import TokenAuth
    from query.retrieval import RetrieveRequest
    from query.service import create_server

    if agent_url:
        host, _, fixed = settings.probe_service.rpartition(":")
        token = settings.probe_service_token
        auth = TokenAuth({token: list(tenants)} if token else None)
        server, port = create_server(index, settings.replace(serve_host=host.strip("[]")),
                                     int(fixed), auth=auth)
        address = settings.probe_service
    else:
        token = secrets.token_hex(16)
        server, port = create_server(index, settings.replace(serve_host="127.0.0.1"), 0,
                                     auth=TokenAuth({token: list(tenants)}))
        address = f"127.0.0.1:{port}"
    await server.start()
    proc: subprocess.Popen[str] | None = None
    try:
        # Fit each tenant's gate now (a first gated query does it, and on a large corpus
        # that can outlast the agent's deadline for its first Retrieve).
        for tenant in tenants:
            await index.retriever.retrieve(RetrieveRequest(tenant, "warm up", k=1),
                                           count_suppressed=False)
        if not agent_url:
            if not (ROOT / "examples" / "agent" / "agent.py").is_file():
                raise ConfigError("the reference agent (examples/agent) is not here: give "
                                  "the agent's URL", field="agent_url")
            args = [sys.executable, "-m", "examples.agent.agent", "--port", "0",
                    "--query-service", f"127.0.0.1:{port}", "--token", token,
                    "--timeout", str(settings.llm_timeout_seconds)]
            if settings.llm == "openai":
                from optimizer.openai_backend import ChatClient

                args += ["--openai-base-url", settings.openai_base_url
                         or "https://api.openai.com/v1",
                         "--model", ChatClient(settings).model("generator")]
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(
                filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")])),
                "AGENT_OPENAI_API_KEY": settings.openai_api_key}
            proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                    text=True)
            assert proc.stdout is not None
            line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline),
                                          AGENT_START_SECONDS)
            if not line:
                raise BackendUnavailableError(
                    f"the reference agent exited ({proc.wait()}) before it served")
            agent_url = json.loads(line)["agent"]
            log.info("reference agent started", url=agent_url, pid=proc.pid)
        yield settings.replace(harness="external", agent_url=agent_url,
                               probe_service=address, probe_service_token=token)
    finally:
        if proc is not None:
            proc.terminate()
            try:
                await asyncio.to_thread(proc.wait, 30)
            except subprocess.TimeoutExpired:
                proc.kill()
        await server.stop(1)
