"""ACLs as Kafka's KRaft authorizer decides them: the model (``AclBinding`` and its filter) and
``StandardAuthorizer``'s rules, plus the ACLs of a log-dir tree (:class:`AclStore`).

Ported from Kafka (3.9): ``common.resource.{ResourceType, PatternType, ResourcePatternFilter}``,
``common.acl.{AclOperation, AclPermissionType, AccessControlEntryFilter, AclBindingFilter}``,
``metadata.authorizer.StandardAuthorizerData`` (``authorize``, ``findResult``,
``MatchingRuleBuilder``) and ``controller.AclControlManager`` (``validateNewAcl``,
``validateFilter``).

:meth:`Authorizer.authorize` decides one action (principal, client host, operation, resource):

1. a super user (``super.users``) may do everything;
2. the ACLs that apply to the resource are the LITERAL ones naming it, the LITERAL ``*`` one of
   its type, and the PREFIXED ones whose prefix starts its name;
3. of those, an ACL counts when its principal is the requester's or ``User:*`` and its host is
   the client's address or ``*``; its operation must be the requested one or ALL, except that
   an ALLOW of READ, WRITE, DELETE or ALTER also allows DESCRIBE and an ALLOW of ALTER_CONFIGS
   also DESCRIBE_CONFIGS (a DENY implies nothing);
4. a counting DENY denies; else a counting ALLOW allows; else, when no ACL applies to the
   resource at all, ``allow.everyone.if.no.acl.found`` decides (false: denied); else denied.

>>> a = Authorizer([AclBinding(ResourceType.TOPIC, "orders-", PatternType.PREFIXED,
...                            "User:alice", "*", AclOperation.WRITE, AclPermissionType.ALLOW)])
>>> a.authorize("User:alice", "10.0.0.1", AclOperation.DESCRIBE, ResourceType.TOPIC, "orders-eu")
True
>>> a.authorize("User:bob", "10.0.0.1", AclOperation.WRITE, ResourceType.TOPIC, "orders-eu")
False
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path

from ..checkpoint import atomic_write
from ..errors import CorruptCheckpointError

__all__ = ["ResourceType", "PatternType", "AclOperation", "AclPermissionType", "AclBinding",
           "AclBindingFilter", "AclValidationError", "Authorizer", "AclStore", "CLUSTER_NAME",
           "WILDCARD", "WILDCARD_PRINCIPAL"]

#: the one name of the CLUSTER resource (``Resource.CLUSTER_NAME``)
CLUSTER_NAME = "kafka-cluster"
#: a LITERAL resource name, or an ACL host, that matches every one
WILDCARD = "*"
#: the ACL principal that matches every principal
WILDCARD_PRINCIPAL = "User:*"
_INVALID_REQUEST = 42  # (Errors.INVALID_REQUEST)


class ResourceType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(IntEnum):
    UNKNOWN = 0
    ANY = 1
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


class AclPermissionType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


#: the operations whose ALLOW also allows DESCRIBE / DESCRIBE_CONFIGS (StandardAuthorizerData)
_IMPLIES = {AclOperation.DESCRIBE: {AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE,
                                    AclOperation.DELETE, AclOperation.ALTER},
            AclOperation.DESCRIBE_CONFIGS: {AclOperation.DESCRIBE_CONFIGS,
                                            AclOperation.ALTER_CONFIGS}}


@dataclass(frozen=True)
class AclBinding:
    """One ACL: a resource pattern and an access-control entry (``AclBinding``)."""

    resource_type: ResourceType
    resource_name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: AclOperation
    permission_type: AclPermissionType


@dataclass(frozen=True)
class AclBindingFilter:
    """``AclBindingFilter``: None (Kafka's null) matches any value; the ANY enum values too,
    and a MATCH pattern type matches the patterns that would apply to the named resource."""

    resource_type: ResourceType = ResourceType.ANY
    resource_name: str | None = None
    pattern_type: PatternType = PatternType.ANY
    principal: str | None = None
    host: str | None = None
    operation: AclOperation = AclOperation.ANY
    permission_type: AclPermissionType = AclPermissionType.ANY

    def matches(self, b: AclBinding) -> bool:
        """``ResourcePatternFilter.matches`` and ``AccessControlEntryFilter.matches``."""
        if self.resource_type != ResourceType.ANY and self.resource_type != b.resource_type:
            return False
        if self.pattern_type not in (PatternType.ANY, PatternType.MATCH) \
                and self.pattern_type != b.pattern_type:
            return False
        if self.resource_name is not None:
            if self.pattern_type in (PatternType.ANY, b.pattern_type):
                if self.resource_name != b.resource_name:
                    return False
            elif b.pattern_type == PatternType.LITERAL:
                if b.resource_name not in (self.resource_name, WILDCARD):
                    return False
            elif not self.resource_name.startswith(b.resource_name):  # PREFIXED
                return False
        return ((self.principal is None or self.principal == b.principal)
                and (self.host is None or self.host == b.host)
                and self.operation in (AclOperation.ANY, b.operation)
                and self.permission_type in (AclPermissionType.ANY, b.permission_type))


class AclValidationError(Exception):
    """A binding or filter Kafka's controller refuses: ``error_code`` and Kafka's ``message``."""

    def __init__(self, message: str, error_code: int = _INVALID_REQUEST) -> None:
        super().__init__(message)
        self.message = message
        self.error_code = error_code


def validate_new_acl(b: AclBinding) -> None:
    """``AclControlManager.validateNewAcl`` (and a principal Kafka can parse)."""
    if b.resource_type in (ResourceType.UNKNOWN, ResourceType.ANY):
        raise AclValidationError(f"Invalid resourceType {b.resource_type.name}")
    if b.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
        raise AclValidationError(f"Invalid patternType {b.pattern_type.name}")
    if b.operation in (AclOperation.UNKNOWN, AclOperation.ANY):
        raise AclValidationError(f"Invalid operation {b.operation.name}")
    if b.permission_type not in (AclPermissionType.DENY, AclPermissionType.ALLOW):
        raise AclValidationError(f"Invalid permissionType {b.permission_type.name}")
    if not b.resource_name:
        raise AclValidationError("Resource name should not be empty")
    if ":" not in (b.principal or ""):  # (SecurityUtils.parseKafkaPrincipal)
        raise AclValidationError(f"Could not parse principal from `{b.principal}` (no colon is "
                                 "present separating the principal type from name)")
    if b.host is None:
        raise AclValidationError("Invalid null host")


def validate_filter(f: AclBindingFilter) -> None:
    """``AclControlManager.validateFilter``: no UNKNOWN value in a delete filter."""
    if f.resource_type == ResourceType.UNKNOWN or f.pattern_type == PatternType.UNKNOWN:
        raise AclValidationError("Unknown patternFilter.")
    if f.operation == AclOperation.UNKNOWN or f.permission_type == AclPermissionType.UNKNOWN:
        raise AclValidationError("Unknown entryFilter.")


class Authorizer:
    """Decides actions from a set of ACLs (see the module docstring); immutable, so a new one
    is built when the ACLs change. ACLs are indexed by resource type: literal names in a dict,
    prefixes in a list (the per-partition checks of a produce or fetch stay cheap)."""

    def __init__(self, acls: Iterable[AclBinding] = (), super_users: Iterable[str] = (),
                 allow_everyone_if_no_acl_found: bool = False) -> None:
        self.super_users = frozenset(super_users)
        self.allow_everyone_if_no_acl_found = allow_everyone_if_no_acl_found
        self._literal: dict[tuple[ResourceType, str], list[AclBinding]] = {}
        self._prefixed: dict[ResourceType, list[AclBinding]] = {}
        self._by_type: dict[ResourceType, list[AclBinding]] = {}
        for b in acls:
            if b.pattern_type == PatternType.PREFIXED:
                self._prefixed.setdefault(b.resource_type, []).append(b)
            else:
                self._literal.setdefault((b.resource_type, b.resource_name), []).append(b)
            self._by_type.setdefault(b.resource_type, []).append(b)

    def _applying(self, resource_type: ResourceType, name: str) -> list[AclBinding]:
        out = list(self._literal.get((resource_type, name), ()))
        if name != WILDCARD:
            out += self._literal.get((resource_type, WILDCARD), ())
        out += [b for b in self._prefixed.get(resource_type, ())
                if name.startswith(b.resource_name)]
        return out

    @staticmethod
    def _result(b: AclBinding, principal: str, host: str,
                operation: AclOperation) -> AclPermissionType | None:
        """``StandardAuthorizerData.findResult``: DENY/ALLOW when the ACL counts, else None."""
        if b.principal not in (principal, WILDCARD_PRINCIPAL):
            return None
        if b.host not in (WILDCARD, host):
            return None
        if b.operation != AclOperation.ALL:
            if b.permission_type == AclPermissionType.ALLOW:
                implied = _IMPLIES.get(operation)
                if implied is not None:
                    if b.operation not in implied:
                        return None
                elif b.operation != operation:
                    return None
            elif b.operation != operation:
                return None
        return b.permission_type

    def authorize(self, principal: str, host: str, operation: int, resource_type: int,
                  resource_name: str) -> bool:
        """Whether ``principal`` from ``host`` may do ``operation`` on the resource."""
        if principal in self.super_users:
            return True
        op = AclOperation(operation)
        acls = self._applying(ResourceType(resource_type), resource_name)
        allowed = False
        for b in acls:
            r = self._result(b, principal, host, op)
            if r == AclPermissionType.DENY:
                return False
            if r == AclPermissionType.ALLOW:
                allowed = True
        if allowed:
            return True
        return not acls and self.allow_everyone_if_no_acl_found

    def any_topic_authorized(self, principal: str, host: str, operation: int) -> bool:
        """``Authorizer.authorizeByResourceType(TOPIC)``: whether some topic name would be
        allowed ``operation`` (what KIP-679 lets stand for IDEMPOTENT_WRITE): an ALLOW that
        counts, on a literal name or a prefix no counting DENY covers (a DENY of the ``*``
        literal covers all)."""
        if principal in self.super_users:
            return True
        op = AclOperation(operation)
        topic_acls = self._by_type.get(ResourceType.TOPIC, [])
        denies = [b for b in topic_acls
                  if self._result(b, principal, host, op) == AclPermissionType.DENY]
        if any(d.pattern_type == PatternType.LITERAL and d.resource_name == WILDCARD
               for d in denies):
            return False
        for b in topic_acls:
            if self._result(b, principal, host, op) != AclPermissionType.ALLOW:
                continue
            covered = any(
                (d.pattern_type == PatternType.PREFIXED
                 and b.resource_name.startswith(d.resource_name))
                or (d.pattern_type == PatternType.LITERAL and b.pattern_type == PatternType.LITERAL
                    and d.resource_name == b.resource_name)
                for d in denies)
            if not covered:
                return True
        return not topic_acls and self.allow_everyone_if_no_acl_found


class AclStore:
    """The ACLs of a log-dir tree, in ``.kafkalog-acls.json`` at its root (KRaft Kafka keeps
    them as ``AccessControlEntryRecord``s of its metadata log; kafkalog's server has none).
    Every change is one atomic write. Thread safe.

    >>> import tempfile
    >>> s = AclStore(tempfile.mkdtemp())
    >>> b = AclBinding(ResourceType.GROUP, "g", PatternType.LITERAL, "User:a", "*",
    ...                AclOperation.READ, AclPermissionType.ALLOW)
    >>> s.create([b]), s.describe(AclBindingFilter()) == [b]
    ([None], True)
    """

    FILE = ".kafkalog-acls.json"

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.path = Path(root) / self.FILE
        self._lock = threading.Lock()
        self._acls: list[AclBinding] = []
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return
        try:
            doc = json.loads(raw)
            if doc.get("version") != 1:
                raise ValueError("expected version 1")
            self._acls = [AclBinding(
                ResourceType[a["resourceType"]], a["name"], PatternType[a["patternType"]],
                a["principal"], a["host"], AclOperation[a["operation"]],
                AclPermissionType[a["permissionType"]]) for a in doc["acls"]]
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise CorruptCheckpointError(f"unreadable ACLs ({e})", path=self.path) from None

    def _save(self) -> None:
        doc = {"version": 1, "acls": [
            {"resourceType": b.resource_type.name, "name": b.resource_name,
             "patternType": b.pattern_type.name, "principal": b.principal, "host": b.host,
             "operation": b.operation.name, "permissionType": b.permission_type.name}
            for b in self._acls]}
        atomic_write(self.path, (json.dumps(doc, indent=1) + "\n").encode())

    def acls(self) -> list[AclBinding]:
        with self._lock:
            return list(self._acls)

    def describe(self, f: AclBindingFilter) -> list[AclBinding]:
        """The ACLs ``f`` matches, in creation order."""
        with self._lock:
            return [b for b in self._acls if f.matches(b)]

    def create(self, bindings: Sequence[AclBinding]) -> list[AclValidationError | None]:
        """``AclControlManager.createAcls``: per binding None (created, or already there) or
        why it was refused; the valid ones are written together."""
        out: list[AclValidationError | None] = []
        with self._lock:
            present = set(self._acls)
            added = False
            for b in bindings:
                try:
                    validate_new_acl(b)
                except AclValidationError as e:
                    out.append(e)
                    continue
                out.append(None)
                if b not in present:
                    self._acls.append(b)
                    present.add(b)
                    added = True
            if added:
                self._save()
        return out

    def delete(self, filters: Sequence[AclBindingFilter]
               ) -> list[tuple[AclValidationError | None, list[AclBinding]]]:
        """``AclControlManager.deleteAcls``: per filter, why it was refused or the ACLs it
        removed (an ACL matched by several filters is removed once, by the first)."""
        out: list[tuple[AclValidationError | None, list[AclBinding]]] = []
        with self._lock:
            removed: set[AclBinding] = set()
            for f in filters:
                try:
                    validate_filter(f)
                except AclValidationError as e:
                    out.append((e, []))
                    continue
                hits = [b for b in self._acls if b not in removed and f.matches(b)]
                removed.update(hits)
                out.append((None, hits))
            if removed:
                self._acls = [b for b in self._acls if b not in removed]
                self._save()
        return out

    def authorizer(self, super_users: Iterable[str] = (),
                   allow_everyone_if_no_acl_found: bool = False) -> Authorizer:
        """An :class:`Authorizer` over the current ACLs."""
        return Authorizer(self.acls(), super_users, allow_everyone_if_no_acl_found)
