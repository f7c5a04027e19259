"""Benchmark ``kafkalog console-consumer`` (``kafkalog.console``) against what one writes
without it: a peer's record reader over the same ``.log`` files, formatting the same lines.

Run as a script::

    python benchmarks/bench_console.py [--quick]

Builds one partition of 1,000,000 records (200,000 with ``--quick``) of 16 B keys and 100 B
values in batches of 1,000 (uncompressed, and a second topic with lz4), then, in this process
on a warm page cache, prints every record as ``kafka-console-consumer.sh --from-beginning
--formatter-property print.timestamp=true --formatter-property print.offset=true
--formatter-property print.key=true`` would (``CreateTime:<ts>\\tOffset:<o>\\t<key>\\t<value>``)
into a sink that keeps only the byte count and a CRC-32C:

* ``console_consumer.<codec>.vs_aiokafka``: ``console_consumer.main`` (open the dir read-only,
  decode chunk by chunk in columns, format with Arrow kernels) against aiokafka's compiled
  ``MemoryRecords`` over the segment's bytes with the lines built by ``%`` formatting per record;
* ``console_consumer.<codec>.vs_kafka-python``: the same, kafka-python's (pure Python) reader;
* ``console_consumer.uncompressed.columnar_vs_record_path``: the columnar path against the
  command's own record-by-record path (``--value-deserializer StringDeserializer``, which gives
  the same bytes for these ASCII values but formats each record in Python).
* ``console_producer.uncompressed.vs_aiokafka_builder``: ``kafkalog console-producer`` of the
  same records as ``key<TAB>value`` lines (``parse.key=true``) into a topic of 3 partitions
  (read the lines, partition by murmur2, batch as the producer's accumulator, append as a
  leader, checkpoints at the end) against what one writes without it: split each line,
  partition with kafka-python's ``murmur2`` and encode 16 KiB batches with aiokafka's compiled
  ``DefaultRecordBatchBuilder``, written to one file per partition (no indexes, no
  checkpoints). Both give the same records per partition (checked: counts).

All paths print the same bytes (checked: length and CRC-32C). No assertions on timings; figures
go to benchmarks/RESULTS.md through ``run()``.
"""

from __future__ import annotations

import argparse
import io
import shutil
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import crc32c

TS = 1_700_000_000_000
BATCH = 1000


class _Sink(io.RawIOBase):
    """A binary stream that keeps the length and a CRC-32C of what is written (hardware
    CRC: a few percent of either side's time, where a cryptographic hash cost as much as
    the work measured)."""

    def __init__(self) -> None:
        self.size = 0
        self.crc = 0

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:  # type: ignore[override]
        n = len(memoryview(data).cast("B"))
        self.size += n
        self.crc = crc32c.crc32c(data, self.crc)
        return n

    def result(self) -> tuple[int, int]:
        return self.size, self.crc


def _best(fn: Callable[[], tuple[int, int]], repeat: int) -> tuple[float, tuple[int, int]]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    assert out is not None
    return best, out


def _build(root: Path, n: int) -> None:
    import numpy as np
    import pyarrow as pa

    from kafkalog import LogDir

    keys = pa.array([b"key-%012d" % i for i in range(n)], pa.binary())
    values = pa.array([(b"value-%010d-" % i).ljust(100, b"x") for i in range(n)], pa.binary())
    table = pa.table({"key": keys, "value": values,
                      "timestamp": pa.array(TS + np.arange(n, dtype=np.int64))})
    with LogDir.open(root) as logs:
        for topic, codec in (("uncompressed", "none"), ("lz4", "lz4")):
            logs.create_topic(topic, 1)
            logs.log(topic, 0).append(table, compression=codec, records_per_batch=BATCH)


def _peer_lines(read_batches: Callable[[bytes], object], files: list[Path]) -> tuple[int, int]:
    sink = _Sink()
    out = io.BufferedWriter(sink, 1 << 16)
    for f in files:
        for ttype, records in read_batches(f.read_bytes()):  # type: ignore[attr-defined]
            name = b"LogAppendTime" if ttype == 1 else b"CreateTime"
            out.write(b"".join(
                b"%s:%d\tOffset:%d\t%s\t%s\n" % (
                    name, r.timestamp, r.offset, b"null" if r.key is None else r.key,
                    b"null" if r.value is None else r.value)
                for r in records))
    out.flush()
    return sink.result()


def _aiokafka_batches(data: bytes):
    from aiokafka.record.memory_records import MemoryRecords

    mr = MemoryRecords(data)
    while (batch := mr.next_batch()) is not None:
        yield batch.timestamp_type, batch


def _kafka_python_batches(data: bytes):
    from kafka.record import MemoryRecords

    mr = MemoryRecords(data)
    while mr.has_next():
        batch = mr.next_batch()
        yield batch.timestamp_type, batch


def run(quick: bool = False) -> list[dict]:
    """Measure and return the rows (see the module docstring)."""
    from importlib import metadata

    import aiokafka.record.memory_records as amr

    from kafkalog.console import console_consumer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import kafka.record  # noqa: F401

    n = 200_000 if quick else 1_000_000
    repeat = 3 if quick else 5
    compiled = "_crecords" in amr.MemoryRecords.__module__
    aiokafka_note = (f"aiokafka {metadata.version('aiokafka')}, compiled extension "
                     f"{'ACTIVE (_crecords)' if compiled else 'NOT active'}")
    kp_note = f"kafka-python {metadata.version('kafka-python')} (pure Python)"
    tmp = Path(tempfile.mkdtemp(prefix="kafkalog-bench-console-"))
    rows: list[dict] = []
    try:
        root = tmp / "logs"
        _build(root, n)
        props = ["--formatter-property", "print.timestamp=true", "--formatter-property",
                 "print.offset=true", "--formatter-property", "print.key=true"]

        def ours(topic: str, *extra: str) -> Callable[[], tuple[int, int]]:
            def go() -> tuple[int, int]:
                sink = _Sink()
                out = io.BufferedWriter(sink, 1 << 16)
                status = console_consumer.main(
                    [str(root), "--topic", topic, "--from-beginning", *props, *extra],
                    stdout=out, stderr=io.StringIO())
                assert status == 0
                out.flush()
                return sink.result()
            return go

        for topic in ("uncompressed", "lz4"):
            files = sorted((root / f"{topic}-0").glob("*.log"))
            t_ours, got = _best(ours(topic), repeat)
            work = (f"{n:,} records of 16 B key + 100 B value, {BATCH:,} per batch, {topic}; "
                    f"{got[0] / 1e6:.1f} MB of lines printed as print.timestamp/offset/key")
            for peer, reader, note in (("aiokafka", _aiokafka_batches, aiokafka_note),
                                       ("kafka-python", _kafka_python_batches, kp_note)):
                t_peer, want = _best(lambda r=reader, f=files: _peer_lines(r, f),
                                     1 if peer == "kafka-python" and not quick else repeat)
                assert want == got, (peer, want, got)
                rows.append({"name": f"console_consumer.{topic}.vs_{peer}",
                             "value": n / t_ours, "unit": "records/s", "baseline": n / t_peer,
                             "ratio": t_peer / t_ours,
                             "note": f"{work}; console_consumer.main (reads the log dir) vs "
                                     f"the peer's MemoryRecords over the segment bytes + "
                                     f"%-formatted lines; same bytes (checked); {note}"})
        t_rec, want = _best(ours("uncompressed", "--value-deserializer", "StringDeserializer"),
                            repeat)
        t_col, got = _best(ours("uncompressed"), repeat)
        assert want == got
        rows.append({"name": "console_consumer.uncompressed.columnar_vs_record_path",
                     "value": n / t_col, "unit": "records/s", "baseline": n / t_rec,
                     "ratio": t_rec / t_col,
                     "note": f"{n:,} records; the default formatter over columnar chunks vs "
                             "the command's record-by-record path (a value deserializer "
                             "set); same bytes (checked)"})
        rows.append(_producer_row(tmp, n, repeat, aiokafka_note))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rows


def _producer_row(tmp: Path, n: int, repeat: int, aiokafka_note: str) -> dict:
    from aiokafka.record.default_records import DefaultRecordBatchBuilder

    from kafkalog import LogDir
    from kafkalog.console import console_producer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from kafka.partitioner.default import murmur2

    lines = b"".join(b"key-%012d\t%s\n" % (i, (b"value-%010d-" % i).ljust(100, b"x"))
                     for i in range(n))
    parts = 3

    def ours() -> tuple[int, int]:
        root = tmp / "produced"
        shutil.rmtree(root, ignore_errors=True)
        with LogDir.open(root) as logs:
            logs.create_topic("t", parts)
        status = console_producer.main(
            [str(root), "--topic", "t", "--reader-property", "parse.key=true"],
            stdin=io.BytesIO(lines), stdout=io.StringIO(), stderr=io.StringIO())
        assert status == 0
        with LogDir.open(root, read_only=True) as logs:
            counts = [logs.log("t", p).log_end_offset for p in range(parts)]
        return sum(counts), hash(tuple(counts))

    def peer() -> tuple[int, int]:
        root = tmp / "peer"
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir()
        files = [open(root / f"t-{p}.log", "wb") for p in range(parts)]
        counts = [0] * parts
        builders: list = [None] * parts
        now = int(time.time() * 1000)

        def builder():
            return DefaultRecordBatchBuilder(2, 0, 0, -1, -1, -1, 16384)
        try:
            for line in lines.splitlines():
                key, _, value = line.partition(b"\t")
                p = (murmur2(key) & 0x7FFFFFFF) % parts
                b = builders[p]
                if b is None:
                    b = builders[p] = builder()
                if b.append(counts[p], now, key, value, []) is None:
                    files[p].write(b.build())
                    b = builders[p] = builder()
                    b.append(counts[p], now, key, value, [])
                counts[p] += 1
            for p, b in enumerate(builders):
                if b is not None:
                    files[p].write(b.build())
        finally:
            for f in files:
                f.close()
        return sum(counts), hash(tuple(counts))

    t_ours, got = _best(ours, repeat)
    t_peer, want = _best(peer, repeat)
    assert got == want, (got, want)
    return {"name": "console_producer.uncompressed.vs_aiokafka_builder", "value": n / t_ours,
            "unit": "records/s", "baseline": n / t_peer, "ratio": t_peer / t_ours,
            "note": f"{n:,} lines 'key<TAB>value' (16 B key, 100 B value) into 3 partitions, "
                    "16 KiB batches; console_producer.main (a log dir: indexes, checkpoints) vs "
                    "split + kafka-python's murmur2 + aiokafka's DefaultRecordBatchBuilder "
                    f"written to one file per partition; same counts per partition; "
                    f"{aiokafka_note}"}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    for row in run(ap.parse_args().quick):
        ratio = "" if row["ratio"] is None else f"  {row['ratio']:.2f}x"
        print(f"{row['name']:58s} {row['value']:>14,.0f} {row['unit']}{ratio}")
