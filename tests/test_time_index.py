"""TimeIndex: Kafka's TimeIndexTest cases, the reserved last slot, errors and the real fixture."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalog.errors import CorruptIndexError, IndexFullError, InvalidOffsetError
from kafkalog.index.time_index import NO_TIMESTAMP, TimeIndex, TimestampOffset
from tests.conftest import shared_fixture_path

BASE = 45


@pytest.fixture
def idx(tmp_path: Path):
    i = TimeIndex(tmp_path / "00000000000000000045.timeindex", BASE, max_index_size=30 * 12)
    yield i
    i.close()


def test_preallocation_and_default_slots(tmp_path: Path) -> None:
    i = TimeIndex(tmp_path / "a.timeindex", 0)
    assert i.length == 10485756 and i.max_entries == 873813
    i.close()
    assert (tmp_path / "a.timeindex").stat().st_size == 0


def test_lookup_edge_results(idx: TimeIndex) -> None:
    assert idx.lookup(0) == (NO_TIMESTAMP, BASE)
    assert idx.last_entry == (-1, BASE)
    for j in range(10):
        idx.maybe_append(100 + j * 10, BASE + j * 3)  # ts 100..190
    assert idx.lookup(99) == (-1, BASE)
    assert idx.lookup(100) == (100, BASE)
    assert idx.lookup(155) == (150, BASE + 15)
    assert idx.lookup(10**15) == (190, BASE + 27)
    assert isinstance(idx.lookup(0), TimestampOffset)


def test_maybe_append_rules(idx: TimeIndex) -> None:
    idx.maybe_append(-1, BASE)  # -1 is never indexed
    idx.maybe_append(NO_TIMESTAMP - 5, BASE)
    assert idx.entries == 0
    idx.maybe_append(1000, BASE + 1)
    idx.maybe_append(1000, BASE + 1)  # the same entry again: ignored (close/roll)
    idx.maybe_append(1000, BASE + 5)  # same timestamp, later offset: ignored
    assert idx.entries == 1 and idx.last_entry == (1000, BASE + 1)
    idx.maybe_append(1001, BASE + 5)
    idx.maybe_append(1002, BASE + 5)  # equal offset with a larger timestamp is allowed
    assert idx.entries == 3
    with pytest.raises(InvalidOffsetError, match=r"offset \(49\).*\(50\)") as e:
        idx.maybe_append(2000, BASE + 4)
    assert e.value.path == str(idx.path)
    with pytest.raises(InvalidOffsetError, match="last timestamp appended \\(1002\\)"):
        idx.maybe_append(999, BASE + 9)
    assert idx.entries == 3


def test_is_full_reserves_last_slot(idx: TimeIndex) -> None:
    for j in range(idx.max_entries - 1):
        idx.maybe_append(10 + j, BASE + j)
    assert idx.is_full() and idx.entries == idx.max_entries - 1
    with pytest.raises(IndexFullError, match="full time index"):
        idx.maybe_append(10**6, BASE + 1000)
    idx.maybe_append(10**6, BASE + 1000, skip_full_check=True)  # the roll/close entry
    assert idx.entries == idx.max_entries
    with pytest.raises(IndexFullError, match="no slot left"):
        idx.maybe_append(10**6 + 1, BASE + 1001, skip_full_check=True)
    idx.maybe_append(10**6, BASE + 1000, skip_full_check=True)  # same entry: still ignored


def test_truncate_to_uses_offsets(idx: TimeIndex) -> None:
    for j in range(10):
        idx.maybe_append(100 + j, BASE + 2 * j)  # offsets 45, 47, ..., 63
    idx.truncate_to(BASE + 8)
    assert idx.entries == 4 and idx.last_entry == (103, BASE + 6)
    idx.truncate_to(BASE + 5)
    assert idx.entries == 3 and idx.last_entry == (102, BASE + 4)
    idx.truncate_to(BASE + 1000)
    assert idx.entries == 3
    idx.truncate_to(BASE)
    assert idx.entries == 0 and idx.last_entry == (-1, BASE)
    idx.maybe_append(5, BASE)  # after truncation any timestamp > -1 can be appended again
    assert idx.entries == 1


def test_lookup_many_equals_lookup(idx: TimeIndex) -> None:
    for j in range(25):
        idx.maybe_append(1_700_000_000_000 + 7 * j, BASE + j)
    targets = np.arange(1_700_000_000_000 - 5, 1_700_000_000_000 + 200, 3, dtype=np.int64)
    ts, offs = idx.lookup_many(targets)
    assert list(zip(ts.tolist(), offs.tolist())) == [tuple(idx.lookup(int(t))) for t in targets]
    arr = idx.entries_array()
    assert arr["timestamp"][3] == 1_700_000_000_021 and arr["relative_offset"][3] == 3
    assert np.shares_memory(arr, idx.buffer)


def test_close_reopen_resize_keeps_last_entry(tmp_path: Path) -> None:
    p = tmp_path / "b.timeindex"
    i = TimeIndex(p, 100, 1200)
    i.maybe_append(5, 101)
    i.maybe_append(9, 104)
    i.close()
    assert p.read_bytes() == struct.pack(">qi", 5, 1) + struct.pack(">qi", 9, 4)
    i = TimeIndex(p, 100, 1200)
    assert i.entries == 2 and i.last_entry == (9, 104) and i.is_full()
    i.resize(1200)
    assert i.max_entries == 100 and i.last_entry == (9, 104) and not i.is_full()
    i.maybe_append(12, 110)
    assert i.entry(2) == (12, 110)
    with pytest.raises(ValueError):
        i.entry(3)
    i.close()


def test_sanity_check_errors(tmp_path: Path) -> None:
    p = tmp_path / "00000000000000000100.timeindex"
    p.write_bytes(struct.pack(">qi", 50, 1) + struct.pack(">qi", 40, 2))
    i = TimeIndex(p, 100, writable=False)
    with pytest.raises(CorruptIndexError, match="last timestamp is 40 .* first timestamp 50"):
        i.sanity_check()
    i.close()
    p.write_bytes(struct.pack(">qi", 50, 1) + struct.pack(">qi", 60, -2))
    i = TimeIndex(p, 100, writable=False)
    with pytest.raises(CorruptIndexError, match="last offset is 98") as e:
        i.sanity_check()
    assert e.value.offset == 98 and e.value.position == 12
    i.close()
    p.write_bytes(struct.pack(">qi", 50, 1) + b"\x01" * 5)
    i = TimeIndex(p, 100, writable=False)
    assert i.entries == 1
    with pytest.raises(CorruptIndexError, match="found 17 bytes"):
        i.sanity_check()
    i.close()


def test_empty_readonly_file(tmp_path: Path) -> None:
    p = tmp_path / "c.timeindex"
    p.write_bytes(b"")
    i = TimeIndex(p, 7, writable=False)
    i.sanity_check()
    assert i.lookup(100) == (-1, 7) and i.last_entry == (-1, 7)
    assert i.lookup_many(np.array([1], np.int64))[1].tolist() == [7]
    with pytest.raises(PermissionError):
        i.maybe_append(1, 7)
    i.close()


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 10**13), st.integers(0, 500)), max_size=80),
       st.lists(st.integers(-5, 10**13), min_size=1, max_size=20))
def test_maybe_append_sequence_property(tmp_path_factory, appends, targets) -> None:
    """Whatever sequence of maybe_append calls, the index holds exactly the entries a model
    keeps (strictly increasing timestamps, non-decreasing offsets) and lookups agree."""
    d = tmp_path_factory.mktemp("t")
    i = TimeIndex(d / "x.timeindex", 0, 12 * 100)
    model: list[tuple[int, int]] = []
    for ts, off in appends:
        last = model[-1] if model else (-1, 0)
        if model and (off < last[1] or ts < last[0]):
            with pytest.raises(InvalidOffsetError):
                i.maybe_append(ts, off)
            continue
        i.maybe_append(ts, off)
        if ts > last[0]:
            model.append((ts, off))
    assert [tuple(i.entry(n)) for n in range(i.entries)] == model
    for t in targets:
        below = [e for e in model if e[0] <= t]
        assert tuple(i.lookup(t)) == (below[-1] if below else (-1, 0))
    i.close()


def test_real_kafka_timeindex_fixture(tmp_path: Path) -> None:
    folder = shared_fixture_path("kafka-real", "LDI-POC", "__consumer_offsets-6")
    expected = json.loads((folder.parent / "EXPECTED.json").read_text())["files"]
    want = expected["__consumer_offsets-6/00000000000000000000.timeindex"]["entries"]
    src = folder / "00000000000000000000.timeindex"
    r = TimeIndex(src, 0, writable=False)
    r.sanity_check()
    assert [(e.timestamp, e.offset) for e in map(r.entry, range(r.entries))] == [
        (e["timestamp"], e["offset"]) for e in want
    ]
    arr = r.entries_array()
    assert arr["relative_offset"].tolist() == [e["relative_offset"] for e in want]
    assert r.lookup(want[1]["timestamp"] + 1) == (want[1]["timestamp"], want[1]["offset"])
    w = TimeIndex(tmp_path / src.name, 0)
    for n in range(r.entries):
        w.maybe_append(*r.entry(n))
    w.close()
    r.close()
    assert (tmp_path / src.name).read_bytes() == src.read_bytes()


def test_lookup_returns_python_ints(idx: TimeIndex) -> None:
    idx.maybe_append(100, BASE + 1)
    for r in (idx.lookup(150), idx.lookup(0), idx.entry(0), idx.last_entry):
        assert type(r.timestamp) is int and type(r.offset) is int
