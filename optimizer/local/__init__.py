"""The ``local`` LLM backend: deterministic algorithms for every role, no network."""

from __future__ import annotations

from optimizer.local.actionability import LocalActionability
from optimizer.local.generator import LocalGenerator, LocalJudge
from optimizer.local.queries import LocalAnchors, LocalProbes
from optimizer.local.reflector import LocalReflector
from optimizer.roles import Roles


def local_roles() -> Roles:
    """Every role, implemented locally."""
    return Roles(actionability=LocalActionability(), anchors=LocalAnchors(),
                 probes=LocalProbes(), reflector=LocalReflector(),
                 generator=LocalGenerator(), judge=LocalJudge())
