#!/usr/bin/env python3
"""End-to-end check of the local broker with aiokafka (see README.md).

    python verify_aiokafka.py write  TOPIC [--count N] [--group G]
        create TOPIC (must not exist), produce N keyed messages, consume them
        all with consumer group G and commit; check committed == end offsets.

    python verify_aiokafka.py reread TOPIC [--count N] [--group G]
        (after a broker restart) a fresh group reads back exactly the N
        messages; group G still has its committed offsets and, after 10 more
        messages are produced, receives exactly those 10.

Bootstrap server: $NUGGETFLOW_KAFKA_BOOTSTRAP or 127.0.0.1:$NUGGETFLOW_KAFKA_PORT
(default 127.0.0.1:19092). Exits non-zero on any mismatch.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
import uuid

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

BOOTSTRAP = os.environ.get(
    "NUGGETFLOW_KAFKA_BOOTSTRAP",
    f"127.0.0.1:{os.environ.get('NUGGETFLOW_KAFKA_PORT', '19092')}",
)


def check(cond: bool, msg: str) -> None:
    if not cond:
        print(f"FAIL: {msg}", file=sys.stderr)
        sys.exit(1)
    print(f"ok: {msg}")


async def produce(topic: str, start: int, count: int) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=BOOTSTRAP, acks="all", enable_idempotence=True)
    await producer.start()
    try:
        futs = [
            await producer.send(topic, key=f"k{i % 7}".encode(), value=f"msg-{i}".encode())
            for i in range(start, start + count)
        ]
        await producer.flush()
        metas = [await f for f in futs]
    finally:
        await producer.stop()
    check(len(metas) == count, f"produced {count} messages to {topic} (acks=all, idempotent)")


async def consume(topic: str, group: str, expect: int, timeout: float = 60.0) -> list[str]:
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=BOOTSTRAP,
        group_id=group,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    await consumer.start()
    values: list[str] = []
    try:
        deadline = time.monotonic() + timeout
        while len(values) < expect and time.monotonic() < deadline:
            batch = await consumer.getmany(timeout_ms=1000)
            for records in batch.values():
                values.extend(r.value.decode() for r in records)
        # Give stray extra messages a chance to show up.
        extra = await consumer.getmany(timeout_ms=1500)
        values.extend(r.value.decode() for records in extra.values() for r in records)
        await consumer.commit()
        parts = [
            TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or [])
        ]
        ends = await consumer.end_offsets(parts)
        committed = {tp: await consumer.committed(tp) for tp in parts}
    finally:
        await consumer.stop()
    check(
        committed == ends,
        f"group {group}: committed offsets == end offsets "
        f"{sorted((tp.partition, o) for tp, o in ends.items())}",
    )
    return values


async def write(topic: str, count: int, group: str) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=BOOTSTRAP)
    await admin.start()
    try:
        existing = await admin.list_topics()
        check(topic not in existing, f"topic {topic} does not exist yet")
        await admin.create_topics([NewTopic(topic, num_partitions=3, replication_factor=1)])
    finally:
        await admin.close()
    t0 = time.monotonic()
    await produce(topic, 0, count)
    values = await consume(topic, group, count)
    check(
        sorted(values) == sorted(f"msg-{i}" for i in range(count)),
        f"group {group} consumed exactly the {count} messages "
        f"({time.monotonic() - t0:.1f}s round trip)",
    )


async def reread(topic: str, count: int, group: str) -> None:
    fresh = f"{group}-reread-{uuid.uuid4().hex[:6]}"
    values = await consume(topic, fresh, count)
    check(
        sorted(values) == sorted(f"msg-{i}" for i in range(count)),
        f"fresh group {fresh} re-read all {count} persisted messages",
    )
    await produce(topic, count, 10)
    values = await consume(topic, group, 10)
    check(
        sorted(values) == sorted(f"msg-{i}" for i in range(count, count + 10)),
        f"original group {group} resumed from its committed offsets: got only the 10 new messages",
    )


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("mode", choices=["write", "reread"])
    ap.add_argument("topic")
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--group", default="nuggetflow-verify")
    a = ap.parse_args()
    print(f"bootstrap {BOOTSTRAP}")
    asyncio.run(
        write(a.topic, a.count, a.group) if a.mode == "write" else reread(a.topic, a.count, a.group)
    )
    print("PASS")


if __name__ == "__main__":
    main()
