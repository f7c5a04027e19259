"""The main job end to end: write a log, dump it, verify it, read it with Spark.

``kafkalog demo [DIR]`` (or ``python -m kafkalog demo``) is what the README's first command runs:

1. writes a small ``log.dirs`` tree with the embedded engine: topics ``orders`` (2 partitions)
   and ``payments`` (1 partition), records with keys, headers and every codec, small segments so
   that logs roll, then closes cleanly;
2. dumps the first segment of ``orders-0`` with ``kafkalog dump-segments`` (Kafka's output shape);
3. runs ``kafkalog verify`` over the tree;
4. reads the whole tree with Spark (``spark.read.format("kafkalog")``, ``local[2]``), checks the
   row count against what was written, and aggregates by topic and partition.

Exit status 0 when every step agreed, 1 otherwise.

Example
-------
>>> from kafkalog.tools import demo
>>> demo.main(["/tmp/kafkalog-demo", "--records", "2000", "--no-spark"])  # doctest: +SKIP
0
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from kafkalog.errors import KafkaLogError

TOPICS = {"orders": 2, "payments": 1}
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
BASE_TS = 1_700_000_000_000


def write_logs(root: Path, records: int) -> dict[tuple[str, int], int]:
    """Write ``records`` records over the demo topic-partitions; return counts per partition."""
    from kafkalog import Log, LogConfig, Record, files

    config = LogConfig(segment_bytes=64 * 1024)
    counts: dict[tuple[str, int], int] = {}
    parts = [(t, p) for t, n in TOPICS.items() for p in range(n)]
    per_part = max(1, records // len(parts))
    for topic, partition in parts:
        with Log.open(files.partition_dir(root, topic, partition), config) as log:
            written = 0
            batch_no = 0
            while written < per_part:
                n = min(500, per_part - written)
                batch = [
                    Record(
                        key=f"customer-{(written + i) % 97}".encode(),
                        value=(
                            f'{{"{topic}":{written + i},"amount":{(written + i) % 1000}}}'
                        ).encode(),
                        timestamp=BASE_TS + (written + i) * 10,
                        headers=(("source", b"demo"),) if i % 2 == 0 else (),
                    )
                    for i in range(n)
                ]
                log.append(batch, compression=CODECS[batch_no % len(CODECS)])
                written += n
                batch_no += 1
            counts[(topic, partition)] = written
    return counts


def dump_first_segment(root: Path, lines: int = 6) -> int:
    """Run dump-segments on the first segment of orders-0 and print its first lines."""
    from kafkalog.cli import main as cli_main

    seg = sorted((root / "orders-0").glob("*.log"))[0]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = cli_main(["dump-segments", "--files", str(seg), "--deep-iteration"])
    text = out.getvalue().splitlines()
    print(f"$ kafkalog dump-segments --files {seg} --deep-iteration   (first {lines} of "
          f"{len(text)} lines, exit {rc})")
    for line in text[:lines]:
        print("  " + (line if len(line) < 160 else line[:157] + "..."))
    if err.getvalue().strip():
        print(err.getvalue(), file=sys.stderr)
    return rc


def verify_tree(root: Path) -> int:
    """Run ``kafkalog verify`` over the tree."""
    from kafkalog.cli import main as cli_main

    print(f"$ kafkalog verify {root}")
    return cli_main(["verify", str(root)])


def read_with_spark(root: Path, expected: int) -> int:
    """Read the tree with the kafkalog data source in local Spark and aggregate."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("kafkalog-demo")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        df = spark.read.format("kafkalog").option("includeHeaders", "true").load(str(root))
        total = df.count()
        print(f"spark: {total} rows read (expected {expected}), "
              f"{df.rdd.getNumPartitions()} input partitions")
        (
            df.groupBy("topic", "partition")
            .agg(
                F.count("*").alias("records"),
                F.min("offset").alias("first_offset"),
                F.max("offset").alias("last_offset"),
                F.max("timestamp").alias("max_timestamp"),
                F.sum(F.length("value")).alias("value_bytes"),
            )
            .orderBy("topic", "partition")
            .show(truncate=False)
        )
        return 0 if total == expected else 1
    finally:
        spark.stop()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the demo; returns the process exit status."""
    ap = argparse.ArgumentParser(prog="kafkalog demo", description=__doc__.splitlines()[0])
    ap.add_argument("directory", nargs="?", default="kafkalog-demo",
                    help="log.dirs root to (re)create (default: ./kafkalog-demo)")
    ap.add_argument("--records", type=int, default=30_000, help="records to write in total")
    ap.add_argument("--no-spark", action="store_true", help="skip the Spark step")
    args = ap.parse_args(argv)

    root = Path(args.directory)
    if root.exists():
        # the demo starts from an empty directory; one a writer holds is not removed
        from kafkalog.lock import LOCK_FILE_NAME, acquire_all
        from kafkalog.spark.layout import discover_partitions

        try:
            parts = [Path(d) for _, _, d in discover_partitions([str(root)])]
        except KafkaLogError:
            parts = []
        try:
            held = acquire_all([(d, LOCK_FILE_NAME) for d in parts])
        except KafkaLogError as e:  # LogLockedError: a writer holds one of them
            print(f"kafkalog demo: error: {e}: {root} not replaced", file=sys.stderr)
            return 1
        try:
            shutil.rmtree(root)
        finally:
            for lock in held:
                lock.release()
    root.mkdir(parents=True)

    t0 = time.perf_counter()
    counts = write_logs(root, args.records)
    total = sum(counts.values())
    segs = sum(len(list((root / f"{t}-{p}").glob("*.log"))) for t, p in counts)
    print(f"wrote {total} records to {len(counts)} partitions ({segs} segments) under {root} "
          f"in {time.perf_counter() - t0:.2f}s")

    status = 0
    status |= dump_first_segment(root)
    status |= verify_tree(root)
    if not args.no_spark:
        status |= read_with_spark(root, total)
    print("demo: OK" if status == 0 else "demo: FAILED")
    return 0 if status == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
