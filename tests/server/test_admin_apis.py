"""Admin APIs that change a topic after creation, through two clients we did not write
(librdkafka via confluent-kafka, and kafka-python's admin client) against a real server:
CreatePartitions (37), DeleteRecords (21), AlterConfigs (33), IncrementalAlterConfigs (44) and
DescribeLogDirs (35). Each change is checked on disk too (the log dir reopened, or the files).
"""

from __future__ import annotations

import json
import time

import pytest

from kafkalog import LogDir
from kafkalog.log_dir import TOPICS_FILE
from kafkalog.server.protocol import ErrorCode as E

from .conftest import format_log_dir, start_server
from .wire import WireClient

ck = pytest.importorskip("confluent_kafka", reason="confluent-kafka is not installed")
from confluent_kafka.admin import (  # noqa: E402
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewPartitions,
    NewTopic,
    ResourceType,
)

kafka = pytest.importorskip("kafka", reason="kafka-python is not installed")
from kafka.admin import ConfigResource as KpConfigResource  # noqa: E402
from kafka.admin import ConfigResourceType, KafkaAdminClient  # noqa: E402
from kafka.admin import NewPartitions as KpNewPartitions  # noqa: E402
from kafka.structs import TopicPartition as KpTopicPartition  # noqa: E402


def _admin(server) -> AdminClient:
    return AdminClient({"bootstrap.servers": server.address})


def _result(futures: dict) -> dict:
    return {k: f.result(30) for k, f in futures.items()}


def _error_code(fut) -> int:
    with pytest.raises(ck.KafkaException) as e:
        fut.result(30)
    return e.value.args[0].code()


def _create(server, name: str, partitions: int, config: dict | None = None) -> None:
    admin = _admin(server)  # kept alive until the result: a freed client fails its futures
    _result(admin.create_topics([NewTopic(name, partitions, 1, config=config or {})]))


def _produce(server, topic: str, per_partition: dict[int, int]) -> None:
    p = ck.Producer({"bootstrap.servers": server.address, "linger.ms": 5})
    for part, n in per_partition.items():
        for i in range(n):
            p.produce(topic, key=b"k%d" % i, value=b"v%d-%d" % (part, i), partition=part)
    assert p.flush(30) == 0


def _consume_from_start(server, topic: str, partition: int) -> list[int]:
    """Offsets librdkafka reads from the earliest offset to the end of the partition."""
    c = ck.Consumer({"bootstrap.servers": server.address, "group.id": "reader",
                     "enable.auto.commit": False, "enable.partition.eof": True})
    c.assign([ck.TopicPartition(topic, partition, ck.OFFSET_BEGINNING)])
    offsets: list[int] = []
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                if m.error().code() == ck.KafkaError._PARTITION_EOF:
                    return offsets
                raise AssertionError(m.error())
            offsets.append(m.offset())
    finally:
        c.close()
    raise AssertionError(f"no end of partition after {offsets}")


# -- CreatePartitions -------------------------------------------------------------------------


def test_create_partitions_through_librdkafka_and_a_group_takes_the_new_one(server, log_dir):
    _create(server, "grow", 2)
    admin = _admin(server)
    # validate_only creates nothing
    _result(admin.create_partitions([NewPartitions("grow", 4)], validate_only=True))
    assert server.broker.partitions_of("grow") == [0, 1]
    server.broker.ensure_internal_topic("__consumer_offsets")
    codes = {
        "equal": _error_code(admin.create_partitions([NewPartitions("grow", 2)])["grow"]),
        "fewer": _error_code(admin.create_partitions([NewPartitions("grow", 1)])["grow"]),
        "unknown": _error_code(admin.create_partitions([NewPartitions("nope", 3)])["nope"]),
        "internal": _error_code(admin.create_partitions(
            [NewPartitions("__consumer_offsets", 9)])["__consumer_offsets"]),
        "assignment": _error_code(admin.create_partitions(
            [NewPartitions("grow", 3, replica_assignment=[[7]])])["grow"]),
    }
    assert codes == {"equal": ck.KafkaError.INVALID_PARTITIONS,
                     "fewer": ck.KafkaError.INVALID_PARTITIONS,
                     "unknown": ck.KafkaError.UNKNOWN_TOPIC_OR_PART,
                     "internal": ck.KafkaError.INVALID_REQUEST,
                     "assignment": ck.KafkaError.INVALID_REPLICA_ASSIGNMENT}

    # a subscribed consumer group: the new partition is assigned after the metadata refresh
    c = ck.Consumer({"bootstrap.servers": server.address, "group.id": "growers",
                     "auto.offset.reset": "earliest", "topic.metadata.refresh.interval.ms": 500})
    c.subscribe(["grow"])
    try:
        _produce(server, "grow", {0: 1, 1: 1})
        seen: set[int] = set()
        deadline = time.monotonic() + 30
        while len(seen) < 2 and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is not None and not m.error():
                seen.add(m.partition())
        assert seen == {0, 1}
        _result(admin.create_partitions([NewPartitions("grow", 3, replica_assignment=[[1]])]))
        assert server.broker.partitions_of("grow") == [0, 1, 2]
        _produce(server, "grow", {2: 3})
        got = []
        deadline = time.monotonic() + 30
        while len(got) < 3 and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is not None and not m.error() and m.partition() == 2:
                got.append(m.value())
        assert got == [b"v2-0", b"v2-1", b"v2-2"]
    finally:
        c.close()
    md = admin.list_topics("grow", timeout=10).topics["grow"]
    assert sorted(md.partitions) == [0, 1, 2]
    server.stop()
    with LogDir.open(log_dir) as d:
        assert d.declared_partitions("grow") == 3
        assert d.log("grow", 2).log_end_offset == 3
        assert d.topic_id("grow") is not None


def test_create_partitions_through_kafka_python(server):
    _create(server, "kp-grow", 1)
    admin = KafkaAdminClient(bootstrap_servers=server.address)
    try:
        admin.create_partitions({"kp-grow": KpNewPartitions(total_count=3)})
        assert server.broker.partitions_of("kp-grow") == [0, 1, 2]
        with pytest.raises(kafka.errors.InvalidPartitionsError, match="would not be an increase"):
            admin.create_partitions({"kp-grow": KpNewPartitions(total_count=2)})
    finally:
        admin.close()


# -- DeleteRecords ----------------------------------------------------------------------------


def test_delete_records_through_librdkafka(server, log_dir):
    _create(server, "del", 2)
    _create(server, "compacted", 1, {"cleanup.policy": "compact"})
    _produce(server, "del", {0: 30, 1: 10})
    admin = _admin(server)
    r = _result(admin.delete_records([ck.TopicPartition("del", 0, 20),
                                      ck.TopicPartition("del", 1, ck.OFFSET_END)]))
    lows = {tp.partition: res.low_watermark for tp, res in r.items()}
    assert lows == {0: 20, 1: 10}  # OFFSET_END (-1): up to the high watermark
    # below the log start offset: a no-op that answers the current low watermark
    r = _result(admin.delete_records([ck.TopicPartition("del", 0, 5)]))
    assert [res.low_watermark for res in r.values()] == [20]
    assert _consume_from_start(server, "del", 0) == list(range(20, 30))
    assert _consume_from_start(server, "del", 1) == []
    lo, hi = ck.Consumer({"bootstrap.servers": server.address, "group.id": "w"}) \
        .get_watermark_offsets(ck.TopicPartition("del", 0), timeout=10)
    assert (lo, hi) == (20, 30)

    def code(topic: str, partition: int, offset: int) -> int:
        futs = admin.delete_records([ck.TopicPartition(topic, partition, offset)])
        return _error_code(next(iter(futs.values())))

    assert code("del", 0, 31) == ck.KafkaError.OFFSET_OUT_OF_RANGE
    assert code("compacted", 0, 0) == ck.KafkaError.POLICY_VIOLATION
    # (librdkafka checks partitions it knows before sending: an unknown one goes on the wire)
    with WireClient(server.address) as w:
        resp = w.request(21, 2, {"timeout": 1000, "topics": [
            {"name": "nope", "partitions": [{"partition_index": 0, "offset": 0}]},
            {"name": "del", "partitions": [{"partition_index": 7, "offset": 0},
                                           {"partition_index": 0, "offset": -2}]}]})
    got = {(t.name, p.partition_index): (p.error_code, p.low_watermark)
           for t in resp.topics for p in t.partitions}
    assert got == {("nope", 0): (E.unknown_topic_or_partition, -1),
                   ("del", 7): (E.unknown_topic_or_partition, -1),
                   ("del", 0): (E.offset_out_of_range, -1)}
    server.stop()
    with LogDir.open(log_dir) as d:  # the log start offsets survived the restart
        assert d.log("del", 0).log_start_offset == 20
        assert d.log("del", 1).log_start_offset == 10
        assert [r.offset for r in d.log("del", 0).records()] == list(range(20, 30))


def test_delete_records_through_kafka_python_and_internal_topics_refused(server):
    _create(server, "kp-del", 1)
    _produce(server, "kp-del", {0: 8})
    server.broker.ensure_internal_topic("__consumer_offsets")
    admin = KafkaAdminClient(bootstrap_servers=server.address)
    try:
        out = admin.delete_records({KpTopicPartition("kp-del", 0): 5})
        (res,) = out.values()
        assert res["low_watermark"] == 5
        assert server.broker.log("kp-del", 0).log_start_offset == 5
        with pytest.raises(kafka.errors.InvalidTopicError):
            admin.delete_records({KpTopicPartition("__consumer_offsets", 0): 0})
    finally:
        admin.close()


# -- AlterConfigs / IncrementalAlterConfigs -----------------------------------------------------


def _described(admin: AdminClient, topic: str) -> dict[str, tuple[str, int]]:
    (cfg,) = _result(admin.describe_configs([ConfigResource(ResourceType.TOPIC, topic)])).values()
    return {n: (e.value, e.source) for n, e in cfg.items()}


def test_incremental_alter_configs_through_librdkafka(server, log_dir):
    _create(server, "cfg", 2, {"segment.bytes": "1048576"})
    admin = _admin(server)

    def alter(*entries: ConfigEntry, validate_only: bool = False, topic: str = "cfg"):
        res = ConfigResource(ResourceType.TOPIC, topic, incremental_configs=list(entries))
        return admin.incremental_alter_configs([res], validate_only=validate_only)

    def entry(name: str, value: str | None, op: AlterConfigOpType) -> ConfigEntry:
        return ConfigEntry(name, value, incremental_operation=op)

    _result(alter(entry("retention.ms", "60000", AlterConfigOpType.SET),
                  entry("cleanup.policy", "compact", AlterConfigOpType.APPEND)))
    d = _described(admin, "cfg")
    TOPIC, DEFAULT = 1, 5  # DescribeConfigsResponse ConfigSource ids
    assert d["retention.ms"] == ("60000", TOPIC)
    assert d["cleanup.policy"] == ("delete,compact", TOPIC)
    assert d["segment.bytes"] == ("1048576", TOPIC)  # untouched by an incremental change
    assert server.broker.log("cfg", 1).config.retention_ms == 60000
    assert server.broker.log("cfg", 0).config.compact

    _result(alter(entry("cleanup.policy", "delete", AlterConfigOpType.SUBTRACT),
                  entry("segment.bytes", None, AlterConfigOpType.DELETE)))
    d = _described(admin, "cfg")
    assert d["cleanup.policy"] == ("compact", TOPIC)
    assert d["segment.bytes"] == (str(1 << 30), DEFAULT)

    # validate_only changes nothing; bad input is refused with Kafka's codes
    _result(alter(entry("retention.ms", "1", AlterConfigOpType.SET), validate_only=True))
    assert _described(admin, "cfg")["retention.ms"] == ("60000", TOPIC)
    bad = {
        "append to a non-list": alter(entry("retention.ms", "5", AlterConfigOpType.APPEND)),
        "bad value": alter(entry("segment.bytes", "-3", AlterConfigOpType.SET)),
        "unknown name": alter(entry("no.such.config", "1", AlterConfigOpType.SET)),
    }
    for what, futs in bad.items():
        assert _error_code(next(iter(futs.values()))) == ck.KafkaError.INVALID_CONFIG, what
    with pytest.raises(ck.KafkaException, match="because its type is not LIST"):
        next(iter(alter(entry("retention.ms", "5", AlterConfigOpType.APPEND)).values())).result()
    assert _error_code(next(iter(alter(
        entry("retention.ms", "5", AlterConfigOpType.SET), topic="nope").values()))) \
        == ck.KafkaError.UNKNOWN_TOPIC_OR_PART
    broker = ConfigResource(ResourceType.BROKER, "1", incremental_configs=[
        entry("num.partitions", "3", AlterConfigOpType.SET)])
    with pytest.raises(ck.KafkaException, match="Cannot update these configs dynamically"):
        _result(admin.incremental_alter_configs([broker]))
    server.stop()
    topics = json.loads((log_dir / TOPICS_FILE).read_text())["topics"]
    assert topics["cfg"]["config"] == {"retention.ms": "60000", "cleanup.policy": "compact"}
    with LogDir.open(log_dir) as d:
        assert d.log("cfg", 0).config.cleanup_policy == ("compact",)


def test_legacy_alter_configs_replaces_every_override(server):
    _create(server, "legacy", 1, {"segment.bytes": "1048576", "retention.ms": "1000"})
    admin = _admin(server)
    res = ConfigResource(ResourceType.TOPIC, "legacy", set_config={"retention.bytes": "4096"})
    with pytest.warns(DeprecationWarning):  # the client's, for the legacy API we test here
        futures = admin.alter_configs([res])
    _result(futures)
    assert server.broker.log_dir.topic_overrides("legacy") == {"retention.bytes": "4096"}
    cfg = server.broker.log("legacy", 0).config
    assert (cfg.retention_bytes, cfg.retention_ms, cfg.segment_bytes) == (
        4096, 7 * 24 * 3600 * 1000, 1 << 30)


def test_alter_configs_through_kafka_python_both_apis(server):
    _create(server, "kp-cfg", 1)
    admin = KafkaAdminClient(bootstrap_servers=server.address)
    try:
        for incremental, value in ((True, "120000"), (False, "240000")):
            res = KpConfigResource(ConfigResourceType.TOPIC, "kp-cfg",
                                   configs={"retention.ms": value})
            admin.alter_configs([res], incremental=incremental, raise_on_unknown=False)
            assert server.broker.log("kp-cfg", 0).config.retention_ms == int(value)
    finally:
        admin.close()


# -- DescribeLogDirs ----------------------------------------------------------------------------


def test_describe_log_dirs_through_kafka_python(server, log_dir):
    _create(server, "sizes", 2)
    _produce(server, "sizes", {0: 50, 1: 5})
    admin = KafkaAdminClient(bootstrap_servers=server.address)
    try:
        (broker,) = admin.describe_log_dirs()
        (entry,) = broker["log_dirs"]
        assert entry["error_code"] == 0
        assert entry["log_dir"] == str(log_dir.resolve())
        assert 0 < entry["usable_bytes"] <= entry["total_bytes"]
        parts = {(t["name"], p["partition_index"]): p
                 for t in entry["topics"] for p in t["partitions"]}
        for p in (0, 1):
            on_disk = sum(f.stat().st_size for f in (log_dir / f"sizes-{p}").glob("*.log"))
            assert parts[("sizes", p)]["partition_size"] == on_disk > 0
            assert parts[("sizes", p)]["offset_lag"] == 0
            assert parts[("sizes", p)]["is_future_key"] is False
        assert parts[("sizes", 0)]["partition_size"] > parts[("sizes", 1)]["partition_size"]
        (only,) = admin.describe_log_dirs(topic_partitions={"sizes": [1]})
        names = [(t["name"], [p["partition_index"] for p in t["partitions"]])
                 for t in only["log_dirs"][0]["topics"]]
        assert names == [("sizes", [1])]
    finally:
        admin.close()


def test_admin_changes_survive_a_restart_of_the_server(tmp_path):
    path = tmp_path / "logs"
    s = start_server(path)
    try:
        _create(s, "keep", 1)
        _produce(s, "keep", {0: 10})
        admin = _admin(s)
        _result(admin.create_partitions([NewPartitions("keep", 2)]))
        _result(admin.delete_records([ck.TopicPartition("keep", 0, 4)]))
        _result(admin.incremental_alter_configs([ConfigResource(
            ResourceType.TOPIC, "keep", incremental_configs=[ConfigEntry(
                "retention.ms", "99000", incremental_operation=AlterConfigOpType.SET)])]))
    finally:
        s.stop()
    s = start_server(path)
    try:
        admin = _admin(s)
        assert sorted(admin.list_topics("keep", timeout=10).topics["keep"].partitions) == [0, 1]
        assert _described(admin, "keep")["retention.ms"] == ("99000", 1)
        assert _consume_from_start(s, "keep", 0) == list(range(4, 10))
    finally:
        s.stop()


# -- DescribeTopicPartitions / ElectLeaders --------------------------------------------------------


def test_describe_topic_partitions_pages_through_kafka_python(server):
    _create(server, "pa", 3)
    _create(server, "pb", 2)
    admin = KafkaAdminClient(bootstrap_servers=server.address)
    try:
        pages, cursor = [], None
        while True:
            out = admin.describe_topic_partitions(["pb", "pa"], response_partition_limit=2,
                                                  cursor=cursor)
            pages.append([(t["name"], [p["partition_index"] for p in t["partitions"]])
                          for t in out["topics"]])
            cursor = out["next_cursor"]
            if cursor is None:
                break
            cursor = {"topic_name": cursor["topic_name"],
                      "partition_index": cursor["partition_index"]}
        # sorted by name, 2 partitions a page, the cursor resuming inside a topic
        assert pages == [[("pa", [0, 1])], [("pa", [2]), ("pb", [0])], [("pb", [1])]]
        out = admin.describe_topic_partitions(["pa", "nope", "bad name!"])
        by_name = {t["name"]: t for t in out["topics"]}
        assert by_name["nope"]["error_code"] == E.unknown_topic_or_partition
        assert by_name["bad name!"]["error_code"] == E.invalid_topic_exception
        p0 = by_name["pa"]["partitions"][0]
        assert (p0["leader_id"], p0["replica_nodes"], p0["isr_nodes"]) == (1, [1], [1])
        assert str(by_name["pa"]["topic_id"]).replace("-", "") \
            == server.broker.topic_id("pa").to_bytes().hex()
    finally:
        admin.close()


def test_elect_leaders_through_librdkafka_needs_no_election(server):
    from confluent_kafka import ElectionType

    _create(server, "el", 2)
    admin = _admin(server)
    res = admin.elect_leaders(ElectionType.PREFERRED,
                              [ck.TopicPartition("el", 0), ck.TopicPartition("el", 5)]).result(30)
    codes = {tp.partition: (err.code() if err is not None else 0) for tp, err in res.items()}
    assert codes == {0: ck.KafkaError.ELECTION_NOT_NEEDED,
                     5: ck.KafkaError.UNKNOWN_TOPIC_OR_PART}
    assert admin.elect_leaders(ElectionType.UNCLEAN, None).result(30) == {}
    with WireClient(server.address) as w:
        v0 = w.request(43, 0, {"timeout": 1000, "topic_partitions": [
            {"topic": "el", "partitions": [1]}]})
        assert [(r.partition_id, r.error_code) for r in
                v0.replica_election_results[0].partition_result] == [(1, E.election_not_needed)]
        bad = w.request(43, 2, {"election_type": 7, "timeout": 1000, "topic_partitions": [
            {"topic": "el", "partitions": [0]}]})
        assert bad.error_code == E.invalid_request
        assert bad.replica_election_results[0].partition_result[0].error_message \
            == "Unknown election type 7"


def test_broker_rack_is_in_the_metadata(log_dir) -> None:
    """``broker.rack``: librdkafka's DescribeCluster and kafka-python's Metadata see it (the
    rack clients with ``client.rack`` match against); without it, no rack."""
    import dataclasses

    from kafkalog.server.broker import ServerConfig

    from .conftest import TEST_CONFIG

    config = ServerConfig.from_properties({"broker.rack": "eu-west-1a"},
                                          **dataclasses.asdict(TEST_CONFIG))
    server = start_server(log_dir, config=config)
    try:
        admin = AdminClient({"bootstrap.servers": server.address})
        nodes = admin.describe_cluster().result(30).nodes
        assert [(n.id, n.rack) for n in nodes] == [(1, "eu-west-1a")]
        kp = KafkaAdminClient(bootstrap_servers=server.address)
        try:
            assert [b["rack"] for b in kp.describe_cluster()["brokers"]] == ["eu-west-1a"]
        finally:
            kp.close()
    finally:
        server.stop()
    server = start_server(log_dir)
    try:
        admin = AdminClient({"bootstrap.servers": server.address})
        assert [n.rack for n in admin.describe_cluster().result(30).nodes] == [None]
    finally:
        server.stop()


# -- Partition reassignments and replica log dirs (one node) ------------------------------------


def test_partition_reassignments_through_kafka_python(server):
    """kafka-python's alter/list_partition_reassignments: the one valid target (this node) is
    accepted with nothing to move; every other answer is Kafka's controller's, per partition
    (the messages checked on the wire)."""
    from kafka import errors as Errors

    _create(server, "ra", 2)
    node = server.broker.config.node_id
    targets = {KpTopicPartition("ra", 0): [node], KpTopicPartition("ra", 1): None,
               KpTopicPartition("ra", 5): [node], KpTopicPartition("nope", 0): [node]}
    admin = KafkaAdminClient(bootstrap_servers=server.address)
    try:
        assert admin.alter_partition_reassignments(targets) == {
            KpTopicPartition("ra", 0): None,
            KpTopicPartition("ra", 1): Errors.NoReassignmentInProgressError,
            KpTopicPartition("ra", 5): Errors.UnknownTopicOrPartitionError,
            KpTopicPartition("nope", 0): Errors.UnknownTopicOrPartitionError}
        assert admin.list_partition_reassignments() == {}
        assert admin.list_partition_reassignments({"ra": [0, 1]}) == {}
    finally:
        admin.close()
    with WireClient(server.address) as w:
        resp = w.request(45, 1, {"timeout": 1000, "allow_replication_factor_change": True,
                                 "topics": [{"name": tp.topic, "partitions": [
                                     {"partition_index": tp.partition, "replicas": r}]}
                                            for tp, r in targets.items()]})
        assert (resp.error_code, resp.error_message, resp.allow_replication_factor_change) \
            == (0, None, True)
        got = [(t.name, p.partition_index, p.error_code, p.error_message)
               for t in resp.responses for p in t.partitions]
        assert got == [
            ("ra", 0, 0, None),
            ("ra", 1, E.no_reassignment_in_progress, "No partition reassignment is in progress."),
            ("ra", 5, E.unknown_topic_or_partition, "Unable to find partition ra:5."),
            ("nope", 0, E.unknown_topic_or_partition, "Unable to find a topic named nope.")]
        listed = w.request(46, 0, {"timeout": 1000, "topics": None})
        assert (listed.error_code, listed.error_message, listed.topics) == (0, None, ())


@pytest.mark.parametrize("replicas, code, message", [
    ([], E.invalid_replica_assignment,
     "The manual partition assignment includes an empty replica list."),
    ([7, 1], E.invalid_replica_assignment,
     "The manual partition assignment includes broker 7, but no such broker is registered."),
    ([1, 1], E.invalid_replica_assignment,
     "The manual partition assignment includes the broker 1 more than once."),
])
def test_partition_reassignment_targets_as_kafka_validates_them(server, replicas, code, message):
    _create(server, "rt", 1)
    assert server.broker.config.node_id == 1
    with WireClient(server.address) as w:
        for version in (0, 1):
            body = {"timeout": 1000, "topics": [
                {"name": "rt", "partitions": [{"partition_index": 0, "replicas": replicas}]}]}
            if version:
                body["allow_replication_factor_change"] = False
            resp = w.request(45, version, body)
            assert (resp.error_code, resp.error_message) == (0, None)
            ((p,),) = [t.partitions for t in resp.responses]
            assert (p.partition_index, p.error_code, p.error_message) == (0, code, message)


def test_alter_replica_log_dirs(server, log_dir):
    """kafka-python's alter_replica_log_dirs, then the raw answers Kafka's ReplicaManager gives
    for a broker with one log dir."""
    from kafka.structs import TopicPartitionReplica

    _create(server, "mv", 2)
    root = str(log_dir.resolve())
    from kafka import errors as Errors

    admin = KafkaAdminClient(bootstrap_servers=server.address)
    try:
        assert admin.alter_replica_log_dirs({
            TopicPartitionReplica("mv", 0, 1): root,
            TopicPartitionReplica("mv", 1, 1): "/elsewhere"}) == {
            TopicPartitionReplica("mv", 0, 1): Errors.NoError,
            TopicPartitionReplica("mv", 1, 1): Errors.LogDirNotFoundError}
    finally:
        admin.close()
    long_topic = "x" * 249
    with WireClient(server.address) as w:
        resp = w.request(34, 2, {"dirs": [
            {"path": "/elsewhere", "topics": [{"name": "mv", "partitions": [0, 1]}]},
            {"path": root, "topics": [{"name": "mv", "partitions": [1, 9]},
                                      {"name": "gone", "partitions": [0]},
                                      {"name": long_topic, "partitions": [0]}]}]})
    got = [(t.topic_name, [(p.partition_index, p.error_code) for p in t.partitions])
           for t in resp.results]
    # mv-1 is named twice: the last directory wins (Kafka's partitionDirs map)
    assert got == [("mv", [(0, E.log_dir_not_found), (1, 0), (9, E.unknown_topic_or_partition)]),
                   ("gone", [(0, E.unknown_topic_or_partition)]),
                   (long_topic, [(0, E.invalid_topic_exception)])]
    # nothing moved: the partitions are where they were
    assert sorted(p.name for p in log_dir.glob("mv-*")) == ["mv-0", "mv-1"]


# -- Features (ApiVersions v3+, UpdateFeatures) ---------------------------------------------------


def _features_at_start(root) -> dict:
    """kafka-python's describe_features of a server started over ``root``, then stopped."""
    s = start_server(root)
    try:
        admin = KafkaAdminClient(bootstrap_servers=s.address)
        try:
            return admin.describe_features()
        finally:
            admin.close()
    finally:
        s.stop()


def test_features_through_kafka_python(server, log_dir):
    """kafka-python's describe_features / update_features: what kafkalog supports and has
    finalized, Kafka's refusals (the whole request fails on the first), a validate-only
    request, and the levels kept across a restart (.kafkalog-features.json)."""
    from kafka import errors as Errors

    admin = KafkaAdminClient(bootstrap_servers=server.address)
    try:
        assert admin.describe_features() == {
            "metadata.version": {"supported": (7, 29), "finalized": (29, 29),
                                 "finalized_epoch": 0},
            "group.version": {"supported": (1, 1), "finalized": (1, 1), "finalized_epoch": 0},
            "share.version": {"supported": (1, 1), "finalized": (1, 1), "finalized_epoch": 0},
            "eligible.leader.replicas.version": {"supported": (0, 1), "finalized": (1, 1),
                                                 "finalized_epoch": 0}}
        with pytest.raises(Errors.InvalidUpdateVersionError) as e:
            admin.update_features({"metadata.version": 28})
        assert ("The update failed for all features since the following feature had an "
                "error: Invalid update version 28 for feature metadata.version. Can't "
                "downgrade the version of this feature without setting the upgrade type to "
                "either safe or unsafe downgrade.") in str(e.value)
        with pytest.raises(Errors.InvalidUpdateVersionError) as e:
            admin.update_features({"share.version": ("SAFE_DOWNGRADE", 0),
                                   "eligible.leader.replicas.version": ("SAFE_DOWNGRADE", 0)})
        assert ("Invalid update version 0 for feature share.version. Local controller 1 only "
                "supports versions 1") in str(e.value)
        assert admin.update_features({"metadata.version": ("SAFE_DOWNGRADE", 28)},
                                     validate_only=True) == {"metadata.version": "OK"}
        assert admin.describe_features()["metadata.version"]["finalized"] == (29, 29)
        assert admin.update_features({"metadata.version": ("SAFE_DOWNGRADE", 28),
                                      "eligible.leader.replicas.version":
                                          ("SAFE_DOWNGRADE", 0)}) == {
            "metadata.version": "OK", "eligible.leader.replicas.version": "OK"}
    finally:
        admin.close()
    server.stop()
    got = _features_at_start(log_dir)
    assert got["metadata.version"]["finalized"] == (28, 28)
    assert got["metadata.version"]["finalized_epoch"] == 1
    assert "finalized" not in got["eligible.leader.replicas.version"]     # level 0: unlisted


def test_features_from_a_formatted_directory(tmp_path, caplog):
    """A directory ``kafkalog storage format --release-version 3.9`` formatted (as
    kafka-storage.sh would) is served at its bootstrap levels on first start, as a new Kafka
    cluster finalizes them: metadata.version 21 (3.9-IV0), ELR 0 (unlisted). group.version and
    share.version 0 are named in a warning (kafkalog always serves KIP-848 and KIP-932)."""
    import logging

    root = tmp_path / "logs"
    format_log_dir(root, "--release-version", "3.9")
    with caplog.at_level(logging.WARNING, logger="kafkalog.server"):
        got = _features_at_start(root)
    assert got["metadata.version"]["finalized"] == (21, 21)
    assert "finalized" not in got["eligible.leader.replicas.version"]
    assert got["group.version"]["finalized"] == (1, 1)
    assert any("bootstrap.checkpoint finalizes group.version=0, share.version=0" in r.message
               for r in caplog.records)


def test_api_versions_features_by_version(server):
    """ApiVersions v3 leaves out supported features whose minimum is 0 (KAFKA-17492), v4 lists
    them; below v3 there are none; UpdateFeatures v0-1 answer per feature, v2 does not."""
    with WireClient(server.address) as w:
        v4 = w.request(18, 4, {"client_software_name": "t", "client_software_version": "1"})
        v3 = w.request(18, 3, {"client_software_name": "t", "client_software_version": "1"})
        v2 = w.request(18, 2, {})
        assert {f.name: (f.min_version, f.max_version) for f in v4.supported_features} == {
            "metadata.version": (7, 29), "group.version": (1, 1), "share.version": (1, 1),
            "eligible.leader.replicas.version": (0, 1)}
        assert "eligible.leader.replicas.version" not in {f.name for f in v3.supported_features}
        assert {f.name: (f.min_version_level, f.max_version_level)
                for f in v4.finalized_features} == {
            "metadata.version": (29, 29), "group.version": (1, 1), "share.version": (1, 1),
            "eligible.leader.replicas.version": (1, 1)}
        assert not hasattr(v2, "supported_features")
        for version, results in ((0, [("group.version", 0, None)]), (1, [("group.version", 0,
                                                                          None)]), (2, [])):
            body = {"timeout": 1000, "feature_updates": [
                {"feature": "group.version", "max_version_level": 1, "allow_downgrade": False,
                 "upgrade_type": 1}], "validate_only": False}
            r = w.request(57, version, body)
            assert (r.error_code, r.error_message) == (0, None)
            assert [(x.feature, x.error_code, x.error_message)
                    for x in getattr(r, "results", ())] == results
        # v0's AllowDowngrade is not read by Kafka's controller: a downgrade fails as an upgrade
        r = w.request(57, 0, {"timeout": 1000, "feature_updates": [
            {"feature": "metadata.version", "max_version_level": 28, "allow_downgrade": True}]})
        assert r.error_code == E.invalid_update_version and "without setting the upgrade type" \
            in r.error_message and tuple(r.results) == ()


# -- CreateTopics: Kafka's name collision rule --------------------------------------------------


def test_a_topic_colliding_with_an_existing_one_is_refused(server, log_dir):
    """'.' and '_' are one character in metric names (Topic.hasCollision): the controller
    answers INVALID_TOPIC_EXCEPTION with its message; an existing name with '.'/'_' collides
    with itself there, before the existence check (ReplicationControlManager 4.1)."""
    _create(server, "a_b.c", 1)
    admin = _admin(server)
    futures = admin.create_topics([NewTopic("a.b_c", 1, 1), NewTopic("a_b.c", 1, 1),
                                   NewTopic("plain", 1, 1)])
    for name in ("a.b_c", "a_b.c"):
        with pytest.raises(ck.KafkaException) as e:
            futures[name].result(30)
        err = e.value.args[0]
        assert err.code() == E.invalid_topic_exception
        assert f"Topic '{name}' collides with existing topic: a_b.c" in err.str()
    futures["plain"].result(30)
    assert not (log_dir / "a.b_c-0").exists()
