"""native.console_lines kernels against tests/reference/console_lines.py."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from kafkalog.native import console_lines as kl

from tests.reference import console_lines as ref

_INT64 = st.integers(-(1 << 63), (1 << 63) - 1)
_ROWS = st.lists(st.tuples(_INT64, st.sampled_from([0, 1, -1, 7]), _INT64,
                           st.none() | st.binary(max_size=8), st.none() | st.binary(max_size=8),
                           st.binary(max_size=6)),
                 min_size=0, max_size=30)


def _column(items: list[bytes | None]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    data = b"".join(b or b"" for b in items)
    offsets = np.zeros(len(items) + 1, np.int64)
    offsets[1:] = np.cumsum([len(b or b"") for b in items])
    valid = np.array([b is not None for b in items], np.uint8)
    return np.frombuffer(data, np.uint8).copy(), offsets, valid


@settings(max_examples=300, deadline=None)
@given(_ROWS, st.integers(0, 255), st.integers(-(1 << 31), (1 << 31) - 1),
       st.sampled_from([b"\t", b"", b"<sep>"]), st.sampled_from([b"\n", b"", b"\r\n"]),
       st.sampled_from([b"null", b"", b"<null>"]))
def test_kernel_matches_reference(rows, fields, partition, key_sep, line_sep, null):
    ts = np.array([r[0] for r in rows], np.int64)
    tt = np.array([r[1] for r in rows], np.int32)
    offs = np.array([r[2] for r in rows], np.int64)
    kd, ko, kv = _column([r[3] for r in rows])
    vd, vo, vv = _column([r[4] for r in rows])
    hd, ho, _ = _column([r[5] for r in rows])
    n = len(rows)
    ks, ls, nl = (np.frombuffer(x, np.uint8) for x in (key_sep, line_sep, null))
    sizes = np.empty(n, np.int64)
    total = kl.line_sizes(fields, n, ts, tt, offs, partition, ko, kv, vo, vv, ho, len(ks),
                          len(ls), len(nl), sizes)
    out = np.empty(total, np.uint8)
    written = kl.write_lines(fields, n, ts, tt, offs, partition, kd, ko, kv, vd, vo, vv, hd,
                             ho, ks, ls, nl, out)
    want = ref.format_lines(fields, [r[0] for r in rows], [r[1] for r in rows],
                            [r[2] for r in rows], partition, [r[3] for r in rows],
                            [r[4] for r in rows], [r[5] for r in rows], key_sep, line_sep, null)
    assert written == total == len(want)
    assert out.tobytes() == want
    if n:
        # each size is its own line's length
        cuts = np.concatenate([[0], np.cumsum(sizes)])
        assert [out[cuts[i]:cuts[i + 1]].tobytes() for i in range(n)] == [
            ref.format_lines(fields, [r[0]], [r[1]], [r[2]], partition, [r[3]], [r[4]], [r[5]],
                             key_sep, line_sep, null) for r in rows]
