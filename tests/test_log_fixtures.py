"""Real Kafka data directories (../shared/fixtures/kafka-real) open, read and recover.

The fixtures are read-only and shared: every test copies a partition directory to tmp first.
"""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path

import pytest

from kafkalog.checkpoint import LeaderEpochCheckpointFile
from kafkalog.log import Log
from tests.conftest import SHARED_FIXTURES, shared_fixture_path

DATA_DIRS = ["LDI-POC", "VolodymyrZee-kafka", "KAIPASUBHASH-kafka-logs"]


def _partitions() -> list[tuple[str, str]]:
    out = []
    for d in DATA_DIRS:
        root = SHARED_FIXTURES / "kafka-real" / d
        if not root.is_dir():
            continue
        for p in sorted(root.iterdir()):
            if p.is_dir() and any(p.glob("*.log")):
                out.append((d, p.name))
    return out or [("LDI-POC", "__consumer_offsets-6")]


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    for p in [dst, *dst.rglob("*")]:
        p.chmod(p.stat().st_mode | stat.S_IWUSR)
    return dst


def _expected(data_dir: str, partition: str) -> dict:
    doc = json.loads(shared_fixture_path("kafka-real", data_dir, "EXPECTED.json").read_text())
    return doc["files"][f"{partition}/00000000000000000000.log"]


@pytest.mark.parametrize("data_dir,partition", _partitions())
def test_real_log_opens_recovers_and_reads(tmp_path: Path, data_dir: str, partition: str) -> None:
    src = shared_fixture_path("kafka-real", data_dir, partition)
    exp = _expected(data_dir, partition)
    d = _copy(src, tmp_path / partition)
    (d / "leader-epoch-checkpoint").unlink(missing_ok=True)  # rebuilt by recovery, compared below
    # no clean-shutdown marker in the copy and recovery point 0: every segment is recovered
    with Log.open(d) as log:
        [(base, result)] = log.loaded.recovered_segments
        assert (base, result.truncated_bytes, result.entries) == (0, 0, exp["batch_count"])
        assert log.log_start_offset == 0
        assert log.log_end_offset == exp["last_offset"] + 1
        records = list(log.records(include_control=True))
        assert len(records) == exp["record_count"]
        assert [r.offset for r in records] == sorted({r.offset for r in records})
        data_records = list(log.records())
        assert len(data_records) == exp["record_count"] - sum(
            b["record_count"] for b in exp["batches"] if b["is_control"])
        table = log.read_table()
        assert table.num_rows == len(data_records)
        assert table.column("offset").to_pylist() == [r.offset for r in data_records]
        if "records" in exp:
            want = [r for r in exp["records"] if r["offset"] in {x.offset for x in data_records}]
            assert [r.timestamp for r in data_records] == [r["timestamp"] for r in want]
        # the whole log as one fetch is exactly the file
        raw = log.read(0, max_bytes=exp["size"])
        assert raw == (src / "00000000000000000000.log").read_bytes()
        # epochs recovered from the batches' partition leader epochs
        epochs = []
        for b in exp["batches"]:
            e = b["partition_leader_epoch"]
            if e >= 0 and (not epochs or e > epochs[-1][0]):
                epochs.append((e, b["base_offset"]))
        assert log.leader_epoch_entries == epochs
    original = src / "leader-epoch-checkpoint"
    if original.exists():
        assert [(e.epoch, e.start_offset) for e in
                LeaderEpochCheckpointFile(d / "leader-epoch-checkpoint").read()] == \
            [(e.epoch, e.start_offset) for e in LeaderEpochCheckpointFile(original).read()]
    # reopened cleanly: no recovery, same records
    with Log.open(d) as log:
        assert log.loaded.recovered_segments == []
        assert len(list(log.records(include_control=True))) == exp["record_count"]


def test_consumer_offsets_indexes_rebuilt_byte_for_byte(tmp_path: Path) -> None:
    """LDI-POC __consumer_offsets-6: the broker's own trimmed .index/.timeindex are what our
    rebuild from its .log produces."""
    src = shared_fixture_path("kafka-real", "LDI-POC", "__consumer_offsets-6")
    d = _copy(src, tmp_path / "__consumer_offsets-6")
    names = ["00000000000000000000.index", "00000000000000000000.timeindex"]
    originals = {n: (src / n).read_bytes() for n in names}
    assert len(originals[names[0]]) == 16 and len(originals[names[1]]) == 36
    for n in names:
        (d / n).unlink()
    with Log.open(d) as log:
        assert [b for b, _ in log.loaded.recovered_segments] == [0]
        # while open, the active segment's indexes are re-extended to segment.index.bytes
        assert (d / names[0]).stat().st_size == log.config.segment_index_bytes
    for n in names:
        assert (d / n).read_bytes() == originals[n], n


def test_consumer_offsets_opens_clean_with_its_own_indexes(tmp_path: Path) -> None:
    """Opening with the broker's indexes and recovering keeps them byte-identical too."""
    src = shared_fixture_path("kafka-real", "LDI-POC", "__consumer_offsets-6")
    d = _copy(src, tmp_path / "p")
    with Log.open(d, recovery_point=0) as log:
        assert log.offset_for_timestamp(0) == 0
        ts = [r.timestamp for r in log.records(include_control=True)]
        for target in sorted(set(ts))[::3]:
            want = next(r.offset for r in log.records(include_control=True)
                        if r.timestamp >= target)
            assert log.offset_for_timestamp(target) == want
        assert log.offset_for_timestamp(max(ts) + 1) is None
    for n in ["00000000000000000000.index", "00000000000000000000.timeindex"]:
        assert (d / n).read_bytes() == (src / n).read_bytes()
    assert (d / "00000000000000000013.snapshot").read_bytes() == \
        (src / "00000000000000000013.snapshot").read_bytes()


def test_real_log_accepts_appends_and_reopens(tmp_path: Path) -> None:
    from kafkalog import Record

    src = shared_fixture_path("kafka-real", "LDI-POC", "TestTopicPatient-0")
    d = _copy(src, tmp_path / "TestTopicPatient-0")
    with Log.open(d) as log:
        info = log.append([Record(None, b"new", 1769793578166)], partition_leader_epoch=1)
        assert info.first_offset == 3
        assert log.end_offset_for_epoch(0) == (0, 3)
        assert log.end_offset_for_epoch(1) == (1, 4)
    with Log.open(d) as log:
        assert [r.value for r in log.records(3)] == [b"new"]
        assert log.leader_epoch_entries == [(0, 0), (1, 3)]
