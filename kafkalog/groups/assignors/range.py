"""The consumer's ``range`` assignor (clients/src/main/java/org/apache/kafka/clients/consumer/
RangeAssignor.java, 3.9), without rack awareness (a log dir knows no replica racks).

Per topic, the subscribers are sorted (static members first by ``group.instance.id``, then the
others by member id: ``AbstractPartitionAssignor.MemberInfo.compareTo``, Java string order) and
the partitions, in numeric order, are cut into contiguous ranges: ``count // subscribers`` each,
the first ``count % subscribers`` subscribers one more. A member's list holds its ranges topic
after topic, topics in the iteration order of Kafka's ``partitionsPerTopic`` ``HashMap``.

>>> from kafkalog.groups.assignors.model import AssignmentInput
>>> assign_range(AssignmentInput.build({"C0": ["t0", "t1"], "C1": ["t0", "t1"]},
...                                    {"t0": 3, "t1": 3}))
{'C0': [('t0', 0), ('t0', 1), ('t1', 0), ('t1', 1)], 'C1': [('t0', 2), ('t1', 2)]}
"""

from __future__ import annotations

from ..java_order import JavaHashMap, java_string_key, string_hash
from .model import AssignmentInput, TopicPartition

__all__ = ["assign_range", "member_order", "topic_map_order"]


def member_order(inp: AssignmentInput, members: list[str]) -> list[str]:
    """``Collections.sort`` of ``MemberInfo``: static members first (by instance id), then
    dynamic members by member id, in Java string order."""
    inst = inp.instance_ids

    def key(m: str) -> tuple[int, bytes]:
        i = inst.get(m)
        return (0, java_string_key(i)) if i is not None else (1, java_string_key(m))

    return sorted(members, key=key)


def topic_map_order(inp: AssignmentInput) -> list[str]:
    """The iteration order of the client's ``partitionsPerTopic`` ``HashMap``: filled from the
    ``allSubscribedTopics`` ``HashSet``, itself filled member by member in the subscriptions'
    ``HashMap`` order (``AbstractPartitionAssignor.assign``)."""
    members = JavaHashMap.ordered(inp.members, string_hash)
    all_topics = JavaHashMap.ordered(
        dict.fromkeys(t for m in members for t in inp.topics[m]), string_hash)
    return JavaHashMap.ordered([t for t in all_topics if t in inp.partitions], string_hash)


def assign_range(inp: AssignmentInput) -> dict[str, list[TopicPartition]]:
    """``RangeAssignor.assignPartitions`` without racks."""
    assignment: dict[str, list[TopicPartition]] = {m: [] for m in inp.members}
    subscribers: dict[str, list[str]] = {}
    for m in inp.members:
        for t in inp.topics[m]:
            subscribers.setdefault(t, []).append(m)
    for topic in topic_map_order(inp):
        consumers = member_order(inp, subscribers[topic])
        count = inp.partitions[topic]
        per, extra = divmod(count, len(consumers))
        start = 0
        for i, consumer in enumerate(consumers):
            if start >= count:
                break
            n = per + (1 if i < extra else 0)
            if n:
                assignment[consumer].extend((topic, p) for p in range(start, start + n))
            start += n
    return assignment
