"""The governed record model (docs/architecture.md, "Record model") as plain, typed,
immutable dataclasses.

Wire conversion lives in :mod:`query.convert`; the rules live in :mod:`query.governance`.
Times are timezone-aware UTC datetimes; an open validity end is ``None``.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from nuggetflow.errors import ValidationError

MAX_BODY_SENTENCES = 3


class Kind(enum.IntEnum):
    """What a nugget states (values match nuggetflow.v1.NuggetKind)."""

    SEMANTIC_FACT = 1
    EPISODIC_EVENT = 2
    INSTRUCTION = 3
    USER_PREFERENCE = 4


class State(enum.IntEnum):
    """Lifecycle state (values match nuggetflow.v1.NuggetState)."""

    ACTIVE = 1
    DEPRECATED = 2
    CONTESTED = 3


class Rank(enum.IntEnum):
    """Ranking preference (values match nuggetflow.v1.NuggetRank)."""

    PREFERRED = 1
    NORMAL = 2
    DEPRECATED = 3


class Publication(enum.IntEnum):
    """Review state (values match nuggetflow.v1.Publication). Only PUBLISHED is served."""

    DRAFT = 1
    PENDING_REVIEW = 2
    PUBLISHED = 3
    REJECTED = 4
    UNPUBLISHED = 5


class View(enum.IntEnum):
    """Which lifecycle states a query may see."""

    ACTIVE = 1
    ACTIVE_PLUS_CONTESTED = 2


class ItemType(enum.IntEnum):
    """A retrievable item is a nugget or a passage of a corpus document."""

    NUGGET = 1
    DOCUMENT = 2


def utcnow() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


def ensure_utc(value: datetime, field_name: str) -> datetime:
    """Reject naive datetimes (their meaning is ambiguous); convert others to UTC."""
    if value.tzinfo is None:
        raise ValidationError("datetime must be timezone-aware", field=field_name)
    return value.astimezone(UTC)


#: What a review may do to the head of a lineage (the index, the CLIs, the stream and
#: the console all take this list).
REVIEW_ACTIONS = ("approve", "reject", "unpublish", "revert")
#: What a review record may ask: a review action, or an edit of title, body or anchors.
RECORD_ACTIONS = (*REVIEW_ACTIONS, "edit")

@dataclass(frozen=True)
class FactTriple:
    """(subject, predicate, object) with a scope; the key is (norm subject, predicate, scope)."""

    subject: str
    predicate: str
    object: str
    scope: str = "global"

    @property
    def key(self) -> tuple[str, str, str]:
        """The governance key: normalized subject, predicate and scope."""
        return (normalize_key_part(self.subject), normalize_key_part(self.predicate),
                normalize_key_part(self.scope or "global"))


def normalize_key_part(text: str) -> str:
    """Lowercase, collapse whitespace, strip surrounding punctuation."""
    return " ".join(text.lower().split()).strip(" .,;:!?\"'")


@dataclass(frozen=True)
class Validity:
    """When the fact is true: [start, end); ``end=None`` is open-ended."""

    start: datetime
    end: datetime | None = None
    inferred: bool = False

    def __post_init__(self) -> None:
        ensure_utc(self.start, "validity.start")
        if self.end is not None:
            ensure_utc(self.end, "validity.end")
            if self.end <= self.start:
                raise ValidationError(
                    f"t_end {self.end.isoformat()} <= t_start {self.start.isoformat()}",
                    field="validity.end",
                )

    def contains(self, t: datetime) -> bool:
        """True when t is in [start, end)."""
        return self.start <= t and (self.end is None or t < self.end)

    def overlaps(self, other: Validity) -> bool:
        """True when the two half-open intervals share an instant."""
        a_end = self.end or datetime.max.replace(tzinfo=UTC)
        b_end = other.end or datetime.max.replace(tzinfo=UTC)
        return self.start < b_end and other.start < a_end


@dataclass(frozen=True)
class Provenance:
    """Where a nugget came from: the feedback event and its context."""

    event_id: str = ""
    trigger_query: str = ""
    corrected_answer: str = ""
    feedback_text: str = ""
    cited_documents: tuple[str, ...] = ()
    timestamp: datetime | None = None
    tenant: str = ""
    owner: str = ""  # the designated owner who reviews it (tenant setting, else the agent)
    rating: str = ""  # the feedback's rating ("up", "down", "")
    user: str = ""  # who gave the feedback
    agent: str = ""  # the feedback's agent ("chat", "ticket", ...)


@dataclass(frozen=True)
class Evidence:
    """One independent source supporting the fact (distinct ``source_id`` = independent)."""

    source_id: str
    kind: str = "feedback"
    observed_at: datetime | None = None


@dataclass(frozen=True)
class Nugget:
    """One version of a governed nugget. Versions are immutable; edits make new versions."""

    tenant: str
    title: str
    body: str
    fact: FactTriple
    validity: Validity
    anchors: tuple[str, ...] = ()
    kind: Kind = Kind.SEMANTIC_FACT
    state: State = State.ACTIVE
    rank: Rank = Rank.NORMAL
    confidence: float = 1.0
    publication: Publication = Publication.DRAFT
    provenance: Provenance = field(default_factory=Provenance)
    evidence: tuple[Evidence, ...] = ()
    optimization: dict[str, Any] | None = None
    id: str = ""
    parent_id: str = ""
    lineage_id: str = ""
    version: int = 1
    created_at: datetime | None = None
    change_reason: str = ""
    merged_into: str = ""
    request_id: str = ""  # the review/edit request that produced this version (idempotency)
    reviewer: str = ""  # who produced this version by a review or an edit ("" otherwise)

    @property
    def key(self) -> tuple[str, str, str]:
        """Governance key (normalized subject, predicate, scope)."""
        return self.fact.key

    @property
    def sources(self) -> frozenset[str]:
        """Independent sources behind the fact."""
        return frozenset(e.source_id for e in self.evidence)

    @property
    def text(self) -> str:
        """The text indexed for retrieval (title, body, anchors)."""
        return "\n".join([self.title, self.body, *self.anchors])

    @property
    def embedding_text(self) -> str:
        """The text the dense vector is made from (see :func:`embedding_text`)."""
        return embedding_text(self.title, self.body, self.anchors)


def embedding_text(title: str, body: str, anchors: Sequence[str]) -> str:
    """What a nugget's vector embeds: title and body.

    Anchors are matched lexically (their own BM25 column) but left out of the vector:
    averaging a handful of different queries into the statement's embedding pulls it
    away from the queries the statement answers (measured with ``nuggetflow eval``).
    """
    del anchors
    return f"{title}\n{body}"


@dataclass(frozen=True)
class Passage:
    """A chunk of one version of a tenant's corpus document, valid while that version is.

    Ids are unique per tenant (stores key them by tenant and id): ``<doc id>#<n>`` for the
    first version of a document, ``<doc id>#<n>@v<version>`` for later ones (see
    :func:`passage_id`). ``digest`` identifies the version's content (title, url and
    passage texts: :func:`document_digest`), so re-ingesting an unchanged document is a
    no-op and a changed one becomes a new version.
    """

    id: str
    tenant: str
    doc_id: str
    title: str
    text: str
    valid_from: datetime
    valid_to: datetime | None = None
    url: str = ""
    version: int = 1
    digest: str = ""


def passage_id(doc_id: str, n: int, version: int = 1) -> str:
    """Id of passage ``n`` of a document version: ``<doc id>#<n>``, then ``...@v<version>``.

    Distinct (doc id, n, version) triples give distinct ids: a first-version id ends in
    ``#<digits>``, a later one in ``@v<digits>``, and the doc id is what precedes the last
    ``#`` of the rest.
    """
    return f"{doc_id}#{n}" if version == 1 else f"{doc_id}#{n}@v{version}"


def document_digest(title: str, url: str, texts: Sequence[str]) -> str:
    """Content id of a document version: its title, url and passage texts, in order."""
    return content_hash("document", title, url, list(texts))


def plain_nugget(n: Nugget) -> Nugget:
    """The nugget with its text fields as plain text (markup removed, entities decoded):
    the index stores text, never HTML, whatever produced the candidate or the edit."""
    from query.text import plain_text

    fact = dataclasses.replace(n.fact, subject=plain_text(n.fact.subject),
                               object=plain_text(n.fact.object))
    return dataclasses.replace(n, title=plain_text(n.title), body=plain_text(n.body),
                               anchors=tuple(a for a in (plain_text(x) for x in n.anchors)
                                             if a), fact=fact)


def validate_nugget(n: Nugget) -> None:
    """Raise ValidationError naming the first malformed field of a nugget record."""
    if not n.tenant.strip():
        raise ValidationError("tenant is empty", field="tenant")
    if not n.title.strip():
        raise ValidationError("title is empty", field="title")
    if not n.body.strip():
        raise ValidationError("body is empty", field="body")
    if not n.fact.subject.strip():
        raise ValidationError("fact subject is empty", field="fact.subject")
    if not n.fact.predicate.strip():
        raise ValidationError("fact predicate is empty", field="fact.predicate")
    if not n.fact.object.strip():
        raise ValidationError("fact object is empty", field="fact.object")
    if not 0.0 <= n.confidence <= 1.0:
        raise ValidationError(f"confidence {n.confidence} not in [0, 1]", field="confidence")
    if any(not a.strip() for a in n.anchors):
        raise ValidationError("an anchor is empty", field="anchors")


def content_hash(*parts: Any) -> str:
    """A stable 16-hex-digit id from JSON-serializable parts."""
    raw = json.dumps(parts, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def first_version_id(n: Nugget) -> str:
    """Id of a new lineage: hash of tenant, key, content and source event (idempotent)."""
    return "n-" + content_hash(n.tenant, n.key, n.title, n.body, n.fact.object,
                               n.provenance.event_id, n.validity.start.isoformat())


def next_version(parent: Nugget, reason: str, now: datetime | None = None,
                 **changes: Any) -> Nugget:
    """A new version of ``parent`` with ``changes``; id derived from parent and content.

    The parent's ``request_id`` and ``reviewer`` are not inherited (they name the request
    and the person that produced the parent); pass them among the changes to set them.
    """
    now = now or utcnow()
    child = dataclasses.replace(parent, **{"request_id": "", "reviewer": "", **changes})
    child = dataclasses.replace(
        child, parent_id=parent.id, lineage_id=parent.lineage_id or parent.id,
        version=parent.version + 1, created_at=now, change_reason=reason,
    )
    return dataclasses.replace(child, id=version_id(child))


def amend(version: Nugget, **changes: Any) -> Nugget:
    """The same (not yet written) version with ``changes``: same parent and number, an id
    recomputed from the new content."""
    changed = dataclasses.replace(version, **changes)
    return dataclasses.replace(changed, id=version_id(changed))


def version_id(n: Nugget) -> str:
    """Id of a later version: hash of its parent, number and content."""
    return "n-" + content_hash(n.parent_id, n.version, n.change_reason, n.title, n.body,
                               n.anchors, n.state, n.publication, n.validity.start.isoformat(),
                               n.validity.end.isoformat() if n.validity.end else None,
                               sorted(n.sources), n.merged_into)


def merge_evidence(a: Sequence[Evidence], b: Sequence[Evidence]) -> tuple[Evidence, ...]:
    """Union of evidence by source id, keeping the first occurrence."""
    seen: dict[str, Evidence] = {}
    for e in (*a, *b):
        seen.setdefault(e.source_id, e)
    return tuple(seen.values())
