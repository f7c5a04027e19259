"""native.index_search kernels against the Kafka-step oracle and numpy.searchsorted."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafkalog.native import index_search as ks

from tests.reference import index_search as ref

SETTINGS = settings(max_examples=200, deadline=None)

# (entry_size, key_pos, key_size, struct format of one entry, which field is the key)
LAYOUTS = {
    "offset-key": (8, 0, 4),
    "offset-value": (8, 4, 4),
    "time-key": (12, 0, 8),
    "time-value": (12, 8, 4),
}


def _pack(layout: str, keys: list[int]) -> bytes:
    entry_size, key_pos, key_size = LAYOUTS[layout]
    out = bytearray()
    for k in keys:
        # the other field holds junk so that reading the wrong field would show
        e = bytearray(b"\x5a" * entry_size)
        struct.pack_into(">q" if key_size == 8 else ">i", e, key_pos, k)
        out += e
    return bytes(out)


def _kernel(buf: bytes, n: int, layout: str, base: int, target: int, st_: int) -> int:
    es, kp, kz = LAYOUTS[layout]
    return int(ks.index_slot_for(np.frombuffer(buf, np.uint8), n, es, kp, kz, base, target, st_))


def _ref(buf: bytes, n: int, layout: str, base: int, target: int, st_: int) -> int:
    es, kp, kz = LAYOUTS[layout]
    return ref.index_slot_for(buf, n, es, kp, kz, base, target, st_)


INT32 = st.integers(-(2**31), 2**31 - 1)
INT64 = st.integers(-(2**63) + 2**31, 2**63 - 2**31)


@st.composite
def index_cases(draw: st.DrawFn, sorted_keys: bool) -> tuple[str, list[int], int, list[int]]:
    layout = draw(st.sampled_from(sorted(LAYOUTS)))
    key_size = LAYOUTS[layout][2]
    lo_k, hi_k = (-(2**31), 2**31 - 1) if key_size == 4 else (-(2**62), 2**62)
    # sizes around the warm-section boundary (1024 offset / 682 time entries) matter most;
    # big key lists come from a drawn seed (numpy) so generating them stays cheap
    n = draw(st.one_of(st.integers(0, 40), st.integers(660, 1100)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if n <= 40:
        elem = st.integers(lo_k, hi_k)
        keys = draw(st.lists(elem, min_size=n, max_size=n, unique=sorted_keys))
        if sorted_keys:
            keys.sort()
    elif sorted_keys:
        max_gap = 4 if key_size == 4 else 2**20
        start = int(rng.integers(lo_k, hi_k - max_gap * (n + 1)))
        keys = (start + np.cumsum(rng.integers(1, max_gap + 1, n))).tolist()
    else:
        keys = rng.integers(lo_k, hi_k, n).tolist()
    base = draw(st.sampled_from([0, 1000, 2**40])) if key_size == 4 else 0
    lo = (min(keys) + base - 3) if keys else -5
    hi = (max(keys) + base + 3) if keys else 5
    targets = draw(
        st.lists(
            st.one_of(st.integers(lo, hi), st.sampled_from([k + base for k in keys] or [0])),
            min_size=1,
            max_size=30,
        )
    )
    return layout, keys, base, targets


@SETTINGS
@given(index_cases(sorted_keys=False), st.sampled_from([0, 1]))
def test_kernel_matches_kafka_steps_on_any_keys(case, search_type) -> None:
    layout, keys, base, targets = case
    buf = _pack(layout, keys)
    for t in targets:
        assert _kernel(buf, len(keys), layout, base, t, search_type) == _ref(
            buf, len(keys), layout, base, t, search_type
        )


@SETTINGS
@given(index_cases(sorted_keys=True))
def test_largest_lower_bound_equals_searchsorted(case) -> None:
    layout, keys, base, targets = case
    buf = _pack(layout, keys)
    absolute = np.array(keys, dtype=np.int64) + base
    for t in targets:
        expected = int(np.searchsorted(absolute, t, side="right")) - 1
        assert _kernel(buf, len(keys), layout, base, t, ks.LARGEST_LOWER_BOUND) == expected


@SETTINGS
@given(index_cases(sorted_keys=True))
def test_smallest_upper_bound_equals_searchsorted_except_kafka_quirk(case) -> None:
    layout, keys, base, targets = case
    buf = _pack(layout, keys)
    absolute = np.array(keys, dtype=np.int64) + base
    n = len(keys)
    for t in targets:
        i = int(np.searchsorted(absolute, t, side="left"))
        expected = -1 if i == n else i
        # Kafka quirk: a target equal to entry 0 always takes the cold branch, whose binary
        # search never compares its initial lo, so the answer is slot 1 (-1 for one entry)
        if n and t == absolute[0]:
            expected = 1 if n > 1 else -1
        assert _kernel(buf, n, layout, base, t, ks.SMALLEST_UPPER_BOUND) == expected


@SETTINGS
@given(index_cases(sorted_keys=True), st.sampled_from([0, 1]))
def test_batched_equals_single(case, search_type) -> None:
    layout, keys, base, targets = case
    es, kp, kz = LAYOUTS[layout]
    buf = np.frombuffer(_pack(layout, keys), np.uint8)
    t = np.array(targets, dtype=np.int64)
    out = np.full(t.shape[0], 99, dtype=np.int64)
    assert ks.index_slots_for(buf, len(keys), es, kp, kz, base, t, search_type, out) == 0
    single = [_kernel(buf.tobytes(), len(keys), layout, base, x, search_type) for x in targets]
    assert out.tolist() == single
    ref_out = [0] * len(targets)
    assert ref.index_slots_for(buf.tobytes(), len(keys), es, kp, kz, base, targets,
                               search_type, ref_out) == 0
    assert ref_out == single


def test_warm_section_boundary_offsets() -> None:
    # 2000 entries: warm section is [2000-1-1024, 1999]; probe around its first entry
    keys = list(range(0, 20000, 10))
    buf = _pack("offset-key", keys)
    first_hot = len(keys) - 1 - 1024
    for t in (keys[first_hot] - 1, keys[first_hot], keys[first_hot] + 1, -1, 0, 19990, 10**6):
        expected = int(np.searchsorted(np.array(keys), t, side="right")) - 1
        assert _kernel(buf, len(keys), "offset-key", 0, t, 0) == expected


def test_quirk_exact_match_on_first_entry_answers_next_slot() -> None:
    buf = _pack("offset-value", [0, 4096, 8192])
    assert _kernel(buf, 3, "offset-value", 0, 0, ks.SMALLEST_UPPER_BOUND) == 1
    assert _kernel(buf, 1, "offset-value", 0, 0, ks.SMALLEST_UPPER_BOUND) == -1
    assert _kernel(buf, 3, "offset-value", 0, 4096, ks.SMALLEST_UPPER_BOUND) == 1
    assert _kernel(buf, 3, "offset-value", 0, -5, ks.SMALLEST_UPPER_BOUND) == 0
    assert _kernel(buf, 3, "offset-value", 0, 9000, ks.SMALLEST_UPPER_BOUND) == -1


def test_empty_and_error_codes() -> None:
    buf = np.zeros(16, np.uint8)
    assert ks.index_slot_for(buf, 0, 8, 0, 4, 0, 5, 0) == ks.NOT_FOUND
    assert ks.index_slot_for(buf, 3, 8, 0, 4, 0, 5, 0) == ks.ERR_BUFFER_TOO_SHORT
    # entries * entry_size overflows int64: still refused, never read out of bounds
    assert ks.index_slot_for(buf, 2**61 + 1, 8, 0, 4, 0, 5, 0) == ks.ERR_BUFFER_TOO_SHORT
    assert ks.offset_index_lookup(buf, 2**61 + 1, 0, 5)[0] == ks.ERR_BUFFER_TOO_SHORT
    assert ks.index_slot_for(buf, 1, 8, 6, 4, 0, 5, 0) == ks.ERR_BAD_LAYOUT
    assert ks.index_slot_for(buf, 1, 8, 0, 3, 0, 5, 0) == ks.ERR_BAD_LAYOUT
    assert ks.index_slot_for(buf, 1, 8, 0, 4, 0, 5, 7) == ks.ERR_BAD_LAYOUT
    assert ks.index_slot_for(buf, -1, 8, 0, 4, 0, 5, 0) == ks.ERR_BAD_LAYOUT
    assert ks.index_slot_for(buf, 1, 0, 0, 4, 0, 5, 0) == ks.ERR_BAD_LAYOUT
    out = np.zeros(1, np.int64)
    t = np.array([1, 2], np.int64)
    assert ks.index_slots_for(buf, 1, 8, 0, 4, 0, t, 0, out) == ks.ERR_BAD_LAYOUT
    assert ks.index_slots_for(buf, 5, 8, 0, 4, 0, t[:1], 0, out) == ks.ERR_BUFFER_TOO_SHORT
    for args in ((3, 8, 0, 4), (1, 8, 6, 4), (1, 8, 0, 3)):
        assert ref.index_slot_for(buf.tobytes(), *args, 0, 5, 0) == ks.index_slot_for(
            buf, *args, 0, 5, 0
        )


@SETTINGS
@given(index_cases(sorted_keys=False))
def test_entry_lookup_kernels_match_reference(case) -> None:
    layout, keys, base, targets = case
    n = len(keys)
    if layout.startswith("offset"):
        buf = b"".join(struct.pack(">ii", k, (k * 7) & 0x7FFFFFFF) for k in keys)
        kern, oracle = ks.offset_index_lookup, ref.offset_index_lookup
    else:
        # time index: 64-bit timestamp keys, relative offsets in the value field
        buf = b"".join(struct.pack(">qi", k, k & 0x7FFFFFFF) for k in keys)
        kern, oracle = ks.time_index_lookup, ref.time_index_lookup
        targets = [t - base for t in targets]  # timestamps are not relative
    arr = np.frombuffer(buf, np.uint8)
    for t in targets:
        assert tuple(int(x) for x in kern(arr, n, base, t)) == oracle(buf, n, base, t)
    # a buffer too short for the entries is an error code, never a read past the end
    if n:
        assert int(kern(arr[:-1], n, base, targets[0])[0]) == ks.ERR_BUFFER_TOO_SHORT
    assert kern(arr, n, base, targets[0])[0] >= ks.NOT_FOUND


def test_batched_large_index_interleaved_equals_plain_search() -> None:
    rng = np.random.default_rng(3)
    n = ks.INTERLEAVE_MIN_BYTES // 8 + 1000  # large enough for the interleaved path
    keys = np.cumsum(rng.integers(1, 9, n))
    raw = np.empty(keys.size, dtype=[("r", ">i4"), ("p", ">i4")])
    raw["r"] = keys
    buf = np.frombuffer(raw.tobytes(), np.uint8)
    targets = np.concatenate([rng.integers(-5, int(keys[-1]) + 5, 997), keys[:40], keys[-40:]])
    for search_type in (ks.LARGEST_LOWER_BOUND, ks.SMALLEST_UPPER_BOUND):
        out = np.empty(targets.size, np.int64)
        assert ks.index_slots_for(buf, keys.size, 8, 0, 4, 0, targets, search_type, out) == 0
        single = [int(ks.index_slot_for(buf, keys.size, 8, 0, 4, 0, int(t), search_type))
                  for t in targets]
        assert out.tolist() == single
    lo = np.searchsorted(keys, targets, side="right") - 1
    out = np.empty(targets.size, np.int64)
    ks.index_slots_for(buf, keys.size, 8, 0, 4, 0, targets, ks.LARGEST_LOWER_BOUND, out)
    assert np.array_equal(out, lo)


@SETTINGS
@given(index_cases(sorted_keys=False), st.data())
def test_gather_entries_matches_reference(case, data) -> None:
    layout, keys, base, _ = case
    es, kp, kz = LAYOUTS[layout]
    # the other field of the entry is the value
    value_field = {(8, 0): (4, 4), (8, 4): (0, 4), (12, 0): (8, 4), (12, 8): (0, 8)}
    vp, vz = value_field[(es, kp)]
    raw = _pack(layout, keys)
    buf = np.frombuffer(raw, np.uint8)
    n = len(keys)
    slots = data.draw(st.lists(st.integers(-1, n - 1) if n else st.just(-1), max_size=20))
    if data.draw(st.booleans()):
        slots.append(data.draw(st.sampled_from([n, -2, 10**6])))  # out of range: an error
    k = np.zeros(len(slots), np.int64)
    v = np.zeros(len(slots), np.int64)
    status = ks.gather_entries(buf, n, es, kp, kz, base, vp, vz, 3, np.array(slots, np.int64),
                               -7, -9, k, v)
    rk, rv = [0] * len(slots), [0] * len(slots)
    assert status == ref.gather_entries(raw, n, es, kp, kz, base, vp, vz, 3, slots, -7, -9, rk, rv)
    if status == 0:
        assert k.tolist() == rk and v.tolist() == rv
        for i, sl in enumerate(slots):
            if sl >= 0:
                assert k[i] == keys[sl] + base


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_works_on_a_readonly_buffer(layout: str) -> None:
    buf = _pack(layout, [1, 2, 3])
    ro = np.frombuffer(buf, np.uint8)  # bytes -> read-only array, like an ACCESS_READ mmap
    assert not ro.flags.writeable
    es, kp, kz = LAYOUTS[layout]
    assert ks.index_slot_for(ro, 3, es, kp, kz, 0, 2, 0) == 1
