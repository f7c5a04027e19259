"""``kafkalog log-dirs``: Kafka's ``kafka-log-dirs.sh --describe`` over a broker's log dirs.

Source: ``tools/src/main/java/org/apache/kafka/tools/LogDirsCommand.java`` (Kafka 4.2) for the
options, the texts and the JSON; the figures are ``ReplicaManager.describeLogDirs`` and
``getLogEndOffsetLag`` (core, 4.2) over the dirs given instead of ``--bootstrap-server``::

    kafkalog log-dirs --describe /var/lib/kafka/data-1 /var/lib/kafka/data-2 --topic-list orders

prints::

    Querying brokers for log directories information
    Received log directory information from brokers 1
    {"brokers":[{"logDirs":[{"partitions":[{"partition":"orders-0","size":1024,...}],...}]}]...}

* one broker: the dirs' ``meta.properties`` node id (every dir must agree; 1 without one);
  ``--broker-list`` naming another is refused with Kafka's text;
* per log dir its absolute path, ``error`` null, and per partition held (``--topic-list``: of
  those topics) ``size`` (the bytes of its segments, ``UnifiedLog.size``), ``offsetLag``
  (``max(high watermark - log end offset, 0)`` for a current replica; for a ``-future`` one, the
  replica being moved here by ``kafka-reassign-partitions.sh``, how far its log end offset is
  behind the current replica's, -1 when no dir given holds the current one) and ``isFuture``;
* the JSON is Jackson's rendering of Kafka's ``HashMap``\\ s, keys and partitions in the
  ``HashMap`` iteration order (:func:`kafkalog.decoders.jvm_order.java_hash_map_order`). The
  partitions of one dir are inserted in the broker's response order; partitions that share a
  hash bucket may print in another order than Kafka's (the broker's per-topic grouping is a Scala
  map);
* ``__cluster_metadata`` is left out (a broker keeps it outside ``LogManager``), ``-delete`` and
  ``-stray`` dirs too (a broker describes neither).

Exit status: 0, 1 an error (Kafka's text on stderr), 2 usage.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..decoders.jvm_order import java_hash_map_order, java_string_hash, topic_partition_hash
from ..errors import KafkaLogError
from ..usage import ArgumentParser, parse_args
from . import EXIT_ERROR, EXIT_OK, EXIT_USAGE, CommandFailed, node_id, open_log_dir

if TYPE_CHECKING:
    from ..log_dir import LogDir

__all__ = ["main", "build_parser", "describe_log_dirs", "format_as_json", "hash_map_order",
           "ReplicaInfo"]

#: ``DescribeLogDirsResponse.INVALID_OFFSET_LAG``
INVALID_OFFSET_LAG = -1


class ReplicaInfo(dict):  # type: ignore[type-arg]
    """One partition of a log dir: ``partition`` (``t-p``), ``size``, ``offsetLag``,
    ``isFuture`` (Kafka's ``ReplicaInfo`` as the tool prints it)."""


def build_parser() -> argparse.ArgumentParser:
    """The ``kafkalog log-dirs`` argument parser."""
    p = ArgumentParser(prog="kafkalog log-dirs",
                       description="This tool helps to query log directory usage on the "
                                   "specified brokers (kafka-log-dirs.sh, offline: the log "
                                   "dirs given are one broker's).")
    p.add_argument("log_dirs", nargs="+", metavar="LOGDIR",
                   help="a broker's log.dirs entries")
    p.add_argument("--describe", action="store_true",
                   help="Describe the specified log directories on the specified brokers.")
    p.add_argument("--topic-list", default="", metavar="Topic list",
                   help='The list of topics to be queried in the form "topic1,topic2,topic3". '
                        "All topics will be queried if no topic list is specified")
    p.add_argument("--broker-list", default="", metavar="Broker list",
                   help='The list of brokers to be queried in the form "0,1,2". All brokers in '
                        "the cluster will be queried if no broker list is specified")
    return p


def _split(text: str) -> list[str]:
    return [x for x in text.split(",") if x]


def main(argv: Sequence[str] | None = None, *, stdout: IO[str] | None = None,
         stderr: IO[str] | None = None) -> int:
    """Run ``kafkalog log-dirs``; returns the exit status."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    args, status = parse_args(build_parser(), argv, err)
    if args is None:
        return status
    if not args.describe:
        # CommandLineUtils.checkRequiredArgs
        err.write('Missing required argument "[describe]"\n')
        return EXIT_USAGE
    try:
        brokers = {int(b) for b in _split(args.broker_list)}
    except ValueError as e:
        err.write(f"kafkalog log-dirs: --broker-list: {e}\n")
        return EXIT_USAGE
    try:
        broker, dirs = describe_log_dirs(args.log_dirs, set(_split(args.topic_list)))
        missing = brokers - {broker}
        if missing:
            raise CommandFailed(
                "ERROR: The given brokers do not exist from --broker-list: "
                f"{','.join(map(str, java_hash_map_order(sorted(missing), int)))}. "
                f"Current existent brokers: {broker}")
    except (CommandFailed, KafkaLogError, OSError) as e:
        err.write(f"{e}\n")
        return EXIT_ERROR
    out.write("Querying brokers for log directories information\n")
    out.write(f"Received log directory information from brokers {broker}\n")
    out.write(format_as_json({broker: dirs}) + "\n")
    return EXIT_OK


def _replica_infos(logs: LogDir, current: dict[tuple[str, int], int],
                   topics: set[str]) -> list[tuple[tuple[str, int], ReplicaInfo]]:
    """The partitions of one dir in the broker's response order (current, then future)."""
    from .. import files
    from ..log import Log
    from ..log_dir import METADATA_TOPIC

    infos: list[tuple[tuple[str, int], ReplicaInfo]] = []
    for topic, partition in logs.partitions():
        if topic == METADATA_TOPIC or (topics and topic not in topics):
            continue
        log = logs.log(topic, partition)
        lag = max(logs.high_watermark(topic, partition) - log.log_end_offset, 0)
        infos.append(((topic, partition), ReplicaInfo(
            partition=f"{topic}-{partition}", size=log.size, offsetLag=lag, isFuture=False)))
    for path in sorted(Path(logs.root).iterdir()):
        if not (path.is_dir() and files.is_future_dir(path)):
            continue
        topic, partition = files.parse_topic_partition_name(path)
        if topics and topic not in topics:
            continue
        with Log.open(path, read_only=True, standalone=False) as future:
            leo, size = future.log_end_offset, future.size
        cur = current.get((topic, partition))
        infos.append(((topic, partition), ReplicaInfo(
            partition=f"{topic}-{partition}", size=size,
            offsetLag=INVALID_OFFSET_LAG if cur is None else cur - leo, isFuture=True)))
    return infos


def describe_log_dirs(log_dirs: Sequence[str], topics: set[str] | None = None
                      ) -> tuple[int, dict[str, list[ReplicaInfo]]]:
    """``(broker id, {absolute log dir: [partition info, ...]})`` with the partitions of each
    dir in ``HashMap`` order (``topics``: only those; empty or None: all).

    Raises
    ------
    CommandFailed
        The dirs name different node ids (they are not one broker's).
    FileNotFoundError
        A dir that does not exist.
    """
    opened: list[LogDir] = []
    try:
        wanted = (lambda t, _p: t in topics) if topics else None
        for d in dict.fromkeys(log_dirs):  # config.logDirs.distinct()
            opened.append(open_log_dir(d, writable=False, partitions=wanted))
        ids = {node_id(logs) for logs in opened}
        if len(ids) > 1:
            raise CommandFailed("the log dirs belong to different brokers (node ids "
                                f"{', '.join(map(str, sorted(ids)))} in meta.properties)")
        current = {tp: logs.log(*tp).log_end_offset for logs in opened
                   for tp in logs.partitions()}
        result: dict[str, list[ReplicaInfo]] = {}
        for logs in opened:
            infos = _replica_infos(logs, current, topics or set())
            result[os.path.abspath(logs.root)] = hash_map_order([info for _, info in infos])
        return ids.pop(), result
    finally:
        for logs in opened:
            logs.close()


def _tp_hash(tp: tuple[str, int]) -> int:
    return topic_partition_hash(*tp)


def hash_map_order(infos: Sequence[ReplicaInfo]) -> list[ReplicaInfo]:
    """One dir's partitions, given in the broker's response order, in the order the tool prints
    them: the admin client puts them in a ``HashMap`` (``logDirDescriptions``), the tool's
    ``Collectors.toMap`` into another."""
    by_tp = {}
    for info in infos:
        topic, _, partition = info["partition"].rpartition("-")
        by_tp[(topic, int(partition))] = info
    order = java_hash_map_order(java_hash_map_order(list(by_tp), _tp_hash), _tp_hash)
    return [by_tp[tp] for tp in order]


def _hash_map(pairs: Sequence[tuple[str, Any]], capacity: int = 16) -> dict[str, Any]:
    order = java_hash_map_order([k for k, _ in pairs], java_string_hash, capacity)
    values = dict(pairs)
    return {k: values[k] for k in order}


def format_as_json(by_broker: dict[int, dict[str, list[ReplicaInfo]]]) -> str:
    """``LogDirsCommand.formatAsJson``: Jackson's compact JSON of its ``HashMap``\\ s.

    >>> format_as_json({1: {"/d": [ReplicaInfo(partition="t-0", size=5, offsetLag=0,
    ...                                        isFuture=False)]}})[:40]
    '{"brokers":[{"broker":1,"logDirs":[{"par'
    """
    brokers = []
    for broker in java_hash_map_order(list(by_broker), int):
        dirs = by_broker[broker]
        # KafkaAdminClient.logDirDescriptions: new HashMap<>(number of results)
        dir_order = java_hash_map_order(list(dirs), java_string_hash, len(dirs))
        log_dirs = [_hash_map([("logDir", d), ("error", None), ("partitions", [
            _hash_map([(k, info[k]) for k in ("partition", "size", "offsetLag", "isFuture")])
            for info in dirs[d]])]) for d in dir_order]
        brokers.append(_hash_map([("broker", broker), ("logDirs", log_dirs)]))
    return json.dumps(_hash_map([("version", 1), ("brokers", brokers)]),
                      separators=(",", ":"), ensure_ascii=False)
