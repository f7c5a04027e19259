"""``GroupCoordinator``: Kafka's classic group coordinator as a sans-IO state machine.

Ported from the group-coordinator module's ``GroupMetadataManager`` (classic-group part),
``OffsetMetadataManager`` and ``GroupCoordinatorShard``/``GroupCoordinatorService`` (Kafka 4.0;
the rules are those of core's ``GroupCoordinator.scala`` in 3.x). It owns no socket, no thread
and never sleeps; time comes from the injected :class:`~kafkalog.clock.Clock`. Persistent state
goes through a :class:`~kafkalog.groups.metadata_manager.GroupMetadataManager`, so a new
coordinator over the same (reopened) log dir recovers every group.

How a server drives it
======================

* **Requests are method calls** whose parameters are the request fields (snake_case).
  ``join_group`` and ``sync_group`` may have to wait for other members (a rebalance completes
  only when everyone joined, or on a timeout): they return a **handle** (an ``int``), and the
  response comes later. Every other call returns its response dataclass
  (:mod:`kafkalog.groups.responses`) at once.
* **Completed delayed responses are drained** with :meth:`take_responses`, a list of
  ``(handle, response)``. Any call can complete handles (a JoinGroup completes the other
  members' JoinGroups; a LeaveGroup, a heartbeat expiry or a SyncGroup can too): drain after
  every call and every :meth:`tick`.
* **Timers**: call :meth:`tick` when the clock reaches :meth:`next_deadline` (absolute clock
  milliseconds, None when nothing is armed). It runs what is due: session timeouts, the
  rebalance timeout, ``group.initial.rebalance.delay.ms``, the pending-sync timeout, the new
  member join timeout (5 minutes) and the periodic offset expiry
  (``offsets.retention.check.interval.ms``).
* **Topic metadata** is fed in: :meth:`update_metadata` with every topic's partition count. A
  Stable consumer group subscribed to a topic whose partition count changed starts a rebalance,
  as its leader's rejoin would (``ConsumerCoordinator.rejoinNeededOrPending``: the leader rejoins
  when the metadata differs from the assignment's snapshot); a member whose pattern subscription
  now matches a new topic rejoins with new metadata itself, which rebalances the group.
* **Transactions**: TxnOffsetCommit offsets stay pending until the transaction's marker is in
  ``__consumer_offsets``; after writing markers, call :meth:`on_transaction_markers` (or let
  the coordinator write them: :meth:`end_transaction`).
* **Errors** are Kafka's numeric codes in the responses (:class:`ErrorCode`); nothing raises
  for a request Kafka would refuse. ``NOT_COORDINATOR`` answers a group whose
  ``__consumer_offsets`` partition is not in the log dir.

Example
-------
>>> import tempfile
>>> from kafkalog import LogDir, ManualClock
>>> from kafkalog.groups import GroupMetadataManager
>>> from kafkalog.groups.consumer_protocol import Subscription, encode_subscription
>>> clock = ManualClock(1_700_000_000_000)
>>> logs = LogDir.open(tempfile.mkdtemp(), {"offsets.topic.num.partitions": "1"}, clock=clock)
>>> coord = GroupCoordinator(GroupMetadataManager(logs), clock=clock,
...                          member_id_factory=lambda prefix: prefix + "-1")
>>> meta = encode_subscription(Subscription(["orders"]))
>>> h = coord.join_group("app", "", "consumer", [("range", meta)], session_timeout_ms=10_000,
...                      client_id="c")
>>> [(hh, r.error_code, r.member_id) for hh, r in coord.take_responses()]   # v4+: id first
[(1, 79, 'c-1')]
>>> h = coord.join_group("app", "c-1", "consumer", [("range", meta)], session_timeout_ms=10_000)
>>> coord.take_responses(), coord.next_deadline() - clock.milliseconds()   # initial delay
([], 3000)
>>> clock.advance(3000); coord.tick()
>>> [(r.generation_id, r.leader, len(r.members)) for _, r in coord.take_responses()]
[(1, 'c-1', 1)]
>>> h = coord.sync_group("app", 1, "c-1", {"c-1": b"plan"})
>>> [(r.error_code, r.assignment) for _, r in coord.take_responses()]
[(0, b'plan')]
>>> coord.heartbeat("app", 1, "c-1").error_code
0
>>> logs.close()
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..clock import Clock
from ..errors import KafkaLogError
from .classic_group import (
    MEMBER_ID_DELIMITER,
    UNKNOWN_MEMBER_ID,
    ClassicGroup,
    ClassicGroupMember,
    ClassicGroupState,
    MemberError,
    Protocol,
)
from .config import GroupConfig
from .error_codes import ErrorCode, error_name
from .errors import NotCoordinatorError
from .metadata_manager import ExpirationView, GroupMetadataManager, metadata_too_large
from .modern.coordinator import ConsumerGroupCoordinator, topic_id_for
from .records import GroupMetadata, MemberMetadata, OffsetAndMetadata
from .responses import (
    ConsumerGroupDescribedGroup,
    ConsumerGroupHeartbeatResponse,
    DeletableGroupResult,
    DeleteGroupsResponse,
    DescribedGroup,
    DescribedGroupMember,
    DescribeGroupsResponse,
    HeartbeatResponse,
    JoinGroupResponse,
    LeaveGroupResponse,
    LeaveMemberResponse,
    ListedGroup,
    ListGroupsResponse,
    MemberIdentity,
    OffsetCommitResponse,
    OffsetCommitTopicResponse,
    OffsetDeleteResponse,
    OffsetFetchPartition,
    OffsetFetchResponse,
    OffsetFetchTopicResponse,
    PartitionError,
    SyncGroupResponse,
    TxnOffsetCommitResponse,
)
from .streams.offset_validation import validate_offset_commit as validate_streams_offset_commit
from .streams.offset_validation import validate_offset_fetch as validate_streams_offset_fetch

__all__ = ["GroupCoordinator", "OffsetCommitPartition", "ErrorCode"]

logger = logging.getLogger(__name__)

EMPTY = ClassicGroupState.EMPTY
PREPARING = ClassicGroupState.PREPARING_REBALANCE
COMPLETING = ClassicGroupState.COMPLETING_REBALANCE
STABLE = ClassicGroupState.STABLE
DEAD = ClassicGroupState.DEAD

#: JoinGroup versions: a member id is required from v4, skipAssignment exists from v9
JOIN_GROUP_LATEST_VERSION = 9
#: OffsetCommit v9+ answers GROUP_ID_NOT_FOUND for an unknown group (older: ILLEGAL_GENERATION)
OFFSET_COMMIT_LATEST_VERSION = 9
_CLEANUP_KEY = "cleanup-group-metadata"


@dataclass(frozen=True)
class OffsetCommitPartition:
    """One partition of an OffsetCommit/TxnOffsetCommit request (a plain ``int`` offset means
    ``leader_epoch=-1, metadata=""``)."""

    committed_offset: int
    committed_leader_epoch: int = -1
    committed_metadata: str | None = ""


def _heartbeat_key(group_id: str, member_id: str) -> str:
    return f"heartbeat-{group_id}-{member_id}"


def _join_key(group_id: str) -> str:
    return f"join-{group_id}"


def _sync_key(group_id: str) -> str:
    return f"sync-{group_id}"


def _append_error(exc: BaseException) -> int:
    """``appendGroupMetadataErrorToResponseError`` for a failed local write."""
    if isinstance(exc, NotCoordinatorError):
        return ErrorCode.NOT_COORDINATOR
    return ErrorCode.NOT_COORDINATOR        # a storage error (KAFKA_STORAGE_ERROR -> NOT_COORD.)


class GroupCoordinator:
    """A sans-IO classic group coordinator over a :class:`GroupMetadataManager`.

    Parameters
    ----------
    manager:
        The storage (its log dir must be writable to serve writes).
    clock:
        The time source (default: the manager's clock). Use a ``ManualClock`` in tests.
    config:
        Group settings (default: the manager's): session timeout bounds,
        ``group.initial.rebalance.delay.ms``, ``group.max.size``, retention...
    member_id_factory:
        ``prefix -> member id`` (Kafka: ``prefix + "-" + UUID.randomUUID()``, the prefix being
        the ``group.instance.id`` or the client id); inject one for deterministic tests.
    """

    def __init__(self, manager: GroupMetadataManager, *, clock: Clock | None = None,
                 config: GroupConfig | None = None,
                 member_id_factory: Callable[[str], str] | None = None) -> None:
        self.manager = manager
        self.clock: Clock = clock if clock is not None else manager.clock
        self.config = config if config is not None else manager.config
        self._member_id_factory = member_id_factory or (
            lambda prefix: f"{prefix}{MEMBER_ID_DELIMITER}{uuid.uuid4()}")
        self._groups: dict[str, ClassicGroup] = {}
        self._timer_impl = _Timer(self)
        self._outbox: list[tuple[int, Any]] = []
        self._next_handle = 1
        self._partition_counts: dict[str, int] | None = None
        self._wrote = False
        #: group id -> its dynamic config overrides (Kafka's group configs,
        #: ``consumer.session.timeout.ms`` / ``consumer.heartbeat.interval.ms`` read here);
        #: set by the server, None: the broker's settings for every group
        self.group_overrides: Callable[[str], Mapping[str, str]] | None = None
        for group_id in manager.list_groups():
            if manager.owns(group_id) and manager.group_type(group_id) == "classic":
                self._load_group(group_id)
        #: the KIP-848 consumer groups (ConsumerGroupHeartbeat); their state is the manager's
        self.consumer_groups = ConsumerGroupCoordinator(self)
        self._timer_impl.schedule(_CLEANUP_KEY, self.config.offsets_retention_check_interval_ms,
                                  self._cleanup_group_metadata)

    # ------------------------------------------------------------------------------------------
    # driving
    # ------------------------------------------------------------------------------------------

    def consumer_timeouts(self, group_id: str) -> tuple[int, int]:
        """``(session timeout, heartbeat interval)`` of a consumer group's members: the
        group's ``consumer.session.timeout.ms`` / ``consumer.heartbeat.interval.ms`` when set,
        else ``group.consumer.session.timeout.ms`` / ``group.consumer.heartbeat.interval.ms``."""
        own = self.group_overrides(group_id) if self.group_overrides is not None else {}
        return (int(own.get("consumer.session.timeout.ms",
                            self.config.group_consumer_session_timeout_ms)),
                int(own.get("consumer.heartbeat.interval.ms",
                            self.config.group_consumer_heartbeat_interval_ms)))

    def take_responses(self) -> list[tuple[int, Any]]:
        """The delayed responses completed since the last call: ``[(handle, response)]`` in
        completion order (``JoinGroupResponse`` / ``SyncGroupResponse``)."""
        out, self._outbox = self._outbox, []
        return out

    def tick(self) -> None:
        """Run every timer due at the clock's current time."""
        self._timer_impl.poll()

    def next_deadline(self) -> int | None:
        """When :meth:`tick` has work next (absolute clock ms), or None."""
        return self._timer_impl.next_deadline()

    def update_metadata(self, partitions: Mapping[str, int],
                        topic_ids: Mapping[str, str] | None = None,
                        racks: Mapping[str, Sequence[Sequence[str]]] | None = None
                        ) -> list[str]:
        """Feed the cluster's topics and partition counts (and topic ids, Kafka's string form;
        a topic without one gets a stable made-up id; ``racks``: topic -> its replicas' racks
        per partition, which consumer groups' KIP-1101 metadata hash covers). Returns the
        classic groups that started a rebalance because a topic they subscribe to changed its
        partition count (the first call only records the counts); consumer groups subscribed
        to a changed topic bump their group epoch on their next heartbeat."""
        new = {str(t): int(n) for t, n in partitions.items()}
        ids = dict(topic_ids or {})
        self.consumer_groups.set_topics(
            {t: (str(ids[t]) if t in ids else topic_id_for(t), n) for t, n in new.items()},
            racks)
        old, self._partition_counts = self._partition_counts, new
        if old is None:
            return []
        changed = {t for t in set(old) | set(new) if old.get(t) != new.get(t)}
        started = []
        for group_id, group in sorted(self._groups.items()):
            if not group.is_in(STABLE) or not group.uses_consumer_protocol():
                continue
            topics = group.subscribed_topics
            if topics is not None and topics & changed:
                self._prepare_rebalance(
                    group, f"metadata of subscribed topics {sorted(topics & changed)} changed")
                started.append(group_id)
        return started

    def on_transaction_markers(self) -> None:
        """Replay transaction markers (or any record) appended to ``__consumer_offsets`` by
        another writer, so pending transactional offsets become visible or are dropped."""
        self.manager.refresh()

    def end_transaction(self, producer_id: int, producer_epoch: int, commit: bool) -> None:
        """Write the COMMIT/ABORT marker of ``producer_id``'s offsets (WriteTxnMarkers)."""
        self.manager.end_transaction(producer_id, producer_epoch, commit)

    def group_state(self, group_id: str) -> str | None:
        """The group's state name, or None for an unknown group (for tests and tools)."""
        modern = self.manager.consumer_group(group_id)
        if modern is not None:
            return modern.state.capitalize()
        streams = self.manager.streams_group(group_id)
        if streams is not None:
            return streams.state
        group = self._get_group(group_id)
        return None if group is None else str(group.state)

    def group(self, group_id: str) -> ClassicGroup | None:
        """The group's live state (read it, do not modify it)."""
        return self._get_group(group_id)

    # ------------------------------------------------------------------------------------------
    # groups and persistence
    # ------------------------------------------------------------------------------------------

    def _new_handle(self) -> int:
        h = self._next_handle
        self._next_handle += 1
        return h

    def _complete(self, handle: int, response: Any) -> None:
        self._outbox.append((handle, response))

    def _make_group(self, group_id: str, **kw: Any) -> ClassicGroup:
        group = ClassicGroup(group_id, self.clock, self._complete, **kw)
        self._groups[group_id] = group
        return group

    def _load_group(self, group_id: str) -> ClassicGroup:
        """Build a group from its persisted metadata (``GroupMetadataManager.replay`` +
        ``onLoaded``: members' heartbeats scheduled)."""
        gm = self.manager.group_metadata(group_id)
        if gm is None:
            return self._make_group(group_id, current_state_timestamp=self.clock.milliseconds())
        group = self._make_group(
            group_id, state=STABLE if gm.members else EMPTY, generation_id=gm.generation,
            protocol_type=gm.protocol_type or None, protocol_name=gm.protocol,
            leader_id=gm.leader, current_state_timestamp=gm.current_state_timestamp)
        for m in gm.members:
            group.add(ClassicGroupMember(
                m.member_id, m.group_instance_id, m.client_id, m.client_host,
                m.rebalance_timeout_ms, m.session_timeout_ms, gm.protocol_type,
                [(gm.protocol or "", m.subscription)], m.assignment))
        group.leader_id = gm.leader
        group.subscribed_topics = group.compute_subscribed_topics()
        for m in group.all_members():
            self._reschedule_heartbeat(group, m)
        return group

    def _get_group(self, group_id: str) -> ClassicGroup | None:
        """The classic group (None for an unknown or a consumer group)."""
        group = self._groups.get(group_id)
        if group is None and self.manager.owns(group_id) and self.manager.has_group(group_id) \
                and self.manager.group_type(group_id) == "classic":
            group = self._load_group(group_id)
        return group

    def _get_or_create(self, group_id: str, create: bool) -> ClassicGroup | None:
        group = self._get_group(group_id)
        if group is None and create:
            group = self._make_group(group_id, current_state_timestamp=self.clock.milliseconds())
        return group

    def _forget_classic(self, group_id: str) -> None:
        """A consumer group replaced the (empty) classic group of this id."""
        if group_id in self._groups and self.manager.consumer_group(group_id) is not None:
            self._remove_group(group_id)

    def _remove_group(self, group_id: str) -> None:
        group = self._groups.pop(group_id, None)
        if group is not None:
            self._timer_impl.cancel(_join_key(group_id))
            self._timer_impl.cancel(_sync_key(group_id))
            for m in group.all_members():
                self._timer_impl.cancel(_heartbeat_key(group_id, m.member_id))

    def _metadata_of(self, group: ClassicGroup, assignment: Mapping[str, bytes]) -> GroupMetadata:
        members = []
        for m in group.all_members():
            if group.protocol_name is None:
                raise RuntimeError("Attempted to write non-empty group metadata with no defined "
                                   "protocol.")
            members.append(MemberMetadata(
                m.member_id, m.client_id, m.client_host, m.rebalance_timeout_ms,
                m.session_timeout_ms, m.metadata(group.protocol_name),
                assignment[m.member_id], m.group_instance_id))
        return GroupMetadata(group.group_id, group.protocol_type or "", group.generation_id,
                             group.protocol_name, group.leader_id,
                             group.current_state_timestamp, tuple(members))

    def _store(self, metadata: GroupMetadata) -> int | None:
        """Persist a group metadata record; None on success, the response error otherwise."""
        try:
            self.manager.store_group(metadata)
        except (KafkaLogError, OSError) as e:
            logger.warning("failed to write metadata of group %s: %s", metadata.group_id, e)
            return _append_error(e)
        self._wrote = True
        return None

    def _store_empty(self, group: ClassicGroup) -> int | None:
        """``newEmptyGroupMetadataRecord``: what a new group's first join writes."""
        return self._store(GroupMetadata(group.group_id, "", 0, None, None,
                                         group.current_state_timestamp, ()))

    # -- timers -----------------------------------------------------------------------------------

    def _reschedule_heartbeat(self, group: ClassicGroup, member: ClassicGroupMember,
                              timeout_ms: int | None = None) -> None:
        gid, mid = group.group_id, member.member_id
        self._timer_impl.schedule(
            _heartbeat_key(gid, mid),
            member.session_timeout_ms if timeout_ms is None else timeout_ms,
            lambda: self._expire_heartbeat(gid, mid))

    def _expire_heartbeat(self, group_id: str, member_id: str) -> None:
        group = self._groups.get(group_id)
        if group is None or group.is_in(DEAD):
            return
        if member_id in group.pending_join_members:
            group.remove(member_id)
            if group.is_in(PREPARING) and group.has_all_members_joined():
                self._complete_join(group)
        elif group.has_member(member_id):
            member = group.member(member_id)
            if not member.has_satisfied_heartbeat():
                self._remove_member_and_update(group, member,
                                               f"removing member {member_id} on heartbeat "
                                               "expiration")

    def _remove_member_and_update(self, group: ClassicGroup, member: ClassicGroupMember,
                                  reason: str) -> None:
        group.complete_join(member, JoinGroupResponse(ErrorCode.UNKNOWN_MEMBER_ID,
                                                      member_id=UNKNOWN_MEMBER_ID))
        group.remove(member.member_id)
        if group.is_in(STABLE) or group.is_in(COMPLETING):
            self._maybe_prepare_rebalance_or_complete_join(group, reason)
        elif group.is_in(PREPARING) and group.has_all_members_joined():
            self._complete_join(group)

    def _cleanup_group_metadata(self) -> None:
        """``GroupCoordinatorShard.cleanupGroupMetadata`` (every
        ``offsets.retention.check.interval.ms``)."""
        try:
            self.manager.expire_offsets(self.clock.milliseconds(), views=self._expiration_view)
        except (KafkaLogError, OSError) as e:
            logger.warning("offset expiration failed: %s", e)
        for group_id in list(self._groups):
            if not self.manager.has_group(group_id) and self._groups[group_id].is_empty():
                self._remove_group(group_id)
        self._timer_impl.schedule(_CLEANUP_KEY, self.config.offsets_retention_check_interval_ms,
                                  self._cleanup_group_metadata)

    def _expiration_view(self, group_id: str) -> ExpirationView | None:
        group = self._groups.get(group_id)
        if group is None:
            return None
        return ExpirationView(str(group.state), group.protocol_type,
                              group.current_state_timestamp, group.subscribed_topics)

    # ------------------------------------------------------------------------------------------
    # JoinGroup
    # ------------------------------------------------------------------------------------------

    def join_group(
        self,
        group_id: str,
        member_id: str,
        protocol_type: str,
        protocols: Sequence[Protocol],
        *,
        session_timeout_ms: int,
        rebalance_timeout_ms: int = -1,
        group_instance_id: str | None = None,
        reason: str | None = None,
        client_id: str = "",
        client_host: str = "/127.0.0.1",
        api_version: int = JOIN_GROUP_LATEST_VERSION,
    ) -> int:
        """JoinGroup. Returns a handle; the ``JoinGroupResponse`` comes from
        :meth:`take_responses` (at once for errors and MEMBER_ID_REQUIRED, else when the
        rebalance's join phase completes).

        ``protocols`` is the ordered ``[(name, metadata bytes)]`` of the request;
        ``rebalance_timeout_ms`` -1 (v0) means the session timeout; ``api_version`` selects
        the version-dependent rules (member id required from v4, skipAssignment from v9).
        """
        handle = self._new_handle()
        protocols = [(str(n), bytes(m)) for n, m in protocols]
        rebalance = session_timeout_ms if rebalance_timeout_ms < 0 else rebalance_timeout_ms
        if not group_id:
            self._complete(handle, JoinGroupResponse(ErrorCode.INVALID_GROUP_ID,
                                                     member_id=member_id))
        elif not self.manager.owns(group_id):
            self._complete(handle, JoinGroupResponse(ErrorCode.NOT_COORDINATOR,
                                                     member_id=member_id))
        elif not (self.config.group_min_session_timeout_ms <= session_timeout_ms
                  <= self.config.group_max_session_timeout_ms):
            self._complete(handle, JoinGroupResponse(ErrorCode.INVALID_SESSION_TIMEOUT,
                                                     member_id=member_id))
        elif not self._modern_group_gone(group_id, self.manager.streams_group(group_id)):
            # a non-empty streams group: classicGroupJoin refuses the member
            self._complete(handle, JoinGroupResponse(ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                                                     member_id=UNKNOWN_MEMBER_ID))
        elif not self._modern_group_gone(group_id, self.manager.consumer_group(group_id)):
            # a non-empty consumer group: the member joins it speaking the classic protocol
            modern = self.manager.consumer_group(group_id)
            assert modern is not None
            self._complete(handle, self.consumer_groups.classic_join(
                modern, member_id, protocol_type, protocols, session_timeout_ms,
                rebalance, group_instance_id, client_id, client_host, api_version))
        else:
            req = _JoinRequest(group_id, member_id, protocol_type, protocols, session_timeout_ms,
                               rebalance, group_instance_id, reason, client_id, client_host,
                               api_version, handle)
            self._join_to_classic_group(req)
        return handle

    def _modern_group_gone(self, group_id: str, group: Any) -> bool:
        """True when no KIP-848 consumer group or KIP-1071 streams ``group`` holds the id any
        more; False for a non-empty one; an empty one is deleted first
        (``maybeDeleteEmptyConsumerGroup``/``maybeDeleteEmptyStreamsGroup``: its records
        tombstoned, its offsets kept, a classic group takes the id)."""
        if group is None:
            return True
        if group.members:
            return False
        try:
            self.manager.write_records(group_id, self.manager.modern_group_tombstones(group_id))
        except (KafkaLogError, OSError) as e:
            logger.warning("failed to delete empty group %s: %s", group_id, e)
            return False
        return True

    def _join_to_classic_group(self, req: _JoinRequest) -> None:
        is_unknown = req.member_id == UNKNOWN_MEMBER_ID
        is_new_group = self._get_group(req.group_id) is None
        group = self._get_or_create(req.group_id, is_unknown)
        if group is None:
            self._complete(req.handle, JoinGroupResponse(ErrorCode.UNKNOWN_MEMBER_ID,
                                                         member_id=req.member_id))
            return
        self._wrote = False
        if not self._accept_joining_member(group, req.member_id):
            group.remove(req.member_id)
            self._complete(req.handle, JoinGroupResponse(ErrorCode.GROUP_MAX_SIZE_REACHED,
                                                         member_id=UNKNOWN_MEMBER_ID))
        elif is_unknown:
            self._join_new_member(group, req)
        else:
            self._join_existing_member(group, req)
        if is_new_group and not self._wrote:
            error = self._store_empty(group)
            if error is not None and req.handle is not None:
                self._remove_group(req.group_id)
                self._complete(req.handle, JoinGroupResponse(error))

    def _accept_joining_member(self, group: ClassicGroup, member_id: str) -> bool:
        max_size = self.config.group_max_size
        if group.state in (EMPTY, DEAD):
            return True
        if group.is_in(PREPARING):
            return (group.has_member(member_id) and group.member(member_id).is_awaiting_join) \
                or group.num_awaiting_join < max_size
        return group.has_member(member_id) or group.num_members < max_size

    def _join_new_member(self, group: ClassicGroup, req: _JoinRequest) -> None:
        if group.is_in(DEAD):
            self._complete(req.handle, JoinGroupResponse(ErrorCode.COORDINATOR_NOT_AVAILABLE,
                                                         member_id=UNKNOWN_MEMBER_ID))
        elif not group.supports_protocols(req.protocol_type, {n for n, _ in req.protocols}):
            self._complete(req.handle, JoinGroupResponse(ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                                                         member_id=UNKNOWN_MEMBER_ID))
        else:
            prefix = req.group_instance_id if req.group_instance_id is not None \
                else req.client_id
            new_member_id = self._member_id_factory(prefix)
            if req.group_instance_id is not None:
                existing = group.static_member_id(req.group_instance_id)
                if existing is not None:
                    self._update_static_member(group, req, existing, new_member_id)
                else:
                    self._add_member_then_rebalance(group, req, new_member_id)
            elif req.api_version >= 4:
                # JoinGroupRequest.requiresKnownMemberId: park the id, ask the member to rejoin
                group.add_pending_member(new_member_id)
                gid = group.group_id
                self._timer_impl.schedule(
                    _heartbeat_key(gid, new_member_id), req.session_timeout_ms,
                    lambda: self._expire_heartbeat(gid, new_member_id))
                self._complete(req.handle, JoinGroupResponse(ErrorCode.MEMBER_ID_REQUIRED,
                                                             member_id=new_member_id))
            else:
                self._add_member_then_rebalance(group, req, new_member_id)

    def _join_existing_member(self, group: ClassicGroup, req: _JoinRequest) -> None:
        member_id = req.member_id
        if group.is_in(DEAD):
            self._complete(req.handle, JoinGroupResponse(ErrorCode.COORDINATOR_NOT_AVAILABLE,
                                                         member_id=member_id))
            return
        if not group.supports_protocols(req.protocol_type, {n for n, _ in req.protocols}):
            self._complete(req.handle, JoinGroupResponse(ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                                                         member_id=member_id))
            return
        if member_id in group.pending_join_members:
            if req.group_instance_id is not None:   # Kafka: IllegalStateException
                self._complete(req.handle, JoinGroupResponse(ErrorCode.UNKNOWN_SERVER_ERROR,
                                                             member_id=member_id))
                return
            self._add_member_then_rebalance(group, req, member_id)
            return
        try:
            group.validate_member(member_id, req.group_instance_id)
        except MemberError as e:
            self._complete(req.handle, JoinGroupResponse(e.code, member_id=member_id))
            return
        member = group.member(member_id)
        if group.is_in(PREPARING):
            self._update_member_then_rebalance(group, member, req)
        elif group.is_in(COMPLETING):
            if member.matches(req.protocols):
                # it missed the response: answer with the current generation again
                self._complete(req.handle, self._join_response(
                    group, member_id, group.join_response_members()
                    if group.is_leader(member_id) else []))
            else:
                self._update_member_then_rebalance(group, member, req)
        elif group.is_in(STABLE):
            if group.is_leader(member_id) or not member.matches(req.protocols):
                # the leader's JoinGroup forces a rebalance (e.g. topic metadata changed)
                self._update_member_then_rebalance(group, member, req)
            else:
                self._complete(req.handle, self._join_response(group, member_id, []))
        else:
            self._complete(req.handle, JoinGroupResponse(ErrorCode.UNKNOWN_MEMBER_ID,
                                                         member_id=member_id))

    @staticmethod
    def _join_response(group: ClassicGroup, member_id: str, members: list,
                       skip_assignment: bool = False, leader: str | None = None
                       ) -> JoinGroupResponse:
        return JoinGroupResponse(
            ErrorCode.NONE, generation_id=group.generation_id,
            protocol_type=group.protocol_type, protocol_name=group.protocol_name,
            leader=(group.leader_id if leader is None else leader) or "",
            skip_assignment=skip_assignment, member_id=member_id, members=members)

    def _add_member_then_rebalance(self, group: ClassicGroup, req: _JoinRequest,
                                   member_id: str) -> None:
        member = ClassicGroupMember(
            member_id, req.group_instance_id, req.client_id, req.client_host,
            req.rebalance_timeout_ms, req.session_timeout_ms, req.protocol_type,
            list(req.protocols))
        member.is_new = True
        if group.is_in(PREPARING) and group.previous_state is EMPTY:
            group.new_member_added = True
        group.add(member, req.handle)
        # new members cannot heartbeat while parked: their JoinGroup times out instead
        self._reschedule_heartbeat(group, member, self.config.group_new_member_join_timeout_ms)
        self._maybe_prepare_rebalance_or_complete_join(
            group, f"Adding new member {member_id} with group instance id "
                   f"{req.group_instance_id}; client reason: {req.reason or 'not provided'}")

    def _update_member_then_rebalance(self, group: ClassicGroup, member: ClassicGroupMember,
                                      req: _JoinRequest) -> None:
        group.update_member(member, req.protocols, req.rebalance_timeout_ms,
                            req.session_timeout_ms, req.handle)
        self._maybe_prepare_rebalance_or_complete_join(
            group, f"Member {member.member_id} is joining group during {group.state}")

    def _update_static_member(self, group: ClassicGroup, req: _JoinRequest, old_member_id: str,
                              new_member_id: str) -> None:
        """A static member rejoins with an unknown member id: replace the old id (no rebalance
        in Stable when the selected protocol does not change)."""
        instance = req.group_instance_id or ""
        current_leader = group.leader_id
        member = group.replace_static_member(instance, old_member_id, new_member_id)
        self._timer_impl.cancel(_heartbeat_key(group.group_id, old_member_id))
        self._reschedule_heartbeat(group, member)
        old = (list(member.protocols), member.rebalance_timeout_ms, member.session_timeout_ms)
        group.update_member(member, req.protocols, req.rebalance_timeout_ms,
                            req.session_timeout_ms, req.handle)
        if group.is_in(STABLE):
            if group.protocol_name == group.select_protocol():
                error = self._store(self._metadata_of(group, group.group_assignment()))
                if error is not None:
                    group.update_member(member, old[0], old[1], old[2], None)
                    restored = group.replace_static_member(instance, new_member_id, old_member_id)
                    self._reschedule_heartbeat(group, restored)
                    self._complete(req.handle, JoinGroupResponse(
                        error, generation_id=group.generation_id,
                        protocol_type=group.protocol_type, protocol_name=group.protocol_name,
                        leader=current_leader or "", member_id=UNKNOWN_MEMBER_ID))
                elif req.api_version >= 9:
                    is_leader = group.is_leader(new_member_id)
                    group.complete_join(member, self._join_response(
                        group, new_member_id,
                        group.join_response_members() if is_leader else [],
                        skip_assignment=is_leader))
                else:
                    group.complete_join(member, self._join_response(
                        group, new_member_id, [], leader=current_leader))
            else:
                self._maybe_prepare_rebalance_or_complete_join(
                    group, f"Group's selectedProtocol will change because static member "
                           f"{member.member_id} with instance id {instance} joined with "
                           "change of protocol")
        elif group.is_in(COMPLETING):
            self._prepare_rebalance(group, f"Updating metadata for static member "
                                           f"{member.member_id} with instance id {instance}")
        else:
            self._maybe_complete_join_phase(group)

    # -- rebalance ------------------------------------------------------------------------------

    def _maybe_prepare_rebalance_or_complete_join(self, group: ClassicGroup, reason: str) -> None:
        if group.can_rebalance():
            self._prepare_rebalance(group, reason)
        else:
            self._maybe_complete_join_phase(group)

    def _prepare_rebalance(self, group: ClassicGroup, reason: str) -> None:
        if group.is_in(COMPLETING):
            self._reset_and_propagate_assignment_with_error(group, ErrorCode.REBALANCE_IN_PROGRESS)
        group.pending_sync_members.clear()                # removeSyncExpiration
        self._timer_impl.cancel(_sync_key(group.group_id))
        initial = group.is_in(EMPTY)
        if initial:
            delay = self.config.group_initial_rebalance_delay_ms
            remaining = max(group.rebalance_timeout_ms() - delay, 0)
            gid = group.group_id
            self._timer_impl.schedule(
                _join_key(gid), delay,
                lambda: self._try_complete_initial_rebalance(gid, delay, remaining))
        group.transition_to(PREPARING)
        logger.info("Preparing to rebalance group %s with old generation %d (reason: %s).",
                    group.group_id, group.generation_id, reason)
        if not initial:
            self._maybe_complete_join_else_schedule(group)

    def _maybe_complete_join_else_schedule(self, group: ClassicGroup) -> None:
        if group.has_all_members_joined():
            self._complete_join(group)
        else:
            gid = group.group_id
            self._timer_impl.schedule(_join_key(gid), group.rebalance_timeout_ms(),
                                      lambda: self._complete_join_by_id(gid))

    def _try_complete_initial_rebalance(self, group_id: str, delay_ms: int,
                                        remaining_ms: int) -> None:
        group = self._groups.get(group_id)
        if group is None:
            return
        if group.new_member_added and remaining_ms != 0:
            # a member joined during the delay: wait one more delay (within the rebalance timeout)
            group.new_member_added = False
            new_delay = min(self.config.group_initial_rebalance_delay_ms, remaining_ms)
            new_remaining = max(remaining_ms - delay_ms, 0)
            self._timer_impl.schedule(
                _join_key(group_id), new_delay,
                lambda: self._try_complete_initial_rebalance(group_id, new_delay, new_remaining))
        else:
            self._complete_join(group)

    def _maybe_complete_join_phase(self, group: ClassicGroup) -> None:
        if not group.is_in(PREPARING) or group.previous_state is EMPTY:
            return          # the initial rebalance completes on its delay timer
        if group.has_all_members_joined():
            self._complete_join(group)

    def _complete_join_by_id(self, group_id: str) -> None:
        group = self._groups.get(group_id)
        if group is not None:
            self._complete_join(group)

    def _complete_join(self, group: ClassicGroup) -> None:
        """``completeClassicGroupJoin``: drop dynamic members that did not rejoin, start the next
        generation, answer every JoinGroup (the leader gets the member list)."""
        gid = group.group_id
        self._timer_impl.cancel(_join_key(gid))
        for m in [m for m in group.not_yet_rejoined_members() if not m.is_static]:
            group.remove(m.member_id)
            self._timer_impl.cancel(_heartbeat_key(gid, m.member_id))
        if group.is_in(DEAD):
            return
        if not group.maybe_elect_new_joined_leader() and group.num_members:
            # nobody rejoined: wait again until session timeouts remove the silent members
            self._timer_impl.schedule(_join_key(gid), group.rebalance_timeout_ms(),
                                      lambda: self._complete_join_by_id(gid))
            return
        group.init_next_generation()
        if group.is_in(EMPTY):
            self._store(self._metadata_of(group, {}))
            return
        for member in group.all_members():
            members = group.join_response_members() if group.is_leader(member.member_id) else []
            group.complete_join(member, self._join_response(group, member.member_id, members))
            self._reschedule_heartbeat(group, member)
            member.is_new = False
            group.pending_sync_members.add(member.member_id)
        generation = group.generation_id
        self._timer_impl.schedule(_sync_key(gid), group.rebalance_timeout_ms(),
                                  lambda: self._expire_pending_sync(gid, generation))

    def _expire_pending_sync(self, group_id: str, generation_id: int) -> None:
        group = self._groups.get(group_id)
        if group is None or generation_id != group.generation_id:
            return
        if group.state in (COMPLETING, STABLE) and not group.has_received_sync_from_all_members():
            pending = sorted(group.pending_sync_members)
            for member_id in pending:
                group.remove(member_id)
                self._timer_impl.cancel(_heartbeat_key(group_id, member_id))
            self._prepare_rebalance(group, f"Removing {pending} on pending sync request expiration")

    def _reset_and_propagate_assignment_with_error(self, group: ClassicGroup,
                                                   error: int) -> None:
        for m in group.all_members():
            m.assignment = b""
        self._propagate_assignment(group, error)

    def _propagate_assignment(self, group: ClassicGroup, error: int) -> None:
        ok = error == ErrorCode.NONE
        for m in group.all_members():
            if group.complete_sync(m, SyncGroupResponse(
                    error, group.protocol_type if ok else None,
                    group.protocol_name if ok else None, m.assignment)):
                self._reschedule_heartbeat(group, m)

    # ------------------------------------------------------------------------------------------
    # SyncGroup, Heartbeat, LeaveGroup
    # ------------------------------------------------------------------------------------------

    def sync_group(
        self,
        group_id: str,
        generation_id: int,
        member_id: str,
        assignments: Mapping[str, bytes] | Iterable[tuple[str, bytes]] = (),
        *,
        group_instance_id: str | None = None,
        protocol_type: str | None = None,
        protocol_name: str | None = None,
    ) -> int:
        """SyncGroup. Returns a handle; the ``SyncGroupResponse`` comes from
        :meth:`take_responses` (a follower waits for the leader's assignment)."""
        handle = self._new_handle()
        plan = dict(assignments.items() if isinstance(assignments, Mapping) else assignments)
        if not group_id:
            self._complete(handle, SyncGroupResponse(ErrorCode.INVALID_GROUP_ID))
            return handle
        if not self.manager.owns(group_id):
            self._complete(handle, SyncGroupResponse(ErrorCode.NOT_COORDINATOR))
            return handle
        modern = self.manager.consumer_group(group_id)
        if modern is not None:
            self._complete(handle, self.consumer_groups.classic_sync(
                modern, generation_id, member_id, group_instance_id, protocol_type,
                protocol_name))
            return handle
        group = self._get_group(group_id)
        if group is None or group.is_empty():
            self._complete(handle, SyncGroupResponse(ErrorCode.UNKNOWN_MEMBER_ID))
            return handle
        error = self._validate_sync(group, generation_id, member_id, group_instance_id,
                                    protocol_type, protocol_name)
        if error is not None:
            self._complete(handle, SyncGroupResponse(error))
        elif group.is_in(PREPARING):
            self._complete(handle, SyncGroupResponse(ErrorCode.REBALANCE_IN_PROGRESS))
        elif group.is_in(COMPLETING):
            group.member(member_id).awaiting_sync = handle
            self._remove_pending_sync_member(group, member_id)
            if group.is_leader(member_id):
                assignment = {k: bytes(v) for k, v in plan.items()}
                for m in group.all_members():
                    assignment.setdefault(m.member_id, b"")
                err = self._store(self._metadata_of(group, assignment))
                if group.is_in(COMPLETING) and generation_id == group.generation_id:
                    if err is not None:
                        self._reset_and_propagate_assignment_with_error(group, err)
                        self._maybe_prepare_rebalance_or_complete_join(
                            group, f"Error {error_name(err)} when storing group assignment during "
                                   f"SyncGroup (member: {member_id}).")
                    else:
                        for m in group.all_members():
                            m.assignment = assignment.get(m.member_id, b"")
                        self._propagate_assignment(group, ErrorCode.NONE)
                        group.transition_to(STABLE)
        elif group.is_in(STABLE):
            self._remove_pending_sync_member(group, member_id)
            self._complete(handle, SyncGroupResponse(
                ErrorCode.NONE, group.protocol_type, group.protocol_name,
                group.member(member_id).assignment))
        return handle

    def _validate_sync(self, group: ClassicGroup, generation_id: int, member_id: str,
                       group_instance_id: str | None, protocol_type: str | None,
                       protocol_name: str | None) -> int | None:
        if group.is_in(DEAD):
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        try:
            group.validate_member(member_id, group_instance_id)
        except MemberError as e:
            return e.code
        if generation_id != group.generation_id:
            return ErrorCode.ILLEGAL_GENERATION
        if _inconsistent(protocol_type, group.protocol_type) or \
                _inconsistent(protocol_name, group.protocol_name):
            return ErrorCode.INCONSISTENT_GROUP_PROTOCOL
        return None

    def _remove_pending_sync_member(self, group: ClassicGroup, member_id: str) -> None:
        group.pending_sync_members.discard(member_id)
        if group.state in (DEAD, EMPTY, PREPARING) or group.has_received_sync_from_all_members():
            self._timer_impl.cancel(_sync_key(group.group_id))

    def heartbeat(self, group_id: str, generation_id: int, member_id: str, *,
                  group_instance_id: str | None = None) -> HeartbeatResponse:
        """Heartbeat: resets the member's session timeout; REBALANCE_IN_PROGRESS tells it to
        rejoin."""
        if not group_id:
            return HeartbeatResponse(ErrorCode.INVALID_GROUP_ID)
        if not self.manager.owns(group_id):
            return HeartbeatResponse(ErrorCode.NOT_COORDINATOR)
        modern = self.manager.consumer_group(group_id)
        if modern is not None:
            return self.consumer_groups.classic_heartbeat(modern, generation_id, member_id,
                                                          group_instance_id)
        group = self._get_group(group_id)
        if group is None:
            return HeartbeatResponse(ErrorCode.UNKNOWN_MEMBER_ID)
        if group.is_in(DEAD):
            return HeartbeatResponse(ErrorCode.COORDINATOR_NOT_AVAILABLE)
        try:
            group.validate_member(member_id, group_instance_id)
        except MemberError as e:
            return HeartbeatResponse(e.code)
        if generation_id != group.generation_id:
            return HeartbeatResponse(ErrorCode.ILLEGAL_GENERATION)
        if group.is_in(EMPTY):
            return HeartbeatResponse(ErrorCode.UNKNOWN_MEMBER_ID)
        self._reschedule_heartbeat(group, group.member(member_id))
        if group.is_in(PREPARING):
            return HeartbeatResponse(ErrorCode.REBALANCE_IN_PROGRESS)
        return HeartbeatResponse(ErrorCode.NONE)

    def leave_group(self, group_id: str,
                    members: Sequence[MemberIdentity | str] | MemberIdentity | str
                    ) -> LeaveGroupResponse:
        """LeaveGroup (v3+ takes several members; a ``str`` is one member id, as v0-v2). A
        member given by ``group_instance_id`` with member id "" is removed administratively."""
        if isinstance(members, (str, MemberIdentity)):
            members = [members]
        identities = [MemberIdentity(m) if isinstance(m, str) else m for m in members]
        if not group_id:
            return LeaveGroupResponse(ErrorCode.INVALID_GROUP_ID)
        if not self.manager.owns(group_id):
            return LeaveGroupResponse(ErrorCode.NOT_COORDINATOR)
        modern = self.manager.consumer_group(group_id)
        if modern is not None:
            return self.consumer_groups.classic_leave(modern, identities)
        group = self._get_group(group_id)
        if group is None:
            return LeaveGroupResponse(ErrorCode.UNKNOWN_MEMBER_ID)
        if group.is_in(DEAD):
            return LeaveGroupResponse(ErrorCode.COORDINATOR_NOT_AVAILABLE)
        responses: list[LeaveMemberResponse] = []
        for ident in identities:
            if ident.member_id == UNKNOWN_MEMBER_ID:
                instance = ident.group_instance_id
                if instance is not None and group.static_member_id(instance) is not None:
                    self._remove_current_member(group, group.static_member_id(instance) or "")
                    responses.append(LeaveMemberResponse(ident.member_id, instance))
                else:
                    responses.append(LeaveMemberResponse(ident.member_id, instance,
                                                         ErrorCode.UNKNOWN_MEMBER_ID))
            elif ident.member_id in group.pending_join_members:
                group.remove(ident.member_id)
                self._timer_impl.cancel(_heartbeat_key(group_id, ident.member_id))
                responses.append(LeaveMemberResponse(ident.member_id, ident.group_instance_id))
            else:
                try:
                    group.validate_member(ident.member_id, ident.group_instance_id)
                except MemberError as e:
                    responses.append(LeaveMemberResponse(ident.member_id,
                                                         ident.group_instance_id, e.code))
                    continue
                self._remove_current_member(group, ident.member_id)
                responses.append(LeaveMemberResponse(ident.member_id, ident.group_instance_id))
        left = [r.member_id for r in responses if r.error_code == ErrorCode.NONE]
        if left:
            if group.state in (STABLE, COMPLETING):
                self._maybe_prepare_rebalance_or_complete_join(
                    group, f"explicit `LeaveGroup` request for ({', '.join(left)}) members.")
            elif group.is_in(PREPARING):
                self._maybe_complete_join_phase(group)
        return LeaveGroupResponse(ErrorCode.NONE, responses)

    def _remove_current_member(self, group: ClassicGroup, member_id: str) -> None:
        member = group.member(member_id)
        self._timer_impl.cancel(_heartbeat_key(group.group_id, member_id))
        group.complete_join(member, JoinGroupResponse(ErrorCode.UNKNOWN_MEMBER_ID,
                                                      member_id=UNKNOWN_MEMBER_ID))
        group.remove(member_id)

    # ------------------------------------------------------------------------------------------
    # offsets
    # ------------------------------------------------------------------------------------------

    @staticmethod
    def _partitions_of(offsets: Mapping[tuple[str, int], Any]) -> dict[str, list[int]]:
        by_topic: dict[str, list[int]] = {}
        for t, p in offsets:
            by_topic.setdefault(t, []).append(p)
        return by_topic

    def _commit_response(self, offsets: Mapping[tuple[str, int], Any],
                         errors: Mapping[tuple[str, int], int] | int,
                         cls: type = OffsetCommitResponse) -> Any:
        topics = []
        for t, parts in self._partitions_of(offsets).items():
            topics.append(OffsetCommitTopicResponse(t, [
                PartitionError(p, errors if isinstance(errors, int) else errors.get((t, p), 0))
                for p in parts]))
        return cls(topics)

    def offset_commit(
        self,
        group_id: str,
        offsets: Mapping[tuple[str, int], int | OffsetCommitPartition],
        *,
        generation_id: int = -1,
        member_id: str = "",
        group_instance_id: str | None = None,
        retention_time_ms: int = -1,
        api_version: int = OFFSET_COMMIT_LATEST_VERSION,
    ) -> OffsetCommitResponse:
        """OffsetCommit: validated against the group (generation, member, state), then written.
        ``generation_id`` -1 with member id "" commits for a group without membership (Kafka
        creates a "simple" group). ``retention_time_ms`` != -1 (v2-v4) sets an expire
        timestamp."""
        if not self.manager.owns(group_id):
            return self._commit_response(offsets, ErrorCode.NOT_COORDINATOR)
        modern = self.manager.consumer_group(group_id)
        streams = self.manager.streams_group(group_id) if modern is None else None
        if modern is not None or streams is not None:
            code = self.consumer_groups.validate_offset_commit(
                modern, member_id, generation_id, False, api_version) if modern is not None \
                else validate_streams_offset_commit(streams, member_id, group_instance_id,
                                                    generation_id, False, api_version, offsets)
            if code:
                return self._commit_response(offsets, code)
            now = self.clock.milliseconds()
            expire = None if retention_time_ms == -1 else now + retention_time_ms
            return self._write_offsets(group_id, offsets, now, expire, -1, -1,
                                       OffsetCommitResponse)
        group = self._get_group(group_id)
        if group is None:
            if generation_id < 0:
                group = self._get_or_create(group_id, True)
            else:
                code = ErrorCode.GROUP_ID_NOT_FOUND if api_version >= 9 \
                    else ErrorCode.ILLEGAL_GENERATION
                return self._commit_response(offsets, code)
        try:
            group.validate_offset_commit(member_id, group_instance_id, generation_id, False)
        except MemberError as e:
            return self._commit_response(offsets, e.code)
        if group.state in (STABLE, PREPARING) and group.has_member(member_id):
            # classic commits keep the session alive
            self._reschedule_heartbeat(group, group.member(member_id))
        now = self.clock.milliseconds()
        expire = None if retention_time_ms == -1 else now + retention_time_ms
        return self._write_offsets(group_id, offsets, now, expire, -1, -1, OffsetCommitResponse)

    def _write_offsets(self, group_id: str,
                       offsets: Mapping[tuple[str, int], int | OffsetCommitPartition],
                       now: int, expire: int | None, producer_id: int, producer_epoch: int,
                       cls: type) -> Any:
        errors: dict[tuple[str, int], int] = {}
        to_write: dict[tuple[str, int], OffsetAndMetadata] = {}
        for tp, v in offsets.items():
            part = v if isinstance(v, OffsetCommitPartition) else OffsetCommitPartition(int(v))
            meta = part.committed_metadata or ""
            if metadata_too_large(meta, self.config):
                errors[tp] = ErrorCode.OFFSET_METADATA_TOO_LARGE
                continue
            to_write[tp] = OffsetAndMetadata(part.committed_offset, part.committed_leader_epoch,
                                             meta, now, expire)
        if to_write:
            try:
                self.manager.commit_offsets(group_id, to_write, producer_id=producer_id,
                                            producer_epoch=producer_epoch)
            except (KafkaLogError, OSError, ValueError) as e:
                code = ErrorCode.INVALID_COMMIT_OFFSET_SIZE if isinstance(e, ValueError) \
                    and not isinstance(e, KafkaLogError) else _append_error(e)
                for tp in to_write:
                    errors[tp] = code
        return self._commit_response(offsets, errors, cls)

    def txn_offset_commit(
        self,
        transactional_id: str,
        group_id: str,
        producer_id: int,
        producer_epoch: int,
        offsets: Mapping[tuple[str, int], int | OffsetCommitPartition],
        *,
        generation_id: int = -1,
        member_id: str = "",
        group_instance_id: str | None = None,
    ) -> TxnOffsetCommitResponse:
        """TxnOffsetCommit: the offsets are written in a transactional batch of
        ``producer_id`` and become visible when its COMMIT marker is written (the server checks
        that the group's partition was added to the transaction, AddOffsetsToTxn)."""
        if not self.manager.owns(group_id):
            return self._commit_response(offsets, ErrorCode.NOT_COORDINATOR,
                                         TxnOffsetCommitResponse)
        modern = self.manager.consumer_group(group_id)
        if modern is not None:
            code = self.consumer_groups.validate_offset_commit(
                modern, member_id, generation_id, True, OFFSET_COMMIT_LATEST_VERSION)
            if code:
                return self._commit_response(offsets, code, TxnOffsetCommitResponse)
            return self._write_offsets(group_id, offsets, self.clock.milliseconds(), None,
                                       producer_id, producer_epoch, TxnOffsetCommitResponse)
        streams = self.manager.streams_group(group_id)
        if streams is not None:
            code = validate_streams_offset_commit(
                streams, member_id, group_instance_id, generation_id, True,
                OFFSET_COMMIT_LATEST_VERSION, offsets)
            if code:
                return self._commit_response(offsets, code, TxnOffsetCommitResponse)
            return self._write_offsets(group_id, offsets, self.clock.milliseconds(), None,
                                       producer_id, producer_epoch, TxnOffsetCommitResponse)
        group = self._get_group(group_id)
        if group is None:
            if generation_id >= 0:
                return self._commit_response(offsets, ErrorCode.ILLEGAL_GENERATION,
                                             TxnOffsetCommitResponse)
            group = self._get_or_create(group_id, True)
        try:
            group.validate_offset_commit(member_id, group_instance_id, generation_id, True)
        except MemberError as e:
            return self._commit_response(offsets, e.code, TxnOffsetCommitResponse)
        return self._write_offsets(group_id, offsets, self.clock.milliseconds(), None,
                                   producer_id, producer_epoch, TxnOffsetCommitResponse)

    def offset_fetch(self, group_id: str, partitions: Iterable[tuple[str, int]] | None = None,
                     *, require_stable: bool = False, member_id: str | None = None,
                     member_epoch: int = -1) -> OffsetFetchResponse:
        """OffsetFetch: committed offsets (-1 where none). ``partitions`` None fetches all;
        ``require_stable`` answers UNSTABLE_OFFSET_COMMIT for a partition with a pending
        transactional commit. ``member_id``/``member_epoch`` (v9) are checked against a
        consumer group's member (UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH)."""
        if not self.manager.owns(group_id):
            return OffsetFetchResponse(group_id, ErrorCode.NOT_COORDINATOR)
        self.manager.refresh(self.manager.partition_for(group_id))
        modern = self.manager.consumer_group(group_id)
        if modern is not None:
            code = self.consumer_groups.validate_offset_fetch(modern, member_id, member_epoch)
            if code:
                return OffsetFetchResponse(group_id, code)
            found = True
        elif (streams := self.manager.streams_group(group_id)) is not None:
            code = validate_streams_offset_fetch(streams, member_id, member_epoch)
            if code:
                return OffsetFetchResponse(group_id, code)
            found = True
        else:
            group = self._get_group(group_id)
            found = group is not None and not group.is_in(DEAD)
        committed = self.manager.fetch_offset_metadata(group_id) if found else {}
        if partitions is None:
            wanted = list(committed)
        else:
            wanted = [(str(t), int(p)) for t, p in partitions]
        topics: dict[str, OffsetFetchTopicResponse] = {}
        for t, p in wanted:
            resp = topics.setdefault(t, OffsetFetchTopicResponse(t))
            om = committed.get((t, p))
            if found and require_stable and self.manager.has_pending(group_id, t, p):
                resp.partitions.append(OffsetFetchPartition(
                    p, error_code=ErrorCode.UNSTABLE_OFFSET_COMMIT))
            elif om is None:
                resp.partitions.append(OffsetFetchPartition(p))
            else:
                resp.partitions.append(OffsetFetchPartition(p, om.offset, om.leader_epoch,
                                                            om.metadata))
        return OffsetFetchResponse(group_id, ErrorCode.NONE, list(topics.values()))

    def offset_delete(self, group_id: str, partitions: Iterable[tuple[str, int]]
                      ) -> OffsetDeleteResponse:
        """OffsetDelete: drop committed offsets of topics the group does not subscribe to."""
        partitions = [(str(t), int(p)) for t, p in partitions]
        if not self.manager.owns(group_id):
            return OffsetDeleteResponse(ErrorCode.NOT_COORDINATOR)
        modern = self.manager.consumer_group(group_id)
        if modern is not None:
            # (ConsumerGroup.validateOffsetDelete accepts; subscribed topics are refused)
            subscribed = set(modern.subscribed_topics_with(None, None))
            is_subscribed = subscribed.__contains__
        elif (streams := self.manager.streams_group(group_id)) is not None:
            # (StreamsGroup.validateOffsetDelete accepts; subscribed topics are refused)
            is_subscribed = streams.subscribed_topics().__contains__
        else:
            group = self._get_group(group_id)
            if group is None or group.is_in(DEAD):
                return OffsetDeleteResponse(ErrorCode.GROUP_ID_NOT_FOUND)
            if group.state in (STABLE, PREPARING, COMPLETING) \
                    and not group.uses_consumer_protocol():
                return OffsetDeleteResponse(ErrorCode.NON_EMPTY_GROUP)
            is_subscribed = group.is_subscribed_to_topic
        topics = []
        delete = []
        for t, parts in self._partitions_of(dict.fromkeys(partitions)).items():
            if is_subscribed(t):
                topics.append(OffsetCommitTopicResponse(t, [
                    PartitionError(p, ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC) for p in parts]))
            else:
                topics.append(OffsetCommitTopicResponse(t, [PartitionError(p) for p in parts]))
                delete.extend((t, p) for p in parts)
        if delete:
            try:
                self.manager.delete_offsets(group_id, delete)
            except (KafkaLogError, OSError) as e:
                return OffsetDeleteResponse(_append_error(e))
        return OffsetDeleteResponse(ErrorCode.NONE, topics)

    # ------------------------------------------------------------------------------------------
    # admin
    # ------------------------------------------------------------------------------------------

    # ------------------------------------------------------------------------------------------
    # KIP-848 consumer groups
    # ------------------------------------------------------------------------------------------

    def consumer_group_heartbeat(
        self,
        group_id: str,
        member_id: str,
        member_epoch: int,
        **fields: Any,
    ) -> ConsumerGroupHeartbeatResponse:
        """ConsumerGroupHeartbeat (KIP-848): join with ``member_epoch`` 0, heartbeat with the
        epoch last received, leave with -1 (-2: a static member). ``fields`` are the
        request's other fields (``instance_id``, ``rack_id``, ``rebalance_timeout_ms``,
        ``subscribed_topic_names``, ``subscribed_topic_regex``, ``server_assignor``,
        ``topic_partitions`` as ``[(topic id, partitions)]`` or None when absent) and
        ``client_id``/``client_host``. See :mod:`kafkalog.groups.modern.coordinator`.
        """
        return self.consumer_groups.heartbeat(group_id, member_id, member_epoch, **fields)

    def consumer_group_describe(self, group_ids: Iterable[str]
                                ) -> list[ConsumerGroupDescribedGroup]:
        """ConsumerGroupDescribe: members, epochs, current and target assignments."""
        return [self.consumer_groups.describe(g) for g in group_ids]

    # ------------------------------------------------------------------------------------------
    # KIP-1071 streams groups
    # ------------------------------------------------------------------------------------------

    def streams_group_describe(self, group_ids: Iterable[str]) -> list[dict[str, Any]]:
        """StreamsGroupDescribe (``GroupMetadataManager.streamsGroupDescribe``): each group as
        :func:`kafkalog.groups.streams.describe.described_group` gives it; an unknown id or
        a group of another type GROUP_ID_NOT_FOUND with Kafka's message."""
        from .streams.describe import describe_error, described_group

        out = []
        for group_id in group_ids:
            if not self.manager.owns(group_id):
                out.append(describe_error(group_id, ErrorCode.NOT_COORDINATOR))
                continue
            streams = self.manager.streams_group(group_id)
            if streams is not None:
                out.append(described_group(streams))
            elif self.manager.has_group(group_id) or self._groups.get(group_id) is not None:
                out.append(describe_error(group_id, ErrorCode.GROUP_ID_NOT_FOUND,
                                          f"Group {group_id} is not a streams group."))
            else:
                out.append(describe_error(group_id, ErrorCode.GROUP_ID_NOT_FOUND,
                                          f"Group {group_id} not found."))
        return out

    def _all_groups(self) -> list[ClassicGroup]:
        for group_id in self.manager.list_groups():
            if group_id not in self._groups and self.manager.owns(group_id) \
                    and self.manager.group_type(group_id) == "classic":
                self._load_group(group_id)
        return [self._groups[g] for g in sorted(self._groups)]

    def list_groups(self, states_filter: Iterable[str] = (), types_filter: Iterable[str] = ()
                    ) -> ListGroupsResponse:
        """ListGroups (state names and types match case-insensitively; ``classic``,
        ``consumer`` and ``streams`` groups)."""
        states = {s.strip().lower() for s in states_filter}
        types = {t.strip().lower() for t in types_filter}
        out = []
        for group in self._all_groups():
            if states and str(group.state).lower() not in states:
                continue
            if types and "classic" not in types:
                continue
            out.append(ListedGroup(group.group_id, group.protocol_type or "", str(group.state)))
        if not types or "consumer" in types:
            for group_id in self.manager.list_groups():
                modern = self.manager.consumer_group(group_id)
                if modern is None or not self.manager.owns(group_id):
                    continue
                state = modern.state.capitalize()
                if states and state.lower() not in states:
                    continue
                out.append(ListedGroup(group_id, "consumer", state, "consumer"))
        if not types or "streams" in types:
            for group_id, streams in self.manager.streams_groups().items():
                if not self.manager.owns(group_id):
                    continue
                if states and streams.state.lower() not in states:
                    continue
                out.append(ListedGroup(group_id, "streams", streams.state, "streams"))
        out.sort(key=lambda g: g.group_id)
        return ListGroupsResponse(ErrorCode.NONE, out)

    def describe_groups(self, group_ids: Iterable[str]) -> DescribeGroupsResponse:
        """DescribeGroups: member metadata only for a Stable group; an unknown group is
        described as ``Dead`` without error (as Kafka)."""
        out = []
        for group_id in group_ids:
            if not self.manager.owns(group_id):
                out.append(DescribedGroup(group_id, ErrorCode.NOT_COORDINATOR))
                continue
            group = self._get_group(group_id)   # (None for a consumer group too: Kafka's
            # describeGroups looks the id up as a classic group, and describes anything else
            # as Dead; ConsumerGroupDescribe describes consumer groups)
            if group is None:
                out.append(DescribedGroup(group_id, group_state=str(DEAD)))
                continue
            stable = group.is_in(STABLE)
            members = [DescribedGroupMember(
                m.member_id, m.group_instance_id, m.client_id, m.client_host,
                m.metadata(group.protocol_name) if stable else b"", m.assignment)
                for m in group.all_members()]
            out.append(DescribedGroup(group_id, ErrorCode.NONE, str(group.state),
                                      group.protocol_type or "",
                                      (group.protocol_name or "") if stable else "", members))
        return DescribeGroupsResponse(out)

    def delete_groups(self, group_ids: Iterable[str]) -> DeleteGroupsResponse:
        """DeleteGroups: an Empty (or simple) group's offsets and metadata get tombstones."""
        results = []
        for group_id in group_ids:
            if not self.manager.owns(group_id):
                results.append(DeletableGroupResult(group_id, ErrorCode.NOT_COORDINATOR))
                continue
            modern = self.manager.consumer_group(group_id) \
                or self.manager.streams_group(group_id)   # (both: only when Empty)
            if modern is not None:
                if modern.members:
                    results.append(DeletableGroupResult(group_id, ErrorCode.NON_EMPTY_GROUP))
                    continue
                try:
                    self.manager.delete_group(group_id)
                except (KafkaLogError, OSError) as e:
                    results.append(DeletableGroupResult(group_id, _append_error(e)))
                    continue
                results.append(DeletableGroupResult(group_id))
                continue
            group = self._get_group(group_id)
            if group is None or group.is_in(DEAD):
                results.append(DeletableGroupResult(group_id, ErrorCode.GROUP_ID_NOT_FOUND))
                continue
            if group.state in (STABLE, PREPARING, COMPLETING):
                results.append(DeletableGroupResult(group_id, ErrorCode.NON_EMPTY_GROUP))
                continue
            try:
                self.manager.delete_group(group_id, force=True)
            except (KafkaLogError, OSError) as e:
                results.append(DeletableGroupResult(group_id, _append_error(e)))
                continue
            self._remove_group(group_id)
            results.append(DeletableGroupResult(group_id))
        return DeleteGroupsResponse(results)


def _inconsistent(requested: str | None, current: str | None) -> bool:
    return requested is not None and current is not None and requested != current


@dataclass
class _JoinRequest:
    group_id: str
    member_id: str
    protocol_type: str
    protocols: list[Protocol]
    session_timeout_ms: int
    rebalance_timeout_ms: int
    group_instance_id: str | None
    reason: str | None
    client_id: str
    client_host: str
    api_version: int
    handle: int


class _Timer:
    """The coordinator's :class:`~kafkalog.groups.timer.KeyedTimer` on its clock."""

    def __init__(self, coordinator: GroupCoordinator) -> None:
        from .timer import KeyedTimer

        self._coordinator = coordinator
        self._timer = KeyedTimer()

    def schedule(self, key: str, delay_ms: int, fn: Callable[[], Any]) -> None:
        self._timer.schedule(key, delay_ms, fn, now=self._coordinator.clock.milliseconds())

    def cancel(self, key: str) -> None:
        self._timer.cancel(key)

    def is_scheduled(self, key: str) -> bool:
        return self._timer.is_scheduled(key)

    def poll(self) -> None:
        self._timer.poll(self._coordinator.clock.milliseconds())

    def next_deadline(self) -> int | None:
        return self._timer.next_deadline()

