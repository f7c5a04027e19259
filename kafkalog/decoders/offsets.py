"""``__consumer_offsets`` records as Kafka's ``kafka-dump-log.sh --offsets-decoder`` prints them.

Kafka's group coordinator writes one record per fact (``GroupCoordinatorRecordSerde``): the key
is ``int16 record type`` + key message, the value ``int16 version`` + value message, or null (a
tombstone: the offset or group was deleted). Record types: 0 and 1 offset commits
(``OffsetCommitKey``/``OffsetCommitValue``), 2 classic group metadata (``GroupMetadataKey``/
``GroupMetadataValue`` with members), 3-8 and 16 the KIP-848 consumer-group records, 9-15 the
KIP-932 share-group records and 17 and 19-24 the KIP-1071 streams-group records (see
:mod:`kafkalog.decoders._schemas` for the Kafka files each one follows).

DumpLogSegments' ``OffsetsMessageParser`` prints the key as ``{"type":"<record type>","data":{…}}``
and the payload as ``{"version":"<value version>","data":{…}}`` (or ``<DELETE>``), the data being
the generated ``*JsonConverter`` output. For classic groups with protocol type ``consumer`` each
member's ``subscription`` and ``assignment`` bytes are replaced by the decoded
``ConsumerProtocolSubscription``/``ConsumerProtocolAssignment`` (kept as base64 when they do not
decode, as Kafka does).

Example
-------
>>> from kafkalog.decoders import offsets
>>> k, v = offsets.encode_record(1, {"group": "g", "topic": "t", "partition": 0},
...                              {"offset": 42, "metadata": "", "commitTimestamp": 5}, version=3)
>>> offsets.decode_record(k, v)
('{"type":"1","data":{"group":"g","topic":"t","partition":0}}', \
'{"version":"3","data":{"offset":42,"leaderEpoch":-1,"metadata":"","commitTimestamp":5}}')
>>> offsets.decode_record(k, None)[1]
'<DELETE>'
"""

from __future__ import annotations

import struct
from typing import Any

from ..errors import CorruptRecordError
from . import _schemas, jvm_order, message
from ._coordinator import (
    CoordinatorCodec,
    MissingKeyError,
    UnknownRecordTypeError,
    decode_for_text,
    dump_text,
    format_error,
)

__all__ = [
    "decode_record",
    "decode_record_obj",
    "encode_record",
    "format_for_dump",
    "format_legacy",
    "format_text",
    "TEXT_STYLES",
    "UnknownRecordTypeError",
    "MissingKeyError",
    "OFFSET_COMMIT_TYPES",
    "GROUP_METADATA_TYPE",
]

OFFSET_COMMIT_TYPES = (0, 1)
GROUP_METADATA_TYPE = 2
CONSUMER_PROTOCOL_TYPE = "consumer"       # ConsumerProtocol.PROTOCOL_TYPE

CODEC = CoordinatorCodec("__consumer_offsets", _schemas.GROUP_KEYS, _schemas.GROUP_VALUES,
                         _schemas.GROUP_VALUES_4_0)
_SUBSCRIPTION = message.compile_schema(_schemas.CLIENT["ConsumerProtocolSubscription"])
_ASSIGNMENT = message.compile_schema(_schemas.CLIENT["ConsumerProtocolAssignment"])


def decode_record_obj(key: bytes | None, value: bytes | None, *, prefer_older: bool = False
                      ) -> dict[str, Any]:
    """Decode a ``__consumer_offsets`` record into Python values.

    Returns ``{"type": int, "key_name": str, "key_version": int, "key": dict,
    "value_name": str|None, "version": int|None, "value": dict|None, "layout": str|None}``
    (``value`` None for a tombstone; ``layout`` ``"4.0"`` for a share-group record 11 or 15 in
    Kafka 4.0's shape, which ``prefer_older`` tries first). Field names are Kafka's camelCase
    JSON names; uuids are Kafka ``Uuid`` strings.

    Raises
    ------
    MissingKeyError
        ``key`` is None.
    UnknownRecordTypeError
        The key's record type is not a group-coordinator record type known here.
    kafkalog.errors.CorruptRecordError
        Truncated or malformed bytes, or an unsupported version (``MessageDecodeError``).
    """
    return CODEC.decode(key, value, prefer_older=prefer_older)


def _decode_embedded(schema: message.Struct, raw: bytes) -> dict[str, Any] | None:
    """Kafka's ``replace`` helper: int16 version + message, or None when it does not parse."""
    if raw is None or len(raw) < 2:
        return None
    version = struct.unpack_from(">h", raw, 0)[0]
    try:
        obj = message.read_prefix(schema, raw, version, 2)[0]
        return message.to_json(schema, obj, version)
    except (CorruptRecordError, ValueError):
        return None


def _value_json(rec: dict[str, Any]) -> Any:
    if rec["type"] != GROUP_METADATA_TYPE or \
            rec["value"].get("protocolType") != CONSUMER_PROTOCOL_TYPE:
        # (the generated text; only a consumer group's members are rewritten below)
        return message.json_text(CODEC.value_schema(rec), rec["value"], rec["version"])
    data = CODEC.value_json(rec)  # a consumer group: its members' embedded protocol data
    for member in data.get("members") or []:
        for name, schema in (("subscription", _SUBSCRIPTION), ("assignment", _ASSIGNMENT)):
            if name in member:
                decoded = _decode_embedded(schema, member[name])
                if decoded is not None:
                    member[name] = decoded
    return data


def decode_record(key: bytes | None, value: bytes | None, *, prefer_older: bool = False
                  ) -> tuple[str | None, str | None]:
    """``(key text, payload text)`` exactly as DumpLogSegments' ``OffsetsMessageParser``.

    Raises the errors of :func:`decode_record_obj`; use :func:`format_for_dump` to get the
    text Kafka prints for them instead. ``prefer_older``: read the share-group records 11 and
    15 in Kafka 4.0's shape first (see :mod:`kafkalog.decoders._coordinator`).
    """
    return dump_text(CODEC, key, value, _value_json, prefer_older=prefer_older)


def format_for_dump(key: bytes | None, value: bytes | None, offset: int, *,
                    prefer_older: bool = False) -> tuple[str | None, str | None]:
    """What ``kafka-dump-log.sh --offsets-decoder`` prints for one record: as
    :func:`decode_record`, but a decode failure becomes the key text
    ``Error at offset <o>, skipping. <msg>`` (or ``Unknown record type <t> at offset <o>,
    skipping.``) with no payload. A missing key still raises :class:`MissingKeyError` (Kafka's
    tool stops on it)."""
    try:
        return decode_record(key, value, prefer_older=prefer_older)
    except MissingKeyError:
        raise
    except CorruptRecordError as e:
        return format_error(e, offset)


def encode_record(record_type: int, key: dict[str, Any], value: dict[str, Any] | None,
                  version: int | None = None, *, layout: str | None = None
                  ) -> tuple[bytes, bytes | None]:
    """Encode a record as the group coordinator writes it (``value`` None = tombstone).

    ``version`` defaults to the highest version of the value schema; ``layout="4.0"`` writes
    record 11 or 15 in Kafka 4.0's shape.
    """
    return CODEC.encode(record_type, key, value, version, layout=layout)


# --------------------------------------------------------------------------------------------
# The pre-JSON texts of Kafka 0.11-3.7
# --------------------------------------------------------------------------------------------

#: ``--offsets-decoder`` text styles (see :func:`format_text`).
TEXT_STYLES = ("0.11", "1.0", "1.1", "2.4.1", "3.5")


def _legacy_hex(raw: bytes) -> str:
    """Scala ``"%X".format(BigInt(1, bytes))``: upper-case hex without leading zeros."""
    return "" if not raw else format(int.from_bytes(raw, "big"), "X")


def _legacy_assignment(raw: bytes) -> tuple[list[str], bytes | None]:
    """``ConsumerProtocol.deserializeAssignment``: versions above the newest parse as the newest;
    returns the ``TopicPartition.toString`` list and the user data."""
    if raw is None or len(raw) < 2:
        raise CorruptRecordError("assignment shorter than its int16 version")
    version = struct.unpack_from(">h", raw, 0)[0]
    if version < 0:
        raise CorruptRecordError(f"Unsupported assignment version: {version}")
    version = min(version, _ASSIGNMENT.versions[1])  # type: ignore[index]
    obj = message.read_prefix(_ASSIGNMENT, raw, version, 2)[0]
    parts = [f"{tp['topic']}-{p}" for tp in obj["assignedPartitions"] for p in tp["partitions"]]
    return parts, obj["userData"]


def _members_in_map_order(members: list[dict[str, Any]], scala: str) -> list[dict[str, Any]]:
    """``group.allMemberMetadata``: the values of a Scala ``mutable.HashMap`` keyed by member id,
    filled in record order (``GroupMetadata.add``), in that map's iteration order."""
    by_id = {m["memberId"]: m for m in members}
    order = jvm_order.scala_hash_map_order(
        [m["memberId"] for m in members], scala, jvm_order.java_string_hash
    )
    return [by_id[k] for k in order]


def _assignment_text(v: dict[str, Any], scala: str) -> str:
    """The ``{member=[t-0, t-1][:USERDATA],...}`` string of the pre-JSON group metadata text."""
    protocol_type = v["protocolType"] or ""
    out = []
    for m in _members_in_map_order(v["members"], scala):
        if protocol_type == CONSUMER_PROTOCOL_TYPE:
            parts, user_data = _legacy_assignment(m["assignment"])
            text = f"{m['memberId']}=[{', '.join(parts)}]"  # java.util.List.toString
            ud = _legacy_hex(user_data) if user_data is not None else ""
            out.append(text + (f":{ud}" if ud else ""))
        else:
            out.append(f"{m['memberId']}={_legacy_hex(m['assignment'])}")
    return "{" + ",".join(out) + "}"


def _kafka_json_1_0(obj: dict[str, Any]) -> str:
    """``kafka.utils.Json.encode`` of 1.0: strings in quotes *without escaping*, null as null."""

    def enc(x: Any) -> str:
        if x is None:
            return "null"
        if isinstance(x, bool):
            return "true" if x else "false"
        if isinstance(x, str):
            return '"' + x + '"'
        if isinstance(x, int):
            return str(x)
        return "{" + ",".join(f"{enc(k)}:{enc(w)}" for k, w in x.items()) + "}"

    return enc(obj)


def format_text(
    key: bytes | None, value: bytes | None, *, style: str = "3.5", scala: str = "2.13"
) -> tuple[str | None, str | None]:
    """``(key, payload)`` as ``kafka-dump-log.sh --offsets-decoder`` printed them before 3.8.

    ``style`` (``KafkaShape.offsets_decoder_style``):

    * ``0.11`` (0.11.0.x, the tool's own ``OffsetsMessageParser``): ``offset::G:T:P`` /
      ``O`` or ``O:METADATA``; ``metadata::G`` / ``PROTOCOLTYPE:PROTOCOL:GENERATION:{m=[t-0]}``;
      a tombstone prints nothing (``(None, None)``);
    * ``1.0`` (1.0.x) and ``1.1`` (1.1.0-2.4.0): group metadata as JSON, ``{"metadata":"G"}`` /
      ``{"protocolType":...,"protocol":...,"generationId":...,"assignment":"{...}"}``
      (``Json.encode`` did not escape strings in 1.0; Jackson from 1.1);
    * ``2.4.1`` (2.4.1-3.4, ``GroupMetadataManager.formatRecordKeyAndValue``):
      ``offset_commit::group=G,partition=T-P`` / ``offset=O[,metadata=M]``,
      ``group_metadata::group=G`` / the JSON above, ``<DELETE>`` for tombstones;
    * ``3.5`` (3.5-3.7): as 2.4.1, an unknown key gives ``unknown::version=V`` and no payload.

    Members print in the iteration order of the Scala ``mutable.HashMap`` that held them
    (``scala``: the Kafka build's Scala version, see :mod:`kafkalog.decoders.jvm_order`).

    Raises :class:`MissingKeyError` (null key), :class:`UnknownRecordTypeError` (a record type
    the style cannot print; the tool threw) and ``CorruptRecordError`` for bytes that do not
    decode.
    """
    if style not in TEXT_STYLES:
        raise ValueError(f"unknown offsets text style {style!r}")
    tool = style in ("0.11", "1.0", "1.1")
    if tool and value is None:
        return None, None  # `if (!record.hasValue) (None, None)` before the key is looked at
    if key is None:
        raise MissingKeyError("__consumer_offsets")
    rec = decode_for_text(CODEC, key, value, unknown_text=style == "3.5")
    if isinstance(rec, tuple):
        return rec
    if rec["type"] not in (*OFFSET_COMMIT_TYPES, GROUP_METADATA_TYPE):
        if style == "3.5":
            return f"unknown::version={rec['type']}", None
        raise UnknownRecordTypeError(rec["type"])
    k, v = rec["key"], rec["value"]
    if rec["type"] in OFFSET_COMMIT_TYPES:
        if tool:
            key_text = f"offset::{k['group']}:{k['topic']}:{k['partition']}"
            meta = v["metadata"]
            return key_text, str(v["offset"]) + (f":{meta}" if meta else "")
        key_text = f"offset_commit::group={k['group']},partition={k['topic']}-{k['partition']}"
        if v is None:
            return key_text, "<DELETE>"
        meta = v["metadata"]
        return key_text, f"offset={v['offset']}" + (f",metadata={meta}" if meta else "")
    group = k["group"]
    if style == "0.11":
        assignment = _assignment_text(v, scala)
        protocol = "null" if v["protocol"] is None else v["protocol"]  # Scala's "$null"
        return f"metadata::{group}", (
            f"{v['protocolType'] or ''}:{protocol}:{v['generation']}:{assignment}"
        )
    if tool:
        key_text = (_kafka_json_1_0 if style == "1.0" else message.dumps)({"metadata": group})
    else:
        key_text = f"group_metadata::group={group}"
        if v is None:
            return key_text, "<DELETE>"
    payload = {
        "protocolType": v["protocolType"] or "",
        "protocol": v["protocol"],
        "generationId": v["generation"],
        "assignment": _assignment_text(v, scala),
    }
    return key_text, (_kafka_json_1_0 if style == "1.0" else message.dumps)(payload)


def format_legacy(key: bytes | None, value: bytes | None) -> tuple[str | None, str | None]:
    """``(key, payload)`` as Kafka 3.5-3.7 printed them before the JSON decoder (the Scala 2.13
    build): ``format_text(key, value, style="3.5")``."""
    return format_text(key, value, style="3.5", scala="2.13")
