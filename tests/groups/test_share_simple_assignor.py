"""KIP-932's share-group ``simple`` assignor: Kafka's SimpleAssignorTest (trunk after 4.1,
group-coordinator/src/test/java/org/apache/kafka/coordinator/group/assignor/
SimpleAssignorTest.java), worked examples traced by hand through Kafka's builders, and
invariants checked with hypothesis, always through the public :func:`kafkalog.groups.assign`.

Kafka's test gives its topics ``Uuid.randomUuid()`` ids, so it can only pin results that do not
depend on topic hashing; its members "A", "B", "C" hash to 65, 66, 67 and iterate in that order
in a ``HashMap``, as they do here.
"""

from __future__ import annotations

import math
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkalog.groups import AssignmentError, assign
from kafkalog.groups.assignors import SERVER_STRATEGIES, STRATEGIES
from kafkalog.groups.assignors.share_simple import assign_share_simple, desired_assignment_counts

Assignment = dict[str, list[tuple[str, int]]]


def tps(topic: str, *parts: int) -> list[tuple[str, int]]:
    return [(topic, p) for p in parts]


def holders(got: Assignment) -> Counter:
    """How many members hold each partition."""
    return Counter(tp for parts in got.values() for tp in parts)


def assigned_partitions(got: Assignment) -> set[tuple[str, int]]:
    return set(holders(got))


# ---------------------------------------------------------------------------------------------
# Kafka's SimpleAssignorTest
# ---------------------------------------------------------------------------------------------

def test_name() -> None:
    assert SERVER_STRATEGIES["simple"] is assign_share_simple
    assert STRATEGIES["simple"] is assign_share_simple


def test_assign_with_empty_members() -> None:
    # Homogeneous and heterogeneous are the same call here: no members, no subscriptions.
    assert assign("simple", {}, {}) == {}
    assert assign("simple", {}, {"topic1": 3}) == {}


def test_assign_with_no_subscribed_topic() -> None:
    # Kafka returns an empty GroupAssignment; the coordinator then gives the member nothing.
    assert assign("simple", {"A": []}, {"topic1": 3}) == {"A": []}


def test_assign_with_subscribed_to_non_existent_topic() -> None:
    with pytest.raises(AssignmentError):
        assign("simple", {"A": ["topic2"]}, {"topic1": 3})


def test_assign_with_two_members_and_two_topics_homogeneous() -> None:
    got = assign("simple", {"A": ["topic1", "topic3"], "B": ["topic1", "topic3"]},
                 {"topic1": 3, "topic3": 2})
    assert len(assigned_partitions(got)) == 5
    # Not in Kafka's test (random topic ids), but id-independent: 5 slots split 3/2, no sharing.
    assert sorted(len(v) for v in got.values()) == [2, 3]
    assert max(holders(got).values()) == 1


def test_assign_with_two_members_and_two_topics_homogeneous_with_non_assignable_topic() -> None:
    # Kafka excludes topic3's partitions through GroupSpec.isPartitionAssignable; a topic with
    # no partitions is the nearest this model has.
    got = assign("simple", {"A": ["topic1", "topic3"], "B": ["topic1", "topic3"]},
                 {"topic1": 3, "topic3": 0})
    assert assigned_partitions(got) == set(tps("topic1", 0, 1, 2))


def test_assign_with_three_members_three_topics_heterogeneous() -> None:
    got = assign("simple", {"A": ["topic1", "topic2"], "B": ["topic3"], "C": ["topic2", "topic3"]},
                 {"topic1": 3, "topic2": 3, "topic3": 2})
    assert len(assigned_partitions(got)) == 8


def test_assign_with_three_members_three_topics_heterogeneous_with_non_assignable_topic() -> None:
    # topic3 (B's only topic) has no assignable partition. topic2: subscribers A, C (indices 0
    # and 2), 3 partitions, desired counts [2, 1]: partition 0 -> A, 1 -> C (now full), and the
    # iterator starts again for partition 2 -> A.
    got = assign("simple", {"A": ["topic1", "topic2"], "B": ["topic3"], "C": ["topic2", "topic3"]},
                 {"topic1": 3, "topic2": 3, "topic3": 0})
    assert got == {"A": tps("topic1", 0, 1, 2) + tps("topic2", 0, 2),
                   "B": [],
                   "C": tps("topic2", 1)}
    assert len(assigned_partitions(got)) == 6


def test_assign_with_one_member_no_assigned_topic_heterogeneous() -> None:
    got = assign("simple", {"A": ["topic1", "topic2"], "B": []}, {"topic1": 3, "topic2": 2})
    assert got == {"A": tps("topic1", 0, 1, 2) + tps("topic2", 0, 1), "B": []}


def _assert_every_partition_assigned(got: Assignment, subs: dict, counts: dict) -> None:
    wanted = {(t, p) for m in subs for t in subs[m] for p in range(counts[t])}
    assert assigned_partitions(got) == wanted


HETEROGENEOUS_SUBSCRIPTIONS = [["topic1", "topic2", "topic3"], ["topic2"], ["topic3"],
                               ["topic1", "topic2"]]


@pytest.mark.parametrize("homogeneous", [True, False], ids=["homogeneous", "heterogeneous"])
def test_incremental_assignment_increasing_members(homogeneous: bool) -> None:
    num_partitions, num_members = 24, 101
    if homogeneous:
        counts = {"topic1": num_partitions}
    else:
        counts = {"topic1": num_partitions // 2, "topic2": num_partitions // 3,
                  "topic3": num_partitions // 6}
    subs: dict[str, list[str]] = {}
    owned: Assignment = {}
    for member in range(num_members):
        subs[f"M{member}"] = (["topic1"] if homogeneous
                              else HETEROGENEOUS_SUBSCRIPTIONS[member % 4])
        got = assign("simple", subs, counts, owned=owned)
        _assert_every_partition_assigned(got, subs, counts)
        owned = got


@pytest.mark.parametrize("homogeneous", [True, False], ids=["homogeneous", "heterogeneous"])
def test_incremental_assignment_decreasing_members(homogeneous: bool) -> None:
    num_partitions, num_members = 24, 101
    if homogeneous:
        counts = {"topic1": num_partitions}
    else:
        counts = {"topic1": num_partitions // 2, "topic2": num_partitions // 3,
                  "topic3": num_partitions // 6}
    subs = {f"M{m}": (["topic1"] if homogeneous else HETEROGENEOUS_SUBSCRIPTIONS[m % 4])
            for m in range(num_members)}
    owned = assign("simple", subs, counts)
    _assert_every_partition_assigned(owned, subs, counts)
    for member in range(num_members - 1, 0, -1):
        del subs[f"M{member}"]
        got = assign("simple", subs, counts, owned=owned)
        _assert_every_partition_assigned(got, subs, counts)
        owned = got


def test_assign_with_current_assignment_heterogeneous() -> None:
    counts = {"topic1": 3, "topic2": 3, "topic3": 2}
    first = assign("simple", {"A": ["topic1", "topic2"], "B": ["topic3"],
                              "C": ["topic2", "topic3"]}, counts)
    assert len(assigned_partitions(first)) == 8
    # New setup: A - {T1, T2, T3}, B - {T3, T4}; C left.
    subs = {"A": ["topic1", "topic2", "topic3"], "B": ["topic3", "topic4"]}
    got = assign("simple", subs, {**counts, "topic4": 1},
                 owned={"A": tps("topic1", 0, 1, 2) + tps("topic2", 0, 2),
                        "B": tps("topic3", 0, 1)})
    assert len(assigned_partitions(got)) == 9
    # Traced by hand (not in Kafka's test): A keeps topic1 and topic2 (sole subscriber) and
    # gains topic2-1; topic3 is split 1/1 (desired [1, 1]), B giving up the first partition of
    # its HashSet<Integer> {0, 1}, topic3-0, which A takes; B alone takes topic4.
    assert got == {"A": tps("topic1", 0, 1, 2) + tps("topic2", 0, 1, 2) + tps("topic3", 0),
                   "B": tps("topic3", 1) + tps("topic4", 0)}


# ---------------------------------------------------------------------------------------------
# Worked examples (Java iteration order)
# ---------------------------------------------------------------------------------------------

def test_round_robin_fill_in_member_order() -> None:
    # "a" and "b" (hashes 97, 98) are members 0 and 1 with desired counts [2, 1]; the partitions
    # t-0..2 (TopicIdPartition hashes 31 * 116 + p) fill buckets 4..6 of an 8-bucket map, so
    # they are visited in order: t-0 -> a, t-1 -> b (full), t-2 -> a.
    got = assign("simple", {"a": ["t"], "b": ["t"]}, {"t": 3})
    assert got == {"a": tps("t", 0, 2), "b": tps("t", 1)}


def test_more_members_than_partitions_share() -> None:
    # 3 members, 2 partitions: every partition wanted by ceil(3 / 2) = 2 members; the 4 slots
    # split [2, 1, 1] (x = 4 / 3). t-0 -> a, b; t-1 -> c, then a again.
    got = assign("simple", {"a": ["t"], "b": ["t"], "c": ["t"]}, {"t": 2})
    assert got == {"a": tps("t", 0, 1), "b": tps("t", 0), "c": tps("t", 1)}
    assert holders(got) == {("t", 0): 2, ("t", 1): 2}


def test_overfilled_member_gives_up_in_hash_set_order() -> None:
    # desired [2, 1]: "a" holds 3 and gives up the first of its HashSet<TopicIdPartition>
    # (hashes 3596..3598, buckets 12..14 of 16: t-0 first), which "b" then takes.
    got = assign("simple", {"a": ["t"], "b": ["t"]}, {"t": 3}, owned={"a": tps("t", 0, 1, 2)})
    assert got == {"a": tps("t", 1, 2), "b": tps("t", 0)}


def test_overfilled_member_hash_order_across_topics() -> None:
    # 22 partitions, desired [8, 7, 7]: A gives up 9 of its 17 in HashSet order (not numeric
    # order), B keeps zz and tops up from what A released. Cross-checked against a
    # transcription of SimpleHomogeneousAssignmentBuilder on java.util collections (JDK 17).
    got = assign("simple", {"A": ["orders", "zz"], "B": ["orders", "zz"], "C": ["orders", "zz"]},
                 {"orders": 17, "zz": 5},
                 owned={"A": tps("orders", *range(17)), "B": tps("zz", *range(5))})
    assert got == {"A": tps("orders", 0, 1, 2, 3, 4, 6, 7, 8),
                   "B": tps("orders", 13, 15) + tps("zz", 0, 1, 2, 3, 4),
                   "C": tps("orders", 5, 9, 10, 11, 12, 14, 16)}


def test_overshared_partition_heterogeneous_twenty_members() -> None:
    # Everybody holds t-0; topic t wants 7 members per partition. Members beyond 16 sit in
    # later buckets of the partition's HashSet<Integer>. Cross-checked like the test above.
    subs = {f"m{i}": (["t", "u"] if i < 10 else ["t"]) for i in range(20)}
    owned = {f"m{i}": [("t", 0)] + ([("u", i % 4)] if i < 10 else []) for i in range(20)}
    got = assign("simple", subs, {"t": 3, "u": 4}, owned=owned)
    assert got == {
        "m0": [("t", 1), ("t", 2), ("u", 0), ("u", 2)], "m1": [("t", 1), ("u", 1)],
        "m2": [("t", 1), ("u", 2)], "m3": [("t", 1), ("u", 3)], "m4": [("t", 1), ("u", 0)],
        "m5": [("t", 1), ("u", 1), ("u", 3)], "m6": [("t", 1), ("u", 2)],
        "m7": [("t", 2), ("u", 3)], "m8": [("t", 2), ("u", 0)], "m9": [("t", 2), ("u", 1)],
        "m10": [("t", 2)], "m11": [("t", 2)], "m12": [("t", 0)], "m13": [("t", 2)],
        "m14": [("t", 0)], "m15": [("t", 0)], "m16": [("t", 0)], "m17": [("t", 0)],
        "m18": [("t", 0)], "m19": [("t", 0)]}
    assert holders(got) == {("t", 0): 7, ("t", 1): 7, ("t", 2): 7,
                            ("u", 0): 3, ("u", 1): 3, ("u", 2): 3, ("u", 3): 3}


def test_desired_counts_use_doubles() -> None:
    assert desired_assignment_counts(1, 5, 2) == [3, 2]
    assert desired_assignment_counts(0, 0, 3) == [0, 0, 0]
    # 27 / 13 * 13 == 27.000000000000004 in doubles: Kafka's counts add up to 28 slots for 27
    # partitions (the first and the last member both want 3).
    counts = desired_assignment_counts(1, 27, 13)
    assert counts == [3] + [2] * 11 + [3] and sum(counts) == 28


def test_double_rounding_can_leave_a_member_two_behind() -> None:
    # Members "A".."M" iterate in that order (hashes 65..77). With the 28 slots above, a
    # current assignment A:3, B..K:2, L:1, M:3 is already final for Kafka: nobody is over its
    # count and no partition is under-shared, so L stays two partitions behind A and M.
    members = [chr(ord("A") + i) for i in range(13)]
    sizes = [3] + [2] * 10 + [1] + [3]
    owned, nxt = {}, 0
    for m, n in zip(members, sizes):
        owned[m] = tps("t", *range(nxt, nxt + n))
        nxt += n
    assert nxt == 27
    got = assign("simple", {m: ["t"] for m in members}, {"t": 27}, owned=owned)
    assert got == owned


# ---------------------------------------------------------------------------------------------
# invariants (hypothesis)
# ---------------------------------------------------------------------------------------------

TOPIC_POOL = ["a", "b", "orders", "t0", "zz", "Aa", "BB"]    # "Aa" and "BB" share a hashCode


@st.composite
def groups(draw: st.DrawFn, with_owned: bool = False) -> tuple[dict, dict, dict | None]:
    topics = draw(st.lists(st.sampled_from(TOPIC_POOL), min_size=1, max_size=4, unique=True))
    counts = {t: draw(st.one_of(st.integers(0, 12), st.sampled_from([17, 24, 40])))
              for t in topics}
    members = draw(st.lists(st.text("abAB-019", min_size=1, max_size=5), min_size=1,
                            max_size=draw(st.sampled_from([4, 12, 30])), unique=True))
    same = draw(st.booleans())
    subs = {m: (list(topics) if same else draw(st.lists(st.sampled_from(topics), unique=True)))
            for m in members}
    owned = None
    if with_owned:
        # Any current assignment, shared partitions and partitions of topics the member no
        # longer subscribes to included.
        all_tps = [(t, p) for t in topics for p in range(counts[t])]
        owned = {m: draw(st.lists(st.sampled_from(all_tps), unique=True)) if all_tps else []
                 for m in members}
    return subs, counts, owned


def _homogeneous(subs: dict) -> bool:
    first = set(next(iter(subs.values())))
    return all(set(v) == first for v in subs.values())


def _scopes(subs: dict, counts: dict) -> list[tuple[list[str], list[tuple[str, int]]]]:
    """The groups of members and partitions Kafka balances together: the whole group when the
    subscriptions are equal, else each topic with its subscribers."""
    if _homogeneous(subs):
        topics = next(iter(subs.values()))
        return [(list(subs), [(t, p) for t in topics for p in range(counts[t])])]
    return [([m for m in subs if t in subs[m]], [(t, p) for p in range(counts[t])])
            for t in counts if any(t in v for v in subs.values())]


def _check_basic(subs: dict, counts: dict, got: Assignment) -> None:
    assert list(got) == list(subs)
    for m, parts in got.items():
        assert parts == sorted(set(parts)), m
        assert all(t in subs[m] and 0 <= p < counts[t] for t, p in parts), m
    for members, partitions in _scopes(subs, counts):
        if not partitions:
            continue
        mine = {m: [tp for tp in got[m] if tp in set(partitions)] for m in members}
        shared = Counter(tp for parts in mine.values() for tp in parts)
        # every subscribed partition has at least one member
        assert set(shared) == set(partitions)
        sharing = math.ceil(len(members) / len(partitions))
        assert max(shared.values()) <= sharing
        if len(members) <= len(partitions):
            assert set(shared.values()) == {1}           # no sharing while partitions suffice
        # nobody above the largest desired count: ceil(sharing * P / M)
        assert max(len(v) for v in mine.values()) <= math.ceil(
            sharing * len(partitions) / len(members))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(groups())
def test_fresh_assignment_is_complete_and_balanced(group: tuple) -> None:
    subs, counts, _ = group
    got = assign("simple", subs, counts)
    _check_basic(subs, counts, got)
    for members, partitions in _scopes(subs, counts):
        if not partitions:
            continue
        mine = {m: [tp for tp in got[m] if tp in set(partitions)] for m in members}
        sizes = [len(v) for v in mine.values()]
        assert max(sizes) - min(sizes) <= 1                 # "should not exceed one partition"
        if len(members) > len(partitions):
            assert min(sizes) >= 1                          # sharing: nobody left idle
            assert set(holders(mine).values()) == {
                math.ceil(len(members) / len(partitions))}  # every partition fully shared


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(groups(with_owned=True))
def test_any_current_assignment_is_repaired(group: tuple) -> None:
    # Balance is only bounded by the desired counts here: from an arbitrary start Kafka may
    # leave a member behind (test_double_rounding_can_leave_a_member_two_behind).
    subs, counts, owned = group
    _check_basic(subs, counts, assign("simple", subs, counts, owned=owned))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(groups(with_owned=True), st.booleans())
def test_stickiness_result_is_a_fixed_point(group: tuple, from_owned: bool) -> None:
    subs, counts, owned = group
    got = assign("simple", subs, counts, owned=owned if from_owned else None)
    assert assign("simple", subs, counts, owned=got) == got


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(groups(with_owned=True))
def test_owned_partitions_are_only_taken_for_balance(group: tuple) -> None:
    # Stickiness: a member loses a partition it owned (of a topic it still subscribes to) only
    # when it held more than the smallest desired count, floor(sharing * P / M), or when more
    # than ``sharing`` members held that partition.
    subs, counts, owned = group
    got = assign("simple", subs, counts, owned=owned)
    for members, partitions in _scopes(subs, counts):
        if not partitions:
            continue
        scope = set(partitions)
        sharing = math.ceil(len(members) / len(partitions))
        smallest = math.floor(sharing * len(partitions) / len(members))
        owners = Counter(tp for m in members for tp in owned[m] if tp in scope)
        for m in members:
            before = {tp for tp in owned[m] if tp in scope}
            for tp in before - set(got[m]):
                assert len(before) > smallest or owners[tp] > sharing, (m, tp)


def test_topic_ids_change_only_tie_breaks() -> None:
    subs = {"A": ["orders", "zz"], "B": ["orders", "zz"], "C": ["orders", "zz"]}
    counts = {"orders": 17, "zz": 5}
    owned = {"A": tps("orders", *range(17)), "B": tps("zz", *range(5))}
    ids = {"orders": "AAAAAAAAAAAAAAAAAAAAAA", "zz": "x6xBJRcBSSqpk9qUHJ3jdA"}
    by_name = assign("simple", subs, counts, owned=owned)
    by_id = assign("simple", subs, counts, owned=owned, topic_ids=ids)
    for got in (by_name, by_id):
        _check_basic(subs, counts, got)
        assert sorted(len(v) for v in got.values()) == [7, 7, 8]
        assert set(got["B"]) >= set(tps("zz", *range(5)))    # B keeps what it has
    # orders' id hashes to 0: TopicIdPartition hashes are then the partition numbers and A
    # gives up its HashSet's first nine, 0..8, instead of the name-keyed choice.
    assert by_id["A"] == tps("orders", *range(9, 17))
    assert by_name["A"] != by_id["A"]
