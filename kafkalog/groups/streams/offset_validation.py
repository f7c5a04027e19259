"""Who may commit and fetch a streams group's offsets: Kafka 4.2's
``StreamsGroup.validateOffsetCommit`` (with its per-task ``createAssignmentEpochValidator``)
and ``validateOffsetFetch``, as error codes for the group coordinator.

A commit is checked as a whole: Kafka validates each partition as it builds the records and
the first failure fails the request (no record is written).

>>> from kafkalog.groups.streams import StreamsGroup
>>> validate_offset_commit(StreamsGroup("app"), "", None, -1, False, 9, [("in", 0)])
0
"""

from __future__ import annotations

from collections.abc import Iterable

from ..error_codes import ErrorCode
from .streams_group import StreamsGroup

__all__ = ["validate_offset_commit", "validate_offset_fetch"]

#: ``JoinGroupRequest.UNKNOWN_GENERATION_ID`` and ``UNKNOWN_MEMBER_ID``
_UNKNOWN_GENERATION, _UNKNOWN_MEMBER = -1, ""


def validate_offset_commit(group: StreamsGroup, member_id: str, group_instance_id: str | None,
                           member_epoch: int, transactional: bool, api_version: int,
                           partitions: Iterable[tuple[str, int]]) -> int:
    """The error code of an OffsetCommit (``transactional``: TxnOffsetCommit) to ``group``,
    0 when it may be written:

    - an epoch below 0 commits for an Empty group (the admin client, a consumer without group
      management); a transactional commit without member id, epoch or instance id always;
    - otherwise the member must exist (UNKNOWN_MEMBER_ID), use OffsetCommit v9+ unless
      transactional (UNSUPPORTED_VERSION), and commit at its epoch, or at an older epoch no
      older than the epoch each committed partition's task was assigned at (a task pending
      revocation counts); else STALE_MEMBER_EPOCH (ILLEGAL_GENERATION for TxnOffsetCommit).
    """
    if member_epoch < 0 and not group.members:
        return ErrorCode.NONE
    if transactional and member_epoch == _UNKNOWN_GENERATION and member_id == _UNKNOWN_MEMBER \
            and group_instance_id is None:
        return ErrorCode.NONE
    stale = ErrorCode.ILLEGAL_GENERATION if transactional else ErrorCode.STALE_MEMBER_EPOCH
    member = group.members.get(member_id)
    if member is None:
        return ErrorCode.UNKNOWN_MEMBER_ID
    if not transactional and api_version < 9:
        return ErrorCode.UNSUPPORTED_VERSION
    if member_epoch == member.member_epoch:
        return ErrorCode.NONE
    if member_epoch > member.member_epoch:
        return stale
    if group.topology is None:
        return stale        # "Topology is not available for offset commit validation."
    source_map = group.topology.source_topic_map()
    for topic, partition in partitions:
        sub = source_map.get(topic)
        if sub is None:
            return stale    # "Topic ... is not in the topology."
        epoch = member.assigned_tasks.active_epochs.get(sub.subtopology_id, {}).get(partition)
        if epoch is None:
            epoch = member.tasks_pending_revocation.active_epochs.get(
                sub.subtopology_id, {}).get(partition)
        if epoch is None or member_epoch < epoch:
            return stale    # not assigned or pending revocation; or assigned after the epoch
    return ErrorCode.NONE


def validate_offset_fetch(group: StreamsGroup, member_id: str | None, member_epoch: int) -> int:
    """``validateOffsetFetch``: without a member id and epoch (the admin client) any fetch;
    else the member must exist (UNKNOWN_MEMBER_ID) at that epoch (STALE_MEMBER_EPOCH)."""
    if member_id is None and member_epoch < 0:
        return ErrorCode.NONE
    member = group.members.get(member_id or "")
    if member is None:
        return ErrorCode.UNKNOWN_MEMBER_ID
    if member_epoch != member.member_epoch:
        return ErrorCode.STALE_MEMBER_EPOCH
    return ErrorCode.NONE
