"""Embedder benchmark: the local models (minilm://, e5-small://, bge-small://) side by side.

For each model, in one run:

- load time: hash checks of the model and tokenizer files, tokenizer and ONNX session;
- CPU ms per query: one short query per call (``embed_queries``, 1 thread), median and
  p90 over ``--queries`` heldout queries of the shipped benchmarks;
- bulk throughput (``embed``, batches of 64): passages per CPU second with 1 thread over
  every passage of the shipped corpora (the recall run below), and passages per wall
  second on a sample of ``--bulk`` passages with 1 thread and with all threads
  (onnxruntime's default). CPU figures are this process's CPU time, so other load on the
  machine disturbs them little; wall figures are only as good as the machine was idle
  (its load average is recorded);
- dense-only retrieval quality on bench/data/*/ (gnome-help, debian-handbook,
  postgresql): the corpus is chunked as ingestion chunks it (NUGGETFLOW_CHUNK_CHARS,
  embedded as "title\\ntext" like the index), each heldout paraphrase query of a case with
  cited pages is embedded as a query, and recall@10 is the share of those queries for
  which a passage of a cited page is among the 10 nearest passages (``recall@10``) or a
  cited page among the 10 best pages, a page scored by its best passage
  (``doc_recall@10``).

Usage: python -m bench.embedders [--models minilm,e5-small,bge-small] [--queries 300]
       [--bulk 256] [--models-dir var/models] [--out bench/results/embedders.json]
The e5 and bge files come from deploy/models/fetch.sh. Writes the JSON (with the command
that produced it) and prints a table with ratios against minilm.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from nuggetflow.settings import Settings
from query.corpus import chunk_text
from query.embeddings import (
    LOCAL_MODELS,
    MINILM,
    MiniLMEmbedder,
    OnnxBertEmbedder,
    Vector,
)

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / "data"
BENCHMARKS = ("gnome-help", "debian-handbook", "postgresql")
RESULTS = ROOT / "bench" / "results" / "embedders.json"
K = 10
BATCH = 64


def log(msg: str) -> None:
    """Progress on stderr."""
    print(msg, file=sys.stderr, flush=True)


@dataclass
class Benchmark:
    """One shipped benchmark: its corpus passages and heldout queries with cited pages."""

    name: str
    passage_texts: list[str]
    passage_docs: list[str]
    queries: list[str]
    cited: list[frozenset[str]]


def load_benchmark(name: str, chunk_chars: int, max_passage_chars: int,
                   data: Path = DATA) -> Benchmark:
    """Passages of bench/data/<name>/corpus.jsonl and the heldout queries of the cases in
    cases.jsonl that cite a page (each query with its case's cited pages)."""
    texts: list[str] = []
    docs: list[str] = []
    for line in (data / name / "corpus.jsonl").read_text().splitlines():
        if not line.strip():
            continue
        doc = json.loads(line)
        for chunk in chunk_text(doc["text"], chunk_chars, max_passage_chars):
            texts.append(f"{doc['title']}\n{chunk}")
            docs.append(doc["id"])
    queries: list[str] = []
    cited: list[frozenset[str]] = []
    for line in (data / name / "cases.jsonl").read_text().splitlines():
        if not line.strip():
            continue
        case = json.loads(line)
        if not case.get("cited"):
            continue
        for q in case.get("heldout", []):
            queries.append(q)
            cited.append(frozenset(case["cited"]))
    return Benchmark(name, texts, docs, queries, cited)


def recall_at_k(qvecs: Vector, pvecs: Vector, passage_docs: Sequence[str],
                cited: Sequence[frozenset[str]], k: int = K) -> tuple[float, float]:
    """(passage-level, page-level) recall@k of the cited pages (see the module doc)."""
    if len(qvecs) == 0:
        return 0.0, 0.0
    scores = qvecs @ pvecs.T
    docs = np.asarray(passage_docs)
    hits = doc_hits = 0
    for row, want in zip(scores, cited, strict=True):
        order = np.argsort(-row, kind="stable")
        hits += any(docs[i] in want for i in order[:k])
        seen: list[str] = []
        for i in order:
            if docs[i] not in seen:
                seen.append(str(docs[i]))
                if len(seen) == k:
                    break
        doc_hits += any(d in want for d in seen)
    return hits / len(qvecs), doc_hits / len(qvecs)


def make(scheme: str, models_dir: Path, threads: int) -> OnnxBertEmbedder:
    """A fresh (unloaded) embedder of one local model, batches of 64."""
    model = LOCAL_MODELS[scheme]
    if model is MINILM:
        return MiniLMEmbedder(threads=threads, batch_size=BATCH)
    return OnnxBertEmbedder.from_dir(model, models_dir, threads=threads, batch_size=BATCH)


def bench_model(scheme: str, models_dir: Path, benches: Sequence[Benchmark],
                n_queries: int, n_bulk: int) -> dict[str, Any]:
    """Every figure of one model (see the module doc)."""
    one = make(scheme, models_dir, threads=1)
    t0 = time.perf_counter()
    one.warm_up()
    load_s = time.perf_counter() - t0

    queries = list(dict.fromkeys(q for b in benches for q in b.queries))[:n_queries]
    for q in queries[:10]:  # first calls allocate
        one.embed_queries([q])
    cpu_ms: list[float] = []
    wall_ms: list[float] = []
    for q in queries:
        c0, w0 = time.process_time(), time.perf_counter()
        one.embed_queries([q])
        cpu_ms.append((time.process_time() - c0) * 1000)
        wall_ms.append((time.perf_counter() - w0) * 1000)

    everything = [t for b in benches for t in b.passage_texts]
    rng = np.random.default_rng(0)
    sample = [everything[i] for i in rng.permutation(len(everything))[:n_bulk]]
    bulk_1 = _timed(one, sample)
    every = make(scheme, models_dir, threads=0)
    every.warm_up()
    bulk_all = _timed(every, sample)

    recall: dict[str, dict[str, float]] = {}
    corpus_cpu = 0.0
    total_q = total_hits = total_doc_hits = 0.0
    for b in benches:
        c0 = time.process_time()
        pvecs = one.embed(b.passage_texts)
        corpus_cpu += time.process_time() - c0
        qvecs = one.embed_queries(b.queries)
        r, dr = recall_at_k(qvecs, pvecs, b.passage_docs, b.cited)
        recall[b.name] = {"queries": len(b.queries), "passages": len(b.passage_texts),
                          "recall@10": round(r, 4), "doc_recall@10": round(dr, 4)}
        total_q += len(b.queries)
        total_hits += r * len(b.queries)
        total_doc_hits += dr * len(b.queries)
    log(f"  {scheme}: load {load_s:.2f}s, query cpu p50 {statistics.median(cpu_ms):.2f}ms, "
        f"bulk {bulk_1['per_cpu_s']:.0f} passages/CPU-s (1 thread), "
        f"{bulk_all['per_s']:.0f}/s wall (all threads)")
    return {
        "model": LOCAL_MODELS[scheme].name,
        "max_tokens": LOCAL_MODELS[scheme].max_tokens,
        "load_s": round(load_s, 3),
        "query_cpu_ms_p50": round(statistics.median(cpu_ms), 3),
        "query_cpu_ms_p90": round(float(np.percentile(cpu_ms, 90)), 3),
        "query_wall_ms_p50": round(statistics.median(wall_ms), 3),
        "queries_timed": len(queries),
        "bulk_passages": len(sample),
        "bulk_1_thread": bulk_1,
        "bulk_all_threads": bulk_all,
        "corpus_passages": len(everything),
        "corpus_passages_per_cpu_s_1_thread": round(len(everything) / max(corpus_cpu, 1e-9), 1),
        "recall@10": round(total_hits / total_q, 4),
        "doc_recall@10": round(total_doc_hits / total_q, 4),
        "recall_by_benchmark": recall,
    }


def _timed(embedder: OnnxBertEmbedder, texts: Sequence[str]) -> dict[str, float]:
    """Embed texts once (batches of 64): passages per wall second and per CPU second."""
    c0, w0 = time.process_time(), time.perf_counter()
    embedder.embed(texts)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    cpu, wall = max(cpu, 1e-9), max(wall, 1e-9)
    return {"per_s": round(len(texts) / wall, 1), "per_cpu_s": round(len(texts) / cpu, 1),
            "wall_s": round(wall, 3), "cpu_s": round(cpu, 3)}


def ratios(results: dict[str, dict[str, Any]], base: str = "minilm") -> dict[str, Any]:
    """Each model's figures divided by the base model's (recall: the difference)."""
    if base not in results:
        return {}
    b = results[base]
    out: dict[str, Any] = {}
    for scheme, r in results.items():
        out[scheme] = {
            "query_cpu_ms_p50": round(r["query_cpu_ms_p50"] / b["query_cpu_ms_p50"], 2),
            "passages_per_cpu_s_1_thread": round(
                r["corpus_passages_per_cpu_s_1_thread"]
                / b["corpus_passages_per_cpu_s_1_thread"], 2),
            "bulk_per_s_all_threads": round(
                r["bulk_all_threads"]["per_s"] / b["bulk_all_threads"]["per_s"], 2),
            "load_s": round(r["load_s"] / b["load_s"], 2),
            "recall@10_minus_base": round(r["recall@10"] - b["recall@10"], 4),
            "doc_recall@10_minus_base": round(r["doc_recall@10"] - b["doc_recall@10"], 4),
        }
    return out


def table(results: dict[str, dict[str, Any]], rel: dict[str, Any]) -> str:
    """The side-by-side table that the run prints."""
    schemes = list(results)

    def row(label: str, fmt: str, get: Any) -> tuple[str, list[str]]:
        return label, [format(get(results[s]), fmt) for s in schemes]

    rows = [
        row("load s", ".2f", lambda r: r["load_s"]),
        row("query CPU ms p50 (1 thread)", ".2f", lambda r: r["query_cpu_ms_p50"]),
        row("query CPU ms p90 (1 thread)", ".2f", lambda r: r["query_cpu_ms_p90"]),
        row("passages/CPU-s, 1 thread (corpus)", ".1f",
            lambda r: r["corpus_passages_per_cpu_s_1_thread"]),
        row("passages/s wall, 1 thread (sample)", ".1f", lambda r: r["bulk_1_thread"]["per_s"]),
        row("passages/s wall, all threads (sample)", ".1f",
            lambda r: r["bulk_all_threads"]["per_s"]),
    ]
    for name in results[schemes[0]]["recall_by_benchmark"]:
        rows.append(row(f"recall@10 {name}", ".3f",
                        lambda r, n=name: r["recall_by_benchmark"][n]["recall@10"]))
    rows.append(row("recall@10 all", ".3f", lambda r: r["recall@10"]))
    rows.append(row("doc recall@10 all", ".3f", lambda r: r["doc_recall@10"]))
    if rel:
        rows += [
            ("query CPU ms, x minilm", [f"{rel[s]['query_cpu_ms_p50']:.2f}" for s in schemes]),
            ("passages/CPU-s, x minilm",
             [f"{rel[s]['passages_per_cpu_s_1_thread']:.2f}" for s in schemes]),
            ("recall@10 - minilm", [f"{rel[s]['recall@10_minus_base']:+.3f}" for s in schemes]),
        ]
    width = max(len(r[0]) for r in rows)
    lines = [f"{'':{width}}  " + "  ".join(f"{s:>10}" for s in schemes)]
    lines += [f"{label:{width}}  " + "  ".join(f"{v:>10}" for v in vals) for label, vals in rows]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark, write the JSON, print the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--models", default="minilm,e5-small,bge-small")
    ap.add_argument("--queries", type=int, default=300, help="single queries timed per model")
    ap.add_argument("--bulk", type=int, default=256, help="passages timed with 1 thread")
    ap.add_argument("--benchmarks", default=",".join(BENCHMARKS))
    ap.add_argument("--models-dir", default=os.environ.get("NUGGETFLOW_MODELS_DIR",
                                                           str(ROOT / "var" / "models")))
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args(argv)
    load_average = os.getloadavg()[0]
    settings = Settings.from_env({})
    benches = [load_benchmark(n, settings.chunk_chars, settings.max_passage_chars)
               for n in args.benchmarks.split(",") if n]
    log(f"{sum(len(b.passage_texts) for b in benches)} passages, "
        f"{sum(len(b.queries) for b in benches)} heldout queries")
    results: dict[str, dict[str, Any]] = {}
    for scheme in args.models.split(","):
        log(f"== {scheme}")
        results[scheme] = bench_model(scheme, Path(args.models_dir), benches, args.queries,
                                      args.bulk)
    rel = ratios(results)
    out = {
        "command": " ".join(["python -m bench.embedders", *(argv or sys.argv[1:])]),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()} {platform.system()}, {os.cpu_count()} cores",
        "load_average_at_start": round(load_average, 2),
        "load_average_at_end": round(os.getloadavg()[0], 2),
        "note": "CPU ms and passages per CPU second are this process's CPU time (robust to "
                "other load); wall-clock passages/s depend on what else the machine runs.",
        "data": "bench/data/{" + ",".join(b.name for b in benches) + "}: corpus passages "
                "(chunked as ingested), heldout queries of cases with cited pages",
        "models": results,
        "ratios_vs_minilm": rel,
    }
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print(table(results, rel))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
