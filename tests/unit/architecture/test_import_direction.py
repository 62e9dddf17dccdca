"""The packages keep their direction (docs/architecture.md, "Packages"): the core
(settings, errors, inputs, logging, generated code) imports no package above it; query
imports only the core; the optimizer imports query and the core; the stream imports the
optimizer, query and the core; the review console imports the core and the client
distribution. Only the top floor, the ``app`` package (the CLI, the demo and the wiring),
imports everything, and nothing imports it. Every import counts, deferred ones inside
functions too."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
TOP_FLOOR = "app"
#: What each floor may import (besides itself and third-party code).
ALLOWED = {"core": {"core"}, "query": {"core"}, "optimizer": {"core", "query"},
           "stream": {"core", "query", "optimizer"}, "console": {"core"}}
#: Imports that run against the direction and are known (none now). Adding to this set
#: is not the way to make a new import pass.
KNOWN: set[tuple[str, str]] = set()


def _layer(module: str) -> str | None:
    head = module.split(".")[0]
    if head == TOP_FLOOR:
        return "top"
    if head == "nuggetflow":
        return "core"
    return head if head in ALLOWED else None


def _imports(path: Path) -> list[str]:
    out: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append(node.module)
    return out


def _violations() -> list[tuple[str, str]]:
    found = []
    for package in ("nuggetflow", "query", "optimizer", "stream", "console"):
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            module = rel[:-3].replace("/", ".").removesuffix(".__init__")
            own = _layer(module)
            if own is None or own == "top" or "/v1/" in rel:
                continue
            for imported in _imports(path):
                theirs = _layer(imported)
                if theirs is not None and theirs != own and theirs not in ALLOWED[own]:
                    found.append((rel, imported))
    return found


def test_no_package_imports_against_the_direction() -> None:
    unexpected = [v for v in _violations() if v not in KNOWN]
    assert unexpected == [], unexpected


def test_the_known_exceptions_still_exist() -> None:
    # When one is gone, take it out of KNOWN so that it cannot come back unnoticed.
    assert set(_violations()) >= KNOWN, KNOWN - set(_violations())


def test_the_check_sees_an_import_against_the_direction(tmp_path: Path) -> None:
    bad = tmp_path / "probe.py"
    bad.write_text("def f():\n    from stream.steps import Steps\n    import optimizer.ino\n")
    assert _imports(bad) == ["stream.steps", "optimizer.ino"]
    assert "stream" not in ALLOWED["query"] and "optimizer" not in ALLOWED["console"]
    assert _layer("app.cli") == "top" and _layer("nuggetflow.settings") == "core"
    assert _layer("app.wiring") == "top" and "top" not in ALLOWED["stream"]
