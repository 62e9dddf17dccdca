"""Variants A-E and the Iterative Nugget Optimization loop (docs/architecture.md, "INO").

- A: the nugget as extracted; B: + one anchor paraphrasing q0; C: + five synthetic future
  queries; D: C's five and one q0 paraphrase (a superset of C); E (INO): D, then loop.
- The probe set is q0 plus 3-5 fresh paraphrases, disjoint from the anchors (checked).
- Loop: probe; if every probe passes (reached the generator AND cited), stop; otherwise
  the reflector revises title, body wording and anchors from the failed traces, the
  factual-preservation guard checks the revision, and the next iteration probes it. At
  most T = 3 iterations (probe rounds).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from nuggetflow.errors import ValidationError
from nuggetflow.logging import get_logger
from optimizer.accounting import Meter
from optimizer.guard import check_revision
from optimizer.harness import Candidate, RagHarness, RagTrace, make_candidate
from optimizer.lexicon import near_duplicate
from optimizer.roles import ReflectionInput, Roles
from optimizer.types import Competitor, Extraction, IterationRecord, NuggetDraft, ProbeTrace
from query.embeddings import Embedder

log = get_logger(__name__)

VARIANTS = ("A", "B", "C", "D", "E")
MAX_ITERATIONS = 3


def check_disjoint(probes: Sequence[str], anchors: Sequence[str]) -> None:
    """ValidationError if a probe equals (or nearly equals) an anchor."""
    for p in probes:
        for a in anchors:
            if near_duplicate(p, a):
                raise ValidationError(f"probe {p!r} duplicates anchor {a!r}", field="probes")


def build_variant(variant: str, base: NuggetDraft, extraction: Extraction, q0: str,
                  roles: Roles, vocabulary: Sequence[str], meter: Meter) -> NuggetDraft:
    """The draft of a variant (E starts from D)."""
    if variant not in VARIANTS:
        raise ValidationError(f"variant must be one of {', '.join(VARIANTS)}", field="variant")
    if variant == "A":
        return NuggetDraft(base.title, base.body, ())
    para, synth = {"B": (1, 0), "C": (0, 5), "D": (1, 5), "E": (1, 5)}[variant]
    anchors = roles.anchors.anchors(base, extraction, q0, q0_paraphrases=para,
                                    synthetic=synth, vocabulary=vocabulary, meter=meter)
    # q0 is always a probe: an anchor that repeats it would leak the probe into the nugget.
    kept = [a for a in anchors if not near_duplicate(a, q0)]
    return NuggetDraft(base.title, base.body, tuple(kept))


def to_probe(trace: RagTrace, candidate_id: str, held_out: bool = True) -> ProbeTrace:
    """Read a harness trace from the candidate's point of view."""
    ids = [i for i, _ in trace.retrieved]
    rank = ids.index(candidate_id) + 1 if candidate_id in ids else 0
    own = trace.rerank.get(candidate_id, 0.0)
    if candidate_id in trace.rerank:
        above = [i for i in sorted(trace.rerank, key=lambda i: -trace.rerank[i])
                 if trace.rerank[i] > own]
    else:
        above = ids[: rank - 1] if rank else ids
    cited_others = [i for i in trace.cited if i != candidate_id and i not in above]
    competitors = tuple(
        Competitor(i, trace.titles.get(i, ""), trace.texts.get(i, ""),
                   trace.rerank.get(i, 0.0)) for i in [*above, *cited_others][:3]
        if i in trace.titles)
    return ProbeTrace(query=trace.query, retrieved=rank > 0,
                      reached_generator=candidate_id in trace.reached,
                      cited=candidate_id in trace.cited, rank=rank, rerank_score=own,
                      competitors=competitors, answer=trace.answer, held_out=held_out,
                      note=trace.note)


@dataclass
class OptimizationResult:
    """What INO (or a single-round variant) ended with, and how it got there."""

    variant: str
    draft: NuggetDraft
    passed: bool
    iterations: int
    probes: list[str]
    history: list[IterationRecord] = field(default_factory=list)
    rejected: list[list[str]] = field(default_factory=list)
    seed: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready trace (kept with the candidate)."""
        return {
            "variant": self.variant, "passed": self.passed, "iterations": self.iterations,
            "seed": self.seed, "probes": self.probes, "rejected_revisions": self.rejected,
            "history": [{
                "iteration": r.iteration, "passed": r.passed, "edits": r.edits,
                "llm_calls": r.llm_calls, "tokens": r.tokens, "seconds": round(r.seconds, 4),
                "cost_usd": round(r.cost_usd, 6), "rejected": list(r.rejected),
                "probes": [{"query": p.query, "retrieved": p.retrieved,
                            "reached_generator": p.reached_generator, "cited": p.cited,
                            "rank": p.rank, "rerank_score": round(p.rerank_score, 4),
                            "competitors": [c.title for c in p.competitors],
                            "answer": p.answer, "held_out": p.held_out,
                            **({"note": p.note} if p.note else {})}
                           for p in r.probes]} for r in self.history],
        }


async def probe_all(harness: RagHarness, tenant: str, candidate: Candidate,
                    queries: Sequence[str], meter: Meter) -> list[ProbeTrace]:
    """Run every probe query against the frozen view with the candidate overlaid."""
    out = []
    for i, q in enumerate(queries):
        trace = await harness.run(tenant, q, candidate, meter)
        out.append(to_probe(trace, candidate.id, held_out=i > 0))
    return out


async def optimize(*, candidate_id: str, start: NuggetDraft, extraction: Extraction, q0: str,
                   probes: Sequence[str], context: str, tenant: str, harness: RagHarness,
                   roles: Roles, embedder: Embedder, meter: Meter, loop: bool = True,
                   max_iterations: int = MAX_ITERATIONS, seed: int = 0,
                   variant: str = "E") -> OptimizationResult:
    """Probe ``start``; with ``loop``, reflect and re-probe up to ``max_iterations``."""
    check_disjoint(probes, start.anchors)
    draft = start
    result = OptimizationResult(variant, draft, False, 0, list(probes), seed=seed)
    rounds = max_iterations if loop else 1
    for iteration in range(1, rounds + 1):
        t0, calls0, tokens0 = time.perf_counter(), meter.total_calls, meter.tokens
        cost0 = meter.cost_usd
        cand = make_candidate(embedder, candidate_id, draft)
        traces = await probe_all(harness, tenant, cand, probes, meter)
        passed = all(t.passed for t in traces)
        record = IterationRecord(iteration, traces, passed)
        result.history.append(record)
        result.iterations, result.passed, result.draft = iteration, passed, draft
        if not passed and iteration < rounds:
            revision = roles.reflector.revise(
                ReflectionInput(draft, extraction, q0, traces, context), meter)
            kept = tuple(a for a in revision.draft.anchors
                         if not any(near_duplicate(a, p) for p in probes))
            revised = NuggetDraft(revision.draft.title, revision.draft.body, kept)
            verdict = check_revision(revised, context, extraction.object, probes)
            if revised == draft:
                record.edits = ["no change: the reflector found nothing more to revise"]
            elif verdict.ok:
                draft = revised
                record.edits = list(revision.edits)
            else:
                result.rejected.append(list(verdict.violations))
                record.rejected = list(verdict.violations)
                record.edits = [f"rejected: {v}" for v in verdict.violations]
                log.warning("revision rejected by the factual guard", tenant=tenant,
                            candidate=candidate_id, violations=list(verdict.violations))
        record.llm_calls = meter.total_calls - calls0
        record.tokens = meter.tokens - tokens0
        record.cost_usd = meter.cost_usd - cost0
        record.seconds = time.perf_counter() - t0
        if passed or (record.edits and record.edits[0].startswith(("rejected", "no change"))):
            break
    return result
