"""Replicas of a partition copied off several brokers, compared, and reconciled as Kafka would.

An operator after an incident (an unclean election, a broker restored from an old disk, a
replica whose leader-epoch checkpoint was lost) holds one directory per broker for a
partition and needs to know, before starting anything: which replica has what, where their
histories split, what Kafka's followers would cut when one of them leads, and which records,
acknowledged ones above all, would be gone for good.

:func:`compare_replicas` answers from the files alone:

* per replica: log start and end offsets, the high watermark of its log dir's
  ``replication-offset-checkpoint`` (None when absent) and the leader-epoch cache;
* per pair of replicas: their records compared over the offsets both hold (batches whose
  header, CRC included, is the same are taken as equal without decoding; others record by
  record: timestamp, key, value, headers). Offsets one replica holds and the other does not
  (compaction on one broker only) are counted apart; the same offset with other contents is a
  *difference*;
* per candidate leader: each follower's exchange with it
  (:func:`kafkalog.replication.fetcher.follow`, Kafka's truncation rules), the records each
  follower discards, the records *lost* (held by a follower at an offset where the leader holds
  nothing or something else; they are gone once every replica follows it) and how many of
  those lie below the high watermark of the replica holding them (acknowledged to producers
  with ``acks=all`` while it led or followed in sync); and *kept differences*: offsets below
  a follower's truncation point where it holds other records than the leader, which Kafka
  never repairs (the replicas stay inconsistent).

Example
-------
>>> report = compare_replicas(["/data/b1/orders-0", "/data/b2/orders-0"])   # doctest: +SKIP
>>> [(c.leader, c.lost, c.lost_committed) for c in report[0].candidates]    # doctest: +SKIP
[('1', 0, 0), ('2', 150, 20)]
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import files
from ..checkpoint import OffsetCheckpointFile
from ..errors import KafkaLogError
from ..log import Log
from ..records.batch import iter_batches
from .fetcher import FollowOutcome, ReplicaLog, follow

__all__ = ["Replica", "PairComparison", "FollowerOutcome", "Candidate", "PartitionReport",
           "compare_replicas", "open_replicas", "compare_pair"]


@dataclass
class Replica:
    """One replica: ``name`` (the broker id from ``meta.properties``; the log dir as given
    when the ids are missing or shared), its partition directory and its state."""

    name: str
    directory: Path
    broker_id: int | None
    state: ReplicaLog


@dataclass
class Difference:
    """The first offset where two replicas hold different records, and what differs."""

    offset: int
    field: str
    a: Any
    b: Any


@dataclass
class PairComparison:
    """Two replicas over ``[start, end)``, the offsets both may hold: ``same`` records agree;
    ``only_a``/``only_b`` records at offsets the other lacks; ``differing`` the offsets holding
    other records on each side (sorted); ``first`` the first of them with the field."""

    a: str
    b: str
    start: int
    end: int
    same: int = 0
    only_a: int = 0
    only_b: int = 0
    differing: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    first: Difference | None = None


@dataclass
class FollowerOutcome:
    """A follower under a candidate leader: the exchange (:class:`FollowOutcome`), the records
    it discards, how many of those lie below its own high watermark, the offsets of its
    records lost for good (no replica keeps them), those below its high watermark, and the
    kept differences (offsets below its truncation point holding other records than the
    leader's)."""

    replica: str
    outcome: FollowOutcome
    discarded: int
    discarded_below_hw: int
    lost_offsets: np.ndarray
    lost_committed_offsets: np.ndarray
    kept_differences: np.ndarray


@dataclass
class Candidate:
    """Everything following ``leader`` in ``leader_epoch`` implies: ``lost`` records (an
    offset several followers lose counts once), ``lost_committed`` the lost ones that lay below
    the high watermark of a replica holding them, ``kept_differences`` offsets where replicas
    stay inconsistent, ``stuck`` the followers that would retry one fetch forever."""

    leader: str
    leader_epoch: int
    followers: list[FollowerOutcome]
    lost: int = 0
    lost_committed: int = 0
    kept_differences: int = 0
    stuck: list[str] = field(default_factory=list)


@dataclass
class PartitionReport:
    """One partition: its replicas, the pairwise comparisons, every candidate leader (the
    chosen ``leader`` first) and why it was chosen."""

    topic: str
    partition: int
    replicas: list[Replica]
    pairs: list[PairComparison]
    candidates: list[Candidate]
    leader: str
    leader_reason: str
    problems: list[str] = field(default_factory=list)


# -- opening -----------------------------------------------------------------------------------

def _checkpointed(log_dir: Path, name: str, topic: str, partition: int) -> int | None:
    """The partition's entry in the log dir's offset checkpoint ``name`` (None: absent)."""
    ckpt = log_dir / name
    if not ckpt.is_file():
        return None
    return OffsetCheckpointFile(ckpt).read().get((topic, partition))


def _open_log(d: Path, log_dir: Path, topic: str, partition: int) -> Log:
    """The partition read-only, with its log start offset from the log dir's checkpoint as a
    broker loads it (a directory without one, kafkalog's standalone layout, keeps its own)."""
    in_log_dir = (log_dir / files.LOG_START_OFFSET_CHECKPOINT_FILE).is_file() or \
        (log_dir / files.RECOVERY_POINT_CHECKPOINT_FILE).is_file()
    if not in_log_dir:
        return Log.open(d, read_only=True)
    start = _checkpointed(log_dir, files.LOG_START_OFFSET_CHECKPOINT_FILE, topic, partition)
    return Log.open(d, read_only=True, standalone=False, log_start_offset=start)


def open_replicas(paths: Sequence[str | os.PathLike[str]]
                  ) -> dict[tuple[str, int], list[Replica]]:
    """The replicas of every partition the ``paths`` hold (log dirs or partition dirs), by
    ``(topic, partition)``.

    Raises
    ------
    FileNotFoundError
        A path that does not exist.
    KafkaLogError
        A partition directory that cannot be opened (named in the error).
    """
    from ..tools.partition_dirs import is_partition_dir, node_id, partition_dirs

    found: dict[tuple[str, int], list[tuple[Path, int | None, Path, str]]] = {}
    for raw in paths:
        path = Path(raw)
        if not path.is_dir():
            raise FileNotFoundError(f"{path}: no such directory")
        given = is_partition_dir(path)
        log_dir = path.parent if given else path
        bid, _problem = node_id(log_dir)
        label = str(raw if not given else Path(raw).parent)
        for topic, pid, d in partition_dirs(path):
            found.setdefault((topic, pid), []).append((d, bid, log_dir, label))
    out: dict[tuple[str, int], list[Replica]] = {}
    for (topic, pid), dirs in sorted(found.items()):
        ids = [bid for _, bid, _, _ in dirs]
        unique = all(b is not None for b in ids) and len(set(ids)) == len(ids)
        replicas = []
        for d, bid, log_dir, label in dirs:
            with _open_log(d, log_dir, topic, pid) as log:
                segs = log.segments
                state = ReplicaLog(
                    log.log_start_offset, log.log_end_offset,
                    tuple((int(e), int(s)) for e, s in log.leader_epoch_entries),
                    _checkpointed(log_dir, files.REPLICATION_OFFSET_CHECKPOINT_FILE, topic,
                                  pid),
                    segs[0].base_offset if segs else None)
            name = str(bid) if unique else label
            replicas.append(Replica(name, d, bid, state))
        out[(topic, pid)] = replicas
    return out


# -- reading -----------------------------------------------------------------------------------

def _span(b: Any) -> tuple[int | None, int]:
    """``(first offset, last offset)`` of an entry; a legacy entry's first offset is unknown
    without decoding (a compressed wrapper carries its last one), so None."""
    if hasattr(b, "base_offset"):
        return b.base_offset, b.last_offset
    return None, b.offset


def _batches(directory: Path, start: int, end: int) -> Iterator[Any]:
    """The entries (v2 batches, legacy entries) that may hold offsets in ``[start, end)``, in
    order, CRCs checked (a corrupt one raises with its file and position)."""
    bases = files.segment_base_offsets(directory)
    for i, base in enumerate(bases):
        if i + 1 < len(bases) and bases[i + 1] <= start:
            continue
        if base >= end:
            return
        for b in iter_batches(files.log_file(directory, base)):
            first, last = _span(b)
            if last < start:
                continue
            if first is not None and first >= end:
                return
            yield b


def _records_in(b: Any, start: int, end: int) -> int:
    """How many records of the entry lie in ``[start, end)`` (a v2 batch wholly inside is
    counted from its header)."""
    first, last = _span(b)
    if first is not None and first >= start and last < end:
        return int(b.record_count)
    return len(_records(b, start, end))


def _identity(b: Any) -> tuple[Any, ...]:
    """What makes two entries the same bytes for this comparison: offsets, size, CRC (which
    covers the rest of a v2 batch but for its partition leader epoch, so that too)."""
    if hasattr(b, "base_offset"):
        return (b.base_offset, b.last_offset, b.batch_length, b.crc, b.partition_leader_epoch)
    return (b.offset, b.size, b.crc)


def _records(b: Any, start: int, end: int) -> list[Any]:
    return [r for r in b if start <= r.offset < end]


def _first_field(ra: Any, rb: Any) -> tuple[str, Any, Any]:
    for name in ("timestamp", "key", "value", "headers"):
        va, vb = getattr(ra, name), getattr(rb, name)
        if va != vb:
            return name, va, vb
    return "record", ra, rb  # pragma: no cover - called on unequal records only


def _offsets(directory: Path, start: int, end: int) -> np.ndarray:
    """The offsets of the records of the entries holding offsets in ``[start, end)``."""
    parts: list[np.ndarray] = []
    for b in _batches(directory, start, end):
        first, last = _span(b)
        if first is not None and b.record_count == last - first + 1:
            parts.append(np.arange(first, last + 1, dtype=np.int64))  # no offset missing
        else:  # compacted, or legacy: the offsets are the records'
            parts.append(np.fromiter((r.offset for r in b), dtype=np.int64))
    return np.concatenate(parts) if parts else np.empty(0, np.int64)


def compare_pair(a: Replica, b: Replica) -> PairComparison:
    """Compare the records of two replicas over the offsets both may hold."""
    start = max(a.state.log_start_offset, b.state.log_start_offset)
    end = min(a.state.log_end_offset, b.state.log_end_offset)
    cmp = PairComparison(a.name, b.name, start, end)
    if start >= end:
        return cmp
    differing: list[int] = []
    ia, ib = _batches(a.directory, start, end), _batches(b.directory, start, end)
    ba, bb = next(ia, None), next(ib, None)
    pa: list[Any] = []  # records of an expanded batch not yet matched, in offset order
    pb: list[Any] = []
    while True:
        if not pa and not pb and ba is not None and bb is not None \
                and _identity(ba) == _identity(bb):
            cmp.same += _records_in(ba, start, end)
            ba, bb = next(ia, None), next(ib, None)
            continue
        if not pa and ba is not None:
            pa, ba = _records(ba, start, end), next(ia, None)
        if not pb and bb is not None:
            pb, bb = _records(bb, start, end), next(ib, None)
        if not pa and not pb:
            if ba is None and bb is None:
                break
            continue
        i = j = 0
        while i < len(pa) and j < len(pb):
            ra, rb = pa[i], pb[j]
            if ra.offset < rb.offset:
                cmp.only_a += 1
                i += 1
            elif rb.offset < ra.offset:
                cmp.only_b += 1
                j += 1
            else:
                if ra[:4] == rb[:4]:
                    cmp.same += 1
                else:
                    differing.append(ra.offset)
                    if cmp.first is None:
                        cmp.first = Difference(ra.offset, *_first_field(ra, rb))
                i += 1
                j += 1
        pa, pb = pa[i:], pb[j:]
        if pa and not pb and bb is None:
            cmp.only_a += len(pa)
            pa = []
        if pb and not pa and ba is None:
            cmp.only_b += len(pb)
            pb = []
    cmp.differing = np.asarray(differing, dtype=np.int64)
    return cmp


# -- reconciling -------------------------------------------------------------------------------

def _candidate(leader: Replica, replicas: list[Replica], pairs: dict[tuple[str, str], Any],
               leader_epoch: int) -> Candidate:
    view = leader.state.as_leader(leader_epoch)
    cand = Candidate(leader.name, leader_epoch, [])
    lost_parts: list[np.ndarray] = []
    committed_parts: list[np.ndarray] = []
    kept_total: list[np.ndarray] = []
    for f in replicas:
        if f is leader:
            continue
        outcome = follow(view, f.state)
        if outcome.stuck:
            cand.stuck.append(f.name)
        # what the follower keeps: below its final log end offset (nothing when emptied)
        kept_end = f.state.log_start_offset if outcome.truncated_fully else \
            outcome.follower.log_end_offset
        old_end = f.state.log_end_offset
        discarded = discarded_hw = 0
        if kept_end < old_end:
            # a truncation removes the whole batch holding its offset
            cut = _offsets(f.directory, kept_end, old_end)
            discarded = len(cut)
            if f.state.high_watermark is not None:
                discarded_hw = int(np.count_nonzero(cut < f.state.high_watermark))
        pair = pairs.get((leader.name, f.name)) or pairs[(f.name, leader.name)]
        diff = pair.differing
        # lost: what the follower holds where the leader holds other records (differences)
        # or none at all (at or above its log end offset), from the leader's log start on
        beyond = np.empty(0, np.int64)
        if old_end > view.log_end_offset:
            beyond = _offsets(f.directory, view.log_end_offset, old_end)
            beyond = beyond[beyond >= view.log_end_offset]
        lost = np.union1d(diff, beyond)
        lost = lost[lost >= view.log_start_offset]
        hw = f.state.high_watermark
        committed = lost[lost < hw] if hw is not None else lost[:0]
        kept = diff[diff < kept_end]
        lost_parts.append(lost)
        committed_parts.append(committed)
        kept_total.append(kept)
        cand.followers.append(FollowerOutcome(f.name, outcome, discarded, discarded_hw, lost,
                                              committed, kept))
    if lost_parts:
        cand.lost = len(np.unique(np.concatenate(lost_parts)))
        cand.lost_committed = len(np.unique(np.concatenate(committed_parts)))
        cand.kept_differences = len(np.unique(np.concatenate(kept_total)))
    return cand


def compare_replicas(paths: Sequence[str | os.PathLike[str]], *, leader: str | None = None,
                     metadata: str | os.PathLike[str] | None = None,
                     topics: Sequence[str] | None = None,
                     partitions: Sequence[int] | None = None) -> list[PartitionReport]:
    """Compare the replicas of every partition held by more than one of ``paths``.

    ``leader`` names the replica to reconcile on (a broker id, or a directory when the ids are
    unknown); else the leader in ``metadata`` (a KRaft metadata log or snapshot, see
    :func:`kafkalog.cluster.image.metadata_loader.load_metadata`); else the replica with the
    highest latest leader epoch, then the highest log end offset. Every replica is also
    evaluated as a candidate.

    Raises
    ------
    KafkaLogError
        ``leader`` names no replica of a partition, or a directory cannot be read.
    """
    image = None
    if metadata is not None:
        from ..cluster.image.metadata_loader import load_metadata

        image = load_metadata(metadata).image
    reports = []
    for (topic, pid), replicas in open_replicas(paths).items():
        if (topics and topic not in topics) or (partitions is not None
                                                and pid not in partitions):
            continue
        if len(replicas) < 2:
            continue
        reports.append(_partition_report(topic, pid, replicas, leader, image))
    return reports


def _partition_report(topic: str, pid: int, replicas: list[Replica], leader: str | None,
                      image: Any) -> PartitionReport:
    problems: list[str] = []
    pairs: dict[tuple[str, str], PairComparison] = {}
    for i, a in enumerate(replicas):
        for b in replicas[i + 1:]:
            pairs[(a.name, b.name)] = compare_pair(a, b)
    epochs = [r.state.latest_epoch for r in replicas if r.state.latest_epoch is not None]
    new_epoch = (max(epochs) if epochs else -1) + 1
    chosen: Replica | None = None
    reason = ""
    if leader is not None:
        chosen = next((r for r in replicas if leader in (r.name, str(r.directory))), None)
        if chosen is None:
            raise KafkaLogError(
                f"{topic}-{pid}: no replica named {leader!r} (replicas: "
                f"{', '.join(r.name for r in replicas)})")
        reason = "given"
    elif image is not None:
        t = image.topics_by_name.get(topic)
        part = t.partitions.get(pid) if t is not None else None
        if part is None:
            problems.append(f"{topic}-{pid} is not in the metadata")
        else:
            new_epoch = max(new_epoch, part.leader_epoch + 1)
            chosen = next((r for r in replicas if r.broker_id == part.leader), None)
            if chosen is None:
                problems.append(f"the metadata's leader {part.leader} (leader epoch "
                                f"{part.leader_epoch}, ISR {part.isr}) is not among the "
                                "replicas given")
            else:
                reason = (f"the metadata's leader (leader epoch {part.leader_epoch}, ISR "
                          f"{part.isr})")
    if chosen is None:
        chosen = max(replicas, key=lambda r: (
            r.state.latest_epoch if r.state.latest_epoch is not None else -1,
            r.state.log_end_offset))
        reason = "highest leader epoch, then log end offset"
    candidates = [_candidate(chosen, replicas, pairs, new_epoch)]
    candidates += [_candidate(r, replicas, pairs, new_epoch) for r in replicas if r is not chosen]
    return PartitionReport(topic, pid, replicas, list(pairs.values()), candidates,
                           chosen.name, reason, problems)
