r"""``kafkalog acls``: Kafka's ``kafka-acls.sh`` (``AclCommand``) over a log dir, offline.

Source: ``core/src/main/scala/kafka/admin/AclCommand.scala`` (Kafka 3.9): the options, the
checks of ``AclCommandOptions.checkArgs`` and of the ACL builders (``getResourceToAcls``,
``getResourceFilterToAcls``, ``getProducerResourceFilterToAcls``,
``getConsumerResourceFilterToAcls``, ``getAcl``, ``getHosts``, ``getPrincipals``,
``getResourceFilter``, ``validateOperation``, ``confirmAction``) and the texts;
``SecurityUtils.operation``/``parseKafkaPrincipal``, ``AclEntry.supportedOperations`` and the
``toString`` of ``ResourcePattern``, ``ResourcePatternFilter`` and ``AccessControlEntryData``.
The ACLs are the log dir's :class:`~kafkalog.security.acls.AclStore`
(``.kafkalog-acls.json`` at its root), the ones ``kafkalog serve`` enforces and serves through
CreateAcls/DescribeAcls/DeleteAcls; what the broker and the controller check on the way
(``AclApis``: :func:`~kafkalog.security.acls.validate_acl_creation`; ``AclControlManager``)
is checked here too.

=====================================================================  =======================
``kafkalog acls LOGDIR --add --allow-principal User:a --topic T``      ALLOW every operation
                                                                       (``--operation``
                                                                       repeatable, default
                                                                       All)
``... --add --deny-principal User:b --deny-host 10.0.0.1 ...``         DENY (hosts default
                                                                       ``*``)
``... --add --producer --topic T [--transactional-id X] [--idempotent]``  the producer's ACLs
``... --add --consumer --topic T --group G``                           the consumer's ACLs
``... --remove [--force] --topic T [...]``                             remove the ACLs named
                                                                       (all of the resource
                                                                       without a principal)
``... --list [--topic T ...] [--principal User:a]``                    list ACLs
=====================================================================  =======================

Resources: ``--topic``, ``--group``, ``--cluster``, ``--transactional-id``,
``--delegation-token``, ``--user-principal`` (each repeatable but ``--cluster``), with
``--resource-pattern-type`` ``literal`` (the default), ``prefixed`` or, to list or remove,
``any`` (any pattern type, name compared as is) or ``match`` (every pattern that applies to the
named resource). Operations are Kafka's names (``Read``, ``Write``, ``Create``, ``Delete``,
``Alter``, ``Describe``, ``ClusterAction``, ``DescribeConfigs``, ``AlterConfigs``,
``IdempotentWrite``, ``CreateTokens``, ``DescribeTokens``, ``All``; any case, no underscores).
As in Kafka, ``--cluster`` only counts with the LITERAL pattern type, a transactional id is not
trimmed (the other names are), ``--producer`` gives WRITE, DESCRIBE and CREATE on the topics,
WRITE and DESCRIBE on the transactional ids and, with ``--idempotent``, IDEMPOTENT_WRITE on the
cluster; ``--consumer`` READ and DESCRIBE on the topics and READ on the groups.

Output is Kafka's (``println`` of ``ResourcePattern``/``AccessControlEntry``), e.g.::

    "Adding ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders, "
    "patternType=LITERAL)`: \n \t(principal=User:alice, host=*, operation=READ, "
    "permissionType=ALLOW) \n\n"

and the same with "Current ACLs for resource" for each resource pattern listed (one ``\t``
line per ACL, the lines joined with ``\n``). ``--remove`` asks "Are you sure you want to remove
ACLs: ... from resource filter `...`? (y/n)" (or "... delete all ACLs for resource filter
`...`? (y/n)" without a principal) once per resource on stdout and reads the answer from stdin
(``y`` or ``Y`` removes); ``--force`` does not ask. ``--list`` prints the ACLs grouped per
resource pattern; ``--principal`` (repeatable) prints "ACLs for principal `P`" and that
principal's ACLs only.

Differences from Kafka, all because Kafka's order is a hash order that changes from run to
run: ACLs, and resource patterns in ``--list``, are printed in the order Kafka's authorizer
keeps them (``StandardAcl.compareTo``: :func:`~kafkalog.security.acls.kafka_order_key`);
resources to add or remove in the order of the options (topics, cluster, groups, transactional
ids, delegation tokens, users); the operations of "ResourceType X only supports operations
..." in Scala 2.13's ``HashSet`` order where Kafka's is fixed (TOPIC, GROUP, CLUSTER: the
order Kafka prints), else in ``AclEntry.supportedOperations``' order then ``All``. After
``--add`` and ``--remove`` the current ACLs of the resources named are listed, as Kafka up to
3.8 does (3.9 stopped, KAFKA-15713). Usage errors print "kafkalog acls: error: <Kafka's text>"
and exit 2 (Kafka: its text, the help, exit 1); "Error while executing ACL command: ..." goes
to stderr with the reason in place of the stack trace, exit 1 (Kafka: stdout); an empty stdin
at the ``--remove`` question fails the same way (Kafka fails on the null answer).

``--add``/``--remove`` open the dir for writing, which takes its ``.lock``: a dir a running
``kafkalog serve`` (or broker) holds is refused, so the ACL file is never changed behind a
server's back (change a running server's ACLs with an admin client). ``--list`` takes no lock.
``--bootstrap-server``, ``--bootstrap-controller`` and ``--command-config`` do not exist
offline (the log dir is the first argument), as in the other ``kafkalog`` admin commands.

Example
-------
>>> import tempfile
>>> d = tempfile.mkdtemp()
>>> main([d, "--add", "--allow-principal", "User:alice", "--operation", "Read",
...       "--topic", "orders"])  # doctest: +NORMALIZE_WHITESPACE
Adding ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)`:
    (principal=User:alice, host=*, operation=READ, permissionType=ALLOW)
<BLANKLINE>
0
>>> main([d, "--list"])  # doctest: +NORMALIZE_WHITESPACE
Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)`:
    (principal=User:alice, host=*, operation=READ, permissionType=ALLOW)
<BLANKLINE>
0
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Sequence
from typing import IO

from ..errors import KafkaLogError
from ..security.acls import (
    CLUSTER_NAME,
    WILDCARD,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AclStore,
    AclValidationError,
    PatternType,
    ResourceType,
    kafka_order_key,
    supported_operations,
    validate_acl_creation,
)
from ..usage import ArgumentParser, UsageError, parse_args
from . import EXIT_ERROR, EXIT_OK, EXIT_USAGE, open_error_text, open_log_dir

__all__ = ["main", "build_parser", "operation_name", "parse_operation", "pattern_text",
           "entry_text"]

_PROG = "kafkalog acls"

#: a resource pattern or filter: (resource type, name, pattern type)
Pattern = tuple[ResourceType, str, PatternType]
#: an access-control entry: (principal, host, operation, permission type)
Entry = tuple[str, str, AclOperation, AclPermissionType]

_CLUSTER: Pattern = (ResourceType.CLUSTER, CLUSTER_NAME, PatternType.LITERAL)

#: ``validateOperation``'s list (Kafka prints ``(supportedOperations + ALL).map(operationName)``,
#: a Scala 2.13 immutable HashSet for 5 elements or more: this is its iteration order, computed
#: with scala-library 2.13; the smaller sets iterate in a Java HashSet's order of enum constants,
#: which changes from run to run: declaration order here)
_VALID_OPERATIONS_TEXT = {
    ResourceType.TOPIC: "Read, All, AlterConfigs, DescribeConfigs, Delete, Write, Alter, Create, "
                        "Describe",
    ResourceType.GROUP: "Read, All, AlterConfigs, DescribeConfigs, Delete, Describe",
    ResourceType.CLUSTER: "All, AlterConfigs, DescribeConfigs, IdempotentWrite, Alter, "
                          "ClusterAction, Create, Describe",
    ResourceType.TRANSACTIONAL_ID: "Describe, Write, TwoPhaseCommit, All",
    ResourceType.DELEGATION_TOKEN: "Describe, All",
    ResourceType.USER: "CreateTokens, DescribeTokens, All",
}

#: the names ``--operation`` accepts (``AclEntry.ACL_OPERATIONS``, Kafka's help)
_ACL_OPERATIONS = [op for op in AclOperation if op not in (AclOperation.UNKNOWN, AclOperation.ANY)]


class _Failed(Exception):
    """What Kafka's main reports as "Error while executing ACL command: <message>"."""

    def __init__(self, message: str, cause: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        #: the cause Kafka's stack trace would show, or None
        self.cause = cause


def operation_name(op: AclOperation) -> str:
    """``SecurityUtils.operationName``: the Pascal-case name (``DESCRIBE_CONFIGS`` ->
    ``DescribeConfigs``)."""
    return "".join(part.capitalize() for part in op.name.split("_"))


def parse_operation(text: str) -> AclOperation:
    """``SecurityUtils.operation``: the Pascal-case name, or it upper-cased (so any case without
    underscores); anything else is UNKNOWN.

    >>> parse_operation("describeConfigs").name, parse_operation("DESCRIBE_CONFIGS").name
    ('DESCRIBE_CONFIGS', 'UNKNOWN')
    """
    for op in AclOperation:
        name = operation_name(op)
        if text in (name, name.upper()) or text.upper() == name.upper():
            return op
    return AclOperation.UNKNOWN


def pattern_text(p: Pattern) -> str:
    """``ResourcePattern.toString`` (``ResourcePatternFilter``'s is the same for a name)."""
    return f"ResourcePattern(resourceType={p[0].name}, name={p[1]}, patternType={p[2].name})"


def entry_text(e: Entry) -> str:
    """``AccessControlEntryData.toString``."""
    return f"(principal={e[0]}, host={e[1]}, operation={e[2].name}, permissionType={e[3].name})"


def _acls_text(entries: Iterable[Entry]) -> str:
    # s"...: $Newline ${acls.map("\t" + _).mkString(Newline)} $Newline" then println
    return " \n " + "\n".join("\t" + entry_text(e) for e in entries) + " \n\n"


def _pattern_type(text: str) -> PatternType:
    """``PatternTypeConverter``: joptsimple's case-insensitive enum conversion, UNKNOWN refused.
    (Kafka converts when the value is first read, as an error of the command.)"""
    for pt in PatternType:
        if pt.name.lower() == text.lower():
            if pt == PatternType.UNKNOWN:
                raise _Failed(f"Cannot parse argument '{text}' of option resource-pattern-type",
                              f"Unknown resource-pattern-type: {text}")
            return pt
    raise _Failed(f"Cannot parse argument '{text}' of option resource-pattern-type",
                  f"Value [{text}] is not one of [ANY|MATCH|LITERAL|PREFIXED]")


def build_parser() -> argparse.ArgumentParser:
    """The ``kafkalog acls`` argument parser (Kafka's options, the log dir first)."""
    p = ArgumentParser(prog=_PROG, description="This tool helps to manage acls on kafka (of a "
                                               "log directory, offline: kafka-acls.sh).")
    p.add_argument("log_dir", help="a broker log directory (log.dirs entry)")
    p.add_argument("--add", action="store_true", help="Indicates you are trying to add ACLs.")
    p.add_argument("--remove", action="store_true",
                   help="Indicates you are trying to remove ACLs.")
    p.add_argument("--list", action="store_true",
                   help="List ACLs for the specified resource, use --topic <topic> or --group "
                        "<group> or --cluster to specify a resource.")
    p.add_argument("--topic", action="append", metavar="topic",
                   help="topic to which ACLs should be added or removed. A value of '*' "
                        "indicates ACL should apply to all topics.")
    p.add_argument("--cluster", action="store_true", help="Add/Remove cluster ACLs.")
    p.add_argument("--group", action="append", metavar="group",
                   help="Consumer Group to which the ACLs should be added or removed. A value "
                        "of '*' indicates the ACLs should apply to all groups.")
    p.add_argument("--transactional-id", action="append", metavar="transactional-id",
                   help="The transactionalId to which ACLs should be added or removed. A value "
                        "of '*' indicates the ACLs should apply to all transactionalIds.")
    p.add_argument("--idempotent", action="store_true",
                   help="Enable idempotence for the producer. This should be used in "
                        "combination with the --producer option.")
    p.add_argument("--delegation-token", action="append", metavar="delegation-token",
                   help="Delegation token to which ACLs should be added or removed. A value of "
                        "'*' indicates ACL should apply to all tokens.")
    p.add_argument("--user-principal", action="append", metavar="user-principal",
                   help="Specifies a user principal as a resource in relation with the "
                        "operation.")
    p.add_argument("--resource-pattern-type", metavar="ANY|MATCH|LITERAL|PREFIXED",
                   help="The type of the resource pattern or pattern filter (default literal). "
                        "When adding acls, 'literal' or 'prefixed'; when listing or removing, "
                        "also 'any' (any pattern type, the name matched exactly) or 'match' "
                        "(every pattern that affects the supplied resource(s)).")
    p.add_argument("--operation", action="append", metavar="operation",
                   help="Operation that is being allowed or denied (default All). Valid "
                        "operation names are: "
                        + ", ".join(operation_name(op) for op in _ACL_OPERATIONS))
    p.add_argument("--allow-principal", action="append", metavar="allow-principal",
                   help="principal is in principalType:name format. For example, User:'*' is "
                        "the wild card indicating all users.")
    p.add_argument("--deny-principal", action="append", metavar="deny-principal",
                   help="principal is in principalType:name format. DENY RULES TAKE "
                        "PRECEDENCE OVER ALLOW RULES.")
    p.add_argument("--principal", action="append", nargs="?", metavar="principal",
                   help="List ACLs for the specified principal (repeatable, with --list).")
    p.add_argument("--allow-host", action="append", metavar="allow-host",
                   help="Host from which principals listed in --allow-principal will have "
                        "access (default '*' with --allow-principal).")
    p.add_argument("--deny-host", action="append", metavar="deny-host",
                   help="Host from which principals listed in --deny-principal will be denied "
                        "access (default '*' with --deny-principal).")
    p.add_argument("--producer", action="store_true",
                   help="Convenience option to add/remove ACLs for producer role. This will "
                        "generate ACLs that allows WRITE,DESCRIBE and CREATE on topic.")
    p.add_argument("--consumer", action="store_true",
                   help="Convenience option to add/remove ACLs for consumer role. This will "
                        "generate ACLs that allows READ,DESCRIBE on topic and READ on group.")
    p.add_argument("--force", action="store_true",
                   help="Assume Yes to all queries and do not prompt.")
    return p


def _has(args: argparse.Namespace, option: str) -> bool:
    value = getattr(args, option.replace("-", "_"))
    return value not in (None, False)


def _check_args(args: argparse.Namespace) -> str:
    """``AclCommandOptions.checkArgs`` (Kafka's texts, in its order); returns the action."""
    actions = [a for a in ("add", "remove", "list") if getattr(args, a)]
    if len(actions) != 1:
        raise UsageError("Command must include exactly one action: --list, --add, --remove. ")
    for used, invalid in (("list", ("producer", "consumer", "allow-host", "allow-principal",
                                    "deny-host", "deny-principal")),
                          ("producer", ("operation", "deny-principal", "deny-host")),
                          ("consumer", ("operation", "deny-principal", "deny-host"))):
        if _has(args, used):
            for option in invalid:
                if _has(args, option):
                    raise UsageError(f'Option "[{used}]" can\'t be used with option '
                                     f'"[{option}]"')
    if args.principal is not None and not args.list:
        raise UsageError("The --principal option is only available if --list is set")
    if args.producer and not args.topic:
        raise UsageError("With --producer you must specify a --topic")
    if args.idempotent and not args.producer:
        raise UsageError("The --idempotent option is only available if --producer is set")
    if args.consumer and (not args.topic or not args.group or (
            not args.producer and (args.cluster or args.transactional_id))):
        raise UsageError("With --consumer you must specify a --topic and a --group and no "
                         "--cluster or --transactional-id option should be specified.")
    return actions[0]


# -- building the ACLs (AclCommand's object methods) -------------------------------------------

def _principals(values: Sequence[str | None] | None) -> list[str]:
    """``getPrincipals``: each trimmed and parsed as ``Type:name`` (``parseKafkaPrincipal``)."""
    out: dict[str, None] = {}
    for value in values or ():
        if value is None:      # --principal without a value (joptsimple's optional argument)
            continue
        s = value.strip()
        if ":" not in s:
            raise _Failed("expected a string in format principalType:principalName but got "
                          f"{s}")
        out[s] = None
    return list(out)


def _hosts(hosts: Sequence[str] | None, principals: Sequence[str] | None) -> list[str]:
    """``getHosts``: the hosts given (trimmed), else ``*`` when principals are given."""
    if hosts:
        return list(dict.fromkeys(h.strip() for h in hosts))
    return [WILDCARD] if principals else []


def _entries(args: argparse.Namespace, operations: Sequence[AclOperation]) -> list[Entry]:
    """``getAcl(opts, operations)``: every allowed principal from every allowed host, then every
    denied principal from every denied host, for each operation (``getAcls``)."""
    allowed = _principals(args.allow_principal)
    denied = _principals(args.deny_principal)
    allow_hosts = _hosts(args.allow_host, args.allow_principal)
    deny_hosts = _hosts(args.deny_host, args.deny_principal)
    out: dict[Entry, None] = {}
    for principals, permission, hosts in ((allowed, AclPermissionType.ALLOW, allow_hosts),
                                          (denied, AclPermissionType.DENY, deny_hosts)):
        if not (principals and hosts):
            continue
        for principal in principals:
            for op in operations:
                if op == AclOperation.ANY:   # the AccessControlEntry constructor
                    raise _Failed("operation must not be ANY")
                for host in hosts:
                    out[(principal, host, op, permission)] = None
    return list(out)


def _cli_operations(args: argparse.Namespace) -> list[AclOperation]:
    return list(dict.fromkeys(parse_operation(o.strip()) for o in (args.operation or ["All"])))


def _resource_filters(args: argparse.Namespace, pattern_type: PatternType,
                      die_if_none: bool = True) -> list[Pattern]:
    """``getResourceFilter``: the resources named, with the pattern type (the cluster only with
    LITERAL; a transactional id is not trimmed, as in Kafka)."""
    out: dict[Pattern, None] = {}
    for topic in args.topic or ():
        out[(ResourceType.TOPIC, topic.strip(), pattern_type)] = None
    if pattern_type == PatternType.LITERAL and (args.cluster or args.idempotent):
        out[_CLUSTER] = None
    for group in args.group or ():
        out[(ResourceType.GROUP, group.strip(), pattern_type)] = None
    for tid in args.transactional_id or ():
        out[(ResourceType.TRANSACTIONAL_ID, tid, pattern_type)] = None
    for token in args.delegation_token or ():
        out[(ResourceType.DELEGATION_TOKEN, token.strip(), pattern_type)] = None
    for user in args.user_principal or ():
        out[(ResourceType.USER, user.strip(), pattern_type)] = None
    if not out and die_if_none:
        raise UsageError("You must provide at least one resource: --topic <topic> or --cluster "
                         "or --group <group> or --delegation-token <Delegation Token ID>")
    return list(out)


def _filter_to_acls(args: argparse.Namespace, pattern_type: PatternType
                    ) -> dict[Pattern, list[Entry]]:
    """``getResourceFilterToAcls``: the command's resources and their ACLs (the CLI's, or the
    producer's and consumer's), operations checked (``validateOperation``)."""
    out: dict[Pattern, list[Entry]] = {}
    if not args.producer and not args.consumer:
        acls = _entries(args, _cli_operations(args))
        for f in _resource_filters(args, pattern_type):
            out[f] = acls
    if args.producer:
        filters = _resource_filters(args, pattern_type)
        topic_acls = _entries(args, [AclOperation.WRITE, AclOperation.DESCRIBE,
                                     AclOperation.CREATE])
        tid_acls = _entries(args, [AclOperation.WRITE, AclOperation.DESCRIBE])
        for f in filters:
            if f[0] == ResourceType.TOPIC:
                out[f] = topic_acls
        for f in filters:
            if f[0] == ResourceType.TRANSACTIONAL_ID:
                out[f] = tid_acls
        if args.idempotent:
            out[_CLUSTER] = _entries(args, [AclOperation.IDEMPOTENT_WRITE])
    if args.consumer:
        filters = _resource_filters(args, pattern_type)
        topic_acls = _entries(args, [AclOperation.READ, AclOperation.DESCRIBE])
        group_acls = _entries(args, [AclOperation.READ])
        for f in filters:
            if f[0] == ResourceType.TOPIC:
                out[f] = list(dict.fromkeys([*topic_acls, *out.get(f, [])]))
        for f in filters:
            if f[0] == ResourceType.GROUP:
                out[f] = group_acls
    for f, acls in out.items():      # validateOperation
        valid = supported_operations(f[0]) | {AclOperation.ALL}
        if any(e[2] not in valid for e in acls):
            raise UsageError(f"ResourceType {f[0].name} only supports operations "
                             f"{_VALID_OPERATIONS_TEXT[f[0]]}")
    return out


def _sorted_entries(pattern: Pattern, entries: Iterable[Entry]) -> list[Entry]:
    """The entries in Kafka's authorizer order (StandardAcl.compareTo)."""
    return sorted(entries, key=lambda e: kafka_order_key(AclBinding(*pattern, *e)))


# -- the actions ------------------------------------------------------------------------------

def _refused(error: AclValidationError) -> _Failed:
    """A broker's refusal as the admin client's ``all().get()`` throws it (the
    ExecutionException's message: the ApiException's class and message)."""
    exception = {42: "InvalidRequestException", 44: "PolicyViolationException"}.get(
        error.error_code, "UnknownServerException")
    message = error.message
    if message is None:
        message = "The server experienced an unexpected error when processing the request."
    return _Failed(f"org.apache.kafka.common.errors.{exception}: {message}")


def _add(store: AclStore, args: argparse.Namespace, pattern_type: PatternType,
         out: IO[str]) -> None:
    """``addAcls`` (``getResourceToAcls``), then the current ACLs of the resources."""
    if not pattern_type.is_specific():
        raise UsageError(f"A '--resource-pattern-type' value of '{pattern_type.name}' is not "
                         "valid when adding acls.")
    resource_to_acls = _filter_to_acls(args, pattern_type)
    if any(not acls for acls in resource_to_acls.values()):
        raise UsageError("You must specify one of: --allow-principal, --deny-principal when "
                         "trying to add ACLs.")
    for pattern, acls in resource_to_acls.items():
        entries = _sorted_entries(pattern, acls)
        out.write(f"Adding ACLs for resource `{pattern_text(pattern)}`:{_acls_text(entries)}")
        out.flush()
        bindings = [AclBinding(*pattern, *e) for e in entries]
        for b in bindings:     # AclApis.handleCreateAcls, before the controller
            try:
                validate_acl_creation(b)
            except AclValidationError as e:
                raise _refused(e) from None
        for result in store.create(bindings):
            if result is not None:
                raise _refused(result)
    # (Kafka <= 3.8 listed the resources' ACLs after adding or removing; 3.9 dropped it,
    # KAFKA-15713: a KRaft cluster may not show them yet)


def _confirm(args: argparse.Namespace, message: str, out: IO[str], stdin: IO[str]) -> bool:
    """``confirmAction``: yes with --force, else the answer read from stdin is ``y`` (any
    case)."""
    if args.force:
        return True
    out.write(message + "\n")
    out.flush()
    line = stdin.readline()
    if line == "":
        raise _Failed("no answer on stdin to the confirmation question (use --force)")
    return line.rstrip("\r\n").lower() == "y"


def _remove(store: AclStore, args: argparse.Namespace, pattern_type: PatternType,
            out: IO[str], stdin: IO[str]) -> None:
    """``removeAcls``: per resource filter, its ACLs (all of them when none are named), after
    the confirmation."""
    for pattern, acls in _filter_to_acls(args, pattern_type).items():
        rtype, name, ptype = pattern
        if not acls:
            question = ("Are you sure you want to delete all ACLs for resource filter "
                        f"`{pattern_text(pattern)}`? (y/n)")
            filters = [AclBindingFilter(rtype, name, ptype)]
        else:
            entries = _sorted_entries(pattern, acls)
            question = (f"Are you sure you want to remove ACLs:{_acls_text(entries)[:-1]} from "
                        f"resource filter `{pattern_text(pattern)}`? (y/n)")
            filters = [AclBindingFilter(rtype, name, ptype, *e) for e in entries]
        if not _confirm(args, question, out, stdin):
            continue
        for error, _ in store.delete(filters):
            if error is not None:
                raise _refused(error)


def _list(store: AclStore, args: argparse.Namespace, pattern_type: PatternType,
          out: IO[str]) -> None:
    """``listAcls``: the ACLs of the resources named (every ACL without one), per resource
    pattern; with ``--principal``, per principal."""
    filters = _resource_filters(args, pattern_type, die_if_none=False)
    principals = _principals(args.principal)
    if not filters:
        found = store.describe(AclBindingFilter.ANY)
    else:
        hits: dict[AclBinding, None] = {}
        for rtype, name, ptype in filters:
            hits.update(dict.fromkeys(store.describe(AclBindingFilter(rtype, name, ptype))))
        found = sorted(hits, key=kafka_order_key)
    if not principals:
        _print_resource_acls(found, out)
        return
    for principal in principals:
        out.write(f"ACLs for principal `{principal}`\n")
        _print_resource_acls([b for b in found if b.principal == principal], out)


def _print_resource_acls(bindings: Sequence[AclBinding], out: IO[str]) -> None:
    """``printResourceAcls``: one paragraph per resource pattern (bindings in Kafka's order)."""
    groups: dict[Pattern, list[Entry]] = {}
    for b in bindings:
        groups.setdefault((b.resource_type, b.resource_name, b.pattern_type), []).append(
            (b.principal, b.host, b.operation, b.permission_type))
    for pattern, entries in groups.items():
        out.write(f"Current ACLs for resource `{pattern_text(pattern)}`:{_acls_text(entries)}")


def main(argv: Sequence[str] | None = None, *, stdout: IO[str] | None = None,
         stderr: IO[str] | None = None, stdin: IO[str] | None = None) -> int:
    """Run ``kafkalog acls``; returns the exit status (0, 1 an error, 2 usage)."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    inp = stdin or sys.stdin
    args, status = parse_args(build_parser(), argv, err)
    if args is None:
        return status
    try:
        action = _check_args(args)
    except UsageError as e:
        err.write(f"{_PROG}: error: {e}\n")
        return EXIT_USAGE
    try:
        logs = open_log_dir(args.log_dir, writable=action != "list")
    except (KafkaLogError, OSError) as e:
        err.write(f"{_PROG}: {open_error_text(e)}\n")
        return EXIT_ERROR
    try:
        store = AclStore(logs.root)
        pattern_type = _pattern_type(args.resource_pattern_type or "LITERAL")
        if action == "add":
            _add(store, args, pattern_type, out)
        elif action == "remove":
            _remove(store, args, pattern_type, out, inp)
        else:
            _list(store, args, pattern_type, out)
        return EXIT_OK
    except UsageError as e:
        err.write(f"{_PROG}: error: {e}\n")
        return EXIT_USAGE
    except _Failed as e:
        cause = f"\n{e.cause}" if e.cause else ""
        err.write(f"Error while executing ACL command: {e.message}{cause}\n")
        return EXIT_ERROR
    except (KafkaLogError, OSError) as e:
        # a corrupt .kafkalog-acls.json (CorruptCheckpointError names it), an unwritable dir
        err.write(f"Error while executing ACL command: {e}\n")
        return EXIT_ERROR
    finally:
        logs.close()
