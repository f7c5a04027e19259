"""``kafkalog tiered``: the remote segments of a cluster, from the ``__remote_log_metadata``
partitions of ``log.dirs`` trees, offline (Kafka has no tool for this; brokers keep it in
memory).

=====================================================  ==========================================
``kafkalog tiered LOGDIR [LOGDIR ...]``                one line per topic partition: TOPIC
                                                       PARTITION TOPIC-ID SEGMENTS COPIED
                                                       REMOTE-START REMOTE-END REMOTE-BYTES
                                                       DELETE-STATE (copied: segments in
                                                       COPY_SEGMENT_FINISHED, their offsets and
                                                       bytes); what Kafka would drop (stderr)
``--topic T [--partition P]`` or ``--segments``        one line per remote segment: TOPIC
                                                       PARTITION SEGMENT-ID START-OFFSET
                                                       END-OFFSET SIZE STATE LEADER-EPOCHS
                                                       BROKER MAX-TIMESTAMP, and the partitions
                                                       being deleted
``--topic T --partition P --offset O``                 the copied segment holding offset O, per
                                                       leader epoch (``remoteLogSegmentMetadata``)
``--objects DIR [DIR ...]``                            a copy of the bucket (Aiven's plugin):
                                                       ``Missing object:`` (a copied segment
                                                       without its objects), ``Orphan object:``
                                                       (objects of a deleted, unfinished or
                                                       unknown segment), ``Mismatch object:``
                                                       (other offsets than the metadata's)
``--num-partitions N``                                 ``remote.log.metadata.topic.num.partitions``
                                                       (default 50; 0 skips the placement check)
``--json``                                             JSON instead of text
=====================================================  ==========================================

Gaps: where the tree also holds a partition's local directory (same topic id), offsets at or
above its log start offset that neither a copied remote segment nor the local log holds are
printed as ``Gap: <topic>-<p> offsets A..B ...`` (:mod:`kafkalog.tiered.coverage`). A copied
segment outside the local log's leader-epoch lineage (a divergent leader's upload after an
unclean election, :mod:`kafkalog.epoch_lineage`) holds nothing a broker reads: it is printed as
``Unreachable segment: ...`` with the reason, and its offsets count as held nowhere.

Exit status: 0 success; 1 no ``__remote_log_metadata`` partition found, a gap above the first
copied offset, a missing or mismatched object (``--objects``; orphans do not change it), or
``--offset`` held by no copied segment; 2 usage. Findings (what Kafka's
manager would drop or fail on) go to stderr and do not change the status: the state printed is
the one Kafka would build.

Example
-------
>>> import sys, tempfile
>>> main([tempfile.mkdtemp()], err=sys.stdout)
kafkalog tiered: no __remote_log_metadata-<n> directory under the given log dirs
1
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from collections.abc import Sequence
from typing import IO, Any

from ..errors import KafkaLogError
from ..usage import ArgumentParser, UsageError
from .coverage import Coverage, LocalPartition, tree_coverage
from .metadata_cache import COPY_SEGMENT_FINISHED, RemoteLogSegmentMetadata
from .metadata_store import (
    RemoteLogMetadataStore,
    TopicIdPartition,
    metadata_partition_dirs,
    read_log_dirs,
)
from .partitioner import DEFAULT_METADATA_TOPIC_PARTITIONS

__all__ = ["main", "build_parser"]

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2
SUMMARY_COLUMNS = ("TOPIC", "PARTITION", "TOPIC-ID", "SEGMENTS", "COPIED", "REMOTE-START",
                   "REMOTE-END", "REMOTE-BYTES", "LOCAL-START", "GAPS", "DELETE-STATE")
COLUMNS = ("TOPIC", "PARTITION", "SEGMENT-ID", "START-OFFSET", "END-OFFSET", "SIZE", "STATE",
           "LEADER-EPOCHS", "BROKER", "MAX-TIMESTAMP")




def build_parser() -> argparse.ArgumentParser:
    """The ``kafkalog tiered`` argument parser."""
    p = ArgumentParser(prog="kafkalog tiered",
                description="Remote (tiered) segments from the __remote_log_metadata partitions "
                            "of log.dirs trees, offline.")
    p.add_argument("log_dirs", nargs="+", metavar="LOGDIR",
                   help="broker log directories (log.dirs entries) or __remote_log_metadata-<n> "
                        "directories")
    p.add_argument("--topic", help="only this topic")
    p.add_argument("--partition", type=int, help="only this partition (with --topic)")
    p.add_argument("--segments", action="store_true",
                   help="one line per remote segment (the default with --topic)")
    p.add_argument("--offset", type=int,
                   help="the copied segment holding this offset (with --topic and --partition)")
    p.add_argument("--num-partitions", type=int, default=DEFAULT_METADATA_TOPIC_PARTITIONS,
                   help="remote.log.metadata.topic.num.partitions, to check where each event "
                        "sits (default 50; 0: no check)")
    p.add_argument("--objects", nargs="+", metavar="DIR",
                   help="a copy of the bucket (Aiven tiered storage objects): report copied "
                        "segments with no objects (missing), objects no broker reads (orphan) "
                        "and offsets that disagree (mismatch)")
    p.add_argument("--json", action="store_true", help="JSON instead of text")
    return p


def _time(ms: int) -> str:
    if ms < 0:
        return str(ms)
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _epochs(m: RemoteLogSegmentMetadata) -> str:
    return "{" + ", ".join(f"{e}={o}" for e, o in m.segment_leader_epochs) + "}"


def _segment_json(tip: TopicIdPartition, m: RemoteLogSegmentMetadata) -> dict[str, Any]:
    return {"topic": tip.topic, "partition": tip.partition, "topic_id": tip.topic_id,
            "segment_id": m.segment_id.id, "start_offset": m.start_offset,
            "end_offset": m.end_offset, "segment_size_in_bytes": m.segment_size_in_bytes,
            "state": m.state,
            "segment_leader_epochs": [[e, o] for e, o in m.segment_leader_epochs],
            "broker_id": m.broker_id, "max_timestamp_ms": m.max_timestamp_ms,
            "event_timestamp_ms": m.event_timestamp_ms,
            "custom_metadata_size": None if m.custom_metadata is None
            else len(m.custom_metadata),
            "txn_index_empty": m.txn_index_empty,
            "event": {"partition": m.event_offset[0], "offset": m.event_offset[1]}
            if m.event_offset else None,
            "events": m.events}


def _selected(store: RemoteLogMetadataStore, topic: str | None, partition: int | None
              ) -> list[TopicIdPartition]:
    tips = set(store.caches) | set(store.partition_deletes)
    return sorted(t for t in tips if (topic is None or t.topic == topic)
                  and (partition is None or t.partition == partition))


def _print_table(rows: list[tuple[str, ...]], out: IO[str]) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        out.write(" ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() + "\n")


def _run(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    if args.partition is not None and args.topic is None:
        raise UsageError("kafkalog tiered: error: --partition needs --topic")
    if args.offset is not None and (args.topic is None or args.partition is None):
        raise UsageError("kafkalog tiered: error: --offset needs --topic and --partition")
    if args.num_partitions < 0:
        raise UsageError("kafkalog tiered: error: --num-partitions must be >= 0")
    store = read_log_dirs(args.log_dirs, num_partitions=args.num_partitions or None)
    try:
        return _report(store, args, out, err)
    finally:
        out.flush()  # (the warnings follow what they qualify)
        for f in store.findings:
            err.write(f"WARNING: {f}\n")


def _print_gaps(covs: dict[TopicIdPartition, tuple[LocalPartition | None, Coverage]],
                out: IO[str]) -> None:
    for t, (lp, cov) in covs.items():
        for gap in cov.gaps:
            where = f"the local log ({lp.path}) starts at {lp.local_start}" if lp else \
                "no local copy of the partition in the given log dirs"
            maybe = ("; below every copied offset: remote retention may have deleted them "
                     "after log-start-offset-checkpoint was written") if cov.below_remote(gap) \
                else ""
            out.write(f"Gap: {t.topic}-{t.partition} offsets {gap[0]}..{gap[1]} are in no "
                      f"copied remote segment and not local ({where}){maybe}\n")
        for m, reason in cov.unreachable:
            out.write(f"Unreachable segment: {t.topic}-{t.partition} {m.segment_id.id} offsets "
                      f"{m.start_offset}..{m.end_offset} is outside the leader epoch lineage of "
                      f"the local log ({lp.path if lp else '-'}): {reason}; no broker reads it "
                      "and remote retention deletes it\n")


def _report(store: RemoteLogMetadataStore, args: argparse.Namespace, out: IO[str],
            err: IO[str]) -> int:
    if not store.events and not store.findings:
        if not metadata_partition_dirs(args.log_dirs):
            err.write("kafkalog tiered: no __remote_log_metadata-<n> directory under the given "
                      "log dirs\n")
            return EXIT_ERROR
    tips = _selected(store, args.topic, args.partition)
    if args.offset is not None:
        return _find_offset(store, tips, args, out, err)
    covs, notes = tree_coverage(store, args.log_dirs, tips)
    for note in notes:
        err.write(f"WARNING: {note}\n")
    # (a gap below every copy may be retention after the checkpoint: printed, not a failure)
    status = EXIT_ERROR if any(not cov.below_remote(g) for _, cov in covs.values()
                               for g in cov.gaps) else EXIT_OK
    objects = []
    if args.objects:
        from .aiven_rsm.inventory import bucket_inventory, compare

        objects = compare(store, bucket_inventory(args.objects), tips)
        if any(f.kind != "orphan" for f in objects):
            status = EXIT_ERROR
    if args.json:
        out.write(json.dumps({
            "partitions": [{
                "topic": t.topic, "partition": t.partition, "topic_id": t.topic_id,
                "delete_state": store.partition_deletes[t].state
                if t in store.partition_deletes else None,
                "remote_offsets": list(covs[t][1].remote) if covs[t][1].remote else None,
                "local": {"path": str(lp.path), "local_log_start_offset": lp.local_start,
                          "log_end_offset": lp.local_end, "log_start_offset": lp.log_start}
                if (lp := covs[t][0]) is not None else None,
                "gaps": [list(g) for g in covs[t][1].gaps],
                "unreachable": [{"segment_id": m.segment_id.id, "reason": reason}
                                for m, reason in covs[t][1].unreachable],
                "segments": [_segment_json(t, m) for m in
                             (store.caches[t].list_remote_log_segments()
                              if t in store.caches else [])]} for t in tips],
            "findings": [{"partition": f.partition, "offset": f.offset, "message": f.message}
                         for f in store.findings],
            **({"objects": [{"kind": f.kind, "topic": f.topic, "partition": f.partition,
                             "segment_id": f.segment_id, "message": f.message}
                            for f in objects]} if args.objects else {})}) + "\n")
        return status
    if not (args.segments or args.topic is not None):
        _print_summary(store, tips, covs, out)
        _print_gaps(covs, out)
        _print_objects(objects, out)
        return status
    rows: list[tuple[str, ...]] = [COLUMNS]
    for t in tips:
        for m in store.caches[t].list_remote_log_segments() if t in store.caches else []:
            rows.append((t.topic, str(t.partition), m.segment_id.id, str(m.start_offset),
                         str(m.end_offset), str(m.segment_size_in_bytes), m.state, _epochs(m),
                         str(m.broker_id), _time(m.max_timestamp_ms)))
    if len(rows) > 1:
        _print_table(rows, out)
    else:
        out.write("No remote segments.\n")
    for t in tips:
        d = store.partition_deletes.get(t)
        if d is not None:
            out.write(f"Partition {t.topic}-{t.partition} (topic id {t.topic_id}): {d.state} by "
                      f"broker {d.broker_id} at {_time(d.event_timestamp_ms)}\n")
    _print_gaps(covs, out)
    _print_objects(objects, out)
    return status


def _print_objects(findings: list[Any], out: IO[str]) -> None:
    for f in findings:
        out.write(f"{f}\n")


def _print_summary(store: RemoteLogMetadataStore, tips: list[TopicIdPartition],
                   covs: dict[TopicIdPartition, tuple[LocalPartition | None, Coverage]],
                   out: IO[str]) -> None:
    rows: list[tuple[str, ...]] = [SUMMARY_COLUMNS]
    for t in tips:
        segments = store.caches[t].list_remote_log_segments() if t in store.caches else []
        copied = [m for m in segments if m.state == COPY_SEGMENT_FINISHED]
        d = store.partition_deletes.get(t)
        remote = covs[t][1].remote
        rows.append((t.topic, str(t.partition), t.topic_id, str(len(segments)), str(len(copied)),
                     str(remote[0]) if remote else "-", str(remote[1]) if remote else "-",
                     str(sum(m.segment_size_in_bytes for m in copied)),
                     str(covs[t][0].local_start) if covs[t][0] is not None else "-",
                     str(len(covs[t][1].gaps)), d.state if d is not None else "-"))
    if len(rows) > 1:
        _print_table(rows, out)
    else:
        out.write("No remote segments.\n")


def _find_offset(store: RemoteLogMetadataStore, tips: list[TopicIdPartition],
                 args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    found = [(t, epoch, m) for t in tips if t in store.caches
             for epoch, m in store.caches[t].find_offset(args.offset)]
    if args.json:
        out.write(json.dumps({"offset": args.offset, "segments": [
            {"leader_epoch": epoch, **_segment_json(t, m)} for t, epoch, m in found]}) + "\n")
    elif found:
        rows: list[tuple[str, ...]] = [("LEADER-EPOCH", *COLUMNS)]
        for t, epoch, m in found:
            rows.append((str(epoch), t.topic, str(t.partition), m.segment_id.id,
                         str(m.start_offset), str(m.end_offset), str(m.segment_size_in_bytes),
                         m.state, _epochs(m), str(m.broker_id), _time(m.max_timestamp_ms)))
        _print_table(rows, out)
    if not found:
        covs, _ = tree_coverage(store, args.log_dirs, tips)
        local = [lp for lp, _ in covs.values() if lp is not None
                 and lp.local_start <= args.offset < lp.local_end]
        where = f" (it is in the local log {local[0].path})" if local else ""
        err.write(f"kafkalog tiered: offset {args.offset} of {args.topic}-{args.partition} is in "
                  f"no copied remote segment{where}\n")
        return EXIT_ERROR
    return EXIT_OK


def main(argv: Sequence[str] | None = None, out: IO[str] | None = None,
         err: IO[str] | None = None) -> int:
    """Run ``kafkalog tiered`` with ``argv``; returns the exit status."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        args = build_parser().parse_args(list(argv) if argv is not None else None)
        return _run(args, out, err)
    except UsageError as e:
        err.write(f"{e}\n")
        return EXIT_USAGE
    except KafkaLogError as e:        # (an --objects manifest that does not parse)
        err.write(f"kafkalog tiered: {e}\n")
        return EXIT_ERROR
