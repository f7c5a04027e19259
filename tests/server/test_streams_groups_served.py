"""KIP-1071 streams groups in a tree served by ``kafkalog serve``, seen by real clients
(confluent-kafka/librdkafka and kafka-python admin clients): listed with their type and state
(not as consumer groups), their offsets fetched, committed by the admin client only while
Empty, deleted only while Empty (Kafka 4.2's ``StreamsGroup`` rules)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkalog import LogDir, Record
from kafkalog.groups import GroupMetadataManager
from kafkalog.groups.streams import StreamsGroupMember, TasksTuple

from ..groups.test_streams_groups import write_group
from .conftest import TEST_CONFIG, start_server

ck = pytest.importorskip("confluent_kafka", reason="confluent-kafka is not installed")
admin_mod = pytest.importorskip("confluent_kafka.admin")


@pytest.fixture
def served(tmp_path: Path):
    root = tmp_path / "kafka-logs"
    with LogDir.open(root, {"offsets.topic.num.partitions": "4"}) as logs:
        logs.create_topic("input", 2)
        for p in range(2):
            for i in range(5):
                logs.log("input", p).append([Record(None, b"x", 1_700_000_000_000 + i)])
        m = GroupMetadataManager(logs)
        write_group(m, "app", [StreamsGroupMember(
            "member-a", 3, 2, "STABLE", client_id="app-a", process_id="proc-a",
            assigned_tasks=TasksTuple({"0": frozenset({0, 1})}))])
        m.commit_offsets("app", {("input", 0): 2})
        write_group(m, "stopped", [])
        m.commit_offsets("stopped", {("input", 0): 4, ("input", 1): 1})
    server = start_server(root, config=TEST_CONFIG)
    try:
        yield server
    finally:
        server.stop()


def test_librdkafka_fetches_commits_and_deletes(served) -> None:
    admin = admin_mod.AdminClient({"bootstrap.servers": served.address})
    # ListConsumerGroups keeps groups of protocol type "consumer" or "" (as the Java admin's
    # forConsumerGroups does): streams groups are not consumer groups
    listed = {g.group_id for g in admin.list_consumer_groups().result(30).valid}
    assert not {"app", "stopped"} & listed
    offsets = admin.list_consumer_group_offsets(
        [ck.ConsumerGroupTopicPartitions("stopped")])["stopped"].result(30)
    assert {tp.partition: tp.offset for tp in offsets.topic_partitions} == {0: 4, 1: 1}
    # an admin commit (no member, epoch -1): refused by an active streams group ...
    (fut,) = admin.alter_consumer_group_offsets([ck.ConsumerGroupTopicPartitions(
        "app", [ck.TopicPartition("input", 0, 1)])]).values()
    (tp,) = fut.result(30).topic_partitions
    assert tp.error is not None and tp.error.code() == ck.KafkaError.UNKNOWN_MEMBER_ID
    # ... accepted by an Empty one
    (fut,) = admin.alter_consumer_group_offsets([ck.ConsumerGroupTopicPartitions(
        "stopped", [ck.TopicPartition("input", 0, 0)])]).values()
    fut.result(30)
    offsets = admin.list_consumer_group_offsets(
        [ck.ConsumerGroupTopicPartitions("stopped")])["stopped"].result(30)
    assert {tp.partition: tp.offset for tp in offsets.topic_partitions} == {0: 0, 1: 1}
    (fut,) = admin.delete_consumer_groups(["app"]).values()
    with pytest.raises(ck.KafkaException, match="NON_EMPTY_GROUP"):
        fut.result(30)
    (fut,) = admin.delete_consumer_groups(["stopped"]).values()
    fut.result(30)
    offsets = admin.list_consumer_group_offsets(
        [ck.ConsumerGroupTopicPartitions("stopped")])["stopped"].result(30)
    assert offsets.topic_partitions == []       # its offsets went with it


def test_kafka_python_lists_them_with_type_and_state(served) -> None:
    kafka = pytest.importorskip("kafka", reason="kafka-python is not installed")
    admin = kafka.KafkaAdminClient(bootstrap_servers=served.address, request_timeout_ms=30000)
    try:
        groups = {g["group_id"]: g for g in admin.list_groups()}
        assert groups["app"]["group_type"] == "streams"
        assert groups["app"]["protocol_type"] == "streams"
        assert groups["app"]["group_state"] == "Stable"
        assert groups["stopped"]["group_state"] == "Empty"
        only = admin.list_groups(states_filter=["Stable"])
        assert [g["group_id"] for g in only] == ["app"]
    finally:
        admin.close()


def test_streams_group_describe_over_the_wire(served) -> None:
    """StreamsGroupDescribe v0 (kio encodes and decodes: Kafka's schema), answered as
    GroupMetadataManager.streamsGroupDescribe answers it."""
    from .wire import WireClient

    with WireClient(served.address) as c:
        d = c.request(89, 0, {"group_ids": ["app", "stopped", "nobody"],
                              "include_authorized_operations": True})
    app, stopped, nobody = d.groups
    assert (app.error_code, app.group_state, app.group_epoch, app.assignment_epoch) == \
        (0, "Stable", 3, 3)
    assert app.topology.epoch == 1
    assert [s.subtopology_id for s in app.topology.subtopologies] == ["0", "1"]
    assert app.topology.subtopologies[0].source_topics == ("input",)
    assert [t.name for t in app.topology.subtopologies[0].state_changelog_topics] == \
        ["app-store-changelog"]
    (m,) = app.members
    assert (m.member_id, m.member_epoch, m.process_id, m.client_id, m.is_classic) == \
        ("member-a", 3, "proc-a", "app-a", False)
    assert [(t.subtopology_id, t.partitions) for t in m.assignment.active_tasks] == \
        [("0", (0, 1))]
    assert [(t.subtopology_id, t.partitions) for t in m.target_assignment.active_tasks] == \
        [("0", (0, 1))]
    assert app.authorized_operations == (1 << 3) | (1 << 6) | (1 << 8)   # no authorizer
    assert (stopped.error_code, stopped.group_state, stopped.members) == (0, "Empty", ())
    assert (nobody.error_code, nobody.error_message) == (69, "Group nobody not found.")


def test_streams_group_describe_acls(tmp_path: Path) -> None:
    """KafkaApis.handleStreamsGroupDescribe: DESCRIBE on the group, and DESCRIBE on every
    topic of its topology (else TOPIC_AUTHORIZATION_FAILED, without topology or members)."""
    from confluent_kafka.admin import AclOperation, AdminClient, ResourceType

    from .test_acls import _allow, _conf, _create, _server
    from .test_acls_groups import _login

    with LogDir.open(tmp_path / "logs", {"offsets.topic.num.partitions": "4"}) as logs:
        logs.create_topic("input", 1)
        write_group(GroupMetadataManager(logs), "app", [])
    server = _server(tmp_path)
    try:
        admin = AdminClient(_conf(server, "admin"))
        _create(admin, _allow("bob", ResourceType.GROUP, "app", AclOperation.DESCRIBE),
                _allow("bob", ResourceType.TOPIC, "input", AclOperation.DESCRIBE))
        with _login(server.address, "bob") as c:
            d = c.request(89, 0, {"group_ids": ["secret", "app"],
                                  "include_authorized_operations": False})
            secret, app = d.groups
            assert secret.error_code == 30                     # GROUP_AUTHORIZATION_FAILED
            assert (app.error_code, app.error_message, app.topology, app.members) == (
                29, "The described group uses topics that the client is not authorized to "
                "describe.", None, ())    # the changelog and repartition topics
        for t in ("app-store-changelog", "app-KSTREAM-REPARTITION-0000000003-repartition"):
            _create(admin, _allow("bob", ResourceType.TOPIC, t, AclOperation.DESCRIBE))
        with _login(server.address, "bob") as c:
            (app,) = c.request(89, 0, {"group_ids": ["app"],
                                       "include_authorized_operations": True}).groups
            assert (app.error_code, app.group_state, app.authorized_operations) == \
                (0, "Empty", 1 << 8)
    finally:
        server.stop()
