"""Benchmark consumer groups: assignors, offset commits, ``__consumer_offsets`` reload.

Run as a script::

    python benchmarks/bench_groups.py [--quick] [--members 1000] [--partitions 10000]
                                      [--reload-mib 1024]

(``KAFKALOG_BENCH_GROUPS_MIB`` also sets the reload size). Measured in this process:

* **assignment**: every strategy of :func:`kafkalog.groups.assign` on ``members`` consumers all
  subscribed to 10 topics holding ``partitions`` partitions in all (time, and balance = the
  largest minus the smallest member's partition count), beside kafka-python's assignors on the
  same input (``range``, ``roundrobin``, ``sticky``: its Python port of Kafka's older sticky
  algorithm). The sticky assignors are also timed on a rebalance: one member left, the others
  owning the previous assignment.
* **commit**: ``GroupMetadataManager.commit_offsets`` of ``partitions`` offsets (one batch),
  against appending the same records, already encoded, with ``Log.append_batches``.
* **consumer groups** (KIP-848): a Stable member's ConsumerGroupHeartbeat against a classic
  Heartbeat on the same coordinator, and a group of members formed from nothing to Stable by
  heartbeats (records written) against one run of the uniform assignor.
* **reload**: opening a ``GroupMetadataManager`` over a ``__consumer_offsets`` partition of
  ``reload_mib`` MiB (batches of 100 offset commits of 20 groups), against a plain read of the
  same file and against kafka-python iterating its records.

Each figure is the best of three runs, or of one when a run takes over a second. No
assertions; ``run()`` returns rows for benchmarks/RESULTS.md (ratio > 1: kafkalog faster).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import struct
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

T0 = 1_700_000_000_000
TOPICS = 10


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    with warnings.catch_warnings():          # kafka-python loads schemas with a deprecated API
        warnings.simplefilter("ignore", DeprecationWarning)
        yield


def _timed(fn: Callable[[], Any], repeat: int = 3) -> tuple[float, Any]:
    """Best of ``repeat`` runs (one when a run takes over a second): a single run of a
    20 ms step measured the first call's warm-up (imports, caches) as much as the step."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        secs = time.perf_counter() - t
        best = min(best, secs)
        if secs > 1.0:
            break
    return best, out


def _spread(assignment: dict[str, list]) -> int:
    sizes = [len(v) for v in assignment.values()]
    return max(sizes) - min(sizes)


# -- assignment -------------------------------------------------------------------------------

def _group(members: int, partitions: int) -> tuple[dict, dict]:
    per = partitions // TOPICS
    counts = {f"topic-{t}": per for t in range(TOPICS)}
    subs = {f"consumer-{i}-{i * 7919 % 10007:05d}": list(counts) for i in range(members)}
    return subs, counts


def _kafka_python(strategy: str, subs: dict, counts: dict, owned: dict | None) -> dict:
    with _quiet():
        from kafka.coordinator.assignors.range import RangePartitionAssignor
        from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
        from kafka.coordinator.assignors.sticky.sticky_assignor import (
            StickyAssignmentExecutor,
            StickyAssignorMemberMetadataV1,
        )
        from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription
        from kafka.structs import TopicPartition

    class Cluster:
        def topics(self) -> set:
            return set(counts)

        def partitions_for_topic(self, t: str) -> set:
            return set(range(counts[t]))

    class Member:
        def __init__(self, mid: str, topics: list) -> None:
            self.member_id = mid
            self.group_instance_id = None
            self.metadata = ConsumerProtocolSubscription(version=0, topics=topics, user_data=b"")

    with _quiet():
        if strategy == "sticky":
            meta = {m: StickyAssignorMemberMetadataV1(
                partitions=[TopicPartition(t, p) for t, p in (owned or {}).get(m, [])],
                generation=1, subscription=ts) for m, ts in subs.items()}
            ex = StickyAssignmentExecutor(Cluster(), meta)
            ex.perform_initial_assignment()
            ex.balance()
            return {m: [(t, p) for t, ps in ex.get_final_assignment(m) for p in ps]
                    for m in subs}
        cls = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor}
        out = cls[strategy].assign(Cluster(), [Member(m, ts) for m, ts in subs.items()])
        return {m: [(t, p) for t, ps in a.assigned_partitions for p in ps]
                for m, a in out.items()}


def bench_assignment(members: int, partitions: int, peers: bool = True) -> list[dict]:
    from kafkalog.groups import assign

    subs, counts = _group(members, partitions)
    rows = []
    work = f"{members} members x {partitions} partitions ({TOPICS} topics), same subscription"
    for strategy in ("range", "roundrobin", "sticky", "cooperative-sticky", "uniform",
                     "server-range"):
        secs, got = _timed(lambda s=strategy: assign(s, subs, counts))
        base = base_spread = None
        if peers and strategy in ("range", "roundrobin", "sticky"):
            base, theirs = _timed(lambda s=strategy: _kafka_python(s, subs, counts, None))
            base_spread = _spread(theirs)
        note = f"{work}; balance (max-min partitions per member): {_spread(got)}"
        if base is not None:
            note += f"; kafka-python {strategy}: balance {base_spread}"
        rows.append({"name": f"assign.{strategy}" + (".vs_kafka-python" if base else ""),
                     "value": secs, "unit": "s", "baseline": base,
                     "ratio": None if base is None else base / secs, "note": note})
    # a rebalance: the first member left, the others own the previous assignment
    prev = assign("range", subs, counts)
    gone = next(iter(subs))
    subs2 = {m: t for m, t in subs.items() if m != gone}
    owned = {m: prev[m] for m in subs2}
    for strategy in ("sticky", "cooperative-sticky"):
        secs, got = _timed(lambda s=strategy: assign(s, subs2, counts, owned=owned))
        kept = sum(len(set(got[m]) & set(owned[m])) for m in subs2)
        base = None
        note = (f"{work}; rebalance after one member left, owned = previous range assignment;"
                f" balance {_spread(got)}, partitions kept {kept}")
        if peers and strategy == "sticky":
            base, theirs = _timed(lambda: _kafka_python("sticky", subs2, counts, owned))
            kept_theirs = sum(len(set(theirs[m]) & set(owned[m])) for m in subs2)
            note += f"; kafka-python sticky: balance {_spread(theirs)}, kept {kept_theirs}"
        rows.append({"name": f"assign.{strategy}.rebalance" + (".vs_kafka-python" if base
                                                               else ""),
                     "value": secs, "unit": "s", "baseline": base,
                     "ratio": None if base is None else base / secs, "note": note})
    return rows


# -- commit -------------------------------------------------------------------------------------

def bench_commit(partitions: int) -> list[dict]:
    from kafkalog import LogDir, ManualClock, Record
    from kafkalog.groups import GroupMetadataManager
    from kafkalog.groups.records import OffsetAndMetadata, offset_commit_record
    from kafkalog.records.builder import encode_batch

    per = partitions // TOPICS
    offsets = {(f"topic-{t}", p): 1000 + p for t in range(TOPICS) for p in range(per)}
    d = tempfile.mkdtemp(prefix="bench-groups-")
    try:
        clock = ManualClock(T0)
        with LogDir.open(d, {"offsets.topic.num.partitions": "1"}, clock=clock) as logs:
            m = GroupMetadataManager(logs)
            m.commit_offsets("warm-up", {("t", 0): 1})
            ours, _ = _timed(lambda: m.commit_offsets("app", offsets))
            log = logs.log("__consumer_offsets", 0)
            records = [Record(*offset_commit_record("app", t, p, OffsetAndMetadata(
                o, commit_timestamp=T0)), T0) for (t, p), o in offsets.items()]

            def raw() -> None:
                log.append_batches(encode_batch(records, base_offset=log.log_end_offset,
                                                base_sequence=0, partition_leader_epoch=0))

            base, _ = _timed(raw)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return [{"name": "commit.offsets.vs_raw_append", "value": ours, "unit": "s",
             "baseline": base, "ratio": base / ours,
             "note": f"{len(offsets)} offsets of one group in one OffsetCommit batch; baseline: "
                     "the same records, encoded beforehand, appended with Log.append_batches"}]


# -- KIP-848 consumer groups ---------------------------------------------------------------------

def _coordinator(root: str) -> tuple[Any, Any, Any]:
    from kafkalog import LogDir, ManualClock
    from kafkalog.groups import GroupMetadataManager
    from kafkalog.groups.coordinator import GroupCoordinator

    clock = ManualClock(T0)
    logs = LogDir.open(root, {"offsets.topic.num.partitions": "1",
                              "group.initial.rebalance.delay.ms": "0"}, clock=clock)
    return logs, clock, GroupCoordinator(GroupMetadataManager(logs), clock=clock)


def bench_consumer_groups(members: int, partitions: int, calls: int = 20_000) -> list[dict]:
    """Steady heartbeats of a KIP-848 member vs a classic member, and a group of ``members``
    formed from nothing to Stable by ConsumerGroupHeartbeat vs the uniform assignor alone."""
    from kafkalog.groups import assign
    from kafkalog.groups import consumer_protocol as cp
    from kafkalog.groups.modern.coordinator import topic_id_for

    per = partitions // TOPICS
    counts = {f"topic-{t}": per for t in range(TOPICS)}
    topics = sorted(counts)
    rows = []
    d = tempfile.mkdtemp(prefix="bench-groups-")
    try:
        logs, clock, c = _coordinator(os.path.join(d, "hb"))
        c.update_metadata(counts)
        # classic: one Stable member, Heartbeat
        meta = cp.encode_subscription(cp.Subscription(topics))
        c.join_group("classic", "", "consumer", [("range", meta)], session_timeout_ms=45_000,
                     api_version=3)
        c.tick()
        (_, joined), = c.take_responses()
        mid = joined.member_id
        c.sync_group("classic", joined.generation_id, mid, {mid: b""})
        c.take_responses()
        assert c.heartbeat("classic", joined.generation_id, mid).error_code == 0

        def classic() -> None:
            for _ in range(calls):
                c.heartbeat("classic", 1, mid)

        # consumer protocol: one Stable member, the heartbeat a client sends between changes
        r = c.consumer_group_heartbeat("app", "m", 0, rebalance_timeout_ms=30_000,
                                       subscribed_topic_names=topics, topic_partitions=[])
        epoch = r.member_epoch

        def modern() -> None:
            for _ in range(calls):
                c.consumer_group_heartbeat("app", "m", epoch)

        assert c.consumer_group_heartbeat("app", "m", epoch).error_code == 0
        ours, _ = _timed(modern)
        base, _ = _timed(classic)
        logs.close()
        rows.append({
            "name": "consumer_group.heartbeat.vs_classic_heartbeat",
            "value": ours / calls * 1e6, "unit": "us/call", "baseline": base / calls * 1e6,
            "ratio": base / ours,
            "note": f"ConsumerGroupHeartbeat of a Stable member with nothing to change ({calls} "
                    "calls, nothing written) vs the classic Heartbeat of a Stable member, "
                    "both on the sans-IO GroupCoordinator"})

        # a group formed from nothing: each join bumps the epoch and recomputes the target
        # (Kafka 4.0 does the same per heartbeat); members then revoke/receive until Stable
        def form() -> int:
            root = tempfile.mkdtemp(dir=d)
            logs, _, c = _coordinator(root)
            c.update_metadata(counts)
            owned: dict[str, list] = {}
            epochs: dict[str, int] = {}
            beats = 0
            for i in range(members):
                r = c.consumer_group_heartbeat("app", f"m{i}", 0, rebalance_timeout_ms=30_000,
                                               subscribed_topic_names=topics,
                                               topic_partitions=[])
                beats += 1
                epochs[f"m{i}"], owned[f"m{i}"] = r.member_epoch, r.assignment or []
            while c.group_state("app") != "Stable":
                for m in list(epochs):
                    r = c.consumer_group_heartbeat("app", m, epochs[m],
                                                   topic_partitions=owned[m])
                    beats += 1
                    epochs[m] = r.member_epoch
                    if r.assignment is not None:
                        owned[m] = r.assignment
            group = c.manager.consumer_group("app")
            assert sum(len(ps) for a in group.target_assignment.values()
                       for ps in a.values()) == per * TOPICS
            names = {m.topic_id: t for t, m in group.subscription_metadata.items()}
            final["owned"] = {mid: [(names[t], p) for t, ps in a.items() for p in sorted(ps)]
                              for mid, a in group.target_assignment.items()}
            logs.close()
            return beats

        final: dict[str, Any] = {}
        ours, beats = _timed(form, repeat=1)
        subs = {f"m{i}": topics for i in range(members)}
        ids = {t: topic_id_for(t) for t in topics}
        # what every join runs: the uniform assignor over the group, sticky to its target
        base, _ = _timed(lambda: assign("uniform", subs, counts, owned=final["owned"],
                                        topic_ids=ids))
        rows.append({
            "name": f"consumer_group.join_of_{members}.vs_assignor_run",
            "value": ours / members * 1e3, "unit": "ms/join", "baseline": base * 1e3,
            "ratio": base / (ours / members),
            "note": f"{members} KIP-848 members join one by one ({partitions} partitions, "
                    f"{TOPICS} topics) and heartbeat until the group is Stable ({beats} "
                    f"heartbeats in {ours:.2f} s, every record written to __consumer_offsets); "
                    "baseline: one run of the uniform assignor over the whole group sticky to "
                    "its target (each join runs one, on a growing group, as Kafka 4.0's "
                    "coordinator does)"})
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return rows


# -- reload -------------------------------------------------------------------------------------

def build_offsets_partition(root: str, mib: int) -> str:
    """A ``__consumer_offsets-0`` of about ``mib`` MiB: batches of 100 offset commits (20
    groups x 10 topics x 10 partitions, offsets growing), written with the columnar encoder."""
    import numpy as np
    import pyarrow as pa

    from kafkalog import LogDir
    from kafkalog.groups import GroupMetadataManager
    from kafkalog.groups.records import OffsetAndMetadata, offset_commit_record
    from kafkalog.records.columnar import encode_columns

    keys = [offset_commit_record(f"group-{g}", f"topic-{t}", p, OffsetAndMetadata(0))[0]
            for g in range(20) for t in range(10) for p in range(10)]
    with LogDir.open(root, {"offsets.topic.num.partitions": "1"}) as logs:
        GroupMetadataManager(logs)
        log = logs.log("__consumer_offsets", 0)
        chunk = 200_000
        key_col = pa.array((keys * (chunk // len(keys) + 1))[:chunk], pa.binary())
        round_ = 0
        while log.size < mib << 20:
            idx = np.arange(chunk, dtype=np.int64) + round_ * chunk
            vals = np.zeros((chunk, 24), np.uint8)
            vals[:, 1] = 3                                           # value version 3
            vals[:, 2:10] = (idx // len(keys)).astype(">i8").view(np.uint8).reshape(-1, 8)
            vals[:, 10:14] = np.frombuffer(struct.pack(">i", -1), np.uint8)   # leader epoch
            vals[:, 16:24] = (T0 + idx).astype(">i8").view(np.uint8).reshape(-1, 8)
            value_col = pa.FixedSizeBinaryArray.from_buffers(
                pa.binary(24), chunk, [None, pa.py_buffer(vals.tobytes())]).cast(pa.binary())
            table = pa.table({"key": key_col, "value": value_col,
                              "timestamp": pa.array(T0 + idx, pa.int64())})
            log.append_batches(encode_columns(table, base_offset=log.log_end_offset,
                                              records_per_batch=100, base_sequence=0,
                                              partition_leader_epoch=0))
            round_ += 1
        return str(log.segments[0].log_path) if len(log.segments) == 1 else str(root)


def bench_reload(mib: int) -> list[dict]:
    from kafkalog import LogDir
    from kafkalog.groups import GroupMetadataManager

    d = tempfile.mkdtemp(prefix="bench-groups-reload-")
    try:
        build_offsets_partition(d, mib)
        part = os.path.join(d, "__consumer_offsets-0")
        files = sorted(os.path.join(part, f) for f in os.listdir(part) if f.endswith(".log"))
        size = sum(os.path.getsize(f) for f in files)

        def plain_read() -> int:
            n = 0
            for f in files:
                with open(f, "rb") as fh:
                    n += len(fh.read())
            return n

        def kafka_python_iterate() -> int:
            with _quiet():
                from kafka.record.memory_records import MemoryRecords
            n = 0
            for f in files:
                with open(f, "rb") as fh:
                    mr = MemoryRecords(fh.read())
                while mr.has_next():
                    b = mr.next_batch()
                    if b is None:
                        break
                    for r in b:
                        n += r.offset >= 0
            return n

        def reload() -> int:
            with LogDir.open(d, read_only=True) as logs:
                return len(GroupMetadataManager(logs).list_groups())

        plain_read()                                   # page cache warm
        reload_secs, groups = _timed(reload)
        read_secs, _ = _timed(plain_read)
        kp_secs, records = _timed(kafka_python_iterate)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    work = (f"{size / (1 << 20):.0f} MiB __consumer_offsets partition, {records} offset commits "
            f"in batches of 100, {groups} groups; page cache warm")
    return [
        {"name": "reload.offsets_partition.vs_plain_read", "value": size / reload_secs / 1e6,
         "unit": "MB/s", "baseline": size / read_secs / 1e6, "ratio": read_secs / reload_secs,
         "note": work + "; baseline: reading the file's bytes (no decoding)"},
        {"name": "reload.offsets_partition.vs_kafka-python", "value": size / reload_secs / 1e6,
         "unit": "MB/s", "baseline": size / kp_secs / 1e6, "ratio": kp_secs / reload_secs,
         "note": work + "; baseline: kafka-python MemoryRecords iterating every record "
                        "(decodes no coordinator record)"},
    ]


def bench_reload_streams(groups: int, rounds: int, members: int = 8) -> list[dict]:
    """Reload of a ``__consumer_offsets`` partition written by streams groups rebalancing:
    each round of each group a group epoch, every member's target and current assignment
    and the target assignment epoch (Kafka 4.2's records 17, 20-22). Baseline: decoding the
    same records with the schema codec, nothing applied (the least any replay does)."""
    from kafkalog import LogDir
    from kafkalog.decoders.offsets import CODEC
    from kafkalog.groups import GroupMetadataManager
    from kafkalog.groups.streams import StreamsGroupMember, StreamsTopology, Subtopology, TasksTuple
    from kafkalog.groups.streams import records as sgr

    topology = StreamsTopology(1, {str(i): Subtopology(str(i), (f"in-{i}",)) for i in range(4)})
    d = tempfile.mkdtemp(prefix="bench-groups-streams-")
    try:
        with LogDir.open(d, {"offsets.topic.num.partitions": "1"}) as logs:
            m = GroupMetadataManager(logs)
            for g in range(groups):
                gid = f"app-{g}"
                m.write_records(gid, [sgr.metadata_record(gid, 1, 0, 1),
                                      sgr.topology_record(gid, topology)])
            for r in range(2, rounds + 2):
                for g in range(groups):
                    gid = f"app-{g}"
                    recs = [sgr.metadata_record(gid, r, 0, 1)]
                    for k in range(members):
                        tasks = TasksTuple({str(i): frozenset(range((k + r) % 4, 32, members))
                                            for i in range(4)})
                        mem = StreamsGroupMember(f"member-{k}", r, r - 1, process_id=f"p{k}",
                                                 assigned_tasks=tasks)
                        recs += [sgr.target_assignment_record(gid, mem.member_id, tasks),
                                 sgr.current_assignment_record(gid, mem)]
                    recs.append(sgr.target_assignment_epoch_record(gid, r))
                    m.write_records(gid, recs)
            records = logs.log("__consumer_offsets", 0).log_end_offset

        def reload() -> int:
            with LogDir.open(d, read_only=True) as logs:
                return len(GroupMetadataManager(logs).streams_groups())

        def decode_only() -> int:
            with LogDir.open(d, read_only=True) as logs:
                t = logs.log("__consumer_offsets", 0).read_table(columns=["key", "value"])
            n = 0
            for k, v in zip(t["key"].to_pylist(), t["value"].to_pylist()):
                n += CODEC.decode(k, v)["type"] > 0
            return n

        reload_secs, found = _timed(reload)
        decode_secs, _ = _timed(decode_only)
        assert found == groups
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return [{"name": "reload.streams_groups.vs_decode_only", "value": records / reload_secs,
             "unit": "records/s", "baseline": records / decode_secs,
             "ratio": decode_secs / reload_secs,
             "note": f"{records} streams group records ({groups} groups x {rounds} rebalances of "
                     f"{members} members, 4 subtopologies x 32 tasks) replayed by "
                     "GroupMetadataManager; baseline: the same records decoded by the schema "
                     "codec, nothing applied"}]


def run(quick: bool = False, *, members: int | None = None, partitions: int | None = None,
        reload_mib: int | None = None) -> list[dict]:
    """Rows for benchmarks/run_all.py."""
    members = members or (100 if quick else 1000)
    partitions = partitions or (1000 if quick else 10_000)
    if reload_mib is None:
        reload_mib = int(os.environ.get("KAFKALOG_BENCH_GROUPS_MIB", "32" if quick else "1024"))
    return (bench_assignment(members, partitions) + bench_commit(10_000)
            + bench_consumer_groups(50 if quick else 200, 1000 if quick else 2000)
            + bench_reload(reload_mib)
            + bench_reload_streams(10 if quick else 50, 10 if quick else 100))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--members", type=int)
    ap.add_argument("--partitions", type=int)
    ap.add_argument("--reload-mib", type=int)
    args = ap.parse_args()
    for row in run(args.quick, members=args.members, partitions=args.partitions,
                   reload_mib=args.reload_mib):
        ratio = "" if row["ratio"] is None else f"  ratio {row['ratio']:.3g}"
        base = "" if row["baseline"] is None else f"  baseline {row['baseline']:.4g}"
        print(f"{row['name']:48s} {row['value']:10.4g} {row['unit']}{base}{ratio}")
        print(f"    {row['note']}")


if __name__ == "__main__":
    main()
