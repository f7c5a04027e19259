"""Schema-driven codec for Kafka's generated messages, and their ``*JsonConverter`` JSON.

Kafka's internal topics (``__consumer_offsets``, ``__transaction_state``, ``__cluster_metadata``)
store "generated messages": structs described by JSON schemas (``_schemas``) and encoded by code
that Kafka's ``generator`` module writes for each of them (``MessageDataGenerator``). This module
interprets those schemas (the reference, and the source of every error) and, for speed, generates
one reader per struct version on first use:

* :func:`read` decodes one message at a version, exactly as the generated ``read`` does:
  big-endian fixed-width integers, ``uuid`` as 16 bytes, and for variable-length types an int16
  (strings) or int32 (bytes, arrays) length with -1 for null; in *flexible* versions
  (``flexibleVersions``) lengths are unsigned varints of length + 1 (0 = null) and every struct
  ends with a tagged-field section (count, then tag, size, bytes per field).
* :func:`write` encodes a message (used by tests and by tooling that writes internal topics).
* :func:`to_json` builds the JSON tree that the generated ``*JsonConverter.write`` builds: fields
  in schema order, camelCase names, tagged fields only when they differ from their default,
  ``uuid`` as Kafka's base64url ``Uuid`` string, ``bytes`` as base64, and
  :func:`dumps` prints it as Jackson's ``ObjectNode.toString()`` does (compact, Jackson's string
  escapes, Java's ``Double.toString`` for float64).

Decoded values are plain Python: ``int``, ``bool``, ``float``, ``str`` (``uuid`` fields hold the
Kafka string form), ``bytes``, ``list`` and ``dict`` (keyed by camelCase field name), ``None`` for
null.

Example
-------
>>> from kafkalog.decoders import message, _schemas
>>> schema = message.compile_schema(_schemas.METADATA[2])          # TopicRecord
>>> raw = message.write(schema, {"name": "t", "topicId": "AAAAAAAAAAAAAAAAAAAAAQ"}, 0)
>>> obj = message.read(schema, raw, 0)
>>> message.dumps(message.to_json(schema, obj, 0))
'{"name":"t","topicId":"AAAAAAAAAAAAAAAAAAAAAQ"}'
"""

from __future__ import annotations

import base64
import math
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import CorruptRecordError
from ..generated_code import GeneratedSource
from ..java_utf8 import JAVA_REPLACE

__all__ = [
    "MessageDecodeError",
    "Struct",
    "Field",
    "compile_schema",
    "read",
    "read_prefix",
    "write",
    "to_json",
    "dumps",
    "uuid_to_str",
    "uuid_from_str",
    "ZERO_UUID",
]

_MAX_VERSION = 0x7FFF


class MessageDecodeError(CorruptRecordError):
    """Bytes that are not a valid generated message for the schema and version asked for.

    ``kafka_message`` holds the text Kafka's own exception would carry (what DumpLogSegments
    prints after ``skipping.``); ``str(e)`` adds the byte position and detail.
    """

    def __init__(self, message: str, *, kafka_message: str | None = None,
                 position: int | None = None, offset: int | None = None) -> None:
        self.kafka_message = kafka_message if kafka_message is not None else message
        super().__init__(message, position=position, offset=offset)


# ----------------------------------------------------------------------------------------------
# Schema compilation
# ----------------------------------------------------------------------------------------------

def _parse_versions(text: str | None) -> tuple[int, int] | None:
    """Kafka's ``Versions.parse``: "none", "N", "N+", "N-M" -> inclusive (lo, hi) or None."""
    if text is None:
        return None
    text = str(text).strip()
    if text == "none":
        return None
    if text.endswith("+"):
        return int(text[:-1]), _MAX_VERSION
    if "-" in text:
        lo, hi = text.split("-", 1)
        return int(lo), int(hi)
    return int(text), int(text)


def _contains(r: tuple[int, int] | None, v: int) -> bool:
    return r is not None and r[0] <= v <= r[1]


_PRIMITIVES = {"bool", "int8", "int16", "uint16", "int32", "uint32", "int64", "float64",
               "uuid", "string", "bytes", "records"}

ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA"


@dataclass
class Field:
    """One compiled schema field (``type`` is the element type for arrays)."""

    name: str
    json_name: str
    type: str
    is_array: bool
    versions: tuple[int, int] | None
    nullable: tuple[int, int] | None
    tagged: tuple[int, int] | None
    tag: int | None
    default: Any
    struct: Struct | None = None

    def present(self, v: int) -> bool:
        return _contains(self.versions, v)

    def is_tagged(self, v: int) -> bool:
        return _contains(self.tagged, v)

    def is_nullable(self, v: int) -> bool:
        return _contains(self.nullable, v)


@dataclass
class Struct:
    """A compiled struct: the message itself or a nested/common struct."""

    name: str
    versions: tuple[int, int] | None
    fields: list[Field] = field(default_factory=list)
    flexible: tuple[int, int] | None = None      # the message's flexibleVersions (shared)
    api_key: int | None = None
    # version -> generated reader (see "Generated readers") / JSON writer (``json_text``);
    # not part of the schema's identity
    readers: dict[int, Any] = field(default_factory=dict, compare=False, repr=False)
    json_writers: dict[int, Any] = field(default_factory=dict, compare=False, repr=False)

    def tagged_by_tag(self, v: int) -> dict[int, Field]:
        return {f.tag: f for f in self.fields if f.tag is not None and f.is_tagged(v)}


def _camel(name: str) -> str:
    return name[:1].lower() + name[1:]


def _default(type_: str, is_array: bool, text: Any, struct: Struct | None) -> Any:
    """The field's default as Kafka's ``FieldSpec.fieldDefault`` defines it."""
    if text == "null":
        return None
    if is_array:
        return []
    if struct is not None:
        return _struct_default(struct)
    if type_ == "bool":
        return str(text).lower() == "true" if text is not None else False
    if type_ in ("int8", "int16", "uint16", "int32", "uint32", "int64"):
        if text is None or text == "":
            return 0
        s = str(text)
        return int(s, 16) if s.lower().startswith("0x") else int(s)
    if type_ == "float64":
        return float(text) if text not in (None, "") else 0.0
    if type_ == "uuid":
        return ZERO_UUID
    if type_ == "string":
        return "" if text is None else str(text)
    if type_ in ("bytes", "records"):
        return b""
    return None


def _struct_default(s: Struct) -> dict[str, Any]:
    return {f.json_name: f.default for f in s.fields}


def _compile_fields(specs: list[dict[str, Any]], common: dict[str, dict[str, Any]],
                    flexible: tuple[int, int] | None,
                    cache: dict[str, Struct]) -> list[Field]:
    out = []
    for spec in specs:
        t = spec["type"]
        is_array = t.startswith("[]")
        elem = t[2:] if is_array else t
        versions = _parse_versions(spec.get("versions"))
        tagged = _parse_versions(spec.get("taggedVersions"))
        if versions is None and tagged is not None:
            versions = tagged                       # Kafka: tagged-only fields
        sub: Struct | None = None
        if elem not in _PRIMITIVES:
            if "fields" in spec:
                sub = Struct(elem, versions, [], flexible)
                sub.fields = _compile_fields(spec["fields"], common, flexible, cache)
            elif elem in cache:
                sub = cache[elem]
            elif elem in common:
                c = common[elem]
                sub = Struct(elem, _parse_versions(c.get("versions", "0+")), [], flexible)
                cache[elem] = sub
                sub.fields = _compile_fields(c["fields"], common, flexible, cache)
            else:
                raise ValueError(f"schema references unknown struct type {elem!r}")
        tag = spec.get("tag")
        f = Field(
            name=spec["name"],
            json_name=_camel(spec["name"]),
            type=elem,
            is_array=is_array,
            versions=versions,
            nullable=_parse_versions(spec.get("nullableVersions")),
            tagged=tagged,
            tag=int(tag) if tag is not None else None,
            default=None,
            struct=sub,
        )
        f.default = _default(elem, is_array, spec.get("default"), sub)
        out.append(f)
    return out


_COMPILED: dict[int, tuple[dict[str, Any], Struct]] = {}


def compile_schema(schema: dict[str, Any]) -> Struct:
    """Compile a schema dict (Kafka's JSON shape) into a :class:`Struct` (cached per dict)."""
    hit = _COMPILED.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    flexible = _parse_versions(schema.get("flexibleVersions", "none"))
    common = {c["name"]: c for c in schema.get("commonStructs", [])}
    top = Struct(schema["name"], _parse_versions(schema["validVersions"]), [], flexible,
                 schema.get("apiKey"))
    top.fields = _compile_fields(schema["fields"], common, flexible, {})
    _COMPILED[id(schema)] = (schema, top)     # keeps the dict alive, so its id stays unique
    return top


# ----------------------------------------------------------------------------------------------
# Uuid
# ----------------------------------------------------------------------------------------------

def uuid_to_str(raw: bytes) -> str:
    """Kafka's ``Uuid.toString``: URL-safe base64 of the 16 bytes, without padding."""
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def uuid_from_str(text: str) -> bytes:
    """Inverse of :func:`uuid_to_str` (``ValueError`` unless it names 16 bytes)."""
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if len(raw) != 16:
        raise ValueError(f"not a Kafka Uuid string: {text!r}")
    return raw


# ----------------------------------------------------------------------------------------------
# Reading
# ----------------------------------------------------------------------------------------------

class _Reader:
    __slots__ = ("buf", "pos", "end")

    def __init__(self, buf: bytes | memoryview, pos: int = 0, end: int | None = None) -> None:
        self.buf = memoryview(buf).cast("B") if not isinstance(buf, bytes) else buf
        self.pos = pos
        self.end = len(buf) if end is None else end

    def need(self, n: int, what: str) -> int:
        p = self.pos
        if n < 0 or p + n > self.end:
            raise MessageDecodeError(
                f"truncated {what} (expected {n} bytes, found {self.end - p})",
                kafka_message="null", position=p)
        self.pos = p + n
        return p

    def fixed(self, fmt: str, n: int, what: str) -> Any:
        p = self.need(n, what)
        return struct.unpack_from(fmt, self.buf, p)[0]

    def uvarint(self, what: str) -> int:
        """Kafka's ``ByteUtils.readUnsignedVarint`` (<= 5 bytes), returned as a signed int32."""
        value = 0
        shift = 0
        start = self.pos
        for i in range(5):
            if self.pos >= self.end:
                raise MessageDecodeError(
                    f"truncated unsigned varint for {what}", kafka_message="null",
                    position=start)
            b = self.buf[self.pos]
            self.pos += 1
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                value &= 0xFFFFFFFF
                return value - (1 << 32) if value & 0x80000000 else value
            shift += 7
            if i == 4:
                break
        raise MessageDecodeError(
            f"unsigned varint for {what} is too long (more than 5 bytes)",
            kafka_message="Varint is too long, the most significant bit in the 5th byte is set",
            position=start)

    def take(self, n: int, what: str) -> bytes:
        p = self.need(n, what)
        return bytes(self.buf[p:p + n])


_FIXED = {
    "int8": (">b", 1), "int16": (">h", 2), "uint16": (">H", 2), "int32": (">i", 4),
    "uint32": (">I", 4), "int64": (">q", 8), "float64": (">d", 8),
}


def _read_struct(r: _Reader, s: Struct, v: int, path: str) -> dict[str, Any]:
    if not _contains(s.versions, v):
        raise MessageDecodeError(f"Can't read version {v} of {s.name}")
    flexible = _contains(s.flexible, v)
    obj: dict[str, Any] = {}
    for f in s.fields:
        if not f.present(v):
            obj[f.json_name] = f.default
            continue
        if flexible and f.is_tagged(v):
            obj[f.json_name] = f.default       # filled from the tagged section below
            continue
        obj[f.json_name] = _read_field(r, f, v, flexible, f"{path}{f.json_name}")
    if flexible:
        tags = s.tagged_by_tag(v)
        n = r.uvarint("the number of tagged fields")
        for _ in range(n):
            tag = r.uvarint("a tag")
            size = r.uvarint("a tagged field size")
            start = r.need(size, f"tagged field {tag}")   # bounds-check, then parse inside
            f = tags.get(tag)
            if f is None:
                continue                        # unknown tags are kept opaque by Kafka too
            sub = _Reader(r.buf, start, start + size)
            obj[f.json_name] = _read_field(sub, f, v, flexible, f"{path}{f.json_name}")
            if sub.pos != start + size:
                raise MessageDecodeError(
                    f"tagged field {path}{f.json_name} (tag {tag}) used {sub.pos - start} "
                    f"bytes, expected {size}", position=start)
    return obj


def _read_len(r: _Reader, flexible: bool, wide: bool, what: str) -> int:
    """Length prefix: compact (uvarint - 1) when flexible, else int16 (strings) / int32."""
    if flexible:
        return r.uvarint(what) - 1
    return r.fixed(">i", 4, what) if wide else r.fixed(">h", 2, what)


def _null_or_fail(f: Field, v: int, path: str) -> None:
    if not f.is_nullable(v):
        raise MessageDecodeError(
            f"non-nullable field {path} was serialized as null")


def _read_field(r: _Reader, f: Field, v: int, flexible: bool, path: str) -> Any:
    if f.is_array:
        n = _read_len(r, flexible, True, f"the length of {path}")
        if n < 0:
            _null_or_fail(f, v, path)
            return None
        remaining = r.end - r.pos
        if n > remaining:
            raise MessageDecodeError(
                f"Tried to allocate a collection of size {n}, but there are only "
                f"{remaining} bytes remaining.", position=r.pos)
        return [_read_value(r, f, v, flexible, f"{path}[{i}]", in_array=True)
                for i in range(n)]
    return _read_value(r, f, v, flexible, path, in_array=False)


def _read_value(r: _Reader, f: Field, v: int, flexible: bool, path: str,
                in_array: bool) -> Any:
    t = f.type
    if t in _FIXED:
        fmt, n = _FIXED[t]
        return r.fixed(fmt, n, f"{t} field {path}")
    if t == "bool":
        return r.fixed(">B", 1, f"bool field {path}") != 0
    if t == "uuid":
        return uuid_to_str(r.take(16, f"uuid field {path}"))
    if t == "string":
        n = _read_len(r, flexible, False, f"the length of string field {path}")
        if n < 0:
            if in_array:
                raise MessageDecodeError(f"null string in array {path}")
            _null_or_fail(f, v, path)
            return None
        if n > 0x7FFF:
            raise MessageDecodeError(f"string field {path} had invalid length {n}")
        return r.take(n, f"string field {path}").decode("utf-8", JAVA_REPLACE)
    if t in ("bytes", "records"):
        n = _read_len(r, flexible, True, f"the length of bytes field {path}")
        if n < 0:
            _null_or_fail(f, v, path)
            return None
        return r.take(n, f"bytes field {path}")
    assert f.struct is not None
    if not in_array and f.is_nullable(v):
        # A nullable struct carries an int8 presence marker (-1 = null).
        if r.fixed(">b", 1, f"null marker of {path}") < 0:
            return None
    return _read_struct(r, f.struct, v, path + ".")


def read_prefix(schema: Struct, buf: bytes | memoryview, version: int,
                pos: int = 0) -> tuple[dict[str, Any], int]:
    """Decode one message starting at ``pos``; return it and the position after it.

    Raises :class:`MessageDecodeError` (a :class:`~kafkalog.errors.CorruptRecordError`) for
    truncated or malformed bytes, an unsupported version, or null in a non-nullable field.
    """
    if type(buf) is bytes:
        try:
            return _generated(schema.readers, schema, version, _generate_reader)(
                buf, pos, len(buf))
        except Exception:  # noqa: BLE001 - any refusal: the interpreter below gives the error
            pass
    r = _Reader(buf, pos)
    try:
        obj = _read_struct(r, schema, version, "")
    except MessageDecodeError:
        raise
    except (struct.error, IndexError, ValueError, OverflowError) as e:  # defensive
        raise MessageDecodeError(f"malformed {schema.name}: {e}", position=r.pos) from None
    return obj, r.pos


def read(schema: Struct, buf: bytes | memoryview, version: int) -> dict[str, Any]:
    """Decode a whole buffer as one message (trailing bytes are ignored, as Kafka does)."""
    return read_prefix(schema, buf, version)[0]


# ----------------------------------------------------------------------------------------------
# Generated readers
# ----------------------------------------------------------------------------------------------
#
# What Kafka's generator does ahead of time, done on first use: one straight-line Python function
# per (struct, version), ``reader(buf, pos, end) -> (obj, pos)``, with the schema's decisions
# (present, tagged, nullable, flexible, formats) taken once instead of per field per record:
# ~4x faster than ``_read_struct``. The interpreter stays the reference and the only source of
# errors: a generated reader raises (``_Refused`` or any exception) wherever the interpreter
# would raise, and ``read_prefix`` then runs the interpreter for its exact message and position.
# Invariant (tests/test_decoders_message.py, hypothesis): for every input both accept, the same
# object and end position; every input the interpreter refuses, the generated reader refuses.


class _Refused(Exception):
    """A generated reader's "not this way": the interpreter decides (and names the error)."""


def _uvarint_at(buf: bytes, p: int, end: int) -> tuple[int, int]:
    """``_Reader.uvarint`` for generated readers: (signed int32 value, next position)."""
    value = 0
    for i in range(5):
        if p >= end:
            raise _Refused
        b = buf[p]
        p += 1
        value |= (b & 0x7F) << (7 * i)
        if not b & 0x80:
            value &= 0xFFFFFFFF
            return (value - (1 << 32) if value & 0x80000000 else value), p
    raise _Refused


class _ReaderSource(GeneratedSource):
    """Python source of one struct version's reader, and the constants it refers to."""

    def __init__(self) -> None:
        super().__init__({"_uv": _uvarint_at, "_Refused": _Refused,
                          "_unpack": struct.unpack_from, "_uuid": uuid_to_str})

    def length(self, ind: int, out: str, flexible: bool, wide: bool) -> None:
        """``out`` = a length prefix (compact uvarint - 1 when flexible, else int16/int32)."""
        if flexible:
            self.emit(ind, "if p < end and buf[p] < 128:")
            self.emit(ind + 1, f"{out} = buf[p] - 1; p += 1")
            self.emit(ind, "else:")
            self.emit(ind + 1, f"{out}, p = _uv(buf, p, end); {out} -= 1")
        else:
            n, fmt = (4, ">i") if wide else (2, ">h")
            self.emit(ind, f"if p + {n} > end: raise _Refused")
            self.emit(ind, f"{out} = _unpack('{fmt}', buf, p)[0]; p += {n}")

    def value(self, ind: int, out: str, f: Field, v: int, flexible: bool,
              in_array: bool) -> None:
        """Code reading one value of ``f``'s type into ``out`` (``_read_value``)."""
        t = f.type
        if t in _FIXED:
            fmt, n = _FIXED[t]
            self.emit(ind, f"if p + {n} > end: raise _Refused")
            self.emit(ind, f"{out} = _unpack('{fmt}', buf, p)[0]; p += {n}")
        elif t == "bool":
            self.emit(ind, "if p >= end: raise _Refused")
            self.emit(ind, f"{out} = buf[p] != 0; p += 1")
        elif t == "uuid":
            self.emit(ind, "if p + 16 > end: raise _Refused")
            self.emit(ind, f"{out} = _uuid(buf[p:p + 16]); p += 16")
        elif t in ("string", "bytes", "records"):
            string = t == "string"
            self.length(ind, "n", flexible, not string)
            self.emit(ind, "if n < 0:")
            if (string and in_array) or not f.is_nullable(v):
                self.emit(ind + 1, "raise _Refused")
            else:
                self.emit(ind + 1, f"{out} = None")
            self.emit(ind, "else:")
            limit = " or n > 32767" if string else ""
            self.emit(ind + 1, f"if p + n > end{limit}: raise _Refused")
            decode = f".decode('utf-8', {JAVA_REPLACE!r})" if string else ""
            self.emit(ind + 1, f"{out} = buf[p:p + n]{decode}; p += n")
        else:
            assert f.struct is not None
            sub = self.const(_reader_for(f.struct, v))
            if not in_array and f.is_nullable(v):
                self.emit(ind, "if p >= end: raise _Refused")
                self.emit(ind, f"if buf[p] >= 128: {out} = None; p += 1")  # int8 marker < 0
                self.emit(ind, "else:")
                self.emit(ind + 1, f"p += 1; {out}, p = {sub}(buf, p, end)")
            else:
                self.emit(ind, f"{out}, p = {sub}(buf, p, end)")

    def field(self, ind: int, out: str, f: Field, v: int, flexible: bool) -> None:
        """Code reading ``f`` (array or single value) into ``out`` (``_read_field``)."""
        if not f.is_array:
            self.value(ind, out, f, v, flexible, in_array=False)
            return
        self.length(ind, "m", flexible, True)
        self.emit(ind, "if m < 0:")
        self.emit(ind + 1, f"{out} = None" if f.is_nullable(v) else "raise _Refused")
        self.emit(ind, "else:")
        self.emit(ind + 1, "if m > end - p: raise _Refused")
        item = self.var()
        self.emit(ind + 1, f"{out} = []")
        self.emit(ind + 1, "for _ in range(m):")
        self.value(ind + 2, item, f, v, flexible, in_array=True)
        self.emit(ind + 2, f"{out}.append({item})")


def _generated(cache: dict[int, Any], s: Struct, v: int, generate: Any) -> Any:
    """``s``'s generated function at version ``v`` from ``cache``, made on first use."""
    fn = cache.get(v)
    if fn is None:
        fn = cache[v] = generate(s, v)
    return fn


def _reader_for(s: Struct, v: int) -> Any:
    return _generated(s.readers, s, v, _generate_reader)


def _generate_reader(s: Struct, v: int) -> Any:
    """Generate ``reader(buf, pos, end) -> (obj, pos)`` for struct ``s`` at version ``v``."""
    src = _ReaderSource()
    if not _contains(s.versions, v):
        src.emit(1, "raise _Refused")
        names: list[tuple[str, str]] = []
    else:
        flexible = _contains(s.flexible, v)
        names = []
        for f in s.fields:
            out = src.var()
            names.append((f.json_name, out))
            if not f.present(v) or (flexible and f.is_tagged(v)):
                src.emit(1, f"{out} = {src.const(f.default)}")
            else:
                src.field(1, out, f, v, flexible)
        if flexible:
            tagged = {f.tag: (f, dict(names)[f.json_name]) for f in s.fields
                      if f.tag is not None and f.is_tagged(v)}
            src.emit(1, "if p < end and buf[p] == 0:")
            src.emit(2, "p += 1")     # no tagged fields: the common case
            src.emit(1, "else:")
            src.emit(2, "k, p = _uv(buf, p, end)")
            src.emit(2, "for _ in range(k):")
            src.emit(3, "tag, p = _uv(buf, p, end)")
            src.emit(3, "size, p = _uv(buf, p, end)")
            src.emit(3, "if size < 0 or p + size > end: raise _Refused")
            if tagged:
                src.emit(3, "stop = p + size")
                for i, (tag, (f, out)) in enumerate(sorted(tagged.items())):
                    src.emit(3, f"{'if' if i == 0 else 'elif'} tag == {tag}:")
                    src.emit(4, "outer_end, end = end, stop")
                    src.field(4, out, f, v, flexible)
                    src.emit(4, "end = outer_end")
                    src.emit(4, "if p != stop: raise _Refused")
                src.emit(3, "else:")
                src.emit(4, "p = stop")    # unknown tags are skipped (Kafka keeps them opaque)
            else:
                src.emit(3, "p += size")
    body = ", ".join(f"{k!r}: {out}" for k, out in names)
    src.emit(1, f"return {{{body}}}, p")
    return src.function("def reader(buf, p, end):", f"<kafkalog reader {s.name} v{v}>")


# ----------------------------------------------------------------------------------------------
# Writing
# ----------------------------------------------------------------------------------------------

def _uvarint(n: int) -> bytes:
    n &= 0xFFFFFFFF
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _write_len(out: bytearray, n: int, flexible: bool, wide: bool) -> None:
    if flexible:
        out += _uvarint(n + 1)
    else:
        out += struct.pack(">i" if wide else ">h", n)


def _write_value(out: bytearray, f: Field, value: Any, v: int, flexible: bool,
                 in_array: bool) -> None:
    t = f.type
    if t in _FIXED:
        fmt = _FIXED[t][0]
        out += struct.pack(fmt, value)
    elif t == "bool":
        out.append(1 if value else 0)
    elif t == "uuid":
        out += uuid_from_str(value)
    elif t == "string":
        if value is None:
            if in_array or not f.is_nullable(v):
                raise ValueError(f"field {f.name} is not nullable in version {v}")
            _write_len(out, -1, flexible, False)
        else:
            raw = value.encode("utf-8")
            if len(raw) > 0x7FFF:
                raise ValueError(f"string field {f.name} longer than 32767 bytes")
            _write_len(out, len(raw), flexible, False)
            out += raw
    elif t in ("bytes", "records"):
        if value is None:
            if not f.is_nullable(v):
                raise ValueError(f"field {f.name} is not nullable in version {v}")
            _write_len(out, -1, flexible, True)
        else:
            _write_len(out, len(value), flexible, True)
            out += bytes(value)
    else:
        assert f.struct is not None
        if not in_array and f.is_nullable(v):
            if value is None:
                out += b"\xff"
                return
            out += b"\x01"
        elif value is None:
            raise ValueError(f"field {f.name} is not nullable in version {v}")
        _write_struct(out, f.struct, value, v)


def _write_field(out: bytearray, f: Field, value: Any, v: int, flexible: bool) -> None:
    if f.is_array:
        if value is None:
            if not f.is_nullable(v):
                raise ValueError(f"field {f.name} is not nullable in version {v}")
            _write_len(out, -1, flexible, True)
            return
        _write_len(out, len(value), flexible, True)
        for item in value:
            _write_value(out, f, item, v, flexible, in_array=True)
    else:
        _write_value(out, f, value, v, flexible, in_array=False)


def _write_struct(out: bytearray, s: Struct, obj: dict[str, Any], v: int) -> None:
    if not _contains(s.versions, v):
        raise ValueError(f"Can't write version {v} of {s.name}")
    flexible = _contains(s.flexible, v)
    tagged: list[tuple[int, bytes]] = []
    for f in s.fields:
        value = obj.get(f.json_name, f.default)
        if not f.present(v):
            continue
        if flexible and f.is_tagged(v):
            if value != f.default:
                buf = bytearray()
                _write_field(buf, f, value, v, flexible)
                tagged.append((f.tag, bytes(buf)))     # type: ignore[arg-type]
            continue
        _write_field(out, f, value, v, flexible)
    if flexible:
        tagged.sort()
        out += _uvarint(len(tagged))
        for tag, data in tagged:
            out += _uvarint(tag) + _uvarint(len(data)) + data


def write(schema: Struct, obj: dict[str, Any], version: int) -> bytes:
    """Encode ``obj`` (camelCase keys; missing keys take the field default) at ``version``.

    Raises ``ValueError`` for values the schema cannot carry (null in a non-nullable field,
    out-of-range integers, an unsupported version).
    """
    out = bytearray()
    try:
        _write_struct(out, schema, obj, version)
    except struct.error as e:
        raise ValueError(f"cannot encode {schema.name} v{version}: {e}") from None
    return bytes(out)


# ----------------------------------------------------------------------------------------------
# JSON (the generated *JsonConverter.write, then Jackson's ObjectNode.toString)
# ----------------------------------------------------------------------------------------------

def _value_json(f: Field, value: Any, v: int) -> Any:
    if value is None:
        return None
    if f.is_array:
        return [_elem_json(f, x, v) for x in value]
    return _elem_json(f, value, v)


def _elem_json(f: Field, value: Any, v: int) -> Any:
    if f.struct is not None:
        return None if value is None else to_json(f.struct, value, v)
    if f.type == "float64":
        return float(value)
    if f.type == "records":
        return b""                               # JsonConverter prints records as empty binary
    return value


def to_json(schema: Struct, obj: dict[str, Any], version: int) -> dict[str, Any]:
    """The JSON tree Kafka's generated ``<Name>JsonConverter.write(obj, version)`` returns.

    ``bytes`` values stay ``bytes`` and ``float64`` values ``float`` so :func:`dumps` can print
    them as Jackson does (base64; Java ``Double.toString``).
    """
    if not _contains(schema.versions, version):
        raise ValueError(f"Can't write version {version} of {schema.name}")
    node: dict[str, Any] = {}
    for f in schema.fields:
        if not f.present(version):
            continue
        value = obj.get(f.json_name, f.default)
        if f.is_tagged(version) and value == f.default:
            continue                             # tagged fields only when not the default
        node[f.json_name] = _value_json(f, value, version)
    return node


def json_text(schema: Struct, obj: dict[str, Any], version: int) -> RawJson:
    """``dumps(to_json(schema, obj, version))``, through a writer generated per struct version
    on first use (no intermediate tree); raises as :func:`to_json` does.

    >>> from kafkalog.decoders import _schemas
    >>> s = compile_schema(_schemas.METADATA[2])
    >>> json_text(s, {"name": "t", "topicId": "AAAAAAAAAAAAAAAAAAAAAQ"}, 0)
    '{"name":"t","topicId":"AAAAAAAAAAAAAAAAAAAAAQ"}'
    """
    return RawJson(_generated(schema.json_writers, schema, version,
                              _generate_json_writer)(obj))


def _generate_json_writer(s: Struct, v: int) -> Any:
    """``writer(obj) -> str``: the text of ``dumps(to_json(s, obj, v))`` (tests compare the two
    on every schema and version). A value of an unexpected Python type goes through
    :func:`dumps`, as the tree would."""
    src = GeneratedSource({"_dumps": dumps, "_jstr": _jstr})
    src.emit(1, "parts = []")
    src.emit(1, "get = obj.get")
    if not _contains(s.versions, v):
        refusal = f"Can't write version {v} of {s.name}"    # (to_json's error)
        src.emit(1, f"raise ValueError({refusal!r})")
    for f in s.fields:
        if not f.present(v):
            continue
        d = src.const(f.default)
        src.emit(1, f"x = get({f.json_name!r}, {d})")
        ind = 1
        if f.is_tagged(v):
            src.emit(1, f"if x != {d}:")     # tagged fields only when not the default
            ind = 2
        key = _jstr(f.json_name) + ":"
        w = "_none"
        if f.struct is not None:
            w = src.const(_generated(f.struct.json_writers, f.struct, v, _generate_json_writer))
        if f.is_array:
            text = f"('null' if x is None else '[' + ','.join([{_json_elem(f, 'e', w)} " \
                   "for e in x]) + ']')"
        else:
            text = f"('null' if x is None else {_json_elem(f, 'x', w)})"
        src.emit(ind, f"parts.append({key!r} + {text})")
    src.emit(1, "return '{' + ','.join(parts) + '}'")
    return src.function("def writer(obj):", f"<kafkalog json writer {s.name} v{v}>")


def _json_elem(f: Field, var: str, writer: str) -> str:
    """The expression printing one value ``var`` of ``f``'s element type (``_elem_json`` then
    ``dumps``); ``writer``: the struct's generated writer's name."""
    if f.struct is not None:
        return f"('null' if {var} is None else {writer}({var}))"
    if f.type == "records":
        return "'\"\"'"                           # JsonConverter prints records as empty binary
    if f.type == "float64":
        return f"_dumps(float({var}))"
    if f.type in ("string", "uuid"):
        return f"(_jstr({var}) if type({var}) is str else _dumps({var}))"
    if f.type in _FIXED:
        return f"(str({var}) if type({var}) is int else _dumps({var}))"
    return f"_dumps({var})"


_ESC = {0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r", 0x22: '\\"',
        0x5C: "\\\\"}


_NEEDS_ESCAPE = re.compile(r'[\x00-\x1f"\\]')


def _jstr(s: str) -> str:
    """Jackson's string escaping: short escapes, other controls as uppercase ``\\u00XX``."""
    if _NEEDS_ESCAPE.search(s) is None:
        return f'"{s}"'  # (most strings: nothing to escape, no per-character loop)
    out = ['"']
    for ch in s:
        o = ord(ch)
        if o < 0x20 or o == 0x22 or o == 0x5C:
            out.append(_ESC.get(o) or f"\\u{o:04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def java_double(d: float) -> str:
    """Java's ``Double.toString`` (shortest repr; scientific outside [1e-3, 1e7))."""
    return _java_floating(d, repr)


def java_float(f: float) -> str:
    """Java's ``Float.toString`` of the float32 nearest ``f``: the shortest digits that read
    back as that float32 (not as a double), scientific outside [1e-3, 1e7) as for doubles.

    >>> java_float(0.1), java_float(1e10), java_float(3.4028234663852886e38)
    ('0.1', '1.0E10', '3.4028235E38')
    """
    import numpy as np

    return _java_floating(float(np.float32(f)), lambda a: str(np.float32(a)))


def _java_floating(d: float, shortest: Callable[[float], str]) -> str:
    if math.isnan(d):
        return "NaN"
    if math.isinf(d):
        return "Infinity" if d > 0 else "-Infinity"
    if d == 0:
        return "-0.0" if math.copysign(1.0, d) < 0 else "0.0"
    sign = "-" if d < 0 else ""
    a = abs(d)
    digits, exp = _shortest_digits(shortest(a))  # a = 0.d1d2... * 10**exp
    if 1e-3 <= a < 1e7:
        point = exp
        if point <= 0:
            s = "0." + "0" * (-point) + digits
        elif point >= len(digits):
            s = digits + "0" * (point - len(digits)) + ".0"
        else:
            s = digits[:point] + "." + digits[point:]
        return sign + s
    mant = digits[0] + "." + (digits[1:] or "0")
    return f"{sign}{mant}E{exp - 1}"


def _shortest_digits(r: str) -> tuple[str, int]:
    # r: Python's repr (numpy's str for float32), the shortest text that round-trips
    if "e" in r or "E" in r:
        m, e = r.lower().split("e")
        e10 = int(e)
    else:
        m, e10 = r, 0
    if "." in m:
        ip, fp = m.split(".")
    else:
        ip, fp = m, ""
    digits = (ip + fp).lstrip("0")
    lead_zeros = len(ip + fp) - len((ip + fp).lstrip("0"))
    point = len(ip) + e10 - lead_zeros
    digits = digits.rstrip("0") or "0"
    return digits, point


class RawJson(str):
    """Text already in Jackson's form (from :func:`json_text`): :func:`dumps` copies it."""


def dumps(node: Any) -> str:
    """Serialize a tree from :func:`to_json` exactly as Jackson's ``JsonNode.toString()``."""
    if type(node) is RawJson:
        return node
    if node is None:
        return "null"
    if node is True:
        return "true"
    if node is False:
        return "false"
    if isinstance(node, int):
        return str(node)
    if isinstance(node, float):
        d = java_double(node)
        return d if d[-1].isdigit() else f'"{d}"'   # Jackson quotes NaN/Infinity
    if isinstance(node, str):
        return _jstr(node)
    if isinstance(node, (bytes, bytearray, memoryview)):
        return '"' + base64.b64encode(bytes(node)).decode("ascii") + '"'
    if isinstance(node, dict):
        return "{" + ",".join(f"{_jstr(k)}:{dumps(v)}" for k, v in node.items()) + "}"
    if isinstance(node, (list, tuple)):
        return "[" + ",".join(dumps(x) for x in node) + "]"
    raise TypeError(f"cannot serialize {type(node).__name__}")
