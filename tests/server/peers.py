"""Records the client tests produce and the checks they make on what comes back."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from pathlib import Path

from kafkalog import Log, iter_batches

N_RECORDS = 10_000
PARTITIONS = 3
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]

Rec = tuple[bytes | None, bytes, list[tuple[str, bytes]]]


def make_records(n: int = N_RECORDS, seed: int = 1) -> list[Rec]:
    """Keys (some null), binary values of varied sizes (some empty), 0-3 headers each."""
    rng = random.Random(seed)
    out: list[Rec] = []
    for i in range(n):
        key = None if i % 17 == 0 else f"key-{i}".encode()
        value = bytes(rng.getrandbits(8) for _ in range(rng.choice((0, 1, 10, 100, 300))))
        headers = [(f"h{j}", f"{i}:{j}".encode()) for j in range(i % 4)]
        out.append((key, value, headers))
    return out


def by_partition(records: Sequence[Rec], partitions: int = PARTITIONS) -> dict[int, list[Rec]]:
    """What each partition must hold when record i is sent to partition i % partitions."""
    out: dict[int, list[Rec]] = {p: [] for p in range(partitions)}
    for i, r in enumerate(records):
        out[i % partitions].append(r)
    return out


def normalize(key: bytes | None, value: bytes | None,
              headers: Iterable[tuple[str, bytes | None]] | None) -> Rec:
    return (key, value or b"", [(k, bytes(v) if v is not None else b"")
                                for k, v in (headers or ())])


def assert_same(expected: dict[int, list[Rec]], got: dict[int, list[Rec]]) -> None:
    for p, want in expected.items():
        have = got.get(p, [])
        assert len(have) == len(want), f"partition {p}: {len(have)} records, expected {len(want)}"
        for i, (a, b) in enumerate(zip(have, want)):
            assert a == b, f"partition {p} record {i}: {a!r} != {b!r}"


def producer_batches(log_dir: Path, topic: str, partition: int) -> list:
    """Every batch of a partition (read back through the engine, read-only)."""
    with Log.open(log_dir / f"{topic}-{partition}", read_only=True) as log:
        return list(iter_batches(log.read(log.log_start_offset, 1 << 30)))


def assert_idempotent_batches(log_dir: Path, topic: str, partitions: int, count: int) -> None:
    """One producer id, epoch >= 0, per-partition sequences contiguous from 0, no duplicate."""
    pids = set()
    total = 0
    for p in range(partitions):
        expect_seq = 0
        expect_offset = 0
        for b in producer_batches(log_dir, topic, p):
            assert b.producer_id >= 0 and b.producer_epoch >= 0
            pids.add(b.producer_id)
            assert b.base_sequence == expect_seq, (p, b.base_offset, b.base_sequence)
            assert b.base_offset == expect_offset
            expect_seq += b.record_count
            expect_offset = b.last_offset + 1
            total += b.record_count
    assert len(pids) == 1
    assert total == count


def stored_count(server: object, topic: str, partitions: int = PARTITIONS) -> int:
    """Records in the topic's logs (offsets assigned by the server)."""
    broker = server.broker  # type: ignore[attr-defined]
    return sum(broker.log(topic, p).log_end_offset for p in range(partitions))
