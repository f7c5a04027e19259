"""Where each compressed records area's codec payload lies: many batches' frames in one call.

A producer with ``linger.ms=0`` under light load writes one batch per record. Decompressing
those one at a time through the codec layer (``kafkalog.records.compression``) spends most of
its time in Python parsing each tiny frame, not in the codec. This kernel reads the frames of a
whole run of batches at once and reports, per batch, the bytes to hand to the raw codec call
(``kafkalog.records.packed_areas`` then makes one call per batch, straight into a shared
buffer) when the frame has the plain shape every Kafka producer writes:

* snappy (codec 2): snappy-java's stream (``\\x82SNAPPY\\x00``, version >= 1, compatible
  version) holding exactly one chunk (at most 3 bytes after it, which snappy-java ignores); or,
  without that header, one raw snappy block (snappy-java reads such input that way). Payload: the
  raw block; ``need``: the length its preamble declares.
* lz4 (codec 3): Kafka's LZ4 frame (``KafkaLZ4BlockOutputStream``: magic ``0x184D2204``, version
  01, independent blocks; a content size field, which python-lz4 writes, skipped as Kafka
  skips it) holding exactly one block (with its checksum if the frame has block checksums, as
  aiokafka's do: ``block_check``, its stored value) and the end mark, then optionally the
  content checksum (``check``: its stored value; Go producers write it). Payload: the block;
  ``need``: the frame's maximum block size (a compressed block) or its size (a stored block,
  ``kind`` 1: a copy, no codec call); ``desc``: FLG | BD << 8 | HC << 16, plus 1 << 24 when
  the descriptor holds a content size (then it is bytes 4-13 of the frame). The header checksum
  is the caller's to verify (xxHash32 of the descriptor: a library call).
* zstd (codec 4): exactly one zstd frame (no dictionary), its blocks of types raw, RLE or
  compressed, ending at the end of the area. Payload: the frame; ``need``: the bound of its
  output that its block headers give (RFC 8878 §3.1.1: a raw or RLE block regenerates its
  Block_Size bytes, a compressed one at most 128 KiB).

Anything else (a stream of several chunks or frames or blocks, a truncated or
malformed header, an empty payload) gets ``kind`` -1: the caller decompresses that batch through
the codec layer, which accepts or raises exactly as it always has. So this kernel only ever
narrows what takes the fast path; it never decides that bytes are valid (the codec call does).
"""

from __future__ import annotations

import numpy as np

from ._jit import inline, kernel
from .bytes_be import read_i32

CODEC_SNAPPY = 2
CODEC_LZ4 = 3
CODEC_ZSTD = 4

#: ``kind`` values
SLOW = -1  # not the plain shape: the codec layer decompresses this batch
CALL = 0  # one raw codec call on the payload
COPY = 1  # an lz4 stored block: the payload is the content

SNAPPY_MAGIC = np.frombuffer(b"\x82SNAPPY\x00", np.uint8)
LZ4_MAGIC = 0x184D2204
ZSTD_MAGIC = 0xFD2FB528
LZ4_UNCOMPRESSED = 0x80000000
ZSTD_BLOCK_MAX = 128 * 1024


@inline
def _u32le(buf, p):
    return (np.int64(buf[p]) | (np.int64(buf[p + 1]) << 8) | (np.int64(buf[p + 2]) << 16)
            | (np.int64(buf[p + 3]) << 24))


@inline
def _snappy(buf, s, e, magic, out):
    """Fill ``out`` = (payload start, payload end, need) for a snappy area; False if not plain."""
    n = e - s
    if n <= 0:
        return False
    is_stream = n >= 16
    if is_stream:
        for k in range(8):
            if buf[s + k] != magic[k]:
                is_stream = False
                break
    a = s
    if is_stream:
        if read_i32(buf, s + 8) < 1:  # stream version
            return False
        if n - 16 < 4:
            return False  # a stream without a chunk (empty content)
        chunk = read_i32(buf, s + 16)
        a = s + 20
        # one chunk, at most 3 bytes after it (no room for another length: snappy-java ends)
        if chunk < 1 or chunk > e - a or e - (a + chunk) >= 4:
            return False
        e = a + chunk
    # the raw block's preamble: its uncompressed length, a little-endian base-128 varint
    v = np.int64(0)
    shift = 0
    p = a
    while True:
        if p >= e or shift > 28:
            return False
        b = np.int64(buf[p])
        v |= (b & 0x7F) << shift
        p += 1
        if b < 0x80:
            break
        shift += 7
    if v > 0xFFFFFFFF:
        return False
    out[0] = a
    out[1] = e
    out[2] = v
    return True


@kernel
def frame_payloads(buf, starts, ends, codec, p_start, p_end, need, kind, desc, check,
                   block_check):
    """For each area ``buf[starts[i]:ends[i]]`` compressed with ``codec`` (2, 3 or 4): its
    payload ``[p_start[i], p_end[i])``, ``need`` (output bytes it may take, see the module
    docstring), ``kind`` (``SLOW``/``CALL``/``COPY``), and for lz4 ``desc``, ``check`` and
    ``block_check`` (the stored content and block checksums, or -1). Returns the number of
    areas with the plain shape."""
    plain = 0
    tmp = np.zeros(3, np.int64)
    for i in range(starts.shape[0]):
        s = starts[i]
        e = ends[i]
        kind[i] = -1
        desc[i] = 0
        check[i] = -1
        block_check[i] = -1
        if s < 0 or e > buf.shape[0] or s >= e:
            continue
        n = e - s
        if codec == 2:
            if not _snappy(buf, s, e, SNAPPY_MAGIC, tmp):
                continue
            p_start[i] = tmp[0]
            p_end[i] = tmp[1]
            need[i] = tmp[2]
            kind[i] = 0
            plain += 1
        elif codec == 3:
            if n < 7 or _u32le(buf, s) != LZ4_MAGIC:
                continue
            flg = np.int64(buf[s + 4])
            bd = np.int64(buf[s + 5])
            # version 01, independent blocks, reserved bits 0; a content size is skipped,
            # as Kafka does
            if (flg >> 6) != 1 or (flg & 0x20) == 0 or (flg & 0x03) != 0:
                continue
            if (bd & 0x8F) != 0 or ((bd >> 4) & 7) < 4:
                continue
            max_block = np.int64(1) << (2 * ((bd >> 4) & 7) + 8)
            sized = (flg & 0x08) != 0
            hc_at = s + 14 if sized else s + 6
            if hc_at >= e:
                continue
            p = hc_at + 1
            if e - p < 4:
                continue
            word = _u32le(buf, p)
            size = word & 0x7FFFFFFF
            p += 4
            if size == 0 or size > max_block or size > e - p:
                continue
            a = p
            p += size
            stored_block = np.int64(-1)
            if flg & 0x10:
                if e - p < 4:
                    continue
                stored_block = _u32le(buf, p)
                p += 4
            if e - p < 4 or _u32le(buf, p) != 0:
                continue  # another block, or no end mark
            p += 4
            stored = np.int64(-1)
            if flg & 0x04:
                if e - p < 4:
                    continue
                stored = _u32le(buf, p)
            p_start[i] = a
            p_end[i] = a + size
            if word & LZ4_UNCOMPRESSED:
                need[i] = size
                kind[i] = 1
            else:
                need[i] = max_block
                kind[i] = 0
            desc[i] = flg | (bd << 8) | (np.int64(buf[hc_at]) << 16) | (
                (np.int64(1) << 24) if sized else 0)
            check[i] = stored
            block_check[i] = stored_block
            plain += 1
        elif codec == 4:
            if n < 6 or _u32le(buf, s) != ZSTD_MAGIC:
                continue
            fhd = np.int64(buf[s + 4])
            if (fhd & 0x08) != 0 or (fhd & 0x03) != 0:
                continue  # reserved bit; a dictionary id
            single = (fhd & 0x20) != 0
            fcs = 0
            code = fhd >> 6
            if code == 0:
                fcs = 1 if single else 0
            elif code == 1:
                fcs = 2
            elif code == 2:
                fcs = 4
            else:
                fcs = 8
            p = s + 5 + (0 if single else 1) + fcs
            ok = False
            bound = np.int64(0)
            while True:
                if e - p < 3:
                    break
                header = np.int64(buf[p]) | (np.int64(buf[p + 1]) << 8) \
                    | (np.int64(buf[p + 2]) << 16)
                p += 3
                btype = (header >> 1) & 3
                bsize = header >> 3
                if btype == 0:  # raw: its bytes
                    p += bsize
                    bound += bsize
                elif btype == 2:  # compressed: at most one block's maximum out
                    p += bsize
                    bound += ZSTD_BLOCK_MAX
                elif btype == 1:  # RLE: one byte, Block_Size times
                    p += 1
                    bound += bsize
                else:
                    break
                if p > e:
                    break
                if header & 1:
                    ok = True
                    break
            if not ok:
                continue
            if fhd & 0x04:
                p += 4
            if p != e:
                continue  # another frame, or bytes after this one
            p_start[i] = s
            p_end[i] = e
            need[i] = bound
            kind[i] = 0
            plain += 1
    return plain
