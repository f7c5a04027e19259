"""native.index_append kernels against the struct oracle (tests/reference/index_append.py)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from kafkalog.native import index_append as ka

from tests.reference import index_append as ref

SETTINGS = settings(max_examples=300, deadline=None)
BASES = st.sampled_from([0, 1000, 2**40, 2**62])
# mostly increasing sequences (the common case) with room for every kind of failure
STEPS = st.lists(st.integers(-3, 2**31 + 5), min_size=0, max_size=40)


def _walk(base: int, start: int, steps: list[int]) -> list[int]:
    out, x = [], base + start
    for s in steps:
        x += s
        out.append(x)
    return out


@SETTINGS
@given(BASES, st.integers(-2, 50), STEPS, st.lists(st.integers(-1, 2**31 + 1), max_size=40),
       st.integers(-1, 100), st.integers(0, 1))
def test_pack_offset_entries_matches_reference(base: int, start: int, steps: list[int],
                                               positions: list[int], last_rel: int,
                                               has_last: int) -> None:
    offsets = _walk(base, start, [abs(s) % 1000 if s > 0 else s for s in steps])
    positions = (positions + [0] * len(offsets))[:len(offsets)]
    expected = ref.pack_offset_entries(offsets, positions, base, base + last_rel, has_last)
    out = np.full(8 * len(offsets), 0xEE, np.uint8)
    n = ka.pack_offset_entries(np.array(offsets, np.int64), np.array(positions, np.int64),
                               base, base + last_rel, has_last, out)
    if expected is None:
        assert n == 0 or not offsets
        assert (out == 0xEE).all()  # nothing written when any entry fails
    else:
        assert n == len(offsets)
        assert out.tobytes() == expected


@SETTINGS
@given(BASES, st.integers(-2, 50), STEPS, st.lists(st.integers(-3, 40), max_size=40),
       st.integers(-2, 100), st.integers(-1, 60), st.integers(0, 1))
def test_pack_time_entries_matches_reference(base: int, start: int, steps: list[int],
                                             ts_steps: list[int], last_ts: int, last_rel: int,
                                             has_last: int) -> None:
    offsets = _walk(base, start, [abs(s) % 1000 if s > 0 else s for s in steps])
    timestamps = _walk(0, -1, (ts_steps + [0] * len(offsets))[:len(offsets)])
    expected = ref.pack_time_entries(timestamps, offsets, base, last_ts, base + last_rel,
                                     has_last)
    out = np.full(12 * len(offsets), 0xEE, np.uint8)
    n = ka.pack_time_entries(np.array(timestamps, np.int64), np.array(offsets, np.int64),
                             base, last_ts, base + last_rel, has_last, out)
    if expected is None:
        assert n == -1
        assert (out == 0xEE).all()
    else:
        assert n * 12 == len(expected)
        assert out[:n * 12].tobytes() == expected
        assert (out[n * 12:] == 0xEE).all()


def test_time_entries_known_vector() -> None:
    out = np.zeros(36, np.uint8)
    n = ka.pack_time_entries(np.array([5, 5, 9], np.int64), np.array([10, 11, 12], np.int64),
                             10, -1, 10, 0, out)
    assert n == 2
    assert out[:24].tobytes() == bytes.fromhex("000000000000000500000000"
                                               "000000000000000900000002")
