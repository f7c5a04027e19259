"""``kafkalog console-consumer``: Kafka's ``kafka-console-consumer.sh`` over log dirs, offline.

Source (Kafka 4.2): ``tools/src/main/java/org/apache/kafka/tools/consumer/ConsoleConsumer.java``
and ``ConsoleConsumerOptions.java`` (options, their checks and texts), the formatters of
:mod:`kafkalog.console.message_formatters`; what a consumer reads is the broker's fetch
(``UnifiedLog.read``: up to the high watermark, or the last stable offset and without aborted
transactions for ``read_committed``, control batches never handed out) and the consumer's
position rules (``auto.offset.reset``, out-of-range offsets, ``exclude.internal.topics``).

``kafkalog console-consumer LOGDIR... --topic orders --from-beginning \\
--formatter-property print.key=true`` prints what ``kafka-console-consumer.sh`` prints for the
same records, byte for byte, and ``Processed a total of N messages`` on stderr. The options are
Kafka's; the log dirs (a broker's ``log.dirs`` entries) take the place of
``--bootstrap-server``, which is accepted and not used.

Offline, a consumer reads every partition to its end (the high watermark, or the last stable
offset with ``--isolation-level read_committed``). Without ``--timeout-ms`` it then exits;
with it, it follows the partitions as Kafka's waits for more: the dirs are opened again every
100 ms and what a writer (``kafkalog serve``, an embedded log) committed meanwhile is printed,
until no record came for ``--timeout-ms`` (Kafka's ``TimeoutException`` line on stderr, then
the total, status 0). Without ``--from-beginning`` or ``--offset`` it starts at the end, as
Kafka's does. Subscribed partitions (``--topic`` without
``--partition``, or ``--include``) are read one after the other in topic and partition order
(a broker's consumer interleaves them as its fetches return; the records of one partition are
in offset order either way).

``--group G`` starts each partition at G's committed offset (read from the
``__consumer_offsets`` partition of the given dirs), or where ``auto.offset.reset`` says when
it has none, and, unless ``enable.auto.commit=false``, commits the positions reached when it
exits, as the consumer commits on close: the dir holding the group's ``__consumer_offsets``
partition is then opened for writing (refused while a broker holds it, and for a group with
active members). When no given dir holds ``__consumer_offsets``, the first one gets it, created
as a broker creates it on a group's first request (``offsets.topic.num.partitions``, 50).
Without ``--group`` nothing is written anywhere.

Exit status: 0; 1 when a record cannot be read (corrupt bytes, named with file and position:
Kafka's consumer logs the error and exits 0) or formatted (unless
``--skip-message-on-error``), or the dirs cannot be used; 2 usage (Kafka exits 1 on usage).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..admin import (
    INTERNAL_TOPICS,
    CommandFailed,
    hold_partitions,
    open_error_text,
    open_log_dir,
)
from ..errors import KafkaLogError
from ..log import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP
from ..usage import ArgumentParser, UsageError, parse_args
from .command_line import java_number_arg, load_props, parse_key_value_args
from .deserializers import SerializationError
from .message_formatters import ConsumerRecord, MessageFormatter, formatter

if TYPE_CHECKING:
    from ..log import Log
    from ..log_dir import LogDir

__all__ = ["main", "build_parser", "ConsoleConsumerOptions", "EXIT_OK", "EXIT_ERROR",
           "EXIT_USAGE"]

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2

_DEFAULT_FORMATTER = "org.apache.kafka.tools.consumer.DefaultMessageFormatter"
_FORMATTER_PROPERTIES_HELP = (
    "The properties to initialize the message formatter. Default properties include: "
    "print.timestamp=true|false print.key=true|false print.offset=true|false "
    "print.epoch=true|false print.partition=true|false print.headers=true|false "
    "print.value=true|false key.separator=<key.separator> line.separator=<line.separator> "
    "headers.separator=<headers.separator> null.literal=<null.literal> "
    "key.deserializer=<key.deserializer> value.deserializer=<value.deserializer> "
    "header.deserializer=<header.deserializer>")
_LONG_MAX = (1 << 63) - 1


def build_parser() -> argparse.ArgumentParser:
    """The ``kafkalog console-consumer`` argument parser (Kafka 4.2's options)."""
    p = ArgumentParser(
        prog="kafkalog console-consumer",
        description="This tool helps to read data from Kafka topics and outputs it to standard "
                    "output. (kafka-console-consumer.sh, offline: the partitions held in the "
                    "given log dirs, read to their end)")
    p.add_argument("log_dirs", nargs="+", metavar="LOGDIR",
                   help="a broker's log.dirs entries (every one holding partitions to read)")
    p.add_argument("--topic", metavar="topic", help="The topic to consume from.")
    p.add_argument("--include", metavar="Java regex (String)",
                   help="Regular expression specifying list of topics to include for "
                        "consumption.")
    p.add_argument("--partition", metavar="partition", type=java_number_arg(32, "partition"),
                   help="The partition to consume from. Consumption starts from the end of the "
                        "partition unless '--offset' is specified.")
    p.add_argument("--offset", metavar="consume offset",
                   help="The offset to consume from (a non-negative number), or 'earliest' "
                        "which means from beginning, or 'latest' which means from end "
                        "(default: latest)")
    p.add_argument("--from-beginning", action="store_true",
                   help="If the consumer does not already have an established offset to "
                        "consume from, start with the earliest message present in the log "
                        "rather than the latest message.")
    p.add_argument("--max-messages", metavar="num_messages",
                   type=java_number_arg(32, "max-messages"),
                   help="The maximum number of messages to consume before exiting. If not set, "
                        "consumption is continual.")
    p.add_argument("--timeout-ms", metavar="timeout_ms", type=java_number_arg(32, "timeout-ms"),
                   help="If specified, exit if no message is available for consumption for the "
                        "specified interval. (offline: without it the read ends at the "
                        "partitions' end; with it the dirs are polled for records appended "
                        "meanwhile)")
    p.add_argument("--skip-message-on-error", action="store_true",
                   help="If there is an error when processing a message, skip it instead of "
                        "halt.")
    p.add_argument("--formatter", metavar="class", default=_DEFAULT_FORMATTER,
                   help="The name of a class to use for formatting kafka messages for display. "
                        f"(default: {_DEFAULT_FORMATTER})")
    p.add_argument("--formatter-property", action="append", default=[], metavar="prop",
                   help=_FORMATTER_PROPERTIES_HELP)
    p.add_argument("--property", action="append", default=[], metavar="prop",
                   help="(DEPRECATED) " + _FORMATTER_PROPERTIES_HELP + " This option will be "
                        "removed in a future version. Use --formatter-property instead.")
    p.add_argument("--formatter-config", metavar="config file",
                   help="Config properties file to initialize the message formatter. Note that "
                        "--formatter-property takes precedence over this config.")
    p.add_argument("--key-deserializer", metavar="deserializer for keys",
                   help="The name of the class to use for deserializing keys.")
    p.add_argument("--value-deserializer", metavar="deserializer for values",
                   help="The name of the class to use for deserializing values.")
    p.add_argument("--isolation-level", default="read_uncommitted",
                   help="Set to read_committed in order to filter out transactional messages "
                        "which are not committed. Set to read_uncommitted to read all "
                        "messages. (default: read_uncommitted)")
    p.add_argument("--group", metavar="consumer group id",
                   help="The consumer group id of the consumer.")
    p.add_argument("--command-property", action="append", default=[], metavar="consumer_prop",
                   help="Consumer config properties in the form key=value.")
    p.add_argument("--consumer-property", action="append", default=[], metavar="consumer_prop",
                   help="(DEPRECATED) Consumer config properties in the form key=value. This "
                        "option will be removed in a future version. Use --command-property "
                        "instead.")
    p.add_argument("--command-config", metavar="config file",
                   help="Consumer config properties file. Note that --command-property takes "
                        "precedence over this config.")
    p.add_argument("--consumer.config", dest="consumer_config", metavar="config file",
                   help="(DEPRECATED) Consumer config properties file. This option will be "
                        "removed in a future version. Use --command-config instead.")
    p.add_argument("--bootstrap-server", metavar="server to connect to",
                   help="Kafka's required option; offline the log dirs are read and this is "
                        "not used.")
    p.add_argument("--enable-systest-events", action="store_true",
                   help="Log lifecycle events of the consumer in addition to logging consumed "
                        "messages. (This is specific for system tests.)")
    return p


def _load_props(path: str) -> dict[str, str]:
    try:
        return load_props(path)
    except OSError as e:
        raise UsageError(f"{path}: {e.strerror or e}") from None


class ConsoleConsumerOptions:
    """``ConsoleConsumerOptions``: the parsed options, checked as Kafka checks them.

    Raises
    ------
    UsageError
        What ``CommandLineUtils.printUsageAndExit`` would print.
    """

    def __init__(self, args: argparse.Namespace, out: IO[str]) -> None:
        self.args = args
        if (args.topic is None) == (args.include is None):
            # CommandLineUtils.checkOneOfArgs (jopt-simple prints an option as [name])
            raise UsageError("Exactly one of the following arguments is required: [topic], "
                             "[include]")
        if args.partition is not None:
            if args.topic is None:
                raise UsageError("The topic is required when partition is specified.")
            if args.from_beginning and args.offset is not None:
                raise UsageError("Options from-beginning and offset cannot be specified "
                                 "together.")
        elif args.offset is not None:
            raise UsageError("The partition is required when offset is specified.")
        if args.consumer_property and args.command_property:
            raise UsageError("Options --consumer-property and --command-property cannot be "
                             "specified together.")
        if args.consumer_config is not None and args.command_config is not None:
            raise UsageError("Options --consumer.config and --command-config cannot be "
                             "specified together.")
        if args.consumer_property:
            out.write("Option --consumer-property is deprecated and will be removed in a future "
                      "version. Use --command-property instead.\n")
        if args.consumer_config is not None:
            out.write("Option --consumer.config is deprecated and will be removed in a future "
                      "version. Use --command-config instead.\n")
        config_file = args.command_config or args.consumer_config
        from_file = _load_props(config_file) if config_file is not None else {}
        extra = parse_key_value_args(args.command_property or args.consumer_property)
        groups = []
        for g in (args.group, from_file.get("group.id"), extra.get("group.id")):
            if g is not None and g not in groups:
                groups.append(g)
        if len(groups) > 1:
            raise UsageError(
                "The group ids provided in different places (directly using '--group', via "
                "'--consumer-property', or via '--consumer.config') do not match. Detected "
                "group ids: " + ", ".join(f"'{g}'" for g in groups))
        if groups and args.partition is not None:
            raise UsageError("Options group and partition cannot be specified together.")
        props = {**from_file, **extra}
        if "auto.offset.reset" in props:
            if args.from_beginning and props["auto.offset.reset"] != "earliest":
                raise UsageError("Can't simultaneously specify --from-beginning and "
                                 f"'auto.offset.reset={props['auto.offset.reset']}', please "
                                 "remove one option")
        else:
            props["auto.offset.reset"] = "earliest" if args.from_beginning else "latest"
        # (maybeMergeOptions: the option wins only where the property is absent)
        props.setdefault("isolation.level", args.isolation_level)
        self.group: str | None = groups[0] if groups else None
        self.commit = (self.group is not None
                       and props.get("enable.auto.commit", "true").strip().lower() == "true")
        self.auto_offset_reset = _reset_policy(props["auto.offset.reset"])
        isolation = props["isolation.level"].strip().lower()
        if isolation not in ("read_uncommitted", "read_committed"):
            raise UsageError(f"Invalid value {props['isolation.level']} for configuration "
                             "isolation.level: String must be one of: read_committed, "
                             "read_uncommitted")
        self.isolation = isolation
        self.exclude_internal = props.get("exclude.internal.topics",
                                          "true").strip().lower() == "true"
        self.offset = self._parse_offset()
        self.max_messages = -1 if args.max_messages is None else args.max_messages
        if args.include is not None:
            try:
                self.include: re.Pattern[str] | None = re.compile(args.include)
            except re.error as e:
                raise UsageError(f"{e}: {args.include}") from None
        else:
            self.include = None
        self.formatter = self._build_formatter(out)

    def _parse_offset(self) -> int:
        a = self.args
        if a.offset is not None:
            text = a.offset
            low = text.lower()
            if low == "earliest":
                return EARLIEST_TIMESTAMP
            if low == "latest":
                return LATEST_TIMESTAMP
            if re.fullmatch(r"[+-]?[0-9]+", text) and 0 <= int(text) <= _LONG_MAX:
                return int(text)
            raise UsageError(f"The provided offset value '{text}' is incorrect. Valid values are "
                             "'earliest', 'latest', or a non-negative long.")
        return EARLIEST_TIMESTAMP if a.from_beginning else LATEST_TIMESTAMP

    def _build_formatter(self, out: IO[str]) -> MessageFormatter:
        a = self.args
        if a.formatter_property and a.property:
            raise UsageError("Options --property and --formatter-property cannot be specified "
                             "together.")
        if a.property:
            out.write("Option --property is deprecated and will be removed in a future version. "
                      "Use --formatter-property instead.\n")
        configs = _load_props(a.formatter_config) if a.formatter_config is not None else {}
        if a.key_deserializer:
            configs["key.deserializer"] = a.key_deserializer
        if a.value_deserializer:
            configs["value.deserializer"] = a.value_deserializer
        configs.update(parse_key_value_args(a.formatter_property or a.property))
        try:
            return formatter(a.formatter, configs)
        except ValueError as e:
            raise UsageError(str(e)) from None


def _reset_policy(text: str) -> tuple[str, int]:
    """``AutoOffsetResetStrategy.fromString``: ``("earliest"|"latest"|"none", 0)`` or
    ``("by_duration", ms)``."""
    low = text.strip().lower()
    if low in ("earliest", "latest", "none"):
        return low, 0
    if low.startswith("by_duration:"):
        from ..groups.command import parse_duration

        try:
            ms = parse_duration(text.strip()[len("by_duration:"):].upper())
        except UsageError:
            ms = -1
        if ms >= 0:
            return "by_duration", ms
    raise UsageError(f"Invalid value {text} for configuration auto.offset.reset: Invalid value "
                     f"`{text}` for configuration auto.offset.reset. The value must be either "
                     "'earliest', 'latest', 'none' or of the format 'by_duration:<PnDTnHnMn.nS.>'.")


class _Partitions:
    """The given dirs opened, and the partitions to read in them, each held once (LogManager's
    duplicate check). ``coordinator``: the dir whose ``__consumer_offsets`` is loaded too
    (opened for writing when ``writable``)."""

    def __init__(self, stack: ExitStack, dirs: Sequence[str], wanted: Any,
                 coordinator: str | None, writable: bool) -> None:
        from ..groups.metadata_manager import OFFSETS_TOPIC

        self.held: dict[tuple[str, int], LogDir] = {}
        self.coordinator: LogDir | None = None
        for d in dirs:
            if d == coordinator:
                logs = stack.enter_context(open_log_dir(
                    d, writable=writable,
                    partitions=None if writable else
                    lambda t, p: t == OFFSETS_TOPIC or wanted(t, p)))
                self.coordinator = logs
            else:
                logs = stack.enter_context(open_log_dir(d, writable=False, partitions=wanted))
            hold_partitions(self.held, logs, wanted)


def _end_offset(logs: LogDir, log: Log, topic: str, partition: int, isolation: str) -> int:
    """Where a consumer's fetches stop: the high watermark, or the last stable offset."""
    hw = logs.high_watermark(topic, partition)
    return min(hw, log.last_stable_offset) if isolation == "read_committed" else hw


def _reset_offset(policy: tuple[str, int], logs: LogDir, log: Log, end: int,
                  tp: tuple[str, int]) -> int:
    name, ms = policy
    if name == "earliest":
        return log.log_start_offset
    if name == "latest":
        return end
    if name == "by_duration":
        found = log.offset_for_timestamp(int(time.time() * 1000) - ms)
        return end if found is None else min(found, end)
    raise KafkaLogError(f"Undefined offset with no reset policy for partitions: "
                        f"[{tp[0]}-{tp[1]}]")


def _records(log: Log, topic: str, partition: int, start: int, end: int, isolation: str
             ) -> Iterator[tuple[ConsumerRecord | None, int]]:
    """``(record, position after it)``, and ``(None, position)`` where the fetch position
    moves past a batch without handing out a record (control batches, aborted records)."""
    for fetched in log.batches(start, end, include_control=True, isolation=isolation):
        batch = fetched.batch
        if not batch.is_control:
            ttype = batch.timestamp_type
            for r in fetched.records:
                ts = -1 if r.timestamp is None or ttype == "NoTimestampType" else r.timestamp
                yield (ConsumerRecord(topic, partition, r.offset, ts, ttype, r.key, r.value,
                                      tuple(r.headers)), r.offset + 1)
        yield None, batch.last_offset + 1


def _error_line(e: BaseException) -> str:
    """``Class: message`` as Kafka's log shows an exception (Kafka's class for a
    deserializer's error; ours, with file and position, for the others)."""
    if isinstance(e, SerializationError):
        return f"{e.java_class}: {e.message}"
    return f"{type(e).__name__}: {e}"


def main(argv: Sequence[str] | None = None, *, stdout: IO[bytes] | None = None,
         stderr: IO[str] | None = None) -> int:
    """Run ``kafkalog console-consumer``; returns the exit status. Records go to ``stdout``
    as bytes (default: ``sys.stdout.buffer``)."""
    err = stderr or sys.stderr
    out = stdout if stdout is not None else sys.stdout.buffer
    args, status = parse_args(build_parser(), argv, err)
    if args is None:
        return status
    text_out = _TextOut(out)
    try:
        opts = ConsoleConsumerOptions(args, text_out)
    except UsageError as e:
        err.write(f"{e}\n")
        return EXIT_USAGE
    count = [0]
    try:
        status = _run(opts, out, err, count)
    finally:
        err.write(f"Processed a total of {count[0]} messages\n")
    if args.enable_systest_events:
        text_out.write("shutdown_complete\n")
    return status


class _TextOut:
    """Text lines (Kafka's deprecation notes go to stdout) written to the byte stream."""

    def __init__(self, out: IO[bytes]) -> None:
        self.out = out

    def write(self, text: str) -> int:
        self.out.write(text.encode("utf-8"))
        return len(text)


def _wanted(opts: ConsoleConsumerOptions) -> Any:
    a = opts.args

    def wanted(topic: str, partition: int) -> bool:
        if a.topic is not None:
            return topic == a.topic and (a.partition is None or partition == a.partition)
        if opts.exclude_internal and topic in INTERNAL_TOPICS:
            return False
        assert opts.include is not None
        return opts.include.fullmatch(topic) is not None
    return wanted


def _coordinator_dir(dirs: Sequence[str]) -> str:
    """The dir holding the ``__consumer_offsets`` partitions (the first dir holding that
    topic; the first dir when none does: a broker creates the topic where it runs)."""
    from ..groups.metadata_manager import OFFSETS_TOPIC

    for d in dirs:
        if any(p.name.startswith(OFFSETS_TOPIC + "-") and p.is_dir()
               for p in Path(d).iterdir()):
            return d
    return dirs[0]


def _run(opts: ConsoleConsumerOptions, out: IO[bytes], err: IO[str], count: list[int]) -> int:
    from ..groups.errors import GroupIdNotFoundError
    from ..groups.metadata_manager import GroupMetadataManager

    a = opts.args
    with ExitStack() as stack:
        try:
            for d in a.log_dirs:
                if not Path(d).is_dir():
                    raise FileNotFoundError(f"{d}: no such log directory")
            coord = _coordinator_dir(a.log_dirs) if opts.group is not None else None
            opened = _Partitions(stack, a.log_dirs, _wanted(opts), coord, opts.commit)
        except (OSError, KafkaLogError, CommandFailed) as e:
            err.write(f"ERROR {open_error_text(e)}\n")
            return EXIT_ERROR
        held = opened.held
        manager = None
        committed: dict[tuple[str, int], int] = {}
        if opts.group is not None:
            assert opened.coordinator is not None
            manager = GroupMetadataManager(opened.coordinator)
            if not manager.owns(opts.group):
                err.write(f"ERROR the group's coordinator partition __consumer_offsets-"
                          f"{manager.partition_for(opts.group)} is not in {coord}\n")
                return EXIT_ERROR
            try:
                state = manager.describe_group(opts.group).state
            except GroupIdNotFoundError:
                state = "Dead"
            if opts.commit and state not in ("Empty", "Dead"):
                err.write(f"ERROR the group '{opts.group}' has active members (state {state}): "
                          "consuming offline would commit offsets under them; stop them first "
                          "or set enable.auto.commit=false\n")
                return EXIT_ERROR
            committed = manager.fetch_offsets(opts.group)
        if a.topic is not None and not held:
            where = (f"partition {a.topic}-{a.partition}" if a.partition is not None
                     else f"topic {a.topic}")
            err.write(f"ERROR {where} is not in the log dirs\n")
            return EXIT_ERROR
        positions: dict[tuple[str, int], int] = {}
        try:
            return _consume(opts, held, committed, positions, out, err, count)
        finally:
            if manager is not None and opts.commit and positions:
                # (the consumer commits its positions on close: every assigned partition)
                manager.commit_offsets(opts.group, positions)  # type: ignore[arg-type]


def _consume(opts: ConsoleConsumerOptions, held: dict[tuple[str, int], LogDir],
             committed: dict[tuple[str, int], int], positions: dict[tuple[str, int], int],
             out: IO[bytes], err: IO[str], count: list[int]) -> int:
    a = opts.args
    # every assigned partition has a position before the first record is read (the
    # consumer's first poll resets them all), and is committed with it on exit
    bounds: dict[tuple[str, int], tuple[Log, int]] = {}
    for tp in sorted(held):
        logs = held[tp]
        topic, partition = tp
        log = logs.log(topic, partition)
        end = _end_offset(logs, log, topic, partition, opts.isolation)
        try:
            if a.partition is not None and opts.offset >= 0:
                start = opts.offset
            elif a.partition is not None and opts.offset == EARLIEST_TIMESTAMP:
                start = log.log_start_offset
            elif a.partition is not None:
                start = end
            elif tp in committed:
                start = committed[tp]
            else:
                start = _reset_offset(opts.auto_offset_reset, logs, log, end, tp)
            if not log.log_start_offset <= start <= log.log_end_offset:
                # the fetch answers OFFSET_OUT_OF_RANGE: the consumer resets
                start = _reset_offset(opts.auto_offset_reset, logs, log, end, tp)
        except KafkaLogError as e:
            err.write(f"ERROR Error processing message, terminating consumer process: "
                      f"{_error_line(e)}\n")
            return EXIT_ERROR
        positions[tp] = start
        bounds[tp] = (log, end)
    status = _consume_bounds(opts, bounds, positions, out, err, count)
    if status is not None or a.timeout_ms is None:
        return EXIT_OK if status is None else status
    return _follow(opts, positions, out, err, count)


def _consume_bounds(opts: ConsoleConsumerOptions, bounds: dict[tuple[str, int], tuple[Log, int]],
                    positions: dict[tuple[str, int], int], out: IO[bytes], err: IO[str],
                    count: list[int]) -> int | None:
    """Each partition from its position to its bound; an exit status when the run must end
    (``--max-messages`` reached, an error, a closed output), else None."""
    fmt = opts.formatter
    for tp, (log, end) in bounds.items():
        if opts.max_messages != -1 and count[0] >= opts.max_messages:
            return EXIT_OK
        start = positions[tp]
        if start >= end:
            continue
        try:
            if fmt.formats_tables:
                status = _consume_tables(opts, log, tp, start, end, positions, out, err,
                                         count)
            else:
                status = _consume_records(opts, log, tp, start, end, positions, out, err,
                                          count)
            if status is not None:
                return status
        except BrokenPipeError:
            err.write("Unable to write to standard out, closing consumer.\n")
            return EXIT_OK
        except KafkaLogError as e:
            err.write(f"ERROR Error processing message, terminating consumer process: "
                      f"{_error_line(e)}\n")
            return EXIT_ERROR
    if opts.max_messages != -1 and count[0] >= opts.max_messages:
        return EXIT_OK
    return None


#: how often ``--timeout-ms`` looks at the dirs again
FOLLOW_POLL_S = 0.1


def _follow(opts: ConsoleConsumerOptions, positions: dict[tuple[str, int], int],
            out: IO[bytes], err: IO[str], count: list[int]) -> int:
    """``--timeout-ms``: Kafka's ``receive()`` loop offline. The dirs are opened again (read
    only, every ``FOLLOW_POLL_S``) to see what was appended and committed since; the assigned
    partitions are read on from their positions (one moved below the log start by retention
    resets as ``auto.offset.reset`` says), partitions created meanwhile that the subscription
    matches are added (positioned by ``auto.offset.reset``), until no record came for
    ``--timeout-ms``."""
    timeout_s = max(0, opts.args.timeout_ms) / 1000
    out.flush()
    idle_since = time.monotonic()
    while True:
        before = count[0]
        with ExitStack() as stack:
            try:
                opened = _Partitions(stack, opts.args.log_dirs, _wanted(opts), None, False)
                bounds: dict[tuple[str, int], tuple[Log, int]] = {}
                for tp in sorted(set(positions) | set(opened.held)):
                    logs = opened.held.get(tp)
                    if logs is None:
                        continue                     # deleted meanwhile
                    log = logs.log(*tp)
                    end = _end_offset(logs, log, tp[0], tp[1], opts.isolation)
                    if tp not in positions:
                        # a partition (or --include topic) created meanwhile: the consumer's
                        # next metadata refresh assigns it, positioned by auto.offset.reset
                        positions[tp] = _reset_offset(opts.auto_offset_reset, logs, log, end,
                                                      tp)
                    elif not log.log_start_offset <= positions[tp] <= log.log_end_offset:
                        positions[tp] = _reset_offset(opts.auto_offset_reset, logs, log, end,
                                                      tp)
                    bounds[tp] = (log, end)
            except (OSError, KafkaLogError, CommandFailed) as e:
                err.write(f"ERROR Error processing message, terminating consumer process: "
                          f"{_error_line(e)}\n")
                return EXIT_ERROR
            status = _consume_bounds(opts, bounds, positions, out, err, count)
            if status is not None:
                return status
        if count[0] > before:
            out.flush()
            idle_since = time.monotonic()
        elif time.monotonic() - idle_since > timeout_s:
            err.write("ERROR Error processing message, terminating consumer process: "
                      "org.apache.kafka.common.errors.TimeoutException\n")
            return EXIT_OK
        time.sleep(FOLLOW_POLL_S)


def _consume_records(opts: ConsoleConsumerOptions, log: Log, tp: tuple[str, int], start: int,
                     end: int, positions: dict[tuple[str, int], int], out: IO[bytes],
                     err: IO[str], count: list[int]) -> int | None:
    """Records of ``[start, end)`` formatted one by one; an exit status to stop with, or
    None to go on with the next partition."""
    fmt = opts.formatter
    for record, after in _records(log, tp[0], tp[1], start, end, opts.isolation):
        if record is None:
            positions[tp] = max(positions[tp], after)
            continue
        if opts.max_messages != -1 and count[0] >= opts.max_messages:
            # the consumer seeks back to the first record it fetched and did not hand out
            # (resetUnconsumedOffsets): that is where a group's commit resumes
            positions[tp] = record.offset
            return EXIT_OK
        count[0] += 1
        positions[tp] = after
        try:
            fmt.write_to(record, out)
            line = fmt.log_line(record)
            if line is not None:
                err.write(f"INFO {line}\n")
        except (KafkaLogError, ValueError) as e:
            if not opts.args.skip_message_on_error:
                err.write(f"ERROR Unknown error when running consumer: {_error_line(e)}\n")
                return EXIT_ERROR
            err.write(f"ERROR Error processing message, skipping this message: "
                      f"{_error_line(e)}\n")
    return None


#: offsets per read_table call of the columnar path: the first chunk at most 4096 offsets and
#: 4 MiB by the log's bytes per offset (small first: the second thread starts sooner), then
#: grown while chunks stay small and shrunk when one is large, so that
#: a chunk of decoded columns stays around 4-16 MiB
_FIRST_CHUNK, _FIRST_CHUNK_BYTES, _MAX_CHUNK = 4096, 4 << 20, 1 << 20
_SMALL_CHUNK_BYTES, _LARGE_CHUNK_BYTES = 4 << 20, 16 << 20


def _consume_tables(opts: ConsoleConsumerOptions, log: Log, tp: tuple[str, int], start: int,
                    end: int, positions: dict[tuple[str, int], int], out: IO[bytes],
                    err: IO[str], count: list[int]) -> int | None:
    """The same bytes as :func:`_consume_records` for the default formatter without
    deserializers, a chunk of records at a time through the columnar decoder (a formatter
    that cannot fail: no per-record errors to skip).

    The next chunk is decoded on a second thread while this one is formatted and written
    (decoding, the line kernel and the write all release the GIL): at most two chunks of
    decoded columns are held. A chunk that does not decode (a corrupt batch) is gone through
    record by record instead (:func:`_consume_records`): the records before the bad batch are
    printed, then the error ends the run, as Kafka's consumer hands out the records of a fetch
    read before a corrupt one (``CompletedFetch.fetchRecords``)."""
    from concurrent.futures import ThreadPoolExecutor

    fmt = opts.formatter

    def read(s: int, e: int) -> Any:
        return log.read_table(s, e, isolation=opts.isolation)

    # the first chunk from the partition's average bytes per offset (a chunk of 4096 records
    # of 1 MiB would be 4 GiB); then from what each chunk decoded to
    per_offset = log.size // max(1, log.log_end_offset - log.log_start_offset)
    step = max(1, min(_FIRST_CHUNK, _FIRST_CHUNK_BYTES // max(1, per_offset)))
    with ThreadPoolExecutor(1, thread_name_prefix="console-consumer-decode") as pool:
        s, e = start, min(end, start + step)
        pending = pool.submit(read, s, e)
        while pending is not None:
            try:
                table = pending.result()
            except KafkaLogError:
                return _consume_records(opts, log, tp, positions[tp], end, positions, out, err,
                                        count)
            size = table.nbytes
            if size > _LARGE_CHUNK_BYTES and step > 1:
                step //= 2
            elif size < _SMALL_CHUNK_BYTES and step < _MAX_CHUNK:
                step *= 2
            pending = pool.submit(read, e, min(end, e + step)) if e < end else None
            n = table.num_rows
            if opts.max_messages != -1 and count[0] + n > opts.max_messages:
                # as _consume_records: the position is the first record not handed out
                keep = opts.max_messages - count[0]
                positions[tp] = table.column("offset")[keep].as_py()
                out.write(fmt.format_table(table.slice(0, keep), tp[1]))
                count[0] += keep
                if pending is not None:
                    pending.cancel()
                return EXIT_OK
            out.write(fmt.format_table(table, tp[1]))
            count[0] += n
            positions[tp] = e
            if pending is not None:
                e = min(end, e + step)
    return None
