"""Builders shared by the tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from query.model import (
    Evidence,
    FactTriple,
    Nugget,
    Passage,
    Provenance,
    Publication,
    State,
    Validity,
    first_version_id,
)

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def days(n: float) -> timedelta:
    """A timedelta of n days."""
    return timedelta(days=n)


def make_nugget(tenant: str = "acme", *, subject: str = "portal password reset",
                predicate: str = "allowed_role", obj: str = "Workspace Owner",
                scope: str = "portal v8.2", title: str | None = None, body: str | None = None,
                start: datetime = T0, end: datetime | None = None,
                sources: tuple[str, ...] = ("ev-1",), state: State = State.ACTIVE,
                publication: Publication = Publication.PUBLISHED, version: int = 1,
                lineage: str = "", parent: str = "", **extra: Any) -> Nugget:
    """A nugget with an id (first version unless lineage/parent are given)."""
    n = Nugget(
        tenant=tenant,
        title=title or f"{subject} {predicate} {obj}",
        body=body or f"In {scope}, the {predicate.replace('_', ' ')} for {subject} is {obj}.",
        fact=FactTriple(subject, predicate, obj, scope),
        validity=Validity(start, end),
        evidence=tuple(Evidence(s) for s in sources),
        provenance=Provenance(event_id=sources[0] if sources else "", tenant=tenant),
        state=state, publication=publication, version=version, **extra,
    )
    nid = first_version_id(n) if not parent else f"{parent}-v{version}"
    return n.__class__(**{**n.__dict__, "id": nid, "lineage_id": lineage or nid,
                          "parent_id": parent})


def make_passage(tenant: str = "acme", pid: str = "doc-1#0", title: str = "A page",
                 text: str = "Some text.", start: datetime = T0,
                 end: datetime | None = None) -> Passage:
    """A corpus passage."""
    return Passage(id=pid, tenant=tenant, doc_id=pid.split("#")[0], title=title, text=text,
                   valid_from=start, valid_to=end)
