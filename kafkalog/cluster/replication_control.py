"""The KRaft controller's reactions to broker events and election requests.

Ported from ``ReplicationControlManager`` (``metadata/src/main/java/org/apache/kafka/controller/
ReplicationControlManager.java``, Kafka 3.9): each handler states targets for the partitions it
touches and lets :class:`~kafkalog.cluster.partition_change.PartitionChangeBuilder` decide the
record, then the record is applied to the model as a broker replays it
(``PartitionRegistration.merge``).

==============================  ==============================================================
``handle_broker_fenced``        the broker missed its heartbeats: leave every ISR it is in
                                (``generateLeaderAndIsrUpdates(brokerToRemove)``), then fence
``handle_broker_in_controlled_  the broker asked to shut down: mark it, then leave every ISR
shutdown``                      (it is not an acceptable leader any more)
``handle_broker_unfenced``      the broker is back: leaderless partitions may elect it
``elect_leaders``               an ``ElectLeaders`` request, ``PREFERRED`` or ``UNCLEAN``
==============================  ==============================================================

For every partition, leaders must be *acceptable*: active (registered, unfenced, not in
controlled shutdown) and not the broker being removed; the election is ``UNCLEAN`` when the
topic has ``unclean.leader.election.enable=true``. The controller also requires the replica's
log directory to be online (``LeaderAcceptor``); log directory failures are not in a metadata
log's final state this package models, so every directory counts as online.

Example
-------
>>> from kafkalog.cluster.model import Broker, ClusterModel, PartitionRegistration, Topic
>>> m = ClusterModel(brokers={i: Broker(i) for i in (1, 2, 3)})
>>> m.topics["t"] = Topic("t", "T", {0: PartitionRegistration([1, 2, 3], [1, 2, 3], 1)})
>>> [(c.before.leader, c.after.leader) for c in handle_broker_fenced(m, 1)]
[(1, 2)]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .metadata_version import MetadataVersion
from .model import (
    NO_LEADER,
    ClusterModel,
    PartitionChange,
    PartitionRegistration,
)
from .partition_change import Election, PartitionChangeBuilder

__all__ = [
    "ElectionError",
    "handle_broker_fenced",
    "handle_broker_in_controlled_shutdown",
    "handle_broker_unfenced",
    "elect_leaders",
]

# Errors an ElectLeaders request reports per partition (org.apache.kafka.common.protocol.Errors)
ELECTION_NOT_NEEDED = "ELECTION_NOT_NEEDED"
PREFERRED_LEADER_NOT_AVAILABLE = "PREFERRED_LEADER_NOT_AVAILABLE"
ELIGIBLE_LEADERS_NOT_AVAILABLE = "ELIGIBLE_LEADERS_NOT_AVAILABLE"


@dataclass(frozen=True)
class ElectionError:
    """A partition an election request left unchanged, and the error Kafka answers."""

    topic: str
    partition: int
    error: str


def _builder(model: ClusterModel, topic: str, pid: int, part: PartitionRegistration,
             acceptable: Callable[[int], bool], election: Election,
             min_insync_default: int) -> PartitionChangeBuilder:
    return PartitionChangeBuilder(
        part, model.topics[topic].topic_id, pid, acceptable,
        MetadataVersion.from_level(model.metadata_version),
        model.effective_min_isr(topic, min_insync_default),
        election=election,
        zk_migration_enabled=model.zk_migration_enabled,
        eligible_leader_replicas_enabled=model.elr_enabled)


def _apply(model: ClusterModel, topic: str, pid: int,
           builder: PartitionChangeBuilder) -> PartitionChange | None:
    before = model.topics[topic].partitions[pid]
    record = builder.build()
    if record is None:
        return None
    after = before.merge(record)
    if model.controller_epoch is not None:
        after.controller_epoch = model.controller_epoch
    model.topics[topic].partitions[pid] = after
    # elected from outside the ISR and the ELR (an unclean or last-known-leader election)
    unclean = (record.leader >= 0 and record.leader not in before.isr
               and record.leader not in before.elr)
    return PartitionChange(topic, pid, before, after, record, unclean)


def _is_active(model: ClusterModel, broker: int) -> bool:
    b = model.brokers.get(broker)
    return b is not None and b.is_active


def generate_leader_and_isr_updates(
    model: ClusterModel, broker_to_remove: int, broker_to_add: int,
    broker_with_unclean_shutdown: int,
    partitions: Iterable[tuple[str, int]], *,
    unclean_default: bool = False, min_insync_default: int = 1,
) -> list[PartitionChange]:
    """``generateLeaderAndIsrUpdates``: take ``broker_to_remove`` (and an uncleanly shut down
    broker) out of each partition's ISR and leadership; ``broker_to_add`` is an acceptable
    leader even while the model still shows it fenced. ``NO_LEADER`` (-1) means "none"."""
    def acceptable(r: int) -> bool:
        if r in (broker_to_remove, broker_with_unclean_shutdown):
            return False
        return r == broker_to_add or _is_active(model, r)

    changes = []
    for topic, pid in list(partitions):
        part = model.topics[topic].partitions[pid]
        unclean = model.unclean_leader_election_enabled(topic, unclean_default)
        builder = _builder(model, topic, pid, part, acceptable,
                           Election.UNCLEAN if unclean else Election.ONLINE, min_insync_default)
        if broker_with_unclean_shutdown != NO_LEADER:
            builder.unclean_shutdown_replicas = [broker_with_unclean_shutdown]
        builder.target_isr = [r for r in part.isr
                              if r not in (broker_to_remove, broker_with_unclean_shutdown)]
        change = _apply(model, topic, pid, builder)
        if change is not None:
            changes.append(change)
    return changes


def _partitions_with_broker_in_isr(model: ClusterModel, broker: int) -> list[tuple[str, int]]:
    return [(t, p) for t, p, part in model.partitions() if broker in part.isr]


def handle_broker_fenced(model: ClusterModel, broker: int, *, unclean_default: bool = False,
                         min_insync_default: int = 1) -> list[PartitionChange]:
    """The broker is fenced (heartbeats stopped): its ISR seats and leaderships move, then it
    is marked fenced. ``unclean_default``/``min_insync_default`` stand for the static broker
    configs the metadata does not hold."""
    changes = generate_leader_and_isr_updates(
        model, broker, NO_LEADER, NO_LEADER, _partitions_with_broker_in_isr(model, broker),
        unclean_default=unclean_default, min_insync_default=min_insync_default)
    if broker in model.brokers:
        model.brokers[broker].fenced = True
    return changes


def handle_broker_in_controlled_shutdown(
    model: ClusterModel, broker: int, *, unclean_default: bool = False,
    min_insync_default: int = 1,
) -> list[PartitionChange]:
    """The broker starts a controlled shutdown: it is marked, then leaves every ISR and
    leadership (``handleBrokerInControlledShutdown``). When its shutdown completes the
    controller fences it (call :func:`handle_broker_fenced`)."""
    if broker in model.brokers and MetadataVersion.from_level(
            model.metadata_version).is_in_controlled_shutdown_state_supported:
        model.brokers[broker].in_controlled_shutdown = True
    return generate_leader_and_isr_updates(
        model, broker, NO_LEADER, NO_LEADER, _partitions_with_broker_in_isr(model, broker),
        unclean_default=unclean_default, min_insync_default=min_insync_default)


def handle_broker_shutdown(model: ClusterModel, broker: int, *, clean: bool,
                           unclean_default: bool = False,
                           min_insync_default: int = 1) -> list[PartitionChange]:
    """``handleBrokerShutdown``: what the controller writes when a broker registers again
    after a restart (a new incarnation). A clean shutdown (the broker names its previous
    epoch) is handled as a fencing; an unclean one with ELR enabled also takes the broker out
    of every ELR, since its log may have lost what it had acknowledged (KIP-966)."""
    if model.elr_enabled and not clean:
        changes = generate_leader_and_isr_updates(
            model, NO_LEADER, NO_LEADER, broker, _partitions_with_broker_in_isr(model, broker),
            unclean_default=unclean_default, min_insync_default=min_insync_default)
        in_elr = [(t, p) for t, p, part in model.partitions() if broker in part.elr]
        return changes + generate_leader_and_isr_updates(
            model, NO_LEADER, NO_LEADER, broker, in_elr, unclean_default=unclean_default,
            min_insync_default=min_insync_default)
    return generate_leader_and_isr_updates(
        model, broker, NO_LEADER, NO_LEADER, _partitions_with_broker_in_isr(model, broker),
        unclean_default=unclean_default, min_insync_default=min_insync_default)


def handle_broker_unfenced(model: ClusterModel, broker: int, *, unclean_default: bool = False,
                           min_insync_default: int = 1) -> list[PartitionChange]:
    """The broker is unfenced: it is marked active, then leaderless partitions may elect it
    (``handleBrokerUnfenced``: ``generateLeaderAndIsrUpdates(brokerToAdd)``)."""
    if broker in model.brokers:
        model.brokers[broker].fenced = False
        model.brokers[broker].in_controlled_shutdown = False
    leaderless = [(t, p) for t, p, part in model.partitions() if part.leader == NO_LEADER]
    return generate_leader_and_isr_updates(
        model, NO_LEADER, broker, NO_LEADER, leaderless,
        unclean_default=unclean_default, min_insync_default=min_insync_default)


def elect_leaders(
    model: ClusterModel, election_type: str,
    partitions: Iterable[tuple[str, int]] | None = None, *, min_insync_default: int = 1,
) -> tuple[list[PartitionChange], list[ElectionError]]:
    """An ``ElectLeaders`` request (``ReplicationControlManager.electLeader`` per partition).

    ``election_type`` is ``"preferred"`` or ``"unclean"``; ``partitions`` defaults to every
    partition. A preferred election is not needed where the preferred replica leads; an
    unclean one where there is a leader. Returns the changes and, for partitions left
    unchanged, the error Kafka answers.
    """
    kind = election_type.lower()
    if kind not in ("preferred", "unclean"):
        raise ValueError(f"election type must be 'preferred' or 'unclean', not {election_type!r}")
    targets = list(partitions) if partitions is not None else [
        (t, p) for t, p, _ in model.partitions()]
    changes: list[PartitionChange] = []
    errors: list[ElectionError] = []
    for topic, pid in targets:
        part = model.topics[topic].partitions[pid]
        if (kind == "preferred" and part.has_preferred_leader) or (
                kind == "unclean" and part.has_leader):
            errors.append(ElectionError(topic, pid, ELECTION_NOT_NEEDED))
            continue
        builder = _builder(model, topic, pid, part, lambda r: _is_active(model, r),
                           Election.PREFERRED if kind == "preferred" else Election.UNCLEAN,
                           min_insync_default)
        change = _apply(model, topic, pid, builder)
        if change is None:
            errors.append(ElectionError(topic, pid, PREFERRED_LEADER_NOT_AVAILABLE
                                        if kind == "preferred"
                                        else ELIGIBLE_LEADERS_NOT_AVAILABLE))
        else:
            changes.append(change)
    return changes, errors
