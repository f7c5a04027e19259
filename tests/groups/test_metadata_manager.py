"""GroupMetadataManager: real brokers' ``__consumer_offsets`` (load, assignments, byte-for-byte
rewrite), our own records read by DumpLogSegments' decoder and by kafka-python, and the storage
rules (tombstones, transactions, expiry, deletion)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalog import LogDir, ManualClock, iter_batches
from kafkalog.decoders import message
from kafkalog.decoders import offsets as offsets_decoder
from kafkalog.groups import (
    GroupIdNotFoundError,
    GroupMetadataManager,
    NonEmptyGroupError,
    NotCoordinatorError,
    assign,
    offsets_partition,
)
from kafkalog.groups import consumer_protocol as cp
from kafkalog.groups import records as group_records
from kafkalog.groups.records import GroupMetadata, MemberMetadata, OffsetAndMetadata

from ..conftest import shared_fixture_path

with warnings.catch_warnings():      # kafka-python reads its schemas with a deprecated API
    warnings.simplefilter("ignore", DeprecationWarning)
    kafka_mr = pytest.importorskip("kafka.record.memory_records")

REAL_TREES = ["LDI-POC", "VolodymyrZee-kafka", "KAIPASUBHASH-kafka-logs"]
T0 = 1_700_000_000_000


# ---------------------------------------------------------------------------------------------
# an independent reading of the fixtures: kafka-python's record reader + Kafka's JSON decoder
# ---------------------------------------------------------------------------------------------

def _peer_records(partition_dir: Path) -> list[tuple[int, bytes, bytes | None, bool, int]]:
    """(offset, key, value, transactional, producer id) of every record, read by kafka-python."""
    out = []
    for seg in sorted(partition_dir.glob("*.log")):
        mr = kafka_mr.MemoryRecords(seg.read_bytes())
        while mr.has_next():
            batch = mr.next_batch()
            if batch is None:
                break
            for r in batch:
                out.append((r.offset, r.key, r.value, batch.is_transactional, batch.producer_id))
    return out


def _expected_state(tree: Path) -> tuple[dict, dict]:
    """What the records say: last offset per (group, topic, partition) and last metadata per
    group, tombstones applied, from the JSON Kafka's DumpLogSegments prints."""
    committed: dict[str, dict[tuple[str, int], int]] = {}
    groups: dict[str, dict | None] = {}
    for d in sorted(tree.glob("__consumer_offsets-*")):
        for _, key, value, txn, _ in _peer_records(d):
            assert not txn     # the fixtures hold no transactional commits
            rec = offsets_decoder.decode_record_obj(key, value)
            k = rec["key"]
            if rec["type"] in (0, 1):
                tp = (k["topic"], k["partition"])
                groups.setdefault(k["group"], None)
                if value is None:
                    committed.get(k["group"], {}).pop(tp, None)
                else:
                    committed.setdefault(k["group"], {})[tp] = rec["value"]["offset"]
            elif rec["type"] == 2:
                if value is None:
                    groups.pop(k["group"], None)
                else:
                    groups[k["group"]] = offsets_decoder._value_json(rec)
    return committed, groups


@pytest.mark.parametrize("name", REAL_TREES)
def test_real_consumer_offsets_load_as_the_records_say(name: str) -> None:
    tree = shared_fixture_path("kafka-real", name)
    committed, groups = _expected_state(tree)
    with LogDir.open(tree, read_only=True) as logs:
        m = GroupMetadataManager(logs)
        assert m.list_groups() == sorted(groups)
        assert m.partitions() == sorted(int(p.name.rsplit("-", 1)[1])
                                        for p in tree.glob("__consumer_offsets-*"))
        for group, want in groups.items():
            assert m.fetch_offsets(group) == dict(sorted(committed.get(group, {}).items()))
            d = m.describe_group(group)
            if want is None:
                assert (d.state, d.protocol_type, d.members) == ("Empty", "", ())
                continue
            assert (d.protocol_type, d.protocol, d.generation, d.leader) == (
                want["protocolType"], want["protocol"], want["generation"], want["leader"])
            assert d.state == ("Stable" if want["members"] else "Empty")
            assert [x.member_id for x in d.members] == [x["memberId"] for x in want["members"]]
            for got_m, want_m in zip(d.members, want["members"]):
                assert (got_m.client_id, got_m.client_host) == (want_m["clientId"],
                                                                want_m["clientHost"])
                assert got_m.subscription.topics == want_m["subscription"]["topics"]
                assert got_m.assignment.partitions == [
                    (tp["topic"], p) for tp in want_m["assignment"]["assignedPartitions"]
                    for p in tp["partitions"]]
            # every group lives in the partition Kafka's hash gives it
            assert m.partition_for(group) in m.partitions()


def _partition_counts(tree: Path, logs: LogDir) -> dict[str, int]:
    """Partition counts as the cluster knew them: KRaft metadata when the tree has it, else the
    partition directories present."""
    counts: dict[str, int] = {}
    for t, _ in logs.partitions():
        counts[t] = counts.get(t, 0) + 1
    meta = tree / "__cluster_metadata-0"
    if meta.is_dir():
        from kafkalog.decoders import cluster_metadata

        names: dict[str, str] = {}
        parts: dict[str, int] = {}
        for seg in sorted(meta.glob("*.log")):
            for batch in iter_batches(seg):
                if batch.is_control:
                    continue
                for r in batch:
                    rec = cluster_metadata.decode_record_obj(r.key, r.value)
                    if rec.get("name") == "TopicRecord":
                        names[rec["data"]["topicId"]] = rec["data"]["name"]
                    elif rec.get("name") == "PartitionRecord":
                        tid = rec["data"]["topicId"]
                        parts[tid] = parts.get(tid, 0) + 1
        counts.update({names[tid]: n for tid, n in parts.items() if tid in names})
    return counts


@pytest.mark.parametrize("name", REAL_TREES)
def test_real_assignments_recompute_with_the_recorded_protocol(name: str) -> None:
    """Every GroupMetadata record a real broker wrote: the recorded protocol (the assignor the
    leader ran), fed the recorded subscriptions, gives the recorded assignment."""
    tree = shared_fixture_path("kafka-real", name)
    checked = 0
    with LogDir.open(tree, read_only=True) as logs:
        counts = _partition_counts(tree, logs)
        for d in sorted(tree.glob("__consumer_offsets-*")):
            for _, key, value, _, _ in _peer_records(d):
                rec = offsets_decoder.decode_record_obj(key, value)
                if rec["type"] != 2 or value is None or not rec["value"]["members"]:
                    continue
                v = rec["value"]
                subs, instances, recorded = {}, {}, {}
                for mm in v["members"]:
                    s = cp.decode_subscription(mm["subscription"])
                    subs[mm["memberId"]] = s.topics
                    instances[mm["memberId"]] = mm.get("groupInstanceId")
                    recorded[mm["memberId"]] = sorted(
                        cp.decode_assignment(mm["assignment"]).partitions)
                known = {t: counts.get(t, 0) for ts in subs.values() for t in ts}
                for t in known:     # a topic not in the tree: as many as were handed out
                    if known[t] == 0:
                        known[t] = 1 + max((p for a in recorded.values() for tt, p in a
                                            if tt == t), default=-1)
                got = assign(v["protocol"], subs, known, group_instance_ids=instances)
                assert {mm: sorted(a) for mm, a in got.items()} == recorded, (d, v["generation"])
                checked += 1
    assert checked > 0


# ---------------------------------------------------------------------------------------------
# byte for byte: the fixtures' batches rewritten through GroupMetadataManager
# ---------------------------------------------------------------------------------------------

def _replay_through_manager(src: Path, dest_root: Path) -> Path:
    """Apply every batch of a real ``__consumer_offsets-N`` as the operation that wrote it,
    with the clock at the batch's timestamp; return our partition directory."""
    clock = ManualClock(T0)
    partition = int(src.name.rsplit("-", 1)[1])
    with LogDir.open(dest_root, {"offsets.topic.num.partitions": "50"}, clock=clock) as logs:
        m = GroupMetadataManager(logs, record_format="3.x")
        for seg in sorted(src.glob("*.log")):
            for batch in iter_batches(seg):
                clock.set(batch.max_timestamp)
                recs = [offsets_decoder.decode_record_obj(r.key, r.value) for r in batch]
                group = recs[0]["key"]["group"]
                assert m.partition_for(group) == partition
                if recs[0]["type"] == 1:
                    m.commit_offsets(group, {
                        (x["key"]["topic"], x["key"]["partition"]): OffsetAndMetadata(
                            x["value"]["offset"], x["value"]["leaderEpoch"],
                            x["value"]["metadata"], x["value"]["commitTimestamp"])
                        for x in recs})
                elif recs[0]["value"] is None:
                    m.delete_group(group, force=True)
                else:
                    v = recs[0]["value"]
                    m.store_group(GroupMetadata(
                        group, v["protocolType"], v["generation"], v["protocol"], v["leader"],
                        v["currentStateTimestamp"], tuple(MemberMetadata(
                            x["memberId"], x["clientId"], x["clientHost"],
                            x["rebalanceTimeout"], x["sessionTimeout"], x["subscription"],
                            x["assignment"], x["groupInstanceId"]) for x in v["members"])))
    return dest_root / src.name


@pytest.mark.parametrize("name", ["LDI-POC", "VolodymyrZee-kafka"])
def test_real_batches_rewritten_byte_for_byte(name: str, tmp_path: Path) -> None:
    tree = shared_fixture_path("kafka-real", name)
    for src in sorted(tree.glob("__consumer_offsets-*")):
        ours = _replay_through_manager(src, tmp_path / src.name)
        assert (ours / "00000000000000000000.log").read_bytes() == \
            (src / "00000000000000000000.log").read_bytes(), src


def test_dump_segments_prints_our_records_as_kafkas(tmp_path: Path) -> None:
    """``dump-segments --offsets-decoder`` prints our rewrite exactly as the broker's file, and a
    fresh commit as Kafka's tool prints one (key type 1, value v3)."""
    src = shared_fixture_path("kafka-real", "LDI-POC", "__consumer_offsets-6")
    ours = _replay_through_manager(src, tmp_path / "rewrite")

    def dump(path: Path) -> list[str]:
        out = subprocess.run([sys.executable, "-m", "kafkalog", "dump-segments", "--files",
                              str(path), "--offsets-decoder"], capture_output=True, text=True,
                             check=True).stdout.splitlines()
        return out[1:]          # the first line names the file

    assert dump(ours / "00000000000000000000.log") == dump(src / "00000000000000000000.log")

    clock = ManualClock(T0)
    with LogDir.open(tmp_path / "fresh", {"offsets.topic.num.partitions": "1"},
                     clock=clock) as logs:
        GroupMetadataManager(logs).commit_offsets("app", {("orders", 3): 42}, leader_epoch=5,
                                                  metadata="m")
    lines = dump(tmp_path / "fresh" / "__consumer_offsets-0" / "00000000000000000000.log")
    assert lines[1].startswith("baseOffset: 0 lastOffset: 0 count: 1 baseSequence: 0 "
                               "lastSequence: 0 producerId: -1 producerEpoch: -1 "
                               "partitionLeaderEpoch: 0 isTransactional: false isControl: false")
    assert lines[2].endswith(
        'key: {"type":"1","data":{"group":"app","topic":"orders","partition":3}} payload: '
        '{"version":"3","data":{"offset":42,"leaderEpoch":5,"metadata":"m",'
        f'"commitTimestamp":{T0}}}}}')


def test_kafka_python_decodes_our_batches(tmp_path: Path) -> None:
    clock = ManualClock(T0)
    with LogDir.open(tmp_path, {"offsets.topic.num.partitions": "1"}, clock=clock) as logs:
        m = GroupMetadataManager(logs)
        m.commit_offsets("g", {("t", 0): 1, ("t", 1): 2})
        m.commit_offsets("g", {("t", 0): 9}, producer_id=7, producer_epoch=3)
        m.end_transaction(7, 3, commit=True)
        m.store_group(GroupMetadata("g", "consumer", 1, "range", "m1", T0, (MemberMetadata(
            "m1", "c", "/127.0.0.1", 300000, 45000, cp.encode_subscription(cp.Subscription(["t"])),
            cp.encode_assignment(cp.Assignment([("t", 0), ("t", 1)]))),)))
    data = (tmp_path / "__consumer_offsets-0" / "00000000000000000000.log").read_bytes()
    mr = kafka_mr.MemoryRecords(data)
    seen = []
    while mr.has_next():
        b = mr.next_batch()
        assert b.validate_crc()
        seen.append((b.base_offset, b.producer_id, b.producer_epoch, b.base_sequence,
                     b.is_transactional, b.is_control_batch, [r.offset for r in b]))
        for r in b:
            if not b.is_control_batch:
                assert offsets_decoder.decode_record_obj(r.key, r.value)["key"]["group"] == "g"
    assert seen == [(0, -1, -1, 0, False, False, [0, 1]), (2, 7, 3, 0, True, False, [2]),
                    (3, 7, 3, -1, True, True, [3]), (4, -1, -1, 0, False, False, [4])]


# ---------------------------------------------------------------------------------------------
# storage rules
# ---------------------------------------------------------------------------------------------

@pytest.fixture
def logdir(tmp_path: Path):
    clock = ManualClock(T0)
    logs = LogDir.open(tmp_path, {"offsets.topic.num.partitions": "4"}, clock=clock)
    yield logs, clock
    logs.close()


def test_topic_created_compacted_with_kafkas_configs(logdir) -> None:
    logs, _ = logdir
    GroupMetadataManager(logs)
    assert [p for t, p in logs.partitions() if t == "__consumer_offsets"] == [0, 1, 2, 3]
    assert logs.topic_overrides("__consumer_offsets") == {"cleanup.policy": "compact",
                                                          "segment.bytes": "104857600"}
    cfg = logs.topic_config("__consumer_offsets")
    assert cfg.cleanup_policy == ("compact",) and cfg.segment_bytes == 100 * 1024 * 1024


def test_offsets_topic_partitions_from_log_dir_config(tmp_path: Path) -> None:
    with LogDir.open(tmp_path, {"offsets.topic.num.partitions": "7"}) as logs:
        m = GroupMetadataManager(logs)
        assert m.num_partitions == 7 and len(m.partitions()) == 7
        assert m.partition_for("console-consumer-1") == offsets_partition("console-consumer-1", 7)


def test_commit_fetch_reload_and_tombstones(logdir) -> None:
    logs, clock = logdir
    m = GroupMetadataManager(logs)
    m.commit_offsets("a", {("t", 0): 5, ("t", 1): 6}, metadata="x", leader_epoch=2)
    m.commit_offsets("a", {("t", 0): 7})
    m.commit_offsets("b", {("u", 0): 1})
    assert m.fetch_offsets("a") == {("t", 0): 7, ("t", 1): 6}
    om = m.fetch_offset_metadata("a")[("t", 1)]
    assert (om.metadata, om.leader_epoch, om.commit_timestamp) == ("x", 2, T0)
    assert m.delete_offsets("a", [("t", 1), ("t", 9)]) == 1
    again = GroupMetadataManager(logs)
    assert again.fetch_offsets("a") == {("t", 0): 7}
    assert again.list_groups() == ["a", "b"]
    assert again.describe_group("b").state == "Empty"


def test_transactional_commits_wait_for_their_marker(logdir) -> None:
    logs, _ = logdir
    m = GroupMetadataManager(logs)
    m.commit_offsets("g", {("t", 0): 1})
    m.commit_offsets("g", {("t", 0): 10, ("t", 1): 11}, producer_id=3, producer_epoch=0)
    m.commit_offsets("g", {("t", 0): 20}, producer_id=4, producer_epoch=0)
    assert m.fetch_offsets("g") == {("t", 0): 1}
    assert m.has_pending("g", "t", 1) and m.open_transactions("g") == {3, 4}
    m.end_transaction(4, 0, commit=False)            # aborted: dropped
    m.end_transaction(3, 0, commit=True)
    assert m.fetch_offsets("g") == {("t", 0): 10, ("t", 1): 11}
    # a plain commit after a transactional one wins over it even if the marker comes later
    m.commit_offsets("g", {("t", 0): 30}, producer_id=5, producer_epoch=0)
    m.commit_offsets("g", {("t", 0): 31})
    m.end_transaction(5, 0, commit=True)
    assert m.fetch_offsets("g")[("t", 0)] == 31
    assert GroupMetadataManager(logs).fetch_offsets("g") == {("t", 0): 31, ("t", 1): 11}


def test_markers_written_by_someone_else_are_replayed(logdir) -> None:
    logs, _ = logdir
    m = GroupMetadataManager(logs)
    m.commit_offsets("g", {("t", 0): 10}, producer_id=3, producer_epoch=0)
    logs.log("__consumer_offsets", m.partition_for("g")).commit_transaction(3, 0)
    assert m.fetch_offsets("g") == {("t", 0): 10}     # refreshed on read


def _member(mid: str, topics: list[str]) -> MemberMetadata:
    return MemberMetadata(mid, "client", "/10.0.0.1", 60000, 10000,
                          cp.encode_subscription(cp.Subscription(topics)), b"")


def test_offset_expiry_follows_group_state(logdir) -> None:
    logs, clock = logdir
    m = GroupMetadataManager(logs, config={"offsets.retention.minutes": "1"})
    m.commit_offsets("simple", {("t", 0): 1})
    m.commit_offsets("stable", {("sub", 0): 1, ("other", 0): 2})
    m.store_group(GroupMetadata("stable", "consumer", 3, "range", "m", T0,
                                (_member("m", ["sub"]),)))
    m.commit_offsets("empty", {("t", 0): 1})
    clock.advance(30_000)
    m.store_group(GroupMetadata("empty", "consumer", 4, None, None, clock.milliseconds(), ()))
    m.commit_offsets("expiring", {("t", 0): 1}, expire_timestamp=T0 + 5_000)
    assert m.expire_offsets() == [("expiring", "t", 0)]
    clock.advance(30_000)          # 60 s after the commits, 30 s after "empty" became Empty
    assert sorted(m.expire_offsets()) == [("simple", "t", 0), ("stable", "other", 0)]
    assert m.list_groups() == ["empty", "stable"]     # "simple" and "expiring" deleted
    assert m.fetch_offsets("stable") == {("sub", 0): 1}   # a subscribed topic never expires
    clock.advance(30_000)
    assert m.expire_offsets() == [("empty", "t", 0)]
    assert m.list_groups() == ["stable"]
    assert GroupMetadataManager(logs).list_groups() == ["stable"]


def test_pending_transactional_offset_blocks_expiry(logdir) -> None:
    logs, clock = logdir
    m = GroupMetadataManager(logs, config={"offsets.retention.minutes": "1"})
    m.commit_offsets("g", {("t", 0): 1})
    m.commit_offsets("g", {("t", 0): 2}, producer_id=9, producer_epoch=0)
    clock.advance(120_000)
    assert m.expire_offsets() == []
    m.end_transaction(9, 0, commit=False)
    assert m.expire_offsets() == [("g", "t", 0)]


def test_delete_group(logdir) -> None:
    logs, _ = logdir
    m = GroupMetadataManager(logs)
    m.store_group(GroupMetadata("g", "consumer", 1, "range", "m", T0, (_member("m", ["t"]),)))
    m.commit_offsets("g", {("t", 0): 3, ("t", 1): 4})
    with pytest.raises(NonEmptyGroupError, match="not empty"):
        m.delete_group("g")
    assert m.delete_group("g", force=True) == 3
    with pytest.raises(GroupIdNotFoundError):
        m.describe_group("g")
    assert GroupMetadataManager(logs).list_groups() == []


def test_not_coordinator_when_the_partition_is_absent(tmp_path: Path) -> None:
    src = shared_fixture_path("kafka-real", "VolodymyrZee-kafka")
    tree = tmp_path / "tree"
    shutil.copytree(src, tree)
    with LogDir.open(tree) as logs:
        m = GroupMetadataManager(logs)      # 5 of the 50 partitions: nothing created
        assert len(m.partitions()) == 5
        group = next(g for g in (f"g{i}" for i in range(100))
                     if m.partition_for(g) not in m.partitions())
        with pytest.raises(NotCoordinatorError, match="not in this log dir"):
            m.commit_offsets(group, {("t", 0): 1})


def test_bad_commits(logdir) -> None:
    logs, _ = logdir
    m = GroupMetadataManager(logs)
    with pytest.raises(ValueError, match="offset.metadata.max.bytes"):
        m.commit_offsets("g", {("t", 0): 1}, metadata="x" * 4097)
    with pytest.raises(ValueError, match="must be >= 0"):
        m.commit_offsets("g", {("t", 0): -5})
    with pytest.raises(ValueError, match="pairs"):
        m.commit_offsets("g", {"t": 1})  # type: ignore[dict-item]
    assert m.list_groups() == []


@pytest.mark.parametrize("key, value", [
    (b"\x00\x01\x00", b"\x00\x03"),                 # truncated key
    (b"\x00\x63\x00\x01g", None),                   # unknown record type 99
    (None, b"x"),                                   # no key
    (offsets_decoder.encode_record(1, {"group": "g", "topic": "t", "partition": 0},
                                   {"offset": 1})[0], b"\x00\x03\x00"),   # truncated value
])
@pytest.mark.parametrize("transactional", [False, True])
def test_undecodable_records_name_file_and_offset(logdir, key, value, transactional) -> None:
    from kafkalog import Record, encode_batch
    from kafkalog.groups.metadata_manager import OffsetsTopicMetadataError

    logs, _ = logdir
    m = GroupMetadataManager(logs)
    m.commit_offsets("ok", {("t", 0): 1})
    log = logs.log("__consumer_offsets", m.partition_for("ok"))
    log.append_batches(encode_batch([Record(key, value, T0)], base_offset=log.log_end_offset,
                                    producer_id=5 if transactional else -1,
                                    producer_epoch=0 if transactional else -1,
                                    transactional=transactional))
    with pytest.raises(OffsetsTopicMetadataError) as e:
        GroupMetadataManager(logs)
    assert e.value.offset == 1 and e.value.path == str(log.directory)


def test_metadata_limit_counts_utf16_units(logdir) -> None:
    logs, _ = logdir
    m = GroupMetadataManager(logs, config={"offset.metadata.max.bytes": "4"})
    m.commit_offsets("g", {("t", 0): 1}, metadata="éééé")       # 4 UTF-16 units
    with pytest.raises(ValueError, match="offset.metadata.max.bytes"):
        m.commit_offsets("g", {("t", 0): 1}, metadata="😀😀😀")   # 3 characters, 6 units


# -- the packed OffsetCommitValue v3 ------------------------------------------------------------

def _schema_written(om: OffsetAndMetadata) -> bytes:
    """OffsetCommitValue v3 through the schema-driven writer (what offset_commit_record used
    for every commit before packing v3 directly)."""
    value = offsets_decoder.CODEC.values[group_records.OFFSET_COMMIT_KEY_TYPE]
    return b"\x00\x03" + message.write(
        value, {"offset": om.offset, "leaderEpoch": om.leader_epoch, "metadata": om.metadata,
                "commitTimestamp": om.commit_timestamp, "expireTimestamp": -1}, 3)


@settings(max_examples=400, deadline=None)
@given(offset=st.integers(-(2**64), 2**64), epoch=st.integers(-(2**32), 2**32),
       meta=st.text(max_size=40) | st.sampled_from(["", "x" * 32767, "é" * 16384]),
       ts=st.integers(-(2**64), 2**64))
def test_packed_offset_commit_value_is_the_schema_writers(offset, epoch, meta, ts) -> None:
    # the packed v3 value (nearly every commit) gives the schema-driven writer's bytes, and
    # where that refuses a value (out of range, metadata over 32767 bytes) the same error
    om = OffsetAndMetadata(offset, epoch, meta, ts)
    try:
        want = _schema_written(om)
    except ValueError as e:
        with pytest.raises(ValueError) as got:
            group_records.offset_commit_record("g", "t", 0, om)
        assert str(got.value) == str(e)
        return
    key, value = group_records.offset_commit_record("g", "t", 0, om)
    assert value == want
    back = offsets_decoder.decode_record_obj(key, value)
    assert back["version"] == 3 and back["value"]["offset"] == offset


def _commit_value(draw: st.DrawFn) -> bytes | None:
    om = OffsetAndMetadata(draw(st.integers(-(2**63), 2**63 - 1)),
                           draw(st.integers(-(2**31), 2**31 - 1)), draw(st.text(max_size=8)),
                           draw(st.integers(-(2**63), 2**63 - 1)),
                           draw(st.sampled_from([None, None, 5])))
    value = group_records.offset_commit_record("g", "t", 1, om)[1]
    how = draw(st.sampled_from(["as is", "as is", "cut", "extra", "flip", "bad utf-8"]))
    if how == "cut":
        value = value[:draw(st.integers(0, len(value)))]
    elif how == "extra":
        value += draw(st.binary(min_size=1, max_size=4))
    elif how == "flip":
        i = draw(st.integers(0, len(value) - 1))
        value = value[:i] + bytes([value[i] ^ (1 << draw(st.integers(0, 7)))]) + value[i + 1:]
    elif how == "bad utf-8" and len(value) > 16:
        value = value[:16] + b"\xff" + value[17:]
    return value


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_packed_offset_commit_read_is_the_schema_readers(data) -> None:
    # the v3 values read straight (nearly every record of a reload) give the schema-driven
    # reader's OffsetCommit, and anything else goes to that reader
    commit_key = group_records.offset_commit_record("grp", "topic", 7, OffsetAndMetadata(1))[0]
    key = data.draw(st.sampled_from([
        commit_key, commit_key, b"\x00\x00" + commit_key[2:],  # key types 1 and 0
        group_records.group_metadata_tombstone("grp")[0], b"\x00\x01\x00", b"\x00"]))
    value = data.draw(st.one_of(st.none(), st.composite(_commit_value)(),
                                st.composite(_commit_value)(), st.binary(max_size=30)))
    offset = data.draw(st.integers(-1, 2**40))

    def outcome() -> object:
        try:
            return group_records.decode(key, value, offset)
        except Exception as e:  # noqa: BLE001 - both ways must raise the same
            return type(e), str(e)

    fast = outcome()
    with pytest.MonkeyPatch.context() as m:
        m.setattr(group_records, "_packed_offset_commit", lambda *a: None)
        assert outcome() == fast
