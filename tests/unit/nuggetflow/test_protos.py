"""Generated protobuf code is up to date with protos/ (one pinned command makes it), for
both copies: the server's nuggetflow/v1 and the client distribution's
client/nuggetflow_client/v1."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SERVER = ROOT / "nuggetflow" / "v1"
CLIENT = ROOT / "client" / "nuggetflow_client" / "v1"


def test_generated_code_is_not_stale() -> None:
    proc = subprocess.run([sys.executable, "scripts/gen_protos.py", "--check"], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def _copy_repo(tmp_path: Path) -> Path:
    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "protos", copy / "protos")
    shutil.copytree(ROOT / "scripts", copy / "scripts")
    for gen in (SERVER, CLIENT):
        shutil.copytree(gen, copy / gen.relative_to(ROOT),
                        ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def _check(repo: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "scripts/gen_protos.py", "--check"], cwd=repo,
                          capture_output=True, text=True)


def test_check_detects_a_changed_proto(tmp_path: Path) -> None:
    """The staleness check itself can fail: run it on a copy with an edited proto."""
    copy = _copy_repo(tmp_path)
    assert _check(copy).returncode == 0, "an unchanged copy is not stale"
    proto = copy / "protos" / "nuggetflow" / "v1" / "feedback.proto"
    proto.write_text(proto.read_text().replace("string agent = 9;",
                                               "string agent = 9;\n  string extra = 10;"))
    proc = _check(copy)
    assert proc.returncode == 1
    assert "nuggetflow/v1/feedback_pb2.py" in proc.stderr
    assert "client/nuggetflow_client/v1/feedback_pb2.py" in proc.stderr, \
        "the client's copy is checked too"


def test_check_detects_a_hand_edited_or_missing_client_file(tmp_path: Path) -> None:
    copy = _copy_repo(tmp_path)
    stub = copy / "client" / "nuggetflow_client" / "v1" / "query_service_pb2_grpc.py"
    stub.write_text(stub.read_text() + "\n# edited by hand\n")
    proc = _check(copy)
    assert proc.returncode == 1 and "nuggetflow_client/v1/query_service_pb2_grpc.py" in \
        proc.stderr
    stub.unlink()
    proc = _check(copy)
    assert proc.returncode == 1 and "nuggetflow_client/v1/query_service_pb2_grpc.py" in \
        proc.stderr
    (copy / "client" / "nuggetflow_client" / "v1" / "stray_pb2.py").write_text("")
    assert "stray_pb2.py" in _check(copy).stderr, "a file the generator does not make"


def test_client_copy_differs_only_in_python_module_paths() -> None:
    """Same descriptors, same service names; only imports and module names move."""
    server = sorted(p.name for p in SERVER.iterdir() if p.is_file())
    assert server == sorted(p.name for p in CLIENT.iterdir() if p.is_file())
    for name in server:
        ours = (CLIENT / name).read_text()
        assert not re.search(r"^\s*(from|import)\s+nuggetflow\.v1\b", ours, re.M), name
        if name != "__init__.py":
            assert ours.replace("nuggetflow_client.v1", "nuggetflow.v1").replace(
                "nuggetflow_client/v1", "nuggetflow/v1") == (SERVER / name).read_text(), name
    grpc_stub = (CLIENT / "query_service_pb2_grpc.py").read_text()
    assert "'/nuggetflow.v1.QueryService/Retrieve'" in grpc_stub, "the wire name is kept"
