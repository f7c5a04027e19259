"""File-name rules (LogFileUtils / LocalLog) against Kafka's behaviour and the real data dirs."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalog import files as f
from tests.conftest import shared_fixture_path


def test_segment_names() -> None:
    assert f.filename_prefix_from_offset(0) == "00000000000000000000"
    assert f.filename_prefix_from_offset(2**63 - 1) == "09223372036854775807"
    assert f.log_file_name(368769) == "00000000000000368769.log"
    assert f.index_file_name(5) == "00000000000000000005.index"
    assert f.time_index_file_name(5, f.SWAP_FILE_SUFFIX) == "00000000000000000005.timeindex.swap"
    assert f.txn_index_file_name(5, ".deleted") == "00000000000000000005.txnindex.deleted"
    assert f.log_file_name(5, f.CLEANED_FILE_SUFFIX) == "00000000000000000005.log.cleaned"
    assert f.producer_snapshot_file_name(13) == "00000000000000000013.snapshot"
    d = Path("/data/t-0")
    assert f.log_file(d, 1) == d / "00000000000000000001.log"
    assert f.offset_index_file(d, 1).name.endswith(".index")
    assert f.time_index_file(d, 1).name.endswith(".timeindex")
    assert f.transaction_index_file(d, 1).name.endswith(".txnindex")
    assert f.producer_snapshot_file(d, 1).name == "00000000000000000001.snapshot"
    with pytest.raises(ValueError):
        f.filename_prefix_from_offset(-1)


@pytest.mark.parametrize(
    "name, offset",
    [
        ("00000000000000368769.log", 368769),
        ("00000000000000000007.index.deleted", 7),
        ("00000000000000000007.timeindex.swap", 7),
        ("/a/b/00000000000000000470.snapshot", 470),
        ("12.log", 12),  # Long.parseLong needs no padding
        ("-5.log", -5),
        ("+5.log", 5),
    ],
)
def test_offset_from_filename(name: str, offset: int) -> None:
    assert f.offset_from_filename(name) == offset
    assert f.offset_from_file(Path(name)) == offset


@pytest.mark.parametrize("name", ["abc.log", ".log", "0000", "1 2.log", "99999999999999999999.log",
                                  # digits to str.isdigit, not to Long.parseLong
                                  "\u0663.log", "\u00b2.log", "1\uff10.log"])
def test_offset_from_filename_errors(name: str) -> None:
    with pytest.raises(ValueError):
        f.offset_from_filename(name)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**63 - 1), st.sampled_from(["", ".deleted", ".cleaned", ".swap"]))
def test_name_round_trip(offset: int, suffix: str) -> None:
    for make in (f.log_file_name, f.index_file_name, f.time_index_file_name, f.txn_index_file_name):
        name = make(offset, suffix)
        assert f.offset_from_filename(name) == offset
        assert f.strip_state_suffix(name) == make(offset)
    # zero padding makes lexical order numerical order
    assert (f.log_file_name(offset) < f.log_file_name(offset + 1)) or offset + 1 >= 10**19


def test_predicates() -> None:
    assert f.is_log_file("00000000000000000000.log")
    assert not f.is_log_file("00000000000000000000.log.deleted")
    assert f.is_index_file("x.index") and f.is_index_file("x.timeindex")
    assert f.is_index_file("x.txnindex")
    assert f.is_time_index_file("x.timeindex") and not f.is_time_index_file("x.index")
    assert f.is_txn_index_file("x.txnindex") and f.is_producer_snapshot_file("x.snapshot")
    assert f.is_deleted_file("x.log.deleted") and f.is_cleaned_file("x.log.cleaned")
    assert f.is_swap_file("x.index.swap") and f.is_tmp_file("recovery-point-offset-checkpoint.tmp")
    assert f.strip_state_suffix("x.log") == "x.log"


@pytest.mark.parametrize(
    "name, expected",
    [
        ("my-topic-3", ("my-topic", 3)),
        ("__consumer_offsets-49", ("__consumer_offsets", 49)),
        ("a-b-c-0", ("a-b-c", 0)),
        ("t-0.4b2e5e7e5b1f4c4e8f1e0a0b0c0d0e0f-delete", ("t", 0)),
        ("my-t-12.4b2e5e7e5b1f4c4e8f1e0a0b0c0d0e0f-future", ("my-t", 12)),
        ("t-7.abc-stray", ("t", 7)),
        ("t.with.dots-1", ("t.with.dots", 1)),
    ],
)
def test_parse_topic_partition_name(name: str, expected: tuple[str, int]) -> None:
    assert f.parse_topic_partition_name(Path("/logs") / name) == expected


@pytest.mark.parametrize(
    "name",
    ["", "topic", "-1", "topic-", "topic-x", "topic-1-delete", "t-0.-delete", "t-99999999999",
     "t-0.uuid-future-x", "t 1-0.abc-stray"],
)
def test_parse_topic_partition_name_errors(name: str) -> None:
    with pytest.raises(ValueError, match="not in the form of topic-partition"):
        f.parse_topic_partition_name(name)


def test_renamed_dir_names() -> None:
    uid = "0123456789abcdef0123456789abcdef"
    assert f.log_dir_name("t", 3) == "t-3"
    assert f.log_delete_dir_name("t", 3, uid) == f"t-3.{uid}-delete"
    assert f.log_future_dir_name("t", 3, uid) == f"t-3.{uid}-future"
    assert f.log_stray_dir_name("t", 3, uid) == f"t-3.{uid}-stray"
    long_topic = "x" * 249  # Kafka's topic length limit
    name = f.log_delete_dir_name(long_topic, 1000)
    # "-1000." + 32 hex + "-delete" = 45 characters leave 210 for the topic
    assert len(name) == 255 and f.parse_topic_partition_name(name) == ("x" * 210, 1000)
    assert f.is_delete_dir(name) and not f.is_future_dir(name) and not f.is_stray_dir(name)
    future = f.log_future_dir_name(long_topic, 0)
    assert len(future) > 255  # Kafka does not cap -future names
    assert f.is_future_dir(future) and f.is_stray_dir(f.log_stray_dir_name("t", 1))
    assert len(f.log_delete_dir_name("t", 0).split(".")[1]) == 32 + len("-delete")


def test_kraft_snapshot_names() -> None:
    assert f.kraft_snapshot_file_name(1234, 5) == "00000000000000001234-0000000005.checkpoint"
    assert f.parse_kraft_snapshot_file_name("00000000000000001234-0000000005.checkpoint") == (
        1234, 5)
    assert f.parse_kraft_snapshot_file_name("bootstrap.checkpoint") is None
    assert f.parse_kraft_snapshot_file_name("00000000000000001234.snapshot") is None
    with pytest.raises(ValueError):
        f.kraft_snapshot_file_name(-1, 0)


def test_real_data_dirs_parse() -> None:
    root = shared_fixture_path("kafka-real")
    data_dirs = ("KAIPASUBHASH-kafka-logs", "LDI-POC", "VolodymyrZee-kafka")
    dirs = [p for d in data_dirs for p in (root / d).iterdir() if p.is_dir()]
    parsed = {f.parse_topic_partition_name(p) for p in dirs}
    assert ("__consumer_offsets", 6) in parsed and ("first_topic", 2) in parsed
    assert ("__cluster_metadata", 0) in parsed
    segment_files = [p for p in root.glob("*/*/*") if p.suffix in (".log", ".index", ".snapshot")]
    assert segment_files
    for p in segment_files:
        off = f.offset_from_file(p)
        assert p.name.startswith(f.filename_prefix_from_offset(off))


def test_segment_base_offsets_lists_segments_only(tmp_path) -> None:
    from kafkalog.files import segment_base_offsets

    for name in ("00000000000000000100.log", "00000000000000000000.log",
                 "00000000000000000050.log.deleted", "00000000000000000070.log.swap",
                 "leader-epoch-checkpoint", "notanoffset.log", "00000000000000000000.index"):
        (tmp_path / name).write_bytes(b"")
    (tmp_path / "00000000000000000200.log").mkdir()  # a directory is not a segment
    assert segment_base_offsets(tmp_path) == [0, 100]
