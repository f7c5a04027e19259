"""Streamed decode (each lz4/zstd batch decompressed into a thread's scratch buffer just before
its records are decoded, the output sized from header bounds) against the decompress-first
decode it replaced: the same columns, offsets of the same width, and for one damaged byte the
same error, serial and in parallel parts."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkalog import Record, encode_batch
from kafkalog.errors import KafkaLogError
from kafkalog.records import columnar
from kafkalog.records.compression import LZ4, ZSTD, compress, decompressed_bound

# the parallel tests' autouse fixture (imported, so active here too): small inputs may take
# the parallel path, which streams as well
from .test_columnar import _records, aiokafka_batch, expected_rows, kafka_python_batch
from .test_columnar_parallel import (  # noqa: F401
    RECORD,
    _parallel_for_small_inputs,
    _same,
    _segment,
)

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])
BATCHES = st.lists(st.tuples(st.lists(RECORD, min_size=1, max_size=12),
                             st.sampled_from(["none", "lz4", "zstd", "lz4", "zstd"]),
                             st.integers(0, 3)),
                   min_size=1, max_size=10)


def _decode(data: bytes, monkeypatch: pytest.MonkeyPatch, *, streamed: bool, threads: int = 1,
            packed: bool = True, **kw: object) -> object:
    with monkeypatch.context() as m:
        m.setattr(columnar, "decode_workers", lambda: threads)
        m.setattr(columnar, "PARALLEL_MIN_COMPRESSED_BATCH", 0)  # threads as asked
        if streamed:  # however small the batches (else small ones are decompressed first)
            m.setattr(columnar, "STREAM_MIN_BATCH_BYTES", 0)
        else:  # no bound: every batch is decompressed first, as before streaming
            m.setattr(columnar, "_decompressed_bound", lambda codec, data: None)
        if not packed:  # each decompressed batch decoded from its own bytes, in its own call
            m.setattr(columnar, "PACK_MAX_AREA", 0)
        try:
            return columnar.decode_columns(data, **kw)
        except KafkaLogError as e:
            return (type(e), str(e))


@SETTINGS
@given(BATCHES, st.integers(1, 3), st.data())
def test_streamed_equals_decompressed_first(monkeypatch: pytest.MonkeyPatch, batches: list,
                                            threads: int, data: st.DataObject) -> None:
    buf, end = _segment(batches)
    lo = data.draw(st.one_of(st.none(), st.integers(0, end)))
    hi = data.draw(st.one_of(st.none(), st.integers(0, end + 1)))
    before = _decode(buf, monkeypatch, streamed=False, start_offset=lo, end_offset=hi)
    _same(_decode(buf, monkeypatch, streamed=True, threads=threads, start_offset=lo,
                  end_offset=hi), before)
    # small decompressed batches packed into one kernel call, or each decoded alone
    _same(_decode(buf, monkeypatch, streamed=False, packed=False, threads=threads,
                  start_offset=lo, end_offset=hi), before)


@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(BATCHES, st.integers(1, 3), st.data())
def test_one_damaged_byte_raises_the_same_error(monkeypatch: pytest.MonkeyPatch, batches: list,
                                                threads: int, data: st.DataObject) -> None:
    # one damage: with several, the streamed decode may name a later batch's decode error
    # before an even later batch's decompression error, which the old order reported first
    buf, _ = _segment(batches)
    damaged = bytearray(buf)
    i = data.draw(st.integers(0, len(damaged) - 1))
    damaged[i] ^= data.draw(st.integers(1, 255))
    validate = data.draw(st.booleans())
    before = _decode(bytes(damaged), monkeypatch, streamed=False, validate=validate)
    _same(_decode(bytes(damaged), monkeypatch, streamed=True, threads=threads,
                  validate=validate), before)
    _same(_decode(bytes(damaged), monkeypatch, streamed=False, packed=False, threads=threads,
                  validate=validate), before)


def test_compressed_batches_are_streamed(monkeypatch: pytest.MonkeyPatch) -> None:
    records = [Record(b"k%d" % i, b"v" * 200, i) for i in range(50)]
    buf = b"".join(encode_batch(records, base_offset=50 * i, compression=c)
                   for i, c in enumerate(["lz4", "none", "zstd", "zstd"]))
    streamed = []
    real = columnar._V2Run._stream

    def spy(self: columnar._V2Run, j0: int, j1: int) -> tuple:
        out = real(self, j0, j1)
        streamed.append((j0, out[3]))
        return out

    monkeypatch.setattr(columnar._V2Run, "_stream", spy)
    cols = _decode(buf, monkeypatch, streamed=True)
    # batch 0 alone (batch 1 is uncompressed), batches 2 and 3 in one chunk
    assert streamed == [(0, 1), (2, 4)]
    assert cols.record_count == 200 and cols.value(199) == b"v" * 200


@SETTINGS
@given(BATCHES, st.integers(1, 3), st.integers(1, 300_000), st.data())
def test_any_chunk_size_decodes_the_same(monkeypatch: pytest.MonkeyPatch, batches: list,
                                         threads: int, chunk: int, data: st.DataObject) -> None:
    # chunks smaller than one batch's bound (one batch per call), and chunks of several
    buf, _ = _segment(batches)
    before = _decode(buf, monkeypatch, streamed=False)
    with monkeypatch.context() as m:
        m.setattr(columnar, "STREAM_CHUNK_BYTES", chunk)
        _same(_decode(buf, monkeypatch, streamed=True, threads=threads), before)
    damaged = bytearray(buf)
    damaged[data.draw(st.integers(0, len(buf) - 1))] ^= data.draw(st.integers(1, 255))
    before = _decode(bytes(damaged), monkeypatch, streamed=False, validate=False)
    with monkeypatch.context() as m:
        m.setattr(columnar, "STREAM_CHUNK_BYTES", chunk)
        _same(_decode(bytes(damaged), monkeypatch, streamed=True, threads=threads,
                      validate=False), before)


def test_offsets_keep_their_width_when_only_the_bound_crosses_int32(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # a bound (64 KiB per lz4 block) above the int32 limit, true sizes below it: the offsets
    # stay as narrow as the decompress-first decode makes them (limit lowered to test it)
    records = [Record(None, b"x" * 100, i) for i in range(20)]
    buf = b"".join(encode_batch(records, base_offset=20 * i, compression="lz4")
                   for i in range(3))
    monkeypatch.setattr(columnar, "_INT32_LIMIT", 10_000)
    before = _decode(buf, monkeypatch, streamed=False)
    after = _decode(buf, monkeypatch, streamed=True)
    assert before.value_offsets.dtype == np.int32
    _same(after, before)
    assert after.value_offsets.dtype == np.int32 and after.key_offsets.dtype == np.int32


@pytest.mark.parametrize("builder", [kafka_python_batch, aiokafka_batch])
@pytest.mark.parametrize("codec", ["lz4", "zstd"])
def test_peer_built_batches_are_streamed_and_match_the_object_path(
        monkeypatch: pytest.MonkeyPatch, builder: object, codec: str) -> None:
    # frames written by kafka-python's and aiokafka's codecs (their lz4 and zstd libraries),
    # not ours: their headers must bound them, else the streamed path is silently not taken
    data = b"".join(builder(_records(n, seed=n), codec, base)  # type: ignore[operator]
                    for n, base in [(1, 0), (50, 1), (120, 51)])
    taken = []
    real = columnar._V2Run.bound_areas

    def spy(self: columnar._V2Run, max_decompressed: int) -> bool:
        taken.append(real(self, max_decompressed))
        return taken[-1]

    monkeypatch.setattr(columnar._V2Run, "bound_areas", spy)
    monkeypatch.setattr(columnar, "STREAM_MIN_BATCH_BYTES", 0)  # (these batches are small)
    assert columnar.decode_table(data).to_pylist() == expected_rows(data)
    assert taken == [True]


@pytest.mark.parametrize("codec", [LZ4, ZSTD])
@given(raw=st.binary(max_size=300_000))
@settings(max_examples=40, deadline=None)
def test_bound_is_an_upper_bound(codec: int, raw: bytes) -> None:
    packed = memoryview(compress(codec, raw))
    bound = decompressed_bound(codec, packed)
    assert bound is not None and len(raw) <= bound


def test_no_bound_for_garbage_or_other_codecs() -> None:
    assert decompressed_bound(LZ4, memoryview(b"\x04\x22\x4d")) is None
    assert decompressed_bound(ZSTD, memoryview(b"not zstd at all")) is None
    assert decompressed_bound(1, memoryview(compress("gzip", b"abc"))) is None


@pytest.mark.parametrize("codec", ["lz4", "zstd"])
def test_small_batches_are_decompressed_first_and_packed(monkeypatch: pytest.MonkeyPatch,
                                                         codec: str) -> None:
    # one record per batch (a producer with linger.ms=0): no streaming, and the decompressed
    # areas decoded together, a few kernel calls for all 300 batches instead of one each
    data = b"".join(encode_batch([Record(b"k%d" % i, b"v" * 50, i)], base_offset=i,
                                 compression=codec) for i in range(300))
    bounded, calls = [], []
    real_bound, real_call = columnar._V2Run.bound_areas, columnar._V2Run._decode_call
    monkeypatch.setattr(columnar._V2Run, "bound_areas",
                        lambda self, m: bounded.append(1) or real_bound(self, m))
    monkeypatch.setattr(columnar._V2Run, "_decode_call",
                        lambda self, *a: calls.append(a[4] - a[3]) or real_call(self, *a))
    monkeypatch.setattr(columnar, "decode_workers", lambda: 1)
    assert columnar.decode_table(data).to_pylist() == expected_rows(data)
    assert bounded == [] and sum(calls) == 300 and len(calls) == 1
    big = b"".join(encode_batch([Record(b"k", os.urandom(100) * 30, i) for i in range(40)],
                                base_offset=40 * j, compression=codec) for j in range(3))
    assert columnar.decode_table(big).to_pylist() == expected_rows(big)
    assert bounded == [1]  # batches of ~4 KiB and more compressed: streamed
