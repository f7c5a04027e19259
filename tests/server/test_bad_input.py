"""Bad input: garbage bytes, an oversized frame, frames cut mid-way, unknown API keys and
unsupported versions. The server closes only the offending connection (with a log line) or
answers with Kafka's error code, keeps serving the others, and loses no acknowledged record."""

from __future__ import annotations

import logging
import os
import random
import socket
import struct
import threading
import time

import pytest

from kafkalog import Record

from .conftest import start_server
from .wire import WireClient

ck = pytest.importorskip("confluent_kafka", reason="confluent-kafka is not installed")

UNSUPPORTED_VERSION = 35


def closed_by_server(sock: socket.socket, timeout: float = 10.0) -> bool:
    sock.settimeout(timeout)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def api_versions_ok(address: str) -> bool:
    with WireClient(address) as c:
        return c.request(18, 3, {"client_software_name": "t",
                                 "client_software_version": "1"}).error_code == 0


@pytest.mark.parametrize("payload", [
    pytest.param(b"\xff" * 64, id="negative-size"),
    pytest.param(struct.pack(">i", 2**31 - 1) + b"x" * 64, id="oversized-frame"),
    pytest.param(struct.pack(">i", 3) + b"abc", id="frame-shorter-than-a-header"),
    pytest.param(None, id="random-garbage"),
])
def test_garbage_closes_only_that_connection(server, caplog, payload):
    caplog.set_level(logging.WARNING, logger="kafkalog.server")
    if payload is None:
        payload = random.Random(5).randbytes(4096)
    bad = socket.create_connection(("127.0.0.1", server.port))
    bystander = WireClient(server.address)
    bad.sendall(payload)
    assert closed_by_server(bad)
    assert bystander.request(3, 12, {"topics": None, "allow_auto_topic_creation": False,
                                     "include_topic_authorized_operations": False}).brokers
    bystander.close()
    assert api_versions_ok(server.address)
    assert any("closing connection" in r.getMessage() for r in caplog.records)


def test_request_body_that_does_not_parse_closes_the_connection(server, caplog):
    caplog.set_level(logging.WARNING, logger="kafkalog.server")
    with WireClient(server.address) as c:
        good = c.encode(3, 12, {"topics": None, "allow_auto_topic_creation": False,
                                "include_topic_authorized_operations": False})
        body = good[4:]
        cut = body[:14] + b"\xff\xff\xff"  # header kept, topics array length garbage
        c.send_raw(struct.pack(">i", len(cut)) + cut)
        assert closed_by_server(c.sock)
    assert any("does not parse" in r.getMessage() for r in caplog.records)
    assert api_versions_ok(server.address)


def test_frame_cut_mid_way_appends_nothing(server, log_dir, caplog):
    caplog.set_level(logging.WARNING, logger="kafkalog.server")
    server.broker.create_topic("t", 1)
    from kafkalog import encode_batch

    batch = encode_batch([Record(None, b"never", 1)])
    with WireClient(server.address) as c:
        frame = c.encode(0, 9, {"transactional_id": None, "acks": -1, "timeout": 30000,
                                "topic_data": [{"name": "t", "partition_data": [
                                    {"index": 0, "records": batch}]}]})
        c.send_raw(frame[: len(frame) - 10])
    deadline = time.monotonic() + 10
    while not any("cut mid-way" in r.getMessage() for r in caplog.records):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert server.broker.log("t", 0).log_end_offset == 0


def test_unknown_api_key_and_unsupported_versions_answer_35(server):
    with WireClient(server.address) as c:
        for key, version in [(999, 0), (0, 2), (3, 99), (68, 0)]:
            c.send_raw(struct.pack(">ihhi", 8 + 2 + 4, key, version, 4242)
                       + struct.pack(">h", 4) + b"test")
            frame = c.read_frame()
            cid, code = struct.unpack_from(">ih", frame)
            assert (cid, code) == (4242, UNSUPPORTED_VERSION)
        # an ApiVersions request above the served range: Kafka's v0 answer with the list
        c.send_raw(struct.pack(">ihhi", 8 + 2 + 4, 18, 99, 77) + struct.pack(">h", 4)
                   + b"test")
        cid, resp = c.read_response(18, 0)
        assert cid == 77 and resp.error_code == UNSUPPORTED_VERSION
        assert {a.api_key for a in resp.api_keys} >= {0, 1, 2, 3, 18}
        # the connection still serves
        assert c.request(18, 3, {"client_software_name": "t",
                                 "client_software_version": "1"}).error_code == 0


def test_no_acknowledged_record_lost_under_bad_connections(log_dir):
    server = start_server(log_dir)
    server.broker.create_topic("t", 2)
    acked: list[tuple[int, int, bytes]] = []
    stop = threading.Event()

    def attack() -> None:
        rng = random.Random(11)
        while not stop.is_set():
            try:
                s = socket.create_connection(("127.0.0.1", server.port))
                kind = rng.randrange(4)
                if kind == 0:
                    s.sendall(rng.randbytes(rng.randrange(1, 2000)))
                elif kind == 1:
                    s.sendall(struct.pack(">i", 500) + rng.randbytes(100))
                elif kind == 2:
                    s.sendall(struct.pack(">ihhi", 10, 0, 9, 1) + b"\x00\x00")
                else:
                    s.sendall(struct.pack(">i", 2**30))
                s.close()
            except OSError:
                pass

    attackers = [threading.Thread(target=attack) for _ in range(2)]
    for t in attackers:
        t.start()
    try:
        p = ck.Producer({"bootstrap.servers": server.address, "acks": "all",
                         "enable.idempotence": True, "linger.ms": 2})

        def on_delivery(err, msg):
            if err is None:
                acked.append((msg.partition(), msg.offset(), msg.value()))

        for i in range(3000):
            p.produce("t", value=b"v%d" % i, partition=i % 2, on_delivery=on_delivery)
            if i % 100 == 0:
                p.poll(0)
        assert p.flush(60) == 0
    finally:
        stop.set()
        for t in attackers:
            t.join()
        server.stop()
    assert len(acked) == 3000
    server = start_server(log_dir)  # clean reopen: every acknowledged record is there
    try:
        for part in (0, 1):
            log = server.broker.log("t", part)
            stored = {r.offset: r.value for r in log.records()}
            for p_, off, value in acked:
                if p_ == part:
                    assert stored[off] == value
    finally:
        server.stop()
    assert os.path.exists(log_dir / ".kafka_cleanshutdown")
