"""Benchmark ``kafkalog dump-segments`` against kafka-python reading the same segment.

Run as a script::

    python benchmarks/bench_dump.py [--mib 64]

Builds one ``.log`` of v2 batches (1000 records of ~1 KiB each), then times, in this process:

* baseline: kafka-python 3's ``MemoryRecords`` walking every batch and every record (what a
  Python tool without kafkalog would do; it formats nothing);
* ``dump-segments`` shallow (one line per batch, CRC checked) and deep (one line per record),
  output written to a null sink.

Prints seconds, MiB/s and the ratio to the baseline. No assertions: figures go to
benchmarks/RESULTS.md through ``run()`` (the ``benchmarks/run_all.py`` convention: ratio > 1 means
kafkalog is faster).
"""

from __future__ import annotations

import argparse
import io
import os
import tempfile
import time


class _Null(io.TextIOBase):
    def write(self, s: str) -> int:
        return len(s)


def build(path: str, mib: int) -> int:
    from kafkalog.records.builder import encode_batch
    from kafkalog.records.record import Record

    t0 = 1700000000000
    recs = [Record(b"key-%06d" % i, os.urandom(512) + b"x" * 500, t0 + i) for i in range(1000)]
    with open(path, "wb") as f:
        off = 0
        while f.tell() < mib << 20:
            f.write(encode_batch(recs, base_offset=off, partition_leader_epoch=0))
            off += 1000
        return f.tell()


def bench_kafka_python(path: str) -> float:
    from kafka.record import MemoryRecords

    data = open(path, "rb").read()
    t = time.perf_counter()
    mr = MemoryRecords(data)
    n = 0
    while mr.has_next():
        batch = mr.next_batch()
        if batch is None:
            break
        for rec in batch:
            n += rec.offset >= 0
    return time.perf_counter() - t


def bench_dump(path: str, deep: bool) -> float:
    from kafkalog import cli
    from kafkalog.tools import dump

    opts = dump.DumpOptions(deep_iteration=deep)
    null = _Null()
    t = time.perf_counter()
    rc = cli.run_dump(opts, [path], stdout=null, stderr=null)
    elapsed = time.perf_counter() - t
    assert rc == 0
    return elapsed


def measure(mib: int) -> tuple[float, float, float, float]:
    """Seconds for (kafka-python baseline, shallow dump, deep dump) and the segment size in MiB."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "00000000000000000000.log")
        size = build(path, mib)
        bench_dump(path, False)  # warm: JIT cache load, page cache
        base = bench_kafka_python(path)
        shallow = bench_dump(path, False)
        deep = bench_dump(path, True)
        return base, shallow, deep, size / (1 << 20)


def run(quick: bool = False) -> list[dict]:
    """Rows for benchmarks/run_all.py (seconds; ratio = baseline / ours, > 1 = kafkalog faster)."""
    mib = 16 if quick else 64
    base, shallow, deep, size = measure(mib)
    note = (f"{size:.0f} MiB segment of 1000-record v2 batches (~1 KiB records); baseline: "
            "kafka-python MemoryRecords iterating every record (formats nothing); dump output "
            "to a null sink")
    return [
        {"name": "dump.shallow.vs_kafka-python", "value": shallow, "unit": "s", "baseline": base,
         "ratio": base / shallow, "note": note + "; one line per batch, CRCs checked"},
        {"name": "dump.deep.vs_kafka-python", "value": deep, "unit": "s", "baseline": base,
         "ratio": base / deep, "note": note + "; --deep-iteration, one line per record"},
    ]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=64)
    args = ap.parse_args()
    base, shallow, deep, mib = measure(args.mib)
    print(f"segment: {mib:.1f} MiB")
    for name, t in (
        ("kafka-python iterate (baseline)", base),
        ("dump-segments shallow", shallow),
        ("dump-segments --deep-iteration", deep),
    ):
        print(f"{name:34s} {t:8.3f} s {mib / t:9.1f} MiB/s  speed-up {base / t:6.3f}x")


if __name__ == "__main__":
    main()
