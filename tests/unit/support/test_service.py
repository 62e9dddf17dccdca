"""The shared seeded service embeds as every write does and stops with its block."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from nuggetflow.settings import Settings
from query.embeddings import MiniLMEmbedder
from tests.helpers import make_nugget
from tests.support.service import seeded_service


async def test_seeded_versions_get_a_text_vector_and_one_per_anchor(
        tmp_path: Path, embedder: MiniLMEmbedder, settings: Settings) -> None:
    n = dataclasses.replace(make_nugget(), anchors=("who resets portal passwords",
                                                    "portal password reset owner"))
    async with seeded_service(tmp_path / "s.db", embedder, settings.replace(insecure_dev=True),
                              [n]) as s:
        vectors, anchors = s.index.vectors_for([n])
        assert vectors.shape == (1, embedder.dim) and anchors[0].shape == (2, embedder.dim)
        assert (await s.index.store.head(n.tenant, n.id)) is not None
        async with grpc.aio.insecure_channel(s.target) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            reply = await stub.Check(health_pb2.HealthCheckRequest(), timeout=5)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
    async with grpc.aio.insecure_channel(s.target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        with pytest.raises(grpc.aio.AioRpcError):
            await stub.Check(health_pb2.HealthCheckRequest(), timeout=2)
