"""Responses of :class:`~kafkalog.groups.coordinator.GroupCoordinator`: plain dataclasses with
the fields of Kafka's generated ``*ResponseData`` classes (snake_case) and Kafka's numeric error
codes (:class:`~kafkalog.groups.error_codes.ErrorCode`, an ``int``).

Nullable strings are None where Kafka's response has null (``protocol_type``/``protocol_name``
of an error response, ``group_instance_id`` of a dynamic member); a wire encoder writes ``""``
for the versions where the field is not nullable.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .error_codes import ErrorCode

__all__ = [
    "JoinGroupResponse",
    "JoinGroupResponseMember",
    "SyncGroupResponse",
    "HeartbeatResponse",
    "LeaveGroupResponse",
    "LeaveMemberResponse",
    "MemberIdentity",
    "OffsetCommitResponse",
    "OffsetCommitTopicResponse",
    "PartitionError",
    "OffsetFetchResponse",
    "OffsetFetchTopicResponse",
    "OffsetFetchPartition",
    "OffsetDeleteResponse",
    "ListGroupsResponse",
    "ListedGroup",
    "DescribeGroupsResponse",
    "DescribedGroup",
    "DescribedGroupMember",
    "DeleteGroupsResponse",
    "DeletableGroupResult",
    "TxnOffsetCommitResponse",
    "ConsumerGroupHeartbeatResponse",
    "ConsumerGroupDescribedGroup",
    "ConsumerGroupDescribedMember",
    "DescribedTopicPartitions",
    "INVALID_OFFSET",
    "AUTHORIZED_OPERATIONS_OMITTED",
]

#: OffsetFetchResponse.INVALID_OFFSET
INVALID_OFFSET = -1
#: DescribeGroupsResponse authorizedOperations default (Integer.MIN_VALUE: not requested)
AUTHORIZED_OPERATIONS_OMITTED = -(1 << 31)


@dataclass
class JoinGroupResponseMember:
    member_id: str
    group_instance_id: str | None
    metadata: bytes


@dataclass
class JoinGroupResponse:
    """``JoinGroupResponseData``; ``members`` only for the leader."""

    error_code: int = ErrorCode.NONE
    generation_id: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    skip_assignment: bool = False
    member_id: str = ""
    members: list[JoinGroupResponseMember] = field(default_factory=list)


@dataclass
class SyncGroupResponse:
    """``SyncGroupResponseData``."""

    error_code: int = ErrorCode.NONE
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignment: bytes = b""


@dataclass
class HeartbeatResponse:
    error_code: int = ErrorCode.NONE


@dataclass
class MemberIdentity:
    """One member of a LeaveGroup request (v3+: several; ``member_id`` "" + instance id removes a
    static member administratively)."""

    member_id: str
    group_instance_id: str | None = None
    reason: str | None = None


@dataclass
class LeaveMemberResponse:
    member_id: str
    group_instance_id: str | None
    error_code: int = ErrorCode.NONE


@dataclass
class LeaveGroupResponse:
    """``LeaveGroupResponseData``: a group-level error, or one entry per member (v3+)."""

    error_code: int = ErrorCode.NONE
    members: list[LeaveMemberResponse] = field(default_factory=list)


@dataclass
class PartitionError:
    partition_index: int
    error_code: int = ErrorCode.NONE


@dataclass
class OffsetCommitTopicResponse:
    name: str
    partitions: list[PartitionError] = field(default_factory=list)


@dataclass
class OffsetCommitResponse:
    """``OffsetCommitResponseData`` (group-level errors are repeated on every partition)."""

    topics: list[OffsetCommitTopicResponse] = field(default_factory=list)

    def errors(self) -> dict[tuple[str, int], int]:
        """``{(topic, partition): error code}``."""
        return {(t.name, p.partition_index): p.error_code for t in self.topics
                for p in t.partitions}


@dataclass
class TxnOffsetCommitResponse(OffsetCommitResponse):
    """``TxnOffsetCommitResponseData``."""


@dataclass
class OffsetFetchPartition:
    partition_index: int
    committed_offset: int = INVALID_OFFSET
    committed_leader_epoch: int = -1
    metadata: str = ""
    error_code: int = ErrorCode.NONE


@dataclass
class OffsetFetchTopicResponse:
    name: str
    partitions: list[OffsetFetchPartition] = field(default_factory=list)


@dataclass
class OffsetFetchResponse:
    """One group of ``OffsetFetchResponseData`` (v8+ groups list, or the whole v0-v7 body)."""

    group_id: str
    error_code: int = ErrorCode.NONE
    topics: list[OffsetFetchTopicResponse] = field(default_factory=list)

    def offsets(self) -> dict[tuple[str, int], int]:
        """``{(topic, partition): committed offset}`` (-1 where none)."""
        return {(t.name, p.partition_index): p.committed_offset for t in self.topics
                for p in t.partitions}


@dataclass
class OffsetDeleteResponse:
    """``OffsetDeleteResponseData``."""

    error_code: int = ErrorCode.NONE
    topics: list[OffsetCommitTopicResponse] = field(default_factory=list)


@dataclass
class ListedGroup:
    group_id: str
    protocol_type: str
    group_state: str
    group_type: str = "classic"


@dataclass
class ListGroupsResponse:
    error_code: int = ErrorCode.NONE
    groups: list[ListedGroup] = field(default_factory=list)


@dataclass
class DescribedGroupMember:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    member_metadata: bytes
    member_assignment: bytes


@dataclass
class DescribedGroup:
    """``DescribeGroupsResponseData.DescribedGroup``: ``protocol_data`` is the protocol name,
    member metadata only in the Stable state (as Kafka)."""

    group_id: str
    error_code: int = ErrorCode.NONE
    group_state: str = ""
    protocol_type: str = ""
    protocol_data: str = ""
    members: list[DescribedGroupMember] = field(default_factory=list)
    authorized_operations: int = AUTHORIZED_OPERATIONS_OMITTED


@dataclass
class DescribeGroupsResponse:
    groups: list[DescribedGroup] = field(default_factory=list)


@dataclass
class DeletableGroupResult:
    group_id: str
    error_code: int = ErrorCode.NONE


@dataclass
class DeleteGroupsResponse:
    results: list[DeletableGroupResult] = field(default_factory=list)


@dataclass
class ConsumerGroupHeartbeatResponse:
    """``ConsumerGroupHeartbeatResponseData`` (KIP-848); ``assignment`` is None when the
    response carries none (the member's assignment did not change), else ``[(topic id,
    partitions)]``."""

    error_code: int = ErrorCode.NONE
    error_message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: list[tuple[str, list[int]]] | None = None


@dataclass
class DescribedTopicPartitions:
    topic_id: str
    topic_name: str
    partitions: list[int]


@dataclass
class ConsumerGroupDescribedMember:
    """``ConsumerGroupDescribeResponseData.Member``."""

    member_id: str
    instance_id: str | None
    rack_id: str | None
    member_epoch: int
    client_id: str
    client_host: str
    subscribed_topic_names: list[str]
    subscribed_topic_regex: str | None
    assignment: list[DescribedTopicPartitions]
    target_assignment: list[DescribedTopicPartitions]


@dataclass
class ConsumerGroupDescribedGroup:
    """``ConsumerGroupDescribeResponseData.DescribedGroup``; ``group_state`` as Kafka's
    ``toString`` ("Empty", "Assigning", "Reconciling", "Stable", "Dead")."""

    group_id: str
    error_code: int = ErrorCode.NONE
    error_message: str | None = None
    group_state: str = ""
    group_epoch: int = 0
    assignment_epoch: int = 0
    assignor_name: str = ""
    members: list[ConsumerGroupDescribedMember] = field(default_factory=list)
