"""The cluster model: what a Kafka controller knows, whichever store it came from.

One model serves both metadata stores Kafka has had. :mod:`kafkalog.cluster.kraft` fills it by
replaying a KRaft ``__cluster_metadata`` log; :mod:`kafkalog.cluster.zookeeper` fills it from the
znodes of a ZooKeeper-mode cluster. :mod:`kafkalog.cluster.znodes` renders it back as znodes,
and :mod:`kafkalog.cluster.what_if` runs the controller's algorithms over it.

The names are Kafka's: a partition's state is a :class:`PartitionRegistration`
(``metadata/.../PartitionRegistration.java``, 3.9) whose ``merge`` applies one
``PartitionChangeRecord``; a broker is *active* when it is registered, not fenced and not in
controlled shutdown (``ClusterControlManager.isActive``); ``min.insync.replicas`` and
``unclean.leader.election.enable`` resolve topic config, then the cluster-wide dynamic default,
then Kafka's static default (``ConfigurationControlManager``; the broker's own
``server.properties`` is not in the metadata, so callers may pass their static defaults).

Invariants kept by everyone who writes a model: topic names are unique; partition ids of a topic
are its dict keys; ``leader`` is ``NO_LEADER`` (-1) or a broker id; lists keep Kafka's order
(assignment order matters to every election). Not thread-safe: one owner builds and reads it.

Example
-------
>>> p = PartitionRegistration(replicas=[1, 2, 3], isr=[2, 3], leader=2)
>>> p.merge(PartitionChangeRecord(leader=3, isr=[3])).leader_epoch
1
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from typing import Any

__all__ = [
    "NO_LEADER",
    "NO_LEADER_CHANGE",
    "RECOVERED",
    "RECOVERING",
    "LEADER_RECOVERY_NO_CHANGE",
    "UNASSIGNED_DIR",
    "LOST_DIR",
    "MIGRATING_DIR",
    "SECURITY_PROTOCOLS",
    "Endpoint",
    "Broker",
    "PartitionChangeRecord",
    "PartitionRegistration",
    "Topic",
    "PartitionChange",
    "Controller",
    "ClusterModel",
]

NO_LEADER = -1            # LeaderConstants.NO_LEADER
NO_LEADER_CHANGE = -2     # LeaderConstants.NO_LEADER_CHANGE (PartitionChangeRecord.leader)
RECOVERED = 0             # LeaderRecoveryState.RECOVERED
RECOVERING = 1            # LeaderRecoveryState.RECOVERING (after an unclean election)
LEADER_RECOVERY_NO_CHANGE = -1
# DirectoryId reserved values (KIP-858), as Kafka prints Uuids (base64url, no padding). Every
# release with directories (3.7.0 on) has MIGRATING all zeros, UNASSIGNED 1 and LOST 2
# (DirectoryId.java after "MINOR: DirectoryId.MIGRATING should be all zeros", #14858).
MIGRATING_DIR = "AAAAAAAAAAAAAAAAAAAAAA"
UNASSIGNED_DIR = "AAAAAAAAAAAAAAAAAAAAAQ"
LOST_DIR = "AAAAAAAAAAAAAAAAAAAAAg"
# SecurityProtocol ids (clients/.../security/auth/SecurityProtocol.java)
SECURITY_PROTOCOLS = {0: "PLAINTEXT", 1: "SSL", 2: "SASL_PLAINTEXT", 3: "SASL_SSL"}

DEFAULT_MIN_INSYNC_REPLICAS = 1                 # ServerLogConfigs.MIN_IN_SYNC_REPLICAS_DEFAULT
DEFAULT_UNCLEAN_LEADER_ELECTION_ENABLE = False  # since 0.11 (KIP-106)


@dataclass(frozen=True)
class Endpoint:
    """One advertised listener: ``name://host:port`` speaking ``security_protocol``."""

    name: str
    host: str | None
    port: int
    security_protocol: str = "PLAINTEXT"

    def connection_string(self) -> str:
        """Kafka's ``EndPoint.connectionString``: IPv6 literals in brackets, empty host kept."""
        host = self.host or ""
        addr = f"[{host}]:{self.port}" if ":" in host else f"{host}:{self.port}"
        return f"{self.name}://{addr}"


@dataclass
class Broker:
    """A registered broker (KRaft ``BrokerRegistration`` / ZooKeeper ``BrokerInfo``).

    ``features`` maps a feature name to its supported ``(min_version, max_version)``.
    ``timestamp`` is the registration time in ms (the znode's ``timestamp``).
    """

    id: int
    endpoints: list[Endpoint] = field(default_factory=list)
    rack: str | None = None
    features: dict[str, tuple[int, int]] = field(default_factory=dict)
    fenced: bool = False
    in_controlled_shutdown: bool = False
    epoch: int = -1
    incarnation_id: str | None = None
    timestamp: int | None = None
    jmx_port: int = -1
    log_dirs: list[str] = field(default_factory=list)

    @property
    def is_active(self) -> bool:
        """Registered, unfenced and not shutting down (``ClusterControlManager.isActive``)."""
        return not self.fenced and not self.in_controlled_shutdown


@dataclass
class PartitionChangeRecord:
    """A KRaft ``PartitionChangeRecord``: ``None`` (or the NO_* constants) means "no change".

    Field names are the record's, in snake_case. :meth:`to_dict` gives the fields that are set,
    named as ``kafka-dump-log --cluster-metadata-decoder`` prints them.
    """

    topic_id: str | None = None
    partition_id: int = 0
    isr: list[int] | None = None
    leader: int = NO_LEADER_CHANGE
    replicas: list[int] | None = None
    removing_replicas: list[int] | None = None
    adding_replicas: list[int] | None = None
    leader_recovery_state: int = LEADER_RECOVERY_NO_CHANGE
    directories: list[str] | None = None
    eligible_leader_replicas: list[int] | None = None
    last_known_elr: list[int] | None = None

    def is_no_op(self) -> bool:
        """``PartitionChangeBuilder.changeRecordIsNoOp``: nothing would change."""
        return (self.isr is None and self.eligible_leader_replicas is None
                and self.last_known_elr is None and self.leader == NO_LEADER_CHANGE
                and self.replicas is None and self.removing_replicas is None
                and self.adding_replicas is None
                and self.leader_recovery_state == LEADER_RECOVERY_NO_CHANGE
                and self.directories is None)

    def to_dict(self) -> dict[str, Any]:
        """The set fields, in the record's JSON names (``partitionId``, ``topicId``, ...)."""
        out: dict[str, Any] = {"partitionId": self.partition_id, "topicId": self.topic_id}
        names = {"isr": "isr", "leader": "leader", "replicas": "replicas",
                 "removing_replicas": "removingReplicas", "adding_replicas": "addingReplicas",
                 "leader_recovery_state": "leaderRecoveryState", "directories": "directories",
                 "eligible_leader_replicas": "eligibleLeaderReplicas",
                 "last_known_elr": "lastKnownElr"}
        for attr, name in names.items():
            value = getattr(self, attr)
            if attr == "leader" and value == NO_LEADER_CHANGE:
                continue
            if attr == "leader_recovery_state" and value == LEADER_RECOVERY_NO_CHANGE:
                continue
            if value is not None:
                out[name] = list(value) if isinstance(value, list) else value
        return out

    @classmethod
    def from_record(cls, d: dict[str, Any]) -> PartitionChangeRecord:
        """From a decoded ``PartitionChangeRecord`` (``decoders.cluster_metadata`` output)."""
        def opt(name: str) -> list[Any] | None:
            v = d.get(name)
            return None if v is None else list(v)
        return cls(topic_id=d["topicId"], partition_id=d["partitionId"], isr=opt("isr"),
                   leader=d.get("leader", NO_LEADER_CHANGE), replicas=opt("replicas"),
                   removing_replicas=opt("removingReplicas"),
                   adding_replicas=opt("addingReplicas"),
                   leader_recovery_state=d.get("leaderRecoveryState",
                                               LEADER_RECOVERY_NO_CHANGE),
                   directories=opt("directories"),
                   eligible_leader_replicas=opt("eligibleLeaderReplicas"),
                   last_known_elr=opt("lastKnownElr"))


@dataclass
class PartitionRegistration:
    """One partition's replicas, ISR, leader and epochs (Kafka's ``PartitionRegistration``).

    ``elr``/``last_known_elr`` are KIP-966's eligible leader replicas. ``directories`` (KIP-858)
    is parallel to ``replicas`` (empty when unknown). ``controller_epoch`` is what the ZooKeeper
    partition-state znode records: the controller epoch that last wrote the state (in KRaft, the
    metadata log's leader epoch when the partition last changed).
    """

    replicas: list[int]
    isr: list[int]
    leader: int = NO_LEADER
    leader_epoch: int = 0
    partition_epoch: int = 0
    removing_replicas: list[int] = field(default_factory=list)
    adding_replicas: list[int] = field(default_factory=list)
    leader_recovery_state: int = RECOVERED
    elr: list[int] = field(default_factory=list)
    last_known_elr: list[int] = field(default_factory=list)
    directories: list[str] = field(default_factory=list)
    controller_epoch: int = -1

    @classmethod
    def from_record(cls, d: dict[str, Any], controller_epoch: int = -1) -> PartitionRegistration:
        """The fields of a decoded ``PartitionRecord`` (directories as the record holds them:
        empty for records before 3.7-IV2)."""
        return cls(
            replicas=list(d["replicas"]), isr=list(d["isr"]),
            removing_replicas=list(d.get("removingReplicas") or []),
            adding_replicas=list(d.get("addingReplicas") or []),
            leader=d["leader"], leader_epoch=d["leaderEpoch"],
            partition_epoch=d["partitionEpoch"],
            leader_recovery_state=d.get("leaderRecoveryState", 0),
            elr=list(d.get("eligibleLeaderReplicas") or []),
            last_known_elr=list(d.get("lastKnownElr") or []),
            directories=list(d.get("directories") or []),
            controller_epoch=controller_epoch)

    def copy(self) -> PartitionRegistration:
        """A deep copy (lists are not shared). The fields are ints and lists of ints or
        strings, so copying the lists is a deep copy (``copy.deepcopy`` was most of a
        metadata replay's time)."""
        return PartitionRegistration(
            list(self.replicas), list(self.isr), self.leader, self.leader_epoch,
            self.partition_epoch, list(self.removing_replicas), list(self.adding_replicas),
            self.leader_recovery_state, list(self.elr), list(self.last_known_elr),
            list(self.directories), self.controller_epoch)

    @property
    def has_leader(self) -> bool:
        """``PartitionRegistration.hasLeader``."""
        return self.leader != NO_LEADER

    @property
    def preferred_replica(self) -> int:
        """The first assigned replica (``NO_LEADER`` for an empty assignment)."""
        return self.replicas[0] if self.replicas else NO_LEADER

    @property
    def has_preferred_leader(self) -> bool:
        """``PartitionRegistration.hasPreferredLeader``: the leader is the first replica."""
        return self.leader == self.preferred_replica

    @property
    def is_reassigning(self) -> bool:
        """A reassignment is in flight (``isReassignmentInProgress``)."""
        return bool(self.removing_replicas or self.adding_replicas)

    @property
    def target_replicas(self) -> list[int]:
        """The assignment a reassignment in flight is heading for: ``replicas`` less the
        replicas being removed (``ReplicaAssignment.targetReplicas``)."""
        return [r for r in self.replicas if r not in self.removing_replicas]

    def directory(self, replica: int) -> str:
        """The log directory id assigned to ``replica`` (``MIGRATING_DIR`` when unknown)."""
        if replica not in self.replicas:
            raise ValueError(f"replica {replica} is not assigned to this partition "
                             f"(replicas {self.replicas})")
        i = self.replicas.index(replica)
        return self.directories[i] if i < len(self.directories) else MIGRATING_DIR

    def merge(self, record: PartitionChangeRecord) -> PartitionRegistration:
        """The registration after ``record`` (``PartitionRegistration.merge``, 3.9).

        Fields left at "no change" keep their value; a leader change (any value other than
        ``NO_LEADER_CHANGE``, the same leader included) bumps the leader epoch; every record
        bumps the partition epoch.
        """
        new = self.copy()
        if record.replicas is not None:
            new.replicas = list(record.replicas)
        if record.directories is not None:
            new.directories = list(record.directories)
        elif record.replicas is not None and len(new.directories) != len(new.replicas):
            new.directories = [MIGRATING_DIR] * len(new.replicas)   # defaultToMigrating
        if record.isr is not None:
            new.isr = list(record.isr)
        if record.removing_replicas is not None:
            new.removing_replicas = list(record.removing_replicas)
        if record.adding_replicas is not None:
            new.adding_replicas = list(record.adding_replicas)
        if record.leader != NO_LEADER_CHANGE:
            new.leader = record.leader
            new.leader_epoch += 1
        if record.leader_recovery_state != LEADER_RECOVERY_NO_CHANGE:
            new.leader_recovery_state = record.leader_recovery_state
        if record.eligible_leader_replicas is not None:
            new.elr = list(record.eligible_leader_replicas)
        if record.last_known_elr is not None:
            new.last_known_elr = list(record.last_known_elr)
        new.partition_epoch += 1
        return new

    def summary(self) -> dict[str, Any]:
        """A plain dict of the state (for reports and JSON)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        return copy.deepcopy(out)


@dataclass
class Topic:
    """A topic: its name, id (``None`` before topic ids, Kafka < 2.8) and partitions."""

    name: str
    topic_id: str | None = None
    partitions: dict[int, PartitionRegistration] = field(default_factory=dict)


@dataclass
class PartitionChange:
    """One partition changed by a controller step: the state before and after, the KRaft
    record that carries it (``None`` for a ZooKeeper write), and whether the new leader was
    elected uncleanly (outside the ISR: data the old ISR held may be lost)."""

    topic: str
    partition: int
    before: PartitionRegistration
    after: PartitionRegistration
    record: PartitionChangeRecord | None = None
    unclean: bool = False


@dataclass
class Controller:
    """The active controller: a broker id (ZooKeeper) or a KRaft quorum leader."""

    id: int
    epoch: int
    timestamp: int | None = None
    kraft: bool = False
    znode_version: int = 1     # /controller JSON version (2 since 3.4: kraftControllerEpoch)


@dataclass
class ClusterModel:
    """The whole cluster as the controller sees it.

    ``source`` is ``"kraft"`` or ``"zookeeper"``: the what-if engine runs the algorithms of
    that controller (``PartitionChangeBuilder`` / ``PartitionStateMachine``). ``configs`` is
    keyed by ``(entity type, entity name)`` with ZooKeeper's entity types (``"topics"``,
    ``"brokers"``, ...); the cluster-wide broker default is the name ``""`` (``<default>`` in
    ZooKeeper). ``reassignments`` holds ``/admin/reassign_partitions`` as read from ZooKeeper
    (target replicas per partition); ``consumer_offsets`` is ``group -> topic -> partition ->
    offset``. ``zk_migration_state`` is KRaft's ``ZkMigrationStateRecord`` value (0 none,
    1 migration, 2 pre-migration, 3 post-migration). ``warnings`` name what could not be read;
    ``notes`` are informational.
    """

    source: str = "kraft"
    cluster_id: str | None = None
    brokers: dict[int, Broker] = field(default_factory=dict)
    controllers: dict[int, dict[str, Any]] = field(default_factory=dict)
    controller: Controller | None = None
    controller_epoch: int | None = None
    topics: dict[str, Topic] = field(default_factory=dict)
    configs: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    features: dict[str, int] = field(default_factory=dict)
    feature_znode_version: int | None = None
    zk_migration_state: int | None = None
    producer_id_block: dict[str, int] | None = None
    reassignments: dict[tuple[str, int], list[int]] = field(default_factory=dict)
    preferred_replica_election: list[tuple[str, int]] = field(default_factory=list)
    topics_being_deleted: list[str] = field(default_factory=list)
    consumer_offsets: dict[str, dict[str, dict[int, int]]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    # -- lookups ----------------------------------------------------------------------------

    def topic_by_id(self, topic_id: str) -> Topic | None:
        """The topic with this id, or ``None``."""
        for t in self.topics.values():
            if t.topic_id == topic_id:
                return t
        return None

    def partitions(self) -> Iterator[tuple[str, int, PartitionRegistration]]:
        """Every partition as ``(topic, partition, registration)``, topics and ids sorted."""
        for name in sorted(self.topics):
            t = self.topics[name]
            for pid in sorted(t.partitions):
                yield name, pid, t.partitions[pid]

    def live_brokers(self) -> set[int]:
        """Ids of active brokers (registered, unfenced, not in controlled shutdown)."""
        return {b.id for b in self.brokers.values() if b.is_active}

    def shutting_down_brokers(self) -> set[int]:
        """Ids of brokers in controlled shutdown (still registered, not fenced)."""
        return {b.id for b in self.brokers.values()
                if b.in_controlled_shutdown and not b.fenced}

    def copy(self) -> ClusterModel:
        """A deep copy (the what-if engine mutates copies, never the model it was given)."""
        return copy.deepcopy(self)

    # -- configuration ----------------------------------------------------------------------

    def config_value(self, topic: str, name: str) -> str | None:
        """A topic config as the controller resolves it: the topic's own value, else (for
        ``min.insync.replicas`` and ``unclean.leader.election.enable``) the cluster-wide dynamic
        broker default; ``None`` when neither is set."""
        value = self.configs.get(("topics", topic), {}).get(name)
        default_name = _broker_default_name(name)
        if value is None and default_name is not None:
            value = self.configs.get(("brokers", ""), {}).get(default_name)
        return value

    def min_insync_replicas(self, topic: str, default: int = DEFAULT_MIN_INSYNC_REPLICAS) -> int:
        """``min.insync.replicas`` of ``topic`` (``default`` stands for the static broker
        config, which the metadata does not hold)."""
        value = self.config_value(topic, "min.insync.replicas")
        try:
            return int(value) if value is not None else default
        except ValueError:
            return default

    def effective_min_isr(self, topic: str, default: int = DEFAULT_MIN_INSYNC_REPLICAS) -> int:
        """``ReplicationControlManager.getTopicEffectiveMinIsr``: min ISR capped at the
        replication factor (of partition 0)."""
        t = self.topics.get(topic)
        rf = len(t.partitions[min(t.partitions)].replicas) if t and t.partitions else 0
        return min(self.min_insync_replicas(topic, default), rf)

    def unclean_leader_election_enabled(
        self, topic: str, default: bool = DEFAULT_UNCLEAN_LEADER_ELECTION_ENABLE
    ) -> bool:
        """``unclean.leader.election.enable`` of ``topic`` (``default`` as for min ISR)."""
        value = self.config_value(topic, "unclean.leader.election.enable")
        return default if value is None else value.strip().lower() == "true"

    @property
    def metadata_version(self) -> int | None:
        """The ``metadata.version`` feature level (KRaft), ``None`` when unknown."""
        return self.features.get("metadata.version")

    @property
    def zk_migration_enabled(self) -> bool:
        """A ZooKeeper migration is under way (``ClusterControlManager.zkRegistrationAllowed``:
        the migration state is MIGRATION or PRE_MIGRATION)."""
        return self.zk_migration_state in (1, 2)

    @property
    def elr_enabled(self) -> bool:
        """Eligible leader replicas (KIP-966) are on: the ``eligible.leader.replicas.version``
        feature is finalized at level 1 or more (``FeatureControlManager.isElrFeatureEnabled``,
        Kafka 4.x)."""
        return self.features.get("eligible.leader.replicas.version", 0) >= 1


def _broker_default_name(topic_config: str) -> str | None:
    """The broker config that defaults a topic config (``ServerTopicConfigSynonyms``), for the
    two configs the controller's algorithms read; ``None`` for any other."""
    return {"min.insync.replicas": "min.insync.replicas",
            "unclean.leader.election.enable": "unclean.leader.election.enable"}.get(topic_config)
