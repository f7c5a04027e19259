"""native.legacy_decode against plain-Python references: ``legacy._parse_message`` (the object
path's own parser) for :func:`parse_messages`, a direct walk of ``[offset][size][message]`` for
:func:`walk_inner`, slicing for :func:`gather`; on well-formed and arbitrary bytes."""

from __future__ import annotations

import struct

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from kafkalog.native import legacy_decode as ld

from kafkalog.records.legacy import _Malformed, _parse_message, encode_legacy_message

from .damage import damaged

blob = st.one_of(st.none(), st.binary(max_size=30))


@st.composite
def messages(draw: st.DrawFn) -> bytes:
    """A message body (CRC field .. end): well formed, or damaged / arbitrary."""
    body = encode_legacy_message(0, draw(blob), draw(blob), magic=draw(st.sampled_from([0, 1])),
                                 timestamp=draw(st.integers(-1, 2**40)),
                                 attributes=draw(st.integers(0, 15)))[12:]
    return damaged(draw, body, ("whole", "cut", "flip", "random"), 60)


def _ref_parse(buf: bytes, s: int, e: int) -> tuple | None:
    try:
        magic, attrs, ts, key, value = _parse_message(memoryview(buf), s, e)
    except _Malformed:
        return None
    return magic, attrs, ts, key, value


@settings(max_examples=400, deadline=None)
@given(bodies=st.lists(messages(), min_size=1, max_size=12), pad=st.integers(0, 5))
def test_parse_messages_equals_the_object_parser(bodies: list[bytes], pad: int) -> None:
    buf = b"\xee" * pad + b"".join(bodies) + b"\xee" * 8  # neighbours must never be read
    starts, ends, p = [], [], pad
    for body in bodies:
        starts.append(p)
        ends.append(p + len(body))
        p += len(body)
    n = len(bodies)
    out = [np.empty(n, np.uint8), np.empty(n, np.uint8)] + [np.empty(n, np.int64)
                                                               for _ in range(5)]
    arr = np.frombuffer(buf, np.uint8)
    bad, code = ld.parse_messages(arr, np.array(starts, np.int64), np.array(ends, np.int64),
                                  *out)
    magic, attrs, ts, kpos, klen, vpos, vlen = out
    refs = [_ref_parse(buf, s, e) for s, e in zip(starts, ends)]
    first_bad = next((i for i, r in enumerate(refs) if r is None), -1)
    assert bad == first_bad
    assert (code == 0) == (bad == -1)
    for i in range(n if bad < 0 else bad):
        r = refs[i]
        assert (magic[i], attrs[i], ts[i]) == r[:3]
        key = None if klen[i] < 0 else buf[kpos[i]:kpos[i] + klen[i]]
        value = None if vlen[i] < 0 else buf[vpos[i]:vpos[i] + vlen[i]]
        assert (key, value) == r[3:]


def _ref_walk(buf: bytes, s: int, e: int) -> tuple[list, str | None]:
    out, p = [], s
    while e - p >= 12:
        off, size = struct.unpack_from(">qi", buf, p)
        if size < 14:
            return out, "size"
        if size > e - p - 12:
            break
        out.append((p + 12, p + 12 + size, off))
        p += 12 + size
    return out, (None if out else "empty")


@settings(max_examples=300, deadline=None)
@given(wrappers=st.lists(st.one_of(
    st.lists(st.tuples(st.integers(-2**63, 2**63 - 1), st.binary(min_size=14, max_size=40)),
             max_size=5).map(lambda es: b"".join(struct.pack(">qi", o, len(m)) + m
                                                 for o, m in es)),
    st.binary(max_size=60)), min_size=1, max_size=5), cut=st.integers(0, 10))
def test_walk_inner_equals_a_direct_walk(wrappers: list[bytes], cut: int) -> None:
    wrappers = [w[:len(w) - cut] if len(w) > cut else w for w in wrappers]
    buf = b"".join(wrappers)
    lengths = np.array([len(w) for w in wrappers], np.int64)
    wends = np.cumsum(lengths)
    wstarts = wends - lengths
    cap = len(buf) // 26 + 1
    starts, ends, offs = (np.empty(cap, np.int64) for _ in range(3))
    counts = np.zeros(len(wrappers), np.int64)
    total, failed, code = ld.walk_inner(np.frombuffer(buf, np.uint8), wstarts, wends, starts,
                                        ends, offs, counts)
    expect, t = [], 0
    for w, (s, e) in enumerate(zip(wstarts.tolist(), wends.tolist())):
        entries, err = _ref_walk(buf, s, e)
        if err is not None:
            assert failed == w and code == (ld.ERR_INNER_SIZE if err == "size"
                                            else ld.ERR_NO_INNER)
            break
        assert counts[w] == len(entries)
        expect += entries
    else:
        assert failed == -1 and code == 0
        assert total == len(expect)
    t = len(expect)
    got = list(zip(starts[:t].tolist(), ends[:t].tolist(), offs[:t].tolist()))
    assert got == expect


@settings(max_examples=200, deadline=None)
@given(b0=st.binary(min_size=1, max_size=50), b1=st.binary(min_size=1, max_size=50),
       picks=st.lists(st.tuples(st.booleans(), st.integers(0, 49), st.integers(-1, 50)),
                      max_size=20))
def test_gather_equals_slicing(b0: bytes, b1: bytes, picks: list) -> None:
    src, pos, ln = [], [], []
    for which, p, n in picks:
        size = len(b1 if which else b0)
        p = p % size
        n = min(n, size - p)
        src.append(which)
        pos.append(p)
        ln.append(n)
    offs = np.empty(len(pos) + 1, np.int64)
    data = np.empty(sum(max(0, n) for n in ln), np.uint8)
    w = ld.gather(np.frombuffer(b0, np.uint8), np.frombuffer(b1, np.uint8),
                  np.array(src, bool), np.array(pos, np.int64), np.array(ln, np.int64), offs,
                  data)
    pieces = [(b1 if s else b0)[p:p + n] for s, p, n in zip(src, pos, ln) if n > 0]
    assert w == data.size and data.tobytes() == b"".join(pieces)
    assert offs.tolist() == np.concatenate(([0], np.cumsum([max(0, n) for n in ln]))).tolist()
