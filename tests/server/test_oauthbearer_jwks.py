"""Secured SASL/OAUTHBEARER (KIP-768): signed JWTs checked against a JWKS, as Kafka's
``OAuthBearerValidatorCallbackHandler``/``BrokerJwtValidator`` check them
(:mod:`kafkalog.security.oauthbearer_jwt`).

The tokens are signed by PyJWT with keys made here, the JWKS served from a file or by a real HTTP
server on 127.0.0.1; the clients are librdkafka (confluent-kafka's ``oauth_cb``) and
kafka-python (its token provider), against a real ``kafkalog serve``.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

jwt = pytest.importorskip("jwt", reason="PyJWT is not installed")
from cryptography.hazmat.primitives.asymmetric import ec, rsa  # noqa: E402

from kafkalog.errors import ConfigError  # noqa: E402
from kafkalog.security.oauthbearer import TokenValidationError  # noqa: E402
from kafkalog.security.oauthbearer_jwt import (  # noqa: E402
    ALLOWED_URLS_PROPERTY,
    VALIDATOR_CALLBACK_HANDLERS,
    JwtValidator,
    JwtValidatorConfig,
)

from .conftest import TEST_CONFIG, start_server  # noqa: E402
from .wire import WireClient  # noqa: E402

RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
OTHER_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
EC_KEY = ec.generate_private_key(ec.SECP256R1())


def _jwk(key, kid: str, **extra) -> dict:
    algo = jwt.algorithms.RSAAlgorithm if isinstance(key, rsa.RSAPrivateKey) else \
        jwt.algorithms.ECAlgorithm
    return {**json.loads(algo.to_jwk(key.public_key())), "kid": kid, **extra}


def _jwks_file(tmp_path: Path, *keys: dict) -> str:
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps({"keys": list(keys)}))
    return f"file://{path}"


def _token(key=RSA_KEY, kid: str | None = "k1", alg: str = "RS256", **claims) -> str:
    now = int(time.time())
    body = {"sub": "alice", "iat": now, "exp": now + 300, **claims}
    body = {k: v for k, v in body.items() if v is not None}
    return jwt.encode(body, key, alg, headers={"kid": kid} if kid else None)


def _validator(url: str, **kw) -> JwtValidator:
    return JwtValidator(JwtValidatorConfig(url, allowed_urls=(url,), **kw))


def _refused(v: JwtValidator, token: str, match: str, now_ms: int | None = None) -> None:
    with pytest.raises(TokenValidationError, match=match) as e:
        v.validate(token, int(time.time() * 1000) if now_ms is None else now_ms)
    assert e.value.json_error() == '{"status":"invalid_token"}'


# -- the checks --------------------------------------------------------------------------------

def test_a_signed_token_and_what_is_refused(tmp_path):
    url = _jwks_file(tmp_path, _jwk(RSA_KEY, "k1"), _jwk(EC_KEY, "e1"))
    v = _validator(url)
    now_ms = int(time.time() * 1000)
    token = _token(scope="read write")
    t = v.validate(token, now_ms)
    # a scope string is one scope (BrokerJwtValidator: Collections.singletonList)
    assert (t.principal_name, t.scope) == ("alice", frozenset({"read write"}))
    claims = jwt.decode(token, options={"verify_signature": False})
    assert (t.lifetime_ms, t.start_time_ms) == (claims["exp"] * 1000, claims["iat"] * 1000)
    assert v.validate(_token(scope=["a", " b "]), now_ms).scope == frozenset({"a", "b"})
    assert v.validate(_token(EC_KEY, "e1", "ES256"), now_ms).principal_name == "alice"
    _refused(v, _token(OTHER_KEY), "Signature verification failed")
    _refused(v, _token(kid="nope"), "no key in the JWKS")
    # an EC signature claimed for the RSA key's kid
    _refused(v, _token(EC_KEY, "k1", "ES256"), "alg value is not allowed")
    unsigned = jwt.encode({"sub": "a", "iat": 1, "exp": 2**31}, None, "none")
    _refused(v, unsigned, "three sections")          # (its signature part is empty)
    _refused(v, unsigned + "c2ln", "unsigned token")
    _refused(v, _token(exp=None), "exp")
    _refused(v, _token(iat=None), "iat")
    _refused(v, _token(exp="soon"), "'exp' claim must be a number")
    _refused(v, _token(iat=True), "'iat' claim must be a number")
    _refused(v, _token(sub=None), "sub value must be non-null and non-empty")
    _refused(v, _token(sub="  "), "sub value must be non-null and non-empty")
    _refused(v, _token(sub=7), "Subject must be a string")
    _refused(v, _token(scope=["a", ""]), "scope value must be non-null and non-empty")
    _refused(v, "a.b", "three sections")
    # jose4j's default: a token naming an audience needs an expected audience
    _refused(v, _token(aud="kafka"), "(?i)audience")


def test_time_checks_use_the_clock_skew(tmp_path):
    v = _validator(_jwks_file(tmp_path, _jwk(RSA_KEY, "k1")), clock_skew_seconds=30)
    now = int(time.time())
    token = _token(exp=now + 10, nbf=now + 20)
    assert v.validate(token, now * 1000).principal_name == "alice"          # nbf - 30 <= now
    assert v.validate(token, (now + 39) * 1000).principal_name == "alice"   # exp + 30 > now
    _refused(v, token, "expired", now_ms=(now + 40) * 1000)
    _refused(v, token, "not yet valid", now_ms=(now - 11) * 1000)
    strict = _validator(_jwks_file(tmp_path, _jwk(RSA_KEY, "k1")), clock_skew_seconds=0)
    _refused(strict, token, "not yet valid", now_ms=now * 1000)


def test_audience_issuer_and_claim_names(tmp_path):
    url = _jwks_file(tmp_path, _jwk(RSA_KEY, "k1"))
    v = _validator(url, expected_audience=("kafka", "other"), expected_issuer="https://idp",
                   sub_claim_name="client_id", scope_claim_name="scp")
    ok = _token(aud=["x", "kafka"], iss="https://idp", client_id="svc-1", scp="produce")
    t = v.validate(ok, int(time.time() * 1000))
    assert (t.principal_name, t.scope) == ("svc-1", frozenset({"produce"}))
    _refused(v, _token(aud="x", iss="https://idp", client_id="svc-1"), "(?i)audience")
    _refused(v, _token(aud="kafka", iss="https://evil", client_id="svc-1"), "issuer")
    _refused(v, _token(aud="kafka", client_id="svc-1"), "iss")
    _refused(v, _token(aud="kafka", iss="https://idp"), "client_id value must be non-null")


def test_a_jwk_with_an_alg_verifies_that_alg_only(tmp_path):
    v = _validator(_jwks_file(tmp_path, _jwk(RSA_KEY, "k1", alg="RS512", use="sig"),
                              _jwk(OTHER_KEY, "enc", use="enc")))
    assert v.validate(_token(alg="RS512"), int(time.time() * 1000)).principal_name == "alice"
    _refused(v, _token(alg="RS256"), "alg value is not allowed")
    _refused(v, _token(OTHER_KEY, "enc"), "no key in the JWKS")   # an encryption key: unused


def test_a_file_jwks_is_read_again_when_it_changes(tmp_path):
    url = _jwks_file(tmp_path, _jwk(RSA_KEY, "k1"))
    v = _validator(url)
    _refused(v, _token(OTHER_KEY, "k2"), "no key")
    time.sleep(0.01)
    Path(url[len("file://"):]).write_text(json.dumps({"keys": [_jwk(RSA_KEY, "k1"),
                                                               _jwk(OTHER_KEY, "k2")]}))
    assert v.validate(_token(OTHER_KEY, "k2"), int(time.time() * 1000)).principal_name == "alice"


def test_url_checks_as_kafka_makes_them(tmp_path, monkeypatch):
    url = _jwks_file(tmp_path, _jwk(RSA_KEY, "k1"))
    with pytest.raises(ConfigError) as e:
        JwtValidator(JwtValidatorConfig(url))
    assert str(e.value) == (
        f"Invalid value {url} for configuration sasl.oauthbearer.jwks.endpoint.url: The URL "
        f"cannot be accessed due to restrictions. Update the system property "
        f"'{ALLOWED_URLS_PROPERTY}' to allow the URL to be accessed.")
    with pytest.raises(ConfigError, match=r'invalid protocol \(ftp\); only "http", "https"'):
        JwtValidator(JwtValidatorConfig("ftp://x/jwks", allowed_urls=("ftp://x/jwks",)))
    with pytest.raises(ConfigError, match="value is required"):
        JwtValidator(JwtValidatorConfig(""))


# -- JWKS over HTTP ----------------------------------------------------------------------------

class _JwksServer:
    """A JWKS endpoint on 127.0.0.1 whose keys the test changes; counts its requests."""

    def __init__(self, *keys: dict) -> None:
        self.keys = list(keys)
        self.requests = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                outer.requests += 1
                body = json.dumps({"keys": outer.keys}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/jwks"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def jwks_server():
    s = _JwksServer(_jwk(RSA_KEY, "k1"))
    yield s
    s.close()


def test_an_http_jwks_is_refreshed_when_a_token_names_a_new_key(jwks_server):
    v = _validator(jwks_server.url, jwks_endpoint_retry_backoff_ms=0)
    assert jwks_server.requests == 1                          # read at start
    jwks_server.keys.append(_jwk(OTHER_KEY, "k2"))            # the IdP rotates its key
    # the first token with the new kid is refused while the JWKS is fetched again behind it
    # (RefreshingHttpsJwksVerificationKeyResolver), the next ones pass
    _refused(v, _token(OTHER_KEY, "k2"), "no key")
    deadline = time.monotonic() + 10
    while jwks_server.requests < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.05)
    assert v.validate(_token(OTHER_KEY, "k2"), int(time.time() * 1000)).principal_name == "alice"


# -- the server ----------------------------------------------------------------------------------

def _jwks_config(url: str, **kw) -> object:
    return dataclasses.replace(
        TEST_CONFIG, security_protocol="SASL_PLAINTEXT", sasl_enabled_mechanisms=("OAUTHBEARER",),
        connections_failed_authentication_delay_ms=10,
        sasl_server_callback_handler_class=VALIDATOR_CALLBACK_HANDLERS[0],
        sasl_oauthbearer_jwks_endpoint_url=url, sasl_oauthbearer_allowed_urls=(url,), **kw)


def test_librdkafka_and_kafka_python_log_in_with_signed_tokens(tmp_path, jwks_server, caplog):
    import logging

    ck = pytest.importorskip("confluent_kafka")
    kafka = pytest.importorskip("kafka")
    try:
        from kafka.sasl.oauth import AbstractTokenProvider
    except ImportError:  # kafka-python >= 3
        from kafka.net.sasl.oauth import AbstractTokenProvider

    caplog.set_level(logging.INFO, logger="kafkalog.server")
    server = start_server(tmp_path / "logs", config=_jwks_config(
        jwks_server.url, sasl_oauthbearer_expected_audience=("kafka",)))
    try:
        def oauth_cb(_config: str):
            token = _token(sub="svc-writer", aud="kafka")
            return token, time.time() + 300

        conf = {"bootstrap.servers": server.address, "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "OAUTHBEARER", "oauth_cb": oauth_cb}
        p = ck.Producer(conf)
        for i in range(5):
            p.produce("jwt", b"v%d" % i)
        assert p.flush(30) == 0
        assert any("authenticated as User:svc-writer (SASL OAUTHBEARER)" in r.getMessage()
                   for r in caplog.records)

        class Provider(AbstractTokenProvider):
            def token(self) -> str:
                return _token(sub="svc-reader", aud="kafka")

        cons = kafka.KafkaConsumer(
            "jwt", bootstrap_servers=server.address, security_protocol="SASL_PLAINTEXT",
            sasl_mechanism="OAUTHBEARER", sasl_oauth_token_provider=Provider(),
            auto_offset_reset="earliest", consumer_timeout_ms=5000)
        assert [m.value for m in cons] == [b"v%d" % i for i in range(5)]
        cons.close()

        # a token signed by another key, and one for another audience: invalid_token
        for bad in (_token(OTHER_KEY, sub="mallory", aud="kafka"), _token(aud="elsewhere")):
            with WireClient(server.address) as c:
                challenge, r = c.oauthbearer_refused(bad)
            assert (challenge.error_code, challenge.auth_bytes) == (
                0, b'{"status":"invalid_token"}')
            assert (r.error_code, r.error_message) == (58, '{"status":"invalid_token"}')
        # librdkafka with a bad token: its authentication fails
        errors: list = []
        bad_conf = {**conf, "oauth_cb": lambda _c: (_token(OTHER_KEY), time.time() + 300),
                    "error_cb": errors.append}
        p = ck.Producer(bad_conf)
        p.produce("jwt", b"x")
        deadline = time.monotonic() + 15
        while not errors and time.monotonic() < deadline:
            p.poll(0.1)
        assert any('{"status":"invalid_token"}' in str(e) for e in errors), errors
    finally:
        server.stop()


def test_server_properties_select_the_validator(tmp_path, jwks_server):
    from kafkalog.server.server_properties import parse

    text = "\n".join([
        f"log.dirs={tmp_path / 'logs'}",
        "listeners=SASL_PLAINTEXT://127.0.0.1:0",
        "sasl.enabled.mechanisms=OAUTHBEARER",
        "listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class="
        + VALIDATOR_CALLBACK_HANDLERS[0],
        f"listener.name.sasl_plaintext.oauthbearer.sasl.oauthbearer.jwks.endpoint.url="
        f"{jwks_server.url}",
        "sasl.oauthbearer.expected.audience=kafka,other",
        "sasl.oauthbearer.clock.skew.seconds=0",
        f"{ALLOWED_URLS_PROPERTY}={jwks_server.url}",
    ])
    import io

    props = parse(io.StringIO(text), "server.properties")
    c = props.config
    assert c.sasl_server_callback_handler_class == VALIDATOR_CALLBACK_HANDLERS[0]
    assert c.sasl_oauthbearer_jwks_endpoint_url == jwks_server.url
    assert c.sasl_oauthbearer_expected_audience == ("kafka", "other")
    assert c.sasl_oauthbearer_clock_skew_seconds == 0
    assert c.sasl_oauthbearer_allowed_urls == (jwks_server.url,)
    from kafkalog.server.listener import oauthbearer_validator

    v = oauthbearer_validator(c)
    assert v is not None and v.config.expected_audience == ("kafka", "other")
    bad = dataclasses.replace(c, sasl_server_callback_handler_class="com.example.MyHandler")
    with pytest.raises(ConfigError, match="kafkalog serves Kafka's OAUTHBEARER validators"):
        oauthbearer_validator(bad)
    refused = dataclasses.replace(c, sasl_oauthbearer_allowed_urls=None)
    with pytest.raises(ConfigError, match="cannot be accessed due to restrictions"):
        oauthbearer_validator(refused)


def test_unknown_keys_do_not_fetch_the_jwks_at_every_token(jwks_server):
    """Within sasl.oauthbearer.jwks.endpoint.retry.backoff.ms of a fetch, tokens naming an
    unknown key are refused without asking the endpoint again."""
    v = _validator(jwks_server.url, jwks_endpoint_retry_backoff_ms=60_000)
    assert jwks_server.requests == 1
    for _ in range(5):
        _refused(v, _token(OTHER_KEY, "k9"), "no key")
    time.sleep(0.2)
    assert jwks_server.requests == 1        # the start's fetch is within the backoff too
    v = _validator(jwks_server.url, jwks_endpoint_retry_backoff_ms=0)
    _refused(v, _token(OTHER_KEY, "k9"), "no key")
    deadline = time.monotonic() + 10
    while jwks_server.requests < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert jwks_server.requests == 3        # this one's start, then one refresh
