"""Real servers for integration tests, started by the project's own deploy/ scripts.

A server that cannot be started fails the tests that need it (never a skip). Set
NUGGETFLOW_TEST_OPENSEARCH_URL to use a node that is already running, and
NUGGETFLOW_TEST_KAFKA_BOOTSTRAP for a Kafka broker that is already running.
"""

from __future__ import annotations

import os
import socket
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _up(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as reply:
            return bool(reply.status == 200)
    except OSError:
        return False


@pytest.fixture(scope="session")
def opensearch_url() -> Iterator[str]:
    """URL of a real OpenSearch node (deploy/opensearch/node.sh start)."""
    given = os.environ.get("NUGGETFLOW_TEST_OPENSEARCH_URL")
    if given:
        if not _up(given):
            pytest.fail(f"NUGGETFLOW_TEST_OPENSEARCH_URL={given} does not answer")
        yield given
        return
    port = os.environ.get("NUGGETFLOW_OPENSEARCH_PORT", "19200")
    url = f"http://127.0.0.1:{port}"
    started = not _up(url)
    if started:
        proc = subprocess.run([str(ROOT / "deploy/opensearch/node.sh"), "start"],
                              capture_output=True, text=True, timeout=900)
        if proc.returncode != 0:
            pytest.fail("OpenSearch node did not start:\n" + proc.stdout[-3000:]
                        + proc.stderr[-3000:])
    yield url
    if started:
        subprocess.run([str(ROOT / "deploy/opensearch/node.sh"), "stop"], timeout=120,
                       check=False)


def _port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=2):
            return True
    except OSError:
        return False


@pytest.fixture(scope="session")
def kafka_bootstrap() -> Iterator[str]:
    """host:port of a real Kafka broker (deploy/kafka/broker.sh start; stopped at the end
    if this fixture started it)."""
    given = os.environ.get("NUGGETFLOW_TEST_KAFKA_BOOTSTRAP")
    if given:
        host, _, given_port = given.rpartition(":")
        if not _port_open(host, int(given_port)):
            pytest.fail(f"NUGGETFLOW_TEST_KAFKA_BOOTSTRAP={given} does not answer")
        yield given
        return
    port = int(os.environ.get("NUGGETFLOW_KAFKA_PORT", "19092"))
    script = str(ROOT / "deploy/kafka/broker.sh")
    started = not _port_open("127.0.0.1", port)
    if started:
        proc = subprocess.run([script, "start"], capture_output=True, text=True, timeout=900)
        if proc.returncode != 0:
            pytest.fail("Kafka broker did not start:\n" + proc.stdout[-3000:]
                        + proc.stderr[-3000:])
    yield f"127.0.0.1:{port}"
    if started:
        subprocess.run([script, "stop"], timeout=120, check=False)
