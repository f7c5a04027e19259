"""``dump-segments --kafka-version``: one golden file per output shape, Kafka 0.11 to 4.2.

Each golden file under ``tests/golden/versions/`` is the complete output (stdout, stderr, exit
status) of the same dozen commands over the same files, for one group of releases whose
``kafka-dump-log.sh`` prints identical text (``kafkalog.tools.kafka_versions.SHAPES``). The files
exercise every difference the table lists: legacy and v2 batches, a tombstone, a transaction and
its marker, KRaft control records, a compacted gap, an index entry keyed by a batch's last offset,
a zero-filled index tail, an empty index, producer snapshots (one without batch metadata, one
whose sequence wraps), the five internal-topic decoders, flags a release did not have, an index
whose ``.log`` is missing.

How the goldens were derived: written by kafkalog, then every line read against
``core/src/main/scala/kafka/tools/DumpLogSegments.scala`` at the release tag (apache/kafka
0.11.0.0 ... 3.9; 4.0.0/4.1.0 from aiven/inkless, which carries Kafka's tags) and the classes it
prints (``CompressionType``, ``ControlRecordType``, ``ProducerStateManager.readSnapshot``,
``GroupMetadataManager``/``TransactionLog.formatRecordKeyAndValue``, the coordinator serdes);
the diff between two consecutive goldens is exactly the change the table row cites. Hash-ordered
parts (group members, transaction partitions, summary files) follow the Scala collection of the
release's default build, checked against the JVM for Scala 2.13 (``test_scala213_orders``).
Where a real broker's output is known the test pins it (``test_real_1x_batch_line``).

Regenerate after an intended change: ``KAFKALOG_UPDATE_GOLDEN=1 pytest tests/test_dump_versions.py``
(and read the diff against the sources before committing it).
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import crc32c
import pytest

from kafkalog.cli import main
from kafkalog.decoders import (
    cluster_metadata,
    jvm_order,
    offsets,
    remote_log_metadata,
    share_group_state,
    transaction_log,
)
from kafkalog.records.builder import encode_batch
from kafkalog.records.record import Record
from kafkalog.tools.kafka_versions import SHAPES, parse_kafka_version

from .conftest import scala213_jar

GOLDEN = Path(__file__).parent / "golden" / "versions"
T = 1700000000000
SEG = "00000000000000000000.log"

#: (golden file, the release it is rendered for, the other releases that print the same)
GROUPS = [
    ("0.11.0.0", "0.11.0.0", ["0.11.0.1"]),
    ("0.11.0.2", "0.11.0.2", ["0.11", "0.11.0.3"]),
    ("1.0.0", "1.0.0", ["1.0.1"]),
    ("1.0.2", "1.0.2", ["1.0"]),
    ("1.1", "1.1", ["1.1.0", "1.1.1"]),
    ("2.0.0", "2.0.0", []),
    ("2.0.1", "2.0.1", ["2.0"]),
    ("2.1", "2.1", ["2.1.0", "2.1.1"]),
    ("2.2", "2.2", ["2.2.0", "2.2.2"]),
    ("2.3", "2.3", ["2.3.0", "2.3.1"]),
    ("2.4.0", "2.4.0", []),
    ("2.4.1", "2.4.1", ["2.4"]),
    ("2.5", "2.5", ["2.5.0", "2.5.1"]),
    ("2.6", "2.6", ["2.6.0", "2.6.3"]),
    ("2.7", "2.7", ["2.7.0", "2.7.2"]),
    ("2.8", "2.8", ["2.8.0", "2.8.1", "2.8.2"]),
    ("3.0", "3.0", ["3.0.0", "3.0.2"]),
    ("3.1", "3.1", ["3.1.2"]),
    ("3.2", "3.2", ["3.2.3"]),
    ("3.3", "3.3", ["3.4", "3.3+"]),
    ("3.5", "3.5", ["3.6", "3.7"]),
    ("3.8", "3.8", ["3.8.0", "3.8.1"]),
    ("3.9", "3.9", ["3.9.0", "3.9.1"]),
    ("4.0", "4.0", ["4.0.0", "4.0.1"]),
    ("4.1", "4.1", ["4.1.0", "4.2"]),
    ("trunk", "trunk", []),
]

#: the commands of every golden file (arguments after ``--files``)
COMMANDS = [
    [SEG],
    [SEG, "--print-data-log"],
    [SEG, "--deep-iteration", "--print-data-log"],
    [SEG, "--print-data-log", "--skip-record-metadata"],
    [SEG, "--deep-iteration", "--max-bytes", "400"],
    ["00000000000000000000.index,00000000000000000000.timeindex,00000000000000000050.index"],
    ["00000000000000000000.snapshot,00000000000000000000.txnindex"],
    [f"__consumer_offsets-0/{SEG}", "--offsets-decoder", "--deep-iteration"],
    [f"__transaction_state-0/{SEG}", "--transaction-log-decoder", "--deep-iteration"],
    [f"__cluster_metadata-0/{SEG}", "--cluster-metadata-decoder", "--deep-iteration"],
    [f"__remote_log_metadata-0/{SEG}", "--remote-log-metadata-decoder", "--deep-iteration"],
    [f"__share_group_state-0/{SEG}", "--share-group-state-decoder", "--deep-iteration"],
    ["00000000000000000099.index"],
]


# ------------------------------------------------------------------------------------------
# The files
# ------------------------------------------------------------------------------------------


def _leader_change() -> bytes:
    # LeaderChangeMessage v0: Version, LeaderId, Voters, GrantingVoters (compact arrays), tags
    voter = struct.pack(">i", 1) + b"\x00"
    return struct.pack(">hi", 0, 1) + b"\x02" + voter + b"\x02" + voter + b"\x00"


def _kraft_version() -> bytes:
    # KRaftVersionRecord v0 (flexible): Version int16, KRaftVersion int16, tagged fields
    return struct.pack(">hh", 0, 1) + b"\x00"


def rich_log() -> list[bytes]:
    """A v0 and a v1 message, then v2 batches covering every batch/record-line difference."""
    return [
        encode_batch([Record(b"k0", b"legacy-zero", None)], magic=0, base_offset=0),
        encode_batch([Record(None, b"legacy-one", T + 1)], magic=1, base_offset=1),
        encode_batch(
            [
                Record(b"k2", b"two", T + 2),
                Record(b"k3", b"three", T + 3, [("h1", b"x"), ("h2", None)]),
            ],
            base_offset=2,
            producer_id=42,
            producer_epoch=1,
            base_sequence=7,
            partition_leader_epoch=5,
        ),
        encode_batch([Record(b"k4", None, T + 4)], base_offset=4, partition_leader_epoch=5),
        encode_batch(
            [Record(b"t", b"in-txn", T + 5)],
            base_offset=5,
            producer_id=43,
            producer_epoch=0,
            base_sequence=0,
            transactional=True,
            partition_leader_epoch=6,
        ),
        encode_batch(  # COMMIT marker, coordinator epoch 3
            [Record(b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x03", T + 6)],
            base_offset=6,
            producer_id=43,
            producer_epoch=0,
            transactional=True,
            control=True,
            partition_leader_epoch=6,
        ),
        encode_batch(  # type 2: LEADER_CHANGE from 3.0, QUORUM_REASSIGNMENT in 2.7-2.8
            [Record(b"\x00\x00\x00\x02", _leader_change(), T + 7)],
            base_offset=7,
            control=True,
            partition_leader_epoch=7,
        ),
        encode_batch(  # type 5: KRAFT_VERSION from 3.8
            [Record(b"\x00\x00\x00\x05", _kraft_version(), T + 8)],
            base_offset=8,
            control=True,
            partition_leader_epoch=7,
        ),
        encode_batch(  # a cleaned batch: offset 10 removed, delete horizon set
            [Record(b"c", b"nine", T + 9, offset=9), Record(b"c", b"eleven", T + 11, offset=11)],
            base_offset=9,
            delete_horizon_ms=T + 86400000,
            partition_leader_epoch=7,
        ),
        encode_batch(
            [Record(b"l", b"appended", T + 12)],
            base_offset=12,
            timestamp_type="log_append",
            log_append_time=T + 99,
            partition_leader_epoch=7,
        ),
    ]


def _assignment(parts: list[tuple[str, list[int]]], user_data: bytes | None) -> bytes:
    # ConsumerProtocolAssignment v0: version, [topic string, [partition int32]], userData bytes
    out = struct.pack(">hi", 0, len(parts))
    for topic, ps in parts:
        out += struct.pack(">h", len(topic)) + topic.encode() + struct.pack(">i", len(ps))
        out += b"".join(struct.pack(">i", p) for p in ps)
    if user_data is None:
        return out + struct.pack(">i", -1)
    return out + struct.pack(">i", len(user_data)) + user_data


def _subscription(topics: list[str]) -> bytes:
    out = struct.pack(">hi", 0, len(topics))
    for t in topics:
        out += struct.pack(">h", len(t)) + t.encode()
    return out + struct.pack(">i", -1)


def offsets_log() -> bytes:
    members = []
    for i, member in enumerate(("consumer-1-a", "consumer-2-b", "consumer-3-c")):
        members.append({
            "memberId": member, "clientId": f"client-{i}", "clientHost": "/127.0.0.1",
            "rebalanceTimeout": 300000, "sessionTimeout": 10000,
            "subscription": _subscription(["t"]),
            "assignment": _assignment([("t", [i])], b"\x00\x0f" if i == 1 else None),
        })  # fmt: skip
    records = [
        offsets.encode_record(
            1, {"group": "g", "topic": "t", "partition": 0},
            {"offset": 42, "metadata": "m", "commitTimestamp": T, "expireTimestamp": T + 1},
            version=1,
        ),
        offsets.encode_record(
            1, {"group": "g", "topic": "t", "partition": 1},
            {"offset": 7, "metadata": "", "commitTimestamp": T, "expireTimestamp": T + 1},
            version=1,
        ),
        offsets.encode_record(  # a quote in the name: Json.encode (1.0) did not escape it
            2, {"group": 'g"q'},
            {"protocolType": "consumer", "generation": 3, "protocol": "range",
             "leader": "consumer-1-a", "members": members},
            version=1,
        ),
        offsets.encode_record(1, {"group": "g", "topic": "t", "partition": 1}, None),
        offsets.encode_record(2, {"group": 'g"q'}, None),
        offsets.encode_record(3, {"groupId": "g2"}, {"epoch": 5}, version=0),  # KIP-848
    ]  # fmt: skip
    return encode_batch([Record(k, v, T + i) for i, (k, v) in enumerate(records)])


def transaction_log_records() -> bytes:
    def value(status: int, partitions: list) -> dict:
        return {
            "producerId": 7, "producerEpoch": 1, "transactionTimeoutMs": 60000,
            "transactionStatus": status, "transactionPartitions": partitions,
            "transactionLastUpdateTimestampMs": T + 5, "transactionStartTimestampMs": T + 3,
        }  # fmt: skip

    ongoing = transaction_log.encode_record(
        {"transactionalId": "tx-1"},
        value(1, [{"topic": "t", "partitionIds": [0, 1, 2]}, {"topic": "u", "partitionIds": [5]}]),
        version=0,
    )
    empty = transaction_log.encode_record({"transactionalId": "tx-2"}, value(0, []), version=0)
    tombstone = transaction_log.encode_record({"transactionalId": "tx-1"}, None)
    unknown = (b"\x00\x01\x00\x04tx-3", b"\x00\x00")
    return encode_batch(
        [Record(k, v, T + i) for i, (k, v) in enumerate([ongoing, empty, tombstone, unknown])]
    )


def cluster_metadata_records() -> bytes:
    topic = cluster_metadata.encode_record(
        "TopicRecord", {"name": "orders", "topicId": "AAAAAAAAAAAAAAAAAAAAAQ"}
    )
    noop = cluster_metadata.encode_record("NoOpRecord", {})  # id 20: 3.3 onwards
    preview = b"\x00" + topic[1:]  # frame version 0: the 2.8 preview's records
    return encode_batch(
        [Record(None, topic, T), Record(None, noop, T + 1), Record(None, b"\x01\x7f\x00", T + 2),
         Record(None, preview, T + 3)],
        partition_leader_epoch=1,
    )  # fmt: skip


def remote_log_metadata_records() -> bytes:
    """Four values Kafka 4.0's own serde wrote (``tests/golden/rlmm``), a snapshot record, then
    values each of Kafka's checks rejects: the test's ``"corrupted"`` (frame version 99), an
    unknown delete state (a null message), an end offset below the start, an unknown segment
    state, an unknown api key, a byte after the message."""
    import json

    jvm = json.loads((Path(__file__).parent / "golden" / "rlmm" / "jvm_serde_4.0.0.json")
                     .read_text())
    values = [bytes.fromhex(jvm[k]) for k in ("add_with_custom", "add_txn_empty",
                                               "update_finish", "partition_delete_marked")]
    tip = {"name": "orders", "id": "AAAAAAAAAAAAAAAAAAAAyg", "partition": 7}
    seg = {"topicIdPartition": tip, "id": "AAAAAAAAAAAAAAAAAAAA_g"}
    epochs = [{"leaderEpoch": 3, "offset": 40}, {"leaderEpoch": -1, "offset": 0}]
    values.append(remote_log_metadata.encode_record(3, {
        "segmentId": seg["id"], "startOffset": 0, "endOffset": 99, "brokerId": 1,
        "maxTimestampMs": T, "eventTimestampMs": T + 1, "segmentLeaderEpochs": epochs,
        "segmentSizeInBytes": 4096, "customMetadata": b"", "remoteLogSegmentState": 3}))
    values.append(b"corrupted")
    values.append(remote_log_metadata.encode_record(2, {
        "topicIdPartition": tip, "brokerId": 1, "eventTimestampMs": T,
        "remotePartitionDeleteState": 3}))
    values.append(remote_log_metadata.encode_record(0, {
        "remoteLogSegmentId": seg, "startOffset": 10, "endOffset": 9, "brokerId": 1,
        "segmentLeaderEpochs": epochs, "remoteLogSegmentState": 1}))
    values.append(remote_log_metadata.encode_record(1, {
        "remoteLogSegmentId": seg, "brokerId": 1, "remoteLogSegmentState": -1}))
    values.append(b"\x01\x07\x00\x00")
    values.append(bytes.fromhex(jvm["update_finish"]) + b"\x00")
    return encode_batch([Record(None, v, T + i) for i, v in enumerate(values)])


def share_group_state_records() -> bytes:
    """A snapshot and an update in Kafka 4.0's shape, the same two in 4.2's (4.1 changed the
    values without a new version: every release's dump reads both), then a tombstone."""
    key = {"groupId": "sg", "topicId": "AAAAAAAAAAAAAAAAAAAAAQ", "partition": 0}
    batch = [{"firstOffset": 0, "lastOffset": 9, "deliveryState": 2, "deliveryCount": 1}]
    snap = {"snapshotEpoch": 1, "stateEpoch": 0, "leaderEpoch": 2, "startOffset": 0,
            "stateBatches": batch}
    update = {"snapshotEpoch": 1, "leaderEpoch": 2, "startOffset": 10, "stateBatches": []}
    records = [share_group_state.encode_record(0, key, snap, layout="4.0"),
               share_group_state.encode_record(1, key, update, layout="4.0"),
               share_group_state.encode_record(0, key, {
                   **snap, "snapshotEpoch": 2, "deliveryCompleteCount": 10,
                   "createTimestamp": T, "writeTimestamp": T + 5}),
               share_group_state.encode_record(1, key, {**update, "snapshotEpoch": 2}),
               share_group_state.encode_record(0, key, None)]
    return encode_batch([Record(k, v, T + i) for i, (k, v) in enumerate(records)])


def _snapshot(entries: list[tuple]) -> bytes:
    body = struct.pack(">i", len(entries)) + b"".join(struct.pack(">qhiqiqiq", *e) for e in entries)
    return struct.pack(">hI", 1, crc32c.crc32c(body)) + body


def write_files(d: Path) -> None:
    batches = rich_log()
    log = b"".join(batches)
    (d / SEG).write_bytes(log)
    positions = [sum(len(b) for b in batches[:i]) for i in range(len(batches))]
    # index: offset 3 -> batch 2..3 (keyed by its last offset: a first-record check disagrees),
    # offset 5 -> the transactional batch, then a zero-filled slot
    (d / "00000000000000000000.index").write_bytes(
        struct.pack(">ii", 3, positions[2]) + struct.pack(">ii", 5, positions[4]) + b"\x00" * 8
    )
    # time index: two good entries, one out of order and mismatched, then a zero-filled slot
    (d / "00000000000000000000.timeindex").write_bytes(
        struct.pack(">qi", T + 3, 3)
        + struct.pack(">qi", T + 4, 4)
        + struct.pack(">qi", T + 1, 5)
        + b"\x00" * 12
    )
    (d / "00000000000000000050.index").write_bytes(b"")
    (d / "00000000000000000050.log").write_bytes(b"")
    (d / "00000000000000000099.index").write_bytes(struct.pack(">ii", 1, 0))
    # producers: (id, epoch, lastSeq, lastOffset, offsetDelta, timestamp, coordEpoch, txnFirst)
    (d / "00000000000000000000.snapshot").write_bytes(
        _snapshot([
            (42, 1, 8, 3, 1, T + 3, -1, -1),
            (43, 0, 0, 5, 2, T + 5, 3, 5),  # the sequence wraps going back 2 from 0
            (44, 2, -1, -1, 0, T + 6, 4, 7),  # no batch metadata (lastOffset -1)
        ])  # fmt: skip
    )
    (d / "00000000000000000000.txnindex").write_bytes(struct.pack(">hqqqq", 0, 43, 5, 6, 5))
    for topic, data in (
        ("__consumer_offsets-0", offsets_log()),
        ("__transaction_state-0", transaction_log_records()),
        ("__cluster_metadata-0", cluster_metadata_records()),
        ("__remote_log_metadata-0", remote_log_metadata_records()),
        ("__share_group_state-0", share_group_state_records()),
    ):
        (d / topic).mkdir()
        (d / topic / SEG).write_bytes(data)


# ------------------------------------------------------------------------------------------
# Rendering a golden
# ------------------------------------------------------------------------------------------


def render(capsys, d: Path, version: str) -> str:
    """The golden text of ``version``: every command, its stdout, stderr and exit status."""
    out = []
    for args in COMMANDS:
        capsys.readouterr()
        rc = main(["dump-segments", "--files", *args, "--kafka-version", version])
        stdout, stderr = capsys.readouterr()
        out.append("$ kafka-dump-log.sh --files " + " ".join(args))
        if stdout:
            out.append(stdout.rstrip("\n"))
        if stderr:
            out.append("(stderr)")
            out.append(stderr.rstrip("\n"))
        out.append(f"(exit {rc})")
        out.append("")
    return "\n".join(out).replace(str(d), "{DIR}")


@pytest.fixture(scope="module")
def files_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("versions")
    write_files(d)
    return d


@pytest.mark.parametrize("name, version, same", GROUPS, ids=[g[0] for g in GROUPS])
def test_golden_per_shape(files_dir, monkeypatch, capsys, name, version, same):
    monkeypatch.chdir(files_dir)
    text = render(capsys, files_dir, version)
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("KAFKALOG_UPDATE_GOLDEN"):
        GOLDEN.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert text == path.read_text()
    for other in same:  # the rest of the group prints the very same text
        assert render(capsys, files_dir, other) == text, other


def test_consecutive_shapes_differ(files_dir):
    """Every golden differs from the previous one: no group is a duplicate of its neighbour."""
    texts = [(GOLDEN / f"{name}.txt").read_text() for name, _, _ in GROUPS]
    for (a, _, _), (b, _, _), ta, tb in zip(GROUPS, GROUPS[1:], texts, texts[1:]):
        assert ta != tb, (a, b)


def test_shape_table_covers_the_groups():
    """kafka_versions.SHAPES (the table of the issue note) has one row per golden group."""
    assert len(SHAPES) == len(GROUPS)


# ------------------------------------------------------------------------------------------
# Lines printed by real brokers (issue 14)
# ------------------------------------------------------------------------------------------


def _forge_crc32c(data: bytearray, at: int, target: int) -> None:
    """Set ``data[at:at+4]`` so that CRC-32C over ``data`` is ``target`` (CRC is affine in the
    data bits: solve the 32x32 linear system over GF(2))."""
    data[at : at + 4] = b"\x00\x00\x00\x00"
    base = crc32c.crc32c(bytes(data))
    cols = []
    for bit in range(32):
        probe = bytearray(data)
        probe[at + bit // 8] ^= 0x80 >> (bit % 8)
        cols.append(crc32c.crc32c(bytes(probe)) ^ base)
    # Gaussian elimination: find bits x with XOR of cols[x] == target ^ base
    rows = [(c, 1 << i) for i, c in enumerate(cols)]
    want, chosen = target ^ base, 0
    basis: list[tuple[int, int]] = []
    for c, m in rows:
        for bc, bm in basis:
            if c ^ bc < c:
                c, m = c ^ bc, m ^ bm
        if c:
            basis.append((c, m))
            basis.sort(reverse=True)
    for bc, bm in basis:
        if want ^ bc < want:
            want, chosen = want ^ bc, chosen ^ bm
    assert want == 0
    for bit in range(32):
        if chosen >> bit & 1:
            data[at + bit // 8] ^= 0x80 >> (bit % 8)


def test_real_1x_batch_line(tmp_path, monkeypatch, capsys):
    """The batch line a Kafka 1.x broker's tool printed (quoted in issue 14), reproduced: a
    85-byte batch at offset 4, leader epoch 49, whose stored and computed CRC is 3049289418."""
    batch = bytearray(
        encode_batch([Record(None, b"x" * 17, 1584368524633)], base_offset=4,
                     partition_leader_epoch=49)
    )  # fmt: skip
    assert len(batch) == 85
    covered = batch[21:]  # CRC-32C covers attributes .. end
    value_end = len(covered) - 1  # the record ends with its header count
    _forge_crc32c(covered, value_end - 4, 3049289418)
    batch[21:] = covered
    batch[17:21] = struct.pack(">I", crc32c.crc32c(bytes(covered)))
    assert struct.unpack_from(">I", batch, 17)[0] == 3049289418
    (tmp_path / "00000000000000000004.log").write_bytes(bytes(batch))
    monkeypatch.chdir(tmp_path)
    line = (
        "baseOffset: 4 lastOffset: 4 baseSequence: -1 lastSequence: -1 producerId: -1 "
        "producerEpoch: -1 partitionLeaderEpoch: 49 isTransactional: false position: 0 "
        "CreateTime: 1584368524633 isvalid: true size: 85 magic: 2 compresscodec: NONE "
        "crc: 3049289418"
    )
    for version in ("0.11", "1.0", "1.1"):
        capsys.readouterr()
        rc = main(
            ["dump-segments", "--files", "00000000000000000004.log", "--kafka-version", version]
        )
        out = capsys.readouterr().out
        assert out.splitlines() == [
            "Dumping 00000000000000000004.log", "Starting offset: 4", line
        ] and rc == 0, version  # fmt: skip
    # 2.0.0 adds count:, 2.0.1 isControl: (DumpLogSegments.scala @2.0.0, @2.0.1)
    capsys.readouterr()
    main(["dump-segments", "--files", "00000000000000000004.log", "--kafka-version", "2.0.1"])
    assert capsys.readouterr().out.splitlines()[2] == line.replace(
        "lastOffset: 4 ", "lastOffset: 4 count: 1 "
    ).replace("isTransactional: false ", "isTransactional: false isControl: false ")


def test_2_8_record_line_of_a_compressed_legacy_wrapper(tmp_path, monkeypatch, capsys):
    """2.8 prints ``batch.baseOffset`` for legacy records too: a compressed wrapper's is its
    first inner offset (``AbstractLegacyRecordBatch.baseOffset`` iterates to it), its
    ``lastOffset`` the wrapper's own."""
    wrapper = encode_batch(
        [Record(b"a", b"x", T), Record(b"b", b"y", T + 1), Record(b"c", b"z", T + 2)],
        magic=1, base_offset=20, compression="gzip",
    )  # fmt: skip
    (tmp_path / "00000000000000000020.log").write_bytes(wrapper)
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    main(["dump-segments", "--files", "00000000000000000020.log", "--deep-iteration",
          "--kafka-version", "2.8"])  # fmt: skip
    lines = capsys.readouterr().out.splitlines()[3:]
    assert [ln.split(" isValid")[0] for ln in lines] == [
        "| offset: 20", "| offset: 21", "| offset: 22"
    ]  # fmt: skip
    assert all(" baseOffset: 20 lastOffset: 22 " in ln for ln in lines)
    assert all(" compressType: GZIP " in ln and " magic: 1 " in ln for ln in lines)


def test_2_8_record_line_regression(tmp_path, monkeypatch, capsys):
    """Kafka 2.8.x's record line (issue 14 quotes it, elided): the fields in that order."""
    (tmp_path / SEG).write_bytes(encode_batch([Record(None, b"hello!", T)]))
    monkeypatch.chdir(tmp_path)
    quoted = (
        "offset: 0 isValid: true crc: null keySize: -1 valueSize: 6 CreateTime: ... "
        "baseOffset: ... lastOffset: ... batchSize: ... magic: 2 compressType: NONE "
        "position: 0 sequence: -1 headerKeys: [] payload: ..."
    )
    pattern = ".*?".join(re.escape(part) for part in quoted.split("..."))
    for version in ("2.8", "2.8.0", "2.8.2"):
        capsys.readouterr()
        main(["dump-segments", "--files", SEG, "--print-data-log", "--kafka-version", version])
        record = capsys.readouterr().out.splitlines()[3]
        assert re.fullmatch(r"\| " + pattern, record), record
    for version in ("2.7", "3.0"):  # the releases around it print the short line
        capsys.readouterr()
        main(["dump-segments", "--files", SEG, "--print-data-log", "--kafka-version", version])
        assert "isValid" not in capsys.readouterr().out


# ------------------------------------------------------------------------------------------
# The JVM collection orders behind the hash-ordered parts
# ------------------------------------------------------------------------------------------


@pytest.mark.skipif(
    shutil.which("javac") is None or scala213_jar() is None,
    reason="needs a JDK and Scala 2.13's library (pyspark ships it)",
)
def test_scala213_orders(tmp_path):
    """Transaction partitions (``mutable.HashSet[TopicPartition]`` filled by ``++=`` of
    immutable sets, one per topic) and group members (``mutable.HashMap``) in the order a JVM
    running Scala 2.13 iterates them."""
    src = tmp_path / "Orders.java"
    src.write_text(
        "import java.util.*;\n"
        "public class Orders {\n"
        "  static final class TP { final String t; final int p; TP(String t, int p) "
        "{ this.t = t; this.p = p; }\n"
        "    public int hashCode() { return 31 * (31 + p) + t.hashCode(); }\n"
        "    public boolean equals(Object o) { return o instanceof TP && ((TP) o).t.equals(t)"
        " && ((TP) o).p == p; }\n"
        '    public String toString() { return t + "-" + p; } }\n'
        "  public static void main(String[] a) {\n"
        "    scala.collection.mutable.HashSet<Object> s =\n"
        "        new scala.collection.mutable.HashSet<>();\n"
        "    scala.collection.mutable.HashMap<String, Integer> m = "
        "new scala.collection.mutable.HashMap<>();\n"
        "    for (String g : a) {\n"
        '      String[] tp = g.split(":"); List<Object> l = new ArrayList<>();\n'
        '      for (String p : tp[1].split(",")) { l.add(new TP(tp[0], Integer.parseInt(p)));'
        ' m.put(tp[0] + p, 1); }\n'
        "      s.addAll(scala.jdk.javaapi.CollectionConverters.asScala(l).toSet());\n"
        "    }\n"
        '    System.out.println(s.mkString(","));\n'
        '    System.out.println(m.keys().mkString(","));\n'
        "  } }\n"
    )
    jar = str(scala213_jar())
    subprocess.run(["javac", "-cp", jar, "-d", str(tmp_path), str(src)], check=True, timeout=120)
    groups = [("topic", [0, 1, 2]), ("other", [5]), ("big", list(range(20))), ("zz", [3, 4])]
    p = subprocess.run(
        ["java", "-cp", f"{jar}:{tmp_path}", "Orders",
         *(f"{t}:{','.join(map(str, ps))}" for t, ps in groups)],
        check=True, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    set_line, map_line = p.stdout.splitlines()
    tp_hash = lambda tp: jvm_order.topic_partition_hash(*tp)  # noqa: E731
    order = jvm_order.scala213_hash_set_order([[(t, i) for i in ps] for t, ps in groups], tp_hash)
    assert set_line == ",".join(f"{t}-{i}" for t, i in order)
    keys = [f"{t}{i}" for t, ps in groups for i in ps]
    assert map_line == ",".join(jvm_order.scala213_hash_map_order(keys, jvm_order.java_string_hash))


def test_scala212_orders_follow_the_hash_table_rules():
    """Scala 2.11/2.12 ``HashTable``/``FlatHashTable`` (no 2.12 JVM here): iteration is a
    permutation of the elements, a repeated put changes nothing, up to four elements an
    immutable set keeps insertion order (``Set1``..``Set4``)."""
    keys = [f"/data/kafka-logs/t-{i}/00000000000000000000.index" for i in range(40)]
    order = jvm_order.scala212_hash_map_order(keys, jvm_order.java_string_hash)
    assert sorted(order) == sorted(keys)
    # a key put again keeps its place
    assert jvm_order.scala212_hash_map_order(keys + keys[:5], jvm_order.java_string_hash) == order
    tps = [("t", i) for i in range(30)]
    tp_hash = lambda tp: jvm_order.topic_partition_hash(*tp)  # noqa: E731
    grown = jvm_order.scala212_hash_set_order(tps, tp_hash)
    assert sorted(grown) == sorted(tps)
    assert jvm_order.scala212_immutable_set_order(tps[:4], tp_hash) == tps[:4]  # Set1..Set4


def test_release_parsing():
    assert parse_kafka_version("0.11.0.2").version == (0, 11, 2)
    assert parse_kafka_version("2.4").version == (2, 4, 99)
    for bad in ("0.10", "0.11.1", "5.0", "2.4.1.1", "x"):
        with pytest.raises(ValueError):
            parse_kafka_version(bad)
