"""``kafkalog get-offsets`` and ``kafkalog log-dirs`` offline give what real admin clients are
told online: confluent-kafka's ``AdminClient.list_offsets`` and kafka-python's
``list_partition_offsets`` (the special values up to -5, both isolation levels) and
``describe_log_dirs``, asked of ``kafkalog serve`` over the directory the offline commands then
read after the server stops."""

from __future__ import annotations

import json
import warnings

import pytest

from kafkalog.cli import main as cli_main

from .conftest import start_server

ck = pytest.importorskip("confluent_kafka", reason="confluent-kafka is not installed")
kafka = pytest.importorskip("kafka", reason="kafka-python is not installed")
from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec  # noqa: E402

BASE_TS = 1_700_000_000_000
PARTITIONS = 3


def _run(capsys, *argv: str) -> str:
    assert cli_main(list(argv)) == 0
    return capsys.readouterr().out


def test_offline_offsets_and_log_dirs_equal_what_clients_are_told(log_dir, capsys) -> None:
    server = start_server(log_dir)
    try:
        admin = AdminClient({"bootstrap.servers": server.address})
        for f in admin.create_topics([NewTopic("orders", PARTITIONS, 1)]).values():
            f.result(30)
        p = ck.Producer({"bootstrap.servers": server.address, "linger.ms": 5})
        for i in range(600):  # timestamps out of order within each partition
            p.produce("orders", value=b"v%d" % i, partition=i % PARTITIONS,
                      timestamp=BASE_TS + (i * 7919) % 1000)
        assert p.flush(30) == 0
        tx = ck.Producer({"bootstrap.servers": server.address, "transactional.id": "lo-tx"})
        tx.init_transactions(30)
        tx.begin_transaction()  # left open: read_committed stops before it
        tx.produce("orders", value=b"open", partition=1, timestamp=BASE_TS + 5000)
        tx.flush(30)
        specs = {"latest": OffsetSpec.latest(), "earliest": OffsetSpec.earliest(),
                 "max-timestamp": OffsetSpec.max_timestamp(),
                 str(BASE_TS + 500): OffsetSpec.for_timestamp(BASE_TS + 500)}
        online: dict[tuple[str, str], dict[int, int]] = {}
        for isolation in ("read_uncommitted", "read_committed"):
            level = getattr(ck.IsolationLevel, isolation.upper())
            for name, spec in specs.items():
                res = admin.list_offsets(
                    {ck.TopicPartition("orders", q): spec for q in range(PARTITIONS)},
                    isolation_level=level)
                online[(name, isolation)] = {tp.partition: f.result(30).offset
                                             for tp, f in res.items()}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            from kafka import TopicPartition
            from kafka.admin import KafkaAdminClient

            kp = KafkaAdminClient(bootstrap_servers=server.address)
            try:
                # (kafka-python 3.0's OffsetSpec stops at -5; -6 is tested on the wire, v11)
                for name, sentinel in (("earliest-local", -4), ("latest-tiered", -5)):
                    res = kp.list_partition_offsets(
                        {TopicPartition("orders", q): sentinel for q in range(PARTITIONS)})
                    online[(name, "read_uncommitted")] = {tp.partition: r.offset
                                                          for tp, r in res.items()}
                dirs = kp.describe_log_dirs()
            finally:
                kp.close()
    finally:
        server.stop()
    # the transaction is still open in the directory the server leaves (its producer state
    # snapshot): offline, read_committed must stop before it as the server did
    assert online[("latest", "read_uncommitted")][1] == 201  # the open transaction's record
    assert online[("latest", "read_committed")][1] == 200   # stops before it
    assert online[("latest-tiered", "read_uncommitted")] == {q: -1 for q in range(PARTITIONS)}
    for (name, isolation), answers in online.items():
        out = _run(capsys, "get-offsets", str(log_dir), "--topic", "orders", "--time", name,
                   "--isolation", isolation)
        offline = {int(line.split(":")[1]): int(line.split(":")[2]) for line in out.split()}
        assert offline == {q: o for q, o in answers.items() if o != -1}, (name, isolation)
    # log-dirs: the same dir, sizes and lags as describe_log_dirs gave
    out = _run(capsys, "log-dirs", "--describe", str(log_dir), "--topic-list", "orders")
    lines = out.splitlines()
    assert lines[:2] == ["Querying brokers for log directories information",
                         "Received log directory information from brokers 1"]
    doc = json.loads(lines[2])
    offline_dirs = doc["brokers"][0]["logDirs"]
    assert [d["error"] for d in offline_dirs] == [None]
    parts = {d["partition"]: d for d in offline_dirs[0]["partitions"]}
    assert sorted(parts) == ["orders-0", "orders-1", "orders-2"]
    online_dir = _online_dir(dirs)
    assert online_dir["log_dir"] == offline_dirs[0]["logDir"]
    online_parts = {(t["name"], q["partition_index"]): q for t in online_dir["topics"]
                    for q in t["partitions"]}
    for q in range(PARTITIONS):
        assert parts[f"orders-{q}"]["size"] == online_parts[("orders", q)]["partition_size"] > 0
    assert all(parts[f"orders-{q}"]["offsetLag"] == 0 for q in range(PARTITIONS))
    assert all(not parts[f"orders-{q}"]["isFuture"] for q in range(PARTITIONS))


def _online_dir(dirs: object) -> dict:
    """kafka-python's describe_log_dirs result as plain dicts (one broker, one dir)."""
    first = dirs[0] if isinstance(dirs, list) else dirs
    if hasattr(first, "to_object"):
        first = first.to_object()
    if isinstance(first, dict) and "log_dirs" in first:
        (d,) = first["log_dirs"]
        return d
    if isinstance(first, dict) and "results" in first:
        (d,) = first["results"]
        return d
    raise AssertionError(f"unexpected describe_log_dirs result: {dirs!r}")
