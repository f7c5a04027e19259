"""CRC-32C and CRC-32 vectors, and zero-copy inputs (memoryview, numpy, mmap slices)."""

from __future__ import annotations

import mmap
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalog.records.crc import crc32, crc32c

# CRC-32C check values: RFC 3720 (iSCSI) B.4 and librdkafka's tests
CRC32C_VECTORS = [
    (b"", 0),
    (b"123456789", 0xE3069283),
    (bytes(32), 0x8A9136AA),
    (b"\xff" * 32, 0x62A8AB43),
    (bytes(range(32)), 0x46DD794E),
    (bytes(range(31, -1, -1)), 0x113FDB5C),
]


@pytest.mark.parametrize(("data", "expected"), CRC32C_VECTORS)
def test_crc32c_vectors(data: bytes, expected: int) -> None:
    assert crc32c(data) == expected


def test_crc32_vector() -> None:
    assert crc32(b"123456789") == 0xCBF43926
    assert crc32(b"") == 0


def test_spec_batch_crc() -> None:
    # spec §1.7 vector A: CRC over attributes .. end of batch
    batch = bytes.fromhex(
        "00000000000000000000003d0000000002e641a44b0000000000000000018bcfe568000000018bcfe56800"
        "ffffffffffffffffffffffffffff0000000116000000010a68656c6c6f00"
    )
    assert crc32c(batch[21:]) == 0xE641A44B


def test_zero_copy_inputs_agree() -> None:
    data = bytes(range(256)) * 40
    expected = crc32c(data[100:9000])
    mv = memoryview(data)[100:9000]
    arr = np.frombuffer(data, np.uint8)[100:9000]
    assert crc32c(mv) == crc32c(arr) == crc32c(bytearray(data[100:9000])) == expected
    assert crc32(mv) == crc32(arr) == zlib.crc32(data[100:9000])
    with mmap.mmap(-1, len(data)) as mm:
        mm.write(data)
        view = memoryview(mm)
        try:
            assert crc32c(view[100:9000]) == expected
        finally:
            view.release()


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=300), st.integers(0, 300))
def test_crc_continuation(data: bytes, cut: int) -> None:
    cut = min(cut, len(data))
    assert crc32c(data[cut:], crc32c(data[:cut])) == crc32c(data)
    assert crc32(data[cut:], crc32(data[:cut])) == crc32(data)
