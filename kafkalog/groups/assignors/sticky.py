"""The consumer's ``sticky`` and ``cooperative-sticky`` assignors.

Ported from clients/src/main/java/org/apache/kafka/clients/consumer/internals/
AbstractStickyAssignor.java, StickyAssignor.java and CooperativeStickyAssignor.java (Kafka 3.9),
rack-aware as since Kafka 3.5 (KIP-881).

``AbstractStickyAssignor.assignPartitions`` first reads every member's previous assignment
(``allSubscriptionsEqual``): a partition claimed by two members of the same generation is
invalidated (claimed by nobody), between different generations the higher one keeps it. Then:

* all members subscribed to the same topics -> ``ConstrainedAssignmentBuilder``: each member
  keeps up to its quota of owned partitions (``minQuota = total // members``; the first
  ``total % members`` members, in the iteration order of Kafka's ``consumerToOwnedPartitions``
  ``HashMap``, that own at least ``maxQuota`` keep ``maxQuota``), the rest is dealt round-robin to
  the members below their quota, sorted by member id;
* otherwise -> ``GeneralAssignmentBuilder``: keep what is still valid, give each unassigned
  partition (topics with the fewest potential members first) to the least loaded member that
  can take it, then move partitions from the most to the least loaded members while the
  assignment is not balanced, preferring to return a partition to its previous owner, and undo
  the moves if they did not improve the balance score.

Racks (``RackInfo``): when members have a ``client.rack`` that holds replicas and some partition
has replicas on only a subset of the racks (``useRackAwareAssignment``), a member keeps only the
owned partitions with a replica on its rack; the constrained builder first deals the unassigned
partitions (those with the fewest members on their replicas' racks first) round-robin to
below-quota members on a matching rack (``assignRackAwareRoundRobin``), then the rest as above;
the general builder first gives each partition to the least loaded member on a matching rack,
and while balancing prefers to move a partition away from a rack-matching owner only if a less
loaded member on a matching rack exists. Members without a rack match every partition.

``cooperative-sticky`` then removes from the new assignment every partition that moves to a new
owner in this rebalance: the old owner must revoke it first, and it is handed over in the
follow-up rebalance (``CooperativeStickyAssignor.adjustAssignment``).

>>> from kafkalog.groups.assignors.model import AssignmentInput
>>> inp = AssignmentInput.build({"c1": ["t"], "c2": ["t"]}, {"t": 6},
...                             owned={"c1": [("t", 0), ("t", 1)], "c2": [("t", 2), ("t", 3)]})
>>> assign_sticky(inp)
{'c1': [('t', 0), ('t', 1), ('t', 4)], 'c2': [('t', 2), ('t', 3), ('t', 5)]}
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

from ..java_order import (
    JavaHashMap,
    java_sorted,
    java_string_key,
    string_hash,
    topic_partition_hash,
)
from .model import DEFAULT_GENERATION, AssignmentInput, TopicPartition, use_rack_aware_assignment

__all__ = ["assign_sticky", "assign_cooperative_sticky", "StickyResult"]


class StickyResult:
    """What one run of the abstract sticky algorithm produced.

    ``assignment`` maps members to partitions in Kafka's list order;
    ``transferring`` is ``partitionsTransferringOwnership`` (None when the general builder ran:
    the cooperative assignor then computes it from the owned partitions).
    """

    __slots__ = ("assignment", "transferring", "max_generation", "owned")

    def __init__(self, assignment: dict[str, list[TopicPartition]],
                 transferring: dict[TopicPartition, str] | None, max_generation: int,
                 owned: dict[str, list[TopicPartition]] | None = None) -> None:
        self.assignment = assignment
        self.transferring = transferring
        self.max_generation = max_generation
        #: the members' previous partitions as the assignor received them
        self.owned = owned or {}


def _tp_hash(tp: TopicPartition) -> int:
    return topic_partition_hash(tp[0], tp[1])


def _topic_key(topic: str) -> bytes:
    return java_string_key(topic)


class _SortedMembers:
    """Kafka's ``TreeSet<String>`` ordered by (number of assigned partitions, member id)."""

    def __init__(self, sizes: dict[str, list[TopicPartition]]) -> None:
        self._sizes = sizes
        self._keys: list[tuple[int, bytes, str]] = []
        self._of: dict[str, tuple[int, bytes, str]] = {}

    def add(self, member: str) -> None:
        if member in self._of:
            return
        k = (len(self._sizes[member]), java_string_key(member), member)
        bisect.insort(self._keys, k)
        self._of[member] = k

    def remove(self, member: str) -> None:
        k = self._of.pop(member, None)
        if k is None:
            return
        i = bisect.bisect_left(self._keys, k)
        del self._keys[i]

    def __iter__(self):  # type: ignore[no-untyped-def]
        return (k[2] for k in list(self._keys))

    def first(self) -> str:
        return self._keys[0][2]

    def last(self) -> str:
        return self._keys[-1][2]


class _PartitionMovements:
    """``AbstractStickyAssignor.PartitionMovements``: where each partition moved during this
    rebalance, so that moving a partition back and forth between two members is avoided."""

    def __init__(self) -> None:
        self.by_topic: dict[str, dict[tuple[str, str], JavaHashMap[TopicPartition, None]]] = {}
        self.movements: dict[TopicPartition, tuple[str, str]] = {}

    def _remove_record(self, tp: TopicPartition) -> tuple[str, str]:
        pair = self.movements.pop(tp)
        per_topic = self.by_topic[tp[0]]
        del per_topic[pair][tp]
        if not len(per_topic[pair]):
            del per_topic[pair]
        if not per_topic:
            del self.by_topic[tp[0]]
        return pair

    def _add_record(self, tp: TopicPartition, pair: tuple[str, str]) -> None:
        self.movements[tp] = pair
        per_topic = self.by_topic.setdefault(tp[0], {})
        if pair not in per_topic:
            per_topic[pair] = JavaHashMap(_tp_hash)      # new HashSet<>()
        per_topic[pair][tp] = None

    def move(self, tp: TopicPartition, old: str, new: str) -> None:
        if tp in self.movements:
            src, _dst = self._remove_record(tp)
            if src != new:
                self._add_record(tp, (src, new))
        else:
            self._add_record(tp, (old, new))

    def actual_partition_to_move(self, tp: TopicPartition, old: str, new: str) -> TopicPartition:
        per_topic = self.by_topic.get(tp[0])
        if per_topic is None:
            return tp
        if tp in self.movements:
            old = self.movements[tp][0]
        reverse = per_topic.get((new, old))
        if reverse is None:
            return tp
        return reverse.first_key()           # HashSet.iterator().next()


def member_partitions(inp: AssignmentInput, cooperative: bool) -> dict[str, list[TopicPartition]]:
    """Each member's previous partitions as the assignor receives them (``memberData``).

    ``sticky`` reads them from its user data, written by ``serializeTopicPartitionAssignment``
    (grouped by topic with ``CollectionUtils.groupPartitionsByTopic``: topics in ``HashMap``
    order); ``cooperative-sticky`` from the subscription's owned partitions, which
    ``ConsumerProtocol.serializeSubscription`` sorts by topic and partition.
    """
    out: dict[str, list[TopicPartition]] = {}
    for m in inp.members:
        tps = inp.owned[m]
        if cooperative:
            out[m] = sorted(tps, key=lambda tp: (_topic_key(tp[0]), tp[1]))
            continue
        by_topic: dict[str, list[int]] = {}
        for t, p in tps:
            by_topic.setdefault(t, []).append(p)
        topics = JavaHashMap.ordered(by_topic, string_hash, compute=True)
        out[m] = [(t, p) for t in topics for p in by_topic[t]]
    return out


class _Prepared:
    """The result of ``allSubscriptionsEqual``."""

    def __init__(self, inp: AssignmentInput, member_data: dict[str, list[TopicPartition]]
                 ) -> None:
        self.member_data = member_data
        self.all_equal = True
        self.max_generation = DEFAULT_GENERATION
        self.owned: dict[str, list[TopicPartition]] = {}      # consumerToOwnedPartitions
        self.multiple_owners: set[TopicPartition] = set()
        all_topics = inp.partitions
        subscribed: set[str] = set()
        previous_owner: dict[TopicPartition, str] = {}
        gens = inp.generations
        # the consumer leader holds the subscriptions in a HashMap
        for consumer in JavaHashMap.ordered(inp.members, string_hash):
            topics = inp.topics[consumer]
            if not subscribed:
                subscribed.update(topics)
            elif self.all_equal and not (len(topics) == len(subscribed)
                                         and subscribed.issuperset(topics)):
                self.all_equal = False
            generation = gens[consumer]
            member_generation = DEFAULT_GENERATION if generation is None else generation
            self.max_generation = max(self.max_generation, member_generation)
            owned: list[TopicPartition] = []
            self.owned[consumer] = owned
            for tp in member_data[consumer]:
                if tp[0] not in all_topics:
                    continue
                other = previous_owner.get(tp)
                if other is None:
                    owned.append(tp)
                    previous_owner[tp] = consumer
                    continue
                other_gen = gens[other]
                other_generation = DEFAULT_GENERATION if other_gen is None else other_gen
                if member_generation == other_generation:
                    # two members of one generation claim it: nobody keeps it
                    self.multiple_owners.add(tp)
                    _remove_first(self.owned[other], tp)
                    previous_owner[tp] = consumer
                elif member_generation > other_generation:
                    owned.append(tp)
                    _remove_first(self.owned[other], tp)
                    previous_owner[tp] = consumer


class _RackInfo:
    """``AbstractStickyAssignor.RackInfo``: the racks used for this assignment (both maps empty
    when rack-aware assignment is not used)."""

    def __init__(self, inp: AssignmentInput) -> None:
        consumers_by_rack: dict[str, int] = {}
        for m in inp.members:
            rack = inp.consumer_racks.get(m)
            if rack is not None:
                consumers_by_rack[rack] = consumers_by_rack.get(rack, 0) + 1
        partition_racks: dict[TopicPartition, frozenset[str]] = {}
        all_partition_racks: set[str] = set()
        if consumers_by_rack:
            for t, racks in inp.partition_racks.items():
                for p, r in enumerate(racks):
                    partition_racks[(t, p)] = r
                    all_partition_racks.update(r)
        if use_rack_aware_assignment(inp, consumers_by_rack, all_partition_racks,
                                     partition_racks.values()):
            self.consumer_racks: dict[str, str] = {
                m: r for m in inp.members if (r := inp.consumer_racks.get(m)) is not None}
            self.partition_racks = partition_racks
        else:
            self.consumer_racks = {}
            self.partition_racks = {}
        # computed from all replica racks even when racks are not used (then every partition
        # counts the same, and sorting by it changes nothing)
        self.num_consumers_by_partition = {
            tp: sum(consumers_by_rack.get(r, 0) for r in racks)
            for tp, racks in partition_racks.items()}

    def racks_mismatch(self, consumer: str, tp: TopicPartition) -> bool:
        rack = self.consumer_racks.get(consumer)
        if rack is None:
            return False
        replica_racks = self.partition_racks.get(tp)
        return replica_racks is None or rack not in replica_racks

    def sort_partitions_by_rack_consumers(self, partitions: list[TopicPartition]
                                          ) -> list[TopicPartition]:
        if not self.num_consumers_by_partition:
            return partitions
        counts = self.num_consumers_by_partition
        return sorted(partitions, key=lambda tp: counts.get(tp, 0))     # stable, as List.sort

    def next_rack_consumer(self, tp: TopicPartition, consumers: list[str], first: int) -> int:
        racks = self.partition_racks.get(tp)
        if not racks:
            return -1
        n = len(consumers)
        for i in range(n):
            index = (first + i) % n
            rack = self.consumer_racks.get(consumers[index])
            if rack is not None and rack in racks:
                return index
        return -1


def _remove_first(items: list[TopicPartition], tp: TopicPartition) -> None:
    try:
        items.remove(tp)
    except ValueError:
        pass


def _all_partitions(partitions: dict[str, int], topics: Iterable[str]) -> list[TopicPartition]:
    return [(t, p) for t in topics for p in range(partitions[t])]


# ---------------------------------------------------------------------------------------------
# ConstrainedAssignmentBuilder
# ---------------------------------------------------------------------------------------------

def _constrained(inp: AssignmentInput, prep: _Prepared, rack_info: _RackInfo) -> StickyResult:
    partitions = inp.partitions
    total = sum(partitions.values())
    n_members = len(prep.owned)
    min_quota = total // n_members
    max_quota = -(-total // n_members)
    expected_over = total % n_members
    current_over = 0
    assignment: dict[str, list[TopicPartition]] = {m: [] for m in prep.owned}
    assigned: list[TopicPartition] = []
    maybe_revoked: dict[TopicPartition, str] = {}
    transferring: dict[TopicPartition, str] = {}
    under: list[str] = []            # unfilledMembersWithUnderMinQuotaPartitions
    exact: list[str] = []            # unfilledMembersWithExactlyMinQuotaPartitions

    # assignOwnedPartitions, in the iteration order of the consumerToOwnedPartitions HashMap
    for consumer in JavaHashMap.ordered(prep.owned, string_hash):
        owned = prep.owned[consumer]
        if rack_info.consumer_racks:
            matching = []
            for tp in owned:
                if rack_info.racks_mismatch(consumer, tp):
                    maybe_revoked[tp] = consumer
                else:
                    matching.append(tp)
            owned = matching
        owned = sorted(owned, key=lambda tp: (tp[1], _topic_key(tp[0])))
        if prep.multiple_owners:
            owned = [tp for tp in owned if tp not in prep.multiple_owners]
        mine = assignment[consumer]
        if len(owned) < min_quota:
            mine.extend(owned)
            assigned.extend(owned)
            under.append(consumer)
        elif len(owned) >= max_quota and current_over < expected_over:
            current_over += 1
            if current_over == expected_over:
                exact.clear()
            mine.extend(owned[:max_quota])
            assigned.extend(owned[:max_quota])
            for tp in owned[max_quota:]:
                maybe_revoked[tp] = consumer
        else:
            mine.extend(owned[:min_quota])
            assigned.extend(owned[:min_quota])
            for tp in owned[min_quota:]:
                maybe_revoked[tp] = consumer
            if current_over < expected_over:
                exact.append(consumer)

    # getUnassignedPartitions: all partitions, topics in Java order, minus the kept ones
    kept = set(assigned)
    unassigned = [tp for tp in _all_partitions(partitions, java_sorted(partitions))
                  if tp not in kept]
    under = java_sorted(under)
    exact = java_sorted(exact)
    unassigned = rack_info.sort_partitions_by_rack_consumers(unassigned)

    def assign_new(tp: TopicPartition, consumer: str) -> int:
        """``assignNewPartition``"""
        mine = assignment[consumer]
        mine.append(tp)
        owner = maybe_revoked.get(tp)
        if (owner is not None and owner != consumer) or tp in prep.multiple_owners:
            transferring[tp] = consumer
        return len(mine)

    # assignRackAwareRoundRobin
    if rack_info.consumer_racks:
        remaining: list[TopicPartition] = []
        next_unfilled = 0
        for tp in unassigned:
            chosen: str | None = None
            next_index = rack_info.next_rack_consumer(tp, under, next_unfilled)
            if next_index >= 0:
                chosen = under[next_index]
                count = len(assignment[chosen]) + 1
                if count >= min_quota:
                    under.remove(chosen)
                    if count < max_quota and current_over < expected_over:
                        exact.append(chosen)
                else:
                    next_index += 1
                next_unfilled = 0 if not under else next_index % len(under)
            elif exact:
                first = rack_info.next_rack_consumer(tp, exact, 0)
                if first >= 0:
                    chosen = exact[first]
                    if len(assignment[chosen]) + 1 == max_quota:
                        del exact[first]
                        current_over += 1
                        if current_over == expected_over:
                            exact.clear()
            if chosen is not None:
                assign_new(tp, chosen)
            else:
                remaining.append(tp)
        unassigned = remaining

    # assignRoundRobin. ``cursor`` is the LinkedList iterator over ``under``: the index of the
    # element next() returns; remove() deletes the element last returned.
    cursor = 0
    last_from_iterator = False
    for tp in unassigned:
        if cursor < len(under):
            consumer = under[cursor]
            cursor += 1
            last_from_iterator = True
        elif not under and not exact:
            raise RuntimeError("No more unfilled consumers to be assigned.")  # Kafka: ISE
        elif not under:
            consumer = exact.pop(0)
            last_from_iterator = False
        else:
            cursor = 0
            consumer = under[cursor]
            cursor += 1
            last_from_iterator = True
        count = assign_new(tp, consumer)
        if count == min_quota:
            if last_from_iterator:
                cursor -= 1
                del under[cursor]
            exact.append(consumer)
        elif count == max_quota:
            current_over += 1
    # verifyUnfilledMembers
    if under and current_over != expected_over:
        raise RuntimeError("We haven't reached the expected number of members with more than "
                             "the minQuota partitions, but no more partitions to be assigned")
    for consumer in under:
        if len(assignment[consumer]) != min_quota:
            raise RuntimeError(f"Consumer: [{consumer}] doesn't reach minQuota partitions, and no "
                               "more partitions to be assigned")
    return StickyResult(assignment, transferring, prep.max_generation)


# ---------------------------------------------------------------------------------------------
# GeneralAssignmentBuilder
# ---------------------------------------------------------------------------------------------

class _General:
    def __init__(self, inp: AssignmentInput, prep: _Prepared, rack_info: _RackInfo) -> None:
        self.inp = inp
        self.prep = prep
        self.rack_info = rack_info
        self.partitions = inp.partitions
        self.total = sum(self.partitions.values())
        self.current = prep.owned                  # currentAssignment (mutated)
        self.topic_consumers: dict[str, list[str]] = {t: [] for t in self.partitions}
        self.consumer_topics: dict[str, list[str]] = {}
        self.consumer_topic_sets: dict[str, set[str]] = {}
        self.members_in_map_order = JavaHashMap.ordered(inp.members, string_hash)
        for consumer in self.members_in_map_order:
            topics = [t for t in inp.topics[consumer] if t in self.partitions]
            self.consumer_topics[consumer] = topics
            self.consumer_topic_sets[consumer] = set(topics)
            for t in topics:
                self.topic_consumers[t].append(consumer)
            self.current.setdefault(consumer, [])
        self.partition_consumer: dict[TopicPartition, str] = {}
        for consumer, tps in self.current.items():
            for tp in tps:
                self.partition_consumer[tp] = consumer
        topics = sorted(self.topic_consumers,
                        key=lambda t: (len(self.topic_consumers[t]), _topic_key(t)))
        self.topic_rank = {t: i for i, t in enumerate(topics)}
        self.sorted_all_partitions = _all_partitions(self.partitions, topics)
        self.sorted_members = _SortedMembers(self.current)
        self.revocation_required = False
        self.movements = _PartitionMovements()

    # -- helpers ----------------------------------------------------------------------------

    def _max_assignment_size(self, topics: list[str]) -> int:
        if len(topics) == len(self.partitions):
            return self.total
        return sum(self.partitions[t] for t in topics)

    def _size(self, consumer: str) -> int:
        return len(self.current[consumer])

    # -- build ------------------------------------------------------------------------------

    def build(self) -> dict[str, list[TopicPartition]]:
        prev = self._prepopulate_current_assignments()
        assigned = self._assign_owned_partitions()
        unassigned = self._unassigned_partitions(assigned)
        for consumer in self.current:
            self.sorted_members.add(consumer)
        self._balance(prev, unassigned)
        return self.current

    def _prepopulate_current_assignments(self) -> dict[TopicPartition, tuple[str, int]]:
        """The previous owners from older generations (``prepopulateCurrentAssignments``)."""
        prev: dict[TopicPartition, tuple[str, int]] = {}
        max_gen = self.prep.max_generation
        for consumer in self.members_in_map_order:
            gen = self.inp.generations[consumer]
            if gen is not None and gen < max_gen:
                self._update_prev(prev, self.prep.member_data[consumer], consumer, gen)
            elif gen is None and max_gen > DEFAULT_GENERATION:
                self._update_prev(prev, self.prep.member_data[consumer], consumer,
                                  DEFAULT_GENERATION)
        return prev

    @staticmethod
    def _update_prev(prev: dict[TopicPartition, tuple[str, int]], tps: list[TopicPartition],
                     consumer: str, generation: int) -> None:
        for tp in tps:
            old = prev.get(tp)
            if old is None or generation > old[1]:
                prev[tp] = (consumer, generation)

    def _assign_owned_partitions(self) -> list[TopicPartition]:
        assigned: list[TopicPartition] = []
        subs = {m: set(self.inp.topics[m]) for m in self.inp.members}
        for consumer in list(self.current):
            if consumer not in subs:
                for tp in self.current.pop(consumer):
                    self.partition_consumer.pop(tp, None)
                continue
            keep: list[TopicPartition] = []
            for tp in self.current[consumer]:
                if tp[0] not in self.topic_consumers:
                    self.partition_consumer.pop(tp, None)
                elif tp[0] not in subs[consumer] or self.rack_info.racks_mismatch(consumer, tp):
                    self.revocation_required = True
                else:
                    keep.append(tp)
                    assigned.append(tp)
            self.current[consumer][:] = keep
        return assigned

    def _unassigned_partitions(self, assigned: list[TopicPartition]) -> list[TopicPartition]:
        if not assigned:
            return self.sorted_all_partitions
        taken = set(assigned)
        return [tp for tp in self.sorted_all_partitions if tp not in taken]

    def _is_balanced(self) -> bool:
        sizes = self.current
        if len(sizes[self.sorted_members.first()]) >= len(sizes[self.sorted_members.last()]) - 1:
            return True
        owner: dict[TopicPartition, str] = {}
        for consumer, tps in sizes.items():
            for tp in tps:
                owner[tp] = consumer
        for consumer in self.sorted_members:
            mine = sizes[consumer]
            count = len(mine)
            topics = self.consumer_topics[consumer]
            if count == self._max_assignment_size(topics):
                continue
            mine_set = set(mine)
            for topic in topics:
                for p in range(self.partitions[topic]):
                    tp = (topic, p)
                    if tp not in mine_set:
                        other = owner.get(tp)
                        if other is not None and count + 1 < len(sizes[other]):
                            return False
        return True

    @staticmethod
    def _balance_score(assignment: dict[str, list[TopicPartition]]) -> int:
        sizes = sorted(len(v) for v in assignment.values())
        score = 0
        running = 0
        for i, s in enumerate(sizes):       # sum over pairs of |a - b|, in O(n log n)
            score += s * i - running
            running += s
        return score

    def _maybe_assign_partition(self, tp: TopicPartition, rack_info: _RackInfo | None) -> bool:
        for consumer in self.sorted_members:
            if tp[0] in self.consumer_topic_sets[consumer] and (
                    rack_info is None or not rack_info.racks_mismatch(consumer, tp)):
                self.sorted_members.remove(consumer)
                self.current[consumer].append(tp)
                self.partition_consumer[tp] = consumer
                self.sorted_members.add(consumer)
                return True
        return False

    def _topic_can_move(self, topic: str) -> bool:
        return len(self.topic_consumers[topic]) >= 2

    def _consumer_can_move(self, consumer: str) -> bool:
        tps = self.current[consumer]
        if len(tps) < self._max_assignment_size(self.consumer_topics[consumer]):
            return True
        return any(self._topic_can_move(tp[0]) for tp in tps)

    def _balance(self, prev: dict[TopicPartition, tuple[str, int]],
                 unassigned: list[TopicPartition]) -> None:
        initializing = not self.current[self.sorted_members.last()]
        # first with rack matching, then whatever is left without
        to_assign = unassigned
        if self.rack_info.consumer_racks:
            to_assign = []
            for tp in unassigned:
                if not self.topic_consumers[tp[0]] or \
                        not self._maybe_assign_partition(tp, self.rack_info):
                    to_assign.append(tp)
        for tp in to_assign:
            if not self.topic_consumers[tp[0]]:
                continue
            self._maybe_assign_partition(tp, None)
        fixed_topics = {t for t in self.topic_consumers if not self._topic_can_move(t)}
        if fixed_topics:
            self.sorted_all_partitions = [tp for tp in self.sorted_all_partitions
                                          if tp[0] not in fixed_topics]
            unassigned = [tp for tp in unassigned if tp[0] not in fixed_topics]
        fixed: dict[str, list[TopicPartition]] = {}
        for consumer in list(self.consumer_topics):
            if not self._consumer_can_move(consumer):
                self.sorted_members.remove(consumer)
                fixed[consumer] = self.current.pop(consumer)
        pre = {c: list(tps) for c, tps in self.current.items()}
        pre_owner = dict(self.partition_consumer)
        if not self.revocation_required:
            self._perform_reassignments(unassigned, prev)
        performed = self._perform_reassignments(self.sorted_all_partitions, prev)
        if not initializing and performed and \
                self._balance_score(self.current) >= self._balance_score(pre):
            self.current.clear()
            self.current.update({c: list(tps) for c, tps in pre.items()})
            self.partition_consumer = pre_owner
            # the TreeSet is re-sorted by the restored sizes when members are re-added
            self.sorted_members = _SortedMembers(self.current)
            for consumer in self.current:
                self.sorted_members.add(consumer)
        for consumer, tps in fixed.items():
            self.current[consumer] = tps
            self.sorted_members.add(consumer)

    def _perform_reassignments(self, reassignable: list[TopicPartition],
                               prev: dict[TopicPartition, tuple[str, int]]) -> bool:
        performed = False
        while True:
            modified = False
            for tp in reassignable:
                if self._is_balanced():
                    break
                consumer = self.partition_consumer.get(tp)
                if consumer is None or consumer not in self.current:
                    continue
                size = len(self.current[consumer])
                before = prev.get(tp)
                if before is not None and before[0] in self.current and \
                        size > len(self.current[before[0]]) + 1:
                    self._reassign(tp, before[0])
                    performed = modified = True
                    continue
                # prefer a less loaded member on a rack of the partition's replicas
                racks = self.rack_info.consumer_racks
                consumer_rack = racks.get(consumer)
                found_rack_consumer = False
                if consumer_rack is not None:
                    partition_racks = self.rack_info.partition_racks[tp]
                    if partition_racks and consumer_rack in partition_racks:
                        for other in self.topic_consumers[tp[0]]:
                            other_rack = racks.get(other)
                            if other_rack is None or other_rack not in partition_racks:
                                continue
                            if other in self.current and size > len(self.current[other]) + 1:
                                self._reassign(tp, None)
                                performed = modified = True
                                found_rack_consumer = True
                                break
                if not found_rack_consumer:
                    for other in self.topic_consumers[tp[0]]:
                        if other in self.current and size > len(self.current[other]) + 1:
                            self._reassign(tp, None)
                            performed = modified = True
                            break
            if not modified:
                return performed

    def _reassign(self, tp: TopicPartition, new_consumer: str | None) -> None:
        if new_consumer is None:
            for candidate in self.sorted_members:
                if tp[0] in self.consumer_topic_sets[candidate]:
                    new_consumer = candidate
                    break
            if new_consumer is None:  # Kafka asserts it: the topic has >= 2 potential members
                raise RuntimeError(f"no member can take {tp[0]}-{tp[1]}")
        consumer = self.partition_consumer[tp]
        actual = self.movements.actual_partition_to_move(tp, consumer, new_consumer)
        old = self.partition_consumer[actual]
        self.sorted_members.remove(old)
        self.sorted_members.remove(new_consumer)
        self.movements.move(actual, old, new_consumer)
        self.current[old].remove(actual)
        self.current[new_consumer].append(actual)
        self.partition_consumer[actual] = new_consumer
        self.sorted_members.add(new_consumer)
        self.sorted_members.add(old)


def _run(inp: AssignmentInput, cooperative: bool) -> StickyResult:
    prep = _Prepared(inp, member_partitions(inp, cooperative))
    if not inp.members:
        return StickyResult({}, {}, prep.max_generation)
    if not inp.partitions:
        return StickyResult({m: [] for m in inp.members}, {}, prep.max_generation,
                            prep.member_data)
    rack_info = _RackInfo(inp)
    if prep.all_equal:
        result = _constrained(inp, prep, rack_info)
    else:
        result = StickyResult(_General(inp, prep, rack_info).build(), None, prep.max_generation)
    result.owned = prep.member_data
    return result


def _in_member_order(inp: AssignmentInput, assignment: dict[str, list[TopicPartition]]
                     ) -> dict[str, list[TopicPartition]]:
    return {m: list(assignment.get(m, [])) for m in inp.members}


def assign_sticky(inp: AssignmentInput) -> dict[str, list[TopicPartition]]:
    """``StickyAssignor``: the abstract sticky algorithm over the members' previous partitions
    (``owned``, the user data of Kafka's eager sticky assignor)."""
    return _in_member_order(inp, _run(inp, False).assignment)


def assign_cooperative_sticky(inp: AssignmentInput) -> dict[str, list[TopicPartition]]:
    """``CooperativeStickyAssignor``: the sticky result without the partitions that change owner
    in this rebalance (they are assigned after their previous owner revoked them)."""
    result = _run(inp, True)
    assignment = result.assignment
    transferring = result.transferring
    if transferring is None:
        transferring = _transferring_ownership(result.owned, assignment)
    for tp, consumer in transferring.items():
        _remove_first(assignment[consumer], tp)
    return _in_member_order(inp, assignment)


def _transferring_ownership(owned_by: dict[str, list[TopicPartition]],
                            assignment: dict[str, list[TopicPartition]]
                            ) -> dict[TopicPartition, str]:
    """``computePartitionsTransferringOwnership``: partitions newly assigned to one member that
    another member owned before."""
    added: dict[TopicPartition, str] = {}
    revoked: set[TopicPartition] = set()
    for consumer, tps in assignment.items():
        owned = owned_by.get(consumer, [])
        owned_set = set(owned)
        for tp in tps:
            if tp not in owned_set:
                added[tp] = consumer
        assigned_set = set(tps)
        revoked.update(tp for tp in owned if tp not in assigned_set)
    return {tp: c for tp, c in added.items() if tp in revoked}
