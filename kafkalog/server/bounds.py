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
only skips over values; kio still does the parse.

Two forms of the same walk. :class:`_Walker` interprets the schema field by field and words the
error; per request class a function generated from the same plans (:func:`_checker`: no
dispatch per field, runs of fixed-width fields skipped in one step) only answers "does the walk
succeed": 6 us of a small Produce request and 1.6 ms of a 1,000-partition Fetch for the
interpreter, 4-6x less generated (``protocol.check.*`` in benchmarks/RESULTS.md). A frame the
generated check refuses is walked again by the interpreter, whose error is raised. Invariant
(``tests/server/test_bounds.py``, hypothesis over every request class kio has, on kio's own
frames cut short and overwritten): the generated check accepts a frame iff the interpreter
does.

Threads: pure functions; the per-class plans and checkers are cached.

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
from typing import Any

from ..generated_code import GeneratedSource
from .errors import ProtocolError
from .schema import ENTITY, PRIMITIVE, PRIMITIVE_ARRAY, FieldPlan, field_plans

__all__ = ["check_frame", "walk_frame"]

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


class _Refused(Exception):
    """A length or count the walk refuses (args, when known: position and message)."""


def _uvarint(buf: bytes | memoryview, pos: int, end: int) -> tuple[int, int]:
    """An unsigned varint at ``pos``: ``(value, position after it)``; refused when it runs
    past ``end`` or is longer than 10 bytes."""
    value = shift = 0
    while True:
        if pos >= end:
            raise _Refused(pos, "varint runs past the end")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise _Refused(pos, "varint longer than 10 bytes")


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
        try:
            return _uvarint(self.buf, pos, end)
        except _Refused as e:
            raise self.fail(*e.args) from None

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
    end = len(frame)
    try:
        _checker(cls)(frame, _checker(cls.__header_schema__, True)(frame, 0, end), end)
        return
    except (_Refused, IndexError, struct.error):
        pass  # the interpreter finds the field and words the error
    walk_frame(cls, frame)


def walk_frame(cls: type, frame: bytes | memoryview) -> None:
    """:func:`check_frame` by the interpreting walker alone (the reference)."""
    walker = _Walker(frame, len(frame), f"{cls.__name__} v{cls.__version__}")
    pos = walker.entity(cls.__header_schema__, 0, len(frame), header=True)
    walker.entity(cls, pos, len(frame))


# -- the generated checks ---------------------------------------------------------------------


_I16_AT = _I16.unpack_from
_I32_AT = _I32.unpack_from
_CHECKERS: dict[tuple[type, bool], Any] = {}


def _checker(cls: type, header: bool = False) -> Any:
    """``check(buf, pos, end) -> pos``: the walk of an entity of ``cls`` at ``pos``,
    generated once per class (raises :class:`_Refused` where the walker raises)."""
    f = _CHECKERS.get((cls, header))
    if f is None:
        f = _CHECKERS[(cls, header)] = _generate_checker(cls, header)
    return f


class _CheckSource(GeneratedSource):
    def __init__(self) -> None:
        super().__init__({"_Refused": _Refused, "_uvarint": _uvarint, "_I16_AT": _I16_AT,
                          "_I32_AT": _I32_AT})
        self.skip = 0  # fixed bytes walked over but not yet checked

    def flush(self, ind: int, end: str) -> None:
        # need(pos, n) for each of a run of fixed fields fails iff it fails for their sum
        if self.skip:
            self.emit(ind, f"p += {self.skip}")
            self.emit(ind, f"if p > {end}: raise _Refused")
            self.skip = 0

    def uvarint(self, ind: int, out: str, end: str) -> None:
        self.emit(ind, f"if p < {end} and buf[p] < 128:")
        self.emit(ind + 1, f"{out} = buf[p]")
        self.emit(ind + 1, "p += 1")
        self.emit(ind, "else:")
        self.emit(ind + 1, f"{out}, p = _uvarint(buf, p, {end})")

    def length(self, ind: int, out: str, end: str, flexible: bool, wide: bool) -> None:
        """The walker's ``length``: -1 for null."""
        if flexible:
            self.uvarint(ind, out, end)
            self.emit(ind, f"{out} -= 1")
        elif wide:
            self.emit(ind, f"if p + 4 > {end}: raise _Refused")
            self.emit(ind, f"{out} = _I32_AT(buf, p)[0]")
            self.emit(ind, "p += 4")
        else:
            self.emit(ind, f"if p + 2 > {end}: raise _Refused")
            self.emit(ind, f"{out} = _I16_AT(buf, p)[0]")
            self.emit(ind, "p += 2")

    def primitive(self, ind: int, kafka_type: str | None, end: str, flexible: bool) -> None:
        size = _FIXED.get(kafka_type or "")
        if size is not None:
            self.skip += size
            return
        self.flush(ind, end)
        self.length(ind, "n", end, flexible, kafka_type != "string")
        self.emit(ind, "if n < -1: raise _Refused")
        self.emit(ind, "if n > 0:")
        self.emit(ind + 1, "p += n")
        self.emit(ind + 1, f"if p > {end}: raise _Refused")

    def field(self, ind: int, f: FieldPlan, end: str, flexible: bool, header: bool,
              depth: int) -> None:
        if f.kind == PRIMITIVE:
            if header and f.name == "client_id":  # always a legacy nullable string
                self.primitive(ind, "string", end, False)
            else:
                self.primitive(ind, f.kafka_type, end, flexible)
            return
        self.flush(ind, end)
        if f.kind == ENTITY:
            check = self.const(_LazyChecker(f.entity))
            if f.optional and f.tag is None:  # KIP-893 nullable struct: int8 marker
                self.emit(ind, f"if p + 1 > {end}: raise _Refused")
                self.emit(ind, "if buf[p] == 0xFF:")
                self.emit(ind + 1, "p += 1")
                self.emit(ind, "else:")
                self.emit(ind + 1, f"p = {check}(buf, p + 1, {end})")
            else:
                self.emit(ind, f"p = {check}(buf, p, {end})")
            return
        count = f"k{depth}"
        self.length(ind, count, end, flexible, True)
        self.emit(ind, f"if {count} < -1 or {count} > {end} - p: raise _Refused")
        if f.kind == PRIMITIVE_ARRAY:
            size = _FIXED.get(f.kafka_type or "")
            if size is not None:  # the elements' bytes at once
                self.emit(ind, f"if {count} > 0:")
                self.emit(ind + 1, f"p += {count} * {size}")
                self.emit(ind + 1, f"if p > {end}: raise _Refused")
                return
            self.emit(ind, f"for _ in range({count}):")
            self.primitive(ind + 1, f.kafka_type, end, flexible)
            self.flush(ind + 1, end)
            return
        check = self.const(_LazyChecker(f.entity))
        self.emit(ind, f"for _ in range({count}):")
        self.emit(ind + 1, f"p = {check}(buf, p, {end})")


class _LazyChecker:
    """A nested struct's check, generated on first use."""

    __slots__ = ("cls", "f")

    def __init__(self, cls: type) -> None:
        self.cls = cls
        self.f: Any = None

    def __call__(self, buf: bytes | memoryview, pos: int, end: int) -> int:
        f = self.f
        if f is None:
            f = self.f = _checker(self.cls)
        return f(buf, pos, end)  # type: ignore[no-any-return]


def _generate_checker(cls: type, header: bool) -> Any:
    flexible = bool(cls.__flexible__)
    plain, tagged = _fields(cls)
    src = _CheckSource()
    for f in plain:
        src.field(1, f, "end", flexible, header, 0)
    src.flush(1, "end")
    if flexible:
        src.uvarint(1, "t", "end")
        src.emit(1, "if t > end - p: raise _Refused")
        src.emit(1, "for _ in range(t):")
        src.uvarint(2, "tag", "end")
        src.uvarint(2, "size", "end")
        src.emit(2, "stop = p + size")
        src.emit(2, "if stop > end: raise _Refused")
        for i, (tag, f) in enumerate(sorted(tagged.items())):
            src.emit(2, f"{'if' if i == 0 else 'elif'} tag == {tag}:")
            # (the walker checks a known tagged field within its size, then skips to stop)
            src.field(3, f, "stop", flexible, header, 1)
            src.flush(3, "stop")
        src.emit(2, "p = stop")
    src.emit(1, "return p")
    return src.function("def check(buf, p, end):",
                        f"<kafkalog check {cls.__qualname__} v{cls.__version__}>")
