"""KIP-848's server-side ``range`` assignor (group-coordinator/src/main/java/org/apache/kafka/
coordinator/group/assignor/RangeAssignor.java, Kafka 4.0), without racks. Named
``server-range`` here, to tell it from the consumer's ``range``.

Members are sorted as the consumer's range assignor sorts them (static members first by instance
id, then member id); for each topic, its subscribers in that order receive contiguous ranges of
``count // subscribers`` partitions, the first ``count % subscribers`` one more. When every member
subscribes to the same co-partitioned topics, member *i* gets the same partition numbers from
every topic. Unlike the 3.x server range assignor it keeps no previous assignment: the result
depends only on membership and partition counts.

>>> from kafkalog.groups.assignors.model import AssignmentInput
>>> assign_server_range(AssignmentInput.build({"M0": ["T1", "T2"], "M1": ["T1", "T2"]},
...                                           {"T1": 3, "T2": 3}))
{'M0': [('T1', 0), ('T1', 1), ('T2', 0), ('T2', 1)], 'M1': [('T1', 2), ('T2', 2)]}
"""

from __future__ import annotations

from .model import AssignmentInput, TopicPartition
from .range import member_order
from .uniform import sorted_assignment

__all__ = ["assign_server_range"]


def assign_server_range(inp: AssignmentInput) -> dict[str, list[TopicPartition]]:
    """``RangeAssignor.assign`` (homogeneous and heterogeneous paths give the same ranges)."""
    if not inp.members:
        return {}
    members = member_order(inp, inp.members)
    subscribers: dict[str, int] = {}
    for m in members:
        for t in inp.topics[m]:
            subscribers[t] = subscribers.get(t, 0) + 1
    next_range = dict.fromkeys(subscribers, 0)
    extra = {t: inp.partitions.get(t, 0) % n for t, n in subscribers.items()}
    target: dict[str, dict[str, set[int]]] = {m: {} for m in members}
    for m in members:
        for t in inp.topics[m]:
            count = inp.partitions.get(t, 0)
            quota = count // subscribers[t]
            if extra[t] > 0:
                quota += 1
                extra[t] -= 1
            start = next_range[t]
            end = min(start + quota, count)
            next_range[t] = end
            if start < end:
                target[m][t] = set(range(start, end))
    return sorted_assignment(inp, target)
