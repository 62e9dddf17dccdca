"""Citation ledgers: what each Retrieve returned, so ReportCitations can be checked.

A client reports which retrieved items its answer cited by the Retrieve request id. The
ledger remembers, per request id, the tenant and the ids returned, checks that cited ids
were retrieved, and counts each cited id once per request, so the citation rate (cited /
retrieved) is exact per tenant.

- :class:`CitationLedger`: in memory, one process (``nuggetflow serve`` with one worker);
- :class:`SQLiteLedger`: a small SQLite file that every worker process of one host
  shares (``--workers N``): a ReportCitations call may reach a different worker than the
  Retrieve it reports on.

A report returns the nugget ids it counted, which the service adds to its usage counts
(:mod:`query.usage`: per version and day, kept in the store, read by GetUsage).
"""

from __future__ import annotations

import sqlite3
import sys
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from nuggetflow.errors import ConfigError, NotFoundError, ValidationError

SEP = "\x1f"


class Ledger(Protocol):
    """Remembers Retrieve results and counts citations against them."""

    def __len__(self) -> int: ...

    def remember(self, request_id: str, tenant: str, nugget_ids: Iterable[str],
                 document_ids: Iterable[str]) -> None:
        """Record what a Retrieve returned."""

    def report(self, tenant: str, request_id: str, cited_ids: Sequence[str]) -> CitationOutcome:
        """Count cited ids of a remembered request (see CitationLedger.report)."""


@dataclass
class _Retrieved:
    tenant: str
    nuggets: frozenset[str]
    documents: frozenset[str]
    cited: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class CitationOutcome:
    """What one ReportCitations call counted."""

    nuggets: int
    documents: int
    retrieved: int
    nugget_ids: tuple[str, ...] = ()  # the nugget ids counted (each once per request)


class CitationLedger:
    """A bounded LRU map: Retrieve request id -> the ids it returned (and those cited).

    Single event loop, no locking needed. Ids are interned: the same popular nugget ids
    recur across many requests, so memory grows with requests, not with id copies.
    """

    def __init__(self, capacity: int) -> None:
        if capacity <= 0:
            raise ConfigError("must be > 0", field="NUGGETFLOW_CITATION_LEDGER_SIZE")
        self.capacity = capacity
        self._entries: OrderedDict[str, _Retrieved] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def remember(self, request_id: str, tenant: str, nugget_ids: Iterable[str],
                 document_ids: Iterable[str]) -> None:
        """Record what a Retrieve returned; evicts the least recently used entry if full."""
        self._entries[request_id] = _Retrieved(
            sys.intern(tenant), frozenset(sys.intern(i) for i in nugget_ids),
            frozenset(sys.intern(i) for i in document_ids))
        self._entries.move_to_end(request_id)
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)

    def report(self, tenant: str, request_id: str, cited_ids: Sequence[str]) -> CitationOutcome:
        """Count the cited ids of a remembered request (each id once per request).

        NotFoundError (field ``request_id``) for an unknown or evicted request, or one of
        another tenant; ValidationError (field ``cited_ids``) naming ids the request did
        not retrieve. Nothing is counted when any id is rejected.
        """
        entry = self._entries.get(request_id)
        distinct = _check(request_id, tenant, self.capacity,
                          entry.tenant if entry else None,
                          entry.nuggets if entry else frozenset(),
                          entry.documents if entry else frozenset(), cited_ids)
        assert entry is not None
        self._entries.move_to_end(request_id)
        new = [c for c in distinct if c not in entry.cited]
        entry.cited.update(new)
        counted = tuple(c for c in new if c in entry.nuggets)
        return CitationOutcome(len(counted), len(new) - len(counted),
                               len(entry.nuggets) + len(entry.documents), counted)


def _check(request_id: str, tenant: str, capacity: int, found_tenant: str | None,
           nuggets: frozenset[str], documents: frozenset[str],
           cited_ids: Sequence[str]) -> list[str]:
    """The distinct cited ids, after the checks every ledger makes (see report)."""
    if found_tenant is None or found_tenant != tenant:
        raise NotFoundError(f"unknown request id {request_id!r} for tenant {tenant!r} "
                            f"(never retrieved, or older than the last "
                            f"{capacity} requests)", field="request_id")
    distinct = list(dict.fromkeys(cited_ids))
    unknown = [c for c in distinct if c not in nuggets and c not in documents]
    if unknown:
        shown = ", ".join(repr(u) for u in unknown[:5])
        more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
        raise ValidationError(f"not retrieved by request {request_id!r}: {shown}{more}",
                              field="cited_ids")
    return distinct


class SQLiteLedger:
    """A ledger in a SQLite file shared by the worker processes of one host.

    Rows are appended per Retrieve; every ``PRUNE_EVERY`` inserts a process deletes all
    but the newest ``capacity`` rows (so the bound is by recency of the Retrieve, not of
    the last report, unlike the in-memory LRU). A report is one IMMEDIATE transaction,
    so two workers never count the same citation twice. The file is a cache of recent
    requests: it is written without fsync (a crash may lose the last few entries).
    """

    PRUNE_EVERY = 1024

    def __init__(self, path: str | Path, capacity: int) -> None:
        if capacity <= 0:
            raise ConfigError("must be > 0", field="NUGGETFLOW_CITATION_LEDGER_SIZE")
        self.capacity = capacity
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(self.path), check_same_thread=False,
                                   isolation_level=None, timeout=10.0)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS ledger (seq INTEGER PRIMARY KEY AUTOINCREMENT,"
            " request_id TEXT UNIQUE NOT NULL, tenant TEXT NOT NULL, nuggets TEXT NOT NULL,"
            " documents TEXT NOT NULL, cited TEXT NOT NULL DEFAULT '')")
        self._lock = threading.Lock()
        self._inserts = 0

    def __len__(self) -> int:
        # Two subqueries: SQLite reads a lone min() or max() from the index end, but
        # max(seq) - min(seq) in one SELECT scans the whole table.
        row = self._db.execute("SELECT (SELECT max(seq) FROM ledger) -"
                               " (SELECT min(seq) FROM ledger) + 1").fetchone()
        return min(int(row[0] or 0), self.capacity)

    def remember(self, request_id: str, tenant: str, nugget_ids: Iterable[str],
                 document_ids: Iterable[str]) -> None:
        """Append what a Retrieve returned (and prune old rows now and then)."""
        nuggets = list(nugget_ids)
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO ledger (request_id, tenant, nuggets, documents)"
                " VALUES (?, ?, ?, ?)",
                (request_id, tenant, SEP.join(nuggets), SEP.join(document_ids)))
            self._inserts += 1
            if self._inserts % self.PRUNE_EVERY == 0:
                self._db.execute("DELETE FROM ledger WHERE seq <= (SELECT max(seq) FROM ledger)"
                                 " - ?", (self.capacity,))

    def report(self, tenant: str, request_id: str, cited_ids: Sequence[str]) -> CitationOutcome:
        """As :meth:`CitationLedger.report`, atomically across processes."""
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                row = db.execute(
                    "SELECT tenant, nuggets, documents, cited, seq FROM ledger"
                    " WHERE request_id = ?", (request_id,)).fetchone()
                newest = db.execute("SELECT coalesce(max(seq), 0) FROM ledger").fetchone()[0]
                if row is not None and row[4] <= newest - self.capacity:
                    row = None  # older than the bound, not yet pruned
                nuggets = frozenset(_split(row[1])) if row else frozenset()
                documents = frozenset(_split(row[2])) if row else frozenset()
                distinct = _check(request_id, tenant, self.capacity,
                                  row[0] if row else None, nuggets, documents, cited_ids)
                cited = set(_split(row[3])) if row else set()
                new = [c for c in distinct if c not in cited]
                if new:
                    db.execute("UPDATE ledger SET cited = ? WHERE request_id = ?",
                               (SEP.join([*cited, *new]), request_id))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        counted = tuple(c for c in new if c in nuggets)
        return CitationOutcome(len(counted), len(new) - len(counted),
                               len(nuggets) + len(documents), counted)

    def close(self) -> None:
        """Close the file."""
        self._db.close()


def _split(value: str) -> list[str]:
    return value.split(SEP) if value else []
