"""Turn Spark's pushed filters into read bounds, deciding which filters are claimed.

Spark does **not** re-apply a filter the reader claims (measured: a claimed ``offset >= 8``
that was ignored returned every row). So a filter is claimed only when the rows the reader
returns satisfy it exactly:

* ``topic``: ``=``, ``<=>``, ``IN``, ``NOT =``, ``NOT IN``, ``LIKE 'x%'`` / ``'%x'`` / ``'%x%'``
  select whole topic-partitions: claimed.
* ``partition``: ``=``, ``<=>``, ``IN``, ``NOT =``, ``NOT IN``, ``<``, ``<=``, ``>``, ``>=``:
  select whole topic-partitions: claimed.
* ``offset``: the same comparisons: they narrow ``[start, end)`` (segments are pruned and the
  first batch is found with ``.index``), ``IN``/``NOT`` keep exact row masks; the decoder applies
  the range per record, so these are claimed.
* ``timestamp``: ``>``, ``>=``, ``=`` give a lower bound used to prune segments (segment max
  timestamp), seek with ``.timeindex`` and skip batches whose ``maxTimestamp`` is below it.
  CreateTime timestamps are not monotonic inside a partition, so rows are not filtered
  exactly: these filters are **returned** for Spark to evaluate.
* Everything else (``IsNotNull``, filters on key/value/headers, nested paths, nulls in ``IN``) is
  returned untouched.

The analysis is a pure function of the filter list (Spark's master branch replays
``pushFilters`` and requires the same answer).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Bounds", "analyze_filters"]

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


@dataclass
class Bounds:
    """What the claimed filters (and timestamp hints) allow. ``None`` means unrestricted."""

    topics: frozenset[str] | None = None
    topics_excluded: frozenset[str] = frozenset()
    topic_prefixes: tuple[str, ...] = ()
    topic_suffixes: tuple[str, ...] = ()
    topic_contains: tuple[str, ...] = ()
    partitions: frozenset[int] | None = None
    partitions_excluded: frozenset[int] = frozenset()
    partition_lo: int | None = None  # inclusive
    partition_hi: int | None = None  # inclusive
    offset_lo: int | None = None  # inclusive
    offset_hi: int | None = None  # exclusive
    offset_in: frozenset[int] | None = None
    offsets_excluded: frozenset[int] = frozenset()
    timestamp_lo_ms: int | None = None  # pruning hint only (never claimed)
    claimed: list[Any] = field(default_factory=list)

    def allows(self, topic: str, partition: int) -> bool:
        """Whether a topic-partition can hold rows passing the claimed filters."""
        if self.topics is not None and topic not in self.topics:
            return False
        if topic in self.topics_excluded:
            return False
        if any(not topic.startswith(p) for p in self.topic_prefixes):
            return False
        if any(not topic.endswith(p) for p in self.topic_suffixes):
            return False
        if any(p not in topic for p in self.topic_contains):
            return False
        if self.partitions is not None and partition not in self.partitions:
            return False
        if partition in self.partitions_excluded:
            return False
        if self.partition_lo is not None and partition < self.partition_lo:
            return False
        if self.partition_hi is not None and partition > self.partition_hi:
            return False
        return True

    def offset_range(self) -> tuple[int | None, int | None]:
        """``[lo, hi)`` implied by every offset filter (``IN`` included)."""
        lo, hi = self.offset_lo, self.offset_hi
        if self.offset_in is not None:
            if not self.offset_in:
                return 0, 0
            lo = max(lo, min(self.offset_in)) if lo is not None else min(self.offset_in)
            top = max(self.offset_in) + 1
            hi = min(hi, top) if hi is not None else top
        return lo, hi

    @property
    def has_row_mask(self) -> bool:
        """Whether reading must filter rows by offset beyond ``[start, end)``."""
        return self.offset_in is not None or bool(self.offsets_excluded)


def _intersect(a: frozenset | None, b: Iterable) -> frozenset:
    b = frozenset(b)
    return b if a is None else a & b


# (excluded-values field, wanted-values field) of the bounds for each integer column
_SET_FIELDS = {
    "partition": ("partitions_excluded", "partitions"),
    "offset": ("offsets_excluded", "offset_in"),
}


def _inclusive_bounds(inner: Any, value: int) -> tuple[int | None, int | None]:
    """The inclusive ``(lo, hi)`` an integer comparison filter sets (None: unbounded)."""
    from pyspark.sql.datasource import GreaterThan, GreaterThanOrEqual, LessThan, LessThanOrEqual

    if isinstance(inner, GreaterThan):
        return value + 1, None
    if isinstance(inner, GreaterThanOrEqual):
        return value, None
    if isinstance(inner, LessThan):
        return None, value - 1
    if isinstance(inner, LessThanOrEqual):
        return None, value
    return None, None


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _ts_ms_floor(v: Any) -> int | None:
    """A pushed timestamp value (tz-aware datetime; naive taken as UTC) -> floor milliseconds."""
    if not isinstance(v, _dt.datetime):
        return None
    if v.tzinfo is None:
        v = v.replace(tzinfo=_dt.timezone.utc)
    delta = v - _EPOCH
    us = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    return us // 1000


def analyze_filters(filters: Sequence[Any]) -> tuple[Bounds, list[Any]]:
    """Return ``(bounds, unsupported)``: ``unsupported`` are the filters Spark must still apply.

    >>> from pyspark.sql.datasource import EqualTo, GreaterThanOrEqual, IsNotNull
    >>> b, rest = analyze_filters([IsNotNull(("offset",)), GreaterThanOrEqual(("offset",), 3),
    ...                            EqualTo(("topic",), "orders")])
    >>> b.offset_lo, sorted(b.topics), rest
    (3, ['orders'], [IsNotNull(attribute=('offset',))])
    """
    from pyspark.sql.datasource import (
        EqualNullSafe,
        EqualTo,
        GreaterThan,
        GreaterThanOrEqual,
        In,
        Not,
        StringContains,
        StringEndsWith,
        StringStartsWith,
    )

    b = Bounds()
    rest: list[Any] = []
    for f in filters:
        claimed = False
        negated = isinstance(f, Not)
        inner = f.child if negated else f
        attr = getattr(inner, "attribute", None)
        col = attr[0] if isinstance(attr, tuple) and len(attr) == 1 else None
        value = getattr(inner, "value", None)
        is_eq = isinstance(inner, (EqualTo, EqualNullSafe))
        if col == "topic":
            if is_eq and isinstance(value, str):
                if negated:
                    b.topics_excluded = b.topics_excluded | {value}
                else:
                    b.topics = _intersect(b.topics, [value])
                claimed = True
            elif isinstance(inner, In) and all(isinstance(v, str) for v in value):
                if negated:
                    b.topics_excluded = b.topics_excluded | frozenset(value)
                else:
                    b.topics = _intersect(b.topics, value)
                claimed = True
            elif not negated and isinstance(value, str):
                if isinstance(inner, StringStartsWith):
                    b.topic_prefixes += (value,)
                    claimed = True
                elif isinstance(inner, StringEndsWith):
                    b.topic_suffixes += (value,)
                    claimed = True
                elif isinstance(inner, StringContains):
                    b.topic_contains += (value,)
                    claimed = True
        elif col in ("partition", "offset"):
            # partition bounds are inclusive, offset bounds [lo, hi) as in startingOffsets/
            # endingOffsets; both are applied exactly by read(), so they are claimed
            field = "partition" if col == "partition" else "offset"
            excluded, wanted = _SET_FIELDS[field]
            if is_eq and _is_int(value):
                values: Iterable = [value]
            elif isinstance(inner, In) and all(_is_int(v) for v in value):
                values = value
            else:
                values = None
            if values is not None:
                if negated:
                    setattr(b, excluded, getattr(b, excluded) | frozenset(values))
                else:
                    setattr(b, wanted, _intersect(getattr(b, wanted), values))
                claimed = True
            elif not negated and _is_int(value):
                lo, hi = _inclusive_bounds(inner, value)
                if hi is not None and field == "offset":
                    hi += 1
                if lo is not None:
                    cur = getattr(b, f"{field}_lo")
                    setattr(b, f"{field}_lo", lo if cur is None else max(cur, lo))
                    claimed = True
                if hi is not None:
                    cur = getattr(b, f"{field}_hi")
                    setattr(b, f"{field}_hi", hi if cur is None else min(cur, hi))
                    claimed = True
        elif col == "timestamp" and not negated:
            # pruning hint only: returned to Spark below
            if isinstance(inner, (GreaterThan, GreaterThanOrEqual, EqualTo, EqualNullSafe)):
                ms = _ts_ms_floor(value)
                if ms is not None:
                    b.timestamp_lo_ms = (
                        ms if b.timestamp_lo_ms is None else max(b.timestamp_lo_ms, ms)
                    )
        if claimed:
            b.claimed.append(f)
        else:
            rest.append(f)
    return b, rest
