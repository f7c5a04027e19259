"""``kafkalog verify`` via ``main(argv)``: clean data passes, each kind of damage is a finding."""

from __future__ import annotations

import json
import os
import shutil
import struct
from pathlib import Path

import pytest

from kafkalog.cli import main
from kafkalog.config import LogConfig
from kafkalog.log import Log
from kafkalog.records.builder import encode_batch
from kafkalog.records.record import Record

from .conftest import shared_fixture_path

T = 1700000000000


def run(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def report(capsys, *argv: str) -> tuple[int, dict]:
    rc, out, _ = run(capsys, "verify", "--json", *argv)
    return rc, json.loads(out)


def checks(doc: dict, severity: str = "error") -> list[str]:
    return [f["check"] for f in doc["findings"] if f["severity"] == severity]


@pytest.fixture
def partition(tmp_path) -> Path:
    """A partition written by the engine: 3+ segments with real .index/.timeindex files."""
    d = tmp_path / "events-0"
    cfg = LogConfig(segment_bytes=1200, index_interval_bytes=150)
    with Log.open(d, cfg) as log:
        for i in range(30):
            log.append_batches(
                encode_batch(
                    [Record(b"k%d" % i, b"v" * 40, T + i)], base_offset=i, partition_leader_epoch=0
                )
            )
    return d


def segment_files(d: Path, suffix: str) -> list[Path]:
    return sorted(d.glob(f"*{suffix}"))


@pytest.mark.parametrize("fixture", ["LDI-POC", "KAIPASUBHASH-kafka-logs", "VolodymyrZee-kafka"])
def test_real_log_dirs_are_clean(capsys, fixture):
    root = shared_fixture_path("kafka-real", fixture)
    rc, doc = report(capsys, str(root))
    assert rc == 0 and doc["errors"] == 0
    assert len(doc["partitions"]) >= 1
    # every partition's offsets were read
    assert all(p["batches"] > 0 for p in doc["partitions"])


def test_real_consumer_offsets_indexes_checked(capsys):
    d = shared_fixture_path("kafka-real", "LDI-POC", "__consumer_offsets-6")
    rc, doc = report(capsys, str(d))
    assert rc == 0 and doc["findings"] == []
    assert doc["partitions"][0]["log_end_offset"] == 13


def test_engine_partition_is_clean(partition, capsys):
    assert len(segment_files(partition, ".log")) >= 3
    assert all(p.stat().st_size > 0 for p in segment_files(partition, ".index"))
    rc, doc = report(capsys, str(partition))
    assert rc == 0 and doc["errors"] == 0 and doc["warnings"] == 0
    assert doc["partitions"][0]["batches"] == 30
    # the text form: a summary table and the totals line
    rc, out, _ = run(capsys, "verify", str(partition))
    assert "events-0" in out and "0 errors, 0 warnings" in out and rc == 0


def test_a_long_partition_path_is_printed_on_one_line(tmp_path, capsys):
    # piped output is 80 columns wide by default: a long path used to be folded inside its
    # cell, over lines that could not be copied or grepped
    d = tmp_path.joinpath(*["a-rather-long-directory-name"] * 5, "events-0")
    with Log.open(d) as log:
        log.append([Record(b"k", b"v", T)])
    rc, out, _ = run(capsys, "verify", str(d))
    assert rc == 0 and any(str(d) in line for line in out.splitlines())


def test_bit_flip_is_a_crc_finding(partition, capsys):
    log = segment_files(partition, ".log")[1]
    data = bytearray(log.read_bytes())
    data[70] ^= 0x10  # inside the first batch's records
    log.write_bytes(bytes(data))
    rc, doc = report(capsys, str(partition))
    assert rc == 1
    [f] = [f for f in doc["findings"] if f["check"] == "batch_crc"]
    assert f["file"] == str(log) and f["position"] == 0
    assert f["expected"] == struct.unpack_from(">I", data, 17)[0] and f["found"] != f["expected"]


def test_zero_filled_and_torn_tails(partition, capsys):
    logs = segment_files(partition, ".log")
    size = logs[-1].stat().st_size
    with open(logs[-1], "ab") as f:
        f.write(b"\x00" * 500)
    # the active segment: what log.preallocate=true looks like while a broker runs
    rc, doc = report(capsys, str(partition))
    [f] = [f for f in doc["findings"] if f["check"] == "zero_filled_tail"]
    assert (f["position"], f["found"], f["severity"]) == (size, "500 zero bytes", "warning")
    assert rc == 0
    # an inactive segment was trimmed on roll: zeros there are damage
    with open(logs[0], "ab") as f:
        f.write(b"\x00" * 100)
    rc, doc = report(capsys, str(partition))
    assert checks(doc) == ["zero_filled_tail"] and rc == 1
    logs[0].write_bytes(logs[0].read_bytes()[:-100])
    logs[-1].write_bytes(logs[-1].read_bytes()[: size - 7])
    rc, doc = report(capsys, str(partition))
    # the time index's final entry names the batch that was torn off
    assert sorted(checks(doc)) == ["timeindex_offset", "torn_tail"] and rc == 1


def test_offsets_out_of_order_and_overlap(tmp_path, capsys):
    d = tmp_path / "t-0"
    d.mkdir()
    a = encode_batch([Record(None, b"a", T)], base_offset=5)
    b = encode_batch([Record(None, b"b", T)], base_offset=3)  # goes back
    c = encode_batch([Record(None, b"c", T)], base_offset=20)  # a gap: info only
    (d / "00000000000000000000.log").write_bytes(a + b + c)
    (d / "00000000000000000010.log").write_bytes(
        encode_batch([Record(None, b"d", T)], base_offset=30)
    )
    rc, doc = report(capsys, str(d))
    errs = checks(doc)
    assert "offset_order" in errs and "segment_overlap" in errs
    assert "offset_gap" in checks(doc, "info")
    order = next(f for f in doc["findings"] if f["check"] == "offset_order")
    assert (order["position"], order["expected"], order["found"]) == (len(a), "> 5", 3)
    assert rc == 1


def test_index_damage(partition, capsys):
    idx = segment_files(partition, ".index")[0]
    raw = bytearray(idx.read_bytes())
    assert len(raw) >= 16
    rel, pos = struct.unpack_from(">ii", raw, 0)
    struct.pack_into(">ii", raw, 0, rel, pos + 1)  # not a batch start
    struct.pack_into(">i", raw, 8, struct.unpack_from(">i", raw, 8)[0] - 1)  # wrong offset
    idx.write_bytes(bytes(raw) + b"\x00" * 32)  # + a zero tail in an inactive segment
    rc, doc = report(capsys, str(partition))
    assert {"index_position", "index_offset_mismatch"} <= set(checks(doc))
    assert "index_zero_tail" in checks(doc, "warning")
    assert rc == 1


def test_index_sanity_and_time_index_damage(partition, capsys):
    idx = segment_files(partition, ".index")[0]
    idx.write_bytes(idx.read_bytes() + b"\x01\x02\x03")
    tix = segment_files(partition, ".timeindex")[0]
    raw = bytearray(tix.read_bytes())
    struct.pack_into(">q", raw, 0, struct.unpack_from(">q", raw, 0)[0] + 1)  # wrong timestamp
    tix.write_bytes(bytes(raw))
    rc, doc = report(capsys, str(partition))
    errs = checks(doc)
    assert "index_sanity" in errs and "timeindex_timestamp" in errs and rc == 1
    sanity = next(f for f in doc["findings"] if f["check"] == "index_sanity")
    assert "is corrupt, found" in sanity["message"]  # Kafka's CorruptIndexException text


def test_missing_index_is_a_warning(partition, capsys):
    segment_files(partition, ".index")[0].unlink()
    rc, doc = report(capsys, str(partition))
    assert checks(doc, "warning") == ["index_missing"] and rc == 0


def _txn_partition(tmp_path: Path, txnindex: bytes | None) -> Path:
    d = tmp_path / "txn-0"
    d.mkdir()
    batches = [
        encode_batch(
            [Record(b"k", b"1", T)],
            base_offset=0,
            producer_id=7,
            producer_epoch=0,
            base_sequence=0,
            transactional=True,
        ),
        encode_batch(
            [Record(b"\x00\x00\x00\x00", b"\x00\x00\x00\x00\x00\x01", T)],
            base_offset=1,
            producer_id=7,
            producer_epoch=0,
            transactional=True,
            control=True,
        ),
        encode_batch(
            [Record(b"k", b"2", T)],
            base_offset=2,
            producer_id=8,
            producer_epoch=0,
            base_sequence=0,
            transactional=True,
        ),
        encode_batch(
            [Record(b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x01", T)],
            base_offset=3,
            producer_id=8,
            producer_epoch=0,
            transactional=True,
            control=True,
        ),
    ]
    (d / "00000000000000000000.log").write_bytes(b"".join(batches))
    if txnindex is not None:
        (d / "00000000000000000000.txnindex").write_bytes(txnindex)
    return d


def test_txn_index_matches_markers(tmp_path, capsys):
    good = struct.pack(">hqqqq", 0, 7, 0, 1, 0)
    rc, doc = report(capsys, str(_txn_partition(tmp_path, good)))
    assert [f for f in doc["findings"] if f["check"].startswith("txnindex")] == [] and rc == 0


def test_txn_index_missing_and_invented(tmp_path, capsys):
    rc, doc = report(capsys, str(_txn_partition(tmp_path, None)))
    assert checks(doc) == ["txnindex_missing"] and rc == 1
    shutil.rmtree(tmp_path / "txn-0")
    # producer 8 committed: an aborted entry for it has no ABORT marker behind it
    bad = struct.pack(">hqqqq", 0, 7, 0, 1, 0) + struct.pack(">hqqqq", 0, 8, 2, 3, 2)
    rc, doc = report(capsys, str(_txn_partition(tmp_path, bad)))
    f = next(f for f in doc["findings"] if f["check"] == "txnindex_marker")
    assert (f["offset"], f["position"]) == (3, 34) and rc == 1


def test_checkpoints_against_segments(tmp_path, partition, capsys):
    root = partition.parent
    with Log.open(partition) as log:
        leo = log.log_end_offset
    (root / "recovery-point-offset-checkpoint").write_text(f"0\n1\nevents 0 {leo + 5}\n")
    (root / "replication-offset-checkpoint").write_text(f"0\n2\nevents 0 {leo}\nother 3 9\n")
    (root / "log-start-offset-checkpoint").write_text("0\n1\nevents 0 xx\n")
    (partition / "leader-epoch-checkpoint").write_text(f"0\n2\n0 0\n1 {leo + 10}\n")
    rc, doc = report(capsys, str(root))
    by = {f["check"]: f for f in doc["findings"]}
    assert by["checkpoint_beyond_end"]["found"] == leo + 5
    assert by["checkpoint_beyond_end"]["expected"] == f"<= {leo}"
    assert by["checkpoint_parse"]["file"].endswith("log-start-offset-checkpoint")
    assert "epoch_beyond_end" in checks(doc, "warning")
    assert "checkpoint_unknown_partition" in checks(doc, "info")
    assert rc == 1


def test_a_partition_that_lost_every_segment_is_an_error(tmp_path, partition, capsys):
    """No .log left (or one that is no longer a file) while the checkpoints say records were
    flushed: Kafka's loader would start the partition empty, so the records are gone."""
    root = partition.parent
    with Log.open(partition) as log:
        leo = log.log_end_offset
    (root / "recovery-point-offset-checkpoint").write_text(f"0\n1\nevents 0 {leo}\n")
    for f in partition.glob("*.log"):
        f.unlink()
    (partition / "00000000000000000000.log").mkdir()
    rc, doc = report(capsys, str(root))
    assert rc == 1
    by = {f["check"]: f for f in doc["findings"]}
    assert by["checkpoint_beyond_end"]["found"] == leo
    assert by["checkpoint_beyond_end"]["expected"] == "<= 0"
    assert by["segment_not_a_file"]["severity"] == "error"
    assert by["no_segments"]["severity"] == "warning"
    # only a .swap left: still a partition of the tree (a name and a Kafka file), reported
    (partition / "00000000000000000000.log").rmdir()
    (partition / "00000000000000000000.log.swap").write_bytes(b"")
    rc, doc = report(capsys, str(root))
    assert [p["directory"] for p in doc["partitions"]] == [str(partition)]


def test_corrupt_snapshot(partition, capsys):
    (partition / "00000000000000000030.snapshot").write_bytes(b"\x00\x01\x00\x00\x00\x00")
    rc, doc = report(capsys, str(partition))
    f = next(f for f in doc["findings"] if f["check"] == "snapshot_corrupt")
    assert f["message"].startswith("Snapshot failed schema validation") and rc == 1


def test_snapshot_deleted_while_verifying_is_not_a_finding(partition, capsys, monkeypatch):
    # a live writer deletes producer snapshots (roll keeps two, retention drops old ones): verify
    # lists the directory, then the file is gone when it is read. Found by
    # tools/reliability.py readers (verify died with FileNotFoundError).
    gone = partition / "00000000000000000020.snapshot"
    gone.write_bytes(b"")
    real_read_bytes = Path.read_bytes

    def read_bytes_after_delete(self: Path) -> bytes:
        if self == gone:
            self.unlink()  # the writer wins the race
        return real_read_bytes(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes_after_delete)
    rc, doc = report(capsys, str(partition))
    assert not gone.exists()
    assert rc == 0 and checks(doc) == []
    assert not any(f["path"] == str(gone) for f in doc["findings"])


def test_deep_decodes_records(tmp_path, capsys):
    d = tmp_path / "deep-0"
    d.mkdir()
    # a batch whose CRC is right but whose records area is garbage: only --deep sees it
    b = bytearray(encode_batch([Record(b"k", b"v", T)]))
    b[61] = 0x7F  # record length varint now claims far more bytes than exist
    import crc32c

    struct.pack_into(">I", b, 17, crc32c.crc32c(bytes(b[21:])))
    (d / "00000000000000000000.log").write_bytes(bytes(b))
    rc, doc = report(capsys, str(d))
    assert rc == 0
    rc, doc = report(capsys, str(d), "--deep")
    assert checks(doc) == ["record_decode"] and rc == 1


def test_usage(capsys, tmp_path):
    rc, _, err = run(capsys, "verify", str(tmp_path / "nope"))
    assert rc == 2 and "not a directory" in err
    rc, _, err = run(capsys, "verify")
    assert rc == 2


def test_json_lists_findings_per_partition_and_in_total(partition, capsys):
    log = sorted(partition.glob("*.log"))[0]
    data = bytearray(log.read_bytes())
    data[70] ^= 1
    log.write_bytes(bytes(data))
    rc, doc = report(capsys, str(partition.parent))
    [p] = doc["partitions"]
    assert [f["check"] for f in p["findings"] if f["severity"] == "error"] == ["batch_crc"]
    assert p["errors"] == 1 and doc["errors"] == 1
    assert {f["check"] for f in doc["findings"]} >= {"batch_crc"}
    assert doc["log_dir_findings"] == [] and rc == 1


def test_live_writer_is_named_not_blamed(tmp_path):
    """Issue 16: verify reads a live directory without crashing and says a writer holds it
    (its findings may be transient); a directory nobody holds gets no such warning."""
    from kafkalog import Record
    from kafkalog.tools.verify import verify_partition

    log = Log.open(tmp_path)
    log.append([Record(None, b"x", 1)])
    live = [f for f in verify_partition(tmp_path).findings if f.check == "live_writer"]
    assert len(live) == 1 and live[0].severity == "warning"
    assert f"pid {os.getpid()}" in live[0].message
    log.close()
    assert not [f for f in verify_partition(tmp_path).findings if f.check == "live_writer"]
