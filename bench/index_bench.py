"""Index benchmark: governed lexical and hybrid retrieval at 57,000 and 100,000 nuggets.

Data: real English sentences from the man pages installed on this machine (one nugget per
sentence, titled by its page's NAME line); queries: the NAME lines themselves (real short
descriptions), never random words. In one run, side by side:

- governed lexical (the embedded store's path: FTS5's bm25() computed on its in-memory
  postings mirror, governance filter before the top-k) against raw FTS5 BM25 on the same
  table with the same query terms, and against the same postings top-k without the filter
  (the filter's own cost);
- hybrid (lexical + filtered HNSW + min-max fusion + record fetch), with and without the
  query embedding time;
- the OpenSearch backend on the same data (needs a node: deploy/opensearch/node.sh start).

Usage: python -m bench.index_bench [--sizes 57000,100000] [--queries 2000] [--opensearch URL]
Writes bench/results/index.json (keys documented in the README) and prints a table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from bench.corpora import manpage_texts
from nuggetflow.settings import Settings
from query.backends.postings import top_k
from query.backends.sqlite import SQLiteStore
from query.embeddings import MiniLMEmbedder
from query.fusion import fuse
from query.model import Evidence, FactTriple, Nugget, Provenance, Publication, Validity, View
from query.retrieval import Retriever, RetrieveRequest
from query.store import GovernanceFilter
from query.text import query_terms

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "var" / "bench"
T0 = datetime(2024, 1, 1, tzinfo=UTC)
TENANT = "bench"


def log(msg: str) -> None:
    """Progress on stderr."""
    print(msg, file=sys.stderr, flush=True)


def percentile(xs: Sequence[float], p: float) -> float:
    """The p-th percentile (nearest rank) of xs."""
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(p / 100 * len(s)) - 1))]


def load_texts(n: int) -> tuple[list[tuple[str, str]], list[str]]:
    """(title, sentence) pairs and distinct NAME-line queries from the man pages."""
    pairs: list[tuple[str, str]] = []
    queries: list[str] = []
    for page in manpage_texts():
        if len(page.name_line.split()) >= 3:
            queries.append(page.name_line)
        title = f"{page.page.split('.')[0]}: {page.name_line}"
        pairs.extend((title, s) for s in page.sentences)
        if len(pairs) >= n:
            break
    if len(pairs) < n:
        raise SystemExit(f"only {len(pairs)} man-page sentences on this machine; need {n}")
    return pairs[:n], list(dict.fromkeys(queries))


def embed_cached(embedder: MiniLMEmbedder, texts: list[str], name: str) -> np.ndarray:
    """Embeddings of texts, cached under var/bench (embedding 100k texts takes minutes)."""
    path = WORK / f"{name}-{len(texts)}.npy"
    if path.is_file():
        cached: np.ndarray = np.load(path)
        if cached.shape == (len(texts), embedder.dim):
            return cached
    out = []
    started = time.perf_counter()
    for i in range(0, len(texts), 2048):
        out.append(embedder.embed(texts[i : i + 2048]))
        done = min(i + 2048, len(texts))
        log(f"  embedded {done}/{len(texts)} ({done / (time.perf_counter() - started):.0f}/s)")
    arr = np.concatenate(out)
    np.save(path, arr)
    return arr


def make_nuggets(pairs: list[tuple[str, str]]) -> list[Nugget]:
    """Published Active nuggets, one per sentence (ids are positions: data is fixed)."""
    return [Nugget(tenant=TENANT, title=title, body=body, fact=FactTriple(title, "says", body),
                   validity=Validity(T0), publication=Publication.PUBLISHED,
                   evidence=(Evidence(f"s{i}"),), provenance=Provenance(event_id=f"s{i}"),
                   id=f"n{i}", lineage_id=f"n{i}") for i, (title, body) in enumerate(pairs)]


def timed(fn: Callable[[], Any], reps: int) -> list[float]:
    """Milliseconds of each of reps calls."""
    out = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def summarize(ms: list[float]) -> dict[str, float]:
    """P50 and P99 in ms, rounded."""
    return {"p50_ms": round(statistics.median(ms), 4), "p99_ms": round(percentile(ms, 99), 4)}


def bench_sqlite(nuggets: list[Nugget], vecs: np.ndarray, queries: list[str],
                 qvecs: np.ndarray, embedder: MiniLMEmbedder, reps: int) -> dict[str, Any]:
    """Build the embedded index and measure it."""
    path = WORK / f"index-{len(nuggets)}.db"
    for f in WORK.glob(path.name + "*"):
        f.unlink()
    store = SQLiteStore(path)
    store.start_sync()
    started = time.perf_counter()
    batch = 2000
    for i in range(0, len(nuggets), batch):
        store.write_nuggets_sync(nuggets[i : i + batch], list(vecs[i : i + batch]))
    ingest_s = time.perf_counter() - started
    log(f"  sqlite: wrote {len(nuggets)} nuggets in {ingest_s:.1f}s")
    store.db.execute("INSERT INTO fts(fts) VALUES ('optimize')")
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    flt = GovernanceFilter(TENANT, T0 + (datetime(2025, 1, 1, tzinfo=UTC) - T0), View.ACTIVE)
    terms = [query_terms(q) for q in queries]
    k = 60

    def cycle(fn: Callable[[int], Any]) -> Callable[[], Any]:
        state = {"i": 0}

        def call() -> Any:
            i = state["i"] = (state["i"] + 1) % len(queries)
            return fn(i)
        return call

    postings = store.postings
    assert postings is not None

    def raw_postings(i: int) -> Any:
        """The governed path's work without the governance filter: postings BM25 top-k,
        then the ids of the winners."""
        tokens = postings.tokens_of(store.prune_terms(terms[i]))
        if tokens is None:  # a phrase term: FTS5, as the governed path does
            return store.raw_lexical_sync(terms[i], k)
        m = postings.match(tokens)
        best = top_k(m, np.ones(len(m.positions), dtype=np.bool_), k)
        rowids = store.vector_rowids([p for p, _ in best])
        return store.db.execute(
            f"SELECT rowid, id, type, meta FROM items WHERE rowid IN "
            f"({','.join('?' * len(rowids))})", rowids).fetchall()

    # warm-up every path so the page cache is equally hot
    for i in range(min(200, len(queries))):
        store.lexical_sync(terms[i], flt, k)
        store.raw_lexical_sync(terms[i], k)
        raw_postings(i)
    governed, raw, rawp = [], [], []
    for _ in range(2):  # interleaved rounds: drift hits every path alike
        governed += timed(cycle(lambda i: store.lexical_sync(terms[i], flt, k)), reps)
        raw += timed(cycle(lambda i: store.raw_lexical_sync(terms[i], k)), reps)
        rawp += timed(cycle(raw_postings), reps)

    settings = Settings.from_env({})
    # no query-vector cache: every timed call embeds its query
    retriever = Retriever(store, embedder, settings.replace(query_embedding_cache=0))
    loop = asyncio.new_event_loop()

    async def hybrid_no_embed(i: int) -> Any:
        lex = await store.lexical(terms[i], flt, k)
        den = await store.dense(qvecs[i], flt, k)
        fused = fuse(lex, den, settings, "minmax")[:10]
        return await store.fetch(TENANT, [f.id for f in fused])

    hybrid = timed(cycle(lambda i: loop.run_until_complete(hybrid_no_embed(i))), reps)
    full = timed(cycle(lambda i: loop.run_until_complete(retriever.retrieve(
        RetrieveRequest(TENANT, queries[i], as_of=flt.as_of, k=10),
        count_suppressed=False))), max(200, reps // 4))
    lexical_e2e = timed(cycle(lambda i: loop.run_until_complete(retriever.retrieve(
        RetrieveRequest(TENANT, queries[i], as_of=flt.as_of, k=10), lexical_only=True))),
        reps)
    dense_only = timed(cycle(lambda i: store.dense_sync(qvecs[i], flt, k)), reps)
    stats = loop.run_until_complete(store.stats())
    loop.run_until_complete(store.stop())
    loop.close()
    g, r, rp = summarize(governed), summarize(raw), summarize(rawp)
    return {
        "nuggets": len(nuggets),
        "lexical": g, "raw_fts5": r, "raw_postings": rp,
        "governance_overhead_ratio": round(g["p50_ms"] / r["p50_ms"], 3),
        "governance_overhead_ratio_vs_raw_postings": round(g["p50_ms"] / rp["p50_ms"], 3),
        "hybrid_no_embedding": summarize(hybrid),
        "hybrid_with_embedding": summarize(full),
        "lexical_end_to_end": summarize(lexical_e2e),
        "dense_only": summarize(dense_only),
        "index_mb_lexical": round(stats["fts_bytes"] / 1e6, 2),
        "file_mb_total": round(stats["file_bytes"] / 1e6, 2),
        "ingest_nuggets_per_s_excluding_embedding": round(len(nuggets) / ingest_s),
    }


async def bench_opensearch(url: str, nuggets: list[Nugget], vecs: np.ndarray,
                           queries: list[str], qvecs: np.ndarray, reps: int) -> dict[str, Any]:
    """Load the same nuggets into OpenSearch and time lexical and hybrid queries."""
    from query.backends.opensearch import OpenSearchStore, os_id

    store = OpenSearchStore(url, index=f"bench-{len(nuggets)}")
    await store.drop()
    await store.start()
    started = time.perf_counter()
    batch = 1000
    for i in range(0, len(nuggets), batch):
        ops: list[dict[str, Any]] = []
        for n, v in zip(nuggets[i : i + batch], vecs[i : i + batch], strict=True):
            ops += [{"create": {"_index": store.index, "_id": os_id(n.tenant, n.id)}},
                    store._nugget_doc(n, v.tolist())]
        await store._bulk(ops, refresh=False)
        if (i // batch) % 10 == 0:
            log(f"  opensearch: loaded {i + len(ops) // 2}/{len(nuggets)}")
    await store.refresh()
    await store._call(store._client.indices.forcemerge, index=store.index, max_num_segments=1)
    ingest_s = time.perf_counter() - started
    flt = GovernanceFilter(TENANT, datetime(2025, 1, 1, tzinfo=UTC), View.ACTIVE)
    terms = [query_terms(q) for q in queries]
    settings = Settings.from_env({})
    for i in range(50):
        await store.lexical(terms[i], flt, 60)
        await store.dense(qvecs[i], flt, 60)
    lex_ms, hyb_ms = [], []
    for j in range(reps):
        i = j % len(queries)
        t = time.perf_counter()
        await store.lexical(terms[i], flt, 60)
        lex_ms.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        lex = await store.lexical(terms[i], flt, 60)
        den = await store.dense(qvecs[i], flt, 60)
        fused = fuse(lex, den, settings, "minmax")[:10]
        await store.fetch(TENANT, [f.id for f in fused])
        hyb_ms.append((time.perf_counter() - t) * 1000)
    stats = await store.stats()
    await store.stop()
    return {"nuggets": len(nuggets), "lexical": summarize(lex_ms),
            "hybrid_no_embedding": summarize(hyb_ms),
            "index_mb": round(stats["index_bytes"] / 1e6, 2),
            "ingest_nuggets_per_s_excluding_embedding": round(len(nuggets) / ingest_s)}


def main() -> int:
    """Run the benchmark and write bench/results/index.json."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="57000,100000")
    ap.add_argument("--queries", type=int, default=2000, help="timed queries per measurement")
    ap.add_argument("--opensearch", default="http://127.0.0.1:19200",
                    help="OpenSearch URL ('' to skip; the result then says so)")
    ap.add_argument("--opensearch-queries", type=int, default=500)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "index.json"))
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.opensearch:  # fail now, not after the SQLite half of the run
        import urllib.request

        try:
            urllib.request.urlopen(args.opensearch, timeout=5).read()
        except OSError as exc:
            print(f"index_bench: no OpenSearch at {args.opensearch} ({exc}); start one with "
                  "deploy/opensearch/node.sh start, or pass --opensearch ''", file=sys.stderr)
            return 2
    WORK.mkdir(parents=True, exist_ok=True)
    embedder = MiniLMEmbedder()
    embedder.warm_up()
    log(f"loading {max(sizes)} man-page sentences")
    pairs, queries = load_texts(max(sizes))
    log(f"  {len(pairs)} sentences, {len(queries)} distinct NAME-line queries")
    texts = [f"{t}\n{b}" for t, b in pairs]
    cached = (WORK / f"nuggets-{len(texts)}.npy").is_file()
    started = time.perf_counter()
    vecs = embed_cached(embedder, texts, "nuggets")
    embed_rate = None if cached else len(texts) / max(time.perf_counter() - started, 1e-9)
    qvecs = embed_cached(embedder, queries, "queries")
    nuggets = make_nuggets(pairs)
    results: dict[str, Any] = {"sizes": {}}
    for n in sizes:
        log(f"== {n} nuggets: SQLite")
        results["sizes"][str(n)] = {"sqlite": bench_sqlite(nuggets[:n], vecs[:n], queries,
                                                           qvecs, embedder, args.queries)}
        if args.opensearch:
            log(f"== {n} nuggets: OpenSearch at {args.opensearch}")
            results["sizes"][str(n)]["opensearch"] = asyncio.run(bench_opensearch(
                args.opensearch, nuggets[:n], vecs[:n], queries, qvecs,
                args.opensearch_queries))
    small, large = results["sizes"][str(sizes[0])], results["sizes"][str(sizes[-1])]
    s_small, s_large = small["sqlite"], large["sqlite"]
    out = {
        "command": "python -m bench.index_bench " + " ".join(sys.argv[1:]),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()} {platform.system()}, 2 cores",
        "data": "Debian man-page sentences (one nugget each); queries: man-page NAME lines",
        "nuggets": s_small["nuggets"],
        "lexical_p50_ms": s_small["lexical"]["p50_ms"],
        "lexical_p99_ms": s_small["lexical"]["p99_ms"],
        "raw_fts5_p50_ms": s_small["raw_fts5"]["p50_ms"],
        "governance_overhead_ratio": s_small["governance_overhead_ratio"],
        "raw_postings_p50_ms": s_small["raw_postings"]["p50_ms"],
        "governance_overhead_ratio_vs_raw_postings":
            s_small["governance_overhead_ratio_vs_raw_postings"],
        "index_mb_lexical": s_small["index_mb_lexical"],
        "hybrid_nuggets": s_large["nuggets"],
        "hybrid_p50_ms": s_large["hybrid_no_embedding"]["p50_ms"],
        "hybrid_p99_ms": s_large["hybrid_no_embedding"]["p99_ms"],
        "hybrid_p50_ms_with_embedding": s_large["hybrid_with_embedding"]["p50_ms"],
        "opensearch_hybrid_p50_ms": (large.get("opensearch", {}).get("hybrid_no_embedding", {})
                                     .get("p50_ms")),
        "embedding_texts_per_s": round(embed_rate) if embed_rate else None,
        "details": results,
    }
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps({k: v for k, v in out.items() if k != "details"}, indent=2))
    for n, r in results["sizes"].items():
        s = r["sqlite"]
        os_ = r.get("opensearch", {})
        print(f"\n{n} nuggets            P50 ms   P99 ms")
        print(f"  governed lexical   {s['lexical']['p50_ms']:7.3f}  {s['lexical']['p99_ms']:7.3f}")
        print(f"  raw FTS5 BM25      {s['raw_fts5']['p50_ms']:7.3f}  {s['raw_fts5']['p99_ms']:7.3f}"
              f"   governed / raw FTS5 x{s['governance_overhead_ratio']}")
        print(f"  raw postings BM25  {s['raw_postings']['p50_ms']:7.3f}  "
              f"{s['raw_postings']['p99_ms']:7.3f}"
              f"   governed / raw postings x{s['governance_overhead_ratio_vs_raw_postings']}")
        print(f"  hybrid (no embed)  {s['hybrid_no_embedding']['p50_ms']:7.3f}  "
              f"{s['hybrid_no_embedding']['p99_ms']:7.3f}")
        print(f"  hybrid (+embed)    {s['hybrid_with_embedding']['p50_ms']:7.3f}  "
              f"{s['hybrid_with_embedding']['p99_ms']:7.3f}")
        if os_:
            print(f"  OpenSearch lexical {os_['lexical']['p50_ms']:7.3f}  "
                  f"{os_['lexical']['p99_ms']:7.3f}")
            print(f"  OpenSearch hybrid  {os_['hybrid_no_embedding']['p50_ms']:7.3f}  "
                  f"{os_['hybrid_no_embedding']['p99_ms']:7.3f}")
        print(f"  lexical index {s['index_mb_lexical']} MB, file {s['file_mb_total']} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
