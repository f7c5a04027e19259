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

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...decoders import cluster_metadata, kraft_control
from ...errors import KafkaLogError
from ..log_reading import segments, snapshots
from .metadata_delta import MetadataDelta, MetadataReplayError
from .metadata_image import MetadataImage, MetadataProvenance

__all__ = ["LoadedMetadata", "load_metadata", "load_metadata_image", "metadata_partition_dir",
           "METADATA_PARTITION"]

METADATA_PARTITION = "__cluster_metadata-0"
# a NoOpRecord's whole value: frame version 1, api key 20, version 0, no tagged fields
_NO_OP_V0 = b"\x01\x14\x00\x00"
# the records area of a batch holding only that record (length 10, attributes 0, timestamp and
# offset deltas 0, null key, the 4-byte value, no headers): what a controller writes
_NO_OP_BATCH_RECORDS = bytes.fromhex("1400000001080114000000")


@dataclass
class LoadedMetadata:
    """An image and what reading it found: the quorum leader and the faults."""

    image: MetadataImage
    files: list[Path] = field(default_factory=list)
    #: (leader id, epoch) of the last LEADER_CHANGE control record read
    leader: tuple[int, int] | None = None
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
    loader = _Loader()
    if p.is_dir():
        part = metadata_partition_dir(p)
        picked = [s for s in snapshots(part) if end_offset is None or s[0] <= end_offset]
        start = 0
        if picked:
            start, snap = picked[-1]
            loader.read_file(snap, is_snapshot=True, snapshot_end=start)
        for seg in segments(part):
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
        from ...records.batch import iter_batches, parse_control_key

        self.result.files.append(path)
        header_time = -1
        try:
            for batch in iter_batches(str(path)):
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
                            elif ctl.type_id == kraft_control.SNAPSHOT_HEADER:
                                header_time = kraft_control.decode(
                                    "SNAPSHOT_HEADER", rec.value)["lastContainedLogTimestamp"]
                        except (KafkaLogError, ValueError) as e:
                            self._fault(path, rec.offset, f"unable to read control record: {e}")
                    continue
                if (batch.record_count == 1 and batch.compression_id == 0
                        and batch.base_offset >= min_offset
                        and batch.records_bytes() == _NO_OP_BATCH_RECORDS):
                    # one NoOpRecord alone, as a controller writes it each idle interval:
                    # checked (CRC) but not decoded
                    batch.ensure_valid()
                    self.result.records += 1
                    if not self._in_transaction:
                        self.result.image.provenance = MetadataProvenance(
                            batch.base_offset, epoch, batch.max_timestamp)
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


def _snapshot_epoch(path: Path) -> int:
    from ... import files

    parsed = files.parse_kraft_snapshot_file_name(path)
    return parsed[1] if parsed else -1
