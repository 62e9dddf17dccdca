"""The stream worker on a real Kafka broker (deploy/kafka/broker.sh).

Each test is its own deployment: a unique topic prefix and consumer group, its own
SQLite store with the portal corpus, and ``nuggetflow worker`` child processes.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from nuggetflow.settings import Settings
from optimizer.local import local_roles
from query.backends import make_store
from query.embeddings import MiniLMEmbedder
from query.index import NuggetIndex
from stream.engine import InlineEngine
from stream.producer import publish_events
from stream.runner import EmbeddedRunner
from stream.steps import Steps
from stream.synthetic import EventMix, mixed_events
from stream.topics import TopicKind
from tests.fakes.openai_server import fake_openai
from tests.integration.stream_support import (
    Deployment,
    WorkerProcess,
    count_nuggets,
    nugget_state,
    trace_events,
    wait_until,
    without_nugget,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]


async def publish(dep: Deployment, lines: list[bytes], start: int = 1) -> None:
    report = await publish_events(dep.settings, enumerate(lines, start), validate=False)
    assert report.sent == len(lines) and not report.rejected


async def wait_done(dep: Deployment, embedder: MiniLMEmbedder, mix: EventMix,
                    workers: list[WorkerProcess], timeout: float = 240) -> None:
    """Until every actionable event has a nugget, every malformed record a dead letter,
    and the group has committed everything on every source topic."""
    actionable = sorted(mix.actionable)
    seen: dict[str, Any] = {"nuggets": 0, "dead letters": 0, "lag": -1, "missing": []}

    async def done() -> bool:  # (records what it saw for the report on a timeout)
        seen["missing"] = await without_nugget(dep.settings, embedder, actionable)
        seen["nuggets"] = len(actionable) - len(seen["missing"])
        try:
            letters = await dep.dead_letters()
        except Exception as err:  # a broker being killed: read next round
            seen["dead letters"] = f"unread ({type(err).__name__})"
            return False
        seen["dead letters"] = len(letters)
        # a good event dead-lettered never gets its nugget: say why now, not at the timeout
        malformed = set(mix.malformed)
        wrong = [(d.stage, d.reason, d.error, d.source) for d in letters
                 if d.value not in malformed]
        assert wrong == [], f"good events dead-lettered: {wrong}"
        if seen["missing"] or seen["dead letters"] < len(mix.malformed):
            return False
        lag = await dep.lag()
        seen["lag"] = sum(lag.values())
        return not any(lag.values())

    def report() -> str:
        progress = (f"progress: {seen['nuggets']} of {len(actionable)} actionable events "
                    f"with a nugget (without: {seen['missing'][:10]}), "
                    f"{seen['dead letters']} of {len(mix.malformed)} dead "
                    f"letters, lag {seen['lag']} (-1: not sampled yet)")
        return "\n".join([progress, *(f"--- {w.name}\n{w.tail()}" for w in workers)])

    try:
        await wait_until(done, timeout, "the stream to drain", report)
    except AssertionError as err:  # say where the events without a nugget are
        if not seen["missing"]:
            raise
        trace = await trace_events(dep, [e for _, e in seen["missing"][:10]], workers)
        raise AssertionError(f"{err}\n--- where the events without a nugget are\n"
                             f"{trace}") from None


async def check_outcome(dep: Deployment, embedder: MiniLMEmbedder, mix: EventMix,
                        auto_tenants: tuple[str, ...]) -> dict[tuple[str, str], object]:
    """Exactly one nugget per distinct actionable event, none otherwise, no stray
    versions, the review policy applied; returns the state."""
    state = await nugget_state(dep.settings, embedder,
                               mix.actionable | mix.not_actionable)
    versions = 0
    for key in mix.actionable:
        lineages = state[key]
        assert isinstance(lineages, list) and len(lineages) == 1, (key, lineages)
        history = lineages[0]
        versions += len(history)
        expected = "PUBLISHED" if key[0] in auto_tenants else "PENDING_REVIEW"
        assert history[-1][5] == expected, (key, history)
    for key in mix.not_actionable:
        assert state[key] == [], key
    assert state[("*", "versions")] == versions  # nothing else was written
    return state


async def test_thousand_mixed_events(kafka_bootstrap: str, tmp_path: Path,
                                     embedder: MiniLMEmbedder) -> None:
    dep = Deployment.create(kafka_bootstrap, tmp_path,
                            NUGGETFLOW_REVIEW_POLICY_TENANTS="acme=auto")
    await dep.add_corpus(embedder)
    mix = mixed_events(1000, seed=11)
    assert len(mix.actionable) > 50 and len(mix.malformed) > 30 and mix.duplicates > 50
    worker = dep.worker("w1").start()
    try:
        await publish(dep, mix.lines)
        await wait_done(dep, embedder, mix, [worker])
        handled = worker.metric("nuggetflow_stream_events_total", agent="actionability")
        lag = "nuggetflow_stream_consumer_lag_messages"

        async def gauge_drained() -> bool:  # the exported lag follows the broker's
            return f"{lag}{{" in worker.metrics_text() and worker.metric(lag) == 0

        await wait_until(gauge_drained, 15, "the lag gauge to reach 0", worker.tail)
    finally:
        assert worker.stop() == 0, worker.tail()
    assert handled == 1000  # every record, once
    await check_outcome(dep, embedder, mix, auto_tenants=("acme",))
    letters = await dep.dead_letters()
    assert Counter(d.value for d in letters) == Counter(mix.malformed)
    assert {d.reason for d in letters} == {"decode", "invalid_field"}
    events_topic = dep.topics.name(TopicKind.EVENTS)
    assert all(d.error and d.stage == "actionability" and d.source.startswith(events_topic)
               for d in letters)


async def reference_state(dep: Deployment, embedder: MiniLMEmbedder, mix: EventMix,
                          tmp_path: Path, settings: Settings | None = None
                          ) -> dict[tuple[str, str], object]:
    """The state an uninterrupted in-process run (embedded runner) ends in, on a fresh
    store: ``settings``' store, by default a single file."""
    settings = settings or dep.settings.replace(store=f"sqlite:///{tmp_path}/reference.db")
    await dep.add_corpus(embedder, settings)
    index = NuggetIndex(make_store(settings), embedder, settings)
    await index.start()
    engine = InlineEngine(index.store, embedder, local_roles(embedder), settings)  # as the worker
    try:
        await EmbeddedRunner(Steps(index, engine, settings), dep.topics).run(
            enumerate(mix.lines, 1))
    finally:
        await index.stop()
    return await nugget_state(settings, embedder, mix.actionable | mix.not_actionable)


async def test_a_stream_that_does_not_drain_says_where_its_events_are(
        kafka_bootstrap: str, tmp_path: Path, embedder: MiniLMEmbedder) -> None:
    """The failure message of a wait for the stream names, for each event without a
    nugget, its record on the feedback topic (partition, offset, the group's committed
    offset) and on the corrections topic, and the worker log lines naming it: here no
    worker runs, so every event is on the feedback topic and none on the corrections."""
    dep = Deployment.create(kafka_bootstrap, tmp_path)
    await dep.add_corpus(embedder)
    mix = mixed_events(20, seed=5)
    await publish(dep, mix.lines)
    idle = dep.worker("idle")  # never started: its log does not exist
    with pytest.raises(AssertionError) as failed:
        await wait_done(dep, embedder, mix, [idle], timeout=2)
    report = str(failed.value)
    first = sorted(mix.actionable)[0][1]
    assert "where the events without a nugget are" in report
    assert re.search(rf"{first} on feedback\.events: p\d+@\d+ \(committed none\)", report)
    assert f"{first} on feedback.corrections: absent" in report
    assert f"idle log lines naming {first}: 0" in report


async def test_kill_9_mid_stream_then_restart(kafka_bootstrap: str, tmp_path: Path,
                                              embedder: MiniLMEmbedder) -> None:
    dep = Deployment.create(kafka_bootstrap, tmp_path, NUGGETFLOW_REVIEW_POLICY="manual")
    await dep.add_corpus(embedder)
    mix = mixed_events(300, seed=21, actionable_share=0.15)
    actionable = sorted(mix.actionable)
    first = dep.worker("crashed").start()
    try:
        await publish(dep, mix.lines)

        async def some_done() -> bool:
            return await count_nuggets(dep.settings, embedder,
                                       actionable) >= len(actionable) // 4

        await wait_until(some_done, 120, "a quarter of the nuggets", first.tail)
    finally:
        first.kill()
    before = await count_nuggets(dep.settings, embedder, actionable)
    assert before < len(actionable), "the crash came too late to test anything"
    second = dep.worker("restarted").start()
    try:
        await wait_done(dep, embedder, mix, [first, second])
    finally:
        assert second.stop() == 0, second.tail()
    state = await check_outcome(dep, embedder, mix, auto_tenants=())
    assert state == await reference_state(dep, embedder, mix, tmp_path)
    letters = await dep.dead_letters()
    # At least once: a dead letter produced before the crash but not yet committed is
    # produced again; each carries its source offset, so readers can deduplicate.
    assert set(d.value for d in letters) == set(mix.malformed)
    assert len({d.source for d in letters}) == len(mix.malformed)


async def test_llm_outage_events_wait_and_are_retried(kafka_bootstrap: str, tmp_path: Path,
                                                      embedder: MiniLMEmbedder) -> None:
    with fake_openai() as llm:
        llm.fail_status = 503
        dep = Deployment.create(
            kafka_bootstrap, tmp_path, NUGGETFLOW_LLM="openai",
            NUGGETFLOW_OPENAI_BASE_URL=llm.url, NUGGETFLOW_LLM_MAX_ATTEMPTS="2",
            NUGGETFLOW_LLM_TIMEOUT_SECONDS="5", NUGGETFLOW_STREAM_RETRY_INITIAL_SECONDS="0.2",
            NUGGETFLOW_STREAM_RETRY_MAX_SECONDS="1")
        await dep.add_corpus(embedder)
        mix = mixed_events(30, seed=41, actionable_share=0.4)
        assert len(mix.actionable) >= 8
        worker = dep.worker("w1").start()
        try:
            await publish(dep, mix.lines)

            async def retried() -> bool:
                return worker.metric("nuggetflow_stream_retries_total") >= 4

            await wait_until(retried, 60, "retries during the outage", worker.tail)
            # Waiting, not lost: nothing produced, nothing dead-lettered but the malformed.
            assert await count_nuggets(dep.settings, embedder,
                                       sorted(mix.actionable)) == 0
            assert {d.value for d in await dep.dead_letters()} <= set(mix.malformed)
            failed_calls = worker.metric("nuggetflow_llm_calls_total", outcome="error")
            assert failed_calls >= 4 and len(llm.requests) >= 4
            llm.fail_status = None  # the endpoint recovers
            await wait_done(dep, embedder, mix, [worker])
            retries = worker.metric("nuggetflow_stream_retries_total", agent="actionability")
        finally:
            assert worker.stop() == 0, worker.tail()
    assert retries >= 4
    await check_outcome(dep, embedder, mix, auto_tenants=())
    letters = await dep.dead_letters()
    assert Counter(d.value for d in letters) == Counter(mix.malformed)


async def test_second_worker_joins_and_leaves_mid_stream(kafka_bootstrap: str,
                                                         tmp_path: Path,
                                                         embedder: MiniLMEmbedder) -> None:
    dep = Deployment.create(kafka_bootstrap, tmp_path,
                            NUGGETFLOW_REVIEW_POLICY_TENANTS="acme=auto")
    tenants = ("acme", "globex", "initech", "umbrella", "hooli", "stark")
    await dep.add_corpus(embedder, tenants=tenants)  # keys spread over the partitions
    mix = mixed_events(600, seed=31, actionable_share=0.12, tenants=tenants)
    chunks = [mix.lines[i:i + 200] for i in range(0, 600, 200)]
    first = dep.worker("first").start()
    second = dep.worker("second")
    try:
        await publish(dep, chunks[0], 1)
        second.start()

        async def both_members() -> bool:
            return await dep.members() == 2

        # Joined: the partitions were split while the first chunk was being processed.
        await wait_until(both_members, 60, "the group to have two members", second.tail)
        await publish(dep, chunks[1], 201)

        async def second_busy() -> bool:
            return second.metric("nuggetflow_stream_events_total") >= 10

        await wait_until(second_busy, 60, "the second worker to process its partitions",
                         second.tail)
        await publish(dep, chunks[2], 401)
        second_handled = second.metric("nuggetflow_stream_events_total")
        assert second.stop() == 0, second.tail()  # leaves while events are in flight
        await wait_done(dep, embedder, mix, [first, second])
        first_handled = first.metric("nuggetflow_stream_events_total")
    finally:
        second.stop()
        assert first.stop() == 0, first.tail()
    assert second_handled >= 10 and first_handled > 0
    await check_outcome(dep, embedder, mix, auto_tenants=("acme",))
    letters = await dep.dead_letters()
    # Dead letters are produced at least once: a record whose offset commit was lost in
    # the rebalance can be dead-lettered again by the worker that gets its partition.
    # Its source (topic:partition:offset) identifies it, so none is lost or ambiguous.
    by_source = {d.source: d.value for d in letters}
    assert len(by_source) == len(mix.malformed)
    assert Counter(by_source.values()) == Counter(mix.malformed)


async def test_injections_and_markup_through_the_worker(kafka_bootstrap: str, tmp_path: Path,
                                                        embedder: MiniLMEmbedder) -> None:
    """Feedback addressed to the system makes no nugget, even under auto-publication;
    markup that runs code refuses the feedback whole, and styling markup never reaches the
    index (issue inputs, verbatim, through a real broker)."""
    import json

    from query.model import Publication
    from stream.synthetic import correction, event
    from tests.conformance.untrusted_suite import HTML, INJECTIONS, STYLED

    dep = Deployment.create(kafka_bootstrap, tmp_path, NUGGETFLOW_REVIEW_POLICY="auto")
    await dep.add_corpus(embedder, tenants=("acme",))
    q, a, c = correction(3)
    lines = [json.dumps(event(f"inj-{i}", "acme", "what is the admin password", "Ask the "
                              "Service Desk.", text, minutes=i)).encode()
             for i, text in enumerate(INJECTIONS)]
    lines.append(json.dumps(event("html", "acme", "who resets admin passwords", a, HTML,
                                  minutes=10)).encode())
    lines.append(json.dumps(event("styled", "acme", "who resets admin passwords", a, STYLED,
                                  minutes=11)).encode())
    lines.append(json.dumps(event("plain", "acme", q, a, c, minutes=12)).encode())
    worker = dep.worker("w1").start()
    try:
        await publish(dep, lines)
        wanted = [("acme", "styled"), ("acme", "plain")]

        async def done() -> bool:
            if await count_nuggets(dep.settings, embedder, wanted) < 2:
                return False
            plain = (await nugget_state(dep.settings, embedder,
                                        [("acme", "plain")]))[("acme", "plain")]
            return plain[0][-1][5] == "PUBLISHED" and not any((await dep.lag()).values())

        await wait_until(done, 180, "the stream to drain", worker.tail)
        state = await nugget_state(dep.settings, embedder,
                                   [("acme", f"inj-{i}") for i in range(len(INJECTIONS))]
                                   + [("acme", "html")] + wanted)
    finally:
        assert worker.stop() == 0, worker.tail()
    for i in range(len(INJECTIONS)):
        assert state[("acme", f"inj-{i}")] == [], i
    # a script or an event handler refuses the whole message, the fact beside it too
    assert state[("acme", "html")] == []
    assert "markup that runs code" in worker.tail(20000)
    [html_history] = state[("acme", "styled")]
    title, body, anchors, publication = (html_history[-1][2], html_history[-1][3],
                                         html_history[-1][4], html_history[-1][5])
    for text in (title, body, *anchors):
        assert "<" not in text and "href" not in text and "pasted" not in text
    assert "iam.example.internal" in body
    # Feedback that carried markup is held for a person, whatever the policy says.
    assert publication == Publication.PENDING_REVIEW.name and len(html_history) == 1
    assert "candidate held for review" in worker.tail(20000)


async def test_a_corpus_change_through_kafka_reoptimizes_the_nugget_it_buries(
        kafka_bootstrap: str, tmp_path: Path, embedder: MiniLMEmbedder) -> None:
    """Issue 13: nuggets published by the worker, then `nuggetflow ingest --changes kafka`
    of a page that buries one of them: the worker's reprobe agent re-probes it,
    re-optimizes it and publishes the new version (auto policy), with a trace; a change
    no probe reaches re-probes nothing."""
    import json
    import os
    import subprocess
    import sys

    from query.model import Publication
    from stream.synthetic import event
    from tests.integration.stream_support import ROOT
    from tests.support.corpus_change import AUDIT, FAQ, RESET, UNRELATED

    dep = Deployment.create(kafka_bootstrap, tmp_path, NUGGETFLOW_REVIEW_POLICY="auto")
    await dep.add_corpus(embedder, tenants=("acme",))
    lines = [json.dumps(event(name, "acme", q, a, c, minutes=i)).encode()
             for i, (name, (q, a, c)) in enumerate((("reset", RESET), ("audit", AUDIT)))]
    wanted = [("acme", "reset"), ("acme", "audit")]

    async def versions() -> dict[tuple[str, str], Any]:
        state = await nugget_state(dep.settings, embedder, wanted)
        return {k: state[k][0] if state[k] else [] for k in wanted}

    def ingest(name: str, doc: dict[str, str]) -> dict[str, Any]:
        path = tmp_path / f"{name}.jsonl"
        path.write_text(json.dumps({**doc, "tenant": "acme"}) + "\n")
        proc = subprocess.run([sys.executable, "-m", "app.cli", "ingest", str(path),
                               "--changes", "kafka", "--quiet"], cwd=ROOT,
                              env={**os.environ, **dep.env},
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        out: dict[str, Any] = json.loads(proc.stdout)
        return out

    async def traces(event_id: str) -> list[Any]:
        index = NuggetIndex(make_store(dep.settings), embedder, dep.settings)
        await index.start()
        try:
            [made] = await index.store.find_by_event("acme", event_id)
            return await index.store.traces("acme", made.lineage_id or made.id)
        finally:
            await index.stop()

    worker = dep.worker("w1").start()
    try:
        await publish(dep, lines)

        async def published() -> bool:
            state = await versions()
            return all(v and v[-1][5] == Publication.PUBLISHED.name for v in state.values())

        await wait_until(published, 180, "both nuggets to be published", worker.tail)
        before = await versions()
        assert ingest("unrelated", UNRELATED)["published_changes"] == 1
        assert ingest("faq", FAQ)["published_changes"] == 1

        async def reoptimized() -> bool:
            return len((await versions())[("acme", "reset")]) == 3 and not any(
                (await dep.lag()).values())

        await wait_until(reoptimized, 180, "the buried nugget's new version", worker.tail)
        after = await versions()
        reset_traces, audit_traces = await traces("reset"), await traces("audit")
    finally:
        assert worker.stop() == 0, worker.tail()
    old, new = before[("acme", "reset")][-1], after[("acme", "reset")][-1]
    assert new[5] == Publication.PUBLISHED.name and new[3] == old[3], "same body, published"
    assert new[4] != old[4], "INO changed the anchors"
    # one trace per change that reached it: the unrelated page reached neither nugget
    [trace] = reset_traces
    assert trace.outcome == "reoptimized" and trace.detail["new_version"] == new[0]
    assert trace.detail["passages"] == ["faq-portal-reset#0"]
    assert [t.outcome for t in audit_traces] == ["passed"]
    assert after[("acme", "audit")] == before[("acme", "audit")]
