"""Gate benchmark: gate kinds x embedding models on the shipped benchmarks, in one run.

For each configuration ``gate:embedder`` (e.g. ``features:minilm://``) and benchmark:

- ``heldout_retrieval_a`` / ``heldout_retrieval_e`` / ``heldout_citation_e``: the
  evaluation's variants A and E (``nuggetflow eval`` with ``--variants A,E``), held-out
  queries, the nugget reached the generator / was cited;
- ``negative_offtopic_retrieval``: every E nugget published, the share of off-topic page
  titles for which a nugget reached the generator (the evaluation's negative control);
- fidelity of the E nuggets (fact recall, unsupported text, stale claims): the gate must
  not change what a nugget says;
- ``cpu_ms_per_query``: median CPU milliseconds of one gated Retrieve (this process's CPU
  time, query embedding included, the gate already fitted) over the held-out queries, on
  the evaluation's index with the E nuggets published;
- ``passages_per_s``: passages embedded per CPU second (1 thread, batches of 64) on the
  benchmark's corpus, as bulk ingestion embeds them;
- ``gate_fit_seconds`` and the fitted gate's report (mined lists, calibration error,
  held-out pass rates of relevant and irrelevant mined items).

Usage: python -m bench.rerank [--configs features:minilm://,cosine:minilm://]
       [--benchmark gnome-help ...] [--runs 1] [--out bench/results/rerank.json]
       [--baseline bench/results/eval.json]
``chosen`` marks the configuration with the best mean of held-out E retrieval minus the
off-topic negative control over the benchmarks, among those at or under the median CPU
cost. ``--baseline`` adds the figures of an earlier full evaluation (eval.json) as the
``before`` entry, for comparison.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from app.wiring import make_roles_for, scratch_index
from nuggetflow.logging import configure
from nuggetflow.settings import Settings
from optimizer.evaluation import read_benchmark, run_benchmark, shipped_benchmarks
from query.backends.sqlite import SQLiteStore
from query.corpus import chunk_text
from query.embeddings import make_embedder
from query.index import NuggetIndex
from query.retrieval import RetrieveRequest

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "rerank.json"
DEFAULT_CONFIGS = "features:minilm://,cosine:minilm://"


def _variant(figures: dict[str, Any], v: str, key: str) -> float:
    """A variant's figure from evaluate()'s result ("variants") or an eval.json entry."""
    value = figures.get("variants", figures)[v][key]
    return float(value["mean"] if isinstance(value, dict) else value)


async def cpu_per_query(settings: Settings, workdir: Path, tenant: str,
                        queries: list[str]) -> tuple[float, float, dict[str, float]]:
    """(median CPU ms per gated Retrieve, gate fit seconds, the fit's report) on the
    evaluation's index."""
    index = NuggetIndex(SQLiteStore(workdir / "index.db", settings.embedding_dim),
                        make_embedder(settings), settings)
    await index.start()
    try:
        t0 = time.perf_counter()
        await index.retriever.retrieve(RetrieveRequest(tenant, queries[0]),
                                       count_suppressed=False)
        fit_s = time.perf_counter() - t0
        index.retriever.queries.cache_size = 0  # every query embedded, as a fresh user's
        costs = []
        for q in queries:
            c0 = time.process_time()
            await index.retriever.retrieve(RetrieveRequest(tenant, q, k=3))
            costs.append((time.process_time() - c0) * 1000)
        fitted = index.retriever.gate.fitted(tenant)
        return statistics.median(costs), fit_s, dict(fitted.report) if fitted else {}
    finally:
        await index.stop()


def passages_per_cpu_s(settings: Settings, texts: list[str]) -> float:
    """Passages embedded per CPU second (batches of 64, the embedder's thread setting)."""
    embedder = make_embedder(settings.replace(embedder_threads=1))
    embedder.embed(texts[:8])  # load
    c0 = time.process_time()
    for i in range(0, len(texts), 64):
        embedder.embed(texts[i:i + 64])
    return len(texts) / max(1e-9, time.process_time() - c0)


async def run(configs: list[tuple[str, str]], names: list[str], runs: int,
              workroot: Path) -> list[dict[str, Any]]:
    """One entry per configuration with per-benchmark figures and their means."""
    out = []
    base = Settings.from_env()
    benches = [b for b in shipped_benchmarks() if not names or b.name in names]
    for gate, embedder in configs:
        settings = base.replace(gate=gate, embedder=embedder)
        entry: dict[str, Any] = {"gate": gate, "embedder": embedder, "benchmarks": {}}
        for bench in benches:
            print(f"{gate} x {embedder}: {bench.name}", file=sys.stderr, flush=True)
            inputs = read_benchmark(bench, settings, None)
            workdir = workroot / f"{gate}-{embedder.split(':')[0]}-{bench.name}"
            t0 = time.perf_counter()
            figures = await run_benchmark(bench, settings, workdir=workdir, runs=runs,
                                          variants=("A", "E"), inputs=inputs,
                                          open_index=partial(scratch_index, settings),
                                          make_roles=partial(make_roles_for, settings))
            eval_s = time.perf_counter() - t0
            tenant = inputs.cases[0].tenant
            heldout = [q for c in inputs.cases if c.actionable for q in c.heldout][:200]
            cpu_ms, fit_s, report = await cpu_per_query(settings, workdir, tenant, heldout)
            texts = [f"{d.title}\n{t}" for d in inputs.documents
                     for t in chunk_text(d.text, settings.chunk_chars)][:512]
            entry["benchmarks"][bench.name] = {
                "heldout_retrieval_a": _variant(figures, "A", "heldout_retrieval"),
                "heldout_retrieval_e": _variant(figures, "E", "heldout_retrieval"),
                "heldout_citation_a": _variant(figures, "A", "heldout_citation"),
                "heldout_citation_e": _variant(figures, "E", "heldout_citation"),
                "negative_offtopic_retrieval": figures.get("negative_offtopic_retrieval"),
                "negative_offtopic_citation": figures.get("negative_offtopic_citation"),
                "negative_offtopic_hits": figures.get("negative_offtopic_hits", []),
                "negative_retrieval": figures.get("negative_retrieval"),
                "fact_recall_e": figures.get("fact_recall"),
                "unsupported_text_rate_e": figures.get("unsupported_text_rate"),
                "stale_claim_rate_e": figures.get("stale_claim_rate"),
                "cpu_ms_per_query": round(cpu_ms, 2),
                "passages_per_s": round(passages_per_cpu_s(settings, texts), 1),
                "gate_fit_seconds": round(fit_s, 2), "gate_report": report,
                "eval_seconds": round(eval_s, 1)}
        per = entry["benchmarks"].values()
        for key in ("heldout_retrieval_a", "heldout_retrieval_e", "heldout_citation_e",
                    "negative_offtopic_retrieval", "cpu_ms_per_query", "passages_per_s"):
            values = [float(b[key]) for b in per if b.get(key) is not None]
            entry[key] = round(statistics.mean(values), 4) if values else None
        out.append(entry)
    return out


def choose(entries: list[dict[str, Any]]) -> None:
    """Mark ``chosen`` (see the module docstring)."""
    costs = [e["cpu_ms_per_query"] for e in entries if e.get("cpu_ms_per_query") is not None]
    limit = statistics.median(costs) if costs else float("inf")
    best, score = None, float("-inf")
    for e in entries:
        e["chosen"] = False
        if e.get("cpu_ms_per_query") is None or e["cpu_ms_per_query"] > limit:
            continue
        s = e["heldout_retrieval_e"] - e["negative_offtopic_retrieval"]
        if s > score:
            best, score = e, s
    if best is not None:
        best["chosen"] = True


def baseline(path: Path) -> dict[str, Any] | None:
    """The ``before`` entry from an earlier full evaluation's eval.json."""
    if not path.exists():
        return None
    d = json.loads(path.read_text())
    per = {}
    for name, b in (d.get("benchmarks") or {}).items():
        per[name] = {"heldout_retrieval_a": _variant(b, "A", "heldout_retrieval"),
                     "heldout_retrieval_e": _variant(b, "E", "heldout_retrieval"),
                     "heldout_citation_e": _variant(b, "E", "heldout_citation"),
                     "negative_offtopic_retrieval": b.get("negative_offtopic_retrieval")}
    return {"source": str(path), "command": d.get("command"), "benchmarks": per}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--configs", default=DEFAULT_CONFIGS,
                    help="comma-separated gate:embedder pairs (default: %(default)s)")
    ap.add_argument("--benchmark", action="append", default=[],
                    help="shipped benchmark to run (repeatable; default: all)")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--workdir", type=Path, default=ROOT / "var" / "bench-rerank")
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--baseline", type=Path, default=None,
                    help="an earlier eval.json to include as the 'before' entry")
    args = ap.parse_args(argv)
    configure("WARNING")
    configs = []
    for part in filter(None, args.configs.split(",")):
        gate, _, embedder = part.partition(":")
        configs.append((gate, embedder or "minilm://"))
    entries = asyncio.run(run(configs, args.benchmark, args.runs, args.workdir))
    choose(entries)
    result: dict[str, Any] = {
        "command": "python -m bench.rerank " + " ".join(argv or sys.argv[1:]),
        "date": datetime.now(UTC).isoformat(timespec="seconds"), "runs": args.runs,
        "configurations": entries}
    if args.baseline is not None:
        result["before"] = baseline(args.baseline)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"{'gate':10s} {'embedder':14s} {'A':>6s} {'E':>6s} {'E cit':>6s} {'offtopic':>8s}"
          f" {'cpu ms/q':>8s} {'pass/s':>7s} chosen")
    for e in entries:
        print(f"{e['gate']:10s} {e['embedder']:14s} {e['heldout_retrieval_a']:6.3f} "
              f"{e['heldout_retrieval_e']:6.3f} {e['heldout_citation_e']:6.3f} "
              f"{e['negative_offtopic_retrieval']:8.3f} {e['cpu_ms_per_query']:8.2f} "
              f"{e['passages_per_s']:7.1f} {'*' if e['chosen'] else ''}")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
