"""kafkalog.page_pool, and FileCopy reusing the pages it releases.

What must hold whatever the pool does: every block of a copy reads either the file's bytes as
they were when the block was copied (zeros past the file's end at that time) or, when not copied
or released, zeros. A hypothesis model checks it over random ensure / release / shrink sequences
and pool sizes; the other tests pin the pool's own moves and that a sequential reader really
stops faulting fresh pages in.
"""

from __future__ import annotations

import mmap
import os
import resource
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalog import file_copy
from kafkalog.file_copy import BLOCK_SIZE, FileCopy
from kafkalog.page_pool import MAX_MOVES, PagePool, address_of, page_moves_supported

PAGE = mmap.PAGESIZE
needs_moves = pytest.mark.skipif(
    not page_moves_supported(),
    reason="KAFKALOG_NO_PAGE_MOVES=1 (the fallback is under test)"
    if os.environ.get("KAFKALOG_NO_PAGE_MOVES") == "1" else
    "mremap(MREMAP_DONTUNMAP) is not available here (not Linux >= 5.13, or refused): "
    "FileCopy frees and faults pages as before")


@needs_moves
def test_park_and_borrow_move_pages_without_copying() -> None:
    pool = PagePool(4 * PAGE)
    m = mmap.mmap(-1, 16 * PAGE, flags=mmap.MAP_PRIVATE)
    try:
        a = address_of(m)
        m[:3 * PAGE] = bytes(range(256)) * (3 * PAGE // 256)
        # parks what fits (4 pages of room, 3 asked), the range then reads as zeros
        assert pool.park(a, 3 * PAGE) == 3 * PAGE and pool.held == 3 * PAGE
        assert m[:3 * PAGE] == bytes(3 * PAGE)
        # room for one more page only
        m[5 * PAGE:7 * PAGE] = b"\x07" * (2 * PAGE)
        assert pool.park(a + 5 * PAGE, 2 * PAGE) == PAGE and pool.held == 4 * PAGE
        assert m[5 * PAGE:6 * PAGE] == bytes(PAGE) and m[6 * PAGE:7 * PAGE] == b"\x07" * PAGE
        # borrowed from the top: the last parked page first, then the three below it
        assert pool.borrow(a + 10 * PAGE, PAGE) == PAGE
        assert m[10 * PAGE:11 * PAGE] == b"\x07" * PAGE
        assert pool.borrow(a + 11 * PAGE, 5 * PAGE) == 3 * PAGE and pool.held == 0
        assert m[11 * PAGE:14 * PAGE] == bytes(range(256)) * (3 * PAGE // 256)
        assert pool.borrow(a, PAGE) == 0  # empty
        # unaligned addresses and partial pages move nothing
        pool.park(a + 11 * PAGE, 2 * PAGE)
        assert pool.borrow(a + 1, PAGE) == 0 and pool.borrow(a, PAGE - 1) == 0
        assert pool.park(a + 1, PAGE) == 0
        assert pool.moves == 5
    finally:
        pool.close()
        m.close()


@needs_moves
def test_pool_stops_after_max_moves() -> None:
    pool = PagePool(PAGE)
    m = mmap.mmap(-1, 2 * PAGE, flags=mmap.MAP_PRIVATE)
    try:
        pool.moves = MAX_MOVES - 1
        assert pool.park(address_of(m), PAGE) == PAGE
        assert not pool.enabled
        assert pool.borrow(address_of(m) + PAGE, PAGE) == 0 and pool.held == PAGE
    finally:
        pool.close()
        m.close()


def _data(n: int, seed: int = 0) -> bytes:
    return np.random.default_rng(seed).integers(1, 256, n, dtype=np.uint8).tobytes()


@needs_moves
def test_short_read_into_borrowed_pages_reads_zeros_past_the_end(tmp_path: Path) -> None:
    data = _data(40 * BLOCK_SIZE)
    p = tmp_path / "00000000000000000000.log"
    p.write_bytes(data)
    with FileCopy(p) as c:
        assert c.ensure(0, 20 * BLOCK_SIZE) == 20 * BLOCK_SIZE
        c.release(20 * BLOCK_SIZE)  # 20 blocks of the file's bytes parked
        assert c._pool is not None and c._pool.held == 20 * BLOCK_SIZE
        cut = 25 * BLOCK_SIZE + 100
        os.truncate(p, cut)  # the writer cuts the file: the next read comes up short
        assert c.ensure(20 * BLOCK_SIZE, 40 * BLOCK_SIZE) == cut
        assert c._pool.moves >= 2  # the range was filled from borrowed pages
        assert c.size == cut
        assert c.buf[20 * BLOCK_SIZE:cut].tobytes() == data[20 * BLOCK_SIZE:cut]
        # the borrowed pages held old bytes of the file: past the new end they read zeros
        assert not c.buf[cut:].any()
        assert not c.buf[:20 * BLOCK_SIZE].any()


@needs_moves
def test_sequential_reader_stops_faulting_fresh_pages(tmp_path: Path) -> None:
    thp = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    if thp.exists() and "[always]" in thp.read_text():
        pytest.skip("transparent huge pages are always on here: faults do not count pages")
    size = 96 * 1024 * 1024
    p = tmp_path / "00000000000000000000.log"
    with open(p, "wb") as f:
        for i in range(size // (1 << 20)):
            f.write(_data(1 << 20, i))

    def read_all() -> int:
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        with FileCopy(p) as c:
            released = 0
            for pos in range(0, size, file_copy.SCAN_WINDOW):
                got = c.read(pos, pos + file_copy.SCAN_WINDOW)
                assert got[:8].tobytes() == os.pread(c._fd, 8, pos)
                if pos - released > file_copy.SCAN_WINDOW // 2:  # as dump and Spark tasks do
                    c.release(pos)
                    released = pos
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

    pooled = read_all()
    # each fresh page is one fault: without the pool the reader faults every page it copies
    # (24,576 here); with it only until its first release has parked pages (two windows)
    assert pooled < size // PAGE // 8, pooled
    with mock.patch.object(file_copy, "POOL_BYTES", 0):
        unpooled = read_all()
    assert unpooled > size // PAGE * 0.9, unpooled


@settings(max_examples=80, deadline=None)
@given(ops=st.lists(st.tuples(st.sampled_from(["ensure", "release", "shrink"]),
                              st.integers(0, 24), st.integers(1, 12), st.integers(0, 5000)),
                    min_size=1, max_size=25),
       pool_blocks=st.integers(0, 6), tail=st.integers(0, BLOCK_SIZE - 1))
def test_copy_reads_as_the_model_whatever_the_pool_does(tmp_path_factory, ops, pool_blocks,
                                                        tail) -> None:
    length = 20 * BLOCK_SIZE + tail
    data = _data(length, len(ops))
    p = tmp_path_factory.mktemp("pool") / "00000000000000000000.log"
    p.write_bytes(data)
    now = bytearray(data)  # the file as it is now
    expect = np.zeros(length, np.uint8)  # what the copy must read: copied bytes, else zeros
    copied = np.zeros(-(-length // BLOCK_SIZE), bool)
    with mock.patch.object(file_copy, "POOL_BYTES", pool_blocks * BLOCK_SIZE), FileCopy(p) as c:
        for op, block, nblocks, extra in ops:
            start = block * BLOCK_SIZE + extra % BLOCK_SIZE
            if op == "ensure":
                end = start + nblocks * BLOCK_SIZE
                got = c.ensure(start, end)
                assert got == min(end, length, c.size)
                b0, b1 = start // BLOCK_SIZE, -(-min(end, length) // BLOCK_SIZE)
                if min(end, length) <= start:
                    b1 = b0  # an empty range copies nothing
                for b in range(b0, b1):
                    lo, hi = b * BLOCK_SIZE, min((b + 1) * BLOCK_SIZE, length)
                    if not copied[b] and lo < c.size:
                        part = np.frombuffer(bytes(now[lo:hi]), np.uint8)
                        expect[lo:hi] = 0
                        expect[lo:lo + part.size] = part
                        copied[b] = True
            elif op == "release":
                c.release(start)
                b1 = min(start, length) // BLOCK_SIZE
                expect[:b1 * BLOCK_SIZE] = 0
                copied[:b1] = False
            else:
                new = max(0, len(now) - nblocks * 1000 - extra)
                os.truncate(p, new)
                del now[new:]
            assert np.array_equal(c.buf, expect)
