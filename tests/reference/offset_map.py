"""Plain-Python oracle for native/offset_map.py, written from Kafka's ``SkimpyOffsetMap.java``.

The table is a ``bytearray`` of ``slots * 24`` bytes (digest, then the offset as a big-endian
int64, ``ByteBuffer.putLong``); probing is ``positionOf`` with Java ``int`` arithmetic emulated
by masks. Keys are hashed with ``hashlib.md5``. Nothing is shared with the kernels.
"""

from __future__ import annotations

import hashlib
import struct

BYTES_PER_ENTRY = 24
HASH_SIZE = 16


def _java_int(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


def position_of(digest: bytes, attempt: int, slots: int) -> int:
    """``SkimpyOffsetMap.positionOf``: byte position of probe ``attempt``."""
    probe = _java_int(struct.unpack_from(">i", digest, min(attempt, HASH_SIZE - 4))[0]
                      + max(0, attempt - HASH_SIZE + 4))
    slot = (0 if probe == -(1 << 31) else abs(probe)) % slots  # Utils.abs
    return slot * BYTES_PER_ENTRY


class OffsetMapModel:
    """``SkimpyOffsetMap`` over ``memory`` bytes, plain Python."""

    def __init__(self, memory: int) -> None:
        self.slots = memory // BYTES_PER_ENTRY
        self.bytes = bytearray(self.slots * BYTES_PER_ENTRY)
        self.entries = 0
        self.lookups = 0
        self.probes = 0
        self.last_offset = -1

    def _empty(self, pos: int) -> bool:
        return not any(self.bytes[pos:pos + BYTES_PER_ENTRY])

    def put_digest(self, digest: bytes, offset: int) -> None:
        if self.entries >= self.slots:
            raise ValueError("full")
        self.lookups += 1
        attempt = 0
        pos = position_of(digest, attempt, self.slots)
        self.probes += 1
        while not self._empty(pos):
            if bytes(self.bytes[pos:pos + HASH_SIZE]) == digest:
                struct.pack_into(">q", self.bytes, pos + HASH_SIZE, offset)
                self.last_offset = offset
                return
            attempt += 1
            pos = position_of(digest, attempt, self.slots)
            self.probes += 1
        self.bytes[pos:pos + HASH_SIZE] = digest
        struct.pack_into(">q", self.bytes, pos + HASH_SIZE, offset)
        self.last_offset = offset
        self.entries += 1

    def get_digest(self, digest: bytes) -> int:
        self.lookups += 1
        attempt = 0
        max_attempts = self.slots + HASH_SIZE - 4
        while True:
            if attempt >= max_attempts:
                return -1
            pos = position_of(digest, attempt, self.slots)
            self.probes += 1
            if self._empty(pos):
                return -1
            attempt += 1
            if bytes(self.bytes[pos:pos + HASH_SIZE]) == digest:
                return struct.unpack_from(">q", self.bytes, pos + HASH_SIZE)[0]

    def put(self, key: bytes, offset: int) -> None:
        self.put_digest(hashlib.md5(key).digest(), offset)

    def get(self, key: bytes) -> int:
        return self.get_digest(hashlib.md5(key).digest())


def parse_records(area: bytes, count: int, base_offset: int) -> list[dict]:
    """The records of an uncompressed v2 records area: offset, key, value, timestamp delta,
    the byte range of each record and of the part after its timestamp delta."""
    from tests.reference.varint import decode_varint, decode_varlong

    out = []
    p = 0
    for _ in range(count):
        start = p
        length, p = decode_varint(area, p, len(area))
        if p < 0 or length < 1 or p + length > len(area):
            raise ValueError(f"bad record length at {start}")
        end = p + length
        ts_delta, q = decode_varlong(area, p + 1, end)
        rest = q
        od, q = decode_varint(area, q, end)
        klen, q = decode_varint(area, q, end)
        if q < 0 or klen < -1 or q + max(klen, 0) > end:
            raise ValueError(f"bad key at {start}")
        key = None if klen < 0 else bytes(area[q:q + klen])
        q += max(klen, 0)
        vlen, q = decode_varint(area, q, end)
        if q < 0 or vlen < -1:
            raise ValueError(f"bad value at {start}")
        value = None if vlen < 0 else bytes(area[q:q + vlen])
        out.append({"offset": base_offset + od, "key": key, "value": value,
                    "ts_delta": ts_delta, "start": start, "end": end, "rest": rest})
        p = end
    return out


def put_records(area: bytes, count: int, base_offset: int, start_offset: int,
                model: OffsetMapModel, max_entries: int) -> tuple[str, int]:
    """Kafka's ``buildOffsetMapForSegment`` inner loop: ``("ok"|"full", records read)``."""
    read = 0
    for r in parse_records(area, count, base_offset):
        if r["key"] is not None and r["offset"] >= start_offset:
            if model.entries >= max_entries:
                return "full", read
            model.put(r["key"], r["offset"])
        read += 1
    return "ok", read
