"""Writes that are safe across processes and hosts on OpenSearch: commit points by fact key.

OpenSearch has no multi-document transactions and no lock that outlives a client, so the
process-local writer lock cannot stop two processes (or hosts) from deriving two versions
from one head, or from publishing two conflicting values that each missed the other. Each
governance key of a tenant (the scope in which governance reads and writes: the lineages
whose facts share subject, predicate and scope) therefore has a *guard* document in a
small side index (``<index>-writers``), updated only with optimistic concurrency control
on its sequence number and primary term (``if_seq_no`` / ``if_primary_term``, which the
engine checks on the primary shard):

1. A write session (``IndexStore.writer(tenant, keys)``) reads the guards of the keys it
   will decide on (a realtime GET each) before it reads any head or runs governance.
2. The write claims those guards (and the guards of the keys it writes) with a
   compare-and-set from the sequence numbers it read, recording its bulk operations as an
   *intent*. A commit by another writer on one of those keys since the read moved its
   sequence number, so the claim fails (:class:`WriteContentionError`): nothing was
   written, and the caller reads the heads again and re-applies its decision.
3. The bulk request runs; then the intents are cleared (compare-and-set again).

A writer that finds an intent waits for it to clear; an intent left behind (its writer
died, or its bulk request failed without an answer) is completed by the next writer of the
key, from the operations it records: creating a version that exists already is skipped
and moving a head flag again changes nothing, so completing twice is harmless. An intent
whose operations OpenSearch rejects outright is undone instead. Commits on one key are
serial across every process; other keys and tenants do not wait for them.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from nuggetflow.errors import ValidationError, WriteContentionError, WritesPausedError
from nuggetflow.logging import get_logger

log = get_logger(__name__)

#: An intent from another process older than this (seconds, measured here from when this
#: process first saw it unchanged) is taken for abandoned and completed by this writer.
ABANDONED_AFTER = 15.0
_POLL = 0.05


@dataclass
class Seen:
    """What a session read of one guard: its sequence number and primary term (``None``
    when the guard does not exist yet)."""

    seq_no: int | None = None
    primary_term: int | None = None


#: Sends bulk operations; ValidationError when OpenSearch rejects any. With ``replay``
#: True, a ``create`` of a document that exists already is not an error.
Bulk = Callable[[list[dict[str, Any]], bool], Awaitable[None]]
#: Compensates a batch OpenSearch rejected: removes its new documents, restores heads.
Undo = Callable[[list[dict[str, Any]]], Awaitable[None]]


class CommitGuard:
    """The commit points of one OpenSearch index (see the module docstring), one per
    *scope*: a string naming a tenant's governance key (:func:`scope_of`).

    ``call`` runs a client method with the store's error mapping, ``client`` returns the
    store's connected client, ``apply`` sends a write's operations and ``undo``
    compensates a batch OpenSearch rejected.
    """

    def __init__(self, index: str, call: Callable[..., Awaitable[Any]],
                 client: Callable[[], Any], apply: Bulk, undo: Undo) -> None:
        self.index = f"{index}-writers"
        self._call = call
        self._client = client
        self._apply = apply
        self._undo = undo
        self.writer_id = uuid.uuid4().hex
        self._seen: ContextVar[dict[str, Seen] | None] = ContextVar(
            f"guard-{self.writer_id}", default=None)
        self.abandoned_after = ABANDONED_AFTER
        self.claims = 0  # successful claims (commits) by this process
        self.contended = 0  # claims refused because another writer committed first
        self.completed = 0  # abandoned intents this process completed

    async def create(self, replicas: int) -> None:
        """Create the guard index when missing (idempotent); an existing one takes
        ``replicas``, as the store's index does."""
        client = self._client()
        if await self._call(client.indices.exists, index=self.index):
            await self._call(client.indices.put_settings, index=self.index,
                             body={"index": {"number_of_replicas": replicas}})
            return
        from opensearchpy import RequestError

        with contextlib.suppress(RequestError):  # another process created it meanwhile
            await self._call(client.indices.create, index=self.index, body={
                "settings": {"index": {"number_of_shards": 1,
                                       "number_of_replicas": replicas}},
                "mappings": {"dynamic": False, "properties": {
                    "scope": {"type": "keyword"},
                    "intent": {"type": "object", "enabled": False}}}})

    async def drop(self) -> None:
        """Delete the guard index (tests and benchmarks only)."""
        await self._call(self._client().indices.delete, index=self.index,
                         ignore_unavailable=True)

    # --- sessions -----------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def session(self, scopes: Sequence[str]) -> AsyncIterator[None]:
        """Read the guard of each scope (completing an abandoned intent first) and keep
        what was read for :meth:`commit` in this task and the tasks it starts."""
        seen = dict(self._seen.get() or {})
        for scope in sorted(set(scopes) - set(seen)):
            seen[scope] = await self._settled(scope)
        token = self._seen.set(seen)
        try:
            yield
        finally:
            self._seen.reset(token)

    def active(self) -> bool:
        """True inside a :meth:`session`."""
        return self._seen.get() is not None

    @contextlib.contextmanager
    def apart(self) -> Iterator[None]:
        """Leave the task's session for a while: a write on scopes of its own (a tenant's
        review flags) is claimed and committed without the session's."""
        token = self._seen.set(None)
        try:
            yield
        finally:
            self._seen.reset(token)

    async def commit(self, scopes: Sequence[str], ops: list[dict[str, Any]]) -> None:
        """Claim the guards of the session and of ``scopes`` from what was read, run
        ``ops``, clear the guards.

        WriteContentionError, nothing written, when another writer committed on one of
        them since it was read. ValidationError from ``apply``: the batch is undone and
        the intents cleared. Any other failure leaves the intents for the next writer of
        those keys to complete (the write is decided)."""
        seen = self._seen.get()
        if seen is None:
            raise RuntimeError("CommitGuard.commit outside a session")
        for scope in sorted(set(scopes) - set(seen)):  # written, not named by the session
            seen[scope] = await self._settled(scope)
        intent = {"ops": ops, "at": datetime.now(UTC).isoformat(), "by": self.writer_id}
        claimed: list[str] = []
        try:
            for scope in sorted(seen):
                seen[scope] = await self._put(scope, seen[scope], intent)
                claimed.append(scope)
        except WriteContentionError:
            self.contended += 1
            for scope in claimed:  # release the ones this write had claimed
                seen[scope] = await self._clear(scope, seen[scope])
            raise
        self.claims += 1
        try:
            await self._apply(ops, False)
        except ValidationError:
            await self._undo(ops)
            for scope in claimed:
                seen[scope] = await self._clear(scope, seen[scope])
            raise
        except WritesPausedError:  # refused whole: nothing to undo, nothing to complete
            for scope in claimed:
                seen[scope] = await self._clear(scope, seen[scope])
            raise
        except BaseException as err:
            log.warning("write failed after its commit was claimed; the next writer of its "
                        "keys completes it", guards=len(claimed), error=str(err) or repr(err))
            raise
        for scope in claimed:
            seen[scope] = await self._clear(scope, seen[scope])

    # --- guard documents ----------------------------------------------------------------

    async def _get(self, scope: str) -> tuple[Seen, dict[str, Any] | None]:
        from opensearchpy import NotFoundError as OSNotFound

        try:
            doc = await self._call(self._client().get, index=self.index,
                                   id=guard_doc_id(scope))
        except OSNotFound:
            return Seen(), None
        return (Seen(int(doc["_seq_no"]), int(doc["_primary_term"])),
                doc["_source"].get("intent"))

    async def _settled(self, scope: str) -> Seen:
        """The guard of ``scope`` with no intent pending: wait for another writer's
        intent to clear, complete one that is abandoned (or this process's own)."""
        first_seen: tuple[int | None, float] | None = None
        while True:
            seen, intent = await self._get(scope)
            if not intent:
                return seen
            mine = intent.get("by") == self.writer_id  # this process holds the local lock
            if first_seen is None or first_seen[0] != seen.seq_no:
                first_seen = (seen.seq_no, time.monotonic())
            if mine or time.monotonic() - first_seen[1] >= self.abandoned_after:
                seen = await self._complete(scope, seen, intent)
                if seen.seq_no is not None:
                    return seen
                continue  # someone else completed or cleared it first: read again
            await asyncio.sleep(_POLL)

    async def _complete(self, scope: str, seen: Seen, intent: dict[str, Any]) -> Seen:
        """Run an abandoned intent's operations again, then clear it (Seen() when another
        writer cleared it first)."""
        ops = list(intent.get("ops") or [])
        log.warning("completing a write another writer left half done", scope=scope,
                    writer=intent.get("by"), since=intent.get("at"), ops=len(ops))
        try:
            await self._apply(ops, True)
        except ValidationError as err:
            log.error("an abandoned write is rejected by OpenSearch; undoing it",
                      scope=scope, error=str(err))
            await self._undo(ops)
        self.completed += 1
        try:
            return await self._clear(scope, seen, strict=True)
        except WriteContentionError:
            return Seen()

    async def _put(self, scope: str, seen: Seen, intent: dict[str, Any] | None) -> Seen:
        """Compare-and-set the guard from ``seen`` (create it when ``seen`` has none)."""
        from opensearchpy import ConflictError as OSConflict

        body = {"scope": scope, "intent": intent}
        cas: dict[str, Any] = ({"op_type": "create"} if seen.seq_no is None else
                               {"if_seq_no": seen.seq_no, "if_primary_term": seen.primary_term})
        try:
            reply = await self._call(self._client().index, index=self.index,
                                     id=guard_doc_id(scope), body=body, **cas)
        except OSConflict:
            raise WriteContentionError(
                "another writer committed a change to a nugget with the same fact key since "
                "this write read it; nothing was written", field="id") from None
        return Seen(int(reply["_seq_no"]), int(reply["_primary_term"]))

    async def _clear(self, scope: str, seen: Seen, *, strict: bool = False) -> Seen:
        """Clear the intent this writer put (compare-and-set). When another writer
        completed and cleared it first, read the guard again (``strict``: raise
        WriteContentionError instead)."""
        try:
            return await self._put(scope, seen, None)
        except WriteContentionError:
            if strict:
                raise
            settled, _ = await self._get(scope)
            return settled

    def counters(self) -> dict[str, int]:
        """Claims, refused claims and completed intents of this process (for stats)."""
        return {"guard_claims": self.claims, "guard_contended": self.contended,
                "guard_completed": self.completed}


def scope_of(tenant: str, key: tuple[str, str, str]) -> str:
    """The guard scope of a tenant's governance key."""
    return "\x1f".join((tenant, *key))


def guard_doc_id(scope: str) -> str:
    """The guard's ``_id``: a digest, so any scope fits OpenSearch's id limit."""
    return "g:" + hashlib.sha256(scope.encode()).hexdigest()
