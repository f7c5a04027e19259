"""Crash-consistency harness: a writer subprocess killed with SIGKILL, then recovery checks.

Shared by ``tests/reliability/test_crash.py`` (a few trials in CI) and ``tools/reliability.py``
(the full budget). Run as ``python -m tests.reliability.crash writer DIR SEED SIDEFILE`` for the
writer process.

What the writer does
--------------------
It opens the log (recovering whatever a previous round left), then appends forever: batches of
1 to 400 records (sometimes one big columnar append split into batches), each with a random
codec; after a random number of appends it calls :meth:`Log.flush` and only then records the
log end offset as *acknowledged* in the side file (written with ``O_APPEND`` and fsynced). Every
record's content is a pure function of ``(seed, offset)`` (:func:`expected_record`), so after
the crash the checker knows what each offset must hold without trusting the writer's memory.

Power-loss model
----------------
SIGKILL loses nothing that reached the page cache, so it cannot show a missing fsync. The
writer therefore also wraps ``os.fsync`` and ``os.replace``: after every successful fsync it
appends ``{path, size}`` (the file's length when it became durable) to the side file, and a
``replace`` carries a durable record from the temporary name to the final one. To simulate a
power cut, :func:`apply_power_loss` then

* truncates every segment ``.log`` to ``min(current length, length at its last fsync)``, and to
  0 when it was never fsynced (created after the last flush: its data was never made durable);
* truncates every checkpoint (``.kafkalog-offsets``, ``leader-epoch-checkpoint``) the same
  way, a never-synced one to 0 bytes (it must then fail to parse cleanly or be recovered);
* leaves index files as the page cache has them: they are preallocated (length unchanged by
  appends), so "unsynced pages lost" is modelled by the media-damage scenario instead (index
  entries corrupted, truncated, deleted).

Files that existed when the writer started (left by the previous round after its own simulated
power loss) count as durable at their starting length.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
T0 = 1_700_000_000_000
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")


def expected_record(seed: int, offset: int) -> Any:
    """The record the writer of trial ``seed`` appends at ``offset`` (deterministic)."""
    from kafkalog.records.record import Record

    h = hashlib.blake2b(f"{seed}:{offset}".encode(), digest_size=16).digest()
    size = h[0] * 2 if h[1] % 8 else h[0] * 20  # 0..510 bytes, sometimes up to 5 KiB
    text = (b"offset=%d seed=%d " % (offset, seed)) + h
    value = (text * (size // len(text) + 1))[:size] if h[2] % 11 else None
    key = None if h[3] % 5 == 0 else b"key-%d" % (offset % 97)
    headers: tuple = ()
    if h[4] % 4 == 0:
        headers = (("trace", h[5:9]), ("empty", None))
    return Record(key, value, T0 + offset, headers)


def _config(seed: int) -> Any:
    from kafkalog.config import LogConfig

    rnd = random.Random(seed)
    # small segments and indexes so that rolls, index entries and full indexes all happen
    return LogConfig(segment_bytes=rnd.choice([100_000, 400_000, 2_000_000]),
                     index_interval_bytes=rnd.choice([0, 512, 4096]),
                     segment_index_bytes=rnd.choice([96, 1024, 10_485_760]))


# -- writer process --------------------------------------------------------------------------


class _SideFile:
    """Append-only JSON-lines file, fsynced after every line (through the real fsync)."""

    def __init__(self, path: str, real_fsync: Any) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self.real_fsync = real_fsync

    def write(self, obj: dict) -> None:
        os.write(self.fd, (json.dumps(obj) + "\n").encode())
        self.real_fsync(self.fd)


def writer_main(directory: str, seed: int, side_path: str) -> None:
    """Append forever (until killed); see the module docstring."""
    real_fsync, real_replace = os.fsync, os.replace
    side = _SideFile(side_path, real_fsync)
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    for p in d.iterdir():
        if p.is_file():
            side.write({"durable": p.name, "size": p.stat().st_size})
    durable_names: set[str] = set()

    def fsync(fd: int) -> None:
        real_fsync(fd)
        try:
            path = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            return
        p = Path(path)
        if p.parent == d.resolve() and p.is_file():
            side.write({"durable": p.name, "size": os.fstat(fd).st_size})
            durable_names.add(p.name)

    def replace(src: Any, dst: Any, **kw: Any) -> None:
        real_replace(src, dst, **kw)
        s, t = Path(src), Path(dst)
        if t.parent.resolve() == d.resolve() and s.name in durable_names:
            side.write({"renamed": s.name, "to": t.name})

    os.fsync = fsync  # type: ignore[assignment]
    os.replace = replace  # type: ignore[assignment]

    from kafkalog.log import Log
    from kafkalog.records import builder, compression  # noqa: F401  (warm imports: the kill
    from kafkalog.records.columnar import RecordColumns  # window is spent appending)

    rnd = random.Random(seed * 7919 + os.getpid())
    log = Log.open(d, _config(seed), rng=random.Random(seed))
    side.write({"opened": log.log_end_offset})
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    appends_until_flush = rnd.randint(1, 8)
    warm = False
    while True:
        leo = log.log_end_offset
        n = rnd.choice([1, 1, 2, 5, 17, 60, 150, 400])
        recs = [expected_record(seed, o) for o in range(leo, leo + n)]
        # keep one append well inside segment.bytes (a larger one is refused, by contract)
        budget, total = log.config.segment_bytes // 3, 0
        for i, r in enumerate(recs):
            total += len(r.value or b"") + 40
            if total > budget:
                recs, n = recs[:max(i, 1)], max(i, 1)
                break
        codec = rnd.choice(CODECS)
        if n >= 60 and rnd.random() < 0.3 and not any(r.headers for r in recs):
            cols = RecordColumns.from_records(recs)
            info = log.append(cols, compression=codec, records_per_batch=rnd.choice([7, 50]))
        else:
            info = log.append(recs, compression=codec)
        if info.first_offset != leo or info.last_offset != leo + n - 1:
            raise SystemExit(f"append assigned {info.first_offset}..{info.last_offset}, "
                             f"expected {leo}..{leo + n - 1}")
        appends_until_flush -= 1
        if appends_until_flush == 0:
            log.flush()
            side.write({"ack": log.log_end_offset})
            appends_until_flush = rnd.randint(1, 8)
            if not warm:
                sys.stdout.write("warm\n")  # kernels compiled/loaded: the kill window is
                sys.stdout.flush()  # spent appending, not importing
                warm = True


# -- checker ---------------------------------------------------------------------------------


@dataclass
class SideState:
    acked: int = 0  # every offset below is flushed and acknowledged
    durable: dict[str, int] = field(default_factory=dict)
    opened: list[int] = field(default_factory=list)  # log end offsets each writer recovered to


def read_side(path: Path) -> SideState:
    st = SideState()
    if not path.exists():
        return st
    for line in path.read_text().splitlines():
        try:
            ev = json.loads(line)
        except ValueError:
            continue  # a line torn by the kill (its fsync never returned: not acknowledged)
        if "ack" in ev:
            st.acked = max(st.acked, ev["ack"])
        elif "durable" in ev:
            st.durable[ev["durable"]] = ev["size"]
        elif "renamed" in ev:
            st.durable[ev["to"]] = st.durable.pop(ev["renamed"])
        elif "opened" in ev:
            st.opened.append(ev["opened"])
    return st


_DATA_SUFFIXES = (".log",)
_CHECKPOINTS = (".kafkalog-offsets", "leader-epoch-checkpoint")


def apply_power_loss(directory: Path, durable: dict[str, int]) -> int:
    """Cut unsynced tails as a power loss may (see the module docstring); bytes dropped."""
    dropped = 0
    for p in directory.iterdir():
        if not p.is_file():
            continue
        if p.name.endswith(_DATA_SUFFIXES) or p.name in _CHECKPOINTS:
            size = p.stat().st_size
            keep = min(size, durable.get(p.name, 0))
            if keep < size:
                os.truncate(p, keep)
                dropped += size - keep
    return dropped


def verify_errors(directory: Path) -> list[dict]:
    """``kafkalog verify DIR --json`` (in-process): the error findings."""
    from kafkalog.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["verify", str(directory), "--json"])
    report = json.loads(out.getvalue())
    errors = []
    for part in report.get("partitions", []):
        errors += [f for f in part.get("findings", []) if f.get("severity") == "error"]
    return errors


@dataclass
class TrialResult:
    seed: int
    power_loss: bool
    rounds: int = 0
    acked: int = 0  # acknowledged (flushed) records in total
    appended: int = 0  # highest log end offset any writer reached (lower bound)
    recovered: int = 0  # log end offset after the final recovery
    flushed_lost: int = 0
    unflushed_lost: int = 0
    mismatched: int = 0  # records present but not what was written (or reordered/duplicated)
    gap_records: int = 0  # offsets skipped where nothing was acknowledged (see check_log)
    acked_ranges: list = field(default_factory=list)
    verify_errors: list = field(default_factory=list)
    problems: list = field(default_factory=list)
    bytes_dropped: int = 0

    @property
    def ok(self) -> bool:
        return not (self.flushed_lost or self.mismatched or self.verify_errors or self.problems)


def check_log(directory: Path, seed: int, acked: list[tuple[int, int]],
              res: TrialResult) -> int:
    """Open (recover) the log, check every record, append, verify. Returns the recovered LEO.

    ``acked``: ``[first, end)`` offset ranges acknowledged by the writer rounds (a round
    acknowledges from the log end offset it reopened at). Every acknowledged offset must be
    there with its content; offsets must strictly increase. A gap is legal only where nothing
    was acknowledged: after a power loss the next segment's file can survive (created by a
    roll) while the unflushed tail of the previous one is lost, so the log end offset is that
    segment's base offset (Kafka behaves the same); such gaps count as unflushed records lost.
    """
    from kafkalog.log import Log

    def is_acked(o: int) -> bool:
        return any(a <= o < b for a, b in acked)

    log = Log.open(directory, _config(seed))
    try:
        leo = log.log_end_offset
        expect = log.log_start_offset
        present = 0
        for r in log.records():
            want = expected_record(seed, r.offset)
            if r.offset < expect or r[:4] != want[:4]:
                res.mismatched += 1  # reordered, duplicated or not what was written
                if len(res.problems) < 5:
                    res.problems.append(f"offset {r.offset} (expected {expect}): {r!r:.120}")
            elif r.offset > expect:
                lost = [o for o in range(expect, r.offset) if is_acked(o)]
                res.flushed_lost += len(lost)
                res.gap_records += r.offset - expect - len(lost)
                if lost and len(res.problems) < 5:
                    res.problems.append(f"acknowledged offsets {lost[0]}..{lost[-1]} missing")
            expect = r.offset + 1
            present += 1
        if expect < leo:
            lost = [o for o in range(expect, leo) if is_acked(o)]
            res.flushed_lost += len(lost)
            res.gap_records += leo - expect - len(lost)
        end = max((b for _, b in acked), default=0)
        if leo < end:
            res.flushed_lost += len([o for o in range(max(leo, expect), end) if is_acked(o)])
        # the columnar path reads the same bytes: same records
        table = log.read_table()
        if table.num_rows != present:
            res.problems.append(f"read_table gave {table.num_rows} rows, records() {present}")
        res.recovered = leo
    finally:
        log.close()
    errs = verify_errors(directory)
    if errs:
        res.verify_errors += errs[:5]
    # appends continue from the recovered end
    log = Log.open(directory, _config(seed))
    try:
        info = log.append([expected_record(seed, leo)])
        if info.first_offset != leo:
            res.problems.append(f"append after recovery got offset {info.first_offset}, "
                                f"expected {leo}")
    finally:
        log.close()
    errs = verify_errors(directory)
    if errs:
        res.verify_errors += errs[:5]
    log = Log.open(directory, _config(seed))
    try:
        log.truncate_to(leo)  # leave the directory as the next round expects it
    finally:
        log.close()
    return leo


def run_trial(workdir: Path, seed: int, *, power_loss: bool, rounds: int = 2,
              max_wait: float = 1.5) -> TrialResult:
    """One trial: ``rounds`` writer processes on one directory, each killed at a random
    moment (after a power loss when asked), then the final recovery is checked."""
    rnd = random.Random(seed)
    d = workdir / f"trial-{seed}"
    d.mkdir(parents=True)
    res = TrialResult(seed, power_loss)
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for rnd_i in range(rounds):
        side = workdir / f"trial-{seed}.side{rnd_i}"
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.reliability.crash", "writer", str(d), str(seed),
             str(side)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO, env=env)
        line = proc.stdout.readline()  # type: ignore[union-attr]
        if line.strip() != b"ready":
            proc.kill()
            _, err = proc.communicate()
            res.problems.append(f"writer did not start: {err.decode()[-2000:]}")
            return res
        # 1 kill in 5 lands during recovery/the first appends; the others once the writer is
        # warm (first flush done), somewhere in the following ``max_wait`` seconds
        if rnd.random() < 0.8:
            proc.stdout.readline()  # type: ignore[union-attr]
        time.sleep(rnd.uniform(0.0, max_wait))
        proc.send_signal(signal.SIGKILL)
        _, err = proc.communicate()
        if proc.returncode != -signal.SIGKILL:
            res.problems.append(f"writer exited by itself ({proc.returncode}): "
                                f"{err.decode()[-2000:]}")
        state = read_side(side)
        res.rounds += 1
        if rnd_i > 0 and state.opened and state.opened[0] < res.acked:
            res.flushed_lost += res.acked - state.opened[0]
            res.problems.append(f"round {rnd_i} reopened at {state.opened[0]} below the "
                                f"acknowledged {res.acked}")
        opened = state.opened[0] if state.opened else 0
        if state.acked > opened:
            res.acked_ranges.append((opened, state.acked))
        res.acked = max(res.acked, state.acked)
        res.appended = max(res.appended, _highest_written(d))
        if power_loss:
            res.bytes_dropped += apply_power_loss(d, state.durable)
    if os.environ.get("KAFKALOG_RELIABILITY_KEEP"):
        import shutil

        shutil.copytree(d, workdir / f"trial-{seed}-before-check")
    try:
        leo = check_log(d, seed, res.acked_ranges, res)
    except Exception as e:  # noqa: BLE001 - a failed recovery is a finding, not the end of the run
        import traceback

        res.problems.append(f"recovery failed: {type(e).__name__}: {e}\n"
                            + "".join(traceback.format_exception(e))[-2000:])
        return res
    res.unflushed_lost = max(0, res.appended - leo)
    keep = os.environ.get("KAFKALOG_RELIABILITY_KEEP")
    if keep and not res.ok:
        import shutil

        shutil.copytree(workdir, Path(keep) / f"trial-{seed}", dirs_exist_ok=True)
    return res


def _highest_written(directory: Path) -> int:
    """Next offset after the last whole batch in the page cache (what the writer appended)."""
    import numpy as np
    from kafkalog.native.scan import scan_entries

    best = 0
    for p in sorted(directory.glob("*.log")):
        data = np.fromfile(p, dtype=np.uint8)
        if len(data):
            sc = scan_entries(data)
            if sc["count"]:
                best = max(best, int(sc["last_offsets"][sc["count"] - 1]) + 1)
    return best


def summarize(results: Iterable[TrialResult]) -> dict:
    results = list(results)
    return {
        "trials": len(results),
        "rounds": sum(r.rounds for r in results),
        "acked_records": sum(b - a for r in results for a, b in r.acked_ranges),
        "flushed_lost": sum(r.flushed_lost for r in results),
        "unflushed_lost": sum(r.unflushed_lost for r in results),
        "offset_gap_records": sum(r.gap_records for r in results),
        "mismatched": sum(r.mismatched for r in results),
        "verify_errors": sum(len(r.verify_errors) for r in results),
        "failed_trials": [r.seed for r in results if not r.ok],
        "bytes_dropped_by_power_loss": sum(r.bytes_dropped for r in results),
    }


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "writer":
        writer_main(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    else:
        sys.exit("usage: python -m tests.reliability.crash writer DIR SEED SIDEFILE")
