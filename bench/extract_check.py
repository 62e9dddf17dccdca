"""Extraction-level check: actionability and fidelity of the extracted nuggets, fast.

``nuggetflow eval`` indexes a corpus and runs INO five variants over it, which takes
minutes per benchmark. What decides whether a knowledge owner would publish a nugget (did
it keep every fact, add nothing, drop the superseded value, say it plainly) is settled at
extraction: INO changes anchors and may retitle, never the body. This script runs only
the configured actionability role on every case of the folders given and scores the
extracted title and body with the evaluation's own fidelity judge
(:func:`optimizer.fidelity.judge_nugget`), so a rule change can be checked on every
benchmark set in a minute or two. Its figures are those of variant A in ``eval.json``
(fact recall over every actionable case, over the extracted ones, and the unsupported,
stale and conversational rates of the extracted nuggets).

Usage::

    python -m bench.extract_check bench/data/* bench/blind/*  [--json out.json]
        [--show errors|misses|all] [--case ID] [--nuggets out.jsonl]

``--show`` prints, per set, the misread cases (``errors``), the nuggets that lost a fact
or carry flagged text (``misses``) or every nugget (``all``), each with its title and
body, so they can be read as a knowledge owner reads them.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nuggetflow.settings import Settings
from optimizer.accounting import Meter
from optimizer.evaluation import Case, read_cases
from optimizer.fidelity import NuggetFidelity, judge_nugget
from optimizer.types import Extraction
from query.embeddings import Embedder, make_embedder

__all__ = ["CaseResult", "SetResult", "check_set", "main"]


@dataclass(frozen=True)
class CaseResult:
    """One case: the verdict, the extracted nugget and its fidelity."""

    case: Case
    extraction: Extraction
    fidelity: NuggetFidelity | None

    @property
    def correct(self) -> bool:
        """The actionability verdict agrees with the gold label."""
        return self.extraction.can_produce_nugget == self.case.actionable

    @property
    def flagged(self) -> bool:
        """The nugget lost a fact or carries unsupported, stale or conversational text."""
        f = self.fidelity
        return f is not None and (f.fact_recall < 1 or bool(f.unsupported or f.stale
                                                             or f.conversational))


@dataclass
class SetResult:
    """Every case of one benchmark folder."""

    name: str
    cases: list[CaseResult] = field(default_factory=list)
    seconds: float = 0.0

    def figures(self) -> dict[str, Any]:
        """Actionability confusion and accuracy, and the fidelity rates."""
        tp = sum(r.case.actionable and r.extraction.can_produce_nugget for r in self.cases)
        fp = sum(not r.case.actionable and r.extraction.can_produce_nugget for r in self.cases)
        fn = sum(r.case.actionable and not r.extraction.can_produce_nugget for r in self.cases)
        tn = len(self.cases) - tp - fp - fn
        facts_total = sum(len(r.case.facts) for r in self.cases if r.case.actionable)
        judged = [r.fidelity for r in self.cases if r.fidelity is not None and r.case.actionable]
        facts_extracted = sum(len(f.facts) for f in judged)
        covered = sum(v.covered for f in judged for v in f.facts)
        n = max(1, len(judged))
        return {
            "cases": len(self.cases),
            "actionability_accuracy": round((tp + tn) / max(1, len(self.cases)), 4),
            "actionability_confusion": {"tp": tp, "fp": fp, "fn": fn, "tn": tn},
            "actionability_errors": sorted(r.case.id for r in self.cases if not r.correct),
            "fact_recall": round(covered / max(1, facts_total), 4),
            "fact_recall_extracted": round(covered / max(1, facts_extracted), 4),
            "unsupported_text_rate": round(sum(bool(f.unsupported) for f in judged) / n, 4),
            "stale_claim_rate": round(sum(bool(f.stale) for f in judged) / n, 4),
            "conversational_text_rate": round(sum(bool(f.conversational) for f in judged) / n,
                                              4),
            "seconds": round(self.seconds, 1),
        }


def check_set(folder: Path, roles_extract: Any, embedder: Embedder) -> SetResult:
    """Extract every case of ``folder``/cases.jsonl and judge the nuggets."""
    started = time.perf_counter()
    out = SetResult(folder.name)
    for case in read_cases(folder / "cases.jsonl"):
        ex: Extraction = roles_extract(case.context(), Meter())
        fid = None
        if ex.can_produce_nugget:
            fid = judge_nugget(ex.title, ex.body, feedback=case.comment, query=case.query,
                               answer=case.answer, facts=case.facts, embed=embedder.embed)
        out.cases.append(CaseResult(case, ex, fid))
    out.seconds = time.perf_counter() - started
    return out


def _show(r: CaseResult) -> str:
    """A case as a reviewer reads it."""
    c, ex, f = r.case, r.extraction, r.fidelity
    lines = [f"--- {c.id} gold={'act' if c.actionable else 'not'} "
             f"got={'act' if ex.can_produce_nugget else 'not'} ({ex.usefulness}: {ex.reason})",
             f"  query:    {c.query}", f"  feedback: {c.comment}"]
    if ex.can_produce_nugget:
        lines += [f"  TITLE:    {ex.title}", f"  BODY:     {ex.body}"]
    if f is not None:
        for v in f.facts:
            if not v.covered:
                lines.append(f"  missed:   {v.fact} (items {list(v.missing_items)}, "
                             f"words {v.word_recall}, cos {v.cosine})")
        for kind in ("unsupported", "stale", "conversational"):
            if getattr(f, kind):
                lines.append(f"  {kind}: {getattr(f, kind)}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the check CLI; prints one line per set (and the cases asked for)."""
    p = argparse.ArgumentParser(prog="python -m bench.extract_check", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folders", nargs="+", help="benchmark folders holding cases.jsonl")
    p.add_argument("--json", help="write every set's figures to this file")
    p.add_argument("--show", choices=("errors", "misses", "all"),
                   help="print these cases with their nuggets")
    p.add_argument("--case", action="append", default=[], help="print this case (repeatable)")
    p.add_argument("--nuggets", help="write every case's verdict, title and body to this "
                                     "JSON Lines file (to compare two versions of the roles)")
    args = p.parse_args(argv)
    from optimizer.backends import make_roles

    settings = Settings.from_env()
    embedder = make_embedder(settings)
    roles = make_roles(settings, embedder=embedder)
    folders = [Path(f) for f in args.folders if (Path(f) / "cases.jsonl").is_file()]
    if not folders:
        p.error("no folder with a cases.jsonl given")
    report: dict[str, Any] = {}
    nuggets = open(args.nuggets, "w", encoding="utf-8") if args.nuggets else None  # noqa: SIM115 (closed after the loop)
    header = (f"{'set':<18}{'cases':>6}{'act%':>7}{'fp':>4}{'fn':>4}{'recall%':>9}"
              f"{'extr%':>7}{'unsup%':>7}{'stale%':>7}{'conv%':>7}{'s':>6}")
    print(header, flush=True)
    for folder in folders:
        res = check_set(folder, roles.actionability.extract, embedder)
        fig = res.figures()
        report[res.name] = fig
        cm = fig["actionability_confusion"]
        print(f"{res.name:<18}{fig['cases']:>6}{100 * fig['actionability_accuracy']:>7.1f}"
              f"{cm['fp']:>4}{cm['fn']:>4}{100 * fig['fact_recall']:>9.1f}"
              f"{100 * fig['fact_recall_extracted']:>7.1f}"
              f"{100 * fig['unsupported_text_rate']:>7.1f}"
              f"{100 * fig['stale_claim_rate']:>7.1f}"
              f"{100 * fig['conversational_text_rate']:>7.1f}{fig['seconds']:>6.0f}", flush=True)
        for r in res.cases:
            if nuggets is not None:
                nuggets.write(json.dumps({
                    "set": res.name, "id": r.case.id, "actionable": r.case.actionable,
                    "extracted": r.extraction.can_produce_nugget, "title": r.extraction.title,
                    "body": r.extraction.body}, ensure_ascii=False) + "\n")
            if (r.case.id in args.case or args.show == "all"
                    or (args.show in ("errors", "misses") and not r.correct)
                    or (args.show == "misses" and r.flagged)):
                print(_show(r), flush=True)
    if nuggets is not None:
        nuggets.close()
    if args.json:
        Path(args.json).write_text(json.dumps({"command": " ".join(
            ["python -m bench.extract_check", *(argv if argv is not None else sys.argv[1:])]),
            "sets": report}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
