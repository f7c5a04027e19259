"""Build a metadata image from a KRaft log segment, a snapshot, or a whole metadata partition.

``load_metadata_image(path)`` reads what ``kafka-metadata-shell.sh --snapshot PATH`` reads:

- a file (a ``__cluster_metadata-0/*.log`` segment or a ``*.checkpoint`` snapshot) is read
  batch by batch as Kafka's ``SnapshotFileReader`` does: control batches are not metadata
  (``LEADER_CHANGE`` names the quorum leader; the others are skipped), every record of a data
  batch is replayed in offset order;
- a directory (``__cluster_metadata-0``, or a log dir holding it) is read as a broker loads it:
  its latest snapshot, then the segments' records from the snapshot's end offset on. This is
  kafkalog's addition; Kafka's shell takes one file.

Records go through Kafka's ``MetadataBatchLoader`` rules: between ``BeginTransactionRecord``
and ``EndTransactionRecord`` they take effect only at the end; ``AbortTransactionRecord`` drops
them, and so does the end of the input while a transaction is open. The image's provenance is
that of the last batch that took effect (its last offset, leader epoch and max timestamp).

A record that cannot be decoded or that Kafka would not apply is a *fault*: it is reported
(file, offset, what was wrong) and skipped, as Kafka's fault handler logs it and goes on. A
corrupt batch ends the file with a fault: what came before it is the image, as a broker's
recovery would keep it.

Example
-------
>>> loaded = load_metadata("/var/kafka-logs/__cluster_metadata-0")    # doctest: +SKIP
>>> sorted(loaded.image.topics_by_name)                               # doctest: +SKIP
['__consumer_offsets', 'orders']
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ... import files
from ...decoders import cluster_metadata, kraft_control
from ...errors import KafkaLogError
from ..log_reading import segments, snapshots
from .metadata_delta import MetadataDelta, MetadataReplayError
from .metadata_image import MetadataImage, MetadataProvenance

__all__ = ["LoadedMetadata", "entries", "load_metadata", "load_metadata_image",
           "metadata_partition_dir", "METADATA_PARTITION"]

METADATA_PARTITION = "__cluster_metadata-0"
# a NoOpRecord's whole value: frame version 1, api key 20, version 0, no tagged fields
_NO_OP_V0 = b"\x01\x14\x00\x00"
# the records area of a batch holding only that record (length 10, attributes 0, timestamp and
# offset deltas 0, null key, the 4-byte value, no headers): what a controller writes
_NO_OP_BATCH_RECORDS = bytes.fromhex("1400000001080114000000")
_NO_OP_ARRAY = np.frombuffer(_NO_OP_BATCH_RECORDS, np.uint8)
_RECORDS_AT = 61                                      # a v2 batch header's size
_CRC_FROM = 21                                        # the CRC covers attributes onwards
_NO_OP_BATCH_SIZE = _RECORDS_AT + len(_NO_OP_BATCH_RECORDS)


@dataclass
class LoadedMetadata:
    """An image and what reading it found: the quorum leader and the faults."""

    image: MetadataImage
    files: list[Path] = field(default_factory=list)
    #: (leader id, epoch) of the last LEADER_CHANGE control record read
    leader: tuple[int, int] | None = None
    #: the last KRaftVersionRecord's kraft.version (a control record, not in the image:
    #: KAFKA-18979), None when there is none
    kraft_version: int | None = None
    #: "file: offset N: what was wrong", in the order met
    faults: list[str] = field(default_factory=list)
    #: records applied (transaction markers and no-op records included)
    records: int = 0


def load_metadata_image(path: str | os.PathLike[str], *,
                        end_offset: int | None = None) -> MetadataImage:
    """The metadata image of a segment, snapshot or metadata partition directory.

    Faults are not reported here; use :func:`load_metadata` to see them.
    """
    return load_metadata(path, end_offset=end_offset).image


def load_metadata(path: str | os.PathLike[str], *,
                  end_offset: int | None = None) -> LoadedMetadata:
    """Read ``path`` (see the module docstring) into a :class:`LoadedMetadata`.

    ``end_offset`` stops before that offset: the image a broker whose metadata log ended there
    held (a directory then starts from the latest snapshot ending at or before it). A
    transaction still open at the cut is not part of the image, as at the end of the log.

    Raises ``FileNotFoundError`` for a missing path and :class:`KafkaLogError` for a directory
    with no metadata partition.
    """
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such file or directory")
    # the image is hundreds of thousands of long-lived objects and the replay makes no
    # cycles: the cyclic collector's passes over them were a quarter of the load time
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _load(p, end_offset)
    finally:
        if was_enabled:
            gc.enable()


def _load(p: Path, end_offset: int | None) -> LoadedMetadata:
    loader = _Loader()
    if p.is_dir():
        part = metadata_partition_dir(p)
        picked = [s for s in snapshots(part) if end_offset is None or s[0] <= end_offset]
        start = 0
        if picked:
            start, snap = picked[-1]
            loader.read_file(snap, is_snapshot=True, snapshot_end=start)
        segs = segments(part)
        first = files.offset_from_file(segs[0]) if segs else 0
        if first > start:
            loader.result.faults.append(
                f"{part}: the log starts at offset {first} and no snapshot holds the records "
                f"below it" + (f" (the snapshot ends at {start})" if start else "")
                + ": the image misses them")
        for seg in segs:
            loader.read_file(seg, min_offset=start, end_offset=end_offset)
    else:
        loader.read_file(p, end_offset=end_offset)
    loader.finish()
    return loader.result


def metadata_partition_dir(path: str | os.PathLike[str]) -> Path:
    """The metadata partition directory ``path`` names: ``path`` itself, or the
    ``__cluster_metadata-0`` a log dir holds. :class:`KafkaLogError` when it has neither a
    segment nor a snapshot."""
    p = Path(path)
    # a log dir holds the partition dir (and bootstrap.checkpoint: not a snapshot of it)
    part = p / METADATA_PARTITION if (p / METADATA_PARTITION).is_dir() else p
    if not (segments(part) or snapshots(part)):
        raise KafkaLogError(f"neither a metadata partition directory nor a log dir holding "
                            f"{METADATA_PARTITION}", path=str(p))
    return part


class _Loader:
    """``SnapshotFileReader`` + ``MetadataLoader`` + ``MetadataBatchLoader``, offline."""

    def __init__(self) -> None:
        self.result = LoadedMetadata(MetadataImage())
        self._delta = MetadataDelta(self.result.image)
        self._pending: list[tuple[dict[str, Any], Path, int]] = []    # an open transaction
        self._in_transaction = False

    def read_file(self, path: Path, *, is_snapshot: bool = False, snapshot_end: int = 0,
                  min_offset: int = 0, end_offset: int | None = None) -> None:
        from ...records.batch import parse_control_key

        self.result.files.append(path)
        header_time = -1
        seen = False                # any entry read (an empty snapshot is a fault)
        lone_noop: tuple[int, int, int] | None = None
        try:
            for batch in entries(path):
                seen = True
                if type(batch) is tuple:
                    # a lone NoOpRecord (see entries): (base offset, epoch, max timestamp)
                    if batch[0] < min_offset:
                        continue
                    if end_offset is not None and batch[0] >= end_offset:
                        break
                    self.result.records += 1
                    if not self._in_transaction:
                        lone_noop = batch           # the provenance, made when needed
                    continue
                if lone_noop is not None:
                    self.result.image.provenance = MetadataProvenance(*lone_noop)
                    lone_noop = None
                if batch.last_offset < min_offset:
                    continue
                if end_offset is not None and batch.base_offset >= end_offset:
                    break
                epoch = batch.partition_leader_epoch
                if batch.is_control:
                    for rec in batch:
                        try:
                            ctl = parse_control_key(rec.key)
                            if ctl.type == "LEADER_CHANGE":
                                msg = cluster_metadata.decode_leader_change(rec.value)
                                self.result.leader = (msg["leaderId"], epoch)
                            elif ctl.type_id == kraft_control.KRAFT_VERSION:
                                self.result.kraft_version = kraft_control.decode(
                                    "KRAFT_VERSION", rec.value)["kRaftVersion"]
                            elif ctl.type_id == kraft_control.SNAPSHOT_HEADER:
                                header_time = kraft_control.decode(
                                    "SNAPSHOT_HEADER", rec.value)["lastContainedLogTimestamp"]
                        except (KafkaLogError, ValueError) as e:
                            self._fault(path, rec.offset, f"unable to read control record: {e}")
                    continue
                applied, last = 0, -1
                for rec in batch:
                    if rec.offset < min_offset:
                        continue
                    if end_offset is not None and rec.offset >= end_offset:
                        break
                    value = rec.value
                    if value is not None and value == _NO_OP_V0:
                        # a controller writes one NoOpRecord per idle interval (500 ms): most
                        # records of a metadata log; they change nothing but the provenance
                        applied, last = applied + 1, rec.offset
                        self.result.records += 1
                        continue
                    try:
                        obj = cluster_metadata.decode_record_obj(rec.key, rec.value)
                    except (KafkaLogError, ValueError) as e:
                        self._fault(path, rec.offset, f"unable to read metadata record: {e}")
                        continue
                    applied, last = applied + 1, rec.offset
                    self._replay(obj, path, rec.offset, batch.base_offset, epoch,
                                 batch.max_timestamp)
                if applied and not self._in_transaction:
                    # the batch took effect: the image ends at its last record applied
                    self.result.image.provenance = MetadataProvenance(
                        last, epoch, batch.max_timestamp)
        except KafkaLogError as e:
            self.result.faults.append(f"{path}: stopped reading: {e}")
        if lone_noop is not None:
            self.result.image.provenance = MetadataProvenance(*lone_noop)
        if is_snapshot and not seen:
            # Kafka's snapshot reader fails on a snapshot without a batch
            # (lastContainedLogTimestamp of an empty OptionalLong): the image would silently
            # lack every record below its end
            self.result.faults.append(
                f"{path}: not a readable snapshot: no batch in it (an empty or cut file); the "
                f"records below offset {snapshot_end} are missing from the image")
        if is_snapshot and not self._in_transaction:
            # a snapshot's image ends where its id says (SnapshotManifest provenance)
            epoch = _snapshot_epoch(path)
            self.result.image.provenance = MetadataProvenance(snapshot_end - 1, epoch,
                                                              header_time)

    def _replay(self, obj: dict[str, Any], path: Path, offset: int, base_offset: int,
                epoch: int, max_timestamp: int) -> None:
        self.result.records += 1
        name = obj["name"]
        if name == "BeginTransactionRecord":
            if self._in_transaction:
                self._fault(path, offset, "Encountered BeginTransactionRecord while already "
                                          "in a transaction")
                return
            if offset > base_offset:
                # the records before it in this batch take effect now (provenance: the last)
                self.result.image.provenance = MetadataProvenance(offset - 1, epoch,
                                                                  max_timestamp)
            self._in_transaction = True
            self._pending = []
        elif name in ("EndTransactionRecord", "AbortTransactionRecord"):
            if not self._in_transaction:
                self._fault(path, offset, f"Encountered {name} without having seen a "
                                          "BeginTransactionRecord")
                return
            self._in_transaction = False
            pending, self._pending = self._pending, []
            if name == "EndTransactionRecord":
                for o, p, off in pending:
                    self._apply(o, p, off)
        elif self._in_transaction:
            self._pending.append((obj, path, offset))
        else:
            self._apply(obj, path, offset)

    def _apply(self, obj: dict[str, Any], path: Path, offset: int) -> None:
        try:
            self._delta.replay(obj)
        except (MetadataReplayError, KeyError, TypeError) as e:
            self._fault(path, offset, f"Error loading metadata log record: {e}")

    def _fault(self, path: Path, offset: int, what: str) -> None:
        self.result.faults.append(f"{path}: offset {offset}: {what}")

    def finish(self) -> None:
        if self._in_transaction:
            n = len(self._pending)
            self.result.faults.append(
                f"{self.result.files[-1] if self.result.files else '?'}: the input ends in an "
                f"open metadata transaction; its {n} record(s) are not part of the image")


def entries(path: Path) -> Iterator[Any]:
    """The file's entries as ``iter_batches`` yields them (CRC checked; a corrupt entry raises
    :class:`CorruptRecordError` where it is), except that a batch holding one NoOpRecord and
    nothing else comes as ``(base offset, leader epoch, max timestamp)``.

    Those are found in bulk: one scan kernel call per chunk of entries gives every header, and
    their size, count, attributes, records bytes and CRCs are compared as arrays. A controller
    writes one such batch per idle interval (500 ms), so they are most of a metadata log; this
    way they cost no Python object each.
    """
    from ...file_copy import FileCopy
    from ...native import scan as native_scan
    from ...records.batch import RecordBatch, iter_batches
    from ...records.crc import crc_of_ranges

    path_s = str(path)
    with FileCopy(path) as copy:
        buf = copy.buf
        mv = memoryview(buf) if buf.size else memoryview(b"")
        for out in copy.scan_chunks():
            n = out["count"]
            if n:
                positions, sizes = out["positions"], out["sizes"]
                lone = ((out["magics"] == 2) & (sizes == _NO_OP_BATCH_SIZE)
                        & (out["record_counts"] == 1) & ((out["attributes"] & 0x27) == 0))
                idx = np.flatnonzero(lone)
                if idx.size:
                    at = positions[idx]
                    area = buf[(at + _RECORDS_AT)[:, None] + np.arange(len(_NO_OP_BATCH_RECORDS))]
                    crcs = crc_of_ranges(buf, at + _CRC_FROM, at + sizes[idx], castagnoli=True)
                    ok = (area == _NO_OP_ARRAY).all(axis=1) & (crcs == out["crcs"][idx])
                    lone[idx[~ok]] = False      # a bad CRC is reported by the batch reader
                is_lone = lone.tolist()
                pos_l, size_l = positions.tolist(), sizes.tolist()
                bases, magics = out["base_offsets"].tolist(), out["magics"].tolist()
                epochs, max_ts = out["leader_epochs"].tolist(), out["max_timestamps"].tolist()
                for i in range(n):
                    if is_lone[i]:
                        yield (bases[i], epochs[i], max_ts[i])
                    elif magics[i] == 2:
                        batch = RecordBatch(mv, pos_l[i], size_l[i], path=path_s)
                        batch.ensure_valid()
                        yield batch
                    else:                         # legacy: never in a metadata log
                        yield from iter_batches(buf, start=pos_l[i], end=pos_l[i] + size_l[i],
                                                path=path_s)
            if out["stop_reason"] not in (native_scan.STOP_LIMIT, native_scan.STOP_END,
                                          native_scan.STOP_PARTIAL):
                # the batch reader raises the error for the entry the scan stopped at
                for _ in iter_batches(buf, start=int(out["stop_position"]), path=path_s):
                    pass


def _snapshot_epoch(path: Path) -> int:
    from ... import files

    parsed = files.parse_kraft_snapshot_file_name(path)
    return parsed[1] if parsed else -1
