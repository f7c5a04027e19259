"""SASL/OAUTHBEARER on the server: Kafka's ``OAuthBearerSaslServer`` with its default (unsecured)
token validator, ``OAuthBearerUnsecuredValidatorCallbackHandler``.

The client's one message (RFC 7628) carries a bearer token; the token is an *unsecured* JWS (no
signature, ``"alg":"none"``) whose claims name the principal (``sub``), its scope, and its
expiry (``exp``). Kafka's broker uses this validator unless another is configured: it is meant
for development, as here. A valid token completes the exchange; its expiry becomes the
credential lifetime, so the session ends with the token (KIP-368: the client re-authenticates
with a fresh one). An invalid token is answered, as in Kafka, with a JSON error as the server's
challenge (``{"status":"invalid_token"}``); the client's ``%x01`` reply then fails the exchange
with that JSON as the error message. The parsing and checks are
:mod:`kafkalog.security.oauthbearer`.

Options (the JAAS ``OAuthBearerLoginModule`` entry, Kafka's names):
``unsecuredValidatorPrincipalClaimName`` (``sub``), ``unsecuredValidatorScopeClaimName``
(``scope``), ``unsecuredValidatorRequiredScope`` (space separated), and
``unsecuredValidatorAllowableClockSkewMs`` (0). With Kafka's secured handler configured
(``sasl.server.callback.handler.class``), signed tokens are checked against a JWKS instead
(KIP-768, :mod:`kafkalog.security.oauthbearer_jwt`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from ..security.oauthbearer import (
    ClientInitialResponse,
    OAuthBearerError,
    TokenValidationError,
    ValidatorOptions,
    authorization_id_mismatch,
    validate_unsecured_token,
)
from .sasl import SaslFailure

__all__ = ["OAuthBearerServer"]

logger = logging.getLogger(__name__)

_CONTROL_A = b"\x01"


class OAuthBearerServer:
    """One OAUTHBEARER exchange (see the module docstring)."""

    def __init__(self, options: Mapping[str, str] | None, wall_clock_ms: Callable[[], int],
                 what: str = "authentication", validator: Any = None) -> None:
        self.options = ValidatorOptions.from_jaas_options(options or {})
        #: the secured validator (:class:`~kafkalog.security.oauthbearer_jwt.JwtValidator`);
        #: None: Kafka's unsecured one, with the JAAS options
        self.validator = validator
        self._now_ms = wall_clock_ms
        self.what = what
        self.complete = False
        self.principal: str | None = None
        #: the token's expiry (ms since the epoch): the session's credential lifetime
        self.credential_expiry_ms: int | None = None
        self.extensions: dict[str, str] = {}
        self._error: str | None = None

    def _generic(self, detail: str) -> SaslFailure:
        return SaslFailure(f"Authentication failed during {self.what} due to invalid "
                           "credentials with SASL mechanism OAUTHBEARER", detail)

    def evaluate(self, response: bytes) -> bytes:
        if response == _CONTROL_A and self._error is not None:
            # the client's acknowledgement of our error challenge: the exchange fails with it
            raise SaslFailure(self._error, f"invalid token: {self._error}")
        self._error = None
        try:
            message = ClientInitialResponse.parse(response)
        except OAuthBearerError as e:
            raise self._generic(str(e)) from None
        try:
            if self.validator is not None:
                token = self.validator.validate(message.token, self._now_ms())
            else:
                token = validate_unsecured_token(message.token, self.options, self._now_ms())
        except TokenValidationError as e:
            if self.validator is not None:
                # OAuthBearerValidatorCallbackHandler: the client only learns invalid_token
                logger.info("OAUTHBEARER token refused: %s", e.description)
            self._error = e.json_error()
            return self._error.encode()
        mismatch = authorization_id_mismatch(message.authorization_id, token.principal_name)
        if mismatch is not None:
            raise SaslFailure(mismatch)
        self.extensions = dict(message.extensions)  # (the unsecured validator takes them all)
        self.principal = token.principal_name
        self.credential_expiry_ms = token.lifetime_ms
        self.complete = True
        return b""
