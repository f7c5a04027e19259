"""native.codec_frames against its plain-Python reference (tests/reference/codec_frames.py) on
frames written by our codec layer and by other libraries (python-lz4 with content sizes and
checksums, zstandard with and without sizes and checksums, raw snappy), whole or damaged."""

from __future__ import annotations

import cramjam
import lz4.frame
import numpy as np
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st
from kafkalog.native import codec_frames as cf

from kafkalog.records.compression import compress

from ..reference.codec_frames import frame_payload
from .damage import damaged


def _frame(codec: int, raw: bytes, variant: int) -> bytes:
    if codec == 2:
        return compress("snappy", raw, magic=2) if variant % 2 == 0 \
            else bytes(cramjam.snappy.compress_raw(raw))
    if codec == 3:
        if variant == 0:
            return compress("lz4", raw, magic=2)
        return lz4.frame.compress(raw, block_linked=False, store_size=variant % 2 == 1,
                                  content_checksum=variant >= 2,
                                  block_checksum=variant == 3)
    if variant == 0:
        return compress("zstd", raw, magic=2)
    return zstandard.ZstdCompressor(write_content_size=variant % 2 == 1,
                                    write_checksum=variant >= 2).compress(raw)


@st.composite
def areas(draw: st.DrawFn, codec: int) -> bytes:
    raw = draw(st.one_of(st.binary(min_size=1, max_size=300),
                         st.binary(min_size=1, max_size=8).map(lambda b: b * 40)))
    area = _frame(codec, raw, draw(st.integers(0, 3)))
    return damaged(draw, area, ("whole", "whole", "cut", "flip", "tail", "random"), 40)


@settings(max_examples=300, deadline=None)
@given(codec=st.sampled_from([2, 3, 4]), data=st.data(), pad=st.integers(0, 4))
def test_frame_payloads_equal_the_reference(codec: int, data: st.DataObject, pad: int) -> None:
    parts = data.draw(st.lists(areas(codec), min_size=1, max_size=6))
    buf = b"\xee" * pad + b"".join(parts) + b"\xee" * 16  # neighbours must never be read
    lengths = np.array([len(p) for p in parts], np.int64)
    ends = pad + np.cumsum(lengths)
    starts = ends - lengths
    n = len(parts)
    out = [np.zeros(n, np.int64) for _ in range(7)]
    p_start, p_end, need, kind, desc, check, block_check = out
    plain = cf.frame_payloads(np.frombuffer(buf, np.uint8), starts, ends, np.int64(codec),
                              *out)
    expected = [frame_payload(p, codec) for p in parts]
    assert plain == sum(e[0] != cf.SLOW for e in expected)
    for i, e in enumerate(expected):
        k, a, b, nd, d, c, bc = e
        assert kind[i] == k, (i, parts[i])
        assert (check[i], block_check[i]) == (c, bc)
        if k != cf.SLOW:
            s = int(starts[i])
            assert (p_start[i] - s, p_end[i] - s, need[i], desc[i]) == (a, b, nd, d)


def test_plain_frames_of_every_writer_are_found() -> None:
    raw = b"kafkalog " * 30
    for codec, variants in ((2, (0, 1)), (3, (0, 1, 2, 3)), (4, (0, 1, 2, 3))):
        for v in variants:  # (lz4 variant 3 has block checksums, as aiokafka's frames)
            area = _frame(codec, raw, v)
            out = [np.zeros(1, np.int64) for _ in range(7)]
            assert cf.frame_payloads(np.frombuffer(area, np.uint8), np.array([0]),
                                     np.array([len(area)]), np.int64(codec), *out) == 1, \
                (codec, v)
    # two lz4 blocks, two zstd frames, a two-chunk snappy stream: not plain
    big = raw * 300
    two_blocks = compress("lz4", big, magic=2)
    two_chunks = compress("snappy", big, magic=2)
    for codec, area in ((3, two_blocks), (4, _frame(4, raw, 0) * 2), (2, two_chunks)):
        out = [np.zeros(1, np.int64) for _ in range(7)]
        assert cf.frame_payloads(np.frombuffer(area, np.uint8), np.array([0]),
                                 np.array([len(area)]), np.int64(codec), *out) == 0
        assert out[3][0] == cf.SLOW
