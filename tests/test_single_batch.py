"""The single-batch header check of a log's fast append path (``single_v2_batch``): the C
function of ``native/_append.c`` equals its Python reference on any bytes, valid batches
and every way of spoiling one; and what it accepts is exactly what the general path appends."""

from __future__ import annotations

import os
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalog import Record, encode_batch
from kafkalog.records import single_batch
from kafkalog.records.single_batch import single_v2_batch_py

try:
    from kafkalog.native import _append
except ImportError:  # pragma: no cover - the extension is optional
    _append = None

needs_c = pytest.mark.skipif(_append is None, reason="the optional C extension is not built")


def _batch(n: int, **kw: object) -> bytes:
    return encode_batch([Record(b"k%d" % i, b"v" * i, 1000 + i) for i in range(n)], **kw)


VALID = st.builds(
    lambda n, base, epoch, ts: encode_batch(
        [Record(b"k", b"v" * i, ts + i) for i in range(n)], base_offset=base,
        partition_leader_epoch=epoch),
    st.integers(1, 5), st.integers(0, 2**62), st.integers(-1, 2**31 - 1),
    st.integers(-1, 2**40))
# a valid batch with one byte changed (header fields, the CRC, the records) or cut short/long
SPOILED = st.builds(
    lambda b, pos, val: b[:pos % len(b)] + bytes([val]) + b[pos % len(b) + 1:],
    VALID, st.integers(0, 200), st.integers(0, 255))
CUT = st.builds(lambda b, k: b[:k % (len(b) + 1)], VALID, st.integers(0, 200))
LONGER = st.builds(lambda b, extra: b + extra, VALID, st.binary(min_size=1, max_size=8))
ANY = st.one_of(VALID, SPOILED, CUT, LONGER, st.binary(max_size=100))


def _expected(data: bytes, check_crc: bool) -> tuple | None:
    """What the fields say, read independently of both implementations."""
    if len(data) < 61:
        return None
    base, length, epoch, magic, crc = struct.unpack_from(">qiibI", data)
    attrs, last_delta, _bts, max_ts, pid, _pe, _seq, count = struct.unpack_from(
        ">hiqqqhii", data, 21)
    if magic != 2 or length + 12 != len(data) or last_delta < 0 or pid != -1 or attrs & 0x30:
        return None
    from kafkalog.records.crc import crc32c
    if check_crc and crc32c(data[21:]) != crc:
        return None
    return base, base + last_delta, epoch, max_ts, count


@settings(max_examples=400, deadline=None)
@given(ANY, st.booleans())
def test_reference_reads_what_the_fields_say(data: bytes, check_crc: bool) -> None:
    assert single_v2_batch_py(data, check_crc) == _expected(data, check_crc)


@needs_c
@settings(max_examples=600, deadline=None)
@given(ANY, st.booleans(), st.sampled_from([bytes, bytearray, memoryview]))
def test_c_equals_reference(data: bytes, check_crc: bool, kind: type) -> None:
    buf = kind(data)
    assert _append.single_v2_batch(buf, check_crc) == single_v2_batch_py(buf, check_crc)


@pytest.mark.parametrize("impl", [single_v2_batch_py,
                                  pytest.param("c", marks=needs_c)])
def test_each_refusal(impl: object) -> None:
    fn = _append.single_v2_batch if impl == "c" else impl
    good = _batch(3, base_offset=10, partition_leader_epoch=4)
    assert fn(good, True) == (10, 12, 4, 1002, 3)
    assert fn(np.frombuffer(good, np.uint8), True) == (10, 12, 4, 1002, 3)
    bad_crc = bytearray(good)
    bad_crc[-1] ^= 1
    assert fn(bad_crc, True) is None
    assert fn(bad_crc, False) == (10, 12, 4, 1002, 3)  # the caller vouches for the CRC
    idempotent = _batch(2, producer_id=7, producer_epoch=0, base_sequence=0)
    assert fn(idempotent, True) is None
    transactional = _batch(2, producer_id=7, producer_epoch=0, base_sequence=0,
                           transactional=True)
    assert fn(transactional, True) is None
    assert fn(good + good, True) is None  # two batches: the general path
    assert fn(good[:-1], True) is None
    assert fn(b"", True) is None
    assert fn("text", True) is None  # not a buffer
    wide = memoryview(bytearray(good[:60] + b"\0\0\0\0")).cast("I")  # 4-byte items
    assert fn(wide, False) is None
    assert fn(memoryview(good + good)[::2], False) is None  # not contiguous
    negative_delta = bytearray(good)
    negative_delta[23:27] = struct.pack(">i", -1)
    assert fn(negative_delta, False) is None


@needs_c
def test_c_does_not_keep_the_buffer() -> None:
    # the view made for the CRC call is released: the bytearray can be resized afterwards
    data = bytearray(_batch(2))
    assert _append.single_v2_batch(data, True) is not None
    data.extend(b"x")  # BufferError if an export were still held
    assert _append.single_v2_batch(data, True) is None


def test_backend_is_the_c_function_unless_disabled() -> None:
    wanted = _append is not None and not os.environ.get("KAFKALOG_NO_EXTENSIONS")
    assert (single_batch.single_v2_batch is not single_v2_batch_py) == wanted



# -- an idempotent producer's batch -------------------------------------------------------------

PRODUCER = st.builds(
    lambda n, base, pid, pepoch, seq, txn: encode_batch(
        [Record(b"k", b"v" * i, 5 + i) for i in range(n)], base_offset=base,
        producer_id=pid, producer_epoch=pepoch, base_sequence=seq, transactional=txn),
    st.integers(1, 5), st.integers(0, 2**62), st.sampled_from([-1, 0, 7, 2**62]),
    st.integers(0, 2**15 - 1), st.integers(0, 2**31 - 1), st.booleans())
PRODUCER_ANY = st.one_of(
    PRODUCER, ANY,
    st.builds(lambda b, pos, val: b[:pos % len(b)] + bytes([val]) + b[pos % len(b) + 1:],
              PRODUCER, st.integers(0, 200), st.integers(0, 255)),
    st.builds(lambda b, k: b[:k % (len(b) + 1)], PRODUCER, st.integers(0, 200)))


@settings(max_examples=400, deadline=None)
@given(PRODUCER_ANY, st.booleans(), st.sampled_from([bytes, bytearray, memoryview]))
def test_producer_batch_reads_what_the_fields_say(data: bytes, check_crc: bool,
                                                  kind: type) -> None:
    got = single_batch.single_producer_v2_batch(kind(data), check_crc)
    want = None
    if len(data) >= 61:
        base, length, epoch, magic, crc = struct.unpack_from(">qiibI", data)
        attrs, last_delta, _bts, max_ts, pid, pepoch, seq, count = struct.unpack_from(
            ">hiqqqhii", data, 21)
        from kafkalog.records.crc import crc32c
        if magic == 2 and length + 12 == len(data) and last_delta >= 0 and pid >= 0 \
                and not attrs & 0x20 and not (check_crc and crc32c(data[21:]) != crc):
            want = (base, base + last_delta, epoch, max_ts, count, pid, pepoch, seq,
                    bool(attrs & 0x10))
    assert got == want
    # the two single-batch checks never both take a batch
    assert got is None or single_v2_batch_py(data, check_crc) is None
