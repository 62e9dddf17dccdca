"""A reference RAG agent on nuggetflow: a small, readable app a team can copy.

For every question (``POST /answer`` with ``{"tenant", "query"}``) it

1. retrieves through the nuggetflow query service (gRPC ``Retrieve``, with the tenant's
   bearer token);
2. builds the prompt from the question and the response's context block (established
   facts, disputed claims, passages, each line tagged with its id);
3. generates with the ``openai`` client against any OpenAI-compatible endpoint
   (``--openai-base-url``), or, when none is configured, with nuggetflow's local
   extractive generator (the one the built-in harness uses);
4. reports which retrieved items the answer cited (``ReportCitations``: the service's
   citation rate), and returns::

       {"answer": "...", "retrieved": [ids], "context": [ids], "cited": [ids],
        "request_ids": ["..."], "usage": {"prompt_tokens": n, "completion_tokens": n}}

It also takes user feedback (``POST /feedback`` with ``{"tenant", "query", "answer",
"comment", "rating"}``) and publishes it to Kafka's ``feedback.events`` (``--kafka``),
where the nuggetflow worker turns corrections into nuggets.

INO probes (``NUGGETFLOW_HARNESS=external``): nuggetflow POSTs ``{"query", "tenant",
"session_id", "probe_id"}`` to ``/answer``. The agent passes ``session_id`` as
``probe_session`` on Retrieve and ReportCitations and otherwise answers exactly as it
would answer a user: same prompt, same model, same re-ranking. It must not cache an
answer across session ids (or reuse a probe answer for a user), log probes as user
traffic, publish feedback for them, or ever pass a session id on a call made for a user.

Run it (the query service first: ``nuggetflow serve``)::

    python -m examples.agent.agent --port 8700 --query-service 127.0.0.1:50051 \\
        [--token TOKEN] [--openai-base-url URL --model NAME] [--kafka HOST:PORT]

Every option also reads an ``AGENT_*`` environment variable (``--help`` lists them).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import grpc
from google.protobuf import json_format

from nuggetflow.v1 import feedback_pb2
from nuggetflow.v1 import query_service_pb2 as qpb
from nuggetflow.v1 import query_service_pb2_grpc as qpb_grpc

SYSTEM_PROMPT = (
    "You are a support assistant. Answer the question using only the context below, "
    "briefly. Cite every item you use by its id in square brackets, e.g. [doc-1#0]. "
    'Reply with JSON only: {"answer": text, "cited": [ids]}.')
NO_ANSWER = "I could not find this."
MAX_BODY_BYTES = 1 << 20


class AgentError(Exception):
    """A request the agent cannot answer; ``status`` is the HTTP status to send."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


# --- generation ------------------------------------------------------------------------


@dataclass(frozen=True)
class Generated:
    """An answer and the ids it cites."""

    text: str
    cited: list[str]
    prompt_tokens: int = 0
    completion_tokens: int = 0


class OpenAIGenerator:
    """Chat completions at any OpenAI-compatible endpoint."""

    def __init__(self, base_url: str, api_key: str, model: str, timeout: float) -> None:
        import openai

        self.client = openai.OpenAI(base_url=base_url, api_key=api_key or "unused",
                                    timeout=timeout, max_retries=2)
        self.model = model

    def generate(self, query: str, reply: qpb.RetrieveResponse) -> Generated:
        known = [h.id for h in reply.hits]
        completion = self.client.chat.completions.create(
            model=self.model, temperature=0, response_format={"type": "json_object"},
            messages=[{"role": "system", "content": SYSTEM_PROMPT},
                      {"role": "user",
                       "content": f"Question: {query}\n\nContext:\n{reply.context_block}"}])
        content = completion.choices[0].message.content or ""
        try:
            data = json.loads(content)
            text, cited = str(data["answer"]), [str(c) for c in data.get("cited") or []]
        except (ValueError, KeyError, TypeError, AttributeError):
            # Not the JSON asked for: keep the text, read its [id] citations.
            text, cited = content, re.findall(r"\[([^\[\]]+)\]", content)
        usage = completion.usage
        return Generated(text, [c for c in dict.fromkeys(cited) if c in known],
                         usage.prompt_tokens if usage else 0,
                         usage.completion_tokens if usage else 0)


class LocalGenerator:
    """nuggetflow's deterministic extractive generator (no model server needed)."""

    def __init__(self, embedder: Any = None, *, semantic: bool = True) -> None:
        from nuggetflow.settings import Settings
        from optimizer.local.generator import LocalGenerator as Extractive
        from query.embeddings import make_embedder

        # It reads sentences with the embedder of NUGGETFLOW_EMBEDDER, as nuggetflow's local
        # backend does; semantic=False: by words alone.
        if semantic and embedder is None:
            embedder = make_embedder(Settings.from_env())
        self.generator = Extractive(embedder if semantic else None)
        self.lock = threading.Lock()  # its vector cache is not thread-safe

    def generate(self, query: str, reply: qpb.RetrieveResponse) -> Generated:
        from optimizer.accounting import Meter
        from optimizer.types import ContextPassage

        passages = [ContextPassage(h.id, h.title, h.text, h.type == qpb.Hit.NUGGET,
                                   h.scores.relevance if reply.gated else h.scores.fused)
                    for h in reply.hits]
        meter = Meter()  # the extractive generator estimates its "tokens" from words
        with self.lock:
            answer = self.generator.answer(query, passages, meter)
        return Generated(answer.text, list(answer.cited), meter.prompt_tokens,
                         meter.completion_tokens)


# --- the agent -------------------------------------------------------------------------


class Agent:
    """Retrieve, generate, report citations (see the module docstring)."""

    def __init__(self, query_service: str, generator: OpenAIGenerator | LocalGenerator, *,
                 token: str = "", k: int = 3, timeout: float = 30.0,
                 feedback: FeedbackPublisher | None = None) -> None:
        self.channel = grpc.insecure_channel(query_service)
        self.stub = qpb_grpc.QueryServiceStub(self.channel)  # type: ignore[no-untyped-call]
        self.metadata = (("authorization", f"Bearer {token}"),) if token else ()
        self.generator = generator
        self.k = k
        self.timeout = timeout
        self.feedback = feedback

    def close(self) -> None:
        self.channel.close()
        if self.feedback is not None:
            self.feedback.close()

    def _rpc(self, method: str, request: Any) -> Any:
        try:
            return getattr(self.stub, method)(request, metadata=self.metadata,
                                              timeout=self.timeout)
        except grpc.RpcError as exc:
            code = exc.code()
            status = (503 if code in (grpc.StatusCode.UNAVAILABLE,
                                      grpc.StatusCode.DEADLINE_EXCEEDED) else 400)
            raise AgentError(status, f"{method}: {code.name}: {exc.details()}") from None

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        """One question (a user's, or an INO probe's when it carries a session id)."""
        tenant, query = body.get("tenant"), body.get("query")
        session = body.get("session_id") or ""
        if not isinstance(tenant, str) or not tenant or not isinstance(query, str):
            raise AgentError(400, "tenant and query must be strings")
        if not isinstance(session, str):
            raise AgentError(400, "session_id must be a string")
        reply: qpb.RetrieveResponse = self._rpc("Retrieve", qpb.RetrieveRequest(
            tenant=tenant, query=query, k=self.k, include_documents=True,
            probe_session=session))
        hits = [h.id for h in reply.hits]
        generated = (self.generator.generate(query, reply) if hits
                     else Generated(NO_ANSWER, []))
        if generated.cited:
            self._rpc("ReportCitations", qpb.ReportCitationsRequest(
                tenant=tenant, request_id=reply.request_id, cited_ids=generated.cited,
                probe_session=session))
        # Every hit went into the prompt: "context" is what reached the generator.
        return {"answer": generated.text, "retrieved": hits, "context": hits,
                "cited": generated.cited, "request_ids": [reply.request_id],
                "usage": {"prompt_tokens": generated.prompt_tokens,
                          "completion_tokens": generated.completion_tokens}}

    def publish_feedback(self, body: dict[str, Any]) -> dict[str, Any]:
        """A user's feedback on an answer, to Kafka's feedback.events."""
        if self.feedback is None:
            raise AgentError(503, "feedback publishing is not configured (--kafka)")
        if body.get("session_id"):
            raise AgentError(400, "probe answers get no feedback")
        event = feedback_event(body)
        self.feedback.publish(event)
        return {"event_id": event.event_id}


def feedback_event(body: dict[str, Any]) -> feedback_pb2.FeedbackEvent:
    """The FeedbackEvent of a feedback request (event id and time filled in when absent)."""
    try:
        event = feedback_pb2.FeedbackEvent(
            event_id=str(body.get("event_id") or f"agent-{uuid.uuid4().hex}"),
            tenant=str(body["tenant"]), query=str(body["query"]),
            answer=str(body.get("answer", "")),
            feedback=feedback_pb2.Feedback(rating=str(body.get("rating", "")),
                                           comment=str(body.get("comment", ""))),
            cited_documents=[str(c) for c in body.get("cited") or []],
            user=str(body.get("user", "")), agent="reference-agent")
    except KeyError as exc:
        raise AgentError(400, f"{exc.args[0]} is missing") from None
    event.timestamp.FromDatetime(datetime.now(UTC))
    return event


class FeedbackPublisher:
    """Publishes feedback events (canonical JSON, keyed by tenant) with aiokafka, on a
    background event loop of its own."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        from aiokafka import AIOKafkaProducer

        self.topic = topic
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

        async def start() -> Any:
            producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all",
                                        enable_idempotence=True)
            await producer.start()
            return producer

        self.producer = self._run(start())

    def _run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=30)

    def publish(self, event: feedback_pb2.FeedbackEvent) -> None:
        value = json_format.MessageToJson(event, indent=None).encode()
        self._run(self.producer.send_and_wait(self.topic, value, key=event.tenant.encode()))

    def close(self) -> None:
        self._run(self.producer.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)


# --- HTTP ------------------------------------------------------------------------------


def make_server(agent: Agent, host: str, port: int) -> ThreadingHTTPServer:
    """An HTTP server (not started) for POST /answer, POST /feedback and GET /healthz."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/healthz":
                self._send(200, {"status": "ok"})
            else:
                self._send(404, {"error": "not found"})

        def do_POST(self) -> None:
            routes = {"/answer": agent.answer, "/feedback": agent.publish_feedback}
            route = routes.get(self.path)
            if route is None:
                self._send(404, {"error": "not found"})
                return
            try:
                length = int(self.headers.get("Content-Length") or 0)
                if length > MAX_BODY_BYTES:
                    raise AgentError(413, "request too large")
                body = json.loads(self.rfile.read(length) or b"{}")
                if not isinstance(body, dict):
                    raise AgentError(400, "the body must be a JSON object")
                self._send(200, route(body))
            except AgentError as exc:
                self._send(exc.status, {"error": str(exc)})
            except ValueError as exc:
                self._send(400, {"error": f"not JSON: {exc}"})
            except Exception as exc:  # the model endpoint failed, ...: the caller retries
                self._send(502, {"error": f"{type(exc).__name__}: {exc}"})

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            raw = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the caller gave up

        def log_message(self, format: str, *args: Any) -> None:
            pass  # no per-request lines (and never the questions) in the log

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server


def build_parser() -> argparse.ArgumentParser:
    env = os.environ.get
    p = argparse.ArgumentParser(prog="python -m examples.agent.agent",
                                description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--host", default=env("AGENT_HOST", "127.0.0.1"), help="AGENT_HOST")
    p.add_argument("--port", type=int, default=int(env("AGENT_PORT", "8700")),
                   help="AGENT_PORT (0: any free port, printed on start)")
    p.add_argument("--query-service", default=env("AGENT_QUERY_SERVICE", "127.0.0.1:50051"),
                   help="AGENT_QUERY_SERVICE: host:port of nuggetflow serve")
    p.add_argument("--token", default=env("AGENT_TOKEN", ""),
                   help="AGENT_TOKEN: bearer token of the query service (valid for the "
                        "tenants this agent answers)")
    p.add_argument("--k", type=int, default=int(env("AGENT_K", "3")),
                   help="AGENT_K: hits per question")
    p.add_argument("--openai-base-url", default=env("AGENT_OPENAI_BASE_URL", ""),
                   help="AGENT_OPENAI_BASE_URL (empty: the local extractive generator)")
    p.add_argument("--lexical", action="store_true",
                   default=env("AGENT_LEXICAL", "") not in ("", "0", "false"),
                   help="AGENT_LEXICAL: the local generator reads by words alone (no "
                        "embedder), as nuggetflow's local roles do without one")
    p.add_argument("--openai-api-key", default=env("AGENT_OPENAI_API_KEY", ""),
                   help="AGENT_OPENAI_API_KEY")
    p.add_argument("--model", default=env("AGENT_MODEL", "gpt-4o-mini"), help="AGENT_MODEL")
    p.add_argument("--timeout", type=float, default=float(env("AGENT_TIMEOUT", "30")),
                   help="AGENT_TIMEOUT: seconds per gRPC and model call")
    p.add_argument("--kafka", default=env("AGENT_KAFKA", ""),
                   help="AGENT_KAFKA: bootstrap host:port for POST /feedback (empty: off)")
    p.add_argument("--feedback-topic", default=env("AGENT_FEEDBACK_TOPIC", "feedback.events"),
                   help="AGENT_FEEDBACK_TOPIC (with the deployment's NUGGETFLOW_STREAM_PREFIX)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    generator: OpenAIGenerator | LocalGenerator = (
        OpenAIGenerator(args.openai_base_url, args.openai_api_key, args.model, args.timeout)
        if args.openai_base_url else LocalGenerator(semantic=not args.lexical))
    feedback = FeedbackPublisher(args.kafka, args.feedback_topic) if args.kafka else None
    agent = Agent(args.query_service, generator, token=args.token, k=args.k,
                  timeout=args.timeout, feedback=feedback)
    server = make_server(agent, args.host, args.port)
    print(json.dumps({"agent": f"http://{args.host}:{server.server_address[1]}/answer",
                      "generator": "openai" if args.openai_base_url else "local"}), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        agent.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
