"""``startingOffsetsFromGroup``: a read starting at a consumer group's committed offsets.

The option resolution is checked without Spark (options and planning are plain Python); one
test reads through a real local[2] session, including a real broker's tree (LDI-POC, where the
group committed offset 3 of TestTopicPatient-0, whose log ends at 3).
"""

from __future__ import annotations

import pytest

from kafkalog import LogDir, Record
from kafkalog.errors import ConfigError
from kafkalog.groups import GroupMetadataManager
from kafkalog.spark.options import ReadOptions
from kafkalog.spark.planning import plan_read

TS0 = 1_700_000_000_000


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("grouptree")
    with LogDir.open(root, {"offsets.topic.num.partitions": "3"}) as logs:
        logs.create_topic("orders", 2)
        for p in (0, 1):
            logs.log("orders", p).append(
                [Record(None, f"{p}-{i}".encode(), TS0 + i) for i in range(10)])
        m = GroupMetadataManager(logs)
        m.commit_offsets("app", {("orders", 0): 7, ("gone", 0): 3})
        m.commit_offsets("app", {("orders", 1): 9}, producer_id=4, producer_epoch=0)
        m.end_transaction(4, 0, commit=False)       # aborted: not a committed offset
    return root


def test_options() -> None:
    o = ReadOptions.parse({"path": "/x", "startingOffsetsFromGroup": "app"})
    assert (o.starting.kind, o.starting.group) == ("group", "app")
    with pytest.raises(ConfigError, match="startingOffsetsFromGroup: give it alone"):
        ReadOptions.parse({"path": "/x", "startingOffsetsFromGroup": "app",
                           "startingOffsets": "earliest"})


def test_plan_starts_at_committed_offsets(tree) -> None:
    plan = plan_read(ReadOptions.parse({"path": str(tree), "subscribe": "orders",
                                        "startingOffsetsFromGroup": "app"}))
    # orders-1 has no committed offset (its transactional commit was aborted): earliest
    assert plan.ranges == {("orders", 0): (7, 10), ("orders", 1): (0, 10)}
    plan = plan_read(ReadOptions.parse({"path": str(tree), "subscribe": "orders",
                                        "startingOffsetsFromGroup": "nobody"}))
    assert plan.ranges == {("orders", 0): (0, 10), ("orders", 1): (0, 10)}


@pytest.mark.spark
def test_spark_read_from_group(spark, tree, shared_fixtures) -> None:
    df = (spark.read.format("kafkalog").option("subscribe", "orders")
          .option("startingOffsetsFromGroup", "app").load(str(tree)))
    rows = sorted((r.partition, r.offset) for r in df.select("partition", "offset").collect())
    assert rows == [(0, 7), (0, 8), (0, 9)] + [(1, i) for i in range(10)]
    real = (spark.read.format("kafkalog").option("subscribe", "TestTopicPatient")
            .option("startingOffsetsFromGroup", "DEVSmileCDR")
            .load(str(shared_fixtures / "kafka-real" / "LDI-POC")))
    assert real.count() == 0          # the group consumed everything: committed 3, end 3
