"""The security settings of ``kafkalog mirror``'s connections, from Kafka's client properties.

The keys and their meaning are a Kafka client's (``CommonClientConfigs``, ``SslConfigs``,
``SaslConfigs``), as a ``--command-config`` file of Kafka's tools holds them:

* ``security.protocol``: ``PLAINTEXT`` (the default), ``SSL``, ``SASL_PLAINTEXT`` or
  ``SASL_SSL``.
* TLS (``SSL``, ``SASL_SSL``; Python's ``ssl``, TLS 1.2 and 1.3): the broker's certificate is
  checked against the CA certificates of ``ssl.truststore.location`` (``ssl.truststore.type``
  PEM, or PKCS12 with ``ssl.truststore.password``; inline ``ssl.truststore.certificates``), or
  the system's CAs without a truststore; the host name against the certificate unless
  ``ssl.endpoint.identification.algorithm`` is empty (Kafka's default ``https`` checks it). For
  mutual TLS, ``ssl.keystore.location`` holds the client's private key and certificate chain
  (PEM, as ``kafkalog serve`` takes it, or PKCS12 with ``ssl.keystore.password``; inline
  ``ssl.keystore.key`` + ``ssl.keystore.certificate.chain``; ``ssl.key.password`` for an
  encrypted key). The stores are read by :mod:`kafkalog.security.tls_stores`, as
  ``kafkalog serve``'s listeners read theirs; JKS stores are refused with the ``keytool``
  command that converts them.
* SASL (``SASL_PLAINTEXT``, ``SASL_SSL``): ``sasl.mechanism`` PLAIN, SCRAM-SHA-256 or
  SCRAM-SHA-512, and the credentials as the ``username``/``password`` options of the one
  ``PlainLoginModule`` or ``ScramLoginModule`` entry of ``sasl.jaas.config`` (parsed by
  :mod:`kafkalog.security.jaas`). GSSAPI (Kafka's default mechanism), OAUTHBEARER and a JAAS
  file (``java.security.auth.login.config``) are refused.
* ``client.id``: the client id of the requests.

Other keys are returned in :attr:`ClientSecurity.ignored` (the mirror warns about them, as Kafka's
clients log "supplied but isn't a known config").

>>> s = client_security({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
...     "sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required '
...                         'username="alice" password="alice-secret";'})
>>> (s.protocol, s.mechanism, s.username, s.ssl_context)
('SASL_PLAINTEXT', 'PLAIN', 'alice', None)
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..errors import ConfigError
from ..security.jaas import (
    OAUTHBEARER_LOGIN_MODULE,
    PLAIN_LOGIN_MODULE,
    SCRAM_LOGIN_MODULE,
    login_modules,
)
from ..security.tls_stores import (
    STORE_PROPERTIES,
    StoreSettings,
    load_key_and_chain,
    trusted_certificates,
)

__all__ = ["ClientSecurity", "client_security", "SECURITY_PROTOCOLS", "SASL_MECHANISMS",
           "PLAINTEXT"]

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
#: the ssl.* keys of a keystore and a truststore (read as the listener reads them)
_KNOWN = {"security.protocol", "sasl.mechanism", "sasl.jaas.config",
          "ssl.endpoint.identification.algorithm", "client.id", *STORE_PROPERTIES}
_LOGIN_MODULES = (PLAIN_LOGIN_MODULE, SCRAM_LOGIN_MODULE)
_JAAS_EXAMPLE = ('sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule '
                 'required username="alice" password="alice-secret";')


@dataclass(frozen=True)
class ClientSecurity:
    """How a connection is secured: TLS (``ssl_context``) and SASL (``mechanism`` with the
    user's credentials)."""

    protocol: str = "PLAINTEXT"
    ssl_context: ssl.SSLContext | None = None
    mechanism: str | None = None
    username: str = ""
    password: str = field(default="", repr=False)
    client_id: str | None = None
    client_certificate: bool = False
    """A keystore (mutual TLS) is loaded in ``ssl_context``."""
    ignored: tuple[str, ...] = ()
    """Keys of the configuration not applied (not a setting of this client)."""

    @property
    def tls(self) -> bool:
        return self.ssl_context is not None

    @property
    def sasl(self) -> bool:
        return self.mechanism is not None


PLAINTEXT = ClientSecurity()


def client_security(config: Mapping[str, str] | None) -> ClientSecurity:
    """The security of connections configured by Kafka client properties (module doc).

    Raises
    ------
    ConfigError
        A value that is not valid or not supported (GSSAPI, OAUTHBEARER, a JKS store, a missing
        ``sasl.jaas.config``...), naming the property; a store that cannot be read.
    """
    props = {str(k).strip(): str(v) for k, v in (config or {}).items()}
    raw = props.get("security.protocol", "PLAINTEXT").strip()
    protocol = raw.upper()
    if protocol not in SECURITY_PROTOCOLS:
        raise ConfigError(f"security.protocol: expected one of {', '.join(SECURITY_PROTOCOLS)}, "
                          f"found {raw!r}")
    ctx, cert = _ssl_context(props) if protocol in ("SSL", "SASL_SSL") else (None, False)
    mechanism = username = password = None
    if protocol in ("SASL_PLAINTEXT", "SASL_SSL"):
        mechanism, username, password = _sasl(props)
    client_id = props.get("client.id", "").strip() or None
    return ClientSecurity(protocol, ctx, mechanism, username or "", password or "", client_id,
                          cert, tuple(sorted(k for k in props if k not in _KNOWN)))


def _ssl_context(props: Mapping[str, str]) -> tuple[ssl.SSLContext, bool]:
    """The client's TLS context, and whether it holds a client certificate."""
    # the store settings as a listener reads them (types checked: PEM or PKCS12, JKS refused)
    stores = StoreSettings.from_properties(props)
    algorithm = props.get("ssl.endpoint.identification.algorithm", "https").strip()
    if algorithm.lower() not in ("https", ""):
        raise ConfigError(f"ssl.endpoint.identification.algorithm: expected https (check the "
                          f"broker's host name, Kafka's default) or empty (do not), found "
                          f"{algorithm!r}")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # (CERT_REQUIRED)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.check_hostname = algorithm.lower() == "https"
    cadata = trusted_certificates(stores)
    if cadata is None:
        ctx.load_default_certs()
    else:
        try:
            ctx.load_verify_locations(cadata=cadata)
        except (ssl.SSLError, ValueError) as e:
            raise ConfigError(f"cannot load the CA certificates (ssl.truststore.*): {e}") \
                from None
    cert = stores.has_keystore
    if cert:
        load_key_and_chain(ctx, stores)
    return ctx, cert


def _sasl(props: Mapping[str, str]) -> tuple[str, str, str]:
    mechanism = props.get("sasl.mechanism", "GSSAPI").strip()
    if mechanism not in SASL_MECHANISMS:
        default = " (Kafka's default sasl.mechanism)" if "sasl.mechanism" not in props else ""
        raise ConfigError(f"sasl.mechanism: {mechanism}{default} is not supported by kafkalog "
                          f"mirror; use one of {', '.join(SASL_MECHANISMS)}")
    text = props.get("sasl.jaas.config", "").strip()
    if not text:
        raise ConfigError(f"SASL needs sasl.jaas.config with the user's credentials, e.g. "
                          f"{_JAAS_EXAMPLE} (a JAAS file, java.security.auth.login.config, is "
                          f"not read)")
    entries = login_modules(text, where="sasl.jaas.config")
    if len(entries) != 1:
        raise ConfigError(f"sasl.jaas.config: expected one login module, found "
                          f"{len(entries)}")
    module, options = entries[0]
    if module not in _LOGIN_MODULES:
        what = (" (OAUTHBEARER is not supported)" if module == OAUTHBEARER_LOGIN_MODULE
                else " (GSSAPI is not supported)" if "Krb5LoginModule" in module else "")
        raise ConfigError(f"sasl.jaas.config: login module {module}{what} is not supported; "
                          f"use {PLAIN_LOGIN_MODULE} or {SCRAM_LOGIN_MODULE}")
    missing = [o for o in ("username", "password") if o not in options]
    if missing:
        raise ConfigError(f"sasl.jaas.config: the {module.rpartition('.')[2]} entry has no "
                          f"{' and no '.join(missing)} option")
    return mechanism, options["username"], options["password"]
