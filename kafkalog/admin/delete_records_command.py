"""``kafkalog delete-records``: Kafka's ``kafka-delete-records.sh`` over a log dir, offline.

Source: ``tools/src/main/java/org/apache/kafka/tools/DeleteRecordsCommand.java`` (Kafka 3.9)
for the file format, the duplicate check and the output; the per-partition rules are the
broker's (``ReplicaManager.deleteRecordsOnLocalLog``, ``Partition.deleteRecordsOnLeader``,
``UnifiedLog.maybeIncrementLogStartOffset``, core, 3.9) and the error texts the admin client
makes of the response's error codes (``Errors``; a DeleteRecords response carries no message).

``kafkalog delete-records LOGDIR --offset-json-file FILE`` with FILE::

    {"partitions": [{"topic": "orders", "partition": 0, "offset": 20}], "version": 1}

advances each partition's log start offset to ``offset`` (-1: the high watermark); the records
below it are no longer readable and whole segments below it go at the next retention run, as on
a broker. Output::

    Executing records delete operation
    Records delete operation completed:
    partition: orders-0\\tlow_watermark: 20

a failed partition prints ``partition: T-P\\terror: <exception>: <text>`` (Kafka's line: the
exception as the admin client builds it from the error code) and, on stderr, the reason a
broker gives in its log. Per partition, in the broker's order:

* a topic the dir does not hold: ``UnknownTopicOrPartitionException`` (the admin client's
  metadata lookup text); a partition it does not hold: the same exception, ``Errors``' text;
* an internal topic (``__consumer_offsets``, ...): ``InvalidTopicException``;
* a topic whose ``cleanup.policy`` lacks ``delete``: ``PolicyViolationException``;
* an offset below -1 or above the high watermark: ``OffsetOutOfRangeException``.

An offset at or below the log start offset changes nothing (the low watermark is the current
log start offset). Partitions are reported in the file's order (Kafka: its map's order).

Exit status: 0 when every partition succeeded, 1 when one failed (Kafka's tool exits 0 there)
or the file is refused before anything is done (unreadable, not Kafka's format, a partition
named twice: "Offset json file contains duplicate topic partitions: t-0"), 2 usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..errors import KafkaLogError, OffsetOutOfRangeError
from ..usage import ArgumentParser, parse_args
from . import (
    EXIT_ERROR,
    EXIT_OK,
    INTERNAL_TOPICS,
    CommandFailed,
    listed_topics,
    open_error_text,
    open_log_dir,
)

if TYPE_CHECKING:
    from ..log_dir import LogDir

__all__ = ["main", "build_parser", "parse_offset_json"]

#: DeleteRecordsRequest.HIGH_WATERMARK
HIGH_WATERMARK = -1
_ERRORS = "org.apache.kafka.common.errors."
# Errors' default messages (clients, 3.9): what the admin client's exceptions say
_UNKNOWN_PARTITION = (f"{_ERRORS}UnknownTopicOrPartitionException: This server does not host "
                      "this topic-partition.")
_INVALID_TOPIC = (f"{_ERRORS}InvalidTopicException: The request attempted to perform an "
                  "operation on an invalid topic.")
_POLICY_VIOLATION = (f"{_ERRORS}PolicyViolationException: Request parameters do not satisfy the "
                     "configured policy.")
_OUT_OF_RANGE = (f"{_ERRORS}OffsetOutOfRangeException: The requested offset is not within the "
                 "range of offsets maintained by the server.")


class _PartitionFailed(Exception):
    """One partition refused: ``error`` is Kafka's client-side text, ``reason`` the broker's."""

    def __init__(self, error: str, reason: str) -> None:
        super().__init__(reason)
        self.error = error
        self.reason = reason


def build_parser() -> argparse.ArgumentParser:
    """The ``kafkalog delete-records`` argument parser."""
    p = ArgumentParser(prog="kafkalog delete-records",
                       description="This tool helps to delete records of the given partitions "
                                   "down to the specified offset (kafka-delete-records.sh, "
                                   "offline).")
    p.add_argument("log_dir", help="a broker log directory (log.dirs entry)")
    p.add_argument("--offset-json-file", required=True, metavar="FILE",
                   help='REQUIRED: The JSON file with offset per partition. The format to use '
                        'is: {"partitions": [{"topic": "foo", "partition": 1, "offset": 1}], '
                        '"version": 1}')
    return p


def main(argv: Sequence[str] | None = None, *, stdout: IO[str] | None = None,
         stderr: IO[str] | None = None) -> int:
    """Run ``kafkalog delete-records``; returns the exit status."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    args, status = parse_args(build_parser(), argv, err)
    if args is None:
        return status
    try:
        text = Path(args.offset_json_file).read_text("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        err.write(f"kafkalog delete-records: cannot read {args.offset_json_file}: {e}\n")
        return EXIT_ERROR
    try:
        # the whole file is checked before the dir is opened: a bad file changes nothing
        requests = parse_offset_json(text)
    except CommandFailed as e:
        err.write(f"{e}\n")         # mainNoExit: the message (then Kafka's stack trace)
        return EXIT_ERROR
    try:
        logs = open_log_dir(args.log_dir, writable=True)
    except (KafkaLogError, OSError) as e:
        err.write(f"kafkalog delete-records: {open_error_text(e)}\n")
        return EXIT_ERROR
    try:
        return _execute(logs, requests, out, err)
    except (KafkaLogError, OSError) as e:
        err.write(f"kafkalog delete-records: {e}\n")
        return EXIT_ERROR
    finally:
        logs.close()


def _json_text(value: Any) -> str:
    # Jackson's JsonNode.toString of the offending value
    return json.dumps(value, separators=(",", ":"))


def parse_offset_json(text: str) -> list[tuple[str, int, int]]:
    """The file's ``(topic, partition, offset)`` in its order (Kafka's
    ``parseOffsetJsonStringWithoutDedup`` and duplicate check, with its texts).

    >>> parse_offset_json('{"partitions": [{"topic": "t", "partition": 0, "offset": 5}]}')
    [('t', 0, 5)]

    Raises
    ------
    CommandFailed
        Not JSON, an unsupported version, a missing or mistyped field, or a partition named
        twice.
    """
    try:
        doc = json.loads(text)
    except ValueError:
        raise CommandFailed("The input string is not a valid JSON") from None
    if not isinstance(doc, dict):
        raise CommandFailed(f"Expected `JsonObject` value, received {_json_text(doc)}")
    version = doc.get("version", 1)
    if isinstance(version, bool) or not isinstance(version, int):
        raise CommandFailed(f"Expected `Integer` value, received {_json_text(version)}")
    if version != 1:
        raise CommandFailed(f"Not supported version field value {version}")
    if "partitions" not in doc:
        raise CommandFailed("Missing partitions field")
    partitions = doc["partitions"]
    if not isinstance(partitions, list):
        raise CommandFailed(f"Expected `JsonArray` value, received {_json_text(partitions)}")
    requests: list[tuple[str, int, int]] = []
    for entry in partitions:
        if not isinstance(entry, dict):
            raise CommandFailed(f"Expected `JsonObject` value, received {_json_text(entry)}")
        fields = []
        for name, kind in (("topic", "String"), ("partition", "Integer"), ("offset", "Long")):
            if name not in entry:
                raise CommandFailed(f"No such field exists: `{name}`")
            value = entry[name]
            ok = isinstance(value, str) if kind == "String" else (
                isinstance(value, int) and not isinstance(value, bool)
                and -(1 << (31 if kind == "Integer" else 63)) <= value
                < (1 << (31 if kind == "Integer" else 63)))
            if not ok:
                raise CommandFailed(f"Expected `{kind}` value, received {_json_text(value)}")
            fields.append(value)
        requests.append((fields[0], fields[1], fields[2]))
    seen: set[tuple[str, int]] = set()
    duplicates: list[str] = []
    for topic, partition, _ in requests:
        name = f"{topic}-{partition}"       # TopicPartition.toString
        if (topic, partition) in seen and name not in duplicates:
            duplicates.append(name)
        seen.add((topic, partition))
    if duplicates:
        raise CommandFailed("Offset json file contains duplicate topic partitions: "
                            + ",".join(duplicates))
    return requests


def _delete_one(logs: LogDir, topics: list[str], topic: str, partition: int,
                offset: int) -> int:
    """One partition, the broker's checks in the broker's order; returns the low watermark."""
    tp = f"{topic}-{partition}"
    if topic not in topics:
        # the admin client's leader lookup fails first (PartitionLeaderStrategy)
        raise _PartitionFailed(
            f"{_ERRORS}UnknownTopicOrPartitionException: Failed to fetch metadata for partition "
            f"{tp} because metadata for topic `{topic}` could not be found",
            f"topic {topic} is not in {logs.root}")
    if topic in INTERNAL_TOPICS:
        raise _PartitionFailed(_INVALID_TOPIC, f"Cannot delete records of internal topic {topic}")
    if (topic, partition) not in set(logs.partitions()):
        raise _PartitionFailed(_UNKNOWN_PARTITION, f"partition {tp} is not in {logs.root}")
    log = logs.log(topic, partition)
    if not log.config.delete:
        raise _PartitionFailed(_POLICY_VIOLATION, f"Records of partition {tp} can not be deleted "
                                                  "due to the configured policy")
    # the dir's high watermark (it may be below the log end offset), not the Log's own
    hw = logs.high_watermark(topic, partition)
    target = hw if offset == HIGH_WATERMARK else offset
    if target < 0:
        raise _PartitionFailed(_OUT_OF_RANGE, f"The offset {target} for partition {tp} is not "
                                              "valid")
    if target > hw:
        raise _PartitionFailed(_OUT_OF_RANGE, f"Cannot increment the log start offset to "
                                              f"{target} of partition {tp} since it is larger "
                                              f"than the high watermark {hw}")
    try:
        return log.delete_records_before(target)
    except OffsetOutOfRangeError as e:
        raise _PartitionFailed(_OUT_OF_RANGE, str(e)) from None


def _execute(logs: LogDir, requests: list[tuple[str, int, int]], out: IO[str],
             err: IO[str]) -> int:
    """``execute``: delete, then Kafka's report, one line per partition."""
    out.write("Executing records delete operation\n")
    topics = listed_topics(logs)
    results: list[tuple[str, int | None, _PartitionFailed | None]] = []
    for topic, partition, offset in requests:
        try:
            low = _delete_one(logs, topics, topic, partition, offset)
            results.append((f"{topic}-{partition}", low, None))
        except _PartitionFailed as e:
            results.append((f"{topic}-{partition}", None, e))
    # durable before success is reported (a broker checkpoints them within a minute)
    logs.checkpoint_log_start_offsets()
    out.write("Records delete operation completed:\n")
    for tp, low, failure in results:
        if failure is None:
            out.write(f"partition: {tp}\tlow_watermark: {low}\n")
        else:
            out.write(f"partition: {tp}\terror: {failure.error}\n")
            err.write(f"kafkalog delete-records: {tp}: {failure.reason}\n")
    return EXIT_ERROR if any(failure for _, _, failure in results) else EXIT_OK
