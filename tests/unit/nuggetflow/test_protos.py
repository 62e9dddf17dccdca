"""Generated protobuf code is up to date with protos/ (one pinned command makes it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_generated_code_is_not_stale() -> None:
    proc = subprocess.run([sys.executable, "scripts/gen_protos.py", "--check"], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_check_detects_a_changed_proto(tmp_path: Path) -> None:
    """The staleness check itself can fail: run it on a copy with an edited proto."""
    import shutil

    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "protos", copy / "protos")
    shutil.copytree(ROOT / "scripts", copy / "scripts")
    shutil.copytree(ROOT / "nuggetflow" / "v1", copy / "nuggetflow" / "v1",
                    ignore=shutil.ignore_patterns("__pycache__"))
    proto = copy / "protos" / "nuggetflow" / "v1" / "feedback.proto"
    proto.write_text(proto.read_text().replace("string agent = 9;",
                                               "string agent = 9;\n  string extra = 10;"))
    proc = subprocess.run([sys.executable, "scripts/gen_protos.py", "--check"], cwd=copy,
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert "feedback_pb2" in proc.stderr
