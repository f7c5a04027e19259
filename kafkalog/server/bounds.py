"""Length bounds of a request frame, checked before kio parses it.

Why this exists: kio 0.6.5's native reader (``_kio_native``, Rust) reserves an array's storage
from the element count read off the wire before reading any element, so a count of a few
billion in a frame of a few bytes makes the allocation fail and Rust aborts the whole process
(``memory allocation of N bytes failed``): one malformed frame would take the server and every
client down. Kafka's own generated readers check each count against the bytes left
(``ByteBufferAccessor``/``readArray`` throw ``RecordTooLargeException``/``BufferUnderflow``).

:func:`check_frame` walks the frame with the same schema kio reads (field order, legacy or
compact encodings, nullable structs, tagged fields) and refuses any array count, string or byte
length that exceeds the bytes left, with :class:`~kafkalog.server.errors.ProtocolError`. It
only skips over values; kio still does the parse. The walk is per field, in Python: a produce or
fetch request costs tens of microseconds.

Threads: pure functions; the per-class plans are cached.

Example
-------
>>> from kio.index import load_request_schema
>>> cls = load_request_schema(3, 12)                       # Metadata v12 (flexible)
>>> frame = bytes.fromhex("0003000c00000001ffff00") + b"\\xff\\xff\\xff\\xff\\x0f"  # 2**32 topics
>>> check_frame(cls, frame)
Traceback (most recent call last):
...
kafkalog.server.errors.ProtocolError: position 16: array of 4294967294 elements in 0 bytes ...
"""

from __future__ import annotations

import functools
import struct

from .errors import ProtocolError
from .schema import ENTITY, PRIMITIVE, PRIMITIVE_ARRAY, FieldPlan, field_plans

__all__ = ["check_frame"]

_FIXED = {"int8": 1, "int16": 2, "int32": 4, "int64": 8, "uint16": 2, "uint32": 4,
          "uint64": 8, "float64": 8, "bool": 1, "uuid": 16, "error_code": 2,
          "timedelta_i32": 4, "timedelta_i64": 8, "datetime_i64": 8}
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")

@functools.cache
def _fields(cls: type) -> tuple[tuple[FieldPlan, ...], dict[int, FieldPlan]]:
    """The untagged fields in wire order, and the tagged ones by tag."""
    plans = field_plans(cls)
    return (tuple(p for p in plans if p.tag is None),
            {p.tag: p for p in plans if p.tag is not None})


class _Walker:
    __slots__ = ("buf", "end", "what")

    def __init__(self, buf: bytes | memoryview, end: int, what: str) -> None:
        self.buf = buf
        self.end = end
        self.what = what

    def fail(self, pos: int, message: str) -> ProtocolError:
        return ProtocolError(f"{message} in {self.what} (frame of {self.end} bytes)",
                             position=pos)

    def need(self, pos: int, n: int, end: int) -> int:
        if n < 0 or pos + n > end:
            raise self.fail(pos, f"{n} bytes needed, {end - pos} left")
        return pos + n

    def uvarint(self, pos: int, end: int) -> tuple[int, int]:
        value = shift = 0
        while True:
            if pos >= end:
                raise self.fail(pos, "varint runs past the end")
            b = self.buf[pos]
            pos += 1
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value, pos
            shift += 7
            if shift > 63:
                raise self.fail(pos, "varint longer than 10 bytes")

    def length(self, pos: int, end: int, flexible: bool, wide: bool) -> tuple[int, int]:
        """A string/bytes length or an array count: -1 for null."""
        if flexible:
            n, pos = self.uvarint(pos, end)
            return n - 1, pos
        if wide:
            self.need(pos, 4, end)
            return _I32.unpack_from(self.buf, pos)[0], pos + 4
        self.need(pos, 2, end)
        return _I16.unpack_from(self.buf, pos)[0], pos + 2

    def primitive(self, kafka_type: str | None, pos: int, end: int, flexible: bool) -> int:
        size = _FIXED.get(kafka_type or "")
        if size is not None:
            return self.need(pos, size, end)
        n, pos = self.length(pos, end, flexible, kafka_type != "string")
        if n < -1:
            raise self.fail(pos, f"negative length {n}")
        return self.need(pos, max(n, 0), end)

    def field(self, f: FieldPlan, pos: int, end: int, flexible: bool, header: bool) -> int:
        if f.kind == PRIMITIVE:
            if header and f.name == "client_id":  # always a legacy nullable string
                return self.primitive("string", pos, end, False)
            return self.primitive(f.kafka_type, pos, end, flexible)
        if f.kind == ENTITY:
            if f.optional and f.tag is None:  # KIP-893 nullable struct: int8 marker
                self.need(pos, 1, end)
                if self.buf[pos] == 0xFF:
                    return pos + 1
                pos += 1
            return self.entity(f.entity, pos, end)
        count, pos = self.length(pos, end, flexible, True)
        if count < -1:
            raise self.fail(pos, f"negative array length {count}")
        if count > end - pos:
            raise self.fail(pos, f"array of {count} elements in {end - pos} bytes")
        for _ in range(max(count, 0)):
            if f.kind == PRIMITIVE_ARRAY:
                pos = self.primitive(f.kafka_type, pos, end, flexible)
            else:
                pos = self.entity(f.entity, pos, end)
        return pos

    def entity(self, cls: type, pos: int, end: int, header: bool = False) -> int:
        flexible = bool(cls.__flexible__)
        plain, tagged = _fields(cls)
        for f in plain:
            pos = self.field(f, pos, end, flexible, header)
        if flexible:
            count, pos = self.uvarint(pos, end)
            if count > end - pos:
                raise self.fail(pos, f"{count} tagged fields in {end - pos} bytes")
            for _ in range(count):
                tag, pos = self.uvarint(pos, end)
                size, pos = self.uvarint(pos, end)
                stop = self.need(pos, size, end)
                known = tagged.get(tag)
                if known is not None:
                    self.field(known, pos, stop, flexible, header)
                pos = stop
        return pos


def check_frame(cls: type, frame: bytes | memoryview) -> None:
    """Refuse ``frame`` (header + body of request class ``cls``) when a length or count in it
    exceeds the bytes left (see the module docstring).

    Raises
    ------
    ProtocolError
        The first such length, with its byte position.
    """
    walker = _Walker(frame, len(frame), f"{cls.__name__} v{cls.__version__}")
    pos = walker.entity(cls.__header_schema__, 0, len(frame), header=True)
    walker.entity(cls, pos, len(frame))
