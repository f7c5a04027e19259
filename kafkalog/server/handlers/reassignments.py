"""Partition reassignments on a cluster of one node: AlterPartitionReassignments (key 45) and
ListPartitionReassignments (key 46), ``kafka-reassign-partitions.sh`` and
``Admin.{alter,list}PartitionReassignments``.

As Kafka's controller answers them (``ControllerApis`` and ``ReplicationControlManager``, 4.2):
both need a cluster permission (ALTER to change, DESCRIBE to list), else the whole request fails
with ``CLUSTER_AUTHORIZATION_FAILED`` (``getErrorResponse``: every partition named carries the
error). Each partition of an alteration is checked on its own:

* an unknown topic or partition: ``UNKNOWN_TOPIC_OR_PARTITION`` ("Unable to find a topic named
  T." / "Unable to find partition T:P.");
* a cancellation (null replicas): ``NO_REASSIGNMENT_IN_PROGRESS``, since nothing is ever
  reassigning here;
* a target replica list (``validateManualPartitionAssignment``): empty, naming a broker that is
  not registered (only this node is), or naming one twice: ``INVALID_REPLICA_ASSIGNMENT``. What
  is left is the partition's own replica list, which needs no change (no
  ``PartitionChangeRecord``) and keeps its replication factor (KIP-860's check cannot fail
  here): ``NONE``.

So no reassignment is ever in progress: a list answers no topics (Kafka leaves out topics with
no reassigning partition). Versions: Alter 0-1, List 0 (Kafka 4.2's).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...security.acls import CLUSTER_NAME, AclOperation, ResourceType
from ..api import RequestContext, register
from ..protocol import ErrorCode

__all__ = ["alter_partition_reassignments", "list_partition_reassignments"]


class _PartitionError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _check_target(broker: Any, topic: str, partition: int, replicas: Any) -> None:
    """``ReplicationControlManager.alterPartitionReassignment`` for one partition; raises
    :class:`_PartitionError` with Kafka's code and message."""
    held = broker.partitions_of(topic)
    if not held:
        raise _PartitionError(ErrorCode.unknown_topic_or_partition,
                              f"Unable to find a topic named {topic}.")
    if partition not in held:
        raise _PartitionError(ErrorCode.unknown_topic_or_partition,
                              f"Unable to find partition {topic}:{partition}.")
    if replicas is None:
        # cancelPartitionReassignment: isReassignmentInProgress is never true here
        raise _PartitionError(ErrorCode.no_reassignment_in_progress,
                              "No partition reassignment is in progress.")
    # validateManualPartitionAssignment: over the ids sorted, registration before duplicates
    if not replicas:
        raise _PartitionError(ErrorCode.invalid_replica_assignment,
                              "The manual partition assignment includes an empty replica list.")
    previous = None
    for broker_id in sorted(replicas):
        if broker_id != broker.config.node_id:
            raise _PartitionError(
                ErrorCode.invalid_replica_assignment,
                f"The manual partition assignment includes broker {broker_id}, but no such "
                "broker is registered.")
        if broker_id == previous:
            raise _PartitionError(
                ErrorCode.invalid_replica_assignment,
                f"The manual partition assignment includes the broker {previous} more than "
                "once.")
        previous = broker_id
    # (validatePartitionReplicationFactorUnchanged, without allow_replication_factor_change,
    # comes next in Kafka; past the checks above the target is [this node], the replica list
    # of every partition here: the factor cannot change)


@register(45, "AlterPartitionReassignments", 0, 1)
async def alter_partition_reassignments(ctx: RequestContext, request: Any
                                        ) -> Mapping[str, Any]:
    """AlterPartitionReassignments (key 45), as the module docstring says."""
    allow = bool(getattr(request, "allow_replication_factor_change", True))
    if not ctx.authorize(AclOperation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME):
        message = ctx.cluster_refused(AclOperation.ALTER)
        code = ErrorCode.cluster_authorization_failed
        return {"throttle_time": 0, "allow_replication_factor_change": allow,
                "error_code": code, "error_message": message,
                "responses": [{"name": t.name, "partitions": [
                    {"partition_index": p.partition_index, "error_code": code,
                     "error_message": message} for p in t.partitions]}
                    for t in request.topics]}
    responses = []
    for t in request.topics:
        partitions = []
        for p in t.partitions:
            try:
                _check_target(ctx.broker, t.name, p.partition_index, p.replicas)
            except _PartitionError as e:
                partitions.append({"partition_index": p.partition_index, "error_code": e.code,
                                   "error_message": e.message})
            else:
                partitions.append({"partition_index": p.partition_index,
                                   "error_code": ErrorCode.none, "error_message": None})
        responses.append({"name": t.name, "partitions": partitions})
    return {"throttle_time": 0, "allow_replication_factor_change": allow,
            "error_code": ErrorCode.none, "error_message": None, "responses": responses}


@register(46, "ListPartitionReassignments", 0, 0)
async def list_partition_reassignments(ctx: RequestContext, request: Any
                                       ) -> Mapping[str, Any]:
    """ListPartitionReassignments (key 46): none is ever in progress on one node."""
    if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
        code = ErrorCode.cluster_authorization_failed
        return {"throttle_time": 0, "error_code": code,
                "error_message": ctx.cluster_refused(AclOperation.DESCRIBE),
                "topics": [{"name": t.name, "partitions": [
                    {"partition_index": p, "replicas": [], "adding_replicas": [],
                     "removing_replicas": []} for p in t.partition_indexes]}
                    for t in request.topics or ()]}
    # (listReassigningTopic adds a topic only with a reassigning partition: never, here)
    return {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None,
            "topics": []}
