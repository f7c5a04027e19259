"""The internal-topic schemas brought up to Kafka's newest message definitions
(``kafkalog.decoders._schemas``): KIP-1101/KIP-1282 ``ConsumerGroupMetadataValue``, KIP-1251
``AssignmentEpochs``, KIP-1263 ``AssignmentTimestamp``, the KIP-1071 streams-group records, the
4.1 share-group records, the 4.2 share-state records and ``TransactionLogValue``'s tagged fields.

Every record is built twice: by kafkalog's own encoder and by hand, here, from the Kafka JSON
definition (int16 record type / version, then the fields: compact strings and arrays and a
tagged-field section in flexible versions), so the tests do not merely round-trip our tables.
The expected texts are what Kafka's generated ``*JsonConverter.write`` prints: fields in schema
order, lowerCamel names, a tagged field only when it differs from its default
(``JsonConverterGenerator`` + ``FieldSpec.generateNonDefaultValueCheck``). Where Kafka's own tests
give the text (``ShareGroupMessageFormatterTest``, ``DumpLogSegmentsTest``) the data is theirs.
"""

from __future__ import annotations

import base64
import json
import struct
import warnings
from pathlib import Path

import pytest

from kafkalog.cli import main
from kafkalog.decoders import (
    _schemas,
    cluster_metadata,
    message,
    offsets,
    transaction_log,
)
from kafkalog.records.builder import encode_batch
from kafkalog.records.record import Record

T = 1_700_000_000_000
U1 = "AAAAAAAAAAAAAAAAAAAAAQ"               # Uuid.ONE_UUID
U2 = "Uj5wn_FqTXirEASvVZRY1w"               # DumpLogSegmentsTest's topic id


# --------------------------------------------------------------------------------------------
# Hand encoding (Kafka's ByteBufferAccessor / ByteUtils), independent of kafkalog.message
# --------------------------------------------------------------------------------------------

def i8(v: int) -> bytes:
    return struct.pack(">b", v)


def i16(v: int) -> bytes:
    return struct.pack(">h", v)


def u16(v: int) -> bytes:
    return struct.pack(">H", v)


def i32(v: int) -> bytes:
    return struct.pack(">i", v)


def i64(v: int) -> bytes:
    return struct.pack(">q", v)


def uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def uuid(s: str) -> bytes:
    return base64.urlsafe_b64decode(s + "==")


def nstr(s: str) -> bytes:
    """A non-flexible string (the coordinator keys): int16 length + UTF-8."""
    b = s.encode()
    return i16(len(b)) + b


def cstr(s: str | None) -> bytes:
    """A compact (flexible-version) string: uvarint length + 1, 0 for null."""
    if s is None:
        return b"\x00"
    b = s.encode()
    return uvarint(len(b) + 1) + b


def carr(items: list | None, enc=lambda x: x) -> bytes:
    """A compact array: uvarint count + 1 (0 for null), then each element."""
    if items is None:
        return b"\x00"
    return uvarint(len(items) + 1) + b"".join(enc(x) for x in items)


def ints(xs: list[int] | None) -> bytes:
    return carr(xs, i32)


def tags(*fields: tuple[int, bytes]) -> bytes:
    """The tagged-field section: count, then tag, size, bytes of each (in tag order)."""
    return uvarint(len(fields)) + b"".join(uvarint(t) + uvarint(len(d)) + d for t, d in fields)


NO_TAGS = tags()


def kv(k: str, v: str) -> bytes:
    return cstr(k) + cstr(v) + NO_TAGS


def payload(data: str, version: int = 0) -> str:
    return f'{{"version":"{version}","data":{data}}}'


def _check_offsets(record_type: int, key_obj: dict, value_obj: dict, key_raw: bytes,
                   value_raw: bytes, key_text: str, value_text: str, version: int = 0) -> None:
    """Our encoder writes the hand-built bytes; both decode to Kafka's texts."""
    k, v = offsets.encode_record(record_type, key_obj, value_obj, version)
    assert k == key_raw
    assert v == value_raw
    assert offsets.decode_record(key_raw, value_raw) == (key_text, payload(value_text, version))
    assert offsets.decode_record(key_raw, None) == (key_text, "<DELETE>")
    json.loads(value_text)                                  # (well-formed)


# --------------------------------------------------------------------------------------------
# Consumer groups (KIP-848 records' newest tagged fields)
# --------------------------------------------------------------------------------------------

def test_consumer_group_metadata_value_with_metadata_hash_and_creation_time() -> None:
    # ConsumerGroupMetadataValue: Epoch; tagged MetadataHash (tag 0, default 0, 4.1 KIP-1101)
    # and CreationTimeMs (tag 1, default -1, KIP-1282)
    key = i16(3) + nstr("grp")
    value = i16(0) + i32(7) + tags((0, i64(0x1234_5678_9ABC)), (1, i64(T)))
    _check_offsets(3, {"groupId": "grp"},
                   {"epoch": 7, "metadataHash": 0x1234_5678_9ABC, "creationTimeMs": T},
                   key, value, '{"type":"3","data":{"groupId":"grp"}}',
                   '{"epoch":7,"metadataHash":20015998343868,"creationTimeMs":1700000000000}')


def test_consumer_group_metadata_value_4_1_hash_only_and_4_0_shape() -> None:
    key = i16(3) + nstr("grp")
    # what a 4.1 broker writes: the hash, no creation time (its default, not printed)
    hashed = i16(0) + i32(7) + tags((0, i64(-5)))
    assert offsets.encode_record(3, {"groupId": "grp"}, {"epoch": 7, "metadataHash": -5})[1] \
        == hashed
    assert offsets.decode_record(key, hashed)[1] == payload('{"epoch":7,"metadataHash":-5}')
    # a 4.0 record (no tags) reads, every tagged field at its default and not printed
    plain = i16(0) + i32(7) + NO_TAGS
    assert offsets.decode_record(key, plain)[1] == payload('{"epoch":7}')
    rec = offsets.decode_record_obj(key, plain)["value"]
    assert rec == {"epoch": 7, "metadataHash": 0, "creationTimeMs": -1}
    # a tag that carries the default value is read, and (as Kafka's converter) not printed
    explicit = i16(0) + i32(7) + tags((0, i64(0)), (1, i64(-1)))
    assert offsets.decode_record(key, explicit)[1] == payload('{"epoch":7}')


def test_consumer_group_target_assignment_metadata_assignment_timestamp() -> None:
    key = i16(6) + nstr("grp")
    value = i16(0) + i32(3) + tags((0, i64(T + 5)))
    _check_offsets(6, {"groupId": "grp"}, {"assignmentEpoch": 3, "assignmentTimestamp": T + 5},
                   key, value, '{"type":"6","data":{"groupId":"grp"}}',
                   '{"assignmentEpoch":3,"assignmentTimestamp":1700000000005}')


def _topic_partitions(topic: str, parts: list[int], epochs_tag: bytes | None = None) -> bytes:
    return uuid(topic) + ints(parts) + (NO_TAGS if epochs_tag is None else tags((0, epochs_tag)))


def test_consumer_group_current_member_assignment_epochs() -> None:
    # TopicPartitions (a common struct) gains the tagged AssignmentEpochs (KIP-1251): nullable,
    # "default": null in the JSON (the JSON null: the empty array), so [] is not printed and
    # null is
    key = i16(8) + nstr("grp") + nstr("m-1")
    value = (i16(0) + i32(5) + i32(4) + i8(0)
             + carr([_topic_partitions(U1, [0, 1], ints([5, 3]))])
             + carr([_topic_partitions(U2, [2])])
             + NO_TAGS)
    _check_offsets(
        8, {"groupId": "grp", "memberId": "m-1"},
        {"memberEpoch": 5, "previousMemberEpoch": 4, "state": 0,
         "assignedPartitions": [{"topicId": U1, "partitions": [0, 1], "assignmentEpochs": [5, 3]}],
         "partitionsPendingRevocation": [{"topicId": U2, "partitions": [2]}]},
        key, value, '{"type":"8","data":{"groupId":"grp","memberId":"m-1"}}',
        '{"memberEpoch":5,"previousMemberEpoch":4,"state":0,"assignedPartitions":[{"topicId":'
        '"AAAAAAAAAAAAAAAAAAAAAQ","partitions":[0,1],"assignmentEpochs":[5,3]}],'
        '"partitionsPendingRevocation":[{"topicId":"Uj5wn_FqTXirEASvVZRY1w","partitions":[2]}]}')
    empty = i16(0) + i32(5) + i32(4) + i8(0) + carr([_topic_partitions(U1, [0], ints([]))]) \
        + carr([]) + NO_TAGS
    assert offsets.decode_record(key, empty)[1] == payload(
        '{"memberEpoch":5,"previousMemberEpoch":4,"state":0,"assignedPartitions":[{"topicId":'
        '"AAAAAAAAAAAAAAAAAAAAAQ","partitions":[0]}],"partitionsPendingRevocation":[]}')
    null = i16(0) + i32(5) + i32(4) + i8(0) + carr([_topic_partitions(U1, [0], b"\x00")]) \
        + carr([]) + NO_TAGS
    assert offsets.decode_record(key, null)[1] == payload(
        '{"memberEpoch":5,"previousMemberEpoch":4,"state":0,"assignedPartitions":[{"topicId":'
        '"AAAAAAAAAAAAAAAAAAAAAQ","partitions":[0],"assignmentEpochs":null}],'
        '"partitionsPendingRevocation":[]}')
    assert offsets.encode_record(8, {"groupId": "grp", "memberId": "m-1"}, {
        "memberEpoch": 5, "previousMemberEpoch": 4, "state": 0,
        "assignedPartitions": [{"topicId": U1, "partitions": [0], "assignmentEpochs": None}],
        "partitionsPendingRevocation": []})[1] == null


def test_share_group_current_member_assignment_has_no_assignment_epochs() -> None:
    # the 4.0 tables shared TopicPartitions between record types 8 and 14; 14 did not change
    key = i16(14) + nstr("group-id") + nstr("member-id")
    value = i16(0) + i32(1) + i32(0) + i8(0) + carr([uuid(U1) + ints([0, 1]) + NO_TAGS]) \
        + NO_TAGS
    _check_offsets(
        14, {"groupId": "group-id", "memberId": "member-id"},
        {"memberEpoch": 1, "previousMemberEpoch": 0, "state": 0,
         "assignedPartitions": [{"topicId": U1, "partitions": [0, 1]}]},
        key, value, '{"type":"14","data":{"groupId":"group-id","memberId":"member-id"}}',
        '{"memberEpoch":1,"previousMemberEpoch":0,"state":0,"assignedPartitions":'
        '[{"topicId":"AAAAAAAAAAAAAAAAAAAAAQ","partitions":[0,1]}]}')
    # an AssignmentEpochs-like tag 0 inside the struct is an unknown tag here: skipped
    tagged = i16(0) + i32(1) + i32(0) + i8(0) + carr([uuid(U1) + ints([0, 1])
                                                     + tags((0, ints([1, 1])))]) + NO_TAGS
    assert offsets.decode_record(key, tagged) == offsets.decode_record(key, value)


# --------------------------------------------------------------------------------------------
# Share groups: 4.1's record 11, with 4.0's still read (tests/test_decoders_share_layouts.py
# has the rest of the two shapes)
# --------------------------------------------------------------------------------------------

def test_share_group_metadata_value_4_1_shape_and_4_0_read() -> None:
    key = i16(11) + nstr("group-id")
    _check_offsets(11, {"groupId": "group-id"}, {"epoch": 1, "metadataHash": 9}, key,
                   i16(0) + i32(1) + i64(9) + NO_TAGS,
                   '{"type":"11","data":{"groupId":"group-id"}}', '{"epoch":1,"metadataHash":9}')
    assert offsets.decode_record(key, i16(0) + i32(1) + NO_TAGS)[1] == payload('{"epoch":1}')


# --------------------------------------------------------------------------------------------
# Streams groups (KIP-1071): every record type, 17 and 19-24
# --------------------------------------------------------------------------------------------

def _task_ids(sub: str, parts: list[int], epochs: list[int] | None = None) -> bytes:
    return cstr(sub) + ints(parts) + (NO_TAGS if epochs is None else tags((0, ints(epochs))))


STREAMS = {
    "metadata": (
        17, {"groupId": "app"}, i16(17) + nstr("app"),
        {"epoch": 3, "metadataHash": -7, "validatedTopologyEpoch": 2},
        i16(0) + i32(3) + i64(-7) + tags((0, i32(2))),
        '{"epoch":3,"metadataHash":-7,"validatedTopologyEpoch":2}'),
    "metadata_no_tags": (
        17, {"groupId": "app"}, i16(17) + nstr("app"),
        {"epoch": 3, "metadataHash": 99},
        i16(0) + i32(3) + i64(99) + NO_TAGS,
        '{"epoch":3,"metadataHash":99}'),
    "member_metadata": (
        19, {"groupId": "app", "memberId": "m-1"}, i16(19) + nstr("app") + nstr("m-1"),
        {"instanceId": None, "rackId": "r1", "clientId": "c", "clientHost": "/127.0.0.1",
         "rebalanceTimeoutMs": 30000, "topologyEpoch": 1, "processId": "p-1",
         "userEndpoint": {"host": "h", "port": 8080},
         "clientTags": [{"key": "zone", "value": "a"}]},
        i16(0) + cstr(None) + cstr("r1") + cstr("c") + cstr("/127.0.0.1") + i32(30000) + i32(1)
        + cstr("p-1") + i8(1) + cstr("h") + u16(8080) + NO_TAGS + carr([kv("zone", "a")])
        + NO_TAGS,
        '{"instanceId":null,"rackId":"r1","clientId":"c","clientHost":"/127.0.0.1",'
        '"rebalanceTimeoutMs":30000,"topologyEpoch":1,"processId":"p-1",'
        '"userEndpoint":{"host":"h","port":8080},"clientTags":[{"key":"zone","value":"a"}]}'),
    "member_metadata_no_endpoint": (
        19, {"groupId": "app", "memberId": "m-2"}, i16(19) + nstr("app") + nstr("m-2"),
        {"instanceId": "i", "rackId": None, "clientId": "c", "clientHost": "h",
         "rebalanceTimeoutMs": -1, "topologyEpoch": 0, "processId": "p", "userEndpoint": None,
         "clientTags": []},
        i16(0) + cstr("i") + cstr(None) + cstr("c") + cstr("h") + i32(-1) + i32(0) + cstr("p")
        + i8(-1) + carr([]) + NO_TAGS,
        '{"instanceId":"i","rackId":null,"clientId":"c","clientHost":"h",'
        '"rebalanceTimeoutMs":-1,"topologyEpoch":0,"processId":"p","userEndpoint":null,'
        '"clientTags":[]}'),
    "target_assignment_metadata": (
        20, {"groupId": "app"}, i16(20) + nstr("app"),
        {"assignmentEpoch": 4},
        i16(0) + i32(4) + NO_TAGS,
        '{"assignmentEpoch":4}'),
    "target_assignment_member": (
        21, {"groupId": "app", "memberId": "m-1"}, i16(21) + nstr("app") + nstr("m-1"),
        {"activeTasks": [{"subtopologyId": "0", "partitions": [0, 1]}], "standbyTasks": [],
         "warmupTasks": [{"subtopologyId": "1", "partitions": [2]}]},
        i16(0) + carr([_task_ids("0", [0, 1])]) + carr([]) + carr([_task_ids("1", [2])])
        + NO_TAGS,
        '{"activeTasks":[{"subtopologyId":"0","partitions":[0,1]}],"standbyTasks":[],'
        '"warmupTasks":[{"subtopologyId":"1","partitions":[2]}]}'),
    "current_member_assignment": (
        22, {"groupId": "app", "memberId": "m-1"}, i16(22) + nstr("app") + nstr("m-1"),
        {"memberEpoch": 5, "previousMemberEpoch": 4, "state": 0,
         "activeTasks": [{"subtopologyId": "0", "partitions": [0, 1]}],
         "standbyTasks": [], "warmupTasks": [],
         "activeTasksPendingRevocation": [{"subtopologyId": "1", "partitions": [3]}],
         "standbyTasksPendingRevocation": [], "warmupTasksPendingRevocation": []},
        i16(0) + i32(5) + i32(4) + i8(0) + carr([_task_ids("0", [0, 1])]) + carr([])
        + carr([]) + carr([_task_ids("1", [3])]) + carr([]) + carr([]) + NO_TAGS,
        '{"memberEpoch":5,"previousMemberEpoch":4,"state":0,"activeTasks":[{"subtopologyId":'
        '"0","partitions":[0,1]}],"standbyTasks":[],"warmupTasks":[],'
        '"activeTasksPendingRevocation":[{"subtopologyId":"1","partitions":[3]}],'
        '"standbyTasksPendingRevocation":[],"warmupTasksPendingRevocation":[]}'),
    "topology": (
        23, {"groupId": "app"}, i16(23) + nstr("app"),
        {"epoch": 1, "subtopologies": [{
            "subtopologyId": "0", "sourceTopics": ["in"], "sourceTopicRegex": [],
            "stateChangelogTopics": [{"name": "app-store-changelog", "partitions": 0,
                                      "replicationFactor": 0, "topicConfigs": [
                                          {"key": "cleanup.policy", "value": "compact"}]}],
            "repartitionSinkTopics": ["app-rep"], "repartitionSourceTopics": [],
            "copartitionGroups": [{"sourceTopics": [0], "sourceTopicRegex": [],
                                   "repartitionSourceTopics": []}]}]},
        i16(0) + i32(1) + carr([
            cstr("0") + carr(["in"], cstr) + carr([])
            + carr([cstr("app-store-changelog") + i32(0) + i16(0)
                    + carr([kv("cleanup.policy", "compact")]) + NO_TAGS])
            + carr(["app-rep"], cstr) + carr([])
            + carr([carr([0], i16) + carr([]) + carr([]) + NO_TAGS])
            + NO_TAGS]) + NO_TAGS,
        '{"epoch":1,"subtopologies":[{"subtopologyId":"0","sourceTopics":["in"],'
        '"sourceTopicRegex":[],"stateChangelogTopics":[{"name":"app-store-changelog",'
        '"partitions":0,"replicationFactor":0,"topicConfigs":[{"key":"cleanup.policy",'
        '"value":"compact"}]}],"repartitionSinkTopics":["app-rep"],'
        '"repartitionSourceTopics":[],"copartitionGroups":[{"sourceTopics":[0],'
        '"sourceTopicRegex":[],"repartitionSourceTopics":[]}]}]}'),
    "resolved_topic_ids": (
        24, {"groupId": "app"}, i16(24) + nstr("app"),
        {"assignmentEpoch": 2, "resolvedTopicIdsBySubtopology": [
            {"subtopologyId": "0", "topicIds": [U1, U2]}]},
        i16(0) + i32(2) + carr([cstr("0") + carr([uuid(U1), uuid(U2)]) + NO_TAGS]) + NO_TAGS,
        '{"assignmentEpoch":2,"resolvedTopicIdsBySubtopology":[{"subtopologyId":"0",'
        '"topicIds":["AAAAAAAAAAAAAAAAAAAAAQ","Uj5wn_FqTXirEASvVZRY1w"]}]}'),
}


@pytest.mark.parametrize("case", sorted(STREAMS))
def test_streams_group_records(case: str) -> None:
    t, key_obj, key_raw, value_obj, value_raw, text = STREAMS[case]
    key_text = f'{{"type":"{t}","data":{json.dumps(key_obj, separators=(",", ":"))}}}'
    _check_offsets(t, key_obj, value_obj, key_raw, value_raw, key_text, text)
    rec = offsets.decode_record_obj(key_raw, value_raw)
    assert rec["key_version"] == 0             # "coordinator-key": version 0, type = apiKey
    assert rec["key_name"].startswith("StreamsGroup") and rec["key_name"].endswith("Key")
    assert rec["value_name"] == rec["key_name"][:-3] + "Value"


def test_every_streams_record_type_is_known() -> None:
    assert {STREAMS[c][0] for c in STREAMS} == {17, 19, 20, 21, 22, 23, 24}
    assert {t for t, s in _schemas.GROUP_KEYS.items() if s["name"].startswith("StreamsGroup")} \
        == {17, 19, 20, 21, 22, 23, 24}
    # 18, the pre-4.1 StreamsGroupPartitionMetadata, and a type beyond 24 stay unknown
    for t in (18, 25):
        assert offsets.format_for_dump(i16(t) + nstr("app"), None, 9) == (
            f"Unknown record type {t} at offset 9, skipping.", None)


def test_streams_group_metadata_value_defaults_are_not_printed() -> None:
    key = i16(17) + nstr("app")
    value = i16(0) + i32(3) + i64(0) + tags((0, i32(-1)))     # the tag at its default
    assert offsets.decode_record(key, value)[1] == payload('{"epoch":3,"metadataHash":0}')


def test_tags_not_transcribed_are_skipped_not_guessed() -> None:
    """Tagged fields of versions whose JSON was not found (the share/streams KIP-1263
    timestamps, after 4.2): read past, as an older Kafka reader does."""
    for key, value, text in [
        (i16(17) + nstr("app"), i16(0) + i32(3) + i64(0) + tags((2, carr([kv("k", "v")]))),
         '{"epoch":3,"metadataHash":0}'),
        (i16(20) + nstr("app"), i16(0) + i32(4) + tags((0, i64(T))), '{"assignmentEpoch":4}'),
        (i16(12) + nstr("app"), i16(0) + i32(4) + tags((0, i64(T))), '{"assignmentEpoch":4}'),
    ]:
        assert offsets.decode_record(key, value)[1] == payload(text)


def test_dump_segments_offsets_decoder_prints_the_new_records(tmp_path, monkeypatch,
                                                               capsys) -> None:
    """``kafkalog dump-segments --offsets-decoder`` on a 4.1+ ``__consumer_offsets`` segment."""
    recs = [Record(i16(3) + nstr("grp"), i16(0) + i32(7) + tags((0, i64(42))), T)]
    for case in ("metadata", "topology", "current_member_assignment"):
        _, _, k, _, v, _ = STREAMS[case]
        recs.append(Record(k, v, T))
    recs.append(Record(i16(22) + nstr("app") + nstr("m-1"), None, T))
    d = tmp_path / "__consumer_offsets-0"
    d.mkdir()
    (d / "00000000000000000000.log").write_bytes(encode_batch(recs))
    monkeypatch.chdir(d)
    capsys.readouterr()
    rc = main(["dump-segments", "--files", "00000000000000000000.log", "--offsets-decoder"])
    out, err = capsys.readouterr()
    assert rc == 0 and err == ""
    lines = [ln for ln in out.splitlines() if ln.startswith("| ")]
    assert len(lines) == 5
    assert lines[0].endswith(' key: {"type":"3","data":{"groupId":"grp"}} payload: '
                             '{"version":"0","data":{"epoch":7,"metadataHash":42}}')
    for line, case in zip(lines[1:4], ("metadata", "topology", "current_member_assignment"),
                          strict=True):
        t, key_obj, _, _, _, text = STREAMS[case]
        assert line.endswith(" payload: " + payload(text)), case
        assert f' key: {{"type":"{t}","data":' in line
    assert lines[4].endswith(
        ' key: {"type":"22","data":{"groupId":"app","memberId":"m-1"}} payload: <DELETE>')


# --------------------------------------------------------------------------------------------
# __transaction_state: TransactionLogValue v1's tagged fields
# --------------------------------------------------------------------------------------------

def _txn_value(prev: int | None, nxt: int | None, ctv: int | None) -> bytes:
    fields = [(tag, data) for tag, data in ((0, prev and i64(prev)), (1, nxt and i64(nxt)),
                                            (2, ctv and i16(ctv))) if data is not None]
    return (i16(1) + i64(7) + i16(1) + i32(60000) + i8(4)
            + carr([cstr("a") + ints([0, 1]) + NO_TAGS]) + i64(5) + i64(3) + tags(*fields))


def test_transaction_log_value_v1_tagged_fields() -> None:
    # TransactionLogValue.json: PreviousProducerId (tag 0), NextProducerId (tag 1) default -1,
    # ClientTransactionVersion (tag 2) default 0; written (and printed) when not the default
    key = i16(0) + nstr("tx-1")
    value = _txn_value(6, 8, 2)
    obj = {"producerId": 7, "previousProducerId": 6, "nextProducerId": 8, "producerEpoch": 1,
           "transactionTimeoutMs": 60000, "transactionStatus": 4,
           "transactionPartitions": [{"topic": "a", "partitionIds": [0, 1]}],
           "transactionLastUpdateTimestampMs": 5, "transactionStartTimestampMs": 3,
           "clientTransactionVersion": 2}
    assert transaction_log.encode_record({"transactionalId": "tx-1"}, obj, 1) == (key, value)
    assert transaction_log.decode_record(key, value) == (
        '{"type":"0","data":{"transactionalId":"tx-1"}}',
        payload('{"producerId":7,"previousProducerId":6,"nextProducerId":8,"producerEpoch":1,'
                '"transactionTimeoutMs":60000,"transactionStatus":4,"transactionPartitions":'
                '[{"topic":"a","partitionIds":[0,1]}],"transactionLastUpdateTimestampMs":5,'
                '"transactionStartTimestampMs":3,"clientTransactionVersion":2}', 1))
    # only the next producer id (a 4.0 TV2 epoch bump): the others are their defaults
    only_next = _txn_value(None, 8, None)
    assert transaction_log.decode_record(key, only_next)[1] == payload(
        '{"producerId":7,"nextProducerId":8,"producerEpoch":1,"transactionTimeoutMs":60000,'
        '"transactionStatus":4,"transactionPartitions":[{"topic":"a","partitionIds":[0,1]}],'
        '"transactionLastUpdateTimestampMs":5,"transactionStartTimestampMs":3}', 1)
    # tags carrying the defaults are not printed
    assert transaction_log.decode_record(key, _txn_value(-1, -1, None))[1] == \
        transaction_log.decode_record(key, _txn_value(None, None, None))[1]


# --------------------------------------------------------------------------------------------
# Every table compiles; existing fixtures still decode (and re-encode) byte for byte
# --------------------------------------------------------------------------------------------

_TABLES = {
    "GROUP_KEYS": _schemas.GROUP_KEYS, "GROUP_VALUES": _schemas.GROUP_VALUES,
    "TXN_KEYS": _schemas.TXN_KEYS, "TXN_VALUES": _schemas.TXN_VALUES,
    "METADATA": _schemas.METADATA, "SHARE_KEYS": _schemas.SHARE_KEYS,
    "SHARE_VALUES": _schemas.SHARE_VALUES, "REMOTE_LOG_METADATA": _schemas.REMOTE_LOG_METADATA,
    "CLIENT": _schemas.CLIENT,
}
_EVERY = [(table, k) for table, schemas in _TABLES.items() for k in schemas]


@pytest.mark.parametrize("table, key", _EVERY, ids=[f"{t}:{k}" for t, k in _EVERY])
def test_every_schema_compiles_and_writes_its_defaults(table: str, key) -> None:
    spec = _TABLES[table][key]
    s = message.compile_schema(spec)
    lo, hi = s.versions
    for v in range(lo, hi + 1):
        raw = message.write(s, {}, v)                   # every field at its default
        obj = message.read(s, raw, v)
        assert message.write(s, obj, v) == raw
        text = message.json_text(s, obj, v)
        assert text == message.dumps(message.to_json(s, obj, v))
        json.loads(text)
    if table.startswith(("GROUP", "TXN", "SHARE")):
        other = table.replace("KEYS", "VALUES") if table.endswith("KEYS") else \
            table.replace("VALUES", "KEYS")
        names = {spec["name"], _TABLES[other][key]["name"]}
        assert {n.removesuffix("Key").removesuffix("Value") for n in names} == \
            {spec["name"].removesuffix("Key").removesuffix("Value")}


def test_record_type_sets() -> None:
    assert set(_schemas.GROUP_KEYS) == set(_schemas.GROUP_VALUES) == \
        set(range(17)) | {17, 19, 20, 21, 22, 23, 24}
    assert set(_schemas.SHARE_KEYS) == set(_schemas.SHARE_VALUES) == {0, 1}
    assert set(_schemas.TXN_KEYS) == set(_schemas.TXN_VALUES) == {0}
    # the KRaft records: no new api key or version was found in Kafka's newest files
    assert sorted(_schemas.METADATA) == [0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 14, 15, 16, 17,
                                         18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29]
    for k in _schemas.METADATA:
        assert cluster_metadata.record_type_name(k)


def _fixture_records(shared: Path, pattern: str) -> list[tuple[int, bytes | None, bytes | None]]:
    with warnings.catch_warnings():      # kafka-python's package import warns on 3.11
        warnings.simplefilter("ignore", DeprecationWarning)
        from kafka.record import MemoryRecords
    out = []
    for log in sorted(shared.glob(pattern)):
        mr = MemoryRecords(log.read_bytes())
        while (batch := mr.next_batch()) is not None:
            out.extend((r.offset, r.key, r.value) for r in batch)
    return out


_NEW_NAMES = ("metadataHash", "creationTimeMs", "assignmentEpochs", "assignmentTimestamp")


def test_real_consumer_offsets_fixtures_still_decode_identically(shared_fixtures: Path) -> None:
    records = _fixture_records(shared_fixtures, "kafka-real/*/__consumer_offsets-*/*.log")
    assert len(records) > 1000
    for offset, key, value in records:
        k, v = offsets.format_for_dump(key, value, offset)
        assert not k.startswith(("Error at", "Unknown record type")), (offset, k)
        assert not any(f'"{n}"' in (v or "") for n in _NEW_NAMES)
        rec = offsets.decode_record_obj(key, value)
        kk, vv = offsets.encode_record(rec["type"], rec["key"], rec["value"], rec["version"])
        assert (kk, vv) == (key, value)                 # nothing read that is not there


def test_real_cluster_metadata_fixtures_still_decode(shared_fixtures: Path) -> None:
    records = _fixture_records(shared_fixtures, "kafka-real/*/__cluster_metadata-*/*.log")
    assert records
    for offset, key, value in records:
        if value is None or value[:1] != b"\x01":
            continue                                    # (control records)
        _, text = cluster_metadata.format_for_dump(key, value, offset)
        assert not text.startswith("Error at"), (offset, text)


# --------------------------------------------------------------------------------------------
# ConsumerGroupMemberMetadataValue.ClassicMemberMetadata: "default": null (the JSON null) is
# the empty struct in Kafka's generator (FieldSpec.fieldDefault), so a consumer-protocol member
# (null) is written with the tag holding the null marker, and printed as null
# --------------------------------------------------------------------------------------------

def test_consumer_protocol_member_is_written_with_a_null_classic_member_metadata() -> None:
    from kafkalog.groups.modern import records as cgr
    from kafkalog.groups.modern.consumer_group import (
        ClassicMemberMetadata,
        ConsumerGroupMember,
    )

    member = ConsumerGroupMember("m-1")
    key, value = cgr.member_subscription_record("app", member)
    assert value.endswith(tags((0, i8(-1))))        # tag 0, one byte: the null marker
    assert offsets.decode_record(key, value)[1].endswith(',"classicMemberMetadata":null}}')
    # a classic member: the struct itself
    classic = ConsumerGroupMember("m-2", classic_member_metadata=ClassicMemberMetadata(
        45_000, (("range", b"\x00\x01"),)))
    ckey, cvalue = cgr.member_subscription_record("app", classic)
    assert offsets.decode_record(ckey, cvalue)[1].endswith(
        ',"classicMemberMetadata":{"sessionTimeoutMs":45000,"supportedProtocols":'
        '[{"name":"range","metadata":"AAE="}]}}}')
    # without the tag: Kafka's empty struct, not printed (it is the default); kafkalog's
    # earlier files wrote consumer-protocol members so and are still replayed as such
    bare = value[:-len(tags((0, i8(-1))))] + NO_TAGS
    assert '"classicMemberMetadata"' not in offsets.decode_record(key, bare)[1]
    groups: dict = {}
    for k, v in (cgr.group_epoch_record("app", 1), (key, bare), (ckey, cvalue)):
        cgr.replay(groups, offsets.CODEC.decode(k, v))
    assert groups["app"].members["m-1"].classic_member_metadata is None
    assert groups["app"].members["m-2"].classic_member_metadata == classic.classic_member_metadata
