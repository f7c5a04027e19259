"""``kafkalog verify``: leader-epoch and checkpoint findings only where Kafka's rules are broken.

The partitions are built by the engine the way a broker leaves them on disk: follower appends
(``Log.append_batches``) of batches stamped with their leader epochs, a leader election that
assigns the new epoch at the log end (``LeaderEpochFileCache.assign(epoch, LEO)``, what
``Partition.makeLeader`` does), batches with offset gaps as a cleaner leaves them, DeleteRecords
and retention moving the log start (``truncateFromStart``), and a checkpoint file that kept the
old first entry (Kafka flushes that change asynchronously). Each is consistent for Kafka
(``LeaderEpochFileCache``): no epoch finding. Caches whose epochs really disagree with the
batches are then crafted, and each gives its warning. The real broker trees of the fixtures are
checked too.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kafkalog.checkpoint import EpochEntry, LeaderEpochCheckpointFile
from kafkalog.cli import main
from kafkalog.config import LogConfig
from kafkalog.leader_epoch import LeaderEpochFileCache
from kafkalog.log import Log
from kafkalog.records.builder import encode_batch
from kafkalog.records.record import Record

from .conftest import shared_fixture_path

T = 1700000000000
LEC = "leader-epoch-checkpoint"


def report(capsys, *argv: str) -> tuple[int, dict]:
    capsys.readouterr()
    rc = main(["verify", "--json", *argv])
    return rc, json.loads(capsys.readouterr().out)


def epoch_findings(doc: dict) -> list[dict]:
    return [f for f in doc["findings"] if f["check"].startswith("epoch")]


def batch(offsets: list[int], epoch: int) -> bytes:
    """One v2 batch holding ``offsets`` (gaps allowed, as the cleaner leaves them)."""
    return encode_batch(
        [Record(b"k%d" % o, b"v" * 30, T + o, offset=o) for o in offsets],
        base_offset=offsets[0],
        partition_leader_epoch=epoch,
    )


def become_leader(d: Path, epoch: int) -> None:
    """``Partition.makeLeader``: the new leader epoch starts at the log end offset."""
    with Log.open(d) as log:
        leo = log.log_end_offset
    LeaderEpochFileCache(d / LEC).assign(epoch, leo)


def written(d: Path) -> list[tuple[int, int]]:
    return [(e.epoch, e.start_offset) for e in LeaderEpochCheckpointFile(d / LEC).read()]


def write_cache(d: Path, entries: list[tuple[int, int]]) -> None:
    LeaderEpochCheckpointFile(d / LEC).write([EpochEntry(e, s) for e, s in entries])


# ------------------------------------------------------------------------------------------
# States Kafka writes: no warning
# ------------------------------------------------------------------------------------------


@pytest.fixture
def compacted(tmp_path) -> Path:
    """A replica's log after its cleaner removed whole batches: offsets 2-3 of epoch 1 and the
    first batch of epoch 2 (8-10). Kafka's cleaner rewrites segments and never touches the
    leader-epoch cache, so the cache still starts epoch 2 at 8 while its first batch is now 11.

    Built with the engine: the replica's log before cleaning (follower appends, which assign
    each epoch at its first batch), then the cleaned log (the surviving batches, follower
    appends again) given the cache file of the first.
    """
    before, after = tmp_path / "before-0", tmp_path / "compacted-0"
    cfg = LogConfig(segment_bytes=400)
    with Log.open(before, cfg) as log:
        log.append_batches(batch([0, 1], 1) + batch([2, 3], 1) + batch([4, 5, 6, 7], 1))
        log.append_batches(batch([8, 9, 10], 2) + batch([11, 12], 2) + batch([13], 2))
    with Log.open(after, cfg) as log:
        log.append_batches(batch([0, 1], 1) + batch([4, 5, 6, 7], 1))
        log.append_batches(batch([11, 12], 2) + batch([13], 2))
    assert written(after) == [(1, 0), (2, 11)]
    shutil.copyfile(before / LEC, after / LEC)
    return after


def test_compacted_partition_is_consistent(compacted, capsys):
    assert written(compacted) == [(1, 0), (2, 8)]
    rc, doc = report(capsys, str(compacted))
    assert epoch_findings(doc) == [] and rc == 0


def test_compacted_partition_after_a_later_election(compacted, capsys):
    # epoch 3 elected, nothing written yet: its entry starts at the log end
    become_leader(compacted, 3)
    assert written(compacted)[-1] == (3, 14)
    rc, doc = report(capsys, str(compacted))
    assert epoch_findings(doc) == [] and rc == 0


@pytest.fixture
def two_epochs(tmp_path) -> Path:
    """Epoch 0 at offsets 0-9 and epoch 1 at 10-19, in batches of 5 over several segments."""
    d = tmp_path / "events-0"
    with Log.open(d, LogConfig(segment_bytes=600)) as log:
        log.append_batches(b"".join(batch(list(range(o, o + 5)), 0) for o in (0, 5)))
    become_leader(d, 1)
    with Log.open(d, LogConfig(segment_bytes=600)) as log:
        log.append_batches(b"".join(batch(list(range(o, o + 5)), 1) for o in (10, 15)))
    return d


def test_delete_records_moves_the_first_entry(two_epochs, capsys):
    # DeleteRecords to 12, inside the batch 10..14: truncateFromStart(12) moves epoch 1 to 12;
    # epoch 0's batches stay in the first segment below the log start
    with Log.open(two_epochs, LogConfig(segment_bytes=600)) as log:
        assert log.delete_records_before(12) == 12
    assert written(two_epochs) == [(1, 12)]
    rc, doc = report(capsys, str(two_epochs))
    assert epoch_findings(doc) == [] and rc == 0


def test_delete_records_with_the_old_first_entry_on_disk(two_epochs, capsys):
    # the same, but the asynchronous checkpoint flush never happened: the file keeps the old
    # entries (Kafka's LogLoader truncates them from the start again when it loads the log)
    with Log.open(two_epochs, LogConfig(segment_bytes=600)) as log:
        log.delete_records_before(12)
    write_cache(two_epochs, [(0, 0), (1, 10)])
    rc, doc = report(capsys, str(two_epochs))
    assert epoch_findings(doc) == [] and rc == 0


def test_retention_deleted_the_first_segments(two_epochs, capsys):
    with Log.open(two_epochs, LogConfig(segment_bytes=600)) as log:
        log.delete_records_before(15)
        assert log.enforce_retention() >= 1
        first = log.log_start_offset
    bases = sorted(int(p.stem) for p in two_epochs.glob("*.log"))
    assert bases[0] > 0 and written(two_epochs)[0] == (1, first)
    rc, doc = report(capsys, str(two_epochs))
    assert epoch_findings(doc) == [] and rc == 0
    # the old entries survive in a file written before the deletion: still consistent
    write_cache(two_epochs, [(0, 0), (1, 10)])
    rc, doc = report(capsys, str(two_epochs))
    assert epoch_findings(doc) == [] and rc == 0


def test_log_start_inside_an_epoch_that_has_no_batch_left(tmp_path, capsys):
    # epochs 0 (0-4), 1 elected and written (5-9), 2 (10-14); DeleteRecords(7) keeps (1, 7)
    d = tmp_path / "t-0"
    with Log.open(d) as log:
        log.append_batches(batch(list(range(5)), 0))
    for epoch, start in ((1, 5), (2, 10)):
        become_leader(d, epoch)
        with Log.open(d) as log:
            log.append_batches(batch(list(range(start, start + 5)), epoch))
    with Log.open(d) as log:
        log.delete_records_before(7)
    assert written(d) == [(1, 7), (2, 10)]
    rc, doc = report(capsys, str(d))
    assert epoch_findings(doc) == [] and rc == 0


# ------------------------------------------------------------------------------------------
# Crafted caches whose epochs disagree with the log: a warning each
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "entries, check, epoch, found",
    [
        # epoch 1 said to start at 12, but its batch 10..14 is in the log
        ([(0, 0), (1, 12)], "epoch_start", 1, 12),
        # epoch 1 said to start at 7, inside epoch 0's batch 5..9
        ([(0, 0), (1, 7)], "epoch_start", 1, 7),
        # epoch 1 missing: its batches map to epoch 0
        ([(0, 0)], "epoch_missing", 1, None),
        # the first entry claims epoch 1 from offset 0: epoch 0's batches map to epoch 1
        ([(1, 0)], "epoch_missing", 0, None),
        # epoch 0 below the cache but a later epoch than the first entry's
        ([(0, 12), (1, 15)], "epoch_start", 1, 15),
    ],
)
def test_crafted_caches_that_disagree(two_epochs, capsys, entries, check, epoch, found):
    write_cache(two_epochs, entries)
    rc, doc = report(capsys, str(two_epochs))
    fs = epoch_findings(doc)
    assert fs and all(f["severity"] == "warning" for f in fs)
    hit = [f for f in fs if f["check"] == check and f["found"] == found]
    assert hit, fs
    if check == "epoch_missing":
        assert hit[0]["expected"].startswith(f"epoch {epoch} ")
    else:
        assert f"epoch {epoch} " in hit[0]["message"]
    assert rc == 0  # warnings only


def test_one_warning_per_epoch(two_epochs, capsys):
    write_cache(two_epochs, [(0, 0)])
    _, doc = report(capsys, str(two_epochs))
    assert [f["check"] for f in epoch_findings(doc)] == ["epoch_missing"]


# ------------------------------------------------------------------------------------------
# checkpoint_beyond_end: worded by what the files prove
# ------------------------------------------------------------------------------------------


def _log_dir(tmp_path: Path) -> tuple[Path, int]:
    d = tmp_path / "logs" / "events-0"
    with Log.open(d) as log:
        log.append_batches(batch(list(range(5)), 0))
        leo = log.log_end_offset
    return d.parent, leo


def test_high_watermark_past_the_end_with_nothing_flushed(tmp_path, capsys):
    root, leo = _log_dir(tmp_path)
    (root / "recovery-point-offset-checkpoint").write_text("0\n1\nevents 0 0\n")
    (root / "replication-offset-checkpoint").write_text(f"0\n1\nevents 0 {leo + 3}\n")
    rc, doc = report(capsys, str(root))
    (f,) = [f for f in doc["findings"] if f["check"] == "checkpoint_beyond_end"]
    assert f["severity"] == "warning" and f["found"] == leo + 3
    assert "flushed data is missing" not in f["message"]
    assert f"offsets {leo}..{leo + 2} were replicated" in f["message"]
    assert "recovery point (0) shows they were never flushed here" in f["message"]
    assert rc == 0


def test_recovery_point_past_the_end(tmp_path, capsys):
    root, leo = _log_dir(tmp_path)
    (root / "recovery-point-offset-checkpoint").write_text(f"0\n1\nevents 0 {leo + 2}\n")
    (root / "replication-offset-checkpoint").write_text(f"0\n1\nevents 0 {leo + 2}\n")
    rc, doc = report(capsys, str(root))
    by = {f["severity"]: f for f in doc["findings"] if f["check"] == "checkpoint_beyond_end"}
    assert f"offsets {leo}..{leo + 1} were recorded as flushed" in by["error"]["message"]
    assert f"recovery point ({leo + 2}) says some were flushed here" in by["warning"]["message"]
    assert rc == 1


# ------------------------------------------------------------------------------------------
# Real broker trees
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fixture", ["LDI-POC", "KAIPASUBHASH-kafka-logs", "VolodymyrZee-kafka"])
def test_real_fixtures_have_no_epoch_or_checkpoint_warnings(tmp_path, capsys, fixture):
    root = shared_fixture_path("kafka-real", fixture)
    if not root.exists():
        pytest.skip(f"fixture {fixture} not present")
    copy = tmp_path / fixture
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns("*.md", "*.json"))
    rc, doc = report(capsys, str(copy))
    noisy = [
        f for f in doc["findings"]
        if f["check"].startswith(("epoch", "checkpoint_beyond", "checkpoint_start"))
    ]  # fmt: skip
    assert noisy == [] and rc == 0
    assert any((p / LEC).exists() for p in copy.iterdir() if p.is_dir())
