"""FindCoordinator (key 10): this node coordinates every group and transactional id.

Kafka's ``KafkaApis.handleFindCoordinatorRequest`` (3.9): key type 0 (group) or 1
(transaction), one key (v0-3) or a batch (v4+); the internal topic of the coordinator is created
when missing (``__consumer_offsets`` / ``__transaction_state``, as Kafka's
``AutoTopicCreationManager`` does on this request), and the answer is the leader of the key's
partition: this node. A transactional id must not be empty (``INVALID_REQUEST``); an unknown key
type is ``INVALID_REQUEST``; a group key while no group coordinator runs answers
``COORDINATOR_NOT_AVAILABLE``.

Versions 0-5 (Kafka 3.9: 0-6; v6 adds share groups).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from ...errors import KafkaLogError
from ...security.acls import AclOperation, ResourceType
from ..api import RequestContext, register
from ..broker import OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC
from ..protocol import ErrorCode

__all__ = ["handle"]

GROUP = 0
TRANSACTION = 1

logger = logging.getLogger("kafkalog.server")


def _internal_topic(ctx: RequestContext, topic: str) -> tuple[int, str | None]:
    """The coordinator's topic, created on first use; a creation the log dir refuses (a user
    topic colliding with its name) leaves no coordinator: COORDINATOR_NOT_AVAILABLE, as from a
    broker whose controller refused the internal topic."""
    try:
        ctx.broker.ensure_internal_topic(topic)
    except KafkaLogError as e:
        logger.error("%s: cannot create internal topic %s: %s", ctx.peer, topic, e)
        return ErrorCode.coordinator_not_available, f"The coordinator is not available ({e})"
    return ErrorCode.none, None


def _find(ctx: RequestContext, key: str, key_type: int) -> tuple[int, str | None]:
    broker = ctx.broker
    # KafkaApis: DESCRIBE on the group / the transactional id
    if key_type == GROUP and not ctx.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, key):
        return ErrorCode.group_authorization_failed, None
    if key_type == TRANSACTION and not ctx.authorize(AclOperation.DESCRIBE,
                                                     ResourceType.TRANSACTIONAL_ID, key):
        return ErrorCode.transactional_id_authorization_failed, None
    if key_type == GROUP:
        if broker.groups is None:
            return ErrorCode.coordinator_not_available, "no group coordinator"
        return _internal_topic(ctx, OFFSETS_TOPIC)
    if key_type == TRANSACTION:
        if not key:
            return ErrorCode.invalid_request, "transactional id must not be empty"
        if broker.transactions is None:
            return ErrorCode.coordinator_not_available, "no transaction coordinator"
        return _internal_topic(ctx, TRANSACTION_STATE_TOPIC)
    return ErrorCode.invalid_request, f"unknown coordinator key type {key_type}"


@register(10, "FindCoordinator", 0, 5)
async def handle(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    broker = ctx.broker
    node = broker.config.node_id
    host, port = ctx.endpoint or (broker.host, broker.port)
    key_type = getattr(request, "key_type", GROUP)
    if ctx.api_version >= 4:
        coordinators = []
        for key in request.coordinator_keys:
            code, message = _find(ctx, key, key_type)
            ok = code == ErrorCode.none
            coordinators.append({"key": key, "node_id": node if ok else -1,
                                 "host": host if ok else "", "port": port if ok else -1,
                                 "error_code": code, "error_message": message})
        return {"throttle_time": 0, "coordinators": coordinators}
    code, message = _find(ctx, request.key, key_type)
    ok = code == ErrorCode.none
    return {"throttle_time": 0, "error_code": code, "error_message": message,
            "node_id": node if ok else -1, "host": host if ok else "",
            "port": port if ok else -1}
