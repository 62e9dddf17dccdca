"""Kafka with authentication, as in deploy/docker-compose.yml: a real broker
(deploy/kafka/broker.sh with a SASL_PLAINTEXT listener, SASL/PLAIN) whose JAAS file and
client password come from deploy/secrets/init.sh; `nuggetflow publish` and
`nuggetflow worker` (Faust consumer and producer, topic creation, the lag sampler) connect
with NUGGETFLOW_KAFKA_SECURITY_PROTOCOL / _SASL_USERNAME / _SASL_PASSWORD_FILE, and a
wrong or missing password is refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from query.backends.sqlite import SQLiteStore
from query.embeddings import MiniLMEmbedder
from query.index import NuggetIndex
from stream.synthetic import correction, event
from tests.integration.stream_support import ROOT, Deployment, wait_until
from tests.support.net import free_port

pytestmark = [pytest.mark.integration, pytest.mark.slow]

BROKER_SH = ROOT / "deploy" / "kafka" / "broker.sh"
INIT_SH = ROOT / "deploy" / "secrets" / "init.sh"


@pytest.fixture(scope="module")
def sasl_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """(SASL bootstrap, secrets dir) of a broker of its own (own ports and state)."""
    base = tmp_path_factory.mktemp("sasl-broker")
    secrets = base / "secrets"
    made = subprocess.run([str(INIT_SH), str(secrets)], capture_output=True, text=True,
                          timeout=60)
    assert made.returncode == 0, made.stderr
    sasl_port = free_port()
    env = {**os.environ, "NUGGETFLOW_VAR_DIR": str(base / "var"),
           "NUGGETFLOW_KAFKA_PORT": str(free_port()),
           "NUGGETFLOW_KAFKA_CONTROLLER_PORT": str(free_port()),
           "NUGGETFLOW_KAFKA_SASL_PORT": str(sasl_port),
           "NUGGETFLOW_KAFKA_SASL_JAAS": str(secrets / "kafka_server_jaas.conf")}
    proc = subprocess.run([str(BROKER_SH), "start"], env=env, capture_output=True, text=True,
                          timeout=900)
    if proc.returncode != 0:
        pytest.fail("SASL broker did not start:\n" + proc.stdout[-3000:] + proc.stderr[-3000:])
    try:
        yield f"127.0.0.1:{sasl_port}", secrets
    finally:
        subprocess.run([str(BROKER_SH), "stop"], env=env, timeout=120, check=False)


def sasl_env(secrets: Path, password_file: Path | None = None) -> dict[str, str]:
    return {"NUGGETFLOW_KAFKA_SECURITY_PROTOCOL": "SASL_PLAINTEXT",
            "NUGGETFLOW_KAFKA_SASL_MECHANISM": "PLAIN",
            "NUGGETFLOW_KAFKA_SASL_USERNAME": "nuggetflow",
            "NUGGETFLOW_KAFKA_SASL_PASSWORD_FILE": str(password_file
                                                       or secrets / "kafka_password")}


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app.cli", *args], cwd=ROOT,
                          env={**os.environ, **env}, capture_output=True, text=True,
                          timeout=120)


async def test_publish_and_worker_authenticate_with_sasl(
        sasl_broker: tuple[str, Path], tmp_path: Path, embedder: MiniLMEmbedder) -> None:
    bootstrap, secrets = sasl_broker
    dep = Deployment.create(bootstrap, tmp_path, NUGGETFLOW_REVIEW_POLICY="manual",
                            **sasl_env(secrets))
    await dep.add_corpus(embedder)
    q, a, c = correction(0)
    feedback = tmp_path / "feedback.jsonl"
    feedback.write_text(json.dumps(event("sasl-1", "acme", q, a, c)) + "\n")

    proc = cli(dep.env, "publish", str(feedback))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["sent"] == 1

    worker = dep.worker("w").start()  # creates its topics and joins its group over SASL
    try:
        async def candidate() -> bool:
            index = NuggetIndex(SQLiteStore(dep.store_path), embedder, dep.settings)
            await index.start()
            try:
                return bool(await index.store.find_by_event("acme", "sasl-1"))
            finally:
                await index.stop()

        await wait_until(candidate, 120, "the candidate nugget", worker.tail)

        async def lag_sampled() -> bool:  # the lag sampler's admin client and consumer
            return "nuggetflow_stream_consumer_lag_messages{" in worker.metrics_text()

        await wait_until(lag_sampled, 60, "a consumer lag sample", worker.tail)
        assert "SaslAuthenticationFailed" not in worker.tail(100_000)
    finally:
        assert worker.stop() == 0, worker.tail()


def test_a_wrong_or_missing_password_is_refused(sasl_broker: tuple[str, Path],
                                                tmp_path: Path) -> None:
    bootstrap, secrets = sasl_broker
    feedback = tmp_path / "feedback.jsonl"
    q, a, c = correction(1)
    feedback.write_text(json.dumps(event("sasl-2", "acme", q, a, c)) + "\n")
    wrong = tmp_path / "wrong_password"
    wrong.write_text("not-the-password\n")
    base = {"NUGGETFLOW_KAFKA_BOOTSTRAP": bootstrap, "NUGGETFLOW_STORE":
            f"sqlite:///{tmp_path}/x.db"}

    proc = cli({**base, **sasl_env(secrets, wrong)}, "publish", str(feedback))
    assert proc.returncode == 2, proc.stderr
    assert "Authentication failed" in proc.stderr
    assert "NUGGETFLOW_KAFKA_BOOTSTRAP" in proc.stderr and "Traceback" not in proc.stderr

    plaintext = cli(base, "publish", str(feedback))  # no credentials at all
    assert plaintext.returncode == 2 and "Traceback" not in plaintext.stderr
