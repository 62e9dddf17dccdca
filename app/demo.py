"""The embedded end-to-end demo: no servers, no API key, one SQLite file under ``var/demo``.

1. Index the GNOME desktop help (the shipped benchmark corpus) as tenant ``gnome``.
2. Feed a sample feedback stream (corrections, vague feedback, praise, an injection
   attempt, a malformed line, a re-delivered event) through the embedded runner: the
   same steps as the Kafka worker (actionability, extraction, INO, auto-publish).
3. Start the gRPC query service (insecure dev mode: no tokens, on 127.0.0.1 only) and
   make Retrieve calls through a real channel.
4. Print a report: what was accepted or rejected and why, the iterations per nugget, and
   for each nugget its retrieval on held-out queries before INO (the standard nugget, A)
   and after (the published one).
5. Hold two more corrections for a person (manual review) and end by saying how to open
   the review console on the demo's data; with ``--serve`` the query service and the
   console stay up until Ctrl-C.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import shutil
import signal
import sys
from pathlib import Path
from typing import Any

from app.wiring import make_inline_engine, make_roles_for, scratch_index
from nuggetflow.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
GNOME = ROOT / "bench" / "data" / "gnome-help"
TENANT = "gnome"
SAMPLE_CORRECTIONS = ("c004", "c006", "c013", "c020", "c024", "c032", "c044", "c054")
SAMPLE_OTHERS = ("n001", "n010", "n020", "n030")
HELD_FOR_REVIEW = 2  # further corrections the demo leaves in the review queue
DEMO_OWNER = "gnome-owner"  # the demo tenant's designated owner (NUGGETFLOW_TENANT_OWNERS)


def _say(text: str = "") -> None:
    print(text, file=sys.stdout, flush=True)


def sample_stream(cases: list[Any]) -> list[bytes]:
    """Feedback events (canonical JSON) for the sample cases, plus a malformed line and a
    re-delivery of the first event."""
    by_id = {c.id: c for c in cases}
    lines = []
    for cid in (*SAMPLE_CORRECTIONS, *SAMPLE_OTHERS):
        c = by_id[cid]
        lines.append(json.dumps({
            "eventId": f"fb-{c.id}", "tenant": TENANT, "query": c.query, "answer": c.answer,
            "feedback": {"rating": c.rating, "comment": c.comment},
            "citedDocuments": list(c.cited), "user": "demo-user", "agent": "chat"}).encode())
    lines.insert(3, b'{"eventId": "fb-broken", "tenant": "gnome"}')
    lines.append(lines[0])  # at-least-once delivery: the same event again
    return lines


def held_stream(cases: list[Any], count: int = HELD_FOR_REVIEW) -> list[bytes]:
    """Feedback events of further corrections (not in the sample) for the review queue."""
    extra = [c for c in cases if c.actionable and c.id not in SAMPLE_CORRECTIONS][:count]
    return [json.dumps({
        "eventId": f"fb-{c.id}", "tenant": TENANT, "query": c.query, "answer": c.answer,
        "feedback": {"rating": c.rating, "comment": c.comment},
        "citedDocuments": list(c.cited), "user": "demo-user", "agent": "chat"}).encode()
        for c in extra]


async def run_demo(settings: Settings, workdir: str | Path = "var/demo", *,
                   serve: bool = False, port: int = 0, console_port: int = 8080) -> int:
    """Run the demo and print the report; with ``serve``, keep the query service and the
    review console up."""
    import asyncio

    import grpc

    from nuggetflow.v1 import query_service_pb2 as qpb
    from nuggetflow.v1 import query_service_pb2_grpc as qpb_grpc
    from optimizer.evaluation import measure, read_cases
    from optimizer.guard import check_edit
    from optimizer.harness import BuiltinHarness
    from optimizer.pipeline import Optimizer
    from optimizer.types import NuggetDraft
    from query.auth import TokenAuth
    from query.corpus import ingest_corpus
    from query.model import Nugget
    from query.service import create_server
    from stream.records import StepResult
    from stream.runner import EmbeddedRunner
    from stream.steps import Steps
    from stream.topics import Topics

    work = Path(workdir)
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    settings = settings.replace(review_policy="auto", review_policy_tenants="",
                                tenant_owners=settings.tenant_owners or f"{TENANT}={DEMO_OWNER}")
    # One token for the demo tenant: the console signs in with it, Retrieve sends it.
    token = "demo-" + secrets.token_urlsafe(18)
    (work / "tokens.json").write_text(json.dumps({token: [TENANT]}) + "\n")
    index = scratch_index(settings, work / "index.db")
    await index.start()
    roles = make_roles_for(settings, index)
    engine = make_inline_engine(settings, index, roles)
    await engine.start()
    server = None
    try:
        _say("== nuggetflow demo: embedded store (SQLite FTS5 + HNSW), local MiniLM, "
             "local LLM roles; no servers, no key ==")
        corpus = await ingest_corpus(index, GNOME / "corpus.jsonl", TENANT)
        _say(f"\n1. indexed the GNOME help as tenant '{TENANT}': {corpus.documents} pages, "
             f"{corpus.passages} passages")

        cases = read_cases(GNOME / "cases.jsonl", TENANT)
        by_event = {f"fb-{c.id}": c for c in cases}
        stream = sample_stream(cases)
        _say(f"\n2. feeding {len(stream)} feedback events through the embedded runner "
             "(actionability -> extraction -> INO -> auto-publish):")
        results: list[tuple[str, StepResult]] = []

        def show(agent: str, r: StepResult) -> None:
            results.append((agent, r))
            if agent == "actionability":
                verdict = {"correction": "actionable -> optimize",
                           "not_actionable": "rejected"}.get(r.outcome, r.outcome)
                detail = f" ({r.detail})" if r.detail else ""
                _say(f"   {r.event_id or '?':10s} {verdict}{detail}")

        runner = EmbeddedRunner(Steps(index, engine, settings), Topics.from_settings(settings),
                                on_result=show)
        report = await runner.run(enumerate(stream, start=1))
        for d in report.dead_letters:
            _say(f"   dead letter ({d.source}): {d.reason}: {d.error}")
        summary = report.summary()
        _say(f"   -> {summary['candidates']} nuggets published, "
             f"{summary['dead_letters']} dead letter(s), {summary['seconds']} s "
             f"(the re-delivered event made no second nugget)")

        # Before (the standard nugget, variant A) vs after (the published INO nugget), on
        # the held-out queries of each case, with the same agent.
        harness = BuiltinHarness(index.store, index.embedder, roles.generator, settings)
        opt = Optimizer(index.store, index.embedder, roles, settings, harness=harness)
        _say("\n3. each nugget: INO iterations, and held-out retrieval (reached the answer's "
             "context / cited) before INO (A) and after (published):")
        published: dict[str, Nugget] = {}
        for event_id, case in by_event.items():
            heads = await index.store.find_by_event(TENANT, event_id)
            if not heads:
                continue
            nugget = heads[-1]
            published[event_id] = nugget
            before = await opt.process(case.context(), variant="A")
            b = await measure(harness, index.embedder, TENANT,
                              before.result.draft if before.result else None, case.heldout)
            a = await measure(harness, index.embedder, TENANT,
                              NuggetDraft(nugget.title, nugget.body, nugget.anchors),
                              case.heldout)
            trace = nugget.optimization or {}
            n = len(case.heldout)
            _say(f"   {event_id}  feedback: {case.comment}\n"
                 f"      title:   {nugget.title}\n"
                 f"      body:    {nugget.body}\n"
                 f"      anchors: {'; '.join(nugget.anchors[:3])}"
                 f"{'; ...' if len(nugget.anchors) > 3 else ''}\n"
                 f"      INO: {trace.get('iterations', '?')} iteration(s), "
                 f"{'passed' if trace.get('passed') else 'not all probes passed'}; held-out "
                 f"{sum(m.reached for m in b)}/{n} reached, {sum(m.cited for m in b)}/{n} "
                 f"cited before -> {sum(m.reached for m in a)}/{n} reached, "
                 f"{sum(m.cited for m in a)}/{n} cited after")
        await harness.close()

        held = held_stream(cases)
        manual = settings.replace(review_policy="manual")
        held_report = await EmbeddedRunner(Steps(index, engine, manual),
                                           Topics.from_settings(manual)).run(
            enumerate(held, start=1))
        _say(f"\n   {len(held_report.candidates)} more correction(s) held for review "
             f"(manual policy), assigned to {settings.owner_for(TENANT) or 'the agent'}")

        server, bound = create_server(index, settings, port,
                                      auth=TokenAuth({token: [TENANT]}), guard=check_edit)
        await server.start()
        _say(f"\n4. gRPC query service on 127.0.0.1:{bound}; Retrieve calls through a real "
             "channel:")
        metadata = (("authorization", f"Bearer {token}"),)
        async with grpc.aio.insecure_channel(f"127.0.0.1:{bound}") as channel:
            stub = qpb_grpc.QueryServiceStub(channel)  # type: ignore[no-untyped-call]
            for event_id in list(published)[:3]:
                q = by_event[event_id].heldout[0]
                reply = await stub.Retrieve(qpb.RetrieveRequest(
                    tenant=TENANT, query=q, k=3, include_documents=True), metadata=metadata)
                _say(f"   Retrieve({q!r}): suppressed={reply.suppressed}")
                for i, h in enumerate(reply.hits, 1):
                    kind = "nugget  " if h.type == qpb.Hit.NUGGET else "document"
                    _say(f"      {i}. {kind} {h.scores.fused:.3f}  {h.title[:70]}")
        _say(f"\nindex file: {work / 'index.db'}")
        owner = settings.owner_for(TENANT)
        if serve:
            # the console needs nuggetflow-client (scripts/bootstrap installs it)
            from console.server import config_from_settings, serving

            config = config_from_settings(settings, grpc_target=f"127.0.0.1:{bound}")
            async with serving(config, "127.0.0.1", console_port) as console:
                _say(f"\n5. review console: open {console.url} and sign in with the token "
                     f"{token} and your name\n   (as {owner!r}: 'Assigned to me' lists the "
                     "candidates held for review)")
                _say(f"serving gRPC on 127.0.0.1:{bound} and the console on {console.url}; "
                     "press Ctrl-C to stop")
                # Ctrl-C / SIGTERM end the wait here, so the console and the service shut
                # down in order (a signal arriving inside another thread's work cannot
                # leave the process waiting).
                stop = asyncio.Event()
                loop = asyncio.get_running_loop()
                for sig in (signal.SIGINT, signal.SIGTERM):
                    loop.add_signal_handler(sig, stop.set)
                with contextlib.suppress(asyncio.CancelledError):
                    await stop.wait()
                await server.stop(2)
        else:
            _say("\n5. the review console on this data: run `scripts/nuggetflow demo --serve` "
                 "(service and console stay up\n   until Ctrl-C) and open "
                 f"http://127.0.0.1:{console_port}, or serve this index yourself:\n"
                 f"     NUGGETFLOW_STORE=sqlite:///{work / 'index.db'} "
                 f"NUGGETFLOW_AUTH_TOKENS_FILE={work / 'tokens.json'} scripts/nuggetflow serve\n"
                 "     scripts/nuggetflow console      # http://127.0.0.1:8080\n"
                 f"   sign in with the token in {work / 'tokens.json'} ({token}) and your "
                 f"name ({owner!r} sees what is assigned to it)")
    finally:
        if server is not None:
            await server.stop(1.0)
        await engine.stop()
        await index.stop()
    return 0
