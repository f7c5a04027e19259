"""``records.timestamp_search.first_record_at_or_after`` over batches written by peers.

The answer for every target must be the first record, in the order a peer's reader yields
them, whose timestamp and offset reach the bounds; bad bytes raise what a decode raises.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalog import Record, encode_batch
from kafkalog.errors import CorruptRecordError
from kafkalog.records.batch import iter_batches
from kafkalog.records.timestamp_search import first_record_at_or_after
from tests.test_peers import CODECS, PEERS, T0

aio = next(p for p in PEERS if p.name == "aiokafka-py")
kafka_python = next(p for p in PEERS if p.name == "kafka-python")


def _reference(peer, data: bytes, target: int, min_offset: int) -> tuple[int, int] | None:
    for _, recs in peer.read(data):
        for r in recs:
            if r.timestamp >= target and r.offset >= min_offset:
                return r.timestamp, r.offset
    return None


stamps = st.lists(st.integers(-5, 60), min_size=1, max_size=30)


def _rebased(batch: bytes, base_offset: int) -> bytes:
    """A v2 batch with another base offset (bytes 0-7: outside the CRC)."""
    return base_offset.to_bytes(8, "big", signed=True) + batch[8:]


@settings(max_examples=60, deadline=None)
@given(stamps, st.sampled_from(CODECS), st.integers(-8, 70), st.integers(-2, 132))
def test_v2_batches_of_a_peer(deltas, codec, dt, min_offset) -> None:
    recs = [Record(b"k%d" % i, b"v" * (i % 7), T0 + d) for i, d in enumerate(deltas)]
    data = aio.build_v2(recs, codec) + _rebased(aio.build_v2(recs[::-1], codec), 100)
    for target in (T0 + dt, T0 - 10, T0 + 100):
        assert first_record_at_or_after(data, target, min_offset) == \
            _reference(aio, data, target, min_offset)


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy"])
def test_legacy_entries_of_a_peer(codec) -> None:
    recs = [Record(b"k", b"v%d" % i, T0 + (i * 7) % 23) for i in range(20)]
    data = kafka_python.build_legacy(recs, 1, codec)
    for target in range(T0 - 2, T0 + 25, 3):
        for min_offset in (0, 5, 19, 20):
            assert first_record_at_or_after(data, target, min_offset) == \
                _reference(kafka_python, data, target, min_offset)


def test_log_append_time_batch_answers_its_max_timestamp() -> None:
    recs = [Record(None, b"v", T0 + i) for i in range(5)]
    data = encode_batch(recs, base_offset=40, timestamp_type="log_append",
                        log_append_time=T0 + 999)
    assert first_record_at_or_after(data, T0 + 500) == (T0 + 999, 40)
    assert first_record_at_or_after(data, T0 + 500, 43) == (T0 + 999, 43)
    assert first_record_at_or_after(data, T0 + 1000) is None


def test_bad_records_raise_what_a_decode_raises() -> None:
    from kafkalog.records.crc import crc32c

    data = bytearray(encode_batch([Record(b"k", b"v" * 10, T0 + i) for i in range(4)]))
    data[57:61] = (5).to_bytes(4, "big")  # one record more than the area holds
    data[17:21] = crc32c(bytes(data[21:])).to_bytes(4, "big")  # (the CRC still matches)
    with pytest.raises(CorruptRecordError) as want:
        next(iter_batches(bytes(data))).records()
    with pytest.raises(CorruptRecordError) as got:
        first_record_at_or_after(bytes(data), T0)
    assert str(got.value) == str(want.value)
