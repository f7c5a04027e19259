"""What the server needs to know about a kio message class: its fields, in wire order.

kio generates one frozen dataclass per message version from Kafka's JSON schemas; each field's
type says whether it is a primitive, a nested struct or an array of either, and its metadata
carries the Kafka type (``int32``, ``string``, ``records``...) and, for tagged fields, the tag.
:func:`field_plans` reads that once per class for :func:`kafkalog.server.protocol.build` and
:func:`kafkalog.server.bounds.check_frame`.

Threads: pure; plans are cached per class.

Example
-------
>>> from kio.index import load_request_schema
>>> [(p.name, p.kind, p.kafka_type) for p in field_plans(load_request_schema(18, 3))]
[('client_software_name', 0, 'string'), ('client_software_version', 0, 'string')]
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from typing import Any, NamedTuple

__all__ = ["PRIMITIVE", "PRIMITIVE_ARRAY", "ENTITY", "ENTITY_ARRAY", "FieldPlan",
           "field_plans"]

PRIMITIVE, PRIMITIVE_ARRAY, ENTITY, ENTITY_ARRAY = range(4)


class FieldPlan(NamedTuple):
    """One field of a kio message class."""

    name: str
    #: PRIMITIVE, PRIMITIVE_ARRAY, ENTITY or ENTITY_ARRAY
    kind: int
    #: the nested dataclass of ENTITY / ENTITY_ARRAY fields
    entity: Any
    #: Kafka's type of the value (of the elements, for arrays); None for structs
    kafka_type: str | None
    #: the Python type admits None (a nullable field)
    optional: bool
    #: the dataclass has a default (the schema's default, or a tagged field's)
    has_default: bool
    #: the tag of a tagged field, else None
    tag: int | None


def _strip_optional(t: Any) -> tuple[Any, bool]:
    if typing.get_origin(t) in (types.UnionType, typing.Union):
        args = [a for a in typing.get_args(t) if a is not type(None)]
        return args[0], len(args) != len(typing.get_args(t))
    return t, False


@functools.cache
def field_plans(cls: type) -> tuple[FieldPlan, ...]:
    """The fields of kio message class ``cls`` in declaration (wire) order."""
    plans = []
    for f in dataclasses.fields(cls):
        t, optional = _strip_optional(f.type)
        if typing.get_origin(t) is tuple:
            inner, _ = _strip_optional(typing.get_args(t)[0])
            kind = ENTITY_ARRAY if dataclasses.is_dataclass(inner) else PRIMITIVE_ARRAY
            entity = inner if kind == ENTITY_ARRAY else None
        elif dataclasses.is_dataclass(t):
            kind, entity = ENTITY, t
        else:
            kind, entity = PRIMITIVE, None
        has_default = (f.default is not dataclasses.MISSING
                       or f.default_factory is not dataclasses.MISSING)
        tag = f.metadata.get("tag")
        plans.append(FieldPlan(f.name, kind, entity, f.metadata.get("kafka_type"), optional,
                               has_default, None if tag is None else int(tag)))
    return tuple(plans)
