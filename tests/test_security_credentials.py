"""SCRAM credentials, the credential store's Alter/Describe rules, JAAS users and the SASL
mechanism servers (PLAIN, SCRAM) without a network.

The SCRAM derivation is checked against RFC 7677's worked example (an implementation we did not
write): the server-first and server-final messages of the exchange must be the RFC's, byte for
byte, from a credential derived from the password here.
"""

from __future__ import annotations

import base64
import json
import os
import stat

import pytest

from kafkalog.errors import ConfigError, CorruptCheckpointError
from kafkalog.security import ScramCredential, ScramCredentialStore, parse_add_scram, plain_users
from kafkalog.security.scram_credentials import (
    SCRAM_CREDENTIALS_FILE,
    sasl_name,
    username_from_sasl_name,
)

# RFC 7677 section 3
RFC_SALT = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
RFC_CLIENT_FIRST = "n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
RFC_SERVER_NONCE = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
RFC_SERVER_FIRST = ("r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                    "s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
RFC_CLIENT_FINAL = ("c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                    "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
RFC_SERVER_FINAL = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


def test_scram_exchange_matches_rfc_7677(tmp_path):
    pytest.importorskip("scramp")
    from kafkalog.server.sasl import SaslFailure, _ScramServer

    store = ScramCredentialStore(tmp_path)
    cred = ScramCredential.from_password("SCRAM-SHA-256", "pencil", 4096, salt=RFC_SALT)
    store._users["user"] = {"SCRAM-SHA-256": cred}
    server = _ScramServer("SCRAM-SHA-256", store, s_nonce=RFC_SERVER_NONCE)
    assert server.evaluate(RFC_CLIENT_FIRST.encode()).decode() == RFC_SERVER_FIRST
    assert server.evaluate(RFC_CLIENT_FINAL.encode()).decode() == RFC_SERVER_FINAL
    assert server.complete and server.principal == "user"
    # a wrong proof fails with Kafka's generic text (the reason stays in the server log)
    server = _ScramServer("SCRAM-SHA-256", store, s_nonce=RFC_SERVER_NONCE)
    server.evaluate(RFC_CLIENT_FIRST.encode())
    with pytest.raises(SaslFailure) as e:
        server.evaluate(RFC_CLIENT_FINAL.replace("p=dHzb", "p=AHzb").encode())
    assert e.value.client_message == ("Authentication failed during authentication due to "
                                      "invalid credentials with SASL mechanism SCRAM-SHA-256")
    # an unknown user: the same text
    server = _ScramServer("SCRAM-SHA-256", store)
    with pytest.raises(SaslFailure) as e:
        server.evaluate(b"n,,n=nobody,r=abc")
    assert "invalid credentials with SASL mechanism SCRAM-SHA-256" in e.value.client_message
    assert "nobody" in e.value.detail
    # an authorization id other than the user (Kafka's own message)
    server = _ScramServer("SCRAM-SHA-256", store)
    with pytest.raises(SaslFailure) as e:
        server.evaluate(b"n,a=admin,n=user,r=abc")
    assert e.value.client_message == ("Authentication failed: Client requested an "
                                      "authorization id that is different from username")


def test_plain_server_rules():
    from kafkalog.server.sasl import SaslFailure, _PlainServer

    users = {"bob": "bob-secret"}
    ok = _PlainServer(users)
    assert ok.evaluate(b"bob\x00bob\x00bob-secret") == b"" and ok.principal == "bob"
    for token, text in ((b"bob\x00bob-secret", "expected 3 tokens, got 2"),
                        (b"\x00\x00pw", "username not specified"),
                        (b"\x00bob\x00", "password not specified"),
                        (b"\x00bob\x00nope", "Invalid username or password"),
                        (b"\x00eve\x00bob-secret", "Invalid username or password"),
                        (b"admin\x00bob\x00bob-secret", "authorization id that is different")):
        with pytest.raises(SaslFailure, match=text):
            _PlainServer(users).evaluate(token)


def test_credential_text_form():
    c = ScramCredential.from_password("SCRAM-SHA-512", "pw", 8192, salt=b"salty")
    text = c.to_string()
    assert text.startswith("salt=c2FsdHk=,stored_key=") and text.endswith(",iterations=8192")
    assert ScramCredential.from_string(text, "SCRAM-SHA-512") == c
    for bad in ("salt=a", "salt=a,stored_key=b,server_key=c", "x=1,salt=a,stored_key=b,"
                "server_key=c", "salt=!!,stored_key=b,server_key=c,iterations=1"):
        with pytest.raises(ValueError, match="Credentials not valid"):
            ScramCredential.from_string(bad)


def test_sasl_name_escapes():
    assert sasl_name("a=b,c") == "a=3Db=2Cc"
    assert username_from_sasl_name("a=3Db=2Cc") == "a=b,c"
    with pytest.raises(ValueError, match="Invalid username"):
        username_from_sasl_name("a=4Fb")


def test_store_alter_and_describe_follow_kafka(tmp_path):
    s = ScramCredentialStore(tmp_path)
    up = ("alice", 1, 4096, b"salt", b"\x01" * 32)
    r = s.alter([], [up, ("bob", 2, 4095, b"s", b"p"), ("carol", 2, 16385, b"s", b"p"),
                     ("", 1, 4096, b"s", b"p"), ("dave", 0, 4096, b"s", b"p")])
    assert [(x.user, x.error_code, x.error_message) for x in r] == [
        ("alice", 0, None),
        ("bob", 93, "Too few iterations"),
        ("carol", 93, "Too many iterations"),
        ("", 93, "Username must not be empty"),
        ("dave", 33, "Unknown SCRAM mechanism")]
    r = s.alter([("alice", 1)], [("alice", 2, 4096, b"s", b"p")])
    assert [(x.user, x.error_code) for x in r] == [("alice", 92)]  # twice in one request
    assert s.get("alice", "SCRAM-SHA-256") is not None  # and nothing applied
    r = s.alter([("alice", 2)], [])
    assert (r[0].error_code, r[0].error_message) == (
        91, "Attempt to delete a user credential that does not exist")
    s.set_password("alice", "SCRAM-SHA-512", "pw", 8192)
    d = s.describe(None)
    assert [(x.user, x.credentials) for x in d] == [
        ("alice", (("SCRAM-SHA-256", 4096), ("SCRAM-SHA-512", 8192)))]
    d = s.describe(["alice", "zed", "alice"])
    assert [(x.user, x.error_code) for x in d] == [("alice", 92), ("zed", 91)]
    assert d[0].error_message == ("Cannot describe SCRAM credentials for the same user twice "
                                  "in a single request: alice")
    # persisted, readable by the owner only, keys and no password
    again = ScramCredentialStore(tmp_path)
    assert again.get("alice", "SCRAM-SHA-512") == s.get("alice", "SCRAM-SHA-512")
    path = tmp_path / SCRAM_CREDENTIALS_FILE
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    doc = json.loads(path.read_text())
    assert set(doc["users"]["alice"]) == {"SCRAM-SHA-256", "SCRAM-SHA-512"}
    s.delete("alice", "SCRAM-SHA-256")
    s.delete("alice", "SCRAM-SHA-512")
    assert ScramCredentialStore(tmp_path).users() == []
    with pytest.raises(ConfigError, match="does not exist"):
        s.delete("alice", "SCRAM-SHA-512")
    with pytest.raises(ConfigError, match="Too few iterations"):
        s.set_password("x", "SCRAM-SHA-256", "pw", 100)


def test_store_refuses_a_corrupt_file(tmp_path):
    (tmp_path / SCRAM_CREDENTIALS_FILE).write_text('{"version": 1, "users": {"a": '
                                                   '{"SCRAM-SHA-256": "salt=x"}}}')
    with pytest.raises(CorruptCheckpointError, match=SCRAM_CREDENTIALS_FILE):
        ScramCredentialStore(tmp_path)
    (tmp_path / SCRAM_CREDENTIALS_FILE).write_text("not json")
    with pytest.raises(CorruptCheckpointError, match="unreadable SCRAM credentials"):
        ScramCredentialStore(tmp_path)


def test_jaas_users():
    text = """
    // the broker's own login and its users
    KafkaServer {
        org.apache.kafka.common.security.plain.PlainLoginModule required
        username="admin" password="admin-secret"
        user_admin="admin-secret"
        user_alice="alice \\"quoted\\" secret"; /* a comment */
        org.apache.kafka.common.security.scram.ScramLoginModule required;
    };
    Client { org.apache.zookeeper.server.auth.DigestLoginModule required user_zk="no"; };
    """
    assert plain_users(text) == {"admin": "admin-secret", "alice": 'alice "quoted" secret'}
    for bad, msg in (("KafkaServer { x y; };", "control flag"),
                     ("org.apache.kafka.common.security.plain.PlainLoginModule required "
                      "user_a", "option=value"),
                     ("org.apache.kafka.common.security.plain.PlainLoginModule required "
                      "user_a=\"b\"", "does not end with ';'")):
        with pytest.raises(ConfigError, match=msg):
            plain_users(bad, where="jaas.conf")


def test_add_scram_argument():
    assert parse_add_scram('SCRAM-SHA-512=[name=alice,password="a,b",iterations=8192]') == \
        ("SCRAM-SHA-512", "alice", "a,b", 8192)
    for bad, msg in (("SCRAM-SHA-1=[name=a,password=b]", "unknown SCRAM mechanism"),
                     ("SCRAM-SHA-256=name=a", "expected MECHANISM"),
                     ("SCRAM-SHA-256=[name=a]", "name and password are required"),
                     ("SCRAM-SHA-256=[name=a,password=b,salt=c]", "unknown field"),
                     ("SCRAM-SHA-256=[name=a,password=b,iterations=x]", "integer"),
                     ("SCRAM-SHA-256=[name=a,password=b,iterations=99]", "4096..16384")):
        with pytest.raises(ConfigError, match=msg):
            parse_add_scram(bad)


def test_update_user_writes_all_or_nothing(tmp_path):
    s = ScramCredentialStore(tmp_path)
    s.set_password("alice", "SCRAM-SHA-256", "old")
    before = (tmp_path / SCRAM_CREDENTIALS_FILE).read_bytes()
    for dels, pws, msg in ((["SCRAM-SHA-512"], [], "does not exist"),
                           (["SCRAM-SHA-256"], [("SCRAM-SHA-256", "x", 4096)], "twice"),
                           ([], [("SCRAM-SHA-512", "x", 4096), ("SCRAM-SHA-256", "y", 99)],
                            "Too few iterations")):
        with pytest.raises(ConfigError, match=msg):
            s.update_user("alice", dels, pws)
        assert (tmp_path / SCRAM_CREDENTIALS_FILE).read_bytes() == before
    s.update_user("alice", ["SCRAM-SHA-256"], [("SCRAM-SHA-512", "new", 8192)])
    again = ScramCredentialStore(tmp_path)
    assert again.get("alice", "SCRAM-SHA-256") is None
    c = again.get("alice", "SCRAM-SHA-512")
    assert c == ScramCredential.from_password("SCRAM-SHA-512", "new", 8192, salt=c.salt)
