"""Known byte vectors: the spec's (§1.7, §2.3, §3) and ../shared/fixtures/vectors/vectors.json.

Spec vectors must be reproduced byte for byte by ``encode_batch`` and decode exactly.
vectors.json vectors (71, from public client test suites, many captured from real brokers) must
decode to their expected batches and records; deliberate negatives must raise or read invalid.
"""

from __future__ import annotations

import hashlib
import json
import struct

import pytest

from kafkalog import CorruptRecordError, Record, encode_batch, iter_batches
from kafkalog.records import compression
from kafkalog.records.batch import RecordBatch
from kafkalog.records.builder import encode_end_txn_marker
from kafkalog.records.legacy import LegacyEntry
from tests.batch_expect import check_entry, check_record, expected_bytes
from tests.conftest import shared_fixture_path

T = 1700000000000

SPEC_A = (
    "00000000000000000000003d0000000002e641a44b0000000000000000018bcfe568000000018bcfe56800ff"
    "ffffffffffffffffffffffffff0000000116000000010a68656c6c6f00"
)
SPEC_B = (
    "0000000000000005000000420000000002a1ac499f0030000000000000018bcfe568000000018bcfe5680000"
    "000000000003e80000ffffffff000000012000000008000000010c00000000000000"
)
SPEC_C = (
    "000000000000000a000000430000000002b4e9301a0000000000000000018bcfe568000000018bcfe56800ff"
    "ffffffffffffffffffffffffff0000000122000000026b027604046831027804683201"
)
SPEC_V0 = "00000000000000000000001387a77ab20000ffffffff0000000568656c6c6f"
SPEC_V1 = "00000000000000000000001b8ee30bba01000000018bcfe56800ffffffff0000000568656c6c6f"


# --- spec §1.7 ----------------------------------------------------------------------------------


def test_spec_vector_a_encode_and_decode() -> None:
    data = encode_batch([Record(None, b"hello", T)], partition_leader_epoch=0)
    assert data.hex() == SPEC_A
    (b,) = list(iter_batches(data))
    assert isinstance(b, RecordBatch)
    assert (b.size, b.crc, b.crc) == (73, 3863061579, 0xE641A44B)
    assert (b.base_offset, b.last_offset, b.record_count, b.partition_leader_epoch) == (0, 0, 1, 0)
    assert (b.base_timestamp, b.max_timestamp, b.timestamp_type) == (T, T, "CreateTime")
    assert (b.producer_id, b.producer_epoch, b.base_sequence, b.last_sequence) == (-1, -1, -1, -1)
    assert (b.is_transactional, b.is_control, b.compression, b.attributes) == (
        False, False, "none", 0)
    assert list(b) == [Record(None, b"hello", T, (), 0)]


def test_spec_vector_b_commit_marker() -> None:
    data = encode_end_txn_marker(
        True, producer_id=1000, producer_epoch=0, base_offset=5, partition_leader_epoch=0,
        timestamp=T,
    )
    assert data.hex() == SPEC_B
    (b,) = list(iter_batches(data))
    assert (b.size, b.crc, b.attributes) == (78, 2712422815, 0x30)
    assert (b.is_control, b.is_transactional, b.producer_id, b.producer_epoch) == (
        True, True, 1000, 0)
    assert b.base_sequence == -1
    assert b.control_type() == "COMMIT" and b.control_type_id() == 1
    assert b.end_txn_marker().coordinator_epoch == 0 and b.coordinator_epoch == 0
    (r,) = list(b)
    assert (r.key, r.value, r.offset, r.timestamp) == (
        bytes.fromhex("00000001"), bytes.fromhex("000000000000"), 5, T)


def test_spec_vector_c_headers() -> None:
    rec = Record(b"k", b"v", T, [("h1", b"x"), ("h2", None)])
    data = encode_batch([rec], base_offset=10, partition_leader_epoch=0)
    assert data.hex() == SPEC_C
    (b,) = list(iter_batches(data))
    assert (b.size, b.crc) == (79, 3035181082)
    assert list(b) == [rec._replace(offset=10)]


# --- spec §2.3 ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("magic", "hexdata", "crc", "ts", "ts_type"),
    [(0, SPEC_V0, 2275900082, -1, "NoTimestampType"), (1, SPEC_V1, 2397244346, T, "CreateTime")],
)
def test_spec_legacy_vectors(magic: int, hexdata: str, crc: int, ts: int, ts_type: str) -> None:
    assert encode_batch([Record(None, b"hello", T)], magic=magic).hex() == hexdata
    (e,) = list(iter_batches(bytes.fromhex(hexdata)))
    assert isinstance(e, LegacyEntry)
    assert (e.magic, e.crc, e.is_valid, e.size, e.offset, e.base_offset) == (
        magic, crc, True, len(hexdata) // 2, 0, 0)
    assert (e.timestamp_type, e.max_timestamp) == (ts_type, ts)
    assert list(e) == [Record(None, b"hello", ts, (), 0)]


# --- spec §3 ------------------------------------------------------------------------------------


def test_spec_codec_vectors() -> None:
    assert compression.compress("lz4", b"hello").hex() == (
        "04224d18" "60" "40" "82" "05000080" "68656c6c6f" "00000000")
    assert compression.compress("lz4", b"hello", magic=0)[6] == 0x1A  # KAFKA-3160 checksum
    assert compression.decompress("snappy", bytes.fromhex("051068656c6c6f")) == b"hello"
    assert compression.compress("snappy", b"hello")[:16] == (
        b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1))


# --- vectors.json -------------------------------------------------------------------------------


def _load_vectors() -> list[dict]:
    from tests.conftest import SHARED_FIXTURES

    p = SHARED_FIXTURES / "vectors" / "vectors.json"
    if not p.exists():
        return []
    return json.loads(p.read_text())


VECTORS = _load_vectors()


def _ids(kind: str) -> list[str]:
    return [v["id"] for v in VECTORS if v["unit"] == kind]


def _vector(vid: str) -> dict:
    shared_fixture_path("vectors", "vectors.json")
    return next(v for v in VECTORS if v["id"] == vid)


def _flatten_check(entries: list, exp: dict, vid: str) -> None:
    """Compare entries and the flattened records with ``exp`` (batches + records)."""
    assert len(entries) == len(exp["batches"]), vid
    got_records = []
    for i, (entry, eb) in enumerate(zip(entries, exp["batches"])):
        check_entry(entry, eb, f"{vid} entry {i}")
        got_records.extend(entry)
    assert len(got_records) == len(exp["records"]), vid
    for i, (rec, er) in enumerate(zip(got_records, exp["records"])):
        check_record(rec, er, f"{vid} record {i}")
        if "control" in er:
            ctl = entries[0].control_record()
            assert (ctl.version, ctl.type_id, ctl.type) == (
                er["control"]["version"], er["control"]["type"], er["control"]["type_name"])


@pytest.mark.parametrize("vid", _ids("record_set") or ["<absent>"])
def test_record_set_vector(vid: str) -> None:
    v = _vector(vid)
    data = bytes.fromhex(v["hex"])
    exp = v["expected"]
    entries = list(iter_batches(data, validate=False))
    _flatten_check(entries, exp, vid)
    consumed = sum(e.size for e in entries)
    assert len(data) - consumed == exp.get("partial_trailing_bytes", 0), vid
    if all(b["crc_valid"] for b in exp["batches"]):
        assert [e.position for e in iter_batches(data)] == [e.position for e in entries]
    else:
        with pytest.raises(CorruptRecordError) as ei:
            list(iter_batches(data))
        bad = next(b for b in exp["batches"] if not b["crc_valid"])
        assert ei.value.position == bad["position"]
        assert str(bad["crc"]) in str(ei.value)


# Messages from sarama that Kafka's DeepRecordsIterator rejects when iterated (the entry header
# itself still reads): zstd below magic 2, and a wrapper whose payload holds no inner message.
def _kafka_rejects(exp: dict) -> str | None:
    b = exp["batches"][0]
    if b["codec"] == "zstd" and b["magic"] < 2:
        return "zstd"
    if b.get("inner_count") == 0:
        return "no inner records"
    return None


@pytest.mark.parametrize("vid", _ids("message") or ["<absent>"])
def test_message_vector(vid: str) -> None:
    v = _vector(vid)
    msg = bytes.fromhex(v["hex"])
    # unit=message lacks the offset/size prefix; the expected offsets assume wrapper offset 0
    data = struct.pack(">qi", 0, len(msg)) + msg
    exp = v["expected"]
    (entry,) = list(iter_batches(data))
    eb = {k: val for k, val in exp["batches"][0].items() if k != "inner_count"}
    eb["position"] = 0
    eb["size"] = eb["size"] + 12  # the fixture's size counts the message only
    check_entry(entry, eb, vid)
    reason = _kafka_rejects(exp)
    if reason is not None:
        with pytest.raises(CorruptRecordError):
            list(entry)
        return
    if "inner_count" in exp["batches"][0]:
        assert entry.record_count == exp["batches"][0]["inner_count"]
    recs = list(entry)
    assert len(recs) == len(exp["records"])
    for i, (rec, er) in enumerate(zip(recs, exp["records"])):
        er = dict(er)
        er.setdefault("offset", 0)
        check_record(rec, er, f"{vid} record {i}")


@pytest.mark.parametrize("vid", _ids("xerial_snappy_stream") or ["<absent>"])
def test_xerial_snappy_stream_vector(vid: str) -> None:
    v = _vector(vid)
    out = compression.decompress("snappy", bytes.fromhex(v["hex"]))
    assert len(out) == v["expected"]["decompressed_length"]
    assert hashlib.sha256(out).hexdigest() == v["expected"]["decompressed_sha256"]


def test_expected_bytes_helper() -> None:
    assert expected_bytes({"hex": "00ff"}) == b"\x00\xff"
    assert expected_bytes({"utf8": "é"}) == "é".encode()
    assert expected_bytes(None) is None
