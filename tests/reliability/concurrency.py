"""Concurrency: one writer thread appending, rolling and deleting segments (retention) while
reader threads (same ``Log``) and reader processes (``Log.open(read_only=True)``) scan, fetch and
look up offsets and timestamps.

Shared by ``tests/reliability/test_concurrency.py`` and ``tools/reliability.py concurrency``.

Every record a reader gets must be exactly what was written at its offset
(:func:`tests.reliability.crash.expected_record`), offsets contiguous inside one scan, so a torn
batch, a stale read of a deleted file or a wrong index lookup cannot pass as valid. The only error
a reader may see is ``OffsetOutOfRangeError`` (the log start offset moved past it: retention
deleted the segment under it); anything else is a violation.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import threading
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

from tests.reliability.crash import REPO, T0, expected_record

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")


def config() -> Any:
    from kafkalog.config import LogConfig

    # small segments so that rolls and retention deletions happen every few hundred ms;
    # file.delete.delay.ms = 0: files are unlinked and descriptors closed at once
    return LogConfig(segment_bytes=40_000, index_interval_bytes=1024,
                     retention_bytes=200_000, retention_ms=-1, file_delete_delay_ms=0)


class Stats:
    def __init__(self) -> None:
        self.c: Counter = Counter()
        self.violations: list[str] = []
        self.kinds: Counter = Counter()
        self.lock = threading.Lock()

    def add(self, key: str, n: int = 1) -> None:
        with self.lock:
            self.c[key] += n

    def violation(self, msg: str) -> None:
        """Count by kind (first line, digits dropped); keep the first example of each kind."""
        kind = re.sub(r"\d+", "N", msg.split("\n")[0])[:160]
        with self.lock:
            if kind not in self.kinds and len(self.violations) < 30:
                self.violations.append(msg)
            self.kinds[kind] += 1
            self.c["violations"] += 1


def _check_records(recs: Any, seed: int, stats: Stats, where: str, start: int | None) -> None:
    expect = start
    for r in recs:
        if expect is not None and r.offset != expect:
            stats.violation(f"{where}: offset {r.offset}, expected {expect}")
            return
        want = expected_record(seed, r.offset)
        if tuple(r[:4]) != tuple(want[:4]):
            stats.violation(f"{where}: record at {r.offset} is not what was written")
            return
        expect = r.offset + 1
        stats.add("records_checked")


OPS = ("scan", "fetch", "time", "table")


def reader_ops(log: Any, seed: int, rnd: random.Random, stats: Stats, deadline: float,
               refresh: bool = False) -> None:
    """Random reads until ``deadline``; classify every outcome into ``stats``."""
    while time.time() < deadline:
        reader_op(log, seed, rnd, stats, rnd.choice(OPS), refresh)


def reader_op(log: Any, seed: int, rnd: random.Random, stats: Stats, op: str,
              refresh: bool = False, offset: int | None = None) -> None:
    """One read ``op`` at ``offset`` (a random one of the log when None), after a refresh
    when ``refresh``."""
    from itertools import islice

    from kafkalog.errors import OffsetOutOfRangeError
    from kafkalog.records.batch import iter_batches

    if refresh:
        try:
            log.refresh()
        except OffsetOutOfRangeError:
            stats.add("out_of_range")
            stats.add("out_of_range_refresh")
            return
        except Exception as e:  # noqa: BLE001
            stats.violation(f"refresh: {type(e).__name__}: {e}\n"
                            + "".join(traceback.format_exception(e))[-1200:])
            return
    lso, leo = log.log_start_offset, log.log_end_offset
    if leo <= lso:
        time.sleep(0.01)
        return
    o = rnd.randrange(lso, leo) if offset is None else offset
    try:
        if op == "scan":
            _check_records(islice(log.records(o), 3000), seed, stats, "records", o)
        elif op == "fetch":
            batches = list(iter_batches(log.read(o, 64_000)))
            if not batches:
                stats.violation(f"read({o}) gave nothing below the log end offset {leo}")
            elif not batches[0].base_offset <= o <= batches[0].last_offset:
                stats.violation(f"read({o}) starts at batch {batches[0].base_offset}")
            for b in batches:
                if not b.is_valid:
                    stats.violation(f"read({o}): batch {b.base_offset} with a bad CRC")
                _check_records(b, seed, stats, "read", None)
        elif op == "time":
            found = log.offset_for_timestamp(T0 + o)
            # timestamps grow with offsets: the answer is o, or, when retention deleted the
            # segment of o meanwhile, the first offset still in the log (>= o)
            holder = [s for s in log.segments if s.base_offset <= o][-1:]
            gone = not holder or not holder[0].log_path.exists()
            if found is None or found < o or (found != o and not gone):
                # the view the search went by (the writer may have moved on since)
                view = [(s.base_offset, s.size, s.largest_timestamp - T0,
                         len(s._read_only_indexes()[2]) if log._read_only else None)
                        for s in log.segments]
                stats.violation(f"offset_for_timestamp({T0 + o}) = {found}, expected {o}; "
                                f"view (base, size, largest timestamp - T0, time entries): "
                                f"{view}, log start offset {lso}, log end offset {leo}")
        else:
            t = log.read_table(o, o + 500)
            offs = t.column("offset").to_pylist()
            if offs != list(range(o, o + len(offs))):
                bad = next((i for i, x in enumerate(offs) if x != o + i), len(offs))
                stats.violation(
                    f"read_table({o}) offsets not contiguous: {offs[max(0, bad - 2):bad + 3]} at "
                    f"row {bad} of {len(offs)}; view: segments "
                    f"{[(s.base_offset, s.size) for s in log.segments]}, log end offset "
                    f"{log.log_end_offset}")
            vals = t.column("value").to_pylist()
            for off, v in zip(offs[:50], vals[:50]):
                if v != expected_record(seed, off).value:
                    stats.violation(f"read_table({o}): value at {off} differs")
                    break
        stats.add(f"op_{op}")
    except OffsetOutOfRangeError:
        stats.add("out_of_range")
        stats.add(f"out_of_range_{op}")
    except Exception as e:  # noqa: BLE001
        stats.violation(f"{op}({o}): {type(e).__name__}: {e}\n"
                        + "".join(traceback.format_exception(e))[-1500:])


def warm_up(log: Any, seed: int, stats: Stats, refresh: bool = False) -> None:
    """Each read op at every 5th offset (batches of each codec among them) before the clock
    starts, so that loading or compiling the numba kernels, up to a minute on a loaded machine
    with a cold cache, is not spent racing the writer: its violations count, its records do
    not."""
    warm = Stats()
    rnd = random.Random(seed)
    for op in OPS:
        for o in range(log.log_start_offset, log.log_end_offset, 5):
            reader_op(log, seed, rnd, warm, op, refresh, offset=o)
    for v in warm.violations:
        stats.violation(f"warm-up: {v}")


def reader_process_main(directory: str, seed: int, seconds: float, out: str) -> None:
    """A reader process: open the log read-only, warm up, say so (``out + ".ready"``), then
    read for ``seconds`` and write its counts to ``out``."""
    from kafkalog.log import Log

    stats = Stats()
    rnd = random.Random(os.getpid())
    log = None
    try:
        log = Log.open(directory, config(), read_only=True)
    except Exception as e:  # noqa: BLE001  (the writer made its first segment before spawning)
        stats.violation(f"open: {type(e).__name__}: {e}")
    if log is not None:
        warm_up(log, seed, stats, refresh=True)
    Path(out + ".ready").touch()
    if log is not None:
        reader_ops(log, seed, rnd, stats, time.time() + seconds, refresh=True)
        log.close()
    Path(out).write_text(json.dumps({"counts": dict(stats.c), "violations": stats.violations,
                                     "kinds": dict(stats.kinds)}))


def _wait_ready(procs: list, timeout: float) -> list[str]:
    """Wait until every reader process has warmed up; the ones that died first, as errors."""
    errors: list[str] = []
    end = time.time() + timeout
    waiting = list(procs)
    while waiting and time.time() < end:
        for p, out in list(waiting):
            if Path(str(out) + ".ready").exists():
                waiting.remove((p, out))
            elif p.poll() is not None:
                waiting.remove((p, out))
                errors.append(f"reader process exit {p.returncode} before it was ready")
        time.sleep(0.02)
    errors += [f"reader process not ready after {timeout} s" for _ in waiting]
    return errors


def run_concurrency(workdir: Path, seconds: float, threads: int = 3, processes: int = 2,
                    seed: int = 0) -> dict:
    """Run the writer, ``threads`` reader threads and ``processes`` reader processes side by
    side for ``seconds`` (counted from when every reader has warmed up; see :func:`warm_up`).
    Returns counts, violations and their kinds."""
    from kafkalog.log import Log

    d = workdir / "topic-0"
    log = Log.open(d, config())
    stats = Stats()
    log.append([expected_record(seed, o) for o in range(50)])
    # the writer's kernels load (a first zstd append compiles for seconds), and the log gets
    # the runs of one codec that the readers' columnar path decompresses in packs
    for codec in CODECS:
        for _ in range(6):
            log.append([expected_record(seed, o) for o in range(log.log_end_offset,
                                                                log.log_end_offset + 3)],
                       compression=codec)
    log.roll()
    log.enforce_retention()
    log.flush()
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    procs = []
    for i in range(processes):
        out = workdir / f"reader-{i}.json"
        # stderr to a file, not a pipe nobody reads until the end (a full pipe blocks the child)
        err = open(workdir / f"reader-{i}.stderr", "wb")  # noqa: SIM115
        procs.append((subprocess.Popen(
            [sys.executable, "-m", "tests.reliability.concurrency", "reader", str(d), str(seed),
             str(seconds), str(out)], cwd=REPO, env=env, stderr=err), out))
        err.close()
    warm_up(log, seed, stats)
    not_ready = _wait_ready(procs, timeout=180)
    deadline = time.time() + seconds

    def writer() -> None:
        w = random.Random(seed + 1)
        try:
            while time.time() < deadline:
                leo = log.log_end_offset
                n = w.choice([1, 5, 20, 60])
                while n > 1 and sum(len(expected_record(seed, o).value or b"")
                                    for o in range(leo, leo + n)) > 15_000:
                    n //= 2  # one append stays well inside segment.bytes
                log.append([expected_record(seed, o) for o in range(leo, leo + n)],
                           compression=w.choice(CODECS))
                stats.add("appended", n)
                r = w.random()
                if r < 0.1:
                    log.flush()
                elif r < 0.15:
                    stats.add("segments_deleted", log.enforce_retention())
                elif r < 0.17:
                    log.roll()
                    stats.add("rolls")
        except Exception as e:  # noqa: BLE001
            stats.violation(f"writer: {type(e).__name__}: {e}\n"
                            + "".join(traceback.format_exception(e))[-1500:])

    ts = [threading.Thread(target=writer)]
    ts += [threading.Thread(target=reader_ops,
                            args=(log, seed, random.Random(seed + 10 + i), stats, deadline))
           for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    log.close()
    result: dict = {"seconds": seconds, "reader_threads": threads, "reader_processes": processes,
                    "threads": dict(stats.c), "violations": list(stats.violations)}
    kinds: Counter = Counter(stats.kinds)
    proc_counts: Counter = Counter()
    result["violations"] += not_ready
    for p, out in procs:
        p.wait(timeout=seconds + 120)
        if p.returncode != 0 or not out.exists():
            err = out.with_name(out.name.replace(".json", ".stderr")).read_text(errors="replace")
            result["violations"].append(f"reader process exit {p.returncode}: {err[-1500:]}")
            continue
        r = json.loads(out.read_text())
        proc_counts.update(r["counts"])
        kinds.update(r["kinds"])
        result["violations"] += r["violations"]
    result["processes"] = dict(proc_counts)
    result["violation_kinds"] = dict(kinds.most_common())
    result["violation_count"] = (stats.c["violations"] + proc_counts["violations"]
                                 + sum(1 for v in result["violations"]
                                       if v.startswith("reader process")))
    return result


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "reader":
        reader_process_main(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5])
    else:
        sys.exit("usage: python -m tests.reliability.concurrency reader DIR SEED SECONDS OUT")
