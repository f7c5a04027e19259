"""Renderers for :mod:`kafkalog.tools.dump` items: Kafka's text shapes per version, and JSON lines.

:class:`TextRenderer` turns each item into the exact line(s) Kafka's DumpLogSegments prints for
the selected :class:`~kafkalog.tools.dump.KafkaShape` (spec §7.3-7.5) and, at the end of the run,
the stderr summaries. Sources followed: ``core/src/main/scala/kafka/tools/DumpLogSegments.scala``
(4.0 line, the default), the Java rewrite ``tools/src/main/java/org/apache/kafka/tools/
DumpLogSegments.java`` (``trunk``) and, for 2.2-2.7, the Scala file of that era.

Summary ordering (what Kafka's collections do):

* Scala keeps per-file lists in a ``mutable.Map`` (a hash map: iteration order is not insertion
  order) and *prepends* index mismatches and non-consecutive pairs, so they print newest first;
  time-index errors are appended (file order). Files come in the hash map's iteration order,
  which we reproduce from ``String.hashCode`` of the absolute paths.
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
)

__all__ = ["TextRenderer", "JsonRenderer", "Line"]

Line = tuple[str, str]  # (stream "out" | "err", text without newline)


def _b(v: bool) -> str:
    return "true" if v else "false"


class TextRenderer:
    """Kafka's text, line for line, for one :class:`KafkaShape`.

    Parameters
    ----------
    shape:
        Which Kafka version to imitate (default: 4.0 Scala).
    opts:
        The dump options (needed for ``--deep-iteration`` / ``--skip-record-metadata``).
    """

    def __init__(self, shape: KafkaShape = DEFAULT_SHAPE, opts: DumpOptions | None = None) -> None:
        self.shape = shape
        self.opts = opts or DumpOptions(shape=shape)
        self._batch: BatchItem | None = None  # the batch the next records belong to

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
        s = self.shape
        if b.magic >= 2:
            parts = [
                f"baseOffset: {b.base_offset} lastOffset: {b.last_offset} count: {b.count}",
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
        return (
            f"{head} position: {b.position} {b.timestamp_type}: {b.max_timestamp} size: {b.size}"
            f" magic: {b.magic} compresscodec: {self._codec(b.compression)} crc: {b.crc}"
            f" isvalid: {_b(b.is_valid)}"
        )

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
        s = self.shape
        skip = self.opts.skip_record_metadata and s.has_skip_record_metadata
        if not s.batch_and_records:
            return self._record_line_20(r)
        out = []
        if not skip:
            sizes = (
                "keysize: {} valuesize: {}" if s.lower_case_sizes else "keySize: {} valueSize: {}"
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

    def _record_line_20(self, r: RecordItem) -> str:
        # 2.0-2.1 deep iteration: one self-contained line per record (no batch line).
        # Shape reconstructed from the 2.0 source as remembered; not verified byte-exact.
        b = self._batch
        valid = b.is_valid if b is not None else True
        if r.legacy_valid is not None:
            valid = r.legacy_valid
        out = [
            f"offset: {r.offset} position: {r.batch_position} {r.timestamp_type}: {r.timestamp}"
            f" isvalid: {_b(valid)} keysize: {r.key_size} valuesize: {r.value_size}"
            f" magic: {r.magic} compresscodec: {self._codec(b.compression if b else 'none')}"
        ]
        if r.magic >= 2:
            out.append(f" sequence: {r.sequence} headerKeys: [{','.join(r.header_keys)}]")
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
        line = (
            f"producerId: {e.producer_id} producerEpoch: {e.producer_epoch} "
            f"coordinatorEpoch: {e.coordinator_epoch} currentTxnFirstOffset: {txn}"
        )
        if s.snapshot_last_timestamp:
            line += f" lastTimestamp: {e.last_timestamp}"
        if s.snapshot_trailing_space:
            line += " "
        if e.last_offset is not None:
            sep = "" if s.snapshot_trailing_space else " "
            line += (
                f"{sep}firstSequence: {e.first_sequence} lastSequence: {e.last_sequence} "
                f"lastOffset: {e.last_offset} offsetDelta: {e.offset_delta} "
                f"timestamp: {e.timestamp}"
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
                order = scala_hash_map_order(puts)
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


def java_string_hash(s: str) -> int:
    """``String.hashCode()`` as a signed 32-bit int (over UTF-16 code units)."""
    data = s.encode("utf-16-be")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def _spread(h: int) -> int:
    # h ^ (h >>> 16) on a signed int: Scala 2.13 improveHash, Java HashMap.hash
    u = h & 0xFFFFFFFF
    u ^= u >> 16
    return u - (1 << 32) if u >= 1 << 31 else u


def scala_hash_map_order(puts: list[str]) -> list[str]:
    """Iteration order of a Scala 2.13 ``mutable.HashMap`` after these ``put`` calls.

    Capacity starts at 16 and doubles *before* a put when ``size + 1 >= 0.75 * capacity`` (even
    for a key already present); iteration walks the buckets (``hash & (capacity - 1)``) in
    order and each bucket's nodes in ascending (signed) improved-hash order, equal hashes in
    insertion order.

    >>> scala_hash_map_order(["b", "a"])
    ['a', 'b']
    """
    cap, size = 16, 0
    first_seen: dict[str, int] = {}
    for k in puts:
        if size + 1 >= int(cap * 0.75):
            cap *= 2
        if k not in first_seen:
            first_seen[k] = len(first_seen)
            size += 1
    hashes = {k: _spread(java_string_hash(k)) for k in first_seen}
    return sorted(first_seen, key=lambda k: (hashes[k] & (cap - 1), hashes[k], first_seen[k]))


def java_hash_map_order(puts: list[str]) -> list[str]:
    """Iteration order of a ``java.util.HashMap`` after inserting these keys.

    Capacity 16, doubled after an insertion that takes the size past ``0.75 * capacity``;
    iteration walks the buckets in order and each bucket in insertion order (resizes keep the
    relative order). Buckets longer than 8 become trees (not modelled: that many files).
    """
    first_seen: dict[str, int] = {}
    cap = 16
    for k in puts:
        if k not in first_seen:
            first_seen[k] = len(first_seen)
            if len(first_seen) > int(cap * 0.75):
                cap *= 2
    return sorted(
        first_seen, key=lambda k: (_spread(java_string_hash(k)) & (cap - 1), first_seen[k])
    )


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
