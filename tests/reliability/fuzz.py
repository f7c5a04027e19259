"""Decoder fuzz targets, corpus, mutator and hostile inputs.

Shared by ``tests/reliability/test_fuzz.py`` (hypothesis, CI budget) and ``tools/fuzz_decode.py``
(the long run in subprocess workers, so that a crash of a compiled kernel is counted rather than
taking the runner down).

Contract under test: for any input bytes, every target either returns or raises a
``KafkaLogError`` subclass; never another exception, never unbounded memory.
"""

from __future__ import annotations

import os
import random
import struct
import tempfile
import zlib
from collections.abc import Callable
from pathlib import Path

T0 = 1_700_000_000_000
#: bound passed to the decoders under test (a decompression bomb must stop at it)
MAX_DECOMPRESSED = 1 << 20


# -- corpus ------------------------------------------------------------------------------------


def corpus() -> dict[str, list[bytes]]:
    """Valid inputs per input kind (the mutator's seeds)."""
    from kafkalog.records.builder import encode_batch
    from kafkalog.records.compression import compress
    from kafkalog.records.record import Record

    recs = [Record(b"k%d" % i, b"value-%d" % i * (i + 1), T0 + i,
                   [("h", b"x"), ("n", None)][: i % 3]) for i in range(8)]
    legacy = [r._replace(headers=()) for r in recs]
    logs = [encode_batch(recs, compression=c, base_offset=7, producer_id=3, producer_epoch=1,
                         base_sequence=0, partition_leader_epoch=2)
            for c in ("none", "gzip", "snappy", "lz4", "zstd")]
    logs.append(encode_batch(recs[:3], transactional=True, producer_id=9, producer_epoch=0,
                             base_sequence=0))
    for magic in (0, 1):
        for c in ("none", "gzip", "snappy", "lz4"):
            logs.append(encode_batch(legacy[:4], magic=magic, compression=c, base_offset=3))
    logs.append(b"".join(logs[:5]))
    payload = b"".join(logs)
    comp = [compress(c, payload) for c in ("gzip", "snappy", "lz4", "zstd")]
    offset_index = b"".join(struct.pack(">ii", 10 * i, 100 * i) for i in range(1, 9))
    time_index = b"".join(struct.pack(">qi", T0 + i, 10 * i) for i in range(1, 9))
    txn_index = b"".join(struct.pack(">hqqqq", 0, 5 + i, 10 * i, 10 * i + 5, 10 * i + 9)
                         for i in range(4))
    checkpoint = b"0\n2\nrecovery-point 0 120\nlog-start-offset 0 7\n"
    epochs = b"0\n3\n0 0\n4 100\n7 250\n"
    return {"log": logs, "compressed": comp, "offset_index": [offset_index],
            "time_index": [time_index], "txn_index": [txn_index],
            "offset_checkpoint": [checkpoint], "epoch_checkpoint": [epochs]}


_INTERESTING_I32 = [0, 1, -1, 12, 14, 61, 0x7FFFFFFF, -0x80000000, 0x10000, 0x3FFFFFFF]


def mutate(rnd: random.Random, data: bytes, others: list[bytes] | None = None) -> bytes:
    """A structure-unaware mutation (bit flips, interesting ints, cuts, splices)."""
    b = bytearray(data)
    for _ in range(rnd.choice([1, 1, 2, 4, 8])):
        op = rnd.randrange(7)
        if not b:
            b += rnd.randbytes(rnd.randrange(1, 64))
            continue
        i = rnd.randrange(len(b))
        if op == 0:
            b[i] ^= 1 << rnd.randrange(8)
        elif op == 1:
            b[i] = rnd.randrange(256)
        elif op == 2 and len(b) >= 4:
            j = rnd.randrange(len(b) - 3)
            b[j:j + 4] = struct.pack(">i", rnd.choice(_INTERESTING_I32))
        elif op == 3:
            del b[rnd.randrange(len(b)):]
        elif op == 4:
            j = rnd.randrange(i, len(b) + 1)
            del b[i:j]
        elif op == 5:
            b[i:i] = rnd.randbytes(rnd.randrange(1, 32))
        elif others:
            o = rnd.choice(others)
            if o:
                j = rnd.randrange(len(o))
                b[i:] = o[j:j + rnd.randrange(1, 200)]
    return bytes(b)


# -- targets ------------------------------------------------------------------------------------


def _iter_batches(data: bytes) -> None:
    from kafkalog.records.batch import iter_batches

    for validate in (False, True):
        for e in iter_batches(data, validate=validate, max_decompressed_bytes=MAX_DECOMPRESSED):
            for a in ("base_offset", "last_offset", "magic", "compression", "timestamp_type",
                      "max_timestamp", "crc", "is_valid", "size", "record_count",
                      "is_control", "producer_id", "computed_crc", "next_offset"):
                getattr(e, a)
            for r in e:
                assert r.offset is not None


def _decode_columns(data: bytes) -> None:
    from kafkalog.records.columnar import decode_columns

    for validate in (False, True):
        cols = decode_columns(data, validate=validate, max_decompressed_bytes=MAX_DECOMPRESSED)
        cols.to_arrow()


def _decompress(data: bytes) -> None:
    from kafkalog.records.compression import decompress

    for codec in ("gzip", "snappy", "lz4", "zstd"):
        for magic in ((2,) if codec == "zstd" else (0, 1, 2)):
            out = decompress(codec, data, magic=magic, max_size=MAX_DECOMPRESSED)
            assert len(out) <= MAX_DECOMPRESSED


def _with_file(data: bytes, name: str, fn: Callable[[Path], None]) -> None:
    with tempfile.TemporaryDirectory(prefix="kafkalog-fuzz-") as d:
        p = Path(d) / name
        p.write_bytes(data)
        fn(p)


def _offset_index(data: bytes) -> None:
    from kafkalog.index.offset_index import OffsetIndex

    def run(p: Path) -> None:
        idx = OffsetIndex(p, 0, writable=False)
        try:
            idx.sanity_check()
        finally:
            pass
        for t in (-1, 0, 15, 45, 2**31, 2**62):
            idx.lookup(t)
        idx.lookup_many(__import__("numpy").array([0, 5, 90], "int64"))
        for i in range(min(idx.entries, 4)):
            idx.entry(i)
        idx.close()

    _with_file(data, "00000000000000000000.index", run)


def _time_index(data: bytes) -> None:
    from kafkalog.index.time_index import TimeIndex

    def run(p: Path) -> None:
        idx = TimeIndex(p, 0, writable=False)
        idx.sanity_check()
        for t in (-1, 0, T0 + 3, 2**62):
            idx.lookup(t)
        idx.last_entry  # noqa: B018
        idx.close()

    _with_file(data, "00000000000000000000.timeindex", run)


def _txn_index(data: bytes) -> None:
    from kafkalog.index.txn_index import TransactionIndex

    def run(p: Path) -> None:
        idx = TransactionIndex(p, 0)
        idx.sanity_check()
        idx.all_aborted_txns()
        idx.collect_aborted_txns(0, 100)
        idx.close()

    _with_file(data, "00000000000000000000.txnindex", run)


def _offset_checkpoint(data: bytes) -> None:
    from kafkalog.checkpoint import OffsetCheckpointFile

    _with_file(data, "recovery-point-offset-checkpoint",
               lambda p: OffsetCheckpointFile(p).read())


def _epoch_checkpoint(data: bytes) -> None:
    from kafkalog.checkpoint import LeaderEpochCheckpointFile

    _with_file(data, "leader-epoch-checkpoint", lambda p: LeaderEpochCheckpointFile(p).read())


#: target name -> (input kind of its seeds, function)
TARGETS: dict[str, tuple[str, Callable[[bytes], None]]] = {
    "iter_batches": ("log", _iter_batches),
    "decode_columns": ("log", _decode_columns),
    "decompress": ("compressed", _decompress),
    "offset_index": ("offset_index", _offset_index),
    "time_index": ("time_index", _time_index),
    "txn_index": ("txn_index", _txn_index),
    "offset_checkpoint": ("offset_checkpoint", _offset_checkpoint),
    "epoch_checkpoint": ("epoch_checkpoint", _epoch_checkpoint),
}


def run_target(name: str, data: bytes) -> str | None:
    """Run one input; None when it returned or raised a KafkaLogError, else the violation."""
    from kafkalog.errors import KafkaLogError

    try:
        TARGETS[name][1](data)
    except KafkaLogError:
        return None
    except Exception as e:  # noqa: BLE001 - classifying every exception is the point
        import traceback

        return f"{name}: {type(e).__name__}: {e}\n" + "".join(
            traceback.format_exception(e))[-2500:]
    return None


# -- hostile inputs (memory bounds) -------------------------------------------------------------


def _gzip_bomb(total: int) -> bytes:
    co = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = b"\0" * (1 << 20)
    parts = [co.compress(chunk) for _ in range(total >> 20)]
    parts.append(co.flush())
    return b"".join(parts)


def _zstd_bomb(total: int) -> bytes:
    import zstandard

    c = zstandard.ZstdCompressor(level=3).compressobj()
    chunk = b"\0" * (1 << 20)
    parts = [c.compress(chunk) for _ in range(total >> 20)]
    parts.append(c.flush())
    return b"".join(parts)


def _lz4_bomb(total: int) -> bytes:
    import lz4.frame

    # independent blocks: Kafka (and kafkalog) reject linked-block frames before decoding
    c = lz4.frame.LZ4FrameCompressor(block_size=lz4.frame.BLOCKSIZE_MAX4MB,
                                     block_linked=False, content_checksum=False)
    parts = [c.begin()]
    chunk = b"\0" * (1 << 20)
    parts += [c.compress(chunk) for _ in range(total >> 20)]
    parts.append(c.flush())
    return b"".join(parts)


def _snappy_bomb(total: int) -> bytes:
    """Kafka's xerial framing: many blocks, each a raw snappy block of 64 KiB... of zeros;
    plus a block declaring a 2**32-1 uncompressed length."""
    import snappy

    block = snappy.compress(b"\0" * (1 << 16))
    header = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)
    n = total >> 16
    return header + (struct.pack(">i", len(block)) + block) * n


def _raw_snappy_huge_length() -> bytes:
    # varint preamble 0xFFFFFFFF0F = 2**32-1 uncompressed bytes declared, 3 bytes of body
    return b"\xff\xff\xff\xff\x0f" + b"\x00\x01\x02"


def _batch_with_records_area(records_area: bytes, codec_id: int, count: int) -> bytes:
    """A v2 batch whose (compressed) records area is ``records_area``; CRC made valid."""
    from kafkalog.records.crc import crc32c

    body = struct.pack(">hiqqqhii", codec_id, count - 1, T0, T0, -1, -1, -1, count)
    body += records_area
    crc = crc32c(body)
    tail = struct.pack(">ibI", -1, 2, crc) + body
    return struct.pack(">qi", 0, len(tail)) + tail


def hostile_inputs(bomb_bytes: int = 1 << 30) -> dict[str, tuple[str, bytes]]:
    """name -> (target, input): decompression bombs and huge declared lengths/counts."""
    from kafkalog.records.varint import encode_varint

    out: dict[str, tuple[str, bytes]] = {}
    bombs = {"gzip": (1, _gzip_bomb(bomb_bytes)), "zstd": (4, _zstd_bomb(bomb_bytes)),
             "lz4": (3, _lz4_bomb(bomb_bytes)), "snappy": (2, _snappy_bomb(bomb_bytes))}
    for name, (cid, data) in bombs.items():
        out[f"{name} bomb ({bomb_bytes >> 20} MiB of zeros, {len(data)} bytes) via decompress"] = (
            "decompress_" + name, data)
        batch = _batch_with_records_area(data, cid, 1000)
        out[f"{name} bomb in a v2 batch via iter_batches"] = ("iter_batches", batch)
        out[f"{name} bomb in a v2 batch via decode_columns"] = ("decode_columns", batch)
    out["snappy raw block declaring 4 GiB"] = ("decompress_snappy", _raw_snappy_huge_length())
    # huge declared lengths and counts
    hdr = _batch_with_records_area(b"", 0, 0x7FFFFFFF)
    out["v2 batch declaring 2**31-1 records, no bytes"] = ("iter_batches", hdr)
    out["v2 batch declaring 2**31-1 records (columnar)"] = ("decode_columns", hdr)
    rec = encode_varint(0x3FFFFFFF) + b"\x00" * 8
    big_len = _batch_with_records_area(rec, 0, 1)
    out["record declaring a 1 GiB length"] = ("iter_batches", big_len)
    out["record declaring a 1 GiB length (columnar)"] = ("decode_columns", big_len)
    key = (b"\x00" + encode_varint(0) + encode_varint(0) + encode_varint(0x3FFFFFFF))
    rec = encode_varint(len(key) + 4) + key + b"\x00" * 4
    out["record key declaring 1 GiB"] = ("iter_batches", _batch_with_records_area(rec, 0, 1))
    hdrs = (b"\x00" + encode_varint(0) + encode_varint(0) + encode_varint(-1)
            + encode_varint(-1) + encode_varint(0x3FFFFFFF))
    rec = encode_varint(len(hdrs)) + hdrs
    out["record declaring 2**30 headers"] = ("iter_batches", _batch_with_records_area(rec, 0, 1))
    out["record declaring 2**30 headers (columnar)"] = (
        "decode_columns", _batch_with_records_area(rec, 0, 1))
    out["batch length 2**31-1 with 61 bytes"] = (
        "iter_batches", struct.pack(">qi", 0, 0x7FFFFFFF) + b"\x00" * 4 + b"\x02" + b"\0" * 44)
    legacy = struct.pack(">qiIbbi", 0, 0x7FFFFFFF, 0, 1, 0, 0x7FFFFFF0)
    out["legacy message with a 2 GiB key length"] = ("iter_batches", legacy + b"\0" * 20)
    out["time index of 2**20 entries all 0xFF"] = ("time_index", b"\xff" * (12 << 20))
    return out


def run_hostile(target: str, data: bytes) -> tuple[str | None, str]:
    """Run one hostile input: (violation or None, outcome: "ok" or the KafkaLogError name)."""
    from kafkalog.errors import KafkaLogError

    try:
        if target.startswith("decompress_"):
            from kafkalog.records.compression import decompress

            out = decompress(target.split("_", 1)[1], data, max_size=MAX_DECOMPRESSED)
            if len(out) > MAX_DECOMPRESSED:
                return f"{target}: returned {len(out)} bytes above max_size", "ok"
        else:
            TARGETS[target][1](data)
    except KafkaLogError as e:
        return None, type(e).__name__
    except Exception as e:  # noqa: BLE001
        return f"{target}: {type(e).__name__}: {e}", type(e).__name__
    return None, "ok"


def maxrss_mib() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def hostile_child(path: str) -> None:
    """Child process: run the pickled hostile input(s) (one ``(target, data)`` or a list of
    them), print one JSON line each with the memory it took. ``maxrss_growth_mib`` is the
    high-water mark above the warmed-up baseline (cumulative when several run in one child)."""
    import json
    import pickle
    import tracemalloc

    cases = pickle.loads(Path(path).read_bytes())
    if isinstance(cases, tuple):
        cases = [cases]
    # warm up imports and kernels so that the figure is the inputs' own cost
    run_target("iter_batches", corpus()["log"][0])
    run_target("decode_columns", corpus()["log"][0])
    before = maxrss_mib()
    for target, data in cases:
        tracemalloc.start()
        err, outcome = run_hostile(target, data)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(json.dumps({"violation": err, "outcome": outcome,
                          "maxrss_mib": round(maxrss_mib(), 1),
                          "maxrss_growth_mib": round(maxrss_mib() - before, 1),
                          "tracemalloc_peak_mib": round(peak / 2**20, 1),
                          "input_bytes": len(data)}), flush=True)


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] == ["hostile"]:
        hostile_child(sys.argv[2])
    os._exit(0)
