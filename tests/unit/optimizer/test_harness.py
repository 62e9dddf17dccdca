"""The probe harness: calibrated thresholds for statement and anchor matches."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from nuggetflow.settings import Settings
from optimizer.accounting import Meter
from optimizer.harness import BuiltinHarness, make_candidate, rerank_score
from optimizer.local import local_roles
from optimizer.types import NuggetDraft
from query.backends.sqlite import SQLiteStore
from query.corpus import Document, passages_of
from query.embeddings import MiniLMEmbedder
from query.index import NuggetIndex

CORPUS = Path(__file__).resolve().parents[3] / "bench" / "data" / "gnome-help" / "corpus.jsonl"
T0 = datetime(2025, 1, 1, tzinfo=UTC)


@pytest.fixture
async def harness(embedder: MiniLMEmbedder, settings: Settings
                  ) -> AsyncIterator[BuiltinHarness]:
    store = SQLiteStore(":memory:")
    index = NuggetIndex(store, embedder, settings)
    await index.start()
    rows = [json.loads(line) for line in CORPUS.read_text().splitlines()[:80]]
    for r in rows:
        await index.ingest_passages(passages_of(
            Document(r["id"], "gnome", r["title"], r["text"], valid_from=T0), 800))
    h = BuiltinHarness(store, embedder, local_roles().generator, settings,
                       as_of=datetime(2025, 6, 1, tzinfo=UTC))
    yield h
    await h.close()
    await index.stop()


async def test_anchor_matches_need_the_stricter_calibrated_threshold(
        harness: BuiltinHarness, embedder: MiniLMEmbedder) -> None:
    tau, tau_anchor = await harness.thresholds("gnome")
    assert tau_anchor >= tau  # never laxer than the statement threshold
    draft = NuggetDraft(title="Screen reader shortcut",
                        body="Press Super+Alt+S to turn the screen reader on or off.",
                        anchors=("how do i make the computer read the screen aloud",))
    cand = make_candidate(embedder, "n-test", draft)
    query = "how can i get the computer to read the screen aloud"
    assert cand.cosine(embedder.embed([query])[0]) > cand.cosine(
        embedder.embed([query])[0], anchors=False) + 0.1
    trace = await harness.run("gnome", query, cand, Meter())
    stmt = rerank_score(cand.cosine(embedder.embed([query])[0], anchors=False), query,
                        f"{draft.title} {draft.body}\n" + "\n".join(draft.anchors))
    best = rerank_score(cand.cosine(embedder.embed([query])[0]), query,
                        f"{draft.title} {draft.body}\n" + "\n".join(draft.anchors))
    # The anchor match counts, but measured against the anchor threshold.
    assert trace.rerank["n-test"] == pytest.approx(max(stmt, best - (tau_anchor - tau)))
    assert trace.rerank["n-test"] >= tau and "n-test" in trace.reached
    # Without anchor vectors the same candidate is judged by its statement alone.
    harness.anchor_vectors = False
    plain = await harness.run("gnome", query, cand, Meter())
    assert plain.rerank["n-test"] == pytest.approx(stmt)
