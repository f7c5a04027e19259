"""Round trips with the Python peers: kafka-python and aiokafka (both its C and Python readers).

For every magic and codec: batches the peers build decode here with every field equal, batches
built here decode there with every field equal, and uncompressed v2 bytes built from the same
inputs are identical (kafka-python stamps partitionLeaderEpoch 0, aiokafka -1).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import pytest

from kafkalog import Record, encode_batch, iter_batches
from kafkalog.records.batch import RecordBatch
from kafkalog.records.legacy import LegacyEntry

kafka_dr = pytest.importorskip("kafka.record.default_records")
kafka_lr = pytest.importorskip("kafka.record.legacy_records")
kafka_mr = pytest.importorskip("kafka.record.memory_records")
aio_dr = pytest.importorskip("aiokafka.record.default_records")
aio_lr = pytest.importorskip("aiokafka.record.legacy_records")
aio_mr = pytest.importorskip("aiokafka.record.memory_records")

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
CODEC_ID = {c: i for i, c in enumerate(CODECS)}
T0 = 1700000000000
BIG = 1 << 30


@dataclass(frozen=True)
class Peer:
    name: str
    v2_builder: Any
    legacy_builder: Any
    memory_records: Any
    leader_epoch: int  # what the peer's v2 builder writes in partitionLeaderEpoch

    def build_v2(self, records: list[Record], codec: str, *, transactional: bool = False,
                 producer_id: int = -1, producer_epoch: int = -1,
                 base_sequence: int = -1) -> bytes:
        if self.name == "kafka-python":
            b = self.v2_builder(magic=2, compression_type=CODEC_ID[codec],
                                is_transactional=transactional, producer_id=producer_id,
                                producer_epoch=producer_epoch, base_sequence=base_sequence,
                                batch_size=BIG)
        else:
            b = self.v2_builder(2, CODEC_ID[codec], int(transactional), producer_id,
                                producer_epoch, base_sequence, BIG)
        for i, r in enumerate(records):
            b.append(i, r.timestamp, r.key, r.value, list(r.headers))
        return bytes(b.build())

    def build_legacy(self, records: list[Record], magic: int, codec: str) -> bytes:
        if self.name == "kafka-python":
            b = self.legacy_builder(magic=magic, compression_type=CODEC_ID[codec], batch_size=BIG)
        else:
            b = self.legacy_builder(magic, CODEC_ID[codec], BIG)
        for i, r in enumerate(records):
            b.append(i, r.timestamp, r.key, r.value)
        return bytes(b.build())

    def read(self, data: bytes) -> list[tuple[Any, list[Any]]]:
        """(batch, records) per batch; every CRC must validate (checked before iterating)."""
        mr = self.memory_records(data)
        out = []
        while True:
            batch = mr.next_batch()
            if batch is None:
                break
            assert batch.validate_crc(), f"{self.name}: CRC check failed"
            out.append((batch, list(batch)))
        return out


PEERS = [
    Peer("kafka-python", kafka_dr.DefaultRecordBatchBuilder, kafka_lr.LegacyRecordBatchBuilder,
         kafka_mr.MemoryRecords, 0),
    Peer("aiokafka-c", getattr(aio_dr, "_DefaultRecordBatchBuilderCython", None),
         getattr(aio_lr, "_LegacyRecordBatchBuilderCython", None),
         getattr(aio_mr, "_MemoryRecordsCython", None), -1),
    Peer("aiokafka-py", aio_dr._DefaultRecordBatchBuilderPy, aio_lr._LegacyRecordBatchBuilderPy,
         aio_mr._MemoryRecordsPy, -1),
]


@pytest.fixture(params=PEERS, ids=lambda p: p.name)
def peer(request: pytest.FixtureRequest) -> Peer:
    p = request.param
    if p.v2_builder is None:
        pytest.skip("aiokafka's compiled extension is not available")
    return p


def test_aiokafka_compiled_extension_is_active() -> None:
    # the C reader is what aiokafka users run: make sure the "aiokafka-c" cases test it
    assert not aio_dr.NO_EXTENSIONS
    assert aio_dr.DefaultRecordBatchBuilder is aio_dr._DefaultRecordBatchBuilderCython
    assert aio_mr.MemoryRecords is aio_mr._MemoryRecordsCython


# --- inputs -------------------------------------------------------------------------------------


def mixed_records(n: int = 40, seed: int = 7, headers: bool = True) -> list[Record]:
    """Null and empty keys/values, headers (duplicates, null values, non-ASCII keys)."""
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        key = [None, b"", b"k%d" % i, bytes(rnd.randrange(256) for _ in range(rnd.randrange(40)))][
            i % 4]
        value = [b"v" * rnd.randrange(300), None, b"", "värde-😀".encode()][(i // 4) % 4]
        hs: list[tuple[str, bytes | None]] = []
        if headers and i % 3:
            hs = [("ключ", b""), ("trace-id", None), ("dup", b"1"), ("dup", b"2")][: i % 5]
        ts = T0 + rnd.randrange(-5000, 5000)
        out.append(Record(key, value, ts, hs))
    return out


def many_records(n: int = 1500) -> list[Record]:
    return [Record(b"key-%d" % (i % 17), b"value-%06d" % i * (1 + i % 3), T0 + i) for i in range(n)]


RECORD_SETS = {"mixed": mixed_records, "many": many_records}
PRODUCERS = {
    "plain": {},
    "idempotent": {"producer_id": 1001, "producer_epoch": 3, "base_sequence": 5},
    "transactional": {"producer_id": 2002, "producer_epoch": 7, "base_sequence": 0,
                      "transactional": True},
}


def _codec_of(peer_batch: Any) -> str:
    return CODECS[peer_batch.compression_type]


def _peer_record(r: Any) -> tuple:
    ts = -1 if r.timestamp is None else r.timestamp
    return (r.offset, ts, r.key, r.value, [tuple(h) for h in getattr(r, "headers", [])])


def _our_record(r: Record) -> tuple:
    return (r.offset, r.timestamp, r.key, r.value, [tuple(h) for h in r.headers])


def _input_record(i: int, r: Record, magic: int = 2) -> tuple:
    return (i, r.timestamp if magic else -1, r.key, r.value, [tuple(h) for h in r.headers])


# --- v2 -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("rset", list(RECORD_SETS))
@pytest.mark.parametrize("prod", list(PRODUCERS))
def test_v2_peer_built_decodes_here(peer: Peer, codec: str, rset: str, prod: str) -> None:
    records = RECORD_SETS[rset]()
    kw = PRODUCERS[prod]
    data = peer.build_v2(records, codec, **kw)
    (theirs, their_recs) = peer.read(data)[0]
    (b,) = list(iter_batches(data))
    assert isinstance(b, RecordBatch)
    assert b.is_valid and b.crc == theirs.crc
    assert b.compression == _codec_of(theirs)
    assert b.base_offset == theirs.base_offset == 0
    assert b.last_offset_delta == theirs.last_offset_delta == len(records) - 1
    assert b.record_count == len(records)
    assert b.partition_leader_epoch == peer.leader_epoch
    assert (b.producer_id, b.producer_epoch, b.base_sequence) == (
        kw.get("producer_id", -1), kw.get("producer_epoch", -1), kw.get("base_sequence", -1))
    assert (theirs.producer_id, theirs.producer_epoch, theirs.base_sequence) == (
        b.producer_id, b.producer_epoch, b.base_sequence)
    assert b.is_transactional is theirs.is_transactional is kw.get("transactional", False)
    assert b.is_control is theirs.is_control_batch is False
    assert b.base_timestamp == theirs.first_timestamp == records[0].timestamp
    assert b.max_timestamp == theirs.max_timestamp == max(r.timestamp for r in records)
    assert b.timestamp_type == "CreateTime" and theirs.timestamp_type == 0
    ours = [_our_record(r) for r in b]
    assert ours == [_peer_record(r) for r in their_recs]
    assert ours == [_input_record(i, r) for i, r in enumerate(records)]


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("rset", list(RECORD_SETS))
@pytest.mark.parametrize("prod", list(PRODUCERS))
def test_v2_built_here_decodes_at_peer(peer: Peer, codec: str, rset: str, prod: str) -> None:
    records = RECORD_SETS[rset]()
    kw = PRODUCERS[prod]
    data = encode_batch(records, compression=codec, base_offset=1000,
                        partition_leader_epoch=9, **kw)
    ((theirs, their_recs),) = peer.read(data)
    assert _codec_of(theirs) == codec
    assert theirs.base_offset == 1000
    assert theirs.last_offset_delta == len(records) - 1
    assert (theirs.producer_id, theirs.producer_epoch, theirs.base_sequence) == (
        kw.get("producer_id", -1), kw.get("producer_epoch", -1), kw.get("base_sequence", -1))
    assert theirs.is_transactional is kw.get("transactional", False)
    assert theirs.is_control_batch is False
    assert theirs.first_timestamp == records[0].timestamp
    assert theirs.max_timestamp == max(r.timestamp for r in records)
    assert [_peer_record(r) for r in their_recs] == [
        _input_record(1000 + i, r) for i, r in enumerate(records)
    ]


@pytest.mark.parametrize("rset", list(RECORD_SETS))
@pytest.mark.parametrize("prod", list(PRODUCERS))
def test_v2_uncompressed_bytes_identical(peer: Peer, rset: str, prod: str) -> None:
    records = RECORD_SETS[rset]()
    kw = PRODUCERS[prod]
    theirs = peer.build_v2(records, "none", **kw)
    ours = encode_batch(records, partition_leader_epoch=peer.leader_epoch, **kw)
    assert ours == theirs


def test_v2_log_append_time_read_at_peer(peer: Peer) -> None:
    records = mixed_records(10)
    data = encode_batch(records, timestamp_type="log_append", log_append_time=T0 + 123456,
                        compression="gzip")
    ((theirs, recs),) = peer.read(data)
    assert theirs.timestamp_type == 1 and theirs.max_timestamp == T0 + 123456
    assert {r.timestamp for r in recs} == {T0 + 123456}
    assert [r.timestamp for r in next(iter_batches(data))] == [T0 + 123456] * 10


def test_control_batch_read_at_peer(peer: Peer) -> None:
    from kafkalog.records.builder import encode_end_txn_marker

    data = encode_end_txn_marker(False, producer_id=5, producer_epoch=2, coordinator_epoch=4,
                                 base_offset=77, timestamp=T0)
    ((theirs, recs),) = peer.read(data)
    assert theirs.is_control_batch and theirs.is_transactional
    assert theirs.base_offset == 77 and theirs.producer_id == 5


# --- legacy -------------------------------------------------------------------------------------

LEGACY = [(m, c) for m in (0, 1) for c in CODECS[:4]]


def _legacy_supported(peer: Peer, magic: int, codec: str, direction: str) -> None:
    if magic == 0 and codec == "lz4":
        if peer.name.startswith("aiokafka"):
            pytest.skip("aiokafka never reads or writes magic-0 LZ4")
        # kafka-python's old-Kafka LZ4 framing needs the xxhash package, not installed here
        # (peer-built/kafka-python holds magic-0 LZ4 it wrote, read in test_fixtures_real)
        pytest.importorskip("xxhash")


@pytest.mark.parametrize(("magic", "codec"), LEGACY)
def test_legacy_peer_built_decodes_here(peer: Peer, magic: int, codec: str) -> None:
    _legacy_supported(peer, magic, codec, "build")
    records = mixed_records(25, headers=False)
    data = peer.build_legacy(records, magic, codec)
    entries = list(iter_batches(data))
    assert all(isinstance(e, LegacyEntry) and e.is_valid for e in entries)
    assert {e.magic for e in entries} == {magic}
    assert {e.compression for e in entries} == {codec}
    assert len(entries) == (len(records) if codec == "none" else 1)
    ours = [_our_record(r) for e in entries for r in e]
    assert ours == [_input_record(i, r, magic) for i, r in enumerate(records)]
    theirs = [_peer_record(r) for _b, rs in peer.read(data) for r in rs]
    assert ours == theirs
    assert entries[0].base_offset == 0
    if codec == "none":
        assert entries[-1].last_offset == len(records) - 1
    else:
        # clients write a wrapper at offset 0 (inner offsets then read as absolute); only the
        # broker moves it to the last offset
        assert entries[0].offset == 0
    assert sum(e.record_count for e in entries) == len(records)
    if magic == 1:
        assert [e.timestamp_type for e in entries] == ["CreateTime"] * len(entries)


@pytest.mark.parametrize(("magic", "codec"), LEGACY)
def test_legacy_built_here_decodes_at_peer(peer: Peer, magic: int, codec: str) -> None:
    _legacy_supported(peer, magic, codec, "read")
    records = mixed_records(25, headers=False)
    data = encode_batch(records, magic=magic, compression=codec, base_offset=500)
    batches = peer.read(data)
    theirs = [_peer_record(r) for _b, rs in batches for r in rs]
    assert theirs == [_input_record(500 + i, r, magic) for i, r in enumerate(records)]


@pytest.mark.parametrize("magic", [0, 1])
def test_legacy_uncompressed_bytes_identical(peer: Peer, magic: int) -> None:
    records = mixed_records(25, headers=False)
    assert encode_batch(records, magic=magic) == peer.build_legacy(records, magic, "none")


def test_mixed_segment_read_at_peer(peer: Peer) -> None:
    """v0 -> v1 -> v2 in one buffer, contiguous offsets, as an upgraded broker's log holds."""
    recs = mixed_records(6, headers=False)
    data = (
        encode_batch(recs[:2], magic=0, compression="gzip")
        + encode_batch(recs[2:4], magic=1, compression="snappy", base_offset=2)
        + encode_batch(recs[4:], compression="zstd", base_offset=4)
    )
    entries = list(iter_batches(data))
    if peer.name == "aiokafka-c":
        # aiokafka's compiled MemoryRecords cannot read a v1 wrapper after a v0 message in one
        # buffer (a known aiokafka bug, see peer-built/README.md): feed it entry by entry
        chunks = [data[e.position : e.position + e.size] for e in entries]
    else:
        chunks = [data]
    theirs = [_peer_record(r) for c in chunks for _b, rs in peer.read(c) for r in rs]
    ours = [_our_record(r) for e in entries for r in e]
    assert ours == theirs
    assert [o[0] for o in ours] == list(range(6))
