"""KIP-932's share-group ``simple`` assignor (group-coordinator/src/main/java/org/apache/kafka/
coordinator/group/assignor/SimpleAssignor.java, SimpleHomogeneousAssignmentBuilder.java and
SimpleHeterogeneousAssignmentBuilder.java, with AssignorHelpers.java; Kafka 4.1, as finalised
by KAFKA-19362 and KAFKA-19363), without racks (Kafka's is not rack-aware either).

Unlike a consumer group, a share group may give one partition to several members: records of a
partition are handed out to whichever member fetches them. Kafka's rules, "balance is
prioritized above stickiness":

* With ``M`` members and ``P`` target partitions, every partition should be shared by
  ``desiredSharing = ceil(M / P)`` members (1 whenever ``M <= P``), and member number ``i`` (in
  the order of the group spec's member ``HashMap``) should get
  ``ceil(x * (i + 1)) - ceil(x * i)`` partitions, with ``x = desiredSharing * P / M`` as a
  double: the ``desiredSharing * P`` member slots split as evenly as possible (counts differ by
  at most one), except that the doubles can round one slot too many (27 partitions over 13
  members give 28), which a current assignment may leave on a member two ahead of another.
* Stickiness: each member keeps its current partitions of topics it still subscribes to, then
  members holding more than their count give up the surplus (in the iteration order of their
  partition ``HashSet``), then partitions shared by more than ``desiredSharing`` members are taken
  from the first members of the partition's member ``HashSet``.
* Finally the partitions are visited once (in ``HashMap`` order) and each one still shared by
  fewer than ``desiredSharing`` members is given to the next members still under their count,
  round-robin in member-index order. A member that already holds the partition is skipped; if
  none of the remaining members can take it, the partition stays under-shared (Kafka accepts
  that slight imbalance).
* All members subscribed to the same topics (homogeneous): the counts are computed over all
  partitions of the group. Otherwise (heterogeneous) the same steps run separately for each
  topic among its subscribers only, and the results are combined: a member subscribed to two
  topics gets its share of each, so its total need not match a member subscribed to one.

Kafka 4.0's version of this assignor (KAFKA-18757) hashed member ids onto partitions
(``abs(memberId.hashCode() % partitions)``) and filled the gaps round-robin; 4.1 removed that
hashing (KAFKA-19362: "It eliminates the idea of hash-based assignment"). The only hashing left
is Java's: which partition a member gives up first, and in which order unshared partitions are
filled, follow ``HashMap``/``HashSet`` iteration, reproduced with
:mod:`kafkalog.groups.java_order`. Partitions are keyed by
``org.apache.kafka.server.common.TopicIdPartition``, a Java record whose ``hashCode`` is
``31 * topicId.hashCode() + partition``; give ``topic_ids`` to :func:`kafkalog.groups.assign` to
reproduce a cluster's choice, otherwise each topic is keyed by its name (as in
:mod:`~kafkalog.groups.assignors.uniform`). A member's current assignment is modelled as Kafka
reads it from its records: a ``HashMap`` of topics to ``new HashSet<>(partitions)``.

Not modelled: ``GroupSpec.isPartitionAssignable`` (partitions being initialised are excluded from
the targets in Kafka); a topic with no partitions plays the part of a topic none of whose
partitions is assignable.

>>> from kafkalog.groups.assignors.model import AssignmentInput
>>> assign_share_simple(AssignmentInput.build({"a": ["t"], "b": ["t"]}, {"t": 3}))
{'a': [('t', 0), ('t', 2)], 'b': [('t', 1)]}
>>> assign_share_simple(AssignmentInput.build({"a": ["t"], "b": ["t"], "c": ["t"]}, {"t": 2}))
{'a': [('t', 0), ('t', 1)], 'b': [('t', 0)], 'c': [('t', 1)]}
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ..java_order import JavaHashMap, int_hash
from .model import AssignmentInput, TopicPartition
from .uniform import TopicKeys, member_map_order, sorted_assignment

__all__ = ["assign_share_simple", "desired_assignment_counts"]

#: A member's assignment as Kafka holds it: topic -> partitions (``Map<Uuid, Set<Integer>>``).
_Assignment = dict[str, set[int]]


def assign_share_simple(inp: AssignmentInput) -> dict[str, list[TopicPartition]]:
    """``SimpleAssignor.assign``: every member's sorted ``(topic, partition)`` list.

    A partition may appear in several members' lists when there are more members than
    partitions of its topic.
    """
    if not inp.members:
        return {}
    first = set(inp.topics[inp.members[0]])
    if all(set(inp.topics[m]) == first for m in inp.members):
        return sorted_assignment(inp, _Homogeneous(inp).build())
    return sorted_assignment(inp, _Heterogeneous(inp).build())


def desired_assignment_counts(sharing: int, partitions: int, members: int) -> list[int]:
    """How many partitions member ``i`` should get, as Kafka computes it in doubles.

    >>> desired_assignment_counts(1, 5, 2), desired_assignment_counts(2, 2, 3)
    ([3, 2], [2, 1, 1])
    """
    # Python's int / int and float * float round exactly as Java's double arithmetic does.
    precise = sharing * partitions / members
    return [math.ceil(precise * (i + 1)) - math.ceil(precise * i) for i in range(members)]


def _desired_sharing(members: int, partitions: int) -> int:
    return 0 if partitions == 0 else (members + partitions - 1) // partitions


def _new_hash_map_capacity(mappings: int) -> int:
    """``AssignorHelpers.newHashMap``: ``new HashMap<>((int) (((n + 1) / 0.75f) + 1))``."""
    # 4 * (n + 1) // 3 equals the float truncation for any n a group can have.
    return 4 * (mappings + 1) // 3 + 1


def _partition_hash(keys: TopicKeys) -> Callable[[TopicPartition], int]:
    """``TopicIdPartition.hashCode`` (a record: ``31 * topicId.hashCode() + partitionId``)."""
    def h(tp: TopicPartition) -> int:
        return ((31 * keys.hash(tp[0]) + tp[1] + 2**31) % 2**32) - 2**31
    return h


def _old_assignments(inp: AssignmentInput, member_ids: list[str], keys: TopicKeys
                     ) -> list[list[tuple[str, list[int]]]]:
    """Each member's current assignment in Kafka's iteration order: topics as a ``HashMap``
    keyed by topic id, partitions as ``new HashSet<>(list)``."""
    out = []
    for member in member_ids:
        by_topic: dict[str, list[int]] = {}
        for t, p in inp.owned[member]:
            by_topic.setdefault(t, []).append(p)
        order = JavaHashMap.ordered(by_topic, keys.hash)
        out.append([(t, JavaHashMap.copy_of_set(sorted(set(by_topic[t])), int_hash))
                    for t in order])
    return out


def _deep_copy(old: list[tuple[str, list[int]]]) -> _Assignment:
    """``AssignorHelpers.deepCopyAssignment``."""
    return {t: set(ps) for t, ps in old}


class _MemberIterator:
    """An iterator over the ``HashSet<Integer>`` of unfilled member indices.

    The set is built with ``AssignorHelpers.newHashSet(numGroupMembers)``, so every index is below
    the table size and sits alone in its bucket: iteration is ascending. Elements are only removed
    through the iterator, as Kafka does, so walking a sorted snapshot is faithful.
    """

    def __init__(self, members: set[int]) -> None:
        self._set = members
        self._order = sorted(members)
        self._pos = 0
        self._last = -1

    def has_next(self) -> bool:
        return self._pos < len(self._order)

    def next(self) -> int:
        if not self.has_next():
            # Java: NoSuchElementException; the counts make it unreachable (see the tests).
            raise RuntimeError("no unfilled member left to iterate")
        self._last = self._order[self._pos]
        self._pos += 1
        return self._last

    def remove(self) -> None:
        self._set.discard(self._last)


def _final_target(member_ids: list[str], old: list[list[tuple[str, list[int]]]],
                  new: dict[int, _Assignment]) -> dict[str, _Assignment]:
    """``build()``'s last step: a member's new assignment if it was touched, else its old one."""
    return {mid: new[i] if i in new else _deep_copy(old[i]) for i, mid in enumerate(member_ids)}


# ---------------------------------------------------------------------------------------------
# SimpleHomogeneousAssignmentBuilder
# ---------------------------------------------------------------------------------------------

class _Homogeneous:
    def __init__(self, inp: AssignmentInput) -> None:
        self.keys = TopicKeys(inp)
        self.member_ids = member_map_order(inp)
        m = len(self.member_ids)
        # The first member's subscription (all are equal); its order only decides where new
        # partitions enter the partition map.
        self.subscribed = JavaHashMap.copy_of_set(inp.topics[self.member_ids[0]], self.keys.hash)
        self.subscribed_set = set(self.subscribed)
        self.targets = [(t, p) for t in self.subscribed for p in range(inp.partitions.get(t, 0))]
        n = len(self.targets)
        self.sharing = _desired_sharing(m, n)
        self.desired = desired_assignment_counts(self.sharing, n, m)
        self.old = _old_assignments(inp, self.member_ids, self.keys)
        self.new: dict[int, _Assignment] = {}
        self.tp_hash = _partition_hash(self.keys)
        # finalAssignmentByPartition: its iteration order decides which partitions are
        # unshared first and which ones the unfilled members receive.
        self.by_partition: JavaHashMap[TopicPartition, JavaHashMap[int, None]] = JavaHashMap(
            self.tp_hash, _new_hash_map_capacity(n))
        # finalAssignmentByMember: member index -> HashSet<TopicIdPartition>
        self.by_member: dict[int, JavaHashMap[TopicPartition, None]] = {}
        self.unfilled: set[int] = set()
        self.overfilled: set[int] = set()

    def build(self) -> dict[str, _Assignment]:
        if not self.subscribed:
            return {}
        self._revoke_unassignable()
        self._revoke_overfilled()
        self._revoke_overshared()
        for tp in self.targets:                 # partitions nobody holds enter the map now
            if self.by_partition.compute_if_absent(tp, None) is None:
                self.by_partition[tp] = JavaHashMap(int_hash)
        self._assign_remaining()
        return _final_target(self.member_ids, self.old, self.new)

    def _member_set(self, i: int) -> JavaHashMap[TopicPartition, None]:
        s = self.by_member.get(i)
        if s is None:
            s = self.by_member[i] = JavaHashMap(self.tp_hash)
        return s

    def _new_assignment(self, i: int) -> _Assignment:
        a = self.new.get(i)
        if a is None:
            a = self.new[i] = _deep_copy(self.old[i])
        return a

    def _revoke_unassignable(self) -> None:
        # oldGroupAssignment is keyed by member index in a map sized for every member:
        # ascending iteration.
        for i, old in enumerate(self.old):
            copy: _Assignment | None = None
            count = 0
            for topic, parts in old:
                if topic in self.subscribed_set:
                    for p in parts:
                        count += 1
                        members = self.by_partition.compute_if_absent((topic, p), None)
                        if members is None:
                            members = self.by_partition[(topic, p)] = JavaHashMap(int_hash)
                        members[i] = None
                        self._member_set(i)[(topic, p)] = None
                        if count >= self.desired[i] and copy is None:
                            copy = _deep_copy(old)      # it may lose partitions later
                else:
                    if copy is None:
                        copy = _deep_copy(old)
                    del copy[topic]                     # the whole topic is revoked
            if copy is not None:
                self.new[i] = copy
            if count < self.desired[i]:
                self.unfilled.add(i)
            elif count > self.desired[i]:
                self.overfilled.add(i)

    def _revoke_overfilled(self) -> None:
        for i in sorted(self.overfilled):
            desired = self.desired[i]
            mine = self.by_member[i]
            if len(mine) <= desired:
                continue
            for tp in list(mine):               # the HashSet's order; removal keeps the rest's
                self.new[i][tp[0]].discard(tp[1])
                self.by_partition[tp].pop(i, None)
                del mine[tp]
                if len(mine) == desired:
                    break

    def _revoke_overshared(self) -> None:
        for tp, members in self.by_partition.items():
            count = len(members)
            if count <= self.sharing:
                continue
            for i in list(members):
                parts = self._new_assignment(i).get(tp[0])
                if parts is not None and tp[1] in parts:
                    parts.remove(tp[1])
                    count -= 1
                    del members[i]
                    self.by_member[i].pop(tp, None)
                    self.unfilled.add(i)
                if count <= self.sharing:
                    break

    def _assign_remaining(self) -> None:
        if not self.unfilled:
            return
        it = _MemberIterator(self.unfilled)
        assigned_this_pass = False
        for tp, members in self.by_partition.items():
            if len(members) < self.sharing:
                # ``members`` is not updated below: Kafka only checks it against members that
                # held the partition before this step.
                to_make = self.sharing - len(members)
                while to_make > 0:
                    if not it.has_next():
                        if not assigned_this_pass:
                            break               # nobody left can take this partition
                        it = _MemberIterator(self.unfilled)
                        assigned_this_pass = False
                    i = it.next()
                    if i not in members:
                        self._new_assignment(i).setdefault(tp[0], set()).add(tp[1])
                        mine = self._member_set(i)
                        mine[tp] = None
                        to_make -= 1
                        assigned_this_pass = True
                        if len(mine) >= self.desired[i]:
                            it.remove()
            if not self.unfilled:
                break


# ---------------------------------------------------------------------------------------------
# SimpleHeterogeneousAssignmentBuilder
# ---------------------------------------------------------------------------------------------

class _Heterogeneous:
    def __init__(self, inp: AssignmentInput) -> None:
        self.inp = inp
        self.keys = TopicKeys(inp)
        self.member_ids = member_map_order(inp)
        self.old = _old_assignments(inp, self.member_ids, self.keys)
        self.old_by_topic = [dict(o) for o in self.old]
        self.new: dict[int, _Assignment] = {}
        # subscribedMembersByTopic: member indices in member-map order, i.e. ascending.
        self.subscribers: dict[str, list[int]] = {}
        for i, mid in enumerate(self.member_ids):
            for t in inp.topics[mid]:
                self.subscribers.setdefault(t, []).append(i)

    def build(self) -> dict[str, _Assignment]:
        if not self.subscribers:
            return {}
        # Kafka visits the topics in HashSet<Uuid> order, but each topic's builder only touches
        # that topic's partitions, so the order cannot change the result.
        for topic, subscribers in self.subscribers.items():
            _TopicBuilder(self, topic, self.inp.partitions.get(topic, 0), subscribers).build()
        return _final_target(self.member_ids, self.old, self.new)


class _TopicBuilder:
    """``TopicAssignmentPartialBuilder``: the homogeneous steps, for one topic and its
    subscribers. Its maps are keyed by partition index or member index (Integer keys below the
    table size: ascending iteration); the partitions a member gives up first follow its
    ``HashSet<Integer>``."""

    def __init__(self, parent: _Heterogeneous, topic: str, partitions: int,
                 subscribers: list[int]) -> None:
        self.parent = parent
        self.topic = topic
        self.partitions = partitions
        self.subscribers = subscribers
        self.sharing = _desired_sharing(len(subscribers), partitions)
        # Members not subscribed to the topic keep a desired count of 0: whatever they still
        # hold of it is revoked.
        self.desired = [0] * len(parent.member_ids)
        counts = desired_assignment_counts(self.sharing, partitions, len(subscribers))
        for i, count in zip(subscribers, counts):
            self.desired[i] = count
        self.by_partition: dict[int, JavaHashMap[int, None]] = {}
        self.by_member: dict[int, JavaHashMap[int, None]] = {}

    def build(self) -> None:
        self._revoke_unassignable()
        self._revoke_overfilled()
        self._revoke_overshared()
        for p in range(self.partitions):
            self.by_partition.setdefault(p, JavaHashMap(int_hash))
        self._assign_remaining()

    def _new_assignment(self, i: int) -> _Assignment:
        parent = self.parent
        a = parent.new.get(i)
        if a is None:
            a = parent.new[i] = _deep_copy(parent.old[i])
        return a

    def _revoke_unassignable(self) -> None:
        # Kafka's "topic no longer subscribed" branch cannot run here: the topic comes from the
        # union of the subscriptions.
        for i, old in enumerate(self.parent.old_by_topic):
            for p in old.get(self.topic, ()):
                self.by_partition.setdefault(p, JavaHashMap(int_hash))[i] = None
                self.by_member.setdefault(i, JavaHashMap(int_hash))[p] = None

    def _revoke_overfilled(self) -> None:
        # Each member gives up only its own partitions: the member order does not matter.
        for i, mine in self.by_member.items():
            desired = self.desired[i]
            for p in list(mine):
                if len(mine) <= desired:
                    break
                self.by_partition[p].pop(i, None)
                del mine[p]
                self._new_assignment(i)[self.topic].discard(p)

    def _revoke_overshared(self) -> None:
        for p in sorted(self.by_partition):
            members = self.by_partition[p]
            count = len(members)
            if count <= self.sharing:
                continue
            for i in list(members):
                parts = self._new_assignment(i).get(self.topic)
                if parts is not None and p in parts:
                    parts.remove(p)
                    count -= 1
                    del members[i]
                    self.by_member[i].pop(p, None)
                if count <= self.sharing:
                    break

    def _assign_remaining(self) -> None:
        unfilled = {i for i in self.subscribers
                    if len(self.by_member.get(i, ())) < self.desired[i]}
        it = _MemberIterator(unfilled)
        assigned_this_pass = False
        for p in sorted(self.by_partition):
            members = self.by_partition[p]
            if len(members) < self.sharing:
                to_make = self.sharing - len(members)
                while to_make > 0:
                    if not it.has_next():
                        if not assigned_this_pass:
                            break
                        it = _MemberIterator(unfilled)
                        assigned_this_pass = False
                    i = it.next()
                    if i not in members:
                        self._new_assignment(i).setdefault(self.topic, set()).add(p)
                        mine = self.by_member.setdefault(i, JavaHashMap(int_hash))
                        mine[p] = None
                        to_make -= 1
                        assigned_this_pass = True
                        if len(mine) >= self.desired[i]:
                            it.remove()
            if not unfilled:
                break
