"""``kafkalog topics``: Kafka's ``kafka-topics.sh`` over one log directory, offline.

Source: ``tools/src/main/java/org/apache/kafka/tools/TopicCommand.java`` (Kafka 3.9): the
options and their checks (``TopicCommandOptions.checkArgs``), the texts, and what the broker
answers (KRaft's ``ReplicationControlManager``: "Topic 'T' already exists.", the
``InvalidPartitionsException`` texts, "Unable to replicate the partition ...").

=====================================================  ========================================
``kafkalog topics LOGDIR --list``                      topic names, sorted, one a line
                                                       (``--exclude-internal``: without
                                                       ``__consumer_offsets``,
                                                       ``__transaction_state``,
                                                       ``__share_group_state``)
``... --describe [--topic T] [--topics-with-overrides]``  TopicCommand's lines (below)
``... --create --topic T [--partitions N] [--config k=v ...]``  "Created topic T."
``... --alter --topic T --partitions N``               add partitions (prints nothing, as Kafka)
``... --delete --topic T``                             delete the topic (prints nothing)
``--json``                                             JSON for ``--list`` and ``--describe``
``--metadata PATH``                                    ``--list``/``--describe`` the cluster's
                                                       topics from its KRaft metadata image
=====================================================  ========================================

With ``--metadata`` (a ``__cluster_metadata-0`` directory, a log dir holding one, a segment or a
snapshot) the topics are the cluster's, as ``kafka-topics.sh`` against it prints them (Kafka 4.2's
``TopicDescription``/``PartitionDescription``): every partition, ``Leader: none`` when it has
none, replicas, ISR and ELR lists comma-joined, ``Adding Replicas``/``Removing Replicas`` during
a reassignment, the topic's dynamic configs.

``--topic`` is a regular expression (Kafka's ``IncludeList``: commas mean "or", the whole name
must match; Python's ``re`` reads it) except with ``--create``. ``--if-exists`` (alter, delete,
describe) and ``--if-not-exists`` (create) silence the "does not exist"/"already exists"
failures as in Kafka.

``--describe`` prints, per topic, Kafka 3.9's lines::

    "Topic: orders\\tTopicId: 8P5...\\tPartitionCount: 2\\tReplicationFactor: 1\\tConfigs: a=1"
    "\\tTopic: orders\\tPartition: 0\\tLeader: 1\\tReplicas: 1\\tIsr: 1\\tElr: \\tLastKnownElr: "

``Configs`` lists the topic's overrides (sorted; a broker also lists its ``server.properties``
settings there, which a log dir does not hold). ``TopicId`` is left out for a topic without one,
as Kafka leaves out the zero id. ``PartitionCount`` counts the partitions this dir holds. The
single replica is the dir's ``node.id`` (:func:`~kafkalog.admin.node_id`). ``Elr``/
``LastKnownElr``: Kafka 3.9's admin client prints the lists a KRaft broker returns through
DescribeTopicPartitions, empty when ELR is off (``PartitionRegistration`` keeps empty arrays), and
``N/A`` when it fell back to a Metadata request (a ZooKeeper-mode broker, which has no
DescribeTopicPartitions): empty for a KRaft dir (``meta.properties`` version 1), ``N/A`` for a
ZooKeeper-era dir (version 0).

Errors print TopicCommand's "Error while executing topic command : <message>" (on stderr; Kafka
prints it on stdout) and exit 1, e.g. "Topic 'Optional[T]' does not exist as expected" (Kafka 3.9
formats the ``Optional`` as it is). A dir that cannot be opened (missing, locked by a running
broker for the writing actions) prints "kafkalog topics: <path>: <reason>".

Example
-------
>>> import tempfile
>>> d = tempfile.mkdtemp()
>>> main([d, "--create", "--topic", "orders", "--partitions", "2"])
Created topic orders.
0
>>> main([d, "--list"])
orders
0
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Any

from ..errors import ConfigError, KafkaLogError
from ..groups.java_order import java_string_key
from ..usage import ArgumentParser, UsageError, parse_args
from . import (
    EXIT_ERROR,
    EXIT_OK,
    EXIT_USAGE,
    INTERNAL_TOPICS,
    CommandFailed,
    listed_topics,
    node_id,
    open_error_text,
    open_log_dir,
)
from .configs_command import check_topic_config

if TYPE_CHECKING:
    from ..log_dir import LogDir

__all__ = ["main", "build_parser"]

ACTIONS = ("list", "describe", "create", "alter", "delete")
#: the actions that change the dir (they take its lock)
WRITING_ACTIONS = frozenset({"create", "alter", "delete"})
#: Short.MAX_VALUE: TopicCommand's replication factor bound
_MAX_REPLICATION_FACTOR = 32767

#: ReplicationControlManager.MAX_PARTITIONS_PER_BATCH: the most partitions one CreateTopics
#: request creates (and QuorumController.MAX_RECORDS_PER_USER_OP, one record each, for
#: CreatePartitions)
MAX_PARTITIONS_PER_REQUEST = 10_000


def _java_int(text: str) -> int:
    # joptsimple's Integer conversion
    try:
        value = int(text, 10)
    except ValueError:
        value = None
    if value is None or not -(1 << 31) <= value < (1 << 31):
        raise argparse.ArgumentTypeError(
            f"Cannot parse argument '{text}' of type java.lang.Integer")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The ``kafkalog topics`` argument parser."""
    p = ArgumentParser(prog="kafkalog topics",
                       description="Create, delete, describe, or change a topic of a log "
                                   "directory (kafka-topics.sh, offline).")
    p.add_argument("log_dir", help="a broker log directory (log.dirs entry)")
    p.add_argument("--list", action="store_true", help="List all available topics.")
    p.add_argument("--describe", action="store_true", help="List details for the given topics.")
    p.add_argument("--create", action="store_true", help="Create a new topic.")
    p.add_argument("--alter", action="store_true",
                   help="Alter the number of partitions (topic configs: kafkalog configs).")
    p.add_argument("--delete", action="store_true", help="Delete a topic")
    p.add_argument("--topic", help="The topic to create, alter, describe or delete. It also "
                                   "accepts a regular expression, except for --create.")
    p.add_argument("--partitions", type=_java_int, metavar="N",
                   help="The number of partitions for the topic being created (default 1) or "
                        "altered.")
    p.add_argument("--replication-factor", type=_java_int, metavar="N",
                   help="The replication factor (a log dir holds one replica: 1).")
    p.add_argument("--config", action="append", metavar="name=value",
                   help="A topic configuration override for the topic being created "
                        "(repeatable).")
    p.add_argument("--if-exists", action="store_true",
                   help="if set when altering, deleting or describing topics, the action will "
                        "only execute if the topic exists.")
    p.add_argument("--if-not-exists", action="store_true",
                   help="if set when creating topics, the action will only execute if the "
                        "topic does not already exist.")
    p.add_argument("--exclude-internal", action="store_true",
                   help="exclude internal topics when running list or describe command.")
    p.add_argument("--topics-with-overrides", action="store_true",
                   help="if set when describing topics, only show topics that have overridden "
                        "configs")
    p.add_argument("--json", action="store_true", help="print JSON (with --list, --describe)")
    p.add_argument("--metadata", metavar="PATH",
                   help="list or describe the cluster's topics from its KRaft metadata (a "
                   "__cluster_metadata-0 directory, a log dir holding one, a segment or a "
                   "snapshot): every partition, its leader, replicas, ISR and ELR, as "
                   "kafka-topics.sh shows them, instead of the partitions this dir holds")
    return p


def main(argv: Sequence[str] | None = None, *, stdout: IO[str] | None = None,
         stderr: IO[str] | None = None) -> int:
    """Run ``kafkalog topics``; returns the exit status."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    args, status = parse_args(build_parser(), argv, err)
    if args is None:
        return status
    try:
        action = _check_options(args)
    except UsageError as e:
        err.write(f"kafkalog topics: error: {e}\n")
        return EXIT_USAGE
    wanted = None
    if action not in WRITING_ACTIONS and args.topic is not None:
        # only the partitions of the topics asked for are loaded: a damaged partition of
        # another topic does not stop the command
        try:
            rx = _topic_regex(args.topic)
        except CommandFailed as e:
            err.write(f"Error while executing topic command : {e}\n")
            return EXIT_ERROR

        def wanted(topic: str, partition: int, rx: re.Pattern[str] = rx) -> bool:
            return rx.fullmatch(topic) is not None
    try:
        logs = open_log_dir(args.log_dir, writable=action in WRITING_ACTIONS,
                            partitions=wanted)
    except (KafkaLogError, OSError) as e:
        err.write(f"kafkalog topics: {open_error_text(e)}\n")
        return EXIT_ERROR
    try:
        run = {"list": _list, "describe": _describe, "create": _create, "alter": _alter,
               "delete": _delete}[action]
        return run(logs, args, out)
    except (CommandFailed, ConfigError) as e:
        # TopicCommand.printException (its stack trace goes to its log only)
        err.write(f"Error while executing topic command : {e}\n")
        return EXIT_ERROR
    except (KafkaLogError, OSError) as e:
        err.write(f"kafkalog topics: {e}\n")
        return EXIT_ERROR
    finally:
        logs.close()


def _check_options(args: argparse.Namespace) -> str:
    """``TopicCommandOptions.checkArgs`` (Kafka's texts); returns the action."""
    given = [a for a in ACTIONS if getattr(args, a)]
    if len(given) != 1:
        raise UsageError("Command must include exactly one action: --list, --describe, "
                         "--create, --alter or --delete")
    action = given[0]
    if action not in ("list", "describe") and args.topic is None:
        raise UsageError('Missing required argument "[topic]"')
    if action == "alter":
        if args.config:
            raise UsageError('Option "[config]" can\'t be used with option "[alter]" (kafkalog '
                             'configs alters topic configs)')
        if args.partitions is None:
            raise UsageError('Missing required argument "[partitions]"')
    allowed = {"config": ("create",), "partitions": ("create", "alter"),
               "replication_factor": ("create",), "if_exists": ("alter", "delete", "describe"),
               "if_not_exists": ("create",), "exclude_internal": ("list", "describe"),
               "topics_with_overrides": ("describe",), "json": ("list", "describe"),
               "metadata": ("list", "describe")}
    for option, actions in allowed.items():
        value = getattr(args, option)
        if value not in (None, False) and action not in actions:
            flag = option.replace("_", "-")
            raise UsageError(f'Option "[{flag}]" can\'t be used with option "[{action}]"')
    return action


def _matching(logs: LogDir, pattern: str | None, exclude_internal: bool,
              names: list[str] | None = None) -> list[str]:
    """``TopicService.getTopics``: the dir's topics (or ``names``; sorted) that the ``--topic``
    regular expression matches (``TopicFilter.IncludeList``), internal ones dropped on
    request."""
    topics = listed_topics(logs) if names is None else sorted(names, key=java_string_key)
    if pattern is None:
        return [t for t in topics if not (exclude_internal and t in INTERNAL_TOPICS)]
    compiled = _topic_regex(pattern)
    return [t for t in topics if compiled.fullmatch(t)
            and not (exclude_internal and t in INTERNAL_TOPICS)]


def _topic_regex(pattern: str) -> re.Pattern[str]:
    """``TopicFilter.IncludeList``'s regular expression: trimmed, ',' means '|', spaces and
    surrounding quotes dropped."""
    regex = re.sub(r"[\"']+$", "", re.sub(r"^[\"']+", "",
                                          pattern.strip().replace(",", "|").replace(" ", "")))
    try:
        return re.compile(regex)
    except re.error:
        raise CommandFailed(f"{regex} is an invalid regex.") from None


def _ensure_exists(found: list[str], requested: str | None, if_exists: bool) -> None:
    """``ensureTopicExists``: Kafka 3.9 formats the ``Optional`` it holds, text as is."""
    if requested and not if_exists and not found:
        raise CommandFailed(f"Topic 'Optional[{requested}]' does not exist as expected")


def _image(args: argparse.Namespace) -> Any:
    """The metadata image ``--metadata`` names (None without it)."""
    if not args.metadata:
        return None
    from ..cluster.image import load_metadata_image

    return load_metadata_image(args.metadata)


def _list(logs: LogDir, args: argparse.Namespace, out: IO[str]) -> int:
    image = _image(args)
    names = None if image is None else list(image.topics_by_name)
    topics = _matching(logs, args.topic, args.exclude_internal, names)
    if args.json:
        out.write(json.dumps({"topics": topics}) + "\n")
    else:
        # println of the joined names: an empty line when there are none, as Kafka prints
        out.write("\n".join(topics) + "\n")
    return EXIT_OK


def _topic_description(logs: LogDir, topic: str) -> dict[str, Any]:
    from ..log_dir import config_to_properties

    effective = config_to_properties(logs.topic_config(topic))
    node = node_id(logs)
    tid = logs.topic_id(topic)
    partitions = []
    for t, p in logs.partitions():
        if t != topic:
            continue
        log = logs.log(t, p)
        partitions.append({"partition": p, "leader": node, "replicas": [node], "isr": [node],
                           "log_start_offset": log.log_start_offset,
                           "log_end_offset": log.log_end_offset,
                           "high_watermark": logs.high_watermark(t, p)})
    return {"topic": topic, "topic_id": None if tid is None else str(tid),
            "partition_count": len(partitions), "replication_factor": 1,
            # the effective value, as a broker shows an override (its parsed form)
            "configs": {k: effective.get(k, v) for k, v in sorted(
                logs.topic_overrides(topic).items())},
            "partitions": partitions}


def _image_topic_description(image: Any, topic: str) -> dict[str, Any]:
    """A topic as the cluster describes it (DescribeTopicPartitions over the metadata image):
    every partition with its leader (-1: none), replicas, ISR, ELR and reassignment."""
    t = image.topics_by_name[topic]
    parts = []
    for pid, p in sorted(t.partitions.items()):
        parts.append({"partition": pid, "leader": p.leader, "replicas": list(p.replicas),
                      "isr": list(p.isr), "elr": list(p.elr),
                      "last_known_elr": list(p.last_known_elr),
                      "adding_replicas": list(p.adding_replicas),
                      "removing_replicas": list(p.removing_replicas)})
    first = parts[0] if parts else None
    # TopicCommand.getReplicationFactor: a reassignment's adding replicas are not counted
    rf = 0 if first is None else len(first["replicas"]) - len(first["adding_replicas"])
    return {"topic": topic, "topic_id": t.id, "partition_count": len(parts),
            "replication_factor": rf,
            "configs": dict(sorted(image.configs.get((2, topic), {}).items())),
            "partitions": parts}


def _describe(logs: LogDir, args: argparse.Namespace, out: IO[str]) -> int:
    """``describeTopic``: the topic line, then one line per partition (the dir's own
    partitions, or with ``--metadata`` the cluster's)."""
    image = _image(args)
    names = None if image is None else list(image.topics_by_name)
    topics = _matching(logs, args.topic, args.exclude_internal, names)
    _ensure_exists(topics, args.topic, args.if_exists)
    described = [_topic_description(logs, t) if image is None
                 else _image_topic_description(image, t) for t in topics]
    if args.topics_with_overrides:
        described = [d for d in described if d["configs"]]
    if args.json:
        out.write(json.dumps({"topics": described}) + "\n")
        return EXIT_OK
    # Kafka 3.9's admin client: KRaft brokers return the ELR lists (empty when ELR is off),
    # ZooKeeper-mode brokers none at all ("N/A")
    no_elr = "N/A" if image is None and logs.meta is not None and logs.meta.version == 0 \
        else None
    lines = []
    for d in described:
        configs = ",".join(f"{k}={v}" for k, v in d["configs"].items())
        tid = f"\tTopicId: {d['topic_id']}" if d["topic_id"] is not None else ""
        lines.append(f"Topic: {d['topic']}{tid}\tPartitionCount: {d['partition_count']}"
                     f"\tReplicationFactor: {d['replication_factor']}\tConfigs: {configs}")
        if args.topics_with_overrides:
            continue            # DescribeOptions.describePartitions
        lines += [_partition_line(d["topic"], p, no_elr) for p in d["partitions"]]
    out.write("".join(line + "\n" for line in lines))
    return EXIT_OK


def _partition_line(topic: str, p: dict[str, Any], no_elr: str | None) -> str:
    """``PartitionDescription.printDescription``: ``Leader: none`` without a leader, the
    node lists comma-joined, the reassignment's replicas while one runs."""

    def ids(nodes: list[int]) -> str:
        return ",".join(str(n) for n in nodes)

    leader = "none" if p["leader"] < 0 else p["leader"]
    moving = ""
    if p.get("adding_replicas") or p.get("removing_replicas"):
        moving = (f"\tAdding Replicas: {ids(p['adding_replicas'])}"
                  f"\tRemoving Replicas: {ids(p['removing_replicas'])}")
    elr = no_elr if no_elr is not None else ids(p.get("elr", []))
    last_known = no_elr if no_elr is not None else ids(p.get("last_known_elr", []))
    return (f"\tTopic: {topic}\tPartition: {p['partition']}\tLeader: {leader}"
            f"\tReplicas: {ids(p['replicas'])}\tIsr: {ids(p['isr'])}{moving}"
            f"\tElr: {elr}\tLastKnownElr: {last_known}")


def _parse_topic_configs(specs: list[str] | None) -> dict[str, str]:
    """``parseTopicConfigsToBeAdded``: each ``--config`` split on ``=`` (Java's split: trailing
    empty parts dropped), exactly a key and a value."""
    props: dict[str, str] = {}
    for spec in specs or []:
        parts = re.split(r"\s*=\s*", spec)
        while parts and parts[-1] == "":
            parts.pop()
        if len(parts) != 2:
            raise CommandFailed('requirement failed: Invalid topic config: all configs to be '
                                'added must be in the format "key=val".')
        props[parts[0].strip()] = parts[1].strip()
    return props


def _create(logs: LogDir, args: argparse.Namespace, out: IO[str]) -> int:
    """``createTopic``: the config checks, the collision warning, the count checks, then the
    broker's (one here: replication factor 1)."""
    from ..log_dir import METADATA_TOPIC, TopicExistsError

    topic = args.topic
    overrides = _parse_topic_configs(args.config)
    check_topic_config(logs, overrides)     # LogConfig.validate, before anything is created
    if "_" in topic or "." in topic:
        out.write("WARNING: Due to limitations in metric names, topics with a period ('.') or "
                  "underscore ('_') could collide. To avoid issues it is best to use either, "
                  "but not both.\n")
    rf = args.replication_factor
    if rf is not None and not 1 <= rf <= _MAX_REPLICATION_FACTOR:
        raise CommandFailed(f"The replication factor must be between 1 and "
                            f"{_MAX_REPLICATION_FACTOR} inclusive")
    if args.partitions is not None and args.partitions < 1:
        raise CommandFailed("The partitions must be greater than 0")
    if topic == METADATA_TOPIC:
        raise CommandFailed(f"Creation of internal topic {METADATA_TOPIC} is prohibited.")
    if (args.partitions or 1) > MAX_PARTITIONS_PER_REQUEST:
        # the controller's validateTotalNumberOfPartitions, before any other of its checks
        raise CommandFailed("Excessively large number of partitions per request.")
    if rf is not None and rf > 1:
        raise CommandFailed(f"Unable to replicate the partition {rf} time(s): The target "
                            f"replication factor of {rf} cannot be reached because only 1 "
                            "broker(s) are registered.")
    existing = listed_topics(logs)
    if topic in existing:
        if args.if_not_exists:
            return EXIT_OK
        raise CommandFailed(f"Topic '{topic}' already exists.")
    colliding = [t for t in existing if t.replace(".", "_") == topic.replace(".", "_")]
    if colliding:
        raise CommandFailed(f"Topic '{topic}' collides with existing topic: {colliding[0]}")
    try:
        # num.partitions (Kafka's default 1) when --partitions is not given
        logs.create_topic(topic, args.partitions or 1, overrides)
    except TopicExistsError:
        # an entry of ours without partition directories (a crash between the two writes)
        raise CommandFailed(f"Topic '{topic}' already exists.") from None
    except ValueError as e:     # an illegal name (Kafka's Topic.validate text)
        raise CommandFailed(getattr(e, "message", str(e))) from None
    out.write(f"Created topic {topic}.\n")
    return EXIT_OK


def _alter(logs: LogDir, args: argparse.Namespace, out: IO[str]) -> int:
    """``alterTopic``: grow every matching topic to ``--partitions``."""
    from ..log_dir import InvalidPartitionsError

    topics = _matching(logs, args.topic, False)
    _ensure_exists(topics, args.topic, args.if_exists)
    added = 0
    for topic in topics:
        declared = logs.declared_partitions(topic)
        current = declared if declared is not None else sum(
            1 for t, _ in logs.partitions() if t == topic)
        added += max(0, args.partitions - current)
        if added > MAX_PARTITIONS_PER_REQUEST:
            # one request for all the topics: the controller's list of records overflows
            # (UNKNOWN_SERVER_ERROR, the admin client's UnknownServerException text)
            raise CommandFailed("The server experienced an unexpected error when processing "
                                "the request.")
        try:
            logs.create_partitions(topic, args.partitions)
        except InvalidPartitionsError as e:
            raise CommandFailed(e.message) from None
    return EXIT_OK


def _delete(logs: LogDir, args: argparse.Namespace, out: IO[str]) -> int:
    """``deleteTopic``: every matching topic (internal ones too, as Kafka does)."""
    topics = _matching(logs, args.topic, False)
    _ensure_exists(topics, args.topic, args.if_exists)
    for topic in topics:
        logs.delete_topic(topic)
    return EXIT_OK
