"""native.offset_map kernels against the plain-Python SkimpyOffsetMap of
tests/reference/offset_map.py: same table bytes, same answers, same probe statistics."""

from __future__ import annotations

import hashlib

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from kafkalog.native import offset_map as om

from kafkalog.records.builder import encode_batch
from kafkalog.records.record import Record
from tests.reference import offset_map as ref


def _kernel_map(memory: int) -> tuple[np.ndarray, int, np.ndarray]:
    slots = memory // om.BYTES_PER_ENTRY
    state = np.zeros(om.STATE_SIZE, np.int64)
    state[om.S_LAST_OFFSET] = -1
    return np.zeros(slots * om.BYTES_PER_ENTRY, np.uint8), slots, state


def _digest(key: bytes) -> np.ndarray:
    return np.frombuffer(hashlib.md5(key).digest(), np.uint8).copy()


def test_position_of_java_int_arithmetic() -> None:
    # a digest whose int32 at 12 is Integer.MAX_VALUE: linear probing wraps to MIN_VALUE,
    # whose Utils.abs is 0; one whose int32 is MIN_VALUE maps to slot 0 too
    d = np.zeros(16, np.uint8)
    d[12:16] = [0x7F, 0xFF, 0xFF, 0xFF]
    for attempt in (0, 12, 13, 14, 40):
        assert om.position_of(d, 0, np.int64(attempt), np.int64(1000)) == \
            ref.position_of(bytes(d), attempt, 1000)
    d[0:4] = [0x80, 0, 0, 0]
    assert om.position_of(d, 0, np.int64(0), np.int64(7)) == 0 == ref.position_of(bytes(d), 0, 7)


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 40),
       st.lists(st.tuples(st.binary(max_size=6), st.integers(0, 2**40)), max_size=60),
       st.lists(st.binary(max_size=6), max_size=20))
def test_put_get_match_reference(slots: int, puts: list, gets: list) -> None:
    table, n, state = _kernel_map(slots * 24 + 5)
    model = ref.OffsetMapModel(slots * 24 + 5)
    for key, offset in puts:
        if model.entries >= model.slots:
            break
        om.map_put(table, n, state, _digest(key), np.int64(offset))
        model.put(key, offset)
    assert bytes(table) == bytes(model.bytes)
    for key in gets + [k for k, _ in puts]:
        assert om.map_get(table, n, state, _digest(key)) == model.get(key)
    assert (int(state[om.S_ENTRIES]), int(state[om.S_LOOKUPS]), int(state[om.S_PROBES]),
            int(state[om.S_LAST_OFFSET])) == (model.entries, model.lookups, model.probes,
                                              model.last_offset)


_RECORDS = st.lists(st.tuples(st.one_of(st.none(), st.binary(max_size=5)),
                              st.one_of(st.none(), st.binary(max_size=8)),
                              st.integers(0, 3)), min_size=1, max_size=25)


@settings(max_examples=200, deadline=None)
@given(_RECORDS, st.integers(0, 40), st.integers(1, 30), st.integers(0, 100))
def test_put_records_matches_reference(rows: list, start: int, max_entries: int,
                                       base: int) -> None:
    recs, off = [], base
    for i, (key, value, gap) in enumerate(rows):
        off += gap + (1 if i else 0)  # strictly increasing, gaps as after compaction
        recs.append(Record(key, value, 1000, (), off))
    batch = encode_batch(recs, base_offset=base)
    area = batch[61:]
    table, slots, state = _kernel_map(64 * 24)
    model = ref.OffsetMapModel(64 * 24)
    out = np.zeros(2, np.int64)
    rc = om.put_records(np.frombuffer(area, np.uint8), np.int64(0), np.int64(len(area)),
                        np.int64(len(recs)), np.int64(base), np.int64(base + start), table,
                        slots, state, np.int64(max_entries), out)
    status, read = ref.put_records(area, len(recs), base, base + start, model, max_entries)
    assert (rc, int(out[0])) == ({"ok": om.OK, "full": om.FULL}[status], read)
    assert bytes(table) == bytes(model.bytes)


@settings(max_examples=100, deadline=None)
@given(st.binary(min_size=1, max_size=40))
def test_put_records_corrupt_bytes_report_an_error(junk: bytes) -> None:
    table, slots, state = _kernel_map(64 * 24)
    out = np.zeros(2, np.int64)
    try:
        ref.parse_records(junk, 3, 0)
        parses = True
    except ValueError:
        parses = False
    rc = om.put_records(np.frombuffer(junk, np.uint8), np.int64(0), np.int64(len(junk)),
                        np.int64(3), np.int64(0), np.int64(0), table, slots, state,
                        np.int64(100), out)
    assert (rc == om.ERR_CORRUPT) == (not parses)
