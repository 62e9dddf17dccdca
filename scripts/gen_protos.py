"""Generate the Python protobuf and gRPC code from protos/ (the one pinned command).

Usage: python scripts/gen_protos.py [--check]

The generator is grpcio-tools==1.85.1 with mypy-protobuf==5.1.0 (pinned in
pyproject.toml's dev extra). One protoc run writes two copies, never edited by hand:

- nuggetflow/v1/ — the server's (``from nuggetflow.v1 import nugget_pb2``);
- client/nuggetflow_client/v1/ — the client distribution's (``nuggetflow-client``): the
  same files with only their Python import paths and module names rewritten to
  ``nuggetflow_client.v1``, so the client imports without the server package. The proto
  descriptors (file names, message and service names, wire format) are byte-identical.

With --check, nothing is written: the exit status is 1 when the checked-in code of either
copy differs from what the protos produce (the staleness test runs this).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO_DIR = ROOT / "protos"
OUT_PACKAGE = "nuggetflow/v1"
CLIENT_PACKAGE = "client/nuggetflow_client/v1"
TARGETS = (OUT_PACKAGE, CLIENT_PACKAGE)
PINNED = {"grpcio-tools": "1.85.1", "mypy-protobuf": "5.1.0"}
# What still names the server's package in a client file after the rewrite: an import.
_SERVER_IMPORT = re.compile(r"^\s*(from\s+nuggetflow\.v1\b|import\s+nuggetflow\.v1\b)", re.M)


def _check_pins() -> None:
    from importlib.metadata import version

    for dist, want in PINNED.items():
        have = version(dist)
        if have != want:
            raise SystemExit(f"{dist}=={have} installed; the generator is pinned to {want}")


def to_client(name: str, text: str) -> str:
    """The client copy of one generated file: imports and module names moved from
    ``nuggetflow.v1`` to ``nuggetflow_client.v1``; descriptors and service names kept."""
    text = text.replace("from nuggetflow.v1 import ", "from nuggetflow_client.v1 import ")
    # the module the message classes say they live in (BuildTopDescriptorsAndMessages)
    text = re.sub(r"'nuggetflow\.v1\.(\w+_pb2)'", r"'nuggetflow_client.v1.\1'", text)
    # the path in the grpc version-mismatch message
    text = text.replace("generated code in nuggetflow/v1/",
                        "generated code in nuggetflow_client/v1/")
    if _SERVER_IMPORT.search(text):
        raise SystemExit(f"{name}: an import of nuggetflow.v1 was not rewritten for the "
                         "client; update to_client() in scripts/gen_protos.py")
    return text


def generate(out_root: Path) -> list[Path]:
    """Run protoc into out_root; return the generated files of both copies (relative to
    out_root)."""
    from grpc_tools import protoc  # type: ignore[import-untyped]

    # protoc finds protoc-gen-mypy on PATH; it lives beside this interpreter.
    bindir = str(Path(sys.executable).parent)
    os.environ["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")

    protos = sorted(PROTO_DIR.rglob("*.proto"))
    include = str(Path(protoc.__file__).parent / "_proto")
    args = [
        "protoc",
        f"-I{PROTO_DIR}",
        f"-I{include}",
        f"--python_out={out_root}",
        f"--grpc_python_out={out_root}",
        f"--mypy_out={out_root}",
        *[str(p) for p in protos],
    ]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")
    gen = out_root / OUT_PACKAGE
    (gen / "__init__.py").write_text('"""Generated protobuf code. Do not edit."""\n')
    client = out_root / CLIENT_PACKAGE
    client.mkdir(parents=True)
    for src in sorted(p for p in gen.iterdir() if p.is_file()):
        if src.name == "__init__.py":
            text = ('"""Generated protobuf code: the client\'s copy of nuggetflow.v1 '
                    '(scripts/gen_protos.py). Do not edit."""\n')
        else:
            text = to_client(src.name, src.read_text())
        (client / src.name).write_text(text)
    return sorted(p.relative_to(out_root) for target in TARGETS
                  for p in (out_root / target).rglob("*") if p.is_file())


def _existing(target: Path) -> list[Path]:
    if not target.exists():
        return []
    return sorted(p.relative_to(ROOT) for p in target.rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if generated code is stale")
    opts = parser.parse_args()
    _check_pins()
    with tempfile.TemporaryDirectory() as tmp:
        files = generate(Path(tmp))
        existing = [f for target in TARGETS for f in _existing(ROOT / target)]
        if opts.check:
            stale = [str(f) for f in files if not (ROOT / f).exists()
                     or (ROOT / f).read_bytes() != (Path(tmp) / f).read_bytes()]
            extra = [str(f) for f in existing if f not in files]
            if stale or extra:
                print("generated code is stale: " + ", ".join(stale + extra), file=sys.stderr)
                print("run: python scripts/gen_protos.py", file=sys.stderr)
                return 1
            return 0
        for target in TARGETS:
            if (ROOT / target).exists():
                shutil.rmtree(ROOT / target)
        for f in files:
            (ROOT / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(Path(tmp) / f, ROOT / f)
        print(f"wrote {len(files)} files to {', '.join(t + '/' for t in TARGETS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
