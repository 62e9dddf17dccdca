"""The HTTP rerank backend against a small rerank server run in the test (loopback only):
scores in the caller's order, batching, retries on 503 and timeouts, malformed replies,
refusals, the TEI shape, and the factory's URL schemes."""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from nuggetflow.errors import BackendUnavailableError, ConfigError
from nuggetflow.settings import Settings
from query.model import ItemType
from query.rerank import Reranker, RerankItem
from query.rerankers import HttpReranker, RerankerResponseError, make_reranker_backend
from query.rerankers.http import document_text


@dataclass
class FakeRerankServer:
    """Each request takes the next scripted action, if any: ``("json", obj)``,
    ``("raw", text)``, ``("status", code, headers)``, ``("sleep", seconds)`` (then the
    default reply). With no script left it scores each document by the share of the
    query's words it contains and lists the results best first."""

    url: str = ""
    script: list[tuple[Any, ...]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def overlap_reply(body: dict[str, Any]) -> Any:
    q = words(body["query"])
    docs = body.get("documents", body.get("texts", []))
    scores = [len(q & words(d)) / max(len(q), 1) for d in docs]
    order = sorted(range(len(docs)), key=lambda i: -scores[i])
    if "texts" in body:  # text-embeddings-inference
        return [{"index": i, "score": scores[i]} for i in order]
    return {"id": "r-1", "results": [{"index": i, "relevance_score": scores[i]} for i in order],
            "meta": {"billed_units": {"search_units": 1}}}


@contextmanager
def rerank_server() -> Iterator[FakeRerankServer]:
    state = FakeRerankServer()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length))
            with state.lock:
                state.requests.append(body)
                state.headers.append({k.lower(): v for k, v in self.headers.items()})
                state.paths.append(self.path)
                action = state.script.pop(0) if state.script else None
            if action and action[0] == "sleep":
                time.sleep(action[1])
                action = None
            if action and action[0] == "status":
                payload = b'{"error": "scripted"}'
                self.send_response(action[1])
                for k, v in (action[2] if len(action) > 2 else {}).items():
                    self.send_header(k, v)
            else:
                if action and action[0] == "raw":
                    payload = action[1].encode()
                else:
                    reply = action[1] if action else overlap_reply(body)
                    payload = json.dumps(reply).encode()
                self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(payload)  # the client may have given up (a timeout test)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def server() -> Iterator[FakeRerankServer]:
    with rerank_server() as s:
        yield s


def item(i: int, title: str, text: str) -> RerankItem:
    return RerankItem(id=f"n{i}", type=ItemType.NUGGET, title=title, text=text)


QUERY = "who can reset another user's password in portal v8.2"
ITEMS = [
    item(0, "Office hours", "The support desk is open from 9 to 5 on weekdays."),
    item(1, "Password reset role", "In portal v8.2 only the Workspace Owner can reset another "
         "user's password."),
    item(2, "Export formats", "Reports export to CSV and PDF."),
    item(3, "Analyst role", "An analyst can view another user's profile in the portal."),
]


def no_sleep_log() -> tuple[list[float], Any]:
    delays: list[float] = []

    async def sleep(seconds: float) -> None:
        delays.append(seconds)

    return delays, sleep


def reranker(server: FakeRerankServer, path: str = "/v1/rerank", **kw: Any) -> HttpReranker:
    kw.setdefault("timeout", 2.0)
    return HttpReranker(server.url + path, **kw)


async def test_scores_follow_the_callers_order_and_rank_the_answer_first(
        server: FakeRerankServer) -> None:
    r = reranker(server, model="rerank-english-v3.0", api_key="sk-test")
    assert isinstance(r, Reranker)
    scores = await r.scores(QUERY, ITEMS)
    await r.aclose()
    assert scores.dtype == np.float64 and scores.shape == (4,)
    expected = [overlap_reply({"query": QUERY, "documents": [document_text(i, 4000)]})
                ["results"][0]["relevance_score"] for i in ITEMS]
    assert scores.tolist() == pytest.approx(expected)
    assert int(np.argmax(scores)) == 1 and scores[1] > scores[3] > scores[2]
    body = server.requests[0]
    assert body == {"model": "rerank-english-v3.0", "query": QUERY,
                    "documents": [document_text(i, 4000) for i in ITEMS], "top_n": 4}
    assert body["documents"][1].startswith("Password reset role\nIn portal v8.2")
    assert server.headers[0]["authorization"] == "Bearer sk-test"
    assert server.paths == ["/v1/rerank"]


async def test_long_lists_are_split_into_bounded_requests(server: FakeRerankServer) -> None:
    items = [item(i, f"t{i}", f"portal reset {'password ' * (i % 3)}doc {i}") for i in range(7)]
    r = reranker(server, batch_size=3)
    scores = await r.scores("reset password", items)
    await r.aclose()
    assert sorted(len(b["documents"]) for b in server.requests) == [1, 3, 3]
    assert all(b["top_n"] == len(b["documents"]) for b in server.requests)
    assert "model" not in server.requests[0] and "authorization" not in server.headers[0]
    single = reranker(server, batch_size=100)
    assert (await single.scores("reset password", items)).tolist() == scores.tolist()
    await single.aclose()


async def test_empty_candidate_list_sends_nothing(server: FakeRerankServer) -> None:
    r = reranker(server)
    assert (await r.scores(QUERY, [])).shape == (0,)
    assert server.requests == []


async def test_503_then_success_is_retried_with_backoff(server: FakeRerankServer) -> None:
    delays, sleep = no_sleep_log()
    server.script = [("status", 503), ("status", 502, {"Retry-After": "0.5"})]
    r = reranker(server, max_attempts=3, sleep=sleep)
    scores = await r.scores(QUERY, ITEMS)
    await r.aclose()
    assert int(np.argmax(scores)) == 1
    assert len(server.requests) == 3 and r.retries == 2
    assert 0.125 <= delays[0] <= 0.25, "exponential backoff with jitter"
    assert delays[1] == 0.5, "the server's Retry-After"


async def test_503_until_attempts_run_out_is_backend_unavailable(
        server: FakeRerankServer) -> None:
    _, sleep = no_sleep_log()
    server.script = [("status", 503)] * 3
    r = reranker(server, max_attempts=3, sleep=sleep)
    with pytest.raises(BackendUnavailableError) as err:
        await r.scores(QUERY, ITEMS)
    await r.aclose()
    assert err.value.retriable
    assert "after 3 attempt(s)" in str(err.value) and "HTTP 503" in str(err.value)
    assert len(server.requests) == 3


async def test_timeout_is_retried_then_backend_unavailable(server: FakeRerankServer) -> None:
    _, sleep = no_sleep_log()
    server.script = [("sleep", 1.5), ("sleep", 1.5)]
    r = reranker(server, timeout=0.2, max_attempts=2, sleep=sleep)
    start = time.monotonic()
    with pytest.raises(BackendUnavailableError) as err:
        await r.scores(QUERY, ITEMS)
    await r.aclose()
    # (each attempt ends at the timeout, not when the server answers 1.5 s later: two
    # attempts that waited for it would take 3 s; the bound is loose for a loaded machine)
    assert time.monotonic() - start < 3.0, "each attempt ends at the timeout"
    assert err.value.retriable and "no answer within 0.2 s" in str(err.value)
    # (counted by the client: under load the fake server may not have read the second
    # request before its 0.2 s were up)
    assert (r.requests, r.retries) == (2, 1)


async def test_timeout_then_answer_succeeds(server: FakeRerankServer) -> None:
    _, sleep = no_sleep_log()
    server.script = [("sleep", 1.0)]
    r = reranker(server, timeout=0.3, max_attempts=2, sleep=sleep)
    assert int(np.argmax(await r.scores(QUERY, ITEMS))) == 1
    await r.aclose()


async def test_connection_refused_is_backend_unavailable() -> None:
    with rerank_server() as s:
        url = s.url
    _, sleep = no_sleep_log()
    r = HttpReranker(url + "/rerank", max_attempts=2, timeout=1.0, sleep=sleep)
    with pytest.raises(BackendUnavailableError) as err:
        await r.scores(QUERY, ITEMS)
    await r.aclose()
    assert err.value.retriable and "ConnectError" in str(err.value)


@pytest.mark.parametrize(("reply", "why"), [
    (("raw", "<html>gateway</html>"), "not JSON"),
    (("json", {"data": []}), "'results' list"),
    (("json", [{"index": 0, "score": 1.0}]), "'results' list"),
    (("json", {"results": [{"index": i, "relevance_score": 0.5} for i in range(3)]}),
     "1 of 4 documents have no score (first: index 3)"),
    (("json", {"results": [{"index": i % 3, "relevance_score": 0.5} for i in range(4)]}),
     "index 0 appears twice"),
    (("json", {"results": [{"index": 7, "relevance_score": 0.5}]}), "not an integer in 0..3"),
    (("json", {"results": [{"index": "0", "relevance_score": 0.5}]}), "not an integer"),
    (("json", {"results": [{"index": 0, "relevance_score": "high"}]}), "not a finite number"),
    (("json", {"results": [{"index": 0}]}), "relevance_score None"),
    (("raw", '{"results": [{"index": 0, "relevance_score": NaN}]}'), "not a finite number"),
    (("json", {"results": ["0.5"]}), "not an object"),
])
async def test_malformed_reply_is_a_clear_non_retriable_error(
        server: FakeRerankServer, reply: tuple[Any, ...], why: str) -> None:
    server.script = [reply]
    r = reranker(server, max_attempts=3)
    with pytest.raises(RerankerResponseError) as err:
        await r.scores(QUERY, ITEMS)
    await r.aclose()
    assert isinstance(err.value, BackendUnavailableError) and not err.value.retriable
    assert why in str(err.value)
    assert "malformed reply from rerank endpoint" in str(err.value)
    assert err.value.field == "NUGGETFLOW_RERANKER"
    assert len(server.requests) == 1, "a malformed reply is not retried"


@pytest.mark.parametrize(("status", "field", "text"), [
    (401, "NUGGETFLOW_RERANK_API_KEY", "refused the credentials"),
    (404, "NUGGETFLOW_RERANKER", "no rerank endpoint at"),
    (422, None, "rejected the request (HTTP 422)"),
    (501, None, "rejected the request (HTTP 501)"),
])
async def test_4xx_is_not_retried(server: FakeRerankServer, status: int, field: str | None,
                                  text: str) -> None:
    server.script = [("status", status)]
    r = reranker(server, max_attempts=3, api_key="sk-wrong")
    with pytest.raises(RerankerResponseError) as err:
        await r.scores(QUERY, ITEMS)
    await r.aclose()
    assert err.value.field == field and text in str(err.value)
    assert "sk-wrong" not in str(err.value)
    assert len(server.requests) == 1


async def test_tei_shape(server: FakeRerankServer) -> None:
    settings = Settings.from_env({}, rerank_model="ignored-by-tei")
    url = server.url.replace("http://", "tei+http://")
    r = make_reranker_backend(url, settings)
    assert isinstance(r, HttpReranker) and r.protocol == "tei"
    scores = await r.scores(QUERY, ITEMS)
    await r.aclose()
    assert int(np.argmax(scores)) == 1
    assert server.paths == ["/rerank"]
    assert server.requests[0] == {"query": QUERY, "texts": [document_text(i, 4000)
                                                           for i in ITEMS], "truncate": True}


async def test_tei_malformed_reply(server: FakeRerankServer) -> None:
    server.script = [("json", {"results": []})]
    r = reranker(server, path="/rerank", protocol="tei")
    with pytest.raises(RerankerResponseError, match="expected a JSON list"):
        await r.scores(QUERY, ITEMS)
    await r.aclose()


async def test_factory_reads_settings(server: FakeRerankServer) -> None:
    settings = Settings.from_env({
        "NUGGETFLOW_RERANKER": server.url.replace("http://", "rerank+http://") + "/v2/rerank",
        "NUGGETFLOW_RERANK_MODEL": "bge-reranker-base", "NUGGETFLOW_RERANK_API_KEY": "k-123",
        "NUGGETFLOW_RERANK_BATCH_SIZE": "2", "NUGGETFLOW_MAX_HIT_CHARS": "20"})
    r = make_reranker_backend(settings.reranker, settings)
    assert isinstance(r, HttpReranker)
    assert r.name == f"cohere:{server.url}/v2/rerank#bge-reranker-base"
    await r.fit([])
    await r.scores(QUERY, ITEMS)
    await r.aclose()
    assert server.paths == ["/v2/rerank", "/v2/rerank"]
    assert all(len(d) <= 20 for b in server.requests for d in b["documents"])
    assert {b["model"] for b in server.requests} == {"bge-reranker-base"}
    assert {h["authorization"] for h in server.headers} == {"Bearer k-123"}


def test_factory_schemes() -> None:
    settings = Settings.from_env({})
    assert make_reranker_backend("", settings) is None
    assert make_reranker_backend("  ", settings) is None
    https = make_reranker_backend("https://rerank.example:8443/v1/rerank", settings)
    assert isinstance(https, HttpReranker)
    assert https.url == "https://rerank.example:8443/v1/rerank" and https.protocol == "cohere"
    tei = make_reranker_backend("tei+https://tei.example/", settings)
    assert isinstance(tei, HttpReranker) and tei.url == "https://tei.example/rerank"
    named = make_reranker_backend("http://user:secret@host:1/v1/rerank?x=1", settings)
    assert isinstance(named, HttpReranker) and "secret" not in named.name
    with pytest.raises(ConfigError) as err:
        make_reranker_backend("cross-encoder://", settings)
    assert err.value.field == "NUGGETFLOW_RERANKER"
    assert "deploy/rerankers/README.md" in str(err.value)
    with pytest.raises(ConfigError, match="unknown reranker scheme 'grpc'"):
        make_reranker_backend("grpc://host:1", settings)
    with pytest.raises(ConfigError, match="expected an http"):
        make_reranker_backend("http:///no-host", settings)


@pytest.mark.parametrize(("var", "value"), [
    ("NUGGETFLOW_RERANKER", "localhost:8080"),
    ("NUGGETFLOW_RERANK_TIMEOUT_SECONDS", "0"),
    ("NUGGETFLOW_RERANK_MAX_ATTEMPTS", "0"),
    ("NUGGETFLOW_RERANK_BATCH_SIZE", "0"),
])
def test_bad_rerank_settings_name_the_variable(var: str, value: str) -> None:
    with pytest.raises(ConfigError) as err:
        Settings.from_env({var: value})
    assert err.value.field == var


def test_api_key_is_secret() -> None:
    s = Settings.from_env({"NUGGETFLOW_RERANK_API_KEY": "sk-rerank"})
    assert s.public_dict()["rerank_api_key"] == "***"
