"""The micro-batch reader's driver-side logic without a Spark session.

Offsets, discovery of new partitions and segments, ``maxOffsetsPerTrigger`` (Kafka's
proportional rate limit), availableNow freezing, and retention deleting unread segments under
``failOnDataLoss`` true and false. Reading the planned partitions uses the executor code.
"""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

from kafkalog.errors import OffsetOutOfRangeError
from kafkalog.spark.arrow import arrow_schema
from kafkalog.spark.options import ReadOptions
from kafkalog.spark.read import read_task_value
from kafkalog.spark.stream import KafkaLogStreamReader, rate_limit

from ._data import PartitionWriter, simple_partition


def reader(root, **options) -> KafkaLogStreamReader:
    opts = ReadOptions.parse({"path": str(root), **options}, streaming=True)
    return KafkaLogStreamReader(opts, ("partition", "offset"))


def read_offsets(r: KafkaLogStreamReader, start, end) -> list[tuple[int, int]]:
    out = []
    for part in r.partitions(start, end):
        batches = list(r.read(part))
        if batches:
            t = pa.Table.from_batches(batches, arrow_schema(r.columns))
            out.extend(zip(t.column("partition").to_pylist(), t.column("offset").to_pylist()))
    return sorted(out)


def test_rate_limit_is_proportional():
    start = {("a", 0): 10, ("a", 1): 0, ("b", 0): 5}
    end = {("a", 0): 110, ("a", 1): 300, ("b", 0): 5}
    got = rate_limit(40, start, end)
    assert got == {("a", 0): 20, ("a", 1): 30, ("b", 0): 5}
    assert rate_limit(1000, start, end) == end
    # a share below one offset still moves (ceil), as in Kafka
    assert rate_limit(3, {("a", 0): 0, ("b", 0): 0}, {("a", 0): 1000, ("b", 0): 1})[("b", 0)] == 1


def test_offsets_discovery_and_limits(tmp_path):
    first = simple_partition(tmp_path, "ev", 0, 120, per_batch=10, segment_bytes=5000)
    r = reader(tmp_path)
    assert r.initialOffset() == {"ev": {"0": 120}}  # streams start at latest by default
    r = reader(tmp_path, startingOffsets="earliest", maxOffsetsPerTrigger="50")
    start = r.initialOffset()
    assert start == {"ev": {"0": 0}}
    assert r.getDefaultReadLimit() == ReadMaxRows(50)
    end = r.latestOffset(start, r.getDefaultReadLimit())
    assert end == {"ev": {"0": 50}}
    assert read_offsets(r, start, end) == [(0, o) for o in range(50)]
    # a new segment in ev-0 and a new partition ev-1 (starts at its earliest offset)
    w = PartitionWriter(tmp_path, "ev", 0, start_offset=first.offsets[-1] + 1)
    w.append([(None, b"x", 1, None)] * 3)
    w.close()
    simple_partition(tmp_path, "ev", 1, 7)
    end2 = r.latestOffset(end, ReadAllAvailable())
    assert end2 == {"ev": {"0": 123, "1": 7}}
    got = read_offsets(r, end, end2)
    assert got == [(0, o) for o in range(50, 123)] + [(1, o) for o in range(7)]
    assert r.latestOffset(end2, ReadAllAvailable()) == end2  # nothing new: same offsets


def test_available_now_freezes_the_end(tmp_path):
    simple_partition(tmp_path, "ev", 0, 30)
    r = reader(tmp_path, startingOffsets="earliest")
    r.prepareForTriggerAvailableNow()
    start = r.initialOffset()
    w = PartitionWriter(tmp_path, "ev", 0, start_offset=30)
    w.append([(None, b"late", 1, None)])
    w.close()
    assert r.latestOffset(start, ReadMaxRows(20)) == {"ev": {"0": 20}}
    assert r.latestOffset({"ev": {"0": 20}}, ReadMaxRows(20)) == {"ev": {"0": 30}}
    assert r.latestOffset({"ev": {"0": 30}}, ReadMaxRows(20)) == {"ev": {"0": 30}}


def test_retention_deleting_unread_segments(tmp_path):
    simple_partition(tmp_path, "ev", 0, 300, per_batch=10, segment_bytes=8000)
    d = tmp_path / "ev-0"
    logs = sorted(d.glob("*.log"))
    assert len(logs) >= 3
    strict = reader(tmp_path, startingOffsets="earliest")
    start = strict.initialOffset()
    end = strict.latestOffset(start, ReadAllAvailable())
    # retention removes the oldest segment before the batch is planned
    second_base = int(logs[1].name.split(".")[0])
    for suffix in (".log", ".index", ".timeindex"):
        (d / logs[0].name.replace(".log", suffix)).unlink()
    with pytest.raises(OffsetOutOfRangeError, match="deleted before they were read"):
        strict.partitions(start, end)
    lenient = reader(tmp_path, startingOffsets="earliest", failOnDataLoss="false")
    got = read_offsets(lenient, start, end)
    assert got == [(0, o) for o in range(second_base, 300)]


def test_empty_placeholder_partition_reads_nothing():
    assert list(read_task_value(None, None, arrow_schema(("offset",)))) == []
