"""Embedders: the local MiniLM (pinned hashes) and the OpenAI-compatible backend, the
latter through the real ``openai`` client against a local HTTP server."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

from nuggetflow.errors import BackendUnavailableError, ConfigError, ValidationError
from nuggetflow.settings import Settings
from query.embeddings import MiniLMEmbedder, OpenAIEmbedder, make_embedder


def test_minilm_vectors_are_normalized_and_semantic(embedder: MiniLMEmbedder) -> None:
    v = embedder.embed(["Only the Workspace Owner can reset another user's password.",
                        "Which role may reset a teammate's password?",
                        "Change the desktop wallpaper from Settings."])
    assert v.shape == (3, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2
    assert embedder.embed([]).shape == (0, 384)


def test_minilm_rejects_a_model_file_with_the_wrong_hash(tmp_path: Path) -> None:
    fake = tmp_path / "model.onnx"
    fake.write_bytes(b"not a model")
    with pytest.raises(ConfigError) as err:
        MiniLMEmbedder(model_path=fake).warm_up()
    assert "sha256" in str(err.value)


class _Handler(BaseHTTPRequestHandler):
    mode = "ok"
    calls: ClassVar[list[dict[str, object]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).calls.append(body)
        if self.mode == "down":
            self.send_response(503)
            self.end_headers()
            return
        dim = 3 if self.mode == "wrong-dim" else 4
        data = [{"object": "embedding", "index": i,
                 "embedding": [float(len(t)), 1.0, 0.0, 2.0][:dim]}
                for i, t in enumerate(body["input"])]
        payload = json.dumps({"object": "list", "data": data, "model": body["model"],
                              "usage": {"prompt_tokens": 1, "total_tokens": 1}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[tuple[str, type[_Handler]]]:
    handler = type("H", (_Handler,), {"mode": "ok", "calls": []})
    srv = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/v1", handler
    srv.shutdown()


def test_openai_embedder_through_the_real_client(server: tuple[str, type[_Handler]]) -> None:
    url, handler = server
    settings = Settings.from_env({"NUGGETFLOW_EMBEDDER": "openai://my-embed",
                                  "NUGGETFLOW_EMBEDDING_DIM": "4",
                                  "NUGGETFLOW_OPENAI_BASE_URL": url})
    emb = make_embedder(settings)
    v = emb.embed(["ab", "abcd"])
    assert v.shape == (2, 4)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0)
    assert handler.calls[-1]["model"] == "my-embed"
    assert handler.calls[-1]["input"] == ["ab", "abcd"]


def test_openai_embedder_errors(server: tuple[str, type[_Handler]]) -> None:
    url, handler = server
    emb = OpenAIEmbedder("m", 4, base_url=url, max_retries=1, timeout=5)
    handler.mode = "wrong-dim"
    with pytest.raises(ValidationError) as err:
        emb.embed(["x"])
    assert err.value.field == "embedding_dim"
    handler.mode = "down"
    before = len(handler.calls)
    with pytest.raises(BackendUnavailableError):
        emb.embed(["x"])
    assert len(handler.calls) - before == 2  # one try plus one retry by the client


def test_unknown_embedder_scheme_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as err:
        make_embedder(Settings.from_env({"NUGGETFLOW_EMBEDDER": "word2vec://x"}))
    assert err.value.field == "NUGGETFLOW_EMBEDDER"
