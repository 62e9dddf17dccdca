"""Citation ledgers: the in-memory one and the SQLite file the worker processes share."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from pathlib import Path

import pytest

from nuggetflow.errors import ConfigError, NotFoundError, ValidationError
from query.citations import CitationLedger, Ledger, SQLiteLedger

Factory = Callable[[Path, int], Ledger]
LEDGERS: dict[str, Factory] = {
    "memory": lambda _tmp, cap: CitationLedger(cap),
    "sqlite": lambda tmp, cap: SQLiteLedger(tmp / "ledger.db", cap),
}


@pytest.mark.parametrize("kind", LEDGERS)
def test_each_citation_counts_once_and_ids_are_checked(kind: str, tmp_path: Path) -> None:
    ledger = LEDGERS[kind](tmp_path, 10)
    ledger.remember("r", "acme", ["n1", "n2"], ["d1"])
    out = ledger.report("acme", "r", ["n1", "d1", "n1"])
    assert (out.nuggets, out.documents, out.retrieved) == (1, 1, 3)
    with pytest.raises(ValidationError) as err:
        ledger.report("acme", "r", ["n2", "zz"])
    assert err.value.field == "cited_ids" and "'zz'" in str(err.value)
    assert ledger.report("acme", "r", ["n2"]).nuggets == 1, "the rejected report counted nothing"
    assert ledger.report("acme", "r", ["n1", "n2"]).nuggets == 0, "already counted"
    with pytest.raises(NotFoundError) as nf:
        ledger.report("globex", "r", ["n1"])  # another tenant's request is not visible
    assert nf.value.field == "request_id"
    with pytest.raises(NotFoundError):
        ledger.report("acme", "never", ["n1"])
    assert len(ledger) == 1


@pytest.mark.parametrize("kind", LEDGERS)
def test_a_report_names_the_nuggets_it_counted(kind: str, tmp_path: Path) -> None:
    ledger = LEDGERS[kind](tmp_path, 3)
    ledger.remember("r1", "acme", ["n1", "n2"], ["d1"])
    first = ledger.report("acme", "r1", ["n1", "d1"])
    assert (first.nuggets, first.documents, first.nugget_ids) == (1, 1, ("n1",))
    again = ledger.report("acme", "r1", ["n1", "n2"])  # n1 counted once per request
    assert again.nugget_ids == ("n2",)


def test_ledger_is_a_bounded_lru() -> None:
    ledger = CitationLedger(2)
    ledger.remember("r1", "acme", ["n1"], [])
    ledger.remember("r2", "acme", ["n2"], ["d2"])
    ledger.report("acme", "r1", ["n1"])  # touching r1 makes r2 the oldest
    ledger.remember("r3", "acme", ["n3"], [])
    assert len(ledger) == 2
    with pytest.raises(NotFoundError):
        ledger.report("acme", "r2", ["n2"])
    out = ledger.report("acme", "r1", ["n1"])
    assert (out.nuggets, out.documents, out.retrieved) == (0, 0, 1)


def test_sqlite_ledger_keeps_the_newest_requests(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(SQLiteLedger, "PRUNE_EVERY", 4)
    ledger = SQLiteLedger(tmp_path / "l.db", 3)
    for i in range(10):
        ledger.remember(f"r{i}", "acme", [f"n{i}"], [])
    for old in ("r0", "r6"):  # r0 was pruned, r6 is beyond the bound (not pruned yet)
        with pytest.raises(NotFoundError):
            ledger.report("acme", old, [])
    assert ledger.report("acme", "r7", ["n7"]).nuggets == 1
    assert len(ledger) == 3
    rows = ledger._db.execute("SELECT count(*) FROM ledger").fetchone()[0]
    assert rows <= 3 + SQLiteLedger.PRUNE_EVERY


def test_bad_capacity_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        SQLiteLedger(tmp_path / "l.db", 0)


def _report_all(path: str, ids: list[str], out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    ledger = SQLiteLedger(path, 100)
    counted = sum(ledger.report("acme", "r", [i]).nuggets for i in ids)
    out.put(counted)


def test_workers_share_one_ledger_and_never_double_count(tmp_path: Path) -> None:
    """Retrieve recorded by one process; two other processes report overlapping citations
    concurrently: every id is counted exactly once in all."""
    path = tmp_path / "shared.db"
    ids = [f"n{i}" for i in range(40)]
    SQLiteLedger(path, 100).remember("r", "acme", ids, [])
    ctx = multiprocessing.get_context("spawn")
    out: multiprocessing.Queue = ctx.Queue()  # type: ignore[type-arg]
    procs = [ctx.Process(target=_report_all, args=(str(path), ids, out)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert out.get(timeout=5) + out.get(timeout=5) == len(ids)
