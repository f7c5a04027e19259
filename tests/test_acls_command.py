"""``kafkalog acls`` (kafkalog.admin.acls_command): Kafka's ``AclCommand`` over a log dir.

Ported from Kafka's ``core/src/test/java/kafka/admin/AclCommandTest.java`` (3.9): the cluster
tests ``testAclCli`` (add, list, remove for every resource type, ALLOW and DENY),
``testProducerConsumerCli`` (``CMD_TO_RESOURCES_TO_ACL``), ``testAclsOnPrefixedResources``,
``testPatternTypes`` run against the log dir's ACL file instead of a cluster (the effect is
read back with :class:`~kafkalog.security.acls.AclStore`, as the Java test waits for the
cluster's ACLs), and the option checks ``testExactlyOneAction``,
``testUseListPrincipalsOptWithoutListOpt``, ``testUseProducerOptWithoutTopicOpt``,
``testUseIdempotentOptWithoutProducerOpt``, ``testUseConsumerOptWithoutRequiredOpt``,
``testInvalidArgs``. Plus: exact output texts, the ``--remove`` confirmation on stdin, errors,
and a round trip with librdkafka's admin client against a real ``kafkalog serve``.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from kafkalog import LogDir
from kafkalog.admin import acls_command
from kafkalog.cli import main as cli_main
from kafkalog.security.acls import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AclStore,
    PatternType,
    ResourceType,
)

A = AclOperation
ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
LITERAL, PREFIXED = PatternType.LITERAL, PatternType.PREFIXED

# AclCommandTest's USERS (one with every special character a DN may hold), HOSTS
PRINCIPAL = "User:test2"
USERS = ["User:CN=writeuser,OU=Unknown,O=Unknown,L=Unknown,ST=Unknown,C=Unknown", PRINCIPAL,
         "User:CN=\\#User with special chars in CN : (\\, \\+ \" \\ \\< \\> \\; ')"]
HOSTS = ["host1", "host2"]

CLUSTER_RESOURCE = (ResourceType.CLUSTER, "kafka-cluster", LITERAL)
TOPIC_RESOURCES = [(ResourceType.TOPIC, "test-1", LITERAL), (ResourceType.TOPIC, "test-2", LITERAL)]
GROUP_RESOURCES = [(ResourceType.GROUP, "testGroup-1", LITERAL),
                   (ResourceType.GROUP, "testGroup-2", LITERAL)]
TRANSACTIONAL_ID_RESOURCES = [(ResourceType.TRANSACTIONAL_ID, "t0", LITERAL),
                              (ResourceType.TRANSACTIONAL_ID, "t1", LITERAL)]
TOKEN_RESOURCES = [(ResourceType.DELEGATION_TOKEN, "token1", LITERAL),
                   (ResourceType.DELEGATION_TOKEN, "token2", LITERAL)]
USER_RESOURCES = [(ResourceType.USER, "User:test-user1", LITERAL),
                  (ResourceType.USER, "User:test-user2", LITERAL)]

# RESOURCE_TO_COMMAND and RESOURCE_TO_OPERATIONS
RESOURCE_CASES = {
    "topic": (TOPIC_RESOURCES, ["--topic", "test-1", "--topic", "test-2"],
              {A.READ: "Read", A.WRITE: "Write", A.CREATE: "Create", A.DESCRIBE: "Describe",
               A.DELETE: "Delete", A.DESCRIBE_CONFIGS: "DescribeConfigs",
               A.ALTER_CONFIGS: "AlterConfigs", A.ALTER: "Alter"}),
    "cluster": ([CLUSTER_RESOURCE], ["--cluster"],
                {A.CREATE: "Create", A.CLUSTER_ACTION: "ClusterAction",
                 A.DESCRIBE_CONFIGS: "DescribeConfigs", A.ALTER_CONFIGS: "AlterConfigs",
                 A.IDEMPOTENT_WRITE: "IdempotentWrite", A.ALTER: "Alter",
                 A.DESCRIBE: "Describe"}),
    "group": (GROUP_RESOURCES, ["--group", "testGroup-1", "--group", "testGroup-2"],
              {A.READ: "Read", A.DESCRIBE: "Describe", A.DELETE: "Delete"}),
    "transactional-id": (TRANSACTIONAL_ID_RESOURCES,
                         ["--transactional-id", "t0", "--transactional-id", "t1"],
                         {A.DESCRIBE: "Describe", A.WRITE: "Write"}),
    "delegation-token": (TOKEN_RESOURCES,
                         ["--delegation-token", "token1", "--delegation-token", "token2"],
                         {A.DESCRIBE: "Describe"}),
    "user-principal": (USER_RESOURCES,
                       ["--user-principal", "User:test-user1", "--user-principal",
                        "User:test-user2"],
                       {A.CREATE_TOKENS: "CreateTokens", A.DESCRIBE_TOKENS: "DescribeTokens"}),
}


@pytest.fixture
def logdir(tmp_path: Path) -> Path:
    root = tmp_path / "logs"
    with LogDir.open(root, node_id=1) as logs:
        logs.create_topic("orders", 1)
    return root


def _run(logdir: Path, *argv: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    rc = acls_command.main([str(logdir), *argv], stdout=out, stderr=err,
                           stdin=io.StringIO(stdin))
    return rc, out.getvalue(), err.getvalue()


def _acls(logdir: Path) -> set[AclBinding]:
    return set(AclStore(logdir).acls())


def _bindings(resources, principals, permission, operations, hosts) -> set[AclBinding]:
    """``AclCommand.getAcls`` on each resource."""
    return {AclBinding(*r, p, h, op, permission)
            for r in resources for p in principals for op in operations for h in hosts}


def _principal_cmd(permission: AclPermissionType) -> list[str]:
    """AclCommandTest.getCmd."""
    flag = "--allow-principal" if permission == ALLOW else "--deny-principal"
    hosts = ["--allow-host" if permission == ALLOW else "--deny-host", "host1",
             "--allow-host" if permission == ALLOW else "--deny-host", "host2"]
    return [arg for user in USERS for arg in (*hosts, flag, user)]


def _assert_output_contains(prefix: str, resources, output: str) -> None:
    """AclCommandTest.assertOutputContains."""
    for rtype, name, _ in resources:
        expected = (f"{prefix} for resource `ResourcePattern(resourceType={rtype.name}, "
                    f"name={name}, patternType=LITERAL)`:")
        assert expected in output, output


def _test_remove(logdir: Path, resources, resource_cmd: list[str]) -> None:
    """AclCommandTest.testRemove."""
    rc, _, err = _run(logdir, *resource_cmd, "--remove", "--force")
    assert (rc, err) == (0, "")
    assert not {b for b in _acls(logdir) if (b.resource_type, b.resource_name,
                                              b.pattern_type) in resources}


# -- testAclCli ---------------------------------------------------------------------------------

@pytest.mark.parametrize("permission", [ALLOW, DENY], ids=["allow", "deny"])
@pytest.mark.parametrize("case", list(RESOURCE_CASES))
def test_acl_cli(logdir: Path, case: str, permission: AclPermissionType) -> None:
    resources, resource_cmd, operations = RESOURCE_CASES[case]
    op_cmd = [a for name in operations.values() for a in ("--operation", name)]
    rc, out, err = _run(logdir, *_principal_cmd(permission), *resource_cmd, *op_cmd, "--add")
    assert (rc, err) == (0, "")
    _assert_output_contains("Adding ACLs", resources, out)
    assert _acls(logdir) == _bindings(resources, USERS, permission, operations, HOSTS)
    rc, out, err = _run(logdir, "--list")
    assert (rc, err) == (0, "")
    _assert_output_contains("Current ACLs", resources, out)
    _test_remove(logdir, resources, resource_cmd)
    assert _acls(logdir) == set()


# -- testProducerConsumerCli --------------------------------------------------------------------

def _producer_resource_to_acls(idempotent: bool) -> dict:
    """AclCommandTest.producerResourceToAcls."""
    out = {tuple(TOPIC_RESOURCES): {A.WRITE, A.DESCRIBE, A.CREATE},
           tuple(TRANSACTIONAL_ID_RESOURCES): {A.WRITE, A.DESCRIBE}}
    if idempotent:
        out[(CLUSTER_RESOURCE,)] = {A.IDEMPOTENT_WRITE}
    return out


_CONSUMER = {tuple(TOPIC_RESOURCES): {A.READ, A.DESCRIBE}, tuple(GROUP_RESOURCES): {A.READ}}


def _merged(idempotent: bool) -> dict:
    out = {k: set(v) for k, v in _CONSUMER.items()}
    for k, v in _producer_resource_to_acls(idempotent).items():
        out[k] = out.get(k, set()) | v
    return out


# CMD_TO_RESOURCES_TO_ACL. For "--producer --consumer" Kafka's map keeps the consumer's
# resources only (topics, groups); here the producer's transactional ids (and, with
# --idempotent, the cluster) are named and checked as well, and every ACL of the dir is compared
CMD_TO_RESOURCES_TO_ACL = {
    ("--producer",): _producer_resource_to_acls(False),
    ("--producer", "--idempotent"): _producer_resource_to_acls(True),
    ("--consumer",): _CONSUMER,
    ("--producer", "--consumer"): _merged(False),
    ("--producer", "--idempotent", "--consumer"): _merged(True),
}
_RESOURCE_CMD = {tuple(resources): cmd for resources, cmd, _ in RESOURCE_CASES.values()}


@pytest.mark.parametrize("cmd", list(CMD_TO_RESOURCES_TO_ACL), ids=" ".join)
def test_producer_consumer_cli(logdir: Path, cmd: tuple[str, ...]) -> None:
    resources_to_acls = CMD_TO_RESOURCES_TO_ACL[cmd]
    # the cluster resource of --idempotent comes from the option itself
    resource_cmd = [a for resources in resources_to_acls if resources != (CLUSTER_RESOURCE,)
                    for a in _RESOURCE_CMD[resources]]
    rc, _, err = _run(logdir, *_principal_cmd(ALLOW), *resource_cmd, *cmd, "--add")
    assert (rc, err) == (0, "")
    expected = set().union(*(_bindings(resources, USERS, ALLOW, ops, HOSTS)
                             for resources, ops in resources_to_acls.items()))
    assert _acls(logdir) == expected
    _test_remove(logdir, [r for rs in resources_to_acls for r in rs], [*resource_cmd, *cmd])
    assert _acls(logdir) == set()


def test_producer_ignores_group_and_consumer_needs_group(logdir: Path) -> None:
    # getProducerResourceFilterToAcls maps topics and transactional ids only
    rc, _, _ = _run(logdir, "--add", "--producer", "--topic", "t", "--group", "g",
                    "--allow-principal", "User:p")
    assert rc == 0
    assert {(b.resource_type, b.operation) for b in _acls(logdir)} == {
        (ResourceType.TOPIC, A.WRITE), (ResourceType.TOPIC, A.DESCRIBE),
        (ResourceType.TOPIC, A.CREATE)}


# -- testAclsOnPrefixedResources ----------------------------------------------------------------

def test_acls_on_prefixed_resources(logdir: Path) -> None:
    cmd = ["--allow-principal", PRINCIPAL, "--producer", "--topic", "Test-",
           "--resource-pattern-type", "Prefixed"]
    rc, _, err = _run(logdir, *cmd, "--add")
    assert (rc, err) == (0, "")
    assert _acls(logdir) == _bindings([(ResourceType.TOPIC, "Test-", PREFIXED)], [PRINCIPAL],
                                      ALLOW, [A.WRITE, A.DESCRIBE, A.CREATE], ["*"])
    rc, _, err = _run(logdir, *cmd, "--remove", "--force")
    assert (rc, err) == (0, "")
    assert _acls(logdir) == set()


# -- testPatternTypes ---------------------------------------------------------------------------

@pytest.mark.parametrize("pattern_type", list(PatternType), ids=lambda p: p.name)
def test_pattern_types(logdir: Path, pattern_type: PatternType) -> None:
    name = pattern_type.name  # PatternType.toString
    add = _run(logdir, "--allow-principal", PRINCIPAL, "--producer", "--topic", "Test", "--add",
               "--resource-pattern-type", name)
    assert (add[0] == 0) == pattern_type.is_specific(), add
    listed = _run(logdir, "--topic", "Test", "--list", "--resource-pattern-type", name)
    assert (listed[0] == 0) == (pattern_type != PatternType.UNKNOWN), listed
    removed = _run(logdir, "--topic", "Test", "--force", "--remove", "--resource-pattern-type",
                   name)
    assert (removed[0] == 0) == (pattern_type != PatternType.UNKNOWN), removed
    if pattern_type in (PatternType.ANY, PatternType.MATCH):
        assert add[:2] == (2, "") and add[2] == (
            f"kafkalog acls: error: A '--resource-pattern-type' value of '{name}' is not valid "
            "when adding acls.\n")
    if pattern_type == PatternType.UNKNOWN:
        assert add == (1, "", "Error while executing ACL command: Cannot parse argument "
                              "'UNKNOWN' of option resource-pattern-type\n"
                              "Unknown resource-pattern-type: UNKNOWN\n")


def test_pattern_type_value_not_known(logdir: Path) -> None:
    assert _run(logdir, "--list", "--resource-pattern-type", "glob") == (
        1, "", "Error while executing ACL command: Cannot parse argument 'glob' of option "
               "resource-pattern-type\nValue [glob] is not one of [ANY|MATCH|LITERAL|PREFIXED]\n")


def test_match_and_any_filters(logdir: Path) -> None:
    for args in (["--topic", "orders"], ["--topic", "ord", "--resource-pattern-type", "prefixed"],
                 ["--topic", "*"], ["--topic", "other"]):
        assert _run(logdir, "--add", "--allow-principal", "User:a", "--operation", "Read",
                    *args)[0] == 0
    names = [line.split("name=")[1].split(",")[0] for line in
             _run(logdir, "--list", "--topic", "orders", "--resource-pattern-type",
                  "match")[1].splitlines() if line.startswith("Current")]
    # the patterns that apply to "orders", in the authorizer's order (names in reverse)
    assert names == ["orders", "ord", "*"]
    names = [line.split("name=")[1].split(",")[0] for line in
             _run(logdir, "--list", "--topic", "ord", "--resource-pattern-type",
                  "any")[1].splitlines() if line.startswith("Current")]
    assert names == ["ord"]
    # remove with MATCH: every pattern that applies
    rc, _, _ = _run(logdir, "--remove", "--force", "--topic", "orders",
                    "--resource-pattern-type", "match")
    assert rc == 0
    assert {b.resource_name for b in _acls(logdir)} == {"other"}


# -- option checks ------------------------------------------------------------------------------

def _usage(logdir: Path, *argv: str) -> str:
    rc, out, err = _run(logdir, *argv)
    assert (rc, out) == (2, "")
    assert err.startswith("kafkalog acls: error: ") and err.endswith("\n")
    return err[len("kafkalog acls: error: "):-1]


def test_exactly_one_action(logdir: Path) -> None:
    msg = "Command must include exactly one action: --list, --add, --remove. "
    assert _usage(logdir, "--add", "--list") == msg
    assert _usage(logdir, "--add", "--list", "--remove") == msg
    assert _usage(logdir) == msg


def test_use_list_principals_opt_without_list_opt(logdir: Path) -> None:
    assert _usage(logdir, "--add", "--principal", "User:CN=client") == (
        "The --principal option is only available if --list is set")


def test_use_producer_opt_without_topic_opt(logdir: Path) -> None:
    assert _usage(logdir, "--add", "--producer") == "With --producer you must specify a --topic"


def test_use_idempotent_opt_without_producer_opt(logdir: Path) -> None:
    assert _usage(logdir, "--add", "--idempotent") == (
        "The --idempotent option is only available if --producer is set")


def test_use_consumer_opt_without_required_opt(logdir: Path) -> None:
    msg = ("With --consumer you must specify a --topic and a --group and no --cluster or "
           "--transactional-id option should be specified.")
    assert _usage(logdir, "--add", "--consumer") == msg
    assert _usage(logdir, "--add", "--consumer", "--topic", "t", "--group", "g",
                  "--cluster") == msg
    assert _usage(logdir, "--add", "--consumer", "--topic", "t", "--group", "g",
                  "--transactional-id", "x") == msg
    # checkNotThrow: the options pass (then no principal: getResourceToAcls' complaint)
    assert _usage(logdir, "--add", "--consumer", "--topic", "test-topic", "--group",
                  "test-group") == ("You must specify one of: --allow-principal, "
                                    "--deny-principal when trying to add ACLs.")


def test_invalid_args(logdir: Path) -> None:
    assert _usage(logdir, "--list", "--producer") == (
        'Option "[list]" can\'t be used with option "[producer]"')
    assert _usage(logdir, "--add", "--producer", "--operation", "Read") == (
        'Option "[producer]" can\'t be used with option "[operation]"')
    assert _usage(logdir, "--add", "--consumer", "--operation", "Read", "--topic", "test-topic",
                  "--group", "test-group") == (
        'Option "[consumer]" can\'t be used with option "[operation]"')
    assert _usage(logdir, "--list", "--allow-principal", "User:a") == (
        'Option "[list]" can\'t be used with option "[allow-principal]"')
    assert _usage(logdir, "--add", "--producer", "--topic", "t", "--deny-host", "h") == (
        'Option "[producer]" can\'t be used with option "[deny-host]"')


def test_add_needs_a_resource_and_a_principal(logdir: Path) -> None:
    assert _usage(logdir, "--add", "--allow-principal", "User:a") == (
        "You must provide at least one resource: --topic <topic> or --cluster or --group "
        "<group> or --delegation-token <Delegation Token ID>")
    assert _usage(logdir, "--add", "--topic", "t") == (
        "You must specify one of: --allow-principal, --deny-principal when trying to add ACLs.")
    # the cluster only counts with the LITERAL pattern type (getResourceFilter)
    assert _usage(logdir, "--add", "--cluster", "--allow-principal", "User:a",
                  "--resource-pattern-type", "prefixed").startswith(
        "You must provide at least one resource")
    assert _acls(logdir) == set()


@pytest.mark.parametrize("args, message", [
    (["--topic", "t", "--operation", "ClusterAction"],
     "ResourceType TOPIC only supports operations Read, All, AlterConfigs, DescribeConfigs, "
     "Delete, Write, Alter, Create, Describe"),
    (["--group", "g", "--operation", "Write"],
     "ResourceType GROUP only supports operations Read, All, AlterConfigs, DescribeConfigs, "
     "Delete, Describe"),
    (["--cluster", "--operation", "Read"],
     "ResourceType CLUSTER only supports operations All, AlterConfigs, DescribeConfigs, "
     "IdempotentWrite, Alter, ClusterAction, Create, Describe"),
    (["--delegation-token", "d", "--operation", "Read"],
     "ResourceType DELEGATION_TOKEN only supports operations Describe, All"),
    (["--transactional-id", "x", "--operation", "Read"],
     "ResourceType TRANSACTIONAL_ID only supports operations Describe, Write, TwoPhaseCommit, "
     "All"),
    # SecurityUtils.operation: "Describe_Configs" is no operation name (UNKNOWN)
    (["--topic", "t", "--operation", "Describe_Configs"],
     "ResourceType TOPIC only supports operations Read, All, AlterConfigs, DescribeConfigs, "
     "Delete, Write, Alter, Create, Describe"),
])
def test_validate_operation(logdir: Path, args: list[str], message: str) -> None:
    for action in ("--add", "--remove"):
        assert _usage(logdir, action, "--allow-principal", "User:a", *args) == message
    assert _acls(logdir) == set()


def test_operation_names_any_case(logdir: Path) -> None:
    rc, _, _ = _run(logdir, "--add", "--allow-principal", "User:a", "--topic", "t",
                    "--operation", " describeconfigs ", "--operation", "ALTERCONFIGS",
                    "--operation", "Read")
    assert rc == 0
    assert {b.operation for b in _acls(logdir)} == {A.DESCRIBE_CONFIGS, A.ALTER_CONFIGS, A.READ}


def test_two_phase_commit_on_a_transactional_id(logdir: Path) -> None:
    """Kafka 4.x (KIP-939): TwoPhaseCommit is an operation, supported on transactional ids."""
    rc, _, err = _run(logdir, "--add", "--allow-principal", "User:a", "--transactional-id",
                      "tx", "--operation", "TwoPhaseCommit")
    assert (rc, err) == (0, "")
    assert {(b.operation, b.resource_type) for b in _acls(logdir)} == {
        (A.TWO_PHASE_COMMIT, ResourceType.TRANSACTIONAL_ID)}


def test_errors_while_executing(logdir: Path) -> None:
    # the AccessControlEntry constructor refuses ANY
    assert _run(logdir, "--add", "--allow-principal", "User:a", "--topic", "t",
                "--operation", "Any") == (
        1, "", "Error while executing ACL command: operation must not be ANY\n")
    # SecurityUtils.parseKafkaPrincipal
    assert _run(logdir, "--add", "--allow-principal", "alice", "--topic", "t") == (
        1, "", "Error while executing ACL command: expected a string in format "
               "principalType:principalName but got alice\n")
    assert _run(logdir, "--list", "--principal", "bob")[2] == (
        "Error while executing ACL command: expected a string in format "
        "principalType:principalName but got bob\n")
    # what the broker refuses (AclApis), as the admin client throws it
    rc, out, err = _run(logdir, "--add", "--allow-principal", "User:a", "--topic", " ")
    assert rc == 1 and out.startswith("Adding ACLs for resource `ResourcePattern("
                                      "resourceType=TOPIC, name=, patternType=LITERAL)`:")
    assert err == ("Error while executing ACL command: org.apache.kafka.common.errors."
                   "InvalidRequestException: Invalid empty resource name\n")
    assert _acls(logdir) == set()


# -- exact output -------------------------------------------------------------------------------

def test_add_and_list_exact_text(logdir: Path) -> None:
    rc, out, err = _run(logdir, "--add", "--allow-principal", "User:alice", "--allow-principal",
                        "User:bob", "--operation", "Write", "--operation", "Read", "--topic",
                        "orders")
    assert (rc, err) == (0, "")
    topic = "ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)"
    group = "ResourcePattern(resourceType=GROUP, name=billing, patternType=LITERAL)"
    topic_acls = (" \n"
                  " \t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)\n"
                  "\t(principal=User:bob, host=*, operation=READ, permissionType=ALLOW)\n"
                  "\t(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW)\n"
                  "\t(principal=User:bob, host=*, operation=WRITE, permissionType=ALLOW) \n\n")
    assert out == f"Adding ACLs for resource `{topic}`:{topic_acls}"   # (3.9: no listing)
    rc, out, err = _run(logdir, "--add", "--allow-principal", "User:alice", "--allow-principal",
                        "User:bob", "--operation", "Read", "--group", "billing")
    group_acls = (" \n"
                  " \t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)\n"
                  "\t(principal=User:bob, host=*, operation=READ, permissionType=ALLOW) \n\n")
    assert (rc, err) == (0, "")
    assert out == f"Adding ACLs for resource `{group}`:{group_acls}"
    rc, out, err = _run(logdir, "--add", "--deny-principal", "User:eve", "--deny-host",
                        "10.0.0.1", "--topic", "orders", "--operation", "Describe")
    assert (rc, err) == (0, "")
    rc, out, err = _run(logdir, "--list")
    assert (rc, err) == (0, "")
    assert out == (
        f"Current ACLs for resource `{topic}`: \n"
        " \t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)\n"
        "\t(principal=User:bob, host=*, operation=READ, permissionType=ALLOW)\n"
        "\t(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW)\n"
        "\t(principal=User:bob, host=*, operation=WRITE, permissionType=ALLOW)\n"
        "\t(principal=User:eve, host=10.0.0.1, operation=DESCRIBE, permissionType=DENY) \n\n"
        f"Current ACLs for resource `{group}`: \n"
        " \t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)\n"
        "\t(principal=User:bob, host=*, operation=READ, permissionType=ALLOW) \n\n")
    rc, out, err = _run(logdir, "--list", "--principal", "User:bob", "--principal", "User:eve")
    assert out == (
        "ACLs for principal `User:bob`\n"
        f"Current ACLs for resource `{topic}`: \n"
        " \t(principal=User:bob, host=*, operation=READ, permissionType=ALLOW)\n"
        "\t(principal=User:bob, host=*, operation=WRITE, permissionType=ALLOW) \n\n"
        f"Current ACLs for resource `{group}`: \n"
        " \t(principal=User:bob, host=*, operation=READ, permissionType=ALLOW) \n\n"
        "ACLs for principal `User:eve`\n"
        f"Current ACLs for resource `{topic}`: \n"
        " \t(principal=User:eve, host=10.0.0.1, operation=DESCRIBE, permissionType=DENY) \n\n")
    # a resource named: its ACLs only; none: nothing
    assert _run(logdir, "--list", "--group", "billing")[1].count("Current ACLs") == 1
    assert _run(logdir, "--list", "--group", "nothing") == (0, "", "")


def test_list_of_a_dir_without_acls(logdir: Path) -> None:
    assert _run(logdir, "--list") == (0, "", "")
    assert not (logdir / AclStore.FILE).exists()


def test_dispatched_by_the_cli(logdir: Path, capsys) -> None:
    assert cli_main(["acls", str(logdir), "--add", "--allow-principal", "User:a", "--topic",
                     "t", "--operation", "Read"]) == 0
    assert cli_main(["acls", str(logdir), "--list"]) == 0
    out = capsys.readouterr().out
    assert out.count("ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)") == 2
    assert cli_main(["acls", str(logdir), "--bootstrap-server", "localhost:9092", "--list"]) == 2
    assert "unrecognized arguments: --bootstrap-server" in capsys.readouterr().err


# -- --remove and its confirmation --------------------------------------------------------------

@pytest.fixture
def with_acls(logdir: Path) -> Path:
    for principal in ("User:alice", "User:bob"):
        assert _run(logdir, "--add", "--allow-principal", principal, "--operation", "Read",
                    "--topic", "orders")[0] == 0
    return logdir


def test_remove_asks_and_no_keeps(with_acls: Path) -> None:
    before = _acls(with_acls)
    rc, out, err = _run(with_acls, "--remove", "--allow-principal", "User:alice",
                        "--operation", "Read", "--topic", "orders", stdin="n\n")
    assert (rc, err) == (0, "")
    topic = "ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)"
    assert out == (
        "Are you sure you want to remove ACLs: \n"
        " \t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW) \n"
        f" from resource filter `{topic}`? (y/n)\n")
    assert _acls(with_acls) == before


def test_remove_asks_and_yes_removes(with_acls: Path) -> None:
    rc, out, err = _run(with_acls, "--remove", "--allow-principal", "User:alice",
                        "--operation", "Read", "--topic", "orders", stdin="Y\n")
    assert (rc, err) == (0, "")
    assert {b.principal for b in _acls(with_acls)} == {"User:bob"}
    # no principal: every ACL of the resource, after its own question
    rc, out, err = _run(with_acls, "--remove", "--topic", "orders", stdin="y\n")
    assert (rc, err) == (0, "")
    assert out == ("Are you sure you want to delete all ACLs for resource filter "
                   "`ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)`? "
                   "(y/n)\n")
    assert _acls(with_acls) == set()


def test_remove_one_question_per_resource(with_acls: Path) -> None:
    assert _run(with_acls, "--add", "--allow-principal", "User:alice", "--group", "g")[0] == 0
    rc, out, _ = _run(with_acls, "--remove", "--topic", "orders", "--group", "g",
                      stdin="n\ny\n")
    assert rc == 0 and out.count("? (y/n)\n") == 2
    assert {b.resource_type for b in _acls(with_acls)} == {ResourceType.TOPIC}


def test_remove_force_does_not_ask(with_acls: Path) -> None:
    rc, out, err = _run(with_acls, "--remove", "--force", "--topic", "orders")
    assert (rc, out, err) == (0, "", "")
    assert _acls(with_acls) == set()


def test_remove_without_an_answer(with_acls: Path) -> None:
    rc, out, err = _run(with_acls, "--remove", "--topic", "orders", stdin="")
    assert rc == 1 and out.startswith("Are you sure")
    assert err == ("Error while executing ACL command: no answer on stdin to the confirmation "
                   "question (use --force)\n")
    assert len(_acls(with_acls)) == 2


# -- the log dir --------------------------------------------------------------------------------

def test_corrupt_acl_file(logdir: Path) -> None:
    path = logdir / AclStore.FILE
    path.write_text('{"version": 1, "acls": [{"resourceType": "TOPIC"}]}')
    for argv in (["--list"], ["--add", "--allow-principal", "User:a", "--topic", "t"]):
        rc, out, err = _run(logdir, *argv)
        assert (rc, out) == (1, "")
        assert err.startswith(f"Error while executing ACL command: {path}: unreadable ACLs (")
    path.write_text("{")
    assert str(path) in _run(logdir, "--list")[2]


def test_missing_dir_and_locked_dir(logdir: Path, tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    assert _run(missing, "--list") == (1, "", f"kafkalog acls: {missing}: no such log "
                                              "directory\n")
    assert not missing.exists()
    with LogDir.open(logdir):      # a writer (a broker) holds the dir
        rc, out, err = _run(logdir, "--add", "--allow-principal", "User:a", "--topic", "t")
        assert (rc, out) == (1, "") and "the log directory is in use" in err
        assert _run(logdir, "--list") == (0, "", "")   # reading takes no lock
    assert _acls(logdir) == set()


def test_file_format_is_the_store(logdir: Path) -> None:
    assert _run(logdir, "--add", "--allow-principal", "User:a", "--topic", "t", "--operation",
                "Read", "--resource-pattern-type", "PREFIXED")[0] == 0
    doc = json.loads((logdir / AclStore.FILE).read_text())
    assert doc == {"version": 1, "acls": [
        {"resourceType": "TOPIC", "name": "t", "patternType": "PREFIXED", "principal": "User:a",
         "host": "*", "operation": "READ", "permissionType": "ALLOW"}]}


# -- a peer we did not write: librdkafka's admin client and a real kafkalog serve ---------------

def test_round_trip_with_confluent_kafka_admin_client(tmp_path: Path) -> None:
    try:
        import confluent_kafka  # noqa: F401
    except ImportError as e:
        pytest.skip(f"confluent-kafka cannot be imported: {e}")
    # imported here: those modules skip themselves without kio / confluent-kafka
    from confluent_kafka.admin import (
        AclBinding as CkBinding,
    )
    from confluent_kafka.admin import (
        AclBindingFilter as CkFilter,
    )
    from confluent_kafka.admin import (
        AclOperation as CkOp,
    )
    from confluent_kafka.admin import (
        AclPermissionType as CkPerm,
    )
    from confluent_kafka.admin import (
        AdminClient,
        ResourcePatternType,
    )
    from confluent_kafka.admin import (
        ResourceType as CkType,
    )

    from tests.server.test_acls import _conf, _server

    logdir = tmp_path / "logs"       # the dir tests/server/test_acls.py's _server serves
    logdir.mkdir()
    rc, _, err = _run(logdir, "--add", "--allow-principal", "User:alice", "--operation", "Write",
                      "--topic", "orders", "--deny-principal", "User:bob")
    assert (rc, err) == (0, "")
    rc, _, err = _run(logdir, "--add", "--consumer", "--allow-principal", "User:bob", "--topic",
                      "bob-", "--group", "bob-", "--resource-pattern-type", "prefixed")
    assert (rc, err) == (0, "")
    server = _server(tmp_path)
    try:
        admin = AdminClient(_conf(server, "admin"))
        described = admin.describe_acls(CkFilter(
            CkType.ANY, None, ResourcePatternType.ANY, None, None, CkOp.ANY,
            CkPerm.ANY)).result(30)
        assert sorted((b.restype.name, b.name, b.resource_pattern_type.name, b.principal,
                       b.host, b.operation.name, b.permission_type.name)
                      for b in described) == sorted([
            ("TOPIC", "orders", "LITERAL", "User:alice", "*", "WRITE", "ALLOW"),
            ("TOPIC", "orders", "LITERAL", "User:bob", "*", "WRITE", "DENY"),
            ("TOPIC", "bob-", "PREFIXED", "User:bob", "*", "READ", "ALLOW"),
            ("TOPIC", "bob-", "PREFIXED", "User:bob", "*", "DESCRIBE", "ALLOW"),
            ("GROUP", "bob-", "PREFIXED", "User:bob", "*", "READ", "ALLOW")])
        for f in admin.create_acls([
                CkBinding(CkType.GROUP, "billing", ResourcePatternType.LITERAL, "User:carol",
                          "10.0.0.7", CkOp.DESCRIBE, CkPerm.ALLOW),
                CkBinding(CkType.TRANSACTIONAL_ID, "tx-", ResourcePatternType.PREFIXED,
                          "User:alice", "*", CkOp.WRITE, CkPerm.ALLOW)]).values():
            f.result(30)
        # read while the server runs (--list takes no lock)
        rc, out, err = _run(logdir, "--list", "--group", "billing", "--transactional-id", "tx-",
                            "--resource-pattern-type", "any")
        assert (rc, err) == (0, "")
        assert out == (
            "Current ACLs for resource `ResourcePattern(resourceType=GROUP, name=billing, "
            "patternType=LITERAL)`: \n"
            " \t(principal=User:carol, host=10.0.0.7, operation=DESCRIBE, "
            "permissionType=ALLOW) \n\n"
            "Current ACLs for resource `ResourcePattern(resourceType=TRANSACTIONAL_ID, "
            "name=tx-, patternType=PREFIXED)`: \n"
            " \t(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW) \n\n")
        # and writing is refused while the server holds the dir
        rc, _, err = _run(logdir, "--remove", "--force", "--topic", "orders")
        assert rc == 1 and "the log directory is in use" in err
    finally:
        server.stop()
    # after the server: the whole listing has both sides' ACLs
    rc, out, _ = _run(logdir, "--list")
    assert rc == 0 and out.count("Current ACLs for resource") == 5
    assert _run(logdir, "--remove", "--force", "--topic", "orders")[0] == 0
    assert len(_acls(logdir)) == 5


def test_kafka_operation_names_in_help(capsys) -> None:
    with pytest.raises(SystemExit):
        acls_command.build_parser().parse_args(["--help"])
    helptext = capsys.readouterr().out
    for name in ("Read", "ClusterAction", "IdempotentWrite", "CreateTokens", "DescribeTokens",
                 "All"):
        assert name in helptext
