"""Kafka's compression codecs, framed exactly as Kafka frames them (spec §3).

=====  ====  ==================================================================================
name   id    framing
=====  ====  ==================================================================================
none   0     the bytes themselves
gzip   1     RFC 1952 members as Java's ``GZIPOutputStream`` writes them; concatenated members
             are read, trailing bytes that are not a gzip header are ignored (as Java does)
snappy 2     xerial snappy-java stream: 16-byte header then ``[int32 BE length][raw block]``
             blocks of at most 32 KiB input; raw snappy is read when the header is absent
lz4    3     one LZ4 frame, independent 64 KiB blocks, header checksum computed over FLG||BD
             (magic 1/2) or, KAFKA-3160, over magic||FLG||BD (magic 0, not verified on read)
zstd   4     standard zstd frames (magic 2 only), possibly without a content size
=====  ====  ==================================================================================

Decompression is bounded: output above ``max_size`` raises :class:`RecordTooLargeError` (a
decompression bomb never allocates much more than ``max_size``); truncated or garbage input
raises :class:`CorruptRecordError`. No other exception escapes :func:`decompress`.

Raw codecs come from ``cramjam``; zstd uses the ``zstandard`` package when installed (it can
stream with a bounded output) and falls back to ``cramjam`` otherwise.

>>> compress("lz4", b"hello").hex()
'04224d186040820500008068656c6c6f00000000'
>>> decompress("snappy", compress("snappy", b"hello"))
b'hello'
"""

from __future__ import annotations

import struct
import threading
import zlib
from typing import Any

import cramjam
import xxhash as _xxhash

from ..errors import CorruptRecordError, RecordTooLargeError, UnsupportedCodecError

try:  # optional: bounded streaming zstd decode
    import zstandard as _zstandard
except ImportError:  # pragma: no cover - exercised only where zstandard is absent
    _zstandard = None

__all__ = [
    "CODEC_IDS",
    "CODEC_NAMES",
    "NONE",
    "GZIP",
    "SNAPPY",
    "LZ4",
    "ZSTD",
    "DEFAULT_MAX_DECOMPRESSED",
    "codec_id",
    "codec_name",
    "compress",
    "decompress",
    "decompress_into",
    "decompressed_bound",
    "xxh32",
]

NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4
CODEC_IDS: dict[str, int] = {"none": NONE, "gzip": GZIP, "snappy": SNAPPY, "lz4": LZ4, "zstd": ZSTD}
CODEC_NAMES: dict[int, str] = {v: k for k, v in CODEC_IDS.items()}

#: Default bound on the decompressed size of one batch or wrapper (bytes).
DEFAULT_MAX_DECOMPRESSED = 256 * 1024 * 1024


def codec_id(codec: str | int) -> int:
    """Codec id for a name (``"gzip"``) or id (``1``); :class:`UnsupportedCodecError` otherwise.

    >>> codec_id("zstd"), codec_id(2)
    (4, 2)
    """
    if type(codec) is str:  # (the common case first: a per-append cost)
        cid = CODEC_IDS.get(codec)
        if cid is not None:
            return cid
    if isinstance(codec, bool):
        raise UnsupportedCodecError(f"unknown compression codec {codec!r}")
    if isinstance(codec, int):
        if codec in CODEC_NAMES:
            return codec
    elif isinstance(codec, str):
        cid = CODEC_IDS.get(codec.lower())
        if cid is not None:
            return cid
    raise UnsupportedCodecError(
        f"unknown compression codec {codec!r} (expected one of {', '.join(CODEC_IDS)} or 0-4)"
    )


def codec_name(cid: int) -> str:
    """Name of a codec id (``UnsupportedCodecError`` for ids 5-7 and others).

    >>> codec_name(3)
    'lz4'
    """
    name = CODEC_NAMES.get(cid)
    if name is None:
        raise UnsupportedCodecError(f"unknown compression codec id {cid} (expected 0-4)")
    return name


def _check_magic(cid: int, magic: int) -> None:
    if magic not in (0, 1, 2):
        raise ValueError(f"magic must be 0, 1 or 2, got {magic!r}")
    if cid == ZSTD and magic < 2:
        raise UnsupportedCodecError(f"zstd requires magic 2 (found magic {magic})")


# ---------------------------------------------------------------------------------------------
# xxHash32 (LZ4 frame header, content and block checksums). Kafka writes only the header
# checksum (a few bytes), but other producers checksum every batch's content: pierrec/lz4, the
# LZ4 library of Go clients such as Sarama, sets the content checksum by default (FLG 0x64 in
# sarama's record_test.go "lz4 compressed record"). Those are hashed by the xxhash package (C,
# ~GB/s); the plain-Python _xxh32_py below is its reference in tests (it hashed ~10 MB/s, which
# made such batches decode at under 1 MB/s).

_P1, _P2, _P3, _P4, _P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
_M32 = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def xxh32(data: bytes | bytearray | memoryview, seed: int = 0) -> int:
    """xxHash32 of ``data`` (as used by the LZ4 frame format), read without a copy.

    >>> hex(xxh32(b""))
    '0x2cc5d05'
    """
    return _xxhash.xxh32_intdigest(data, seed)


def _xxh32_py(data: bytes | bytearray | memoryview, seed: int = 0) -> int:
    """:func:`xxh32` in plain Python, from the xxHash specification (the reference in tests)."""
    b = bytes(data)
    n = len(b)
    p = 0
    if n >= 16:
        v1 = (seed + _P1 + _P2) & _M32
        v2 = (seed + _P2) & _M32
        v3 = seed & _M32
        v4 = (seed - _P1) & _M32
        lanes = struct.unpack_from(f"<{(n // 16) * 4}I", b, 0)
        for i in range(0, len(lanes), 4):
            v1 = (_rotl((v1 + lanes[i] * _P2) & _M32, 13) * _P1) & _M32
            v2 = (_rotl((v2 + lanes[i + 1] * _P2) & _M32, 13) * _P1) & _M32
            v3 = (_rotl((v3 + lanes[i + 2] * _P2) & _M32, 13) * _P1) & _M32
            v4 = (_rotl((v4 + lanes[i + 3] * _P2) & _M32, 13) * _P1) & _M32
        p = (n // 16) * 16
        h = (_rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)) & _M32
    else:
        h = (seed + _P5) & _M32
    h = (h + n) & _M32
    while p + 4 <= n:
        (k,) = struct.unpack_from("<I", b, p)
        h = (_rotl((h + k * _P3) & _M32, 17) * _P4) & _M32
        p += 4
    while p < n:
        h = (_rotl((h + b[p] * _P5) & _M32, 11) * _P1) & _M32
        p += 1
    h ^= h >> 15
    h = (h * _P2) & _M32
    h ^= h >> 13
    h = (h * _P3) & _M32
    h ^= h >> 16
    return h


# ---------------------------------------------------------------------------------------------
# gzip

# Java 16+ GZIPOutputStream header: magic, CM=8 (deflate), FLG=0, MTIME=0, XFL=0, OS=255.
# (Kafka 4.x runs on Java 17; Java <= 15 wrote OS=0. Both read back identically.)
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"


def _gzip_compress(data: Any, level: int | None) -> bytes:
    lvl = -1 if level is None else level
    if not (lvl == -1 or 1 <= lvl <= 9):
        raise ValueError(f"gzip level must be 1-9 or -1, got {level}")
    c = zlib.compressobj(lvl, zlib.DEFLATED, -15)
    body = c.compress(data) + c.flush()
    size = memoryview(data).nbytes
    return b"".join(
        (_GZIP_HEADER, body, struct.pack("<II", zlib.crc32(data), size & 0xFFFFFFFF))
    )


def _gzip_header_ok(data: memoryview, pos: int) -> bool:
    """True when a complete, valid gzip member header (RFC 1952) starts at ``pos``."""
    n = len(data)
    if n - pos < 10 or data[pos] != 0x1F or data[pos + 1] != 0x8B or data[pos + 2] != 8:
        return False
    flg = data[pos + 3]
    p = pos + 10
    if flg & 0x04:  # FEXTRA
        if n - p < 2:
            return False
        p += 2 + (data[p] | (data[p + 1] << 8))
    for bit in (0x08, 0x10):  # FNAME, FCOMMENT: zero-terminated
        if flg & bit:
            while p < n and data[p] != 0:
                p += 1
            p += 1
    if flg & 0x02:  # FHCRC: low 16 bits of the CRC-32 of the header
        if n - p < 2:
            return False
        if (zlib.crc32(data[pos:p]) & 0xFFFF) != (data[p] | (data[p + 1] << 8)):
            return False
        p += 2
    return p <= n


def _gzip_decompress(data: memoryview, max_size: int) -> bytes:
    out: list[bytes] = []
    total = 0
    pos = 0
    n = len(data)
    first = True
    while True:
        if not first and not _gzip_header_ok(data, pos):
            # KafkaGZIPInputStream.readTrailer: after a member, another member is read only if
            # a whole valid gzip header follows; otherwise the trailing bytes are ignored.
            break
        first = False
        d = zlib.decompressobj(31)
        tail = data[pos:]
        while True:
            chunk = d.decompress(tail, max_size - total + 1)
            total += len(chunk)
            if total > max_size:
                raise RecordTooLargeError(
                    f"gzip data decompresses to more than {max_size} bytes "
                    f"(limit max_decompressed_bytes={max_size})"
                )
            out.append(chunk)
            if d.eof:
                break
            tail = d.unconsumed_tail
            if not tail:
                raise CorruptRecordError(
                    "truncated gzip data (expected more compressed bytes, found end of data)"
                )
        consumed = len(data) - pos - len(d.unused_data)
        pos += consumed
        if pos >= n:
            break
    return b"".join(out)


# ---------------------------------------------------------------------------------------------
# snappy (xerial snappy-java stream framing)

SNAPPY_MAGIC = b"\x82SNAPPY\x00"
SNAPPY_HEADER = SNAPPY_MAGIC + struct.pack(">ii", 1, 1)
SNAPPY_BLOCK_SIZE = 32 * 1024
_SNAPPY_MAGIC_HEAD = struct.unpack(">i", SNAPPY_MAGIC[:4])[0]


def _snappy_compress(data: Any) -> bytes:
    mv = memoryview(data).cast("B")
    parts = [SNAPPY_HEADER]
    for i in range(0, len(mv), SNAPPY_BLOCK_SIZE):
        block = bytes(cramjam.snappy.compress_raw(mv[i : i + SNAPPY_BLOCK_SIZE]))
        parts.append(struct.pack(">i", len(block)))
        parts.append(block)
    return b"".join(parts)


def _snappy_raw(block: memoryview, budget: int, max_size: int) -> bytes:
    try:
        declared = cramjam.snappy.decompress_raw_len(block)
    except Exception as e:
        raise CorruptRecordError(f"corrupt snappy block: {e}") from e
    if declared > budget:
        raise RecordTooLargeError(
            f"snappy data decompresses to more than {max_size} bytes "
            f"(limit max_decompressed_bytes={max_size}, block declares {declared})"
        )
    try:
        return bytes(cramjam.snappy.decompress_raw(block))
    except Exception as e:
        raise CorruptRecordError(f"corrupt snappy block: {e}") from e


def _snappy_decompress(data: memoryview, max_size: int) -> bytes:
    n = len(data)
    if n == 0:
        raise CorruptRecordError("empty snappy data (expected at least one byte)")
    if n < 16 or data[:8] != SNAPPY_MAGIC:
        # snappy-java reads input without its stream header as one raw snappy block
        return _snappy_raw(data, max_size, max_size)
    out: list[bytes] = []
    total = 0
    pos = 0
    while True:
        # at pos: a stream header (first iteration or a concatenated stream)
        if n - pos < 16:
            raise CorruptRecordError(
                f"truncated snappy stream header (expected 16 bytes, found {n - pos})"
            )
        if data[pos : pos + 8] != SNAPPY_MAGIC:
            # snappy-java (1.1.10.x hasNextChunk): a concatenated header whose magic does not
            # match ends the stream quietly
            return b"".join(out)
        version, _compatible = struct.unpack_from(">ii", data, pos + 8)
        if version < 1:
            raise CorruptRecordError(
                f"unsupported snappy stream version (expected >= 1, found {version})"
            )
        pos += 16
        while True:
            if n - pos < 4:
                # snappy-java's hasNextChunk ends the stream when no whole length is left
                return b"".join(out)
            (chunk,) = struct.unpack_from(">i", data, pos)
            if chunk == _SNAPPY_MAGIC_HEAD:
                break  # a concatenated stream starts here
            pos += 4
            if chunk < 0 or chunk > n - pos:
                raise CorruptRecordError(
                    f"bad snappy chunk length (expected 0..{n - pos}, found {chunk})"
                )
            block = _snappy_raw(data[pos : pos + chunk], max_size - total, max_size)
            pos += chunk
            total += len(block)
            out.append(block)


# ---------------------------------------------------------------------------------------------
# lz4 (Kafka's LZ4 frame)

LZ4_MAGIC = 0x184D2204
LZ4_FLG = 0x60  # version 01, independent blocks, no checksums, no content size
LZ4_BD = 0x40  # 64 KiB maximum block size
LZ4_BLOCK_SIZE = 64 * 1024
_LZ4_UNCOMPRESSED = 0x80000000


def _lz4_hc(magic_number: bytes, descriptor: bytes, broken: bool) -> int:
    return (xxh32((magic_number + descriptor) if broken else descriptor) >> 8) & 0xFF


def _lz4_compress(data: Any, magic: int, level: int | None) -> bytes:
    mv = memoryview(data).cast("B")
    header_magic = struct.pack("<I", LZ4_MAGIC)
    descriptor = bytes((LZ4_FLG, LZ4_BD))
    parts = [header_magic, descriptor, bytes((_lz4_hc(header_magic, descriptor, magic == 0),))]
    lvl = 9 if level is None else level
    if not 1 <= lvl <= 17:
        raise ValueError(f"lz4 level must be 1-17, got {level}")
    for i in range(0, len(mv), LZ4_BLOCK_SIZE):
        raw = mv[i : i + LZ4_BLOCK_SIZE]
        # Kafka's Lz4BlockOutputStream: lz4-java's fast compressor at the default level 9
        # (backward compatible output), the high compressor at any other level
        comp = bytes(
            cramjam.lz4.compress_block(raw, store_size=False)
            if lvl == 9
            else cramjam.lz4.compress_block(raw, mode="high_compression", compression=lvl,
                                            store_size=False)
        )
        if len(comp) >= len(raw):  # incompressible: stored, high bit set
            parts.append(struct.pack("<I", len(raw) | _LZ4_UNCOMPRESSED))
            parts.append(bytes(raw))
        else:
            parts.append(struct.pack("<I", len(comp)))
            parts.append(comp)
    parts.append(b"\x00\x00\x00\x00")
    return b"".join(parts)


def _lz4_frame_header(data: memoryview, magic: int) -> tuple[int, int, bool, bool]:
    """Check an lz4 frame's header: the position of its first block, its maximum block size
    and whether content and blocks carry checksums. The descriptor checksum is checked unless
    ``magic`` is 0 (KAFKA-3160: Kafka skips it there)."""
    n = len(data)
    if n < 7:
        raise CorruptRecordError(f"truncated lz4 frame header (expected >= 7 bytes, found {n})")
    (m,) = struct.unpack_from("<I", data, 0)
    if m != LZ4_MAGIC:
        raise CorruptRecordError(
            f"bad lz4 frame magic (expected 0x{LZ4_MAGIC:08x}, found 0x{m:08x})"
        )
    flg, bd = data[4], data[5]
    if flg & 0x03:
        raise CorruptRecordError(f"lz4 FLG reserved bits must be 0 (found FLG 0x{flg:02x})")
    if not flg & 0x20:
        raise CorruptRecordError(
            f"lz4 linked (dependent) blocks are unsupported (expected FLG bit 5 set, "
            f"found FLG 0x{flg:02x})"
        )
    if (flg >> 6) != 1:
        raise CorruptRecordError(f"lz4 frame version {flg >> 6} is unsupported (expected 1)")
    if bd & 0x8F:
        raise CorruptRecordError(f"lz4 BD reserved bits must be 0 (found BD 0x{bd:02x})")
    code = (bd >> 4) & 0x07
    if code < 4:
        raise CorruptRecordError(f"lz4 block size code must be 4-7 (found {code})")
    max_block = 1 << (2 * code + 8)
    content_checksum = bool(flg & 0x04)
    has_size = bool(flg & 0x08)
    block_checksum = bool(flg & 0x10)
    pos = 6
    if has_size:
        if n - pos < 8:
            raise CorruptRecordError("truncated lz4 frame header (content size field)")
        pos += 8
    if pos >= n:
        raise CorruptRecordError("truncated lz4 frame header (header checksum)")
    if magic != 0:
        # magic 0 data may carry the KAFKA-3160 checksum; Kafka skips the check there
        expected = (xxh32(data[4:pos]) >> 8) & 0xFF
        if data[pos] != expected:
            raise CorruptRecordError(
                f"lz4 frame descriptor checksum mismatch (expected 0x{expected:02x}, "
                f"found 0x{data[pos]:02x})"
            )
    return pos + 1, max_block, content_checksum, block_checksum


def _lz4_decompress(data: memoryview, magic: int, max_size: int,
                    out: memoryview | None = None) -> bytes | int | None:
    """The frame's content as bytes; with ``out``: written into ``out``, returning its length,
    or None when ``out`` has no room for a block (checked before decoding each block: a
    block may need up to the frame's maximum block size)."""
    n = len(data)
    pos, max_block, content_checksum, block_checksum = _lz4_frame_header(data, magic)
    # Blocks are decoded straight into this thread's reusable buffer (grown as needed), and
    # the result is one copy of it. (A fresh max-block scratch per frame, 4 MiB zeroed for
    # Kafka's default block size, plus a copy per block and a join cost ~20x the lz4 decoding
    # of a 1,000-record batch, measured.)
    acc = _lz4_buffer() if out is None else None
    view = memoryview(acc) if acc is not None else out
    total = 0
    try:
        while True:
            if n - pos < 4:
                raise CorruptRecordError(
                    "truncated lz4 frame (expected a block size or end mark)")
            (word,) = struct.unpack_from("<I", data, pos)
            pos += 4
            size = word & ~_LZ4_UNCOMPRESSED & 0xFFFFFFFF
            if size == 0:
                if content_checksum:
                    if n - pos < 4:
                        raise CorruptRecordError("truncated lz4 frame (content checksum)")
                    (stored,) = struct.unpack_from("<I", data, pos)
                    computed = xxh32(view[:total])
                    if stored != computed:
                        raise CorruptRecordError(
                            f"lz4 content checksum mismatch (stored {stored}, computed "
                            f"{computed})"
                        )
                return bytes(view[:total]) if acc is not None else total
            if size > max_block:
                raise CorruptRecordError(
                    f"lz4 block size {size} exceeds the frame's maximum block size {max_block}"
                )
            if n - pos < size:
                raise CorruptRecordError(
                    f"truncated lz4 block (expected {size} bytes, found {n - pos})"
                )
            block = data[pos : pos + size]
            pos += size
            if block_checksum:
                if n - pos < 4:
                    raise CorruptRecordError("truncated lz4 frame (block checksum)")
                (stored,) = struct.unpack_from("<I", data, pos)
                pos += 4
                computed = xxh32(block)
                if stored != computed:
                    raise CorruptRecordError(
                        f"lz4 block checksum mismatch (stored {stored}, computed {computed})"
                    )
            if acc is None:
                if len(view) < total + max_block:
                    return None  # the caller decompresses this frame elsewhere
            elif len(acc) < total + max_block:
                view.release()
                acc.extend(bytes(total + max_block - len(acc)))
                view = memoryview(acc)
            if word & _LZ4_UNCOMPRESSED:
                got = size
                view[total:total + size] = block
            else:
                try:
                    # (cramjam's decompress_block(output_len=) pads to output_len; the _into
                    # form returns the true decoded length; at most max_block bytes fit)
                    got = cramjam.lz4.decompress_block_into(
                        block, output=view[total:total + max_block])
                except Exception as e:
                    raise CorruptRecordError(f"corrupt lz4 block: {e}") from e
            total += got
            if total > max_size:
                raise RecordTooLargeError(
                    f"lz4 data decompresses to more than {max_size} bytes "
                    f"(limit max_decompressed_bytes={max_size})"
                )
    finally:
        if acc is not None:
            view.release()
            if len(acc) > _LZ4_KEEP_BYTES:  # do not keep a huge buffer per thread
                _lz4_local.buf = None


_lz4_local = threading.local()
#: largest lz4 output buffer a thread keeps between frames
_LZ4_KEEP_BYTES = 16 * 1024 * 1024


def _lz4_buffer() -> bytearray:
    buf = getattr(_lz4_local, "buf", None)
    if buf is None:
        buf = _lz4_local.buf = bytearray()
    return buf


# ---------------------------------------------------------------------------------------------
# zstd

_ZSTD_BLOCK_MAX = 128 * 1024  # a zstd block never decodes to more than this


def _zstd_compress(data: Any, level: int | None) -> bytes:
    lvl = 3 if level is None else level
    if _zstandard is not None:
        # zstd-jni's streaming compressor writes no content size; match it. One compressor per
        # thread and level (not thread safe; making one per batch cost ~10% of compressing it)
        cctxs = getattr(_zstd_local, "cctx", None)
        if cctxs is None:
            cctxs = _zstd_local.cctx = {}
        cctx = cctxs.get(lvl)
        if cctx is None:
            cctx = cctxs[lvl] = _zstandard.ZstdCompressor(level=lvl, write_content_size=False)
        return cctx.compress(data)
    return bytes(cramjam.zstd.compress(data, level=lvl))  # pragma: no cover


_zstd_local = threading.local()


def _zstd_dctx() -> Any:
    """This thread's ``ZstdDecompressor``: making one per batch cost a third of decompressing
    a 1,000-record batch (measured), and one may not be shared between threads (decodes run
    on several, see ``kafkalog.records.columnar``)."""
    dctx = getattr(_zstd_local, "dctx", None)
    if dctx is None:
        dctx = _zstd_local.dctx = _zstandard.ZstdDecompressor()
    return dctx


_ZSTD_MAGIC = 0xFD2FB528


def _zstd_output_bound(data: memoryview) -> int | None:
    """Upper bound of the decompressed size of ``data`` read from its frame and block headers
    (RFC 8878 §3.1.1: a raw or RLE block regenerates its Block_Size bytes, a compressed one at
    most 128 KiB), or None unless ``data`` is whole standard zstd frames end to end (then the
    stepwise decompression decides, and raises, as before)."""
    n = len(data)
    pos = 0
    bound = 0
    while pos < n:
        if n - pos < 5 or struct.unpack_from("<I", data, pos)[0] != _ZSTD_MAGIC:
            return None
        fhd = data[pos + 4]
        if fhd & 0x08:  # reserved bit
            return None
        single_segment = fhd & 0x20
        fcs_size = (0, 2, 4, 8)[fhd >> 6] or (1 if single_segment else 0)
        pos += 5 + (0 if single_segment else 1) + (0, 1, 2, 4)[fhd & 0x03] + fcs_size
        while True:
            if n - pos < 3:
                return None
            header = data[pos] | data[pos + 1] << 8 | data[pos + 2] << 16
            pos += 3
            kind = (header >> 1) & 0x03
            size = header >> 3
            if kind == 0:  # raw
                bound += size
                pos += size
            elif kind == 1:  # RLE: one byte, repeated
                bound += size
                pos += 1
            elif kind == 2:  # compressed
                bound += _ZSTD_BLOCK_MAX
                pos += size
            else:
                return None
            if pos > n:
                return None
            if header & 1:  # last block
                break
        if fhd & 0x04:  # content checksum
            pos += 4
        if pos > n:
            return None
    return bound


def _zstd_decompress(data: memoryview, max_size: int) -> bytes:
    if len(data) == 0:
        raise CorruptRecordError("empty zstd data (expected a zstd frame)")
    if _zstandard is None:  # pragma: no cover - fallback without the zstandard package
        try:
            out = bytes(cramjam.zstd.decompress(data))
        except Exception as e:
            raise CorruptRecordError(f"corrupt zstd data: {e}") from e
        if len(out) > max_size:
            raise RecordTooLargeError(
                f"zstd data decompresses to more than {max_size} bytes "
                f"(limit max_decompressed_bytes={max_size})"
            )
        return out
    dctx = _zstd_dctx()
    out_parts: list[bytes] = []
    total = 0
    pos = 0
    n = len(data)
    # whole frames at once when their block headers bound the output within max_size (the
    # usual batch: one call instead of one per few KiB of input)
    bound = _zstd_output_bound(data)
    at_once = bound is not None and bound <= max_size
    try:
        while pos < n:  # one iteration per frame (zstd-jni reads concatenated frames)
            dobj = dctx.decompressobj()
            while True:
                # Feed input in steps small enough that even all-RLE blocks (a few input bytes
                # each, 128 KiB out) cannot overshoot the remaining budget by much.
                budget = max_size - total
                step = n if at_once else max(1024, min(1 << 20, (budget // _ZSTD_BLOCK_MAX) * 3))
                piece = data[pos : pos + step]
                if not piece:
                    raise CorruptRecordError(
                        "truncated zstd frame (expected more compressed bytes, found end of data)"
                    )
                chunk = dobj.decompress(piece)
                total += len(chunk)
                if total > max_size:
                    raise RecordTooLargeError(
                        f"zstd data decompresses to more than {max_size} bytes "
                        f"(limit max_decompressed_bytes={max_size})"
                    )
                out_parts.append(chunk)
                if dobj.eof:
                    pos += len(piece) - len(dobj.unused_data)
                    break
                pos += len(piece)
    except _zstandard.ZstdError as e:
        raise CorruptRecordError(f"corrupt zstd data: {e}") from e
    return b"".join(out_parts)


def _zstd_decompress_into(data: memoryview, max_size: int, out: memoryview,
                          bound: int | None = None) -> int | None:
    """``data`` decompressed into ``out``: its length, or None when the frame and block headers
    do not bound the output within ``out`` and ``max_size`` or the codec refuses the input
    (the caller then runs :func:`_zstd_decompress`, which raises the precise error)."""
    if bound is None:
        bound = _zstd_output_bound(data)
    if bound is None or bound > max_size or bound > len(out):
        return None
    try:
        got = cramjam.zstd.decompress_into(data, out[:bound])
    except Exception:  # noqa: BLE001 - the stepwise decompression names the fault
        return None
    return int(got)


def _lz4_output_bound(data: memoryview) -> int | None:
    """Upper bound of the decompressed size of one lz4 frame read from its block headers (a
    stored block regenerates its size, a compressed one at most the frame's maximum block
    size), or None unless ``data`` is one well-formed frame (then decompression decides)."""
    n = len(data)
    try:  # (the descriptor checksum is decompression's to check)
        pos, max_block, _, block_checksum = _lz4_frame_header(data, 0)
    except CorruptRecordError:
        return None
    extra = 4 if block_checksum else 0
    bound = 0
    while True:
        if n - pos < 4:
            return None
        (word,) = struct.unpack_from("<I", data, pos)
        pos += 4
        size = word & ~_LZ4_UNCOMPRESSED & 0xFFFFFFFF
        if size == 0:
            return bound
        bound += size if word & _LZ4_UNCOMPRESSED else max_block
        pos += size + extra


def decompressed_bound(codec: int, data: memoryview) -> int | None:
    """An upper bound of what one magic-2 batch's records area ``data`` decompresses to, read
    from the frame and block headers without decompressing (lz4, zstd), or None (another
    codec, or headers that do not bound it: decompression then decides and raises).

    >>> decompressed_bound(LZ4, memoryview(compress("lz4", b"abc" * 1000)))
    65536
    """
    if codec == LZ4:
        return _lz4_output_bound(data)
    if codec == ZSTD:
        return _zstd_output_bound(data)
    return None


def decompress_into(codec: int, data: memoryview, out: memoryview, *,
                    max_size: int = DEFAULT_MAX_DECOMPRESSED,
                    bound: int | None = None) -> int | None:
    """Decompress one magic-2 batch's records area into ``out`` (a writable byte buffer):
    the number of bytes written, or None where this codec has no such path here (gzip,
    snappy) or ``out`` may be too small (``bound``: :func:`decompressed_bound` of ``data``
    when the caller has it). None promises nothing was decided about ``data``:
    :func:`decompress` gives its bytes or its error. Why: a batch decoder writes every
    batch of a run into one buffer (no allocation and page faulting per batch).

    Raises
    ------
    CorruptRecordError, RecordTooLargeError
        As :func:`decompress` (lz4 checks the frame as it goes).

    Examples
    --------
    >>> buf = bytearray(1 << 17)
    >>> n = decompress_into(LZ4, memoryview(compress("lz4", b"abc" * 3)), memoryview(buf))
    >>> bytes(buf[:n])
    b'abcabcabc'
    """
    try:
        if codec == LZ4:
            return _lz4_decompress(data, 2, max_size, out)  # type: ignore[return-value]
        if codec == ZSTD:
            return _zstd_decompress_into(data, max_size, out, bound)
    except CorruptRecordError:
        raise
    except (ValueError, struct.error, IndexError, OverflowError) as e:
        raise CorruptRecordError(f"corrupt {CODEC_NAMES[codec]} data: {e}") from e
    return None


# ---------------------------------------------------------------------------------------------
# public API


def compress(
    codec: str | int, data: Any, *, magic: int = 2, level: int | None = None
) -> bytes:
    """Compress ``data`` (bytes-like) with Kafka's framing for ``codec`` and message ``magic``.

    Parameters
    ----------
    codec:
        Name or id (``"gzip"``/``1``...). ``"none"`` returns the bytes unchanged.
    data:
        Uncompressed bytes (records area of a v2 batch, or inner messages of a wrapper).
    magic:
        Message format the output is for: selects the LZ4 header checksum (KAFKA-3160 for
        magic 0) and forbids zstd below magic 2.
    level:
        Codec level as Kafka's ``compression.<codec>.level`` (None = Kafka's default).

    Raises
    ------
    UnsupportedCodecError
        Unknown codec, or zstd with magic < 2.

    Examples
    --------
    >>> compress("snappy", b"hello").hex()
    '82534e4150505900000000010000000100000007051068656c6c6f'
    """
    cid = codec_id(codec)
    _check_magic(cid, magic)
    if cid == NONE:
        return bytes(data)
    if cid == GZIP:
        return _gzip_compress(data, level)
    if cid == SNAPPY:
        return _snappy_compress(data)
    if cid == LZ4:
        return _lz4_compress(data, magic, level)
    return _zstd_compress(data, level)


def decompress(
    codec: str | int,
    data: Any,
    *,
    magic: int = 2,
    max_size: int = DEFAULT_MAX_DECOMPRESSED,
) -> bytes:
    """Decompress Kafka-framed ``data``; never returns more than ``max_size`` bytes.

    Parameters
    ----------
    codec:
        Name or id.
    data:
        Compressed bytes (bytes-like, read without copying where the codec allows).
    magic:
        Message format of the batch/wrapper (LZ4 header checksum rule; zstd needs magic 2).
    max_size:
        Bound on the output; larger output raises :class:`RecordTooLargeError`.

    Raises
    ------
    CorruptRecordError
        Truncated or garbage input (and :class:`RecordTooLargeError`, a subclass, for bombs).
    UnsupportedCodecError
        Unknown codec name/id or zstd below magic 2 (a usage error of this function; batch
        readers check codec ids themselves and raise CorruptRecordError).

    Examples
    --------
    >>> decompress("gzip", compress("gzip", b"abc" * 3))
    b'abcabcabc'
    """
    cid = codec_id(codec)
    _check_magic(cid, magic)
    try:
        mv = memoryview(data).cast("B") if not isinstance(data, bytes) else memoryview(data)
    except TypeError as e:
        raise TypeError(f"data must be bytes-like, got {type(data).__name__}") from e
    if cid == NONE:
        if len(mv) > max_size:
            raise RecordTooLargeError(f"data of {len(mv)} bytes exceeds max_size {max_size}")
        return bytes(mv)
    try:
        if cid == GZIP:
            return _gzip_decompress(mv, max_size)
        if cid == SNAPPY:
            return _snappy_decompress(mv, max_size)
        if cid == LZ4:
            return _lz4_decompress(mv, magic, max_size)
        return _zstd_decompress(mv, max_size)
    except CorruptRecordError:
        raise
    except (zlib.error, ValueError, struct.error, IndexError, OverflowError) as e:
        raise CorruptRecordError(f"corrupt {CODEC_NAMES[cid]} data: {e}") from e
    except MemoryError as e:  # pragma: no cover - defensive: codec library asked too much
        raise RecordTooLargeError(f"{CODEC_NAMES[cid]} data too large to decompress") from e
