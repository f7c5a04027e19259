"""``kafkalog compare-replicas``: replicas of partitions copied off several brokers, compared.

Give each broker's log dir (or the partition directories themselves); every partition held by
two or more is compared (:func:`kafkalog.replication.compare.compare_replicas`)::

    kafkalog compare-replicas /backup/b1 /backup/b2

prints (long lines cut here)::

    Topic: t	Partition: 0	Leader: 2 (highest leader epoch, then log end offset)
    Replica  LogStartOffset  LogEndOffset  HighWatermark  LatestEpoch  Directory
    1        0               150           100            0@0          /backup/b1/t-0
    2        0               130           100            1@100        /backup/b2/t-0
    Records 1 vs 2 over offsets 0..129: 100 same, 30 different (first at offset 100: value
    b'b-100' vs b'c-100'), 0 only on 1, 0 only on 2
    Following 2 (leader epoch 2):
      1: truncates to 100 (discards 50 records, none below its high watermark 100); fetches
    from 100
        leader replied with diverging epoch 0 ending at offset 100 to a fetch at offset 150
    with last fetched epoch 0
        Truncating partition with OffsetTruncationState(offset=100, truncationCompleted=true)
    due to leader epoch and offset EpochEndOffset(leaderEpoch=0, endOffset=100)
        fetching from offset 100
      Outcome: 50 records lost (none below the high watermark of the replica holding them);
    the replicas then agree
    If another replica led:
      1: 30 records lost (none below the high watermark of the replica holding them); the
    replicas then agree

Broker 1 led in epoch 0 and wrote 100..149 that nobody replicated; broker 2 was then elected
(epoch 1) and wrote 100..129. The replica names are the brokers' ids (``meta.properties``);
log dirs without distinct ids are named by their paths.

``--leader`` names the replica to reconcile on; ``--metadata`` takes the leader from a KRaft
metadata log or snapshot, ``--zookeeper`` from a ZooKeeper-mode cluster's partition state
(when that leader's dir is not given: the replica Kafka's election picks among those given);
else the replica with the highest leader epoch leads.
``--save-lost DIR`` copies the batches holding what the followers would lose into partition
directories under ``DIR`` (:func:`kafkalog.replication.compare.save_lost`).

Exit status: 0; 1 when, with the chosen leader, records below the high watermark would be lost,
replicas would stay inconsistent or a follower would retry forever (or on an error, printed on
stderr); 2 for usage errors.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import IO, Any

import numpy as np

from ..errors import KafkaLogError
from ..usage import ArgumentParser, parse_args
from .compare import Candidate, PairComparison, PartitionReport, compare_replicas, save_lost

__all__ = ["main", "build_parser", "format_report", "report_json", "summary", "summary_line"]

EXIT_OK = 0
EXIT_FINDINGS = 1


def build_parser() -> argparse.ArgumentParser:
    """The ``kafkalog compare-replicas`` argument parser."""
    p = ArgumentParser(
        prog="kafkalog compare-replicas",
        description="Compare the replicas of partitions copied off several brokers: their "
                    "records, where their histories split, and what Kafka's followers would "
                    "truncate and lose under each leader.")
    p.add_argument("paths", nargs="+", metavar="DIR",
                   help="each broker's log dir (a log.dirs entry) or partition directories")
    p.add_argument("--leader", metavar="REPLICA",
                   help="the replica to reconcile on: a broker id (meta.properties) or a "
                        "partition directory (default: --metadata's or --zookeeper's leader, "
                        "else the replica with the highest leader epoch, then log end "
                        "offset)")
    cluster = p.add_mutually_exclusive_group()
    cluster.add_argument("--metadata", metavar="PATH",
                         help="a KRaft metadata log (__cluster_metadata-0 or a log dir holding "
                              "it), segment or snapshot: its leader leads")
    cluster.add_argument("--zookeeper", metavar="HOST:PORT[/chroot]",
                         help="a ZooKeeper-mode cluster's ZooKeeper: its partition state's "
                              "leader leads")
    p.add_argument("--topic", action="append", metavar="TOPIC",
                   help="only this topic (repeatable)")
    p.add_argument("--partition", action="append", type=int, metavar="PARTITION",
                   help="only this partition number (repeatable)")
    p.add_argument("--json", action="store_true", help="print the reports as one JSON document")
    p.add_argument("--problems-only", action="store_true",
                   help="print only the partitions that lose records, stay inconsistent or "
                        "get stuck under their leader (the summary counts all)")
    p.add_argument("--save-lost", metavar="DIR",
                   help="copy the batches holding the records the leader's followers would "
                        "lose into DIR/broker-N/<topic>-<partition> (partition directories "
                        "with the followers' bytes), to read or produce again")
    return p


def _some(n: int) -> str:
    return "none" if n == 0 else str(n)


def _hw_text(hw: int | None) -> str:
    return "unknown" if hw is None else str(hw)


def _pair_line(p: PairComparison) -> str:
    if p.start >= p.end:
        return f"Records {p.a} vs {p.b}: no offsets in common"
    text = (f"Records {p.a} vs {p.b} over offsets {p.start}..{p.end - 1}: {p.same} same, "
            f"{len(p.differing)} different")
    if p.first is not None:
        text += f" (first at offset {p.first.offset}: {p.first.field} {p.first.a!r} vs " \
                f"{p.first.b!r})"
    return text + f", {p.only_a} only on {p.a}, {p.only_b} only on {p.b}"


def _outcome_line(c: Candidate) -> str:
    text = (f"{c.lost} records lost ({_some(c.lost_committed)} below the high watermark of "
            "the replica holding them); ")
    if c.kept_differences:
        text += f"{c.kept_differences} offsets stay different (Kafka keeps both)"
    else:
        text += "the replicas then agree"
    if c.stuck:
        text += f"; {', '.join(c.stuck)} would retry the same fetch forever"
    return text


def format_report(r: PartitionReport) -> list[str]:
    """The text lines of one partition's report."""
    lines = [f"Topic: {r.topic}\tPartition: {r.partition}\tLeader: {r.leader} "
             f"({r.leader_reason})"]
    lines += [f"Problem: {p}" for p in r.problems]
    rows = [("Replica", "LogStartOffset", "LogEndOffset", "HighWatermark", "LatestEpoch",
             "Directory")]
    for rep in r.replicas:
        s = rep.state
        epoch = f"{s.epochs[-1][0]}@{s.epochs[-1][1]}" if s.epochs else "none"
        rows.append((rep.name, str(s.log_start_offset), str(s.log_end_offset),
                     _hw_text(s.high_watermark), epoch, str(rep.directory)))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)) + "  " + row[5]
              for row in rows]
    lines += [_pair_line(p) for p in r.pairs]
    chosen = r.candidates[0]
    by_name = {rep.name: rep for rep in r.replicas}
    lines.append(f"Following {chosen.leader} (leader epoch {chosen.leader_epoch}):")
    for f in chosen.followers:
        o = f.outcome
        if o.truncated_fully:
            what = (f"is emptied and restarts at {o.follower.log_start_offset} (discards "
                    f"{f.discarded} records)")
        elif o.truncated_to is not None:
            hw = by_name[f.replica].state.high_watermark
            below = "" if hw is None else \
                f", {_some(f.discarded_below_hw)} below its high watermark {hw}"
            what = (f"truncates to {o.follower.log_end_offset} (discards {f.discarded} "
                    f"records{below})")
        else:
            what = "keeps its log"
        lines.append(f"  {f.replica}: {what}; fetches from {o.fetch_offset}")
        lines += [f"    {s.message}" for s in o.steps]
    lines.append("  Outcome: " + _outcome_line(chosen))
    if len(r.candidates) > 1:
        lines.append("If another replica led:")
        lines += [f"  {c.leader}: {_outcome_line(c)}" for c in r.candidates[1:]]
    return lines


def _json_candidate(c: Candidate) -> dict[str, Any]:
    return {
        "leader": c.leader, "leaderEpoch": c.leader_epoch, "lost": c.lost,
        "lostCommitted": c.lost_committed,
        "keptDifferences": c.kept_differences, "stuck": c.stuck,
        "followers": [{
            "replica": f.replica,
            "truncatedTo": f.outcome.truncated_to,
            "truncatedFully": f.outcome.truncated_fully,
            "logEndOffset": f.outcome.follower.log_end_offset,
            "fetchOffset": f.outcome.fetch_offset,
            "discarded": f.discarded, "discardedBelowHighWatermark": f.discarded_below_hw,
            "lost": len(f.lost_offsets),
            "lostOffsets": _ranges(f.lost_offsets),
            "lostBelowHighWatermark": _ranges(f.lost_committed_offsets),
            "keptDifferences": _ranges(f.kept_differences),
            "steps": [{"kind": s.kind, "fetchOffset": s.fetch_offset,
                       "lastFetchedEpoch": s.last_fetched_epoch, "offset": s.offset,
                       "message": s.message} for s in f.outcome.steps],
        } for f in c.followers],
    }


def _ranges(offsets: Any) -> list[list[int]]:
    """Sorted offsets as ``[first, last]`` runs of consecutive offsets.

    >>> _ranges(np.array([3, 4, 5, 9, 11, 12]))
    [[3, 5], [9, 9], [11, 12]]
    """
    a = np.asarray(offsets, dtype=np.int64)
    if not len(a):
        return []
    breaks = np.flatnonzero(np.diff(a) != 1)
    firsts = np.concatenate(([a[0]], a[breaks + 1]))
    lasts = np.concatenate((a[breaks], [a[-1]]))
    return np.stack([firsts, lasts], axis=1).tolist()


def _bytes(v: Any) -> Any:
    if isinstance(v, (bytes, bytearray)):
        return v.decode("utf-8", "backslashreplace")
    if isinstance(v, tuple):
        return [_bytes(x) for x in v]
    return v


def report_json(r: PartitionReport) -> dict[str, Any]:
    """One partition's report as plain JSON values."""
    return {
        "topic": r.topic, "partition": r.partition, "leader": r.leader,
        "leaderReason": r.leader_reason, "problems": r.problems,
        "replicas": [{"replica": rep.name, "brokerId": rep.broker_id,
                      "directory": str(rep.directory),
                      "logStartOffset": rep.state.log_start_offset,
                      "logEndOffset": rep.state.log_end_offset,
                      "highWatermark": rep.state.high_watermark,
                      "leaderEpochs": [list(e) for e in rep.state.epochs]}
                     for rep in r.replicas],
        "pairs": [{"a": p.a, "b": p.b, "startOffset": p.start, "endOffset": p.end,
                   "same": p.same, "different": len(p.differing), "onlyA": p.only_a,
                   "onlyB": p.only_b, "differentOffsets": _ranges(p.differing),
                   "firstDifference": None if p.first is None else {
                       "offset": p.first.offset, "field": p.first.field,
                       "a": _bytes(p.first.a), "b": _bytes(p.first.b)}}
                  for p in r.pairs],
        "candidates": [_json_candidate(c) for c in r.candidates],
    }


def _failed(r: PartitionReport) -> bool:
    c = r.candidates[0]
    return bool(c.lost_committed or c.kept_differences or c.stuck)


def summary(reports: Sequence[PartitionReport]) -> dict[str, int]:
    """Counts over the partitions, under each one's chosen leader: ``agree`` (nothing lost,
    nothing kept different), ``losing`` (records lost), ``losingAcknowledged`` (of them,
    acknowledged ones), ``inconsistent`` (kept differences), ``stuck``."""
    chosen = [r.candidates[0] for r in reports]
    return {
        "partitions": len(reports),
        "agree": sum(1 for c in chosen if not (c.lost or c.kept_differences or c.stuck)),
        "losing": sum(1 for c in chosen if c.lost),
        "losingAcknowledged": sum(1 for c in chosen if c.lost_committed),
        "inconsistent": sum(1 for c in chosen if c.kept_differences),
        "stuck": sum(1 for c in chosen if c.stuck),
    }


def summary_line(counts: dict[str, int]) -> str:
    """The last line of the text report."""
    return (f"{counts['partitions']} partitions compared: {counts['agree']} agree, "
            f"{counts['losing']} lose records ({counts['losingAcknowledged']} acknowledged "
            f"ones), {counts['inconsistent']} stay inconsistent, {counts['stuck']} stuck")


def main(argv: Sequence[str] | None = None, *, stdout: IO[str] | None = None,
         stderr: IO[str] | None = None) -> int:
    """Run ``kafkalog compare-replicas``; returns the exit status."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    args, status = parse_args(build_parser(), argv, err)
    if args is None:
        return status
    try:
        reports = compare_replicas(args.paths, leader=args.leader, metadata=args.metadata,
                                   zookeeper=args.zookeeper, topics=args.topic,
                                   partitions=args.partition)
        saved = {(r.topic, r.partition): save_lost(r, args.save_lost) for r in reports} \
            if args.save_lost else {}
    except (KafkaLogError, OSError) as e:
        err.write(f"kafkalog compare-replicas: {e}\n")
        return EXIT_FINDINGS
    counts = summary(reports)
    if args.problems_only:
        reports = [r for r in reports if r.candidates[0].lost or _failed(r)]
    if args.json:
        docs = [report_json(r) for r in reports]
        for doc in docs:
            doc["saved"] = [{"replica": s.replica, "directory": str(s.directory),
                             "batches": s.batches, "records": s.records}
                            for s in saved.get((doc["topic"], doc["partition"]), [])]
        out.write(json.dumps({"partitions": docs, "summary": counts}) + "\n")
    else:
        if not counts["partitions"]:
            out.write("No partition is held by two or more of the directories given.\n")
        for r in reports:
            out.write("\n".join(format_report(r)) + "\n")
            for s in saved.get((r.topic, r.partition), []):
                out.write(f"Saved the {s.records} records {s.replica} would lose ({s.batches} "
                          f"batches) to {s.directory}\n")
            out.write("\n")
        if counts["partitions"]:
            out.write(summary_line(counts) + "\n")
    return EXIT_FINDINGS if any(_failed(r) for r in reports) else EXIT_OK
