"""The classic consumer-group APIs, translated to :class:`kafkalog.groups.GroupCoordinator`.

JoinGroup (11), SyncGroup (14), Heartbeat (12), LeaveGroup (13), OffsetCommit (8), OffsetFetch
(9), OffsetDelete (47), ListGroups (16), DescribeGroups (15), DeleteGroups (42) and
TxnOffsetCommit (28): the request fields of each version go to the coordinator's method
(the rules live there, ported from Kafka's group coordinator), its response comes back as the
version's response (``KafkaApis.handle*Request``, 3.9, for what varies by version):

* JoinGroup v0 has no rebalance timeout (the session timeout is used); from v4 a new member
  first gets ``MEMBER_ID_REQUIRED`` with its id (the coordinator decides by ``api_version``).
* LeaveGroup v0-2 names one member; v3+ a batch, answered per member.
* OffsetCommit v2-4 carries a retention time; v9's field is ``generation_id_or_member_epoch``
  (a consumer group member's epoch: STALE_MEMBER_EPOCH when it is not the current one).
* OffsetFetch v1-7 asks for one group (null topics from v2: every committed partition); v8+ for
  several groups, answered per group; ``require_stable`` (v7+) makes a partition with a pending
  transactional commit answer ``UNSTABLE_OFFSET_COMMIT``.
* TxnOffsetCommit must come from a producer whose transaction holds the group's
  ``__consumer_offsets`` partition (``AddOffsetsToTxn`` first): otherwise
  ``INVALID_TXN_STATE`` / ``INVALID_PRODUCER_ID_MAPPING`` / ``INVALID_PRODUCER_EPOCH`` per
  partition, as the partition leader's verification answers (KIP-890 part 1).
* DescribeGroups v3+ returns the authorized operations when asked (no authorizer: all of
  READ, DESCRIBE, DELETE).
* With an authorizer, KafkaApis' checks: READ on the group for membership and commits,
  DESCRIBE to fetch offsets, find or describe it, DELETE to delete it or its offsets; READ on
  each topic whose offsets are committed (TOPIC_AUTHORIZATION_FAILED for the others) and
  DESCRIBE on each topic whose offsets are fetched; ListGroups lists every group with DESCRIBE
  on the cluster, else the groups the principal may describe.

Versions (Kafka 3.9 within kio's range): JoinGroup 0-9, SyncGroup 0-5, Heartbeat 0-4, LeaveGroup
0-5, OffsetCommit 2-9, OffsetFetch 1-9, OffsetDelete 0, ListGroups 0-5, DescribeGroups 0-5,
DeleteGroups 0-2, TxnOffsetCommit 0-4.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ...security.acls import CLUSTER_NAME, AclOperation, ResourceType
from ..api import RequestContext, register
from ..broker import OFFSETS_TOPIC
from ..protocol import ErrorCode, millis

__all__ = ["GROUP_OPERATIONS"]

#: AclOperation READ(3), DELETE(6), DESCRIBE(8): what ResourceType.GROUP supports
GROUP_OPERATIONS = (1 << 3) | (1 << 6) | (1 << 8)


def _plain(obj: Any) -> Any:
    """A coordinator response dataclass as plain values for ``build``."""
    return dataclasses.asdict(obj)


def _service(ctx: RequestContext) -> Any:
    return ctx.broker.groups


def _unavailable(ctx: RequestContext) -> bool:
    return ctx.broker.groups is None


def _host(ctx: RequestContext) -> str:
    return "/" + ctx.peer.rsplit(":", 1)[0]


def _group_ok(ctx: RequestContext, group_id: str, op: int = AclOperation.READ) -> bool:
    """KafkaApis' group check (READ for membership and offsets, DESCRIBE or DELETE for the
    admin APIs): GROUP_AUTHORIZATION_FAILED otherwise."""
    return ctx.authorize(op, ResourceType.GROUP, group_id)


def _is_share_group(ctx: RequestContext, group_id: str) -> bool:
    """A KIP-932 share group uses ``group_id`` (a classic or consumer group may not)."""
    shares = ctx.broker.shares
    return shares is not None and shares.coordinator.group(group_id) is not None


# -- membership ----------------------------------------------------------------------------


@register(11, "JoinGroup", 0, 9)
async def join_group(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    if _unavailable(ctx):
        return {"throttle_time": 0, "error_code": ErrorCode.coordinator_not_available,
                "protocol_name": "", "leader": "", "member_id": "", "members": []}
    if not _group_ok(ctx, request.group_id):
        return {"throttle_time": 0, "error_code": ErrorCode.group_authorization_failed,
                "protocol_name": "", "leader": "", "member_id": request.member_id,
                "members": [], "generation_id": -1}
    if _is_share_group(ctx, request.group_id):
        # Kafka: a classic join of a share group's id is INCONSISTENT_GROUP_PROTOCOL
        return {"throttle_time": 0, "error_code": ErrorCode.inconsistent_group_protocol,
                "protocol_name": "", "leader": "", "member_id": request.member_id,
                "members": [], "generation_id": -1}
    session = millis(request.session_timeout)
    rebalance = millis(request.rebalance_timeout) if ctx.api_version >= 1 else session
    response = await _service(ctx).call_delayed(
        lambda c: c.join_group(
            request.group_id, request.member_id, request.protocol_type,
            [(p.name, p.metadata) for p in request.protocols],
            session_timeout_ms=session, rebalance_timeout_ms=rebalance,
            group_instance_id=getattr(request, "group_instance_id", None),
            reason=getattr(request, "reason", None), client_id=ctx.client_id or "",
            client_host=_host(ctx), api_version=ctx.api_version))
    return {"throttle_time": 0, **_plain(response)}


@register(14, "SyncGroup", 0, 5)
async def sync_group(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    if _unavailable(ctx):
        return {"throttle_time": 0, "error_code": ErrorCode.coordinator_not_available,
                "assignment": b""}
    if not _group_ok(ctx, request.group_id):
        return {"throttle_time": 0, "error_code": ErrorCode.group_authorization_failed,
                "assignment": b""}
    response = await _service(ctx).call_delayed(
        lambda c: c.sync_group(
            request.group_id, request.generation_id, request.member_id,
            [(a.member_id, a.assignment) for a in request.assignments],
            group_instance_id=getattr(request, "group_instance_id", None),
            protocol_type=getattr(request, "protocol_type", None),
            protocol_name=getattr(request, "protocol_name", None)))
    return {"throttle_time": 0, **_plain(response)}


@register(12, "Heartbeat", 0, 4)
async def heartbeat(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    if _unavailable(ctx):
        return {"throttle_time": 0, "error_code": ErrorCode.coordinator_not_available}
    if not _group_ok(ctx, request.group_id):
        return {"throttle_time": 0, "error_code": ErrorCode.group_authorization_failed}
    response = _service(ctx).call(
        lambda c: c.heartbeat(request.group_id, request.generation_id, request.member_id,
                              group_instance_id=getattr(request, "group_instance_id", None)))
    return {"throttle_time": 0, **_plain(response)}


@register(13, "LeaveGroup", 0, 5)
async def leave_group(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    if _unavailable(ctx):
        return {"throttle_time": 0, "error_code": ErrorCode.coordinator_not_available,
                "members": []}
    if not _group_ok(ctx, request.group_id):
        return {"throttle_time": 0, "error_code": ErrorCode.group_authorization_failed,
                "members": []}
    from ...groups.responses import MemberIdentity

    if ctx.api_version >= 3:
        members: Any = [MemberIdentity(m.member_id, m.group_instance_id,
                                       getattr(m, "reason", None)) for m in request.members]
    else:
        members = request.member_id
    response = _service(ctx).call(lambda c: c.leave_group(request.group_id, members))
    out = _plain(response)
    for m in out["members"]:
        m["group_instance_id"] = m["group_instance_id"] or ""
    return {"throttle_time": 0, **out}


# -- offsets -------------------------------------------------------------------------------


def _commit_offsets(request: Any) -> dict[tuple[str, int], Any]:
    from ...groups.coordinator import OffsetCommitPartition

    return {(t.name, p.partition_index): OffsetCommitPartition(
        p.committed_offset, getattr(p, "committed_leader_epoch", -1), p.committed_metadata)
        for t in request.topics for p in t.partitions}


def _with_denied(response: dict[str, Any], request: Any, denied: set[str]) -> dict[str, Any]:
    """``response`` with TOPIC_AUTHORIZATION_FAILED for every partition of the ``denied``
    topics of the request (KafkaApis answers the topics not readable so; the others go on)."""
    if denied:
        response["topics"] = [t for t in response.get("topics", [])
                              if t["name"] not in denied] + [
            {"name": t.name, "partitions": [
                {"partition_index": p.partition_index,
                 "error_code": ErrorCode.topic_authorization_failed} for p in t.partitions]}
            for t in request.topics if t.name in denied]
    return response


def _topic_errors(request: Any, code: int) -> list[dict[str, Any]]:
    return [{"name": t.name, "partitions": [{"partition_index": p.partition_index,
                                             "error_code": code} for p in t.partitions]}
            for t in request.topics]


@register(8, "OffsetCommit", 2, 9)
async def offset_commit(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    if _unavailable(ctx):
        return {"throttle_time": 0,
                "topics": _topic_errors(request, ErrorCode.coordinator_not_available)}
    if not _group_ok(ctx, request.group_id):
        return {"throttle_time": 0,
                "topics": _topic_errors(request, ErrorCode.group_authorization_failed)}
    generation = getattr(request, "generation_id", None)
    if generation is None:
        generation = getattr(request, "generation_id_or_member_epoch", -1)
    retention = getattr(request, "retention_time", None)
    denied = {t.name for t in request.topics
              if not ctx.authorize(AclOperation.READ, ResourceType.TOPIC, t.name)}
    offsets = {tp: o for tp, o in _commit_offsets(request).items() if tp[0] not in denied}
    response = _plain(_service(ctx).call(
        lambda c: c.offset_commit(
            request.group_id, offsets, generation_id=generation,
            member_id=request.member_id,
            group_instance_id=getattr(request, "group_instance_id", None),
            retention_time_ms=-1 if retention is None else millis(retention),
            api_version=ctx.api_version)))
    return {"throttle_time": 0, **_with_denied(response, request, denied)}


def _fetch_one(ctx: RequestContext, group_id: str, topics: Any, require_stable: bool,
               member_id: str | None = None, member_epoch: int = -1) -> dict[str, Any]:
    if not _group_ok(ctx, group_id, AclOperation.DESCRIBE):
        return {"group_id": group_id, "topics": [],
                "error_code": ErrorCode.group_authorization_failed}
    partitions = None if topics is None else [
        (t.name, p) for t in topics for p in t.partition_indexes]
    out = _plain(_service(ctx).call(
        lambda c: c.offset_fetch(group_id, partitions, require_stable=require_stable,
                                 member_id=member_id, member_epoch=member_epoch)))
    if ctx.broker.authorizer is not None:
        # KafkaApis: DESCRIBE on each topic; a named topic without it answers
        # TOPIC_AUTHORIZATION_FAILED, all-topics requests leave it out
        for t in out.get("topics", []):
            if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, t["name"]):
                for p in t["partitions"]:
                    p.update(committed_offset=-1, committed_leader_epoch=-1, metadata="",
                             error_code=ErrorCode.topic_authorization_failed)
                t["denied"] = True
        out["topics"] = [{k: v for k, v in t.items() if k != "denied"}
                         for t in out.get("topics", [])
                         if not (topics is None and t.get("denied"))]
    return out


@register(9, "OffsetFetch", 1, 9)
async def offset_fetch(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    stable = bool(getattr(request, "require_stable", False))
    if ctx.api_version >= 8:
        groups = []
        for g in request.groups:
            if _unavailable(ctx):
                groups.append({"group_id": g.group_id, "topics": [],
                               "error_code": ErrorCode.coordinator_not_available})
            else:
                # (v9: a consumer group member's id and epoch, checked by the coordinator)
                groups.append(_fetch_one(ctx, g.group_id, g.topics, stable,
                                         getattr(g, "member_id", None),
                                         getattr(g, "member_epoch", -1)))
        return {"throttle_time": 0, "groups": groups}
    if _unavailable(ctx):
        return {"throttle_time": 0, "topics": [],
                "error_code": ErrorCode.coordinator_not_available}
    topics = request.topics
    if ctx.api_version < 2 and topics is None:
        topics = []
    return {"throttle_time": 0, **_fetch_one(ctx, request.group_id, topics, stable)}


@register(47, "OffsetDelete", 0, 0)
async def offset_delete(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    if _unavailable(ctx):
        return {"throttle_time": 0, "error_code": ErrorCode.coordinator_not_available,
                "topics": []}
    if not _group_ok(ctx, request.group_id, AclOperation.DELETE):
        return {"throttle_time": 0, "error_code": ErrorCode.group_authorization_failed,
                "topics": []}
    denied = {t.name for t in request.topics
              if not ctx.authorize(AclOperation.READ, ResourceType.TOPIC, t.name)}
    partitions = [(t.name, p.partition_index) for t in request.topics for p in t.partitions
                  if t.name not in denied]
    response = _plain(_service(ctx).call(lambda c: c.offset_delete(request.group_id,
                                                                   partitions)))
    return {"throttle_time": 0, **_with_denied(response, request, denied)}


@register(28, "TxnOffsetCommit", 0, 4)
async def txn_offset_commit(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    broker = ctx.broker
    if _unavailable(ctx):
        return {"throttle_time": 0,
                "topics": _topic_errors(request, ErrorCode.coordinator_not_available)}
    if not ctx.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID,
                         request.transactional_id):
        return {"throttle_time": 0, "topics": _topic_errors(
            request, ErrorCode.transactional_id_authorization_failed)}
    if not _group_ok(ctx, request.group_id):
        return {"throttle_time": 0,
                "topics": _topic_errors(request, ErrorCode.group_authorization_failed)}
    denied = {t.name for t in request.topics
              if not ctx.authorize(AclOperation.READ, ResourceType.TOPIC, t.name)}
    service = _service(ctx)
    code = broker.transactions.verify_partition(
        request.transactional_id, request.producer_id, request.producer_epoch, OFFSETS_TOPIC,
        service.partition_for(request.group_id))
    if code != ErrorCode.none:
        return {"throttle_time": 0, "topics": _topic_errors(request, code)}
    offsets = {tp: o for tp, o in _commit_offsets(request).items() if tp[0] not in denied}
    response = _plain(service.call(
        lambda c: c.txn_offset_commit(
            request.transactional_id, request.group_id, request.producer_id,
            request.producer_epoch, offsets,
            generation_id=getattr(request, "generation_id", -1),
            member_id=getattr(request, "member_id", ""),
            group_instance_id=getattr(request, "group_instance_id", None))))
    return {"throttle_time": 0, **_with_denied(response, request, denied)}


# -- administration --------------------------------------------------------------------------


@register(16, "ListGroups", 0, 5)
async def list_groups(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    if _unavailable(ctx):
        return {"throttle_time": 0, "error_code": ErrorCode.coordinator_not_available,
                "groups": []}
    states = getattr(request, "states_filter", ()) or ()
    types = getattr(request, "types_filter", ()) or ()
    response = _plain(_service(ctx).call(lambda c: c.list_groups(states, types)))
    # KIP-932 share groups live beside the coordinator's (kafkalog.server.share_service)
    shares = ctx.broker.shares
    if shares is not None and (not types or "share" in {t.strip().lower() for t in types}):
        wanted = {s.strip().lower() for s in states}
        for gid, g in shares.coordinator.groups.items():
            if not wanted or g.state.lower() in wanted:
                response["groups"].append({"group_id": gid, "protocol_type": "share",
                                           "group_state": g.state, "group_type": "share"})
        response["groups"].sort(key=lambda g: g["group_id"])
    if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
        # KafkaApis: without DESCRIBE on the cluster, the groups the principal may DESCRIBE
        response["groups"] = [g for g in response["groups"]
                              if _group_ok(ctx, g["group_id"], AclOperation.DESCRIBE)]
    return {"throttle_time": 0, **response}


@register(15, "DescribeGroups", 0, 5)
async def describe_groups(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    if _unavailable(ctx):
        return {"throttle_time": 0, "groups": [
            {"error_code": ErrorCode.coordinator_not_available, "group_id": g,
             "group_state": "", "protocol_type": "", "protocol_data": "", "members": []}
            for g in request.groups]}
    allowed = [g for g in request.groups if _group_ok(ctx, g, AclOperation.DESCRIBE)]
    response = _service(ctx).call(lambda c: c.describe_groups(allowed))
    out = _plain(response)
    if getattr(request, "include_authorized_operations", False):
        for g in out["groups"]:
            g["authorized_operations"] = ctx.authorized_operations(
                ResourceType.GROUP, g["group_id"], GROUP_OPERATIONS)
    by_id = {g["group_id"]: g for g in out["groups"]}
    out["groups"] = [by_id[g] if g in by_id else {
        "error_code": ErrorCode.group_authorization_failed, "group_id": g, "group_state": "",
        "protocol_type": "", "protocol_data": "", "members": []} for g in request.groups]
    return {"throttle_time": 0, **out}


@register(42, "DeleteGroups", 0, 2)
async def delete_groups(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    if _unavailable(ctx):
        return {"throttle_time": 0, "results": [
            {"group_id": g, "error_code": ErrorCode.coordinator_not_available}
            for g in request.groups_names]}
    denied = [g for g in request.groups_names if not _group_ok(ctx, g, AclOperation.DELETE)]
    names = [g for g in request.groups_names if g not in denied]
    shares = ctx.broker.shares
    # share groups (and groups with only share state left) are the share service's
    share_ids = [] if shares is None else [
        g for g in names if shares.coordinator.group(g) is not None or shares.group_offsets(g)]
    response = _plain(_service(ctx).call(
        lambda c: c.delete_groups([g for g in names if g not in share_ids])))
    by_id = {r["group_id"]: r for r in response["results"]}
    for g in share_ids:
        by_id[g] = {"group_id": g, "error_code": shares.delete_group(g)}
    for g in denied:
        by_id[g] = {"group_id": g, "error_code": ErrorCode.group_authorization_failed}
    return {"throttle_time": 0, **response,
            "results": [by_id[g] for g in request.groups_names if g in by_id]}
