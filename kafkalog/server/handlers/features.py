"""UpdateFeatures (key 57): ``kafka-features.sh upgrade|downgrade|disable``,
``Admin.updateFeatures``; the features themselves are :mod:`kafkalog.server.feature_store`.

As Kafka 4.2's controller answers (``ControllerApis.handleUpdateFeatures``,
``QuorumController.updateFeatures``): without ALTER on the cluster, ``CLUSTER_AUTHORIZATION_FAILED``
with ``AuthHelper``'s message and no results. Otherwise the updates are checked together
(:meth:`kafkalog.cluster.features.FeatureControl.update`); the first error fails them all:
``INVALID_UPDATE_VERSION``, "The update failed for all features since the following feature had
an error: <reason>", no results. On success the levels are finalized (unless ``validate_only``,
v1+) and v0-1 list each feature with no error; v2 lists none. The upgrade type is the request's
``UpgradeType`` (v1+, default UPGRADE): Kafka's controller reads that field even at v0, whose
``AllowDowngrade`` it does not look at, so a v0 downgrade is refused as an upgrade would be.
Versions 0-2.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...cluster.features import UPGRADE
from ...security.acls import CLUSTER_NAME, AclOperation, ResourceType
from ..api import RequestContext, register
from ..protocol import ErrorCode

__all__ = ["update_features"]


@register(57, "UpdateFeatures", 0, 2)
async def update_features(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    """UpdateFeatures (key 57), as the module docstring says."""
    if not ctx.authorize(AclOperation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME):
        return {"throttle_time": 0, "error_code": ErrorCode.cluster_authorization_failed,
                "error_message": ctx.cluster_refused(AclOperation.ALTER), "results": []}
    updates = [(u.feature, u.max_version_level, getattr(u, "upgrade_type", UPGRADE))
               for u in request.feature_updates]
    code, message = ctx.broker.features.update(
        updates, validate_only=bool(getattr(request, "validate_only", False)))
    if code:
        return {"throttle_time": 0, "error_code": code, "error_message":
                "The update failed for all features since the following feature had an "
                f"error: {message}", "results": []}
    results = [] if ctx.api_version > 1 else [
        {"feature": u.feature, "error_code": ErrorCode.none, "error_message": None}
        for u in request.feature_updates]
    return {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None,
            "results": results}
