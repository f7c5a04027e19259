"""``kafkalog console-consumer`` against peers: records kafka-python produced through
``kafkalog serve`` (transactions included), printed by kcat (librdkafka) over the wire and by
the console consumer from the files the server wrote, line for line."""

from __future__ import annotations

import io
import shutil
import subprocess

import pytest

from kafkalog.console import console_consumer

from .conftest import start_server

pytestmark = pytest.mark.filterwarnings("ignore:.* is deprecated. Use files:DeprecationWarning")
kafka = pytest.importorskip("kafka", reason="kafka-python is not installed")
from kafka import KafkaProducer  # noqa: E402

KCAT = shutil.which("kcat") or shutil.which("kafkacat")


def offline(log_dir, *argv: str) -> list[str]:
    out, err = io.BytesIO(), io.StringIO()
    assert console_consumer.main([str(log_dir), *argv], stdout=out, stderr=err) == 0, \
        err.getvalue()
    return out.getvalue().decode().splitlines()


@pytest.mark.skipif(KCAT is None, reason="kcat is not installed (Debian package kcat; CI "
                                         "installs it)")
def test_console_consumer_prints_what_kcat_reads(log_dir):
    server = start_server(log_dir)
    try:
        server.broker.create_topic("t", 3)
        p = KafkaProducer(bootstrap_servers=server.address, linger_ms=5,
                          compression_type="gzip")
        try:
            for i in range(60):
                p.send("t", key=None if i % 7 == 0 else b"key-%d" % i, value=b"value %d" % i,
                       headers=[("h", b"%d" % i)], partition=i % 3)
            p.send("t", key=b"tomb", value=None, partition=1)
            p.flush(60)
        finally:
            p.close()
        tx = KafkaProducer(bootstrap_servers=server.address, transactional_id="cc-tx")
        try:
            tx.init_transactions()
            tx.begin_transaction()
            tx.send("t", key=b"aborted", value=b"never committed", partition=2)
            tx.flush(60)
            tx.abort_transaction()
            tx.begin_transaction()
            tx.send("t", key=b"committed", value=b"in a transaction", partition=2)
            tx.commit_transaction()
        finally:
            tx.close()
        fmt = "CreateTime:%T\tPartition:%p\tOffset:%o\t%k\t%s\n"
        seen = {}
        for isolation in ("read_uncommitted", "read_committed"):
            run = subprocess.run(
                [KCAT, "-b", server.address, "-C", "-t", "t", "-o", "beginning", "-e", "-Z",
                 "-X", f"isolation.level={isolation}", "-f", fmt],
                capture_output=True, text=True, timeout=60, check=True)
            seen[isolation] = run.stdout.splitlines()
    finally:
        server.stop()
    for isolation, wire in seen.items():
        files = offline(log_dir, "--topic", "t", "--from-beginning",
                        "--isolation-level", isolation,
                        "--formatter-property", "print.timestamp=true",
                        "--formatter-property", "print.partition=true",
                        "--formatter-property", "print.offset=true",
                        "--formatter-property", "print.key=true",
                        "--formatter-property", "null.literal=NULL")

        def order(line: str) -> tuple[int, int]:
            f = line.split("\t")
            return int(f[1].split(":")[1]), int(f[2].split(":")[1])
        assert sorted(wire, key=order) == files, isolation
    assert len(seen["read_uncommitted"]) == 63 and len(seen["read_committed"]) == 62
    assert any(line.endswith("\tnever committed") for line in seen["read_uncommitted"])
