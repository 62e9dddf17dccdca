"""Re-ranking backends behind the :class:`~query.rerank.Reranker` Protocol, chosen by URL.

``make_reranker_backend(url, settings)`` reads the URL's scheme (``NUGGETFLOW_RERANKER``):

- empty: no backend (``None``);
- ``http://`` / ``https://`` / ``rerank+http://`` / ``rerank+https://``: an HTTP rerank
  endpoint of the Cohere/Jina/vLLM kind at exactly that URL (e.g.
  ``http://127.0.0.1:8000/v1/rerank``), see :mod:`query.rerankers.http`;
- ``tei+http://`` / ``tei+https://``: Hugging Face text-embeddings-inference (path
  ``/rerank`` unless given);
- ``cross-encoder://``: reserved for a local ONNX cross-encoder. No registry package this
  project can install ships cross-encoder weights (deploy/rerankers/README.md lists what
  was checked), so it raises ConfigError; serve a cross-encoder behind one of the HTTP
  kinds instead.

Every backend returns raw scores; the gate (query/gate.py) calibrates them per tenant.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from nuggetflow.errors import ConfigError
from nuggetflow.settings import Settings
from query.rerank import Reranker
from query.rerankers.http import HttpReranker, RerankerResponseError, WireProtocol

__all__ = ["SCHEMES", "HttpReranker", "RerankerResponseError", "make_reranker_backend"]

SCHEMES: dict[str, tuple[WireProtocol, str]] = {
    "http": ("cohere", "http"), "https": ("cohere", "https"),
    "rerank+http": ("cohere", "http"), "rerank+https": ("cohere", "https"),
    "tei+http": ("tei", "http"), "tei+https": ("tei", "https"),
}


def make_reranker_backend(url: str, settings: Settings) -> Reranker | None:
    """The backend a reranker URL names (None for an empty URL); ConfigError if unknown.

    Request settings come from ``settings``: ``rerank_model``, ``rerank_api_key``,
    ``rerank_timeout_seconds``, ``rerank_max_attempts``, ``rerank_batch_size``; each
    document is cut to ``max_hit_chars`` characters.
    """
    url = url.strip()
    if not url:
        return None
    scheme = urlsplit(url).scheme.lower()
    if scheme == "cross-encoder":
        raise ConfigError(
            "cross-encoder:// is not available: no PyPI, npm or Maven Central package ships "
            "cross-encoder weights this service could load offline (see "
            "deploy/rerankers/README.md); serve a cross-encoder behind an HTTP rerank "
            "endpoint and set http(s):// or tei+http(s):// instead",
            field="NUGGETFLOW_RERANKER")
    if scheme not in SCHEMES:
        raise ConfigError(f"unknown reranker scheme {scheme!r} (expected one of "
                          f"{', '.join(SCHEMES)}, or empty for none)",
                          field="NUGGETFLOW_RERANKER")
    protocol, http_scheme = SCHEMES[scheme]
    parts = urlsplit(url)
    path = parts.path
    if protocol == "tei" and path in ("", "/"):
        path = "/rerank"
    target = urlunsplit((http_scheme, parts.netloc, path, parts.query, ""))
    return HttpReranker(
        target, protocol=protocol, model=settings.rerank_model,
        api_key=settings.rerank_api_key, timeout=settings.rerank_timeout_seconds,
        max_attempts=settings.rerank_max_attempts, batch_size=settings.rerank_batch_size,
        max_doc_chars=settings.max_hit_chars)
