"""DescribeAcls (29), CreateAcls (30) and DeleteAcls (31): the ACLs of the tree
(:class:`kafkalog.security.acls.AclStore`), as Kafka's ``AclApis`` (3.9) serves them.

* Without an authorizer (``authorizer.class.name`` unset) each answers SECURITY_DISABLED: "No
  Authorizer is configured on the broker" (describe), "No Authorizer is configured." (create,
  delete).
* Describe needs DESCRIBE on the cluster, create and delete ALTER: otherwise the whole request
  fails with CLUSTER_AUTHORIZATION_FAILED (``authorizeClusterOperation``).
* Create refuses a CLUSTER resource not named ``kafka-cluster`` and an empty resource name
  (INVALID_REQUEST, Kafka's texts), then the store's validation (``AclControlManager``); a
  binding already present succeeds. Delete removes, per filter, the bindings it matches.
* Describe groups the matching bindings by resource pattern.

The authorizer is rebuilt after every change, so the next request is decided by the new ACLs.

Versions 1-3 (Kafka 3.9's KRaft broker; kio has no v0).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...security.acls import (
    CLUSTER_NAME,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)
from ..api import RequestContext, register
from ..protocol import ErrorCode

__all__ = ["describe_acls", "create_acls", "delete_acls"]


def _filter(f: Any) -> AclBindingFilter:
    return AclBindingFilter(
        resource_type=ResourceType(int(f.resource_type_filter)),
        resource_name=f.resource_name_filter,
        pattern_type=PatternType(int(getattr(f, "pattern_type_filter", PatternType.LITERAL))),
        principal=f.principal_filter, host=f.host_filter,
        operation=AclOperation(int(f.operation)),
        permission_type=AclPermissionType(int(f.permission_type)))


@register(29, "DescribeAcls", 1, 3)
async def describe_acls(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    broker = ctx.broker
    if broker.authorizer is None:
        return {"throttle_time": 0, "error_code": ErrorCode.security_disabled,
                "error_message": "No Authorizer is configured on the broker", "resources": []}
    if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
        # AclApis: AuthHelper.authorizeClusterOperation(request, DESCRIBE) (Kafka 4.1+'s message)
        return {"throttle_time": 0, "error_code": ErrorCode.cluster_authorization_failed,
                "error_message": ctx.cluster_refused(AclOperation.DESCRIBE), "resources": []}
    try:
        flt = _filter(request)
    except ValueError as e:  # a code outside the enums
        return {"throttle_time": 0, "error_code": ErrorCode.invalid_request,
                "error_message": str(e), "resources": []}
    groups: dict[tuple[int, str, int], list[AclBinding]] = {}
    for b in broker.acls.describe(flt):
        groups.setdefault((int(b.resource_type), b.resource_name, int(b.pattern_type)),
                          []).append(b)
    return {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None,
            "resources": [{"resource_type": rt, "resource_name": name, "pattern_type": pt,
                           "acls": [{"principal": b.principal, "host": b.host,
                                     "operation": int(b.operation),
                                     "permission_type": int(b.permission_type)}
                                    for b in bindings]}
                          for (rt, name, pt), bindings in groups.items()]}


@register(30, "CreateAcls", 1, 3)
async def create_acls(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    broker = ctx.broker
    n = len(request.creations)

    def all_failed(code: int, message: str) -> Mapping[str, Any]:
        return {"throttle_time": 0,
                "results": [{"error_code": code, "error_message": message}] * n}

    if broker.authorizer is None:
        return all_failed(ErrorCode.security_disabled, "No Authorizer is configured.")
    if not ctx.authorize(AclOperation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME):
        # AclApis: AuthHelper.authorizeClusterOperation(request, ALTER) (Kafka 4.1+'s message)
        return all_failed(ErrorCode.cluster_authorization_failed,
                          ctx.cluster_refused(AclOperation.ALTER))
    results: list[dict[str, Any] | None] = [None] * n
    valid: list[tuple[int, AclBinding]] = []
    for i, c in enumerate(request.creations):
        try:
            b = AclBinding(
                resource_type=ResourceType(int(c.resource_type)), resource_name=c.resource_name,
                pattern_type=PatternType(int(getattr(c, "resource_pattern_type",
                                                     PatternType.LITERAL))),
                principal=c.principal, host=c.host, operation=AclOperation(int(c.operation)),
                permission_type=AclPermissionType(int(c.permission_type)))
        except ValueError as e:
            results[i] = {"error_code": ErrorCode.invalid_request, "error_message": str(e)}
            continue
        if b.resource_type == ResourceType.CLUSTER and b.resource_name != CLUSTER_NAME:
            results[i] = {"error_code": ErrorCode.invalid_request,
                          "error_message": "The only valid name for the CLUSTER resource is "
                                           + CLUSTER_NAME}
        elif not b.resource_name:
            results[i] = {"error_code": ErrorCode.invalid_request,
                          "error_message": "Invalid empty resource name"}
        else:
            valid.append((i, b))
    if valid:
        errors = broker.acls.create([b for _, b in valid])
        for (i, _), err in zip(valid, errors):
            results[i] = ({"error_code": ErrorCode.none, "error_message": None} if err is None
                          else {"error_code": err.error_code, "error_message": err.message})
        broker.acls_changed()
    return {"throttle_time": 0, "results": results}


@register(31, "DeleteAcls", 1, 3)
async def delete_acls(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    broker = ctx.broker
    n = len(request.filters)

    def all_failed(code: int, message: str) -> Mapping[str, Any]:
        return {"throttle_time": 0, "filter_results": [
            {"error_code": code, "error_message": message, "matching_acls": []}] * n}

    if broker.authorizer is None:
        return all_failed(ErrorCode.security_disabled, "No Authorizer is configured.")
    if not ctx.authorize(AclOperation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME):
        # AclApis: AuthHelper.authorizeClusterOperation(request, ALTER) (Kafka 4.1+'s message)
        return all_failed(ErrorCode.cluster_authorization_failed,
                          ctx.cluster_refused(AclOperation.ALTER))
    filters: list[AclBindingFilter | None] = []
    bad: dict[int, str] = {}
    for i, f in enumerate(request.filters):
        try:
            filters.append(_filter(f))
        except ValueError as e:
            filters.append(None)
            bad[i] = str(e)
    outcome = broker.acls.delete([f for f in filters if f is not None])
    broker.acls_changed()
    results = []
    it = iter(outcome)
    for i, f in enumerate(filters):
        if f is None:
            results.append({"error_code": ErrorCode.invalid_request, "error_message": bad[i],
                            "matching_acls": []})
            continue
        err, removed = next(it)
        if err is not None:
            results.append({"error_code": err.error_code, "error_message": err.message,
                            "matching_acls": []})
            continue
        results.append({"error_code": ErrorCode.none, "error_message": None, "matching_acls": [
            {"error_code": ErrorCode.none, "error_message": None,
             "resource_type": int(b.resource_type), "resource_name": b.resource_name,
             "pattern_type": int(b.pattern_type), "principal": b.principal, "host": b.host,
             "operation": int(b.operation), "permission_type": int(b.permission_type)}
            for b in removed]})
    return {"throttle_time": 0, "filter_results": results}
