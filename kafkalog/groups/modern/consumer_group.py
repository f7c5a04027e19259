"""KIP-848 consumer groups (``group.protocol=consumer``): the state Kafka 4.0 keeps per group.

Ported from the group-coordinator module's ``modern.consumer.ConsumerGroup``,
``ConsumerGroupMember`` and ``modern.MemberState`` (Kafka 4.0). The state is exactly what the
``__consumer_offsets`` records of types 3-8 say (:meth:`ConsumerGroup.replay`): the coordinator
builds records, appends them and replays them, and a reload replays the same bytes, so memory
never differs from what a restart would build (Kafka's ``CoordinatorResult`` records +
``GroupMetadataManager.replay``).

Terms (KIP-848):

* **group epoch**: bumped whenever the group's subscriptions or the subscribed topics' metadata
  change; a new **target assignment** is then computed by the server-side assignor at that epoch
  (the *assignment epoch*).
* **member epoch**: the epoch of the assignment the member holds. A member reconciles towards
  the target one step at a time (:mod:`~kafkalog.groups.modern.current_assignment_builder`): it
  first revokes what the target takes away (state ``UNREVOKED_PARTITIONS``), then receives the
  rest, as soon as the previous owners released them (``UNRELEASED_PARTITIONS`` until then).
* **partition epoch**: for every partition some member holds or still has to revoke, the epoch
  of that member; a partition is free to be given to another member only without one.

Topic ids are Kafka's string form (url-safe base64, 22 characters) and an assignment maps topic
id -> frozenset of partitions.

>>> g = ConsumerGroup("app")
>>> g.state, g.group_epoch
('empty', 0)
>>> g.replay_member(ConsumerGroupMember("m1", subscribed_topic_names=("orders",)))
>>> g.replay_group_epoch(1)
>>> g.state
'assigning'
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

__all__ = [
    "MemberState",
    "ConsumerGroupMember",
    "ConsumerGroup",
    "TopicMetadata",
    "ResolvedRegex",
    "ClassicMemberMetadata",
    "Assignment",
    "EMPTY",
    "ASSIGNING",
    "RECONCILING",
    "STABLE",
    "DEAD",
    "assignment_of",
    "assignment_to_list",
]

#: Assignment: topic id -> partitions
Assignment = Mapping[str, frozenset[int]]

#: ``ConsumerGroup.ConsumerGroupState`` (``toLowerCaseString``; ``toString`` capitalises)
EMPTY, ASSIGNING, RECONCILING, STABLE, DEAD = "empty", "assigning", "reconciling", "stable", "dead"


class MemberState(enum.IntEnum):
    """``MemberState``: the byte stored in ``ConsumerGroupCurrentMemberAssignmentValue``."""

    #: the member holds its target assignment (or waits for nothing)
    STABLE = 0
    #: the member must revoke partitions before it gets anything new
    UNREVOKED_PARTITIONS = 1
    #: the member waits for partitions other members still hold
    UNRELEASED_PARTITIONS = 2
    UNKNOWN = 127

    @classmethod
    def from_value(cls, value: int) -> MemberState:
        try:
            return cls(value)
        except ValueError:
            return cls.UNKNOWN


def assignment_of(pairs: Iterable[tuple[str, Iterable[int]]]) -> dict[str, frozenset[int]]:
    """``[(topic id, partitions)]`` -> an assignment (empty partition lists dropped, repeated
    topics merged)."""
    out: dict[str, set[int]] = {}
    for tid, parts in pairs:
        out.setdefault(str(tid), set()).update(int(p) for p in parts)
    return {t: frozenset(ps) for t, ps in out.items() if ps}


def assignment_to_list(assignment: Assignment) -> list[tuple[str, list[int]]]:
    """An assignment as ``[(topic id, sorted partitions)]`` sorted by topic id (records and
    responses; Kafka iterates a HashMap there, so any order is Kafka's)."""
    return [(t, sorted(ps)) for t, ps in sorted(assignment.items()) if ps]


class ClassicMemberMetadata(NamedTuple):
    """``ConsumerGroupMemberMetadataValue.ClassicMemberMetadata``: a member of a consumer group
    that speaks the classic protocol (JoinGroup/SyncGroup/Heartbeat), as after an online
    upgrade: its session timeout and the ``(name, metadata)`` protocols it joined with."""

    session_timeout_ms: int
    supported_protocols: tuple[tuple[str, bytes], ...]


class ResolvedRegex(NamedTuple):
    """``ResolvedRegularExpression``: the topics a subscribed regular expression matched, the
    metadata version it was resolved against and when."""

    topics: frozenset[str]
    version: int
    timestamp: int


@dataclass(frozen=True)
class TopicMetadata:
    """``modern.TopicMetadata``: a subscribed topic as the group last saw it."""

    topic_id: str
    name: str
    num_partitions: int


@dataclass(frozen=True)
class ConsumerGroupMember:
    """``ConsumerGroupMember``: never modified; :func:`dataclasses.replace` makes the next one.

    ``member_epoch`` is the epoch of the assignment the member holds, ``previous_member_epoch``
    the one before (a member whose response with the bumped epoch was lost may still heartbeat
    with it). ``assigned_partitions`` are the partitions the member owns;
    ``partitions_pending_revocation`` those it still owns but must give up.
    """

    member_id: str
    member_epoch: int = 0
    previous_member_epoch: int = -1
    state: MemberState = MemberState.STABLE
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: tuple[str, ...] = ()
    subscribed_topic_regex: str | None = None
    server_assignor_name: str | None = None
    assigned_partitions: Mapping[str, frozenset[int]] = field(default_factory=dict)
    partitions_pending_revocation: Mapping[str, frozenset[int]] = field(default_factory=dict)
    #: set for a member speaking the classic protocol
    classic_member_metadata: ClassicMemberMetadata | None = None

    @property
    def uses_classic_protocol(self) -> bool:
        return self.classic_member_metadata is not None

    def with_epoch(self, member_epoch: int, **changes: Any) -> ConsumerGroupMember:
        """``Builder.updateMemberEpoch``: the previous epoch becomes the current one."""
        return replace(self, member_epoch=member_epoch,
                       previous_member_epoch=self.member_epoch, **changes)

    def is_reconciled_to(self, target_assignment_epoch: int) -> bool:
        """The member holds the target assignment of ``target_assignment_epoch``."""
        return self.state == MemberState.STABLE and self.member_epoch == target_assignment_epoch

    @property
    def regex(self) -> str | None:
        """The subscribed regular expression; None for none (``subscribedTopicRegexOrNull``:
        an empty one is none)."""
        return self.subscribed_topic_regex or None


class ConsumerGroup:
    """``ConsumerGroup``: members, target assignment, epochs, derived indexes.

    Change it only through the ``replay_*`` methods (one per record type), as Kafka's
    ``GroupMetadataManager.replay`` does.
    """

    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.group_epoch = 0
        #: the epoch of :attr:`target_assignment` (``targetAssignmentEpoch``)
        self.assignment_epoch = 0
        self.members: dict[str, ConsumerGroupMember] = {}
        #: member id -> its target assignment
        self.target_assignment: dict[str, dict[str, frozenset[int]]] = {}
        #: topic name -> metadata, for the topics some member subscribes to
        self.subscription_metadata: dict[str, TopicMetadata] = {}
        #: instance id -> member id
        self.static_members: dict[str, str] = {}
        #: (topic id, partition) -> epoch of the member holding or revoking it
        self._partition_epochs: dict[tuple[str, int], int] = {}
        #: topic name -> number of members subscribing to it by name
        self.subscribed_topic_names: dict[str, int] = {}
        #: assignor name -> number of members asking for it
        self.server_assignors: dict[str, int] = {}
        #: regular expression -> number of members subscribing to it
        self.subscribed_regexes: dict[str, int] = {}
        #: regular expression -> what it resolved to (type-16 records)
        self.resolved_regexes: dict[str, ResolvedRegex] = {}
        #: a metadata refresh was asked for (topics changed): the next heartbeat recomputes
        self.metadata_refresh_needed = False
        #: KIP-1101's hash of the subscribed topics at the last group epoch (record 3)
        self.metadata_hash = 0

    # -- derived --------------------------------------------------------------------------------

    @property
    def state(self) -> str:
        """``maybeUpdateGroupState``: empty, assigning, reconciling or stable."""
        if not self.members:
            return EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ASSIGNING
        for m in self.members.values():
            if not m.is_reconciled_to(self.assignment_epoch):
                return RECONCILING
        return STABLE

    def all_classic_except(self, member_id: str) -> bool:
        """``allMembersUseClassicProtocolExcept``."""
        return all(m.uses_classic_protocol for mid, m in self.members.items() if mid != member_id)

    def supports_classic_protocols(self, protocol_type: str, names: set[str]) -> bool:
        """``supportsClassicProtocols``: the consumer protocol type, and (unless the group is
        empty) a protocol every classic member supports."""
        if protocol_type != "consumer":
            return False
        if not self.members:
            return bool(names)
        classic = [m for m in self.members.values() if m.uses_classic_protocol]
        return any(all(n in {p for p, _ in m.classic_member_metadata.supported_protocols}
                       for m in classic) for n in names)

    def waiting_on_unreleased_partition(self, member: ConsumerGroupMember) -> bool:
        """``waitingOnUnreleasedPartition``: a partition of its target is still held by
        another member."""
        if member.state != MemberState.UNRELEASED_PARTITIONS:
            return False
        for tid, parts in self.target_assignment.get(member.member_id, {}).items():
            held = member.assigned_partitions.get(tid, frozenset())
            for p in parts:
                if p not in held and self.current_partition_epoch(tid, p) != -1:
                    return True
        return False

    def current_partition_epoch(self, topic_id: str, partition: int) -> int:
        """The epoch of the member owning (or revoking) the partition; -1 when it is free."""
        return self._partition_epochs.get((topic_id, partition), -1)

    def static_member(self, instance_id: str | None) -> ConsumerGroupMember | None:
        member_id = None if instance_id is None else self.static_members.get(instance_id)
        return None if member_id is None else self.members.get(member_id)

    def target_of(self, member_id: str, instance_id: str | None = None
                  ) -> dict[str, frozenset[int]]:
        """``targetAssignment(memberId, instanceId)``: a replacing static member inherits."""
        if member_id in self.target_assignment:
            return self.target_assignment[member_id]
        if instance_id is not None:
            previous = self.static_members.get(instance_id)
            if previous is not None:
                return self.target_assignment.get(previous, {})
        return {}

    def subscribed_topics_with(self, old: ConsumerGroupMember | None,
                               new: ConsumerGroupMember | None) -> dict[str, int]:
        """``computeSubscribedTopicNames``: the topics the group subscribes to with ``old``
        replaced by ``new`` (topic -> count): the members' names, and the topics of every
        resolved regular expression some member still subscribes to."""
        counts = dict(self.subscribed_topic_names)
        _count(counts, old.subscribed_topic_names if old else (), -1)
        _count(counts, new.subscribed_topic_names if new else (), +1)
        regexes = dict(self.subscribed_regexes)
        _count(regexes, [old.regex] if old and old.regex else (), -1)
        _count(regexes, [new.regex] if new and new.regex else (), +1)
        for regex, resolved in self.resolved_regexes.items():
            if regexes.get(regex):
                _count(counts, resolved.topics, +1)
        return counts

    def member_topics(self, member: ConsumerGroupMember) -> set[str]:
        """What the assignor sees the member subscribe to: its names and what its regular
        expression resolved to (``TargetAssignmentBuilder`` with resolved expressions)."""
        topics = set(member.subscribed_topic_names)
        resolved = self.resolved_regexes.get(member.regex) if member.regex else None
        if resolved is not None:
            topics |= resolved.topics
        return topics

    @property
    def last_regex_refresh_ms(self) -> int:
        """``lastResolvedRegularExpressionRefreshTimeMs``: the expressions are resolved
        together, so any one's timestamp stands for all (Long.MIN_VALUE when none)."""
        for resolved in self.resolved_regexes.values():
            return resolved.timestamp
        return -(1 << 63)

    @property
    def last_regex_version(self) -> int:
        """``lastResolvedRegularExpressionVersion`` (0 when none)."""
        for resolved in self.resolved_regexes.values():
            return resolved.version
        return 0

    def preferred_server_assignor(self, old: ConsumerGroupMember | None,
                                  new: ConsumerGroupMember | None) -> str | None:
        """``computePreferredServerAssignor``: the assignor most members ask for."""
        counts = dict(self.server_assignors)
        _count(counts, [old.server_assignor_name] if old and old.server_assignor_name else (), -1)
        _count(counts, [new.server_assignor_name] if new and new.server_assignor_name else (), +1)
        if not counts:
            return None
        return max(counts.items(), key=lambda kv: kv[1])[0]

    # -- replay (one method per record type) ----------------------------------------------------

    def replay_group_epoch(self, epoch: int, metadata_hash: int = 0) -> None:
        """``ConsumerGroupMetadataValue`` (type 3): the epoch and KIP-1101 metadata hash."""
        self.group_epoch = epoch
        self.metadata_hash = metadata_hash

    def replay_subscription_metadata(self, metadata: Mapping[str, TopicMetadata]) -> None:
        """``ConsumerGroupPartitionMetadataValue`` (type 4)."""
        self.subscription_metadata = dict(metadata)

    def replay_resolved_regex(self, regex: str, resolved: ResolvedRegex | None) -> None:
        """``ConsumerGroupRegularExpressionValue`` (type 16); None: its tombstone."""
        if resolved is None:
            self.resolved_regexes.pop(regex, None)
        else:
            self.resolved_regexes[regex] = resolved

    def _names_with(self, old: ConsumerGroupMember | None,
                    new: ConsumerGroupMember | None) -> dict[str, int]:
        counts = dict(self.subscribed_topic_names)
        _count(counts, old.subscribed_topic_names if old else (), -1)
        _count(counts, new.subscribed_topic_names if new else (), +1)
        return counts

    def _regexes_with(self, old: ConsumerGroupMember | None,
                      new: ConsumerGroupMember | None) -> None:
        _count(self.subscribed_regexes, [old.regex] if old and old.regex else (), -1)
        _count(self.subscribed_regexes, [new.regex] if new and new.regex else (), +1)

    def replay_member(self, member: ConsumerGroupMember) -> None:
        """``ConsumerGroupMemberMetadataValue`` (type 5) or ``...CurrentMemberAssignmentValue``
        (type 8) applied to the member: ``updateMember``."""
        old = self.members.get(member.member_id)
        self.members[member.member_id] = member
        self.subscribed_topic_names = self._names_with(old, member)
        self._regexes_with(old, member)
        if old is not None and old.server_assignor_name:
            _count(self.server_assignors, [old.server_assignor_name], -1)
        if member.server_assignor_name:
            _count(self.server_assignors, [member.server_assignor_name], +1)
        self._update_partition_epochs(old, member)
        if member.instance_id is not None:
            self.static_members[member.instance_id] = member.member_id

    def remove_member(self, member_id: str) -> None:
        """``removeMember``: the member's tombstones."""
        old = self.members.pop(member_id, None)
        if old is None:
            return
        self.subscribed_topic_names = self._names_with(old, None)
        self._regexes_with(old, None)
        if old.server_assignor_name:
            _count(self.server_assignors, [old.server_assignor_name], -1)
        self._update_partition_epochs(old, None)
        if old.instance_id is not None and self.static_members.get(old.instance_id) == member_id:
            del self.static_members[old.instance_id]

    def replay_target_assignment_epoch(self, epoch: int) -> None:
        """``ConsumerGroupTargetAssignmentMetadataValue`` (type 6)."""
        self.assignment_epoch = epoch

    def replay_target_assignment(self, member_id: str,
                                 assignment: Mapping[str, frozenset[int]] | None) -> None:
        """``ConsumerGroupTargetAssignmentMemberValue`` (type 7); None: its tombstone."""
        if assignment is None:
            self.target_assignment.pop(member_id, None)
        else:
            self.target_assignment[member_id] = dict(assignment)

    def _update_partition_epochs(self, old: ConsumerGroupMember | None,
                                 new: ConsumerGroupMember | None) -> None:
        """``maybeUpdatePartitionEpoch``: a member's held and revoking partitions carry its
        epoch."""
        if old is not None:
            for a in (old.assigned_partitions, old.partitions_pending_revocation):
                for tid, parts in a.items():
                    for p in parts:
                        if self._partition_epochs.get((tid, p)) == old.member_epoch:
                            del self._partition_epochs[(tid, p)]
        if new is not None:
            for a in (new.assigned_partitions, new.partitions_pending_revocation):
                for tid, parts in a.items():
                    for p in parts:
                        self._partition_epochs[(tid, p)] = new.member_epoch


def _count(counts: dict[str, int], names: Iterable[str], delta: int) -> None:
    for n in names:
        c = counts.get(n, 0) + delta
        if c > 0:
            counts[n] = c
        else:
            counts.pop(n, None)
