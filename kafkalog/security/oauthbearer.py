r"""SASL/OAUTHBEARER on the server side with Kafka's *unsecured* token validator: the parsing and
the checks, no wire and no state machine (those are :mod:`kafkalog.server.oauthbearer_server`).

Ported from Kafka's ``org.apache.kafka.common.security.oauthbearer.internals``:

* ``OAuthBearerClientInitialResponse``: the client's one message (RFC 7628 section 3.1), a GS2
  header ``n,[a=<authzid>],`` then ``\x01``-separated ``key=value`` pairs, one of them
  ``auth=Bearer <token>``, ending ``\x01\x01`` -> :class:`ClientInitialResponse`;
* ``unsecured.OAuthBearerUnsecuredJws``: the token, an unsecured JWS (RFC 7515/7519): three
  base64url parts ``header.claims.`` with an empty signature, ``"alg":"none"`` ->
  :class:`UnsecuredToken`;
* ``unsecured.OAuthBearerValidationUtils`` and ``OAuthBearerValidationResult``: the claim checks
  -> :func:`validate_claim_for_existence_and_type`, :func:`validate_issued_at`,
  :func:`validate_expiration_time`, :func:`validate_time_consistency`, :func:`validate_scope` and
  :class:`ValidationResult`;
* ``unsecured.OAuthBearerScopeUtils`` -> :func:`parse_scope`, :func:`is_valid_scope_item`;
* ``unsecured.OAuthBearerUnsecuredValidatorCallbackHandler``: its options and the order of its
  checks -> :class:`ValidatorOptions`, :func:`validate_unsecured_token`;
* ``OAuthBearerSaslServer.jsonErrorResponse``: the JSON error challenge ->
  :meth:`TokenValidationError.json_error`, and its authorization-id check ->
  :func:`authorization_id_mismatch`.

*Unsecured* means that nothing proves who issued the token: there is no signature, anyone can
write one naming any principal. Kafka's broker uses this validator for OAUTHBEARER unless
``listener.name.<l>.oauthbearer.sasl.server.callback.handler.class`` names another one; it is
meant for development and tests, and so is this module. Extensions are all accepted, as the
unsecured handler accepts every extension it is given.

Error texts are Kafka's. Two kinds of failure: :class:`OAuthBearerError` is a malformed client
message (Kafka's ``SaslException``: the exchange fails), :class:`TokenValidationError` a bad
token (Kafka answers with :meth:`~TokenValidationError.json_error` as a challenge).

Example: a token for ``alice`` expiring at 1 900 000 000 s, checked at 1 700 000 000 000 ms:

>>> import base64, json
>>> def b64url(obj):
...     return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()
>>> token = b64url({"alg": "none"}) + "." + b64url({"sub": "alice", "exp": 1900000000}) + "."
>>> message = ClientInitialResponse.parse(b"n,,\x01auth=Bearer " + token.encode() + b"\x01\x01")
>>> t = validate_unsecured_token(message.token, ValidatorOptions(), now_ms=1_700_000_000_000)
>>> t.principal_name, t.lifetime_ms, sorted(t.scope)
('alice', 1900000000000, [])
>>> try:
...     validate_unsecured_token(token, ValidatorOptions(), now_ms=1_900_000_000_000)
... except TokenValidationError as e:
...     print(e.json_error())
{"status":"invalid_token"}
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from numbers import Number
from typing import Any

from ..decoders.jvm_order import java_hash_map_order
from ..decoders.message import java_double
from ..errors import ConfigError

__all__ = [
    "AUTH_KEY",
    "SEPARATOR",
    "ClientInitialResponse",
    "OAuthBearerConfigError",
    "OAuthBearerError",
    "TokenValidationError",
    "UnsecuredToken",
    "ValidationResult",
    "ValidatorOptions",
    "authorization_id_mismatch",
    "is_valid_scope_item",
    "json_error_response",
    "parse_scope",
    "validate_claim_for_existence_and_type",
    "validate_expiration_time",
    "validate_extensions",
    "validate_issued_at",
    "validate_scope",
    "validate_time_consistency",
    "validate_unsecured_token",
]


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


class OAuthBearerError(Exception):
    """A malformed OAUTHBEARER client message (Kafka's ``SaslException``); the message is
    Kafka's text, e.g. ``Invalid OAUTHBEARER client first message``."""


class OAuthBearerConfigError(ConfigError):
    """A bad validator option (Kafka's ``OAuthBearerConfigException``); a ``ValueError``."""


def json_error_response(status: str, scope: str | None = None,
                        openid_configuration: str | None = None) -> str:
    """``OAuthBearerSaslServer.jsonErrorResponse``: the server's error challenge, e.g.
    ``{"status":"insufficient_scope", "scope":"[a, b]"}``.

    Built by string formatting as Kafka does (no JSON escaping: a status is a fixed word, and a
    scope is a list of scope items, which cannot hold ``"`` or ``\\``).
    """
    text = f'{{"status":"{status}"'
    if scope is not None:
        text += f', "scope":"{scope}"'
    if openid_configuration is not None:
        text += f', "openid-configuration":"{openid_configuration}"'
    return text + "}"


class TokenValidationError(Exception):
    """A token that fails validation (Kafka's ``OAuthBearerIllegalTokenException`` as the
    unsecured validator handler turns it into the callback's error).

    ``description`` is Kafka's failure description (also ``str(e)``; Kafka only logs it),
    ``scope`` the failure scope (the required scope, e.g. ``[scope1, scope2]``, when the token
    lacks part of it), ``status`` ``"insufficient_scope"`` when there is a failure scope, else
    ``"invalid_token"``.
    """

    def __init__(self, description: str, scope: str | None = None,
                 openid_configuration: str | None = None) -> None:
        super().__init__(description)
        self.description = description
        self.scope = scope
        self.openid_configuration = openid_configuration
        # OAuthBearerUnsecuredValidatorCallbackHandler.handle: the status follows the scope
        self.status = "insufficient_scope" if scope is not None else "invalid_token"

    def json_error(self) -> str:
        """The JSON error challenge the server sends (``OAuthBearerSaslServer``)."""
        return json_error_response(self.status, self.scope, self.openid_configuration)


# --------------------------------------------------------------------------------------------
# Java helpers: Kafka's checks use String.trim, Math.round, String.format("%f") and the
# toString of a HashSet/List; these reproduce them so that values and texts match Kafka's.
# --------------------------------------------------------------------------------------------

_JAVA_TRIM = "".join(chr(c) for c in range(0x21))  # String.trim(): every char <= U+0020
_INT_MIN, _INT_MAX = -(1 << 31), (1 << 31) - 1
_LONG_MIN, _LONG_MAX = -(1 << 63), (1 << 63) - 1


def _trim(s: str) -> str:
    return s.strip(_JAVA_TRIM)


def _is_blank(s: str | None) -> bool:
    """``Utils.isBlank``: None, or nothing but chars <= U+0020."""
    return s is None or not _trim(s)


def _to_double(n: int | float) -> float:
    """``Number.doubleValue()``: a BigInteger beyond the double range is +-Infinity."""
    try:
        return float(n)
    except OverflowError:
        return math.inf if n > 0 else -math.inf


def _java_round(x: float) -> int:
    """``Math.round(double)``: nearest long, ties towards +infinity, NaN -> 0, clamped."""
    if math.isnan(x):
        return 0
    if x >= _LONG_MAX:  # (also +Infinity)
        return _LONG_MAX
    if x <= _LONG_MIN:
        return _LONG_MIN
    f = math.floor(x)
    return int(f) + (1 if x - f >= 0.5 else 0)  # x - floor(x) is exact for a double


def _java_f(x: float) -> str:
    """``String.format("%f", x)``: six decimals, rounded half-up from the shortest decimal
    form of ``x`` (Java's rule; ``"%f" % x`` rounds the exact binary value instead)."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    # repr(x) is the shortest decimal that round-trips; round it half-up by hand (exact)
    digits, _, exp = repr(x).partition("e")
    sign = "-" if digits.startswith("-") else ""
    whole, _, frac = digits.lstrip("-").partition(".")
    mantissa = int(whole + frac)
    scale = len(frac) - int(exp or 0)  # x = sign * mantissa / 10**scale
    if scale <= 6:
        micros = mantissa * 10 ** (6 - scale)
    else:
        q, r = divmod(mantissa, 10 ** (scale - 6))
        micros = q + (1 if 2 * r >= 10 ** (scale - 6) else 0)
    return f"{sign}{micros // 1_000_000}.{micros % 1_000_000:06d}"


def _java_list(items: Iterable[str]) -> str:
    """``AbstractCollection.toString()``: ``[a, b]``."""
    return "[" + ", ".join(items) + "]"


def _java_type_name(value: Any) -> str:
    """``getClass().getSimpleName()`` of a claim value as Jackson gives it to Kafka."""
    if isinstance(value, str):
        return "String"
    if isinstance(value, list):
        return "ArrayList"
    if isinstance(value, float):
        return "Double"
    if isinstance(value, int):  # IntNode, LongNode, BigIntegerNode by magnitude
        if _INT_MIN <= value <= _INT_MAX:
            return "Integer"
        return "Long" if _LONG_MIN <= value <= _LONG_MAX else "BigInteger"
    return type(value).__name__


# The claim types Kafka asks for (String.class, Number.class, List.class) and their names
_CLAIM_TYPE_NAMES: dict[type, str] = {str: "String", Number: "Number", list: "List"}


def _is_type(value: Any, kind: type) -> bool:
    # (claims never hold a bool: Jackson's asText makes true/false the strings "true"/"false")
    return isinstance(value, kind) and not isinstance(value, bool)


# --------------------------------------------------------------------------------------------
# The client's initial response (OAuthBearerClientInitialResponse)
# --------------------------------------------------------------------------------------------

SEPARATOR = "\x01"
AUTH_KEY = "auth"

# RFC 7628 section 3.1 via Kafka's regexes. saslname: any US-ASCII char but NUL, "=" and ","
# (Java's [\x01-\x7F&&[^=,]]), or the escapes =2C and =3D.
_SASLNAME = r"(?:[\x01-\x2B\x2D-\x3C\x3E-\x7F]|=2C|=3D)+"
_KEY = r"[A-Za-z]+"
_VALUE = r"[\x21-\x7E \t\r\n]+"
_KVPAIRS = rf"(?:{_KEY}={_VALUE}{SEPARATOR})*"
_CLIENT_INITIAL_RESPONSE = re.compile(
    rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,{SEPARATOR}(?P<kvpairs>{_KVPAIRS}){SEPARATOR}")
# Java's \w is ASCII; RFC 6750's b64token: 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" /
# "/" ) *"="
_AUTH = re.compile(r"(?P<scheme>[A-Za-z0-9_]+)[ ]+(?P<token>[-_~+/.a-zA-Z0-9]+=*)")
_EXTENSION_KEY = re.compile(_KEY)
_EXTENSION_VALUE = re.compile(_VALUE)


def validate_extensions(extensions: Mapping[str, str] | None) -> None:
    """``OAuthBearerClientInitialResponse.validateExtensions``: names ``[A-Za-z]+`` (not
    ``auth``), values ``[\\x21-\\x7E \\t\\r\\n]+``.

    Raises
    ------
    OAuthBearerError
        ``Extension name auth is invalid``, ``Extension name <n> is invalid`` or
        ``Extension value (<v>) for extension <n> is invalid``.
    """
    if extensions is None:
        return
    if AUTH_KEY in extensions:
        raise OAuthBearerError(f"Extension name {AUTH_KEY} is invalid")
    for name, value in extensions.items():
        if not _EXTENSION_KEY.fullmatch(name):
            raise OAuthBearerError(f"Extension name {name} is invalid")
        if not _EXTENSION_VALUE.fullmatch(value):
            raise OAuthBearerError(f"Extension value ({value}) for extension {name} is invalid")


@dataclass(frozen=True)
class ClientInitialResponse:
    """The OAUTHBEARER client first message: the bearer token, the optional authorization id
    (``""`` when absent; kept as sent, ``=2C``/``=3D`` escapes included, as Kafka does) and the
    SASL extensions (every key/value pair but ``auth``).

    Constructing one validates the extensions (Kafka's second constructor); :meth:`to_bytes`
    is the message a client sends.
    """

    token: str
    authorization_id: str = ""
    extensions: dict[str, str] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        validate_extensions(self.extensions)
        # own a copy: the dataclass is frozen, its map should not change under it either
        object.__setattr__(self, "extensions", dict(self.extensions or {}))
        object.__setattr__(self, "authorization_id", self.authorization_id or "")

    @classmethod
    def parse(cls, data: bytes) -> ClientInitialResponse:
        """Parse a client's initial response (``new OAuthBearerClientInitialResponse(byte[])``).

        Raises
        ------
        OAuthBearerError
            With Kafka's text: ``Invalid OAUTHBEARER client first message`` (not the RFC 7628
            shape), ``...: 'auth' not specified``, ``...: invalid 'auth' format``, or
            ``Invalid scheme in OAUTHBEARER client first message: <scheme>``.
        """
        # new String(bytes, UTF_8) replaces malformed input; every char the pattern accepts
        # is ASCII, so a replacement char fails the match as the original bytes would
        text = bytes(data).decode("utf-8", errors="replace")
        m = _CLIENT_INITIAL_RESPONSE.fullmatch(text)
        if m is None:
            raise OAuthBearerError("Invalid OAUTHBEARER client first message")
        authzid = m.group("authzid") or ""
        # Utils.parseMap(kvpairs, "=", SEPARATOR): split on \x01 (Java drops the trailing
        # empty strings), each pair at its first "="; a repeated key keeps its last value
        properties: dict[str, str] = {}
        for pair in m.group("kvpairs").split(SEPARATOR):
            if pair:
                key, value = pair.split("=", 1)
                properties[key] = value
        auth = properties.pop(AUTH_KEY, None)
        if auth is None:
            raise OAuthBearerError("Invalid OAUTHBEARER client first message: 'auth' not specified")
        validate_extensions(properties)
        a = _AUTH.fullmatch(auth)
        if a is None:
            raise OAuthBearerError(
                "Invalid OAUTHBEARER client first message: invalid 'auth' format")
        if a.group("scheme").lower() != "bearer":  # (equalsIgnoreCase; the scheme is ASCII)
            # Kafka means this text but formats it with the wrong matcher, which has no group
            # "scheme" (an IllegalArgumentException escapes instead): the intended text here
            raise OAuthBearerError(
                f"Invalid scheme in OAUTHBEARER client first message: {a.group('scheme')}")
        return cls(a.group("token"), authzid, properties)

    def to_bytes(self) -> bytes:
        """``toBytes()``: ``n,[a=<authzid>],\\x01auth=Bearer <token>[\\x01k=v...]\\x01\\x01``."""
        authzid = f"a={self.authorization_id}" if self.authorization_id else ""
        extensions = SEPARATOR.join(f"{k}={v}" for k, v in self.extensions.items())
        if extensions:
            extensions = SEPARATOR + extensions
        return (f"n,{authzid},{SEPARATOR}auth=Bearer {self.token}{extensions}"
                f"{SEPARATOR}{SEPARATOR}").encode()


def authorization_id_mismatch(authorization_id: str, principal_name: str) -> str | None:
    """``OAuthBearerSaslServer.process``: a client may name an authorization id, but only its
    token's principal. The failure message (Kafka's ``SaslAuthenticationException``, sent to
    the client), or None when the id is absent or matches."""
    if authorization_id and authorization_id != principal_name:
        return (f"Authentication failed: Client requested an authorization id "
                f"({authorization_id}) that is different from the token's principal name "
                f"({principal_name})")
    return None


# --------------------------------------------------------------------------------------------
# Validation results (OAuthBearerValidationResult)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ValidationResult:
    """The result of one check: success, or a failure with a description and, for a scope
    failure, the scope to report (``OAuthBearerValidationResult``)."""

    success: bool
    failure_description: str | None = None
    failure_scope: str | None = None
    failure_openid_config: str | None = None

    def __post_init__(self) -> None:
        if self.success and (self.failure_scope is not None
                             or self.failure_openid_config is not None):
            raise ValueError("success was indicated but failure scope/OpenIdConfig were provided")

    @classmethod
    def new_success(cls) -> ValidationResult:
        return cls(True)

    @classmethod
    def new_failure(cls, description: str, scope: str | None = None,
                    openid_config: str | None = None) -> ValidationResult:
        return cls(False, description, scope, openid_config)

    def error(self) -> TokenValidationError:
        """The exception this failure raises (``new OAuthBearerIllegalTokenException(this)``)."""
        if self.success:
            raise ValueError("The reason indicates success; it must instead indicate failure")
        return TokenValidationError(self.failure_description or "", self.failure_scope,
                                    self.failure_openid_config)

    def raise_if_failed(self) -> None:
        """``throwExceptionIfFailed()``."""
        if not self.success:
            raise self.error()


def _illegal(description: str) -> TokenValidationError:
    return ValidationResult.new_failure(description).error()


# --------------------------------------------------------------------------------------------
# The unsecured JWS (OAuthBearerUnsecuredJws)
# --------------------------------------------------------------------------------------------

_B64URL = re.compile(r"(?P<data>[A-Za-z0-9_-]*)(?P<pad>=*)")


def _b64url_decode(text: str) -> bytes:
    """``Base64.getUrlDecoder().decode``: the URL-safe alphabet, padding optional but right if
    present, no dangling single char; ValueError otherwise."""
    m = _B64URL.fullmatch(text)
    if m is None:
        raise ValueError("illegal base64url character")
    data, pad = m.group("data"), m.group("pad")
    rest = len(data) % 4
    if rest == 1 or (pad and pad != {2: "==", 3: "="}.get(rest)):
        raise ValueError("wrong base64url ending unit")
    try:
        return base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))
    except binascii.Error as e:  # (not expected after the checks above)
        raise ValueError(str(e)) from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"not JSON: {name}")  # Jackson refuses NaN and Infinity


_JSON = json.JSONDecoder(parse_constant=_reject_constant)


def _as_text(value: Any) -> str:
    """Jackson's ``JsonNode.asText()`` for a value Python's json produced."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return java_double(value)
    return ""  # an object or array (a ContainerNode) has no text


def _convert(value: Any) -> Any:
    """``OAuthBearerUnsecuredJws.convert``: an array becomes a list of its elements' texts, a
    number stays a number, anything else becomes its text (so ``true`` is ``"true"``)."""
    if isinstance(value, list):
        return [_as_text(v) for v in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    return _as_text(value)


def _to_map(split: str) -> dict[str, Any]:
    """``OAuthBearerUnsecuredJws.toMap``: base64url-decode, parse as Jackson's ``readTree``
    does (any of UTF-8/16/32, trailing content ignored, a non-object or empty document has no
    members) and convert the members."""
    try:
        raw = _b64url_decode(split)
    except ValueError:
        raise _illegal("malformed Base64 URL encoded value") from None
    try:
        text = raw.decode(json.detect_encoding(raw)).lstrip(" \t\n\r")
        if not text:
            return {}  # readTree gives a MissingNode: no fields
        doc, _ = _JSON.raw_decode(text)
    except (ValueError, RecursionError):  # (UnicodeDecodeError and JSONDecodeError included)
        raise _illegal("malformed JSON") from None
    if not isinstance(doc, dict):
        return {}  # JsonNode.fields() of a non-object is empty
    return {k: _convert(v) for k, v in doc.items()}


def _splits(value: str) -> list[str]:
    """The dot-separated parts as Kafka computes them: ``String.split("\\.")`` drops trailing
    empty strings, then one empty part is added back when the text ends with a dot."""
    parts = value.split(".")
    while parts and parts[-1] == "":
        parts.pop()
    if value.endswith("."):
        parts.append("")
    return parts


def _claim_time_ms(seconds: int | float) -> int:
    """``convertClaimTimeInSecondsToMs``: ``Math.round(seconds.doubleValue() * 1000)``."""
    return _java_round(_to_double(seconds) * 1000)


@dataclass(frozen=True)
class UnsecuredToken:
    """A parsed unsecured JWS (Kafka's ``OAuthBearerUnsecuredJws``).

    ``claims`` and ``header`` hold the members as Kafka sees them: numbers as numbers, arrays as
    lists of strings, anything else as its text. ``lifetime_ms`` is ``exp`` (seconds, possibly
    fractional) in ms; ``start_time_ms`` and ``issued_at_ms`` are both ``iat`` in ms, or None:
    Kafka's token takes its start time from ``iat`` and ignores ``nbf``. ``scope`` is the scope
    claim: a string is *one* scope item (trimmed; blank means none), an array its non-blank
    items trimmed.
    """

    value: str
    principal_name: str
    scope: frozenset[str]
    lifetime_ms: int
    start_time_ms: int | None
    issued_at_ms: int | None
    claims: dict[str, Any] = field(hash=False)
    header: dict[str, Any] = field(default_factory=dict, hash=False)
    principal_claim_name: str = "sub"
    scope_claim_name: str = "scope"
    #: the scope items in the order Kafka's HashSet iterates them (for the failure texts)
    scope_order: tuple[str, ...] = field(default=(), repr=False, compare=False)

    @classmethod
    def parse(cls, compact_serialization: str, principal_claim_name: str = "sub",
              scope_claim_name: str = "scope") -> UnsecuredToken:
        """``new OAuthBearerUnsecuredJws(compactSerialization, principalClaimName,
        scopeClaimName)``: the same checks in the same order.

        Raises
        ------
        TokenValidationError
            (invalid_token) ``Malformed compact serialization contains '..'``, ``Unsecured JWS
            compact serializations must have 3 dot-separated Base64URL-encoded values``,
            ``malformed Base64 URL encoded value``, ``malformed JSON``, ``Unsecured JWS must
            have 'none' for an algorithm``, ``Unsecured JWS must not contain a digital
            signature``, ``No expiration time in JWT``, ``No principal name in JWT claim:
            <name>``, ``The '<claim>' claim was not of type <T>: <type>``, and ``JWS header
            must have an Algorithm value``.
        ValueError
            A blank claim name: ``Must specify a non-blank principal claim name`` (or scope).
        """
        if ".." in compact_serialization:
            raise _illegal("Malformed compact serialization contains '..'")
        splits = _splits(compact_serialization)
        if len(splits) != 3:
            raise _illegal("Unsecured JWS compact serializations must have 3 dot-separated "
                           "Base64URL-encoded values")
        header = _to_map(splits[0])
        claims = _to_map(splits[1])
        alg = header.get("alg")
        if alg is None:
            # Kafka: Objects.requireNonNull -> a NullPointerException escapes the validator;
            # here it is an invalid token like the other header failures
            raise _illegal("JWS header must have an Algorithm value")
        if not (isinstance(alg, str) and alg == "none"):  # (alg.toString() of a number/list)
            raise _illegal("Unsecured JWS must have 'none' for an algorithm")
        if splits[2]:
            raise _illegal("Unsecured JWS must not contain a digital signature")
        principal_claim_name = _trim(principal_claim_name)
        if not principal_claim_name:
            raise ValueError("Must specify a non-blank principal claim name")
        scope_claim_name = _trim(scope_claim_name)
        if not scope_claim_name:
            raise ValueError("Must specify a non-blank scope claim name")
        scope_order = _calculate_scope(claims, scope_claim_name)
        exp = _claim(claims, "exp", Number)
        if exp is None:
            raise _illegal("No expiration time in JWT")
        lifetime_ms = _claim_time_ms(exp)
        principal_name = _claim(claims, principal_claim_name, str)
        if _is_blank(principal_name):
            raise _illegal(f"No principal name in JWT claim: {principal_claim_name}")
        iat = _claim(claims, "iat", Number)
        start_time_ms = None if iat is None else _claim_time_ms(iat)
        return cls(compact_serialization, principal_name, frozenset(scope_order), lifetime_ms,
                   start_time_ms, start_time_ms, claims, header, principal_claim_name,
                   scope_claim_name, scope_order)

    @property
    def splits(self) -> list[str]:
        """The 3 dot-separated parts of the compact serialization (``splits()``)."""
        return _splits(self.value)

    def raw_claim(self, claim_name: str) -> Any:
        """The claim's (converted) value, or None (``rawClaim``)."""
        return self.claims.get(claim_name)

    def is_claim_type(self, claim_name: str, kind: type) -> bool:
        """``isClaimType``: the claim exists and is a ``str``, ``Number`` or ``list``."""
        value = self.raw_claim(claim_name)
        return value is not None and _is_type(value, kind)

    def claim(self, claim_name: str, kind: type) -> Any:
        """``claim(name, type)``: the value, None when absent.

        Raises
        ------
        TokenValidationError
            ``The '<name>' claim was not of type <T>: <actual type>``.
        """
        return _claim(self.claims, claim_name, kind)

    def expiration_time(self) -> int | float | None:
        """The ``exp`` claim (seconds), or None."""
        return self.claim("exp", Number)

    def issued_at(self) -> int | float | None:
        """The ``iat`` claim (seconds), or None."""
        return self.claim("iat", Number)

    def subject(self) -> str | None:
        """The ``sub`` claim, or None."""
        return self.claim("sub", str)


def _claim(claims: Mapping[str, Any], claim_name: str, kind: type) -> Any:
    value = claims.get(claim_name)
    if value is None or _is_type(value, kind):
        return value
    raise _illegal(f"The '{claim_name}' claim was not of type {_CLAIM_TYPE_NAMES[kind]}: "
                   f"{_java_type_name(value)}")


def _calculate_scope(claims: Mapping[str, Any], scope_claim_name: str) -> tuple[str, ...]:
    """``calculateScope``, as the items of Kafka's ``HashSet`` in its iteration order."""
    value = claims.get(scope_claim_name)
    if value is not None and _is_type(value, str):
        # one string is one scope item, not a space-separated list
        return () if _is_blank(value) else (_trim(value),)
    items = _claim(claims, scope_claim_name, list)
    if not items:
        return ()
    return tuple(java_hash_map_order(_trim(s) for s in items if not _is_blank(s)))


# --------------------------------------------------------------------------------------------
# The checks (OAuthBearerValidationUtils) and scope parsing (OAuthBearerScopeUtils)
# --------------------------------------------------------------------------------------------

_SCOPE_ITEM = re.compile(r"[\x23-\x5B\x5D-\x7E\x21]+")  # RFC 6749 3.3: no space, '"' or '\'


def is_valid_scope_item(scope_item: str) -> bool:
    """``OAuthBearerScopeUtils.isValidScopeItem`` (RFC 6749 section 3.3 ``scope-token``)."""
    return _SCOPE_ITEM.fullmatch(scope_item) is not None


def parse_scope(space_delimited_scope: str) -> list[str]:
    """``OAuthBearerScopeUtils.parseScope``: split on single spaces, empty items skipped.

    Raises
    ------
    OAuthBearerConfigError
        ``Invalid scope value: <item>``.
    """
    scope = []
    for item in space_delimited_scope.split(" "):
        if item:
            if not is_valid_scope_item(item):
                raise OAuthBearerConfigError(f"Invalid scope value: {item}")
            scope.append(item)
    return scope


def _confirm_non_negative(allowable_clock_skew_ms: int) -> int:
    if allowable_clock_skew_ms < 0:
        raise OAuthBearerConfigError(
            f"Allowable clock skew must not be negative: {allowable_clock_skew_ms}")
    return allowable_clock_skew_ms


def _does_not_exist_result(required: bool, claim_name: str) -> ValidationResult:
    if required:
        return ValidationResult.new_failure(f"Required claim missing: {claim_name}")
    return ValidationResult.new_success()


def validate_claim_for_existence_and_type(jwt: UnsecuredToken, required: bool, claim_name: str,
                                          *allowed_types: type) -> ValidationResult:
    """The claim must exist when ``required``; if it exists it must be one of
    ``allowed_types`` (``str``, ``Number``, ``list``)."""
    raw = jwt.raw_claim(claim_name)
    if raw is None:
        return _does_not_exist_result(required, claim_name)
    if any(t is not None and _is_type(raw, t) for t in allowed_types):
        return ValidationResult.new_success()
    return ValidationResult.new_failure(
        f"The {claim_name} claim had the incorrect type: {_java_type_name(raw)}")


def validate_issued_at(jwt: UnsecuredToken, required: bool, when_check_time_ms: int,
                       allowable_clock_skew_ms: int) -> ValidationResult:
    """``iat`` (optional unless ``required``) must not be after the check time plus skew."""
    try:
        value = jwt.issued_at()
    except TokenValidationError as e:
        return ValidationResult.new_failure(e.description, e.scope, e.openid_configuration)
    if value is None:
        return _does_not_exist_result(required, "iat")
    seconds = _to_double(value)
    # Java: 1000 * double > long + int, the long side converted to double
    if 1000 * seconds > float(when_check_time_ms + _confirm_non_negative(allowable_clock_skew_ms)):
        return ValidationResult.new_failure(
            f"The Issued At value ({_java_f(seconds)} seconds) was after the indicated time "
            f"({when_check_time_ms} ms) plus allowable clock skew ({allowable_clock_skew_ms} ms)")
    return ValidationResult.new_success()


def validate_expiration_time(jwt: UnsecuredToken, when_check_time_ms: int,
                             allowable_clock_skew_ms: int) -> ValidationResult:
    """``exp`` must exist, and the check time minus skew must be before it."""
    try:
        value = jwt.expiration_time()
    except TokenValidationError as e:
        return ValidationResult.new_failure(e.description, e.scope, e.openid_configuration)
    if value is None:
        return _does_not_exist_result(True, "exp")
    seconds = _to_double(value)
    if float(when_check_time_ms - _confirm_non_negative(allowable_clock_skew_ms)) >= 1000 * seconds:
        return ValidationResult.new_failure(
            f"The indicated time ({when_check_time_ms} ms) minus allowable clock skew "
            f"({allowable_clock_skew_ms} ms) was on or after the Expiration Time value "
            f"({_java_f(seconds)} seconds)")
    return ValidationResult.new_success()


def validate_time_consistency(jwt: UnsecuredToken) -> ValidationResult:
    """When both exist, ``exp`` must be after ``iat``."""
    try:
        issued_at = jwt.issued_at()
        expiration_time = jwt.expiration_time()
    except TokenValidationError as e:
        return ValidationResult.new_failure(e.description, e.scope, e.openid_configuration)
    if (expiration_time is not None and issued_at is not None
            and _to_double(expiration_time) <= _to_double(issued_at)):
        return ValidationResult.new_failure(
            f"The Expiration Time time ({_java_f(_to_double(expiration_time))} seconds) was not "
            f"after the Issued At time ({_java_f(_to_double(issued_at))} seconds)")
    return ValidationResult.new_success()


def validate_scope(token: UnsecuredToken, required_scope: Sequence[str] | None) -> ValidationResult:
    """Every required scope item must be in the token's scope. A failure carries the required
    scope as its failure scope (``[a, b]``), which makes the status ``insufficient_scope``."""
    if not required_scope:
        return ValidationResult.new_success()
    for item in required_scope:
        if item not in token.scope:
            # the token's scope prints as Kafka's HashSet does (see UnsecuredToken.scope_order)
            shown = token.scope_order if set(token.scope_order) == token.scope else sorted(
                token.scope)
            return ValidationResult.new_failure(
                f"The provided scope ({_java_list(shown)}) was missing a required scope "
                f"({item}).  All required scope elements: {_java_list(required_scope)}",
                _java_list(required_scope), None)
    return ValidationResult.new_success()


# --------------------------------------------------------------------------------------------
# The validator (OAuthBearerUnsecuredValidatorCallbackHandler)
# --------------------------------------------------------------------------------------------

_OPTION_PREFIX = "unsecuredValidator"
PRINCIPAL_CLAIM_NAME_OPTION = _OPTION_PREFIX + "PrincipalClaimName"
SCOPE_CLAIM_NAME_OPTION = _OPTION_PREFIX + "ScopeClaimName"
REQUIRED_SCOPE_OPTION = _OPTION_PREFIX + "RequiredScope"
ALLOWABLE_CLOCK_SKEW_MILLIS_OPTION = _OPTION_PREFIX + "AllowableClockSkewMs"

_JAVA_INT = re.compile(r"[+-]?\d+")  # Integer.parseInt: a sign, then (Unicode) decimal digits


def _parse_java_int(text: str) -> int:
    """``Integer.parseInt``; ValueError with its NumberFormatException text."""
    if _JAVA_INT.fullmatch(text):
        value = int(text)
        if _INT_MIN <= value <= _INT_MAX:
            return value
    raise ValueError(f'For input string: "{text}"')


@dataclass(frozen=True)
class ValidatorOptions:
    """The unsecured validator's options (the JAAS options of the ``OAuthBearerLoginModule``
    entry): the principal and scope claim names, the scope every token must hold, and the
    clock skew allowed on ``iat``/``exp``."""

    principal_claim_name: str = "sub"
    scope_claim_name: str = "scope"
    required_scope: tuple[str, ...] = ()
    allowable_clock_skew_ms: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "required_scope", tuple(self.required_scope))
        # (what OAuthBearerUnsecuredJws and validateIssuedAt would reject at the first token)
        if _is_blank(self.principal_claim_name):
            raise ValueError("Must specify a non-blank principal claim name")
        if _is_blank(self.scope_claim_name):
            raise ValueError("Must specify a non-blank scope claim name")
        _confirm_non_negative(self.allowable_clock_skew_ms)

    @classmethod
    def from_jaas_options(cls, options: Mapping[str, str]) -> ValidatorOptions:
        """Read Kafka's options: ``unsecuredValidatorPrincipalClaimName`` (blank: ``sub``),
        ``unsecuredValidatorScopeClaimName`` (blank: ``scope``),
        ``unsecuredValidatorRequiredScope`` (space separated; blank: none) and
        ``unsecuredValidatorAllowableClockSkewMs`` (an int >= 0; blank: 0). Values are trimmed;
        other options are ignored.

        Raises
        ------
        OAuthBearerConfigError
            (a ``ValueError``) ``For input string: "<v>"`` (not an int),
            ``Allowable clock skew millis must not be negative: <v>``, or
            ``Invalid scope value: <item>``.
        """
        principal = options.get(PRINCIPAL_CLAIM_NAME_OPTION)
        scope_claim = options.get(SCOPE_CLAIM_NAME_OPTION)
        required = options.get(REQUIRED_SCOPE_OPTION)
        skew_text = options.get(ALLOWABLE_CLOCK_SKEW_MILLIS_OPTION)
        try:
            skew = 0 if _is_blank(skew_text) else _parse_java_int(_trim(skew_text))
        except ValueError as e:
            raise OAuthBearerConfigError(str(e)) from None
        if skew < 0:
            raise OAuthBearerConfigError(
                f"Allowable clock skew millis must not be negative: {skew_text}")
        return cls(
            principal_claim_name="sub" if _is_blank(principal) else _trim(principal),
            scope_claim_name="scope" if _is_blank(scope_claim) else _trim(scope_claim),
            required_scope=() if _is_blank(required) else tuple(parse_scope(_trim(required))),
            allowable_clock_skew_ms=skew,
        )


def validate_unsecured_token(token: str, options: ValidatorOptions, now_ms: int) -> UnsecuredToken:
    """Validate a bearer token as Kafka's unsecured validator does, at ``now_ms`` (ms since the
    epoch), and return it.

    The checks, in Kafka's order (``handleCallback``): parse the unsecured JWS (principal
    and scope claim names from ``options``); the principal claim is a string; ``iat``, if
    present, is not after now plus skew; ``exp`` exists and now minus skew is before it;
    ``exp`` is after ``iat``; the token holds every required scope item.

    Raises
    ------
    TokenValidationError
        The first failure: status ``insufficient_scope`` with the required scope as ``scope``
        when a scope item is missing, ``invalid_token`` otherwise.
    """
    skew = options.allowable_clock_skew_ms
    jwt = UnsecuredToken.parse(token, options.principal_claim_name, options.scope_claim_name)
    validate_claim_for_existence_and_type(jwt, True, jwt.principal_claim_name,
                                          str).raise_if_failed()
    validate_issued_at(jwt, False, now_ms, skew).raise_if_failed()
    validate_expiration_time(jwt, now_ms, skew).raise_if_failed()
    validate_time_consistency(jwt).raise_if_failed()
    validate_scope(jwt, options.required_scope).raise_if_failed()
    return jwt
