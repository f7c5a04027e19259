"""SaslHandshake (17), SaslAuthenticate (36), DescribeUserScramCredentials (50) and
AlterUserScramCredentials (51).

The two SASL APIs are answered here only once a connection needs no authentication (a
``PLAINTEXT``/``SSL`` listener, or a SASL connection already authenticated): Kafka's
``KafkaApis.handleSaslHandshakeRequest`` answers ILLEGAL_SASL_STATE, and
``handleSaslAuthenticateRequest`` ILLEGAL_SASL_STATE "SaslAuthenticate request received after
successful authentication". Before authentication they go to
:class:`kafkalog.server.sasl.SaslAuthenticator` instead, and so does a SaslHandshake that starts a
KIP-368 re-authentication.

The SCRAM APIs manage the tree's :class:`~kafkalog.security.ScramCredentialStore` as Kafka's
controller (``ScramControlManager``) and metadata image (``ScramImage.describe``) do: what
``kafka-configs.sh --entity-type users --alter --add-config 'SCRAM-SHA-256=[...]'`` and
``Admin.alterUserScramCredentials``/``describeUserScramCredentials`` send. The client salts
and hashes the password (the request carries ``SaltedPassword``); only the derived keys are
stored. A change applies to the next authentication (connections already authenticated stay).

Versions: SaslHandshake 0-1, SaslAuthenticate 0-2, the SCRAM APIs 0 (Kafka 3.9).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...security.acls import CLUSTER_NAME, AclOperation, ResourceType
from ..api import AUTHORIZATION_MESSAGES, RequestContext, register
from ..protocol import ErrorCode

__all__ = ["sasl_handshake", "sasl_authenticate", "describe_user_scram_credentials",
           "alter_user_scram_credentials"]


@register(17, "SaslHandshake", 0, 1)
async def sasl_handshake(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    cfg = ctx.broker.config
    mechanisms = list(cfg.sasl_enabled_mechanisms) \
        if cfg.security_protocol.startswith("SASL_") else []
    return {"error_code": ErrorCode.illegal_sasl_state, "mechanisms": mechanisms}


@register(36, "SaslAuthenticate", 0, 2)
async def sasl_authenticate(ctx: RequestContext, request: Any) -> Mapping[str, Any]:
    return {"error_code": ErrorCode.illegal_sasl_state,
            "error_message": "SaslAuthenticate request received after successful "
                             "authentication",
            "auth_bytes": b"", "session_lifetime": 0}


@register(50, "DescribeUserScramCredentials", 0, 0)
async def describe_user_scram_credentials(ctx: RequestContext, request: Any
                                          ) -> Mapping[str, Any]:
    from ...security.scram_credentials import MECHANISM_TYPES

    if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
        # KafkaApis (4.x): getErrorResponse(CLUSTER_AUTHORIZATION_FAILED.exception): the
        # default message, at the top and in one (nameless) result per user asked
        message = AUTHORIZATION_MESSAGES[ErrorCode.cluster_authorization_failed]
        return {"throttle_time": 0, "error_code": ErrorCode.cluster_authorization_failed,
                "error_message": message, "results": [
                    {"user": "", "error_code": ErrorCode.cluster_authorization_failed,
                     "error_message": message, "credential_infos": []}
                    for _ in request.users or ()]}
    users = None if request.users is None else [u.name for u in request.users]
    results = ctx.broker.scram_credentials.describe(users)
    return {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None,
            "results": [{"user": r.user, "error_code": r.error_code,
                         "error_message": r.error_message,
                         "credential_infos": [{"mechanism": MECHANISM_TYPES[m],
                                               "iterations": i} for m, i in r.credentials]}
                        for r in results]}


@register(51, "AlterUserScramCredentials", 0, 0)
async def alter_user_scram_credentials(ctx: RequestContext, request: Any
                                       ) -> Mapping[str, Any]:
    if not ctx.authorize(AclOperation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME):
        # ControllerApis: AuthHelper.authorizeClusterOperation(request, ALTER); the error in
        # every user's result, users sorted (AlterUserScramCredentialsRequest.getErrorResponse)
        users = {u.name for u in (*request.deletions, *request.upsertions)}
        message = ctx.cluster_refused(AclOperation.ALTER)
        return {"throttle_time": 0, "results": [
            {"user": u, "error_code": ErrorCode.cluster_authorization_failed,
             "error_message": message} for u in sorted(users)]}
    results = ctx.broker.scram_credentials.alter(
        [(d.name, int(d.mechanism)) for d in request.deletions],
        [(u.name, int(u.mechanism), int(u.iterations), bytes(u.salt), bytes(u.salted_password))
         for u in request.upsertions])
    return {"throttle_time": 0,
            "results": [{"user": r.user, "error_code": r.error_code,
                         "error_message": r.error_message} for r in results]}
