"""The compose stack is safe by default, checked on what compose would run: the file goes
through `docker-compose config` (deploy/compose-check.sh --print: variables interpolated
with their defaults, paths resolved), with throwaway secrets from deploy/secrets/init.sh,
and the parsed result is asserted on:

- no port published on 0.0.0.0 or on every interface: all on 127.0.0.1, and only gRPC,
  Grafana and Prometheus' UI; Kafka, OpenSearch and /metrics only on an internal network;
- no default credentials: no password, token or key as an environment value, no admin/admin
  or changeme, OpenSearch's security plugin on, Kafka clients on SASL, no lifecycle API;
- every secret from a file, mounted where the settings that read it point;
- a healthcheck on every long-running service;
- every LLM setting passed to the worker;
- each nuggetflow service's environment is a valid settings object with those secrets.

Each holds for the base file alone and for the base with the cluster override
(deploy/docker-compose.cluster.yml: three brokers, three nodes, two stream workers), whose
own shape is checked at the end.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from nuggetflow.settings import Settings, parse_token_map

ROOT = Path(__file__).resolve().parents[3]
DEPLOY = ROOT / "deploy"
COMPOSE_CHECK = DEPLOY / "compose-check.sh"
INIT = DEPLOY / "secrets" / "init.sh"
NUGGETFLOW_SERVICES = ("query", "worker", "ingest")
VARIANTS = {"single": ("docker-compose.yml",),
            "cluster": ("docker-compose.yml", "docker-compose.cluster.yml")}
SECRET_WORDS = re.compile(r"PASSWORD|PASSWD|SECRET|TOKEN|API_KEY|CREDENTIAL|JAAS", re.I)
DEFAULT_CREDENTIALS = re.compile(r"(?<![A-Za-z0-9])(admin|changeme|password|secret|"
                                 r"letmein|root|guest)(?![A-Za-z0-9])", re.I)


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without any variable the compose files interpolate (so defaults
    apply), plus ``extra``."""
    text = "".join((DEPLOY / f).read_text() for f in VARIANTS["cluster"])
    used = set(re.findall(r"\$\{(\w+)", text))
    return {**{k: v for k, v in os.environ.items() if k not in used}, **extra}


def compose_config(env: dict[str, str], variant: str = "single") -> dict[str, Any]:
    files = [str(DEPLOY / f) for f in VARIANTS[variant]]
    proc = subprocess.run([str(COMPOSE_CHECK), "--print", *files], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    data = yaml.safe_load(proc.stdout)
    assert isinstance(data, dict)
    return data


@pytest.fixture(scope="module")
def secrets_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("compose") / "secrets"
    proc = subprocess.run([str(INIT), "--tenants", "acme,globex", str(path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return path


@pytest.fixture(scope="module", params=sorted(VARIANTS))
def config(secrets_dir: Path, request: pytest.FixtureRequest) -> dict[str, Any]:
    return compose_config(clean_env(NUGGETFLOW_SECRETS_DIR=str(secrets_dir)), request.param)


def named(config: dict[str, Any], kind: str) -> list[str]:
    """The services of a kind: ``kafka`` is kafka, kafka-2, ... in the cluster variant."""
    return [n for n in config["services"] if n == kind or n.startswith(f"{kind}-")]


def long_running(config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Services that stay up (a one-shot job has restart "no" and a profile)."""
    return {name: svc for name, svc in config["services"].items()
            if not (svc.get("restart") == "no" and svc.get("profiles"))}


def published(svc: dict[str, Any]) -> list[tuple[str, int, int]]:
    """(host address, host port, container port) of each published port."""
    out = []
    for mapping in svc.get("ports", []):
        if isinstance(mapping, dict):  # long syntax
            out.append((mapping.get("host_ip", ""), int(mapping["published"]),
                        int(mapping["target"])))
            continue
        parts = str(mapping).split("/")[0].split(":")
        address = ":".join(parts[:-2]) if len(parts) > 2 else ""
        out.append((address, int(parts[-2]) if len(parts) > 1 else 0, int(parts[-1])))
    return out


def env_of(svc: dict[str, Any]) -> dict[str, str]:
    env = svc.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {k: "" if v is None else str(v) for k, v in env.items()}


def mounted_secrets(svc: dict[str, Any]) -> dict[str, str]:
    """secret name -> path inside the container."""
    out = {}
    for item in svc.get("secrets", []):
        name = item if isinstance(item, str) else item["source"]
        target = name if isinstance(item, str) else item.get("target", name)
        out[name] = target if target.startswith("/") else f"/run/secrets/{target}"
    return out


# --- ports and networks ----------------------------------------------------------------


def test_no_port_is_published_on_every_interface(config: dict[str, Any]) -> None:
    ports = {name: published(svc) for name, svc in config["services"].items()}
    for name, mappings in ports.items():
        for address, host, _ in mappings:
            assert address not in ("", "0.0.0.0", "::", "[::]"), (name, address, host)
            assert address == "127.0.0.1", (name, address, host)
    # only what users need: gRPC, the review console, Grafana, Prometheus' read-only UI
    assert {n: [(h, c) for _, h, c in m] for n, m in ports.items() if m} == {
        "query": [(50051, 50051)], "console": [(8080, 8080)], "grafana": [(3000, 3000)],
        "prometheus": [(9090, 9090)]}


def test_the_bind_address_is_an_explicit_choice(secrets_dir: Path) -> None:
    told = compose_config(clean_env(NUGGETFLOW_SECRETS_DIR=str(secrets_dir),
                                    NUGGETFLOW_BIND="10.0.0.5"))
    addresses = {a for svc in told["services"].values() for a, _, _ in published(svc)}
    assert addresses == {"10.0.0.5"}


def test_kafka_opensearch_and_metrics_stay_on_an_internal_network(
        config: dict[str, Any]) -> None:
    networks = config["networks"]
    internal = {name for name, net in networks.items() if (net or {}).get("internal")}
    assert internal, "no internal network"
    services = config["services"]
    for name in named(config, "kafka") + named(config, "opensearch"):
        assert set(services[name]["networks"]) <= internal, name
        assert not services[name].get("ports"), name
    for name, svc in services.items():
        assert svc.get("network_mode") is None, name  # no host networking
    for name in ("query", "worker", "prometheus"):
        assert set(services[name]["networks"]) & internal, name
    # the services' /metrics ports are reached by Prometheus over the internal network
    metrics_ports = {int(env_of(services[n])["NUGGETFLOW_METRICS_PORT"]) for n in
                     ("query", "worker")}
    host_ports = {h for svc in services.values() for _, h, _ in published(svc)}
    assert not metrics_ports & host_ports


# --- credentials and secrets -------------------------------------------------------------


def secret_settings() -> set[str]:
    """The NUGGETFLOW_* variables that hold a secret as their value."""
    return {f"NUGGETFLOW_{f.name.upper()}" for f in dataclasses.fields(Settings)
            if f.metadata.get("secret")}


def test_no_credential_is_an_environment_value(config: dict[str, Any]) -> None:
    inline = secret_settings()
    assert {"NUGGETFLOW_AUTH_TOKENS", "NUGGETFLOW_OPENAI_API_KEY",
            "NUGGETFLOW_OPENSEARCH_PASSWORD", "NUGGETFLOW_KAFKA_SASL_PASSWORD"} <= inline
    for name, svc in config["services"].items():
        for var, value in env_of(svc).items():
            assert var not in inline, f"{name}: {var} carries a secret as a value"
            secret_file = var.removesuffix("_FILE") in inline or var == (
                "NUGGETFLOW_AUTH_TOKENS_FILE")
            other = not var.startswith("NUGGETFLOW_") and SECRET_WORDS.search(var)
            if secret_file or other:
                assert var.endswith("_FILE"), f"{name}: {var} carries a secret as a value"
                assert value.startswith("/run/secrets/"), (name, var, value)
            if "PASSWORD" in var.upper() or "USER" in var.upper():
                continue
            assert not re.search(r"(?i)(sk-[A-Za-z0-9]{8,}|Bearer\s+\S+)", value), (name, var)


def test_no_default_credentials(config: dict[str, Any]) -> None:
    services = config["services"]
    for name, svc in services.items():
        for var, value in env_of(svc).items():
            if "PASSWORD" in var.upper() or "SECRET" in var.upper():
                assert not DEFAULT_CREDENTIALS.fullmatch(value), (name, var)
        assert "admin:admin" not in json.dumps(svc), name
    grafana = env_of(services["grafana"])
    assert "GF_SECURITY_ADMIN_PASSWORD" not in grafana
    assert grafana["GF_SECURITY_ADMIN_PASSWORD__FILE"].startswith("/run/secrets/")
    assert grafana.get("GF_AUTH_ANONYMOUS_ENABLED", "false") == "false"
    for node in named(config, "opensearch"):
        opensearch = env_of(services[node])
        assert opensearch.get("DISABLE_SECURITY_PLUGIN", "false") != "true"
        assert "OPENSEARCH_INITIAL_ADMIN_PASSWORD" not in opensearch
        assert "/run/secrets/" in " ".join(services[node]["entrypoint"])
    for broker in named(config, "kafka"):
        kafka = env_of(services[broker])
        protocols = dict(p.split(":") for p in kafka["KAFKA_LISTENER_SECURITY_PROTOCOL_MAP"]
                         .split(","))
        for listener in kafka["KAFKA_LISTENERS"].split(","):
            name, _, address = listener.partition("://")
            host = address.rsplit(":", 1)[0]
            if host not in ("localhost", "127.0.0.1"):  # reachable from other containers
                assert protocols[name].startswith("SASL_"), (broker, listener)
        assert "java.security.auth.login.config=/run/secrets/" in kafka["KAFKA_OPTS"]
    worker = env_of(services["worker"])
    assert worker["NUGGETFLOW_KAFKA_SECURITY_PROTOCOL"].startswith("SASL_")
    for name in NUGGETFLOW_SERVICES:
        env = env_of(services[name])
        assert env["NUGGETFLOW_STORE"].startswith("opensearchs://"), name
        assert env["NUGGETFLOW_OPENSEARCH_USER"], name
    query = env_of(services["query"])
    assert query["NUGGETFLOW_AUTH_TOKENS_FILE"].startswith("/run/secrets/")
    assert query.get("NUGGETFLOW_INSECURE_DEV", "false") == "false"
    assert not any("enable-lifecycle" in arg or "enable-admin-api" in arg
                   for arg in services["prometheus"]["command"])


def test_every_secret_comes_from_a_file(config: dict[str, Any], secrets_dir: Path) -> None:
    declared = config["secrets"]
    assert declared
    for name, secret in declared.items():
        assert set(secret) == {"file"}, f"secret {name} is not a file"
        assert Path(secret["file"]).parent == secrets_dir, name
        assert Path(secret["file"]).is_file(), f"init.sh made no {secret['file']}"
    for name, svc in config["services"].items():
        mounts = mounted_secrets(svc)
        assert set(mounts) <= set(declared), name
        text = json.dumps(svc)
        for path in re.findall(r"/run/secrets/[A-Za-z0-9_.-]+", text):
            assert path in mounts.values(), f"{name} reads {path} but does not mount it"


# --- healthchecks, the one-shot ingest, the LLM settings ------------------------------------


def test_every_long_running_service_has_a_healthcheck(config: dict[str, Any]) -> None:
    services = long_running(config)
    nodes = {n for n in services if n.startswith(("kafka-", "opensearch-"))}
    assert set(services) - nodes == {"kafka", "opensearch", "query", "worker", "prometheus",
                                     "grafana", "console"}
    for name, svc in services.items():
        check = svc.get("healthcheck")
        assert check and not check.get("disable") and check["test"][0] in ("CMD",
                                                                           "CMD-SHELL"), name
    assert config["services"]["query"]["healthcheck"]["test"][1:] == ["nuggetflow", "health"]
    assert config["services"]["worker"]["healthcheck"]["test"][1:] == [
        "nuggetflow", "health", "--metrics"]
    for name, svc in services.items():
        for dep, how in (svc.get("depends_on") or {}).items():
            if dep in services:
                assert how["condition"] in ("service_healthy", "service_started"), name


def test_a_one_shot_ingest_loads_a_corpus(config: dict[str, Any]) -> None:
    ingest = config["services"]["ingest"]
    assert ingest["restart"] == "no" and ingest["profiles"]
    assert ingest["command"][0] == "ingest"
    corpus = next(v for v in ingest["volumes"] if v.split(":")[1] == "/corpus")
    source = Path(corpus.split(":")[0])
    assert (source / Path(ingest["command"][1]).name).is_file(), source
    assert env_of(ingest)["NUGGETFLOW_STORE"] == env_of(config["services"]["query"])[
        "NUGGETFLOW_STORE"], "ingest writes the store the query service reads"
    assert ingest["depends_on"]["opensearch"]["condition"] == "service_healthy"


def test_every_llm_setting_reaches_the_worker(config: dict[str, Any], secrets_dir: Path
                                              ) -> None:
    worker = env_of(config["services"]["worker"])
    llm_settings = [var for var, _, _ in Settings.describe()
                    if var.startswith(("NUGGETFLOW_LLM", "NUGGETFLOW_BUDGET_",
                                       "NUGGETFLOW_OPENAI_"))
                    and var != "NUGGETFLOW_OPENAI_API_KEY"]  # the key: its _FILE form
    assert {"NUGGETFLOW_LLM", "NUGGETFLOW_LLM_MODEL", "NUGGETFLOW_OPENAI_BASE_URL",
            "NUGGETFLOW_OPENAI_API_KEY_FILE"} <= set(llm_settings)
    missing = [var for var in llm_settings if var not in worker]
    assert not missing, f"not passed to the worker: {missing}"
    # the defaults compose fills in are the settings' own
    defaults = Settings.from_env({})
    for var in llm_settings:
        if var.endswith("_FILE"):
            continue
        field = var.removeprefix("NUGGETFLOW_").lower()
        expected = getattr(defaults, field)
        assert type(expected)(worker[var]) == expected, (var, worker[var], expected)
    # and what the user sets is what the worker gets
    told = compose_config(clean_env(
        NUGGETFLOW_SECRETS_DIR=str(secrets_dir), NUGGETFLOW_LLM="openai",
        NUGGETFLOW_LLM_MODEL="gpt-4o", NUGGETFLOW_LLM_ROLE_MODELS="reflector=o3",
        NUGGETFLOW_OPENAI_BASE_URL="https://llm.example/v1"))
    env = env_of(told["services"]["worker"])
    assert (env["NUGGETFLOW_LLM"], env["NUGGETFLOW_LLM_MODEL"],
            env["NUGGETFLOW_LLM_ROLE_MODELS"], env["NUGGETFLOW_OPENAI_BASE_URL"]) == (
        "openai", "gpt-4o", "reflector=o3", "https://llm.example/v1")


def container_settings(config: dict[str, Any], name: str) -> Settings:
    """What a nuggetflow container reads at start: its environment, with the /run/secrets
    paths standing for the files compose mounts there."""
    declared = {secret: s["file"] for secret, s in config["secrets"].items()}
    svc = config["services"][name]
    where = {path: declared[secret] for secret, path in mounted_secrets(svc).items()}
    return Settings.from_env({var: where.get(value, value)
                              for var, value in env_of(svc).items()})


def test_each_service_environment_is_valid_settings_with_the_secrets(
        config: dict[str, Any]) -> None:
    """What each nuggetflow container would read at start: its environment, with the
    /run/secrets paths standing for the files compose mounts there."""
    from query.auth import server_auth

    for name in NUGGETFLOW_SERVICES:
        settings = container_settings(config, name)  # validates: files exist, tokens parse
        assert settings.opensearch_password_value(), name
        if name == "query":
            assert not server_auth(settings, announce=False).open, "the service needs tokens"
        if name == "worker":
            assert settings.kafka_sasl_password_value(), name


# --- deploy/secrets/init.sh ------------------------------------------------------------------


def test_init_makes_strong_private_secrets_and_never_overwrites(tmp_path: Path) -> None:
    target = tmp_path / "s"
    first = subprocess.run([str(INIT), str(target)], capture_output=True, text=True,
                           timeout=60)
    assert first.returncode == 0, first.stderr
    assert stat.S_IMODE(target.stat().st_mode) == 0o700
    files = {p.name: p.read_text() for p in target.iterdir()}
    assert set(files) == {"nuggetflow_tokens.json", "opensearch_admin_password",
                          "kafka_password", "kafka_server_jaas.conf",
                          "grafana_admin_password", "openai_api_key"}
    tokens = parse_token_map(files["nuggetflow_tokens.json"], "tokens")
    assert [sorted(t) for t in tokens.values()] == [["gnome"]]
    assert all(len(token) >= 32 for token in tokens)
    password = files["opensearch_admin_password"]
    assert len(password) >= 24 and all(re.search(p, password) for p in
                                       ("[A-Z]", "[a-z]", "[0-9]", "[^A-Za-z0-9]"))
    assert len(files["kafka_password"]) >= 32 and len(files["grafana_admin_password"]) >= 24
    assert f'user_nuggetflow="{files["kafka_password"]}";' in files["kafka_server_jaas.conf"]
    assert files["openai_api_key"] == ""
    for secret in ("opensearch_admin_password", "kafka_password", "grafana_admin_password"):
        assert not DEFAULT_CREDENTIALS.fullmatch(files[secret])
    again = subprocess.run([str(INIT), str(target)], capture_output=True, text=True,
                           timeout=60)
    assert again.returncode == 0 and "nothing changed" in again.stdout
    assert {p.name: p.read_text() for p in target.iterdir()} == files
    other = subprocess.run([str(INIT), str(tmp_path / "t")], capture_output=True, text=True,
                           timeout=60)
    assert other.returncode == 0
    assert (tmp_path / "t" / "kafka_password").read_text() != files["kafka_password"]


def test_generated_secrets_stay_out_of_git(config: dict[str, Any]) -> None:
    for secret in config["secrets"].values():
        path = f"deploy/secrets/{Path(secret['file']).name}"
        ignored = subprocess.run(["git", "check-ignore", "-q", path], cwd=ROOT, timeout=60)
        assert ignored.returncode == 0, f"{path} would not be git-ignored"
    for kept in ("init.sh", "README.md", ".gitignore"):
        ignored = subprocess.run(["git", "check-ignore", "-q", f"deploy/secrets/{kept}"],
                                 cwd=ROOT, timeout=60)
        assert ignored.returncode == 1, kept


# --- the cluster variant -------------------------------------------------------------------


def test_the_cluster_variant_runs_three_brokers_three_nodes_and_two_workers(
        secrets_dir: Path) -> None:
    config = compose_config(clean_env(NUGGETFLOW_SECRETS_DIR=str(secrets_dir)), "cluster")
    services = config["services"]
    brokers = [env_of(services[n]) for n in named(config, "kafka")]
    assert [b["KAFKA_NODE_ID"] for b in brokers] == ["1", "2", "3"]
    assert len({b["CLUSTER_ID"] for b in brokers}) == 1, "one cluster id"
    voters = {b["KAFKA_CONTROLLER_QUORUM_VOTERS"] for b in brokers}
    assert voters == {"1@kafka:9093,2@kafka-2:9093,3@kafka-3:9093"}
    for name, b in zip(named(config, "kafka"), brokers, strict=True):
        assert f"CLIENT://{name}:9092" in b["KAFKA_ADVERTISED_LISTENERS"]
        assert (b["KAFKA_DEFAULT_REPLICATION_FACTOR"], b["KAFKA_MIN_INSYNC_REPLICAS"],
                b["KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR"]) == ("3", "2", "3")
        assert b["KAFKA_SASL_MECHANISM_INTER_BROKER_PROTOCOL"] == "PLAIN"
        check = services[name]["healthcheck"]["test"]
        local = [x.split("://")[1] for x in b["KAFKA_LISTENERS"].split(",")
                 if x.startswith("LOCAL://")]
        assert check[-1] == local[0], "the healthcheck reaches the local listener"
    nodes = named(config, "opensearch")
    assert len(nodes) == 3
    for node in nodes:
        env = env_of(services[node])
        assert env["discovery.type"] != "single-node"
        assert env["node.name"] == node
        assert env["discovery.seed_hosts"].split(",") == nodes
        assert env["cluster.initial_cluster_manager_nodes"].split(",") == nodes
        assert services[node]["volumes"], node  # each node its own data
    assert len({v for n in nodes for v in services[n]["volumes"]}) == 3
    assert services["worker"]["deploy"]["replicas"] == 2
    for name in NUGGETFLOW_SERVICES:
        settings = container_settings(config, name)
        assert settings.store == (
            "opensearchs://opensearch:9200,opensearch-2:9200,opensearch-3:9200"), name
        assert (settings.opensearch_shards, settings.opensearch_replicas) == (3, 1), name
    worker = container_settings(config, "worker")
    assert worker.kafka_bootstrap == "kafka:9092,kafka-2:9092,kafka-3:9092"
    assert (worker.stream_replication_factor, worker.stream_min_insync_replicas) == (3, 2)
    assert worker.stream_partitions >= services["worker"]["deploy"]["replicas"]
    for name in ("query", "worker"):
        needs = set(services[name]["depends_on"])
        assert {"opensearch", "opensearch-2", "opensearch-3"} <= needs, name
    assert {"kafka", "kafka-2", "kafka-3"} <= set(services["worker"]["depends_on"])


def test_init_gives_the_brokers_a_user_of_their_own(secrets_dir: Path) -> None:
    jaas = (secrets_dir / "kafka_server_jaas.conf").read_text()
    user = re.search(r'username="(\w+)"\s+password="(\w+)"', jaas)
    assert user is not None
    assert f'user_{user[1]}="{user[2]}"' in jaas, "the brokers accept their own login"
    assert len(user[2]) >= 32 and user[2] != (secrets_dir / "kafka_password").read_text()
