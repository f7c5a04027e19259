"""kafka-python against ``kafkalog serve``: every codec with headers, the idempotent producer,
committed and aborted transactions read with read_committed."""

from __future__ import annotations

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

kafka = pytest.importorskip("kafka", reason="kafka-python is not installed")
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition  # noqa: E402
from kafka.admin import NewTopic  # noqa: E402


def create_topic(address: str, name: str, partitions: int = PARTITIONS) -> None:
    admin = KafkaAdminClient(bootstrap_servers=address)
    try:
        admin.create_topics([NewTopic(name, partitions, 1)])
    finally:
        admin.close()


def produce(address: str, topic: str, records: list, **conf: object) -> None:
    p = KafkaProducer(bootstrap_servers=address, linger_ms=5, **conf)
    try:
        futures = [p.send(topic, key=k, value=v, headers=h, partition=i % PARTITIONS)
                   for i, (k, v, h) in enumerate(records)]
        p.flush(60)
        for f in futures:
            f.get(30)
    finally:
        p.close()


def consume(address: str, topic: str, count: int, partitions: int = PARTITIONS,
            isolation: str = "read_uncommitted", *, until_idle: bool = False
            ) -> dict[int, list]:
    """Records per partition: the first ``count`` (or, ``until_idle``, all that come before 3 s
    without a record, to see that nothing more arrives)."""
    c = KafkaConsumer(bootstrap_servers=address, enable_auto_commit=False,
                      isolation_level=isolation, auto_offset_reset="earliest",
                      consumer_timeout_ms=3000 if until_idle else 30000)
    got: dict[int, list] = {p: [] for p in range(partitions)}
    n = 0
    try:
        c.assign([TopicPartition(topic, p) for p in range(partitions)])
        for m in c:
            got[m.partition].append(normalize(m.key, m.value, m.headers))
            n += 1
            if n == count and not until_idle:
                break
    finally:
        c.close()
    return got


@pytest.mark.parametrize("codec", CODECS)
def test_every_codec_with_headers_round_trips(server, codec):
    create_topic(server.address, "t")
    records = make_records(seed=CODECS.index(codec))
    conf = {} if codec == "none" else {"compression_type": codec}
    produce(server.address, "t", records, enable_idempotence=False, **conf)
    assert_same(by_partition(records), consume(server.address, "t", N_RECORDS))
    assert stored_count(server, "t") == N_RECORDS  # nothing written twice


def test_idempotent_producer(server, log_dir):
    create_topic(server.address, "idem")
    records = make_records(3000, seed=7)
    produce(server.address, "idem", records, enable_idempotence=True, compression_type="zstd")
    assert_same(by_partition(records), consume(server.address, "idem", 3000))
    server.stop()
    assert_idempotent_batches(log_dir, "idem", PARTITIONS, 3000)


def test_transactions_committed_and_aborted(server, log_dir):
    create_topic(server.address, "tx", 1)
    p = KafkaProducer(bootstrap_servers=server.address, transactional_id="kp-tx")
    try:
        p.init_transactions()
        p.begin_transaction()
        for i in range(5):
            p.send("tx", value=b"committed-%d" % i, partition=0)
        p.commit_transaction()
        p.begin_transaction()
        for i in range(5):
            p.send("tx", value=b"aborted-%d" % i, partition=0)
        p.flush()
        p.abort_transaction()
        p.begin_transaction()
        p.send("tx", value=b"committed-last", partition=0)
        p.commit_transaction()
    finally:
        p.close()
    committed = consume(server.address, "tx", 6, 1, "read_committed", until_idle=True)[0]
    assert [v for _, v, _ in committed] == [b"committed-%d" % i for i in range(5)] + [
        b"committed-last"]
    assert len(consume(server.address, "tx", 11, 1, "read_uncommitted", until_idle=True)[0]) == 11
    server.stop()
    with Log.open(log_dir / "tx-0", read_only=True) as log:
        assert [r.value for r in log.records(isolation="read_committed")] == \
            [v for _, v, _ in committed]


def test_topic_compression_type_recompresses(server, log_dir):
    """A topic created with ``compression.type=zstd`` (and a level) stores zstd batches whatever
    the producer sends, keeping the idempotent producer's fields, as a broker does; the
    consumer reads the records back, headers included."""
    from kafkalog.records.batch import iter_batches

    admin = KafkaAdminClient(bootstrap_servers=server.address)
    try:
        admin.create_topics([NewTopic("zt", PARTITIONS, 1, topic_configs={
            "compression.type": "zstd", "compression.zstd.level": "7"})])
    finally:
        admin.close()
    records = make_records(600, seed=11)
    produce(server.address, "zt", records, enable_idempotence=True, compression_type="gzip")
    assert_same(by_partition(records), consume(server.address, "zt", 600))
    server.stop()
    assert_idempotent_batches(log_dir, "zt", PARTITIONS, 600)
    codecs = set()
    for p in range(PARTITIONS):
        for seg in sorted((log_dir / f"zt-{p}").glob("*.log")):
            codecs |= {b.compression for b in iter_batches(str(seg))}
    assert codecs == {"zstd"}


def test_timestamp_bounds_reach_the_producer(server):
    """``message.timestamp.before.max.ms`` on a topic: kafka-python's send of an old record
    fails with INVALID_TIMESTAMP (32), a current one is written."""
    import time

    from kafka.errors import InvalidTimestampError

    admin = KafkaAdminClient(bootstrap_servers=server.address)
    try:
        admin.create_topics([NewTopic("tb", 1, 1, topic_configs={
            "message.timestamp.before.max.ms": "60000"})])
    finally:
        admin.close()
    p = KafkaProducer(bootstrap_servers=server.address, retries=0)
    try:
        hour_ago = int(time.time() * 1000) - 3_600_000
        old = p.send("tb", value=b"old", partition=0, timestamp_ms=hour_ago)
        with pytest.raises(InvalidTimestampError):
            old.get(30)
        assert p.send("tb", value=b"now", partition=0).get(30).offset == 0
    finally:
        p.close()
    assert [v for _, v, _ in consume(server.address, "tb", 1, 1)[0]] == [b"now"]


def test_min_insync_replicas_is_taken_and_one_replica_suffices(server):
    """A topic created with ``min.insync.replicas=2`` (common in production scripts) is
    accepted, and acks=all produces succeed: with one replica Kafka's effective minimum ISR
    is 1 (``Partition.effectiveMinIsr``)."""
    admin = KafkaAdminClient(bootstrap_servers=server.address)
    try:
        admin.create_topics([NewTopic("mi", 1, 1, topic_configs={
            "min.insync.replicas": "2", "unclean.leader.election.enable": "false"})])
    finally:
        admin.close()
    assert server.broker.log_dir.topic_config("mi").min_insync_replicas == 2
    p = KafkaProducer(bootstrap_servers=server.address, acks="all", retries=0)
    try:
        assert p.send("mi", value=b"v", partition=0).get(30).offset == 0
    finally:
        p.close()
