"""The transaction coordinator's state machine (Kafka's TransactionCoordinator rules), its
``__transaction_state`` records, restarts, and producer id blocks; time is a ManualClock."""

from __future__ import annotations

import pytest

from kafkalog import LogDir, Record, encode_batch
from kafkalog.clock import ManualClock
from kafkalog.decoders import transaction_log
from kafkalog.server.broker import TRANSACTION_STATE_TOPIC, Broker
from kafkalog.server.producer_ids import PRODUCER_ID_BLOCK_SIZE, ProducerIdManager
from kafkalog.server.protocol import ErrorCode
from kafkalog.server.txn_coordinator import (
    TransactionCoordinator,
    TransactionState,
    partition_for,
)

from .conftest import TEST_CONFIG


@pytest.fixture
def clock():
    return ManualClock()


def open_coordinator(root, clock) -> tuple[Broker, TransactionCoordinator]:
    broker = Broker(LogDir.open(root, clock=clock), TEST_CONFIG, clock=clock)
    tc = TransactionCoordinator(broker)
    broker.transactions = tc
    return broker, tc


def produce_txn(broker: Broker, topic: str, pid: int, epoch: int, seq: int, value: bytes):
    return broker.log(topic, 0).append_as_leader(encode_batch(
        [Record(None, value, 1)], producer_id=pid, producer_epoch=epoch, base_sequence=seq,
        transactional=True))


def test_partition_for_is_kafkas_hash():
    # Utils.abs(String.hashCode) % n; "my-txn".hashCode() == -1061187895 in Java
    assert partition_for("my-txn", 50) == 1061187895 % 50
    assert partition_for("", 50) == 0


def test_idempotent_ids_come_from_durable_blocks(tmp_path, clock):
    broker, tc = open_coordinator(tmp_path, clock)
    ids = [tc.init_producer_id(None, 1000)[1] for _ in range(3)]
    broker.close()
    assert ids == [0, 1, 2]
    # the next run starts after the reserved block: an id is never handed out twice
    assert ProducerIdManager(tmp_path).generate() == PRODUCER_ID_BLOCK_SIZE


def test_commit_writes_markers_and_retries_are_answered(tmp_path, clock):
    broker, tc = open_coordinator(tmp_path, clock)
    broker.create_topic("a", 1)
    broker.create_topic("b", 1)
    code, pid, epoch = tc.init_producer_id("tx", 60000)
    assert (code, epoch) == (ErrorCode.none, 0)
    assert tc.add_partitions("tx", pid, epoch, {("a", 0), ("b", 0)}) == ErrorCode.none
    assert tc.state_of("tx") == TransactionState.ONGOING
    produce_txn(broker, "a", pid, epoch, 0, b"x")
    produce_txn(broker, "b", pid, epoch, 0, b"y")
    assert broker.log("a", 0).last_stable_offset == 0
    assert tc.end_transaction("tx", pid, epoch, True) == ErrorCode.none
    assert tc.state_of("tx") == TransactionState.COMPLETE_COMMIT
    for t in ("a", "b"):
        log = broker.log(t, 0)
        assert log.last_stable_offset == log.log_end_offset == 2
        assert len(list(log.records(isolation="read_committed"))) == 1
    assert tc.end_transaction("tx", pid, epoch, True) == ErrorCode.none  # a retry
    assert tc.end_transaction("tx", pid, epoch, False) == ErrorCode.invalid_txn_state
    assert tc.end_transaction("tx", pid + 1, epoch, True) == \
        ErrorCode.invalid_producer_id_mapping
    assert tc.end_transaction("tx", pid, epoch + 1, True) == ErrorCode.producer_fenced
    broker.close()


def test_reinit_fences_the_old_producer_and_aborts_its_transaction(tmp_path, clock):
    broker, tc = open_coordinator(tmp_path, clock)
    broker.create_topic("a", 1)
    _, pid, e0 = tc.init_producer_id("tx", 60000)
    tc.add_partitions("tx", pid, e0, {("a", 0)})
    produce_txn(broker, "a", pid, e0, 0, b"zombie")
    # a new instance: the ongoing transaction is aborted with a bumped epoch, retry asked
    assert tc.init_producer_id("tx", 60000)[0] == ErrorCode.concurrent_transactions
    assert tc.state_of("tx") == TransactionState.COMPLETE_ABORT
    log = broker.log("a", 0)
    assert list(log.records(isolation="read_committed")) == []
    code, pid2, e2 = tc.init_producer_id("tx", 60000)
    assert (code, pid2, e2) == (ErrorCode.none, pid, e0 + 2)
    # the zombie is fenced
    assert tc.add_partitions("tx", pid, e0, {("a", 0)}) == ErrorCode.producer_fenced
    assert tc.end_transaction("tx", pid, e0, True) == ErrorCode.producer_fenced
    broker.close()


def test_kip360_expected_producer_id_and_epoch(tmp_path, clock):
    broker, tc = open_coordinator(tmp_path, clock)
    _, pid, e0 = tc.init_producer_id("tx", 60000)
    code, pid1, e1 = tc.init_producer_id("tx", 60000, pid, e0)
    assert (code, pid1, e1) == (ErrorCode.none, pid, e0 + 1)
    # a retry of that bump (the response was lost): the same epoch again
    assert tc.init_producer_id("tx", 60000, pid, e0)[1:] == (pid, e0 + 1)
    assert tc.init_producer_id("tx", 60000, pid + 100, 0)[0] == ErrorCode.producer_fenced
    broker.close()


def test_timed_out_transactions_are_aborted(tmp_path, clock):
    broker, tc = open_coordinator(tmp_path, clock)
    broker.create_topic("a", 1)
    _, pid, epoch = tc.init_producer_id("slow", 1000)
    tc.add_partitions("slow", pid, epoch, {("a", 0)})
    produce_txn(broker, "a", pid, epoch, 0, b"late")
    clock.advance(999)
    assert tc.abort_timed_out() == []
    clock.advance(2)
    assert tc.abort_timed_out() == ["slow"]
    meta = tc.metadata("slow")
    assert meta.state == TransactionState.COMPLETE_ABORT and meta.producer_epoch == epoch + 1
    assert broker.log("a", 0).last_stable_offset == 2
    broker.close()


def test_state_survives_a_restart_and_prepared_ends_complete(tmp_path, clock):
    broker, tc = open_coordinator(tmp_path, clock)
    broker.create_topic("a", 1)
    _, pid, epoch = tc.init_producer_id("tx", 60000)
    tc.add_partitions("tx", pid, epoch, {("a", 0)})
    produce_txn(broker, "a", pid, epoch, 0, b"v")
    # crash between the PrepareCommit record and the markers
    meta = tc.metadata("tx")
    meta.state = TransactionState.PREPARE_COMMIT
    tc._persist(meta)
    broker.close()
    broker, tc = open_coordinator(tmp_path, clock)
    assert tc.state_of("tx") == TransactionState.COMPLETE_COMMIT
    assert [r.value for r in broker.log("a", 0).records(isolation="read_committed")] == [b"v"]
    assert tc.init_producer_id("tx", 60000)[1:] == (pid, epoch + 1)
    # the records are Kafka's TransactionLog key/value v0
    p = partition_for("tx", TEST_CONFIG.transaction_state_num_partitions)
    states = [transaction_log.decode_record_obj(r.key, r.value)["value"]["transactionStatus"]
              for r in broker.log(TRANSACTION_STATE_TOPIC, p).records()]
    assert states == [0, 1, 2, 4, 0]  # Empty, Ongoing, PrepareCommit, CompleteCommit, Empty
    broker.close()


def test_bad_arguments(tmp_path, clock):
    broker, tc = open_coordinator(tmp_path, clock)
    assert tc.init_producer_id("", 1000)[0] == ErrorCode.invalid_request
    assert tc.init_producer_id("t", 0)[0] == ErrorCode.invalid_transaction_timeout
    assert tc.init_producer_id("t", 900001)[0] == ErrorCode.invalid_transaction_timeout
    assert tc.add_partitions("unknown", 1, 0, {("a", 0)}) == \
        ErrorCode.invalid_producer_id_mapping
    _, pid, epoch = tc.init_producer_id("t", 1000)
    assert tc.end_transaction("t", pid, epoch, True) == ErrorCode.invalid_txn_state  # Empty
    broker.close()
