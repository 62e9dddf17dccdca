"""A local HTTP server that speaks the OpenAI chat-completions and embeddings APIs.

Tests script its replies: each request consumes the next scripted action, if any:
``("json", obj)`` a JSON reply, ``("raw", text)`` any text as the message content,
``("status", code)`` an HTTP error, ``("sleep", seconds)`` a late reply (a timeout for the
client). With no script left, it answers each role with a small plausible reply.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class FakeOpenAI:
    """Shared state of the fake server: the script and what it received."""

    url: str = ""
    script: list[tuple[str, Any]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    fail_status: int | None = None  # answer every request with this status while set
    lock: threading.Lock = field(default_factory=threading.Lock)

    def roles(self) -> list[str]:
        """The role of each chat request received, in order."""
        return [role_of(r) for r in self.requests if "messages" in r]


def role_of(body: dict[str, Any]) -> str:
    """Which nuggetflow role a chat request is for (from its system prompt)."""
    system = body["messages"][0]["content"]
    for marker, role in (("review feedback", "actionability"), ("retrieval anchors", "anchors"),
                         ("held-out test queries", "probes"), ("improve a knowledge", "reflector"),
                         ("support assistant. Answer", "generator"), ("judge an", "judge")):
        if marker in system:
            return role
    return "unknown"


def default_reply(body: dict[str, Any]) -> dict[str, Any]:
    """A plausible reply for the request's role."""
    role = role_of(body)
    user = body["messages"][1]["content"]
    if role == "actionability":
        fb = re.search(r"<feedback[^>]*>(.*)</feedback>", user, re.S)
        text = fb.group(1) if fb else ""
        if "only the" in text:
            return {"usefulness": "actionable_correction", "can_produce_nugget": True,
                    "reason": "concrete correction", "title": "Password reset role restriction",
                    "body": text.split(";")[0].replace("No, that's wrong. ", "").strip() + ".",
                    "subject": "reset another user's password", "predicate": "allowed_role",
                    "object": "Workspace Owner", "scope": "portal v8.2",
                    "kind": "SemanticFact"}
        return {"usefulness": "vague_negative", "can_produce_nugget": False,
                "reason": "no concrete fact"}
    if role == "anchors":
        n = int(re.search(r"Total: (\d+)", user).group(1))  # type: ignore[union-attr]
        return {"anchors": [f"who may reset passwords variant {i}" for i in range(n)]}
    if role == "probes":
        n = int(re.search(r"Write (\d+) paraphrases", user).group(1))  # type: ignore[union-attr]
        return {"paraphrases": [f"probe question number {i} about resets" for i in range(n)]}
    if role == "reflector":
        title = re.search(r"title: (.*)", user).group(1)  # type: ignore[union-attr]
        body_text = re.search(r"body: (.*)", user).group(1)  # type: ignore[union-attr]
        return {"title": title, "body": body_text, "anchors": ["reset for another user"],
                "edits": ["kept"]}
    if role == "generator":
        ids = re.findall(r"^(?:- )?\[([^\]]+)\]", user, re.M)  # passages or a context block
        return {"answer": "See the passages.", "cited": ids[:1]}
    if role == "judge":
        return {"compliance": "addresses", "faithful": True, "non_regression": True,
                "grounded": True}
    return {}


@contextmanager
def fake_openai() -> Iterator[FakeOpenAI]:
    """Run the fake server on a free loopback port for the duration of a test."""
    state = FakeOpenAI()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with state.lock:
                state.requests.append(body)
                action = state.script.pop(0) if state.script else None
                fail = state.fail_status
            if fail is not None:
                self._send(fail, {"error": {"message": "unavailable", "type": "server_error"}})
                return
            if action and action[0] == "status":
                self._send(action[1], {"error": {"message": "scripted", "type": "error"}})
                return
            if action and action[0] == "sleep":
                time.sleep(action[1])
                action = None
            if self.path.endswith("/embeddings"):
                data = [{"object": "embedding", "index": i, "embedding": [1.0, 0.0, 0.0]}
                        for i, _ in enumerate(body["input"])]
                self._send(200, {"object": "list", "data": data, "model": body["model"],
                                 "usage": {"prompt_tokens": 1, "total_tokens": 1}})
                return
            if action and action[0] == "raw":
                content = action[1]
            elif action and action[0] == "json":
                content = json.dumps(action[1])
            else:
                content = json.dumps(default_reply(body))
            self._send(200, {
                "id": "chatcmpl-test", "object": "chat.completion", "created": 0,
                "model": body["model"],
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": content}}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 20,
                          "total_tokens": 120}})

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            raw = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
