"""Safe by default: the query service refuses to start without tokens (unless insecure dev
mode), secrets come from files, OpenSearch and Kafka clients get their credentials, and
alert thresholds are settings."""

from __future__ import annotations

import base64
import json
import os
import ssl
import subprocess
import sys
from pathlib import Path

import pytest

from nuggetflow.errors import ConfigError
from nuggetflow.settings import Settings
from query.auth import INSECURE_DEV_WARNING, server_auth
from query.backends.opensearch import OpenSearchStore
from tests.support.net import free_port as _free_port

ROOT = Path(__file__).resolve().parents[3]
TOKEN = "tok-acme-0123456789abcdef"
SECRET = "s3cr3t-Value-0123456789"


def secret_file(tmp_path: Path, name: str, value: str = SECRET) -> str:
    path = tmp_path / name
    path.write_text(value + "\n")  # a trailing newline, as `echo` writes it
    return str(path)


# --- the query service without tokens -------------------------------------------------


def test_server_auth_refuses_without_tokens_and_names_the_way_out() -> None:
    with pytest.raises(ConfigError) as err:
        server_auth(Settings.from_env({}))
    assert err.value.field == "NUGGETFLOW_AUTH_TOKENS_FILE"
    assert "--insecure-dev" in str(err.value) and "NUGGETFLOW_INSECURE_DEV" in str(err.value)


def test_server_auth_insecure_dev_is_open_and_loud(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("WARNING"):
        auth = server_auth(Settings.from_env({"NUGGETFLOW_INSECURE_DEV": "true"}))
    assert auth.open
    assert [r.getMessage() for r in caplog.records] == [INSECURE_DEV_WARNING]


def test_server_auth_with_tokens_is_closed(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    path.write_text(json.dumps({TOKEN: ["acme"]}))
    auth = server_auth(Settings.from_env({"NUGGETFLOW_AUTH_TOKENS_FILE": str(path),
                                          "NUGGETFLOW_INSECURE_DEV": "true"}))
    assert not auth.open and auth.token_count == 1




def _serve(tmp_path: Path, *args: str, timeout: float = 60) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("NUGGETFLOW_AUTH_TOKENS") and k != "NUGGETFLOW_INSECURE_DEV"}
    env.update(NUGGETFLOW_STORE=f"sqlite:///{tmp_path}/serve.db")
    return subprocess.Popen(
        [sys.executable, "-m", "app.cli", "serve", "--port", str(_free_port()),
         "--metrics-port", str(_free_port()), *args],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_serve_refuses_to_start_without_tokens(tmp_path: Path) -> None:
    proc = _serve(tmp_path)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, err
    assert "NUGGETFLOW_AUTH_TOKENS_FILE" in err and "--insecure-dev" in err
    assert not (tmp_path / "serve.db").exists(), "refused before the store was opened"


def test_serve_insecure_dev_starts_says_so_and_answers_health(tmp_path: Path) -> None:
    port = _free_port()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("NUGGETFLOW_AUTH_TOKENS") and k != "NUGGETFLOW_INSECURE_DEV"}
    env.update(NUGGETFLOW_STORE=f"sqlite:///{tmp_path}/serve.db", NUGGETFLOW_GRPC_PORT=str(port),
               NUGGETFLOW_METRICS_PORT=str(_free_port()), NUGGETFLOW_LOG_FORMAT="json")
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "serve", "--insecure-dev"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        lines: list[str] = []
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if "query service started" in line:
                break
        else:
            pytest.fail("serve --insecure-dev exited: " + "".join(lines))
        warning = next(json.loads(x) for x in lines if "INSECURE DEV MODE" in x)
        assert warning["level"] == "WARNING" and warning["host"] == "127.0.0.1"
        health = subprocess.run([sys.executable, "-m", "app.cli", "health"], cwd=ROOT,
                                env=env, capture_output=True, text=True, timeout=60)
        assert health.returncode == 0, health.stderr
        assert health.stdout.strip() == f"127.0.0.1:{port}: SERVING"
    finally:
        proc.terminate()
        proc.communicate(timeout=60)
    health = subprocess.run([sys.executable, "-m", "app.cli", "health", "--timeout",
                             "1"], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=60)
    assert health.returncode == 1 and "UNAVAILABLE" in health.stderr


def test_health_metrics_mode_fails_when_nothing_listens(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "app.cli", "health", "--metrics",
                           "--port", str(_free_port()), "--timeout", "1"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "/metrics" in proc.stderr


# --- secrets from files ----------------------------------------------------------------


def test_openai_key_from_a_file(tmp_path: Path) -> None:
    s = Settings.from_env({"NUGGETFLOW_OPENAI_API_KEY_FILE": secret_file(tmp_path, "key")})
    assert s.openai_key() == SECRET
    assert SECRET not in repr(s.public_dict())
    assert Settings.from_env({"NUGGETFLOW_OPENAI_API_KEY": "sk-inline"}).openai_key() == (
        "sk-inline")
    assert Settings.from_env({}).openai_key() == ""


@pytest.mark.parametrize("prefix", ["NUGGETFLOW_OPENAI_API_KEY", "NUGGETFLOW_OPENSEARCH_PASSWORD",
                                    "NUGGETFLOW_KAFKA_SASL_PASSWORD"])
def test_a_secret_file_must_exist_be_non_empty_and_stand_alone(tmp_path: Path,
                                                                prefix: str) -> None:
    extra = {"NUGGETFLOW_OPENSEARCH_PASSWORD": {"NUGGETFLOW_OPENSEARCH_USER": "nf"},
             "NUGGETFLOW_KAFKA_SASL_PASSWORD": {
                 "NUGGETFLOW_KAFKA_SECURITY_PROTOCOL": "SASL_PLAINTEXT",
                 "NUGGETFLOW_KAFKA_SASL_USERNAME": "nf"}}.get(prefix, {})
    with pytest.raises(ConfigError) as err:
        Settings.from_env({**extra, f"{prefix}_FILE": str(tmp_path / "missing")})
    assert err.value.field == f"{prefix}_FILE"
    empty = {**extra, f"{prefix}_FILE": secret_file(tmp_path, "empty", " ")}
    if prefix == "NUGGETFLOW_OPENAI_API_KEY":  # an empty key file: no key (local servers)
        assert Settings.from_env(empty).openai_key() == ""
    else:
        with pytest.raises(ConfigError) as err:
            Settings.from_env(empty)
        assert err.value.field == f"{prefix}_FILE"
    with pytest.raises(ConfigError) as err:
        Settings.from_env({**extra, f"{prefix}_FILE": secret_file(tmp_path, "s"),
                           prefix: "inline-too"})
    assert err.value.field == prefix and SECRET not in str(err.value)


def test_the_openai_backend_without_a_key_or_a_base_url_is_refused(tmp_path: Path) -> None:
    for env in ({"NUGGETFLOW_LLM": "openai"},
                {"NUGGETFLOW_EMBEDDER": "openai://text-embedding-3-small"},
                {"NUGGETFLOW_LLM": "openai",
                 "NUGGETFLOW_OPENAI_API_KEY_FILE": secret_file(tmp_path, "empty", "")}):
        with pytest.raises(ConfigError) as err:
            Settings.from_env(env)
        assert err.value.field == "NUGGETFLOW_OPENAI_API_KEY_FILE"
    keyed = Settings.from_env({"NUGGETFLOW_LLM": "openai", "NUGGETFLOW_LLM_MODEL": "gpt-4o",
                               "NUGGETFLOW_OPENAI_API_KEY_FILE": secret_file(tmp_path, "k")})
    assert (keyed.llm, keyed.llm_model, keyed.openai_key()) == ("openai", "gpt-4o", SECRET)
    local = Settings.from_env({"NUGGETFLOW_LLM": "openai",
                               "NUGGETFLOW_OPENAI_BASE_URL": "http://vllm:8000/v1"})
    assert local.openai_key() == ""


# --- OpenSearch credentials --------------------------------------------------------------


def test_opensearch_basic_auth_and_tls_from_settings(tmp_path: Path) -> None:
    ca = secret_file(tmp_path, "ca.pem", "-----BEGIN CERTIFICATE-----")
    s = Settings.from_env({
        "NUGGETFLOW_STORE": "opensearchs://opensearch:9200",
        "NUGGETFLOW_OPENSEARCH_USER": "admin",
        "NUGGETFLOW_OPENSEARCH_PASSWORD_FILE": secret_file(tmp_path, "os"),
        "NUGGETFLOW_OPENSEARCH_CA_FILE": ca})
    store = OpenSearchStore.from_url(s.store, s)
    options = store.client_options()
    assert options["hosts"] == ["https://opensearch:9200"]
    assert options["http_auth"] == ("admin", SECRET)
    assert options["use_ssl"] and options["verify_certs"] and options["ca_certs"] == ca
    relaxed = s.replace(opensearch_verify_certs=False, opensearch_ca_file="")
    options = OpenSearchStore.from_url(relaxed.store, relaxed).client_options()
    assert options["verify_certs"] is False and "ca_certs" not in options


def test_opensearch_without_credentials_stays_as_before() -> None:
    s = Settings.from_env({"NUGGETFLOW_STORE": "opensearch://127.0.0.1:19200"})
    options = OpenSearchStore.from_url(s.store, s).client_options()
    assert options == {"hosts": ["http://127.0.0.1:19200"], "timeout": 30.0,
                       "max_retries": 2, "retry_on_timeout": True}


@pytest.mark.parametrize("env, field", [
    ({"NUGGETFLOW_OPENSEARCH_USER": "admin"}, "NUGGETFLOW_OPENSEARCH_PASSWORD_FILE"),
    ({"NUGGETFLOW_OPENSEARCH_PASSWORD": "x"}, "NUGGETFLOW_OPENSEARCH_USER"),
    ({"NUGGETFLOW_OPENSEARCH_CA_FILE": "/nonexistent.pem"}, "NUGGETFLOW_OPENSEARCH_CA_FILE"),
    ({"NUGGETFLOW_OPENSEARCH_VERIFY_CERTS": "maybe"}, "NUGGETFLOW_OPENSEARCH_VERIFY_CERTS"),
])
def test_bad_opensearch_credentials_name_the_variable(env: dict[str, str], field: str) -> None:
    with pytest.raises(ConfigError) as err:
        Settings.from_env(env)
    assert err.value.field == field


async def test_opensearch_client_is_built_with_the_credentials(tmp_path: Path) -> None:
    s = Settings.from_env({
        "NUGGETFLOW_STORE": "opensearchs://opensearch:9200",
        "NUGGETFLOW_OPENSEARCH_USER": "admin",
        "NUGGETFLOW_OPENSEARCH_PASSWORD_FILE": secret_file(tmp_path, "os"),
        "NUGGETFLOW_OPENSEARCH_VERIFY_CERTS": "false"})
    store = OpenSearchStore.from_url(s.store, s)
    client = store._connect()
    try:
        await client.transport._async_call()  # builds the connections (no request yet)
        conn = client.transport.get_connection()
        assert conn.host == "https://opensearch:9200"
        expected = base64.b64encode(f"admin:{SECRET}".encode()).decode()
        assert conn.headers["authorization"] == f"Basic {expected}"
        assert conn._ssl_context.verify_mode == ssl.CERT_NONE
    finally:
        await store.stop()


# --- Kafka credentials -------------------------------------------------------------------


def test_kafka_plaintext_by_default() -> None:
    from stream.app import create_app
    from stream.topics import faust_credentials, kafka_client_options

    s = Settings.from_env({})
    assert kafka_client_options(s) == {"security_protocol": "PLAINTEXT"}
    assert faust_credentials(s) is None
    assert create_app(s).conf.broker_credentials is None


def test_kafka_sasl_plain_from_a_password_file(tmp_path: Path) -> None:
    import faust

    from stream.app import create_app
    from stream.topics import faust_credentials, kafka_client_options

    s = Settings.from_env({"NUGGETFLOW_KAFKA_SECURITY_PROTOCOL": "SASL_PLAINTEXT",
                           "NUGGETFLOW_KAFKA_SASL_USERNAME": "nuggetflow",
                           "NUGGETFLOW_KAFKA_SASL_PASSWORD_FILE": secret_file(tmp_path, "k")})
    assert kafka_client_options(s) == {
        "security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "PLAIN",
        "sasl_plain_username": "nuggetflow", "sasl_plain_password": SECRET}
    creds = faust_credentials(s)
    assert isinstance(creds, faust.SASLCredentials)
    assert (creds.username, creds.password, creds.protocol.value, creds.mechanism.value) == (
        "nuggetflow", SECRET, "SASL_PLAINTEXT", "PLAIN")
    app_creds = create_app(s).conf.broker_credentials
    assert isinstance(app_creds, faust.SASLCredentials) and app_creds.password == SECRET
    assert SECRET not in repr(s.public_dict())


def test_kafka_sasl_ssl_scram_has_a_tls_context(tmp_path: Path) -> None:
    from stream.topics import faust_credentials, kafka_client_options

    s = Settings.from_env({"NUGGETFLOW_KAFKA_SECURITY_PROTOCOL": "SASL_SSL",
                           "NUGGETFLOW_KAFKA_SASL_MECHANISM": "SCRAM-SHA-512",
                           "NUGGETFLOW_KAFKA_SASL_USERNAME": "nuggetflow",
                           "NUGGETFLOW_KAFKA_SASL_PASSWORD": "inline-secret"})
    options = kafka_client_options(s)
    assert options["security_protocol"] == "SASL_SSL"
    assert options["sasl_mechanism"] == "SCRAM-SHA-512"
    assert isinstance(options["ssl_context"], ssl.SSLContext)
    assert faust_credentials(s).protocol.value == "SASL_SSL"


@pytest.mark.parametrize("env, field", [
    ({"NUGGETFLOW_KAFKA_SECURITY_PROTOCOL": "TLS"}, "NUGGETFLOW_KAFKA_SECURITY_PROTOCOL"),
    ({"NUGGETFLOW_KAFKA_SASL_MECHANISM": "GSSAPI"}, "NUGGETFLOW_KAFKA_SASL_MECHANISM"),
    ({"NUGGETFLOW_KAFKA_SECURITY_PROTOCOL": "SASL_PLAINTEXT"},
     "NUGGETFLOW_KAFKA_SASL_USERNAME"),
    ({"NUGGETFLOW_KAFKA_SECURITY_PROTOCOL": "SASL_PLAINTEXT",
      "NUGGETFLOW_KAFKA_SASL_USERNAME": "nf"}, "NUGGETFLOW_KAFKA_SASL_PASSWORD_FILE"),
    ({"NUGGETFLOW_KAFKA_SASL_USERNAME": "nf"}, "NUGGETFLOW_KAFKA_SECURITY_PROTOCOL"),
    ({"NUGGETFLOW_KAFKA_SSL_CA_FILE": "/nonexistent.pem"}, "NUGGETFLOW_KAFKA_SSL_CA_FILE"),
])
def test_bad_kafka_security_names_the_variable(env: dict[str, str], field: str) -> None:
    with pytest.raises(ConfigError) as err:
        Settings.from_env(env)
    assert err.value.field == field


# --- alert thresholds --------------------------------------------------------------------


def test_retrieve_latency_threshold_follows_the_store_unless_set() -> None:
    assert Settings.from_env({}).alert_retrieve_p99() == 0.025
    opensearch = Settings.from_env({"NUGGETFLOW_STORE": "opensearch://os:9200"})
    assert opensearch.alert_retrieve_p99() == 0.2
    assert opensearch.replace(alert_retrieve_p99_seconds=0.5).alert_retrieve_p99() == 0.5


@pytest.mark.parametrize("var, value", [
    ("NUGGETFLOW_ALERT_RETRIEVE_P99_SECONDS", "-1"), ("NUGGETFLOW_ALERT_ERROR_RATIO", "1.5"),
    ("NUGGETFLOW_ALERT_CONSUMER_LAG_MESSAGES", "-3"), ("NUGGETFLOW_ALERT_INO_PASS_RATIO", "2"),
    ("NUGGETFLOW_ALERT_LLM_COST_DOLLARS_PER_HOUR", "-0.1"),
])
def test_bad_alert_thresholds_name_the_variable(var: str, value: str) -> None:
    with pytest.raises(ConfigError) as err:
        Settings.from_env({var: value})
    assert err.value.field == var
