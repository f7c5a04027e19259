"""The one-call append of the common case (``append_v2_batch``, ``native/_append.c``) and the
per-append state it shares with the Python segment (``SegmentAppendState``).

* Property: a log appending with the C call writes what it writes without it (the Python path,
  the reference): same ``LogAppendInfo`` or error per append, same ``.log``/``.index``/
  ``.timeindex``/epoch-checkpoint bytes, same rolls, across follower, client and leader
  appends, truncation, reopening, index reads between appends, bad batches, time and size
  rolls, full indexes and flushes by count.
* Every case the C call declines returns None with nothing changed (state fields and file).
* The index entry it cannot stage after its pwrite is handed back and written.
* The C class and its Python twin have the same fields, defaults and methods.
* Peer: aiokafka-built batches (every codec, headers) appended by the C path, and
  Log.append's, read back from the segment files by aiokafka's reader.
"""

from __future__ import annotations

import os
import sys
import threading
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkalog import Record, encode_batch
from kafkalog import log as log_module
from kafkalog.clock import ManualClock
from kafkalog.config import LogConfig
from kafkalog.log import Log
from kafkalog.segment_append_state import SegmentAppendStatePy

try:
    from kafkalog.native import _append
except ImportError:  # pragma: no cover - the extension is optional
    _append = None

C_FAST = log_module._append_v2_batch
needs_c = pytest.mark.skipif(C_FAST is None, reason="the optional C extension is not built "
                             "(or KAFKALOG_NO_EXTENSIONS is set): no C path to compare")
T0 = 1_700_000_000_000
FIELDS = ("fd", "base_offset", "size", "reserved_end", "segment_bytes", "bytes_since_index",
          "index_interval", "roll_after_timestamp", "max_timestamp", "max_timestamp_offset",
          "max_loaded", "room", "last_offset", "capacity")


def _files(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())
            if p.suffix in (".log", ".index", ".timeindex")
            or p.name == "leader-epoch-checkpoint"}


# -- property: the C path writes what the Python path writes --------------------------------

_OPS = st.lists(st.one_of(
    # (kind, records, value bytes, timestamp step (-1: none), offset gap, leader epoch)
    st.tuples(st.just("batches"), st.integers(1, 6), st.integers(0, 400),
              st.sampled_from([-1, 0, 3, -5, 2_000]), st.integers(0, 2),
              st.sampled_from([-1, -1, 0, 1, 3])),
    st.tuples(st.just("records"), st.integers(1, 4), st.integers(0, 300),
              st.sampled_from([0, 7, 2_000]), st.just(0), st.just(-1)),
    st.tuples(st.just("leader"), st.integers(1, 4), st.integers(0, 300),
              st.sampled_from([0, 7]), st.just(0), st.just(-1)),
    # an idempotent producer's batch as a leader takes it (gap 1: a sequence gap, refused)
    st.tuples(st.just("idempotent"), st.integers(1, 4), st.integers(0, 300),
              st.sampled_from([0, 7]), st.sampled_from([0, 0, 1]), st.just(-1)),
    st.tuples(st.just("corrupt"), st.just(1), st.integers(0, 50), st.just(0), st.just(0),
              st.just(-1)),
    st.tuples(st.just("stale"), st.just(1), st.just(10), st.just(0), st.just(0), st.just(-1)),
    st.tuples(st.just("truncate"), st.integers(1, 8), st.just(0), st.just(0), st.just(0),
              st.just(-1)),
    st.tuples(st.just("read_index"), st.just(0), st.just(0), st.just(0), st.just(0),
              st.just(-1)),
    st.tuples(st.just("reopen"), st.just(0), st.just(0), st.just(0), st.just(0), st.just(-1)),
    st.tuples(st.just("tick"), st.just(0), st.just(0), st.sampled_from([10, 5_000]),
              st.just(0), st.just(-1)),
), min_size=1, max_size=40)


def _run(d: Path, cfg: LogConfig, ops: list[tuple]) -> tuple[list, dict[str, bytes]]:
    """Apply ``ops`` to a fresh log in ``d``: what each returned or raised, then the files."""
    clock = ManualClock(T0)
    out: list = []
    ts = T0
    seq = 0
    log = Log.open(d, cfg, clock=clock)
    try:
        for kind, n, size, step, gap, epoch in ops:
            leo = log.log_end_offset
            try:
                if kind in ("batches", "corrupt", "stale", "leader", "records", "idempotent"):
                    ts += max(step, 0)
                    stamp = -1 if step == -1 else ts
                    recs = [Record(b"k%d" % i, b"v" * size, stamp) for i in range(n)]
                    if kind == "records":
                        out.append(log.append(recs))
                    elif kind == "leader":
                        out.append(log.append_as_leader(encode_batch(recs)))
                    elif kind == "idempotent":
                        out.append(log.append_as_leader(encode_batch(
                            recs, producer_id=7, producer_epoch=0, base_sequence=seq + gap)))
                        seq += n
                    else:
                        base = leo + gap if kind != "stale" else max(leo - 1, 0)
                        b = bytearray(encode_batch(recs, base_offset=base,
                                                   partition_leader_epoch=epoch))
                        if kind == "corrupt":
                            b[-1] ^= 0x5A
                        out.append(log.append_batches(bytes(b)))
                elif kind == "truncate":
                    out.append(log.truncate_to(max(leo - n, 0)))
                elif kind == "read_index":
                    seg = log.segments[-1]
                    out.append((seg.offset_index.entries, seg.time_index.entries))
                elif kind == "reopen":
                    log.close()
                    log = Log.open(d, cfg, clock=clock)
                elif kind == "tick":
                    clock.advance(step)
            except Exception as e:  # noqa: BLE001 - both paths must raise the same
                out.append((type(e).__name__, str(e).replace(str(d), "<dir>")))
        out.append((log.log_end_offset, [s.base_offset for s in log.segments],
                    [s.size for s in log.segments]))
    finally:
        log.close()
    return out, _files(d)


@needs_c
@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=_OPS, segment_bytes=st.sampled_from([700, 3_000, 1 << 20]),
       index_bytes=st.sampled_from([24, 120, 1 << 20]),
       interval=st.sampled_from([0, 300, 4096]),
       segment_ms=st.sampled_from([1_000, 7 * 24 * 3600 * 1000]),
       flush_messages=st.sampled_from([9, 2**63 - 1]))
def test_c_path_writes_what_the_python_path_writes(tmp_path_factory, monkeypatch, ops,
                                                   segment_bytes, index_bytes, interval,
                                                   segment_ms, flush_messages) -> None:
    cfg = LogConfig(segment_bytes=segment_bytes, segment_index_bytes=index_bytes,
                    index_interval_bytes=interval, segment_ms=segment_ms,
                    flush_messages=flush_messages)
    root = tmp_path_factory.mktemp("c_vs_py")
    monkeypatch.setattr(log_module, "_append_v2_batch", C_FAST)
    with_c = _run(root / "c", cfg, ops)
    monkeypatch.setattr(log_module, "_append_v2_batch", None)
    without = _run(root / "py", cfg, ops)
    assert with_c == without


@pytest.fixture
def c_calls(monkeypatch) -> list[bool]:
    """The log's C append, counted: one entry per call, True when it appended."""
    taken: list[bool] = []

    def counting(*args):
        r = C_FAST(*args)
        taken.append(r is not None)
        return r

    monkeypatch.setattr(log_module, "_append_v2_batch", counting)
    return taken


@needs_c
def test_c_path_takes_the_common_case(tmp_path: Path, c_calls: list[bool]) -> None:
    # (the equality above would also hold if the C call always declined)
    taken = c_calls
    cfg = LogConfig(segment_bytes=256 * 1024)
    with Log.open(tmp_path / "p", cfg, clock=ManualClock(T0)) as log:
        base = 0
        for i in range(600):
            b = encode_batch([Record(None, b"v" * 1000, T0 + i)], base_offset=base)
            log.append_batches(b)
            base += 1
        log.append([Record(None, b"r", T0)])  # the client path tries it too
        assert log.log_end_offset == 601
        rolls = len(log.segments) - 1
    # declined: each segment's first append (its time rule starts there), the append after a
    # roll's index measure, and one per MiB reserved (none: 256 KiB segments)
    assert rolls >= 2
    assert len(taken) == 601 and sum(taken) >= 601 - 3 * (rolls + 1)


@needs_c
def test_c_path_takes_an_idempotent_producers_batch(tmp_path: Path,
                                                   c_calls: list[bool]) -> None:
    """A producer's batch (what Java producers send by default) is checked by the producer
    state first, then written by the C append (its sixth argument), the state updated after:
    a retry is still a duplicate, a sequence gap still refused, and the files are the Python
    path's (the property test above)."""
    from kafkalog.producer_state import OutOfOrderSequenceError

    taken = c_calls
    with Log.open(tmp_path / "p", LogConfig(), clock=ManualClock(T0)) as log:
        seq, infos = 0, []
        for i in range(30):
            b = encode_batch([Record(None, b"v" * 100, T0 + i)] * 3, producer_id=9,
                             producer_epoch=0, base_sequence=seq)
            infos.append(log.append_as_leader(b))
            seq += 3
        retry = log.append_as_leader(b)
        assert retry.duplicate and (retry.first_offset, retry.last_offset) == (87, 89)
        with pytest.raises(OutOfOrderSequenceError):
            log.append_as_leader(encode_batch([Record(None, b"v", T0)], producer_id=9,
                                              producer_epoch=0, base_sequence=seq + 1))
        assert log.log_end_offset == 90
        assert log._producer_state.last_entry(9).last_seq == 89
    # each append tries the plain C append first (declined: a producer id), then the
    # producer one: all but the segment's first two appends (its time rule starts, its max
    # timestamp loads) go through C
    assert taken.count(True) == 28


@needs_c
def test_peer_batches_appended_by_the_c_path_read_back_with_the_peer(
        tmp_path: Path, c_calls: list[bool]) -> None:
    """aiokafka's builder makes the batches (with headers, each codec), the C path appends
    them (counted), and aiokafka's own reader reads the segment file back: same records.
    Log.append's batches (our encoder, the C path too) read back with it as well."""
    aio_dr = pytest.importorskip("aiokafka.record.default_records")
    aio_mr = pytest.importorskip("aiokafka.record.memory_records")
    taken = c_calls
    want, base = [], 0
    with Log.open(tmp_path / "p", LogConfig(segment_bytes=1 << 20),
                  clock=ManualClock(T0)) as log:
        for i in range(40):
            b = aio_dr.DefaultRecordBatchBuilder(2, i % 5, False, -1, -1, -1, 1 << 30)
            for j in range(20):
                key, value = b"k%d" % j, b"v%d-%d" % (i, j) * 10
                b.append(j, timestamp=T0 + i, key=key, value=value, headers=[("h", b"x")])
                want.append((base + j, T0 + i, key, value, [("h", b"x")]))
            data = bytearray(b.build())
            data[:8] = base.to_bytes(8, "big")  # (the base offset is outside the CRC)
            log.append_batches(bytes(data))
            base += 20
        for i in range(10):
            recs = [Record(b"r%d" % j, b"w%d" % i, T0 + 100 + i) for j in range(5)]
            log.append(recs)
            want += [(base + j, r.timestamp, r.key, r.value, []) for j, r in enumerate(recs)]
            base += 5
        raw = b"".join(p.read_bytes() for p in sorted((tmp_path / "p").glob("*.log")))
    # each segment's first append takes the Python path (it starts the time rule)
    assert sum(taken) >= len(taken) - 3 and len(taken) == 50
    got, records = [], aio_mr.MemoryRecords(raw)
    while records.has_next():
        for r in records.next_batch():
            got.append((r.offset, r.timestamp, r.key, r.value, list(r.headers)))
    assert got == want


# -- declines without changing anything -------------------------------------------------------

def _batch(base: int, ts: int = T0, value: bytes = b"v" * 100, **kw) -> bytes:
    return encode_batch([Record(None, value, ts)], base_offset=base, **kw)


@pytest.fixture
def state(tmp_path: Path):
    """A state over a real file, as a segment holding 1,000 bytes would have it."""
    fd = os.open(tmp_path / "seg.log", os.O_RDWR | os.O_CREAT, 0o644)
    os.pwrite(fd, b"\0" * 1000, 0)
    s = _append.SegmentAppendState(4)
    s.fd, s.base_offset, s.size, s.reserved_end, s.segment_bytes = fd, 100, 1000, 1 << 20, 1 << 20
    s.index_interval, s.bytes_since_index = 4096, 10
    s.roll_after_timestamp, s.max_timestamp, s.max_timestamp_offset, s.max_loaded = \
        T0 + 1000, T0 - 5, 105, 1
    s.room, s.last_offset = 3, 104
    yield s
    os.close(fd)  # (the state's own fd may have been changed by the test)


def _snapshot(s, d: Path) -> dict:
    return {f: getattr(s, f) for f in FIELDS} | {"staged": s.staged_count(),
                                                  "file": (d / "seg.log").read_bytes()}


@needs_c
def test_the_baseline_state_appends(state) -> None:
    b = _batch(110)
    r = C_FAST(state, b, True, 110, 1 << 30)
    assert r == (110, 110, -1, T0, 1, -1)
    assert (state.size, state.max_timestamp, state.max_timestamp_offset) == \
        (1000 + len(b), T0, 110)
    assert state.bytes_since_index == 10 + len(b) and state.staged_count() == 0
    assert os.pread(state.fd, len(b), 1000) == b


DECLINED = {
    "closed": (lambda s: setattr(s, "fd", -1), _batch(110), 110),
    "above max_bytes": (None, _batch(110, value=b"v" * 5000), 110),
    "above segment.bytes": (lambda s: setattr(s, "segment_bytes", 1100), _batch(110), 110),
    "below the log end offset": (None, _batch(110), 111),
    "empty segment": (lambda s: setattr(s, "size", 0), _batch(110), 110),
    "max timestamp not loaded": (lambda s: setattr(s, "max_loaded", 0), _batch(110), 110),
    "roll by size": (lambda s: setattr(s, "size", (1 << 20) - 50), _batch(110), 110),
    "roll by time": (None, _batch(110, ts=T0 + 1001), 110),
    "no room to stage": (lambda s: setattr(s, "room", 0), _batch(110), 110),
    "not indexable": (None, _batch(100 + 2**31), 100 + 2**31),
    "below the base offset": (lambda s: setattr(s, "base_offset", 200), _batch(110), 110),
    "blocks to reserve": (lambda s: setattr(s, "reserved_end", 1050), _batch(110), 110),
    "entry not above the last": (lambda s: (setattr(s, "bytes_since_index", 5000),
                                            setattr(s, "last_offset", 110)), _batch(110), 110),
    "bad crc": (None, _batch(110)[:-1] + b"\x5a", 110),
    "producer id": (None, _batch(110, producer_id=7, producer_epoch=0, base_sequence=0), 110),
    "transactional": (None, _batch(110, producer_id=7, producer_epoch=0, base_sequence=0,
                                   transactional=True), 110),
    "two batches": (None, _batch(110) + _batch(111), 110),
    "not a batch": (None, b"\x00" * 80, 0),
}


@needs_c
@pytest.mark.parametrize("case", sorted(DECLINED))
def test_declines_with_nothing_changed(state, tmp_path: Path, case: str) -> None:
    change, data, leo = DECLINED[case]
    if change is not None:
        change(state)
    before = _snapshot(state, tmp_path)
    max_bytes = 1000 if case == "above max_bytes" else 1 << 30
    assert C_FAST(state, data, True, leo, max_bytes) is None
    assert _snapshot(state, tmp_path) == before


@needs_c
def test_a_bad_crc_is_not_checked_when_asked_not_to(state) -> None:
    # (append_as_leader's batch was just encoded by the validator: check_crc False)
    data = _batch(110)[:-1] + b"\x5a"
    assert C_FAST(state, data, False, 110, 1 << 30) is not None


@needs_c
def test_a_failed_write_moves_nothing(state, tmp_path: Path) -> None:
    ro = os.open(tmp_path / "seg.log", os.O_RDONLY)
    try:
        state.fd = ro
        before = _snapshot(state, tmp_path)
        with pytest.raises(OSError):
            C_FAST(state, _batch(110), True, 110, 1 << 30)
        assert _snapshot(state, tmp_path) == before
    finally:
        os.close(ro)


@needs_c
def test_the_entry_it_cannot_stage_is_handed_back(state) -> None:
    state.bytes_since_index = 5000  # an entry is due
    for k in range(4):  # staging full (its capacity) while room says 3
        state.stage(k, k, k, k)
    b = _batch(110)
    r = C_FAST(state, b, True, 110, 1 << 30)
    assert r is not None and r[-1] == 1000  # the position the entry points at
    assert state.staged_count() == 4 and state.room == 3 and state.last_offset == 104
    assert state.bytes_since_index == len(b) and state.size == 1000 + len(b)


@needs_c
def test_an_entry_is_staged_with_the_running_max(state) -> None:
    state.bytes_since_index = 5000
    b = _batch(110, ts=T0 - 10)  # below the running max T0 - 5 (offset 105)
    assert C_FAST(state, b, True, 110, 1 << 30) == (110, 110, -1, T0 - 10, 1, -1)
    taken = state.take_staged()
    assert np.frombuffer(taken, np.int64).tolist() == [110, 1000, T0 - 5, 105]
    assert (state.room, state.last_offset, state.bytes_since_index) == (2, 110, len(b))


@needs_c
def test_reader_threads_writing_the_staged_entries_leave_the_same_index(
        tmp_path: Path, monkeypatch) -> None:
    """A reader asking for the index during appends writes the staged entries (room 0); an
    append whose pwrite it ran during hands its entry back (pending_position), which the log
    writes: the files end up as the Python path's, without a reader."""
    cfg = LogConfig(index_interval_bytes=1000)
    pending = []

    def counting(*args):
        r = C_FAST(*args)
        if r is not None and r[-1] >= 0:
            pending.append(r[-1])
        return r

    # a GIL switch requested every microsecond: the reader runs inside appends' pwrites
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        monkeypatch.setattr(log_module, "_append_v2_batch", counting)
        with Log.open(tmp_path / "c", cfg, clock=ManualClock(T0)) as log:
            done = threading.Event()

            def read() -> None:
                while not done.is_set():
                    seg = log.segments[-1]
                    seg.offset_index.lookup(seg.base_offset + 10)

            t = threading.Thread(target=read)
            t.start()
            try:
                # until a few appends took the hand-back path (about 1 in 25 here; bounded)
                k = 0
                while k < 30_000 and (len(pending) < 5 or k < 1000):
                    log.append_batches(_batch(k, ts=T0 + k, value=b"v" * 400))
                    k += 1
            finally:
                done.set()
                t.join()
    finally:
        sys.setswitchinterval(interval)
    assert pending, "no append's pwrite overlapped the reader in 30,000 appends"
    monkeypatch.setattr(log_module, "_append_v2_batch", None)
    with Log.open(tmp_path / "py", cfg, clock=ManualClock(T0)) as log:
        for i in range(k):
            log.append_batches(_batch(i, ts=T0 + i, value=b"v" * 400))
    assert _files(tmp_path / "c") == _files(tmp_path / "py")


# -- the C class and its Python twin -------------------------------------------------------------

def test_python_twin_stages_and_takes() -> None:
    # (the class segments use without the extension, KAFKALOG_NO_EXTENSIONS in tools/test.sh)
    s = SegmentAppendStatePy(2)
    s.stage(7, 0, T0, 7)
    s.stage(9, 4096, T0 + 1, 9)
    with pytest.raises(RuntimeError, match="capacity"):
        s.stage(10, 8192, T0, 9)
    taken = s.take_staged()
    assert np.frombuffer(taken, np.int64).tolist() == [7, 0, T0, 7, 9, 4096, T0 + 1, 9]
    assert s.staged_count() == 0 and s.take_staged() == b""


@needs_c
def test_only_states_holding_staged_entries_hold_their_memory() -> None:
    # a log directory holds many segments; only the active ones stage (8 KiB each at 256)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        states = [_append.SegmentAppendState(256) for _ in range(1000)]
        idle = tracemalloc.get_traced_memory()[0] - before
        for s in states:
            s.stage(1, 2, 3, 4)
        staging = tracemalloc.get_traced_memory()[0] - before
        for s in states:
            assert len(s.take_staged()) == 32
        taken = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert staging - idle >= 1000 * 256 * 32  # (the staging buffers are traced)
    assert idle < 1000 * 1024 and taken < 1000 * 1024


@needs_c
def test_c_class_and_python_twin_agree() -> None:
    c, py = _append.SegmentAppendState(2), SegmentAppendStatePy(2)
    assert {f: getattr(c, f) for f in FIELDS} == {f: getattr(py, f) for f in FIELDS}
    for s in (c, py):
        s.stage(1, 2, 3, -4)
        s.stage(5, 6, 7, 8)
        with pytest.raises(RuntimeError, match="capacity"):
            s.stage(9, 9, 9, 9)
    assert c.staged_count() == py.staged_count() == 2
    assert c.take_staged() == py.take_staged()
    assert c.staged_count() == py.staged_count() == 0 and c.take_staged() == b""
    for cls in (_append.SegmentAppendState, SegmentAppendStatePy):
        with pytest.raises(ValueError, match="capacity"):
            cls(-1)
        with pytest.raises(RuntimeError, match="capacity"):
            cls(0).stage(1, 2, 3, 4)  # (0: the segment writes every entry at once)
    with pytest.raises(OverflowError):
        c.size = 2**63  # 64-bit fields (the segment caps what it stores: roll_after_timestamp)
