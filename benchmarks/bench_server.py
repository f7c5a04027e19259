"""``kafkalog serve`` benchmarks: real clients through the server vs the engine, same run.

Rows (convention of ``benchmarks/run_all.py``; ratio > 1 means the server is faster than the
baseline, so the issue's target "the server adds no more than 2x over the engine" is
ratio >= 0.5):

* ``produce.<client>.<size>``: records/s produced by confluent-kafka (librdkafka) or aiokafka
  into a fresh server on 127.0.0.1 (one topic, one partition, acks=1, ``linger.ms`` 5, no
  compression, batches as the client makes them: librdkafka's and aiokafka's defaults), from the
  first send to the last acknowledgement. Records: a 16-byte key and a random value of 100 B or
  1 KiB. Baseline: the engine's own append of the same records, ``Log.append`` of ``Record``
  lists cut into the batch size the client made (read back from the server's log).
* ``produce.<client>.<size>.server_side``: the same records over the CPU time the server's loop
  thread spent handling the produce requests (``Broker.request_metrics``: parse, validate,
  append with its ``pwrite``, encode the answer), i.e. without the client's own cost, the
  network, and the time the thread waited for a core while the client (same process) ran: what
  the server adds. The baseline ``Log.append`` runs alone, so the same measure applies.
  Before the timed run the client produces 2,000 records into another topic of the same
  server, as a running server has already loaded its kernels (from numba's cache) and made its
  first log's files: ~50 ms otherwise charged to the first requests.
* ``produce.aiokafka.100B.idempotent`` (and ``.server_side``): the same with
  ``enable_idempotence=True`` (acks=all): every batch carries a producer id and sequence, the
  producer-state checks run on each (Java producers are idempotent by default since Kafka 3.0).
  Same baseline (plain ``Log.append``).
* ``produce.<client>.<size>.replayed``: the same Produce request frames, captured from that
  run, handled again by a fresh server's ``Connection.handle_frame`` on its loop thread with no
  client in the process (records / the thread's CPU time). The client of the live run shares
  this 2-core machine (and the GIL), which makes the server's own work ~1.4x slower (measured
  with a busy loop on the other core); this row is the server's cost alone.
* ``consume.<client>.<size>``: records/s the client reads back from offset 0 (confluent:
  ``Consumer.consume`` in 1,000-message calls; aiokafka: ``getmany``), timed from the first
  message received (the clients' start-up, a second or so, is left out). Baseline: the engine's
  ``Log.records`` over the same log (one ``Record`` per record, as a client gets one message
  object per record); the note also gives ``Log.read_table`` (columnar).
* ``consume.share.confluent.100B``: records/s librdkafka's KIP-932 ``ShareConsumer`` (implicit
  acknowledgement: each poll accepts the previous one's records) reads from a share group over
  the same kind of log, timed from the first message. Baseline: the classic consumer
  (``consume.confluent``'s loop) over the same log in the same run: what acquiring, locking and
  acknowledging each record costs over a plain fetch. A warm-up group reads first, so that
  ``__share_group_state`` exists (its creation, 50 partitions on the first acknowledgement,
  is a one-time cost the classic consumer, which commits nothing here, never pays; the note
  gives it); before that warm-up the row was 0.25x, half of it that creation.
* ``produce.aiokafka.100B.replayed.quotas_on``: the replayed row's frames handled by a server
  with client quotas set (a default client-id ``producer_byte_rate`` and
  ``request_percentage`` no request reaches: bytes and handler time recorded per request) vs
  without, interleaved, best of 3: what enforcing quotas costs per request.
* ``latency.produce.acks=<1|-1>.p50`` / ``.p99``: confluent-kafka, one 100 B record at a time
  (produce, then flush: the full round trip), seconds; baseline: ``Log.append`` of one record.
* ``protocol.<request>.vs_kio_path``: the server's CPU per request handled by
  ``Connection.handle_frame`` (parse, handle, answer; no client, no socket) with the writers and
  checks generated from kio's schemas (``kafkalog.server.response_writers``, ``bounds``) vs the
  same requests through the reference path in the same run: ``build`` + kio's generic writers
  and the interpreting bounds walker. Requests: an empty Fetch of 1,000 partitions (a consumer
  of a 1,000-partition topic polling; no fetch sessions here, so every fetch lists them all),
  and Produce requests of one 129-record batch (aiokafka's batch size in the produce rows).
* ``protocol.encode.fetch_1000.vs_kio`` / ``protocol.check.fetch_1000.vs_walker``: the two
  parts alone on that Fetch: its response's bytes (same bytes, checked) and its request's
  bounds check.

Run: ``python benchmarks/bench_server.py [--quick]`` (quick: 20,000 records of 100 B and
10,000 of 1 KiB, 500 latency samples; full: 200,000, 100,000 and 3,000).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import os
import random
import shutil
import ssl
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kafkalog import Log, Record, iter_batches
from kafkalog.server import KafkaServer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_codec import _best, format_rows  # noqa: E402

TOPIC = "bench"
WARMUP_TOPIC = "warmup"
WARMUP_RECORDS = 2_000


def make_records(n: int, size: int, seed: int = 1) -> list[tuple[bytes, bytes]]:
    rng = random.Random(seed)
    pool = rng.randbytes(size * 64)
    return [(b"key-%012d" % i, pool[(i % 63) * size:(i % 63) * size + size]) for i in range(n)]


def _row(name: str, value: float, unit: str, baseline: float | None, note: str,
         time_like: bool = False) -> dict:
    ratio = None
    if baseline:
        ratio = baseline / value if time_like else value / baseline
    return {"name": name, "value": value, "unit": unit, "baseline": baseline, "ratio": ratio,
            "note": note}


def _server(tmp: Path, quotas: bool = False) -> KafkaServer:
    root = Path(tempfile.mkdtemp(dir=tmp))
    if quotas:
        from kafkalog.quotas import ClientQuotaStore

        ClientQuotaStore(root).alter([({"client-id": None}, [
            ("producer_byte_rate", 1e15, False), ("request_percentage", 1e9, False)])])
    server = KafkaServer(root, "127.0.0.1", 0).start()
    server.broker.create_topic(TOPIC, 1)
    return server


def _batch_counts(server: KafkaServer) -> list[int]:
    log = server.broker.log(TOPIC, 0)
    return [b.record_count for b in iter_batches(log.read(0, 1 << 40))]


def engine_append(tmp: Path, records: list[tuple[bytes, bytes]], counts: list[int]) -> float:
    """records/s of Log.append with the clients' batch sizes."""
    now = int(time.time() * 1000)
    recs = [Record(k, v, now) for k, v in records]
    path = Path(tempfile.mkdtemp(dir=tmp)) / f"{TOPIC}-0"
    with Log.open(path) as log:
        i = 0
        t0 = time.perf_counter()
        for c in counts:
            log.append(recs[i:i + c])
            i += c
        elapsed = time.perf_counter() - t0
    shutil.rmtree(path.parent, ignore_errors=True)
    return len(records) / elapsed


@contextlib.contextmanager
def _captured_produce_frames() -> Iterator[list[bytes]]:
    """The Produce request frames every connection handles meanwhile (in order)."""
    from kafkalog.server.connection import Connection

    frames: list[bytes] = []
    original = Connection.handle_frame

    async def capture(self: Connection, frame: bytes) -> bytes | None:
        if frame[:2] == b"\x00\x00":  # api key 0
            frames.append(bytes(frame))
        return await original(self, frame)

    Connection.handle_frame = capture  # type: ignore[method-assign]
    try:
        yield frames
    finally:
        Connection.handle_frame = original  # type: ignore[method-assign]


class _NoPeer:
    """The stream writer a replayed Connection never writes to (it only asks the peer)."""

    def get_extra_info(self, name: str) -> object:
        return ("replay", 0)


def replay_produce(tmp: Path, frames: list[bytes], quotas: bool = False) -> float:
    """CPU seconds a fresh server's loop thread spends handling ``frames`` (Produce requests
    as a client sent them), with no client in the process: the server's own cost. ``quotas``:
    the server has client quotas for every client (producer_byte_rate, request_percentage;
    high enough never to throttle) and so measures each request's bytes and handler time."""
    from kafkalog.server.connection import Connection

    server = _server(tmp, quotas)
    try:
        def handle_all() -> int:
            conn = Connection(server.broker, None, _NoPeer())  # type: ignore[arg-type]
            for frame in frames:
                coro = conn.handle_frame(frame)
                try:  # a produce request never waits (one replica): one step completes it
                    coro.send(None)
                except StopIteration:
                    continue
                coro.close()
                raise RuntimeError("a replayed produce request waited")
            return server.broker.request_metrics["Produce"][2]

        return server.call(handle_all) / 1e9
    finally:
        server.stop()


def bench_quotas(tmp: Path, n: int, rounds: int = 3) -> list[dict]:
    """``produce.aiokafka.100B.replayed.quotas_on``: what client quotas cost the server when
    set (none throttles): aiokafka's produce requests (~130 records each: many requests, so
    the per-request cost shows) captured once, replayed by fresh servers with and without
    quotas, interleaved, best of ``rounds``."""
    records = make_records(n, 100)
    server = _server(tmp)
    try:
        with _captured_produce_frames() as frames:
            aiokafka_produce(server.address, records)
    finally:
        server.stop()
    plain = quota = float("inf")
    for _ in range(rounds):
        plain = min(plain, replay_produce(tmp, frames))
        quota = min(quota, replay_produce(tmp, frames, quotas=True))
    return [_row("produce.aiokafka.100B.replayed.quotas_on", n / quota, "records/s", n / plain,
                 f"{len(frames)} produce requests of {n} records (captured from aiokafka) "
                 "handled by a server with a default client-id quota of producer_byte_rate and "
                 "request_percentage (never violated: every request's bytes and handler time "
                 "recorded) vs the same frames without quotas; best of "
                 f"{rounds}, interleaved")]


def engine_read(server: KafkaServer) -> tuple[float, float]:
    """records/s of Log.records and Log.read_table over the server's log (stopped)."""
    path = Path(server.broker.log_dir.root) / f"{TOPIC}-0"
    with Log.open(path, read_only=True) as log:
        t0 = time.perf_counter()
        n = sum(1 for _ in log.records())
        t1 = time.perf_counter()
        rows = log.read_table().num_rows
        t2 = time.perf_counter()
    assert n == rows
    return n / (t1 - t0), n / (t2 - t1)


# -- confluent-kafka ---------------------------------------------------------------------------


def confluent_produce(address: str, records: list[tuple[bytes, bytes]], acks: str = "1",
                      topic: str = TOPIC, conf: dict | None = None) -> float:
    import confluent_kafka as ck

    p = ck.Producer({"bootstrap.servers": address, "acks": acks, "linger.ms": 5, **(conf or {})})
    p.list_topics(topic, timeout=10)  # metadata before the clock starts
    t0 = time.perf_counter()
    for k, v in records:
        while True:
            try:
                p.produce(topic, key=k, value=v, partition=0)
                break
            except BufferError:
                p.poll(0.01)
    assert p.flush(120) == 0
    return len(records) / (time.perf_counter() - t0)


def confluent_consume(address: str, n: int, conf: dict | None = None) -> float:
    import confluent_kafka as ck

    c = ck.Consumer({"bootstrap.servers": address, "group.id": "bench",
                     "enable.auto.commit": False, **(conf or {})})
    c.assign([ck.TopicPartition(TOPIC, 0, ck.OFFSET_BEGINNING)])
    got = 0
    t0 = 0.0
    while got < n:
        msgs = c.consume(1000, 5.0)
        if not msgs:
            raise RuntimeError(f"consumer stalled at {got} of {n}")
        if not got:  # the clock starts at the first message: client start-up excluded
            t0 = time.perf_counter()
            first = len(msgs)
        got += len(msgs)
    elapsed = time.perf_counter() - t0
    c.close()
    return (n - first) / elapsed


def confluent_latency(address: str, samples: int, acks: str) -> list[float]:
    import confluent_kafka as ck

    p = ck.Producer({"bootstrap.servers": address, "acks": acks, "linger.ms": 0})
    p.list_topics(TOPIC, timeout=10)
    value = b"x" * 100
    out = []
    for _ in range(samples):
        t0 = time.perf_counter()
        p.produce(TOPIC, value=value, partition=0)
        p.flush(30)
        out.append(time.perf_counter() - t0)
    return out


# -- aiokafka ----------------------------------------------------------------------------------


def aiokafka_produce(address: str, records: list[tuple[bytes, bytes]], topic: str = TOPIC,
                     idempotent: bool = False) -> float:
    from aiokafka import AIOKafkaProducer

    async def run() -> float:
        # (an idempotent producer needs acks=all)
        p = AIOKafkaProducer(bootstrap_servers=address, acks="all" if idempotent else 1,
                             linger_ms=5, enable_idempotence=idempotent)
        await p.start()
        await p.partitions_for(topic)
        t0 = time.perf_counter()
        futures = [await p.send(topic, key=k, value=v, partition=0) for k, v in records]
        await asyncio.gather(*futures)
        elapsed = time.perf_counter() - t0
        await p.stop()
        return len(records) / elapsed

    return asyncio.run(run())


def aiokafka_consume(address: str, n: int) -> float:
    from aiokafka import AIOKafkaConsumer, TopicPartition

    async def run() -> float:
        c = AIOKafkaConsumer(bootstrap_servers=address, enable_auto_commit=False)
        await c.start()
        c.assign([TopicPartition(TOPIC, 0)])
        await c.seek_to_beginning()
        got = first = 0
        t0 = 0.0
        while got < n:
            batch = await c.getmany(timeout_ms=5000, max_records=10000)
            if not batch:
                raise RuntimeError(f"consumer stalled at {got} of {n}")
            if not got:  # the clock starts at the first message: client start-up excluded
                t0 = time.perf_counter()
                first = sum(len(m) for m in batch.values())
            got += sum(len(m) for m in batch.values())
        elapsed = time.perf_counter() - t0
        await c.stop()
        return (n - first) / elapsed

    return asyncio.run(run())


# -- rows --------------------------------------------------------------------------------------


def bench_throughput(tmp: Path, client: str, size: int, n: int, idempotent: bool = False
                     ) -> list[dict]:
    records = make_records(n, size)
    server = _server(tmp)
    try:
        if client == "confluent":
            produce, consume = confluent_produce, confluent_consume
        else:
            produce = functools.partial(aiokafka_produce, idempotent=idempotent)
            consume = aiokafka_consume
        # the server warmed up first, as a running server is: kernels loaded from numba's
        # cache, files of a first log created, first connections made (~50 ms that would
        # otherwise be charged to the first requests timed)
        server.broker.create_topic(WARMUP_TOPIC, 1)
        produce(server.address, records[:WARMUP_RECORDS], topic=WARMUP_TOPIC)
        server.broker.request_metrics.clear()
        with _captured_produce_frames() as frames:
            produced = produce(server.address, records)
        handled = server.broker.request_metrics["Produce"][2] / 1e9  # the loop thread's CPU
        consumed = consume(server.address, n)
        counts = _batch_counts(server)
    finally:
        server.stop()
    read_records, read_table = engine_read(server)
    appended = engine_append(tmp, records, counts)
    replayed = replay_produce(tmp, frames)
    label = (f"{size}B" if size < 1024 else f"{size // 1024}KiB") \
        + (".idempotent" if idempotent else "")
    batch = f"{n} records of 16 B key + {size} B value, {len(counts)} batches " \
        f"(~{n // max(len(counts), 1)} records each, as the client made them)"
    return [
        _row(f"produce.{client}.{label}", produced, "records/s", appended,
             f"{batch}; baseline Log.append of the same batches"),
        _row(f"produce.{client}.{label}.server_side", n / handled, "records/s", appended,
             f"the same run, records / CPU time of the server's loop thread handling the "
             f"produce requests (parse, validate, append, answer; {len(counts)} requests)"),
        _row(f"produce.{client}.{label}.replayed", n / replayed, "records/s", appended,
             f"the same {len(frames)} produce requests (frames captured from the run above) "
             f"handled again by a fresh server on its loop thread with no client running: "
             f"records / the thread's CPU time (parse, validate, append, answer)"),
        _row(f"consume.{client}.{label}", consumed, "records/s", read_records,
             f"{batch}; baseline Log.records; Log.read_table {read_table:,.0f} records/s"),
    ]


def confluent_share_consume(address: str, n: int, topic: str = TOPIC,
                           group: str = "bench-share") -> float:
    import confluent_kafka as ck

    c = ck.ShareConsumer({"bootstrap.servers": address, "group.id": group,
                          "log_level": 3})
    c.subscribe([topic])
    got = 0
    t0 = 0.0
    deadline = time.monotonic() + 120
    while got < n:
        msgs = c.poll(1.0)
        if time.monotonic() > deadline:
            raise RuntimeError(f"share consumer stalled at {got} of {n}")
        if len(msgs) and not got:  # the clock starts at the first message
            t0 = time.perf_counter()
            first = len(msgs)
        got += len(msgs)
    elapsed = time.perf_counter() - t0
    c.close()
    return (n - first) / elapsed


def bench_share(tmp: Path, n: int) -> list[dict]:
    """Share-group consumption vs the classic consumer over the same log."""
    from kafkalog.server import ServerConfig

    root = Path(tempfile.mkdtemp(dir=tmp))
    server = KafkaServer(root, "127.0.0.1", 0,
                         config=ServerConfig(share_auto_offset_reset="earliest")).start()
    try:
        server.broker.create_topic(TOPIC, 1)
        server.broker.create_topic(WARMUP_TOPIC, 1)
        confluent_produce(server.address, make_records(n, 100))
        confluent_produce(server.address, make_records(WARMUP_RECORDS, 100), topic=WARMUP_TOPIC)
        classic = confluent_consume(server.address, n)
        # a share group's first acknowledgement creates __share_group_state (50 partitions,
        # as Kafka's first share-state write does): timed on its own, then the measured
        # group reads with the topic in place, as every group after the first does
        state_topic = Path(server.broker.log_dir.root) / "__share_group_state-0"
        t0 = time.perf_counter()
        confluent_share_consume(server.address, WARMUP_RECORDS, topic=WARMUP_TOPIC,
                                group="bench-share-warmup")
        first_use = time.perf_counter() - t0
        if not state_topic.is_dir():
            raise RuntimeError("the warm-up share group did not create __share_group_state")
        shared = confluent_share_consume(server.address, n)
    finally:
        server.stop()
    return [_row("consume.share.confluent.100B", shared, "records/s", classic,
                 f"{n} records of 16 B key + 100 B value, one partition; librdkafka "
                 f"ShareConsumer (implicit acknowledgement) vs the classic Consumer over the "
                 f"same log in the same run; __share_group_state already created by a "
                 f"warm-up group ({WARMUP_RECORDS} records read in {first_use:.2f} s, the "
                 f"first acknowledgement creating its 50 partitions)")]


def _wire_connect_seconds(address: str, samples: int, tls: ssl.SSLContext | None = None,
                          mechanism: str | None = None, user: str = "",
                          password: str = "") -> list[float]:
    """Seconds from a new socket to the first Metadata answer, as a client's first requests go:
    TCP connect, the TLS handshake, ApiVersions, the SASL exchange, Metadata. Frames are
    encoded by kio and exchanged on a blocking socket, so the figure is the server's (a
    client library's own scheduling is left out)."""
    import io
    import socket
    import struct

    from kio.index import load_request_schema
    from kio.serial import entity_writer

    from kafkalog.server.protocol import build

    def frame(key: int, version: int, body: dict, cid: int) -> bytes:
        cls = load_request_schema(key, version)
        out = io.BytesIO()
        entity_writer(cls.__header_schema__)(out, cls.__header_schema__(
            request_api_key=key, request_api_version=version, correlation_id=cid,
            client_id="bench"))
        entity_writer(cls)(out, build(cls, body))
        return struct.pack(">i", out.tell()) + out.getvalue()

    def roundtrip(sock: Any, data: bytes) -> bytes:
        sock.sendall(data)
        head = b""
        while len(head) < 4:
            head += sock.recv(4 - len(head))
        n = struct.unpack(">i", head)[0]
        body = b""
        while len(body) < n:
            body += sock.recv(n - len(body))
        return body

    def auth_bytes(response: bytes) -> bytes:
        from kio.index import load_response_schema
        from kio.serial import entity_reader

        cls = load_response_schema(36, 2)
        _, n = entity_reader(cls.__header_schema__)(response, 0)
        body, _ = entity_reader(cls)(response, n)
        assert body.error_code == 0, body.error_message
        return bytes(body.auth_bytes)

    host, port = address.rsplit(":", 1)
    metadata = {"topics": [{"name": TOPIC, "topic_id": None}],
                "allow_auto_topic_creation": False,
                "include_topic_authorized_operations": False}
    out = []
    for _ in range(samples):
        t0 = time.perf_counter()
        sock: Any = socket.create_connection((host, int(port)))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if tls is not None:
            sock = tls.wrap_socket(sock, server_hostname=host)
        roundtrip(sock, frame(18, 3, {"client_software_name": "bench",
                                      "client_software_version": "1"}, 1))
        if mechanism is not None:
            roundtrip(sock, frame(17, 1, {"mechanism": mechanism}, 2))
            if mechanism == "PLAIN":
                auth_bytes(roundtrip(sock, frame(36, 2, {
                    "auth_bytes": f"\x00{user}\x00{password}".encode()}, 3)))
            else:
                import scramp

                c = scramp.ScramClient([mechanism], user, password)
                first = auth_bytes(roundtrip(sock, frame(36, 2, {
                    "auth_bytes": c.get_client_first().encode()}, 3)))
                c.set_server_first(first.decode())
                final = auth_bytes(roundtrip(sock, frame(36, 2, {
                    "auth_bytes": c.get_client_final().encode()}, 4)))
                c.set_server_final(final.decode())
        roundtrip(sock, frame(3, 12, metadata, 5))
        out.append(time.perf_counter() - t0)
        sock.close()
    return out


def _bench_acls(root: Path) -> None:
    """200 ACLs in the tree: 196 of other users and prefixes, and bob's on the bench topic and
    group (and the transactional/cluster rights a producer's start-up asks for)."""
    from kafkalog.security.acls import (
        CLUSTER_NAME,
        AclBinding,
        AclOperation,
        AclPermissionType,
        AclStore,
        PatternType,
        ResourceType,
    )

    allow = AclPermissionType.ALLOW
    acls = [AclBinding(ResourceType.TOPIC, f"other-{i}", PatternType.PREFIXED, f"User:u{i}",
                       "*", AclOperation.READ, allow) for i in range(196)]
    acls += [AclBinding(ResourceType.TOPIC, TOPIC, PatternType.LITERAL, "User:bob", "*", op,
                        allow) for op in (AclOperation.READ, AclOperation.WRITE)]
    acls += [AclBinding(ResourceType.GROUP, "bench", PatternType.LITERAL, "User:bob", "*",
                        AclOperation.READ, allow),
             AclBinding(ResourceType.CLUSTER, CLUSTER_NAME, PatternType.LITERAL, "User:bob",
                        "*", AclOperation.IDEMPOTENT_WRITE, allow)]
    AclStore(root).create(acls)


def bench_security(tmp: Path, n: int, samples: int) -> list[dict]:
    """TLS and SASL listeners vs a plaintext one: throughput and the cost of a new connection.

    Each protocol gets its own server over a fresh directory; the plaintext baseline runs in
    the same process just before. The certificates come from trustme (a dev dependency)."""
    import trustme

    from kafkalog.security import ScramCredentialStore
    from kafkalog.server import ServerConfig

    ca = trustme.CA()
    pem = Path(tempfile.mkdtemp(dir=tmp))
    ca.cert_pem.write_to_path(str(pem / "ca.pem"))
    ca.issue_cert("127.0.0.1").private_key_and_cert_chain_pem.write_to_path(
        str(pem / "server.pem"))
    records = make_records(n, 100)
    setups = {
        "plaintext": ({}, {}),
        "ssl": ({"security_protocol": "SSL", "ssl_keystore_location": str(pem / "server.pem")},
                {"security.protocol": "SSL", "ssl.ca.location": str(pem / "ca.pem")}),
        "sasl_ssl.scram256": (
            {"security_protocol": "SASL_SSL", "ssl_keystore_location": str(pem / "server.pem")},
            {"security.protocol": "SASL_SSL", "ssl.ca.location": str(pem / "ca.pem"),
             "sasl.mechanism": "SCRAM-SHA-256", "sasl.username": "alice",
             "sasl.password": "alice-secret"}),
        "sasl_ssl.scram512": (
            {"security_protocol": "SASL_SSL", "ssl_keystore_location": str(pem / "server.pem")},
            {"security.protocol": "SASL_SSL", "ssl.ca.location": str(pem / "ca.pem"),
             "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "alice",
             "sasl.password": "alice-secret"}),
        "sasl_plaintext.plain": (
            {"security_protocol": "SASL_PLAINTEXT", "sasl_plain_users": {"bob": "b"}},
            {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
             "sasl.username": "bob", "sasl.password": "b"}),
        # the same with Kafka's ACL authorizer on: every produce, fetch and commit checked
        # against 200 ACLs (bob's READ/WRITE on the topic and group among them)
        "sasl_plaintext.plain.acls": (
            {"security_protocol": "SASL_PLAINTEXT", "sasl_plain_users": {"bob": "b"},
             "authorizer_class_name":
                 "org.apache.kafka.metadata.authorizer.StandardAuthorizer"},
            {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
             "sasl.username": "bob", "sasl.password": "b"}),
    }
    got: dict[str, tuple[float, float, float]] = {}
    for name, (server_fields, client_conf) in setups.items():
        root = Path(tempfile.mkdtemp(dir=tmp))
        store = ScramCredentialStore(root)
        store.set_password("alice", "SCRAM-SHA-512", "alice-secret", 4096)
        store.set_password("alice", "SCRAM-SHA-256", "alice-secret", 4096)
        if "authorizer_class_name" in server_fields:
            _bench_acls(root)
        server = KafkaServer(root, "127.0.0.1", 0,
                             config=ServerConfig(**server_fields)).start()  # type: ignore[arg-type]
        try:
            server.broker.create_topic(TOPIC, 1)
            # best of 3 (a run's consume rate is bimodal: ~1.2 or ~2.4 M records/s on this
            # machine, whichever the protocol); each produce adds n records to the topic
            produce = max(confluent_produce(server.address, records, conf=client_conf)
                          for _ in range(3))
            consume = max(confluent_consume(server.address, n, conf=client_conf)
                          for _ in range(3))
            tls = None
            if "ssl.ca.location" in client_conf:
                tls = ssl.create_default_context(cafile=client_conf["ssl.ca.location"])
            connect = _percentile(_wire_connect_seconds(
                server.address, samples, tls, client_conf.get("sasl.mechanism"),
                client_conf.get("sasl.username", ""), client_conf.get("sasl.password", "")),
                0.5)
        finally:
            server.stop()
        got[name] = (produce, consume, connect)
    base = got.pop("plaintext")
    rows = []
    what = (f"{n} records of 16 B key + 100 B value, one partition, confluent-kafka, best of 3; "
            f"baseline: the same over a PLAINTEXT listener in the same run")
    for name, (produce, consume, connect) in got.items():
        rows.append(_row(f"produce.confluent.100B.{name}", produce, "records/s", base[0], what))
        rows.append(_row(f"consume.confluent.100B.{name}", consume, "records/s", base[1], what))
        rows.append(_row(f"connect.wire.{name}", connect, "s", base[2],
                         f"median of {samples} new connections until their first Metadata "
                         f"answer (TCP connect, TLS handshake, ApiVersions, the SASL exchange "
                         f"with the client's side in Python: scramp, 4096 iterations), kio "
                         f"frames on a blocking socket; baseline: the same over PLAINTEXT",
                         time_like=True))
    return rows


def _percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def bench_latency(tmp: Path, samples: int) -> list[dict]:
    rows = []
    path = Path(tempfile.mkdtemp(dir=tmp)) / f"{TOPIC}-0"
    engine = []
    with Log.open(path) as log:
        rec = [Record(None, b"x" * 100, int(time.time() * 1000))]
        for _ in range(samples):
            t0 = time.perf_counter()
            log.append(rec)
            engine.append(time.perf_counter() - t0)
    for acks in ("1", "-1"):
        server = _server(tmp)
        try:
            confluent_latency(server.address, 20, acks)  # connections and metadata warm
            lat = confluent_latency(server.address, samples, acks)
        finally:
            server.stop()
        for q in (0.5, 0.99):
            rows.append(_row(f"latency.produce.acks={acks}.p{int(q * 100)}",
                             _percentile(lat, q), "s", _percentile(engine, q),
                             f"confluent-kafka, {samples} sequential 100 B records (produce + "
                             f"flush); baseline Log.append of one record", time_like=True))
    return rows


# -- the protocol path -------------------------------------------------------------------------


def _request_frame(key: int, version: int, body: dict) -> bytes:
    import io

    from kio.serial import entity_writer

    from kafkalog.server.protocol import build, request_schema

    cls = request_schema(key, version)
    out = io.BytesIO()
    header = cls.__header_schema__
    entity_writer(header)(out, build(header, {"request_api_key": key, "request_api_version":
                                              version, "correlation_id": 1,
                                              "client_id": "bench"}))
    entity_writer(cls)(out, build(cls, body))
    return out.getvalue()


@contextlib.contextmanager
def _reference_protocol_path() -> Iterator[None]:
    """The server parsing and answering through ``build`` + kio's writers and the interpreting
    bounds walker (the path before the generated ones)."""
    from kafkalog.server import bounds, connection, protocol

    def reference(key: int, version: int, correlation_id: int, values: Any) -> bytes:
        return protocol.encode_response(key, version, correlation_id,
                                        protocol.build(protocol.response_class(key, version),
                                                       values))

    saved = protocol.check_frame, connection.encode_response_values
    protocol.check_frame, connection.encode_response_values = bounds.walk_frame, reference
    try:
        yield
    finally:
        protocol.check_frame, connection.encode_response_values = saved


def _handle_cpu(server: KafkaServer, frames: list[bytes], rounds: int) -> float:
    """The loop thread's CPU seconds per frame handled (best of ``rounds``)."""
    from kafkalog.server.connection import Connection

    def handle_all() -> float:
        conn = Connection(server.broker, None, _NoPeer())  # type: ignore[arg-type]
        best = float("inf")
        for _ in range(rounds):
            t0 = time.thread_time()
            for frame in frames:
                coro = conn.handle_frame(frame)
                try:
                    coro.send(None)
                except StopIteration:
                    continue
                coro.close()
                raise RuntimeError("a replayed request waited")
            best = min(best, time.thread_time() - t0)
        return best / len(frames)

    return server.call(handle_all)


def bench_protocol(tmp: Path, rounds: int) -> list[dict]:
    from kafkalog.records.builder import encode_batch
    from kafkalog.server import bounds
    from kafkalog.server.protocol import build, encode_response, request_schema, response_class
    from kafkalog.server.response_writers import encode_response_values

    root = Path(tempfile.mkdtemp(dir=tmp))
    # (small preallocated indexes: 1,000 partitions of 10 MiB .index + .timeindex are 20 GB)
    server = KafkaServer(root, "127.0.0.1", 0).start()
    try:
        server.broker.create_topic("many", 1000, {"segment.index.bytes": "4096"})
        server.broker.create_topic(TOPIC, 1)
        fetch = _request_frame(1, 12, {
            "replica_id": -1, "max_wait": 0, "min_bytes": 1, "max_bytes": 52428800,
            "isolation_level": 0, "session_id": 0, "session_epoch": -1, "rack_id": "",
            "forgotten_topics_data": [], "topics": [{"topic": "many", "partitions": [
                {"partition": i, "current_leader_epoch": -1, "fetch_offset": 0,
                 "last_fetched_epoch": -1, "log_start_offset": -1,
                 "partition_max_bytes": 1048576} for i in range(1000)]}]})
        keys, values = zip(*make_records(129 * 50, 100))
        produce = [_request_frame(0, 7, {
            "transactional_id": None, "acks": 1, "timeout": 30000, "topic_data": [
                {"name": TOPIC, "partition_data": [{"index": 0, "records": encode_batch(
                    [Record(k, v, 1_700_000_000_000) for k, v in
                     zip(keys[i:i + 129], values[i:i + 129])])}]}]})
            for i in range(0, len(keys), 129)]
        out = []
        for name, frames, what in (
                ("fetch_1000", [fetch], "an empty Fetch v12 of 1,000 partitions (max_wait 0)"),
                ("produce_129", produce, "Produce v7 requests of one 129-record batch of "
                                         "116-byte records each")):
            _handle_cpu(server, frames[:1], 1)  # (kernels and generated code loaded)
            new = _handle_cpu(server, frames, rounds)
            with _reference_protocol_path():
                ref = _handle_cpu(server, frames, rounds)
            out.append(_row(f"protocol.{name}.vs_kio_path", new, "s", ref,
                            f"CPU of the server's loop thread per request, {what}, parsed, "
                            f"handled and answered by Connection.handle_frame (no client); "
                            f"baseline: the same with build + kio's writers and the "
                            f"interpreting bounds walker; best of {rounds}", time_like=True))
        # the two parts alone, on the Fetch
        cls = request_schema(1, 12)
        conn_values = {"throttle_time": 0, "error_code": 0, "session_id": 0, "responses": [
            {"topic": "many", "topic_id": None, "partitions": [
                {"partition_index": i, "high_watermark": 0, "last_stable_offset": 0,
                 "log_start_offset": 0, "aborted_transactions": None, "records": b"",
                 "error_code": 0} for i in range(1000)]}]}
        assert encode_response_values(1, 12, 1, conn_values) == encode_response(
            1, 12, 1, build(response_class(1, 12), conn_values))

        enc = _best(lambda: encode_response_values(1, 12, 1, conn_values), rounds)
        enc_ref = _best(lambda: encode_response(1, 12, 1, build(response_class(1, 12),
                                                                conn_values)), rounds)
        out.append(_row("protocol.encode.fetch_1000.vs_kio", enc, "s", enc_ref,
                        "the response of an empty Fetch v12 of 1,000 partitions to bytes: "
                        "the generated writer vs build + kio's entity writer (same bytes, "
                        f"checked); best of {rounds}", time_like=True))
        chk = _best(lambda: bounds.check_frame(cls, fetch), rounds)
        chk_ref = _best(lambda: bounds.walk_frame(cls, fetch), rounds)
        out.append(_row("protocol.check.fetch_1000.vs_walker", chk, "s", chk_ref,
                        "the bounds check of that Fetch request's 33 KB frame: the generated "
                        f"check vs the interpreting walker; best of {rounds}", time_like=True))
        return out
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


def run(quick: bool = False) -> list[dict]:
    tmp = Path(tempfile.mkdtemp(prefix="kafkalog-bench-server-", dir=os.environ.get("TMPDIR")))
    try:
        # (first: in a process still small, as a server's is; a gen-2 collection walks every
        # object, and the reference path allocates a dataclass per struct)
        rows = bench_protocol(tmp, 5 if quick else 30)
        for client in ("confluent", "aiokafka"):
            rows += bench_throughput(tmp, client, 100, 20_000 if quick else 200_000)
            rows += bench_throughput(tmp, client, 1024, 10_000 if quick else 100_000)
        rows += bench_throughput(tmp, "aiokafka", 100, 20_000 if quick else 200_000,
                                 idempotent=True)
        rows += bench_share(tmp, 20_000 if quick else 200_000)
        rows += bench_quotas(tmp, 20_000 if quick else 200_000)
        rows += bench_security(tmp, 20_000 if quick else 200_000, 10 if quick else 50)
        rows += bench_latency(tmp, 500 if quick else 3000)
        return rows
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller inputs")
    args = parser.parse_args(argv)
    print(format_rows(run(quick=args.quick)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
