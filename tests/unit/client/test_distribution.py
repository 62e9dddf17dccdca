"""The nuggetflow-client distribution stands alone: its package imports nothing of the
server (nuggetflow, query, optimizer, stream) nor its heavy dependencies, its version and
pins follow the server's, and its wheel holds the stubs, their .pyi and py.typed."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

import nuggetflow
import nuggetflow_client

ROOT = Path(__file__).resolve().parents[3]
CLIENT = ROOT / "client"
BLOCKED = ("nuggetflow", "query", "optimizer", "stream", "tests", "onnxruntime", "faiss",
           "numpy", "tokenizers", "faust", "opensearchpy", "aiokafka")

# Runs in a fresh interpreter (-I: no PYTHONPATH, no cwd on the path) where importing any
# BLOCKED top-level package raises, whatever is installed.
ISOLATED = r"""
import importlib.abc, json, sys

BLOCKED = set(sys.argv[2].split(","))


class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"blocked: {name}")
        return None


sys.meta_path.insert(0, Block())
sys.path.insert(0, sys.argv[1])
try:
    import nuggetflow.settings  # noqa: F401
except ImportError:
    pass
else:
    raise SystemExit("the blocker does not block")

import nuggetflow_client
import nuggetflow_client.client
import nuggetflow_client.errors
import nuggetflow_client.feedback
from nuggetflow_client.v1 import (feedback_pb2, feedback_pb2_grpc, nugget_pb2,
                                  nugget_pb2_grpc, query_service_pb2,
                                  query_service_pb2_grpc)

event = nuggetflow_client.feedback_event("acme", "q", rating="up")
try:
    nuggetflow_client.FeedbackPublisher("127.0.0.1:9092")
except ImportError as exc:
    hint = str(exc)
else:
    raise SystemExit("FeedbackPublisher without aiokafka did not fail")
with nuggetflow_client.QueryClient("127.0.0.1:1", "t" * 16, timeout=5) as nf:
    try:
        nf.retrieve("acme", "q")
    except nuggetflow_client.Unavailable as exc:
        unavailable = exc.code
print(json.dumps({
    "hint": hint, "unavailable": unavailable, "event": event.event_id,
    "file": nuggetflow_client.__file__,
    "loaded": sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED),
}))
"""


def test_client_imports_and_works_without_the_server_packages() -> None:
    proc = subprocess.run([sys.executable, "-I", "-c", ISOLATED, str(CLIENT), ",".join(BLOCKED)],
                          capture_output=True, text=True, timeout=120, cwd=CLIENT.parent.parent)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out["loaded"] == []
    assert out["file"] == str(CLIENT / "nuggetflow_client" / "__init__.py")
    assert "pip install 'nuggetflow-client[kafka]'" in out["hint"]
    assert out["unavailable"] == "UNAVAILABLE" and out["event"]


def test_client_sources_name_no_server_package() -> None:
    """The package's own code (not only what one run happens to import) never imports the
    server's packages."""
    pattern = re.compile(r"^\s*(?:from|import)\s+(nuggetflow|query|optimizer|stream)\b(?!_)",
                         re.M)
    for path in (CLIENT / "nuggetflow_client").rglob("*.py*"):
        if "__pycache__" not in path.parts:
            assert not pattern.search(path.read_text()), path


def _project(path: Path) -> dict[str, object]:
    data: dict[str, object] = tomllib.loads(path.read_text())["project"]
    return data


def test_version_and_pins_follow_the_server() -> None:
    server, client = _project(ROOT / "pyproject.toml"), _project(CLIENT / "pyproject.toml")
    assert client["name"] == "nuggetflow-client"
    assert client["version"] == server["version"] == nuggetflow.__version__ == \
        nuggetflow_client.__version__
    deps = server["dependencies"]
    assert isinstance(deps, list)
    pins = {re.split(r"[=<>\[ ]", d, maxsplit=1)[0]: d for d in deps}
    assert client["dependencies"] == [pins["grpcio"], pins["protobuf"]], \
        "grpcio and protobuf only, pinned as the server pins them"
    assert client["optional-dependencies"] == {"kafka": [pins["aiokafka"]]}


def test_wheel_holds_the_stubs_types_and_nothing_of_the_server(tmp_path: Path) -> None:
    src = tmp_path / "client"
    shutil.copytree(CLIENT, src, ignore=shutil.ignore_patterns(
        "__pycache__", "build", "*.egg-info", "dist"))
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                           "--no-build-isolation", "--disable-pip-version-check", "-q",
                           str(src), "-w", str(tmp_path / "dist")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (wheel,) = (tmp_path / "dist").glob("nuggetflow_client-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        meta = Parser().parsestr(zf.read(
            f"nuggetflow_client-{nuggetflow_client.__version__}.dist-info/METADATA").decode())
    top = {n.split("/")[0] for n in names}
    assert top == {"nuggetflow_client", f"nuggetflow_client-{nuggetflow_client.__version__}"
                   ".dist-info"}, top
    for stub in ("feedback", "nugget", "query_service"):
        assert {f"nuggetflow_client/v1/{stub}_pb2.py", f"nuggetflow_client/v1/{stub}_pb2.pyi",
                f"nuggetflow_client/v1/{stub}_pb2_grpc.py"} <= names
    assert {"nuggetflow_client/py.typed", "nuggetflow_client/client.py",
            "nuggetflow_client/feedback.py", "nuggetflow_client/errors.py"} <= names
    project = _project(CLIENT / "pyproject.toml")
    deps, extras = project["dependencies"], project["optional-dependencies"]
    assert isinstance(deps, list) and isinstance(extras, dict)
    assert sorted(meta.get_all("Requires-Dist") or []) == sorted(
        [*deps, *(f'{d}; extra == "kafka"' for d in extras["kafka"])])
