"""native.md5 against the plain-Python oracle in tests/reference/md5.py (hashlib)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafkalog.native import md5

from tests.reference import md5 as ref


def _kernel(data: bytes, start: int = 0, length: int | None = None) -> bytes:
    buf = np.frombuffer(data, np.uint8) if data else np.zeros(0, np.uint8)
    out = np.zeros(20, np.uint8)
    n = len(data) - start if length is None else length
    md5.md5_digest(buf, np.int64(start), np.int64(n), out, np.int64(2))
    assert not out[:2].any() and not out[18:].any()  # writes exactly 16 bytes at out_pos
    return bytes(out[2:18])


@pytest.mark.parametrize(("data", "hexed"), [
    (b"", "d41d8cd98f00b204e9800998ecf8427e"),  # RFC 1321 A.5 test suite
    (b"a", "0cc175b9c0f1b6a831c399e269772661"),
    (b"abc", "900150983cd24fb0d6963f7d28e17f72"),
    (b"message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
    (b"abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"),
    (b"12345678901234567890123456789012345678901234567890123456789012345678901234567890",
     "57edf4a22be3c955ac49da2e2107b67a"),
])
def test_rfc1321_vectors(data: bytes, hexed: str) -> None:
    assert _kernel(data).hex() == hexed


@pytest.mark.parametrize("n", [55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129])
def test_padding_boundaries(n: int) -> None:
    data = bytes(range(256))[:n]
    assert _kernel(data) == ref.md5_digest(data)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300), st.binary(max_size=20), st.binary(max_size=20))
def test_matches_hashlib_on_a_slice(data: bytes, before: bytes, after: bytes) -> None:
    buf = before + data + after
    assert _kernel(buf, len(before), len(data)) == ref.md5_digest(data)
