"""``kafka-transactions.sh``'s APIs (KIP-664) through kafka-python's admin client against a real
server: DescribeProducers, ListTransactions, DescribeTransactions and WriteTxnMarkers.

The scenario operators meet: a partition copied off a broker whose transaction coordinator is
gone holds an open transaction nobody will end, so its last stable offset is stuck and
``read_committed`` consumers stop there. The admin client finds it with DescribeProducers and
aborts it with WriteTxnMarkers; the consumers move on.
"""

from __future__ import annotations

import time

import pytest

from kafkalog import LogDir
from kafkalog.records.record import Record
from kafkalog.server.protocol import ErrorCode as E

from .conftest import start_server
from .wire import WireClient

kafka = pytest.importorskip("kafka", reason="kafka-python is not installed")
from kafka import KafkaConsumer, KafkaProducer  # noqa: E402
from kafka.admin import KafkaAdminClient  # noqa: E402
from kafka.admin._transactions import AbortTransactionSpec  # noqa: E402
from kafka.structs import TopicPartition  # noqa: E402

T0 = 1_700_000_000_000
HANGING_PID, HANGING_EPOCH = 4242, 3


def _hanging_log_dir(path) -> None:
    """A log dir as a broker would leave it: committed records, then an open transaction of a
    producer whose coordinator state is not in this dir, then more non-transactional data."""
    with LogDir.open(path) as d:
        d.create_topic("orders", 1)
        log = d.log("orders", 0)
        log.append([Record(b"k%d" % i, b"before-%d" % i, T0 + i) for i in range(3)])
        log.append([Record(b"t%d" % i, b"txn-%d" % i, T0 + 10 + i) for i in range(2)],
                   producer_id=HANGING_PID, producer_epoch=HANGING_EPOCH, base_sequence=0,
                   transactional=True)
        log.append([Record(b"a", b"after", T0 + 20)])
        assert log.last_stable_offset == 3


def _read_committed(address: str, topic: str) -> list[bytes]:
    c = KafkaConsumer(bootstrap_servers=address, isolation_level="read_committed",
                      auto_offset_reset="earliest", enable_auto_commit=False,
                      consumer_timeout_ms=3000)
    c.assign([TopicPartition(topic, 0)])
    try:
        return [m.value for m in c]
    finally:
        c.close()


def test_a_hanging_transaction_found_and_aborted_through_kafka_python(tmp_path):
    path = tmp_path / "logs"
    _hanging_log_dir(path)
    server = start_server(path)
    admin = KafkaAdminClient(bootstrap_servers=server.address)
    try:
        tp = TopicPartition("orders", 0)
        assert _read_committed(server.address, "orders") == [b"before-0", b"before-1",
                                                             b"before-2"]
        (state,) = admin.describe_producers([tp]).values()
        (p,) = state.active_producers
        assert (p.producer_id, p.producer_epoch, p.last_sequence, p.last_timestamp,
                p.coordinator_epoch, p.current_transaction_start_offset) == (
            HANGING_PID, HANGING_EPOCH, 1, T0 + 11, -1, 3)
        # the coordinator here does not know the producer: a hanging transaction
        listed = [t for ts in admin.list_transactions().values() for t in ts]
        assert HANGING_PID not in {t.producer_id for t in listed}

        # a wrong producer epoch is refused and nothing is written
        with pytest.raises(kafka.errors.InvalidProducerEpochError):
            admin.abort_transaction(AbortTransactionSpec(tp, HANGING_PID, HANGING_EPOCH - 1,
                                                         0))
        assert server.broker.log("orders", 0).last_stable_offset == 3
        admin.abort_transaction(AbortTransactionSpec(tp, HANGING_PID, HANGING_EPOCH,
                                                     max(p.coordinator_epoch, 0)))
        log = server.broker.log("orders", 0)
        assert log.last_stable_offset == log.log_end_offset == 7  # the marker at offset 6
        assert _read_committed(server.address, "orders") == [
            b"before-0", b"before-1", b"before-2", b"after"]
        (state,) = admin.describe_producers([tp]).values()
        (p,) = state.active_producers
        assert (p.coordinator_epoch, p.current_transaction_start_offset) == (0, -1)
        # a marker from an older coordinator epoch is fenced now
        with pytest.raises(kafka.errors.TransactionCoordinatorFencedError):
            admin.abort_transaction(AbortTransactionSpec(tp, HANGING_PID, HANGING_EPOCH, -1))
    finally:
        admin.close()
        server.stop()
    with LogDir.open(path) as d:  # the abort is durable: the LSO is free after a restart
        log = d.log("orders", 0)
        assert log.last_stable_offset == log.log_end_offset == 7
        # the transaction's records are still in the log, read_committed drops them
        assert [r.value for r in log.records()][3:5] == [b"txn-0", b"txn-1"]
        assert [r.offset for r in log.records(isolation="read_committed")] == [0, 1, 2, 5]
        assert [r.offset for r in log.records(include_control=True)][-1] == 6


def test_list_and_describe_transactions_of_a_live_transactional_producer(server):
    admin = KafkaAdminClient(bootstrap_servers=server.address)
    producer = KafkaProducer(bootstrap_servers=server.address, transactional_id="tx-live")
    done = KafkaProducer(bootstrap_servers=server.address, transactional_id="tx-done")
    try:
        admin.create_topics([kafka.admin.NewTopic("pay", 2, 1)])
        for p in (producer, done):
            p.init_transactions()
            p.begin_transaction()
        started = int(time.time() * 1000)
        producer.send("pay", b"open", partition=1).get(10)
        producer.send("pay", b"open", partition=0).get(10)
        done.send("pay", b"closed", partition=0).get(10)
        done.commit_transaction()

        listed = {t.transactional_id: t for ts in admin.list_transactions().values()
                  for t in ts}
        assert {k: v.state.value for k, v in listed.items()} == {
            "tx-live": "Ongoing", "tx-done": "CompleteCommit"}
        only = [t.transactional_id for ts in admin.list_transactions(
            state_filters=["Ongoing"]).values() for t in ts]
        assert only == ["tx-live"]
        by_pid = [t.transactional_id for ts in admin.list_transactions(
            producer_id_filters=[listed["tx-done"].producer_id]).values() for t in ts]
        assert by_pid == ["tx-done"]
        assert [t for ts in admin.list_transactions(duration_filter_ms=3_600_000).values()
                for t in ts if t.state.value == "Ongoing"] == []
        pattern = [t.transactional_id for ts in admin.list_transactions(
            transactional_id_pattern="tx-l.*").values() for t in ts]
        assert pattern == ["tx-live"]

        desc = admin.describe_transactions(["tx-live", "tx-done"])
        live = desc["tx-live"]
        assert live.state.value == "Ongoing"
        assert live.producer_id == listed["tx-live"].producer_id
        assert live.topic_partitions == {TopicPartition("pay", 0), TopicPartition("pay", 1)}
        assert abs(live.transaction_start_time_ms - started) < 10_000
        assert live.transaction_timeout_ms == 60000
        assert desc["tx-done"].state.value == "CompleteCommit"
        assert desc["tx-done"].topic_partitions == set()
        with pytest.raises(kafka.errors.TransactionalIdNotFoundError):
            admin.describe_transactions(["no-such-id"])

        (state,) = admin.describe_producers([TopicPartition("pay", 1)]).values()
        (p,) = state.active_producers
        assert p.producer_id == live.producer_id
        assert p.current_transaction_start_offset == 0
        producer.commit_transaction()
        assert admin.describe_transactions(["tx-live"])["tx-live"].state.value \
            == "CompleteCommit"
    finally:
        producer.close()
        done.close()
        admin.close()


def test_odd_inputs_on_the_wire(server):
    server.broker.create_topic("w", 1)
    with WireClient(server.address) as w:
        lt = w.request(66, 2, {"state_filters": ["Ongoing", "Sleeping"],
                               "producer_id_filters": [], "duration_filter": -1,
                               "transactional_id_pattern": None})
        assert (lt.error_code, list(lt.unknown_state_filters)) == (E.none, ["Sleeping"])
        bad = w.request(66, 2, {"state_filters": [], "producer_id_filters": [],
                                "duration_filter": -1, "transactional_id_pattern": "(ab(cd"})
        assert bad.error_code == E.invalid_regular_expression
        dt = w.request(65, 0, {"transactional_ids": ["", "nope"]})
        assert [s.error_code for s in dt.transaction_states] == [
            E.invalid_request, E.transactional_id_not_found]
        dp = w.request(61, 0, {"topics": [{"name": "w", "partition_indexes": [0, 3]}]})
        assert [(p.partition_index, p.error_code, len(p.active_producers))
                for p in dp.topics[0].partitions] == [
            (0, E.none, 0), (3, E.unknown_topic_or_partition, 0)]
        wm = w.request(27, 1, {"markers": [{
            "producer_id": 7, "producer_epoch": 0, "transaction_result": True,
            "coordinator_epoch": 0,
            "topics": [{"name": "w", "partition_indexes": [0, 5]}]}]})
        assert [(p.partition_index, p.error_code) for p in wm.markers[0].topics[0].partitions] \
            == [(0, E.none), (5, E.unknown_topic_or_partition)]
    # a COMMIT marker of an unknown producer is still a marker, as on a broker
    log = server.broker.log("w", 0)
    assert log.log_end_offset == 1
    assert list(log.records()) == []
    assert [r.offset for r in log.records(include_control=True)] == [0]
