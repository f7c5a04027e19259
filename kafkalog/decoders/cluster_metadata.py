"""KRaft ``__cluster_metadata`` records as ``kafka-dump-log.sh --cluster-metadata-decoder`` prints
them.

A metadata record has no key; its value is framed by ``MetadataRecordSerde``
(``AbstractApiMessageSerde``): unsigned varint frame version (must be 1), unsigned varint api key
(the record type: 0 RegisterBrokerRecord, 2 TopicRecord, 3 PartitionRecord, 5
PartitionChangeRecord, 12 FeatureLevelRecord, 20 NoOpRecord, ...), unsigned varint version, then
the message, which must use every remaining byte.

DumpLogSegments prints only a payload, ``{"type":"<RECORD_TYPE>","version":<n>,"data":{…}}``,
where the type is ``MetadataRecordType``'s enum name (the schema name in upper snake case).

Example
-------
>>> from kafkalog.decoders import cluster_metadata as cm
>>> raw = cm.encode_record("TopicRecord", {"name": "t", "topicId": "AAAAAAAAAAAAAAAAAAAAAQ"})
>>> raw.hex()
'01020002740000000000000000000000000000000100'
>>> cm.decode_record(None, raw)
(None, '{"type":"TOPIC_RECORD","version":0,"data":{"name":"t","topicId":"AAAAAAAAAAAAAAAAAAAAAQ"}}')
"""

from __future__ import annotations

import functools
import struct
from typing import Any

from ..errors import CorruptRecordError
from . import _schemas, api_message_frame, message
from .api_message_frame import FRAME_VERSION
from .message import MessageDecodeError

__all__ = [
    "decode_record",
    "decode_record_obj",
    "encode_record",
    "format_for_dump",
    "record_type_name",
    "schema_of",
    "decode_leader_change",
    "SCHEMAS",
    "FRAME_VERSION",
]

SCHEMAS: dict[int, message.Struct] = {
    k: message.compile_schema(s) for k, s in _schemas.METADATA.items()}
_BY_NAME = {s.name: k for k, s in SCHEMAS.items()}
_LEADER_CHANGE = message.compile_schema(_schemas.CLIENT["LeaderChangeMessage"])


@functools.cache
def _snake_upper(name: str) -> str:
    """Kafka's ``MessageGenerator.toSnakeCase(name).toUpperCase()`` (MetadataRecordType names)."""
    out = []
    prev_upper = True
    for ch in name:
        if ch.isupper():
            if not prev_upper:
                out.append("_")
            out.append(ch.lower())
            prev_upper = True
        else:
            out.append(ch)
            prev_upper = False
    return "".join(out).upper()


def schema_of(name: str) -> message.Struct:
    """The compiled schema of a metadata record by its schema name (``"TopicRecord"``)."""
    return SCHEMAS[_BY_NAME[name]]


def record_type_name(api_key: int) -> str:
    """``MetadataRecordType.fromId(api_key).toString()``, e.g. 2 -> ``TOPIC_RECORD``."""
    return _snake_upper(SCHEMAS[api_key].name)


def decode_record_obj(key: bytes | None, value: bytes | None) -> dict[str, Any]:
    """Decode a metadata record: ``{"type": "TOPIC_RECORD", "api_key": 2, "name":
    "TopicRecord", "version": 0, "data": {...}}`` (camelCase field names, uuids as Kafka
    ``Uuid`` strings). ``key`` is ignored (metadata records have none).

    Raises :class:`~kafkalog.decoders.message.MessageDecodeError` (a
    :class:`~kafkalog.errors.CorruptRecordError`) for a null value, a bad frame, an unknown
    record type or version, malformed bytes, or trailing bytes after the message.
    """
    if value is None:
        raise MessageDecodeError("metadata record has a null value", kafka_message="null")
    api_key, version, schema, data = api_message_frame.read(value, SCHEMAS, "metadata")
    return {"type": _snake_upper(schema.name), "api_key": api_key, "name": schema.name,
            "version": version, "data": data}


def decode_record(key: bytes | None, value: bytes | None) -> tuple[None, str]:
    """``(None, payload text)`` exactly as DumpLogSegments' ``ClusterMetadataLogMessageParser``
    prints a record it can decode; raises as :func:`decode_record_obj` otherwise."""
    rec = decode_record_obj(key, value)
    schema = SCHEMAS[rec["api_key"]]
    return None, message.dumps({"type": rec["type"], "version": rec["version"],
                                "data": message.json_text(schema, rec["data"], rec["version"])})


def format_for_dump(key: bytes | None, value: bytes | None, offset: int) -> tuple[None, str]:
    """What ``--cluster-metadata-decoder`` prints: the payload, or for a record that does not
    decode the payload text ``Error at <offset>, skipping. <msg>`` (Kafka's parser omits the
    word "offset" here, unlike the other decoders)."""
    try:
        return decode_record(key, value)
    except CorruptRecordError as e:
        kafka = getattr(e, "kafka_message", None) or e.message
        return None, f"Error at {offset}, skipping. {kafka}"


def encode_record(record: str | int, data: dict[str, Any], version: int | None = None) -> bytes:
    """Frame and encode a metadata record value (``record`` = schema name or api key).

    ``version`` defaults to the schema's lowest version.
    """
    api_key = _BY_NAME[record] if isinstance(record, str) else record
    schema = SCHEMAS[api_key]
    if version is None:
        version = schema.versions[0]  # type: ignore[index]
    return api_message_frame.write(api_key, version, message.write(schema, data, version))


def decode_leader_change(value: bytes) -> dict[str, Any]:
    """Decode a KRaft ``LEADER_CHANGE`` control record value.

    The value is the ``LeaderChangeMessage`` itself; its first field (int16 ``Version``) is the
    version it was written at (``ControlRecordUtils.deserializeLeaderChangeMessage``).
    Returns ``{"version", "leaderId", "voters": [{"voterId"}], "grantingVoters": [...]}``.
    """
    if value is None or len(value) < 2:
        raise MessageDecodeError("LEADER_CHANGE value shorter than its int16 version")
    raw = bytes(value)
    version = struct.unpack_from(">h", raw, 0)[0]
    return message.read_prefix(_LEADER_CHANGE, raw, version, 0)[0]
