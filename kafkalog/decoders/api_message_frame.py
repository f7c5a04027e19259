"""The frame of Kafka's ``AbstractApiMessageSerde`` around one generated message: KRaft
``__cluster_metadata`` records (``MetadataRecordSerde``) and tiered storage's
``__remote_log_metadata`` records (``RemoteLogMetadataSerde``'s ``BytesApiMessageSerde``).

Layout: unsigned varint frame version (must be 1), unsigned varint api key (which schema),
unsigned varint version, then the message, which must use every remaining byte. Each value fits
a Java ``short`` (``unsignedIntToShort``). The errors carry Kafka's texts
(``kafka_message``), which the dump tool prints.

Example
-------
>>> from kafkalog.decoders import api_message_frame as f, cluster_metadata as cm
>>> f.read(f.write(20, 0, b"\\x00"), cm.SCHEMAS, "metadata")[:2]  # NoOpRecord v0
(20, 0)
"""

from __future__ import annotations

from typing import Any

from . import message
from .message import MessageDecodeError

__all__ = ["FRAME_VERSION", "read", "write"]

FRAME_VERSION = 1


def _frame_short(r: message._Reader, entity: str) -> int:
    try:
        val = r.uvarint(entity)
    except MessageDecodeError as e:
        raise MessageDecodeError(f"error while reading {entity}: {e.message}",
                                 kafka_message=f"Error while reading {entity}",
                                 position=e.position) from None
    if val > 0x7FFF or val < 0:
        raise MessageDecodeError(f"value for {entity} was too large ({val & 0xFFFFFFFF})",
                                 kafka_message=f"Value for {entity} was too large.",
                                 position=r.pos)
    return val


def read(value: bytes | bytearray | memoryview, schemas: dict[int, message.Struct],
         what: str) -> tuple[int, int, message.Struct, dict[str, Any]]:
    """``(api key, version, schema, data)`` of one framed message; ``what`` names the record
    kind in our messages ("metadata", "remote log metadata").

    Raises :class:`~kafkalog.decoders.message.MessageDecodeError` (position = the byte within
    ``value``) for a bad frame, an api key not in ``schemas``, malformed message bytes, or
    bytes after the message; ``kafka_message`` is what Kafka's serde throws.
    """
    buf = value if type(value) is bytes else bytes(value)
    if len(buf) > 2 and buf[0] == FRAME_VERSION and buf[1] < 0x80 and buf[2] < 0x80:
        # the common frame, three one-byte varints (api keys and versions below 128)
        schema = schemas.get(buf[1])
        if schema is not None:
            try:
                data, end = message.read_prefix(schema, buf, buf[2], 3)
            except MessageDecodeError:
                pass  # (the full path below words the error)
            else:
                if end == len(buf):
                    return buf[1], buf[2], schema, data
    r = message._Reader(buf)
    frame = _frame_short(r, "frame version")
    if frame == 0:
        raise MessageDecodeError(
            "frame version 0 (KRaft 2.8 preview) is not supported",
            kafka_message="Could not deserialize metadata record with frame version 0. Note "
            "that upgrades from the preview release of KRaft in 2.8 to newer versions are not "
            "supported.", position=0)
    if frame != FRAME_VERSION:
        raise MessageDecodeError(
            f"unknown frame version (expected {FRAME_VERSION}, found {frame})",
            kafka_message="Could not deserialize metadata record due to unknown frame version "
            f"{frame}(only frame version {FRAME_VERSION} is supported)", position=0)
    api_key = _frame_short(r, "type")
    version = _frame_short(r, "version")
    schema = schemas.get(api_key)
    if schema is None:
        # the generated MetadataRecordType.fromId (each serde has its own enum, same text)
        raise MessageDecodeError(
            f"unknown {what} record type {api_key}",
            kafka_message="org.apache.kafka.common.errors.UnsupportedVersionException: "
            f"Unknown metadata id {api_key}", position=r.pos)
    try:
        data, end = message.read_prefix(schema, buf, version, r.pos)
    except MessageDecodeError as e:
        raise MessageDecodeError(
            f"{schema.name} v{version}: {e.message}",
            kafka_message=f"Failed to deserialize record with type {api_key}",
            position=e.position) from None
    if end != len(buf):
        n = len(buf) - end
        raise MessageDecodeError(
            f"{n} byte(s) after the {schema.name} v{version} message",
            kafka_message=f"Found {n} byte(s) of garbage after {api_key}", position=end)
    return api_key, version, schema, data


def write(api_key: int, version: int, body: bytes) -> bytes:
    """Frame an encoded message body (``AbstractApiMessageSerde.write``)."""
    return message._uvarint(FRAME_VERSION) + message._uvarint(api_key) + \
        message._uvarint(version) + body
