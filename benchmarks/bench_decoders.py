"""Benchmark the internal-topic decoders and the tiered-storage replay.

Run as a script::

    python benchmarks/bench_decoders.py [--quick]

Rows (the ``benchmarks/run_all.py`` convention: ratio > 1 means the measured path is faster):

* ``decoders.generated_reader.<message>``: ``message.read_prefix`` (a reader generated per
  struct version on first use) vs the schema interpreter (``_read_struct``, the reference and
  the error path) decoding the same bytes, messages/s, for a ``__remote_log_metadata`` segment
  record, a ``__consumer_offsets`` commit value, a KRaft ``PartitionRecord`` and a group
  metadata value with 10 members.
* ``decoders.dump_offsets``: ``kafkalog dump-segments --offsets-decoder`` over a
  ``__consumer_offsets`` segment of 100,000 offset commits (500 per batch), output to a null
  sink, vs ``--print-data-log`` (the default string decoder) over the same file: what decoding
  and printing Kafka's JSON costs beyond the plain record lines, records/s.
* ``tiered.replay``: ``kafkalog.tiered.read_log_dirs`` over a ``__remote_log_metadata``
  partition of add + finish events (each 4 events: a segment copied, then deleted) vs iterating
  the same partition's records with ``Log.records`` (the read alone), events/s.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from collections.abc import Callable


def _best(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def _messages() -> dict[str, tuple[object, int, list[bytes]]]:
    """name -> (compiled schema, version, encoded messages without frame or version prefix)."""
    from kafkalog.decoders import _schemas, message

    rng = __import__("random").Random(3)

    def uuid() -> str:
        return message.uuid_to_str(rng.randbytes(16))

    rlmm = message.compile_schema(_schemas.REMOTE_LOG_METADATA[0])
    commit = message.compile_schema(_schemas.GROUP_VALUES[1])
    partition = message.compile_schema(_schemas.METADATA[3])
    group = message.compile_schema(_schemas.GROUP_VALUES[2])
    out: dict[str, tuple[object, int, list[bytes]]] = {}
    out["remote_log_segment_metadata"] = (rlmm, 0, [message.write(rlmm, {
        "remoteLogSegmentId": {"topicIdPartition": {"name": f"topic-{i % 50}", "id": uuid(),
                                                    "partition": i % 12}, "id": uuid()},
        "startOffset": i * 1000, "endOffset": i * 1000 + 999, "brokerId": 1,
        "maxTimestampMs": 1700000000000 + i, "eventTimestampMs": 1700000000000 + i,
        "segmentLeaderEpochs": [{"leaderEpoch": 0, "offset": i * 1000}],
        "segmentSizeInBytes": 1 << 30, "customMetadata": None, "remoteLogSegmentState": 0},
        0) for i in range(2000)])
    out["offset_commit_value"] = (commit, 3, [message.write(commit, {
        "offset": i, "leaderEpoch": 5, "metadata": "", "commitTimestamp": 1700000000000 + i},
        3) for i in range(2000)])
    out["partition_record"] = (partition, 0, [message.write(partition, {
        "partitionId": i, "topicId": uuid(), "replicas": [1, 2, 3], "isr": [1, 2, 3],
        "leader": 1, "leaderEpoch": 7, "partitionEpoch": 9}, 0) for i in range(2000)])
    members = [{"memberId": f"consumer-{i}-{uuid()}", "groupInstanceId": None,
                "clientId": f"consumer-{i}", "clientHost": "/10.0.0.1",
                "rebalanceTimeout": 300000, "sessionTimeout": 45000,
                "subscription": bytes(40), "assignment": bytes(60)} for i in range(10)]
    out["group_metadata_value_10_members"] = (group, 3, [message.write(group, {
        "protocolType": "consumer", "generation": i, "protocol": "range", "leader": "c-0",
        "currentStateTimestamp": 1700000000000, "members": members}, 3) for i in range(500)])
    return out


def bench_readers(repeat: int) -> list[dict]:
    from kafkalog.decoders import message

    rows = []
    for name, (schema, version, raws) in _messages().items():
        def generated(raws: list[bytes] = raws, s: object = schema, v: int = version) -> None:
            for raw in raws:
                message.read_prefix(s, raw, v)  # type: ignore[arg-type]

        def interpreted(raws: list[bytes] = raws, s: object = schema, v: int = version) -> None:
            for raw in raws:
                message._read_struct(message._Reader(raw), s, v, "")  # type: ignore[arg-type]

        generated()  # (the reader is generated on first use: not timed)
        t_gen, t_int = _best(generated, repeat), _best(interpreted, repeat)
        n = len(raws)
        rows.append({
            "name": f"decoders.generated_reader.{name}", "value": n / t_gen,
            "unit": "messages/s", "baseline": n / t_int, "ratio": t_int / t_gen,
            "note": f"{n:,} messages of {sum(map(len, raws)) // n} B, v{version}; "
                    "baseline: the schema interpreter on the same bytes (the reference)"})
    return rows


def bench_dump_offsets(batches: int, repeat: int) -> list[dict]:
    import contextlib
    import io

    from kafkalog.cli import main
    from kafkalog.decoders import offsets
    from kafkalog.records.builder import encode_batch
    from kafkalog.records.record import Record

    class _Null(io.TextIOBase):
        def write(self, s: str) -> int:
            return len(s)

    root = tempfile.mkdtemp(prefix="kafkalog-bench-dump-offsets-")
    try:
        path = os.path.join(root, "00000000000000000000.log")
        t0 = 1700000000000
        with open(path, "wb") as f:
            for b in range(batches):
                recs = [offsets.encode_record(
                    1, {"group": f"group-{i % 7}", "topic": "orders", "partition": i % 12},
                    {"offset": b * 500 + i, "leaderEpoch": 3, "metadata": "",
                     "commitTimestamp": t0 + i}, version=3) for i in range(500)]
                f.write(encode_batch([Record(k, v, t0) for k, v in recs], base_offset=b * 500))

        def dump(*flags: str) -> Callable[[], None]:
            def go() -> None:
                with contextlib.redirect_stdout(_Null()):
                    main(["dump-segments", *flags, "--files", path])
            return go

        t_dec = _best(dump("--offsets-decoder"), repeat)
        t_plain = _best(dump("--print-data-log"), repeat)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    n = batches * 500
    return [{"name": "decoders.dump_offsets", "value": n / t_dec, "unit": "records/s",
             "baseline": n / t_plain, "ratio": t_plain / t_dec,
             "note": f"{n:,} offset commits (v3 values), dump-segments --offsets-decoder to a null "
                     "sink; baseline: --print-data-log over the same file (plain record lines)"}]


def bench_replay(segments: int, repeat: int) -> list[dict]:
    from kafkalog import Log, Record
    from kafkalog.decoders import message
    from kafkalog.decoders import remote_log_metadata as rlmm
    from kafkalog.tiered import metadata_partition, read_log_dirs

    rng = __import__("random").Random(4)
    topic_id = message.uuid_to_str(rng.randbytes(16))
    tip = {"name": "orders", "id": topic_id, "partition": 3}
    root = tempfile.mkdtemp(prefix="kafkalog-bench-tiered-")
    try:
        d = os.path.join(root, f"__remote_log_metadata-{metadata_partition(topic_id, 3)}")
        values = []
        for i in range(segments):
            seg = {"topicIdPartition": tip, "id": message.uuid_to_str(rng.randbytes(16))}
            values.append(rlmm.encode_record(0, {
                "remoteLogSegmentId": seg, "startOffset": i * 1000, "endOffset": i * 1000 + 999,
                "brokerId": 1, "maxTimestampMs": i, "eventTimestampMs": i,
                "segmentLeaderEpochs": [{"leaderEpoch": i // 1000, "offset": i * 1000}],
                "segmentSizeInBytes": 1 << 30, "remoteLogSegmentState": 0}))
            for state in (1, 2, 3):
                values.append(rlmm.encode_record(1, {"remoteLogSegmentId": seg, "brokerId": 1,
                                                     "eventTimestampMs": i,
                                                     "remoteLogSegmentState": state}))
        with Log.open(d) as log:
            for s in range(0, len(values), 500):
                log.append([Record(None, v, 0) for v in values[s:s + 500]])

        def replay() -> None:
            store = read_log_dirs([root])
            assert store.events == len(values) and not store.findings

        def read_only() -> None:
            with Log.open(d, read_only=True) as log:
                for _ in log.records():
                    pass

        t_replay, t_read = _best(replay, repeat), _best(read_only, repeat)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    n = len(values)
    return [{"name": "tiered.replay", "value": n / t_replay, "unit": "events/s",
             "baseline": n / t_read, "ratio": t_read / t_replay,
             "note": f"{n:,} __remote_log_metadata events ({segments:,} segments added, "
                     "finished, delete started and finished) replayed by read_log_dirs; "
                     "baseline: Log.records over the same partition (the read alone)"}]


def run(quick: bool = False) -> list[dict]:
    """Rows for benchmarks/run_all.py."""
    repeat = 3 if quick else 5
    return (bench_readers(repeat) + bench_dump_offsets(40 if quick else 200, 1 if quick else 3)
            + bench_replay(5_000 if quick else 50_000, 1 if quick else 3))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    for row in run(args.quick):
        print(f"{row['name']}: {row['value']:,.0f} {row['unit']} (baseline {row['baseline']:,.0f},"
              f" ratio {row['ratio']:.2f}x)")


if __name__ == "__main__":
    main()
