"""How the KRaft controller changes one partition: ``PartitionChangeBuilder``, ported.

Kafka's controller never edits a partition in place: it states targets (ISR, replicas,
adding/removing replicas, election type) and ``PartitionChangeBuilder.build`` turns them into
one ``PartitionChangeRecord`` (or none, when nothing would change). Ported from Kafka 3.9
``metadata/src/main/java/org/apache/kafka/controller/PartitionChangeBuilder.java`` (4.x is the
same less the ZooKeeper-migration switch), with ``PartitionReassignmentReplicas`` and
``PartitionReassignmentRevert`` from the same package. The steps of :meth:`build`, in order:

1. complete a reassignment in flight once the target ISR holds every target replica
   (replicas being removed leave the ISR and the assignment);
2. with ELR (KIP-966) on and the target ISR below the effective ``min.insync.replicas``,
   move ISR members that are leaving into the eligible leader replicas;
3. elect: keep the current leader if it is still in the target ISR and acceptable; else the
   first acceptable target replica in the ISR (``PREFERRED`` tries the first replica
   first); else, with ELR, the last known leader; else, for ``UNCLEAN``, the first acceptable
   replica, which resets the ISR to that leader and marks the partition RECOVERING;
4. bump the leader epoch (by re-setting the same leader) when replicas are removed, and, before
   metadata.version 3.6-IV0 (or during a ZooKeeper migration), when the ISR shrinks;
5. never record an empty ISR unless ELR is on: the last ISR member stays (with no leader);
6. record replica, directory and reassignment changes.

Lists keep Kafka's order; where Kafka iterates a ``HashSet<Integer>`` (the ELR candidates) the
order is ascending, which is what a Java ``HashSet`` of small non-negative ints yields.

Example
-------
>>> from kafkalog.cluster.model import PartitionRegistration
>>> part = PartitionRegistration(replicas=[1, 2, 3], isr=[1, 2, 3], leader=1)
>>> b = PartitionChangeBuilder(part, "T", 0, lambda r: r != 1, MetadataVersion.from_level(19),
...                            min_isr=2, target_isr=[2, 3])
>>> b.build().to_dict()
{'partitionId': 0, 'topicId': 'T', 'isr': [2, 3], 'leader': 2}
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .metadata_version import MetadataVersion
from .model import (
    MIGRATING_DIR,
    NO_LEADER,
    NO_LEADER_CHANGE,
    RECOVERING,
    UNASSIGNED_DIR,
    PartitionChangeRecord,
    PartitionRegistration,
)

__all__ = [
    "Election",
    "ElectionResult",
    "PartitionChangeBuilder",
    "PartitionReassignmentReplicas",
    "PartitionReassignmentRevert",
]


class Election(enum.Enum):
    """``PartitionChangeBuilder.Election``."""

    PREFERRED = "preferred"   # elect the preferred replica if it is in the ISR
    ONLINE = "online"         # elect from the ISR to keep the partition online
    UNCLEAN = "unclean"       # prefer the ISR, else any acceptable replica (may lose data)


@dataclass(frozen=True)
class ElectionResult:
    """The node elected (``NO_LEADER`` for none) and whether the election was unclean."""

    node: int
    unclean: bool


def _contains_all(haystack: Sequence[int], needles: Sequence[int]) -> bool:
    """``Replicas.contains(a, b)``: every element of ``needles`` is in ``haystack``."""
    return set(needles) <= set(haystack)


class PartitionReassignmentReplicas:
    """A reassignment in flight: ``removing``, ``adding`` and the full ``replicas`` list.

    Built from a current and a target assignment, ``replicas`` is the target followed by the
    replicas being removed (sorted, as Kafka's ``TreeSet`` difference).
    """

    def __init__(self, removing: Sequence[int], adding: Sequence[int],
                 replicas: Sequence[int]) -> None:
        self.removing = list(removing)
        self.adding = list(adding)
        self.replicas = list(replicas)

    @classmethod
    def from_assignments(cls, current: Sequence[int],
                         target: Sequence[int]) -> PartitionReassignmentReplicas:
        """``PartitionReassignmentReplicas(currentAssignment, targetAssignment)``."""
        removing = sorted(set(current) - set(target))
        adding = sorted(set(target) - set(current))
        return cls(removing, adding, list(target) + removing)

    @property
    def is_reassignment_in_progress(self) -> bool:
        """Anything being added or removed."""
        return bool(self.removing or self.adding)

    def maybe_complete_reassignment(
        self, target_isr: Sequence[int]
    ) -> tuple[list[int], list[int]] | None:
        """``(replicas, isr)`` once the reassignment can complete, else ``None``.

        It completes when the ISR, less the replicas being removed, is non-empty and holds
        every remaining replica.
        """
        if not self.is_reassignment_in_progress:
            return None
        new_isr = list(target_isr)
        new_replicas = self.replicas
        if self.removing:
            new_isr = [r for r in target_isr if r not in self.removing]
            if not new_isr:
                return None
            new_replicas = [r for r in self.replicas if r not in self.removing]
            if not new_replicas:
                return None
        if not _contains_all(new_isr, new_replicas):
            return None
        return list(new_replicas), new_isr

    def original_replicas(self) -> list[int]:
        """The assignment before the reassignment: ``replicas`` less ``adding``."""
        return [r for r in self.replicas if r not in self.adding]


class PartitionReassignmentRevert:
    """The replicas and ISR after cancelling a reassignment in flight.

    Replicas being added are dropped (from the ISR too); if that empties the ISR the first
    original replica is put in it, which is an unclean election (``unclean`` is set and the
    caller must check ``unclean.leader.election.enable``).
    """

    def __init__(self, registration: PartitionRegistration) -> None:
        ongoing = PartitionReassignmentReplicas(registration.removing_replicas,
                                                registration.adding_replicas,
                                                registration.replicas)
        self.replicas = ongoing.original_replicas()
        self.isr = [r for r in registration.isr if r not in ongoing.adding]
        self.unclean = False
        if not self.isr:
            if not self.replicas:
                raise ValueError("invalid replica assignment: adding replicas holds every "
                                 f"replica ({registration.replicas})")
            self.isr.append(self.replicas[0])
            self.unclean = True


class PartitionChangeBuilder:
    """Build the ``PartitionChangeRecord`` that moves ``partition`` to the given targets.

    Parameters
    ----------
    partition
        The current registration (never modified).
    topic_id, partition_id
        Copied into the record.
    is_acceptable_leader
        Whether a broker may lead (the controller passes "active, and its log directory is
        online"; during fencing it excludes the broker being removed).
    metadata_version
        The cluster's finalized ``metadata.version``.
    min_isr
        The topic's effective ``min.insync.replicas`` (capped at the replication factor).
    election
        :class:`Election`: ``ONLINE`` unless the caller asks otherwise.
    target_isr, target_replicas, target_removing, target_adding
        Targets; ``None`` keeps the partition's current value.
    target_leader_recovery_state
        ``None`` keeps the current state.
    unclean_shutdown_replicas
        Brokers that shut down uncleanly: never moved into the ELR.
    zk_migration_enabled
        A ZooKeeper migration is running: every ISR shrink bumps the leader epoch.
    eligible_leader_replicas_enabled
        KIP-966 ELR on.
    use_last_known_leader_in_balanced_recovery
        With ELR on, ``last_known_elr`` stores the last leader, electable (uncleanly) when ISR
        and ELR are both empty.
    target_directories
        Directory overrides per broker (``setDirectory``).
    default_dir
        The directory of a replica with none assigned (``DefaultDirProvider``).
    """

    def __init__(
        self,
        partition: PartitionRegistration,
        topic_id: str | None,
        partition_id: int,
        is_acceptable_leader: Callable[[int], bool],
        metadata_version: MetadataVersion,
        min_isr: int,
        *,
        election: Election = Election.ONLINE,
        target_isr: Sequence[int] | None = None,
        target_replicas: Sequence[int] | None = None,
        target_removing: Sequence[int] | None = None,
        target_adding: Sequence[int] | None = None,
        target_leader_recovery_state: int | None = None,
        unclean_shutdown_replicas: Sequence[int] | None = None,
        zk_migration_enabled: bool = False,
        eligible_leader_replicas_enabled: bool = False,
        use_last_known_leader_in_balanced_recovery: bool = True,
        target_directories: dict[int, str] | None = None,
        default_dir: Callable[[int], str] = lambda broker: UNASSIGNED_DIR,
    ) -> None:
        self.partition = partition
        self.topic_id = topic_id
        self.partition_id = partition_id
        self.is_acceptable_leader = is_acceptable_leader
        self.metadata_version = metadata_version
        self.min_isr = min_isr
        self.election = election
        self.target_isr = list(partition.isr if target_isr is None else target_isr)
        self.target_replicas = list(partition.replicas if target_replicas is None
                                    else target_replicas)
        self.target_removing = list(partition.removing_replicas if target_removing is None
                                    else target_removing)
        self.target_adding = list(partition.adding_replicas if target_adding is None
                                  else target_adding)
        self.target_elr = list(partition.elr)
        self.target_last_known_elr = list(partition.last_known_elr)
        self.target_leader_recovery_state = (partition.leader_recovery_state
                                             if target_leader_recovery_state is None
                                             else target_leader_recovery_state)
        self.unclean_shutdown_replicas = (None if unclean_shutdown_replicas is None
                                          else list(unclean_shutdown_replicas))
        self.zk_migration_enabled = zk_migration_enabled
        self.eligible_leader_replicas_enabled = eligible_leader_replicas_enabled
        self.use_last_known_leader_in_balanced_recovery = (
            use_last_known_leader_in_balanced_recovery)
        # DirectoryId.createAssignmentMap(replicas, directories), then the overrides
        # (a registration without directories reads as MIGRATING, as defaultToMigrating does)
        self._current_dirs = (list(partition.directories) if partition.directories
                              else [MIGRATING_DIR] * len(partition.replicas))
        self.target_directories = dict(zip(partition.replicas, self._current_dirs))
        self.target_directories.update(target_directories or {})
        self.default_dir = default_dir

    # -- election ---------------------------------------------------------------------------

    def elect_leader(self) -> ElectionResult:
        """The leader the targets lead to (``electLeader``; ``NO_LEADER`` when none)."""
        if self.election is Election.PREFERRED:
            return self._elect_preferred_leader()
        return self._elect_any_leader()

    def _elect_preferred_leader(self) -> ElectionResult:
        preferred = self.target_replicas[0]
        if self._is_valid_new_leader(preferred):
            return ElectionResult(preferred, False)
        if self._is_valid_new_leader(self.partition.leader):
            return ElectionResult(self.partition.leader, False)     # current leader is fine
        for r in self.target_replicas[1:]:
            if self._is_valid_new_leader(r):
                return ElectionResult(r, False)
        if self._can_elect_last_known_leader():
            return ElectionResult(self.partition.last_known_elr[0], True)
        return ElectionResult(NO_LEADER, False)

    def _elect_any_leader(self) -> ElectionResult:
        if self._is_valid_new_leader(self.partition.leader):
            return ElectionResult(self.partition.leader, False)     # current leader is fine
        for r in self.target_replicas:
            if self._is_valid_new_leader(r):
                return ElectionResult(r, False)
        if self._can_elect_last_known_leader():
            return ElectionResult(self.partition.last_known_elr[0], True)
        if self.election is Election.UNCLEAN:
            for r in self.target_replicas:
                if self.is_acceptable_leader(r):
                    return ElectionResult(r, True)
        return ElectionResult(NO_LEADER, False)

    def _can_elect_last_known_leader(self) -> bool:
        if not (self.eligible_leader_replicas_enabled
                and self.use_last_known_leader_in_balanced_recovery):
            return False
        if self.target_elr or self.target_isr:
            return False
        # Only a single last known ELR member is the last leader; more means real ELR members
        # recorded while the last-known-leader mode was off.
        return len(self.partition.last_known_elr) == 1

    def _is_valid_new_leader(self, replica: int) -> bool:
        """In the target ISR (or in the ELR when the ISR is empty), and acceptable."""
        in_isr = replica in self.target_isr
        in_elr = not self.target_isr and replica in self.target_elr
        return (in_isr or in_elr) and self.is_acceptable_leader(replica)

    def _try_election(self, record: PartitionChangeRecord) -> None:
        result = self.elect_leader()
        if result.node == self.partition.leader:
            return
        if result.node in self.target_elr:
            # elected from the ELR: it becomes the whole ISR and leaves the ELR
            self.target_isr = [result.node]
            self.target_elr = [r for r in self.target_elr if r != result.node]
        record.leader = result.node
        if result.unclean:
            # An unclean election forces the ISR to the new leader alone: data can be lost.
            record.isr = [result.node]
            if (self.partition.leader_recovery_state != RECOVERING
                    and self.metadata_version.is_leader_recovery_supported):
                record.leader_recovery_state = RECOVERING

    # -- epoch bumps ------------------------------------------------------------------------

    def trigger_leader_epoch_bump_for_replica_reassignment_if_needed(
        self, record: PartitionChangeRecord
    ) -> None:
        """Bump the leader epoch (set the same leader) when a replica leaves the assignment."""
        if record.leader != NO_LEADER_CHANGE:
            return                           # the leader changes: the epoch is bumped anyway
        if not _contains_all(self.target_replicas, self.partition.replicas):
            record.leader = self.partition.leader

    def trigger_leader_epoch_bump_for_isr_shrink_if_needed(
        self, record: PartitionChangeRecord
    ) -> None:
        """Bump the leader epoch on an ISR shrink before 3.6-IV0 or during a ZK migration.

        Call only after the record's ISR is set.
        """
        if not (self.metadata_version.is_leader_epoch_bump_required_on_isr_shrink
                or self.zk_migration_enabled):
            return
        if record.leader != NO_LEADER_CHANGE or record.isr is None:
            return
        if not _contains_all(record.isr, self.partition.isr):
            record.leader = self.partition.leader

    # -- reassignment and ELR ---------------------------------------------------------------

    def _complete_reassignment_if_needed(self) -> None:
        completed = PartitionReassignmentReplicas(
            self.target_removing, self.target_adding, self.target_replicas
        ).maybe_complete_reassignment(self.target_isr)
        if completed is None:
            return
        self.target_replicas, self.target_isr = completed
        self.target_removing = []
        self.target_adding = []

    def _maybe_populate_target_elr(self) -> None:
        if not self.eligible_leader_replicas_enabled:
            return
        if len(self.target_isr) >= self.min_isr:
            self.target_elr = []
            self.target_last_known_elr = []
            return
        isr_set = set(self.target_isr)
        unclean = set(self.unclean_shutdown_replicas or ())
        # The ELR takes the current ISR members leaving it (never an unclean-shutdown one);
        # the last known ELR keeps everyone else who was once eligible.
        candidates = set(self.target_elr) | set(self.partition.isr)
        self.target_elr = sorted(r for r in candidates if r not in isr_set and r not in unclean)
        candidates |= set(self.target_last_known_elr)
        self.target_last_known_elr = sorted(r for r in candidates
                                            if r not in isr_set and r not in self.target_elr)

    def _maybe_update_record_elr(self, record: PartitionChangeRecord) -> None:
        clean = record.isr is None           # an unclean election has set the ISR already
        if not clean or not self.eligible_leader_replicas_enabled:
            self.target_elr = []
            self.target_last_known_elr = []
        if self.target_elr != self.partition.elr:
            record.eligible_leader_replicas = list(self.target_elr)
        if (self.use_last_known_leader_in_balanced_recovery
                and len(self.partition.last_known_elr) == 1
                and (record.leader == NO_LEADER
                     or (record.leader == NO_LEADER_CHANGE
                         and self.partition.leader == NO_LEADER))):
            # the stored last known leader stays while the partition has no leader
            self.target_last_known_elr = list(self.partition.last_known_elr)
        if self.use_last_known_leader_in_balanced_recovery:
            return                           # _maybe_update_last_known_leader decides
        if self.target_last_known_elr != self.partition.last_known_elr:
            record.last_known_elr = list(self.target_last_known_elr)

    def _maybe_update_last_known_leader(self, record: PartitionChangeRecord) -> None:
        if not (self.use_last_known_leader_in_balanced_recovery
                and self.eligible_leader_replicas_enabled):
            return
        part = self.partition
        if (record.isr is not None and not record.isr
                and (len(part.last_known_elr) != 1 or part.last_known_elr[0] != part.leader)):
            # the first time the partition becomes leaderless: remember who led it
            record.last_known_elr = [part.leader]
        elif ((record.leader >= 0 or (part.leader != NO_LEADER and record.leader != NO_LEADER))
              and part.last_known_elr):
            record.last_known_elr = []       # it has (or keeps) a leader: forget the last one

    def _set_assignment_changes(self, record: PartitionChangeRecord) -> None:
        part = self.partition
        if self.target_replicas:
            if self.metadata_version.is_directory_assignment_supported:
                dirs = [self.target_directories.get(r) or self.default_dir(r)
                        for r in self.target_replicas]
                if dirs != self._current_dirs:
                    record.directories = dirs
            if self.target_replicas != part.replicas:
                record.replicas = list(self.target_replicas)
        if self.target_removing != part.removing_replicas:
            record.removing_replicas = list(self.target_removing)
        if self.target_adding != part.adding_replicas:
            record.adding_replicas = list(self.target_adding)

    # -- build ------------------------------------------------------------------------------

    def build(self) -> PartitionChangeRecord | None:
        """The change record, or ``None`` when it would change nothing (``build``)."""
        record = PartitionChangeRecord(topic_id=self.topic_id, partition_id=self.partition_id)
        self._complete_reassignment_if_needed()
        self._maybe_populate_target_elr()
        self._try_election(record)
        self.trigger_leader_epoch_bump_for_replica_reassignment_if_needed(record)
        self._maybe_update_record_elr(record)
        # Without ELR the ISR never becomes empty: its last member stays, leaderless.
        if (record.isr is None
                and (self.target_isr or self.eligible_leader_replicas_enabled)
                and self.target_isr != self.partition.isr):
            record.isr = list(self.target_isr)
        self.trigger_leader_epoch_bump_for_isr_shrink_if_needed(record)
        self._maybe_update_last_known_leader(record)
        self._set_assignment_changes(record)
        if self.target_leader_recovery_state != self.partition.leader_recovery_state:
            record.leader_recovery_state = self.target_leader_recovery_state
        return None if record.is_no_op() else record
