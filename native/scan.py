"""Scan the entries of a ``.log`` buffer: one kernel call, headers only, no record decoding.

Every Kafka log entry (v0/v1 message or v2 batch) starts with the same 17 bytes: int64 offset,
int32 size (bytes after this field), and the magic byte at position 16. So an entry can be sized
and classified before its format is known, and a scan hops from entry to entry reading only
headers. This is what recovery, index rebuild, dump-segments, ``Log.read`` and Spark planning use.

The stop rule is Kafka's ``FileLogInputStream.nextBatch``:

* 17 or fewer bytes remain -> stop, the rest is a partial trailing entry (``STOP_PARTIAL``)
  (exactly 0 remaining is ``STOP_END``);
* size < 14 (``LegacyRecord.RECORD_OVERHEAD_V0``) -> corrupt (``STOP_CORRUPT_SIZE``): this is
  what a zero-filled preallocated tail produces;
* the entry extends past ``end`` -> stop, partial trailing entry (``STOP_PARTIAL``).

Beyond Kafka, a magic byte other than 0/1/2 stops with ``STOP_BAD_MAGIC`` and a v2 entry shorter
than the 61-byte v2 header with ``STOP_SHORT_V2`` (Kafka would read the next entry's bytes as
this header's tail). CRCs are not computed here (see ``kafkalog.records.crc``).

Outputs (one element per whole entry, in file order):
``positions`` (int64, byte position of the entry), ``sizes`` (int64, 12 + declared size),
``base_offsets`` (v2: baseOffset; legacy: the entry offset, which for a compressed wrapper is the
*last* inner offset: its base needs decompression), ``last_offsets`` (v2: base + lastOffsetDelta;
legacy: the entry offset), ``max_timestamps`` (v2: maxTimestamp; v1: timestamp; v0: -1),
``magics`` (int8), ``attributes`` (int16; legacy: the attribute byte), ``record_counts``
(int32; v2: recordsCount, legacy: 1 whether or not compressed), ``leader_epochs`` (int32; v2 only,
-1 for legacy), ``crcs`` (int64, the stored unsigned CRC).
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel, kernel_input
from .bytes_be import read_i16, read_i32, read_i64, read_u32

LOG_OVERHEAD = 12
HEADER_SIZE_UP_TO_MAGIC = 17
MIN_ENTRY_SIZE = 14  # LegacyRecord.RECORD_OVERHEAD_V0: the smallest size any entry may declare
RECORD_BATCH_OVERHEAD = 61

STOP_END = 0
STOP_PARTIAL = 1
STOP_CORRUPT_SIZE = 2
STOP_BAD_MAGIC = 3
STOP_SHORT_V2 = 4
STOP_LIMIT = 5  # max_entries reached; call again from stop_position

STOP_REASONS = {
    STOP_END: "end of data",
    STOP_PARTIAL: "partial trailing entry",
    STOP_CORRUPT_SIZE: "entry size below the minimum of 14 bytes",
    STOP_BAD_MAGIC: "unknown magic byte",
    STOP_SHORT_V2: "v2 batch shorter than its 61-byte header",
    STOP_LIMIT: "entry limit reached",
}


@kernel
def count_entries(buf, start, end, max_entries):
    """Hop over entry headers from ``start``; return ``(count, stop_position, stop_reason)``.

    ``stop_position`` is the position of the first byte not part of a whole valid entry.
    ``end`` is clamped to ``len(buf)``; negative ``start`` is treated as 0.
    """
    n = np.int64(0)
    if end > buf.shape[0]:
        end = buf.shape[0]
    pos = np.int64(start)
    if pos < 0:
        pos = np.int64(0)
    while True:
        if n >= max_entries:
            return n, pos, STOP_LIMIT
        remaining = end - pos
        if remaining <= 0:
            return n, pos, STOP_END
        if remaining <= HEADER_SIZE_UP_TO_MAGIC:
            return n, pos, STOP_PARTIAL
        size = read_i32(buf, pos + 8)
        if size < MIN_ENTRY_SIZE:
            return n, pos, STOP_CORRUPT_SIZE
        magic = np.int64(buf[pos + 16])
        if magic > 2:
            return n, pos, STOP_BAD_MAGIC
        total = LOG_OVERHEAD + size
        if total > remaining:
            return n, pos, STOP_PARTIAL
        if magic == 2 and total < RECORD_BATCH_OVERHEAD:
            return n, pos, STOP_SHORT_V2
        pos += total
        n += 1


@kernel
def fill_entries(
    buf,
    start,
    count,
    positions,
    sizes,
    base_offsets,
    last_offsets,
    max_timestamps,
    magics,
    attributes,
    record_counts,
    leader_epochs,
    crcs,
):
    """Fill the per-entry arrays for ``count`` entries already validated by ``count_entries``."""
    pos = np.int64(start)
    if pos < 0:
        pos = np.int64(0)
    for i in range(count):
        size = read_i32(buf, pos + 8)
        total = LOG_OVERHEAD + size
        magic = np.int64(buf[pos + 16])
        positions[i] = pos
        sizes[i] = total
        magics[i] = magic
        off = read_i64(buf, pos)
        if magic == 2:
            base_offsets[i] = off
            last_offsets[i] = off + read_i32(buf, pos + 23)
            leader_epochs[i] = read_i32(buf, pos + 12)
            crcs[i] = read_u32(buf, pos + 17)
            attributes[i] = read_i16(buf, pos + 21)
            max_timestamps[i] = read_i64(buf, pos + 35)
            record_counts[i] = read_i32(buf, pos + 57)
        else:
            base_offsets[i] = off
            last_offsets[i] = off
            leader_epochs[i] = -1
            crcs[i] = read_u32(buf, pos + 12)
            attributes[i] = np.int64(buf[pos + 17])
            record_counts[i] = 1
            if magic == 1 and total >= 26:
                max_timestamps[i] = read_i64(buf, pos + 18)
            else:
                max_timestamps[i] = -1
        pos += total


def scan_entries(buf: np.ndarray, start: int = 0, end: int | None = None,
                 max_entries: int = 1 << 62) -> dict:
    """Scan ``buf[start:end]`` and return the per-entry arrays plus the stop position and reason.

    ``buf`` must be a ``uint8`` array (for example ``np.frombuffer(mmap, np.uint8)``: no copy).

    >>> import numpy as np
    >>> out = scan_entries(np.zeros(0, np.uint8))
    >>> out["count"], out["stop_reason"]
    (0, 0)
    """
    if end is None or end > buf.shape[0]:
        end = buf.shape[0]
    if buf.dtype == np.uint8:  # one specialisation of the kernels for mapped and copied bytes
        buf = kernel_input(buf, np.uint8)
    n, stop, reason = count_entries(buf, np.int64(start), np.int64(end), np.int64(max_entries))
    n = int(n)
    out = {
        "positions": np.empty(n, np.int64),
        "sizes": np.empty(n, np.int64),
        "base_offsets": np.empty(n, np.int64),
        "last_offsets": np.empty(n, np.int64),
        "max_timestamps": np.empty(n, np.int64),
        "magics": np.empty(n, np.int8),
        "attributes": np.empty(n, np.int16),
        "record_counts": np.empty(n, np.int32),
        "leader_epochs": np.empty(n, np.int32),
        "crcs": np.empty(n, np.int64),
    }
    if n:
        fill_entries(
            buf, np.int64(start), np.int64(n), out["positions"], out["sizes"],
            out["base_offsets"], out["last_offsets"], out["max_timestamps"], out["magics"],
            out["attributes"], out["record_counts"], out["leader_epochs"], out["crcs"],
        )
    out["count"] = n
    out["stop_position"] = int(stop)
    out["stop_reason"] = int(reason)
    return out
