"""The KRaft metadata image (``kafkalog.cluster.image``): Kafka's node tests, the replay and
loader rules, a real Kafka 3.7 metadata log, and the image against the cluster model's replay."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalog.checkpoint import Uuid
from kafkalog.cluster import kraft
from kafkalog.cluster.image import (
    DISABLED,
    STRICT,
    MetadataImage,
    MetadataImageNode,
    MetadataLeafNode,
    MetadataNodeRedactionCriteria,
    NodeStringifier,
    load_metadata,
    load_metadata_image,
)
from kafkalog.cluster.image.image_nodes import (
    client_quota_entity_name,
    config_resource_from_name,
    decode_client_quota_entity,
)
from kafkalog.cluster.image.metadata_delta import MetadataDelta
from kafkalog.cluster.image.registrations import (
    BrokerRegistration,
    ControllerRegistration,
    VersionRange,
    iso_zoned_utc,
)
from kafkalog.cluster.model import ClusterModel
from kafkalog.decoders import cluster_metadata as cm
from kafkalog.records.builder import encode_batch, encode_control_batch

from .conftest import shared_fixture_path

T1 = "AAAAAAAAAAAAAAAAAAAAAQ"
T2 = "AAAAAAAAAAAAAAAAAAAAAg"
MIGRATING = "AAAAAAAAAAAAAAAAAAAAAA"
DIR_A, DIR_B = "anCdBWcFTlu8gE1wP6bh3g", "JsnDDNVyTL289kYk6sPzig"


def _rec(name: str, data: dict) -> dict:
    return {"name": name, "data": data}


def _node_image(**kw) -> MetadataImageNode:
    image = MetadataImage(**kw)
    return MetadataImageNode(image)


# --------------------------------------------------------------------------------------------
# Kafka's node tests (metadata/src/test/java/org/apache/kafka/image/node, 4.2)
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("raw", "escaped"), [
    ("", ""), ("abracadabra", "abracadabra"), ("\\foo\\bar", "\\\\foo\\\\bar"),
    ("(bob's name)", "\\(bob's name\\)")])
def test_client_quota_escape(raw: str, escaped: str) -> None:
    name = client_quota_entity_name((("user", raw),))
    assert name == f"user({escaped})"


@pytest.mark.parametrize(("entity", "expected"), [
    ({"client-id": "foo"}, "clientId(foo)"),
    ({"client-id": ""}, "clientId()"),
    ({"user": "my-user-name"}, "user(my-user-name)"),
    ({"user": ""}, "user()"),
    ({"user": "bob", "client-id": "reports12345"}, "clientId(reports12345)_user(bob)"),
    ({"ip": "127.0.0.1"}, "ip(127.0.0.1)"),
    ({"ip": ""}, "ip()"),
    ({"user": "foo\\bar"}, "user(foo\\\\bar)"),
    ({"client-id": "(this )one)"}, "clientId(\\(this \\)one\\))"),
])
def test_client_quota_entity_round_trip(entity: dict, expected: str) -> None:
    key = tuple(sorted(entity.items()))
    assert client_quota_entity_name(key) == expected
    assert decode_client_quota_entity(expected) == key


def test_client_quota_entity_errors() -> None:
    with pytest.raises(ValueError, match="^Invalid empty entity$"):
        client_quota_entity_name(())
    with pytest.raises(ValueError, match="^Invalid entity type foobar$"):
        client_quota_entity_name((("foobar", "baz"),))
    assert decode_client_quota_entity("user(bob)x") is None
    assert decode_client_quota_entity("nobody(x)") is None
    assert decode_client_quota_entity("user(bob") is None


def test_cluster_brokers_node() -> None:
    b = BrokerRegistration.from_record({
        "brokerId": 1, "brokerEpoch": 1001, "incarnationId": "MJkaH0j0RwuC3W2GHQHtWA",
        "endPoints": [], "features": [{"name": "metadata.version", "minSupportedVersion": 1,
                                        "maxSupportedVersion": 4}],
        "rack": None, "fenced": False, "inControlledShutdown": False,
        "logDirs": [DIR_A, DIR_B]})
    brokers = _node_image(brokers={1: b}).child("cluster").child("brokers")
    assert list(brokers.child_names()) == ["1"]
    assert brokers.child("1").stringify() == (
        "BrokerRegistration(id=1, epoch=1001, incarnationId=MJkaH0j0RwuC3W2GHQHtWA, "
        "listeners=[], supportedFeatures={metadata.version: 1-4}, rack=Optional.empty, "
        "fenced=false, inControlledShutdown=false, isMigratingZkBroker=false, "
        "directories=[JsnDDNVyTL289kYk6sPzig, anCdBWcFTlu8gE1wP6bh3g])")
    assert brokers.child("2") is None
    assert brokers.child("x") is None


def test_cluster_controllers_node() -> None:
    c = ControllerRegistration.from_record({
        "controllerId": 2, "incarnationId": "adGo6sTPS0uJshjvdTUmqQ", "zkMigrationReady": False,
        "endPoints": [], "features": [{"name": "metadata.version", "minSupportedVersion": 1,
                                        "maxSupportedVersion": 4}]})
    controllers = _node_image(controllers={2: c}).child("cluster").child("controllers")
    assert list(controllers.child_names()) == ["2"]
    assert controllers.child("2").stringify() == (
        "ControllerRegistration(id=2, incarnationId=adGo6sTPS0uJshjvdTUmqQ, "
        "zkMigrationReady=false, listeners=[], supportedFeatures={metadata.version: 1-4})")
    assert controllers.child("1") is None


def test_cluster_node() -> None:
    cluster = _node_image().child("cluster")
    assert list(cluster.child_names()) == ["brokers", "controllers"]
    assert cluster.child("brokers") is not None and cluster.child("controllers") is not None
    assert cluster.child("unknown") is None


def test_configuration_node_redaction() -> None:
    # a schema in which secret.config is a PASSWORD and unknown keys are sensitive
    known = {(4, "non.secret"): False, (4, "also.non.secret"): False, (4, "secret.config"): True}
    normal = MetadataNodeRedactionCriteria.normal(lambda t, k: known.get((t, k), True))
    node = _node_image(configs={(4, ""): {"non.secret": "baaz", "secret.config": "123"}})
    broker = node.child("configs").child("BROKER")
    s = NodeStringifier(normal)
    broker.child("non.secret").print(s)
    assert str(s) == "baaz"
    s = NodeStringifier(normal)
    broker.child("secret.config").print(s)
    assert str(s) == "[redacted]"
    assert broker.child("also.non.secret") is None
    assert broker.child("secret.config").stringify(DISABLED) == "123"
    assert broker.child("non.secret").stringify() == "[redacted]"      # Strict by default


def test_configurations_node_names_and_parsing() -> None:
    resources = [(4, ""), (4, "0"), (2, ""), (2, "foobar"), (2, ":colons:"), (2, "__internal")]
    node = _node_image(configs={r: {"foo": "bar"} for r in resources}).child("configs")
    names = sorted(node.child_names())
    assert names == ["BROKER", "BROKER:0", "TOPIC", "TOPIC::colons:", "TOPIC:__internal",
                     "TOPIC:foobar"]
    assert [config_resource_from_name(n) for n in names] == [
        (4, ""), (4, "0"), (2, ""), (2, ":colons:"), (2, "__internal"), (2, "foobar")]
    assert config_resource_from_name("BROKER_LOGGER:1") == (8, "1")
    assert config_resource_from_name("BROKERX") is None
    assert config_resource_from_name("NOPE") is None


def test_scram_credential_node() -> None:
    from kafkalog.cluster.image.registrations import ScramCredentialData

    data = ScramCredentialData(bytes.fromhex("4f1d6ea31e58c5ad3aaeb3266f55cce6"),
                               bytes.fromhex("3cfa1c3421b512d1d1dfc3355138b4ad"),
                               bytes.fromhex("2d9781209073e8d03aee3cbc63a1d4ca"), 16)
    node = _node_image(scram={1: {"alice": data}}).child("scram")
    assert list(node.child_names()) == ["SCRAM-SHA-256", "SCRAM-SHA-512"]
    leaf = node.child("SCRAM-SHA-256").child("alice")
    assert leaf.stringify() == ("ScramCredentialData(salt=[redacted], storedKey=[redacted], "
                                "serverKey=[redacted], iterations=[redacted])")
    assert leaf.stringify(DISABLED) == (
        "ScramCredentialData(salt=4f1d6ea31e58c5ad3aaeb3266f55cce6, "
        "storedKey=3cfa1c3421b512d1d1dfc3355138b4ad, "
        "serverKey=2d9781209073e8d03aee3cbc63a1d4ca, iterations=16)")
    assert list(node.child("SCRAM-SHA-512").child_names()) == []
    assert node.child("UNKNOWN") is None


def test_topic_image_node() -> None:
    image = MetadataImage()
    d = MetadataDelta(image)
    d.replay(_rec("TopicRecord", {"name": "topic-image-node-test-topic", "topicId": MIGRATING}))
    d.replay(_rec("PartitionRecord", {
        "partitionId": 0, "topicId": MIGRATING, "replicas": [2, 3, 4], "isr": [2, 3],
        "leader": 2, "leaderEpoch": 1, "partitionEpoch": 345, "directories": []}))
    node = MetadataImageNode(image).child("topics").child("byName").child(
        "topic-image-node-test-topic")
    assert list(node.child_names()) == ["name", "id", "0"]
    assert isinstance(node.child("name"), MetadataLeafNode)
    assert isinstance(node.child("id"), MetadataLeafNode)
    assert node.child("unknown") is None
    assert node.child("0").stringify() == (
        "PartitionRegistration(replicas=[2, 3, 4], directories=[AAAAAAAAAAAAAAAAAAAAAA, "
        "AAAAAAAAAAAAAAAAAAAAAA, AAAAAAAAAAAAAAAAAAAAAA], isr=[2, 3], removingReplicas=[], "
        "addingReplicas=[], elr=[], lastKnownElr=[], leader=2, leaderRecoveryState=RECOVERED, "
        "leaderEpoch=1, partitionEpoch=345)")
    assert node.child("1") is None and node.child("a") is None
    assert node.child("+0") is not None                # Integer.parseInt accepts a sign


def test_node_stringifier() -> None:
    s = NodeStringifier()
    s.output("testing 123")
    s.output("again")
    assert str(s) == "testing 123, again"
    s = NodeStringifier()
    s.enter_node("foo")
    s.leave_node()
    assert str(s) == "foo()"
    s = NodeStringifier()
    s.enter_node("foo")
    s.enter_node("bar")
    s.leave_node()
    s.enter_node("baz")
    s.leave_node()
    s.leave_node()
    assert str(s) == "foo(bar(), baz())"


def test_redaction_criteria() -> None:
    known = {(4, "non.secret"): False, (4, "secret.config"): True,
             (2, "topic.secret.config"): True}
    normal = MetadataNodeRedactionCriteria.normal(lambda t, k: known.get((t, k), True))
    for c, scram, token in ((STRICT, True, True), (normal, True, True),
                            (DISABLED, False, False)):
        assert c.should_redact_scram() is scram
        assert c.should_redact_delegation_token() is token
    assert [c.should_redact_config(4, "non.secret") for c in (STRICT, normal, DISABLED)] == [
        True, False, False]
    assert [c.should_redact_config(4, "secret.config") for c in (STRICT, normal, DISABLED)] == [
        True, True, False]
    assert [c.should_redact_config(4, "unknown.config") for c in (STRICT, normal, DISABLED)] == [
        True, True, False]


def test_image_node_children() -> None:
    node = _node_image()
    assert sorted(node.child_names()) == [
        "acls", "clientQuotas", "cluster", "configs", "delegationToken", "features",
        "producerIds", "provenance", "scram", "topics"]
    assert all(node.child(n) is not None for n in node.child_names())
    assert node.child("nope") is None
    assert node.child("provenance").is_directory() is False
    assert node.child("features").child("metadataVersion").stringify() == "Optional.empty"


# --------------------------------------------------------------------------------------------
# Java texts
# --------------------------------------------------------------------------------------------

def test_java_texts() -> None:
    assert [str(VersionRange(a, b)) for a, b in ((1, 4), (0, 32767), (5, 5))] == [
        "1-4", "0+", "5"]
    assert iso_zoned_utc(1700000000000) == "2023-11-14T22:13:20Z[UTC]"
    assert iso_zoned_utc(1700000000001) == "2023-11-14T22:13:20.001Z[UTC]"
    assert iso_zoned_utc(-1) == "1969-12-31T23:59:59.999Z[UTC]"
    # Uuid.compareTo: signed halves, so a high first bit sorts first
    assert sorted(["gAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAQ"], key=Uuid.from_string) == [
        "gAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAQ"]


# --------------------------------------------------------------------------------------------
# Replay rules
# --------------------------------------------------------------------------------------------

def _broker(bid: int, epoch: int, dirs: list[str] | None = None) -> dict:
    return _rec("RegisterBrokerRecord", {
        "brokerId": bid, "brokerEpoch": epoch, "incarnationId": T1, "rack": "r1",
        "endPoints": [{"name": "PLAINTEXT", "host": "h", "port": 9092, "securityProtocol": 0},
                      {"name": "EXTERNAL", "host": "e", "port": 9094, "securityProtocol": 3}],
        "features": [{"name": "metadata.version", "minSupportedVersion": 7,
                      "maxSupportedVersion": 32767}],
        "fenced": True, "inControlledShutdown": False, "logDirs": dirs or []})


def test_broker_fencing_rules() -> None:
    image = MetadataImage()
    d = MetadataDelta(image)
    d.replay(_broker(1, 10))
    assert "listeners=[Endpoint(listenerName='EXTERNAL', securityProtocol=SASL_SSL, " \
           "host='e', port=9094), Endpoint(listenerName='PLAINTEXT'" in str(image.brokers[1])
    assert "supportedFeatures={metadata.version: 7+}, rack=Optional[r1], fenced=true" in str(
        image.brokers[1])
    with pytest.raises(ValueError, match="Tried to unfence broker 1, but the given epoch, 9, "
                                         "did not match the current broker epoch, 10"):
        d.replay(_rec("UnfenceBrokerRecord", {"id": 1, "epoch": 9}))
    with pytest.raises(ValueError, match="Tried to fence broker 2, but that broker was not "
                                         "registered."):
        d.replay(_rec("FenceBrokerRecord", {"id": 2, "epoch": 9}))
    d.replay(_rec("UnfenceBrokerRecord", {"id": 1, "epoch": 10}))
    assert not image.brokers[1].fenced
    d.replay(_rec("BrokerRegistrationChangeRecord", {
        "brokerId": 1, "brokerEpoch": 10, "fenced": 0, "inControlledShutdown": 1,
        "logDirs": [DIR_A, DIR_B]}))
    b = image.brokers[1]
    assert (b.fenced, b.in_controlled_shutdown, b.directories) == (False, True, (DIR_B, DIR_A))
    with pytest.raises(ValueError, match="unknown value for fenced field: 7"):
        d.replay(_rec("BrokerRegistrationChangeRecord", {"brokerId": 1, "brokerEpoch": 10,
                                                         "fenced": 7}))
    d.replay(_rec("UnregisterBrokerRecord", {"brokerId": 1, "brokerEpoch": 10}))
    assert image.brokers == {}


def test_topics_configs_and_elr() -> None:
    image = MetadataImage()
    d = MetadataDelta(image)
    d.replay(_rec("TopicRecord", {"name": "a", "topicId": T1}))
    d.replay(_rec("PartitionRecord", {
        "partitionId": 0, "topicId": T1, "replicas": [1, 2], "isr": [1], "leader": 1,
        "leaderEpoch": 3, "partitionEpoch": 7, "directories": [DIR_A, DIR_B],
        "eligibleLeaderReplicas": [2], "lastKnownElr": []}))
    d.replay(_rec("ConfigRecord", {"resourceType": 2, "resourceName": "a",
                                   "name": "retention.ms", "value": "1"}))
    d.replay(_rec("ConfigRecord", {"resourceType": 4, "resourceName": "",
                                   "name": "log.cleaner.threads", "value": "2"}))
    d.replay(_rec("PartitionChangeRecord", {"partitionId": 0, "topicId": T1, "leader": 2,
                                            "isr": [2]}))
    p = image.topics_by_id[T1].partitions[0]
    assert (p.leader, p.leader_epoch, p.partition_epoch, p.isr) == (2, 4, 8, [2])
    d.replay(_rec("ClearElrRecord", {"topicName": "a"}))
    p = image.topics_by_id[T1].partitions[0]
    assert (p.elr, p.partition_epoch, p.leader_epoch) == ([], 9, 4)
    d.replay(_rec("ClearElrRecord", {"topicName": ""}))      # nothing left to clear
    assert image.topics_by_id[T1].partitions[0].partition_epoch == 9
    with pytest.raises(ValueError, match="Unable to clear elr for topic with name b: no such "
                                         "topic found."):
        d.replay(_rec("ClearElrRecord", {"topicName": "b"}))
    with pytest.raises(ValueError, match=f"Unable to find partition {T1}:5"):
        d.replay(_rec("PartitionChangeRecord", {"partitionId": 5, "topicId": T1}))
    with pytest.raises(ValueError, match="The lengths for replicas and directories do not"):
        d.replay(_rec("PartitionRecord", {
            "partitionId": 1, "topicId": T1, "replicas": [1, 2], "isr": [1], "leader": 1,
            "leaderEpoch": 0, "partitionEpoch": 0, "directories": [DIR_A]}))
    d.replay(_rec("RemoveTopicRecord", {"topicId": T1}))
    assert image.topics_by_id == {} and image.topics_by_name == {}
    assert image.configs == {(4, ""): {"log.cleaner.threads": "2"}}
    with pytest.raises(ValueError, match=f"Unable to delete topic with id {T1}: no such topic"):
        d.replay(_rec("RemoveTopicRecord", {"topicId": T1}))
    d.replay(_rec("ConfigRecord", {"resourceType": 4, "resourceName": "",
                                   "name": "log.cleaner.threads", "value": None}))
    assert image.configs == {}                      # an emptied resource is dropped


def test_features_quotas_security() -> None:
    image = MetadataImage()
    d = MetadataDelta(image)
    d.replay(_rec("FeatureLevelRecord", {"name": "metadata.version", "featureLevel": 21}))
    d.replay(_rec("FeatureLevelRecord", {"name": "kraft.version", "featureLevel": 1}))
    d.replay(_rec("FeatureLevelRecord", {"name": "group.version", "featureLevel": 1}))
    d.replay(_rec("FeatureLevelRecord", {"name": "transaction.version", "featureLevel": 2}))
    d.replay(_rec("FeatureLevelRecord", {"name": "transaction.version", "featureLevel": 0}))
    with pytest.raises(ValueError, match="Unsupported metadata version"):
        d.replay(_rec("FeatureLevelRecord", {"name": "metadata.version", "featureLevel": 3}))
    features = MetadataImageNode(image).child("features")
    assert features.stringify() == "finalized_group.version(1), metadataVersion(Optional[3.9-IV0])"
    d.replay(_rec("ClientQuotaRecord", {"entity": [{"entityType": "user", "entityName": "bob"},
                                                   {"entityType": "client-id",
                                                    "entityName": "app"}],
                                        "key": "producer_byte_rate", "value": 1e7,
                                        "remove": False}))
    d.replay(_rec("ClientQuotaRecord", {"entity": [{"entityType": "user", "entityName": None}],
                                        "key": "request_percentage", "value": 12.5,
                                        "remove": False}))
    quotas = MetadataImageNode(image).child("clientQuotas")
    # the default user entity is named "" (Kafka leaves null names out)
    assert sorted(quotas.child_names()) == ["", "clientId(app)_user(bob)"]
    assert quotas.child("clientId(app)_user(bob)").stringify() == "producer_byte_rate(1.0E7)"
    assert quotas.child("") is None
    d.replay(_rec("ClientQuotaRecord", {"entity": [{"entityType": "user", "entityName": None}],
                                        "key": "request_percentage", "value": 0.0,
                                        "remove": True}))
    assert len(image.client_quotas) == 1
    acl = {"id": T2, "resourceType": 2, "resourceName": "orders", "patternType": 4,
           "principal": "User:alice", "host": "*", "operation": 15, "permissionType": 3}
    d.replay(_rec("AccessControlEntryRecord", acl))
    assert MetadataImageNode(image).child("acls").child("byId").child(T2).stringify() == (
        "StandardAcl[resourceType=TOPIC, resourceName=orders, patternType=PREFIXED, "
        "principal=User:alice, host=*, operation=TWO_PHASE_COMMIT, permissionType=ALLOW]")
    assert MetadataImageNode(image).child("acls").child("byId").child("not-a-uuid") is None
    d.replay(_rec("RemoveAccessControlEntryRecord", {"id": T2}))
    with pytest.raises(ValueError, match=f"Failed to find existing ACL with ID {T2}"):
        d.replay(_rec("RemoveAccessControlEntryRecord", {"id": T2}))
    d.replay(_rec("DelegationTokenRecord", {
        "owner": "User:a", "requester": "User:b", "renewers": ["User:c", "User:d"],
        "issueTimestamp": 1, "maxTimestamp": 2, "expirationTimestamp": 3, "tokenId": "tok"}))
    tok = MetadataImageNode(image).child("delegationToken").child("tok")
    assert tok.stringify(DISABLED) == (
        "DelegationTokenDatatokenId=tok(owner=User:a(tokenRequester=User:b(renewers=User:c "
        "User:d, issueTimestamp=1, maxTimestamp=2), expiryTimestamp=3")
    assert tok.stringify() == (
        "DelegationTokenDatatokenId=[redacted](owner=[redacted](tokenRequester=[redacted]"
        "(renewers=[redacted], issueTimestamp=[redacted], maxTimestamp=[redacted]), "
        "expiryTimestamp=[redacted]")
    with pytest.raises(ValueError, match="Unknown metadata record type"):
        d.replay({"name": "UnregisterControllerRecord", "data": {"controllerId": 1}})


# --------------------------------------------------------------------------------------------
# The loader: files, directories, transactions, faults
# --------------------------------------------------------------------------------------------

def _meta(name: str, data: dict) -> tuple[None, bytes, int]:
    return (None, cm.encode_record(name, data), 1700000000000)


class _Log:
    def __init__(self) -> None:
        self.batches: list[bytes] = []
        self.next = 0

    def add(self, records: list, epoch: int = 5, ts: int = 1700000000000) -> None:
        recs = [(k, v, ts) for k, v, _ in records]
        self.batches.append(encode_batch(recs, base_offset=self.next,
                                         partition_leader_epoch=epoch))
        self.next += len(records)

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"".join(self.batches))
        return path


def _topic(name: str, tid: str) -> list:
    return [_meta("TopicRecord", {"name": name, "topicId": tid}),
            _meta("PartitionRecord", {"partitionId": 0, "topicId": tid, "replicas": [1],
                                      "isr": [1], "leader": 1, "leaderEpoch": 0,
                                      "partitionEpoch": 0})]


def test_transactions_and_provenance(tmp_path: Path) -> None:
    log = _Log()
    log.add([_meta("FeatureLevelRecord", {"name": "metadata.version", "featureLevel": 19})])
    log.add([_meta("BeginTransactionRecord", {"name": "t1"}), *_topic("committed", T1)])
    log.add([_meta("EndTransactionRecord", {})], epoch=6, ts=1700000000120)
    log.add([_meta("NoOpRecord", {}), _meta("BeginTransactionRecord", {"name": "t2"}),
             *_topic("aborted", T2), _meta("AbortTransactionRecord", {})], epoch=6,
            ts=1700000001000)
    path = log.write(tmp_path / "m" / "00000000000000000000.log")
    loaded = load_metadata(path)
    assert loaded.faults == []
    image = loaded.image
    assert sorted(image.topics_by_name) == ["committed"]
    node = MetadataImageNode(image)
    assert node.child("provenance").stringify() == (
        "offset 9, epoch 6, time 2023-11-14T22:13:21Z[UTC]")
    # an open transaction at the end is not part of the image, and is said
    log.add([_meta("BeginTransactionRecord", {"name": "t3"}), *_topic("open", T2)], epoch=7)
    loaded = load_metadata(log.write(path))
    assert sorted(loaded.image.topics_by_name) == ["committed"]
    assert loaded.image.provenance.last_contained_offset == 9
    assert "ends in an open metadata transaction; its 2 record(s)" in loaded.faults[-1]


def test_faults_name_file_and_offset(tmp_path: Path) -> None:
    log = _Log()
    log.add([*_topic("a", T1),
             _meta("FenceBrokerRecord", {"id": 9, "epoch": 1}),
             (None, b"\x01\x02\x00\x7f", 0)])
    bad = _Log()
    bad.next = log.next
    bad.add(_topic("b", T2))
    corrupt = bytearray(bad.batches[0])
    corrupt[-1] ^= 0xFF
    log.batches.append(bytes(corrupt))
    path = log.write(tmp_path / "00000000000000000000.log")
    loaded = load_metadata(path)
    assert sorted(loaded.image.topics_by_name) == ["a"]
    assert loaded.faults[0] == (f"{path}: offset 2: Error loading metadata log record: Tried to "
                                "fence broker 9, but that broker was not registered.")
    assert loaded.faults[1].startswith(f"{path}: offset 3: unable to read metadata record")
    assert loaded.faults[2].startswith(f"{path}: stopped reading")
    assert len(loaded.faults) == 3


def test_directory_snapshot_then_log(tmp_path: Path) -> None:
    from kafkalog.decoders import kraft_control

    part = tmp_path / "__cluster_metadata-0"
    header = encode_control_batch(
        kraft_control.SNAPSHOT_HEADER, value=kraft_control.encode(
            "SNAPSHOT_HEADER", {"version": 0, "lastContainedLogTimestamp": 1700000005000}),
        base_offset=0, partition_leader_epoch=0)
    snap = encode_batch([_meta("FeatureLevelRecord", {"name": "metadata.version",
                                                      "featureLevel": 21}),
                         *_topic("a", T1)], base_offset=1)
    (part).mkdir()
    (part / "00000000000000000003-0000000004.checkpoint").write_bytes(header + snap)
    log = _Log()
    log.add([_meta("TopicRecord", {"name": "stale", "topicId": T2})] * 3, epoch=4)
    log.write(part / "00000000000000000000.log")
    loaded = load_metadata(tmp_path)            # a log dir holding the partition
    assert sorted(loaded.image.topics_by_name) == ["a"]
    assert loaded.image.provenance.last_contained_offset == 2
    assert MetadataImageNode(loaded.image).child("provenance").stringify() == (
        "offset 2, epoch 4, time 2023-11-14T22:13:25Z[UTC]")
    log.add([_meta("PartitionChangeRecord", {"partitionId": 0, "topicId": T1, "leader": -1})],
            epoch=5)
    log.write(part / "00000000000000000000.log")
    image = load_metadata_image(part)
    assert image.topics_by_name["a"].partitions[0].leader == -1
    assert image.provenance.last_contained_offset == 3
    # the snapshot file alone, as Kafka's --snapshot reads it: offsets are the snapshot's own
    alone = load_metadata_image(part / "00000000000000000003-0000000004.checkpoint")
    assert sorted(alone.topics_by_name) == ["a"]
    assert alone.provenance.last_contained_offset == 3


def test_missing_paths(tmp_path: Path) -> None:
    from kafkalog.errors import KafkaLogError

    with pytest.raises(FileNotFoundError, match="no such file or directory"):
        load_metadata(tmp_path / "nope.log")
    with pytest.raises(KafkaLogError, match="neither a metadata partition directory"):
        load_metadata(tmp_path)


# --------------------------------------------------------------------------------------------
# Real bytes: Kafka 3.7's metadata log (LDI-POC) against the cluster model's replay
# --------------------------------------------------------------------------------------------

def test_real_kafka_37_metadata_log() -> None:
    root = shared_fixture_path("kafka-real", "LDI-POC")
    loaded = load_metadata(root / "__cluster_metadata-0" / "00000000000000000000.log")
    assert loaded.faults == []
    assert loaded.leader == (1, 1)
    image = loaded.image
    model = kraft.read_log_dir(root)
    assert sorted(image.topics_by_name) == sorted(model.topics)
    for name, topic in image.topics_by_name.items():
        assert topic.id == model.topics[name].topic_id
        for pid, part in topic.partitions.items():
            other = model.topics[name].partitions[pid]
            assert (part.replicas, part.isr, part.leader, part.leader_epoch,
                    part.partition_epoch, part.directories) == (
                other.replicas, other.isr, other.leader, other.leader_epoch,
                other.partition_epoch, other.directories)
    node = MetadataImageNode(image)
    assert node.child("features").child("metadataVersion").stringify() == "Optional[3.7-IV4]"
    assert node.child("producerIds").stringify() == "nextProducerId(1000)"
    assert node.child("configs").child("TOPIC:__consumer_offsets").child(
        "cleanup.policy").stringify(DISABLED) == "compact"
    broker = node.child("cluster").child("brokers").child("1").stringify()
    assert broker.startswith("BrokerRegistration(id=1, epoch=8, incarnationId="
                             "ta5R4VtUQvagltuIzSD9hg, listeners=[Endpoint(listenerName="
                             "'PLAINTEXT', securityProtocol="
                             "PLAINTEXT, host='kafka', port=9092)], supportedFeatures="
                             "{metadata.version: 1-19}, rack=Optional.empty, ")
    assert node.child("provenance").stringify().startswith("offset 4928, epoch 1, time 2026-")


# --------------------------------------------------------------------------------------------
# Property: the image's partition replay agrees with the cluster model's (kraft.MetadataReplay)
# --------------------------------------------------------------------------------------------

_replicas = st.lists(st.integers(0, 5), min_size=1, max_size=4, unique=True)
_dirs = st.sampled_from([DIR_A, DIR_B, "XHhkr4tkSsD900pOQ8pPfg"])


@st.composite
def _change(draw: st.DrawFn) -> dict:
    d: dict = {"partitionId": 0, "topicId": T1}
    if draw(st.booleans()):
        reps = draw(_replicas)
        d["replicas"] = reps
        d["directories"] = [draw(_dirs) for _ in reps]
    if draw(st.booleans()):
        d["isr"] = draw(_replicas)
    d["leader"] = draw(st.sampled_from([-2, -1, 0, 1, 2, 3]))
    d["leaderRecoveryState"] = draw(st.sampled_from([-1, 0, 1]))
    if draw(st.booleans()):
        d["eligibleLeaderReplicas"] = draw(st.lists(st.integers(0, 5), max_size=3))
    if draw(st.booleans()):
        d["lastKnownElr"] = draw(st.lists(st.integers(0, 5), max_size=3))
    return d


@settings(max_examples=150, deadline=None)
@given(reps=_replicas, changes=st.lists(_change(), max_size=8))
def test_image_replay_matches_cluster_model(reps: list[int], changes: list[dict]) -> None:
    records = [{"name": "TopicRecord", "data": {"name": "t", "topicId": T1}},
               {"name": "PartitionRecord", "data": {
                   "partitionId": 0, "topicId": T1, "replicas": reps, "isr": reps,
                   "leader": reps[0], "leaderEpoch": 0, "partitionEpoch": 0,
                   "directories": [DIR_A] * len(reps)}}]
    records += [{"name": "PartitionChangeRecord", "data": c} for c in changes]
    image = MetadataImage()
    delta = MetadataDelta(image)
    model = ClusterModel(source="kraft")
    replay = kraft.MetadataReplay(model)
    for r in records:
        delta.replay(r)
        replay.apply(r, 0)
    a = image.topics_by_name["t"].partitions[0]
    b = model.topics["t"].partitions[0]
    assert a.summary() | {"controller_epoch": 0} == b.summary() | {"controller_epoch": 0}


def test_end_offset_is_the_image_of_a_shorter_log(tmp_path: Path) -> None:
    """``end_offset``: the image a broker whose log ended there held (what-if forensics); a
    transaction open at the cut is left out; NoOps go through the decoder-free path."""
    log = _Log()
    log.add(_topic("a", T1))                                                # 0-1
    log.add([_meta("NoOpRecord", {})] * 3, epoch=6)                         # 2-4
    log.add([_meta("BeginTransactionRecord", {"name": "x"}), *_topic("b", T2),
             _meta("EndTransactionRecord", {})], epoch=7)                   # 5-8
    log.add([_meta("PartitionChangeRecord", {"partitionId": 0, "topicId": T1,
                                             "leader": -1})], epoch=7)      # 9
    path = log.write(tmp_path / "00000000000000000000.log")
    full = load_metadata(path)
    assert sorted(full.image.topics_by_name) == ["a", "b"] and full.records == 10
    assert full.image.topics_by_name["a"].partitions[0].leader == -1
    cut = load_metadata(path, end_offset=8)              # the EndTransactionRecord is cut off
    assert sorted(cut.image.topics_by_name) == ["a"]
    assert cut.image.provenance.last_contained_offset == 4
    assert cut.image.provenance.last_contained_epoch == 6
    assert "open metadata transaction" in cut.faults[-1]
    assert load_metadata(path, end_offset=9).image.topics_by_name["a"].partitions[0].leader == 1
    assert load_metadata(path, end_offset=0).image.is_empty()


def test_module_doctests() -> None:
    import doctest
    import importlib

    for name in ("node", "registrations", "metadata_image", "metadata_delta", "image_nodes"):
        mod = importlib.import_module(f"kafkalog.cluster.image.{name}")
        assert doctest.testmod(mod).failed == 0, name


def test_lone_noop_batches_are_checked_not_decoded(tmp_path: Path) -> None:
    """A batch holding one NoOpRecord (what a controller writes each idle interval, as in the
    real LDI-POC log) takes the decoder-free path: same provenance, and its CRC still checked."""
    log = _Log()
    log.add(_topic("a", T1))
    for epoch in (3, 4):
        log.add([_meta("NoOpRecord", {})], epoch=epoch, ts=1700000000000 + epoch)
    path = log.write(tmp_path / "00000000000000000000.log")
    loaded = load_metadata(path)
    assert loaded.records == 4 and loaded.faults == []
    assert loaded.image.provenance.last_contained_offset == 3
    assert loaded.image.provenance.last_contained_epoch == 4
    assert loaded.image.provenance.last_contained_log_time_ms == 1700000000004
    assert load_metadata(path, end_offset=3).image.provenance.last_contained_offset == 2
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x01                                  # the last NoOp's value: CRC mismatch
    path.write_bytes(bytes(data))
    loaded = load_metadata(path)
    assert loaded.image.provenance.last_contained_offset == 2
    assert len(loaded.faults) == 1 and "stopped reading" in loaded.faults[0]
    assert "crc" in loaded.faults[0].lower()


def test_partition_registration_copy_is_deep() -> None:
    import copy as copy_module

    from kafkalog.cluster.model import PartitionRegistration

    p = PartitionRegistration(replicas=[1, 2], isr=[1], leader=1, leader_epoch=3,
                              partition_epoch=4, removing_replicas=[2], adding_replicas=[3],
                              leader_recovery_state=1, elr=[2], last_known_elr=[5],
                              directories=[DIR_A, DIR_B], controller_epoch=9)
    c = p.copy()
    assert c == p == copy_module.deepcopy(p)
    for name in ("replicas", "isr", "removing_replicas", "adding_replicas", "elr",
                 "last_known_elr", "directories"):
        assert getattr(c, name) is not getattr(p, name)


@settings(max_examples=40, deadline=None)
@given(flips=st.lists(st.tuples(st.integers(0, 2**31), st.integers(0, 7)), min_size=1,
                      max_size=6), fix_crcs=st.booleans())
def test_damaged_real_metadata_log_is_reported_not_raised(tmp_path_factory, flips, fix_crcs):
    """Property: bits flipped anywhere in Kafka 3.7's metadata log (CRCs recomputed or not,
    so the record decoder or the replay meets the damage) give an image and faults; the load
    and printing the whole tree never fail with anything else."""
    import struct

    from kafkalog.records.crc import crc32c

    src = shared_fixture_path("kafka-real", "LDI-POC", "__cluster_metadata-0",
                              "00000000000000000000.log").read_bytes()
    raw = bytearray(src)
    for pos, bit in flips:
        raw[pos % len(raw)] ^= 1 << bit
    if fix_crcs:
        o = 0
        while o + 61 <= len(raw):
            length = struct.unpack_from(">i", raw, o + 8)[0]
            if length < 49 or o + 12 + length > len(raw):
                break
            struct.pack_into(">I", raw, o + 17, crc32c(bytes(raw[o + 21:o + 12 + length])))
            o += 12 + length
    path = tmp_path_factory.mktemp("damaged") / "00000000000000000000.log"
    path.write_bytes(bytes(raw))
    loaded = load_metadata(path)
    MetadataImageNode(loaded.image).stringify(DISABLED)
    assert all(str(path) in f for f in loaded.faults)
