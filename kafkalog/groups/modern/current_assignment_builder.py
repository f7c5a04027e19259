"""``CurrentAssignmentBuilder``: one reconciliation step of a KIP-848 member towards its target.

Ported from Kafka 4.0's ``modern.consumer.CurrentAssignmentBuilder``. The rules, per topic:

* kept = held ∩ target; to revoke = held - kept; to assign = target - kept, minus the partitions
  another member still holds or revokes (their *partition epoch* is set: "unreleased");
* while something is to be revoked **and the member still reports owning it**, the member stays
  at its epoch in ``UNREVOKED_PARTITIONS`` holding only the kept partitions (the response tells it
  to revoke the rest);
* otherwise it moves to the target epoch holding kept + to assign, in ``UNRELEASED_PARTITIONS``
  if something was held back, else ``STABLE``.

``owned`` is what the member reported in its heartbeat (``TopicPartitions``): None when the
field was absent (a partial heartbeat), which counts as still owning everything.

>>> from kafkalog.groups.modern.consumer_group import ConsumerGroupMember, MemberState
>>> m = ConsumerGroupMember("m", member_epoch=1, assigned_partitions={"T": frozenset({0, 1})})
>>> n = build(m, 2, {"T": frozenset({1, 2})}, lambda t, p: -1, [("T", [0, 1])])
>>> n.state.name, n.member_epoch, dict(n.assigned_partitions), dict(n.partitions_pending_revocation)
('UNREVOKED_PARTITIONS', 1, {'T': frozenset({1})}, {'T': frozenset({0})})
>>> n = build(n, 2, {"T": frozenset({1, 2})}, lambda t, p: -1, [("T", [1])])
>>> n.state.name, n.member_epoch, sorted(n.assigned_partitions["T"])
('STABLE', 2, [1, 2])
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from .consumer_group import ConsumerGroupMember, MemberState

__all__ = ["build", "FencedMemberEpoch"]

Owned = Iterable[tuple[str, Iterable[int]]] | None


class FencedMemberEpoch(Exception):
    """``FencedMemberEpochException``: the member must drop its partitions and rejoin."""


def _owns_any(owned: Owned, assignment: Mapping[str, frozenset[int]]) -> bool:
    """``ownsRevokedPartitions``: None (not reported) owns everything."""
    if owned is None:
        return True
    for tid, parts in owned:
        pending = assignment.get(tid)
        if pending and any(p in pending for p in parts):
            return True
    return False


def build(member: ConsumerGroupMember, target_epoch: int,
          target: Mapping[str, frozenset[int]],
          current_partition_epoch: Callable[[str, int], int],
          owned: Owned) -> ConsumerGroupMember:
    """The member after one reconciliation step (``CurrentAssignmentBuilder.build``); the same
    object when nothing changes.

    Raises
    ------
    FencedMemberEpoch
        A member in an unknown state that still reports partitions.
    """
    owned = None if owned is None else [(t, list(ps)) for t, ps in owned]
    state = member.state
    if state == MemberState.STABLE:
        if member.member_epoch != target_epoch:
            return _next(member, member.member_epoch, target_epoch, target,
                         current_partition_epoch, owned)
        return member
    if state == MemberState.UNREVOKED_PARTITIONS:
        if _owns_any(owned, member.partitions_pending_revocation):
            return member
        return _next(member, member.member_epoch + 1, target_epoch, target,
                     current_partition_epoch, owned)
    if state == MemberState.UNRELEASED_PARTITIONS:
        return _next(member, member.member_epoch, target_epoch, target,
                     current_partition_epoch, owned)
    if owned is None or owned:
        raise FencedMemberEpoch("The consumer group member is in a unknown state. The member "
                                "must abandon all its partitions and rejoin.")
    return _next(member, target_epoch, target_epoch, target, current_partition_epoch, owned)


def _next(member: ConsumerGroupMember, member_epoch: int, target_epoch: int,
          target: Mapping[str, frozenset[int]], current_partition_epoch: Callable[[str, int], int],
          owned: Owned) -> ConsumerGroupMember:
    """``computeNextAssignment``."""
    unreleased = False
    assigned: dict[str, frozenset[int]] = {}
    revoking: dict[str, frozenset[int]] = {}
    pending: dict[str, frozenset[int]] = {}
    held_by_topic = member.assigned_partitions
    for tid in set(target) | set(held_by_topic):
        goal = target.get(tid, frozenset())
        held = held_by_topic.get(tid, frozenset())
        kept = held & goal
        revoke = held - kept
        to_assign = goal - kept
        free = frozenset(p for p in to_assign if current_partition_epoch(tid, p) == -1)
        if free != to_assign:
            unreleased = True
        if kept:
            assigned[tid] = kept
        if revoke:
            revoking[tid] = revoke
        if free:
            pending[tid] = free
    if revoking and _owns_any(owned, revoking):
        # stay at this epoch until the member confirms the revocation
        return member.with_epoch(member_epoch, state=MemberState.UNREVOKED_PARTITIONS,
                                 assigned_partitions=assigned,
                                 partitions_pending_revocation=revoking)
    for tid, parts in pending.items():
        assigned[tid] = assigned.get(tid, frozenset()) | parts
    state = MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE
    return member.with_epoch(target_epoch, state=state, assigned_partitions=assigned,
                             partitions_pending_revocation={})
