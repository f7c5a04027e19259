"""Kafka 4.0's and 4.1+'s shapes of the KIP-932 values that changed without a new version
number: ``ShareSnapshotValue``/``ShareUpdateValue`` (``__share_group_state``) and the
``__consumer_offsets`` records 11 and 15, plus 4.2's ``StreamsGroupMetadataValue``.

The tables are compared field by field with Kafka's JSON files at the release tags
(``tests/golden/kafka_schemas``); the records are built by hand from those definitions
(:mod:`tests.test_decoders_newest_schemas`' encoders, independent of kafkalog's), and the texts
are those of Kafka's own tests where they exist: ``DumpLogSegmentsTest`` at 4.0.0 and
4.2.0-rc1, ``ShareGroupMessageFormatterTest`` at 4.2.0-rc1.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalog.decoders import _schemas, offsets, share_group_state

from .test_decoders_newest_schemas import (
    NO_TAGS,
    U1,
    U2,
    carr,
    cstr,
    i8,
    i16,
    i32,
    i64,
    ints,
    kv,
    nstr,
    payload,
    tags,
    u16,
    uuid,
)

SCHEMAS = Path(__file__).parent / "golden" / "kafka_schemas"
T = 1_700_000_000_000


# --------------------------------------------------------------------------------------------
# The transcriptions against Kafka's files
# --------------------------------------------------------------------------------------------

def _kafka_json(path: Path) -> dict[str, Any]:
    text = re.sub(r"^\s*//.*$", "", path.read_text(), flags=re.M)
    return json.loads(text)


def _default(d: Any) -> Any:
    # FieldSpec: a JSON null is no default (""); numbers may be given as strings ("-1")
    if d is None or d == "":
        return None
    if isinstance(d, str):
        try:
            return int(d)
        except ValueError:
            return d
    return d


def _field(f: dict[str, Any]) -> dict[str, Any]:
    tagged = f.get("taggedVersions")
    return {
        "name": f["name"], "type": f["type"],
        # FieldSpec: no "versions" on a tagged field means its taggedVersions
        "versions": f.get("versions", tagged),
        "nullableVersions": f.get("nullableVersions"), "taggedVersions": tagged,
        "tag": None if f.get("tag") is None else int(f["tag"]),
        "default": _default(f.get("default")),
        "fields": [_field(x) for x in f.get("fields", [])],
    }


def _message(m: dict[str, Any]) -> dict[str, Any]:
    return {"name": m["name"], "validVersions": m["validVersions"],
            "flexibleVersions": m["flexibleVersions"],
            "fields": [_field(f) for f in m["fields"]],
            "commonStructs": sorted(
                ([c["name"], c["versions"], [_field(f) for f in c["fields"]]]
                 for c in m.get("commonStructs", [])), key=lambda c: c[0])}


CASES_4_0 = [
    ("ShareSnapshotValue", _schemas.SHARE_VALUES_4_0[0]),
    ("ShareUpdateValue", _schemas.SHARE_VALUES_4_0[1]),
    ("ShareGroupMetadataValue", _schemas.GROUP_VALUES_4_0[11]),
    ("ShareGroupStatePartitionMetadataValue", _schemas.GROUP_VALUES_4_0[15]),
]


@pytest.mark.parametrize("name, ours", CASES_4_0, ids=[n for n, _ in CASES_4_0])
def test_4_0_transcription_matches_kafkas_file(name: str, ours: dict[str, Any]) -> None:
    assert _message(ours) == _message(_kafka_json(SCHEMAS / "4.0.0" / f"{name}.json"))


def _release_4_2() -> dict[str, dict[str, Any]]:
    """Kafka's 4.2.0-rc1 definitions by message name (a file's name is not always its
    message's: ``ZkMigrationRecord.json`` holds ``ZkMigrationStateRecord``)."""
    out = {}
    for path in sorted((SCHEMAS / "4.2.0-rc1").glob("*.json")):
        spec = _kafka_json(path)
        out[spec["name"]] = spec
    return out


RELEASE_4_2 = _release_4_2()
TABLES = {"GROUP_KEYS": _schemas.GROUP_KEYS, "GROUP_VALUES": _schemas.GROUP_VALUES,
          "TXN_KEYS": _schemas.TXN_KEYS, "TXN_VALUES": _schemas.TXN_VALUES,
          "METADATA": _schemas.METADATA, "CLIENT": _schemas.CLIENT,
          "SHARE_KEYS": _schemas.SHARE_KEYS, "SHARE_VALUES": _schemas.SHARE_VALUES,
          "REMOTE_LOG_METADATA": _schemas.REMOTE_LOG_METADATA}
#: what the tables hold beyond 4.2.0-rc1, each with where it comes from: schemas no release up
#: to 4.2 has (older or newer ones), and tagged fields added on trunk after 4.2 (read from
#: Kafka's trunk files, commits named in kafkalog/decoders/_schemas.py)
NOT_IN_4_2 = {
    "ShareGroupPartitionMetadataKey": "4.0 only (record type 9, dropped in 4.1)",
    "ShareGroupPartitionMetadataValue": "4.0 only",
    "StreamsGroupTargetAssignmentResolvedTopicIdsKey": "trunk after 4.2 (record type 24)",
    "StreamsGroupTargetAssignmentResolvedTopicIdsValue": "trunk after 4.2",
    "RemoveFeatureLevelRecord": "KRaft before 3.3 (api key 16, removed by KAFKA-13830)",
    "UnregisterControllerRecord": "trunk after 4.2 (api key 29)",
}
TRUNK_FIELDS = {
    "ConsumerGroupMetadataValue": ["CreationTimeMs"],                      # KIP-1282
    "ConsumerGroupTargetAssignmentMetadataValue": ["AssignmentTimestamp"],  # KIP-1263
    "ConsumerGroupCurrentMemberAssignmentValue": ["TopicPartitions.AssignmentEpochs"],  # 1251
}
EVERY = [(t, k) for t, table in TABLES.items() for k in table]


def _without(msg: dict[str, Any], paths: list[str]) -> dict[str, Any]:
    msg = json.loads(json.dumps(msg))
    for path in paths:
        if "." in path:
            struct, field = path.split(".")
            for name, _, fields in msg["commonStructs"]:
                if name == struct:
                    fields[:] = [f for f in fields if f["name"] != field]
        else:
            msg["fields"] = [f for f in msg["fields"] if f["name"] != path]
    return msg


@pytest.mark.parametrize("table, key", EVERY, ids=[f"{t}:{k}" for t, k in EVERY])
def test_every_transcription_matches_kafka_4_2(table: str, key: Any) -> None:
    """Every table entry against Kafka 4.2.0-rc1's file of the same message, field by field
    (names, types, versions, nullability, tags, defaults, order, common structs)."""
    spec = TABLES[table][key]
    name = spec["name"]
    if name in NOT_IN_4_2:
        assert name not in RELEASE_4_2
        return
    kafka = RELEASE_4_2[name]
    if "apiKey" in kafka and table in ("METADATA", "REMOTE_LOG_METADATA"):
        assert spec.get("apiKey", key) == kafka["apiKey"]
    if "apiKey" in kafka and table.endswith(("KEYS", "VALUES")) and \
            not name.startswith("OffsetCommit"):   # (types 0 and 1 share them, see below)
        assert key == kafka["apiKey"]          # the record type is the coordinator apiKey
    ours, theirs = _message(spec), _message(kafka)
    if table.endswith("KEYS"):
        # a key is read at its record type (<= 4.0 schemas) or at 0 (4.1+): the same bytes
        for m in (ours, theirs):
            m["validVersions"] = None
            for f in m["fields"]:
                f["versions"] = None
    ours = _without(ours, TRUNK_FIELDS.get(name, []))
    assert ours == theirs


def test_every_4_2_file_is_transcribed() -> None:
    ours = {s["name"] for t in TABLES.values() for s in t.values()}
    assert sorted(set(RELEASE_4_2) - ours) == [
        # 4.1 named record type 0's key and value apart; same fields as OffsetCommitKey and
        # OffsetCommitValue v0, which read them
        "LegacyOffsetCommitKey", "LegacyOffsetCommitValue",
        # the producer-state .snapshot file (kafkalog.producer_snapshot), not a topic record
        "ProducerSnapshot"]


def test_the_two_releases_differ_where_the_tables_do() -> None:
    # (else the older tables would be dead weight)
    for name, _ in CASES_4_0:
        old, new = (_message(_kafka_json(SCHEMAS / t / f"{name}.json"))
                    for t in ("4.0.0", "4.2.0-rc1"))
        assert old["validVersions"] == new["validVersions"] == "0"
        assert old["fields"] != new["fields"]


# --------------------------------------------------------------------------------------------
# __share_group_state values
# --------------------------------------------------------------------------------------------

KEY0 = i16(0) + nstr("gs1") + uuid(U2) + i32(0)
KEY1 = i16(1) + nstr("gs1") + uuid(U2) + i32(0)
KEY_TEXT = '{"type":"%d","data":{"groupId":"gs1","topicId":"Uj5wn_FqTXirEASvVZRY1w","partition":0}}'
BATCH = i64(0) + i64(4) + i8(2) + i16(1) + NO_TAGS
BATCH_TEXT = '[{"firstOffset":0,"lastOffset":4,"deliveryState":2,"deliveryCount":1}]'


def _snapshot_4_2(count: int | None = None) -> bytes:
    tagged = NO_TAGS if count is None else tags((0, i32(count)))
    return (i16(0) + i32(0) + i32(0) + i32(0) + i64(0) + i64(T) + i64(T) + carr([BATCH])
            + tagged)


def test_snapshot_and_update_as_kafka_4_2_dumps_them() -> None:
    """DumpLogSegmentsTest.testShareGroupStateMessageParser @4.2.0-rc1."""
    value = _snapshot_4_2()
    assert share_group_state.decode_record(KEY0, value) == (KEY_TEXT % 0, payload(
        '{"snapshotEpoch":0,"stateEpoch":0,"leaderEpoch":0,"startOffset":0,'
        f'"createTimestamp":{T},"writeTimestamp":{T},"stateBatches":{BATCH_TEXT}}}'))
    update = i16(0) + i32(0) + i32(0) + i64(0) + carr([BATCH]) + NO_TAGS
    assert share_group_state.decode_record(KEY1, update) == (KEY_TEXT % 1, payload(
        '{"snapshotEpoch":0,"leaderEpoch":0,"startOffset":0,'
        f'"stateBatches":{BATCH_TEXT}}}'))
    assert share_group_state.decode_record(KEY0, None) == (KEY_TEXT % 0, "<DELETE>")
    # kafkalog writes the same bytes
    batch = [{"firstOffset": 0, "lastOffset": 4, "deliveryState": 2, "deliveryCount": 1}]
    k, v = share_group_state.encode_record(0, {"groupId": "gs1", "topicId": U2, "partition": 0}, {
        "snapshotEpoch": 0, "stateEpoch": 0, "leaderEpoch": 0, "startOffset": 0,
        "createTimestamp": T, "writeTimestamp": T, "stateBatches": batch})
    assert (k, v) == (KEY0, value)
    k, v = share_group_state.encode_record(1, {"groupId": "gs1", "topicId": U2, "partition": 0}, {
        "snapshotEpoch": 0, "leaderEpoch": 0, "startOffset": 0, "stateBatches": batch})
    assert (k, v) == (KEY1, update)
    rec = share_group_state.decode_record_obj(KEY0, value)
    assert rec["layout"] is None and rec["value"]["deliveryCompleteCount"] == -1


def test_a_value_of_the_wrong_class_is_kafkas_error() -> None:
    """DumpLogSegmentsTest @4.2.0-rc1: a default ShareSnapshotValue under a ShareUpdate key."""
    default_snapshot = i16(0) + i32(0) * 3 + i64(0) * 3 + carr([]) + NO_TAGS
    assert share_group_state.format_for_dump(KEY1, default_snapshot, 0) == (
        "Error at offset 0, skipping. Could not read record with version 0 from value's buffer "
        "due to: non-nullable field stateBatches was serialized as null.", None)


def test_the_4_2_delivery_complete_count_is_printed_when_set() -> None:
    value = _snapshot_4_2(7)
    text = share_group_state.decode_record(KEY0, value)[1]
    assert '"startOffset":0,"deliveryCompleteCount":7,"createTimestamp"' in text
    assert share_group_state.decode_record_obj(KEY0, value)["value"][
        "deliveryCompleteCount"] == 7
    # a 4.1 reader's view: the same record without the tag (4.1 skips it as unknown)
    assert share_group_state.decode_record(KEY0, _snapshot_4_2())[1] == text.replace(
        '"deliveryCompleteCount":7,', "")


def _snapshot_4_0(epoch: int = 0) -> bytes:
    return i16(0) + u16(epoch) + i32(0) + i32(0) + i64(0) + carr([BATCH]) + NO_TAGS


UPDATE_4_0 = i16(0) + u16(0) + i32(0) + i64(0) + carr([BATCH]) + NO_TAGS


def test_kafka_4_0_values_are_read_in_4_0_shape() -> None:
    """DumpLogSegmentsTest.testShareGroupStateMessageParser @4.0.0 (its parser labelled the
    value version "type")."""
    assert share_group_state.decode_record(KEY0, _snapshot_4_0(), value_label="type") == (
        KEY_TEXT % 0, '{"type":"0","data":{"snapshotEpoch":0,"stateEpoch":0,"leaderEpoch":0,'
        f'"startOffset":0,"stateBatches":{BATCH_TEXT}}}}}')
    assert share_group_state.decode_record(KEY1, UPDATE_4_0, value_label="type") == (
        KEY_TEXT % 1, '{"type":"0","data":{"snapshotEpoch":0,"leaderEpoch":0,"startOffset":0,'
        f'"stateBatches":{BATCH_TEXT}}}}}')
    rec = share_group_state.decode_record_obj(KEY0, _snapshot_4_0(65535))
    assert rec["layout"] == "4.0" and rec["value"]["snapshotEpoch"] == 65535
    assert "createTimestamp" not in rec["value"]
    # and written in that shape when asked
    batch = [{"firstOffset": 0, "lastOffset": 4, "deliveryState": 2, "deliveryCount": 1}]
    assert share_group_state.encode_record(0, {"groupId": "gs1", "topicId": U2, "partition": 0}, {
        "snapshotEpoch": 0, "stateEpoch": 0, "leaderEpoch": 0, "startOffset": 0,
        "stateBatches": batch}, layout="4.0") == (KEY0, _snapshot_4_0())


@pytest.mark.parametrize("prefer_older", [False, True])
def test_each_shape_is_recognised_whichever_is_tried_first(prefer_older: bool) -> None:
    for key, value, layout in [(KEY0, _snapshot_4_2(), None), (KEY0, _snapshot_4_2(3), None),
                               (KEY0, _snapshot_4_0(), "4.0"), (KEY1, UPDATE_4_0, "4.0"),
                               (KEY1, i16(0) + i32(9) + i32(1) + i64(-1) + carr([])
                                + tags((0, i32(0))), None)]:
        rec = share_group_state.decode_record_obj(key, value, prefer_older=prefer_older)
        assert rec["layout"] == layout
        assert share_group_state.decode_record(key, value, prefer_older=prefer_older) == \
            share_group_state.decode_record(key, value)


def test_trailing_bytes_read_as_kafka_reads_them() -> None:
    # neither shape reads exactly: the newest one's reading (trailing bytes ignored, as
    # Kafka's readers ignore them), not 4.0's
    value = _snapshot_4_2() + b"\x00\x00"
    rec = share_group_state.decode_record_obj(KEY0, value)
    assert rec["layout"] is None and rec["value"]["createTimestamp"] == T


def test_an_unknown_layout_is_refused() -> None:
    with pytest.raises(ValueError, match="no 3.9 layout"):
        share_group_state.encode_record(0, {"groupId": "g", "topicId": U1, "partition": 0},
                                        {}, layout="3.9")
    with pytest.raises(ValueError, match="record type 3 has no 4.0 layout"):
        offsets.encode_record(3, {"groupId": "g"}, {}, layout="4.0")


_batches = st.lists(st.tuples(st.integers(-2**63, 2**63 - 1), st.integers(-2**63, 2**63 - 1),
                              st.integers(-128, 127), st.integers(-2**15, 2**15 - 1)),
                    max_size=4)


@settings(max_examples=300, deadline=None)
@given(record_type=st.sampled_from([0, 1]), epoch=st.integers(0, 2**16 - 1),
       state_epoch=st.integers(-2**31, 2**31 - 1), leader=st.integers(-2**31, 2**31 - 1),
       start=st.integers(-2**63, 2**63 - 1), batches=_batches,
       stamps=st.tuples(st.integers(-2**63, 2**63 - 1), st.integers(-2**63, 2**63 - 1)),
       count=st.one_of(st.none(), st.integers(-2**31, 2**31 - 1)),
       older=st.booleans(), prefer_older=st.booleans())
def test_property_every_record_reads_back_in_the_shape_it_was_written(
        record_type: int, epoch: int, state_epoch: int, leader: int, start: int,
        batches: list, stamps: tuple[int, int], count: int | None, older: bool,
        prefer_older: bool) -> None:
    value: dict[str, Any] = {
        "snapshotEpoch": epoch, "leaderEpoch": leader, "startOffset": start,
        "stateBatches": [{"firstOffset": f, "lastOffset": la, "deliveryState": s,
                          "deliveryCount": c} for f, la, s, c in batches]}
    if record_type == 0:
        value["stateEpoch"] = state_epoch
    if not older:
        if record_type == 0:
            value["createTimestamp"], value["writeTimestamp"] = stamps
        if count is not None:
            value["deliveryCompleteCount"] = count
    key = {"groupId": "g", "topicId": U1, "partition": 0}
    k, v = share_group_state.encode_record(record_type, key, value,
                                           layout="4.0" if older else None)
    rec = share_group_state.decode_record_obj(k, v, prefer_older=prefer_older)
    assert rec["layout"] == ("4.0" if older else None)
    got = dict(rec["value"])
    if not older and count is None:
        assert got.pop("deliveryCompleteCount") == -1
    assert got == value


# --------------------------------------------------------------------------------------------
# __consumer_offsets records 11 and 15
# --------------------------------------------------------------------------------------------

def _info(tid: str, name: str, parts: list[int]) -> bytes:
    return uuid(tid) + cstr(name) + ints(parts) + NO_TAGS


RECORD_15_4_2 = (i16(0) + carr([_info(U1, "topic", [1])]) + carr([_info(U1, "topic", [0])])
                 + carr([uuid(U1) + cstr("topic") + NO_TAGS]) + NO_TAGS)
RECORD_15_4_0 = (i16(0) + carr([_info(U1, "topic", [0])])
                 + carr([uuid(U1) + cstr("topic") + NO_TAGS]) + NO_TAGS)


def test_share_group_records_as_kafka_4_2_formats_them() -> None:
    """ShareGroupMessageFormatterTest @4.2.0-rc1 (the data part of its texts)."""
    key11 = i16(11) + nstr("group-id")
    value11 = i16(0) + i32(1) + i64(1) + NO_TAGS
    assert offsets.decode_record(key11, value11) == (
        '{"type":"11","data":{"groupId":"group-id"}}', payload('{"epoch":1,"metadataHash":1}'))
    assert offsets.encode_record(11, {"groupId": "group-id"},
                                 {"epoch": 1, "metadataHash": 1}) == (key11, value11)
    key15 = i16(15) + nstr("group-id")
    topic = '"topicId":"AAAAAAAAAAAAAAAAAAAAAQ","topicName":"topic"'
    assert offsets.decode_record(key15, RECORD_15_4_2)[1] == payload(
        f'{{"initializingTopics":[{{{topic},"partitions":[1]}}],'
        f'"initializedTopics":[{{{topic},"partitions":[0]}}],"deletingTopics":[{{{topic}}}]}}')
    for key, value in ((key11, value11), (key15, RECORD_15_4_2)):
        assert offsets.decode_record_obj(key, value)["layout"] is None


def test_share_group_records_of_kafka_4_0() -> None:
    key11 = i16(11) + nstr("group-id")
    value11 = i16(0) + i32(1) + NO_TAGS
    rec = offsets.decode_record_obj(key11, value11)
    assert rec["layout"] == "4.0" and rec["value"] == {"epoch": 1}
    assert offsets.decode_record(key11, value11)[1] == payload('{"epoch":1}')
    assert offsets.encode_record(11, {"groupId": "group-id"}, {"epoch": 1},
                                 layout="4.0") == (key11, value11)
    key15 = i16(15) + nstr("group-id")
    topic = '"topicId":"AAAAAAAAAAAAAAAAAAAAAQ","topicName":"topic"'
    for prefer_older in (False, True):
        assert offsets.decode_record(key15, RECORD_15_4_0, prefer_older=prefer_older)[1] == \
            payload(f'{{"initializedTopics":[{{{topic},"partitions":[0]}}],'
                    f'"deletingTopics":[{{{topic}}}]}}')
        assert offsets.decode_record_obj(key15, RECORD_15_4_2, prefer_older=prefer_older)[
            "layout"] is None
    # both shapes fail: the newest one's error, in Kafka's words (its serde adds the last ".")
    assert offsets.format_for_dump(key15, i16(0) + b"\x02", 5) == (
        "Error at offset 5, skipping. Could not read record with version 0 from value's "
        "buffer due to: Tried to allocate a collection of size 1, but there are only 0 bytes "
        "remaining..", None)


# --------------------------------------------------------------------------------------------
# StreamsGroupMetadataValue's LastAssignmentConfigs (4.2)
# --------------------------------------------------------------------------------------------

KEY17 = i16(17) + nstr("app")


@pytest.mark.parametrize("tagged, configs, text", [
    (tags((1, carr([kv("num.standby.replicas", "1")]))),
     [{"key": "num.standby.replicas", "value": "1"}],
     ',"lastAssignmentConfigs":[{"key":"num.standby.replicas","value":"1"}]'),
    # FieldSpec: a JSON-null default is the empty array, so null differs from it: written
    # (tag 1, the null marker) and printed
    (tags((1, b"\x00")), None, ',"lastAssignmentConfigs":null'),
    (NO_TAGS, [], ""),
])
def test_streams_group_metadata_last_assignment_configs(tagged: bytes, configs: Any,
                                                        text: str) -> None:
    value = i16(0) + i32(3) + i64(5) + tagged
    assert offsets.decode_record(KEY17, value)[1] == payload(
        '{"epoch":3,"metadataHash":5' + text + "}")
    assert offsets.decode_record_obj(KEY17, value)["value"]["lastAssignmentConfigs"] == configs
    assert offsets.encode_record(17, {"groupId": "app"}, {
        "epoch": 3, "metadataHash": 5, "lastAssignmentConfigs": configs})[1] == value


# --------------------------------------------------------------------------------------------
# The other 4.1/4.2 additions the release files showed (tagged fields: read, printed when not
# their default, skipped by older readers)
# --------------------------------------------------------------------------------------------

def test_offset_commit_value_v4_topic_id() -> None:
    """OffsetCommitValue v4's tagged topicId (Kafka 4.1+ writes v4 with it)."""
    key = i16(1) + nstr("g") + nstr("t") + i32(0)
    head = i16(4) + i64(42) + i32(3) + cstr("") + i64(T)
    value = head + tags((0, uuid(U2)))
    assert offsets.decode_record(key, value)[1] == payload(
        f'{{"offset":42,"leaderEpoch":3,"metadata":"","commitTimestamp":{T},'
        '"topicId":"Uj5wn_FqTXirEASvVZRY1w"}', 4)
    assert offsets.decode_record(key, head + NO_TAGS)[1] == payload(
        f'{{"offset":42,"leaderEpoch":3,"metadata":"","commitTimestamp":{T}}}', 4)
    assert offsets.encode_record(1, {"group": "g", "topic": "t", "partition": 0}, {
        "offset": 42, "leaderEpoch": 3, "metadata": "", "commitTimestamp": T,
        "topicId": U2}, 4) == (key, value)
    # the engine's reader of committed offsets takes a v4 record as Kafka 4.1+ writes it
    from kafkalog.groups.records import decode

    commit = decode(key, value)
    assert (commit.group, commit.topic, commit.partition) == ("g", "t", 0)
    assert (commit.value.offset, commit.value.leader_epoch) == (42, 3)


def test_transaction_log_value_next_producer_epoch() -> None:
    """TransactionLogValue v1's tagged NextProducerEpoch (tag 3, 4.1+), printed after
    producerEpoch (schema order) when not -1."""
    from kafkalog.decoders import transaction_log

    key = i16(0) + nstr("tx-1")
    value = (i16(1) + i64(7) + i16(1) + i32(60000) + i8(4) + carr([]) + i64(5) + i64(3)
             + tags((1, i64(8)), (3, i16(0))))
    assert transaction_log.decode_record(key, value)[1] == payload(
        '{"producerId":7,"nextProducerId":8,"producerEpoch":1,"nextProducerEpoch":0,'
        '"transactionTimeoutMs":60000,"transactionStatus":4,"transactionPartitions":[],'
        '"transactionLastUpdateTimestampMs":5,"transactionStartTimestampMs":3}', 1)


def test_streams_current_member_assignment_epochs() -> None:
    """StreamsGroupCurrentMemberAssignmentValue's TaskIds AssignmentEpochs (4.2, tag 0)."""
    key = i16(22) + nstr("app") + nstr("m-1")
    task = cstr("0") + ints([0, 1]) + tags((0, ints([4, 5])))
    value = i16(0) + i32(5) + i32(4) + i8(0) + carr([task]) + carr([]) * 5 + NO_TAGS
    assert offsets.decode_record(key, value)[1] == payload(
        '{"memberEpoch":5,"previousMemberEpoch":4,"state":0,"activeTasks":[{"subtopologyId":'
        '"0","partitions":[0,1],"assignmentEpochs":[4,5]}],"standbyTasks":[],"warmupTasks":[],'
        '"activeTasksPendingRevocation":[],"standbyTasksPendingRevocation":[],'
        '"warmupTasksPendingRevocation":[]}')


def test_leader_change_message_versions() -> None:
    """LeaderChangeMessage 0-1 (KIP-853's VoterDirectoryId from 1); Kafka writes and reads
    version 0 (ControlRecordUtils.LEADER_CHANGE_CURRENT_VERSION)."""
    from kafkalog.decoders import message

    schema = message.compile_schema(_schemas.CLIENT["LeaderChangeMessage"])
    v0 = i16(0) + i32(1) + carr([i32(1) + NO_TAGS]) + carr([i32(1) + NO_TAGS]) + NO_TAGS
    obj = message.read(schema, v0, 0)
    assert (obj["leaderId"], [v["voterId"] for v in obj["voters"]]) == (1, [1])
    # version 0's JSON has no directory ids (the field is 1+)
    assert message.json_text(schema, obj, 0) == \
        '{"version":0,"leaderId":1,"voters":[{"voterId":1}],"grantingVoters":[{"voterId":1}]}'
    v1 = (i16(1) + i32(1) + carr([i32(1) + uuid(U1) + NO_TAGS])
          + carr([i32(1) + uuid(U1) + NO_TAGS]) + NO_TAGS)
    assert message.read(schema, v1, 1)["voters"] == [{"voterId": 1, "voterDirectoryId": U1}]
    assert message.write(schema, message.read(schema, v1, 1), 1) == v1
