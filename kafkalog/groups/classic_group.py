"""A classic (JoinGroup/SyncGroup) group's in-memory state: members, generation, leader, protocol.

Ported from group-coordinator/src/main/java/org/apache/kafka/coordinator/group/classic/
ClassicGroup.java, ClassicGroupMember.java and ClassicGroupState.java (Kafka 4.0; the same
rules as core's GroupMetadata.scala in 3.x).

States and transitions (``ClassicGroupState``)::

    Empty --join--> PreparingRebalance --all joined / timeout--> CompletingRebalance
      ^                 ^   |                                        |  leader SyncGroup
      |   rebalance     |   +--(no member left)--> Empty             v
      +--(last member)--+----------------------------------------  Stable
    any state --> Dead (group removed)

Members live in a ``HashMap`` keyed by member id in Kafka, and its iteration order decides three
things this module reproduces with :class:`~kafkalog.groups.java_order.JavaHashMap`: the member
order of a ``GroupMetadataValue`` record and of the leader's JoinGroup response, the next leader
when the leader leaves (the first member in iteration order), and the protocol chosen when two
protocols tie in the vote (the first in the vote map's iteration order).

A pending JoinGroup/SyncGroup is a *handle* (an int the coordinator gave the caller); completing
it hands ``(handle, response)`` to the coordinator's ``complete`` callback.

Not thread-safe: the coordinator serializes every call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from ..clock import Clock
from . import consumer_protocol as cp
from .error_codes import ErrorCode, error_name
from .java_order import JavaHashMap, string_hash

__all__ = ["ClassicGroupState", "ClassicGroupMember", "ClassicGroup", "Protocol",
           "MemberError"]

#: JoinGroupRequest.UNKNOWN_MEMBER_ID
UNKNOWN_MEMBER_ID = ""
#: ClassicGroup.MEMBER_ID_DELIMITER
MEMBER_ID_DELIMITER = "-"

Protocol = tuple[str, bytes]


class ClassicGroupState(Enum):
    """``ClassicGroupState``: the value is Kafka's state name."""

    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"

    def __str__(self) -> str:
        return self.value


_VALID_PREVIOUS = {
    ClassicGroupState.EMPTY: {ClassicGroupState.PREPARING_REBALANCE},
    ClassicGroupState.PREPARING_REBALANCE: {ClassicGroupState.STABLE,
                                            ClassicGroupState.COMPLETING_REBALANCE,
                                            ClassicGroupState.EMPTY},
    ClassicGroupState.COMPLETING_REBALANCE: {ClassicGroupState.PREPARING_REBALANCE},
    ClassicGroupState.STABLE: {ClassicGroupState.COMPLETING_REBALANCE},
    ClassicGroupState.DEAD: {ClassicGroupState.STABLE, ClassicGroupState.PREPARING_REBALANCE,
                             ClassicGroupState.COMPLETING_REBALANCE, ClassicGroupState.EMPTY,
                             ClassicGroupState.DEAD},
}


class MemberError(Exception):
    """A request refused with a Kafka error code (``validateMember`` and friends)."""

    def __init__(self, code: int) -> None:
        super().__init__(error_name(code))
        self.code = code


@dataclass
class ClassicGroupMember:
    """``ClassicGroupMember``: ``awaiting_join``/``awaiting_sync`` hold pending handles."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: list[Protocol]
    assignment: bytes = b""
    awaiting_join: int | None = None
    awaiting_sync: int | None = None
    is_new: bool = False

    @property
    def is_static(self) -> bool:
        return self.group_instance_id is not None

    @property
    def is_awaiting_join(self) -> bool:
        return self.awaiting_join is not None

    @property
    def is_awaiting_sync(self) -> bool:
        return self.awaiting_sync is not None

    def metadata(self, protocol_name: str | None) -> bytes:
        """The member's metadata for ``protocol_name`` (ValueError when it has none)."""
        for name, meta in self.protocols:
            if name == protocol_name:
                return meta
        raise ValueError(f"Member does not support protocol {protocol_name}")

    def has_satisfied_heartbeat(self) -> bool:
        if self.is_new:
            return False            # new members can expire while awaiting join
        return self.is_awaiting_join or self.is_awaiting_sync

    def matches(self, protocols: Sequence[Protocol]) -> bool:
        return list(protocols) == list(self.protocols)

    def vote(self, candidates: set[str]) -> str:
        for name, _ in self.protocols:
            if name in candidates:
                return name
        raise ValueError("Member does not support any of the candidate protocols")

    def protocol_names(self) -> set[str]:
        return {name for name, _ in self.protocols}

    def has_assignment(self) -> bool:
        return bool(self.assignment)


@dataclass
class ClassicGroup:
    """``ClassicGroup``: one classic group's membership and rebalance state.

    ``complete(handle, response)`` receives completed JoinGroup/SyncGroup responses.
    """

    group_id: str
    clock: Clock
    complete: Callable[[int, Any], None]
    state: ClassicGroupState = ClassicGroupState.EMPTY
    previous_state: ClassicGroupState = ClassicGroupState.DEAD
    generation_id: int = 0
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str | None = None
    current_state_timestamp: int | None = None
    members: JavaHashMap[str, ClassicGroupMember] = field(
        default_factory=lambda: JavaHashMap(string_hash))
    static_members: dict[str, str] = field(default_factory=dict)
    pending_join_members: set[str] = field(default_factory=set)
    num_awaiting_join: int = 0
    supported_protocols: dict[str, int] = field(default_factory=dict)
    pending_sync_members: set[str] = field(default_factory=set)
    subscribed_topics: frozenset[str] | None = None
    new_member_added: bool = False

    def __post_init__(self) -> None:
        if self.current_state_timestamp is None and self.state is not ClassicGroupState.STABLE:
            self.current_state_timestamp = self.clock.milliseconds()

    # -- queries ------------------------------------------------------------------------------

    def is_in(self, state: ClassicGroupState) -> bool:
        return self.state is state

    def has_member(self, member_id: str) -> bool:
        return member_id in self.members

    def member(self, member_id: str) -> ClassicGroupMember:
        return self.members[member_id]

    @property
    def num_members(self) -> int:
        return len(self.members)

    def all_members(self) -> list[ClassicGroupMember]:
        return self.members.values()

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id == member_id

    def is_empty(self) -> bool:
        return self.is_in(ClassicGroupState.EMPTY)

    def uses_consumer_protocol(self) -> bool:
        return self.protocol_type == cp.PROTOCOL_TYPE

    def is_simple_group(self) -> bool:
        return self.protocol_type is None and self.is_empty() and not self.pending_join_members

    def can_rebalance(self) -> bool:
        return self.state in _VALID_PREVIOUS[ClassicGroupState.PREPARING_REBALANCE]

    def has_all_members_joined(self) -> bool:
        return len(self.members) == self.num_awaiting_join and not self.pending_join_members

    def rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def not_yet_rejoined_members(self) -> list[ClassicGroupMember]:
        return [m for m in self.members.values() if not m.is_awaiting_join]

    def has_received_sync_from_all_members(self) -> bool:
        return not self.pending_sync_members

    def static_member_id(self, group_instance_id: str) -> str | None:
        return self.static_members.get(group_instance_id)

    def is_static_member_fenced(self, group_instance_id: str, member_id: str) -> bool:
        existing = self.static_members.get(group_instance_id)
        return existing is not None and existing != member_id

    def is_subscribed_to_topic(self, topic: str) -> bool:
        if self.subscribed_topics is None:
            return self.uses_consumer_protocol()
        return topic in self.subscribed_topics

    # -- membership -----------------------------------------------------------------------------

    def add(self, member: ClassicGroupMember, handle: int | None = None) -> None:
        if member.group_instance_id is not None:
            if member.group_instance_id in self.static_members:
                raise RuntimeError(f"Static member with groupInstanceId="
                                   f"{member.group_instance_id} is already a member")
            self.static_members[member.group_instance_id] = member.member_id
        if not self.members:
            self.protocol_type = member.protocol_type
        if self.protocol_type != member.protocol_type:
            raise RuntimeError("The group and member's protocol type must be the same.")
        if not self.supports_protocols(member.protocol_type, member.protocol_names()):
            raise RuntimeError("None of the member's protocols can be supported.")
        if self.leader_id is None:
            self.leader_id = member.member_id
        self.members[member.member_id] = member
        self._count_protocols(member, +1)
        member.awaiting_join = handle
        if member.is_awaiting_join:
            self.num_awaiting_join += 1
        self.pending_join_members.discard(member.member_id)

    def remove(self, member_id: str) -> None:
        removed = self.members.pop(member_id, None)
        if removed is not None:
            self._count_protocols(removed, -1)
            if removed.is_awaiting_join:
                self.num_awaiting_join -= 1
            if removed.group_instance_id is not None:
                self.static_members.pop(removed.group_instance_id, None)
        if self.is_leader(member_id):
            self.leader_id = self.members.first_key() if len(self.members) else None
        self.pending_join_members.discard(member_id)
        self.pending_sync_members.discard(member_id)

    def maybe_elect_new_joined_leader(self) -> bool:
        """Keep the leader if it rejoined, else pick the first member that did."""
        if self.leader_id is None:
            return False
        leader = self.members[self.leader_id]
        if leader.is_awaiting_join:
            return True
        for m in self.members.values():
            if m.is_awaiting_join:
                self.leader_id = m.member_id
                return True
        return False

    def replace_static_member(self, group_instance_id: str, old_member_id: str,
                              new_member_id: str) -> ClassicGroupMember:
        """Give a static member a new member id (the old id is fenced: its pending requests
        complete with FENCED_INSTANCE_ID)."""
        from .responses import JoinGroupResponse, SyncGroupResponse

        removed = self.members.pop(old_member_id, None)
        if removed is None:
            raise ValueError(f"Cannot replace non-existing member id {old_member_id}")
        self.complete_join(removed, JoinGroupResponse(
            ErrorCode.FENCED_INSTANCE_ID, member_id=old_member_id))
        self.complete_sync(removed, SyncGroupResponse(ErrorCode.FENCED_INSTANCE_ID))
        new = ClassicGroupMember(
            new_member_id, removed.group_instance_id, removed.client_id, removed.client_host,
            removed.rebalance_timeout_ms, removed.session_timeout_ms, removed.protocol_type,
            removed.protocols, removed.assignment)
        self.members[new_member_id] = new
        if self.is_leader(old_member_id):
            self.leader_id = new_member_id
        self.static_members[group_instance_id] = new_member_id
        return new

    def add_pending_member(self, member_id: str) -> None:
        if self.has_member(member_id):
            raise RuntimeError(f"Attempt to add pending member {member_id} which is already "
                               "a stable member of the group.")
        self.pending_join_members.add(member_id)

    def update_member(self, member: ClassicGroupMember, protocols: Sequence[Protocol],
                      rebalance_timeout_ms: int, session_timeout_ms: int,
                      handle: int | None) -> None:
        self._count_protocols(member, -1)
        member.protocols = list(protocols)
        self._count_protocols(member, +1)
        member.rebalance_timeout_ms = rebalance_timeout_ms
        member.session_timeout_ms = session_timeout_ms
        if handle is not None and not member.is_awaiting_join:
            self.num_awaiting_join += 1
        elif handle is None and member.is_awaiting_join:
            self.num_awaiting_join -= 1
        member.awaiting_join = handle

    def validate_member(self, member_id: str, group_instance_id: str | None) -> None:
        """``ClassicGroup.validateMember``: UNKNOWN_MEMBER_ID / FENCED_INSTANCE_ID."""
        if group_instance_id is not None:
            existing = self.static_members.get(group_instance_id)
            if existing is None:
                raise MemberError(ErrorCode.UNKNOWN_MEMBER_ID)
            if existing != member_id:
                raise MemberError(ErrorCode.FENCED_INSTANCE_ID)
        if not self.has_member(member_id):
            raise MemberError(ErrorCode.UNKNOWN_MEMBER_ID)

    def validate_offset_commit(self, member_id: str, group_instance_id: str | None,
                               generation_id: int, transactional: bool) -> None:
        """``ClassicGroup.validateOffsetCommit``."""
        if self.is_in(ClassicGroupState.DEAD):
            raise MemberError(ErrorCode.COORDINATOR_NOT_AVAILABLE)
        if generation_id < 0 and self.is_empty():
            return      # the admin client or a consumer without group management
        if generation_id >= 0 or member_id or group_instance_id is not None:
            self.validate_member(member_id, group_instance_id)
            if generation_id != self.generation_id:
                raise MemberError(ErrorCode.ILLEGAL_GENERATION)
        elif not transactional and not self.is_empty():
            raise MemberError(ErrorCode.UNKNOWN_MEMBER_ID)
        if not transactional and self.is_in(ClassicGroupState.COMPLETING_REBALANCE):
            raise MemberError(ErrorCode.REBALANCE_IN_PROGRESS)

    # -- protocols --------------------------------------------------------------------------------

    def _count_protocols(self, member: ClassicGroupMember, delta: int) -> None:
        for name, _ in member.protocols:
            self.supported_protocols[name] = self.supported_protocols.get(name, 0) + delta

    def candidate_protocols(self) -> set[str]:
        n = len(self.members)
        return {p for p, c in self.supported_protocols.items() if c == n}

    def supports_protocols(self, protocol_type: str, names: set[str]) -> bool:
        if self.is_empty():
            return bool(protocol_type) and bool(names)
        return self.protocol_type == protocol_type and any(
            self.supported_protocols.get(n, 0) == len(self.members) for n in names)

    def select_protocol(self) -> str:
        """Each member votes for its first protocol that every member supports; the most
        votes win; a tie goes to the first protocol in the vote ``HashMap``'s order."""
        if not self.members:
            raise RuntimeError("Cannot select protocol for empty group")
        candidates = self.candidate_protocols()
        votes: JavaHashMap[str, int] = JavaHashMap(string_hash)
        for m in self.members.values():
            p = m.vote(candidates)
            votes[p] = votes.get(p, 0) + 1
        best, best_votes = None, -1
        for p, v in votes.items():
            if v > best_votes:             # Stream.max keeps the first of equal maxima
                best, best_votes = p, v
        if best is None:
            raise RuntimeError("no protocol got a vote")
        return best

    def compute_subscribed_topics(self) -> frozenset[str] | None:
        members = self.members.values()
        if self.protocol_name is None:      # members without a protocol: unknown topics
            return None if members else cp.group_subscribed_topics(self.protocol_type, None, [])
        try:
            metadata = [m.metadata(self.protocol_name) for m in members]
        except ValueError:
            return None
        return cp.group_subscribed_topics(self.protocol_type, self.protocol_name, metadata)

    # -- transitions ------------------------------------------------------------------------------

    def transition_to(self, state: ClassicGroupState) -> None:
        if self.state not in _VALID_PREVIOUS[state]:
            raise RuntimeError(f"Group {self.group_id} should be in one of "
                               f"{sorted(str(s) for s in _VALID_PREVIOUS[state])} states before "
                               f"moving to {state} state. Instead it is in {self.state} state.")
        self.previous_state = self.state
        self.state = state
        self.current_state_timestamp = self.clock.milliseconds()

    def init_next_generation(self) -> None:
        self.generation_id += 1
        if self.members:
            self.protocol_name = self.select_protocol()
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(ClassicGroupState.COMPLETING_REBALANCE)
        else:
            self.protocol_name = None
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(ClassicGroupState.EMPTY)
        self.pending_sync_members.clear()

    # -- pending requests -------------------------------------------------------------------------

    def complete_join(self, member: ClassicGroupMember, response: Any) -> bool:
        if member.awaiting_join is None:
            return False
        handle = member.awaiting_join
        member.awaiting_join = None
        self.num_awaiting_join -= 1
        self.complete(handle, response)
        return True

    def complete_sync(self, member: ClassicGroupMember, response: Any) -> bool:
        if member.awaiting_sync is None:
            return False
        handle = member.awaiting_sync
        member.awaiting_sync = None
        self.complete(handle, response)
        return True

    def complete_all_joins(self, code: int) -> None:
        from .responses import JoinGroupResponse

        for m in self.members.values():
            self.complete_join(m, JoinGroupResponse(code, member_id=m.member_id))

    def complete_all_syncs(self, code: int) -> None:
        from .responses import SyncGroupResponse

        for m in self.members.values():
            self.complete_sync(m, SyncGroupResponse(code))

    def join_response_members(self) -> list[Any]:
        """``currentClassicGroupMembers``: the leader's JoinGroup member list."""
        from .responses import JoinGroupResponseMember

        if self.state in (ClassicGroupState.DEAD, ClassicGroupState.PREPARING_REBALANCE):
            raise RuntimeError(f"Cannot obtain classic member metadata for group "
                               f"{self.group_id} in state {self.state}")
        return [JoinGroupResponseMember(m.member_id, m.group_instance_id,
                                        m.metadata(self.protocol_name))
                for m in self.members.values()]

    def group_assignment(self) -> dict[str, bytes]:
        return {m.member_id: m.assignment for m in self.members.values()}
