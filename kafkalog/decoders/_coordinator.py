"""Coordinator records: the key/value framing shared by ``__consumer_offsets`` and
``__transaction_state`` (Kafka's ``CoordinatorRecordSerde``).

A record key is ``int16 record type`` + the key message; a value is ``int16 value version`` + the
value message, or null for a tombstone. The record type picks both schemas. Errors carry the text
Kafka's serde would put in its exception (``kafka_message``), which DumpLogSegments prints after
``Error at offset <o>, skipping.``.

Older shapes: Kafka 4.1 changed some KIP-932 values without a new version number (the
``__share_group_state`` values, ``__consumer_offsets`` record types 11 and 15), so the version
cannot tell 4.0's bytes from 4.1's. A codec given ``older_values`` reads such a value with the
newest shape first and takes the older one only when the newest does not read the bytes exactly
(it fails, or stops before the end) and the older one does; the record then says
``"layout": "4.0"``. The newest shape needs bytes the older one lacks (4.1 added fields), so a
4.0 value never reads exactly as a 4.1 one. Neither reading exactly: the newest shape's result
(trailing bytes ignored, as Kafka's readers do) or its error.
"""

from __future__ import annotations

import struct
from typing import Any

from ..errors import CorruptRecordError
from . import message
from .message import MessageDecodeError

__all__ = ["UnknownRecordTypeError", "MissingKeyError", "CoordinatorCodec", "decode_for_text",
           "dump_text"]


class UnknownRecordTypeError(CorruptRecordError):
    """A key whose record type this decoder does not know (Kafka's ``UnknownRecordTypeException``).

    DumpLogSegments prints ``Unknown record type <t> at offset <o>, skipping.`` for it.
    """

    def __init__(self, record_type: int) -> None:
        self.record_type = record_type
        self.kafka_message = f"Unknown record type {record_type}"
        super().__init__(f"unknown record type {record_type}")


class MissingKeyError(CorruptRecordError):
    """A coordinator record without a key (Kafka's tool stops with an exception on it)."""

    def __init__(self, what: str) -> None:
        self.kafka_message = f"message had a missing key ({what})"
        super().__init__(f"{what} record has no key (every coordinator record has one)")


def _bytes(b: bytes | bytearray | memoryview | None) -> bytes | None:
    return None if b is None else bytes(b)


class CoordinatorCodec:
    """Decode/encode one coordinator topic's records from its key and value schema tables."""

    def __init__(self, what: str, keys: dict[int, dict[str, Any]],
                 values: dict[int, dict[str, Any]],
                 older_values: dict[int, dict[str, Any]] | None = None,
                 older_layout: str = "4.0") -> None:
        self.what = what
        self.keys = {t: message.compile_schema(s) for t, s in keys.items()}
        self.values = {t: message.compile_schema(s) for t, s in values.items()}
        #: record type -> the value shape of an older release that used the same version
        #: numbers (read as described in the module docstring), named ``older_layout``
        self.older_values = {t: message.compile_schema(s)
                             for t, s in (older_values or {}).items()}
        self.older_layout = older_layout
        #: key bytes -> (record type, key text) of keys already formatted by dump_text: a
        #: coordinator topic repeats few keys many times (every commit of a group's partition
        #: has the same key). Only keys that decoded are kept; bounded (cleared when full).
        self._key_texts: dict[bytes, tuple[int, str]] = {}
        #: (label, version) -> the payload text's head '{"version":"3","data":'
        self._payload_heads: dict[tuple[str, int], str] = {}

    def key_version(self, record_type: int) -> int:
        """The version the key message is read at: the record type when the schema lists it
        (Kafka <= 4.0 schemas), else the schema's lowest version (4.1+ schemas are all v0)."""
        s = self.keys[record_type]
        lo, hi = s.versions  # type: ignore[misc]
        return record_type if lo <= record_type <= hi else lo

    def decode(self, key: bytes | None, value: bytes | None, *,
               prefer_older: bool = False) -> dict[str, Any]:
        """Return ``{"type", "key_name", "key_version", "key", "value_name", "version",
        "value", "layout"}``; ``value`` is None for a tombstone (``version`` then None too);
        ``layout`` is None for the newest shape, else the older one's name (``"4.0"``).
        ``prefer_older``: try the older shape first (files known to be from that release)."""
        key = _bytes(key)
        value = _bytes(value)
        if key is None:
            raise MissingKeyError(self.what)
        if len(key) < 2:
            raise MessageDecodeError(
                f"record key too short for its int16 record type (expected 2 bytes, found "
                f"{len(key)})", kafka_message="Could not read version from key's buffer.",
                position=0)
        record_type = struct.unpack_from(">h", key, 0)[0]
        if record_type not in self.keys:
            raise UnknownRecordTypeError(record_type)
        kschema = self.keys[record_type]
        kversion = self.key_version(record_type)
        kobj = self._read(kschema, key, kversion, "key")
        out: dict[str, Any] = {"type": record_type, "key_name": kschema.name,
                               "key_version": kversion, "key": kobj,
                               "value_name": None, "version": None, "value": None,
                               "layout": None}
        if value is None:
            return out
        version = _value_version(value)
        vschema, out["value"], out["layout"] = self.read_value(record_type, value, version,
                                                               prefer_older=prefer_older)
        out["value_name"] = vschema.name
        out["version"] = version
        return out

    def read_value(self, record_type: int, buf: bytes, version: int, *,
                   prefer_older: bool = False) -> tuple[message.Struct, dict[str, Any],
                                                        str | None]:
        """The value message of ``buf`` (after its int16 ``version``): ``(schema, value,
        layout)``, the shape chosen as the module docstring says."""
        newest = self.values[record_type]
        older = self.older_values.get(record_type)
        if older is None:
            return newest, self._read(newest, buf, version, "value"), None
        shapes = [(newest, None), (older, self.older_layout)]
        if prefer_older:
            shapes.reverse()
        first: tuple[message.Struct, dict[str, Any], str | None] | None = None
        error: MessageDecodeError | None = None
        for schema, layout in shapes:
            try:
                obj, end = message.read_prefix(schema, buf, version, 2)
            except MessageDecodeError:
                if first is None and error is None:
                    try:  # (the first shape's error, in the text Kafka's serde gives)
                        self._read(schema, buf, version, "value")
                    except MessageDecodeError as e:
                        error = e
                continue
            if end == len(buf):
                return schema, obj, layout
            if first is None and error is None:
                first = (schema, obj, layout)
        if first is not None:
            return first
        assert error is not None
        raise error

    def value_schema(self, rec: dict[str, Any]) -> message.Struct:
        """The value shape ``rec`` (from :meth:`decode`) was read with."""
        if rec.get("layout") is not None:
            return self.older_values[rec["type"]]
        return self.values[rec["type"]]

    @staticmethod
    def _read(schema: message.Struct, buf: bytes, version: int, name: str) -> dict[str, Any]:
        try:
            return message.read_prefix(schema, buf, version, 2)[0]
        except MessageDecodeError as e:
            kafka = (f"Could not read record with version {version} from {name}'s buffer due "
                     f"to: {e.kafka_message}.")
            raise MessageDecodeError(f"{name} ({schema.name} v{version}): {e.message}",
                                     kafka_message=kafka, position=e.position) from None

    def encode(self, record_type: int, key: dict[str, Any], value: dict[str, Any] | None,
               version: int | None = None, *, layout: str | None = None
               ) -> tuple[bytes, bytes | None]:
        """Encode a record: ``(key bytes, value bytes or None for a tombstone)``.

        ``version`` defaults to the value schema's highest valid version; ``layout`` names an
        older shape to write the value in (``"4.0"``; None: the newest).
        """
        kschema = self.keys[record_type]
        kbytes = struct.pack(">h", record_type) + message.write(
            kschema, key, self.key_version(record_type))
        if value is None:
            return kbytes, None
        if layout is None:
            vschema = self.values[record_type]
        elif layout == self.older_layout and record_type in self.older_values:
            vschema = self.older_values[record_type]
        else:
            raise ValueError(f"{self.what} record type {record_type} has no {layout} layout")
        if version is None:
            version = vschema.versions[1]  # type: ignore[index]
        return kbytes, struct.pack(">h", version) + message.write(vschema, value, version)

    def key_json(self, rec: dict[str, Any]) -> dict[str, Any]:
        return message.to_json(self.keys[rec["type"]], rec["key"], rec["key_version"])

    def value_json(self, rec: dict[str, Any]) -> dict[str, Any]:
        return message.to_json(self.value_schema(rec), rec["value"], rec["version"])

    def format(self, rec: dict[str, Any], value_json: Any = None, *,
               value_label: str = "version") -> tuple[str, str]:
        """Kafka's DumpLogSegments strings: key ``{"type":"<t>","data":{…}}`` and payload
        ``{"version":"<v>","data":{…}}`` or ``<DELETE>`` (``value_json``: the value's tree or
        :class:`~kafkalog.decoders.message.RawJson`, when the caller changed it; else its
        generated text). ``value_label`` names the payload's
        version field (Kafka 4.0's share-group-state parser wrote ``"type"`` there)."""
        # (the two-field wrappers written out: dumps of a dict, once per record, cost more
        # than the generated text inside them)
        key_text = '{"type":' + message.dumps(str(rec["type"])) + ',"data":' + \
            message.json_text(self.keys[rec["type"]], rec["key"], rec["key_version"]) + "}"
        if rec["value"] is None:
            return key_text, "<DELETE>"
        data = value_json if value_json is not None else message.json_text(
            self.value_schema(rec), rec["value"], rec["version"])
        return key_text, "{" + message.dumps(value_label) + ":" + \
            message.dumps(str(rec["version"])) + ',"data":' + message.dumps(data) + "}"


_KEY_TEXTS_MAX = 1 << 16


def _payload_head(codec: CoordinatorCodec, label: str, version: int) -> str:
    head = codec._payload_heads.get((label, version))
    if head is None:
        head = codec._payload_heads[(label, version)] = (
            "{" + message.dumps(label) + ":" + message.dumps(str(version)) + ',"data":')
    return head


def _value_version(vb: bytes) -> int:
    if len(vb) < 2:
        raise MessageDecodeError(
            f"record value too short for its int16 version (expected 2 bytes, found "
            f"{len(vb)})", kafka_message="Could not read version from value's buffer.",
            position=0)
    return struct.unpack_from(">h", vb, 0)[0]


def dump_text(codec: CoordinatorCodec, key: bytes | bytearray | memoryview | None,
              value: bytes | bytearray | memoryview | None,
              value_json: Any = None, *, value_label: str = "version",
              prefer_older: bool = False) -> tuple[str, str]:
    """``codec.format(codec.decode(key, value), value_json(rec))``, the same texts and errors,
    with the key's text taken from the codec's cache when the same key bytes were formatted
    before (the dump of a coordinator partition formats the same keys over and over).

    ``value_json(rec)`` gives the payload's data (a tree or the generated text) for a record
    that needs more than its schema's text (None: the generated text). ``prefer_older``: as
    :meth:`CoordinatorCodec.decode`."""
    kb = None if key is None else bytes(key)
    cached = codec._key_texts.get(kb) if kb is not None else None
    if cached is None:
        rec = codec.decode(kb, value, prefer_older=prefer_older)
        key_text, payload = codec.format(
            rec, None if value_json is None or rec["value"] is None else value_json(rec),
            value_label=value_label)
        if len(codec._key_texts) >= _KEY_TEXTS_MAX:
            codec._key_texts.clear()
        codec._key_texts[kb] = (rec["type"], key_text)  # type: ignore[index]
        return key_text, payload
    record_type, key_text = cached
    if value is None:
        return key_text, "<DELETE>"
    vb = bytes(value)
    version = _value_version(vb)
    vschema, obj, layout = codec.read_value(record_type, vb, version, prefer_older=prefer_older)
    if value_json is None:
        data: Any = message.json_text(vschema, obj, version)
    else:
        data = value_json({"type": record_type, "value": obj, "version": version,
                           "layout": layout})
    return key_text, _payload_head(codec, value_label, version) + message.dumps(data) + "}"


def decode_for_text(codec: CoordinatorCodec, key: bytes | None, value: bytes | None, *,
                    unknown_text: bool) -> dict[str, Any] | tuple[str, None]:
    """Decode for the pre-JSON text formatters (``formatRecordKeyAndValue``): the record, or,
    with ``unknown_text`` (Kafka 3.5+), the ``unknown::version=V`` key they printed for a record
    type they did not know. Without it an unknown type raises (older releases threw)."""
    try:
        return codec.decode(key, value)
    except UnknownRecordTypeError as e:
        if unknown_text:
            return f"unknown::version={e.record_type}", None
        raise


def format_error(exc: CorruptRecordError, offset: int) -> tuple[str, None]:
    """What DumpLogSegments' coordinator parsers print (as the key, no payload) for ``exc``."""
    if isinstance(exc, UnknownRecordTypeError):
        return f"Unknown record type {exc.record_type} at offset {offset}, skipping.", None
    kafka = getattr(exc, "kafka_message", None) or exc.message
    return f"Error at offset {offset}, skipping. {kafka}", None
