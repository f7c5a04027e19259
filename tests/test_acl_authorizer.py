"""The ACL authorizer (``kafkalog.security.acls``): cases from Kafka's StandardAuthorizerTest and
ResourcePatternFilterTest, a hypothesis comparison with a literal reading of the rules, and the
store (validation texts of AclControlManager, filters, persistence, a corrupt file)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalog.errors import CorruptCheckpointError
from kafkalog.security.acls import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AclStore,
    Authorizer,
    PatternType,
    ResourceType,
)

ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
LIT, PRE = PatternType.LITERAL, PatternType.PREFIXED
T = ResourceType.TOPIC


def acl(name, principal="User:alice", op=AclOperation.READ, perm=ALLOW, pattern=LIT,
        host="*", rtype=T) -> AclBinding:
    return AclBinding(rtype, name, pattern, principal, host, op, perm)


def test_kafka_authorize_cases():
    # StandardAuthorizerTest.testSimpleAuthorizations / testDenyPrecedenceWithOperationAll /
    # testTopicAclWithOperationAll / testAuthorizationPriorities (shapes)
    a = Authorizer([acl("foo", pattern=PRE), acl("foobar", op=AclOperation.ALL, perm=DENY),
                    acl("*", principal="User:*", op=AclOperation.DESCRIBE),
                    acl("baz", op=AclOperation.WRITE, host="192.168.0.1")])
    assert a.authorize("User:alice", "1.2.3.4", AclOperation.READ, T, "foo1")
    assert not a.authorize("User:alice", "1.2.3.4", AclOperation.READ, T, "foobar")  # DENY ALL
    assert a.authorize("User:bob", "1.2.3.4", AclOperation.DESCRIBE, T, "anything")  # wildcards
    assert not a.authorize("User:bob", "1.2.3.4", AclOperation.READ, T, "anything")
    assert a.authorize("User:alice", "192.168.0.1", AclOperation.WRITE, T, "baz")
    assert not a.authorize("User:alice", "192.168.0.2", AclOperation.WRITE, T, "baz")  # host
    # an ALLOW of WRITE implies DESCRIBE, a DENY of READ does not deny DESCRIBE
    a = Authorizer([acl("t", op=AclOperation.WRITE), acl("t", op=AclOperation.READ, perm=DENY),
                    acl("c", op=AclOperation.ALTER_CONFIGS)])
    assert a.authorize("User:alice", "h", AclOperation.DESCRIBE, T, "t")
    assert not a.authorize("User:alice", "h", AclOperation.READ, T, "t")
    assert a.authorize("User:alice", "h", AclOperation.DESCRIBE_CONFIGS, T, "c")
    assert not a.authorize("User:alice", "h", AclOperation.ALTER, T, "c")
    # no ACL on the resource: allow.everyone.if.no.acl.found decides; ACLs of others: denied
    assert not Authorizer([]).authorize("User:x", "h", AclOperation.READ, T, "t")
    assert Authorizer([], allow_everyone_if_no_acl_found=True).authorize(
        "User:x", "h", AclOperation.READ, T, "t")
    assert not Authorizer([acl("t")], allow_everyone_if_no_acl_found=True).authorize(
        "User:x", "h", AclOperation.READ, T, "t")
    # super users
    assert Authorizer([acl("t", perm=DENY, op=AclOperation.ALL)], ["User:alice"]).authorize(
        "User:alice", "h", AclOperation.READ, T, "t")


def test_filter_matching():
    # ResourcePatternFilterTest / AclBindingFilterTest
    b_lit, b_pre, b_star = acl("ab"), acl("a", pattern=PRE), acl("*")
    match = AclBindingFilter(T, "abc", PatternType.MATCH)
    assert [match.matches(b) for b in (b_lit, b_pre, b_star)] == [False, True, True]
    assert AclBindingFilter(T, "ab", PatternType.MATCH).matches(b_lit)
    assert AclBindingFilter(T, "ab", PatternType.ANY).matches(b_lit)
    assert not AclBindingFilter(T, "ab", PatternType.ANY).matches(b_pre)
    assert not AclBindingFilter(T, "a", PatternType.LITERAL).matches(b_pre)
    assert AclBindingFilter().matches(b_pre)
    assert not AclBindingFilter(ResourceType.GROUP).matches(b_pre)
    assert AclBindingFilter(principal="User:alice", operation=AclOperation.READ).matches(b_lit)
    assert not AclBindingFilter(permission_type=DENY).matches(b_lit)


NAMES = st.sampled_from(["a", "ab", "abc", "b", "*"])
PRINCIPALS = st.sampled_from(["User:alice", "User:bob", "User:*"])
OPS = st.sampled_from([AclOperation.READ, AclOperation.WRITE, AclOperation.DESCRIBE,
                       AclOperation.ALL, AclOperation.ALTER_CONFIGS,
                       AclOperation.DESCRIBE_CONFIGS])
ACLS = st.builds(acl, NAMES, PRINCIPALS, OPS, st.sampled_from([ALLOW, DENY]),
                 st.sampled_from([LIT, PRE]), st.sampled_from(["*", "h1", "h2"]))


def reference(acls, supers, allow_everyone, principal, host, op, name) -> bool:
    """StandardAuthorizerData's rules read literally, over every ACL."""
    if principal in supers:
        return True
    applying = [b for b in acls if b.resource_type == T and (
        (b.pattern_type == LIT and b.resource_name in (name, "*"))
        or (b.pattern_type == PRE and name.startswith(b.resource_name)))]
    results = []
    for b in applying:
        if b.principal not in (principal, "User:*") or b.host not in ("*", host):
            continue
        if b.operation == AclOperation.ALL or b.operation == op:
            results.append(b.permission_type)
        elif b.permission_type == ALLOW and (
                (op == AclOperation.DESCRIBE and b.operation in (
                    AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE,
                    AclOperation.ALTER))
                or (op == AclOperation.DESCRIBE_CONFIGS
                    and b.operation == AclOperation.ALTER_CONFIGS)):
            results.append(ALLOW)
    if DENY in results:
        return False
    if ALLOW in results:
        return True
    return not applying and allow_everyone


@settings(max_examples=400, deadline=None)
@given(acls=st.lists(ACLS, max_size=8), allow_everyone=st.booleans(),
       principal=st.sampled_from(["User:alice", "User:bob", "User:carol"]),
       host=st.sampled_from(["h1", "h2"]), op=OPS.filter(lambda o: o != AclOperation.ALL),
       name=st.sampled_from(["a", "ab", "abc", "b", "bc", "*"]),
       supers=st.sampled_from([(), ("User:bob",)]))
def test_authorize_equals_the_literal_rules(acls, allow_everyone, principal, host, op, name,
                                            supers):
    a = Authorizer(acls, supers, allow_everyone)
    assert a.authorize(principal, host, op, T, name) == \
        reference(acls, supers, allow_everyone, principal, host, op, name)


def test_store_validation_filters_and_persistence(tmp_path):
    s = AclStore(tmp_path)
    good = acl("orders")
    errors = s.create([good, good, acl("x", rtype=ResourceType.ANY),
                       acl("x", pattern=PatternType.MATCH), acl("x", op=AclOperation.ANY),
                       acl("x", perm=AclPermissionType.ANY), acl(""), acl("x", principal="bob")])
    assert [None if e is None else (e.error_code, e.message) for e in errors] == [
        None, None, (42, "Invalid resourceType ANY"), (42, "Invalid patternType MATCH"),
        (42, "Invalid operation ANY"), (42, "Invalid permissionType ANY"),
        (42, "Resource name should not be empty"),
        (42, "Could not parse principal from `bob` (no colon is present separating the "
             "principal type from the principal name)")]
    assert AclStore(tmp_path).acls() == [good]  # once, persisted
    s.create([acl("orders", principal="User:bob"), acl("g", rtype=ResourceType.GROUP)])
    [(err, removed), (bad, none)] = s.delete([
        AclBindingFilter(T, "orders", PatternType.ANY),
        AclBindingFilter(resource_type=ResourceType.UNKNOWN)])
    assert err is None and sorted(b.principal for b in removed) == ["User:alice", "User:bob"]
    assert bad is not None and bad.message == "Unknown patternFilter." and none == []
    assert [b.resource_name for b in AclStore(tmp_path).acls()] == ["g"]
    (tmp_path / AclStore.FILE).write_text("{")
    with pytest.raises(CorruptCheckpointError, match="unreadable ACLs"):
        AclStore(tmp_path)
