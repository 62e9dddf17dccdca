"""Backends picked by configuration: the LLM roles (``NUGGETFLOW_LLM``, through one
name -> factory mapping) and the RAG harness INO probes (``NUGGETFLOW_HARNESS``)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from nuggetflow.errors import ConfigError
from nuggetflow.settings import Settings
from optimizer.harness import BuiltinHarness
from optimizer.roles import GeneratorRole, Roles
from query.embeddings import Embedder
from query.gate import Gate
from query.store import IndexStore

if TYPE_CHECKING:
    from datetime import datetime

    from optimizer.external import ExternalHarness

BACKENDS = {
    "local": "optimizer.local:local_roles",
    "openai": "optimizer.openai_backend:openai_roles",
}


def make_roles(settings: Settings, embedder: Any = None, **kwargs: Any) -> Roles:
    """The roles of the configured backend: ``embedder`` serves the local generator,
    kwargs go to the openai client."""
    target = BACKENDS.get(settings.llm)
    if target is None:
        raise ConfigError(f"unknown LLM backend {settings.llm!r}", field="NUGGETFLOW_LLM")
    module, name = target.split(":")
    factory = getattr(importlib.import_module(module), name)
    roles: Roles = (factory(settings, **kwargs) if settings.llm != "local"
                    else factory(embedder, message_check=settings.message_check))
    return roles


def make_harness(settings: Settings, store: IndexStore, embedder: Embedder,
                 generator: GeneratorRole, *, gate: Gate | None = None,
                 as_of: datetime | None = None) -> BuiltinHarness | ExternalHarness:
    """The harness ``NUGGETFLOW_HARNESS`` names: the built-in agent over ``store``, or the
    team's agent through probe sessions (:mod:`optimizer.external`; ``store``,
    ``embedder``, ``generator`` and ``gate`` are then the service's and the agent's
    business). Close it when done."""
    if settings.harness == "external":
        from optimizer.external import ExternalHarness

        return ExternalHarness(settings, as_of=as_of)
    return BuiltinHarness(store, embedder, generator, settings, as_of=as_of, gate=gate)
