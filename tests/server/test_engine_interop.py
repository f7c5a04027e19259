"""The server and the rest of kafkalog agree: what clients produce passes ``kafkalog verify``
and dumps with ``dump-segments``; directories written by the embedded engine or by a real Kafka
broker are consumed through the server as they are stored."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from kafkalog import LogDir, Record
from kafkalog.cli import main as cli_main
from tests.batch_expect import expected_bytes
from tests.conftest import shared_fixture_path

from .conftest import start_server
from .peers import make_records, normalize, producer_batches

ck = pytest.importorskip("confluent_kafka", reason="confluent-kafka is not installed")
kafka = pytest.importorskip("kafka", reason="kafka-python is not installed")
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402


def ck_consume_all(address: str, topic: str, partitions: int) -> dict[int, list]:
    c = ck.Consumer({"bootstrap.servers": address, "group.id": "interop",
                     "enable.auto.commit": False, "enable.partition.eof": True})
    c.assign([ck.TopicPartition(topic, p, ck.OFFSET_BEGINNING) for p in range(partitions)])
    got: dict[int, list] = {p: [] for p in range(partitions)}
    eof: set[int] = set()
    deadline = time.monotonic() + 60
    try:
        while len(eof) < partitions:
            assert time.monotonic() < deadline, f"partitions at their end: {sorted(eof)}"
            for m in c.consume(500, 0.2):
                if m.error():
                    assert m.error().code() == ck.KafkaError._PARTITION_EOF, m.error()
                    eof.add(m.partition())
                    continue
                got[m.partition()].append((m.offset(), m.timestamp()[1],
                                           *normalize(m.key(), m.value(), m.headers())))
    finally:
        c.close()
    return got


def test_produced_topic_passes_verify_and_dumps(server, log_dir, capsys):
    admin = AdminClient({"bootstrap.servers": server.address})
    for f in admin.create_topics([NewTopic("orders", 2, 1)]).values():
        f.result(30)
    p = ck.Producer({"bootstrap.servers": server.address, "enable.idempotence": True,
                     "compression.type": "gzip", "linger.ms": 5})
    for i, (k, v, h) in enumerate(make_records(2000, seed=3)):
        p.produce("orders", key=k, value=v, headers=h, partition=i % 2)
    assert p.flush(30) == 0
    tp = ck.Producer({"bootstrap.servers": server.address, "transactional.id": "dump-tx"})
    tp.init_transactions(30)
    tp.begin_transaction()
    tp.produce("orders", value=b"in-a-transaction", partition=0)
    assert tp.flush(30) == 0
    tp.abort_transaction(30)
    server.stop()
    capsys.readouterr()
    assert cli_main(["verify", str(log_dir)]) == 0
    seg = log_dir / "orders-0" / "00000000000000000000.log"
    assert cli_main(["dump-segments", "--files", str(seg), "--print-data-log"]) == 0
    out = capsys.readouterr().out
    assert out.count("| offset: ") == 1000 + 2  # the records, the aborted one and its marker
    assert "isTransactional: true" in out and "endTxnMarker: ABORT" in out
    txn_logs = sorted(log_dir.glob("__transaction_state-*/00000000000000000000.log"))
    with_records = [f for f in txn_logs if f.stat().st_size > 0]
    assert cli_main(["dump-segments", "--files", ",".join(map(str, with_records)),
                     "--transaction-log-decoder"]) == 0
    out = capsys.readouterr().out
    assert '"transactionalId":"dump-tx"' in out and '"transactionStatus":5' in out


def test_embedded_engine_directory_is_consumed_through_the_server(log_dir):
    records = make_records(3000, seed=9)
    with LogDir.open(log_dir) as d:
        d.create_topic("engine", 3)
        for p in range(3):
            part = [Record(k, v, 1700000000000 + i, headers=h)
                    for i, (k, v, h) in enumerate(records) if i % 3 == p]
            for j, codec in enumerate(["none", "gzip", "snappy", "lz4", "zstd"]):
                d.log("engine", p).append(part[j * 200:(j + 1) * 200], compression=codec)
        expected = {p: [(r.offset, r.timestamp, *normalize(r.key, r.value, r.headers))
                        for r in d.log("engine", p).records()] for p in range(3)}
    server = start_server(log_dir)
    try:
        assert ck_consume_all(server.address, "engine", 3) == expected
        # kafka-python's offsetsForTimes goes through ListOffsets and the time index
        c = kafka.KafkaConsumer(bootstrap_servers=server.address)
        tp = kafka.TopicPartition("engine", 1)
        found = c.offsets_for_times({tp: 1700000000000 + 1500})[tp]
        c.close()
        first = next((o, ts) for o, ts, *_ in expected[1] if ts >= 1700000000000 + 1500)
        assert (found.offset, found.timestamp) == first
    finally:
        server.stop()


def test_real_broker_directory_is_consumed_through_the_server(tmp_path):
    src = shared_fixture_path("kafka-real", "VolodymyrZee-kafka")
    import json

    expected_doc = json.loads((src / "EXPECTED.json").read_text())["files"]
    root = tmp_path / "broker-dir"
    shutil.copytree(src, root, ignore=shutil.ignore_patterns("*.json", "*.md"))
    server = start_server(root)
    try:
        for topic, partitions in (("first_topic", 3), ("new_topic", 1)):
            got = ck_consume_all(server.address, topic, partitions)
            for p in range(partitions):
                exp = expected_doc[f"{topic}-{p}/00000000000000000000.log"]["records"]
                assert [(o, ts, k, v) for o, ts, k, v, _ in got[p]] == [
                    (r["offset"], r["timestamp"], expected_bytes(r["key"]),
                     expected_bytes(r["value"]) or b"") for r in exp]
    finally:
        server.stop()


def test_restart_keeps_records_and_never_reuses_a_producer_id(log_dir):
    server = start_server(log_dir)
    pids = []
    try:
        server.broker.create_topic("t", 1)
        for _round in range(2):
            p = ck.Producer({"bootstrap.servers": server.address, "enable.idempotence": True})
            for i in range(10):
                p.produce("t", value=b"r%d-%d" % (_round, i), partition=0)
            assert p.flush(30) == 0
            server.stop()
            pids.append(max(b.producer_id for b in producer_batches(log_dir, "t", 0)))
            server = start_server(log_dir)
        got = ck_consume_all(server.address, "t", 1)[0]
        assert [v for _, _, _, v, _ in got] == [b"r%d-%d" % (r, i) for r in range(2)
                                                for i in range(10)]
    finally:
        server.stop()
    assert pids[1] > pids[0]
    assert Path(log_dir / ".kafka_cleanshutdown").exists()
