"""The streaming commands of the ``nuggetflow`` CLI: publish, worker, run, review-event.

Registered by :func:`add_commands` from :mod:`app.cli` (the stream package itself knows
nothing of the command line); heavy modules (Faust,
aiokafka, the optimizer) are imported inside the commands so ``--help`` stays instant.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import TYPE_CHECKING, Any

from app.args import add_review_arguments
from app.wiring import inline_engine, make_worker, with_flags, with_index
from nuggetflow.settings import Settings

if TYPE_CHECKING:
    from query.index import NuggetIndex


def cmd_publish(args: argparse.Namespace, settings: Settings) -> int:
    """Produce feedback events (JSONL) to feedback.events, with progress and a summary."""
    from stream.events import read_events
    from stream.producer import PublishReport, publish_events
    from stream.topics import TopicKind, Topics

    def progress(rep: PublishReport) -> None:
        print(f"\rsent {rep.sent}, rejected {len(rep.rejected)} "
              f"({rep.sent / max(rep.seconds, 1e-9):.0f} events/s)", end="",
              file=sys.stderr, flush=True)

    report = asyncio.run(publish_events(
        settings, read_events(args.file), fmt=args.format, validate=not args.no_validate,
        progress=None if args.quiet else progress))
    if not args.quiet:
        print(file=sys.stderr)
        for line, reason in report.rejected:
            print(f"line {line}: rejected: {reason}", file=sys.stderr)
    topic = Topics.from_settings(settings).name(TopicKind.EVENTS)
    print(json.dumps({"topic": topic, **report.summary()}))
    return 0 if not report.rejected else 1


def cmd_worker(args: argparse.Namespace, settings: Settings) -> int:
    """Run the Faust worker (all four agents) until SIGTERM or SIGINT."""
    from stream.app import run_worker

    settings = with_flags(settings, args, {"concurrency": "stream_optimize_concurrency",
                                           "metrics_port": "metrics_port"})
    return run_worker(settings, make_worker(settings))


def cmd_run(args: argparse.Namespace, settings: Settings) -> int:
    """Run the worker's steps in-process on a feedback file or stdin, without Kafka."""
    from query.corpus import ingest_corpus, read_documents
    from stream.events import read_events
    from stream.records import StepResult
    from stream.runner import EmbeddedRunner
    from stream.steps import Steps
    from stream.topics import Topics

    if args.policy:
        settings = settings.replace(review_policy=args.policy, review_policy_tenants="")

    def show(agent: str, r: StepResult) -> None:
        if args.quiet or agent not in ("actionability", "optimize", "review"):
            return
        what = f"{r.outcome}" + (f" ({r.detail})" if r.detail else "")
        if r.nugget_id:
            what += f" {r.nugget_id}"
        print(f"{agent:>13s} {r.tenant or '-'}/{r.event_id or '-'}: {what}", file=sys.stderr)

    # Inputs first: a bad file fails before the store and the models are loaded.
    events = read_events(args.file)
    docs = read_documents(args.corpus, args.tenant, settings=settings) if args.corpus else []

    async def run(index: NuggetIndex) -> int:
        async with inline_engine(settings, index) as engine:
            if args.corpus:
                corpus = await ingest_corpus(index, args.corpus, args.tenant, documents=docs)
                print(f"corpus: {corpus.summary()}", file=sys.stderr)
            runner = EmbeddedRunner(Steps(index, engine, settings),
                                    Topics.from_settings(settings), on_result=show)
            report = await runner.run(events)
        if args.dead_letters:
            with open(args.dead_letters, "w", encoding="utf-8") as out:
                for d in report.dead_letters:
                    out.write(json.dumps(d.to_dict(), ensure_ascii=False) + "\n")
        elif report.dead_letters and not args.quiet:
            for d in report.dead_letters:
                print(f"dead letter {d.source}: {d.reason}: {d.error}", file=sys.stderr)
        print(json.dumps(report.summary()))
        return 0

    return asyncio.run(with_index(settings, run))


def cmd_review_event(args: argparse.Namespace, settings: Settings) -> int:
    """Publish a review action to nuggets.reviews (the worker applies it)."""
    from stream.producer import publish_review
    from stream.records import ReviewEvent

    changes: dict[str, Any] = {}
    if args.title:
        changes["title"] = args.title
    if args.body:
        changes["body"] = args.body
    if args.anchor:
        changes["anchors"] = list(args.anchor)
    review = ReviewEvent(args.tenant, args.id, args.action, reviewer=args.reviewer,
                         reason=args.reason, target_version_id=args.target or "",
                         changes=changes)
    sent = asyncio.run(publish_review(settings, review))
    print(sent.to_bytes().decode())
    return 0


def add_commands(sub: Any) -> None:
    """Add publish, worker, run and review-event to the CLI's subparsers."""
    pu = sub.add_parser("publish", help="produce feedback events (JSONL) to Kafka",
                        description="Produce FeedbackEvent lines (canonical proto JSON) to "
                                    "<prefix>feedback.events, keyed by tenant. Invalid lines "
                                    "are rejected with their reason (exit code 1).")
    pu.add_argument("file", help="JSONL file, or - for stdin")
    pu.add_argument("--format", choices=["json", "protobuf"], default="json",
                    help="wire format of the events (json: the line as it is)")
    pu.add_argument("--no-validate", action="store_true",
                    help="send every line as it is; the worker dead-letters malformed ones")
    pu.add_argument("--quiet", action="store_true", help="no progress output")
    pu.set_defaults(fn=cmd_publish)

    wk = sub.add_parser("worker", help="run the Faust stream worker until SIGTERM",
                        description="Consume feedback.events, feedback.corrections, "
                                    "nuggets.candidates and nuggets.reviews; serve "
                                    "Prometheus metrics on NUGGETFLOW_METRICS_PORT.")
    wk.add_argument("--concurrency", type=int,
                    help="INO runs at once (overrides NUGGETFLOW_STREAM_OPTIMIZE_CONCURRENCY)")
    wk.add_argument("--metrics-port", type=int,
                    help="/metrics port (overrides NUGGETFLOW_METRICS_PORT)")
    wk.set_defaults(fn=cmd_worker)

    rn = sub.add_parser("run", help="run the stream steps in-process on a feedback file "
                                    "(no Kafka)")
    rn.add_argument("file", help="FeedbackEvent JSONL file, or - for stdin")
    rn.add_argument("--corpus", help="tenant corpus JSONL to ingest first")
    rn.add_argument("--tenant", help="tenant for the corpus (default: each record's own)")
    rn.add_argument("--policy", choices=["manual", "auto"],
                    help="review policy for every tenant (default: the settings')")
    rn.add_argument("--dead-letters", help="write dead letters to this JSONL file")
    rn.add_argument("--quiet", action="store_true", help="only the summary")
    rn.set_defaults(fn=cmd_run)

    from query.model import RECORD_ACTIONS

    re_ = sub.add_parser("review-event", help="publish a review action to nuggets.reviews",
                         description="The worker's review agent applies it (approve, reject, "
                                     "unpublish, revert to --target, or edit title/body/"
                                     "anchors); `review` applies one directly to the store.")
    add_review_arguments(re_, RECORD_ACTIONS)
    re_.add_argument("--title", help="edit: new title")
    re_.add_argument("--body", help="edit: new body")
    re_.add_argument("--anchor", action="append", help="edit: an anchor (repeatable)")
    re_.set_defaults(fn=cmd_review_event)
