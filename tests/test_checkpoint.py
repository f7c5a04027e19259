"""Text checkpoints, partition.metadata, meta.properties and Kafka's Uuid."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalog import checkpoint as cp
from kafkalog.checkpoint import (
    METADATA_TOPIC_ID,
    ZERO_UUID,
    CheckpointFile,
    EntryFormatter,
    EpochEntry,
    LeaderEpochCheckpointFile,
    MetaProperties,
    OffsetCheckpointFile,
    PartitionMetadata,
    PartitionMetadataFile,
    Uuid,
    atomic_write,
    format_properties,
    java_properties_key_order,
    read_properties,
)
from kafkalog.errors import CorruptCheckpointError
from tests.conftest import shared_fixture_path

REAL_DIRS = ("KAIPASUBHASH-kafka-logs", "LDI-POC", "VolodymyrZee-kafka")
ROOT_CHECKPOINTS = (
    "recovery-point-offset-checkpoint",
    "replication-offset-checkpoint",
    "log-start-offset-checkpoint",
    "cleaner-offset-checkpoint",
)


# -- generic text checkpoint -----------------------------------------------------------------------


def _offsets(tmp_path: Path, text: bytes) -> OffsetCheckpointFile:
    p = tmp_path / "replication-offset-checkpoint"
    p.write_bytes(text)
    return OffsetCheckpointFile(p)


def test_write_format_and_round_trip(tmp_path: Path) -> None:
    f = OffsetCheckpointFile(tmp_path / "recovery-point-offset-checkpoint")
    assert f.read() == {}  # missing file: no entries (Kafka creates it empty)
    offsets = {("orders", 3): 17, ("my-topic.v2", 0): 2**62, ("t", 2**31 - 1): 0}
    f.write(offsets)
    assert f.path.read_bytes() == (
        b"0\n3\norders 3 17\nmy-topic.v2 0 4611686018427387904\nt 2147483647 0\n"
    )
    assert f.read() == offsets and list(f.read()) == list(offsets)
    assert not (tmp_path / "recovery-point-offset-checkpoint.tmp").exists()
    f.write({})
    assert f.path.read_bytes() == b"0\n0\n" and f.read() == {}


@pytest.mark.parametrize(
    "text, entries",
    [
        (b"", {}),
        (b"0\n", {}),  # a version line alone: empty, as in Kafka
        (b"0", {}),
        (b"0\n1\nt\t1   5\n", {("t", 1): 5}),  # any whitespace on read
        (b"0\r\n1\r\nt 1 5\r\n", {("t", 1): 5}),  # readLine accepts \r\n and \r
        (b"0\n1\nt 1 5  \n", {("t", 1): 5}),  # trailing whitespace: trailing empties dropped
        (b"0\n1\nt 1 5", {("t", 1): 5}),  # no final newline
        (b"0\n1\nt 1 -1\n", {("t", 1): -1}),
    ],
)
def test_lenient_where_kafka_is(tmp_path: Path, text: bytes, entries: dict) -> None:
    assert _offsets(tmp_path, text).read() == entries


@pytest.mark.parametrize(
    "text, match, line",
    [
        (b"1\n0\n", "unrecognised version (expected 0, found 1)", 1),
        (b"x\n0\n", "expected an integer, found 'x'", 1),
        (b" 0\n0\n", "expected an integer, found ' 0'", 1),
        (b"0\ntwo\n", "expected an integer, found 'two'", 2),
        (b"0\n1\nt 1\n", "malformed line 't 1'", 3),
        (b"0\n1\nt 1 5 6\n", "malformed line", 3),
        (b"0\n1\n t 1 5\n", "malformed line", 3),  # leading whitespace: 4 parts in Java
        (b"0\n1\nt x 5\n", "malformed line", 3),
        (b"0\n1\nt 1 5.0\n", "malformed line", 3),
        (b"0\n1\nt 2147483648 5\n", "malformed line", 3),  # partition is an int32
        (b"0\n1\nt 1 9223372036854775808\n", "malformed line", 3),
        (b"0\n2\nt 1 5\n\n", "malformed line ''", 4),  # a blank line is an entry that fails
        (b"0\n2\nt 1 5\n", "expected 2 entries, found 1", 2),
        (b"0\n0\nt 1 5\n", "expected 0 entries, found 1", 2),
    ],
)
def test_strict_errors_name_file_and_line(tmp_path: Path, text: bytes, match: str, line: int):
    f = _offsets(tmp_path, text)
    with pytest.raises(CorruptCheckpointError, match=re.escape(match)) as e:
        f.read()
    assert e.value.path == str(f.path)
    assert f"line {line}:" in str(e.value)
    line_start = sum(len(x) + 1 for x in text.split(b"\n")[: line - 1])
    assert e.value.position == line_start


def test_not_utf8(tmp_path: Path) -> None:
    with pytest.raises(CorruptCheckpointError, match="not UTF-8") as e:
        _offsets(tmp_path, b"0\n1\nt\xff 1 5\n").read()
    assert e.value.position == 5


def test_topic_with_space_refused_on_write(tmp_path: Path) -> None:
    f = OffsetCheckpointFile(tmp_path / "c")
    with pytest.raises(ValueError):
        f.write({("bad topic", 0): 1})
    assert not f.path.exists()


def test_generic_checkpoint_with_custom_formatter(tmp_path: Path) -> None:
    fmt: EntryFormatter[int] = EntryFormatter(str, lambda s: int(s) if s.isdigit() else None)
    f = CheckpointFile(tmp_path / "x", 3, fmt)
    f.write([1, 2, 30])
    assert f.path.read_text() == "3\n3\n1\n2\n30\n" and f.read() == [1, 2, 30]
    assert f.parse(b"3\n1\n7") == [7]


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(
    st.tuples(st.text("abcXYZ._-019", min_size=1, max_size=12), st.integers(0, 2**31 - 1)),
    st.integers(-1, 2**63 - 1), max_size=20))
def test_offset_checkpoint_round_trip_property(tmp_path_factory, offsets) -> None:
    f = OffsetCheckpointFile(tmp_path_factory.mktemp("c") / "cp")
    f.write(offsets, sync=False)
    assert f.read() == offsets


@pytest.mark.parametrize("folder", REAL_DIRS)
def test_real_offset_checkpoints_byte_for_byte(tmp_path: Path, folder: str) -> None:
    root = shared_fixture_path("kafka-real", folder)
    found = 0
    for name in ROOT_CHECKPOINTS:
        src = root / name
        if not src.exists():
            continue
        found += 1
        offsets = OffsetCheckpointFile(src).read()
        out = OffsetCheckpointFile(tmp_path / name)
        out.write(offsets)
        assert out.path.read_bytes() == src.read_bytes(), src
    assert found >= 3
    if folder == "LDI-POC":
        assert OffsetCheckpointFile(root / "replication-offset-checkpoint").read()[
            ("__consumer_offsets", 6)
        ] == 13


# -- leader-epoch-checkpoint -----------------------------------------------------------------------


def test_leader_epoch_checkpoint(tmp_path: Path) -> None:
    p = LeaderEpochCheckpointFile.new_file(tmp_path)
    assert p.name == "leader-epoch-checkpoint"
    f = LeaderEpochCheckpointFile(p)
    f.write([EpochEntry(0, 0), EpochEntry(3, 120), EpochEntry(7, 2**40)])
    assert p.read_bytes() == b"0\n3\n0 0\n3 120\n7 1099511627776\n"
    assert f.read()[1] == EpochEntry(epoch=3, start_offset=120)
    p.write_bytes(b"0\n1\n0 0 0\n")
    with pytest.raises(CorruptCheckpointError, match="line 3: malformed line"):
        f.read()
    p.write_bytes(b"0\n1\n2147483648 0\n")
    with pytest.raises(CorruptCheckpointError):
        f.read()


def test_real_leader_epoch_checkpoints_byte_for_byte(tmp_path: Path) -> None:
    root = shared_fixture_path("kafka-real")
    files = sorted(root.glob("*/*/leader-epoch-checkpoint"))
    assert len(files) >= 10
    for src in files:
        entries = LeaderEpochCheckpointFile(src).read()
        assert entries
        out = LeaderEpochCheckpointFile(tmp_path / "leader-epoch-checkpoint")
        out.write(entries)
        assert out.path.read_bytes() == src.read_bytes(), src
    meta = LeaderEpochCheckpointFile(root / "LDI-POC/__cluster_metadata-0/leader-epoch-checkpoint")
    assert meta.read() == [EpochEntry(1, 0)]


# -- atomic write ----------------------------------------------------------------------------------


def test_atomic_write_failure_keeps_old_file(tmp_path: Path, monkeypatch) -> None:
    p = tmp_path / "cp"
    p.write_bytes(b"old")

    def boom(src, dst):
        raise OSError("disk gone")

    monkeypatch.setattr(cp.os, "replace", boom)
    with pytest.raises(OSError, match="disk gone"):
        atomic_write(p, b"new")
    monkeypatch.undo()
    assert p.read_bytes() == b"old" and not (tmp_path / "cp.tmp").exists()
    atomic_write(p, b"new", sync=False)
    assert p.read_bytes() == b"new"


# -- Uuid ------------------------------------------------------------------------------------------


def test_uuid_string_form() -> None:
    assert str(ZERO_UUID) == "AAAAAAAAAAAAAAAAAAAAAA"
    assert str(METADATA_TOPIC_ID) == "AAAAAAAAAAAAAAAAAAAAAQ"
    u = Uuid.from_string("XHhkr4tkSsD900pOQ8pPfg")
    assert str(u) == "XHhkr4tkSsD900pOQ8pPfg" and Uuid.from_bytes(u.to_bytes()) == u
    assert Uuid(-1, -1) == Uuid.from_string("_____________________w")
    assert Uuid.from_string("XHhkr4tkSsD900pOQ8pPfg==") == u  # Java's decoder accepts padding


@pytest.mark.parametrize(
    "text",
    ["", "AAAA", "XHhkr4tkSsD900pOQ8pPf", "XHhkr4tkSsD900pOQ8pPfgAA", "XHhkr4tkSsD900pO+8pPfg",
     "XHhkr4tkSsD900pO 8pPfg", "A" * 25, "XHhkr4tkSsD900pOQ8pPf=g"],
)
def test_uuid_invalid_strings(text: str) -> None:
    with pytest.raises(ValueError):
        Uuid.from_string(text)


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=16, max_size=16))
def test_uuid_round_trip_property(raw: bytes) -> None:
    u = Uuid.from_bytes(raw)
    s = str(u)
    assert len(s) == 22 and Uuid.from_string(s) == u and u.to_bytes() == raw


def test_uuid_random() -> None:
    for _ in range(50):
        u = Uuid.random()
        assert u not in (ZERO_UUID, METADATA_TOPIC_ID) and not str(u).startswith("-")
        assert (u.to_bytes()[6] >> 4) == 4


# -- partition.metadata ----------------------------------------------------------------------------


def test_partition_metadata_write_read(tmp_path: Path) -> None:
    f = PartitionMetadataFile(tmp_path / "partition.metadata")
    u = Uuid.from_string("gSnfpEbtQfSDpxM2lhEn9A")
    f.write(u)
    assert f.path.read_bytes() == b"version: 0\ntopic_id: gSnfpEbtQfSDpxM2lhEn9A"
    assert f.read() == PartitionMetadata(0, u)
    with pytest.raises(ValueError, match="zero Uuid"):
        f.write(ZERO_UUID)


@pytest.mark.parametrize(
    "text, match",
    [
        (b"", "line 1: malformed line .*found end of file"),
        (b"version: 0", "line 2: malformed line .*found end of file"),
        (b"version:0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ", "line 1: malformed line"),
        (b"vers: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ", "line 1: malformed line"),
        (b"version: x\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ", "malformed version"),
        (b"version: -1\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ", "expected >= 0, found -1"),
        (b"version: 0\ntopicid: AAAAAAAAAAAAAAAAAAAAAQ", "line 2: malformed line"),
        (b"version: 0\ntopic_id: notauuid", "line 2: malformed topic id"),
        (b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA", "expected a non-zero Uuid"),
        (b"version: 0\ntopic_id: \xff", "not UTF-8"),
    ],
)
def test_partition_metadata_errors(tmp_path: Path, text: bytes, match: str) -> None:
    p = tmp_path / "partition.metadata"
    p.write_bytes(text)
    with pytest.raises(CorruptCheckpointError, match=match) as e:
        PartitionMetadataFile(p).read()
    assert e.value.path == str(p)


def test_partition_metadata_accepts_newer_version_and_extra_lines(tmp_path: Path) -> None:
    p = tmp_path / "partition.metadata"
    p.write_bytes(b"version: 3\ntopic_id:  AAAAAAAAAAAAAAAAAAAAAQ\nfuture: x\n")
    assert PartitionMetadataFile(p).read() == PartitionMetadata(3, METADATA_TOPIC_ID)


def test_real_partition_metadata_byte_for_byte(tmp_path: Path) -> None:
    root = shared_fixture_path("kafka-real", "LDI-POC")
    files = sorted(root.glob("*/partition.metadata"))
    assert len(files) == 3
    for src in files:
        m = PartitionMetadataFile(src).read()
        out = PartitionMetadataFile(tmp_path / "partition.metadata")
        out.write(m.topic_id)
        assert out.path.read_bytes() == src.read_bytes()
    assert PartitionMetadataFile(root / "__cluster_metadata-0/partition.metadata").read() == (
        PartitionMetadata(0, METADATA_TOPIC_ID)
    )


# -- Java properties / meta.properties -------------------------------------------------------------


def test_read_properties_java_rules() -> None:
    text = (
        b"# comment\n! other comment\n\n   a=1\nb : 2\nc 3\nd\\=x=4\ne=line\\\n    continued\n"
        b"f=\\u0041\\tB\ng==5\nh\n  # not a comment? yes it is\n"
    )
    props, comments = read_properties(text)
    assert props == {"a": "1", "b": "2", "c": "3", "d=x": "4", "e": "linecontinued",
                     "f": "A\tB", "g": "=5", "h": ""}
    assert comments == [" comment", " other comment", " not a comment? yes it is"]
    with pytest.raises(ValueError, match="uxxxx"):
        read_properties(b"a=\\u00zz\n")


def test_format_properties_escapes() -> None:
    date = "Fri Jan 30 16:43:51 UTC 2026"
    text = format_properties({"a key": "v=1:#!", "k": " lead\\"}, date=date)
    assert text == (
        "#\n#Fri Jan 30 16:43:51 UTC 2026\na\\ key=v\\=1\\:\\#\\!\nk=\\ lead\\\\\n"
    )
    assert read_properties(text.encode())[0] == {"a key": "v=1:#!", "k": " lead\\"}


def test_java_key_orders() -> None:
    kafka_insertion = ["version", "cluster.id", "node.id", "directory.id"]
    # Java 9+ ConcurrentHashMap(16 bins): what Kafka 3.7 wrote in LDI-POC
    assert java_properties_key_order(kafka_insertion, "jdk9") == [
        "node.id", "directory.id", "version", "cluster.id"]
    # Java 8 Hashtable(11): version and cluster.id share bucket 9, newest first
    assert java_properties_key_order(["version", "broker.id", "cluster.id"], "jdk8") == [
        "cluster.id", "version", "broker.id"]
    with pytest.raises(ValueError):
        java_properties_key_order(["a"], "jdk7")


@pytest.mark.parametrize(
    "folder, jdk, expected",
    [
        ("LDI-POC", "jdk9", MetaProperties(1, "q1w2e3r4t5y6u7i8o9p0", 1,
                                           Uuid.from_string("XHhkr4tkSsD900pOQ8pPfg"))),
        ("VolodymyrZee-kafka", "jdk8", MetaProperties(0, "lRaQCIBoRh2xRKLuP9CAQg", 0)),
        ("KAIPASUBHASH-kafka-logs", "jdk8", MetaProperties(0, None, 0)),
    ],
)
def test_real_meta_properties_byte_for_byte(tmp_path: Path, folder, jdk, expected) -> None:
    src = shared_fixture_path("kafka-real", folder, "meta.properties")
    meta = MetaProperties.read(src)
    assert meta == expected
    _, comments = MetaProperties.read_raw(src)
    assert comments[0] == ""  # Kafka stores with an empty comment: a lone '#'
    out = tmp_path / "meta.properties"
    meta.write(out, date=comments[1], jdk=jdk)
    assert out.read_bytes() == src.read_bytes()


@pytest.mark.parametrize(
    "text, match",
    [
        # Kafka's MetaProperties.Builder texts (kafka-storage.sh info prints them)
        (b"version=2\n", "Unknown meta.properties version number 2"),
        (b"version=1\ncluster.id=x\n", "Failed to find node.id"),
        (b"version=1\nnode.id=1\n", "cluster.id was not found."),
        (b"version=0\nbroker.id=one\n", "Unable to read broker.id as a base-10 number."),
        (b"version=1\nnode.id=1\ncluster.id=c\ndirectory.id=zz\n", "directory.id as a Uuid"),
        (b"version=0\nbroker.id=\\u12\n", "uxxxx"),
    ],
)
def test_meta_properties_errors(tmp_path: Path, text: bytes, match: str) -> None:
    p = tmp_path / "meta.properties"
    p.write_bytes(text)
    with pytest.raises(CorruptCheckpointError, match=match) as e:
        MetaProperties.read(p)
    assert e.value.path == str(p)


def test_meta_properties_defaults_and_write(tmp_path: Path) -> None:
    p = tmp_path / "meta.properties"
    p.write_bytes(b"#\n#date\nbroker.id=3\n")  # version defaults to 0
    assert MetaProperties.read(p) == MetaProperties(0, None, 3)
    m = MetaProperties(1, "abc", 2, Uuid(5, 6))
    m.write(p, date="Sat Nov 21 00:00:00 UTC 2026")
    text = p.read_text()
    assert text.startswith("#\n#Sat Nov 21 00:00:00 UTC 2026\nnode.id=2\ndirectory.id=")
    assert MetaProperties.read(p) == m
    assert os.path.exists(p) and not os.path.exists(str(p) + ".tmp")
    assert cp.java_date_string(0).endswith("1970")


# -- JsonStateFile: kafkalog's own versioned JSON state files ------------------------------------


def test_json_state_file_round_trip_and_absence(tmp_path):
    from kafkalog.checkpoint import JsonStateFile

    f = JsonStateFile(tmp_path / "s.json", "test state", "items", mode=0o600)
    assert f.load(dict) is None  # absent: nothing stored
    f.save({"b": [1, 2], "a": "x"})
    assert json.loads((tmp_path / "s.json").read_text()) == {"version": 1,
                                                              "items": {"b": [1, 2], "a": "x"}}
    assert (tmp_path / "s.json").stat().st_mode & 0o777 == 0o600
    assert f.load(lambda body: sorted(body)) == ["a", "b"]
    assert not (tmp_path / "s.json.tmp").exists()


@pytest.mark.parametrize(("content", "reason"), [
    (b"not json", "Expecting value"),
    (b'{"version": 1, "items": "\xc3\x28"}', "utf-8"),
    (b"[1]", "expected a JSON object"),
    (b'{"version": 2, "items": {}}', "expected version 1, found 2"),
    (b'{"items": {}}', "expected version 1, found None"),
    (b'{"version": 1}', "no 'items' entry"),
    (b'{"version": 1, "items": []}', "'items' is not a JSON object"),
    (b'{"version": 1, "items": {"k": 1}}', "missing 'needed'"),
    (b'{"version": 1, "items": {"k": "v"}}', "bad value"),
])
def test_json_state_file_refuses_what_does_not_parse(tmp_path, content, reason):
    from kafkalog.checkpoint import JsonStateFile

    def parse(body):
        for v in body.values():
            if isinstance(v, int):
                return body["needed"]
            raise ValueError("bad value")
        return body

    path = tmp_path / "s.json"
    path.write_bytes(content)
    with pytest.raises(CorruptCheckpointError, match="unreadable test state") as e:
        JsonStateFile(path, "test state", "items").load(parse)
    assert reason in str(e.value) and e.value.path == str(path)


def test_json_state_file_custom_errors_and_kinds(tmp_path):
    from kafkalog.checkpoint import JsonStateFile

    class Refused(Exception):
        pass

    def refuse(body):
        raise Refused("not allowed")

    f = JsonStateFile(tmp_path / "n.json", "counter", "next", kind=int, indent=None)
    f.save(7)
    assert (tmp_path / "n.json").read_text() == '{"version": 1, "next": 7}\n'
    assert f.load(int) == 7
    with pytest.raises(CorruptCheckpointError, match=r"unreadable counter \(not allowed\)"):
        f.load(refuse, errors=(Refused,))
    with pytest.raises(Refused):  # errors not named are not a corrupt file
        f.load(refuse)
    (tmp_path / "n.json").write_text('{"version": 1, "next": "7"}')
    with pytest.raises(CorruptCheckpointError, match="'next' is not an integer"):
        f.load(int)
