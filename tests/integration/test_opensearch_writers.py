"""Several writers on one OpenSearch index: processes that race on the same lineages.

Every lineage must stay a chain (versions 1..n, each the child of the one before, one
head, the newest) and every decision must be applied exactly once, whichever process makes
it. The same race with the process-local lock alone (the store before the commit guard)
forks lineages, which shows the check can fail.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from nuggetflow.errors import BackendUnavailableError, WriteContentionError
from nuggetflow.settings import Settings
from query.backends.guard import guard_doc_id, scope_of
from query.backends.opensearch import OpenSearchStore
from query.index import NuggetIndex
from query.model import ItemType, Nugget, Publication, State, next_version, utcnow
from tests.helpers import make_nugget
from tests.support.race_writer import DigestEmbedder

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
TENANT = "acme"


@pytest.fixture
async def index(opensearch_url: str) -> AsyncIterator[NuggetIndex]:
    store = OpenSearchStore(opensearch_url, index=f"writers-{uuid.uuid4().hex[:12]}")
    idx = NuggetIndex(store, DigestEmbedder(), Settings())
    await idx.start()
    yield idx
    await store.drop()
    await idx.stop()


async def _seed(index: NuggetIndex) -> dict[str, str]:
    """Two lineages to edit (their own keys) and two pending ones whose facts conflict."""
    ids = {}
    for name, subject in (("a", "export schedule"), ("b", "audit log retention")):
        n = await index.submit(make_nugget(TENANT, subject=subject, obj=f"{name} value",
                                           sources=(f"ev-{name}",)))
        ids[name] = n.id
    for name, obj in (("p1", "Workspace Owner"), ("p2", "Billing Admin")):
        n = await index.submit(make_nugget(TENANT, obj=obj, sources=(f"ev-{name}",)))
        ids[name] = n.id
    return ids


def _race(url: str, index_name: str, ids: dict[str, str], *, unguarded: bool,
          edits: int = 12, layout: tuple[int, int] = (1, 0)) -> list[dict[str, object]]:
    """Two writer processes started together (on an index of ``layout``: shards,
    replicas); their request records."""
    start_at = time.time() + 6.0
    procs = [subprocess.Popen(
        [sys.executable, "-m", "tests.support.race_writer", url, index_name, TENANT,
         "--worker", worker, "--edits", str(edits), "--lineages", f"{ids['a']},{ids['b']}",
         "--approve", ids[pending], "--start-at", str(start_at), "--pause", "0.05",
         "--shards", str(layout[0]), "--replicas", str(layout[1]),
         *(["--unguarded"] if unguarded else [])],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "NUGGETFLOW_LOG_LEVEL": "WARNING"})
        for worker, pending in (("w1", "p1"), ("w2", "p2"))]
    records: list[dict[str, object]] = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err[-3000:]
        records += [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert len(records) == 2 * (edits + 1), records
    return records


async def _chain_faults(index: NuggetIndex, lineage: str) -> list[str]:
    """How the lineage fails to be a chain (empty: it is one)."""
    store = index.store
    assert isinstance(store, OpenSearchStore)
    versions = await store.history(TENANT, lineage)
    faults = []
    numbers = [v.version for v in versions]
    if numbers != list(range(1, len(versions) + 1)):
        faults.append(f"version numbers {numbers}")
    for parent, child in itertools.pairwise(versions):
        if child.parent_id != parent.id:
            faults.append(f"v{child.version} {child.id} is a child of {child.parent_id}, "
                          f"not of v{parent.version}")
    reply = await store._search({"query": {"bool": {"filter": [
        {"term": {"tenant": TENANT}}, {"term": {"lineage": lineage}},
        {"term": {"type": int(ItemType.NUGGET)}}, {"term": {"is_head": True}}]}},
        "_source": ["version"], "size": 100})
    heads = [h["_source"]["version"] for h in reply["hits"]["hits"]]
    if heads != [max(numbers)]:
        faults.append(f"heads at versions {heads}, newest is v{max(numbers)}")
    return faults


async def _faults(index: NuggetIndex, ids: dict[str, str],
                  records: list[dict[str, object]]) -> list[str]:
    faults = []
    for name in ("a", "b", "p1", "p2"):
        faults += [f"{name}: {f}" for f in await _chain_faults(index, ids[name])]
    for name in ("a", "b"):
        versions = await index.store.history(TENANT, ids[name])
        carried = Counter(v.request_id for v in versions if v.request_id)
        applied = {str(r["request"]) for r in records
                   if r["lineage"] == ids[name] and r["outcome"] == "applied"}
        twice = [rid for rid, n in carried.items() if n > 1]
        if twice:
            faults.append(f"{name}: requests applied twice {twice}")
        if set(carried) != applied:
            faults.append(f"{name}: versions carry requests {sorted(carried)}, "
                          f"applied were {sorted(applied)}")
        if len(versions) != 1 + len(applied):
            faults.append(f"{name}: {len(versions)} versions for {len(applied)} edits")
    p1, p2 = [await index.head(TENANT, ids[n]) for n in ("p1", "p2")]
    # Approved one after the other, two conflicting values from one source each are both
    # Contested (whichever came first); both Active means one approval missed the other.
    for name, head in (("p1", p1), ("p2", p2)):
        if (head.publication, head.state) != (Publication.PUBLISHED, State.CONTESTED):
            faults.append(f"{name}: {head.publication.name}/{head.state.name}, "
                          "expected PUBLISHED/CONTESTED")
    return faults


async def test_two_writer_processes_keep_every_lineage_a_chain(
        index: NuggetIndex, opensearch_url: str) -> None:
    ids = await _seed(index)
    assert isinstance(index.store, OpenSearchStore)
    records = await asyncio.to_thread(_race, opensearch_url, index.store.index, ids,
                                      unguarded=False)
    assert [r for r in records if r["outcome"] != "applied"] == []
    assert await _faults(index, ids, records) == []


async def test_the_process_local_lock_alone_forks_lineages(
        index: NuggetIndex, opensearch_url: str) -> None:
    """The same race with the commit guard off: the checks above catch the damage."""
    ids = await _seed(index)
    assert isinstance(index.store, OpenSearchStore)
    records = await asyncio.to_thread(_race, opensearch_url, index.store.index, ids,
                                      unguarded=True)
    faults = await _faults(index, ids, records)
    assert any("child of" in f or "heads at" in f or "version numbers" in f
               for f in faults), faults


async def test_a_write_decided_before_another_commit_is_refused(
        index: NuggetIndex, opensearch_url: str) -> None:
    """Two stores (as two processes): a session that read the guard before the other's
    commit cannot commit; nothing of it is written."""
    ids = await _seed(index)
    store = index.store
    assert isinstance(store, OpenSearchStore)
    other = OpenSearchStore(opensearch_url, index=store.index)
    await other.start()
    try:
        head = await store.head(TENANT, ids["a"])
        mine, theirs = _child(head, "mine"), _child(head, "theirs")
        vec = DigestEmbedder().embed([mine.embedding_text])
        async with store.writer(TENANT, [head.key]):
            async with other.writer(TENANT, [head.key]):
                await other.write_nuggets([theirs], [None])
            with pytest.raises(WriteContentionError) as refused:
                await store.write_nuggets([mine], [vec[0]])
        assert refused.value.retriable and refused.value.field == "id"
        assert [v.id for v in await store.history(TENANT, ids["a"])] == [head.id, theirs.id]
        assert store._guard.contended == 1
        # a session begun after that commit writes
        async with store.writer(TENANT, [head.key]):
            await store.write_nuggets([_child(theirs, "mine, again")], [None])
        assert await _chain_faults(index, ids["a"]) == []
    finally:
        await other.stop()


def _child(head: Nugget, who: str) -> Nugget:
    return next_version(head, f"edit by {who}", utcnow(), body=f"Changed by {who}.")


async def _abandon_a_write(store: OpenSearchStore, lineage: str,
                           monkeypatch: pytest.MonkeyPatch) -> tuple[Nugget, Nugget]:
    """Claim a commit whose bulk request fails without an answer (as if the writer died
    mid-request): (the head before, the version the write was to add)."""
    head = await store.head(TENANT, lineage)
    child = _child(head, "lost")

    async def no_answer(ops: object, refresh: object = "wait_for", **_: object) -> None:
        raise BackendUnavailableError("OpenSearch at test unreachable: connection reset")

    with monkeypatch.context() as patch:
        patch.setattr(store, "_bulk", no_answer)
        with pytest.raises(BackendUnavailableError):
            await store.write_nuggets([child], [None])
    assert [v.id for v in await store.history(TENANT, lineage)] == [head.id]
    return head, child


async def _intent(store: OpenSearchStore, key: tuple[str, str, str]) -> object:
    doc = await store._call(store._client.get, index=store._guard.index,
                                            id=guard_doc_id(scope_of(TENANT, key)))
    return doc["_source"]["intent"]


async def test_a_write_left_half_done_is_completed_by_another_process(
        index: NuggetIndex, opensearch_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The next writer of the tenant, in another process, first gives the intent time to
    finish, then completes the write from it: the lineage is a chain, the version the
    lost write was to add is its head, and the intent is cleared."""
    ids = await _seed(index)
    store = index.store
    assert isinstance(store, OpenSearchStore)
    _, child = await _abandon_a_write(store, ids["a"], monkeypatch)
    assert await _intent(store, child.key) is not None
    other = OpenSearchStore(opensearch_url, index=store.index)
    await other.start()
    other._guard.abandoned_after = 0.5
    try:
        began = time.monotonic()
        async with other.writer(TENANT, [child.key]):
            waited = time.monotonic() - began
            now = await other.head(TENANT, ids["a"])
        assert now.id == child.id
        assert waited >= 0.5
        assert other._guard.completed == 1
        assert await _chain_faults(index, ids["a"]) == []
        assert await _intent(store, child.key) is None
    finally:
        await other.stop()


async def test_a_writer_completes_its_own_half_done_write_at_once(
        index: NuggetIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    """This process's own intent cannot be in flight (its lock is held): the next session
    completes it without waiting; a retried edit then derives from the completed version."""
    ids = await _seed(index)
    store = index.store
    assert isinstance(store, OpenSearchStore)
    _, child = await _abandon_a_write(store, ids["a"], monkeypatch)
    began = time.monotonic()
    edited = await index.edit(TENANT, ids["a"], "after the outage", body="Edited later.")
    assert time.monotonic() - began < store._guard.abandoned_after
    assert edited.parent_id == child.id and store._guard.completed == 1
    assert await _chain_faults(index, ids["a"]) == []
