"""Producer state snapshots (``<20-digit offset>.snapshot``), Kafka's ``ProducerStateManager``.

A snapshot records, for each idempotent/transactional producer, what the broker needs to keep
deduplicating and fencing after a restart without rereading the log. The file name's offset is
the exclusive end offset the snapshot covers. Layout (spec §4.4; unchanged since 0.11), all
big-endian::

    int16  version            1
    uint32 crc                CRC-32C of bytes [6, end): the count and every entry
    int32  entry count
    entries of 46 bytes:
        int64 producerId | int16 producerEpoch | int32 lastSequence | int64 lastOffset
        | int32 offsetDelta | int64 timestamp | int32 coordinatorEpoch
        | int64 currentTxnFirstOffset (-1: no open transaction)

Reading is Kafka's ``readSnapshot``: unknown version, a CRC mismatch (stored and computed values
both in the message) or a count that does not fit the file raise
:class:`~kafkalog.errors.CorruptCheckpointError`. As in Kafka, bytes after the last entry are
covered by the CRC but otherwise ignored.

Example
-------
>>> e = ProducerSnapshotEntry(producer_id=1000, producer_epoch=0, last_sequence=4,
...     last_offset=12, offset_delta=4, timestamp=1700000000000, coordinator_epoch=-1,
...     current_txn_first_offset=-1)
>>> data = encode_snapshot([e])
>>> len(data), decode_snapshot(data) == [e], e.first_sequence, e.first_offset
(56, True, 0, 8)
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import crc32c as _crc32c

from kafkalog.checkpoint import atomic_write
from kafkalog.errors import CorruptCheckpointError
from kafkalog.files import offset_from_filename, producer_snapshot_file

__all__ = [
    "PRODUCER_SNAPSHOT_VERSION",
    "ENTRY_SIZE",
    "HEADER_SIZE",
    "ProducerSnapshotEntry",
    "decode_snapshot",
    "encode_snapshot",
    "read_snapshot",
    "write_snapshot",
    "snapshot_file",
    "snapshot_offset",
]

PRODUCER_SNAPSHOT_VERSION = 1
#: version (2) + crc (4) + count (4)
HEADER_SIZE = 10
#: ProducerStateManager.PRODUCER_ENTRIES_OFFSET: the CRC covers [6, end)
PRODUCER_ENTRIES_OFFSET = 6
ENTRY_SIZE = 46

_HEADER = struct.Struct(">hIi")
_ENTRY = struct.Struct(">qhiqiqiq")
_INT32_MAX = 2**31 - 1


@dataclass(frozen=True)
class ProducerSnapshotEntry:
    """One producer's state in a snapshot (field names: Kafka's snapshot schema).

    ``last_offset < 0`` means the entry has no batch metadata (Kafka then ignores
    ``last_sequence``, ``offset_delta`` and ``timestamp`` for deduplication).
    ``current_txn_first_offset == -1`` means no open transaction.
    """

    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_offset: int
    offset_delta: int
    timestamp: int
    coordinator_epoch: int
    current_txn_first_offset: int

    @property
    def has_batch_metadata(self) -> bool:
        """True when the entry carries a last batch (``last_offset >= 0``)."""
        return self.last_offset >= 0

    @property
    def first_sequence(self) -> int:
        """``last_sequence - offset_delta`` with Kafka's wrap at ``Integer.MAX_VALUE``."""
        # DefaultRecordBatch.decrementSequence
        if self.last_sequence < self.offset_delta:
            return _INT32_MAX - (self.offset_delta - self.last_sequence) + 1
        return self.last_sequence - self.offset_delta

    @property
    def first_offset(self) -> int:
        """``last_offset - offset_delta``."""
        return self.last_offset - self.offset_delta

    @property
    def last_timestamp(self) -> int:
        """Kafka's ``lastTimestamp`` (the snapshot's timestamp field)."""
        return self.timestamp

    @property
    def current_txn_first_offset_or_none(self) -> int | None:
        """``current_txn_first_offset`` or None for -1 (Kafka's ``OptionalLong``)."""
        return None if self.current_txn_first_offset < 0 else self.current_txn_first_offset

    def to_bytes(self) -> bytes:
        """The 46-byte entry."""
        try:
            return _ENTRY.pack(
                self.producer_id,
                self.producer_epoch,
                self.last_sequence,
                self.last_offset,
                self.offset_delta,
                self.timestamp,
                self.coordinator_epoch,
                self.current_txn_first_offset,
            )
        except struct.error as e:
            raise ValueError(f"producer snapshot entry field out of range: {self} ({e})") from None


def encode_snapshot(entries: Iterable[ProducerSnapshotEntry]) -> bytes:
    """Bytes of a snapshot holding ``entries`` in the given order."""
    items = list(entries)
    body = struct.pack(">i", len(items)) + b"".join(e.to_bytes() for e in items)
    crc = _crc32c.crc32c(body)
    return struct.pack(">hI", PRODUCER_SNAPSHOT_VERSION, crc) + body


def decode_snapshot(
    data: bytes | bytearray | memoryview, path: str | os.PathLike[str] | None = None
) -> list[ProducerSnapshotEntry]:
    """Parse snapshot bytes (Kafka's ``readSnapshot``); ``path`` only names the file in errors.

    Raises
    ------
    CorruptCheckpointError
        Short file, unknown version, CRC mismatch, or an entry count the file cannot hold.
    """
    buf = memoryview(data).cast("B")
    if len(buf) < HEADER_SIZE:
        raise CorruptCheckpointError(
            f"snapshot too short for its header (expected at least {HEADER_SIZE} bytes, "
            f"found {len(buf)})",
            path=path,
            position=0,
        )
    version, stored_crc, count = _HEADER.unpack_from(buf, 0)
    if version != PRODUCER_SNAPSHOT_VERSION:
        raise CorruptCheckpointError(
            f"snapshot contained an unknown file version (expected {PRODUCER_SNAPSHOT_VERSION}, "
            f"found {version})",
            path=path,
            position=0,
        )
    computed = _crc32c.crc32c(buf[PRODUCER_ENTRIES_OFFSET:])
    if stored_crc != computed:
        raise CorruptCheckpointError(
            f"snapshot is corrupt, CRC is no longer valid (stored crc: {stored_crc}, "
            f"computed crc: {computed})",
            path=path,
            position=2,
        )
    if count < 0:
        raise CorruptCheckpointError(
            f"snapshot entry count cannot be negative (found {count})", path=path, position=6
        )
    available = (len(buf) - HEADER_SIZE) // ENTRY_SIZE
    if count > available:
        raise CorruptCheckpointError(
            f"snapshot declares {count} entries but the file holds only {available} "
            f"(expected {HEADER_SIZE + count * ENTRY_SIZE} bytes, found {len(buf)})",
            path=path,
            position=6,
        )
    return [
        ProducerSnapshotEntry(*_ENTRY.unpack_from(buf, HEADER_SIZE + i * ENTRY_SIZE))
        for i in range(count)
    ]


def read_snapshot(path: str | os.PathLike[str]) -> list[ProducerSnapshotEntry]:
    """Read a ``.snapshot`` file (see :func:`decode_snapshot`)."""
    return decode_snapshot(Path(path).read_bytes(), path)


def write_snapshot(
    path: str | os.PathLike[str], entries: Iterable[ProducerSnapshotEntry], *, sync: bool = True
) -> None:
    """Write a snapshot atomically (tmp file, fsync, rename, fsync dir).

    Kafka writes the file in place and fsyncs it; writing through a temporary file gives the
    same final bytes without a window in which a torn snapshot exists.
    """
    atomic_write(path, encode_snapshot(entries), sync=sync)


def snapshot_file(partition_dir: str | os.PathLike[str], offset: int) -> Path:
    """``<dir>/<20-digit offset>.snapshot``."""
    return producer_snapshot_file(partition_dir, offset)


def snapshot_offset(path: str | os.PathLike[str]) -> int:
    """The end offset a snapshot file covers, from its name."""
    return offset_from_filename(Path(path).name)
