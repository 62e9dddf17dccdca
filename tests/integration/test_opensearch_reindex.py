"""Index layout by configuration, the alias and ``nuggetflow reindex`` on a real node."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from nuggetflow.errors import WritesPausedError
from nuggetflow.settings import Settings
from query.backends.opensearch import ID_SCHEME, IndexLayout, OpenSearchStore, _mappings
from query.backends.reindex import reindex
from query.embeddings import Vector
from query.index import NuggetIndex
from query.model import View, utcnow
from query.store import GovernanceFilter
from tests.helpers import make_nugget, make_passage
from tests.support.race_writer import DigestEmbedder

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
TENANT = "acme"


@pytest.fixture
async def index(opensearch_url: str) -> AsyncIterator[NuggetIndex]:
    store = OpenSearchStore(opensearch_url, index=f"rx-{uuid.uuid4().hex[:12]}")
    idx = NuggetIndex(store, DigestEmbedder(), Settings())
    yield idx
    await store.start()
    await store.drop()
    await store.stop()


async def _fill(index: NuggetIndex) -> list[str]:
    """Two published nuggets (one edited) and two passages; the lineage ids."""
    ids = []
    for subject in ("export schedule", "audit log retention"):
        n = await index.submit(make_nugget(TENANT, subject=subject, sources=(subject,),
                                           anchors=(f"when is the {subject}",)))
        await index.approve(TENANT, n.id)
        ids.append(n.id)
    await index.edit(TENANT, ids[0], "clearer", body="Exports run nightly at 02:00 UTC.")
    await index.ingest_passages([make_passage(TENANT, "doc-1#0", "Exports", "How exports work."),
                                 make_passage(TENANT, "doc-2#0", "Audit", "Audit logs.")])
    return ids


async def _snapshot(store: OpenSearchStore, ids: list[str]) -> object:
    heads = [(await store.head(TENANT, i)).id for i in ids]
    history = [[v.id for v in await store.history(TENANT, i)] for i in ids]
    flt = GovernanceFilter(TENANT, utcnow(), View.ACTIVE)
    vec = DigestEmbedder().embed(["Exports run nightly at 02:00 UTC."])[0]
    dense = [s.id for s in await store.dense(vec, flt, 10)]
    return heads, history, dense


async def test_a_new_index_sits_behind_the_alias_with_the_configured_layout(
        opensearch_url: str) -> None:
    name = f"rx-{uuid.uuid4().hex[:12]}"
    layout = IndexLayout(shards=2, replicas=0, refresh_interval="2s", knn_m=8,
                         knn_ef_construction=64)
    store = OpenSearchStore(opensearch_url, index=name, layout=layout)
    await store.start()
    try:
        assert await store.concrete_indices() == [f"{name}-v1"]
        got = await store._call(store._client.indices.get, index=f"{name}-v1")
        settings = got[f"{name}-v1"]["settings"]["index"]
        assert (settings["number_of_shards"], settings["refresh_interval"]) == ("2", "2s")
        method = got[f"{name}-v1"]["mappings"]["properties"]["vector"]["method"]
        assert method["parameters"] == {"m": 8, "ef_construction": 64}
        # replicas and refresh interval follow the settings at the next start
        again = OpenSearchStore(opensearch_url, index=name,
                                layout=IndexLayout(shards=2, refresh_interval="5s"))
        await again.start()
        got = await again._call(again._client.indices.get_settings, index=name)
        assert got[f"{name}-v1"]["settings"]["index"]["refresh_interval"] == "5s"
        await again.stop()
    finally:
        await store.drop()
        await store.stop()


async def test_reindex_command_moves_the_alias_and_keeps_every_document(
        index: NuggetIndex, opensearch_url: str) -> None:
    store = index.store
    assert isinstance(store, OpenSearchStore)
    await index.start()
    ids = await _fill(index)
    before = await _snapshot(store, ids)
    count = (await store._call(store._client.count, index=store.index))["count"]
    env = {**os.environ, "PYTHONPATH": str(ROOT),
           "NUGGETFLOW_STORE": opensearch_url.replace("http://", "opensearch://"),
           "NUGGETFLOW_OPENSEARCH_INDEX": store.index, "NUGGETFLOW_OPENSEARCH_SHARDS": "3",
           "NUGGETFLOW_LOG_LEVEL": "WARNING"}
    proc = subprocess.run([sys.executable, "-m", "app", "reindex"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert (report["old"], report["new"]) == (f"{store.index}-v1", f"{store.index}-v2")
    assert report["documents"] == count and report["old_deleted"] is True
    assert await store.concrete_indices() == [f"{store.index}-v2"]
    shards = await store._call(store._client.indices.get_settings, index=store.index)
    assert shards[f"{store.index}-v2"]["settings"]["index"]["number_of_shards"] == "3"
    assert await _snapshot(store, ids) == before  # the running store reads through the alias
    edited = await index.edit(TENANT, ids[1], "after the reindex", body="Kept for 400 days.")
    assert (await store.head(TENANT, ids[1])).id == edited.id


async def test_an_index_made_before_aliases_is_replaced_by_the_alias(
        opensearch_url: str) -> None:
    name = f"rx-{uuid.uuid4().hex[:12]}"
    store = OpenSearchStore(opensearch_url, index=name)
    store._connect()
    mappings = _mappings(store.dim)
    assert mappings["_meta"]["nuggetflow_ids"] == ID_SCHEME
    await store._call(store._client.indices.create, index=name, body={
        "settings": IndexLayout().index_settings(), "mappings": mappings})
    await store.stop()
    index = NuggetIndex(store, DigestEmbedder(), Settings())
    await index.start()
    try:
        assert await store.concrete_indices() == [name]  # used as it is
        ids = await _fill(index)
        before = await _snapshot(store, ids)
        report = await reindex(store)
        assert (report.old, report.new, report.old_deleted) == (name, f"{name}-v1", True)
        assert await store.concrete_indices() == [f"{name}-v1"]
        assert await _snapshot(store, ids) == before
    finally:
        await store.drop()
        await store.stop()


class ShiftedEmbedder(DigestEmbedder):
    """Another 'model': other vectors for the same texts."""

    def embed(self, texts: Sequence[str]) -> Vector:
        return super().embed([f"shifted {t}" for t in texts])


async def test_re_embedding_writes_the_new_model_s_vectors(index: NuggetIndex) -> None:
    store = index.store
    assert isinstance(store, OpenSearchStore)
    await index.start()
    ids = await _fill(index)
    shown: list[tuple[int, int]] = []
    report = await reindex(store, embedder=ShiftedEmbedder(),
                           progress=lambda done, total: shown.append((done, total)))
    assert report.re_embedded and shown[-1][0] == shown[-1][1] == report.documents
    head = await store.head(TENANT, ids[0])
    flt = GovernanceFilter(TENANT, utcnow(), View.ACTIVE, include_documents=False)
    new_vec = ShiftedEmbedder().embed([head.embedding_text])[0]
    best = await store.dense(new_vec, flt, 1)
    assert best[0].id == head.id and best[0].score == pytest.approx(1.0, abs=1e-3)
    assert await store.statement_cosines(TENANT, [head.id], new_vec) == {
        head.id: pytest.approx(1.0, abs=1e-3)}


async def test_writes_while_paused_are_refused_whole_and_succeed_after(
        index: NuggetIndex) -> None:
    """During a reindex's copy the old index is write-blocked: an edit fails as retriable
    (WritesPausedError), nothing written and no intent left behind; afterwards it works."""
    store = index.store
    assert isinstance(store, OpenSearchStore)
    await index.start()
    ids = await _fill(index)
    [concrete] = await store.concrete_indices()
    head = await store.head(TENANT, ids[1])
    await store._call(store._client.indices.put_settings, index=concrete,
                      body={"index": {"blocks": {"write": True}}})
    try:
        with pytest.raises(WritesPausedError) as paused:
            await index.edit(TENANT, ids[1], "during the copy", body="Kept for 400 days.")
        assert paused.value.retriable
    finally:
        await store._call(store._client.indices.put_settings, index=concrete,
                          body={"index": {"blocks": {"write": False}}})
    assert (await store.head(TENANT, ids[1])).id == head.id
    assert store._guard.completed == 0
    edited = await index.edit(TENANT, ids[1], "after the copy", body="Kept for 400 days.")
    assert edited.parent_id == head.id and store._guard.completed == 0
