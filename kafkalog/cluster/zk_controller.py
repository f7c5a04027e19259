"""The ZooKeeper-mode controller's reactions to broker events and election requests.

Ported from Kafka 3.9 ``core/src/main/scala/kafka/controller/``: ``KafkaController``
(``onBrokerFailure`` -> ``onReplicasBecomeOffline``, ``onBrokerStartup``,
``doControlledShutdown``, ``onReplicaElection``), ``Election.scala`` (the new ISR of each
election) and ``ReplicaStateMachine.doRemoveReplicasFromIsr``. Every write of a partition's
``state`` znode goes through ``LeaderAndIsr.newLeaderAndIsr``: it bumps the leader epoch, and
the znode's ZooKeeper version (the partition epoch) moves by one.

==========================  =================================================================
broker failure              partitions whose leader is not live elect with the offline
                            algorithm (unclean when the topic allows it): new ISR = the live
                            part of the ISR, or just the leader for an unclean pick (marked
                            RECOVERING from 3.2); then each dead replica leaves the ISRs it is
                            still in -- leader set to -1 if it led, the ISR never emptied
                            (topics queued for deletion are left alone)
controlled shutdown         partitions (replication factor > 1) led by the broker elect with
                            the controlled-shutdown algorithm (ISR less the brokers shutting
                            down); it leaves the ISR of those it follows; when the process
                            exits, the broker fails as above
broker startup              offline partitions elect again (offline algorithm)
preferred election          partitions not led by their preferred replica: the preferred one,
                            if live and in the ISR (ISR unchanged)
unclean election            partitions with no live leader: the offline algorithm with unclean
                            allowed
==========================  =================================================================

Example
-------
>>> from kafkalog.cluster.model import Broker, ClusterModel, PartitionRegistration, Topic
>>> m = ClusterModel(source="zookeeper", brokers={i: Broker(i) for i in (1, 2, 3)})
>>> m.topics["t"] = Topic("t", None, {0: PartitionRegistration([1, 2, 3], [1, 2, 3], 1)})
>>> c = on_broker_failure(m, {1})[0]
>>> (c.after.leader, c.after.isr, c.after.leader_epoch)
(2, [2, 3], 1)
"""

from __future__ import annotations

from collections.abc import Iterable

from .election import (
    controlled_shutdown_partition_leader_election,
    offline_partition_leader_election,
    preferred_replica_partition_leader_election,
)
from .model import (
    NO_LEADER,
    RECOVERING,
    ClusterModel,
    PartitionChange,
    PartitionRegistration,
)
from .replication_control import (
    ELECTION_NOT_NEEDED,
    ELIGIBLE_LEADERS_NOT_AVAILABLE,
    PREFERRED_LEADER_NOT_AVAILABLE,
    ElectionError,
)

__all__ = ["on_broker_failure", "controlled_shutdown", "on_broker_startup", "elect_leaders",
           "remove_replica_from_isr"]


def _write(model: ClusterModel, topic: str, pid: int, leader: int, isr: list[int], *,
           recovering: bool = False, unclean: bool = False) -> PartitionChange:
    """``LeaderAndIsr.newLeaderAndIsr`` written to the state znode."""
    before = model.topics[topic].partitions[pid]
    after = before.copy()
    after.leader = leader
    after.isr = list(isr)
    after.leader_epoch += 1
    after.partition_epoch += 1                  # the znode's ZooKeeper version
    if recovering:
        after.leader_recovery_state = RECOVERING
    if model.controller_epoch is not None:
        after.controller_epoch = model.controller_epoch
    model.topics[topic].partitions[pid] = after
    return PartitionChange(topic, pid, before, after, None, unclean)


def _live(model: ClusterModel) -> set[int]:
    """Brokers with a registration znode (a ZooKeeper session)."""
    return {b.id for b in model.brokers.values() if not b.fenced}


def _elect_offline(model: ClusterModel, topics_partitions: Iterable[tuple[str, int]],
                   allow_unclean: dict[str, bool], leader_recovery_supported: bool,
                   ) -> list[PartitionChange]:
    """``Election.leaderForOffline`` for each partition, written when a leader is found."""
    live = _live(model)
    changes = []
    for topic, pid in topics_partitions:
        part = model.topics[topic].partitions[pid]
        live_replicas = [r for r in part.replicas if r in live]
        leader = offline_partition_leader_election(part.replicas, part.isr, set(live_replicas),
                                                   allow_unclean[topic])
        if leader is None:
            continue
        clean = leader in part.isr
        new_isr = [r for r in part.isr if r in live] if clean else [leader]
        changes.append(_write(model, topic, pid, leader, new_isr,
                              recovering=not clean and leader_recovery_supported,
                              unclean=not clean))
    return changes


def remove_replica_from_isr(model: ClusterModel, replica: int,
                             partitions: Iterable[tuple[str, int]]) -> list[PartitionChange]:
    """``ReplicaStateMachine.doRemoveReplicasFromIsr``: the ISR keeps its last member."""
    changes = []
    for topic, pid in partitions:
        part = model.topics[topic].partitions[pid]
        if replica not in part.isr:
            continue
        leader = NO_LEADER if part.leader == replica else part.leader
        isr = part.isr if len(part.isr) == 1 else [r for r in part.isr if r != replica]
        changes.append(_write(model, topic, pid, leader, isr))
    return changes


def _offline_leader(model: ClusterModel) -> list[tuple[str, int]]:
    """``partitionsWithOfflineLeader``: topics queued for deletion are left alone."""
    live = _live(model)
    deleting = set(model.topics_being_deleted)
    return [(t, p) for t, p, part in model.partitions()
            if part.leader not in live and t not in deleting]


def _unclean_allowed(model: ClusterModel, default: bool) -> dict[str, bool]:
    return {t: model.unclean_leader_election_enabled(t, default) for t in model.topics}


def on_broker_failure(model: ClusterModel, brokers: Iterable[int], *,
                      unclean_default: bool = False,
                      leader_recovery_supported: bool = True) -> list[PartitionChange]:
    """Brokers' sessions expired (``onBrokerFailure`` -> ``onReplicasBecomeOffline``).

    ``leader_recovery_supported``: the inter-broker protocol is 3.2 or later (unclean
    elections mark partitions RECOVERING).
    """
    dead = set(brokers)
    for b in dead:
        if b in model.brokers:
            model.brokers[b].fenced = True      # the ephemeral registration is gone
    changes = _elect_offline(model, _offline_leader(model),
                             _unclean_allowed(model, unclean_default), leader_recovery_supported)
    deleting = set(model.topics_being_deleted)
    for replica in sorted(dead):
        on_it = [(t, p) for t, p, part in model.partitions()
                 if replica in part.replicas and t not in deleting]
        changes += remove_replica_from_isr(model, replica, on_it)
    return changes


def controlled_shutdown(model: ClusterModel, broker: int,
                        shutting_down: Iterable[int] = ()) -> list[PartitionChange]:
    """``doControlledShutdown``: move leadership off ``broker`` and take it out of the ISRs it
    follows in (partitions with more than one replica only; single-replica partitions stay
    led by it until it exits). Brokers already shutting down are ``shutting_down``."""
    down = set(shutting_down) | {broker}
    live_or_shutting_down = _live(model) | down
    deleting = set(model.topics_being_deleted)
    acted = [(t, p, part) for t, p, part in model.partitions()
             if broker in part.replicas and len(part.replicas) > 1 and t not in deleting]
    changes = []
    for topic, pid, part in acted:
        if part.leader != broker:
            continue
        leader = controlled_shutdown_partition_leader_election(
            part.replicas, part.isr, live_or_shutting_down, down)
        if leader is not None:
            changes.append(_write(model, topic, pid, leader,
                                  [r for r in part.isr if r not in down]))
    followed = [(t, p) for t, p, part in acted if part.leader != broker]
    changes += remove_replica_from_isr(model, broker, followed)
    return changes


def on_broker_startup(model: ClusterModel, broker: int, *, unclean_default: bool = False,
                      leader_recovery_supported: bool = True) -> list[PartitionChange]:
    """The broker registered again (``onBrokerStartup``): offline partitions elect."""
    if broker in model.brokers:
        model.brokers[broker].fenced = False
        model.brokers[broker].in_controlled_shutdown = False
    return _elect_offline(model, _offline_leader(model),
                          _unclean_allowed(model, unclean_default), leader_recovery_supported)


def elect_leaders(
    model: ClusterModel, election_type: str,
    partitions: Iterable[tuple[str, int]] | None = None, *,
    leader_recovery_supported: bool = True,
) -> tuple[list[PartitionChange], list[ElectionError]]:
    """An ``ElectLeaders`` request (``onReplicaElection``): ``"preferred"`` for partitions
    not led by their preferred replica, ``"unclean"`` for partitions without a live leader."""
    kind = election_type.lower()
    if kind not in ("preferred", "unclean"):
        raise ValueError(f"election type must be 'preferred' or 'unclean', not {election_type!r}")
    targets = list(partitions) if partitions is not None else [
        (t, p) for t, p, _ in model.partitions()]
    live = _live(model)
    changes: list[PartitionChange] = []
    errors: list[ElectionError] = []
    for topic, pid in targets:
        part: PartitionRegistration = model.topics[topic].partitions[pid]
        if kind == "preferred":
            if part.has_preferred_leader:
                errors.append(ElectionError(topic, pid, ELECTION_NOT_NEEDED))
                continue
            leader = preferred_replica_partition_leader_election(part.replicas, part.isr, live)
            if leader is None:
                errors.append(ElectionError(topic, pid, PREFERRED_LEADER_NOT_AVAILABLE))
                continue
            changes.append(_write(model, topic, pid, leader, part.isr))
        else:
            if part.leader in live:
                errors.append(ElectionError(topic, pid, ELECTION_NOT_NEEDED))
                continue
            made = _elect_offline(model, [(topic, pid)], {topic: True},
                                  leader_recovery_supported)
            if made:
                changes += made
            else:
                errors.append(ElectionError(topic, pid, ELIGIBLE_LEADERS_NOT_AVAILABLE))
    return changes, errors
