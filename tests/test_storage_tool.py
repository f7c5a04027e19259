"""``kafkalog storage`` (kafka-storage.sh) and ``kafkalog.storage``.

Cases ported from Kafka 4.2's ``StorageToolTest.scala``, ``FormatterTest.java``,
``MetaPropertiesEnsembleTest.java``, ``DynamicVoterTest.java`` and ``ScramParserTest.java``
(texts and outcomes as Kafka asserts them). Peers: the ``bootstrap.checkpoint`` and
``meta.properties`` a real Kafka 3.7.0 broker's ``kafka-storage.sh format`` wrote
(``../shared/fixtures/kafka-real/LDI-POC``, copied small ones in ``tests/golden``), kio's
generated readers for the control records, kafka-python's batch reader for every batch.
"""

from __future__ import annotations

import doctest
import io
import os
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalog.checkpoint import MetaProperties, Uuid
from kafkalog.decoders import cluster_metadata as cm
from kafkalog.decoders import kraft_control as kc
from kafkalog.errors import CorruptCheckpointError
from kafkalog.records.batch import iter_batches
from kafkalog.storage import bootstrap_metadata as bm
from kafkalog.storage import command, dynamic_voters, formatter, kraft_snapshot, storage_config
from kafkalog.storage import meta_properties_ensemble as mpe
from kafkalog.storage.bootstrap_metadata import BootstrapMetadata, FormatterError
from kafkalog.storage.dynamic_voters import DynamicVoter, DynamicVoters, VotersError
from kafkalog.storage.formatter import Formatter

# kafka-python warns at import (importlib.resources.read_text) on this Python
pytestmark = pytest.mark.filterwarnings("ignore:.* is deprecated. Use files:DeprecationWarning")

FIXTURE = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "kafka-real" / "LDI-POC"
CLUSTER_ID = "XcZZOzUqS4yHOjhMQB6JLQ"

STATIC_BROKER = {"process.roles": "broker", "node.id": "0",
                 "controller.listener.names": "CONTROLLER",
                 "controller.quorum.voters": "100@localhost:9093"}
DYNAMIC_CONTROLLER = {"process.roles": "controller", "node.id": "0",
                      "controller.listener.names": "CONTROLLER",
                      "controller.quorum.bootstrap.servers": "localhost:9093",
                      "listeners": "CONTROLLER://:9093",
                      "advertised.listeners": "CONTROLLER://127.0.0.1:9093",
                      "unstable.feature.versions.enable": "true"}


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    rc = command.main(argv, stdout=out, stderr=err)
    return rc, out.getvalue(), err.getvalue()


def write_props(tmp_path: Path, props: dict[str, str], name: str = "server.properties") -> str:
    path = tmp_path / name
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return str(path)


def run_format(tmp_path: Path, props: dict[str, str], extra: list[str] = (),
               ignore_formatted: bool = False) -> tuple[int, str, str]:
    cfg = write_props(tmp_path, props, "format.props")
    argv = ["format", "--cluster-id", CLUSTER_ID]
    if ignore_formatted:
        argv.append("--ignore-formatted")
    return run(argv + ["--config", cfg, *extra])


@pytest.mark.parametrize("mod", [bm, dynamic_voters, formatter, kraft_snapshot, mpe,
                                 storage_config, kc])
def test_module_doctests(mod):
    assert doctest.testmod(mod).failed == 0


# -- the files a real Kafka wrote ---------------------------------------------------------------

def test_bootstrap_checkpoint_is_byte_for_byte_kafkas(tmp_path):
    """Kafka 3.7.0's kafka-storage.sh format wrote LDI-POC/bootstrap.checkpoint (MV 3.7-IV4):
    formatting at that release, replaying its three clock readings, writes the same bytes
    (4.2's format writes no other feature record at 3.7-IV4: their defaults are 0)."""
    src = FIXTURE / "bootstrap.checkpoint"
    if not src.exists():
        pytest.skip("shared fixtures not present")
    expected = src.read_bytes()
    stamps = [b.max_timestamp for b in iter_batches(expected)]
    assert stamps == [1769791430952, 1769791430996, 1769791430997]
    d = tmp_path / "meta"
    f = Formatter(node_id=1, cluster_id="q1w2e3r4t5y6u7i8o9p0", directories=[str(d)],
                  controller_listener_name="CONTROLLER", metadata_log_directory=str(d),
                  release_version="3.7-IV4", clock=iter(stamps).__next__)
    f.run()
    assert (d / "bootstrap.checkpoint").read_bytes() == expected
    # and it reads back as Kafka's BootstrapDirectory.read would
    md = bm.read_bootstrap_directory(d)
    assert md.metadata_version_level == 19 and md.source.endswith("bootstrap.checkpoint")


def test_meta_properties_is_kafkas_but_for_the_date(tmp_path):
    """LDI-POC/meta.properties (Kafka 3.7.0): the same ids give the same lines, in the same
    (Properties.store hash) order; only the date line differs."""
    src = FIXTURE / "meta.properties"
    if not src.exists():
        pytest.skip("shared fixtures not present")
    real = src.read_text().splitlines()
    directory_id = Uuid.from_string("XHhkr4tkSsD900pOQ8pPfg")
    bits = int.from_bytes(directory_id.to_bytes(), "big")
    d = tmp_path / "meta"
    Formatter(node_id=1, cluster_id="q1w2e3r4t5y6u7i8o9p0", directories=[str(d)],
              controller_listener_name="CONTROLLER", release_version="3.7-IV4",
              random_bits=lambda n: bits).run()
    ours = (d / "meta.properties").read_text().splitlines()
    assert ours[0] == real[0] == "#"
    assert ours[2:] == real[2:]
    assert ours[1].startswith("#") and ours[1] != real[1]


def test_control_records_decode_with_kio():
    """kio's readers (generated from Kafka's schemas) read our control record values to the
    same fields, and its writers give back our bytes."""
    from kio.schema.k_raft_version_record.v0 import KRaftVersionRecord
    from kio.schema.snapshot_footer_record.v0 import SnapshotFooterRecord
    from kio.schema.snapshot_header_record.v0 import SnapshotHeaderRecord
    from kio.schema.voters_record.v0 import VotersRecord
    from kio.serial import entity_reader, entity_writer

    voters = DynamicVoters.parse("1@localhost:9093:JEXY6aqzQY-32P5TStzaFg,"
                                 "0@[::1]:9094:MvDxzVmcRsaTz33bUuRU6A")
    cases = [
        (VotersRecord, kc.encode("KRAFT_VOTERS", voters.voters_record("controller"))),
        (SnapshotHeaderRecord, kc.encode("SNAPSHOT_HEADER", {
            "version": 0, "lastContainedLogTimestamp": 1769791430952})),
        (SnapshotFooterRecord, kc.encode("SNAPSHOT_FOOTER", {"version": 0})),
        (KRaftVersionRecord, kc.encode("KRAFT_VERSION", {"version": 0, "kRaftVersion": 1})),
    ]
    for cls, raw in cases:
        obj, n = entity_reader(cls)(memoryview(raw), 0)
        assert n == len(raw)
        buf = io.BytesIO()
        entity_writer(cls)(buf, obj)
        assert buf.getvalue() == raw
    obj, _ = entity_reader(VotersRecord)(memoryview(cases[0][1]), 0)
    assert [(v.voter_id, v.endpoints[0].name, v.endpoints[0].host, v.endpoints[0].port)
            for v in obj.voters] == [(0, "CONTROLLER", "::1", 9094),
                                     (1, "CONTROLLER", "localhost", 9093)]
    assert str(Uuid.from_bytes(obj.voters[1].voter_directory_id.bytes)) == \
        "JEXY6aqzQY-32P5TStzaFg"


def test_snapshot_batches_read_by_kafka_python(tmp_path):
    """Every batch of both files passes kafka-python's v2 batch reader (CRC, counts,
    control flag)."""
    from kafka.record.default_records import DefaultRecordBatch

    rc, out, err = run_format(tmp_path, {**DYNAMIC_CONTROLLER, "log.dirs": str(tmp_path / "m")},
                              ["--standalone", "--add-scram",
                               "SCRAM-SHA-512=[name=bob,password=bob-secret]"])
    assert rc == 0, err
    files = [tmp_path / "m" / "bootstrap.checkpoint",
             tmp_path / "m" / "__cluster_metadata-0" / kraft_snapshot.BOOTSTRAP_SNAPSHOT_NAME]
    seen = []
    for path in files:
        data = path.read_bytes()
        pos = 0
        while pos < len(data):
            size = int.from_bytes(data[pos + 8:pos + 12], "big") + 12
            b = DefaultRecordBatch(data[pos:pos + size])
            assert b.validate_crc()
            seen.append((path.name, b.base_offset, b.is_control_batch, len(list(b))))
            pos += size
    assert seen == [("bootstrap.checkpoint", 0, True, 1), ("bootstrap.checkpoint", 1, False, 7),
                    ("bootstrap.checkpoint", 8, True, 1),
                    (kraft_snapshot.BOOTSTRAP_SNAPSHOT_NAME, 0, True, 3),
                    (kraft_snapshot.BOOTSTRAP_SNAPSHOT_NAME, 3, True, 1)]


# -- StorageToolTest ---------------------------------------------------------------------------

def test_config_to_log_directories(tmp_path):
    c = storage_config.load(write_props(tmp_path, {**STATIC_BROKER,
                                                   "log.dirs": "/tmp/foo,/tmp/bar"}))
    assert c.log_directories() == ["/tmp/bar", "/tmp/foo"]
    c = storage_config.load(write_props(tmp_path, {**STATIC_BROKER, "log.dirs": "/tmp/foo,/tmp/bar",
                                                   "metadata.log.dir": "/tmp/baz"}))
    assert c.log_directories() == ["/tmp/bar", "/tmp/baz", "/tmp/foo"]


def test_info_on_empty_directory(tmp_path):
    d = tmp_path / "empty"
    d.mkdir()
    out = io.StringIO()
    assert command.info(out, True, [str(d)]) == 1
    assert out.getvalue() == (f"Found log directory:\n  {d}\n\nFound problem:\n"
                              f"  {d} is not formatted.\n\n")


def test_info_on_missing_directory_and_file(tmp_path):
    missing, file = tmp_path / "missing", tmp_path / "file"
    file.write_text("x")
    out = io.StringIO()
    assert command.info(out, True, [str(missing)]) == 1
    assert out.getvalue() == f"Found problem:\n  {missing} does not exist\n\n"
    out = io.StringIO()
    assert command.info(out, True, [str(file)]) == 1
    assert out.getvalue() == f"Found problem:\n  {file} is not a directory\n\n"


def test_info_with_mismatched_modes(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    MetaProperties(0, "26c36907-4158-4a35-919d-6534229f5241", 1).write(d / "meta.properties")
    out = io.StringIO()
    assert command.info(out, True, [str(d)]) == 1
    assert out.getvalue() == (
        f"Found log directory:\n  {d}\n\n"
        "Found metadata: {broker.id=1, cluster.id=26c36907-4158-4a35-919d-6534229f5241, "
        "version=0}\n\nFound problem:\n  The kafka configuration file appears to be for a "
        "cluster in KRaft mode, but the directories are formatted for legacy mode.\n\n")
    MetaProperties(1, "ABC", 2).write(d / "meta.properties")
    out = io.StringIO()
    assert command.info(out, False, [str(d)]) == 1
    assert "Found metadata: {cluster.id=ABC, node.id=2, version=1}" in out.getvalue()
    assert ("The kafka configuration file appears to be for a legacy cluster, but the "
            "directories are formatted for a cluster in KRaft mode.") in out.getvalue()


def test_info_reports_mismatched_ids_and_unreadable_files(tmp_path):
    a, b, c = (tmp_path / n for n in "abc")
    for d in (a, b, c):
        d.mkdir()
    MetaProperties(1, "one", 1).write(a / "meta.properties")
    MetaProperties(1, "two", 1).write(b / "meta.properties")
    (c / "meta.properties").write_text("version=1\nnode.id=x\ncluster.id=one\n")
    rc, out, _ = run(["info", "--log-dir", str(a), "--log-dir", str(b), "--log-dir", str(c)])
    assert rc == 1
    assert out.endswith("Found problems:\n  Mismatched cluster IDs between storage "
                        f"directories.\n  Error loading {c / 'meta.properties'}: Unable to read "
                        "node.id as a base-10 number.\n\n")
    # without a config file there is no mode to hold a legacy (v0) directory against
    MetaProperties(0, "one", 1).write(c / "meta.properties")
    rc, out, _ = run(["info", "--log-dir", str(c)])
    assert rc == 0 and "Found metadata: {broker.id=1, cluster.id=one, version=0}" in out
    MetaProperties(1, "one", 2).write(b / "meta.properties")
    rc, out, _ = run(["info", "--log-dir", str(a), "--log-dir", str(b)])
    assert rc == 1 and "  Mismatched node IDs between storage directories.\n" in out


def test_info_after_format_is_clean(tmp_path):
    props = {**STATIC_BROKER, "log.dirs": f"{tmp_path / 'd1'},{tmp_path / 'd2'}"}
    assert run_format(tmp_path, props)[0] == 0
    rc, out, _ = run(["info", "-c", write_props(tmp_path, props)])
    assert rc == 0
    assert out.startswith(f"Found log directories:\n  {tmp_path / 'd1'}\n  {tmp_path / 'd2'}\n\n"
                          "Found metadata: {cluster.id=" + CLUSTER_ID + ", directory.id=")
    assert out.endswith(", node.id=0, version=1}\n\n")


def test_format_succeeds_if_all_directories_are_available(tmp_path):
    dirs = [tmp_path / f"d{i}" for i in range(4)]
    rc, out, _ = run_format(tmp_path, {**STATIC_BROKER, "log.dirs": ",".join(map(str, dirs))})
    assert rc == 0
    assert f"Formatting metadata directory {dirs[0]}" in out
    for d in dirs[1:]:
        assert f"Formatting data directory {d}" in out
    ids = {mpe.read_meta_properties(d / "meta.properties").directory_id for d in dirs}
    assert len(ids) == 4 and not any(mpe.is_reserved_directory_id(u) for u in ids)


def test_format_succeeds_if_at_least_one_directory_is_available(tmp_path):
    ok = tmp_path / "ok"
    bad = tmp_path / "file"
    bad.write_text("not a directory")
    rc, out, _ = run_format(tmp_path, {**STATIC_BROKER, "log.dirs": f"{ok},{bad}"})
    assert rc == 0
    assert f"Formatting metadata directory {ok}" in out
    assert f"I/O error trying to read log directory {bad}. Ignoring..." in out
    assert f"Formatting data directory {bad}" not in out and not (bad / "meta.properties").exists()


def test_format_fails_if_all_directories_are_unavailable(tmp_path):
    bad = tmp_path / "file"
    bad.write_text("x")
    rc, _, err = run_format(tmp_path, {**STATIC_BROKER, "log.dirs": str(bad)})
    assert rc == 1 and err == "No available log directories to format.\n"


def test_format_fails_on_already_formatted_and_ignore_formatted(tmp_path):
    props = {**STATIC_BROKER, "log.dirs": str(tmp_path / "d")}
    assert run_format(tmp_path, props)[0] == 0
    before = (tmp_path / "d" / "meta.properties").read_bytes()
    rc, _, err = run_format(tmp_path, props)
    assert rc == 1
    assert err == (f"Log directory {tmp_path / 'd'} is already formatted. Use "
                   "--ignore-formatted to ignore this directory and format the others.\n")
    rc, out, _ = run_format(tmp_path, props, ignore_formatted=True)
    assert rc == 0 and out == "All of the log directories are already formatted.\n"
    assert (tmp_path / "d" / "meta.properties").read_bytes() == before
    # another cluster's directory is never taken over, even with --ignore-formatted
    cfg = write_props(tmp_path, props, "other.props")
    rc, _, err = run(["format", "-t", "other", "-c", cfg, "-g"])
    assert rc == 1
    assert err.startswith(f"Invalid cluster.id in: {tmp_path / 'd' / 'meta.properties'}. "
                          f"Expected other, but read {CLUSTER_ID}")


@pytest.mark.parametrize("extra,version", [
    (["--release-version", "3.8-IV0"], "3.8-IV0"),
    (["--feature", "metadata.version=20"], "3.8-IV0"),
    (["--release-version", "3.7"], "3.7-IV4"),
    (["--release-version", "3.6.2"], "3.6-IV2"),
])
def test_format_with_release_version(tmp_path, extra, version):
    rc, out, err = run_format(tmp_path, {**STATIC_BROKER, "log.dirs": str(tmp_path / "d")}, extra)
    assert rc == 0, err
    assert f"with metadata.version {version}." in out


def test_format_with_unsupported_release_version(tmp_path):
    rc, _, err = run_format(tmp_path, {**STATIC_BROKER, "log.dirs": str(tmp_path / "d")},
                            ["--release-version", "3.3-IV1"])
    assert rc == 1 and err.startswith("Unknown metadata.version '3.3-IV1'. Supported "
                                      "metadata.version are: 3.3-IV3, 3.4-IV0,")
    assert err.rstrip().endswith("4.2-IV0, 4.2-IV1")
    assert not (tmp_path / "d").exists()


def test_format_with_invalid_feature(tmp_path):
    rc, _, err = run_format(tmp_path, {**STATIC_BROKER, "log.dirs": str(tmp_path / "d")},
                            ["--feature", "non.existent.feature=20"])
    assert rc == 1
    assert err == ("Unsupported feature: non.existent.feature. Supported features are: "
                   "eligible.leader.replicas.version, group.version, kraft.version, "
                   "share.version, streams.version, transaction.version\n")


def test_format_with_invalid_kraft_version_level(tmp_path):
    rc, _, err = run_format(tmp_path, {**DYNAMIC_CONTROLLER, "log.dirs": str(tmp_path / "d")},
                            ["--feature", "kraft.version=999", "--standalone"])
    assert rc == 1 and err == "No feature:kraft.version with feature level 999\n"


def test_format_release_version_and_feature_overrides(tmp_path):
    d = tmp_path / "d"
    rc, out, err = run_format(tmp_path, {**STATIC_BROKER, "log.dirs": str(d)},
                              ["--release-version", "3.8-IV0", "--feature", "share.version=1",
                               "--feature", "transaction.version=2", "--feature",
                               "group.version=1"])
    assert rc == 0, err
    md = bm.read_bootstrap_directory(d)
    assert [(md.feature_level(n)) for n in ("metadata.version", "share.version",
                                            "transaction.version", "group.version",
                                            "kraft.version")] == [20, 1, 2, 1, 0]
    assert "Formatting metadata directory" in out and "3.8-IV0" in out


def test_format_feature_dependency_refused(tmp_path):
    """ELR 1 depends on metadata.version 4.0-IV1 (Feature.validateVersion)."""
    rc, _, err = run_format(tmp_path, {**STATIC_BROKER, "log.dirs": str(tmp_path / "d")},
                            ["--release-version", "3.9-IV0", "--feature",
                             "eligible.leader.replicas.version=1"])
    assert rc == 1
    assert err == ("eligible.leader.replicas.version could not be set to 1 because it depends "
                   "on metadata.version level 23\n")


def test_format_release_version_both_ways_is_ambiguous(tmp_path):
    rc, _, err = run_format(tmp_path, {**STATIC_BROKER, "log.dirs": str(tmp_path / "d")},
                            ["--release-version", "3.8-IV0", "--feature", "metadata.version=20"])
    assert rc == 1
    assert err == ("Use --release-version instead of --feature metadata.version=X to avoid "
                   "ambiguity.\n")


def test_kraft_version_rules(tmp_path):
    props = {**STATIC_BROKER, "log.dirs": str(tmp_path / "d")}
    rc, _, err = run_format(tmp_path, props, ["--feature", "kraft.version=1"])
    assert rc == 1 and err.startswith("Cannot set kraft.version to 1 unless "
                                      "controller.quorum.voters is empty")
    dyn = {**DYNAMIC_CONTROLLER, "log.dirs": str(tmp_path / "e")}
    rc, _, err = run_format(tmp_path, dyn, ["--feature", "kraft.version=0", "--standalone"])
    assert rc == 1 and err.startswith("Cannot set kraft.version to 0 if "
                                      "controller.quorum.voters is empty")


def test_standalone_refused_on_broker_and_with_static_voters(tmp_path):
    broker = {"process.roles": "broker", "node.id": "0",
              "controller.listener.names": "CONTROLLER",
              "controller.quorum.bootstrap.servers": "localhost:9093",
              "log.dirs": str(tmp_path / "d")}
    rc, _, err = run_format(tmp_path, broker, ["--standalone"])
    assert rc == 1 and err == "You can only use --standalone on a controller.\n"
    static = {**DYNAMIC_CONTROLLER, "controller.quorum.voters": "0@localhost:9093",
              "log.dirs": str(tmp_path / "d")}
    for extra in (["--standalone"], ["--initial-controllers",
                                     "0@127.0.0.1:8020:K90IZ-0DRNazJ49kCZ1EMQ"]):
        rc, _, err = run_format(tmp_path, static, extra)
        assert rc == 1
        assert err.startswith("You cannot specify controller.quorum.voters and format the node "
                              "with --initial-controllers or --standalone.")
    rc, _, err = run_format(tmp_path, static, ["--no-initial-controllers"])
    assert rc == 0, err


def test_controller_without_voters_needs_a_quorum_flag(tmp_path):
    rc, _, err = run_format(tmp_path, {**DYNAMIC_CONTROLLER, "log.dirs": str(tmp_path / "d")})
    assert rc == 1
    assert err == ("Because controller.quorum.voters is not set on this controller, you must "
                   "specify one of the following: --standalone, --initial-controllers, or "
                   "--no-initial-controllers.\n")
    rc, out, err = run_format(tmp_path, {**DYNAMIC_CONTROLLER, "log.dirs": str(tmp_path / "d")},
                              ["--no-initial-controllers"])
    assert rc == 0, err
    assert f"Formatting metadata directory {tmp_path / 'd'}" in out
    assert not (tmp_path / "d" / "__cluster_metadata-0").exists()


@pytest.mark.parametrize("flags", [["--standalone", "--no-initial-controllers"],
                                   ["--initial-controllers", "0@a:1:K90IZ-0DRNazJ49kCZ1EMQ",
                                    "--no-initial-controllers"]])
def test_quorum_flags_are_exclusive(tmp_path, flags):
    rc, _, err = run_format(tmp_path, {**DYNAMIC_CONTROLLER, "log.dirs": str(tmp_path / "d")},
                            flags)
    assert rc == 1 and "not allowed with argument" in err


@pytest.mark.parametrize("set_kraft_version", [False, True])
def test_format_standalone(tmp_path, set_kraft_version):
    d = tmp_path / "d"
    extra = ["--standalone"] + (["--feature", "kraft.version=1"] if set_kraft_version else [])
    rc, out, err = run_format(tmp_path, {**DYNAMIC_CONTROLLER, "log.dirs": str(d)}, extra)
    assert rc == 0, err
    assert f"Formatting dynamic metadata voter directory {d}" in out
    snap = d / "__cluster_metadata-0" / kraft_snapshot.BOOTSTRAP_SNAPSHOT_NAME
    assert not stat.S_IMODE(snap.stat().st_mode) & 0o222  # frozen snapshots are read-only
    batches = list(iter_batches(snap.read_bytes()))
    assert [b.control_type() for b in batches] == ["SNAPSHOT_HEADER", "SNAPSHOT_FOOTER"]
    recs = list(batches[0])
    assert [r.offset for r in recs] == [0, 1, 2]
    assert kc.decode("KRAFT_VERSION", recs[1].value) == {"version": 0, "kRaftVersion": 1}
    voters = kc.decode("KRAFT_VOTERS", recs[2].value)["voters"]
    meta = mpe.read_meta_properties(d / "meta.properties")
    # the voter's directory id is the one its meta.properties gets (DYNAMIC_METADATA_VOTER)
    assert [(v["voterId"], v["voterDirectoryId"], v["endpoints"]) for v in voters] == [
        (0, str(meta.directory_id), [{"name": "CONTROLLER", "host": "127.0.0.1",
                                      "port": 9093}])]
    header = kc.decode("SNAPSHOT_HEADER", recs[0].value)
    assert header["lastContainedLogTimestamp"] == recs[0].timestamp > 0
    # the metadata log holds no leftover temp file
    assert sorted(os.listdir(snap.parent)) == [snap.name]


def test_format_initial_controllers(tmp_path):
    d = tmp_path / "d"
    controllers = ("0@127.0.0.1:8020:K90IZ-0DRNazJ49kCZ1EMQ,"
                   "1@127.0.0.1:8030:aUARLskQTCW4qCZDtS_cwA,"
                   "2@127.0.0.1:8040:2ggvsS4kQb-fSJ_-zC_Ang")
    rc, out, err = run_format(tmp_path, {**DYNAMIC_CONTROLLER, "log.dirs": str(d)},
                              ["--initial-controllers", controllers])
    assert rc == 0, err
    assert f"Formatting dynamic metadata voter directory {d}" in out
    assert str(mpe.read_meta_properties(d / "meta.properties").directory_id) == \
        "K90IZ-0DRNazJ49kCZ1EMQ"
    snap = d / "__cluster_metadata-0" / kraft_snapshot.BOOTSTRAP_SNAPSHOT_NAME
    voters = kc.decode("KRAFT_VOTERS", list(next(iter_batches(snap.read_bytes())))[2].value)
    assert [v["voterId"] for v in voters["voters"]] == [0, 1, 2]


def test_format_non_voter_of_a_dynamic_quorum(tmp_path):
    """A controller formatted with initial controllers it is not one of: a dynamic metadata
    directory with a random id, and the snapshot still names the voters."""
    d = tmp_path / "d"
    props = {**DYNAMIC_CONTROLLER, "node.id": "5", "log.dirs": str(d)}
    rc, out, err = run_format(tmp_path, props, ["--initial-controllers",
                                                "0@127.0.0.1:8020:K90IZ-0DRNazJ49kCZ1EMQ"])
    assert rc == 0, err
    assert f"Formatting dynamic metadata directory {d}" in out
    assert str(mpe.read_meta_properties(d / "meta.properties").directory_id) != \
        "K90IZ-0DRNazJ49kCZ1EMQ"


def test_version_mapping():
    rc, out, _ = run(["version-mapping", "--release-version", "3.3-IV3"])
    assert rc == 0
    assert out == ("metadata.version=7 (3.3-IV3)\nkraft.version=0\ntransaction.version=0\n"
                   "group.version=0\neligible.leader.replicas.version=0\nshare.version=0\n"
                   "streams.version=0\n")
    rc, out, _ = run(["version-mapping"])
    assert out == ("metadata.version=29 (4.2-IV1)\nkraft.version=1\ntransaction.version=2\n"
                   "group.version=1\neligible.leader.replicas.version=1\nshare.version=1\n"
                   "streams.version=1\n")
    for bad in ("2.9-IV2", "invalid"):
        rc, _, err = run(["version-mapping", "--release-version", bad])
        assert rc == 1
        assert err.startswith(f"Unknown metadata.version '{bad}'. Supported metadata.version "
                              "are: 3.3-IV3, ")
        assert err.rstrip().endswith("4.2-IV1, 4.3-IV0")  # (unstable ones allowed here)


def test_feature_dependencies():
    rc, out, _ = run(["feature-dependencies", "--feature", "eligible.leader.replicas.version=1",
                      "--feature", "group.version=1", "--feature", "metadata.version=17"])
    assert rc == 0
    assert out == ("eligible.leader.replicas.version=1 requires:\n"
                   "    metadata.version=23 (4.0-IV1)\n"
                   "group.version=1 has no dependencies.\n"
                   "metadata.version=17 (3.7-IV2) has no dependencies.\n")
    for spec, text in [
        ("unknown.feature.version=1", "Unknown feature: unknown.feature.version"),
        ("transaction.version=1000",
         "Feature level 1000 is not supported for feature transaction.version"),
        ("metadata.version=invalid", "Invalid version format: invalid for feature "
                                     "metadata.version"),
        ("metadata.version", "Invalid feature format: metadata.version. Expected format: "
                             "'feature=version' (e.g. 'group.version=1')"),
    ]:
        rc, _, err = run(["feature-dependencies", "--feature", spec])
        assert (rc, err) == (1, text + "\n")


def test_bootstrap_scram_records(tmp_path):
    d = tmp_path / "d"
    rc, _, err = run_format(tmp_path, {**STATIC_BROKER, "log.dirs": str(d)}, [
        "--release-version", "3.9-IV0",
        "--add-scram", "SCRAM-SHA-512=[name=alice,password=changeit]",
        "--add-scram", 'SCRAM-SHA-512=[name=bob,salt="MWx0OHN0",'
                       'saltedpassword="mT0yyUUxnlJaC99HXgRTSYlbuqa4FSGtJCJfTMvjYCE=",'
                       'iterations=8192]'])
    assert rc == 0, err
    recs = [r for r in bm.read_bootstrap_directory(d).records
            if r.name == "UserScramCredentialRecord"]
    assert [r.data["name"] for r in recs] == ["alice", "bob"]
    # the stored key and server key follow from the salted password (RFC 5802), as
    # kafkalog serve's SCRAM authenticator checks them
    from kafkalog.security.scram_credentials import ScramCredential
    alice = recs[0].data
    want = ScramCredential.from_password("SCRAM-SHA-512", "changeit", 4096, alice["salt"])
    assert (alice["storedKey"], alice["serverKey"], alice["iterations"]) == (
        want.stored_key, want.server_key, 4096)
    assert alice["salt"].isascii() and alice["salt"].isalnum()  # base 36 digits
    bob = recs[1].data
    assert bob["salt"] == b"1lt8st" and bob["iterations"] == 8192
    import base64
    given = base64.b64decode("mT0yyUUxnlJaC99HXgRTSYlbuqa4FSGtJCJfTMvjYCE=")
    want = ScramCredential.from_salted_password("SCRAM-SHA-512", b"1lt8st", given, 8192)
    assert (bob["storedKey"], bob["serverKey"]) == (want.stored_key, want.server_key)
    # (the salted password itself is never stored)
    assert given not in (bob["storedKey"], bob["serverKey"], bob["salt"])


def test_scram_records_old_release_version(tmp_path):
    rc, _, err = run_format(tmp_path, {**STATIC_BROKER, "log.dirs": str(tmp_path / "d")}, [
        "--release-version", "3.4-IV0",
        "--add-scram", "SCRAM-SHA-256=[name=alice,password=changeit]"])
    assert (rc, err) == (1, "SCRAM is only supported in metadata.version 3.5-IV2 or later.\n")


def test_parse_name_and_level():
    assert command.parse_name_and_level("foo.bar=56") == ("foo.bar", 56)
    with pytest.raises(FormatterError, match="Can't parse feature=level string kraft.version5: "
                                             "equals sign not found."):
        command.parse_name_and_level("kraft.version5")
    with pytest.raises(FormatterError, match="unable to parse foo as a short."):
        command.parse_name_and_level("kraft.version=foo")


def test_random_uuid():
    rc, out, _ = run(["random-uuid"])
    u = Uuid.from_string(out.strip())
    assert rc == 0 and len(out.strip()) == 22 and not out.startswith("-")
    assert u != Uuid.from_string(run(["random-uuid"])[1].strip())


def test_config_errors_name_the_property(tmp_path):
    cases = [
        ({"node.id": "1"}, 'Missing required configuration "process.roles"'),
        ({"process.roles": "broker,router", "node.id": "1"}, "Unknown process role 'router'"),
        ({**STATIC_BROKER, "node.id": "100"}, "the node id 100 must not be included in the set "
                                              "of voters controller.quorum.voters=Set(100)"),
        ({"process.roles": "broker", "node.id": "0", "controller.listener.names": "CONTROLLER"},
         "either controller.quorum.bootstrap.servers must contain"),
        ({**STATIC_BROKER, "controller.quorum.voters": "abc@host:1"},
         "Failed to parse voter ID as an integer from abc"),
    ]
    for props, text in cases:
        rc, _, err = run(["info", "-c", write_props(tmp_path, props)])
        assert rc == 1 and text in err, (props, err)


# -- FormatterTest / MetaPropertiesEnsembleTest / DynamicVoterTest / ScramParserTest -----------

def test_formatter_requirements(tmp_path):
    base = dict(node_id=1, cluster_id=CLUSTER_ID, directories=[str(tmp_path / "a")],
                controller_listener_name="CONTROLLER")
    for change, text in [
        ({"node_id": -1}, "You must specify a valid non-negative node ID."),
        ({"cluster_id": None}, "You must specify the cluster id."),
        ({"directories": []}, "You must specify at least one directory to format"),
        ({"controller_listener_name": None},
         "You must specify the name of the initial controller listener."),
        ({"metadata_log_directory": "/nope"},
         f"The specified metadata log directory, /nope was not one of the given directories: "
         f"[{tmp_path / 'a'}]"),
        ({"release_version": "4.3-IV0"}, "Unknown metadata.version '4.3-IV0'"),
        ({"feature_levels": {"metadata.version": 30}}, "metadata.version 4.3-IV0 is not yet "
                                                       "stable."),
    ]:
        with pytest.raises(FormatterError) as e:
            Formatter(**{**base, **change}).run()
        assert e.value.message.startswith(text)
    # unstable versions with the switch on
    md = Formatter(**base, release_version="4.3-IV0",
                   unstable_feature_versions_enabled=True).run()
    assert md.metadata_version_level == 30


def test_formatter_writes_in_hash_map_order(tmp_path):
    dirs = [str(tmp_path / n) for n in ("alpha", "beta", "gamma", "delta")]
    f = Formatter(node_id=1, cluster_id=CLUSTER_ID, directories=dirs,
                  controller_listener_name="CONTROLLER", out=io.StringIO())
    f.run()
    from kafkalog.decoders.jvm_order import java_hash_map_order
    assert f.written == java_hash_map_order(sorted(dirs))
    lines = [ln for ln in f.out.getvalue().splitlines() if ln.startswith("Formatting")]
    assert [ln.split()[3] for ln in lines] == f.written


def test_ensemble_verify_rules(tmp_path):
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    u1 = Uuid.from_string("K90IZ-0DRNazJ49kCZ1EMQ")
    ens = mpe.MetaPropertiesEnsemble(frozenset(), frozenset(), {
        a: MetaProperties(1, "c1", 1, u1), b: MetaProperties(1, "c1", 1, u1)})
    with pytest.raises(mpe.MetaPropertiesError, match=f"Duplicate directory ID Optional\\[{u1}\\] "
                                                      f"found. It was the ID of {a}, but also "
                                                      f"of {b}"):
        ens.verify()
    ens = mpe.MetaPropertiesEnsemble(frozenset(), frozenset(), {
        a: MetaProperties(1, "c1", 1, Uuid(0, 1))})
    with pytest.raises(mpe.MetaPropertiesError, match="Invalid reserved directory ID"):
        ens.verify()
    ens = mpe.MetaPropertiesEnsemble(frozenset(), frozenset(), {
        a: MetaProperties(1, "c1", 1), b: MetaProperties(1, "c1", 2)})
    with pytest.raises(mpe.MetaPropertiesError, match="Stored node id 2 doesn't match previous "
                                                      "node id 1"):
        ens.verify()
    with pytest.raises(mpe.MetaPropertiesError, match="Found unexpected version"):
        mpe.MetaPropertiesEnsemble(frozenset(), frozenset(), {
            a: MetaProperties(1, "c1", 1)}).verify(flags=[mpe.REQUIRE_V0])
    with pytest.raises(mpe.MetaPropertiesError, match="No readable meta.properties files"):
        mpe.MetaPropertiesEnsemble(frozenset([a]), frozenset(), {}).verify(
            flags=[mpe.REQUIRE_AT_LEAST_ONE_VALID])
    with pytest.raises(mpe.MetaPropertiesError, match=f"Encountered I/O error in metadata log "
                                                      f"directory {a}"):
        mpe.MetaPropertiesEnsemble(frozenset(), frozenset([a]), {}, a).verify()


def test_meta_properties_builder_texts():
    for props, text in [
        ({"version": "x"}, "Invalid meta.properties version string 'x'"),
        ({"version": "2"}, "Unknown meta.properties version number 2"),
        ({"version": "1", "cluster.id": "c"}, "Failed to find node.id"),
        ({"version": "0", "broker.id": "one"}, "Unable to read broker.id as a base-10 number."),
        ({"version": "1", "node.id": "1"}, "cluster.id was not found."),
        ({"version": "1", "node.id": "1", "cluster.id": "c", "directory.id": "!"},
         "Unable to read directory.id as a Uuid: "),
    ]:
        with pytest.raises(CorruptCheckpointError) as e:
            MetaProperties.from_properties(props, path="p")
        assert e.value.message.startswith(text) and e.value.path == "p"
    assert MetaProperties.from_properties({}) == MetaProperties(0)  # v0: nothing required


def test_load_sorts_directories(tmp_path):
    ok, empty, bad = (str(tmp_path / n) for n in ("ok", "empty", "bad"))
    os.makedirs(ok)
    os.makedirs(empty)
    os.makedirs(bad)
    MetaProperties(1, "c", 1).write(Path(ok) / "meta.properties")
    Path(bad, "meta.properties").write_text("version=7\n")
    ens = mpe.load([ok, empty, bad])
    assert ens.empty_log_dirs == {empty} and ens.error_log_dirs == {bad}
    assert set(ens.log_dir_props) == {ok}
    assert ens.errors[bad] == "Unknown meta.properties version number 7"
    with pytest.raises(mpe.MetaPropertiesError, match="at least one log directory"):
        mpe.load([])


@pytest.mark.parametrize("text,want", [
    ("2@localhost:8020:K90IZ-0DRNazJ49kCZ1EMQ", (2, "localhost", 8020)),
    ("5@[2001:4860:4860::8888]:8020:__0IZ-0DRNazJ49kCZ1EMQ", (5, "2001:4860:4860::8888", 8020)),
    (" 7@a:1:K90IZ-0DRNazJ49kCZ1EMQ ", (7, "a", 1)),
])
def test_dynamic_voter_parse(text, want):
    v = DynamicVoter.parse(text)
    assert (v.node_id, v.host, v.port) == want
    assert DynamicVoter.parse(str(v)) == v


@pytest.mark.parametrize("text,error", [
    ("localhost:8020:K90IZ-0DRNazJ49kCZ1EMQ", "No @ found in dynamic voter string."),
    ("@localhost:8020:K90IZ-0DRNazJ49kCZ1EMQ", "Invalid @ at beginning of dynamic voter string."),
    ("abc@localhost:8020:K90IZ-0DRNazJ49kCZ1EMQ", "Failed to parse node id in dynamic voter "
                                                  "string."),
    ("-1@localhost:8020:K90IZ-0DRNazJ49kCZ1EMQ", "Invalid negative node id -1 in dynamic voter "
                                                 "string."),
    ("2@", "No hostname found after node id."),
    ("2@[2001:4860:4860::8888:8020:K90IZ-0DRNazJ49kCZ1EMQ", "Hostname began with left bracket, "
                                                           "but no right bracket was found."),
    ("2@localhost", "No colon following hostname could be found."),
    ("2@[::1]8020:K90IZ-0DRNazJ49kCZ1EMQ", "Port section must start with a colon."),
    ("2@localhost:8020K90IZ-0DRNazJ49kCZ1EMQ", "No colon following port could be found."),
    ("2@localhost:8020x:K90IZ-0DRNazJ49kCZ1EMQ", "Failed to parse port in dynamic voter string."),
    ("2@localhost:98765:K90IZ-0DRNazJ49kCZ1EMQ", "Invalid port 98765 in dynamic voter string."),
    ("2@localhost:8020:K90IZ-0DRNazJ49kCZ1EM", "Failed to parse directory ID in dynamic voter "
                                               "string."),
])
def test_dynamic_voter_errors(text, error):
    with pytest.raises(VotersError) as e:
        DynamicVoter.parse(text)
    assert str(e.value) == error


def test_dynamic_voters_rules():
    with pytest.raises(VotersError, match="No voters given."):
        DynamicVoters.parse(",")
    with pytest.raises(VotersError, match="Node id 1 was specified more than once."):
        DynamicVoters.parse("1@a:1:K90IZ-0DRNazJ49kCZ1EMQ,1@b:2:aUARLskQTCW4qCZDtS_cwA")
    # VotersRecord in HashMap<Integer> order: ids 16 and 1 share bucket 1 of a 16-slot
    # table (and of the copy's 4-slot one), so 16 stays after 1 by insertion order
    v = DynamicVoters.parse("16@a:1:K90IZ-0DRNazJ49kCZ1EMQ,1@b:2:aUARLskQTCW4qCZDtS_cwA,"
                            "2@c:3:2ggvsS4kQb-fSJ_-zC_Ang")
    assert [x["voterId"] for x in v.voters_record("c")["voters"]] == [16, 1, 2]


@pytest.mark.parametrize("arg,error", [
    ("SCRAM-SHA-256", "Failed to find equals sign in SCRAM argument 'SCRAM-SHA-256'"),
    ("SCRAM-SHA-1=[name=a,password=b]", "The add-scram mechanism SCRAM-SHA-1 is not supported."),
    ("SCRAM-SHA-256=name=a]", "Expected configuration string to start with ["),
    ("SCRAM-SHA-256=[name=a", "Expected configuration string to end with ]"),
    ("SCRAM-SHA-256=[password=b]", "You must supply 'name' to add-scram"),
    ("SCRAM-SHA-256=[name=a]", "You must supply one of 'password' or 'saltedpassword' to "
                               "add-scram"),
    ("SCRAM-SHA-256=[name=a,saltedpassword=YCE=]", "You must supply 'salt' with 'saltedpassword' "
                                                   "to add-scram"),
    ("SCRAM-SHA-256=[name=a,password=b,salt=%%%]", "Failed to decode given salt: %%%"),
    ("SCRAM-SHA-256=[name=a,password=b,iterations=many]", "Failed to parse iterations count: "
                                                          "many"),
    ("SCRAM-SHA-256=[name=a,password=b,iterations=100]", "The 'iterations' value must be >= 4096 "
                                                         "for add-scram using SCRAM_SHA_256"),
    ("SCRAM-SHA-512=[name=a,password=b,iterations=100000]", "The 'iterations' value must be <= "
                                                            "16384 for add-scram using "
                                                            "SCRAM_SHA_512"),
    ("SCRAM-SHA-256=[name=a,password=b,color=red]", "Unknown SCRAM configurations: color"),
    ("SCRAM-SHA-256=[name=a,password]", "No equals sign found in SCRAM component: password"),
])
def test_scram_parser_errors(arg, error):
    with pytest.raises(FormatterError) as e:
        bm.parse_scram_arguments([arg])
    assert e.value.message == error


def test_bootstrap_metadata_rules(tmp_path):
    md = BootstrapMetadata.from_versions(29, {"metadata.version": 29, "kraft.version": 1,
                                              "transaction.version": 2, "group.version": 0})
    # kraft.version never gets a record, a level-0 feature neither; names sorted
    assert [(r.data["name"], r.data["featureLevel"]) for r in md.records] == [
        ("metadata.version", 29), ("transaction.version", 2)]
    assert md.feature_level("kraft.version") == 0
    with pytest.raises(FormatterError, match="No FeatureLevelRecord for metadata.version was "
                                             "found in the bootstrap metadata from x"):
        BootstrapMetadata.from_records([], "x")
    assert bm.read_bootstrap_directory(tmp_path).source == "the default bootstrap"
    with pytest.raises(FormatterError, match="No such directory as"):
        bm.read_bootstrap_directory(tmp_path / "missing")
    # a corrupt bootstrap file is reported with its path, never taken as empty
    (tmp_path / "bootstrap.checkpoint").write_bytes(
        kraft_snapshot.bootstrap_checkpoint_bytes([cm.encode_record(
            "FeatureLevelRecord", {"name": "metadata.version", "featureLevel": 19})])[:-3])
    from kafkalog.errors import CorruptRecordError
    with pytest.raises(CorruptRecordError) as e:
        bm.read_bootstrap_directory(tmp_path)
    assert e.value.path.endswith("bootstrap.checkpoint") and e.value.position == 174


def test_cli_dispatch(tmp_path, capsys):
    from kafkalog.cli import main

    assert main(["storage", "version-mapping", "-r", "3.8-IV0"]) == 0
    assert capsys.readouterr().out.startswith("metadata.version=20 (3.8-IV0)\n")
    assert main(["storage", "format"]) == 1


def test_verify_reports_a_cut_bootstrap_checkpoint(tmp_path):
    """kafkalog verify: a formatted metadata dir is clean; a cut bootstrap.checkpoint (the
    footer half written) is an error naming the file and the position of the partial batch."""
    from kafkalog.tools.verify import verify_paths

    d = tmp_path / "meta"
    Formatter(node_id=1, cluster_id=CLUSTER_ID, directories=[str(d)],
              controller_listener_name="CONTROLLER").run()
    assert [f for f in verify_paths([str(d)]).findings if f.severity == "error"] == []
    path = d / "bootstrap.checkpoint"
    data = path.read_bytes()
    path.write_bytes(data[:-10])
    errors = [f for f in verify_paths([str(d)]).findings if f.severity == "error"]
    assert [(f.check, f.file) for f in errors] == [("bootstrap", str(path))]
    assert errors[0].position == len(data) - 75  # the footer batch is 75 bytes


@given(node_id=st.integers(0, 2**31 - 1), port=st.integers(0, 65535),
       host=st.one_of(st.from_regex(r"[a-z0-9][a-z0-9.-]{0,20}", fullmatch=True),
                      st.ip_addresses(v=6).map(str)),
       bits=st.integers(0, 2**128 - 1))
@settings(max_examples=200, deadline=None)
def test_dynamic_voter_round_trip(node_id, port, host, bits):
    """Any voter prints as a string that parses back to it (IPv6 hosts bracketed), and the
    bootstrap snapshot's VotersRecord reads back with kio to the same voter."""
    from kio.schema.voters_record.v0 import VotersRecord
    from kio.serial import entity_reader

    u = Uuid.from_bytes(bits.to_bytes(16, "big"))
    v = DynamicVoter(u, node_id, host, port)
    assert DynamicVoter.parse(str(v)) == v
    rec, _ = entity_reader(VotersRecord)(memoryview(kc.encode(
        "KRAFT_VOTERS", DynamicVoters([v]).voters_record("ctl"))), 0)
    [got] = rec.voters
    # (kio reads Kafka's zero Uuid as None)
    dir_bytes = got.voter_directory_id.bytes if got.voter_directory_id else bytes(16)
    assert (got.voter_id, dir_bytes, got.endpoints[0].host,
            got.endpoints[0].port) == (node_id, u.to_bytes(), host, port)


def test_info_on_directories_real_brokers_wrote():
    """meta.properties files Kafka brokers wrote (3.7 KRaft, 2.x and ZooKeeper era): read with
    their ids; together, the tool reports what a broker would refuse (two clusters)."""
    real = FIXTURE.parent
    kraft, zk = real / "LDI-POC", real / "VolodymyrZee-kafka"
    if not (kraft / "meta.properties").exists() or not (zk / "meta.properties").exists():
        pytest.skip("shared fixtures not present")
    rc, out, _ = run(["info", "--log-dir", str(kraft)])
    assert rc == 0
    assert out == (f"Found log directory:\n  {kraft}\n\nFound metadata: "
                   "{cluster.id=q1w2e3r4t5y6u7i8o9p0, directory.id=XHhkr4tkSsD900pOQ8pPfg, "
                   "node.id=1, version=1}\n\n")
    rc, out, _ = run(["info", "--log-dir", str(zk)])
    assert rc == 0
    assert "Found metadata: {broker.id=0, cluster.id=lRaQCIBoRh2xRKLuP9CAQg, version=0}" in out
    rc, out, _ = run(["info", "--log-dir", str(kraft), "--log-dir", str(zk)])
    assert rc == 1 and out.endswith("Found problem:\n  Mismatched cluster IDs between storage "
                                    "directories.\n\n")
    # a KRaft config over the ZooKeeper-era directory: the broker would refuse it
    out_io = io.StringIO()
    assert command.info(out_io, True, [str(zk)]) == 1
    assert "formatted for legacy mode" in out_io.getvalue()
    # and format refuses to take over a directory of another cluster
    ens = mpe.load([str(kraft)])
    with pytest.raises(mpe.MetaPropertiesError, match="Invalid cluster.id"):
        ens.verify(expected_cluster_id=CLUSTER_ID, expected_node_id=1)
