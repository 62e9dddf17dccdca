"""Topics the worker creates on a real broker carry the cluster settings."""

from __future__ import annotations

import uuid

import pytest

from nuggetflow.settings import Settings
from stream.topics import Topics, ensure_topics

pytestmark = pytest.mark.integration


async def test_created_topics_carry_partitions_and_min_insync_replicas(
        kafka_bootstrap: str) -> None:
    from aiokafka.admin import AIOKafkaAdminClient
    from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

    settings = Settings.from_env({
        "NUGGETFLOW_KAFKA_BOOTSTRAP": kafka_bootstrap,
        "NUGGETFLOW_STREAM_PREFIX": f"t{uuid.uuid4().hex[:8]}.",
        "NUGGETFLOW_STREAM_PARTITIONS": "3"})
    created = await ensure_topics(settings)
    names = Topics.from_settings(settings).all()
    assert sorted(created) == sorted(names)  # the dead-letter and review topics too
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    await admin.start()
    try:
        described = await admin.describe_topics(names)
        assert {t["topic"]: len(t["partitions"]) for t in described} == dict.fromkeys(names, 3)
        replies = await admin.describe_configs(
            [ConfigResource(ConfigResourceType.TOPIC, n) for n in names])
        values = {res[3]: {c[0]: c[1] for c in res[4]}
                  for reply in replies for res in reply.resources}
        assert {n: values[n]["min.insync.replicas"] for n in names} == dict.fromkeys(names, "1")
        await admin.delete_topics(names)
    finally:
        await admin.close()
