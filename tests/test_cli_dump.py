"""Golden tests of ``kafkalog dump-segments`` through ``main(argv)`` (spec §7).

Expected files live in tests/golden/. They were written from spec §7 (line shapes) and the input
bytes (values), not captured from our output: the worked example's lines are §7.3's, the
LDI-POC index/time-index lines are the entries listed in the fixture's EXPECTED.json, and the
real logs' batch lines are rebuilt here from EXPECTED.json (kdecode.py, cross-checked with
kafka-python). Where a golden file holds ``{CRC}``-style placeholders the value is computed here
independently (zlib/crc32c over the encoded bytes, or a hand-built legacy message), so a wrong
CRC in our output still fails.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import crc32c
import pytest

from kafkalog.cli import main
from kafkalog.records.builder import encode_batch
from kafkalog.records.legacy import encode_legacy
from kafkalog.records.record import Record

from .conftest import scala213_jar, shared_fixture_path

GOLDEN = Path(__file__).parent / "golden"
T = 1700000000000

# spec §1.7 vectors A, B, C
VECTOR_A = bytes.fromhex(
    "00000000000000000000003d0000000002e641a44b0000000000000000018bcfe568000000018bcfe568"
    "00ffffffffffffffffffffffffffff0000000116000000010a68656c6c6f00"
)
VECTOR_B = bytes.fromhex(
    "0000000000000005000000420000000002a1ac499f0030000000000000018bcfe568000000018bcfe568"
    "0000000000000003e80000ffffffff000000012000000008000000010c00000000000000"
)
VECTOR_C = bytes.fromhex(
    "000000000000000a000000430000000002b4e9301a0000000000000000018bcfe568000000018bcfe568"
    "00ffffffffffffffffffffffffffff0000000122000000026b027604046831027804683201"
)
SPEC_LOG = VECTOR_A + VECTOR_B + VECTOR_C
SEG = "00000000000000000000.log"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def golden(rel: str, **subs: object) -> str:
    p = GOLDEN / rel
    if not p.exists():
        return ""
    text = p.read_text()
    for k, v in subs.items():
        text = text.replace("{" + k + "}", str(v))
    return text


@pytest.fixture
def spec_dir(tmp_path, monkeypatch):
    (tmp_path / SEG).write_bytes(SPEC_LOG)
    monkeypatch.chdir(tmp_path)
    return tmp_path


# ------------------------------------------------------------------------------------------
# The worked example of spec §7.3 (vectors A, B, C), every flag combination, byte for byte
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, args",
    [
        ("shallow", []),
        ("print_data_log", ["--print-data-log"]),
        ("deep_iteration", ["--deep-iteration"]),
        ("skip_record_metadata", ["--print-data-log", "--skip-record-metadata"]),
        (
            "trunk_skip_record_metadata",
            ["--print-data-log", "--skip-record-metadata", "--kafka-version", "trunk"],
        ),
        ("v2_7_print_data_log", ["--print-data-log", "--kafka-version", "2.7"]),
        ("v3_1_print_data_log", ["--print-data-log", "--kafka-version", "3.1"]),
        ("max_bytes_100", ["--max-bytes", "100"]),
        ("hex_decoders", ["--key-decoder", "hex", "--value-decoder", "hex"]),
        ("hex_decoders", ["--key-decoder-class", "hex", "--value-decoder-class", "hex"]),
    ],
)
def test_spec_example_golden(spec_dir, capsys, name, args):
    rc, out, err = run(capsys, "dump-segments", "--files", SEG, *args)
    abs_path = str(spec_dir / SEG)
    assert out == golden(f"spec_example/{name}.stdout")
    assert err == golden(f"spec_example/{name}.stderr", ABS=abs_path)
    assert rc == 0  # non-consecutive offsets (markers, compaction) are not corruption


def test_spec_example_first_lines_are_the_spec_text(spec_dir, capsys):
    # §7.3 quotes these lines verbatim: check them against the spec document itself
    spec = shared_fixture_path("..", "spec", "kafka-log-format.md").read_text()
    block = spec.split("Example (vector A as `00000000000000000000.log`, `--print-data-log`):")[1]
    block = block.split("```")[1].strip("\n")
    rc, out, _ = run(capsys, "dump-segments", "--files", SEG, "--print-data-log")
    lines = out.splitlines()
    assert lines[:4] == block.splitlines()
    assert "position: 73" in lines[4] and "size: 78" in lines[4]
    assert lines[5].endswith("endTxnMarker: COMMIT coordinatorEpoch: 0")
    assert lines[7].endswith("headerKeys: [h1,h2] key: k payload: v")


def test_kafka_class_name_decoders_print_deprecation_notices(spec_dir, capsys):
    rc, out, err = run(
        capsys,
        "dump-segments",
        "--files",
        SEG,
        "--value-decoder-class",
        "kafka.serializer.StringDecoder",
        "--key-decoder-class",
        "kafka.serializer.StringDecoder",
        "--kafka-version",
        "3.9",
    )
    lines = out.splitlines()
    notice = (
        "kafka.serializer.StringDecoder is deprecated. Please use "
        "org.apache.kafka.tools.api.StringDecoder instead"
    )
    # value decoder first, then key decoder, between "Dumping" and the header
    assert lines[:4] == ["Dumping " + SEG, notice, notice, "Log starting offset: 0"]
    assert lines[4:] == golden("spec_example/print_data_log.stdout").splitlines()[2:]
    rc2, out2, _ = run(
        capsys,
        "dump-segments",
        "--files",
        SEG,
        "--value-decoder-class",
        "org.apache.kafka.tools.api.StringDecoder",
    )
    assert "deprecated" not in out2 and rc2 == 0
    # 4.0 removed kafka.serializer.* (Class.forName fails after the Dumping line, 2.2+); 3.7 did
    # not have org.apache.kafka.tools.api.* yet; 2.1 built its decoders before any file
    for version, cls, head in (
        ("4.0", "kafka.serializer.StringDecoder", f"Dumping {SEG}\n"),
        ("3.7", "org.apache.kafka.tools.api.StringDecoder", f"Dumping {SEG}\n"),
        ("2.1", "org.apache.kafka.tools.api.StringDecoder", ""),
    ):
        rc3, out3, err3 = run(
            capsys, "dump-segments", "--files", SEG, "--value-decoder-class", cls,
            "--kafka-version", version,
        )  # fmt: skip
        assert out3 == head and rc3 == 1
        assert err3 == f'Exception in thread "main" java.lang.ClassNotFoundException: {cls}\n'


def test_int_decoder(spec_dir, capsys, tmp_path):
    d = tmp_path / "ints"
    d.mkdir()
    (d / SEG).write_bytes(
        encode_batch(
            [Record(struct.pack(">i", -7), struct.pack(">q", 1 << 40), T)], partition_leader_epoch=0
        )
    )
    rc, out, _ = run(
        capsys,
        "dump-segments",
        "--files",
        str(d / SEG),
        "--key-decoder",
        "int",
        "--value-decoder",
        "long",
    )
    assert out.splitlines()[-1].endswith(" key: -7 payload: 1099511627776") and rc == 0


# ------------------------------------------------------------------------------------------
# Logs written with encode_batch / encode_legacy
# ------------------------------------------------------------------------------------------


def _leader_change() -> bytes:
    # LeaderChangeMessage v0 (flexible): Version int16, LeaderId int32, Voters and GrantingVoters
    # compact arrays (uvarint n+1) of {VoterId int32, tagged fields}, tagged fields
    voter = struct.pack(">i", 1) + b"\x00"
    return struct.pack(">hi", 0, 1) + b"\x02" + voter + b"\x02" + voter + b"\x00"


def _mixed_batches() -> list[bytes]:
    return [
        encode_batch(
            [
                Record(None, b"v0", T),
                Record(b"k1", b"", T + 1, [("a", b"1"), ("b", None)]),
                Record(b"k2", None, T + 2),
            ],
            base_offset=100,
            producer_id=42,
            producer_epoch=3,
            base_sequence=7,
            partition_leader_epoch=5,
        ),
        encode_batch(
            [Record(b"x", b"y", 1600000000000)],
            base_offset=103,
            timestamp_type="log_append",
            log_append_time=T + 9999,
            partition_leader_epoch=5,
        ),
        encode_batch(
            [Record(b"t", b"1", T + 10), Record(b"t", b"2", T + 11)],
            base_offset=104,
            producer_id=77,
            producer_epoch=2,
            base_sequence=0,
            transactional=True,
            partition_leader_epoch=5,
        ),
        encode_batch(
            [Record(b"\x00\x00\x00\x00", b"\x00\x00\x00\x00\x00\x05", T + 12)],
            base_offset=106,
            producer_id=77,
            producer_epoch=2,
            transactional=True,
            control=True,
            partition_leader_epoch=5,
        ),
        encode_batch(
            [Record(b"\x00\x00\x00\x02", _leader_change(), T + 13)],
            base_offset=107,
            control=True,
            partition_leader_epoch=5,
        ),
        encode_batch(
            [Record(b"\x00\x00\x00\x09", b"", T + 14)],
            base_offset=108,
            control=True,
            partition_leader_epoch=5,
        ),
        encode_batch(
            [Record(b"c", b"d", T + 15)],
            base_offset=109,
            delete_horizon_ms=T + 100000,
            partition_leader_epoch=5,
        ),
    ]


def _v2_crc(batch: bytes) -> int:
    stored = struct.unpack_from(">I", batch, 17)[0]
    assert crc32c.crc32c(batch[21:]) == stored  # independent check of the writer
    return stored


@pytest.mark.parametrize(
    "version, name", [("4.0", "v2_mixed"), ("4.1", "v2_mixed_4_1"), ("trunk", "v2_mixed_4_1")]
)
def test_v2_mixed_golden(tmp_path, monkeypatch, capsys, version, name):
    batches = _mixed_batches()
    (tmp_path / "00000000000000000100.log").write_bytes(b"".join(batches))
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(
        capsys,
        "dump-segments",
        "--files",
        "00000000000000000100.log",
        "--print-data-log",
        "--kafka-version",
        version,
    )
    crcs = {f"CRC{i}": _v2_crc(b) for i, b in enumerate(batches)}
    assert [len(b) for b in batches] == [95, 70, 79, 78, 91, 72, 72]  # the positions in the golden
    assert out == golden(f"encoded/{name}.stdout", **crcs)
    if version == "trunk":
        # the Java rewrite starts its non-consecutive check from -1 (spec 7.5)
        log = tmp_path / "00000000000000000100.log"
        assert err == f"Non-consecutive offsets in {log}\n  -1 is followed by 100\n"
    else:
        assert err == ""
    assert rc == 0


def _legacy_entries() -> list[bytes]:
    return [
        encode_legacy([Record(b"a", b"zero", None)], magic=0, base_offset=0),
        encode_legacy([Record(None, b"one", None)], magic=0, base_offset=1),
        encode_legacy([Record(b"b", b"two", T + 20)], magic=1, base_offset=2),
        encode_legacy(
            [Record(None, b"three", T + 21)],
            magic=1,
            base_offset=3,
            timestamp_type="log_append",
            log_append_time=T + 30,
        ),
    ]


def _legacy_message(magic: int, attributes: int, ts: int, key: bytes | None, value: bytes) -> bytes:
    """An independent v0/v1 message encoder (spec §2.1): returns crc + body."""
    body = struct.pack(">bb", magic, attributes)
    if magic == 1:
        body += struct.pack(">q", ts)
    body += struct.pack(">i", -1) if key is None else struct.pack(">i", len(key)) + key
    body += struct.pack(">i", len(value)) + value
    return struct.pack(">I", zlib.crc32(body)) + body


@pytest.mark.parametrize(
    "version, name", [("4.0", "legacy"), ("trunk", "legacy_trunk"), ("2.7", "legacy_2_7")]
)
def test_legacy_golden(tmp_path, monkeypatch, capsys, version, name):
    entries = _legacy_entries()
    (tmp_path / SEG).write_bytes(b"".join(entries))
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(
        capsys, "dump-segments", "--files", SEG, "--print-data-log", "--kafka-version", version
    )
    expected_msgs = [
        _legacy_message(0, 0, -1, b"a", b"zero"),
        _legacy_message(0, 0, -1, None, b"one"),
        _legacy_message(1, 0, T + 20, b"b", b"two"),
        _legacy_message(1, 0x08, T + 30, None, b"three"),
    ]
    for e, m in zip(entries, expected_msgs):
        assert e[12:] == m  # the writer matches the independent encoder
    crcs = {f"CRC{i}": struct.unpack_from(">I", m)[0] for i, m in enumerate(expected_msgs)}
    assert out == golden(f"encoded/{name}.stdout", **crcs)
    assert err == "" and rc == 0


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_v2_every_codec(tmp_path, monkeypatch, capsys, codec):
    data = encode_batch(
        [
            Record(b"k", b"hello " + codec.encode(), T),
            Record(None, b"x" * 50, T + 5, [("h", b"v")]),
        ],
        compression=codec,
        partition_leader_epoch=0,
    )
    (tmp_path / SEG).write_bytes(data)
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(capsys, "dump-segments", "--files", SEG, "--print-data-log")
    assert out == golden(
        "encoded/v2_compressed.stdout",
        SIZE=len(data),
        CRC=_v2_crc(data),
        CODEC=codec,
        VLEN=6 + len(codec),
    )
    assert err == "" and rc == 0


@pytest.mark.parametrize(
    "magic, codec", [(0, "gzip"), (0, "snappy"), (1, "gzip"), (1, "lz4"), (1, "snappy")]
)
def test_legacy_compressed_wrappers(tmp_path, monkeypatch, capsys, magic, codec):
    data = encode_legacy(
        [Record(b"a", b"first", T), Record(None, b"second", T + 7)],
        magic=magic,
        base_offset=10,
        compression=codec,
    )
    (tmp_path / SEG).write_bytes(data)
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(capsys, "dump-segments", "--files", SEG, "--print-data-log")
    wrapper_crc = struct.unpack_from(">I", data, 12)[0]
    assert zlib.crc32(data[16:]) == wrapper_crc
    inner = [
        _legacy_message(magic, 0, T, b"a", b"first"),
        _legacy_message(magic, 0, T + 7, None, b"second"),
    ]
    subs = dict(
        SIZE=len(data),
        CRC=wrapper_crc,
        CODEC=codec,
        MAGIC=magic,
        ICRC0=struct.unpack_from(">I", inner[0])[0],
        ICRC1=struct.unpack_from(">I", inner[1])[0],
    )
    if magic == 0:
        subs.update(TSTYPE="NoTimestampType", WRAPPER_TS=-1, TS0=-1, TS1=-1)
    else:
        subs.update(TSTYPE="CreateTime", WRAPPER_TS=T + 7, TS0=T, TS1=T + 7)
    assert out == golden("encoded/legacy_compressed.stdout", **subs)
    assert err == "" and rc == 0


# ------------------------------------------------------------------------------------------
# Real Kafka files (../shared/fixtures/kafka-real), never modified: mutations go to tmp copies
# ------------------------------------------------------------------------------------------


def _ldi(*parts: str) -> Path:
    return shared_fixture_path("kafka-real", "LDI-POC", *parts)


@pytest.mark.parametrize(
    "files, args, name",
    [
        ("00000000000000000000.index", [], "index"),
        ("00000000000000000000.timeindex", [], "timeindex"),
        ("00000000000000000013.snapshot", [], "snapshot"),
        (
            "00000000000000000000.index,00000000000000000000.timeindex",
            ["--index-sanity-check"],
            "sanity",
        ),
        (
            "00000000000000000000.index,00000000000000000000.timeindex",
            ["--verify-index-only"],
            "verify_only",
        ),
    ],
)
def test_ldi_poc_index_files(monkeypatch, capsys, files, args, name):
    monkeypatch.chdir(_ldi("__consumer_offsets-6"))
    rc, out, err = run(capsys, "dump-segments", "--files", files, *args)
    assert out == golden(f"ldi_poc/{name}.stdout")
    assert err == "" and rc == 0


def test_ldi_poc_index_entries_match_expected_json(monkeypatch, capsys):
    expected = json.loads(_ldi("EXPECTED.json").read_text())["files"]
    monkeypatch.chdir(_ldi("__consumer_offsets-6"))
    _, out, _ = run(capsys, "dump-segments", "--files", "00000000000000000000.index")
    want = [
        f"offset: {e['offset']} position: {e['position']}"
        for e in expected["__consumer_offsets-6/00000000000000000000.index"]["entries"]
    ]
    assert out.splitlines()[1:] == want
    _, out, _ = run(capsys, "dump-segments", "--files", "00000000000000000000.timeindex")
    want = [
        f"timestamp: {e['timestamp']} offset: {e['offset']}"
        for e in expected["__consumer_offsets-6/00000000000000000000.timeindex"]["entries"]
    ]
    assert out.splitlines()[1:] == want


def _increment_sequence(seq: int, inc: int) -> int:
    if seq > 2147483647 - inc:
        return inc - (2147483647 - seq) - 1
    return seq + inc


def _expected_batch_line(b: dict) -> str:
    """A §7.3 batch line built from an EXPECTED.json batch (independent decoder's values)."""
    base = b["base_offset"]
    last = base + b["last_offset_delta"]
    seq = b["base_sequence"]
    last_seq = -1 if seq == -1 else _increment_sequence(seq, b["last_offset_delta"])
    dh = f"OptionalLong[{b['base_timestamp']}]" if b["attributes"] & 0x40 else "OptionalLong.empty"
    return (
        f"baseOffset: {base} lastOffset: {last} count: {b['record_count']} baseSequence: {seq} "
        f"lastSequence: {last_seq} producerId: {b['producer_id']} producerEpoch: "
        f"{b['producer_epoch']} partitionLeaderEpoch: {b['partition_leader_epoch']} "
        f"isTransactional: {str(b['is_transactional']).lower()} isControl: "
        f"{str(b['is_control']).lower()} deleteHorizonMs: {dh} position: {b['position']} "
        f"{b['timestamp_type']}: {b['max_timestamp']} size: {b['size']} magic: 2 "
        f"compresscodec: {b['codec']} crc: {b['crc']} isvalid: {str(b['crc_valid']).lower()}"
    )


@pytest.mark.parametrize("fixture", ["LDI-POC", "KAIPASUBHASH-kafka-logs", "VolodymyrZee-kafka"])
def test_real_logs_batch_lines(monkeypatch, capsys, fixture):
    root = shared_fixture_path("kafka-real", fixture)
    expected = json.loads((root / "EXPECTED.json").read_text())["files"]
    logs = [k for k, v in expected.items() if k.endswith(".log") and "batches" in v]
    assert logs
    monkeypatch.chdir(root)
    for rel in logs:
        e = expected[rel]
        rc, out, err = run(capsys, "dump-segments", "--files", rel)
        want = [f"Dumping {rel}", f"Log starting offset: {int(Path(rel).name.split('.')[0])}"]
        want += [_expected_batch_line(b) for b in e["batches"]]
        assert out.splitlines() == want, rel
        assert err == "" and rc == 0


def test_real_offsets_log_decodes_completely(monkeypatch, capsys):
    monkeypatch.chdir(_ldi())
    rc, out, err = run(
        capsys,
        "dump-segments",
        "--files",
        "__consumer_offsets-6/00000000000000000000.log",
        "--offsets-decoder",
    )
    records = [ln for ln in out.splitlines() if ln.startswith("| ")]
    assert len(records) == 13
    assert "Error at" not in out and "Unknown record type" not in out
    assert all(' key: {"type":"' in ln and ' payload: {"version":"' in ln for ln in records)
    # hand-checked against the record bytes: key = int16 type 1, group "DEVSmileCDR" (11),
    # topic (45 chars), partition 0 = 66 bytes; value = int16 version 3, offset 0, leaderEpoch
    # -1, metadata "", commitTimestamp 0x19c0fcdac12 = 24 bytes
    assert records[1] + "\n" == golden("ldi_poc/offsets_decoder_offset1.txt")
    assert rc == 0 and err == ""


def test_real_cluster_metadata_log_decodes(monkeypatch, capsys):
    monkeypatch.chdir(_ldi())
    rc, out, err = run(
        capsys,
        "dump-segments",
        "--files",
        "__cluster_metadata-0/00000000000000000000.log,bootstrap.checkpoint",
        "--cluster-metadata-decoder",
        "--kafka-version",
        "4.0",
    )
    lines = out.splitlines()
    assert "Error at" not in out
    assert lines[0] == "Dumping __cluster_metadata-0/00000000000000000000.log"
    # the first batch is a LEADER_CHANGE control batch: 4.0 prints its type only
    assert lines[3].endswith("headerKeys: [] controlType: LEADER_CHANGE(2)")
    data = [ln for ln in lines if ln.startswith("| ") and "payload: " in ln]
    assert all(' payload: {"type":"' in ln for ln in data)
    assert "Dumping bootstrap.checkpoint" in lines
    i = lines.index("Dumping bootstrap.checkpoint")
    assert lines[i + 1] == "KRaft bootstrap snapshot"
    assert lines[i + 3].endswith('SnapshotHeader {"version":0,"lastContainedLogTimestamp":0}')
    assert lines[-1].endswith('SnapshotFooter {"version":0}')
    assert rc == 0 and err == ""


def test_real_leader_change_json_in_4_1(monkeypatch, capsys):
    monkeypatch.chdir(_ldi())
    _, out, _ = run(
        capsys,
        "dump-segments",
        "--files",
        "__cluster_metadata-0/00000000000000000000.log",
        "--deep-iteration",
        "--kafka-version",
        "4.1",
        "--max-bytes",
        "91",
    )
    assert out.splitlines()[3].endswith(
        'LeaderChange: {"version":0,"leaderId":1,"voters":[{"voterId":1}],'
        '"grantingVoters":[{"voterId":1}]}'
    )


def _copy_ldi(tmp_path: Path) -> Path:
    d = tmp_path / "__consumer_offsets-6"
    shutil.copytree(_ldi("__consumer_offsets-6"), d)
    for p in d.iterdir():
        p.chmod(0o644)
    return d


def test_zero_filled_index_tail_stops_silently(tmp_path, monkeypatch, capsys):
    d = _copy_ldi(tmp_path)
    with open(d / "00000000000000000000.index", "ab") as f:
        f.write(b"\x00" * 8 * 100)  # a preallocated tail left by a crash
    with open(d / "00000000000000000000.timeindex", "ab") as f:
        f.write(b"\x00" * 12 * 10)
    monkeypatch.chdir(d)
    rc, out, err = run(
        capsys,
        "dump-segments",
        "--files",
        "00000000000000000000.index,00000000000000000000.timeindex",
    )
    assert out == golden("ldi_poc/index.stdout") + golden("ldi_poc/timeindex.stdout")
    assert err == "" and rc == 0


def test_index_mismatches_newest_first(tmp_path, monkeypatch, capsys):
    d = _copy_ldi(tmp_path)
    p = d / "00000000000000000000.index"
    # entries (3, 4730) and (7, 9571): make both keys wrong (2 and 6)
    p.write_bytes(struct.pack(">iiii", 2, 4730, 6, 9571))
    monkeypatch.chdir(d)
    rc, out, err = run(capsys, "dump-segments", "--files", p.name)
    assert out == (
        "Dumping 00000000000000000000.index\noffset: 2 position: 4730\noffset: 6 position: 9571\n"
    )
    assert err == (
        f"Mismatches in :{p}\n  Index offset: 6, log offset: 7\n  Index offset: 2, log offset: 3\n"
    )
    assert rc == 0  # Kafka prints its summaries and exits 0 (DumpLogSegments never exits 1 here)
    # the Java rewrite keys them in a reverse-ordered TreeMap: same order here
    rc, _, err2 = run(capsys, "dump-segments", "--files", p.name, "--kafka-version", "trunk")
    assert err2 == err and rc == 0


def test_time_index_errors(tmp_path, monkeypatch, capsys):
    d = _copy_ldi(tmp_path)
    p = d / "00000000000000000000.timeindex"
    # (ts, relative offset): a wrong timestamp; the max timestamp of another batch (offset 6's
    # batch holds 1769792038081); an out-of-order one; an offset past the log end
    p.write_bytes(
        struct.pack(">qi", 1769791783398, 3)
        + struct.pack(">qi", 1769792518093, 6)
        + struct.pack(">qi", 1769791000000, 12)
        + struct.pack(">qi", 1769799999999, 13)
    )
    monkeypatch.chdir(d)
    rc, out, err = run(capsys, "dump-segments", "--files", p.name)
    assert out.splitlines()[1:] == [
        "timestamp: 1769791783398 offset: 3",
        "timestamp: 1769792518093 offset: 6",
        "timestamp: 1769791000000 offset: 12",
        "timestamp: 1769799999999 offset: 13",
    ]
    # time-index errors print in file order (Scala appends to ArrayBuffers)
    assert err == (
        f"Found timestamp mismatch in :{p}\n"
        "  Index timestamp: 1769791783398, log timestamp: 1769791783399\n"
        "  Index timestamp: 1769792518093, log timestamp: 1769792038081\n"
        "  Index timestamp: 1769791000000, log timestamp: 1769793578176\n"
        f"Found out of order timestamp in :{p}\n"
        "  Index timestamp: 1769791000000, Previously indexed timestamp: 1769792518093\n"
        "The following indexed offsets are not found in the log.\n"
        "Indexed offset: 13, found log offset: -1\n"
    )
    assert rc == 0


def test_index_sanity_check_failure(tmp_path, monkeypatch, capsys):
    d = _copy_ldi(tmp_path)
    p = d / "00000000000000000000.index"
    p.write_bytes(p.read_bytes() + b"\x00\x00\x00")  # not a multiple of 8
    t = d / "00000000000000000000.timeindex"
    t.write_bytes(struct.pack(">qi", 5, 3) + struct.pack(">qi", 4, 7))  # last ts < first
    monkeypatch.chdir(d)
    rc, out, err = run(
        capsys, "dump-segments", "--files", f"{p.name},{t.name}", "--index-sanity-check"
    )
    # the exception ends Kafka's run: the second file is not read
    assert out == f"Dumping {p.name}\n"
    assert err == (
        'Exception in thread "main" org.apache.kafka.common.errors.CorruptIndexException: '
        f"Index file {p} is corrupt, found 19 bytes which is neither positive nor a multiple of 8\n"
    )
    assert rc == 1
    rc, out, err = run(capsys, "dump-segments", "--files", t.name, "--index-sanity-check")
    assert out == f"Dumping {t.name}\n"
    assert err == (
        'Exception in thread "main" org.apache.kafka.common.errors.CorruptIndexException: '
        f"Corrupt time index found, time index file ({t}) has non-zero size but the last "
        "timestamp is 4 which is less than the first timestamp 5\n"
    )
    assert rc == 1


def test_empty_index_and_missing_log(tmp_path, monkeypatch, capsys):
    (tmp_path / "00000000000000000000.index").write_bytes(b"")
    (tmp_path / SEG).write_bytes(b"")
    (tmp_path / "00000000000000000007.index").write_bytes(b"\x00" * 8)
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(
        capsys, "dump-segments", "--files", "00000000000000000000.index,00000000000000000007.index"
    )
    assert out == (
        "Dumping 00000000000000000000.index\n00000000000000000000.index is empty.\n"
        "Dumping 00000000000000000007.index\n"
    )
    assert err == (
        'Exception in thread "main" java.nio.file.NoSuchFileException: '
        f"{tmp_path / '00000000000000000007.log'}\n"
    )
    assert rc == 1


def test_a_log_above_2_gib_is_refused_before_any_batch(tmp_path, capsys):
    """FileRecords' constructor refuses a file larger than Integer.MAX_VALUE (positions are
    Java ints): Kafka prints the header line, then dies with this exception (sparse file)."""
    seg = tmp_path / SEG
    seg.write_bytes(encode_batch([Record(None, b"v", 1)]))
    os.truncate(seg, 3 << 30)
    rc, out, err = run(capsys, "dump-segments", "--files", str(seg))
    assert out == f"Dumping {seg}\nLog starting offset: 0\n"
    assert err == ('Exception in thread "main" org.apache.kafka.common.KafkaException: The '
                   f"size of segment {seg} (3221225472) is larger than the maximum allowed "
                   "segment size of 2147483647\n")
    assert rc == 1


# ------------------------------------------------------------------------------------------
# Corrupt .log files: Kafka's messages and exit status, never a traceback
# ------------------------------------------------------------------------------------------


def test_zero_filled_tail_is_corrupt_size(spec_dir, capsys):
    (spec_dir / SEG).write_bytes(SPEC_LOG + b"\x00" * 64)
    rc, out, err = run(capsys, "dump-segments", "--files", f"{SEG},{SEG}")
    shallow = golden("spec_example/shallow.stdout")
    assert out == shallow  # the exception ends the run, as Kafka's: no second file
    line = (
        'Exception in thread "main" org.apache.kafka.common.errors.CorruptRecordException: '
        f"Found record size 0 smaller than minimum record overhead (14) in file {SEG}.\n"
    )
    assert err == line
    assert rc == 1
    # --format json (beyond Kafka) reads on and reports every file
    rc, out, _ = run(capsys, "dump-segments", "--files", f"{SEG},{SEG}", "--format", "json")
    assert out.count('"type":"error"') == 2 and rc == 1
    rc, _, err = run(capsys, "dump-segments", "--files", SEG, "--kafka-version", "trunk")
    assert err == f"Found record size 0 smaller than minimum record overhead (14) in file {SEG}.\n"


def test_short_tail_is_invalid_bytes(spec_dir, capsys):
    (spec_dir / SEG).write_bytes(SPEC_LOG + b"\x00" * 17)
    rc, out, err = run(capsys, "dump-segments", "--files", SEG)
    assert (
        out
        == golden("spec_example/shallow.stdout") + f"Found 17 invalid bytes at the end of {SEG}\n"
    )
    assert err == "" and rc == 0  # printed, not thrown


def test_truncated_batch(spec_dir, capsys):
    (spec_dir / SEG).write_bytes(SPEC_LOG[:-5])
    rc, out, err = run(capsys, "dump-segments", "--files", SEG, "--print-data-log")
    want = golden("spec_example/print_data_log.stdout").splitlines()[:-2]
    assert out.splitlines() == want + [f"Found 74 invalid bytes at the end of {SEG}"]
    assert rc == 0
    # --max-bytes (3.3+, DumpLogSegments.scala @3.3.0) suppresses the trailing-bytes line
    rc, out, _ = run(capsys, "dump-segments", "--files", SEG, "--max-bytes", "300")
    assert "invalid bytes" not in out
    rc, out, _ = run(
        capsys, "dump-segments", "--files", SEG, "--max-bytes", "300", "--kafka-version", "3.3"
    )
    assert "invalid bytes" not in out and rc == 0
    # 3.2 had no such option: joptsimple throws before any file
    rc, out, err = run(
        capsys, "dump-segments", "--files", SEG, "--max-bytes", "300", "--kafka-version", "3.2"
    )
    assert out == "" and rc == 1
    assert err == (
        'Exception in thread "main" joptsimple.UnrecognizedOptionException: '
        "max-bytes is not a recognized option\n"
    )


def test_bit_flip_in_value(spec_dir, capsys):
    data = bytearray(SPEC_LOG)
    data[67] ^= 0x01  # 'h' of hello (bytes 67..71 of A) -> 'i'
    (spec_dir / SEG).write_bytes(bytes(data))
    rc, out, err = run(capsys, "dump-segments", "--files", SEG, "--print-data-log")
    lines = out.splitlines()
    assert lines[2].endswith("crc: 3863061579 isvalid: false")
    assert lines[3].endswith("payload: iello")
    assert lines[4:] == golden("spec_example/print_data_log.stdout").splitlines()[4:]
    assert rc == 0  # an invalid batch is printed (isvalid: false), not thrown


def test_bit_flip_in_record_structure(spec_dir, capsys):
    data = bytearray(SPEC_LOG)
    data[151 + 61] ^= 0x40  # C's record length varint
    (spec_dir / SEG).write_bytes(bytes(data))
    rc, out, err = run(capsys, "dump-segments", "--files", SEG, "--print-data-log")
    assert out.splitlines()[-1].endswith("isvalid: false")  # batch line printed, then the abort
    assert err.startswith(
        'Exception in thread "main" org.apache.kafka.common.InvalidRecordException: '
    )
    assert "Traceback" not in err and rc == 1


def test_bad_magic_and_bad_codec(tmp_path, monkeypatch, capsys):
    bad_magic = bytearray(VECTOR_A)
    bad_magic[16] = 7
    bad_codec = bytearray(VECTOR_A)
    bad_codec[22] |= 0x07
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / SEG).write_bytes(bytes(bad_magic))
    (tmp_path / "b" / SEG).write_bytes(bytes(bad_codec))
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(capsys, "dump-segments", "--files", f"a/{SEG},b/{SEG}")
    assert err.splitlines() == [
        'Exception in thread "main" org.apache.kafka.common.errors.CorruptRecordException: '
        "Invalid magic found in record: 7",
    ]
    assert rc == 1
    rc, out, err = run(capsys, "dump-segments", "--files", f"b/{SEG}")
    assert err.splitlines() == [
        'Exception in thread "main" java.lang.IllegalArgumentException: '
        "Unknown compression type id: 7",
    ]
    assert rc == 1


@pytest.mark.parametrize("cut", range(0, len(SPEC_LOG), 7))
def test_every_cut_gives_output_not_traceback(spec_dir, capsys, cut):
    (spec_dir / SEG).write_bytes(SPEC_LOG[:cut])
    rc, out, err = run(capsys, "dump-segments", "--files", SEG, "--print-data-log")
    assert out.startswith("Dumping ")
    whole = sum(1 for end in (73, 151, 230) if end <= cut)
    assert out.count("baseOffset: ") == whole
    trailing = cut - (0, 73, 151, 230)[whole]
    assert rc == 0  # a cut tail is "Found N invalid bytes", not an exception
    if trailing:
        assert out.endswith(f"Found {trailing} invalid bytes at the end of {SEG}\n")


# ------------------------------------------------------------------------------------------
# .snapshot, .txnindex, unknown files
# ------------------------------------------------------------------------------------------


def _snapshot(entries: list[tuple], version: int = 1) -> bytes:
    body = struct.pack(">i", len(entries)) + b"".join(struct.pack(">qhiqiqiq", *e) for e in entries)
    return struct.pack(">hI", version, crc32c.crc32c(body)) + body


def test_snapshot_entries(tmp_path, monkeypatch, capsys):
    p = tmp_path / "00000000000000000010.snapshot"
    p.write_bytes(_snapshot([(1000, 0, 4, 9, 4, T, 3, -1), (2000, 1, -1, -1, 0, -1, -1, 5)]))
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(capsys, "dump-segments", "--files", p.name)
    assert out == (
        f"Dumping {p.name}\n"
        "producerId: 1000 producerEpoch: 0 coordinatorEpoch: 3 currentTxnFirstOffset: "
        "OptionalLong.empty lastTimestamp: 1700000000000 firstSequence: 0 lastSequence: 4 "
        "lastOffset: 9 offsetDelta: 4 timestamp: 1700000000000\n"
        "producerId: 2000 producerEpoch: 1 coordinatorEpoch: -1 currentTxnFirstOffset: "
        "OptionalLong[5] lastTimestamp: -1 \n"
    )
    assert err == "" and rc == 0
    _, out, _ = run(capsys, "dump-segments", "--files", p.name, "--kafka-version", "trunk")
    assert out.splitlines()[2].endswith("lastTimestamp: -1")  # no trailing space
    assert " lastTimestamp: 1700000000000 firstSequence: 0" in out
    _, out, _ = run(capsys, "dump-segments", "--files", p.name, "--kafka-version", "3.4")
    assert "currentTxnFirstOffset: None " in out and "currentTxnFirstOffset: Some(5) " in out
    _, out, _ = run(capsys, "dump-segments", "--files", p.name, "--kafka-version", "3.0")
    assert "lastTimestamp" not in out


def test_snapshot_corrupt(tmp_path, monkeypatch, capsys):
    good = _snapshot([(1000, 0, 4, 9, 4, T, 3, -1)])
    bad = bytearray(good)
    bad[-1] ^= 1
    (tmp_path / "00000000000000000001.snapshot").write_bytes(bytes(bad))
    (tmp_path / "00000000000000000002.snapshot").write_bytes(b"\x00\x02" + good[2:])
    (tmp_path / "00000000000000000003.snapshot").write_bytes(good[:30])
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(
        capsys,
        "dump-segments",
        "--files",
        "00000000000000000001.snapshot,00000000000000000002.snapshot,00000000000000000003.snapshot",
    )
    stored = struct.unpack_from(">I", good, 2)[0]
    computed = crc32c.crc32c(bytes(bad[6:]))
    assert err.splitlines() == [
        f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {stored}. "
        f"Computed crc: {computed}",
        "Snapshot contained an unknown file version 2",
        # 20 bytes left for a 46-byte entry: the array size check passes (1 <= 20), then
        # reading the entry's fields underflows at last_offset (byte 14 + 8 > 20)
        "Snapshot failed schema validation: Error reading field 'producer_entries': "
        "Error reading field 'last_offset': java.nio.BufferUnderflowException",
    ]
    # Kafka catches CorruptSnapshotException: each file is reported and the run exits 0
    assert out.count("Dumping") == 3 and rc == 0


def test_txn_index(tmp_path, monkeypatch, capsys):
    p = tmp_path / "00000000000000000100.txnindex"
    p.write_bytes(
        struct.pack(">hqqqq", 0, 77, 104, 106, 104)
        + struct.pack(">hqqqq", 0, 78, 107, 110, 107)
        + b"\x00" * 10
    )  # a trailing partial entry is ignored
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(capsys, "dump-segments", "--files", p.name)
    assert out == (
        f"Dumping {p.name}\n"
        "version: 0 producerId: 77 firstOffset: 104 lastOffset: 106 lastStableOffset: 104\n"
        "version: 0 producerId: 78 firstOffset: 107 lastOffset: 110 lastStableOffset: 107\n"
    )
    assert err == "" and rc == 0


def test_unknown_and_dotless_files(tmp_path, monkeypatch, capsys):
    (tmp_path / SEG).write_bytes(VECTOR_A)
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(
        capsys, "dump-segments", "--files", f"{SEG}.deleted,leader-epoch-checkpoint,{SEG}"
    )
    # the StringIndexOutOfBoundsException ends the run: the last file is not read
    assert out.splitlines() == [
        f"Dumping {SEG}.deleted",
        "Dumping leader-epoch-checkpoint",
    ]
    assert err.splitlines() == [
        f"Ignoring unknown file {SEG}.deleted",
        'Exception in thread "main" java.lang.StringIndexOutOfBoundsException: begin -1, end 23, '
        "length 23",
    ]
    assert rc == 1


def test_checkpoint_files_before_3_3_are_unknown(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(_ldi())
    rc, out, err = run(
        capsys, "dump-segments", "--files", "bootstrap.checkpoint", "--kafka-version", "3.2"
    )
    assert out == "Dumping bootstrap.checkpoint\n"
    assert err == "Ignoring unknown file bootstrap.checkpoint\n" and rc == 0


def test_kraft_snapshot_checkpoint_header(tmp_path, monkeypatch, capsys):
    name = "00000000000000000230-0000000001.checkpoint"
    (tmp_path / name).write_bytes(_ldi("bootstrap.checkpoint").read_bytes())
    (tmp_path / "foo.checkpoint").write_bytes(b"")
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(capsys, "dump-segments", "--files", f"{name},foo.checkpoint")
    assert out.splitlines()[1] == "Snapshot end offset: 230, epoch: 1"
    assert err == 'Exception in thread "main" java.util.NoSuchElementException: No value present\n'
    assert rc == 1


# ------------------------------------------------------------------------------------------
# JSON lines, usage errors, python -m
# ------------------------------------------------------------------------------------------


def test_json_format(spec_dir, capsys, tmp_path):
    rc, out, err = run(
        capsys, "dump-segments", "--files", SEG, "--format", "json", "--deep-iteration"
    )
    objs = [json.loads(ln) for ln in out.splitlines()]
    assert [o["type"] for o in objs] == [
        "file",
        "log_header",
        "batch",
        "record",
        "batch",
        "record",
        "batch",
        "record",
        "non_consecutive_offsets",
        "non_consecutive_offsets",
    ]
    a, b = objs[2], objs[3]
    assert (a["crc"], a["size"], a["is_valid"], a["compression"]) == (3863061579, 73, True, "none")
    assert (b["key"], b["value"], b["value_encoding"], b["headers"]) == (None, "hello", "utf8", [])
    assert objs[5]["control"] == {
        "type_id": 1,
        "type": "COMMIT",
        "coordinator_epoch": 0,
        "data": None,
    }
    assert objs[7]["headers"] == [
        {"key": "h1", "value": "x", "value_encoding": "utf8"},
        {"key": "h2", "value": None, "value_encoding": None},
    ]
    # non-UTF-8 bytes come out as base64 and say so
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / SEG).write_bytes(encode_batch([Record(b"\xff\xfe", b"ok", T)]))
    _, out, _ = run(
        capsys, "dump-segments", "--files", f"bin/{SEG}", "--format", "json", "--deep-iteration"
    )
    rec = [json.loads(ln) for ln in out.splitlines()][3]
    assert (rec["key"], rec["key_encoding"]) == ("//4=", "base64")
    assert rc == 0 and err == ""


@pytest.mark.parametrize(
    "argv, status",
    [
        ([], 2),
        (["no-such-command"], 2),
        # dump-segments: Kafka's tools exit 1 on bad arguments (printUsageAndExit)
        (["dump-segments"], 1),
        (["dump-segments", "--files", SEG, "--kafka-version", "0.10"], 1),
        (["dump-segments", "--files", SEG, "--max-bytes", "lots"], 1),
        (["dump-segments", "--files", SEG, "--key-decoder", "kafka.serializer.DefaultDecoder"], 1),
        (["dump-segments", "--files", SEG, "--format", "xml"], 1),
        (["dump-segments", "--files", SEG, "--skip-record-metadata", "--kafka-version", "2.7"], 1),
    ],
)
def test_usage_errors(spec_dir, capsys, argv, status):
    rc, out, err = run(capsys, *argv)
    assert rc == status and err and "Traceback" not in err


def test_help_exits_0(capsys):
    rc, out, _ = run(capsys, "dump-segments", "--help")
    assert rc == 0 and "--files" in out and "--skip-record-metadata" in out


def test_python_dash_m(spec_dir):
    env = dict(os.environ)
    p = subprocess.run(
        [sys.executable, "-m", "kafkalog", "dump-segments", "--files", SEG],
        capture_output=True,
        text=True,
        env=env,
        cwd=spec_dir,
        timeout=120,
    )
    assert p.returncode == 0
    assert p.stdout == golden("spec_example/shallow.stdout")
    p = subprocess.run(
        [sys.executable, "-m", "kafkalog", "dump-segments"],
        capture_output=True,
        text=True,
        env=env,
        cwd=spec_dir,
        timeout=120,
    )
    assert p.returncode == 1  # Kafka's tools exit 1 on missing arguments


def test_progress_bar_does_not_change_output(spec_dir, capsys):
    import io

    from kafkalog import cli
    from kafkalog.tools import dump

    out, err = io.StringIO(), io.StringIO()
    rc = cli.run_dump(dump.DumpOptions(), [SEG], stdout=out, stderr=err, progress=True)
    assert rc == 0 and out.getvalue() == golden("spec_example/shallow.stdout")


def test_paths_printed_as_java_file_does(spec_dir, capsys):
    # new File(arg): repeated separators collapse, "." stays; getAbsolutePath keeps "./"
    rc, out, err = run(capsys, "dump-segments", "--files", f".//{SEG}", "--deep-iteration")
    assert out.splitlines()[0] == f"Dumping ./{SEG}"
    assert err.splitlines()[0] == f"Non-consecutive offsets in {spec_dir}/./{SEG}"


def test_demo_subcommand_is_wired(capsys):
    rc, out, err = run(capsys, "demo", "--help")
    assert rc == 0 and "kafkalog demo" in out


def test_time_index_entry_inside_a_multi_record_batch(tmp_path, monkeypatch, capsys):
    batches = _mixed_batches()
    (tmp_path / "00000000000000000100.log").write_bytes(b"".join(batches))
    # (T+2, offset 101): offset 101 is inside batch 100..102, whose last offset is 102
    (tmp_path / "00000000000000000100.timeindex").write_bytes(struct.pack(">qi", T + 2, 1))
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(capsys, "dump-segments", "--files", "00000000000000000100.timeindex")
    assert out == "Dumping 00000000000000000100.timeindex\ntimestamp: 1700000000002 offset: 101\n"
    assert err == (
        "The following indexed offsets are not found in the log.\n"
        "Indexed offset: 101, found log offset: 102\n"
    )
    assert rc == 0


@pytest.mark.parametrize(
    "version, expected",
    [
        ("4.0", "controlType: LEADER_CHANGE(2)"),
        ("3.0", "controlType: LEADER_CHANGE(2)"),
        # ControlRecordType.java @2.7.0: QUORUM_REASSIGNMENT(2), LEADER_CHANGE(3)
        ("2.8", "controlType: QUORUM_REASSIGNMENT(2)"),
        ("2.7", "controlType: QUORUM_REASSIGNMENT(2)"),
        ("2.6", "controlType: UNKNOWN(2)"),
    ],
)
def test_control_type_names_per_version(tmp_path, monkeypatch, capsys, version, expected):
    (tmp_path / SEG).write_bytes(
        encode_batch([Record(b"\x00\x00\x00\x02", _leader_change(), T)], control=True)
    )
    monkeypatch.chdir(tmp_path)
    _, out, _ = run(
        capsys, "dump-segments", "--files", SEG, "--deep-iteration", "--kafka-version", version
    )
    assert out.splitlines()[3].endswith(expected)


@pytest.mark.skipif(
    shutil.which("javac") is None or scala213_jar() is None,
    reason="needs a JDK and Scala 2.13's library (pyspark ships it)",
)
@pytest.mark.parametrize("n", [3, 13])
def test_summary_file_order_matches_the_jvm_hash_maps(tmp_path, n):
    """Kafka prints per-file summaries in HashMap iteration order: check our model on a JVM."""
    from kafkalog.tools.render import java_hash_map_order, scala_hash_map_order

    src = tmp_path / "Order.java"
    src.write_text(
        "import java.util.*;\n"
        "public class Order { public static void main(String[] a) {\n"
        "  scala.collection.mutable.HashMap<String,Integer> s =\n"
        "      new scala.collection.mutable.HashMap<>();\n"
        "  HashMap<String,Integer> j = new HashMap<>();\n"
        "  for (String k : a) { s.put(k, 1); }\n"
        "  for (String k : a) { s.put(k, 2); j.put(k, 1); }\n"
        "  scala.collection.Iterator<String> it = s.keysIterator();\n"
        '  while (it.hasNext()) System.out.println("S" + it.next());\n'
        '  for (String k : j.keySet()) System.out.println("J" + k);\n'
        "} }\n"
    )
    jar = str(scala213_jar())
    subprocess.run(["javac", "-cp", jar, "-d", str(tmp_path), str(src)], check=True, timeout=120)
    keys = [f"/data/kafka-logs/topic-{i}/00000000000000000000.index" for i in range(n)]
    p = subprocess.run(
        ["java", "-cp", f"{jar}:{tmp_path}", "Order", *keys],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = p.stdout.splitlines()
    assert scala_hash_map_order(keys + keys) == [ln[1:] for ln in lines if ln[0] == "S"]
    assert java_hash_map_order(keys) == [ln[1:] for ln in lines if ln[0] == "J"]


def test_summaries_of_several_files_in_hash_map_order(tmp_path, monkeypatch, capsys):
    from kafkalog.tools.render import scala_hash_map_order

    names = []
    for i in range(4):
        d = tmp_path / f"p{i}"
        d.mkdir()
        (d / SEG).write_bytes(SPEC_LOG)
        (d / "00000000000000000000.index").write_bytes(struct.pack(">ii", 4, 73))  # batch 5
        names.append(f"p{i}/00000000000000000000.index")
    monkeypatch.chdir(tmp_path)
    rc, _, err = run(capsys, "dump-segments", "--files", ",".join(names))
    heads = [ln[len("Mismatches in :") :] for ln in err.splitlines() if ln.startswith("Mismatches")]
    abs_paths = [str(tmp_path / n) for n in names]
    assert sorted(heads) == sorted(abs_paths)
    assert heads == scala_hash_map_order(abs_paths)
    assert err.count("  Index offset: 4, log offset: 5") == 4 and rc == 0


def _dump_text(tmp_path: Path, name: str, data: bytes, *args: str) -> tuple[int, str, str]:
    import io

    from kafkalog import cli

    d = tmp_path / "fuzz"
    d.mkdir(exist_ok=True)
    (d / name).write_bytes(data)
    parser = cli.build_parser()
    ns = parser.parse_args(["dump-segments", "--files", str(d / name), *args])
    opts = cli._options_from_args(ns, sys.stdout)
    out, err = io.StringIO(), io.StringIO()
    rc = cli.run_dump(opts, [str(d / name)], stdout=out, stderr=err)
    return rc, out.getvalue(), err.getvalue()


_fuzz = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    flips=st.lists(st.tuples(st.integers(0, len(SPEC_LOG) - 1), st.integers(1, 255)), max_size=4),
    tail=st.binary(max_size=40),
)
def test_mutated_logs_give_findings_not_tracebacks(tmp_path, flips, tail):
    data = bytearray(SPEC_LOG)
    for i, x in flips:
        data[i] ^= x
    rc, out, err = _dump_text(tmp_path, SEG, bytes(data) + tail, "--print-data-log")
    assert rc in (0, 1)
    assert out.startswith("Dumping ")
    assert "Traceback" not in err
    if not flips and not tail:
        assert rc == 0


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    index=st.binary(max_size=64),
    suffix=st.sampled_from([".index", ".timeindex", ".snapshot", ".txnindex"]),
)
def test_arbitrary_index_bytes_never_crash(tmp_path, index, suffix):
    (tmp_path / "fuzz").mkdir(exist_ok=True)
    (tmp_path / "fuzz" / SEG).write_bytes(SPEC_LOG)
    rc, out, err = _dump_text(tmp_path, "00000000000000000000" + suffix, index)
    assert rc in (0, 1) and out.startswith("Dumping ") and "Traceback" not in err


def _txn_log_records() -> bytes:
    from kafkalog.decoders import transaction_log

    k, v = transaction_log.encode_record(
        {"transactionalId": "tx-1"},
        {
            "producerId": 7,
            "producerEpoch": 1,
            "transactionTimeoutMs": 60000,
            "transactionStatus": 4,
            "transactionPartitions": [{"topic": "a", "partitionIds": [0, 1]}],
            "transactionLastUpdateTimestampMs": 5,
            "transactionStartTimestampMs": 3,
        },
        version=0,
    )
    return encode_batch(
        [Record(k, v, T), Record(k, None, T + 1), Record(b"\x00\x00\x00", b"\x00", T + 2)]
    )


def test_transaction_log_decoder(tmp_path, monkeypatch, capsys):
    (tmp_path / SEG).write_bytes(_txn_log_records())
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(
        capsys, "dump-segments", "--files", SEG, "--transaction-log-decoder", "--kafka-version",
        "4.1",
    )  # fmt: skip
    recs = [ln for ln in out.splitlines() if ln.startswith("| ")]
    assert recs[0].endswith(
        ' key: {"type":"0","data":{"transactionalId":"tx-1"}} payload: {"version":"0","data":'
        '{"producerId":7,"producerEpoch":1,"transactionTimeoutMs":60000,"transactionStatus":4,'
        '"transactionPartitions":[{"topic":"a","partitionIds":[0,1]}],'
        '"transactionLastUpdateTimestampMs":5,"transactionStartTimestampMs":3}}'
    )
    assert recs[1].endswith(
        ' key: {"type":"0","data":{"transactionalId":"tx-1"}} payload: <DELETE>'
    )
    # a key that does not decode: Kafka prints the error as the key, no payload
    assert " key: Error at offset 2, skipping. " in recs[2] and "payload" not in recs[2]
    assert rc == 0 and err == ""


def test_coordinator_decoder_missing_key_stops_the_file(tmp_path, monkeypatch, capsys):
    (tmp_path / SEG).write_bytes(encode_batch([Record(None, b"\x00\x01", T)]))
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(
        capsys, "dump-segments", "--files", f"{SEG},{SEG}", "--offsets-decoder",
        "--kafka-version", "4.0",
    )  # fmt: skip
    assert err.splitlines() == [
        'Exception in thread "main" java.lang.RuntimeException: Failed to decode message at '
        "offset 0 using offset topic decoder (message had a missing key)"
    ]
    assert out.count("Dumping") == 1 and rc == 1  # the exception ends the run
    rc, _, err = run(
        capsys, "dump-segments", "--files", SEG, "--offsets-decoder", "--kafka-version", "4.1"
    )
    assert err == (
        'Exception in thread "main" java.lang.RuntimeException: Failed to decode message at '
        "offset 0 using the specified decoder (message had a missing key)\n"
    )
    rc, _, err = run(
        capsys, "dump-segments", "--files", SEG, "--offsets-decoder", "--kafka-version", "3.7"
    )
    assert err == (
        'Exception in thread "main" org.apache.kafka.common.KafkaException: Failed to '
        "decode message using offset topic decoder (message had a missing key)\n"
    )


def test_cluster_metadata_decoder_error_is_the_payload(tmp_path, monkeypatch, capsys):
    (tmp_path / SEG).write_bytes(encode_batch([Record(None, b"\x01\x7f\x00\x00", T)]))
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(capsys, "dump-segments", "--files", SEG, "--cluster-metadata-decoder")
    line = out.splitlines()[-1]
    assert " payload: Error at 0, skipping. " in line  # sic: no "offset" in this parser
    assert rc == 0 and err == ""


def test_legacy_text_offsets_decoder_before_3_8(monkeypatch, capsys):
    monkeypatch.chdir(_ldi())
    _, out, _ = run(
        capsys,
        "dump-segments",
        "--files",
        "__consumer_offsets-6/00000000000000000000.log",
        "--offsets-decoder",
        "--kafka-version",
        "3.7",
    )
    recs = [ln for ln in out.splitlines() if ln.startswith("| ")]
    assert recs[1].endswith(
        " key: offset_commit::group=DEVSmileCDR,partition="
        "batch2.work.notification.SHR_PROD.persistence-0 payload: offset=0"
    )


def test_version_flag(capsys):
    rc, out, _ = run(capsys, "dump-segments", "--version")
    assert rc == 0 and out.startswith("kafkalog ")


def test_default_shape_is_the_newest_release_line(tmp_path, monkeypatch, capsys):
    """Without --kafka-version the output is the newest release line's (4.1; 4.2 prints the
    same): the transaction log decoder prints JSON (KAFKA-18207, 4.1), not 4.0's text."""
    from kafkalog.tools.kafka_versions import DEFAULT_SHAPE

    assert DEFAULT_SHAPE.name == "4.1"
    monkeypatch.chdir(_ldi())
    seg = "__cluster_metadata-0/00000000000000000000.log"
    outs = {}
    for extra in ((), ("--kafka-version", "4.1"), ("--kafka-version", "4.0")):
        rc, out, err = run(capsys, "dump-segments", "--files", seg, "--cluster-metadata-decoder",
                           *extra)
        assert rc == 0 and err == ""
        outs[extra] = out
    assert outs[()] == outs[("--kafka-version", "4.1")]
    assert outs[()] != outs[("--kafka-version", "4.0")]
    assert "LeaderChange: {" in outs[()]  # 4.1 prints the LeaderChange record as JSON
