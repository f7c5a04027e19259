"""The KRaft ``__cluster_metadata`` decoder against the real LDI-POC (Kafka 3.7) and CodeCrafters
logs, values checked against facts found elsewhere in the data directory (meta.properties,
partition.metadata, quorum-state, partition directories), Kafka's frame/garbage errors, and
schema-driven round trips for every record type.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalog.decoders import cluster_metadata as cm
from kafkalog.decoders import message
from kafkalog.errors import CorruptRecordError, KafkaLogError

from .conftest import shared_fixture_path


def _records(path: Path) -> list[tuple[Any, Any]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from kafka.record import MemoryRecords
    mr = MemoryRecords(path.read_bytes())
    out = []
    while (batch := mr.next_batch()) is not None:
        for r in batch:
            out.append((batch, r))
    return out


def _props(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        if "=" in line and not line.startswith("#"):
            k, v = line.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def _ldi() -> Path:
    return shared_fixture_path("kafka-real", "LDI-POC")


def _decoded(path: Path) -> list[tuple[int, dict[str, Any], str]]:
    out = []
    for batch, r in _records(path):
        if batch.is_control_batch:
            continue
        _, text = cm.format_for_dump(r.key, r.value, r.offset)
        assert not text.startswith("Error at"), (r.offset, text)
        out.append((r.offset, cm.decode_record_obj(r.key, r.value), text))
    return out


@pytest.fixture(scope="module")
def ldi_records() -> list[tuple[int, dict[str, Any], str]]:
    return _decoded(_ldi() / "__cluster_metadata-0" / "00000000000000000000.log")


def test_ldi_metadata_log_decodes_with_no_error(ldi_records) -> None:
    assert len(ldi_records) == 4928            # 4929 records, one is the LEADER_CHANGE control
    counts: dict[str, int] = {}
    for _, rec, text in ldi_records:
        counts[rec["type"]] = counts.get(rec["type"], 0) + 1
        assert json.loads(text)["type"] == rec["type"]      # the printed line is valid JSON
    assert counts["NO_OP_RECORD"] == 4801
    assert counts["TOPIC_RECORD"] == 5 and counts["PARTITION_RECORD"] == 54
    assert counts["REGISTER_BROKER_RECORD"] == 2 and counts["FEATURE_LEVEL_RECORD"] == 1


def test_codecrafters_log_decodes_with_no_error() -> None:
    log = shared_fixture_path("kafka-real", "kafka-gleam-codecrafters",
                              "00000000000000000000.log")
    recs = _decoded(log)
    assert [r["type"] for _, r, _ in recs] == [
        "FEATURE_LEVEL_RECORD", "TOPIC_RECORD", "PARTITION_RECORD", "PARTITION_RECORD"]
    assert recs[0][2] == ('{"type":"FEATURE_LEVEL_RECORD","version":0,"data":'
                          '{"name":"metadata.version","featureLevel":20}}')
    topic = recs[1][1]["data"]
    assert all(r["data"]["topicId"] == topic["topicId"] for _, r, _ in recs[2:])
    assert [r["data"]["partitionId"] for _, r, _ in recs[2:]] == [0, 1]


def test_ldi_topics_match_partition_dirs_and_partition_metadata(ldi_records) -> None:
    root = _ldi()
    topics = {r["data"]["name"]: r["data"]["topicId"] for _, r, _ in ldi_records
              if r["type"] == "TOPIC_RECORD"}
    for d in root.iterdir():
        if not d.is_dir() or d.name == "__cluster_metadata-0":
            continue
        name = d.name.rsplit("-", 1)[0]
        assert name in topics, name
        # partition.metadata holds the topic id the broker got from the TopicRecord.
        meta = _props_colon(d / "partition.metadata")
        assert meta["topic_id"] == topics[name]
    partitions = {}
    for _, r, _ in ldi_records:
        if r["type"] == "PARTITION_RECORD":
            partitions.setdefault(r["data"]["topicId"], []).append(r["data"]["partitionId"])
    assert sorted(partitions[topics["__consumer_offsets"]]) == list(range(50))
    assert partitions[topics["TestTopicPatient"]] == [0]


def _props_colon(path: Path) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in path.read_text().splitlines() if ": " in line)


def test_ldi_broker_registration_matches_meta_properties(ldi_records) -> None:
    props = _props(_ldi() / "meta.properties")
    regs = [(o, r) for o, r, _ in ldi_records if r["type"] == "REGISTER_BROKER_RECORD"]
    o, reg = regs[-1]
    d = reg["data"]
    assert reg["version"] == 3
    assert d["brokerId"] == int(props["node.id"]) == 1
    assert d["logDirs"] == [props["directory.id"]]          # the log dir's Uuid
    assert d["endPoints"] == [{"name": "PLAINTEXT", "host": "kafka", "port": 9092,
                               "securityProtocol": 0}]
    assert d["rack"] is None and d["fenced"] is True
    text = dict((off, t) for off, _, t in ldi_records)[o]
    assert text == (
        '{"type":"REGISTER_BROKER_RECORD","version":3,"data":{"brokerId":1,'
        '"isMigratingZkBroker":false,"incarnationId":"ta5R4VtUQvagltuIzSD9hg",'
        '"brokerEpoch":8,"endPoints":[{"name":"PLAINTEXT","host":"kafka","port":9092,'
        '"securityProtocol":0}],"features":[{"name":"metadata.version",'
        '"minSupportedVersion":1,"maxSupportedVersion":19}],"rack":null,"fenced":true,'
        '"inControlledShutdown":false,"logDirs":["XHhkr4tkSsD900pOQ8pPfg"]}}')
    # PartitionRecord v1 places every replica in that same directory.
    dirs = {tuple(r["data"]["directories"]) for _, r, _ in ldi_records
            if r["type"] == "PARTITION_RECORD"}
    assert dirs == {(props["directory.id"],)}


def test_ldi_leader_change_matches_quorum_state() -> None:
    quorum = json.loads((_ldi() / "__cluster_metadata-0" / "quorum-state").read_text())
    batch, rec = _records(_ldi() / "__cluster_metadata-0" / "00000000000000000000.log")[0]
    assert batch.is_control_batch
    msg = cm.decode_leader_change(rec.value)
    assert msg["leaderId"] == quorum["leaderId"] == 1
    assert [v["voterId"] for v in msg["voters"]] == [v["voterId"]
                                                     for v in quorum["currentVoters"]]
    assert batch.leader_epoch == quorum["leaderEpoch"]


def test_tagged_fields_print_only_when_not_default(ldi_records) -> None:
    texts = {o: t for o, _, t in ldi_records}
    assert texts[9] == ('{"type":"BROKER_REGISTRATION_CHANGE_RECORD","version":0,"data":'
                        '{"brokerId":1,"brokerEpoch":8,"fenced":-1}}')
    assert texts[4872] == ('{"type":"PARTITION_CHANGE_RECORD","version":1,"data":'
                           '{"partitionId":0,"topicId":"_g4of-T3Rq-jr09kDxtjFA","leader":-1}}')
    assert texts[4] == '{"type":"END_TRANSACTION_RECORD","version":0,"data":{}}'


# --------------------------------------------------------------------------------------------
# Errors, exactly as Kafka words them
# --------------------------------------------------------------------------------------------

def _topic_record() -> bytes:
    return cm.encode_record("TopicRecord", {"name": "t", "topicId": "AAAAAAAAAAAAAAAAAAAAAQ"})


@pytest.mark.parametrize("value, expected", [
    (b"\x00\x02\x00", "Could not deserialize metadata record with frame version 0. Note that "
     "upgrades from the preview release of KRaft in 2.8 to newer versions are not supported."),
    (b"\x02\x02\x00", "Could not deserialize metadata record due to unknown frame version "
     "2(only frame version 1 is supported)"),
    (b"\x01\x63\x00", "org.apache.kafka.common.errors.UnsupportedVersionException: Unknown "
     "metadata id 99"),
    (b"\x01\x02\x05\x00", "Failed to deserialize record with type 2"),
    (b"\x01\x02\x00\x02", "Failed to deserialize record with type 2"),
    (b"\x01\xff\xff\x03", "Value for type was too large."),
    (b"", "Error while reading frame version"),
    (None, "null"),
])
def test_errors_print_like_kafka(value, expected) -> None:
    assert cm.format_for_dump(None, value, 12) == (None, f"Error at 12, skipping. {expected}")
    with pytest.raises(CorruptRecordError):
        cm.decode_record(None, value)


def test_trailing_bytes_are_garbage() -> None:
    assert cm.format_for_dump(None, _topic_record() + b"xy", 3) == (
        None, "Error at 3, skipping. Found 2 byte(s) of garbage after 2")


def test_every_truncation_raises() -> None:
    raw = _topic_record()
    for n in range(len(raw)):
        with pytest.raises(CorruptRecordError):
            cm.decode_record_obj(None, raw[:n])


def test_record_type_names() -> None:
    assert cm.record_type_name(0) == "REGISTER_BROKER_RECORD"
    assert cm.record_type_name(20) == "NO_OP_RECORD"
    assert cm.record_type_name(21) == "ZK_MIGRATION_STATE_RECORD"
    assert cm.record_type_name(17) == "BROKER_REGISTRATION_CHANGE_RECORD"


# --------------------------------------------------------------------------------------------
# Round trips for every schema and version; fuzzing
# --------------------------------------------------------------------------------------------

def _value_strategy(f: message.Field, v: int, depth: int = 0) -> st.SearchStrategy:
    def elem() -> st.SearchStrategy:
        t = f.type
        if f.struct is not None:
            return _struct_strategy(f.struct, v, depth + 1)
        return {
            "bool": st.booleans(),
            "int8": st.integers(-128, 127),
            "int16": st.integers(-(2**15), 2**15 - 1),
            "uint16": st.integers(0, 2**16 - 1),
            "int32": st.integers(-(2**31), 2**31 - 1),
            "uint32": st.integers(0, 2**32 - 1),
            "int64": st.integers(-(2**63), 2**63 - 1),
            "float64": st.floats(allow_nan=False),
            "uuid": st.binary(min_size=16, max_size=16).map(message.uuid_to_str),
            "string": st.text(max_size=8),
            "bytes": st.binary(max_size=8),
        }[t]
    base = st.lists(elem(), max_size=3) if f.is_array else elem()
    if f.is_nullable(v):
        base = st.one_of(st.none(), base)
    return base


def _struct_strategy(s: message.Struct, v: int, depth: int = 0) -> st.SearchStrategy:
    return st.fixed_dictionaries({f.json_name: _value_strategy(f, v, depth)
                                  for f in s.fields if f.present(v)})


_SCHEMA_VERSIONS = [(k, v) for k, s in cm.SCHEMAS.items()
                    for v in range(s.versions[0], s.versions[1] + 1)]


@pytest.mark.parametrize("api_key, version", _SCHEMA_VERSIONS)
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_round_trip_every_metadata_record(api_key, version, data) -> None:
    schema = cm.SCHEMAS[api_key]
    obj = data.draw(_struct_strategy(schema, version))
    raw = cm.encode_record(api_key, obj, version)
    rec = cm.decode_record_obj(None, raw)
    assert rec["api_key"] == api_key and rec["version"] == version
    assert rec["data"] == {**message._struct_default(schema), **obj} | {
        f.json_name: f.default for f in schema.fields if not f.present(version)}
    # the printed JSON parses, and names the fields the JsonConverter prints for this version
    _, text = cm.decode_record(None, raw)
    printed = json.loads(text)
    assert printed["type"] == cm.record_type_name(api_key)
    for f in schema.fields:
        shown = f.json_name in printed["data"]
        if not f.present(version):
            assert not shown
        elif not f.is_tagged(version):
            assert shown
        else:
            assert shown == (rec["data"][f.json_name] != f.default)


@settings(max_examples=200, deadline=None)
@given(value=st.one_of(st.binary(max_size=60),
                       st.binary(max_size=60).map(lambda b: b"\x01" + b)))
def test_garbage_raises_only_kafkalog_errors(value) -> None:
    try:
        cm.decode_record(None, value)
    except KafkaLogError:
        pass
    _, text = cm.format_for_dump(None, value, 0)
    assert isinstance(text, str)
