"""``kafkalog compare-replicas`` over partition directories the engine wrote as brokers would:
replicated batches copied byte for byte (``append_batches``, a follower's append), divergent
suffixes written in later leader epochs (an unclean election), high watermarks in each log
dir's ``replication-offset-checkpoint``.

The simulated outcome is checked against the engine doing what Kafka's follower does
(truncate, then append the leader's batches from the fetch offset): the replicas then hold the
same records.
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from aiokafka.record.memory_records import MemoryRecords

from kafkalog import Log, LogDir, Record
from kafkalog.checkpoint import OffsetCheckpointFile
from kafkalog.cli import main as cli_main
from kafkalog.decoders import cluster_metadata as cm
from kafkalog.errors import CorruptRecordError
from kafkalog.records.builder import encode_batch
from kafkalog.replication import command
from kafkalog.replication.compare import compare_replicas


def _brokers(root: Path, *ids: int, config: dict | None = None) -> dict[int, LogDir]:
    out = {}
    for bid in ids:
        d = LogDir.open(root / f"b{bid}", node_id=bid)
        d.create_topic("t", 1, config=config) if config else d.create_topic("t", 1)
        out[bid] = d
    return out


def _append(log: Log, batches: int, epoch: int, tag: bytes, keys: int = 10) -> None:
    for _ in range(batches):
        first = log.log_end_offset
        log.append([Record(b"k%d" % (i % keys), b"%s-%d" % (tag, first + i), 1000 + first + i)
                    for i in range(10)], partition_leader_epoch=epoch)


def _replicate(leader: Log, follower: Log) -> None:
    while follower.log_end_offset < leader.log_end_offset:   # one fetch per round
        follower.append_batches(leader.read(follower.log_end_offset, 1 << 20))


def _close(root: Path, brokers: dict[int, LogDir], hws: dict[int, int]) -> None:
    for d in brokers.values():
        d.close()
    for bid, hw in hws.items():
        OffsetCheckpointFile(root / f"b{bid}" / "replication-offset-checkpoint").write(
            {("t", 0): hw})


def _unclean(root: Path) -> None:
    """Broker 1 led in epoch 0 (offsets 0..149, 100..149 never replicated); broker 2, in sync
    up to 100, was elected uncleanly in epoch 1 and wrote 100..129."""
    b = _brokers(root, 1, 2)
    l1, l2 = b[1].log("t", 0), b[2].log("t", 0)
    _append(l1, 10, 0, b"a")
    _replicate(l1, l2)
    _append(l1, 5, 0, b"b")
    _append(l2, 3, 1, b"c")
    _close(root, b, {1: 100, 2: 100})


def test_unclean_election_truncation_and_loss(tmp_path):
    _unclean(tmp_path)
    [r] = compare_replicas([tmp_path / "b1", tmp_path / "b2"])
    assert (r.topic, r.partition, r.leader) == ("t", 0, "2")
    assert r.leader_reason == "highest leader epoch, then log end offset"
    assert [(x.name, x.state.log_end_offset, x.state.high_watermark, x.state.epochs)
            for x in r.replicas] == [("1", 150, 100, ((0, 0),)),
                                     ("2", 130, 100, ((0, 0), (1, 100)))]
    [pair] = r.pairs
    assert (pair.start, pair.end, pair.same, pair.only_a, pair.only_b) == (0, 130, 100, 0, 0)
    assert pair.differing.tolist() == list(range(100, 130))
    assert (pair.first.offset, pair.first.field, pair.first.a, pair.first.b) == (
        100, "value", b"b-100", b"c-100")

    chosen, other = r.candidates
    assert (chosen.leader, chosen.leader_epoch) == ("2", 2)
    [f] = chosen.followers
    assert (f.replica, f.outcome.truncated_to, f.outcome.fetch_offset) == ("1", 100, 100)
    assert [s.kind for s in f.outcome.steps] == ["diverging_epoch", "truncate", "fetch"]
    assert (f.discarded, f.discarded_below_hw) == (50, 0)
    assert f.lost_offsets.tolist() == list(range(100, 150))
    assert (chosen.lost, chosen.lost_committed, chosen.kept_differences) == (50, 0, 0)
    # broker 1 leading instead: broker 2's epoch-1 records go
    [g] = other.followers
    assert (other.leader, g.replica, g.outcome.truncated_to) == ("1", "2", 100)
    assert (other.lost, other.lost_committed) == (30, 0)


def test_engine_doing_the_followers_work_makes_the_replicas_agree(tmp_path):
    _unclean(tmp_path)
    [r] = compare_replicas([tmp_path / "b1", tmp_path / "b2"])
    [f] = r.candidates[0].followers
    # do what Kafka's fetcher does on broker 1: truncate, then append broker 2's batches
    with Log.open(tmp_path / "b2" / "t-0", read_only=True, standalone=False) as leader, \
            Log.open(tmp_path / "b1" / "t-0", standalone=False) as follower:
        follower.truncate_to(f.outcome.follower.log_end_offset)
        assert follower.log_end_offset == f.outcome.fetch_offset
        _replicate(leader, follower)
    [after] = compare_replicas([tmp_path / "b1", tmp_path / "b2"])
    [pair] = after.pairs
    assert (pair.same, len(pair.differing), pair.only_a, pair.only_b) == (130, 0, 0, 0)
    [g] = after.candidates[0].followers
    assert g.outcome.truncated_to is None and [s.kind for s in g.outcome.steps] == ["fetch"]
    assert after.candidates[0].lost == 0


def test_acknowledged_records_lost_under_an_out_of_sync_leader(tmp_path):
    b = _brokers(tmp_path, 1, 2)
    l1, l2 = b[1].log("t", 0), b[2].log("t", 0)
    _append(l1, 10, 0, b"a")
    _replicate(l1, l2)
    _append(l1, 5, 0, b"b")            # acknowledged (broker 1's high watermark 150)
    _append(l2, 2, 1, b"c")            # broker 2, out of sync, elected uncleanly
    _close(tmp_path, b, {1: 150, 2: 100})
    [r] = compare_replicas([tmp_path / "b1", tmp_path / "b2"])
    chosen, other = r.candidates
    assert chosen.leader == "2"
    assert (chosen.lost, chosen.lost_committed) == (50, 50)
    assert chosen.followers[0].discarded_below_hw == 50
    assert (other.leader, other.lost, other.lost_committed) == ("1", 20, 0)
    out, err = io.StringIO(), io.StringIO()
    assert command.main([str(tmp_path / "b1"), str(tmp_path / "b2")], stdout=out,
                        stderr=err) == 1
    text = out.getvalue()
    assert "Leader: 2 (highest leader epoch, then log end offset)" in text
    assert "  1: truncates to 100 (discards 50 records, 50 below its high watermark 150); " \
           "fetches from 100" in text
    assert "  Outcome: 50 records lost (50 below the high watermark of the replica holding " \
           "them); the replicas then agree" in text
    assert "If another replica led:\n  1: 20 records lost (none below" in text
    assert command.main([str(tmp_path / "b1"), str(tmp_path / "b2"), "--leader", "1"],
                        stdout=io.StringIO(), stderr=err) == 0


def test_a_follower_without_leader_epochs_truncates_to_its_high_watermark(tmp_path):
    b = _brokers(tmp_path, 1, 2)
    l1, l2 = b[1].log("t", 0), b[2].log("t", 0)
    _append(l1, 10, 0, b"a")
    _replicate(l1, l2)
    _append(l2, 3, 0, b"x")          # never acknowledged
    _close(tmp_path, b, {1: 100, 2: 100})
    (tmp_path / "b2" / "t-0" / "leader-epoch-checkpoint").unlink()
    [r] = compare_replicas([tmp_path / "b1", tmp_path / "b2"], leader="1")
    assert r.leader_reason == "given"
    [f] = r.candidates[0].followers
    assert f.outcome.steps[0].kind == "truncate"
    assert "due to local high watermark 100" in f.outcome.steps[0].message
    assert (f.outcome.truncated_to, f.discarded, r.candidates[0].lost) == (100, 30, 30)


def test_a_follower_below_the_leaders_log_start_is_emptied(tmp_path):
    b = _brokers(tmp_path, 1, 2)
    l1, l2 = b[1].log("t", 0), b[2].log("t", 0)
    _append(l1, 5, 0, b"a")
    _replicate(l1, l2)
    _append(l1, 5, 0, b"a")
    l1.roll()
    _append(l1, 1, 0, b"a")
    l1.delete_records_before(60)
    _close(tmp_path, b, {1: 110, 2: 50})
    [r] = compare_replicas([tmp_path / "b1", tmp_path / "b2"])
    assert r.leader == "1"
    [f] = r.candidates[0].followers
    assert f.outcome.truncated_fully
    assert (f.outcome.follower.log_start_offset, f.outcome.fetch_offset) == (60, 60)
    assert [s.kind for s in f.outcome.steps] == ["offset_out_of_range", "truncate_fully",
                                                 "fetch"]
    # its records lie below the leader's log start: deleted there, not lost
    assert (f.discarded, r.candidates[0].lost) == (50, 0)
    [pair] = r.pairs
    assert pair.start >= pair.end                      # no offsets in common


def test_compaction_on_one_broker_is_not_a_difference(tmp_path):
    config = {"cleanup.policy": "compact", "segment.bytes": 2048}
    b = _brokers(tmp_path, 1, 2, config=config)
    l1, l2 = b[1].log("t", 0), b[2].log("t", 0)
    _append(l1, 20, 0, b"a", keys=3)
    _replicate(l1, l2)
    l1.roll()
    l1.clean(first_dirty_offset=0)
    assert l1.log_end_offset == l2.log_end_offset == 200
    _close(tmp_path, b, {1: 200, 2: 200})
    [r] = compare_replicas([tmp_path / "b1", tmp_path / "b2"])
    [pair] = r.pairs
    assert len(pair.differing) == 0 and pair.only_a == 0
    assert pair.only_b > 0 and pair.same + pair.only_b == 200
    assert all(c.lost == 0 and c.kept_differences == 0 for c in r.candidates)


def _metadata(root: Path, replicas: list[int], isr: list[int], leader: int,
              elr: list[int] | None = None) -> Path:
    part = root / "__cluster_metadata-0"
    part.mkdir(parents=True)
    record = {"partitionId": 0, "topicId": "AAAAAAAAAAAAAAAAAAAAAQ", "replicas": replicas,
              "isr": isr, "leader": leader, "leaderEpoch": 5, "partitionEpoch": 7,
              "directories": []}
    if elr is not None:  # (PartitionRecord v2)
        record.update(eligibleLeaderReplicas=elr, lastKnownElr=[])
    records = [("TopicRecord", {"name": "t", "topicId": "AAAAAAAAAAAAAAAAAAAAAQ"}, None),
               ("PartitionRecord", record, 1 if elr is None else 2)]
    (part / "00000000000000000000.log").write_bytes(encode_batch(
        [(None, cm.encode_record(n, d, v), 1000) for n, d, v in records],
        partition_leader_epoch=1))
    return part


def test_the_metadata_names_the_leader(tmp_path):
    _unclean(tmp_path)
    part = _metadata(tmp_path / "controller", [1, 2], [1], 1)
    [r] = compare_replicas([tmp_path / "b1", tmp_path / "b2"], metadata=part)
    assert r.leader == "1" and "the metadata's leader (leader epoch 5, ISR [1])" in \
        r.leader_reason
    assert r.candidates[0].leader_epoch == 6
    assert r.candidates[0].followers[0].outcome.truncated_to == 100


@pytest.mark.parametrize(("isr", "elr", "elected", "how"), [
    ([3, 2], None, "2", "Kafka's election among the replicas given"),
    ([3], None, "1", "an unclean election (no replica of the ISR [3] among those given"),
    ([3], [2], "2", "KRaft's election from the eligible leader replicas [2]"),
])
def test_without_the_metadata_leader_kafkas_election_picks(tmp_path, isr, elr, elected, how):
    _unclean(tmp_path)
    part = _metadata(tmp_path / "controller", [3, 1, 2], isr, 3, elr)
    [r] = compare_replicas([tmp_path / "b1", tmp_path / "b2"], metadata=part)
    assert r.leader == elected and r.leader_reason.startswith(how)
    assert r.problems == ["the metadata's leader 3 (leader epoch 5) is not among the replicas "
                          "given"]


def test_corrupt_bytes_are_reported_with_file_and_position(tmp_path):
    _unclean(tmp_path)
    seg = tmp_path / "b1" / "t-0" / "00000000000000000000.log"
    data = bytearray(seg.read_bytes())
    data[300] ^= 0xFF
    seg.write_bytes(bytes(data))
    with pytest.raises(CorruptRecordError) as e:
        compare_replicas([tmp_path / "b1", tmp_path / "b2"])
    assert str(seg) in str(e.value) and "position" in str(e.value)
    err = io.StringIO()
    assert command.main([str(tmp_path / "b1"), str(tmp_path / "b2")], stdout=io.StringIO(),
                        stderr=err) == 1
    assert str(seg) in err.getvalue()


def test_command_json_filters_and_usage(tmp_path, capsys):
    _unclean(tmp_path)
    out = io.StringIO()
    assert command.main([str(tmp_path / "b1"), str(tmp_path / "b2"), "--json"],
                        stdout=out) == 0
    doc = json.loads(out.getvalue())
    [p] = doc["partitions"]
    assert p["leader"] == "2"
    assert p["pairs"][0]["differentOffsets"] == [[100, 129]]
    follower = p["candidates"][0]["followers"][0]
    assert (follower["truncatedTo"], follower["lostOffsets"]) == (100, [[100, 149]])
    assert [s["kind"] for s in follower["steps"]] == ["diverging_epoch", "truncate", "fetch"]
    out = io.StringIO()
    assert command.main([str(tmp_path / "b1"), str(tmp_path / "b2"), "--topic", "other"],
                        stdout=out) == 0
    assert out.getvalue() == "No partition is held by two or more of the directories given.\n"
    assert compare_replicas([tmp_path / "b1", tmp_path / "b2"], partitions=[1]) == []
    assert len(compare_replicas([tmp_path / "b1", tmp_path / "b2"], topics=["t"],
                                partitions=[0])) == 1
    err = io.StringIO()
    assert command.main([str(tmp_path / "b1"), str(tmp_path / "b2"), "--leader", "9"],
                        stdout=io.StringIO(), stderr=err) == 1
    assert "no replica named '9' (replicas: 1, 2)" in err.getvalue()
    assert command.main(["--bogus"], stdout=io.StringIO(), stderr=io.StringIO()) == 2
    assert cli_main(["compare-replicas", str(tmp_path / "b1"), str(tmp_path / "b2")]) == 0
    assert "Following 2 (leader epoch 2):" in capsys.readouterr().out


def test_partition_dirs_without_broker_ids_are_named_by_log_dir(tmp_path):
    _unclean(tmp_path)
    for bid in (1, 2):
        shutil.copytree(tmp_path / f"b{bid}" / "t-0", tmp_path / f"copy{bid}" / "t-0")
    [r] = compare_replicas([tmp_path / "copy1" / "t-0", tmp_path / "copy2" / "t-0"])
    assert [x.name for x in r.replicas] == [str(tmp_path / "copy1"), str(tmp_path / "copy2")]
    assert r.leader == str(tmp_path / "copy2")
    # no replication-offset-checkpoint: high watermarks unknown
    assert all(x.state.high_watermark is None for x in r.replicas)


def test_save_lost_copies_the_followers_batches(tmp_path):
    _unclean(tmp_path)
    out = io.StringIO()
    assert command.main([str(tmp_path / "b1"), str(tmp_path / "b2"), "--save-lost",
                         str(tmp_path / "lost")], stdout=out) == 0
    dest = tmp_path / "lost" / "broker-1" / "t-0"
    assert f"Saved the 50 records 1 would lose (5 batches) to {dest}" in out.getvalue()
    with Log.open(dest, read_only=True) as saved, \
            Log.open(tmp_path / "b1" / "t-0", read_only=True, standalone=False) as source:
        assert (saved.log_start_offset, saved.log_end_offset) == (100, 150)
        assert saved.read(100, 1 << 20) == source.read(100, 1 << 20)   # the same bytes
        assert [r.value for r in saved.records()] == [b"b-%d" % o for o in range(100, 150)]
    # a peer reads them: aiokafka over the saved segment
    data = (dest / "00000000000000000100.log").read_bytes()
    records, batches = [], MemoryRecords(data)
    while (b := batches.next_batch()) is not None:
        assert b.validate_crc()
        records += [(r.offset, r.value) for r in b]
    assert records == [(o, b"b-%d" % o) for o in range(100, 150)]
    # never overwritten
    err = io.StringIO()
    assert command.main([str(tmp_path / "b1"), str(tmp_path / "b2"), "--save-lost",
                         str(tmp_path / "lost")], stdout=io.StringIO(), stderr=err) == 1
    assert "already holds files" in err.getvalue() and str(dest) in err.getvalue()


def test_many_partitions_summary_and_problems_only(tmp_path):
    ds = {bid: LogDir.open(tmp_path / f"b{bid}", node_id=bid) for bid in (1, 2)}
    for d in ds.values():
        d.create_topic("t", 2)
    for pid in (0, 1):
        l1, l2 = ds[1].log("t", pid), ds[2].log("t", pid)
        _append(l1, 3, 0, b"a")
        _replicate(l1, l2)
        if pid == 0:                           # only partition 0 diverges
            _append(l1, 1, 0, b"b")
            _append(l2, 1, 1, b"x")
    _close(tmp_path, ds, {1: 30, 2: 30})      # (partition 0's high watermarks)
    args = [str(tmp_path / "b1"), str(tmp_path / "b2")]
    out = io.StringIO()
    assert command.main(args, stdout=out) == 0
    text = out.getvalue()
    assert "Partition: 0" in text and "Partition: 1" in text
    assert text.endswith("2 partitions compared: 1 agree, 1 lose records (0 acknowledged "
                         "ones), 0 stay inconsistent, 0 stuck\n")
    out = io.StringIO()
    assert command.main([*args, "--problems-only"], stdout=out) == 0
    assert "Partition: 0" in out.getvalue() and "Partition: 1" not in out.getvalue()
    out = io.StringIO()
    assert command.main([*args, "--json", "--problems-only"], stdout=out) == 0
    doc = json.loads(out.getvalue())
    assert [p["partition"] for p in doc["partitions"]] == [0]
    assert doc["summary"] == {"partitions": 2, "agree": 1, "losing": 1,
                              "losingAcknowledged": 0, "inconsistent": 0, "stuck": 0}


def test_legacy_entries_compare_and_save(tmp_path, monkeypatch):
    """v0/v1 messages (a pre-0.11 broker's segments): wrappers taken as equal by their header,
    different ones decoded (through the columnar decoder), saved whole."""
    from kafkalog.records.legacy import encode_legacy
    from kafkalog.replication import compare as compare_mod

    for run_bytes in (1, 16 << 20):   # windows cut at every batch, and one window
        monkeypatch.setattr(compare_mod, "_RUN_BYTES", run_bytes)
        root = tmp_path / str(run_bytes)
        for side, value in (("b1", b"x"), ("b2", b"y")):
            with Log.open(root / side / "t-0") as log:
                log.append_batches(encode_legacy([Record(b"k", b"v%d" % i, 1000 + i)
                                                  for i in range(5)], magic=1,
                                                 compression="gzip"))
                log.append_batches(encode_legacy([Record(b"k", value, 2000),
                                                  Record(b"k", b"z", 2001)], magic=1,
                                                 base_offset=5, compression="gzip"))
                log.append_batches(encode_legacy([Record(b"k", b"w", 3000)], magic=0,
                                                 base_offset=7))
        [r] = compare_replicas([root / "b1" / "t-0", root / "b2" / "t-0"],
                               leader=str(root / "b2"))
        [pair] = r.pairs
        assert (pair.same, pair.differing.tolist(), pair.only_a, pair.only_b) == (7, [5], 0, 0)
        assert (pair.first.field, pair.first.a, pair.first.b) == ("value", b"x", b"y")
        [f] = r.candidates[0].followers
        assert f.lost_offsets.tolist() == [5]
        [saved] = compare_mod.save_lost(r, root / "lost")
        assert (saved.batches, saved.records) == (1, 1)
        with Log.open(saved.directory, read_only=True) as log:
            assert [(x.offset, x.value) for x in log.records()] == [(5, b"x"), (6, b"z")]
