"""``Log.read_table`` decodes each segment in chunks of whole batches: the same table as one
decode of the segment, for any chunk size, offset range and codec mix; small segments are
decoded together: the same table (and errors) as one by one."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkalog import Record, decode_table
from kafkalog import log as log_module
from kafkalog.clock import ManualClock
from kafkalog.config import LogConfig
from kafkalog.errors import CorruptRecordError
from kafkalog.log import Log


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(1, 30), st.sampled_from(["none", "lz4", "zstd"])),
                min_size=1, max_size=25),
       st.integers(1, 3000), st.data())
def test_chunked_read_table_equals_one_decode(tmp_path_factory: pytest.TempPathFactory,
                                              monkeypatch: pytest.MonkeyPatch,
                                              batches: list, chunk: int,
                                              data: st.DataObject) -> None:
    monkeypatch.setattr(log_module, "READ_TABLE_CHUNK_BYTES", chunk)
    d: Path = tmp_path_factory.mktemp("log")
    with Log.open(d, clock=ManualClock(1_700_000_000_000)) as log:
        for i, (n, codec) in enumerate(batches):
            log.append([Record(b"k%d" % j, b"v" * (j % 7) * i, None, [("h", b"x")] * (j % 2))
                        for j in range(n)], compression=codec)
        end = log.log_end_offset
        lo = data.draw(st.integers(0, end))
        hi = data.draw(st.integers(lo, end + 2))
        table = log.read_table(lo, hi)
    [seg] = sorted(d.glob("*.log"))
    expected = decode_table(seg, start_offset=lo, end_offset=min(hi, end))
    assert table.to_pylist() == expected.to_pylist()


def test_decode_chunks_cover_whole_entries() -> None:
    data = b"".join(
        __import__("kafkalog").encode_batch([Record(None, b"x" * 100)], base_offset=i)
        for i in range(10))
    size = len(data) // 10
    chunks = log_module._decode_chunks(data, 3 * size)
    assert chunks == [(0, 3 * size), (3 * size, 6 * size), (6 * size, 9 * size),
                      (9 * size, None)]
    assert log_module._decode_chunks(data, len(data)) == [(0, None)]


# -- small segments read together ------------------------------------------------------------


def _small_segment_log(d: Path, batches: list, txn_every: int = 0) -> Log:
    # a roll after every other batch, and at 600 bytes
    log = Log.open(d, LogConfig(segment_bytes=600), clock=ManualClock(1_700_000_000_000))
    seq = 0
    for i, (n, codec) in enumerate(batches):
        if i % 2:
            log.roll()
        recs = [Record(b"k%d" % j, b"v" * (j % 9) * (i % 4), None, [("h", b"x")] * (j % 2))
                for j in range(n)]
        if txn_every and i % txn_every == 0:
            log.append(recs, compression=codec, producer_id=9, producer_epoch=0,
                       base_sequence=seq, transactional=True)
            seq += n
            (log.abort_transaction if i % 2 else log.commit_transaction)(9, 0)
        else:
            log.append(recs, compression=codec)
    return log


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(1, 12), st.sampled_from(["none", "lz4", "zstd", "gzip"])),
                min_size=2, max_size=40),
       st.integers(100, 5000), st.sampled_from([0, 3]),
       st.sampled_from(["read_uncommitted", "read_committed"]), st.data())
def test_small_segments_read_together_equal_one_by_one(
        tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
        batches: list, group_bytes: int, txn_every: int, isolation: str,
        data: st.DataObject) -> None:
    """Many small segments decoded in groups (of ``group_bytes``) give the table of decoding
    each one alone, for any offset range, codec mix and isolation (aborted transactions)."""
    d: Path = tmp_path_factory.mktemp("log")
    with _small_segment_log(d, batches, txn_every) as log:
        end = log.log_end_offset
        lo = data.draw(st.integers(log.log_start_offset, end))
        hi = data.draw(st.integers(lo, end + 2))
        monkeypatch.setattr(log_module, "READ_TABLE_GROUP_BYTES", group_bytes)
        grouped = log.read_table(lo, hi, isolation=isolation)
        monkeypatch.setattr(log_module, "READ_TABLE_SMALL_RANGE_BYTES", 0)  # each alone
        alone = log.read_table(lo, hi, isolation=isolation)
        assert len(log.segments) >= 2
    assert grouped.to_pylist() == alone.to_pylist()


def test_small_segments_are_decoded_together(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Guard for the test above: the grouped decode runs, one call for all the segments."""
    calls = []
    real = log_module._decode_small_ranges

    def spy(group: list, tx: object) -> object:
        out = real(group, tx)
        calls.append((len(group), out is not None))
        return out

    monkeypatch.setattr(log_module, "_decode_small_ranges", spy)
    with _small_segment_log(tmp_path / "p-0", [(5, "none")] * 30) as log:
        n_segments = len(log.segments)
        assert log.read_table().num_rows == 150
    assert n_segments >= 15 and calls == [(n_segments, True)]


def test_a_corrupt_small_segment_raises_what_one_by_one_raises(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A damaged byte in the middle segment of a group: the error names that segment's file
    and the position in it, as decoding it alone does."""
    d = tmp_path / "p-0"
    with _small_segment_log(d, [(5, "none")] * 30) as log:
        victim = log.segments[len(log.segments) // 2]
        path, size = victim.log_path, victim.size
    raw = bytearray(path.read_bytes())
    raw[size - 3] ^= 0xFF  # inside the last record of its last batch: a CRC mismatch
    path.write_bytes(bytes(raw))
    errors = []
    for small in (log_module.READ_TABLE_SMALL_RANGE_BYTES, 0):
        monkeypatch.setattr(log_module, "READ_TABLE_SMALL_RANGE_BYTES", small)
        with Log.open(d, read_only=True) as log, pytest.raises(CorruptRecordError) as e:
            log.read_table()
        errors.append(str(e.value))
    assert errors[0] == errors[1]
    assert str(path) in errors[0] and "CRC" in errors[0].upper()


def test_small_segments_of_peer_batches_read_together_as_the_peer_reads_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches built by aiokafka (each codec, headers) in many small segments: read_table's
    grouped decode gives the records aiokafka's reader finds in the segment files."""
    aio_dr = pytest.importorskip("aiokafka.record.default_records")
    aio_mr = pytest.importorskip("aiokafka.record.memory_records")
    calls = []
    real = log_module._decode_small_ranges
    monkeypatch.setattr(log_module, "_decode_small_ranges",
                        lambda group, tx: calls.append(len(group)) or real(group, tx))
    d = tmp_path / "p-0"
    base = 0
    with Log.open(d, LogConfig(segment_bytes=1 << 20),
                  clock=ManualClock(1_700_000_000_000)) as log:
        for i in range(24):
            b = aio_dr.DefaultRecordBatchBuilder(2, i % 5, False, -1, -1, -1, 1 << 30)
            for j in range(1 + i % 4):
                b.append(j, timestamp=1_700_000_000_000 + i, key=b"k%d" % j,
                         value=b"v" * (i * j), headers=[("h", b"%d" % i)])
            data = bytes(b.build())
            data = base.to_bytes(8, "big") + data[8:]  # the base offset (outside the CRC)
            log.append_batches(data)
            base = log.log_end_offset
            if i % 2:
                log.roll()
        table = log.read_table()
    assert calls and max(calls) >= 10
    want = []
    for seg in sorted(d.glob("*.log")):
        mr = aio_mr.MemoryRecords(seg.read_bytes())
        while (batch := mr.next_batch()) is not None:
            assert batch.validate_crc()
            want += [(r.offset, r.key, r.value, r.timestamp, [(k, v) for k, v in r.headers])
                     for r in batch]
    got = [(r["offset"], r["key"], r["value"], r["timestamp"],
            [(h["key"], h["value"]) for h in r["headers"]]) for r in table.to_pylist()]
    assert got == want and len(want) == sum(1 + i % 4 for i in range(24))
