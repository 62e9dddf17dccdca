"""The one settings object: env vars, validation naming the variable, secrets masked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nuggetflow.errors import ConfigError
from nuggetflow.settings import Settings


def test_defaults_are_the_embedded_backends() -> None:
    s = Settings.from_env({})
    assert s.store.startswith("sqlite://") and s.embedder == "minilm://"
    assert (s.weight_lexical, s.weight_dense, s.weight_metadata) == (0.4, 0.5, 0.1)
    assert s.rrf_k == 60 and s.candidate_k == 60


def test_env_vars_are_read_and_typed() -> None:
    s = Settings.from_env({"NUGGETFLOW_CANDIDATE_K": "120", "NUGGETFLOW_WEIGHT_DENSE": "0.7",
                           "NUGGETFLOW_FUSION": "rrf", "UNRELATED": "x"})
    assert s.candidate_k == 120 and s.weight_dense == 0.7 and s.fusion == "rrf"


@pytest.mark.parametrize(("var", "value"), [
    ("NUGGETFLOW_CANDIDATE_K", "many"), ("NUGGETFLOW_CANDIDATE_K", "0"),
    ("NUGGETFLOW_FUSION", "sum"), ("NUGGETFLOW_STORE", "index.db"),
    ("NUGGETFLOW_WEIGHT_LEXICAL", "-1"), ("NUGGETFLOW_LOG_LEVEL", "LOUD"),
    ("NUGGETFLOW_PREDICATE_SCHEMA", "/nonexistent.json"),
    ("NUGGETFLOW_OPENSEARCH_SHARDS", "0"), ("NUGGETFLOW_OPENSEARCH_REPLICAS", "-1"),
    ("NUGGETFLOW_OPENSEARCH_KNN_M", "1"), ("NUGGETFLOW_OPENSEARCH_KNN_EF_CONSTRUCTION", "1"),
    ("NUGGETFLOW_OPENSEARCH_REFRESH_INTERVAL", "-1"),
    ("NUGGETFLOW_OPENSEARCH_REFRESH_INTERVAL", "soon"),
])
def test_bad_values_name_the_variable(var: str, value: str) -> None:
    with pytest.raises(ConfigError) as err:
        Settings.from_env({var: value})
    assert err.value.field == var


def test_the_opensearch_layout_for_a_cluster_is_read() -> None:
    from query.backends.opensearch import IndexLayout

    s = Settings.from_env({"NUGGETFLOW_OPENSEARCH_SHARDS": "3",
                           "NUGGETFLOW_OPENSEARCH_REPLICAS": "1",
                           "NUGGETFLOW_OPENSEARCH_REFRESH_INTERVAL": "500ms"})
    layout = IndexLayout.from_settings(s)
    assert layout.index_settings() == {"index": {
        "knn": True, "number_of_shards": 3, "number_of_replicas": 1,
        "refresh_interval": "500ms"}}
    assert IndexLayout.from_settings(Settings()) == IndexLayout()  # one node: 1 shard, 0


def test_secrets_are_masked_and_every_setting_documented() -> None:
    s = Settings.from_env({"NUGGETFLOW_OPENAI_API_KEY": "sk-secret"})
    assert s.openai_api_key == "sk-secret"
    assert s.public_dict()["openai_api_key"] == "***"
    assert "sk-secret" not in repr(s.public_dict())
    rows = Settings.describe()
    assert all(var.startswith("NUGGETFLOW_") and doc for var, _, doc in rows)


@pytest.mark.parametrize(("var", "value"), [
    ("NUGGETFLOW_GRPC_PORT", "70000"), ("NUGGETFLOW_METRICS_PORT", "-1"),
    ("NUGGETFLOW_GRPC_MAX_MESSAGE_BYTES", "0"), ("NUGGETFLOW_CITATION_LEDGER_SIZE", "0"),
    ("NUGGETFLOW_GRPC_GRACE_SECONDS", "-2"), ("NUGGETFLOW_SERVE_HOST", " "),
    ("NUGGETFLOW_GRPC_MAX_ID_CHARS", "0"), ("NUGGETFLOW_GRPC_MAX_QUERY_CHARS", "-5"),
    ("NUGGETFLOW_GRPC_MAX_TEXT_CHARS", "0"), ("NUGGETFLOW_GRPC_MAX_LIST_ITEMS", "0"),
    ("NUGGETFLOW_AUTH_TOKENS_FILE", "/nonexistent/tokens.json"),
    ("NUGGETFLOW_AUTH_TOKENS", "{not json"),
    ("NUGGETFLOW_AUTH_TOKENS", '["a list"]'),
    ("NUGGETFLOW_AUTH_TOKENS", '{"short": ["acme"]}'),
    ("NUGGETFLOW_AUTH_TOKENS", '{"0123456789abcdef0123": []}'),
    ("NUGGETFLOW_AUTH_TOKENS", '{"0123456789abcdef0123": "acme"}'),
])
def test_bad_service_settings_name_the_variable(var: str, value: str) -> None:
    with pytest.raises(ConfigError) as err:
        Settings.from_env({var: value})
    assert err.value.field == var
    assert "0123456789abcdef0123" not in str(err.value), "tokens never appear in errors"


def test_auth_tokens_from_a_file_or_inline_not_both(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    path.write_text(json.dumps({"0123456789abcdef0123": ["acme"]}))
    s = Settings.from_env({"NUGGETFLOW_AUTH_TOKENS_FILE": str(path)})
    assert s.auth_tokens_file == str(path)
    inline = Settings.from_env({"NUGGETFLOW_AUTH_TOKENS": path.read_text()})
    assert inline.public_dict()["auth_tokens"] == "***"
    with pytest.raises(ConfigError) as err:
        Settings.from_env({"NUGGETFLOW_AUTH_TOKENS_FILE": str(path),
                           "NUGGETFLOW_AUTH_TOKENS": path.read_text()})
    assert err.value.field == "NUGGETFLOW_AUTH_TOKENS"
