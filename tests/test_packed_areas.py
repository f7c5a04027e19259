"""The packed path for small compressed records areas (``kafkalog.records.packed_areas``)
against the codec layer it bypasses: every area it takes decompresses there to the same bytes
(and does not raise there), on frames of every writer we have, whole or damaged, with small
limits and small packs; and whole decodes give the same columns or the same error either way,
on segments of one-record batches built by us, kafka-python and aiokafka."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafkalog.native.scan import scan_entries

from kafkalog import KafkaLogError, Record, encode_batch
from kafkalog.records import columnar, packed_areas
from kafkalog.records.compression import decompress

from .native.test_codec_frames import areas
from .test_columnar import aiokafka_batch, expected_rows, kafka_python_batch


def _codec_layer(area: bytes, codec: int, max_size: int) -> bytes | None:
    try:
        return decompress(codec, area, magic=2, max_size=max_size)
    except KafkaLogError:
        return None


@settings(max_examples=300, deadline=None)
@given(codec=st.sampled_from([2, 3, 4]), data=st.data(),
       max_size=st.sampled_from([64, 300, 1 << 20]), pack_bytes=st.sampled_from([256, 1 << 20]))
def test_what_the_packed_path_takes_decompresses_the_same(codec: int, data: st.DataObject,
                                                          max_size: int,
                                                          pack_bytes: int) -> None:
    parts = data.draw(st.lists(areas(codec), min_size=1, max_size=8))
    buf = np.frombuffer(b"".join(parts) + b"\xee" * 8, np.uint8)
    lengths = np.array([len(p) for p in parts], np.int64)
    ends = np.cumsum(lengths)
    starts = ends - lengths
    ids = np.arange(100, 100 + len(parts))
    p = packed_areas.decompress_packed(codec, buf, starts, ends, ids, max_size, pack_bytes)
    for i, area in enumerate(parts):
        expected = _codec_layer(area, codec, max_size)
        if p.pack_id[i] < 0:
            continue
        assert expected is not None, (i, area)  # never takes what the codec layer refuses
        got = p.packs[int(p.pack_id[i])][p.lo[i]:p.hi[i]].tobytes()
        assert got == expected
    # packs: named by a batch of theirs, read-only, batches in order and back to back
    for name, pack in p.packs.items():
        assert not pack.flags.writeable and pack.shape[0] <= pack_bytes
        mine = np.flatnonzero(p.pack_id == name)
        assert name in ids and ids[mine[0]] >= name
        assert p.lo[mine[0]] == 0 and p.hi[mine[-1]] == pack.shape[0]
        assert (p.lo[mine[1:]] == p.hi[mine[:-1]]).all()


def _decode(data: bytes, monkeypatch: pytest.MonkeyPatch, *, packed: bool, threads: int = 1,
            **kw: object) -> object:
    with monkeypatch.context() as m:
        m.setattr(columnar, "decode_workers", lambda: threads)
        m.setattr(columnar, "PACKED_MIN_BATCHES", 1 if packed else 1 << 62)
        # in parts however small the input (each part packs its own batches)
        m.setattr(columnar, "PARALLEL_MIN_COMPRESSED_BATCH", 0)
        m.setattr(columnar, "PARALLEL_MIN_BYTES", 0)
        m.setattr(columnar, "PARALLEL_MIN_BATCHES", 2)
        m.setattr(columnar, "PARALLEL_BACKOFF_SECONDS", 0.0)
        m.setattr(columnar, "_serial_until", 0.0)
        try:
            cols = columnar.decode_columns(data, **kw)
        except KafkaLogError as e:
            return (type(e).__name__, str(e))
    return {f: getattr(cols, f).tolist() for f in
            ("offsets", "timestamps", "key_data", "key_offsets", "key_valid", "value_data",
             "value_offsets", "value_valid", "header_offsets")}


RECORD = st.tuples(st.one_of(st.none(), st.binary(max_size=20)),
                   st.one_of(st.none(), st.binary(max_size=60)), st.integers(0, 2**40))
WRITERS = {"ours": lambda recs, codec, base: encode_batch(
    [Record(k, v, t, h) for k, v, t, h in recs], compression=codec, base_offset=base),
    "kafka-python": kafka_python_batch, "aiokafka": aiokafka_batch}


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(batches=st.lists(st.tuples(st.lists(RECORD, min_size=1, max_size=3),
                                  st.sampled_from(["none", "snappy", "lz4", "zstd"]),
                                  st.sampled_from(sorted(WRITERS))), min_size=1, max_size=12),
       threads=st.integers(1, 3), data=st.data())
def test_decode_with_and_without_the_packed_path(monkeypatch: pytest.MonkeyPatch,
                                                 batches: list, threads: int,
                                                 data: st.DataObject) -> None:
    out, base = [], 0
    for recs, codec, writer in batches:
        out.append(WRITERS[writer]([(k, v, t, []) for k, v, t in recs], codec, base))
        base += len(recs)
    buf = b"".join(out)
    assert _decode(buf, monkeypatch, packed=True, threads=threads) == \
        _decode(buf, monkeypatch, packed=False)
    # one damaged byte: the same columns, or the same error in the same words
    damaged = bytearray(buf)
    damaged[data.draw(st.integers(0, len(buf) - 1))] ^= data.draw(st.integers(1, 255))
    validate = data.draw(st.booleans())
    assert _decode(bytes(damaged), monkeypatch, packed=True, threads=threads,
                   validate=validate) == \
        _decode(bytes(damaged), monkeypatch, packed=False, validate=validate)


@pytest.mark.parametrize("writer", sorted(WRITERS))
@pytest.mark.parametrize("codec", ["snappy", "lz4", "zstd"])
def test_one_record_batches_of_each_writer_are_packed(monkeypatch: pytest.MonkeyPatch,
                                                      writer: str, codec: str) -> None:
    # a producer with linger.ms=0: a batch per record; every frame of each writer has the
    # plain shape, so all 200 are decompressed into one pack and decoded in one kernel call
    data = b"".join(WRITERS[writer]([(b"k%d" % i, b"v" * (i % 90), 1000 + i, [])], codec, i)
                    for i in range(200))
    taken, calls = [], []
    real, real_call = packed_areas.decompress_packed, columnar._V2Run._decode_call

    def spy(*a: object) -> packed_areas.PackedAreas:
        p = real(*a)
        taken.append(int((p.pack_id >= 0).sum()))
        return p

    monkeypatch.setattr(columnar, "decompress_packed", spy)
    monkeypatch.setattr(columnar._V2Run, "_decode_call",
                        lambda self, *a: calls.append(a[4] - a[3]) or real_call(self, *a))
    monkeypatch.setattr(columnar, "decode_workers", lambda: 1)
    assert columnar.decode_table(data).to_pylist() == expected_rows(data)
    sc = scan_entries(np.frombuffer(data, np.uint8))
    compressed = int(((sc["attributes"] & 7) != 0).sum())
    # (kafka-python writes a batch uncompressed where compressing it would not pay)
    assert compressed >= 100 and taken == [compressed]
    if compressed == 200:
        assert calls == [200]
