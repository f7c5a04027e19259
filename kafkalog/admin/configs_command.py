"""``kafkalog configs``: Kafka's ``kafka-configs.sh --entity-type topics|users|clients|ips``
over a log dir, offline.

Source: ``core/src/main/scala/kafka/admin/ConfigCommand.scala`` (Kafka 3.9; for quotas and the
entity options 4.1.1) for the options, their checks and the texts; what a broker answers
(``DescribeConfigs``, ``IncrementalAlterConfigs``) from
``core/src/main/scala/kafka/server/ConfigHelper.scala`` and
``server-common/.../config/ServerTopicConfigSynonyms.java``; for users, what the admin client
(``KafkaAdminClient.alterUserScramCredentials``) and the controller
(``metadata/.../controller/ScramControlManager.java``, ``metadata/.../image/ScramImage.java``)
answer; for quotas, the controller's ``ClientQuotaControlManager`` and the image's
``ClientQuotasImage.describe`` (:class:`~kafkalog.quotas.ClientQuotaStore`).

=================================================================  ============================
``kafkalog configs LOGDIR --entity-type topics --describe``        every topic's overrides
``... --describe --entity-name T [--all] [--json]``                one topic's overrides (all
                                                                   its configs with ``--all``)
``... --alter --entity-name T --add-config k1=v1,k2=[a,b]``        set overrides
``... --alter --entity-name T --delete-config k1,k2``              remove overrides
``kafkalog configs LOGDIR --entity-type users --describe``         every user's quotas and
                                                                   SCRAM credentials
``... --describe --entity-name U [--json]``                        one user's
``... --alter --entity-name U --add-config``                       create or replace
``'SCRAM-SHA-256=[iterations=8192,password=P]'``                   credentials
``... --alter --entity-name U --delete-config SCRAM-SHA-512``      remove a credential
``... --alter --entity-name U --add-config producer_byte_rate=N``  set a user's quotas
``--entity-type users|clients|ips --entity-default``               the default user / client
                                                                   id / ip (``<default>``)
``--entity-type users --entity-name U --entity-type clients``      a user's client (or all its
``[--entity-name C | --entity-default]``                           clients with ``--describe``)
``kafkalog configs LOGDIR --entity-type clients|ips --describe``   every client's / ip's quotas
``... --alter --entity-name C --add-config k=N --delete-config k`` set and remove quotas
``--topic T``, ``--user U``, ``--client C``, ``--ip I``,           the same as ``--entity-type
``--user-defaults``, ``--client-defaults``, ``--ip-defaults``      ... --entity-name ...``
=================================================================  ============================

Topics
------

Describe prints ConfigCommand's lines::

    Dynamic configs for topic orders are:
      retention.ms=60000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=60000}
      segment.bytes=1048576 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:segment.bytes=...
      ...1048576, DEFAULT_CONFIG:log.segment.bytes=1073741824}

(the last line cut in two here), sorted by name, synonyms as a broker without
``server.properties`` settings gives them: the override, then the broker default of the topic
config's first broker synonym when that one has a default (``log.roll.ms``,
``log.roll.jitter.ms``, ``log.flush.interval.ms``, ``log.retention.ms`` have none, so
``segment.ms``, ``segment.jitter.ms``, ``flush.ms`` and ``retention.ms`` show no broker synonym:
ConfigHelper drops the lower ones). ``--all`` lists every topic config kafkalog implements ("All
configs for topic T are:"; Kafka's list also has the ones kafkalog does not implement, e.g.
``remote.storage.enable``).

Alter follows ``alterConfig`` for topics: ``--add-config`` is split on commas outside ``[...]``
and each pair on ``=``; brackets are removed from values (``cleanup.policy=[compact,delete]``);
a ``--delete-config`` name that is not an override fails with "Invalid config(s): k". The new
overrides (old ones, plus the added, minus the deleted) are checked as a whole before anything
is written: an unknown name ("Unknown topic config name: k", Kafka's broker text), a Kafka
topic config kafkalog does not implement, or a bad value fails naming the config, and nothing
changes. Then :meth:`~kafkalog.log_dir.LogDir.update_topic_config` persists and applies them:
"Completed updating config for topic T.".

Users (SCRAM credentials)
-------------------------

A user's SCRAM credentials are kept in the log dir's
:class:`~kafkalog.security.ScramCredentialStore` (``.kafkalog-scram-credentials.json`` at its
root, what ``kafkalog serve`` authenticates against); its quotas with the clients' and ips' (see
"Client quotas" below). Users are not tied to topics: the dir need not hold any.

Describe follows ``describeClientQuotaAndUserScramCredentialConfigs``: the users' quota lines
(below), then one line per user with credentials, users sorted by name (Kafka's order is the
controller's hash order), mechanisms in type order::

    SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192, ...
    ...SCRAM-SHA-512=iterations=4096

(one line, cut in two here). A named user without credentials prints nothing (the admin
client's ``users()`` leaves out the controller's RESOURCE_NOT_FOUND answer). ``--json`` prints
``{"quotas": [...], "users": [{"user": U, "credentials": [{"mechanism": M, "iterations": N},
...]}, ...]}``. ``--all`` changes nothing.

Alter follows ``alterConfig`` for users and ``alterUserScramCredentialConfigs``: every
``--add-config``/``--delete-config`` name must be a SCRAM mechanism (``SCRAM-SHA-256``,
``SCRAM-SHA-512``) or a quota ("Only quota and SCRAM credential configs can be added for 'users'.
Unexpected config names: k": Kafka's text without its "using --bootstrap-server" and with the
names comma-separated instead of Scala's ``Set(...)``, as in every such text here). Quotas alone
alter the user's quotas (below); SCRAM credentials are refused for the default user ("The use of
--entity-default or --user-defaults is not allowed with User SCRAM Credentials.") and together
with quotas ("Cannot alter both quota and SCRAM credential configs simultaneously for
'users'."). A value is ``[iterations=N,]password=P`` (Kafka's regular expression:
``iterations`` first, default 4096, ``-1`` meaning the default; everything after ``password=`` is
the password), else "Invalid credential property SCRAM_SHA_256=..." (Kafka names the mechanism's
Java enum constant there); fewer than 4096 iterations fail with "Iterations N is less than the
minimum 4096 required for SCRAM-SHA-256". What the admin client and the controller refuse
prints "Error while executing config command with args '...'" and then the Kafka exception's
class and message: an empty password ("UnacceptableCredentialException: Password must not be
empty"), more than 16384 iterations ("UnacceptableCredentialException: Too many iterations"),
deleting a credential the user does not have ("ResourceNotFoundException: Attempt to delete a
user credential that does not exist"), a mechanism both added and deleted or deleted twice
("DuplicateResourceException: A user credential cannot be altered twice in the same request").
The echoed arguments show every ``password=`` value as ``[hidden]`` (Kafka prints the password
there). Everything is checked before anything is written; then the credentials are derived from
the passwords (a random salt each; the passwords are not stored) and persisted in one atomic
write: "Completed updating config for user U.".

One difference: Kafka 3.9's KRaft controller refuses any two changes of one user in one
request (DUPLICATE_RESOURCE), so there ``'SCRAM-SHA-256=[...],SCRAM-SHA-512=[...]'`` fails
although Kafka's documentation shows it (ZooKeeper-mode Kafka accepted it). kafkalog accepts
changes of different mechanisms of a user together, as ZooKeeper mode and the documentation do,
and writes them together.

Client quotas (users, clients, ips)
-----------------------------------

Quotas are kept in the log dir's :class:`~kafkalog.quotas.ClientQuotaStore`
(``.kafkalog-client-quotas.json`` at its root): the file ``kafkalog serve`` enforces them from,
and that its AlterClientQuotas/DescribeClientQuotas change and read. An entity is a user, a
client id, a user's client id or an ip; ``--entity-default`` (``--user-defaults``, ...) or an
empty ``--entity-name`` names the default (Kafka's ``<default>``). ``--entity-name`` and
``--entity-default`` pair with the ``--entity-type`` values by position, in command-line order
(``--entity-type users --entity-type clients --entity-name alice --entity-default`` is alice's
default client); the shorthand flags give the types in Kafka's order (``--client``, ``--user``,
``--ip``, then ``--client-defaults``, ``--user-defaults``, ``--ip-defaults``) and cannot be
mixed with ``--entity-*``.

Describe (``describeQuotaConfigs``) asks the store for the entities of exactly those types
(``ClientQuotaFilter.containsOnly``): a name matches exactly, a default the default, a type
without a name (``--entity-type users``, or the second type of ``--entity-type users
--entity-name alice --entity-type clients``) every entity of the type, the default included.
One line per entity::

    Quota configs for user-principal 'alice' are producer_byte_rate=1024.0, request_percentage=50.0
    Quota configs for the default user-principal, client-id 'app' are consumer_byte_rate=2048.0
    Quota configs for ip '10.0.0.1' are connection_creation_rate=10.0

values as Java's ``Double.toString`` prints them (``1.0E7``, ``5.0E-4``), in the order of the
Java ``HashMap`` objects the admin client builds from the answer (ClientQuotaEntity's and String's
hash codes; where Java's order depends on the controller's maps, i.e. entities or keys sharing a
bin, the store's order stands in). Users alone without a default then get their SCRAM lines
(above). ``--json``: ``{"quotas": [{"entity": {"user": U or null, "client-id": ...},
"configs": {key: value}}, ...]}`` in the store's order (users, user/client pairs, clients, ips;
defaults first), plus ``"users"`` where the text has SCRAM lines.

Alter (``alterQuotaConfigs``): for clients and a user's clients only quotas ("Only quota configs
can be added for 'clients'. Unexpected config names: ..."), for ips only
``connection_creation_rate`` ("Only connection quota configs can be added for 'ips'. Unexpected
config names: k1,k2", Kafka's text for deletions too); deleting a quota the entity does not have
fails with "Invalid config(s): k"; a value must be a Java double ("Cannot parse quota
configuration value for k: v"; ``Double.parseDouble``'s syntax); then the store applies the
change as Kafka's controller does, whose refusals print as the admin client's exception through
the generic handler, e.g. "InvalidRequestException: producer_byte_rate cannot be a fractional
value." (``producer_byte_rate``/``consumer_byte_rate`` whole numbers, ``request_percentage``/
``controller_mutation_rate`` any number, every value above 0; a key both added and deleted:
"Ignoring duplicate entity ClientQuotaEntity(entries={user=alice})"). Success:
"Completed updating config for user alice." (``client app.``, ``ip 10.0.0.1.``: the first
entity type given), "Completed updating default config for users in the cluster." when the
first name is the default.

Errors and what is not implemented
----------------------------------

The tool's own checks ("Invalid config(s): k", a malformed ``--add-config``, the SCRAM value
checks above, the quota name checks) print their bare message on stderr, as ConfigCommand's
``IllegalArgumentException``/``InvalidConfigurationException`` handler does; what a broker
would refuse (an unknown topic, a config name or value, the SCRAM and quota refusals above)
prints "Error while executing config command with args '...'" and then the reason, naming the
topic's log dir or the config (Kafka prints the stack trace there). Option errors
(``checkArgs``' texts: "Only 'users' and 'clients' entity types may be specified together", "An
entity name must be specified for every entity type", "The entity name for ips must be a valid
IP or resolvable host, but it is: X", ...) are usage errors (status 2; Kafka exits with 1).

Only ``--entity-type topics``, ``users``, ``clients`` and ``ips`` exist offline (brokers',
broker loggers', client metrics' and groups' configs live in the cluster): another type is a
usage error. ``--add-config-file`` is not implemented.

Reading (``--describe``) takes no lock; ``--alter`` opens the dir for writing, which takes its
``.lock``: a dir a running ``kafkalog serve`` (or broker) holds is refused, so neither the
credentials nor the quotas file is written behind a server's back (with a server running, alter
quotas through it: ``kafka-configs.sh --bootstrap-server``).

Example
-------
>>> import tempfile, io
>>> from kafkalog.log_dir import LogDir
>>> d = tempfile.mkdtemp()
>>> with LogDir.open(d) as logs:
...     _ = logs.create_topic("orders", 1)
>>> main([d, "--entity-type", "topics", "--entity-name", "orders", "--alter",
...       "--add-config", "retention.ms=60000"])
Completed updating config for topic orders.
0
>>> main([d, "--entity-type", "users", "--entity-name", "alice", "--alter",
...       "--add-config", "SCRAM-SHA-256=[iterations=8192,password=alice-secret]"])
Completed updating config for user alice.
0
>>> main([d, "--entity-type", "users", "--describe"])
SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192
0
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from ..checkpoint import java_properties_key_order
from ..config import LogConfig
from ..decoders.message import java_double
from ..errors import ConfigError, KafkaLogError
from ..quotas.client_quota_store import (
    CLIENT_ID,
    IP,
    IP_KEYS,
    MATCH_DEFAULT,
    MATCH_EXACT,
    MATCH_SPECIFIED,
    USER,
    USER_CLIENT_KEYS,
    ClientQuotaStore,
    QuotaRequestError,
    is_valid_ip_entity,
    java_hash_map_order,
    java_string_hash,
)
from ..security.scram_credentials import (
    MAX_ITERATIONS,
    MECHANISMS,
    MIN_ITERATIONS,
    ScramCredentialStore,
)
from ..usage import ArgumentParser, UsageError, java_trim, parse_args
from . import (
    EXIT_ERROR,
    EXIT_OK,
    EXIT_USAGE,
    CommandFailed,
    listed_topics,
    open_error_text,
    open_log_dir,
)

if TYPE_CHECKING:
    from ..log_dir import LogDir

__all__ = ["main", "build_parser", "parse_add_config", "check_topic_config", "scram_changes",
           "parse_java_double", "KAFKA_TOPIC_CONFIGS"]

#: every topic config name Kafka 3.9 knows (``LogConfig.configNames``: TopicConfig's names and
#: the two replication throttle lists)
KAFKA_TOPIC_CONFIGS = frozenset({
    "segment.bytes", "segment.ms", "segment.jitter.ms", "segment.index.bytes", "flush.messages",
    "flush.ms", "retention.bytes", "retention.ms", "remote.storage.enable",
    "local.retention.ms", "local.retention.bytes", "remote.log.copy.disable",
    "remote.log.delete.on.disable", "max.message.bytes", "index.interval.bytes",
    "file.delete.delay.ms", "delete.retention.ms", "min.compaction.lag.ms",
    "max.compaction.lag.ms", "min.cleanable.dirty.ratio", "cleanup.policy",
    "unclean.leader.election.enable", "min.insync.replicas", "compression.type",
    "compression.gzip.level", "compression.lz4.level", "compression.zstd.level", "preallocate",
    "message.format.version", "message.timestamp.type", "message.timestamp.difference.max.ms",
    "message.timestamp.before.max.ms", "message.timestamp.after.max.ms",
    "message.downconversion.enable", "leader.replication.throttled.replicas",
    "follower.replication.throttled.replicas",
})

#: topic config -> the broker config ConfigHelper reports as its DEFAULT_CONFIG synonym (the
#: first of ServerTopicConfigSynonyms' names; None where that name has no default, so Kafka
#: reports no broker synonym at all)
_BROKER_SYNONYM: dict[str, str | None] = {
    "segment.bytes": "log.segment.bytes",
    "segment.ms": None,                       # log.roll.ms: no default
    "segment.jitter.ms": None,                # log.roll.jitter.ms: no default
    "segment.index.bytes": "log.index.size.max.bytes",
    "flush.messages": "log.flush.interval.messages",
    "flush.ms": None,                         # log.flush.interval.ms: no default
    "retention.bytes": "log.retention.bytes",
    "retention.ms": None,                     # log.retention.ms: no default
    "max.message.bytes": "message.max.bytes",
    "index.interval.bytes": "log.index.interval.bytes",
    "delete.retention.ms": "log.cleaner.delete.retention.ms",
    "min.compaction.lag.ms": "log.cleaner.min.compaction.lag.ms",
    "max.compaction.lag.ms": "log.cleaner.max.compaction.lag.ms",
    "file.delete.delay.ms": "log.segment.delete.delay.ms",
    "min.cleanable.dirty.ratio": "log.cleaner.min.cleanable.ratio",
    "cleanup.policy": "log.cleanup.policy",
    "preallocate": "log.preallocate",
    "message.timestamp.type": "log.message.timestamp.type",
    "message.timestamp.before.max.ms": "log.message.timestamp.before.max.ms",
    "message.timestamp.after.max.ms": "log.message.timestamp.after.max.ms",
    # ServerTopicConfigSynonyms: the same name at both levels
    "min.insync.replicas": "min.insync.replicas",
    "unclean.leader.election.enable": "unclean.leader.election.enable",
    "compression.type": "compression.type",
    "compression.gzip.level": "compression.gzip.level",
    "compression.lz4.level": "compression.lz4.level",
    "compression.zstd.level": "compression.zstd.level",
}

# ConfigCommand.parseConfigsToBeAdded: a comma or '=' not inside [...]
_OUTSIDE_BRACKETS = r"(?=[^\]]*(?:\[|$))"
_PAIRS = re.compile("," + _OUTSIDE_BRACKETS)
_KEY_VALUE = re.compile(r"\s*=\s*" + _OUTSIDE_BRACKETS)
_VALID_KEY = re.compile(r"[a-zA-Z0-9._-]*")

#: the entity types a log dir holds (ConfigType's order)
_ENTITY_TYPES = ("topics", "clients", "users", "ips")
#: QuotaConfig.isClientOrUserQuotaConfig (server-common QuotaConfig.java)
_USER_QUOTA_CONFIGS = frozenset(USER_CLIENT_KEYS)
#: QuotaConfig.ipConfigs
_IP_QUOTA_CONFIGS = frozenset(IP_KEYS)
#: the command's quota entity types -> ClientQuotaEntity's
_QUOTA_ENTITY_TYPES = {"users": USER, "clients": CLIENT_ID, "ips": IP}
#: ConfigCommand.describeQuotaConfigs: how an entity type is named in its lines
_QUOTA_TYPE_TEXT = {USER: "user-principal", CLIENT_ID: "client-id", IP: "ip"}
#: ConfigCommandOptions.entityFlags and entityDefaultsFlags (the ones a log dir has), in
#: their order: what they add to the entity types and names
_ENTITY_FLAGS = (("topic", "topics"), ("client", "clients"), ("user", "users"), ("ip", "ips"))
_ENTITY_DEFAULT_FLAGS = (("client_defaults", "clients"), ("user_defaults", "users"),
                         ("ip_defaults", "ips"))
#: --entity-default among the --entity-name values (Kafka's name for it is "")
_DEFAULT = object()
#: the exception the admin client raises for an AlterClientQuotas error code
_QUOTA_EXCEPTIONS = {42: "InvalidRequestException", 35: "UnsupportedVersionException",
                     -1: "UnknownServerException"}
# java.lang.Double.parseDouble (FloatingDecimal.readJavaFormatString) after its trim()
_JAVA_DOUBLE = re.compile(
    r"[+-]?(?:NaN|Infinity"
    r"|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fFdD]?"
    r"|0[xX](?:[0-9a-fA-F]+\.?|[0-9a-fA-F]*\.[0-9a-fA-F]+)[pP][+-]?[0-9]+[fFdD]?)")
# ConfigCommand.alterUserScramCredentialConfigs: a SCRAM credential's value (matched whole)
_SCRAM_VALUE = re.compile(r"(?:iterations=(-?[0-9]*),)?password=(.*)")
_INT_MIN, _INT_MAX = -(2 ** 31), 2 ** 31 - 1


class _Refused(ValueError):
    """What the admin client or the controller refuses: Kafka's exception (simple class name)
    and message, printed by the generic handler."""

    def __init__(self, exception: str, message: str) -> None:
        super().__init__(f"{exception}: {message}")


def build_parser() -> argparse.ArgumentParser:
    """The ``kafkalog configs`` argument parser."""
    p = ArgumentParser(prog="kafkalog configs",
                       description="Describe or alter topic configs, users' SCRAM credentials "
                                   "and client quotas (users, clients, ips) of a log directory "
                                   "(kafka-configs.sh, offline).")
    p.add_argument("log_dir", help="a broker log directory (log.dirs entry)")
    p.add_argument("--describe", action="store_true", help="List configs for the given entity.")
    p.add_argument("--alter", action="store_true", help="Alter the configuration for the entity.")
    p.add_argument("--entity-type", action="append", default=[], metavar="TYPE",
                   help="Type of entity (topics/clients/users/ips: the ones a log directory "
                        "holds)")
    p.add_argument("--entity-name", dest="entity_names", action="append", default=[],
                   metavar="NAME",
                   help="Name of entity (topic name/client id/user principal name/ip)")
    p.add_argument("--entity-default", dest="entity_names", action="append_const",
                   const=_DEFAULT,
                   help="Default entity name for clients/users/ips (applies to corresponding "
                        "entity type)")
    p.add_argument("--all", action="store_true",
                   help="List all configs for the given topic (with --describe).")
    p.add_argument("--add-config", metavar="k1=v1,k2=[v1,v2],...",
                   help="Key value pairs of configs to add. Square brackets group values that "
                        "contain commas: 'k1=v1,k2=[v1,v2,v2],k3=v3'. For users: quotas "
                        "(consumer_byte_rate, controller_mutation_rate, producer_byte_rate, "
                        "request_percentage) or SCRAM credentials "
                        "'SCRAM-SHA-256=[iterations=8192,password=P],SCRAM-SHA-512=[password=P]'"
                        "; for clients: those quotas; for ips: connection_creation_rate. "
                        "Entity types 'users' and 'clients' may be specified together to update "
                        "config for clients of a specific user.")
    p.add_argument("--delete-config", action="append", default=[], metavar="k1,k2",
                   help="config keys to remove 'k1,k2'")
    p.add_argument("--topic", metavar="TOPIC", help="The topic's name.")
    p.add_argument("--client", metavar="CLIENT", help="The client's ID.")
    p.add_argument("--client-defaults", action="store_true",
                   help="The config defaults for all clients.")
    p.add_argument("--user", metavar="USER", help="The user's principal name.")
    p.add_argument("--user-defaults", action="store_true",
                   help="The config defaults for all users.")
    p.add_argument("--ip", metavar="IP", help="The IP address.")
    p.add_argument("--ip-defaults", action="store_true", help="The config defaults for all IPs.")
    p.add_argument("--json", action="store_true", help="print JSON (with --describe)")
    return p


def _entity_types_and_names(args: argparse.Namespace) -> None:
    """``ConfigCommandOptions.entityTypes``/``entityNames``: ``args.types`` (the
    ``--entity-type`` values, then the entity flags') and ``args.names`` (``--entity-name`` and
    ``--entity-default`` in command-line order, ``""`` for a default, then the flags'), paired
    by position; ``args.entity_name`` is the first name (None without any)."""
    flags = [(t, getattr(args, f)) for f, t in _ENTITY_FLAGS if getattr(args, f) is not None]
    defaults = [t for f, t in _ENTITY_DEFAULT_FLAGS if getattr(args, f)]
    args.types = [*args.entity_type, *(t for t, _ in flags), *defaults]
    args.names = [*("" if n is _DEFAULT else n for n in args.entity_names),
                  *(n for _, n in flags), *("" for _ in defaults)]
    args.entity_name = args.names[0] if args.names else None


def main(argv: Sequence[str] | None = None, *, stdout: IO[str] | None = None,
         stderr: IO[str] | None = None) -> int:
    """Run ``kafkalog configs``; returns the exit status."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    args_list = list(sys.argv[2:] if argv is None else argv)
    args, status = parse_args(build_parser(), args_list, err)
    if args is None:
        return status
    _entity_types_and_names(args)
    try:
        _check_options(args)
    except UsageError as e:
        err.write(f"kafkalog configs: error: {e}\n")
        return EXIT_USAGE
    head = args.types[0]
    scram: _ScramChanges | None = None
    try:
        # ConfigCommand parses (and refuses) --add-config before asking the broker anything,
        # and the admin client checks SCRAM credentials before sending them
        adds = parse_add_config(args.add_config) if args.add_config is not None else {}
        deletes = [k.strip() for spec in args.delete_config for k in spec.split(",")]
        if args.alter and head in ("users", "clients"):
            if not _user_client_quota_alter(args.types, args.names, adds, deletes):
                scram = scram_changes(adds, deletes)
        elif args.alter and head == "ips":
            unknown = [k for k in (*adds, *deletes) if k not in _IP_QUOTA_CONFIGS]
            if unknown:
                raise CommandFailed("Only connection quota configs can be added for 'ips'. "
                                    f"Unexpected config names: {','.join(unknown)}")
    except CommandFailed as e:
        err.write(f"{e}\n")
        return EXIT_ERROR
    except _Refused as e:
        err.write(_refused_text(args_list, e))
        return EXIT_ERROR
    try:
        logs = open_log_dir(args.log_dir, writable=args.alter)
    except (KafkaLogError, OSError) as e:
        err.write(f"kafkalog configs: {open_error_text(e)}\n")
        return EXIT_ERROR
    try:
        if head == "topics":
            if args.alter:
                return _alter(logs, args.entity_name, adds, deletes, out)
            return _describe(logs, args, out)
        if scram is not None:
            return _alter_user(ScramCredentialStore(logs.root), args.entity_name, scram, out)
        quotas = ClientQuotaStore(logs.root)
        if args.alter:
            return _alter_quotas(quotas, args.types, args.names, adds, deletes, out)
        return _describe_quotas(logs, quotas, args, out)
    except CommandFailed as e:
        err.write(f"{e}\n")
        return EXIT_ERROR
    except (KafkaLogError, ValueError, OSError) as e:
        err.write(_refused_text(args_list, e))
        return EXIT_ERROR
    finally:
        logs.close()


def _refused_text(args_list: Sequence[str], error: BaseException) -> str:
    """What a broker refuses: ConfigCommand's generic handler (its stack trace, here the
    reason)."""
    # (a SCRAM password in the echoed arguments is hidden: Kafka prints it, a log should not)
    shown = " ".join(re.sub(r"(password=)[^\]]*", r"\1[hidden]", a) for a in args_list)
    return (f"Error while executing config command with args '{shown}'\n"
            f"{error}\n")


def _check_options(args: argparse.Namespace) -> None:
    """``ConfigCommandOptions.checkArgs`` for what exists offline (Kafka's texts), then
    ``processCommand``'s and ``getAllClientQuotasConfigs``' checks of the entity names."""
    if args.describe + args.alter != 1:
        raise UsageError("Command must include exactly one action: --describe, --alter")
    if args.describe:
        for flag, given in (("add-config", args.add_config is not None),
                            ("delete-config", bool(args.delete_config))):
            if given:
                raise UsageError(f'Option "[describe]" can\'t be used with option "[{flag}]"')
    if args.alter and args.json:
        raise UsageError('Option "[json]" can\'t be used with option "[alter]"')
    types, names = args.types, args.names
    if len(types) != len(set(types)):
        dups = [t for i, t in enumerate(types) if t in types[:i]]
        raise UsageError(f"Duplicate entity type(s) specified: {','.join(dups)}")
    for t in types:
        if t not in _ENTITY_TYPES:
            raise UsageError(
                f"Invalid entity type {t}, the entity type must be one of "
                f"{', '.join(_ENTITY_TYPES)} with a log directory (brokers, broker-loggers, "
                "client-metrics and groups configs live in the cluster)")
    if not types:
        raise UsageError("At least one entity type must be specified")
    if len(types) > 1 and set(types) != {"users", "clients"}:
        raise UsageError("Only 'users' and 'clients' entity types may be specified together")
    flag_given = any(getattr(args, f) is not None for f, _ in _ENTITY_FLAGS) or any(
        getattr(args, f) for f, _ in _ENTITY_DEFAULT_FLAGS)
    if (args.entity_names or args.entity_type) and flag_given:
        raise UsageError("--entity-{type,name,default} should not be used in conjunction with "
                         "specific entity flags")
    has_name = any(n != "" for n in names)
    has_default = any(n == "" for n in names)
    if has_name and "ips" in types:
        for name in names:
            if name != "" and not is_valid_ip_entity(name):
                raise UsageError(f"The entity name for {types[0]} must be a valid IP or "
                                 f"resolvable host, but it is: {name}")
    quota_types = any(t in _QUOTA_ENTITY_TYPES for t in types)
    if args.describe and not quota_types and _DEFAULT in args.entity_names:
        raise UsageError(f"--entity-default must not be specified with --describe of "
                         f"{','.join(types)}")
    if args.alter:
        if quota_types:
            if not has_name and not has_default:
                raise UsageError("An entity-name or default entity must be specified with "
                                 "--alter of users, clients, brokers or ips")
        elif not has_name:
            raise UsageError(f"an entity name must be specified with --alter of {types[0]}")
        if args.add_config is None and not args.delete_config:
            raise UsageError("At least one of --add-config or --delete-config must be "
                             "specified with --alter")
        if len(types) != len(names):
            raise UsageError("An entity name must be specified for every entity type")
    elif quota_types and len(names) > len(types):
        raise UsageError("More entity names specified than entity types")


def parse_add_config(text: str) -> dict[str, str]:
    """``--add-config``: ConfigCommand's ``parseConfigsToBeAdded`` (commas and ``=`` inside
    ``[...]`` do not split; brackets are removed from values; keys and values trimmed).

    >>> parse_add_config("cleanup.policy=[compact,delete], retention.ms = 100")
    {'cleanup.policy': 'compact,delete', 'retention.ms': '100'}

    Raises
    ------
    CommandFailed
        A pair that is not ``key=val``, or a key with characters Kafka refuses.
    """
    pairs = _PAIRS.split(text)
    while pairs and pairs[-1] == "":     # Java's split drops trailing empty strings
        pairs.pop()
    props: dict[str, str] = {}
    for pair in pairs:
        kv = _KEY_VALUE.split(pair)      # Java's split(..., -1): every part kept
        if len(kv) != 2:
            raise CommandFailed('requirement failed: Invalid entity config: all configs to be '
                                'added must be in the format "key=val".')
        props[kv[0].strip()] = re.sub(r"\[?\]?", "", kv[1]).strip()
    for key in props:
        if not _VALID_KEY.fullmatch(key):
            raise CommandFailed(f"Invalid character found for config key: {key}")
    return props


def check_topic_config(logs: LogDir, overrides: Mapping[str, str]) -> LogConfig:
    """The config a topic with ``overrides`` would have in ``logs``, or the reason it cannot:
    Kafka's broker checks (``LogConfig.validateNames``/``validate``) where kafkalog implements
    the config. Changes nothing.

    Raises
    ------
    ConfigError
        An unknown name (Kafka's text), a Kafka topic config kafkalog does not implement, an
        empty value, or a bad value (the engine's message, naming the config).
    """
    from ..log_dir import config_to_properties

    implemented = set(config_to_properties(LogConfig()))
    for name in overrides:
        if name not in KAFKA_TOPIC_CONFIGS:
            raise ConfigError(f"Unknown topic config name: {name}")
        if name not in implemented:
            raise ConfigError(f"Topic config {name} is not implemented by kafkalog (it "
                              f"implements: {', '.join(sorted(implemented))})")
    for name, value in overrides.items():
        if str(value).strip() == "":
            # LogConfig.from_properties reads an empty value as "not set": it would be stored
            # and silently ignored
            raise ConfigError(f"{name}: a value is required (found an empty value)")
    try:
        return logs.validate_topic_config(overrides)
    except ConfigError:
        raise
    except ValueError as e:     # a name validate_topic_config refuses (checked above already)
        raise ConfigError(str(e)) from None


def _alter(logs: LogDir, topic: str, adds: dict[str, str], deletes: list[str],
           out: IO[str]) -> int:
    """ConfigCommand's ``alterConfig`` for a topic, then the broker's incremental alter."""
    if topic not in listed_topics(logs):
        from ..log_dir import UnknownTopicOrPartitionError

        raise UnknownTopicOrPartitionError(f"topic {topic!r} is not in this log dir",
                                           path=logs.root)
    old = logs.topic_overrides(topic)
    invalid = [k for k in deletes if k not in old]
    if invalid:
        raise CommandFailed(f"Invalid config(s): {','.join(invalid)}")
    both = sorted(set(adds) & set(deletes))
    if both:
        # the broker refuses an IncrementalAlterConfigs naming a key twice
        raise ValueError(f"Error due to duplicate config keys: {', '.join(both)} both added "
                         "and deleted")
    new = {k: v for k, v in old.items() if k not in deletes}
    new.update(adds)
    check_topic_config(logs, new)       # all or nothing: a bad value changes nothing
    logs.update_topic_config(topic, new)
    out.write(f"Completed updating config for topic {topic}.\n")
    return EXIT_OK


def _entries(logs: LogDir, topic: str, describe_all: bool) -> list[dict[str, Any]]:
    """``getResourceConfig``: the topic's config entries, sorted by name, with synonyms."""
    from ..log_dir import config_to_properties

    overrides = logs.topic_overrides(topic)
    effective = config_to_properties(logs.topic_config(topic))
    defaults = config_to_properties(LogConfig())
    entries = []
    for name in sorted(effective if describe_all else overrides):
        synonyms = []
        if name in overrides:
            synonyms.append({"source": "DYNAMIC_TOPIC_CONFIG", "name": name,
                             "value": effective[name]})
        broker_name = _BROKER_SYNONYM.get(name)
        if broker_name is not None:
            synonyms.append({"source": "DEFAULT_CONFIG", "name": broker_name,
                             "value": defaults[name]})
        entries.append({"name": name, "value": effective[name],
                        "source": synonyms[0]["source"] if synonyms else "DEFAULT_CONFIG",
                        "sensitive": False, "synonyms": synonyms})
    return entries


def _describe(logs: LogDir, args: argparse.Namespace, out: IO[str]) -> int:
    """``describeResourceConfig`` for topics: the named one, else every topic."""
    topics = listed_topics(logs)
    if args.entity_name is not None:
        if args.entity_name not in topics:
            from ..log_dir import UnknownTopicOrPartitionError

            raise UnknownTopicOrPartitionError(f"topic {args.entity_name!r} is not in this "
                                               "log dir", path=logs.root)
        topics = [args.entity_name]
    described = [{"topic": t, "configs": _entries(logs, t, args.all)} for t in topics]
    if args.json:
        out.write(json.dumps({"topics": described}) + "\n")
        return EXIT_OK
    lines = []
    for d in described:
        lines.append(f"{'All' if args.all else 'Dynamic'} configs for topic {d['topic']} are:")
        for e in d["configs"]:
            synonyms = ", ".join(f"{s['source']}:{s['name']}={s['value']}" for s in e["synonyms"])
            lines.append(f"  {e['name']}={e['value']} sensitive=false synonyms={{{synonyms}}}")
    out.write("".join(line + "\n" for line in lines))
    return EXIT_OK


# -- users: SCRAM credentials -----------------------------------------------------------------

@dataclass(frozen=True)
class _ScramChanges:
    """One user's SCRAM changes, checked as the command and the admin client check them."""

    #: mechanisms to delete, in ``--delete-config`` order
    deletions: tuple[str, ...]
    #: (mechanism, iterations, password), in ``--add-config`` order
    upsertions: tuple[tuple[str, int, str], ...]


def scram_changes(adds: Mapping[str, str], deletes: Sequence[str]) -> _ScramChanges:
    """A user's ``--add-config``/``--delete-config`` as ConfigCommand's ``alterConfig`` (users)
    and ``alterUserScramCredentialConfigs`` read them, then the admin client's checks
    (``KafkaAdminClient.alterUserScramCredentials``).

    >>> scram_changes({"SCRAM-SHA-256": "iterations=8192,password=p,w"}, ["SCRAM-SHA-512"])
    _ScramChanges(deletions=('SCRAM-SHA-512',), upsertions=(('SCRAM-SHA-256', 8192, 'p,w'),))

    Raises
    ------
    CommandFailed
        A name that is neither a SCRAM mechanism nor a quota, a quota (not altered together
        with SCRAM credentials), a malformed value, iterations that are not a Java int or below
        4096 (ConfigCommand's texts).
    _Refused
        An empty password (the admin client's UnacceptableCredentialException).
    """
    for verb, names in (("added", list(adds)), ("deleted", list(deletes))):
        unknown = [k for k in names if k not in MECHANISMS and k not in _USER_QUOTA_CONFIGS]
        if unknown:
            raise CommandFailed(f"Only quota and SCRAM credential configs can be {verb} for "
                                f"'users'. Unexpected config names: {', '.join(unknown)}")
    if any(k in _USER_QUOTA_CONFIGS for k in (*adds, *deletes)):
        raise CommandFailed("Cannot alter both quota and SCRAM credential configs "
                            "simultaneously for 'users'.")
    upsertions = []
    for mechanism, value in adds.items():
        m = _SCRAM_VALUE.fullmatch(value)
        if m is None:
            # Kafka prints the internal ScramMechanism enum constant here (SCRAM_SHA_256)
            raise CommandFailed(f"Invalid credential property {mechanism.replace('-', '_')}="
                                f"{value}")
        text, password = m.group(1), m.group(2)
        if text is None or text == "-1":
            iterations = MIN_ITERATIONS          # ConfigCommand's DefaultScramIterations
        else:
            iterations = _java_int(text)
        if iterations < MIN_ITERATIONS:
            raise CommandFailed(f"Iterations {iterations} is less than the minimum "
                                f"{MIN_ITERATIONS} required for {mechanism}")
        upsertions.append((mechanism, iterations, password))
    if any(password == "" for _, _, password in upsertions):
        raise _Refused("UnacceptableCredentialException", "Password must not be empty")
    return _ScramChanges(tuple(deletes), tuple(upsertions))


def _java_int(text: str) -> int:
    """``Integer.parseInt`` of ``-?[0-9]*`` (Scala's ``toInt``): its NumberFormatException text."""
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or not _INT_MIN <= value <= _INT_MAX:
        raise CommandFailed(f'For input string: "{text}"')
    return value


def _alter_user(store: ScramCredentialStore, user: str, changes: _ScramChanges,
                out: IO[str]) -> int:
    """What the controller does with the changes (``ScramControlManager.alterCredentials``:
    deletions first, then upsertions, the first error failing the user), all checked before
    anything is written."""
    seen: set[str] = set()
    twice = ("DuplicateResourceException",
             "A user credential cannot be altered twice in the same request")
    for mechanism in changes.deletions:
        if mechanism in seen:
            raise _Refused(*twice)
        seen.add(mechanism)
        if store.get(user, mechanism) is None:
            raise _Refused("ResourceNotFoundException",
                           "Attempt to delete a user credential that does not exist")
    for mechanism, iterations, _ in changes.upsertions:
        if mechanism in seen:
            raise _Refused(*twice)
        seen.add(mechanism)
        if iterations > MAX_ITERATIONS:
            raise _Refused("UnacceptableCredentialException", "Too many iterations")
    store.update_user(user, changes.deletions,
                      [(m, password, iterations) for m, iterations, password in changes.upsertions])
    out.write(f"Completed updating config for user {user}.\n")
    return EXIT_OK


def _scram_users(store: ScramCredentialStore, names: Sequence[str]) -> list[dict[str, Any]]:
    """``describeUserScramCredentials`` as the command prints it: the named user, else every
    user with credentials (sorted by name)."""
    results = store.describe(list(names) or None)
    # RESOURCE_NOT_FOUND (a named user without credentials) is left out, as the admin client's
    # users() does; a single name cannot get another error
    return [{"user": r.user,
             "credentials": [{"mechanism": m, "iterations": i} for m, i in r.credentials]}
            for r in sorted(results, key=lambda r: r.user) if r.error_code == 0]


# -- client quotas: users, clients, ips -------------------------------------------------------

def _user_client_quota_alter(types: Sequence[str], names: Sequence[str],
                             adds: Mapping[str, str], deletes: Sequence[str]) -> bool:
    """``alterConfig``'s checks for users and clients: True when the change is of quotas
    (``alterQuotaConfigs``), False when of a user's SCRAM credentials.

    Raises
    ------
    CommandFailed
        ConfigCommand's texts (without their "using --bootstrap-server", the names
        comma-separated instead of Scala's ``Set(...)``).
    """
    def is_scram(k: str) -> bool:
        return k in MECHANISMS

    def unknown(keys: Iterable[str]) -> list[str]:
        return [k for k in keys if not is_scram(k) and k not in _USER_QUOTA_CONFIGS]

    has_quota = any(k in _USER_QUOTA_CONFIGS for k in (*adds, *deletes))
    scram_adds = [k for k in adds if is_scram(k)]
    scram_deletes = [k for k in deletes if is_scram(k)]
    if types[0] == "clients" or len(types) == 2:
        # a client, or a user's client
        if unknown(adds) or scram_adds:
            raise CommandFailed("Only quota configs can be added for 'clients'. Unexpected "
                                f"config names: {', '.join([*unknown(adds), *scram_adds])}")
        if unknown(deletes) or scram_deletes:
            raise CommandFailed("Only quota configs can be deleted for 'clients'. Unexpected "
                                "config names: "
                                f"{', '.join([*unknown(deletes), *scram_deletes])}")
    else:
        if unknown(adds):
            raise CommandFailed("Only quota and SCRAM credential configs can be added for "
                                f"'users'. Unexpected config names: {', '.join(unknown(adds))}")
        if unknown(deletes):
            raise CommandFailed("Only quota and SCRAM credential configs can be deleted for "
                                "'users'. Unexpected config names: "
                                f"{', '.join(unknown(deletes))}")
        if scram_adds or scram_deletes:
            if "" in names:
                raise CommandFailed("The use of --entity-default or --user-defaults is not "
                                    "allowed with User SCRAM Credentials.")
            if has_quota:
                raise CommandFailed("Cannot alter both quota and SCRAM credential configs "
                                    "simultaneously for 'users'.")
    return has_quota


def _quota_components(types: Sequence[str], names: Sequence[str]
                      ) -> list[tuple[str, int, str | None]]:
    """``getAllClientQuotasConfigs``' filter: a name matches exactly, ``""`` the default, a
    type without a name any entity of the type."""
    components = []
    for i, t in enumerate(types):
        etype = _QUOTA_ENTITY_TYPES[t]
        if i >= len(names):
            components.append((etype, MATCH_SPECIFIED, None))
        elif names[i] == "":
            components.append((etype, MATCH_DEFAULT, None))
        else:
            components.append((etype, MATCH_EXACT, names[i]))
    return components


def parse_java_double(text: str) -> float | None:
    """``Double.parseDouble`` (Scala's ``toDouble``): None where Java throws
    NumberFormatException. Java's syntax only (no ``inf``, ``nan``, ``1_000``): ``NaN``,
    ``Infinity``, decimal and hexadecimal (``0x1p10``) numbers, a ``f``/``d`` suffix.

    >>> parse_java_double("1024"), parse_java_double(" 1e3d"), parse_java_double("0x1p4")
    (1024.0, 1000.0, 16.0)
    >>> parse_java_double("inf"), parse_java_double("1_000"), parse_java_double("")
    (None, None, None)
    """
    text = java_trim(text)
    if not _JAVA_DOUBLE.fullmatch(text):
        return None
    body = text.lstrip("+-")
    sign = -1.0 if text.startswith("-") else 1.0
    if body == "NaN":
        return math.nan
    if body == "Infinity":
        return sign * math.inf
    if body[:2] in ("0x", "0X"):
        return sign * float.fromhex(body.rstrip("fFdD"))
    return sign * float(body.rstrip("fFdD"))


def _completed(types: Sequence[str], names: Sequence[str]) -> str:
    """``alterConfig``'s last line (the first entity type and name)."""
    if names[0]:
        return f"Completed updating config for {types[0][:-1]} {names[0]}.\n"
    return f"Completed updating default config for {types[0]} in the cluster.\n"


def _alter_quotas(store: ClientQuotaStore, types: Sequence[str], names: Sequence[str],
                  adds: Mapping[str, str], deletes: Sequence[str], out: IO[str]) -> int:
    """``alterQuotaConfigs``: the entity's current quotas (deleting one it does not have fails),
    the values parsed as doubles, then the controller's ``alterClientQuotas`` (the store)."""
    old = store.describe(_quota_components(types, names), strict=True)
    current = old[0][1] if old else {}
    invalid = [k for k in deletes if k not in current]
    if invalid:
        raise CommandFailed(f"Invalid config(s): {','.join(invalid)}")
    entity = {_QUOTA_ENTITY_TYPES[t]: (n or None) for t, n in zip(types, names)}
    ops: list[tuple[str, float, bool]] = []
    # (the added configs in the order Kafka's Properties hands them over)
    for key in java_properties_key_order(adds):
        value = parse_java_double(adds[key])
        if value is None:
            raise CommandFailed(f"Cannot parse quota configuration value for {key}: "
                                f"{adds[key]}")
        ops.append((key, value, False))
    ops.extend((key, 0.0, True) for key in deletes)
    [(_, code, message)] = store.alter([(entity, ops)])
    if code != 0:
        raise _Refused(_QUOTA_EXCEPTIONS.get(code, "KafkaException"), str(message))
    out.write(_completed(types, names))
    return EXIT_OK


def _entity_hash(entity: Mapping[str, str | None]) -> int:
    """``ClientQuotaEntity.hashCode``: ``Objects.hash(entries)``."""
    total = sum(java_string_hash(k) ^ (0 if v is None else java_string_hash(v))
                for k, v in entity.items())
    return 31 + total


def _kafka_order(found: list[tuple[dict, dict[str, float]]]
                 ) -> list[tuple[dict, dict[str, float], list[str]]]:
    """The order ConfigCommand prints what the admin client's DescribeClientQuotas gives: the
    entities, and each one's keys, in the order of the ``HashMap``s the admin client builds
    (sized by the response). Where Java's order depends on the controller's own maps (entities
    or keys in one bin), the store's order stands in for the entities and a fresh 16-bin map's
    for the keys."""
    entities = java_hash_map_order(found, lambda ek: _entity_hash(ek[0]), len(found))
    return [(entity, quotas, java_hash_map_order(java_properties_key_order(quotas),
                                                 java_string_hash, len(quotas)))
            for entity, quotas in entities]


def _quota_line(entity: Mapping[str, str | None], quotas: Mapping[str, float],
                keys: Sequence[str]) -> str:
    """``describeQuotaConfigs``' line of an entity."""
    parts = []
    for etype in (USER, CLIENT_ID, IP):
        if etype in entity:
            name = entity[etype]
            text = _QUOTA_TYPE_TEXT[etype]
            parts.append(f"{text} '{name}'" if name is not None else f"the default {text}")
    values = ", ".join(f"{k}={java_double(quotas[k])}" for k in keys)
    return f"Quota configs for {', '.join(parts)} are {values}\n"


def _describe_quotas(logs: LogDir, store: ClientQuotaStore, args: argparse.Namespace,
                     out: IO[str]) -> int:
    """``describeClientQuotaAndUserScramCredentialConfigs`` (users, clients) or
    ``describeQuotaConfigs`` (ips): the matching entities' quotas, then, for users alone and
    without a default, the users' SCRAM credentials."""
    types, names = args.types, args.names
    try:
        found = store.describe(_quota_components(types, names), strict=True)
    except QuotaRequestError as e:      # (not from the filters the command builds)
        raise _Refused(_QUOTA_EXCEPTIONS.get(e.code, "KafkaException"), str(e)) from None
    users = None
    if types[0] != "ips" and "clients" not in types and "" not in names:
        users = _scram_users(ScramCredentialStore(logs.root), names)
    if args.json:
        doc: dict[str, Any] = {"quotas": [{"entity": entity, "configs": quotas}
                                          for entity, quotas in found]}
        if users is not None:
            doc["users"] = users
        out.write(json.dumps(doc) + "\n")
        return EXIT_OK
    out.write("".join(_quota_line(entity, quotas, keys)
                      for entity, quotas, keys in _kafka_order(found)))
    for d in users or ():
        text = ", ".join(f"{c['mechanism']}=iterations={c['iterations']}"
                         for c in d["credentials"])
        out.write(f"SCRAM credential configs for user-principal '{d['user']}' are {text}\n")
    return EXIT_OK
