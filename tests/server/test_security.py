"""TLS and SASL listeners against real clients: librdkafka (confluent-kafka, kcat), kafka-python
and aiokafka authenticate with PLAIN and SCRAM-SHA-256/512, over plaintext and TLS, then produce
and consume; wrong credentials are refused with Kafka's messages; SCRAM users are managed with
the admin API (AlterUserScramCredentials) and take effect at the next login. Raw requests cover
what clients never send (a v0 handshake with bare tokens, a request before the handshake, an
unsupported mechanism).

The certificates come from a throwaway CA (``trustme``): a server certificate for 127.0.0.1 and
a client certificate for mutual TLS.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import ssl
import struct
import subprocess
import time
from pathlib import Path

import pytest

from kafkalog.security import ScramCredentialStore

from .conftest import TEST_CONFIG, format_log_dir, start_server
from .wire import WireClient

trustme = pytest.importorskip("trustme", reason="trustme (dev dependency) makes the test CA")
confluent_kafka = pytest.importorskip("confluent_kafka")

PLAIN_USERS = {"bob": "bob-secret", "admin": "admin-secret"}


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A CA, a server certificate for 127.0.0.1/localhost and a client certificate (PEM)."""
    d = tmp_path_factory.mktemp("pki")
    ca = trustme.CA()
    server = ca.issue_cert("127.0.0.1", "localhost")
    client = ca.issue_cert("client.example")
    paths = {"ca": d / "ca.pem", "server": d / "server.pem", "client_cert": d / "client.pem",
             "client_key": d / "client.key"}
    ca.cert_pem.write_to_path(str(paths["ca"]))
    server.private_key_and_cert_chain_pem.write_to_path(str(paths["server"]))
    for i, blob in enumerate(client.cert_chain_pems):
        blob.write_to_path(str(paths["client_cert"]), append=i > 0)
    client.private_key_pem.write_to_path(str(paths["client_key"]))
    return {k: str(v) for k, v in paths.items()}


def _server(tmp_path: Path, protocol: str, pki: dict[str, str] | None = None, **kw: object):
    import dataclasses

    fields: dict = {"security_protocol": protocol, "sasl_plain_users": PLAIN_USERS,
                    "connections_failed_authentication_delay_ms": 10, **kw}
    if pki is not None:
        fields.setdefault("ssl_keystore_location", pki["server"])
    cfg = dataclasses.replace(TEST_CONFIG, **fields)
    return start_server(tmp_path / "logs", config=cfg)


def _rdkafka_conf(server, protocol: str, mechanism: str | None = None, user: str = "",
                  password: str = "", pki: dict[str, str] | None = None) -> dict:
    conf = {"bootstrap.servers": server.address, "security.protocol": protocol}
    if mechanism:
        conf.update({"sasl.mechanism": mechanism, "sasl.username": user,
                     "sasl.password": password})
    if pki is not None:
        conf["ssl.ca.location"] = pki["ca"]
    return conf


def _rdkafka_roundtrip(conf: dict, topic: str, n: int = 20) -> list[bytes]:
    """Produce ``n`` records through ``conf`` and consume them back; the values read."""
    errors: list = []
    p = confluent_kafka.Producer({**conf, "error_cb": errors.append,
                                  "message.timeout.ms": 20000})
    for i in range(n):
        p.produce(topic, value=b"v%d" % i, key=b"k%d" % i)
    assert p.flush(30) == 0, errors
    c = confluent_kafka.Consumer({**conf, "group.id": f"g-{topic}",
                                  "auto.offset.reset": "earliest"})
    c.subscribe([topic])
    got: list[bytes] = []
    deadline = time.monotonic() + 30
    while len(got) < n and time.monotonic() < deadline:
        m = c.poll(0.5)
        if m is not None and m.error() is None:
            got.append(m.value())
    c.close()
    return got


def _rdkafka_auth_error(conf: dict) -> str:
    """The authentication error librdkafka reports for ``conf`` (it must get one)."""
    errors: list = []
    p = confluent_kafka.Producer({**conf, "error_cb": errors.append,
                                  "reconnect.backoff.ms": 1000})
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        p.poll(0.2)
        auth = [e for e in errors if e.code() == confluent_kafka.KafkaError._AUTHENTICATION]
        if auth:
            return auth[0].str()
    raise AssertionError(f"no authentication error, got {errors}")


# -- SASL over plaintext: librdkafka ------------------------------------------------------------

@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_rdkafka_sasl_plaintext(tmp_path, mechanism):
    root = tmp_path / "logs"
    root.mkdir()
    ScramCredentialStore(root).set_password("alice", mechanism, "alice-secret", 4096) \
        if mechanism != "PLAIN" else None
    server = _server(tmp_path, "SASL_PLAINTEXT")
    try:
        user, pw = ("bob", "bob-secret") if mechanism == "PLAIN" else ("alice", "alice-secret")
        got = _rdkafka_roundtrip(_rdkafka_conf(server, "SASL_PLAINTEXT", mechanism, user, pw),
                                 "t-" + mechanism.lower())
        assert got == [b"v%d" % i for i in range(20)]
    finally:
        server.stop()


def test_users_bootstrapped_by_storage_format_log_in(tmp_path):
    """``kafkalog storage format --add-scram`` (kafka-storage.sh) puts SCRAM users in
    bootstrap.checkpoint; served for the first time, the directory has them, as a Kafka
    controller replays them: librdkafka logs in with a password-derived SCRAM-SHA-256 user and
    a SCRAM-SHA-512 one given as salt + salted password."""
    import base64
    import hashlib

    root = tmp_path / "logs"
    salt = b"kafkalog-salt"
    salted = hashlib.pbkdf2_hmac("sha512", b"bob-secret", salt, 8192)
    bob = (f'SCRAM-SHA-512=[name=bob,salt="{base64.b64encode(salt).decode()}",'
           f'saltedpassword="{base64.b64encode(salted).decode()}",iterations=8192]')
    format_log_dir(root, "--release-version", "3.9", "--add-scram",
                   "SCRAM-SHA-256=[name=alice,password=alice-secret]", "--add-scram", bob)
    server = _server(tmp_path, "SASL_PLAINTEXT")
    try:
        for mech, user, pw in (("SCRAM-SHA-256", "alice", "alice-secret"),
                               ("SCRAM-SHA-512", "bob", "bob-secret")):
            got = _rdkafka_roundtrip(_rdkafka_conf(server, "SASL_PLAINTEXT", mech, user, pw),
                                     "boot-" + user)
            assert got == [b"v%d" % i for i in range(20)]
        conf = _rdkafka_conf(server, "SASL_PLAINTEXT", "SCRAM-SHA-256", "alice", "wrong")
        assert "invalid credentials" in _rdkafka_auth_error(conf)
    finally:
        server.stop()
    # replayed once: the store now exists and is what later starts read
    store = ScramCredentialStore(root)
    assert store.users() == ["alice", "bob"]
    assert store.get("bob", "SCRAM-SHA-512").iterations == 8192


def test_wrong_credentials_are_refused_with_kafkas_messages(tmp_path):
    root = tmp_path / "logs"
    root.mkdir()
    ScramCredentialStore(root).set_password("alice", "SCRAM-SHA-256", "alice-secret")
    server = _server(tmp_path, "SASL_PLAINTEXT")
    try:
        conf = _rdkafka_conf(server, "SASL_PLAINTEXT", "PLAIN", "bob", "wrong")
        assert "Authentication failed: Invalid username or password" in _rdkafka_auth_error(conf)
        # SCRAM hides whether the user exists (SaslServerAuthenticator's generic message)
        generic = ("Authentication failed during authentication due to invalid credentials with "
                   "SASL mechanism SCRAM-SHA-256")
        for user, pw in (("alice", "wrong"), ("nobody", "alice-secret")):
            conf = _rdkafka_conf(server, "SASL_PLAINTEXT", "SCRAM-SHA-256", user, pw)
            assert generic in _rdkafka_auth_error(conf)
        # a credential for the other SCRAM mechanism does not log in with this one
        conf = _rdkafka_conf(server, "SASL_PLAINTEXT", "SCRAM-SHA-512", "alice", "alice-secret")
        assert "SCRAM-SHA-512" in _rdkafka_auth_error(conf)
        # nothing was written by the refused clients
        assert not (root / "t-0").exists()
    finally:
        server.stop()


def test_scram_users_managed_with_the_admin_api(tmp_path):
    """kafka-configs.sh --alter --add-config 'SCRAM-SHA-512=[...]' through librdkafka's admin
    client (the client salts the password), then a login with the new user; deletion stops the
    next login; the file keeps keys, never the password."""
    from confluent_kafka.admin import (
        AdminClient,
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialDeletion,
        UserScramCredentialUpsertion,
    )

    server = _server(tmp_path, "SASL_PLAINTEXT")
    try:
        admin = AdminClient(_rdkafka_conf(server, "SASL_PLAINTEXT", "PLAIN", "admin",
                                          "admin-secret"))
        info = ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192)
        futs = admin.alter_user_scram_credentials([
            UserScramCredentialUpsertion("carol", info, b"carol-secret", b"salt-of-carol")])
        futs["carol"].result(30)
        described = admin.describe_user_scram_credentials(["carol"])["carol"].result(30)
        infos = described.scram_credential_infos
        assert [(i.mechanism, i.iterations) for i in infos] == \
            [(ScramMechanism.SCRAM_SHA_512, 8192)]
        # an unknown user: RESOURCE_NOT_FOUND with ScramImage's text
        with pytest.raises(confluent_kafka.KafkaException) as e:
            admin.describe_user_scram_credentials(["dave"])["dave"].result(30)
        assert "Attempt to describe a user credential that does not exist: dave" in str(e.value)
        # too few iterations: UNACCEPTABLE_CREDENTIAL
        futs = admin.alter_user_scram_credentials([UserScramCredentialUpsertion(
            "erin", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 1000), b"pw")])
        with pytest.raises(confluent_kafka.KafkaException) as e:
            futs["erin"].result(30)
        assert "Too few iterations" in str(e.value)

        conf = _rdkafka_conf(server, "SASL_PLAINTEXT", "SCRAM-SHA-512", "carol", "carol-secret")
        assert _rdkafka_roundtrip(conf, "carols", 5) == [b"v%d" % i for i in range(5)]
        text = (tmp_path / "logs" / ".kafkalog-scram-credentials.json").read_text()
        assert "carol" in text and "carol-secret" not in text

        futs = admin.alter_user_scram_credentials([
            UserScramCredentialDeletion("carol", ScramMechanism.SCRAM_SHA_512)])
        futs["carol"].result(30)
        assert "SCRAM-SHA-512" in _rdkafka_auth_error(conf)
    finally:
        server.stop()
    # the credentials survive a restart
    server = _server(tmp_path, "SASL_PLAINTEXT")
    try:
        store = ScramCredentialStore(tmp_path / "logs")
        assert store.get("carol", "SCRAM-SHA-512") is None
    finally:
        server.stop()


# -- TLS ----------------------------------------------------------------------------------------

def test_rdkafka_ssl(tmp_path, pki):
    server = _server(tmp_path, "SSL", pki)
    try:
        got = _rdkafka_roundtrip(_rdkafka_conf(server, "SSL", pki=pki), "tls")
        assert got == [b"v%d" % i for i in range(20)]
        # a plaintext client on the TLS port gets nowhere (and breaks nothing)
        errors: list = []
        p = confluent_kafka.Producer({"bootstrap.servers": server.address,
                                      "error_cb": errors.append, "message.timeout.ms": 3000})
        p.produce("tls", b"x")
        assert p.flush(10) == 0
        assert errors
    finally:
        server.stop()


def test_rdkafka_sasl_ssl_scram_and_mutual_tls(tmp_path, pki):
    root = tmp_path / "logs"
    root.mkdir()
    ScramCredentialStore(root).set_password("alice", "SCRAM-SHA-256", "alice-secret")
    server = _server(tmp_path, "SASL_SSL", pki, ssl_truststore_location=pki["ca"],
                     ssl_client_auth="required")
    try:
        conf = {**_rdkafka_conf(server, "SASL_SSL", "SCRAM-SHA-256", "alice", "alice-secret",
                                pki),
                "ssl.certificate.location": pki["client_cert"],
                "ssl.key.location": pki["client_key"]}
        assert _rdkafka_roundtrip(conf, "mtls") == [b"v%d" % i for i in range(20)]
        # without a client certificate the handshake fails
        bare = _rdkafka_conf(server, "SASL_SSL", "SCRAM-SHA-256", "alice", "alice-secret", pki)
        errors: list = []
        p = confluent_kafka.Producer({**bare, "error_cb": errors.append,
                                      "message.timeout.ms": 3000})
        p.produce("mtls", b"x")
        assert p.flush(10) == 0
        assert errors and all(e.code() != confluent_kafka.KafkaError.NO_ERROR for e in errors)
    finally:
        server.stop()


# -- other peers --------------------------------------------------------------------------------

def test_kafka_python_sasl_scram_and_plain_over_tls(tmp_path, pki):
    kafka = pytest.importorskip("kafka")
    root = tmp_path / "logs"
    root.mkdir()
    ScramCredentialStore(root).set_password("alice", "SCRAM-SHA-512", "alice-secret")
    server = _server(tmp_path, "SASL_SSL", pki)
    try:
        for mech, user, pw in (("SCRAM-SHA-512", "alice", "alice-secret"),
                               ("PLAIN", "bob", "bob-secret")):
            common = {"bootstrap_servers": server.address, "security_protocol": "SASL_SSL",
                      "ssl_cafile": pki["ca"], "sasl_mechanism": mech,
                      "sasl_plain_username": user, "sasl_plain_password": pw}
            topic = "kp-" + mech.lower()
            prod = kafka.KafkaProducer(**common)
            for i in range(10):
                prod.send(topic, key=b"k%d" % i, value=b"v%d" % i)
            prod.flush(30)
            prod.close()
            cons = kafka.KafkaConsumer(topic, auto_offset_reset="earliest",
                                       consumer_timeout_ms=5000, **common)
            assert [m.value for m in cons] == [b"v%d" % i for i in range(10)]
            cons.close()
    finally:
        server.stop()


def test_aiokafka_sasl_ssl_scram(tmp_path, pki):
    aiokafka = pytest.importorskip("aiokafka")
    from aiokafka.helpers import create_ssl_context

    root = tmp_path / "logs"
    root.mkdir()
    ScramCredentialStore(root).set_password("alice", "SCRAM-SHA-256", "alice-secret", 8192)
    server = _server(tmp_path, "SASL_SSL", pki)

    async def run() -> list[bytes]:
        common = {"bootstrap_servers": server.address, "security_protocol": "SASL_SSL",
                  "ssl_context": create_ssl_context(cafile=pki["ca"]),
                  "sasl_mechanism": "SCRAM-SHA-256", "sasl_plain_username": "alice",
                  "sasl_plain_password": "alice-secret"}
        prod = aiokafka.AIOKafkaProducer(**common)
        await prod.start()
        try:
            for i in range(10):
                await prod.send_and_wait("aio", b"v%d" % i)
        finally:
            await prod.stop()
        cons = aiokafka.AIOKafkaConsumer("aio", auto_offset_reset="earliest", **common)
        await cons.start()
        try:
            got = []
            while len(got) < 10:
                batch = await cons.getmany(timeout_ms=5000)
                if not batch:
                    break
                got.extend(m.value for ms in batch.values() for m in ms)
            return got
        finally:
            await cons.stop()

    try:
        assert asyncio.run(run()) == [b"v%d" % i for i in range(10)]
    finally:
        server.stop()


KCAT = shutil.which("kcat") or shutil.which("kafkacat")


@pytest.mark.skipif(KCAT is None, reason="kcat is not installed (Debian package kcat; CI "
                    "installs it)")
def test_kcat_sasl_ssl_plain(tmp_path, pki):
    server = _server(tmp_path, "SASL_SSL", pki)
    try:
        conf = ["-X", "security.protocol=SASL_SSL", "-X", "sasl.mechanisms=PLAIN",
                "-X", "sasl.username=bob", "-X", "sasl.password=bob-secret",
                "-X", f"ssl.ca.location={pki['ca']}"]
        subprocess.run([KCAT, "-b", server.address, *conf, "-P", "-t", "kc", "-K", ":"],
                       input="a:1\nb:2\n", text=True, check=True, timeout=60)
        out = subprocess.run([KCAT, "-b", server.address, *conf, "-C", "-t", "kc", "-e",
                              "-f", "%k=%s\n"], capture_output=True, text=True, check=True,
                             timeout=60).stdout
        assert out.splitlines() == ["a=1", "b=2"]
        bad = [c.replace("bob-secret", "nope") for c in conf]
        r = subprocess.run([KCAT, "-b", server.address, *bad, "-L", "-m", "5"],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode != 0
        assert "Invalid username or password" in r.stderr
    finally:
        server.stop()


# -- raw requests -------------------------------------------------------------------------------

def _closed(client: WireClient) -> bool:
    client.sock.settimeout(5)
    try:
        return client.sock.recv(1) == b""
    except (TimeoutError, ConnectionResetError):
        return False


def test_v0_handshake_takes_bare_tokens(tmp_path):
    """Clients before KIP-152 send the mechanism's tokens without SaslAuthenticate headers."""
    server = _server(tmp_path, "SASL_PLAINTEXT")
    try:
        with WireClient(server.address) as c:
            r = c.request(17, 0, {"mechanism": "PLAIN"})
            assert r.error_code == 0 and "PLAIN" in r.mechanisms
            token = b"\x00bob\x00bob-secret"
            c.send_raw(struct.pack(">i", len(token)) + token)
            assert c.read_frame() == b""  # PLAIN's empty answer, size-prefixed
            md = c.request(3, 12, {"topics": None, "allow_auto_topic_creation": False,
                                   "include_topic_authorized_operations": False})
            assert [b.node_id for b in md.brokers] == [1]
    finally:
        server.stop()


def test_requests_before_authentication_close_the_connection(tmp_path):
    server = _server(tmp_path, "SASL_PLAINTEXT")
    try:
        with WireClient(server.address) as c:
            c.send_raw(c.encode(3, 12, {"topics": None, "allow_auto_topic_creation": False,
                                        "include_topic_authorized_operations": False}))
            assert _closed(c)
        with WireClient(server.address) as c:  # ApiVersions is answered, then the handshake
            r = c.request(18, 3, {"client_software_name": "t", "client_software_version": "1"})
            assert r.error_code == 0 and {17, 36} <= {k.api_key for k in r.api_keys}
            r = c.request(17, 1, {"mechanism": "GSSAPI"})
            assert r.error_code == 33  # UNSUPPORTED_SASL_MECHANISM, with the enabled ones
            assert list(r.mechanisms) == ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
            assert _closed(c)
        with WireClient(server.address) as c:  # SaslAuthenticate with the wrong password
            assert c.request(17, 1, {"mechanism": "PLAIN"}).error_code == 0
            r = c.request(36, 2, {"auth_bytes": b"\x00bob\x00nope"})
            assert r.error_code == 58
            assert r.error_message == "Authentication failed: Invalid username or password"
            assert _closed(c)
        with WireClient(server.address) as c:  # after success: normal requests, and a second
            assert c.request(17, 1, {"mechanism": "PLAIN"}).error_code == 0  # authenticate
            r = c.request(36, 2, {"auth_bytes": b"\x00bob\x00bob-secret"})
            assert r.error_code == 0
            r = c.request(36, 2, {"auth_bytes": b"\x00bob\x00bob-secret"})
            assert r.error_code == 34  # ILLEGAL_SASL_STATE (KafkaApis)
            assert r.error_message == ("SaslAuthenticate request received after successful "
                                       "authentication")
    finally:
        server.stop()


def test_unauthenticated_frames_are_bounded(tmp_path):
    """sasl.server.max.receive.size (512 KiB): a larger frame before authentication closes the
    connection at its size prefix; after authentication the usual limit applies."""
    server = _server(tmp_path, "SASL_PLAINTEXT")
    try:
        with WireClient(server.address) as c:
            c.send_raw(struct.pack(">i", 524289))
            assert _closed(c)
        with WireClient(server.address) as c:
            assert _login(c, "bob", "bob-secret").error_code == 0
            big = {"topics": [{"name": "x" * 600_000}], "allow_auto_topic_creation": False,
                   "include_topic_authorized_operations": False}
            r = c.request(3, 12, big)  # 600 KB: answered (the topic name is just invalid)
            assert [t.error_code for t in r.topics] == [17]  # INVALID_TOPIC_EXCEPTION
    finally:
        server.stop()


def test_plaintext_listener_answers_sasl_requests_illegal_state(tmp_path):
    server = start_server(tmp_path / "logs")
    try:
        with WireClient(server.address) as c:
            assert c.request(17, 1, {"mechanism": "PLAIN"}).error_code == 34
            md = c.request(3, 12, {"topics": None, "allow_auto_topic_creation": False,
                                   "include_topic_authorized_operations": False})
            assert md.brokers
    finally:
        server.stop()


def test_tls_listener_refuses_a_plaintext_request(tmp_path, pki):
    server = _server(tmp_path, "SSL", pki)
    try:
        with WireClient(server.address) as c:
            c.send_raw(c.encode(18, 0, {}))
            assert c.read_frame() == b""  # not TLS: no Kafka answer
        ctx = ssl.create_default_context(cafile=pki["ca"])
        host, port = server.address.rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=10) as raw, \
                ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            c = WireClient.__new__(WireClient)
            c.sock, c.correlation_id = tls, 0
            r = c.request(18, 3, {"client_software_name": "t", "client_software_version": "1"})
            assert r.error_code == 0
    finally:
        server.stop()


def test_listener_settings_are_checked(tmp_path, pki):
    import dataclasses

    from kafkalog.errors import ConfigError
    from kafkalog.server import KafkaServer

    for fields, text in (({"security_protocol": "SSL"}, "ssl.keystore.location"),
                         ({"security_protocol": "SASL_SSL", "ssl_keystore_location": pki["ca"]},
                          "cannot load the TLS key"),
                         ({"security_protocol": "SASL_PLAINTEXT",
                           "sasl_enabled_mechanisms": ("PLAIN",)}, "no user is defined")):
        cfg = dataclasses.replace(TEST_CONFIG, **fields)
        with pytest.raises(ConfigError, match=text):
            KafkaServer(tmp_path / "logs", "127.0.0.1", 0, config=cfg).start()


def test_kafkalog_serve_command_with_sasl_ssl(tmp_path, pki, capsys):
    """The CLI: --security-protocol, -c ssl.*, --jaas-config (Kafka's JAAS file) and
    --add-scram (kafka-storage.sh's syntax), then a librdkafka login with each mechanism."""
    import signal

    from kafkalog.server.command import main as serve_main

    from .test_lifecycle import serve_process

    jaas = tmp_path / "kafka_server_jaas.conf"
    jaas.write_text('KafkaServer {\n  org.apache.kafka.common.security.plain.PlainLoginModule '
                    'required\n  username="admin" password="admin-secret"\n  '
                    'user_bob="bob-secret";\n};\n')
    root = tmp_path / "logs"
    proc, port = serve_process(root, "--security-protocol", "SASL_SSL",
                               "-c", f"ssl.keystore.location={pki['server']}",
                               "--jaas-config", str(jaas),
                               "--add-scram", "SCRAM-SHA-256=[name=alice,password=alice-secret,"
                                              "iterations=8192]")
    try:
        class _Addr:
            address = f"127.0.0.1:{port}"

        for mech, user, pw in (("PLAIN", "bob", "bob-secret"),
                               ("SCRAM-SHA-256", "alice", "alice-secret")):
            conf = _rdkafka_conf(_Addr, "SASL_SSL", mech, user, pw, pki)
            assert _rdkafka_roundtrip(conf, "cli-" + mech.lower(), 3) == [b"v0", b"v1", b"v2"]
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "SASL_SSL://127.0.0.1" in err
    assert ScramCredentialStore(root).get("alice", "SCRAM-SHA-256").iterations == 8192
    # usage errors name what is wrong, before anything is served
    for args, text in ((["--add-scram", "SCRAM-SHA-1=[name=a,password=b]"],
                        "unknown SCRAM mechanism"),
                       (["--security-protocol", "SSL"], "ssl.keystore.location"),
                       (["--security-protocol", "SASL_PLAINTEXT", "-c",
                         "sasl.enabled.mechanisms=PLAIN"], "no user is defined"),
                       (["-c", "sasl.enabled.mechanisms=GSSAPI"], "sasl.enabled.mechanisms"),
                       (["-c", "ssl.keystore.type=JKS"], "keytool -importkeystore"),
                       (["--jaas-config", str(tmp_path / "missing.conf")], "--jaas-config")):
        assert serve_main([str(tmp_path / "other"), "--port", "0", *args]) == 2
        assert text in capsys.readouterr().err


# -- KIP-368 re-authentication ------------------------------------------------------------------

def _login(c: WireClient, user: str, password: str, version: int = 2):
    assert c.request(17, 1, {"mechanism": "PLAIN"}).error_code == 0
    return c.request(36, version, {"auth_bytes": f"\x00{user}\x00{password}".encode()})


_MD = {"topics": None, "allow_auto_topic_creation": False,
       "include_topic_authorized_operations": False}


def test_reauthentication_over_the_wire(tmp_path):
    server = _server(tmp_path, "SASL_PLAINTEXT", connections_max_reauth_ms=1500)
    try:
        with WireClient(server.address) as c:
            r = _login(c, "bob", "bob-secret")
            assert r.error_code == 0 and r.session_lifetime.total_seconds() == 1.5
            assert c.request(3, 12, _MD).brokers
            time.sleep(1.1)  # (a second re-authentication within 1 s is refused: ours is later)
            r = _login(c, "bob", "bob-secret")  # re-authenticate on the same connection
            assert r.error_code == 0 and r.session_lifetime.total_seconds() == 1.5
            time.sleep(1.0)
            assert c.request(3, 12, _MD).brokers  # 2.1 s after the first login: still alive
            time.sleep(1.7)  # past the renewed session: the next request closes the connection
            c.send_raw(c.encode(3, 12, _MD))
            assert _closed(c)
        with WireClient(server.address) as c:  # another principal: refused, with Kafka's text
            assert _login(c, "bob", "bob-secret").error_code == 0
            time.sleep(1.1)
            r = _login(c, "admin", "admin-secret")
            assert r.error_code == 58
            assert r.error_message == ("Cannot change principals during re-authentication from "
                                       "User.bob: User.admin")
            assert _closed(c)
    finally:
        server.stop()
    # without connections.max.reauth.ms: no lifetime, and a handshake afterwards is refused
    server = _server(tmp_path, "SASL_PLAINTEXT")
    try:
        with WireClient(server.address) as c:
            assert _login(c, "bob", "bob-secret").session_lifetime.total_seconds() == 0
            assert c.request(17, 1, {"mechanism": "PLAIN"}).error_code == 34
    finally:
        server.stop()


def test_rdkafka_reauthenticates_with_scram(tmp_path, caplog):
    """librdkafka (KIP-368 since 2.2) re-authenticates before the session ends and keeps
    producing on the same connections."""
    import logging

    root = tmp_path / "logs"
    root.mkdir()
    ScramCredentialStore(root).set_password("alice", "SCRAM-SHA-256", "alice-secret")
    server = _server(tmp_path, "SASL_PLAINTEXT", connections_max_reauth_ms=2000)
    caplog.set_level(logging.INFO, logger="kafkalog.server")
    try:
        conf = _rdkafka_conf(server, "SASL_PLAINTEXT", "SCRAM-SHA-256", "alice", "alice-secret")
        errors: list = []
        p = confluent_kafka.Producer({**conf, "error_cb": errors.append})
        deadline = time.monotonic() + 6
        sent = 0
        while time.monotonic() < deadline:
            p.produce("reauth", b"v%d" % sent)
            sent += 1
            p.poll(0.05)
        assert p.flush(30) == 0
        assert not errors
        assert any("re-authenticated as User:alice" in r.getMessage() for r in caplog.records)
        assert not any("session expired" in r.getMessage() for r in caplog.records)
    finally:
        server.stop()
    from kafkalog.log_dir import LogDir

    with LogDir.open(root) as d:
        assert d.log("reauth", 0).log_end_offset == sent


# -- OAUTHBEARER (Kafka's unsecured validator) -------------------------------------------------

def _unsecured_jwt(claims: dict) -> str:
    import base64
    import json

    def b64(obj: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    return f"{b64({'alg': 'none'})}.{b64(claims)}."


def test_rdkafka_oauthbearer_and_reauthentication(tmp_path, caplog):
    """librdkafka's unsecured JWT (its development token) logs in, and re-authenticates on its
    connections when connections.max.reauth.ms ends the session (the session's end from a
    token's expiry is checked over the wire below)."""
    import logging

    server = _server(tmp_path, "SASL_PLAINTEXT", connections_max_reauth_ms=2000,
                     sasl_enabled_mechanisms=("PLAIN", "OAUTHBEARER"),
                     sasl_oauthbearer_options={"unsecuredValidatorRequiredScope": "kafka"})
    caplog.set_level(logging.INFO, logger="kafkalog.server")
    try:
        conf = {"bootstrap.servers": server.address, "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "OAUTHBEARER", "enable.sasl.oauthbearer.unsecure.jwt": True,
                "sasl.oauthbearer.config": "principal=alice scope=kafka lifeSeconds=3600"}
        assert _rdkafka_roundtrip(conf, "oauth", 5) == [b"v%d" % i for i in range(5)]
        assert any("authenticated as User:alice (SASL OAUTHBEARER)" in r.getMessage()
                   for r in caplog.records)
        errors: list = []
        p = confluent_kafka.Producer({**conf, "error_cb": errors.append})
        deadline = time.monotonic() + 6
        while time.monotonic() < deadline:
            p.produce("oauth", b"more")
            p.poll(0.05)
        assert p.flush(30) == 0 and not errors
        assert any("re-authenticated as User:alice" in r.getMessage() for r in caplog.records)
        # a token without the required scope: Kafka's JSON error, then the failure
        bad = {**conf, "sasl.oauthbearer.config": "principal=alice scope=other"}
        assert '{"status":"insufficient_scope", "scope":"[kafka]"}' in _rdkafka_auth_error(bad)
    finally:
        server.stop()


def test_kafka_python_oauthbearer_token_provider(tmp_path):
    kafka = pytest.importorskip("kafka")
    try:
        from kafka.sasl.oauth import AbstractTokenProvider
    except ImportError:  # kafka-python >= 3
        from kafka.net.sasl.oauth import AbstractTokenProvider

    class Provider(AbstractTokenProvider):
        def token(self) -> str:
            # whole seconds, as identity providers write them (a fractional iat in the very
            # millisecond the broker checks it is "after" the broker's ms clock, in Kafka too)
            now = int(time.time())
            return _unsecured_jwt({"sub": "carol", "iat": now, "exp": now + 3600})

        def extensions(self) -> dict:
            return {"traceId": "abc"}

    server = _server(tmp_path, "SASL_PLAINTEXT", sasl_enabled_mechanisms=("OAUTHBEARER",))
    try:
        common = {"bootstrap_servers": server.address, "security_protocol": "SASL_PLAINTEXT",
                  "sasl_mechanism": "OAUTHBEARER", "sasl_oauth_token_provider": Provider()}
        prod = kafka.KafkaProducer(**common)
        prod.send("kp-oauth", b"hello").get(30)
        prod.close()
        cons = kafka.KafkaConsumer("kp-oauth", auto_offset_reset="earliest",
                                   consumer_timeout_ms=5000, **common)
        assert [m.value for m in cons] == [b"hello"]
        cons.close()
    finally:
        server.stop()


def test_oauthbearer_error_challenge_over_the_wire(tmp_path):
    """RFC 7628's failure: the server's challenge is the JSON error, the client answers %x01,
    then the exchange fails with that JSON as the message (OAuthBearerSaslServer)."""
    server = _server(tmp_path, "SASL_PLAINTEXT", sasl_enabled_mechanisms=("OAUTHBEARER",))
    expired = _unsecured_jwt({"sub": "alice", "iat": 1000, "exp": 2000})
    good = _unsecured_jwt({"sub": "alice", "exp": time.time() + 60})
    try:
        with WireClient(server.address) as c:
            challenge, r = c.oauthbearer_refused(expired)
            assert (challenge.error_code, challenge.auth_bytes) == (
                0, b'{"status":"invalid_token"}')
            assert (r.error_code, r.error_message) == (58, '{"status":"invalid_token"}')
            assert _closed(c)
        with WireClient(server.address) as c:  # an authorization id other than the principal
            assert c.request(17, 1, {"mechanism": "OAUTHBEARER"}).error_code == 0
            r = c.request(36, 2, {"auth_bytes":
                                  f"n,a=bob,\x01auth=Bearer {good}\x01\x01".encode()})
            assert r.error_code == 58
            assert r.error_message == (
                "Authentication failed: Client requested an authorization id (bob) that is "
                "different from the token's principal name (alice)")
        with WireClient(server.address) as c:  # valid: the session ends with the token
            assert c.request(17, 1, {"mechanism": "OAUTHBEARER"}).error_code == 0
            r = c.request(36, 2, {"auth_bytes": f"n,,\x01auth=Bearer {good}\x01\x01".encode()})
            assert r.error_code == 0
            assert 55 < r.session_lifetime.total_seconds() <= 60
        with WireClient(server.address) as c:  # a malformed message: Kafka's generic text
            assert c.request(17, 1, {"mechanism": "OAUTHBEARER"}).error_code == 0
            r = c.request(36, 2, {"auth_bytes": b"garbage"})
            assert (r.error_code, r.error_message) == (
                58, "Authentication failed during authentication due to invalid credentials "
                    "with SASL mechanism OAUTHBEARER")
    finally:
        server.stop()


# -- keystores: PKCS12, inline PEM, JKS refused ------------------------------------------------

def _pkcs12_stores(tmp_path, pki) -> dict[str, str]:
    """The test PKI as PKCS12: a keystore (key + chain, password "ks-secret") and a
    truststore of the CA (password "ts-secret"), as keytool -deststoretype PKCS12 writes."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.serialization import pkcs12

    text = Path(pki["server"]).read_bytes()
    key = serialization.load_pem_private_key(text, None)
    certs = x509.load_pem_x509_certificates(text)
    ca = x509.load_pem_x509_certificate(Path(pki["ca"]).read_bytes())
    ks = tmp_path / "server.p12"
    ks.write_bytes(pkcs12.serialize_key_and_certificates(
        b"kafka", key, certs[0], certs[1:],
        serialization.BestAvailableEncryption(b"ks-secret")))
    ts = tmp_path / "truststore.p12"
    ts.write_bytes(pkcs12.serialize_key_and_certificates(
        b"ca", None, None, [ca], serialization.BestAvailableEncryption(b"ts-secret")))
    return {"keystore": str(ks), "truststore": str(ts)}


def test_pkcs12_keystore_and_truststore_with_mutual_tls(tmp_path, pki):
    stores = _pkcs12_stores(tmp_path, pki)
    server = _server(tmp_path, "SSL", ssl_keystore_location=stores["keystore"],
                     ssl_keystore_type="PKCS12", ssl_keystore_password="ks-secret",
                     ssl_truststore_location=stores["truststore"],
                     ssl_truststore_password="ts-secret", ssl_client_auth="required")
    try:
        conf = {**_rdkafka_conf(server, "SSL", pki=pki),
                "ssl.certificate.location": pki["client_cert"],
                "ssl.key.location": pki["client_key"]}
        assert _rdkafka_roundtrip(conf, "p12", 3) == [b"v0", b"v1", b"v2"]
    finally:
        server.stop()
    import dataclasses

    from kafkalog.errors import ConfigError
    from kafkalog.server import KafkaServer

    bad = dataclasses.replace(TEST_CONFIG, security_protocol="SSL",
                              ssl_keystore_location=stores["keystore"],
                              ssl_keystore_password="wrong")
    with pytest.raises(ConfigError, match="wrong password"):
        KafkaServer(tmp_path / "logs", "127.0.0.1", 0, config=bad).start()
    jks = tmp_path / "server.jks"
    jks.write_bytes(b"\xfe\xed\xfe\xed\x00\x00\x00\x02")
    bad = dataclasses.replace(TEST_CONFIG, security_protocol="SSL",
                              ssl_keystore_location=str(jks))
    with pytest.raises(ConfigError, match="JKS store; .*keytool -importkeystore"):
        KafkaServer(tmp_path / "logs", "127.0.0.1", 0, config=bad).start()


def test_inline_pem_keystore(tmp_path, pki):
    """KIP-651: ssl.keystore.key and ssl.keystore.certificate.chain as PEM text (here from a
    server.properties, continuation lines and all), ssl.truststore.certificates likewise."""
    import io

    from cryptography.hazmat.primitives import serialization

    from kafkalog.server.server_properties import parse

    text = Path(pki["server"]).read_bytes()
    key = serialization.load_pem_private_key(text, None).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()).decode()
    chain = text.decode()[text.decode().index("-----BEGIN CERTIFICATE"):]

    def prop(value: str) -> str:  # one logical line: \n escapes, continuation backslashes
        return value.strip().replace("\n", "\\n\\\n    ")

    props = (f"listeners=SSL://127.0.0.1:0\nssl.keystore.type=PEM\n"
             f"ssl.keystore.key={prop(key)}\nssl.keystore.certificate.chain={prop(chain)}\n")
    config = parse(io.StringIO(props), "inline.properties", log_dir=str(tmp_path)).config
    assert config.ssl_keystore_key.startswith("-----BEGIN PRIVATE KEY-----\n")
    import dataclasses

    server = start_server(tmp_path / "logs", config=dataclasses.replace(
        TEST_CONFIG, security_protocol="SSL", ssl_keystore_key=config.ssl_keystore_key,
        ssl_keystore_certificate_chain=config.ssl_keystore_certificate_chain))
    try:
        assert _rdkafka_roundtrip(_rdkafka_conf(server, "SSL", pki=pki), "inline", 2) == \
            [b"v0", b"v1"]
    finally:
        server.stop()
