"""Generate the Python protobuf and gRPC code from protos/ (the one pinned command).

Usage: python scripts/gen_protos.py [--check]

The generator is grpcio-tools==1.85.1 with mypy-protobuf==5.1.0 (pinned in
pyproject.toml's dev extra). Output goes to nuggetflow/v1/ and is never edited by hand.
With --check, nothing is written: the exit status is 1 when the checked-in code differs
from what the protos produce (the staleness test runs this).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO_DIR = ROOT / "protos"
OUT_PACKAGE = "nuggetflow/v1"
PINNED = {"grpcio-tools": "1.85.1", "mypy-protobuf": "5.1.0"}


def _check_pins() -> None:
    from importlib.metadata import version

    for dist, want in PINNED.items():
        have = version(dist)
        if have != want:
            raise SystemExit(f"{dist}=={have} installed; the generator is pinned to {want}")


def generate(out_root: Path) -> list[Path]:
    """Run protoc into out_root; return the generated files (relative to out_root)."""
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
    return sorted(p.relative_to(out_root) for p in gen.rglob("*") if p.is_file())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if generated code is stale")
    opts = parser.parse_args()
    _check_pins()
    with tempfile.TemporaryDirectory() as tmp:
        files = generate(Path(tmp))
        target = ROOT / OUT_PACKAGE
        existing = sorted(p.relative_to(ROOT) for p in target.rglob("*") if p.is_file()
                          and "__pycache__" not in p.parts) if target.exists() else []
        if opts.check:
            stale = [str(f) for f in files if not (ROOT / f).exists()
                     or (ROOT / f).read_bytes() != (Path(tmp) / f).read_bytes()]
            extra = [str(f) for f in existing if f not in files]
            if stale or extra:
                print("generated code is stale: " + ", ".join(stale + extra), file=sys.stderr)
                print("run: python scripts/gen_protos.py", file=sys.stderr)
                return 1
            return 0
        if target.exists():
            shutil.rmtree(target)
        for f in files:
            (ROOT / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(Path(tmp) / f, ROOT / f)
        print(f"wrote {len(files)} files to {OUT_PACKAGE}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
