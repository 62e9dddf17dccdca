"""From one feedback event to a candidate nugget: actionability, extraction, variant,
probe set, INO. Used by ``nuggetflow optimize``, the stream agents and the evaluation.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from nuggetflow.logging import get_logger
from nuggetflow.settings import Settings
from optimizer.accounting import Budget, Meter
from optimizer.backends import make_harness
from optimizer.harness import BuiltinHarness, RagHarness
from optimizer.ino import OptimizationResult, build_variant, optimize
from optimizer.lexicon import content_terms, stems
from optimizer.roles import Roles
from optimizer.screen import screen
from optimizer.types import (
    Extraction,
    FeedbackContext,
    NuggetDraft,
    Vocabulary,
    correction_context,
)
from query.convert import nugget_to_dict
from query.embeddings import Embedder
from query.fusion import fuse_minmax
from query.gate import Gate
from query.model import (
    Evidence,
    FactTriple,
    ItemType,
    Kind,
    Nugget,
    Provenance,
    Validity,
    View,
    first_version_id,
)
from query.store import GovernanceFilter, IndexStore
from query.text import query_terms

log = get_logger(__name__)

KINDS = {"SemanticFact": Kind.SEMANTIC_FACT, "EpisodicEvent": Kind.EPISODIC_EVENT,
         "Instruction": Kind.INSTRUCTION, "UserPreference": Kind.USER_PREFERENCE}


@dataclass
class Outcome:
    """The result of processing one feedback event."""

    context: FeedbackContext
    extraction: Extraction
    nugget: Nugget | None
    result: OptimizationResult | None
    accounting: dict[str, Any]

    @property
    def accepted(self) -> bool:
        """True when the event produced a candidate nugget."""
        return self.nugget is not None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready record for files and logs."""
        return {
            "event_id": self.context.event_id, "tenant": self.context.tenant,
            "usefulness": self.extraction.usefulness,
            "can_produce_nugget": self.extraction.can_produce_nugget,
            "reason": self.extraction.reason,
            "nugget": nugget_to_dict(self.nugget) if self.nugget else None,
            "optimization": self.result.to_dict() if self.result else None,
            "accounting": self.accounting,
        }


@dataclass
class RunStats:
    """Totals over many events (CLI summary, evaluation)."""

    events: int = 0
    accepted: int = 0
    not_actionable: int = 0
    malformed: int = 0
    passed: int = 0
    iterations: dict[str, int] = field(default_factory=dict)
    llm_calls: int = 0
    tokens: int = 0
    seconds: float = 0.0

    def add(self, outcome: Outcome) -> None:
        """Count one processed event."""
        self.events += 1
        if outcome.result is None:
            self.not_actionable += 1
            return
        r = outcome.result
        self.accepted += 1
        key = str(r.iterations) if r.passed else "exhausted"
        self.iterations[key] = self.iterations.get(key, 0) + 1
        self.passed += int(r.passed)
        self.llm_calls += int(outcome.accounting["llm_calls"])
        self.tokens += int(outcome.accounting["tokens"])
        self.seconds += float(outcome.accounting["seconds"])

    def summary(self) -> dict[str, Any]:
        """Totals and per-nugget means."""
        n = max(1, self.accepted)
        return {"events": self.events, "accepted": self.accepted,
                "not_actionable": self.not_actionable, "malformed": self.malformed,
                "passed": self.passed, "iterations_histogram": dict(sorted(
                    self.iterations.items())),
                "llm_calls_per_nugget": round(self.llm_calls / n, 2),
                "tokens_per_nugget": round(self.tokens / n, 1),
                "seconds_per_nugget": round(self.seconds / n, 3)}


async def corpus_vocabulary(store: IndexStore, tenant: str, q0: str, as_of: datetime,
                            exclude: str, limit: int = 5, *, embedder: Embedder | None = None,
                            depth: int = 5, candidates: int = 20) -> Vocabulary:
    """Frequent words of the tenant passages that answer q0 best, not already used, and
    the words of q0 those passages use (:class:`optimizer.types.Vocabulary`).

    The passages are the ``depth`` best of BM25 and, with an embedder, the dense
    neighbours of q0, fused as the retriever fuses them (pseudo-relevance feedback).
    """
    flt = GovernanceFilter(tenant, as_of, View.ACTIVE)
    lexical = await store.lexical(query_terms(q0), flt, candidates)
    dense = (await store.dense(embedder.embed_queries([q0])[0], flt, candidates)
             if embedder else [])
    ranked = [f.id for f in fuse_minmax(lexical, dense, 0.5, 0.5, 0.0)[:depth]
              if f.type is not ItemType.NUGGET]
    records = await store.fetch(tenant, ranked)
    have = stems(exclude)
    counts: Counter[str] = Counter()
    used: set[str] = set()
    for rec in records.values():
        text = getattr(rec, "text", "") or getattr(rec, "body", "")
        for w in content_terms(f"{getattr(rec, 'title', '')} {text}"):
            used |= stems(w)
            if w.isalpha() and len(w) > 3 and not stems(w) & have:
                counts[w] += 1
    spoken = frozenset(w for w in content_terms(q0) if stems(w) & used)
    return Vocabulary([w for w, _ in counts.most_common(limit)], spoken=spoken)


class Optimizer:
    """Runs actionability, extraction and INO for feedback events of any tenant."""

    def __init__(self, store: IndexStore, embedder: Embedder, roles: Roles,
                 settings: Settings, harness: RagHarness | None = None,
                 budget: Budget | None = None) -> None:
        """Budget, probe count and iterations come from ``settings`` unless ``budget``
        is given."""
        self.store = store
        self.embedder = embedder
        self.roles = roles
        self.settings = settings
        self.harness = harness or BuiltinHarness(store, embedder, roles.generator, settings)
        self.budget = budget or Budget(settings.budget_calls, settings.budget_tokens)
        self.probe_count = settings.probe_count
        self.max_iterations = settings.ino_max_iterations

    async def process(self, ctx: FeedbackContext, *, variant: str = "E", seed: int = 0,
                      extra_probes: tuple[str, ...] = (),
                      extraction: Extraction | None = None) -> Outcome:
        """Extract and optimize one event; non-actionable events yield no nugget.

        ``extraction`` skips the actionability call when it was made already (the stream's
        actionability step runs before the optimize step).
        """
        meter = Meter(self.budget)
        if extraction is None:
            extraction = self.roles.actionability.extract(ctx, meter)
        if not extraction.can_produce_nugget:
            log.info("feedback not actionable", tenant=ctx.tenant, event=ctx.event_id,
                     label=extraction.usefulness, reason=extraction.reason)
            return Outcome(ctx, extraction, None, None, meter.summary())
        base = NuggetDraft(extraction.title, extraction.body)
        as_of = getattr(self.harness, "as_of", None) or datetime.now(UTC)
        # The anchor writer picks from a wider vocabulary when it can rank it (embedder).
        vocabulary = await corpus_vocabulary(self.store, ctx.tenant, ctx.query, as_of,
                                             base.text(), 30, embedder=self.embedder)
        start = build_variant("D" if variant == "E" else variant, base, extraction, ctx.query,
                              self.roles, vocabulary, meter)
        paraphrases = self.roles.probes.paraphrases(ctx.query, self.probe_count,
                                                    avoid=start.anchors, seed=seed,
                                                    meter=meter)
        probes = [q for q in (ctx.query, *paraphrases, *extra_probes) if q.strip()]
        result = await optimize(
            candidate_id=f"candidate:{ctx.event_id}", start=start, extraction=extraction,
            q0=ctx.query, probes=probes, context=correction_context(ctx), tenant=ctx.tenant,
            harness=self.harness, roles=self.roles, embedder=self.embedder, meter=meter,
            loop=variant == "E", max_iterations=self.max_iterations, seed=seed,
            variant=variant)
        nugget = self.to_nugget(ctx, extraction, result,
                                owner=self.settings.owner_for(ctx.tenant))
        summary = meter.summary()
        log.info("nugget optimized", tenant=ctx.tenant, event=ctx.event_id, variant=variant,
                 passed=result.passed, iterations=result.iterations,
                 llm_calls=summary["llm_calls"], seconds=summary["seconds"])
        return Outcome(ctx, extraction, nugget, result, summary)

    @staticmethod
    def to_nugget(ctx: FeedbackContext, ex: Extraction, result: OptimizationResult,
                  owner: str = "") -> Nugget:
        """The candidate record: content from INO, fact and provenance from the event. Its
        designated owner is ``owner`` (the tenant's, NUGGETFLOW_TENANT_OWNERS), else the
        feedback's agent."""
        when = ctx.timestamp or datetime.now(UTC)
        d = result.draft
        n = Nugget(
            tenant=ctx.tenant, title=d.title, body=d.body, anchors=d.anchors,
            kind=KINDS.get(ex.kind, Kind.SEMANTIC_FACT),
            fact=FactTriple(ex.subject, ex.predicate, ex.object, ex.scope or "global"),
            # When the fact became true is unknown: the feedback time, flagged as inferred.
            validity=Validity(when, None, inferred=True),
            evidence=(Evidence(ctx.event_id, "feedback", when),),
            provenance=Provenance(event_id=ctx.event_id, trigger_query=ctx.query,
                                  corrected_answer=ctx.answer, feedback_text=ctx.comment,
                                  cited_documents=ctx.cited_documents, timestamp=when,
                                  tenant=ctx.tenant, owner=owner or ctx.agent,
                                  rating=ctx.rating, user=ctx.user, agent=ctx.agent),
            optimization=result.to_dict(), change_reason=f"extracted ({result.variant})",
        )
        held = screen(n)
        if held:
            # Shown wherever the record is (history, GetNugget, the review queue); the
            # publish step holds the candidate for a person whatever the policy says.
            n = dataclasses.replace(n, change_reason=f"{n.change_reason}; held for review: "
                                    + "; ".join(held))
        return dataclasses.replace(n, id=first_version_id(n))


async def optimize_event(store: IndexStore, embedder: Embedder, roles: Roles,
                         settings: Settings, gate: Gate, ctx: FeedbackContext,
                         extraction: Extraction) -> Outcome:
    """INO for one event whose extraction was made earlier (the stream's actionability
    step), on a view of the index frozen now: a harness per event, the built-in one or,
    with NUGGETFLOW_HARNESS=external, the team's agent."""
    harness = make_harness(settings, store, embedder, roles.generator, gate=gate)
    try:
        return await Optimizer(store, embedder, roles, settings,
                               harness=harness).process(ctx, extraction=extraction)
    finally:
        await harness.close()
