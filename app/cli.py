"""The ``nuggetflow`` command line.

Every command reads the one settings object (``NUGGETFLOW_*`` variables; ``--store`` and
``--log-level`` override them). Heavy modules are imported inside the commands so that
``--help`` is instant.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from app.args import add_nugget_ref, add_review_arguments
from app.wiring import (
    make_optimizer,
    make_roles_for,
    open_index,
    scratch_index,
    with_flags,
    with_index,
)
from nuggetflow import __version__
from nuggetflow.errors import NuggetflowError, ValidationError
from nuggetflow.logging import configure
from nuggetflow.settings import Settings

if TYPE_CHECKING:
    from query.corpus import CorpusChange, IngestReport
    from query.index import NuggetIndex
    from query.model import Nugget
    from query.retrieval import Hit


def _parse_time(value: str) -> datetime:
    try:
        t = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 time: {value!r}") from None
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def cmd_ingest(args: argparse.Namespace, settings: Settings) -> int:
    """Ingest a corpus JSONL file (with progress on stderr), then hand what changed to the
    re-probe step (docs/architecture.md, "Re-probing on corpus change").

    The whole file is validated before the store is opened; a bad line fails the run with
    ``<file> line <n>: field <f>: <why>`` and nothing written. ``--changes``: ``reprobe``
    (the default) re-probes the published nuggets the change reaches here, in-process;
    ``kafka`` produces the changes to corpus.changes for the worker's reprobe agent (what
    the broker did not take is written to ``--changes-file``, or
    ``<file>.changes.jsonl``, for ``nuggetflow reprobe``); ``none`` only ingests.
    """
    from query.corpus import ingest_corpus, read_documents

    started = time.perf_counter()
    docs = read_documents(args.file, args.tenant, settings=settings)
    # Bulk work may use every core; the query service keeps NUGGETFLOW_EMBEDDER_THREADS.
    settings = settings.replace(embedder_threads=args.threads)

    def progress(rep: IngestReport) -> None:
        elapsed = max(time.perf_counter() - started, 1e-9)
        rate = rep.passages / elapsed
        done = rep.stored_documents + rep.unchanged_documents
        eta = (len(docs) - done) * elapsed / done if done else 0.0
        print(f"\ringested {done} documents of {len(docs)}, {rep.passages} passages "
              f"({rep.new_passages} new), {rate:.0f} passages/s, ETA {eta:.0f} s   ",
              end="", file=sys.stderr, flush=True)

    async def run(index: NuggetIndex) -> int:
        report = await ingest_corpus(index, args.file, args.tenant, batch=args.batch,
                                     progress=None if args.quiet else progress, documents=docs)
        if not args.quiet:
            print(file=sys.stderr)
        out: dict[str, Any] = {**report.to_dict(), "changes": len(report.changes)}
        status = 0
        if args.changes_file:
            _write_changes(args.changes_file, report.changes)
        if report.changes and args.changes == "reprobe":
            out["reprobe"] = await _reprobe_here(settings, index, report.changes, args.quiet)
        elif report.changes and args.changes == "kafka":
            out["published_changes"], status = await _publish_changes(
                settings, report.changes, args.changes_file or f"{args.file}.changes.jsonl")
        print(json.dumps({**out, "seconds": round(time.perf_counter() - started, 2)}))
        return status

    return asyncio.run(with_index(settings, run))


def _write_changes(path: str, changes: Sequence[CorpusChange]) -> None:
    with open(path, "wb") as f:
        for change in changes:
            f.write(change.to_bytes() + b"\n")


async def _reprobe_here(settings: Settings, index: NuggetIndex,
                        changes: Sequence[CorpusChange], quiet: bool) -> dict[str, Any]:
    """Run the re-probe step in-process on ``changes``; its summary."""
    from app.wiring import inline_engine
    from stream.records import StepResult
    from stream.runner import EmbeddedRunner
    from stream.steps import Steps
    from stream.topics import Topics

    def show(agent: str, r: StepResult) -> None:
        if not quiet:
            print(f"{agent:>13s} {r.tenant or '-'}: {r.outcome}"
                  + (f" ({r.detail})" if r.detail else ""), file=sys.stderr)

    async with inline_engine(settings, index) as engine:
        runner = EmbeddedRunner(Steps(index, engine, settings), Topics.from_settings(settings),
                                on_result=show)
        report = await runner.reprobe([c.to_bytes() for c in changes])
    for d in report.dead_letters:
        print(f"re-probe failed for a change of {d.source}: {d.reason}: {d.error}",
              file=sys.stderr)
    return report.summary()


async def _publish_changes(settings: Settings, changes: Sequence[CorpusChange],
                           keep: str) -> tuple[int, int]:
    """(changes sent, exit status): what Kafka did not take goes to ``keep``."""
    from stream.producer import publish_changes

    try:
        return await publish_changes(settings, changes), 0
    except NuggetflowError as exc:
        sent = int(getattr(exc, "sent", 0))
        _write_changes(keep, changes[sent:])
        print(f"error: {exc}; {len(changes) - sent} corpus changes were not published and "
              f"are in {keep} (run: nuggetflow reprobe {keep})", file=sys.stderr)
        return sent, 1


def cmd_reprobe(args: argparse.Namespace, settings: Settings) -> int:
    """Re-probe (or, with --kafka, publish) corpus changes saved by ``nuggetflow ingest``."""
    from query.corpus import CorpusChange

    changes = []
    with open(args.file, "rb") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                try:
                    changes.append(CorpusChange.from_bytes(line))
                except ValidationError as exc:
                    raise ValidationError(f"{args.file} line {n}: {exc}",
                                          field=exc.field) from None

    if args.kafka:  # (the store is the worker's business: not opened here)
        sent, status = asyncio.run(_publish_changes(settings, changes, args.file + ".unsent"))
        print(json.dumps({"published_changes": sent}))
        return status

    async def run(index: NuggetIndex) -> int:
        print(json.dumps({"reprobe": await _reprobe_here(settings, index, changes,
                                                         args.quiet)}))
        return 0

    return asyncio.run(with_index(settings, run))


def cmd_reindex(args: argparse.Namespace, settings: Settings) -> int:
    """Move the OpenSearch index to a new one with the current settings (alias swap)."""
    from nuggetflow.errors import ConfigError
    from query.backends import make_store
    from query.backends.opensearch import OpenSearchStore
    from query.backends.reindex import reindex
    from query.embeddings import make_embedder

    store = make_store(settings)
    if not isinstance(store, OpenSearchStore):
        raise ConfigError("reindex moves an OpenSearch index; NUGGETFLOW_STORE is "
                          f"{settings.store!r}", field="NUGGETFLOW_STORE")

    def progress(done: int, total: int) -> None:
        print(f"\rre-embedded {done} of {total} documents   ", end="", file=sys.stderr,
              flush=True)

    async def run() -> int:
        await store.start()
        try:
            report = await reindex(
                store, embedder=make_embedder(settings) if args.re_embed else None,
                keep_old=args.keep_old, progress=None if args.quiet else progress)
        finally:
            await store.stop()
        if args.re_embed and not args.quiet:
            print(file=sys.stderr)
        print(json.dumps(report.to_dict()))
        return 0

    return asyncio.run(run())


def cmd_search(args: argparse.Namespace, settings: Settings) -> int:
    """Run one governed retrieval and print the hits."""
    from query.model import View
    from query.retrieval import RetrieveRequest

    req = RetrieveRequest(tenant=args.tenant, query=args.query, as_of=args.as_of,
                          view=View.ACTIVE_PLUS_CONTESTED if args.contested else View.ACTIVE,
                          k=args.k, include_documents=not args.nuggets_only,
                          fusion=args.fusion, gate=False if args.no_gate else None)

    async def run(index: NuggetIndex) -> int:
        res = await index.retriever.retrieve(req, lexical_only=args.lexical_only)
        if args.json:
            print(json.dumps({
                "request_id": res.request_id, "suppressed": res.suppressed,
                "timings_ms": res.timings_ms, "gated": res.gated,
                "hits": [{"type": h.type.name.lower(), "id": h.id, **_lineage_of(h),
                          "title": h.title, "text": h.text,
                          "scores": {"lexical": h.lexical, "dense": h.dense,
                                     "metadata": h.metadata, "fused": h.fused,
                                     "relevance": h.relevance},
                          "contested": h.contested, "inferred_validity": h.inferred_validity}
                         for h in res.hits]}, indent=2))
            return 0
        for i, h in enumerate(res.hits, 1):
            flag = " [CONTESTED]" if h.contested else ""
            score = h.relevance if res.gated else h.fused
            line = _lineage_of(h)
            where = f" (lineage {line['lineage_id']} v{line['version']})" if line else ""
            print(f"{i:2d}. {score:.3f} {h.type.name.lower():8s} {h.id}{where}{flag}\n"
                  f"    {h.title}\n    lex={h.lexical:.2f} dense={h.dense:.2f} "
                  f"meta={h.metadata:.2f} fused={h.fused:.3f}")
        gate = "probability of answering, gated" if res.gated else "fused score, not gated"
        print(f"({len(res.hits)} hits by {gate}; {res.suppressed} suppressed by governance, "
              f"{res.timings_ms.get('total', 0):.1f} ms)")
        return 0

    return asyncio.run(with_index(settings, run))


def _lineage_of(hit: Hit) -> dict[str, Any]:
    """``lineage_id`` and ``version`` of a nugget hit (empty for a document hit)."""
    from query.model import Nugget

    rec = hit.record
    if not isinstance(rec, Nugget):
        return {}
    return {"lineage_id": rec.lineage_id or rec.id, "version": rec.version}


def cmd_history(args: argparse.Namespace, settings: Settings) -> int:
    """Print every version of a nugget's lineage with its title and body, a page at a time
    (memory stays bounded however long the lineage), then its traces (re-probes after
    corpus changes), oldest first."""
    if args.page_size < 1:
        raise ValidationError("must be >= 1", field="--page-size")

    async def run(index: NuggetIndex) -> int:
        after, lineage = "", ""
        while True:
            page = await index.store.history_page(args.tenant, args.id, args.page_size,
                                                  after_id=after)
            for v in page:
                lineage = lineage or v.lineage_id or v.id
                end = v.validity.end.isoformat() if v.validity.end else "open"
                print(f"v{v.version} {v.id} parent={v.parent_id or '-'} {v.publication.name} "
                      f"{v.state.name} [{v.validity.start.isoformat()}, {end}) "
                      f"sources={len(v.sources)} :: {v.change_reason}")
                print(f"    title: {v.title}")
                print(f"    body:  {v.body}")
            if len(page) < args.page_size:
                break
            after = page[-1].id
        for t in await index.store.traces(args.tenant, lineage) if lineage else []:
            probes = t.detail.get("probes", [])
            passed = sum(1 for p in probes if p.get("passed"))
            extra = f" -> {t.detail['new_version']}" if "new_version" in t.detail else ""
            print(f"{t.kind} {t.at.isoformat()} {t.outcome} on {t.version_id}{extra} "
                  f":: {t.cause}, probes passed {passed}/{len(probes)}")
        return 0

    return asyncio.run(with_index(settings, run))


def _publication(value: str) -> str:
    """A review state named on the command line (``pending`` for pending_review); the
    enum's name."""
    from query.model import Publication

    name = value.strip().lower().replace("-", "_")
    name = {"pending": "pending_review"}.get(name, name).upper()
    if name not in Publication.__members__:
        choices = ", ".join(p.name.lower() for p in Publication)
        raise argparse.ArgumentTypeError(f"not a review state: {value!r} (one of {choices})")
    return name


def cmd_candidates(args: argparse.Namespace, settings: Settings) -> int:
    """List what waits for review (or any review states): one line per nugget with its
    lineage id, version and states, then its title, body, provenance and INO outcome.
    The ListCandidates RPC lists the same (both call NuggetIndex.candidates)."""
    from google.protobuf import json_format

    from query.convert import candidates_to_proto
    from query.index import MAX_PAGE_SIZE, CandidatePage
    from query.model import Publication

    if args.limit < 1:
        raise ValidationError("must be >= 1", field="--limit")
    publications = tuple(Publication[name] for name in args.states or ())

    async def run(index: NuggetIndex) -> int:
        shown: list[Nugget] = []
        token = args.page_token
        listed: tuple[Publication, ...] = ()
        while True:
            page = await index.candidates(args.tenant, publications,
                                          min(args.limit - len(shown), MAX_PAGE_SIZE), token)
            shown += page.candidates
            token, listed = page.next_page_token, page.publications
            if not token or len(shown) >= args.limit:
                break
        if args.json:
            reply = candidates_to_proto(CandidatePage(shown, token, listed))
            print(json.dumps(json_format.MessageToDict(reply), ensure_ascii=False, indent=2))
            return 0
        for n in shown:
            _print_candidate(n)
        states = ", ".join(p.name for p in listed)
        more = f"; more: --page-token {token}" if token else ""
        print(f"({len(shown)} {states} nugget(s) of tenant {args.tenant!r}{more})")
        if shown:
            print(f"review one: nuggetflow review <lineage id> --tenant {args.tenant} "
                  "--action approve|reject")
        return 0

    return asyncio.run(with_index(settings, run))


def _print_candidate(n: Nugget) -> None:
    """The human-readable form of one listed nugget (a head version)."""
    created = n.created_at.isoformat() if n.created_at else "-"
    print(f"{n.lineage_id or n.id} v{n.version} {n.publication.name} {n.state.name} "
          f"id={n.id} created={created}")
    print(f"    title: {n.title}")
    print(f"    body:  {n.body}")
    prov = n.provenance
    print(f"    provenance: event {prov.event_id or '-'}; query: {prov.trigger_query or '-'}")
    if prov.feedback_text:
        print(f"    feedback: {' '.join(prov.feedback_text.split())}")
    ino = n.optimization
    if ino:
        rounds = int(ino.get("iterations", 0))
        verdict = "passed" if ino.get("passed") else "did not pass"
        print(f"    INO: variant {ino.get('variant') or '-'}, {rounds} round(s), {verdict}")
    else:
        print("    INO: no record")
    if n.change_reason:
        print(f"    note: {n.change_reason}")


def cmd_review(args: argparse.Namespace, settings: Settings) -> int:
    """Approve, reject, unpublish or revert a nugget."""
    from query.convert import nugget_to_json

    async def run(index: NuggetIndex) -> int:
        head = await index.review(args.tenant, args.id, args.action, reviewer=args.reviewer,
                                  reason=args.reason, target_version_id=args.target or "",
                                  request_id=args.request_id)
        print(nugget_to_json(head))
        return 0

    return asyncio.run(with_index(settings, run))


def cmd_usage_review(args: argparse.Namespace, settings: Settings) -> int:
    """Judge every published nugget of the tenants on its use (query.usage), store the
    review flags and list the open ones (``--dismiss``: mark a lineage's flags as seen)."""
    from query.usage import (
        FlagKind,
        UsagePolicy,
        dismiss_flag,
        published_tenants,
        review_usage,
    )

    settings = with_flags(settings, args, {"days": "usage_window_days"})

    async def run(index: NuggetIndex) -> int:
        if args.dismiss:
            if not args.tenant:
                raise ValidationError("--dismiss needs --tenant", field="--tenant")
            kind = FlagKind(args.kind) if args.kind else None
            done = await dismiss_flag(index.store, args.tenant, args.dismiss, kind)
            if not done:
                raise ValidationError(f"no review flag on {args.dismiss!r} for tenant "
                                      f"{args.tenant!r}", field="--dismiss")
            for f in done:
                print(f"dismissed: {f.lineage_id} {f.kind.value} ({f.reason})")
            return 0
        tenants = [args.tenant] if args.tenant else await published_tenants(index.store)
        policy = UsagePolicy.from_settings(settings)
        shown: list[dict[str, Any]] = []
        for tenant in tenants:
            flags = await review_usage(index.store, tenant, policy)
            for f in flags:
                if f.dismissed and not args.all:
                    continue
                shown.append(json.loads(f.to_json()))
                if not args.json:
                    seen = " (dismissed)" if f.dismissed else ""
                    print(f"{f.tenant} {f.lineage_id} {f.kind.value}{seen} version={f.version_id}"
                          f" since={f.raised_at.isoformat()}")
                    print(f"    title:  {f.title}")
                    print(f"    reason: {f.reason}")
        if args.json:
            print(json.dumps(shown, ensure_ascii=False, indent=2))
        else:
            print(f"({len(shown)} flag(s) over {len(tenants)} tenant(s), window "
                  f"{policy.window_days} days)")
        return 0

    return asyncio.run(with_index(settings, run))


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    """Run the gRPC query service and /metrics until SIGTERM or SIGINT."""
    from query.service import run

    settings = with_flags(settings, args, {"host": "serve_host", "port": "grpc_port",
                                           "metrics_port": "metrics_port",
                                           "workers": "serve_workers"})
    if args.insecure_dev:
        settings = settings.replace(insecure_dev=True)
    from optimizer.guard import check_edit

    return run(settings, open_index, guard=check_edit)


def cmd_health(args: argparse.Namespace, settings: Settings) -> int:
    """Check a running query service (gRPC health) or worker (/metrics) on this host;
    exit 0 when it is healthy, 1 when not (for container healthchecks)."""
    import urllib.request

    if args.metrics:
        port = args.port if args.port is not None else settings.metrics_port
        url = f"http://{args.host}:{port}/metrics"
        try:
            with urllib.request.urlopen(url, timeout=args.timeout) as reply:
                ok = reply.status == 200
        except OSError as exc:
            print(f"{url}: {exc}", file=sys.stderr)
            return 1
        print(f"{url}: {'ok' if ok else 'not ok'}")
        return 0 if ok else 1

    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    port = args.port if args.port is not None else settings.grpc_port
    target = f"{args.host}:{port}"
    with grpc.insecure_channel(target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            reply = stub.Check(health_pb2.HealthCheckRequest(service=args.service),
                               timeout=args.timeout)
        except grpc.RpcError as exc:
            print(f"{target}: {exc.code().name}", file=sys.stderr)
            return 1
    status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
    print(f"{target}: {status}")
    return 0 if reply.status == health_pb2.HealthCheckResponse.SERVING else 1


def cmd_optimize(args: argparse.Namespace, settings: Settings) -> int:
    """Extract and optimize nuggets from a feedback file; write candidates and traces."""
    from pathlib import Path

    from optimizer.pipeline import RunStats
    from query.corpus import ingest_corpus, read_documents
    from stream.events import parse_event, read_events, to_context

    # Inputs first: a bad file fails before the store and the models are loaded.
    events = list(read_events(args.feedback))
    docs = read_documents(args.corpus, args.tenant, settings=settings) if args.corpus else []
    out_path = Path(args.out)
    out_path.parent.mkdir(parents=True, exist_ok=True)

    async def run(index: NuggetIndex) -> int:
        if args.corpus:
            report = await ingest_corpus(index, args.corpus, args.tenant, documents=docs)
            print(f"corpus: {report.summary()}", file=sys.stderr)
        opt, harness = make_optimizer(settings, index)
        stats = RunStats()
        with out_path.open("w", encoding="utf-8") as out:
            for i, (line, raw) in enumerate(events, 1):
                try:
                    msg = parse_event(raw)
                except NuggetflowError as exc:
                    stats.malformed += 1
                    print(f"[{i}/{len(events)}] line {line}: rejected: {exc}", file=sys.stderr)
                    out.write(json.dumps({"line": line, "error": str(exc)}) + "\n")
                    continue
                if args.tenant:
                    msg.tenant = args.tenant
                outcome = await opt.process(to_context(msg), variant=args.variant,
                                            seed=args.seed)
                stats.add(outcome)
                out.write(json.dumps(outcome.to_dict(), ensure_ascii=False) + "\n")
                acc, r = outcome.accounting, outcome.result
                verdict = (f"not actionable ({outcome.extraction.usefulness})" if r is None
                           else f"nugget {'passed' if r.passed else 'did not pass'} after "
                                f"{r.iterations} iteration(s), {acc['llm_calls']} LLM calls, "
                                f"{acc['tokens']} tokens, {acc['seconds']:.2f} s")
                print(f"[{i}/{len(events)}] {msg.tenant}/{msg.event_id}: {verdict}",
                      file=sys.stderr)
        await harness.close()
        print(json.dumps({**stats.summary(), "out": str(out_path)}))
        return 0

    return asyncio.run(with_index(settings, run))


def cmd_eval(args: argparse.Namespace, settings: Settings) -> int:
    """Evaluate variants A-E on one or every shipped benchmark; write the report, chart
    and JSON figures."""
    from pathlib import Path

    from optimizer.evaluation import Benchmark, read_benchmark, run_benchmark, shipped_benchmarks
    from optimizer.report import write_report

    if args.cases or args.corpus:
        if not (args.cases and args.corpus):
            raise ValidationError("--cases and --corpus go together", field="cases")
        benchmarks = [Benchmark.from_cases(args.cases, args.corpus, args.traffic or None)]
    else:
        benchmarks = shipped_benchmarks(args.data)
        if args.benchmark:
            wanted = set(args.benchmark)
            unknown = wanted - {b.name for b in benchmarks}
            if unknown:
                raise ValidationError(f"no benchmark named {', '.join(sorted(unknown))} in "
                                      f"{args.data}", field="benchmark")
            benchmarks = [b for b in benchmarks if b.name in wanted]
        if not benchmarks:
            raise ValidationError(f"no benchmark in {args.data}", field="benchmark")
    settings = with_flags(settings, args, {"harness": "harness", "agent_url": "agent_url"})
    # Every benchmark's files first: a bad one fails before any work directory is replaced.
    inputs = [read_benchmark(b, settings, args.tenant) for b in benchmarks]
    started = time.perf_counter()

    def progress(label: str, done: int, total: int) -> None:
        bar = "#" * int(30 * done / total)
        print(f"\r[{bar:<30s}] {done}/{total} {label} ({time.perf_counter() - started:.0f} s)",
              end="", file=sys.stderr, flush=True)

    figures: dict[str, dict[str, Any]] = {}
    for i, (bench, files) in enumerate(zip(benchmarks, inputs, strict=True), 1):
        print(f"benchmark {i}/{len(benchmarks)}: {bench.name} ({bench.cases})",
              file=sys.stderr)
        figures[bench.name] = asyncio.run(run_benchmark(
            bench, settings, workdir=Path(args.workdir) / bench.name, tenant=args.tenant,
            open_index=functools.partial(scratch_index, settings),
            make_roles=functools.partial(make_roles_for, settings),
            runs=args.runs, variants=args.variants.split(","),
            progress=functools.partial(_prefixed, progress, bench.name), inputs=files))
        f = figures[bench.name]
        v = f["variants"]
        print(f"\n{bench.name}: held-out retrieval "
              + " / ".join(f"{k} {100 * d['heldout_retrieval']['mean']:.1f}"
                           for k, d in v.items())
              + f"; actionability {100 * f['actionability_accuracy']:.1f}%, fact recall "
              f"{100 * f['fact_recall']:.1f}%, unsupported {100 * f['unsupported_text_rate']:.1f}"
              f"%, stale {100 * f['stale_claim_rate']:.1f}%, conversational "
              f"{100 * f['conversational_text_rate']:.1f}%", file=sys.stderr)
    command = "nuggetflow " + " ".join(sys.argv[1:])
    paths = write_report(figures, Path(args.out), command)
    print(paths["md"].read_text().split("## How fidelity is decided")[0])
    print(f"wrote {', '.join(str(p) for p in paths.values())}", file=sys.stderr)
    return 0


def _prefixed(progress: Callable[[str, int, int], None], prefix: str, label: str, done: int,
              total: int) -> None:
    progress(f"{prefix} {label}", done, total)


def cmd_settings(args: argparse.Namespace, settings: Settings) -> int:
    """Print every setting: variable, current value, default, meaning."""
    current = settings.public_dict()
    for var, default, doc in Settings.describe():
        name = var.removeprefix("NUGGETFLOW_").lower()
        print(f"{var}\n    value: {current[name]!r}  (default {default})\n    {doc}")
    return 0


def cmd_demo(args: argparse.Namespace, settings: Settings) -> int:
    """Run the embedded end-to-end demo (see app.demo)."""
    from app.demo import run_demo

    try:
        return asyncio.run(run_demo(settings, workdir=args.workdir, serve=args.serve,
                                    port=args.port, console_port=args.console_port))
    except KeyboardInterrupt:
        return 0


def cmd_console(args: argparse.Namespace, settings: Settings) -> int:
    """Run the review console (a web application, client of the query service)."""
    from console.server import run

    settings = with_flags(settings, args, {"host": "console_host", "port": "console_port",
                                           "grpc_target": "console_grpc_target"})
    try:
        return asyncio.run(run(settings))
    except KeyboardInterrupt:
        return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for tests and docs)."""
    p = argparse.ArgumentParser(
        prog="nuggetflow",
        description="Turn user corrections of a RAG assistant into governed, discoverable "
                    "factual nuggets. Settings come from NUGGETFLOW_* variables "
                    "(`nuggetflow settings` lists them).")
    p.add_argument("--version", action="version", version=f"nuggetflow {__version__}")
    p.add_argument("--store", help="index store URL (overrides NUGGETFLOW_STORE)")
    p.add_argument("--log-level", help="DEBUG, INFO, WARNING or ERROR")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = sub.add_parser("demo", help="run the embedded end-to-end demo (no servers, no key)")
    demo.add_argument("--workdir", default="var/demo", help="where the demo keeps its index")
    demo.add_argument("--serve", action="store_true",
                      help="keep the gRPC query service and the review console up after "
                           "the report, until Ctrl-C")
    demo.add_argument("--port", type=int, default=0, help="gRPC port (0: any free port)")
    demo.add_argument("--console-port", type=int, default=8080,
                      help="review console port with --serve (8080; 0: any free port)")
    demo.set_defaults(fn=cmd_demo)

    co = sub.add_parser(
        "console", help="run the review console for knowledge owners (web, until SIGTERM)",
        description="Serve the review console (http://NUGGETFLOW_CONSOLE_HOST:"
                    "NUGGETFLOW_CONSOLE_PORT), a client of the gRPC query service at "
                    "NUGGETFLOW_CONSOLE_GRPC_TARGET. Reviewers sign in with the service's "
                    "per-tenant tokens.")
    co.add_argument("--host", help="bind address (overrides NUGGETFLOW_CONSOLE_HOST)")
    co.add_argument("--port", type=int, help="HTTP port (overrides NUGGETFLOW_CONSOLE_PORT)")
    co.add_argument("--grpc-target",
                    help="query service host:port (overrides NUGGETFLOW_CONSOLE_GRPC_TARGET)")
    co.set_defaults(fn=cmd_console)

    ing = sub.add_parser("ingest", help="ingest a corpus JSONL {id, tenant, title, text}")
    ing.add_argument("file", help="corpus JSONL file")
    ing.add_argument("--tenant", help="tenant for every record (default: each record's own)")
    ing.add_argument("--batch", type=int, default=256, help="passages per write (256)")
    ing.add_argument("--quiet", action="store_true", help="no progress output")
    ing.add_argument("--threads", type=int, default=0,
                     help="CPU threads for embedding this run (0: every core, the default; "
                          "the query service keeps NUGGETFLOW_EMBEDDER_THREADS)")
    ing.add_argument("--changes", choices=["reprobe", "kafka", "none"], default="reprobe",
                     help="what to do with what changed: re-probe the published nuggets it "
                          "reaches here (reprobe, the default), produce it to corpus.changes "
                          "for the worker (kafka), or nothing (none)")
    ing.add_argument("--changes-file",
                     help="also write the changes (JSONL) here; with --changes kafka, the "
                          "ones Kafka did not take (default <file>.changes.jsonl)")
    ing.set_defaults(fn=cmd_ingest)

    rp = sub.add_parser("reprobe", help="re-probe nuggets for corpus changes saved by ingest",
                        description="Run the re-probe step on a corpus-changes JSONL file "
                                    "(written by nuggetflow ingest --changes-file, or kept "
                                    "when Kafka did not take them), or produce it to "
                                    "corpus.changes with --kafka.")
    rp.add_argument("file", help="corpus changes JSONL")
    rp.add_argument("--kafka", action="store_true", help="produce to corpus.changes instead")
    rp.add_argument("--quiet", action="store_true", help="no progress output")
    rp.set_defaults(fn=cmd_reprobe)

    rx = sub.add_parser(
        "reindex", help="move the OpenSearch index to a new one (new shards, HNSW settings or "
        "embedding model) and switch its alias; reads answer throughout",
        description="Creates <index>-v<n+1> with the current NUGGETFLOW_OPENSEARCH_* settings "
        "and embedding dimension, copies every document into it (writes are refused, as "
        "retriable, while it copies), checks the counts, moves the alias "
        "NUGGETFLOW_OPENSEARCH_INDEX to it in one request and deletes the old index. An "
        "index made before aliases is replaced by the alias. Prints a JSON report.")
    rx.add_argument("--re-embed", action="store_true",
                    help="embed every nugget and passage again with NUGGETFLOW_EMBEDDER "
                         "(after changing the embedding model; otherwise vectors are copied)")
    rx.add_argument("--keep-old", action="store_true",
                    help="keep the old index (writable again, outside the alias)")
    rx.add_argument("--quiet", action="store_true", help="no progress output")
    rx.set_defaults(fn=cmd_reindex)

    se = sub.add_parser("search", help="governed hybrid retrieval for one query")
    se.add_argument("query")
    se.add_argument("--tenant", required=True)
    se.add_argument("--as-of", type=_parse_time, help="ISO 8601 time (default: now)")
    se.add_argument("--contested", action="store_true",
                    help="view ACTIVE_PLUS_CONTESTED (contested nuggets flagged)")
    se.add_argument("-k", type=int, default=10, help="hits to return (10)")
    se.add_argument("--fusion", choices=["minmax", "rrf"])
    se.add_argument("--lexical-only", action="store_true",
                    help="BM25 only, no embedding (never gated)")
    se.add_argument("--no-gate", action="store_true",
                    help="the fused top-k instead of what clears the calibrated gate")
    se.add_argument("--nuggets-only", action="store_true", help="leave corpus passages out")
    se.add_argument("--json", action="store_true", help="machine-readable output")
    se.set_defaults(fn=cmd_search)

    ids = ("A nugget's lineage id (the id of its first version, constant across versions) "
           "names the nugget as it is now; any other version id names that version. "
           "`history` and `review` accept either and act on the lineage (a review applies "
           "to its head).")
    ca = sub.add_parser(
        "candidates", help="list what waits for review (title, body, provenance, INO)",
        description="List the nuggets of a tenant whose current version (head) is in the "
                    "given review states (default: pending_review), in id order, with "
                    "lineage id, version, title, body, provenance (event id, trigger "
                    "query, feedback) and INO outcome (variant, rounds, passed). The "
                    "ListCandidates RPC returns the same. " + ids)
    ca.add_argument("--tenant", required=True)
    ca.add_argument("--state", "--publication", dest="states", action="append",
                    type=_publication, metavar="STATE",
                    help="review state to list, repeatable: draft, pending (pending_review; "
                         "the default), published, rejected, unpublished")
    ca.add_argument("--limit", type=int, default=50,
                    help="nuggets to list at most (50); the last line gives a --page-token "
                         "when more remain")
    ca.add_argument("--page-token", default="",
                    help="continue a listing (the token its last line or --json gave)")
    ca.add_argument("--json", action="store_true",
                    help="the ListCandidatesResponse as canonical proto JSON")
    ca.set_defaults(fn=cmd_candidates)

    hi = sub.add_parser("history", help="list every version of a nugget",
                        description="Print every version of a nugget's lineage, oldest "
                                    "first, with its title and body. " + ids)
    add_nugget_ref(hi)
    hi.add_argument("--page-size", type=int, default=100,
                    help="versions read from the store at a time (100)")
    hi.set_defaults(fn=cmd_history)

    from query.model import REVIEW_ACTIONS

    rv = sub.add_parser("review", help="approve, reject, unpublish or revert a nugget",
                        description="Apply a review action to the head of a nugget's "
                                    "lineage and print the version it produced. " + ids)
    add_review_arguments(rv, REVIEW_ACTIONS)
    rv.add_argument("--request-id", default="",
                    help="idempotency key: a review with an id already applied to the "
                         "lineage writes nothing and prints the version it produced")
    rv.set_defaults(fn=cmd_review)

    ur = sub.add_parser(
        "usage-review", help="send published nuggets that are not used to review, with why",
        description="Judge every published nugget on its retrievals and citations over "
                    "the last NUGGETFLOW_USAGE_WINDOW_DAYS (counted by the query service "
                    "into the store) and on its validity's end, store the review flags and "
                    "list the open ones: 'uncited' (its topic was queried at least "
                    "NUGGETFLOW_USAGE_MIN_TOPIC_QUERIES times, never cited), "
                    "'seldom_cited' (retrieved at least NUGGETFLOW_USAGE_MIN_RETRIEVALS "
                    "times, cited in under NUGGETFLOW_USAGE_MIN_CITATION_RATE of them), "
                    "'expiring' (validity ends within NUGGETFLOW_USAGE_EXPIRY_DAYS). The "
                    "query service runs the same every "
                    "NUGGETFLOW_USAGE_REVIEW_INTERVAL_SECONDS.")
    ur.add_argument("--tenant", default="", help="one tenant (default: every tenant with "
                                                 "published nuggets)")
    ur.add_argument("--days", type=int, help="the window in days (NUGGETFLOW_USAGE_WINDOW_DAYS)")
    ur.add_argument("--all", action="store_true", help="list dismissed flags too")
    ur.add_argument("--json", action="store_true", help="the flags as a JSON list")
    ur.add_argument("--dismiss", default="", metavar="LINEAGE_ID",
                    help="mark the lineage's flags as seen (kept as it is): they stay "
                         "dismissed while its version is the same")
    ur.add_argument("--kind", choices=("uncited", "seldom_cited", "expiring"),
                    help="with --dismiss: only this kind of flag")
    ur.set_defaults(fn=cmd_usage_review)

    sv = sub.add_parser("serve", help="run the gRPC query service (and /metrics) until SIGTERM",
                        description="Serve nuggetflow.v1.QueryService (with gRPC health and "
                                    "reflection) on the store of NUGGETFLOW_STORE, and "
                                    "Prometheus metrics on /metrics. Tokens: "
                                    "NUGGETFLOW_AUTH_TOKENS_FILE; without any it refuses "
                                    "to start unless --insecure-dev.")
    sv.add_argument("--host", help="bind address (overrides NUGGETFLOW_SERVE_HOST)")
    sv.add_argument("--port", type=int, help="gRPC port (overrides NUGGETFLOW_GRPC_PORT)")
    sv.add_argument("--metrics-port", type=int,
                    help="/metrics port (overrides NUGGETFLOW_METRICS_PORT); worker i "
                         "of several uses this + i")
    sv.add_argument("--workers", type=int,
                    help="processes sharing the port (overrides NUGGETFLOW_SERVE_WORKERS)")
    sv.add_argument("--insecure-dev", action="store_true",
                    help="start without tokens, open to every caller for every tenant "
                         "(local development only; sets NUGGETFLOW_INSECURE_DEV)")
    sv.set_defaults(fn=cmd_serve)

    he = sub.add_parser(
        "health", help="check a running query service (gRPC health) or worker (/metrics)",
        description="Exit 0 when the service on --host answers: the query service's gRPC "
                    "health check says SERVING (port NUGGETFLOW_GRPC_PORT), or with "
                    "--metrics a worker's /metrics answers (port NUGGETFLOW_METRICS_PORT); "
                    "exit 1 otherwise. Used by the compose healthchecks.")
    he.add_argument("--host", default="127.0.0.1", help="address to check (127.0.0.1)")
    he.add_argument("--port", type=int, help="port (default: from the settings)")
    he.add_argument("--metrics", action="store_true",
                    help="check the /metrics endpoint instead of gRPC health")
    he.add_argument("--service", default="",
                    help="gRPC health service name ('': the whole server)")
    he.add_argument("--timeout", type=float, default=3.0, help="seconds (3)")
    he.set_defaults(fn=cmd_health)

    op = sub.add_parser("optimize", help="extract and optimize nuggets from feedback (INO)")
    op.add_argument("--feedback", required=True,
                    help="FeedbackEvent JSONL file (canonical proto JSON) or - for stdin")
    op.add_argument("--corpus", help="tenant corpus JSONL to ingest first")
    op.add_argument("--tenant", help="tenant for the corpus and every event")
    op.add_argument("--variant", default="E", choices=["A", "B", "C", "D", "E"],
                    help="E = INO (default); A-D: single-round baselines")
    op.add_argument("--seed", type=int, default=0, help="probe paraphrase seed")
    op.add_argument("--out", default="var/optimize/candidates.jsonl",
                    help="where candidates and their traces go (JSONL)")
    op.set_defaults(fn=cmd_optimize)

    ev = sub.add_parser(
        "eval", help="evaluate variants A-E on the shipped benchmarks (retrieval/citation "
                     "rates, fidelity, answer compliance, negative control, actionability, "
                     "cost)",
        description="Runs every benchmark under --data (folders with corpus.jsonl, "
                    "cases.jsonl and titles.txt; the GNOME help one first) or the one given "
                    "by --corpus/--cases/--traffic, and writes eval.json (the first "
                    "benchmark at the top level, each under 'benchmarks'), eval.md (with "
                    "every final nugget and its verdicts), eval.png and eval_nuggets.json.")
    ev.add_argument("--corpus", help="corpus JSONL (with --cases: run only this benchmark)")
    ev.add_argument("--cases", help="cases JSONL (with --corpus)")
    ev.add_argument("--traffic", help="random-traffic queries, one per line (with --cases)")
    ev.add_argument("--data", default="bench/data",
                    help="folder of shipped benchmarks (default bench/data)")
    ev.add_argument("--benchmark", action="append",
                    help="run only this shipped benchmark (repeatable)")
    ev.add_argument("--tenant", help="tenant for corpus and cases (default: their own)")
    ev.add_argument("--runs", type=int, default=3, help="runs per variant (seeds 0..n-1)")
    ev.add_argument("--variants", default="A,B,C,D,E")
    ev.add_argument("--workdir", default="var/eval", help="scratch index location")
    ev.add_argument("--out", default="bench/results", help="report directory")
    ev.add_argument("--harness", choices=["builtin", "external"],
                    help="the agent INO and the measurements probe through (default "
                         "NUGGETFLOW_HARNESS): external runs a query service over the "
                         "benchmark's index and probes through the agent at --agent-url, "
                         "or starts the reference agent (examples/agent) with the same "
                         "generator when none is given")
    ev.add_argument("--agent-url", help="the team's agent endpoint (overrides "
                                        "NUGGETFLOW_AGENT_URL)")
    ev.set_defaults(fn=cmd_eval)

    from app.stream_commands import add_commands as add_stream_commands

    add_stream_commands(sub)  # publish, worker, run, review-event

    st = sub.add_parser("settings", help="list every setting with its value and meaning")
    st.set_defaults(fn=cmd_settings)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``nuggetflow`` console script."""
    args = build_parser().parse_args(argv)
    try:
        overrides: dict[str, Any] = {}
        if args.store:
            overrides["store"] = args.store
        if args.log_level:
            overrides["log_level"] = args.log_level
        settings = Settings.from_env(**overrides)
        quiet_demo = args.command == "demo" and not args.log_level
        configure("ERROR" if quiet_demo else settings.log_level, settings.log_format)
        code: int = args.fn(args, settings)
        return code
    except NuggetflowError as exc:
        print(f"nuggetflow: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into a reader that stopped (| head): quietly
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - so the exit flush cannot fail
        return 1
    except OSError as exc:  # a file or a server the command needs: one line, no traceback
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"nuggetflow: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
