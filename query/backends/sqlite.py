"""Embedded store: one SQLite file (FTS5 gives real BM25) plus an in-memory vector index.

Layout of the file:

- ``items``: one row per nugget version or corpus passage, unique by (tenant, id), with
  only the governance columns (tenant, head flag, state, publication, validity as epoch
  seconds, kind, scope), so the rows the lexical query joins stay small and cached; a
  passage's ``lineage`` is its document id;
- ``payloads``: the record itself (protobuf bytes for nuggets, JSON for passages);
- ``fts``: a contentless FTS5 table over title, body and anchors (rowid = items.rowid);
- ``vectors``: float32 embeddings (rowid = items.rowid);
- ``anchor_vectors``: one float32 embedding per anchor of a nugget version (item =
  items.rowid); a nugget's dense score is its best cosine over its own and these;
- ``changes``: an append-only log of inserted and updated rows, so other processes that
  read the same file (the query service beside a writer) refresh their vector index;
- ``requests``: (tenant, lineage, request id) -> the version a review or edit request
  produced, so a retried request is answered without a second version.

Writes never read a whole lineage: the head comes from a partial index over heads
(``items_lineage_head``), a page of versions from the (tenant, lineage, rowid) index.

The vector index (:class:`query.backends.vectors.VectorIndex`) keeps governance columns
as numpy arrays and applies the filter before ranking: exact search over the allowed rows
when they are few, HNSW with a bitmap selector otherwise. SQLite is the source of truth;
the HNSW graph is a cache saved beside the file (``<file>.hnsw``) and rebuilt when stale.

Concurrency: WAL mode; one writer (a lock in this process, SQLite's lock across
processes) and any number of readers.
"""

from __future__ import annotations

import dataclasses
import math
import sqlite3
import threading
from collections.abc import Callable, Collection, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import UTC, date, datetime
from pathlib import Path

import numpy as np

from nuggetflow.errors import BackendUnavailableError, ConfigError, NotFoundError, ValidationError
from nuggetflow.logging import get_logger
from nuggetflow.settings import Settings
from query.backends.postings import K1, B, Matches, PostingsIndex, Tokenizer, top_k
from query.backends.vectors import VectorIndex, VectorMeta
from query.convert import (
    nugget_from_bytes,
    nugget_to_bytes,
    passage_from_bytes,
    passage_to_bytes,
)
from query.embeddings import Vector
from query.model import ItemType, Nugget, Passage, Publication, State, View, document_digest
from query.store import (
    OPEN_END,
    DocumentHead,
    GovernanceFilter,
    Scored,
    WriterLock,
    check_vector,
    meta_prior,
    validate_passages,
    validate_write,
)
from query.traces import NuggetTrace
from query.usage import ReviewFlag, UsageRow, UsageTotals

log = get_logger(__name__)

ITEMS = """CREATE TABLE IF NOT EXISTS items (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL,
    tenant INTEGER NOT NULL,
    type INTEGER NOT NULL,
    lineage TEXT NOT NULL,
    is_head INTEGER NOT NULL,
    state INTEGER NOT NULL,
    publication INTEGER NOT NULL,
    t_start REAL NOT NULL,
    t_end REAL NOT NULL,
    kind INTEGER NOT NULL,
    scope INTEGER NOT NULL,
    key TEXT NOT NULL,
    event_id TEXT NOT NULL,
    meta REAL NOT NULL,
    UNIQUE (tenant, id)
)"""
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS tenants (code INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL);
CREATE TABLE IF NOT EXISTS scopes (code INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL);
{ITEMS};
CREATE TABLE IF NOT EXISTS payloads (rowid INTEGER PRIMARY KEY, payload BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS items_key ON items (tenant, key) WHERE is_head = 1;
CREATE INDEX IF NOT EXISTS items_lineage ON items (tenant, lineage);
CREATE INDEX IF NOT EXISTS items_lineage_head ON items (tenant, lineage) WHERE is_head = 1;
CREATE INDEX IF NOT EXISTS items_event ON items (tenant, event_id) WHERE event_id != '';
CREATE INDEX IF NOT EXISTS items_review ON items (tenant, publication, id)
    WHERE is_head = 1 AND type = 1;
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5 (
    title, body, anchors, content='', tokenize='{{tokenize}}'
);
CREATE TABLE IF NOT EXISTS vectors (rowid INTEGER PRIMARY KEY, vec BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS anchor_vectors (item INTEGER NOT NULL, n INTEGER NOT NULL,
                                           vec BLOB NOT NULL, PRIMARY KEY (item, n));
CREATE TABLE IF NOT EXISTS changes (seq INTEGER PRIMARY KEY AUTOINCREMENT,
                                    item INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS requests (tenant INTEGER NOT NULL, lineage TEXT NOT NULL,
                                     request_id TEXT NOT NULL, item INTEGER NOT NULL,
                                     PRIMARY KEY (tenant, lineage, request_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS usage (tenant TEXT NOT NULL, item TEXT NOT NULL, day TEXT NOT NULL,
                                  considered INTEGER NOT NULL, retrieved INTEGER NOT NULL,
                                  cited INTEGER NOT NULL,
                                  PRIMARY KEY (tenant, item, day)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS usage_flushes (id TEXT PRIMARY KEY, at REAL NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS review_flags (tenant TEXT NOT NULL, lineage TEXT NOT NULL,
                                         kind TEXT NOT NULL, flag TEXT NOT NULL,
                                         PRIMARY KEY (tenant, lineage, kind)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS traces (id TEXT PRIMARY KEY, tenant TEXT NOT NULL,
                                   lineage TEXT NOT NULL, at TEXT NOT NULL,
                                   trace TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS traces_lineage ON traces (tenant, lineage, at);
"""

TOKENIZE = "porter unicode61"
SCHEMA = SCHEMA.replace("{tokenize}", TOKENIZE)
# PRAGMA user_version of the layout above. 0: a file from before tenant-scoped ids
# (items.id unique across tenants, passages without versions), migrated at start.
SCHEMA_VERSION = 2
# BM25 column weights: title, body, anchors. Titles and anchors are written to be found.
BM25_WEIGHTS = "3.0, 1.0, 2.0"  # as SQL arguments of bm25()
WEIGHTS = tuple(float(w) for w in BM25_WEIGHTS.split(","))
# Query processing on large indexes: a term found in more than COMMON_SHARE of the rows
# adds almost nothing to BM25 (its idf is near zero) but forces scoring thousands of
# rows, so it is dropped, keeping at least the KEEP_RAREST rarest terms.
PRUNE_MIN_ROWS = 10_000
COMMON_SHARE = 0.05
KEEP_RAREST = 2


_PAYLOAD = "SELECT p.payload FROM items i JOIN payloads p ON p.rowid = i.rowid"
# One review state's heads, in id order, after an id: a range read of items_review (the
# partial index over nugget heads; type = 1 is ItemType.NUGGET, as in the index).
HEADS_PAGE_SQL = ("SELECT i.id, p.payload FROM items i INDEXED BY items_review"
                  " JOIN payloads p ON p.rowid = i.rowid"
                  " WHERE i.tenant = ? AND i.publication = ? AND i.is_head = 1 AND i.type = 1"
                  " AND i.id > ? ORDER BY i.id LIMIT ?")


def _epoch(t: datetime | None) -> float:
    return OPEN_END if t is None else t.timestamp()


def fts_query(terms: Sequence[str]) -> str:
    """An FTS5 OR-query of quoted terms (quotes make any token a literal)."""
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


class SQLiteStore:
    """The embedded :class:`~query.store.IndexStore` (see the module docstring)."""

    def __init__(self, path: str | Path, dim: int = 384, exact_threshold: int = 4096) -> None:
        self.path = Path(path)
        self.dim = dim
        self._exact_threshold = exact_threshold
        self._write_lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._vectors = VectorIndex(dim, exact_threshold=exact_threshold)
        self._tenant_codes: dict[str, int] = {}
        self._scope_codes: dict[str, int] = {}
        self._last_seq = 0
        self._df: dict[str, int] = {}
        self._df_rows = 0
        self._postings: PostingsIndex | None = None
        self._writer = WriterLock(None if str(self.path) == ":memory:"
                                  else self.path.with_name(self.path.name + ".writer.lock"))
        self._last_match: tuple[tuple[str, ...], int, Matches] | None = None
        self._last_filter: tuple[object, Matches, tuple[np.ndarray, int]] | None = None

    @classmethod
    def from_url(cls, url: str, settings: Settings) -> SQLiteStore:
        """``sqlite:///relative/or/absolute/path.db`` or ``sqlite://:memory:``."""
        raw = url.split("://", 1)[1]
        path = raw[1:] if raw.startswith("/") and not raw.startswith("//") else raw
        path = "/" + path.lstrip("/") if raw.startswith("//") else path
        if not path:
            raise ConfigError("sqlite:// needs a file path", field="NUGGETFLOW_STORE")
        return cls(path, dim=settings.embedding_dim)

    # --- lifecycle --------------------------------------------------------------------

    async def start(self) -> None:
        """Open (or create) the file and load the vector index."""
        self.start_sync()

    def start_sync(self) -> None:
        """Synchronous :meth:`start`, for scripts and benchmarks."""
        if self._db is not None:
            return
        if str(self.path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA busy_timeout=10000")
        _migrate(db)
        db.executescript(SCHEMA)
        if db.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:  # a new file
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        self._db = db
        self._tenant_codes = dict(db.execute("SELECT name, code FROM tenants"))
        self._scope_codes = dict(db.execute("SELECT name, code FROM scopes"))
        db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_instances"
                   " USING fts5vocab(main, 'fts', 'instance')")
        postings = PostingsIndex(WEIGHTS, TOKENIZE)
        # One read transaction: vectors, anchors, the change-log position and the FTS5
        # postings all come from the same snapshot, whatever other processes commit.
        db.execute("BEGIN")
        try:
            self._load_vectors()
            postings.load(db, "fts", self._vectors.positions)
        finally:
            db.execute("COMMIT")
        self._postings = postings

    async def stop(self) -> None:
        """Save the HNSW cache and close the file."""
        if self._db is None:
            return
        if str(self.path) != ":memory:":
            self._vectors.save(self._hnsw_path, self._last_seq)
        self._db.close()
        self._db = None
        if self._postings is not None:
            self._postings.close()
            self._postings = None

    @property
    def _hnsw_path(self) -> Path:
        return self.path.with_name(self.path.name + ".hnsw")

    @property
    def db(self) -> sqlite3.Connection:
        """The open connection (RuntimeError before start())."""
        if self._db is None:
            raise RuntimeError("SQLiteStore.start() was not called")
        return self._db

    def _load_vectors(self) -> None:
        rows = self.db.execute(
            "SELECT i.rowid, i.tenant, i.type, i.is_head, i.state, i.publication, i.t_start,"
            " i.t_end, i.kind, i.scope, i.meta, v.vec FROM items i JOIN vectors v"
            " ON v.rowid = i.rowid ORDER BY i.rowid").fetchall()
        self._last_seq = self.db.execute("SELECT coalesce(max(seq), 0) FROM changes").fetchone()[0]
        metas = [VectorMeta(*r[:11]) for r in rows]
        matrix = (np.frombuffer(b"".join(r[11] for r in rows), dtype=np.float32)
                  .reshape(len(rows), self.dim) if rows else np.zeros((0, self.dim), np.float32))
        self._vectors.load(metas, matrix, self._hnsw_path, self._last_seq)
        self._load_anchors(None)
        if rows:
            log.info("vector index loaded", path=str(self.path), rows=len(rows))

    def _refresh(self) -> None:
        """Apply rows that another process wrote since we last looked."""
        seq = self.db.execute("SELECT coalesce(max(seq), 0) FROM changes").fetchone()[0]
        if seq == self._last_seq:
            return
        changed = [r[0] for r in self.db.execute(
            "SELECT DISTINCT item FROM changes WHERE seq > ?", (self._last_seq,))]
        self._tenant_codes = dict(self.db.execute("SELECT name, code FROM tenants"))
        self._scope_codes = dict(self.db.execute("SELECT name, code FROM scopes"))
        for chunk_start in range(0, len(changed), 500):
            chunk = changed[chunk_start : chunk_start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self.db.execute(
                "SELECT i.rowid, i.tenant, i.type, i.is_head, i.state, i.publication, i.t_start,"
                " i.t_end, i.kind, i.scope, i.meta, v.vec FROM items i JOIN vectors v"
                f" ON v.rowid = i.rowid WHERE i.rowid IN ({marks}) ORDER BY i.rowid",
                chunk).fetchall()
            new = [r for r in chunk if r not in self._vectors.positions]  # the rest: updates
            self._vectors.upsert_many([VectorMeta(*r[:11]) for r in rows],
                                      [np.frombuffer(r[11], dtype=np.float32) for r in rows])
            self._index_postings(new)
            self._load_anchors(new)
        self._last_seq = seq

    def _load_anchors(self, rowids: Sequence[int] | None) -> None:
        """Anchor vectors of these rows (None: of every row) into the vector index."""
        sql = "SELECT item, vec FROM anchor_vectors"
        args: Sequence[int] = ()
        if rowids is not None:
            if not rowids:
                return
            sql += f" WHERE item IN ({','.join('?' * len(rowids))})"
            args = rowids
        rows = self.db.execute(sql + " ORDER BY item, n", args).fetchall()
        if rows:
            self._vectors.add_anchors(
                [r[0] for r in rows],
                np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
                .reshape(len(rows), self.dim))

    def _index_postings(self, new: Sequence[int]) -> None:
        """Add new rows to the postings mirror (their text comes from the payloads)."""
        postings = self._postings
        if postings is None or not new:
            return
        pos_of = self._vectors.positions
        marks = ",".join("?" * len(new))
        texts: list[tuple[int, str, str, str]] = []
        for rowid, typ, payload in self.db.execute(
                f"SELECT i.rowid, i.type, p.payload FROM items i JOIN payloads p"
                f" ON p.rowid = i.rowid WHERE i.rowid IN ({marks})", new):
            if typ == ItemType.NUGGET:
                n = nugget_from_bytes(payload)
                texts.append((rowid, n.title, n.body, "\n".join(n.anchors)))
            else:
                p = passage_from_bytes(payload)
                texts.append((rowid, p.title, p.text, ""))
        postings.add_rows(texts, pos_of)

    # --- codes ------------------------------------------------------------------------

    def _code(self, table: str, cache: dict[str, int], name: str) -> int:
        code = cache.get(name)
        if code is None:
            self.db.execute(f"INSERT OR IGNORE INTO {table} (name) VALUES (?)", (name,))
            code = self.db.execute(f"SELECT code FROM {table} WHERE name = ?",
                                   (name,)).fetchone()[0]
            cache[name] = code
        return code

    # --- writes -----------------------------------------------------------------------

    async def ping(self) -> None:
        """The file answers a trivial query (BackendUnavailableError if it cannot)."""
        try:
            self.db.execute("SELECT 1 FROM changes LIMIT 1").fetchall()
        except sqlite3.Error as exc:
            raise BackendUnavailableError(f"SQLite store unreadable: {exc}") from exc

    def writer(self, tenant: str = "",
               keys: Collection[tuple[str, str, str]] = ()) -> AbstractAsyncContextManager[None]:
        """See :meth:`query.store.IndexStore.writer` (``<file>.writer.lock``, flock, for
        every tenant)."""
        return self._writer.hold()

    async def write_nuggets(self, versions: Sequence[Nugget], vectors: Sequence[Vector | None],
                            anchor_vectors: Sequence[Vector | None] | None = None) -> None:
        """Atomically store versions and move heads (see IndexStore)."""
        self.write_nuggets_sync(versions, vectors, anchor_vectors)

    def write_nuggets_sync(self, versions: Sequence[Nugget], vectors: Sequence[Vector | None],
                           anchor_vectors: Sequence[Vector | None] | None = None) -> None:
        """Synchronous :meth:`write_nuggets`."""
        validate_write(versions, vectors, self.dim, anchor_vectors)
        with self._write_lock:
            self._refresh()
            db = self.db
            db.execute("BEGIN IMMEDIATE")
            try:
                touched: list[int] = []
                for i, (n, v) in enumerate(zip(versions, vectors, strict=True)):
                    touched.extend(self._insert_nugget(
                        n, v, anchor_vectors is not None,
                        None if anchor_vectors is None else anchor_vectors[i]))
                db.executemany("INSERT INTO changes (item) VALUES (?)",
                               [(r,) for r in touched])
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                self._tenant_codes = dict(db.execute("SELECT name, code FROM tenants"))
                self._scope_codes = dict(db.execute("SELECT name, code FROM scopes"))
                raise
            self._refresh()

    def _insert_nugget(self, n: Nugget, vector: Vector | None, with_anchors: bool = False,
                       anchors: Vector | None = None) -> list[int]:
        db = self.db
        tenant = self._code("tenants", self._tenant_codes, n.tenant)
        if db.execute("SELECT 1 FROM items WHERE tenant = ? AND id = ?",
                      (tenant, n.id)).fetchone():
            return []
        lineage = n.lineage_id or n.id
        if vector is None:
            row = db.execute("SELECT v.vec FROM items i JOIN vectors v ON v.rowid = i.rowid"
                             " WHERE i.tenant = ? AND i.id = ?", (tenant, n.parent_id)).fetchone()
            if row is None:
                raise ValidationError(f"no vector given and parent {n.parent_id!r} has none",
                                      field="vectors")
            blob = row[0]
        else:
            blob = np.asarray(vector, dtype=np.float32).tobytes()
        scope = self._code("scopes", self._scope_codes, n.fact.key[2])
        heads = (f"tenant = ? AND lineage = ? AND type = {int(ItemType.NUGGET)}"
                 " AND is_head = 1")
        old_heads = [r[0] for r in db.execute(f"SELECT rowid FROM items WHERE {heads}",
                                              (tenant, lineage))]
        db.execute(f"UPDATE items SET is_head = 0 WHERE {heads}", (tenant, lineage))
        cur = db.execute(
            "INSERT INTO items (id, tenant, type, lineage, is_head, state, publication, t_start,"
            " t_end, kind, scope, key, event_id, meta)"
            " VALUES (?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (n.id, tenant, int(ItemType.NUGGET), lineage, int(n.state), int(n.publication),
             _epoch(n.validity.start), _epoch(n.validity.end), int(n.kind), scope,
             "\x1f".join(n.key), n.provenance.event_id, meta_prior(n.rank, n.confidence)))
        rowid = int(cur.lastrowid or 0)
        db.execute("INSERT INTO payloads (rowid, payload) VALUES (?, ?)",
                   (rowid, nugget_to_bytes(n)))
        db.execute("INSERT INTO fts (rowid, title, body, anchors) VALUES (?, ?, ?, ?)",
                   (rowid, n.title, n.body, "\n".join(n.anchors)))
        db.execute("INSERT INTO vectors (rowid, vec) VALUES (?, ?)", (rowid, blob))
        if n.request_id:
            db.execute("INSERT OR IGNORE INTO requests (tenant, lineage, request_id, item)"
                       " VALUES (?, ?, ?, ?)", (tenant, lineage, n.request_id, rowid))
        if anchors is not None:
            db.executemany("INSERT INTO anchor_vectors (item, n, vec) VALUES (?, ?, ?)",
                           [(rowid, i, np.asarray(a, dtype=np.float32).tobytes())
                            for i, a in enumerate(anchors)])
        elif with_anchors and n.parent_id:  # anchors unchanged: the parent's vectors
            db.execute("INSERT INTO anchor_vectors (item, n, vec) SELECT ?, a.n, a.vec"
                       " FROM anchor_vectors a JOIN items i ON i.rowid = a.item"
                       " WHERE i.tenant = ? AND i.id = ?", (rowid, tenant, n.parent_id))
        return [*old_heads, rowid]

    async def add_passages(self, passages: Sequence[Passage], vectors: Vector) -> int:
        """Store corpus passages in one transaction; returns how many were new."""
        return self.add_passages_sync(passages, vectors)

    def add_passages_sync(self, passages: Sequence[Passage], vectors: Vector) -> int:
        """Synchronous :meth:`add_passages`."""
        validate_passages(passages, vectors, self.dim)
        with self._write_lock:
            self._refresh()
            db = self.db
            db.execute("BEGIN IMMEDIATE")
            try:
                closed = self._close_earlier_versions(passages)
                new: list[int] = []
                for p, v in zip(passages, vectors, strict=True):
                    tenant = self._code("tenants", self._tenant_codes, p.tenant)
                    if db.execute("SELECT 1 FROM items WHERE tenant = ? AND id = ?",
                                  (tenant, p.id)).fetchone():
                        continue
                    cur = db.execute(
                        "INSERT INTO items (id, tenant, type, lineage, is_head, state,"
                        " publication, t_start, t_end, kind, scope, key, event_id, meta)"
                        " VALUES (?, ?, ?, ?, 1, ?, ?, ?, ?, 0, 0, '', '', 0.5)",
                        (p.id, tenant, int(ItemType.DOCUMENT), p.doc_id, int(State.ACTIVE),
                         int(Publication.PUBLISHED), _epoch(p.valid_from), _epoch(p.valid_to)))
                    rowid = int(cur.lastrowid or 0)
                    db.execute("INSERT INTO payloads (rowid, payload) VALUES (?, ?)",
                               (rowid, passage_to_bytes(p)))
                    db.execute("INSERT INTO fts (rowid, title, body, anchors)"
                               " VALUES (?, ?, ?, '')", (rowid, p.title, p.text))
                    db.execute("INSERT INTO vectors (rowid, vec) VALUES (?, ?)",
                               (rowid, np.asarray(v, dtype=np.float32).tobytes()))
                    new.append(rowid)
                db.executemany("INSERT INTO changes (item) VALUES (?)",
                               [(r,) for r in (*closed, *new)])
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                self._tenant_codes = dict(db.execute("SELECT name, code FROM tenants"))
                raise
            self._refresh()
        return len(new)

    def _close_earlier_versions(self, passages: Sequence[Passage]) -> list[int]:
        """End the validity of earlier versions of the documents whose later versions
        these passages are (see IndexStore.add_passages); the rows it changed."""
        starts: dict[tuple[str, str], tuple[int, datetime]] = {}
        for p in passages:
            if p.version > 1:
                starts.setdefault((p.tenant, p.doc_id), (p.version, p.valid_from))
        closed: list[int] = []
        for (tenant, doc_id), (version, start) in starts.items():
            code = self._tenant(tenant)
            if code is not None:
                closed += [rowid for rowid, _ in self._end_document(code, doc_id, start,
                                                                     below=version)]
        return closed

    def _end_document(self, code: int, doc_id: str, at: datetime,
                      below: int | None = None) -> list[tuple[int, Passage]]:
        """Close at ``at`` the passages of a document (of versions below ``below``) still
        valid then, inside the caller's transaction; the rows and passages closed.
        ValidationError when one of them starts at or after ``at``."""
        db = self.db
        closed: list[tuple[int, Passage]] = []
        for rowid, payload in db.execute(
                "SELECT i.rowid, p.payload FROM items i JOIN payloads p"
                " ON p.rowid = i.rowid WHERE i.tenant = ? AND i.type = ?"
                " AND i.lineage = ? AND i.t_end > ?",
                (code, int(ItemType.DOCUMENT), doc_id, _epoch(at))).fetchall():
            old = passage_from_bytes(payload)
            if below is not None and old.version >= below:
                continue  # this version (re-sent) or a later one
            if old.valid_from >= at:
                raise ValidationError(
                    f"document {doc_id!r} cannot end its version {old.version} at "
                    f"{at.isoformat()}: that version starts at {old.valid_from.isoformat()}",
                    field="valid_from" if below is not None else "timestamp")
            db.execute("UPDATE items SET t_end = ? WHERE rowid = ?", (_epoch(at), rowid))
            db.execute("UPDATE payloads SET payload = ? WHERE rowid = ?",
                       (passage_to_bytes(dataclasses.replace(old, valid_to=at)), rowid))
            closed.append((rowid, old))
        return closed

    async def close_document(self, tenant: str, doc_id: str, at: datetime) -> list[str]:
        """See :meth:`query.store.IndexStore.close_document` (one transaction)."""
        code = self._tenant(tenant)
        if code is None:
            return []
        with self._write_lock:
            self._refresh()
            db = self.db
            db.execute("BEGIN IMMEDIATE")
            try:
                closed = self._end_document(code, doc_id, at)
                db.executemany("INSERT INTO changes (item) VALUES (?)", [(r,) for r, _ in closed])
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            self._refresh()
        return sorted(p.id for _, p in closed)

    async def document_heads(self, tenant: str,
                             doc_ids: Sequence[str]) -> dict[str, DocumentHead]:
        """See :meth:`query.store.IndexStore.document_heads` (the passage of each document
        with the latest start belongs to its latest version)."""
        code = self._tenant(tenant)
        out: dict[str, DocumentHead] = {}
        if code is None:
            return out
        for i in range(0, len(doc_ids), 500):
            chunk = list(doc_ids[i : i + 500])
            marks = ",".join("?" * len(chunk))
            rows = [r[0] for r in self.db.execute(
                f"SELECT i.rowid, max(i.t_start) FROM items i WHERE i.tenant = ? AND i.type = ?"
                f" AND i.lineage IN ({marks}) GROUP BY i.lineage",
                (code, int(ItemType.DOCUMENT), *chunk))]
            if not rows:
                continue
            for (payload,) in self.db.execute(
                    f"SELECT payload FROM payloads WHERE rowid IN ({','.join('?' * len(rows))})",
                    rows):
                p = passage_from_bytes(payload)
                out[p.doc_id] = DocumentHead(p.doc_id, p.version, p.digest, p.valid_from,
                                             p.valid_to)
        return out

    # --- reads ------------------------------------------------------------------------

    def _tenant(self, tenant: str) -> int | None:
        code = self._tenant_codes.get(tenant)
        if code is None:
            row = self.db.execute("SELECT code FROM tenants WHERE name = ?", (tenant,)).fetchone()
            if row is not None:
                code = self._tenant_codes[tenant] = row[0]
        return code

    async def get(self, tenant: str, item_id: str) -> Nugget:
        """One nugget version by id (NotFoundError otherwise)."""
        code = self._tenant(tenant)
        row = self.db.execute(f"{_PAYLOAD} WHERE i.id = ? AND i.tenant = ? AND i.type = ?",
                              (item_id, code, int(ItemType.NUGGET))).fetchone()
        if row is None:
            raise NotFoundError(f"no nugget {item_id!r} for tenant {tenant!r}", field="id")
        return nugget_from_bytes(row[0])

    async def history(self, tenant: str, item_id: str) -> list[Nugget]:
        """Every version of the lineage of item_id, oldest first."""
        first = await self.get(tenant, item_id)
        lineage = first.lineage_id or first.id
        rows = self.db.execute(f"{_PAYLOAD} WHERE i.tenant = ? AND i.lineage = ?"
                               " AND i.type = ? ORDER BY i.rowid",
                               (self._tenant(tenant), lineage, int(ItemType.NUGGET))).fetchall()
        return [nugget_from_bytes(r[0]) for r in rows]

    def _lineage_of(self, tenant: str, item_id: str) -> str:
        row = self.db.execute("SELECT lineage FROM items WHERE id = ? AND tenant = ?"
                              " AND type = ?", (item_id, self._tenant(tenant),
                                                int(ItemType.NUGGET))).fetchone()
        if row is None:
            raise NotFoundError(f"no nugget {item_id!r} for tenant {tenant!r}", field="id")
        return str(row[0])

    async def head(self, tenant: str, item_id: str) -> Nugget:
        """The head of item_id's lineage (the partial index on heads: one row read)."""
        lineage = self._lineage_of(tenant, item_id)
        row = self.db.execute(f"{_PAYLOAD} WHERE i.tenant = ? AND i.lineage = ?"
                              " AND i.is_head = 1 AND i.type = ?",
                              (self._tenant(tenant), lineage, int(ItemType.NUGGET))).fetchone()
        if row is None:
            raise NotFoundError(f"no head for nugget {item_id!r}", field="id")
        return nugget_from_bytes(row[0])

    async def history_page(self, tenant: str, item_id: str, limit: int,
                           after_id: str = "") -> list[Nugget]:
        """One page of item_id's lineage, oldest first (rowid order: the lineage index
        holds (tenant, lineage, rowid), so the page is a range read)."""
        lineage = self._lineage_of(tenant, item_id)
        after = 0
        if after_id:
            row = self.db.execute("SELECT rowid FROM items WHERE id = ? AND tenant = ?"
                                  " AND lineage = ?",
                                  (after_id, self._tenant(tenant), lineage)).fetchone()
            if row is None:
                raise ValidationError("not a version of this lineage", field="after_id")
            after = int(row[0])
        rows = self.db.execute(f"{_PAYLOAD} WHERE i.tenant = ? AND i.lineage = ?"
                               " AND i.type = ? AND i.rowid > ? ORDER BY i.rowid LIMIT ?",
                               (self._tenant(tenant), lineage, int(ItemType.NUGGET), after,
                                limit)).fetchall()
        return [nugget_from_bytes(r[0]) for r in rows]

    async def lineage_version(self, tenant: str, item_id: str, number: int) -> Nugget:
        """Version ``number`` of item_id's lineage: versions are written in order, each
        after its parent, so it is the lineage's row ``number`` in rowid order (the
        (tenant, lineage) index holds the rowid: ``number`` index entries are stepped
        over, one payload is read)."""
        lineage = self._lineage_of(tenant, item_id)
        missing = NotFoundError(f"nugget {item_id!r} has no version {number}", field="version")
        if number < 1:
            raise missing
        code = self._tenant(tenant)
        row = self.db.execute("SELECT payload FROM payloads WHERE rowid = (SELECT rowid"
                              " FROM items WHERE tenant = ? AND lineage = ? AND type = ?"
                              " ORDER BY rowid LIMIT 1 OFFSET ?)",
                              (code, lineage, int(ItemType.NUGGET), number - 1)).fetchone()
        if row is None:
            raise missing
        found = nugget_from_bytes(row[0])
        if found.version != number:  # not written in order: look for it page by page
            log.warning("lineage versions out of rowid order", lineage=lineage,
                        wanted=number, found=found.version)
            after = ""
            while page := await self.history_page(tenant, lineage, 100, after_id=after):
                for v in page:
                    if v.version == number:
                        return v
                after = page[-1].id
            raise missing
        return found

    async def heads_page(self, tenant: str, publications: Sequence[Publication], limit: int,
                         after_id: str = "") -> list[Nugget]:
        """Heads in these review states, in id order: one range read of ``items_review``
        per state (LIMIT ``limit`` each), merged by id."""
        code = self._tenant(tenant)
        if code is None or limit <= 0:
            return []
        rows: list[tuple[str, bytes]] = []
        for publication in sorted(set(publications)):
            rows += self.db.execute(HEADS_PAGE_SQL, (code, int(publication), after_id,
                                                     limit)).fetchall()
        rows.sort(key=lambda r: r[0])
        return [nugget_from_bytes(payload) for _, payload in rows[:limit]]

    async def publication_counts(self) -> dict[tuple[str, Publication], int]:
        """Heads of nugget lineages counted per tenant and publication (the partial index
        ``items_review`` covers the query)."""
        rows = self.db.execute(
            "SELECT t.name, i.publication, COUNT(*) FROM items i INDEXED BY items_review"
            " JOIN tenants t ON t.code = i.tenant WHERE i.is_head = 1 AND i.type = 1"
            " GROUP BY i.tenant, i.publication").fetchall()
        return {(name, Publication(pub)): int(n) for name, pub, n in rows}

    async def find_by_request(self, tenant: str, lineage_id: str,
                              request_id: str) -> Nugget | None:
        """The version of the lineage produced by this request id (the requests table)."""
        code = self._tenant(tenant)
        if code is None or not request_id:
            return None
        row = self.db.execute(
            "SELECT p.payload FROM requests r JOIN payloads p ON p.rowid = r.item"
            " WHERE r.tenant = ? AND r.lineage = ? AND r.request_id = ?",
            (code, lineage_id, request_id)).fetchone()
        return None if row is None else nugget_from_bytes(row[0])

    async def heads_by_key(self, tenant: str, key: tuple[str, str, str]) -> list[Nugget]:
        """Head versions with this governance key."""
        code = self._tenant(tenant)
        rows = self.db.execute(
            f"{_PAYLOAD} WHERE i.tenant = ? AND i.key = ? AND i.is_head = 1"
            " AND i.type = ? ORDER BY i.rowid", (code, "\x1f".join(key), int(ItemType.NUGGET)))
        return [nugget_from_bytes(r[0]) for r in rows]

    async def find_by_event(self, tenant: str, event_id: str) -> list[Nugget]:
        """Head versions created from this feedback event."""
        code = self._tenant(tenant)
        rows = self.db.execute(
            f"{_PAYLOAD} WHERE i.tenant = ? AND i.event_id = ? AND i.is_head = 1"
            " ORDER BY i.rowid", (code, event_id))
        return [nugget_from_bytes(r[0]) for r in rows]

    async def has_tenant(self, tenant: str) -> bool:
        """True when the tenant has stored items."""
        return self._tenant(tenant) is not None

    def _where(self, flt: GovernanceFilter) -> tuple[str, list[object]]:
        """The governance filter as SQL over ``i`` (items)."""
        t = flt.as_of.astimezone(UTC).timestamp()
        states = [int(State.ACTIVE)]
        if flt.view is View.ACTIVE_PLUS_CONTESTED:
            states.append(int(State.CONTESTED))
        sql = (f"i.tenant = ? AND i.is_head = 1 AND i.publication = {int(Publication.PUBLISHED)}"
               f" AND i.state IN ({','.join(map(str, states))}) AND i.t_start <= ? AND i.t_end > ?")
        args: list[object] = [self._tenant(flt.tenant), t, t]
        if not flt.include_documents:
            sql += f" AND i.type = {int(ItemType.NUGGET)}"
        if flt.scopes:
            codes = [self._scope_codes.get(s.lower().strip(), -1) for s in flt.scopes]
            sql += (f" AND (i.type = {int(ItemType.DOCUMENT)} OR i.scope IN "
                    f"({','.join('?' * len(codes))}))")
            args.extend(codes)
        if flt.kinds:
            sql += (f" AND (i.type = {int(ItemType.DOCUMENT)} OR i.kind IN "
                    f"({','.join(str(int(k)) for k in flt.kinds)}))")
        return sql, args

    def fts_rows(self) -> int:
        """Rows in the FTS index (from its averages record: no scan)."""
        row = self.db.execute("SELECT block FROM fts_data WHERE id = 1").fetchone()
        values = _varints(row[0]) if row else []
        return values[0] if values else 0

    def prune_terms(self, terms: Sequence[str]) -> list[str]:
        """Drop very common terms on large indexes (see COMMON_SHARE); order kept."""
        rows = self.fts_rows()
        if rows < PRUNE_MIN_ROWS or len(terms) <= KEEP_RAREST:
            return list(terms)
        if abs(rows - self._df_rows) > 0.01 * max(rows, 1):
            self._df, self._df_rows = {}, rows
        for t in terms:
            if t not in self._df:
                self._df[t] = self.db.execute("SELECT count(*) FROM fts WHERE fts MATCH ?",
                                              (fts_query([t]),)).fetchone()[0]
        rarest = set(sorted(terms, key=lambda t: self._df[t])[:KEEP_RAREST])
        return [t for t in terms if t in rarest or self._df[t] <= COMMON_SHARE * rows]

    async def lexical(self, terms: Sequence[str], flt: GovernanceFilter,
                      limit: int) -> list[Scored]:
        """Governed BM25 (filter inside the query, then ORDER BY bm25 LIMIT)."""
        return self.lexical_sync(terms, flt, limit)

    def lexical_sync(self, terms: Sequence[str], flt: GovernanceFilter,
                     limit: int) -> list[Scored]:
        """Synchronous :meth:`lexical`.

        Served from the in-memory postings mirror (:mod:`query.backends.postings`): the
        rows matching any term, scored as FTS5's bm25() would, filtered by the governance
        columns, top ``limit``. Queries with phrase terms (several tokens, e.g. "8.2") and
        moments when the mirror and the file disagree go to FTS5 with the filter inside
        the SQL query (:meth:`lexical_sql`); both return the same ranking.
        """
        if not terms:
            return []
        terms = self.prune_terms(terms)
        code = self._tenant(flt.tenant)
        if code is None:
            return []
        self._refresh()
        matches = self._match(terms)
        if matches is None:
            return self.lexical_sql(terms, flt, limit)
        allowed, _ = self._filter(matches, flt, code)
        best = top_k(matches, allowed, limit)
        if not best:
            return []
        rowids = self.vector_rowids([p for p, _ in best])
        marks = ",".join("?" * len(best))
        info = {r[0]: r[1:] for r in self.db.execute(
            f"SELECT rowid, id, type, meta FROM items WHERE rowid IN ({marks})", rowids)}
        return [Scored(info[r][0], ItemType(info[r][1]), score, float(info[r][2]))
                for r, (_, score) in zip(rowids, best, strict=True)]

    @property
    def postings(self) -> PostingsIndex | None:
        """The in-memory postings mirror (None before start)."""
        return self._postings

    def vector_rowids(self, positions: Sequence[int]) -> list[int]:
        """Rowids of rows at these vector-index (and postings) positions."""
        return [int(r) for r in self._vectors.rowids_at(np.asarray(positions, dtype=np.int64))]

    def _scopes(self, flt: GovernanceFilter) -> tuple[int, ...]:
        return tuple(self._scope_codes.get(s.lower().strip(), -1) for s in flt.scopes)

    def _filter(self, matches: Matches, flt: GovernanceFilter,
                code: int) -> tuple[np.ndarray, int]:
        """Governance over the matches (allowed mask, suppressed count). Retrieve asks for
        it twice (lexical, then suppressed) on the same matches: the last one is kept."""
        key = (id(matches), flt, self._last_seq)
        last = self._last_filter
        if last is not None and last[0] == key and last[1] is matches:
            return last[2]
        got = self._vectors.filter_at(matches.positions, flt, code, self._scopes(flt))
        self._last_filter = (key, matches, got)
        return got

    def _match(self, terms: Sequence[str]) -> Matches | None:
        """Postings matches of already pruned terms; None when FTS5 must answer (a phrase
        term, or the mirror does not hold exactly the rows of the FTS index)."""
        postings = self._postings
        if postings is None:
            return None
        key = tuple(terms)
        last = self._last_match
        if last is not None and last[0] == key and last[1] == postings.rows:
            return last[2]
        tokens = postings.tokens_of(terms)
        if tokens is None or postings.rows != self.fts_rows():
            return None
        matches = postings.match(tokens)
        self._last_match = (key, postings.rows, matches)
        return matches

    def lexical_sql(self, terms: Sequence[str], flt: GovernanceFilter,
                    limit: int) -> list[Scored]:
        """Governed BM25 by FTS5 alone: the filter inside the query, ORDER BY bm25 LIMIT
        (terms as given: no pruning)."""
        where, args = self._where(flt)
        # CROSS JOIN keeps FTS as the outer loop: the planner must not scan items first.
        rows = self.db.execute(
            f"SELECT i.id, i.type, -bm25(fts, {BM25_WEIGHTS}), i.meta FROM fts"
            f" CROSS JOIN items i ON i.rowid = fts.rowid WHERE fts MATCH ? AND {where}"
            f" ORDER BY bm25(fts, {BM25_WEIGHTS}) LIMIT ?",
            [fts_query(terms), *args, limit]).fetchall()
        return [Scored(r[0], ItemType(r[1]), float(r[2]), float(r[3])) for r in rows]

    def raw_lexical_sync(self, terms: Sequence[str], limit: int) -> list[tuple[int, float]]:
        """Plain FTS5 BM25 without governance (the benchmark's baseline); same query
        processing (term pruning) as :meth:`lexical_sync`."""
        if not terms:
            return []
        terms = self.prune_terms(terms)
        return self.db.execute(
            f"SELECT rowid, -bm25(fts, {BM25_WEIGHTS}) FROM fts WHERE fts MATCH ?"
            f" ORDER BY bm25(fts, {BM25_WEIGHTS}) LIMIT ?", (fts_query(terms), limit)).fetchall()

    async def dense(self, vector: Vector, flt: GovernanceFilter, limit: int) -> list[Scored]:
        """Governed cosine search over the vector index."""
        return self.dense_sync(vector, flt, limit)

    def dense_sync(self, vector: Vector, flt: GovernanceFilter, limit: int) -> list[Scored]:
        """Synchronous :meth:`dense`."""
        check_vector(vector, self.dim)
        self._refresh()
        code = self._tenant(flt.tenant)
        if code is None:
            return []
        hits = self._vectors.search(vector, flt, code, self._scopes(flt), limit)
        if not hits:
            return []
        rowids = [h[0] for h in hits]
        marks = ",".join("?" * len(rowids))
        info = {r[0]: (r[1], r[2]) for r in self.db.execute(
            f"SELECT rowid, id, type FROM items WHERE rowid IN ({marks})", rowids)}
        return [Scored(info[r][0], ItemType(info[r][1]), s, m) for r, s, m in hits]

    async def suppressed(self, terms: Sequence[str], flt: GovernanceFilter) -> int:
        """Head nuggets matching the terms that the filter excludes."""
        code = self._tenant(flt.tenant)
        if not terms or code is None:
            return 0
        terms = self.prune_terms(terms)
        self._refresh()
        matches = self._match(terms)
        if matches is not None:
            return self._filter(matches, flt, code)[1]
        return self.suppressed_sql(terms, flt)

    def suppressed_sql(self, terms: Sequence[str], flt: GovernanceFilter) -> int:
        """:meth:`suppressed` by FTS5 alone (terms as given)."""
        where, args = self._where(flt)
        row = self.db.execute(
            f"SELECT count(*) FROM fts CROSS JOIN items i ON i.rowid = fts.rowid"
            f" WHERE fts MATCH ? AND i.tenant = ? AND i.is_head = 1"
            f" AND i.type = {int(ItemType.NUGGET)}"
            f" AND NOT ({where})", [fts_query(terms), args[0], *args]).fetchone()
        return int(row[0])

    def lexical_stats(self) -> LexicalStats:
        """Frozen BM25 statistics for scoring text outside the index (probe overlays)."""
        return LexicalStats(self.db, self.prune_terms)

    async def overlay_scorer(self) -> LexicalStats:
        """See :meth:`query.store.IndexStore.overlay_scorer`."""
        return self.lexical_stats()

    async def sample_passages(self, tenant: str, limit: int, seed: int = 0) -> list[Passage]:
        """A seeded sample of the tenant's passages (from at most 5,000 of them)."""
        import random

        code = self._tenant(tenant)
        rows = self.db.execute(f"{_PAYLOAD} WHERE i.tenant = ? AND i.type = ?"
                               " ORDER BY i.rowid LIMIT 5000",
                               (code, int(ItemType.DOCUMENT))).fetchall()
        picked = random.Random(seed).sample(rows, min(limit, len(rows)))
        return [passage_from_bytes(r[0]) for r in picked]

    async def fetch(self, tenant: str, ids: Sequence[str]) -> dict[str, Nugget | Passage]:
        """Records by id for this tenant."""
        if not ids:
            return {}
        code = self._tenant(tenant)
        marks = ",".join("?" * len(ids))
        out: dict[str, Nugget | Passage] = {}
        for item_id, typ, payload in self.db.execute(
                f"SELECT i.id, i.type, p.payload FROM items i JOIN payloads p"
                f" ON p.rowid = i.rowid WHERE i.tenant = ? AND i.id IN ({marks})",
                [code, *ids]):
            out[item_id] = (nugget_from_bytes(payload) if typ == ItemType.NUGGET
                            else passage_from_bytes(payload))
        return out

    async def statement_cosines(self, tenant: str, ids: Sequence[str],
                                vector: Vector) -> dict[str, float]:
        """Cosines with the nuggets' stored statement vectors (the in-memory matrix)."""
        check_vector(vector, self.dim)
        code = self._tenant(tenant)
        if not ids or code is None:
            return {}
        self._refresh()
        marks = ",".join("?" * len(ids))
        rowids = dict(self.db.execute(
            f"SELECT rowid, id FROM items WHERE tenant = ? AND type = ? AND id IN ({marks})",
            [code, int(ItemType.NUGGET), *ids]).fetchall())
        q = np.asarray(vector, dtype=np.float32)
        return {rowids[r]: float(v @ q) for r, v in self._vectors.rows(list(rowids)).items()}

    async def stats(self) -> dict[str, float]:
        """Row counts and on-disk sizes."""
        db = self.db
        counts = dict(db.execute("SELECT type, count(*) FROM items GROUP BY type").fetchall())
        size = sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*")
                   if p.is_file()) if str(self.path) != ":memory:" else 0
        return {"nuggets": counts.get(int(ItemType.NUGGET), 0),
                "passages": counts.get(int(ItemType.DOCUMENT), 0),
                "file_bytes": size, "fts_bytes": self.fts_bytes()}

    # --- usage and review flags (query.usage) -----------------------------------------

    async def add_usage(self, rows: Sequence[UsageRow], flush_id: str) -> None:
        """Add the counts in one transaction (see IndexStore.add_usage); flush ids older
        than a week are forgotten."""
        now = datetime.now(UTC).timestamp()
        with self._write_lock:
            db = self.db
            db.execute("BEGIN IMMEDIATE")
            try:
                if db.execute("SELECT 1 FROM usage_flushes WHERE id = ?",
                              (flush_id,)).fetchone():
                    db.execute("ROLLBACK")
                    return
                db.executemany(
                    "INSERT INTO usage (tenant, item, day, considered, retrieved, cited)"
                    " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, item, day) DO UPDATE SET"
                    " considered = considered + excluded.considered,"
                    " retrieved = retrieved + excluded.retrieved, cited = cited + excluded.cited",
                    [(r.tenant, r.item_id, r.day.isoformat(), r.considered, r.retrieved,
                      r.cited) for r in rows])
                db.execute("INSERT INTO usage_flushes (id, at) VALUES (?, ?)", (flush_id, now))
                db.execute("DELETE FROM usage_flushes WHERE at < ?", (now - 7 * 86400,))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    async def usage_totals(self, tenant: str, ids: Sequence[str],
                           since: date) -> dict[str, UsageTotals]:
        """Sums over the (tenant, item, day) primary key, 500 ids per query."""
        out: dict[str, UsageTotals] = {}
        for i in range(0, len(ids), 500):
            part = list(ids[i:i + 500])
            for item, c, r, k, last in self.db.execute(
                    "SELECT item, SUM(considered), SUM(retrieved), SUM(cited),"
                    " MAX(CASE WHEN cited > 0 THEN day END) FROM usage"
                    f" WHERE tenant = ? AND day >= ? AND item IN ({','.join('?' * len(part))})"
                    " GROUP BY item", (tenant, since.isoformat(), *part)):
                out[item] = UsageTotals(int(c), int(r), int(k),
                                        date.fromisoformat(last) if last else None)
        return out

    async def review_flags(self, tenant: str) -> list[ReviewFlag]:
        """The tenant's flags, by lineage then kind."""
        return [ReviewFlag.from_json(raw) for (raw,) in self.db.execute(
            "SELECT flag FROM review_flags WHERE tenant = ? ORDER BY lineage, kind", (tenant,))]

    async def replace_review_flags(self, tenant: str, flags: Sequence[ReviewFlag]) -> None:
        """Delete the tenant's flags and insert ``flags``, in one transaction."""
        await self.update_review_flags(tenant, lambda _: list(flags))

    async def update_review_flags(
            self, tenant: str,
            change: Callable[[list[ReviewFlag]], list[ReviewFlag]]) -> list[ReviewFlag]:
        """See :meth:`query.store.IndexStore.update_review_flags` (one write transaction:
        SQLite's write lock keeps other processes out between the read and the write)."""
        with self._write_lock:
            db = self.db
            db.execute("BEGIN IMMEDIATE")
            try:
                stored = [ReviewFlag.from_json(raw) for (raw,) in db.execute(
                    "SELECT flag FROM review_flags WHERE tenant = ? ORDER BY lineage, kind",
                    (tenant,))]
                flags = change(stored)
                db.execute("DELETE FROM review_flags WHERE tenant = ?", (tenant,))
                db.executemany(
                    "INSERT OR REPLACE INTO review_flags (tenant, lineage, kind, flag)"
                    " VALUES (?, ?, ?, ?)",
                    [(tenant, f.lineage_id, f.kind.value, f.to_json()) for f in flags])
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return flags

    async def add_traces(self, traces: Sequence[NuggetTrace]) -> None:
        """Insert the traces in one transaction (an id stored already is skipped)."""
        with self._write_lock:
            db = self.db
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany(
                    "INSERT OR IGNORE INTO traces (id, tenant, lineage, at, trace)"
                    " VALUES (?, ?, ?, ?, ?)",
                    [(t.id, t.tenant, t.lineage_id, _utc_key(t.at), t.to_json())
                     for t in traces])
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    async def traces(self, tenant: str, lineage_id: str, limit: int = 100
                     ) -> list[NuggetTrace]:
        """The lineage's last ``limit`` traces, oldest first (index on tenant, lineage,
        time)."""
        rows = self.db.execute(
            "SELECT trace FROM traces WHERE tenant = ? AND lineage = ?"
            " ORDER BY at DESC, id DESC LIMIT ?", (tenant, lineage_id, limit)).fetchall()
        return [NuggetTrace.from_json(raw) for (raw,) in reversed(rows)]

    def fts_bytes(self) -> int:
        """Bytes used by the FTS5 shadow tables (the lexical index), via dbstat if present."""
        try:
            row = self.db.execute(
                "SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'fts%'").fetchone()
        except sqlite3.OperationalError:
            return -1
        return int(row[0] or 0)


class LexicalStats:
    """FTS5 statistics, to score text that is not in the index.

    :meth:`score` reproduces FTS5's ``bm25()`` (k1 = 1.2, b = 0.75, column weights,
    idf = ln((N - n + 0.5) / (n + 0.5)) floored at 1e-6) for a virtual row, using the
    index's row count, average row length and per-phrase document counts as the live
    query sees them (re-read when the index has grown). The store's tokenizer
    (:class:`~query.backends.postings.Tokenizer`) splits the text.
    """

    def __init__(self, db: sqlite3.Connection,
                 prune: Callable[[Sequence[str]], list[str]] | None = None) -> None:
        self._db = db
        self._prune = prune
        self.rows = self.tokens = -1
        self._df: dict[str, int] = {}
        self._sync()
        self._tokenizer = Tokenizer(TOKENIZE)

    def _sync(self) -> None:
        """Re-read row and token totals; forget document counts if the index changed."""
        row = self._db.execute("SELECT block FROM fts_data WHERE id = 1").fetchone()
        values = (_varints(row[0]) if row else []) or [0, 0, 0, 0]
        rows, tokens = values[0], sum(values[1:4])
        if (rows, tokens) != (self.rows, self.tokens):
            self.rows, self.tokens, self._df = rows, tokens, {}

    def _doc_freq(self, term: str) -> int:
        n = self._df.get(term)
        if n is None:
            n = self._db.execute("SELECT count(*) FROM fts WHERE fts MATCH ?",
                                 (fts_query([term]),)).fetchone()[0]
            self._df[term] = n
        return n

    async def score(self, terms: Sequence[str], title: str, body: str, anchors: str) -> float:
        """See :meth:`score_sync`."""
        return self.score_sync(terms, title, body, anchors)

    async def close(self) -> None:
        """Release the scratch tokenizer table."""
        self._tokenizer.close()

    def score_sync(self, terms: Sequence[str], title: str, body: str, anchors: str) -> float:
        """The bm25 score (positive) the text would get for the OR-query of ``terms``."""
        if self._prune is not None:
            terms = self._prune(terms)
        if not terms:
            return 0.0
        self._sync()
        columns = self._tokenizer.columns(title, body, anchors)
        n_rows = self.rows + 1
        length = sum(len(c) for c in columns)
        avgdl = (self.tokens + length) / n_rows
        total = 0.0
        for term in terms:
            phrase = list(self._tokenizer.term(term))
            if not phrase:
                continue
            freq = 0.0
            for weight, col in zip(WEIGHTS, columns, strict=True):
                hits = sum(1 for i in range(len(col) - len(phrase) + 1)
                           if col[i : i + len(phrase)] == phrase)
                freq += weight * hits
            if freq == 0:
                continue
            n_hit = min(self._doc_freq(term), self.rows) + 1
            idf = math.log((n_rows - n_hit + 0.5) / (n_hit + 0.5))
            idf = idf if idf > 0 else 1e-6
            total += idf * (freq * (K1 + 1)) / (freq + K1 * (1 - B + B * length / avgdl))
        return total


def _migrate(db: sqlite3.Connection) -> None:
    """Bring a file written before tenant-scoped ids to SCHEMA_VERSION, in one transaction.

    ``items.id`` was unique across tenants (a second tenant's document with an id the
    first one had was skipped): the table is rebuilt unique by (tenant, id), rowids kept
    (the FTS5 and vector rows refer to them). Passages get their document id as lineage
    and, in their payload, version 1 and the digest of their document's passages.
    """
    if db.execute("PRAGMA user_version").fetchone()[0] >= SCHEMA_VERSION:
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        old = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table'"
                         " AND name = 'items'").fetchone()
        if old is None or "UNIQUE (tenant, id)" in old[0]:
            db.execute("COMMIT")
            return
        columns = ", ".join(r[1] for r in db.execute("PRAGMA table_info(items)"))
        db.execute("ALTER TABLE items RENAME TO items_before_v2")
        db.execute(ITEMS)
        db.execute(f"INSERT INTO items ({columns}) SELECT {columns} FROM items_before_v2")
        db.execute("DROP TABLE items_before_v2")  # and its indexes; SCHEMA makes the new ones
        documents: dict[tuple[int, str], list[tuple[int, Passage]]] = {}
        for rowid, tenant, payload in db.execute(
                "SELECT i.rowid, i.tenant, p.payload FROM items i JOIN payloads p"
                " ON p.rowid = i.rowid WHERE i.type = ? ORDER BY i.rowid",
                (int(ItemType.DOCUMENT),)).fetchall():
            p = passage_from_bytes(payload)
            documents.setdefault((tenant, p.doc_id), []).append((rowid, p))
        for rows in documents.values():
            digest = document_digest(rows[0][1].title, rows[0][1].url, [p.text for _, p in rows])
            for rowid, p in rows:
                db.execute("UPDATE items SET lineage = ? WHERE rowid = ?", (p.doc_id, rowid))
                db.execute("UPDATE payloads SET payload = ? WHERE rowid = ?",
                           (passage_to_bytes(dataclasses.replace(p, version=1, digest=digest)),
                            rowid))
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    log.info("store file migrated to tenant-scoped ids", schema_version=SCHEMA_VERSION,
             documents=len(documents))


def _varints(blob: bytes) -> list[int]:
    """Decode SQLite-format varints (as in the FTS5 averages record)."""
    out: list[int] = []
    i = 0
    while i < len(blob):
        value = 0
        for j in range(9):
            byte = blob[i]
            i += 1
            if j == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        out.append(value)
    return out


def _utc_key(at: datetime) -> str:
    """A time as a sortable text key (UTC, microseconds)."""
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")
