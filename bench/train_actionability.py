"""Train the local backend's learned message check and measure it leave-one-set-out.

The check (``optimizer/local/message_check.py``) is a logistic regression over a
message's embedding; it vetoes messages the rules accept when its probability is below
the threshold, the message has at most three sentences and the rules read one of them as
something other than a claim. This script

1. reads every case of the benchmark sets given (default: ``bench/data/*`` and
   ``bench/blind/*``), embeds message, query and answer with the default embedder;
2. measures the check leave-one-set-out: for each set, weights fitted on every *other*
   set score that set's cases. The honest test is on the verdicts the rules gave each
   blind set in its single blind run (``bench/results/blind_*_first.json`` keep the
   false positives and false negatives of that run): how many of those errors the veto
   would have fixed, and how many right verdicts it would have broken, per threshold;
3. fits the weights on all sets and writes them, with the sets' digests and the figures,
   to ``optimizer/local/data/message_check.json``; the figures also go to
   ``bench/results/actionability_check.json``.

Usage: python -m bench.train_actionability [--sets DIR ...] [--l2 0.1] [--threshold 0.05]
       [--no-write]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from nuggetflow.settings import Settings
from optimizer.evaluation import Case, read_cases
from optimizer.local.actionability import LocalActionability
from optimizer.local.message_check import WEIGHTS, features, may_veto
from query.embeddings import make_embedder
from query.gate import logistic_fit

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
THRESHOLDS = (0.05, 0.1, 0.15, 0.2, 0.3)



def set_folders(given: list[str]) -> list[Path]:
    """The benchmark folders to train on (each holds a ``cases.jsonl``)."""
    if given:
        return [Path(g) for g in given]
    return sorted(p.parent for p in (*ROOT.glob("bench/data/*/cases.jsonl"),
                                     *ROOT.glob("bench/blind/*/cases.jsonl")))


def first_run_errors() -> dict[str, dict[str, list[str]]]:
    """Set name -> the false positive and false negative ids of its blind run."""
    out: dict[str, dict[str, list[str]]] = {}
    for path in sorted(RESULTS.glob("blind_*_first.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("actionability_errors") is not None:
            out[str(data["benchmark"])] = data["actionability_errors"]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", nargs="*", default=[], help="benchmark folders (default: all)")
    ap.add_argument("--l2", type=float, default=0.1, help="L2 penalty of the regression")
    ap.add_argument("--threshold", type=float, default=0.05,
                    help="veto below this probability (written with the weights)")
    ap.add_argument("--no-write", action="store_true", help="print only")
    args = ap.parse_args(argv)
    started = time.perf_counter()
    folders = set_folders(args.sets)
    cases: list[tuple[str, Case]] = []
    digests: dict[str, str] = {}
    for folder in folders:
        path = folder / "cases.jsonl"
        digests[folder.name] = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
        cases += [(folder.name, c) for c in read_cases(path)]
    print(f"{len(cases)} cases from {len(folders)} sets; embedding", file=sys.stderr)
    embedder = make_embedder(Settings())
    rows = []
    for i in range(0, len(cases), 64):
        chunk = [c for _, c in cases[i:i + 64]]
        texts = [t for c in chunk for t in (c.comment, c.query, c.answer or c.query)]
        vecs = embedder.embed(texts)
        rows += [features(vecs[3 * k], vecs[3 * k + 1], vecs[3 * k + 2], c.rating)
                 for k, c in enumerate(chunk)]
    x = np.vstack(rows)
    y = np.asarray([c.actionable for _, c in cases], dtype=np.float64)
    names = np.asarray([n for n, _ in cases])
    rules = LocalActionability(None)
    mixed = np.asarray([may_veto([s.kind for s in rules.read(c.context())])
                        for _, c in cases])
    prob = np.zeros(len(cases))
    for name in sorted(set(names)):
        held = names == name
        w = logistic_fit(x[~held], y[~held], args.l2, iterations=100)
        prob[held] = 1.0 / (1.0 + np.exp(-np.clip(x[held] @ w, -30, 30)))
    alone = float(((prob >= 0.5) == (y > 0)).mean())
    errors = first_run_errors()
    table: dict[str, dict[str, Any]] = {}
    blind_cases = 0
    base_errors = 0
    for tau in THRESHOLDS:
        fixed: list[str] = []
        broke: list[str] = []
        for i, (name, case) in enumerate(cases):
            if name not in errors:
                continue
            fp, fn = errors[name]["false_positive"], errors[name]["false_negative"]
            said = (case.actionable or case.id in fp) and case.id not in fn
            if said and prob[i] < tau and mixed[i]:
                (broke if case.actionable else fixed).append(f"{name}:{case.id}")
        table[f"{tau:g}"] = {"fixed": len(fixed), "broke": len(broke),
                             "fixed_cases": fixed, "broke_cases": broke}
    for name, case in cases:
        if name in errors:
            blind_cases += 1
            base_errors += (case.id in errors[name]["false_positive"]
                            or case.id in errors[name]["false_negative"])
    w_all = logistic_fit(x, y, args.l2, iterations=100)
    p_all = 1.0 / (1.0 + np.exp(-np.clip(x @ w_all, -30, 30)))
    in_sample_vetoed = int(((p_all < args.threshold) & mixed & (y > 0)).sum())
    chosen = table.get(f"{args.threshold:g}")
    figures = {
        "cases": len(cases), "sets": len(folders), "l2": args.l2,
        "threshold": args.threshold,
        "loso_accuracy_alone": round(alone, 4),
        "blind_first_runs": {"sets": sorted(errors), "cases": blind_cases,
                             "rule_errors": base_errors},
        "veto_by_threshold": table,
        "in_sample_actionable_vetoed": in_sample_vetoed,
    }
    print(f"classifier alone, leave-one-set-out accuracy: {alone:.3f}")
    print(f"blind first runs: {blind_cases} cases in {len(errors)} sets, the rules erred on "
          f"{base_errors}")
    print(f"{'veto below':>10} {'errors fixed':>13} {'right verdicts broken':>22} "
          f"{'accuracy after':>15}")
    for key, row in table.items():
        after = 1 - (base_errors - row["fixed"] + row["broke"]) / max(blind_cases, 1)
        print(f"{key:>10} {row['fixed']:>13} {row['broke']:>22} {after:>15.3f}")
    print(f"(rules alone: {1 - base_errors / max(blind_cases, 1):.3f}); in-sample, "
          f"{in_sample_vetoed} actionable case(s) of the training sets are vetoed")
    if chosen is not None:
        print(f"chosen threshold {args.threshold:g}: fixes {chosen['fixed']}, "
              f"breaks {chosen['broke']}")
    if args.no_write:
        return 0
    stamp = {"date": datetime.now(UTC).date().isoformat(),
             "command": "python -m bench.train_actionability"
                        + (f" --l2 {args.l2:g}" if args.l2 != 0.1 else "")
                        + (f" --threshold {args.threshold:g}" if args.threshold != 0.05
                           else ""),
             "seconds": round(time.perf_counter() - started, 1)}
    WEIGHTS.parent.mkdir(parents=True, exist_ok=True)
    WEIGHTS.write_text(json.dumps({
        "embedder": type(embedder).__name__, "dim": embedder.dim,
        "features": "message vector, cos(message, query), cos(message, answer), "
                    "rating up/down/none, bias",
        "threshold": args.threshold, "l2": args.l2, "trained_on": digests,
        "weights": [round(float(v), 6) for v in w_all], **stamp}, indent=1) + "\n",
        encoding="utf-8")
    (RESULTS / "actionability_check.json").write_text(
        json.dumps({**figures, **stamp}, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {WEIGHTS.relative_to(ROOT)} and bench/results/actionability_check.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
