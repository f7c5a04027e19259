"""OffsetIndex: Kafka's OffsetIndexTest cases, file-size rules, errors and the real fixture."""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalog.errors import (
    ConfigError,
    CorruptIndexError,
    IndexFullError,
    InvalidOffsetError,
    InvalidRequestError,
    KafkaLogError,
    OffsetOverflowError,
)
from kafkalog.index.offset_index import OffsetIndex, OffsetPosition
from tests.conftest import shared_fixture_path

BASE = 45


@pytest.fixture
def idx(tmp_path: Path):
    i = OffsetIndex(tmp_path / "00000000000000000045.index", BASE, max_index_size=30 * 8)
    yield i
    i.close()


def test_new_file_is_preallocated_rounded_down(tmp_path: Path) -> None:
    p = tmp_path / "a.index"
    i = OffsetIndex(p, 0, max_index_size=1003)
    assert p.stat().st_size == 1000 and i.max_entries == 125 and i.entries == 0
    assert p.read_bytes() == b"\x00" * 1000
    i.close()
    assert p.stat().st_size == 0  # trimmed to its valid entries on close


def test_default_max_index_size_slots(tmp_path: Path) -> None:
    i = OffsetIndex(tmp_path / "b.index", 0)
    assert i.max_entries == 1310720 and i.length == 10485760
    i.close()


def test_max_index_size_below_entry_size_is_rejected(tmp_path: Path) -> None:
    p = tmp_path / "c.index"
    with pytest.raises(ConfigError, match="expected at least 8 bytes, found 7"):
        OffsetIndex(p, 0, max_index_size=7)
    assert not p.exists()


def test_lookup_edge_results(idx: OffsetIndex) -> None:
    assert idx.lookup(BASE) == (BASE, 0)  # empty
    assert idx.last_entry == (BASE, 0)
    idx.append(BASE + 5, 100)
    idx.append(BASE + 10, 250)
    assert idx.lookup(BASE) == (BASE, 0)  # before the first entry
    assert idx.lookup(BASE + 5) == (BASE + 5, 100)
    assert idx.lookup(BASE + 9) == (BASE + 5, 100)
    assert idx.lookup(10**12) == (BASE + 10, 250)
    assert isinstance(idx.lookup(0), OffsetPosition)


def test_lookup_matches_bisect_random(idx: OffsetIndex) -> None:
    rng = np.random.default_rng(7)
    offsets = np.sort(rng.choice(np.arange(BASE, BASE + 1000), size=30, replace=False))
    for j, o in enumerate(offsets):
        idx.append(int(o), j * 10)
    for t in range(BASE - 5, BASE + 1005, 7):
        k = int(np.searchsorted(offsets, t, side="right")) - 1
        want = (BASE, 0) if k < 0 else (int(offsets[k]), k * 10)
        assert idx.lookup(t) == want


def test_lookup_many_equals_lookup(idx: OffsetIndex) -> None:
    for j in range(20):
        idx.append(BASE + 3 * j + 1, 64 * j)
    targets = np.arange(BASE - 3, BASE + 70, dtype=np.int64)
    offsets, positions = idx.lookup_many(targets)
    assert [(int(a), int(b)) for a, b in zip(offsets, positions)] == [
        tuple(idx.lookup(int(t))) for t in targets
    ]
    empty_o, empty_p = OffsetIndex(idx.path.with_suffix(".x"), 7, 80).lookup_many(targets[:3])
    assert empty_o.tolist() == [7, 7, 7] and empty_p.tolist() == [0, 0, 0]


def test_entry_and_entries_array(idx: OffsetIndex) -> None:
    idx.append(BASE + 1, 10)
    idx.append(BASE + 2, 20)
    assert idx.entry(1) == (BASE + 2, 20)
    with pytest.raises(InvalidRequestError, match="entry 2 from an index with 2 entries"):
        idx.entry(2)
    with pytest.raises(ValueError):
        idx.entry(-1)
    arr = idx.entries_array()
    assert arr["relative_offset"].tolist() == [1, 2] and arr["position"].tolist() == [10, 20]
    assert not arr.flags.writeable
    assert np.shares_memory(arr, idx.buffer)  # a view of the mapping, not a copy


def test_append_errors(idx: OffsetIndex) -> None:
    idx.append(BASE + 3, 0)
    with pytest.raises(InvalidOffsetError, match=r"no larger than the last offset appended \(48\)"):
        idx.append(BASE + 3, 10)
    with pytest.raises(InvalidOffsetError):
        idx.append(BASE + 2, 10)
    with pytest.raises(OffsetOverflowError, match="expected 0..2147483647"):
        idx.append(BASE + 2**31, 10)
    assert idx.entries == 1
    for j in range(idx.max_entries - 1):
        idx.append(BASE + 4 + j, j)
    assert idx.is_full()
    with pytest.raises(IndexFullError, match="full index") as e:
        idx.append(BASE + 10**6, 0)
    assert isinstance(e.value, KafkaLogError) and e.value.path == str(idx.path)


def test_first_append_may_equal_base_offset_but_not_below(tmp_path: Path) -> None:
    i = OffsetIndex(tmp_path / "d.index", 100, 80)
    with pytest.raises(OffsetOverflowError):
        i.append(99, 0)
    i.append(100, 0)
    assert i.lookup(100) == (100, 0)
    i.close()


def test_truncate_to_three_cases(idx: OffsetIndex) -> None:
    for j in range(10):
        idx.append(BASE + 2 * j, 100 * j)  # offsets 45, 47, ..., 63
    idx.truncate_to(BASE + 8)  # exact entry: removed with everything after
    assert idx.entries == 4 and idx.last_offset == BASE + 6
    idx.truncate_to(BASE + 5)  # between entries: keep 45, 47, 49 (< 50)
    assert idx.entries == 3 and idx.last_offset == BASE + 4
    idx.truncate_to(BASE + 100)  # beyond: nothing changes
    assert idx.entries == 3
    idx.truncate_to(0)  # before everything
    assert idx.entries == 0 and idx.last_offset == BASE
    idx.append(BASE, 0)  # appends resume after a truncation
    assert idx.lookup(BASE + 100) == (BASE, 0)


def test_close_trims_and_reopen_trusts_every_slot(tmp_path: Path) -> None:
    p = tmp_path / "e.index"
    i = OffsetIndex(p, 0, 800)
    for j in range(5):
        i.append(j * 10, j * 100)
    i.close()
    assert p.stat().st_size == 40
    assert p.read_bytes() == b"".join(struct.pack(">ii", j * 10, j * 100) for j in range(5))
    i = OffsetIndex(p, 0, 800)
    assert i.entries == 5 and i.max_entries == 5 and i.is_full() and i.last_offset == 40
    assert i.resize(800)  # re-extend the active segment's index
    assert i.max_entries == 100 and i.entries == 5 and not i.is_full()
    assert not i.resize(803)  # rounds down to the same size
    i.append(50, 500)
    assert i.lookup(55) == (50, 500)
    i.close()
    assert p.stat().st_size == 48


def test_reopen_untrimmed_file_counts_zero_slots(tmp_path: Path) -> None:
    # what a crash leaves: a preallocated file with a zero tail; every whole slot is trusted
    p = tmp_path / "f.index"
    i = OffsetIndex(p, 0, 80)
    i.append(5, 50)
    i.flush()
    i.close_handler()  # no trim
    i = OffsetIndex(p, 0, 80)
    assert i.entries == 10 and i.entry(1) == (0, 0) and i.last_offset == 0
    i.sanity_check()  # Kafka's check does not see it (last offset == base offset)
    i.close_handler()


def test_sanity_check_errors(tmp_path: Path) -> None:
    p = tmp_path / "00000000000000000100.index"
    p.write_bytes(struct.pack(">ii", 5, 0) + struct.pack(">ii", -3, 8))
    i = OffsetIndex(p, 100, writable=False)
    with pytest.raises(CorruptIndexError, match="last offset is 97") as e:
        i.sanity_check()
    assert e.value.path == str(p) and e.value.offset == 97 and e.value.position == 8
    i.close()
    p.write_bytes(struct.pack(">ii", 5, 0) + b"\x00\x00\x00")
    i = OffsetIndex(p, 100, writable=False)
    assert i.entries == 1  # the partial slot is not read
    with pytest.raises(CorruptIndexError, match="found 11 bytes"):
        i.sanity_check()
    i.close()
    assert p.stat().st_size == 11  # read-only never trims


def test_read_only_mode(tmp_path: Path) -> None:
    p = tmp_path / "g.index"
    with pytest.raises(FileNotFoundError):
        OffsetIndex(p, 0, writable=False)
    assert not p.exists()
    p.write_bytes(b"")
    i = OffsetIndex(p, 0, writable=False)  # a 0-byte file cannot be mmapped: still works
    assert i.entries == 0 and i.lookup(5) == (0, 0) and len(i.entries_array()) == 0
    assert i.lookup_many(np.array([1, 2]))[0].tolist() == [0, 0]
    calls = (lambda: i.append(1, 1), i.truncate, lambda: i.resize(80), lambda: i.truncate_to(0))
    for call in calls:
        with pytest.raises(PermissionError):
            call()
    i.close()
    p.write_bytes(struct.pack(">iiii", 1, 10, 2, 20))
    os.chmod(p, 0o444)
    i = OffsetIndex(p, 0, writable=False)
    assert i.lookup(1) == (1, 10) and i.entries == 2
    i.close()
    assert p.stat().st_size == 16


def test_read_only_index_is_a_copy_the_writer_can_trim(tmp_path: Path) -> None:
    """Issue 16: another process trims the active segment's preallocated index at every roll;
    a read-only index holds its own copy, so it never touches a page past the new end."""
    p = tmp_path / "00000000000000000000.index"
    w = OffsetIndex(p, 0, max_index_size=1 << 20)  # preallocated: 256 pages
    for k in range(1, 41):
        w.append(k * 10, k * 100)
    r = OffsetIndex(p, 0, writable=False)
    assert r.entries == (1 << 20) // 8  # Kafka's count for an existing file: every slot
    w.trim_to_valid_size()  # the roll: the file is 320 bytes now
    assert p.stat().st_size == 320
    arr = r.entries_array()
    assert arr["position"].astype(np.int64)[-1] == 0  # old length, all readable, no fault
    assert r.entry(19) == (200, 2000)
    assert OffsetIndex(p, 0, writable=False).entries == 40  # a new reader sees the trim
    r.close()
    w.close()


def test_empty_writable_file_resize_and_append(tmp_path: Path) -> None:
    p = tmp_path / "h.index"
    p.write_bytes(b"")  # a trimmed index of an inactive segment with no entries
    i = OffsetIndex(p, 0, 80)
    assert i.entries == 0 and i.max_entries == 0 and i.is_full()
    with pytest.raises(IndexFullError):
        i.append(1, 1)
    i.resize(80)
    i.append(1, 1)
    i.close()
    assert p.read_bytes() == struct.pack(">ii", 1, 1)


def test_reset_rename_delete(tmp_path: Path) -> None:
    p = tmp_path / "i.index"
    i = OffsetIndex(p, 0, 80)
    i.append(3, 3)
    i.trim_to_valid_size()
    assert p.stat().st_size == 8
    i.reset()
    assert i.entries == 0 and p.stat().st_size == 80
    q = tmp_path / "i.index.deleted"
    i.rename_to(q)
    assert q.exists() and not p.exists() and i.path == q
    i.append(4, 4)  # mapping survives the rename
    assert i.delete() is True and not q.exists()
    assert i.delete() is False


def test_fetch_upper_bound_offset(idx: OffsetIndex) -> None:
    for j in range(5):
        idx.append(BASE + 10 * j, 1000 * j)  # positions 0, 1000, ..., 4000
    assert idx.fetch_upper_bound_offset(OffsetPosition(BASE, 0), 1500) == (BASE + 20, 2000)
    assert idx.fetch_upper_bound_offset(OffsetPosition(BASE, 1000), 1000) == (BASE + 20, 2000)
    assert idx.fetch_upper_bound_offset(OffsetPosition(BASE, 0), 5000) is None
    # Kafka quirk (see native/index_search.py): an exact match on entry 0 answers entry 1
    assert idx.fetch_upper_bound_offset(OffsetPosition(BASE, 0), 0) == (BASE + 10, 1000)


def test_context_manager_closes(tmp_path: Path) -> None:
    p = tmp_path / "j.index"
    with OffsetIndex(p, 0, 80) as i:
        i.append(0, 0)
    assert p.stat().st_size == 8
    with pytest.raises(ValueError, match="closed"):
        i.append(1, 1)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 10**6), min_size=0, max_size=60, unique=True),
       st.integers(-10, 10**6 + 10))
def test_truncate_then_lookup_property(tmp_path_factory, offsets, cut) -> None:
    d = tmp_path_factory.mktemp("p")
    offsets = sorted(offsets)
    i = OffsetIndex(d / "x.index", 0, 8 * 64)
    for j, o in enumerate(offsets):
        i.append(o, j)
    i.truncate_to(cut)
    kept = [o for o in offsets if o < cut]
    assert i.entries == len(kept)
    assert i.last_offset == (kept[-1] if kept else 0)
    i.close()
    assert (d / "x.index").stat().st_size == 8 * len(kept)


def test_real_kafka_index_fixture() -> None:
    folder = shared_fixture_path("kafka-real", "LDI-POC", "__consumer_offsets-6")
    expected = json.loads((folder.parent / "EXPECTED.json").read_text())["files"]
    want = expected["__consumer_offsets-6/00000000000000000000.index"]
    path = folder / "00000000000000000000.index"
    i = OffsetIndex(path, 0, writable=False)
    i.sanity_check()
    got = [{"relative_offset": e.offset, "offset": e.offset, "position": e.position}
           for e in (i.entry(n) for n in range(i.entries))]
    assert got == [{k: e[k] for k in ("relative_offset", "offset", "position")}
                   for e in want["entries"]]
    assert i.lookup(5) == (3, 4730) and i.lookup(100) == (7, 9571) and i.lookup(2) == (0, 0)
    i.close()


def test_real_kafka_index_rewritten_byte_for_byte(tmp_path: Path) -> None:
    src = shared_fixture_path("kafka-real", "LDI-POC", "__consumer_offsets-6",
                              "00000000000000000000.index")
    r = OffsetIndex(src, 0, writable=False)
    w = OffsetIndex(tmp_path / src.name, 0)
    for n in range(r.entries):
        w.append(*r.entry(n))
    w.close()
    r.close()
    assert (tmp_path / src.name).read_bytes() == src.read_bytes()


def test_lookup_returns_python_ints(idx: OffsetIndex) -> None:
    idx.append(BASE + 1, 7)
    for r in (idx.lookup(BASE + 5), idx.lookup(0), idx.entry(0), idx.last_entry):
        assert type(r.offset) is int and type(r.position) is int
    assert idx.lookup(np.int64(BASE + 5)) == (BASE + 1, 7)


def test_flush_lets_other_threads_run(tmp_path: Path) -> None:
    """CPython's mmap.flush() holds the GIL for the whole msync: a server's event loop and every
    other thread of the process stopped for as long as the disk took (a roll, a flush, a close).
    The flush must leave other threads running."""
    import threading
    import time

    size = 256 << 20
    idx = OffsetIndex(tmp_path / "00000000000000000000.index", 0, max_index_size=size)
    try:
        for i in range(1000):
            idx.append(i, i * 100)
        # dirty every page of the mapping, as a long-lived active index is (entries beyond the
        # appended ones are not read: the entry count is what the index holds)
        idx._mmap[8000:size] = b"\x00" * (size - 8000)
        ticks = 0
        stop = threading.Event()

        def tick() -> None:
            nonlocal ticks
            while not stop.is_set():
                ticks += 1
                time.sleep(0.001)

        t = threading.Thread(target=tick)
        t.start()
        time.sleep(0.02)
        before = ticks
        start = time.perf_counter()
        idx.flush()
        took_ms = (time.perf_counter() - start) * 1000
        during = ticks - before
        stop.set()
        t.join()
        # a ticker that gets the GIL back within a few ms ticks at least once per ~2-4 ms
        assert during >= took_ms / 8 - 2, (during, took_ms)
        assert idx.lookup(999) == (999, 99900)
    finally:
        idx.close()


def _vm_flags(path: Path) -> list[list[str]]:
    """The VmFlags of each of this process's mappings of ``path``, in address order (Linux's
    /proc/self/smaps; advice on part of a mapping splits it)."""
    out, current = [], None
    with open("/proc/self/smaps") as f:
        for line in f:
            parts = line.split()
            if parts and "-" in parts[0] and len(parts) >= 5:  # a mapping's header line
                current = parts[5] if len(parts) >= 6 else None
            elif line.startswith("VmFlags:") and current == str(path):
                out.append(parts[1:])
    assert out, f"{path} is not mapped"
    return out


@pytest.mark.skipif(not os.path.exists("/proc/self/smaps"), reason="needs Linux's smaps")
def test_preallocated_room_is_mapped_without_read_around(tmp_path: Path) -> None:
    """A writable index advises MADV_RANDOM ("rr" in VmFlags) on its preallocated room only:
    a first write into a new index then faults one page, not read_ahead_kb of zeroed page
    cache, while the pages holding entries keep the default read-around for cold lookups."""
    path = tmp_path / "00000000000000000000.index"
    idx = OffsetIndex(path, 0, max_index_size=1 << 20)
    assert [("rr" in f) for f in _vm_flags(path)] == [True]  # all room
    for i in range(600):  # 4,800 bytes: the second page is partly written
        idx.append(i, 10 * i)
    idx.trim_to_valid_size()
    idx.close()
    idx = OffsetIndex(path, 0, max_index_size=1 << 20)  # reopened: entries up to the end
    assert [("rr" in f) for f in _vm_flags(path)] == [False, True]  # (the partial page)
    idx.resize(1 << 20)  # the active segment's index extended again
    assert [("rr" in f) for f in _vm_flags(path)] == [False, True]
    assert idx.entries == 600 and idx.lookup(599).position == 5990
    idx.append(600, 6000)
    assert idx.lookup(600).position == 6000
    idx.close()
