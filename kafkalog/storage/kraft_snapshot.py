"""The two KRaft snapshot files ``kafka-storage.sh format`` writes, byte for byte.

Both are KRaft snapshots: a sequence of v2 record batches (partition leader epoch 0, no
producer, uncompressed) that opens with a ``SNAPSHOT_HEADER`` control batch and ends with a
``SNAPSHOT_FOOTER`` control batch.

* ``bootstrap.checkpoint`` (``BootstrapDirectory.writeBinaryFile`` through ``BatchFileWriter``):
  the header (``lastContainedLogTimestamp`` 0) at offset 0, then every bootstrap metadata
  record in one data batch (they never come near ``MAX_BATCH_SIZE_BYTES``, 8 MiB; each record
  keyless, timestamp delta 0, the batch stamped with the time it was started), then the footer.
  Written to ``bootstrap.checkpoint.tmp`` and moved over the file.
* ``__cluster_metadata-0/00000000000000000000-0000000000.checkpoint``, the bootstrap snapshot of
  a dynamic quorum (``Formatter.writeDynamicQuorumSnapshot`` through ``RecordsSnapshotWriter``):
  one control batch holding the header (``lastContainedLogTimestamp`` = now), the
  ``KRAFT_VERSION`` record and, when voters are given, the ``KRAFT_VOTERS`` record; then the
  footer. Written as a ``.checkpoint.part`` temp file, fsynced, made read-only and renamed.

Each batch takes its timestamp from ``clock`` (milliseconds) when Kafka's writer reads its
clock, so a test can replay a real file's timestamps.

>>> from kafkalog.decoders import cluster_metadata as cm
>>> mv = cm.encode_record("FeatureLevelRecord", {"name": "metadata.version", "featureLevel": 19})
>>> data = bootstrap_checkpoint_bytes([mv], clock=iter([1, 2, 3]).__next__)
>>> len(data)
249
"""

from __future__ import annotations

import os
import struct
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..checkpoint import atomic_write
from ..decoders import kraft_control
from ..records.builder import encode_batch

__all__ = ["BOOTSTRAP_FILE_NAME", "BOOTSTRAP_SNAPSHOT_NAME", "CLUSTER_METADATA_DIR",
           "bootstrap_checkpoint_bytes", "write_bootstrap_checkpoint",
           "bootstrap_snapshot_bytes", "write_bootstrap_snapshot", "system_clock"]

BOOTSTRAP_FILE_NAME = "bootstrap.checkpoint"
#: the directory of the metadata log (``__cluster_metadata`` partition 0)
CLUSTER_METADATA_DIR = "__cluster_metadata-0"
#: ``Snapshots.BOOTSTRAP_SNAPSHOT_ID`` (offset 0, epoch 0) as a file name
BOOTSTRAP_SNAPSHOT_NAME = "00000000000000000000-0000000000.checkpoint"
#: ``ControlRecordUtils.*_CURRENT_VERSION``
_CURRENT_VERSION = 0


def system_clock() -> int:
    """``Time.SYSTEM.milliseconds()``."""
    return time.time_ns() // 1_000_000


def _control_key(control_type: int) -> bytes:
    return struct.pack(">hh", 0, control_type)


def _control_batch(base_offset: int, timestamp: int,
                   records: Sequence[tuple[int, str, dict[str, Any]]]) -> bytes:
    rows = [(_control_key(t), kraft_control.encode(name, data), timestamp)
            for t, name, data in records]
    return encode_batch(rows, base_offset=base_offset, partition_leader_epoch=0, control=True)


def _footer(base_offset: int, timestamp: int) -> bytes:
    return _control_batch(base_offset, timestamp, [
        (kraft_control.SNAPSHOT_FOOTER, "SNAPSHOT_FOOTER", {"version": _CURRENT_VERSION})])


def bootstrap_checkpoint_bytes(records: Sequence[bytes],
                               clock: Callable[[], int] = system_clock) -> bytes:
    """The bytes of a ``bootstrap.checkpoint`` holding ``records`` (framed metadata record
    values, :func:`kafkalog.decoders.cluster_metadata.encode_record`'s)."""
    header = _control_batch(0, clock(), [
        (kraft_control.SNAPSHOT_HEADER, "SNAPSHOT_HEADER",
         {"version": _CURRENT_VERSION, "lastContainedLogTimestamp": 0})])
    parts = [header]
    offset = 1
    if records:
        append_time = clock()  # BatchAccumulator.startNewBatch, at the first append
        parts.append(encode_batch([(None, r, append_time) for r in records], base_offset=1,
                                  partition_leader_epoch=0))
        offset += len(records)
    parts.append(_footer(offset, clock()))
    return b"".join(parts)


def write_bootstrap_checkpoint(directory: str | os.PathLike[str], records: Sequence[bytes],
                               clock: Callable[[], int] = system_clock) -> Path:
    """``BootstrapDirectory.writeBinaryFile``: ``<directory>/bootstrap.checkpoint`` (which
    must be an existing directory), through a ``.tmp`` file moved over it."""
    d = Path(directory)
    if not d.is_dir():
        raise FileNotFoundError(f"No such directory as {directory}")
    path = d / BOOTSTRAP_FILE_NAME
    atomic_write(path, bootstrap_checkpoint_bytes(records, clock))
    return path


def bootstrap_snapshot_bytes(kraft_version: int, voters_record: dict[str, Any] | None,
                             last_contained_log_timestamp: int,
                             clock: Callable[[], int] = system_clock) -> bytes:
    """The bytes of the bootstrap snapshot ``RecordsSnapshotWriter`` writes for a new dynamic
    quorum: header, kraft.version and voters (kraft.version 1 only) in one control batch, then
    the footer."""
    if kraft_version == 0 and voters_record is not None:
        raise ValueError("a voter set is not expected when the kraft.version is 0")
    records: list[tuple[int, str, dict[str, Any]]] = [
        (kraft_control.SNAPSHOT_HEADER, "SNAPSHOT_HEADER",
         {"version": _CURRENT_VERSION,
          "lastContainedLogTimestamp": last_contained_log_timestamp})]
    if kraft_version >= 1:  # KRaftVersion.isReconfigSupported
        records.append((kraft_control.KRAFT_VERSION, "KRAFT_VERSION",
                        {"version": _CURRENT_VERSION, "kRaftVersion": kraft_version}))
        if voters_record is not None:
            records.append((kraft_control.KRAFT_VOTERS, "KRAFT_VOTERS", voters_record))
    header = _control_batch(0, clock(), records)
    return header + _footer(len(records), clock())


def write_bootstrap_snapshot(log_dir: str | os.PathLike[str], kraft_version: int,
                             voters_record: dict[str, Any] | None,
                             clock: Callable[[], int] = system_clock) -> Path:
    """``Formatter.writeDynamicQuorumSnapshot`` into ``log_dir``: the snapshot file in
    ``__cluster_metadata-0`` (created if missing), fsynced, read-only, renamed from its
    ``.checkpoint.part`` temp file."""
    snapshot_dir = Path(log_dir) / CLUSTER_METADATA_DIR
    snapshot_dir.mkdir(parents=True, exist_ok=True)
    # one reading of the clock for the header's lastContainedLogTimestamp and the batches'
    # timestamps (two readings could straddle a millisecond)
    now = clock()
    data = bootstrap_snapshot_bytes(kraft_version, voters_record, now, lambda: now)
    fd, tmp = tempfile.mkstemp(dir=snapshot_dir, prefix=BOOTSTRAP_SNAPSHOT_NAME[:-11] + "-",
                               suffix=".checkpoint.part")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        # FileRawSnapshotWriter.freeze: the frozen snapshot is read-only
        os.chmod(tmp, os.stat(tmp).st_mode & ~0o222)
        dest = snapshot_dir / BOOTSTRAP_SNAPSHOT_NAME
        os.replace(tmp, dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    dir_fd = os.open(snapshot_dir, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return dest
