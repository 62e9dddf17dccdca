"""Bad input files end in one clear line and exit status 2, never a traceback.

Every command that reads a file the user names (ingest, run and its --corpus, optimize
--feedback and --corpus, publish, eval's --corpus, --cases and --traffic) gets a missing
file, a directory, a binary file and a Latin-1 file, through the real CLI in a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
GNOME = ROOT / "bench" / "data" / "gnome-help"
EVENT = {"eventId": "e1", "tenant": "acme", "query": "who resets passwords",
         "feedback": {"rating": "down", "comment": "only the owner can"}}
DOC = {"id": "d1", "tenant": "acme", "title": "Passwords", "text": "Reset it in Settings."}


def _files(tmp: Path) -> dict[str, tuple[Path, str]]:
    """Bad input -> (path, what the one-line error must say)."""
    binary = tmp / "binary.jsonl"
    binary.write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00" + bytes(range(256)) * 4)
    latin1 = tmp / "latin1.jsonl"  # a blank line 1 (skipped by every reader), then Latin-1
    latin1.write_bytes(b"\n" + json.dumps(
        {**DOC, "id": "d2", "title": "Caf\u00e9"}).encode().replace(b"\\u00e9", b"\xe9")
        + b"\n")
    return {"missing": (tmp / "nope.jsonl", "no such file"),
            "directory": (tmp, "is a directory"),
            "binary": (binary, "line 1: binary data"),
            "latin1": (latin1, "line 2: not UTF-8 text (byte 0xe9")}


def _commands(bad: Path, tmp: Path) -> dict[str, list[str]]:
    events = tmp / "events.jsonl"
    events.write_text(json.dumps(EVENT) + "\n")
    return {
        "ingest": ["ingest", str(bad)],
        "run": ["run", str(bad)],
        "run --corpus": ["run", str(events), "--corpus", str(bad)],
        "optimize --feedback": ["optimize", "--feedback", str(bad), "--out",
                                str(tmp / "out.jsonl")],
        "optimize --corpus": ["optimize", "--feedback", str(events), "--corpus", str(bad),
                              "--out", str(tmp / "out.jsonl")],
        "publish": ["publish", str(bad)],
        "eval --corpus": ["eval", "--corpus", str(bad), "--cases", f"{GNOME}/cases.jsonl",
                          "--workdir", str(tmp / "eval")],
        "eval --cases": ["eval", "--cases", str(bad), "--corpus", f"{GNOME}/corpus.jsonl",
                         "--workdir", str(tmp / "eval")],
        "eval --traffic": ["eval", "--traffic", str(bad), "--cases", f"{GNOME}/cases.jsonl",
                           "--corpus", f"{GNOME}/corpus.jsonl", "--workdir", str(tmp / "eval")],
    }


def _run(args: list[str], tmp: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NUGGETFLOW_STORE": f"sqlite:///{tmp}/cli.db",
           "NUGGETFLOW_LOG_LEVEL": "ERROR", "NUGGETFLOW_KAFKA_BOOTSTRAP": "127.0.0.1:1"}
    return subprocess.run([sys.executable, "-m", "app.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def test_bad_files_are_one_line_errors_with_exit_status_2(tmp_path: Path) -> None:
    cases = []
    for kind, (path, says) in _files(tmp_path).items():
        for name, args in _commands(path, tmp_path).items():
            cases.append((f"{name} <{kind}>", args, path, says))
    with ThreadPoolExecutor(max_workers=4) as pool:
        procs = list(pool.map(lambda c: _run(c[1], tmp_path), cases))
    failures = []
    for (label, _, path, says), proc in zip(cases, procs, strict=True):
        lines = proc.stderr.strip().splitlines()
        if (proc.returncode != 2 or "Traceback" in proc.stderr or len(lines) != 1
                or not lines[0].startswith(f"nuggetflow: error: {path}") or says not in lines[0]):
            failures.append(f"{label}: exit {proc.returncode}, stderr:\n{proc.stderr[-800:]}")
    assert not failures, "\n\n".join(failures)
    assert not (tmp_path / "cli.db").exists(), "nothing opened the store"
    assert not (tmp_path / "eval").exists(), "eval read its inputs before its work directory"
