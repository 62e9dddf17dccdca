"""Shared fixtures: settings, the local embedder (loaded once), store factories."""

from __future__ import annotations

import pytest

from nuggetflow.settings import Settings
from query.embeddings import MiniLMEmbedder


@pytest.fixture(scope="session")
def embedder() -> MiniLMEmbedder:
    """The real local MiniLM embedder, loaded once per test session."""
    e = MiniLMEmbedder()
    e.warm_up()
    return e


@pytest.fixture
def settings() -> Settings:
    """Default settings (no environment variables read)."""
    return Settings.from_env({})
