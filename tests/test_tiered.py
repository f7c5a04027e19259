"""Tiered storage metadata offline (``kafkalog.tiered``, ``kafkalog tiered``).

The cache rules are Kafka's tests ported: ``RemoteLogLeaderEpochStateTest`` (one epoch's
segments) and ``RemoteLogSegmentLifecycleTest`` (the store through the metadata topic: here,
records we encode, written to a ``__remote_log_metadata`` partition, read back by
``read_log_dirs``). The partitioner's murmur2 is checked against kafka-python's and aiokafka's,
and ``Objects.hash`` against the JVM's. Every event Kafka drops is a finding naming its
partition and offset.
"""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalog import Log, Record
from kafkalog.cli import main as cli_main
from kafkalog.decoders import message
from kafkalog.decoders import remote_log_metadata as rlmm
from kafkalog.tiered import metadata_partition, read_log_dirs
from kafkalog.tiered.metadata_cache import (
    COPY_SEGMENT_FINISHED,
    COPY_SEGMENT_STARTED,
    DELETE_SEGMENT_FINISHED,
    DELETE_SEGMENT_STARTED,
    RemoteLogLeaderEpochState,
    RemoteLogSegmentId,
    is_valid_transition,
)
from kafkalog.tiered.partitioner import murmur2, topic_id_partition_hash

TOPIC_ID = message.uuid_to_str(bytes(range(1, 17)))
TIP = {"name": "foo", "id": TOPIC_ID, "partition": 0}
STATES = {v: k for k, v in rlmm.SEGMENT_STATES.items()}


def _uuid(n: int) -> str:
    return message.uuid_to_str(n.to_bytes(16, "big"))


def _seg_id(n: int) -> dict:
    return {"topicIdPartition": TIP, "id": _uuid(n)}


def add(n: int, start: int, end: int, epochs: dict[int, int], broker: int = 0) -> bytes:
    return rlmm.encode_record(0, {
        "remoteLogSegmentId": _seg_id(n), "startOffset": start, "endOffset": end,
        "brokerId": broker, "maxTimestampMs": -1, "eventTimestampMs": 1000 + n,
        "segmentLeaderEpochs": [{"leaderEpoch": e, "offset": o} for e, o in epochs.items()],
        "segmentSizeInBytes": 1048576, "remoteLogSegmentState": 0})


def update(n: int, state: str, broker: int = 1) -> bytes:
    return rlmm.encode_record(1, {"remoteLogSegmentId": _seg_id(n), "brokerId": broker,
                                  "eventTimestampMs": 2000 + n,
                                  "remoteLogSegmentState": STATES[state]})


def delete_partition(state: int, tip: dict = TIP) -> bytes:
    return rlmm.encode_record(2, {"topicIdPartition": tip, "brokerId": 3,
                                  "eventTimestampMs": 5, "remotePartitionDeleteState": state})


def write_metadata(root: Path, values: list[bytes], partition: int | None = None) -> Path:
    n = metadata_partition(TOPIC_ID, 0) if partition is None else partition
    d = root / f"__remote_log_metadata-{n}"
    with Log.open(d) as log:
        log.append([Record(None, v, 0) for v in values])
    return d


def _sid(n: int) -> RemoteLogSegmentId:
    return RemoteLogSegmentId(TOPIC_ID, "foo", 0, _uuid(n))


# --------------------------------------------------------------------------------------------
# The partitioner
# --------------------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=64))
def test_murmur2_equals_the_peers(data) -> None:
    import warnings

    from aiokafka.partitioner import murmur2 as aiokafka_murmur2

    with warnings.catch_warnings():  # kafka-python's protocol package warns on import
        warnings.simplefilter("ignore", DeprecationWarning)
        from kafka.partitioner.default import murmur2 as kafka_python_murmur2
    ours = murmur2(data)
    assert -(2**31) <= ours < 2**31  # a Java int
    assert ours & 0xFFFFFFFF == aiokafka_murmur2(data) == kafka_python_murmur2(data)


@pytest.mark.skipif(shutil.which("java") is None, reason="needs a JVM (java) for Objects.hash")
def test_objects_hash_equals_the_jvm(tmp_path) -> None:
    """``Objects.hash(lsb, msb, partition)`` as the JDK computes it, for edge and random ids."""
    import random

    rng = random.Random(5)
    cases = [(bytes(16), 0), (b"\xff" * 16, 2**31 - 1), (bytes(range(16)), 7)]
    cases += [(rng.randbytes(16), rng.randrange(0, 2**31)) for _ in range(40)]
    src = tmp_path / "H.java"
    src.write_text(
        "public class H { public static void main(String[] a) {\n"
        "  for (int i = 0; i < a.length; i += 3)\n"
        "    System.out.println(java.util.Objects.hash(Long.parseLong(a[i]), "
        "Long.parseLong(a[i + 1]), Integer.parseInt(a[i + 2])));\n} }\n")
    args = []
    for raw, p in cases:
        msb, lsb = struct.unpack(">qq", raw)
        args += [str(lsb), str(msb), str(p)]
    out = subprocess.run(["java", str(src), *args], capture_output=True, text=True,
                         timeout=120, check=True).stdout.split()
    assert [topic_id_partition_hash(message.uuid_to_str(raw), p) for raw, p in cases] == \
        [int(x) for x in out]


def test_metadata_partition_composes_the_two() -> None:
    from aiokafka.partitioner import murmur2 as peer

    for n in range(200):
        topic_id, p = _uuid(n * 7919 + 1), n % 13
        h = topic_id_partition_hash(topic_id, p)
        for count in (1, 7, 50):
            assert metadata_partition(topic_id, p, count) == \
                (peer(struct.pack(">i", h)) & 0x7FFFFFFF) % count
    with pytest.raises(ValueError):
        metadata_partition(TOPIC_ID, 0, 0)


# --------------------------------------------------------------------------------------------
# RemoteLogLeaderEpochStateTest
# --------------------------------------------------------------------------------------------


def test_epoch_state_copy_finished() -> None:
    es = RemoteLogLeaderEpochState()
    es.copy_finished(10, _sid(1), 100)
    es.copy_finished(101, _sid(2), 200)
    assert len(es.offset_to_id) == 2 and not es.unreferenced
    assert es.floor(90) == _sid(1) and es.floor(150) == _sid(2) and es.floor(9) is None
    assert es.highest_log_offset == 200


def test_epoch_state_overlapping_segments() -> None:
    es = RemoteLogLeaderEpochState()
    es.copy_finished(10, _sid(1), 100)
    es.copy_finished(5, _sid(2), 150)
    assert list(es.offset_to_id.values()) == [_sid(2)] and es.floor(11) == _sid(2)
    assert es.unreferenced == {_sid(1)} and es.highest_log_offset == 150


def test_epoch_state_multiple_overlapping_segments() -> None:
    es = RemoteLogLeaderEpochState()
    for start, n, end in ((10, 1, 100), (5, 2, 150), (148, 3, 155), (4, 4, 200)):
        es.copy_finished(start, _sid(n), end)
    assert list(es.offset_to_id.values()) == [_sid(4)] and es.floor(11) == _sid(4)
    assert es.unreferenced == {_sid(1), _sid(2), _sid(3)} and es.highest_log_offset == 200


def test_epoch_state_duplicate_and_same_start_segments() -> None:
    es = RemoteLogLeaderEpochState()
    es.copy_finished(10, _sid(1), 100)
    es.copy_finished(10, _sid(2), 100)
    assert es.floor(11) == _sid(2) and es.unreferenced == {_sid(1)}
    assert es.highest_log_offset == 100
    es = RemoteLogLeaderEpochState()
    es.copy_finished(10, _sid(1), 100)
    es.copy_finished(10, _sid(2), 150)
    assert es.floor(11) == es.floor(111) == _sid(2) and len(es.unreferenced) == 1
    assert es.highest_log_offset == 150


def test_epoch_state_shorter_copy_does_not_supersede() -> None:
    """Kafka's loop stops when the epoch already covers more than the new copy's end: both
    stay readable, each from its own start (``highestLogOffset <= leaderEpochEndOffset``)."""
    es = RemoteLogLeaderEpochState()
    es.copy_finished(100, _sid(1), 200)
    es.copy_finished(50, _sid(2), 150)
    assert es.floor(120) == _sid(1) and es.floor(60) == _sid(2)
    assert not es.unreferenced and es.highest_log_offset == 200


def test_epoch_state_delete_started_and_finished() -> None:
    es = RemoteLogLeaderEpochState()
    es.copy_finished(10, _sid(1), 100)
    es.copy_finished(101, _sid(2), 200)
    es.delete_started(10, _sid(1))
    es.delete_started(101, _sid(2))
    assert not es.offset_to_id and not es.offsets
    assert es.unreferenced == {_sid(1), _sid(2)}
    es = RemoteLogLeaderEpochState()
    es.unreferenced.add(_sid(3))  # handleSegmentWithCopySegmentStartedState
    es.unreferenced.discard(_sid(3))  # handleSegmentWithDeleteSegmentFinishedState
    assert not es.unreferenced


def test_valid_transitions() -> None:
    order = [COPY_SEGMENT_STARTED, COPY_SEGMENT_FINISHED, DELETE_SEGMENT_STARTED,
             DELETE_SEGMENT_FINISHED]
    allowed = {(None, COPY_SEGMENT_STARTED), (COPY_SEGMENT_STARTED, COPY_SEGMENT_FINISHED),
               (COPY_SEGMENT_STARTED, DELETE_SEGMENT_STARTED),
               (COPY_SEGMENT_FINISHED, DELETE_SEGMENT_STARTED),
               (DELETE_SEGMENT_STARTED, DELETE_SEGMENT_FINISHED)} | {(s, s) for s in order}
    for src in [None, *order]:
        for dst in order:
            assert is_valid_transition(src, dst) == ((src, dst) in allowed), (src, dst)


# --------------------------------------------------------------------------------------------
# RemoteLogSegmentLifecycleTest, through the metadata topic
# --------------------------------------------------------------------------------------------


def test_remote_log_segment_lifecycle(tmp_path) -> None:
    values = [add(0, 0, 100, {0: 0, 1: 20, 2: 80})]
    write_metadata(tmp_path / "a", values)
    [cache] = read_log_dirs([tmp_path / "a"]).caches.values()
    # still being copied: not readable, no highest offset for its epochs
    assert cache.remote_log_segment_metadata(1, 40) is None
    assert all(cache.highest_offset_for_epoch(e) is None for e in range(3))
    values += [update(0, COPY_SEGMENT_FINISHED),
               add(1, 101, 200, {2: 101}), update(1, COPY_SEGMENT_FINISHED),
               add(2, 201, 300, {2: 201, 3: 240}), update(2, COPY_SEGMENT_FINISHED),
               add(3, 250, 400, {3: 250, 4: 370}), update(3, COPY_SEGMENT_FINISHED)]
    write_metadata(tmp_path / "b", values)
    store = read_log_dirs([tmp_path / "b"])
    assert not store.findings
    [cache] = store.caches.values()
    expected = {(1, 40): 0, (2, 110): 1, (3, 240): 2, (3, 250): 3, (4, 375): 3,
                (1, 110): None, (4, 401): None, (5, 301): None}
    for (epoch, offset), n in expected.items():
        m = cache.remote_log_segment_metadata(epoch, offset)
        assert (m.segment_id.id if m else None) == (None if n is None else _uuid(n)), \
            (epoch, offset)
    m0 = cache.remote_log_segment_metadata(1, 40)
    # createWithUpdates: the update's broker, time and state over the added metadata
    assert (m0.broker_id, m0.event_timestamp_ms, m0.state, m0.start_offset, m0.end_offset) == \
        (1, 2000, COPY_SEGMENT_FINISHED, 0, 100)
    values += [update(0, DELETE_SEGMENT_STARTED)]
    write_metadata(tmp_path / "c", values)
    [cache] = read_log_dirs([tmp_path / "c"]).caches.values()
    assert cache.remote_log_segment_metadata(0, 10) is None
    assert cache.segments[_sid(0)].state == DELETE_SEGMENT_STARTED
    values += [update(0, DELETE_SEGMENT_FINISHED)]
    write_metadata(tmp_path / "d", values)
    [cache] = read_log_dirs([tmp_path / "d"]).caches.values()
    assert cache.remote_log_segment_metadata(0, 10) is None and _sid(0) not in cache.segments
    assert {e: cache.highest_offset_for_epoch(e) for e in range(6)} == \
        {0: 19, 1: 79, 2: 239, 3: 369, 4: 400, 5: None}


def test_list_segments(tmp_path) -> None:
    write_metadata(tmp_path, [
        add(0, 0, 100, {0: 0}), update(0, COPY_SEGMENT_FINISHED),
        add(1, 101, 200, {0: 101}), update(1, COPY_SEGMENT_FINISHED),
        add(2, 201, 400, {0: 201, 1: 301}), update(2, COPY_SEGMENT_FINISHED),
        add(3, 401, 450, {1: 401}),  # still being copied: listed, not readable
    ])
    [cache] = read_log_dirs([tmp_path]).caches.values()
    ids = [m.segment_id.id for m in cache.list_remote_log_segments(0)]
    assert ids == [_uuid(0), _uuid(1), _uuid(2)]
    assert [m.segment_id.id for m in cache.list_remote_log_segments(1)] == [_uuid(2), _uuid(3)]
    assert [m.segment_id.id for m in cache.list_remote_log_segments()] == \
        [_uuid(n) for n in range(4)]
    assert cache.list_remote_log_segments(9) == []
    assert [(e, m.segment_id.id) for e, m in cache.find_offset(350)] == [(1, _uuid(2))]
    assert cache.find_offset(420) == []


def test_unclean_election_recopy_supersedes(tmp_path) -> None:
    """A range copied again in the same epoch (RemoteLogLeaderEpochStateTest's overlap, through
    records): the later copy is readable, the earlier one listed but unreferenced."""
    write_metadata(tmp_path, [
        add(0, 10, 100, {0: 10}), update(0, COPY_SEGMENT_FINISHED),
        add(1, 5, 150, {0: 5}), update(1, COPY_SEGMENT_FINISHED),
    ])
    [cache] = read_log_dirs([tmp_path]).caches.values()
    assert cache.remote_log_segment_metadata(0, 50).segment_id == _sid(1)
    assert cache.epoch_state(0).unreferenced == {_sid(0)}
    assert cache.highest_offset_for_epoch(0) == 150


# --------------------------------------------------------------------------------------------
# What Kafka drops, reported
# --------------------------------------------------------------------------------------------


def test_findings_name_partition_and_offset(tmp_path) -> None:
    n = metadata_partition(TOPIC_ID, 0)
    write_metadata(tmp_path, [
        add(0, 0, 9, {0: 0}),
        update(0, DELETE_SEGMENT_FINISHED),        # 1: not a valid transition
        update(7, COPY_SEGMENT_FINISHED),          # 2: no such segment
        b"corrupted",                              # 3: frame version 99
        rlmm.encode_record(3, {"segmentId": _uuid(0), "remoteLogSegmentState": 1,
                               "segmentLeaderEpochs": [{"leaderEpoch": 0, "offset": 0}]}),
        add(0, 0, 9, {0: 0}),                      # 5: a repeat: valid (retries), kept
        update(0, COPY_SEGMENT_FINISHED),
        add(0, 0, 9, {0: 0}),                      # 7: FINISHED -> STARTED: dropped
        update(0, COPY_SEGMENT_STARTED),           # 8: FINISHED -> STARTED: dropped
    ])
    store = read_log_dirs([tmp_path])
    got = [(f.partition, f.offset) for f in store.findings]
    assert got == [(n, 1), (n, 2), (n, 3), (n, 4), (n, 7), (n, 8)]
    text = [str(f) for f in store.findings]
    assert "COPY_SEGMENT_STARTED can not be transitioned to DELETE_SEGMENT_FINISHED" in text[0]
    assert "no remote log segment metadata found" in text[1]
    assert "frame version 99" in text[2] and "Kafka: Could not deserialize" in text[2]
    assert "snapshot record" in text[3]
    assert text[0].startswith(f"__remote_log_metadata-{n} offset 1: ")
    [cache] = store.caches.values()
    assert cache.segments[_sid(0)].state == COPY_SEGMENT_FINISHED
    assert cache.segments[_sid(0)].event_offset == (n, 6)


def test_misplaced_events_and_duplicate_partitions(tmp_path) -> None:
    right = metadata_partition(TOPIC_ID, 0)
    wrong = (right + 1) % 50
    write_metadata(tmp_path / "a", [add(0, 0, 9, {0: 0}), add(1, 10, 19, {0: 10})], wrong)
    write_metadata(tmp_path / "b", [add(2, 0, 9, {0: 0})], wrong)
    store = read_log_dirs([tmp_path / "a", tmp_path / "b"])
    assert [(f.partition, f.offset) for f in store.findings] == [(wrong, 0), (wrong, None)]
    assert f"the partitioner gives {right} of 50" in store.findings[0].message
    assert "read from" in store.findings[1].message
    [cache] = store.caches.values()
    assert set(cache.segments) == {_sid(0), _sid(1)}
    # the check follows the configured count, and can be turned off
    assert not read_log_dirs([tmp_path / "a"], num_partitions=None).findings


def test_corrupt_batch_stops_the_partition_with_a_finding(tmp_path) -> None:
    d = write_metadata(tmp_path, [add(0, 0, 9, {0: 0})])
    with Log.open(d) as log:
        log.append([Record(None, update(0, COPY_SEGMENT_FINISHED), 0)])
    seg = d / "00000000000000000000.log"
    raw = bytearray(seg.read_bytes())
    raw[-3] ^= 0xFF  # the second batch's last record bytes: its CRC no longer holds
    seg.write_bytes(bytes(raw))
    store = read_log_dirs([tmp_path])
    [cache] = store.caches.values()
    assert cache.segments[_sid(0)].state == COPY_SEGMENT_STARTED  # the first batch applied
    [finding] = store.findings
    assert finding.partition == int(d.name.rsplit("-", 1)[1])
    assert finding.offset == 1 and "stopped reading" in finding.message
    assert "00000000000000000000.log, position 172" in finding.message
    assert "stored crc" in finding.message


def test_partition_delete_states(tmp_path) -> None:
    write_metadata(tmp_path / "a", [add(0, 0, 9, {0: 0}), delete_partition(0)])
    store = read_log_dirs([tmp_path / "a"])
    [(tip, d)] = store.partition_deletes.items()
    assert (tip.topic, tip.partition, d.state, d.broker_id) == \
        ("foo", 0, "DELETE_PARTITION_MARKED", 3)
    assert len(store.caches) == 1
    write_metadata(tmp_path / "b", [add(0, 0, 9, {0: 0}), delete_partition(0),
                                    delete_partition(1), delete_partition(2)])
    store = read_log_dirs([tmp_path / "b"])
    assert not store.partition_deletes and not store.caches and not store.findings


# --------------------------------------------------------------------------------------------
# kafkalog tiered
# --------------------------------------------------------------------------------------------


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = cli_main(["tiered", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_cli_table_offset_and_json(tmp_path, capsys) -> None:
    write_metadata(tmp_path, [
        add(0, 0, 100, {0: 0}), update(0, COPY_SEGMENT_FINISHED),
        add(1, 101, 200, {0: 101, 1: 150}), update(1, COPY_SEGMENT_FINISHED),
        add(2, 201, 300, {1: 201}),
    ])
    rc, out, err = _run(capsys, str(tmp_path))
    assert rc == 0 and not err
    assert [ln.split() for ln in out.splitlines()] == [
        ["TOPIC", "PARTITION", "TOPIC-ID", "SEGMENTS", "COPIED", "REMOTE-START", "REMOTE-END",
         "REMOTE-BYTES", "LOCAL-START", "GAPS", "DELETE-STATE"],
        ["foo", "0", TOPIC_ID, "3", "2", "0", "200", str(2 * 1048576), "-", "0", "-"]]
    rc, out, err = _run(capsys, str(tmp_path), "--segments")
    lines = out.splitlines()
    assert rc == 0 and not err and lines[0].split()[:3] == ["TOPIC", "PARTITION", "SEGMENT-ID"]
    assert [ln.split()[2] for ln in lines[1:]] == [_uuid(0), _uuid(1), _uuid(2)]
    assert lines[2].split()[6:8] == ["COPY_SEGMENT_FINISHED", "{0=101,"]
    assert lines[3].split()[6] == "COPY_SEGMENT_STARTED"
    rc, out, _ = _run(capsys, str(tmp_path), "--topic", "foo", "--partition", "0",
                      "--offset", "160")
    assert rc == 0 and [ln.split()[:4] for ln in out.splitlines()[1:]] == \
        [["1", "foo", "0", _uuid(1)]]
    rc, out, err = _run(capsys, str(tmp_path), "--topic", "foo", "--partition", "0",
                        "--offset", "250")
    assert rc == 1 and "offset 250 of foo-0 is in no copied remote segment" in err
    rc, out, _ = _run(capsys, str(tmp_path), "--json")
    doc = json.loads(out)
    [part] = doc["partitions"]
    assert (part["topic"], part["topic_id"], part["delete_state"]) == ("foo", TOPIC_ID, None)
    assert [s["state"] for s in part["segments"]] == \
        [COPY_SEGMENT_FINISHED, COPY_SEGMENT_FINISHED, COPY_SEGMENT_STARTED]
    assert part["segments"][1]["segment_leader_epochs"] == [[0, 101], [1, 150]]
    assert doc["findings"] == []
    rc, out, _ = _run(capsys, str(tmp_path), "--topic", "bar")
    assert rc == 0 and out == "No remote segments.\n"
    assert _run(capsys, str(tmp_path), "--topic", "foo")[1] == \
        _run(capsys, str(tmp_path), "--segments")[1]


def test_cli_errors(tmp_path, capsys) -> None:
    rc, _, err = _run(capsys, str(tmp_path))
    assert rc == 1 and "no __remote_log_metadata-<n> directory" in err
    rc, _, err = _run(capsys, str(tmp_path), "--offset", "5")
    assert rc == 2 and "--offset needs --topic and --partition" in err
    rc, _, err = _run(capsys, str(tmp_path), "--partition", "5")
    assert rc == 2 and "--partition needs --topic" in err
    write_metadata(tmp_path, [update(0, COPY_SEGMENT_FINISHED)])
    rc, out, err = _run(capsys, str(tmp_path), "--segments")
    assert rc == 0 and out == "No remote segments.\n"
    assert err.startswith("WARNING: __remote_log_metadata-") and "no remote log segment" in err


def test_jvm_written_values_replay(tmp_path) -> None:
    """The values Kafka 4.0's serde wrote (tests/golden/rlmm) replay: add, finish, mark."""
    jvm = json.loads((Path(__file__).parent / "golden" / "rlmm" / "jvm_serde_4.0.0.json")
                     .read_text())
    topic_id = message.uuid_to_str((0xCA).to_bytes(16, "big"))
    d = tmp_path / f"__remote_log_metadata-{metadata_partition(topic_id, 7)}"
    with Log.open(d) as log:
        log.append([Record(None, bytes.fromhex(jvm[k]), 0) for k in
                    ("add_txn_empty", "update_finish", "partition_delete_marked")])
    store = read_log_dirs([tmp_path])
    assert not store.findings
    [(tip, cache)] = store.caches.items()
    [m] = cache.list_remote_log_segments()
    assert (str(tip), m.state, m.txn_index_empty, m.broker_id, m.event_timestamp_ms) == \
        (f"{topic_id}:orders-7", COPY_SEGMENT_FINISHED, True, 42, 456)
    assert cache.remote_log_segment_metadata(1, 60) == m
    assert store.partition_deletes[tip].state == "DELETE_PARTITION_MARKED"


def test_module_examples() -> None:
    import doctest

    import kafkalog.tiered.command as command
    import kafkalog.tiered.coverage as coverage_mod
    import kafkalog.tiered.metadata_cache as cache_mod
    import kafkalog.tiered.metadata_store as store_mod
    import kafkalog.tiered.partitioner as partitioner_mod

    for mod in (command, coverage_mod, cache_mod, store_mod, partitioner_mod):
        result = doctest.testmod(mod, raise_on_error=False, verbose=False)
        assert result.attempted > 0 and result.failed == 0, mod.__name__



# --------------------------------------------------------------------------------------------
# Coverage: offsets in neither remote nor local storage
# --------------------------------------------------------------------------------------------


def _meta(start: int, end: int, state: str = COPY_SEGMENT_FINISHED):
    from kafkalog.tiered.metadata_cache import RemoteLogSegmentMetadata

    return RemoteLogSegmentMetadata(_sid(start * 1000 + end), start, end, -1, 0, 0, 1,
                                    ((0, start),), None, state)


def _reference_gaps(segments, local_start, local_end, log_start):
    """Brute force: every offset from the floor up to the local log start (or the last copied
    offset), held or not; gaps are the maximal runs not held."""
    copied = [(m.start_offset, m.end_offset) for m in segments
              if m.state == COPY_SEGMENT_FINISHED]
    floor = log_start if log_start is not None else min((a for a, _ in copied), default=None)
    if floor is None:
        return ()
    top = local_start - 1 if local_start is not None else max((b for _, b in copied), default=-1)
    held = {o for a, b in copied for o in range(a, b + 1)}
    gaps, run = [], None
    for o in range(floor, top + 1):
        if o in held:
            run = None
        elif run is None:
            run = [o, o]
            gaps.append(run)
        else:
            run[1] = o
    return tuple(tuple(g) for g in gaps)


@settings(max_examples=400, deadline=None)
@given(ranges=st.lists(st.tuples(st.integers(0, 60), st.integers(0, 15),
                                 st.sampled_from([COPY_SEGMENT_FINISHED, COPY_SEGMENT_STARTED,
                                                  DELETE_SEGMENT_STARTED])), max_size=6),
       local=st.one_of(st.none(), st.tuples(st.integers(0, 90), st.integers(0, 20))),
       log_start=st.one_of(st.none(), st.integers(0, 70)))
def test_coverage_equals_brute_force(ranges, local, log_start) -> None:
    from kafkalog.tiered.coverage import coverage

    segments = [_meta(a, a + n, state) for a, n, state in ranges]
    local_start, local_end = (local[0], local[0] + local[1]) if local else (None, None)
    got = coverage(segments, local_start=local_start, local_end=local_end, log_start=log_start)
    assert got.gaps == _reference_gaps(segments, local_start, local_end, log_start)


def test_coverage_cases() -> None:
    from kafkalog.tiered.coverage import coverage

    whole = [_meta(0, 99), _meta(100, 199)]
    assert coverage(whole, local_start=200, local_end=250, log_start=0).gaps == ()
    assert coverage(whole, local_start=260, local_end=300, log_start=0).gaps == ((200, 259),)
    holed = [_meta(0, 99), _meta(150, 199)]
    assert coverage(holed, local_start=200, local_end=300, log_start=None).gaps == ((100, 149),)
    # below the log start offset, retention deleted the data: no gap
    assert coverage(holed, local_start=200, local_end=300, log_start=150).gaps == ()
    # a copy in progress holds nothing readable
    assert coverage([_meta(0, 99), _meta(100, 199, COPY_SEGMENT_STARTED)], local_start=200,
                    local_end=210, log_start=0).gaps == ((100, 199),)
    # remote and local overlap (the usual case: local retention keeps more than was copied)
    cov = coverage(whole, local_start=150, local_end=400, log_start=0)
    assert cov.gaps == () and cov.remote == (0, 199) and cov.local == (150, 399)


def _local_partition(root: Path, topic_id_raw: bytes, start: int, n: int) -> Path:
    from kafkalog.checkpoint import PartitionMetadataFile, Uuid

    d = root / "foo-0"
    with Log.open(d) as log:
        log.truncate_fully_and_start_at(start)
        log.append([Record(None, b"v", 0) for _ in range(n)])
    PartitionMetadataFile(d / "partition.metadata").write(Uuid.from_string(
        message.uuid_to_str(topic_id_raw)))
    return d


def test_cli_reports_gaps_against_the_local_log(tmp_path, capsys) -> None:
    write_metadata(tmp_path, [add(0, 0, 99, {0: 0}), update(0, COPY_SEGMENT_FINISHED),
                              add(1, 150, 199, {0: 150}), update(1, COPY_SEGMENT_FINISHED)])
    _local_partition(tmp_path, bytes(range(1, 17)), 260, 5)
    rc, out, err = _run(capsys, str(tmp_path))
    assert rc == 1 and not err
    lines = out.splitlines()
    assert lines[1].split()[8:10] == ["260", "2"]
    assert lines[2:] == [
        "Gap: foo-0 offsets 100..149 are in no copied remote segment and not local (the local "
        f"log ({tmp_path / 'foo-0'}) starts at 260)",
        "Gap: foo-0 offsets 200..259 are in no copied remote segment and not local (the local "
        f"log ({tmp_path / 'foo-0'}) starts at 260)"]
    doc = json.loads(_run(capsys, str(tmp_path), "--json")[1])
    [part] = doc["partitions"]
    assert part["gaps"] == [[100, 149], [200, 259]] and part["remote_offsets"] == [0, 199]
    assert (part["local"]["local_log_start_offset"], part["local"]["log_end_offset"]) == (260, 265)


def test_cli_sets_aside_another_incarnation(tmp_path, capsys) -> None:
    write_metadata(tmp_path, [add(0, 0, 99, {0: 0}), update(0, COPY_SEGMENT_FINISHED)])
    _local_partition(tmp_path, bytes(range(2, 18)), 500, 1)   # another topic id
    rc, out, err = _run(capsys, str(tmp_path))
    assert rc == 0 and "another incarnation of the topic" in err
    assert out.splitlines()[1].split()[8:10] == ["-", "0"]


def test_verify_reports_gaps_and_dropped_events(tmp_path) -> None:
    from kafkalog.tools.verify import verify_paths

    write_metadata(tmp_path, [add(0, 0, 99, {0: 0}), update(0, COPY_SEGMENT_FINISHED),
                              update(5, COPY_SEGMENT_FINISHED)])
    local = _local_partition(tmp_path, bytes(range(1, 17)), 150, 3)
    findings = [f for f in verify_paths([str(tmp_path)]).log_dir_findings
                if f.check.startswith("tiered")]
    assert [(f.check, f.severity, f.offset) for f in findings] == \
        [("tiered_metadata", "warning", 2), ("tiered_gap", "error", 100)]
    assert findings[1].file == str(local) and "offsets 100..149 of foo-0" in findings[1].message
    assert findings[0].file.endswith(f"__remote_log_metadata-{metadata_partition(TOPIC_ID, 0)}")
    # the gap closes once the missing range is copied; a tree without the topic has no check
    write_metadata(tmp_path / "more", [add(0, 0, 99, {0: 0}), update(0, COPY_SEGMENT_FINISHED),
                                       add(1, 100, 149, {0: 100}),
                                       update(1, COPY_SEGMENT_FINISHED)])
    _local_partition(tmp_path / "more", bytes(range(1, 17)), 150, 3)
    assert not [f for f in verify_paths([str(tmp_path / "more")]).findings
                if f.check.startswith("tiered")]
    assert not [f for f in verify_paths([str(local)]).findings if f.check.startswith("tiered")]


def test_gap_below_every_copy_is_a_warning(tmp_path, capsys) -> None:
    """A gap from the checkpointed log start offset up to the first copy may be remote
    retention that ran after the checkpoint was written: printed with that caveat, a verify
    warning, exit 0; a hole above the first copy stays an error."""
    from kafkalog.checkpoint import OffsetCheckpointFile
    from kafkalog.tools.verify import verify_paths

    write_metadata(tmp_path, [add(0, 100, 199, {0: 100}), update(0, COPY_SEGMENT_FINISHED)])
    _local_partition(tmp_path, bytes(range(1, 17)), 200, 2)
    OffsetCheckpointFile(tmp_path / "log-start-offset-checkpoint").write({("foo", 0): 40})
    rc, out, _ = _run(capsys, str(tmp_path))
    assert rc == 0
    assert "Gap: foo-0 offsets 40..99 are in no copied remote segment" in out
    assert "remote retention may have deleted them" in out
    [f] = [f for f in verify_paths([str(tmp_path)]).findings if f.check == "tiered_gap"]
    assert (f.severity, f.offset) == ("warning", 40)
    write_metadata(tmp_path, [add(1, 250, 299, {0: 250}), update(1, COPY_SEGMENT_FINISHED)])
    _local_partition(tmp_path, bytes(range(1, 17)), 400, 2)  # (the same directory, emptied)
    rc, out, _ = _run(capsys, str(tmp_path))
    assert rc == 1 and "offsets 300..399" in out
    assert [(f.severity, f.offset) for f in verify_paths([str(tmp_path)]).findings
            if f.check == "tiered_gap"] == [("warning", 40), ("error", 200), ("error", 300)]


def test_local_partitions_of_a_tree(tmp_path) -> None:
    """Topic names with dots count; deleted/future directories, internal topics and
    directories that are no partition do not."""
    from kafkalog.tiered.coverage import local_partitions

    for name in ("orders.v1-3", "orders.v1-4.0123456789abcdef0123456789abcdef-delete",
                 "__consumer_offsets-0", "not-a-partition"):
        with Log.open(tmp_path / name) as log:
            log.append([Record(None, b"v", 0)])
    found = local_partitions([tmp_path])
    assert list(found) == [("orders.v1", 3)]
    [lp] = found[("orders.v1", 3)]
    assert (lp.local_start, lp.local_end, lp.topic_id, lp.log_start) == (0, 1, None, None)


def test_cli_offset_that_is_local(tmp_path, capsys) -> None:
    write_metadata(tmp_path, [add(0, 0, 99, {0: 0}), update(0, COPY_SEGMENT_FINISHED)])
    local = _local_partition(tmp_path, bytes(range(1, 17)), 100, 5)
    rc, _, err = _run(capsys, str(tmp_path), "--topic", "foo", "--partition", "0",
                      "--offset", "102")
    assert rc == 1 and f"is in no copied remote segment (it is in the local log {local})" in err
    rc, out, _ = _run(capsys, str(tmp_path), "--topic", "foo", "--partition", "0",
                      "--offset", "99")
    assert rc == 0 and out.splitlines()[1].split()[3] == _uuid(0)


def test_cli_reports_segments_outside_the_local_lineage(tmp_path, capsys) -> None:
    """An unclean election: leader A (epoch 0) uploaded [0..49] and [50..99]; the new leader's
    log has epochs {0: 0, 1: 70} and uploaded [50..119]. A's [50..99] is unreachable (its
    epoch-0 offsets 70-99 are not in the lineage): reported, and not counted as holding
    offsets (without B's upload, 100..119 and 70.. would be a gap)."""
    tid = bytes(range(1, 17))
    d = _local_partition(tmp_path, tid, 120, 0)
    with Log.open(d) as log:
        log.append([Record(None, b"v", 0) for _ in range(30)], partition_leader_epoch=1)
    (d / "leader-epoch-checkpoint").write_text("0\n2\n0 0\n1 70\n")
    events = [add(0, 0, 49, {0: 0}), update(0, COPY_SEGMENT_FINISHED),
              add(1, 50, 99, {0: 50}), update(1, COPY_SEGMENT_FINISHED)]
    write_metadata(tmp_path, events)
    rc, out, _ = _run(capsys, str(tmp_path))
    lines = out.splitlines()
    assert rc == 1  # 50..119 is held by no readable segment
    assert lines[2:] == [
        "Gap: foo-0 offsets 50..119 are in no copied remote segment and not local (the local "
        f"log ({d}) starts at 120)",
        f"Unreachable segment: foo-0 {_uuid(1)} offsets 50..99 is outside the leader epoch "
        f"lineage of the local log ({d}): it ends at offset 99, past the end of its last epoch "
        "0 in the lineage (69; epoch 1 starts at 70); no broker reads it and remote retention "
        "deletes it"]
    # the new leader's upload of 50..119 fills the range; A's stays unreachable
    shutil.rmtree(tmp_path / f"__remote_log_metadata-{metadata_partition(TOPIC_ID, 0)}")
    write_metadata(tmp_path, events + [add(2, 50, 119, {0: 50, 1: 70}),
                                       update(2, COPY_SEGMENT_FINISHED)])
    rc, out, _ = _run(capsys, str(tmp_path))
    assert rc == 0 and [line.split(":")[0] for line in out.splitlines()[2:]] == [
        "Unreachable segment"]
    doc = json.loads(_run(capsys, str(tmp_path), "--json")[1])
    assert doc["partitions"][0]["unreachable"] == [
        {"segment_id": _uuid(1), "reason": "it ends at offset 99, past the end of its last "
                                           "epoch 0 in the lineage (69; epoch 1 starts at 70)"}]
    assert doc["partitions"][0]["gaps"] == []
    # kafkalog verify of the tree: a warning naming the segment, no gap
    from kafkalog.tools.verify import verify_paths

    found = [(f.check, f.severity, f.offset) for f in verify_paths([str(tmp_path)]).findings
             if f.check.startswith("tiered_")]
    assert found == [("tiered_unreachable", "warning", 50)]
