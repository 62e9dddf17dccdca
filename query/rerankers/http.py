"""A re-ranker behind an HTTP rerank endpoint (``NUGGETFLOW_RERANKER``).

Two wire shapes, both widely served:

- ``cohere`` (Cohere, Jina, vLLM, Infinity, ...): ``POST <url>`` with
  ``{"model", "query", "documents": [str], "top_n"}``, answered by
  ``{"results": [{"index", "relevance_score"}, ...]}`` in any order.
- ``tei`` (Hugging Face text-embeddings-inference): ``POST <url>`` (``/rerank``) with
  ``{"query", "texts": [str], "truncate": true}``, answered by ``[{"index", "score"}, ...]``.

Scores are returned raw, one per item in the caller's order; calibration is the gate's.
A candidate list longer than ``batch_size`` is split into requests sent at once. 429,
5xx, timeouts and connection errors are retried with exponential backoff and jitter (or
the server's ``Retry-After``, capped); when attempts run out the call raises
:class:`~nuggetflow.errors.BackendUnavailableError` (retriable). A reply that does not
follow the protocol, or a 4xx, raises :class:`RerankerResponseError` (not retriable).
"""

from __future__ import annotations

import asyncio
import json
import math
import random
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import httpx
import numpy as np

from nuggetflow.errors import BackendUnavailableError, ConfigError
from nuggetflow.logging import get_logger
from query.rerank import Judged, RerankItem, Scores

log = get_logger(__name__)

WireProtocol = Literal["cohere", "tei"]
PROTOCOLS: tuple[WireProtocol, ...] = ("cohere", "tei")
BACKOFF_INITIAL_SECONDS = 0.25
BACKOFF_MAX_SECONDS = 4.0
MAX_ERROR_BODY_CHARS = 300


class RerankerResponseError(BackendUnavailableError):
    """The rerank endpoint answered, but not as its protocol says (not JSON, fields missing
    or of the wrong type, indices missing or repeated) or refused the request with a 4xx:
    a wrong URL, key or model, or a server of another kind. Trying again will not help."""

    retriable = False


def document_text(item: RerankItem, max_chars: int) -> str:
    """What the re-ranker reads for an item: its title, then its text (the title is left
    out when the text already starts with it), cut to ``max_chars`` characters."""
    title, text = item.title.strip(), item.text.strip()
    doc = text if not title or text.startswith(title) else f"{title}\n{text}"
    return doc[:max_chars]


def _redacted(url: str) -> str:
    """The URL without user info, query or fragment (safe to log and to name)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port is not None:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


class HttpReranker:
    """Scores (query, item) pairs through an HTTP rerank endpoint; ``fit`` does nothing.

    One ``httpx.AsyncClient`` per event loop (made on first use); :meth:`aclose` closes it.
    """

    def __init__(self, url: str, *, protocol: WireProtocol = "cohere", model: str = "",
                 api_key: str = "", timeout: float = 5.0, max_attempts: int = 3,
                 batch_size: int = 32, max_doc_chars: int = 4000,
                 backoff_initial: float = BACKOFF_INITIAL_SECONDS,
                 backoff_max: float = BACKOFF_MAX_SECONDS,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(f"expected an http(s)://host[:port]/path URL, got "
                              f"{_redacted(url)!r}", field="NUGGETFLOW_RERANKER")
        if protocol not in PROTOCOLS:
            raise ConfigError(f"unknown rerank protocol {protocol!r} (cohere, tei)",
                              field="NUGGETFLOW_RERANKER")
        if timeout <= 0 or max_attempts < 1 or batch_size < 1 or max_doc_chars < 1:
            raise ConfigError("timeout must be > 0; attempts, batch size and document "
                              "length >= 1", field="NUGGETFLOW_RERANKER")
        self.url = url
        self.protocol: WireProtocol = protocol
        self.model = model
        self.name = f"{protocol}:{_redacted(url)}" + (f"#{model}" if model else "")
        self._headers = {"Accept": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._timeout = timeout
        self._max_attempts = max_attempts
        self._batch_size = batch_size
        self._max_doc_chars = max_doc_chars
        self._backoff_initial = backoff_initial
        self._backoff_max = backoff_max
        self._sleep = sleep
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self.requests = self.retries = 0

    async def fit(self, lists: Sequence[Judged]) -> None:
        """A pre-trained endpoint learns nothing from the tenant's pairs."""

    async def scores(self, query: str, items: Sequence[RerankItem]) -> Scores:
        """One raw score per item, in order (batches of ``batch_size`` sent at once)."""
        if not items:
            return np.zeros(0, dtype=np.float64)
        docs = [document_text(item, self._max_doc_chars) for item in items]
        batches = [docs[i : i + self._batch_size] for i in range(0, len(docs), self._batch_size)]
        tasks = [asyncio.ensure_future(self._score_batch(query, b)) for b in batches]
        try:
            parts = await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:  # one batch failed: the others' answers are of no use
                task.cancel()
            raise
        return np.concatenate(parts).astype(np.float64)

    async def aclose(self) -> None:
        """Close the HTTP client (a later call makes a new one)."""
        client, self._client, self._client_loop = self._client, None, None
        if client is not None:
            await client.aclose()

    def _http(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            # A client's connections belong to the loop that opened them.
            self._client = httpx.AsyncClient(
                headers=self._headers, timeout=httpx.Timeout(self._timeout),
                transport=self._transport, follow_redirects=False)
            self._client_loop = loop
        return self._client

    def _body(self, query: str, docs: list[str]) -> dict[str, Any]:
        if self.protocol == "tei":
            return {"query": query, "texts": docs, "truncate": True}
        body: dict[str, Any] = {"query": query, "documents": docs, "top_n": len(docs)}
        if self.model:
            body["model"] = self.model
        return body

    async def _score_batch(self, query: str, docs: list[str]) -> Scores:
        body = self._body(query, docs)
        where = _redacted(self.url)
        failure = ""
        for attempt in range(1, self._max_attempts + 1):
            retry_after: float | None = None
            try:
                self.requests += 1
                async with asyncio.timeout(self._timeout):
                    response = await self._http().post(self.url, json=body)
            except (TimeoutError, httpx.TimeoutException):
                failure = f"no answer within {self._timeout:g} s"
            except httpx.TransportError as exc:
                failure = f"{type(exc).__name__}: {exc}"
            else:
                if response.is_success:
                    return self._parse(response, len(docs))
                snippet = response.text[:MAX_ERROR_BODY_CHARS]
                failure = f"HTTP {response.status_code}: {snippet}"
                if not _retriable_status(response.status_code):
                    raise self._refused(response.status_code, snippet)
                retry_after = _retry_after(response)
            if attempt < self._max_attempts:
                delay = self._delay(attempt, retry_after)
                self.retries += 1
                log.warning("rerank request failed, retrying", url=where, attempt=attempt,
                            failure=failure, delay=round(delay, 3))
                await self._sleep(delay)
        raise BackendUnavailableError(
            f"rerank endpoint {where} failed after {self._max_attempts} attempt(s): {failure}")

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self._backoff_max)
        base = min(self._backoff_initial * 2.0 ** (attempt - 1), self._backoff_max)
        return base * random.uniform(0.5, 1.0)

    def _refused(self, status: int, snippet: str) -> RerankerResponseError:
        where = _redacted(self.url)
        if status in (401, 403):
            return RerankerResponseError(
                f"rerank endpoint {where} refused the credentials (HTTP {status}): {snippet}",
                field="NUGGETFLOW_RERANK_API_KEY")
        if status in (404, 405):
            return RerankerResponseError(
                f"no rerank endpoint at {where} (HTTP {status}): check the path "
                f"(e.g. /v1/rerank, or /rerank for tei+http://)", field="NUGGETFLOW_RERANKER")
        return RerankerResponseError(
            f"rerank endpoint {where} rejected the request (HTTP {status}): {snippet}")

    def _parse(self, response: httpx.Response, n: int) -> Scores:
        """Scores in document order from a reply; RerankerResponseError when malformed."""
        where = _redacted(self.url)

        def bad(why: str) -> RerankerResponseError:
            return RerankerResponseError(
                f"malformed reply from rerank endpoint {where} ({self.protocol} protocol): "
                f"{why}", field="NUGGETFLOW_RERANKER")

        try:
            reply = json.loads(response.content)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise bad(f"not JSON: {response.text[:MAX_ERROR_BODY_CHARS]!r}") from None
        if self.protocol == "tei":
            results, key = reply, "score"
            if not isinstance(results, list):
                raise bad(f"expected a JSON list, got {type(reply).__name__}")
        else:
            key = "relevance_score"
            results = reply.get("results") if isinstance(reply, dict) else None
            if not isinstance(results, list):
                raise bad("expected an object with a 'results' list")
        out = np.full(n, np.nan, dtype=np.float64)
        for row in results:
            if not isinstance(row, dict):
                raise bad(f"a result is not an object: {row!r:.80}")
            index, score = row.get("index"), row.get(key)
            if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < n:
                raise bad(f"index {index!r:.40} is not an integer in 0..{n - 1}")
            if (not isinstance(score, int | float) or isinstance(score, bool)
                    or not math.isfinite(score)):
                raise bad(f"{key} {score!r:.40} of index {index} is not a finite number")
            if not np.isnan(out[index]):
                raise bad(f"index {index} appears twice")
            out[index] = float(score)
        missing = np.flatnonzero(np.isnan(out))
        if missing.size:
            raise bad(f"{missing.size} of {n} documents have no score (first: index "
                      f"{int(missing[0])})")
        return out


def _retriable_status(status: int) -> bool:
    """408, 429 and 5xx (but 501 Not Implemented) may succeed when tried again."""
    return status in (408, 429) or (status >= 500 and status != 501)


def _retry_after(response: httpx.Response) -> float | None:
    """The Retry-After header in seconds, when it is a number (HTTP dates are ignored)."""
    try:
        value = float(response.headers.get("retry-after", ""))
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None
