"""Response writers generated from kio's schemas: a handler's plain values straight to bytes.

The reference path is :func:`kafkalog.server.protocol.build` (plain values to kio's frozen
dataclass of the version) then kio's ``entity_writer`` (the dataclass to bytes). Both walk the
fields generically, per value, through kio's phantom-type checks: 14 us of the ~60 us a small
Produce request costs the server, and 11 of the 17 ms an empty Fetch of 1,000 partitions cost
(``python benchmarks/bench_server.py``; RESULTS.md, server).

:func:`response_writer` generates, once per kio message class, one Python function that writes
the class's fields in wire order straight from the handler's mapping. Nothing in it is written
per message: the code is derived from kio's dataclass fields and their Kafka types (the same
:func:`~kafkalog.server.schema.field_plans` ``build`` reads), with ``build``'s conversions
(error code ints, millisecond ints for durations and times, kafkalog ``Uuid``) and kio's
encodings (legacy or compact lengths, nullable strings, bytes, arrays and KIP-893 structs). Runs
of fixed-width fields are written by one ``struct`` call. Where the generic path is rare or
subtle it is used as it is:

* a value that is already the kio dataclass (a handler's ready struct) is written by kio;
* tagged fields (flexible versions) present in the mapping are converted by ``build`` and
  written by kio's own field writer, skipped when equal to kio's default exactly as kio skips
  them (absent ones with a schema default are that default: nothing to do, the common case).

Invariant: for every mapping ``values``, ``write(cls, values)`` gives the bytes of kio's
``entity_writer(cls)(build(cls, values))``, or both raise. ``tests/server/test_response_writers``
checks it for every response class kio has, on random values (hypothesis).

Threads: generated functions are pure; the cache is filled under the GIL (a race makes the
same function twice).

Example
-------
>>> from kio.index import load_response_schema
>>> cls = load_response_schema(18, 0)                          # ApiVersions v0
>>> out = []
>>> response_writer(cls)(out, {"error_code": 0, "api_keys": [
...     {"api_key": 18, "min_version": 0, "max_version": 3}]})
>>> b"".join(out).hex()
'000000000001001200000003'
"""

from __future__ import annotations

import dataclasses
import datetime
import io
import struct
import uuid
from collections.abc import Callable
from typing import Any

from kio.schema.errors import ErrorCode
from kio.serial import entity_writer
from kio.serial._implicit_defaults import get_tagged_field_default
from kio.serial._serialize import get_field_writer

from ..generated_code import GeneratedSource
from ..records.varint import encode_unsigned_varint
from .protocol import PiecesSink, field_value, response_class
from .schema import ENTITY, ENTITY_ARRAY, PRIMITIVE, FieldPlan, field_plans

__all__ = ["response_writer", "encode_response_values", "Writer"]

#: ``writer(out, values)``: appends the encoded message to the list ``out``
Writer = Callable[[list, Any], None]

# struct codes of the fixed-width Kafka types (uuid: its 16 raw bytes)
_FIXED = {"int8": "b", "int16": "h", "int32": "i", "int64": "q", "uint8": "B", "uint16": "H",
          "uint32": "I", "uint64": "Q", "float64": "d", "bool": "?", "error_code": "h",
          "timedelta_i32": "i", "timedelta_i64": "q", "datetime_i64": "q", "uuid": "16s"}
_ZERO_UUID = bytes(16)
_MISSING = object()
_ERROR_CODES = frozenset(int(c) for c in ErrorCode)
#: one-byte unsigned varints (lengths below 127: nearly every string and array)
_UV1 = tuple(bytes([n]) for n in range(128))
_I16 = struct.Struct(">h").pack
_I32 = struct.Struct(">i").pack


def _uv(n: int) -> bytes:
    """An unsigned varint (kio's ``write_unsigned_varint``, which refuses above 2**35 - 1)."""
    if 0 <= n < 128:
        return _UV1[n]
    if n > 2**35 - 1:
        raise ValueError(f"unsigned varint out of range: {n}")
    return encode_unsigned_varint(n)


# -- build's conversions, to the raw value kio writes ----------------------------------------

def _error_code(v: Any) -> int:
    # build: ErrorCode(int(v)) (an unknown code raises ValueError)
    t = type(v)
    if (t is int or t is ErrorCode) and v in _ERROR_CODES:
        return v
    return int(ErrorCode(int(v)))


def _timedelta(v: Any) -> int:
    # build: timedelta(milliseconds=int(v)); kio: round(total_seconds() * 1000)
    if type(v) is int:
        return v
    if isinstance(v, datetime.timedelta):
        return round(v.total_seconds() * 1000)
    return round(datetime.timedelta(milliseconds=int(v)).total_seconds() * 1000)


def _datetime(v: Any) -> int:
    # build: datetime.fromtimestamp(int(v) / 1000, utc); kio: round(timestamp() * 1000)
    if isinstance(v, datetime.datetime):
        return round(v.timestamp() * 1000)
    if v is None:
        raise TypeError("datetime field: None for a non-nullable field")
    return int(v)


def _nullable_datetime(v: Any) -> int:
    # build: a negative int is None (kio writes -1)
    if v is None:
        return -1
    if isinstance(v, datetime.datetime):
        return round(v.timestamp() * 1000)
    v = int(v)
    return -1 if v < 0 else v


def _uuid(v: Any) -> bytes:
    # build: a UUID as is, else kafkalog Uuid / bytes (all zeros: None); kio: None as zeros
    if v is None:
        return _ZERO_UUID
    if isinstance(v, uuid.UUID):
        return v.bytes
    raw = v.to_bytes() if hasattr(v, "to_bytes") else bytes(v)
    if len(raw) != 16:
        raise ValueError(f"a uuid of {len(raw)} bytes")
    return raw


_CONVERT = {"error_code": "_error_code", "timedelta_i32": "_timedelta",
            "timedelta_i64": "_timedelta", "uuid": "_uuid"}


def _fixed_conversion(p: FieldPlan, optional: bool) -> str | None:
    if p.kafka_type == "datetime_i64":
        return "_nullable_datetime" if optional else "_datetime"
    return _CONVERT.get(p.kafka_type or "")


def _kio_entity(cls: type) -> Callable[[list, Any], None]:
    w = entity_writer(cls)

    def write(out: list, value: Any) -> None:
        w(PiecesSink(out), value)

    return write


class _Tagged:
    """A tagged field written the generic way: ``build``'s conversion, kio's default check and
    kio's field writer (Kafka writes a tagged field only when it differs from its default)."""

    __slots__ = ("tag", "plan", "default", "writer")

    def __init__(self, field: dataclasses.Field, plan: FieldPlan) -> None:
        self.tag = plan.tag
        self.plan = plan
        self.default = get_tagged_field_default(field)
        self.writer = get_field_writer(field, flexible=True, is_request_header=False,
                                       is_tag=True)

    def encode(self, value: Any) -> bytes | None:
        """The tag, size and value bytes; None when ``value`` is the default (not written)."""
        value = field_value(self.plan, value)
        if value == self.default:
            return None
        buf = io.BytesIO()
        self.writer(buf, value)
        data = buf.getvalue()
        return _uv(self.tag) + _uv(len(data)) + data


_CACHE: dict[type, Writer] = {}


def response_writer(cls: type) -> Writer:
    """The generated writer of kio message class ``cls`` (see the module docstring):
    ``writer(out, values)`` appends the bytes of ``values`` (a mapping of snake_case field
    names, as :func:`~kafkalog.server.protocol.build` takes, or the kio dataclass itself) to
    the list ``out``.

    Raises (from the writer)
    ------------------------
    TypeError
        A field without a schema default is missing (a handler bug, never a client's), as
        ``build`` raises.
    """
    w = _CACHE.get(cls)
    if w is None:
        w = _CACHE[cls] = _generate(cls)
    return w


def _generate(cls: type) -> Writer:
    flexible = bool(cls.__flexible__)
    src = GeneratedSource({
        "_MISSING": _MISSING, "_uv": _uv, "_UV1": _UV1, "_I16": _I16, "_I32": _I32,
        "_error_code": _error_code, "_timedelta": _timedelta, "_datetime": _datetime,
        "_nullable_datetime": _nullable_datetime, "_uuid": _uuid})
    fields = {f.name: f for f in dataclasses.fields(cls)}
    src.emit(1, f"if type(v) is {src.const(cls)}:")
    src.emit(2, f"{src.const(_kio_entity(cls))}(out, v)")
    src.emit(2, "return")
    src.emit(1, "g = v.get")
    src.emit(1, "a = out.append")
    run: list[tuple[str, str]] = []  # (struct code, variable) of the fixed fields waiting

    def flush() -> None:
        if run:
            fmt = ">" + "".join(code for code, _ in run)
            packer = src.const(struct.Struct(fmt).pack)
            src.emit(1, f"a({packer}({', '.join(x for _, x in run)}))")
            run.clear()

    plans = field_plans(cls)
    for p in plans:
        if p.tag is not None:
            continue
        x = src.var()
        src.emit(1, f"{x} = g({p.name!r}, _MISSING)")
        src.emit(1, f"if {x} is _MISSING:")
        f = fields[p.name]
        if p.has_default:
            default = f.default if f.default is not dataclasses.MISSING \
                else f.default_factory()  # type: ignore[misc]
            src.emit(2, f"{x} = {src.const(default)}")
        elif p.optional:
            src.emit(2, f"{x} = None")
        else:
            message = f"{cls.__qualname__} v{cls.__version__}: field {p.name!r} missing"
            src.emit(2, f"raise TypeError({message!r})")
        if p.kind == PRIMITIVE and (p.kafka_type in _FIXED):
            conv = _fixed_conversion(p, p.optional)
            if conv is not None:
                src.emit(1, f"{x} = {conv}({x})")
            run.append((_FIXED[p.kafka_type], x))  # type: ignore[index]
            continue
        flush()
        if p.kind == PRIMITIVE:
            _variable(src, 1, x, p, flexible, p.optional, field=True)
        elif p.kind == ENTITY:
            w = src.const(_LazyWriter(p.entity))
            if p.optional:  # KIP-893 nullable struct: an int8 marker
                src.emit(1, f"if {x} is None:")
                src.emit(2, "a(b'\\xff')")
                src.emit(1, "else:")
                src.emit(2, "a(b'\\x01')")
                src.emit(2, f"{w}(out, {x})")
            else:
                src.emit(1, f"{w}(out, {x})")
        else:
            _array(src, x, p, flexible)
    flush()
    if flexible:
        tagged = sorted((p for p in plans if p.tag is not None), key=lambda p: p.tag)
        if not tagged:
            src.emit(1, "a(b'\\x00')")
        else:
            src.emit(1, "tags = []")
            for p in tagged:
                t = src.const(_Tagged(fields[p.name], p))
                x = src.var()
                src.emit(1, f"{x} = g({p.name!r}, _MISSING)")
                if not p.has_default:  # (build: required unless nullable, as untagged ones)
                    src.emit(1, f"if {x} is _MISSING:")
                    if p.optional:
                        src.emit(2, f"{x} = None")
                    else:
                        message = (f"{cls.__qualname__} v{cls.__version__}: field "
                                   f"{p.name!r} missing")
                        src.emit(2, f"raise TypeError({message!r})")
                src.emit(1, f"if {x} is not _MISSING:")
                src.emit(2, f"{x} = {t}.encode({x})")
                src.emit(2, f"if {x} is not None:")
                src.emit(3, f"tags.append({x})")
            src.emit(1, "a(_uv(len(tags)))")
            src.emit(1, "out.extend(tags)")
    return src.function(  # type: ignore[no-any-return]
        "def write(out, v):", f"<kafkalog response writer {cls.__qualname__} v{cls.__version__}>")


class _LazyWriter:
    """A nested struct's writer, generated on first use (schemas nest; some recursively)."""

    __slots__ = ("cls", "w")

    def __init__(self, cls: type) -> None:
        self.cls = cls
        self.w: Writer | None = None

    def resolve(self) -> Writer:
        w = self.w
        if w is None:
            w = self.w = response_writer(self.cls)
        return w

    def __call__(self, out: list, value: Any) -> None:
        (self.w or self.resolve())(out, value)


def _variable(src: GeneratedSource, ind: int, x: str, p: FieldPlan, flexible: bool, optional: bool,
              field: bool = False) -> None:
    """Lines writing string/bytes value ``x`` (kio's string and bytes writers); ``field``:
    ``x`` is a field's value (not an array element's)."""
    string = p.kafka_type == "string"
    if string and not optional and field:
        # build: None for a string not nullable in this version is "" (Kafka's writers)
        src.emit(ind, f"if {x} is None:")
        src.emit(ind + 1, f"{x} = ''")
    if flexible:
        if optional:
            src.emit(ind, f"if {x} is None:")
            src.emit(ind + 1, "a(b'\\x00')")
            src.emit(ind, "else:")
            ind += 1
        elif not string:
            src.emit(ind, f"if {x} is None:")
            src.emit(ind + 1, "raise TypeError('Unexpectedly received None value')")
        src.emit(ind, f"if isinstance({x}, str):")
        src.emit(ind + 1, f"{x} = {x}.encode()")
        src.emit(ind, f"n = len({x}) + 1")
        src.emit(ind, "a(_UV1[n] if n < 128 else _uv(n))")
        src.emit(ind, f"a({x})")
        return
    null = "b'\\xff\\xff'" if string else "b'\\xff\\xff\\xff\\xff'"
    if optional:
        src.emit(ind, f"if {x} is None:")
        src.emit(ind + 1, f"a({null})")
        src.emit(ind, "else:")
        ind += 1
    else:
        src.emit(ind, f"if {x} is None:")
        src.emit(ind + 1, "raise TypeError('Unexpectedly received None value')")
    if string:
        src.emit(ind, f"{x} = {x}.encode()")
        src.emit(ind, f"a(_I16(len({x})))")
    else:
        src.emit(ind, f"a(_I32(len({x})))")
    src.emit(ind, f"a({x})")


def _array(src: GeneratedSource, x: str, p: FieldPlan, flexible: bool) -> None:
    """Lines writing array ``x`` (kio's compact or legacy array writer)."""
    src.emit(1, f"if {x} is None:")
    src.emit(2, "a(b'\\x00')" if flexible else "a(b'\\xff\\xff\\xff\\xff')")
    src.emit(1, "else:")
    src.emit(2, f"if type({x}) is not tuple and type({x}) is not list:")
    src.emit(3, f"{x} = tuple({x})")
    if flexible:
        src.emit(2, f"n = len({x}) + 1")
        src.emit(2, "a(_UV1[n] if n < 128 else _uv(n))")
    else:
        src.emit(2, f"a(_I32(len({x})))")
    e = src.var()
    if p.kind == ENTITY_ARRAY:
        lazy = src.const(_LazyWriter(p.entity))
        src.emit(2, f"w = {lazy}.w or {lazy}.resolve()")  # (one lookup, not one per element)
        src.emit(2, f"for {e} in {x}:")
        src.emit(3, f"w(out, {e})")
        return
    src.emit(2, f"for {e} in {x}:")
    if p.kafka_type in _FIXED:
        conv = _fixed_conversion(p, False)
        value = f"{conv}({e})" if conv is not None else e
        packer = src.const(struct.Struct(">" + _FIXED[p.kafka_type]).pack)  # type: ignore[index]
        src.emit(3, f"a({packer}({value}))")
        return
    _variable(src, 3, e, p, flexible, False)


def encode_response_values(api_key: int, api_version: int, correlation_id: int,
                           values: Any) -> bytes:
    """The size-prefixed response frame of ``values`` (a mapping as
    :func:`~kafkalog.server.protocol.build` takes, or the kio response dataclass): the bytes
    of ``encode_response(api_key, api_version, correlation_id, build(cls, values))``.

    Examples
    --------
    >>> encode_response_values(18, 0, 7, {"error_code": 0, "api_keys": [
    ...     {"api_key": 18, "min_version": 0, "max_version": 3}]}).hex()
    '0000001000000007000000000001001200000003'
    """
    cls = response_class(api_key, api_version)
    out: list = [b""]
    response_writer(cls.__header_schema__)(out, {"correlation_id": correlation_id})
    response_writer(cls)(out, values)
    out[0] = _I32(sum(map(len, out)))
    return b"".join(out)
