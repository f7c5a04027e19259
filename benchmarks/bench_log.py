"""Log engine benchmarks: appends, scans and recovery against plain-file baselines, same process.

Rows (convention of ``benchmarks/run_all.py``; ratio > 1 means kafkalog is better):

* ``append.batches_16KiB.per_call``: ``Log.append_batches`` of pre-encoded ~16 KiB v2 batches
  (128 records of 16 + 100 bytes each), one batch per call (header and CRC check, roll check,
  ``pwrite`` into blocks the segment reserved ahead, ``RESERVE_AHEAD_BYTES``, index entry
  staged: one C call, ``append_v2_batch``, when ``kafkalog.native._append`` is built; the
  Python path for the appends it declines, e.g. one per MiB that reserves the next blocks),
  vs a plain ``file.write`` of the same bytes per batch to a file in the same directory
  (bytes/s; target ratio >= 0.7). No fsync on either side (both land in the page cache;
  1 GiB segments, so at most one roll, whose fsyncs run on the flusher thread).
* ``append.batches_16KiB.1MiB_calls``: the same bytes, 64 batches per call (a follower's fetch).
* ``append.batches_16KiB.per_call.segment_1MiB``: the per-call row's first 64 MiB into a log
  with 1 MiB segments (a roll every 64 appends: new segment and index files, indexes trimmed,
  a producer snapshot written, and the flush of the rolled segment scheduled, as Kafka's roll
  does; those fsyncs and the checkpoint run on the flusher thread, :mod:`kafkalog.log_flusher`,
  beside the appends) vs ``file.write`` of the same bytes: what rolling costs per append.
* ``append.roll_call.segment_64MiB``: the latency of the ``append_batches`` call that rolls,
  appending ~16 KiB batches one per call into 64 MiB segments (median over the rolls, ms);
  baseline: the median call. As Kafka's ``UnifiedLog.roll``, that call schedules the flush of
  the rolled segment (its 64 MiB of dirty pages written and fsynced, indexes, producer
  snapshot, checkpoint) and returns; it used to run the flush itself (~200 ms here).
* ``append.roll.at_1500_segments``: ``Log.roll()`` latency (ms, median of the 100 rolls after
  the 1,400th; one 116-byte record appended and the last roll's scheduled flush awaited before
  each roll) in a log of 1 MiB segments;
  baseline: the median of the first 100 rolls of a new log in the same filesystem, rolled in
  turn with those 100 (measured one after the other, the filesystem's own background work
  made the later rolls look 2x slower in one run, 1.5x faster in the next). A roll must not
  cost more as the directory grows (it listed the whole directory for the latest producer
  snapshot: 1.6 -> 18.6 ms).
* ``append.pwrite_16KiB.reserved``: the same batches written by a plain ``os.pwrite`` loop into
  a new file with blocks reserved ``RESERVE_AHEAD_BYTES`` ahead (``fallocate(KEEP_SIZE)``, what
  a segment does past its first MiB) vs the same loop without: the share of the per-call
  row's gain that comes from the filesystem, not from our code.
* ``append.records_1.per_call``: ``Log.append([Record(key, value, timestamp)])``, one 116-byte
  record (16-byte key, 100-byte value) per call, the ``Record`` and its list built in the loop
  (an embedding service appending as events arrive), vs aiokafka's compiled
  ``DefaultRecordBatchBuilder`` building the same one-record batch and an unbuffered
  ``file.write`` of it per record (what a hand-rolled writer with a peer's encoder does: no
  offsets, no indexes, no roll check); records/s. The log's per-call floor, not a target.
* ``append.columns``: ``Log.append(RecordColumns)`` of 116-byte records (16-byte key, 100-byte
  value), 1,000 per batch, records/s; baseline: ``encode_columns`` alone on the same columns
  (the codec's encode speed: the log's share is what the ratio shows). Target >= 1,000,000/s.
* ``scan.read_table`` / ``scan.records``: the whole log through ``Log.read_table`` (columnar,
  one decode per segment over a read-only mapping) and ``Log.records`` (a ``Record`` per
  record, 16 MiB ``pread`` chunks) vs the codec on the same bytes already in memory
  (``decode_columns`` / ``iter_batches`` + record iteration), records/s.
* ``scan.read_table.small_segments``: ``Log.read_table`` of a log of 1,500 segments of 20
  records each (116-byte records; a compacted topic, or small ``segment.bytes``), small
  segments read and decoded together (``_decode_small_ranges``) vs one decode per segment
  (``READ_TABLE_SMALL_RANGE_BYTES = 0``), records/s, the same table checked.
* ``open.clean.small_segments``: ``Log.open`` + ``close`` of that 1,500-segment log after a
  clean shutdown, seconds (no baseline).
* ``recovery.<size>``: ``Log.open`` of a directory with one segment of that size and no
  clean-shutdown marker (recovery point 0: every batch's CRC checked, indexes rebuilt), in
  seconds per GiB; baseline: reading the same file sequentially into a buffer (page cache
  warm in both). ``crc32c`` of the whole file alone is in the note: recovery is bounded by it
  plus the read. The open also replays producer state from the log (issue 7's
  ``producer_state``: no snapshot after a crash), which reads the segment once more.

* ``scan.read_table.vs_aiokafka`` (issue 15): ``Log.read_table`` of the 1,000,000 records
  (uncompressed, and ``.lz4``/``.zstd``) vs aiokafka's compiled reader walking the same bytes
  in memory (CRC checked, every field read), records/s.
* ``memory.read_table.<codec>`` / ``memory.dump_deep`` (issue 15): peak RSS (MiB) of a child
  process running ``Log.read_table`` over a ~1 GiB segment (uncompressed and lz4), or
  ``kafkalog dump-segments --deep-iteration`` of the uncompressed one (output to /dev/null);
  baseline: the Arrow table's size (``nbytes``), or the peak RSS of a child that only imports
  kafkalog. The read_table child also maps the segment (its pages count in RSS while mapped).
* ``read_only.records`` / ``read_only.read_table``: a reader in another process
  (``Log.open(read_only=True)``: ``pread`` only, never a mapping, reads stop with
  ``OffsetOutOfRangeError`` on a segment the writer changed, issue 16) reading the same
  multi-segment log as the writing ``Log`` does in its own process (``records``: ``pread``
  chunks; ``read_table``: one bulk read per segment over a mapping); records/s, ratio > 1 means
  the read-only reader is faster.
* ``read_only.refresh``: ``Log.refresh`` of a read-only log of 64 segments with nothing new
  (one ``scandir`` listing; per segment one ``stat`` giving its size and the check that its
  name still holds the file the reader has open; the last segment's tail), per segment;
  baseline: ``os.stat`` of each ``.log``, the floor of that check.
* ``file_copy.scan_crc``: what whole-segment readers in other processes do per byte (verify,
  dump-segments, Spark reads): ``FileCopy`` windows (``pread`` into private memory, released
  behind) + header scan + CRC-32C of every batch, vs the same over an ``mmap`` of the file
  (what they did before; a writer cutting the file killed them with SIGBUS); MiB/s. Released
  every half window as those readers do, so the pages move on to the next window
  (``kafkalog.page_pool``). ``file_copy.scan_crc.vs_fresh_pages``: the same copy with the pool
  off (``POOL_BYTES = 0``: released pages are freed, every window faults in fresh ones).
* ``time_search.check_per_segment`` / ``.out_of_order``: ``LogSegment.check_time_index``
  (what a timestamp search runs once per segment after an open, so that a ``.timeindex``
  damaged behind a clean shutdown does not give a later offset) over a freshly opened log of
  64 segments of 1 MiB, per segment; baseline: one ``offset_for_timestamp`` on the opened,
  checked log (what a search costs anyway). ``.out_of_order``: every 50th batch stamped a
  minute late, so a segment's max lies up to 50 batches before its end and the check walks
  from there. ``time_search.first_after_open``: the first ``offset_for_timestamp`` of a target
  in the last segment after an open (every segment checked) vs the same call again.
  ``time_search.batch``: the search inside the one batch a timestamp search reads
  (``first_record_at_or_after``, one kernel over the records) vs decoding its ``Record``
  objects and looking at two fields (the path before), 100 records, uncompressed and lz4.

Run: ``python benchmarks/bench_log.py [--quick]`` (quick: 64 MiB appends, 200,000 column
records, 256 MiB recovery; full: 512 MiB, 1,000,000 records, 1 GiB recovery).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np
from kafkalog.native.scan import scan_entries

from kafkalog import log as log_module
from kafkalog.clock import SystemClock
from kafkalog.config import LogConfig
from kafkalog.files import CLEAN_SHUTDOWN_FILE
from kafkalog.log import Log
from kafkalog.records.batch import iter_batches
from kafkalog.records.columnar import decode_columns, encode_columns
from kafkalog.records.crc import crc32c
from kafkalog.segment import LogSegment

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_codec import (  # noqa: E402
    BASE_TS,
    _row,
    _row_inputs,
    format_rows,
    make_columns,
)

GIB = 1 << 30
MIB = 1 << 20
RECORDS_PER_16K = 128


def _best(*fns: Callable[[], object], repeat: int,
          setups: tuple[Callable[[], object] | None, ...] = ()) -> list[float]:
    """Best-of-``repeat`` seconds of each ``fns[i]`` (``setups[i]`` runs untimed before each
    call), after one warm-up round. The functions are interleaved round by round, so load
    from other processes on this shared machine hits ours and the baseline alike, and the
    order rotates each round: on this VM a run right after another large write could take
    twice as long as the same run after a small one (measured with plain ``pwrite`` loops),
    so no function may always follow the same one."""
    best = [float("inf")] * len(fns)
    for r in range(repeat + 1):
        for i in [(r + j) % len(fns) for j in range(len(fns))]:
            fn = fns[i]
            setup = setups[i] if i < len(setups) else None
            if setup is not None:
                setup()
            t0 = time.perf_counter()
            fn()
            dt = time.perf_counter() - t0
            if r:
                best[i] = min(best[i], dt)
    return best


def _batches(total_bytes: int) -> tuple[bytes, list[memoryview]]:
    """Pre-encoded ~16 KiB batches (128 records of 116 bytes) totalling ~``total_bytes``."""
    per = len(encode_columns(make_columns(RECORDS_PER_16K), records_per_batch=RECORDS_PER_16K))
    n = max(1, total_bytes // per) * RECORDS_PER_16K
    data = encode_columns(make_columns(n), records_per_batch=RECORDS_PER_16K)
    sc = scan_entries(np.frombuffer(data, np.uint8))
    mv = memoryview(data)
    views = [mv[p:p + s] for p, s in zip(sc["positions"].tolist(), sc["sizes"].tolist())]
    return data, views


def bench_append(tmp: Path, total: int, repeat: int) -> list[dict]:
    data, views = _batches(total)
    size = len(data)
    avg = size // len(views)
    rows = []
    run = _PerCallAppends(tmp, views, "", LogConfig())
    state = run.state
    bounds = np.cumsum([0] + [len(v) for v in views]).tolist()
    whole = memoryview(data)
    groups = [whole[bounds[i]:bounds[min(i + 64, len(views))]]
              for i in range(0, len(views), 64)]

    def grouped() -> None:
        log = state["log"]
        for g in groups:
            log.append_batches(g)

    t_plain, t_log, t_grp = _best(run.write_plain, run.per_call, grouped, repeat=repeat,
                                  setups=(run.clear_plain, run.fresh_log, run.fresh_log))
    rows.append({
        "name": "append.batches_16KiB.per_call", "value": size / t_log, "unit": "bytes/s",
        "baseline": size / t_plain, "ratio": t_plain / t_log,
        "note": f"{size / MIB:.0f} MiB as {len(views):,} batches of ~{avg:,} B, one "
                f"append_batches per batch vs file.write per batch; target ratio >= 0.7"})
    rows.append({
        "name": "append.batches_16KiB.1MiB_calls", "value": size / t_grp, "unit": "bytes/s",
        "baseline": size / t_plain, "ratio": t_plain / t_grp,
        "note": "same bytes, 64 batches (~1 MiB) per append_batches call (a follower's fetch)"})
    state.pop("log").close()
    run.clear_plain()
    rows += _bench_reserve(tmp, views, repeat)
    rows += _bench_rolling(tmp, views[:4096], repeat)
    rows += _bench_roll_call(tmp, views[:20_000])
    rows += _bench_roll_scaling(tmp, 1500)
    return rows


def bench_append_one_record(tmp: Path, n: int, repeat: int) -> list[dict]:
    """``append.records_1.per_call`` (see the module docstring)."""
    try:
        from aiokafka.record.default_records import DefaultRecordBatchBuilder
    except ImportError:  # pragma: no cover - aiokafka is a dev dependency
        print("append.records_1.per_call skipped: aiokafka is not installed", file=sys.stderr)
        return []
    from kafkalog import Record

    keys, values, stamps = _row_inputs(make_columns(n))
    plain = tmp / "one-record.bin"
    state: dict[str, Log] = {}

    def fresh_log() -> None:
        if "log" in state:
            state.pop("log").close()
        shutil.rmtree(tmp / "log1", ignore_errors=True)
        state["log"] = Log.open(tmp / "log1", LogConfig(), clock=SystemClock())
        os.sync()  # (as bench_append's setups)

    def clear_plain() -> None:
        plain.unlink(missing_ok=True)
        os.sync()

    def ours() -> None:
        append = state["log"].append
        for k, v, t in zip(keys, values, stamps):
            append([Record(k, v, t)])

    def peer() -> None:
        with open(plain, "wb", buffering=0) as f:
            for k, v, t in zip(keys, values, stamps):
                b = DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, 1 << 30)
                b.append(0, timestamp=t, key=k, value=v, headers=[])
                f.write(b.build())

    t_ours, t_peer = _best(ours, peer, repeat=repeat, setups=(fresh_log, clear_plain))
    state.pop("log").close()
    clear_plain()
    return [_row("append.records_1.per_call", n / t_ours, n / t_peer, "records/s",
                 f"{n:,} records of 16 B key + 100 B value, one Log.append([Record]) per "
                 f"record ({t_ours / n * 1e6:.1f} us a call) vs aiokafka's builder + unbuffered "
                 f"file.write per record ({t_peer / n * 1e6:.1f} us); the per-call floor, not "
                 f"a target")]


class _PerCallAppends:
    """One ``append_batches`` per view into a fresh log (``per_call``, after ``fresh_log``)
    and its baseline, ``file.write`` per view into a fresh file (``write_plain``, after
    ``clear_plain``); ``tag`` names their files."""

    def __init__(self, tmp: Path, views: list[memoryview], tag: str, config: LogConfig
                 ) -> None:
        self.views, self.config = views, config
        self.plain, self.log_dir = tmp / f"plain{tag}.bin", tmp / f"log{tag}"
        self.state: dict[str, Log] = {}

    def write_plain(self) -> None:
        with open(self.plain, "wb") as f:
            for v in self.views:
                f.write(v)

    def clear_plain(self) -> None:
        self.plain.unlink(missing_ok=True)
        # no writeback of an earlier run's dirty pages during the timed one (2 cores: the
        # flusher competes with whichever side runs next), for both sides alike
        os.sync()

    def fresh_log(self) -> None:
        if "log" in self.state:
            self.state.pop("log").close()
        shutil.rmtree(self.log_dir, ignore_errors=True)
        self.state["log"] = Log.open(self.log_dir, self.config, clock=SystemClock())
        os.sync()  # (as clear_plain)

    def per_call(self) -> None:
        log = self.state["log"]
        for v in self.views:
            log.append_batches(v)


def _bench_rolling(tmp: Path, views: list[memoryview], repeat: int) -> list[dict]:
    """``append.batches_16KiB.per_call.segment_1MiB`` (see the module docstring)."""
    size = sum(len(v) for v in views)
    run = _PerCallAppends(tmp, views, "_rolling", LogConfig(segment_bytes=MIB))
    state = run.state
    t_plain, t_log = _best(run.write_plain, run.per_call, repeat=repeat,
                           setups=(run.clear_plain, run.fresh_log))
    rolls = len(state["log"].segments) - 1
    state.pop("log").close()
    run.clear_plain()
    return [{
        "name": "append.batches_16KiB.per_call.segment_1MiB", "value": size / t_log,
        "unit": "bytes/s", "baseline": size / t_plain, "ratio": t_plain / t_log,
        "note": f"{size / MIB:.0f} MiB as {len(views):,} batches, one append_batches per batch "
                f"into 1 MiB segments ({rolls} rolls, each scheduling the flush of the rolled "
                f"segment; {t_log / max(rolls, 1) * 1e3:.1f} ms per roll and its 64 appends) vs "
                f"file.write per batch"}]


def _bench_roll_call(tmp: Path, views: list[memoryview]) -> list[dict]:
    """``append.roll_call.segment_64MiB`` (see the module docstring)."""
    d = tmp / "log_roll_call"
    shutil.rmtree(d, ignore_errors=True)
    log = Log.open(d, LogConfig(segment_bytes=64 * MIB), clock=SystemClock())
    os.sync()
    rolled, other = [], []
    try:
        for v in views:
            before = len(log.segments)
            t0 = time.perf_counter()
            log.append_batches(v)
            dt = time.perf_counter() - t0
            (rolled if len(log.segments) > before else other).append(dt)
    finally:
        log.close()
        shutil.rmtree(d, ignore_errors=True)
    if not rolled:  # fewer bytes than one segment (a --quick run)
        return []
    roll_ms, call_ms = float(np.median(rolled)) * 1e3, float(np.median(other)) * 1e3
    return [{
        "name": "append.roll_call.segment_64MiB", "value": roll_ms, "unit": "ms",
        "baseline": call_ms, "ratio": None,
        "note": f"{sum(len(v) for v in views) / MIB:.0f} MiB as {len(views):,} batches, one "
                f"append_batches per batch into 64 MiB segments: the median of the "
                f"{len(rolled)} calls that rolled (slowest {max(rolled) * 1e3:.0f} ms) vs the "
                f"median call ({call_ms * 1e3:.0f} us); the rolling call schedules the flush of "
                f"the rolled segment, as Kafka's roll does"}]


def _bench_roll_scaling(tmp: Path, rolls: int) -> list[dict]:
    """``append.roll.at_1500_segments`` (see the module docstring)."""
    from kafkalog.records.record import Record

    big_dir, small_dir = tmp / "log_roll_scaling", tmp / "log_roll_scaling_small"
    for d in (big_dir, small_dir):
        shutil.rmtree(d, ignore_errors=True)
    cfg = LogConfig(segment_bytes=MIB)
    record = [Record(b"k" * 16, b"v" * 100, 1_700_000_000_000)]
    big = Log.open(big_dir, cfg, clock=SystemClock())
    small = Log.open(small_dir, cfg, clock=SystemClock())

    def roll(log: Log) -> float:
        log.append(record)
        # the flush the last roll scheduled is done first: its fsyncs (the journal of the
        # same filesystem) would otherwise land on random rolls' file creations
        log.await_scheduled_flushes()
        t0 = time.perf_counter()
        log.roll()
        return time.perf_counter() - t0

    try:
        for _ in range(rolls - 100):  # untimed: the big log grows to rolls - 100 segments
            roll(big)
        os.sync()
        # then the two logs roll in turn, so that whatever the filesystem does meanwhile
        # (writeback, discards of earlier runs' files) lands on both sides alike
        took_big, took_small = [], []
        for _ in range(100):
            took_big.append(roll(big))
            took_small.append(roll(small))
        segments = len(big.segments)
    finally:
        big.close()
        small.close()
        for d in (big_dir, small_dir):
            shutil.rmtree(d, ignore_errors=True)
    last = float(np.median(took_big)) * 1e3
    first = float(np.median(took_small)) * 1e3
    return [{
        "name": f"append.roll.at_{rolls}_segments", "value": last, "unit": "ms",
        "baseline": first, "ratio": first / last,
        "note": f"Log.roll() median latency over rolls {rolls - 100}-{rolls} of a log of 1 MiB "
                f"segments ({segments} at the end) vs the first 100 rolls of a new log, the two "
                f"rolled in turn; one record appended before each roll; ratio = first / last "
                f"(1.0: no growth with the directory)"}]


def _bench_reserve(tmp: Path, views: list[memoryview], repeat: int) -> list[dict]:
    """``append.pwrite_16KiB.reserved``: why segments reserve blocks ahead (see the module
    docstring)."""
    from kafkalog.segment import RESERVE_AHEAD_BYTES, _reserve_blocks

    if _reserve_blocks is None:  # pragma: no cover - the optional extension is not built
        return []
    path = tmp / "pwrite.bin"
    size = sum(len(v) for v in views)

    def clear() -> None:
        path.unlink(missing_ok=True)
        os.sync()  # (as bench_append's setups)

    def loop(reserve: bool) -> Callable[[], None]:
        def run() -> None:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                pos = reserved = 0
                for v in views:
                    if reserve and pos + len(v) > reserved:
                        if _reserve_blocks(fd, reserved, RESERVE_AHEAD_BYTES):
                            raise OSError("this filesystem does not reserve blocks")
                        reserved += RESERVE_AHEAD_BYTES
                    pos += os.pwrite(fd, v, pos)
                os.ftruncate(fd, pos)  # (what a segment's close does with the reserved tail)
            finally:
                os.close(fd)
        return run

    try:
        t_plain, t_reserved = _best(loop(False), loop(True), repeat=repeat,
                                    setups=(clear, clear))
    except OSError as e:  # pragma: no cover - another filesystem
        print(f"append.pwrite_16KiB.reserved skipped: {e}", file=sys.stderr)
        return []
    finally:
        clear()
    return [{
        "name": "append.pwrite_16KiB.reserved", "value": size / t_reserved, "unit": "bytes/s",
        "baseline": size / t_plain, "ratio": t_plain / t_reserved,
        "note": f"the same {len(views):,} batches by os.pwrite into a new file, with "
                f"fallocate(KEEP_SIZE) {RESERVE_AHEAD_BYTES // MIB} MiB ahead (as a segment "
                f"past its first MiB) vs without"}]


def bench_columns(tmp: Path, n: int, repeat: int) -> list[dict]:
    cols = make_columns(n)
    state: dict[str, Log] = {}

    def fresh_log() -> None:
        if "log" in state:
            state.pop("log").close()
        d = tmp / "cols"
        shutil.rmtree(d, ignore_errors=True)
        state["log"] = Log.open(d, LogConfig(), clock=SystemClock())

    t_enc, t_log = _best(lambda: encode_columns(cols, records_per_batch=1000),
                         lambda: state["log"].append(cols, records_per_batch=1000),
                         repeat=repeat, setups=(None, fresh_log))
    state.pop("log").close()
    return [{
        "name": "append.columns", "value": n / t_log, "unit": "records/s",
        "baseline": n / t_enc, "ratio": t_enc / t_log,
        "note": f"{n:,} records of 16 B key + 100 B value, 1,000 per batch, uncompressed; "
                f"baseline encode_columns alone; target >= 1,000,000 records/s"}]


def bench_small_segments(tmp: Path, segments: int, repeat: int) -> list[dict]:
    """``scan.read_table.small_segments`` (see the module docstring)."""
    import pyarrow as pa

    d = tmp / "small_segments"
    shutil.rmtree(d, ignore_errors=True)
    per = 20
    keys, values, stamps = _row_inputs(make_columns(segments * per))
    table = pa.table({"key": pa.array(keys, pa.binary()), "value": pa.array(values, pa.binary()),
                      "timestamp": pa.array(stamps, pa.int64())})
    with Log.open(d, LogConfig(), clock=SystemClock()) as log:
        for i in range(segments):
            log.append(table.slice(i * per, per), records_per_batch=per)
            log.roll()
    small = log_module.READ_TABLE_SMALL_RANGE_BYTES
    try:
        with Log.open(d, LogConfig(), clock=SystemClock()) as log:
            def grouped() -> pa.Table:
                log_module.READ_TABLE_SMALL_RANGE_BYTES = small
                return log.read_table()

            def one_by_one() -> pa.Table:
                log_module.READ_TABLE_SMALL_RANGE_BYTES = 0
                return log.read_table()

            if not grouped().equals(one_by_one()):
                raise AssertionError("small segments read together gave another table")
            t_grp, t_one = _best(grouped, one_by_one, repeat=repeat)
            n_seg = len(log.segments)

        def reopen() -> None:
            Log.open(d, LogConfig(), clock=SystemClock()).close()

        t_open = float("inf")
        for _ in range(repeat):
            t0 = time.perf_counter()
            reopen()
            t_open = min(t_open, time.perf_counter() - t0)
    finally:
        log_module.READ_TABLE_SMALL_RANGE_BYTES = small
        shutil.rmtree(d, ignore_errors=True)
    n = segments * per
    return [{"name": "scan.read_table.small_segments", "value": n / t_grp, "unit": "records/s",
             "baseline": n / t_one, "ratio": t_one / t_grp,
             "note": f"{n:,} records in {n_seg:,} segments of {per} (116-byte records): small "
                     f"segments read and decoded together vs one decode per segment; same "
                     f"table (checked)"},
            {"name": "open.clean.small_segments", "value": t_open, "unit": "s",
             "baseline": None, "ratio": None,
             "note": f"Log.open + close of the same {n_seg:,}-segment log after a clean "
                     f"shutdown (best of {repeat}; {t_open / n_seg * 1e3:.2f} ms per segment: "
                     f"one directory listing, every segment's indexes opened and checked)"}]


def bench_scan(tmp: Path, n: int, repeat: int) -> list[dict]:
    d = tmp / "scan"
    shutil.rmtree(d, ignore_errors=True)
    cols = make_columns(n)
    with Log.open(d, LogConfig(), clock=SystemClock()) as log:
        log.append(cols, records_per_batch=1000)
    data = b"".join(p.read_bytes() for p in sorted(d.glob("*.log")))
    rows = []
    with Log.open(d, LogConfig(), clock=SystemClock()) as log:
        t_tab, t_dec = _best(lambda: log.read_table(), lambda: decode_columns(data).to_arrow(),
                             repeat=repeat)
        rows.append({
            "name": "scan.read_table", "value": n / t_tab, "unit": "records/s",
            "baseline": n / t_dec, "ratio": t_dec / t_tab,
            "note": f"{n:,} records; baseline decode_columns(...).to_arrow() over the same "
                    f"bytes in memory (CRC checked on both sides)"})

        def py_records() -> int:
            return sum(1 for _ in log.records())

        def codec_records() -> int:
            return sum(1 for b in iter_batches(data) for _ in b)

        t_rec, t_it = _best(py_records, codec_records, repeat=max(1, repeat // 2))
        rows.append({
            "name": "scan.records", "value": n / t_rec, "unit": "records/s",
            "baseline": n / t_it, "ratio": t_it / t_rec,
            "note": "Record objects; baseline iter_batches + record iteration in memory"})
    shutil.rmtree(d, ignore_errors=True)
    return rows


def _one_segment(d: Path, size: int) -> Path:
    """A log of one segment of ~``size`` bytes of ~16 KiB batches; its ``.log``."""
    shutil.rmtree(d, ignore_errors=True)
    data, _ = _batches(16 * MIB)
    with Log.open(d, LogConfig(segment_bytes=2 * GIB - 1), clock=SystemClock()) as log:
        written = 0
        base = 0
        while written < size:
            # re-encode the same 16 MiB with shifted offsets: rewrite base offsets in place
            buf = bytearray(data)
            sc = scan_entries(np.frombuffer(buf, np.uint8))
            for p, b in zip(sc["positions"].tolist(), sc["base_offsets"].tolist()):
                buf[p:p + 8] = (b + base).to_bytes(8, "big")
            log.append_batches(bytes(buf))
            base += int(sc["last_offsets"][-1]) + 1
            written += len(buf)
    [seg] = sorted(d.glob("*.log"))
    return seg


def bench_recovery(tmp: Path, size: int, repeat: int) -> list[dict]:
    d = tmp / "recover"
    seg = _one_segment(d, size)
    actual = seg.stat().st_size

    def crash() -> None:
        (d / CLEAN_SHUTDOWN_FILE).unlink(missing_ok=True)

    def recover() -> None:
        log = Log.open(d, LogConfig(segment_bytes=2 * GIB - 1), clock=SystemClock(),
                       recovery_point=0)
        assert log.loaded.recovered_segments[0][1].truncated_bytes == 0
        log.close()


    def plain_read() -> None:
        buf = bytearray(16 * MIB)
        with open(seg, "rb", buffering=0) as f:
            while f.readinto(buf):
                pass

    def segment_recover() -> None:
        s = LogSegment.open(d, 0, LogConfig(segment_bytes=2 * GIB - 1), SystemClock(),
                            file_already_exists=True)
        assert s.recover().truncated_bytes == 0
        s.close()

    mm = np.fromfile(seg, dtype=np.uint8)
    t_rec, t_seg, t_read, t_crc = _best(recover, segment_recover, plain_read,
                                        lambda: crc32c(mm), repeat=repeat,
                                        setups=(crash, None, None, None))
    gib = actual / GIB
    shutil.rmtree(d, ignore_errors=True)
    return [{
        "name": f"recovery.{actual // MIB}MiB", "value": t_rec / gib, "unit": "s/GiB",
        "baseline": t_read / gib, "ratio": t_read / t_rec,
        "note": f"Log.open with recovery of one {actual / MIB:.0f} MiB segment of ~16 KiB "
                f"batches (CRC-32C per batch, index rebuild, producer-state replay, close incl. "
                f"fsync) vs plain sequential read; crc32c of the whole file alone: "
                f"{t_crc / gib:.3f} s/GiB"}, {
        "name": f"recovery.{actual // MIB}MiB.segment_only", "value": t_seg / gib,
        "unit": "s/GiB", "baseline": t_read / gib, "ratio": t_read / t_seg,
        "note": "LogSegment.recover alone on the same file (scan, CRC-32C per batch, index "
                "rebuild, trim): the log engine's share of the row above"}]


def bench_read_table_vs_aiokafka(tmp: Path, n: int, repeat: int) -> list[dict]:
    from bench_codec import _peer_decode, _peers

    peers = _peers()
    if "aiokafka" not in peers:  # pragma: no cover - optional peer
        return []
    memory_records, _, note = peers["aiokafka"]
    cols = make_columns(n)
    rows = []
    for codec in ("none", "lz4", "zstd"):
        d = tmp / f"rt-{codec}"
        shutil.rmtree(d, ignore_errors=True)
        with Log.open(d, LogConfig(), clock=SystemClock()) as log:
            log.append(cols, records_per_batch=1000, compression=codec)
        data = b"".join(p.read_bytes() for p in sorted(d.glob("*.log")))
        peer = _peer_decode(memory_records, data)
        with Log.open(d, LogConfig(), clock=SystemClock()) as log:
            t_tab, t_peer = _best(lambda log=log: log.read_table(), peer, repeat=repeat)
        name = "scan.read_table.vs_aiokafka" + ("" if codec == "none" else f".{codec}")
        rows.append({"name": name, "value": n / t_tab, "unit": "records/s",
                     "baseline": n / t_peer, "ratio": t_peer / t_tab,
                     "note": f"{n:,} records as {codec}; Log.read_table (Arrow table, CRC "
                             f"checked) vs aiokafka's MemoryRecords over the same bytes in "
                             f"memory (CRC checked, every field read); {note}"})
        shutil.rmtree(d, ignore_errors=True)
    return rows


# Peak RSS as the kernel's VmHWM of the child's own address space: getrusage's ru_maxrss
# of an exec'd child also counts the parent's RSS at fork time (kept across exec by Linux).
_PEAK = ("print(next(int(line.split()[1]) for line in open('/proc/self/status') "
         "if line.startswith('VmHWM')))")

# Beside it, the peak of the child's anonymous memory (RssAnon: what it allocated and touched,
# without the mapped segment's pages), sampled every 0.5 ms by a thread (the decode kernels
# and codecs release the GIL, so the sampler runs while they allocate).
_ANON_SAMPLER = """
import threading, time
def _anon():
    for line in open('/proc/self/status'):
        if line.startswith('RssAnon'):
            return int(line.split()[1])
_anon_peak = [0]
def _sample():
    while True:
        _anon_peak[0] = max(_anon_peak[0], _anon())
        time.sleep(0.0005)
threading.Thread(target=_sample, daemon=True).start()
"""

_CHILD_READ_TABLE = _ANON_SAMPLER + """
import sys
from kafkalog.log import Log
with Log.open(sys.argv[1]) as log:
    table = log.read_table()
    print(table.num_rows, table.nbytes)
time.sleep(0.01)
print(max(_anon_peak[0], _anon()))
""" + _PEAK

_CHILD_DUMP = """
import sys
from kafkalog.cli import main
sys.stdout = open("/dev/null", "w")
rc = main(["dump-segments", "--deep-iteration", "--no-progress", "--files", sys.argv[1]])
sys.stdout = sys.__stdout__
print(rc)
""" + _PEAK


def _child(code: str, *args: str) -> list[str]:
    """Run ``code`` in a child Python; its stdout, split (the child reports its own peak RSS,
    VmHWM, in KiB)."""
    import subprocess

    proc = subprocess.run([sys.executable, "-c", code, *args], stdout=subprocess.PIPE,
                          text=True, check=True)
    return proc.stdout.split()


def _fill_log(d: Path, size: int, codec: str) -> int:
    """A log of one segment of ~``size`` bytes of 1,000-record batches; its .log size."""
    shutil.rmtree(d, ignore_errors=True)
    chunk = make_columns(200_000)
    with Log.open(d, LogConfig(segment_bytes=2 * GIB - 1), clock=SystemClock()) as log:
        while log.size < size:
            log.append(chunk, records_per_batch=1000, compression=codec)
    [seg] = sorted(d.glob("*.log"))
    return seg.stat().st_size


def bench_memory(tmp: Path, size: int) -> list[dict]:
    rows = []
    floor_anon_kib, floor_kib = (int(x) for x in _child(
        _ANON_SAMPLER + "import kafkalog.log, kafkalog.records.columnar, pyarrow\n"
        "time.sleep(0.01)\nprint(max(_anon_peak[0], _anon()))\n" + _PEAK))
    for codec in ("none", "lz4"):
        d = tmp / f"mem-{codec}"
        actual = _fill_log(d, size, codec)
        n, nbytes, anon_kib, peak_kib = (int(x) for x in _child(_CHILD_READ_TABLE, str(d)))
        chunk = log_module.READ_TABLE_CHUNK_BYTES
        rows.append({
            "name": f"memory.read_table.{codec}", "value": peak_kib / 1024, "unit": "MiB",
            "baseline": nbytes / MIB, "ratio": None,
            "note": f"peak RSS of a child running Log.read_table over one {actual / MIB:.0f} "
                    f"MiB segment ({codec}, {n:,} records), the mapped segment's pages "
                    f"included; baseline: the table's nbytes; "
                    f"a child that only imports kafkalog peaks at {floor_kib / 1024:.0f} MiB; "
                    f"decoded in {chunk // MIB} MiB chunks"})
        beyond = anon_kib / 1024 - floor_anon_kib / 1024 - nbytes / MIB
        rows.append({
            "name": f"memory.read_table.{codec}.anon_beyond_output", "value": beyond,
            "unit": "MiB", "baseline": chunk / MIB, "ratio": None,
            "note": f"the same child's peak anonymous memory (RssAnon sampled every 0.5 ms: "
                    f"{anon_kib / 1024:,.0f} MiB, without the mapped segment) minus the "
                    f"import-only child's ({floor_anon_kib / 1024:,.0f} MiB) and the table's "
                    f"{nbytes / MIB:,.0f} MiB: what the decode held beyond its output at its "
                    f"peak; baseline: one chunk ({chunk // MIB} MiB of batches)"})
        if codec == "none":
            [seg] = sorted(d.glob("*.log"))
            rc, peak = (int(x) for x in _child(_CHILD_DUMP, str(seg)))
            rows.append({
                "name": "memory.dump_deep", "value": peak / 1024, "unit": "MiB",
                "baseline": floor_kib / 1024, "ratio": None,
                "note": f"peak RSS of `kafkalog dump-segments --deep-iteration` over the "
                        f"{actual / MIB:.0f} MiB uncompressed segment (output to /dev/null, "
                        f"exit code {rc}); baseline: a child that only imports kafkalog"})
        shutil.rmtree(d, ignore_errors=True)
    return rows


def bench_read_only(tmp: Path, n: int, repeat: int) -> list[dict]:
    d = tmp / "ro"
    shutil.rmtree(d, ignore_errors=True)
    cols = make_columns(n)
    cfg = LogConfig(segment_bytes=8 * MIB)
    with Log.open(d, cfg, clock=SystemClock()) as log:
        log.append(cols, records_per_batch=1000)
    rows = []
    writer = Log.open(d, cfg, clock=SystemClock())
    reader = Log.open(d, cfg, clock=SystemClock(), read_only=True)
    try:
        segs = len(reader.segments)
        t_ro, t_w = _best(lambda: sum(1 for _ in reader.records()),
                          lambda: sum(1 for _ in writer.records()), repeat=repeat)
        rows.append({"name": "read_only.records", "value": n / t_ro, "unit": "records/s",
                     "baseline": n / t_w, "ratio": t_w / t_ro,
                     "note": f"{n:,} records in {segs} segments; baseline the writing Log's "
                             "own records()"})
        t_ro, t_w = _best(lambda: reader.read_table(), lambda: writer.read_table(),
                          repeat=repeat)
        rows.append({"name": "read_only.read_table", "value": n / t_ro, "unit": "records/s",
                     "baseline": n / t_w, "ratio": t_w / t_ro,
                     "note": "pread copy + whole-batch check per segment vs the writer's "
                             "mapping"})
    finally:
        reader.close()
        writer.close()
    # refresh with many segments
    d2 = tmp / "ro-many"
    shutil.rmtree(d2, ignore_errors=True)
    with Log.open(d2, LogConfig(segment_bytes=64 * 1024), clock=SystemClock()) as log:
        c = make_columns(2000)
        while len(log.segments) < 64:
            log.append(c, records_per_batch=100)
    reader = Log.open(d2, read_only=True)
    paths = sorted(d2.glob("*.log"))
    try:
        nseg = len(reader.segments)
        t_ref, t_stat = _best(reader.refresh, lambda: [os.stat(p) for p in paths],
                              repeat=repeat * 3)
        rows.append({"name": "read_only.refresh", "value": t_ref / nseg * 1e6,
                     "unit": "us/segment", "baseline": t_stat / nseg * 1e6,
                     "ratio": t_stat / t_ref,
                     "note": f"{nseg} segments, nothing new; baseline os.stat of each .log"})
    finally:
        reader.close()
    shutil.rmtree(d, ignore_errors=True)
    shutil.rmtree(d2, ignore_errors=True)
    return rows


def bench_time_search(tmp: Path, segments: int, repeat: int) -> list[dict]:
    """The ``time_search.*`` rows (see the module docstring)."""
    rows = []
    cfg = LogConfig(segment_bytes=MIB)
    for late in (False, True):
        d = tmp / ("ts-late" if late else "ts")
        shutil.rmtree(d, ignore_errors=True)
        cols = make_columns(10_000)
        with Log.open(d, cfg, clock=SystemClock()) as log:
            i = 0
            while len(log.segments) <= segments:
                ts = cols.timestamps + 10_000 * i
                if late and i % 50 == 0:
                    ts = ts + 60_000
                log.append(dataclasses.replace(cols, timestamps=ts), records_per_batch=100)
                i += 1
            leo = log.log_end_offset
            last_ts = int(log.segments[-1].searched_max_timestamp().timestamp)
        state: dict = {}

        def reopen(state: dict = state, d: Path = d) -> None:
            if "log" in state:
                state.pop("log").close()
            state["log"] = Log.open(d, cfg, clock=SystemClock())

        def check_all(state: dict = state) -> None:
            for seg in state["log"].segments:
                seg.check_time_index()

        def first(state: dict = state, t: int = last_ts - 5) -> None:
            state["log"].offset_for_timestamp(t)

        mid = BASE_TS + leo // 2  # a target in a middle segment
        try:
            (t_check,) = _best(check_all, repeat=repeat, setups=(reopen,))
            reopen()
            check_all()
            (t_search,) = _best(partial(state["log"].offset_for_timestamp, mid),
                                repeat=repeat * 20)
            nseg = len(state["log"].segments)
            tag = "out_of_order" if late else "check_per_segment"
            rows.append({"name": f"time_search.{tag}", "value": t_check / nseg * 1e6,
                         "unit": "us/segment", "baseline": t_search * 1e6,
                         "ratio": t_search / (t_check / nseg),
                         "note": f"check_time_index of each of {nseg} segments of 1 MiB "
                                 f"({leo:,} records, 100 per batch) right after an open"
                                 + (", every 50th batch a minute late" if late else "")
                                 + "; baseline one offset_for_timestamp (us) on the checked "
                                   "log"})
            if not late:
                t_first, t_again = _best(first, first, repeat=repeat, setups=(reopen, None))
                rows.append({"name": "time_search.first_after_open", "value": t_first * 1e6,
                             "unit": "us", "baseline": t_again * 1e6,
                             "ratio": t_again / t_first,
                             "note": f"offset_for_timestamp of a record in the last of {nseg} "
                                     "segments right after an open (every segment checked) "
                                     "vs the same call again"})
        finally:
            if "log" in state:
                state.pop("log").close()
        shutil.rmtree(d, ignore_errors=True)
    from kafkalog.records.batch import iter_batches
    from kafkalog.records.timestamp_search import first_record_at_or_after

    def by_records(data: bytes, t: int) -> tuple[int, int] | None:
        for b in iter_batches(data):
            for r in b:
                if r.timestamp >= t:
                    return r.timestamp, r.offset
        return None

    for codec in ("none", "lz4"):
        data = bytes(encode_columns(make_columns(100), records_per_batch=100,
                                    compression=codec))
        target = BASE_TS + 99  # the last record: every record looked at
        assert first_record_at_or_after(data, target) == by_records(data, target)
        reps = 2000

        def loop(fn: Callable, data: bytes = data, target: int = target,
                 reps: int = reps) -> None:
            for _ in range(reps):
                fn(data, target)

        t_new, t_old = _best(partial(loop, first_record_at_or_after),
                             partial(loop, by_records), repeat=repeat)
        rows.append({"name": f"time_search.batch.{codec}", "value": t_new / reps * 1e6,
                     "unit": "us", "baseline": t_old / reps * 1e6, "ratio": t_old / t_new,
                     "note": f"the first record at or after a timestamp in one batch of 100 "
                             f"116-byte records ({codec}; the last one qualifies): one kernel "
                             "over the records vs Record objects (the path before)"})
    return rows


def bench_file_copy(tmp: Path, size: int, repeat: int) -> list[dict]:
    import mmap
    from unittest import mock

    from kafkalog import file_copy
    from kafkalog.file_copy import SCAN_WINDOW, FileCopy
    from kafkalog.page_pool import page_moves_supported

    d = tmp / "copy"
    seg = _one_segment(d, size)
    actual = seg.stat().st_size

    def crc_all(buf: np.ndarray, sc: dict) -> None:
        mv = memoryview(buf)
        for p, s in zip(sc["positions"][: sc["count"]].tolist(),
                        sc["sizes"][: sc["count"]].tolist()):
            crc32c(mv[p + 21:p + s])

    def copied() -> None:
        with FileCopy(seg) as c:
            released = 0
            for sc in c.scan_chunks(0, max_entries=65536):
                crc_all(c.buf, sc)
                end = int(sc["stop_position"])
                if end - released > SCAN_WINDOW // 2:  # as dump-segments and Spark tasks do
                    c.release(end)
                    released = end

    def fresh_pages() -> None:
        with mock.patch.object(file_copy, "POOL_BYTES", 0):
            copied()

    def mapped() -> None:
        with open(seg, "rb") as f:
            m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        buf = np.frombuffer(m, np.uint8)
        pos = 0
        while True:
            sc = scan_entries(buf, pos, max_entries=65536)
            crc_all(buf, sc)
            if sc["stop_reason"] != 5:
                break
            pos = int(sc["stop_position"])
        del buf
        m.close()

    t_copy, t_map, t_fresh = _best(copied, mapped, fresh_pages, repeat=repeat)
    shutil.rmtree(d, ignore_errors=True)
    mib = actual / MIB
    what = f"one {mib:.0f} MiB segment of ~16 KiB batches, page cache warm"
    pool = ("released pages reused (kafkalog.page_pool)" if page_moves_supported()
            else "page moves NOT available here: pages freed and faulted")
    return [{"name": "file_copy.scan_crc", "value": mib / t_copy, "unit": "MiB/s",
             "baseline": mib / t_map, "ratio": t_map / t_copy,
             "note": f"{what}: FileCopy + scan + CRC-32C per batch vs mmap + the same; {pool}"},
            {"name": "file_copy.scan_crc.vs_fresh_pages", "value": mib / t_copy,
             "unit": "MiB/s", "baseline": mib / t_fresh, "ratio": t_fresh / t_copy,
             "note": f"{what}: the same FileCopy read, released pages moved under the next "
                     "window vs freed (every window faulting in fresh pages, as before)"}]


def run(quick: bool = False) -> list[dict]:
    tmp = Path(tempfile.mkdtemp(prefix="kafkalog-bench-log-", dir=os.environ.get("TMPDIR")))
    try:
        rows = []
        rows += bench_append(tmp, 64 * MIB if quick else 512 * MIB, 2 if quick else 3)
        rows += bench_append_one_record(tmp, 20_000 if quick else 200_000, 2 if quick else 3)
        rows += bench_columns(tmp, 200_000 if quick else 1_000_000, 2 if quick else 3)
        rows += bench_scan(tmp, 200_000 if quick else 1_000_000, 2 if quick else 3)
        rows += bench_small_segments(tmp, 300 if quick else 1500, 3 if quick else 5)
        rows += bench_recovery(tmp, 256 * MIB if quick else GIB, 2 if quick else 3)
        rows += bench_read_table_vs_aiokafka(tmp, 200_000 if quick else 1_000_000,
                                             2 if quick else 5)
        rows += bench_memory(tmp, 128 * MIB if quick else GIB)
        rows += bench_read_only(tmp, 200_000 if quick else 1_000_000, 2 if quick else 3)
        rows += bench_file_copy(tmp, 256 * MIB if quick else GIB, 2 if quick else 3)
        rows += bench_time_search(tmp, 16 if quick else 64, 3 if quick else 5)
        return rows
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller inputs")
    args = parser.parse_args(argv)
    print(format_rows(run(quick=args.quick)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

