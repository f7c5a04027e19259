"""The consumer's ``range`` assignor (clients/src/main/java/org/apache/kafka/clients/consumer/
RangeAssignor.java, 3.9), rack-aware as since Kafka 3.5 (KIP-881).

Per topic, the subscribers are sorted (static members first by ``group.instance.id``, then the
others by member id: ``AbstractPartitionAssignor.MemberInfo.compareTo``, Java string order) and
the partitions, in numeric order, are cut into contiguous ranges: ``count // subscribers`` each,
the first ``count % subscribers`` subscribers one more. A member's list holds its ranges topic
after topic, topics in the iteration order of Kafka's ``partitionsPerTopic`` ``HashMap``.

Rack awareness (``RangeAssignor.assignPartitions``, ``TopicAssignmentState``): a topic needs it
when some of its subscribers have a rack (``client.rack``) that holds replicas and its partitions
are not all on the same racks (``useRackAwareAssignment``). If any topic does, topics with the
same subscribers (and racks) and the same partition count are first assigned together, partition
``p`` of all of them to the first subscriber whose rack holds all their replicas and that is below
its range quota in each (``assignCoPartitionedWithRackMatching``); a topic alone in its group
that needs racks gets ranges of rack-matching partitions (``assignRanges`` with ``racksMatch``).
The rest is then dealt as ranges without racks, within each member's quota, and every member's
list is sorted by topic and partition. Members without a rack match any partition.

>>> from kafkalog.groups.assignors.model import AssignmentInput
>>> assign_range(AssignmentInput.build({"C0": ["t0", "t1"], "C1": ["t0", "t1"]},
...                                    {"t0": 3, "t1": 3}))
{'C0': [('t0', 0), ('t0', 1), ('t1', 0), ('t1', 1)], 'C1': [('t0', 2), ('t1', 2)]}
"""

from __future__ import annotations

from itertools import repeat

from ..java_order import JavaHashMap, java_sorted, java_string_key, string_hash
from .model import AssignmentInput, TopicPartition, use_rack_aware_assignment

__all__ = ["assign_range", "member_order", "topic_map_order"]


def member_order(inp: AssignmentInput, members: list[str]) -> list[str]:
    """``Collections.sort`` of ``MemberInfo``: static members first (by instance id), then
    dynamic members by member id, in Java string order."""
    inst = inp.instance_ids
    static = [m for m in members if inst.get(m) is not None]
    dynamic = java_sorted(m for m in members if inst.get(m) is None)
    if not static:
        return dynamic
    # (two static members may share an instance id: sorted is stable, as Collections.sort)
    ids = java_sorted(dict.fromkeys(inst[m] for m in static))
    rank = {i: n for n, i in enumerate(ids)}
    return sorted(static, key=lambda m: rank[inst[m]]) + dynamic


def topic_map_order(inp: AssignmentInput) -> list[str]:
    """The iteration order of the client's ``partitionsPerTopic`` ``HashMap``: filled from the
    ``allSubscribedTopics`` ``HashSet``, itself filled member by member in the subscriptions'
    ``HashMap`` order (``AbstractPartitionAssignor.assign``)."""
    topics: JavaHashMap[str, None] = JavaHashMap(string_hash)
    for t in dict.fromkeys(t for m in inp.members for t in inp.topics[m]):
        if t in inp.partitions:
            topics[t] = None
    if not topics.shares_buckets():
        # no two topics in one bucket of partitionsPerTopic: its order is its buckets',
        # whatever order the members' HashMap and the topics' HashSet filled it in
        return list(topics)
    members = JavaHashMap.ordered(inp.members, string_hash)
    all_topics = JavaHashMap.ordered(
        dict.fromkeys(t for m in members for t in inp.topics[m]), string_hash)
    return JavaHashMap.ordered([t for t in all_topics if t in inp.partitions], string_hash)


def _subscribers(inp: AssignmentInput) -> dict[str, list[str]]:
    """Each topic's subscribers in :func:`member_order` (the members are sorted once: the
    order of a topic's subscribers is the order of all members restricted to them)."""
    subscribers: dict[str, list[str]] = {}
    for m in member_order(inp, inp.members):
        for t in inp.topics[m]:
            subscribers.setdefault(t, []).append(m)
    return subscribers


def assign_range(inp: AssignmentInput) -> dict[str, list[TopicPartition]]:
    """``RangeAssignor.assignPartitions``: rack-aware when some topic needs it, else the plain
    ranges."""
    subscribers = _subscribers(inp)
    if any(r is not None for r in inp.consumer_racks.values()):
        states = [_TopicState(inp, t, subscribers[t]) for t in topic_map_order(inp)]
        if any(s.needs_rack_aware for s in states):
            return _assign_rack_aware(inp, states)
    assignment: dict[str, list[TopicPartition]] = {m: [] for m in inp.members}
    for topic in topic_map_order(inp):
        consumers = subscribers[topic]
        count = inp.partitions[topic]
        per, extra = divmod(count, len(consumers))
        start = 0
        for i, consumer in enumerate(consumers):
            if start >= count:
                break
            n = per + (1 if i < extra else 0)
            if n:
                assignment[consumer].extend(zip(repeat(topic, n), range(start, start + n)))
            start += n
    return assignment


class _TopicState:
    """``RangeAssignor.TopicAssignmentState``."""

    def __init__(self, inp: AssignmentInput, topic: str, consumers: list[str]) -> None:
        self.topic = topic
        self.consumers = consumers                  # the LinkedHashMap's keys, MemberInfo order
        self.racks = {c: inp.consumer_racks.get(c) for c in consumers}
        count = inp.partitions[topic]
        self.unassigned: dict[int, None] = dict.fromkeys(range(count))   # a LinkedHashSet
        self.num_assigned = {c: 0 for c in consumers}
        self.per_consumer = count // len(consumers) if consumers else 0
        self.with_extra = count % len(consumers) if consumers else 0
        consumer_racks = {r for r in self.racks.values() if r is not None}
        if consumer_racks:
            self.partition_racks: list[frozenset[str]] = inp.partition_racks[topic]
            all_partition_racks = frozenset().union(*self.partition_racks)
        else:
            self.partition_racks = []               # Collections.emptyMap()
            all_partition_racks = frozenset()
        self.needs_rack_aware = use_rack_aware_assignment(
            inp, consumer_racks, all_partition_racks, self.partition_racks)

    def group_key(self) -> tuple[frozenset[tuple[str, str | None]], int]:
        """The keys of the two ``groupingBy``: the consumers map, ``partitionRacks.size()``."""
        return frozenset(self.racks.items()), len(self.partition_racks)

    def racks_match(self, consumer: str, p: int) -> bool:
        rack = self.racks[consumer]
        return rack is None or (p < len(self.partition_racks)
                                and rack in self.partition_racks[p])

    def max_assignable(self, consumer: str) -> int:
        n = self.per_consumer + (1 if self.with_extra > 0 else 0) - self.num_assigned[consumer]
        return max(0, n)

    def on_assigned(self, consumer: str, partitions: list[int]) -> None:
        self.num_assigned[consumer] += len(partitions)
        if self.num_assigned[consumer] > self.per_consumer:
            self.with_extra -= 1
        for p in partitions:
            self.unassigned.pop(p, None)


def _assign(assignment: dict[str, list[TopicPartition]], consumer: str, partitions: list[int],
            state: _TopicState) -> None:
    assignment[consumer].extend((state.topic, p) for p in partitions)
    state.on_assigned(consumer, partitions)


def _assign_ranges(assignment: dict[str, list[TopicPartition]], state: _TopicState,
                   rack_match: bool) -> None:
    """``assignRanges``: each consumer in turn takes the first unassigned partitions it may take
    (rack-matching ones if ``rack_match``), up to its quota."""
    for consumer in state.consumers:
        if not state.unassigned:
            break
        limit = state.max_assignable(consumer)
        chosen: list[int] = []
        if limit > 0:
            for p in state.unassigned:
                if not rack_match or state.racks_match(consumer, p):
                    chosen.append(p)
                    if len(chosen) == limit:
                        break
        if chosen:
            _assign(assignment, consumer, chosen, state)


def _assign_co_partitioned(assignment: dict[str, list[TopicPartition]], consumers: list[str],
                           num_partitions: int, states: list[_TopicState]) -> None:
    """``assignCoPartitionedWithRackMatching``."""
    remaining = list(consumers)
    for p in range(num_partitions):
        match = next((c for c in remaining
                      if all(s.racks_match(c, p) and s.max_assignable(c) > 0 for s in states)),
                     None)
        if match is None:
            continue
        for s in states:
            _assign(assignment, match, [p], s)
        if not any(s.max_assignable(match) > 0 for s in states):
            remaining.remove(match)
            if not remaining:
                break


def _assign_rack_aware(inp: AssignmentInput, states: list[_TopicState]
                       ) -> dict[str, list[TopicPartition]]:
    assignment: dict[str, list[TopicPartition]] = {m: [] for m in inp.members}
    # assignWithRackMatching: topics grouped by subscribers, then by partition count. The groups
    # share no topic and every list is sorted at the end, so the order of the groups (HashMaps
    # in Kafka) does not matter; within a group, topics keep partitionsPerTopic order.
    groups: dict[tuple[frozenset[tuple[str, str | None]], int], list[_TopicState]] = {}
    for s in states:
        groups.setdefault(s.group_key(), []).append(s)
    for (_, num_partitions), group in groups.items():
        if len(group) > 1:
            _assign_co_partitioned(assignment, group[0].consumers, num_partitions, group)
        elif group[0].needs_rack_aware:
            _assign_ranges(assignment, group[0], True)
    for s in states:
        _assign_ranges(assignment, s, False)
    # Utils.TopicPartitionComparator: topic (Java string order), then partition
    for tps in assignment.values():
        tps.sort(key=lambda tp: (java_string_key(tp[0]), tp[1]))
    return assignment
