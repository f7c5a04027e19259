"""``kafkalog.security.acls``: Kafka's own test cases for the ACL model, StandardAuthorizer,
StandardAcl and AclControlManager (each named in a comment, same inputs and outcomes), hypothesis
comparisons with brute-force readings of the rules, and the store (filters, persistence, a
corrupt file).

Kafka sources (trunk, October 2024): ``clients/src/test/java/org/apache/kafka/common/acl/
{AclBindingTest, ResourcePatternFilterTest}.java``, ``metadata/src/test/java/org/apache/kafka/
metadata/authorizer/{StandardAuthorizerTest, StandardAuthorizerPropertyTest, StandardAclTest}
.java``, ``metadata/src/test/java/org/apache/kafka/controller/AclControlManagerTest.java`` and
``core/src/test/scala/unit/kafka/security/authorizer/{AuthorizerTest, BaseAuthorizerTest}.scala``
(run there against StandardAuthorizer with the controller's ``MockAclMutator``: here an
:class:`AclStore` and an :class:`Authorizer` rebuilt after each change).
"""

from __future__ import annotations

import doctest
import functools
import json
import random
import uuid

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import kafkalog.checkpoint as checkpoint_module
import kafkalog.security.acls as acls_module
from kafkalog.errors import CorruptCheckpointError
from kafkalog.security.acls import (
    CLUSTER_NAME,
    MAX_RECORDS_PER_USER_OP,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AclStore,
    AclValidationError,
    Authorizer,
    PatternType,
    ResourceType,
    binding_argument_error,
    java_host_address,
    kafka_order_key,
    parse_allow_everyone_if_no_acl_found,
    parse_super_users,
    supported_operations,
    to_32bit_field,
    validate_acl_creation,
    validate_filter,
    validate_new_acl,
)

Op, Perm, RT, PT = AclOperation, AclPermissionType, ResourceType, PatternType
ALLOW, DENY = Perm.ALLOW, Perm.DENY
LITERAL, PREFIXED, MATCH = PT.LITERAL, PT.PREFIXED, PT.MATCH
TOPIC, GROUP, CLUSTER = RT.TOPIC, RT.GROUP, RT.CLUSTER
WILDCARD, WILDCARD_PRINCIPAL = "*", "User:*"
#: stands for InetAddress.getLocalHost().getHostAddress(), the address of Kafka's
#: MockAuthorizableRequestContext when a test sets none
LOCALHOST = "10.9.8.7"
#: the operations an ACL may name (AuthorizerTest.validOp)
VALID_OPS = [op for op in Op if op not in (Op.ANY, Op.UNKNOWN)]


def acl(rt: RT, name: str, pt: PT, principal: str, host: str, op: Op, perm: Perm) -> AclBinding:
    """``new StandardAcl(...)`` / ``new AclBinding(new ResourcePattern(...), new
    AccessControlEntry(...))``: the same seven values in the same order."""
    return AclBinding(rt, name, pt, principal, host, op, perm)


def results(a: Authorizer, principal: str, actions: list[tuple[Op, RT, str]],
            host: str = LOCALHOST) -> list[bool]:
    """``authorizer.authorize(newRequestContext(principal), actions)``: True for ALLOWED."""
    return [a.authorize(principal, host, op, rt, name) for op, rt, name in actions]


def test_module_doctests():
    assert doctest.testmod(acls_module).failed == 0


# --- clients: the enums ------------------------------------------------------------------------


def test_enum_codes_are_kafkas():
    # ResourceType, PatternType, AclOperation, AclPermissionType (.java): (byte) codes
    assert {m.name: m.value for m in RT} == {
        "UNKNOWN": 0, "ANY": 1, "TOPIC": 2, "GROUP": 3, "CLUSTER": 4, "TRANSACTIONAL_ID": 5,
        "DELEGATION_TOKEN": 6, "USER": 7}
    assert {m.name: m.value for m in PT} == {
        "UNKNOWN": 0, "ANY": 1, "MATCH": 2, "LITERAL": 3, "PREFIXED": 4}
    assert {m.name: m.value for m in Op} == {
        "UNKNOWN": 0, "ANY": 1, "ALL": 2, "READ": 3, "WRITE": 4, "CREATE": 5, "DELETE": 6,
        "ALTER": 7, "DESCRIBE": 8, "CLUSTER_ACTION": 9, "DESCRIBE_CONFIGS": 10,
        "ALTER_CONFIGS": 11, "IDEMPOTENT_WRITE": 12, "CREATE_TOKENS": 13, "DESCRIBE_TOKENS": 14,
            "TWO_PHASE_COMMIT": 15}
    assert {m.name: m.value for m in Perm} == {"UNKNOWN": 0, "ANY": 1, "DENY": 2, "ALLOW": 3}


def test_enum_from_code_and_from_string():
    # fromCode: UNKNOWN for a code it does not know; fromString: any case, except PatternType
    assert RT.from_code(9) is RT.UNKNOWN and RT.from_code(2) is TOPIC
    assert Op.from_code(99) is Op.UNKNOWN and Perm.from_code(3) is ALLOW
    assert RT.from_string("topic") is TOPIC and RT.from_string("nope") is RT.UNKNOWN
    assert Op.from_string("Describe_Configs") is Op.DESCRIBE_CONFIGS
    assert Perm.from_string("deny") is DENY
    assert PT.from_string("PREFIXED") is PREFIXED and PT.from_string("prefixed") is PT.UNKNOWN
    assert [p for p in PT if p.is_specific()] == [LITERAL, PREFIXED]
    assert RT.UNKNOWN.is_unknown() and not TOPIC.is_unknown()


# --- clients: AclBindingTest -------------------------------------------------------------------

ACL1 = acl(TOPIC, "mytopic", LITERAL, "User:ANONYMOUS", "", Op.ALL, ALLOW)
ACL2 = acl(TOPIC, "mytopic", LITERAL, "User:*", "", Op.READ, ALLOW)
ACL3 = acl(TOPIC, "mytopic2", LITERAL, "User:ANONYMOUS", "127.0.0.1", Op.READ, DENY)
UNKNOWN_ACL = acl(TOPIC, "mytopic2", LITERAL, "User:ANONYMOUS", "127.0.0.1", Op.UNKNOWN, DENY)
ANY_ANONYMOUS = AclBindingFilter(RT.ANY, None, PT.ANY, "User:ANONYMOUS", None, Op.ANY, Perm.ANY)
ANY_DENY = AclBindingFilter(RT.ANY, None, PT.ANY, None, None, Op.ANY, DENY)
ANY_MYTOPIC = AclBindingFilter(TOPIC, "mytopic", LITERAL, None, None, Op.ANY, Perm.ANY)


def test_acl_binding_matching():
    # AclBindingTest.testMatching
    assert ACL1 == ACL1
    acl1_copy = acl(TOPIC, "mytopic", LITERAL, "User:ANONYMOUS", "", Op.ALL, ALLOW)
    assert ACL1 == acl1_copy and acl1_copy == ACL1
    assert ACL2 == ACL2 and ACL1 != ACL2 and ACL2 != ACL1
    for b in (ACL1, ACL2, ACL3):
        assert AclBindingFilter.ANY.matches(b)
        assert AclBindingFilter.ANY != b
    assert AclBindingFilter.ANY == AclBindingFilter.ANY
    assert ANY_ANONYMOUS.matches(ACL1) and ANY_ANONYMOUS != ACL1
    assert not ANY_ANONYMOUS.matches(ACL2) and ANY_ANONYMOUS != ACL2
    assert ANY_ANONYMOUS.matches(ACL3) and ANY_ANONYMOUS != ACL3
    assert not ANY_DENY.matches(ACL1)
    assert not ANY_DENY.matches(ACL2)
    assert ANY_DENY.matches(ACL3)
    assert ANY_MYTOPIC.matches(ACL1)
    assert ANY_MYTOPIC.matches(ACL2)
    assert not ANY_MYTOPIC.matches(ACL3)
    assert ANY_ANONYMOUS.matches(UNKNOWN_ACL)
    assert ANY_DENY.matches(UNKNOWN_ACL)
    assert UNKNOWN_ACL == UNKNOWN_ACL
    assert not ANY_MYTOPIC.matches(UNKNOWN_ACL)


def test_acl_binding_unknowns():
    # AclBindingTest.testUnknowns
    assert not ACL1.is_unknown() and not ACL2.is_unknown() and not ACL3.is_unknown()
    assert not ANY_ANONYMOUS.is_unknown()
    assert not ANY_DENY.is_unknown()
    assert not ANY_MYTOPIC.is_unknown()
    assert UNKNOWN_ACL.is_unknown()


def test_acl_binding_matches_at_most_one():
    # AclBindingTest.testMatchesAtMostOne
    assert ACL1.to_filter().find_indefinite_field() is None
    assert ACL2.to_filter().find_indefinite_field() is None
    assert ACL3.to_filter().find_indefinite_field() is None
    assert not ANY_ANONYMOUS.matches_at_most_one()
    assert not ANY_DENY.matches_at_most_one()
    assert not ANY_MYTOPIC.matches_at_most_one()
    # the texts (ResourcePatternFilter / AccessControlEntryData.findIndefiniteField)
    assert ANY_ANONYMOUS.find_indefinite_field() == "Resource type is ANY."
    assert ANY_MYTOPIC.find_indefinite_field() == "Principal is NULL"
    assert AclBindingFilter(TOPIC, None).find_indefinite_field() == "Resource name is NULL."
    assert AclBindingFilter(TOPIC, "t", MATCH).find_indefinite_field() == \
        "Resource pattern type is MATCH."
    assert AclBindingFilter(TOPIC, "t", LITERAL, "User:a", "h", Op.READ).find_indefinite_field() \
        == "Permission type is ANY"


@pytest.mark.parametrize("binding, error", [
    # AclBindingTest.shouldNotThrowOnUnknownPatternType
    (acl(TOPIC, "foo", PT.UNKNOWN, "User:ANONYMOUS", "", Op.ALL, ALLOW), None),
    # AclBindingTest.shouldNotThrowOnUnknownResourceType
    (acl(RT.UNKNOWN, "foo", LITERAL, "User:ANONYMOUS", "", Op.ALL, ALLOW), None),
    # AclBindingTest.shouldThrowOnMatchPatternType
    (acl(TOPIC, "foo", MATCH, "User:ANONYMOUS", "", Op.ALL, ALLOW),
     "patternType must not be MATCH"),
    # AclBindingTest.shouldThrowOnAnyPatternType
    (acl(TOPIC, "foo", PT.ANY, "User:ANONYMOUS", "", Op.ALL, ALLOW), "patternType must not be ANY"),
    # AclBindingTest.shouldThrowOnAnyResourceType
    (acl(RT.ANY, "foo", LITERAL, "User:ANONYMOUS", "", Op.ALL, ALLOW),
     "resourceType must not be ANY"),
    # AccessControlEntry's constructor
    (acl(TOPIC, "foo", LITERAL, "User:ANONYMOUS", "", Op.ANY, ALLOW), "operation must not be ANY"),
    (acl(TOPIC, "foo", LITERAL, "User:ANONYMOUS", "", Op.ALL, Perm.ANY),
     "permissionType must not be ANY"),
])
def test_acl_binding_constructor_checks(binding, error):
    # Kafka's constructors throw IllegalArgumentException; here the text is returned
    assert binding_argument_error(binding) == error


# --- clients: ResourcePatternFilterTest ----------------------------------------------------------


def test_resource_pattern_filter_unknown():
    # ResourcePatternFilterTest.shouldBeUnknownIfResourceTypeUnknown
    assert AclBindingFilter(RT.UNKNOWN, None, LITERAL).pattern_is_unknown()
    # ResourcePatternFilterTest.shouldBeUnknownIfPatternTypeUnknown
    assert AclBindingFilter(GROUP, None, PT.UNKNOWN).pattern_is_unknown()


@pytest.mark.parametrize("test, flt, pattern, expected", [
    ("shouldNotMatchIfDifferentResourceType", (TOPIC, "Name", LITERAL), (GROUP, "Name", LITERAL),
     False),
    ("shouldNotMatchIfDifferentName", (TOPIC, "Different", PREFIXED), (TOPIC, "Name", PREFIXED),
     False),
    ("shouldNotMatchIfDifferentNameCase", (TOPIC, "NAME", LITERAL), (TOPIC, "Name", LITERAL),
     False),
    ("shouldNotMatchIfDifferentPatternType", (TOPIC, "Name", LITERAL), (TOPIC, "Name", PREFIXED),
     False),
    ("shouldMatchWhereResourceTypeIsAny", (RT.ANY, "Name", PREFIXED), (TOPIC, "Name", PREFIXED),
     True),
    ("shouldMatchWhereResourceNameIsAny", (TOPIC, None, PREFIXED), (TOPIC, "Name", PREFIXED),
     True),
    ("shouldMatchWherePatternTypeIsAny", (TOPIC, None, PT.ANY), (TOPIC, "Name", PREFIXED), True),
    ("shouldMatchWherePatternTypeIsMatch", (TOPIC, None, MATCH), (TOPIC, "Name", PREFIXED), True),
    ("shouldMatchLiteralIfExactMatch", (TOPIC, "Name", LITERAL), (TOPIC, "Name", LITERAL), True),
    ("shouldMatchLiteralIfNameMatchesAndFilterIsOnPatternTypeAny", (TOPIC, "Name", PT.ANY),
     (TOPIC, "Name", LITERAL), True),
    ("shouldMatchLiteralIfNameMatchesAndFilterIsOnPatternTypeMatch", (TOPIC, "Name", MATCH),
     (TOPIC, "Name", LITERAL), True),
    ("shouldNotMatchLiteralIfNamePrefixed", (TOPIC, "Name-something", MATCH),
     (TOPIC, "Name", LITERAL), False),
    ("shouldMatchLiteralWildcardIfExactMatch", (TOPIC, "*", LITERAL), (TOPIC, "*", LITERAL), True),
    ("shouldNotMatchLiteralWildcardAgainstOtherName", (TOPIC, "Name", LITERAL),
     (TOPIC, "*", LITERAL), False),
    ("shouldNotMatchLiteralWildcardTheWayAround", (TOPIC, "*", LITERAL), (TOPIC, "Name", LITERAL),
     False),
    ("shouldNotMatchLiteralWildcardIfFilterHasPatternTypeOfAny", (TOPIC, "Name", PT.ANY),
     (TOPIC, "*", LITERAL), False),
    ("shouldMatchLiteralWildcardIfFilterHasPatternTypeOfMatch", (TOPIC, "Name", MATCH),
     (TOPIC, "*", LITERAL), True),
    ("shouldMatchPrefixedIfExactMatch", (TOPIC, "Name", PREFIXED), (TOPIC, "Name", PREFIXED),
     True),
    ("shouldNotMatchIfBothPrefixedAndFilterIsPrefixOfResource", (TOPIC, "Name", PREFIXED),
     (TOPIC, "Name-something", PREFIXED), False),
    ("shouldNotMatchIfBothPrefixedAndResourceIsPrefixOfFilter", (TOPIC, "Name-something", PREFIXED),
     (TOPIC, "Name", PREFIXED), False),
    ("shouldNotMatchPrefixedIfNamePrefixedAnyFilterTypeIsAny", (TOPIC, "Name-something", PT.ANY),
     (TOPIC, "Name", PREFIXED), False),
    ("shouldMatchPrefixedIfNamePrefixedAnyFilterTypeIsMatch", (TOPIC, "Name-something", MATCH),
     (TOPIC, "Name", PREFIXED), True),
])
def test_resource_pattern_filter_matches(test, flt, pattern, expected):
    # ResourcePatternFilterTest.<test>: the pattern filter alone (entry filter ANY)
    b = acl(*pattern, "User:a", "*", Op.READ, ALLOW)
    assert AclBindingFilter(*flt).matches(b) is expected, test


def test_match_filter_on_a_pattern_of_no_specific_type():
    # ResourcePatternFilter.matches: "Unsupported PatternType" (IllegalArgumentException)
    with pytest.raises(ValueError, match="Unsupported PatternType: UNKNOWN"):
        AclBindingFilter(TOPIC, "Name", MATCH).matches(
            acl(TOPIC, "Name", PT.UNKNOWN, "User:a", "*", Op.READ, ALLOW))


# --- metadata: StandardAclTest -----------------------------------------------------------------

TEST_ACLS = [
    acl(CLUSTER, CLUSTER_NAME, LITERAL, WILDCARD_PRINCIPAL, WILDCARD, Op.ALTER, ALLOW),
    acl(TOPIC, "foo_", PREFIXED, WILDCARD_PRINCIPAL, WILDCARD, Op.READ, ALLOW),
    acl(GROUP, "mygroup", LITERAL, "User:foo", WILDCARD, Op.READ, DENY),
    acl(GROUP, "mygroup", PREFIXED, "User:foo", WILDCARD, Op.READ, DENY),
    acl(GROUP, "foo", PREFIXED, "User:foo", WILDCARD, Op.READ, DENY),
]


def _compare(a: AclBinding, b: AclBinding) -> int:
    ka, kb = kafka_order_key(a), kafka_order_key(b)
    return (ka > kb) - (ka < kb)


def test_standard_acl_compare_to():
    # StandardAclTest.testCompareTo
    assert _compare(TEST_ACLS[0], TEST_ACLS[1]) == 1
    assert _compare(TEST_ACLS[1], TEST_ACLS[0]) == -1
    assert _compare(TEST_ACLS[2], TEST_ACLS[3]) == -1
    assert _compare(TEST_ACLS[4], TEST_ACLS[3]) == 1
    assert _compare(TEST_ACLS[3], TEST_ACLS[4]) == -1


def test_standard_acl_to_binding_round_trips(tmp_path):
    # StandardAclTest.testToBindingRoundTrips: here through the store's file
    store = AclStore(tmp_path)
    assert store.create(TEST_ACLS) == [None] * len(TEST_ACLS)
    assert AclStore(tmp_path).acls() == TEST_ACLS
    for b in TEST_ACLS:
        assert b.to_filter().matches(b) and b.to_filter().matches_at_most_one()


def test_standard_acl_equals():
    # StandardAclTest.testEquals
    for i, a in enumerate(TEST_ACLS):
        for j, b in enumerate(TEST_ACLS):
            assert (a == b) is (i == j)


def _java_compare(a: AclBinding, b: AclBinding) -> int:
    """StandardAcl.compareTo read literally, Java strings compared by UTF-16 code unit."""
    def units(s: str) -> list[int]:
        data = s.encode("utf-16-be", "surrogatepass")
        return [int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2)]

    def cmp(x, y) -> int:
        return (x > y) - (x < y)

    for r in (cmp(a.resource_type, b.resource_type),
              cmp(units(b.resource_name), units(a.resource_name)),  # REVERSE
              cmp(a.pattern_type, b.pattern_type), cmp(a.operation, b.operation),
              cmp(units(a.principal), units(b.principal)), cmp(units(a.host), units(b.host)),
              cmp(a.permission_type, b.permission_type)):
        if r:
            return r
    return 0


NAME_CHARS = st.sampled_from(["a", "b", "z", "*", "\uffff", "\U00010000", "\u00e9"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.builds(
    acl, st.sampled_from([TOPIC, GROUP, CLUSTER]), st.text(NAME_CHARS, min_size=1, max_size=4),
    st.sampled_from([LITERAL, PREFIXED]), st.sampled_from(["User:a", "User:b", "User:\uffff"]),
    st.sampled_from(["*", "h", "h2"]), st.sampled_from(VALID_OPS), st.sampled_from([ALLOW, DENY])),
    max_size=12))
def test_kafka_order_key_sorts_as_standard_acl_compare_to(bindings):
    assert sorted(bindings, key=kafka_order_key) == \
        sorted(bindings, key=functools.cmp_to_key(_java_compare))


# --- metadata: StandardAuthorizerTest ----------------------------------------------------------


def test_get_configured_super_users():
    # StandardAuthorizerTest.testGetConfiguredSuperUsers
    assert parse_super_users(None) == set()
    assert parse_super_users(" ") == set()
    assert parse_super_users("User:bob;User:alice ") == {"User:bob", "User:alice"}
    assert parse_super_users(";  User:bob  ;  User:alice ") == {"User:bob", "User:alice"}
    with pytest.raises(ValueError) as e:
        parse_super_users("bob;:alice")
    assert str(e.value) == "expected a string in format principalType:principalName but got bob"


def test_get_default_result():
    # StandardAuthorizerTest.testGetDefaultResult
    assert parse_allow_everyone_if_no_acl_found(None) is False
    assert parse_allow_everyone_if_no_acl_found("true") is True
    assert parse_allow_everyone_if_no_acl_found("false") is False
    # Boolean.parseBoolean of the trimmed value (AuthorizerTest.testAclConfigWithWhitespace)
    assert parse_allow_everyone_if_no_acl_found("  TRUE ") is True
    assert parse_allow_everyone_if_no_acl_found("yes") is False


def test_configure():
    # StandardAuthorizerTest.testConfigure
    a = Authorizer(super_users=parse_super_users("User:alice;User:chris"),
                   allow_everyone_if_no_acl_found=parse_allow_everyone_if_no_acl_found("true"))
    assert a.super_users == {"User:alice", "User:chris"}
    assert a.allow_everyone_if_no_acl_found is True


@pytest.mark.parametrize("allow_everyone, expected", [
    (True, [False, True]),  # StandardAuthorizerTest.testAllowEveryoneIfNoAclFoundConfigEnabled
    (False, [False, False]),  # StandardAuthorizerTest.testAllowEveryoneIfNoAclFoundConfigDisabled
])
def test_allow_everyone_if_no_acl_found(allow_everyone, expected):
    a = Authorizer([acl(TOPIC, "topic1", LITERAL, "User:Alice", WILDCARD, Op.READ, ALLOW)],
                   parse_super_users("User:alice;User:chris"), allow_everyone)
    assert results(a, "User:Bob", [(Op.READ, TOPIC, "topic1"), (Op.READ, TOPIC, "topic2")]) \
        == expected


def new_foo_acl(op: Op, perm: Perm) -> AclBinding:
    return acl(TOPIC, "foo_", PREFIXED, "User:bob", WILDCARD, op, perm)


def new_bar_acl(op: Op, perm: Perm) -> AclBinding:
    return acl(GROUP, "bar", LITERAL, WILDCARD_PRINCIPAL, WILDCARD, op, perm)


def test_find_result_implication():
    # StandardAuthorizerTest.testFindResultImplication
    def find(op: Op, b: AclBinding):
        return Authorizer.find_result(b, "User:bob", LOCALHOST, op)

    for op in (Op.DESCRIBE, Op.READ, Op.WRITE, Op.DELETE, Op.ALTER):  # all imply DESCRIBE
        assert find(Op.DESCRIBE, new_foo_acl(op, ALLOW)) is ALLOW
    assert find(Op.DESCRIBE, new_foo_acl(Op.CREATE, ALLOW)) is None  # CREATE does not
    for op in (Op.READ, Op.WRITE, Op.DELETE, Op.ALTER):  # DENY ACLs don't do "implication"
        assert find(Op.DESCRIBE, new_foo_acl(op, DENY)) is None
    assert find(Op.DESCRIBE, new_foo_acl(Op.DESCRIBE, DENY)) is DENY  # exact match
    for op in (Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS):  # all imply DESCRIBE_CONFIGS
        assert find(Op.DESCRIBE_CONFIGS, new_foo_acl(op, ALLOW)) is ALLOW
    assert find(Op.DESCRIBE_CONFIGS, new_foo_acl(Op.ALTER_CONFIGS, DENY)) is None
    assert find(Op.ALTER_CONFIGS, new_foo_acl(Op.ALTER_CONFIGS, DENY)) is DENY


def test_find_result_principal_matching():
    # StandardAuthorizerTest.testFindResultPrincipalMatching
    assert Authorizer.find_result(new_foo_acl(Op.READ, ALLOW), "User:bob", LOCALHOST,
                                  Op.READ) is ALLOW
    assert Authorizer.find_result(new_foo_acl(Op.READ, ALLOW), "User:alice", LOCALHOST,
                                  Op.READ) is None  # principal does not match
    assert Authorizer.find_result(new_bar_acl(Op.READ, DENY), "User:alice", LOCALHOST,
                                  Op.READ) is DENY  # the wildcard principal matches anything


def test_list_acls(tmp_path):
    # StandardAuthorizerTest.testListAcls (the order is StandardAcl's: TOPIC before GROUP...)
    foo = [new_foo_acl(Op.READ, ALLOW), new_foo_acl(Op.WRITE, ALLOW)]
    bar = [new_bar_acl(Op.DESCRIBE_CONFIGS, DENY), new_bar_acl(Op.ALTER_CONFIGS, DENY)]
    store = AclStore(tmp_path)
    store.create(bar + foo)  # created in another order than listed
    assert store.describe(AclBindingFilter.ANY) == [foo[0], foo[1], bar[0], bar[1]]
    assert store.authorizer().describe(AclBindingFilter.ANY) == [foo[0], foo[1], bar[0], bar[1]]
    store.delete([foo[1].to_filter()])
    assert store.describe(AclBindingFilter.ANY) == [foo[0], bar[0], bar[1]]
    assert store.describe(AclBindingFilter(TOPIC, None, PT.ANY)) == [foo[0]]


def superman() -> Authorizer:
    """StandardAuthorizerTest.createAndInitializeStandardAuthorizer"""
    return Authorizer(super_users=parse_super_users("User:superman"))


def test_simple_authorizations():
    # StandardAuthorizerTest.testSimpleAuthorizations
    a = Authorizer(list(superman().acls) + [
        new_foo_acl(Op.READ, ALLOW), new_foo_acl(Op.WRITE, ALLOW),
        new_bar_acl(Op.DESCRIBE_CONFIGS, ALLOW), new_bar_acl(Op.ALTER_CONFIGS, ALLOW)],
        parse_super_users("User:superman"))
    assert results(a, "User:bob", [(Op.READ, TOPIC, "foo_")]) == [True]
    assert results(a, "User:fred", [(Op.ALTER_CONFIGS, GROUP, "bar")]) == [True]


def test_deny_precedence_with_operation_all():
    # StandardAuthorizerTest.testDenyPrecedenceWithOperationAll
    a = Authorizer([
        acl(TOPIC, "foo", LITERAL, "User:alice", "*", Op.ALL, DENY),
        acl(TOPIC, "foo", PREFIXED, "User:alice", "*", Op.READ, ALLOW),
        acl(TOPIC, "foo", LITERAL, "User:*", "*", Op.ALL, DENY),
        acl(TOPIC, "foo", PREFIXED, "User:*", "*", Op.DESCRIBE, ALLOW),
    ], ["User:superman"])
    assert results(a, "User:alice", [
        (Op.WRITE, TOPIC, "foo"), (Op.READ, TOPIC, "foo"), (Op.DESCRIBE, TOPIC, "foo"),
        (Op.READ, TOPIC, "foobar")]) == [False, False, False, True]
    assert results(a, "User:bob", [
        (Op.DESCRIBE, TOPIC, "foo"), (Op.READ, TOPIC, "foo"), (Op.WRITE, TOPIC, "foo"),
        (Op.DESCRIBE, TOPIC, "foobaz"), (Op.READ, TOPIC, "foobaz")]) == \
        [False, False, False, True, False]


def test_topic_acl_with_operation_all():
    # StandardAuthorizerTest.testTopicAclWithOperationAll
    a = Authorizer([
        acl(TOPIC, "foo", LITERAL, "User:*", "*", Op.ALL, ALLOW),
        acl(TOPIC, "bar", PREFIXED, "User:alice", "*", Op.ALL, ALLOW),
        acl(TOPIC, "baz", LITERAL, "User:bob", "*", Op.ALL, ALLOW),
    ], ["User:superman"])
    assert results(a, "User:alice", [
        (Op.WRITE, TOPIC, "foo"), (Op.DESCRIBE_CONFIGS, TOPIC, "bar"),
        (Op.DESCRIBE, TOPIC, "baz")]) == [True, True, False]
    assert results(a, "User:bob", [
        (Op.WRITE, TOPIC, "foo"), (Op.READ, TOPIC, "bar"), (Op.DESCRIBE, TOPIC, "baz")]) == \
        [True, False, True]
    assert results(a, "User:malory", [
        (Op.DESCRIBE, TOPIC, "foo"), (Op.WRITE, TOPIC, "bar"), (Op.READ, TOPIC, "baz")]) == \
        [True, False, False]


def test_host_address_acl_validation():
    # StandardAuthorizerTest.testHostAddressAclValidation
    host1, host2 = "192.168.1.1", "192.168.1.2"
    a = Authorizer([
        acl(TOPIC, "foo", LITERAL, "User:alice", host1, Op.READ, DENY),
        acl(TOPIC, "foo", LITERAL, "User:alice", "*", Op.READ, ALLOW),
        acl(TOPIC, "bar", LITERAL, "User:bob", host2, Op.READ, ALLOW),
        acl(TOPIC, "bar", LITERAL, "User:*", LOCALHOST, Op.DESCRIBE, ALLOW),
    ], ["User:superman"])
    actions = [(Op.READ, TOPIC, "foo"), (Op.READ, TOPIC, "bar"), (Op.DESCRIBE, TOPIC, "bar")]
    assert results(a, "User:alice", actions, LOCALHOST) == [True, False, True]
    assert results(a, "User:alice", actions, host1) == [False, False, False]
    assert results(a, "User:alice", actions, host2) == [True, False, False]
    assert results(a, "User:bob", actions, LOCALHOST) == [False, False, True]
    assert results(a, "User:bob", actions, host1) == [False, False, False]
    assert results(a, "User:bob", actions, host2) == [False, True, True]


def many_acls() -> Authorizer:
    """StandardAuthorizerTest.addManyAcls"""
    return Authorizer([
        acl(TOPIC, "green2", LITERAL, "User:*", "*", Op.READ, ALLOW),
        acl(TOPIC, "green", PREFIXED, "User:bob", "*", Op.READ, ALLOW),
        acl(TOPIC, "betamax4", LITERAL, "User:bob", "*", Op.READ, ALLOW),
        acl(TOPIC, "betamax", LITERAL, "User:bob", "*", Op.READ, ALLOW),
        acl(TOPIC, "beta", PREFIXED, "User:*", "*", Op.READ, ALLOW),
        acl(TOPIC, "alpha", PREFIXED, "User:*", "*", Op.READ, ALLOW),
        acl(TOPIC, "alp", PREFIXED, "User:bob", "*", Op.READ, DENY),
        acl(GROUP, "*", LITERAL, "User:bob", "*", Op.WRITE, ALLOW),
        acl(GROUP, "wheel", LITERAL, "User:*", "*", Op.WRITE, DENY),
    ], ["User:superman"])


def test_authorization_with_many_acls():
    # StandardAuthorizerTest.testAuthorizationWithManyAcls
    a = many_acls()
    assert results(a, "User:bob", [(Op.READ, TOPIC, "green1"), (Op.WRITE, GROUP, "wheel")]) == \
        [True, False]
    assert results(a, "User:bob", [(Op.READ, TOPIC, "alpha"), (Op.WRITE, GROUP, "arbitrary"),
                                   (Op.READ, TOPIC, "ala")]) == [False, True, False]


def test_audit_logging_decisions():
    # StandardAuthorizerTest.testDenyAuditLogging / testAllowAuditLogging: the decisions (the
    # audit log lines themselves are not ported: kafkalog has no kafka.authorizer.logger)
    a = many_acls()
    assert results(a, "User:bob", [(Op.READ, TOPIC, "alpha")], "127.0.0.1") == [False]
    assert results(a, "User:bob", [(Op.READ, TOPIC, "green1")], "127.0.0.1") == [True]


def test_super_user_before_any_acl():
    # StandardAuthorizerTest.testAuthorizationPriorToCompleteInitialLoad (the super-user half:
    # there is no initial load here, so no AuthorizerNotReadyException for the others)
    assert results(superman(), "User:superman", [(Op.READ, TOPIC, "green1"),
                                                 (Op.WRITE, GROUP, "wheel")]) == [True, True]
    assert results(superman(), "User:bob", [(Op.READ, TOPIC, "green1")]) == [False]


def test_prefix_acls():
    # StandardAuthorizerTest.testPrefixAcls
    a = Authorizer([
        acl(TOPIC, "fooa", PREFIXED, "User:alice", "*", Op.ALL, ALLOW),
        acl(TOPIC, "foobar", LITERAL, "User:bob", "*", Op.ALL, ALLOW),
        acl(TOPIC, "f", PREFIXED, "User:bob", "*", Op.ALL, ALLOW),
    ], ["User:superman"])
    assert results(a, "User:bob", [(Op.WRITE, TOPIC, "foobarr"), (Op.READ, TOPIC, "goobar"),
                                   (Op.READ, TOPIC, "fooa")]) == [True, False, True]
    assert results(a, "User:alice", [(Op.DESCRIBE, TOPIC, "fooa"), (Op.WRITE, TOPIC, "bar"),
                                     (Op.READ, TOPIC, "baz")]) == [True, False, False]


# --- metadata: StandardAuthorizerPropertyTest ----------------------------------------------------

TOPIC_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-."
# (@ValidTopicChars String, Assume.that(Topic.isValid(topic)))
VALID_TOPICS = st.text(TOPIC_CHARS, min_size=1, max_size=24).filter(lambda t: t not in (".", ".."))
SUFFIXES = st.sets(st.text(TOPIC_CHARS, max_size=6), max_size=10)


def topic_write_acl(name: str, pt: PT, perm: Perm) -> AclBinding:
    """StandardAuthorizerPropertyTest.buildTopicWriteAcl"""
    return acl(TOPIC, name, pt, "User:*", "*", Op.WRITE, perm)


def random_prefix_rules(topic: str, suffixes: set[str], perm: Perm, keep) -> list[AclBinding]:
    """StandardAuthorizerPropertyTest.addRandomPrefixRules"""
    patterns = {topic[:i] + s for i in range(len(topic)) for s in suffixes}
    return [topic_write_acl(p, PREFIXED, perm) for p in patterns if keep(p)]


def authorize_user_write(rules: list[AclBinding], topic: str) -> bool:
    # buildAuthorizer (no super users, default DENIED) and assertAuthorizationResult
    rules = rules[:]
    random.Random(len(rules)).shuffle(rules)  # the order ACLs are added in does not matter
    return Authorizer(rules).authorize("User:user", LOCALHOST, Op.WRITE, TOPIC, topic)


@settings(max_examples=300, deadline=None)
@given(topic=VALID_TOPICS, suffixes=SUFFIXES, data=st.data())
def test_matching_prefix_deny_overrides_all_allow_rules(topic, suffixes, data):
    # StandardAuthorizerPropertyTest.matchingPrefixDenyOverridesAllAllowRules
    prefix = topic[:data.draw(st.integers(0, len(topic) - 1))]  # may be "" (matches all)
    rules = [topic_write_acl(prefix, PREFIXED, DENY)]
    rules += random_prefix_rules(topic, suffixes, ALLOW, lambda p: p != "")
    assert authorize_user_write(rules, topic) is False


@settings(max_examples=300, deadline=None)
@given(topic=VALID_TOPICS, suffixes=SUFFIXES)
def test_matching_literal_deny_overrides_all_allow_rules(topic, suffixes):
    # StandardAuthorizerPropertyTest.matchingLiteralDenyOverridesAllAllowRules
    rules = [topic_write_acl(topic, LITERAL, DENY)]
    rules += random_prefix_rules(topic, suffixes, ALLOW, lambda p: p != "")
    assert authorize_user_write(rules, topic) is False


@settings(max_examples=300, deadline=None)
@given(topic=VALID_TOPICS, suffixes=SUFFIXES, data=st.data())
def test_matching_prefix_allow_with_no_matching_deny_rules(topic, suffixes, data):
    # StandardAuthorizerPropertyTest.matchingPrefixAllowWithNoMatchingDenyRules
    prefix = topic[:data.draw(st.integers(0, len(topic) - 1))]
    rules = [topic_write_acl(prefix, PREFIXED, ALLOW)]
    rules += random_prefix_rules(topic, suffixes, DENY,
                                 lambda p: p != "" and not topic.startswith(p))
    assert authorize_user_write(rules, topic) is True


@settings(max_examples=300, deadline=None)
@given(topic=VALID_TOPICS, suffixes=SUFFIXES)
def test_matching_literal_allow_with_no_matching_deny_rules(topic, suffixes):
    # StandardAuthorizerPropertyTest.matchingLiteralAllowWithNoMatchingDenyRules
    rules = [topic_write_acl(topic, LITERAL, ALLOW)]
    rules += random_prefix_rules(topic, suffixes, DENY,
                                 lambda p: p != "" and not topic.startswith(p))
    assert authorize_user_write(rules, topic) is True


# --- metadata: AclControlManagerTest -----------------------------------------------------------


def _error(fn, arg) -> str | None:
    try:
        fn(arg)
    except AclValidationError as e:
        assert e.error_code == 42  # InvalidRequestException
        return e.message
    return None


def test_validate_new_acl():
    # AclControlManagerTest.testValidateNewAcl
    ok = acl(TOPIC, "*", LITERAL, "User:*", "*", Op.ALTER, ALLOW)
    assert _error(validate_new_acl, ok) is None
    assert _error(validate_new_acl, acl(TOPIC, "*", PT.UNKNOWN, "User:*", "*", Op.ALTER, ALLOW)) \
        == "Invalid patternType UNKNOWN"
    assert _error(validate_new_acl, acl(RT.UNKNOWN, "*", LITERAL, "User:*", "*", Op.ALTER, ALLOW)) \
        == "Invalid resourceType UNKNOWN"
    assert _error(validate_new_acl, acl(TOPIC, "*", LITERAL, "User:*", "*", Op.UNKNOWN, ALLOW)) \
        == "Invalid operation UNKNOWN"
    assert _error(validate_new_acl, acl(TOPIC, "*", LITERAL, "User:*", "*", Op.ALTER,
                                        Perm.UNKNOWN)) == "Invalid permissionType UNKNOWN"


def test_validate_new_acl_other_texts():
    # AclControlManager.validateNewAcl's other checks (and the principal check, see
    # validate_new_acl: StandardAcl.kafkaPrincipal's text)
    base = ("User:a", "*", Op.READ, ALLOW)
    assert _error(validate_new_acl, acl(RT.ANY, "t", LITERAL, *base)) == "Invalid resourceType ANY"
    assert _error(validate_new_acl, acl(TOPIC, "t", MATCH, *base)) == "Invalid patternType MATCH"
    assert _error(validate_new_acl, acl(TOPIC, "t", PT.ANY, *base)) == "Invalid patternType ANY"
    assert _error(validate_new_acl, acl(TOPIC, "t", LITERAL, "User:a", "*", Op.ANY, ALLOW)) == \
        "Invalid operation ANY"
    assert _error(validate_new_acl, acl(TOPIC, "t", LITERAL, "User:a", "*", Op.READ, Perm.ANY)) \
        == "Invalid permissionType ANY"
    assert _error(validate_new_acl, acl(TOPIC, "", LITERAL, *base)) == \
        "Resource name should not be empty"
    assert _error(validate_new_acl, acl(TOPIC, "t", LITERAL, "bob", "*", Op.READ, ALLOW)) == (
        "Could not parse principal from `bob` (no colon is present separating the principal "
        "type from the principal name)")
    # Kafka validates neither hosts nor "*" further: any host text, "*" as a prefix, a
    # wildcard principal of another type are all stored as given
    for b in (acl(TOPIC, "t", LITERAL, "User:a", "", Op.READ, ALLOW),
              acl(TOPIC, "t", LITERAL, "User:a", "not an address", Op.READ, ALLOW),
              acl(TOPIC, "*", PREFIXED, "Group:*", "*", Op.READ, ALLOW),
              acl(CLUSTER, "other", LITERAL, ":", "*", Op.READ, ALLOW)):
        assert _error(validate_new_acl, b) is None


def test_acl_apis_create_checks():
    # AclApis.handleCreateAcls, before the controller (AuthorizerTest.testEmptyAclThrowsException
    # reaches the controller's own check instead: see test_store_refuses_empty_names)
    assert _error(validate_acl_creation, acl(CLUSTER, "other", LITERAL, "User:a", "*", Op.ALTER,
                                             ALLOW)) == \
        "The only valid name for the CLUSTER resource is kafka-cluster"
    assert _error(validate_acl_creation, acl(GROUP, "", LITERAL, "User:a", "*", Op.READ,
                                             ALLOW)) == "Invalid empty resource name"
    assert _error(validate_acl_creation, TEST_ACLS[0]) is None


def test_validate_filter():
    # AclControlManagerTest.testValidateFilter
    assert _error(validate_filter, AclBindingFilter(RT.ANY, "*", LITERAL, "User:*", "*", Op.ANY,
                                                    Perm.ANY)) is None
    assert _error(validate_filter, AclBindingFilter(RT.ANY, "*", PT.UNKNOWN, "User:*", "*",
                                                    Op.ANY, Perm.ANY)) == "Unknown patternFilter."
    assert _error(validate_filter, AclBindingFilter(RT.ANY, "*", MATCH, "User:*", "*", Op.ANY,
                                                    Perm.UNKNOWN)) == "Unknown entryFilter."


def test_load_snapshot(tmp_path):
    # AclControlManagerTest.testLoadSnapshot: the ACLs come back from the store's file
    AclStore(tmp_path).create(TEST_ACLS)
    store = AclStore(tmp_path)
    assert set(store.acls()) == set(TEST_ACLS)
    assert set(store.authorizer().acls) == set(TEST_ACLS)


def test_add_and_delete(tmp_path):
    # AclControlManagerTest.testAddAndDelete
    store = AclStore(tmp_path)
    store.create([TEST_ACLS[0]])
    assert store.delete([TEST_ACLS[0].to_filter()]) == [(None, [TEST_ACLS[0]])]
    assert store.acls() == [] and AclStore(tmp_path).acls() == []


def test_create_acl_delete_acl(tmp_path):
    # AclControlManagerTest.testCreateAclDeleteAcl
    store = AclStore(tmp_path)
    to_create = TEST_ACLS[:3] + [acl(TOPIC, "*", PT.UNKNOWN, "User:*", "*", Op.ALTER, ALLOW)]
    created = store.create(to_create)
    assert created[:3] == [None, None, None]
    assert (created[3].error_code, created[3].message) == (42, "Invalid patternType UNKNOWN")
    assert store.acls()
    deleted = store.delete([
        AclBindingFilter(RT.ANY, None, LITERAL, None, None, Op.ANY, Perm.ANY),
        AclBindingFilter(RT.UNKNOWN, None, LITERAL, None, None, Op.ANY, Perm.ANY)])
    assert len(deleted) == 2
    err, removed = deleted[0]
    assert err is None and set(removed) == {TEST_ACLS[0], TEST_ACLS[2]}
    err, removed = deleted[1]
    assert err is not None and err.error_code == 42 and removed == []  # InvalidRequestException
    assert store.acls() == [TEST_ACLS[1]]


def test_delete_dedupe(tmp_path):
    # AclControlManagerTest.testDeleteDedupe: one removal per ACL, listed by each filter
    store = AclStore(tmp_path)
    b = acl(TOPIC, "topic-1", LITERAL, "User:user", "10.0.0.1", Op.ALL, ALLOW)
    assert store.create([b]) == [None] and store.acls() == [b]
    assert store.delete([AclBindingFilter.ANY]) == [(None, [b])]
    store.create([b])
    assert store.delete([b.to_filter()]) == [(None, [b])]
    store.create([b])
    assert store.delete([AclBindingFilter.ANY, b.to_filter()]) == [(None, [b]), (None, [b])]
    assert store.acls() == [] and json.loads((tmp_path / AclStore.FILE).read_text())["acls"] == []


# --- core: AuthorizerTest / BaseAuthorizerTest (StandardAuthorizer + MockAclMutator) ------------


class Kafka:
    """A StandardAuthorizer configured with super.users (and allow.everyone.if.no.acl.found) whose
    ACLs change through the controller (the test's MockAclMutator): an :class:`AclStore`, the
    authorizer rebuilt after each change as ``kafkalog serve`` does."""

    def __init__(self, root, super_users: str = "User:superuser1; User:superuser2",
                 allow_everyone: str | None = None) -> None:
        self.store = AclStore(root)
        self.super_users = parse_super_users(super_users)
        self.allow_everyone = parse_allow_everyone_if_no_acl_found(allow_everyone)
        self.authorizer = self._build()

    def _build(self) -> Authorizer:
        return self.store.authorizer(self.super_users, self.allow_everyone)

    def add(self, aces, pattern) -> None:
        """BaseAuthorizerTest.addAcls: each error raised."""
        for err in self.store.create([AclBinding(*pattern, *ace) for ace in aces]):
            if err is not None:
                raise err
        self.authorizer = self._build()

    def remove(self, aces, pattern) -> bool:
        """BaseAuthorizerTest.removeAcls: no aces, every ACL of the pattern."""
        filters = ([AclBinding(*pattern, *ace).to_filter() for ace in aces] if aces
                   else [AclBindingFilter(*pattern)])
        out = self.store.delete(filters)
        self.authorizer = self._build()
        for err, _ in out:
            if err is not None:
                raise err
        return all(removed for _, removed in out)

    def authorize(self, ctx, op: Op, pattern) -> bool:
        rt, name, pt = pattern
        assert pt == LITERAL  # (Kafka: IllegalArgumentException for other pattern types)
        return self.authorizer.authorize(ctx[0], ctx[1], op, rt, name)

    def by_type(self, ctx, op: Op, rt: RT) -> bool:
        return self.authorizer.authorize_by_resource_type(ctx[0], ctx[1], op, rt)

    def entries(self, pattern) -> set[tuple]:
        """AuthorizerTest.getAcls(authorizer, resourcePattern): the entries of the pattern."""
        return {(b.principal, b.host, b.operation, b.permission_type)
                for b in self.store.describe(AclBindingFilter(*pattern))}

    def bindings(self, principal: str | None = None) -> set[AclBinding]:
        return set(self.store.describe(AclBindingFilter(principal=principal)))


REQUEST_CONTEXT = ("User:alice", "192.168.0.1")  # BaseAuthorizerTest.requestContext
ALLOW_READ = (WILDCARD_PRINCIPAL, WILDCARD, Op.READ, ALLOW)  # AuthorizerTest.allowReadAcl
ALLOW_WRITE = (WILDCARD_PRINCIPAL, WILDCARD, Op.WRITE, ALLOW)
DENY_READ = (WILDCARD_PRINCIPAL, WILDCARD, Op.READ, DENY)
WILDCARD_RESOURCE = (TOPIC, WILDCARD, LITERAL)
PREFIXED_RESOURCE = (TOPIC, "foo", PREFIXED)
CLUSTER_RESOURCE = (CLUSTER, CLUSTER_NAME, LITERAL)


@pytest.fixture
def kafka(tmp_path) -> Kafka:
    return Kafka(tmp_path)


@pytest.fixture
def resource() -> tuple:
    return (TOPIC, f"foo-{uuid.uuid4()}", LITERAL)


def test_authorize_with_empty_resource_name(kafka):
    # AuthorizerTest.testAuthorizeWithEmptyResourceName
    assert not kafka.authorize(REQUEST_CONTEXT, Op.READ, (GROUP, "", LITERAL))
    kafka.add([ALLOW_READ], (GROUP, WILDCARD, LITERAL))
    assert kafka.authorize(REQUEST_CONTEXT, Op.READ, (GROUP, "", LITERAL))


def test_store_refuses_empty_names(kafka):
    # AuthorizerTest.testEmptyAclThrowsException
    with pytest.raises(AclValidationError, match="Resource name should not be empty"):
        kafka.add([ALLOW_READ], (GROUP, "", LITERAL))


def test_topic_acl(kafka, resource):
    # AuthorizerTest.testTopicAcl
    user1, user2, user3 = "User:alice", "User:rob", "User:batman"
    host1, host2 = "192.168.1.1", "192.168.1.2"
    kafka.add([(user1, host1, Op.READ, ALLOW), (user1, host2, Op.READ, ALLOW),
               (user1, host1, Op.READ, DENY), (user1, host1, Op.WRITE, ALLOW),
               (user1, WILDCARD, Op.DESCRIBE, ALLOW), (user2, WILDCARD, Op.READ, ALLOW),
               (user3, WILDCARD, Op.WRITE, ALLOW)], resource)
    h1, h2 = (user1, host1), (user1, host2)
    assert kafka.authorize(h2, Op.READ, resource)
    assert not kafka.authorize(h1, Op.READ, resource)  # the DENY
    assert kafka.authorize(h1, Op.WRITE, resource)
    assert not kafka.authorize(h2, Op.WRITE, resource)
    assert kafka.authorize(h1, Op.DESCRIBE, resource)
    assert kafka.authorize(h2, Op.DESCRIBE, resource)
    assert not kafka.authorize(h1, Op.ALTER, resource)
    assert not kafka.authorize(h2, Op.ALTER, resource)
    # READ or WRITE also give DESCRIBE
    u2, u3 = (user2, host1), (user3, host1)
    assert kafka.authorize(u2, Op.DESCRIBE, resource)
    assert kafka.authorize(u3, Op.DESCRIBE, resource)
    assert kafka.authorize(u2, Op.READ, resource)
    assert kafka.authorize(u3, Op.WRITE, resource)


def test_deny_takes_precedence(kafka, resource):
    # AuthorizerTest.testDenyTakesPrecedence
    host = "192.168.2.1"
    kafka.add([(WILDCARD_PRINCIPAL, WILDCARD, Op.ALL, ALLOW), ("User:alice", host, Op.ALL, DENY)],
              resource)
    assert not kafka.authorize(("User:alice", host), Op.READ, resource)


def test_allow_all_access(kafka, resource):
    # AuthorizerTest.testAllowAllAccess
    kafka.add([(WILDCARD_PRINCIPAL, WILDCARD, Op.ALL, ALLOW)], resource)
    assert kafka.authorize(("User:random", "192.0.4.4"), Op.READ, resource)


def test_super_user_has_access(kafka, resource):
    # AuthorizerTest.testSuperUserHasAccess (super.users "User:superuser1; User:superuser2")
    kafka.add([(WILDCARD_PRINCIPAL, WILDCARD, Op.ALL, DENY)], resource)
    assert kafka.authorize(("User:superuser1", "192.0.4.4"), Op.READ, resource)
    assert kafka.authorize(("User:superuser2", "192.0.4.4"), Op.READ, resource)


def test_wildcard_acls(kafka, resource):
    # AuthorizerTest.testWildCardAcls
    assert not kafka.authorize(REQUEST_CONTEXT, Op.READ, resource)  # no ACL: fail closed
    user1, host1 = "User:alice", "192.168.3.1"
    kafka.add([(user1, host1, Op.READ, ALLOW)], WILDCARD_RESOURCE)
    assert kafka.authorize((user1, host1), Op.READ, resource)
    kafka.add([(user1, host1, Op.WRITE, ALLOW)], resource)
    kafka.add([(user1, host1, Op.WRITE, DENY)], WILDCARD_RESOURCE)
    assert not kafka.authorize((user1, host1), Op.WRITE, resource)


def test_no_acl_found(kafka, resource):
    # AuthorizerTest.testNoAclFound
    assert not kafka.authorize(REQUEST_CONTEXT, Op.READ, resource)


def test_no_acl_found_override(tmp_path, resource):
    # AuthorizerTest.testNoAclFoundOverride
    assert Kafka(tmp_path, allow_everyone="true").authorize(REQUEST_CONTEXT, Op.READ, resource)


def test_acl_config_with_whitespace(tmp_path, resource):
    # AuthorizerTest.testAclConfigWithWhitespace: every value with spaces around it
    k = Kafka(tmp_path, super_users=" User:superuser1; User:superuser2 ", allow_everyone="  true ")
    assert k.authorize(REQUEST_CONTEXT, Op.READ, resource)
    assert k.super_users == {"User:superuser1", "User:superuser2"}


def test_acl_management_apis(kafka, resource):
    # AuthorizerTest.testAclManagementAPIs
    user1, user2, host1, host2 = "User:alice", "User:bob", "host1", "host2"
    acl1, acl2 = (user1, host1, Op.READ, ALLOW), (user1, host1, Op.WRITE, ALLOW)
    acl3, acl4 = (user2, host2, Op.READ, ALLOW), (user2, host2, Op.WRITE, ALLOW)
    kafka.add([acl1, acl2, acl3, acl4], resource)
    acl5 = (user2, WILDCARD, Op.READ, ALLOW)
    kafka.add([acl5], resource)  # additive
    aces = {acl1, acl2, acl3, acl4, acl5}
    assert kafka.entries(resource) == aces
    assert kafka.bindings(user1) == {AclBinding(*resource, *a) for a in (acl1, acl2)}
    assert kafka.bindings(user2) == {AclBinding(*resource, *a) for a in (acl3, acl4, acl5)}
    resource_to_acls = {
        (TOPIC, WILDCARD, LITERAL): {(user2, WILDCARD, Op.READ, ALLOW)},
        (CLUSTER, WILDCARD, LITERAL): {(user2, host1, Op.READ, ALLOW)},
        (GROUP, WILDCARD, LITERAL): aces,
        (GROUP, "test-ConsumerGroup", LITERAL): aces,
    }
    for pattern, pattern_aces in resource_to_acls.items():
        kafka.add(sorted(pattern_aces), pattern)
    expected = {AclBinding(*p, *a) for p, pa in {**resource_to_acls, resource: aces}.items()
                for a in pa}
    assert kafka.bindings() == expected
    kafka.remove([acl1, acl5], resource)  # remove some ACLs of a resource
    assert kafka.entries(resource) == {acl2, acl3, acl4}
    kafka.remove([], resource)  # remove all ACLs of a resource
    assert kafka.entries(resource) == set()
    kafka.add([acl1], resource)
    kafka.remove([acl1], resource)
    assert kafka.entries(resource) == set()


def test_local_concurrent_modification_of_resource_acls(kafka):
    # AuthorizerTest.testLocalConcurrentModificationOfResourceAcls
    common = (TOPIC, "test", LITERAL)
    acl1, acl2 = ("User:alice", WILDCARD, Op.READ, ALLOW), ("User:bob", WILDCARD, Op.READ, DENY)
    kafka.add([acl1], common)
    kafka.add([acl2], common)
    assert kafka.entries(common) == {acl1, acl2}


@pytest.mark.parametrize("parent, permission, implied", [
    # AuthorizerTest.testAclInheritance (testImplicationsOfAllow / testImplicationsOfDeny)
    (Op.ALL, ALLOW, set(VALID_OPS)),
    (Op.ALL, DENY, set(VALID_OPS)),
    (Op.READ, ALLOW, {Op.DESCRIBE}),
    (Op.WRITE, ALLOW, {Op.DESCRIBE}),
    (Op.DELETE, ALLOW, {Op.DESCRIBE}),
    (Op.ALTER, ALLOW, {Op.DESCRIBE}),
    (Op.DESCRIBE, DENY, set()),
    (Op.ALTER_CONFIGS, ALLOW, {Op.DESCRIBE_CONFIGS}),
    (Op.DESCRIBE_CONFIGS, DENY, set()),
])
def test_acl_inheritance(kafka, parent, permission, implied):
    ctx = ("User:alice", "192.168.3.1")
    if permission == ALLOW:
        aces = [("User:alice", WILDCARD, parent, ALLOW)]
    else:
        aces = [("User:alice", WILDCARD, parent, DENY), ("User:alice", WILDCARD, Op.ALL, ALLOW)]
    kafka.add(aces, CLUSTER_RESOURCE)
    for op in VALID_OPS:
        hit = op in implied or op == parent
        assert kafka.authorize(ctx, op, CLUSTER_RESOURCE) is (hit if permission == ALLOW
                                                              else not hit), op
    kafka.remove(aces, CLUSTER_RESOURCE)


def test_access_allowed_if_allow_acl_exists_on_wildcard_resource(kafka, resource):
    # AuthorizerTest.testAccessAllowedIfAllowAclExistsOnWildcardResource
    kafka.add([ALLOW_READ], WILDCARD_RESOURCE)
    assert kafka.authorize(REQUEST_CONTEXT, Op.READ, resource)


def test_delete_acl_on_wildcard_resource(kafka):
    # AuthorizerTest.testDeleteAclOnWildcardResource
    kafka.add([ALLOW_READ, ALLOW_WRITE], WILDCARD_RESOURCE)
    kafka.remove([ALLOW_READ], WILDCARD_RESOURCE)
    assert kafka.entries(WILDCARD_RESOURCE) == {ALLOW_WRITE}


def test_delete_all_acl_on_wildcard_resource(kafka):
    # AuthorizerTest.testDeleteAllAclOnWildcardResource
    kafka.add([ALLOW_READ], WILDCARD_RESOURCE)
    kafka.remove([], WILDCARD_RESOURCE)
    assert kafka.bindings() == set()


def test_access_allowed_if_allow_acl_exists_on_prefixed_resource(kafka, resource):
    # AuthorizerTest.testAccessAllowedIfAllowAclExistsOnPrefixedResource
    kafka.add([ALLOW_READ], PREFIXED_RESOURCE)
    assert kafka.authorize(REQUEST_CONTEXT, Op.READ, resource)


def test_delete_acl_on_prefixed_resource(kafka):
    # AuthorizerTest.testDeleteAclOnPrefixedResource
    kafka.add([ALLOW_READ, ALLOW_WRITE], PREFIXED_RESOURCE)
    kafka.remove([ALLOW_READ], PREFIXED_RESOURCE)
    assert kafka.entries(PREFIXED_RESOURCE) == {ALLOW_WRITE}


def test_delete_all_acl_on_prefixed_resource(kafka):
    # AuthorizerTest.testDeleteAllAclOnPrefixedResource
    kafka.add([ALLOW_READ, ALLOW_WRITE], PREFIXED_RESOURCE)
    kafka.remove([], PREFIXED_RESOURCE)
    assert kafka.bindings() == set()


@pytest.mark.parametrize("which", ["literal", "wildcard", "prefixed"])
def test_add_acls_on_resource(kafka, resource, which):
    # AuthorizerTest.testAddAclsOnLiteralResource / testAddAclsOnWildcardResource /
    # testAddAclsOnPrefixedResource
    patterns = {"literal": resource, "wildcard": WILDCARD_RESOURCE, "prefixed": PREFIXED_RESOURCE}
    target = patterns.pop(which)
    kafka.add([ALLOW_READ, ALLOW_WRITE], target)
    kafka.add([ALLOW_WRITE, DENY_READ], target)
    assert kafka.entries(target) == {ALLOW_READ, ALLOW_WRITE, DENY_READ}
    for other in patterns.values():
        assert kafka.entries(other) == set()


def test_authorize_with_prefixed_resource(kafka, resource):
    # AuthorizerTest.testAuthorizeWithPrefixedResource
    for name, pt in [("a_other", LITERAL), ("a_other", PREFIXED),
                     (f"foo-{uuid.uuid4()}", PREFIXED), (f"foo-{uuid.uuid4()}", PREFIXED),
                     (f"foo-{uuid.uuid4()}-zzz", PREFIXED), (f"fooo-{uuid.uuid4()}", PREFIXED),
                     (f"fo-{uuid.uuid4()}", PREFIXED), (f"fop-{uuid.uuid4()}", PREFIXED),
                     (f"fon-{uuid.uuid4()}", PREFIXED), ("fon-", PREFIXED),
                     ("z_other", PREFIXED), ("z_other", LITERAL)]:
        kafka.add([DENY_READ], (TOPIC, name, pt))
    kafka.add([ALLOW_READ], PREFIXED_RESOURCE)
    assert kafka.authorize(REQUEST_CONTEXT, Op.READ, resource)


def test_single_character_resource_acls(kafka):
    # AuthorizerTest.testSingleCharacterResourceAcls
    kafka.add([ALLOW_READ], (TOPIC, "f", LITERAL))
    assert kafka.authorize(REQUEST_CONTEXT, Op.READ, (TOPIC, "f", LITERAL))
    assert not kafka.authorize(REQUEST_CONTEXT, Op.READ, (TOPIC, "foo", LITERAL))
    kafka.add([ALLOW_READ], (TOPIC, "_", PREFIXED))
    assert kafka.authorize(REQUEST_CONTEXT, Op.READ, (TOPIC, "_foo", LITERAL))
    assert kafka.authorize(REQUEST_CONTEXT, Op.READ, (TOPIC, "_", LITERAL))
    assert not kafka.authorize(REQUEST_CONTEXT, Op.READ, (TOPIC, "foo_", LITERAL))


def test_get_acls_principal(kafka, resource):
    # AuthorizerTest.testGetAclsPrincipal
    kafka.add([("User:alice", WILDCARD, Op.WRITE, ALLOW)], resource)
    assert len(kafka.bindings(WILDCARD_PRINCIPAL)) == 0
    assert len(kafka.bindings("User:alice")) == 1
    kafka.remove([], resource)
    kafka.add([(WILDCARD_PRINCIPAL, WILDCARD, Op.WRITE, ALLOW)], resource)
    assert len(kafka.bindings(WILDCARD_PRINCIPAL)) == 1
    assert len(kafka.bindings("User:alice")) == 0


def test_acls_filter(kafka):
    # AuthorizerTest.testAclsFilter
    resource1 = (TOPIC, f"foo-{uuid.uuid4()}", LITERAL)
    resource2 = (TOPIC, f"bar-{uuid.uuid4()}", LITERAL)
    prefixed = (TOPIC, "bar-", PREFIXED)
    acl1 = AclBinding(*resource1, "User:alice", WILDCARD, Op.READ, ALLOW)
    acl2 = AclBinding(*resource1, "User:alice", "192.168.0.1", Op.WRITE, ALLOW)
    acl3 = AclBinding(*resource2, "User:alice", WILDCARD, Op.DESCRIBE, ALLOW)
    acl4 = AclBinding(*prefixed, WILDCARD_PRINCIPAL, WILDCARD, Op.READ, ALLOW)
    kafka.store.create([acl1, acl2, acl3, acl4])
    describe = kafka.store.describe
    assert set(describe(AclBindingFilter.ANY)) == {acl1, acl2, acl3, acl4}
    assert set(describe(AclBindingFilter(*resource1))) == {acl1, acl2}
    assert set(describe(AclBindingFilter(*prefixed))) == {acl4}
    matching = AclBindingFilter(RT.ANY, resource2[1], MATCH)
    assert set(describe(matching)) == {acl3, acl4}
    filters = [matching, acl1.to_filter(), AclBindingFilter(*resource2),
               AclBindingFilter(TOPIC, "baz", PT.ANY)]
    deleted = kafka.store.delete(filters)
    assert [err for err, _ in deleted] == [None] * 4
    assert [set(removed) for _, removed in deleted] == [{acl3, acl4}, {acl1}, {acl3}, set()]
    # "standard authorizer first finds the acls that match filters and then delete them"
    assert set(describe(AclBindingFilter.ANY)) == {acl2}


def test_authorize_by_resource_type_no_acl_found_override(tmp_path):
    # AuthorizerTest.testAuthorizeByResourceTypeNoAclFoundOverride
    k = Kafka(tmp_path, allow_everyone="true")
    assert k.by_type(REQUEST_CONTEXT, Op.READ, TOPIC)
    assert k.by_type(REQUEST_CONTEXT, Op.WRITE, TOPIC)


def test_authorize_by_resource_type_multiple_add_and_remove(kafka):
    # BaseAuthorizerTest.testAuthorizeByResourceTypeMultipleAddAndRemove (3x3 rounds, not 10x10)
    user1, host1 = "User:user1", "192.168.1.1"
    resource1 = (TOPIC, f"sb1{uuid.uuid4()}", LITERAL)
    deny_read, allow_read = (user1, host1, Op.READ, DENY), (user1, host1, Op.READ, ALLOW)
    ctx = (user1, host1)
    for _ in range(3):
        assert not kafka.by_type(ctx, Op.READ, TOPIC)
        kafka.add([allow_read], resource1)
        assert kafka.by_type(ctx, Op.READ, TOPIC)
        for _ in range(3):
            kafka.add([deny_read], resource1)
            assert not kafka.by_type(ctx, Op.READ, TOPIC)
            kafka.remove([deny_read], resource1)
            kafka.add([allow_read], resource1)
            assert kafka.by_type(ctx, Op.READ, TOPIC)
        kafka.remove([allow_read], resource1)
        assert not kafka.by_type(ctx, Op.READ, TOPIC)


def test_authorize_by_resource_type_isolation_unrelated_deny_wont_dominate_allow(kafka):
    # BaseAuthorizerTest.testAuthorizeByResourceTypeIsolationUnrelatedDenyWontDominateAllow
    user1, user2, host1, host2 = "User:user1", "User:user2", "192.168.1.1", "192.168.1.2"
    resource1 = (TOPIC, f"sb1{uuid.uuid4()}", LITERAL)
    resource2 = (TOPIC, f"sb2{uuid.uuid4()}", LITERAL)
    resource3 = (GROUP, "s", PREFIXED)
    kafka.add([(user1, host1, Op.READ, DENY), (user2, host1, Op.READ, DENY),
               (user1, host2, Op.WRITE, DENY), (user2, host2, Op.READ, DENY),
               (user1, host2, Op.READ, ALLOW)], resource1)
    kafka.add([(user1, host2, Op.READ, DENY)], resource2)
    kafka.add([(user1, host2, Op.READ, DENY)], resource3)
    u1h1, u1h2 = (user1, host1), (user1, host2)
    assert not kafka.by_type(u1h1, Op.READ, TOPIC)
    assert not kafka.by_type(u1h1, Op.READ, GROUP)
    assert not kafka.by_type(u1h1, Op.READ, RT.TRANSACTIONAL_ID)
    assert not kafka.by_type(u1h1, Op.READ, CLUSTER)
    assert kafka.by_type(u1h2, Op.READ, TOPIC)


def test_authorize_by_resource_type_deny_takes_precedence(kafka):
    # BaseAuthorizerTest.testAuthorizeByResourceTypeDenyTakesPrecedence
    user1, host1 = "User:user1", "192.168.1.1"
    resource1 = (TOPIC, f"sb1{uuid.uuid4()}", LITERAL)
    kafka.add([(user1, host1, Op.WRITE, ALLOW)], resource1)
    assert kafka.by_type((user1, host1), Op.WRITE, TOPIC)
    kafka.add([(user1, host1, Op.WRITE, DENY)], resource1)
    assert not kafka.by_type((user1, host1), Op.WRITE, TOPIC)


def test_authorize_by_resource_type_prefixed_resource_deny_dominate(kafka):
    # BaseAuthorizerTest.testAuthorizeByResourceTypePrefixedResourceDenyDominate
    user1, host1 = "User:user1", "192.168.1.1"
    allow, deny = (user1, host1, Op.READ, ALLOW), (user1, host1, Op.READ, DENY)
    ctx = (user1, host1)
    kafka.add([allow], (GROUP, "abcde", PREFIXED))
    assert kafka.by_type(ctx, Op.READ, GROUP)
    kafka.add([deny], (GROUP, "abcd", PREFIXED))
    assert not kafka.by_type(ctx, Op.READ, GROUP)
    kafka.add([allow], (GROUP, "abc", PREFIXED))
    assert kafka.by_type(ctx, Op.READ, GROUP)
    kafka.add([deny], (GROUP, "a", PREFIXED))
    assert not kafka.by_type(ctx, Op.READ, GROUP)
    kafka.add([allow], (GROUP, "ab", PREFIXED))
    assert not kafka.by_type(ctx, Op.READ, GROUP)


def test_authorize_by_resource_type_wildcard_resource_deny_dominate(kafka):
    # BaseAuthorizerTest.testAuthorizeByResourceTypeWildcardResourceDenyDominate
    user1, host1 = "User:user1", "192.168.1.1"
    allow, deny = (user1, host1, Op.WRITE, ALLOW), (user1, host1, Op.WRITE, DENY)
    ctx = (user1, host1)
    kafka.add([allow], (GROUP, "hello", PREFIXED))
    assert kafka.by_type(ctx, Op.WRITE, GROUP)
    kafka.add([deny], (GROUP, WILDCARD, LITERAL))
    assert not kafka.by_type(ctx, Op.WRITE, GROUP)
    kafka.add([allow], (GROUP, WILDCARD, LITERAL))
    assert not kafka.by_type(ctx, Op.WRITE, GROUP)
    kafka.add([allow], (GROUP, "aloha", LITERAL))
    assert not kafka.by_type(ctx, Op.WRITE, GROUP)


def test_authorize_by_resource_type_with_all_operation_ace(kafka):
    # BaseAuthorizerTest.testAuthorizeByResourceTypeWithAllOperationAce
    user1, host1 = "User:user1", "192.168.1.1"
    resource1 = (TOPIC, f"sb1{uuid.uuid4()}", LITERAL)
    ctx = (user1, host1)
    assert not kafka.by_type(ctx, Op.READ, TOPIC)
    kafka.add([(user1, host1, Op.WRITE, DENY), (user1, host1, Op.ALL, ALLOW)], resource1)
    assert kafka.by_type(ctx, Op.READ, TOPIC)
    kafka.add([(user1, host1, Op.ALL, DENY)], resource1)
    assert not kafka.by_type(ctx, Op.READ, TOPIC)


def test_authorize_by_resource_type_with_all_host_ace(kafka):
    # BaseAuthorizerTest.testAuthorizeByResourceTypeWithAllHostAce
    user1, host1, host2 = "User:user1", "192.168.1.1", "192.168.1.2"
    resource1 = (TOPIC, f"sb1{uuid.uuid4()}", LITERAL)
    resource2 = (TOPIC, f"sb2{uuid.uuid4()}", LITERAL)
    u1h1, u1h2 = (user1, host1), (user1, host2)
    assert not kafka.by_type(u1h1, Op.READ, TOPIC)
    kafka.add([(user1, host1, Op.READ, ALLOW)], resource1)
    assert kafka.by_type(u1h1, Op.READ, TOPIC)
    kafka.add([(user1, WILDCARD, Op.READ, DENY)], resource1)
    assert not kafka.by_type(u1h1, Op.READ, TOPIC)
    kafka.add([(user1, host1, Op.READ, DENY)], resource2)
    assert not kafka.by_type(u1h1, Op.READ, TOPIC)
    assert not kafka.by_type(u1h2, Op.READ, TOPIC)
    kafka.add([(user1, WILDCARD, Op.READ, ALLOW)], resource2)
    assert kafka.by_type(u1h2, Op.READ, TOPIC)
    kafka.add([(user1, WILDCARD, Op.READ, DENY)], resource2)
    assert not kafka.by_type(u1h2, Op.READ, TOPIC)


def test_authorize_by_resource_type_with_all_principal_ace(kafka):
    # BaseAuthorizerTest.testAuthorizeByResourceTypeWithAllPrincipalAce
    user1, user2, host1 = "User:user1", "User:user2", "192.168.1.1"
    resource1 = (TOPIC, f"sb1{uuid.uuid4()}", LITERAL)
    resource2 = (TOPIC, f"sb2{uuid.uuid4()}", LITERAL)
    u1h1, u2h1 = (user1, host1), (user2, host1)
    assert not kafka.by_type(u1h1, Op.READ, TOPIC)
    kafka.add([(user1, host1, Op.READ, ALLOW)], resource1)
    assert kafka.by_type(u1h1, Op.READ, TOPIC)
    kafka.add([(WILDCARD_PRINCIPAL, host1, Op.READ, DENY)], resource1)
    assert not kafka.by_type(u1h1, Op.READ, TOPIC)
    kafka.add([(user1, host1, Op.READ, DENY)], resource2)
    assert not kafka.by_type(u1h1, Op.READ, TOPIC)
    assert not kafka.by_type(u2h1, Op.READ, TOPIC)
    kafka.add([(WILDCARD_PRINCIPAL, host1, Op.READ, ALLOW)], resource2)
    assert kafka.by_type(u2h1, Op.READ, TOPIC)
    kafka.add([(WILDCARD_PRINCIPAL, host1, Op.READ, DENY)], resource2)
    assert not kafka.by_type(u2h1, Op.READ, TOPIC)


def test_authorize_by_resource_type_super_user_has_access(kafka):
    # BaseAuthorizerTest.testAuthorizeByResourceTypeSuperUserHasAccess
    deny_all = (WILDCARD_PRINCIPAL, WILDCARD, Op.ALL, DENY)
    for rt in (TOPIC, CLUSTER, GROUP, RT.TRANSACTIONAL_ID):
        kafka.add([deny_all], (rt, WILDCARD, LITERAL))
    ctx = ("User:superuser1", "192.0.4.4")
    for rt in (TOPIC, CLUSTER, GROUP, RT.TRANSACTIONAL_ID):
        assert kafka.by_type(ctx, Op.READ, rt)


def test_authorize_by_resource_type_check_args():
    # SecurityUtils.authorizeByResourceTypeCheckArgs
    a = Authorizer()
    non_filter = "Must specify a non-filter {} type for authorizeByResourceType"
    for op, rt, text in [(Op.READ, RT.ANY, non_filter.format("resource")),
                         (Op.READ, RT.UNKNOWN, "Unknown resource type"),
                         (Op.ANY, TOPIC, non_filter.format("operation")),
                         (Op.UNKNOWN, TOPIC, "Unknown operation type")]:
        with pytest.raises(ValueError) as e:
            a.authorize_by_resource_type("User:a", "h", op, rt)
        assert str(e.value) == text


def test_any_topic_authorized_is_by_type_for_topics():
    # KafkaApis.handleInitProducerIdRequest: authorizeByResourceType(WRITE, TOPIC) (KIP-679)
    a = Authorizer([acl(TOPIC, "t", LITERAL, "User:a", "*", Op.WRITE, ALLOW),
                    acl(GROUP, "g", LITERAL, "User:b", "*", Op.WRITE, ALLOW)])
    assert a.any_topic_authorized("User:a", "h", Op.WRITE)
    assert not a.any_topic_authorized("User:b", "h", Op.WRITE)
    # no implied operations in authorizeByResourceType's loop: WRITE on "t" is no DESCRIBE there
    assert not a.any_topic_authorized("User:a", "h", Op.DESCRIBE)
    assert a.authorize("User:a", "h", Op.DESCRIBE, TOPIC, "t")
    # ... but through the "hardcode" probe, implications and the no-ACL default count
    b = Authorizer([acl(TOPIC, "hard", PREFIXED, "User:a", "*", Op.WRITE, ALLOW)])
    assert b.any_topic_authorized("User:a", "h", Op.DESCRIBE)
    c = Authorizer([acl(TOPIC, "t", LITERAL, "User:b", "*", Op.WRITE, DENY)],
                   allow_everyone_if_no_acl_found=True)
    assert c.any_topic_authorized("User:a", "h", Op.WRITE)


# --- the authorizer against brute force ----------------------------------------------------------

NAMES = ["a", "ab", "abc", "b", "ba", "*", "*a"]
REQUEST_NAMES = NAMES + ["abcd", "c", ""]
PRINCIPALS = ["User:alice", "User:bob", "User:*", "Group:*"]
HOSTS = ["*", "10.0.0.1", "10.0.0.2"]
REQUEST_HOSTS = ["10.0.0.1", "10.0.0.2", "10.0.0.3"]
RTYPES = [TOPIC, GROUP]
# mostly the operations that take part in implications, so that ACLs and requests meet
OPS = st.one_of(st.sampled_from([Op.ALL, Op.READ, Op.WRITE, Op.DESCRIBE, Op.ALTER,
                                 Op.ALTER_CONFIGS, Op.DESCRIBE_CONFIGS]),
                st.sampled_from(VALID_OPS))
ACL_STRATEGY = st.builds(
    acl, st.sampled_from(RTYPES), st.sampled_from(NAMES), st.sampled_from([LITERAL, PREFIXED]),
    st.sampled_from(PRINCIPALS), st.sampled_from(HOSTS), OPS,
    st.sampled_from([ALLOW, ALLOW, DENY]))  # fewer DENYs: more decisions left to ALLOWs


def request_names(acls: list[AclBinding]) -> st.SearchStrategy[str]:
    """Names the ACLs are about (as is, extended, cut short) as often as other names."""
    about = sorted({n for b in acls for n in (b.resource_name, b.resource_name + "c",
                                              b.resource_name[:-1])})
    return st.one_of(st.sampled_from(REQUEST_NAMES), st.sampled_from(about or ["a"]))


@st.composite
def requests(draw, acls: list[AclBinding]) -> tuple[str, str, Op, RT, str]:
    """(principal, host, operation, resource type, name): half the time aimed at one of the
    ACLs (its principal, host, operation or one it implies, type, a name it applies to), so
    that ACLs and requests meet often; else anything."""
    principal = draw(st.sampled_from(["User:alice", "User:bob", "User:carol"]))
    host = draw(st.sampled_from(REQUEST_HOSTS))
    op = draw(OPS)
    rt = draw(st.sampled_from(RTYPES + [CLUSTER]))
    if acls and draw(st.booleans()):
        b = draw(st.sampled_from(acls))
        if b.principal.startswith("User:") and b.principal != WILDCARD_PRINCIPAL:
            principal = b.principal
        if b.host != WILDCARD:
            host = b.host
        implied = {Op.READ: Op.DESCRIBE, Op.WRITE: Op.DESCRIBE, Op.ALTER: Op.DESCRIBE,
                   Op.DELETE: Op.DESCRIBE, Op.ALTER_CONFIGS: Op.DESCRIBE_CONFIGS}
        op = draw(st.sampled_from([b.operation, implied.get(b.operation, b.operation), op]))
        rt = b.resource_type
        if b.resource_name != WILDCARD:
            suffix = draw(st.sampled_from(["", "c"])) if b.pattern_type == PREFIXED else ""
            return principal, host, op, rt, b.resource_name + suffix
    return principal, host, op, rt, draw(request_names(acls))


def reference_authorize(acls, supers, allow_everyone, principal, host, op, rt, name) -> bool:
    """StandardAuthorizerData's rules applied literally to every ACL."""
    if principal in supers:
        return True
    applying = []
    for b in acls:
        if b.resource_type != rt:
            continue
        if b.pattern_type == LITERAL and b.resource_name in (name, "*"):
            applying.append(b)
        elif b.pattern_type == PREFIXED and name[:len(b.resource_name)] == b.resource_name:
            applying.append(b)

    def counts(b: AclBinding) -> bool:
        if b.principal not in (principal, "User:*") or b.host not in (host, "*"):
            return False
        if b.operation in (Op.ALL, op):
            return True
        if b.permission_type == DENY:
            return False
        if op == Op.DESCRIBE:
            return b.operation in (Op.READ, Op.WRITE, Op.DELETE, Op.ALTER)
        if op == Op.DESCRIBE_CONFIGS:
            return b.operation == Op.ALTER_CONFIGS
        return False

    perms = {b.permission_type for b in applying if counts(b)}
    if DENY in perms:
        return False
    if ALLOW in perms:
        return True
    return allow_everyone and not applying


@settings(max_examples=1000, deadline=None)
@given(acls=st.lists(ACL_STRATEGY, max_size=10), allow_everyone=st.booleans(),
       supers=st.sampled_from([(), ("User:bob",)]), seed=st.integers(0, 1000), data=st.data())
def test_authorize_equals_brute_force(acls, allow_everyone, supers, seed, data):
    principal, host, op, rt, name = data.draw(requests(acls))
    expected = reference_authorize(acls, supers, allow_everyone, principal, host, op, rt, name)
    a = Authorizer(acls, supers, allow_everyone)
    assert a.authorize(principal, host, op, rt, name) is expected
    shuffled = acls[:]
    random.Random(seed).shuffle(shuffled)  # the order of the ACLs does not matter
    assert Authorizer(shuffled, supers, allow_everyone).authorize(
        principal, host, op, rt, name) is expected
    ops = a.authorized_operations(principal, host, rt, name)
    assert ops == {o for o in supported_operations(rt) if reference_authorize(
        acls, supers, allow_everyone, principal, host, o, rt, name)}


@settings(max_examples=1000, deadline=None)
@given(acls=st.lists(ACL_STRATEGY, max_size=10), data=st.data())
def test_authorize_by_resource_type_means_some_resource_is_authorized(acls, data):
    principal, host, op, rt, _ = data.draw(requests(acls))
    assume(op not in (Op.DESCRIBE, Op.DESCRIBE_CONFIGS) and rt != CLUSTER)
    # Without implied operations (nothing implies op) and the no-ACL default, Kafka's
    # authorizeByResourceType is "authorize allows some resource of the type": the names of the
    # ACLs, each extended with a character no ACL uses, that character alone and "hardcode"
    # are enough witnesses.
    a = Authorizer(acls)
    names = {n for b in acls for n in (b.resource_name, b.resource_name + "~")} | {"~",
                                                                                   "hardcode"}
    witness = any(a.authorize(principal, host, op, rt, n) for n in names)
    assert a.authorize_by_resource_type(principal, host, op, rt) is witness


# --- hosts, authorized operations ---------------------------------------------------------------


def test_java_host_address():
    # InetAddress.getHostAddress: what StandardAuthorizerData compares ACL hosts with
    assert java_host_address("192.168.1.1") == "192.168.1.1"
    assert java_host_address("::1") == "0:0:0:0:0:0:0:1"
    assert java_host_address("fe80::a:1%eth0") == "fe80:0:0:0:0:0:a:1%eth0"
    assert java_host_address("2001:DB8::10") == "2001:db8:0:0:0:0:0:10"
    assert java_host_address("::ffff:10.0.0.1") == "10.0.0.1"  # an Inet4Address in Java
    assert java_host_address("not:an:address") == "not:an:address"
    a = Authorizer([acl(TOPIC, "t", LITERAL, "User:a", "0:0:0:0:0:0:0:1", Op.READ, ALLOW),
                    acl(TOPIC, "u", LITERAL, "User:a", "::1", Op.READ, ALLOW),
                    acl(TOPIC, "v", LITERAL, "User:a", "10.0.0.1", Op.READ, ALLOW)])
    assert a.authorize("User:a", "::1", Op.READ, TOPIC, "t")
    assert not a.authorize("User:a", "::1", Op.READ, TOPIC, "u")  # as in Kafka: never matches
    assert a.authorize("User:a", "::ffff:10.0.0.1", Op.READ, TOPIC, "v")


def test_authorized_operations():
    # AuthHelper.authorizedOperations with AclEntry.supportedOperations and Utils.to32BitField
    a = Authorizer([acl(TOPIC, "t", LITERAL, "User:a", "*", Op.WRITE, ALLOW),
                    acl(TOPIC, "t", LITERAL, "User:a", "*", Op.ALTER_CONFIGS, ALLOW),
                    acl(GROUP, "g", PREFIXED, "User:*", "*", Op.READ, ALLOW)], ["User:admin"])
    assert a.authorized_operations("User:a", "h", TOPIC, "t") == {
        Op.WRITE, Op.DESCRIBE, Op.ALTER_CONFIGS, Op.DESCRIBE_CONFIGS}
    assert a.authorized_operations("User:b", "h", GROUP, "g1") == {Op.READ, Op.DESCRIBE}
    assert a.authorized_operations("User:admin", "h", RT.USER, "x") == {Op.CREATE_TOKENS,
                                                                        Op.DESCRIBE_TOKENS}
    assert to_32bit_field({Op.READ, Op.DESCRIBE}) == (1 << 3) | (1 << 8)
    assert to_32bit_field(supported_operations(CLUSTER)) == sum(1 << o for o in (
        5, 9, 10, 11, 12, 7, 8))
    with pytest.raises(ValueError, match="Not a concrete resource type"):
        supported_operations(RT.ANY)


# --- the store -----------------------------------------------------------------------------------


def test_store_create_describe_delete_and_persistence(tmp_path):
    store = AclStore(tmp_path)
    assert store.acls() == [] and not (tmp_path / AclStore.FILE).exists()
    alice = acl(TOPIC, "orders", LITERAL, "User:alice", "*", Op.READ, ALLOW)
    bob = acl(TOPIC, "orders", LITERAL, "User:bob", "*", Op.WRITE, ALLOW)
    prefix = acl(TOPIC, "ord", PREFIXED, "User:*", "*", Op.DESCRIBE, DENY)
    group = acl(GROUP, "g", LITERAL, "User:alice", "*", Op.READ, ALLOW)
    out = store.create([alice, alice, bob, prefix, group,
                        acl(TOPIC, "x", LITERAL, "bob", "*", Op.READ, ALLOW)])
    assert out[:5] == [None] * 5 and out[5].error_code == 42  # a duplicate is a success
    assert store.acls() == [alice, bob, prefix, group]
    # the file, as the module documents it
    doc = json.loads((tmp_path / AclStore.FILE).read_text())
    assert doc["version"] == 1 and doc["acls"][0] == {
        "resourceType": "TOPIC", "name": "orders", "patternType": "LITERAL",
        "principal": "User:alice", "host": "*", "operation": "READ", "permissionType": "ALLOW"}
    # describe with filters
    assert store.describe(AclBindingFilter(TOPIC, "orders", MATCH)) == [alice, bob, prefix]
    assert store.describe(AclBindingFilter(TOPIC, "orders", PT.ANY)) == [alice, bob]
    assert store.describe(AclBindingFilter(principal="User:alice")) == [alice, group]
    assert store.describe(AclBindingFilter(operation=Op.WRITE)) == [bob]
    assert store.describe(AclBindingFilter(permission_type=DENY)) == [prefix]
    assert store.describe(AclBindingFilter(RT.ANY, "g")) == [group]
    # persistence across instances, and the authorizer over them
    again = AclStore(tmp_path)
    assert again.acls() == [alice, bob, prefix, group]
    auth = again.authorizer(super_users=["User:root"])
    assert auth.authorize("User:alice", "h", Op.READ, TOPIC, "orders")
    assert not auth.authorize("User:alice", "h", Op.DESCRIBE, TOPIC, "orders")  # the DENY
    assert auth.authorize("User:root", "h", Op.DESCRIBE, TOPIC, "orders")
    # delete: per filter, an invalid one refused, all removals written together
    out = again.delete([AclBindingFilter(TOPIC, "orders", MATCH, permission_type=ALLOW),
                        AclBindingFilter(GROUP, None, PT.UNKNOWN),
                        AclBindingFilter(TOPIC, "nothing")])
    assert out[0] == (None, [alice, bob])
    assert out[1][0].message == "Unknown patternFilter." and out[1][1] == []
    assert out[2] == (None, [])
    assert AclStore(tmp_path).acls() == [prefix, group]
    assert store.acls() == [alice, bob, prefix, group]  # (an instance does not re-read)


def test_store_writes_only_when_something_changes(tmp_path, monkeypatch):
    store = AclStore(tmp_path)
    writes = []
    monkeypatch.setattr(checkpoint_module, "atomic_write", lambda p, d: writes.append(p))
    b = acl(TOPIC, "t", LITERAL, "User:a", "*", Op.READ, ALLOW)
    store.create([b, b, acl(TOPIC, "u", LITERAL, "User:a", "*", Op.READ, ALLOW)])
    assert len(writes) == 1  # one atomic write per operation
    store.create([b])
    store.delete([AclBindingFilter(GROUP)])
    assert len(writes) == 1  # nothing new, nothing removed: no write


def test_store_failed_write_changes_nothing(tmp_path, monkeypatch):
    store = AclStore(tmp_path)
    b = acl(TOPIC, "t", LITERAL, "User:a", "*", Op.READ, ALLOW)
    store.create([b])

    def fail(path, data):
        raise OSError("disk full")

    monkeypatch.setattr(checkpoint_module, "atomic_write", fail)
    with pytest.raises(OSError):
        store.create([acl(TOPIC, "u", LITERAL, "User:a", "*", Op.READ, ALLOW)])
    with pytest.raises(OSError):
        store.delete([AclBindingFilter.ANY])
    assert store.acls() == [b]


def test_store_operation_size_limits(tmp_path):
    # QuorumController.MAX_RECORDS_PER_USER_OP: createAcls' bounded record list
    # (BoundedListTooLongException -> PolicyViolationException for every binding) and deleteAcls'
    # atomic batch (IllegalStateException -> UnknownServerException, no message, every filter)
    store = AclStore(tmp_path)
    many = [acl(TOPIC, f"t{i}", LITERAL, "User:a", "*", Op.READ, ALLOW)
            for i in range(MAX_RECORDS_PER_USER_OP + 1)]
    out = store.create(many + [acl(RT.ANY, "x", LITERAL, "User:a", "*", Op.READ, ALLOW)])
    assert {(e.error_code, e.message) for e in out} == {
        (44, "Unable to perform excessively large batch operation.")}
    assert store.acls() == []
    assert store.create(many[:-1]) == [None] * MAX_RECORDS_PER_USER_OP
    assert store.create(many) == [None] * len(many)  # only one of them is new
    out = store.delete([AclBindingFilter(TOPIC), AclBindingFilter(RT.UNKNOWN)])
    assert [(e.error_code, e.message, removed) for e, removed in out] == [(-1, None, [])] * 2
    assert len(AclStore(tmp_path).acls()) == len(many)
    [(err, removed)] = store.delete([AclBindingFilter(TOPIC, "t1", PT.ANY)])
    assert err is None and len(removed) == 1


@pytest.mark.parametrize("content", [
    "{",
    "[]",
    '{"version": 2, "acls": []}',
    '{"version": 1}',
    '{"version": 1, "acls": {}}',
    '{"version": 1, "acls": [{"resourceType": "TOPIC"}]}',
    '{"version": 1, "acls": [{"resourceType": "TOPICS", "name": "t", "patternType": "LITERAL",'
    ' "principal": "User:a", "host": "*", "operation": "READ", "permissionType": "ALLOW"}]}',
    '{"version": 1, "acls": [{"resourceType": "TOPIC", "name": 7, "patternType": "LITERAL",'
    ' "principal": "User:a", "host": "*", "operation": "READ", "permissionType": "ALLOW"}]}',
    '{"version": 1, "acls": [{"resourceType": "ANY", "name": "t", "patternType": "LITERAL",'
    ' "principal": "User:a", "host": "*", "operation": "READ", "permissionType": "ALLOW"}]}',
    b"\xff\xfe",
])
def test_store_corrupt_file(tmp_path, content):
    path = tmp_path / AclStore.FILE
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    with pytest.raises(CorruptCheckpointError, match="unreadable ACLs") as e:
        AclStore(tmp_path)
    assert e.value.path is not None and str(path) in str(e.value)
