"""aiokafka against ``kafkalog serve``: every codec with headers, the idempotent producer,
committed and aborted transactions read with read_committed."""

from __future__ import annotations

import asyncio

import pytest

from kafkalog import Log

from .peers import (
    CODECS,
    N_RECORDS,
    PARTITIONS,
    assert_idempotent_batches,
    assert_same,
    by_partition,
    make_records,
    normalize,
    stored_count,
)

aiokafka = pytest.importorskip("aiokafka", reason="aiokafka is not installed")
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition  # noqa: E402
from aiokafka.admin import AIOKafkaAdminClient, NewTopic  # noqa: E402


async def create_topic(address: str, name: str, partitions: int = PARTITIONS) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=address)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(name, partitions, 1)])
    finally:
        await admin.close()


async def produce(address: str, topic: str, records: list, **conf: object) -> None:
    p = AIOKafkaProducer(bootstrap_servers=address, linger_ms=5, **conf)
    await p.start()
    try:
        futures = [await p.send(topic, key=k, value=v, headers=h, partition=i % PARTITIONS)
                   for i, (k, v, h) in enumerate(records)]
        await asyncio.gather(*futures)
    finally:
        await p.stop()


async def consume(address: str, topic: str, count: int, partitions: int = PARTITIONS,
                  isolation: str = "read_uncommitted") -> dict[int, list]:
    c = AIOKafkaConsumer(bootstrap_servers=address, enable_auto_commit=False,
                         isolation_level=isolation, auto_offset_reset="earliest")
    await c.start()
    got: dict[int, list] = {p: [] for p in range(partitions)}
    try:
        c.assign([TopicPartition(topic, p) for p in range(partitions)])
        while True:
            batch = await c.getmany(timeout_ms=2000)
            if not batch:
                break
            for tp, msgs in batch.items():
                got[tp.partition] += [normalize(m.key, m.value, m.headers) for m in msgs]
    finally:
        await c.stop()
    return got


@pytest.mark.parametrize("codec", CODECS)
def test_every_codec_with_headers_round_trips(server, codec):
    async def run() -> None:
        await create_topic(server.address, "t")
        records = make_records(seed=CODECS.index(codec))
        conf = {} if codec == "none" else {"compression_type": codec}
        await produce(server.address, "t", records, **conf)
        assert_same(by_partition(records), await consume(server.address, "t", N_RECORDS))
        assert stored_count(server, "t") == N_RECORDS  # nothing written twice

    asyncio.run(run())


def test_idempotent_producer(server, log_dir):
    async def run() -> None:
        await create_topic(server.address, "idem")
        records = make_records(3000, seed=7)
        await produce(server.address, "idem", records, enable_idempotence=True,
                      compression_type="gzip")
        assert_same(by_partition(records), await consume(server.address, "idem", 3000))

    asyncio.run(run())
    server.stop()
    assert_idempotent_batches(log_dir, "idem", PARTITIONS, 3000)


def test_transactions_committed_and_aborted(server, log_dir):
    async def run() -> list:
        await create_topic(server.address, "tx", 1)
        p = AIOKafkaProducer(bootstrap_servers=server.address, transactional_id="aio-tx")
        await p.start()
        try:
            async with p.transaction():
                for i in range(5):
                    await p.send("tx", value=b"committed-%d" % i, partition=0)
            await p.begin_transaction()
            for i in range(5):
                await p.send("tx", value=b"aborted-%d" % i, partition=0)
            await p.flush()
            await p.abort_transaction()
            async with p.transaction():
                await p.send("tx", value=b"committed-last", partition=0)
        finally:
            await p.stop()
        committed = (await consume(server.address, "tx", 6, 1, "read_committed"))[0]
        assert len((await consume(server.address, "tx", 11, 1))[0]) == 11
        return committed

    committed = asyncio.run(run())
    assert [v for _, v, _ in committed] == [b"committed-%d" % i for i in range(5)] + [
        b"committed-last"]
    server.stop()
    with Log.open(log_dir / "tx-0", read_only=True) as log:
        assert [r.value for r in log.records(isolation="read_committed")] == \
            [v for _, v, _ in committed]
