"""kafkalog.file_copy: private copies of files a writer may cut, filled on demand.

The windowed scan must give exactly what one ``scan_entries`` call over the whole file gives
(checked with hypothesis over random logs, tails and windows); a file cut under a copy reads as
ending where it now ends, never as a fault.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafkalog.native import scan as ns

from kafkalog import Record, encode_batch
from kafkalog.file_copy import BLOCK_SIZE, FileCopy, read_file, read_preallocated


def _log_bytes(sizes: list[int], tail: bytes = b"") -> bytes:
    out = bytearray()
    offset = 0
    for n in sizes:
        recs = [Record(b"k%d" % i, b"v" * (i * 37 % 900)) for i in range(n)]
        out += encode_batch(recs, base_offset=offset)
        offset += n
    return bytes(out) + tail


def _write(tmp_path: Path, data: bytes, name: str = "00000000000000000000.log") -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


def _whole_scan(data: bytes, start: int, max_entries: int) -> list[dict]:
    buf = np.frombuffer(data, np.uint8)
    outs, pos = [], start
    while True:
        out = ns.scan_entries(buf, pos, len(data), max_entries=max_entries)
        outs.append(out)
        if out["stop_reason"] != ns.STOP_LIMIT:
            return outs
        pos = out["stop_position"]


def _flatten(outs: list[dict]) -> tuple[list, int, int]:
    pos = [int(p) for o in outs for p in o["positions"][: o["count"]]]
    last = outs[-1]
    return pos, int(last["stop_position"]), int(last["stop_reason"])


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.integers(1, 40), min_size=0, max_size=25),
       tail=st.sampled_from([b"", b"\x00" * 5000, b"\x00" * 10, b"\xff" * 70]),
       window=st.integers(64, 20_000), max_entries=st.integers(1, 9),
       start_batch=st.integers(0, 3))
def test_windowed_scan_equals_one_scan(tmp_path_factory, sizes, tail, window, max_entries,
                                       start_batch):
    data = _log_bytes(sizes, tail)
    p = _write(tmp_path_factory.mktemp("scan"), data)
    whole = _whole_scan(data, 0, 1 << 20)
    starts = [int(x) for x in whole[0]["positions"][: whole[0]["count"]]] or [0]
    start = starts[min(start_batch, len(starts) - 1)]
    expect = _flatten(_whole_scan(data, start, 1 << 20))
    with FileCopy(p) as c:
        got = _flatten(list(c.scan_chunks(start, max_entries=max_entries, window=window)))
        assert got == expect
        # every whole entry the scan reported was copied: its CRC checks
        for pos in got[0]:
            size = int(np.frombuffer(c.buf[pos + 8:pos + 12].tobytes(), ">i4")[0]) + 12
            assert c.buf[pos:pos + size].tobytes() == data[pos:pos + size]


def test_file_cut_under_a_copy_reads_as_ending_there(tmp_path):
    data = _log_bytes([30] * 60)
    assert len(data) > 3 * BLOCK_SIZE
    p = _write(tmp_path, data)
    with FileCopy(p) as c:
        assert c.ensure(0, 100) == 100 and c.size == len(data)
        os.truncate(p, BLOCK_SIZE + 10)  # what a writer's truncate_to / trim does
        assert c.ensure(0, len(data)) == BLOCK_SIZE + 10
        assert c.size == BLOCK_SIZE + 10
        # the part read before the cut is intact, the rest reads as zeros: no fault
        assert c.buf[:BLOCK_SIZE + 10].tobytes() == data[:BLOCK_SIZE + 10]
        assert not c.buf[2 * BLOCK_SIZE:].any()
        out = c.scan(0)
        assert out["stop_position"] <= BLOCK_SIZE + 10
        assert out["stop_reason"] in (ns.STOP_PARTIAL, ns.STOP_END)


def test_deleted_file_reads_as_it_was(tmp_path):
    data = _log_bytes([5] * 10)
    p = _write(tmp_path, data)
    with FileCopy(p) as c:
        p.unlink()  # retention: the descriptor keeps the inode
        assert c.read(0, len(data)).tobytes() == data


def test_release_then_read_again(tmp_path):
    data = _log_bytes([30] * 60)
    p = _write(tmp_path, data)
    with FileCopy(p) as c:
        c.ensure(0, len(data))
        c.release(2 * BLOCK_SIZE + 5)
        assert not c.buf[:2 * BLOCK_SIZE].any()  # freed: reads as zeros until copied again
        assert c.read(0, len(data)).tobytes() == data


def test_views_outlive_close(tmp_path):
    data = _log_bytes([3])
    p = _write(tmp_path, data)
    c = FileCopy(p)
    view = c.read(0, len(data))
    c.close()
    assert view.tobytes() == data  # Arrow/numpy views keep the private memory alive


def test_empty_and_directory(tmp_path):
    p = _write(tmp_path, b"")
    with FileCopy(p) as c:
        assert c.size == 0 and c.ensure(0, 10) == 0 and c.scan(0)["count"] == 0
    with pytest.raises(IsADirectoryError):
        FileCopy(tmp_path)
    with pytest.raises(FileNotFoundError):
        FileCopy(tmp_path / "missing")


def test_read_preallocated_stops_at_zero_tail(tmp_path):
    entries = np.arange(1, 101, dtype=">i4").repeat(2).tobytes()  # 100 8-byte slots
    pre = _write(tmp_path, b"\x00" * 8 + entries + b"\x00" * (1 << 20), "a.index")
    got = read_preallocated(pre, 8)
    assert got[:8 + len(entries)] == b"\x00" * 8 + entries  # slot 0 may be (0, 0)
    assert len(got) < 64 * 1024  # the 1 MiB zero tail was not read
    trimmed = _write(tmp_path, entries + b"\x01\x02\x03", "b.index")  # partial slot dropped
    assert read_preallocated(trimmed, 8) == entries
    assert read_file(trimmed) == entries + b"\x01\x02\x03"
