"""Secured SASL/OAUTHBEARER tokens (KIP-768): a signed JWT checked against the keys of a JWKS, as
Kafka's ``OAuthBearerValidatorCallbackHandler`` with its ``BrokerJwtValidator`` (4.2) checks it.

The checks, in jose4j's ``JwtConsumer`` terms as Kafka configures it:

* a compact JWS of three non-empty parts (``SerializedJwt``), signed (``alg`` ``none`` is
  refused), by the key of the JWKS whose ``kid`` is the header's (one key and no ``kid``: that
  key); the signature verifies;
* ``exp`` and ``iat`` are required; ``exp`` and ``nbf`` hold within
  ``sasl.oauthbearer.clock.skew.seconds`` (30);
* ``aud``: with ``sasl.oauthbearer.expected.audience`` set, one of the token's audiences must be
  in it; without, a token that names an audience is refused (jose4j's default);
* ``iss``: equal to ``sasl.oauthbearer.expected.issuer`` when that is set;
* the principal is the ``sasl.oauthbearer.sub.claim.name`` claim (``sub``), a non-blank string;
  the scope the ``sasl.oauthbearer.scope.claim.name`` claim (``scope``): a string is one scope,
  a list its elements, each non-blank (``ClaimValidationUtils``).

A token that fails any check is refused with ``{"status":"invalid_token"}`` (the client is told no
more; the reason is logged). The keys come from ``sasl.oauthbearer.jwks.endpoint.url``: an
``http(s)`` JWKS fetched at start and every ``sasl.oauthbearer.jwks.endpoint.refresh.ms``, and
again (in the background, at most every ``...retry.backoff.ms``) when a token names a key it does
not hold (``RefreshingHttpsJwksVerificationKeyResolver``: that token is refused); or a ``file``
JWKS, read again when it changes (``CachedFile``). As in Kafka 4.x, the URL must be listed in
``org.apache.kafka.sasl.oauthbearer.allowed.urls`` (a JVM system property there: a server
property or ``-D`` in ``KAFKA_OPTS`` here).

Example
-------
>>> import json, tempfile, time, jwt
>>> from cryptography.hazmat.primitives.asymmetric import rsa
>>> key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
>>> jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
>>> path = tempfile.mktemp(suffix=".json")
>>> _ = open(path, "w").write(json.dumps({"keys": [{**jwk, "kid": "k1"}]}))
>>> v = JwtValidator(JwtValidatorConfig(f"file://{path}", allowed_urls=(f"file://{path}",)))
>>> now = int(time.time())
>>> token = jwt.encode({"sub": "alice", "iat": now, "exp": now + 60}, key, "RS256",
...                    headers={"kid": "k1"})
>>> v.validate(token, now * 1000).principal_name
'alice'
"""

from __future__ import annotations

import json
import logging
import os
import shlex
import threading
import time
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlparse

from ..errors import ConfigError
from .oauthbearer import TokenValidationError

__all__ = ["ALLOWED_URLS_PROPERTY", "VALIDATOR_CALLBACK_HANDLERS", "JwtValidatorConfig",
           "JwtValidator", "ValidatedToken", "allowed_urls_from_kafka_opts"]

logger = logging.getLogger(__name__)

#: Kafka 4.x's allow-list of OAuth URLs (``BrokerSecurityConfigs``), empty by default
ALLOWED_URLS_PROPERTY = "org.apache.kafka.sasl.oauthbearer.allowed.urls"
#: ``sasl.server.callback.handler.class`` values that select this validator (4.x's name, and
#: the ``secured`` package's of 3.1-3.9)
VALIDATOR_CALLBACK_HANDLERS = (
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
    "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerValidatorCallbackHandler",
)
#: what PyJWT verifies for each JWK key type (jose4j takes any signature algorithm the key
#: fits; ``none`` is refused by Kafka's ``DISALLOW_NONE``)
_ALGORITHMS = {"RSA": ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512"),
               "EC": ("ES256", "ES384", "ES512", "ES256K"), "OKP": ("EdDSA",),
               "oct": ("HS256", "HS384", "HS512")}


@dataclass(frozen=True)
class _Key:
    """One JWKS key: the PyJWT key and the algorithms it verifies (its own ``alg`` when the
    JWK names one, else every one of its key type)."""

    jwk: Any
    algorithms: tuple[str, ...]


def allowed_urls_from_kafka_opts(kafka_opts: str | None = None) -> tuple[str, ...]:
    """The URLs a ``-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=a,b`` in ``KAFKA_OPTS``
    (the environment's when None) allows, as Kafka's scripts pass it to the JVM.

    >>> allowed_urls_from_kafka_opts("-Xmx1g -Dorg.apache.kafka.sasl.oauthbearer.allowed.urls="
    ...                              "https://a/jwks,file:///k.json")
    ('https://a/jwks', 'file:///k.json')
    """
    text = os.environ.get("KAFKA_OPTS", "") if kafka_opts is None else kafka_opts
    out: list[str] = []
    for word in shlex.split(text):
        if word.startswith(f"-D{ALLOWED_URLS_PROPERTY}="):
            out = [u.strip() for u in word.split("=", 1)[1].split(",")]
    return tuple(u for u in out if u)


@dataclass(frozen=True)
class JwtValidatorConfig:
    """The ``sasl.oauthbearer.*`` settings of the validator (Kafka's names in the docstring)."""

    jwks_endpoint_url: str
    expected_audience: tuple[str, ...] = ()
    expected_issuer: str | None = None
    sub_claim_name: str = "sub"
    scope_claim_name: str = "scope"
    clock_skew_seconds: int = 30
    jwks_endpoint_refresh_ms: int = 3_600_000
    jwks_endpoint_retry_backoff_ms: int = 100
    allowed_urls: Sequence[str] = ()

    def check(self) -> None:
        """``ConfigurationUtils.validateUrl``: the URL parses, its protocol is http, https or
        file, and it is allowed. Raises :class:`~kafkalog.errors.ConfigError`."""
        name, value = "sasl.oauthbearer.jwks.endpoint.url", self.jwks_endpoint_url
        if not value or not value.strip():
            raise ConfigError(f"The OAuth configuration option {name} value is required")
        protocol = urlparse(value).scheme.lower()
        if not protocol:
            raise ConfigError(f"The OAuth configuration option {name} contains a URL ({value}) "
                              "that is missing the protocol")
        if protocol not in ("http", "https", "file"):
            raise ConfigError(
                f"The OAuth configuration option {name} contains a URL ({value}) that contains "
                f'an invalid protocol ({protocol}); only "http", "https", and "file" protocol '
                "are supported")
        if value not in {u.strip() for u in self.allowed_urls}:
            raise ConfigError(
                f"Invalid value {value} for configuration {name}: The URL cannot be accessed "
                f"due to restrictions. Update the system property '{ALLOWED_URLS_PROPERTY}' "
                "to allow the URL to be accessed.")
        if self.clock_skew_seconds < 0:
            raise ConfigError("sasl.oauthbearer.clock.skew.seconds must be >= 0")


@dataclass(frozen=True)
class ValidatedToken:
    """A token that passed: its principal, scope and expiry (ms since the epoch)."""

    principal_name: str
    scope: frozenset[str]
    lifetime_ms: int
    start_time_ms: int | None


class _Jwks:
    """The JWKS keys, kept fresh as the module docstring says (thread-safe)."""

    def __init__(self, config: JwtValidatorConfig) -> None:
        self.url = config.jwks_endpoint_url
        self.refresh_s = config.jwks_endpoint_refresh_ms / 1000
        self.backoff_s = config.jwks_endpoint_retry_backoff_ms / 1000
        parsed = urlparse(self.url)
        self.path = unquote(parsed.path) if parsed.scheme.lower() == "file" else None
        self._lock = threading.Lock()
        self._keys: dict[str | None, _Key] = {}
        self._loaded_at = 0.0
        #: when a background fetch last started: the next waits retry.backoff.ms after it,
        #: failed or not (a JWKS endpoint that is down is not asked at every token)
        self._attempted_at = float("-inf")
        self._mtime: float | None = None
        self._refreshing = False
        self._load()                    # at start: an unreadable JWKS fails the server's start

    def _fetch(self) -> bytes:
        if self.path is not None:
            with open(self.path, "rb") as f:
                return f.read()
        req = urllib.request.Request(self.url, headers={"Accept": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as resp:  # noqa: S310 - allowed URL only
            return resp.read()

    def _load(self) -> None:
        import jwt

        raw = self._fetch()
        try:
            doc = json.loads(raw)
            entries = doc["keys"]
            if not isinstance(entries, list):
                raise ValueError("'keys' is not a list")
        except (ValueError, KeyError, TypeError) as e:
            raise ConfigError(f"JWKS at {self.url} unreadable: {e}") from None
        keys: dict[str | None, _Key] = {}
        for entry in entries:
            if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
                continue                # (an encryption key verifies nothing)
            try:
                jwk = jwt.PyJWK(entry)
            except jwt.PyJWTError as e:  # (a key type or curve PyJWT cannot use: skipped)
                logger.warning("JWKS at %s: key %r skipped: %s", self.url, entry.get("kid"), e)
                continue
            algs = (entry["alg"],) if isinstance(entry.get("alg"), str) else \
                _ALGORITHMS.get(entry.get("kty", ""), ())
            keys[entry.get("kid")] = _Key(jwk, algs)
        with self._lock:
            self._keys = keys
            self._loaded_at = time.monotonic()
            self._mtime = os.stat(self.path).st_mtime if self.path is not None else None

    def _refresh_in_background(self) -> None:
        def run() -> None:
            try:
                self._load()
            except Exception as e:  # noqa: BLE001 - logged; the old keys stay in use
                logger.warning("JWKS refresh from %s failed: %s", self.url, e)
            finally:
                self._refreshing = False

        with self._lock:
            now = time.monotonic()
            if self._refreshing or now - max(self._loaded_at, self._attempted_at) < \
                    self.backoff_s:
                return
            self._refreshing = True
            self._attempted_at = now
        threading.Thread(target=run, name="kafkalog-jwks-refresh", daemon=True).start()

    def key_for(self, kid: str | None) -> _Key:
        """The JWK that verifies a token whose header names ``kid`` (None: the only key)."""
        if self.path is not None:
            try:
                if os.stat(self.path).st_mtime != self._mtime:
                    self._load()
            except (OSError, ConfigError) as e:
                logger.warning("JWKS file %s not re-read: %s", self.path, e)
        elif time.monotonic() - self._loaded_at >= self.refresh_s:
            self._refresh_in_background()
        with self._lock:
            keys = self._keys
        if kid is None and len(keys) == 1:
            return next(iter(keys.values()))
        key = keys.get(kid)
        if key is None:
            if self.path is None:
                self._refresh_in_background()
            raise TokenValidationError(f"no key in the JWKS at {self.url} has kid {kid!r}")
        return key


class JwtValidator:
    """``BrokerJwtValidator``: checks one access token (see the module docstring)."""

    def __init__(self, config: JwtValidatorConfig) -> None:
        config.check()
        self.config = config
        self._jwks = _Jwks(config)

    def validate(self, token: str, now_ms: int) -> ValidatedToken:
        """The token's principal and lifetime, or :class:`TokenValidationError` (status
        ``invalid_token``; the reason in its description, for the log)."""
        import jwt

        c = self.config
        parts = token.split(".")
        if len(parts) != 3 or not all(p.strip() for p in parts):
            raise TokenValidationError("malformed JWT provided; expected three sections "
                                       "(header, payload, and signature)")
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as e:
            raise TokenValidationError(f"Could not validate the access token: {e}") from None
        alg = header.get("alg")
        if not isinstance(alg, str) or alg.lower() == "none":
            raise TokenValidationError("Could not validate the access token: an unsigned "
                                       "token ('alg' none) is not accepted")
        key = self._jwks.key_for(header.get("kid"))
        try:
            claims = _decode_at(token, key.jwk.key, list(key.algorithms), c, now_ms)
        except jwt.PyJWTError as e:
            raise TokenValidationError(f"Could not validate the access token: {e}") from None
        return _token_from_claims(claims, c)


def _decode_at(token: str, key: Any, algorithms: list[str], c: JwtValidatorConfig,
               now_ms: int) -> dict[str, Any]:
    """``jwt.decode`` (signature, algorithm, audience, issuer, required claims) with the time
    checks done here against ``now_ms``, the server's clock (jose4j's evaluation time)."""
    import jwt

    claims = jwt.decode(token, key, algorithms=algorithms,
                        audience=list(c.expected_audience) or None, issuer=c.expected_issuer,
                        options={"require": ["exp", "iat"], "verify_aud": True,
                                 "verify_exp": False, "verify_nbf": False,
                                 "verify_iat": False})
    now = now_ms / 1000
    for name in ("exp", "iat", "nbf"):
        value = claims.get(name)
        if name in claims and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise jwt.InvalidTokenError(f"The '{name}' claim must be a number")
    if now >= claims["exp"] + c.clock_skew_seconds:
        raise jwt.ExpiredSignatureError("Signature has expired")
    if "nbf" in claims and now < claims["nbf"] - c.clock_skew_seconds:
        raise jwt.ImmatureSignatureError("The token is not yet valid (nbf)")
    return claims


def _token_from_claims(claims: Mapping[str, Any], c: JwtValidatorConfig) -> ValidatedToken:
    """The claim checks after the signature (``BrokerJwtValidator.validate`` and
    ``ClaimValidationUtils``)."""
    raw_scope = claims.get(c.scope_claim_name)
    scopes: list[Any]
    if isinstance(raw_scope, str):
        scopes = [raw_scope]
    elif isinstance(raw_scope, list):
        scopes = raw_scope
    else:
        scopes = []
    out = set()
    for s in scopes:
        if not isinstance(s, str) or not s.strip():
            raise TokenValidationError(f"Validation failed: {c.scope_claim_name} value must "
                                       "be non-null and non-empty")
        out.add(s.strip())
    sub = claims.get(c.sub_claim_name)
    if sub is not None and not isinstance(sub, str):
        raise TokenValidationError(f"Could not extract the '{c.sub_claim_name}' claim from "
                                   "the access token")
    if sub is None or not sub.strip():
        raise TokenValidationError(f"Validation failed: {c.sub_claim_name} value must be "
                                   "non-null and non-empty")
    exp_ms = int(claims["exp"] * 1000)
    iat_ms = int(claims["iat"] * 1000) if claims.get("iat") is not None else None
    if exp_ms < 0 or (iat_ms is not None and iat_ms < 0):
        raise TokenValidationError("Validation failed: exp and iat must be non-negative")
    return ValidatedToken(sub.strip(), frozenset(out), exp_ms, iat_ms)
