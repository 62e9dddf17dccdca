"""Evaluation harness: variants A-E on a benchmark in the documented format.

Benchmark format (README "Evaluation"):

- corpus JSONL ``{"id", "tenant", "title", "text"}`` (optional ``url``);
- cases JSONL ``{"id", "tenant", "query", "answer", "feedback": {"rating", "comment"},
  "actionable": bool, "heldout": [...], "facts": [...], "negatives": [...],
  "cited": [...]}`` (the last three optional);
- random traffic: a text file, one query per line (the negative control).

For every run (seed) and variant, each case whose feedback the system turns into a nugget
is optimized (INO for E, a single probe round for A-D, same probe set for all), then
measured with the candidate overlaid on the frozen corpus view:

- held-out: the case's ``heldout`` queries, never shown to the optimizer;
- in-sample: the probe set the optimizer used (q0 and its paraphrases);
- retrieval = the nugget reached the generator's context (it cleared the tenant's
  calibrated gate and was among the top 3 that did); citation = the generated answer
  cited it.

The negative control publishes every E nugget of the first run into a copy of the index
and counts random-traffic queries for which any nugget reached the context / was cited.
Cases the system rejects count as misses for held-out and in-sample rates.
"""

from __future__ import annotations

import json
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nuggetflow.errors import ValidationError
from nuggetflow.inputs import read_lines
from nuggetflow.logging import get_logger
from nuggetflow.settings import Settings
from optimizer.accounting import Budget, Meter
from optimizer.backends import make_harness
from optimizer.fidelity import NuggetFidelity, judge_nugget
from optimizer.guard import check_revision
from optimizer.harness import RagHarness, make_candidate
from optimizer.ino import VARIANTS, to_probe
from optimizer.pipeline import Optimizer, Outcome
from optimizer.roles import Roles
from optimizer.types import FeedbackContext, NuggetDraft, correction_context
from query.corpus import Document, read_documents
from query.embeddings import Embedder
from query.index import NuggetIndex
from query.model import Publication
from query.store import IndexStore

log = get_logger(__name__)

Progress = Callable[[str, int, int], None]
FIDELITY_KEYS = ("fact_recall", "fact_recall_extracted", "unsupported_text_rate",
                 "stale_claim_rate", "conversational_text_rate")


@dataclass(frozen=True)
class Case:
    """One benchmark case."""

    id: str
    tenant: str
    query: str
    answer: str
    rating: str
    comment: str
    actionable: bool
    heldout: tuple[str, ...] = ()
    facts: tuple[str, ...] = ()
    negatives: tuple[str, ...] = ()
    cited: tuple[str, ...] = ()
    competitor: str = ""

    def context(self) -> FeedbackContext:
        """The case as a feedback event."""
        return FeedbackContext(event_id=f"case-{self.id}", tenant=self.tenant,
                               query=self.query, answer=self.answer, comment=self.comment,
                               rating=self.rating, cited_documents=self.cited)


def read_cases(path: str | Path, tenant: str | None = None) -> list[Case]:
    """Parse a cases JSONL file; ValidationError names the line and field (InputError
    for a file that is missing, a directory or not UTF-8 text)."""
    cases = []
    for number, line in read_lines(path):
        raw = line.decode()
        if not raw.strip():
            continue
        try:
            d = json.loads(raw)
            fb = d.get("feedback") or {}
            case = Case(id=str(d["id"]), tenant=tenant or str(d["tenant"]),
                        query=str(d["query"]), answer=str(d.get("answer", "")),
                        rating=str(fb.get("rating", "")), comment=str(fb.get("comment", "")),
                        actionable=bool(d["actionable"]),
                        heldout=tuple(d.get("heldout") or ()), facts=tuple(d.get("facts") or ()),
                        negatives=tuple(d.get("negatives") or ()),
                        cited=tuple(d.get("cited") or ()),
                        competitor=str(d.get("competitor") or ""))
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
            raise ValidationError(f"{path} line {number}: {exc!r}", field="cases") from exc
        cases.append(case)
    if not cases:
        raise ValidationError(f"{path} has no cases", field="cases")
    return cases


@dataclass
class Rates:
    """Retrieval and citation counts over a set of queries."""

    retrieved: int = 0
    cited: int = 0
    total: int = 0

    def add(self, retrieved: bool, cited: bool) -> None:
        """Count one query."""
        self.total += 1
        self.retrieved += int(retrieved)
        self.cited += int(cited)

    @property
    def retrieval(self) -> float:
        """Share of queries for which the nugget reached the generator."""
        return self.retrieved / self.total if self.total else 0.0

    @property
    def citation(self) -> float:
        """Share of queries whose answer cited the nugget."""
        return self.cited / self.total if self.total else 0.0


@dataclass
class VariantRun:
    """One variant in one run."""

    variant: str
    seed: int
    heldout: Rates = field(default_factory=Rates)
    insample: Rates = field(default_factory=Rates)
    outcomes: list[Outcome] = field(default_factory=list)
    facts_total: int = 0  # gold facts of every actionable case
    facts_covered: int = 0
    facts_extracted: int = 0  # gold facts of the cases that gave a nugget
    nuggets: int = 0
    unsupported: int = 0  # nuggets with text found in neither feedback nor query
    stale: int = 0  # nuggets stating a value the correction overturns
    conversational: int = 0  # nuggets with talk in them (first person, thanks, ...)
    verdicts: Counter[str] = field(default_factory=Counter)  # answer compliance
    judged: int = 0
    faithful: int = 0
    non_regression: int = 0

    def add_fidelity(self, fid: NuggetFidelity | None, facts: int) -> None:
        """Count one case's nugget (None: the case gave no nugget)."""
        self.facts_total += facts
        if fid is None:
            return
        self.nuggets += 1
        self.facts_extracted += facts
        self.facts_covered += sum(f.covered for f in fid.facts)
        self.unsupported += bool(fid.unsupported)
        self.stale += bool(fid.stale)
        self.conversational += bool(fid.conversational)

    def fidelity(self) -> dict[str, float]:
        """The run's fidelity rates."""
        n = max(1, self.nuggets)
        return {"fact_recall": self.facts_covered / max(1, self.facts_total),
                "fact_recall_extracted": self.facts_covered / max(1, self.facts_extracted),
                "unsupported_text_rate": self.unsupported / n,
                "stale_claim_rate": self.stale / n,
                "conversational_text_rate": self.conversational / n}


@dataclass(frozen=True)
class Measured:
    """One query with a draft overlaid: did it reach the generator, was it cited, and
    what the answer said."""

    reached: bool
    cited: bool
    answer: str


async def measure(harness: RagHarness, embedder: Embedder, tenant: str,
                  draft: NuggetDraft | None, queries: Sequence[str]) -> list[Measured]:
    """Each query run through the harness with the draft overlaid on the frozen view.

    No draft (the event gave no nugget): the queries run on the corpus alone, and miss.
    """
    cand = make_candidate(embedder, "candidate:measured", draft) if draft else None
    out = []
    for q in queries:
        trace = await harness.run(tenant, q, cand, Meter())
        if cand is None:
            out.append(Measured(False, False, trace.answer))
            continue
        probe = to_probe(trace, cand.id)
        out.append(Measured(probe.reached_generator, probe.cited, trace.answer))
    return out


def _mean_std(xs: Sequence[float]) -> dict[str, float]:
    return {"mean": round(statistics.mean(xs), 4),
            "std": round(statistics.stdev(xs), 4) if len(xs) > 1 else 0.0}


async def evaluate(store: IndexStore, embedder: Embedder, roles: Roles, settings: Settings,
                   cases: Sequence[Case], traffic: Sequence[str], *, runs: int = 3,
                   variants: Sequence[str] = VARIANTS, progress: Progress | None = None,
                   publish: Callable[[Outcome], Any] | None = None,
                   offtopic: Sequence[str] = (),
                   judge_variants: Sequence[str] = ("A", "E")) -> dict[str, Any]:
    """Run every variant ``runs`` times; return the figures (see the module docstring).

    ``publish`` (async) stores an outcome's nugget as published, for the negative control.
    ``offtopic`` is the part of the traffic about topics no case touches (reported apart:
    a nugget reaching an on-topic query is not a false positive). The answers to the
    held-out queries of ``judge_variants`` are judged against the gold facts.
    """
    # The built-in agent, or the team's (NUGGETFLOW_HARNESS=external: run_benchmark
    # points the settings at a query service over ``store`` and at the agent).
    harness = make_harness(settings, store, embedder, roles.generator)
    started = time.perf_counter()
    opt = Optimizer(store, embedder, roles, settings, harness=harness,
                    budget=Budget())  # unlimited, as the recorded figures were measured
    # Actionability accuracy over every case (the local backend is deterministic).
    predicted = {c.id: roles.actionability.extract(c.context(), Meter()).can_produce_nugget
                 for c in cases}
    accuracy = sum(predicted[c.id] == c.actionable for c in cases) / len(cases)
    targets = [c for c in cases if c.actionable]
    results: dict[str, list[VariantRun]] = {v: [] for v in variants}
    appendix: list[dict[str, Any]] = []
    total_steps = runs * len(variants) * len(targets)
    step = 0
    for seed in range(runs):
        for variant in variants:
            vr = VariantRun(variant, seed)
            for case in targets:
                outcome = await opt.process(case.context(), variant=variant, seed=seed)
                vr.outcomes.append(outcome)
                draft = outcome.result.draft if outcome.result else None
                fid = judge_nugget(draft.title, draft.body, feedback=case.comment,
                                   query=case.query, answer=case.answer, facts=case.facts,
                                   embed=embedder.embed) if draft else None
                vr.add_fidelity(fid, len(case.facts))
                heldout = await measure(harness, embedder, case.tenant, draft, case.heldout)
                for m in heldout:
                    vr.heldout.add(m.reached, m.cited)
                if variant in judge_variants and case.facts:
                    for q, m in zip(case.heldout, heldout, strict=True):
                        verdict = roles.judge.judge(
                            q, m.answer, draft or NuggetDraft("", ""), outcome.extraction,
                            Meter(), facts=case.facts, superseded=case.answer)
                        vr.verdicts[verdict.compliance] += 1
                        vr.judged += 1
                        vr.faithful += int(verdict.faithful)
                        vr.non_regression += int(verdict.non_regression)
                insample = outcome.result.probes if outcome.result else [case.query]
                for m in await measure(harness, embedder, case.tenant, draft, insample):
                    vr.insample.add(m.reached, m.cited)
                if seed == 0 and variant == variants[-1]:
                    appendix.append(_appendix_entry(case, outcome, fid, heldout))
                step += 1
                if progress:
                    progress(f"run {seed + 1}/{runs} variant {variant}", step, total_steps)
            results[variant].append(vr)

    e_runs = results.get("E", [])
    iterations: dict[str, int] = {}
    violations = rejected = 0
    calls, tokens, seconds = [], [], []
    for vr in e_runs:
        for o in vr.outcomes:
            if o.result is None:
                continue
            key = str(o.result.iterations) if o.result.passed else "exhausted"
            iterations[key] = iterations.get(key, 0) + 1
            rejected += len(o.result.rejected)
            # The loop's rule: title and body add no fact; anchors may also use the
            # probe queries' words.
            if not check_revision(o.result.draft, correction_context(o.context),
                                  o.extraction.object, o.result.probes).ok:
                violations += 1
            calls.append(o.accounting["llm_calls"])
            tokens.append(o.accounting["tokens"])
            seconds.append(o.accounting["seconds"])

    negative: dict[str, Any] = {}
    if publish and e_runs and traffic:
        for o in e_runs[0].outcomes:
            if o.nugget is not None:
                await publish(o)
        tenant = targets[0].tenant
        # A view frozen now, so the nuggets just published are in it.
        live = make_harness(settings, store, embedder, roles.generator,
                            gate=getattr(harness, "gate", None))
        hits: list[dict[str, str]] = []

        async def control(queries: Sequence[str], keep: bool = False
                          ) -> tuple[float, float]:
            reached = cited = 0
            for q in queries:
                trace = await live.run(tenant, q, None, Meter())
                nugget_ids = {i for i, _ in trace.retrieved if i.startswith("n-")}
                got = nugget_ids & set(trace.reached)
                reached += int(bool(got))
                cited += int(bool(nugget_ids & set(trace.cited)))
                if keep and got:
                    first = sorted(got)[0]
                    hits.append({"query": q, "nugget": trace.titles.get(first, first)})
            return reached / len(queries), cited / len(queries)

        r_all, c_all = await control(traffic)
        negative = {"negative_retrieval": round(r_all, 4), "negative_citation": round(c_all, 4),
                    "negative_queries": len(traffic)}
        if offtopic:
            r_off, c_off = await control(offtopic, keep=True)
            negative.update({"negative_offtopic_retrieval": round(r_off, 4),
                             "negative_offtopic_citation": round(c_off, 4),
                             "negative_offtopic_queries": len(offtopic),
                             # What reached the generator for an off-topic query.
                             "negative_offtopic_hits": hits})
        await live.close()
    await harness.close()

    per_variant: dict[str, dict[str, Any]] = {}
    compliance: dict[str, dict[str, float]] = {}
    for v, vrs in results.items():
        per_variant[v] = {
            "heldout_retrieval": _mean_std([r.heldout.retrieval for r in vrs]),
            "heldout_citation": _mean_std([r.heldout.citation for r in vrs]),
            "insample_retrieval": _mean_std([r.insample.retrieval for r in vrs]),
            "insample_citation": _mean_std([r.insample.citation for r in vrs]),
            "heldout_queries": vrs[0].heldout.total if vrs else 0,
            "nuggets": sum(o.nugget is not None for o in vrs[0].outcomes) if vrs else 0,
            **{k: _mean_std([r.fidelity()[k] for r in vrs]) for k in FIDELITY_KEYS},
        }
        if vrs and vrs[0].judged:
            compliance[v] = {
                **{c: round(sum(r.verdicts[c] for r in vrs) / sum(r.judged for r in vrs), 4)
                   for c in ("addresses", "partial", "misses", "contradicts")},
                "faithful": round(sum(r.faithful for r in vrs) / sum(r.judged for r in vrs), 4),
                "non_regression": round(sum(r.non_regression for r in vrs)
                                        / sum(r.judged for r in vrs), 4),
                "answers": sum(r.judged for r in vrs)}
    final = per_variant.get("E") or per_variant[variants[-1]]
    return {
        "variants": per_variant,
        # Fidelity of the final (E) nuggets; per variant under "variants".
        **{k: final[k]["mean"] for k in FIDELITY_KEYS},
        "answer_compliance": compliance,
        "nuggets_appendix": appendix,
        "runs": runs, "seeds": list(range(runs)), "cases": len(cases),
        "actionable_cases": len(targets),
        "actionability_accuracy": round(accuracy, 4),
        "actionability_confusion": {
            "true_positive": sum(predicted[c.id] and c.actionable for c in cases),
            "false_positive": sum(predicted[c.id] and not c.actionable for c in cases),
            "false_negative": sum(not predicted[c.id] and c.actionable for c in cases),
            "true_negative": sum(not predicted[c.id] and not c.actionable for c in cases)},
        # Which cases were misread, so a reader can open them.
        "actionability_errors": {
            "false_positive": [c.id for c in cases if predicted[c.id] and not c.actionable],
            "false_negative": [c.id for c in cases if not predicted[c.id] and c.actionable]},
        "preservation_violations": violations,
        "guard_rejected_revisions": rejected,
        "iterations_histogram": dict(sorted(iterations.items())),
        "seconds_per_nugget": round(statistics.mean(seconds), 4) if seconds else 0.0,
        "llm_calls_per_nugget": round(statistics.mean(calls), 2) if calls else 0.0,
        "tokens_per_nugget": round(statistics.mean(tokens), 1) if tokens else 0.0,
        "tokens_estimated": roles.generator.__class__.__module__.startswith("optimizer.local"),
        "eval_seconds": round(time.perf_counter() - started, 1),
        "harness": settings.harness,
        **negative,
    }


async def publish_outcome(index: Any, outcome: Outcome) -> None:
    """Submit and approve an outcome's nugget (negative control)."""
    if outcome.nugget is None:
        return
    sub = await index.submit(outcome.nugget, publication=Publication.PENDING_REVIEW)
    await index.approve(outcome.nugget.tenant, sub.id, reviewer="eval")


def _appendix_entry(case: Case, outcome: Outcome, fid: NuggetFidelity | None,
                    heldout: Sequence[Measured]) -> dict[str, Any]:
    """What a reviewer reads about one case: the feedback, the final nugget, verdicts."""
    draft = outcome.result.draft if outcome.result else None
    return {
        "case": case.id, "query": case.query, "feedback": case.comment,
        "usefulness": outcome.extraction.usefulness, "reason": outcome.extraction.reason,
        "title": draft.title if draft else None, "body": draft.body if draft else None,
        "anchors": list(draft.anchors) if draft else [],
        "facts": [{"fact": f.fact, "covered": f.covered, "missing": list(f.missing_items)}
                  for f in fid.facts] if fid else [{"fact": f, "covered": False,
                                                    "missing": []} for f in case.facts],
        "unsupported": fid.unsupported if fid else [],
        "conversational": fid.conversational if fid else [],
        "guard_violations": list(check_revision(
            draft, correction_context(outcome.context), outcome.extraction.object,
            outcome.result.probes).violations) if draft and outcome.result else [],
        "stale": fid.stale if fid else [],
        "heldout_reached": sum(m.reached for m in heldout),
        "heldout": len(heldout),
        "iterations": outcome.result.iterations if outcome.result else 0,
    }


@dataclass(frozen=True)
class Benchmark:
    """A benchmark in the documented format: corpus, cases and random traffic."""

    name: str
    corpus: Path
    cases: Path
    traffic: Path | None = None

    @staticmethod
    def from_cases(cases: str | Path, corpus: str | Path,
                   traffic: str | Path | None) -> Benchmark:
        """A benchmark from explicit files, named after the folder of its cases."""
        path = Path(cases)
        return Benchmark(path.parent.name or path.stem, Path(corpus), path,
                         Path(traffic) if traffic else None)


def shipped_benchmarks(root: str | Path = "bench/data", first: str = "gnome-help"
                       ) -> list[Benchmark]:
    """Every folder of ``root`` with cases.jsonl and corpus.jsonl (titles.txt is the
    traffic when present), ``first`` first, then by name."""
    found = []
    for d in sorted(Path(root).iterdir()) if Path(root).is_dir() else []:
        if (d / "cases.jsonl").is_file() and (d / "corpus.jsonl").is_file():
            traffic = d / "titles.txt"
            found.append(Benchmark(d.name, d / "corpus.jsonl", d / "cases.jsonl",
                                   traffic if traffic.is_file() else None))
    return sorted(found, key=lambda b: (b.name != first, b.name))


@dataclass(frozen=True)
class BenchmarkInputs:
    """A benchmark's files, read and validated."""

    cases: list[Case]
    traffic: list[str]
    documents: list[Document]


def read_benchmark(bench: Benchmark, settings: Settings,
                   tenant: str | None = None) -> BenchmarkInputs:
    """Read and validate a benchmark's cases, traffic and corpus (InputError or
    ValidationError naming the file and line, before anything is written)."""
    cases = read_cases(bench.cases, tenant)
    traffic = [q for _, line in read_lines(bench.traffic)
               if (q := line.decode().strip())] if bench.traffic else []
    documents = read_documents(bench.corpus, tenant, settings=settings)
    return BenchmarkInputs(cases, traffic, documents)


async def run_benchmark(bench: Benchmark, settings: Settings, *, workdir: Path,
                        open_index: Callable[[Path], NuggetIndex],
                        make_roles: Callable[[NuggetIndex], Roles],
                        tenant: str | None = None, runs: int = 3,
                        variants: Sequence[str] = VARIANTS,
                        progress: Progress | None = None,
                        inputs: BenchmarkInputs | None = None) -> dict[str, Any]:
    """Index the benchmark's corpus in a fresh index ``open_index(workdir / "index.db")``
    and run :func:`evaluate` on it with ``make_roles(index)``; the negative control
    publishes into that index. The caller wires both (``nuggetflow eval``: the embedded
    store and the configured roles). ``inputs``: the benchmark's files already read
    (:func:`read_benchmark`; else read here, before ``workdir`` is replaced)."""
    import shutil

    from query.corpus import ingest_corpus

    inputs = inputs or read_benchmark(bench, settings, tenant)
    cases, traffic, docs = inputs.cases, inputs.traffic, inputs.documents
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    # Traffic about topics no case touches: titles of pages no case cites or competes with.
    topical = {d for c in cases for d in (*c.cited, c.competitor) if d}
    titles = {d.title: d.id for d in docs}
    offtopic = [q for q in traffic if q in titles and titles[q] not in topical]
    index = open_index(workdir / "index.db")
    await index.start()
    try:
        corpus = await ingest_corpus(index, bench.corpus, tenant, documents=docs)
        log.info("benchmark indexed", benchmark=bench.name, documents=corpus.documents,
                 passages=corpus.passages, cases=len(cases), traffic=len(traffic))

        async def publish(outcome: Outcome) -> None:
            await publish_outcome(index, outcome)

        roles = make_roles(index)
        if settings.harness != "external":
            return await evaluate(index.store, index.embedder, roles, settings, cases,
                                  traffic, runs=runs, variants=variants, progress=progress,
                                  publish=publish, offtopic=offtopic)
        from optimizer.external import probe_deployment

        # Every probe goes through the agent (NUGGETFLOW_AGENT_URL, or the reference agent
        # started here) retrieving from a query service over this index.
        async with probe_deployment(index, settings, sorted({c.tenant for c in cases}),
                                    settings.agent_url) as probing:
            return await evaluate(index.store, index.embedder, roles, probing, cases,
                                  traffic, runs=runs, variants=variants, progress=progress,
                                  publish=publish, offtopic=offtopic)
    finally:
        await index.stop()
