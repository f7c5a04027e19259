"""Benchmark ``kafkalog mirror`` (``kafkalog.mirror.mirror``): one partition copied from a
``kafkalog serve`` on 127.0.0.1 into a new log dir, batch for batch.

Run as a script::

    python benchmarks/bench_mirror.py [--quick]

Writes a source log dir holding one partition of 1,700,000 records (16 B keys, 100 B random
values, 1,000 a batch, uncompressed: ~200 MB; a tenth with ``--quick``), serves it with
``KafkaServer`` on a loopback port, then in this process, best of 3 (a fresh copy each time):

* ``mirror.loopback.bytes.vs_append_batches`` and ``mirror.loopback.records.vs_append_batches``:
  the whole mirror run (connect, ApiVersions, Metadata, ListOffsets, every Fetch of 8 MiB a
  partition over TCP, whole-batch split, ``Log.append_batches`` with its CRC checks, the log
  dir closed with its checkpoints) against the engine's own ``Log.append_batches`` of the same
  segment bytes in the same 8 MiB chunks into a new log (no network, no server: the floor of
  the copy). The server runs in this process (its event loop thread shares the GIL with the
  mirror), as a single-machine measurement of the protocol path's overhead.
* ``mirror.loopback.records.vs_kcat_dump`` (when kcat is installed): the same mirror run
  against ``kcat -C -e -o beginning -f '%k%s'`` reading the same partition from the same
  server into a file: the ad-hoc topic backup many operators use (a C client over librdkafka,
  in its own process; it decodes every record and keeps only keys and values, no offsets,
  headers, timestamps or transactions).

The copy is checked (same batch bytes as the source); no assertions on timings.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from timing import best_of, script_main

RECORDS, PER_BATCH = 1_700_000, 1000
CHUNK = 8 << 20  # the mirror's partition_max_bytes


def _write(root: Path, n: int) -> None:
    import numpy as np
    import pyarrow as pa

    from kafkalog import LogDir, encode_columns

    rng = np.random.default_rng(7)
    keys = [b"k%015d" % i for i in range(PER_BATCH)]
    with LogDir.open(root) as d:
        d.create_topic("t", 1, config={"segment.bytes": 1 << 30})
        log = d.log("t", 0)
        for base in range(0, n, PER_BATCH):
            values = [rng.bytes(100) for _ in range(PER_BATCH)]
            ts = [1_700_000_000_000 + base] * PER_BATCH
            log.append_batches(encode_columns(
                pa.table({"key": keys, "value": values, "timestamp": ts}), base_offset=base,
                records_per_batch=PER_BATCH, partition_leader_epoch=0))


def _chunks(data: bytes) -> list[memoryview]:
    """``data`` cut at batch boundaries into pieces of at most :data:`CHUNK` bytes."""
    import numpy as np
    from kafkalog.native.scan import scan_entries

    sc = scan_entries(np.frombuffer(data, np.uint8))
    ends = sc["positions"] + sc["sizes"]
    out, start, view = [], 0, memoryview(data)
    while start < len(data):
        stop = int(ends[np.searchsorted(ends, start + CHUNK, side="right") - 1])
        stop = stop if stop > start else int(ends[np.searchsorted(ends, start, "right")])
        out.append(view[start:stop])
        start = stop
    return out


def run(quick: bool = False) -> list[dict]:
    """Measure and return the rows (see the module docstring)."""
    from kafkalog import Log, iter_batches
    from kafkalog.mirror import mirror
    from kafkalog.server import KafkaServer

    n = RECORDS // (10 if quick else 1)
    tmp = Path(tempfile.mkdtemp(prefix="kafkalog-bench-mirror-"))
    try:
        src = tmp / "src"
        _write(src, n)
        seg = src / "t-0" / "00000000000000000000.log"
        data = seg.read_bytes()
        size = len(data)
        server = KafkaServer(src, "127.0.0.1", 0).start()
        try:
            def ours() -> object:
                dst = tmp / "dst"
                shutil.rmtree(dst, ignore_errors=True)
                result = mirror(server.address, dst, partition_max_bytes=CHUNK)
                assert result.ok and result.partitions[0].records == n
                return dst

            dst = ours()  # warm-up (kio's codecs, the numba kernels), and the check
            copied = dst / "t-0" / "00000000000000000000.log"
            assert [bytes(b.entry_bytes()) for b in iter_batches(copied)] == \
                [bytes(b.entry_bytes()) for b in iter_batches(seg)]
            t_mirror, _ = best_of(ours, 3)
            kcat = shutil.which("kcat") or shutil.which("kafkacat")
            t_kcat = None
            if kcat is not None:
                def dump() -> float:
                    t0 = time.perf_counter()
                    with open(tmp / "kcat.out", "wb") as f:
                        subprocess.run([kcat, "-C", "-b", server.address, "-t", "t", "-p", "0",
                                        "-o", "beginning", "-e", "-q", "-f", "%k%s"],
                                       stdout=f, check=True, timeout=600)
                    return time.perf_counter() - t0

                dump()  # warm-up
                t_kcat = min(dump() for _ in range(3))
                # keys and values of every record, nothing else
                assert (tmp / "kcat.out").stat().st_size == n * (16 + 100)
        finally:
            server.stop()
        chunks = _chunks(data)

        def floor() -> None:
            d = tmp / "append"
            shutil.rmtree(d, ignore_errors=True)
            with Log.open(d) as log:
                for c in chunks:
                    log.append_batches(c)
                assert log.log_end_offset == n

        floor()
        t_append, _ = best_of(floor, 3)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    note = (f"1 partition of {n:,} records (16 B key + 100 B value, {PER_BATCH:,} a batch, "
            f"uncompressed, {size / 1e6:.0f} MB) from kafkalog serve on 127.0.0.1 (same "
            f"process) into a new log dir, fetches of 8 MiB; best of 3; baseline: "
            f"Log.append_batches of the same segment bytes in 8 MiB chunks into a new log "
            f"(no network)")
    rows = [
        {"name": "mirror.loopback.bytes.vs_append_batches", "value": size / t_mirror / 1e6,
         "unit": "MB/s", "baseline": size / t_append / 1e6, "ratio": t_append / t_mirror,
         "note": note},
        {"name": "mirror.loopback.records.vs_append_batches", "value": n / t_mirror,
         "unit": "records/s", "baseline": n / t_append, "ratio": t_append / t_mirror,
         "note": note},
    ]
    if t_kcat is not None:
        rows.append({
            "name": "mirror.loopback.records.vs_kcat_dump", "value": n / t_mirror,
            "unit": "records/s", "baseline": n / t_kcat, "ratio": t_kcat / t_mirror,
            "note": f"the mirror run above vs kcat -C -e -o beginning -f '%k%s' > file from "
                    f"the same server (kcat {kcat_version()}, librdkafka, its own process; "
                    f"keys and values only); best of 3"})
    return rows


def kcat_version() -> str:
    kcat = shutil.which("kcat") or shutil.which("kafkacat") or "kcat"
    out = subprocess.run([kcat, "-V"], capture_output=True, text=True).stdout.split()
    # "Version 1.7.1 (JSON, ..., librdkafka 2.0.2 builtin.features=...)"
    return out[out.index("Version") + 1] if "Version" in out[:-1] else "?"


if __name__ == "__main__":
    script_main(run, __doc__)
