"""ACLs (Kafka's StandardAuthorizer) in ``kafkalog serve``, with real clients: librdkafka's admin
client creates, describes and deletes ACLs; producers, consumers and transactional producers are
allowed or refused by them with Kafka's error codes; a server without an authorizer answers the
ACL APIs SECURITY_DISABLED.

Users log in with SASL/PLAIN (admin is a super user); each test starts its own server.
"""

from __future__ import annotations

import dataclasses
import time

import pytest

from .conftest import TEST_CONFIG, start_server

ck = pytest.importorskip("confluent_kafka")
from confluent_kafka.admin import (  # noqa: E402
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)

USERS = {"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret"}
AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


def _server(tmp_path, **kw):
    cfg = dataclasses.replace(
        TEST_CONFIG, security_protocol="SASL_PLAINTEXT", sasl_plain_users=USERS,
        sasl_enabled_mechanisms=("PLAIN",), connections_failed_authentication_delay_ms=10,
        **{"authorizer_class_name": AUTHORIZER, "super_users": ("User:admin",), **kw})
    return start_server(tmp_path / "logs", config=cfg)


def _conf(server, user: str) -> dict:
    return {"bootstrap.servers": server.address, "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN", "sasl.username": user, "sasl.password": USERS[user]}


def _allow(user: str, rtype, name: str, op, pattern=ResourcePatternType.LITERAL,
           permission=AclPermissionType.ALLOW) -> AclBinding:
    return AclBinding(rtype, name, pattern, f"User:{user}", "*", op, permission)


def _create(admin: AdminClient, *bindings: AclBinding) -> None:
    for f in admin.create_acls(list(bindings)).values():
        f.result(30)


def _produce(conf: dict, topic: str, n: int = 3, **extra) -> list:
    errors: list = []
    delivered: list = []
    p = ck.Producer({**conf, "message.timeout.ms": 5000, "error_cb": errors.append, **extra})
    for i in range(n):
        p.produce(topic, b"v%d" % i, on_delivery=lambda err, msg: delivered.append(err))
    p.flush(15)
    return delivered


def _consume(conf: dict, topic: str, group: str, n: int) -> tuple[list[bytes], list]:
    c = ck.Consumer({**conf, "group.id": group, "auto.offset.reset": "earliest"})
    c.subscribe([topic])
    got, errors = [], []
    deadline = time.monotonic() + 10
    while len(got) < n and time.monotonic() < deadline:
        m = c.poll(0.5)
        if m is None:
            continue
        if m.error():
            errors.append(m.error())
            if not m.error().retriable():
                break
        else:
            got.append(m.value())
    c.close()
    return got, errors


def test_acls_decide_who_produces_and_consumes(tmp_path):
    server = _server(tmp_path)
    try:
        admin = AdminClient(_conf(server, "admin"))
        admin.create_topics([NewTopic("orders", 1), NewTopic("secret", 1)])["orders"].result(30)
        _create(admin,
                _allow("alice", ResourceType.TOPIC, "orders", AclOperation.WRITE),
                _allow("bob", ResourceType.TOPIC, "orders", AclOperation.READ),
                _allow("bob", ResourceType.GROUP, "billing-", AclOperation.READ,
                       ResourcePatternType.PREFIXED))
        # alice writes (WRITE implies DESCRIBE); bob may not
        assert _produce(_conf(server, "alice"), "orders") == [None] * 3
        refused = _produce(_conf(server, "bob"), "orders", 1)
        assert [e.code() for e in refused] == [ck.KafkaError.TOPIC_AUTHORIZATION_FAILED]
        # bob reads with a group under the prefix; alice has no group ACL
        got, _ = _consume(_conf(server, "bob"), "orders", "billing-1", 3)
        assert got == [b"v0", b"v1", b"v2"]
        _, errors = _consume(_conf(server, "alice"), "orders", "billing-2", 3)
        assert ck.KafkaError.GROUP_AUTHORIZATION_FAILED in [e.code() for e in errors]
        # metadata of all topics shows bob only what he may describe
        md = ck.Producer(_conf(server, "bob")).list_topics(timeout=10)
        assert "orders" in md.topics and "secret" not in md.topics
        # the ACLs, described by resource
        described = admin.describe_acls(AclBindingFilter(
            ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY,
            AclPermissionType.ANY)).result(30)
        assert sorted((b.principal, b.name, b.operation) for b in described) == [
            ("User:alice", "orders", AclOperation.WRITE),
            ("User:bob", "billing-", AclOperation.READ),
            ("User:bob", "orders", AclOperation.READ)]
        # a DENY beats an ALLOW
        _create(admin, _allow("alice", ResourceType.TOPIC, "ord", AclOperation.WRITE,
                              ResourcePatternType.PREFIXED, AclPermissionType.DENY))
        refused = _produce(_conf(server, "alice"), "orders", 1)
        assert [e.code() for e in refused] == [ck.KafkaError.TOPIC_AUTHORIZATION_FAILED]
        # deleting bob's READ stops his consumer
        deleted = admin.delete_acls([AclBindingFilter(
            ResourceType.TOPIC, "orders", ResourcePatternType.LITERAL, "User:bob", None,
            AclOperation.ANY, AclPermissionType.ANY)])
        [removed] = [f.result(30) for f in deleted.values()]
        assert [(b.principal, b.operation) for b in removed] == [("User:bob", AclOperation.READ)]
        _, errors = _consume(_conf(server, "bob"), "orders", "billing-3", 1)
        assert ck.KafkaError.TOPIC_AUTHORIZATION_FAILED in [e.code() for e in errors]
    finally:
        server.stop()
    # ACLs persist: a restarted server decides the same
    server = _server(tmp_path)
    try:
        refused = _produce(_conf(server, "alice"), "orders", 1)
        assert [e.code() for e in refused] == [ck.KafkaError.TOPIC_AUTHORIZATION_FAILED]
    finally:
        server.stop()


def test_only_the_cluster_alter_right_changes_acls(tmp_path):
    server = _server(tmp_path)
    try:
        alice = AdminClient(_conf(server, "alice"))
        fut = alice.create_acls([_allow("alice", ResourceType.TOPIC, "x", AclOperation.ALL)])
        with pytest.raises(ck.KafkaException) as e:
            list(fut.values())[0].result(30)
        assert e.value.args[0].code() == ck.KafkaError.CLUSTER_AUTHORIZATION_FAILED
        # an invalid binding: Kafka's texts
        admin = AdminClient(_conf(server, "admin"))
        fut = admin.create_acls([AclBinding(ResourceType.BROKER, "other",
                                            ResourcePatternType.LITERAL, "User:a", "*",
                                            AclOperation.ALTER, AclPermissionType.ALLOW)])
        with pytest.raises(ck.KafkaException) as e:
            list(fut.values())[0].result(30)
        assert "The only valid name for the CLUSTER resource is kafka-cluster" in str(e.value)
    finally:
        server.stop()


def test_transactional_and_idempotent_producers(tmp_path):
    server = _server(tmp_path)
    try:
        admin = AdminClient(_conf(server, "admin"))
        admin.create_topics([NewTopic("ledger", 1)])["ledger"].result(30)
        _create(admin, _allow("alice", ResourceType.TOPIC, "ledger", AclOperation.WRITE),
                _allow("alice", ResourceType.TRANSACTIONAL_ID, "alice-", AclOperation.WRITE,
                       ResourcePatternType.PREFIXED))
        # idempotence needs IDEMPOTENT_WRITE on the cluster or WRITE on some topic (KIP-679)
        assert _produce(_conf(server, "alice"), "ledger", 2,
                        **{"enable.idempotence": True}) == [None, None]
        p = ck.Producer({**_conf(server, "alice"), "transactional.id": "alice-1"})
        p.init_transactions(30)
        p.begin_transaction()
        p.produce("ledger", b"in-txn")
        p.commit_transaction(30)
        p = ck.Producer({**_conf(server, "alice"), "transactional.id": "bob-1"})
        with pytest.raises(ck.KafkaException) as e:
            p.init_transactions(30)
        assert e.value.args[0].code() == ck.KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        # bob has no WRITE anywhere: no idempotent producer id
        refused = _produce(_conf(server, "bob"), "ledger", 1, **{"enable.idempotence": True})
        assert refused and refused[0] is not None
    finally:
        server.stop()


def test_without_an_authorizer_the_acl_apis_are_disabled(tmp_path):
    server = start_server(tmp_path / "logs")
    try:
        admin = AdminClient({"bootstrap.servers": server.address})
        fut = admin.create_acls([_allow("a", ResourceType.TOPIC, "t", AclOperation.READ)])
        with pytest.raises(ck.KafkaException) as e:
            list(fut.values())[0].result(30)
        assert e.value.args[0].code() == ck.KafkaError.SECURITY_DISABLED
        # and everything stays allowed
        assert _produce({"bootstrap.servers": server.address}, "open", 1) == [None]
    finally:
        server.stop()


def test_tls_client_certificate_names_the_principal(tmp_path):
    """Mutual TLS: the principal is the certificate's subject in RFC 2253 form, as Kafka's
    DefaultKafkaPrincipalBuilder makes it (X500Principal.getName(); checked against
    cryptography's RFC 4514 text), and ACLs name it."""
    trustme = pytest.importorskip("trustme")
    ca = trustme.CA()
    server_pem, ca_pem = tmp_path / "server.pem", tmp_path / "ca.pem"
    ca.issue_cert("127.0.0.1").private_key_and_cert_chain_pem.write_to_path(str(server_pem))
    ca.cert_pem.write_to_path(str(ca_pem))
    client = ca.issue_cert("client.example")
    cert, key = tmp_path / "client.pem", tmp_path / "client.key"
    for i, blob in enumerate(client.cert_chain_pems):
        blob.write_to_path(str(cert), append=i > 0)
    client.private_key_pem.write_to_path(str(key))
    cfg = dataclasses.replace(
        TEST_CONFIG, security_protocol="SSL", ssl_keystore_location=str(server_pem),
        ssl_truststore_location=str(ca_pem), ssl_client_auth="required",
        authorizer_class_name=AUTHORIZER)
    root = tmp_path / "logs"
    server = start_server(root, config=cfg)
    conf = {"bootstrap.servers": server.address, "security.protocol": "SSL",
            "ssl.ca.location": str(ca_pem), "ssl.certificate.location": str(cert),
            "ssl.key.location": str(key)}
    try:
        server.broker.create_topic("tls", 1)
        refused = _produce(conf, "tls", 1)
        assert [e.code() for e in refused] == [ck.KafkaError.TOPIC_AUTHORIZATION_FAILED]
        # (through the admin API as the super user would; here the store, as the test has no
        # SASL user to be one)
        from cryptography import x509

        from kafkalog.security import acls

        subject = x509.load_pem_x509_certificate(
            client.cert_chain_pems[0].bytes()).subject.rfc4514_string()
        server.broker.acls.create([acls.AclBinding(
            acls.ResourceType.TOPIC, "tls", acls.PatternType.LITERAL, f"User:{subject}",
            "*", acls.AclOperation.WRITE, acls.AclPermissionType.ALLOW)])
        server.broker.acls_changed()
        assert _produce(conf, "tls", 2) == [None, None]
    finally:
        server.stop()


def test_offsets_of_unreadable_topics_are_refused_and_the_rest_committed(tmp_path):
    """OffsetCommit with one readable and one unreadable topic (raw requests; the principal of
    a PLAINTEXT connection is User:ANONYMOUS)."""
    from kafkalog.security import acls

    from .wire import WireClient

    cfg = dataclasses.replace(TEST_CONFIG, authorizer_class_name=AUTHORIZER)
    server = start_server(tmp_path / "logs", config=cfg)
    try:
        for t in ("a", "b"):
            server.broker.create_topic(t, 1)
        server.broker.acls.create([acls.AclBinding(
            rt, name, acls.PatternType.LITERAL, "User:ANONYMOUS", "*", acls.AclOperation.READ,
            acls.AclPermissionType.ALLOW) for rt, name in (
                (acls.ResourceType.GROUP, "g"), (acls.ResourceType.TOPIC, "a"))])
        server.broker.acls_changed()
        with WireClient(server.address) as c:
            r = c.request(8, 8, {"group_id": "g", "generation_id_or_member_epoch": -1,
                                 "member_id": "", "group_instance_id": None, "topics": [
                                     {"name": t, "partitions": [{
                                         "partition_index": 0, "committed_offset": 5,
                                         "committed_leader_epoch": -1,
                                         "committed_metadata": ""}]} for t in ("a", "b")]})
            codes = {t.name: t.partitions[0].error_code for t in r.topics}
            assert codes == {"a": 0, "b": 29}  # NONE, TOPIC_AUTHORIZATION_FAILED
            r = c.request(9, 8, {"groups": [{"group_id": "g", "topics": None}],
                                 "require_stable": False})
            # all-topics fetch: "a" (readable, so describable) only
            assert [(t.name, t.partitions[0].committed_offset)
                    for t in r.groups[0].topics] == [("a", 5)]
    finally:
        server.stop()
