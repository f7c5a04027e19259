"""Benchmark reading a KRaft metadata log into Kafka's metadata image
(``kafkalog.cluster.image.load_metadata``, what ``kafkalog metadata-shell`` does before its
first prompt) against peers reading the same file.

Run as a script::

    python benchmarks/bench_metadata.py [--quick]

Builds one ``__cluster_metadata-0`` segment shaped like a controller's: 2,000 topics of 10
partitions (a ``TopicRecord`` and its ``PartitionRecord``s per batch, directories set), 20,000
``PartitionChangeRecord``s (ISR changes, 10 a batch) and 200,000 batches of one
``NoOpRecord`` (a controller writes one per idle interval, 500 ms: 28 hours of them);
242,000 records, about 17 MB (a tenth with ``--quick``). Then, in this process on a warm page
cache:

* ``metadata_image.load.vs_aiokafka_read``: the whole image (every record replayed by
  Kafka's rules, CRCs checked) against aiokafka's compiled ``MemoryRecords`` reading every
  record's value out of the same bytes (no metadata decoding at all: the least any reader
  does);
* ``metadata_image.load.vs_kafka-python_read``: the same, kafka-python's (pure Python) reader;
* ``metadata_image.load.vs_cluster_model_replay``: against kafkalog's replay into the
  ``cluster-state`` model (``kraft.replay_metadata_dir``; it skips lone NoOps the same way,
  and keeps a ZooKeeper-shaped model instead of the image).

The image is checked (topic and partition counts, the last offset); no assertions on timings.
"""

from __future__ import annotations

import base64
import shutil
import tempfile
import warnings
from pathlib import Path

from timing import best_of, script_main

TOPICS, PARTITIONS, CHANGES, NOOPS = 2000, 10, 20000, 200000


def _uuid(i: int) -> str:
    return base64.urlsafe_b64encode((i + 1).to_bytes(16, "big")).decode().rstrip("=")


def _build(path: Path, scale: int) -> int:
    from kafkalog.decoders import cluster_metadata as cm
    from kafkalog.records.builder import encode_batch

    topics, changes, noops = TOPICS // scale, CHANGES // scale, NOOPS // scale
    dirs = ["XHhkr4tkSsD900pOQ8pPfg", "JsnDDNVyTL289kYk6sPzig", "anCdBWcFTlu8gE1wP6bh3g"]
    out, off, ts = [], 0, 1_700_000_000_000

    def batch(records: list[tuple[str, dict]]) -> None:
        nonlocal off
        out.append(encode_batch([(None, cm.encode_record(n, d), ts) for n, d in records],
                                base_offset=off, partition_leader_epoch=1))
        off += len(records)

    batch([("FeatureLevelRecord", {"name": "metadata.version", "featureLevel": 21})])
    for t in range(topics):
        batch([("TopicRecord", {"name": f"topic-{t}", "topicId": _uuid(t)})] + [
            ("PartitionRecord", {"partitionId": p, "topicId": _uuid(t), "replicas": [1, 2, 3],
                                 "isr": [1, 2, 3], "leader": 1 + p % 3, "leaderEpoch": 0,
                                 "partitionEpoch": 0, "directories": dirs})
            for p in range(PARTITIONS)])
    for c in range(0, changes, 10):
        batch([("PartitionChangeRecord", {"partitionId": (c + i) % PARTITIONS,
                                          "topicId": _uuid((c + i) % topics),
                                          "isr": [1, 2] if (c + i) % 2 else [1, 2, 3]})
               for i in range(10)])
    for _ in range(noops):
        batch([("NoOpRecord", {})])
    path.write_bytes(b"".join(out))
    return off



def _aiokafka_read(data: bytes) -> int:
    from aiokafka.record.memory_records import MemoryRecords

    n, mr = 0, MemoryRecords(data)
    while (b := mr.next_batch()) is not None:
        for r in b:
            n += r.value is not None
    return n


def _kafka_python_read(data: bytes) -> int:
    from kafka.record import MemoryRecords

    n, mr = 0, MemoryRecords(data)
    while mr.has_next():
        for r in mr.next_batch():
            n += r.value is not None
    return n


def run(quick: bool = False) -> list[dict]:
    """Measure and return the rows (see the module docstring)."""
    from importlib import metadata

    from kafkalog.cluster import kraft
    from kafkalog.cluster.image import load_metadata
    from kafkalog.cluster.model import ClusterModel

    scale = 10 if quick else 1
    repeat = 3
    tmp = Path(tempfile.mkdtemp(prefix="kafkalog-bench-metadata-"))
    try:
        part = tmp / "__cluster_metadata-0"
        part.mkdir()
        seg = part / "00000000000000000000.log"
        n = _build(seg, scale)
        size = seg.stat().st_size
        data = seg.read_bytes()

        def ours() -> object:
            loaded = load_metadata(seg)
            assert not loaded.faults and loaded.records == n
            assert len(loaded.image.topics_by_id) == TOPICS // scale
            assert loaded.image.provenance.last_contained_offset == n - 1
            return loaded

        ours()                                       # warm the decoders' caches
        t_ours, _ = best_of(ours, repeat)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            _aiokafka_read(data[:4096])
            _kafka_python_read(data[:4096])
            t_aio, n_aio = best_of(lambda: _aiokafka_read(data), repeat)
            t_kp, n_kp = best_of(lambda: _kafka_python_read(data), repeat)
        assert n_aio == n_kp == n

        def model() -> object:
            m = ClusterModel(source="kraft")
            kraft.replay_metadata_dir(part, m)
            assert len(m.topics) == TOPICS // scale
            return m

        t_model, _ = best_of(model, repeat)
        workload = (f"{n:,} records ({size / 1e6:.1f} MB): {TOPICS // scale:,} topics x "
                    f"{PARTITIONS} partitions, {CHANGES // scale:,} PartitionChangeRecords, "
                    f"{NOOPS // scale:,} lone NoOpRecord batches; best of {repeat}")
        rate = n / t_ours

        def row(name: str, t_base: float, note: str) -> dict:
            return {"name": name, "value": rate, "unit": "records/s", "baseline": n / t_base,
                    "ratio": t_base / t_ours, "note": f"{workload}; {note}"}

        return [
            row("metadata_image.load.vs_aiokafka_read", t_aio,
                f"baseline: aiokafka {metadata.version('aiokafka')} compiled MemoryRecords "
                "reading every record's value (no metadata decoding)"),
            row("metadata_image.load.vs_kafka-python_read", t_kp,
                f"baseline: kafka-python {metadata.version('kafka-python')} MemoryRecords "
                "reading every record's value (no metadata decoding)"),
            row("metadata_image.load.vs_cluster_model_replay", t_model,
                "baseline: kafkalog's cluster-state replay (kraft.replay_metadata_dir, lone "
                "NoOps skipped as here)"),
        ]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    script_main(run, __doc__)
