"""How published nuggets are used over time, and the review that use drives.

docs/architecture.md, "Usage-driven review". The query service counts, per nugget version
and day, three things: how often the nugget was among the top re-ranked candidates of a
Retrieve (``considered``: its topic was queried), how often a Retrieve returned it
(``retrieved``), and how often a ReportCitations counted it (``cited``). The counts are
gathered in memory on the query path (:class:`UsageRecorder`: a dictionary increment per
id) and added to the store every NUGGETFLOW_USAGE_FLUSH_SECONDS and on shutdown, so they
survive restarts and are shared by every process that serves the same store.

:func:`review_usage` reads a tenant's published heads with their counts over the last
NUGGETFLOW_USAGE_WINDOW_DAYS and raises a review flag, with its reason, for a nugget

- whose topic was queried often (``considered`` >= NUGGETFLOW_USAGE_MIN_TOPIC_QUERIES) and
  that was never cited in the window (``uncited``);
- that was retrieved often (>= NUGGETFLOW_USAGE_MIN_RETRIEVALS) and cited in fewer than
  NUGGETFLOW_USAGE_MIN_CITATION_RATE of those retrievals (``seldom_cited``);
- whose validity ends within NUGGETFLOW_USAGE_EXPIRY_DAYS (``expiring``).

The flags are stored (they replace the tenant's earlier ones; a flag keeps the time it was
first raised and whether a reviewer dismissed it, as long as it is about the same version).
A new version of the nugget starts with no counts and no flags: counts are per version.
"""

from __future__ import annotations

import asyncio
import enum
import hashlib
import json
import os
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from nuggetflow.logging import get_logger
from nuggetflow.settings import Settings
from query.model import Nugget, Publication, State, utcnow

if TYPE_CHECKING:
    from query.store import IndexStore

log = get_logger(__name__)

HEADS_BATCH = 500


@dataclass(frozen=True)
class UsageRow:
    """Counts to add for one nugget version on one day (UTC)."""

    tenant: str
    item_id: str
    day: date
    considered: int = 0
    retrieved: int = 0
    cited: int = 0


@dataclass(frozen=True)
class UsageTotals:
    """A version's counts summed over days, and the last day it was cited."""

    considered: int = 0
    retrieved: int = 0
    cited: int = 0
    last_cited: date | None = None

    def __add__(self, other: UsageTotals) -> UsageTotals:
        lasts = [d for d in (self.last_cited, other.last_cited) if d is not None]
        return UsageTotals(self.considered + other.considered,
                           self.retrieved + other.retrieved, self.cited + other.cited,
                           max(lasts) if lasts else None)


class FlagKind(enum.StrEnum):
    """Why a published nugget goes back to review: its use (the first three, judged by
    :func:`review_usage`) or a corpus change (the last two, raised by the re-probe step;
    kept while the nugget's version is the same)."""

    UNCITED = "uncited"
    SELDOM_CITED = "seldom_cited"
    EXPIRING = "expiring"
    BURIED = "buried"
    REDUNDANT = "redundant"


#: The kinds :func:`review_usage` does not judge (it keeps them for the same version).
EVENT_KINDS = frozenset({FlagKind.BURIED, FlagKind.REDUNDANT})


@dataclass(frozen=True)
class ReviewFlag:
    """A published nugget sent back to review by its use (or its validity's end)."""

    tenant: str
    lineage_id: str
    version_id: str
    kind: FlagKind
    reason: str
    raised_at: datetime
    considered: int = 0
    retrieved: int = 0
    cited: int = 0
    dismissed: bool = False
    title: str = ""

    def to_json(self) -> str:
        """The flag as one JSON object (how stores keep it)."""
        out = asdict(self)
        out["kind"] = self.kind.value
        out["raised_at"] = self.raised_at.isoformat()
        return json.dumps(out, sort_keys=True)

    @classmethod
    def from_json(cls, raw: str) -> ReviewFlag:
        """The flag :meth:`to_json` wrote."""
        data: dict[str, Any] = json.loads(raw)
        data["kind"] = FlagKind(data["kind"])
        data["raised_at"] = datetime.fromisoformat(data["raised_at"])
        return cls(**data)


@dataclass(frozen=True)
class UsagePolicy:
    """When use sends a published nugget to review (the NUGGETFLOW_USAGE_* settings)."""

    window_days: int = 30
    min_topic_queries: int = 20
    min_retrievals: int = 50
    min_citation_rate: float = 0.05
    expiry_days: int = 14

    @classmethod
    def from_settings(cls, settings: Settings) -> UsagePolicy:
        """The policy the settings configure."""
        return cls(settings.usage_window_days, settings.usage_min_topic_queries,
                   settings.usage_min_retrievals, settings.usage_min_citation_rate,
                   settings.usage_expiry_days)


def judge(head: Nugget, usage: UsageTotals, policy: UsagePolicy,
          now: datetime) -> list[tuple[FlagKind, str]]:
    """The flags one published head earns with ``usage`` over the policy's window."""
    days = policy.window_days
    out: list[tuple[FlagKind, str]] = []
    if usage.cited == 0 and usage.considered >= policy.min_topic_queries:
        out.append((FlagKind.UNCITED,
                    f"not cited in {days} days while its topic was queried "
                    f"{usage.considered} times (returned {usage.retrieved} times)"))
    elif usage.retrieved >= policy.min_retrievals and \
            usage.cited < policy.min_citation_rate * usage.retrieved:
        out.append((FlagKind.SELDOM_CITED,
                    f"retrieved {usage.retrieved} times in {days} days and cited "
                    f"{usage.cited} times ({usage.cited / usage.retrieved:.1%}, under "
                    f"{policy.min_citation_rate:.0%})"))
    end = head.validity.end
    if end is not None and now < end <= now + timedelta(days=policy.expiry_days):
        out.append((FlagKind.EXPIRING,
                    f"its validity ends on {end.date().isoformat()}, in "
                    f"{max(0, (end - now).days)} days"))
    return out


async def review_usage(store: IndexStore, tenant: str, policy: UsagePolicy,
                       now: datetime | None = None) -> list[ReviewFlag]:
    """Judge every published head of ``tenant`` on its use over the policy's window, store
    the flags (replacing the tenant's earlier ones; those a corpus change raised stay
    while their version is the head) and return them, by lineage id then kind. The
    judging reads first; the flags are then merged with the stored ones and written in
    one store update, so a dismissal or a re-probe's flag in between is kept."""
    now = now or utcnow()
    since = (now - timedelta(days=policy.window_days)).date()
    judged: list[ReviewFlag] = []
    live_ids: set[str] = set()
    after = ""
    while True:
        heads = await store.heads_page(tenant, [Publication.PUBLISHED], HEADS_BATCH, after)
        if not heads:
            break
        after = heads[-1].id
        live = [h for h in heads if h.state is not State.DEPRECATED]
        live_ids.update(h.id for h in live)
        totals = await store.usage_totals(tenant, [h.id for h in live], since)
        for head in live:
            usage = totals.get(head.id, UsageTotals())
            judged += [ReviewFlag(tenant, head.lineage_id or head.id, head.id, kind, reason,
                                  now, usage.considered, usage.retrieved, usage.cited,
                                  title=head.title)
                       for kind, reason in judge(head, usage, policy, now)]
        if len(heads) < HEADS_BATCH:
            break

    def merged(stored: list[ReviewFlag]) -> list[ReviewFlag]:
        earlier = {(f.lineage_id, f.version_id, f.kind): f for f in stored}
        flags = []
        for flag in judged:
            old = earlier.get((flag.lineage_id, flag.version_id, flag.kind))
            flags.append(flag if old is None else
                         replace(flag, raised_at=old.raised_at, dismissed=old.dismissed))
        flags += [f for f in stored if f.kind in EVENT_KINDS and f.version_id in live_ids]
        return sorted(flags, key=lambda f: (f.lineage_id, f.kind.value))

    return await store.update_review_flags(tenant, merged)


async def raise_flags(store: IndexStore, tenant: str, new: Sequence[ReviewFlag]) -> None:
    """Add ``new`` to the tenant's flags (replacing one of the same lineage and kind; a
    flag about the same version keeps when it was first raised and its dismissal), in
    one store update."""
    keys = {(f.lineage_id, f.kind) for f in new}

    def merged(stored: list[ReviewFlag]) -> list[ReviewFlag]:
        old = {(f.lineage_id, f.kind): f for f in stored}
        out = [f for f in stored if (f.lineage_id, f.kind) not in keys]
        for flag in new:
            prev = old.get((flag.lineage_id, flag.kind))
            if prev is not None and prev.version_id == flag.version_id:
                flag = replace(flag, raised_at=prev.raised_at, dismissed=prev.dismissed)
            out.append(flag)
        return sorted(out, key=lambda f: (f.lineage_id, f.kind.value))

    await store.update_review_flags(tenant, merged)


async def dismiss_flag(store: IndexStore, tenant: str, lineage_id: str,
                       kind: FlagKind | None = None) -> list[ReviewFlag]:
    """Mark the lineage's flags (of ``kind``, or every kind) as seen by a reviewer who
    keeps the nugget as it is: they stay dismissed while the version is the same. Returns
    the flags dismissed ([] when there were none); one store update."""
    hit: list[ReviewFlag] = []

    def dismissed(stored: list[ReviewFlag]) -> list[ReviewFlag]:
        hit[:] = [f for f in stored
                  if f.lineage_id == lineage_id and (kind is None or f.kind is kind)]
        return [replace(f, dismissed=True) if f in hit else f for f in stored]

    await store.update_review_flags(tenant, dismissed)
    return [replace(f, dismissed=True) for f in hit]


class UsageRecorder:
    """Counts gathered on the query path and added to the store in batches.

    Recording is a dictionary increment (no I/O). :meth:`flush` hands everything gathered
    so far to the store as one batch with an id of its own. A batch the store did not
    confirm is kept as it is, with its id, and sent again first at the next flush: a store
    that applied it but lost the answer sees the same id and applies it once. Nothing is
    lost while the process lives.
    """

    def __init__(self, clock: Callable[[], datetime] = utcnow) -> None:
        self._clock = clock
        self._counts: defaultdict[tuple[str, str, date], list[int]] = defaultdict(
            lambda: [0, 0, 0])
        self._unsent: list[tuple[str, list[UsageRow]]] = []
        self._flushes = 0
        self._process = f"{os.getpid()}-{os.urandom(4).hex()}"

    def __len__(self) -> int:
        return len(self._counts) + sum(len(rows) for _, rows in self._unsent)

    def _add(self, tenant: str, ids: Iterable[str], column: int) -> None:
        day = self._clock().date()
        for item in ids:
            self._counts[(tenant, item, day)][column] += 1

    def considered(self, tenant: str, ids: Iterable[str]) -> None:
        """Nugget versions among a Retrieve's top re-ranked candidates."""
        self._add(tenant, ids, 0)

    def retrieved(self, tenant: str, ids: Iterable[str]) -> None:
        """Nugget versions a Retrieve returned."""
        self._add(tenant, ids, 1)

    def cited(self, tenant: str, ids: Iterable[str]) -> None:
        """Nugget versions a ReportCitations counted."""
        self._add(tenant, ids, 2)

    def rows(self) -> list[UsageRow]:
        """Everything gathered and not yet confirmed by the store, as rows."""
        return [*(r for _, rows in self._unsent for r in rows), *self._current()]

    def _current(self) -> list[UsageRow]:
        return [UsageRow(t, item, day, c, r, k)
                for (t, item, day), (c, r, k) in sorted(self._counts.items())]

    def pending(self, tenant: str, ids: Sequence[str]) -> dict[str, UsageTotals]:
        """What this process gathered and the store has not confirmed yet."""
        wanted = set(ids)
        out: dict[str, UsageTotals] = {}
        for row in self.rows():
            if row.tenant == tenant and row.item_id in wanted:
                out[row.item_id] = out.get(row.item_id, UsageTotals()) + UsageTotals(
                    row.considered, row.retrieved, row.cited,
                    row.day if row.cited else None)
        return out

    async def flush(self, store: IndexStore) -> int:
        """Send the unconfirmed batches (with their ids), then what was gathered since as
        a new batch; the number of rows the store confirmed. A failure is raised after
        keeping every unconfirmed batch for the next flush."""
        if self._counts:
            self._flushes += 1
            flush_id = hashlib.sha256(
                f"{self._process}:{self._flushes}".encode()).hexdigest()[:16]
            self._unsent.append((flush_id, self._current()))
            self._counts = defaultdict(lambda: [0, 0, 0])
        sent = 0
        while self._unsent:
            flush_id, rows = self._unsent[0]
            await store.add_usage(rows, flush_id)
            self._unsent.pop(0)
            sent += len(rows)
        return sent

    async def run(self, store: IndexStore, interval: float) -> None:
        """Flush every ``interval`` seconds until cancelled; a failed flush is logged and
        its batches go with the next one."""
        while True:
            await asyncio.sleep(interval)
            try:
                await self.flush(store)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("usage counts not stored yet; kept for the next flush",
                            rows=len(self), error=str(exc) or repr(exc))


async def published_tenants(store: IndexStore) -> list[str]:
    """The tenants with at least one published nugget."""
    return sorted({t for (t, p), n in (await store.publication_counts()).items()
                   if p is Publication.PUBLISHED and n})


async def review_loop(store: IndexStore, policy: UsagePolicy, interval: float,
                      on_flags: Callable[[str, list[str]], None] | None = None) -> None:
    """Run :func:`review_usage` for every tenant with published nuggets every
    ``interval`` seconds until cancelled; ``on_flags(tenant, kinds)`` gets the kinds of
    the tenant's open flags (the metrics). Failures are logged and tried again at the next
    tick."""
    while True:
        await asyncio.sleep(interval)
        try:
            for tenant in await published_tenants(store):
                flags = await review_usage(store, tenant, policy)
                open_flags = [f for f in flags if not f.dismissed]
                if on_flags is not None:
                    on_flags(tenant, [f.kind.value for f in open_flags])
                if open_flags:
                    log.info("usage review", tenant=tenant, flagged=len(open_flags))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("usage review failed", error=str(exc) or repr(exc))
