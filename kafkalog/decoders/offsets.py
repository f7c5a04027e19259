"""``__consumer_offsets`` records as Kafka's ``kafka-dump-log.sh --offsets-decoder`` prints them.

Kafka's group coordinator writes one record per fact (``GroupCoordinatorRecordSerde``): the key
is ``int16 record type`` + key message, the value ``int16 version`` + value message, or null (a
tombstone: the offset or group was deleted). Record types: 0 and 1 offset commits
(``OffsetCommitKey``/``OffsetCommitValue``), 2 classic group metadata (``GroupMetadataKey``/
``GroupMetadataValue`` with members), 3-8 and 16 the KIP-848 consumer-group records.

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
from . import _schemas, message
from ._coordinator import (
    CoordinatorCodec,
    MissingKeyError,
    UnknownRecordTypeError,
    format_error,
)

__all__ = [
    "decode_record",
    "decode_record_obj",
    "encode_record",
    "format_for_dump",
    "format_legacy",
    "UnknownRecordTypeError",
    "MissingKeyError",
    "OFFSET_COMMIT_TYPES",
    "GROUP_METADATA_TYPE",
]

OFFSET_COMMIT_TYPES = (0, 1)
GROUP_METADATA_TYPE = 2
CONSUMER_PROTOCOL_TYPE = "consumer"       # ConsumerProtocol.PROTOCOL_TYPE

CODEC = CoordinatorCodec("__consumer_offsets", _schemas.GROUP_KEYS, _schemas.GROUP_VALUES)
_SUBSCRIPTION = message.compile_schema(_schemas.CLIENT["ConsumerProtocolSubscription"])
_ASSIGNMENT = message.compile_schema(_schemas.CLIENT["ConsumerProtocolAssignment"])


def decode_record_obj(key: bytes | None, value: bytes | None) -> dict[str, Any]:
    """Decode a ``__consumer_offsets`` record into Python values.

    Returns ``{"type": int, "key_name": str, "key_version": int, "key": dict,
    "value_name": str|None, "version": int|None, "value": dict|None}`` (``value`` None for a
    tombstone). Field names are Kafka's camelCase JSON names; uuids are Kafka ``Uuid`` strings.

    Raises
    ------
    MissingKeyError
        ``key`` is None.
    UnknownRecordTypeError
        The key's record type is not a group-coordinator record type known here.
    kafkalog.errors.CorruptRecordError
        Truncated or malformed bytes, or an unsupported version (``MessageDecodeError``).
    """
    return CODEC.decode(key, value)


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


def _value_json(rec: dict[str, Any]) -> dict[str, Any]:
    data = CODEC.value_json(rec)
    if rec["type"] == GROUP_METADATA_TYPE and data.get("protocolType") == CONSUMER_PROTOCOL_TYPE:
        for member in data.get("members") or []:
            for name, schema in (("subscription", _SUBSCRIPTION), ("assignment", _ASSIGNMENT)):
                if name in member:
                    decoded = _decode_embedded(schema, member[name])
                    if decoded is not None:
                        member[name] = decoded
    return data


def decode_record(key: bytes | None, value: bytes | None) -> tuple[str | None, str | None]:
    """``(key text, payload text)`` exactly as DumpLogSegments' ``OffsetsMessageParser``.

    Raises the errors of :func:`decode_record_obj`; use :func:`format_for_dump` to get the
    text Kafka prints for them instead.
    """
    rec = CODEC.decode(key, value)
    if rec["value"] is None:
        return CODEC.format(rec)
    return CODEC.format(rec, _value_json(rec))


def format_for_dump(key: bytes | None, value: bytes | None, offset: int
                    ) -> tuple[str | None, str | None]:
    """What ``kafka-dump-log.sh --offsets-decoder`` prints for one record: as
    :func:`decode_record`, but a decode failure becomes the key text
    ``Error at offset <o>, skipping. <msg>`` (or ``Unknown record type <t> at offset <o>,
    skipping.``) with no payload. A missing key still raises :class:`MissingKeyError` (Kafka's
    tool stops on it)."""
    try:
        return decode_record(key, value)
    except MissingKeyError:
        raise
    except CorruptRecordError as e:
        return format_error(e, offset)


def encode_record(record_type: int, key: dict[str, Any], value: dict[str, Any] | None,
                  version: int | None = None) -> tuple[bytes, bytes | None]:
    """Encode a record as the group coordinator writes it (``value`` None = tombstone).

    ``version`` defaults to the highest version of the value schema.
    """
    return CODEC.encode(record_type, key, value, version)


# --------------------------------------------------------------------------------------------
# The pre-JSON text of Kafka 2.x-3.x (GroupMetadataManager.formatRecordKeyAndValue)
# --------------------------------------------------------------------------------------------

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


def format_legacy(key: bytes | None, value: bytes | None) -> tuple[str, str]:
    """``(key, payload)`` as Kafka 2.x-3.x printed them before the JSON decoder:
    ``offset_commit::group=G,partition=T-P`` / ``offset=N[,metadata=M]`` and
    ``group_metadata::group=G`` / ``{"protocolType":…,"protocol":…,"generationId":…,
    "assignment":"{member=[t-0, t-1][:USERDATAHEX]}"}``, ``<DELETE>`` for tombstones.

    Differences that cannot be reproduced: Kafka iterated group members in hash-map order;
    they are printed here in record order. Errors raise (the old tool stopped on them).
    """
    if key is None:
        raise MissingKeyError("__consumer_offsets")
    rec = CODEC.decode(key, value)
    k, v = rec["key"], rec["value"]
    if rec["type"] in OFFSET_COMMIT_TYPES:
        key_text = f"offset_commit::group={k['group']},partition={k['topic']}-{k['partition']}"
        if v is None:
            return key_text, "<DELETE>"
        meta = v["metadata"]
        return key_text, f"offset={v['offset']}" + (f",metadata={meta}" if meta else "")
    if rec["type"] != GROUP_METADATA_TYPE:
        raise CorruptRecordError("Failed to decode message using offset topic decoder "
                                 "(message had an invalid key)")
    key_text = f"group_metadata::group={k['group']}"
    if v is None:
        return key_text, "<DELETE>"
    protocol_type = v["protocolType"] or ""
    members = []
    for m in v["members"]:
        if protocol_type == CONSUMER_PROTOCOL_TYPE:
            parts, user_data = _legacy_assignment(m["assignment"])
            text = f"{m['memberId']}=[{', '.join(parts)}]"
            ud = _legacy_hex(user_data) if user_data is not None else ""
            members.append(text + (f":{ud}" if ud else ""))
        else:
            members.append(f"{m['memberId']}={_legacy_hex(m['assignment'])}")
    return key_text, message.dumps({"protocolType": protocol_type, "protocol": v["protocol"],
                                    "generationId": v["generation"],
                                    "assignment": "{" + ",".join(members) + "}"})
