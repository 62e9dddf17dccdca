"""NuggetIndex governance rules (docs/architecture.md, "Governance"), as pure functions
over records.

Nothing here does I/O. :func:`resolve_publication` decides what happens when a nugget is
published next to the published heads that share its key, and returns the new versions to
write. Governance never deletes: it ends, deprecates, contests or unpublishes by writing
new versions, so history stays readable and every step can be reverted.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from nuggetflow.errors import ConfigError, InvalidTransitionError
from query.model import (
    Nugget,
    Publication,
    Rank,
    State,
    Validity,
    amend,
    merge_evidence,
    next_version,
    normalize_key_part,
)
from query.text import jaccard

DEDUP_JACCARD = 0.85
DEPRECATE_SOURCES = 2  # a newer candidate with this many sources deprecates the old value
RESOLVE_SOURCES = 3  # a contested value needs this many (and strictly most) to win


@dataclass(frozen=True)
class PredicateSchema:
    """Per-predicate cardinality. Predicates not listed as multi-valued are functional."""

    multi_valued: frozenset[str] = frozenset()

    def is_functional(self, predicate: str) -> bool:
        """A functional predicate has one true value per key at any time."""
        return normalize_key_part(predicate) not in self.multi_valued

    @classmethod
    def from_mapping(cls, mapping: dict[str, str]) -> PredicateSchema:
        """Build from ``{predicate: "functional" | "multi"}``."""
        multi = set()
        for pred, card in mapping.items():
            if card not in ("functional", "multi"):
                raise ConfigError(f"cardinality of {pred!r} must be functional or multi, "
                                  f"got {card!r}", field="predicate_schema")
            if card == "multi":
                multi.add(normalize_key_part(pred))
        return cls(frozenset(multi))

    @classmethod
    def from_file(cls, path: str | Path) -> PredicateSchema:
        """Load a JSON schema file; an empty path gives the all-functional default."""
        if not path:
            return cls()
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise ConfigError(f"cannot read {path}: {exc}", field="predicate_schema") from exc
        if not isinstance(data, dict):
            raise ConfigError("must be a JSON object", field="predicate_schema")
        return cls.from_mapping({str(k): str(v) for k, v in data.items()})


@dataclass
class Decision:
    """The outcome of publishing one nugget: new versions to write, in order."""

    outcome: str
    writes: list[Nugget] = field(default_factory=list)

    def latest(self, lineage_id: str) -> Nugget | None:
        """The last version written for a lineage, if any."""
        for n in reversed(self.writes):
            if (n.lineage_id or n.id) == lineage_id:
                return n
        return None


def is_duplicate(a: Nugget, b: Nugget) -> bool:
    """Same key and near-equal object values (character 3-gram Jaccard >= 0.85)."""
    return a.key == b.key and jaccard(a.fact.object, b.fact.object) >= DEDUP_JACCARD


def _rank_for(n: Nugget, state: State) -> Rank:
    if state is State.DEPRECATED:
        return Rank.DEPRECATED
    return Rank.NORMAL if n.rank is Rank.DEPRECATED else n.rank


def _with_state(n: Nugget, state: State, reason: str, now: datetime) -> Nugget:
    return next_version(n, reason, now, state=state, rank=_rank_for(n, state))


def _lineage(n: Nugget) -> str:
    return n.lineage_id or n.id


def resolve_publication(candidate: Nugget, heads: Sequence[Nugget], schema: PredicateSchema,
                        now: datetime) -> Decision:
    """Publish ``candidate`` against the current heads of other lineages with its key.

    ``candidate`` is the version being published (publication already PUBLISHED).
    ``heads`` are the head versions of other lineages with the same key; only published,
    non-deprecated ones take part. Rules, in order:

    1. Dedup: a head whose object is near-equal and whose validity overlaps absorbs the
       candidate's evidence; the candidate is kept, unpublished, with ``merged_into`` set.
    2. Multi-valued predicate: concurrent values are all Active.
    3. Functional predicate, different value:
       - disjoint validity: nothing to do (both true, at different times);
       - succession: an open-ended older value ends where the candidate starts;
       - overlap with one Active value: the candidate deprecates it with >= 2 sources (and
         no fewer than it has); an old value with strictly more sources deprecates the
         candidate; otherwise both become Contested;
       - overlap with a dispute (Contested values): a value with >= 3 sources and strictly
         more than every other wins (Active); the rest are Deprecated; otherwise all are
         Contested.
    """
    live = [h for h in heads if h.publication is Publication.PUBLISHED
            and h.state is not State.DEPRECATED and _lineage(h) != _lineage(candidate)]
    decision = Decision("published")

    for head in live:
        if is_duplicate(candidate, head) and head.validity.overlaps(candidate.validity):
            merged = next_version(head, f"merged evidence from {candidate.id}", now,
                                  evidence=merge_evidence(head.evidence, candidate.evidence))
            # The candidate itself is recorded, unpublished, pointing at the survivor.
            absorbed = amend(candidate, publication=Publication.UNPUBLISHED,
                             merged_into=_lineage(head),
                             change_reason=f"duplicate of {_lineage(head)}")
            decision = Decision("merged", [absorbed, merged])
            if merged.state is State.CONTESTED:
                others = [h for h in live if _lineage(h) != _lineage(head)]
                _resolve_dispute(merged, others, decision, now)
            return decision

    current = candidate
    if not schema.is_functional(candidate.fact.predicate):
        decision.writes.append(current)
        return decision

    overlapping: list[Nugget] = []
    for head in live:
        if not head.validity.overlaps(current.validity):
            continue
        if head.validity.end is None and head.validity.start < current.validity.start:
            ended = Validity(head.validity.start, current.validity.start, head.validity.inferred)
            decision.writes.append(next_version(head, f"succeeded by {current.id}", now,
                                                validity=ended))
            decision.outcome = "succession"
        elif current.validity.end is None and current.validity.start < head.validity.start:
            current = _end_at(current, head.validity.start)
            decision.outcome = "succession"
        else:
            overlapping.append(head)

    if not overlapping:
        decision.writes.append(current)
        return decision

    if len(overlapping) == 1 and overlapping[0].state is State.ACTIVE:
        old = overlapping[0]
        n_new, n_old = len(current.sources), len(old.sources)
        if n_new >= DEPRECATE_SOURCES and n_new >= n_old:
            decision.writes.append(_with_state(old, State.DEPRECATED,
                                               f"deprecated by {current.id}", now))
            decision.writes.append(current)
            decision.outcome = "deprecated_old"
        elif n_old > n_new:
            # The candidate is not written yet: its own version takes the state (a new
            # version on top of it would name a parent that was never stored).
            decision.writes.append(amend(current, state=State.DEPRECATED,
                                         rank=_rank_for(current, State.DEPRECATED)))
            decision.outcome = "deprecated_candidate"
        else:
            contesting = amend(current, state=State.CONTESTED,
                               rank=_rank_for(current, State.CONTESTED))
            decision.writes.append(_with_state(old, State.CONTESTED,
                                               f"contested by {contesting.id}", now))
            decision.writes.append(contesting)
            decision.outcome = "contested"
        return decision

    decision.writes.append(current)
    _resolve_dispute(current, overlapping, decision, now)
    return decision


def _end_at(n: Nugget, end: datetime) -> Nugget:
    """``n`` (not yet written) with its validity ending where a newer value starts."""
    return amend(n, validity=Validity(n.validity.start, end, n.validity.inferred))


def _resolve_dispute(member: Nugget, others: Sequence[Nugget], decision: Decision,
                     now: datetime) -> None:
    """Apply the >= 3 sources rule to ``member`` and the overlapping values in ``others``.

    ``member`` is already the last entry of ``decision.writes``; its state is set in place
    there, while the other values get new versions.
    """
    group = [member] + [o for o in others if o.validity.overlaps(member.validity)
                        and o.state is not State.DEPRECATED]
    counts = sorted((len(g.sources) for g in group), reverse=True)
    winner = max(group, key=lambda g: len(g.sources))
    resolved = counts[0] >= RESOLVE_SOURCES and (len(counts) == 1 or counts[0] > counts[1])
    for g in group:
        if resolved:
            target = State.ACTIVE if g is winner else State.DEPRECATED
            reason = "won dispute" if g is winner else f"lost dispute to {_lineage(winner)}"
        else:
            target, reason = State.CONTESTED, "disputed value"
        if g is member:
            decision.writes[-1] = amend(
                member, state=target, rank=_rank_for(member, target))
        elif g.state is not target:
            decision.writes.append(_with_state(g, target, reason, now))
    decision.outcome = "resolved" if resolved else "contested"


# --- publication (review) transitions ------------------------------------------------

_ALLOWED: dict[str, dict[Publication, Publication]] = {
    "submit": {Publication.DRAFT: Publication.PENDING_REVIEW},
    "approve": {Publication.DRAFT: Publication.PUBLISHED,
                Publication.PENDING_REVIEW: Publication.PUBLISHED,
                Publication.UNPUBLISHED: Publication.PUBLISHED},
    "reject": {Publication.DRAFT: Publication.REJECTED,
               Publication.PENDING_REVIEW: Publication.REJECTED},
    "unpublish": {Publication.PUBLISHED: Publication.UNPUBLISHED},
}


def transition(current: Publication, action: str) -> Publication:
    """The publication state after ``action``; InvalidTransitionError if not allowed."""
    table = _ALLOWED.get(action)
    if table is None:
        raise InvalidTransitionError(f"unknown review action {action!r}", field="action")
    if current not in table:
        allowed = ", ".join(p.name for p in table)
        raise InvalidTransitionError(
            f"cannot {action} a {current.name} nugget (allowed from: {allowed})", field="action")
    return table[current]


# --- the neighbourhood of a nugget (the review console) -----------------------------

DUPLICATES = "duplicates"
SUPERSEDES = "supersedes"
SUPERSEDED_BY = "superseded_by"
CONTESTS = "contests"
SAME_KEY = "same_key"


@dataclass(frozen=True)
class Relation:
    """How another lineage with the same governance key relates to a nugget."""

    kind: str  # DUPLICATES, SUPERSEDES, SUPERSEDED_BY, CONTESTS or SAME_KEY
    other: Nugget  # the other lineage's head
    note: str


def neighbourhood(n: Nugget, others: Sequence[Nugget], schema: PredicateSchema,
                  now: datetime) -> tuple[list[Relation], str]:
    """How each head in ``others`` (other lineages with ``n``'s key) relates to ``n``, and
    for an ``n`` that may still be approved, the outcome approving it now would have.

    For such a nugget the relations are what :func:`resolve_publication` would do on
    approval (merge into a duplicate, end or deprecate a value, contest one); for a
    published one, what the records say (a merge, an ended or deprecated value, a
    dispute); other same-key heads are SAME_KEY.
    """
    others = [o for o in others if _lineage(o) != _lineage(n)]
    outcome = ""
    predicted: dict[str, Nugget] = {}
    own: Nugget | None = None
    if n.publication is not Publication.PUBLISHED and n.publication in _ALLOWED["approve"]:
        decision = resolve_publication(dataclasses.replace(n, publication=Publication.PUBLISHED),
                                       others, schema, now)
        outcome = decision.outcome
        for w in decision.writes:
            if _lineage(w) == _lineage(n):
                own = w
            else:
                predicted[_lineage(w)] = w
    out: list[Relation] = []
    for o in others:
        lo = _lineage(o)
        if o.merged_into == _lineage(n):
            out.append(Relation(DUPLICATES, o, "merged into this nugget"))
        elif n.merged_into == lo or (own is not None and own.merged_into == lo):
            verb = "merged" if n.merged_into == lo else "on approval, merged"
            out.append(Relation(DUPLICATES, o, f"{verb} into this neighbour (same value)"))
        elif lo in predicted:
            after = predicted[lo]
            if after.state is State.DEPRECATED:
                out.append(Relation(SUPERSEDES, o, "on approval, deprecates this neighbour"))
            elif after.state is State.CONTESTED:
                out.append(Relation(CONTESTS, o, "on approval, both values are contested"))
            elif after.validity.end != o.validity.end:
                out.append(Relation(SUPERSEDES, o, "on approval, ends this neighbour's "
                                    "validity where this one starts"))
            else:
                out.append(Relation(SAME_KEY, o, "same key"))
        elif own is not None and own.state is State.DEPRECATED:
            out.append(Relation(SUPERSEDED_BY, o, "on approval, outweighed by this "
                                "neighbour (more sources)"))
        elif is_duplicate(n, o):
            out.append(Relation(DUPLICATES, o, "same value"))
        else:
            out.append(_recorded(n, o, schema))
    return out, outcome


def _recorded(n: Nugget, o: Nugget, schema: PredicateSchema) -> Relation:
    """The relation of two same-key heads as their records state it."""
    if not schema.is_functional(n.fact.predicate):
        return Relation(SAME_KEY, o, "multi-valued predicate: both values hold")
    if o.validity.end is not None and o.validity.end <= n.validity.start:
        return Relation(SUPERSEDES, o, "its validity ends where this one's starts")
    if n.validity.end is not None and n.validity.end <= o.validity.start:
        return Relation(SUPERSEDED_BY, o, "this one's validity ends where its starts")
    if not n.validity.overlaps(o.validity):
        return Relation(SAME_KEY, o, "different times")
    if o.state is State.DEPRECATED and n.state is not State.DEPRECATED:
        return Relation(SUPERSEDES, o, "deprecated in favour of this value")
    if n.state is State.DEPRECATED and o.state is not State.DEPRECATED:
        return Relation(SUPERSEDED_BY, o, "this value was deprecated in its favour")
    if n.state is State.CONTESTED and o.state is State.CONTESTED:
        return Relation(CONTESTS, o, "both values are contested")
    return Relation(SAME_KEY, o, f"same key ({o.publication.name.lower()}, "
                    f"{o.state.name.lower()})")
