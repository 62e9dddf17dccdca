"""Store backends, picked by the scheme of ``NUGGETFLOW_STORE``.

``sqlite:///path`` -> :class:`query.backends.sqlite.SQLiteStore` (embedded default);
``opensearch://host:port`` -> :class:`query.backends.opensearch.OpenSearchStore`.
"""

from __future__ import annotations

import importlib
from urllib.parse import urlparse

from nuggetflow.errors import ConfigError
from nuggetflow.settings import Settings
from query.store import IndexStore

BACKENDS = {
    "sqlite": "query.backends.sqlite:SQLiteStore",
    "opensearch": "query.backends.opensearch:OpenSearchStore",
}


def make_store(settings: Settings) -> IndexStore:
    """Instantiate the store named by ``settings.store`` (no I/O until start())."""
    url = urlparse(settings.store)
    target = BACKENDS.get(url.scheme)
    if target is None:
        raise ConfigError(f"unknown store scheme {url.scheme!r} (one of {', '.join(BACKENDS)})",
                          field="NUGGETFLOW_STORE")
    module_name, cls_name = target.split(":")
    cls = getattr(importlib.import_module(module_name), cls_name)
    store: IndexStore = cls.from_url(settings.store, settings)
    return store
