"""SASL/OAUTHBEARER parsing and the unsecured token validator
(:mod:`kafkalog.security.oauthbearer`).

Ported from Kafka's tests with the same inputs and outcomes (apache/kafka,
``clients/src/test/java/org/apache/kafka/common/security/oauthbearer/internals/``):
``OAuthBearerClientInitialResponseTest``, ``unsecured/OAuthBearerUnsecuredJwsTest``,
``OAuthBearerValidationUtilsTest``, ``OAuthBearerScopeUtilsTest`` and
``OAuthBearerUnsecuredValidatorCallbackHandlerTest``; each ported test names its Kafka test.
Then Kafka's exact texts for each failure, the Java arithmetic and formatting the texts depend
on (checked against a JVM when one is installed), and hypothesis round trips.
"""

from __future__ import annotations

import base64
import doctest
import json
import math
import shutil
import struct
import subprocess
import time
from collections.abc import Mapping

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kafkalog.security.oauthbearer as ob
from kafkalog.decoders.message import java_double
from kafkalog.security.oauthbearer import (
    ClientInitialResponse,
    OAuthBearerConfigError,
    OAuthBearerError,
    TokenValidationError,
    UnsecuredToken,
    ValidationResult,
    ValidatorOptions,
    authorization_id_mismatch,
    json_error_response,
    parse_scope,
    validate_claim_for_existence_and_type,
    validate_expiration_time,
    validate_extensions,
    validate_issued_at,
    validate_scope,
    validate_time_consistency,
    validate_unsecured_token,
)

# --------------------------------------------------------------------------------------------
# Helpers shaped like the Java tests' (StringBuilder JSON, Base64.getUrlEncoder().withoutPadding())
# --------------------------------------------------------------------------------------------


def b64url(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).rstrip(b"=").decode()


HEADER_COMPACT_SERIALIZATION = b64url('{"alg":"none"}') + "."


def jnum(value: int | float) -> str:
    """``StringBuilder.append(Number)``: a long as digits, a double as ``Double.toString``."""
    return java_double(value) if isinstance(value, float) else str(value)


def claim_text(name: str, value: str | int | float) -> str:
    """``claimOrHeaderText`` / ``appendJsonText``: ``"name":value`` or ``"name":"value"``."""
    return f'"{name}":"{value}"' if isinstance(value, str) else f'"{name}":{jnum(value)}'


def scope_json(scope: list[str]) -> str:
    return '"scope":[' + ",".join(f'"{s}"' for s in scope) + "]"


def jws(claims_json: str, header_json: str = '{"alg":"none"}') -> str:
    return f"{b64url(header_json)}.{b64url(claims_json)}."


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def is_success(result: ValidationResult) -> bool:
    return result.success


def is_failure_with_message_and_no_failure_scope(result: ValidationResult) -> bool:
    return (not result.success and bool(result.failure_description)
            and result.failure_scope is None and result.failure_openid_config is None)


def is_failure_with_message_and_failure_scope(result: ValidationResult) -> bool:
    return (not result.success and bool(result.failure_description)
            and bool(result.failure_scope) and result.failure_openid_config is None)


# --------------------------------------------------------------------------------------------
# OAuthBearerClientInitialResponseTest
# --------------------------------------------------------------------------------------------


# Kafka: OAuthBearerClientInitialResponseTest.testBuildClientResponseToBytes
def test_build_client_response_to_bytes():
    expected = "n,,\x01auth=Bearer 123.345.567\x01nineteen=42\x01\x01"
    response = ClientInitialResponse("123.345.567", "", {"nineteen": "42"})
    assert response.to_bytes().decode() == expected


# Kafka: OAuthBearerClientInitialResponseTest.testBuildServerResponseToBytes
def test_build_server_response_to_bytes():
    server_message = "n,,\x01auth=Bearer 123.345.567\x01nineteen=42\x01\x01"
    response = ClientInitialResponse.parse(server_message.encode())
    assert response.to_bytes().decode() == server_message


# Kafka: OAuthBearerClientInitialResponseTest.testThrowsSaslExceptionOnInvalidExtensionKey
def test_throws_on_invalid_extension_key():
    with pytest.raises(OAuthBearerError, match="^Extension name 19 is invalid$"):
        ClientInitialResponse("123.345.567", "", {"19": "42"})  # keys can only be a-z


# Kafka: OAuthBearerClientInitialResponseTest.testToken
def test_token():
    response = ClientInitialResponse.parse(b"n,,\x01auth=Bearer 123.345.567\x01\x01")
    assert response.token == "123.345.567"
    assert response.authorization_id == ""


# Kafka: OAuthBearerClientInitialResponseTest.testAuthorizationId
def test_authorization_id():
    response = ClientInitialResponse.parse(b"n,a=myuser,\x01auth=Bearer 345\x01\x01")
    assert response.token == "345"
    assert response.authorization_id == "myuser"


# Kafka: OAuthBearerClientInitialResponseTest.testExtensions
def test_extensions():
    message = b"n,,\x01propA=valueA1, valueA2\x01auth=Bearer 567\x01propB=valueB\x01\x01"
    response = ClientInitialResponse.parse(message)
    assert response.token == "567"
    assert response.authorization_id == ""
    assert response.extensions["propA"] == "valueA1, valueA2"
    assert response.extensions["propB"] == "valueB"
    assert response.extensions == {"propA": "valueA1, valueA2", "propB": "valueB"}


# Kafka: OAuthBearerClientInitialResponseTest.testRfc7688Example (the RFC's token without its
# "==" padding, as base64url tokens are sent)
def test_rfc7628_example():
    message = (b"n,a=user@example.com,\x01host=server.example.com\x01port=143\x01"
               b"auth=Bearer vF9dft4qmTc2Nvb3RlckBhbHRhdmlzdGEuY29tCg\x01\x01")
    response = ClientInitialResponse.parse(message)
    assert response.token == "vF9dft4qmTc2Nvb3RlckBhbHRhdmlzdGEuY29tCg"
    assert response.authorization_id == "user@example.com"
    assert response.extensions["host"] == "server.example.com"
    assert response.extensions["port"] == "143"


# Kafka: OAuthBearerClientInitialResponseTest.testCharSupportForRfc6750Token
def test_char_support_for_rfc6750_token():
    message = (b"n,a=user@example.com,\x01host=server.example.com\x01port=143\x01"
               b"auth=Bearer vF-9.df_t4qm~Tc2Nvb3RlckBhbHR+hdmlzdGEuY29/tCg==\x01\x01")
    response = ClientInitialResponse.parse(message)
    assert response.token == "vF-9.df_t4qm~Tc2Nvb3RlckBhbHR+hdmlzdGEuY29/tCg=="
    assert response.authorization_id == "user@example.com"
    assert response.extensions["host"] == "server.example.com"
    assert response.extensions["port"] == "143"


# Kafka: OAuthBearerClientInitialResponseTest.testNoExtensionsFromByteArray
def test_no_extensions_from_byte_array():
    message = (b"n,a=user@example.com,\x01"
               b"auth=Bearer vF9dft4qmTc2Nvb3RlckBhbHRhdmlzdGEuY29tCg\x01\x01")
    response = ClientInitialResponse.parse(message)
    assert response.token == "vF9dft4qmTc2Nvb3RlckBhbHRhdmlzdGEuY29tCg"
    assert response.authorization_id == "user@example.com"
    assert response.extensions == {}


# Kafka: OAuthBearerClientInitialResponseTest.testNoExtensionsFromTokenAndNullExtensions
def test_no_extensions_from_token_and_null_extensions():
    response = ClientInitialResponse("token", "", None)  # type: ignore[arg-type]
    assert response.extensions == {}


# Kafka: OAuthBearerClientInitialResponseTest.testValidateNullExtensions
def test_validate_null_extensions():
    validate_extensions(None)


@pytest.mark.parametrize("message", [
    b"",
    b"y,,\x01auth=Bearer t\x01\x01",  # only "n": no channel binding
    b"n,,auth=Bearer t\x01\x01",
    b"n,,\x01auth=Bearer t\x01",  # no final \x01
    b"n,,\x01auth=Bearer t\x01\x01\x01",
    b"n,a=a=b,\x01auth=Bearer t\x01\x01",  # "=" only in =2C / =3D
    b"n,a=a,b,\x01auth=Bearer t\x01\x01",
    b"n,a=,\x01auth=Bearer t\x01\x01",
    b"n,,\x011x=y\x01auth=Bearer t\x01\x01",  # key [A-Za-z]+
    b"n,,\x01x=\x01auth=Bearer t\x01\x01",  # empty value
    b"n,,\x01x=caf\xc3\xa9\x01auth=Bearer t\x01\x01",  # value is ASCII
    b"n,,\x01x=\xff\x01auth=Bearer t\x01\x01",  # not UTF-8
])
def test_invalid_client_first_message(message):
    with pytest.raises(OAuthBearerError, match="^Invalid OAUTHBEARER client first message$"):
        ClientInitialResponse.parse(message)


def test_client_first_message_failures():
    for message in (b"n,,\x01\x01", b"n,,\x01host=h\x01\x01"):  # (no pairs is the shape)
        with pytest.raises(OAuthBearerError) as e:
            ClientInitialResponse.parse(message)
        assert str(e.value) == "Invalid OAUTHBEARER client first message: 'auth' not specified"
    for auth in (b"Bearer", b"Bearer ", b"Bearer a b", b"Bearer a=b", b"Bearer\ta", b"Be-arer a"):
        with pytest.raises(OAuthBearerError) as e:
            ClientInitialResponse.parse(b"n,,\x01auth=" + auth + b"\x01\x01")
        assert str(e.value) == "Invalid OAUTHBEARER client first message: invalid 'auth' format"
    with pytest.raises(OAuthBearerError) as e:
        ClientInitialResponse.parse(b"n,,\x01auth=Basic dXNlcg==\x01\x01")
    assert str(e.value) == "Invalid scheme in OAUTHBEARER client first message: Basic"


def test_client_first_message_details():
    # the scheme is case-insensitive, spaces may repeat; the authzid keeps its escapes
    r = ClientInitialResponse.parse(b"n,a=x=2Cy=3D,\x01auth=bEaReR   tok==\x01\x01")
    assert (r.token, r.authorization_id) == ("tok==", "x=2Cy=3D")
    # a value may hold "=" (split at the first one) and spaces/tabs/CR/LF; a repeated key
    # keeps its last value; "Auth" is an ordinary extension
    r = ClientInitialResponse.parse(
        b"n,,\x01k=a=b\t c\r\n\x01k=last\x01Auth=x\x01auth=Bearer t\x01\x01")
    assert r.extensions == {"k": "last", "Auth": "x"}
    assert ClientInitialResponse.parse(bytearray(b"n,,\x01auth=Bearer t\x01\x01")).token == "t"


def test_extension_validation_texts():
    with pytest.raises(OAuthBearerError) as e:
        validate_extensions({"auth": "x"})
    assert str(e.value) == "Extension name auth is invalid"
    with pytest.raises(OAuthBearerError) as e:
        validate_extensions({"a1": "x"})
    assert str(e.value) == "Extension name a1 is invalid"
    with pytest.raises(OAuthBearerError) as e:
        validate_extensions({"ab": "x\x01y"})
    assert str(e.value) == "Extension value (x\x01y) for extension ab is invalid"
    with pytest.raises(OAuthBearerError) as e:
        validate_extensions({"ab": ""})
    assert str(e.value) == "Extension value () for extension ab is invalid"
    validate_extensions({"ab": "x y\t!~"})


def test_authorization_id_mismatch():
    assert authorization_id_mismatch("", "alice") is None
    assert authorization_id_mismatch("alice", "alice") is None
    assert authorization_id_mismatch("bob", "alice") == (
        "Authentication failed: Client requested an authorization id (bob) that is different "
        "from the token's principal name (alice)")


# --------------------------------------------------------------------------------------------
# OAuthBearerUnsecuredJwsTest
# --------------------------------------------------------------------------------------------


def compact_serialization(subject: str | None, issued_at: int | None,
                          expiration_time: int | None, scope: list[str] | None) -> str:
    """``OAuthBearerUnsecuredJwsTest.compactSerialization``."""
    parts = [
        f'"sub":"{subject}"' if subject is not None else None,
        f'"iat":{issued_at}' if issued_at is not None else None,
        f'"exp":{expiration_time}' if expiration_time is not None else None,
        scope_json(scope) if scope is not None else None,
    ]
    claims_json = "{" + ",".join(p for p in parts if p is not None) + "}"
    return jws(claims_json)


# Kafka: OAuthBearerUnsecuredJwsTest.validClaims
def test_valid_claims():
    issued_at_seconds = 100.1
    expiration_time_seconds = 300.3
    claims = ("{" + claim_text("sub", "SUBJECT") + "," + claim_text("iat", issued_at_seconds)
              + "," + claim_text("exp", expiration_time_seconds) + "}")
    compact = HEADER_COMPACT_SERIALIZATION + b64url(claims) + "."
    test_jwt = UnsecuredToken.parse(compact, "sub", "scope")
    assert test_jwt.value == compact
    assert test_jwt.principal_claim_name == "sub"
    assert len(test_jwt.header) == 1
    assert test_jwt.header["alg"] == "none"
    assert test_jwt.scope_claim_name == "scope"
    assert test_jwt.expiration_time() == expiration_time_seconds
    assert test_jwt.is_claim_type("exp", ob.Number)
    assert test_jwt.issued_at() == issued_at_seconds
    assert test_jwt.subject() == "SUBJECT"
    # (Math.round(seconds * 1000))
    assert (test_jwt.lifetime_ms, test_jwt.start_time_ms) == (300300, 100100)


# Kafka: OAuthBearerUnsecuredJwsTest.validCompactSerialization
def test_valid_compact_serialization():
    subject = "foo"
    issued_at = 100
    expiration_time = issued_at + 60 * 60
    scope = ["scopeValue1", "scopeValue2"]
    valid = compact_serialization(subject, issued_at, expiration_time, scope)
    token = UnsecuredToken.parse(valid, "sub", "scope")
    assert len(token.header) == 1
    assert token.header["alg"] == "none"
    assert len(token.claims) == 4
    assert token.claims["sub"] == subject
    assert token.principal_name == subject
    assert token.claims["iat"] == issued_at
    assert token.claims["exp"] == expiration_time
    assert token.lifetime_ms == expiration_time * 1000
    assert token.claims["scope"] == scope
    assert token.scope == frozenset(scope)
    assert len(token.splits) == 3
    assert token.splits[0] == valid.split(".")[0]
    assert token.splits[1] == valid.split(".")[1]
    assert token.splits[2] == ""


# Kafka: OAuthBearerUnsecuredJwsTest.missingPrincipal
def test_missing_principal():
    valid = compact_serialization(None, 100, None, ["scopeValue1", "scopeValue2"])
    with pytest.raises(TokenValidationError):
        UnsecuredToken.parse(valid, "sub", "scope")


# Kafka: OAuthBearerUnsecuredJwsTest.blankPrincipalName
def test_blank_principal_name():
    valid = compact_serialization("   ", 100, 100 + 60 * 60, ["scopeValue1", "scopeValue2"])
    with pytest.raises(TokenValidationError) as e:
        UnsecuredToken.parse(valid, "sub", "scope")
    assert e.value.description == "No principal name in JWT claim: sub"


# --------------------------------------------------------------------------------------------
# OAuthBearerValidationUtilsTest
# --------------------------------------------------------------------------------------------


# Kafka: OAuthBearerValidationUtilsTest.validateClaimForExistenceAndType
def test_validate_claim_for_existence_and_type():
    claim_name = "foo"
    for exists in (None, True, False):
        use_error_value = exists is None
        for required in (True, False):
            sb = "{" + claim_text("exp", 100) + "," + claim_text("sub", "principalName")
            if use_error_value:
                sb += "," + claim_text(claim_name, 1)
            elif exists:
                sb += "," + claim_text(claim_name, claim_name)
            sb += "}"
            test_jwt = UnsecuredToken.parse(HEADER_COMPACT_SERIALIZATION + b64url(sb) + ".")
            result = validate_claim_for_existence_and_type(test_jwt, required, claim_name, str)
            if use_error_value or (required and not exists):
                assert is_failure_with_message_and_no_failure_scope(result)
            else:
                assert is_success(result)
            if use_error_value:
                assert result.failure_description == "The foo claim had the incorrect type: Integer"
            elif required and not exists:
                assert result.failure_description == "Required claim missing: foo"


# Kafka: OAuthBearerValidationUtilsTest.validateIssuedAt
def test_validate_issued_at():
    now = now_ms()
    now_claim_value = now / 1000
    for exists in (True, False):
        sb = "{" + claim_text("exp", now_claim_value) + "," + claim_text("sub", "principalName")
        if exists:
            sb += "," + claim_text("iat", now_claim_value)
        sb += "}"
        test_jwt = UnsecuredToken.parse(HEADER_COMPACT_SERIALIZATION + b64url(sb) + ".")
        for required in (True, False):
            for skew in (0, 5, 10, 20):
                for offset in (-10, 0, 10):
                    when = now + offset
                    result = validate_issued_at(test_jwt, required, when, skew)
                    if required and not exists:
                        assert is_failure_with_message_and_no_failure_scope(result)
                    elif not required and not exists:
                        assert is_success(result)
                    elif now_claim_value * 1000 > when + skew:  # issued in future
                        assert is_failure_with_message_and_no_failure_scope(result)
                    else:
                        assert is_success(result)


# Kafka: OAuthBearerValidationUtilsTest.validateExpirationTime
def test_validate_expiration_time():
    now = now_ms()
    now_claim_value = now / 1000
    sb = "{" + claim_text("exp", now_claim_value) + "," + claim_text("sub", "principalName") + "}"
    test_jwt = UnsecuredToken.parse(HEADER_COMPACT_SERIALIZATION + b64url(sb) + ".")
    for skew in (0, 5, 10, 20):
        for offset in (-10, 0, 10):
            when = now + offset
            result = validate_expiration_time(test_jwt, when, skew)
            if when - skew >= now_claim_value * 1000:  # expired
                assert is_failure_with_message_and_no_failure_scope(result)
            else:
                assert is_success(result)


# Kafka: OAuthBearerValidationUtilsTest.validateExpirationTimeAndIssuedAtConsistency
def test_validate_expiration_time_and_issued_at_consistency():
    now_claim_value = now_ms() / 1000
    for issued_at_exists in (True, False):
        if not issued_at_exists:
            sb = ("{" + claim_text("exp", now_claim_value) + ","
                  + claim_text("sub", "principalName") + "}")
            test_jwt = UnsecuredToken.parse(HEADER_COMPACT_SERIALIZATION + b64url(sb) + ".")
            assert is_success(validate_time_consistency(test_jwt))
        else:
            for offset in (-1, 0, 1):
                sb = ("{" + claim_text("iat", now_claim_value) + ","
                      + claim_text("exp", now_claim_value + offset) + ","
                      + claim_text("sub", "principalName") + "}")
                test_jwt = UnsecuredToken.parse(HEADER_COMPACT_SERIALIZATION + b64url(sb) + ".")
                result = validate_time_consistency(test_jwt)
                if offset <= 0:
                    assert is_failure_with_message_and_no_failure_scope(result)
                else:
                    assert is_success(result)


# Kafka: OAuthBearerValidationUtilsTest.validateScope
def test_validate_scope():
    now_claim_value = now_ms() / 1000
    no_scope: list[str] = []
    scope1 = ["scope1"]
    scope1_and_2 = ["scope1", "scope2"]
    for actual_scope_exists in (True, False):
        scopes = [no_scope, scope1, scope1_and_2] if actual_scope_exists else [None]
        for actual_scope in scopes:
            for required_scope_exists in (True, False):
                required_scopes = ([no_scope, scope1, scope1_and_2] if required_scope_exists
                                   else [None])
                for required_scope in required_scopes:
                    sb = ("{" + claim_text("exp", now_claim_value) + ","
                          + claim_text("sub", "principalName"))
                    if actual_scope is not None:
                        sb += "," + scope_json(actual_scope)
                    sb += "}"
                    test_jwt = UnsecuredToken.parse(
                        HEADER_COMPACT_SERIALIZATION + b64url(sb) + ".", "sub", "scope")
                    result = validate_scope(test_jwt, required_scope)
                    if not required_scope_exists or not required_scope:
                        assert is_success(result)
                    elif not actual_scope_exists or len(actual_scope) < len(required_scope):
                        assert is_failure_with_message_and_failure_scope(result)
                    else:
                        assert is_success(result)


# --------------------------------------------------------------------------------------------
# OAuthBearerScopeUtilsTest
# --------------------------------------------------------------------------------------------


# Kafka: OAuthBearerScopeUtilsTest.validScope
def test_valid_scope():
    for valid_scope in ("", "   ", "scope1", " scope1 ", "scope1 Scope2", "scope1   Scope2"):
        parsed = parse_scope(valid_scope)
        if not valid_scope.strip():
            assert parsed == []
        elif "Scope2" in valid_scope:
            assert parsed == ["scope1", "Scope2"]
        else:
            assert parsed == ["scope1"]


# Kafka: OAuthBearerScopeUtilsTest.invalidScope
def test_invalid_scope():
    for invalid_scope in ('"foo', "\\foo"):
        with pytest.raises(OAuthBearerConfigError) as e:
            parse_scope(invalid_scope)
        assert str(e.value) == f"Invalid scope value: {invalid_scope}"
    assert isinstance(OAuthBearerConfigError("x"), ValueError)


# --------------------------------------------------------------------------------------------
# OAuthBearerUnsecuredValidatorCallbackHandlerTest
# --------------------------------------------------------------------------------------------

UNSECURED_JWT_HEADER_JSON = "{" + claim_text("alg", "none") + "}"
MOCK_TIME_MS = now_ms()  # MockTime(): the wall clock when the test class loads
PRINCIPAL_CLAIM_VALUE = "username"
PRINCIPAL_CLAIM_TEXT = claim_text("principal", PRINCIPAL_CLAIM_VALUE)
SUB_CLAIM_TEXT = claim_text("sub", PRINCIPAL_CLAIM_VALUE)
BAD_PRINCIPAL_CLAIM_TEXT = claim_text("principal", 1)
LIFETIME_SECONDS_TO_USE = 1000 * 60 * 60


def exp_claim_text(lifetime_seconds: int) -> str:
    return claim_text("exp", MOCK_TIME_MS / 1000.0 + lifetime_seconds)


EXPIRATION_TIME_CLAIM_TEXT = exp_claim_text(LIFETIME_SECONDS_TO_USE)
TOO_EARLY_EXPIRATION_TIME_CLAIM_TEXT = exp_claim_text(0)
ISSUED_AT_CLAIM_TEXT = claim_text("iat", MOCK_TIME_MS / 1000.0)
SCOPE_CLAIM_TEXT = claim_text("scope", "scope1")
MODULE_OPTIONS_MAP_NO_SCOPE_REQUIRED = {
    "unsecuredValidatorPrincipalClaimName": "principal",
    "unsecuredValidatorAllowableClockSkewMs": "1",
}
MODULE_OPTIONS_MAP_REQUIRE_EXISTING_SCOPE = {"unsecuredValidatorRequiredScope": "scope1"}
MODULE_OPTIONS_MAP_REQUIRE_ADDITIONAL_SCOPE = {"unsecuredValidatorRequiredScope": "scope1 scope2"}


def validation_result(header_json: str, claims_json: str,
                      options: Mapping[str, str]) -> UnsecuredToken | TokenValidationError:
    """The handler's outcome: the token, or the error its callback would carry (the handler
    uses the system clock, as in Kafka's test)."""
    token = jws(claims_json, header_json)
    try:
        return validate_unsecured_token(token, ValidatorOptions.from_jaas_options(options),
                                        now_ms())
    except TokenValidationError as e:
        return e


def confirm_fails_validation(header_json: str, claims_json: str, options: Mapping[str, str],
                             optional_failure_scope: str | None = None) -> TokenValidationError:
    result = validation_result(header_json, claims_json, options)
    assert isinstance(result, TokenValidationError)
    assert result.openid_configuration is None
    if optional_failure_scope is None:
        assert result.status == "invalid_token"
        assert result.scope is None
    else:
        assert result.status == "insufficient_scope"
        assert result.scope == optional_failure_scope
    return result


# Kafka: OAuthBearerUnsecuredValidatorCallbackHandlerTest.validToken
def test_valid_token():
    for include_optional_issued_at_claim in (True, False):
        claims_json = ("{" + PRINCIPAL_CLAIM_TEXT + "," + EXPIRATION_TIME_CLAIM_TEXT
                       + ("," + ISSUED_AT_CLAIM_TEXT if include_optional_issued_at_claim else "")
                       + "}")
        result = validation_result(UNSECURED_JWT_HEADER_JSON, claims_json,
                                   MODULE_OPTIONS_MAP_NO_SCOPE_REQUIRED)
        assert isinstance(result, UnsecuredToken)
        assert result.principal_name == PRINCIPAL_CLAIM_VALUE


# Kafka: OAuthBearerUnsecuredValidatorCallbackHandlerTest.badOrMissingPrincipal
def test_bad_or_missing_principal():
    for exists in (True, False):
        claims_json = ("{" + EXPIRATION_TIME_CLAIM_TEXT
                       + ("," + BAD_PRINCIPAL_CLAIM_TEXT if exists else "") + "}")
        e = confirm_fails_validation(UNSECURED_JWT_HEADER_JSON, claims_json,
                                     MODULE_OPTIONS_MAP_NO_SCOPE_REQUIRED)
        assert e.description == ("The 'principal' claim was not of type String: Integer" if exists
                                 else "No principal name in JWT claim: principal")


# Kafka: OAuthBearerUnsecuredValidatorCallbackHandlerTest.tooEarlyExpirationTime
def test_too_early_expiration_time():
    claims_json = ("{" + PRINCIPAL_CLAIM_TEXT + "," + ISSUED_AT_CLAIM_TEXT + ","
                   + TOO_EARLY_EXPIRATION_TIME_CLAIM_TEXT + "}")
    confirm_fails_validation(UNSECURED_JWT_HEADER_JSON, claims_json,
                             MODULE_OPTIONS_MAP_NO_SCOPE_REQUIRED)


# Kafka: OAuthBearerUnsecuredValidatorCallbackHandlerTest.includesRequiredScope
def test_includes_required_scope():
    claims_json = ("{" + SUB_CLAIM_TEXT + "," + EXPIRATION_TIME_CLAIM_TEXT + ","
                   + SCOPE_CLAIM_TEXT + "}")
    result = validation_result(UNSECURED_JWT_HEADER_JSON, claims_json,
                               MODULE_OPTIONS_MAP_REQUIRE_EXISTING_SCOPE)
    assert isinstance(result, UnsecuredToken)
    assert result.scope == {"scope1"}


# Kafka: OAuthBearerUnsecuredValidatorCallbackHandlerTest.missingRequiredScope
def test_missing_required_scope():
    claims_json = ("{" + SUB_CLAIM_TEXT + "," + EXPIRATION_TIME_CLAIM_TEXT + ","
                   + SCOPE_CLAIM_TEXT + "}")
    e = confirm_fails_validation(UNSECURED_JWT_HEADER_JSON, claims_json,
                                 MODULE_OPTIONS_MAP_REQUIRE_ADDITIONAL_SCOPE, "[scope1, scope2]")
    assert e.json_error() == '{"status":"insufficient_scope", "scope":"[scope1, scope2]"}'


# --------------------------------------------------------------------------------------------
# The validator's outcomes and Kafka's texts
# --------------------------------------------------------------------------------------------

NOW = 1_700_000_000_000
OPTIONS = ValidatorOptions()


def failure(token: str, options: ValidatorOptions = OPTIONS,
            now: int = NOW) -> TokenValidationError:
    with pytest.raises(TokenValidationError) as e:
        validate_unsecured_token(token, options, now)
    return e.value


def test_expired_token_is_invalid_token():
    token = jws('{"sub":"alice","exp":1700000000}')
    e = failure(token)
    assert (e.status, e.scope) == ("invalid_token", None)
    assert e.description == str(e) == (
        "The indicated time (1700000000000 ms) minus allowable clock skew (0 ms) was on or after "
        "the Expiration Time value (1700000000.000000 seconds)")
    assert e.json_error() == '{"status":"invalid_token"}'
    # one ms earlier it is valid; the skew moves the boundary
    assert validate_unsecured_token(token, OPTIONS, NOW - 1).lifetime_ms == NOW
    assert validate_unsecured_token(token, ValidatorOptions(allowable_clock_skew_ms=1),
                                    NOW).principal_name == "alice"


def test_missing_required_scope_is_insufficient_scope():
    options = ValidatorOptions(required_scope=("read", "write"))
    e = failure(jws('{"sub":"alice","exp":1800000000,"scope":["read"]}'), options)
    assert (e.status, e.scope) == ("insufficient_scope", "[read, write]")
    assert e.description == ("The provided scope ([read]) was missing a required scope (write).  "
                             "All required scope elements: [read, write]")
    assert e.json_error() == '{"status":"insufficient_scope", "scope":"[read, write]"}'
    e = failure(jws('{"sub":"alice","exp":1800000000}'), options)
    assert e.description.startswith("The provided scope ([]) was missing a required scope (read)")
    token = validate_unsecured_token(
        jws('{"sub":"alice","exp":1800000000,"scope":["write"," read ","","other"]}'), options, NOW)
    assert token.scope == {"read", "write", "other"}


def test_alg_other_than_none_is_invalid():
    for header in ('{"alg":"HS256"}', '{"alg":"None"}', '{"alg":1}', '{"alg":null}',
                   '{"alg":["none"]}'):
        e = failure(jws('{"sub":"alice","exp":1800000000}', header))
        assert (e.status, e.description) == (
            "invalid_token", "Unsecured JWS must have 'none' for an algorithm")
    e = failure(jws('{"sub":"alice","exp":1800000000}', '{"typ":"JWT"}'))
    assert (e.status, e.description) == ("invalid_token", "JWS header must have an Algorithm value")


THREE_PARTS = ("Unsecured JWS compact serializations must have 3 dot-separated Base64URL-encoded "
               "values")


@pytest.mark.parametrize("token, description", [
    (jws('{"sub":"a","exp":1800000000}') + "c2ln",
     "Unsecured JWS must not contain a digital signature"),
    (b64url('{"alg":"none"}') + "..", "Malformed compact serialization contains '..'"),
    ("a..b", "Malformed compact serialization contains '..'"),
    (b64url('{"alg":"none"}') + "." + b64url('{"sub":"a","exp":1800000000}'),
     THREE_PARTS),
    (jws('{"sub":"a","exp":1800000000}') + "x.",
     THREE_PARTS),
    (jws('{"sub":"a","exp":1800000000}') + ".", "Malformed compact serialization contains '..'"),
    ("", THREE_PARTS),
    (".", THREE_PARTS),
    ("e+J.e30.", "malformed Base64 URL encoded value"),  # the standard alphabet's + and /
    ("ey/J.e30.", "malformed Base64 URL encoded value"),
    ("e.e30.", "malformed Base64 URL encoded value"),  # a dangling single char
    ("e3=.e30.", "malformed Base64 URL encoded value"),  # wrong padding
    ("e30.e30==.", "malformed Base64 URL encoded value"),
    (b64url("{") + ".e30.", "malformed JSON"),
    (b64url('{"alg":"none",}') + ".e30.", "malformed JSON"),
    (b64url('{"alg":NaN}') + ".e30.", "malformed JSON"),
    (base64.urlsafe_b64encode(b"\xff\xfe\xfd").decode() + ".e30.", "malformed JSON"),
    (jws("{}"), "No expiration time in JWT"),
    (jws('{"sub":"a"}'), "No expiration time in JWT"),
    (jws('{"exp":1800000000}'), "No principal name in JWT claim: sub"),
    (jws('{"sub":" \\t ","exp":1800000000}'), "No principal name in JWT claim: sub"),
    (jws('{"sub":"a","exp":"1800000000"}'), "The 'exp' claim was not of type Number: String"),
    (jws('{"sub":"a","exp":[1]}'), "The 'exp' claim was not of type Number: ArrayList"),
    (jws('{"sub":"a","exp":1800000000,"iat":true}'),
     "The 'iat' claim was not of type Number: String"),
    (jws('{"sub":["a"],"exp":1800000000}'), "The 'sub' claim was not of type String: ArrayList"),
    (jws('{"sub":2147483648,"exp":1800000000}'), "The 'sub' claim was not of type String: Long"),
    (jws('{"sub":1e3,"exp":1800000000}'), "The 'sub' claim was not of type String: Double"),
    (jws('{"sub":"a","exp":1800000000,"scope":5}'),
     "The 'scope' claim was not of type List: Integer"),
    (jws('{"sub":"a","exp":1800000000,"iat":1700000000.0015}'),
     "The Issued At value (1700000000.001500 seconds) was after the indicated time "
     "(1700000000000 ms) plus allowable clock skew (0 ms)"),
])
def test_invalid_token_texts(token, description):
    e = failure(token)
    assert (e.status, e.scope, e.description) == ("invalid_token", None, description)


def test_time_consistency_text():
    # exp <= iat passes the iat and exp checks only within the clock skew
    token = jws('{"sub":"a","exp":1700000000.5,"iat":1700000000.5}')
    e = failure(token, ValidatorOptions(allowable_clock_skew_ms=1), now=1_700_000_000_499)
    assert (e.status, e.description) == (
        "invalid_token", "The Expiration Time time (1700000000.500000 seconds) was not after the "
        "Issued At time (1700000000.500000 seconds)")


def test_token_details():
    # Jackson's view of the claims: true/null/objects become text, array elements their text
    token = validate_unsecured_token(jws(
        '{"sub":"alice","exp":1800000000.0005,"iat":1700000000,"nbf":5,"admin":true,'
        '"x":null,"o":{"a":1},"l":[1,1.5,1e20,true,null,{"a":1},"s"]} trailing'), OPTIONS, NOW)
    assert token.claims["admin"] == "true" and token.claims["x"] == "null"
    assert token.claims["o"] == ""
    assert token.claims["l"] == ["1", "1.5", "1.0E20", "true", "null", "", "s"]
    assert token.lifetime_ms == 1_800_000_000_001  # Math.round(1800000000000.5): half up
    # the start time is iat, as Kafka's OAuthBearerUnsecuredJws (which ignores nbf)
    assert token.start_time_ms == token.issued_at_ms == 1_700_000_000_000
    # a string scope is one item (not split), trimmed
    token = validate_unsecured_token(jws('{"sub":"a","exp":1800000000,"scope":" a b "}'),
                                     OPTIONS, NOW)
    assert token.scope == {"a b"}
    assert token.principal_name == "a"
    # the principal is kept as sent (not trimmed); other claim names
    options = ValidatorOptions.from_jaas_options({"unsecuredValidatorPrincipalClaimName": " user ",
                                                  "unsecuredValidatorScopeClaimName": "roles"})
    token = validate_unsecured_token(
        jws('{"user":" bob ","exp":1800000000,"roles":["r"],"scope":["s"]}'), options, NOW)
    assert (token.principal_name, token.scope, token.principal_claim_name) == (" bob ", {"r"},
                                                                               "user")
    # padding is allowed, UTF-8 text and a byte order mark too
    padded = (base64.urlsafe_b64encode(b'{"alg":"none"}').decode() + "."
              + base64.urlsafe_b64encode('\ufeff{"sub":"é","exp":1800000000}'.encode()).decode()
              + ".")
    assert validate_unsecured_token(padded, OPTIONS, NOW).principal_name == "é"


def test_validator_options_from_jaas_options():
    assert ValidatorOptions.from_jaas_options({}) == ValidatorOptions()
    assert ValidatorOptions.from_jaas_options({
        "unsecuredValidatorPrincipalClaimName": "  ",
        "unsecuredValidatorScopeClaimName": "",
        "unsecuredValidatorRequiredScope": " a  b ",
        "unsecuredValidatorAllowableClockSkewMs": " 10 ",
        "unsecuredLoginStringClaim_sub": "ignored",
    }) == ValidatorOptions("sub", "scope", ("a", "b"), 10)
    for bad, text in (("abc", 'For input string: "abc"'),
                      (" 1.5 ", 'For input string: "1.5"'),
                      ("2147483648", 'For input string: "2147483648"'),
                      ("-1", "Allowable clock skew millis must not be negative: -1"),
                      (" -5", "Allowable clock skew millis must not be negative:  -5")):
        with pytest.raises(OAuthBearerConfigError) as e:
            ValidatorOptions.from_jaas_options({"unsecuredValidatorAllowableClockSkewMs": bad})
        assert str(e.value) == text
        assert isinstance(e.value, ValueError)
    with pytest.raises(ValueError, match=r'^Invalid scope value: a"b$'):
        ValidatorOptions.from_jaas_options({"unsecuredValidatorRequiredScope": 'x a"b'})
    with pytest.raises(ValueError, match="^Allowable clock skew must not be negative: -1$"):
        ValidatorOptions(allowable_clock_skew_ms=-1)
    with pytest.raises(ValueError, match="^Must specify a non-blank principal claim name$"):
        ValidatorOptions(principal_claim_name=" ")
    assert ValidatorOptions(required_scope=["a"]).required_scope == ("a",)  # type: ignore[arg-type]


def test_json_error_response():
    assert json_error_response("invalid_token") == '{"status":"invalid_token"}'
    assert json_error_response("invalid_token", None, "https://x/.well-known") == (
        '{"status":"invalid_token", "openid-configuration":"https://x/.well-known"}')
    assert TokenValidationError("d", "[a]", "c").json_error() == (
        '{"status":"insufficient_scope", "scope":"[a]", "openid-configuration":"c"}')


def test_module_examples():
    result = doctest.testmod(ob, raise_on_error=False, verbose=False)
    assert result.attempted > 0 and result.failed == 0


# --------------------------------------------------------------------------------------------
# The Java arithmetic and formatting behind the texts
# --------------------------------------------------------------------------------------------


def test_java_helpers():
    assert [ob._java_round(x) for x in (2.5, -2.5, 0.49999999999999994, math.nan)] == [3, -2, 0, 0]
    assert ob._java_round(math.inf) == 2**63 - 1 and ob._java_round(-1e300) == -(2**63)
    assert [ob._java_f(x) for x in (5e-7, 100.1, 1e20, -0.0, math.inf)] == [
        "0.000001", "100.100000", "100000000000000000000.000000", "-0.000000", "Infinity"]
    # HashSet<String> iteration order, as Kafka prints a token's scope
    assert ob._java_list(ob.java_hash_map_order(["scope1", "scope2", "a", "Zz"])) == (
        "[Zz, a, scope1, scope2]")


_JAVA_CHECK = """
import java.util.*;
public class Check {
  public static void main(String[] a) throws Exception {
    java.io.BufferedReader r = new java.io.BufferedReader(new java.io.InputStreamReader(System.in));
    for (String line; (line = r.readLine()) != null;) {
      if (line.startsWith("D ")) {
        double d = Double.longBitsToDouble(Long.parseLong(line.substring(2)));
        System.out.println(String.format("%f", d) + " " + Math.round(d * 1000));
      } else {
        Set<String> s = new HashSet<>();  // then add, as OAuthBearerUnsecuredJws.calculateScope
        for (String x : line.substring(2).split(" ")) s.add(x);
        System.out.println(s);
      }
    }
  }
}
"""


@pytest.mark.skipif(shutil.which("java") is None, reason="needs a JDK (java runs a source file)")
def test_java_helpers_match_a_jvm(tmp_path):
    import random

    rnd = random.Random(7)
    doubles = [5e-7, 1.25e-6, 100.1, 300.3, 2.5e-4, 1700000000.0015, 0.0005, 1e15, 2.5, -2.5]
    doubles += [round(rnd.uniform(0, 4e9), rnd.randint(0, 6)) for _ in range(300)]
    doubles += [rnd.randint(0, 10**7) * 5e-7 for _ in range(300)]
    alphabet = "abcdefghijklmnopqrstuvwxyzAB0123456789:/._-!#~"
    sets = [[("".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 12))))
             for _ in range(rnd.randint(1, 40))] for _ in range(200)]
    src = tmp_path / "Check.java"
    src.write_text(_JAVA_CHECK)
    lines = [f"D {struct.unpack('<q', struct.pack('<d', d))[0]}" for d in doubles]
    lines += ["S " + " ".join(s) for s in sets]
    out = subprocess.run(["java", str(src)], input="\n".join(lines) + "\n", capture_output=True,
                         text=True, check=True, timeout=300).stdout.splitlines()
    expected = [f"{ob._java_f(d)} {ob._java_round(d * 1000)}" for d in doubles]
    expected += [ob._java_list(ob.java_hash_map_order(s)) for s in sets]
    assert out == expected


# --------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------

# RFC 6749 scope-token chars (OAuthBearerScopeUtils): %x21 / %x23-5B / %x5D-7E
SCOPE_CHARS = "".join(chr(c) for c in [0x21, *range(0x23, 0x5C), *range(0x5D, 0x7F)])
scope_items = st.text(st.sampled_from(SCOPE_CHARS), min_size=1, max_size=12)
principals = st.text(st.characters(exclude_categories=("Cc", "Cs")), min_size=1,
                     max_size=30).filter(lambda s: s.strip(" ") != "")


@settings(max_examples=200, deadline=None)
@given(
    principal=principals,
    claim_name=st.sampled_from(["sub", "principal", "user_name"]),
    scope=st.lists(scope_items, max_size=8),
    as_string=st.booleans(),
    exp_ms=st.integers(NOW + 1, 4_000_000_000_000),
    iat_ms=st.none() | st.integers(0, NOW - 1),
    fractional=st.booleans(),
    ensure_ascii=st.booleans(),
    data=st.data(),
)
def test_built_tokens_validate(principal, claim_name, scope, as_string, exp_ms, iat_ms,
                               fractional, ensure_ascii, data):
    def seconds(ms: int) -> int | float:
        return ms / 1000 if fractional else ms // 1000

    if not fractional:
        exp_ms = max(exp_ms // 1000 * 1000, NOW + 1000)
        iat_ms = None if iat_ms is None else iat_ms // 1000 * 1000
    claims: dict = {claim_name: principal, "exp": seconds(exp_ms)}
    if iat_ms is not None:
        claims["iat"] = seconds(iat_ms)
    if scope:
        # one string is one scope item; a list is its items
        claims["scope"] = scope[0] if as_string else scope
    expected_scope = ({scope[0]} if as_string else set(scope)) if scope else set()
    token = (b64url('{"alg":"none"}') + "."
             + base64.urlsafe_b64encode(json.dumps(claims, ensure_ascii=ensure_ascii).encode())
             .rstrip(b"=").decode() + ".")
    required = data.draw(st.lists(st.sampled_from(sorted(expected_scope)), unique=True)
                         if expected_scope else st.just([]))
    options = ValidatorOptions(principal_claim_name=claim_name, required_scope=tuple(required))
    t = validate_unsecured_token(token, options, NOW)
    assert t.value == token
    assert t.principal_name == principal
    assert t.scope == expected_scope
    assert t.lifetime_ms == exp_ms
    assert t.issued_at_ms == t.start_time_ms == iat_ms
    # a required item the token lacks: insufficient_scope with the required list as scope
    missing = data.draw(scope_items.filter(lambda s: s not in expected_scope))
    with pytest.raises(TokenValidationError) as e:
        validate_unsecured_token(
            token, ValidatorOptions(principal_claim_name=claim_name,
                                    required_scope=(*required, missing)), NOW)
    assert e.value.status == "insufficient_scope"
    assert e.value.scope == "[" + ", ".join([*required, missing]) + "]"
    # and once expired it is an invalid token (1 ms after: exp_ms / 1000 * 1000 may be a hair
    # above exp_ms as a double, and Kafka compares now >= 1000 * exp in doubles)
    with pytest.raises(TokenValidationError) as e:
        validate_unsecured_token(token, options, exp_ms if not fractional else exp_ms + 1)
    assert (e.value.status, e.value.scope) == ("invalid_token", None)


# ClientInitialResponse: saslname chars (US-ASCII but NUL, "=", ","), or the =2C / =3D escapes
SASLNAME_CHARS = "".join(chr(c) for c in range(1, 0x80) if chr(c) not in "=,")
authzids = st.lists(st.sampled_from(SASLNAME_CHARS) | st.sampled_from(["=2C", "=3D"]),
                    max_size=12).map("".join)
tokens = st.from_regex(r"[-_~+/.a-zA-Z0-9]+=*", fullmatch=True)
extension_keys = st.from_regex(r"[A-Za-z]+", fullmatch=True).filter(lambda k: k != "auth")
extension_values = st.text(st.sampled_from([chr(c) for c in range(0x21, 0x7F)] + list(" \t\r\n")),
                           min_size=1, max_size=20)


@settings(max_examples=200, deadline=None)
@given(token=tokens, authzid=authzids,
       extensions=st.dictionaries(extension_keys, extension_values, max_size=5),
       auth_at=st.integers(0, 5))
def test_client_initial_response_round_trip(token, authzid, extensions, auth_at):
    pairs = [f"{k}={v}" for k, v in extensions.items()]
    pairs.insert(min(auth_at, len(pairs)), f"auth=Bearer {token}")  # auth may come anywhere
    header = f"n,a={authzid}," if authzid else "n,,"
    message = (header + "\x01" + "".join(p + "\x01" for p in pairs) + "\x01").encode()
    parsed = ClientInitialResponse.parse(message)
    assert parsed == ClientInitialResponse(token, authzid, extensions)
    assert (parsed.token, parsed.authorization_id, parsed.extensions) == (token, authzid,
                                                                          extensions)
    # what a client sends (toBytes) parses back to the same
    assert ClientInitialResponse.parse(parsed.to_bytes()) == parsed
