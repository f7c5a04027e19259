"""Legacy entries (magic 0/1) decoded into columns straight from their bytes
(``kafkalog.records.legacy_columnar``) give exactly what the object path gives (``LegacyEntry``
records, then columns), and fail exactly as it fails: same exception, same words.

Logs are generated with every rule of ``LegacyEntry._decode`` in reach: plain messages of both
magics, wrappers of each codec with v0 (absolute) and v1 (relative) inner offsets, a wrapper
offset of 0 (librdkafka: inner offsets already absolute) or below the last inner offset,
LogAppendTime wrappers over inner messages of either magic, null keys and values, offset
filters, and a flipped byte anywhere. Peers' bytes: kafka-python's and aiokafka's legacy
builders."""

from __future__ import annotations

import struct
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafkalog.native.scan import scan_entries

from kafkalog import KafkaLogError, decode_columns
from kafkalog.records import legacy_columnar
from kafkalog.records.compression import compress
from kafkalog.records.legacy import encode_legacy_message

# imported at collection (kafka-python's first import warns about importlib.resources)
BUILDERS = {
    "kafka-python": pytest.importorskip("kafka.record.legacy_records").LegacyRecordBatchBuilder,
    "aiokafka": pytest.importorskip("aiokafka.record.legacy_records").LegacyRecordBatchBuilder,
}

FIELDS = ("offsets", "timestamps", "timestamp_types", "key_data", "key_offsets", "key_valid",
          "value_data", "value_offsets", "value_valid", "header_offsets")


def _object_path(data: bytes, **kw: object) -> object:
    with mock.patch.object(legacy_columnar, "decode_legacy_entries", return_value=None):
        return _outcome(data, **kw)


def _outcome(data: bytes, **kw: object) -> object:
    try:
        cols = decode_columns(data, **kw)
    except KafkaLogError as e:
        return (type(e).__name__, str(e))
    return {f: getattr(cols, f).astype(np.int64) if "offsets" in f else getattr(cols, f)
            for f in FIELDS}


def _same(a: object, b: object) -> None:
    if isinstance(a, tuple) or isinstance(b, tuple):
        assert a == b
        return
    assert isinstance(a, dict) and isinstance(b, dict)
    for f in FIELDS:
        assert np.array_equal(a[f], b[f]), f


blob = st.one_of(st.none(), st.binary(max_size=40))
stamp = st.integers(-2, 2**41)


@st.composite
def plain(draw: st.DrawFn, offset: int) -> tuple[bytes, int]:
    magic = draw(st.sampled_from([0, 1]))
    attrs = draw(st.sampled_from([0, 8])) if magic == 1 else 0
    return encode_legacy_message(offset, draw(blob), draw(blob), magic=magic,
                                 timestamp=draw(stamp), attributes=attrs), offset + 1


@st.composite
def wrapper(draw: st.DrawFn, offset: int) -> tuple[bytes, int]:
    wmagic = draw(st.sampled_from([0, 1]))
    codec = draw(st.sampled_from([1, 2, 3]))
    n = draw(st.integers(1, 6))
    inner = b"".join(
        encode_legacy_message(i if wmagic == 1 else offset + i, draw(blob), draw(blob),
                              magic=draw(st.sampled_from([0, 1])) if draw(st.booleans())
                              else wmagic, timestamp=draw(stamp))
        for i in range(n))
    if draw(st.booleans()):
        inner += inner[:draw(st.integers(1, 20))]  # a partial trailing inner entry
    attrs = codec | (draw(st.sampled_from([0, 8])) if wmagic == 1 else 0)
    last = offset + n - 1
    woff = draw(st.sampled_from([last, last, 0, last + 3, n - 2])) if wmagic == 1 else last
    value = compress(codec, inner, magic=wmagic)
    return encode_legacy_message(woff, draw(blob), value, magic=wmagic,
                                 timestamp=draw(stamp), attributes=attrs), offset + n


@st.composite
def legacy_log(draw: st.DrawFn) -> bytes:
    out, offset = [], draw(st.integers(0, 5))
    for _ in range(draw(st.integers(1, 8))):
        entry, offset = draw(st.one_of(plain(offset), wrapper(offset)))
        out.append(entry)
    return b"".join(out)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=legacy_log(), validate=st.booleans(), window=st.tuples(st.integers(0, 20),
                                                                   st.integers(0, 40)))
def test_same_records_as_the_object_path(data: bytes, validate: bool,
                                         window: tuple[int, int]) -> None:
    kw = {"validate": validate, "start_offset": window[0], "end_offset": window[1]}
    _same(_outcome(data), _object_path(data))
    _same(_outcome(data, **kw), _object_path(data, **kw))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=legacy_log(), where=st.floats(0, 1, exclude_max=True), bit=st.integers(0, 7),
       validate=st.booleans())
def test_same_error_as_the_object_path(data: bytes, where: float, bit: int,
                                       validate: bool) -> None:
    bad = bytearray(data)
    bad[int(where * len(bad))] ^= 1 << bit
    _same(_outcome(bytes(bad), validate=validate), _object_path(bytes(bad), validate=validate))


def _entries(data: bytes) -> tuple:
    """``decode_legacy_entries``'s positional arguments for every entry of ``data``, from the
    scan the columnar decoder makes."""
    buf = np.frombuffer(data, np.uint8)
    sc = scan_entries(buf)
    return buf, sc["positions"], sc["sizes"], sc["base_offsets"], sc["crcs"]


def test_fast_path_taken_and_declines_to_the_object_path() -> None:
    data = encode_legacy_message(7, b"k", b"v", magic=1, timestamp=5)
    kw = {"lo": 0, "last": 2**63 - 1, "validate": True, "max_decompressed": 1 << 20}
    cols = legacy_columnar.decode_legacy_entries(*_entries(data), **kw)
    assert cols is not None and cols["offsets"].tolist() == [7]
    # a bad CRC: declined, and the object path words the error
    bad = bytearray(data)
    bad[-1] ^= 1
    assert legacy_columnar.decode_legacy_entries(*_entries(bytes(bad)), **kw) is None
    # (the stored CRC is the scan's: a wrong one passed in is a mismatch too)
    buf, pos, sizes, offs, crcs = _entries(data)
    assert legacy_columnar.decode_legacy_entries(buf, pos, sizes, offs, crcs ^ 1, **kw) is None
    with pytest.raises(KafkaLogError, match="stored crc"):
        decode_columns(bytes(bad))
    # the entry offsets are the scan's too (a wrapper's inner offsets are relative to them)
    cols = legacy_columnar.decode_legacy_entries(buf, pos, sizes, offs + 5, crcs, **kw)
    assert cols is not None and cols["offsets"].tolist() == [12]
    # a wrapper whose inner message is itself compressed
    inner = encode_legacy_message(0, None, b"x", magic=1, attributes=2)
    wrap = encode_legacy_message(0, None, compress("gzip", inner, magic=1), magic=1,
                                 attributes=1)
    assert legacy_columnar.decode_legacy_entries(*_entries(wrap), **kw) is None
    with pytest.raises(KafkaLogError, match="Inner messages must not be compressed"):
        decode_columns(wrap)


# (no magic-0 LZ4: neither peer writes Kafka's broken magic-0 LZ4 header checksum)
@pytest.mark.parametrize(("magic", "codec"),
                         [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2), (1, 3)])
@pytest.mark.parametrize("peer", ["kafka-python", "aiokafka"])
def test_peer_built_legacy_sets(peer: str, magic: int, codec: int) -> None:
    out = bytearray()
    for start in range(0, 300, 100):
        b = BUILDERS[peer](magic, codec, 1 << 30)
        for i in range(100):
            # (v1 wrappers hold relative inner offsets, v0 absolute ones)
            b.append(i if codec and magic == 1 else start + i,
                     timestamp=1_700_000_000_000 + i if magic else None,
                     key=None if i % 7 == 0 else b"k%d" % i, value=b"v" * (i % 50))
        built = bytearray(b.build())
        if codec:  # the broker's wrapper offset: the last inner offset
            struct.pack_into(">q", built, 0, start + 99)
        out += built
    data = bytes(out)
    fast = _outcome(data)
    assert isinstance(fast, dict) and fast["offsets"].tolist() == list(range(300))
    _same(fast, _object_path(data))


@pytest.mark.parametrize("codec", [1, 2, 3])
def test_wrappers_over_the_decompression_limit_fail_as_the_object_path(codec: int) -> None:
    # the limit applies to each wrapper's decompressed value: at its size the wrapper decodes,
    # one byte below it the decode fails with the object path's words (whichever path the
    # wrappers take: straight into one buffer for magic-1 lz4, bytes objects otherwise)
    inner = b"".join(encode_legacy_message(i, b"k%d" % i, b"v" * 90, magic=1, timestamp=i)
                     for i in range(40))
    wrap = b"".join(encode_legacy_message(40 * w + 39, None, compress(codec, inner, magic=1),
                                          magic=1, attributes=codec) for w in range(3))
    for limit, fails in ((len(inner), False), (len(inner) - 1, True)):
        fast = _outcome(wrap, max_decompressed_bytes=limit)
        _same(fast, _object_path(wrap, max_decompressed_bytes=limit))
        assert isinstance(fast, tuple) == fails
        if fails:
            assert "decompresses to more than" in fast[1]
