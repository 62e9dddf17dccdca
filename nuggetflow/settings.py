"""The one settings object.

Every setting is declared once, with its type, default, environment variable and
documentation. ``Settings.from_env()`` reads ``NUGGETFLOW_*`` variables and validates
eagerly; a bad value raises :class:`~nuggetflow.errors.ConfigError` naming the variable.
``nuggetflow settings`` prints the table (the README's configuration section is made from it).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from nuggetflow.errors import ConfigError

ENV_PREFIX = "NUGGETFLOW_"


def _setting(default: Any, doc: str, *, secret: bool = False) -> Any:
    return field(default=default, metadata={"doc": doc, "secret": secret})


@dataclass(frozen=True)
class Settings:
    """All runtime configuration. Fields map to ``NUGGETFLOW_<FIELD_NAME_UPPER>``."""

    # --- storage and retrieval -------------------------------------------------------
    store: str = _setting(
        "sqlite:///var/nuggetflow.db",
        "Index store URL: sqlite:///<path> (embedded single file, the default) or "
        "opensearch://host:port (OpenSearch node or cluster).",
    )
    opensearch_index: str = _setting(
        "nuggetflow", "OpenSearch index name (one index holds nuggets and documents)."
    )
    embedder: str = _setting(
        "minilm://",
        "Embeddings backend URL: minilm:// (local all-MiniLM-L6-v2 int8 ONNX, no network) "
        "or openai://<model> (any OpenAI-compatible /embeddings endpoint).",
    )
    embedding_dim: int = _setting(384, "Dimension of the embedding vectors.")
    openai_base_url: str = _setting(
        "", "Base URL of an OpenAI-compatible API (empty: the openai package's default)."
    )
    openai_api_key: str = _setting("", "API key for the OpenAI-compatible API.", secret=True)
    fusion: str = _setting("minmax", "Score fusion: minmax (weighted) or rrf.")
    weight_lexical: float = _setting(0.4, "Min-max fusion weight of the BM25 score.")
    weight_dense: float = _setting(0.5, "Min-max fusion weight of the dense score.")
    weight_metadata: float = _setting(
        0.1, "Min-max fusion weight of the metadata prior (rank, confidence)."
    )
    rrf_k: int = _setting(60, "RRF constant k in sum 1/(k + rank).")
    candidate_k: int = _setting(60, "Candidates taken from each retriever before fusion.")
    chunk_chars: int = _setting(800, "Target passage length when chunking corpus documents.")
    predicate_schema: str = _setting(
        "",
        "Path to a JSON file {predicate: 'functional'|'multi'}; predicates not listed "
        "are functional.",
    )
    # --- logging ---------------------------------------------------------------------
    log_level: str = _setting("INFO", "Log level: DEBUG, INFO, WARNING, ERROR.")
    log_format: str = _setting("text", "Log format: text (key=value) or json.")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Build settings from ``NUGGETFLOW_*`` variables, then apply ``overrides``."""
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        for f in fields(cls):
            var = ENV_PREFIX + f.name.upper()
            if var in env:
                values[f.name] = _coerce(var, env[var], f.type)
        values.update(overrides)
        settings = cls(**values)
        settings.validate()
        return settings

    def validate(self) -> None:
        """Raise ConfigError naming the first bad setting."""
        if "://" not in self.store:
            raise ConfigError(f"not a URL: {self.store!r}", field="NUGGETFLOW_STORE")
        if "://" not in self.embedder:
            raise ConfigError(f"not a URL: {self.embedder!r}", field="NUGGETFLOW_EMBEDDER")
        if self.fusion not in ("minmax", "rrf"):
            raise ConfigError(
                f"must be minmax or rrf, got {self.fusion!r}", field="NUGGETFLOW_FUSION"
            )
        for name in ("weight_lexical", "weight_dense", "weight_metadata"):
            if getattr(self, name) < 0:
                raise ConfigError("must be >= 0", field=ENV_PREFIX + name.upper())
        for name in ("embedding_dim", "rrf_k", "candidate_k", "chunk_chars"):
            if getattr(self, name) <= 0:
                raise ConfigError("must be > 0", field=ENV_PREFIX + name.upper())
        if self.log_level.upper() not in ("DEBUG", "INFO", "WARNING", "ERROR"):
            raise ConfigError(f"unknown level {self.log_level!r}", field="NUGGETFLOW_LOG_LEVEL")
        if self.log_format not in ("text", "json"):
            raise ConfigError("must be text or json", field="NUGGETFLOW_LOG_FORMAT")
        if self.predicate_schema and not Path(self.predicate_schema).is_file():
            raise ConfigError(
                f"no such file: {self.predicate_schema}", field="NUGGETFLOW_PREDICATE_SCHEMA"
            )

    def replace(self, **changes: Any) -> Settings:
        """A validated copy with some fields changed."""
        new = dataclasses.replace(self, **changes)
        new.validate()
        return new

    def public_dict(self) -> dict[str, Any]:
        """The settings with secrets masked (safe to log)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            out[f.name] = "***" if f.metadata.get("secret") and value else value
        return out

    @classmethod
    def describe(cls) -> list[tuple[str, str, str]]:
        """(env var, default, doc) for every setting, for --help and the README."""
        return [
            (ENV_PREFIX + f.name.upper(), repr(f.default), str(f.metadata.get("doc", "")))
            for f in fields(cls)
        ]


def _coerce(var: str, raw: str, typ: Any) -> Any:
    kind = typ if isinstance(typ, str) else getattr(typ, "__name__", str(typ))
    try:
        if kind == "int":
            return int(raw)
        if kind == "float":
            return float(raw)
        if kind == "bool":
            if raw.lower() in ("1", "true", "yes", "on"):
                return True
            if raw.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(raw)
    except ValueError:
        raise ConfigError(f"expected {kind}, got {raw!r}", field=var) from None
    return raw
