"""ApiVersions (key 18): the versions of every API served.

Kafka's ``ApiVersionsManager``/``KafkaApis.handleApiVersionsRequest`` (3.9): the response lists
each API with the versions this server accepts (:data:`kafkalog.server.api.APIS`). A request at a
version above the supported range is answered by the connection (not here) with a v0 response
carrying ``UNSUPPORTED_VERSION`` and the same list, so that the client can retry with a version
both sides know (RequestContext.isUnsupportedApiVersionsRequest). From v3 the cluster's supported
and finalized features (:mod:`kafkalog.server.feature_store`). Versions 0-4 (Kafka 3.9+).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..api import APIS, RequestContext, register
from ..protocol import ErrorCode

__all__ = ["api_versions_body"]


def api_versions_body(error_code: int = 0, features: Any = None,
                      version: int = 0) -> dict[str, Any]:
    """The response as plain values (also used for unsupported ApiVersions requests).

    ``features``: the broker's :class:`~kafkalog.server.feature_store.FeatureStore` (v3+ carry
    the supported and finalized features, ``ApiVersionsResponse.Builder``: below v4 a supported
    feature whose minimum is 0 is left out, KAFKA-17492; a finalized level 0 never appears)."""
    body: dict[str, Any] = {
        "error_code": error_code,
        "api_keys": [{"api_key": a.key, "min_version": a.min_version,
                      "max_version": a.max_version} for a in sorted(APIS.values(),
                                                                      key=lambda a: a.key)],
        "throttle_time": 0,
    }
    if features is not None:
        control = features.control
        body["supported_features"] = [
            {"name": name, "min_version": lo, "max_version": hi}
            for name, (lo, hi) in control.supported().items() if not (version < 4 and lo == 0)]
        body["finalized_features_epoch"] = control.epoch
        body["finalized_features"] = [
            {"name": name, "max_version_level": level, "min_version_level": level}
            for name, level in control.finalized().items()]
        body["zk_migration_ready"] = False
    return body


@register(18, "ApiVersions", 0, 4)
async def handle(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    # KIP-511: v3+ carries the client's software name/version, which must match
    # [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])? (ApiVersionsRequest.isValid); Kafka answers
    # INVALID_REQUEST otherwise
    name = getattr(request, "client_software_name", None)
    version = getattr(request, "client_software_version", None)
    if name is not None and not (_valid_software(name) and _valid_software(version or "")):
        return {**api_versions_body(ErrorCode.invalid_request)}
    return api_versions_body(features=ctx.broker.features, version=ctx.api_version)


def _valid_software(text: str) -> bool:
    import re

    return re.fullmatch(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?", text) is not None
