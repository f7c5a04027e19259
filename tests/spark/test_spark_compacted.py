"""The Spark reader on a compacted log (offset gaps, emptied batches, batches rewritten with a
delete horizon, index entries keyed by the cleaner's rule): every row equals the engine's
records, split in many tasks, and reads starting inside a gap or at a timestamp."""

from __future__ import annotations

import json

import pytest

from tests.cleaner_support import build_compacted_log

pytestmark = pytest.mark.spark


def test_spark_reads_compacted_logs(spark, tmp_path):
    root = tmp_path / "logs"
    log, _clock = build_compacted_log(root / "topic-0")
    try:
        want = [(r.offset, r.key, r.value, r.timestamp) for r in log.records()]
        gaps = [o for o in range(log.log_start_offset, log.log_end_offset)
                if o not in {w[0] for w in want}]
        assert len(gaps) > 50
        log.flush()
        opts = {"path": str(root / "topic-0"), "maxBytesPerPartition": "600"}
        df = spark.read.format("kafkalog").options(**opts).load()
        assert df.rdd.getNumPartitions() >= 5  # splits at the cleaned segments' index entries
        got = sorted((r.offset, bytes(r.key), None if r.value is None else bytes(r.value),
                      r.ts) for r in df.selectExpr(
            "offset", "key", "value", "unix_millis(timestamp) AS ts").collect())
        assert got == want
        # start inside a gap: the first record after it
        start = gaps[len(gaps) // 2]
        df2 = spark.read.format("kafkalog").options(
            **opts, startingOffsets=json.dumps({"topic": {"0": start}})).load()
        assert sorted(r.offset for r in df2.select("offset").collect()) == \
            [w[0] for w in want if w[0] >= start]
        # start at a timestamp: Kafka's offsetsForTimes over the compacted log
        ts = want[len(want) // 3][3] + 1
        df3 = spark.read.format("kafkalog").options(
            **opts, startingTimestamp=str(ts)).load()
        first = log.offset_for_timestamp(ts)
        assert sorted(r.offset for r in df3.select("offset").collect()) == \
            [w[0] for w in want if w[0] >= first]
    finally:
        log.close()
