"""Kafka's TLS key and trust stores (``ssl.keystore.*``, ``ssl.truststore.*``,
``ssl.key.password``) read for Python's ``ssl``: PEM files, PKCS12 files (``cryptography``) and
inline PEM (KIP-651); a JKS store (Kafka's default type) is refused with the ``keytool`` command
that converts it.

Used by ``kafkalog serve``'s listeners (:mod:`kafkalog.server.listener`, whose
``ServerConfig`` carries these settings) and by ``kafkalog mirror``'s client
(:class:`StoreSettings`, from a client's properties): both read the same stores the same way.

>>> s = StoreSettings.from_properties({"ssl.truststore.type": "pem"})
>>> s.ssl_truststore_type, s.ssl_keystore_location
('PEM', None)
"""

from __future__ import annotations

import os
import ssl
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import ConfigError

__all__ = ["TlsStores", "StoreSettings", "STORE_PROPERTIES", "store_type",
           "load_key_and_chain", "trusted_certificates"]


class TlsStores(Protocol):
    """The store settings, by their attribute names (as :class:`kafkalog.server.ServerConfig`
    has them)."""

    ssl_keystore_location: str | None
    ssl_keystore_type: str | None
    ssl_keystore_password: str | None
    ssl_keystore_key: str | None
    ssl_keystore_certificate_chain: str | None
    ssl_key_password: str | None
    ssl_truststore_location: str | None
    ssl_truststore_type: str | None
    ssl_truststore_password: str | None
    ssl_truststore_certificates: str | None


#: Kafka property -> attribute of :class:`TlsStores`
STORE_PROPERTIES = {
    "ssl.keystore.location": "ssl_keystore_location",
    "ssl.keystore.type": "ssl_keystore_type",
    "ssl.keystore.password": "ssl_keystore_password",
    "ssl.keystore.key": "ssl_keystore_key",
    "ssl.keystore.certificate.chain": "ssl_keystore_certificate_chain",
    "ssl.key.password": "ssl_key_password",
    "ssl.truststore.location": "ssl_truststore_location",
    "ssl.truststore.type": "ssl_truststore_type",
    "ssl.truststore.password": "ssl_truststore_password",
    "ssl.truststore.certificates": "ssl_truststore_certificates",
}


@dataclass(frozen=True)
class StoreSettings:
    """A client's store settings (a :class:`TlsStores`), from Kafka client properties."""

    ssl_keystore_location: str | None = None
    ssl_keystore_type: str | None = None
    ssl_keystore_password: str | None = field(default=None, repr=False)
    ssl_keystore_key: str | None = field(default=None, repr=False)
    ssl_keystore_certificate_chain: str | None = None
    ssl_key_password: str | None = field(default=None, repr=False)
    ssl_truststore_location: str | None = None
    ssl_truststore_type: str | None = None
    ssl_truststore_password: str | None = field(default=None, repr=False)
    ssl_truststore_certificates: str | None = None

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> StoreSettings:
        """The settings of ``props`` (other keys ignored; empty values unset).

        Raises
        ------
        ConfigError
            A store type other than PEM or PKCS12 (JKS: with the command that converts it).
        """
        values: dict[str, Any] = {}
        for key, name in STORE_PROPERTIES.items():
            text = str(props.get(key, "")).strip()
            if name.endswith("_type") and text:
                values[name] = store_type(key, text)
            else:
                values[name] = text or None
        return cls(**values)

    @property
    def has_keystore(self) -> bool:
        return bool(self.ssl_keystore_location or self.ssl_keystore_key
                    or self.ssl_keystore_certificate_chain)


def store_type(key: str, text: str) -> str:
    """``ssl.keystore.type``/``ssl.truststore.type``: PEM or PKCS12 (upper-cased).

    Raises
    ------
    ConfigError
        Any other type, JKS with the ``keytool`` command that converts it.
    """
    if text.upper() not in ("PEM", "PKCS12"):
        raise ConfigError(f"{key}: PEM and PKCS12 stores are read, not {text!r} (convert a JKS "
                          f"store: keytool -importkeystore -srckeystore s.jks -destkeystore "
                          f"s.p12 -deststoretype PKCS12)")
    return text.upper()


def load_key_and_chain(ctx: ssl.SSLContext, config: TlsStores) -> None:
    """Load the private key and certificate chain of ``config``'s keystore
    (``ssl.keystore.*``, ``ssl.key.password``: PEM, PKCS12 or inline PEM) into ``ctx``: a
    listener's (``config`` a :class:`kafkalog.server.ServerConfig`), or a client's for mutual
    TLS (``kafkalog mirror``: a :class:`StoreSettings`).

    Raises
    ------
    ConfigError
        A keystore that cannot be read or loaded, naming the file (or the property).
    """
    key_pem, chain_pem, where = _key_and_chain(config)
    # ssl loads a key and chain from files only: a private file, removed once loaded
    with tempfile.TemporaryDirectory(prefix="kafkalog-tls-") as d:
        path = os.path.join(d, "keystore.pem")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(key_pem + b"\n" + chain_pem)
        try:
            ctx.load_cert_chain(path, password=config.ssl_key_password)
        except (OSError, ssl.SSLError) as e:
            raise ConfigError(f"cannot load the TLS key and certificate chain "
                              f"({where}): {e}") from None


def trusted_certificates(config: TlsStores) -> str | None:
    """The CA certificates of ``config``'s truststore (``ssl.truststore.*``: PEM, PKCS12 or
    inline) as PEM text; None when there is no truststore.

    Raises
    ------
    ConfigError
        A truststore that cannot be read, naming the file.
    """
    if config.ssl_truststore_certificates:
        return config.ssl_truststore_certificates
    path = config.ssl_truststore_location
    if not path:
        return None
    kind, data = _read_store(path, config.ssl_truststore_type, "the truststore")
    if kind == "PEM":
        return data.decode("ascii", "replace")
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.serialization import pkcs12

    try:
        store = pkcs12.load_pkcs12(data, None if config.ssl_truststore_password is None
                                   else config.ssl_truststore_password.encode())
    except ValueError as e:
        raise ConfigError(f"cannot read the truststore as PKCS12 ({e})", path=path) from None
    certs = [c.certificate for c in store.additional_certs]
    if store.cert is not None:
        certs.append(store.cert.certificate)
    if not certs:
        raise ConfigError("the PKCS12 truststore holds no certificate", path=path)
    return "".join(c.public_bytes(serialization.Encoding.PEM).decode() for c in certs)


_JKS_MAGIC = b"\xfe\xed\xfe\xed"
_JKS_HINT = ("JKS stores are not read: convert it, keytool -importkeystore -srckeystore s.jks "
             "-destkeystore s.p12 -deststoretype PKCS12")


def _read_store(path: str, kind: str | None, what: str) -> tuple[str, bytes]:
    """``(type, bytes)`` of a store file: the type given, else told from the content."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ConfigError(f"cannot read {what} ({e.strerror})", path=path) from None
    if data.startswith(_JKS_MAGIC):
        raise ConfigError(f"{what} is a JKS store; {_JKS_HINT}", path=path)
    if kind is None:
        kind = "PEM" if b"-----BEGIN" in data[:4096] else "PKCS12"
    return kind, data


def _pkcs12(data: bytes, password: str | None, what: str, path: str) -> Any:
    from cryptography.hazmat.primitives.serialization import pkcs12

    try:
        return pkcs12.load_key_and_certificates(
            data, None if password is None else password.encode())
    except ValueError as e:
        raise ConfigError(f"cannot read {what} as PKCS12 (wrong password, or not a PKCS12 "
                          f"store: {e})", path=path) from None


def _key_and_chain(config: TlsStores) -> tuple[bytes, bytes, str]:
    """The private key and certificate chain, PEM (the key possibly encrypted with
    ssl.key.password), from a PEM or PKCS12 keystore or from the inline PEM properties."""
    if config.ssl_keystore_key or config.ssl_keystore_certificate_chain:
        if not (config.ssl_keystore_key and config.ssl_keystore_certificate_chain):
            raise ConfigError("ssl.keystore.key and ssl.keystore.certificate.chain go together "
                              "(inline PEM keystore, KIP-651)")
        return (config.ssl_keystore_key.encode(), config.ssl_keystore_certificate_chain.encode(),
                "ssl.keystore.key, ssl.keystore.certificate.chain")
    path = config.ssl_keystore_location
    assert path is not None  # (check() refused a TLS listener without one)
    kind, data = _read_store(path, config.ssl_keystore_type, "the keystore")
    if kind == "PEM":
        return data, b"", path
    from cryptography.hazmat.primitives import serialization

    key, cert, extra = _pkcs12(data, config.ssl_keystore_password, "the keystore", path)
    if key is None or cert is None:
        raise ConfigError("the PKCS12 keystore holds no private key and certificate", path=path)
    # (the key re-encrypted with ssl.key.password when there is one, else in the clear in a
    # file only this process can read, removed at once)
    enc = (serialization.BestAvailableEncryption(config.ssl_key_password.encode())
           if config.ssl_key_password else serialization.NoEncryption())
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                enc)
    chain = b"".join(c.public_bytes(serialization.Encoding.PEM) for c in [cert, *(extra or [])])
    return key_pem, chain, path
