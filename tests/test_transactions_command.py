"""`kafkalog transactions` (kafkalog.admin.transactions_command) on real log dirs: Kafka's
tables (TransactionsCommand + ToolsUtils.prettyPrintTable), find-hanging's verdicts with and
without the coordinator state, aborting by start offset and what reopening then shows, the
error texts, the lock, --json."""

from __future__ import annotations

import doctest
import json
from pathlib import Path
from typing import Any

import pytest

from kafkalog import Record
from kafkalog.admin import transactions_command
from kafkalog.admin.transactions_command import main
from kafkalog.clock import ManualClock
from kafkalog.decoders import transaction_log
from kafkalog.log_dir import LogDir

TS = 1700000000000
MIN = 60_000
NOW = TS + 20 * MIN            # 20 minutes after the open transaction's records
PID, EPOCH = 4242, 3
HINT = " Enable debug logging for additional detail."


def _table(*rows: list[str]) -> str:
    """prettyPrintTable's text: left-aligned cells padded to the column width, each followed
    by a tab (written out here independently of the module's printer)."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "".join("".join(c + " " * (w - len(c)) + "\t" for c, w in zip(r, widths)) + "\n"
                   for r in rows)


def _txn_record(tid: str, pid: int, epoch: int, state: int,
                partitions: dict[str, list[int]] | None, start: int, update: int,
                timeout: int = 60000) -> Record:
    key, value = transaction_log.encode_record({"transactionalId": tid}, {
        "producerId": pid, "producerEpoch": epoch, "transactionTimeoutMs": timeout,
        "transactionStatus": state,
        "transactionPartitions": None if partitions is None else [
            {"topic": t, "partitionIds": ps} for t, ps in partitions.items()],
        "transactionLastUpdateTimestampMs": update, "transactionStartTimestampMs": start},
        version=0)
    return Record(key, value, update)


def _tombstone(tid: str) -> Record:
    key, value = transaction_log.encode_record({"transactionalId": tid}, None)
    return Record(key, value, TS)


def _write_orders(logs: LogDir) -> None:
    """orders-0: offset 0 a plain record, offsets 1-2 the open transaction of producer 4242
    epoch 3."""
    logs.create_topic("orders", 1)
    log = logs.log("orders", 0)
    log.append([Record(b"k", b"plain", TS)])
    log.append([Record(b"k", b"t1", TS), Record(b"k", b"t2", TS + 1)], producer_id=PID,
               producer_epoch=EPOCH, base_sequence=0, transactional=True)


def _write_coordinator(logs: LogDir, records: list[Record]) -> None:
    logs.create_topic("__transaction_state", 1)
    logs.log("__transaction_state", 0).append(records)


#: the coordinator state of the main fixture: tx-a Ongoing on orders-0 (producer 4242), tx-b
#: CompleteCommit (no transaction running), tx-dead Dead, tx-gone removed by a tombstone
COORDINATOR = [
    _txn_record("tx-gone", 5, 0, 0, None, -1, TS),
    _txn_record("tx-a", PID, EPOCH, 0, None, -1, TS - 10),
    _txn_record("tx-a", PID, EPOCH, 1, {"orders": [0]}, TS, TS),
    _txn_record("tx-b", 17, 0, 4, {}, -1, TS),
    _txn_record("tx-dead", 99, 0, 6, None, -1, TS),
    _tombstone("tx-gone"),
]


@pytest.fixture
def logdir(tmp_path: Path) -> Path:
    root = tmp_path / "logs"
    with LogDir.open(root, node_id=3) as logs:
        _write_orders(logs)
        _write_coordinator(logs, COORDINATOR)
    return root


@pytest.fixture
def bare(tmp_path: Path) -> Path:
    """The same open transaction in a dir without __transaction_state."""
    root = tmp_path / "bare"
    with LogDir.open(root, node_id=3) as logs:
        _write_orders(logs)
    return root


def _run(capsys: pytest.CaptureFixture[str], root: Path, *argv: str) -> tuple[int, str, str]:
    rc = main([str(root), *argv])
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def test_module_doctest() -> None:
    assert doctest.testmod(transactions_command).failed == 0


def test_pretty_print_table_is_kafkas() -> None:
    text = transactions_command.pretty_print_table(["A", "Long"], [["xyz", "1"], ["", "22"]])
    assert text == "A  \tLong\t\nxyz\t1   \t\n   \t22  \t\n"
    assert transactions_command.pretty_print_table(["A"], []) == "A\t\n"


# -- list ---------------------------------------------------------------------------------------

def test_list_table(logdir: Path, capsys) -> None:
    rc, out, err = _run(capsys, logdir, "list")
    assert (rc, err) == (0, "")
    assert out == _table(["TransactionalId", "Coordinator", "ProducerId", "TransactionState"],
                         ["tx-a", "3", "4242", "Ongoing"],
                         ["tx-b", "3", "17", "CompleteCommit"])


def test_list_duration_filter(logdir: Path, capsys) -> None:
    # tx-a started 20 minutes before NOW; tx-b has no start (-1): Kafka's filter
    # (now - start > filter) lets it through, as a broker does
    header = ["TransactionalId", "Coordinator", "ProducerId", "TransactionState"]
    rc, out, _ = _run(capsys, logdir, "list", "--duration-filter", str(10 * MIN),
                      "--now-ms", str(NOW))
    assert rc == 0 and out == _table(header, ["tx-a", "3", "4242", "Ongoing"],
                                     ["tx-b", "3", "17", "CompleteCommit"])
    rc, out, _ = _run(capsys, logdir, "list", "--duration-filter", str(20 * MIN),
                      "--now-ms", str(NOW))
    assert rc == 0 and out == _table(header, ["tx-b", "3", "17", "CompleteCommit"])
    rc, out, _ = _run(capsys, logdir, "list", "--duration-filter", "-1", "--now-ms", str(NOW))
    assert out.count("\n") == 3


def test_list_json(logdir: Path, capsys) -> None:
    rc, out, _ = _run(capsys, logdir, "list", "--json")
    assert rc == 0 and json.loads(out) == {"transactions": [
        {"transactional_id": "tx-a", "coordinator": 3, "producer_id": 4242, "state": "Ongoing"},
        {"transactional_id": "tx-b", "coordinator": 3, "producer_id": 17,
         "state": "CompleteCommit"}]}


def test_list_without_transaction_state_or_meta(bare: Path, tmp_path: Path, capsys) -> None:
    rc, out, err = _run(capsys, bare, "list")
    assert rc == 0
    assert out == "TransactionalId\tCoordinator\tProducerId\tTransactionState\t\n"
    assert err == f"note: {bare} has no __transaction_state partition: no transactional id " \
                  "is known here\n"
    # no meta.properties: the coordinator is -1
    (bare / "meta.properties").unlink()
    with LogDir.open(bare, read_only=True) as logs:
        assert logs.meta is None
    root = tmp_path / "nometa"
    with LogDir.open(root) as logs:
        _write_coordinator(logs, [_txn_record("x", 1, 0, 0, None, -1, TS)])
    (root / "meta.properties").unlink()
    rc, out, _ = _run(capsys, root, "list")
    assert out.splitlines()[1].split("\t")[1].strip() == "-1"


def test_unreadable_coordinator_record_is_skipped_with_a_note(tmp_path: Path, capsys) -> None:
    root = tmp_path / "logs"
    with LogDir.open(root, node_id=3) as logs:
        _write_coordinator(logs, [Record(b"\x00\x00garbage", b"\x00\x00", TS),
                                  _txn_record("ok", 1, 0, 0, None, -1, TS)])
    rc, out, err = _run(capsys, root, "list")
    assert rc == 0 and "ok  " in out
    assert err.startswith(f"note: {root / '__transaction_state-0'}: offset 0: unreadable "
                          "transaction log record, skipped: ")


# -- describe -----------------------------------------------------------------------------------

DESCRIBE_HEADER = ["CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch",
                   "TransactionState", "TransactionTimeoutMs", "CurrentTransactionStartTimeMs",
                   "TransactionDurationMs", "TopicPartitions"]


def test_describe_open_transaction(logdir: Path, capsys) -> None:
    rc, out, err = _run(capsys, logdir, "describe", "--transactional-id", "tx-a",
                        "--now-ms", str(NOW))
    assert (rc, err) == (0, "")
    assert out == _table(DESCRIBE_HEADER, ["3", "tx-a", "4242", "3", "Ongoing", "60000",
                                           str(TS), str(20 * MIN), "orders-0"])


def test_describe_without_open_transaction_prints_none(logdir: Path, capsys) -> None:
    # DescribeTransactionsHandler: a start time < 0 is absent; the tool prints None for it and
    # for the duration, and an empty TopicPartitions cell
    rc, out, _ = _run(capsys, logdir, "describe", "--transactional-id", "tx-b")
    assert rc == 0
    assert out == _table(DESCRIBE_HEADER, ["3", "tx-b", "17", "0", "CompleteCommit", "60000",
                                           "None", "None", ""])
    rc, out, _ = _run(capsys, logdir, "describe", "--transactional-id", "tx-b", "--json")
    assert json.loads(out) == {
        "coordinator_id": 3, "transactional_id": "tx-b", "producer_id": 17,
        "producer_epoch": 0, "state": "CompleteCommit", "transaction_timeout_ms": 60000,
        "transaction_start_time_ms": None, "transaction_duration_ms": None,
        "topic_partitions": []}


@pytest.mark.parametrize("tid", ["nope", "tx-dead", "tx-gone"])
def test_describe_unknown_dead_or_deleted_id(logdir: Path, capsys, tid: str) -> None:
    rc, out, err = _run(capsys, logdir, "describe", "--transactional-id", tid)
    assert (rc, out) == (1, "")
    assert err == (f"Failed to describe transaction state of transactional-id `{tid}`: "
                   f"DescribeTransactions request for transactionalId `{tid}` failed because "
                   f"the ID could not be found.{HINT}\n")


def test_describe_json(logdir: Path, capsys) -> None:
    rc, out, _ = _run(capsys, logdir, "describe", "--transactional-id", "tx-a", "--json",
                      "--now-ms", str(NOW))
    assert rc == 0 and json.loads(out) == {
        "coordinator_id": 3, "transactional_id": "tx-a", "producer_id": 4242,
        "producer_epoch": 3, "state": "Ongoing", "transaction_timeout_ms": 60000,
        "transaction_start_time_ms": TS, "transaction_duration_ms": 20 * MIN,
        "topic_partitions": [{"topic": "orders", "partition": 0}]}


# -- describe-producers ---------------------------------------------------------------------------

PRODUCERS_HEADER = ["ProducerId", "ProducerEpoch", "LatestCoordinatorEpoch", "LastSequence",
                    "LastTimestamp", "CurrentTransactionStartOffset"]


def test_describe_producers(logdir: Path, capsys) -> None:
    with LogDir.open(logdir, node_id=3) as logs:
        # an idempotent producer whose transaction was committed (coordinator epoch 7)
        log = logs.log("orders", 0)
        log.append([Record(b"k", b"c", TS + 5)], producer_id=17, producer_epoch=0,
                   base_sequence=0, transactional=True)
        log.commit_transaction(17, 0, 7)
    rc, out, err = _run(capsys, logdir, "describe-producers", "--topic", "orders",
                        "--partition", "0")
    assert (rc, err) == (0, "")
    marker_ts = int(out.splitlines()[1].split("\t")[4])  # the COMMIT marker's wall-clock time
    assert out == _table(PRODUCERS_HEADER, ["17", "0", "7", "0", str(marker_ts), "None"],
                         ["4242", "3", "-1", "1", str(TS + 1), "1"])
    rc, out, _ = _run(capsys, logdir, "describe-producers", "--topic", "orders", "--partition",
                      "0", "--json")
    assert rc == 0 and json.loads(out) == {"topic": "orders", "partition": 0, "producers": [
        {"producer_id": 17, "producer_epoch": 0, "coordinator_epoch": 7, "last_sequence": 0,
         "last_timestamp": marker_ts, "current_transaction_start_offset": None},
        {"producer_id": 4242, "producer_epoch": 3, "coordinator_epoch": None,
         "last_sequence": 1, "last_timestamp": TS + 1, "current_transaction_start_offset": 1}]}


def test_describe_producers_unknown_partition(logdir: Path, capsys) -> None:
    rc, out, err = _run(capsys, logdir, "describe-producers", "--topic", "orders",
                        "--partition", "9")
    assert (rc, out) == (1, "")
    assert err == ("Failed to describe producers for partition orders-9 on leader: This server "
                   f"does not host this topic-partition (orders-9 is not in {logdir}).{HINT}\n")
    rc, _, err = _run(capsys, logdir, "describe-producers", "--topic", "orders",
                      "--partition", "0", "--broker-id", "5")
    assert rc == 1 and err.startswith("Failed to describe producers for partition orders-0 on "
                                      "broker 5: ")


# -- find-hanging -------------------------------------------------------------------------------

HANGING_HEADER = ["Topic", "Partition", "ProducerId", "ProducerEpoch", "CoordinatorEpoch",
                  "StartOffset", "LastTimestamp", "Duration(min)"]
NO_HANGING = _table(HANGING_HEADER)
HANGING_ORDERS = _table(HANGING_HEADER, ["orders", "0", "4242", "3", "-1", "1", str(TS + 1),
                                         "19"])


def test_find_hanging_coordinator_knows_it(logdir: Path, capsys) -> None:
    # tx-a is Ongoing with orders-0: the coordinator will write its marker
    for scope in ([], ["--topic", "orders"], ["--topic", "orders", "--partition", "0"]):
        rc, out, err = _run(capsys, logdir, "find-hanging", "--now-ms", str(NOW), *scope)
        assert (rc, out, err) == (0, NO_HANGING, "")


def test_find_hanging_without_coordinator_state(bare: Path, capsys) -> None:
    rc, out, err = _run(capsys, bare, "find-hanging", "--now-ms", str(NOW))
    assert (rc, out) == (0, HANGING_ORDERS)   # (NOW - (TS + 1)) ms is 19.99 minutes: 19
    assert "has no __transaction_state partition" in err
    rc, out, _ = _run(capsys, bare, "find-hanging", "--now-ms", str(NOW), "--json")
    assert json.loads(out)["hanging"] == [{
        "topic": "orders", "partition": 0, "producer_id": 4242, "producer_epoch": 3,
        "coordinator_epoch": None, "start_offset": 1, "last_timestamp": TS + 1,
        "duration_min": 19, "transactional_id": None,
        "reason": "no __transaction_state in the log dir"}]


def test_find_hanging_only_older_than_the_max_timeout(bare: Path, capsys) -> None:
    rc, out, _ = _run(capsys, bare, "find-hanging", "--now-ms", str(TS + 1 + 15 * MIN))
    assert (rc, out) == (0, NO_HANGING)        # not more than 15 minutes: no candidate
    rc, out, _ = _run(capsys, bare, "find-hanging", "--now-ms", str(TS + 2 + 15 * MIN))
    assert out.count("\n") == 2
    rc, out, _ = _run(capsys, bare, "find-hanging", "--now-ms", str(NOW),
                      "--max-transaction-timeout", "30")
    assert (rc, out) == (0, NO_HANGING)


@pytest.mark.parametrize("records, reason", [
    # the producer id is nobody's
    ([_txn_record("other", 7, 0, 1, {"orders": [0]}, TS, TS)],
     "no transactional id has producer id 4242"),
    # the id is known, its transaction is over (the marker never reached orders-0)
    ([_txn_record("tx-a", PID, EPOCH, 4, {}, -1, TS)],
     "the transaction of 'tx-a' (CompleteCommit) does not include orders-0"),
    # the id's open transaction is on another partition only
    ([_txn_record("tx-a", PID, EPOCH, 1, {"other": [0]}, TS, TS)],
     "the transaction of 'tx-a' (Ongoing) does not include orders-0"),
    # Dead ids are not listed: the producer id is nobody's
    ([_txn_record("tx-a", PID, EPOCH, 6, None, -1, TS)],
     "no transactional id has producer id 4242"),
])
def test_find_hanging_coordinator_disagrees(tmp_path: Path, capsys, records: list[Record],
                                            reason: str) -> None:
    root = tmp_path / "logs"
    with LogDir.open(root, node_id=3) as logs:
        _write_orders(logs)
        _write_coordinator(logs, records)
    rc, out, err = _run(capsys, root, "find-hanging", "--now-ms", str(NOW), "--topic", "orders")
    assert (rc, out, err) == (0, HANGING_ORDERS, "")
    rc, out, _ = _run(capsys, root, "find-hanging", "--now-ms", str(NOW), "--json")
    assert [h["reason"] for h in json.loads(out)["hanging"]] == [reason]


def test_find_hanging_with_the_servers_coordinator(tmp_path: Path, capsys) -> None:
    """__transaction_state written by kafkalog's own TransactionCoordinator (InitProducerId,
    AddPartitionsToTxn), then a second producer the coordinator never heard of."""
    from kafkalog.server.broker import Broker, ServerConfig
    from kafkalog.server.txn_coordinator import TransactionCoordinator

    root = tmp_path / "logs"
    clock = ManualClock(TS)
    broker = Broker(LogDir.open(root, node_id=3, clock=clock),
                    ServerConfig(transaction_state_num_partitions=1), clock=clock)
    try:
        broker.log_dir.create_topic("orders", 2)
        tc = TransactionCoordinator(broker)
        code, pid, epoch = tc.init_producer_id("real-tx", 60000)
        assert int(code) == 0
        assert int(tc.add_partitions("real-tx", pid, epoch, {("orders", 0)})) == 0
        broker.log("orders", 0).append([Record(b"k", b"v", TS)], producer_id=pid,
                                       producer_epoch=epoch, base_sequence=0,
                                       transactional=True)
        broker.log("orders", 1).append([Record(b"k", b"v", TS)], producer_id=pid + 1000,
                                       producer_epoch=0, base_sequence=0, transactional=True)
    finally:
        broker.close()
    rc, out, _ = _run(capsys, root, "list")
    assert out.splitlines()[1].split("\t")[:4] == [
        "real-tx        ", "3          ", str(pid).ljust(10), "Ongoing         "]
    rc, out, err = _run(capsys, root, "find-hanging", "--now-ms", str(NOW))
    assert (rc, err) == (0, "")
    assert out == _table(HANGING_HEADER, ["orders", "1", str(pid + 1000), "0", "-1", "0",
                                          str(TS), "20"])


def test_find_hanging_scope_errors(logdir: Path, capsys) -> None:
    rc, out, err = _run(capsys, logdir, "find-hanging", "--partition", "0")
    assert (rc, out, err) == (1, "", "The --partition argument requires --topic to be "
                                     "provided\n")
    rc, _, err = _run(capsys, logdir, "find-hanging", "--topic", "nope")
    assert (rc, err) == (1, f"Failed to describe 1 topics: Topic nope not found (not in "
                            f"{logdir}).{HINT}\n")
    rc, _, err = _run(capsys, logdir, "find-hanging", "--topic", "orders", "--partition", "4")
    assert (rc, err) == (1, "Failed to describe producers for 1 partitions on broker "
                            "Optional.empty: This server does not host this topic-partition "
                            f"(orders-4 is not in {logdir}).{HINT}\n")
    rc, _, err = _run(capsys, logdir, "find-hanging", "--broker-id", "1")
    assert rc == 1 and "node 3" in err
    rc, out, _ = _run(capsys, logdir, "find-hanging", "--broker-id", "3", "--now-ms", str(NOW))
    assert (rc, out) == (0, NO_HANGING)


# -- abort --------------------------------------------------------------------------------------

def _committed_values(root: Path) -> list[bytes]:
    with LogDir.open(root, read_only=True) as logs:
        return [r.value for r in logs.log("orders", 0).records(isolation="read_committed")]


def test_abort_by_start_offset(bare: Path, capsys) -> None:
    assert _committed_values(bare) == [b"plain"]          # the LSO stops at the open txn
    rc, out, err = _run(capsys, bare, "abort", "--topic", "orders", "--partition", "0",
                        "--start-offset", "1")
    assert (rc, out) == (0, "")                            # Kafka prints nothing on stdout
    assert err == ("Aborted AbortTransactionSpec(topicPartition=orders-0, producerId=4242, "
                   "producerEpoch=3, coordinatorEpoch=0) (transaction started at offset 1): "
                   f"ABORT marker written at offset 3 of {bare / 'orders-0'}; last stable "
                   "offset now 4\n")
    with LogDir.open(bare, node_id=3) as logs:             # reopened: the marker is durable
        log = logs.log("orders", 0)
        assert log.log_end_offset == 4
        assert log.last_stable_offset == log.log_end_offset
        assert [r.value for r in log.records(isolation="read_committed")] == [b"plain"]
        assert [r.value for r in log.records()] == [b"plain", b"t1", b"t2"]
        assert log.active_producers()[0].current_txn_first_offset is None
    rc, out, _ = _run(capsys, bare, "find-hanging", "--now-ms", str(NOW))
    assert (rc, out) == (0, NO_HANGING)
    rc, _, err = _run(capsys, bare, "abort", "--topic", "orders", "--partition", "0",
                      "--start-offset", "1")               # nothing open there any more
    assert (rc, err) == (1, "Could not find any open transactions starting at offset 1 on "
                            "partition orders-0\n")


def test_abort_json_and_producer_id_form(bare: Path, capsys) -> None:
    # --coordinator-epoch -1 becomes 0 (Kafka's rule); the marker records it
    rc, out, err = _run(capsys, bare, "abort", "--topic", "orders", "--partition", "0",
                        "--producer-id", "4242", "--producer-epoch", "3",
                        "--coordinator-epoch", "-1", "--json")
    assert (rc, err) == (0, "")
    assert json.loads(out) == {"aborted": {
        "topic": "orders", "partition": 0, "producer_id": 4242, "producer_epoch": 3,
        "coordinator_epoch": 0, "transaction_start_offset": 1, "marker_offset": 3,
        "last_stable_offset": 4}}
    rc, out, _ = _run(capsys, bare, "describe-producers", "--topic", "orders", "--partition",
                      "0", "--json")
    (producer,) = json.loads(out)["producers"]
    assert (producer["coordinator_epoch"], producer["current_transaction_start_offset"]) \
        == (0, None)
    assert _committed_values(bare) == [b"plain"]


def test_abort_no_transaction_at_offset_changes_nothing(bare: Path, capsys) -> None:
    rc, out, err = _run(capsys, bare, "abort", "--topic", "orders", "--partition", "0",
                        "--start-offset", "0")
    assert (rc, out, err) == (1, "", "Could not find any open transactions starting at offset "
                                     "0 on partition orders-0\n")
    with LogDir.open(bare, read_only=True) as logs:
        assert logs.log("orders", 0).log_end_offset == 3


def test_abort_stale_producer_epoch(bare: Path, capsys) -> None:
    rc, out, err = _run(capsys, bare, "abort", "--topic", "orders", "--partition", "0",
                        "--producer-id", "4242", "--producer-epoch", "2",
                        "--coordinator-epoch", "0")
    spec = ("AbortTransactionSpec(topicPartition=orders-0, producerId=4242, producerEpoch=2, "
            "coordinatorEpoch=0)")
    assert (rc, out) == (1, "")
    first, second = err.splitlines()
    assert first == (f"Failed to abort transaction {spec}: WriteTxnMarkers request with {spec} "
                     f"failed due an invalid producer epoch.{HINT}")
    assert second.startswith(f"{bare / 'orders-0'}: offset 3: ") and "epoch" in second
    with LogDir.open(bare, read_only=True) as logs:
        log = logs.log("orders", 0)
        assert (log.log_end_offset, log.last_stable_offset) == (3, 1)


def test_abort_fenced_coordinator_epoch(bare: Path, capsys) -> None:
    with LogDir.open(bare, node_id=3) as logs:
        log = logs.log("orders", 0)
        log.commit_transaction(PID, EPOCH, 5)           # the last marker had coordinator epoch 5
        log.append([Record(b"k", b"t3", TS + 2)], producer_id=PID, producer_epoch=EPOCH,
                   base_sequence=2, transactional=True)
    rc, _, err = _run(capsys, bare, "abort", "--topic", "orders", "--partition", "0",
                      "--producer-id", str(PID), "--producer-epoch", str(EPOCH),
                      "--coordinator-epoch", "2")
    assert rc == 1
    assert err.splitlines()[0].endswith(
        "failed since the provided coordinator epoch 2 has been fenced by the active "
        f"coordinator.{HINT}")
    # by start offset the producer's own coordinator epoch (5) is used: accepted
    rc, _, err = _run(capsys, bare, "abort", "--topic", "orders", "--partition", "0",
                      "--start-offset", "4")
    assert rc == 0 and "coordinatorEpoch=5" in err
    assert _committed_values(bare) == [b"plain", b"t1", b"t2"]


def test_abort_unknown_partition(bare: Path, capsys) -> None:
    rc, _, err = _run(capsys, bare, "abort", "--topic", "orders", "--partition", "3",
                      "--start-offset", "1")
    assert (rc, err) == (1, "Failed to validate producer state for partition orders-3: This "
                            "server does not host this topic-partition (orders-3 is not in "
                            f"{bare}).{HINT}\n")
    rc, _, err = _run(capsys, bare, "abort", "--topic", "nope", "--partition", "0",
                      "--producer-id", "1", "--producer-epoch", "0", "--coordinator-epoch", "0")
    assert rc == 1 and err.startswith(
        "Failed to abort transaction AbortTransactionSpec(topicPartition=nope-0, producerId=1, "
        "producerEpoch=0, coordinatorEpoch=0): This server does not host this topic-partition")


def test_abort_refuses_a_locked_dir(bare: Path, capsys) -> None:
    with LogDir.open(bare, node_id=3) as logs:     # a running writer holds .lock
        rc, out, err = _run(capsys, bare, "abort", "--topic", "orders", "--partition", "0",
                            "--start-offset", "1")
        assert (rc, out) == (1, "")
        assert err.startswith(f"kafkalog transactions abort: {bare / '.lock'}: locked by ")
        assert "the log directory is in use" in err
        # the reading subcommands take no lock
        rc, out, _ = _run(capsys, bare, "describe-producers", "--topic", "orders",
                          "--partition", "0")
        assert rc == 0 and out.count("\n") == 2
        assert logs.log("orders", 0).last_stable_offset == 1
    assert _committed_values(bare) == [b"plain"]
    with LogDir.open(bare, read_only=True) as logs:
        assert logs.log("orders", 0).log_end_offset == 3


@pytest.mark.parametrize("extra, message", [
    ([], "The transaction to abort must be identified either with --start-offset (for brokers "
         "on 3.0 or above) or with --producer-id, --producer-epoch, and --coordinator-epoch "
         "(for older brokers)"),
    (["--producer-id", "1"], "Missing required argument --producer-epoch"),
    (["--producer-id", "1", "--producer-epoch", "0"],
     "Missing required argument --coordinator-epoch"),
])
def test_abort_missing_arguments(bare: Path, capsys, extra: list[str], message: str) -> None:
    rc, out, err = _run(capsys, bare, "abort", "--topic", "orders", "--partition", "0", *extra)
    assert (rc, out, err) == (1, "", message + "\n")


# -- usage and the dir ---------------------------------------------------------------------------

def test_usage_errors(bare: Path, capsys) -> None:
    rc, _, err = _run(capsys, bare)
    assert rc == 2 and "a command is required" in err
    rc, _, err = _run(capsys, bare, "describe")
    assert rc == 2 and "--transactional-id" in err
    rc, _, err = _run(capsys, bare, "abort", "--topic", "orders", "--partition", "0",
                      "--producer-id", "1", "--producer-epoch", "40000",
                      "--coordinator-epoch", "0")
    assert rc == 2 and "Short" in err


def test_not_a_log_dir(tmp_path: Path, capsys) -> None:
    missing = tmp_path / "missing"
    rc, _, err = _run(capsys, missing, "list")
    assert (rc, err) == (1, f"kafkalog transactions list: {missing}: no such log directory\n")
    assert not missing.exists()
    rc, _, _ = _run(capsys, missing, "abort", "--topic", "t", "--partition", "0",
                    "--start-offset", "0")
    assert rc == 1 and not missing.exists()     # a typo never becomes an empty log dir


def test_load_transaction_state(logdir: Path) -> None:
    with LogDir.open(logdir, read_only=True) as logs:
        state = transactions_command.load_transaction_state(logs)
    assert state.present and state.skipped == []
    assert sorted(state.transactions) == ["tx-a", "tx-b", "tx-dead"]
    a: Any = state.transactions["tx-a"]
    assert (a.state_name, a.partitions, a.start_ms) == ("Ongoing", frozenset({("orders", 0)}), TS)
    assert [t.transactional_id for t in state.listed()] == ["tx-a", "tx-b"]
    assert state.describe("tx-dead") is None
