"""Renderers for :mod:`kafkalog.tools.dump` items: Kafka's text shapes per version, and JSON lines.

:class:`TextRenderer` turns each item into the exact line(s) Kafka's DumpLogSegments prints for
the selected :class:`~kafkalog.tools.kafka_versions.KafkaShape` (0.11 ... 4.2 and the Java
rewrite; the release table and its sources are in :mod:`kafkalog.tools.kafka_versions`) and, at
the end of the run, the stderr summaries.

Summary ordering (what Kafka's collections do):

* Scala keeps per-file lists in a ``mutable.Map`` (a hash map: iteration order is not insertion
  order) and *prepends* index mismatches and non-consecutive pairs, so they print newest first;
  time-index errors are appended (file order). Files come in the hash map's iteration order,
  which we reproduce from ``String.hashCode`` of the absolute paths for the Scala version of the
  release's build (:mod:`kafkalog.decoders.jvm_order`).
* The Java rewrite keys mismatches by index offset in a reverse-ordered TreeMap and
  non-consecutive pairs by previous offset in a TreeMap (ascending), so duplicates collapse.

:class:`JsonRenderer` (beyond Kafka) writes one JSON object per item: every field, keys/values as
UTF-8 text when valid (``key_encoding: "utf8"``) else base64 (``"base64"``).

Example
-------
>>> from kafkalog.tools.dump import FileStart
>>> TextRenderer().render(FileStart("00000000000000000000.log", "log"))
[('out', 'Dumping 00000000000000000000.log')]
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from itertools import chain
from typing import Any

from ..decoders.jvm_order import java_hash_map_order, java_string_hash, scala_hash_map_order
from .dump import (
    DEFAULT_SHAPE,
    BatchItem,
    ControlInfo,
    DumpOptions,
    FileError,
    FileStart,
    IndexEntryItem,
    IndexMismatch,
    KafkaShape,
    LogHeader,
    NonConsecutiveOffsets,
    Notice,
    OutOfOrderTimestamp,
    RecordBlock,
    RecordItem,
    ShallowOffsetNotFound,
    SnapshotEntryItem,
    TimeIndexEntryItem,
    TimeIndexMismatch,
    TrailingBytes,
    TxnEntryItem,
    _decrement_sequence,
)

__all__ = [
    "TextRenderer",
    "JsonRenderer",
    "Line",
    "java_hash_map_order",
    "java_string_hash",
    "scala_hash_map_order",
]

Line = tuple[str, str]  # (stream "out" | "err", text without newline)


def _b(v: bool) -> str:
    return "true" if v else "false"


def _i32(x: int) -> int:
    """Java int arithmetic (wraps)."""
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x & 0x80000000 else x




class TextRenderer:
    """Kafka's text, line for line, for one :class:`KafkaShape`.

    Parameters
    ----------
    shape:
        Which Kafka version to imitate (default: ``DEFAULT_SHAPE``, the newest release line).
    opts:
        The dump options (needed for ``--deep-iteration`` / ``--skip-record-metadata``).
    """

    def __init__(self, shape: KafkaShape = DEFAULT_SHAPE, opts: DumpOptions | None = None) -> None:
        self.shape = shape
        self.opts = opts or DumpOptions(shape=shape)
        self._batch: BatchItem | None = None  # the batch the next records belong to
        self._first_record_of: BatchItem | None = None  # (2.8 lines of legacy entries)
        self._first_record_offset = -1

    # -- items ------------------------------------------------------------------------------

    def render(self, item: Any) -> list[Line]:
        """Lines for one item (possibly none)."""
        s = self.shape
        if type(item) is RecordItem:  # the common case first
            return [("out", self.record_line(item))]
        if type(item) is RecordBlock:
            text = self.record_block_text(item)
            return [("out", text)] if text else []
        if isinstance(item, FileStart):
            return [("out", f"Dumping {item.path}")]
        if isinstance(item, LogHeader):
            if item.base_offset is not None:
                return [("out", f"{s.log_header_label}: {item.base_offset}")]
            if item.bootstrap:
                return [("out", "KRaft bootstrap snapshot")]
            return [
                (
                    "out",
                    f"Snapshot end offset: {item.snapshot_end_offset}, "
                    f"epoch: {item.snapshot_epoch}",
                )
            ]
        if isinstance(item, BatchItem):
            self._batch = item
            if not s.batch_and_records and self.opts.deep_iteration:
                return []  # 2.0-2.1: deep iteration prints record lines only
            return [("out", self.batch_line(item))]
        if isinstance(item, RecordItem):
            return [("out", self.record_line(item))]
        if isinstance(item, TrailingBytes):
            return [("out", f"Found {item.count} invalid bytes at the end of {item.file_name}")]
        if isinstance(item, IndexEntryItem):
            return [("out", f"offset: {item.offset} position: {item.position}")]
        if isinstance(item, TimeIndexEntryItem):
            return [("out", f"timestamp: {item.timestamp} offset: {item.offset}")]
        if isinstance(item, SnapshotEntryItem):
            return [("out", self.snapshot_line(item))]
        if isinstance(item, TxnEntryItem):
            return [
                (
                    "out",
                    f"version: {item.version} producerId: {item.producer_id} "
                    f"firstOffset: {item.first_offset} lastOffset: {item.last_offset} "
                    f"lastStableOffset: {item.last_stable_offset}",
                )
            ]
        if isinstance(item, Notice):
            return [(item.stream, item.text)]
        if isinstance(item, FileError):
            return self.error_lines(item)
        return []

    def error_lines(self, e: FileError) -> list[Line]:
        """An aborting exception: Kafka's first stderr line (the stack trace is not imitated).

        CorruptSnapshotException is the one Kafka catches: it prints just the message.
        """
        if e.java_class.endswith("CorruptSnapshotException"):
            return [("err", e.message)]
        if self.shape.java_rewrite:
            return [("err", e.message if e.message else "null")]
        msg = f"{e.java_class}: {e.message}" if e.message else e.java_class
        return [("err", f"{self.shape.exception_prefix}{msg}")]

    def _codec(self, name: str) -> str:
        return name.upper() if self.shape.upper_case_codec else name

    def batch_line(self, b: BatchItem) -> str:
        """The batch line (``printBatchLevel`` from 2.2; the shallow-iteration line before).

        Fields as each release printed them (``KafkaShape.has_count``, ``has_is_control``,
        ``has_delete_horizon``, ``batch_line_layout``: until 2.1 ``isvalid`` came after the
        timestamp, from 2.2 it ends the line).
        """
        s = self.shape
        if b.magic >= 2:
            parts = [f"baseOffset: {b.base_offset} lastOffset: {b.last_offset}"]
            if s.has_count:
                parts.append(f" count: {b.count}")
            parts += [
                f" baseSequence: {b.base_sequence} lastSequence: {b.last_sequence}",
                f" producerId: {b.producer_id} producerEpoch: {b.producer_epoch}",
                f" partitionLeaderEpoch: {b.partition_leader_epoch}",
                f" isTransactional: {_b(b.is_transactional)}",
            ]
            if s.has_is_control:
                parts.append(f" isControl: {_b(b.is_control)}")
            if s.has_delete_horizon:
                dh = (
                    "OptionalLong.empty"
                    if b.delete_horizon_ms is None
                    else f"OptionalLong[{b.delete_horizon_ms}]"
                )
                parts.append(f" deleteHorizonMs: {dh}")
            head = "".join(parts)
        else:
            head = f"offset: {b.last_offset}"
        ts = f" position: {b.position} {b.timestamp_type}: {b.max_timestamp}"
        tail = (
            f" size: {b.size} magic: {b.magic} compresscodec: {self._codec(b.compression)}"
            f" crc: {b.crc}"
        )
        if s.batch_line_layout == "0.11":
            return f"{head}{ts} isvalid: {_b(b.is_valid)}{tail}"
        return f"{head}{ts}{tail} isvalid: {_b(b.is_valid)}"

    def _control_text(self, c: ControlInfo) -> str:
        if c.type_name in ("ABORT", "COMMIT"):
            return f" endTxnMarker: {c.type_name} coordinatorEpoch: {c.coordinator_epoch}"
        if c.json is not None:
            label = {
                "SNAPSHOT_HEADER": "SnapshotHeader ",
                "SNAPSHOT_FOOTER": "SnapshotFooter ",
                "KRAFT_VERSION": "KRaftVersion ",
                "KRAFT_VOTERS": "KRaftVoters ",
                "LEADER_CHANGE": "LeaderChange: ",
            }[c.type_name]
            return f" {label}{c.json}"
        return f" controlType: {c.type_name}({c.type_id})"

    def record_line(self, r: RecordItem) -> str:
        """One record line (deep iteration) in the shape's ``record_line_style``."""
        s = self.shape
        if not s.batch_and_records:
            return self._record_line_0_11(r)
        skip = self.opts.skip_record_metadata and s.has_skip_record_metadata
        out = []
        if not skip:
            if s.record_line_style == "2.8":
                out.append(self._record_head_2_8(r))
            else:
                sizes = (
                    "keysize: {} valuesize: {}"
                    if s.lower_case_sizes
                    else "keySize: {} valueSize: {}"
                )
                out.append(
                    f"| offset: {r.offset} {r.timestamp_type}: {r.timestamp} "
                    + sizes.format(r.key_size, r.value_size)
                )
            if r.magic >= 2:
                out.append(f" sequence: {r.sequence} headerKeys: [{','.join(r.header_keys)}]")
            tail = s.legacy_record_tail
            if r.magic < 2 and tail == "old":
                out.append(f" crc: {r.legacy_crc} isvalid: {_b(bool(r.legacy_valid))}")
            elif r.magic < 2 and tail == "scala":
                out.append(f" isValid: {_b(bool(r.legacy_valid))} crc: {r.legacy_crc}}}")
            elif r.magic < 2:
                out.append(f" isValid: {_b(bool(r.legacy_valid))} crc: {r.legacy_crc}")
            if r.control is not None:
                out.append(self._control_text(r.control))
        if r.print_contents:
            if skip:
                prefix = "| "
                payload_prefix = "| " if s.pipe_prefix_when_metadata_skipped else " "
            else:
                prefix = payload_prefix = " "
            if r.key_text is not None:
                out.append(f"{prefix}key: {r.key_text}")
                payload_prefix = " "
            if r.payload_text is not None:
                out.append(f"{payload_prefix}payload: {r.payload_text}")
        return "".join(out)

    def _batch_base_offset(self, r: RecordItem) -> int:
        """``batch.baseOffset``: a legacy entry's is its first record's offset
        (``AbstractLegacyRecordBatch.baseOffset`` iterates to it)."""
        b = self._batch
        if b is None:
            return r.offset
        if b.magic >= 2:
            return b.base_offset
        if self._first_record_of is not b:
            self._first_record_of = b
            self._first_record_offset = r.offset
        return self._first_record_offset

    def _record_head_2_8(self, r: RecordItem) -> str:
        """Kafka 2.8's record line (DumpLogSegments.scala @2.8.0, fixed in 3.0): record fields,
        then the batch's, ``crc: null`` for v2 records (``DefaultRecord.checksumOrNull``),
        ``isValid: true`` (``DefaultRecord.isValid``), ``compressType: NONE`` (the enum)."""
        b = self._batch
        valid = True if r.magic >= 2 else bool(r.legacy_valid)
        crc = "null" if r.magic >= 2 else str(r.legacy_crc)
        base = self._batch_base_offset(r)
        if b is None:
            return f"| offset: {r.offset} isValid: {_b(valid)} crc: {crc}"
        return (
            f"| offset: {r.offset} isValid: {_b(valid)} crc: {crc} keySize: {r.key_size}"
            f" valueSize: {r.value_size} {r.timestamp_type}: {r.timestamp} baseOffset: {base}"
            f" lastOffset: {b.last_offset} baseSequence: {b.base_sequence}"
            f" lastSequence: {b.last_sequence} producerEpoch: {b.producer_epoch}"
            f" partitionLeaderEpoch: {b.partition_leader_epoch} batchSize: {b.size}"
            f" magic: {b.magic} compressType: {b.compression.upper()} position: {b.position}"
        )

    def record_block_text(self, blk: RecordBlock) -> str:
        """The record lines of a :class:`RecordBlock`, joined by newlines (no final newline).

        Same text as :meth:`record_line` for each record (2.2+ shapes with metadata, v2 data
        batches: what :mod:`kafkalog.tools.dump` produces blocks for), built with one ``%``
        formatting over the whole batch instead of one f-string per record.
        """
        n = len(blk.offsets)
        if n == 0:
            return ""
        s = self.shape
        ks, vs = ("keysize", "valuesize") if s.lower_case_sizes else ("keySize", "valueSize")
        # timestamp_type is one of three fixed names: no '%' to escape in the template
        head = (
            f"| offset: %d {blk.batch.timestamp_type}: %d {ks}: %d {vs}: %d sequence: %d"
            " headerKeys: ["
        )
        cols = [
            blk.offsets.tolist(),
            blk.timestamps.tolist(),
            blk.key_sizes.tolist(),
            blk.value_sizes.tolist(),
            blk.sequences.tolist(),
        ]
        tail = "]"
        if blk.header_keys is not None:
            head += "%s"
            cols.append([",".join(h) for h in blk.header_keys])
        if blk.key_texts is not None:
            # print_contents with metadata: " key: K" when the key is not null, then
            # " payload: V" when the value is not null (record_line's non-skip branch)
            tail += "%s%s"
            cols.append(["" if k is None else " key: " + k for k in blk.key_texts])
            cols.append(["" if v is None else " payload: " + v for v in blk.payload_texts])
        template = "\n".join([head + tail] * n)
        return template % tuple(chain.from_iterable(zip(*cols)))

    def _record_line_0_11(self, r: RecordItem) -> str:
        """0.11-2.1 deep iteration: one self-contained line per record, no batch line
        (DumpLogSegments.scala @0.11.0.0 ... @2.1.0): ``isvalid`` is the record's
        (``DefaultRecord.isValid`` is always true; a legacy record checks its own CRC),
        ``position`` its batch's; ``producerEpoch`` from 0.11.0.2."""
        b = self._batch
        valid = True if r.magic >= 2 else bool(r.legacy_valid)
        codec = self._codec(b.compression if b is not None else "none")
        out = [
            f"offset: {r.offset} position: {r.batch_position} {r.timestamp_type}: {r.timestamp}"
            f" isvalid: {_b(valid)} keysize: {r.key_size} valuesize: {r.value_size}"
            f" magic: {r.magic} compresscodec: {codec}"
        ]
        if r.magic >= 2:
            pid = b.producer_id if b is not None else -1
            out.append(f" producerId: {pid}")
            if self.shape.record_has_producer_epoch:
                out.append(f" producerEpoch: {b.producer_epoch if b is not None else -1}")
            txn = b.is_transactional if b is not None else False
            out.append(
                f" sequence: {r.sequence} isTransactional: {_b(txn)}"
                f" headerKeys: [{','.join(r.header_keys)}]"
            )
        else:
            out.append(f" crc: {r.legacy_crc}")
        if r.control is not None:
            out.append(self._control_text(r.control))
        elif r.print_contents:
            if r.key_text is not None:
                out.append(f" key: {r.key_text}")
            if r.payload_text is not None:
                out.append(f" payload: {r.payload_text}")
        return "".join(out)

    def snapshot_line(self, e: SnapshotEntryItem) -> str:
        """One producer of a ``.snapshot`` (``dumpProducerIdSnapshot``), per ``snapshot_style``:

        * 0.11: ``producerId: P producerEpoch: E lastSequence: S lastOffset: O offsetDelta: D
          lastTimestamp: T coordinatorEpoch: C currentTxnFirstOffset: X``;
        * 1.0.0-1.0.1: ``... currentTxnFirstOffset: X cachedMetadata: Queue(BatchMetadata(...))``;
        * 1.0.2 onwards: ``... currentTxnFirstOffset: X `` then the batch metadata, which until
          2.4.0 was kept even for ``lastOffset < 0`` (``readSnapshot``), with ``firstSequence =
          lastSequence - offsetDelta`` until 2.1 (``decrementSequence`` from 2.2, wrapping);
          ``lastTimestamp: T `` from 3.1; ``OptionalLong`` from 3.5.
        """
        s = self.shape
        if s.snapshot_optional_long:
            txn = (
                "OptionalLong.empty"
                if e.current_txn_first_offset is None
                else f"OptionalLong[{e.current_txn_first_offset}]"
            )
        else:
            txn = (
                "None"
                if e.current_txn_first_offset is None
                else f"Some({e.current_txn_first_offset})"
            )
        head = f"producerId: {e.producer_id} producerEpoch: {e.producer_epoch}"
        if s.snapshot_style == "0.11":
            return (
                f"{head} lastSequence: {e.raw_last_sequence} lastOffset: {e.raw_last_offset}"
                f" offsetDelta: {e.raw_offset_delta} lastTimestamp: {e.last_timestamp}"
                f" coordinatorEpoch: {e.coordinator_epoch} currentTxnFirstOffset: {txn}"
            )
        line = f"{head} coordinatorEpoch: {e.coordinator_epoch} currentTxnFirstOffset: {txn}"
        # BatchMetadata(lastSeq, lastOffset, offsetDelta, timestamp) as readSnapshot built it
        if s.at_least(2, 4, 1):
            has_meta = e.raw_last_offset >= 0
        else:
            has_meta = True
        if s.at_least(2, 2):
            first_seq = _decrement_sequence(e.raw_last_sequence, e.raw_offset_delta)
        else:
            first_seq = _i32(e.raw_last_sequence - e.raw_offset_delta)
        if s.snapshot_style == "1.0":
            first_offset = e.raw_last_offset - e.raw_offset_delta
            return (
                f"{line} cachedMetadata: Queue(BatchMetadata(firstSeq={first_seq}, "
                f"lastSeq={e.raw_last_sequence}, firstOffset={first_offset}, "
                f"lastOffset={e.raw_last_offset}, timestamp={e.last_timestamp}))"
            )
        if s.snapshot_last_timestamp:
            line += f" lastTimestamp: {e.last_timestamp}"
        if s.snapshot_trailing_space:
            line += " "
        if has_meta:
            sep = "" if s.snapshot_trailing_space else " "
            line += (
                f"{sep}firstSequence: {first_seq} lastSequence: {e.raw_last_sequence} "
                f"lastOffset: {e.raw_last_offset} offsetDelta: {e.raw_offset_delta} "
                f"timestamp: {e.last_timestamp}"
            )
        return line

    # -- end of run ---------------------------------------------------------------------------

    def summary(self, findings: Iterable[Any]) -> list[Line]:
        """The stderr summaries Kafka prints after all files (spec §7.4).

        Files come in the iteration order of the hash map Kafka keeps them in (keyed by
        absolute path): Scala's ``mutable.HashMap`` or, for the Java rewrite, ``java.util.HashMap``
        (see :func:`scala_hash_map_order` and :func:`java_hash_map_order`).
        """
        s = self.shape
        findings = list(findings)
        lines: list[Line] = []

        def by_file(cls: type, put_each: bool) -> list[tuple[str, list]]:
            d: dict[str, list] = {}
            puts: list[str] = []
            for f in findings:
                if isinstance(f, cls):
                    if f.abs_path not in d or put_each:
                        puts.append(f.abs_path)
                    d.setdefault(f.abs_path, []).append(f)
            if s.java_rewrite:
                order = java_hash_map_order(puts)
            else:
                order = scala_hash_map_order(puts, s.scala_version or "2.13")
            return [(k, d[k]) for k in order]

        # Scala re-puts the list on every index mismatch / non-consecutive pair (prepend and
        # put); time-index errors are put once per file. Java uses computeIfAbsent throughout.
        put_each = not s.java_rewrite
        for path, items in by_file(IndexMismatch, put_each):
            lines.append(("err", f"Mismatches in :{path}"))
            pairs = [(f.index_offset, f.log_offset) for f in items]
            if s.sorted_unique_summaries:
                pairs = sorted(dict(pairs).items(), reverse=True)
            else:
                pairs.reverse()  # Scala prepends: newest first
            lines += [("err", f"  Index offset: {a}, log offset: {b}") for a, b in pairs]
        for path, items in by_file(TimeIndexMismatch, False):
            lines.append(("err", f"Found timestamp mismatch in :{path}"))
            lines += [
                ("err", f"  Index timestamp: {f.index_timestamp}, log timestamp: {f.log_timestamp}")
                for f in items
            ]
        for path, items in by_file(OutOfOrderTimestamp, False):
            lines.append(("err", f"Found out of order timestamp in :{path}"))
            lines += [
                (
                    "err",
                    f"  Index timestamp: {f.index_timestamp}, Previously indexed timestamp: "
                    f"{f.previous_timestamp}",
                )
                for f in items
            ]
        for _path, items in by_file(ShallowOffsetNotFound, False):
            lines.append(("err", "The following indexed offsets are not found in the log."))
            lines += [
                ("err", f"Indexed offset: {f.index_offset}, found log offset: {f.log_offset}")
                for f in items
            ]
        for path, items in by_file(NonConsecutiveOffsets, put_each):
            sep = " :" if s.non_consecutive_colon else " "
            lines.append(("err", f"Non-consecutive offsets in{sep}{path}"))
            pairs = [(f.previous_offset, f.offset) for f in items]
            if s.sorted_unique_summaries:
                pairs = sorted(dict(pairs).items())
            else:
                pairs.reverse()
            lines += [("err", f"  {a} is followed by {b}") for a, b in pairs]
        return lines


def _bytes_field(prefix: str, data: bytes | None, out: dict) -> None:
    if data is None:
        out[prefix] = None
        out[f"{prefix}_encoding"] = None
        return
    try:
        out[prefix] = data.decode("utf-8")
        out[f"{prefix}_encoding"] = "utf8"
    except UnicodeDecodeError:
        out[prefix] = base64.b64encode(data).decode("ascii")
        out[f"{prefix}_encoding"] = "base64"


class JsonRenderer:
    """One JSON object per line for every item (beyond Kafka; pipe to ``jq``).

    Every object has ``"type"`` (``file``, ``log_header``, ``batch``, ``record``,
    ``trailing_bytes``, ``index_entry``, ``time_index_entry``, ``snapshot_entry``,
    ``txn_entry``, ``notice``, ``error``, or a finding type) and ``"file"``.
    """

    def render(self, item: Any) -> list[Line]:
        if isinstance(item, RecordBlock):
            return [
                line
                for r in item.record_items(item.key_texts is not None)
                for line in self.render(r)
            ]
        obj = self.to_dict(item)
        if obj is None:
            return []
        return [("out", json.dumps(obj, ensure_ascii=False, separators=(",", ":")))]

    def to_dict(self, item: Any) -> dict | None:
        if isinstance(item, FileStart):
            return {"type": "file", "file": item.path, "kind": item.kind}
        if isinstance(item, LogHeader):
            return {
                "type": "log_header",
                "file": item.path,
                "base_offset": item.base_offset,
                "snapshot_end_offset": item.snapshot_end_offset,
                "snapshot_epoch": item.snapshot_epoch,
                "bootstrap": item.bootstrap,
            }
        if isinstance(item, BatchItem):
            d = {"type": "batch", "file": item.path}
            for k in BatchItem.__slots__:
                if k != "path":
                    d[k] = getattr(item, k)
            return d
        if isinstance(item, RecordItem):
            d = {
                "type": "record",
                "file": item.path,
                "batch_position": item.batch_position,
                "magic": item.magic,
                "offset": item.offset,
                "timestamp_type": item.timestamp_type,
                "timestamp": item.timestamp,
                "key_size": item.key_size,
                "value_size": item.value_size,
                "sequence": item.sequence,
            }
            if item.legacy_valid is not None:
                d["is_valid"] = item.legacy_valid
                d["crc"] = item.legacy_crc
            _bytes_field("key", item.key, d)
            _bytes_field("value", item.value, d)
            hs = []
            for hk, hv in item.headers:
                h: dict = {"key": hk}
                _bytes_field("value", hv, h)
                hs.append(h)
            d["headers"] = hs
            if item.control is not None:
                c = item.control
                d["control"] = {
                    "type_id": c.type_id,
                    "type": c.type_name,
                    "coordinator_epoch": c.coordinator_epoch,
                    "data": None if c.json is None else json.loads(c.json),
                }
            if item.key_text is not None or item.payload_text is not None:
                d["decoded_key"] = item.key_text
                d["decoded_payload"] = item.payload_text
            return d
        if isinstance(item, TrailingBytes):
            return {"type": "trailing_bytes", "file": item.path, "count": item.count}
        if isinstance(item, IndexEntryItem):
            return {
                "type": "index_entry",
                "file": item.path,
                "slot": item.index,
                "offset": item.offset,
                "position": item.position,
            }
        if isinstance(item, TimeIndexEntryItem):
            return {
                "type": "time_index_entry",
                "file": item.path,
                "slot": item.index,
                "timestamp": item.timestamp,
                "offset": item.offset,
            }
        if isinstance(item, SnapshotEntryItem):
            d = {"type": "snapshot_entry", "file": item.path}
            for k in SnapshotEntryItem.__slots__:
                if k != "path":
                    d[k] = getattr(item, k)
            return d
        if isinstance(item, TxnEntryItem):
            return {
                "type": "txn_entry",
                "file": item.path,
                "version": item.version,
                "producer_id": item.producer_id,
                "first_offset": item.first_offset,
                "last_offset": item.last_offset,
                "last_stable_offset": item.last_stable_offset,
            }
        if isinstance(item, Notice):
            return {"type": "notice", "file": item.path, "stream": item.stream, "text": item.text}
        if isinstance(item, FileError):
            return {
                "type": "error",
                "file": item.path,
                "exception": item.java_class,
                "message": item.message,
                "position": item.position,
                "offset": item.offset,
            }
        return None

    def summary(self, findings: Iterable[Any]) -> list[Line]:
        out = []
        names = {
            IndexMismatch: "index_mismatch",
            TimeIndexMismatch: "time_index_mismatch",
            OutOfOrderTimestamp: "out_of_order_timestamp",
            ShallowOffsetNotFound: "indexed_offset_not_found",
            NonConsecutiveOffsets: "non_consecutive_offsets",
        }
        for f in findings:
            d = {"type": names[type(f)], "file": f.abs_path}
            for k in type(f).__slots__:
                if k != "abs_path":
                    d[k] = getattr(f, k)
            out.append(("out", json.dumps(d, separators=(",", ":"))))
        return out
