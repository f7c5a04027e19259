"""The listener's security: TLS for ``SSL``/``SASL_SSL`` and the SASL authenticator of each
connection for ``SASL_PLAINTEXT``/``SASL_SSL`` (Kafka's ``listeners`` protocols).

TLS is Python's ``ssl`` (OpenSSL) with Kafka's broker settings: ``ssl.keystore.location`` with
``ssl.keystore.type`` PEM (the private key and the certificate chain in one file) or PKCS12 (read
with ``cryptography``, ``ssl.keystore.password``), or the key and chain inline (KIP-651's
``ssl.keystore.key`` and ``ssl.keystore.certificate.chain``); ``ssl.key.password`` for an
encrypted key; the CA certificates clients are checked against from ``ssl.truststore.location``
(PEM or PKCS12, ``ssl.truststore.password``) or inline ``ssl.truststore.certificates``; and
``ssl.client.auth`` (none, requested, required). Without a type the store's content tells PEM
from PKCS12; a JKS store (Kafka's default type) is refused with the ``keytool`` command that
converts it (the stores are read by :mod:`kafkalog.security.tls_stores`). TLS 1.2 and 1.3
(Kafka's ``ssl.enabled.protocols``).

>>> check(ServerConfig(security_protocol="SASL_PLAINTEXT"))  # nothing to check on plaintext
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from ..security.tls_stores import load_key_and_chain, trusted_certificates
from .broker import ServerConfig
from .sasl import OAUTHBEARER, PLAIN, SaslAuthenticator

#: Kafka's default OAUTHBEARER validator (``sasl.server.callback.handler.class`` unset)
UNSECURED_VALIDATOR_HANDLER = ("org.apache.kafka.common.security.oauthbearer.internals."
                               "unsecured.OAuthBearerUnsecuredValidatorCallbackHandler")

__all__ = ["ssl_context", "check", "uses_tls", "uses_sasl", "authenticator", "Listener",
           "load_key_and_chain", "trusted_certificates"]


@dataclass
class Listener:
    """A listener beyond a server's main one (a broker's second ``listeners`` entry: an
    internal and an external name for one broker).

    ``config`` holds the listener's security settings and advertised address (its other
    fields are ignored: the server's own config rules the broker). ``port`` 0 picks a free port;
    once bound, ``port`` is the bound one and ``advertised`` the ``(host, port)`` a client
    connected here is told.
    """

    name: str
    host: str
    port: int
    config: ServerConfig
    advertised: tuple[str, int] | None = field(default=None, init=False)


def uses_tls(config: ServerConfig) -> bool:
    return config.security_protocol in ("SSL", "SASL_SSL")


def uses_sasl(config: ServerConfig) -> bool:
    return config.security_protocol in ("SASL_PLAINTEXT", "SASL_SSL")


def check(config: ServerConfig) -> None:
    """Refuse a listener that could not serve anyone.

    Raises
    ------
    ConfigError
        TLS without ``ssl.keystore.location``; PLAIN as the only mechanism with no users.
    """
    if uses_tls(config) and not (config.ssl_keystore_location or config.ssl_keystore_key):
        raise ConfigError(f"{config.security_protocol} needs ssl.keystore.location (a PEM file "
                          "with the server's private key and certificate chain, or a PKCS12 "
                          "store) or the inline ssl.keystore.key and "
                          "ssl.keystore.certificate.chain")
    if uses_tls(config) and config.ssl_client_auth != "none" \
            and not (config.ssl_truststore_location or config.ssl_truststore_certificates):
        raise ConfigError(f"ssl.client.auth={config.ssl_client_auth} needs "
                          "ssl.truststore.location (PEM CA certificates to check clients "
                          "against)")
    if uses_sasl(config) and list(config.sasl_enabled_mechanisms) == [PLAIN] \
            and not config.sasl_plain_users:
        raise ConfigError("SASL/PLAIN is the only mechanism enabled and no user is defined "
                          "(give a JAAS file with user_<name>=\"<password>\" options: "
                          "--jaas-config)")


def ssl_context(config: ServerConfig) -> ssl.SSLContext | None:
    """The server-side TLS context of an ``SSL``/``SASL_SSL`` listener (None otherwise).

    Raises
    ------
    ConfigError
        A keystore or truststore that cannot be read, naming the file (or the property) and
        the reason.
    """
    if not uses_tls(config):
        return None
    check(config)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    load_key_and_chain(ctx, config)
    cadata = trusted_certificates(config)
    if cadata is not None:
        try:
            ctx.load_verify_locations(cadata=cadata)
        except (ssl.SSLError, ValueError) as e:
            raise ConfigError(f"cannot load the CA certificates (ssl.truststore.*): {e}") \
                from None
    ctx.verify_mode = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL,
                       "required": ssl.CERT_REQUIRED}[config.ssl_client_auth]
    return ctx


def oauthbearer_validator(config: ServerConfig) -> Any:
    """The secured OAUTHBEARER validator a listener's config asks for (KIP-768:
    :class:`~kafkalog.security.oauthbearer_jwt.JwtValidator`, its JWKS loaded now), or None for
    Kafka's default unsecured one.

    Raises
    ------
    ConfigError
        Another callback handler class, a missing or refused JWKS URL, an unreadable JWKS.
    """
    handler = config.sasl_server_callback_handler_class
    if not uses_sasl(config) or OAUTHBEARER not in config.sasl_enabled_mechanisms \
            or handler in (None, UNSECURED_VALIDATOR_HANDLER):
        return None
    from ..security.oauthbearer_jwt import (
        VALIDATOR_CALLBACK_HANDLERS,
        JwtValidator,
        JwtValidatorConfig,
        allowed_urls_from_kafka_opts,
    )

    if handler not in VALIDATOR_CALLBACK_HANDLERS:
        raise ConfigError(f"sasl.server.callback.handler.class: kafkalog serves Kafka's "
                          f"OAUTHBEARER validators ({VALIDATOR_CALLBACK_HANDLERS[0]} and "
                          f"{UNSECURED_VALIDATOR_HANDLER}), not {handler!r}")
    allowed = config.sasl_oauthbearer_allowed_urls
    try:
        return JwtValidator(JwtValidatorConfig(
            jwks_endpoint_url=config.sasl_oauthbearer_jwks_endpoint_url or "",
            expected_audience=tuple(config.sasl_oauthbearer_expected_audience),
            expected_issuer=config.sasl_oauthbearer_expected_issuer,
            sub_claim_name=config.sasl_oauthbearer_sub_claim_name,
            scope_claim_name=config.sasl_oauthbearer_scope_claim_name,
            clock_skew_seconds=config.sasl_oauthbearer_clock_skew_seconds,
            jwks_endpoint_refresh_ms=config.sasl_oauthbearer_jwks_endpoint_refresh_ms,
            jwks_endpoint_retry_backoff_ms=config.sasl_oauthbearer_jwks_endpoint_retry_backoff_ms,
            allowed_urls=allowed_urls_from_kafka_opts() if allowed is None else allowed))
    except OSError as e:
        raise ConfigError(f"sasl.oauthbearer.jwks.endpoint.url "
                          f"{config.sasl_oauthbearer_jwks_endpoint_url}: the JWKS could not be "
                          f"read: {e}") from None


def authenticator(broker: Any, peer: str, api_versions: Any,
                  config: ServerConfig | None = None) -> SaslAuthenticator | None:
    """A new connection's SASL state on a SASL listener (None: nothing to authenticate);
    ``config``: the listener's (default: the server's)."""
    config = broker.config if config is None else config
    if not uses_sasl(config):
        return None
    return SaslAuthenticator(peer=peer, mechanisms=config.sasl_enabled_mechanisms,
                             plain_users=config.sasl_plain_users,
                             scram_store=broker.scram_credentials, api_versions=api_versions,
                             max_reauth_ms=config.connections_max_reauth_ms,
                             oauthbearer_options=config.sasl_oauthbearer_options,
                             oauthbearer_validator=broker.oauthbearer_validators.get(
                                 id(config)))
