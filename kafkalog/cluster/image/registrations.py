"""The values a metadata image holds, each printed as Kafka's ``toString()`` prints it.

``kafka-metadata-shell``'s ``cat`` shows these strings, so they are Kafka's byte for byte:
``BrokerRegistration``, ``ControllerRegistration``, ``PartitionRegistration`` (``metadata``
module), ``Endpoint``, ``VersionRange``, the ``StandardAcl`` record, ``MetadataVersion`` and
Java's ``Optional``/``Arrays.toString``/``Double.toString``. Sources: Kafka 4.2
``metadata/src/main/java/org/apache/kafka/metadata/*.java`` and ``clients/.../Endpoint.java``.

A Uuid is kept as Kafka prints it (base64url, no padding), which is how the record decoder
gives it; :meth:`kafkalog.checkpoint.Uuid.from_string` is the sort key that orders them as
``Uuid.compareTo`` does (signed 64-bit halves).

Example
-------
>>> str(VersionRange(1, 19)), str(VersionRange(0, 32767)), str(VersionRange(3, 3))
('1-19', '0+', '3')
>>> java_optional(None), java_optional("rack1")
('Optional.empty', 'Optional[rack1]')
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field

from ...checkpoint import Uuid
from ..model import SECURITY_PROTOCOLS, PartitionRegistration
from .node import java_string_key

__all__ = [
    "Endpoint",
    "VersionRange",
    "BrokerRegistration",
    "ControllerRegistration",
    "StandardAcl",
    "ScramCredentialData",
    "DelegationTokenData",
    "partition_registration_string",
    "java_optional",
    "java_list",
    "iso_zoned_utc",
    "SCRAM_MECHANISMS",
]

SHORT_MAX = 32767
LEADER_RECOVERY_STATES = {0: "RECOVERED", 1: "RECOVERING"}
# ScramMechanism type byte -> mechanismName (UNKNOWN, 0, is never a child of /image/scram)
SCRAM_MECHANISMS = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}
# org.apache.kafka.common.resource / acl enums by byte code (4.2: TWO_PHASE_COMMIT is 15)
RESOURCE_TYPES = ("UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID",
                  "DELEGATION_TOKEN", "USER")
PATTERN_TYPES = ("UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED")
ACL_OPERATIONS = ("UNKNOWN", "ANY", "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER",
                  "DESCRIBE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS",
                  "IDEMPOTENT_WRITE", "CREATE_TOKENS", "DESCRIBE_TOKENS", "TWO_PHASE_COMMIT")
PERMISSION_TYPES = ("UNKNOWN", "ANY", "DENY", "ALLOW")


def _enum_name(names: tuple[str, ...], code: int) -> str:
    # Kafka's fromCode maps an unknown code to UNKNOWN rather than failing
    return names[code] if 0 <= code < len(names) else "UNKNOWN"


def java_optional(value: object | None) -> str:
    """``Optional.toString``: ``Optional[v]`` or ``Optional.empty``."""
    return "Optional.empty" if value is None else f"Optional[{value}]"


def java_list(items: list[object]) -> str:
    """``List.toString`` / ``Arrays.toString``: ``[a, b]``."""
    return "[" + ", ".join(str(i) for i in items) + "]"


def iso_zoned_utc(ms: int) -> str:
    """``DateTimeFormatter.ISO_ZONED_DATE_TIME`` of an epoch-millis instant in zone ``UTC``.

    Seconds are always printed; the fraction only when non-zero, without trailing zeros.

    >>> iso_zoned_utc(0), iso_zoned_utc(1700000000120)
    ('1970-01-01T00:00:00Z[UTC]', '2023-11-14T22:13:20.12Z[UTC]')
    """
    t = _dt.datetime(1970, 1, 1) + _dt.timedelta(milliseconds=ms)
    year = f"+{t.year}" if t.year > 9999 else f"{t.year:04d}"
    s = f"{year}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}"
    if t.microsecond:
        s += "." + f"{t.microsecond:06d}".rstrip("0")
    return s + "Z[UTC]"


@dataclass(frozen=True)
class Endpoint:
    """``org.apache.kafka.common.Endpoint``."""

    listener: str
    security_protocol: int
    host: str
    port: int

    def __str__(self) -> str:
        protocol = SECURITY_PROTOCOLS.get(self.security_protocol, "null")
        return (f"Endpoint(listenerName='{self.listener}', securityProtocol={protocol}, "
                f"host='{self.host}', port={self.port})")

    @classmethod
    def from_record(cls, e: dict) -> Endpoint:
        return cls(e["name"], e["securityProtocol"], e["host"], e["port"])


@dataclass(frozen=True)
class VersionRange:
    """``org.apache.kafka.metadata.VersionRange``: ``3``, ``1-19`` or ``0+`` (max 32767)."""

    min: int
    max: int

    def __str__(self) -> str:
        if self.min == self.max:
            return str(self.min)
        if self.max == SHORT_MAX:
            return f"{self.min}+"
        return f"{self.min}-{self.max}"


def _listeners(record: dict) -> dict[str, Endpoint]:
    return {e["name"]: Endpoint.from_record(e) for e in record.get("endPoints") or []}


def _features(record: dict) -> dict[str, VersionRange]:
    return {f["name"]: VersionRange(f["minSupportedVersion"], f["maxSupportedVersion"])
            for f in record.get("features") or []}


def _listeners_and_features(listeners: dict[str, Endpoint],
                            features: dict[str, VersionRange]) -> str:
    # both maps are printed sorted by key (String order), whatever the HashMap order
    ls = ", ".join(str(listeners[n]) for n in sorted(listeners, key=java_string_key))
    fs = ", ".join(f"{k}: {features[k]}" for k in sorted(features, key=java_string_key))
    return f"listeners=[{ls}], supportedFeatures={{{fs}}}"


@dataclass(frozen=True)
class BrokerRegistration:
    """A registered broker (``BrokerRegistration``); ``directories`` sorted as Uuids."""

    id: int
    epoch: int
    incarnation_id: str
    listeners: dict[str, Endpoint]
    supported_features: dict[str, VersionRange]
    rack: str | None
    fenced: bool
    in_controlled_shutdown: bool
    is_migrating_zk_broker: bool
    directories: tuple[str, ...] = ()

    @classmethod
    def from_record(cls, d: dict) -> BrokerRegistration:
        """``BrokerRegistration.fromRecord(RegisterBrokerRecord)``."""
        return cls(d["brokerId"], d.get("brokerEpoch", -1), d["incarnationId"], _listeners(d),
                   _features(d), d.get("rack"), bool(d.get("fenced", True)),
                   bool(d.get("inControlledShutdown", False)),
                   bool(d.get("isMigratingZkBroker", False)),
                   tuple(sorted(d.get("logDirs") or [], key=Uuid.from_string)))

    def clone_with(self, fenced: bool | None, in_controlled_shutdown: bool | None,
                   directories: list[str] | None) -> BrokerRegistration:
        """``cloneWith``: ``None`` keeps a field."""
        dirs = (self.directories if directories is None
                else tuple(sorted(directories, key=Uuid.from_string)))
        return BrokerRegistration(
            self.id, self.epoch, self.incarnation_id, self.listeners, self.supported_features,
            self.rack, self.fenced if fenced is None else fenced,
            self.in_controlled_shutdown if in_controlled_shutdown is None
            else in_controlled_shutdown, self.is_migrating_zk_broker, dirs)

    def __str__(self) -> str:
        return (f"BrokerRegistration(id={self.id}, epoch={self.epoch}, "
                f"incarnationId={self.incarnation_id}, "
                f"{_listeners_and_features(self.listeners, self.supported_features)}"
                f", rack={java_optional(self.rack)}, fenced={_bool(self.fenced)}, "
                f"inControlledShutdown={_bool(self.in_controlled_shutdown)}, "
                f"isMigratingZkBroker={_bool(self.is_migrating_zk_broker)}, "
                f"directories={java_list(list(self.directories))})")


@dataclass(frozen=True)
class ControllerRegistration:
    """A registered controller (``ControllerRegistration``)."""

    id: int
    incarnation_id: str
    zk_migration_ready: bool
    listeners: dict[str, Endpoint]
    supported_features: dict[str, VersionRange]

    @classmethod
    def from_record(cls, d: dict) -> ControllerRegistration:
        """``new ControllerRegistration.Builder(RegisterControllerRecord)``."""
        for e in d.get("endPoints") or []:
            if e["securityProtocol"] not in SECURITY_PROTOCOLS:
                raise ValueError(f"Unknown security protocol {e['securityProtocol']}")
        return cls(d["controllerId"], d["incarnationId"], bool(d.get("zkMigrationReady")),
                   _listeners(d), _features(d))

    def __str__(self) -> str:
        return (f"ControllerRegistration(id={self.id}, incarnationId={self.incarnation_id}, "
                f"zkMigrationReady={_bool(self.zk_migration_ready)}, "
                f"{_listeners_and_features(self.listeners, self.supported_features)})")


def partition_registration_string(p: PartitionRegistration) -> str:
    """``PartitionRegistration.toString``."""
    state = LEADER_RECOVERY_STATES.get(p.leader_recovery_state, str(p.leader_recovery_state))
    return (f"PartitionRegistration(replicas={java_list(p.replicas)}, "
            f"directories={java_list(p.directories)}, isr={java_list(p.isr)}, "
            f"removingReplicas={java_list(p.removing_replicas)}, "
            f"addingReplicas={java_list(p.adding_replicas)}, elr={java_list(p.elr)}, "
            f"lastKnownElr={java_list(p.last_known_elr)}, leader={p.leader}, "
            f"leaderRecoveryState={state}, leaderEpoch={p.leader_epoch}, "
            f"partitionEpoch={p.partition_epoch})")


@dataclass(frozen=True)
class StandardAcl:
    """An ACL of the image (the ``StandardAcl`` record: its toString is a record's)."""

    resource_type: int
    resource_name: str
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission_type: int

    @classmethod
    def from_record(cls, d: dict) -> StandardAcl:
        return cls(d["resourceType"], d["resourceName"], d["patternType"], d["principal"],
                   d["host"], d["operation"], d["permissionType"])

    def __str__(self) -> str:
        return (f"StandardAcl[resourceType={_enum_name(RESOURCE_TYPES, self.resource_type)}, "
                f"resourceName={self.resource_name}, "
                f"patternType={_enum_name(PATTERN_TYPES, self.pattern_type)}, "
                f"principal={self.principal}, host={self.host}, "
                f"operation={_enum_name(ACL_OPERATIONS, self.operation)}, "
                f"permissionType={_enum_name(PERMISSION_TYPES, self.permission_type)}]")


@dataclass(frozen=True)
class ScramCredentialData:
    """A user's SCRAM credential for one mechanism (``ScramCredentialData``)."""

    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    @classmethod
    def from_record(cls, d: dict) -> ScramCredentialData:
        return cls(bytes(d["salt"]), bytes(d["storedKey"]), bytes(d["serverKey"]),
                   d["iterations"])


@dataclass(frozen=True)
class DelegationTokenData:
    """A delegation token's information (``TokenInformation`` of ``DelegationTokenData``)."""

    token_id: str
    owner: str
    requester: str
    renewers: tuple[str, ...] = field(default=())
    issue_timestamp: int = 0
    max_timestamp: int = 0
    expiry_timestamp: int = 0

    @classmethod
    def from_record(cls, d: dict) -> DelegationTokenData:
        return cls(d["tokenId"], d["owner"], d["requester"], tuple(d.get("renewers") or ()),
                   d["issueTimestamp"], d["maxTimestamp"], d["expirationTimestamp"])


def _bool(b: bool) -> str:
    return "true" if b else "false"
