"""ACLs as Kafka's KRaft authorizer decides them: the model (:class:`AclBinding`, its filter),
``StandardAuthorizer``'s decision (:class:`Authorizer`) and the ACLs of a log-dir tree
(:class:`AclStore`).

Ported from Kafka's Java/Scala source (``apache/kafka`` trunk of October 2024, as in 3.9):

* ``clients/.../common/resource/{ResourceType, PatternType, ResourcePattern,
  ResourcePatternFilter}.java`` and ``clients/.../common/acl/{AclOperation, AclPermissionType,
  AccessControlEntry, AccessControlEntryFilter, AccessControlEntryData, AclBinding,
  AclBindingFilter}.java``: the enum codes, ``matches``, ``matchesAtMostOne``,
  ``findIndefiniteField``, ``isUnknown``, ``toFilter``;
* ``metadata/.../authorizer/StandardAuthorizerData.java`` (``authorize``, ``findAclRule``,
  ``checkSection``, ``findResult``, ``MatchingRuleBuilder``), ``StandardAuthorizer.java``
  (``getConfiguredSuperUsers``, ``getDefaultResult``), ``StandardAcl.java`` (``compareTo``: the
  order ACLs are listed in, ``kafkaPrincipal``) and ``AclCache.java`` (``acls(filter)``);
* ``clients/.../server/authorizer/Authorizer.java`` (``authorizeByResourceType``, the default
  that StandardAuthorizer keeps) and ``core/.../server/AuthHelper.scala``
  (``authorizedOperations``), with ``server/.../security/authorizer/AclEntry.java``
  (``supportedOperations``);
* ``metadata/.../controller/AclControlManager.java`` (``createAcls``, ``validateNewAcl``,
  ``deleteAcls``, ``validateFilter``), ``AclMutator.java`` (what they answer) and the checks
  ``core/.../server/AclApis.scala`` makes before it (:func:`validate_acl_creation`).

:meth:`Authorizer.authorize` decides one action (principal, client address, operation, resource
named literally) as ``StandardAuthorizerData.authorize`` does:

1. a super user (``super.users``) may do everything;
2. the ACLs that *apply* to the resource are those of its type that are LITERAL with its name,
   LITERAL with the name ``*``, or PREFIXED with a prefix of its name;
3. of those, an ACL *counts* when its principal is the requester's or ``User:*``, its host is
   the client's address (as Java writes it) or ``*``, and its operation is ALL or the requested
   one; besides, an ALLOW of READ, WRITE, DELETE or ALTER counts for DESCRIBE and an ALLOW of
   ALTER_CONFIGS for DESCRIBE_CONFIGS (a DENY implies nothing);
4. a DENY that counts denies, whatever allows; else an ALLOW that counts allows;
5. else, when no ACL applies to the resource at all, ``allow.everyone.if.no.acl.found`` decides
   (default false: denied); when some apply (to other principals, hosts or operations): denied.

>>> a = Authorizer([AclBinding(ResourceType.TOPIC, "orders-", PatternType.PREFIXED,
...                            "User:alice", "*", AclOperation.WRITE, AclPermissionType.ALLOW)])
>>> a.authorize("User:alice", "10.0.0.1", AclOperation.DESCRIBE, ResourceType.TOPIC, "orders-eu")
True
>>> a.authorize("User:bob", "10.0.0.1", AclOperation.WRITE, ResourceType.TOPIC, "orders-eu")
False
>>> a.authorize("User:bob", "10.0.0.1", AclOperation.WRITE, ResourceType.TOPIC, "other")
False
>>> Authorizer(a.acls, allow_everyone_if_no_acl_found=True).authorize(
...     "User:bob", "10.0.0.1", AclOperation.WRITE, ResourceType.TOPIC, "other")
True
"""

from __future__ import annotations

import functools
import ipaddress
import os
import struct
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import ClassVar

from ..checkpoint import JsonStateFile

__all__ = [
    "ResourceType",
    "PatternType",
    "AclOperation",
    "AclPermissionType",
    "AclBinding",
    "AclBindingFilter",
    "AclValidationError",
    "Authorizer",
    "AclStore",
    "CLUSTER_NAME",
    "WILDCARD",
    "WILDCARD_PRINCIPAL",
    "MAX_RECORDS_PER_USER_OP",
    "binding_argument_error",
    "validate_acl_creation",
    "validate_new_acl",
    "validate_filter",
    "supported_operations",
    "to_32bit_field",
    "parse_super_users",
    "parse_allow_everyone_if_no_acl_found",
    "java_host_address",
    "kafka_order_key",
]

#: the one name of the CLUSTER resource (``Resource.CLUSTER_NAME``)
CLUSTER_NAME = "kafka-cluster"
#: a LITERAL resource name, or an ACL host, that matches every one
#: (``ResourcePattern.WILDCARD_RESOURCE``, ``StandardAuthorizerData.WILDCARD``)
WILDCARD = "*"
#: the ACL principal that matches every principal (``StandardAuthorizerData.WILDCARD_PRINCIPAL``)
WILDCARD_PRINCIPAL = "User:*"
#: most records one controller operation may write (``QuorumController.MAX_RECORDS_PER_USER_OP``)
MAX_RECORDS_PER_USER_OP = 10000

# Kafka's Errors codes of the answers below
INVALID_REQUEST = 42
POLICY_VIOLATION = 44
UNKNOWN_SERVER_ERROR = -1


class _KafkaEnum(IntEnum):
    """An enum whose codes are Kafka's byte codes; unknown codes and names read as UNKNOWN."""

    @classmethod
    def from_code(cls, code: int) -> _KafkaEnum:
        """``fromCode``: the member with ``code``, or UNKNOWN (not an error, as in Kafka)."""
        try:
            return cls(code)
        except ValueError:
            return cls(0)

    @classmethod
    def from_string(cls, name: str) -> _KafkaEnum:
        """``fromString``: the member named ``name`` (any case), or UNKNOWN."""
        return cls.__members__.get(name.upper(), cls(0))

    def is_unknown(self) -> bool:
        return self.value == 0


class ResourceType(_KafkaEnum):
    """``org.apache.kafka.common.resource.ResourceType``."""

    UNKNOWN = 0
    ANY = 1  # in a filter: any type
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(_KafkaEnum):
    """``org.apache.kafka.common.resource.PatternType``."""

    UNKNOWN = 0
    ANY = 1  # in a filter: any pattern type, the name compared as is
    MATCH = 2  # in a filter: the patterns that would apply to the named resource
    LITERAL = 3
    PREFIXED = 4

    @classmethod
    def from_string(cls, name: str) -> PatternType:
        # PatternType.fromString is the one that does not upper-case
        return cls.__members__.get(name, cls.UNKNOWN)

    def is_specific(self) -> bool:
        """``isSpecific``: a type a pattern (not only a filter) may have."""
        return self not in (PatternType.UNKNOWN, PatternType.ANY, PatternType.MATCH)


class AclOperation(_KafkaEnum):
    """``org.apache.kafka.common.acl.AclOperation`` (at most 30: authorized-operation fields
    are 32-bit)."""

    UNKNOWN = 0
    ANY = 1  # in a filter
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14
    TWO_PHASE_COMMIT = 15  # KIP-939 (4.x): InitProducerId with enable2Pc on a transactional id


class AclPermissionType(_KafkaEnum):
    """``org.apache.kafka.common.acl.AclPermissionType``."""

    UNKNOWN = 0
    ANY = 1  # in a filter
    DENY = 2
    ALLOW = 3


# The operations whose ALLOW also allows DESCRIBE / DESCRIBE_CONFIGS (StandardAuthorizerData's
# IMPLIES_DESCRIBE, IMPLIES_DESCRIBE_CONFIGS): whoever may read a topic may see it exists.
_IMPLIES: dict[int, frozenset[AclOperation]] = {
    AclOperation.DESCRIBE: frozenset({AclOperation.DESCRIBE, AclOperation.READ,
                                      AclOperation.WRITE, AclOperation.DELETE,
                                      AclOperation.ALTER}),
    AclOperation.DESCRIBE_CONFIGS: frozenset({AclOperation.DESCRIBE_CONFIGS,
                                              AclOperation.ALTER_CONFIGS}),
}

_ALLOW, _DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
_LITERAL, _PREFIXED = PatternType.LITERAL, PatternType.PREFIXED


@dataclass(frozen=True)
class AclBinding:
    """One ACL: a resource pattern (type, name, pattern type) and an access-control entry
    (principal, host, operation, permission) -- Kafka's ``AclBinding`` and ``StandardAcl``.

    Like ``StandardAcl`` it takes any values; :func:`binding_argument_error` says what Kafka's
    ``ResourcePattern``/``AccessControlEntry`` constructors would refuse and
    :func:`validate_new_acl` what the controller refuses to store.
    """

    resource_type: ResourceType
    resource_name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: AclOperation
    permission_type: AclPermissionType

    def is_unknown(self) -> bool:
        """``AclBinding.isUnknown``: some enum field is UNKNOWN."""
        return (self.resource_type == ResourceType.UNKNOWN
                or self.pattern_type == PatternType.UNKNOWN
                or self.operation == AclOperation.UNKNOWN
                or self.permission_type == AclPermissionType.UNKNOWN)

    def to_filter(self) -> AclBindingFilter:
        """``AclBinding.toFilter``: the filter matching exactly this binding."""
        return AclBindingFilter(self.resource_type, self.resource_name, self.pattern_type,
                                self.principal, self.host, self.operation,
                                self.permission_type)


@dataclass(frozen=True)
class AclBindingFilter:
    """``AclBindingFilter`` (a ``ResourcePatternFilter`` and an ``AccessControlEntryFilter``):
    a None field (Kafka's null) matches any value, and so do the ANY enum values; a MATCH pattern
    type matches the patterns that would apply to the resource named (LITERAL with that name or
    ``*``, PREFIXED with a prefix of it)."""

    resource_type: ResourceType = ResourceType.ANY
    resource_name: str | None = None
    pattern_type: PatternType = PatternType.ANY
    principal: str | None = None
    host: str | None = None
    operation: AclOperation = AclOperation.ANY
    permission_type: AclPermissionType = AclPermissionType.ANY

    #: the filter matching every binding (``AclBindingFilter.ANY``)
    ANY: ClassVar[AclBindingFilter]

    def matches(self, b: AclBinding) -> bool:
        """``ResourcePatternFilter.matches`` and ``AccessControlEntryFilter.matches``."""
        return self.matches_pattern(b) and self.matches_entry(b)

    def matches_pattern(self, b: AclBinding) -> bool:
        """``ResourcePatternFilter.matches`` on the binding's resource pattern."""
        # (None resource/pattern types are accepted as ANY: Kafka requires them non-null)
        if self.resource_type not in (ResourceType.ANY, None, b.resource_type):
            return False
        if self.pattern_type not in (PatternType.ANY, PatternType.MATCH, None, b.pattern_type):
            return False
        if self.resource_name is None:
            return True
        if self.pattern_type in (PatternType.ANY, None, b.pattern_type):
            return self.resource_name == b.resource_name
        # the filter is MATCH: would the pattern apply to the resource named?
        if b.pattern_type == _LITERAL:
            return b.resource_name in (self.resource_name, WILDCARD)
        if b.pattern_type == _PREFIXED:
            return self.resource_name.startswith(b.resource_name)
        raise ValueError(f"Unsupported PatternType: {b.pattern_type.name}")

    def matches_entry(self, b: AclBinding) -> bool:
        """``AccessControlEntryFilter.matches`` on the binding's entry."""
        return ((self.principal is None or self.principal == b.principal)
                and (self.host is None or self.host == b.host)
                and self.operation in (AclOperation.ANY, None, b.operation)
                and self.permission_type in (AclPermissionType.ANY, None, b.permission_type))

    def find_indefinite_field(self) -> str | None:
        """``findIndefiniteField``: Kafka's text for the first field that could match more than
        one value (ANY, UNKNOWN, null, MATCH), or None."""
        if self.resource_type in (ResourceType.ANY, None):
            return "Resource type is ANY."
        if self.resource_type == ResourceType.UNKNOWN:
            return "Resource type is UNKNOWN."
        if self.resource_name is None:
            return "Resource name is NULL."
        if self.pattern_type == PatternType.MATCH:
            return "Resource pattern type is MATCH."
        if self.pattern_type == PatternType.UNKNOWN:
            return "Resource pattern type is UNKNOWN."
        # (PatternType.ANY is not indefinite in Kafka's ResourcePatternFilter either)
        if self.principal is None:
            return "Principal is NULL"
        if self.host is None:
            return "Host is NULL"
        if self.operation in (AclOperation.ANY, None):
            return "Operation is ANY"
        if self.operation == AclOperation.UNKNOWN:
            return "Operation is UNKNOWN"
        if self.permission_type in (AclPermissionType.ANY, None):
            return "Permission type is ANY"
        if self.permission_type == AclPermissionType.UNKNOWN:
            return "Permission type is UNKNOWN"
        return None

    def matches_at_most_one(self) -> bool:
        """``matchesAtMostOne``: no field is ANY, UNKNOWN, null or MATCH."""
        return self.find_indefinite_field() is None

    def is_unknown(self) -> bool:
        """``isUnknown``: some enum field is UNKNOWN (the controller refuses such a filter)."""
        return self.pattern_is_unknown() or self.entry_is_unknown()

    def pattern_is_unknown(self) -> bool:
        """``ResourcePatternFilter.isUnknown``."""
        return (self.resource_type == ResourceType.UNKNOWN
                or self.pattern_type == PatternType.UNKNOWN)

    def entry_is_unknown(self) -> bool:
        """``AccessControlEntryFilter.isUnknown``."""
        return (self.operation == AclOperation.UNKNOWN
                or self.permission_type == AclPermissionType.UNKNOWN)


AclBindingFilter.ANY = AclBindingFilter()


class AclValidationError(Exception):
    """Why Kafka refuses a binding or a filter: ``error_code`` (Kafka's ``Errors`` code) and
    ``message`` (Kafka's text, None where Kafka sends null)."""

    def __init__(self, message: str | None, error_code: int = INVALID_REQUEST) -> None:
        super().__init__(message if message is not None else f"error {error_code}")
        self.message = message
        self.error_code = error_code

    def __repr__(self) -> str:
        return f"AclValidationError({self.message!r}, error_code={self.error_code})"


def binding_argument_error(b: AclBinding) -> str | None:
    """What Kafka's ``ResourcePattern`` and ``AccessControlEntry`` constructors refuse (their
    ``IllegalArgumentException`` text), or None. A Kafka broker building the bindings of a
    CreateAcls request fails the whole request on these, before any validation below."""
    if b.resource_type == ResourceType.ANY:
        return "resourceType must not be ANY"
    if b.pattern_type in (PatternType.MATCH, PatternType.ANY):
        return f"patternType must not be {b.pattern_type.name}"
    if b.operation == AclOperation.ANY:
        return "operation must not be ANY"
    if b.permission_type == AclPermissionType.ANY:
        return "permissionType must not be ANY"
    return None


def validate_acl_creation(b: AclBinding) -> None:
    """``AclApis.handleCreateAcls``'s checks, made by the broker before the controller's
    :func:`validate_new_acl` (INVALID_REQUEST with Kafka's texts)."""
    if b.resource_type == ResourceType.CLUSTER and b.resource_name != CLUSTER_NAME:
        raise AclValidationError(
            "The only valid name for the CLUSTER resource is " + CLUSTER_NAME)
    if b.resource_name == "":
        raise AclValidationError("Invalid empty resource name")


def validate_new_acl(b: AclBinding) -> None:
    """``AclControlManager.validateNewAcl``: INVALID_REQUEST with Kafka's texts.

    Beyond Kafka: a principal without a colon is refused with the text Kafka's
    ``StandardAcl.kafkaPrincipal`` throws (Kafka stores such an ACL, then fails every later
    authorization it is consulted for), and a null principal or host is refused (Kafka's
    ``AccessControlEntry`` throws NullPointerException)."""
    if b.resource_type in (ResourceType.UNKNOWN, ResourceType.ANY):
        raise AclValidationError(f"Invalid resourceType {b.resource_type.name}")
    if b.pattern_type not in (_LITERAL, _PREFIXED):
        raise AclValidationError(f"Invalid patternType {b.pattern_type.name}")
    if b.operation in (AclOperation.UNKNOWN, AclOperation.ANY):
        raise AclValidationError(f"Invalid operation {b.operation.name}")
    if b.permission_type not in (_DENY, _ALLOW):
        raise AclValidationError(f"Invalid permissionType {b.permission_type.name}")
    if not b.resource_name:
        raise AclValidationError("Resource name should not be empty")
    if b.principal is None:
        raise AclValidationError("Invalid null principal")
    if ":" not in b.principal:
        raise AclValidationError(
            f"Could not parse principal from `{b.principal}` (no colon is present separating "
            "the principal type from the principal name)")
    if b.host is None:
        raise AclValidationError("Invalid null host")


def validate_filter(f: AclBindingFilter) -> None:
    """``AclControlManager.validateFilter``: no UNKNOWN value in a delete filter."""
    if f.pattern_is_unknown():
        raise AclValidationError("Unknown patternFilter.")
    if f.entry_is_unknown():
        raise AclValidationError("Unknown entryFilter.")


_SUPPORTED_OPERATIONS = {
    ResourceType.TOPIC: frozenset({
        AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DESCRIBE,
        AclOperation.DELETE, AclOperation.ALTER, AclOperation.DESCRIBE_CONFIGS,
        AclOperation.ALTER_CONFIGS}),
    ResourceType.GROUP: frozenset({
        AclOperation.READ, AclOperation.DESCRIBE, AclOperation.DELETE,
        AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS}),
    ResourceType.CLUSTER: frozenset({
        AclOperation.CREATE, AclOperation.CLUSTER_ACTION, AclOperation.DESCRIBE_CONFIGS,
        AclOperation.ALTER_CONFIGS, AclOperation.IDEMPOTENT_WRITE, AclOperation.ALTER,
        AclOperation.DESCRIBE}),
    ResourceType.TRANSACTIONAL_ID: frozenset({AclOperation.DESCRIBE, AclOperation.WRITE,
                                              AclOperation.TWO_PHASE_COMMIT}),
    ResourceType.DELEGATION_TOKEN: frozenset({AclOperation.DESCRIBE}),
    ResourceType.USER: frozenset({AclOperation.CREATE_TOKENS, AclOperation.DESCRIBE_TOKENS}),
}


def supported_operations(resource_type: int) -> frozenset[AclOperation]:
    """``AclEntry.supportedOperations``: the operations that mean something on the type (what
    ``include_*_authorized_operations`` answers are computed over)."""
    try:
        return _SUPPORTED_OPERATIONS[ResourceType(resource_type)]
    except (KeyError, ValueError):
        raise ValueError("Not a concrete resource type") from None


def to_32bit_field(operations: Iterable[int]) -> int:
    """``Utils.to32BitField``: bit ``1 << code`` per operation (Kafka's authorized-operations
    field)."""
    value = 0
    for op in operations:
        if not 0 <= op <= 31:
            raise ValueError(f"out of range: i = {int(op)}")
        value |= 1 << op
    return value


def _parse_principal(s: str) -> tuple[str, str]:
    """``SecurityUtils.parseKafkaPrincipal``: (type, name), split at the first colon."""
    typ, sep, name = (s or "").partition(":")
    if not sep:
        raise ValueError(
            f"expected a string in format principalType:principalName but got {s}")
    return typ, name


def parse_super_users(value: str | None) -> frozenset[str]:
    """``StandardAuthorizer.getConfiguredSuperUsers``: ``super.users`` split at ``;``, trimmed,
    empty parts skipped, each a ``Type:name`` principal (ValueError with Kafka's text if not)."""
    if value is None:
        return frozenset()
    out = set()
    for part in value.split(";"):
        v = part.strip()
        if v:
            _parse_principal(v)
            out.add(v)
    return frozenset(out)


def parse_allow_everyone_if_no_acl_found(value: object) -> bool:
    """``StandardAuthorizer.getDefaultResult``: Java's ``Boolean.parseBoolean`` of the trimmed
    text (``true`` in any case; anything else, and no value, is false)."""
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() == "true"


@functools.lru_cache(maxsize=4096)
def java_host_address(host: str) -> str:
    """The client address as Java's ``InetAddress.getHostAddress`` writes it, which is what
    Kafka compares ACL hosts with: IPv6 in eight hex groups without zero compression
    (``::1`` -> ``0:0:0:0:0:0:0:1``), an IPv4-mapped IPv6 address as its IPv4 address (Java
    makes it an ``Inet4Address``). Anything else is returned as is."""
    if ":" not in host:
        return host  # IPv4 (or not an address): Java writes dotted quads as Python does
    addr, pct, scope = host.strip("[]").partition("%")
    try:
        ip = ipaddress.IPv6Address(addr)
    except ValueError:
        return host
    if ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    text = ":".join(format(int(g, 16), "x") for g in ip.exploded.split(":"))
    return text + pct + scope


def _utf16_units(s: str) -> tuple[int, ...]:
    # Java's String.compareTo compares UTF-16 code units (not code points, as Python does)
    data = s.encode("utf-16-be", "surrogatepass")
    return struct.unpack(f">{len(data) // 2}H", data)


def kafka_order_key(b: AclBinding) -> tuple:
    """The sort key of ``StandardAcl.compareTo``, the order Kafka's authorizer lists ACLs in:
    resource type, then resource name in REVERSE, then pattern type, operation, principal,
    host, permission type.

    (Reverse name order puts every prefix of a name after it, which Kafka's scan for the ACLs
    applying to a resource relies on. Here: each code unit complemented, and a terminator above
    all of them so that a name sorts before its prefixes.)"""
    return (int(b.resource_type),
            tuple(0xFFFF - u for u in _utf16_units(b.resource_name)) + (0x10000,),
            int(b.pattern_type), int(b.operation), _utf16_units(b.principal),
            _utf16_units(b.host), int(b.permission_type))


class _TypeIndex:
    """The ACLs of one resource type, indexed for ``authorize``: LITERAL ones by name (``*``
    included), PREFIXED ones by prefix, and the distinct prefix lengths so the prefixes of a
    name are found with one dict lookup per length (not a scan of every prefix ACL)."""

    __slots__ = ("literal", "prefixed", "prefix_lengths", "all")

    def __init__(self) -> None:
        self.literal: dict[str, list[AclBinding]] = {}
        self.prefixed: dict[str, list[AclBinding]] = {}
        self.prefix_lengths: tuple[int, ...] = ()
        self.all: list[AclBinding] = []

    def applying(self, name: str) -> Iterator[list[AclBinding]]:
        """The groups of ACLs that apply to the resource ``name`` (rule 2)."""
        group = self.literal.get(name)
        if group:
            yield group
        if name != WILDCARD:
            group = self.literal.get(WILDCARD)
            if group:
                yield group
        n = len(name)
        for length in self.prefix_lengths:
            if length > n:
                break
            group = self.prefixed.get(name[:length])
            if group:
                yield group


class Authorizer:
    """Decides actions from a set of ACLs: Kafka's ``StandardAuthorizer`` (see the module
    docstring for the rules). Immutable: build a new one when the ACLs change.

    ``principal`` arguments are Kafka's ``KafkaPrincipal`` text (``User:alice``), ``host`` the
    client's IP address (normalised as Java writes it, :func:`java_host_address`)."""

    def __init__(self, acls: Iterable[AclBinding] = (), super_users: Iterable[str] = (),
                 allow_everyone_if_no_acl_found: bool = False) -> None:
        self.super_users = frozenset(super_users)
        self.allow_everyone_if_no_acl_found = bool(allow_everyone_if_no_acl_found)
        # a set of ACLs, as Kafka's AclCache (which refuses a duplicate); first-seen order
        self.acls: tuple[AclBinding, ...] = tuple(dict.fromkeys(acls))
        self._index: dict[int, _TypeIndex] = {}
        for b in self.acls:
            idx = self._index.get(b.resource_type)
            if idx is None:
                idx = self._index[b.resource_type] = _TypeIndex()
            idx.all.append(b)
            if b.pattern_type == _LITERAL:
                idx.literal.setdefault(b.resource_name, []).append(b)
            elif b.pattern_type == _PREFIXED:
                idx.prefixed.setdefault(b.resource_name, []).append(b)
            # (an ACL of another pattern type never applies: Kafka's scan skips it too)
        for idx in self._index.values():
            idx.prefix_lengths = tuple(sorted({len(p) for p in idx.prefixed}))

    # -- StandardAuthorizerData.authorize ------------------------------------------------------

    @staticmethod
    def find_result(b: AclBinding, principal: str, host: str,
                    operation: int) -> AclPermissionType | None:
        """``StandardAuthorizerData.findResult``: ALLOW or DENY when the ACL counts for the
        action (rule 3; its resource is assumed to apply), else None."""
        if b.principal != principal and b.principal != WILDCARD_PRINCIPAL:
            return None
        if b.host != WILDCARD and b.host != host:
            return None
        if b.operation != AclOperation.ALL:
            if b.permission_type == _ALLOW:
                implied = _IMPLIES.get(operation)
                if implied is not None:
                    if b.operation not in implied:
                        return None
                elif b.operation != operation:
                    return None
            elif b.operation != operation:
                # a DENY implies nothing: a DENY of READ does not deny DESCRIBE
                return None
        return _ALLOW if b.permission_type == _ALLOW else _DENY

    def authorize(self, principal: str, host: str, operation: int, resource_type: int,
                  resource_name: str) -> bool:
        """Whether ``principal`` from ``host`` may do ``operation`` on the resource of type
        ``resource_type`` named ``resource_name`` (Kafka's Action with a LITERAL pattern)."""
        if principal in self.super_users:
            return True
        idx = self._index.get(resource_type)
        if idx is None:
            return self.allow_everyone_if_no_acl_found
        host = java_host_address(host)
        applies = allowed = False
        for group in idx.applying(resource_name):
            applies = True
            for b in group:
                r = self.find_result(b, principal, host, operation)
                if r is _DENY:
                    return False  # a DENY wins over any ALLOW
                if r is _ALLOW:
                    allowed = True
        if allowed:
            return True
        # the "no ACL found" default only when no ACL at all applies to the resource
        return not applies and self.allow_everyone_if_no_acl_found

    def authorized_operations(self, principal: str, host: str, resource_type: int,
                              resource_name: str) -> set[AclOperation]:
        """``AuthHelper.authorizedOperations``: the operations supported on the resource type
        (:func:`supported_operations`) that ``principal`` may do on the resource;
        :func:`to_32bit_field` makes the response field of it."""
        return {op for op in supported_operations(resource_type)
                if self.authorize(principal, host, op, resource_type, resource_name)}

    def authorize_by_resource_type(self, principal: str, host: str, operation: int,
                                   resource_type: int) -> bool:
        """``Authorizer.authorizeByResourceType`` (the default StandardAuthorizer keeps):
        whether ``principal`` may do ``operation`` on at least one resource of the type.

        First the action on a resource named ``hardcode`` is authorized (so super users and
        ``allow.everyone.if.no.acl.found`` count); else the ACLs of the type whose principal,
        host and operation (exactly, or ALL: no implied operations here) match are read: a
        DENY on the LITERAL ``*`` denies; an ALLOW on the LITERAL ``*`` allows; else some
        ALLOW must not be dominated: a LITERAL one by a DENY of the same name or a PREFIXED
        DENY of a (non-empty) prefix of it, a PREFIXED one by a PREFIXED DENY of a prefix."""
        if resource_type == ResourceType.ANY:
            raise ValueError("Must specify a non-filter resource type for "
                             "authorizeByResourceType")
        if resource_type == ResourceType.UNKNOWN:
            raise ValueError("Unknown resource type")
        if operation == AclOperation.ANY:
            raise ValueError("Must specify a non-filter operation type for "
                             "authorizeByResourceType")
        if operation == AclOperation.UNKNOWN:
            raise ValueError("Unknown operation type")
        if self.authorize(principal, host, operation, resource_type, "hardcode"):
            return True
        host = java_host_address(host)
        deny_literal: set[str] = set()
        deny_prefixed: set[str] = set()
        allow_literal: set[str] = set()
        allow_prefixed: set[str] = set()
        wildcard_allow = False
        idx = self._index.get(resource_type)
        for b in idx.all if idx is not None else ():
            if b.host != host and b.host != WILDCARD:
                continue
            if b.principal != principal and b.principal != WILDCARD_PRINCIPAL:
                continue
            if b.operation != operation and b.operation != AclOperation.ALL:
                continue
            if b.permission_type == _DENY:
                if b.pattern_type == _LITERAL:
                    if b.resource_name == WILDCARD:
                        return False
                    deny_literal.add(b.resource_name)
                elif b.pattern_type == _PREFIXED:
                    deny_prefixed.add(b.resource_name)
                continue
            if b.permission_type != _ALLOW:
                continue
            if b.pattern_type == _LITERAL:
                if b.resource_name == WILDCARD:
                    wildcard_allow = True
                else:
                    allow_literal.add(b.resource_name)
            elif b.pattern_type == _PREFIXED:
                allow_prefixed.add(b.resource_name)
        if wildcard_allow:
            return True
        for literal, names in ((True, allow_literal), (False, allow_prefixed)):
            for name in names:
                if literal and name in deny_literal:
                    continue
                if not any(name[:i] in deny_prefixed for i in range(1, len(name) + 1)):
                    return True
        return False

    def any_topic_authorized(self, principal: str, host: str, operation: int) -> bool:
        """:meth:`authorize_by_resource_type` for TOPIC: what KafkaApis asks for an
        InitProducerId without a transactional id when IDEMPOTENT_WRITE on the cluster is
        not allowed (KIP-679: WRITE on some topic suffices)."""
        return self.authorize_by_resource_type(principal, host, operation, ResourceType.TOPIC)

    def describe(self, f: AclBindingFilter) -> list[AclBinding]:
        """``StandardAuthorizer.acls(filter)``: the ACLs ``f`` matches, in Kafka's order
        (:func:`kafka_order_key`)."""
        return sorted((b for b in self.acls if f.matches(b)), key=kafka_order_key)


class AclStore:
    """The ACLs of a log-dir tree, in ``.kafkalog-acls.json`` at its root. KRaft Kafka keeps
    them as ``AccessControlEntryRecord``s in its metadata log, written by the controller's
    ``AclControlManager``; this is that manager with a JSON file for a log. Every change is
    one atomic write (Kafka's records of one operation are one atomic batch). Thread safe.

    >>> import tempfile
    >>> s = AclStore(tempfile.mkdtemp())
    >>> b = AclBinding(ResourceType.GROUP, "g", PatternType.LITERAL, "User:a", "*",
    ...                AclOperation.READ, AclPermissionType.ALLOW)
    >>> s.create([b, b]), s.describe(AclBindingFilter()) == [b]
    ([None, None], True)
    >>> s.delete([AclBindingFilter(ResourceType.GROUP)]) == [(None, [b])]
    True
    """

    FILE = ".kafkalog-acls.json"

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self._file = JsonStateFile(Path(root) / self.FILE, "ACLs", "acls", kind=list, indent=1)
        self.path = self._file.path
        self._lock = threading.Lock()
        # an ordered set: creation order, as the file lists them
        self._acls: dict[AclBinding, None] = dict.fromkeys(self._file.load(_parse_acls) or ())

    def _save(self) -> None:
        self._file.save([
            {"resourceType": b.resource_type.name, "name": b.resource_name,
             "patternType": b.pattern_type.name, "principal": b.principal, "host": b.host,
             "operation": b.operation.name, "permissionType": b.permission_type.name}
            for b in self._acls])

    def acls(self) -> list[AclBinding]:
        """Every ACL, in creation order."""
        with self._lock:
            return list(self._acls)

    def describe(self, f: AclBindingFilter) -> list[AclBinding]:
        """The ACLs ``f`` matches, in Kafka's order (:func:`kafka_order_key`), as
        ``StandardAuthorizer.acls(filter)`` lists them for DescribeAcls."""
        with self._lock:
            return sorted((b for b in self._acls if f.matches(b)), key=kafka_order_key)

    def create(self, bindings: Sequence[AclBinding]) -> list[AclValidationError | None]:
        """``AclControlManager.createAcls``: per binding None (created, or already present:
        ``AclMutator`` answers success for it) or why :func:`validate_new_acl` refused it.
        The new ACLs are written together. More than :data:`MAX_RECORDS_PER_USER_OP` new ones
        fail the whole operation (POLICY_VIOLATION "Unable to perform excessively large batch
        operation." for every binding), as the controller's bounded record list does."""
        out: list[AclValidationError | None] = []
        with self._lock:
            new: dict[AclBinding, None] = {}
            for b in bindings:
                try:
                    validate_new_acl(b)
                except AclValidationError as e:
                    out.append(e)
                    continue
                if b not in self._acls:
                    new[b] = None
                out.append(None)
            if len(new) > MAX_RECORDS_PER_USER_OP:
                err = AclValidationError("Unable to perform excessively large batch operation.",
                                         POLICY_VIOLATION)
                return [err] * len(bindings)
            if new:
                self._acls.update(new)
                try:
                    self._save()
                except BaseException:
                    for b in new:  # nothing created unless it is on disk
                        del self._acls[b]
                    raise
        return out

    def delete(self, filters: Sequence[AclBindingFilter]
               ) -> list[tuple[AclValidationError | None, list[AclBinding]]]:
        """``AclControlManager.deleteAcls``: per filter, why :func:`validate_filter` refused it,
        or the ACLs it matched, all removed together. Every filter is matched against the ACLs
        as they were before the call, so an ACL two filters match is listed by both and
        removed once. More than :data:`MAX_RECORDS_PER_USER_OP` ACLs to remove fail the whole
        operation (UNKNOWN_SERVER_ERROR, no message, for every filter; nothing removed), as
        the controller's atomic batch limit does."""
        out: list[tuple[AclValidationError | None, list[AclBinding]]] = []
        with self._lock:
            removed: dict[AclBinding, None] = {}
            for f in filters:
                try:
                    validate_filter(f)
                except AclValidationError as e:
                    out.append((e, []))
                    continue
                hits = [b for b in self._acls if f.matches(b)]
                removed.update(dict.fromkeys(hits))
                out.append((None, hits))
            if len(removed) > MAX_RECORDS_PER_USER_OP:
                err = AclValidationError(None, UNKNOWN_SERVER_ERROR)
                return [(err, []) for _ in filters]
            if removed:
                before = self._acls
                self._acls = {b: None for b in before if b not in removed}
                try:
                    self._save()
                except BaseException:
                    self._acls = before
                    raise
        return out

    def authorizer(self, super_users: Iterable[str] = (),
                   allow_everyone_if_no_acl_found: bool = False) -> Authorizer:
        """An :class:`Authorizer` over the current ACLs."""
        return Authorizer(self.acls(), super_users, allow_everyone_if_no_acl_found)


def _parse_acls(entries: list) -> list[AclBinding]:
    """The ``acls`` body of ``.kafkalog-acls.json``: one object per ACL, enum fields by Kafka's
    names. What could not have been created is not an ACL (``validate_new_acl``)."""
    out = []
    for i, a in enumerate(entries):
        try:
            b = AclBinding(
                _enum(ResourceType, a, "resourceType"), _text(a, "name"),
                _enum(PatternType, a, "patternType"), _text(a, "principal"), _text(a, "host"),
                _enum(AclOperation, a, "operation"),
                _enum(AclPermissionType, a, "permissionType"))
            validate_new_acl(b)
        except AclValidationError as e:
            raise ValueError(f"ACL #{i}: invalid ACL: {e.message}") from None
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise ValueError(f"ACL #{i}: {type(e).__name__}: {e}") from None
        out.append(b)
    return out


def _enum(cls: type[_KafkaEnum], a: dict, key: str) -> _KafkaEnum:
    name = _text(a, key)
    try:
        return cls[name]
    except KeyError:
        raise ValueError(f"{key!r} is not a {cls.__name__} name (found {name!r})") from None


def _text(a: dict, key: str) -> str:
    v = a[key]
    if not isinstance(v, str):
        raise TypeError(f"{key!r} is not a string")
    return v
