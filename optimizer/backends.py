"""LLM backends, picked by ``NUGGETFLOW_LLM`` through one name -> factory mapping."""

from __future__ import annotations

import importlib
from typing import Any

from nuggetflow.errors import ConfigError
from nuggetflow.settings import Settings
from optimizer.roles import Roles

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
                    else factory(embedder))
    return roles
