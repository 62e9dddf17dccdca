"""The ``local`` LLM backend: deterministic algorithms for every role, no network."""

from __future__ import annotations

from optimizer.local.actionability import LocalActionability
from optimizer.local.generator import LocalGenerator, LocalJudge
from optimizer.local.queries import LocalAnchors, LocalProbes
from optimizer.local.reflector import LocalReflector
from optimizer.roles import Roles
from query.embeddings import Embedder


def local_roles(embedder: Embedder | None = None, *, message_check: bool = True) -> Roles:
    """Every role, implemented locally (with an embedder the generator reads semantically,
    the anchors find the corpus's own words for the trigger query's and, with
    ``message_check``, the learned message check takes a second look at accepted
    feedback)."""
    return Roles(actionability=LocalActionability(embedder, message_check=message_check),
                 anchors=LocalAnchors(embedder),
                 probes=LocalProbes(), reflector=LocalReflector(),
                 generator=LocalGenerator(embedder), judge=LocalJudge(embedder))
