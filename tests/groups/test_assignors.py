"""Assignors: the issue's worked examples, scenarios ported from Kafka's own unit tests,
invariants (hypothesis) for every strategy, and kafka-python's assignors as a peer."""

from __future__ import annotations

import contextlib
import warnings
from collections import Counter
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkalog.groups import AssignmentError, assign
from kafkalog.groups.assignors import STRATEGIES


def tps(topic: str, *parts: int) -> list[tuple[str, int]]:
    return [(topic, p) for p in parts]


# ---------------------------------------------------------------------------------------------
# The worked examples
# ---------------------------------------------------------------------------------------------

def test_worked_example_three_consumers_six_partitions() -> None:
    subs = {"c1": ["t"], "c2": ["t"], "c3": ["t"]}
    ranged = assign("range", subs, {"t": 6})
    assert ranged == {"c1": tps("t", 0, 1), "c2": tps("t", 2, 3), "c3": tps("t", 4, 5)}
    after = {"c1": ["t"], "c2": ["t"]}
    assert assign("range", after, {"t": 6}) == {"c1": tps("t", 0, 1, 2), "c2": tps("t", 3, 4, 5)}
    assert assign("sticky", after, {"t": 6}, owned=ranged) == {
        "c1": tps("t", 0, 1, 4), "c2": tps("t", 2, 3, 5)}
    assert assign("roundrobin", subs, {"t": 6}) == {
        "c1": tps("t", 0, 3), "c2": tps("t", 1, 4), "c3": tps("t", 2, 5)}


def test_worked_example_two_topics() -> None:
    subs = {"C0": ["t0", "t1"], "C1": ["t0", "t1"]}
    counts = {"t0": 3, "t1": 3}
    assert assign("range", subs, counts) == {
        "C0": [("t0", 0), ("t0", 1), ("t1", 0), ("t1", 1)], "C1": [("t0", 2), ("t1", 2)]}
    assert assign("roundrobin", subs, counts) == {
        "C0": [("t0", 0), ("t0", 2), ("t1", 1)], "C1": [("t0", 1), ("t1", 0), ("t1", 2)]}


def test_worked_example_seven_partitions() -> None:
    got = assign("range", {"c1": ["t"], "c2": ["t"], "c3": ["t"]}, {"t": 7})
    assert [[p for _, p in v] for v in got.values()] == [[0, 1, 2], [3, 4], [5, 6]]


# ---------------------------------------------------------------------------------------------
# Kafka's RangeAssignorTest / RoundRobinAssignorTest (clients, 3.9)
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("strategy", ["range", "roundrobin", "sticky", "cooperative-sticky"])
def test_one_consumer_no_topic(strategy: str) -> None:
    assert assign(strategy, {"consumer": []}, {}) == {"consumer": []}


@pytest.mark.parametrize("strategy", ["range", "roundrobin"])
def test_only_assigns_partitions_from_subscribed_topics(strategy: str) -> None:
    got = assign(strategy, {"consumer": ["topic"]}, {"topic": 3, "other": 3})
    assert got == {"consumer": tps("topic", 0, 1, 2)}


def test_range_multiple_consumers_mixed_topics() -> None:
    # RangeAssignorTest.testMultipleConsumersMixedTopics
    got = assign("range", {"consumer1": ["topic1"], "consumer2": ["topic1", "topic2"],
                           "consumer3": ["topic1"]}, {"topic1": 3, "topic2": 2})
    assert got == {"consumer1": tps("topic1", 0), "consumer2": [("topic1", 1), ("topic2", 0),
                                                                 ("topic2", 1)],
                   "consumer3": tps("topic1", 2)}


def test_range_two_static_consumers_two_topics() -> None:
    # testTwoStaticConsumersTwoTopicsSixPartitions: instance ids decide the order
    subs = {"consumer1": ["topic1", "topic2"], "consumer2": ["topic1", "topic2"]}
    got = assign("range", subs, {"topic1": 3, "topic2": 3},
                 group_instance_ids={"consumer1": "instance1", "consumer2": "instance2"})
    assert got == {"consumer1": [("topic1", 0), ("topic1", 1), ("topic2", 0), ("topic2", 1)],
                   "consumer2": [("topic1", 2), ("topic2", 2)]}
    # testOneStaticConsumerAndOneDynamicConsumerTwoTopicsSixPartitions: static members first
    got = assign("range", subs, {"topic1": 3, "topic2": 3},
                 group_instance_ids={"consumer2": "instance2"})
    assert got["consumer2"] == [("topic1", 0), ("topic1", 1), ("topic2", 0), ("topic2", 1)]


def test_range_static_assignment_persists_after_member_id_changes() -> None:
    # testStaticMemberRangeAssignmentPersistentAfterMemberIdChanges
    counts = {"topic1": 5, "topic2": 5}
    before = assign("range", {"consumer-b": ["topic1", "topic2"], "consumer-a": ["topic1",
                                                                                  "topic2"]},
                    counts, group_instance_ids={"consumer-b": "i1", "consumer-a": "i2"})
    after = assign("range", {"new-z": ["topic1", "topic2"], "new-a": ["topic1", "topic2"]},
                   counts, group_instance_ids={"new-z": "i1", "new-a": "i2"})
    assert before["consumer-b"] == after["new-z"] and before["consumer-a"] == after["new-a"]


def test_roundrobin_multiple_consumers_mixed_topics() -> None:
    # RoundRobinAssignorTest.testMultipleConsumersMixedTopics
    got = assign("roundrobin", {"consumer1": ["topic1"], "consumer2": ["topic1", "topic2"],
                                "consumer3": ["topic1"]}, {"topic1": 3, "topic2": 2})
    assert got == {"consumer1": tps("topic1", 0), "consumer2": [("topic1", 1), ("topic2", 0),
                                                                 ("topic2", 1)],
                   "consumer3": tps("topic1", 2)}


def test_roundrobin_static_assignment_persistent() -> None:
    # testStaticMemberRoundRobinAssignmentPersistent: a new dynamic member sorts after statics
    subs = {f"consumer-{i}": ["topic"] for i in range(3)}
    inst = {f"consumer-{i}": f"instance-{i}" for i in range(3)}
    base = assign("roundrobin", subs, {"topic": 6}, group_instance_ids=inst)
    subs["consumer-x"] = ["topic"]
    grown = assign("roundrobin", subs, {"topic": 6}, group_instance_ids=inst)
    assert base["consumer-0"] == [("topic", 0), ("topic", 3)]
    assert grown["consumer-x"] == [("topic", 3)]


# ---------------------------------------------------------------------------------------------
# Kafka's AbstractStickyAssignorTest / StickyAssignorTest / CooperativeStickyAssignorTest
# ---------------------------------------------------------------------------------------------

T1, T2 = "topic1", "topic2"


def test_sticky_consumer_owning_min_quota_expected_max_quota() -> None:
    subs = {"consumer1": [T1, T2], "consumer2": [T1, T2]}
    owned = {"consumer1": [(T1, 0), (T2, 1)], "consumer2": [(T1, 1), (T2, 2)]}
    got = assign("sticky", subs, {T1: 2, T2: 3}, owned=owned, generations={"consumer1": 1,
                                                                           "consumer2": 1})
    assert got == {"consumer1": [(T1, 0), (T2, 1), (T2, 0)], "consumer2": [(T1, 1), (T2, 2)]}


def test_sticky_max_quota_consumer_more_than_expected_max_capacity_members() -> None:
    subs = {"consumer1": [T1, T2], "consumer2": [T1, T2], "consumer3": [T1, T2]}
    owned = {"consumer1": [(T1, 0), (T2, 0)], "consumer2": [(T1, 1), (T2, 1)]}
    gens = dict.fromkeys(subs, 1)
    got = assign("sticky", subs, {T1: 2, T2: 2}, owned=owned, generations=gens)
    assert got == {"consumer1": [(T1, 0)], "consumer2": [(T1, 1), (T2, 1)],
                   "consumer3": [(T2, 0)]}
    # cooperative: t2-0 must be revoked by consumer1 before consumer3 gets it
    coop = assign("cooperative-sticky", subs, {T1: 2, T2: 2}, owned=owned, generations=gens)
    assert coop == {"consumer1": [(T1, 0)], "consumer2": [(T1, 1), (T2, 1)], "consumer3": []}


def test_sticky_all_consumers_are_under_min_quota() -> None:
    subs = {"consumer1": [T1, T2], "consumer2": [T1, T2], "consumer3": [T1, T2]}
    got = assign("sticky", subs, {T1: 2, T2: 3},
                 owned={"consumer1": [(T1, 0)], "consumer2": [(T1, 1)]},
                 generations=dict.fromkeys(subs, 1))
    assert got == {"consumer1": [(T1, 0), (T2, 1)], "consumer2": [(T1, 1), (T2, 2)],
                   "consumer3": [(T2, 0)]}


def test_sticky_all_consumers_reach_expected_quota() -> None:
    subs = dict.fromkeys(["consumer1", "consumer2", "consumer3"], ["topic"])
    got = assign("sticky", subs, {"topic": 4},
                 owned={"consumer1": tps("topic", 0, 1), "consumer2": tps("topic", 2)},
                 generations=dict.fromkeys(subs, 1))
    assert got == {"consumer1": tps("topic", 0, 1), "consumer2": tps("topic", 2),
                   "consumer3": tps("topic", 3)}


def test_sticky_multiple_consumers_mixed_topic_subscriptions() -> None:
    got = assign("sticky", {"consumer1": [T1], "consumer2": [T1, T2], "consumer3": [T1]},
                 {T1: 3, T2: 2})
    assert got == {"consumer1": [(T1, 0), (T1, 2)], "consumer2": [(T2, 0), (T2, 1)],
                   "consumer3": [(T1, 1)]}


def test_sticky_add_remove_consumer_one_topic() -> None:
    first = assign("sticky", {"consumer1": ["topic"]}, {"topic": 3})
    assert first == {"consumer1": tps("topic", 0, 1, 2)}
    second = assign("sticky", {"consumer1": ["topic"], "consumer2": ["topic"]}, {"topic": 3},
                    owned=first, generations={"consumer1": 1, "consumer2": 1})
    assert second == {"consumer1": tps("topic", 0, 1), "consumer2": tps("topic", 2)}
    third = assign("sticky", {"consumer2": ["topic"]}, {"topic": 3},
                   owned={"consumer2": second["consumer2"]}, generations={"consumer2": 1})
    assert sorted(third["consumer2"]) == tps("topic", 0, 1, 2)


def test_sticky_stale_generation_claims_are_invalidated() -> None:
    # testOwnedPartitionsAreInvalidatedForConsumerWithStaleGeneration
    subs = {"consumer1": ["topic", T2], "consumer2": ["topic", T2]}
    claim = [("topic", 0), ("topic", 2), (T2, 1)]
    got = assign("sticky", subs, {"topic": 3, T2: 3},
                 owned={"consumer1": claim, "consumer2": claim},
                 generations={"consumer1": 10, "consumer2": 9})
    assert set(got["consumer1"]) == set(claim)
    assert set(got["consumer2"]) == {("topic", 1), (T2, 0), (T2, 2)}


def test_sticky_partitions_go_to_highest_generation() -> None:
    # testEnsurePartitionsAssignedToHighestGeneration
    topics = ["topic", T2, "topic3"]
    subs = dict.fromkeys(["consumer1", "consumer2", "consumer3"], topics)
    owned = {"consumer1": [("topic", 0), (T2, 0), ("topic3", 0)],
             "consumer2": [("topic", 1), (T2, 1), ("topic3", 1)],
             "consumer3": [(T2, 1), ("topic3", 0), ("topic3", 2)]}
    got = assign("sticky", subs, dict.fromkeys(topics, 3), owned=owned,
                 generations={"consumer1": 10, "consumer2": 9, "consumer3": 8})
    assert set(got["consumer1"]) == set(owned["consumer1"])
    assert set(got["consumer2"]) == set(owned["consumer2"])
    assert set(got["consumer3"]) == {("topic", 2), (T2, 2), ("topic3", 2)}


def test_sticky_same_partition_claimed_in_three_generations() -> None:
    # testSubscriptionNotEqualAndAssignSamePartitionWith3Generation
    for g1, g2, g3 in [(1, 2, 3), (1, 3, 2), (2, 1, 3), (2, 3, 1), (3, 1, 2), (3, 2, 1)]:
        got = assign("sticky", {"consumer1": ["topic"], "consumer2": ["topic"],
                                "consumer3": ["topic"], "consumer4": [T1]},
                     {"topic": 6, T1: 1},
                     owned={"consumer1": tps("topic", 0, 2), "consumer2": tps("topic", 1, 2, 3),
                            "consumer3": tps("topic", 2, 4, 5), "consumer4": [(T1, 0)]},
                     generations={"consumer1": g1, "consumer2": g2, "consumer3": g3,
                                  "consumer4": 2})
        flat = [tp for v in got.values() for tp in v]
        assert len(flat) == len(set(flat)) == 7
        assert all(1 <= len(v) <= 2 for v in got.values())


def test_cooperative_same_generation_double_claim_is_revoked_first() -> None:
    # testAllConsumersHaveOwnedPartitionInvalidatedWhenClaimedByMultipleConsumersInSameGeneration
    subs = dict.fromkeys(["consumer1", "consumer2", "consumer3"], ["topic"])
    owned = {"consumer1": tps("topic", 0, 1), "consumer2": tps("topic", 0, 2),
             "consumer3": []}
    gens = dict.fromkeys(subs, 1)
    assert assign("sticky", subs, {"topic": 3}, owned=owned, generations=gens) == {
        "consumer1": tps("topic", 1), "consumer2": tps("topic", 2), "consumer3": tps("topic", 0)}
    assert assign("cooperative-sticky", subs, {"topic": 3}, owned=owned, generations=gens) == {
        "consumer1": tps("topic", 1), "consumer2": tps("topic", 2), "consumer3": []}


# ---------------------------------------------------------------------------------------------
# KIP-848 server assignors (group-coordinator RangeAssignorTest, Uniform*AssignmentBuilderTest)
# ---------------------------------------------------------------------------------------------

def test_server_range_co_partitioned() -> None:
    got = assign("server-range", {"A": ["t1", "t3"], "B": ["t1", "t3"], "C": ["t1", "t3"]},
                 {"t1": 3, "t3": 3})
    assert got == {"A": [("t1", 0), ("t3", 0)], "B": [("t1", 1), ("t3", 1)],
                   "C": [("t1", 2), ("t3", 2)]}


def test_server_range_more_members_than_partitions() -> None:
    got = assign("server-range", {"A": ["t1"], "B": ["t1"], "C": ["t1"]}, {"t1": 2})
    assert got == {"A": [("t1", 0)], "B": [("t1", 1)], "C": []}


def test_server_range_heterogeneous() -> None:
    got = assign("server-range", {"A": ["t1", "t2"], "B": ["t1"], "C": ["t2"]},
                 {"t1": 3, "t2": 4})
    assert got == {"A": [("t1", 0), ("t1", 1), ("t2", 0), ("t2", 1)], "B": [("t1", 2)],
                   "C": [("t2", 2), ("t2", 3)]}


def test_uniform_keeps_owned_partitions_within_quota() -> None:
    # UniformHomogeneous: a member over its quota gives up the excess, others keep theirs
    subs = dict.fromkeys(["A", "B", "C"], ["t1"])
    got = assign("uniform", subs, {"t1": 6},
                 owned={"A": tps("t1", 0, 1, 2, 3), "B": tps("t1", 4)})
    assert len(got["A"]) == 2 and set(got["A"]) <= set(tps("t1", 0, 1, 2, 3))
    assert ("t1", 4) in got["B"] and len(got["B"]) == 2 and len(got["C"]) == 2


def test_uniform_heterogeneous_balances_shared_topics() -> None:
    got = assign("uniform", {"A": ["t1"], "B": ["t1", "t2"], "C": ["t2"]}, {"t1": 3, "t2": 3})
    sizes = sorted(len(v) for v in got.values())
    assert sizes == [2, 2, 2]
    assert all(t == "t1" for t, _ in got["A"]) and all(t == "t2" for t, _ in got["C"])


# ---------------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------------

def test_unknown_strategy() -> None:
    with pytest.raises(AssignmentError, match="unknown assignment strategy 'fancy'"):
        assign("fancy", {"a": ["t"]}, {"t": 1})


def test_member_subscribed_to_missing_topic() -> None:
    with pytest.raises(AssignmentError, match="subscribed to topic 'nope'"):
        assign("range", {"a": ["t", "nope"]}, {"t": 1})


@pytest.mark.parametrize("count", [-1, 1.5, "3", True])
def test_bad_partition_counts(count: object) -> None:
    with pytest.raises(AssignmentError, match="partition count of topic 't'"):
        assign("roundrobin", {"a": ["t"]}, {"t": count})  # type: ignore[dict-item]


def test_owned_partition_out_of_range() -> None:
    with pytest.raises(AssignmentError, match="owns t-5"):
        assign("sticky", {"a": ["t"]}, {"t": 2}, owned={"a": [("t", 5)]})


def test_assignment_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        assign("range", {"a": "t"}, {"t": 1})  # type: ignore[dict-item]


# ---------------------------------------------------------------------------------------------
# invariants (hypothesis)
# ---------------------------------------------------------------------------------------------

@st.composite
def groups(draw: st.DrawFn, homogeneous: bool | None = None) -> tuple:
    topics = draw(st.lists(st.sampled_from(["a", "b", "c", "orders", "t0", "zz"]), min_size=1,
                           max_size=4, unique=True))
    counts = {t: draw(st.integers(0, 12)) for t in topics}
    members = draw(st.lists(st.text("abcxyz-0123", min_size=1, max_size=6), min_size=1,
                            max_size=8, unique=True))
    same = draw(st.booleans()) if homogeneous is None else homogeneous
    subs = {m: (list(topics) if same else draw(st.lists(st.sampled_from(topics), min_size=1,
                                                        unique=True)))
            for m in members}
    return subs, counts


def _check_valid(subs: dict, counts: dict, got: dict, *, complete: bool = True) -> None:
    assert list(got) == list(subs)
    flat = [tp for v in got.values() for tp in v]
    assert len(flat) == len(set(flat)), "a partition assigned twice"
    for m, parts in got.items():
        assert all(t in subs[m] and 0 <= p < counts[t] for t, p in parts), m
    if complete:
        wanted = {(t, p) for m in subs for t in subs[m] for p in range(counts[t])}
        assert set(flat) == wanted


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(groups(), st.sampled_from(sorted(set(STRATEGIES) - {"simple"})))
def test_every_subscribed_partition_assigned_exactly_once(group: tuple, strategy: str) -> None:
    # (not the share groups' "simple": members share a partition when they outnumber them;
    # tests/groups/test_share_simple_assignor.py checks its own rules)
    subs, counts = group
    _check_valid(subs, counts, assign(strategy, subs, counts))


@settings(max_examples=150, deadline=None)
@given(groups(homogeneous=True), st.sampled_from(["roundrobin", "sticky",
                                                   "cooperative-sticky", "uniform"]))
def test_balanced_within_one_for_identical_subscriptions(group: tuple, strategy: str) -> None:
    subs, counts = group
    sizes = [len(v) for v in assign(strategy, subs, counts).values()]
    assert max(sizes) - min(sizes) <= 1


@settings(max_examples=150, deadline=None)
@given(groups(), st.sampled_from(["range", "server-range"]))
def test_range_balanced_within_one_per_topic(group: tuple, strategy: str) -> None:
    subs, counts = group
    got = assign(strategy, subs, counts)
    for t in counts:
        per = [sum(1 for tt, _ in got[m] if tt == t) for m in subs if t in subs[m]]
        if per:
            assert max(per) - min(per) <= 1


def _random_owned(draw: st.DrawFn, subs: dict, counts: dict) -> dict:
    """A previous assignment without double claims: each partition to at most one member."""
    owned: dict[str, list] = {m: [] for m in subs}
    for t, n in counts.items():
        for p in range(n):
            m = draw(st.sampled_from([None, *subs]))
            if m is not None:
                owned[m].append((t, p))
    return owned


@settings(max_examples=150, deadline=None)
@given(st.data(), groups(homogeneous=True))
def test_sticky_keeps_every_owner_balance_allows(data: st.DataObject, group: tuple) -> None:
    subs, counts = group
    owned = _random_owned(data.draw, subs, counts)
    got = assign("sticky", subs, counts, owned=owned)
    _check_valid(subs, counts, got)
    total = sum(counts[t] for t in next(iter(subs.values())))
    lo, extra = divmod(total, len(subs))
    kept = sum(len(set(got[m]) & set(owned[m])) for m in subs)
    # the most any assignment can keep: every member keeps up to its quota, ``extra`` members
    # (those owning the most) may keep lo + 1
    most = sum(min(len(owned[m]), lo) for m in subs) + min(
        extra, sum(1 for m in subs if len(owned[m]) > lo))
    assert kept == most


@settings(max_examples=150, deadline=None)
@given(st.data(), groups())
def test_cooperative_never_hands_over_an_unrevoked_partition(data: st.DataObject,
                                                             group: tuple) -> None:
    subs, counts = group
    owned = _random_owned(data.draw, subs, counts)
    got = assign("cooperative-sticky", subs, counts, owned=owned)
    _check_valid(subs, counts, got, complete=False)
    for _ in range(10):
        owner = {tp: m for m, parts in owned.items() for tp in parts}
        for m, parts in got.items():
            for tp in parts:
                assert owner.get(tp, m) == m, f"{tp} given to {m} while {owner[tp]} owns it"
        # exactly the eager result minus what another member must revoke first
        eager = assign("sticky", subs, counts, owned=owned)
        for m in subs:
            held_by_others = {tp for tp in eager[m] if owner.get(tp, m) != m}
            assert set(got[m]) == set(eager[m]) - held_by_others
        if got == owned:
            break
        # the next rebalance: members own what they were given (revoked partitions are free)
        owned = got
        got = assign("cooperative-sticky", subs, counts, owned=owned)
    _check_valid(subs, counts, got)     # follow-up rebalances complete the assignment


# ---------------------------------------------------------------------------------------------
# kafka-python's assignors (a peer we did not write)
# ---------------------------------------------------------------------------------------------

@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """kafka-python loads its protocol schemas with a deprecated importlib API."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        yield


class _Cluster:
    def __init__(self, counts: dict) -> None:
        self._counts = counts

    def topics(self) -> set:
        return set(self._counts)

    def partitions_for_topic(self, topic: str) -> set | None:
        n = self._counts.get(topic)
        return set(range(n)) if n else None


class _Member:
    def __init__(self, member_id: str, topics: list, instance: str | None = None) -> None:
        with _quiet():
            from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

        self.member_id = member_id
        self.group_instance_id = instance
        self.metadata = ConsumerProtocolSubscription(version=0, topics=topics, user_data=b"")


def _kafka_python(strategy: str, subs: dict, counts: dict, instances: dict | None = None
                  ) -> dict:
    with _quiet():
        from kafka.coordinator.assignors.range import RangePartitionAssignor
        from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

    cls = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor}[strategy]
    with _quiet():
        members = [_Member(m, t, (instances or {}).get(m)) for m, t in subs.items()]
        out = cls.assign(_Cluster(counts), members)
    return {m: sorted((t, p) for t, parts in a.assigned_partitions for p in parts)
            for m, a in out.items()}


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["range", "roundrobin"]), st.data())
def test_range_and_roundrobin_equal_kafka_python(strategy: str, data: st.DataObject) -> None:
    """Within what kafka-python 3.0.12 gets right: its round robin crashes when a member does
    not subscribe to a topic (``member_topics[member_id]`` with a tuple), and both assignors
    lose static members when static and dynamic ones alternate (``itertools.groupby`` on an
    unsorted list); those cases are checked against Kafka's Java classes instead
    (test_assignors_java.py)."""
    subs, counts = data.draw(groups(homogeneous=True if strategy == "roundrobin" else None))
    counts = {t: n for t, n in counts.items() if n > 0} or {next(iter(counts)): 1}
    subs = {m: [t for t in ts if t in counts] or list(counts) for m, ts in subs.items()}
    if strategy == "roundrobin":
        subs = {m: list(counts) for m in subs}
    instances = {m: f"i-{m}" for m in subs} if data.draw(st.booleans()) else {}
    ours = assign(strategy, subs, counts, group_instance_ids=instances)
    assert {m: sorted(v) for m, v in ours.items()} == _kafka_python(strategy, subs, counts,
                                                                    instances)


def _kafka_python_sticky(subs: dict, counts: dict, owned: dict, generation: int) -> dict:
    with _quiet():
        from kafka.coordinator.assignors.sticky.sticky_assignor import (
            StickyAssignmentExecutor,
            StickyAssignorMemberMetadataV1,
        )
        from kafka.structs import TopicPartition

    members = {m: StickyAssignorMemberMetadataV1(
        partitions=[TopicPartition(t, p) for t, p in owned.get(m, [])],
        generation=generation, subscription=list(ts)) for m, ts in subs.items()}
    with _quiet():
        ex = StickyAssignmentExecutor(_Cluster(counts), members)
        ex.perform_initial_assignment()
        ex.balance()
    return {m: sorted((t, p) for t, ps in ex.get_final_assignment(m) for p in ps) for m in subs}


@settings(max_examples=150, deadline=None)
@given(st.data(), groups(homogeneous=True))
def test_sticky_as_balanced_and_sticky_as_kafka_python(data: st.DataObject, group: tuple) -> None:
    """kafka-python's sticky assignor is a port of Kafka's older (general) algorithm: its
    tie-breaks differ from 3.9's, so compare what both promise: balance and partitions kept."""
    subs, counts = group
    counts = {t: n for t, n in counts.items() if n > 0} or {next(iter(counts)): 1}
    subs = {m: [t for t in ts if t in counts] for m, ts in subs.items()}
    owned = _random_owned(data.draw, subs, counts)
    ours = assign("sticky", subs, counts, owned=owned, generations=dict.fromkeys(subs, 1))
    theirs = _kafka_python_sticky(subs, counts, owned, 1)
    for got in (ours, theirs):
        _check_valid(subs, counts, {m: list(v) for m, v in got.items()})
    spread = [max(map(len, g.values())) - min(map(len, g.values())) for g in (ours, theirs)]
    assert spread[0] <= spread[1] <= 1
    kept = [sum(len(set(g[m]) & set(owned[m])) for m in subs) for g in (ours, theirs)]
    assert kept[0] >= kept[1]


def test_every_member_present_even_without_partitions() -> None:
    got = assign("uniform", {"a": ["t"], "b": ["t"], "c": ["t"]}, {"t": 1})
    assert Counter(len(v) for v in got.values()) == Counter({0: 2, 1: 1})


# -- range's orders: the shortcuts against the direct computation ----------------------------

def _member_order_by_key(inp, members):
    """``MemberInfo.compareTo`` as a sort key (static members first by instance id)."""
    from kafkalog.groups.java_order import java_string_key

    def key(m):
        i = inp.instance_ids.get(m)
        return (0, java_string_key(i)) if i is not None else (1, java_string_key(m))

    return sorted(members, key=key)


def _topic_map_order_direct(inp):
    """``partitionsPerTopic`` filled from ``allSubscribedTopics`` filled member by member in
    the subscriptions' HashMap order, every map built."""
    from kafkalog.groups.java_order import JavaHashMap, string_hash

    members = JavaHashMap.ordered(inp.members, string_hash)
    topics = JavaHashMap.ordered(dict.fromkeys(t for m in members for t in inp.topics[m]),
                                 string_hash)
    return JavaHashMap.ordered([t for t in topics if t in inp.partitions], string_hash)


# names from a small alphabet (many share a bucket once there are a few dozen), with characters
# where Java's and Python's string orders differ (U+E000 and above, surrogate pairs)
_NAMES = st.text(alphabet="ab\ue000\U0001f600", min_size=1, max_size=4)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(members=st.lists(_NAMES, min_size=1, max_size=12, unique=True),
       topics=st.lists(_NAMES, min_size=1, max_size=40, unique=True),
       data=st.data())
def test_range_orders_equal_the_direct_computation(members, topics, data):
    from kafkalog.groups.assignors.model import AssignmentInput
    from kafkalog.groups.assignors.range import member_order, topic_map_order

    subs = {m: data.draw(st.lists(st.sampled_from(topics), min_size=1, unique=True))
            for m in members}
    counts = {t: data.draw(st.integers(1, 3)) for t in topics}
    static = {m: data.draw(st.one_of(st.none(), st.sampled_from(["i", "j", "\ue000"])))
              for m in members}
    inp = AssignmentInput.build(subs, counts, group_instance_ids=static)
    assert member_order(inp, list(subs)) == _member_order_by_key(inp, list(subs))
    assert topic_map_order(inp) == _topic_map_order_direct(inp)
