"""Parallel decode (``decode_columns`` in parts on threads) against the serial decode: the same
columns for any batches, codecs, headers, nulls and offset filters, and the same first error
for damaged input; parallel compression in ``encode_columns``: the serial bytes. The size
threshold is lowered so that small inputs take the parallel path."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkalog import Record, encode_batch
from kafkalog.errors import KafkaLogError
from kafkalog.records import columnar, compression

FIELDS = ("offsets", "timestamps", "timestamp_types", "key_data", "key_offsets", "key_valid",
          "value_data", "value_offsets", "value_valid", "header_offsets", "header_key_data",
          "header_key_offsets", "header_value_data", "header_value_offsets",
          "header_value_valid")


@pytest.fixture(autouse=True)
def _parallel_for_small_inputs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(columnar, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(columnar, "PARALLEL_MIN_BATCHES", 2)
    # tiny decodes rarely overlap: no backing off to serial here
    monkeypatch.setattr(columnar, "PARALLEL_BACKOFF_SECONDS", 0.0)
    monkeypatch.setattr(columnar, "_serial_until", 0.0)
    monkeypatch.delenv("KAFKALOG_DECODE_THREADS", raising=False)


def _decode(data: bytes, threads: int, monkeypatch: pytest.MonkeyPatch, **kw: object) -> object:
    monkeypatch.setattr(columnar, "decode_workers", lambda: threads)
    # in parts however small the compressed batches (else those go to one thread)
    monkeypatch.setattr(columnar, "PARALLEL_MIN_COMPRESSED_BATCH", 0)
    try:
        return columnar.decode_columns(data, **kw)
    except KafkaLogError as e:
        return (type(e), str(e))


def _same(a: object, b: object) -> None:
    if isinstance(a, tuple) or isinstance(b, tuple):
        assert a == b
        return
    for f in FIELDS:
        x, y = getattr(a, f), getattr(b, f)
        assert x.shape == y.shape and np.array_equal(x, y), f


RECORD = st.builds(
    Record,
    st.one_of(st.none(), st.binary(max_size=20)),
    st.one_of(st.none(), st.binary(max_size=300)),
    st.integers(-1, 2**41),
    st.lists(st.tuples(st.text(max_size=5), st.one_of(st.none(), st.binary(max_size=8))),
             max_size=3),
    offset=st.none(),
)
BATCHES = st.lists(st.tuples(st.lists(RECORD, min_size=1, max_size=12),
                             st.sampled_from(["none", "none", "lz4", "zstd", "gzip", "snappy"]),
                             st.integers(0, 3)),
                   min_size=1, max_size=14)


def _segment(batches: list) -> tuple[bytes, int]:
    out, offset = [], 0
    for records, codec, gap in batches:
        out.append(encode_batch(records, base_offset=offset, compression=codec))
        offset += len(records) + gap
    return b"".join(out), offset


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                    HealthCheck.function_scoped_fixture])
@given(BATCHES, st.integers(2, 5), st.data())
def test_parallel_equals_serial(monkeypatch: pytest.MonkeyPatch, batches: list, threads: int,
                                data: st.DataObject) -> None:
    buf, end = _segment(batches)
    lo = data.draw(st.one_of(st.none(), st.integers(0, end)))
    hi = data.draw(st.one_of(st.none(), st.integers(0, end + 1)))
    serial = _decode(buf, 1, monkeypatch, start_offset=lo, end_offset=hi)
    _same(_decode(buf, threads, monkeypatch, start_offset=lo, end_offset=hi), serial)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                    HealthCheck.function_scoped_fixture])
@given(BATCHES, st.data())
def test_damaged_input_raises_the_serial_first_error(monkeypatch: pytest.MonkeyPatch,
                                                     batches: list, data: st.DataObject) -> None:
    buf, _ = _segment(batches)
    damaged = bytearray(buf)
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(damaged) - 1))
        damaged[i] ^= data.draw(st.integers(1, 255))
    validate = data.draw(st.booleans())
    serial = _decode(bytes(damaged), 1, monkeypatch, validate=validate)
    _same(_decode(bytes(damaged), 3, monkeypatch, validate=validate), serial)


def test_backoff_after_parts_that_did_not_overlap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(columnar, "PARALLEL_BACKOFF_SECONDS", 60.0)
    columnar._note_concurrency(cpu=1.8, wall=2.0)  # side by side: stay parallel
    assert columnar._serial_until == 0.0
    columnar._note_concurrency(cpu=1.0, wall=2.0)  # one core between them
    assert columnar._serial_until > columnar.time.monotonic() + 50
    calls = []
    monkeypatch.setattr(columnar, "_decode_v2_parts", lambda *a: calls.append(a))
    buf, _ = _segment([([Record(b"k", b"v" * 50, 1)] * 5, "none", 0)] * 6)
    _decode(buf, 2, monkeypatch)
    assert calls == []  # serial while backing off


def test_backoff_judges_the_parts_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The backoff compares the parts' CPU time with their own wall time: the work between
    and after them, on one thread by design (here a slow allocation), does not count. (Counted
    in, it made parallel decodes of 64 MiB chunks look serial, and every later one serial.)"""
    import time

    seen = []
    monkeypatch.setattr(columnar, "_note_concurrency", lambda cpu, wall: seen.append(wall))
    real_allocate = columnar._allocate

    def slow_allocate(r: object) -> tuple:
        time.sleep(0.3)
        return real_allocate(r)

    monkeypatch.setattr(columnar, "_allocate", slow_allocate)
    buf, _ = _segment([([Record(b"k", b"v" * 50, 1)] * 5, "none", 0)] * 6)
    t0 = time.perf_counter()
    _decode(buf, 2, monkeypatch)
    elapsed = time.perf_counter() - t0
    assert len(seen) == 1 and elapsed >= 0.3
    assert seen[0] < 0.3  # the four part-runs of a tiny decode, without the 0.3 s between


def test_parallel_path_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """Guard for the tests above: the parts decode runs (and returns) for such inputs."""
    calls = []
    real = columnar._decode_v2_parts

    def spy(*args: object, **kw: object) -> object:
        calls.append(args[-1])
        return real(*args, **kw)

    monkeypatch.setattr(columnar, "_decode_v2_parts", spy)
    buf, _ = _segment([([Record(b"k", b"v" * 50, 1)] * 5, "lz4", 0)] * 6)
    _same(_decode(buf, 2, monkeypatch), _decode(buf, 1, monkeypatch))
    assert calls == [2]


def test_small_compressed_batches_decode_in_one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """Compressed batches under PARALLEL_MIN_COMPRESSED_BATCH on average: one thread (their
    codec calls hold the GIL); the same bytes uncompressed: in parts."""
    calls = []
    real = columnar._decode_v2_parts
    monkeypatch.setattr(columnar, "_decode_v2_parts",
                        lambda *a, **kw: (calls.append(a[-1]), real(*a, **kw))[1])
    monkeypatch.setattr(columnar, "decode_workers", lambda: 2)
    monkeypatch.setattr(columnar, "PARALLEL_MIN_BYTES", 0)
    small, _ = _segment([([Record(b"k", b"v" * 50, 1)] * 5, "lz4", 0)] * 6)
    serial = columnar.decode_columns(small)
    assert calls == []
    monkeypatch.setattr(columnar, "PARALLEL_MIN_COMPRESSED_BATCH", 0)
    _same(columnar.decode_columns(small), serial)
    assert calls == [2]
    plain, _ = _segment([([Record(b"k", b"v" * 50, 1)] * 5, "none", 0)] * 6)
    monkeypatch.setattr(columnar, "PARALLEL_MIN_COMPRESSED_BATCH", 4 << 10)
    columnar.decode_columns(plain)
    assert calls == [2, 2]


@pytest.mark.skipif(columnar._madvise is None, reason="no madvise (not Linux)")
def test_release_tail_frees_only_past_the_used_bytes() -> None:
    """The pages a parallel decode's later parts left behind are given back; the bytes the
    returned slices cover are untouched (a released private page reads as zeros)."""
    import mmap

    buf = np.ones(8 << 20, np.uint8)
    used = 3 * mmap.PAGESIZE + 5
    columnar._release_tail(buf, used)
    first_released = -(buf.ctypes.data + used) % mmap.PAGESIZE + used
    end_released = buf.nbytes - (buf.ctypes.data + buf.nbytes) % mmap.PAGESIZE
    assert buf[:first_released].all()  # (whole pages only: the used page stays)
    assert not buf[first_released:end_released].any()
    assert buf[end_released:].all()
    small = np.ones(1 << 16, np.uint8)  # below _RELEASE_MIN_BYTES: left alone
    columnar._release_tail(small, 10)
    assert small.all()


def test_parallel_decode_releases_what_the_parts_left_behind(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The first part moves its bytes up against the second part's (its own thread, while the
    other parts decode): the pages below the moved bytes and past the last part's end are
    released, exactly outside the returned key and value columns, whose data is intact."""
    released = []
    real = columnar._release_range
    monkeypatch.setattr(columnar, "decode_workers", lambda: 2)
    monkeypatch.setattr(columnar, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(columnar, "_serial_until", 0.0)
    monkeypatch.setattr(columnar, "_release_range",
                        lambda buf, lo, hi: (released.append((buf, lo, hi)), real(buf, lo, hi)))
    batches = b"".join(encode_batch([Record(b"k%d" % i, b"v" * 3000, 1) for i in range(50)],
                                    base_offset=50 * j) for j in range(16))
    cols = columnar.decode_columns(batches)
    assert cols.record_count == 800
    ranges = set()
    for column in (cols.key_data, cols.value_data):
        (buf,) = {id(b): b for b, _, _ in released
                  if b.ctypes.data <= column.ctypes.data < b.ctypes.data + b.nbytes}.values()
        start = column.ctypes.data - buf.ctypes.data
        assert start > 0  # the first part's bytes were moved up
        ranges |= {(id(buf), 0, start), (id(buf), start + column.nbytes, buf.nbytes)}
    assert {(id(b), lo, hi) for b, lo, hi in released} == ranges
    assert cols.key(0) == b"k0" and cols.key(799) == b"k49"
    assert bytes(cols.value_data[:3000]) == b"v" * 3000 and cols.value(799) == b"v" * 3000
    monkeypatch.setattr(columnar, "decode_workers", lambda: 1)
    _same(cols, columnar.decode_columns(batches))


@pytest.mark.skipif(columnar._madvise is None, reason="no madvise (not Linux)")
def test_release_range_frees_only_whole_pages_inside() -> None:
    import mmap

    buf = np.ones(8 << 20, np.uint8)
    lo, hi = mmap.PAGESIZE + 7, buf.nbytes - 2 * mmap.PAGESIZE - 3
    columnar._release_range(buf, lo, hi)
    first = -(buf.ctypes.data + lo) % mmap.PAGESIZE + lo
    last = hi - (buf.ctypes.data + hi) % mmap.PAGESIZE
    assert buf[:first].all() and buf[last:].all()
    assert not buf[first:last].any()


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_peer_built_segment_decodes_in_parts_as_the_peer_reads_it(
        monkeypatch: pytest.MonkeyPatch, codec: str) -> None:
    """Batches written by aiokafka (its codecs), decoded in parts into Arrow's pool (values
    past 1 MiB), give the records aiokafka's own reader gives."""
    import pyarrow as pa
    from aiokafka.record.memory_records import MemoryRecords

    from tests.test_columnar import aiokafka_batch
    from tests.test_pooled_arrays import array_owner

    rows = [(b"k%d" % i, bytes([i % 251]) * 1000 if i % 7 else None, 1_700_000_000_000 + i,
             [("h", b"x%d" % i)] if i % 5 == 0 else []) for i in range(1500)]
    data = b"".join(aiokafka_batch(rows[s:s + 250], codec, s) for s in range(0, 1500, 250))
    parts = []
    real = columnar._decode_v2_parts
    monkeypatch.setattr(columnar, "_decode_v2_parts",
                        lambda *a, **kw: (parts.append(a[-1]), real(*a, **kw))[1])
    monkeypatch.setattr(columnar, "decode_workers", lambda: 2)
    monkeypatch.setattr(columnar, "PARALLEL_MIN_COMPRESSED_BATCH", 0)  # (small batches)
    cols = columnar.decode_columns(data)
    assert parts == [2]
    assert isinstance(array_owner(cols.value_data), pa.Buffer)
    theirs, mr = [], MemoryRecords(data)
    while (batch := mr.next_batch()) is not None:
        assert batch.validate_crc()
        theirs += [(r.offset, r.timestamp, r.key, r.value, [tuple(h) for h in r.headers])
                   for r in batch]
    ours = [(int(cols.offsets[i]), int(cols.timestamps[i]), cols.key(i), cols.value(i),
             [tuple(h) for h in cols.headers(i)]) for i in range(cols.record_count)]
    assert ours == theirs and len(ours) == 1500


# -- parallel compression in encode_columns ---------------------------------------------------

ENCODE_RECORD = st.builds(
    Record,
    st.one_of(st.none(), st.binary(max_size=20)),
    st.one_of(st.none(), st.binary(max_size=300)),
    st.integers(0, 2**41),
    st.lists(st.tuples(st.text(max_size=5), st.one_of(st.none(), st.binary(max_size=8))),
             max_size=2),
    offset=st.none(),
)


def _encode(cols: object, threads: int, monkeypatch: pytest.MonkeyPatch, **kw: object) -> bytes:
    monkeypatch.setattr(columnar, "decode_workers", lambda: threads)
    return columnar.encode_columns(cols, **kw)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                    HealthCheck.function_scoped_fixture])
@given(st.lists(ENCODE_RECORD, min_size=1, max_size=60), st.integers(1, 9),
       st.sampled_from(["gzip", "zstd", "lz4", "snappy"]), st.integers(2, 5),
       st.sampled_from([-1, 0, 2**31 - 3]), st.booleans())
def test_parallel_compression_equals_serial_and_encode_batch(
        monkeypatch: pytest.MonkeyPatch, records: list, per_batch: int, codec: str,
        threads: int, base_sequence: int, log_append: bool) -> None:
    """encode_columns compressing its batches in threads writes the bytes it writes in one
    thread, and those are encode_batch's for each batch (offsets, sequences, append time)."""
    cols = columnar.RecordColumns.from_records(records)
    kw = dict(base_offset=7, records_per_batch=per_batch, compression=codec,
              producer_id=5 if base_sequence >= 0 else -1,
              producer_epoch=1 if base_sequence >= 0 else -1, base_sequence=base_sequence,
              timestamp_type="log_append" if log_append else "create",
              log_append_time=1_700_000_000_000 if log_append else None)
    parallel = _encode(cols, threads, monkeypatch, **kw)
    assert parallel == _encode(cols, 1, monkeypatch, **kw)
    expect = []
    for i in range(0, len(records), per_batch):
        seq = -1 if base_sequence < 0 else (base_sequence + i) % 2**31
        expect.append(encode_batch(
            records[i:i + per_batch], base_offset=7 + i, compression=codec,
            producer_id=kw["producer_id"], producer_epoch=kw["producer_epoch"],
            base_sequence=seq, timestamp_type=kw["timestamp_type"],
            log_append_time=kw["log_append_time"]))
    assert parallel == b"".join(expect)


@pytest.mark.parametrize("codec", ["gzip", "zstd", "snappy", "lz4"])
def test_parallel_compression_is_taken(monkeypatch: pytest.MonkeyPatch, codec: str) -> None:
    """Guard for the test above: the batches of every codec are compressed on the pool's
    threads (each codec's compress call releases the GIL); they reach the output in order."""
    threads = set()
    real = compression.compress

    def spy(*args: object, **kw: object) -> bytes:
        threads.add(threading.get_ident())
        return real(*args, **kw)

    monkeypatch.setattr(compression, "compress", spy)
    records = [Record(b"k%d" % i, b"v" * 200, i) for i in range(40)]
    data = _encode(columnar.RecordColumns.from_records(records), 2, monkeypatch,
                   records_per_batch=4, compression=codec)
    assert len(threads) == 2
    assert columnar.decode_columns(data).offsets.tolist() == list(range(40))
    # a peer reads the threaded output: aiokafka's compiled reader, CRCs checked
    aio_mr = pytest.importorskip("aiokafka.record.memory_records")
    got, mr = [], aio_mr.MemoryRecords(data)
    while (batch := mr.next_batch()) is not None:
        assert batch.validate_crc()
        got += [(r.offset, r.key, r.value, r.timestamp) for r in batch]
    assert got == [(i, r.key, r.value, r.timestamp) for i, r in enumerate(records)]
