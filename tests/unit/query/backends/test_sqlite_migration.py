"""A store file written before tenant-scoped ids is migrated when it is opened."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np

from query.backends.sqlite import SQLiteStore
from query.model import ItemType, Publication, State, document_digest
from query.text import query_terms
from tests.conformance.store_suite import flt
from tests.helpers import T0, make_passage

# The items table and its lineage index as they were (id unique across tenants).
OLD_ITEMS = """CREATE TABLE items (rowid INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL,
    tenant INTEGER NOT NULL, type INTEGER NOT NULL, lineage TEXT NOT NULL,
    is_head INTEGER NOT NULL, state INTEGER NOT NULL, publication INTEGER NOT NULL,
    t_start REAL NOT NULL, t_end REAL NOT NULL, kind INTEGER NOT NULL, scope INTEGER NOT NULL,
    key TEXT NOT NULL, event_id TEXT NOT NULL, meta REAL NOT NULL);
CREATE INDEX items_lineage ON items (lineage);"""
TEXTS = ["Screen readers speak the contents of the screen.", "Braille displays work too."]


def _old_file(path: Path) -> None:
    """Two passages of acme's document a11y, written the way the old code did."""
    fresh = SQLiteStore(path)
    fresh.start_sync()  # the other tables, as they still are
    db = fresh.db
    db.execute("DROP TABLE items")
    db.executescript(OLD_ITEMS)
    db.execute("INSERT INTO tenants (code, name) VALUES (1, 'acme')")
    for n, text in enumerate(TEXTS):
        pid = f"a11y#{n}"
        db.execute("INSERT INTO items VALUES (?, ?, 1, ?, ?, 1, ?, ?, ?, 1e12, 0, 0, '', '', 0.5)",
                   (n + 1, pid, int(ItemType.DOCUMENT), pid, int(State.ACTIVE),
                    int(Publication.PUBLISHED), T0.timestamp()))
        db.execute("INSERT INTO payloads VALUES (?, ?)", (n + 1, json.dumps({
            "id": pid, "tenant": "acme", "doc_id": "a11y", "title": "Accessibility",
            "text": text, "valid_from": T0.timestamp(), "valid_to": None, "url": ""}).encode()))
        db.execute("INSERT INTO fts (rowid, title, body, anchors) VALUES (?, ?, ?, '')",
                   (n + 1, "Accessibility", text))
        db.execute("INSERT INTO vectors VALUES (?, ?)",
                   (n + 1, np.full(384, 0.05, np.float32).tobytes()))
        db.execute("INSERT INTO changes (item) VALUES (?)", (n + 1,))
    db.execute("PRAGMA user_version = 0")
    db.close()
    fresh._db = None


async def test_an_old_file_is_migrated_to_tenant_scoped_ids(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    _old_file(path)
    store = SQLiteStore(path)
    await store.start()
    theirs = make_passage("t3", pid="a11y#0", title="Magnifier", text="Zoom in on the display.")
    assert await store.add_passages([theirs], np.full((1, 384), 0.05, np.float32)) == 1
    assert (await store.fetch("t3", ["a11y#0"]))["a11y#0"] == theirs
    kept = await store.fetch("acme", ["a11y#0", "a11y#1"])
    assert [p.text for p in kept.values()] == TEXTS
    head = (await store.document_heads("acme", ["a11y"]))["a11y"]
    assert (head.version, head.digest) == (1, document_digest("Accessibility", "", TEXTS))
    assert [s.id for s in await store.lexical(query_terms("braille"), flt(), 5)] == ["a11y#1"]
    await store.stop()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 2
        assert db.execute("SELECT lineage FROM items WHERE rowid = 2").fetchone()[0] == "a11y"
