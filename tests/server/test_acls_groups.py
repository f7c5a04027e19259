"""ACLs on the group APIs of ``kafkalog serve`` as Kafka 4.x's KafkaApis and group coordinator
apply them, over real connections (SASL/PLAIN users, the StandardAuthorizer):

* a KIP-848 regex subscription resolves only to topics the heartbeating member's principal may
  DESCRIBE (``GroupMetadataManager.refreshRegularExpressions`` ->
  ``filterTopicDescribeAuthorizedTopics``);
* ConsumerGroupDescribe and ShareGroupDescribe answer TOPIC_AUTHORIZATION_FAILED for a group
  whose members are assigned a topic the client may not DESCRIBE (KAFKA-18813, KAFKA-18817);
* AlterShareGroupOffsets needs READ on the group and on each topic, DeleteShareGroupOffsets
  DELETE on the group and READ on each topic, with Kafka's per-topic errors and messages;
* a refused cluster operation carries Kafka's message for the API.
"""

from __future__ import annotations

import uuid

import pytest

from .test_acls import USERS, _allow, _conf, _create, _server
from .wire import WireClient

ck = pytest.importorskip("confluent_kafka")
from confluent_kafka.admin import AclOperation, AdminClient, ResourceType  # noqa: E402

TOPIC_AUTHORIZATION_FAILED = 29
GROUP_AUTHORIZATION_FAILED = 30
CLUSTER_AUTHORIZATION_FAILED = 31
UNKNOWN_TOPIC_OR_PARTITION = 3
UNDESCRIBABLE = "The group has described topic(s) that the client is not authorized to describe."


def _login(address: str, user: str) -> WireClient:
    c = WireClient(address)
    assert c.request(17, 1, {"mechanism": "PLAIN"}).error_code == 0
    r = c.request(36, 2, {"auth_bytes": f"\x00{user}\x00{USERS[user]}".encode()})
    assert r.error_code == 0, r
    return c


def _tid(server, topic: str) -> uuid.UUID:
    return uuid.UUID(bytes=server.broker.topic_id(topic).to_bytes())


_HB = {"instance_id": None, "rack_id": None, "server_assignor": None, "topic_partitions": []}


def _join(c: WireClient, group: str, member: str, *, names=None, regex=None) -> dict:
    """Join a consumer group (ConsumerGroupHeartbeat v1) and heartbeat until the assignment
    stops changing; the topic ids assigned."""
    r = c.request(68, 1, {**_HB, "group_id": group, "member_id": member, "member_epoch": 0,
                          "rebalance_timeout": 30000, "subscribed_topic_names": names,
                          "subscribed_topic_regex": regex})
    assert r.error_code == 0, r
    assigned = {} if r.assignment is None else {
        tp.topic_id: sorted(tp.partitions) for tp in r.assignment.topic_partitions}
    epoch = r.member_epoch
    for _ in range(5):
        r = c.request(68, 1, {**_HB, "group_id": group, "member_id": member,
                              "member_epoch": epoch, "rebalance_timeout": -1,
                              "subscribed_topic_names": None, "subscribed_topic_regex": None,
                              "topic_partitions": [{"topic_id": t, "partitions": ps}
                                                   for t, ps in assigned.items()]})
        assert r.error_code == 0, r
        epoch = r.member_epoch
        if r.assignment is not None:
            assigned = {tp.topic_id: sorted(tp.partitions)
                        for tp in r.assignment.topic_partitions}
    return assigned


@pytest.fixture
def acl_server(tmp_path):
    server = _server(tmp_path)
    admin = AdminClient(_conf(server, "admin"))
    try:
        yield server, admin
    finally:
        server.stop()


def test_regex_subscription_resolves_only_to_topics_the_member_may_describe(acl_server):
    server, admin = acl_server
    for t in ("orders-eu", "orders-us", "other"):
        server.broker.create_topic(t, 1)
    _create(admin, _allow("alice", ResourceType.GROUP, "rg", AclOperation.READ),
            _allow("alice", ResourceType.TOPIC, "orders-eu", AclOperation.DESCRIBE))
    with _login(server.address, "alice") as c:
        assigned = _join(c, "rg", "m-alice", regex="orders-.*")
    # orders-us matches but alice may not DESCRIBE it: never assigned
    assert assigned == {_tid(server, "orders-eu"): [0]}
    group = server.broker.groups.coordinator.manager.consumer_group("rg")
    assert group.resolved_regexes["orders-.*"].topics == frozenset({"orders-eu"})
    # the same expression under a principal that may describe everything (a super user)
    with _login(server.address, "admin") as c:
        assigned = _join(c, "rg-admin", "m-admin", regex="orders-.*")
    assert assigned == {_tid(server, "orders-eu"): [0], _tid(server, "orders-us"): [0]}


def test_consumer_group_describe_refuses_groups_assigned_undescribable_topics(acl_server):
    server, admin = acl_server
    for t in ("t1", "t2"):
        server.broker.create_topic(t, 2)
    _create(admin, _allow("alice", ResourceType.GROUP, "dg", AclOperation.READ),
            _allow("alice", ResourceType.TOPIC, "t1", AclOperation.DESCRIBE),
            _allow("alice", ResourceType.TOPIC, "t2", AclOperation.DESCRIBE),
            _allow("bob", ResourceType.GROUP, "dg", AclOperation.DESCRIBE),
            _allow("bob", ResourceType.GROUP, "empty", AclOperation.DESCRIBE),
            _allow("bob", ResourceType.TOPIC, "t1", AclOperation.DESCRIBE))
    with _login(server.address, "alice") as c:
        assert set(_join(c, "dg", "m-1", names=["t1", "t2"])) == {
            _tid(server, "t1"), _tid(server, "t2")}
    with _login(server.address, "alice") as c:   # alice may describe both topics (READ on
        d = c.request(69, 0, {"group_ids": ["dg"],  # the group implies DESCRIBE)
                              "include_authorized_operations": False})
        assert (d.groups[0].error_code, len(d.groups[0].members)) == (0, 1)
    with _login(server.address, "bob") as c:
        d = c.request(69, 0, {"group_ids": ["dg", "secret", "empty"],
                              "include_authorized_operations": True})
        by_id = {g.group_id: g for g in d.groups}
        dg = by_id["dg"]
        assert (dg.error_code, dg.error_message, dg.members, dg.group_state) == (
            TOPIC_AUTHORIZATION_FAILED, UNDESCRIBABLE, (), "")
        assert by_id["secret"].error_code == GROUP_AUTHORIZATION_FAILED
        assert by_id["empty"].error_code != 0          # (no such group)
        # KafkaApis fills authorizedOperations in only for groups described without an error
        assert [by_id[g].authorized_operations for g in ("dg", "secret", "empty")] == [
            -(1 << 31)] * 3
    _create(admin, _allow("bob", ResourceType.TOPIC, "t2", AclOperation.DESCRIBE))
    with _login(server.address, "bob") as c:
        d = c.request(69, 0, {"group_ids": ["dg"], "include_authorized_operations": True})
        (dg,) = d.groups
        assert (dg.error_code, dg.group_state, len(dg.members)) == (0, "Stable", 1)
        assert dg.authorized_operations == 1 << 8       # DESCRIBE only


def _share_join(c: WireClient, group: str, member: str, topics: list[str]) -> set:
    r = c.request(76, 1, {"group_id": group, "member_id": member, "member_epoch": 0,
                          "rack_id": None, "subscribed_topic_names": topics})
    assert r.error_code == 0, r
    epoch, assigned = r.member_epoch, set()
    for _ in range(5):
        if r.assignment is not None:
            assigned = {tp.topic_id for tp in r.assignment.topic_partitions}
        r = c.request(76, 1, {"group_id": group, "member_id": member, "member_epoch": epoch,
                              "rack_id": None, "subscribed_topic_names": None})
        assert r.error_code == 0, r
        epoch = r.member_epoch
    return assigned


def test_share_group_describe_refuses_groups_assigned_undescribable_topics(acl_server):
    server, admin = acl_server
    for t in ("s1", "s2"):
        server.broker.create_topic(t, 1)
    _create(admin, _allow("alice", ResourceType.GROUP, "sg", AclOperation.READ),
            _allow("alice", ResourceType.TOPIC, "s1", AclOperation.DESCRIBE),
            _allow("alice", ResourceType.TOPIC, "s2", AclOperation.DESCRIBE),
            _allow("bob", ResourceType.GROUP, "sg", AclOperation.DESCRIBE),
            _allow("bob", ResourceType.TOPIC, "s1", AclOperation.DESCRIBE))
    member = str(uuid.uuid4())
    with _login(server.address, "alice") as c:
        assert _share_join(c, "sg", member, ["s1", "s2"]) == {_tid(server, "s1"),
                                                              _tid(server, "s2")}
        with _login(server.address, "bob") as b:
            d = b.request(77, 1, {"group_ids": ["sg"], "include_authorized_operations": True})
            (sg,) = d.groups
            assert (sg.error_code, sg.error_message, sg.members) == (
                TOPIC_AUTHORIZATION_FAILED, UNDESCRIBABLE, ())
        _create(admin, _allow("bob", ResourceType.TOPIC, "s2", AclOperation.DESCRIBE))
        with _login(server.address, "bob") as b:
            d = b.request(77, 1, {"group_ids": ["sg"], "include_authorized_operations": True})
            (sg,) = d.groups
            assert (sg.error_code, [m.member_id for m in sg.members]) == (0, [member])
            # AuthHelper.authorizedOperations: bob's operations on the group, not all of them
            assert sg.authorized_operations == 1 << 8


def _alter(c: WireClient, group: str, *topics: str):
    return c.request(91, 0, {"group_id": group, "topics": [
        {"topic_name": t, "partitions": [{"partition_index": 0, "start_offset": 0}]}
        for t in topics]})


def test_alter_share_group_offsets_needs_read_on_the_group_and_each_topic(acl_server):
    server, admin = acl_server
    for t in ("ok", "secret"):
        server.broker.create_topic(t, 1)
    shares = server.broker.shares
    _create(admin, _allow("bob", ResourceType.GROUP, "og", AclOperation.DESCRIBE),
            _allow("bob", ResourceType.TOPIC, "ok", AclOperation.READ),
            _allow("bob", ResourceType.TOPIC, "ghost", AclOperation.READ))
    with _login(server.address, "bob") as c:
        r = _alter(c, "og", "ok")
        assert (r.error_code, r.error_message, r.responses) == (
            GROUP_AUTHORIZATION_FAILED, "Group authorization failed.", ())
    _create(admin, _allow("bob", ResourceType.GROUP, "og", AclOperation.READ))
    with _login(server.address, "bob") as c:
        r = _alter(c, "og", "ok", "secret", "ghost")
        assert r.error_code == 0
        got = [(t.topic_name, t.topic_id, [(p.partition_index, p.error_code, p.error_message)
                                           for p in t.partitions]) for t in r.responses]
        assert got[:2] == [
            ("secret", _tid(server, "secret"),
             [(0, TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed.")]),
            ("ghost", None,  # (the zero id on the wire)
             [(0, UNKNOWN_TOPIC_OR_PARTITION,
               "This server does not host this topic-partition.")])]
        assert got[2][0] == "ok" and got[2][1] == _tid(server, "ok")
        assert got[2][2] == [(0, 0, None)]
    # only the topic bob may read was altered
    assert set(shares.group_offsets("og")) == {("ok", 0)}


def test_delete_share_group_offsets_needs_delete_on_the_group_and_read_on_each_topic(
        acl_server):
    server, admin = acl_server
    for t in ("ok", "secret"):
        server.broker.create_topic(t, 1)
    shares = server.broker.shares
    for t in ("ok", "secret"):   # state for both topics, set by a super user
        with _login(server.address, "admin") as c:
            _alter(c, "dg", t)
    before = set(shares.group_offsets("dg"))
    _create(admin, _allow("bob", ResourceType.GROUP, "dg", AclOperation.READ),
            _allow("bob", ResourceType.TOPIC, "ok", AclOperation.READ),
            _allow("alice", ResourceType.GROUP, "dg", AclOperation.DELETE),
            _allow("alice", ResourceType.TOPIC, "ok", AclOperation.READ))
    body = {"group_id": "dg", "topics": [{"topic_name": "ok"}, {"topic_name": "secret"}]}
    with _login(server.address, "bob") as c:   # READ on the group is not enough
        r = c.request(92, 0, body)
        assert (r.error_code, r.error_message, r.responses) == (
            GROUP_AUTHORIZATION_FAILED, "Group authorization failed.", ())
    assert set(shares.group_offsets("dg")) == before
    with _login(server.address, "alice") as c:  # DELETE on the group, READ on "ok" only
        r = c.request(92, 0, body)
        assert r.error_code == 0
        assert [(t.topic_name, t.error_code, t.error_message) for t in r.responses] == [
            ("secret", TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed."),
            ("ok", 0, None)]
    assert {t for t, _p in shares.group_offsets("dg")} == {t for t, _p in before} - {"ok"}


def test_refused_cluster_operations_carry_kafkas_messages(acl_server):
    """AuthHelper.authorizeClusterOperation's ``Request <request> needs <OP> permission.``
    (the ACL APIs, ElectLeaders, AlterUserScramCredentials), the errors' default messages
    elsewhere (DescribeUserScramCredentials, DescribeConfigs, IncrementalAlterConfigs)."""
    import re

    server, _admin = acl_server
    server.broker.create_topic("t", 1)

    def needs(op: str, message: str) -> None:
        m = re.fullmatch(r"Request Request\(processor=0, connectionId=127\.0\.0\.1:(\d+)-"
                         r"127\.0\.0\.1:\d+-\d+, session=Session\(User:bob,/127\.0\.0\.1\), "
                         r"listenerName=ListenerName\(SASL_PLAINTEXT\), "
                         r"securityProtocol=SASL_PLAINTEXT, buffer=java\.nio\.HeapByteBuffer"
                         r"\[pos=(\d+) lim=\2 cap=\2\], envelope=None\) needs (\w+) permission\.",
                         message or "")
        assert m is not None, message
        assert (int(m.group(1)), m.group(3)) == (server.port, op)

    with _login(server.address, "bob") as c:
        r = c.request(29, 3, {"resource_type_filter": 1, "resource_name_filter": None,
                              "pattern_type_filter": 1, "principal_filter": None,
                              "host_filter": None, "operation": 1, "permission_type": 1})
        assert r.error_code == CLUSTER_AUTHORIZATION_FAILED
        needs("DESCRIBE", r.error_message)
        r = c.request(30, 3, {"creations": [
            {"resource_type": 2, "resource_name": "t", "resource_pattern_type": 3,
             "principal": "User:bob", "host": "*", "operation": 3, "permission_type": 3}]})
        assert r.results[0].error_code == CLUSTER_AUTHORIZATION_FAILED
        needs("ALTER", r.results[0].error_message)
        r = c.request(31, 3, {"filters": [
            {"resource_type_filter": 1, "resource_name_filter": None,
             "pattern_type_filter": 1, "principal_filter": None, "host_filter": None,
             "operation": 1, "permission_type": 1}]})
        assert r.filter_results[0].error_code == CLUSTER_AUTHORIZATION_FAILED
        needs("ALTER", r.filter_results[0].error_message)
        r = c.request(43, 2, {"election_type": 0, "timeout": 1000,
                              "topic_partitions": [{"topic": "t", "partitions": [0]}]})
        (p,) = r.replica_election_results[0].partition_result
        assert (r.error_code, p.error_code) == (CLUSTER_AUTHORIZATION_FAILED,
                                                CLUSTER_AUTHORIZATION_FAILED)
        needs("ALTER", p.error_message)
        r = c.request(51, 0, {"deletions": [{"name": "zed", "mechanism": 1}],
                              "upsertions": [{"name": "amy", "mechanism": 1,
                                              "iterations": 4096, "salt": b"s",
                                              "salted_password": b"p"}]})
        assert [(x.user, x.error_code) for x in r.results] == [
            ("amy", CLUSTER_AUTHORIZATION_FAILED), ("zed", CLUSTER_AUTHORIZATION_FAILED)]
        needs("ALTER", r.results[0].error_message)
        r = c.request(50, 0, {"users": [{"name": "alice"}]})
        assert (r.error_code, r.error_message) == (CLUSTER_AUTHORIZATION_FAILED,
                                                   "Cluster authorization failed.")
        assert [(x.user, x.error_code, x.error_message) for x in r.results] == [
            ("", CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed.")]
        r = c.request(32, 4, {"resources": [
            {"resource_type": 4, "resource_name": "", "configuration_keys": None},
            {"resource_type": 2, "resource_name": "t", "configuration_keys": None}],
            "include_synonyms": False, "include_documentation": False})
        assert sorted((x.resource_type, x.error_code, x.error_message) for x in r.results) == [
            (2, TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed."),
            (4, CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed.")]
        r = c.request(44, 1, {"resources": [
            {"resource_type": 4, "resource_name": "", "configs": [
                {"name": "log.cleaner.threads", "config_operation": 0, "value": "2"}]}],
            "validate_only": True})
        assert [(x.error_code, x.error_message) for x in r.responses] == [
            (CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed.")]
        # partition reassignments (ControllerApis: ALTER / DESCRIBE on the cluster), every
        # partition named carrying the error and message; AlterReplicaLogDirs (KafkaApis: ALTER,
        # the error without a message field)
        r = c.request(45, 1, {"timeout": 1000, "allow_replication_factor_change": True,
                              "topics": [{"name": "t", "partitions": [
                                  {"partition_index": 0, "replicas": [1]}]}]})
        (p,) = r.responses[0].partitions
        assert (r.error_code, p.error_code) == (CLUSTER_AUTHORIZATION_FAILED,
                                                CLUSTER_AUTHORIZATION_FAILED)
        needs("ALTER", r.error_message)
        assert p.error_message == r.error_message
        r = c.request(46, 0, {"timeout": 1000, "topics": [{"name": "t",
                                                           "partition_indexes": [0]}]})
        assert r.error_code == CLUSTER_AUTHORIZATION_FAILED
        needs("DESCRIBE", r.error_message)
        assert [(t.name, [p.partition_index for p in t.partitions]) for t in r.topics] == [
            ("t", [0])]
        r = c.request(34, 2, {"dirs": [{"path": "/x", "topics": [{"name": "t",
                                                                  "partitions": [0]}]}]})
        assert [(t.topic_name, [(p.partition_index, p.error_code) for p in t.partitions])
                for t in r.results] == [("t", [(0, CLUSTER_AUTHORIZATION_FAILED)])]
        # UpdateFeatures (ControllerApis: ALTER on the cluster; createWithErrors, no results)
        r = c.request(57, 1, {"timeout": 1000, "feature_updates": [
            {"feature": "metadata.version", "max_version_level": 29, "upgrade_type": 1}],
            "validate_only": True})
        assert (r.error_code, tuple(r.results)) == (CLUSTER_AUTHORIZATION_FAILED, ())
        needs("ALTER", r.error_message)
