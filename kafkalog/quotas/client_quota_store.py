"""The client quotas of a log-dir tree: what ``kafka-configs.sh --entity-type users|clients|ips``
and the AlterClientQuotas/DescribeClientQuotas APIs set and read.

KRaft Kafka keeps client quotas as ``ClientQuotaRecord``s in its metadata log; kafkalog's server
has no metadata log, so :class:`ClientQuotaStore` keeps them in ``.kafkalog-client-quotas.json``
at the log-dir root (written atomically, as the SCRAM credentials beside it). The rules are the
controller's and the metadata image's (Kafka 4.1.1):

* :meth:`ClientQuotaStore.alter` is ``ClientQuotaControlManager.alterClientQuotas``: entity
  types ``user``, ``client-id`` (together or alone) or ``ip`` (alone); keys by entity
  (``producer_byte_rate`` and ``consumer_byte_rate``: whole numbers; ``request_percentage`` and
  ``controller_mutation_rate``: any positive number; ``connection_creation_rate`` for ips: a
  whole number up to ``Integer.MAX_VALUE``); a value must be above 0; errors and their texts
  are Kafka's, per entity; the valid entities are applied, the others change nothing.
* :meth:`ClientQuotaStore.describe` is ``ClientQuotasImage.describe``: components matching an
  exact name, the default (``None``) or any specified name, ``strict`` asking for entities of
  exactly those types.

An entity is a dict ``{entity type: name}`` where the name ``None`` is the default
(``<default>`` in kafka-configs.sh's text); keys of a stored entity are kept sorted.

>>> import tempfile
>>> s = ClientQuotaStore(tempfile.mkdtemp())
>>> s.alter([({"client-id": "app"}, [("producer_byte_rate", 1024.0, False)])])
[({'client-id': 'app'}, 0, None)]
>>> s.describe([("client-id", MATCH_SPECIFIED, None)])
[({'client-id': 'app'}, {'producer_byte_rate': 1024.0})]
"""

from __future__ import annotations

import ipaddress
import math
import os
import socket
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from ..checkpoint import JsonStateFile, java_properties_key_order
from ..decoders.jvm_order import java_hash_map_order as _jvm_hash_map_order
from ..decoders.jvm_order import java_string_hash
from ..errors import KafkaLogError

__all__ = ["ClientQuotaStore", "CLIENT_QUOTAS_FILE", "USER", "CLIENT_ID", "IP",
           "USER_CLIENT_KEYS", "IP_KEYS", "MATCH_EXACT", "MATCH_DEFAULT", "MATCH_SPECIFIED",
           "QuotaRequestError", "entity_string", "is_valid_ip_entity", "java_hash_map_order",
           "java_string_hash"]

CLIENT_QUOTAS_FILE = ".kafkalog-client-quotas.json"
# ClientQuotaEntity's entity types
USER = "user"
CLIENT_ID = "client-id"
IP = "ip"
#: QuotaConfig.userAndClientQuotaConfigs: key -> ConfigDef type
USER_CLIENT_KEYS = {"producer_byte_rate": "LONG", "consumer_byte_rate": "LONG",
                    "request_percentage": "DOUBLE", "controller_mutation_rate": "DOUBLE"}
#: QuotaConfig.ipConfigs
IP_KEYS = {"connection_creation_rate": "INT"}
# DescribeClientQuotas match types (ClientQuotaFilterComponent)
MATCH_EXACT = 0
MATCH_DEFAULT = 1
MATCH_SPECIFIED = 2

_INVALID_REQUEST = 42
_UNSUPPORTED_VERSION = 35
_UNKNOWN_SERVER_ERROR = -1
_INT_MAX = 2 ** 31 - 1
_SHORT_MAX = 2 ** 15 - 1
_LONG_MAX = float(2 ** 63 - 1)

Entity = dict  # {entity type: name or None}
T = TypeVar("T")


class QuotaRequestError(KafkaLogError):
    """A DescribeClientQuotas filter Kafka refuses; ``code`` is its error code
    (INVALID_REQUEST, or UNSUPPORTED_VERSION for an unknown entity type)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def entity_string(entity: Entity) -> str:
    """``ClientQuotaEntity.toString``: ``ClientQuotaEntity(entries={user=alice, client-id=app})``
    with the keys in Java's HashMap order and ``null`` for a default."""
    keys = java_properties_key_order(entity.keys(), "jdk9")
    inner = ", ".join(f"{k}={'null' if entity[k] is None else entity[k]}" for k in keys)
    return f"ClientQuotaEntity(entries={{{inner}}})"


def _key(entity: Entity) -> tuple:
    return tuple(sorted(entity.items(), key=lambda kv: kv[0]))


def java_hash_map_order(items: Iterable[T], hash_of: Callable[[T], int],
                        initial_capacity: int) -> list[T]:
    """The iteration order of a ``java.util.HashMap`` created with ``initial_capacity`` into
    which ``items`` were put in the given order (:func:`kafkalog.decoders.jvm_order.
    java_hash_map_order` for items that need not be hashable here: entities are dicts).

    >>> java_hash_map_order(["request_percentage", "producer_byte_rate", "consumer_byte_rate",
    ...                      "controller_mutation_rate"], java_string_hash, 4)
    ['producer_byte_rate', 'consumer_byte_rate', 'controller_mutation_rate', 'request_percentage']
    """
    items = list(items)
    order = _jvm_hash_map_order(range(len(items)), lambda i: hash_of(items[i]),
                                initial_capacity)
    return [items[i] for i in order]


def is_valid_ip_entity(name: str | None) -> bool:
    """``ClientQuotaControlManager.isValidIpEntity``: ``InetAddress.getByName`` succeeds (an
    address, or a host name that resolves)."""
    if name is None:
        return True
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        pass
    try:
        socket.getaddrinfo(name, None)
        return True
    except (OSError, UnicodeError):
        return False


def _check_value(keys: dict[str, str], key: str, value: float) -> str | None:
    """``validateQuotaKeyValue``: the error text, or None."""
    kind = keys.get(key)
    if kind is None:
        return f"Invalid configuration key {key}"
    if not value > 0.0:  # (NaN too: Kafka's `value <= 0.0` is false for NaN, then checks)
        if not math.isnan(value):
            return f"Quota {key} must be greater than 0"
    if kind == "DOUBLE":
        return None
    limit, article = {"SHORT": (_SHORT_MAX, "a SHORT"), "INT": (_INT_MAX, "an INT"),
                      "LONG": (_LONG_MAX, "a LONG")}[kind]
    if value > limit:
        return f"Proposed value for {key} is too large for {article}."
    if abs(math.fmod(value, 1.0)) > 1e-6:
        return f"{key} cannot be a fractional value."
    return None


class ClientQuotaStore:
    """The client quotas of a log-dir tree (see the module docstring). Thread safe.

    Parameters
    ----------
    root:
        The log-dir root; the file is ``root/.kafkalog-client-quotas.json``.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self._file = JsonStateFile(Path(root) / CLIENT_QUOTAS_FILE, "client quotas", "entities",
                                   kind=list)
        self.path = self._file.path
        self._lock = threading.Lock()
        #: sorted entity items -> {key: value}
        self._quotas: dict[tuple, dict[str, float]] = self._file.load(_parse) or {}
        self._signature = self._stat()

    def _stat(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        # (the inode too: every save is a new file renamed into place, so two writes within
        # one mtime tick that leave the size unchanged are still told apart)
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def _save(self) -> None:
        self._file.save([{"entity": dict(k), "quotas": dict(sorted(v.items()))}
                         for k, v in sorted(self._quotas.items(), key=lambda kv: _sort_key(
                             kv[0])) if v])
        self._signature = self._stat()

    def reload_if_changed(self) -> bool:
        """Read the file again when another process (``kafkalog configs``) changed it; True
        when it did."""
        with self._lock:
            return self._reload_locked()

    def _reload_locked(self) -> bool:
        sig = self._stat()
        if sig == self._signature:
            return False
        self._quotas = self._file.load(_parse) or {}
        self._signature = sig
        return True

    # -- reads ---------------------------------------------------------------------------------

    def entities(self) -> list[tuple[Entity, dict[str, float]]]:
        """Every entity with quotas and its ``{key: value}``, in a stable order (users, then
        user/client pairs, client ids, ips; defaults first within each)."""
        with self._lock:
            return [(dict(k), dict(v)) for k, v in sorted(self._quotas.items(),
                                                          key=lambda kv: _sort_key(kv[0]))]

    def describe(self, components: Iterable[tuple[str, int, str | None]],
                 strict: bool = False) -> list[tuple[Entity, dict[str, float]]]:
        """``ClientQuotasImage.describe``: the entities matching every component ``(entity
        type, match type, match)``.

        Raises
        ------
        QuotaRequestError
            A filter Kafka refuses (its texts).
        """
        exact: dict[str, str | None] = {}
        typed: set[str] = set()
        for etype, match_type, match in components:
            if etype == "":
                raise QuotaRequestError(_INVALID_REQUEST, "Invalid empty entity type.")
            if etype in exact or etype in typed:
                raise QuotaRequestError(_INVALID_REQUEST, f"Entity type {etype} cannot appear "
                                        "more than once in the filter.")
            if etype not in (IP, USER, CLIENT_ID):
                raise QuotaRequestError(_UNSUPPORTED_VERSION, f"Unsupported entity type {etype}")
            if match_type == MATCH_EXACT:
                if match is None:
                    raise QuotaRequestError(_INVALID_REQUEST, "Request specified "
                                            "MATCH_TYPE_EXACT, but set match string to null.")
                exact[etype] = match
            elif match_type == MATCH_DEFAULT:
                if match is not None:
                    raise QuotaRequestError(_INVALID_REQUEST, "Request specified "
                                            "MATCH_TYPE_DEFAULT, but also specified a match "
                                            "string.")
                exact[etype] = None
            elif match_type == MATCH_SPECIFIED:
                if match is not None:
                    raise QuotaRequestError(_INVALID_REQUEST, "Request specified "
                                            "MATCH_TYPE_SPECIFIED, but also specified a match "
                                            "string.")
                typed.add(etype)
            else:
                raise QuotaRequestError(_INVALID_REQUEST, f"Unknown match type {match_type}")
        if (IP in exact or IP in typed) and (USER in exact or USER in typed
                                             or CLIENT_ID in exact or CLIENT_ID in typed):
            raise QuotaRequestError(_INVALID_REQUEST, "Invalid entity filter component "
                                    "combination. IP filter component should not be used with "
                                    "user or clientId filter component.")
        out = []
        for entity, quotas in self.entities():
            if strict and len(entity) != len(exact) + len(typed):
                continue
            if all(t in entity and entity[t] == m for t, m in exact.items()) \
                    and all(t in entity for t in typed):
                out.append((entity, quotas))
        return out

    # -- writes --------------------------------------------------------------------------------

    def alter(self, alterations: Iterable[tuple[Entity, Iterable[tuple[str, float, bool]]]],
              validate_only: bool = False) -> list[tuple[Entity, int, str | None]]:
        """``ClientQuotaControlManager.alterClientQuotas``: each alteration is ``(entity, ops)``
        with ops ``(key, value, remove)``. Returns ``(entity, error code, message)`` per
        entity; the valid ones are applied together and persisted once (not with
        ``validate_only``). The file is read again first when another process changed it, so
        that its changes are not written over with this store's older view."""
        with self._lock:
            self._reload_locked()
            results: dict[tuple, tuple[Entity, int, str | None]] = {}
            changes: dict[tuple, dict[str, float | None]] = {}
            for entity, ops in alterations:
                entity = dict(entity)
                ops = list(ops)
                k = _key(entity)
                new: dict[str, float | None] = {}
                for key, value, remove in ops:
                    if key in new:
                        results[k] = (entity, _INVALID_REQUEST,
                                      f"Duplicate quota key {key} not updating quota for this "
                                      f"entity {entity_string(entity)}")
                    else:
                        new[key] = None if remove else float(value)
                if k in results:
                    # (Kafka overwrites a duplicate key's error with this one, as here)
                    # (an earlier alteration of the entity stays applied, as in Kafka)
                    results[k] = (entity, _INVALID_REQUEST,
                                  f"Ignoring duplicate entity {entity_string(entity)}")
                    continue
                err = self._check_entity(entity)
                if err is None:
                    keys = USER_CLIENT_KEYS if IP not in entity else IP_KEYS
                    # the controller checks the keys in its HashMap's order (sized by the ops):
                    # with two bad values, that order decides which one is reported
                    for key in java_hash_map_order(new, java_string_hash, len(ops)):
                        value = new[key]
                        if value is not None:
                            text = _check_value(keys, key, value)
                            if text is not None:
                                err = (_INVALID_REQUEST, text)
                                break
                if err is not None:
                    results[k] = (entity, err[0], err[1])
                    continue
                results[k] = (entity, 0, None)
                changes.setdefault(k, {}).update(new)
            if changes and not validate_only:
                for k, new in changes.items():
                    current = self._quotas.setdefault(k, {})
                    for key, value in new.items():
                        if value is None:
                            current.pop(key, None)
                        else:
                            current[key] = value
                    if not current:
                        del self._quotas[k]
                self._save()
            return list(results.values())

    @staticmethod
    def _check_entity(entity: Entity) -> tuple[int, str] | None:
        """``validateEntity`` then ``configKeysForEntityType``."""
        if not entity:
            return (_INVALID_REQUEST, "Invalid empty client quota entity")
        # (in the order of the request's entity HashMap: the first bad entry is reported)
        for etype in java_hash_map_order(entity, java_string_hash, len(entity)):
            name = entity[etype]
            if etype not in (USER, CLIENT_ID, IP):
                return (_INVALID_REQUEST, f"Unhandled client quota entity type: {etype}")
            if name is not None and name == "":
                return (_INVALID_REQUEST, f"Empty {etype} not supported")
        if IP in entity:
            if USER in entity or CLIENT_ID in entity:
                # (Kafka's text, its missing space included)
                return (_INVALID_REQUEST, "Invalid quota entity combination, IP entity should"
                        "not be combined with User or ClientId")
            if not is_valid_ip_entity(entity[IP]):
                return (_INVALID_REQUEST, f"{entity[IP]} is not a valid IP or resolvable host.")
        return None


def _sort_key(k: tuple) -> tuple:
    d = dict(k)
    kind = (0 if set(d) == {USER} else 1 if set(d) == {USER, CLIENT_ID}
            else 2 if set(d) == {CLIENT_ID} else 3)
    return (kind, tuple((t, n is not None, n or "") for t, n in k))


def _parse(body: list) -> dict[tuple, dict[str, float]]:
    out: dict[tuple, dict[str, float]] = {}
    for item in body:
        entity = item["entity"]
        if not isinstance(entity, dict) or not entity or not all(
                t in (USER, CLIENT_ID, IP) and (n is None or isinstance(n, str))
                for t, n in entity.items()):
            raise ValueError(f"bad entity {entity!r}")
        quotas = item["quotas"]
        if not isinstance(quotas, dict) or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in quotas.values()):
            raise ValueError(f"bad quotas of {entity!r}: {quotas!r}")
        out[_key(entity)] = {str(k): float(v) for k, v in quotas.items()}
    return out
