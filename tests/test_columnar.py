"""kafkalog.records.columnar: the columnar fast path agrees with the object path (iter_batches)
on peer-built and real Kafka data, round-trips through encode_columns, and rejects corrupt input
with CorruptRecordError only."""

from __future__ import annotations

import mmap
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalog import CorruptRecordError, KafkaLogError, Record
from kafkalog.records.batch import increment_sequence, iter_batches
from kafkalog.records.builder import encode_batch
from kafkalog.records.columnar import (
    COLUMN_NAMES,
    RecordColumns,
    arrow_schema,
    decode_columns,
    decode_table,
    encode_columns,
)
from tests.conftest import SHARED_FIXTURES, shared_fixture_path

# kafka-python's protocol package uses importlib.resources.read_text at import time
pytestmark = pytest.mark.filterwarnings("ignore:.* is deprecated. Use files:DeprecationWarning")

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
KAFKA_PYTHON_CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
TS_CODES = {"CreateTime": 0, "LogAppendTime": 1, "NoTimestampType": -1}


def expected_rows(source, *, skip_control=True, start_offset=None, end_offset=None):
    """What the object path says, in decode_table's row shape."""
    lo = -(2**63) if start_offset is None else start_offset
    hi = 2**63 if end_offset is None else end_offset
    rows = []
    # skipped control batches are not read, so not CRC-checked, by decode_columns either
    for batch in iter_batches(source, validate=False):
        if skip_control and getattr(batch, "is_control", False):
            continue
        batch.ensure_valid()
        for r in batch:
            if lo <= r.offset < hi:
                rows.append({
                    "key": r.key, "value": r.value, "offset": r.offset,
                    "timestamp": r.timestamp, "timestamp_type": TS_CODES[batch.timestamp_type],
                    "headers": [{"key": k, "value": v} for k, v in r.headers],
                })
    return rows


def _records(n: int, seed: int = 1) -> list[tuple]:
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        key = rnd.choice([None, b"", b"k%d" % i, bytes(rnd.randrange(256) for _ in range(20))])
        value = rnd.choice([None, b"", b"v" * rnd.randrange(300)])
        headers = rnd.choice([[], [("h", b"x")], [("a", None), ("\u00e9", b""), ("a", b"2")]])
        out.append((key, value, 1700000000000 + rnd.randrange(-1000, 1000), headers))
    return out


# imported at collection: kafka-python's first import warns (importlib.resources.read_text),
# which the suite's filterwarnings turns into an error inside a test run on its own
_kafka_default_records = pytest.importorskip("kafka.record.default_records")


def kafka_python_batch(records, codec: str, base_offset: int = 0) -> bytes:
    b = _kafka_default_records.DefaultRecordBatchBuilder(
        magic=2, compression_type=KAFKA_PYTHON_CODECS[codec], is_transactional=False,
        producer_id=-1, producer_epoch=-1, base_sequence=-1, batch_size=1 << 30)
    for i, (key, value, ts, headers) in enumerate(records):
        b.append(i, timestamp=ts, key=key, value=value, headers=headers)
    buf = b.build()
    buf[0:8] = base_offset.to_bytes(8, "big")  # baseOffset is outside the CRC
    return bytes(buf)


def aiokafka_batch(records, codec: str, base_offset: int = 0) -> bytes:
    from aiokafka.record.default_records import DefaultRecordBatchBuilder

    b = DefaultRecordBatchBuilder(magic=2, compression_type=KAFKA_PYTHON_CODECS[codec],
                                  is_transactional=False, producer_id=-1, producer_epoch=-1,
                                  base_sequence=-1, batch_size=1 << 30)
    for i, (key, value, ts, headers) in enumerate(records):
        b.append(i, timestamp=ts, key=key, value=value, headers=headers)
    buf = bytearray(b.build())
    buf[0:8] = base_offset.to_bytes(8, "big")
    return bytes(buf)


# ---------------------------------------------------------------------------------------------
# decode agrees with the object path


@pytest.mark.parametrize("builder", [kafka_python_batch, aiokafka_batch])
@pytest.mark.parametrize("codec", CODECS)
def test_decode_matches_object_path_peer_batches(builder, codec) -> None:
    data = b"".join(builder(_records(n, seed=n), codec, base) for n, base in
                    [(1, 0), (50, 1), (7, 51), (0, 58), (120, 58)])
    table = decode_table(data)
    assert table.schema == arrow_schema()
    assert table.to_pylist() == expected_rows(data)
    assert len(table) == 178


def test_columns_accessors_and_mixed_codecs() -> None:
    recs = [Record(b"k", b"v", 5, [("h", None)]), Record(None, b"", 6), Record(b"", None, -1)]
    data = (encode_batch(recs, base_offset=3, compression="lz4")
            + encode_batch(recs[:1], base_offset=6, compression="none")
            + encode_batch(recs[1:], base_offset=7, compression="zstd",
                           timestamp_type="log_append", log_append_time=99))
    cols = decode_columns(data)
    assert isinstance(cols, RecordColumns) and len(cols) == 6
    assert cols.offsets.tolist() == [3, 4, 5, 6, 7, 8]
    assert cols.timestamps.tolist() == [5, 6, -1, 5, 99, 99]
    assert cols.timestamp_types.tolist() == [0, 0, 0, 0, 1, 1]
    assert [cols.key(i) for i in range(6)] == [b"k", None, b"", b"k", None, b""]
    assert [cols.value(i) for i in range(6)] == [b"v", b"", None, b"v", b"", None]
    assert cols.headers(0) == [("h", None)] and cols.headers(1) == []
    assert cols.key_offsets.dtype == np.int32
    assert decode_table(data).to_pylist() == expected_rows(data)


def test_arrow_columns_subset_and_zero_copy() -> None:
    data = encode_batch([Record(b"key", b"value", 1)] * 3)
    cols = decode_columns(data)
    t = cols.to_arrow(["value", "offset"])
    assert t.column_names == ["value", "offset"]
    # the Arrow value buffer is the numpy buffer itself
    assert t.column("value").chunk(0).buffers()[2].address == cols.value_data.ctypes.data
    assert decode_table(data, columns=["offset"]).column("offset").to_pylist() == [0, 1, 2]
    with pytest.raises(ValueError):
        cols.to_arrow(["nope"])
    assert RecordColumns.empty().to_arrow().schema == arrow_schema()
    assert list(COLUMN_NAMES) == arrow_schema().names


def test_invalid_utf8_header_key_is_replaced_like_java() -> None:
    from kafka.record.default_records import DefaultRecordBatchBuilder

    b = DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, 1 << 20)
    b.append(0, timestamp=1, key=None, value=b"v", headers=[("ok", b"1")])
    data = bytearray(b.build())
    # patch the header key "ok" to invalid UTF-8 and fix the CRC
    i = data.index(b"ok")
    data[i:i + 2] = b"\xff\xfe"
    from kafkalog.records.crc import crc32c

    data[17:21] = crc32c(bytes(data[21:])).to_bytes(4, "big")
    table = decode_table(bytes(data))
    assert table.column("headers").to_pylist() == [[{"key": "\ufffd\ufffd", "value": b"1"}]]
    assert table.to_pylist() == expected_rows(bytes(data))


@pytest.mark.parametrize("kind", ["bytes", "bytearray", "memoryview", "numpy", "path", "mmap"])
def test_source_kinds(kind, tmp_path: Path) -> None:
    data = encode_batch([Record(b"a", b"1", 1), Record(b"b", None, 2)], base_offset=5)
    path = tmp_path / "00000000000000000005.log"
    path.write_bytes(data)
    if kind == "path":
        source = path
    elif kind == "mmap":
        f = open(path, "rb")  # noqa: SIM115 - closed below
        source = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        f.close()
    else:
        source = {"bytes": data, "bytearray": bytearray(data), "memoryview": memoryview(data),
                  "numpy": np.frombuffer(data, np.uint8)}[kind]
    assert decode_table(source).to_pylist() == expected_rows(data)
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    assert len(decode_columns(empty)) == 0


def test_offset_range_filter_and_byte_range() -> None:
    data = b"".join(encode_batch([Record(b"k", b"%d" % i, i) for i in range(10)],
                                 base_offset=b * 10, compression=c)
                    for b, c in enumerate(["none", "gzip", "none", "zstd"]))
    for lo, hi in [(None, None), (0, 40), (5, 15), (10, 20), (39, None), (None, 1), (17, 17),
                   (100, 200), (-5, 3)]:
        got = decode_table(data, start_offset=lo, end_offset=hi).to_pylist()
        assert got == expected_rows(data, start_offset=lo, end_offset=hi), (lo, hi)
    # skip whole batches outside the range without reading them: a corrupt batch outside the
    # range does not matter
    first = encode_batch([Record(b"k", b"v", 1)] * 10, base_offset=0)
    bad = bytearray(first)
    bad[-1] ^= 0xFF
    tail = encode_batch([Record(b"k", b"v", 1)] * 10, base_offset=10)
    assert decode_columns(bytes(bad) + tail, start_offset=10).offsets.tolist() == list(
        range(10, 20))
    with pytest.raises(CorruptRecordError):
        decode_columns(bytes(bad) + tail)
    # byte range
    n = len(first)
    assert decode_columns(first + tail, start=n).offsets.tolist() == list(range(10, 20))
    assert decode_columns(first + tail, end=n).offsets.tolist() == list(range(10))


def test_control_batches_skipped_by_default() -> None:
    from kafkalog.records.builder import encode_end_txn_marker

    data = (encode_batch([Record(b"k", b"v", 1)], base_offset=0, producer_id=7,
                         producer_epoch=0, transactional=True)
            + encode_end_txn_marker(commit=True, producer_id=7, producer_epoch=0,
                                    base_offset=1))
    assert decode_columns(data).offsets.tolist() == [0]
    assert decode_columns(data, skip_control=False).offsets.tolist() == [0, 1]
    assert decode_table(data, skip_control=False).to_pylist() == expected_rows(
        data, skip_control=False)


def test_legacy_entries_merge_in_file_order() -> None:
    v0 = encode_batch([Record(None, b"a")], magic=0, base_offset=0)
    v1 = encode_batch([Record(b"k", b"b", 10), Record(None, b"c", 11)], magic=1,
                      base_offset=1, compression="gzip")
    v2 = encode_batch([Record(b"k", b"d", 12, [("h", b"1")])], base_offset=3)
    v1b = encode_batch([Record(b"k", b"e", 13)], magic=1, base_offset=4)
    data = v0 + v1 + v2 + v1b + v2.replace(b"\x00" * 7 + b"\x03", b"\x00" * 7 + b"\x05", 1)
    table = decode_table(data)
    assert table.column("offset").to_pylist() == [0, 1, 2, 3, 4, 5]
    assert table.column("timestamp_type").to_pylist() == [-1, 0, 0, 0, 0, 0]
    assert table.to_pylist() == expected_rows(data)
    assert decode_table(data, start_offset=2, end_offset=5).to_pylist() == expected_rows(
        data, start_offset=2, end_offset=5)


# ---------------------------------------------------------------------------------------------
# shared fixtures: peer-built segments and real broker logs


@pytest.mark.parametrize("peer", ["kafka-python", "aiokafka"])
def test_peer_built_segments(peer) -> None:
    path = shared_fixture_path("peer-built", peer, "00000000000000000000.log")
    for skip in (True, False):
        assert decode_table(path, skip_control=skip).to_pylist() == expected_rows(
            path, skip_control=skip)


def _real_logs() -> list[Path]:
    root = SHARED_FIXTURES / "kafka-real"
    return sorted(root.rglob("*.log")) if root.is_dir() else []


@pytest.mark.parametrize("path", _real_logs(), ids=lambda p: str(p.relative_to(SHARED_FIXTURES)))
def test_kafka_real_logs(path: Path) -> None:
    shared_fixture_path(str(path.relative_to(SHARED_FIXTURES)))
    for skip in (True, False):
        assert decode_table(path, skip_control=skip).to_pylist() == expected_rows(
            path, skip_control=skip)


# ---------------------------------------------------------------------------------------------
# corrupt input


def test_corruption_errors_name_the_position() -> None:
    a = encode_batch([Record(b"k", b"v", 1)] * 3, base_offset=0)
    b = encode_batch([Record(b"k", b"v", 1)] * 3, base_offset=3)
    bad = bytearray(a + b)
    bad[len(a) + 70] ^= 0x10
    with pytest.raises(CorruptRecordError) as e:
        decode_columns(bytes(bad))
    assert e.value.position == len(a) and e.value.offset == 3
    assert "CRC" in str(e.value) and "stored" in str(e.value)
    # without CRC validation the record structure is still checked (record length byte)
    bad = bytearray(a)
    bad[61] = 0x7F
    with pytest.raises(CorruptRecordError) as e:
        decode_columns(bytes(bad), validate=False)
    assert e.value.position == 61
    with pytest.raises(CorruptRecordError) as e:
        decode_columns(a + b"\x00" * 40)
    assert e.value.position == len(a)
    # a records count no records area can hold: no huge allocation, a clear error
    bad = bytearray(a)
    bad[57:61] = (2**31 - 1).to_bytes(4, "big")
    with pytest.raises(CorruptRecordError, match="recordsCount"):
        decode_columns(bytes(bad), validate=False)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_bit_flips_raise_only_corrupt_record_error(data) -> None:
    codec = data.draw(st.sampled_from(CODECS))
    recs = _records(data.draw(st.integers(1, 8)), seed=data.draw(st.integers(0, 99)))
    buf = bytearray(encode_batch([Record(*r) for r in recs], compression=codec)
                    + encode_batch([Record(*r) for r in recs], base_offset=len(recs)))
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(buf) - 1))
        buf[i] ^= 1 << data.draw(st.integers(0, 7))
    cut = data.draw(st.integers(0, len(buf)))
    validate = data.draw(st.booleans())
    try:
        table = decode_table(bytes(buf[:cut]), validate=validate)
    except CorruptRecordError:
        return
    except KafkaLogError as e:  # pragma: no cover - the assertion explains
        raise AssertionError(f"expected CorruptRecordError, got {type(e).__name__}") from e
    assert isinstance(table, pa.Table)
    if validate:
        # whatever decodes under validation agrees with the object path
        assert table.to_pylist() == expected_rows(bytes(buf[:cut]))


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_raise_only_corrupt_record_error(blob) -> None:
    try:
        decode_columns(blob, validate=False)
    except CorruptRecordError:
        pass


# ---------------------------------------------------------------------------------------------
# encode_columns


def _chunks(records, per_batch):
    return [records[i:i + per_batch] for i in range(0, len(records), per_batch)]


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("per_batch", [1, 7, 1000])
def test_encode_columns_identical_to_encode_batch(codec, per_batch) -> None:
    recs = [Record(*r) for r in _records(40, seed=per_batch)]
    cols = RecordColumns.from_records(recs)
    kwargs = dict(producer_id=42, producer_epoch=3, partition_leader_epoch=5,
                  transactional=True)
    got = encode_columns(cols, base_offset=1000, records_per_batch=per_batch,
                         compression=codec, base_sequence=2**31 - 10, **kwargs)
    expected = b"".join(
        encode_batch(chunk, base_offset=1000 + i * per_batch, compression=codec,
                     base_sequence=increment_sequence(2**31 - 10, i * per_batch), **kwargs)
        for i, chunk in enumerate(_chunks(recs, per_batch)))
    assert got == expected
    assert decode_table(got).to_pylist() == expected_rows(expected)


def test_encode_columns_log_append_time() -> None:
    recs = [Record(*r) for r in _records(5)]
    got = encode_columns(RecordColumns.from_records(recs), timestamp_type="log_append",
                         log_append_time=12345, records_per_batch=2)
    expected = b"".join(encode_batch(c, base_offset=2 * i, timestamp_type="log_append",
                                     log_append_time=12345)
                        for i, c in enumerate(_chunks(recs, 2)))
    assert got == expected
    assert set(decode_columns(got).timestamps.tolist()) == {12345}


def test_encode_columns_identical_to_kafka_python_uncompressed() -> None:
    recs = _records(30, seed=3)
    expected = kafka_python_batch(recs, "none")
    table = decode_table(expected)
    assert encode_columns(table, records_per_batch=30, partition_leader_epoch=0) == expected
    assert encode_columns(decode_columns(expected), records_per_batch=30,
                          partition_leader_epoch=0) == expected


@pytest.mark.parametrize("codec", CODECS)
def test_round_trip_peer_segment_columns(codec) -> None:
    path = shared_fixture_path("peer-built", "kafka-python", "00000000000000000000.log")
    cols = decode_columns(path)
    again = decode_columns(encode_columns(cols, compression=codec, records_per_batch=333))
    a, b = cols.to_arrow(), again.to_arrow()
    assert a.drop_columns(["offset", "timestamp_type"]) == b.drop_columns(
        ["offset", "timestamp_type"])
    assert again.offsets.tolist() == list(range(len(cols)))


def test_encode_from_arrow_variants() -> None:
    keys = pa.array(["a", None, "ccc"], pa.string())
    values = pa.array([b"1", b"", None], pa.large_binary())
    ts = pa.array([1_000_000, None, 3_000_999], pa.timestamp("us"))
    header_type = pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))
    headers = pa.array([[{"key": "h", "value": b"x"}], None,
                        [{"key": "a", "value": None}, {"key": "b", "value": b""}]], header_type)
    table = pa.table({"key": keys, "value": values, "timestamp": ts, "headers": headers})
    expected = encode_batch([Record(b"a", b"1", 1000, [("h", b"x")]), Record(None, b"", -1),
                             Record(b"ccc", None, 3000, [("a", None), ("b", b"")])])
    assert encode_columns(table) == expected
    assert encode_columns(table.to_batches()[0]) == expected
    # several chunks, sliced arrays (non-zero Arrow offsets)
    chunked = pa.concat_tables([table.slice(0, 1), table.slice(1, 2)])
    assert encode_columns(chunked) == expected
    assert encode_columns(table.slice(1, 2)) == encode_batch(
        [Record(None, b"", -1), Record(b"ccc", None, 3000, [("a", None), ("b", b"")])])
    # no timestamp column -> -1; no headers column -> none
    assert encode_columns(table.select(["key", "value"])) == encode_batch(
        [Record(b"a", b"1"), Record(None, b""), Record(b"ccc", None)])
    assert encode_columns(RecordColumns.empty()) == b""
    with pytest.raises(ValueError, match="value"):
        encode_columns(table.select(["key"]))
    with pytest.raises(TypeError):
        encode_columns(pa.table({"key": pa.array([1]), "value": pa.array([b"x"])}))
    with pytest.raises(ValueError):
        encode_columns(table, records_per_batch=0)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.none(), st.binary(max_size=8)),
                          st.one_of(st.none(), st.binary(max_size=8)),
                          st.integers(-(2**40), 2**40),
                          st.lists(st.tuples(st.text(max_size=3),
                                             st.one_of(st.none(), st.binary(max_size=3))),
                                   max_size=2)), max_size=12),
       st.integers(1, 5), st.sampled_from(CODECS))
def test_encode_decode_round_trip(rows, per_batch, codec) -> None:
    recs = [Record(*r) for r in rows]
    cols = RecordColumns.from_records(recs)
    data = encode_columns(cols, records_per_batch=per_batch, compression=codec, base_offset=9)
    assert data == b"".join(encode_batch(c, base_offset=9 + i * per_batch, compression=codec)
                            for i, c in enumerate(_chunks(recs, per_batch)))
    back = decode_columns(data)
    assert back.to_arrow().drop_columns(["offset"]) == cols.to_arrow().drop_columns(["offset"])
    assert back.offsets.tolist() == [9 + i for i in range(len(recs))]


def test_decompression_bound_and_bad_codec() -> None:
    from kafkalog import RecordTooLargeError

    data = encode_batch([Record(b"k", b"v" * 5000, 1)], compression="gzip", base_offset=4)
    with pytest.raises(RecordTooLargeError) as e:
        decode_columns(data, max_decompressed_bytes=1000)
    assert e.value.position == 0 and e.value.offset == 4
    assert len(decode_columns(data, max_decompressed_bytes=10_000)) == 1
    bad = bytearray(data)
    bad[22] = (bad[22] & ~0x07) | 6  # codec id 6 does not exist
    with pytest.raises(CorruptRecordError, match="codec"):
        decode_columns(bytes(bad), validate=False)
    with pytest.raises(CorruptRecordError, match="CRC"):
        decode_columns(bytes(bad))
    # garbage in a compressed records area, CRC made valid: still CorruptRecordError
    from kafkalog.records.crc import crc32c

    bad = bytearray(data)
    bad[70:80] = b"\xff" * 10
    bad[17:21] = crc32c(bytes(bad[21:])).to_bytes(4, "big")
    with pytest.raises(CorruptRecordError) as e:
        decode_columns(bytes(bad))
    assert e.value.position == 0


def test_offset_bounds_at_the_int64_edges() -> None:
    data = encode_batch([Record(b"k", b"v", 1)], base_offset=2**63 - 1)
    assert decode_columns(data).offsets.tolist() == [2**63 - 1]
    assert len(decode_columns(data, end_offset=2**63 - 1)) == 0
    assert len(decode_columns(data, start_offset=2**63 - 1, end_offset=2**64)) == 1
    assert len(decode_columns(data, start_offset=5, end_offset=5)) == 0


def test_encode_columns_when_null_items_rewind_offsets() -> None:
    # Arrow forbids it, but a hand-made RecordColumns may let a null item move offsets back,
    # so valid items share bytes and their lengths sum past the data buffer's size
    recs = [Record(b"k", b"x" * 100, 1), Record(b"k", None, 1), Record(b"k", b"x" * 100, 1)]
    cols = RecordColumns.from_records(recs)
    cols.value_data = np.frombuffer(b"x" * 100, np.uint8)
    cols.value_offsets = np.array([0, 100, 0, 100], np.int64)
    assert encode_columns(cols) == encode_batch(recs)
    # offsets outside the data buffer are refused, not read
    cols.value_offsets = np.array([0, 100, 100, 300], np.int64)
    with pytest.raises(ValueError, match="offsets"):
        encode_columns(cols)
    cols.value_offsets = np.array([0, 100], np.int64)
    with pytest.raises(ValueError, match="shape"):
        encode_columns(cols)


def _vector_bytes(field):
    if field is None:
        return None
    return field["utf8"].encode() if "utf8" in field else bytes.fromhex(field["hex"])


def _record_set_vectors() -> list[dict]:
    import json

    path = SHARED_FIXTURES / "vectors" / "vectors.json"
    if not path.is_file():
        return []
    return [v for v in json.loads(path.read_text()) if v["unit"] == "record_set"]


@pytest.mark.parametrize("vector", _record_set_vectors(), ids=lambda v: v["id"])
def test_client_vectors(vector) -> None:
    shared_fixture_path("vectors", "vectors.json")
    data = bytes.fromhex(vector["hex"])
    exp = vector["expected"]
    validate = all(b.get("crc_valid", True) for b in exp["batches"])
    table = decode_table(data, validate=validate, skip_control=False)
    got = [(r["offset"], r["timestamp"], r["key"], r["value"],
            [(h["key"], h["value"]) for h in r["headers"]]) for r in table.to_pylist()]
    want = [(r["offset"], -1 if r["timestamp"] is None else r["timestamp"],
             _vector_bytes(r["key"]), _vector_bytes(r["value"]),
             [(k, _vector_bytes(v)) for k, v in r.get("headers", [])]) for r in exp["records"]]
    assert got == want
    if not validate:
        with pytest.raises(CorruptRecordError, match="(?i)crc"):
            decode_table(data, skip_control=False)


@pytest.mark.parametrize("codec", ["none", "zstd"])
def test_encode_columns_as_numpy(codec, tmp_path: Path) -> None:
    cols = RecordColumns.from_records([Record(*r) for r in _records(20)])
    arr = encode_columns(cols, compression=codec, records_per_batch=7, as_numpy=True)
    assert isinstance(arr, np.ndarray) and arr.dtype == np.uint8 and not arr.flags.writeable
    assert arr.tobytes() == encode_columns(cols, compression=codec, records_per_batch=7)
    path = tmp_path / "00000000000000000000.log"
    with open(path, "wb") as f:
        f.write(arr)
    assert decode_table(path).to_pylist() == expected_rows(arr.tobytes())
    assert encode_columns(RecordColumns.empty(), as_numpy=True).shape == (0,)
