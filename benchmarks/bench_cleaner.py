"""Log compaction benchmarks: Kafka's cleaner on a segment set vs reading and rewriting it.

Rows (convention of ``benchmarks/run_all.py``; ratio > 1 means kafkalog is better):

* ``clean.<size>.10pct_live``: ``Log.clean`` of a segment set of ``<size>`` (1 GiB full,
  128 MiB quick; 128 MiB segments, uncompressed ~16 KiB batches of 16 records with a 16-byte key
  and a 1,000-byte value, timestamps increasing) where 10% of the records are the latest of
  their key (each key written ~10 times, interleaved): the offset map over the dirty section,
  then every segment filtered into its ``.cleaned`` segment (kept batches rebuilt), flushed
  (fsync), swapped in; seconds. Baseline, measured in the same run on the same bytes: a plain
  sequential read of the segment files plus a plain rewrite of the same bytes to new files
  (``write`` of each segment, then ``fsync``: the cleaner fsyncs what it writes); ratio =
  (read + rewrite) / clean, **target >= 1/3** (within 3x of read + rewrite). The note gives the
  read and rewrite times apart and the map and filter phases of the cleaning.
* ``clean.<size>.10pct_live.vs_page_cache``: the same cleaning against read + a rewrite left in
  the page cache (no fsync), the stricter baseline.
* ``offset_map.bytes_per_key``: memory of the offset map per key at the cleaner's load factor:
  ``SkimpyOffsetMap`` (Kafka's layout: 16-byte MD5 + 8-byte offset per slot, filled to
  ``log.cleaner.io.buffer.load.factor`` 0.9) measured as table bytes / keys put; baseline: a
  Python ``dict`` from the 16-byte digest to the offset (the obvious alternative), measured with
  ``tracemalloc`` for the same keys; ratio = dict bytes / map bytes.

Run: ``python benchmarks/bench_cleaner.py [--quick]``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

from kafkalog.cleaner.cleaner import Cleaner
from kafkalog.cleaner.cleaner_config import CleanerConfig
from kafkalog.cleaner.offset_map import SkimpyOffsetMap
from kafkalog.clock import ManualClock, SystemClock
from kafkalog.config import LogConfig
from kafkalog.log import Log

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_codec import format_rows  # noqa: E402

GIB = 1 << 30
MIB = 1 << 20
T0 = 1_700_000_000_000
KEY_SIZE = 16
VALUE_SIZE = 1000
PER_BATCH = 16
SEGMENT_BYTES = 128 * MIB


def _build(directory: Path, total: int) -> tuple[int, int]:
    """Write the segment set; returns (records, distinct keys)."""
    import pyarrow as pa

    record = KEY_SIZE + VALUE_SIZE + 13  # encoded size of one record, roughly
    n = total // record
    keys = max(1, n // 10)
    rng = np.random.default_rng(42)
    key_of = rng.integers(0, keys, n)  # ~10 writes per key, interleaved
    # every key also written last in the final stretch, so exactly `keys` records stay
    key_of[-keys:] = rng.permutation(keys)
    values = rng.integers(0, 256, VALUE_SIZE * 4096, dtype=np.uint8).tobytes()
    cfg = LogConfig(cleanup_policy="compact", segment_bytes=SEGMENT_BYTES)
    log = Log.open(directory, cfg, clock=ManualClock(T0))
    chunk = 65536
    for start in range(0, n, chunk):
        ks = key_of[start:start + chunk]
        m = len(ks)
        key_col = pa.array([b"key-%012d" % k for k in ks.tolist()], pa.binary())
        offs = (np.arange(m) % 4096) * VALUE_SIZE
        val_col = pa.array([values[o:o + VALUE_SIZE] for o in offs.tolist()], pa.binary())
        ts = pa.array(T0 + np.arange(start, start + m, dtype=np.int64))
        log.append(pa.table({"key": key_col, "value": val_col, "timestamp": ts}),
                   records_per_batch=PER_BATCH)
    log.roll()
    log.close()
    return n, keys


def _segment_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.glob("*.log") if p.stat().st_size)


def bench_clean(tmp: Path, total: int, repeat: int) -> list[dict]:
    master = tmp / "master-0"
    n, keys = _build(master, total)
    size = sum(p.stat().st_size for p in _segment_files(master))
    work = tmp / "work-0"
    out_dir = tmp / "rewrite"
    buf = bytearray(8 * MIB)

    def fresh() -> None:
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(master, work)
        for p in _segment_files(work):  # warm the page cache, as for the baselines
            with open(p, "rb", buffering=0) as f:
                while f.readinto(buf):
                    pass

    def plain_read() -> None:
        for p in _segment_files(work):
            with open(p, "rb", buffering=0) as f:
                while f.readinto(buf):
                    pass

    def plain_rewrite(sync: bool = True) -> None:
        shutil.rmtree(out_dir, ignore_errors=True)
        out_dir.mkdir()
        for p in _segment_files(work):
            data = p.read_bytes()
            with open(out_dir / p.name, "wb", buffering=0) as f:
                f.write(data)
                if sync:
                    os.fsync(f.fileno())

    # one cleaner for every run, as a broker's cleaner thread (its offset map is allocated
    # once); the system clock for it: its stats time the map and filter phases
    cleaner = Cleaner.from_config(CleanerConfig(), SystemClock())
    # JIT warm-up outside the timings (a tiny log through the same kernels)
    warm = tmp / "warm-0"
    _build(warm, 2 * MIB)
    wl = Log.open(warm, LogConfig(cleanup_policy="compact", segment_bytes=SEGMENT_BYTES),
                  clock=ManualClock(T0))
    wl.clean(cleaner=cleaner)
    wl.close()
    best = {"clean": float("inf"), "read": float("inf"), "rewrite": float("inf"),
            "rewrite_nosync": float("inf")}
    phases = (0.0, 0.0)
    kept = 0
    for _ in range(repeat):
        fresh()
        t0 = time.perf_counter()
        plain_read()
        best["read"] = min(best["read"], time.perf_counter() - t0)
        t0 = time.perf_counter()
        plain_rewrite()
        best["rewrite"] = min(best["rewrite"], time.perf_counter() - t0)
        t0 = time.perf_counter()
        plain_rewrite(sync=False)
        best["rewrite_nosync"] = min(best["rewrite_nosync"], time.perf_counter() - t0)
        shutil.rmtree(out_dir, ignore_errors=True)
        # file.delete.delay.ms at its default: the old segments go a minute later, off the
        # clock, as on a broker
        log = Log.open(work, LogConfig(cleanup_policy="compact", segment_bytes=SEGMENT_BYTES),
                       clock=ManualClock(T0))
        t0 = time.perf_counter()
        res = log.clean(cleaner=cleaner)
        dt = time.perf_counter() - t0
        if dt < best["clean"]:
            best["clean"] = dt
            st = res.stats
            phases = ((st.map_complete_ms - st.start_ms) / 1000.0,
                      (st.end_ms - st.map_complete_ms) / 1000.0)
        kept = res.stats.messages_written
        log.close()
    assert kept == keys, (kept, keys)
    baseline = best["read"] + best["rewrite"]
    cached = best["read"] + best["rewrite_nosync"]
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(master, ignore_errors=True)
    label = f"{total // GIB}GiB" if total >= GIB else f"{total // MIB}MiB"
    return [{
        "name": f"clean.{label}.10pct_live", "value": best["clean"], "unit": "s",
        "baseline": baseline, "ratio": baseline / best["clean"],
        "note": f"Log.clean of {size / MIB:.0f} MiB ({n:,} records, {keys:,} keys kept) vs "
                f"plain read {best['read']:.2f} s + plain rewrite with fsync "
                f"{best['rewrite']:.2f} s of the same bytes; map {phases[0]:.2f} s, filter "
                f"+ write + swap {phases[1]:.2f} s; target ratio >= 0.33 (within 3x)"}, {
        "name": f"clean.{label}.10pct_live.vs_page_cache", "value": best["clean"], "unit": "s",
        "baseline": cached, "ratio": cached / best["clean"],
        "note": f"the same cleaning vs read {best['read']:.2f} s + a rewrite left in the page "
                f"cache (no fsync) {best['rewrite_nosync']:.2f} s: the stricter baseline (the "
                f"cleaning still fsyncs its output, Kafka's cleaned.flush())"}]


def bench_map_memory(keys: int) -> list[dict]:
    load = CleanerConfig().dedupe_buffer_load_factor
    memory = int(keys / load) * 24 + 24
    m = SkimpyOffsetMap(memory)
    digests = [hashlib.md5(b"key-%012d" % i).digest() for i in range(keys)]
    for i, d in enumerate(digests):
        m.put_digest(np.frombuffer(d, np.uint8), i)
    assert m.size == keys
    ours = m.table.nbytes / keys
    tracemalloc.start()
    base = tracemalloc.take_snapshot()
    table = {d: i + 2**40 for i, d in enumerate(digests)}  # ints past the small-int cache
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    dict_bytes = sum(s.size_diff for s in after.compare_to(base, "filename")) / keys
    assert len(table) == keys
    return [{
        "name": "offset_map.bytes_per_key", "value": ours, "unit": "B/key",
        "baseline": dict_bytes, "ratio": dict_bytes / ours,
        "note": f"SkimpyOffsetMap at load factor {load} ({keys:,} keys: 24-byte slots, "
                f"Kafka's layout) vs a Python dict digest -> offset (digests not counted "
                f"on either side); Kafka's default 128 MiB map holds "
                f"{int(128 * MIB // 24 * load):,} keys"}]


def run(quick: bool = False) -> list[dict]:
    tmp = Path(tempfile.mkdtemp(prefix="kafkalog-bench-cleaner-",
                                dir=os.environ.get("TMPDIR")))
    try:
        rows = bench_clean(tmp, 128 * MIB if quick else GIB, 2)
        rows += bench_map_memory(100_000 if quick else 1_000_000)
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
