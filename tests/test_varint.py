"""Zig-zag varints/varlongs: known encodings, every 7-bit boundary in both signs, amid junk."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalog import CorruptRecordError
from kafkalog.records.varint import (
    decode_varint,
    decode_varlong,
    encode_varint,
    encode_varlong,
    size_of_varint,
    size_of_varlong,
)

KNOWN = [(0, "00"), (-1, "01"), (1, "02"), (-64, "7f"), (63, "7e"), (64, "8001"), (5, "0a"),
         (11, "16"), (300, "d804"), (2147483647, "feffffff0f"), (-2147483648, "ffffffff0f")]


@pytest.mark.parametrize(("value", "hexstr"), KNOWN)
def test_known_varints(value: int, hexstr: str) -> None:
    assert encode_varint(value).hex() == hexstr
    assert encode_varlong(value).hex() == hexstr  # zig-zag agrees for 32-bit values
    assert decode_varint(bytes.fromhex(hexstr)) == (value, len(hexstr) // 2)
    assert size_of_varint(value) == len(hexstr) // 2


def _boundaries(bits: int) -> list[int]:
    # values whose zig-zag form sits at every 7-bit boundary, both signs
    out = set()
    for k in range(1, bits // 7 + 2):
        for u in ((1 << (7 * k)) - 1, 1 << (7 * k), (1 << (7 * k)) + 1):
            if u < (1 << bits):
                out.add((u >> 1) ^ -(u & 1))
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    out.update((lo, hi, lo + 1, hi - 1, 0, -1, 1))
    return sorted(v for v in out if lo <= v <= hi)


@pytest.mark.parametrize("value", _boundaries(32))
def test_varint_boundaries_amid_junk(value: int) -> None:
    enc = encode_varint(value)
    assert len(enc) == size_of_varint(value)
    buf = b"\xff\x80junk" + enc + b"\x81\xff\xfe"
    assert decode_varint(buf, 6) == (value, 6 + len(enc))


@pytest.mark.parametrize("value", _boundaries(64))
def test_varlong_boundaries_amid_junk(value: int) -> None:
    enc = encode_varlong(value)
    assert len(enc) == size_of_varlong(value)
    buf = b"\x80\x80\x80" + enc + b"\x80"
    assert decode_varlong(buf, 3) == (value, 3 + len(enc))


def test_out_of_range_encode_is_value_error() -> None:
    with pytest.raises(ValueError):
        encode_varint(1 << 31)
    with pytest.raises(ValueError):
        encode_varlong(-(1 << 63) - 1)


def test_truncated_and_too_long_are_corrupt() -> None:
    with pytest.raises(CorruptRecordError) as ei:
        decode_varint(b"\x00\x80\x80", 1)
    assert ei.value.position == 3
    with pytest.raises(CorruptRecordError, match="too long"):
        decode_varint(b"\x80\x80\x80\x80\x80\x01")
    with pytest.raises(CorruptRecordError, match="too long"):
        decode_varlong(b"\x80" * 10 + b"\x01")
    # Kafka drops bits of the last allowed byte beyond 32/64 bits instead of failing
    assert decode_varint(b"\xff\xff\xff\xff\x7f") == decode_varint(b"\xff\xff\xff\xff\x0f")


@settings(max_examples=300, deadline=None)
@given(st.integers(-(1 << 31), (1 << 31) - 1), st.binary(max_size=8), st.binary(max_size=8))
def test_varint_round_trip(value: int, before: bytes, after: bytes) -> None:
    enc = encode_varint(value)
    assert decode_varint(before + enc + after, len(before)) == (value, len(before) + len(enc))


@settings(max_examples=300, deadline=None)
@given(st.integers(-(1 << 63), (1 << 63) - 1), st.binary(max_size=8), st.binary(max_size=8))
def test_varlong_round_trip(value: int, before: bytes, after: bytes) -> None:
    enc = encode_varlong(value)
    assert len(enc) == size_of_varlong(value)
    assert decode_varlong(before + enc + after, len(before)) == (value, len(before) + len(enc))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=12), st.integers(0, 12))
def test_arbitrary_bytes_decode_or_corrupt(data: bytes, pos: int) -> None:
    for fn in (decode_varint, decode_varlong):
        try:
            v, end = fn(data, min(pos, len(data)))
        except CorruptRecordError:
            continue
        assert min(pos, len(data)) < end <= len(data)
        assert isinstance(v, int)


@given(st.integers(0, 2**35 - 1))
def test_encode_unsigned_varint_round_trips(u: int) -> None:
    from kafkalog.records.varint import encode_unsigned_varint

    out = encode_unsigned_varint(u)
    value = shift = 0
    for b in out:
        value |= (b & 0x7F) << shift
        shift += 7
    assert value == u and all(b & 0x80 for b in out[:-1]) and not out[-1] & 0x80
    assert len(out) == max(1, -(-u.bit_length() // 7))


# Kafka's ByteUtilsTest.testUnsignedVarintSerde (4.2), its Java ints taken as unsigned 32 bits
@pytest.mark.parametrize(("n", "hex_"), [
    (0, "00"), (-1, "ffffffff0f"), (1, "01"), (63, "3f"), (-64, "c0ffffff0f"), (64, "40"),
    (8191, "ff3f"), (-8192, "80c0ffff0f"), (8192, "8040"), (-8193, "ffbfffff0f"),
    (1048575, "ffff3f"), (1048576, "808040"), (2**31 - 1, "ffffffff07"),
    (-2**31, "8080808008")])
def test_encode_unsigned_varint_kafka_vectors(n: int, hex_: str) -> None:
    from kafkalog.records.varint import encode_unsigned_varint

    assert encode_unsigned_varint(n & 0xFFFFFFFF).hex() == hex_


def test_encode_unsigned_varint_refuses_negative() -> None:
    from kafkalog.records.varint import encode_unsigned_varint

    with pytest.raises(ValueError):
        encode_unsigned_varint(-1)
