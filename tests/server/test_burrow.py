"""LinkedIn's Burrow 1.2.1 (Debian's ``burrow``) decoding the consumer groups' offsets that
``kafkalog serve`` keeps in ``__consumer_offsets``.

Burrow is an independent peer: a Go program on sarama that consumes ``__consumer_offsets`` from
the broker and decodes every offset-commit and group-metadata record with its own hand-written
code (``core/internal/consumer/kafka_client.go``), and polls log end offsets with ListOffsets
(``core/internal/cluster/kafka_cluster.go``). It shares no code with kafkalog or the Python
clients that commit here. The test runs it against a real ZooKeeper (its locks) and checks,
record by record, that what Burrow decoded from our ``__consumer_offsets`` is what the engine
stored and the clients committed: group, topic, partition, offset and commit timestamp. Groups:
a simple group committing a different offset per partition (kafka-python), a group committing
with a retention time (OffsetCommit v2: an ``OffsetCommitValue`` v1 with an expire timestamp)
and a group with an active member (group-metadata records). More commits while Burrow runs must
reach it too: it keeps consuming ``__consumer_offsets`` from our server.

What Burrow 1.2.1 cannot do (it predates formats and protocol baselines Kafka has had for years,
and fails the same way against Kafka 4.x); the test checks the decoding, not these:

* its cluster module sends ListOffsets **v0** (``&sarama.OffsetRequest{}`` without a version,
  ``kafka_cluster.go`` ``generateOffsetRequests``; versioned only in Burrow 1.9.4, commit
  18dc676). Kafka 4.0 removed v0 (``ListOffsetsRequest.json``: "Version 0 was removed in Apache
  Kafka 4.0"), so Burrow never learns a log end offset; its in-memory storage then drops every
  consumer offset ("no topic") and its HTTP API lists no topic, no consumer and no lag;
* it decodes ``GroupMetadataValue`` v0-v1 only: Kafka writes v3 since IBP 2.3 and in every 4.x
  (Burrow reads v2-v3 from 1.3.0), so the group-metadata records are logged "failed to decode",
  reason "value version", version 3 (asserted: the only records it refuses);
* it decodes ``OffsetCommitValue`` v0, v1 and v3 only (v4, which Kafka 4.1+ writes for a commit
  without retention, from Burrow 1.9.5, commit 2451d6f). kafkalog writes v3, which every
  broker from 2.1 to 4.2 loads (see ``kafkalog.groups.records``).

Skipped without ``/usr/bin/Burrow`` or a ZooKeeper (see tests/zookeeper_server.py).
"""

from __future__ import annotations

import datetime
import json
import socket
import struct
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kafkalog import Record
from kafkalog.groups.records import GroupMetadataRecord, OffsetCommit, decode

from ..processes import stop_process
from ..test_cluster_zookeeper import zookeeper  # noqa: F401 - the session fixture
from .conftest import TEST_CONFIG
from .wire import WireClient

BURROW = Path("/usr/bin/Burrow")
pytestmark = [
    pytest.mark.skipif(not BURROW.exists(), reason="Burrow is not installed at /usr/bin/Burrow "
                       "(Debian package burrow)"),
    pytest.mark.filterwarnings("ignore:.* is deprecated. Use files:DeprecationWarning"),
]
kafka = pytest.importorskip("kafka", reason="kafka-python is not installed")
from kafka import KafkaConsumer, TopicPartition  # noqa: E402
from kafka.structs import OffsetAndMetadata  # noqa: E402

DEADLINE_S = 30
TOPIC = "orders"
#: records appended per partition
END_OFFSETS = {0: 40, 1: 25, 2: 10}
OFFSETS_PARTITIONS = TEST_CONFIG.offsets_topic_num_partitions
#: value versions Burrow 1.2.1 decodes (kafka_client.go: decodeKeyAndOffset's and
#: decodeGroupMetadata's switch); any other is logged "failed to decode", "value version"
BURROW_OFFSET_VALUE_VERSIONS = {0, 1, 3}
BURROW_GROUP_VALUE_VERSIONS = {0, 1}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Burrow:
    """A running Burrow with its log (JSON lines at debug level) and HTTP API."""

    def __init__(self, workdir: Path, zookeeper_connect: str, kafka: str) -> None:
        self.workdir = workdir
        self.log_file = workdir / "burrow.log"
        self.out_file = workdir / "burrow.out"
        self.http = f"127.0.0.1:{_free_port()}"
        conf = workdir / "conf"
        conf.mkdir()
        (conf / "burrow.toml").write_text(f"""\
[general]
pidfile="{workdir / 'burrow.pid'}"

[logging]
filename="{self.log_file}"
level="debug"

[zookeeper]
servers=["{zookeeper_connect}"]
timeout=6
root-path="/burrow-{uuid.uuid4().hex[:8]}"

[client-profile.kafkalog]
client-id="burrow-test"
kafka-version="2.1.0"

[cluster.local]
class-name="kafka"
servers=["{kafka}"]
client-profile="kafkalog"
topic-refresh=1
offset-refresh=1

[consumer.local]
class-name="kafka"
cluster="local"
servers=["{kafka}"]
client-profile="kafkalog"
start-latest=false

[httpserver.default]
address="{self.http}"

[storage.default]
class-name="inmemory"
workers=4
intervals=5
expire-group=604800
min-distance=1
""")
        with open(self.out_file, "wb") as out:
            self.process = subprocess.Popen([str(BURROW), "--config-dir", str(conf)],
                                            cwd=workdir, stdout=out, stderr=subprocess.STDOUT)

    def stop(self) -> None:
        stop_process(self.process)

    def lines(self) -> list[dict[str, Any]]:
        """The log's JSON lines so far (a line being written is left for the next call)."""
        out = []
        if self.log_file.exists():
            for line in self.log_file.read_text(errors="replace").splitlines():
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
        return out

    def diagnostics(self) -> str:
        """The end of Burrow's output and of its log without the debug lines, for messages."""
        out = self.out_file.read_text(errors="replace")[-2000:] if self.out_file.exists() else ""
        log, seen = [], set()
        for x in self.lines():
            # (the cluster module repeats its error every offset-refresh: shown once)
            repeat = (x.get("msg"), x.get("sarama_error"))
            if x.get("level") != "debug" and (repeat not in seen or "sarama_error" not in x):
                seen.add(repeat)
                log.append(json.dumps(x))
        return f"\n--- Burrow output:\n{out}\n--- Burrow log (not debug):\n" + \
            "\n".join(log[-40:])

    def get(self, path: str) -> tuple[int, dict[str, Any]]:
        try:
            with urllib.request.urlopen(f"http://{self.http}{path}", timeout=5) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def wait(self, check: Callable[[], str | None], what: str) -> None:
        """Until ``check`` returns None (else what is still missing) or the deadline."""
        deadline = time.monotonic() + DEADLINE_S
        while True:
            missing = check()
            if missing is None:
                return
            assert self.process.poll() is None, \
                f"Burrow exited ({self.process.returncode}) waiting for {what}" + \
                self.diagnostics()
            if time.monotonic() > deadline:
                pytest.fail(f"Burrow: no {what} in {DEADLINE_S} s: {missing}" +
                            self.diagnostics())
            time.sleep(0.2)


@pytest.fixture
def burrow_factory(tmp_path: Path, zookeeper) -> Iterator[Callable[[str], Burrow]]:  # noqa: F811
    started: list[Burrow] = []

    def start(kafka: str) -> Burrow:
        workdir = tmp_path / "burrow"
        workdir.mkdir()
        b = Burrow(workdir, zookeeper.connect, kafka)
        started.append(b)
        return b

    try:
        yield start
    finally:
        for b in started:
            b.stop()


# -- what the server stored ----------------------------------------------------------------------

def offsets_records(server) -> list[tuple[int, int, bytes, bytes | None]]:
    """``(partition, offset, key, value)`` of every record in ``__consumer_offsets``."""
    out = []
    for p in range(OFFSETS_PARTITIONS):
        for r in server.broker.log("__consumer_offsets", p).records():
            out.append((p, r.offset, bytes(r.key), None if r.value is None else bytes(r.value)))
    return out


def committed(records) -> dict[str, dict[int, int]]:
    """Group -> partition -> offset of ``TOPIC`` as the stored commits leave them."""
    out: dict[str, dict[int, int]] = {}
    for _p, _o, key, value in records:
        rec = decode(key, value)
        if isinstance(rec, OffsetCommit) and rec.topic == TOPIC and rec.value is not None:
            out.setdefault(rec.group, {})[rec.partition] = rec.value.offset
    return out


def burrow_expects(key: bytes, value: bytes | None) -> dict[str, Any]:
    """The fields of the line Burrow 1.2.1 logs for this ``__consumer_offsets`` record
    (``processConsumerOffsetsMessage`` and what it calls)."""
    if value is None:
        return {"msg": "dropped tombstone"}
    key_version, value_version = struct.unpack_from(">h", key)[0], \
        struct.unpack_from(">h", value)[0]
    rec = decode(key, value)
    if isinstance(rec, OffsetCommit):
        assert rec.value is not None
        where = {"message_type": "offset", "group": rec.group, "topic": rec.topic,
                 "partition": rec.partition}
        if value_version in BURROW_OFFSET_VALUE_VERSIONS:
            return {**where, "msg": "consumer offset", "offset": rec.value.offset,
                    "timestamp": rec.value.commit_timestamp}
        return {**where, "msg": "failed to decode", "reason": "value version",
                "version": value_version}
    if isinstance(rec, GroupMetadataRecord):
        assert rec.value is not None
        where = {"message_type": "metadata", "group": rec.group}
        if value_version in BURROW_GROUP_VALUE_VERSIONS:
            return {**where, "msg": "group metadata" if rec.value.members else "clear owners"}
        return {**where, "msg": "failed to decode", "reason": "value version",
                "version": value_version}
    return {"msg": "failed to decode", "reason": "key version", "version": key_version}


def unaccounted(burrow: Burrow, records) -> str | None:
    """None when Burrow logged, for each record, the line :func:`burrow_expects`; else the
    first record without one."""
    at: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for line in burrow.lines():
        if line.get("offset_topic") == "__consumer_offsets":
            at.setdefault((line["offset_partition"], line["offset_offset"]), []).append(line)
    for p, o, key, value in records:
        want = burrow_expects(key, value)
        got = at.get((p, o), [])
        if not any(want.items() <= line.items() for line in got):
            return f"__consumer_offsets-{p} offset {o}: want {want}, Burrow logged {got}"
    return None


# -- clients ---------------------------------------------------------------------------------

def commit_simple(address: str, group: str, offsets: dict[int, int]) -> None:
    """kafka-python commits ``offsets`` for a group without members (retention: the broker's)."""
    c = KafkaConsumer(bootstrap_servers=address, group_id=group, enable_auto_commit=False)
    try:
        c.assign([TopicPartition(TOPIC, p) for p in offsets])
        c.commit({TopicPartition(TOPIC, p): OffsetAndMetadata(o, f"m{p}", -1)
                  for p, o in offsets.items()})
    finally:
        c.close()


def commit_with_retention(address: str, group: str, offsets: dict[int, int]) -> None:
    """OffsetCommit v2 with a retention time: the value Kafka writes is v1 (expire timestamp)."""
    with WireClient(address) as w:
        r = w.request(8, 2, {
            "group_id": group, "generation_id_or_member_epoch": -1, "member_id": "",
            "retention_time": datetime.timedelta(hours=1), "topics": [{
                "name": TOPIC, "partitions": [
                    {"partition_index": p, "committed_offset": o, "committed_metadata": ""}
                    for p, o in offsets.items()]}]})
    assert [(p.partition_index, p.error_code) for t in r.topics for p in t.partitions] == \
        [(p, 0) for p in offsets]


def consume_all_and_commit(address: str, group: str) -> None:
    """A member joins ``group`` (subscribe: group-metadata records), reads every record,
    commits what it read and leaves."""
    c = KafkaConsumer(bootstrap_servers=address, group_id=group, enable_auto_commit=False,
                      auto_offset_reset="earliest", consumer_timeout_ms=30000)
    try:
        c.subscribe([TOPIC])
        n = 0
        for _m in c:
            n += 1
            if n == sum(END_OFFSETS.values()):
                break
        c.commit()
    finally:
        c.close()


# -- the test --------------------------------------------------------------------------------

def test_burrow_reads_the_groups_offsets_from_our_consumer_offsets(server, burrow_factory):
    server.broker.create_topic(TOPIC, len(END_OFFSETS))
    for p, n in END_OFFSETS.items():
        server.broker.log(TOPIC, p).append(
            [Record(b"k%d" % i, b"v%d" % i, 1700000000000 + i) for i in range(n)])
    commit_simple(server.address, "billing", {0: 30, 1: 5, 2: 10})
    commit_with_retention(server.address, "audit", {0: 4, 1: 25})
    consume_all_and_commit(server.address, "live")

    records = offsets_records(server)
    # what the clients committed is what the server stored
    assert committed(records) == {"billing": {0: 30, 1: 5, 2: 10}, "audit": {0: 4, 1: 25},
                                  "live": END_OFFSETS}
    metadata = [decode(k, v) for _p, _o, k, v in records]
    # a commit with a retention time is an OffsetCommitValue v1 (expire timestamp), in Kafka 4.2
    # as before (GroupCoordinatorRecordHelpers.offsetCommitValueVersion)
    assert {struct.unpack_from(">h", v)[0] for m, (_p, _o, _k, v) in zip(metadata, records)
            if isinstance(m, OffsetCommit) and m.group == "audit"} == {1}
    assert any(isinstance(m, GroupMetadataRecord) and m.group == "live" and m.value is not None
               and m.value.members for m in metadata), "no group metadata with a member"

    burrow = burrow_factory(server.address)
    # every record, decoded by Burrow's own code as it must be (or refused as Burrow 1.2.1
    # refuses it: a value version it predates)
    burrow.wait(lambda: unaccounted(burrow, records), "line for every __consumer_offsets record")
    decoded = {(x["group"], x["partition"]): x for x in burrow.lines()
               if x.get("msg") == "consumer offset"}
    # the expire-timestamp commit (OffsetCommitValue v1, as every Kafka up to 4.2 writes it)
    # is one Burrow 1.2.1 can read: exact values, whatever the other versions
    assert {p: decoded[("audit", p)]["offset"] for p in (0, 1)} == {0: 4, 1: 25}, \
        burrow.diagnostics()
    refused = [x for x in burrow.lines() if x.get("msg") == "failed to decode"]
    assert all(x["reason"] == "value version" for x in refused), refused
    # the group-metadata records: GroupMetadataValue v3, as Kafka 4.2 writes them
    # (GroupCoordinatorRecordHelpers.GROUP_METADATA_VALUE_VERSION), which Burrow 1.2.1 predates
    assert {(x["group"], x["version"]) for x in refused
            if x["message_type"] == "metadata"} == {("live", 3)}, refused
    # its HTTP API serves the cluster (lag needs log end offsets it cannot fetch: docstring)
    status, body = burrow.get("/v3/kafka")
    assert (status, body["clusters"]) == (200, ["local"]), body

    # more commits while Burrow runs reach it: it keeps consuming __consumer_offsets
    commit_simple(server.address, "billing", {1: 20})
    commit_with_retention(server.address, "audit", {0: 12})
    now = offsets_records(server)
    assert set(records) <= set(now)
    new = [r for r in now if r not in set(records)]
    assert committed(now) == {"billing": {0: 30, 1: 20, 2: 10}, "audit": {0: 12, 1: 25},
                              "live": END_OFFSETS}
    assert len(new) == 2
    burrow.wait(lambda: unaccounted(burrow, new), "line for the new commits")
    latest = [x for x in burrow.lines() if x.get("msg") == "consumer offset"
              and x["group"] == "audit" and x["partition"] == 0]
    assert latest[-1]["offset"] == 12, burrow.diagnostics()
