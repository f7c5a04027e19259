"""``kafkalog mirror`` over TLS and SASL against a real ``kafkalog serve`` with SSL,
SASL_PLAINTEXT and SASL_SSL listeners (the server tests' PKI and users: ``pki``, ``_server``):
the broker's certificate checked against the CA (a wrong CA, a wrong host name refused), mutual
TLS, SASL PLAIN and SCRAM-SHA-256/512, refused logins with the broker's message and nothing
written, re-authentication before the session ends, the ``--command-config`` file with ``-X``
overrides, and client properties that are refused. Each copy holds the source's batches byte for
byte."""

from __future__ import annotations

import doctest
import time
from pathlib import Path

import pytest

from kafkalog.errors import ConfigError
from kafkalog.mirror import KafkaClient, Mirror, MirrorError, mirror
from kafkalog.mirror import security as security_module
from kafkalog.mirror.client import BrokerNode
from kafkalog.mirror.security import client_security
from kafkalog.security import ScramCredentialStore

from .test_mirror import batch_bytes, engine_topic, run

trustme = pytest.importorskip("trustme", reason="trustme (dev dependency) makes the test CA")
# the server tests' PKI (a CA, a server certificate for 127.0.0.1/localhost, a client
# certificate), their server with a protocol and PLAIN users, PKCS12 stores of the PKI
from tests.server import test_security  # noqa: E402
from tests.server.test_security import _pkcs12_stores, _server  # noqa: E402

pki = test_security.pki  # (the module-scoped fixture, shared)

PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
              'username="{user}" password="{password}";')
SCRAM_JAAS = ('org.apache.kafka.common.security.scram.ScramLoginModule required '
              'username="{user}" password="{password}";')
SCRAM_FAILED = ("Authentication failed during authentication due to invalid credentials with "
                "SASL mechanism {mechanism}")


@pytest.fixture(scope="module")
def other_ca(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Another CA (its certificate: a wrong truststore for ``pki``'s server) and a server
    keystore it signed for a host name that is not 127.0.0.1."""
    d = tmp_path_factory.mktemp("other-pki")
    ca = trustme.CA()
    ca.cert_pem.write_to_path(str(d / "ca.pem"))
    ca.issue_cert("kafka.other.example").private_key_and_cert_chain_pem.write_to_path(
        str(d / "server.pem"))
    return {"ca": str(d / "ca.pem"), "server": str(d / "server.pem")}


def source(tmp_path: Path, scram: dict[str, str] | None = None) -> Path:
    """The source log dir (``_server``'s): two topics written by the engine (every codec),
    and SCRAM credentials ``mechanism -> password`` for alice."""
    root = tmp_path / "logs"
    engine_topic(root, "orders", [(0, 1 + i % 3) for i in range(12)])
    engine_topic(root, "payments", [(0, 2)] * 5)
    for mechanism, password in (scram or {}).items():
        ScramCredentialStore(root).set_password("alice", mechanism, password)
    return root


def assert_copied(src: Path, dst: Path, topics: tuple[str, ...] = ("orders", "payments")) -> None:
    for t in topics:
        assert batch_bytes(dst / f"{t}-0") == batch_bytes(src / f"{t}-0") != []


def written(dst: Path) -> list[str]:
    return sorted(p.name for p in dst.glob("*-*")) if dst.exists() else []


# -- TLS -----------------------------------------------------------------------------------------

def test_ssl_checks_the_broker_certificate_against_the_ca(tmp_path, pki, other_ca):
    src, dst = source(tmp_path), tmp_path / "dst"
    server = _server(tmp_path, "SSL", pki)
    try:
        conf = {"security.protocol": "SSL", "ssl.truststore.location": pki["ca"],
                "ssl.truststore.type": "PEM"}
        result = mirror(server.address, dst, client_config=conf)
        assert result.ok and [r.batches for r in result.partitions] == [12, 5]
        assert_copied(src, dst)
        # a host name of the certificate (localhost) checks too; a PKCS12 truststore reads
        stores = _pkcs12_stores(tmp_path, pki)
        p12 = {"security.protocol": "ssl", "ssl.truststore.location": stores["truststore"],
               "ssl.truststore.type": "PKCS12", "ssl.truststore.password": "ts-secret"}
        again = mirror(f"localhost:{server.port}", tmp_path / "dst2", client_config=p12)
        assert again.ok
        assert_copied(src, tmp_path / "dst2")

        # a CA that did not sign the broker's certificate: refused, naming the broker
        wrong = {**conf, "ssl.truststore.location": other_ca["ca"]}
        with pytest.raises(MirrorError) as e:
            mirror(server.address, tmp_path / "dst3", client_config=wrong)
        assert f"{server.address}: TLS handshake failed: the broker's certificate is not " \
               "trusted: unable to get local issuer certificate" in str(e.value)
        assert written(tmp_path / "dst3") == []
        # no truststore: the system's CAs, which do not know the test CA either
        with pytest.raises(MirrorError, match="certificate is not trusted"):
            mirror(server.address, tmp_path / "dst3", client_config={"security.protocol": "SSL"})
        # PLAINTEXT on the TLS listener: the protocol is named
        with pytest.raises(MirrorError, match=r"security.protocol=PLAINTEXT: is it the "
                                              r"listener's protocol\?"):
            mirror(server.address, tmp_path / "dst3", timeout=5)
        assert written(tmp_path / "dst3") == []
    finally:
        server.stop()


def test_ssl_host_name_verification_on_by_default(tmp_path, other_ca):
    src, dst = source(tmp_path), tmp_path / "dst"
    server = _server(tmp_path, "SSL", ssl_keystore_location=other_ca["server"])
    try:
        conf = {"security.protocol": "SSL", "ssl.truststore.location": other_ca["ca"]}
        with pytest.raises(MirrorError, match="IP address mismatch"):
            mirror(server.address, dst, client_config=conf)
        assert written(dst) == []
        # Kafka's empty algorithm: the certificate is still checked against the CA, not the name
        conf["ssl.endpoint.identification.algorithm"] = ""
        assert mirror(server.address, dst, client_config=conf).ok
        assert_copied(src, dst)
    finally:
        server.stop()


def test_mutual_tls(tmp_path, pki):
    src, dst = source(tmp_path), tmp_path / "dst"
    keystore = tmp_path / "client-keystore.pem"  # the private key and the chain in one file
    keystore.write_bytes(Path(pki["client_key"]).read_bytes()
                         + Path(pki["client_cert"]).read_bytes())
    server = _server(tmp_path, "SSL", pki, ssl_truststore_location=pki["ca"],
                     ssl_client_auth="required")
    try:
        conf = {"security.protocol": "SSL", "ssl.truststore.location": pki["ca"]}
        # (TLS 1.3: the broker checks the certificate after the handshake, and closes)
        with pytest.raises(MirrorError, match=f"{server.address}: .*does the listener require "
                                              f"a client certificate\\? ssl.keystore.location"):
            mirror(server.address, dst, client_config=conf)
        assert written(dst) == []
        conf.update({"ssl.keystore.location": str(keystore), "ssl.keystore.type": "PEM"})
        result = mirror(server.address, dst, client_config=conf)
        assert result.ok
        assert_copied(src, dst)
    finally:
        server.stop()


# -- SASL ----------------------------------------------------------------------------------------

def test_sasl_plaintext_plain(tmp_path):
    src, dst = source(tmp_path), tmp_path / "dst"
    server = _server(tmp_path, "SASL_PLAINTEXT")
    try:
        conf = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
                "sasl.jaas.config": PLAIN_JAAS.format(user="bob", password="bob-secret")}
        assert Mirror(server.address, dst, topics=["orders"], client_config=conf).run().ok
        assert_copied(src, dst, ("orders",))
        # a wrong password: PLAIN's own message from SaslAuthenticate, the broker named
        bad = {**conf, "sasl.jaas.config": PLAIN_JAAS.format(user="bob", password="nope")}
        with pytest.raises(MirrorError) as e:
            mirror(server.address, tmp_path / "dst2", client_config=bad)
        assert str(e.value) == (f"{server.address}: PLAIN authentication as 'bob' failed: "
                                "Authentication failed: Invalid username or password")
        assert written(tmp_path / "dst2") == []
        # a mechanism the listener does not enable, and SASL on a plaintext client
        with pytest.raises(MirrorError, match="PLAINTEXT: is it the listener's protocol"):
            mirror(server.address, tmp_path / "dst2", timeout=5)
    finally:
        server.stop()


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_sasl_ssl_scram(tmp_path, pki, mechanism):
    src, dst = source(tmp_path, {mechanism: "alice-secret"}), tmp_path / "dst"
    server = _server(tmp_path, "SASL_SSL", pki)
    try:
        conf = {"security.protocol": "SASL_SSL", "sasl.mechanism": mechanism,
                "sasl.jaas.config": SCRAM_JAAS.format(user="alice", password="alice-secret"),
                "ssl.truststore.location": pki["ca"], "ssl.truststore.type": "PEM"}
        m = Mirror(server.address, dst, client_config=conf)
        result = m.run()
        assert result.ok and [r.batches for r in result.partitions] == [12, 5]
        assert_copied(src, dst)
        # a leader's connection is opened with the same settings (with one broker the run
        # reuses the bootstrap connection: here the leader is asked for by another address)
        m = Mirror(server.address, tmp_path / "unused", client_config=conf)
        m._brokers = {1: BrokerNode(1, "localhost", server.port)}
        leader = m._leader_client(1)
        try:
            assert leader.security is m.security and leader.address != server.address
            assert leader.metadata(["orders"])[1]["orders"].partitions
        finally:
            leader.close()
        bad = {**conf, "sasl.jaas.config": SCRAM_JAAS.format(user="alice", password="nope")}
        m = Mirror(server.address, tmp_path / "unused", client_config=bad)
        m._brokers = {1: BrokerNode(1, "localhost", server.port)}
        with pytest.raises(MirrorError) as e:
            m._leader_client(1)
        assert str(e.value) == (f"localhost:{server.port}: {mechanism} authentication as "
                                f"'alice' failed: {SCRAM_FAILED.format(mechanism=mechanism)}")
    finally:
        server.stop()


def test_command_config_file_and_overrides_through_the_cli(tmp_path, pki):
    src, dst = source(tmp_path, {"SCRAM-SHA-512": "alice-secret"}), tmp_path / "dst"
    server = _server(tmp_path, "SASL_SSL", pki)
    props = tmp_path / "client.properties"
    # Kafka's tools' file: escapes, a continuation line, a wrong password (overridden below)
    props.write_text(
        "# client settings\n"
        "security.protocol=SASL_SSL\n"
        "sasl.mechanism=SCRAM-SHA-512\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n"
        '    username="alice" password="wrong";\n'
        f"ssl.truststore.location={pki['ca']}\n"
        "ssl.truststore.type=PEM\n"
        "ssl.endpoint.identification.algorithm=https\n"
        "request.timeout.ms=30000\n")
    try:
        # the file's password is wrong: exit 1, the broker's message, nothing written
        status, out, err = run("--bootstrap-server", server.address, str(dst),
                               "--command-config", str(props))
        assert status == 1 and out == ""
        assert (f"kafkalog mirror: error: {server.address}: SCRAM-SHA-512 authentication as "
                f"'alice' failed: {SCRAM_FAILED.format(mechanism='SCRAM-SHA-512')}") in err
        assert written(dst) == []
        # -X overrides the file (and names what it does not apply)
        status, out, err = run(
            "--bootstrap-server", server.address, str(dst), "--command-config", str(props),
            "-X", "sasl.jaas.config=" + SCRAM_JAAS.format(user="alice", password="alice-secret"),
            "--command-property", "client.id=backup")
        assert status == 0, err
        assert "client properties not applied by kafkalog mirror: request.timeout.ms" in err
        assert "Mirrored 2 of 2 partitions" in out
        assert_copied(src, dst)
        # only -X, and a wrong mechanism for the user's credential
        status, _, err = run(
            "--bootstrap-server", server.address, str(tmp_path / "dst2"),
            "-X", "security.protocol=SASL_SSL", "-X", "sasl.mechanism=SCRAM-SHA-256",
            "-X", "sasl.jaas.config=" + SCRAM_JAAS.format(user="alice", password="alice-secret"),
            "-X", f"ssl.truststore.location={pki['ca']}")
        assert status == 1
        assert SCRAM_FAILED.format(mechanism="SCRAM-SHA-256") in err
        assert written(tmp_path / "dst2") == []
    finally:
        server.stop()


def test_session_is_renewed_before_it_ends(tmp_path):
    """KIP-368: the broker gives a session lifetime (connections.max.reauth.ms); the client
    logs in again on the same connection before it ends, and the connection lives on."""
    source(tmp_path)
    server = _server(tmp_path, "SASL_PLAINTEXT", connections_max_reauth_ms=1500)
    try:
        sec = client_security({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
                               "sasl.jaas.config": PLAIN_JAAS.format(user="admin",
                                                                     password="admin-secret")})
        with KafkaClient(server.address, security=sec) as c:
            assert c.metadata(["orders"])[1]["orders"].partitions
            time.sleep(1.35)  # past 85% of the session: the next request logs in first
            assert c.metadata(["orders"])[1]["orders"].partitions
            time.sleep(1.0)  # 2.35 s after the first login: alive on the renewed session
            assert c.metadata(["orders"])[1]["orders"].partitions
    finally:
        server.stop()


# -- what is refused -----------------------------------------------------------------------------

@pytest.mark.parametrize("conf, message", [
    ({"security.protocol": "SASL"}, "security.protocol: expected one of PLAINTEXT, SSL"),
    ({"security.protocol": "SASL_PLAINTEXT"},
     "sasl.mechanism: GSSAPI (Kafka's default sasl.mechanism) is not supported"),
    ({"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER"},
     "sasl.mechanism: OAUTHBEARER is not supported by kafkalog mirror; use one of PLAIN, "
     "SCRAM-SHA-256, SCRAM-SHA-512"),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN"},
     "SASL needs sasl.jaas.config"),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
      "sasl.jaas.config": "com.sun.security.auth.module.Krb5LoginModule required;"},
     "login module com.sun.security.auth.module.Krb5LoginModule (GSSAPI is not supported)"),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
      "sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required '
                          'username="a";'},
     "the PlainLoginModule entry has no password option"),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
      "sasl.jaas.config": PLAIN_JAAS.format(user="a", password="b") * 2},
     "expected one login module, found 2"),
    ({"security.protocol": "SSL", "ssl.keystore.type": "JKS"},
     "ssl.keystore.type: PEM and PKCS12 stores are read, not 'JKS' (convert a JKS store: "
     "keytool -importkeystore"),
    ({"security.protocol": "SSL", "ssl.endpoint.identification.algorithm": "ldaps"},
     "ssl.endpoint.identification.algorithm: expected https"),
    ({"security.protocol": "SSL", "ssl.truststore.location": "/nonexistent/ca.pem"},
     "cannot read the truststore"),
])
def test_client_properties_refused(tmp_path, conf, message):
    with pytest.raises(ConfigError) as e:
        Mirror("127.0.0.1:9", tmp_path / "dst", client_config=conf)
    assert message in str(e.value)
    # the command: a usage error (exit 2), before any connection
    argv = ["--bootstrap-server", "127.0.0.1:9", str(tmp_path / "dst")]
    for k, v in conf.items():
        argv += ["-X", f"{k}={v}"]
    status, _, err = run(*argv)
    assert status == 2 and message in err
    assert written(tmp_path / "dst") == []


def test_command_config_usage_errors(tmp_path):
    status, _, err = run("--bootstrap-server", "127.0.0.1:9", str(tmp_path / "d"),
                         "--command-config", str(tmp_path / "missing.properties"))
    assert status == 2 and "cannot read --command-config" in err
    status, _, err = run("--bootstrap-server", "127.0.0.1:9", str(tmp_path / "d"),
                         "-X", "security.protocol")
    assert status == 2 and "-X takes KEY=VALUE" in err
    # SASL and TLS settings are not read on a PLAINTEXT connection (as Kafka's clients)
    assert client_security({"sasl.mechanism": "GSSAPI", "ssl.keystore.type": "JKS"}).protocol \
        == "PLAINTEXT"


def test_module_doctests():
    assert doctest.testmod(security_module).failed == 0

