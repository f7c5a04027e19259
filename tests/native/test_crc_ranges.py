"""native.crc_ranges against the libraries it stands in for on small ranges: zlib.crc32 for
CRC-32 (legacy messages) and the crc32c package for CRC-32C (v2 batches), on random buffers and
ranges of every length around the 8-byte step; and kafkalog.records.crc.crc_of_ranges, whose
two branches (one kernel call, one library call per range) give the same checksums."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from crc32c import crc32c
from hypothesis import given, settings
from hypothesis import strategies as st
from kafkalog.native import crc_ranges as cr

from kafkalog.records.crc import crc_of_ranges

LIBRARIES = {"crc32": (cr.CRC32_TABLES, zlib.crc32), "crc32c": (cr.CRC32C_TABLES, crc32c)}


def _ranges(draw: st.DrawFn, size: int) -> tuple[np.ndarray, np.ndarray]:
    pairs = draw(st.lists(st.tuples(st.integers(0, size), st.integers(0, 40)), max_size=12))
    starts = np.array([s for s, _ in pairs], np.int64)
    ends = np.array([min(size, s + n) for s, n in pairs], np.int64)
    return starts, ends


@settings(max_examples=300, deadline=None)
@given(buf=st.binary(max_size=200), data=st.data(), which=st.sampled_from(sorted(LIBRARIES)))
def test_kernel_equals_the_library(buf: bytes, data: st.DataObject, which: str) -> None:
    tables, library = LIBRARIES[which]
    starts, ends = data.draw(st.composite(lambda d: _ranges(d, len(buf)))())
    out = np.full(starts.shape[0], -1, np.int64)
    assert cr.crc_ranges(np.frombuffer(buf, np.uint8), starts, ends, tables, out) == -1
    assert out.tolist() == [library(buf[a:b]) for a, b in zip(starts.tolist(), ends.tolist())]


@pytest.mark.parametrize("which", sorted(LIBRARIES))
def test_every_length_and_alignment(which: str) -> None:
    tables, library = LIBRARIES[which]
    buf = np.random.default_rng(5).integers(0, 256, 100, np.uint8)
    starts = np.array([s for s in range(9) for _ in range(30)], np.int64)
    ends = starts + np.array([n for _ in range(9) for n in range(30)], np.int64)
    out = np.empty(starts.shape[0], np.int64)
    assert cr.crc_ranges(buf, starts, ends, tables, out) == -1
    raw = buf.tobytes()
    assert out.tolist() == [library(raw[a:b]) for a, b in zip(starts.tolist(), ends.tolist())]


def test_a_range_outside_the_buffer_is_reported() -> None:
    buf = np.zeros(10, np.uint8)
    out = np.zeros(3, np.int64)
    for bad in ((0, 11), (-1, 3), (5, 4)):
        starts = np.array([0, bad[0], 0], np.int64)
        ends = np.array([4, bad[1], 4], np.int64)
        assert cr.crc_ranges(buf, starts, ends, cr.CRC32_TABLES, out) == 1
    with pytest.raises(IndexError, match="range 1 .* outside the buffer of 10 bytes"):
        crc_of_ranges(buf, np.array([0, 8]), np.array([4, 12]), castagnoli=True)


@settings(max_examples=100, deadline=None)
@given(sizes=st.lists(st.integers(0, 3000), min_size=1, max_size=8),
       castagnoli=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_both_branches_of_crc_of_ranges_agree(sizes: list[int], castagnoli: bool,
                                              seed: int) -> None:
    # ranges big on average take one library call each; small ones the kernel: both are right
    buf = np.random.default_rng(seed).integers(0, 256, sum(sizes), np.uint8)
    ends = np.cumsum(np.array(sizes, np.int64))
    starts = ends - np.array(sizes, np.int64)
    library = crc32c if castagnoli else zlib.crc32
    raw = buf.tobytes()
    expected = [library(raw[a:b]) for a, b in zip(starts.tolist(), ends.tolist())]
    assert crc_of_ranges(buf, starts, ends, castagnoli=castagnoli).tolist() == expected
    assert crc_of_ranges(raw, starts, ends, castagnoli=castagnoli).tolist() == expected
