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

from kafkalog import Record, encode_batch, iter_batches

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
    assert any("closing connection" in r.getMessage() and "MetadataRequest v12" in r.getMessage()
               for r in caplog.records)
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
        # 76 v0: ShareGroupHeartbeat's early-access version (v1 is served); 86:
        # DeleteShareGroupState (broker to broker), not served
        for key, version in [(999, 0), (0, 2), (3, 99), (76, 0), (86, 0)]:
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


def _valid_frames(address: str) -> list[bytes]:
    c = WireClient(address)
    frames = [
        c.encode(3, 12, {"topics": [{"name": "t", "topic_id": None}],
                         "allow_auto_topic_creation": False,
                         "include_topic_authorized_operations": False}),
        c.encode(0, 9, {"transactional_id": None, "acks": 1, "timeout": 1000, "topic_data": [
            {"name": "t", "partition_data": [
                {"index": 0, "records": encode_batch([Record(b"k", b"v", 1)])}]}]}),
        c.encode(2, 9, {"replica_id": -1, "isolation_level": 0, "topics": [
            {"name": "t", "partitions": [{"partition_index": 0, "current_leader_epoch": -1,
                                          "timestamp": -1}]}]}),
        c.encode(19, 7, {"topics": [{"name": "x", "num_partitions": 1,
                                     "replication_factor": 1, "assignments": [],
                                     "configs": []}], "timeout": 1000,
                         "validate_only": True}),
    ]
    c.close()
    return [f[4:] for f in frames]


def test_mutated_requests_never_take_the_server_down(server, caplog):
    """Each request with random bytes flipped, cut or appended (the size prefix kept right):
    the server answers or closes that connection; it always serves the next one."""
    server.broker.create_topic("t", 1)
    rng = random.Random(2024)
    frames = _valid_frames(server.address)
    answered = closed = 0
    for _ in range(300):
        body = bytearray(rng.choice(frames))
        for _ in range(rng.randrange(1, 6)):
            op = rng.randrange(3)
            if op == 0 and len(body) > 8:
                body[rng.randrange(8, len(body))] = rng.randrange(256)
            elif op == 1 and len(body) > 9:
                del body[rng.randrange(9, len(body)):]
            else:
                body += rng.randbytes(rng.randrange(1, 20))
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
            s.sendall(struct.pack(">i", len(body)) + bytes(body))
            s.shutdown(socket.SHUT_WR)
            data = b""
            while chunk := s.recv(65536):
                data += chunk
        if data:
            answered += 1
            assert struct.unpack_from(">i", data)[0] == len(data) - 4
        else:
            closed += 1
    assert answered and closed
    assert api_versions_ok(server.address)
    # no handler failed on what the decoder accepted (that would be logged as unexpected)
    assert not [r for r in caplog.records if "unexpected" in r.getMessage()]
    # every append that was answered is a whole, valid batch
    log = server.broker.log("t", 0)
    assert all(b.is_valid for b in iter_batches(log.read(0, 1 << 30)))


# Found by the mutation test: a Metadata v12 request whose compact topics array claims ~2**35
# elements. kio 0.6.5's Rust reader reserved the storage up front and the process aborted
# (``memory allocation of 271083459176 bytes failed``); kafkalog.server.bounds refuses it first.
HUGE_ARRAY_FRAME = bytes.fromhex("0003000c000000010009776972652d7465737400ced4ea9d7ef69649e98dda9d"
                                 "735732f410")


def test_impossible_array_count_closes_the_connection_instead_of_aborting(server, caplog):
    caplog.set_level(logging.WARNING, logger="kafkalog.server")
    with WireClient(server.address) as c:
        c.send_raw(struct.pack(">i", len(HUGE_ARRAY_FRAME)) + HUGE_ARRAY_FRAME)
        assert closed_by_server(c.sock)
    assert any("elements in" in r.getMessage() for r in caplog.records)
    assert api_versions_ok(server.address)


@pytest.mark.parametrize("seed", range(3))
def test_random_bodies_parse_or_raise_protocol_error(seed):
    """Every API and version served, random bodies: kio parses them or check_frame/decode
    raise ProtocolError, never anything else (and never an abort)."""
    from kio.index import load_request_schema

    import kafkalog.server.handlers  # noqa: F401 - the API table
    from kafkalog.server.api import APIS
    from kafkalog.server.errors import ProtocolError
    from kafkalog.server.protocol import decode_request

    rng = random.Random(seed)
    for _ in range(2000):
        api = rng.choice(list(APIS.values()))
        v = rng.randint(api.min_version, api.max_version)
        flexible = load_request_schema(api.key, v).__header_schema__.__flexible__
        frame = struct.pack(">hhih", api.key, v, 1, 3) + b"abc" + (b"\0" if flexible else b"")
        frame += bytes(rng.choice([0, 1, 2, 0x7F, 0x80, 0xFF, rng.randrange(256)])
                       for _ in range(rng.choice([0, 1, 5, 30, 100])))
        try:
            decode_request(frame, api.key, v)
        except ProtocolError:
            pass
