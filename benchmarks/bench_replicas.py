"""Benchmark ``kafkalog compare-replicas`` (``kafkalog.replication.compare_replicas``): two
brokers' replicas of one partition compared record by record, with Kafka's follower
truncation replayed under each leader.

Run as a script::

    python benchmarks/bench_replicas.py [--quick]

Writes two log dirs holding one partition of 1,000,000 records (16 B keys, 100 B random
values, 1,000 a batch, uncompressed: 124 MB; a tenth with ``--quick``): broker 2's replica is
broker 1's batches copied byte for byte (a follower's append), and in the ``divergent`` case
its last 10% were written instead in a later leader epoch with other values (an unclean
election). Then, in this process on a warm page cache, best of 3:

* ``compare_replicas.identical.vs_aiokafka_compare``: the whole comparison (both replicas' CRCs
  checked, every record accounted for, both candidate leaders evaluated) against aiokafka's
  compiled ``MemoryRecords`` reading both segment files and comparing every record's key,
  value and timestamp pairwise (what a script over a peer library does at the least);
* ``compare_replicas.identical.vs_bytes_equal``: against ``read_bytes() == read_bytes()`` of
  the two segment files (the machine's floor: no structure, no CRCs, no answer beyond yes/no);
* ``compare_replicas.divergent.vs_aiokafka_compare``: the divergent pair (100,000 records
  compared one by one, the lost offsets listed) against the same aiokafka loop.

The results are checked (records same/different, the truncation offset); no assertions on
timings.
"""

from __future__ import annotations

import shutil
import tempfile
import warnings
from pathlib import Path

from timing import best_of, script_main

RECORDS, PER_BATCH = 1_000_000, 1000


def _write(root: Path, n: int, divergent: bool) -> None:
    import numpy as np
    import pyarrow as pa

    from kafkalog import LogDir, encode_columns

    rng = np.random.default_rng(7)
    keys = [b"k%015d" % i for i in range(PER_BATCH)]
    split = n - n // 10
    dirs = {bid: LogDir.open(root / f"b{bid}", node_id=bid) for bid in (1, 2)}
    try:
        logs = {}
        for bid, d in dirs.items():
            d.create_topic("t", 1, config={"segment.bytes": 1 << 30})
            logs[bid] = d.log("t", 0)
        for base in range(0, n, PER_BATCH):
            values = [rng.bytes(100) for _ in range(PER_BATCH)]
            ts = [1_700_000_000_000 + base] * PER_BATCH
            batch = encode_columns(pa.table({"key": keys, "value": values, "timestamp": ts}),
                                   base_offset=base, records_per_batch=PER_BATCH,
                                   partition_leader_epoch=0)
            logs[1].append_batches(batch)
            if not divergent or base < split:
                logs[2].append_batches(batch)
            else:
                other = encode_columns(
                    pa.table({"key": keys, "value": [v[::-1] for v in values],
                              "timestamp": ts}),
                    base_offset=base, records_per_batch=PER_BATCH, partition_leader_epoch=1)
                logs[2].append_batches(other)
    finally:
        for d in dirs.values():
            d.close()



def _aiokafka_compare(a: bytes, b: bytes) -> tuple[int, int]:
    from aiokafka.record.memory_records import MemoryRecords

    same = diff = 0
    ma, mb = MemoryRecords(a), MemoryRecords(b)
    while (ba := ma.next_batch()) is not None and (bb := mb.next_batch()) is not None:
        if not (ba.validate_crc() and bb.validate_crc()):
            raise ValueError("bad CRC")
        for ra, rb in zip(ba, bb):
            if ra.key == rb.key and ra.value == rb.value and ra.timestamp == rb.timestamp:
                same += 1
            else:
                diff += 1
    return same, diff


def _case(root: Path, case: str, n: int, repeat: int) -> list[dict]:
    from importlib import metadata

    from kafkalog.replication.compare import compare_replicas

    _write(root, n, case == "divergent")
    segs = [root / f"b{b}" / "t-0" / "00000000000000000000.log" for b in (1, 2)]
    size = segs[0].stat().st_size
    expect_diff = n // 10 if case == "divergent" else 0

    def ours() -> object:
        [r] = compare_replicas([root / "b1", root / "b2"])
        assert len(r.pairs[0].differing) == expect_diff
        assert r.pairs[0].same == n - expect_diff
        return r

    def peer() -> object:
        same, diff = _aiokafka_compare(segs[0].read_bytes(), segs[1].read_bytes())
        assert (same, diff) == (n - expect_diff, expect_diff)
        return same

    ours()
    t_ours, _ = best_of(ours, repeat)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        t_aio, _ = best_of(peer, repeat)
    workload = (f"2 replicas of {n:,} records (16 B key + 100 B value, {PER_BATCH:,} a batch, "
                f"{size / 1e6:.0f} MB each), "
                + ("identical" if case == "identical" else
                   f"the last {expect_diff:,} records written in another leader epoch on "
                   "broker 2")
                + f"; best of {repeat}, warm page cache")
    rate = n / t_ours
    rows = [{
        "name": f"compare_replicas.{case}.vs_aiokafka_compare", "value": rate,
        "unit": "records/s", "baseline": n / t_aio, "ratio": t_aio / t_ours,
        "note": f"{workload}; baseline: aiokafka {metadata.version('aiokafka')} compiled "
                "MemoryRecords over both files, CRCs checked, key, value and timestamp "
                "compared pairwise"}]
    if case == "identical":
        t_bytes, same = best_of(lambda: segs[0].read_bytes() == segs[1].read_bytes(), repeat)
        assert same
        rows.append({
            "name": "compare_replicas.identical.vs_bytes_equal", "value": rate,
            "unit": "records/s", "baseline": n / t_bytes, "ratio": t_bytes / t_ours,
            "note": f"{workload}; baseline: read_bytes() == read_bytes() of the two segment "
                    "files (no CRCs, no records)"})
    return rows


def run(quick: bool = False) -> list[dict]:
    """Measure and return the rows (see the module docstring)."""
    n = RECORDS // (10 if quick else 1)
    tmp = Path(tempfile.mkdtemp(prefix="kafkalog-bench-replicas-"))
    try:
        return [row for case in ("identical", "divergent")
                for row in _case(tmp / case, case, n, 3)]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    script_main(run, __doc__)
