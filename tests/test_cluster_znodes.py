"""The znode layout: Kafka's own encode/decode test vectors, the documented znodes, and the
shapes of every Kafka version.

Ported from Kafka 3.9 tests: ``core/src/test/scala/kafka/zk/TopicPartitionStateZNodeTest``,
``core/src/test/scala/unit/kafka/zk/ReassignPartitionsZNodeTest``,
``core/src/test/scala/kafka/zk/FeatureZNodeTest`` and the broker registration JSON of
``core/src/test/scala/unit/kafka/cluster/BrokerEndPointTest`` (v1 .. v5 and a future version).
The shapes per version are checked against what ``ZkData.scala``/``ZkUtils.scala`` of those
releases encode (cited per case).
"""

from __future__ import annotations

import json

import pytest

from kafkalog.cluster import znodes as zn
from kafkalog.cluster.model import (
    RECOVERED,
    RECOVERING,
    Broker,
    ClusterModel,
    Controller,
    Endpoint,
    PartitionRegistration,
    Topic,
)
from kafkalog.cluster.znodes import InvalidZnodeError, ZnodeFormat


def _compact(obj: object) -> str:
    """Jackson's compact form (Kafka's ``Json.encodeAsBytes``)."""
    return json.dumps(obj, separators=(",", ":"))


# --------------------------------------------------------------------------------------------
# TopicPartitionStateZNodeTest
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("recovery", [RECOVERING, RECOVERED])
def test_partition_state_encode_decode(recovery: int) -> None:
    expected = PartitionRegistration(replicas=[], isr=[1], leader=1, leader_epoch=6,
                                     leader_recovery_state=recovery, partition_epoch=5,
                                     controller_epoch=10)
    encoded = _compact(zn.partition_state_znode(expected))
    assert ("leader_recovery_state" in encoded) == (recovery == RECOVERING)
    assert zn.decode_partition_state_znode(encoded.encode(), zk_version=5) == expected


def test_partition_state_decode_old_value() -> None:
    old = {"version": 1, "leader": 1, "leader_epoch": 6, "controller_epoch": 10, "isr": [1]}
    got = zn.decode_partition_state_znode(_compact(old), zk_version=5)
    assert (got.leader, got.leader_epoch, got.isr, got.controller_epoch) == (1, 6, [1], 10)
    assert (got.leader_recovery_state, got.partition_epoch) == (RECOVERED, 5)


# --------------------------------------------------------------------------------------------
# ReassignPartitionsZNodeTest
# --------------------------------------------------------------------------------------------

REASSIGNMENT_JSON = '{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[1,2]}]}'


def test_reassign_partitions_encode() -> None:
    assert _compact(zn.reassign_partitions_znode({("foo", 0): [1, 2]})) == REASSIGNMENT_JSON


def test_reassign_partitions_decode_invalid_json() -> None:
    with pytest.raises(InvalidZnodeError, match="not JSON"):
        zn.decode_reassign_partitions_znode(b"invalid json", path="/admin/reassign_partitions")


def test_reassign_partitions_decode_valid_json() -> None:
    assert zn.decode_reassign_partitions_znode(REASSIGNMENT_JSON.encode()) == {("foo", 0): [1, 2]}


# --------------------------------------------------------------------------------------------
# FeatureZNodeTest
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [1, 2])
def test_feature_encode_decode(version: int) -> None:
    features = {"feature1": 2, "feature2": 4}
    data = _compact(zn.feature_znode(features, version)).encode()
    assert zn.decode_feature_znode(data) == (version, 1, features)


def test_feature_decode_success_v1() -> None:
    template = '{"version":1, "status":1, "features":%s}'
    valid = ('{"feature1": {"min_version_level": 1, "max_version_level": 2}, '
             '"feature2": {"min_version_level": 2, "max_version_level": 4}}')
    assert zn.decode_feature_znode(template % valid) == (1, 1, {"feature1": 2, "feature2": 4})
    assert zn.decode_feature_znode(template % "{}") == (1, 1, {})


def test_feature_decode_success_v2() -> None:
    template = '{"version":2, "status":1, "features":%s}'
    valid = '{"feature1": {"max_version_level": 2}, "feature2": {"max_version_level": 4}}'
    assert zn.decode_feature_znode(template % valid) == (2, 1, {"feature1": 2, "feature2": 4})
    assert zn.decode_feature_znode(template % "{}") == (2, 1, {})


def test_feature_decode_fail_on_invalid_version_and_status() -> None:
    template = ('{"version":%d, "status":%d, "features":{"feature1": {"min_version_level": 1, '
                '"max_version_level": 2}, "feature2": {"min_version_level": 2, '
                '"max_version_level": 4}}}')
    with pytest.raises(InvalidZnodeError):
        zn.decode_feature_znode(template % (0, 1))
    with pytest.raises(InvalidZnodeError):
        zn.decode_feature_znode(template % (2, 2))


@pytest.mark.parametrize("features", [
    "",                                                                  # missing
    ',"features":{"feature1": {"min_version_level": 1, "max_version_level": 2}, "partial"}',
    ',"features":{"feature1": {"min_version_level": 0, "max_version_level": 2}}',
    ',"features":{"feature1": {"min_version_level": 2, "max_version_level": 1}}',
    ',"features":{"feature1": {"max_version_level": 1}}',                # v1 needs the min
    ',"features":{"feature1": {"min_version_level": 1}}',
])
def test_feature_decode_fail_on_invalid_features_v1(features: str) -> None:
    with pytest.raises(InvalidZnodeError):
        zn.decode_feature_znode('{"version":1, "status":1' + features + "}")


@pytest.mark.parametrize("features", [
    "",
    ',"features":{"feature1": {"max_version_level": 0}}',
    ',"features":{"feature1": {"min_version_level": 2}}',
])
def test_feature_decode_fail_on_invalid_features_v2(features: str) -> None:
    with pytest.raises(InvalidZnodeError):
        zn.decode_feature_znode('{"version":2, "status":1' + features + "}")


# --------------------------------------------------------------------------------------------
# Broker registrations (BrokerEndPointTest)
# --------------------------------------------------------------------------------------------


def _endpoint(b: Broker, listener: str) -> tuple[str | None, int]:
    ep = next(e for e in b.endpoints if e.name == listener)
    return ep.host, ep.port


def test_broker_from_json_future_version() -> None:
    data = ('{"foo":"bar", "version":100, "host":"localhost", "port":9092, "jmx_port":9999, '
            '"timestamp":"1416974968782", "endpoints":["SSL://localhost:9093"]}')
    b = zn.decode_broker_id_znode(1, data)
    assert b.id == 1 and _endpoint(b, "SSL") == ("localhost", 9093)


def test_broker_from_json_v2() -> None:
    data = ('{"version":2, "host":"localhost", "port":9092, "jmx_port":9999, '
            '"timestamp":"1416974968782", "endpoints":["PLAINTEXT://localhost:9092"]}')
    assert _endpoint(zn.decode_broker_id_znode(1, data), "PLAINTEXT") == ("localhost", 9092)


def test_broker_from_json_v1() -> None:
    data = ('{"jmx_port":-1,"timestamp":"1420485325400","host":"172.16.8.243","version":1,'
            '"port":9091}')
    b = zn.decode_broker_id_znode(1, data)
    assert _endpoint(b, "PLAINTEXT") == ("172.16.8.243", 9091)
    assert (b.jmx_port, b.timestamp) == (-1, 1420485325400)


def test_broker_from_json_v3() -> None:
    data = ('{"version":3, "host":"localhost", "port":9092, "jmx_port":9999, '
            '"timestamp":"2233345666", "endpoints":["PLAINTEXT://host1:9092", '
            '"SSL://host1:9093"], "rack":"dc1"}')
    b = zn.decode_broker_id_znode(1, data)
    assert _endpoint(b, "SSL") == ("host1", 9093) and b.rack == "dc1"


@pytest.mark.parametrize("rack", [',"rack":null', ""])
def test_broker_from_json_v4_without_rack(rack: str) -> None:
    data = ('{"version":4, "host":"localhost", "port":9092, "jmx_port":9999, '
            '"timestamp":"2233345666", "endpoints":["CLIENT://host1:9092", '
            '"REPLICATION://host1:9093"], "listener_security_protocol_map":{"CLIENT":"SSL", '
            '"REPLICATION":"PLAINTEXT"}' + rack + "}")
    b = zn.decode_broker_id_znode(1, data)
    assert _endpoint(b, "CLIENT") == ("host1", 9092) and b.rack is None
    assert {e.name: e.security_protocol for e in b.endpoints} == {
        "CLIENT": "SSL", "REPLICATION": "PLAINTEXT"}


def test_broker_from_json_v4_with_no_features() -> None:
    data = ('{"version":4, "host":"localhost", "port":9092, "jmx_port":9999, '
            '"timestamp":"2233345666", "endpoints":["CLIENT://host1:9092", '
            '"REPLICATION://host1:9093"], "listener_security_protocol_map":{"CLIENT":"SSL", '
            '"REPLICATION":"PLAINTEXT"}, "rack":"dc1"}')
    b = zn.decode_broker_id_znode(1, data)
    assert (b.rack, b.features) == ("dc1", {})


def test_broker_from_json_v5() -> None:
    data = ('{"version":5, "host":"localhost", "port":9092, "jmx_port":9999, '
            '"timestamp":"2233345666", "endpoints":["CLIENT://host1:9092", '
            '"REPLICATION://host1:9093"], "listener_security_protocol_map":{"CLIENT":"SSL", '
            '"REPLICATION":"PLAINTEXT"}, "rack":"dc1", "features": {"feature1": '
            '{"min_version": 1, "max_version": 2}, "feature2": {"min_version": 2, '
            '"max_version": 4}}}')
    b = zn.decode_broker_id_znode(1, data)
    assert _endpoint(b, "CLIENT") == ("host1", 9092) and b.rack == "dc1"
    assert b.features == {"feature1": (1, 2), "feature2": (2, 4)}


def test_broker_registration_errors() -> None:
    with pytest.raises(InvalidZnodeError, match="unsupported version"):
        zn.decode_broker_id_znode(1, '{"version":0,"jmx_port":-1}')
    with pytest.raises(InvalidZnodeError, match="jmx_port"):
        zn.decode_broker_id_znode(1, '{"version":4,"endpoints":[]}', path="/brokers/ids/1")
    with pytest.raises(InvalidZnodeError, match="no security protocol defined for listener X"):
        zn.decode_broker_id_znode(1, '{"version":2,"jmx_port":-1,"endpoints":["X://h:1"]}')
    with pytest.raises(InvalidZnodeError, match="unable to parse"):
        zn.decode_broker_id_znode(1, '{"version":2,"jmx_port":-1,"endpoints":["PLAINTEXT:h"]}')
    with pytest.raises(InvalidZnodeError) as info:
        zn.decode_broker_id_znode(1, b"{", path="/brokers/ids/1")
    assert info.value.path == "/brokers/ids/1" and str(info.value).startswith("/brokers/ids/1:")


def test_endpoint_forms() -> None:
    eps = zn.parse_endpoints(["PLAINTEXT://:9092", "ssl://[::1]:9093", "SASL_SSL://h.x:-1"],
                             {"PLAINTEXT": "PLAINTEXT", "SSL": "SSL", "SASL_SSL": "SASL_SSL"})
    assert eps == [Endpoint("PLAINTEXT", None, 9092), Endpoint("SSL", "::1", 9093, "SSL"),
                   Endpoint("SASL_SSL", "h.x", -1, "SASL_SSL")]
    assert [e.connection_string() for e in eps] == ["PLAINTEXT://:9092", "SSL://[::1]:9093",
                                                    "SASL_SSL://h.x:-1"]


# --------------------------------------------------------------------------------------------
# The documented znodes round-trip
# --------------------------------------------------------------------------------------------


def test_documented_partition_state_round_trips() -> None:
    raw = '{"controller_epoch":7,"leader":1,"version":1,"leader_epoch":0,"isr":[1]}'
    state = zn.decode_partition_state_znode(raw.encode())
    assert (state.controller_epoch, state.leader, state.leader_epoch, state.isr) == (7, 1, 0, [1])
    assert zn.partition_state_znode(state) == json.loads(raw)


def test_documented_topic_znode_v1_round_trips() -> None:
    raw = '{"version":1,"partitions":{"0":[1,2],"1":[2,1],"2":[1,2]}}'
    topic = zn.decode_topic_znode("t", raw.encode())
    assert {p: r.replicas for p, r in topic.partitions.items()} == {0: [1, 2], 1: [2, 1],
                                                                    2: [1, 2]}
    assert topic.topic_id is None
    assert _compact(zn.topic_znode(topic, 1)) == raw


def test_documented_controller_v1_round_trips() -> None:
    raw = '{"version":1,"brokerid":3,"timestamp":"1403061802981"}'
    controller = zn.decode_controller_znode(raw.encode())
    assert (controller.id, controller.timestamp, controller.kraft) == (3, 1403061802981, False)
    assert _compact(zn.controller_znode(controller, 1)) == raw
    # the 3.4+ shape written by a ZooKeeper broker: kraftControllerEpoch -1
    assert zn.controller_znode(controller, 2)["kraftControllerEpoch"] == -1


def test_documented_v5_broker_registration_round_trips() -> None:
    raw = {"version": 5, "host": "h1", "port": 9092,
           "endpoints": ["PLAINTEXT://h1:9092", "SSL://h1:9093", "INTERNAL://[::1]:9094"],
           "jmx_port": 9999, "timestamp": "1700000000000", "rack": "r1",
           "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT", "SSL": "SSL",
                                              "INTERNAL": "SASL_PLAINTEXT"},
           "features": {"metadata.version": {"min_version": 1, "max_version": 20}}}
    broker = zn.decode_broker_id_znode(2, _compact(raw))
    assert broker.endpoints[2] == Endpoint("INTERNAL", "::1", 9094, "SASL_PLAINTEXT")
    assert zn.broker_id_znode(broker, 5) == raw


def test_topic_znode_v2_v3_round_trip() -> None:
    raw = {"version": 3, "partitions": {"0": [4, 5, 1], "1": [2, 1]},
           "adding_replicas": {"0": [4, 5]}, "removing_replicas": {"0": [1]},
           "topic_id": "B3_HiNPgSQ6oxG9ZZ6ED5A"}
    topic = zn.decode_topic_znode("orders", _compact(raw))
    p0 = topic.partitions[0]
    assert (p0.adding_replicas, p0.removing_replicas, p0.target_replicas) == ([4, 5], [1], [4, 5])
    assert zn.topic_znode(topic, 3) == raw
    v2 = zn.topic_znode(topic, 2)
    assert v2["version"] == 2 and "topic_id" not in v2 and v2["adding_replicas"] == {"0": [4, 5]}


# --------------------------------------------------------------------------------------------
# Every Kafka version's shapes
# --------------------------------------------------------------------------------------------


def _model() -> ClusterModel:
    m = ClusterModel(cluster_id="q1w2e3r4t5y6u7i8o9p0", controller_epoch=7,
                     controller=Controller(2, 7, 1403061802981))
    m.brokers[1] = Broker(1, [Endpoint("PLAINTEXT", "h1", 9092),
                              Endpoint("SSL", "h1", 9093, "SSL")], rack="r1",
                          features={"metadata.version": (1, 20)}, timestamp=1, jmx_port=9999)
    m.brokers[2] = Broker(2, [Endpoint("PLAINTEXT", "h2", 9092)], timestamp=2)
    m.brokers[3] = Broker(3, [Endpoint("PLAINTEXT", "h3", 9092)], fenced=True)
    m.topics["t"] = Topic("t", "B3_HiNPgSQ6oxG9ZZ6ED5A", {
        0: PartitionRegistration([1, 2, 3], [1, 2], 1, 3, controller_epoch=7,
                                 leader_recovery_state=RECOVERING),
        1: PartitionRegistration([2, 1, 3], [2, 1], 2, 1, controller_epoch=7,
                                 adding_replicas=[3], removing_replicas=[])})
    m.features = {"metadata.version": 20}
    m.producer_id_block = {"broker": 1, "block_start": 0, "block_end": 999}
    return m


@pytest.mark.parametrize("version, topic, broker, controller, feature, lrs, cid, pid", [
    ("0.8.2", 1, 1, 1, None, False, False, False),     # ZkUtils 0.8.2
    ("0.9.0.1", 1, 2, 1, None, False, False, False),   # 0.9: + endpoints
    ("0.10.0", 1, 3, 1, None, False, False, False),    # 0.10.0: + rack
    ("0.10.1.1", 1, 3, 1, None, False, True, False),   # 0.10.1: /cluster/id (KIP-78)
    ("0.10.2", 1, 4, 1, None, False, True, False),     # 0.10.2: listener map (KIP-103)
    ("1.1.0", 1, 4, 1, None, False, True, True),       # ZkData 1.1
    ("2.3", 1, 4, 1, None, False, True, True),
    ("2.4.1", 2, 4, 1, None, False, True, True),       # 2.4: adding/removing (KIP-455)
    ("2.7", 2, 5, 1, 1, False, True, True),            # 2.7: features (KIP-584)
    ("2.8.0", 3, 5, 1, 1, False, True, True),          # 2.8: topic ids (KIP-516)
    ("3.2", 3, 5, 1, 1, True, True, True),             # 3.2: leader_recovery_state (KIP-704)
    ("3.3", 3, 5, 1, 2, True, True, True),             # 3.3: FeatureZNode v2
    ("3.9", 3, 5, 2, 2, True, True, True),             # 3.4+: kraftControllerEpoch
])
def test_render_in_each_kafka_version(version, topic, broker, controller, feature, lrs, cid,
                                      pid) -> None:
    fmt = ZnodeFormat.for_kafka_version(version)
    z = zn.render(_model(), fmt)
    assert z["/brokers/topics/t"]["version"] == topic
    assert ("adding_replicas" in z["/brokers/topics/t"]) == (topic >= 2)
    assert ("topic_id" in z["/brokers/topics/t"]) == (topic >= 3)
    b1 = z["/brokers/ids/1"]
    assert b1["version"] == broker
    assert ("endpoints" in b1, "rack" in b1, "listener_security_protocol_map" in b1,
            "features" in b1) == (broker >= 2, broker >= 3, broker >= 4, broker >= 5)
    assert "/brokers/ids/3" not in z                    # fenced: no session, no znode
    assert z["/controller"]["version"] == controller
    assert ("kraftControllerEpoch" in z["/controller"]) == (controller >= 2)
    assert z.get("/feature", {}).get("version") == feature
    state = z["/brokers/topics/t/partitions/0/state"]
    assert ("leader_recovery_state" in state) == lrs
    assert ("/cluster/id" in z, "/latest_producer_id_block" in z) == (cid, pid)
    # every rendered shape decodes back to the same assignment, states and registrations
    back = zn.decode_topic_znode("t", z["/brokers/topics/t"])
    assert back.partitions[1].replicas == [2, 1, 3]
    b = zn.decode_broker_id_znode(1, b1)
    assert _endpoint(b, "PLAINTEXT") == ("h1", 9092)
    assert zn.decode_partition_state_znode(state).isr == [1, 2]


def test_render_reassignment_in_flight_from_kraft_model() -> None:
    z = zn.render(_model())
    assert z["/admin/reassign_partitions"] == {
        "version": 1, "partitions": [{"topic": "t", "partition": 1, "replicas": [2, 1, 3]}]}


def test_znode_format_choices() -> None:
    with pytest.raises(ValueError, match="no ZooKeeper mode"):
        ZnodeFormat.for_kafka_version("4.0")
    with pytest.raises(ValueError, match="not a Kafka version"):
        ZnodeFormat.for_kafka_version("latest")
    assert (ZnodeFormat.for_zk_version("1").topic, ZnodeFormat.for_zk_version("1").broker) == (1, 4)
    assert ZnodeFormat.for_zk_version("2").broker == 5
    custom = ZnodeFormat.for_zk_version("topic=2,broker=1,controller=1")
    assert (custom.topic, custom.broker, custom.controller) == (2, 1, 1)
    with pytest.raises(ValueError):
        ZnodeFormat.for_zk_version("4")
    with pytest.raises(ValueError):
        ZnodeFormat.for_zk_version("broker=6")
