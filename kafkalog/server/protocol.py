"""Kafka wire framing and message (de)serialization through ``kio``'s generated schemas.

A Kafka request on the wire is ``int32 size`` + request header + body; the header starts with
``int16 api_key, int16 api_version, int32 correlation_id`` in every version (RequestHeader.json),
then ``client_id`` (a legacy nullable string even in flexible versions) and, from header v2,
tagged fields. A response is ``int32 size`` + response header (``correlation_id``, plus tagged
fields from v1) + body. Which header version goes with an API version is part of each message's
schema (``__header_schema__`` in kio; ApiVersions responses always use header v0, Kafka's
special case in ApiMessageTypeGenerator).

Every message body is encoded and decoded by ``kio`` (PyPI ``kio``: dataclasses generated from
the JSON schemas in Kafka's ``clients/src/main/resources/common/message``), never by hand. Kafka's
generated Java classes let a handler set any field and write only those the version has; kio has
one frozen dataclass per version. :func:`build` bridges the two: handlers describe a response
once as plain dicts with kio's snake_case field names, and :func:`build` makes the dataclass of
the negotiated version, dropping fields that version does not have and converting plain values
(error code ints, millisecond ints, kafkalog ``Uuid``) to kio's field types. ``build`` then
:func:`encode_response` is the reference path; the server answers through
:mod:`kafkalog.server.response_writers`, writers generated from the same kio fields that give
the same bytes several times faster.

Threads: pure functions; kio's readers/writers are cached per class.

Example
-------
>>> from kio.index import load_response_schema
>>> body = build(load_response_schema(18, 0), {"error_code": 0, "api_keys": [
...     {"api_key": 18, "min_version": 0, "max_version": 3}], "throttle_time": 0})
>>> encode_response(18, 0, 7, body).hex()
'0000001000000007000000000001001200000003'
"""

from __future__ import annotations

import datetime
import functools
import struct
import uuid
from collections.abc import Mapping
from typing import Any, NamedTuple

from kio.index import (
    KioIndexError,
    load_request_schema,
    load_response_schema,
)
from kio.schema.errors import ErrorCode
from kio.serial import entity_reader, entity_writer

from .bounds import check_frame
from .errors import ProtocolError
from .schema import ENTITY, PRIMITIVE, PRIMITIVE_ARRAY, FieldPlan, field_plans

__all__ = [
    "MAX_REQUEST_BYTES",
    "ProtocolError",
    "RequestHeaderFields",
    "peek_header",
    "request_schema",
    "decode_request",
    "encode_response",
    "PiecesSink",
    "build",
    "field_value",
    "millis",
    "ErrorCode",
]

#: ``socket.request.max.bytes`` (Kafka's default, 100 MiB): a larger frame closes the connection
MAX_REQUEST_BYTES = 104857600
#: api_key, api_version and correlation_id: the part of the request header every version shares
_HEADER_PREFIX = struct.Struct(">hhi")
_SIZE = struct.Struct(">i")
_UTC = datetime.timezone.utc


class RequestHeaderFields(NamedTuple):
    """The fixed prefix of every request header."""

    api_key: int
    api_version: int
    correlation_id: int


def peek_header(frame: bytes | memoryview) -> RequestHeaderFields:
    """The header prefix of a request frame (the bytes after the size).

    Raises
    ------
    ProtocolError
        A frame shorter than the 8-byte prefix.
    """
    if len(frame) < _HEADER_PREFIX.size:
        raise ProtocolError(
            f"request frame too short for a request header (expected >= {_HEADER_PREFIX.size} "
            f"bytes, found {len(frame)})", position=0)
    return RequestHeaderFields(*_HEADER_PREFIX.unpack_from(frame))


@functools.cache
def request_schema(api_key: int, api_version: int) -> type | None:
    """kio's request class for ``(api_key, api_version)``, None when kio has none."""
    try:
        return load_request_schema(api_key, api_version)
    except KioIndexError:
        return None


@functools.cache
def _response_schema(api_key: int, api_version: int) -> type:
    return load_response_schema(api_key, api_version)


def decode_request(frame: bytes | memoryview, api_key: int, api_version: int) -> tuple[Any, Any]:
    """``(header, body)`` of a request frame as kio dataclasses.

    Raises
    ------
    ProtocolError
        No schema for the version, or bytes that do not parse as its header and body.
    """
    cls = request_schema(api_key, api_version)
    if cls is None:
        raise ProtocolError(f"no schema for api key {api_key} version {api_version}",
                            position=0)
    check_frame(cls, frame)  # kio aborts the process on an impossible array count
    try:
        header, n = entity_reader(cls.__header_schema__)(frame, 0)
        body, _ = entity_reader(cls)(frame, n)
    except Exception as e:  # kio raises ValueError/IndexError/its own errors on bad bytes
        raise ProtocolError(
            f"request api key {api_key} version {api_version} does not parse: "
            f"{type(e).__name__}: {e}", position=0) from None
    return header, body


def encode_response(api_key: int, api_version: int, correlation_id: int, body: Any) -> bytes:
    """The size-prefixed response frame: the response header of the version's schema, then
    ``body`` (a kio response dataclass, see :func:`build`)."""
    cls = type(body)
    out: list[Any] = [b""]  # (the size prefix, once known)
    sink = PiecesSink(out)
    header_cls = cls.__header_schema__
    entity_writer(header_cls)(sink, header_cls(correlation_id=correlation_id))
    entity_writer(cls)(sink, body)
    out[0] = _SIZE.pack(sum(map(len, out)))
    return b"".join(out)


class PiecesSink:
    """What kio writes into: the pieces appended to a list as given, joined once by the caller.
    (A ``BytesIO`` copied a fetch response's record bytes into a buffer it grew by
    reallocating, then once more out of it: half the server's time serving large fetches.)
    kio writes new ``bytes`` objects and the caller's own values, never a buffer it reuses."""

    __slots__ = ("write",)

    def __init__(self, out: list[Any]) -> None:
        self.write = out.append


def response_class(api_key: int, api_version: int) -> type:
    """kio's response class for ``(api_key, api_version)``."""
    return _response_schema(api_key, api_version)


# -- building kio dataclasses from plain values -----------------------------------------------

def _primitive(value: Any, kafka_type: str | None, optional: bool) -> Any:
    if value is None:
        return None
    if kafka_type == "error_code":
        return value if isinstance(value, ErrorCode) else ErrorCode(int(value))
    if kafka_type in ("timedelta_i32", "timedelta_i64"):
        if isinstance(value, datetime.timedelta):
            return value
        return datetime.timedelta(milliseconds=int(value))
    if kafka_type == "datetime_i64":
        if isinstance(value, datetime.datetime):
            return value
        if int(value) < 0 and optional:
            return None
        return datetime.datetime.fromtimestamp(int(value) / 1000, tz=_UTC)
    if kafka_type == "uuid":
        if isinstance(value, uuid.UUID):
            return value
        raw = value.to_bytes() if hasattr(value, "to_bytes") else bytes(value)
        return None if raw == bytes(16) else uuid.UUID(bytes=raw)
    return value


def build(cls: type, values: Mapping[str, Any] | Any) -> Any:
    """The kio dataclass ``cls`` from ``values`` (a mapping of snake_case field names).

    Keys the class does not have are ignored (fields of other versions); fields missing from
    ``values`` take the schema default; nested structs are mappings (or ready dataclasses),
    arrays are sequences of them. Error codes may be ints, durations millisecond ints, UUIDs
    kafkalog ``Uuid`` objects.

    Raises
    ------
    TypeError
        A field without a schema default is missing (a handler bug, never a client's).
    """
    if isinstance(values, cls):
        return values
    kwargs = {}
    for p in field_plans(cls):
        if p.name not in values:
            if p.has_default:
                continue
            if p.optional:
                kwargs[p.name] = None
                continue
            raise TypeError(f"{cls.__qualname__} v{cls.__version__}: field {p.name!r} missing")
        kwargs[p.name] = field_value(p, values[p.name])
    return cls(**kwargs)


def field_value(p: FieldPlan, v: Any) -> Any:
    """The value of field ``p`` as kio's dataclass holds it, from a plain value (see
    :func:`build`)."""
    if p.kind == PRIMITIVE:
        if v is None and not p.optional and p.kafka_type == "string":
            v = ""  # Kafka's writers: a nullable-in-later-versions string as ""
        return _primitive(v, p.kafka_type, p.optional)
    if v is None:
        return None
    if p.kind == PRIMITIVE_ARRAY:
        return tuple(_primitive(x, p.kafka_type, False) for x in v)
    if p.kind == ENTITY:
        return build(p.entity, v)  # type: ignore[arg-type]
    return tuple(build(p.entity, x) for x in v)  # type: ignore[arg-type]


def millis(value: Any) -> int:
    """Milliseconds of a kio duration field (``timedelta``) or an int."""
    if isinstance(value, datetime.timedelta):
        return round(value.total_seconds() * 1000)
    return int(value)
