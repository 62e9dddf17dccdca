"""The external harness: INO probes the reference agent (examples/agent) through probe
sessions of a real query service on loopback, in-process; plus the failure contract
(timeouts, malformed replies, refusals, no citations) and the stream's handling of it.

The end-to-end run with the service, the agent and the worker as separate processes is
tests/integration/test_external_harness.py.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format

from examples.agent.agent import Agent, AgentError, LocalGenerator
from nuggetflow.errors import BackendUnavailableError
from nuggetflow.settings import Settings
from nuggetflow.v1 import query_service_pb2 as qpb
from optimizer.accounting import Meter
from optimizer.backends import make_harness
from optimizer.external import (
    AgentClient,
    AgentOutputError,
    AgentRefusedError,
    ExternalHarness,
    parse_reply,
)
from optimizer.harness import BuiltinHarness, make_candidate
from optimizer.ino import to_probe
from optimizer.local import local_roles
from optimizer.local.actionability import LocalActionability
from optimizer.pipeline import Optimizer
from optimizer.types import NuggetDraft
from query.auth import TokenAuth
from query.backends.sqlite import SQLiteStore
from query.corpus import Document, passages_of
from query.embeddings import MiniLMEmbedder
from query.index import NuggetIndex
from query.metrics import Metrics
from query.service import QueryServer, create_server
from stream.engine import InlineEngine
from stream.events import parse_event
from stream.records import Correction, DeadLetter, Record
from stream.steps import Steps
from stream.synthetic import PORTAL, event
from stream.topics import TopicKind
from tests.unit.optimizer.test_worked_example import EVENT, PROBE

AS_OF = datetime(2025, 6, 1, tzinfo=UTC)
T0 = datetime(2025, 1, 1, tzinfo=UTC)
TOKEN = "worker-token-0123456789abcdef"


@dataclass
class FakeAgent:
    """The reference agent behind an HTTP server whose replies a test can script:
    ``("sleep", s)`` answers late, ``("raw", text)`` sends text, ``("status", code)`` an
    error, ``("silent", None)`` answers without reporting citations at all,
    ``("report_only", None)`` reports them through ReportCitations only."""

    agent: Agent
    url: str = ""
    script: list[tuple[str, Any]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    in_flight: int = 0
    most_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reply(self, body: dict[str, Any]) -> tuple[int, bytes]:
        with self.lock:
            self.requests.append(body)
            action: tuple[str, Any] = self.script.pop(0) if self.script else ("answer", None)
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            kind, arg = action
            if kind == "sleep":
                time.sleep(arg)
                kind = "answer"
            if kind == "raw":
                return 200, str(arg).encode()
            if kind == "status":
                return int(arg), b'{"error": "scripted"}'
            if kind == "silent":
                reply = self.agent.stub.Retrieve(qpb.RetrieveRequest(
                    tenant=body["tenant"], query=body["query"], k=3, include_documents=True,
                    probe_session=body["session_id"]), metadata=self.agent.metadata)
                ids = [h.id for h in reply.hits]
                return 200, json.dumps({"answer": "Something.", "retrieved": ids,
                                        "context": ids}).encode()
            try:
                out = self.agent.answer(body)
            except AgentError as exc:
                return exc.status, json.dumps({"error": str(exc)}).encode()
            if kind == "report_only":
                out.pop("cited")
            return 200, json.dumps(out).encode()
        finally:
            with self.lock:
                self.in_flight -= 1


@contextmanager
def serve_agent(agent: Agent) -> Iterator[FakeAgent]:
    state = FakeAgent(agent)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            status, raw = state.reply(body)
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}/answer"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class World:
    index: NuggetIndex
    server: QueryServer
    metrics: Metrics
    fake: FakeAgent
    settings: Settings  # the harness's: external, pointing at the service and the agent


@pytest.fixture
async def world(tmp_path: Path, embedder: MiniLMEmbedder) -> AsyncIterator[World]:
    base = Settings.from_env({})
    index = NuggetIndex(SQLiteStore(tmp_path / "index.db"), embedder, base)
    await index.start()
    for doc_id, title, text in PORTAL:
        await index.ingest_passages(passages_of(Document(doc_id, "acme", title, text,
                                                         valid_from=T0), 800))
    metrics = Metrics.create()
    server, port = create_server(index, base, 0, metrics=metrics.query,
                                 auth=TokenAuth({TOKEN: ["acme"]}))
    await server.start()
    agent = Agent(f"127.0.0.1:{port}", LocalGenerator(embedder), token=TOKEN, k=3)
    try:
        with serve_agent(agent) as fake:
            settings = base.replace(harness="external", agent_url=fake.url,
                                    probe_service=f"127.0.0.1:{port}",
                                    probe_service_token=TOKEN, agent_timeout_seconds=5.0,
                                    agent_max_attempts=2)
            yield World(index, server, metrics, fake, settings)
    finally:
        agent.close()
        await server.stop(0)
        await index.stop()


def no_sleep(_: float) -> None:
    pass


def harness_of(world: World, **changes: Any) -> ExternalHarness:
    settings = world.settings.replace(**changes) if changes else world.settings
    return ExternalHarness(settings, as_of=AS_OF, agent=AgentClient(settings, sleep=no_sleep))


def production_series(world: World) -> dict[str, float]:
    reg = world.metrics.registry
    out = {}
    for name in ("retrieve_requests_total", "citation_reports_total"):
        out[name] = reg.get_sample_value(f"nuggetflow_query_{name}", {"tenant": "acme"}) or 0
    for kind in ("nugget", "document"):
        for name in ("retrieved_items_total", "cited_items_total"):
            out[f"{name}:{kind}"] = reg.get_sample_value(
                f"nuggetflow_query_{name}", {"tenant": "acme", "type": kind}) or 0
    return out


def probes_of(result: dict[str, Any]) -> list[list[dict[str, Any]]]:
    return [[{k: p[k] for k in ("query", "retrieved", "reached_generator", "cited", "rank",
                                "rerank_score", "competitors", "answer", "held_out")}
             for p in h["probes"]] for h in result["history"]]


@pytest.mark.parametrize("semantic", [False, True], ids=["lexical", "semantic"])
async def test_the_worked_example_through_the_reference_agent_as_built_in(
        world: World, embedder: MiniLMEmbedder, semantic: bool) -> None:
    """INO through the agent takes the same path as through the built-in harness with the
    same generator: same probes, ranks, scores, answers, revisions and final nugget; and
    nothing of it shows in the production metrics or the index. Lexical: the local roles
    without an embedder, as in test_worked_example (INO needs 2-3 rounds); semantic: with
    one, as the worker runs them."""
    roles = local_roles(embedder if semantic else None)
    world.fake.agent.generator = LocalGenerator(embedder, semantic=semantic)
    builtin = BuiltinHarness(world.index.store, embedder, roles.generator, world.settings,
                             as_of=AS_OF)
    try:
        ref = await Optimizer(world.index.store, embedder, roles, world.settings,
                              harness=builtin).process(EVENT, extra_probes=(PROBE,))
    finally:
        await builtin.close()
    external = harness_of(world)
    try:
        out = await Optimizer(world.index.store, embedder, roles, world.settings,
                              harness=external).process(EVENT, extra_probes=(PROBE,))
    finally:
        await external.close()
    assert ref.result is not None and out.result is not None
    assert ref.result.passed
    if not semantic:
        assert 2 <= ref.result.iterations <= 3  # the worked example's revision
    assert out.result.passed and out.result.iterations == ref.result.iterations
    assert out.result.draft == ref.result.draft
    assert probes_of(out.result.to_dict()) == probes_of(ref.result.to_dict())
    assert all(p.note == "" for h in out.result.history for p in h.probes)
    n_probes = sum(len(h.probes) for h in out.result.history)
    assert len(world.fake.requests) == n_probes
    assert out.accounting["calls_by_role"]["agent"] == n_probes
    assert all(r["session_id"].startswith("ps-") and r["tenant"] == "acme"
               for r in world.fake.requests)
    # One session per candidate revision, all closed; no trace in production.
    assert len({r["session_id"] for r in world.fake.requests}) == out.result.iterations
    assert len(world.server.servicer.probes) == 0
    assert set(production_series(world).values()) == {0}
    assert len(world.server.servicer.ledger) == 0
    stats = await world.index.store.stats()
    assert stats["nuggets"] == 0, "no candidate was written"


def draft() -> NuggetDraft:
    return NuggetDraft("Only the Workspace Owner resets others' passwords (portal v8.2)",
                       EVENT.comment.split(";")[0].removeprefix("No, that's wrong. ") + ".",
                       ("my team lead cannot reset a teammate's password",))


async def probe(world: World, harness: ExternalHarness, embedder: MiniLMEmbedder,
                query: str = PROBE) -> Any:
    cand = make_candidate(embedder, "candidate:fb-1001", draft())
    trace = await harness.run("acme", query, cand, Meter())
    return trace, to_probe(trace, cand.id)


async def test_an_agent_that_never_reports_citations(world: World,
                                                     embedder: MiniLMEmbedder) -> None:
    harness = harness_of(world)
    try:
        world.fake.script = [("silent", None)]
        trace, p = await probe(world, harness, embedder)
        assert trace.reached and "candidate:fb-1001" in trace.reached
        assert p.reached_generator and not p.cited and not p.passed
        assert "reported no citations" in p.note and "counted as not cited" in p.note
        # Citations reported through ReportCitations only are read from the session.
        world.fake.script = [("report_only", None)]
        trace, p = await probe(world, harness, embedder)
        assert trace.cited and p.note == ""
        assert p.cited == ("candidate:fb-1001" in trace.cited)
    finally:
        await harness.close()


async def test_an_agent_that_times_out_is_retried_then_retriable(
        world: World, embedder: MiniLMEmbedder) -> None:
    harness = harness_of(world, agent_timeout_seconds=0.3, agent_max_attempts=2)
    try:
        world.fake.script = [("sleep", 1.0), ("sleep", 1.0)]
        with pytest.raises(BackendUnavailableError) as err:
            await probe(world, harness, embedder)
        assert err.value.retriable and "failed 2 times: timed out after 0.3 s" in str(err.value)
        assert len(world.fake.requests) == 2
    finally:
        await harness.close()
    harness = harness_of(world)
    try:
        world.fake.script = [("status", 503)]  # one transient failure, then an answer
        meter = Meter()
        trace = await harness.run("acme", PROBE, make_candidate(
            embedder, "candidate:fb-1001", draft()), meter)
        assert meter.retries == 1 and trace.answer and len(world.fake.requests) == 4
    finally:
        await harness.close()


@pytest.mark.parametrize("raw, why", [
    ("this is not JSON", "not JSON"),
    ('["a list"]', "not a JSON object"),
    ('{"answer": "x", "retrieved": ["a"]}', "'context' is missing"),
    ('{"answer": 3, "retrieved": [], "context": []}', "'answer' must be a string"),
    ('{"answer": "x", "retrieved": [], "context": [], "cited": "a"}', "'cited' must be"),
])
async def test_malformed_replies_are_retried_then_an_output_error(
        world: World, embedder: MiniLMEmbedder, raw: str, why: str) -> None:
    harness = harness_of(world)
    try:
        world.fake.script = [("raw", raw), ("raw", raw)]
        with pytest.raises(AgentOutputError) as err:
            await probe(world, harness, embedder)
        assert not err.value.retriable and err.value.field == "agent"
        assert why in str(err.value) and "2 times" in str(err.value)
        assert len(world.fake.requests) == 2
    finally:
        await harness.close()


async def test_a_refusal_is_not_retried(world: World, embedder: MiniLMEmbedder) -> None:
    harness = harness_of(world)
    try:
        world.fake.script = [("status", 400)]
        with pytest.raises(AgentRefusedError, match="HTTP 400"):
            await probe(world, harness, embedder)
        assert len(world.fake.requests) == 1
    finally:
        await harness.close()


async def test_agent_requests_in_flight_are_limited(world: World) -> None:
    settings = world.settings.replace(agent_concurrency=1,
                                      agent_url=world.fake.url + "?limit-test")
    client = AgentClient(settings)
    world.fake.script = [("sleep", 0.2)] * 3
    body = {"query": "q", "tenant": "acme", "session_id": ""}
    await asyncio.gather(*(client.ask(body) for _ in range(3)))
    assert world.fake.most_in_flight == 1


def test_reply_contract() -> None:
    r = parse_reply(b'{"answer": "a", "retrieved": ["x", "x", "y"], "context": ["x"], '
                    b'"cited": null, "usage": {"prompt_tokens": 5}, "extra": 1}')
    assert r.retrieved == ["x", "y"] and r.cited is None and r.prompt_tokens == 5
    assert parse_reply(b'{"answer": "", "retrieved": [], "context": [], "cited": []}'
                       ).cited == []


def test_make_harness_picks_by_setting(embedder: MiniLMEmbedder) -> None:
    s = Settings.from_env({})
    store = SQLiteStore(":memory:")
    assert isinstance(make_harness(s, store, embedder, local_roles().generator),
                      BuiltinHarness)
    ext = s.replace(harness="external", agent_url="http://127.0.0.1:9/answer")
    assert isinstance(make_harness(ext, store, embedder, local_roles().generator),
                      ExternalHarness)


# --- the stream's contract: the event is retried or dead-lettered, never lost -----------


def correction_record(offset: int = 0) -> Record:
    """The worked example's event as the actionability step passes it on."""
    msg = parse_event(json.dumps(event(EVENT.event_id, "acme", EVENT.query, EVENT.answer,
                                       EVENT.comment)))
    extraction = LocalActionability().extract(EVENT, Meter())
    return Record(Correction(msg, extraction).to_bytes(), b"acme", "feedback.corrections", 0,
                  offset)


def steps_of(world: World, embedder: MiniLMEmbedder, sleeps: list[float],
             **changes: Any) -> Steps:
    settings = world.settings.replace(stream_retry_initial_seconds=0.01,
                                      stream_retry_max_seconds=0.05,
                                      agent_timeout_seconds=2.0, **changes)
    engine = InlineEngine(world.index.store, embedder, local_roles(embedder), settings)

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    return Steps(world.index, engine, settings, sleep=sleep)


async def test_a_timed_out_event_waits_and_is_optimized_later(
        world: World, embedder: MiniLMEmbedder) -> None:
    sleeps: list[float] = []
    steps = steps_of(world, embedder, sleeps)
    world.fake.script = [("sleep", 3.0), ("sleep", 3.0)]  # the first probe, both attempts
    result = await steps.optimize(correction_record())
    assert result.outcome == "candidate" and result.nugget_id
    assert len(sleeps) == 1, "the stream retried the event once, as for an LLM outage"
    assert await world.index.store.find_by_event("acme", EVENT.event_id)


async def test_a_malformed_agent_reply_dead_letters_the_event_with_its_reason(
        world: World, embedder: MiniLMEmbedder) -> None:
    sleeps: list[float] = []
    steps = steps_of(world, embedder, sleeps)
    world.fake.script = [("raw", "<html>oops</html>")] * 2
    record = correction_record(offset=7)
    result = await steps.optimize(record)
    assert result.outcome == "dead_letter" and result.event_id == EVENT.event_id
    emit = result.emits[0]
    assert emit.kind is TopicKind.DEAD_LETTER
    dl = DeadLetter.from_headers(emit.value, emit.headers)
    assert dl.reason == "agent_output" and dl.field == "agent" and dl.stage == "optimize"
    assert "broke the reply contract 2 times: not JSON" in dl.error
    assert dl.value == record.value, "the original bytes are kept"
    assert sleeps == [] and not await world.index.store.find_by_event("acme",
                                                                      EVENT.event_id)
    assert len(world.server.servicer.probes) == 0, "its session was closed"


# --- nuggetflow eval --harness external ----------------------------------------------


@pytest.mark.slow
async def test_eval_through_the_reference_agent_agrees_with_the_built_in_harness(
        tmp_path: Path) -> None:
    """run_benchmark with the external harness (the reference agent started as a process
    on a query service over the benchmark's index) gives the built-in harness's figures
    on a small benchmark: the worked example and a non-actionable case."""
    from app.wiring import make_roles_for, scratch_index
    from optimizer.evaluation import Benchmark, run_benchmark
    from stream.synthetic import portal_corpus

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in portal_corpus("acme")))
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps(c) + "\n" for c in [
        {"id": "w1", "tenant": "acme", "query": EVENT.query, "answer": EVENT.answer,
         "feedback": {"rating": "down", "comment": EVENT.comment}, "actionable": True,
         "heldout": [PROBE, "who is allowed to reset a colleague's password in v8.2"],
         "facts": ["only the Workspace Owner role can reset another user's password"]},
        {"id": "n1", "tenant": "acme", "query": "how do I export a report",
         "answer": "Use Export.", "feedback": {"rating": "up", "comment": "thanks!"},
         "actionable": False}]))
    traffic = tmp_path / "traffic.txt"
    traffic.write_text("how do I change my wallpaper\nreset my own password\n")
    bench = Benchmark.from_cases(cases, corpus, traffic)
    figures = {}
    for harness in ("builtin", "external"):
        settings = Settings.from_env({}, harness=harness)
        figures[harness] = await run_benchmark(
            bench, settings, workdir=tmp_path / harness, runs=1, variants=("A", "E"),
            open_index=partial(scratch_index, settings),
            make_roles=partial(make_roles_for, settings))
    assert figures["external"]["harness"] == "external"
    for key in ("eval_seconds", "seconds_per_nugget", "llm_calls_per_nugget",
                "tokens_per_nugget", "harness", "tokens_estimated"):
        for f in figures.values():
            f.pop(key, None)
    assert figures["external"] == figures["builtin"]
    assert figures["builtin"]["variants"]["E"]["heldout_queries"] == 2


# --- the reference agent's own HTTP app, for users -------------------------------------


async def test_the_reference_agent_answers_users_into_the_production_series(
        world: World) -> None:
    import urllib.error
    import urllib.request

    from examples.agent.agent import feedback_event, make_server

    server = make_server(world.fake.agent, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"

    def post(path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        req = urllib.request.Request(base + path, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    try:
        status, reply = await asyncio.to_thread(post, "/answer", {
            "tenant": "acme", "query": "how do I reset my own password"})
        assert status == 200, reply
        assert reply["answer"] and reply["context"] == reply["retrieved"] != []
        assert set(reply["cited"]) <= set(reply["retrieved"]) and reply["cited"]
        assert reply["usage"]["prompt_tokens"] > 0
        series = production_series(world)
        assert series["retrieve_requests_total"] == 1
        assert series["citation_reports_total"] == 1
        assert series["cited_items_total:document"] + series["cited_items_total:nugget"] \
            == len(reply["cited"])
        status, reply = await asyncio.to_thread(post, "/answer", {"query": "no tenant"})
        assert status == 400
        status, reply = await asyncio.to_thread(post, "/feedback", {
            "tenant": "acme", "query": "q", "comment": "wrong"})
        assert status == 503 and "--kafka" in reply["error"]
    finally:
        server.shutdown()
        server.server_close()
    event_msg = feedback_event({"tenant": "acme", "query": "how do I reset",
                                "answer": "Ask IT.", "comment": "Wrong: use Forgot password.",
                                "rating": "down", "cited": ["kb-1#0"]})
    parsed = parse_event(json_format.MessageToJson(event_msg))  # what the worker reads
    assert parsed.event_id.startswith("agent-") and parsed.feedback.rating == "down"
    assert list(parsed.cited_documents) == ["kb-1#0"] and parsed.HasField("timestamp")
