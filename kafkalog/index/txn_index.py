"""The transaction index (``.txnindex``): aborted transactions whose ABORT marker is in a segment.

On disk (spec §5.4, Kafka's ``TransactionIndex``/``AbortedTxn``): a plain append-only file - not
preallocated, not memory-mapped, created only when the first entry is written - of 34-byte
big-endian entries::

    int16 version (0) | int64 producerId | int64 firstOffset | int64 lastOffset
    | int64 lastStableOffset

``firstOffset`` is the first offset of the aborted transaction, ``lastOffset`` the offset of its
ABORT marker, ``lastStableOffset`` the LSO when the abort completed. ``lastOffset`` strictly
increases. Only whole entries are read: a trailing partial entry (a torn write) is ignored.
Quirk kept from Kafka: the version is read back as the single (signed) byte at entry offset 0,
the high byte of the int16; a version above 0 is an error, any other value is accepted.

Example
-------
>>> import tempfile, os
>>> p = os.path.join(tempfile.mkdtemp(), "00000000000000000000.txnindex")
>>> idx = TransactionIndex(p, 0)
>>> os.path.exists(p)
False
>>> idx.append(AbortedTxn(producer_id=7, first_offset=3, last_offset=10, last_stable_offset=3))
>>> idx.collect_aborted_txns(0, 5).aborted_transactions[0].producer_id, os.path.getsize(p)
(7, 34)
>>> idx.close()
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, NamedTuple

import numpy as np

from kafkalog.errors import CorruptIndexError, InvalidOffsetError

__all__ = ["AbortedTxn", "TransactionIndex", "TxnIndexSearchResult", "ENTRY_SIZE"]

#: AbortedTxn.TOTAL_SIZE
ENTRY_SIZE = 34
#: AbortedTxn.CURRENT_VERSION
CURRENT_VERSION = 0

# the int16 version written as (signed high byte, low byte 0): Kafka reads back only byte 0
_ENTRY = struct.Struct(">bBqqqq")
_ENTRY_DTYPE = np.dtype(
    [
        ("version", "i1"),  # Kafka reads buffer.get(0): the high byte of the int16, signed
        ("version_low_byte", "u1"),
        ("producer_id", ">i8"),
        ("first_offset", ">i8"),
        ("last_offset", ">i8"),
        ("last_stable_offset", ">i8"),
    ]
)


@dataclass(frozen=True)
class AbortedTxn:
    """One aborted transaction (Kafka's ``AbortedTxn``).

    Attributes
    ----------
    producer_id:
        The producer that aborted.
    first_offset:
        First offset of the transaction.
    last_offset:
        Offset of the ABORT control marker.
    last_stable_offset:
        The last stable offset when the abort completed.
    version:
        Entry version as Kafka reads it (the high byte of the stored int16; 0).
    """

    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int
    version: int = CURRENT_VERSION

    def to_bytes(self) -> bytes:
        """The 34-byte on-disk entry."""
        return _ENTRY.pack(
            self.version,
            0,
            self.producer_id,
            self.first_offset,
            self.last_offset,
            self.last_stable_offset,
        )

    @classmethod
    def from_bytes(cls, data: bytes | memoryview, position: int = 0) -> AbortedTxn:
        """Parse the entry at ``position`` (the caller checks 34 bytes are there)."""
        version, _, pid, first, last, lso = _ENTRY.unpack_from(data, position)
        return cls(pid, first, last, lso, version)


class TxnIndexSearchResult(NamedTuple):
    """Aborted transactions overlapping a fetch, and whether the search may stop here."""

    aborted_transactions: list[AbortedTxn]
    is_complete: bool


class TransactionIndex:
    """Kafka's ``TransactionIndex`` over a ``.txnindex`` file.

    Parameters
    ----------
    path:
        The index file (created on the first :meth:`append`).
    base_offset:
        Base offset of the segment (Kafka's ``startOffset``); used by :meth:`sanity_check`.
    writable:
        False never creates or changes the file (dump/verify readers).

    Notes
    -----
    The file is the source of truth: every read goes to it (the index is small: one entry per
    aborted transaction). Kafka starts with no "last offset" after opening an existing file;
    we read it from the file so that a reopened index still refuses non-increasing appends.
    Not thread-safe: the owning segment serializes access.
    """

    def __init__(
        self, path: str | os.PathLike[str], base_offset: int, writable: bool = True
    ) -> None:
        self._path = Path(path)
        self._base_offset = int(base_offset)
        self._writable = bool(writable)
        self._file: IO[bytes] | None = None
        self._last_offset: int | None = None
        if self._path.exists():
            self._open()
            last = self._read_entries()
            if len(last):
                self._last_offset = int(last["last_offset"][-1])

    # -- file handling -------------------------------------------------------------------------

    def _open(self) -> IO[bytes]:
        if self._file is None or self._file.closed:
            if self._writable:
                fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o644)
                self._file = os.fdopen(fd, "r+b", buffering=0)
            else:
                self._file = open(self._path, "rb", buffering=0)
        return self._file

    def _check_writable(self) -> None:
        if not self._writable:
            raise PermissionError(f"{self._path}: transaction index was opened read-only")

    def _read_bytes(self) -> bytes:
        if not self._path.exists():
            return b""
        f = self._open()
        size = os.fstat(f.fileno()).st_size
        return os.pread(f.fileno(), size, 0)

    def _read_entries(self) -> np.ndarray:
        """Whole entries as a structured array (a trailing partial entry is ignored)."""
        data = self._read_bytes()
        n = len(data) // ENTRY_SIZE
        arr = np.frombuffer(data, dtype=_ENTRY_DTYPE, count=n)
        bad = np.flatnonzero(arr["version"] > CURRENT_VERSION)
        if bad.size:
            i = int(bad[0])
            raise CorruptIndexError(
                f"unexpected aborted transaction version (expected at most {CURRENT_VERSION}, "
                f"found {int(arr['version'][i])})",
                path=self._path,
                position=i * ENTRY_SIZE,
            )
        return arr

    @staticmethod
    def _to_txn(row: np.void) -> AbortedTxn:
        return AbortedTxn(
            int(row["producer_id"]),
            int(row["first_offset"]),
            int(row["last_offset"]),
            int(row["last_stable_offset"]),
            int(row["version"]),
        )

    # -- properties ----------------------------------------------------------------------------

    @property
    def path(self) -> Path:
        """The index file."""
        return self._path

    @property
    def file(self) -> Path:
        """Alias of :attr:`path`."""
        return self._path

    @property
    def base_offset(self) -> int:
        """Base offset of the segment."""
        return self._base_offset

    @property
    def last_offset(self) -> int | None:
        """``last_offset`` of the last entry, None when empty."""
        return self._last_offset

    @property
    def size_in_bytes(self) -> int:
        """Current file size (0 when the file does not exist)."""
        try:
            return self._path.stat().st_size
        except FileNotFoundError:
            return 0

    # -- operations ----------------------------------------------------------------------------

    def append(self, aborted_txn: AbortedTxn) -> None:
        """Append an entry; its ``last_offset`` must exceed the previous entry's.

        Raises
        ------
        InvalidOffsetError
            ``last_offset`` not greater than the current last offset.
        """
        self._check_writable()
        if self._last_offset is not None and self._last_offset >= aborted_txn.last_offset:
            raise InvalidOffsetError(
                "the last offset of appended transactions must increase sequentially "
                f"(expected > {self._last_offset}, found {aborted_txn.last_offset})",
                path=self._path,
                offset=aborted_txn.last_offset,
            )
        f = self._open()
        data = aborted_txn.to_bytes()
        end = os.fstat(f.fileno()).st_size
        written = os.pwrite(f.fileno(), data, end)
        if written != len(data):  # a short write on a regular file means the disk is full
            raise OSError(f"{self._path}: short write ({written} of {len(data)} bytes)")
        self._last_offset = aborted_txn.last_offset

    def all_aborted_txns(self) -> list[AbortedTxn]:
        """Every entry in file order."""
        return [self._to_txn(r) for r in self._read_entries()]

    def __iter__(self) -> Iterator[AbortedTxn]:
        return iter(self.all_aborted_txns())

    def entries_array(self) -> np.ndarray:
        """Every whole entry as a structured numpy array (copy of the file's bytes)."""
        return self._read_entries()

    def collect_aborted_txns(
        self, fetch_offset: int, upper_bound_offset: int
    ) -> TxnIndexSearchResult:
        """Aborted transactions overlapping ``[fetch_offset, upper_bound_offset)``.

        ``is_complete`` is True when an entry's last stable offset reaches
        ``upper_bound_offset``: later segments cannot hold more overlapping aborts.
        """
        found: list[AbortedTxn] = []
        for row in self._read_entries():
            if row["last_offset"] >= fetch_offset and row["first_offset"] < upper_bound_offset:
                found.append(self._to_txn(row))
            if row["last_stable_offset"] >= upper_bound_offset:
                return TxnIndexSearchResult(found, True)
        return TxnIndexSearchResult(found, False)

    def truncate_to(self, offset: int) -> None:
        """Remove the first entry with ``last_offset >= offset`` and everything after it."""
        self._check_writable()
        arr = self._read_entries()
        hits = np.flatnonzero(arr["last_offset"] >= offset)
        if hits.size == 0:
            return
        i = int(hits[0])
        f = self._open()
        os.ftruncate(f.fileno(), i * ENTRY_SIZE)
        self._last_offset = int(arr["last_offset"][i - 1]) if i > 0 else None

    def reset(self) -> None:
        """Remove every entry (the file is truncated to 0 bytes if it exists)."""
        self._check_writable()
        if self._path.exists():
            os.ftruncate(self._open().fileno(), 0)
        self._last_offset = None

    def sanity_check(self) -> None:
        """Every entry's ``last_offset`` must be >= the segment base offset.

        Raises
        ------
        CorruptIndexError
            Naming the entry position and both offsets.
        """
        arr = self._read_entries()
        bad = np.flatnonzero(arr["last_offset"] < self._base_offset)
        if bad.size:
            i = int(bad[0])
            txn = self._to_txn(arr[i])
            raise CorruptIndexError(
                f"last offset of aborted transaction {txn} is less than start offset "
                f"{self._base_offset} (expected >= {self._base_offset}, found {txn.last_offset})",
                path=self._path,
                position=i * ENTRY_SIZE,
                offset=txn.last_offset,
            )

    def flush(self) -> None:
        """fsync the file if it is open."""
        if self._file is not None and not self._file.closed and self._writable:
            os.fsync(self._file.fileno())

    def close(self) -> None:
        """Close the file handle (reads reopen it)."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def delete(self) -> bool:
        """Close and delete the file; False when it did not exist (Kafka's ``deleteIfExists``)."""
        self.close()
        try:
            os.unlink(self._path)
        except FileNotFoundError:
            return False
        return True

    delete_if_exists = delete

    def rename_to(self, path: str | os.PathLike[str]) -> None:
        """Rename the file if it exists; the index follows the new path either way."""
        target = Path(path)
        try:
            if self._path.exists():
                os.replace(self._path, target)
        finally:
            self._path = target

    def update_parent_dir(self, parent: str | os.PathLike[str]) -> None:
        """Point at the same file name under ``parent``."""
        self._path = Path(parent) / self._path.name

    def __enter__(self) -> TransactionIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"TransactionIndex({str(self._path)!r}, base_offset={self._base_offset})"
