"""``Log.read_table`` decodes each segment in chunks of whole batches: the same table as one
decode of the segment, for any chunk size, offset range and codec mix."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkalog import Record, decode_table
from kafkalog import log as log_module
from kafkalog.clock import ManualClock
from kafkalog.log import Log


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(1, 30), st.sampled_from(["none", "lz4", "zstd"])),
                min_size=1, max_size=25),
       st.integers(1, 3000), st.data())
def test_chunked_read_table_equals_one_decode(tmp_path_factory: pytest.TempPathFactory,
                                              monkeypatch: pytest.MonkeyPatch,
                                              batches: list, chunk: int,
                                              data: st.DataObject) -> None:
    monkeypatch.setattr(log_module, "READ_TABLE_CHUNK_BYTES", chunk)
    d: Path = tmp_path_factory.mktemp("log")
    with Log.open(d, clock=ManualClock(1_700_000_000_000)) as log:
        for i, (n, codec) in enumerate(batches):
            log.append([Record(b"k%d" % j, b"v" * (j % 7) * i, None, [("h", b"x")] * (j % 2))
                        for j in range(n)], compression=codec)
        end = log.log_end_offset
        lo = data.draw(st.integers(0, end))
        hi = data.draw(st.integers(lo, end + 2))
        table = log.read_table(lo, hi)
    [seg] = sorted(d.glob("*.log"))
    expected = decode_table(seg, start_offset=lo, end_offset=min(hi, end))
    assert table.to_pylist() == expected.to_pylist()


def test_decode_chunks_cover_whole_entries() -> None:
    data = b"".join(
        __import__("kafkalog").encode_batch([Record(None, b"x" * 100)], base_offset=i)
        for i in range(10))
    size = len(data) // 10
    chunks = log_module._decode_chunks(data, 3 * size)
    assert chunks == [(0, 3 * size), (3 * size, 6 * size), (6 * size, 9 * size),
                      (9 * size, None)]
    assert log_module._decode_chunks(data, len(data)) == [(0, None)]
