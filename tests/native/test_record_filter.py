"""native.record_filter kernels against tests/reference/record_filter.py."""

from __future__ import annotations

import hashlib

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from kafkalog.native import offset_map as om
from kafkalog.native import record_filter as rf

from kafkalog.records.builder import encode_batch
from kafkalog.records.record import Record
from tests.reference import offset_map as refmap
from tests.reference import record_filter as ref

_ROWS = st.lists(st.tuples(st.one_of(st.none(), st.sampled_from([b"a", b"b", b"c", b"dd"])),
                           st.one_of(st.none(), st.binary(max_size=6)),
                           st.integers(0, 2), st.integers(-5000, 5000),
                           st.lists(st.tuples(st.text(max_size=3),
                                              st.one_of(st.none(), st.binary(max_size=3))),
                                    max_size=2)),
                 min_size=1, max_size=20)


def _batch(rows: list, base: int) -> tuple[bytes, list]:
    recs, off = [], base
    for i, (key, value, gap, ts, headers) in enumerate(rows):
        off += gap + (1 if i else 0)  # strictly increasing, gaps as after compaction
        recs.append(Record(key, value, 10**12 + ts, tuple(headers), off))
    return encode_batch(recs, base_offset=base), recs


@settings(max_examples=300, deadline=None)
@given(_ROWS, st.integers(0, 50), st.sampled_from([1, 2, 3]), st.booleans(), st.booleans(),
       st.lists(st.tuples(st.sampled_from([b"a", b"b", b"c", b"dd", b"e"]),
                          st.integers(0, 80)), max_size=6),
       st.integers(-1, 80), st.integers(-10**6, 10**6))
def test_filter_and_rewrite_match_reference(rows: list, base: int, mode: int,
                                            retain_deletes: bool, log_append: bool,
                                            mapped: list, latest: int, horizon: int) -> None:
    data, recs = _batch(rows, base)
    area = data[61:]
    n = len(recs)
    base_ts = recs[0].timestamp
    lat = 10**12 + 7 if log_append else -1
    slots = 32
    table = np.zeros(slots * 24, np.uint8)
    state = np.zeros(om.STATE_SIZE, np.int64)
    model = refmap.OffsetMapModel(slots * 24)
    for key, off in mapped:
        om.map_put(table, slots, state, np.frombuffer(hashlib.md5(key).digest(), np.uint8),
                   np.int64(off))
        model.put(key, off)
    buf = np.frombuffer(data, np.uint8)
    rec = {k: np.zeros(n, np.int64) for k in ("start", "end", "ts", "offset")}
    keep = np.zeros(n, np.uint8)
    info = np.zeros((1, rf.INFO_COLUMNS), np.int64)
    err = np.zeros(2, np.int64)
    rc = rf.filter_batches(buf, np.array([61]), np.array([len(data)]), np.array([n]),
                           np.array([base]), np.array([base_ts]), np.array([lat]),
                           np.array([mode]), np.array([1 if retain_deletes else 0], np.uint8),
                           np.zeros(1, np.int64), table, slots, state, np.int64(latest), keep,
                           rec["start"], rec["end"], rec["ts"], rec["offset"], info, err)
    assert rc == rf.OK
    expect = ref.filter_records(area, n, base, base_ts, lat, mode, retain_deletes, model, latest)
    assert [bool(k) for k in keep] == expect["keep"]
    assert rec["ts"].tolist() == expect["ts"]
    assert rec["offset"].tolist() == [r.offset for r in recs]
    assert info[0].tolist() == [expect["kept"], expect["tombstones"], expect["max_kept_offset"],
                                expect["first_kept_ts"], expect["read"], expect["invalid"]]
    new_base = horizon if horizon >= 0 else expect["first_kept_ts"]
    out = np.zeros(len(area) + 16 * n + 16, np.uint8)
    res = np.zeros(2, np.int64)
    assert rf.rewrite_records(buf, keep, rec["start"], rec["end"], rec["ts"], np.int64(0),
                              np.int64(n), np.int64(new_base), out, np.int64(0), res) == rf.OK
    want, max_ts = ref.rewrite_records(area, n, base, expect["keep"], expect["ts"], new_base)
    assert bytes(out[:int(res[0])]) == want
    assert int(res[1]) == max_ts


def test_rewrite_is_what_the_builder_writes() -> None:
    # kept records re-encoded against the first kept timestamp are the bytes encode_batch
    # (Kafka's MemoryRecordsBuilder rules) writes for the same records and offsets
    recs = [Record(b"a", b"1", 100, (), 5), Record(b"b", b"2", 150, (("h", b"x"),), 6),
            Record(b"c", None, 90, (), 8)]
    data = encode_batch(recs, base_offset=5)
    n = len(recs)
    buf = np.frombuffer(data, np.uint8)
    keep = np.array([0, 1, 1], np.uint8)
    rec = {k: np.zeros(n, np.int64) for k in ("start", "end", "ts", "offset")}
    info = np.zeros((1, rf.INFO_COLUMNS), np.int64)
    table = np.zeros(24 * 4, np.uint8)
    rf.filter_batches(buf, np.array([61]), np.array([len(data)]), np.array([n]), np.array([5]),
                      np.array([100]), np.array([-1]), np.array([rf.MODE_KEEP_ALL]),
                      np.array([1], np.uint8), np.zeros(1, np.int64), table, 4,
                      np.zeros(om.STATE_SIZE, np.int64), np.int64(100), np.ones(n, np.uint8),
                      rec["start"], rec["end"], rec["ts"], rec["offset"], info,
                      np.zeros(2, np.int64))
    out = np.zeros(200, np.uint8)
    res = np.zeros(2, np.int64)
    rf.rewrite_records(buf, keep, rec["start"], rec["end"], rec["ts"], np.int64(0), np.int64(n),
                       np.int64(150), out, np.int64(0), res)
    expected = encode_batch(recs[1:], base_offset=5)[61:]
    assert bytes(out[:int(res[0])]) == expected
    assert int(res[1]) == 150


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_ROWS, st.sampled_from([0, 1, 2, 3, 4]), st.integers(0, 0x7F),
                          st.booleans(), st.integers(-1, 10**13)), min_size=1, max_size=4),
       st.randoms(use_true_random=False))
def test_assemble_matches_reference(batches: list, rnd) -> None:
    src = bytearray()
    positions, sizes, actions, counts, firsts = [], [], [], [], []
    keep, start, end, ts = [], [], [], []
    meta = []
    side = bytearray()
    side_pos, side_len = [], []
    base = 0
    for rows, action, attrs, from_records, stamp in batches:
        data, recs = _batch(rows, base)
        pos = len(src)
        src += data
        parsed = refmap.parse_records(data[61:], len(recs), base)
        k = [rnd.random() < 0.6 for _ in recs]
        if action == rf.A_REBUILD and not any(k):
            k[0] = True
        firsts.append(len(keep))
        for r, kk, rr in zip(parsed, k, recs):
            keep.append(1 if kk else 0)
            start.append(pos + 61 + r["start"])
            end.append(pos + 61 + r["end"])
            ts.append(rr.timestamp)
        ext = bytes(rnd.randbytes(rnd.randint(61, 90))) if action == rf.A_EXTERNAL else b""
        side_pos.append(len(side))
        side_len.append(len(ext))
        side += ext
        positions.append(pos)
        sizes.append(len(data))
        actions.append(action)
        counts.append(len(recs))
        meta.append((data, recs, k, attrs, from_records, stamp, ext, base))
        base = recs[-1].offset + 1 + rnd.randint(0, 3)
    n = len(batches)
    arr = lambda xs: np.array(xs, np.int64)  # noqa: E731
    last_offsets = arr([m[1][-1].offset for m in meta])
    base_offsets = arr([m[7] for m in meta])
    base_ts = arr([m[5] for m in meta])
    max_ts = arr([m[5] + 7 for m in meta])
    out = np.zeros(len(src) * 2 + len(side) + 16 * len(keep) + 200, np.uint8)
    out_pos, out_len, out_max = (np.zeros(n, np.int64) for _ in range(3))
    total = rf.assemble_batches(
        np.frombuffer(bytes(src), np.uint8), arr(positions), arr(sizes), arr(actions),
        arr(firsts), arr(counts), np.array(keep, np.uint8), arr(start), arr(end), arr(ts),
        base_offsets, last_offsets, arr([3] * n), arr([m[3] for m in meta]), base_ts, max_ts,
        np.array([1 if m[4] else 0 for m in meta], np.uint8), arr([7] * n), arr([1] * n),
        arr([5] * n), arr([sum(m[2]) for m in meta]),
        np.frombuffer(bytes(side), np.uint8) if side else np.zeros(0, np.uint8),
        arr(side_pos), arr(side_len), out, out_pos, out_len, out_max)
    expected = bytearray()
    for i, (data, recs, k, attrs, from_records, stamp, ext, b) in enumerate(meta):
        want, mts = ref.assemble_batch(actions[i], data, data[61:], len(recs), b,
                                       recs[-1].offset, 3, attrs, stamp, stamp + 7,
                                       from_records, 7, 1, 5, k,
                                       [r.timestamp for r in recs], ext)
        assert bytes(out[out_pos[i]:out_pos[i] + out_len[i]]) == want, i
        if actions[i] in (rf.A_REBUILD, rf.A_EMPTY):
            assert out_max[i] == mts
        expected += want
    assert total == len(expected) and bytes(out[:total]) == bytes(expected)
