"""The schema-driven generated-message codec (``kafkalog.decoders.message``): wire encoding
details, the JsonConverter/Jackson output rules, and round trips for every coordinator schema.
"""

from __future__ import annotations

import json
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalog.decoders import _schemas, message, offsets, share_group_state, transaction_log
from kafkalog.decoders.message import MessageDecodeError
from kafkalog.errors import CorruptRecordError

from .test_decoders_cluster_metadata import _struct_strategy


def test_uuid_strings_are_kafka_base64url_without_padding() -> None:
    assert message.uuid_to_str(bytes(15) + b"\x01") == "AAAAAAAAAAAAAAAAAAAAAQ"
    raw = bytes(range(240, 256))
    assert message.uuid_to_str(raw) == "8PHy8_T19vf4-fr7_P3-_w"       # '_' and '-', no '='
    assert message.uuid_from_str("8PHy8_T19vf4-fr7_P3-_w") == raw
    with pytest.raises(ValueError):
        message.uuid_from_str("AAAA")


@pytest.mark.parametrize("value, text", [
    (1.0, "1.0"), (0.5, "0.5"), (-2.25, "-2.25"), (100.0, "100.0"), (1e7, "1.0E7"),
    (1.5e-4, "1.5E-4"), (0.001, "0.001"), (123456.789, "123456.789"), (1e21, "1.0E21"),
    (9999999.0, "9999999.0"), (0.0, "0.0"), (-0.0, "-0.0"), (1.7976931348623157e308,
                                                             "1.7976931348623157E308"),
])
def test_java_double_to_string(value, text) -> None:
    assert message.java_double(value) == text


def test_jackson_string_escapes_and_layout() -> None:
    node = {"a": 'q"\\/\b\f\n\r\t\x01\x1f\x7fé€', "b": [1, None, True, False], "c": b"\x00\xff",
            "d": float("nan"), "e": {}}
    assert message.dumps(node) == (
        '{"a":"q\\"\\\\/\\b\\f\\n\\r\\t\\u0001\\u001F\x7fé€","b":[1,null,true,false],'
        '"c":"AP8=","d":"NaN","e":{}}')


def test_string_length_prefixes() -> None:
    schema = message.compile_schema(_schemas.TXN_KEYS[0])       # non-flexible string
    assert message.write(schema, {"transactionalId": "ab"}, 0) == b"\x00\x02ab"
    flex = message.compile_schema(_schemas.METADATA[16])        # flexible: compact string
    assert message.write(flex, {"name": "ab"}, 0) == b"\x03ab\x00"


def test_null_in_non_nullable_field() -> None:
    schema = message.compile_schema(_schemas.TXN_KEYS[0])
    with pytest.raises(MessageDecodeError, match="non-nullable field transactionalId"):
        message.read(schema, b"\xff\xff", 0)
    with pytest.raises(ValueError):
        message.write(schema, {"transactionalId": None}, 0)


def test_nullable_array_and_struct_markers() -> None:
    txn = message.compile_schema(_schemas.TXN_VALUES[0])
    obj = {"producerId": 1, "producerEpoch": 2, "transactionTimeoutMs": 3,
           "transactionStatus": 0, "transactionPartitions": None,
           "transactionLastUpdateTimestampMs": 4, "transactionStartTimestampMs": 5}
    raw = message.write(txn, obj, 0)
    assert raw[8 + 2 + 4 + 1:8 + 2 + 4 + 1 + 4] == b"\xff\xff\xff\xff"   # int32 -1 = null
    assert message.read(txn, raw, 0)["transactionPartitions"] is None
    member = message.compile_schema(_schemas.GROUP_VALUES[5])
    base = {"instanceId": None, "rackId": None, "clientId": "c", "clientHost": "h",
            "subscribedTopicNames": [], "subscribedTopicRegex": None,
            "rebalanceTimeoutMs": 1, "serverAssignor": None}
    plain = message.write(member, base, 0)
    assert plain.endswith(b"\x00")                         # no tagged fields
    classic = dict(base, classicMemberMetadata={"sessionTimeoutMs": 7, "supportedProtocols": [
        {"name": "range", "metadata": b"\x01"}]})
    raw = message.write(member, classic, 0)
    # tagged section: 1 field, tag 0, size, then the int8 presence marker 1 and the struct
    tail = raw[len(plain) - 1:]
    assert tail[:2] == b"\x01\x00" and tail[3] == 1
    assert message.read(member, raw, 0) == classic
    printed = json.loads(message.dumps(message.to_json(member, classic, 0)))
    assert printed["classicMemberMetadata"]["supportedProtocols"] == [
        {"name": "range", "metadata": "AQ=="}]
    assert "classicMemberMetadata" not in message.to_json(member, base, 0)


def test_unknown_tagged_fields_are_skipped_and_bad_sizes_rejected() -> None:
    schema = message.compile_schema(_schemas.METADATA[20])      # NoOpRecord: no fields
    assert message.read(schema, b"\x01\x05\x02ab", 0) == {}
    with pytest.raises(MessageDecodeError):
        message.read(schema, b"\x01\x05\x09ab", 0)              # size beyond the buffer
    fence = message.compile_schema(_schemas.METADATA[17])      # Fenced is tag 0, int8
    with pytest.raises(MessageDecodeError, match="expected 2"):
        message.read(fence, b"\x00\x00\x00\x01" + bytes(8) + b"\x01\x00\x02\x01\x00", 0)


def test_array_length_larger_than_the_buffer() -> None:
    schema = message.compile_schema(_schemas.METADATA[3])
    raw = struct.pack(">i", 0) + bytes(16) + b"\x7f"            # 126 replicas claimed
    with pytest.raises(MessageDecodeError, match="Tried to allocate a collection of size 126"):
        message.read(schema, raw, 0)


def test_overlong_varint() -> None:
    schema = message.compile_schema(_schemas.METADATA[20])
    with pytest.raises(MessageDecodeError) as ei:
        message.read(schema, b"\xff\xff\xff\xff\xff\x01", 0)
    assert ei.value.kafka_message.startswith("Varint is too long")


def _versions(schema: dict) -> range:
    lo, _, hi = schema["validVersions"].partition("-")
    return range(int(lo), int(hi or lo) + 1)


_CODECS = {
    "offsets": (offsets, _schemas.GROUP_KEYS, _schemas.GROUP_VALUES),
    "txn": (transaction_log, _schemas.TXN_KEYS, _schemas.TXN_VALUES),
    "share": (share_group_state, _schemas.SHARE_KEYS, _schemas.SHARE_VALUES),
}
_COORDINATOR = [(which, t, v) for which, (_, _, values) in _CODECS.items()
                for t, s in values.items() for v in _versions(s)]


@pytest.mark.parametrize("which, record_type, version", _COORDINATOR)
@settings(max_examples=12, deadline=None)
@given(data=st.data())
def test_round_trip_every_coordinator_record(which, record_type, version, data) -> None:
    mod, keys, values = _CODECS[which]
    kschema = message.compile_schema(keys[record_type])
    kversion = mod.CODEC.key_version(record_type)
    key = data.draw(_struct_strategy(kschema, kversion))
    vschema = message.compile_schema(values[record_type])
    value = data.draw(_struct_strategy(vschema, version))
    k, v = mod.CODEC.encode(record_type, key, value, version)
    rec = mod.decode_record_obj(k, v)
    assert rec["type"] == record_type and rec["version"] == version
    assert rec["key"] == key
    # decoding then re-encoding gives the same bytes; the JSON of both sides agrees
    assert message.write(vschema, rec["value"], version) == v[2:]
    assert message.to_json(vschema, rec["value"], version) == message.to_json(
        vschema, value, version)
    key_text, payload = mod.decode_record(k, v)
    assert json.loads(key_text) == {"type": str(record_type),
                                    "data": json.loads(message.dumps(
                                        message.to_json(kschema, key, kversion)))}
    assert json.loads(payload)["version"] == str(version)
    for n in range(2, len(v)):      # every truncation of the value is reported, never crashes
        try:
            mod.decode_record(k, v[:n])
        except CorruptRecordError:
            pass


# --------------------------------------------------------------------------------------------
# Generated readers against the interpreter (the reference)
# --------------------------------------------------------------------------------------------

def _all_schema_versions() -> list[tuple[str, message.Struct, int]]:
    tables = {"group_keys": _schemas.GROUP_KEYS, "group_values": _schemas.GROUP_VALUES,
              "txn_keys": _schemas.TXN_KEYS, "txn_values": _schemas.TXN_VALUES,
              "metadata": _schemas.METADATA, "share_keys": _schemas.SHARE_KEYS,
              "share_values": _schemas.SHARE_VALUES,
              "remote_log_metadata": _schemas.REMOTE_LOG_METADATA}
    out = []
    for table, schemas in [*tables.items(), ("client", _schemas.CLIENT)]:
        for spec in schemas.values():
            s = message.compile_schema(spec)
            for v in range(s.versions[0], s.versions[1] + 1):
                out.append((f"{table}:{s.name}:v{v}", s, v))
    return out


_ALL = _all_schema_versions()


def _nan_free(x: object) -> object:
    """``x`` with every float NaN replaced by a marker: a float64 field whose bytes are a NaN
    (random or flipped bytes) reads as NaN on both paths, and NaN != NaN."""
    if isinstance(x, float) and x != x:
        return "<NaN>"
    if isinstance(x, dict):
        return {k: _nan_free(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(_nan_free(v) for v in x)
    return x


def _interpreted(s: message.Struct, buf: bytes, v: int, pos: int) -> tuple:
    r = message._Reader(buf, pos)
    try:
        return ("ok", _nan_free(message._read_struct(r, s, v, "")), r.pos)
    except (MessageDecodeError, struct.error, IndexError, ValueError, OverflowError):
        return ("refused",)


def _generated(s: message.Struct, buf: bytes, v: int, pos: int) -> tuple:
    try:
        obj, end = message._reader_for(s, v)(buf, pos, len(buf))
    except Exception:  # noqa: BLE001 - any refusal counts
        return ("refused",)
    return ("ok", _nan_free(obj), end)


def _mutations(raw: bytes) -> st.SearchStrategy:
    n = len(raw)
    return st.one_of(
        st.just(raw),
        st.integers(0, max(n - 1, 0)).map(lambda k: raw[:k]),                      # truncated
        st.tuples(st.integers(0, max(n - 1, 0)), st.integers(1, 255)).map(         # a flipped byte
            lambda t: raw[:t[0]] + bytes([raw[t[0]] ^ t[1]]) + raw[t[0] + 1:] if n else raw),
        st.binary(min_size=1, max_size=8).map(lambda tail: raw + tail),             # trailing
        st.tuples(st.integers(0, n), st.binary(min_size=1, max_size=4)).map(        # inserted
            lambda t: raw[:t[0]] + t[1] + raw[t[0]:]),
    )


@pytest.mark.parametrize("name, schema, version", _ALL, ids=[a[0] for a in _ALL])
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_generated_reader_equals_the_interpreter(name, schema, version, data) -> None:
    """Valid encodings, then the same bytes truncated, flipped, extended: the generated reader
    accepts exactly what the interpreter accepts, with the same object and end position."""
    obj = data.draw(_struct_strategy(schema, version))
    raw = message.write(schema, obj, version)
    assert _generated(schema, raw, version, 0) == _interpreted(schema, raw, version, 0)
    got = _generated(schema, raw, version, 0)
    assert got[0] == "ok" and got[2] == len(raw)
    assert {k: got[1][k] for k in obj if not isinstance(obj[k], (list, dict))} == \
        {k: v for k, v in obj.items() if not isinstance(v, (list, dict))}
    mutated = data.draw(_mutations(raw))
    pos = data.draw(st.integers(0, 2))
    buf = bytes(pos) + mutated
    assert _generated(schema, buf, version, pos) == _interpreted(schema, buf, version, pos)
    # and read_prefix, which tries the generated reader first, answers as the interpreter
    expected = _interpreted(schema, buf, version, pos)
    if expected[0] == "ok":
        got_prefix = message.read_prefix(schema, buf, version, pos)
        assert (_nan_free(got_prefix[0]), *got_prefix[1:]) == expected[1:]
    else:
        with pytest.raises(MessageDecodeError):
            message.read_prefix(schema, buf, version, pos)


@settings(max_examples=300, deadline=None)
@given(index=st.integers(0, len(_ALL) - 1), buf=st.binary(max_size=48))
def test_generated_reader_on_random_bytes(index, buf) -> None:
    _, schema, version = _ALL[index]
    assert _generated(schema, buf, version, 0) == _interpreted(schema, buf, version, 0)


def test_unsupported_version_refused_by_both() -> None:
    s = message.compile_schema(_schemas.REMOTE_LOG_METADATA[2])
    assert _generated(s, b"\x00" * 64, 1, 0) == _interpreted(s, b"\x00" * 64, 1, 0) == \
        ("refused",)
    with pytest.raises(MessageDecodeError, match="Can't read version 1"):
        message.read_prefix(s, b"\x00" * 64, 1)


def _jackson_string_reference(s: str) -> str:
    short = {0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r", 0x22: '\\"',
             0x5C: "\\\\"}
    return '"' + "".join(short.get(ord(c)) or (f"\\u{ord(c):04X}" if ord(c) < 0x20 else c)
                         for c in s) + '"'


@settings(max_examples=500, deadline=None)
@given(s=st.text(alphabet=st.one_of(st.characters(), st.sampled_from('"\\\x00\x1f\n\t')),
                 max_size=20))
def test_jackson_string_fast_path_equals_the_reference(s) -> None:
    assert message._jstr(s) == _jackson_string_reference(s)


@pytest.mark.parametrize("name, schema, version", _ALL, ids=[a[0] for a in _ALL])
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_json_text_equals_dumps_of_to_json(name, schema, version, data) -> None:
    """The generated JSON writer against the tree and Jackson printer (the reference): objects
    as drawn (fields left out take defaults) and as decoded back from their bytes."""
    obj = data.draw(_struct_strategy(schema, version))
    for o in (obj, message.read(schema, message.write(schema, obj, version), version)):
        text = message.json_text(schema, o, version)
        assert text == message.dumps(message.to_json(schema, o, version))
        assert message.dumps({"data": text}) == '{"data":' + text + "}"  # copied as it is


def test_json_text_refuses_what_to_json_refuses() -> None:
    s = message.compile_schema(_schemas.REMOTE_LOG_METADATA[2])
    with pytest.raises(ValueError, match="Can't write version 1"):
        message.to_json(s, {}, 1)
    with pytest.raises(ValueError, match="Can't write version 1"):
        message.json_text(s, {}, 1)


_COORDINATOR_TABLES = [("offsets", offsets.CODEC), ("transaction_log", transaction_log.CODEC),
                       ("share_group_state", share_group_state.CODEC)]


@pytest.mark.parametrize("which, codec", _COORDINATOR_TABLES, ids=[t[0] for t in
                                                                    _COORDINATOR_TABLES])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_coordinator_texts_equal_the_tree_printer(which, codec, data) -> None:
    """``CoordinatorCodec.format`` writes its wrappers and the generated texts directly: the
    same strings as ``dumps`` of the ``to_json`` trees (the reference), tombstones included."""
    record_type = data.draw(st.sampled_from(sorted(set(codec.keys) & set(codec.values))))
    key = data.draw(_struct_strategy(codec.keys[record_type], codec.key_version(record_type)))
    vschema = codec.values[record_type]
    version = data.draw(st.integers(vschema.versions[0], vschema.versions[1]))
    value = data.draw(st.one_of(st.none(), _struct_strategy(vschema, version)))
    kb, vb = codec.encode(record_type, key, value, version)
    rec = codec.decode(kb, vb)
    key_text, payload = codec.format(rec)
    assert key_text == message.dumps({"type": str(rec["type"]), "data": codec.key_json(rec)})
    expected = "<DELETE>" if vb is None else message.dumps(
        {"version": str(rec["version"]), "data": codec.value_json(rec)})
    assert payload == expected
