"""The log engine's fast paths give exactly what the general paths give (issue 3 performance).

* ``Log._append_one_v2_batch`` and the C ``append_v2_batch`` before it (one whole v2 batch per
  append, no numpy) vs the general scan-based append: same ``LogAppendInfo``, same
  ``.log``/``.index``/``.timeindex`` bytes, same rolls, across timestamps -1/decreasing,
  leader epochs, small segments and indexes.
* ``validate_entries`` (CRCs in one comprehension, other checks vectorised) and
  ``rebuild_index_entries`` (vectorised when every batch exceeds the index interval) vs the
  plain per-entry loops they replaced, written out here as references.
* Producer-state replay over a writable segment's mapping vs over ``pread`` chunks of the
  same segment opened read-only.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafkalog.native.scan import scan_entries

from kafkalog import Record, encode_batch
from kafkalog import log as log_module
from kafkalog.clock import ManualClock
from kafkalog.config import LogConfig
from kafkalog.log import Log
from kafkalog.producer_state import ProducerStateManager
from kafkalog.records.crc import crc32, crc32c
from kafkalog.segment import INT32_MAX, LogSegment, rebuild_index_entries, validate_entries

T0 = 1_700_000_000_000
SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


# -- references: the per-entry loops ---------------------------------------------------------

def ref_validate_entries(buf: np.ndarray, scan: dict, base_offset: int | None, *,
                         prev_last_offset: int = -1) -> tuple[int, str | None]:
    mv = memoryview(buf)
    prev = prev_last_offset if base_offset is None else max(prev_last_offset, base_offset - 1)
    for i in range(int(scan["count"])):
        pos, size = int(scan["positions"][i]), int(scan["sizes"][i])
        magic = int(scan["magics"][i])
        first, last = int(scan["base_offsets"][i]), int(scan["last_offsets"][i])
        stored = int(scan["crcs"][i])
        computed = crc32c(mv[pos + 21:pos + size]) if magic == 2 else crc32(mv[pos + 16:pos + size])
        if computed != stored:
            return i, (f"record is corrupt (stored crc = {stored}, computed crc = {computed}) "
                       f"at position {pos}")
        first = first if magic == 2 else last
        if first <= prev or last < first:
            return i, (f"offsets not increasing at position {pos} (expected > {prev}, found "
                       f"{first}..{last})")
        if base_offset is not None and last - base_offset > INT32_MAX:
            return i, (f"offset {last} at position {pos} is not indexable relative to base "
                       f"offset {base_offset}")
        prev = last
    return int(scan["count"]), None


def ref_rebuild_index_entries(positions, sizes, lasts, max_ts, interval):
    offsets, times = [], []
    run_ts, run_off, valid, last_entry = -1, -1, 0, 0
    for pos, size, last, ts in zip(positions.tolist(), sizes.tolist(), lasts.tolist(),
                                   max_ts.tolist()):
        if ts > run_ts:
            run_ts, run_off = ts, last
        if valid - last_entry > interval:
            offsets.append((last, pos))
            times.append((run_ts, run_off))
            last_entry = valid
        valid += size
    return offsets, times, (run_ts, run_off)


# -- validate_entries ------------------------------------------------------------------------

def _batches(spec: list[tuple[int, int, int]]) -> bytes:
    out, base = [], 0
    for n, gap, size in spec:
        base += gap
        out.append(encode_batch([Record(None, b"v" * size, T0 + i) for i in range(n)],
                                base_offset=base))
        base += n
    return b"".join(out)


@SETTINGS
@given(spec=st.lists(st.tuples(st.integers(1, 4), st.integers(0, 3), st.integers(0, 60)),
                     min_size=1, max_size=12),
       damage=st.sampled_from(["none", "crc", "offset", "indexable"]),
       at=st.integers(0, 11), base=st.sampled_from([None, 0, 3, 40]),
       prev=st.integers(-1, 20), flip=st.integers(0, 10_000))
def test_validate_entries_equals_per_entry_loop(spec, damage, at, base, prev, flip) -> None:
    buf = bytearray(_batches(spec))
    sc = scan_entries(np.frombuffer(bytes(buf), np.uint8))
    i = at % int(sc["count"])
    pos, size = int(sc["positions"][i]), int(sc["sizes"][i])
    if damage == "crc":
        buf[pos + 21 + flip % (size - 21)] ^= 0x5A
    elif damage == "offset":  # base offset rewritten: CRC does not cover it
        buf[pos:pos + 8] = (flip % 30).to_bytes(8, "big")
    elif damage == "indexable" and base is not None:
        buf[pos:pos + 8] = (base + INT32_MAX + flip).to_bytes(8, "big")
    arr = np.frombuffer(bytes(buf), np.uint8)
    sc = scan_entries(arr)
    assert validate_entries(arr, sc, base, prev_last_offset=prev) == \
        ref_validate_entries(arr, sc, base, prev_last_offset=prev)


def test_validate_entries_on_an_empty_scan() -> None:
    arr = np.zeros(0, np.uint8)
    assert validate_entries(arr, scan_entries(arr), 0) == (0, None)


# -- rebuild_index_entries -------------------------------------------------------------------

@settings(max_examples=300, deadline=None)
@given(rows=st.lists(st.tuples(st.integers(1, 300), st.integers(1, 4),
                               st.sampled_from([-1, -1, -7, 0, 5, 9, 2**40]) | st.integers(0, 30)),
                     max_size=25),
       interval=st.sampled_from([0, 10, 100, 150, 4096]))
def test_rebuild_index_entries_equals_per_batch_loop(rows, interval) -> None:
    sizes = np.array([r[0] for r in rows], np.int64)
    positions = (np.cumsum(sizes) - sizes).astype(np.int64)
    lasts = np.cumsum(np.array([r[1] for r in rows], np.int64)) + 17
    ts = np.array([r[2] for r in rows], np.int64)
    offsets, times, final = rebuild_index_entries(positions, sizes, lasts, ts, interval)
    ref = ref_rebuild_index_entries(positions, sizes, lasts, ts, interval)
    assert (offsets, times, tuple(final)) == ref
    assert all(type(v) is int for e in [*offsets, *times, final] for v in e)


# -- the single-batch append path vs the general path ------------------------------------------

_APPENDS = st.lists(st.tuples(
    st.integers(1, 5),  # records
    st.integers(0, 400),  # value size
    st.sampled_from([-1, 0, 1, 5, -3]) | st.integers(-50, 200),  # timestamp step (-1: none)
    st.integers(0, 3),  # offset gap (follower data may be compacted)
    st.sampled_from([-1, -1, 0, 1, 2]),  # partition leader epoch
), min_size=1, max_size=30)


def _follower_batches(appends) -> list[bytes]:
    out, base, ts = [], 0, T0
    for n, size, step, gap, epoch in appends:
        base += gap
        ts += step
        stamp = -1 if step == -1 else ts
        out.append(encode_batch([Record(None, b"x" * size, stamp) for _ in range(n)],
                                base_offset=base, partition_leader_epoch=epoch))
        base += n
    return out


def _files(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())
            if p.suffix in (".log", ".index", ".timeindex")
            or p.name == "leader-epoch-checkpoint"}


@SETTINGS
@given(appends=_APPENDS, segment_bytes=st.sampled_from([600, 2000, 1 << 20]),
       index_bytes=st.sampled_from([24, 48, 1 << 20]), interval=st.sampled_from([0, 300, 4096]))
def test_single_batch_fast_path_writes_what_the_general_path_writes(
        tmp_path_factory, monkeypatch, appends, segment_bytes, index_bytes, interval) -> None:
    cfg = LogConfig(segment_bytes=segment_bytes, segment_index_bytes=index_bytes,
                    index_interval_bytes=interval)
    batches = _follower_batches(appends)
    root = tmp_path_factory.mktemp("fast")
    results = {}
    for path in ("fast", "general"):
        if path == "general":
            monkeypatch.setattr(Log, "_append_one_v2_batch", lambda *a, **k: None)
            # (and the one-call C path that append_batches tries first)
            monkeypatch.setattr(log_module, "_append_v2_batch", None)
        d = root / path
        infos = []
        with Log.open(d, cfg, clock=ManualClock(T0)) as log:
            for b in batches:
                try:
                    infos.append(log.append_batches(b))
                except Exception as e:  # noqa: BLE001 - both paths must raise the same
                    infos.append((type(e), str(e).replace(str(d), "")))
            infos.append((log.log_end_offset, [s.base_offset for s in log.segments]))
        results[path] = (infos, _files(d))
    assert results["fast"] == results["general"]


def test_fast_path_rejects_what_the_general_path_rejects(tmp_path: Path) -> None:
    with Log.open(tmp_path / "p", clock=ManualClock(T0)) as log:
        good = encode_batch([Record(None, b"v", T0)], base_offset=0)
        log.append_batches(good)
        bad = bytearray(encode_batch([Record(None, b"v", T0)], base_offset=1))
        bad[-1] ^= 1
        with pytest.raises(Exception, match="crc") as e:
            log.append_batches(bytes(bad))
        assert type(e.value).__name__ == "CorruptRecordError"
        with pytest.raises(Exception, match="log end offset") as e:
            log.append_batches(good)  # offset 0 again
        assert type(e.value).__name__ == "InvalidOffsetError"
        assert log.log_end_offset == 1 and log.active_segment.size == len(good)


def test_append_info_of_a_batch_without_timestamps(tmp_path: Path) -> None:
    """Kafka's offsetOfMaxTimestamp stays -1 when no batch has a timestamp."""
    with Log.open(tmp_path / "p", clock=ManualClock(T0)) as log:
        info = log.append_batches(encode_batch([Record(None, b"v", -1)], base_offset=0))
        assert (info.max_timestamp, info.shallow_offset_of_max_timestamp) == (-1, -1)


# -- producer-state replay: mapping vs pread chunks ----------------------------------------------

def test_replay_over_the_mapping_equals_replay_over_chunks(tmp_path: Path) -> None:
    d = tmp_path / "p"
    cfg = LogConfig(segment_bytes=1500)
    with Log.open(d, cfg, clock=ManualClock(T0)) as log:
        seq = {1: 0, 2: 0}
        for i in range(60):
            pid = 1 + i % 2
            n = 1 + i % 3
            log.append([Record(None, b"v%d" % i, T0 + i)] * n, producer_id=pid,
                       producer_epoch=0, base_sequence=seq[pid], transactional=pid == 2)
            seq[pid] += n
            if pid == 2 and i % 4 == 1:
                (log.commit_transaction if i % 8 == 1 else log.abort_transaction)(2, 0)
            if i % 7 == 0:
                log.append([Record(None, b"plain", T0 + i)])
        leo = log.log_end_offset
        segs = log.segments
        assert len(segs) > 2  # several segments, each replayed
        mapped = ProducerStateManager(tmp_path / "a")
        mapped.replay(segs, 0, leo)
    ro = [LogSegment.open(d, int(p.stem), cfg, ManualClock(T0), read_only=True)
          for p in sorted(d.glob("*.log"))]
    try:
        assert all(s.read_only for s in ro)
        chunks = ProducerStateManager(tmp_path / "b")
        chunks.replay(ro, 0, leo)
    finally:
        for s in ro:
            s.close()

    def state(ps: ProducerStateManager):
        return ({pid: e.to_snapshot() for pid, e in sorted(ps.producers.items())},
                dict(ps.ongoing_txns), ps.replayed_batches, ps.replayed_segments,
                ps.map_end_offset)

    assert state(mapped) == state(chunks)
    assert mapped.producers  # the log did have producer state to replay


# -- the idempotent producer's single batch vs the general path --------------------------------

_PRODUCER_APPENDS = st.lists(st.tuples(
    # Log.append / append_as_leader / append_batches (replication) / an end-transaction marker
    st.sampled_from(["append", "leader", "follower", "append", "leader", "commit", "abort"]),
    st.sampled_from([1, 2, -1]),  # producer id (-1: a plain batch between them)
    st.sampled_from([0, 0, 0, 1, -1]),  # epoch change
    st.sampled_from(["next", "next", "next", "retry", "gap", "old", "zero", "wrap"]),
    st.integers(1, 4),  # records
    st.sampled_from([-1, 0, 2]),  # partition leader epoch
    st.booleans(),  # transactional
), min_size=1, max_size=25)


def _producer_state(log: Log) -> tuple:
    ps = log._producer_state
    return ({pid: e.to_snapshot() for pid, e in sorted(ps.producers.items())},
            dict(ps.ongoing_txns), ps.map_end_offset)


@SETTINGS
@given(appends=_PRODUCER_APPENDS, segment_bytes=st.sampled_from([400, 1 << 20]))
def test_producer_batch_fast_path_does_what_the_general_path_does(
        tmp_path_factory, monkeypatch, appends, segment_bytes) -> None:
    # Log._append_one_producer_batch (an idempotent or transactional producer's one v2 data
    # batch, no numpy scan) against the general scan-based path: same answers (offsets,
    # duplicates, the same errors for out-of-order sequences, fenced epochs and transaction
    # states), same files (.txnindex and snapshots too), same producer state and open
    # transactions, through the three ways a batch arrives (client appends check sequences,
    # replication does not), with commit and abort markers between them
    cfg = LogConfig(segment_bytes=segment_bytes, index_interval_bytes=100)
    root = tmp_path_factory.mktemp("producer")
    results = {}
    for path in ("fast", "general"):
        if path == "general":
            monkeypatch.setattr(Log, "_append_one_producer_batch", lambda *a, **k: None)
        d = root / path
        out: list = []
        epochs = {1: 0, 2: 3}
        next_seq = {1: 0, 2: 2**31 - 3}  # producer 2 wraps past INT32_MAX
        last_batch: dict[int, tuple] = {}
        with Log.open(d, cfg, clock=ManualClock(T0)) as log:
            for i, (how, pid, bump, seq_kind, n, leader_epoch, txn) in enumerate(appends):
                recs = [Record(b"k", b"v%d" % i, T0 + i) for _ in range(n)]
                fields: dict = {}
                if how in ("commit", "abort"):
                    if pid < 0:
                        continue
                    try:
                        marker = (log.commit_transaction if how == "commit"
                                  else log.abort_transaction)
                        out.append(tuple(marker(pid, epochs[pid])))
                    except Exception as e:  # noqa: BLE001 - both paths must raise the same
                        out.append((type(e).__name__, str(e).replace(str(d), "")))
                    out.append(_producer_state(log))
                    continue
                if pid > 0:
                    epochs[pid] = max(epochs[pid] + bump, 0)
                    seq = {"next": next_seq[pid], "gap": (next_seq[pid] + 2) % 2**31,
                           "old": max(next_seq[pid] - 7, 0), "zero": 0,
                           "wrap": 2**31 - 1}.get(seq_kind, next_seq[pid])
                    if seq_kind == "retry" and pid in last_batch:
                        seq, n_prev, epoch_prev = last_batch[pid]
                        recs = recs[:1] * n_prev
                        epochs[pid] = epoch_prev
                    fields = dict(producer_id=pid, producer_epoch=epochs[pid],
                                  base_sequence=seq, transactional=txn)
                try:
                    if how == "append":
                        info = log.append(recs, partition_leader_epoch=leader_epoch, **fields)
                    else:
                        data = encode_batch(recs, base_offset=log.log_end_offset,
                                            partition_leader_epoch=leader_epoch, **fields)
                        info = (log.append_as_leader(data, partition_leader_epoch=leader_epoch)
                                if how == "leader" else log.append_batches(data))
                    out.append(tuple(info))
                    if pid > 0 and not info.duplicate:
                        last_batch[pid] = (fields["base_sequence"], len(recs), epochs[pid])
                        next_seq[pid] = (fields["base_sequence"] + len(recs)) % 2**31
                except Exception as e:  # noqa: BLE001 - both paths must raise the same
                    out.append((type(e).__name__, str(e).replace(str(d), "")))
                out.append(_producer_state(log))
            out.append((log.log_end_offset, [s.base_offset for s in log.segments]))
        snapshots = {p.name: p.read_bytes() for p in sorted(d.glob("*.snapshot"))
                     + sorted(d.glob("*.txnindex"))}
        results[path] = (out, _files(d), snapshots)
    assert results["fast"] == results["general"]


def test_producer_batch_fast_path_is_taken(tmp_path: Path, monkeypatch) -> None:
    # (the equality test above would also pass if the fast path never ran)
    taken = []
    original = Log._append_one_producer_batch

    def spy(self, *args):
        info = original(self, *args)
        taken.append(info is not None)
        return info

    monkeypatch.setattr(Log, "_append_one_producer_batch", spy)
    with Log.open(tmp_path / "p", clock=ManualClock(T0)) as log:
        log.append([Record(None, b"a", T0)], producer_id=5, producer_epoch=0, base_sequence=0)
        log.append_as_leader(encode_batch([Record(None, b"b", T0)], producer_id=5,
                                          producer_epoch=0, base_sequence=1))
        dup = log.append_as_leader(encode_batch([Record(None, b"b", T0)], producer_id=5,
                                                producer_epoch=0, base_sequence=1))
        log.append([Record(None, b"c", T0)], producer_id=6, producer_epoch=0, base_sequence=0,
                   transactional=True)
        assert log._producer_state.ongoing_txns == {2: 6}
        log.commit_transaction(6, 0)  # a control batch: the general path
        assert dup.duplicate and (dup.first_offset, dup.last_offset) == (1, 1)
        assert log._producer_state.producers[5].last_seq == 1
        assert log._producer_state.ongoing_txns == {}
    assert taken == [True, True, True, True]  # (the marker never comes this way)


def test_recovery_scan_is_handed_out_once_and_only_while_valid(tmp_path: Path) -> None:
    cfg = LogConfig()
    seg = LogSegment.open(tmp_path, 0, cfg, ManualClock(T0))
    data = _batches([(2, 0, 10), (3, 0, 10), (1, 0, 10)])
    seg.append(5, T0 + 2, 5, data)
    seg.recover()
    kept = seg.take_recovery_scan()
    fresh = scan_entries(np.frombuffer(data, np.uint8))
    assert kept["count"] == fresh["count"] == 3 and kept["stop_position"] == len(data)
    for key in ("positions", "sizes", "base_offsets", "last_offsets", "magics", "attributes"):
        assert kept[key].tolist() == fresh[key][:3].tolist()
    assert seg.take_recovery_scan() is None  # once
    seg.recover()
    seg.append(6, T0 + 3, 6, _batches([(1, 6, 5)]))
    assert seg.take_recovery_scan() is None  # appended since: stale
    seg.recover()
    seg.truncate_to(2)
    assert seg.take_recovery_scan() is None  # truncated since
    seg.recover()
    seg.close()
    assert seg.take_recovery_scan() is None  # closed
