"""`kafkalog configs --entity-type users|clients|ips` quotas (kafkalog.admin.configs_command) on
real log dirs: Kafka 4.1.1 ConfigCommand's option handling, texts and lines, the store's file
afterwards (read by a fresh ClientQuotaStore, as `kafkalog serve` reads it), and cases ported
from Kafka's tools/src/test/java/org/apache/kafka/tools/ConfigCommandTest.java (named in the
comments). Orders and number texts marked "Java" were checked against a JDK (jshell)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafkalog import LogDir
from kafkalog.admin.configs_command import parse_java_double
from kafkalog.cli import main
from kafkalog.quotas import CLIENT_QUOTAS_FILE, ClientQuotaStore
from kafkalog.security import ScramCredentialStore


@pytest.fixture
def logdir(tmp_path: Path) -> Path:
    """An empty log dir (quotas are not tied to topics)."""
    root = tmp_path / "logs"
    with LogDir.open(root, node_id=1):
        pass
    return root


def _run(capsys: pytest.CaptureFixture[str], logdir: Path, *argv: str) -> tuple[int, str, str]:
    rc = main(["configs", str(logdir), *argv])
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def _ok(capsys, logdir: Path, *argv: str) -> str:
    rc, out, err = _run(capsys, logdir, *argv)
    assert (rc, err) == (0, ""), (argv, out, err)
    return out


def _stored(logdir: Path) -> list[tuple[dict, dict]]:
    """What a fresh store (another process: the server) reads from the file."""
    return ClientQuotaStore(logdir).entities()


def _refused(logdir: Path, argv: list[str], reason: str) -> str:
    return (f"Error while executing config command with args '{logdir} {' '.join(argv)}'\n"
            f"{reason}\n")


ALL_FOUR = "producer_byte_rate=1024,consumer_byte_rate=2048,request_percentage=50," \
           "controller_mutation_rate=10"


# -- alter then describe, persisted --------------------------------------------------------------

def test_user_quotas_alter_describe_and_persist(logdir: Path, capsys) -> None:
    assert _ok(capsys, logdir, "--entity-type", "users", "--entity-name", "alice", "--alter",
               "--add-config", ALL_FOUR) == "Completed updating config for user alice.\n"
    assert _stored(logdir) == [({"user": "alice"}, {
        "producer_byte_rate": 1024.0, "consumer_byte_rate": 2048.0, "request_percentage": 50.0,
        "controller_mutation_rate": 10.0})]
    # the keys in the admin client's HashMap(4) order (Java)
    line = ("Quota configs for user-principal 'alice' are producer_byte_rate=1024.0, "
            "consumer_byte_rate=2048.0, controller_mutation_rate=10.0, request_percentage=50.0\n")
    assert _ok(capsys, logdir, "--entity-type", "users", "--entity-name", "alice",
               "--describe") == line
    assert _ok(capsys, logdir, "--entity-type", "users", "--describe") == line
    assert _ok(capsys, logdir, "--user", "alice", "--describe") == line

    assert _ok(capsys, logdir, "--entity-type", "users", "--entity-name", "alice", "--alter",
               "--delete-config", "request_percentage,controller_mutation_rate",
               "--add-config", "producer_byte_rate=4096") == (
        "Completed updating config for user alice.\n")
    assert _stored(logdir) == [({"user": "alice"}, {"producer_byte_rate": 4096.0,
                                                    "consumer_byte_rate": 2048.0})]
    assert _ok(capsys, logdir, "--entity-type", "users", "--describe") == (
        "Quota configs for user-principal 'alice' are consumer_byte_rate=2048.0, "
        "producer_byte_rate=4096.0\n")
    # the last quota deleted: the entity is gone
    _ok(capsys, logdir, "--user", "alice", "--alter", "--delete-config",
        "producer_byte_rate,consumer_byte_rate")
    assert _stored(logdir) == []
    assert _ok(capsys, logdir, "--entity-type", "users", "--describe") == ""
    assert (logdir / CLIENT_QUOTAS_FILE).exists()


def test_clients_ips_defaults_and_pairs(logdir: Path, capsys) -> None:
    alters = [
        (["--entity-type", "clients", "--entity-name", "app"], "request_percentage=0.0005",
         "Completed updating config for client app.\n"),
        (["--entity-type", "clients", "--entity-default"], "producer_byte_rate=1e7",
         "Completed updating default config for clients in the cluster.\n"),
        (["--entity-type", "users", "--entity-default"], "consumer_byte_rate=2e7", None),
        (["--entity-type", "users", "--entity-name", "alice", "--entity-type", "clients",
          "--entity-name", "app"], "producer_byte_rate=512", None),
        (["--entity-type", "users", "--entity-default", "--entity-type", "clients",
          "--entity-name", "app"], "consumer_byte_rate=100",
         "Completed updating default config for users in the cluster.\n"),
        (["--entity-type", "ips", "--entity-name", "10.0.0.1"], "connection_creation_rate=10",
         "Completed updating config for ip 10.0.0.1.\n"),
        (["--ip-defaults"], "connection_creation_rate=100",
         "Completed updating default config for ips in the cluster.\n"),
    ]
    for entity, add, text in alters:
        out = _ok(capsys, logdir, *entity, "--alter", "--add-config", add)
        if text is not None:
            assert out == text

    assert _ok(capsys, logdir, "--entity-type", "clients", "--describe") == (
        "Quota configs for the default client-id are producer_byte_rate=1.0E7\n"
        "Quota configs for client-id 'app' are request_percentage=5.0E-4\n")
    assert _ok(capsys, logdir, "--entity-type", "clients", "--entity-name", "app",
               "--describe") == "Quota configs for client-id 'app' are request_percentage=5.0E-4\n"
    assert _ok(capsys, logdir, "--client-defaults", "--describe") == (
        "Quota configs for the default client-id are producer_byte_rate=1.0E7\n")
    # users alone: the default user too (a type without a name matches it)
    assert _ok(capsys, logdir, "--entity-type", "users", "--describe") == (
        "Quota configs for the default user-principal are consumer_byte_rate=2.0E7\n")
    # users and clients: the pairs only (strict), user first in the line
    pairs = _ok(capsys, logdir, "--entity-type", "users", "--entity-type", "clients",
                "--describe")
    assert sorted(pairs.splitlines()) == [
        "Quota configs for the default user-principal, client-id 'app' are "
        "consumer_byte_rate=100.0",
        "Quota configs for user-principal 'alice', client-id 'app' are "
        "producer_byte_rate=512.0"]
    # a name for the first type, every entity of the second
    assert _ok(capsys, logdir, "--entity-type", "users", "--entity-name", "alice",
               "--entity-type", "clients", "--describe") == (
        "Quota configs for user-principal 'alice', client-id 'app' are "
        "producer_byte_rate=512.0\n")
    assert _ok(capsys, logdir, "--client", "app", "--user-defaults", "--describe") == (
        "Quota configs for the default user-principal, client-id 'app' are "
        "consumer_byte_rate=100.0\n")
    assert _ok(capsys, logdir, "--entity-type", "ips", "--describe") == (
        "Quota configs for ip '10.0.0.1' are connection_creation_rate=10.0\n"
        "Quota configs for the default ip are connection_creation_rate=100.0\n")
    assert _ok(capsys, logdir, "--ip", "10.0.0.1", "--describe") == (
        "Quota configs for ip '10.0.0.1' are connection_creation_rate=10.0\n")
    assert _ok(capsys, logdir, "--entity-type", "ips", "--entity-name", "10.9.9.9",
               "--describe") == ""
    assert len(_stored(logdir)) == 7


def test_describe_order_is_the_admin_clients_hash_map(logdir: Path, capsys) -> None:
    for user in ("alice", "bob", "carol", "dave", "", "erin", "frank"):
        _ok(capsys, logdir, "--entity-type", "users", "--entity-name", user, "--alter",
            "--add-config", "request_percentage=1.5")
    names = ["erin", "alice", "bob", None, "frank", "dave", "carol"]      # Java's HashMap(7)
    texts = ["the default user-principal" if n is None else f"user-principal '{n}'"
             for n in names]
    assert _ok(capsys, logdir, "--entity-type", "users", "--describe") == "".join(
        f"Quota configs for {t} are request_percentage=1.5\n" for t in texts)
    for ip in ("10.0.0.1", "10.0.0.2", "", "192.168.1.1"):
        _ok(capsys, logdir, "--entity-type", "ips", "--entity-name", ip, "--alter",
            "--add-config", "connection_creation_rate=5")
    assert [line.split(" are ")[0] for line in _ok(
        capsys, logdir, "--entity-type", "ips", "--describe").splitlines()] == [
        "Quota configs for ip '10.0.0.2'", "Quota configs for ip '192.168.1.1'",
        "Quota configs for ip '10.0.0.1'", "Quota configs for the default ip"]   # Java


def test_users_describe_quotas_then_scram(logdir: Path, capsys) -> None:
    _ok(capsys, logdir, "--user", "alice", "--alter", "--add-config",
        "SCRAM-SHA-256=[iterations=8192,password=secret]")
    _ok(capsys, logdir, "--user", "alice", "--alter", "--add-config", "producer_byte_rate=1024")
    _ok(capsys, logdir, "--user-defaults", "--alter", "--add-config", "producer_byte_rate=10")
    scram = ("SCRAM credential configs for user-principal 'alice' are "
             "SCRAM-SHA-256=iterations=8192\n")
    alice = "Quota configs for user-principal 'alice' are producer_byte_rate=1024.0\n"
    default = "Quota configs for the default user-principal are producer_byte_rate=10.0\n"
    assert _ok(capsys, logdir, "--entity-type", "users", "--describe") == default + alice + scram
    assert _ok(capsys, logdir, "--entity-type", "users", "--entity-name", "alice",
               "--describe") == alice + scram
    # ConfigCommandTest.shouldNotDescribeUserScramCredentialsWithEntityDefaultUsingBootstrapServer
    assert _ok(capsys, logdir, "--entity-type", "users", "--entity-default",
               "--describe") == default
    assert _ok(capsys, logdir, "--user-defaults", "--describe") == default
    # with clients: no SCRAM lines either
    assert _ok(capsys, logdir, "--entity-type", "users", "--entity-name", "alice",
               "--entity-type", "clients", "--describe") == ""
    # the quota change kept the credential, the credential change the quota
    assert ScramCredentialStore(logdir).get("alice", "SCRAM-SHA-256").iterations == 8192


def test_describe_json(logdir: Path, capsys) -> None:
    assert json.loads(_ok(capsys, logdir, "--entity-type", "clients", "--describe",
                          "--json")) == {"quotas": []}
    _ok(capsys, logdir, "--user", "alice", "--client-defaults", "--alter", "--add-config",
        "producer_byte_rate=1024,request_percentage=12.5")
    _ok(capsys, logdir, "--client", "app", "--alter", "--add-config", "consumer_byte_rate=64")
    _ok(capsys, logdir, "--user", "bob", "--alter", "--add-config", "consumer_byte_rate=64")
    assert json.loads(_ok(capsys, logdir, "--entity-type", "users", "--entity-type", "clients",
                          "--describe", "--json")) == {"quotas": [
        {"entity": {"user": "alice", "client-id": None},
         "configs": {"producer_byte_rate": 1024.0, "request_percentage": 12.5}}]}
    assert json.loads(_ok(capsys, logdir, "--entity-type", "users", "--describe", "--json")) == {
        "quotas": [{"entity": {"user": "bob"}, "configs": {"consumer_byte_rate": 64.0}}],
        "users": []}
    assert json.loads(_ok(capsys, logdir, "--ip-defaults", "--describe", "--json")) == {
        "quotas": []}
    # no SCRAM part for the default user (Kafka does not ask for it)
    assert json.loads(_ok(capsys, logdir, "--user-defaults", "--describe", "--json")) == {
        "quotas": []}


# -- ConfigCommandTest: entities from the options -----------------------------------------------

@pytest.mark.parametrize("opts, entity, first", [
    # testOptionEntityTypeNames (types and names paired in command-line order)
    (["--entity-type", "users", "--entity-type", "clients", "--entity-name", "A",
      "--entity-default"], {"user": "A", "client-id": None}, "user A"),
    (["--entity-default", "--entity-name", "B", "--entity-type", "users", "--entity-type",
      "clients"], {"user": None, "client-id": "B"}, "default users"),
    (["--client", "B", "--user", "A"], {"user": "A", "client-id": "B"}, "client B"),
    (["--client", "B", "--user-defaults"], {"user": None, "client-id": "B"}, "client B"),
    (["--user", "A", "--client-defaults"], {"user": "A", "client-id": None}, "user A"),
    (["--entity-name", "1.2.3.4", "--entity-type", "ips"], {"ip": "1.2.3.4"}, "ip 1.2.3.4"),
    # an empty name is the default, as in Kafka
    (["--entity-type", "clients", "--entity-name", ""], {"client-id": None}, "default clients"),
])
def test_option_entity_type_names(logdir: Path, capsys, opts: list[str], entity: dict,
                                  first: str) -> None:
    key = "connection_creation_rate" if "ip" in entity else "producer_byte_rate"
    out = _ok(capsys, logdir, *opts, "--alter", "--add-config", f"{key}=1000")
    kind, _, name = first.partition(" ")
    assert out == (f"Completed updating default config for {name} in the cluster.\n"
                   if kind == "default" else f"Completed updating config for {kind} {name}.\n")
    assert _stored(logdir) == [(entity, {key: 1000.0})]


@pytest.mark.parametrize("user", ["test-user-1", "", None])
@pytest.mark.parametrize("client", ["test-client-1", "", None])
def test_add_client_config(logdir: Path, capsys, user: str | None, client: str | None) -> None:
    # ConfigCommandTest.shouldAddClientConfig / verifyAlterUserClientQuotas
    if user is None and client is None:
        return
    opts: list[str] = []
    entity: dict = {}
    for value, etype, key in ((user, "users", "user"), (client, "clients", "client-id")):
        if value is not None:
            opts += ["--entity-type", etype] + (["--entity-name", value] if value
                                                else ["--entity-default"])
            entity[key] = value or None
    store = ClientQuotaStore(logdir)
    assert store.alter([(entity, [("request_percentage", 50.0, False)])]) == [(entity, 0, None)]
    _ok(capsys, logdir, "--alter", "--add-config",
        "consumer_byte_rate=20000,producer_byte_rate=10000", "--delete-config",
        "request_percentage", *opts)
    assert _stored(logdir) == [(entity, {"consumer_byte_rate": 20000.0,
                                         "producer_byte_rate": 10000.0})]


@pytest.mark.parametrize("opts", [["--entity-type", "ips", "--entity-name", "1.2.3.4"],
                                  ["--entity-type", "ips", "--entity-default"]])
def test_alter_ip_config(logdir: Path, capsys, opts: list[str]) -> None:
    # ConfigCommandTest.testAlterIpConfig
    entity = {"ip": "1.2.3.4" if "--entity-name" in opts else None}
    _ok(capsys, logdir, *opts, "--alter", "--add-config", "connection_creation_rate=100")
    assert _stored(logdir) == [(entity, {"connection_creation_rate": 100.0})]
    _ok(capsys, logdir, *opts, "--alter", "--delete-config", "connection_creation_rate")
    assert _stored(logdir) == []


# -- refusals: nothing changes ------------------------------------------------------------------

@pytest.fixture
def alice(logdir: Path, capsys) -> Path:
    """alice with producer_byte_rate=1024, the clients' default, an ip."""
    _ok(capsys, logdir, "--user", "alice", "--alter", "--add-config", "producer_byte_rate=1024")
    _ok(capsys, logdir, "--client-defaults", "--alter", "--add-config", "request_percentage=5")
    _ok(capsys, logdir, "--ip", "127.0.0.1", "--alter", "--add-config",
        "connection_creation_rate=10")
    return logdir


def _fails(capsys, logdir: Path, *argv: str, rc: int = 1) -> str:
    before = (logdir / CLIENT_QUOTAS_FILE).read_bytes()
    got_rc, out, err = _run(capsys, logdir, *argv)
    assert (got_rc, out) == (rc, ""), (argv, err)
    assert (logdir / CLIENT_QUOTAS_FILE).read_bytes() == before
    return err


ALICE = ["--entity-type", "users", "--entity-name", "alice", "--alter"]
APP = ["--entity-type", "clients", "--entity-name", "app", "--alter"]
IP1 = ["--entity-type", "ips", "--entity-name", "127.0.0.1", "--alter"]


def test_non_quota_configs_refused(alice: Path, capsys) -> None:
    # ConfigCommandTest.shouldNotAlterNonQuotaNonScramUserOrClientConfigUsingBootstrapServer
    assert _fails(capsys, alice, *ALICE, "--add-config",
                  "consumer_byte_rate=20000,producer_byte_rate=10000,some_config=10") == (
        "Only quota and SCRAM credential configs can be added for 'users'. Unexpected config "
        "names: some_config\n")
    assert _fails(capsys, alice, *APP, "--add-config", "some_config=10") == (
        "Only quota configs can be added for 'clients'. Unexpected config names: some_config\n")
    assert _fails(capsys, alice, *ALICE, "--delete-config", "consumer_byte_rate,some_config") == (
        "Only quota and SCRAM credential configs can be deleted for 'users'. Unexpected config "
        "names: some_config\n")
    assert _fails(capsys, alice, *APP, "--delete-config", "some_config") == (
        "Only quota configs can be deleted for 'clients'. Unexpected config names: "
        "some_config\n")
    # a user's client is a client
    assert _fails(capsys, alice, *ALICE, "--entity-type", "clients", "--entity-name", "app",
                  "--add-config", "SCRAM-SHA-256=[password=x]") == (
        "Only quota configs can be added for 'clients'. Unexpected config names: "
        "SCRAM-SHA-256\n")
    # ConfigCommandTest.shouldNotAlterScramClientConfigUsingBootstrapServer
    assert _fails(capsys, alice, *APP, "--add-config",
                  "SCRAM-SHA-256=[iterations=8192,password=foo-secret]") == (
        "Only quota configs can be added for 'clients'. Unexpected config names: "
        "SCRAM-SHA-256\n")
    assert _fails(capsys, alice, *APP, "--delete-config", "SCRAM-SHA-256") == (
        "Only quota configs can be deleted for 'clients'. Unexpected config names: "
        "SCRAM-SHA-256\n")
    # ConfigCommandTest.shouldNotAlterNonQuotaIpConfigsUsingBootstrapServer (Kafka's text says
    # "added" for deletions too, and joins the names without a space)
    assert _fails(capsys, alice, *IP1, "--add-config",
                  "connection_creation_rate=10000,some_config=10") == (
        "Only connection quota configs can be added for 'ips'. Unexpected config names: "
        "some_config\n")
    assert _fails(capsys, alice, *IP1, "--delete-config", "some_config,producer_byte_rate") == (
        "Only connection quota configs can be added for 'ips'. Unexpected config names: "
        "some_config,producer_byte_rate\n")


def test_scram_with_default_or_quotas_refused(alice: Path, capsys) -> None:
    # ConfigCommandTest.shouldNotDescribeUserScramCredentialsWithEntityDefaultUsingBootstrapServer
    text = ("The use of --entity-default or --user-defaults is not allowed with User SCRAM "
            "Credentials.\n")
    for opts in (["--entity-type", "users", "--entity-default"], ["--user-defaults"]):
        assert _fails(capsys, alice, *opts, "--alter", "--add-config",
                      "SCRAM-SHA-256=[iterations=8192,password=foo-secret]") == text
        assert _fails(capsys, alice, *opts, "--alter", "--delete-config",
                      "SCRAM-SHA-256") == text
    # ConfigCommandTest.shouldNotAlterUserScramCredentialAndClientQuotaConfigsSimultaneously...
    assert _fails(capsys, alice, *ALICE, "--add-config",
                  "SCRAM-SHA-256=[password=x],consumer_byte_rate=20000") == (
        "Cannot alter both quota and SCRAM credential configs simultaneously for 'users'.\n")
    assert ScramCredentialStore(alice).users() == []


def test_delete_missing_and_unparsable_values(alice: Path, capsys) -> None:
    assert _fails(capsys, alice, *ALICE, "--delete-config",
                  "consumer_byte_rate,producer_byte_rate,request_percentage") == (
        "Invalid config(s): consumer_byte_rate,request_percentage\n")
    assert _fails(capsys, alice, *APP, "--delete-config", "request_percentage") == (
        "Invalid config(s): request_percentage\n")        # the default's is not app's
    for value in ("abc", "", "inf", "1_000", "0x10"):
        assert _fails(capsys, alice, *ALICE, "--add-config", f"producer_byte_rate={value}") == (
            f"Cannot parse quota configuration value for producer_byte_rate: {value}\n")
    # Java's syntax is accepted (Double.parseDouble)
    _ok(capsys, alice, *APP, "--add-config", "producer_byte_rate=0x1p10,request_percentage=1.5f")
    assert ({"client-id": "app"}, {"producer_byte_rate": 1024.0, "request_percentage": 1.5}) in \
        _stored(alice)


@pytest.mark.parametrize("opts, add, reason", [
    (ALICE, "producer_byte_rate=1.5", "producer_byte_rate cannot be a fractional value."),
    (ALICE, "consumer_byte_rate=0", "Quota consumer_byte_rate must be greater than 0"),
    (ALICE, "request_percentage=-5", "Quota request_percentage must be greater than 0"),
    (ALICE, "producer_byte_rate=1e19", "Proposed value for producer_byte_rate is too large for "
                                       "a LONG."),
    (IP1, "connection_creation_rate=2147483648", "Proposed value for connection_creation_rate "
                                                 "is too large for an INT."),
    (IP1, "connection_creation_rate=2.5", "connection_creation_rate cannot be a fractional "
                                          "value."),
])
def test_controller_refusals(alice: Path, capsys, opts: list[str], add: str,
                             reason: str) -> None:
    argv = [*opts, "--add-config", add]
    assert _fails(capsys, alice, *argv) == _refused(alice, argv,
                                                    f"InvalidRequestException: {reason}")


def test_key_added_and_deleted(alice: Path, capsys) -> None:
    argv = [*ALICE, "--add-config", "producer_byte_rate=2048", "--delete-config",
            "producer_byte_rate"]
    # the controller's duplicate-key error, overwritten by its duplicate-entity one
    assert _fails(capsys, alice, *argv) == _refused(
        alice, argv, "InvalidRequestException: Ignoring duplicate entity "
                     "ClientQuotaEntity(entries={user=alice})")
    argv = [*ALICE, "--entity-type", "clients", "--entity-default", "--add-config",
            "producer_byte_rate=1", "--delete-config", "request_percentage"]
    assert _fails(capsys, alice, *argv) == "Invalid config(s): request_percentage\n"


@pytest.mark.parametrize("argv, text", [
    # ConfigCommandTest.shouldExitWithNonZeroStatusAlterUserQuotaWithoutEntityName
    (["--entity-type", "users", "--alter", "--add-config", "consumer_byte_rate=20000"],
     "An entity-name or default entity must be specified with --alter of users, clients, "
     "brokers or ips"),
    # ConfigCommandTest.shouldFailIfMixedEntityTypeFlags
    (["--entity-name", "A", "--entity-type", "users", "--client", "B", "--describe"],
     "--entity-{type,name,default} should not be used in conjunction with specific entity "
     "flags"),
    # ConfigCommandTest.shouldFailIfInvalidHost / shouldFailIfUnresolvableHost
    (["--entity-name", "A,B", "--entity-type", "ips", "--describe"],
     "The entity name for ips must be a valid IP or resolvable host, but it is: A,B"),
    (["--entity-name", "RFC2606.invalid", "--entity-type", "ips", "--describe"],
     "The entity name for ips must be a valid IP or resolvable host, but it is: "
     "RFC2606.invalid"),
    # ConfigCommandTest.testEntityDefaultForType
    (["--entity-default", "--entity-type", "topics", "--describe"],
     "--entity-default must not be specified with --describe of topics"),
    (["--entity-type", "users", "--entity-type", "ips", "--describe"],
     "Only 'users' and 'clients' entity types may be specified together"),
    (["--user", "a", "--user-defaults", "--describe"], "Duplicate entity type(s) specified: users"),
    (["--entity-type", "users", "--entity-type", "clients", "--entity-name", "a", "--alter",
      "--add-config", "producer_byte_rate=1"],
     "An entity name must be specified for every entity type"),
    (["--entity-type", "users", "--entity-name", "a", "--entity-default", "--describe"],
     "More entity names specified than entity types"),
])
def test_option_errors(logdir: Path, capsys, argv: list[str], text: str) -> None:
    rc, out, err = _run(capsys, logdir, *argv)
    assert (rc, out, err) == (2, "", f"kafkalog configs: error: {text}\n")
    assert not (logdir / CLIENT_QUOTAS_FILE).exists()


def test_entity_default_accepted_for_quota_types(logdir: Path, capsys) -> None:
    # ConfigCommandTest.testEntityDefaultForType (the allowed ones)
    for etype in ("clients", "users", "ips"):
        assert _run(capsys, logdir, "--entity-default", "--entity-type", etype,
                    "--describe") == (0, "", "")


# -- the lock, and Java's double syntax -----------------------------------------------------------

def test_alter_refuses_a_locked_dir_describe_does_not(alice: Path, capsys) -> None:
    with LogDir.open(alice):        # a writer (e.g. kafkalog serve) holds the dir
        err = _fails(capsys, alice, *APP, "--add-config", "producer_byte_rate=1")
        assert str(alice / ".lock") in err and "the log directory is in use" in err
        assert _ok(capsys, alice, "--entity-type", "users", "--describe") == (
            "Quota configs for user-principal 'alice' are producer_byte_rate=1024.0\n")


@pytest.mark.parametrize("text, value", [
    ("1024", 1024.0), ("1e3d", 1000.0), ("0x1p4", 16.0), ("+Infinity", float("inf")),
    ("1.", 1.0), ("  .5 ", 0.5), ("1f", 1.0), ("0x.8p1D", 1.0), ("-2.5E-3", -0.0025),
    ("inf", None), ("1_000", None), ("", None), ("0x1", None), ("1e", None), ("NaNd", None),
    ("infinity", None), ("nan", None),
])
def test_parse_java_double(text: str, value: float | None) -> None:
    # Double.parseDouble's answers (Java)
    assert parse_java_double(text) == value
    assert parse_java_double("-NaN") != parse_java_double("-NaN")      # NaN
