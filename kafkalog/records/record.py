"""Records and record headers, the values batches yield and builders take.

A :class:`Record` is an immutable named tuple ``(key, value, timestamp, headers, offset)``:

* ``key`` / ``value``: ``bytes`` or ``None`` (a null key; a null value is a tombstone).
* ``timestamp``: milliseconds since the epoch, or ``None`` when writing (written as -1, Kafka's
  NO_TIMESTAMP). Records read back always carry an int (-1 when the batch has none).
* ``headers``: a tuple of ``(key: str, value: bytes | None)`` pairs (:class:`Header`), in order,
  duplicates allowed. Header keys are never null in Kafka; header values may be.
* ``offset``: the record's absolute offset, set on read; ``None`` when writing means "next".

Being a tuple it is cheap to build and compare; readers build millions of them.

>>> r = Record(b"k", b"v", timestamp=1700000000000, headers=[("h", b"x")])
>>> r.headers
(('h', b'x'),)
>>> r._replace(offset=7).offset
7
"""

from __future__ import annotations

from typing import NamedTuple

from ..native import optional_extension

__all__ = [
    "Record",
    "Header",
    "CREATE_TIME",
    "LOG_APPEND_TIME",
    "NO_TIMESTAMP_TYPE",
    "NO_TIMESTAMP",
]

#: Timestamp type names as Kafka's ``TimestampType.toString`` prints them.
CREATE_TIME = "CreateTime"
LOG_APPEND_TIME = "LogAppendTime"
NO_TIMESTAMP_TYPE = "NoTimestampType"
#: Kafka's ``RecordBatch.NO_TIMESTAMP``.
NO_TIMESTAMP = -1


class Header(NamedTuple):
    """One record header: a UTF-8 ``key`` and a ``value`` that may be ``None``."""

    key: str
    value: bytes | None


class _RecordFields(NamedTuple):
    key: bytes | None
    value: bytes | None
    timestamp: int | None = None
    headers: tuple[tuple[str, bytes | None], ...] = ()
    offset: int | None = None


class Record(_RecordFields):
    """One Kafka record (see the module docstring for the fields).

    ``headers`` may be given as any iterable of ``(key, value)`` pairs; it is stored as a tuple.

    Examples
    --------
    >>> Record(None, b"tombstone?").key is None
    True
    """

    __slots__ = ()

    def __new__(
        cls,
        key: bytes | None,
        value: bytes | None,
        timestamp: int | None = None,
        headers: object = (),
        offset: int | None = None,
    ) -> Record:
        if type(headers) is not tuple:
            headers = () if headers is None else tuple(headers)  # type: ignore[call-overload]
        return tuple.__new__(cls, (key, value, timestamp, headers, offset))

    @classmethod
    def _make(cls, iterable: object) -> Record:  # type: ignore[override]
        # (used by _replace): go through __new__ so headers stay a tuple
        return cls(*iterable)  # type: ignore[misc]

    def __repr__(self) -> str:
        return (
            f"Record(key={self.key!r}, value={self.value!r}, timestamp={self.timestamp!r}, "
            f"headers={self.headers!r}, offset={self.offset!r})"
        )


def _install_fast_constructor() -> bool:
    """Construct ``Record(...)`` in C when the optional extension is built (see
    ``native/_rows.c``): ``Record.__new__`` is a Python function whose call alone costs more
    than a compiled producer's whole per-record append. The object is the same; every call
    shape the C code does not handle still goes through ``__new__``. ``KAFKALOG_NO_EXTENSIONS``
    keeps the pure-Python constructor."""
    _rows = optional_extension("_rows")
    if _rows is None:  # not built, or disabled: the pure-Python constructor
        return False
    _rows.install_record_constructor(Record)
    return True


#: True when ``Record(...)`` runs the C constructor.
FAST_CONSTRUCTOR = _install_fast_constructor()


# Fast constructor for decoders that already hold a tuple of headers (skips __new__'s check).
def _make_record(
    key: bytes | None,
    value: bytes | None,
    timestamp: int,
    headers: tuple[Header, ...],
    offset: int,
) -> Record:
    return tuple.__new__(Record, (key, value, timestamp, headers, offset))  # type: ignore[no-any-return]
