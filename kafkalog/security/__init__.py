"""Authentication material of a ``kafkalog serve`` tree, as Kafka keeps it: SCRAM credentials
(:mod:`.scram_credentials`) and the SASL/PLAIN users of a JAAS configuration (:mod:`.jaas`).

The wire side (SASL handshakes, TLS listeners) is :mod:`kafkalog.server.sasl`.
"""

from .jaas import plain_users
from .scram_credentials import ScramCredential, ScramCredentialStore, parse_add_scram

__all__ = ["ScramCredential", "ScramCredentialStore", "parse_add_scram", "plain_users"]
