"""Partition leader election: Kafka's four algorithms, pure functions over replica lists.

Ported from ``PartitionLeaderElectionAlgorithms`` (``core/src/main/scala/kafka/controller/
PartitionStateMachine.scala``, Kafka 3.9; the ZooKeeper-mode controller), whose callers in
``Election.scala`` decide the live set:

==========================  ================================================================
``offline``                 the first replica, in assignment order, that is live and in the
                            ISR; with unclean election allowed and none such, the first live
                            replica (data written only to the old ISR may be lost)
``reassignment``            the first *target* replica (the reassignment's new assignment)
                            that is live and in the ISR
``preferred``               the first replica of the assignment, only if it is live and in
                            the ISR; otherwise no leader (the election is refused)
``controlled_shutdown``     the first replica that is live (brokers shutting down count as
                            live), in the ISR and not shutting down
==========================  ================================================================

The KRaft controller elects through ``PartitionChangeBuilder`` (see
:mod:`kafkalog.cluster.partition_change`), which keeps a current leader that is still valid and
has ELR and last-known-leader fallbacks; for a partition whose leader is gone, both controllers
pick the same replica.

Example
-------
>>> elect_leader([1, 2, 3], [2, 3], {1, 2, 3})
2
>>> elect_leader([1, 2, 3], [2, 3], {1, 2, 3}, reason="preferred") is None
True
>>> elect_leader([1, 2, 3], [2, 3], {1, 2, 3}, reason="controlled_shutdown", shutting_down={2})
3
>>> elect_leader([1, 2, 3], [], {3}, unclean=True)
3
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

__all__ = [
    "ELECTION_REASONS",
    "elect_leader",
    "offline_partition_leader_election",
    "reassign_partition_leader_election",
    "preferred_replica_partition_leader_election",
    "controlled_shutdown_partition_leader_election",
]

ELECTION_REASONS = ("offline", "reassignment", "preferred", "controlled_shutdown")


def offline_partition_leader_election(
    assignment: Sequence[int], isr: Collection[int], live_replicas: Collection[int],
    unclean_leader_election_enabled: bool,
) -> int | None:
    """``offlinePartitionLeaderElection``: first live ISR member in assignment order, else
    (unclean only) the first live replica."""
    for r in assignment:
        if r in live_replicas and r in isr:
            return r
    if unclean_leader_election_enabled:
        for r in assignment:
            if r in live_replicas:
                return r
    return None


def reassign_partition_leader_election(
    reassignment: Sequence[int], isr: Collection[int], live_replicas: Collection[int],
) -> int | None:
    """``reassignPartitionLeaderElection``: first live ISR member of the target replicas."""
    for r in reassignment:
        if r in live_replicas and r in isr:
            return r
    return None


def preferred_replica_partition_leader_election(
    assignment: Sequence[int], isr: Collection[int], live_replicas: Collection[int],
) -> int | None:
    """``preferredReplicaPartitionLeaderElection``: the first replica, if live and in the ISR."""
    if assignment and assignment[0] in live_replicas and assignment[0] in isr:
        return assignment[0]
    return None


def controlled_shutdown_partition_leader_election(
    assignment: Sequence[int], isr: Collection[int], live_replicas: Collection[int],
    shutting_down_brokers: Collection[int],
) -> int | None:
    """``controlledShutdownPartitionLeaderElection``: first live ISR member not shutting down."""
    for r in assignment:
        if r in live_replicas and r in isr and r not in shutting_down_brokers:
            return r
    return None


def elect_leader(
    replicas: Sequence[int],
    isr: Iterable[int],
    live_brokers: Iterable[int],
    *,
    reason: str = "offline",
    unclean: bool = False,
    shutting_down: Iterable[int] = (),
) -> int | None:
    """The leader Kafka's controller elects for one partition, or ``None`` when none can be.

    Parameters
    ----------
    replicas
        The assignment in Kafka's order (the first is the preferred replica). For
        ``reason="reassignment"``, the reassignment's target replicas.
    isr
        The in-sync replicas.
    live_brokers
        Brokers that are up. For ``controlled_shutdown`` the brokers in ``shutting_down``
        count as live whether listed here or not (as ``liveOrShuttingDownBrokerIds``).
    reason
        ``"offline"``, ``"reassignment"``, ``"preferred"`` or ``"controlled_shutdown"``
        (``-`` and ``_`` are interchangeable).
    unclean
        Allow an unclean election (``unclean.leader.election.enable``): only meaningful for
        ``offline``; Kafka never elects outside the ISR for the other reasons.
    shutting_down
        Brokers in controlled shutdown (``controlled_shutdown`` only).

    Raises
    ------
    ValueError
        For an unknown ``reason``, or ``unclean=True`` with a reason other than ``offline``.

    >>> elect_leader([2, 4], [2], {4}, unclean=False) is None
    True
    """
    key = reason.replace("-", "_")
    if key not in ELECTION_REASONS:
        raise ValueError(f"unknown election reason {reason!r} "
                         f"(expected one of {', '.join(ELECTION_REASONS)})")
    if unclean and key != "offline":
        raise ValueError(f"unclean election applies to offline partitions only, not {reason!r}")
    isr_set = set(isr)
    live = set(live_brokers)
    if key == "offline":
        return offline_partition_leader_election(replicas, isr_set, live, unclean)
    if key == "reassignment":
        return reassign_partition_leader_election(replicas, isr_set, live)
    if key == "preferred":
        return preferred_replica_partition_leader_election(replicas, isr_set, live)
    down = set(shutting_down)
    return controlled_shutdown_partition_leader_election(replicas, isr_set, live | down, down)
