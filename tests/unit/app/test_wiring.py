"""The one wiring module: flags over settings, the in-process pipeline and a worker are
built one way (no servers needed: nothing here starts a broker)."""

from __future__ import annotations

import argparse
from pathlib import Path

from app.wiring import inline_engine, make_optimizer, make_worker, with_flags, with_index
from nuggetflow.settings import Settings
from optimizer.harness import BuiltinHarness
from query.index import NuggetIndex
from stream.agents import enabled_agents
from stream.engine import InlineEngine, ThreadedEngine


def test_only_the_flags_given_override_their_settings(settings: Settings) -> None:
    args = argparse.Namespace(port=6001, host=None, workers=3)
    s = with_flags(settings, args, {"port": "grpc_port", "host": "serve_host",
                                    "workers": "serve_workers", "missing": "metrics_port"})
    assert (s.grpc_port, s.serve_workers) == (6001, 3)
    assert (s.serve_host, s.metrics_port) == (settings.serve_host, settings.metrics_port)
    assert with_flags(settings, argparse.Namespace(port=None), {"port": "grpc_port"}) is settings


async def test_the_in_process_pipeline_is_built_on_one_index(tmp_path: Path) -> None:
    settings = Settings.from_env({}, store=f"sqlite:///{tmp_path}/w.db")

    async def check(index: NuggetIndex) -> int:
        opt, harness = make_optimizer(settings, index)
        assert isinstance(harness, BuiltinHarness) and opt.harness is harness
        async with inline_engine(settings, index) as engine:
            assert isinstance(engine, InlineEngine)
        await harness.close()
        return 7

    assert await with_index(settings, check) == 7


def test_a_worker_is_assembled_without_io(tmp_path: Path) -> None:
    settings = Settings.from_env({}, store=f"sqlite:///{tmp_path}/w.db",
                                 stream_optimize_concurrency=2)
    parts = make_worker(settings, serve_metrics=False)
    assert isinstance(parts.runtime.engine, ThreadedEngine)
    assert parts.runtime.metrics_server is None
    for agent in enabled_agents(settings):
        assert getattr(parts.agents, agent) is not None, agent
    names = {m.name for m in parts.metrics.registry.collect()}
    assert "nuggetflow_ino_iterations" in names and "nuggetflow_alert_threshold_messages" in names
