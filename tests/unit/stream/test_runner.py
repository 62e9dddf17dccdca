"""The embedded runner: the worker's steps on a mixed feedback file, no Kafka."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

from nuggetflow.settings import Settings
from query.index import NuggetIndex
from query.model import Publication
from stream.records import StepResult
from stream.runner import EmbeddedRunner
from stream.steps import Steps
from stream.synthetic import mixed_events, portal_corpus
from stream.topics import Topics

ROOT = Path(__file__).resolve().parents[3]


async def test_mixed_stream_one_nugget_per_actionable_event(steps: Steps,
                                                            index: NuggetIndex) -> None:
    mix = mixed_events(200, seed=3)
    assert mix.actionable and mix.malformed and mix.duplicates
    seen: list[tuple[str, str]] = []

    def on_result(agent: str, r: StepResult) -> None:
        seen.append((agent, r.outcome))

    report = await EmbeddedRunner(steps, Topics(), batch=16, on_result=on_result).run(
        enumerate(mix.lines, 1))
    assert report.events == 200
    assert len(report.candidates) == len(set(report.candidates)) == len(mix.actionable)
    for tenant, event_id in mix.actionable:
        [nugget] = await index.store.find_by_event(tenant, event_id)
        expected = Publication.PUBLISHED if tenant == "acme" else Publication.PENDING_REVIEW
        assert nugget.publication is expected, (tenant, event_id)
    for tenant, event_id in mix.not_actionable:
        assert not await index.store.find_by_event(tenant, event_id)
    assert Counter(d.value for d in report.dead_letters) == Counter(mix.malformed)
    assert all(d.reason in ("decode", "invalid_field") and d.error
               for d in report.dead_letters)
    lines = {raw: n for n, raw in enumerate(mix.lines, 1)}
    assert all(d.source == f"feedback.events:0:{lines[d.value]}" for d in report.dead_letters)
    summary = report.summary()
    assert summary["steps"]["optimize"]["duplicate"] >= 1  # re-delivered corrections
    assert summary["steps"]["review"]["applied"] == len(
        [t for t, _ in mix.actionable if t == "acme"])
    assert Counter(seen)[("actionability", "correction")] == summary["steps"][
        "actionability"]["correction"]


def test_nuggetflow_run_command(tmp_path: Path, stream_settings: Settings) -> None:
    mix = mixed_events(40, seed=5, actionable_share=0.2)
    events = tmp_path / "events.jsonl"
    events.write_bytes(b"\n".join(mix.lines) + b"\n")
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for t in ("acme", "globex")
                              for r in portal_corpus(t)))
    dead = tmp_path / "dead.jsonl"
    env = {**os.environ, "NUGGETFLOW_STORE": f"sqlite:///{tmp_path}/run.db"}
    proc = subprocess.run([sys.executable, "-m", "app.cli", "run", str(events),
                           "--corpus", str(corpus), "--policy", "auto",
                           "--dead-letters", str(dead)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["events"] == 40 and summary["candidates"] == len(mix.actionable)
    assert summary["steps"]["review"]["applied"] == len(mix.actionable)
    letters = [json.loads(line) for line in dead.read_text().splitlines()]
    assert len(letters) == summary["dead_letters"] == len(mix.malformed)
    assert all(d["reason"] and d["error"] for d in letters)
    assert "correction" in proc.stderr and "candidate n-" in proc.stderr


async def test_the_shipped_sample_feedback_runs_through_the_steps(
        steps: Steps, index: NuggetIndex) -> None:
    """examples/feedback.jsonl (the README's sample for `publish` and `run`): every line
    is a valid event; the four corrections become nuggets, the question, the praise,
    the vague complaint and the injected instruction do not."""
    from stream.events import read_events

    lines = [raw for _, raw in read_events(ROOT / "examples" / "feedback.jsonl")]
    report = await EmbeddedRunner(steps, Topics(), batch=4).run(enumerate(lines, 1))
    assert report.events == len(lines) == 8 and not report.dead_letters
    made = {e for e in ("ex-001", "ex-002", "ex-003", "ex-004", "ex-005", "ex-006", "ex-007",
                        "ex-008") if await index.store.find_by_event("gnome", e)}
    assert made == {"ex-001", "ex-002", "ex-003", "ex-007"}
