"""Readers in other processes under a writer that rolls, trims, truncates and recovers.

Shared by ``tests/reliability/test_readers.py`` (CI budget) and ``tools/reliability.py readers``
(the figures of RELIABILITY.md). Run as ``python -m tests.reliability.readers writer|reader ...``
for the child processes.

The writer (one process per *round*, so that every round's ``Log.open`` recovers what the
previous one left) appends 1 to 8 records at a time into 8 KB segments, so it rolls every few
appends: each roll trims the previous active segment's preallocated ``.index``/``.timeindex``
(and, in odd rounds, ``preallocate=true``, its ``.log``) with ``ftruncate``. Now and then it
flushes, applies retention (``file.delete.delay.ms=0``: files unlinked at once), rolls by hand or
truncates the log back a few offsets (``truncate_to``: ``.log``, indexes and ``.txnindex`` cut in
place) and re-appends. A round ends with a clean ``close`` (indexes trimmed again), or, one round
in three, with ``SIGKILL`` at a random moment: the next round's open then recovers (truncating a
torn tail and rebuilding indexes). Every record's content is a pure function of its offset
(:func:`tests.reliability.crash.expected_record`), so a truncation followed by re-appending writes
the same records again and a reader's result can be checked without trusting the writer.

The readers, each a long-lived process looping until the deadline, restarted when it dies:

``dump``
    ``kafkalog dump-segments`` (the CLI's ``main``) on the newest segment's ``.index``,
    ``.timeindex``, ``.log`` (``--print-data-log``), ``.txnindex`` and the newest ``.snapshot``,
    sometimes an older segment's, sometimes with ``--index-sanity-check``/``--verify-index-only``;
    plus the dump API with raw record bytes, each record checked.
``verify``
    ``kafkalog verify DIR`` (the CLI's ``main``).
``log``
    ``Log.open(dir, read_only=True)`` and the random scans, fetches, timestamp lookups and table
    reads of :func:`tests.reliability.concurrency.reader_ops` (every record checked), reopened
    every few seconds.
``spark``
    The Spark source's planning (:func:`kafkalog.spark.planning.plan_read`, no Spark session
    needed) and its executor-side reader (:func:`kafkalog.spark.read.read_chunks`) over the
    plan, every row checked; sometimes a timestamp-resolved plan.

What counts: a reader process ended by a signal (SIGBUS is what a mapping of a file the writer
shrinks produces), a record or row that is not what was written at its offset, and exceptions
other than the documented races (a segment deleted or truncated under the reader surfaces as
``OffsetOutOfRangeError``, a ``KafkaLogError`` naming the file, or a dump/verify error line and
exit status 1). Those documented races are counted, not failed.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

from tests.reliability.concurrency import Stats
from tests.reliability.crash import CODECS, REPO, T0, expected_record

TOPIC_DIR = "live-0"  # <topic>-<partition>: the Spark source discovers it by name
READER_KINDS = ("dump", "verify", "log", "spark")


def config(preallocate: bool) -> Any:
    from kafkalog.config import LogConfig

    # 8 KB segments: a roll every few appends; 1 MiB preallocated indexes: a trim cuts 255 of
    # their 256 pages; retention keeps the directory at ~25 segments
    return LogConfig(segment_bytes=8_000, index_interval_bytes=512,
                     segment_index_bytes=1 << 20, retention_bytes=200_000, retention_ms=-1,
                     file_delete_delay_ms=0, preallocate=preallocate)


# -- writer ------------------------------------------------------------------------------------


def writer_main(directory: str, seed: int, round_no: int, seconds: float, out: str) -> None:
    """One writer round (see the module notes); stats go to ``out`` every 0.5 s and at exit."""
    from kafkalog.log import Log

    rnd = random.Random(seed * 7919 + round_no)
    stats: Counter = Counter()
    log = Log.open(directory, config(preallocate=round_no % 2 == 1))
    crash = round_no % 3 == 2
    t0 = time.time()
    deadline = t0 + seconds
    kill_at = t0 + seconds * (0.3 + 0.6 * rnd.random()) if crash else None
    last_dump = 0.0

    def dump() -> None:
        Path(out).write_text(json.dumps(dict(stats)))

    while time.time() < deadline:
        leo = log.log_end_offset
        n = rnd.choice([1, 2, 3, 5, 8])
        while n > 1 and sum(len(expected_record(seed, o).value or b"")
                            for o in range(leo, leo + n)) > 6_000:
            n //= 2  # one append stays inside segment.bytes
        active = log.segments[-1].base_offset
        log.append([expected_record(seed, o) for o in range(leo, leo + n)],
                   compression=rnd.choice(CODECS))
        stats["appended"] += n
        if log.segments[-1].base_offset != active:
            stats["rolls"] += 1
        r = rnd.random()
        if r < 0.05:
            log.flush()
        elif r < 0.10:
            stats["segments_deleted"] += log.enforce_retention()
        elif r < 0.12:
            log.roll()
            stats["rolls"] += 1
        elif r < 0.14:
            # truncate a few offsets back (sometimes into the previous segment); the next
            # appends write the same records again
            target = max(log.log_start_offset, log.log_end_offset - rnd.randrange(1, 60))
            if log.truncate_to(target):
                stats["truncations"] += 1
        now = time.time()
        if now - last_dump > 0.5:
            dump()
            last_dump = now
        if kill_at is not None and now > kill_at:
            stats["killed"] += 1
            dump()
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(0.001)  # leave the shared cores to the readers too
    log.close()
    stats["closed"] += 1
    dump()


# -- readers -----------------------------------------------------------------------------------


class Tally(Stats):
    """:class:`tests.reliability.concurrency.Stats` (what ``reader_ops`` reports to), written
    out as JSON by a reader process."""

    def __init__(self) -> None:
        super().__init__()
        self.examples: dict[str, list[str]] = {}

    def example(self, key: str, msg: str, keep: int = 3) -> None:
        """Keep up to ``keep`` messages of an allowed outcome ``key`` (to read what it was)."""
        kept = self.examples.setdefault(key, [])
        if len(kept) < keep:
            kept.append(msg[:600])

    def to_json(self) -> dict:
        return {"counts": dict(self.c), "kinds": dict(self.kinds),
                "violations": self.violations, "examples": self.examples}


def _check_record(seed: int, offset: int, key: Any, value: Any, timestamp: int | None,
                  tally: Tally, where: str) -> bool:
    want = expected_record(seed, offset)
    if key != want.key or value != want.value or (timestamp is not None
                                                  and timestamp != want.timestamp):
        tally.violation(f"{where}: record at offset {offset} is not what the writer wrote")
        return False
    tally.add("records_checked")
    return True


def _segment_files(directory: Path) -> list[int]:
    from kafkalog import files

    out = []
    for name in os.listdir(directory):
        if name.endswith(".log"):
            with contextlib.suppress(ValueError):
                out.append(files.offset_from_filename(name))
    return sorted(out)


def _dump_once(directory: Path, seed: int, rnd: random.Random, tally: Tally) -> None:
    from kafkalog import cli, files
    from kafkalog.tools import dump as d

    bases = _segment_files(directory)
    if not bases:
        time.sleep(0.01)
        return
    base = bases[-1] if rnd.random() < 0.7 or len(bases) == 1 else rnd.choice(bases[:-1])
    kind = rnd.choice(["index", "timeindex", "log", "log_api", "txnindex", "snapshot"])
    if kind == "snapshot":
        snaps = sorted(p for p in os.listdir(directory) if p.endswith(".snapshot"))
        if not snaps:
            return
        path = str(directory / snaps[-1])
    elif kind == "log_api":
        path = str(files.log_file(directory, base))
        opts = d.DumpOptions(print_data_log=True, deep_iteration=True, keep_raw=True)
        batch_valid = True
        try:
            for item in d.dump_file(path, opts):
                if isinstance(item, d.BatchItem):
                    # a batch the writer is still copying in (or cutting) when the dump copies
                    # it: reported isValid: false, its records decoded as Kafka's dump does
                    batch_valid = item.is_valid
                    if not batch_valid:
                        tally.add("dump_invalid_batch")
                elif isinstance(item, d.RecordItem) and not item.is_control_batch \
                        and batch_valid:
                    _check_record(seed, item.offset, item.key, item.value, item.timestamp,
                                  tally, "dump_file")
        except d.DumpAbort:
            tally.add("dump_abort")  # e.g. the file went away: Kafka's error, no crash
        tally.add("op_dump_api")
        return
    else:
        suffix = {"index": ".index", "timeindex": ".timeindex", "log": ".log",
                  "txnindex": ".txnindex"}[kind]
        path = str(directory / f"{base:020d}{suffix}")
    args = ["dump-segments", "--files", path]
    if kind == "log":
        args.append("--print-data-log")
    elif kind in ("index", "timeindex"):
        args += rnd.choice([[], [], ["--verify-index-only"], ["--index-sanity-check"]])
    with open(os.devnull, "w") as null, contextlib.redirect_stdout(null), \
            contextlib.redirect_stderr(null):
        status = cli.main(args)
    tally.add(f"dump_exit_{status}")
    tally.add(f"op_dump_{kind}")


def _verify_once(directory: Path, tally: Tally) -> None:
    from kafkalog import cli

    with open(os.devnull, "w") as null, contextlib.redirect_stdout(null), \
            contextlib.redirect_stderr(null):
        status = cli.main(["verify", str(directory)])
    if status not in (0, 1):
        tally.violation(f"verify exit status {status}")
    tally.add(f"verify_exit_{status}")
    tally.add("op_verify")


def _spark_once(directory: Path, seed: int, rnd: random.Random, tally: Tally) -> None:
    import numpy as np

    from kafkalog.errors import KafkaLogError
    from kafkalog.spark.arrow import arrow_schema
    from kafkalog.spark.options import ReadOptions
    from kafkalog.spark.planning import plan_read
    from kafkalog.spark.read import ReadSettings, read_chunks
    from kafkalog.spark.schema import default_columns

    options = {"path": str(directory), "maxBytesPerPartition": str(rnd.choice([4096, 65536]))}
    if rnd.random() < 0.3:
        # offsetsForTimes resolution: decodes the batch the time index lands on
        options["startingTimestamp"] = str(T0 + rnd.randrange(0, 10_000))
        options["startingOffsetsByTimestampStrategy"] = "latest"
    try:
        plan = plan_read(ReadOptions.parse(options))
    except KafkaLogError as e:
        tally.add(f"plan_error_{type(e).__name__}")
        return
    tally.add("op_plan")
    if rnd.random() < 0.5:
        return  # planning alone (the hot loop of a streaming query)
    columns = default_columns(False)
    settings = ReadSettings(columns=columns)
    schema = arrow_schema(columns)
    for task in plan.tasks:
        try:
            for batch in read_chunks(task.chunks, settings, schema):
                offs = batch.column("offset").to_numpy()
                if offs.size and np.any(np.diff(offs) <= 0):
                    tally.violation("spark read: offsets not increasing inside a batch")
                keys = batch.column("key").to_pylist()
                values = batch.column("value").to_pylist()
                for o, k, v in zip(offs.tolist(), keys, values):
                    _check_record(seed, o, k, v, None, tally, "spark read")
        except KafkaLogError as e:
            # a segment deleted or truncated since planning, named with its file
            tally.add(f"read_error_{type(e).__name__}")
            tally.example(f"spark_read_error_{type(e).__name__}", str(e))
    tally.add("op_spark_read")


def _log_once(directory: Path, seed: int, rnd: random.Random, tally: Tally,
              seconds: float) -> None:
    from kafkalog.errors import KafkaLogError
    from kafkalog.log import Log
    from tests.reliability.concurrency import reader_ops

    try:
        log = Log.open(directory, config(False), read_only=True)
    except (FileNotFoundError, KafkaLogError) as e:
        tally.add(f"open_race_{type(e).__name__}")  # retention or recovery raced the listing
        time.sleep(0.01)
        return
    tally.add("op_log_open")
    try:
        reader_ops(log, seed, rnd, tally, time.time() + seconds, refresh=True)
    finally:
        log.close()


def reader_main(kind: str, directory: str, seed: int, deadline: float, out: str) -> None:
    """Loop reader ``kind`` until ``deadline`` (epoch seconds); write the tally to ``out``."""
    d = Path(directory)
    tally = Tally()
    rnd = random.Random(os.getpid())
    # import (and JIT-load) everything before the first measured operation
    import kafkalog.cli  # noqa: F401
    import kafkalog.spark.planning  # noqa: F401
    import kafkalog.spark.read  # noqa: F401

    last_dump = time.time()
    while time.time() < deadline:
        if time.time() - last_dump > 1.0:
            # a reader killed by a signal loses at most a second of its counts
            Path(out).write_text(json.dumps(tally.to_json()))
            last_dump = time.time()
        try:
            if kind == "dump":
                _dump_once(d, seed, rnd, tally)
            elif kind == "verify":
                _verify_once(d, tally)
            elif kind == "spark":
                _spark_once(d, seed, rnd, tally)
            else:
                _log_once(d, seed, rnd, tally, min(2.0, max(0.0, deadline - time.time())))
        except Exception as e:  # noqa: BLE001 - every escape is a finding
            tally.violation(f"{kind}: {type(e).__name__}: {e}\n"
                            + "".join(traceback.format_exception(e))[-1500:])
    Path(out).write_text(json.dumps(tally.to_json()))


# -- deterministic: each reader entry point, its file cut in the middle of its work ------------


def _build_segment(directory: Path, seed: int) -> Any:
    """One partition with a rolled segment and an active one whose preallocated indexes (1 MiB)
    and ``.log`` (preallocate) are still full size: the files a roll or ``truncate_to`` cuts."""
    from kafkalog.config import LogConfig
    from kafkalog.log import Log

    cfg = LogConfig(segment_bytes=400_000, index_interval_bytes=256,
                    segment_index_bytes=1 << 20, preallocate=True)
    log = Log.open(directory, cfg)
    o = 0
    while len(log.segments) < 2 or log.segments[-1].size < 150_000:
        batch = [expected_record(seed, i) for i in range(o, o + 20)]
        log.append(batch, compression="none")
        o += 20
    log.flush()
    return log  # left open: its active segment keeps the untrimmed files


def _cut(path: Path, size: int) -> None:
    """What the writer does to a file (``ftruncate`` in place)."""
    fd = os.open(path, os.O_RDWR)
    try:
        os.ftruncate(fd, size)
    finally:
        os.close(fd)


SHRINK_SCENARIOS = (
    "index lookups after a roll trim",
    "dump-segments .index after a roll trim",
    "dump-segments .log cut mid-dump",
    "iter_batches(path) cut mid-iteration",
    "Spark read of a chunk cut mid-read",
    "Log.open(read_only=True) under truncate_to",
)


def run_shrink(workdir: Path, seed: int = 0) -> dict:
    """Every :data:`SHRINK_SCENARIOS` entry in its own child process: ``{name: outcome}`` where
    the outcome is ``ok``, the documented error the reader raised, or ``killed by SIGBUS``
    (what a reader mapping the file gets)."""
    out: dict[str, str] = {}
    first = 0
    while first < len(SHRINK_SCENARIOS):
        # one child runs the scenarios from ``first`` on, printing each outcome as it ends;
        # a child killed by a signal is replaced by one starting after the scenario it died in
        d = workdir / f"shrink-{first}"
        d.mkdir(parents=True)
        p = subprocess.run([sys.executable, "-m", "tests.reliability.readers", "shrink", str(d),
                            str(seed), str(first)], cwd=REPO, env=_child_env(),
                           capture_output=True, text=True, check=False)
        for line in p.stdout.splitlines():
            if line.startswith("{"):
                out.update(json.loads(line))
        done = sum(1 for name in SHRINK_SCENARIOS[first:] if name in out)
        if p.returncode == 0:
            break
        died = SHRINK_SCENARIOS[first + done]
        out[died] = (f"killed by {signal.Signals(-p.returncode).name}" if p.returncode < 0
                     else f"exit {p.returncode}: {p.stderr[-800:]}")
        first += done + 1
    return out


def shrink_under_readers(workdir: Path, seed: int = 0, first: int = 0) -> dict:
    """Open each reader, let it start, cut its files as a roll / ``truncate_to`` would, let it
    go on (in this process: see :func:`run_shrink`), from scenario ``first`` on. The outcome of
    each scenario (``ok``, or the documented error it raised) is printed as a JSON line and
    returned; a failed record check raises."""
    import numpy as np

    from kafkalog import files
    from kafkalog.errors import KafkaLogError
    from kafkalog.index.offset_index import OffsetIndex
    from kafkalog.index.time_index import TimeIndex
    from kafkalog.log import Log
    from kafkalog.records.batch import iter_batches
    from kafkalog.spark.arrow import arrow_schema
    from kafkalog.spark.layout import describe_partition
    from kafkalog.spark.planning import Chunk
    from kafkalog.spark.read import ReadSettings, read_chunks
    from kafkalog.spark.schema import default_columns
    from kafkalog.tools import dump as d

    out: dict[str, str] = {}
    n = 0

    def fresh() -> tuple[Path, Any, int]:
        nonlocal n
        n += 1
        directory = workdir / f"cut{n}-0"
        log = _build_segment(directory, seed)
        return directory, log, log.segments[-1].base_offset

    def run(name: str, fn: Any) -> None:
        try:
            fn()
            out[name] = "ok"
        except (KafkaLogError, d.DumpAbort) as e:
            out[name] = f"{type(e).__name__}"
        print(json.dumps({name: out[name]}), flush=True)  # for run_shrink, before the next

    def index_lookups() -> None:
        directory, log, base = fresh()
        idx = OffsetIndex(files.offset_index_file(directory, base), base, writable=False)
        tidx = TimeIndex(files.time_index_file(directory, base), base, writable=False)
        entries = log.segments[-1].offset_index.entries
        log.segments[-1].on_become_inactive()  # the roll's trim (writer side)
        assert os.path.getsize(idx.path) == 8 * entries
        idx.entries_array()["position"].astype(np.int64).sum()  # every slot of the old length
        idx.lookup(2**40)
        tidx.entries_array()["timestamp"].astype(np.int64).sum()
        idx.close()
        tidx.close()
        log.close()

    def dump_index() -> None:
        directory, log, base = fresh()
        it = d.dump_file(str(files.offset_index_file(directory, base)), d.DumpOptions())
        while not isinstance(next(it), d.IndexEntryItem):
            pass  # files open, first entry checked against the .log
        log.segments[-1].on_become_inactive()
        _cut(files.log_file(directory, base), 100)  # and the .log, as truncate_to would
        for _ in it:
            pass
        log.close()

    def dump_log() -> None:
        directory, log, base = fresh()
        opts = d.DumpOptions(print_data_log=True, deep_iteration=True, keep_raw=True)
        it = d.dump_file(str(files.log_file(directory, base)), opts)
        for _ in range(3):
            next(it)
        _cut(files.log_file(directory, base), 4096)
        for item in it:
            if isinstance(item, d.RecordItem):
                want = expected_record(seed, item.offset)
                assert (item.key, item.value) == (want.key, want.value), item.offset
        log.close()

    def batches_from_path() -> None:
        directory, log, _ = fresh()
        first = log.segments[0].base_offset  # rolled: whole batches to its end
        it = iter_batches(str(files.log_file(directory, first)))
        next(it)
        _cut(files.log_file(directory, first), 4096)
        for b in it:
            for r in b:
                assert r.value == expected_record(seed, r.offset).value
        log.close()

    def spark_read() -> None:
        directory, log, base = fresh()
        info = describe_partition("cut", 0, str(directory))
        seg = info.segments[-1]
        chunk = Chunk("cut", 0, seg.log_path, 0, seg.data_end, seg.base_offset,
                      seg.next_offset, seg.next_offset - seg.base_offset)
        cols = default_columns(False)
        it = read_chunks([chunk], ReadSettings(columns=cols, fail_on_data_loss=False,
                                               max_records_per_batch=40), arrow_schema(cols))
        first = next(it)  # the chunk's file is open, a first Arrow batch handed out
        _cut(files.log_file(directory, base), 4096)
        for batch in [first, *it]:
            for o, v in zip(batch.column("offset").to_pylist(),
                            batch.column("value").to_pylist()):
                assert v == expected_record(seed, o).value
        log.close()

    def log_read_only() -> None:
        from kafkalog.errors import OffsetOutOfRangeError

        directory, log, base = fresh()
        reader = Log.open(directory, read_only=True)
        start = reader.log_start_offset
        log.truncate_to(base + 3)  # the writer cuts .log, indexes in place
        try:
            for attempt in range(2):
                try:
                    seen = [r.offset for r in reader.records(start)]
                    table = reader.read_table(start)
                    break
                except OffsetOutOfRangeError:
                    # the documented answer to a view the writer changed: refresh, read again
                    assert attempt == 0
                    reader.refresh()
            assert seen == list(range(start, reader.log_end_offset)), (seen[-3:], reader)
            assert table.column("offset").to_pylist() == seen
        finally:
            reader.close()
            log.close()

    fns = (index_lookups, dump_index, dump_log, batches_from_path, spark_read, log_read_only)
    for i, (name, fn) in enumerate(zip(SHRINK_SCENARIOS, fns)):
        if i >= first:
            run(name, fn)
    return out


# -- the run -----------------------------------------------------------------------------------


def _child_env() -> dict:
    return dict(os.environ,
                PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def run_readers(workdir: Path, seconds: float, seed: int = 0,
                readers: tuple[str, ...] = READER_KINDS, round_seconds: float = 4.0) -> dict:
    """Writer rounds for ``seconds`` under one looping process per reader kind; the figures."""
    directory = workdir / TOPIC_DIR
    directory.mkdir(parents=True)
    env = _child_env()
    py = sys.executable
    t_start = time.time()
    deadline = t_start + seconds
    writer_stats: Counter = Counter()
    writer_exits: Counter = Counter()
    writer_errors: list[str] = []
    # a first round creates the directory's files before the readers start
    rounds = 0

    def writer_rounds() -> None:
        nonlocal rounds
        while time.time() < deadline - 0.5:
            out = workdir / f"writer-{rounds}.json"
            secs = min(round_seconds, max(0.5, deadline - time.time()))
            p = subprocess.run([py, "-m", "tests.reliability.readers", "writer", str(directory),
                                str(seed), str(rounds), str(secs), str(out)],
                               cwd=REPO, env=env, stderr=subprocess.PIPE, check=False)
            writer_exits["SIGKILL" if p.returncode == -signal.SIGKILL else p.returncode] += 1
            if p.returncode not in (0, -signal.SIGKILL):
                writer_errors.append(p.stderr.decode()[-2000:])
            if out.exists():
                writer_stats.update(json.loads(out.read_text()))
            rounds += 1

    wt = threading.Thread(target=writer_rounds)
    wt.start()
    while not any(directory.glob("*.log")) and time.time() < deadline:
        time.sleep(0.05)
    procs: dict[str, subprocess.Popen] = {}
    outs: dict[str, list[Path]] = {k: [] for k in readers}
    killed: Counter = Counter()
    died_other: list[str] = []
    starts: Counter = Counter()

    def start(kind: str) -> None:
        out = workdir / f"reader-{kind}-{starts[kind]}.json"
        starts[kind] += 1
        outs[kind].append(out)
        procs[kind] = subprocess.Popen(
            [py, "-m", "tests.reliability.readers", "reader", kind, str(directory), str(seed),
             repr(deadline), str(out)], cwd=REPO, env=env, stderr=subprocess.PIPE)

    for k in readers:
        start(k)
    while procs:
        time.sleep(0.05)
        for kind, p in list(procs.items()):
            rc = p.poll()
            if rc is None:
                continue
            err = p.stderr.read().decode(errors="replace") if p.stderr else ""
            del procs[kind]
            if rc < 0:
                killed[f"{kind}:{signal.Signals(-rc).name}"] += 1
            elif rc != 0:
                died_other.append(f"{kind} exit {rc}: {err[-1500:]}")
            if rc != 0 and time.time() < deadline - 1.0:
                start(kind)  # a fresh reader of the same kind keeps the pressure on
    wt.join()
    per_kind: dict[str, dict] = {}
    kinds: Counter = Counter()
    examples: list[str] = []
    outcome_examples: dict[str, list[str]] = {}
    for kind, paths in outs.items():
        c: Counter = Counter()
        for p in paths:
            if p.exists():
                r = json.loads(p.read_text())
                c.update(r["counts"])
                kinds.update(r["kinds"])
                examples += r["violations"]
                for key, msgs in r.get("examples", {}).items():
                    outcome_examples.setdefault(key, []).extend(msgs[:3])
        per_kind[kind] = dict(c)
    return {
        "seconds": round(time.time() - t_start, 1),
        "writer": {"rounds": rounds, "exits": {str(k): v for k, v in writer_exits.items()},
                   **dict(writer_stats)},
        "writer_errors": writer_errors,
        "reader_processes_started": dict(starts),
        "readers_killed_by_signal": sum(killed.values()),
        "killed": dict(killed),
        "readers_died_otherwise": died_other,
        "readers": per_kind,
        "records_checked": sum(v.get("records_checked", 0) for v in per_kind.values()),
        "violation_count": sum(kinds.values()) + len(died_other),
        "violation_kinds": dict(kinds.most_common()),
        "violations": examples[:20],
        # messages of allowed outcomes (errors a reader may meet and name), a few of each
        "outcome_examples": {k: v[:5] for k, v in outcome_examples.items()},
    }


if __name__ == "__main__":
    if len(sys.argv) == 7 and sys.argv[1] == "writer":
        writer_main(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]),
                    sys.argv[6])
    elif len(sys.argv) == 7 and sys.argv[1] == "reader":
        reader_main(sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]), sys.argv[6])
    elif len(sys.argv) == 5 and sys.argv[1] == "shrink":
        shrink_under_readers(Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
    else:
        sys.exit("usage: python -m tests.reliability.readers writer DIR SEED ROUND SECONDS OUT\n"
                 "       python -m tests.reliability.readers reader KIND DIR SEED DEADLINE OUT\n"
                 "       python -m tests.reliability.readers shrink DIR SEED FIRST_SCENARIO")
