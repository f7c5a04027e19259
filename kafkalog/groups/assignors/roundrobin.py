"""The consumer's ``roundrobin`` assignor (clients/src/main/java/org/apache/kafka/clients/
consumer/RoundRobinAssignor.java, 3.9).

All partitions of all subscribed topics, topics in Java string order (a ``TreeSet``) and
partitions in numeric order, are dealt one by one to the members in ``MemberInfo`` order (static
members first), cycling; a member not subscribed to a partition's topic is skipped (the circular
iterator advances past it).

>>> from kafkalog.groups.assignors.model import AssignmentInput
>>> assign_roundrobin(AssignmentInput.build({"C0": ["t0", "t1"], "C1": ["t0", "t1"]},
...                                         {"t0": 3, "t1": 3}))
{'C0': [('t0', 0), ('t0', 2), ('t1', 1)], 'C1': [('t0', 1), ('t1', 0), ('t1', 2)]}
"""

from __future__ import annotations

from ..java_order import java_sorted
from .model import AssignmentInput, TopicPartition
from .range import member_order

__all__ = ["assign_roundrobin"]


def assign_roundrobin(inp: AssignmentInput) -> dict[str, list[TopicPartition]]:
    """``RoundRobinAssignor.assign``."""
    assignment: dict[str, list[TopicPartition]] = {m: [] for m in inp.members}
    if not inp.members:
        return assignment
    ring = member_order(inp, inp.members)
    subscribed = [set(inp.topics[m]) for m in ring]
    n = len(ring)
    pos = 0                     # the circular iterator's next element
    for topic in java_sorted({t for m in inp.members for t in inp.topics[m]}):
        count = inp.partitions.get(topic)
        if count is None:
            continue
        for p in range(count):
            while topic not in subscribed[pos]:
                pos = (pos + 1) % n
            assignment[ring[pos]].append((topic, p))
            pos = (pos + 1) % n
    return assignment
