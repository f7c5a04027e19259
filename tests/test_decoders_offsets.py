"""The ``__consumer_offsets`` decoder (``kafkalog.decoders.offsets``) against real broker logs,
hand-derived expected strings, round trips and malformed bytes.

Records are pulled out of the fixture logs with kafka-python (an independent reader) so these
tests check only the decoder.
"""

from __future__ import annotations

import struct
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalog.decoders import offsets
from kafkalog.decoders.message import MessageDecodeError
from kafkalog.errors import CorruptRecordError, KafkaLogError

from .conftest import shared_fixture_path


def _records(path: Path) -> list[tuple[int, bytes | None, bytes | None, int]]:
    with warnings.catch_warnings():      # kafka-python's package import warns on 3.11
        warnings.simplefilter("ignore", DeprecationWarning)
        from kafka.record import MemoryRecords
    mr = MemoryRecords(path.read_bytes())
    out = []
    while (batch := mr.next_batch()) is not None:
        for r in batch:
            out.append((r.offset, r.key, r.value, r.timestamp))
    return out


def _java_hash(s: str) -> int:
    h = 0
    for ch in s.encode("utf-16-be").decode("utf-16-be"):
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def _partition_for(group: str, partitions: int = 50) -> int:
    """Kafka's ``GroupCoordinator.partitionFor``: ``Utils.abs(groupId.hashCode) % 50``."""
    h = _java_hash(group)
    return (h & 0x7FFFFFFF if h == -(1 << 31) else abs(h)) % partitions


def _offsets_logs(shared: Path) -> list[Path]:
    logs = sorted(shared.glob("kafka-real/*/__consumer_offsets-*/*.log"))
    assert logs, "no __consumer_offsets fixture logs found"
    return logs


# --------------------------------------------------------------------------------------------
# Real logs
# --------------------------------------------------------------------------------------------

def test_every_real_consumer_offsets_log_decodes_completely(shared_fixtures: Path) -> None:
    total = 0
    for log in _offsets_logs(shared_fixtures):
        for offset, key, value, _ in _records(log):
            k, v = offsets.format_for_dump(key, value, offset)
            assert k is not None and not k.startswith(("Error at", "Unknown record type")), (
                log, offset, k)
            assert v is not None
            total += 1
    assert total > 1000          # 13 + 1033 records across the three data directories


def test_groups_live_in_the_partition_kafka_hashes_them_to(shared_fixtures: Path) -> None:
    # Independent check of the decoded group ids: each must hash to the partition it was in.
    for log in _offsets_logs(shared_fixtures):
        partition = int(log.parent.name.rsplit("-", 1)[1])
        for _, key, value, _ in _records(log):
            rec = offsets.decode_record_obj(key, value)
            group = rec["key"]["group"] if "group" in rec["key"] else rec["key"]["groupId"]
            assert _partition_for(group) == partition, (log, group)


def test_ldi_poc_offset_commits_field_by_field() -> None:
    log = shared_fixture_path("kafka-real", "LDI-POC", "__consumer_offsets-6",
                              "00000000000000000000.log")
    topics_on_disk = {p.name.rsplit("-", 1)[0] for p in log.parent.parent.iterdir()
                      if p.is_dir()}
    recs = _records(log)
    commits = []
    for offset, key, value, timestamp in recs:
        rec = offsets.decode_record_obj(key, value)
        if rec["type"] in offsets.OFFSET_COMMIT_TYPES:
            assert rec["key_name"] == "OffsetCommitKey" and rec["version"] == 3
            # The commit time in the value is taken just before the record is appended.
            assert 0 <= timestamp - rec["value"]["commitTimestamp"] < 1000
            commits.append((offset, rec["key"]["topic"], rec["key"]["partition"],
                            rec["value"]["offset"]))
    assert {"TestTopicPatient", "Retry.TestTopicPatient"} <= {c[1] for c in commits}
    assert {c[1] for c in commits if c[1] in topics_on_disk} == {"TestTopicPatient"}
    patient = [c for c in commits if c[1] == "TestTopicPatient"]
    assert [c[3] for c in patient] == [0, 1, 2, 3]     # the consumer advanced one by one
    # The final committed offset equals the log end offset of TestTopicPatient-0.
    data_log = log.parent.parent / "TestTopicPatient-0" / "00000000000000000000.log"
    assert max(o for o, *_ in _records(data_log)) + 1 == patient[-1][3]

    # Exact text, derived by hand from the schema: key type 1, value version 3 (leaderEpoch
    # present from v3, expireTimestamp only in v1).
    offset, key, value, ts = recs[-1]
    assert offsets.decode_record(key, value) == (
        '{"type":"1","data":{"group":"DEVSmileCDR","topic":"TestTopicPatient","partition":0}}',
        f'{{"version":"3","data":{{"offset":3,"leaderEpoch":-1,"metadata":"",'
        f'"commitTimestamp":{ts}}}}}',
    )


def test_ldi_poc_group_metadata_expands_the_consumer_protocol() -> None:
    log = shared_fixture_path("kafka-real", "LDI-POC", "__consumer_offsets-6",
                              "00000000000000000000.log")
    offset, key, value, _ = _records(log)[0]
    k, v = offsets.decode_record(key, value)
    assert k == '{"type":"2","data":{"group":"DEVSmileCDR"}}'
    assert v.startswith('{"version":"3","data":{"protocolType":"consumer","generation":1,'
                        '"protocol":"range","leader":"consumer-DEVSmileCDR-1-')
    rec = offsets.decode_record_obj(key, value)
    members = rec["value"]["members"]
    assert members and all(m["clientHost"].startswith("/") for m in members)
    # The raw member subscription bytes start with an int16 version; the printed JSON replaces
    # them with the decoded ConsumerProtocolSubscription (topics, ownedPartitions, ...).
    sub_version = struct.unpack(">h", members[0]["subscription"][:2])[0]
    assert sub_version == 3
    assert '"subscription":{"topics":["batch2.work.notification.SHR_PROD.persistence"],' \
           '"userData":null,"ownedPartitions":[],"generationId":-1,"rackId":null}' in v
    assert '"assignment":{"assignedPartitions":[' in v


def test_zookeeper_era_logs_decode_old_versions(shared_fixtures: Path) -> None:
    versions = set()
    for log in _offsets_logs(shared_fixtures):
        if "LDI-POC" in str(log):
            continue
        for _, key, value, _ in _records(log):
            rec = offsets.decode_record_obj(key, value)
            if rec["value"] is not None:
                versions.add((rec["type"], rec["version"]))
    assert (1, 3) in versions or (1, 2) in versions or (1, 1) in versions
    assert any(t == 2 for t, _ in versions)


# --------------------------------------------------------------------------------------------
# Exact shapes, tombstones, errors
# --------------------------------------------------------------------------------------------

def test_offset_commit_v1_has_expire_timestamp_and_no_leader_epoch() -> None:
    k, v = offsets.encode_record(1, {"group": "g", "topic": "t", "partition": 2},
                                 {"offset": 10, "metadata": "m", "commitTimestamp": 5,
                                  "expireTimestamp": 9}, version=1)
    # key bytes: int16 type 1, then strings as int16 length + UTF-8, int32 partition
    assert k == b"\x00\x01" + b"\x00\x01g" + b"\x00\x01t" + b"\x00\x00\x00\x02"
    assert offsets.decode_record(k, v)[1] == (
        '{"version":"1","data":{"offset":10,"metadata":"m","commitTimestamp":5,'
        '"expireTimestamp":9}}')


def test_offset_commit_v4_is_flexible() -> None:
    k, v = offsets.encode_record(1, {"group": "g", "topic": "t", "partition": 0},
                                 {"offset": 1, "leaderEpoch": 7, "metadata": "",
                                  "commitTimestamp": 2}, version=4)
    # int16 version, int64 offset, int32 epoch, compact string (len+1), int64, tagged count 0
    assert v == (b"\x00\x04" + (1).to_bytes(8, "big") + (7).to_bytes(4, "big") + b"\x01"
                 + (2).to_bytes(8, "big") + b"\x00")
    assert offsets.decode_record(k, v)[1] == (
        '{"version":"4","data":{"offset":1,"leaderEpoch":7,"metadata":"",'
        '"commitTimestamp":2}}')


def test_tombstone_prints_delete() -> None:
    k, _ = offsets.encode_record(2, {"group": "grp"}, None)
    assert offsets.decode_record(k, None) == ('{"type":"2","data":{"group":"grp"}}',
                                              "<DELETE>")
    assert offsets.decode_record_obj(k, None)["value"] is None


def test_group_metadata_with_undecodable_subscription_keeps_base64() -> None:
    member = {"memberId": "m", "groupInstanceId": None, "clientId": "c", "clientHost": "/h",
              "rebalanceTimeout": 1, "sessionTimeout": 2,
              "subscription": b"\x00\x09junk", "assignment": b"\x00\x00\x00\x00\x00\x00"
              b"\xff\xff\xff\xff"}
    k, v = offsets.encode_record(2, {"group": "g"}, {
        "protocolType": "consumer", "generation": 1, "protocol": "range", "leader": "m",
        "currentStateTimestamp": 3, "members": [member]}, version=3)
    text = offsets.decode_record(k, v)[1]
    assert '"subscription":"AAlqdW5r"' in text                 # version 9: kept as bytes
    assert '"assignment":{"assignedPartitions":[],"userData":null}' in text


def test_non_consumer_protocol_type_keeps_member_bytes() -> None:
    k, v = offsets.encode_record(2, {"group": "g"}, {
        "protocolType": "connect", "generation": 0, "protocol": None, "leader": None,
        "members": [{"memberId": "m", "clientId": "c", "clientHost": "h",
                     "rebalanceTimeout": 1, "sessionTimeout": 2, "subscription": b"\x00\x00",
                     "assignment": b""}]}, version=2)
    text = offsets.decode_record(k, v)[1]
    assert text == ('{"version":"2","data":{"protocolType":"connect","generation":0,'
                    '"protocol":null,"leader":null,"currentStateTimestamp":-1,"members":['
                    '{"memberId":"m","clientId":"c","clientHost":"h","rebalanceTimeout":1,'
                    '"sessionTimeout":2,"subscription":"AAA=","assignment":""}]}}')


def test_unknown_record_type_and_errors_print_like_kafka() -> None:
    assert offsets.format_for_dump(b"\x00\x63abc", b"", 17) == (
        "Unknown record type 99 at offset 17, skipping.", None)
    k, v = offsets.encode_record(1, {"group": "g", "topic": "t", "partition": 0},
                                 {"offset": 1, "metadata": "", "commitTimestamp": 2},
                                 version=3)
    assert offsets.format_for_dump(k, v[:7], 5) == (
        "Error at offset 5, skipping. Could not read record with version 3 from value's "
        "buffer due to: null.", None)
    assert offsets.format_for_dump(b"\x00", v, 6)[0] == (
        "Error at offset 6, skipping. Could not read version from key's buffer.")
    assert offsets.format_for_dump(k, b"\x00\x09" + v[2:], 8)[0] == (
        "Error at offset 8, skipping. Could not read record with version 9 from value's "
        "buffer due to: Can't read version 9 of OffsetCommitValue.")
    with pytest.raises(offsets.MissingKeyError):
        offsets.format_for_dump(None, v, 0)
    with pytest.raises(MessageDecodeError) as ei:
        offsets.decode_record(k, v[:7])
    assert "value (OffsetCommitValue v3)" in str(ei.value)


def test_every_truncation_of_a_real_record_raises_corrupt_record_error() -> None:
    log = shared_fixture_path("kafka-real", "LDI-POC", "__consumer_offsets-6",
                              "00000000000000000000.log")
    _, key, value, _ = _records(log)[0]       # a GroupMetadataValue with members
    offsets.decode_record(key, value)
    for n in range(len(value)):
        with pytest.raises(CorruptRecordError):
            offsets.decode_record(key, value[:n])


# --------------------------------------------------------------------------------------------
# Round trips and fuzzing
# --------------------------------------------------------------------------------------------

_names = st.text(max_size=12)
_i32 = st.integers(-(2**31), 2**31 - 1)
_i64 = st.integers(-(2**63), 2**63 - 1)


@settings(max_examples=150, deadline=None)
@given(group=_names, topic=_names, partition=_i32, offset=_i64, epoch=_i32, meta=_names,
       ts=_i64, version=st.integers(0, 4))
def test_offset_commit_round_trip(group, topic, partition, offset, epoch, meta, ts,
                                  version) -> None:
    value = {"offset": offset, "metadata": meta, "commitTimestamp": ts}
    if version >= 3:
        value["leaderEpoch"] = epoch
    if version == 1:
        value["expireTimestamp"] = ts
    k, v = offsets.encode_record(1, {"group": group, "topic": topic, "partition": partition},
                                 value, version=version)
    rec = offsets.decode_record_obj(k, v)
    assert rec["key"] == {"group": group, "topic": topic, "partition": partition}
    assert rec["version"] == version
    for name, x in value.items():
        assert rec["value"][name] == x


@settings(max_examples=200, deadline=None)
@given(key=st.one_of(st.none(), st.binary(max_size=40)),
       value=st.one_of(st.none(), st.binary(max_size=80)))
def test_garbage_raises_only_kafkalog_errors(key, value) -> None:
    try:
        offsets.decode_record(key, value)
    except KafkaLogError:
        pass
    k, _ = offsets.format_for_dump(b"\x00\x01" + (key or b""), value, 3) if key else (None, None)
    assert k is None or isinstance(k, str)


# --------------------------------------------------------------------------------------------
# The pre-JSON text (Kafka 2.x-3.x)
# --------------------------------------------------------------------------------------------

def test_legacy_offset_commit_text() -> None:
    k, v = offsets.encode_record(1, {"group": "g", "topic": "t", "partition": 3},
                                 {"offset": 10, "metadata": "", "commitTimestamp": 5}, 3)
    assert offsets.format_legacy(k, v) == ("offset_commit::group=g,partition=t-3", "offset=10")
    k, v = offsets.encode_record(0, {"group": "g", "topic": "t", "partition": 3},
                                 {"offset": 10, "metadata": "md", "commitTimestamp": 5}, 0)
    assert offsets.format_legacy(k, v)[1] == "offset=10,metadata=md"
    assert offsets.format_legacy(k, None)[1] == "<DELETE>"


def test_legacy_group_metadata_text() -> None:
    # ConsumerProtocolAssignment v0: [t: [0, 1]], user data 00 0A -> "%X" of the big integer
    assignment = (b"\x00\x00" + b"\x00\x00\x00\x01" + b"\x00\x01t" + b"\x00\x00\x00\x02"
                  + b"\x00\x00\x00\x00\x00\x00\x00\x01" + b"\x00\x00\x00\x02\x00\x0a")
    member = {"memberId": "m1", "clientId": "c", "clientHost": "/h", "rebalanceTimeout": 1,
              "sessionTimeout": 2, "subscription": b"", "assignment": assignment}
    k, v = offsets.encode_record(2, {"group": "g"}, {
        "protocolType": "consumer", "generation": 4, "protocol": "range", "leader": "m1",
        "members": [member]}, version=1)
    assert offsets.format_legacy(k, v) == (
        "group_metadata::group=g",
        '{"protocolType":"consumer","protocol":"range","generationId":4,'
        '"assignment":"{m1=[t-0, t-1]:A}"}')
    k, v = offsets.encode_record(2, {"group": "g"}, {
        "protocolType": "connect", "generation": 1, "protocol": None, "leader": None,
        "members": [dict(member, assignment=b"\x00\x01\xff")]}, version=0)
    assert offsets.format_legacy(k, v)[1] == (
        '{"protocolType":"connect","protocol":null,"generationId":1,"assignment":"{m1=1FF}"}')


def test_target_assignment_member_value_has_the_3_8_shape() -> None:
    """``ConsumerGroupTargetAssignmentMemberValue`` as Kafka 3.8+ writes it: only
    ``TopicPartitions`` (3.7's early-access Error/MetadataVersion/MetadataBytes were dropped by
    apache/kafka#15545). Bytes built field by field from the 3.8 schema, not by our encoder."""
    topic_id = bytes(range(16))
    key = struct.pack(">hh", 7, 3) + b"app" + struct.pack(">h", 1) + b"m"
    value = (struct.pack(">h", 0)              # value version 0 (flexible)
             + bytes([2])                      # compact array: 1 TopicPartition
             + topic_id + bytes([3]) + struct.pack(">ii", 4, 7) + bytes([0])  # parts, no tags
             + bytes([0]))                     # no tagged fields
    key_text, payload = offsets.decode_record(key, value)
    assert key_text == '{"type":"7","data":{"groupId":"app","memberId":"m"}}'
    assert payload == ('{"version":"0","data":{"topicPartitions":[{"topicId":'
                       '"AAECAwQFBgcICQoLDA0ODw","partitions":[4,7]}]}}')
    with pytest.raises(CorruptRecordError):    # the 3.7 shape (a leading Error int8): refused
        offsets.decode_record_obj(key, value[:2] + b"\x00" + value[2:] + b"\x00\x00\x01")


# -- the dump's key-text cache (_coordinator.dump_text) -----------------------------------------

def _reference_texts(key, value):
    """The texts without the cache: decode, then format (the path before dump_text)."""
    from kafkalog.decoders.offsets import CODEC, _value_json

    rec = CODEC.decode(key, value)
    if rec["value"] is None:
        return CODEC.format(rec)
    return CODEC.format(rec, _value_json(rec))


def _outcome(fn, key, value):
    try:
        return ("ok", fn(key, value))
    except Exception as e:  # the same error type and text on both paths
        return ("error", type(e).__name__, str(e), getattr(e, "kafka_message", None))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3), st.integers(0, 2**40),
                          st.sampled_from(["ok", "tombstone", "cut", "short", "bad_version"])),
                min_size=1, max_size=40))
def test_dump_text_cache_gives_the_uncached_texts_and_errors(items):
    """Keys repeat (as in a real partition), values vary, some are tombstones or corrupt: every
    record's texts, or its error, equal the uncached path's, whatever the cache holds."""
    from kafkalog.decoders import offsets

    offsets.CODEC._key_texts.clear()
    for group, partition, offset, kind in items:
        key, value = offsets.encode_record(
            1, {"group": f"g{group}", "topic": "t", "partition": partition},
            {"offset": offset, "leaderEpoch": -1, "metadata": "m",
             "commitTimestamp": 1700000000000}, version=3)
        if kind == "tombstone":
            value = None
        elif kind == "cut":
            value = value[:-3]
        elif kind == "short":
            value = value[:1]
        elif kind == "bad_version":
            value = b"\x00\x63" + value[2:]
        assert _outcome(offsets.decode_record, key, value) == \
            _outcome(_reference_texts, key, value)
