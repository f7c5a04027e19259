"""KIP-848's server-side ``uniform`` assignor (group-coordinator/src/main/java/org/apache/kafka/
coordinator/group/assignor/UniformAssignor.java, UniformHomogeneousAssignmentBuilder.java and
UniformHeterogeneousAssignmentBuilder.java, Kafka 4.0), without racks.

The group coordinator computes the target assignment itself; each member's current assignment is
the starting point (``owned`` here).

* All members subscribed to the same topics (homogeneous): members are visited in the order of
  the group spec's member ``HashMap``; the first ``total % members`` get ``total // members + 1``
  partitions, the others ``total // members``. Each keeps owned partitions up to its quota (the
  rest is revoked), then the free partitions (topics in ``HashSet<Uuid>`` order, partitions in
  numeric order, then the revoked ones) fill the members still below their quota, in visiting
  order.
* Otherwise (heterogeneous): every member keeps its owned partitions of topics it still
  subscribes to; free partitions are given topic by topic (topics by partitions per subscriber
  descending, then subscriber count ascending, then topic id) to the least loaded subscriber
  (ties: member index); then, up to 16 rounds over the topics with two or more subscribers,
  partitions move from the most to the least loaded subscriber of each topic until the counts
  differ by at most one.

Topic identity: Kafka keys topics by ``Uuid`` (hash order, ``compareTo``). Give ``topic_ids`` to
:func:`kafkalog.groups.assign` to reproduce a cluster's exact choice; without them each topic is
keyed by its name (``String.hashCode`` and Java string order), which yields the same kind of
balanced, sticky assignment but may break ties differently than a broker with those topics.

>>> from kafkalog.groups.assignors.model import AssignmentInput
>>> assign_uniform(AssignmentInput.build({"a": ["t"], "b": ["t"]}, {"t": 3}))
{'a': [('t', 0), ('t', 1)], 'b': [('t', 2)]}
"""

from __future__ import annotations

from collections.abc import Callable

from ..java_order import JavaHashMap, int_hash, java_string_key, string_hash, uuid_hash
from .model import AssignmentInput, TopicPartition

__all__ = ["assign_uniform", "TopicKeys", "member_map_order", "sorted_assignment"]

#: UniformHeterogeneousAssignmentBuilder.MAX_ITERATION_COUNT
MAX_ITERATION_COUNT = 16


class TopicKeys:
    """How Kafka hashes and orders a topic: by its ``Uuid`` when known, else by its name."""

    def __init__(self, inp: AssignmentInput) -> None:
        self._ids = inp.topic_ids

    def hash(self, topic: str) -> int:
        tid = self._ids.get(topic)
        return uuid_hash(*tid) if tid is not None else string_hash(topic)

    def order(self, topic: str) -> tuple:
        tid = self._ids.get(topic)
        return (0, tid, b"") if tid is not None else (1, (0, 0), java_string_key(topic))


def member_map_order(inp: AssignmentInput) -> list[str]:
    """``GroupSpec.memberIds()``: the keys of the member ``HashMap``."""
    return JavaHashMap.ordered(inp.members, string_hash)


def sorted_assignment(inp: AssignmentInput, target: dict[str, dict[str, set[int]]]
                      ) -> dict[str, list[TopicPartition]]:
    """A target assignment (sets, as Kafka holds it) as sorted lists, in the caller's member
    order."""
    out: dict[str, list[TopicPartition]] = {}
    for m in inp.members:
        parts = target.get(m, {})
        out[m] = [(t, p) for t in sorted(parts, key=java_string_key) for p in sorted(parts[t])]
    return out


def _counts(inp: AssignmentInput) -> dict[str, int]:
    return {t: inp.partitions.get(t, 0) for m in inp.members for t in inp.topics[m]}


def _owned_by_topic(inp: AssignmentInput, member: str, keys: TopicKeys
                    ) -> list[tuple[str, list[int]]]:
    """The member's current assignment as Kafka iterates it: topics in ``HashMap<Uuid, ...>``
    order, partitions in ``HashSet<Integer>`` order."""
    by_topic: dict[str, list[int]] = {}
    for t, p in inp.owned[member]:
        by_topic.setdefault(t, []).append(p)
    order = JavaHashMap.ordered(by_topic, keys.hash)
    return [(t, JavaHashMap.ordered(sorted(set(by_topic[t])), int_hash)) for t in order]


def assign_uniform(inp: AssignmentInput) -> dict[str, list[TopicPartition]]:
    """``UniformAssignor.assign``."""
    if not inp.members:
        return {}
    first = set(inp.topics[inp.members[0]])
    if all(set(inp.topics[m]) == first for m in inp.members):
        return sorted_assignment(inp, _homogeneous(inp))
    return sorted_assignment(inp, _Heterogeneous(inp).build())


# ---------------------------------------------------------------------------------------------
# UniformHomogeneousAssignmentBuilder
# ---------------------------------------------------------------------------------------------

def _homogeneous(inp: AssignmentInput) -> dict[str, dict[str, set[int]]]:
    keys = TopicKeys(inp)
    counts = _counts(inp)
    members = member_map_order(inp)
    subscribed = JavaHashMap.copy_of_set(inp.topics[members[0]], keys.hash)
    if not subscribed:
        return {}
    subscribed_set = set(subscribed)
    assigned_now = {tp for m in inp.members for tp in inp.owned[m]}
    unassigned: list[TopicPartition] = []
    total = 0
    for topic in subscribed:
        n = counts[topic]
        unassigned.extend((topic, p) for p in range(n) if (topic, p) not in assigned_now)
        total += n
    min_quota, extra = divmod(total, len(members))
    target: dict[str, dict[str, set[int]]] = {}
    unfilled: list[tuple[str, int]] = []
    for member in members:
        quota = min_quota
        if extra > 0:
            quota += 1
            extra -= 1
        kept: dict[str, set[int]] = {}
        for topic, parts in _owned_by_topic(inp, member, keys):
            if topic not in subscribed_set:
                continue                         # the whole topic is revoked
            if len(parts) <= quota:
                quota -= len(parts)
                kept[topic] = set(parts)
                continue
            mine = kept.setdefault(topic, set())
            for p in parts:
                if quota > 0:
                    quota -= 1
                    mine.add(p)
                else:
                    unassigned.append((topic, p))
            if not mine:
                del kept[topic]
        if quota > 0:
            unfilled.append((member, quota))
        target[member] = kept
    index = 0
    for member, remaining in unfilled:
        mine_all = target[member]
        for _ in range(remaining):
            if index >= len(unassigned):
                break
            topic, p = unassigned[index]
            index += 1
            mine_all.setdefault(topic, set()).add(p)
    if index < len(unassigned):
        raise RuntimeError("Partitions were left unassigned")   # Kafka: PartitionAssignorException
    return target


# ---------------------------------------------------------------------------------------------
# UniformHeterogeneousAssignmentBuilder
# ---------------------------------------------------------------------------------------------

class _Balancer:
    """``MemberAssignmentBalancer``: the least loaded range grows rightwards, the most loaded
    range leftwards, over members sorted by partition count (then index)."""

    def __init__(self, sizes: list[int]) -> None:
        self.sizes = sizes
        self.sorted: list[int] = []
        self.least_end = 0
        self.least_count = -1
        self.next_least = 0
        self.most_start = 0
        self.most_end = 0
        self.most_count = 1
        self.next_most = -1

    def initialize(self, members: list[int]) -> int:
        if not members:
            raise ValueError("Cannot balance an empty subscriber list.")
        sizes = self.sizes
        self.sorted = sorted(members, key=lambda i: (sizes[i], i))
        self.least_end = 0
        self.least_count = sizes[self.sorted[0]] - 1
        self.next_least = 0
        self.most_start = len(self.sorted)
        self.most_end = len(self.sorted)
        self.most_count = sizes[self.sorted[-1]] + 1
        self.next_most = len(self.sorted) - 1
        return sizes[self.sorted[-1]] - sizes[self.sorted[0]]

    def next_least_loaded(self) -> int:
        if self.next_least >= self.least_end:
            self.least_count += 1
            sizes, order = self.sizes, self.sorted
            while self.least_end < len(order) and sizes[order[self.least_end]] == self.least_count:
                self.least_end += 1
            self.next_least = 0
        member = self.sorted[self.next_least]
        self.next_least += 1
        return member

    def next_most_loaded(self) -> int:
        sizes, order = self.sizes, self.sorted
        if self.next_most < self.most_start:
            if self.most_end <= self.most_start and self.most_start > 0:
                self.most_count = sizes[order[self.most_start - 1]]
            else:
                self.most_count -= 1
            while self.most_start > 0 and sizes[order[self.most_start - 1]] == self.most_count:
                self.most_start -= 1
            self.next_most = self.most_end - 1
        if self.next_most < 0:
            return -1
        member = order[self.next_most]
        self.next_most -= 1
        return member

    def exclude_most_loaded(self) -> None:
        order = self.sorted
        i = self.next_most + 1
        order[i], order[self.most_end - 1] = order[self.most_end - 1], order[i]
        self.most_end -= 1

    def is_balanced(self) -> bool:
        return self.most_count - self.least_count <= 1


class _Heterogeneous:
    def __init__(self, inp: AssignmentInput) -> None:
        self.inp = inp
        self.keys = TopicKeys(inp)
        self.counts = _counts(inp)
        self.member_ids = member_map_order(inp)
        self.index = {m: i for i, m in enumerate(self.member_ids)}
        self.subscribers: dict[str, list[int]] = {}
        for i, m in enumerate(self.member_ids):
            for t in inp.topics[m]:
                self.subscribers.setdefault(t, []).append(i)
        self.sizes = [0] * len(self.member_ids)
        self.owners: dict[str, list[int]] = {t: [-1] * self.counts[t] for t in self.subscribers}
        self.target: dict[str, dict[str, set[int]]] = {}

    def _topic_sort_key(self) -> Callable[[str], tuple]:
        counts, subs, keys = self.counts, self.subscribers, self.keys
        # partitions per subscriber descending (Double.compare), subscribers ascending, topic id
        return lambda t: (-(counts[t] / len(subs[t])), len(subs[t]), keys.order(t))

    def build(self) -> dict[str, dict[str, set[int]]]:
        if not self.subscribers:
            return {}
        self._maybe_revoke()
        unassigned = {t: [p for p in range(self.counts[t]) if self.owners[t][p] == -1]
                      for t in self.subscribers}
        unassigned = {t: ps for t, ps in unassigned.items() if ps}
        balancer = _Balancer(self.sizes)
        for topic in sorted(unassigned, key=self._topic_sort_key()):
            balancer.initialize(self.subscribers[topic])
            for p in unassigned[topic]:
                self._assign(topic, p, balancer.next_least_loaded())
        topics = [t for t in self.subscribers if len(self.subscribers[t]) >= 2]
        if topics:
            self._balance_topics(topics)
        return self.target

    def _maybe_revoke(self) -> None:
        for member in self.member_ids:
            i = self.index[member]
            subscribed = set(self.inp.topics[member])
            kept: dict[str, set[int]] = {}
            for topic, parts in _owned_by_topic(self.inp, member, self.keys):
                if topic in subscribed:
                    self.sizes[i] += len(parts)
                    for p in parts:
                        self.owners[topic][p] = i
                    kept[topic] = set(parts)
            self.target[member] = kept

    def _assign(self, topic: str, partition: int, member_index: int) -> None:
        old = self.owners[topic][partition]
        if old != -1:
            parts = self.target[self.member_ids[old]].get(topic)
            if parts is not None:
                parts.discard(partition)
                if not parts:
                    del self.target[self.member_ids[old]][topic]
            self.sizes[old] -= 1
        self.target[self.member_ids[member_index]].setdefault(topic, set()).add(partition)
        self.owners[topic][partition] = member_index
        self.sizes[member_index] += 1

    def _balance_topics(self, topics: list[str]) -> None:
        order = sorted(topics, key=self._topic_sort_key())
        last = -1
        balancer = _Balancer(self.sizes)
        for _ in range(MAX_ITERATION_COUNT):
            for ti, topic in enumerate(order):
                if ti == last:
                    return
                moved = self._balance_topic(topic, balancer)
                if moved > 0 or last == -1:
                    last = ti

    def _balance_topic(self, topic: str, balancer: _Balancer) -> int:
        moved = 0
        if balancer.initialize(self.subscribers[topic]) <= 1:
            return moved
        owners = self.owners[topic]
        partitions = sorted(range(self.counts[topic]), key=lambda p: (owners[p], p))
        start: dict[int, int] = {}
        end: dict[int, int] = {}
        for i, p in enumerate(partitions):
            start.setdefault(owners[p], i)
            end[owners[p]] = i + 1
        while not balancer.is_balanced():
            most = -1
            while True:
                most = balancer.next_most_loaded()
                if most == -1:
                    break
                if most not in end or end[most] - start[most] <= 0:
                    balancer.exclude_most_loaded()
                    continue
                break
            if most == -1:
                break
            p = partitions[end[most] - 1]
            end[most] -= 1
            least = balancer.next_least_loaded()
            if balancer.is_balanced():
                break
            self._assign(topic, p, least)
            moved += 1
        return moved
