"""compression._zstd_output_bound: an upper bound of the decompressed size read from zstd frame
and block headers (so a batch decompresses in one call), None unless the data is whole frames."""

from __future__ import annotations

import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalog.records.compression import _zstd_output_bound, compress, decompress

DATA = st.one_of(st.binary(max_size=300_000),
                 st.builds(lambda b, n: b * n, st.binary(min_size=1, max_size=20),
                           st.integers(1, 40_000)))


@settings(max_examples=100, deadline=None)
@given(st.lists(DATA, min_size=1, max_size=3), st.booleans(), st.integers(1, 19), st.data())
def test_bound_covers_frames_and_rejects_cut_ones(parts: list[bytes], checksum: bool,
                                                  level: int, data: st.DataObject) -> None:
    cctx = zstandard.ZstdCompressor(level=level, write_checksum=checksum,
                                    write_content_size=data.draw(st.booleans()))
    frames = b"".join(cctx.compress(p) for p in parts)
    bound = _zstd_output_bound(memoryview(frames))
    assert bound is not None and bound >= sum(map(len, parts))
    assert decompress("zstd", frames) == b"".join(parts)
    cut = data.draw(st.integers(1, len(frames) - 1)) if len(frames) > 1 else 1
    truncated = frames[:-cut]
    b = _zstd_output_bound(memoryview(truncated))
    if b is not None:  # a cut exactly between frames leaves whole frames
        assert b >= len(zstandard.ZstdDecompressor().decompressobj().decompress(truncated))


def test_garbage_has_no_bound() -> None:
    assert _zstd_output_bound(memoryview(b"not zstd at all")) is None
    assert _zstd_output_bound(memoryview(compress("zstd", b"x" * 100) + b"junk")) is None
