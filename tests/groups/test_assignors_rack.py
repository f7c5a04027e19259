"""Rack-aware client assignors (KIP-881): ``range``, ``sticky``, ``cooperative-sticky``.

Three parts:

* the rack-aware cases of Kafka's own unit tests (``RangeAssignorTest``,
  ``AbstractStickyAssignorTest`` run as ``StickyAssignorTest`` and
  ``CooperativeStickyAssignorTest``, ``AbstractPartitionAssignorTest``), same inputs and
  expected outputs, Java method named in each;
* seeded random groups with racks run through Kafka's real Java classes (``kafka_java``), equal
  member by member including list order;
* without racks nothing changed.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from kafkalog.groups import assign
from kafkalog.groups.assignors import STRATEGIES
from kafkalog.groups.assignors.model import AssignmentInput, use_rack_aware_assignment
from kafkalog.groups.errors import AssignmentError

from . import kafka_java
from .test_assignors_java import _ours, _random_case

ALL_RACKS = ["a", "b", "c", "d", "e", "f"]          # AbstractPartitionAssignorTest.ALL_RACKS
TP = tuple[str, int]


# ---------------------------------------------------------------------------------------------
# helpers mirroring AbstractPartitionAssignorTest
# ---------------------------------------------------------------------------------------------

def racks(n: int) -> list[str | None]:
    """``AbstractPartitionAssignorTest.racks``"""
    return [ALL_RACKS[i % len(ALL_RACKS)] for i in range(n)]


def null_racks(n: int) -> list[str | None]:
    """``AbstractPartitionAssignorTest.nullRacks``"""
    return [None] * n


def replica_racks(count: int, replication: int, broker_racks: Sequence[str | None],
                  next_node: int) -> list[set[str]]:
    """``AbstractPartitionAssignorTest.partitionInfos(topic, n, rf, brokerRacks, nextNodeIndex)``:
    partition ``i`` has replicas on brokers ``(i + j + nextNodeIndex) % brokers``."""
    n = len(broker_racks)
    out = []
    for i in range(count):
        rs = {broker_racks[(i + j + next_node) % n] for j in range(replication)}
        out.append({r for r in rs if r is not None})
    return out


def replica_racks_by_rack_count(count: int, replication: int, num_broker_racks: int,
                                next_node: int) -> list[set[str]]:
    """``AbstractPartitionAssignorTest.partitionInfos(topic, n, rf, numBrokerRacks, next)``"""
    brokers = replication if num_broker_racks <= 0 else num_broker_racks * replication
    broker_racks = [None if num_broker_racks <= 0 else ALL_RACKS[i % num_broker_racks]
                    for i in range(brokers)]
    return replica_racks(count, replication, broker_racks, next_node)


def run(strategy: str, subscriptions: dict[str, list[str]], counts: dict[str, int], *,
        prefer: bool = False, **kwargs: object) -> dict[str, list[TP]]:
    """An assignor run with Kafka's test-only ``preferRackAwareLogic`` flag as asked."""
    inp = AssignmentInput.build(subscriptions, counts, **kwargs)  # type: ignore[arg-type]
    inp.prefer_rack_aware = prefer
    return STRATEGIES[strategy](inp)


def parse(s: str) -> list[TP]:
    if not s:
        return []
    out = []
    for item in s.split(", "):
        t, p = item.rsplit("-", 1)
        out.append((t, int(p)))
    return out


def sorted_string(tps: list[TP]) -> str:
    """``AbstractPartitionAssignorTest.toSortedString``: ``TopicPartition.toString`` sorted."""
    return ", ".join(sorted(f"{t}-{p}" for t, p in tps))


def verify_rack_assignment(strategy: str, topics: dict[str, int], replication: int,
                           broker_racks: list[str | None], consumer_racks: list[str | None],
                           consumer_topics: list[list[str]], owned: list[str] | None,
                           expected: list[str], num_mismatched: int,
                           *, prefer: bool = False) -> None:
    """``AbstractPartitionAssignorTest.verifyRackAssignment``: consumers ``consumer<i>``, every
    subscription with ``DEFAULT_GENERATION`` (no generation), owned partitions in the
    subscription (which ``StickyAssignor`` ignores: it reads them from user data)."""
    consumers = [f"consumer{i}" for i in range(len(consumer_racks))]
    # partitionsPerTopic: topics in the test's mkMap order, node index running over partitions
    pr: dict[str, list[set[str]]] = {}
    next_index = 0
    for t, n in topics.items():
        pr[t] = replica_racks(n, replication, broker_racks, next_index)
        next_index += n
    subs = {c: consumer_topics[i] for i, c in enumerate(consumers)}
    crs = {c: consumer_racks[i] for i, c in enumerate(consumers)}
    kwargs: dict[str, object] = {"consumer_racks": crs, "partition_racks": pr}
    if owned and strategy != "sticky":
        kwargs["owned"] = {c: parse(owned[i]) for i, c in enumerate(consumers) if i < len(owned)}
        kwargs["generations"] = {c: None for c in consumers}
    got = run(strategy, subs, topics, prefer=prefer, **kwargs)
    assert {c: sorted_string(got[c]) for c in consumers} == \
        {c: expected[i] for i, c in enumerate(consumers)}
    if num_mismatched >= 0:
        mismatched = [tp for i, c in enumerate(consumers) if consumer_racks[i] is not None
                      for tp in got[c] if consumer_racks[i] not in pr[tp[0]][tp[1]]]
        assert len(mismatched) == num_mismatched, mismatched


# ---------------------------------------------------------------------------------------------
# AbstractPartitionAssignorTest
# ---------------------------------------------------------------------------------------------

def test_use_rack_aware_assignment() -> None:
    """AbstractPartitionAssignorTest.testUseRackAwareAssignment"""
    all_racks = frozenset("abc")
    two = frozenset("ab")
    on_all = [all_racks] * 10
    on_subset = [frozenset("abc"[i % 3]) for i in range(10)]
    inp = AssignmentInput.build({}, {})
    for prefer in (False, True):
        inp.prefer_rack_aware = prefer
        assert not use_rack_aware_assignment(inp, set(), set(), on_all)
        assert not use_rack_aware_assignment(inp, set(), all_racks, on_all)
        assert not use_rack_aware_assignment(inp, all_racks, set(), [])
        assert not use_rack_aware_assignment(inp, {"d"}, all_racks, on_all)
        assert use_rack_aware_assignment(inp, all_racks, all_racks, on_all) == prefer
        assert use_rack_aware_assignment(inp, two, all_racks, on_all) == prefer
        assert use_rack_aware_assignment(inp, all_racks, all_racks, on_subset)
        assert use_rack_aware_assignment(inp, two, all_racks, on_subset)
        if not prefer:
            assert not use_rack_aware_assignment(inp, {"a", "d"}, all_racks, on_all)
            assert use_rack_aware_assignment(inp, {"a", "d"}, all_racks, on_subset)


# ---------------------------------------------------------------------------------------------
# RangeAssignorTest
# ---------------------------------------------------------------------------------------------

def _range_non_rack_aware(topics: dict[str, int], consumer_topics: list[list[str]],
                          expected: list[str]) -> None:
    """``RangeAssignorTest.verifyNonRackAwareAssignment``"""
    v = verify_rack_assignment
    v("range", topics, 3, null_racks(3), racks(3), consumer_topics, None, expected, -1)
    v("range", topics, 3, racks(3), null_racks(3), consumer_topics, None, expected, -1)
    v("range", topics, 3, racks(3), racks(3), consumer_topics, None, expected, 0)
    v("range", topics, 4, racks(4), racks(3), consumer_topics, None, expected, 0)
    v("range", topics, 3, racks(3), ["d", "e", "f"], consumer_topics, None, expected, -1)
    v("range", topics, 3, racks(3), [None, "e", "f"], consumer_topics, None, expected, -1)
    v("range", topics, 3, racks(3), racks(3), consumer_topics, None, expected, 0, prefer=True)


def test_range_rack_aware_assignment_with_uniform_subscription() -> None:
    """RangeAssignorTest.testRackAwareAssignmentWithUniformSubscription"""
    topics = {"t1": 6, "t2": 7, "t3": 2}
    ct = [["t1", "t2", "t3"]] * 3
    _range_non_rack_aware(topics, ct, ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0",
                                       "t1-2, t1-3, t2-3, t2-4, t3-1", "t1-4, t1-5, t2-5, t2-6"])
    v = verify_rack_assignment
    v("range", topics, 1, racks(3), racks(3), ct, None,
      ["t1-0, t1-3, t2-0, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t3-0",
       "t1-2, t1-5, t2-2, t2-5, t3-1"], 0)
    v("range", topics, 2, racks(3), racks(3), ct, None,
      ["t1-0, t1-2, t2-0, t2-2, t2-3, t3-1", "t1-1, t1-3, t2-1, t2-4, t3-0",
       "t1-4, t1-5, t2-5, t2-6"], 1)
    v("range", topics, 3, racks(2), racks(3), ct, None,
      ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0", "t1-2, t1-3, t2-3, t2-4, t3-1",
       "t1-4, t1-5, t2-5, t2-6"], 4)


def test_range_rack_aware_assignment_with_non_equal_subscription() -> None:
    """RangeAssignorTest.testRackAwareAssignmentWithNonEqualSubscription"""
    topics = {"t1": 6, "t2": 7, "t3": 2}
    ct = [["t1", "t2", "t3"], ["t1", "t2", "t3"], ["t1", "t3"]]
    _range_non_rack_aware(topics, ct, ["t1-0, t1-1, t2-0, t2-1, t2-2, t2-3, t3-0",
                                       "t1-2, t1-3, t2-4, t2-5, t2-6, t3-1", "t1-4, t1-5"])
    v = verify_rack_assignment
    v("range", topics, 1, racks(3), racks(3), ct, None,
      ["t1-0, t1-3, t2-0, t2-2, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t2-5, t3-0",
       "t1-2, t1-5, t3-1"], 2)
    v("range", topics, 2, racks(3), racks(3), ct, None,
      ["t1-0, t1-2, t2-0, t2-2, t2-3, t2-5, t3-1", "t1-1, t1-3, t2-1, t2-4, t2-6, t3-0",
       "t1-4, t1-5"], 0)
    v("range", topics, 3, racks(2), racks(3), ct, None,
      ["t1-0, t1-1, t2-0, t2-1, t2-2, t2-3, t3-0", "t1-2, t1-3, t2-4, t2-5, t2-6, t3-1",
       "t1-4, t1-5"], 2)


def test_range_rack_aware_assignment_with_uniform_partitions() -> None:
    """RangeAssignorTest.testRackAwareAssignmentWithUniformPartitions"""
    topics = {"t1": 5, "t2": 5, "t3": 5}
    ct = [["t1", "t2", "t3"]] * 3
    expected = ["t1-0, t1-1, t2-0, t2-1, t3-0, t3-1", "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3",
                "t1-4, t2-4, t3-4"]
    _range_non_rack_aware(topics, ct, expected)
    v = verify_rack_assignment
    v("range", topics, 1, racks(3), racks(3), ct, None, expected, 10)
    v("range", topics, 2, racks(3), racks(3), ct, None, expected, 5)
    v("range", topics, 3, racks(2), racks(3), ct, None, expected, 3)


def test_range_rack_aware_assignment_with_uniform_partitions_non_equal_subscription() -> None:
    """RangeAssignorTest.testRackAwareAssignmentWithUniformPartitionsNonEqualSubscription"""
    topics = {"t1": 5, "t2": 5, "t3": 5}
    ct = [["t1", "t2", "t3"], ["t1", "t2", "t3"], ["t1", "t3"]]
    _range_non_rack_aware(topics, ct, ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0, t3-1",
                                       "t1-2, t1-3, t2-3, t2-4, t3-2, t3-3", "t1-4, t3-4"])
    v = verify_rack_assignment
    v("range", topics, 1, racks(3), racks(3), ct, None,
      ["t1-0, t1-1, t2-0, t2-1, t2-4, t3-0, t3-1", "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3",
       "t1-4, t3-4"], 9)
    v("range", topics, 2, racks(3), racks(3), ct, None,
      ["t1-2, t2-0, t2-1, t2-3, t3-2", "t1-0, t1-3, t2-2, t2-4, t3-0, t3-3",
       "t1-1, t1-4, t3-1, t3-4"], 0)
    v("range", topics, 3, racks(2), racks(3), ct, None,
      ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0, t3-1", "t1-2, t1-3, t2-3, t2-4, t3-2, t3-3",
       "t1-4, t3-4"], 2)


def test_range_rack_aware_assignment_with_co_partitioning() -> None:
    """RangeAssignorTest.testRackAwareAssignmentWithCoPartitioning"""
    topics = {"t1": 6, "t2": 6, "t3": 2, "t4": 2}
    ct = [["t1", "t2"], ["t1", "t2"], ["t3", "t4"], ["t3", "t4"]]
    cr: list[str | None] = ["a", "b", "b", "a"]
    expected = ["t1-0, t1-1, t1-2, t2-0, t2-1, t2-2", "t1-3, t1-4, t1-5, t2-3, t2-4, t2-5",
                "t3-0, t4-0", "t3-1, t4-1"]
    v = verify_rack_assignment
    v("range", topics, 3, racks(2), cr, ct, None, expected, -1)
    v("range", topics, 2, racks(2), cr, ct, None, expected, 0)
    v("range", topics, 1, racks(2), cr, ct, None,
      ["t1-0, t1-2, t1-4, t2-0, t2-2, t2-4", "t1-1, t1-3, t1-5, t2-1, t2-3, t2-5",
       "t3-1, t4-1", "t3-0, t4-0"], 0)
    ct = [["t1", "t2", "t3", "t4"]] * 4
    expected = ["t1-0, t1-1, t2-0, t2-1, t3-0, t4-0", "t1-2, t1-3, t2-2, t2-3, t3-1, t4-1",
                "t1-4, t2-4", "t1-5, t2-5"]
    v("range", topics, 3, racks(2), cr, ct, None, expected, -1)
    v("range", topics, 2, racks(2), cr, ct, None, expected, 0)
    v("range", topics, 1, racks(2), cr, ct, None,
      ["t1-0, t1-2, t2-0, t2-2, t3-0, t4-0", "t1-1, t1-3, t2-1, t2-3, t3-1, t4-1",
       "t1-5, t2-5", "t1-4, t2-4"], 0)
    v("range", topics, 1, racks(3), cr, ct, None,
      ["t1-0, t1-3, t2-0, t2-3, t3-0, t4-0", "t1-1, t1-4, t2-1, t2-4, t3-1, t4-1",
       "t1-2, t2-2", "t1-5, t2-5"], 6)


def test_range_co_partitioned_assignment_with_same_subscription() -> None:
    """RangeAssignorTest.testCoPartitionedAssignmentWithSameSubscription (topics t7..t9 of the
    subscriptions have no metadata: they are left out of the partition counts in Kafka, and
    given 0 partitions here)."""
    topics = {"t1": 6, "t2": 6, "t3": 2, "t4": 2, "t5": 4, "t6": 4, "t7": 0, "t8": 0, "t9": 0}
    ct = [[f"t{i}" for i in range(1, 10)]] * 3
    cr: list[str | None] = ["a", "b", "c"]
    expected = ["t1-0, t1-1, t2-0, t2-1, t3-0, t4-0, t5-0, t5-1, t6-0, t6-1",
                "t1-2, t1-3, t2-2, t2-3, t3-1, t4-1, t5-2, t6-2",
                "t1-4, t1-5, t2-4, t2-5, t5-3, t6-3"]
    v = verify_rack_assignment
    v("range", topics, 3, null_racks(3), cr, ct, None, expected, -1)
    v("range", topics, 3, racks(3), cr, ct, None, expected, 0, prefer=True)
    v("range", topics, 2, racks(3), cr, ct, None,
      ["t1-0, t1-2, t2-0, t2-2, t3-0, t4-0, t5-1, t6-1",
       "t1-1, t1-3, t2-1, t2-3, t3-1, t4-1, t5-2, t6-2",
       "t1-4, t1-5, t2-4, t2-5, t5-0, t5-3, t6-0, t6-3"], 0, prefer=True)


def test_range_rack_aware_static_member_assignment_persistent_after_member_id_changes() -> None:
    """RangeAssignorTest.testRackAwareStaticMemberRangeAssignmentPersistentAfterMemberIdChanges"""
    counts = {"topic1": 5, "topic2": 5}
    pr = {t: replica_racks_by_rack_count(5, 2, 3, 0) for t in counts}
    members = {"consumer1": ("instance1", "a"), "consumer2": ("instance2", "b"),
               "consumer3": ("instance3", "c")}

    def by_instance(ms: dict[str, tuple[str, str]]) -> dict[str, list[TP]]:
        got = run("range", {m: ["topic1", "topic2"] for m in ms}, counts, prefer=True,
                  group_instance_ids={m: i for m, (i, _) in ms.items()},
                  consumer_racks={m: r for m, (_, r) in ms.items()}, partition_racks=pr)
        return {i: sorted(got[m]) for m, (i, _) in ms.items()}

    first = by_instance(members)
    assert first == {
        "instance1": parse("topic1-0, topic1-2, topic2-0, topic2-2"),
        "instance2": parse("topic1-1, topic1-3, topic2-1, topic2-3"),
        "instance3": parse("topic1-4, topic2-4")}
    renamed = {"consumer1": members["consumer1"], "consumer5": members["consumer2"],
               "consumer4": members["consumer3"]}
    assert by_instance(renamed) == first


RACK_CONFIGS = ["NO_BROKER_RACK", "NO_CONSUMER_RACK", "BROKER_AND_CONSUMER_RACK"]


def _range_rack_config(rack_config: str, max_consumers: int = 3
                       ) -> tuple[int, int, bool]:
    """``RangeAssignorTest.initializeRacks``: (replication factor, broker racks, consumer
    racks?), with ``preferRackAwareLogic``."""
    return (max_consumers, 0 if rack_config == "NO_BROKER_RACK" else max_consumers,
            rack_config != "NO_CONSUMER_RACK")


@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_range_static_member_assignment_persistent(rack_config: str) -> None:
    """RangeAssignorTest.testStaticMemberRangeAssignmentPersistent"""
    rf, nbr, has_rack = _range_rack_config(rack_config, 5)
    counts = {"topic1": 5, "topic2": 4}
    pr = {t: replica_racks_by_rack_count(n, rf, nbr, 0) for t, n in counts.items()}
    num_racks = nbr if nbr > 0 else len(ALL_RACKS)

    def rack(i: int) -> str | None:
        return ALL_RACKS[i % num_racks] if has_rack else None

    members = ["consumer1", "consumer2", "consumer3", "consumer4"]
    inst = {"consumer1": "instance1", "consumer2": "instance2", "consumer3": "instance3"}
    subs = {m: ["topic1", "topic2"] for m in members}
    crs = {m: rack(i) for i, m in enumerate(members)}
    expected = {"consumer1": parse("topic1-0, topic1-1, topic2-0"),
                "consumer2": parse("topic1-2, topic2-1"),
                "consumer3": parse("topic1-3, topic2-2"),
                "consumer4": parse("topic1-4, topic2-3")}
    got = run("range", subs, counts, prefer=True, group_instance_ids=inst, consumer_racks=crs,
              partition_racks=pr)
    assert {m: sorted(v) for m, v in got.items()} == expected
    # replace dynamic member 4 with a new dynamic member 5 (consumer index 4)
    del subs["consumer4"], crs["consumer4"], expected["consumer4"]
    subs["consumer5"] = ["topic1", "topic2"]
    crs["consumer5"] = rack(4)
    expected["consumer5"] = parse("topic1-4, topic2-3")
    got = run("range", subs, counts, prefer=True, group_instance_ids=inst, consumer_racks=crs,
              partition_racks=pr)
    assert {m: sorted(v) for m, v in got.items()} == expected


@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_range_two_static_consumers_two_topics_six_partitions(rack_config: str) -> None:
    """RangeAssignorTest.testTwoStaticConsumersTwoTopicsSixPartitions and
    testOneStaticConsumerAndOneDynamicConsumerTwoTopicsSixPartitions"""
    rf, nbr, has_rack = _range_rack_config(rack_config)
    counts = {"topic1": 3, "topic2": 3}
    pr = {t: replica_racks_by_rack_count(n, rf, nbr, 0) for t, n in counts.items()}
    crs = {"consumer-b": "a" if has_rack else None, "consumer-a": "b" if has_rack else None}
    subs = {"consumer-b": ["topic1", "topic2"], "consumer-a": ["topic1", "topic2"]}
    for inst in ({"consumer-b": "instance1", "consumer-a": "instance2"},
                 {"consumer-b": "instance1"}):
        got = run("range", subs, counts, prefer=True, group_instance_ids=inst,
                  consumer_racks=crs, partition_racks=pr)
        assert sorted(got["consumer-b"]) == parse("topic1-0, topic1-1, topic2-0, topic2-1")
        assert sorted(got["consumer-a"]) == parse("topic1-2, topic2-2")


@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_range_multiple_consumers_mixed_topics(rack_config: str) -> None:
    """RangeAssignorTest.testMultipleConsumersMixedTopics"""
    rf, nbr, has_rack = _range_rack_config(rack_config)
    counts = {"topic1": 3, "topic2": 2}
    pr = {t: replica_racks_by_rack_count(n, rf, nbr, 0) for t, n in counts.items()}
    crs = {c: (ALL_RACKS[i % 3] if has_rack else None)
           for i, c in enumerate(["consumer1", "consumer2", "consumer3"])}
    got = run("range", {"consumer1": ["topic1"], "consumer2": ["topic1", "topic2"],
                        "consumer3": ["topic1"]}, counts, prefer=True, consumer_racks=crs,
              partition_racks=pr)
    assert {m: sorted(v) for m, v in got.items()} == {
        "consumer1": [("topic1", 0)],
        "consumer2": [("topic1", 1), ("topic2", 0), ("topic2", 1)],
        "consumer3": [("topic1", 2)]}


# ---------------------------------------------------------------------------------------------
# AbstractStickyAssignorTest (StickyAssignorTest, CooperativeStickyAssignorTest)
# ---------------------------------------------------------------------------------------------

STICKY = ["sticky", "cooperative-sticky"]


@pytest.mark.parametrize("strategy", STICKY)
def test_sticky_rack_aware_assignment_with_uniform_subscription(strategy: str) -> None:
    """AbstractStickyAssignorTest.testRackAwareAssignmentWithUniformSubscription"""
    topics = {"t1": 6, "t2": 7, "t3": 2}
    ct = [["t1", "t2", "t3"]] * 3
    expected = ["t1-0, t1-3, t2-0, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t3-0",
                "t1-2, t1-5, t2-2, t2-5, t3-1"]
    v = verify_rack_assignment

    def uniform(rf: int, br: list[str | None], cr: list[str | None], exp: list[str], n: int,
                prefer: bool = False) -> None:
        # verifyUniformSubscription: without owned partitions, then owning the expected ones
        v(strategy, topics, rf, br, cr, ct, None, exp, n, prefer=prefer)
        v(strategy, topics, rf, br, cr, ct, exp, exp, n, prefer=prefer)

    uniform(3, null_racks(3), racks(3), expected, -1)
    uniform(3, racks(3), null_racks(3), expected, -1)
    uniform(3, racks(3), racks(3), expected, 0, prefer=True)
    uniform(4, racks(4), racks(3), expected, 0, prefer=True)
    uniform(3, racks(3), racks(3), expected, 0)
    uniform(3, racks(3), ["d", "e", "f"], expected, -1)
    uniform(3, racks(3), [None, "e", "f"], expected, -1)
    uniform(1, racks(3), racks(3), expected, 0)
    uniform(2, racks(3), racks(3), expected, 0)
    uniform(3, racks(2), racks(3), expected, 5)
    owned = ["t1-0, t1-1, t1-2, t1-3, t1-4", "t1-5, t2-0, t2-1, t2-2, t2-3",
             "t2-4, t2-5, t2-6, t3-0, t3-1"]
    if strategy == "cooperative-sticky":
        v(strategy, topics, 1, racks(3), racks(3), ct, owned,
          ["t1-0, t1-3", "t2-1", "t2-5, t3-1"], 0)
    else:
        v(strategy, topics, 1, racks(3), racks(3), ct, owned, expected, 0)
    v(strategy, topics, 3, racks(3), racks(3), ct, expected, expected, 0, prefer=True)


@pytest.mark.parametrize("strategy", STICKY)
def test_sticky_rack_aware_assignment_with_non_equal_subscription(strategy: str) -> None:
    """AbstractStickyAssignorTest.testRackAwareAssignmentWithNonEqualSubscription"""
    topics = {"t1": 6, "t2": 7, "t3": 2}
    ct = [["t1", "t2", "t3"], ["t1", "t2", "t3"], ["t1", "t3"]]
    expected = ["t1-5, t2-0, t2-2, t2-4, t2-6", "t1-3, t2-1, t2-3, t2-5, t3-0",
                "t1-0, t1-1, t1-2, t1-4, t3-1"]
    v = verify_rack_assignment

    def non_equal(rf: int, br: list[str | None], cr: list[str | None], exp: list[str], n: int,
                  prefer: bool = False) -> None:
        # verifyNonEqualSubscription
        v(strategy, topics, rf, br, cr, ct, None, exp, n, prefer=prefer)
        v(strategy, topics, rf, br, cr, ct, exp, exp, n, prefer=prefer)

    non_equal(3, null_racks(3), racks(3), expected, -1)
    non_equal(3, racks(3), null_racks(3), expected, -1)
    non_equal(3, racks(3), racks(3), expected, 0, prefer=True)
    non_equal(4, racks(4), racks(3), expected, 0, prefer=True)
    non_equal(3, racks(3), racks(3), expected, 0)
    non_equal(3, racks(3), ["d", "e", "f"], expected, -1)
    non_equal(3, racks(3), [None, "e", "f"], expected, -1)
    non_equal(1, racks(3), racks(3), ["t1-3, t2-0, t2-2, t2-3, t2-6",
                                      "t1-4, t2-1, t2-4, t2-5, t3-0",
                                      "t1-0, t1-1, t1-2, t1-5, t3-1"], 4)
    non_equal(2, racks(3), racks(3), ["t1-3, t2-0, t2-2, t2-5, t2-6",
                                      "t1-0, t2-1, t2-3, t2-4, t3-0",
                                      "t1-1, t1-2, t1-4, t1-5, t3-1"], 0)
    non_equal(3, racks(2), racks(3), expected, 5)
    owned = ["t1-0, t1-1, t1-2, t1-3, t1-4", "t1-5, t2-0, t2-1, t2-2, t2-3",
             "t2-4, t2-5, t2-6, t3-0, t3-1"]
    aligned = ["t1-3, t2-0, t2-2, t2-3, t2-6", "t1-4, t2-1, t2-4, t2-5, t3-0",
               "t1-0, t1-1, t1-2, t1-5, t3-1"]
    if strategy == "sticky":
        v(strategy, topics, 1, racks(3), racks(3), ct, owned, aligned, 4)
        for prefer in (False, True):
            v(strategy, topics, 3, racks(3), racks(3), ct, owned, expected, 0, prefer=prefer)
    else:
        intermediate = ["t1-3", "t2-1", "t3-1"]
        v(strategy, topics, 1, racks(3), racks(3), ct, owned, intermediate, 0)
        v(strategy, topics, 1, racks(3), racks(3), ct, intermediate, aligned, 4)
        final = ["t1-2, t1-3, t1-4, t2-4, t2-5", "t2-0, t2-1, t2-2, t2-3, t2-6",
                 "t1-0, t1-1, t1-5, t3-0, t3-1"]
        intermediate = ["t1-2, t1-3, t1-4", "t2-0, t2-1, t2-2, t2-3", "t3-0, t3-1"]
        for prefer in (False, True):
            v(strategy, topics, 3, racks(3), racks(3), ct, owned, intermediate, 0,
              prefer=prefer)
            v(strategy, topics, 3, racks(3), racks(3), ct, intermediate, final, 0,
              prefer=prefer)


def test_cooperative_uniform_subscription_transfer_ownership_list_is_right() -> None:
    """CooperativeStickyAssignorTest.testUniformSubscriptionTransferOwnershipListIsRight:
    two partitions change owner for their racks, so both are held back this rebalance."""
    pr = {"topic1": replica_racks_by_rack_count(4, 1, 2, 0)}
    got = run("cooperative-sticky", {"c0": ["topic1"], "c1": ["topic1"]}, {"topic1": 4},
              owned={"c0": [("topic1", 0), ("topic1", 1)], "c1": [("topic1", 2), ("topic1", 3)]},
              generations={"c0": 1, "c1": 1}, consumer_racks={"c0": "a", "c1": "b"},
              partition_racks=pr)
    assert got == {"c0": [("topic1", 0)], "c1": [("topic1", 3)]}


def _sticky_rack_config(rack_config: str) -> tuple[int, int, bool]:
    """``AbstractStickyAssignorTest.initializeRacks``: replication 3, 3 broker racks unless
    NO_BROKER_RACK, consumer racks unless NO_CONSUMER_RACK, ``preferRackAwareLogic``."""
    return 3, 0 if rack_config == "NO_BROKER_RACK" else 3, rack_config != "NO_CONSUMER_RACK"


@pytest.mark.parametrize("strategy", STICKY)
@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_sticky_two_consumers_two_topics_six_partitions(strategy: str, rack_config: str) -> None:
    """AbstractStickyAssignorTest.testTwoConsumersTwoTopicsSixPartitions"""
    rf, nbr, has_rack = _sticky_rack_config(rack_config)
    counts = {"topic1": 3, "topic2": 3}
    # partitionInfos(topic, n): each topic starts one node further (nextPartitionIndex)
    pr = {t: replica_racks_by_rack_count(n, rf, nbr, i) for i, (t, n) in enumerate(counts.items())}
    num_racks = nbr if nbr > 0 else len(ALL_RACKS)
    crs = {c: (ALL_RACKS[i % num_racks] if has_rack else None)
           for i, c in enumerate(["consumer1", "consumer2"])}
    got = run(strategy, {"consumer1": ["topic1", "topic2"], "consumer2": ["topic1", "topic2"]},
              counts, prefer=True, consumer_racks=crs, partition_racks=pr)
    assert got == {"consumer1": [("topic1", 0), ("topic1", 2), ("topic2", 1)],
                   "consumer2": [("topic1", 1), ("topic2", 0), ("topic2", 2)]}


@pytest.mark.parametrize("strategy", STICKY)
@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_sticky_multiple_consumers_mixed_topic_subscriptions(strategy: str,
                                                             rack_config: str) -> None:
    """AbstractStickyAssignorTest.testMultipleConsumersMixedTopicSubscriptions"""
    rf, nbr, has_rack = _sticky_rack_config(rack_config)
    counts = {"topic1": 3, "topic2": 2}
    pr = {t: replica_racks_by_rack_count(n, rf, nbr, i) for i, (t, n) in enumerate(counts.items())}
    num_racks = nbr if nbr > 0 else len(ALL_RACKS)
    members = ["consumer1", "consumer2", "consumer3"]
    crs = {c: (ALL_RACKS[i % num_racks] if has_rack else None) for i, c in enumerate(members)}
    got = run(strategy, {"consumer1": ["topic1"], "consumer2": ["topic1", "topic2"],
                         "consumer3": ["topic1"]},
              counts, prefer=True, consumer_racks=crs, partition_racks=pr)
    assert got == {"consumer1": [("topic1", 0), ("topic1", 2)],
                   "consumer2": [("topic2", 0), ("topic2", 1)],
                   "consumer3": [("topic1", 1)]}


class _StickyTest:
    """The fixture of ``AbstractStickyAssignorTest`` after ``initializeRacks(rackConfig)``:
    replication factor 3, 3 broker racks (none for NO_BROKER_RACK), each topic's replicas one
    broker further (``nextPartitionIndex``), consumer ``i`` on rack ``ALL_RACKS[i % racks]``
    (none for NO_CONSUMER_RACK), ``preferRackAwareLogic`` set. ``StickyAssignorTest.
    buildSubscriptionV2Above`` sends no rack; ``CooperativeStickyAssignorTest``'s does."""

    def __init__(self, strategy: str, rack_config: str, counts: dict[str, int]) -> None:
        self.strategy = strategy
        self.counts = counts
        self.num_broker_racks = 0 if rack_config == "NO_BROKER_RACK" else 3
        self.has_consumer_rack = rack_config != "NO_CONSUMER_RACK"
        self.partition_racks = {
            t: replica_racks_by_rack_count(n, 3, self.num_broker_racks, i)
            for i, (t, n) in enumerate(counts.items())}
        self.subs: dict[str, list[str]] = {}
        self.owned: dict[str, list[TP]] = {}
        self.gens: dict[str, int | None] = {}
        self.racks: dict[str, str | None] = {}

    def rack(self, index: int) -> str | None:
        """``consumerRackId``"""
        n = self.num_broker_racks if self.num_broker_racks > 0 else len(ALL_RACKS)
        return ALL_RACKS[index % n] if self.has_consumer_rack else None

    def subscription(self, member: str, topics: list[str], index: int) -> None:
        """``subscription(topics, consumerIndex)``: no owned partitions, no generation."""
        self.subs[member] = topics
        self.owned[member] = []
        self.gens[member] = None
        self.racks[member] = self.rack(index)

    def v2(self, member: str, topics: list[str], owned: list[TP], index: int,
           generation: int = 1) -> None:
        """``buildSubscriptionV2Above(topics, owned, generationId, consumerIndex)``"""
        self.subs[member] = topics
        self.owned[member] = list(owned)
        self.gens[member] = generation
        self.racks[member] = self.rack(index) if self.strategy == "cooperative-sticky" else None

    def remove(self, member: str) -> None:
        for d in (self.subs, self.owned, self.gens, self.racks):
            del d[member]

    def assign(self) -> dict[str, list[TP]]:
        return run(self.strategy, self.subs, self.counts, prefer=True, owned=self.owned,
                   generations=self.gens, consumer_racks=self.racks,
                   partition_racks=self.partition_racks)

    def settle(self, assignment: dict[str, list[TP]]) -> dict[str, list[TP]]:
        """``CooperativeStickyAssignorTest.verifyValidityAndBalance``: while partitions are
        revoked, rebalance again with the new assignment owned (V2 subscriptions of generation
        1, racks kept); the eager assignor's assignment is final."""
        rebalances = 0
        while self.strategy == "cooperative-sticky" and any(
                set(self.owned[m]) - set(assignment[m]) for m in self.subs):
            added = {tp for m in self.subs for tp in set(assignment[m]) - set(self.owned[m])}
            revoked = {tp for m in self.subs for tp in set(self.owned[m]) - set(assignment[m])}
            assert not added & revoked
            for m in self.subs:
                self.owned[m] = list(assignment[m])
                self.gens[m] = 1
            assignment = self.assign()
            rebalances += 1
            assert rebalances <= 4
        sizes = [len(v) for v in assignment.values()]
        assert max(sizes) - min(sizes) <= 1                 # isFullyBalanced
        return assignment


T1 = "topic1"
T2 = "topic2"


@pytest.mark.parametrize("strategy", STICKY)
@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_sticky_consumer_owning_min_quota_expected_max_quota(strategy: str,
                                                             rack_config: str) -> None:
    """AbstractStickyAssignorTest.testConsumerOwningMinQuotaExpectedMaxQuota"""
    t = _StickyTest(strategy, rack_config, {T1: 2, T2: 3})
    t.v2("consumer1", [T1, T2], [(T1, 0), (T2, 1)], 0)
    t.v2("consumer2", [T1, T2], [(T1, 1), (T2, 2)], 1)
    got = t.assign()
    assert got == {"consumer1": [(T1, 0), (T2, 1), (T2, 0)], "consumer2": [(T1, 1), (T2, 2)]}
    t.settle(got)


@pytest.mark.parametrize("strategy", STICKY)
@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_sticky_max_quota_consumer_more_than_num_expected_max_capacity_members(
        strategy: str, rack_config: str) -> None:
    """AbstractStickyAssignorTest.testMaxQuotaConsumerMoreThanNumExpectedMaxCapacityMembers
    (topic2-0 is transferred to consumer3: the cooperative assignor holds it back one
    rebalance)"""
    t = _StickyTest(strategy, rack_config, {T1: 2, T2: 2})
    t.v2("consumer1", [T1, T2], [(T1, 0), (T2, 0)], 0)
    t.v2("consumer2", [T1, T2], [(T1, 1), (T2, 1)], 1)
    t.v2("consumer3", [T1, T2], [], 2)
    got = t.assign()
    first = {"consumer1": [(T1, 0)], "consumer2": [(T1, 1), (T2, 1)], "consumer3": [(T2, 0)]}
    if strategy == "cooperative-sticky":
        assert got == {**first, "consumer3": []}
    else:
        assert got == first
    assert t.settle(got) == first


@pytest.mark.parametrize("strategy", STICKY)
@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_sticky_all_consumers_are_under_min_quota(strategy: str, rack_config: str) -> None:
    """AbstractStickyAssignorTest.testAllConsumersAreUnderMinQuota"""
    t = _StickyTest(strategy, rack_config, {T1: 2, T2: 3})
    t.v2("consumer1", [T1, T2], [(T1, 0)], 0)
    t.v2("consumer2", [T1, T2], [(T1, 1)], 1)
    t.v2("consumer3", [T1, T2], [], 2)
    got = t.settle(t.assign())
    assert got == {"consumer1": [(T1, 0), (T2, 1)], "consumer2": [(T1, 1), (T2, 2)],
                   "consumer3": [(T2, 0)]}


@pytest.mark.parametrize("strategy", STICKY)
@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_sticky_add_remove_consumer_one_topic(strategy: str, rack_config: str) -> None:
    """AbstractStickyAssignorTest.testAddRemoveConsumerOneTopic"""
    t = _StickyTest(strategy, rack_config, {"topic": 3})
    t.subscription("consumer1", ["topic"], 0)
    got = t.settle(t.assign())
    assert got == {"consumer1": [("topic", 0), ("topic", 1), ("topic", 2)]}
    t.v2("consumer1", ["topic"], got["consumer1"], 0)
    t.v2("consumer2", ["topic"], [], 1)
    got = t.assign()
    want = {"consumer1": [("topic", 0), ("topic", 1)], "consumer2": [("topic", 2)]}
    if strategy == "cooperative-sticky":
        assert got == {**want, "consumer2": []}         # topic-2 transferring to consumer2
    else:
        assert got == want
    got = t.settle(got)
    assert got == want
    t.remove("consumer1")
    t.v2("consumer2", ["topic"], got["consumer2"], 1)
    got = t.settle(t.assign())
    assert sorted(got["consumer2"]) == [("topic", 0), ("topic", 1), ("topic", 2)]


@pytest.mark.parametrize("strategy", STICKY)
@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
@pytest.mark.parametrize("count", [3, 4])
def test_sticky_owned_partition_invalidated_when_claimed_by_multiple_consumers(
        strategy: str, rack_config: str, count: int) -> None:
    """StickyAssignorTest / CooperativeStickyAssignorTest.
    testAllConsumersHaveOwnedPartitionInvalidatedWhenClaimedByMultipleConsumersInSameGeneration
    WithEqualPartitionsPerConsumer (3 partitions) and ...WithUnequalPartitionsPerConsumer (4)"""
    t = _StickyTest(strategy, rack_config, {"topic": count})
    t.v2("consumer1", ["topic"], [("topic", 0), ("topic", 1)], 0)
    t.v2("consumer2", ["topic"], [("topic", 0), ("topic", 2)], 1)
    t.v2("consumer3", ["topic"], [], 2)
    got = t.assign()
    c1 = [("topic", 1)] if count == 3 else [("topic", 1), ("topic", 3)]
    # the cooperative assignor cannot hand topic-0 over before both claimants revoked it
    c3 = [] if strategy == "cooperative-sticky" else [("topic", 0)]
    assert got == {"consumer1": c1, "consumer2": [("topic", 2)], "consumer3": c3}
    t.settle(got)


# ---------------------------------------------------------------------------------------------
# argument validation
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, message", [
    ({"consumer_racks": {"nobody": "a"}}, "not in the subscriptions"),
    ({"consumer_racks": {"c1": 3}}, "client.rack must be a string"),
    ({"consumer_racks": ["a"]}, "consumer_racks must map"),
    ({"partition_racks": {"t": [["a"]]}}, "has 2 partitions, but partition_racks lists 1"),
    ({"partition_racks": {"u": [["a"]]}}, "not in the partition counts"),
    ({"partition_racks": {"t": [["a"], [1]]}}, "rack names must be strings"),
    ({"partition_racks": {"t": [["a"], None]}}, "collection of rack names"),
    ({"partition_racks": {"t": ["ab", ["a"]]}}, "collection of rack names"),
    ({"partition_racks": {"t": "ab"}}, "one collection of racks per partition"),
])
def test_rack_arguments_validated(kwargs: dict, message: str) -> None:
    with pytest.raises(AssignmentError, match=message):
        assign("range", {"c1": ["t"], "c2": ["t"]}, {"t": 2}, **kwargs)


def test_empty_rack_is_no_rack() -> None:
    pr = {"t": [{"a"}, {"b"}, {"a"}, {"b"}]}
    with_empty = assign("sticky", {"c1": ["t"], "c2": ["t"]}, {"t": 4},
                        consumer_racks={"c1": "", "c2": "b"}, partition_racks=pr)
    with_none = assign("sticky", {"c1": ["t"], "c2": ["t"]}, {"t": 4},
                       consumer_racks={"c1": None, "c2": "b"}, partition_racks=pr)
    assert with_empty == with_none


# ---------------------------------------------------------------------------------------------
# against Kafka's Java classes
# ---------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def kafka_classes(tmp_path_factory: pytest.TempPathFactory):
    return kafka_java.build(tmp_path_factory.mktemp("kafka-assignors-rack"))


def _random_rack_case(rng: random.Random, strategy: str) -> tuple:
    """A random group (``test_assignors_java._random_case``) with racks: 2-4 racks, most members
    on one of them (some on none, a few on a rack without replicas), partitions with 1-3 replicas
    (sometimes on every rack, sometimes without racks), and for the sticky assignors owned
    partitions from a previous rack-aware assignment among a slightly different membership."""
    strategy, counts, subs, owned, gens, instances = _random_case(rng, strategy)
    pool = ALL_RACKS[:rng.randint(2, 4)]
    replica_racks_: dict[str, list[set[str]]] = {}
    everywhere = rng.random() < 0.15            # all partitions on all racks: racks not used
    for t, n in counts.items():
        if rng.random() < 0.1:
            continue                            # no rack information for this topic
        per = []
        for _ in range(n):
            if everywhere:
                per.append(set(pool))
            elif rng.random() < 0.05:
                per.append(set())
            else:
                per.append({rng.choice(pool) for _ in range(rng.randint(1, 3))})
        replica_racks_[t] = per
    consumer_racks: dict[str, str | None] = {}
    for m in subs:
        x = rng.random()
        consumer_racks[m] = (None if x < 0.2 else "z" if x < 0.25 else rng.choice(pool))
    prefer = rng.random() < 0.1
    if strategy in ("sticky", "cooperative-sticky") and owned and rng.random() < 0.5:
        # the previous generation was rack-aware too
        prev = assign(rng.choice(["range", "sticky"]), {m: subs[m] for m in owned}, counts,
                      consumer_racks={m: consumer_racks[m] for m in owned},
                      partition_racks=replica_racks_)
        owned = {m: list(tps) for m, tps in prev.items()}
    return (strategy, counts, subs, owned, gens, instances, consumer_racks, replica_racks_,
            prefer)


def _random_large_rack_case(rng: random.Random, strategy: str) -> tuple:
    """A larger group: up to 20 members, 6 topics of up to 30 partitions, 2-5 racks; for the
    sticky assignors owned partitions (with generations, a few stale) from a previous rack-aware
    assignment where some members left, joined, moved rack or changed subscription."""
    topics = [f"t{i}" for i in range(rng.randint(1, 6))]
    counts = {t: rng.randint(1, 30) for t in topics}
    members = [f"consumer-{i}" for i in range(rng.randint(2, 20))]
    homogeneous = rng.random() < 0.4
    subs = {m: list(topics) if homogeneous else rng.sample(topics, rng.randint(1, len(topics)))
            for m in members}
    pool = ALL_RACKS[:rng.randint(2, 5)]
    pr = {t: [{rng.choice(pool) for _ in range(rng.randint(1, 3))} for _ in range(n)]
          for t, n in counts.items()}
    cr = {m: (None if rng.random() < 0.15 else rng.choice(pool)) for m in members}
    owned: dict[str, list[TP]] = {}
    gens: dict[str, int | None] = {}
    if strategy != "range" and rng.random() < 0.8:
        prev = [m for m in members if rng.random() < 0.8] or members[:1]
        prev_subs = {m: subs[m] if rng.random() < 0.8 else rng.sample(topics, 1) for m in prev}
        prev_racks = {m: cr[m] if rng.random() < 0.8 else rng.choice(pool) for m in prev}
        owned = assign(rng.choice(["range", "roundrobin", "sticky"]), prev_subs, counts,
                       consumer_racks=prev_racks, partition_racks=pr)
        g = rng.randint(1, 5)
        for m in prev:
            gens[m] = g if rng.random() < 0.85 else g - 1
        for m in members:
            gens.setdefault(m, None if strategy == "cooperative-sticky" else -1)
        if strategy == "sticky":
            gens = {m: (None if v == -1 else v) for m, v in gens.items()}
    return strategy, counts, subs, owned, gens, {}, cr, pr, rng.random() < 0.1


def _ours_rack(case: tuple) -> dict:
    strategy, counts, subs, owned, gens, instances, consumer_racks, replica_racks_, prefer = case
    kwargs: dict[str, object] = {"consumer_racks": consumer_racks,
                                 "partition_racks": replica_racks_}
    if owned:
        kwargs["owned"] = owned
        kwargs["generations"] = gens
    if instances:
        kwargs["group_instance_ids"] = instances
    if not prefer:
        return assign(strategy, subs, counts, **kwargs)  # type: ignore[arg-type]
    return run(strategy, subs, counts, prefer=True, **kwargs)


@pytest.mark.parametrize("strategy", ["range", "sticky", "cooperative-sticky"])
def test_rack_aware_equal_to_kafka_java(kafka_classes, strategy: str) -> None:
    rng = random.Random(f"java-rack-{strategy}")
    cases = [_random_rack_case(rng, strategy) for _ in range(400)]
    cases += [_random_large_rack_case(rng, strategy) for _ in range(150)]
    expected = kafka_java.run(kafka_classes, cases)
    assert len(expected) == len(cases)
    mismatches = []
    for case, want in zip(cases, expected):
        got = _ours_rack(case)
        if isinstance(want, str):
            mismatches.append((case, "java error", want))
        elif got != want:
            mismatches.append((case, got, want))
    assert not mismatches, f"{len(mismatches)} of {len(cases)} differ; first: {mismatches[0]}"


def test_kafka_java_rack_cases_do_use_racks(kafka_classes) -> None:
    """The worked rack example of :func:`kafkalog.groups.assign`, and a group where racks change
    the assignment, as Kafka's classes compute them."""
    pr = {"t": [{"a"}, {"b"}, {"a"}, {"b"}]}
    cases = [("range", {"t": 4}, {"c1": ["t"], "c2": ["t"]}, {}, {}, {},
              {"c1": "a", "c2": "b"}, pr, False),
             ("sticky", {"t": 4}, {"c1": ["t"], "c2": ["t"]}, {}, {}, {},
              {"c1": "a", "c2": "b"}, pr, False)]
    for case, want in zip(cases, kafka_java.run(kafka_classes, cases)):
        assert _ours_rack(case) == want
        assert want == {"c1": [("t", 0), ("t", 2)], "c2": [("t", 1), ("t", 3)]}


# ---------------------------------------------------------------------------------------------
# without racks nothing changed
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("strategy", ["range", "roundrobin", "sticky", "cooperative-sticky"])
def test_without_racks_unchanged(strategy: str) -> None:
    """Racks absent, unused (no consumer rack, no replica rack, racks disjoint, every partition on
    every rack): the same assignment, list order included, as without the rack arguments."""
    rng = random.Random(f"no-rack-{strategy}")
    for _ in range(200):
        case = _random_case(rng, strategy)
        base = _ours(case)
        _, counts, subs, owned, gens, instances = case
        kwargs: dict[str, object] = {}
        if owned:
            kwargs["owned"] = owned
            kwargs["generations"] = gens
        if instances:
            kwargs["group_instance_ids"] = instances
        everywhere = {t: [{"a", "b"}] * n for t, n in counts.items()}
        one_rack = {t: [{"a"}] * n for t, n in counts.items()}
        variants = [
            {"consumer_racks": None, "partition_racks": None},
            {"consumer_racks": {m: None for m in subs}, "partition_racks": one_rack},
            {"consumer_racks": {m: "a" for m in subs}, "partition_racks": None},
            {"consumer_racks": {m: "c" for m in subs}, "partition_racks": one_rack},
            {"consumer_racks": {m: rng.choice("ab") for m in subs},
             "partition_racks": everywhere},
        ]
        for extra in variants:
            assert assign(strategy, subs, counts, **kwargs, **extra) == base, extra
