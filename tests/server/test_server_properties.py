"""``kafkalog serve --server-properties``: a broker's server.properties (the shape of Kafka's own
``config/kraft/server.properties``, and a SASL_SSL one with per-listener settings) read as Kafka
reads it, then served to librdkafka."""

from __future__ import annotations

import io
import signal
import socket
import subprocess
import sys
import textwrap
import time

import pytest

from kafkalog.errors import ConfigError
from kafkalog.server.server_properties import parse

from .test_lifecycle import free_port

confluent_kafka = pytest.importorskip("confluent_kafka")

# Kafka's config/kraft/server.properties (trunk, 2024), comments left out
KRAFT = textwrap.dedent("""\
    process.roles=broker,controller
    node.id=1
    controller.quorum.voters=1@localhost:9093
    listeners=PLAINTEXT://:9092,CONTROLLER://:9093
    inter.broker.listener.name=PLAINTEXT
    advertised.listeners=PLAINTEXT://localhost:9092,CONTROLLER://localhost:9093
    controller.listener.names=CONTROLLER
    listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,\\
    SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL
    num.network.threads=3
    num.io.threads=8
    socket.request.max.bytes=104857600
    log.dirs=/tmp/kraft-combined-logs
    num.partitions=1
    offsets.topic.replication.factor=1
    log.retention.hours=168
    log.segment.bytes=1073741824
    log.retention.check.interval.ms=300000
    """)


def test_kafkas_kraft_example():
    p = parse(io.StringIO(KRAFT), "server.properties")
    assert (p.log_dir, p.listener, p.host, p.port) == ("/tmp/kraft-combined-logs", "PLAINTEXT",
                                                        "0.0.0.0", 9092)
    c = p.config
    assert (c.security_protocol, c.node_id, c.advertised_host, c.advertised_port) == (
        "PLAINTEXT", 1, "localhost", 9092)
    assert c.num_partitions == 1 and c.max_request_bytes == 104857600
    assert p.log_config == {"log.retention.hours": "168", "log.segment.bytes": "1073741824"}
    assert p.ignored == ["controller.quorum.voters", "inter.broker.listener.name",
                         "log.retention.check.interval.ms", "num.io.threads",
                         "num.network.threads", "offsets.topic.replication.factor",
                         "process.roles"]


SASL_SSL = textwrap.dedent("""\
    broker.id=7
    log.dirs=/data/kafka
    listeners=INTERNAL://127.0.0.1:19092,EXTERNAL://0.0.0.0:9094
    listener.security.protocol.map=INTERNAL:PLAINTEXT,EXTERNAL:SASL_SSL
    advertised.listeners=EXTERNAL://broker.example:9094
    sasl.enabled.mechanisms=SCRAM-SHA-512
    listener.name.external.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256
    listener.name.external.ssl.keystore.location=/etc/kafka/server.pem
    listener.name.external.ssl.keystore.type=PEM
    listener.name.external.ssl.client.auth=requested
    ssl.truststore.location=/etc/kafka/ca.pem
    ssl.cipher.suites=TLS_AES_256_GCM_SHA384
    listener.name.external.plain.sasl.jaas.config=\\
      org.apache.kafka.common.security.plain.PlainLoginModule required \\
      username="admin" password="admin-secret" user_alice="alice-secret";
    connections.max.reauth.ms=600000
    """)


def test_broker_rack_is_taken():
    p = parse(io.StringIO(KRAFT + "broker.rack=eu-west-1a\n"), "server.properties")
    assert p.config.broker_rack == "eu-west-1a" and "broker.rack" not in p.ignored
    assert parse(io.StringIO(KRAFT), "server.properties").config.broker_rack is None


def test_sasl_ssl_listener_with_its_own_settings():
    p = parse(io.StringIO(SASL_SSL), "s.properties", listener="external")
    c = p.config
    assert (p.listener, p.host, p.port, c.node_id) == ("EXTERNAL", "0.0.0.0", 9094, 7)
    assert c.security_protocol == "SASL_SSL"
    assert c.sasl_enabled_mechanisms == ("PLAIN", "SCRAM-SHA-256")  # the listener's wins
    assert (c.ssl_keystore_location, c.ssl_truststore_location, c.ssl_client_auth) == (
        "/etc/kafka/server.pem", "/etc/kafka/ca.pem", "requested")
    assert dict(c.sasl_plain_users) == {"alice": "alice-secret"}
    assert c.connections_max_reauth_ms == 600000
    assert (c.advertised_host, c.advertised_port) == ("broker.example", 9094)
    assert p.ignored == ["ssl.cipher.suites"]
    assert p.extra_listeners == []  # (--listener: that one only)
    # the other listener: plaintext, the global mechanisms, nothing of EXTERNAL's
    q = parse(io.StringIO(SASL_SSL), "s.properties", listener="INTERNAL")
    assert (q.config.security_protocol, q.host, q.port) == ("PLAINTEXT", "127.0.0.1", 19092)
    assert q.config.sasl_enabled_mechanisms == ("SCRAM-SHA-512",)
    assert q.config.ssl_keystore_location is None
    # without --listener: both, INTERNAL (first in listeners) the main one
    both = parse(io.StringIO(SASL_SSL), "s.properties")
    assert (both.listener, both.config.security_protocol) == ("INTERNAL", "PLAINTEXT")
    [ext] = both.extra_listeners
    assert (ext.name, ext.host, ext.port) == ("EXTERNAL", "0.0.0.0", 9094)
    assert ext.config.security_protocol == "SASL_SSL"
    assert ext.config.sasl_enabled_mechanisms == ("PLAIN", "SCRAM-SHA-256")
    assert (ext.config.advertised_host, ext.config.advertised_port) == ("broker.example", 9094)
    assert both.ignored == ["ssl.cipher.suites"]


@pytest.mark.parametrize("text, kw, message", [
    ("listeners=CONTROLLER://:9093\ncontroller.listener.names=CONTROLLER\n", {},
     "no broker listener"),
    (SASL_SSL, {"listener": "nope"}, "no broker listener named 'nope'"),
    ("log.dirs=/a,/b\n", {}, "log.dirs names 2 directories (/a, /b)"),
    ("listeners=PLAINTEXT://:9092\nssl.keystore.type=JKS\n", {}, "PEM and PKCS12 stores"),
    ("listener.security.protocol.map=A:TLS\nlisteners=A://:1\n", {}, "NAME:PROTOCOL"),
    ("listeners=PLAINTEXT:9092\n", {}, "expected NAME://host:port"),
    ("log.segment.bytes=ten\n", {}, "log.segment.bytes: expected an integer"),
    ("num.partitions=x\n", {}, "num.partitions: expected an integer"),
])
def test_refusals_name_the_property(text, kw, message):
    with pytest.raises(ConfigError, match="f.properties") as e:
        parse(io.StringIO(text), "f.properties", **kw)
    assert message in str(e.value)


def test_serve_a_server_properties_file(tmp_path):
    port = free_port()
    root = tmp_path / "kafka-logs"
    props = tmp_path / "server.properties"
    props.write_text(textwrap.dedent(f"""\
        node.id=7
        process.roles=broker,controller
        log.dirs={root}
        listeners=SASL_PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{free_port()}
        controller.listener.names=CONTROLLER
        listener.security.protocol.map=SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT
        sasl.enabled.mechanisms=PLAIN
        listener.name.sasl_plaintext.plain.sasl.jaas.config=\\
          org.apache.kafka.common.security.plain.PlainLoginModule required \\
          user_alice="alice-secret";
        log.retention.hours=5
        num.partitions=3
        """))
    # no directory and no --port: both come from the file
    proc = subprocess.Popen([sys.executable, "-m", "kafkalog", "serve", "--server-properties",
                             str(props)], stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, \
                    proc.communicate()[1] if proc.poll() is not None else "timeout"
                time.sleep(0.1)
        conf = {"bootstrap.servers": f"127.0.0.1:{port}", "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "PLAIN", "sasl.username": "alice",
                "sasl.password": "alice-secret"}
        p = confluent_kafka.Producer(conf)
        p.produce("fromprops", b"x")
        assert p.flush(30) == 0
        md = p.list_topics("fromprops", timeout=10)
        assert list(md.brokers) == [7] and len(md.topics["fromprops"].partitions) == 3
        # the file's topic default (log.retention.hours=5) is the served topic's retention
        from confluent_kafka.admin import AdminClient, ConfigResource

        res = ConfigResource(ConfigResource.Type.TOPIC, "fromprops")
        admin = AdminClient(conf)
        configs = admin.describe_configs([res])[res].result(30)
        assert configs["retention.ms"].value == str(5 * 3600 * 1000)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "not applied by kafkalog: process.roles" in err
    assert (root / "fromprops-2").is_dir()


def test_every_broker_listener_is_served_with_its_advertised_address(tmp_path):
    """An internal and an external listener (the usual container set-up): a client is told the
    address of the listener it connected to, in Metadata and FindCoordinator."""
    from kafkalog.server import KafkaServer

    from .wire import WireClient

    p1, p2 = free_port(), free_port()
    text = textwrap.dedent(f"""\
        log.dirs={tmp_path / "logs"}
        listeners=INTERNAL://127.0.0.1:{p1},EXTERNAL://127.0.0.1:{p2}
        advertised.listeners=INTERNAL://kafka-internal:{p1},EXTERNAL://127.0.0.1:{p2}
        listener.security.protocol.map=INTERNAL:PLAINTEXT,EXTERNAL:SASL_PLAINTEXT
        listener.name.external.plain.sasl.jaas.config=\\
          org.apache.kafka.common.security.plain.PlainLoginModule required user_bob="b";
        """)
    sp = parse(io.StringIO(text), "two.properties")
    server = KafkaServer(sp.log_dir, sp.host, sp.port, config=sp.config,
                         listeners=sp.extra_listeners).start()
    md = {"topics": None, "allow_auto_topic_creation": False,
          "include_topic_authorized_operations": False}
    try:
        with WireClient(f"127.0.0.1:{p1}") as c:  # internal: told the internal name
            [b] = c.request(3, 12, md).brokers
            assert (b.host, b.port) == ("kafka-internal", p1)
            r = c.request(10, 3, {"key": "g", "key_type": 0})
            assert (r.host, r.port) == ("kafka-internal", p1)
        with WireClient(f"127.0.0.1:{p2}") as c:  # external: SASL first, then its own address
            assert c.request(17, 1, {"mechanism": "PLAIN"}).error_code == 0
            assert c.request(36, 2, {"auth_bytes": b"\x00bob\x00b"}).error_code == 0
            [b] = c.request(3, 12, md).brokers
            assert (b.host, b.port) == ("127.0.0.1", p2)
        conf = {"bootstrap.servers": f"127.0.0.1:{p2}", "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "PLAIN", "sasl.username": "bob", "sasl.password": "b"}
        prod = confluent_kafka.Producer(conf)
        prod.produce("two", b"x")
        assert prod.flush(30) == 0
    finally:
        server.stop()
