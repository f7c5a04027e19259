"""SASL authentication of one connection: a port of Kafka's ``SaslServerAuthenticator`` with the
PLAIN (``PlainSaslServer``) and SCRAM-SHA-256/512 (``ScramSaslServer``) mechanisms.

On a ``SASL_PLAINTEXT`` or ``SASL_SSL`` listener a connection must authenticate before any other
request; the exchange is Kafka's (KIP-43, KIP-152):

1. optionally ``ApiVersions`` (answered as on any connection, once, before the handshake);
2. ``SaslHandshake`` naming a mechanism: an enabled one is answered NONE with the enabled list;
   another UNSUPPORTED_SASL_MECHANISM (then the connection closes);
3. the mechanism's tokens: wrapped in ``SaslAuthenticate`` requests after a v1 handshake, or as
   bare size-prefixed tokens after a v0 handshake (how clients before KIP-152 talk);
4. once the mechanism completes, requests are served as on any connection.

Any other request before authentication closes the connection (Kafka:
``IllegalSaslStateException`` "Unexpected Kafka request of type X during SASL handshake."). A
failed authentication is answered SASL_AUTHENTICATION_FAILED (58) with Kafka's message, then the
connection closes after ``connections.failed.authentication.delay.ms`` (100 ms). Kafka's
messages: PLAIN's own ("Authentication failed: Invalid username or password", ...); for SCRAM,
which must not reveal whether a user exists, "Authentication failed during authentication due to
invalid credentials with SASL mechanism SCRAM-SHA-256".

The credentials: PLAIN users and passwords from a JAAS configuration
(:func:`kafkalog.security.plain_users`); SCRAM credentials (salt, stored key, server key,
iterations; never a password) from the tree's
:class:`~kafkalog.security.ScramCredentialStore`, managed with AlterUserScramCredentials. The
SCRAM exchange itself is ``scramp``'s server; Kafka's parts around it are here (the SASL name's
``=2C``/``=3D`` escapes, the authorization id check, the minimum iteration count). Deviation:
a SCRAM authorization id equal to the user (``n,a=alice,n=alice,...``, which Kafka accepts and
no common client sends) is refused, as ``scramp`` takes none.

OAUTHBEARER (:mod:`~kafkalog.server.oauthbearer_server`) takes unsecured JWS tokens as Kafka's
default validator does; it is served only when ``sasl.enabled.mechanisms`` names it.

Re-authentication (KIP-368): with ``connections.max.reauth.ms`` set, or an OAUTHBEARER token's
expiry, the SaslAuthenticate response tells the client its session lifetime
(``ReauthInfo.calcCompletionTimesAndReturnSessionLifetimeMs``: the smaller of the two). Before it
ends the client sends SaslHandshake and the exchange again on the same connection: same mechanism
(else the connection closes: "SASL mechanism 'X' requested by client is not supported for
re-authentication of mechanism 'Y'"), same principal (else SASL_AUTHENTICATION_FAILED "Cannot
change principals during re-authentication from User.a: User.b"), at most once a second. A
session past its end serves no other request: the connection closes.

Not served: GSSAPI (Kerberos), signed OAUTHBEARER tokens (KIP-768), delegation tokens. What an
authenticated principal may do is the ACLs' business (:mod:`kafkalog.security.acls`, when
``authorizer.class.name`` is set; everything otherwise, as on a broker without it).

Threads: runs on the server's event loop.
"""

from __future__ import annotations

import hmac
import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..security.scram_credentials import (
    MECHANISMS as SCRAM_MECHANISMS,
)
from ..security.scram_credentials import (
    MIN_ITERATIONS,
    ScramCredentialStore,
    username_from_sasl_name,
)
from .protocol import ErrorCode, ProtocolError, build, decode_request, encode_response, peek_header
from .protocol import response_class as _response_class

__all__ = ["SaslAuthenticator", "SaslFailure", "MECHANISMS", "PLAIN", "OAUTHBEARER"]

logger = logging.getLogger("kafkalog.server")

PLAIN = "PLAIN"
OAUTHBEARER = "OAUTHBEARER"
#: the mechanisms this server can serve
MECHANISMS = (PLAIN, *SCRAM_MECHANISMS, OAUTHBEARER)
_API_VERSIONS = 18
_SASL_HANDSHAKE = 17
_SASL_AUTHENTICATE = 36


class SaslFailure(Exception):
    """A failed exchange: ``client_message`` is what the client is told (Kafka's
    ``SaslAuthenticationException`` message), ``detail`` what the server log says."""

    def __init__(self, client_message: str, detail: str | None = None) -> None:
        super().__init__(client_message)
        self.client_message = client_message
        self.detail = detail or client_message


class _PlainServer:
    """``PlainSaslServer``: one token ``[authzid] NUL authcid NUL passwd`` (RFC 4616)."""

    def __init__(self, users: Mapping[str, str]) -> None:
        self.users = users
        self.complete = False
        self.principal: str | None = None

    def evaluate(self, token: bytes) -> bytes:
        parts = token.decode("utf-8", "replace").split("\x00", 3)
        if len(parts) != 3:
            raise SaslFailure(f"Invalid SASL/PLAIN response: expected 3 tokens, got "
                              f"{len(parts)}")
        authzid, user, password = parts
        if not user:
            raise SaslFailure("Authentication failed: username not specified")
        if not password:
            raise SaslFailure("Authentication failed: password not specified")
        expected = self.users.get(user)
        if expected is None or not hmac.compare_digest(expected.encode(), password.encode()):
            raise SaslFailure("Authentication failed: Invalid username or password",
                              f"invalid username or password for user {user!r}")
        if authzid and authzid != user:
            raise SaslFailure("Authentication failed: Client requested an authorization id "
                              "that is different from username")
        self.principal = user
        self.complete = True
        return b""


class _ScramServer:
    """``ScramSaslServer``: client-first -> server-first, client-final -> server-final."""

    def __init__(self, mechanism: str, store: ScramCredentialStore,
                 s_nonce: str | None = None, what: str = "authentication") -> None:
        import scramp

        self.what = what  # "authentication" or "re-authentication", for the client's text
        self.mechanism = mechanism
        self.store = store
        self.complete = False
        self.principal: str | None = None
        self._user: str | None = None
        #: why the credential lookup failed (scramp wraps what the lookup raises)
        self._lookup_failure: SaslFailure | None = None
        # (s_nonce: the server's nonce, random unless a test fixes it)
        self._server = scramp.ScramMechanism(mechanism).make_server(self._auth_info,
                                                                    s_nonce=s_nonce)
        self._step = 0

    def _generic(self, detail: str) -> SaslFailure:
        # (SaslServerAuthenticator hides the reason of a SaslException from the client)
        return SaslFailure(f"Authentication failed during {self.what} due to invalid "
                           f"credentials with SASL mechanism {self.mechanism}", detail)

    def _auth_info(self, name: str) -> tuple[bytes, bytes, bytes, int]:
        try:
            user = username_from_sasl_name(name)
        except ValueError as e:
            self._lookup_failure = self._generic(str(e))
            raise self._lookup_failure from None
        cred = self.store.get(user, self.mechanism)
        if cred is None:
            self._lookup_failure = self._generic(
                f"Authentication failed: Invalid user credentials (no {self.mechanism} "
                f"credential for user {user!r})")
            raise self._lookup_failure
        if cred.iterations < MIN_ITERATIONS:
            self._lookup_failure = self._generic(
                f"Iterations {cred.iterations} is less than the minimum {MIN_ITERATIONS} for "
                f"{self.mechanism}")
            raise self._lookup_failure
        self._user = user
        return cred.salt, cred.stored_key, cred.server_key, cred.iterations

    def evaluate(self, token: bytes) -> bytes:
        import scramp

        try:
            text = token.decode("utf-8")
        except UnicodeDecodeError:
            raise self._generic("SCRAM message is not UTF-8") from None
        try:
            if self._step == 0:
                self._step = 1
                fields = text.split(",", 3)
                if len(fields) > 2 and fields[1].startswith("a="):
                    # an authorization id: Kafka takes one equal to the user; scramp takes
                    # none, so both cases are refused, the other with Kafka's text
                    user = fields[2][2:] if fields[2].startswith("n=") else None
                    if fields[1][2:] != user:
                        raise SaslFailure("Authentication failed: Client requested an "
                                          "authorization id that is different from username")
                    raise self._generic("an authorization id (a=) is not supported")
                self._server.set_client_first(text)
                return self._server.get_server_first().encode()
            if self._step == 1:
                self._step = 2
                self._server.set_client_final(text)
                out = self._server.get_server_final().encode()
                self.principal = self._user
                self.complete = True
                return out
        except SaslFailure:
            raise
        except (scramp.ScramException, ValueError, KeyError) as e:
            if self._lookup_failure is not None:
                raise self._lookup_failure from None
            raise self._generic(f"Authentication failed: Invalid client message ({e})") \
                from None
        raise self._generic("Unexpected challenge in Sasl server state COMPLETE")


class SaslAuthenticator:
    """The SASL state of one connection (see the module docstring).

    :meth:`handle` takes each frame until :attr:`complete`; it returns the bytes to send back
    (or None) and whether to close the connection after them. Once complete, the connection
    asks :meth:`begin_reauthentication` when a SaslHandshake arrives and :meth:`expired` before
    serving anything else (KIP-368, see the module docstring).
    """

    def __init__(self, *, peer: str, mechanisms: Sequence[str], plain_users: Mapping[str, str],
                 scram_store: ScramCredentialStore | None,
                 api_versions: Callable[[bytes], Any], max_reauth_ms: int = 0,
                 clock: Callable[[], float] = time.monotonic,
                 wall_clock_ms: Callable[[], int] = lambda: int(time.time() * 1000),
                 oauthbearer_options: Any = None, oauthbearer_validator: Any = None) -> None:
        self.peer = peer
        self.mechanisms = list(mechanisms)
        self.plain_users = plain_users
        self.scram_store = scram_store
        self._api_versions = api_versions
        self.max_reauth_ms = max_reauth_ms
        self._clock = clock
        self._wall_clock_ms = wall_clock_ms
        self.oauthbearer_options = oauthbearer_options
        #: the secured validator (KIP-768) when configured, else None: the unsecured one
        self.oauthbearer_validator = oauthbearer_validator
        self.state = "handshake_or_versions"
        self.raw_tokens = False  # a v0 handshake: tokens without SaslAuthenticate headers
        self.mechanism: str | None = None
        self.principal: str | None = None
        self._server: Any = None
        #: when the session ends (the clock's seconds); None: never (no re-authentication)
        self.session_expiry: float | None = None
        #: the mechanism and principal being re-authenticated (None: a first authentication)
        self._previous: tuple[str, str | None] | None = None
        self._last_reauth_start: float | None = None
        self._bad_mechanism: str | None = None

    @property
    def complete(self) -> bool:
        return self.state == "complete"

    @property
    def _what(self) -> str:
        return "re-authentication" if self._previous is not None else "authentication"

    # -- KIP-368 ------------------------------------------------------------------------------

    def expired(self) -> bool:
        """Whether the session's lifetime has passed (the connection must then close:
        ``KafkaChannel.serverAuthenticationSessionExpired``)."""
        return self.session_expiry is not None and self._clock() >= self.session_expiry

    def begin_reauthentication(self) -> bool:
        """``KafkaChannel.maybeBeginServerReauthentication`` for a SaslHandshake on an
        authenticated connection: True when it starts a re-authentication (the handshake then
        goes to :meth:`handle`). Not without a session expiry, nor twice within a second (the
        handshake is then served as any request: ILLEGAL_SASL_STATE)."""
        if self.state != "complete" or self.session_expiry is None:
            return False
        now = self._clock()
        if self._last_reauth_start is not None and now - self._last_reauth_start < 1.0:
            return False
        self._last_reauth_start = now
        assert self.mechanism is not None
        self._previous = (self.mechanism, self.principal)
        self.state = "reauth_handshake"
        return True

    def _session_lifetime_ms(self, server: Any) -> int:
        """``ReauthInfo.calcCompletionTimesAndReturnSessionLifetimeMs``: the lifetime sent to
        the client and the session's end: ``connections.max.reauth.ms``, the credential's
        expiry (an OAUTHBEARER token's), whichever comes first; 0 and no end without either."""
        credential_ms = getattr(server, "credential_expiry_ms", None)
        now_ms = self._wall_clock_ms()
        reauth = self.max_reauth_ms if self.max_reauth_ms > 0 else None
        if credential_ms is None and reauth is None:
            self.session_expiry = None
            return 0
        if credential_ms is None:
            lifetime = max(0, reauth)  # type: ignore[arg-type]
        elif reauth is None:
            lifetime = max(0, credential_ms - now_ms)
        else:
            lifetime = max(0, min(credential_ms - now_ms, reauth))
        self.session_expiry = self._clock() + lifetime / 1000
        return lifetime

    # -- the exchange -------------------------------------------------------------------------

    async def handle(self, frame: bytes) -> tuple[bytes | None, bool]:
        """``(response frame or None, close after it)`` for one frame received before the
        connection authenticated (or while it re-authenticates)."""
        if self.state == "authenticate":
            return self._authenticate(frame)
        try:
            key, version, correlation_id = peek_header(frame)
        except ProtocolError as e:
            return self._fail(f"first packet is not a Kafka request ({e}); GSSAPI is not "
                              "supported by this server")
        if key == _API_VERSIONS and self.state == "handshake_or_versions":
            self.state = "handshake"
            return await self._api_versions(frame), False
        if key != _SASL_HANDSHAKE:
            return self._fail(f"Unexpected Kafka request of type {_api_name(key)} during SASL "
                              "handshake.")
        try:
            _, request = decode_request(frame, key, version)
        except ProtocolError as e:
            return self._fail(f"bad SaslHandshake request: {e}")
        mechanism = request.mechanism
        ok = mechanism in self.mechanisms
        body = {"error_code": ErrorCode.none if ok else ErrorCode.unsupported_sasl_mechanism,
                "mechanisms": list(self.mechanisms)}
        out = encode_response(key, version, correlation_id,
                              build(_response_class(key, version), body))
        if not ok:
            logger.warning("%s: closing connection: Unsupported SASL mechanism %s (enabled: "
                           "%s)", self.peer, mechanism, ", ".join(self.mechanisms))
            return out, True
        if self._previous is not None and mechanism != self._previous[0]:
            # ReauthInfo.saslMechanismUnchanged: answered, then the next frame fails
            self._bad_mechanism = (f"SASL mechanism '{mechanism}' requested by client is not "
                                   f"supported for re-authentication of mechanism "
                                   f"'{self._previous[0]}'")
        self.mechanism = mechanism
        self.raw_tokens = version == 0
        self._server = self._mechanism_server(mechanism)
        self.state = "authenticate"
        return out, False

    def _mechanism_server(self, mechanism: str) -> Any:
        if mechanism == PLAIN:
            return _PlainServer(self.plain_users)
        if mechanism == OAUTHBEARER:
            from .oauthbearer_server import OAuthBearerServer

            return OAuthBearerServer(self.oauthbearer_options, self._wall_clock_ms,
                                     self._what, validator=self.oauthbearer_validator)
        return _ScramServer(mechanism, self._store(), what=self._what)

    def _store(self) -> ScramCredentialStore:
        if self.scram_store is None:  # pragma: no cover - the server always gives one
            raise RuntimeError("SCRAM enabled without a credential store")
        return self.scram_store

    def _fail(self, why: str) -> tuple[bytes | None, bool]:
        logger.warning("%s: closing connection: %s", self.peer, why)
        self.state = "failed"
        return None, True

    def _evaluate(self, server: Any, token: bytes) -> bytes:
        if self._bad_mechanism is not None:
            raise SaslFailure(self._bad_mechanism)
        out = server.evaluate(token)
        if server.complete and self._previous is not None \
                and server.principal != self._previous[1]:
            # ReauthInfo.ensurePrincipalUnchanged
            raise SaslFailure(f"Cannot change principals during re-authentication from "
                              f"User.{self._previous[1]}: User.{server.principal}")
        return out

    def _authenticate(self, frame: bytes) -> tuple[bytes | None, bool]:
        server = self._server
        assert server is not None
        if self.raw_tokens:
            try:
                token = self._evaluate(server, bytes(frame))
            except SaslFailure as e:
                return self._fail(f"SASL {self.mechanism} {self._what} failed: {e.detail}")
            if server.complete:
                self._session_lifetime_ms(server)  # (a v0 client is told nothing)
                self._done(server)
            # (PLAIN answers an empty token; Kafka still sends its size prefix)
            return len(token).to_bytes(4, "big") + token, False
        try:
            key, version, correlation_id = peek_header(frame)
        except ProtocolError as e:
            return self._fail(f"bad request during SASL {self._what}: {e}")
        if key != _SASL_AUTHENTICATE:
            return self._fail(f"Unexpected Kafka request of type {_api_name(key)} during SASL "
                              f"{self._what}.")
        try:
            _, request = decode_request(frame, key, version)
        except ProtocolError as e:
            return self._fail(f"bad SaslAuthenticate request: {e}")
        close = False
        try:
            token = self._evaluate(server, bytes(request.auth_bytes))
            lifetime = self._session_lifetime_ms(server) if server.complete else 0
            body: dict[str, Any] = {"error_code": ErrorCode.none, "error_message": None,
                                    "auth_bytes": token, "session_lifetime": lifetime}
            if server.complete:
                self._done(server)
        except SaslFailure as e:
            if self._bad_mechanism is not None:
                # (Kafka closes without a response here: REAUTH_BAD_MECHANISM)
                return self._fail(self._bad_mechanism)
            logger.warning("%s: closing connection: SASL %s %s failed: %s",
                           self.peer, self.mechanism, self._what, e.detail)
            body = {"error_code": ErrorCode.sasl_authentication_failed,
                    "error_message": e.client_message, "auth_bytes": b"",
                    "session_lifetime": 0}
            self.state = "failed"
            close = True
        return encode_response(key, version, correlation_id,
                               build(_response_class(key, version), body)), close

    def _done(self, server: Any) -> None:
        self.state = "complete"
        self.principal = server.principal
        logger.info("%s: %s as User:%s (SASL %s)%s", self.peer,
                    "re-authenticated" if self._previous is not None else "authenticated",
                    self.principal, self.mechanism,
                    "" if self.session_expiry is None else
                    f", session ends in {self.session_expiry - self._clock():.1f} s")
        self._previous = None


def _api_name(key: int) -> str:
    from .api import APIS

    api = APIS.get(key)
    # Kafka prints its ApiKeys enum name: FindCoordinator -> FIND_COORDINATOR
    return re.sub(r"(?<!^)(?=[A-Z])", "_", api.name).upper() if api is not None else str(key)
