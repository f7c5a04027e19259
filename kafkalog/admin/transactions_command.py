"""``kafkalog transactions``: Kafka's ``kafka-transactions.sh`` over a log dir, offline.

A port of ``tools/src/main/java/org/apache/kafka/tools/TransactionsCommand.java`` (Kafka
4.0-SNAPSHOT, apache/kafka commit 1eb7644, October 2024) and of the table printer it uses,
``ToolsUtils.prettyPrintTable`` (``tools/.../ToolsUtils.java``). The broker answers the tool
gets (ListTransactions, DescribeTransactions, DescribeProducers, WriteTxnMarkers) are computed
from the directory instead: the transaction coordinator's state from the dir's
``__transaction_state`` (:func:`load_transaction_state`), each partition's producer state from
its log (:meth:`kafkalog.log.Log.active_producers`, Kafka's ``UnifiedLog.activeProducers``).

===================================================================  =============================
``kafkalog transactions LOGDIR list [--duration-filter MS]``         TransactionalId Coordinator
                                                                     ProducerId TransactionState
``... LOGDIR describe --transactional-id ID``                        the id's coordinator state
``... LOGDIR describe-producers --topic T --partition P``             a partition's producers
``... LOGDIR find-hanging [--topic T [--partition P]]``              open transactions the
``    [--max-transaction-timeout MIN] [--broker-id N]``              coordinator will never end
``... LOGDIR abort --topic T --partition P --start-offset N``        write an ABORT marker
``... LOGDIR abort --topic T --partition P --producer-id ID``
``    --producer-epoch E --coordinator-epoch C``
``--json``                                                           JSON instead of Kafka's
                                                                     tables (every subcommand)
``--now-ms MS`` (list, describe, find-hanging)                       the time "now" (default: the
                                                                     wall clock), for
                                                                     reproducible output
===================================================================  =============================

Tables are ``prettyPrintTable``'s: every cell left-aligned and padded to its column's widest
value (header included), each followed by a tab (so every line ends with one); the header is
printed also when there are no rows. Kafka's headers and cell texts are kept: ``None`` for an
absent start time, duration or transaction start offset, ``-1`` for an unknown coordinator
epoch, ``TopicPartition.toString`` (``t-0``) joined by ``,``.

Offline, not as in Kafka:

* **Coordinator.** There is no coordinator broker: "Coordinator" (``list``) and
  "CoordinatorId" (``describe``) hold this dir's node id (``meta.properties``; -1, Kafka's "no
  node", when the dir has none). The coordinator state is replayed from the dir's own
  ``__transaction_state`` partitions, as a coordinator loads them: the last record of each
  transactional id wins, a tombstone removes the id, an unreadable record is skipped with a
  note on stderr naming its file and offset. A transaction caught between its ``Prepare*`` and
  its ``Complete*`` record is shown as stored (a broker would finish it at load). A dir without
  ``__transaction_state`` knows no transactional id (a note on stderr says so).
* **Order.** Rows are sorted (``list``: by transactional id; ``describe-producers``: by
  producer id; ``find-hanging``: by topic, partition, producer id) and ``describe``'s
  TopicPartitions too; Kafka prints them in the iteration order of its hash maps and sets.
* **find-hanging** needs neither ``--topic`` nor ``--broker-id`` (the dir is one broker: without
  ``--topic`` every partition of the dir is searched, internal topics included, as Kafka's
  ``--broker-id`` search does); ``--broker-id``, when given, must be the dir's node id. Kafka's
  algorithm is kept: a *candidate* is an open transaction (a producer with a current
  transaction start offset) whose producer's last timestamp is more than
  ``--max-transaction-timeout`` minutes (default 15) before now; it is *hanging* when no
  transactional id of the coordinator state has its producer id, or that id cannot be
  described (Dead), or the id's transaction does not include the partition (Kafka's
  ``filterHangingTransactions``; the producer epoch is not compared, as in Kafka). Without
  ``__transaction_state`` every candidate is hanging. Duration(min) is truncated toward zero
  (``TimeUnit.MILLISECONDS.toMinutes``).
* **Time.** "Now" (``list --duration-filter``, ``describe``'s TransactionDurationMs,
  ``find-hanging``) is the wall clock unless ``--now-ms`` gives it.
* **abort** writes the ABORT marker itself (:meth:`kafkalog.log.Log.abort_transaction`, what
  the partition leader does with Kafka's WriteTxnMarkers): the transaction's records leave
  ``read_committed`` reads and the last stable offset moves past the marker. ``--start-offset``
  finds the producer as Kafka's ``buildAbortSpec`` does (its coordinator epoch, 0 when
  unknown); with ``--producer-id`` a coordinator epoch below 0 becomes 0 (Kafka's rule). The
  dir is opened for writing, which takes its ``.lock``: a dir used by a running broker or
  another kafkalog process is refused and nothing is written. Kafka prints nothing on success;
  this command prints one confirmation line on **stderr** (stdout stays Kafka's: empty), or,
  with ``--json``, a JSON object on stdout.
* Reading subcommands open the dir read-only (no lock): they work on a dir a broker is using,
  and may then show a stale state.

Errors are Kafka's ``printErrorAndExit`` texts ("Failed to ...: <cause>. Enable debug logging for
additional detail."), the cause being Kafka's exception message, with the log dir named where
the offline reason is a partition or topic this dir does not hold; the engine's own error
follows on a second line where it says more.

Exit status: 0 success, 1 an error (Kafka's ``Exit.exit(1)``: unknown id, partition, refused
abort, locked or unreadable dir), 2 usage (Kafka's tool exits 1 on usage errors too; kafkalog's
commands use 2).

Example
-------
>>> print(pretty_print_table(["ProducerId", "LastSequence"], [["7", "-1"]]).replace("\\t", "|"))
ProducerId|LastSequence|
7         |-1          |
<BLANKLINE>
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Any

from ..decoders import transaction_log
from ..errors import KafkaLogError
from ..producer_state import InvalidProducerEpochError, TransactionCoordinatorFencedError
from ..usage import ArgumentParser, parse_args
from . import EXIT_ERROR, EXIT_OK, EXIT_USAGE, CommandFailed, open_error_text, open_log_dir
from .pretty_table import pretty_print_table

if TYPE_CHECKING:
    from ..log_dir import LogDir
    from ..producer_state import ProducerStateEntry

__all__ = ["main", "build_parser", "pretty_print_table", "load_transaction_state",
           "TransactionStateLog", "CoordinatorTransaction", "find_hanging_transactions",
           "HangingTransaction", "STATE_NAMES"]

TRANSACTION_STATE_TOPIC = "__transaction_state"
#: KRaft's metadata log: not a topic Kafka's ListTopics returns (find-hanging skips it)
METADATA_TOPIC = "__cluster_metadata"

#: ``TransactionState`` ids as ``TransactionLogValue`` stores them, with the names the admin
#: client prints (``org.apache.kafka.clients.admin.TransactionState``; another id: "Unknown")
STATE_NAMES = dict(transaction_log.TRANSACTION_STATES)
DEAD = 6
ONGOING = 1

# the HEADERS of each TransactionsCommand subclass
LIST_HEADERS = ["TransactionalId", "Coordinator", "ProducerId", "TransactionState"]
DESCRIBE_HEADERS = ["CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch",
                    "TransactionState", "TransactionTimeoutMs", "CurrentTransactionStartTimeMs",
                    "TransactionDurationMs", "TopicPartitions"]
PRODUCERS_HEADERS = ["ProducerId", "ProducerEpoch", "LatestCoordinatorEpoch", "LastSequence",
                     "LastTimestamp", "CurrentTransactionStartOffset"]
HANGING_HEADERS = ["Topic", "Partition", "ProducerId", "ProducerEpoch", "CoordinatorEpoch",
                   "StartOffset", "LastTimestamp", "Duration(min)"]

#: FindHangingTransactionsCommand's --max-transaction-timeout default (minutes)
DEFAULT_MAX_TRANSACTION_TIMEOUT_MIN = 15
_DEBUG_HINT = " Enable debug logging for additional detail."
_NOT_HOSTED = "This server does not host this topic-partition"  # Errors.UNKNOWN_TOPIC_OR_PARTITION


# -- the coordinator state: __transaction_state replayed -----------------------------------------

@dataclasses.dataclass(frozen=True)
class CoordinatorTransaction:
    """One transactional id as its last ``TransactionLogValue`` left it (Kafka's
    ``TransactionMetadata`` after ``TransactionLog.readTxnRecordValue``)."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    #: the stored ``TransactionState`` id (see :data:`STATE_NAMES`)
    state: int
    partitions: frozenset[tuple[str, int]]
    #: ``transactionStartTimestampMs`` (-1: no transaction started)
    start_ms: int
    last_update_ms: int

    @property
    def state_name(self) -> str:
        """The name Kafka's tool prints ("Ongoing", ...; "Unknown" for an id it does not know)."""
        return STATE_NAMES.get(self.state, "Unknown")


@dataclasses.dataclass
class TransactionStateLog:
    """What the dir's ``__transaction_state`` says: ``present`` is False when the dir holds no
    partition of it; ``skipped`` names the records that could not be read (file and offset)."""

    present: bool
    transactions: dict[str, CoordinatorTransaction]
    skipped: list[str]

    def listed(self) -> list[CoordinatorTransaction]:
        """The transactions ListTransactions would return (every state but Dead), by id."""
        return [t for _, t in sorted(self.transactions.items()) if t.state != DEAD]

    def describe(self, transactional_id: str) -> CoordinatorTransaction | None:
        """DescribeTransactions: None for an unknown id or a Dead one
        (``TransactionCoordinator.handleDescribeTransactions``: TRANSACTIONAL_ID_NOT_FOUND)."""
        txn = self.transactions.get(transactional_id)
        return None if txn is None or txn.state == DEAD else txn


def load_transaction_state(logs: LogDir) -> TransactionStateLog:
    """Replay every ``__transaction_state`` partition of ``logs`` (in partition order) as the
    coordinator loads it (``TransactionStateManager.loadTransactionMetadata``): the last record
    of each transactional id wins, a tombstone (null value) removes the id.

    A record that does not decode is skipped and named in ``skipped`` (the server's coordinator
    skips it likewise); a corrupt batch raises the engine's error (path and position).
    """
    parts = [p for t, p in logs.partitions() if t == TRANSACTION_STATE_TOPIC]
    txns: dict[str, CoordinatorTransaction] = {}
    skipped: list[str] = []
    for p in parts:
        log = logs.log(TRANSACTION_STATE_TOPIC, p)
        found, bad = transaction_log.replay((r.offset, r.key, r.value) for r in log.records())
        skipped += [f"{logs.root / f'{TRANSACTION_STATE_TOPIC}-{p}'}: offset {offset}: "
                    f"unreadable transaction log record, skipped: {why}" for offset, why in bad]
        for txn_id, v in found.items():
            txns[txn_id] = CoordinatorTransaction(
                txn_id, v["producerId"], v["producerEpoch"], v["transactionTimeoutMs"],
                v["transactionStatus"], frozenset(v["partitions"]),
                v["transactionStartTimestampMs"], v["transactionLastUpdateTimestampMs"])
    return TransactionStateLog(bool(parts), txns, skipped)


# -- find-hanging ------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class HangingTransaction:
    """An open transaction of a partition that no coordinator will end (one row of
    find-hanging), with the reason it was judged hanging."""

    topic: str
    partition: int
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    start_offset: int
    last_timestamp: int
    duration_min: int
    #: the coordinator's transactional id for the producer id (None: none has it)
    transactional_id: str | None
    reason: str


def _to_minutes(ms: int) -> int:
    """``TimeUnit.MILLISECONDS.toMinutes``: Java's long division, truncated toward zero."""
    q = abs(ms) // 60_000
    return q if ms >= 0 else -q


def find_hanging_transactions(
    logs: LogDir, partitions: Sequence[tuple[str, int]], coordinator: TransactionStateLog,
    max_transaction_timeout_ms: int, now_ms: int,
) -> list[HangingTransaction]:
    """Kafka's ``FindHangingTransactionsCommand``: the candidates
    (``collectCandidateOpenTransactions``: an open transaction whose producer's last timestamp
    is more than ``max_transaction_timeout_ms`` before ``now_ms``), then
    ``lookupTransactionalIds`` (ListTransactions filtered on their producer ids) and
    ``filterHangingTransactions``: hanging when no transactional id has the producer id, the id
    is not described, or its transaction does not include the partition. Sorted by topic,
    partition, producer id.
    """
    candidates: list[tuple[tuple[str, int], ProducerStateEntry]] = []
    for tp in partitions:
        for entry in logs.log(*tp).active_producers():
            if entry.current_txn_first_offset is not None \
                    and now_ms - entry.last_timestamp > max_transaction_timeout_ms:
                candidates.append((tp, entry))
    wanted = {e.producer_id for _, e in candidates}
    # lookupTransactionalIds: a later listing of the same producer id replaces an earlier one
    # (Kafka's HashMap.put); Dead ids are not listed
    by_producer = {t.producer_id: t.transactional_id for t in coordinator.listed()
                   if t.producer_id in wanted}
    hanging = []
    for tp, e in candidates:
        txn_id = by_producer.get(e.producer_id)
        desc = None if txn_id is None else coordinator.describe(txn_id)
        if txn_id is None:
            reason = ("no __transaction_state in the log dir" if not coordinator.present
                      else f"no transactional id has producer id {e.producer_id}")
        elif desc is None:
            reason = f"transactional id {txn_id!r} could not be described"
        elif tp not in desc.partitions:
            reason = (f"the transaction of {txn_id!r} ({desc.state_name}) does not include "
                      f"{tp[0]}-{tp[1]}")
        else:
            continue  # the coordinator still expects to write this partition's marker
        assert e.current_txn_first_offset is not None
        hanging.append(HangingTransaction(
            tp[0], tp[1], e.producer_id, e.producer_epoch, e.coordinator_epoch,
            e.current_txn_first_offset, e.last_timestamp, _to_minutes(now_ms - e.last_timestamp),
            txn_id, reason))
    return sorted(hanging, key=lambda h: (h.topic, h.partition, h.producer_id))


# -- the command line ----------------------------------------------------------------------------

def _short(text: str) -> int:
    """argparse4j's ``Short.class`` conversion."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"could not convert '{text}' to Short") from None
    if not -(1 << 15) <= value < (1 << 15):
        raise argparse.ArgumentTypeError(f"could not convert '{text}' to Short (out of range)")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The ``kafkalog transactions`` argument parser (Kafka's subcommands and options, with the
    log dir in place of ``--bootstrap-server``)."""
    p = ArgumentParser(
        prog="kafkalog transactions",
        description="This tool is used to analyze the transactional state of producers in the "
                    "cluster. It can be used to detect and recover from hanging transactions "
                    "(kafka-transactions.sh, offline over one log dir).")
    p.add_argument("log_dir", help="a broker log directory (log.dirs entry)")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=ArgumentParser)

    def command(name: str, help_text: str, *, clock: bool = False) -> argparse.ArgumentParser:
        s = sub.add_parser(name, help=help_text, description=help_text)
        s.add_argument("--json", action="store_true", help="print JSON")
        if clock:
            s.add_argument("--now-ms", type=int, default=None, metavar="MS",
                           help="the current time in ms since the epoch (default: the wall "
                                "clock), for reproducible output")
        return s

    ls = command("list", "list transactions", clock=True)
    ls.add_argument("--duration-filter", type=int, default=None, metavar="MS",
                    help="Duration (in millis) to filter by: if < 0, all transactions will be "
                         "returned; otherwise, only transactions running longer than this "
                         "duration will be returned")
    d = command("describe", "describe the state of an active transactional-id", clock=True)
    d.add_argument("--transactional-id", required=True, help="transactional id")
    dp = command("describe-producers",
                 "describe the states of active producers for a topic partition")
    dp.add_argument("--broker-id", type=int, default=None,
                    help="optional broker id to describe the producer state on a specific "
                         "replica (offline: must be the log dir's node id)")
    dp.add_argument("--topic", required=True, help="topic name")
    dp.add_argument("--partition", type=int, required=True, help="partition number")
    ab = command("abort", "abort a hanging transaction (requires administrative privileges)")
    ab.add_argument("--topic", required=True, help="topic name")
    ab.add_argument("--partition", type=int, required=True, help="partition number")
    new = ab.add_argument_group("Brokers on versions 3.0 and above",
                                "For newer brokers, only the start offset of the transaction to "
                                "be aborted is required")
    new.add_argument("--start-offset", type=int, default=None,
                     help="start offset of the transaction to abort")
    old = ab.add_argument_group("Brokers on versions older than 3.0",
                                "For older brokers, you must provide all of these arguments")
    old.add_argument("--producer-id", type=int, default=None, help="producer id")
    old.add_argument("--producer-epoch", type=_short, default=None, help="producer epoch")
    old.add_argument("--coordinator-epoch", type=int, default=None, help="coordinator epoch")
    fh = command("find-hanging", "find hanging transactions", clock=True)
    fh.add_argument("--broker-id", type=int, default=None,
                    help="broker id to search for hanging transactions (offline: must be the "
                         "log dir's node id; every partition of the dir is searched)")
    fh.add_argument("--max-transaction-timeout", type=int,
                    default=DEFAULT_MAX_TRANSACTION_TIMEOUT_MIN, metavar="MINUTES",
                    help="maximum transaction timeout in minutes to limit the scope of the "
                         "search (15 minutes by default)")
    fh.add_argument("--topic", default=None,
                    help="topic name to limit search to (required if --partition is specified)")
    fh.add_argument("--partition", type=int, default=None, help="partition number")
    return p


def main(argv: Sequence[str] | None = None, *, stdout: IO[str] | None = None,
         stderr: IO[str] | None = None) -> int:
    """Run ``kafkalog transactions`` (``argv`` without the leading "transactions": the log
    dir, the subcommand, its options); returns the exit status."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    parser = build_parser()
    args, status = parse_args(parser, argv, err)
    if args is None:
        return status
    if args.command is None:
        parser.print_usage(err)
        err.write("kafkalog transactions: error: a command is required (list, describe, "
                  "describe-producers, abort, find-hanging)\n")
        return EXIT_USAGE
    try:
        # TransactionsCommand's own argument checks come before any broker call
        _check_options(args)
    except CommandFailed as e:
        err.write(f"{e}\n")
        return EXIT_ERROR
    try:
        logs = open_log_dir(args.log_dir, writable=args.command == "abort")
    except (KafkaLogError, OSError) as e:
        err.write(f"kafkalog transactions {args.command}: {open_error_text(e)}\n")
        return EXIT_ERROR
    try:
        run = {"list": _list, "describe": _describe, "describe-producers": _describe_producers,
               "find-hanging": _find_hanging, "abort": _abort}[args.command]
        return run(logs, args, out, err)
    except CommandFailed as e:      # printErrorAndExit: the message on stderr, exit 1
        err.write(f"{e}\n")
        return EXIT_ERROR
    except (KafkaLogError, OSError) as e:
        err.write(f"kafkalog transactions {args.command}: {e}\n")
        return EXIT_ERROR
    finally:
        logs.close()


def _check_options(args: argparse.Namespace) -> None:
    """The checks Kafka's ``execute`` methods make before calling the admin client (texts
    theirs); find-hanging's "requires either --topic or --broker-id" is not one of them."""
    if args.command == "find-hanging" and args.partition is not None and args.topic is None:
        raise CommandFailed("The --partition argument requires --topic to be provided")
    if args.command == "abort" and args.start_offset is None:
        if args.producer_id is None:
            raise CommandFailed(
                "The transaction to abort must be identified either with --start-offset (for "
                "brokers on 3.0 or above) or with --producer-id, --producer-epoch, and "
                "--coordinator-epoch (for older brokers)")
        if args.producer_epoch is None:
            raise CommandFailed("Missing required argument --producer-epoch")
        if args.coordinator_epoch is None:
            raise CommandFailed("Missing required argument --coordinator-epoch")


def _failed(message: str, cause: str) -> CommandFailed:
    """``printErrorAndExit(message, cause)``'s text."""
    return CommandFailed(f"{message}: {cause}.{_DEBUG_HINT}")


def _node_id(logs: LogDir) -> int:
    """The coordinator's broker id offline: the dir's node id, -1 (Kafka's ``Node.noNode``)
    without ``meta.properties``."""
    meta = logs.meta
    return meta.node_id if meta is not None and meta.node_id is not None else -1


def _now(args: argparse.Namespace) -> int:
    return args.now_ms if args.now_ms is not None else int(time.time() * 1000)


def _coordinator(logs: LogDir, err: IO[str]) -> TransactionStateLog:
    """The replayed coordinator state, its notes on stderr (an absent topic, skipped records)."""
    state = load_transaction_state(logs)
    if not state.present:
        err.write(f"note: {logs.root} has no {TRANSACTION_STATE_TOPIC} partition: no "
                  "transactional id is known here\n")
    for line in state.skipped:
        err.write(f"note: {line}\n")
    return state


def _held_log(logs: LogDir, topic: str, partition: int, message: str) -> Any:
    """The partition's log, or Kafka's failure ``message`` with UNKNOWN_TOPIC_OR_PARTITION's
    text naming the dir."""
    if (topic, partition) not in set(logs.partitions()):
        raise _failed(message, f"{_NOT_HOSTED} ({topic}-{partition} is not in {logs.root})")
    return logs.log(topic, partition)


def _check_broker_id(logs: LogDir, broker_id: int | None) -> None:
    node = _node_id(logs)
    if broker_id is not None and broker_id != node:
        raise CommandFailed(f"Broker {broker_id} is not this log dir's node ({logs.root} holds "
                            f"the replicas of node {node})")


def _list(logs: LogDir, args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """``ListTransactionsCommand`` (the filter is ``listTransactionStates``': with a duration
    filter >= 0, only transactions with ``now - start > filter``; a transaction that has not
    started has start -1, so it passes, as on a broker)."""
    state = _coordinator(logs, err)
    now = _now(args)
    node = _node_id(logs)
    duration = args.duration_filter
    listed = [t for t in state.listed()
              if duration is None or duration < 0 or now - t.start_ms > duration]
    if args.json:
        out.write(json.dumps({"transactions": [
            {"transactional_id": t.transactional_id, "coordinator": node,
             "producer_id": t.producer_id, "state": t.state_name} for t in listed]}) + "\n")
        return EXIT_OK
    out.write(pretty_print_table(LIST_HEADERS, [
        [t.transactional_id, str(node), str(t.producer_id), t.state_name] for t in listed]))
    return EXIT_OK


def _describe(logs: LogDir, args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """``DescribeTransactionsCommand``: a start time below 0 is absent (the admin client's
    ``DescribeTransactionsHandler``), printed with its duration as ``None``."""
    tid = args.transactional_id
    txn = _coordinator(logs, err).describe(tid)
    if txn is None:
        raise _failed(f"Failed to describe transaction state of transactional-id `{tid}`",
                      f"DescribeTransactions request for transactionalId `{tid}` failed "
                      "because the ID could not be found")
    node = _node_id(logs)
    start = txn.start_ms if txn.start_ms >= 0 else None
    duration = None if start is None else _now(args) - start
    partitions = sorted(txn.partitions)
    if args.json:
        out.write(json.dumps({
            "coordinator_id": node, "transactional_id": tid, "producer_id": txn.producer_id,
            "producer_epoch": txn.producer_epoch, "state": txn.state_name,
            "transaction_timeout_ms": txn.timeout_ms, "transaction_start_time_ms": start,
            "transaction_duration_ms": duration,
            "topic_partitions": [{"topic": t, "partition": p} for t, p in partitions]}) + "\n")
        return EXIT_OK
    out.write(pretty_print_table(DESCRIBE_HEADERS, [[
        str(node), tid, str(txn.producer_id), str(txn.producer_epoch), txn.state_name,
        str(txn.timeout_ms), "None" if start is None else str(start),
        "None" if duration is None else str(duration),
        ",".join(f"{t}-{p}" for t, p in partitions)]]))
    return EXIT_OK


def _describe_producers(logs: LogDir, args: argparse.Namespace, out: IO[str],
                        err: IO[str]) -> int:
    """``DescribeProducersCommand`` over the partition's producer state."""
    topic, partition = args.topic, args.partition
    broker = "leader" if args.broker_id is None else f"broker {args.broker_id}"
    message = f"Failed to describe producers for partition {topic}-{partition} on {broker}"
    if args.broker_id is not None and args.broker_id != _node_id(logs):
        # the admin client's NOT_LEADER_OR_FOLLOWER with an explicit brokerId
        raise _failed(message, f"Failed to describe active producers for partition "
                               f"{topic}-{partition} on brokerId {args.broker_id}")
    producers = _held_log(logs, topic, partition, message).active_producers()
    if args.json:
        out.write(json.dumps({"topic": topic, "partition": partition, "producers": [
            {"producer_id": e.producer_id, "producer_epoch": e.producer_epoch,
             "coordinator_epoch": e.coordinator_epoch if e.coordinator_epoch >= 0 else None,
             "last_sequence": e.last_seq, "last_timestamp": e.last_timestamp,
             "current_transaction_start_offset": e.current_txn_first_offset}
            for e in producers]}) + "\n")
        return EXIT_OK
    out.write(pretty_print_table(PRODUCERS_HEADERS, [[
        str(e.producer_id), str(e.producer_epoch),
        str(e.coordinator_epoch if e.coordinator_epoch >= 0 else -1), str(e.last_seq),
        str(e.last_timestamp),
        "None" if e.current_txn_first_offset is None else str(e.current_txn_first_offset)]
        for e in producers]))
    return EXIT_OK


def _search_scope(logs: LogDir, args: argparse.Namespace) -> list[tuple[str, int]]:
    """``collectTopicPartitionsToSearch``: the partition, the topic's partitions, or every
    partition of the dir (Kafka's ListTopics with internal topics: not KRaft's metadata log)."""
    held = logs.partitions()
    if args.topic is None:
        return [tp for tp in held if tp[0] != METADATA_TOPIC]
    if args.partition is not None:
        tp = (args.topic, args.partition)
        if tp not in held:
            # Kafka's message prints the Optional<Integer> broker id as Java renders it
            broker = "Optional.empty" if args.broker_id is None else f"Optional[{args.broker_id}]"
            raise _failed(f"Failed to describe producers for 1 partitions on broker {broker}",
                          f"{_NOT_HOSTED} ({args.topic}-{args.partition} is not in {logs.root})")
        return [tp]
    found = [tp for tp in held if tp[0] == args.topic]
    if not found:
        raise _failed("Failed to describe 1 topics",
                      f"Topic {args.topic} not found (not in {logs.root})")
    return found


def _find_hanging(logs: LogDir, args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """``FindHangingTransactionsCommand`` (see :func:`find_hanging_transactions`)."""
    _check_broker_id(logs, args.broker_id)
    scope = _search_scope(logs, args)
    now = _now(args)
    max_timeout_ms = args.max_transaction_timeout * 60_000
    state = _coordinator(logs, err)
    hanging = find_hanging_transactions(logs, scope, state, max_timeout_ms, now)
    if args.json:
        out.write(json.dumps({
            "now_ms": now, "max_transaction_timeout_ms": max_timeout_ms,
            "transaction_state_present": state.present,
            "searched": [{"topic": t, "partition": p} for t, p in scope],
            "hanging": [{
                "topic": h.topic, "partition": h.partition, "producer_id": h.producer_id,
                "producer_epoch": h.producer_epoch,
                "coordinator_epoch": h.coordinator_epoch if h.coordinator_epoch >= 0 else None,
                "start_offset": h.start_offset, "last_timestamp": h.last_timestamp,
                "duration_min": h.duration_min, "transactional_id": h.transactional_id,
                "reason": h.reason} for h in hanging]}) + "\n")
        return EXIT_OK
    out.write(pretty_print_table(HANGING_HEADERS, [[
        h.topic, str(h.partition), str(h.producer_id), str(h.producer_epoch),
        str(h.coordinator_epoch if h.coordinator_epoch >= 0 else -1), str(h.start_offset),
        str(h.last_timestamp), str(h.duration_min)] for h in hanging]))
    return EXIT_OK


def _spec_text(topic: str, partition: int, producer_id: int, epoch: int,
               coordinator_epoch: int) -> str:
    """``AbortTransactionSpec.toString``."""
    return (f"AbortTransactionSpec(topicPartition={topic}-{partition}, producerId={producer_id}, "
            f"producerEpoch={epoch}, coordinatorEpoch={coordinator_epoch})")


def _engine_text(log: Any, error: KafkaLogError) -> str:
    """The engine's refusal, for the line after Kafka's: the partition's directory and the
    offset the marker would have had (the error's own position is within the marker batch)."""
    at = "" if error.offset is None else f"offset {error.offset}: "
    return f"{log.directory}: {at}{error.message}"


def _abort(logs: LogDir, args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """``AbortTransactionCommand``: the spec (``buildAbortSpec`` from the start offset, or the
    given producer), then the ABORT marker, written as WriteTxnMarkers would."""
    topic, partition = args.topic, args.partition
    if args.start_offset is not None:
        log = _held_log(logs, topic, partition,
                        f"Failed to validate producer state for partition {topic}-{partition}")
        found = next((e for e in log.active_producers()
                      if e.current_txn_first_offset == args.start_offset), None)
        if found is None:
            raise CommandFailed(f"Could not find any open transactions starting at offset "
                                f"{args.start_offset} on partition {topic}-{partition}")
        # the admin client makes a negative coordinator epoch absent; the tool takes 0 then
        pid, epoch = found.producer_id, found.producer_epoch
        coordinator_epoch = found.coordinator_epoch if found.coordinator_epoch >= 0 else 0
    else:
        pid, epoch = args.producer_id, args.producer_epoch
        # a transaction of a new producer id that hung before its first marker shows -1 in
        # DescribeProducers: 0 is <= any leader epoch (Kafka's comment and rule)
        coordinator_epoch = max(args.coordinator_epoch, 0)
    spec = _spec_text(topic, partition, pid, epoch, coordinator_epoch)
    message = f"Failed to abort transaction {spec}"
    log = _held_log(logs, topic, partition, message)
    open_before = next((e.current_txn_first_offset for e in log.active_producers()
                        if e.producer_id == pid), None)
    try:
        info = log.abort_transaction(pid, epoch, coordinator_epoch)
    except InvalidProducerEpochError as e:
        # AbortTransactionHandler's texts (Kafka's "failed due an" included)
        raise CommandFailed(
            f"{message}: WriteTxnMarkers request with {spec} failed due an invalid producer "
            f"epoch.{_DEBUG_HINT}\n{_engine_text(log, e)}") from None
    except TransactionCoordinatorFencedError as e:
        raise CommandFailed(
            f"{message}: WriteTxnMarkers request with {spec} failed since the provided "
            f"coordinator epoch {coordinator_epoch} has been fenced by the active "
            f"coordinator.{_DEBUG_HINT}\n{_engine_text(log, e)}") from None
    except ValueError as e:  # a negative producer id or epoch: no marker can carry it
        raise CommandFailed(f"{message}: {e}") from None
    result = {"topic": topic, "partition": partition, "producer_id": pid,
              "producer_epoch": epoch, "coordinator_epoch": coordinator_epoch,
              "transaction_start_offset": open_before, "marker_offset": info.first_offset,
              "last_stable_offset": log.last_stable_offset}
    if args.json:
        out.write(json.dumps({"aborted": result}) + "\n")
    else:
        # Kafka prints nothing on success: the confirmation goes to stderr, stdout stays empty
        started = ("no open transaction" if open_before is None
                   else f"transaction started at offset {open_before}")
        err.write(f"Aborted {spec} ({started}): ABORT marker written at offset "
                  f"{info.first_offset} of {log.directory}; "
                  f"last stable offset now {log.last_stable_offset}\n")
    return EXIT_OK
