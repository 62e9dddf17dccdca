"""The embedded runner: the worker's steps, in-process, from a file or stdin, no Kafka.

It reads feedback events (JSONL of canonical JSON, one event per line) and hands every
record a step emits straight to the step that consumes that topic, depth first, so each
event is fully handled (extraction, INO, submission, review policy, auto-approval) before
the next. Dead letters are collected in the report instead of a topic; their source is
``<events topic>:0:<line number>``.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from nuggetflow.logging import get_logger
from stream.records import DeadLetter, Emit, Record, StepResult
from stream.steps import Steps
from stream.topics import AGENT_SOURCES, TopicKind, Topics

log = get_logger(__name__)

AGENT_OF = {kind: agent for agent, kind in AGENT_SOURCES.items()}


@dataclass
class RunReport:
    """What a run did: outcome counts per step, candidates, dead letters."""

    events: int = 0
    outcomes: Counter[tuple[str, str]] = field(default_factory=Counter)
    candidates: list[str] = field(default_factory=list)
    dead_letters: list[DeadLetter] = field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> dict[str, Any]:
        """JSON-ready totals."""
        by_step: dict[str, dict[str, int]] = {}
        for (agent, outcome), n in sorted(self.outcomes.items()):
            by_step.setdefault(agent, {})[outcome] = n
        reasons = Counter(d.reason for d in self.dead_letters)
        return {"events": self.events, "candidates": len(set(self.candidates)),
                "dead_letters": len(self.dead_letters),
                "dead_letter_reasons": dict(sorted(reasons.items())), "steps": by_step,
                "seconds": round(self.seconds, 2)}


class EmbeddedRunner:
    """Runs :class:`~stream.steps.Steps` on events from a file, without Kafka."""

    def __init__(self, steps: Steps, topics: Topics, *, batch: int = 64,
                 on_result: Callable[[str, StepResult], None] | None = None) -> None:
        self.steps = steps
        self.topics = topics
        self.batch = batch
        self.on_result = on_result
        self._offsets: Counter[TopicKind] = Counter()

    async def run(self, lines: Iterable[tuple[int, bytes]]) -> RunReport:
        """Process ``(line number, raw event)`` pairs in order; returns the report."""
        report = RunReport()
        started = time.perf_counter()
        events_topic = self.topics.name(TopicKind.EVENTS)
        it: Iterator[tuple[int, bytes]] = iter(lines)
        while chunk := list(islice(it, self.batch)):
            records = [Record(raw, None, events_topic, 0, number) for number, raw in chunk]
            report.events += len(records)
            for result in await self.steps.ingest(records):
                await self._handle("actionability", result, report)
        report.seconds = time.perf_counter() - started
        log.info("embedded run finished", **report.summary())
        return report

    async def reprobe(self, changes: Iterable[bytes]) -> RunReport:
        """Run the re-probe step on ``corpus.changes`` records (what ``nuggetflow ingest``
        stored), in order, as the worker's reprobe agent would."""
        report = RunReport()
        started = time.perf_counter()
        for value in changes:
            await self._route(Emit(TopicKind.CORPUS_CHANGES, None, value), report)
        report.seconds = time.perf_counter() - started
        return report

    async def _handle(self, agent: str, result: StepResult, report: RunReport) -> None:
        report.outcomes[(agent, result.outcome)] += 1
        if agent == "optimize" and result.outcome == "candidate":
            report.candidates.append(result.nugget_id)
        if self.on_result is not None:
            self.on_result(agent, result)
        for emit in result.emits:
            await self._route(emit, report)

    async def _route(self, emit: Emit, report: RunReport) -> None:
        if emit.kind is TopicKind.DEAD_LETTER:
            report.dead_letters.append(DeadLetter.from_headers(emit.value, emit.headers))
            return
        offset = self._offsets[emit.kind]
        self._offsets[emit.kind] += 1
        record = Record(emit.value, emit.key, self.topics.name(emit.kind), 0, offset,
                        emit.headers)
        agent = AGENT_OF[emit.kind]
        if emit.kind is TopicKind.CORRECTIONS:
            result = await self.steps.optimize(record)
        elif emit.kind is TopicKind.CANDIDATES:
            result = await self.steps.publish(record)
        elif emit.kind is TopicKind.REVIEWS:
            result = await self.steps.review(record)
        elif emit.kind is TopicKind.CORPUS_CHANGES:
            result = await self.steps.reprobe(record)
        else:  # events are only read from the input
            raise ValueError(f"the runner cannot route to {emit.kind.value}")
        await self._handle(agent, result, report)
