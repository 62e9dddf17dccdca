"""The streaming commands without a broker: help, validation before connecting, errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app.cli", *args], cwd=ROOT,
                          env={**os.environ, **env}, capture_output=True, text=True,
                          timeout=120)


def test_help_lists_the_stream_commands() -> None:
    out = run("--help").stdout
    for cmd in ("publish", "worker", "run", "review-event"):
        assert cmd in out
    assert "--no-validate" in run("publish", "--help").stdout


def test_review_event_is_validated_before_connecting() -> None:
    proc = run("review-event", "n-1", "--tenant", "acme", "--action", "revert",
               NUGGETFLOW_KAFKA_BOOTSTRAP="127.0.0.1:1")
    assert proc.returncode == 2
    assert "target_version_id: revert needs target_version_id" in proc.stderr


def test_unreachable_broker_is_an_error_naming_the_setting(tmp_path: Path) -> None:
    events = tmp_path / "e.jsonl"
    events.write_text('{"eventId": "a", "tenant": "t", "query": "q", '
                      '"feedback": {"rating": "down"}}\n')
    proc = run("publish", str(events), NUGGETFLOW_KAFKA_BOOTSTRAP="127.0.0.1:1")
    assert proc.returncode == 2
    assert "NUGGETFLOW_KAFKA_BOOTSTRAP" in proc.stderr and "cannot be reached" in proc.stderr


def test_bad_streaming_setting_is_reported() -> None:
    proc = run("worker", NUGGETFLOW_REVIEW_POLICY="sometimes")
    assert proc.returncode == 2 and "NUGGETFLOW_REVIEW_POLICY" in proc.stderr
