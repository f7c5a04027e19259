"""The kafkalog error hierarchy.

Every error the package raises on purpose is a :class:`KafkaLogError`. Each carries where it
happened (``path``, and ``position`` for a byte position in a file or buffer, or ``offset`` for a
logical message offset) so an operator can go straight to the bytes::

    KafkaLogError                    root: catch this to catch everything below
    +-- CorruptRecordError           not a valid batch/message (length, CRC, varint...)
    |   +-- RecordTooLargeError      a declared or decompressed size above the configured bound
    +-- InvalidRecordError           a record that cannot be encoded (timestamp, header, shape)
    +-- InvalidRequestError          an argument value out of range (unknown column, magic...)
    +-- CorruptIndexError            an .index/.timeindex/.txnindex failing its sanity check
    +-- CorruptCheckpointError       a checkpoint or metadata text/binary file that does not parse
    +-- UnsupportedCodecError        unknown codec, or a codec the magic does not allow
    +-- InvalidOffsetError           non-monotonic offsets on append
    +-- OffsetOverflowError          an offset not representable relative to a segment base offset
    +-- IndexFullError               the index has no free slot: the segment must roll
    +-- OffsetOutOfRangeError        an offset outside [log start offset, log end offset]
    +-- RecordBatchTooLargeError     an append above max.message.bytes or segment.bytes
    +-- ConfigError                  a bad configuration value (also a ValueError)
    +-- InvalidTopicError            a topic name Kafka rejects, or a partition directory that
    |                                would not stay inside its root (also a ValueError)
    +-- LogLockedError               another writer holds the partition directory lock
    +-- LogClosedError               an operation on a closed Log
    +-- LogCleaningAbortedError      a compaction given up (truncation, close): nothing swapped in
    +-- ProducerStateError           (kafkalog.producer_state) idempotence/transaction rules:
    |   +-- OutOfOrderSequenceError, InvalidProducerEpochError, InvalidTxnStateError,
    |       TransactionCoordinatorFencedError
    +-- TopicExistsError, UnknownTopicOrPartitionError   (kafkalog.log_dir)

Messages read ``path:position: what (expected X, found Y)`` when those parts are known.

Example
-------
>>> from kafkalog import iter_batches, CorruptRecordError
>>> try:
...     list(iter_batches(b"\\x00" * 8 + b"\\x00\\x00\\x00\\x05" + b"\\x00" * 10))
... except CorruptRecordError as e:
...     print(e.position)
0
"""

from __future__ import annotations

import os

__all__ = [
    "KafkaLogError",
    "CorruptRecordError",
    "RecordTooLargeError",
    "InvalidRecordError",
    "InvalidTimestampError",
    "InvalidRequestError",
    "CorruptIndexError",
    "CorruptCheckpointError",
    "UnsupportedCodecError",
    "InvalidOffsetError",
    "OffsetOverflowError",
    "IndexFullError",
    "OffsetOutOfRangeError",
    "RecordBatchTooLargeError",
    "ConfigError",
    "InvalidTopicError",
    "LogLockedError",
    "LogClosedError",
    "LogCleaningAbortedError",
]


class KafkaLogError(Exception):
    """Root of every error kafkalog raises on purpose.

    Parameters
    ----------
    message:
        What was wrong, ideally with ``(expected X, found Y)``.
    path:
        The file concerned, when there is one.
    position:
        Byte position in the file or buffer, when known.
    offset:
        Logical Kafka offset, when known.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | os.PathLike[str] | None = None,
        position: int | None = None,
        offset: int | None = None,
    ) -> None:
        self.message = message
        self.path = os.fspath(path) if path is not None else None
        self.position = position
        self.offset = offset
        super().__init__(self._render())

    def _render(self) -> str:
        where = []
        if self.path is not None:
            where.append(self.path)
        if self.position is not None:
            where.append(f"position {self.position}")
        if self.offset is not None:
            where.append(f"offset {self.offset}")
        return (": ".join([", ".join(where), self.message]) if where else self.message)

    def with_location(
        self,
        *,
        path: str | os.PathLike[str] | None = None,
        position_base: int = 0,
    ) -> KafkaLogError:
        """Return a copy of this error located in ``path``, positions shifted by ``position_base``.

        Used when a decoder that works on a buffer slice re-raises for the file it came from.
        """
        pos = None if self.position is None else self.position + position_base
        new = type(self).__new__(type(self))
        KafkaLogError.__init__(
            new,
            self.message,
            path=path if path is not None else self.path,
            position=pos,
            offset=self.offset,
        )
        return new


class CorruptRecordError(KafkaLogError):
    """Bytes that are not a valid record batch or legacy message.

    Raised for bad lengths, CRC mismatches (both values in the message), truncated bodies,
    malformed varints, unknown magic values and inconsistent record counts.
    """


class RecordTooLargeError(CorruptRecordError):
    """A declared or decompressed size exceeds the configured bound (decompression bombs)."""


class InvalidRecordError(KafkaLogError, ValueError):
    """A record that cannot be written: timestamp outside int64, malformed columns or headers.

    Kafka's ``InvalidRecordException``; also a ``ValueError``.
    """


class InvalidTimestampError(InvalidRecordError):
    """A produced record whose timestamp the topic refuses (Kafka's ``InvalidTimestampException``:
    outside ``message.timestamp.before/after.max.ms``, or a producer's LogAppendTime batch).

    ``record_errors`` holds ``(batch index, message)`` per record refused, as a produce
    response's ``record_errors``.
    """

    def __init__(self, message: str, *, record_errors: list[tuple[int, str]] | None = None,
                 **kw: object) -> None:
        super().__init__(message, **kw)  # type: ignore[arg-type]
        self.record_errors = list(record_errors or [])


class InvalidRequestError(KafkaLogError, ValueError):
    """An argument value that is out of range or unknown (a column name, a magic value...).

    Wrong Python *types* raise ``TypeError`` instead; also a ``ValueError``.
    """


class CorruptIndexError(KafkaLogError):
    """An index file failed its sanity check (Kafka's ``CorruptIndexException``)."""


class CorruptCheckpointError(KafkaLogError):
    """A checkpoint, snapshot or metadata file does not parse."""


class UnsupportedCodecError(KafkaLogError, ValueError):
    """An unknown compression name/id, or a codec the message format does not allow."""


class InvalidOffsetError(KafkaLogError, ValueError):
    """Offsets that are not strictly increasing where they must be."""


class OffsetOverflowError(KafkaLogError):
    """An offset that does not fit as a 32-bit offset relative to the segment base offset."""


class IndexFullError(KafkaLogError):
    """The index has no free slot; the segment must roll first."""


class OffsetOutOfRangeError(KafkaLogError):
    """An offset below the log start offset or beyond the log end offset."""


class RecordBatchTooLargeError(KafkaLogError, ValueError):
    """An append larger than ``max.message.bytes`` (or than ``segment.bytes``)."""


class ConfigError(KafkaLogError, ValueError):
    """A configuration value of the wrong type or out of range."""


class InvalidTopicError(KafkaLogError, ValueError):
    """A topic name Kafka's ``Topic.validate`` rejects, or a partition number out of range, or a
    partition directory that would resolve outside its root (Kafka's ``InvalidTopicException``)."""


class LogLockedError(KafkaLogError):
    """The partition directory is locked by another writer."""


class LogClosedError(KafkaLogError):
    """The log was closed."""


class LogCleaningAbortedError(KafkaLogError):
    """A compaction was given up before its cleaned segment was swapped in (the log was
    truncated or closed meanwhile); the log is unchanged (Kafka's
    ``LogCleaningAbortedException``)."""
