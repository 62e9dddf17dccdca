"""Query service load benchmark: Retrieve at 100,000 nuggets on the embedded store.

Data: the index benchmark's (bench/index_bench.py): one nugget per English man-page
sentence, queries are the pages' NAME lines (real short descriptions), embeddings cached
under var/bench. In one run, side by side:

- in-process: the same Retrieve calls made directly on ``Retriever.retrieve`` (hybrid,
  query embedding, governance filter, suppressed count, context block), one at a time;
- over gRPC: ``nuggetflow serve --workers W`` itself (a subprocess on the same file:
  tokens, the interceptor, deadlines, metrics; W processes share the port), and a
  separate load-generator process on loopback that first makes ``--sequential-calls``
  calls one at a time (P50 against in-process: the gRPC overhead ratio), then keeps
  ``concurrency`` calls in flight over ``--channels`` connections (the kernel spreads
  connections, not calls, over the workers), bounded by ``--calls`` and ``--seconds``
  (QPS and latency percentiles measured by the client, after a warm-up).

Queries are distinct man-page NAME lines cycled in order (about 9,000 before one
repeats), so the service's query-vector cache (4,096 entries) never hits: every call
pays for its query embedding. This is the worst case for the service; real traffic
repeats queries.

Usage: python -m bench.query_bench [--nuggets 100000] [--calls 20000] [--seconds 60]
                                    [--concurrency 8] [--workers 1] [--channels 8]
                                    [--inprocess-calls 2000]
Writes bench/results/query.json (keys: nuggets, qps, p50_ms, p99_ms, inprocess_p50_ms,
grpc_overhead_ratio, ..., command) and prints a table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.index_bench import (
    TENANT,
    WORK,
    embed_cached,
    load_texts,
    log,
    make_nuggets,
    percentile,
)
from nuggetflow.settings import Settings
from query.backends.sqlite import SQLiteStore
from query.embeddings import MiniLMEmbedder
from query.index import NuggetIndex
from query.retrieval import RetrieveRequest
from tests.support.net import free_port as _free_port

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "query.json"
TOKEN = "bench-token-0123456789abcdef"
AS_OF = datetime(2025, 1, 1, tzinfo=UTC)
K = 10


def open_store(n: int, embedder: MiniLMEmbedder) -> tuple[SQLiteStore, list[str]]:
    """The n-nugget SQLite index under var/bench (built once, reused) and the queries."""
    pairs, queries = load_texts(n)
    path = WORK / f"query-{n}.db"
    store = SQLiteStore(path)
    store.start_sync()
    have = store.db.execute("SELECT count(*) FROM items").fetchone()[0]
    if have != n:
        store.db.close()
        store._db = None
        for f in WORK.glob(path.name + "*"):
            f.unlink()
        vecs = embed_cached(embedder, [f"{t}\n{b}" for t, b in pairs], "nuggets")
        nuggets = make_nuggets(pairs)
        store = SQLiteStore(path)
        store.start_sync()
        started = time.perf_counter()
        for i in range(0, n, 2000):
            store.write_nuggets_sync(nuggets[i : i + 2000], list(vecs[i : i + 2000]))
        store.db.execute("INSERT INTO fts(fts) VALUES ('optimize')")
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        log(f"  wrote {n} nuggets in {time.perf_counter() - started:.1f}s")
    return store, queries


def summary(ms: list[float]) -> dict[str, float]:
    """P50, P90, P99 and mean in ms."""
    return {"p50_ms": round(statistics.median(ms), 3), "p90_ms": round(percentile(ms, 90), 3),
            "p99_ms": round(percentile(ms, 99), 3), "mean_ms": round(statistics.fmean(ms), 3)}


async def in_process(index: NuggetIndex, queries: list[str],
                     calls: int) -> tuple[list[float], dict[str, float]]:
    """Latency (ms) of ``calls`` sequential Retrieve calls without gRPC, and the median
    of each stage the retriever times (lexical, embed, dense; "other" is fusion, record
    fetch, suppressed count and context block)."""
    out = []
    stages: dict[str, list[float]] = {}
    for i in range(calls + 100):
        req = RetrieveRequest(TENANT, queries[i % len(queries)], as_of=AS_OF, k=K)
        t = time.perf_counter()
        res = await index.retriever.retrieve(req)
        if i >= 100:  # the first 100 warm caches up
            out.append((time.perf_counter() - t) * 1000)
            known = 0.0
            for name in ("lexical", "embed", "dense"):
                stages.setdefault(name, []).append(res.timings_ms.get(name, 0.0))
                known += res.timings_ms.get(name, 0.0)
            stages.setdefault("other", []).append(res.timings_ms.get("total", 0.0) - known)
    return out, {k: round(statistics.median(v), 3) for k, v in stages.items()}




def _scrape(port: int) -> dict[str, float]:
    """Retrieve count and latency sum (OK calls) from one worker's /metrics."""
    import urllib.request

    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    out = {"count": 0.0, "sum": 0.0, "hit": 0.0, "miss": 0.0}
    for line in text.splitlines():
        if 'method="Retrieve"' in line and 'code="OK"' in line:
            for key in ("count", "sum"):
                if line.startswith(f"nuggetflow_query_request_duration_seconds_{key}"):
                    out[key] += float(line.rsplit(" ", 1)[1])
        if line.startswith("nuggetflow_query_query_vector_lookups_total"):
            for key in ("hit", "miss"):
                if f'result="{key}"' in line:
                    out[key] += float(line.rsplit(" ", 1)[1])
    return out


def _cpu_seconds(root: int) -> float:
    """User + system CPU seconds of a process and its children (from /proc)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(entry.name) == root or int(fields[1]) == root:
            total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def over_grpc(db: Path, queries_file: Path, args: argparse.Namespace,
              zipf: float = 0.0) -> dict[str, Any]:
    """Run ``nuggetflow serve`` on ``db`` and the load generator; return its report plus
    the server-side view (calls and mean latency per worker, from /metrics)."""
    import signal
    import subprocess

    port, metrics = _free_port(), _free_port()
    tokens = WORK / "query-bench-tokens.json"
    tokens.write_text(json.dumps({TOKEN: [TENANT]}))
    env = {**os.environ, "NUGGETFLOW_STORE": f"sqlite:///{db}",
           "NUGGETFLOW_AUTH_TOKENS_FILE": str(tokens),
           "NUGGETFLOW_CITATION_LEDGER_PATH": str(WORK / "query-bench-ledger.db"),
           "NUGGETFLOW_LOG_LEVEL": "WARNING"}
    server = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "serve", "--workers", str(args.workers),
         "--port", str(port), "--metrics-port", str(metrics)], cwd=ROOT, env=env)
    try:
        ports = [metrics + i for i in range(args.workers)]
        deadline = time.monotonic() + 300
        while True:
            if server.poll() is not None:
                raise SystemExit(f"nuggetflow serve exited with {server.returncode}")
            try:
                before = [_scrape(p) for p in ports]
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit("nuggetflow serve did not come up in 300 s") from None
                time.sleep(0.5)
        cpu_before = _cpu_seconds(server.pid)
        proc = subprocess.run(
            [sys.executable, "-m", "bench.query_bench", "--loadgen", "--port", str(port),
             "--queries-file", str(queries_file), "--calls", str(args.calls),
             "--seconds", str(args.seconds), "--concurrency", str(args.concurrency),
             "--channels", str(args.channels), "--zipf", str(zipf),
             "--sequential-calls", str(args.sequential_calls)],
            cwd=ROOT, stdout=subprocess.PIPE, timeout=args.seconds + 300, check=False)
        if proc.returncode != 0:
            raise SystemExit(f"load generator failed with exit code {proc.returncode}")
        report: dict[str, Any] = json.loads(proc.stdout)
        after = [_scrape(p) for p in ports]
        cpu = _cpu_seconds(server.pid) - cpu_before
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(60)
        except subprocess.TimeoutExpired:
            server.kill()
    calls = [a["count"] - b["count"] for a, b in zip(after, before, strict=True)]
    seconds = sum(a["sum"] - b["sum"] for a, b in zip(after, before, strict=True))
    hits = sum(a["hit"] - b["hit"] for a, b in zip(after, before, strict=True))
    misses = sum(a["miss"] - b["miss"] for a, b in zip(after, before, strict=True))
    report["server"] = {"workers": args.workers, "calls_per_worker": calls,
                        "mean_ms": round(1000 * seconds / sum(calls), 3) if sum(calls) else None,
                        "query_cache_hit_rate": round(hits / (hits + misses), 3)
                        if hits + misses else None,
                        # every call the load generator made, warm-up and sequential too
                        "cpu_ms_per_call": round(1000 * cpu / sum(calls), 3) if sum(calls)
                        else None}
    return report


def loadgen(args: argparse.Namespace) -> int:
    """The load generator process: prints a JSON report on stdout."""
    import grpc

    from nuggetflow.v1 import query_service_pb2 as qpb
    from nuggetflow.v1 import query_service_pb2_grpc as qpb_grpc

    queries = json.loads(Path(args.queries_file).read_text())
    as_of = qpb.RetrieveRequest().as_of
    as_of.FromDatetime(AS_OF)
    requests = [qpb.RetrieveRequest(tenant=TENANT, query=q, as_of=as_of, k=K) for q in queries]
    if args.zipf > 0:  # popular queries repeat: rank r drawn with probability ~ 1 / r^s
        import numpy as np

        weights = 1.0 / np.arange(1, len(requests) + 1) ** args.zipf
        order = np.random.default_rng(7).choice(len(requests), size=len(requests) * 4,
                                                p=weights / weights.sum())
        requests = [requests[i] for i in order]
    metadata = (("authorization", f"Bearer {TOKEN}"),)
    warmup = min(500, args.calls // 10)

    async def run() -> dict[str, Any]:
        latencies: list[float] = []
        errors: dict[str, int] = {}
        counter = {"next": 0}
        opts = [("grpc.use_local_subchannel_pool", 1)]  # one connection per channel
        channels = [grpc.aio.insecure_channel(f"127.0.0.1:{args.port}", options=opts)
                    for _ in range(args.channels)]
        stubs = [qpb_grpc.QueryServiceStub(c)  # type: ignore[no-untyped-call]
                 for c in channels]
        try:
            for stub in stubs:
                await stub.Retrieve(requests[0], metadata=metadata, timeout=30)
            sequential: list[float] = []
            for i in range(args.sequential_calls + 50):  # one call in flight
                t = time.perf_counter()
                await stubs[0].Retrieve(requests[i % len(requests)], metadata=metadata,
                                        timeout=10)
                if i >= 50:
                    sequential.append((time.perf_counter() - t) * 1000)
            started = time.perf_counter()
            measure_from = {"t": started}
            stop_at = started + args.seconds

            async def worker() -> None:
                while time.perf_counter() < stop_at:
                    i = counter["next"]
                    if i >= args.calls + warmup:
                        return
                    counter["next"] = i + 1
                    t = time.perf_counter()
                    try:
                        await stubs[i % len(stubs)].Retrieve(
                            requests[i % len(requests)], metadata=metadata, timeout=10)
                    except grpc.aio.AioRpcError as err:
                        errors[err.code().name] = errors.get(err.code().name, 0) + 1
                        continue
                    if i == warmup:
                        measure_from["t"] = t
                    if i >= warmup:
                        latencies.append((time.perf_counter() - t) * 1000)

            await asyncio.gather(*(worker() for _ in range(args.concurrency)))
            elapsed = time.perf_counter() - measure_from["t"]
        finally:
            for channel in channels:
                await channel.close()
        import resource

        usage = resource.getrusage(resource.RUSAGE_SELF)
        made = len(sequential) + 50 + len(stubs) + counter["next"]
        return {"calls": len(latencies), "warmup_calls": warmup, "errors": errors,
                "client_cpu_ms_per_call": round(1000 * (usage.ru_utime + usage.ru_stime)
                                                / made, 3),
                "seconds": round(elapsed, 2), "qps": round(len(latencies) / elapsed, 1),
                "channels": args.channels, **summary(latencies),
                "sequential": {"calls": len(sequential), **summary(sequential)}}

    print(json.dumps(asyncio.run(run())))
    return 0


def main() -> int:
    """Build or open the index, measure in-process and over gRPC, write the results."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    ap.add_argument("--nuggets", type=int, default=100_000)
    ap.add_argument("--calls", type=int, default=20_000, help="measured gRPC calls (max)")
    ap.add_argument("--seconds", type=float, default=60.0, help="time bound of the load")
    ap.add_argument("--concurrency", type=int, default=8, help="calls in flight")
    ap.add_argument("--workers", type=int, default=1,
                    help="nuggetflow serve --workers (processes sharing the port)")
    ap.add_argument("--channels", type=int, default=8,
                    help="client connections the calls are spread over")
    ap.add_argument("--inprocess-calls", type=int, default=2000)
    ap.add_argument("--sequential-calls", type=int, default=1000,
                    help="gRPC calls with one in flight (for the overhead ratio)")
    ap.add_argument("--repeat-zipf", type=float, default=1.0,
                    help="also run repeated traffic: queries drawn by Zipf(s) popularity, "
                         "so the query-vector cache hits (0: skip)")
    ap.add_argument("--zipf", type=float, default=0.0, help=argparse.SUPPRESS)
    ap.add_argument("--loadgen", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--queries-file", help=argparse.SUPPRESS)
    ap.add_argument("--no-write", action="store_true", help="do not write bench/results")
    args = ap.parse_args()
    if args.loadgen:
        return loadgen(args)
    WORK.mkdir(parents=True, exist_ok=True)
    embedder = MiniLMEmbedder(threads=Settings.from_env({}).embedder_threads)
    embedder.warm_up()
    log(f"opening the {args.nuggets}-nugget index")
    store, queries = open_store(args.nuggets, embedder)
    settings = Settings.from_env({})
    index = NuggetIndex(store, embedder, settings)
    queries_file = WORK / "query-bench-queries.json"
    queries_file.write_text(json.dumps(queries))

    async def measure() -> tuple[list[float], dict[str, float]]:
        log(f"in-process: {args.inprocess_calls} sequential Retrieve calls")
        local = await in_process(index, queries, args.inprocess_calls)
        await store.stop()
        return local

    load_before = os.getloadavg()
    local, stages = asyncio.run(measure())
    log(f"gRPC: nuggetflow serve --workers {args.workers}; load generator process, "
        f"{args.concurrency} in flight over {args.channels} connections, <= {args.calls} "
        f"calls, <= {args.seconds:.0f}s")
    remote = over_grpc(store.path, queries_file, args)
    repeated: dict[str, Any] | None = None
    if args.repeat_zipf > 0:
        log(f"gRPC again, repeated traffic: queries drawn by Zipf({args.repeat_zipf}) "
            "popularity")
        repeated = over_grpc(store.path, queries_file, args, zipf=args.repeat_zipf)
    loc = summary(local)
    seq = remote["sequential"]
    result: dict[str, Any] = {
        "nuggets": args.nuggets,
        "qps": remote["qps"], "p50_ms": remote["p50_ms"], "p99_ms": remote["p99_ms"],
        "inprocess_p50_ms": loc["p50_ms"],
        "grpc_overhead_ratio": round(seq["p50_ms"] / loc["p50_ms"], 3),
        "grpc_sequential_p50_ms": seq["p50_ms"],
        "inprocess_qps_one_at_a_time": round(1000 / loc["mean_ms"], 1),
        "grpc": remote,
        "inprocess": {"calls": len(local), **loc, "stage_p50_ms": stages},
        "server_mean_ms": remote["server"]["mean_ms"],
        "workers": args.workers,
        "server_cpu_ms_per_call": remote["server"]["cpu_ms_per_call"],
        "client_cpu_ms_per_call": remote["client_cpu_ms_per_call"],
        "repeated_traffic": None if repeated is None else {
            "zipf_s": args.repeat_zipf, "qps": repeated["qps"], "p50_ms": repeated["p50_ms"],
            "p99_ms": repeated["p99_ms"],
            "query_cache_hit_rate": repeated["server"]["query_cache_hit_rate"],
            "server_cpu_ms_per_call": repeated["server"]["cpu_ms_per_call"],
            "calls_per_worker": repeated["server"]["calls_per_worker"],
            "errors": repeated["errors"]},
        "goal": {"qps": 1500, "p99_ms": 25},
        "setup": {"k": K, "concurrency": args.concurrency, "channels": args.channels,
                  "workers": args.workers, "distinct_queries": len(queries),
                  "query_cache": "cold (queries cycle through more distinct texts than "
                                 "the 4,096-entry cache holds)",
                  "as_of": AS_OF.isoformat(), "fusion": settings.fusion,
                  "candidate_k": settings.candidate_k, "auth": "bearer token",
                  "embedder": "MiniLM int8 ONNX, 1 thread per call, calls batched under "
                              "load (query embedded per call)"},
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "platform": platform.platform(),
                    "loadavg_1m_before_after": [round(load_before[0], 2),
                                                round(os.getloadavg()[0], 2)]},
        "command": " ".join(["python -m bench.query_bench", *sys.argv[1:]]),
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
    }
    print(f"{'':24s}{'QPS':>10s}{'P50 ms':>10s}{'P99 ms':>10s}")
    print(f"{'gRPC, ' + str(args.concurrency) + ' in flight':24s}{remote['qps']:>10.1f}"
          f"{remote['p50_ms']:>10.2f}{remote['p99_ms']:>10.2f}")
    if repeated is not None:
        print(f"{'gRPC, repeated traffic':24s}{repeated['qps']:>10.1f}"
              f"{repeated['p50_ms']:>10.2f}{repeated['p99_ms']:>10.2f}"
              f"   (Zipf {args.repeat_zipf}, query cache hit rate "
              f"{repeated['server']['query_cache_hit_rate']})")
    print(f"{'gRPC, 1 in flight':24s}{1000 / seq['mean_ms']:>10.1f}{seq['p50_ms']:>10.2f}"
          f"{seq['p99_ms']:>10.2f}")
    print(f"{'in-process, sequential':24s}{result['inprocess_qps_one_at_a_time']:>10.1f}"
          f"{loc['p50_ms']:>10.2f}{loc['p99_ms']:>10.2f}")
    print(f"gRPC overhead ratio (P50, one in flight): {result['grpc_overhead_ratio']}; "
          f"in-process stage P50 ms: {stages}; errors: {remote['errors'] or 'none'}; "
          f"calls per worker: {remote['server']['calls_per_worker']}; CPU ms per call: "
          f"server {remote['server']['cpu_ms_per_call']}, "
          f"load generator {remote['client_cpu_ms_per_call']}")
    if not args.no_write:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(result, indent=2) + "\n")
        log(f"wrote {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
