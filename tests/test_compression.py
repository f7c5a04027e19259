"""Codecs framed as Kafka frames them (spec §3), bounded and failing only with our errors."""

from __future__ import annotations

import gzip
import os
import struct
import zlib

import cramjam
import lz4.frame
import pytest
import zstandard
from crc32c import crc32c
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalog import CorruptRecordError, RecordTooLargeError, UnsupportedCodecError
from kafkalog.records.compression import (
    CODEC_IDS,
    SNAPPY_BLOCK_SIZE,
    _xxh32_py,
    codec_id,
    codec_name,
    compress,
    decompress,
    xxh32,
)

CODECS = ["gzip", "snappy", "lz4", "zstd"]
PAYLOADS = [b"", b"x", b"hello", os.urandom(70000), b"abc" * 50000, bytes(200000)]


def test_codec_ids_and_names() -> None:
    assert CODEC_IDS == {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
    assert [codec_name(i) for i in range(5)] == list(CODEC_IDS)
    assert codec_id("LZ4") == 3 and codec_id(4) == 4
    for bad in ("brotli", 5, -1, True, None):
        with pytest.raises(UnsupportedCodecError):
            codec_id(bad)  # type: ignore[arg-type]
    with pytest.raises(UnsupportedCodecError):
        codec_name(7)


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("payload", PAYLOADS, ids=lambda p: str(len(p)))
def test_round_trip(codec: str, payload: bytes) -> None:
    for magic in ((2,) if codec == "zstd" else (0, 1, 2)):
        assert decompress(codec, compress(codec, payload, magic=magic), magic=magic) == payload


@pytest.mark.parametrize("codec", CODECS)
def test_inputs_are_any_buffer(codec: str) -> None:
    import numpy as np

    payload = b"records " * 1000
    comp = compress(codec, memoryview(payload))
    assert decompress(codec, np.frombuffer(comp, np.uint8)) == payload
    assert decompress(codec, bytearray(comp)) == payload


def test_zstd_requires_magic_2() -> None:
    with pytest.raises(UnsupportedCodecError):
        compress("zstd", b"x", magic=1)
    with pytest.raises(UnsupportedCodecError):
        decompress("zstd", compress("zstd", b"x"), magic=0)


# --- gzip ---------------------------------------------------------------------------------------


def test_gzip_header_is_javas() -> None:
    out = compress("gzip", b"hello")
    # GZIPOutputStream (Java 16+): no name/comment, mtime 0, XFL 0, OS 255
    assert out[:10] == bytes.fromhex("1f8b08000000000000ff")
    assert struct.unpack("<II", out[-8:]) == (zlib.crc32(b"hello"), 5)
    assert gzip.decompress(out) == b"hello"


def test_gzip_reads_other_writers_and_concatenated_members() -> None:
    a, b = gzip.compress(b"first", mtime=0), gzip.compress(b"second")
    assert decompress("gzip", a + b) == b"firstsecond"
    # Java's GZIPInputStream ignores trailing bytes that are not another gzip member
    assert decompress("gzip", a + b"\x00garbage-after-member") == b"first"


def test_gzip_truncated_and_garbage_are_corrupt() -> None:
    good = compress("gzip", os.urandom(5000))
    for bad in (good[:-9], good[:20], b"\x1f\x8b\x08" + bytes(20), b"not gzip at all"):
        with pytest.raises(CorruptRecordError):
            decompress("gzip", bad)


# --- snappy -------------------------------------------------------------------------------------


def _xerial_blocks(framed: bytes) -> list[bytes]:
    assert framed[:16] == b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)
    pos, blocks = 16, []
    while pos < len(framed):
        (n,) = struct.unpack_from(">i", framed, pos)
        blocks.append(framed[pos + 4 : pos + 4 + n])
        pos += 4 + n
    assert pos == len(framed)
    return blocks


def test_snappy_xerial_framing_exact() -> None:
    data = os.urandom(SNAPPY_BLOCK_SIZE * 2 + 100)
    blocks = _xerial_blocks(compress("snappy", data))
    assert len(blocks) == 3  # at most 32 KiB of input per block
    plain = [bytes(cramjam.snappy.decompress_raw(b)) for b in blocks]
    assert [len(p) for p in plain] == [SNAPPY_BLOCK_SIZE, SNAPPY_BLOCK_SIZE, 100]
    assert b"".join(plain) == data
    assert compress("snappy", b"") == b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)


def test_snappy_reads_raw_and_concatenated_streams() -> None:
    assert decompress("snappy", bytes(cramjam.snappy.compress_raw(b"raw block"))) == b"raw block"
    one, two = compress("snappy", b"one-"), compress("snappy", b"two")
    assert decompress("snappy", one + two) == b"one-two"


def test_snappy_errors() -> None:
    with pytest.raises(CorruptRecordError, match="empty"):
        decompress("snappy", b"")
    header0 = b"\x82SNAPPY\x00" + struct.pack(">ii", 0, 1)
    with pytest.raises(CorruptRecordError, match="version"):
        decompress("snappy", header0 + struct.pack(">i", 1) + b"\x00")
    good = compress("snappy", b"hello world" * 100)
    with pytest.raises(CorruptRecordError):
        decompress("snappy", good[:-3])  # chunk shorter than its length
    with pytest.raises(CorruptRecordError):
        decompress("snappy", good[:16] + struct.pack(">i", -5))
    # Google's snappy framing format (python-snappy streams) is not what Kafka reads
    import snappy

    google = snappy.StreamCompressor().add_chunk(b"hello" * 100)
    with pytest.raises(CorruptRecordError):
        decompress("snappy", google)


# --- lz4 ----------------------------------------------------------------------------------------


def _frame(flg: int, bd: int, body: bytes, hc: int | None = None, magic0: bool = False) -> bytes:
    desc = bytes((flg, bd))
    magic = struct.pack("<I", 0x184D2204)
    if hc is None:
        hc = (xxh32(magic + desc if magic0 else desc) >> 8) & 0xFF
    return magic + desc + bytes((hc,)) + body


def test_xxh32_reference_values() -> None:
    # reference values of xxHash32 (seed 0), for the library and the plain-Python reference
    for h in (xxh32, _xxh32_py):
        assert h(b"") == 0x02CC5D05
        assert h(b"a") == 0x550D7456
        assert h(b"abc") == 0x32D153FF
        assert h(b"Nobody inspects the spammish repetition") == 0xE2293B2F


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=300), seed=st.integers(0, 2**32 - 1), cut=st.integers(0, 16))
def test_xxh32_equals_the_reference(data: bytes, seed: int, cut: int) -> None:
    assert xxh32(data, seed) == _xxh32_py(data, seed)
    view = memoryview(data)[cut:]  # any buffer, any alignment, no copy asked
    assert xxh32(view, seed) == _xxh32_py(bytes(view), seed)


# sarama's recordBatchTestCases "lz4 compressed record" (IBM/sarama record_test.go at
# bd98b3ae; ../shared/fixtures/vectors, sarama/recordBatch/lz4_compressed_record): FLG 0x64 =
# independent blocks + a content checksum, pierrec/lz4's default, on every batch Go clients send
SARAMA_LZ4_BATCH = bytes.fromhex(
    "00000000000000000000005900000000029d1291f8000300000000000001588dcd593800000000000000000000"
    "0000000000000000000000000000000104224d186440a71500008028000a00080102030406050607020608090a"
    "040b0c000000000c3bef92")


def test_sarama_content_checksummed_batch_checked() -> None:
    from kafkalog import decode_columns

    frame = SARAMA_LZ4_BATCH[61:]
    assert frame[:4] == b"\x04\x22\x4d\x18" and frame[4] == 0x64
    assert xxh32(decompress("lz4", frame)) == struct.unpack("<I", frame[-4:])[0]
    cols = decode_columns(SARAMA_LZ4_BATCH)
    assert len(cols) == 1 and cols.key(0) == bytes([1, 2, 3, 4])
    assert cols.value(0) == bytes([5, 6, 7])
    # the stored content checksum flipped (and the batch CRC made right again): refused
    bad = bytearray(SARAMA_LZ4_BATCH)
    bad[-1] ^= 0x01
    struct.pack_into(">I", bad, 17, crc32c(bytes(bad[21:])))
    with pytest.raises(CorruptRecordError, match="content checksum"):
        decode_columns(bytes(bad))


def test_lz4_spec_frames() -> None:
    assert compress("lz4", b"hello").hex() == "04224d186040820500008068656c6c6f00000000"
    # KAFKA-3160: magic 0 hashes magic||FLG||BD, giving 0x1A
    assert compress("lz4", b"hello", magic=0).hex() == "04224d1860401a0500008068656c6c6f00000000"


def test_lz4_output_is_a_standard_frame() -> None:
    data = b"abc" * 50000 + os.urandom(1000)
    out = compress("lz4", data)
    assert lz4.frame.decompress(out) == data
    # 64 KiB blocks, independent, compressible ones compressed
    assert out[4:6] == b"\x60\x40"


def test_lz4_magic0_header_checksum_ignored_others_verified() -> None:
    broken = compress("lz4", b"payload", magic=0)
    assert decompress("lz4", broken, magic=0) == b"payload"
    with pytest.raises(CorruptRecordError, match="checksum"):
        decompress("lz4", broken, magic=1)
    # and a correct (non-broken) checksum is fine for magic 0 too
    assert decompress("lz4", compress("lz4", b"payload"), magic=0) == b"payload"


def test_lz4_reads_other_frame_options() -> None:
    data = os.urandom(3000) + b"z" * 100000
    for kw in (
        {"block_linked": False, "content_checksum": True, "block_checksum": True,
         "store_size": True},
        {"block_linked": False, "block_size": lz4.frame.BLOCKSIZE_MAX4MB},
        {"block_linked": False, "block_size": lz4.frame.BLOCKSIZE_MAX256KB},
    ):
        assert decompress("lz4", lz4.frame.compress(data, **kw)) == data


def test_lz4_rejections() -> None:
    body = struct.pack("<I", 5 | 0x80000000) + b"hello" + bytes(4)
    assert decompress("lz4", _frame(0x60, 0x40, body)) == b"hello"
    cases = {
        "linked": _frame(0x40, 0x40, body),  # block independence bit clear
        "reserved FLG": _frame(0x61, 0x40, body),
        "version": _frame(0xA0, 0x40, body),
        "reserved BD": _frame(0x60, 0x41, body),
        "BD high": _frame(0x60, 0xC0, body),
        "block code": _frame(0x60, 0x30, body),
        "magic": b"\x05" + _frame(0x60, 0x40, body)[1:],
        "no end mark": _frame(0x60, 0x40, body[:-4]),
        "short": b"\x04\x22\x4d\x18\x60",
        "block too big": _frame(0x60, 0x40, struct.pack("<I", 70000) + bytes(70000)),
        "bad block": _frame(0x60, 0x40, struct.pack("<I", 4) + b"\xff\xff\xff\xff" + bytes(4)),
    }
    for name, frame in cases.items():
        with pytest.raises(CorruptRecordError):
            decompress("lz4", frame)
            pytest.fail(name)


def test_lz4_checksums_verified_when_flagged() -> None:
    data = b"checksummed " * 100
    framed = bytearray(lz4.frame.compress(data, block_linked=False, block_checksum=True))
    framed[-9] ^= 0xFF  # the block checksum just before the end mark
    with pytest.raises(CorruptRecordError, match="block checksum"):
        decompress("lz4", bytes(framed))
    framed = bytearray(lz4.frame.compress(data, block_linked=False, content_checksum=True))
    framed[-1] ^= 0xFF
    with pytest.raises(CorruptRecordError, match="content checksum"):
        decompress("lz4", bytes(framed))


# --- zstd ---------------------------------------------------------------------------------------


def test_zstd_frames_without_content_size_and_concatenated() -> None:
    data = os.urandom(1000) + bytes(300000)
    out = compress("zstd", data)
    assert zstandard.frame_content_size(out) == -1  # like zstd-jni's streaming output
    assert decompress("zstd", out) == data
    sized = zstandard.ZstdCompressor(write_content_size=True).compress(b"a" * 10)
    assert decompress("zstd", out + sized) == data + b"a" * 10


def test_zstd_errors() -> None:
    out = compress("zstd", os.urandom(5000))
    for bad in (b"", out[:-3], out + b"garbage", b"\x28\xb5\x2f\xfd" + bytes(10)):
        with pytest.raises(CorruptRecordError):
            decompress("zstd", bad)


# --- bounds -------------------------------------------------------------------------------------


@pytest.mark.parametrize("codec", CODECS)
def test_decompression_is_bounded(codec: str) -> None:
    bomb = compress(codec, bytes(8 * 1024 * 1024))
    with pytest.raises(RecordTooLargeError, match=str(1 << 20)):
        decompress(codec, bomb, max_size=1 << 20)
    assert len(decompress(codec, bomb, max_size=8 * 1024 * 1024)) == 8 * 1024 * 1024


def test_zstd_bomb_without_content_size_bounded_quickly() -> None:
    # 256 MiB of zeros in ~10 KiB; must stop near the bound, not allocate it all
    cctx = zstandard.ZstdCompressor(write_content_size=False)
    bomb = cctx.compress(bytes(256 * 1024 * 1024))
    with pytest.raises(RecordTooLargeError):
        decompress("zstd", bomb, max_size=4096)


# --- arbitrary input ----------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(CODECS), st.sampled_from([0, 1, 2]), st.binary(max_size=200))
def test_arbitrary_bytes_decode_or_corrupt(codec: str, magic: int, data: bytes) -> None:
    if codec == "zstd":
        magic = 2
    try:
        out = decompress(codec, data, magic=magic, max_size=1 << 16)
    except CorruptRecordError:
        return
    assert len(out) <= 1 << 16


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(CODECS), st.binary(min_size=1, max_size=3000), st.data())
def test_bit_flipped_frames_decode_or_corrupt(codec: str, payload: bytes, data: st.DataObject
                                             ) -> None:
    framed = bytearray(compress(codec, payload))
    i = data.draw(st.integers(0, len(framed) - 1))
    framed[i] ^= 1 << data.draw(st.integers(0, 7))
    cut = data.draw(st.integers(0, len(framed)))
    try:
        decompress(codec, bytes(framed[:cut]), max_size=1 << 16)
    except CorruptRecordError:
        pass


def test_gzip_trailing_bytes_follow_javas_read_trailer() -> None:
    a = gzip.compress(b"first", mtime=0)
    b = gzip.compress(b"second", mtime=0)
    # a truncated/garbled next header is ignored, a valid header starts a member
    assert decompress("gzip", a + b[:9]) == b"first"
    assert decompress("gzip", a + bytes.fromhex("1f8b0808") + bytes(6) + b"name") == b"first"
    named = bytes.fromhex("1f8b0808") + bytes(6) + b"name\x00" + b[10:]
    assert decompress("gzip", a + named) == b"firstsecond"
    # a valid header followed by corrupt deflate data is an error, as in Java
    with pytest.raises(CorruptRecordError):
        decompress("gzip", a + b[:10] + b"\xff" * 20)


def test_snappy_concatenated_header_rules() -> None:
    one = compress("snappy", b"one")
    # a chunk length equal to the magic's first 4 bytes starts a stream header; when the rest
    # of the magic does not match, snappy-java ends the stream there
    assert decompress("snappy", one + b"\x82SNAxxxx" + bytes(8)) == b"one"
    with pytest.raises(CorruptRecordError, match="header"):
        decompress("snappy", one + b"\x82SNAPPY\x00\x00")  # header cut short
    with pytest.raises(CorruptRecordError, match="version"):
        decompress("snappy", one + b"\x82SNAPPY\x00" + struct.pack(">ii", 0, 1))
    assert decompress("snappy", one + b"\x00\x00") == b"one"  # < 4 bytes left: end of stream


@pytest.mark.parametrize(("codec", "levels", "bad"), [
    ("gzip", [-1, 1, 9], [0, 10]),
    ("lz4", [1, 9, 17], [0, 18]),
    ("zstd", [-5, 1, 3, 19], []),
])
def test_levels(codec: str, levels: list[int], bad: list[int]) -> None:
    data = os.urandom(2000) + b"level " * 5000
    for lvl in levels:
        assert decompress(codec, compress(codec, data, level=lvl)) == data
    for lvl in bad:
        with pytest.raises(ValueError):
            compress(codec, data, level=lvl)


def test_python_lz4_default_linked_frames_are_rejected() -> None:
    data = os.urandom(1000) * 300  # several 64 KiB blocks: python-lz4 links them by default
    framed = lz4.frame.compress(data)
    assert not framed[4] & 0x20
    with pytest.raises(CorruptRecordError, match="linked"):
        decompress("lz4", framed)
