"""Decoding arbitrary bytes either succeeds or raises CorruptRecordError: never another
exception, never a hang, never unbounded memory (h11/hpack-style fuzz properties)."""

from __future__ import annotations

import struct
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalog import CorruptRecordError, Record, encode_batch, iter_batches
from kafkalog.records.batch import RecordBatch
from kafkalog.records.crc import crc32, crc32c
from kafkalog.records.legacy import LegacyEntry

T = 1700000000000
ATTRS = (
    "base_offset", "last_offset", "magic", "compression", "timestamp_type", "max_timestamp",
    "crc", "is_valid", "size", "position", "producer_id", "producer_epoch", "base_sequence",
    "partition_leader_epoch", "is_transactional", "is_control", "record_count", "attributes",
    "base_timestamp", "last_offset_delta", "delete_horizon_ms", "computed_crc", "last_sequence",
    "next_offset",
)


def exercise(data: bytes, validate: bool = False) -> int:
    """Touch every attribute and record of every entry; return how many records decoded."""
    n = 0
    try:
        for e in iter_batches(data, validate=validate, max_decompressed_bytes=1 << 20):
            assert isinstance(e, (RecordBatch, LegacyEntry))
            for a in ATTRS:
                try:
                    getattr(e, a)
                except CorruptRecordError:
                    pass
            for m in ("control_type", "control_type_id", "end_txn_marker"):
                try:
                    getattr(e, m)()
                except CorruptRecordError:
                    pass
            try:
                for r in e:
                    assert isinstance(r, Record)
                    assert r.key is None or isinstance(r.key, bytes)
                    assert r.value is None or isinstance(r.value, bytes)
                    assert isinstance(r.offset, int) and isinstance(r.timestamp, int)
                    assert -(1 << 63) <= r.offset < (1 << 63)
                    assert -(1 << 63) <= r.timestamp < (1 << 63)
                    assert all(isinstance(k, str) for k, _v in r.headers)
                    n += 1
            except CorruptRecordError as err:
                assert err.position == e.position
    except CorruptRecordError as err:
        assert err.position is not None
    return n


def sample_log() -> bytes:
    recs = [Record(b"k%d" % i, b"value-%d" % i * 3, T + i, [("h", b"x"), ("n", None)][: i % 3])
            for i in range(6)]
    legacy = [r._replace(headers=()) for r in recs]
    parts = [
        encode_batch(legacy[:2], magic=0),
        encode_batch(legacy[:3], magic=0, compression="snappy", base_offset=2),
        encode_batch(legacy[:2], magic=1, base_offset=5),
        encode_batch(legacy, magic=1, compression="lz4", base_offset=7),
        encode_batch(legacy, magic=1, compression="gzip", base_offset=13),
    ]
    base = 19
    for codec in ("none", "gzip", "snappy", "lz4", "zstd"):
        parts.append(encode_batch(recs, compression=codec, base_offset=base, producer_id=4,
                                  producer_epoch=1, base_sequence=0))
        base += len(recs)
    return b"".join(parts)


SAMPLE = sample_log()


def test_sample_log_reads_whole() -> None:
    assert exercise(SAMPLE, validate=True) == 2 + 3 + 2 + 6 + 6 + 5 * 6


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_arbitrary_bytes(data: bytes) -> None:
    exercise(data)


@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=5, max_size=300), st.integers(14, 400), st.integers(0, 2),
       st.integers(-(1 << 31), (1 << 31) - 1))
def test_arbitrary_bodies_behind_plausible_headers(body: bytes, size: int, magic: int,
                                                   count: int) -> None:
    """Random bytes behind a well-formed entry header (so they reach the record decoders)."""
    if magic == 2:
        head = struct.pack(">qiib", 0, size, 0, 2)
        rest = bytearray((body * 100)[: max(size - 5, 0)].ljust(max(size - 5, 0), b"\x00"))
        if len(rest) >= 44:
            struct.pack_into(">i", rest, 40, count)
            struct.pack_into(">I", rest, 0, crc32c(bytes(rest[4:])))
        data = head + bytes(rest)
    else:
        rest = bytearray(bytes((magic,)) + (body * 100)[: size - 5])
        data = struct.pack(">qi", 3, size) + struct.pack(">I", crc32(bytes(rest))) + bytes(rest)
    exercise(data, validate=True)
    exercise(data, validate=False)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_bit_flipped_log(data: st.DataObject) -> None:
    buf = bytearray(SAMPLE)
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(buf) - 1))
        buf[i] ^= 1 << data.draw(st.integers(0, 7))
    cut = data.draw(st.integers(0, len(buf)))
    exercise(bytes(buf[:cut]))
    exercise(bytes(buf[:cut]), validate=True)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_bit_flipped_records_with_fixed_crc(data: st.DataObject) -> None:
    """Corrupt a batch's body and then fix its CRC: the record decoder must cope alone."""
    codec = data.draw(st.sampled_from(["none", "gzip", "snappy", "lz4", "zstd"]))
    recs = [Record(b"k%d" % i, b"v" * i, T + i, [("h", b"x")]) for i in range(5)]
    buf = bytearray(encode_batch(recs, compression=codec))
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(23, len(buf) - 1))
        buf[i] ^= 1 << data.draw(st.integers(0, 7))
    struct.pack_into(">I", buf, 17, crc32c(bytes(buf[21:])))
    exercise(bytes(buf), validate=True)


def test_huge_record_count_fails_fast() -> None:
    data = bytearray(encode_batch([Record(b"k", b"v", T)]))
    struct.pack_into(">i", data, 57, 2**31 - 1)
    struct.pack_into(">I", data, 17, crc32c(bytes(data[21:])))
    start = time.perf_counter()
    (b,) = list(iter_batches(bytes(data)))
    try:
        list(b)
        raise AssertionError("expected CorruptRecordError")
    except CorruptRecordError as e:
        assert "end of data" in str(e)
    assert time.perf_counter() - start < 5


def test_every_truncation_of_every_entry() -> None:
    positions = [e.position for e in iter_batches(SAMPLE)]
    for cut in range(len(SAMPLE) + 1):
        whole = [p for p in positions if p < cut]
        got = [e.position for e in iter_batches(SAMPLE[:cut])]
        # the entries that fit completely, never an error
        assert got == [p for p, q in zip(whole, positions[1:] + [len(SAMPLE)]) if q <= cut]
