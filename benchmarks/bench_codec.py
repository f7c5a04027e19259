"""Record codec benchmarks: the columnar fast path vs kafka-python and aiokafka, same process.

Workload (issue 2): 1,000,000 records, 16-byte keys, 100-byte values, no headers, batches of
1,000 records, codecs none / lz4 / zstd. ``--quick``: 100,000 records.

Rows (convention of ``benchmarks/run_all.py``: name, value, unit, baseline, ratio, note; here
value and baseline are records/s, ratio = value / baseline, so > 1 means kafkalog is faster):

* ``decode.<codec>.vs_<peer>``: :func:`kafkalog.decode_columns` over the whole buffer (CRC-32C
  of every batch checked, records into contiguous columns; on as many threads as the process
  has cores, see ``kafkalog.records.columnar``) vs the peer's ``MemoryRecords``
  walk with ``validate_crc()`` per batch (what its consumer does with ``check_crcs``) reading
  offset, timestamp, key, value and headers of every record.
* ``encode.<codec>.vs_<peer>``: :func:`kafkalog.encode_columns` from columns (result as
  ``bytes``) vs the peer's ``DefaultRecordBatchBuilder`` (``append`` per record, ``build`` per
  batch) from Python lists prepared outside the timing. ``encode.none.vs_aiokafka.as_numpy``:
  the same with ``as_numpy=True`` (the result stays in the numpy buffer the kernel wrote: no
  final copy into a ``bytes`` object).
* ``decode.<codec>.vs_aiokafka.no_crc_check``: the same with CRC checks off on both sides
  (``validate=False``; aiokafka's compiled reader without ``validate_crc()``).
* ``encode_rows.<codec>[.headers].vs_aiokafka`` (issue 15): the row path, 1,000 records per
  batch: building the ``Record`` objects (``Record(key, value, timestamp[, headers])``) and
  ``encode_batch`` per batch on our side, the peer's ``DefaultRecordBatchBuilder`` (``append``
  per record, ``build`` per batch) on the other, both from the same Python lists; ``.headers``:
  every record has 2 headers. ``log_append.records.<codec>[.headers].vs_aiokafka``: the same
  with ``Log.append(records)`` (one batch per call, into a fresh log) instead of
  ``encode_batch``. Codecs none, gzip, snappy, lz4, zstd. Whether the optional C extension
  (``kafkalog.native._rows``) is active is in the notes.
* ``decode.lz4.content_checksum.vs_aiokafka``: ``decode.lz4`` on the same records framed as Go
  producers frame them (pierrec/lz4, Sarama's LZ4 library: independent blocks and a content
  checksum, an xxHash32 of every batch's records that both sides verify), CRCs checked.
* ``decode.none.headers.vs_aiokafka``: the records of ``decode.none`` with 2 headers each (the
  ``encode_rows`` headers), ``decode_columns`` (header columns included) vs aiokafka's reader
  reading every record's headers, CRCs checked by both.
* ``decode.legacy.v<magic>.<codec>.vs_aiokafka``: ``decode_columns`` of legacy message sets
  (magic 0 and 1, what pre-0.11 brokers wrote; wrappers of 1,000 inner messages when
  compressed) built by aiokafka's ``LegacyRecordBatchBuilder`` from the same records, vs
  aiokafka's reader; CRCs checked by both. ``decode.legacy.v1.none.vs_object_path``: the same
  against our own per-record object path (``LegacyEntry`` records, then columns), the one legacy
  data took before ``kafkalog.records.legacy_columnar``.
* ``decode.<codec>.1_per_batch.vs_aiokafka``: 200,000 records in batches of one record each (what
  a producer with ``linger.ms=0`` writes under light load), ``decode_columns`` vs aiokafka's
  reader, CRCs checked by both: per-batch costs rather than per-record ones.
* ``decode.none.parallel_on_one_core``: ``decode_columns`` with its threads (2 parts) vs the
  serial decode, both with the process pinned to one core: what the parallel decode costs when
  the other core is busy (ratio = serial / parallel, < 1 = slower).
* ``encode.<codec>.threads_vs_serial`` (zstd, snappy, lz4: the 1M records; gzip: their first
  200,000): ``encode_columns`` compressing its batches in threads (contiguous parts, the decode
  pool) vs in one thread, same bytes (checked); records/s. Both cores: each codec's compress
  call releases the GIL (zstandard, zlib, cramjam's snappy and lz4 block calls).
* ``crc32c.1MiB``: ``kafkalog.records.crc.crc32c`` vs the ``crc32c`` package on 1 MiB buffers
  (value and baseline in bytes/s).
* ``to_arrow``: ``RecordColumns.to_arrow`` (zero-copy wrap) for the decoded 1M records, seconds.

Timing: best of N runs after a warm-up run (numba compile or cache load, page faults, codec
initialisation), ``time.perf_counter``, our runs interleaved with the peer's so that load from
elsewhere on a shared machine hits both sides alike. Whether aiokafka's compiled extension is
active is reported in the notes (``aiokafka.record._crecords``; off with
``AIOKAFKA_NO_EXTENSIONS``).

Run: ``python benchmarks/bench_codec.py [--quick]`` or through ``benchmarks/run_all.py``.
"""

from __future__ import annotations

import argparse
import os
import struct
import time
import warnings
from collections.abc import Callable

import numpy as np

from kafkalog.records import crc as kcrc
from kafkalog.records.columnar import RecordColumns, decode_columns, encode_columns

CODECS = {"none": 0, "lz4": 3, "zstd": 4}
KEY_SIZE = 16
VALUE_SIZE = 100
PER_BATCH = 1000
BASE_TS = 1_700_000_000_000


def _best(fn: Callable[[], object], repeat: int) -> float:
    """Best-of-``repeat`` seconds for one call of ``fn`` (after one warm-up call)."""
    return _best_pair(fn, None, repeat, 0)[0]


def _best_pair(ours: Callable[[], object], peer: Callable[[], object] | None, repeat: int,
               peer_repeat: int, setup: Callable[[], object] | None = None
               ) -> tuple[float, float]:
    """Best-of-N seconds for ``ours`` and ``peer``, runs interleaved (after a warm-up each);
    ``setup`` runs untimed before each run of ``ours``.

    Interleaving matters on a shared machine: both sides are sampled over the same window, so
    a burst of load from elsewhere does not land on one side only.
    """
    if setup is not None:
        setup()
    ours()
    if peer is not None:
        peer()
    best_ours = best_peer = float("inf")
    for i in range(max(repeat, peer_repeat)):
        if i < repeat:
            if setup is not None:
                setup()
            t0 = time.perf_counter()
            ours()
            best_ours = min(best_ours, time.perf_counter() - t0)
        if peer is not None and i < peer_repeat:
            t0 = time.perf_counter()
            peer()
            best_peer = min(best_peer, time.perf_counter() - t0)
    return best_ours, best_peer


def _peers() -> dict[str, tuple[type, type, str]]:
    """Available peers: name -> (MemoryRecords, DefaultRecordBatchBuilder, note)."""
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # kafka-python import-time warnings
        try:
            import kafka
            from kafka.record.default_records import DefaultRecordBatchBuilder as KB
            from kafka.record.memory_records import MemoryRecords as KM

            out["kafka-python"] = (KM, KB, f"kafka-python {kafka.__version__} (pure Python)")
        except ImportError:  # pragma: no cover - optional peer
            pass
        try:
            import aiokafka
            from aiokafka.record.default_records import DefaultRecordBatchBuilder as AB
            from aiokafka.record.memory_records import MemoryRecords as AM

            compiled = "_crecords" in AM.__module__ and "_crecords" in AB.__module__
            flag = os.environ.get("AIOKAFKA_NO_EXTENSIONS")
            note = (f"aiokafka {aiokafka.__version__}, compiled extension "
                    f"{'ACTIVE (_crecords)' if compiled else 'NOT active (pure Python)'}"
                    + (f", AIOKAFKA_NO_EXTENSIONS={flag}" if flag else ""))
            out["aiokafka"] = (AM, AB, note)
        except ImportError:  # pragma: no cover - optional peer
            pass
    return out


def make_columns(n: int, seed: int = 7) -> RecordColumns:
    """n records: random 16-byte keys, 100-byte values, increasing ms timestamps, no headers."""
    rng = np.random.default_rng(seed)
    key_data = rng.integers(0, 256, n * KEY_SIZE, dtype=np.uint8)
    value_data = rng.integers(0, 256, n * VALUE_SIZE, dtype=np.uint8)
    # compressible values (like real payloads): a repeating 25-byte pattern with a counter
    value_data.reshape(n, VALUE_SIZE)[:, 25:] = np.tile(
        np.frombuffer(b"payload-" * 10, np.uint8)[:75], (n, 1))
    return RecordColumns(
        offsets=np.arange(n, dtype=np.int64),
        timestamps=BASE_TS + np.arange(n, dtype=np.int64),
        timestamp_types=np.zeros(n, np.int32),
        key_data=key_data, key_offsets=np.arange(n + 1, dtype=np.int32) * KEY_SIZE,
        key_valid=np.ones(n, bool),
        value_data=value_data, value_offsets=np.arange(n + 1, dtype=np.int32) * VALUE_SIZE,
        value_valid=np.ones(n, bool),
        header_offsets=np.zeros(n + 1, np.int32), header_key_data=np.zeros(0, np.uint8),
        header_key_offsets=np.zeros(1, np.int32), header_value_data=np.zeros(0, np.uint8),
        header_value_offsets=np.zeros(1, np.int32), header_value_valid=np.zeros(0, bool),
    )


def _peer_decode(memory_records: type, data: bytes, check_crcs: bool = True
                 ) -> Callable[[], int]:
    def run() -> int:
        n = 0
        mr = memory_records(data)
        while True:
            batch = mr.next_batch()
            if batch is None:
                return n
            if check_crcs and not batch.validate_crc():
                raise AssertionError("peer found a bad CRC")
            for r in batch:
                r.offset, r.timestamp, r.key, r.value, r.headers  # noqa: B018 - read fields
                n += 1

    return run


def _peer_encode(builder: type, codec_id: int, rows: list[tuple]) -> Callable[[], int]:
    def run() -> int:
        total = 0
        for start in range(0, len(rows), PER_BATCH):
            b = builder(2, codec_id, False, -1, -1, -1, 1 << 30)
            for i, (ts, key, value) in enumerate(rows[start:start + PER_BATCH]):
                b.append(i, timestamp=ts, key=key, value=value, headers=[])
            total += len(b.build())
        return total

    return run


# the same headers, prepared once, in each side's own type: Record stores headers as a tuple
# (a list is copied into one per record); aiokafka's append takes only a list
HEADERS = (("trace-id", b"0123456789abcdef"), ("source", b"bench"))
HEADERS_LIST = list(HEADERS)
ROW_CODECS = ("none", "gzip", "snappy", "lz4", "zstd")


def _row_inputs(cols: RecordColumns) -> tuple[list, list, list]:
    n = len(cols)
    keys = [cols.key_data[i * KEY_SIZE:(i + 1) * KEY_SIZE].tobytes() for i in range(n)]
    values = [cols.value_data[i * VALUE_SIZE:(i + 1) * VALUE_SIZE].tobytes() for i in range(n)]
    return keys, values, cols.timestamps.tolist()


def _ours_rows(keys: list, values: list, stamps: list, codec: str, headers: bool,
               sink: Callable[[list], object] | None = None) -> Callable[[], int]:
    from kafkalog import Record, encode_batch

    def run() -> int:
        total = 0
        for s in range(0, len(keys), PER_BATCH):
            e = s + PER_BATCH
            if headers:
                recs = [Record(k, v, t, HEADERS)
                        for k, v, t in zip(keys[s:e], values[s:e], stamps[s:e])]
            else:
                recs = [Record(k, v, t) for k, v, t in zip(keys[s:e], values[s:e], stamps[s:e])]
            if sink is None:
                total += len(encode_batch(recs, compression=codec))
            else:
                sink(recs)
        return total

    return run


def _peer_rows(builder: type, keys: list, values: list, stamps: list, codec_id: int,
               headers: bool) -> Callable[[], int]:
    def run() -> int:
        total = 0
        hs = HEADERS_LIST if headers else []
        for s in range(0, len(keys), PER_BATCH):
            e = s + PER_BATCH
            b = builder(2, codec_id, False, -1, -1, -1, 1 << 30)
            for i, (k, v, t) in enumerate(zip(keys[s:e], values[s:e], stamps[s:e])):
                b.append(i, timestamp=t, key=k, value=v, headers=hs)
            total += len(b.build())
        return total

    return run


def bench_rows(cols: RecordColumns, peers: dict, repeat: int,
               codecs: tuple[str, ...] = ROW_CODECS) -> list[dict]:
    """The row-path rows (see the module docstring), for ``codecs``."""
    import shutil
    import tempfile

    from kafkalog.log import Log
    from kafkalog.records.compression import CODEC_IDS
    from kafkalog.records.record import FAST_CONSTRUCTOR

    if "aiokafka" not in peers:  # pragma: no cover - optional peer
        return []
    _, builder, note = peers["aiokafka"]
    keys, values, stamps = _row_inputs(cols)
    n = len(keys)
    ext = ("C extension kafkalog.native._rows ACTIVE" if FAST_CONSTRUCTOR
           else "C extension NOT active (pure Python)")
    out = []
    tmp = tempfile.mkdtemp(prefix="kafkalog-bench-rows-")
    try:
        for codec in codecs:
            reps = max(1, repeat // 3) if codec == "gzip" else repeat
            for headers in (False, True):
                tag = f"{codec}.headers" if headers else codec
                peer = _peer_rows(builder, keys, values, stamps, CODEC_IDS[codec], headers)
                t_ours, t_peer = _best_pair(_ours_rows(keys, values, stamps, codec, headers),
                                            peer, reps, reps)
                what = (f"{n:,} records of 16 B key + 100 B value"
                        + (" + 2 headers" if headers else "") + f", {PER_BATCH:,} per batch, "
                        f"{codec}; Record objects built + encode_batch per batch vs append + "
                        f"build per batch; {ext}; {note}")
                out.append(_row(f"encode_rows.{tag}.vs_aiokafka", n / t_ours, n / t_peer,
                                "records/s", what))
                state: dict = {}

                def fresh(state: dict = state) -> None:
                    if "log" in state:
                        state.pop("log").close()
                    shutil.rmtree(f"{tmp}/log", ignore_errors=True)
                    state["log"] = Log.open(f"{tmp}/log")
                    # no writeback of earlier writes (the last run's log, the GiBs another
                    # module wrote just before) during the timed run, as bench_log's setups
                    os.sync()

                def append(recs: list, codec: str = codec, state: dict = state) -> None:
                    state["log"].append(recs, compression=codec)

                ours_log = _ours_rows(keys, values, stamps, codec, headers, sink=append)
                t_ours, t_peer = _best_pair(ours_log, peer, reps, reps, setup=fresh)
                out.append(_row(f"log_append.records.{tag}.vs_aiokafka", n / t_ours,
                                n / t_peer, "records/s",
                                what.replace("encode_batch per batch", "Log.append per batch "
                                             "(into a fresh log opened untimed; no fsync)")))
                if "log" in state:
                    state.pop("log").close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def bench_decode_one_core(data: bytes, repeat: int) -> list[dict]:
    """The parallel decode with its 2 threads on one core vs the serial decode there."""
    import kafkalog.records.columnar as columnar

    if not hasattr(os, "sched_setaffinity"):  # pragma: no cover - not Linux
        return []
    cores = os.sched_getaffinity(0)
    real = columnar.decode_workers
    backoff = columnar.PARALLEL_BACKOFF_SECONDS
    try:
        os.sched_setaffinity(0, {min(cores)})
        columnar.decode_workers = lambda: 2

        def parallel() -> object:
            return decode_columns(data)

        def serial() -> object:
            columnar.decode_workers = lambda: 1
            try:
                return decode_columns(data)
            finally:
                columnar.decode_workers = lambda: 2

        t_par, t_ser = _best_pair(parallel, serial, repeat, repeat)
        columnar.PARALLEL_BACKOFF_SECONDS = 0.0  # every call in parts: the raw cost
        columnar._serial_until = 0.0
        t_forced, _ = _best_pair(parallel, None, repeat, 0)
    finally:
        columnar.decode_workers = real
        columnar.PARALLEL_BACKOFF_SECONDS = backoff
        columnar._serial_until = 0.0
        os.sched_setaffinity(0, cores)
    return [{"name": "decode.none.parallel_on_one_core", "value": t_par, "unit": "s",
             "baseline": t_ser, "ratio": t_ser / t_par,
             "note": f"decode_columns of the {len(data) / 1e6:.0f} MB uncompressed records "
                     f"asking for 2 threads vs the serial decode, the process pinned to one "
                     f"core (as when the other core is busy elsewhere): after a decode whose "
                     f"parts did not overlap it decodes serially for a second; every call in "
                     f"parts regardless: {t_forced:.4f} s ({t_ser / t_forced:.2f}x)"}]


def bench_encode_threads(cols: RecordColumns, repeat: int) -> list[dict]:
    """``encode.<codec>.threads_vs_serial`` (see the module docstring)."""
    import kafkalog.records.columnar as columnar

    real = columnar.decode_workers
    out = []
    try:
        for codec, c in (("zstd", cols), ("snappy", cols), ("lz4", cols),
                         ("gzip", _head(cols, 200_000))):
            def threads(codec: str = codec, c: RecordColumns = c) -> object:
                columnar.decode_workers = real
                columnar._serial_until = 0.0
                return encode_columns(c, records_per_batch=PER_BATCH, compression=codec)

            def serial(codec: str = codec, c: RecordColumns = c) -> object:
                columnar.decode_workers = lambda: 1
                try:
                    return encode_columns(c, records_per_batch=PER_BATCH, compression=codec)
                finally:
                    columnar.decode_workers = real

            if threads() != serial():
                raise AssertionError(f"{codec}: the threads wrote other bytes")
            reps = max(1, repeat // 3) if codec == "gzip" else repeat
            t_thr, t_ser = _best_pair(threads, serial, reps, reps)
            out.append(_row(f"encode.{codec}.threads_vs_serial", len(c) / t_thr,
                            len(c) / t_ser, "records/s",
                            f"encode_columns of {len(c):,} records, {PER_BATCH:,} per batch, "
                            f"{codec}: the batches compressed in {real()} threads (contiguous "
                            f"parts) vs in one; same bytes (checked)"))
    finally:
        columnar.decode_workers = real
        columnar._serial_until = 0.0
    return out


def _decode_vs_aiokafka(name: str, data: bytes, n: int, what: str, peers: dict,
                        repeat: int) -> dict:
    """One ``decode.*.vs_aiokafka`` row: ``decode_columns(data)`` against aiokafka's reader,
    both checked to find ``n`` records first."""
    mr, _, note = peers["aiokafka"]
    if decode_columns(data).record_count != n or _peer_decode(mr, data)() != n:
        raise AssertionError(f"{name}: a side decoded a different record count")
    t_ours, t_peer = _best_pair(lambda: decode_columns(data), _peer_decode(mr, data), repeat,
                                repeat)
    return _row(name, n / t_ours, n / t_peer, "records/s",
                f"{what}; CRCs checked by both; {note}")


def content_checksummed_lz4(cols: RecordColumns) -> bytes:
    """``cols`` as lz4 batches of ``PER_BATCH`` records whose frames carry a content checksum
    (FLG 0x64, what pierrec/lz4 writes by default; Kafka's own frames have none)."""
    import lz4.frame
    from crc32c import crc32c
    from kafkalog.native.scan import scan_entries

    plain = encode_columns(cols, records_per_batch=PER_BATCH)
    sc = scan_entries(np.frombuffer(plain, np.uint8), 0, max_entries=1 << 30)
    out = bytearray()
    for p, size in zip(sc["positions"][: sc["count"]].tolist(),
                       sc["sizes"][: sc["count"]].tolist()):
        head = bytearray(plain[p:p + 61])
        frame = lz4.frame.compress(plain[p + 61:p + size], block_linked=False,
                                   content_checksum=True)
        struct.pack_into(">h", head, 21, struct.unpack_from(">h", head, 21)[0] | 3)
        struct.pack_into(">i", head, 8, 61 + len(frame) - 12)
        batch = head + frame
        struct.pack_into(">I", batch, 17, crc32c(bytes(batch[21:])))
        out += batch
    return bytes(out)


def bench_checksummed_lz4(cols: RecordColumns, peers: dict, repeat: int) -> list[dict]:
    """``decode.lz4.content_checksum.vs_aiokafka`` (see the module docstring)."""
    if "aiokafka" not in peers:  # pragma: no cover - optional peer
        return []
    data = content_checksummed_lz4(cols)
    n = len(cols)
    return [_decode_vs_aiokafka(
        "decode.lz4.content_checksum.vs_aiokafka", data, n,
        f"{n:,} records, {len(data) / 1e6:.1f} MB as lz4 frames with a content checksum "
        "(pierrec/lz4's default: Sarama and other Go producers), checked by both sides too",
        peers, repeat)]


def bench_headers(cols: RecordColumns, peers: dict, repeat: int) -> list[dict]:
    """``decode.none.headers.vs_aiokafka`` (see the module docstring)."""
    if "aiokafka" not in peers:  # pragma: no cover - optional peer
        return []
    from kafkalog import Record, encode_batch

    keys, values, stamps = _row_inputs(cols)
    n = len(keys)
    data = b"".join(
        bytes(encode_batch([Record(k, v, t, HEADERS) for k, v, t in zip(
            keys[s:s + PER_BATCH], values[s:s + PER_BATCH], stamps[s:s + PER_BATCH])],
            base_offset=s))
        for s in range(0, n, PER_BATCH))
    return [_decode_vs_aiokafka(
        "decode.none.headers.vs_aiokafka", data, n,
        f"{n:,} records of 16 B key + 100 B value + 2 headers, {PER_BATCH:,} per batch, "
        f"{len(data) / 1e6:.1f} MB as none; header columns on our side, every record's "
        f"headers read on theirs", peers, repeat)]


def _head(cols: RecordColumns, n: int) -> RecordColumns:
    """The first ``n`` rows of ``cols`` (fixed-size keys and values, no headers)."""
    return make_columns(n) if n < len(cols) else cols


def legacy_sets(cols: RecordColumns, magic: int, codec: int, builder: type) -> bytes:
    """``cols`` as legacy entries of ``magic`` (one message each, or wrappers of ``PER_BATCH``
    inner messages at their last offset) written by a peer's ``LegacyRecordBatchBuilder``."""
    n = len(cols)
    out = bytearray()
    for start in range(0, n, PER_BATCH):
        b = builder(magic, codec, 1 << 30)
        for i in range(start, min(n, start + PER_BATCH)):
            b.append(i - start if codec and magic == 1 else i,  # v1 wrappers: relative
                     timestamp=int(cols.timestamps[i]) if magic else None,
                     key=cols.key_data[i * KEY_SIZE:(i + 1) * KEY_SIZE].tobytes(),
                     value=cols.value_data[i * VALUE_SIZE:(i + 1) * VALUE_SIZE].tobytes())
        built = bytearray(b.build())
        if codec:
            struct.pack_into(">q", built, 0, min(n, start + PER_BATCH) - 1)
        out += built
    return bytes(out)


def bench_legacy(cols: RecordColumns, peers: dict, repeat: int) -> list[dict]:
    """``decode.legacy.*`` (see the module docstring)."""
    from unittest import mock

    from kafkalog.records import legacy_columnar

    if "aiokafka" not in peers:  # pragma: no cover - optional peer
        return []
    from aiokafka.record.legacy_records import LegacyRecordBatchBuilder

    n = len(cols)
    out = []
    for magic, codec, name in ((0, 0, "none"), (1, 0, "none"), (1, 1, "gzip"),
                               (1, 2, "snappy"), (1, 3, "lz4")):
        data = legacy_sets(cols, magic, codec, LegacyRecordBatchBuilder)
        what = (f"{n:,} records, {len(data) / 1e6:.1f} MB of magic {magic} "
                + ("messages" if codec == 0 else f"{name} wrappers of {PER_BATCH:,}"))
        out.append(_decode_vs_aiokafka(f"decode.legacy.v{magic}.{name}.vs_aiokafka", data, n,
                                       what, peers, repeat))
        if magic == 1 and codec == 0:
            def object_path(d: bytes = data) -> object:
                with mock.patch.object(legacy_columnar, "decode_legacy_entries",
                                       return_value=None):
                    return decode_columns(d)

            t_ours, t_obj = _best_pair(lambda d=data: decode_columns(d), object_path,
                                       repeat, max(1, repeat // 5))
            out.append(_row("decode.legacy.v1.none.vs_object_path", n / t_ours, n / t_obj,
                            "records/s", f"{what}; columns from the bytes vs a Record per "
                            "message then columns (the path before legacy_columnar)"))
    return out


def bench_single_record_batches(cols: RecordColumns, peers: dict, repeat: int) -> list[dict]:
    """``decode.<codec>.1_per_batch.vs_aiokafka`` (see the module docstring)."""
    if "aiokafka" not in peers:  # pragma: no cover - optional peer
        return []
    n = len(cols)
    out = []
    for codec in ("none", "gzip", "snappy", "lz4", "zstd"):
        data = encode_columns(cols, records_per_batch=1, compression=codec)
        out.append(_decode_vs_aiokafka(
            f"decode.{codec}.1_per_batch.vs_aiokafka", data, n,
            f"{n:,} records, one per batch, {len(data) / 1e6:.1f} MB as {codec}", peers,
            max(1, repeat // 2)))
    return out


def _row(name: str, value: float, baseline: float, unit: str, note: str) -> dict:
    return {"name": name, "value": value, "unit": unit, "baseline": baseline,
            "ratio": value / baseline if baseline else float("inf"), "note": note}


def run(quick: bool = False) -> list[dict]:
    """Measure and return the rows (see the module docstring)."""
    n = 100_000 if quick else 1_000_000
    repeat = 3 if quick else 10  # best-of: the shared machine is noisy
    slow_repeat = 1 if quick else 2  # kafka-python (pure Python) takes seconds per run
    peers = _peers()
    cols = make_columns(n)
    rows_py = list(zip(cols.timestamps.tolist(),
                       [cols.key_data[i * KEY_SIZE:(i + 1) * KEY_SIZE].tobytes() for i in range(n)],
                       [cols.value_data[i * VALUE_SIZE:(i + 1) * VALUE_SIZE].tobytes()
                        for i in range(n)]))
    out = []
    decoded = None
    for codec, cid in CODECS.items():
        data = encode_columns(cols, records_per_batch=PER_BATCH, compression=codec)
        decoded = decode_columns(data)
        if decoded.record_count != n:
            raise AssertionError("decode lost records")

        def ours_dec(data: bytes = data) -> object:
            return decode_columns(data)

        def ours_dec_nocrc(data: bytes = data) -> object:
            return decode_columns(data, validate=False)

        def ours_enc(codec: str = codec) -> object:
            return encode_columns(cols, records_per_batch=PER_BATCH, compression=codec)

        size_note = f"{n:,} records, {len(data) / 1e6:.1f} MB as {codec}"
        for peer, (mr, builder, note) in peers.items():
            peer_repeat = slow_repeat if peer == "kafka-python" else repeat
            dec = _peer_decode(mr, data)
            if dec() != n:
                raise AssertionError(f"{peer} decoded a different record count")
            t_ours, t_peer = _best_pair(ours_dec, dec, repeat, peer_repeat)
            out.append(_row(f"decode.{codec}.vs_{peer}", n / t_ours, n / t_peer, "records/s",
                            f"{size_note}; CRCs checked by both; {note}"))
            if peer == "aiokafka":
                t_ours, t_peer = _best_pair(ours_dec_nocrc, _peer_decode(mr, data, False),
                                            repeat, peer_repeat)
                out.append(_row(f"decode.{codec}.vs_{peer}.no_crc_check", n / t_ours,
                                n / t_peer, "records/s",
                                f"{size_note}; neither checks CRCs (validate=False vs no "
                                f"validate_crc()); {note}"))
            peer_enc = _peer_encode(builder, cid, rows_py)
            t_ours, t_peer = _best_pair(ours_enc, peer_enc, repeat, peer_repeat)
            out.append(_row(f"encode.{codec}.vs_{peer}", n / t_ours, n / t_peer, "records/s",
                            f"{size_note}; result as bytes; {note}"))
            if peer == "aiokafka" and codec == "none":
                t_ours, t_peer = _best_pair(
                    lambda: encode_columns(cols, records_per_batch=PER_BATCH, as_numpy=True),
                    peer_enc, repeat, peer_repeat)
                out.append(_row(f"encode.{codec}.vs_{peer}.as_numpy", n / t_ours, n / t_peer,
                                "records/s", f"{size_note}; result as a numpy array "
                                f"(as_numpy=True: no final copy into bytes); {note}"))
    buf = np.random.default_rng(1).integers(0, 256, 1 << 20, dtype=np.uint8).tobytes()
    import crc32c

    # many short interleaved samples, best of each: the two sides call the same C function
    # (kafkalog.records.crc wraps the crc32c package), so only noise could separate them
    number = 50

    def loop(fn: Callable[[bytes], int]) -> Callable[[], None]:
        def go() -> None:
            for _ in range(number):
                fn(buf)
        return go

    out += bench_rows(cols, peers, repeat)
    out += bench_checksummed_lz4(cols, peers, repeat)
    out += bench_headers(cols, peers, repeat)
    out += bench_legacy(cols if quick else _head(cols, 200_000), peers, repeat)
    out += bench_single_record_batches(cols if quick else _head(cols, 200_000), peers, repeat)
    out += bench_decode_one_core(encode_columns(cols, records_per_batch=PER_BATCH), repeat)
    out += bench_encode_threads(cols, repeat)
    t_ours, t_pkg = _best_pair(loop(kcrc.crc32c), loop(crc32c.crc32c), 30, 30)
    out.append(_row("crc32c.1MiB", number * len(buf) / t_ours, number * len(buf) / t_pkg,
                    "bytes/s", f"crc32c package {crc32c.__version__} as baseline; "
                    f"target ratio >= 0.8"))
    assert decoded is not None
    t_arrow = _best(decoded.to_arrow, repeat)
    out.append({"name": "to_arrow", "value": t_arrow, "unit": "s", "baseline": None,
                "ratio": None, "note": f"RecordColumns.to_arrow of {n:,} decoded records "
                "(buffers wrapped, not copied)"})
    return out


def format_rows(rows: list[dict]) -> str:
    """Rows as a markdown table (also used by run_all.py)."""
    lines = ["| name | value | unit | baseline | ratio | note |", "|---|---|---|---|---|---|"]
    for r in rows:
        def fmt(x: object) -> str:
            if x is None:
                return "-"
            if isinstance(x, float):
                return f"{x:,.3g}" if abs(x) < 1000 else f"{x:,.0f}"
            return str(x)
        ratio = "-" if r.get("ratio") is None else f"{r['ratio']:.2f}x"
        lines.append(f"| {r['name']} | {fmt(r['value'])} | {r['unit']} | "
                     f"{fmt(r.get('baseline'))} | {ratio} | {r.get('note', '')} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100,000 records instead of 1M")
    parser.add_argument("--rows-only", metavar="CODECS",
                        help="only the encode_rows/log_append.records rows of these codecs "
                             "(comma separated, e.g. snappy,zstd)")
    args = parser.parse_args(argv)
    if args.rows_only:
        codecs = tuple(args.rows_only.split(","))
        unknown = set(codecs) - set(ROW_CODECS)
        if unknown:
            parser.error(f"unknown codec(s) {', '.join(sorted(unknown))} "
                         f"(expected some of {', '.join(ROW_CODECS)})")
        n = 100_000 if args.quick else 1_000_000
        print(format_rows(bench_rows(make_columns(n), _peers(), 3 if args.quick else 6,
                                     codecs)))
        return 0
    print(format_rows(run(quick=args.quick)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
