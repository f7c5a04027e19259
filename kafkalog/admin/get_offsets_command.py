"""``kafkalog get-offsets``: Kafka's ``kafka-get-offsets.sh`` (``GetOffsetShell``) over log dirs.

Source: ``tools/src/main/java/org/apache/kafka/tools/GetOffsetShell.java`` (Kafka 4.2) for the
options, the texts and the output, its filters in :mod:`.topic_partition_filter`; the offsets
are what the broker's ListOffsets answers (:mod:`kafkalog.list_offsets`).

``kafkalog get-offsets LOGDIR [LOGDIR ...]`` takes one broker's ``log.dirs`` entries instead of
``--bootstrap-server``, and prints ``topic:partition:offset`` for every matching partition they
hold, sorted as Kafka sorts them (by ``TopicPartition.toString``)::

    kafkalog get-offsets /var/lib/kafka/data --topic-partitions 'orders:0-3' --time earliest

* ``--topic-partitions`` takes Kafka's comma-separated rules ``TOPIC_REGEX[:PARTITIONS]``, where
  PARTITIONS is ``N``, ``N-M`` (M excluded), ``N-`` or ``-M``; ``--topic`` (a regex) and
  ``--partitions`` (ids) are the other way, and cannot be combined with it.
* ``--time``: a timestamp in ms, or ``-1``/``latest`` (default), ``-2``/``earliest``,
  ``-3``/``max-timestamp``, ``-4``/``earliest-local``, ``-5``/``latest-tiered``,
  ``-6``/``earliest-pending-upload``.
* Latest is the high watermark (``replication-offset-checkpoint``, within the log's offsets),
  or with ``--isolation read_committed`` (not in Kafka's tool; the admin client's option) the
  last stable offset. A partition with no answer (a timestamp past the last record, nothing
  tiered) prints nothing, as in Kafka.
* Tiered storage: a partition has it when the dirs hold ``__remote_log_metadata`` events for
  its topic id (``remote.storage.enable`` is a topic config, which a broker keeps in the
  cluster metadata, not in its log dirs; a tiered topic with no event yet reads as untiered).
  Then earliest is the remote log start offset, and earliest-local, latest-tiered and
  earliest-pending-upload follow the metadata as the leader would. A timestamp whose record
  may be in a copied remote segment is searched in it, as the broker does, when a copy of the
  bucket is given (``--objects``, Aiven plugin objects, ``--private-key`` for encrypted ones:
  the segment is restored into a scratch directory with every check of ``kafkalog
  tiered-restore``); otherwise the partition is skipped with Kafka's "Skip getting offsets for
  topic-partition" line on stderr naming the segment.
* ``--json`` (not in Kafka's tool) prints every answer with its timestamp and leader epoch, and
  the skipped partitions with their reasons.

Exit status: 0 (skipped partitions included, as Kafka's tool), 1 an error ("Error occurred:
..." on stderr: bad --time, no partition matched, conflicting options), 2 usage.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

from ..errors import KafkaLogError
from ..log import (
    EARLIEST_LOCAL_TIMESTAMP,
    EARLIEST_PENDING_UPLOAD_TIMESTAMP,
    EARLIEST_TIMESTAMP,
    LATEST_TIERED_TIMESTAMP,
    LATEST_TIMESTAMP,
    MAX_TIMESTAMP,
)
from ..usage import ArgumentParser, UsageError, parse_args
from . import (
    EXIT_ERROR,
    EXIT_OK,
    EXIT_USAGE,
    INTERNAL_TOPICS,
    CommandFailed,
    hold_partitions,
    open_log_dir,
)
from .topic_partition_filter import (
    TOPIC_PARTITION_PATTERN,
    TopicPartitionFilter,
    topic_and_partitions_filter,
    topic_partition_filter,
)

if TYPE_CHECKING:
    from ..list_offsets import RemoteLogState, RemoteTimestampReader, TimestampAndOffset
    from ..log_dir import LogDir
    from ..tiered.metadata_cache import RemoteLogMetadataCache

__all__ = ["main", "build_parser", "parse_offset_spec", "topic_partition_filter",
           "topic_and_partitions_filter", "TopicPartitionFilter", "USAGE_TEXT"]

USAGE_TEXT = "An interactive shell for getting topic-partition offsets."
_TIME_HELP = ("<timestamp> / -1 or latest / -2 or earliest / -3 or max-timestamp / -4 or "
              "earliest-local / -5 or latest-tiered / -6 or earliest-pending-upload")
_NAMED_TIMES = {"earliest": EARLIEST_TIMESTAMP, "latest": LATEST_TIMESTAMP,
                "max-timestamp": MAX_TIMESTAMP, "earliest-local": EARLIEST_LOCAL_TIMESTAMP,
                "latest-tiered": LATEST_TIERED_TIMESTAMP,
                "earliest-pending-upload": EARLIEST_PENDING_UPLOAD_TIMESTAMP}
_JAVA_LONG = re.compile(r"[+-]?[0-9]+")


def parse_offset_spec(text: str) -> int:
    """``parseOffsetSpec``: the ListOffsets timestamp ``--time`` names.

    >>> parse_offset_spec("earliest"), parse_offset_spec("-3"), parse_offset_spec("1700000000000")
    (-2, -3, 1700000000000)

    Raises
    ------
    CommandFailed
        Neither a name nor a Java long.
    """
    if text in _NAMED_TIMES:
        return _NAMED_TIMES[text]
    if _JAVA_LONG.fullmatch(text) and -(1 << 63) <= int(text) < (1 << 63):
        return int(text)
    raise CommandFailed(
        f"Malformed time argument {text}. Please use -1 or latest / -2 or earliest / -3 or "
        "max-timestamp / -4 or earliest-local / -5 or latest-tiered / -6 or "
        "earliest-pending-upload, or a specified long format timestamp")


def build_parser() -> argparse.ArgumentParser:
    """The ``kafkalog get-offsets`` argument parser."""
    p = ArgumentParser(prog="kafkalog get-offsets",
                       description=USAGE_TEXT + " (kafka-get-offsets.sh, offline: the "
                                   "partitions held in the given log dirs)")
    p.add_argument("log_dirs", nargs="+", metavar="LOGDIR",
                   help="a broker's log.dirs entries (every one holding partitions to report)")
    p.add_argument("--topic-partitions", metavar="topic1:1,topic2:0-3,topic3,topic4:5-,topic5:-3",
                   help="Comma separated list of topic-partition patterns to get the offsets "
                        "for, with the format of '" + TOPIC_PARTITION_PATTERN.pattern + "'. "
                        "The first group is an optional regex for the topic name, if omitted, "
                        "it matches any topic name. The section after ':' describes a "
                        "'partition' pattern, which can be: a number, a range in the format of "
                        "'NUMBER-NUMBER' (lower inclusive, upper exclusive), an inclusive lower "
                        "bound in the format of 'NUMBER-', an exclusive upper bound in the "
                        "format of '-NUMBER' or may be omitted to accept all partitions.")
    p.add_argument("--topic", metavar="topic",
                   help="The topic to get the offsets for. It also accepts a regular "
                        "expression. If not present, all topics are queried. Cannot be used if "
                        "--topic-partitions is present.")
    p.add_argument("--partitions", metavar="partition ids",
                   help="Comma separated list of partition ids to get the offsets for. If not "
                        "present, all partitions of the topics are queried. Cannot be used if "
                        "--topic-partitions is present.")
    p.add_argument("--time", default="latest", metavar=_TIME_HELP,
                   help="timestamp of the offsets before that. [Note: No offset is returned, if "
                        "the timestamp greater than recently committed record timestamp is "
                        "given.] (default: latest)")
    p.add_argument("--exclude-internal-topics", action="store_true",
                   help="By default, internal topics are included. If specified, internal "
                        "topics are excluded.")
    p.add_argument("--isolation", choices=("read_uncommitted", "read_committed"),
                   default="read_uncommitted",
                   help="latest and the bound on other answers: the high watermark "
                        "(read_uncommitted, Kafka's tool) or the last stable offset")
    p.add_argument("--json", action="store_true",
                   help="print the answers (with timestamp and leader epoch) and the skipped "
                        "partitions as JSON")
    p.add_argument("--objects", action="append", default=[], metavar="PATH",
                   help="a copy of the tiered storage bucket (Aiven plugin objects): a "
                        "timestamp whose record is in a remote segment is searched there; "
                        "repeatable")
    p.add_argument("--private-key", action="append", default=[], metavar="ID=FILE",
                   help="PEM private key of key pair ID, for encrypted remote segments")
    return p


def main(argv: Sequence[str] | None = None, *, stdout: IO[str] | None = None,
         stderr: IO[str] | None = None) -> int:
    """Run ``kafkalog get-offsets``; returns the exit status."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    args, status = parse_args(build_parser(), argv, err)
    if args is None:
        return status
    try:
        if args.topic_partitions is not None and (args.topic is not None
                                                  or args.partitions is not None):
            raise CommandFailed("--topic-partitions cannot be used with --topic or --partitions")
        timestamp = parse_offset_spec(args.time)
        flt = (topic_partition_filter(args.topic_partitions)
               if args.topic_partitions is not None
               else topic_and_partitions_filter(args.topic, args.partitions))
        with contextlib.ExitStack() as stack:
            reader = None
            if args.objects:
                from ..tiered.aiven_rsm.command import private_keys
                from ..tiered.aiven_rsm.remote_reader import BucketCopy

                keys = private_keys(args.private_key, "kafkalog get-offsets")
                reader = stack.enter_context(BucketCopy(args.objects, keys)).lookup_timestamp
            answers, skipped = fetch_offsets(
                args.log_dirs, flt, timestamp,
                exclude_internal_topics=args.exclude_internal_topics,
                read_committed=args.isolation == "read_committed", remote_reader=reader)
    except UsageError as e:
        err.write(f"{e}\n")
        return EXIT_USAGE
    except (CommandFailed, KafkaLogError, OSError) as e:
        err.write(f"Error occurred: {e}\n")
        return EXIT_ERROR
    for (topic, partition), reason in skipped:
        err.write(f"Skip getting offsets for topic-partition {topic}-{partition} due to "
                  f"error: {reason}\n")
    if args.json:
        out.write(json.dumps({
            "offsets": [{"topic": t, "partition": p, "offset": a.offset,
                         "timestamp": a.timestamp, "leaderEpoch": a.leader_epoch}
                        for (t, p), a in answers],
            "skipped": [{"topic": t, "partition": p, "error": reason}
                        for (t, p), reason in skipped]}, indent=2) + "\n")
    else:
        for (topic, partition), a in answers:
            out.write(f"{topic}:{partition}:{a.offset}\n")
    return EXIT_OK


def _java_order(tp: tuple[str, int]) -> bytes:
    # TreeMap(Comparator.comparing(TopicPartition::toString)): String.compareTo, UTF-16 units
    return f"{tp[0]}-{tp[1]}".encode("utf-16-be")


def fetch_offsets(log_dirs: Sequence[str], flt: TopicPartitionFilter, timestamp: int, *,
                  exclude_internal_topics: bool = False, read_committed: bool = False,
                  remote_reader: RemoteTimestampReader | None = None
                  ) -> tuple[list[tuple[tuple[str, int], TimestampAndOffset]],
                             list[tuple[tuple[str, int], str]]]:
    """``GetOffsetShell.fetchOffsets`` over ``log_dirs``: the answers in Kafka's order, and the
    partitions skipped with the reason.

    Raises
    ------
    CommandFailed
        No partition held matches ("Could not match any topic-partitions with the specified
        filters"), or two dirs hold the same partition.
    """
    from ..tiered.metadata_store import read_log_dirs

    opened: list[LogDir] = []
    try:
        held: dict[tuple[str, int], LogDir] = {}
        def wanted(topic: str, partition: int) -> bool:
            return (not (exclude_internal_topics and topic in INTERNAL_TOPICS)
                    and flt.is_topic_partition_allowed(topic, partition))

        for d in log_dirs:
            # (only the matching partitions are loaded: a few of a broker's thousands)
            logs = open_log_dir(d, writable=False, partitions=wanted)
            opened.append(logs)
            hold_partitions(held, logs, wanted)
        if not held:
            raise CommandFailed("Could not match any topic-partitions with the specified filters")
        store = read_log_dirs(log_dirs)
        answers = []
        skipped = []
        # the remote metadata by partition, then topic id
        caches: dict[tuple[str, int], dict[str, RemoteLogMetadataCache]] = {}
        for tip, cache in store.caches.items():
            caches.setdefault((tip.topic, tip.partition), {})[tip.topic_id] = cache
        checkpoints: dict[Path, dict[tuple[str, int], int]] = {}
        for tp in sorted(held, key=_java_order):
            try:
                found = _fetch_one(held[tp], tp, timestamp, caches, read_committed, checkpoints,
                                   remote_reader)
            except KafkaLogError as e:
                skipped.append((tp, str(e)))
                continue
            if found is not None and found.offset != -1:
                answers.append((tp, found))
        return answers, skipped
    finally:
        for logs in opened:
            logs.close()


def _remote_state(logs: LogDir, topic: str, partition: int,
                  caches: dict[tuple[str, int], dict[str, RemoteLogMetadataCache]],
                  checkpoints: dict[Path, dict[tuple[str, int], int]]
                  ) -> RemoteLogState | None:
    """The partition's tiered state: its remote metadata under its own topic id (one of
    another incarnation of the topic is not its), None when it has none."""
    from ..tiered.remote_offsets import remote_log_state

    by_id = caches.get((topic, partition))
    topic_id = logs.topic_id(topic) if by_id else None
    cache = by_id.get(str(topic_id)) if by_id and topic_id is not None else None
    if cache is None:
        return None
    if logs.root not in checkpoints:
        checkpoints[logs.root] = _checkpointed_log_start_offsets(logs)
    return remote_log_state(cache, logs.log(topic, partition),
                            checkpointed_log_start_offset=checkpoints[logs.root].get(
                                (topic, partition), 0))


def _checkpointed_log_start_offsets(logs: LogDir) -> dict[tuple[str, int], int]:
    """The dir's ``log-start-offset-checkpoint`` as written (a tiered log's entry may lie below
    its local segments, which ``Log`` clamps to); empty when absent or unreadable."""
    from .. import files
    from ..checkpoint import OffsetCheckpointFile
    from ..errors import CorruptCheckpointError

    path = logs.root / files.LOG_START_OFFSET_CHECKPOINT_FILE
    try:
        return OffsetCheckpointFile(path).read() if path.exists() else {}
    except (CorruptCheckpointError, OSError):
        return {}


def _fetch_one(logs: LogDir, tp: tuple[str, int], timestamp: int,
               caches: dict[tuple[str, int], dict[str, RemoteLogMetadataCache]],
               read_committed: bool,
               checkpoints: dict[Path, dict[tuple[str, int], int]],
               remote_reader: RemoteTimestampReader | None) -> TimestampAndOffset | None:
    from ..list_offsets import fetch_offset_for_timestamp

    topic, partition = tp
    log = logs.log(topic, partition)
    hw = logs.high_watermark(topic, partition)
    # (Log.last_stable_offset bounds by the log end offset; a broker's by the high watermark)
    last_fetchable = min(log.last_stable_offset, hw) if read_committed else hw
    entries = log.leader_epoch_entries
    remote = _remote_state(logs, topic, partition, caches, checkpoints)
    if remote is not None and remote_reader is not None:
        remote = remote._replace(reader=remote_reader)
    return fetch_offset_for_timestamp(
        log, timestamp, last_fetchable_offset=last_fetchable,
        leader_epoch=entries[-1][0] if entries else -1, remote=remote)
