"""The listener's security: TLS for ``SSL``/``SASL_SSL`` and the SASL authenticator of each
connection for ``SASL_PLAINTEXT``/``SASL_SSL`` (Kafka's ``listeners`` protocols).

TLS is Python's ``ssl`` (OpenSSL) with Kafka's broker settings: ``ssl.keystore.location`` (a PEM
file holding the private key and the certificate chain: Kafka's ``ssl.keystore.type=PEM``),
``ssl.key.password``, ``ssl.truststore.location`` (PEM CA certificates) and ``ssl.client.auth``
(none, requested, required). TLS 1.2 and 1.3 (Kafka's ``ssl.enabled.protocols``).

>>> check(ServerConfig(security_protocol="SASL_PLAINTEXT"))  # nothing to check on plaintext
"""

from __future__ import annotations

import ssl
from typing import Any

from ..errors import ConfigError
from .broker import ServerConfig
from .sasl import PLAIN, SaslAuthenticator

__all__ = ["ssl_context", "check", "uses_tls", "uses_sasl", "authenticator"]


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
    if uses_tls(config) and not config.ssl_keystore_location:
        raise ConfigError(f"{config.security_protocol} needs ssl.keystore.location (a PEM file "
                          "with the server's private key and certificate chain)")
    if uses_tls(config) and config.ssl_client_auth != "none" \
            and not config.ssl_truststore_location:
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
        A keystore or truststore that cannot be read, naming the file and OpenSSL's reason.
    """
    if not uses_tls(config):
        return None
    check(config)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    path = config.ssl_keystore_location
    try:
        ctx.load_cert_chain(path, password=config.ssl_key_password)  # type: ignore[arg-type]
    except (OSError, ssl.SSLError) as e:
        raise ConfigError(f"cannot load the TLS key and certificate chain (ssl.keystore."
                          f"location, PEM): {e}", path=path) from None
    if config.ssl_truststore_location:
        try:
            ctx.load_verify_locations(cafile=config.ssl_truststore_location)
        except (OSError, ssl.SSLError) as e:
            raise ConfigError(f"cannot load the CA certificates (ssl.truststore.location, "
                              f"PEM): {e}", path=config.ssl_truststore_location) from None
    ctx.verify_mode = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL,
                       "required": ssl.CERT_REQUIRED}[config.ssl_client_auth]
    return ctx


def authenticator(broker: Any, peer: str, api_versions: Any) -> SaslAuthenticator | None:
    """A new connection's SASL state on a SASL listener (None: nothing to authenticate)."""
    config: ServerConfig = broker.config
    if not uses_sasl(config):
        return None
    return SaslAuthenticator(peer=peer, mechanisms=config.sasl_enabled_mechanisms,
                             plain_users=config.sasl_plain_users,
                             scram_store=broker.scram_credentials, api_versions=api_versions,
                             max_reauth_ms=config.connections_max_reauth_ms,
                             oauthbearer_options=config.sasl_oauthbearer_options)
