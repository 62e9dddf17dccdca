"""Living-knowledge benchmark: a corpus release after publication, with and without the
re-probe step (docs/architecture.md, "Re-probing on corpus change").

On a shipped benchmark (GNOME Help by default):

1. index the corpus; turn every case's feedback into a nugget with INO (variant E) and
   publish it (auto policy);
2. held-out retrieval *before*: each published nugget's held-out queries (never shown to
   the optimizer, nor to the re-probe) through the built-in agent; a query counts when the
   nugget reached the generator's context (the evaluation's retrieval);
3. a corpus release touching ``--share`` (10 %) of the passages, seeded. The pages the
   cases compete with are revised first, the way documentation teams revise the pages
   users asked about: each gains an FAQ paragraph that asks the case's question in the
   user's words and answers it with the generic answer the correction overturned (what a
   help page says). The rest of the share is pages picked at random whose text gains an
   editorial note. Every touched document becomes a new version (the old one is closed);
4. held-out retrieval *after the change*, nothing re-probed (the baseline);
5. the re-probe step on the release's changes (as ``nuggetflow ingest`` runs it), timed;
6. held-out retrieval *after re-probing* (new versions where it re-optimized).

Held-out rates are over the nuggets the release affected (re-probed) and over all
published nuggets. Usage: ``python -m bench.living_bench [--benchmark gnome-help]
[--share 0.1] [--seed 7]``; writes ``bench/results/living.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nuggetflow.settings import Settings
from optimizer.accounting import Meter
from optimizer.backends import make_roles
from optimizer.evaluation import Case, read_benchmark, shipped_benchmarks
from optimizer.harness import BuiltinHarness
from optimizer.pipeline import Optimizer
from optimizer.roles import Roles
from query.backends.sqlite import SQLiteStore
from query.corpus import Document, ingest_corpus
from query.embeddings import make_embedder
from query.index import NuggetIndex
from query.model import Nugget, Publication
from query.traces import NuggetTrace
from stream.engine import InlineEngine
from stream.runner import EmbeddedRunner
from stream.steps import Steps
from stream.topics import Topics

ROOT = Path(__file__).resolve().parent.parent
NOTE = "Reviewed for the current release; the steps are unchanged."


@dataclass
class Published:
    """A case's published nugget and its held-out queries."""

    case: Case
    lineage: str
    head: Nugget


def release(docs: Sequence[Document], cases: Sequence[Case], share: float,
            passages_of: dict[str, int], seed: int) -> tuple[list[Document], dict[str, int]]:
    """The changed documents of a release touching ``share`` of the passages (module
    docstring, step 3), and how many documents of each kind it revised."""
    by_id = {d.id: d for d in docs}
    budget = round(share * sum(passages_of.values()))
    asked: dict[str, list[Case]] = {}
    for c in cases:
        if c.actionable and c.competitor in by_id:
            asked.setdefault(c.competitor, []).append(c)
    rng = random.Random(seed)
    order = sorted(asked)
    rng.shuffle(order)
    out: list[Document] = []
    used, kinds = 0, Counter[str]()
    for doc_id in order:
        if used >= budget:
            break
        d = by_id[doc_id]
        faq = " ".join(f"{c.query.strip().rstrip('?')}? {c.answer.strip()}"
                       for c in asked[doc_id])
        out.append(Document(d.id, d.tenant, d.title, f"{d.text}\n\nFrequently asked: {faq}",
                            d.url))
        used += passages_of.get(d.id, 1)
        kinds["faq"] += 1
    rest = [d for d in docs if d.id not in asked]
    rng.shuffle(rest)
    for d in rest:
        if used >= budget:
            break
        out.append(Document(d.id, d.tenant, d.title, f"{d.text}\n\n{NOTE}", d.url))
        used += passages_of.get(d.id, 1)
        kinds["note"] += 1
    return out, dict(kinds)


async def heldout_rate(harness: BuiltinHarness, published: Sequence[Published],
                       heads: dict[str, Nugget]) -> tuple[float, int]:
    """Share of held-out queries whose answer context held the nugget's head version."""
    hits = total = 0
    for p in published:
        head = heads[p.lineage]
        for q in p.case.heldout:
            trace = await harness.run(head.tenant, q, None, Meter())
            hits += head.id in trace.reached
            total += 1
    return (round(hits / total, 4) if total else 0.0), total


async def current_heads(index: NuggetIndex, published: Sequence[Published]
                        ) -> dict[str, Nugget]:
    return {p.lineage: await index.head(p.head.tenant, p.lineage) for p in published}


async def run(bench_name: str, share: float, seed: int, workdir: Path) -> dict[str, Any]:
    """The benchmark (module docstring); the figures as a dict."""
    settings = Settings.from_env(review_policy="auto", review_policy_tenants="")
    bench = next(b for b in shipped_benchmarks(ROOT / "bench/data") if b.name == bench_name)
    inputs = read_benchmark(bench, settings)
    embedder = make_embedder(settings)
    index = NuggetIndex(SQLiteStore(workdir / "index.db", settings.embedding_dim), embedder,
                        settings)
    await index.start()
    try:
        ingested = await ingest_corpus(index, bench.corpus, documents=inputs.documents)
        passages_of: Counter[str] = Counter()
        for change in ingested.changes:
            for d in change.documents:
                passages_of[d.doc_id] += len(d.passage_ids)
        roles: Roles = make_roles(settings, embedder=embedder)
        harness = BuiltinHarness(index.store, embedder, roles.generator, settings)
        published: list[Published] = []
        t0 = time.perf_counter()
        try:
            opt = Optimizer(index.store, embedder, roles, settings, harness=harness)
            for case in inputs.cases:
                if not case.actionable or not case.heldout:
                    continue
                outcome = await opt.process(case.context())
                if outcome.nugget is None:
                    continue
                sub = await index.submit(outcome.nugget, publication=Publication.PENDING_REVIEW)
                head = await index.approve(case.tenant, sub.id, reviewer="bench")
                published.append(Published(case, head.lineage_id or head.id, head))
        finally:
            await harness.close()
        publish_seconds = time.perf_counter() - t0
        print(f"published {len(published)} nuggets in {publish_seconds:.0f} s",
              file=sys.stderr)

        async def measure() -> tuple[dict[str, Nugget], BuiltinHarness]:
            h = BuiltinHarness(index.store, embedder, roles.generator, settings)
            return await current_heads(index, published), h

        heads, h = await measure()
        before_all, n_queries = await heldout_rate(h, published, heads)
        before_by = {p.lineage: await heldout_rate(h, [p], heads) for p in published}
        await h.close()

        changed, kinds = release(inputs.documents, inputs.cases, share, passages_of, seed)
        path = workdir / "release.jsonl"
        path.write_text("".join(json.dumps({"id": d.id, "tenant": d.tenant, "title": d.title,
                                            "text": d.text, "url": d.url}) + "\n"
                                for d in changed))
        report = await ingest_corpus(index, path)
        touched = sum(len(d.passage_ids) for c in report.changes for d in c.documents)
        print(f"release: {len(changed)} documents, {touched} passages ({kinds})",
              file=sys.stderr)

        heads, h = await measure()
        after_all, _ = await heldout_rate(h, published, heads)
        after_by = {p.lineage: await heldout_rate(h, [p], heads) for p in published}
        await h.close()

        engine = InlineEngine(index.store, embedder, roles, settings)
        t1 = time.perf_counter()
        await EmbeddedRunner(Steps(index, engine, settings), Topics()).reprobe(
            c.to_bytes() for c in report.changes)
        reprobe_seconds = time.perf_counter() - t1
        traces: list[NuggetTrace] = []
        for p in published:
            traces += await index.store.traces(p.head.tenant, p.lineage)
        reprobed = {t.lineage_id for t in traces}
        outcomes = Counter(t.outcome for t in traces)

        heads, h = await measure()
        reprobe_all, _ = await heldout_rate(h, published, heads)
        reprobe_by = {p.lineage: await heldout_rate(h, [p], heads) for p in published}
        await h.close()
    finally:
        await index.stop()

    def over(rates: dict[str, tuple[float, int]], which: set[str]) -> float:
        num = sum(r * n for lineage, (r, n) in rates.items() if lineage in which)
        den = sum(n for lineage, (_, n) in rates.items() if lineage in which)
        return round(num / den, 4) if den else 0.0

    n = len(published)
    return {
        "benchmark": bench_name,
        "share_of_passages_changed": round(touched / max(1, sum(passages_of.values())), 4),
        "documents_changed": len(changed), "documents_changed_by_kind": kinds,
        "passages_changed": touched, "published_nuggets": n,
        "reprobed_share": round(len(reprobed) / n, 4) if n else 0.0,
        "reoptimized_share": round(outcomes["reoptimized"] / n, 4) if n else 0.0,
        "reprobe_outcomes": dict(sorted(outcomes.items())),
        "seconds_per_reprobe": round(reprobe_seconds / max(1, len(reprobed)), 3),
        "reprobe_seconds": round(reprobe_seconds, 2),
        "heldout_before": over(before_by, reprobed),
        "heldout_after_change": over(after_by, reprobed),
        "heldout_after_reprobe": over(reprobe_by, reprobed),
        "all_nuggets": {"heldout_before": before_all, "heldout_after_change": after_all,
                        "heldout_after_reprobe": reprobe_all, "heldout_queries": n_queries},
        "affected_nuggets_dropped": sum(
            1 for lineage in reprobed if after_by[lineage][0] < before_by[lineage][0]),
        "publish_seconds": round(publish_seconds, 1),
        "settings": {"rerank_depth": settings.rerank_depth,
                     "reprobe_min_cosine": settings.reprobe_min_cosine,
                     "ino_max_iterations": settings.ino_max_iterations,
                     "llm": settings.llm, "embedder": settings.embedder},
        "seed": seed,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """CLI: run and write bench/results/living.json (``--out``)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--benchmark", default="gnome-help", help="shipped benchmark (gnome-help)")
    ap.add_argument("--share", type=float, default=0.1,
                    help="share of the passages the release touches (0.1)")
    ap.add_argument("--seed", type=int, default=7, help="seed of the release's choices (7)")
    ap.add_argument("--out", default=str(ROOT / "bench/results/living.json"))
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="living-") as tmp:
        figures = asyncio.run(run(args.benchmark, args.share, args.seed, Path(tmp)))
    figures["command"] = "python -m bench.living_bench " + " ".join(
        sys.argv[1:] if argv is None else argv)
    Path(args.out).write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
