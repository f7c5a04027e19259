"""KIP-932 share groups: ShareGroupHeartbeat (76), ShareGroupDescribe (77), ShareFetch (78) and
ShareAcknowledge (79).

The protocol side of ``KafkaApis.handleShareGroupHeartbeat``, ``handleShareGroupDescribe``,
``handleShareFetchRequest`` and ``handleShareAcknowledgeRequest`` (Kafka 4.1); membership is
:class:`kafkalog.groups.share.ShareGroupCoordinator`, records and sessions
:class:`kafkalog.server.share_service.ShareService` (see there for the rules).

* ShareFetch/ShareAcknowledge need a group id and a member id (``INVALID_REQUEST``); a topic id
  this node does not know answers ``UNKNOWN_TOPIC_ID`` for its partitions, a partition it does
  not hold ``UNKNOWN_TOPIC_OR_PARTITION``. A session error (``SHARE_SESSION_NOT_FOUND``,
  ``INVALID_SHARE_SESSION_EPOCH``, acknowledgements in a session-opening request) is the
  top-level error. The response lists, for a new session, every partition asked; for a
  continuing one, the partitions with records, an error or acknowledgement results (as Kafka's
  incremental share sessions). ``acquisition_lock_timeout_ms`` is the group's
  ``share.record.lock.duration.ms`` (else ``group.share.record.lock.duration.ms``).
  ``share_acquire_mode`` (v2) is served as batch-optimized; RENEW acknowledgements (v2) extend
  a record's lock.
* ShareGroupDescribe: an unknown group ``GROUP_ID_NOT_FOUND`` ("Group G not found."), a group of
  another type ``GROUP_ID_NOT_FOUND`` ("Group G is not a share group."); the assignor is
  ``simple``.

DescribeShareGroupOffsets (90), AlterShareGroupOffsets (91) and DeleteShareGroupOffsets (92)
live here too (offsets change only while the group has no members: ``NON_EMPTY_GROUP``);
DeleteGroups (42) of a share group goes to :meth:`ShareService.delete_group`
(handlers/groups.py).

Versions: ShareGroupHeartbeat 1, ShareGroupDescribe 1, ShareFetch 1-2, ShareAcknowledge 1-2
(KIP-932's v0 was the early-access protocol of Kafka 4.0, dropped in 4.1),
DescribeShareGroupOffsets 0-1, AlterShareGroupOffsets 0, DeleteShareGroupOffsets 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import KafkaLogError
from ...security.acls import AclOperation, ResourceType
from ..api import AUTHORIZATION_MESSAGES, ERROR_MESSAGES, RequestContext, register
from ..error_codes import error_code_for
from ..protocol import ErrorCode, millis
from ..share_service import FINAL_EPOCH, INITIAL_EPOCH, ShareService
from .consumer_groups import UNDESCRIBABLE_TOPICS, undescribable
from .metadata import _NOT_REQUESTED

__all__ = ["share_group_heartbeat", "share_group_describe", "share_fetch", "share_acknowledge",
           "describe_share_group_offsets", "alter_share_group_offsets",
           "delete_share_group_offsets"]

#: the operations of a group resource (READ, DESCRIBE, DELETE), all allowed without an authorizer
_GROUP_OPERATIONS = sum(1 << op for op in (3, 6, 8))


def _service(ctx: RequestContext) -> ShareService:
    return ctx.broker.shares


def _host(ctx: RequestContext) -> str:
    return "/" + ctx.peer.rsplit(":", 1)[0]


def _assignment(broker: Any, assignment: Mapping[str, list[int]]) -> dict[str, Any]:
    return {"topic_partitions": [{"topic_id": broker.topic_id(t), "partitions": ps}
                                 for t, ps in sorted(assignment.items())]}


@register(76, "ShareGroupHeartbeat", 1, 1)
async def share_group_heartbeat(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    broker = ctx.broker
    subscribed = (None if request.subscribed_topic_names is None
                  else list(request.subscribed_topic_names))
    # KafkaApis (4.1): READ on the group, DESCRIBE on each subscribed topic
    refused = (ErrorCode.group_authorization_failed
               if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, request.group_id)
               else ErrorCode.topic_authorization_failed
               if any(not ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, n)
                      for n in subscribed or ())
               else None)
    if refused is not None:
        return {"throttle_time": 0, "error_code": refused, "error_message": None,
                "member_id": None, "member_epoch": 0, "heartbeat_interval": 0,
                "assignment": None}
    r = _service(ctx).heartbeat(request.group_id, request.member_id, request.member_epoch,
                                subscribed, rack_id=request.rack_id,
                                client_id=ctx.client_id or "", client_host=_host(ctx))
    return {"throttle_time": 0, "error_code": r.error_code, "error_message": r.error_message,
            "member_id": r.member_id, "member_epoch": r.member_epoch,
            "heartbeat_interval": r.heartbeat_interval_ms,
            "assignment": None if r.assignment is None else _assignment(broker, r.assignment)}


@register(77, "ShareGroupDescribe", 1, 1)
async def share_group_describe(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    broker = ctx.broker
    service = _service(ctx)
    with_ops = bool(request.include_authorized_operations)
    groups = []
    for gid in request.group_ids:
        out: dict[str, Any] = {"error_code": ErrorCode.none, "error_message": None,
                               "group_id": gid, "group_state": "", "group_epoch": -1,
                               "assignment_epoch": -1, "assignor_name": "", "members": [],
                               "authorized_operations": _NOT_REQUESTED}
        if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, gid):
            groups.append({**out, "error_code": ErrorCode.group_authorization_failed})
            continue
        group = service.coordinator.group(gid)
        if group is None:
            other = broker.groups.group_type(gid) if broker.groups is not None else None
            message = (f"Group {gid} is not a share group." if other is not None
                       else f"Group {gid} not found.")
            groups.append({**out, "error_code": ErrorCode.group_id_not_found,
                           "error_message": message})
            continue
        groups.append({**out, "group_state": group.state, "group_epoch": group.group_epoch,
                       "assignment_epoch": group.assignment_epoch, "assignor_name": "simple",
                       "authorized_operations": ctx.authorized_operations(
                           ResourceType.GROUP, gid, _GROUP_OPERATIONS) if with_ops
                       else _NOT_REQUESTED,
                       "members": [{
                           "member_id": m.member_id, "rack_id": m.rack_id,
                           "member_epoch": m.member_epoch, "client_id": m.client_id,
                           "client_host": m.client_host,
                           "subscribed_topic_names": list(m.subscribed_topics),
                           "assignment": {"topic_partitions": [
                               {"topic_id": broker.topic_id(t), "topic_name": t,
                                "partitions": ps} for t, ps in sorted(m.assignment.items())]},
                       } for m in group.members.values()]})
    # KafkaApis (4.1+, KAFKA-18817): a group whose members are assigned a topic the client may
    # not DESCRIBE is answered TOPIC_AUTHORIZATION_FAILED without its members
    refused = undescribable(ctx, groups, lambda m: [
        tp["topic_name"] for tp in m["assignment"]["topic_partitions"]])
    groups = [g if g["group_id"] not in refused else {
        "error_code": ErrorCode.topic_authorization_failed,
        "error_message": UNDESCRIBABLE_TOPICS, "group_id": g["group_id"], "group_state": "",
        "group_epoch": 0, "assignment_epoch": 0, "assignor_name": "", "members": [],
        "authorized_operations": -(1 << 31)} for g in groups]
    return {"throttle_time": 0, "groups": groups}


# -- ShareFetch / ShareAcknowledge ----------------------------------------------------------------

def _resolve(ctx: RequestContext, topic_id: Any) -> str | None:
    return ctx.broker.topic_by_id(topic_id) if topic_id is not None else None


def _acks(p: Any) -> list[tuple[int, int, tuple[int, ...]]]:
    return [(b.first_offset, b.last_offset, tuple(b.acknowledge_types))
            for b in p.acknowledgement_batches]


def _top_error(ctx: RequestContext, code: int, message: str | None) -> dict[str, Any]:
    return {"throttle_time": 0, "error_code": code, "error_message": message,
            "acquisition_lock_timeout": 0, "responses": [], "node_endpoints": []}


def _partition_out(ctx: RequestContext, partition: int) -> dict[str, Any]:
    return {"partition_index": partition, "error_code": ErrorCode.none, "error_message": None,
            "acknowledge_error_code": ErrorCode.none, "acknowledge_error_message": None,
            "current_leader": {"leader_id": ctx.broker.config.node_id, "leader_epoch": 0},
            "records": b"", "acquired_records": []}


def _check_ids(request: Any) -> str | None:
    if not request.group_id:
        return "The group id in the request is empty."
    if not request.member_id:
        return "The member id in the request is empty."
    return None


@register(78, "ShareFetch", 1, 2)
async def share_fetch(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    broker = ctx.broker
    service = _service(ctx)
    bad = _check_ids(request)
    if bad is not None:
        return _top_error(ctx, ErrorCode.invalid_request, bad)
    group, member, epoch = request.group_id, request.member_id, request.share_session_epoch
    if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, group):
        return _top_error(ctx, ErrorCode.group_authorization_failed, None)
    wanted: list[tuple[str | None, Any, Any]] = []  # (topic, topic id, partition request)
    denied: list[tuple[Any, dict[str, Any]]] = []  # READ on each topic (KafkaApis)
    for t in request.topics:
        name = _resolve(ctx, t.topic_id)
        if name is not None and not ctx.authorize(AclOperation.READ, ResourceType.TOPIC, name):
            denied += [(t.topic_id, {**_partition_out(ctx, p.partition_index),
                                     "error_code": ErrorCode.topic_authorization_failed})
                       for p in t.partitions]
            continue
        for p in t.partitions:
            wanted.append((name, t.topic_id, p))
    if epoch == INITIAL_EPOCH and any(p.acknowledgement_batches for _n, _i, p in wanted):
        return _top_error(ctx, ErrorCode.invalid_request,
                          "Acknowledge data present in initial fetch request.")
    forget = [(name, q) for f in request.forgotten_topics_data
              if (name := _resolve(ctx, f.topic_id)) is not None for q in f.partitions]
    code, session = service.open_session(
        group, member, epoch, [(n, p.partition_index) for n, _i, p in wanted if n is not None],
        forget, ctx.peer)
    if session is None:
        return _top_error(ctx, code, None)
    lock_ms = service.configs.value(group, "share.record.lock.duration.ms")
    results: dict[tuple[str, int], dict[str, Any]] = {}
    ids: dict[str, Any] = {}
    # unknown topic ids and partitions, then acknowledgements
    unknown: list[tuple[Any, dict[str, Any]]] = []
    for name, tid, p in wanted:
        out = _partition_out(ctx, p.partition_index)
        if name is None:
            unknown.append((tid, {**out, "error_code": ErrorCode.unknown_topic_id}))
            continue
        ids[name] = tid
        if p.partition_index not in broker.partitions_of(name):
            results[(name, p.partition_index)] = {
                **out, "error_code": ErrorCode.unknown_topic_or_partition}
            session.partitions.pop((name, p.partition_index), None)
            continue
        results[(name, p.partition_index)] = out
        if p.acknowledgement_batches:
            ack_code, ack_msg = service.acknowledge(group, member, name, p.partition_index,
                                                    _acks(p))
            out["acknowledge_error_code"], out["acknowledge_error_message"] = ack_code, ack_msg
    if epoch != FINAL_EPOCH:
        await _fetch(ctx, service, session, request, results)
    else:
        service.close_session(session)
    if epoch != INITIAL_EPOCH:
        # a continuing session answers only what has news
        results = {k: v for k, v in results.items()
                   if v["acquired_records"] or v["error_code"] or v["acknowledge_error_code"]
                   or k in {(n, p.partition_index) for n, _i, p in wanted
                            if p.acknowledgement_batches}}
    responses: dict[str, list[dict[str, Any]]] = {}
    for (name, _p), out in results.items():
        responses.setdefault(name, []).append(out)
    return {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None,
            "acquisition_lock_timeout": lock_ms,
            "responses": [{"topic_id": ids.get(name) or broker.topic_id(name), "partitions": ps}
                          for name, ps in responses.items()]
            + [{"topic_id": tid, "partitions": [out]} for tid, out in unknown + denied],
            "node_endpoints": []}


async def _fetch(ctx: RequestContext, service: ShareService, session: Any, request: Any,
                 results: dict[tuple[str, int], dict[str, Any]]) -> None:
    """Acquire over the session's partitions; wait once for data when nothing was acquired."""
    broker = ctx.broker
    max_wait_ms = max(0, millis(request.max_wait))
    for attempt in (0, 1):
        budget = max(int(request.max_records), 1)
        bytes_left = max(int(request.max_bytes), 1)
        got = False
        for topic, p in list(session.partitions):
            if budget <= 0 or bytes_left <= 0:
                break
            if p not in broker.partitions_of(topic):
                continue
            out = results.get((topic, p))
            if out is None:
                out = results[(topic, p)] = _partition_out(ctx, p)
            try:
                data, acquired = service.acquire(session.group_id, session.member_id, topic, p,
                                                 budget, bytes_left)
            except (KafkaLogError, OSError) as e:
                out["error_code"], out["error_message"] = error_code_for(e), str(e)
                continue
            if acquired:
                got = True
                out["records"] = data
                out["acquired_records"] = [{"first_offset": f, "last_offset": last,
                                            "delivery_count": c} for f, last, c in acquired]
                budget -= sum(last - f + 1 for f, last, _c in acquired)
                bytes_left -= len(data)
        if got or attempt == 1 or max_wait_ms == 0 or not session.partitions:
            return
        await broker.wait_for_change(list(session.partitions), max_wait_ms / 1000)


@register(79, "ShareAcknowledge", 1, 2)
async def share_acknowledge(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    broker = ctx.broker
    service = _service(ctx)
    bad = _check_ids(request)
    if bad is not None:
        return _top_error(ctx, ErrorCode.invalid_request, bad)
    epoch = request.share_session_epoch
    if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, request.group_id):
        return _top_error(ctx, ErrorCode.group_authorization_failed, None)
    if epoch == INITIAL_EPOCH:
        return _top_error(ctx, ErrorCode.invalid_share_session_epoch,
                          "A share session cannot be opened by ShareAcknowledge.")
    code, session = service.open_session(request.group_id, request.member_id, epoch, [], [],
                                         ctx.peer)
    if session is None:
        return _top_error(ctx, code, None)
    responses = []
    for t in request.topics:
        name = _resolve(ctx, t.topic_id)
        parts = []
        for p in t.partitions:
            out = {"partition_index": p.partition_index, "error_code": ErrorCode.none,
                   "error_message": None,
                   "current_leader": {"leader_id": broker.config.node_id, "leader_epoch": 0}}
            if name is None:
                out["error_code"] = ErrorCode.unknown_topic_id
            elif not ctx.authorize(AclOperation.READ, ResourceType.TOPIC, name):
                out["error_code"] = ErrorCode.topic_authorization_failed
            else:
                out["error_code"], out["error_message"] = service.acknowledge(
                    request.group_id, request.member_id, name, p.partition_index, _acks(p))
            parts.append(out)
        responses.append({"topic_id": t.topic_id, "partitions": parts})
    if epoch == FINAL_EPOCH:
        service.close_session(session)
    return {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None,
            "acquisition_lock_timeout": service.configs.value(
                request.group_id, "share.record.lock.duration.ms"),
            "responses": responses, "node_endpoints": []}


@register(90, "DescribeShareGroupOffsets", 0, 1)
async def describe_share_group_offsets(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    """DescribeShareGroupOffsets (``kafka-share-groups.sh --describe``): per group, the start
    offset of each partition it has state for (all of them for null topics; -1 for a partition
    asked without state), its leader epoch, and from v1 its lag (KIP-1226: high watermark -
    start offset - the records acknowledged or archived above it). A group with neither members
    nor state: ``GROUP_ID_NOT_FOUND``; a topic not held: ``UNKNOWN_TOPIC_OR_PARTITION`` for its
    partitions."""
    broker = ctx.broker
    service = _service(ctx)
    groups = []
    for g in request.groups:
        if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, g.group_id):
            groups.append({"group_id": g.group_id, "topics": [],
                           "error_code": ErrorCode.group_authorization_failed,
                           "error_message": None})
            continue
        offsets = service.group_offsets(g.group_id)
        if not offsets and service.coordinator.group(g.group_id) is None:
            groups.append({"group_id": g.group_id, "topics": [],
                           "error_code": ErrorCode.group_id_not_found,
                           "error_message": f"Group {g.group_id} not found."})
            continue
        wanted: dict[str, list[int]] = {}
        if g.topics is None:
            for t, p in sorted(offsets):
                wanted.setdefault(t, []).append(p)
        else:
            for t in g.topics:
                wanted.setdefault(t.topic_name, []).extend(t.partitions)
        topics = []
        for t, parts in wanted.items():
            if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, t):
                if g.topics is not None:  # (all-topics requests leave it out)
                    topics.append({"topic_name": t, "topic_id": None, "partitions": [
                        {"partition_index": p, "start_offset": -1, "leader_epoch": -1,
                         "lag": -1, "error_code": ErrorCode.topic_authorization_failed,
                         "error_message": None} for p in parts]})
                continue
            held = set(broker.partitions_of(t))
            out = []
            for p in parts:
                row = {"partition_index": p, "start_offset": -1, "leader_epoch": -1, "lag": -1,
                       "error_code": ErrorCode.none, "error_message": None}
                if p not in held:
                    row["error_code"] = ErrorCode.unknown_topic_or_partition
                elif (t, p) in offsets:
                    start, done = offsets[(t, p)]
                    row.update(start_offset=start, leader_epoch=broker.leader_epoch(t, p),
                               lag=broker.high_watermark(t, p) - start - done)
                out.append(row)
            topics.append({"topic_name": t, "topic_id": broker.topic_id(t) if held else None,
                           "partitions": out})
        groups.append({"group_id": g.group_id, "topics": topics, "error_code": ErrorCode.none,
                       "error_message": None})
    return {"throttle_time": 0, "groups": groups}


#: Kafka's ``Errors`` default messages (what ``getErrorResponse(Errors)`` and
#: ``ApiError(Errors)`` put in a response)
_GROUP_AUTHORIZATION_FAILED = AUTHORIZATION_MESSAGES[ErrorCode.group_authorization_failed]
_TOPIC_AUTHORIZATION_FAILED = AUTHORIZATION_MESSAGES[ErrorCode.topic_authorization_failed]
_UNKNOWN_TOPIC_OR_PARTITION = ERROR_MESSAGES[ErrorCode.unknown_topic_or_partition]


def _group_check(ctx: RequestContext, group_id: str) -> tuple[int, str | None]:
    """Offsets of a share group change only while it has no members (``NON_EMPTY_GROUP``), and
    not for a group of another type (``GROUP_ID_NOT_FOUND``)."""
    broker = ctx.broker
    group = _service(ctx).coordinator.group(group_id)
    if group is not None and group.members:
        return ErrorCode.non_empty_group, "The group has active members."
    if group is None and broker.groups is not None and broker.groups.group_type(group_id):
        return ErrorCode.group_id_not_found, f"Group {group_id} is not a share group."
    return ErrorCode.none, None


@register(91, "AlterShareGroupOffsets", 0, 0)
async def alter_share_group_offsets(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    """AlterShareGroupOffsets (``kafka-share-groups.sh --reset-offsets --execute``): each
    partition's start offset set (:meth:`ShareService.alter_offset`), the group empty.

    ``KafkaApis.handleAlterShareGroupOffsetsRequest`` (Kafka 4.2): READ on the group (else
    the top-level ``GROUP_AUTHORIZATION_FAILED``); per topic READ on it (else
    ``TOPIC_AUTHORIZATION_FAILED`` for each of its partitions), then the topic must exist
    (else ``UNKNOWN_TOPIC_OR_PARTITION``); those partitions come first in the response, with
    Kafka's default messages, and the coordinator alters the rest (a group error from it is
    the whole answer)."""
    broker = ctx.broker
    if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, request.group_id):
        return {"throttle_time": 0, "error_code": ErrorCode.group_authorization_failed,
                "error_message": _GROUP_AUTHORIZATION_FAILED, "responses": []}
    refused: dict[str, dict[str, Any]] = {}
    authorized = []
    for t in request.topics:
        name = t.topic_name
        exists = bool(broker.partitions_of(name))
        if not ctx.authorize(AclOperation.READ, ResourceType.TOPIC, name):
            code, message = ErrorCode.topic_authorization_failed, _TOPIC_AUTHORIZATION_FAILED
        elif not exists:
            code, message = ErrorCode.unknown_topic_or_partition, _UNKNOWN_TOPIC_OR_PARTITION
        else:
            authorized.append(t)
            continue
        # (AlterShareGroupOffsetsResponse.Builder: one entry per topic name, with its id when
        # the topic exists)
        out = refused.setdefault(name, {"topic_name": name,
                                        "topic_id": broker.topic_id(name) if exists else None,
                                        "partitions": []})
        out["partitions"] += [{"partition_index": p.partition_index, "error_code": code,
                               "error_message": message} for p in t.partitions]
    code, message = _group_check(ctx, request.group_id)
    if code != ErrorCode.none:
        return {"throttle_time": 0, "error_code": code, "error_message": message,
                "responses": []}
    responses = refused
    for t in authorized:
        parts = []
        for p in t.partitions:
            c, m = _service(ctx).alter_offset(request.group_id, t.topic_name,
                                              p.partition_index, p.start_offset)
            parts.append({"partition_index": p.partition_index, "error_code": c,
                          "error_message": m})
        out = responses.setdefault(t.topic_name, {
            "topic_name": t.topic_name, "topic_id": broker.topic_id(t.topic_name),
            "partitions": []})
        out["partitions"] += parts
    return {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None,
            "responses": list(responses.values())}


@register(92, "DeleteShareGroupOffsets", 0, 0)
async def delete_share_group_offsets(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    """DeleteShareGroupOffsets (``kafka-share-groups.sh --delete-offsets``): the group's state
    of each topic named goes, the group empty; a topic not held ``UNKNOWN_TOPIC_OR_PARTITION``.

    ``KafkaApis.handleDeleteShareGroupOffsetsRequest`` (Kafka 4.2): DELETE on the group (else
    the top-level ``GROUP_AUTHORIZATION_FAILED``); per topic READ on it (else
    ``TOPIC_AUTHORIZATION_FAILED`` with Kafka's message, listed first); the coordinator deletes
    the rest (a group error from it is the whole answer)."""
    broker = ctx.broker
    if not ctx.authorize(AclOperation.DELETE, ResourceType.GROUP, request.group_id):
        return {"throttle_time": 0, "error_code": ErrorCode.group_authorization_failed,
                "error_message": _GROUP_AUTHORIZATION_FAILED, "responses": []}
    responses = []
    authorized = []
    for t in request.topics:
        if not ctx.authorize(AclOperation.READ, ResourceType.TOPIC, t.topic_name):
            responses.append({"topic_name": t.topic_name, "topic_id": None,
                              "error_code": ErrorCode.topic_authorization_failed,
                              "error_message": _TOPIC_AUTHORIZATION_FAILED})
        else:
            authorized.append(t)
    code, message = _group_check(ctx, request.group_id)
    if code != ErrorCode.none:
        return {"throttle_time": 0, "error_code": code, "error_message": message,
                "responses": []}
    for t in authorized:
        if not broker.partitions_of(t.topic_name):
            responses.append({"topic_name": t.topic_name, "topic_id": None,
                              "error_code": ErrorCode.unknown_topic_or_partition,
                              "error_message": None})
            continue
        _service(ctx).delete_offsets(request.group_id, t.topic_name)
        responses.append({"topic_name": t.topic_name,
                          "topic_id": broker.topic_id(t.topic_name),
                          "error_code": ErrorCode.none, "error_message": None})
    return {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None,
            "responses": responses}
