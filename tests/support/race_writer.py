"""A writer process for the cross-process write tests on OpenSearch.

``python -m tests.support.race_writer URL INDEX TENANT --worker W --edits N --lineages A,B
--approve P --start-at T [--unguarded] [--pause S]`` waits until the wall-clock time ``T``
(so several workers start together), then makes ``N`` edits alternating over the given
lineages, each with its own request id, and approves lineage ``P`` half way through. Every
read of a head is followed by a pause of ``S`` seconds (the time a real writer spends
embedding and running governance), so writers in other processes overlap. One JSON line per
request on stdout: ``{"request": id, "lineage": l, "outcome": "applied"|error class,
"version": id}``.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import time
from collections.abc import Sequence

import numpy as np

from nuggetflow.errors import NuggetflowError
from nuggetflow.settings import Settings
from query.backends.opensearch import IndexLayout, OpenSearchStore
from query.embeddings import Vector
from query.index import NuggetIndex
from query.model import Nugget


class DigestEmbedder:
    """Unit vectors from a digest of the text: the same in every process, no model."""

    dim = 384

    def embed(self, texts: Sequence[str]) -> Vector:
        out = []
        for t in texts:
            seed = int.from_bytes(hashlib.sha256(t.encode()).digest()[:4], "big")
            v = np.random.default_rng(seed).normal(size=self.dim)
            out.append(v / np.linalg.norm(v))
        return np.asarray(out, dtype=np.float32).reshape(len(texts), self.dim)

    embed_queries = embed


class SlowReads(OpenSearchStore):
    """Pauses after reading a head, as a writer that embeds and decides would."""

    pause = 0.0

    async def head(self, tenant: str, item_id: str) -> Nugget:
        found = await super().head(tenant, item_id)
        await asyncio.sleep(self.pause)
        return found


async def run(args: argparse.Namespace) -> None:
    store = SlowReads(args.url, index=args.index, guarded=not args.unguarded,
                      layout=IndexLayout(shards=args.shards, replicas=args.replicas))
    store.pause = args.pause
    index = NuggetIndex(store, DigestEmbedder(), Settings())
    await index.start()
    lineages = args.lineages.split(",")
    try:
        await asyncio.sleep(max(0.0, args.start_at - time.time()))
        for i in range(args.edits):
            if i == args.edits // 2 and args.approve:
                await _request(index, args, f"{args.worker}-approve", args.approve,
                               lambda rid: index.apply_review(
                                   args.tenant, args.approve, "approve",
                                   reviewer=args.worker, request_id=rid))
            lineage = lineages[i % len(lineages)]
            await _request(index, args, f"{args.worker}-e{i}", lineage,
                           lambda rid, lineage=lineage, i=i: index.apply_edit(
                               args.tenant, lineage, f"edit {i} by {args.worker}",
                               request_id=rid,
                               body=f"Edit {i} by writer {args.worker} of this nugget."))
    finally:
        await index.stop()


async def _request(index: NuggetIndex, args: argparse.Namespace, rid: str, lineage: str,
                   call: object) -> None:
    try:
        applied = await call(rid)  # type: ignore[operator]
        record = {"request": rid, "lineage": lineage, "outcome": "applied",
                  "version": applied.head.id, "replayed": applied.replayed}
    except NuggetflowError as err:
        record = {"request": rid, "lineage": lineage, "outcome": type(err).__name__,
                  "error": str(err)}
    print(json.dumps(record), flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("url")
    p.add_argument("index")
    p.add_argument("tenant")
    p.add_argument("--worker", required=True)
    p.add_argument("--edits", type=int, default=10)
    p.add_argument("--lineages", required=True)
    p.add_argument("--approve", default="")
    p.add_argument("--start-at", type=float, default=0.0)
    p.add_argument("--pause", type=float, default=0.05)
    p.add_argument("--unguarded", action="store_true")
    p.add_argument("--shards", type=int, default=1, help="the index's layout (as every "
                   "process of a deployment shares its settings)")
    p.add_argument("--replicas", type=int, default=0)
    asyncio.run(run(p.parse_args()))


if __name__ == "__main__":
    main()
