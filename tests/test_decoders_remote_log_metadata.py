"""Tiered storage's ``__remote_log_metadata`` decoder (``--remote-log-metadata-decoder``).

Peer bytes: five values Kafka 4.0's own ``RemoteLogMetadataSerde`` wrote
(``tests/golden/rlmm/``) decode to the objects that were serialized and re-encode to the same
bytes. Printed text: the strings Kafka's tests pin
(``DumpLogSegmentsTest.testDumpRemoteLogMetadata*`` and ``RemoteLogMetadataFormatterTest``,
apache/kafka), ported with the same records, through a log we write and the CLI. Errors:
each check of the serde and of the Java constructors, with Kafka's message. Round trips of
every message with hypothesis; garbage never raises anything but our errors.
"""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalog import Log, Record
from kafkalog.cli import main
from kafkalog.decoders import api_message_frame, message
from kafkalog.decoders import remote_log_metadata as rlmm
from kafkalog.errors import KafkaLogError

from .test_decoders_cluster_metadata import _struct_strategy

JVM = json.loads((Path(__file__).parent / "golden" / "rlmm" / "jvm_serde_4.0.0.json").read_text())
TOPIC_ID = message.uuid_to_str((0xCA).to_bytes(16, "big"))  # new Uuid(0, 0xCA)
SEGMENT_ID = message.uuid_to_str((0xFE).to_bytes(16, "big"))
TIP = {"name": "orders", "id": TOPIC_ID, "partition": 7}
SEG = {"topicIdPartition": TIP, "id": SEGMENT_ID}


def _segment(custom: bytes | None, txn_empty: bool) -> dict:
    return {"remoteLogSegmentId": SEG, "startOffset": 0, "endOffset": 99, "brokerId": 42,
            "maxTimestampMs": 100, "eventTimestampMs": 123,
            "segmentLeaderEpochs": [{"leaderEpoch": 0, "offset": 0},
                                    {"leaderEpoch": 1, "offset": 50}],
            "segmentSizeInBytes": 4096, "customMetadata": custom, "remoteLogSegmentState": 0,
            "txnIndexEmpty": txn_empty}


#: what Capture.java serialized (tests/golden/rlmm/README.md), as our dicts
JVM_OBJECTS = {
    "add_with_custom": (0, _segment(b"\x01\x02\x03\x04", False)),
    "add_no_custom": (0, _segment(None, False)),
    "add_txn_empty": (0, _segment(None, True)),
    "update_finish": (1, {"remoteLogSegmentId": SEG, "brokerId": 42, "eventTimestampMs": 456,
                          "customMetadata": None, "remoteLogSegmentState": 1}),
    "partition_delete_marked": (2, {"topicIdPartition": TIP, "brokerId": 42,
                                    "eventTimestampMs": 789, "remotePartitionDeleteState": 0}),
}

_SEGMENT_TEXT = (
    "RemoteLogSegmentMetadata{remoteLogSegmentId=RemoteLogSegmentId{topicIdPartition="
    f"{TOPIC_ID}:orders-7, id={SEGMENT_ID}}}, startOffset=0, endOffset=99, brokerId=42, "
    "maxTimestampMs=100, eventTimestampMs=123, segmentLeaderEpochs={0=0, 1=50}, "
    "segmentSizeInBytes=4096, customMetadata=%s, state=COPY_SEGMENT_STARTED%s}")
JVM_TEXT = {
    "add_with_custom": _SEGMENT_TEXT % ("Optional[CustomMetadata{4 bytes}]", ", txnIdxEmpty=false"),
    "add_no_custom": _SEGMENT_TEXT % ("Optional.empty", ", txnIdxEmpty=false"),
    "add_txn_empty": _SEGMENT_TEXT % ("Optional.empty", ", txnIdxEmpty=true"),
    "update_finish": (
        "RemoteLogSegmentMetadataUpdate{remoteLogSegmentId=RemoteLogSegmentId{topicIdPartition="
        f"{TOPIC_ID}:orders-7, id={SEGMENT_ID}}}, customMetadata=Optional.empty, "
        "state=COPY_SEGMENT_FINISHED, eventTimestampMs=456, brokerId=42}"),
    "partition_delete_marked": (
        f"RemotePartitionDeleteMetadata{{topicPartition={TOPIC_ID}:orders-7, "
        "state=DELETE_PARTITION_MARKED, eventTimestampMs=789, brokerId=42}"),
}


# --------------------------------------------------------------------------------------------
# Kafka's own bytes
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", sorted(JVM))
def test_jvm_bytes_decode_to_what_was_serialized(case) -> None:
    api_key, data = JVM_OBJECTS[case]
    rec = rlmm.decode_record_obj(None, bytes.fromhex(JVM[case]))
    assert rec["api_key"] == api_key and rec["version"] == 0
    assert rec["data"] == data


@pytest.mark.parametrize("case", sorted(JVM))
def test_we_encode_the_jvm_bytes(case) -> None:
    api_key, data = JVM_OBJECTS[case]
    assert rlmm.encode_record(api_key, data).hex() == JVM[case]


@pytest.mark.parametrize("case", sorted(JVM))
def test_jvm_bytes_print_as_kafka(case) -> None:
    raw = bytes.fromhex(JVM[case])
    assert rlmm.decode_record(None, raw) == (None, JVM_TEXT[case])
    # 3.9 reads the 4.0 tagged field as an unknown tag and has no txnIdxEmpty to print
    text_3_9 = JVM_TEXT[case].replace(", txnIdxEmpty=false", "").replace(", txnIdxEmpty=true", "")
    assert rlmm.decode_record(None, raw, txn_idx_empty=False) == (None, text_3_9)


def test_formatter_test_string() -> None:
    """``RemoteLogMetadataFormatterTest``'s expected value (4.0 onwards: ``txnIdxEmpty=true``;
    before, the same text without it): epochs {0=0, 1=20, 2=80}, 10 bytes of custom metadata."""
    topic_id, segment_id = "AAAAAAAAAAAAAAAAAAAAAQ", "AAAAAAAAAAAAAAAAAAAAAg"
    raw = rlmm.encode_record("RemoteLogSegmentMetadataRecord", {
        "remoteLogSegmentId": {"topicIdPartition": {"name": "foo", "id": topic_id,
                                                    "partition": 0}, "id": segment_id},
        "startOffset": 0, "endOffset": 100, "brokerId": 1, "maxTimestampMs": -1,
        "eventTimestampMs": 123, "segmentSizeInBytes": 1024, "customMetadata": bytes(10),
        "segmentLeaderEpochs": [{"leaderEpoch": e, "offset": o} for e, o in
                                ((2, 80), (0, 0), (1, 20))],
        "remoteLogSegmentState": 0, "txnIndexEmpty": True})
    expected = (
        f"RemoteLogSegmentMetadata{{remoteLogSegmentId=RemoteLogSegmentId{{topicIdPartition="
        f"{topic_id}:foo-0, id={segment_id}}}, startOffset=0, endOffset=100, brokerId=1, "
        "maxTimestampMs=-1, eventTimestampMs=123, segmentLeaderEpochs={0=0, 1=20, 2=80}, "
        "segmentSizeInBytes=1024, customMetadata=Optional[CustomMetadata{10 bytes}], "
        "state=COPY_SEGMENT_STARTED, txnIdxEmpty=true}")
    assert rlmm.decode_record(None, raw)[1] == expected
    assert rlmm.decode_record(None, raw, txn_idx_empty=False)[1] == \
        expected.replace(", txnIdxEmpty=true", "")


# --------------------------------------------------------------------------------------------
# DumpLogSegmentsTest.testDumpRemoteLogMetadata*, through a log and the CLI
# --------------------------------------------------------------------------------------------

_DELETE = {"topicIdPartition": {"name": "foo", "id": TOPIC_ID, "partition": 0}, "brokerId": 0,
           "eventTimestampMs": 0, "remotePartitionDeleteState": 0}
_UPDATE = {"remoteLogSegmentId": {"topicIdPartition": _DELETE["topicIdPartition"],
                                  "id": SEGMENT_ID},
           "brokerId": 0, "eventTimestampMs": 0, "customMetadata": bytes([0, 1, 2, 3]),
           "remoteLogSegmentState": 1}
EXPECTED_DELETE = (f"RemotePartitionDeleteMetadata{{topicPartition={TOPIC_ID}:foo-0, "
                   "state=DELETE_PARTITION_MARKED, eventTimestampMs=0, brokerId=0}")
EXPECTED_UPDATE = (f"RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId=RemoteLogSegmentId{{"
                   f"topicIdPartition={TOPIC_ID}:foo-0, id={SEGMENT_ID}}}, customMetadata="
                   "Optional[CustomMetadata{4 bytes}], state=COPY_SEGMENT_FINISHED, "
                   "eventTimestampMs=0, brokerId=0}")


def _dump(capsys, path: Path, *extra: str) -> str:
    capsys.readouterr()
    assert main(["dump-segments", "--remote-log-metadata-decoder", "--files", str(path),
                 *extra]) == 0
    return capsys.readouterr().out


def _write(log_dir: Path, *batches: list[bytes]) -> Path:
    with Log.open(log_dir) as log:
        for values in batches:
            log.append([Record(None, v, 0) for v in values])
    return log_dir / "00000000000000000000.log"


def test_dump_empty(tmp_path, capsys) -> None:
    out = _dump(capsys, _write(tmp_path / "rlmm-0"))
    assert out.count("baseOffset:") == 0 and out.count("payload:") == 0
    assert "Log starting offset: 0" in out


def test_dump_one_record_one_batch(tmp_path, capsys) -> None:
    out = _dump(capsys, _write(tmp_path / "rlmm-0", [rlmm.encode_record(2, _DELETE)]))
    assert out.count("baseOffset:") == 1 and out.count("payload:") == 1
    assert "Log starting offset: 0" in out and EXPECTED_DELETE in out


def test_dump_multiple_records_and_batches(tmp_path, capsys) -> None:
    values = [rlmm.encode_record(1, _UPDATE), rlmm.encode_record(2, _DELETE)]
    out = _dump(capsys, _write(tmp_path / "one", values))
    assert out.count("baseOffset:") == 1 and out.count("payload:") == 2
    assert EXPECTED_UPDATE in out and EXPECTED_DELETE in out
    out = _dump(capsys, _write(tmp_path / "two", values, values))
    assert out.count("baseOffset:") == 2 and out.count("payload:") == 4
    assert out.count(EXPECTED_UPDATE) == 2 and out.count(EXPECTED_DELETE) == 2
    # no key for metadata records: the record line ends with the payload
    line = next(ln for ln in out.splitlines() if EXPECTED_UPDATE in ln)
    assert line.endswith(" headerKeys: [] payload: " + EXPECTED_UPDATE)


def test_dump_non_zero_starting_offset(tmp_path, capsys) -> None:
    value = rlmm.encode_record(2, _DELETE)
    with Log.open(tmp_path / "rlmm-0") as log:
        log.append([Record(None, value, 0)])
        log.roll()
        log.append([Record(None, value, 0)])
    out = _dump(capsys, tmp_path / "rlmm-0" / "00000000000000000001.log")
    assert out.count("baseOffset:") == 1 and out.count("payload:") == 1
    assert "Log starting offset: 1" in out and EXPECTED_DELETE in out


def test_dump_with_corruption(tmp_path, capsys) -> None:
    out = _dump(capsys, _write(tmp_path / "rlmm-0", [b"corrupted"]))
    assert out.count("payload:") == 1
    assert "payload: Error at offset 0, skipping. Could not deserialize metadata record" in out


def test_flag_by_release(tmp_path, capsys) -> None:
    """3.9 added the flag (KAFKA-16228); 4.0 prints txnIdxEmpty (KAFKA-16780)."""
    path = _write(tmp_path / "rlmm-0", [bytes.fromhex(JVM["add_txn_empty"])])
    capsys.readouterr()
    assert main(["dump-segments", "--remote-log-metadata-decoder", "--files", str(path),
                 "--kafka-version", "3.8"]) == 1
    assert "remote-log-metadata-decoder is not a recognized option" in capsys.readouterr().err
    assert "txnIdxEmpty" not in _dump(capsys, path, "--kafka-version", "3.9.1")
    for version in ("4.0", "4.2", "trunk"):
        assert "state=COPY_SEGMENT_STARTED, txnIdxEmpty=true}" in \
            _dump(capsys, path, "--kafka-version", version)


def test_json_output_carries_the_text_and_the_bytes(tmp_path, capsys) -> None:
    raw = bytes.fromhex(JVM["update_finish"])
    out = _dump(capsys, _write(tmp_path / "rlmm-0", [raw]), "--format", "json")
    rec = next(json.loads(ln) for ln in out.splitlines() if '"type":"record"' in ln)
    assert rec["decoded_payload"] == JVM_TEXT["update_finish"]
    assert rec["decoded_key"] is None


# --------------------------------------------------------------------------------------------
# Kafka's errors
# --------------------------------------------------------------------------------------------

_OK_SEGMENT = _segment(None, False)


@pytest.mark.parametrize("value, expected", [
    (b"corrupted", "Could not deserialize metadata record due to unknown frame version 99(only "
     "frame version 1 is supported)"),
    (b"\x00\x02\x00", "Could not deserialize metadata record with frame version 0. Note that "
     "upgrades from the preview release of KRaft in 2.8 to newer versions are not supported."),
    (b"\x01\x04\x00\x00", "org.apache.kafka.common.errors.UnsupportedVersionException: "
     "Unknown metadata id 4"),
    (b"\x01\x02\x01\x00", "Failed to deserialize record with type 2"),  # version 1: none
    (bytes.fromhex(JVM["partition_delete_marked"])[:-3], "Failed to deserialize record with "
     "type 2"),
    (bytes.fromhex(JVM["partition_delete_marked"]) + b"\x00\x00",
     "Found 2 byte(s) of garbage after 2"),
    (rlmm.encode_record(0, {**_OK_SEGMENT, "startOffset": -1}),
     "Unexpected start offset = -1. StartOffset for a remote segment cannot be negative"),
    (rlmm.encode_record(0, {**_OK_SEGMENT, "startOffset": 100}),
     "Unexpected end offset = 99. EndOffset for a remote segment cannot be less than "
     "startOffset = 100"),
    (rlmm.encode_record(0, {**_OK_SEGMENT, "segmentLeaderEpochs": []}),
     "segmentLeaderEpochs can not be null or empty"),
    # the offsets are checked before the state (the 8-argument constructor runs first)
    (rlmm.encode_record(0, {**_OK_SEGMENT, "segmentLeaderEpochs": [],
                            "remoteLogSegmentState": 4}),
     "segmentLeaderEpochs can not be null or empty"),
    (rlmm.encode_record(0, {**_OK_SEGMENT, "remoteLogSegmentState": 4}), "state can not be null"),
    (rlmm.encode_record(1, {**JVM_OBJECTS["update_finish"][1], "remoteLogSegmentState": -1}),
     "state can not be null"),
    (rlmm.encode_record(2, {**JVM_OBJECTS["partition_delete_marked"][1],
                            "remotePartitionDeleteState": 3}), "null"),
    # a snapshot checks its state first and has no offset checks
    (rlmm.encode_record(3, {"segmentId": SEGMENT_ID, "remoteLogSegmentState": 9}),
     "state can not be null"),
    (rlmm.encode_record(3, {"segmentId": SEGMENT_ID, "remoteLogSegmentState": 1,
                            "startOffset": 5, "endOffset": -7}),
     "segmentLeaderEpochs can not be null or empty"),
])  # fmt: skip
def test_errors_print_like_kafka(value, expected) -> None:
    assert rlmm.format_for_dump(None, value, 7) == \
        (None, f"Error at offset 7, skipping. {expected}")
    with pytest.raises(KafkaLogError):
        rlmm.decode_record(None, value)


def test_snapshot_text_and_repeated_epochs() -> None:
    """A repeated leader epoch keeps its last offset (the transform's ``HashMap.put``); keys
    print in signed order (``TreeMap``); empty custom metadata is still present."""
    raw = rlmm.encode_record(3, {
        "segmentId": SEGMENT_ID, "startOffset": 5, "endOffset": 4, "brokerId": 3,
        "maxTimestampMs": 9, "eventTimestampMs": 8, "segmentSizeInBytes": 77,
        "segmentLeaderEpochs": [{"leaderEpoch": 4, "offset": 1}, {"leaderEpoch": -2, "offset": 0},
                                {"leaderEpoch": 4, "offset": 3}],
        "customMetadata": b"", "remoteLogSegmentState": 2})
    assert rlmm.decode_record(None, raw)[1] == (
        f"RemoteLogSegmentMetadataSnapshot{{segmentId={SEGMENT_ID}, startOffset=5, endOffset=4, "
        "maxTimestampMs=9, segmentLeaderEpochs={-2=0, 4=3}, segmentSizeInBytes=77, "
        "customMetadata=Optional[CustomMetadata{0 bytes}], state=DELETE_SEGMENT_STARTED, "
        "txnIdxEmpty=false}")


def test_null_value() -> None:
    assert rlmm.format_for_dump(None, None, 3) == (None, "Error at offset 3, skipping. null")


# --------------------------------------------------------------------------------------------
# Round trips and garbage
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("api_key", sorted(rlmm.SCHEMAS))
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_round_trip_every_message(api_key, data) -> None:
    schema = rlmm.SCHEMAS[api_key]
    obj = data.draw(_struct_strategy(schema, 0))
    raw = rlmm.encode_record(api_key, obj)
    rec = rlmm.decode_record_obj(None, raw)
    assert rec["api_key"] == api_key and rec["data"] == obj
    # the frame is the KRaft one: frame version 1, api key, version 0
    assert api_message_frame.read(raw, rlmm.SCHEMAS, "x")[:2] == (api_key, 0)
    try:
        _, text = rlmm.decode_record(None, raw)
    except rlmm.RemoteLogMetadataError as e:
        assert rlmm.format_for_dump(None, raw, 1)[1] == f"Error at offset 1, skipping. " \
            f"{e.kafka_message}"
        return
    assert text.startswith(schema.name.removesuffix("Record") + "{")
    assert f"brokerId={obj['brokerId']}" in text or api_key == 3


@settings(max_examples=300, deadline=None)
@given(value=st.one_of(st.binary(max_size=80),
                       st.binary(max_size=80).map(lambda b: b"\x01" + b),
                       st.sampled_from(sorted(JVM.values())).map(bytes.fromhex).flatmap(
                           lambda raw: st.integers(0, len(raw) - 1).map(lambda n: raw[:n]))))
def test_garbage_raises_only_kafkalog_errors(value) -> None:
    try:
        rlmm.decode_record(None, value)
    except KafkaLogError:
        pass
    _, text = rlmm.format_for_dump(None, value, 0)
    assert isinstance(text, str)


def test_module_examples() -> None:
    import kafkalog.decoders.api_message_frame as frame_mod

    for mod in (rlmm, frame_mod):
        result = doctest.testmod(mod, raise_on_error=False, verbose=False)
        assert result.attempted > 0 and result.failed == 0, mod.__name__
