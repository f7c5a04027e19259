"""Classic-protocol members inside KIP-848 consumer groups, and the online migration between the
two kinds of group (``group.consumer.migration.policy``: Kafka 4.0's default ``bidirectional``
converts both ways, ``upgrade``/``downgrade`` one way, ``disabled`` neither).

Ported from Kafka 4.0's ``GroupMetadataManager`` (``classicGroupJoinToConsumerGroup``,
``classicGroupSyncToConsumerGroup``, ``classicGroupHeartbeatToConsumerGroup``,
``classicGroupLeaveToConsumerGroup``, ``convertToConsumerGroup``, ``convertToClassicGroup``),
``ConsumerGroup.fromClassicGroup`` and ``ClassicGroup.fromConsumerGroup``:

* **Upgrade.** The first ConsumerGroupHeartbeat of a member for a non-empty classic group that
  uses the consumer protocol converts it: its pending JoinGroup/SyncGroup calls answer
  REBALANCE_IN_PROGRESS, a tombstone replaces its group metadata, and every classic member
  becomes a consumer group member at the generation's epoch holding its last assignment (with
  its session timeout and join protocols kept as ``ClassicMemberMetadata``).
* **Classic members of a consumer group** keep using JoinGroup/SyncGroup/Heartbeat/LeaveGroup:
  a JoinGroup is one reconciliation step (the owned partitions come from the subscription); the
  generation is the member epoch; SyncGroup returns the member's current assignment; Heartbeat
  answers REBALANCE_IN_PROGRESS when the member must rejoin (the group epoch moved, partitions
  to revoke, released partitions to collect). Their timers are their own session timeout, and
  the rebalance timeout to rejoin and to sync.
* **Downgrade.** When the last member using the consumer protocol leaves (or is fenced) and
  classic members remain, the group becomes a classic group again: tombstones of the consumer
  group, a group metadata record (generation = group epoch, each member's target assignment
  serialized in its protocol's version), and a rebalance. The same happens, without the
  rebalance, when the last consumer-protocol member is static and a classic consumer with its
  ``group.instance.id`` replaces it (``validateOnlineDowngradeWithReplacedMemberId``): the
  joining member takes the replaced one's assignment in a Stable classic group. Neither
  happens when the policy forbids it or the classic group would exceed ``group.max.size``.
"""

from __future__ import annotations

import logging
import struct
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ...decoders.offsets import CODEC
from ...errors import CorruptRecordError
from .. import consumer_protocol as cp
from ..error_codes import ErrorCode
from ..records import GroupMetadata, MemberMetadata, group_metadata_record, group_metadata_tombstone
from ..responses import (
    HeartbeatResponse,
    JoinGroupResponse,
    LeaveGroupResponse,
    LeaveMemberResponse,
    MemberIdentity,
    SyncGroupResponse,
)
from . import records as cgr
from .consumer_group import (
    ClassicMemberMetadata,
    ConsumerGroup,
    ConsumerGroupMember,
    MemberState,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..classic_group import ClassicGroup

__all__ = ["ClassicMembersMixin", "Refusal", "session_key", "rebalance_key", "join_key",
           "sync_key"]

logger = logging.getLogger(__name__)

Records = list[tuple[bytes, bytes | None]]


class Refusal(Exception):
    """An error response of a consumer group request: ``code`` and Kafka's message."""

    def __init__(self, code: int, message: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def session_key(group_id: str, member_id: str) -> str:
    return f"session-timeout-{group_id}-{member_id}"      # groupSessionTimeoutKey


def rebalance_key(group_id: str, member_id: str) -> str:
    return f"rebalance-timeout-{group_id}-{member_id}"    # consumerGroupRebalanceTimeoutKey


def join_key(group_id: str, member_id: str) -> str:
    return f"join-{group_id}-{member_id}"                  # consumerGroupJoinKey


def sync_key(group_id: str, member_id: str) -> str:
    return f"sync-{group_id}-{member_id}"                  # consumerGroupSyncKey


class ClassicMembersMixin:
    """The classic-protocol half of :class:`ConsumerGroupCoordinator` (see the module
    docstring). Relies on the coordinator's ``_owner``, ``_topics``, ``_write``,
    ``_member_for``, ``_update_member``, ``_subscription_metadata``, ``_metadata_hash``
    and timers."""

    _owner: Any
    _topics: dict[str, tuple[str, int]]

    # -- topic names <-> ids ----------------------------------------------------------------

    def _ids_of(self, partitions: Iterable[tuple[str, int]]) -> list[tuple[str, list[int]]]:
        """``(topic, partition)`` pairs by topic id (topics the cluster lacks are dropped, as
        Kafka's ``toTopicPartitions`` does)."""
        out: dict[str, list[int]] = {}
        for t, p in partitions:
            known = self._topics.get(t)
            if known is not None:
                out.setdefault(known[0], []).append(p)
        return list(out.items())

    def _names_of(self, assignment: Any) -> list[tuple[str, int]]:
        names = {tid: t for t, (tid, _) in self._topics.items()}
        return [(names[tid], p) for tid, ps in sorted(assignment.items()) if tid in names
                for p in sorted(ps)]

    # -- upgrade --------------------------------------------------------------------------------

    def _upgrade(self, classic: ClassicGroup, records: Records) -> ConsumerGroup:
        """``convertToConsumerGroup``: the records that turn ``classic`` into a consumer group,
        appended to ``records``; returns the group those records describe."""
        group_id = classic.group_id
        generation = classic.generation_id
        converted: Records = []
        members: list[ConsumerGroupMember] = []
        try:
            for m in classic.all_members():
                sub = cp.decode_subscription(m.metadata(classic.protocol_name))
                assignment = cp.decode_assignment(m.assignment) if m.assignment \
                    else cp.Assignment([])
                members.append(ConsumerGroupMember(
                    m.member_id, generation, generation, MemberState.STABLE,
                    m.group_instance_id, sub.rack_id, m.rebalance_timeout_ms, m.client_id,
                    m.client_host, tuple(sorted(set(sub.topics))), None, None,
                    _assignment(self._ids_of(assignment.partitions)), {},
                    ClassicMemberMetadata(m.session_timeout_ms, tuple(m.protocols))))
        except (CorruptRecordError, ValueError):
            raise Refusal(ErrorCode.GROUP_ID_NOT_FOUND,
                          f"Cannot upgrade the classic group {group_id} to consumer group "
                          f"because the embedded consumer protocol is malformed.") from None
        classic.complete_all_joins(ErrorCode.REBALANCE_IN_PROGRESS)
        classic.complete_all_syncs(ErrorCode.REBALANCE_IN_PROGRESS)
        converted.append(group_metadata_tombstone(group_id))
        # ConsumerGroup.createConsumerGroupRecords
        converted += [cgr.member_subscription_record(group_id, m) for m in members]
        converted.append(cgr.group_epoch_record(group_id, generation, self._metadata_hash(
            [t for m in members for t in m.subscribed_topic_names])))
        converted += [cgr.target_assignment_record(group_id, m.member_id,
                                                   m.assigned_partitions) for m in members]
        converted.append(cgr.target_assignment_epoch_record(group_id, generation))
        converted += [cgr.current_assignment_record(group_id, m) for m in members]
        records += converted
        groups: dict[str, ConsumerGroup] = {}
        for key, value in converted[1:]:
            cgr.replay(groups, CODEC.decode(key, value))
        logger.info("[GroupId %s] Converted the classic group to a consumer group.", group_id)
        return groups[group_id]

    def _after_upgrade(self, group: ConsumerGroup) -> None:
        """Once the conversion is written: the classic group's timers go, each member's
        session timeout is its own."""
        self._owner._remove_group(group.group_id)
        for m in group.members.values():
            if m.classic_member_metadata is not None:
                self._schedule_classic_session(group.group_id, m)

    # -- classic requests on a consumer group ---------------------------------------------------

    def classic_join(self, group: ConsumerGroup, member_id: str, protocol_type: str,
                     protocols: Sequence[tuple[str, bytes]], session_timeout_ms: int,
                     rebalance_timeout_ms: int, instance_id: str | None, client_id: str,
                     client_host: str, api_version: int) -> JoinGroupResponse:
        """``classicGroupJoinToConsumerGroup``."""
        group_id = group.group_id
        unknown = member_id == ""
        if unknown:
            member_id = str(uuid.uuid4())
        try:
            max_size = self._owner.config.group_consumer_max_size
            if len(group.members) >= max_size and member_id not in group.members:
                return JoinGroupResponse(ErrorCode.GROUP_MAX_SIZE_REACHED, member_id=member_id)
            if not group.supports_classic_protocols(protocol_type, {n for n, _ in protocols}):
                return JoinGroupResponse(ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                                         member_id=member_id)
            if unknown and instance_id is None and api_version >= 4:
                return JoinGroupResponse(ErrorCode.MEMBER_ID_REQUIRED, member_id=member_id)
            records: Records = []
            member = self._member_for(group, member_id, -1, instance_id, [],
                                      unknown or instance_id is None, records, classic=True)
            try:
                sub = cp.decode_subscription(protocols[0][1])
            except (CorruptRecordError, IndexError):
                return JoinGroupResponse(ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                                         member_id=member_id)
            changes: dict[str, Any] = {
                "client_id": client_id, "client_host": client_host,
                "subscribed_topic_names": tuple(sorted(set(sub.topics))),
                "classic_member_metadata": ClassicMemberMetadata(
                    session_timeout_ms, tuple((n, bytes(m)) for n, m in protocols))}
            if instance_id is not None:
                changes["instance_id"] = instance_id
            if sub.rack_id is not None:
                changes["rack_id"] = sub.rack_id
            if rebalance_timeout_ms != -1:
                changes["rebalance_timeout_ms"] = rebalance_timeout_ms
            updated = replace(member, **changes)
            reconciled, _ = self._update_member(group, member, updated,
                                                self._ids_of(sub.owned_partitions), records,
                                                new_group_bumps=False, regexes=False)
            # the last static member using the consumer protocol replaced by this classic one:
            # the group becomes a classic group at once, without a rebalance
            # (validateOnlineDowngradeWithReplacedMemberId + convertToClassicGroup)
            replaced = None if instance_id is None else group.static_member(instance_id)
            downgrade = False
            if replaced is not None and self._downgrade_allowed(group, replaced.member_id,
                                                                len(group.members)):
                # the records above already replaced the old member by this one: it is this
                # one's records that the tombstones remove
                conversion = cgr.group_tombstones(group, replaced=(replaced.member_id,
                                                                   member_id))
                downgrade = self._classic_group_records(group, replaced.member_id, reconciled,
                                                        conversion)
                if downgrade:
                    records += conversion
            self._write(group_id, records)
        except Refusal as e:
            return JoinGroupResponse(e.code, member_id=member_id)
        timer = self._owner._timer_impl
        timer.cancel(join_key(group_id, member_id))
        response = JoinGroupResponse(ErrorCode.NONE, reconciled.member_epoch, cp.PROTOCOL_TYPE,
                                     protocols[0][0], "", False, member_id, [])
        if downgrade:
            self._after_downgrade(group)
            return response
        self._schedule_classic_session(group_id, reconciled)
        timer.schedule(sync_key(group_id, member_id), max(0, rebalance_timeout_ms),
                       lambda: self._fence_by_timer(group_id, member_id,
                                                    "the member failed to sync within timeout"))
        return response

    def _classic_member(self, group: ConsumerGroup, member_id: str,
                        instance_id: str | None, *, admin: bool = False) -> ConsumerGroupMember:
        """``validateConsumerGroupMember`` + ``throwIfMemberDoesNotUseClassicProtocol``
        (``admin``: a LeaveGroup naming a static member by instance id alone, member id "")."""
        if instance_id is None:
            member = group.members.get(member_id)
            if member is None:
                raise Refusal(ErrorCode.UNKNOWN_MEMBER_ID)
        else:
            member = group.static_member(instance_id)
            if member is None:
                raise Refusal(ErrorCode.UNKNOWN_MEMBER_ID)
            if member.member_id != member_id and not (admin and member_id == ""):
                raise Refusal(ErrorCode.FENCED_INSTANCE_ID)
        if not member.uses_classic_protocol:
            raise Refusal(ErrorCode.UNKNOWN_MEMBER_ID)
        return member

    def classic_sync(self, group: ConsumerGroup, generation_id: int, member_id: str,
                     instance_id: str | None, protocol_type: str | None,
                     protocol_name: str | None) -> SyncGroupResponse:
        """``classicGroupSyncToConsumerGroup``."""
        try:
            member = self._classic_member(group, member_id, instance_id)
            if generation_id != member.member_epoch:
                return SyncGroupResponse(ErrorCode.ILLEGAL_GENERATION)
            meta = member.classic_member_metadata
            assert meta is not None
            if (protocol_type is not None and protocol_type != cp.PROTOCOL_TYPE) or \
                    (protocol_name is not None and protocol_name != meta.supported_protocols[0][0]):
                return SyncGroupResponse(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
            self._throw_if_rebalance_in_progress(group, member)
        except Refusal as e:
            return SyncGroupResponse(e.code)
        timer = self._owner._timer_impl
        timer.cancel(sync_key(group.group_id, member.member_id))
        self._schedule_classic_session(group.group_id, member)
        version = struct.unpack_from(">h", meta.supported_protocols[0][1])[0] \
            if len(meta.supported_protocols[0][1]) >= 2 else 0
        assignment = cp.encode_assignment(
            cp.Assignment(self._names_of(member.assigned_partitions)), max(0, version))
        return SyncGroupResponse(ErrorCode.NONE, protocol_type, protocol_name, assignment)

    def _throw_if_rebalance_in_progress(self, group: ConsumerGroup,
                                        member: ConsumerGroupMember) -> None:
        """``throwIfRebalanceInProgress``: the member is behind the group and not revoking."""
        if group.group_epoch > member.member_epoch \
                and member.state != MemberState.UNREVOKED_PARTITIONS:
            self._schedule_join_timeout(group.group_id, member)
            raise Refusal(ErrorCode.REBALANCE_IN_PROGRESS)

    def classic_heartbeat(self, group: ConsumerGroup, generation_id: int, member_id: str,
                          instance_id: str | None) -> HeartbeatResponse:
        """``classicGroupHeartbeatToConsumerGroup``: REBALANCE_IN_PROGRESS when the member
        must rejoin (behind the group epoch, revoking, or released partitions to collect)."""
        try:
            member = self._classic_member(group, member_id, instance_id)
        except Refusal as e:
            return HeartbeatResponse(e.code)
        if generation_id != member.member_epoch:
            return HeartbeatResponse(ErrorCode.ILLEGAL_GENERATION)
        self._schedule_classic_session(group.group_id, member)
        if member.member_epoch < group.group_epoch \
                or member.state == MemberState.UNREVOKED_PARTITIONS \
                or (member.state == MemberState.UNRELEASED_PARTITIONS
                    and not group.waiting_on_unreleased_partition(member)):
            self._schedule_join_timeout(group.group_id, member)
            return HeartbeatResponse(ErrorCode.REBALANCE_IN_PROGRESS)
        return HeartbeatResponse(ErrorCode.NONE)

    def classic_leave(self, group: ConsumerGroup,
                      identities: Sequence[MemberIdentity]) -> LeaveGroupResponse:
        """``classicGroupLeaveToConsumerGroup``: the members are removed, the group epoch
        bumped once."""
        group_id = group.group_id
        responses: list[LeaveMemberResponse] = []
        records: Records = []
        leaving: list[ConsumerGroupMember] = []
        for ident in identities:
            member_id, instance_id = ident.member_id, ident.group_instance_id
            try:
                member = self._classic_member(group, member_id, instance_id, admin=True)
                member_id = member.member_id
            except Refusal as e:
                responses.append(LeaveMemberResponse(member_id, instance_id, e.code))
                continue
            records += [cgr.current_assignment_tombstone(group_id, member_id),
                        cgr.target_assignment_tombstone(group_id, member_id),
                        cgr.member_subscription_tombstone(group_id, member_id)]
            self._cancel_member_timers(group_id, member_id)
            responses.append(LeaveMemberResponse(member_id, instance_id))
            leaving.append(member)
        if records:
            remaining = [m for mid, m in group.members.items()
                         if mid not in {x.member_id for x in leaving}]
            counts: dict[str, int] = {}
            for m in remaining:
                for t in group.member_topics(m):
                    counts[t] = counts.get(t, 0) + 1
            metadata = self._subscription_metadata(counts)
            if metadata != group.subscription_metadata:
                records.append(cgr.subscription_metadata_record(group_id, metadata))
            records.append(cgr.group_epoch_record(group_id, group.group_epoch + 1,
                                                  self._metadata_hash(counts)))
            try:
                self._write(group_id, records)
            except Refusal as e:
                return LeaveGroupResponse(e.code)
        return LeaveGroupResponse(ErrorCode.NONE, responses)

    # -- downgrade ------------------------------------------------------------------------------

    def _maybe_downgrade(self, group: ConsumerGroup, leaving_member_id: str) -> bool:
        """``validateOnlineDowngradeWithFencedMember`` + ``convertToClassicGroup``: True when
        the group was turned back into a classic group (the leaving member removed) and a
        rebalance begun."""
        if len(group.members) <= 1 or not self._downgrade_allowed(
                group, leaving_member_id, len(group.members) - 1):
            return False
        group_id = group.group_id
        records = cgr.group_tombstones(group)
        if not self._classic_group_records(group, leaving_member_id, None, records):
            return False
        self._write(group_id, records)
        classic = self._after_downgrade(group)
        self._owner._prepare_rebalance(
            classic, f"Downgrade group {group_id} from consumer to classic.")
        return True

    def _downgrade_allowed(self, group: ConsumerGroup, leaving_member_id: str,
                           size: int) -> bool:
        """The checks ``validateOnlineDowngradeWith{Fenced,Replaced}Member`` share: every other
        member uses the classic protocol, the policy allows a downgrade, and the classic group
        (``size`` members) fits ``group.max.size``."""
        if not group.all_classic_except(leaving_member_id):
            return False
        group_id = group.group_id
        if self._owner.config.group_consumer_migration_policy not in ("downgrade",
                                                                      "bidirectional"):
            logger.info("Cannot downgrade consumer group %s to classic group because the online "
                        "downgrade is disabled.", group_id)
            return False
        if size > self._owner.config.group_max_size:
            logger.info("Cannot downgrade consumer group %s to classic group because its group "
                        "size is greater than classic group max size.", group_id)
            return False
        return True

    def _classic_group_records(self, group: ConsumerGroup, leaving_member_id: str,
                               joining: ConsumerGroupMember | None, records: Records) -> bool:
        """``ClassicGroup.fromConsumerGroup`` + ``createClassicGroupRecords``: the group
        metadata record of the classic group, appended to ``records`` (False, nothing added,
        when the members share no protocol). Its members are the consumer group's except
        ``leaving_member_id``, then ``joining`` (a static member replacing the leaving one,
        which takes the leaving member's target assignment); its generation is the group epoch;
        each assignment is serialized in the version of its member's protocol metadata."""
        group_id = group.group_id
        remaining = [m for mid, m in group.members.items() if mid != leaving_member_id]
        if joining is not None:
            remaining.append(joining)
        # ClassicGroup.selectProtocol: of the protocols every member supports, the one with the
        # most votes (each member votes for the first of its own it finds among them)
        candidates = set.intersection(*({n for n, _ in m.classic_member_metadata.
                                         supported_protocols} for m in remaining))
        if not candidates:
            return False
        votes: dict[str, int] = {}
        for m in remaining:
            for n, _ in m.classic_member_metadata.supported_protocols:
                if n in candidates:
                    votes[n] = votes.get(n, 0) + 1
                    break
        protocol = max(votes.items(), key=lambda kv: kv[1])[0]
        members = []
        for m in remaining:
            meta = dict(m.classic_member_metadata.supported_protocols)[protocol]
            version = struct.unpack_from(">h", meta)[0] if len(meta) >= 2 else 0
            target_of = leaving_member_id if m is joining else m.member_id
            assignment = cp.encode_assignment(
                cp.Assignment(self._names_of(group.target_assignment.get(target_of, {}))),
                max(0, version))
            members.append(MemberMetadata(
                m.member_id, m.client_id, m.client_host, m.rebalance_timeout_ms,
                m.classic_member_metadata.session_timeout_ms, meta, assignment, m.instance_id))
        now = self._owner.clock.milliseconds()
        records.append(group_metadata_record(GroupMetadata(
            group_id, cp.PROTOCOL_TYPE, group.group_epoch, protocol, members[0].member_id, now,
            tuple(members))))
        return True

    def _after_downgrade(self, group: ConsumerGroup) -> ClassicGroup:
        """Once the conversion is written: the consumer group's timers go; the classic group
        is loaded from its record, its members' heartbeats scheduled."""
        group_id = group.group_id
        for m in group.members:
            self._cancel_member_timers(group_id, m)
        classic = self._owner._load_group(group_id)
        logger.info("[GroupId %s] Converted the consumer group to a classic group.", group_id)
        return classic

    # -- timers -----------------------------------------------------------------------------

    def _schedule_classic_session(self, group_id: str, member: ConsumerGroupMember) -> None:
        meta = member.classic_member_metadata
        timeout = meta.session_timeout_ms if meta is not None \
            else self._owner.consumer_timeouts(group_id)[0]
        member_id = member.member_id
        self._owner._timer_impl.schedule(
            session_key(group_id, member_id), timeout,
            lambda: self._fence_by_timer(group_id, member_id, "the member session expired"))

    def _schedule_join_timeout(self, group_id: str, member: ConsumerGroupMember) -> None:
        """``scheduleConsumerGroupJoinTimeoutIfAbsent``."""
        key = join_key(group_id, member.member_id)
        timer = self._owner._timer_impl
        if timer.is_scheduled(key):
            return
        member_id = member.member_id
        timer.schedule(key, max(0, member.rebalance_timeout_ms),
                       lambda: self._fence_by_timer(
                           group_id, member_id,
                           "the classic member failed to join within the rebalance timeout"))

    def _cancel_member_timers(self, group_id: str, member_id: str) -> None:
        """``cancelTimers``."""
        timer = self._owner._timer_impl
        for key in (session_key(group_id, member_id),
                    rebalance_key(group_id, member_id),
                    join_key(group_id, member_id), sync_key(group_id, member_id)):
            timer.cancel(key)

    def _fence_by_timer(self, group_id: str, member_id: str, reason: str,
                        epoch: int | None = None) -> None:
        raise NotImplementedError  # pragma: no cover - ConsumerGroupCoordinator's


def _assignment(pairs: list[tuple[str, list[int]]]) -> dict[str, frozenset[int]]:
    return {t: frozenset(ps) for t, ps in pairs if ps}
