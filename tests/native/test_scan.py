"""native.scan kernels against the plain-Python oracle in tests/reference/scan.py."""

from __future__ import annotations

import struct

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from kafkalog.native import scan

from tests.reference import scan as ref

VECTOR_A = bytes.fromhex(
    "00000000000000000000003d0000000002e641a44b0000000000000000018bcfe568000000018bcfe568"
    "00ffffffffffffffffffffffffffff0000000116000000010a68656c6c6f00"
)
VECTOR_V1 = bytes.fromhex(
    "00000000000000000000001b8ee30bba01000000018bcfe56800ffffffff0000000568656c6c6f"
)
VECTOR_V0 = bytes.fromhex("00000000000000000000001387a77ab20000ffffffff0000000568656c6c6f")


def _kernel(buf: bytes, start: int = 0, end: int | None = None) -> dict:
    return scan.scan_entries(np.frombuffer(buf, np.uint8), start, end)


def _as_rows(out: dict) -> list[tuple[int, ...]]:
    cols = ["positions", "sizes", "base_offsets", "last_offsets", "max_timestamps", "magics",
            "attributes", "record_counts", "leader_epochs", "crcs"]
    return [tuple(int(out[c][i]) for c in cols) for i in range(out["count"])]


def _entry(magic: int, offset: int, body_len: int, ts: int = 5) -> bytes:
    """A syntactically plausible entry (CRC not meaningful: the scan does not check CRCs)."""
    if magic == 2:
        body_len = max(body_len, 49)
        hdr = struct.pack(">qiibIhiqqqhii", offset, body_len, 7, 2, 123, 0, 3, ts, ts + 1,
                          -1, -1, -1, 4)
        return hdr + b"\x00" * (body_len - 49)
    body_len = max(body_len, 14 if magic == 0 else 22)
    body = struct.pack(">Ibb", 99, magic, 0)
    if magic == 1:
        body += struct.pack(">q", ts)
    body += b"\xff" * (body_len - len(body))
    return struct.pack(">qi", offset, body_len) + body


def test_vectors_from_spec() -> None:
    out = _kernel(VECTOR_A + VECTOR_V1 + VECTOR_V0)
    assert out["count"] == 3 and out["stop_reason"] == scan.STOP_END
    assert _as_rows(out) == [
        (0, 73, 0, 0, 1700000000000, 2, 0, 1, 0, 3863061579),
        (73, 39, 0, 0, 1700000000000, 1, 0, 1, -1, 2397244346),
        (112, 31, 0, 0, -1, 0, 0, 1, -1, 2275900082),
    ]


def test_zero_filled_tail_is_corrupt_not_eof() -> None:
    out = _kernel(VECTOR_A + b"\x00" * 64)
    stop = (out["count"], out["stop_position"], out["stop_reason"])
    assert stop == (1, 73, scan.STOP_CORRUPT_SIZE)


def test_partial_trailing_entry_stops_silently() -> None:
    for cut in range(1, len(VECTOR_A)):
        out = _kernel(VECTOR_A + VECTOR_A[:cut])
        assert out["count"] == 1
        assert out["stop_position"] == 73
        assert out["stop_reason"] == scan.STOP_PARTIAL


def test_bad_magic_and_short_v2() -> None:
    bad = bytearray(VECTOR_A)
    bad[16] = 7
    assert _kernel(bytes(bad))["stop_reason"] == scan.STOP_BAD_MAGIC
    short = struct.pack(">qib", 0, 20, 0) + b"\x00\x00\x00\x02" + b"\x00" * 16
    short = short[:16] + b"\x02" + short[17:]
    assert _kernel(short)["stop_reason"] == scan.STOP_SHORT_V2


def test_limit_and_resume() -> None:
    buf = VECTOR_A * 5
    out = scan.scan_entries(np.frombuffer(buf, np.uint8), 0, None, max_entries=2)
    assert (out["count"], out["stop_position"], out["stop_reason"]) == (2, 146, scan.STOP_LIMIT)
    rest = _kernel(buf, out["stop_position"])
    assert rest["count"] == 3 and list(rest["positions"]) == [146, 219, 292]


entries = st.lists(
    st.tuples(st.sampled_from([0, 1, 2]), st.integers(0, 2**40), st.integers(0, 200)),
    max_size=20,
)


@settings(max_examples=300, deadline=None)
@given(entries=entries, tail=st.binary(max_size=80), start=st.integers(-3, 50),
       cut=st.integers(0, 10_000))
def test_kernel_matches_reference_on_plausible_logs(entries, tail, start, cut) -> None:
    buf = b"".join(_entry(m, o, n) for m, o, n in entries) + tail
    end = min(cut, len(buf)) if cut < len(buf) else len(buf)
    out = _kernel(buf, start, end)
    n, stop, reason = ref.count_entries(buf, start, end, 1 << 62)
    assert (out["count"], out["stop_position"], out["stop_reason"]) == (n, stop, reason)
    assert _as_rows(out) == ref.fill_entries(buf, start, n)


@settings(max_examples=300, deadline=None)
@given(buf=st.binary(max_size=400), start=st.integers(-3, 400), end=st.integers(0, 500))
def test_kernel_matches_reference_on_arbitrary_bytes(buf, start, end) -> None:
    out = _kernel(buf, start, end)
    n, stop, reason = ref.count_entries(buf, start, end, 1 << 62)
    assert (out["count"], out["stop_position"], out["stop_reason"]) == (n, stop, reason)
    assert _as_rows(out) == ref.fill_entries(buf, start, n)
