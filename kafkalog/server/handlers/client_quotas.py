"""DescribeClientQuotas (48) and AlterClientQuotas (49): the tree's client quotas.

What ``kafka-configs.sh --bootstrap-server ... --entity-type users|clients|ips`` and
``Admin.describeClientQuotas``/``alterClientQuotas`` send. Answered as Kafka 4.1.1 answers them:

* Describe: ``KafkaApis.handleDescribeClientQuotasRequest`` (DESCRIBE_CONFIGS on the cluster,
  else CLUSTER_AUTHORIZATION_FAILED) over ``ClientQuotasImage.describe``: a filter it refuses
  answers the error and its message with no entries.
* Alter: ``ControllerApis.handleAlterClientQuotas`` (ALTER_CONFIGS on the cluster, else every
  entry fails with CLUSTER_AUTHORIZATION_FAILED) over
  ``ClientQuotaControlManager.alterClientQuotas``: per-entity results; ``validate_only``
  checks without writing. A change applies to the next produce or fetch
  (:mod:`kafkalog.server.client_quotas`).

Versions 0-1 (Kafka 4.1).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...quotas import QuotaRequestError
from ...security.acls import CLUSTER_NAME, AclOperation, ResourceType
from ..api import AUTHORIZATION_MESSAGES, RequestContext, register
from ..protocol import ErrorCode

__all__ = ["describe_client_quotas", "alter_client_quotas"]


def _entity_data(entity: dict) -> list[dict[str, Any]]:
    return [{"entity_type": t, "entity_name": n} for t, n in entity.items()]


@register(48, "DescribeClientQuotas", 0, 1)
async def describe_client_quotas(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    if not ctx.authorize(AclOperation.DESCRIBE_CONFIGS, ResourceType.CLUSTER, CLUSTER_NAME):
        code = ErrorCode.cluster_authorization_failed
        return {"throttle_time": 0, "error_code": code,
                "error_message": AUTHORIZATION_MESSAGES[code], "entries": None}
    quotas = ctx.broker.client_quotas
    quotas.refresh()
    try:
        found = quotas.store.describe(
            [(c.entity_type, int(c.match_type), c.match) for c in request.components],
            bool(request.strict))
    except QuotaRequestError as e:
        return {"throttle_time": 0, "error_code": e.code, "error_message": e.message,
                "entries": None}
    return {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None,
            "entries": [{"entity": _entity_data(entity),
                         "values": [{"key": k, "value": v} for k, v in values.items()]}
                        for entity, values in found]}


@register(49, "AlterClientQuotas", 0, 1)
async def alter_client_quotas(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    # AlterClientQuotasRequest.entries(): each entity as a map (a type named twice: the last)
    alterations = [({e.entity_type: e.entity_name for e in entry.entity},
                    [(op.key, float(op.value), bool(op.remove)) for op in entry.ops])
                   for entry in request.entries]
    if not ctx.authorize(AclOperation.ALTER_CONFIGS, ResourceType.CLUSTER, CLUSTER_NAME):
        code = ErrorCode.cluster_authorization_failed
        return {"throttle_time": 0, "entries": [
            {"error_code": code, "error_message": AUTHORIZATION_MESSAGES[code],
             "entity": _entity_data(entity)} for entity, _ in alterations]}
    quotas = ctx.broker.client_quotas
    quotas.refresh()
    results = quotas.store.alter(alterations, validate_only=bool(request.validate_only))
    if not request.validate_only:
        quotas.altered()
    return {"throttle_time": 0, "entries": [
        {"error_code": code, "error_message": message, "entity": _entity_data(entity)}
        for entity, code, message in results]}
