"""Plain-Python oracle for native/record_filter.py, written from Kafka's ``Cleaner``
(``shouldRetainRecord``) and ``MemoryRecordsBuilder``/``DefaultRecord.writeTo``.

Works on one uncompressed v2 records area at a time with the plain map of
tests/reference/offset_map.py.
"""

from __future__ import annotations

from tests.reference.offset_map import OffsetMapModel, parse_records
from tests.reference.varint import encode_varint, encode_varlong

MODE_SKIP, MODE_FILTER, MODE_KEEP_ALL, MODE_KEEP_NONE = 0, 1, 2, 3


def filter_records(area: bytes, count: int, base_offset: int, base_timestamp: int,
                   log_append_time: int, mode: int, retain_deletes: bool,
                   model: OffsetMapModel, latest_offset: int) -> dict:
    """Per record: kept or not, its timestamp; per batch: the summary the kernel reports."""
    recs = parse_records(area, count, base_offset) if mode != MODE_SKIP else []
    kept_flags, stamps, invalid = [], [], 0
    for r in recs:
        ts = log_append_time if log_append_time >= 0 else base_timestamp + r["ts_delta"]
        if mode == MODE_KEEP_ALL:
            keep = True
        elif mode == MODE_FILTER:
            if r["offset"] > latest_offset:
                keep = True
            elif r["key"] is not None:
                found = model.get(r["key"])
                keep = r["offset"] >= found and (r["value"] is not None or retain_deletes)
            else:
                keep = False
                invalid += 1
        else:
            keep = False
        kept_flags.append(keep)
        stamps.append(ts)
    kept = [r for r, k in zip(recs, kept_flags) if k]
    return {
        "keep": kept_flags,
        "ts": stamps,
        "kept": len(kept),
        "tombstones": int(any(r["value"] is None for r in kept)),
        "max_kept_offset": max((r["offset"] for r in kept), default=-1),
        "first_kept_ts": next((t for t, k in zip(stamps, kept_flags) if k), -1),
        "read": len(recs),
        "invalid": invalid,
    }


def rewrite_records(area: bytes, count: int, base_offset: int, keep: list[bool],
                    stamps: list[int], new_base_ts: int) -> tuple[bytes, int]:
    """The kept records re-encoded against ``new_base_ts``; and the largest kept timestamp."""
    out = bytearray()
    max_ts = -1
    for r, k, ts in zip(parse_records(area, count, base_offset), keep, stamps):
        if not k:
            continue
        max_ts = max(max_ts, ts)
        body = bytearray(b"\x00")
        tmp = bytearray(10)
        n = encode_varlong(tmp, 0, ts - new_base_ts)
        body += tmp[:n]
        body += area[r["rest"]:r["end"]]
        head = bytearray(5)
        n = encode_varint(head, 0, len(body))
        out += head[:n] + body
    return bytes(out), max_ts


A_DROP, A_COPY, A_REBUILD, A_EMPTY, A_EXTERNAL = 0, 1, 2, 3, 4


def batch_header(size: int, base_offset: int, leader_epoch: int, attributes: int,
                 last_delta: int, base_ts: int, max_ts: int, producer_id: int,
                 producer_epoch: int, base_sequence: int, count: int) -> bytes:
    """DefaultRecordBatch.writeHeader with a zero CRC."""
    import struct

    return struct.pack(">qiibIhiqqqhii", base_offset, size - 12, leader_epoch, 2, 0,
                       attributes, last_delta, base_ts, max_ts, producer_id, producer_epoch,
                       base_sequence, count)


def assemble_batch(action: int, src: bytes, area: bytes, count: int, base_offset: int,
                   last_offset: int, leader_epoch: int, attributes: int, base_ts: int,
                   max_ts: int, max_from_records: bool, producer_id: int, producer_epoch: int,
                   base_sequence: int, keep: list[bool], stamps: list[int], side: bytes
                   ) -> tuple[bytes, int]:
    """The output of one batch (``src``: its bytes, ``area``: its records): bytes, and the
    maxTimestamp written in its header (-1 when none is written)."""
    if action == A_DROP:
        return b"", -1
    if action == A_COPY:
        return src, -1
    if action == A_EXTERNAL:
        return side, -1
    if action == A_EMPTY:
        return batch_header(61, base_offset, leader_epoch, attributes,
                            last_offset - base_offset, -1, max_ts, producer_id,
                            producer_epoch, base_sequence, 0), max_ts
    records, rec_max = rewrite_records(area, count, base_offset, keep, stamps, base_ts)
    mts = rec_max if max_from_records else max_ts
    return batch_header(61 + len(records), base_offset, leader_epoch, attributes,
                        last_offset - base_offset, base_ts, mts, producer_id, producer_epoch,
                        base_sequence, sum(keep)) + records, mts
