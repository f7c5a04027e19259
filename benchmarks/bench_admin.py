"""Benchmark the offline operator commands over a broker's log dir (``kafkalog.admin``).

Run as a script::

    python benchmarks/bench_admin.py [--quick]

Builds a log dir of 20 topics x 10 partitions (4 x 10 with ``--quick``), each partition 10,000
records (2,000) of 100 B values in batches of 100 with increasing timestamps, then, in this
process on a warm page cache:

* ``get_offsets.by_timestamp.vs_kafka-python_scan``: ``kafkalog get-offsets`` for a timestamp
  in the middle of every partition (``fetch_offsets``: open the dir read-only, time index, then
  offset index, then the batches) in partitions/s, against what one does without it: read each
  partition's ``.log`` with kafka-python's ``MemoryRecords`` up to the first record at or after
  the timestamp (stopping there). Both give the same offsets (checked).
* ``log_dirs.describe.vs_du``: ``kafkalog log-dirs --describe`` (every partition's size, high
  watermark and log end offset) against summing the ``.log`` files' sizes with ``os.scandir``
  (``du``'s share of the work).

No assertions; figures go to benchmarks/RESULTS.md through ``run()``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

TS = 1_700_000_000_000


def _best(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def _build(root: Path, topics: int, records: int) -> None:
    from kafkalog import LogDir, Record

    value = b"v" * 100
    with LogDir.open(root, node_id=1) as logs:
        for t in range(topics):
            logs.create_topic(f"topic{t}", 10)
            for p in range(10):
                log = logs.log(f"topic{t}", p)
                for s in range(0, records, 100):
                    log.append([Record(b"k%d" % i, value, TS + i) for i in range(s, s + 100)],
                               partition_leader_epoch=0)


def run(quick: bool = False) -> list[dict]:
    """Measure and return the rows (see the module docstring)."""
    from kafkalog.admin.get_offsets_command import fetch_offsets, topic_and_partitions_filter
    from kafkalog.admin.log_dirs_command import describe_log_dirs

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from kafka.record import MemoryRecords

    topics, records = (4, 2000) if quick else (20, 10_000)
    repeat = 3 if quick else 5
    tmp = Path(tempfile.mkdtemp(prefix="kafkalog-bench-admin-"))
    try:
        root = tmp / "logs"
        _build(root, topics, records)
        target = TS + records // 2 + 37
        flt = topic_and_partitions_filter(None, None)

        def ours() -> dict:
            answers, _ = fetch_offsets([str(root)], flt, target)
            return {tp: a.offset for tp, a in answers}

        def scan() -> dict:
            out = {}
            for d in sorted(root.iterdir()):
                if not d.is_dir():
                    continue
                topic, _, p = d.name.rpartition("-")
                found = None
                for seg in sorted(d.glob("*.log")):
                    batches = MemoryRecords(seg.read_bytes())
                    while found is None and batches.has_next():
                        for r in batches.next_batch():
                            if r.timestamp >= target:
                                found = r.offset
                                break
                    if found is not None:
                        break
                if found is not None:
                    out[(topic, int(p))] = found
            return out

        if ours() != scan():
            raise AssertionError("get-offsets and the kafka-python scan disagree")
        parts = topics * 10
        t_ours, t_scan = _best(ours, repeat), _best(scan, repeat)
        note = (f"{parts} partitions x {records:,} records (100 B values, batches of 100), a "
                "timestamp mid-partition; fetch_offsets (open the dir read-only, time index, "
                "offset index, batches) vs kafka-python 3.0.12 MemoryRecords reading each "
                f".log up to the first record at or after it; same offsets (checked); best of "
                f"{repeat}")
        rows = [{"name": "get_offsets.by_timestamp.vs_kafka-python_scan",
                 "value": parts / t_ours, "unit": "partitions/s", "baseline": parts / t_scan,
                 "ratio": t_scan / t_ours, "note": note}]

        def du() -> int:
            total = 0
            for d in os.scandir(root):
                if d.is_dir():
                    total += sum(e.stat().st_size for e in os.scandir(d.path)
                                 if e.name.endswith(".log"))
            return total

        _, dirs = describe_log_dirs([str(root)])
        if sum(i["size"] for infos in dirs.values() for i in infos) != du():
            raise AssertionError("log-dirs sizes and the .log files' sizes disagree")
        t_ours = _best(lambda: describe_log_dirs([str(root)]), repeat)
        t_du = _best(du, repeat)
        rows.append({"name": "log_dirs.describe.vs_du", "value": parts / t_ours,
                     "unit": "partitions/s", "baseline": parts / t_du, "ratio": t_du / t_ours,
                     "note": f"{parts} partitions; describe_log_dirs (open the dir read-only: "
                             "every log loaded, sizes, high watermarks, log end offsets) vs "
                             "summing the .log files' sizes with os.scandir; same total "
                             f"(checked); best of {repeat}"})
        return rows
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":  # pragma: no cover
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true")
    for row in run(p.parse_args().quick):
        print(f"{row['name']}: {row['value']:,.1f} {row['unit']} vs {row['baseline']:,.1f} "
              f"({row['ratio']:.2f}x)")
