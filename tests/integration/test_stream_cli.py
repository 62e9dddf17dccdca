"""The streaming CLI against a real broker: ``nuggetflow publish`` (progress, summary,
rejections), ``nuggetflow worker``, and reviews carried on nuggets.reviews by
``nuggetflow review-event``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from query.backends.sqlite import SQLiteStore
from query.embeddings import MiniLMEmbedder
from query.index import NuggetIndex
from query.model import Nugget, Publication
from stream.synthetic import correction, event, malformed
from tests.integration.stream_support import ROOT, Deployment, wait_until

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def cli(dep: Deployment, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app.cli", *args], cwd=ROOT,
                          env={**os.environ, **dep.env}, capture_output=True, text=True,
                          timeout=120)


async def history(dep: Deployment, embedder: MiniLMEmbedder, tenant: str,
                  event_id: str) -> list[Nugget]:
    index = NuggetIndex(SQLiteStore(dep.store_path), embedder, dep.settings)
    await index.start()
    try:
        heads = await index.store.find_by_event(tenant, event_id)
        return await index.store.history(tenant, heads[0].id) if heads else []
    finally:
        await index.stop()


async def test_publish_worker_and_reviews_through_kafka(kafka_bootstrap: str, tmp_path: Path,
                                                        embedder: MiniLMEmbedder) -> None:
    dep = Deployment.create(kafka_bootstrap, tmp_path, NUGGETFLOW_REVIEW_POLICY="manual")
    await dep.add_corpus(embedder)
    q, a, c = correction(0)
    lines = [json.dumps(event("cli-1", "acme", q, a, c)).encode(), malformed(1),
             json.dumps(event("cli-2", "acme", "q?", "a.", "meh")).encode()]
    feedback = tmp_path / "feedback.jsonl"
    feedback.write_bytes(b"\n".join(lines) + b"\n")

    proc = cli(dep, "publish", str(feedback), "--format", "protobuf")
    assert proc.returncode == 1, proc.stderr  # one line rejected
    summary = json.loads(proc.stdout)
    assert summary["sent"] == 2 and summary["rejected"] == 1
    assert summary["rejections"][0]["line"] == 2
    assert "query is missing" in summary["rejections"][0]["reason"]
    assert "line 2: rejected: query" in proc.stderr

    worker = dep.worker("w").start()
    try:
        async def candidate() -> bool:
            return bool(await history(dep, embedder, "acme", "cli-1"))

        await wait_until(candidate, 90, "the candidate", worker.tail)
        [pending] = await history(dep, embedder, "acme", "cli-1")
        assert pending.publication is Publication.PENDING_REVIEW  # manual policy

        proc = cli(dep, "review-event", pending.id, "--tenant", "acme", "--action", "approve",
                   "--reviewer", "ann", "--reason", "checked")
        assert proc.returncode == 0, proc.stderr
        review_id = json.loads(proc.stdout)["review_id"]

        async def versions(n: int) -> bool:
            return len(await history(dep, embedder, "acme", "cli-1")) >= n

        await wait_until(lambda: versions(2), 60, "the approval", worker.tail)
        proc = cli(dep, "review-event", pending.id, "--tenant", "acme", "--action", "edit",
                   "--title", "Only owners reset other users' passwords (portal v8.0)",
                   "--reviewer", "bob")
        assert proc.returncode == 0, proc.stderr
        await wait_until(lambda: versions(3), 60, "the edit", worker.tail)
    finally:
        assert worker.stop() == 0, worker.tail()
    approved, edited = (await history(dep, embedder, "acme", "cli-1"))[1:]
    assert approved.publication is Publication.PUBLISHED
    assert f"[review {review_id}]" in approved.change_reason and "ann" in approved.change_reason
    assert edited.title == "Only owners reset other users' passwords (portal v8.0)"
    assert edited.publication is Publication.PUBLISHED
    assert not await history(dep, embedder, "acme", "cli-2")  # not actionable
