"""librdkafka (confluent-kafka) against ``kafkalog serve``: every codec with headers, the
idempotent producer, committed and aborted transactions read with read_committed."""

from __future__ import annotations

import time

import numpy as np
import pytest
from kafkalog.native.scan import scan_entries

from kafkalog import Log
from kafkalog.records import columnar, packed_areas

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

ck = pytest.importorskip("confluent_kafka", reason="confluent-kafka is not installed")
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402


def create_topic(address: str, name: str, partitions: int = PARTITIONS) -> None:
    admin = AdminClient({"bootstrap.servers": address})
    for f in admin.create_topics([NewTopic(name, partitions, 1)]).values():
        f.result(30)


def produce(address: str, topic: str, records: list, **conf: object) -> None:
    errors: list = []
    p = ck.Producer({"bootstrap.servers": address, "linger.ms": 5, **conf})
    for i, (k, v, h) in enumerate(records):
        while True:
            try:
                p.produce(topic, key=k, value=v, headers=h, partition=i % PARTITIONS,
                          on_delivery=lambda err, msg: err and errors.append(err))
                break
            except BufferError:
                p.poll(0.1)
        p.poll(0)
    assert p.flush(60) == 0
    assert errors == []


def consume(address: str, topic: str, count: int, partitions: int = PARTITIONS,
            isolation: str = "read_uncommitted") -> dict[int, list]:
    c = ck.Consumer({"bootstrap.servers": address, "group.id": "reader",
                     "enable.auto.commit": False, "isolation.level": isolation,
                     "enable.partition.eof": True})
    c.assign([ck.TopicPartition(topic, p, ck.OFFSET_BEGINNING) for p in range(partitions)])
    got: dict[int, list] = {p: [] for p in range(partitions)}
    eof: set[int] = set()
    deadline = time.monotonic() + 60
    try:
        while (sum(map(len, got.values())) < count or len(eof) < partitions) \
                and time.monotonic() < deadline:
            for m in c.consume(1000, 0.5):
                if m.error():
                    if m.error().code() == ck.KafkaError._PARTITION_EOF:
                        eof.add(m.partition())
                        continue
                    raise AssertionError(m.error())
                eof.discard(m.partition())
                got[m.partition()].append(normalize(m.key(), m.value(), m.headers()))
    finally:
        c.close()
    return got


@pytest.mark.parametrize("codec", CODECS)
def test_every_codec_with_headers_round_trips(server, codec):
    create_topic(server.address, "t")
    records = make_records(seed=CODECS.index(codec))
    produce(server.address, "t", records, **{"compression.type": codec})
    assert_same(by_partition(records), consume(server.address, "t", N_RECORDS))
    assert stored_count(server, "t") == N_RECORDS  # nothing written twice


def test_idempotent_producer(server, log_dir):
    create_topic(server.address, "idem")
    records = make_records(3000, seed=7)
    produce(server.address, "idem", records, **{"enable.idempotence": True,
                                                "compression.type": "lz4"})
    assert_same(by_partition(records), consume(server.address, "idem", 3000))
    server.stop()
    assert_idempotent_batches(log_dir, "idem", PARTITIONS, 3000)


def test_transactions_committed_and_aborted(server, log_dir):
    create_topic(server.address, "tx", 1)
    p = ck.Producer({"bootstrap.servers": server.address, "transactional.id": "ck-tx"})
    p.init_transactions(30)
    p.begin_transaction()
    for i in range(5):
        p.produce("tx", value=b"committed-%d" % i, partition=0)
    p.commit_transaction(30)
    p.begin_transaction()
    for i in range(5):
        p.produce("tx", value=b"aborted-%d" % i, partition=0)
    p.flush(30)
    p.abort_transaction(30)
    p.begin_transaction()
    p.produce("tx", value=b"committed-last", partition=0)
    p.commit_transaction(30)
    committed = consume(server.address, "tx", 6, 1, "read_committed")[0]
    assert [v for _, v, _ in committed] == [b"committed-%d" % i for i in range(5)] + [
        b"committed-last"]
    everything = consume(server.address, "tx", 11, 1, "read_uncommitted")[0]
    assert len(everything) == 11
    server.stop()
    with Log.open(log_dir / "tx-0", read_only=True) as log:
        markers = [r for r in log.records(include_control=True) if r.key and len(r.key) == 4]
        assert len(markers) == 3  # commit, abort, commit control records
        assert [r.value for r in log.records(isolation="read_committed")] == \
            [v for _, v, _ in committed]


@pytest.mark.parametrize("codec", ["snappy", "lz4", "zstd"])
def test_one_record_batches_take_the_packed_path(server, log_dir, monkeypatch, codec):
    # librdkafka with linger.ms=0 and one message per batch (a light-load producer): every
    # frame it writes has the plain shape, so the columnar decode of its segment decompresses
    # all of them through kafkalog.records.packed_areas, and gives what the codec layer gives
    create_topic(server.address, "one", 1)
    records = [(b"k%d" % i, b"value-%d " % i * (8 + i % 7), [("h", b"%d" % i)])
               for i in range(120)]
    errors: list = []
    p = ck.Producer({"bootstrap.servers": server.address, "linger.ms": 0,
                     "batch.num.messages": 1, "compression.type": codec})
    for k, v, h in records:
        p.produce("one", key=k, value=v, headers=h, partition=0,
                  on_delivery=lambda err, msg: err and errors.append(err))
        p.flush(30)  # one in flight at a time: one batch each
    assert errors == []
    server.stop()
    data = (log_dir / "one-0" / "00000000000000000000.log").read_bytes()
    sc = scan_entries(np.frombuffer(data, np.uint8))
    compressed = int(((sc["attributes"] & 7) != 0).sum())
    assert sc["count"] == 120 and compressed >= 100  # (librdkafka may skip compressing some)
    taken = []
    real = packed_areas.decompress_packed
    monkeypatch.setattr(columnar, "decompress_packed",
                        lambda *a: taken.append(real(*a)) or taken[-1])
    monkeypatch.setattr(columnar, "decode_workers", lambda: 1)
    cols = columnar.decode_columns(data)
    assert sum(int((t.pack_id >= 0).sum()) for t in taken) == compressed
    with monkeypatch.context() as m:
        m.setattr(columnar, "PACKED_MIN_BATCHES", 1 << 62)
        layer = columnar.decode_columns(data)
    for f in ("offsets", "key_data", "key_offsets", "value_data", "value_offsets",
              "header_offsets"):
        assert np.array_equal(getattr(cols, f), getattr(layer, f)), f
    values = [cols.value_data[cols.value_offsets[i]:cols.value_offsets[i + 1]].tobytes()
              for i in range(120)]
    assert values == [v for _, v, _ in records]


def test_a_group_over_many_partitions_round_trips(server):
    """300 partitions through librdkafka: Metadata, Fetch responses listing every partition
    (librdkafka sends no fetch sessions here), OffsetCommit and OffsetFetch of all of them: the
    generated response writers' largest answers, read by a decoder we did not write."""
    n_parts, n = 300, 3000
    admin = AdminClient({"bootstrap.servers": server.address})
    # (4 KiB preallocated indexes: 300 partitions of Kafka's 10 MiB .index + .timeindex are 6 GB)
    for f in admin.create_topics([NewTopic("wide", n_parts, 1, config={
            "segment.index.bytes": "4096"})]).values():
        f.result(30)
    records = make_records(n, seed=5)
    p = ck.Producer({"bootstrap.servers": server.address, "linger.ms": 5})
    for i, (k, v, h) in enumerate(records):
        p.produce("wide", key=k, value=v, headers=h, partition=i % n_parts)
    assert p.flush(60) == 0
    c = ck.Consumer({"bootstrap.servers": server.address, "group.id": "wide-group",
                     "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.subscribe(["wide"])
    got: dict[int, list] = {q: [] for q in range(n_parts)}
    deadline = time.monotonic() + 90
    try:
        while sum(map(len, got.values())) < n and time.monotonic() < deadline:
            for m in c.consume(1000, 0.5):
                assert not m.error(), m.error()
                got[m.partition()].append(normalize(m.key(), m.value(), m.headers()))
        assert_same(by_partition(records, n_parts), got)
        assert len(c.assignment()) == n_parts
        c.commit(asynchronous=False)
        committed = c.committed([ck.TopicPartition("wide", q) for q in range(n_parts)], 30)
    finally:
        c.close()
    assert {tp.partition: tp.offset for tp in committed} == \
        {q: len(by_partition(records, n_parts)[q]) for q in range(n_parts)}
    md = admin.list_topics("wide", timeout=30).topics["wide"]
    assert sorted(md.partitions) == list(range(n_parts))
