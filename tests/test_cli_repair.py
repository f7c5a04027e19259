"""``kafkalog repair`` via ``main(argv)``: exact loss reports, a clean copy, source untouched."""

from __future__ import annotations

import hashlib
import json
import shutil
import struct
from pathlib import Path

import pytest

from kafkalog.cli import main
from kafkalog.config import LogConfig
from kafkalog.log import Log
from kafkalog.records.batch import iter_batches
from kafkalog.records.builder import encode_batch
from kafkalog.records.record import Record

from .conftest import shared_fixture_path

T = 1700000000000


def run(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def repair_json(capsys, *argv: str) -> tuple[int, dict]:
    rc, out, err = run(capsys, "repair", "--json", *argv)
    assert err == ""
    return rc, json.loads(out)


def verify_errors(capsys, d: Path) -> int:
    _, out, _ = run(capsys, "verify", "--json", str(d))
    return json.loads(out)["errors"]


def digest(d: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(d.iterdir())
        if p.is_file()
    }


@pytest.fixture
def partition(tmp_path) -> Path:
    d = tmp_path / "src" / "events-0"
    cfg = LogConfig(segment_bytes=1200, index_interval_bytes=150)
    with Log.open(d, cfg) as log:
        for i in range(30):
            log.append_batches(
                encode_batch(
                    [Record(b"k%d" % i, b"v" * 40, T + i)],
                    base_offset=i,
                    partition_leader_epoch=i // 10,
                )
            )
    # the standalone Log's own bookkeeping files are not Kafka's: keep the dir Kafka-shaped
    for p in d.glob(".kafka*"):
        p.unlink()
    return d


def logs(d: Path) -> list[Path]:
    return sorted(d.glob("*.log"))


def offsets_in(d: Path) -> list[int]:
    return [r.offset for p in logs(d) for b in iter_batches(p.read_bytes()) for r in b]


def test_clean_partition_is_copied_unchanged(partition, tmp_path, capsys):
    before = digest(partition)
    out = tmp_path / "out"
    rc, doc = repair_json(capsys, str(partition), "--output", str(out))
    assert rc == 0 and doc["lost_bytes"] == 0
    [p] = doc["partitions"]
    assert p["lost_offset_ranges"] == [] and p["log_end_offset_after"] == 30
    assert digest(partition) == before  # source untouched
    for name, h in before.items():
        if name.endswith(".log"):
            assert digest(out)[name] == h
    assert offsets_in(out) == list(range(30))
    assert verify_errors(capsys, out) == 0


def test_torn_tail(partition, tmp_path, capsys):
    last = logs(partition)[-1]
    data = last.read_bytes()
    batches = list(iter_batches(data))
    last.write_bytes(data[:-7])  # the last batch loses its end
    out = tmp_path / "out"
    rc, doc = repair_json(capsys, str(partition), "--output", str(out))
    [p] = doc["partitions"]
    seg = p["segments"][-1]
    assert seg["lost_bytes"] == batches[-1].size - 7
    assert seg["kept_bytes"] == batches[-1].position
    assert seg["unparsed_bytes"] == batches[-1].size - 7
    assert p["log_end_offset_before"] == 29 and p["log_end_offset_after"] == 29
    assert offsets_in(out) == list(range(29))
    assert verify_errors(capsys, out) == 0 and rc == 1


def test_bit_flip_in_middle_segment_loses_the_rest(partition, tmp_path, capsys):
    segs = logs(partition)
    assert len(segs) >= 3
    mid = segs[1]
    data = bytearray(mid.read_bytes())
    batches = list(iter_batches(bytes(data)))
    bad = batches[2]
    data[bad.position + 70] ^= 0x01  # inside the third batch's records: its CRC breaks
    mid.write_bytes(bytes(data))
    later = [list(iter_batches(p.read_bytes())) for p in segs[2:]]
    out = tmp_path / "out"
    rc, doc = repair_json(capsys, str(partition), "--output", str(out))
    [p] = doc["partitions"]
    s = p["segments"][1]
    assert s["kept_bytes"] == bad.position
    assert "crc" in s["reason"]
    lost = [(b["first_offset"], b["last_offset"], b["intact"]) for b in s["lost_batches"]]
    assert lost[0] == (bad.base_offset, bad.last_offset, False)
    assert all(intact for _, _, intact in lost[1:])
    # every later segment goes (Kafka deletes the segments after a truncated one)
    assert [x["deleted"] for x in p["segments"][2:]] == [True] * len(later)
    first_lost = bad.base_offset
    assert p["lost_offset_ranges"] == [[first_lost, 29]]
    assert p["log_end_offset_after"] == first_lost
    assert offsets_in(out) == list(range(first_lost))
    assert len(logs(out)) == 2
    assert verify_errors(capsys, out) == 0 and rc == 1
    # the text report says the same
    rc, text, _ = run(capsys, "repair", str(partition), "--output", str(tmp_path / "out2"))
    assert f"lost offsets: {first_lost}..29;" in text and "CRC mismatch" in text


def test_keep_later_segments(partition, tmp_path, capsys):
    segs = logs(partition)
    data = bytearray(segs[1].read_bytes())
    data[70] ^= 0x01  # the first batch of the second segment
    segs[1].write_bytes(bytes(data))
    out = tmp_path / "out"
    rc, doc = repair_json(capsys, str(partition), "--output", str(out), "--keep-later-segments")
    [p] = doc["partitions"]
    assert not any(s["deleted"] for s in p["segments"])
    assert len(logs(out)) == len(segs)
    kept = offsets_in(out)
    assert kept[-1] == 29 and len(kept) < 30  # a gap where the second segment was
    assert rc == 1


def test_zero_filled_tail_and_preallocated_index(partition, tmp_path, capsys):
    last = logs(partition)[-1]
    size = last.stat().st_size
    with open(last, "ab") as f:
        f.write(b"\x00" * 4096)
    idx = last.with_suffix(".index")
    with open(idx, "ab") as f:
        f.write(b"\x00" * 8 * 64)
    out = tmp_path / "out"
    rc, doc = repair_json(capsys, str(partition), "--output", str(out))
    seg = doc["partitions"][0]["segments"][-1]
    assert (seg["kept_bytes"], seg["lost_bytes"]) == (size, 4096)
    assert seg["lost_batches"] == [] and seg["salvaged_batches"] == []
    assert (out / last.name).stat().st_size == size
    assert (out / idx.name).stat().st_size % 8 == 0
    assert verify_errors(capsys, out) == 0 and rc == 1


def test_resync_names_intact_batches_after_a_bad_header(partition, tmp_path, capsys):
    seg = logs(partition)[-1]
    data = bytearray(seg.read_bytes())
    batches = list(iter_batches(bytes(data)))
    assert len(batches) >= 3
    struct.pack_into(">i", data, batches[0].position + 8, 3)  # size 3 < 14: a corrupt header
    seg.write_bytes(bytes(data))
    out = tmp_path / "out"
    rc, doc = repair_json(capsys, str(partition), "--output", str(out))
    s = doc["partitions"][0]["segments"][-1]
    assert s["unparsed_position"] == batches[0].position
    assert [(b["first_offset"], b["position"]) for b in s["salvaged_batches"]] == [
        (b.base_offset, b.position) for b in batches[1:]
    ]
    assert rc == 1


def test_state_past_the_new_end_is_removed(partition, tmp_path, capsys):
    last = logs(partition)[-1]
    first_of_last = next(iter_batches(last.read_bytes())).base_offset
    last.write_bytes(last.read_bytes()[:30])  # only a broken header left
    (partition / "00000000000000000030.snapshot").write_bytes(b"")
    (partition / "00000000000000000099.index").write_bytes(b"")  # orphan
    (partition / "00000000000000000000.log.deleted").write_bytes(b"")
    base = int(last.name.split(".")[0])
    (partition / f"{base:020d}.txnindex").write_bytes(
        struct.pack(">hqqqq", 0, 7, first_of_last, first_of_last + 1, first_of_last)
    )
    out = tmp_path / "out"
    rc, doc = repair_json(capsys, str(partition), "--output", str(out))
    [p] = doc["partitions"]
    assert p["log_end_offset_after"] == first_of_last
    assert set(p["removed_files"]) >= {
        "00000000000000000030.snapshot",
        "00000000000000000099.index",
        "00000000000000000000.log.deleted",
    }
    assert p["txn_index_entries_removed"] == 1
    assert p["leader_epochs_removed"] == [] or all(
        o >= first_of_last for _, o in p["leader_epochs_removed"]
    )
    assert verify_errors(capsys, out) == 0 and rc == 1


def test_leader_epochs_truncated(partition, tmp_path, capsys):
    (partition / "leader-epoch-checkpoint").write_text("0\n3\n0 0\n1 10\n2 20\n")
    segs = logs(partition)
    # cut everything from offset 15 on: truncate the segment holding 15 at that batch
    for p in segs:
        bs = list(iter_batches(p.read_bytes()))
        hit = [b for b in bs if b.base_offset == 15]
        if hit:
            data = bytearray(p.read_bytes())
            data[hit[0].position + 70] ^= 1
            p.write_bytes(bytes(data))
    out = tmp_path / "out"
    rc, doc = repair_json(capsys, str(partition), "--output", str(out))
    [p] = doc["partitions"]
    assert p["log_end_offset_after"] == 15
    assert p["leader_epochs_removed"] == [[2, 20]]
    assert (out / "leader-epoch-checkpoint").read_text() == "0\n2\n0 0\n1 10\n"
    assert rc == 1


def test_log_dir_checkpoints_clamped(partition, tmp_path, capsys):
    root = partition.parent
    (root / "recovery-point-offset-checkpoint").write_text("0\n1\nevents 0 30\n")
    (root / "replication-offset-checkpoint").write_text("0\n1\nevents 0 30\n")
    last = logs(partition)[-1]
    first_of_last = next(iter_batches(last.read_bytes())).base_offset
    last.write_bytes(b"\x00" * 100)
    out = tmp_path / "outdir"
    rc, doc = repair_json(capsys, str(root), "--output", str(out))
    assert doc["checkpoint_changes"] == [
        f"recovery-point-offset-checkpoint: events-0 30 -> {first_of_last}",
        f"replication-offset-checkpoint: events-0 30 -> {first_of_last}",
    ]
    assert (
        out / "recovery-point-offset-checkpoint"
    ).read_text() == f"0\n1\nevents 0 {first_of_last}\n"
    assert verify_errors(capsys, out) == 0 and rc == 1


def test_partitions_without_a_log_segment_are_carried_over(partition, tmp_path, capsys):
    """A partition whose only segment waits in a .swap (Kafka's loader completes the swap)
    and one whose segments are all gone (an empty partition at its log start, the
    checkpoints lowered and said so) are in the output, not silently left out."""
    root = partition.parent
    swapped = root / "swapped-0"
    swapped.mkdir()
    (swapped / "00000000000000000000.log.swap").write_bytes(
        encode_batch([Record(None, b"a", T), Record(None, b"b", T)], base_offset=0))
    gone = root / "gone-0"
    gone.mkdir()
    (gone / "leader-epoch-checkpoint").write_text("0\n1\n0 0\n")
    (root / "recovery-point-offset-checkpoint").write_text("0\n1\ngone 0 7\n")
    out = tmp_path / "outdir"
    rc, doc = repair_json(capsys, str(root), "--output", str(out))
    assert rc == 1
    with Log.open(out / "swapped-0") as log:
        assert [r.value for r in log.records()] == [b"a", b"b"]
    with Log.open(out / "gone-0") as log:
        assert log.log_end_offset == 0
    assert "recovery-point-offset-checkpoint: gone-0 7 -> 0" in doc["checkpoint_changes"]
    assert verify_errors(capsys, out) == 0


def test_in_place(partition, capsys):
    last = logs(partition)[-1]
    size = last.stat().st_size
    with open(last, "ab") as f:
        f.write(b"\x01\x02\x03")
    rc, _ = repair_json(capsys, str(partition), "--in-place")
    assert last.stat().st_size == size and rc == 1


def test_real_fixture_copy_needs_nothing(tmp_path, capsys):
    src = shared_fixture_path("kafka-real", "LDI-POC", "__consumer_offsets-6")
    out = tmp_path / "co6"
    rc, doc = repair_json(capsys, str(src), "--output", str(out))
    assert rc == 0 and doc["lost_bytes"] == 0
    # the rebuilt index equals the one the broker wrote (same per-batch rule here)
    assert (out / "00000000000000000000.index").read_bytes() == (
        src / "00000000000000000000.index"
    ).read_bytes()
    assert (out / "00000000000000000000.log").read_bytes() == (
        src / "00000000000000000000.log"
    ).read_bytes()


@pytest.mark.parametrize(
    "argv",
    [
        ["repair"],
        ["repair", "/no/such/dir", "--output", "/tmp/x"],
        ["repair", "{src}"],  # neither --output nor --in-place
        ["repair", "{src}", "--output", "{src}"],  # exists
        [
            "repair",
            "{src}",
            "--output",
            "{src}/inside",
        ],
        ["repair", "{src}", "--output", "/tmp/y", "--in-place"],
    ],
)
def test_usage(partition, capsys, argv):
    argv = [a.replace("{src}", str(partition)) for a in argv]
    before = digest(partition)
    rc, _, err = run(capsys, *argv)
    assert rc == 2 and err
    assert digest(partition) == before
    shutil.rmtree("/tmp/y", ignore_errors=True)


def test_engine_recovery_rebuilds_the_txn_index(tmp_path, capsys):
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
    ]
    (d / "00000000000000000000.log").write_bytes(b"".join(batches))
    _, out, _ = run(capsys, "verify", "--json", str(d))
    found = json.loads(out)["findings"]
    assert [f["check"] for f in found if f["severity"] == "error"] == ["txnindex_missing"]
    out_dir = tmp_path / "out"
    rc, doc = repair_json(capsys, str(d), "--output", str(out_dir))
    [p] = doc["partitions"]
    assert p["txn_index_entries_added"] == 1 and p["lost_bytes"] == 0
    raw = (out_dir / "00000000000000000000.txnindex").read_bytes()
    # version 0, producer 7, first offset 0, last offset 1 (the ABORT marker), LSO 2
    assert raw == struct.pack(">hqqqq", 0, 7, 0, 1, 2)
    assert verify_errors(capsys, out_dir) == 0 and rc == 1
