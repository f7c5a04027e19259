"""A process that cleans a log and SIGKILLs itself at a chosen point of the cleaning.

Run as ``python -m tests.cleaner_crash DIR PHASE K SEED``. It opens the compacted log ``DIR``,
appends a deterministic workload (keyed overwrites, tombstones, committed and aborted
transactions, an idempotent producer), flushes, writes what it appended to ``DIR.model.json``,
then calls :meth:`Log.clean` with a fault injected so that the process kills itself with
``SIGKILL`` (no cleanup, no atexit: the page cache keeps what was written) at:

``map``
    the ``K``-th segment of the offset-map pass;
``write``
    the ``K``-th append to a ``.cleaned`` segment (a partly written cleaned segment);
``swap``
    right after the ``K``-th rename of a file to ``.swap`` (a partial ``.cleaned`` -> ``.swap``);
``delete``
    right after the ``K``-th rename of an old segment file to ``.deleted``;
``final``
    right after the ``K``-th rename of a ``.swap`` file to its final name;
``none``
    never (the cleaning completes; exit status 0).

Faults are injected by wrapping ``os.replace`` and the cleaner's own steps from outside;
nothing in the engine knows about them.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
from pathlib import Path

T0 = 1_700_000_000_000
RETENTION = 60_000


def config():  # noqa: ANN201 - imported lazily by the parent too
    from kafkalog.config import LogConfig

    return LogConfig(cleanup_policy="compact", segment_bytes=700, index_interval_bytes=100,
                     delete_retention_ms=RETENTION, file_delete_delay_ms=60_000)


def cleaner_config():  # noqa: ANN201
    from kafkalog.cleaner.cleaner_config import CleanerConfig

    # small I/O buffers: several appends per cleaned segment
    return CleanerConfig(dedupe_buffer_size=1 << 20, io_buffer_size=512)


def workload(directory: Path, seed: int) -> dict:
    """Append the workload; returns the model: offset -> [key, value, aborted]."""
    from kafkalog.clock import ManualClock
    from kafkalog.log import Log
    from kafkalog.records.record import Record

    rng = random.Random(seed)
    log = Log.open(directory, config(), clock=ManualClock(T0))
    model: dict[int, list] = {}
    seq = 0
    for step in range(160):
        op = rng.random()
        key = b"k%d" % rng.randrange(15)
        value = None if rng.random() < 0.12 else b"v%d-%d" % (step, rng.randrange(1000))
        if op < 0.7:
            info = log.append([Record(key, value, T0 + step)])
            aborted = False
        elif op < 0.8:
            info = log.append([Record(key, value, T0 + step)], producer_id=7, producer_epoch=0,
                              base_sequence=seq)
            seq += 1
            aborted = False
        else:
            pid = 100 + step  # a fresh producer per transaction: sequences start at 0
            info = log.append([Record(key, value, T0 + step)], producer_id=pid,
                              producer_epoch=0, base_sequence=0, transactional=True)
            aborted = rng.random() < 0.5
            if aborted:
                log.abort_transaction(pid, 0)
            else:
                log.commit_transaction(pid, 0)
        model[info.first_offset] = [key.decode(), None if value is None else value.decode(),
                                    aborted]
        if rng.random() < 0.2:
            log.roll()  # small segments: cleaning groups hold several
    log.roll()
    log.flush()
    leo = log.log_end_offset
    log.close()
    return {"records": model, "leo": leo}


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def run(directory: Path, phase: str, k: int, seed: int) -> None:
    from kafkalog.cleaner import cleaner as cleaner_mod
    from kafkalog.cleaner.cleaner import Cleaner
    from kafkalog.clock import ManualClock
    from kafkalog.log import Log
    from kafkalog.segment import LogSegment

    model = workload(directory, seed)
    side = directory.with_name(directory.name + ".model.json")
    side.write_text(json.dumps(model))
    fd = os.open(side, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
    log = Log.open(directory, config(), clock=ManualClock(T0 + 1000))
    count = [0]

    def hit() -> None:
        count[0] += 1
        if count[0] == k:
            _die()

    if phase == "map":
        orig_map = Cleaner._build_offset_map_for_segment

        def mapping(self, *a, **kw):  # noqa: ANN001, ANN002, ANN003, ANN202
            hit()
            return orig_map(self, *a, **kw)

        cleaner_mod.Cleaner._build_offset_map_for_segment = mapping  # type: ignore[method-assign]
    elif phase == "write":
        orig_append = LogSegment.append

        def append(self, *a, **kw):  # noqa: ANN001, ANN002, ANN003, ANN202
            r = orig_append(self, *a, **kw)
            if self.log_path.name.endswith(".cleaned"):
                hit()
            return r

        LogSegment.append = append  # type: ignore[method-assign]
    elif phase in ("swap", "delete", "final"):
        orig_replace = os.replace

        def replace(src, dst, *a, **kw):  # noqa: ANN001, ANN002, ANN003, ANN202
            r = orig_replace(src, dst, *a, **kw)
            s, d = os.fspath(src), os.fspath(dst)
            if (phase == "swap" and d.endswith(".swap")) or \
                    (phase == "delete" and d.endswith(".deleted")) or \
                    (phase == "final" and s.endswith(".swap")):
                hit()
            return r

        os.replace = replace  # type: ignore[assignment]
    log.clean(cleaner=Cleaner.from_config(cleaner_config(), log._clock))
    log.close()


if __name__ == "__main__":
    run(Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
