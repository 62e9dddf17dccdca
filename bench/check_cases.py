"""Check a benchmark data folder: ``cases.jsonl`` against its ``corpus.jsonl``.

Stdlib only.  The checks are the format rules of ``bench/data/*/README.md``:

* every line of ``cases.jsonl`` parses and has exactly the case fields, ids are unique,
  the tenant is the corpus tenant and the rating is ``"up"``, ``"down"`` or ``""``;
* an actionable case has facts and held-out queries; its held-out queries are distinct
  (case-insensitively) and none is the case's own query, nor is a negative;
* a non-actionable case has no held-out queries, facts or negatives and no competitor;
* every id in ``cited`` and ``competitor`` exists in ``corpus.jsonl``;
* corpus ids are unique, and ``titles.txt`` (when present) lists the corpus titles in
  order.

Command line::

    python -m bench.check_cases bench/data/debian-handbook [--heldout 5] [--negatives 2]

It prints the counts and every problem found, and exits with status 1 if there is any.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["CASE_FIELDS", "check_folder", "main"]

CASE_FIELDS = ("id", "tenant", "query", "answer", "feedback", "actionable", "heldout",
               "facts", "negatives", "cited", "competitor")
_RATINGS = frozenset({"up", "down", ""})


def _read_jsonl(path: Path, problems: list[str]) -> list[dict[str, Any]]:
    """Parse each non-empty line of ``path``; unparsable lines become problems."""
    rows: list[dict[str, Any]] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{path.name}:{n}: not JSON ({exc.msg})")
            continue
        if not isinstance(row, dict):
            problems.append(f"{path.name}:{n}: not a JSON object")
            continue
        rows.append(row)
    return rows


def _is_str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value)


def _check_case(case: dict[str, Any], corpus_ids: set[str], tenant: str, heldout: int | None,
                negatives: int | None) -> list[str]:
    """Problems of one case (each prefixed with its id)."""
    cid = str(case.get("id", "?"))
    out: list[str] = []
    if tuple(case) != CASE_FIELDS:
        out.append(f"fields are {list(case)}, expected {list(CASE_FIELDS)}")
    for key in ("id", "tenant", "query", "answer"):
        if not isinstance(case.get(key), str) or not case.get(key, "").strip():
            out.append(f"{key} is not a non-empty string")
    if tenant and case.get("tenant") != tenant:
        out.append(f"tenant {case.get('tenant')!r} is not the corpus tenant {tenant!r}")
    fb = case.get("feedback")
    if not isinstance(fb, dict) or set(fb) != {"rating", "comment"}:
        out.append("feedback is not {rating, comment}")
    else:
        if fb["rating"] not in _RATINGS:
            out.append(f"rating {fb['rating']!r} is not up/down/empty")
        if not isinstance(fb["comment"], str) or not fb["comment"].strip():
            out.append("feedback comment is empty")
    for key in ("heldout", "facts", "negatives", "cited"):
        if not isinstance(case.get(key), list) or (case[key] and not _is_str_list(case[key])):
            out.append(f"{key} is not a list of non-empty strings")
    if not isinstance(case.get("competitor"), str):
        out.append("competitor is not a string")
    if out:
        return [f"{cid}: {p}" for p in out]
    query = case["query"].strip().lower()
    held = [h.strip().lower() for h in case["heldout"]]
    if case["actionable"] is True:
        if not case["facts"]:
            out.append("actionable but no facts")
        if not held:
            out.append("actionable but no heldout queries")
        if heldout is not None and len(held) != heldout:
            out.append(f"{len(held)} heldout queries, expected {heldout}")
        if negatives is not None and len(case["negatives"]) != negatives:
            out.append(f"{len(case['negatives'])} negatives, expected {negatives}")
        if len(set(held)) != len(held):
            out.append("heldout queries are not distinct")
        if query in held:
            out.append("a heldout query equals the query")
        if {n.strip().lower() for n in case["negatives"]} & (set(held) | {query}):
            out.append("a negative is also the query or a heldout query")
    elif case["actionable"] is False:
        for key in ("heldout", "facts", "negatives"):
            if case[key]:
                out.append(f"not actionable but has {key}")
        if case["competitor"]:
            out.append("not actionable but has a competitor")
    else:
        out.append("actionable is not a boolean")
    for ref in [*case["cited"], *([case["competitor"]] if case["competitor"] else [])]:
        if ref not in corpus_ids:
            out.append(f"{ref!r} is not a corpus id")
    return [f"{cid}: {p}" for p in out]


def check_folder(folder: str | Path, *, heldout: int | None = None,
                 negatives: int | None = None) -> tuple[dict[str, int], list[str]]:
    """Check ``folder``'s cases against its corpus; return ``(counts, problems)``."""
    root = Path(folder)
    problems: list[str] = []
    corpus = _read_jsonl(root / "corpus.jsonl", problems)
    ids = [str(r.get("id")) for r in corpus]
    for dup, k in Counter(ids).items():
        if k > 1:
            problems.append(f"corpus id {dup!r} occurs {k} times")
    tenants = {str(r.get("tenant")) for r in corpus}
    tenant = tenants.pop() if len(tenants) == 1 else ""
    if not tenant:
        problems.append(f"corpus has {len(tenants) + 1 if tenants else 0} tenants, expected one")
    titles_path = root / "titles.txt"
    if titles_path.exists():
        titles = titles_path.read_text(encoding="utf-8").splitlines()
        # Pages may share a title (GNOME Help has four "Wireless network troubleshooter"
        # pages); titles.txt is traffic, so it keeps them as the corpus has them.
        if titles != [str(r.get("title")) for r in corpus]:
            problems.append("titles.txt is not the corpus titles in order")
    cases = _read_jsonl(root / "cases.jsonl", problems)
    for dup, k in Counter(str(c.get("id")) for c in cases).items():
        if k > 1:
            problems.append(f"case id {dup!r} occurs {k} times")
    for case in cases:
        problems.extend(_check_case(case, set(ids), tenant, heldout, negatives))
    counts = {
        "corpus": len(corpus),
        "cases": len(cases),
        "actionable": sum(c.get("actionable") is True for c in cases),
        "non_actionable": sum(c.get("actionable") is False for c in cases),
        "facts": sum(len(c.get("facts") or []) for c in cases),
        "with_negatives": sum(bool(c.get("negatives")) for c in cases),
        "with_competitor": sum(bool(c.get("competitor")) for c in cases),
    }
    return counts, problems


def main(argv: Sequence[str] | None = None) -> int:
    """Run the checker CLI; returns the process exit status."""
    p = argparse.ArgumentParser(prog="python -m bench.check_cases", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folder", help="a bench/data/<name> folder with corpus.jsonl and cases.jsonl")
    p.add_argument("--heldout", type=int, help="require exactly N heldout queries per correction")
    p.add_argument("--negatives", type=int, help="require exactly N negatives per correction")
    args = p.parse_args(argv)
    counts, problems = check_folder(args.folder, heldout=args.heldout, negatives=args.negatives)
    print(" ".join(f"{k}={v}" for k, v in counts.items()))
    for problem in problems:
        print(problem)
    print("OK" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
