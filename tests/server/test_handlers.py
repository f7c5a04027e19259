"""Raw requests (encoded by kio) against each handler: the answers and error codes Kafka gives,
pipelining, long polling. Real server, real socket."""

from __future__ import annotations

import struct
import threading
import time

import pytest

from kafkalog import Record, encode_batch
from kafkalog.server.broker import OFFSETS_TOPIC
from kafkalog.server.protocol import ErrorCode as E

from .wire import WireClient

META = {"allow_auto_topic_creation": False, "include_topic_authorized_operations": False}


@pytest.fixture
def wire(server):
    with WireClient(server.address) as c:
        yield c


def produce_req(topic: str, records: bytes | None, acks: int = -1, partition: int = 0,
                txn: str | None = None) -> dict:
    return {"transactional_id": txn, "acks": acks, "timeout": 30000, "topic_data": [
        {"name": topic, "partition_data": [{"index": partition, "records": records}]}]}


def fetch_req(topic: str, offset: int, *, wait: int = 0, min_bytes: int = 1,
              isolation: int = 0, partition_max: int = 1 << 20, epoch: int = -1,
              max_bytes: int = 1 << 20, session_id: int = 0) -> dict:
    return {"replica_id": -1, "max_wait": wait, "min_bytes": min_bytes, "max_bytes": max_bytes,
            "isolation_level": isolation, "session_id": session_id, "session_epoch": -1,
            "topics": [{"topic": topic, "partitions": [
                {"partition": 0, "current_leader_epoch": epoch, "fetch_offset": offset,
                 "last_fetched_epoch": -1, "log_start_offset": -1,
                 "partition_max_bytes": partition_max}]}],
            "forgotten_topics_data": [], "rack_id": ""}


def part(resp):
    """The only partition of a fetch/produce/list-offsets response."""
    t = resp.responses[0] if hasattr(resp, "responses") else resp.topics[0]
    parts = getattr(t, "partitions", None) or getattr(t, "partition_responses", None)
    return parts[0]


# -- metadata ----------------------------------------------------------------------------------


def test_metadata_topics_auto_creation_and_ids(server, wire):
    server.broker.create_topic("known", 2)
    m = wire.request(3, 12, {"topics": None, **META})
    assert [t.name for t in m.topics] == ["known"] and m.controller_id == 1
    assert m.cluster_id == server.broker.cluster_id
    (t,) = m.topics
    assert [(p.partition_index, p.leader_id, p.leader_epoch, p.replica_nodes, p.isr_nodes)
            for p in t.partitions] == [(0, 1, 0, (1,), (1,)), (1, 1, 0, (1,), (1,))]
    m = wire.request(3, 12, {"topics": [{"name": "nope", "topic_id": None},
                                        {"name": "bad name", "topic_id": None}], **META})
    assert [t.error_code for t in m.topics] == [E.unknown_topic_or_partition,
                                                E.invalid_topic_exception]
    m = wire.request(3, 12, {"topics": [{"name": "auto", "topic_id": None}],
                             "allow_auto_topic_creation": True,
                             "include_topic_authorized_operations": True})
    assert m.topics[0].error_code == E.none and len(m.topics[0].partitions) == 1
    assert m.topics[0].topic_authorized_operations > 0
    m = wire.request(3, 12, {"topics": [{"name": None, "topic_id": t.topic_id},
                                        {"name": None, "topic_id": __import__("uuid").uuid4()}],
                             **META})
    assert m.topics[0].name == "known" and m.topics[1].error_code == E.unknown_topic_id
    m = wire.request(3, 0, {"topics": []})  # v0: an empty list means every topic
    assert sorted(t.name for t in m.topics) == ["auto", "known"]


def test_kafka_4_2_versions_of_metadata_describe_cluster_and_fetch(server, wire):
    """Metadata v13 (KIP-1102's top-level error code: NONE, as a 4.2 broker always answers),
    DescribeCluster v2 (KIP-1073: the node is not fenced) and Fetch v17-v18 (tagged follower
    fields only) answer as their previous versions do."""
    server.broker.create_topic("t", 1)
    server.broker.log("t", 0).append([Record(b"k", b"v", 1)])
    server.broker.log_dir.set_high_watermark("t", 0, 1)
    old, new = (wire.request(3, v, {"topics": None, **META}) for v in (12, 13))
    assert new.error_code == E.none
    tid = __import__("uuid").UUID(bytes=server.broker.topic_id("t").to_bytes())
    assert [(t.name, t.topic_id, len(t.partitions)) for t in new.topics] == \
        [(t.name, t.topic_id, len(t.partitions)) for t in old.topics] == [("t", tid, 1)]
    for include_fenced in (False, True):
        c = wire.request(60, 2, {"include_cluster_authorized_operations": False,
                                 "endpoint_type": 1, "include_fenced_brokers": include_fenced})
        assert c.error_code == E.none
        assert [(b.broker_id, b.is_fenced) for b in c.brokers] == [(1, False)]
    for v in (16, 17, 18):
        req = fetch_req("t", 0)
        req["topics"][0]["topic_id"] = server.broker.topic_id("t")
        req["replica_state"] = {"replica_id": -1, "replica_epoch": -1}
        req["cluster_id"] = None
        r = part(wire.request(1, v, req))
        assert (r.error_code, r.high_watermark) == (E.none, 1), v
        assert r.records == server.broker.log("t", 0).read(0, 1 << 20)


# -- produce -----------------------------------------------------------------------------------


def test_produce_errors_per_partition(server, wire):
    server.broker.create_topic("t", 1)
    good = encode_batch([Record(b"k", b"v", 1)])
    r = part(wire.request(0, 9, produce_req("t", good)))
    assert (r.error_code, r.base_offset) == (E.none, 0)
    assert part(wire.request(0, 9, produce_req("t", good, acks=2))).error_code == \
        E.invalid_required_acks
    assert part(wire.request(0, 9, produce_req("missing", good))).error_code == \
        E.unknown_topic_or_partition
    server.broker.ensure_internal_topic(OFFSETS_TOPIC)
    assert part(wire.request(0, 9, produce_req(OFFSETS_TOPIC, good))).error_code == \
        E.invalid_topic_exception
    corrupt = good[:-1] + bytes([good[-1] ^ 1])
    r = part(wire.request(0, 9, produce_req("t", corrupt)))
    assert r.error_code == E.corrupt_message and "crc" in r.error_message
    assert part(wire.request(0, 9, produce_req("t", good + good))).error_code == \
        E.invalid_record
    txn = encode_batch([Record(None, b"t", 1)], producer_id=5, producer_epoch=0,
                       base_sequence=0, transactional=True)
    assert part(wire.request(0, 9, produce_req("t", txn))).error_code == \
        E.transactional_id_authorization_failed
    assert part(wire.request(0, 9, produce_req("t", txn, txn="who"))).error_code in (
        E.invalid_producer_id_mapping, E.invalid_txn_state)
    assert server.broker.log("t", 0).log_end_offset == 1


def test_acks_zero_gets_no_response_and_pipelined_requests_answer_in_order(server, wire):
    server.broker.create_topic("t", 1)
    frames = [wire.encode(0, 9, produce_req("t", encode_batch([Record(None, b"x", 1)]),
                                            acks=0), correlation_id=1000)]
    for i in range(30):
        frames.append(wire.encode(18, 3, {"client_software_name": "p",
                                          "client_software_version": "1"},
                                  correlation_id=i) if i % 3 == 0 else
                      wire.encode(1, 12, fetch_req("t", 0), correlation_id=i) if i % 3 == 1
                      else wire.encode(3, 12, {"topics": None, **META}, correlation_id=i))
    wire.send_raw(b"".join(frames))
    got = [struct.unpack_from(">i", wire.read_frame())[0] for _ in range(30)]
    assert got == list(range(30))  # no answer to the acks=0 produce, the others in order
    assert server.broker.log("t", 0).log_end_offset == 1


# -- fetch -------------------------------------------------------------------------------------


def test_fetch_long_poll_wakes_on_append(server, wire):
    server.broker.create_topic("t", 1)
    answer = {}

    def fetch() -> None:
        with WireClient(server.address) as c:
            answer["r"] = c.request(1, 12, fetch_req("t", 0, wait=30000, min_bytes=1))

    t = threading.Thread(target=fetch)
    t.start()
    wire.request(3, 12, {"topics": None, **META})  # let the fetch arrive first
    wire.request(0, 9, produce_req("t", encode_batch([Record(None, b"late", 1)])))
    t.join(30)
    assert not t.is_alive()
    r = part(answer["r"])
    assert r.error_code == E.none and r.high_watermark == 1 and b"late" in r.records


def test_fetch_bytes_are_the_stored_bytes(server, wire):
    server.broker.create_topic("t", 1)
    log = server.broker.log("t", 0)
    for i in range(3):
        log.append([Record(None, b"%d" % i * 1000, 1)], compression="gzip")
    r = part(wire.request(1, 12, fetch_req("t", 1)))
    assert r.records == log.read(1, 1 << 20)
    # a partition limit below the first batch still returns that batch whole (KIP-74)
    small = part(wire.request(1, 12, fetch_req("t", 0, partition_max=10)))
    assert small.records == log.read(0, 10) and len(small.records) > 10


def test_fetch_errors(server, wire):
    server.broker.create_topic("t", 1)
    server.broker.log("t", 0).append([Record(None, b"x", 1)])
    assert part(wire.request(1, 12, fetch_req("t", 5))).error_code == E.offset_out_of_range
    assert part(wire.request(1, 12, fetch_req("t", 0, epoch=3))).error_code == \
        E.unknown_leader_epoch
    assert part(wire.request(1, 12, fetch_req("nope", 0))).error_code == \
        E.unknown_topic_or_partition
    assert wire.request(1, 12, fetch_req("t", 0, session_id=9)).error_code == \
        E.fetch_session_id_not_found
    import uuid

    req = fetch_req("t", 0)
    req["topics"] = [{"topic_id": uuid.uuid4(), "partitions": req["topics"][0]["partitions"]}]
    assert part(wire.request(1, 13, req)).error_code == E.unknown_topic_id
    req["topics"][0]["topic_id"] = server.broker.topic_id("t")
    r = part(wire.request(1, 13, req))
    assert r.error_code == E.none and b"x" in r.records


def test_fetch_read_committed_stops_at_the_lso_and_lists_aborted(server, wire):
    server.broker.create_topic("t", 1)
    log = server.broker.log("t", 0)
    now = int(time.time() * 1000)  # record times near the markers': no time-based roll
    log.append([Record(None, b"a", now)], producer_id=7, producer_epoch=0, base_sequence=0,
               transactional=True)
    log.abort_transaction(7, 0)
    log.append([Record(None, b"open", now)], producer_id=8, producer_epoch=0, base_sequence=0,
               transactional=True)
    log.append([Record(None, b"after", now)])
    assert len(log.segments) == 1
    r = part(wire.request(1, 12, fetch_req("t", 0, isolation=1)))
    assert r.last_stable_offset == 2 and r.high_watermark == 4
    assert [(a.producer_id, a.first_offset) for a in r.aborted_transactions] == [(7, 0)]
    assert b"open" not in r.records and b"a" in r.records
    u = part(wire.request(1, 12, fetch_req("t", 0, isolation=0)))
    assert b"after" in u.records and u.aborted_transactions is None


# -- list offsets, leader epochs ------------------------------------------------------------


def lo_req(topic: str, ts: int, isolation: int = 0, epoch: int = -1) -> dict:
    return {"replica_id": -1, "isolation_level": isolation, "topics": [
        {"name": topic, "partitions": [{"partition_index": 0, "current_leader_epoch": epoch,
                                        "timestamp": ts}]}]}


def test_list_offsets(server, wire):
    server.broker.create_topic("t", 1)
    log = server.broker.log("t", 0)
    log.append([Record(None, b"a", 100), Record(None, b"b", 300), Record(None, b"c", 200)])

    def ask(ts, **kw):
        p = part(wire.request(2, 9, lo_req("t", ts, **kw)))
        return p.error_code, p.offset, p.timestamp

    assert ask(-2) == (E.none, 0, -1)
    assert ask(-1) == (E.none, 3, -1)
    assert ask(-3) == (E.none, 1, 300)
    assert ask(150) == (E.none, 1, 300)
    assert ask(301) == (E.none, -1, -1)
    assert ask(0, epoch=5)[0] == E.unknown_leader_epoch
    log.append([Record(None, b"t", 400)], producer_id=3, producer_epoch=0, base_sequence=0,
               transactional=True)
    assert ask(-1, isolation=1) == (E.none, 3, -1)  # the last stable offset
    assert ask(-1, isolation=0) == (E.none, 4, -1)
    assert ask(400, isolation=1) == (E.none, -1, -1)  # not below the LSO


def test_list_offsets_v10_v11(server, wire):
    """v10 adds the timeout of KIP-1075's remote reads, v11 earliest-pending-upload (-6):
    without tiered storage -6 and -5 answer offset -1, as Kafka 4.2's broker does."""
    server.broker.create_topic("t", 1)
    server.broker.log("t", 0).append([Record(None, b"a", 100), Record(None, b"b", 300)],
                                     partition_leader_epoch=0)
    for version in (10, 11):
        def ask(ts, version=version):
            p = part(wire.request(2, version, {**lo_req("t", ts), "timeout": 1000}))
            return p.error_code, p.offset, p.timestamp, p.leader_epoch

        assert ask(-2) == (E.none, 0, -1, 0)  # the first epoch entry starts at the start
        assert ask(-4) == (E.none, 0, -1, 0)
        assert ask(-5) == (E.none, -1, -1, -1)
        assert ask(200) == (E.none, 1, 300, 0)
    assert part(wire.request(2, 11, {**lo_req("t", -6), "timeout": 1000})).offset == -1


def test_offset_for_leader_epoch(server, wire):
    server.broker.create_topic("t", 1)
    server.broker.log("t", 0).append([Record(None, b"a", 1)] * 3)
    req = {"replica_id": -1, "topics": [{"topic": "t", "partitions": [
        {"partition": 0, "current_leader_epoch": -1, "leader_epoch": 0}]}]}
    r = wire.request(23, 4, req).topics[0].partitions[0]
    assert (r.error_code, r.leader_epoch, r.end_offset) == (E.none, 0, 3)
    req["topics"][0]["partitions"][0]["leader_epoch"] = 7
    r = wire.request(23, 4, req).topics[0].partitions[0]
    assert (r.leader_epoch, r.end_offset) == (-1, -1)


# -- topics, configs ----------------------------------------------------------------------------


def ct(name: str, partitions: int = 1, rf: int = 1, configs: dict | None = None) -> dict:
    return {"name": name, "num_partitions": partitions, "replication_factor": rf,
            "assignments": [], "configs": [{"name": k, "value": v}
                                           for k, v in (configs or {}).items()]}


def test_create_topics_validation(server, wire):
    server.broker.create_topic("exists", 1)
    r = wire.request(19, 7, {"topics": [
        ct("ok", 2, configs={"retention.ms": "1000"}), ct("exists"), ct("bad name"),
        ct("dup"), ct("dup"), ct("zero", 0), ct("rf3", 1, 3),
        ct("cfg", configs={"remote.storage.enable": "true"}),
        ct("val", configs={"segment.bytes": "-5"})], "timeout": 1000, "validate_only": False})
    codes = {t.name: t.error_code for t in r.topics}
    assert codes == {"ok": E.none, "exists": E.topic_already_exists,
                     "bad name": E.invalid_topic_exception, "dup": E.invalid_request,
                     "zero": E.invalid_partitions, "rf3": E.invalid_replication_factor,
                     "cfg": E.invalid_config, "val": E.invalid_config}
    ok = r.topics[0]
    assert ok.num_partitions == 2 and ok.topic_id is not None
    assert {c.name: (c.value, c.config_source) for c in ok.configs}["retention.ms"] == (
        "1000", 1)
    assert server.broker.partitions_of("ok") == [0, 1]
    r = wire.request(19, 7, {"topics": [ct("dry", 3)], "timeout": 1000,
                             "validate_only": True})
    assert r.topics[0].error_code == E.none and server.broker.partitions_of("dry") == []


def test_delete_topics(server, wire, log_dir):
    server.broker.create_topic("a", 2)
    server.broker.create_topic("b", 1)
    server.broker.ensure_internal_topic(OFFSETS_TOPIC)
    tid = server.broker.topic_id("b")
    r = wire.request(20, 6, {"topics": [{"name": "a", "topic_id": None},
                                        {"name": None, "topic_id": tid},
                                        {"name": "nope", "topic_id": None},
                                        {"name": OFFSETS_TOPIC, "topic_id": None}],
                             "timeout": 1000})
    assert [r_.error_code for r_ in r.responses] == [
        E.none, E.none, E.unknown_topic_or_partition, E.invalid_topic_exception]
    assert server.broker.topics() == [OFFSETS_TOPIC]
    assert not (log_dir / "a-0").exists() and not (log_dir / "b-0").exists()
    r = wire.request(20, 1, {"topic_names": ["a"], "timeout": 1000})
    assert r.responses[0].error_code == E.unknown_topic_or_partition


def test_describe_configs(server, wire):
    server.broker.create_topic("t", 1, {"retention.ms": "5000"})
    r = wire.request(32, 4, {"resources": [
        {"resource_type": 2, "resource_name": "t", "configuration_keys": None},
        {"resource_type": 2, "resource_name": "t", "configuration_keys": ["segment.bytes"]},
        {"resource_type": 2, "resource_name": "nope", "configuration_keys": None},
        {"resource_type": 4, "resource_name": "1", "configuration_keys": None},
        {"resource_type": 4, "resource_name": "7", "configuration_keys": None}],
        "include_synonyms": True, "include_documentation": False})
    full, one, missing, broker, other = r.results
    by_name = {c.name: c for c in full.configs}
    assert by_name["retention.ms"].value == "5000" and by_name["retention.ms"].config_source == 1
    assert by_name["segment.bytes"].config_source == 5 and by_name["segment.bytes"].config_type == 3
    assert [c.name for c in one.configs] == ["segment.bytes"]
    assert missing.error_code == E.unknown_topic_or_partition
    assert {c.name: c.value for c in broker.configs}["node.id"] == "1"
    assert other.error_code == E.invalid_request


def test_find_coordinator(server, wire):
    r = wire.request(10, 5, {"key_type": 1, "coordinator_keys": ["tx-a", ""]})
    assert [(c.key, c.error_code, c.node_id, c.port) for c in r.coordinators] == [
        ("tx-a", E.none, 1, server.port), ("", E.invalid_request, -1, -1)]
    r = wire.request(10, 3, {"key": "tx", "key_type": 9})
    assert r.error_code == E.invalid_request


def test_fetch_diverging_epoch(server, wire):
    server.broker.create_topic("t", 1)
    log = server.broker.log("t", 0)
    log.append([Record(None, b"a", 1)] * 3, partition_leader_epoch=0)
    req = fetch_req("t", 3)
    req["topics"][0]["partitions"][0]["last_fetched_epoch"] = 0
    r = part(wire.request(1, 12, req))
    assert r.error_code == E.none and r.diverging_epoch.epoch == -1  # histories agree
    # a follower/consumer that saw epoch 0 up to offset 5: the leader's epoch 0 ended at 3
    req["topics"][0]["partitions"][0]["fetch_offset"] = 5
    r = part(wire.request(1, 12, req))
    assert (r.diverging_epoch.epoch, r.diverging_epoch.end_offset) == (0, 3)
    req["topics"][0]["partitions"][0].update(fetch_offset=1, last_fetched_epoch=7)
    assert part(wire.request(1, 12, req)).error_code == E.offset_out_of_range


@pytest.mark.parametrize("codec", [0, 1, 2, 3, 4])
def test_stored_and_fetched_bytes_are_the_producers_bytes(server, wire, codec):
    """A batch encoded by kafka-python (a peer encoder) is written and served as sent: only the
    base offset and the partition leader epoch (outside the CRC) are assigned."""
    records = pytest.importorskip("kafka.record.default_records")
    server.broker.create_topic("t", 1)
    server.broker.log("t", 0).append([Record(None, b"first", int(time.time() * 1000))])
    b = records.DefaultRecordBatchBuilder(magic=2, compression_type=codec, is_transactional=0,
                                          producer_id=-1, producer_epoch=-1, base_sequence=-1,
                                          batch_size=1 << 20)
    now = int(time.time() * 1000)
    for i in range(50):
        b.append(i, timestamp=now + i, key=b"k%d" % i, value=b"value %d" % i * 20,
                 headers=[("h", b"%d" % i)])
    sent = bytes(b.build())
    r = part(wire.request(0, 9, produce_req("t", sent)))
    assert (r.error_code, r.base_offset) == (E.none, 1)
    stored = server.broker.log("t", 0).read(1, 1 << 20)
    fetched = part(wire.request(1, 12, fetch_req("t", 1))).records
    assert stored == fetched
    assert struct.unpack_from(">qii", stored) == (1, len(sent) - 12, 0)
    assert stored[16:] == sent[16:]


def test_describe_cluster_through_confluent_admin(server):
    admin_mod = pytest.importorskip("confluent_kafka.admin")
    admin = admin_mod.AdminClient({"bootstrap.servers": server.address})
    desc = admin.describe_cluster(include_authorized_operations=True).result(30)
    assert desc.cluster_id == server.broker.cluster_id
    assert desc.controller.id == 1 and [n.port for n in desc.nodes] == [server.port]
    assert desc.authorized_operations


def test_consumer_group_heartbeat_over_the_wire_answers_errors_and_keeps_serving(server):
    """ConsumerGroupHeartbeat v1 as bytes: a join, odd inputs (unknown topic ids among the
    owned partitions, an epoch from the future, an unknown member, an invalid regex) get
    Kafka's error codes on the same connection, and the member keeps heartbeating."""
    import uuid as uuid_mod

    server.broker.create_topic("t", 2)
    base = {"group_id": "wire-kip848", "instance_id": None, "rack_id": None,
            "server_assignor": None, "subscribed_topic_regex": None}
    with WireClient(server.address) as c:
        r = c.request(68, 1, {**base, "member_id": "m-1", "member_epoch": 0,
                              "rebalance_timeout": 30000, "subscribed_topic_names": ["t"],
                              "topic_partitions": []})
        assert (int(r.error_code), r.member_id, r.member_epoch) == (0, "m-1", 1)
        assert sorted(p for tp in r.assignment.topic_partitions for p in tp.partitions) == [0, 1]
        odd = [({"member_epoch": 1, "topic_partitions": [
                    {"topic_id": uuid_mod.uuid4(), "partitions": [7, -1]}]}, 0),
               ({"member_epoch": 9}, 110),                        # FENCED_MEMBER_EPOCH
               ({"member_id": "ghost", "member_epoch": 3}, 25),   # UNKNOWN_MEMBER_ID
               ({"member_epoch": 0, "rebalance_timeout": 1000, "topic_partitions": [],
                 "subscribed_topic_regex": "t[", "subscribed_topic_names": None}, 128)]
        for fields, code in odd:
            body = {**base, "member_id": "m-1", "rebalance_timeout": -1,
                    "subscribed_topic_names": None, "topic_partitions": None, **fields}
            r = c.request(68, 1, body)
            assert int(r.error_code) == code, (fields, r)
        r = c.request(68, 1, {**base, "member_id": "m-1", "member_epoch": 1,
                              "rebalance_timeout": -1, "subscribed_topic_names": None,
                              "topic_partitions": None})
        assert (int(r.error_code), r.member_epoch) == (0, 1)
        d = c.request(69, 0, {"group_ids": ["wire-kip848", "nope"],
                              "include_authorized_operations": True})
        assert [(g.group_id, int(g.error_code), g.group_state) for g in d.groups][0] == \
            ("wire-kip848", 0, "Stable")
        assert int(d.groups[1].error_code) == 69                 # GROUP_ID_NOT_FOUND


def test_colliding_names_leave_the_connection_up(server, wire):
    """A topic that differs from an existing one only in '.'/'_' is refused by the log dir:
    Metadata's auto-creation answers LEADER_NOT_AVAILABLE (Kafka's AutoTopicCreationManager
    only logs the controller's refusal), and a user topic in the way of the group
    coordinator's __consumer_offsets leaves FindCoordinator COORDINATOR_NOT_AVAILABLE; the
    connection carries on (it used to close on the uncaught error)."""
    server.broker.create_topic("metrics.cpu", 1)
    for _ in range(2):
        m = wire.request(3, 12, {"topics": [{"name": "metrics_cpu", "topic_id": None}],
                                 "allow_auto_topic_creation": True,
                                 "include_topic_authorized_operations": False})
        assert m.topics[0].error_code == E.leader_not_available
    assert "metrics_cpu" not in server.broker.topics()
    server.broker.create_topic("__consumer.offsets", 1)
    r = wire.request(10, 5, {"key_type": 0, "coordinator_keys": ["g"]})
    assert [(c.key, c.error_code) for c in r.coordinators] == [
        ("g", E.coordinator_not_available)]
    assert wire.request(3, 12, {"topics": None, **META}).topics  # still served


def test_partitions_per_request_are_capped_as_the_controller_caps_them(server, wire):
    """ReplicationControlManager: at most 10,000 partitions per CreateTopics request
    (POLICY_VIOLATION for every topic, validate_only too: nothing is created), and
    CreatePartitions' records overflow past 10,000 (UNKNOWN_SERVER_ERROR)."""
    for validate_only in (True, False):
        r = wire.request(19, 7, {"topics": [ct("huge", 2**31 - 1), ct("small", 1)],
                                 "timeout": 1000, "validate_only": validate_only})
        assert [(t.name, t.error_code, t.error_message) for t in r.topics] == [
            (n, E.policy_violation, "Excessively large number of partitions per request.")
            for n in ("huge", "small")]
    r = wire.request(19, 7, {"topics": [ct("a", 6000), ct("b", 4000)], "timeout": 1000,
                             "validate_only": True})
    assert [t.error_code for t in r.topics] == [E.none, E.none]  # exactly 10,000: allowed
    server.broker.create_topic("grow", 1)
    server.broker.create_topic("grow2", 1)
    r = wire.request(37, 3, {"topics": [{"name": "grow", "count": 3, "assignments": None},
                                        {"name": "grow2", "count": 2**31 - 1,
                                         "assignments": None}],
                             "timeout": 1000, "validate_only": False})
    assert [(x.name, x.error_code, x.error_message) for x in r.results] == [
        ("grow", E.none, None), ("grow2", E.unknown_server_error, None)]
    assert server.broker.partitions_of("grow") == [0, 1, 2]
    assert server.broker.partitions_of("grow2") == [0]
    assert server.broker.partitions_of("huge") == []
