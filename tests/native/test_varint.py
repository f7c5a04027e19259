"""native.varint kernels against the plain-Python oracle in tests/reference/varint.py."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafkalog.native import varint as kv

from tests.reference import varint as ref

INT32 = st.integers(-(2**31), 2**31 - 1)
INT64 = st.integers(-(2**63), 2**63 - 1)


def _dec(fn, data: bytes, pos: int = 0, end: int | None = None) -> tuple[int, int]:
    buf = np.frombuffer(data, np.uint8)
    v, p = fn(buf, np.int64(pos), np.int64(len(data) if end is None else end))
    return int(v), int(p)


def _enc(fn, value: int, size: int) -> bytes:
    buf = np.full(size + 3, 0xAA, np.uint8)
    p = fn(buf, np.int64(1), np.int64(value))
    return bytes(buf[1:int(p)])


@pytest.mark.parametrize(
    ("value", "hexed"),
    [(0, "00"), (-1, "01"), (1, "02"), (5, "0a"), (11, "16"), (63, "7e"), (-64, "7f"),
     (64, "8001"), (2**31 - 1, "feffffff0f"), (-(2**31), "ffffffff0f")],
)
def test_varint_vectors(value: int, hexed: str) -> None:
    data = bytes.fromhex(hexed)
    assert _enc(kv.encode_varint, value, 5) == data
    assert kv.size_of_varint(np.int64(value)) == len(data)
    assert _dec(kv.decode_varint, data + b"\xff\x80") == (value, len(data))


@pytest.mark.parametrize(
    ("value", "hexed"),
    [(0, "00"), (-1, "01"), (2**63 - 1, "feffffffffffffffff01"),
     (-(2**63), "ffffffffffffffffff01"), (1700000000000, "80a0abfef962")],
)
def test_varlong_vectors(value: int, hexed: str) -> None:
    data = bytes.fromhex(hexed)
    assert _enc(kv.encode_varlong, value, 10) == data
    assert kv.size_of_varlong(np.int64(value)) == len(data)
    assert _dec(kv.decode_varlong, data + b"\x80") == (value, len(data))


def test_every_7_bit_boundary_both_signs() -> None:
    for bits in range(63):
        for v in (2**bits - 1, 2**bits, -(2**bits), -(2**bits) - 1):
            if -(2**63) <= v < 2**63:
                data = ref._groups(ref._zigzag(v, 64))
                assert _dec(kv.decode_varlong, b"\x05" + data + b"\x99", 1) == (v, 1 + len(data))
            if -(2**31) <= v < 2**31:
                data = ref._groups(ref._zigzag(v, 32))
                assert _dec(kv.decode_varint, b"\x05" + data + b"\x99", 1) == (v, 1 + len(data))


def test_errors() -> None:
    assert _dec(kv.decode_varint, b"\x80\x80\x80\x80\x80\x01") == (0, kv.ERR_VARINT_TOO_LONG)
    assert _dec(kv.decode_varlong, b"\x80" * 10 + b"\x01") == (0, kv.ERR_VARINT_TOO_LONG)
    assert _dec(kv.decode_varint, b"\x80\x80") == (0, kv.ERR_TRUNCATED)
    assert _dec(kv.decode_varlong, b"") == (0, kv.ERR_TRUNCATED)
    # end bounds the read even when the buffer goes on
    assert _dec(kv.decode_varint, b"\x80\x01", 0, 1) == (0, kv.ERR_TRUNCATED)


def test_java_truncation_of_the_last_byte() -> None:
    # 5th byte 0x7f: Java keeps only its low 4 bits (<< 28 into an int)
    assert _dec(kv.decode_varint, b"\xfe\xff\xff\xff\x7f") == ref.decode_varint(
        b"\xfe\xff\xff\xff\x7f", 0, 5)
    assert _dec(kv.decode_varint, b"\xfe\xff\xff\xff\x7f")[0] == 2**31 - 1
    assert _dec(kv.decode_varlong, b"\xff" * 9 + b"\x7f")[0] == -(2**63)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=14), st.integers(0, 14), st.integers(0, 16))
def test_decode_matches_reference_on_arbitrary_bytes(data: bytes, pos: int, end: int) -> None:
    end = min(end, len(data))
    assert _dec(kv.decode_varint, data, pos, end) == ref.decode_varint(data, pos, end)
    assert _dec(kv.decode_varlong, data, pos, end) == ref.decode_varlong(data, pos, end)


@settings(max_examples=300, deadline=None)
@given(INT32)
def test_varint_encode_size_round_trip(value: int) -> None:
    expected = bytearray(8)
    n = ref.encode_varint(expected, 0, value)
    got = _enc(kv.encode_varint, value, 5)
    assert got == bytes(expected[:n])
    assert kv.size_of_varint(np.int64(value)) == ref.size_of_varint(value) == n
    assert _dec(kv.decode_varint, got) == (value, n)


@settings(max_examples=300, deadline=None)
@given(INT64)
def test_varlong_encode_size_round_trip(value: int) -> None:
    expected = bytearray(12)
    n = ref.encode_varlong(expected, 0, value)
    got = _enc(kv.encode_varlong, value, 10)
    assert got == bytes(expected[:n])
    assert kv.size_of_varlong(np.int64(value)) == ref.size_of_varlong(value) == n
    assert _dec(kv.decode_varlong, got) == (value, n)
