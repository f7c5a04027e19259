"""`kafkalog configs --entity-type users` (kafkalog.admin.configs_command) on real log dirs:
Kafka's ConfigCommand texts for SCRAM credentials, the credentials file afterwards (derived from
the passwords given), the error paths, the lock, and the topics path left as it was."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from kafkalog import LogDir
from kafkalog.cli import main
from kafkalog.security import ScramCredential, ScramCredentialStore
from kafkalog.security.scram_credentials import SCRAM_CREDENTIALS_FILE


@pytest.fixture
def logdir(tmp_path: Path) -> Path:
    """An empty log dir (no topic: users are not tied to topics)."""
    root = tmp_path / "logs"
    with LogDir.open(root, node_id=1):
        pass
    return root


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def _users(logdir: Path, *argv: str) -> list[str]:
    return ["configs", str(logdir), "--entity-type", "users", *argv]


def _alter(capsys, logdir: Path, user: str, *argv: str) -> tuple[int, str, str]:
    return _run(capsys, *_users(logdir, "--entity-name", user, "--alter", *argv))


def _refused(argv: list[str], reason: str) -> str:
    """ConfigCommand's generic handler: the args (those after ``configs``), then the reason."""
    return f"Error while executing config command with args '{' '.join(argv[1:])}'\n{reason}\n"


def _assert_password(root: Path, user: str, mechanism: str, password: str,
                     iterations: int) -> None:
    stored = ScramCredentialStore(root).get(user, mechanism)
    assert stored is not None and stored.iterations == iterations
    expected = ScramCredential.from_password(mechanism, password, iterations, salt=stored.salt)
    assert (stored.stored_key, stored.server_key) == (expected.stored_key, expected.server_key)


ALICE_BOTH = "SCRAM-SHA-256=[iterations=8192,password=alice-secret],SCRAM-SHA-512=[password=" \
             "alice-secret]"


# -- alter and describe ---------------------------------------------------------------------

def test_add_two_mechanisms_then_describe(logdir: Path, capsys) -> None:
    assert _alter(capsys, logdir, "alice", "--add-config", ALICE_BOTH) == (
        0, "Completed updating config for user alice.\n", "")
    _assert_password(logdir, "alice", "SCRAM-SHA-256", "alice-secret", 8192)
    _assert_password(logdir, "alice", "SCRAM-SHA-512", "alice-secret", 4096)
    # the password is not in the file; salted keys are readable by the owner only
    path = logdir / SCRAM_CREDENTIALS_FILE
    assert "alice-secret" not in path.read_text()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600

    assert _alter(capsys, logdir, "bob", "--add-config",
                  "SCRAM-SHA-512=[iterations=-1,password=b0b,with=commas]") == (
        0, "Completed updating config for user bob.\n", "")
    # everything after password= is the password (Kafka's regular expression)
    _assert_password(logdir, "bob", "SCRAM-SHA-512", "b0b,with=commas", 4096)

    assert _run(capsys, *_users(logdir, "--describe")) == (
        0, "SCRAM credential configs for user-principal 'alice' are "
           "SCRAM-SHA-256=iterations=8192, SCRAM-SHA-512=iterations=4096\n"
           "SCRAM credential configs for user-principal 'bob' are "
           "SCRAM-SHA-512=iterations=4096\n", "")
    assert _run(capsys, *_users(logdir, "--describe", "--entity-name", "bob")) == (
        0, "SCRAM credential configs for user-principal 'bob' are "
           "SCRAM-SHA-512=iterations=4096\n", "")
    # Kafka prints nothing for a user without credentials (UserScramCredentialsCommandTest)
    assert _run(capsys, *_users(logdir, "--describe", "--entity-name", "carol")) == (0, "", "")


def test_describe_json(logdir: Path, capsys) -> None:
    # (users' quotas come first: tests/test_configs_quotas.py)
    assert _run(capsys, *_users(logdir, "--describe", "--json")) == (
        0, '{"quotas": [], "users": []}\n', "")
    _alter(capsys, logdir, "alice", "--add-config", ALICE_BOTH)
    rc, out, err = _run(capsys, *_users(logdir, "--describe", "--json"))
    assert (rc, err) == (0, "")
    assert json.loads(out) == {"quotas": [], "users": [{"user": "alice", "credentials": [
        {"mechanism": "SCRAM-SHA-256", "iterations": 8192},
        {"mechanism": "SCRAM-SHA-512", "iterations": 4096}]}]}
    rc, out, _ = _run(capsys, *_users(logdir, "--describe", "--json", "--entity-name", "bob"))
    assert (rc, json.loads(out)) == (0, {"quotas": [], "users": []})


def test_replace_and_delete(logdir: Path, capsys) -> None:
    _alter(capsys, logdir, "alice", "--add-config", ALICE_BOTH)
    old = ScramCredentialStore(logdir).get("alice", "SCRAM-SHA-256")
    # a new password replaces the credential (a new salt); deleting one mechanism keeps the other
    assert _alter(capsys, logdir, "alice", "--add-config",
                  "SCRAM-SHA-256=[iterations=16384,password=new-secret]",
                  "--delete-config", "SCRAM-SHA-512") == (
        0, "Completed updating config for user alice.\n", "")
    _assert_password(logdir, "alice", "SCRAM-SHA-256", "new-secret", 16384)
    assert ScramCredentialStore(logdir).get("alice", "SCRAM-SHA-256").salt != old.salt
    assert ScramCredentialStore(logdir).get("alice", "SCRAM-SHA-512") is None
    assert _run(capsys, *_users(logdir, "--describe")) == (
        0, "SCRAM credential configs for user-principal 'alice' are "
           "SCRAM-SHA-256=iterations=16384\n", "")
    assert _alter(capsys, logdir, "alice", "--delete-config", "SCRAM-SHA-256") == (
        0, "Completed updating config for user alice.\n", "")
    assert ScramCredentialStore(logdir).users() == []
    assert _run(capsys, *_users(logdir, "--describe")) == (0, "", "")


# -- errors: nothing changes ----------------------------------------------------------------

def _alter_fails(capsys, logdir: Path, user: str, *argv: str) -> str:
    before = (logdir / SCRAM_CREDENTIALS_FILE).read_bytes()
    rc, out, err = _alter(capsys, logdir, user, *argv)
    assert (rc, out) == (1, "")
    assert (logdir / SCRAM_CREDENTIALS_FILE).read_bytes() == before
    return err


@pytest.fixture
def alice(logdir: Path, capsys) -> Path:
    """The log dir with alice's SCRAM-SHA-256 credential (8192 iterations)."""
    assert _alter(capsys, logdir, "alice", "--add-config",
                  "SCRAM-SHA-256=[iterations=8192,password=alice-secret]")[0] == 0
    return logdir


def test_delete_missing_credential(alice: Path, capsys) -> None:
    argv = _users(alice, "--entity-name", "alice", "--alter", "--delete-config",
                  "SCRAM-SHA-512")
    assert _alter_fails(capsys, alice, "alice", "--delete-config", "SCRAM-SHA-512") == _refused(
        argv, "ResourceNotFoundException: Attempt to delete a user credential that does not "
              "exist")
    assert _alter_fails(capsys, alice, "nobody", "--delete-config", "SCRAM-SHA-256").endswith(
        "\nResourceNotFoundException: Attempt to delete a user credential that does not "
        "exist\n")
    # a failing deletion fails the whole command: the upsertion is not applied either
    assert _alter_fails(capsys, alice, "alice", "--add-config", "SCRAM-SHA-256=[password=x]",
                        "--delete-config", "SCRAM-SHA-512").endswith(
        "\nResourceNotFoundException: Attempt to delete a user credential that does not "
        "exist\n")
    _assert_password(alice, "alice", "SCRAM-SHA-256", "alice-secret", 8192)


@pytest.mark.parametrize("iterations", ["4095", "100", "0", "-5"])
def test_too_few_iterations(alice: Path, capsys, iterations: str) -> None:
    add = f"SCRAM-SHA-512=[iterations={iterations},password=x]"
    assert _alter_fails(capsys, alice, "alice", "--add-config", add) == (
        f"Iterations {int(iterations)} is less than the minimum 4096 required for "
        "SCRAM-SHA-512\n")


def test_too_many_iterations(alice: Path, capsys) -> None:
    add = "SCRAM-SHA-256=[iterations=16385,password=x],SCRAM-SHA-512=[password=x]"
    argv = _users(alice, "--entity-name", "alice", "--alter", "--add-config", add)
    err = _alter_fails(capsys, alice, "alice", "--add-config", add)
    # the echoed arguments hide the passwords (Kafka prints them)
    shown = "SCRAM-SHA-256=[iterations=16385,password=[hidden]],SCRAM-SHA-512=[password=[hidden]]"
    assert err == _refused([*argv[:-1], shown],
                           "UnacceptableCredentialException: Too many iterations")
    _assert_password(alice, "alice", "SCRAM-SHA-256", "alice-secret", 8192)
    assert ScramCredentialStore(alice).get("alice", "SCRAM-SHA-512") is None


@pytest.mark.parametrize("value, message", [
    ("[iterations=8192]", "Invalid credential property SCRAM_SHA_256=iterations=8192"),
    ("[]", "Invalid credential property SCRAM_SHA_256="),
    ("[password=x,iterations=8192]", None),      # valid: the password is "x,iterations=8192"
    ("[iterations=,password=x]", 'For input string: ""'),
    ("[iterations=99999999999,password=x]", 'For input string: "99999999999"'),
])
def test_malformed_credential(alice: Path, capsys, value: str, message: str | None) -> None:
    if message is None:
        assert _alter(capsys, alice, "bob", "--add-config", f"SCRAM-SHA-256={value}")[0] == 0
        _assert_password(alice, "bob", "SCRAM-SHA-256", "x,iterations=8192", 4096)
        return
    assert _alter_fails(capsys, alice, "alice", "--add-config",
                        f"SCRAM-SHA-256={value}") == message + "\n"


def test_missing_or_empty_password(alice: Path, capsys) -> None:
    assert _alter_fails(capsys, alice, "alice", "--add-config",
                        "SCRAM-SHA-512=[iterations=8192]") == (
        "Invalid credential property SCRAM_SHA_512=iterations=8192\n")
    add = "SCRAM-SHA-256=[iterations=4096,password=]"
    argv = _users(alice, "--entity-name", "alice", "--alter", "--add-config", add)
    assert _alter_fails(capsys, alice, "alice", "--add-config", add) == _refused(
        [*argv[:-1], "SCRAM-SHA-256=[iterations=4096,password=[hidden]]"],
        "UnacceptableCredentialException: Password must not be empty")


def test_quota_and_scram_configs_not_together(alice: Path, capsys) -> None:
    # ConfigCommandTest.shouldNotAlterUserScramCredentialAndClientQuotaConfigsSimultaneously...
    # (quotas alone: tests/test_configs_quotas.py)
    message = ("Cannot alter both quota and SCRAM credential configs simultaneously for "
               "'users'.\n")
    assert _alter_fails(capsys, alice, "alice", "--add-config",
                        "SCRAM-SHA-512=[password=x],producer_byte_rate=1024") == message
    assert _alter_fails(capsys, alice, "alice", "--add-config", "SCRAM-SHA-512=[password=x]",
                        "--delete-config", "consumer_byte_rate") == message
    assert _alter_fails(capsys, alice, "alice", "--add-config", "producer_byte_rate=1024",
                        "--delete-config", "SCRAM-SHA-256") == message
    assert ScramCredentialStore(alice).get("alice", "SCRAM-SHA-512") is None


def test_unknown_mechanism_or_config(alice: Path, capsys) -> None:
    assert _alter_fails(capsys, alice, "alice", "--add-config",
                        "SCRAM-SHA-1=[password=x],SCRAM-SHA-512=[password=x]") == (
        "Only quota and SCRAM credential configs can be added for 'users'. Unexpected config "
        "names: SCRAM-SHA-1\n")
    assert _alter_fails(capsys, alice, "alice", "--delete-config",
                        "SCRAM-SHA-256,some_config,retention.ms") == (
        "Only quota and SCRAM credential configs can be deleted for 'users'. Unexpected config "
        "names: some_config, retention.ms\n")
    _assert_password(alice, "alice", "SCRAM-SHA-256", "alice-secret", 8192)


def test_same_mechanism_twice(alice: Path, capsys) -> None:
    for argv in (["--add-config", "SCRAM-SHA-256=[password=x]", "--delete-config",
                  "SCRAM-SHA-256"],
                 ["--delete-config", "SCRAM-SHA-256,SCRAM-SHA-256"]):
        assert _alter_fails(capsys, alice, "alice", *argv).endswith(
            "\nDuplicateResourceException: A user credential cannot be altered twice in the "
            "same request\n"), argv


def test_usage_errors(logdir: Path, capsys) -> None:
    rc, out, err = _run(capsys, *_users(logdir, "--alter", "--add-config",
                                        "SCRAM-SHA-256=[password=x]"))
    assert (rc, out) == (2, "")
    assert ("An entity-name or default entity must be specified with --alter of users, "
            "clients, brokers or ips") in err
    rc, _, err = _run(capsys, "configs", str(logdir), "--entity-type", "users",
                      "--entity-type", "topics", "--describe")
    assert rc == 2 and "Only 'users' and 'clients' entity types may be specified together" in err
    rc, _, err = _run(capsys, "configs", str(logdir), "--entity-type", "groups", "--describe")
    assert rc == 2 and "Invalid entity type groups" in err and "topics, clients, users, ips" in err
    rc, _, err = _run(capsys, *_users(logdir, "--describe", "--add-config", "a=1"))
    assert rc == 2 and 'Option "[describe]" can\'t be used with option "[add-config]"' in err
    assert not (logdir / SCRAM_CREDENTIALS_FILE).exists()


def test_log_dir_must_exist(tmp_path: Path, capsys) -> None:
    missing = tmp_path / "nope"
    for argv in (_users(missing, "--describe"),
                 _users(missing, "--entity-name", "alice", "--alter", "--add-config",
                        "SCRAM-SHA-256=[password=x]")):
        rc, out, err = _run(capsys, *argv)
        assert (rc, out) == (1, "") and str(missing) in err and "no such log directory" in err
    assert not missing.exists()


# -- the lock -------------------------------------------------------------------------------

def test_alter_refuses_a_locked_dir_describe_does_not(alice: Path, capsys) -> None:
    with LogDir.open(alice):        # a writer (e.g. kafkalog serve) holds the dir
        rc, out, err = _alter(capsys, alice, "alice", "--add-config",
                              "SCRAM-SHA-512=[password=x]")
        assert (rc, out) == (1, "")
        assert str(alice / ".lock") in err and "the log directory is in use" in err
        assert _run(capsys, *_users(alice, "--describe")) == (
            0, "SCRAM credential configs for user-principal 'alice' are "
               "SCRAM-SHA-256=iterations=8192\n", "")
    assert ScramCredentialStore(alice).get("alice", "SCRAM-SHA-512") is None


# -- topics unchanged -----------------------------------------------------------------------

def test_topics_path_unchanged_and_independent(alice: Path, capsys) -> None:
    with LogDir.open(alice) as logs:
        logs.create_topic("orders", 1, {"retention.ms": "60000"})
    assert _run(capsys, "configs", str(alice), "--entity-type", "topics", "--describe") == (
        0, "Dynamic configs for topic orders are:\n"
           "  retention.ms=60000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms="
           "60000}\n", "")
    assert _run(capsys, "configs", str(alice), "--entity-type", "topics", "--entity-name",
                "orders", "--alter", "--add-config", "segment.bytes=1048576") == (
        0, "Completed updating config for topic orders.\n", "")
    # a user named like a topic is a user; a topic's config name is not a user config
    assert _alter_fails(capsys, alice, "orders", "--add-config", "retention.ms=1") == (
        "Only quota and SCRAM credential configs can be added for 'users'. Unexpected config "
        "names: retention.ms\n")
    assert _run(capsys, "configs", str(alice), "--entity-type", "topics", "--entity-name",
                "alice", "--describe")[0] == 1       # a user is not a topic
    with LogDir.open(alice, read_only=True) as logs:
        assert logs.topic_overrides("orders") == {"retention.ms": "60000",
                                                  "segment.bytes": "1048576"}
    _assert_password(alice, "alice", "SCRAM-SHA-256", "alice-secret", 8192)
