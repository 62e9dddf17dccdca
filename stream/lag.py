"""Consumer lag, as the broker sees it: end offset minus the group's committed offset.

Sampled with an admin client and a group-less consumer (so it measures what is really
committed, not what this worker believes), for every partition of the worker's source
topics, into ``nuggetflow_stream_consumer_lag_messages{group, topic, partition}``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import KafkaConnectionError

from nuggetflow.errors import BackendUnavailableError
from nuggetflow.logging import get_logger
from stream.metrics import PipelineMetrics

log = get_logger(__name__)


class LagMonitor:
    """Samples consumer lag of one group on some topics."""

    def __init__(self, bootstrap: Sequence[str], group: str, topics: Sequence[str],
                 metrics: PipelineMetrics | None = None,
                 client_options: Mapping[str, Any] | None = None) -> None:
        self.bootstrap = list(bootstrap)
        self.client_options = dict(client_options or {})  # security (stream.topics)
        self.group = group
        self.topics = list(topics)
        self.metrics = metrics
        self._admin: Any = None
        self._consumer: Any = None

    async def start(self) -> None:
        """Connect (BackendUnavailableError when the cluster cannot be reached)."""
        admin = AIOKafkaAdminClient(bootstrap_servers=self.bootstrap, **self.client_options)
        consumer = AIOKafkaConsumer(bootstrap_servers=self.bootstrap, group_id=None,
                                    **self.client_options,
                                    enable_auto_commit=False)
        try:
            await admin.start()
            await consumer.start()
        except KafkaConnectionError as exc:
            await admin.close()
            await consumer.stop()
            raise BackendUnavailableError(f"Kafka cannot be reached: {exc}") from exc
        self._admin, self._consumer = admin, consumer

    async def stop(self) -> None:
        """Disconnect."""
        if self._admin is not None:
            await self._admin.close()
        if self._consumer is not None:
            await self._consumer.stop()
        self._admin = self._consumer = None

    async def sample(self) -> dict[tuple[str, int], int]:
        """Lag per (topic, partition); also sets the gauge. Partitions without a committed
        offset count from the start of the log."""
        admin, consumer = self._admin, self._consumer
        if admin is None or consumer is None:
            raise RuntimeError("LagMonitor.start() was not called")
        described = await admin.describe_topics(self.topics)
        parts = [TopicPartition(d["topic"], p["partition"]) for d in described
                 if d.get("error_code") == 0
                 for p in sorted(d["partitions"], key=lambda p: int(p["partition"]))]
        if not parts:
            return {}
        committed = await admin.list_consumer_group_offsets(
            self.group, partitions=parts)
        ends = await consumer.end_offsets(parts)
        starts = await consumer.beginning_offsets(parts)
        lags: dict[tuple[str, int], int] = {}
        for tp in parts:
            meta = committed.get(tp)
            done = meta.offset if meta is not None and meta.offset >= 0 else starts[tp]
            lags[(tp.topic, tp.partition)] = max(0, ends[tp] - done)
        if self.metrics is not None:
            for (topic, partition), lag in lags.items():
                self.metrics.set_consumer_lag(self.group, topic, partition, lag)
        return lags
