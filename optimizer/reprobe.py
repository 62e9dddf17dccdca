"""Re-probing published nuggets when the corpus changes (docs/architecture.md,
"Re-probing on corpus change").

A corpus write (:class:`query.corpus.CorpusChange`: the passages one write stored) can
bury a published nugget: a new or rewritten page now answers its queries first, or the
page it corrects now states its fact. For each change:

1. *Which nuggets could be affected.* A published, non-deprecated head of the tenant is,
   when one of the changed passages is among the ``NUGGETFLOW_RERANK_DEPTH`` best lexical
   candidates (it shares a query word) or dense candidates with a cosine of at least
   ``NUGGETFLOW_REPROBE_MIN_COSINE`` of one of its probe queries (the probe set INO kept
   with it; its trigger query when it has none) on the index as it is now; a removed
   document's passages, on the index as it was just before they were closed (a page
   gone may change what a nugget competes with). Nothing else is re-probed, so a change
   no probe reaches costs two index reads per distinct probe query (four with a
   removal).
2. *Re-probe* those: their probes again, with the harness INO uses, on a view frozen now
   and the nugget overlaid as published. It passes when every probe reaches the
   generator and is cited.
3. A nugget is *redundant* when the new passages of one changed document state every
   sentence of its body (the evaluation's fact-coverage rule), whether it still passes or
   not: a flag proposes to deprecate it. *A nugget that no longer passes* otherwise gets
   INO again, from the published text with the same probes (reflector and factual guard
   as always). A revision that passes is a new version through the tenant's review
   policy (auto: written at once, unless the screen holds it; manual: the published
   version stays and a ``buried`` flag carries the proposal, in the trace, to a
   reviewer). When no revision passes, a ``buried`` flag says so.
4. Every re-probed nugget gets a trace (:mod:`query.traces`) saying what was found and
   done.

:func:`reprobe_change` does steps 1-3 and writes nothing (it runs where INO runs: an
optimizer thread of the worker); :func:`apply_reprobes` writes the versions, flags and
traces through the governed index.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from nuggetflow.errors import ConflictError, ValidationError
from nuggetflow.logging import get_logger
from nuggetflow.settings import Settings
from optimizer.accounting import Budget, Meter
from optimizer.backends import make_harness
from optimizer.claims import NEGATIONS, split_sentences, tokens
from optimizer.fidelity import fact_coverage
from optimizer.guard import check_edit
from optimizer.harness import RagHarness, make_candidate
from optimizer.ino import OptimizationResult, optimize, probe_all
from optimizer.roles import Roles
from optimizer.screen import screen
from optimizer.types import (
    Extraction,
    FeedbackContext,
    NuggetDraft,
    ProbeTrace,
    correction_context,
)
from query.corpus import CorpusChange
from query.embeddings import Embedder, Vector
from query.gate import Gate
from query.index import NuggetIndex
from query.model import Nugget, Passage, Publication, State, View, utcnow
from query.store import GovernanceFilter, IndexStore
from query.text import query_terms
from query.traces import NuggetTrace
from query.usage import FlagKind, ReviewFlag, raise_flags

log = get_logger(__name__)

HEADS_BATCH = 200
REVIEWER = "reprobe"
#: Outcomes of a re-probe (trace ``outcome``).
PASSED, REDUNDANT, REOPTIMIZED, PROPOSED, BURIED, SUPERSEDED = (
    "passed", "redundant", "reoptimized", "proposed", "buried", "superseded")


@dataclass(frozen=True)
class Affected:
    """A published head whose probes a change reaches, and the changed passages that
    reach them."""

    head: Nugget
    probes: tuple[str, ...]
    passages: tuple[str, ...]


@dataclass
class Reprobe:
    """What re-probing one nugget found: the probes as they went (``before``), the
    outcome, and INO's result when it ran."""

    affected: Affected
    before: list[ProbeTrace]
    outcome: str
    redundant_with: str = ""
    result: OptimizationResult | None = None

    @property
    def proposal(self) -> NuggetDraft | None:
        """The revision INO found that passes (None when it did not run or found none)."""
        r = self.result
        return r.draft if r is not None and r.passed and self.outcome == REOPTIMIZED else None


def stored_probes(head: Nugget) -> tuple[str, ...]:
    """The probe queries INO kept with the nugget (its trigger query when none)."""
    raw = (head.optimization or {}).get("probes") or [head.provenance.trigger_query]
    return tuple(dict.fromkeys(q for q in raw if isinstance(q, str) and q.strip()))


async def affected_nuggets(store: IndexStore, embedder: Embedder, change: CorpusChange,
                           depth: int, as_of: datetime, min_cosine: float
                           ) -> list[Affected]:
    """The published, non-deprecated heads of the change's tenant whose probes reach a
    changed passage (module docstring, step 1), in head id order. A removed document's
    passages are looked for as the index was just before they were closed."""
    written = set(change.written_ids)
    flt = GovernanceFilter(change.tenant, as_of, View.ACTIVE)
    removed = set(change.removed_ids)
    before: GovernanceFilter | None = None
    if removed:
        closed = await store.fetch(change.tenant, sorted(removed))
        ends = [p.valid_to for p in closed.values()
                if isinstance(p, Passage) and p.valid_to is not None]
        if ends:
            before = GovernanceFilter(change.tenant, min(ends) - timedelta(microseconds=1),
                                      View.ACTIVE)
    reached: dict[str, frozenset[str]] = {}
    out: list[Affected] = []
    after = ""
    while True:
        heads = await store.heads_page(change.tenant, [Publication.PUBLISHED], HEADS_BATCH,
                                       after)
        if not heads:
            break
        after = heads[-1].id
        live = [(h, stored_probes(h)) for h in heads if h.state is not State.DEPRECATED]
        fresh = list(dict.fromkeys(q for _, probes in live for q in probes
                                   if q not in reached))
        if fresh:
            vectors = embedder.embed_queries(fresh)
        for i, q in enumerate(fresh):
            ids = await _reached(store, q, vectors[i], flt, depth, min_cosine) & written
            if before is not None:
                ids |= await _reached(store, q, vectors[i], before, depth, min_cosine) & removed
            reached[q] = frozenset(ids)
        for head, probes in live:
            hit = set().union(*(reached[q] for q in probes)) if probes else set()
            if hit:
                out.append(Affected(head, probes, tuple(sorted(hit))))
        if len(heads) < HEADS_BATCH:
            break
    return out


async def _reached(store: IndexStore, query: str, vector: Vector, flt: GovernanceFilter,
                   depth: int, min_cosine: float) -> set[str]:
    """The ids among a probe query's best lexical candidates and close dense ones."""
    ids = {s.id for s in await store.lexical(query_terms(query), flt, depth)}
    return ids | {s.id for s in await store.dense(vector, flt, depth) if s.score >= min_cosine}


def _states(sentence: str, text: str) -> bool:
    """``text`` states ``sentence``: the fact-coverage rule, and a sentence with a negation
    is stated only by a sentence of ``text`` that covers it and is negated too (a page
    saying "team leads can reset passwords" shares the words of "team leads cannot reset
    passwords", not its fact)."""
    if not _negated(sentence):
        return fact_coverage(sentence, text).covered
    return any(_negated(part) and fact_coverage(sentence, part).covered
               for part in split_sentences(text))


def _negated(text: str) -> bool:
    return any(t in NEGATIONS or t.endswith("n't") for t in tokens(text))


def restating_document(head: Nugget, passages: Sequence[Passage]) -> str:
    """The id of a document whose given passages state every sentence of the nugget's
    body ("" when none does)."""
    sentences = [s for s in split_sentences(head.body) if s.strip()] or [head.body]
    texts: dict[str, list[str]] = {}
    for p in passages:
        texts.setdefault(p.doc_id, []).append(p.text)
    for doc_id, parts in texts.items():
        text = "\n".join(parts)
        if all(_states(s, text) for s in sentences):
            return doc_id
    return ""


def context_of(head: Nugget) -> FeedbackContext:
    """The feedback the nugget was made from, as INO reads it."""
    p = head.provenance
    return FeedbackContext(p.event_id, head.tenant, p.trigger_query, p.corrected_answer,
                           p.feedback_text, p.rating, tuple(p.cited_documents), p.timestamp,
                           p.user, p.agent)


def _extraction(head: Nugget, ctx: FeedbackContext, roles: Roles, meter: Meter) -> Extraction:
    """The extraction INO revises against: the actionability role's, or (when it no
    longer reads the feedback as actionable) the published nugget's own fact."""
    ex = roles.actionability.extract(ctx, meter)
    if ex.can_produce_nugget:
        return ex
    f = head.fact
    return Extraction("actionable_correction", True, "published nugget", head.title,
                      head.body, f.subject, f.predicate, f.object, f.scope or "global")


async def reprobe_one(a: Affected, changed: Sequence[Passage], harness: RagHarness,
                      embedder: Embedder, roles: Roles, settings: Settings) -> Reprobe:
    """Steps 2 and 3 of the module docstring for one nugget (writes nothing)."""
    head = a.head
    meter = Meter(Budget(settings.budget_calls, settings.budget_tokens))
    start = NuggetDraft(head.title, head.body, tuple(head.anchors))
    before = await probe_all(harness, head.tenant, make_candidate(embedder, head.id, start),
                             a.probes, meter)
    doc = restating_document(head, changed)
    if doc:
        return Reprobe(a, before, REDUNDANT, redundant_with=doc)
    if all(t.passed for t in before):
        return Reprobe(a, before, PASSED)
    ctx = context_of(head)
    try:
        result = await optimize(
            candidate_id=head.id, start=start, extraction=_extraction(head, ctx, roles, meter),
            q0=ctx.query or a.probes[0], probes=list(a.probes),
            context=correction_context(ctx), tenant=head.tenant, harness=harness,
            roles=roles, embedder=embedder, meter=meter,
            max_iterations=settings.ino_max_iterations)
    except ValidationError as exc:  # e.g. a reviewer's anchor now repeats a probe
        log.warning("re-optimization not possible", tenant=head.tenant, id=head.id,
                    error=str(exc))
        return Reprobe(a, before, BURIED)
    revised = result.passed and result.draft != start
    return Reprobe(a, before, REOPTIMIZED if revised else BURIED, result=result)


async def reprobe_change(store: IndexStore, embedder: Embedder, roles: Roles,
                         settings: Settings, gate: Gate, change: CorpusChange,
                         now: datetime | None = None) -> list[Reprobe]:
    """Steps 1-3 for one corpus change (module docstring); writes nothing."""
    as_of = max(now or utcnow(), change.at)
    affected = await affected_nuggets(store, embedder, change, settings.rerank_depth, as_of,
                                      settings.reprobe_min_cosine)
    if not affected:
        log.info("corpus change reaches no nugget's probes", tenant=change.tenant,
                 change=change.id, passages=len(change.passage_ids))
        return []
    # What a changed page now states (a removed page states nothing any more).
    fetched = await store.fetch(change.tenant, change.written_ids)
    changed = [p for p in fetched.values() if isinstance(p, Passage)]
    harness = make_harness(settings, store, embedder, roles.generator, gate=gate, as_of=as_of)
    try:
        out = [await reprobe_one(a, changed, harness, embedder, roles, settings)
               for a in affected]
    finally:
        await harness.close()
    log.info("corpus change re-probed", tenant=change.tenant, change=change.id,
             reprobed=len(out), outcomes=sorted(r.outcome for r in out))
    return out


# --- writing what the re-probe found --------------------------------------------------


def _probes_detail(traces: Sequence[ProbeTrace]) -> list[dict[str, Any]]:
    return [{"query": t.query, "passed": t.passed, "retrieved": t.retrieved,
             "cited": t.cited, "rank": t.rank} for t in traces]


def _failed(r: Reprobe) -> str:
    failed = sum(not t.passed for t in r.before)
    return f"{failed} of {len(r.before)} probes no longer retrieve and cite it"


async def apply_reprobes(index: NuggetIndex, settings: Settings, change: CorpusChange,
                         reprobes: Sequence[Reprobe], now: datetime | None = None
                         ) -> list[NuggetTrace]:
    """Write what :func:`reprobe_change` found (module docstring, steps 3 and 4): the
    re-optimized versions (auto policy), the flags, and one trace per nugget. Returns the
    traces. Idempotent: a version is written with the request id ``reprobe:<change id>``
    and traces and flags are keyed by content, so a change handled twice changes nothing
    the second time."""
    now = now or utcnow()
    tenant = change.tenant
    docs = ", ".join(f"{d.doc_id} v{d.version}" for d in change.documents[:5])
    if len(change.documents) > 5:
        docs += f" and {len(change.documents) - 5} more"
    traces: list[NuggetTrace] = []
    flags: list[ReviewFlag] = []
    for r in reprobes:
        head = r.affected.head
        lineage = head.lineage_id or head.id
        outcome, version = r.outcome, head.id
        detail: dict[str, Any] = {"change": change.id, "passages": list(r.affected.passages),
                                  "probes": _probes_detail(r.before)}
        if r.result is not None:
            detail["optimization"] = r.result.to_dict()
        if r.outcome == REDUNDANT:
            detail["document"] = r.redundant_with
            kept = sum(t.passed for t in r.before)
            flags.append(ReviewFlag(tenant, lineage, head.id, FlagKind.REDUNDANT,
                                    f"document {r.redundant_with} now states what it says "
                                    f"(changed with {docs}; the nugget still passes {kept} "
                                    f"of {len(r.before)} probes): deprecate it as redundant?",
                                    now, title=head.title))
        elif r.outcome == REOPTIMIZED and r.proposal is not None:
            p = r.proposal
            detail["proposal"] = {"title": p.title, "body": p.body, "anchors": list(p.anchors)}
            outcome, version, flag = await _publish_revision(index, settings, change, r, now,
                                                             docs)
            if flag is not None:
                flags.append(flag)
        elif r.outcome == BURIED:
            flags.append(ReviewFlag(tenant, lineage, head.id, FlagKind.BURIED,
                                    f"{_failed(r)} since {docs} changed, and INO found no "
                                    "revision that passes", now, title=head.title))
        if version != head.id:
            detail["new_version"] = version
        traces.append(NuggetTrace(tenant, lineage, head.id, now, "reprobe", outcome,
                                  change.id, detail))
    if flags:
        await raise_flags(index.store, tenant, flags)
    if traces:
        await index.store.add_traces(traces)
    return traces


async def _publish_revision(index: NuggetIndex, settings: Settings, change: CorpusChange,
                            r: Reprobe, now: datetime, docs: str
                            ) -> tuple[str, str, ReviewFlag | None]:
    """A passing revision through the review policy: (trace outcome, the version the
    trace is about, a flag for a reviewer or None)."""
    head, p = r.affected.head, r.proposal
    assert p is not None
    tenant, lineage = head.tenant, head.lineage_id or head.id
    reason = f"re-optimized: {_failed(r)} since {docs} changed"
    held = screen(dataclasses.replace(head, title=p.title, body=p.body, anchors=p.anchors))
    if settings.policy_for(tenant) == "auto" and not held:
        try:
            out = await index.checked_edit(
                tenant, head.id, expected_version_id=head.id,
                changes={"title": p.title, "body": p.body, "anchors": p.anchors},
                guard=check_edit, reviewer=REVIEWER, reason=reason,
                request_id=f"{REVIEWER}:{change.id}")
        except ConflictError:  # a reviewer made a newer version meanwhile: theirs stands
            return SUPERSEDED, head.id, None
        if out.saved:
            return REOPTIMIZED, out.nugget.id, None
        if not out.violations:  # nothing to change against the head any more
            return SUPERSEDED, head.id, None
        why = f"the factual guard objects: {'; '.join(out.violations)}"
        log.warning("re-optimized version not written", tenant=tenant, id=head.id, why=why)
    elif held:
        why = f"held by the screen: {'; '.join(held)}"
    else:
        why = "the review policy is manual"
    return PROPOSED, head.id, ReviewFlag(
        tenant, lineage, head.id, FlagKind.BURIED,
        f"{_failed(r)} since {docs} changed; INO proposes a revision that passes "
        f"(its trace has it; {why})", now, title=head.title)
