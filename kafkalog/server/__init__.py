"""``kafkalog serve``: a single-node Kafka wire-protocol endpoint over a log directory.

Unmodified Kafka clients (kafka-python, aiokafka, librdkafka/confluent-kafka, kcat, the Java
client) produce into and consume from a ``log.dirs`` tree through it. One node leads every
partition with one replica; no replication, no claim to be a cluster. Needs the ``server`` extra
(``pip install 'kafkalog[server]'``: ``kio``, Kafka's message schemas as Python dataclasses).

Modules: :mod:`.protocol` (framing, kio (de)serialization, :func:`~.protocol.build`),
:mod:`.schema` (kio message fields), :mod:`.bounds` (length checks kio needs before parsing),
:mod:`.errors` (``ProtocolError``),
:mod:`.connection` (one client socket), :mod:`.broker` (shared state: log dir, topic ids, leader
epochs, fetch wake-ups), :mod:`.api` (the API table), :mod:`.handlers` (one module per API
family), :mod:`.producer_ids` (durable producer id blocks), :mod:`.txn_coordinator` (transactions
in ``__transaction_state``), :mod:`.group_service` (drives :mod:`kafkalog.groups`' coordinator),
:mod:`.server` (``KafkaServer``, ``serve``), :mod:`.command` (the CLI), :mod:`.listener` (TLS
and the listener's security protocol) and :mod:`.sasl` (SASL PLAIN/SCRAM authentication of a
connection; the credentials are :mod:`kafkalog.security`).

Example
-------
>>> import tempfile
>>> from kafkalog.server import KafkaServer
>>> server = KafkaServer(tempfile.mkdtemp(), port=0).start()
>>> server.address.startswith("127.0.0.1:")
True
>>> server.stop()
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["KafkaServer", "ServerConfig", "serve"]

# imported on first use: ``kafkalog.server.command`` must load (and say what to install) when
# the server extra (kio) is missing
_LAZY = {"KafkaServer": ".server", "serve": ".server", "ServerConfig": ".broker"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)
