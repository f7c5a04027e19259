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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import files
from ..checkpoint import OffsetCheckpointFile
from ..errors import KafkaLogError
from ..log import Log
from ..records.batch import RecordBatch, iter_batches
from .fetcher import FollowOutcome, ReplicaLog, follow

__all__ = ["Replica", "PairComparison", "FollowerOutcome", "Candidate", "PartitionReport",
           "compare_replicas", "open_replicas", "compare_pair", "save_lost", "SavedLost",
           "ClusterPartition", "cluster_partitions"]


@dataclass
class Replica:
    """One replica: ``name`` (the broker id from ``meta.properties``; the log dir as given
    when the ids are missing or shared), its partition directory and its state.

    :meth:`log` is the partition opened read-only (on first use; :meth:`close` closes it):
    reads go through its segments' offset indexes and stop at the end it had when opened."""

    name: str
    directory: Path
    broker_id: int | None
    state: ReplicaLog
    log_dir: Path | None = None
    log_start_checkpoint: int | None = None
    _log: Log | None = field(default=None, repr=False, compare=False)

    def log(self) -> Log:
        if self._log is None or self._log.closed:
            log_dir = self.log_dir if self.log_dir is not None else self.directory.parent
            self._log = _open_log(self.directory, log_dir, self.log_start_checkpoint)
        return self._log

    def close(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None


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

def _open_log(d: Path, log_dir: Path, log_start_offset: int | None) -> Log:
    """The partition read-only, with its log start offset from the log dir's checkpoint as a
    broker loads it (a directory outside a log dir, kafkalog's standalone layout, keeps its
    own)."""
    in_log_dir = (log_dir / files.LOG_START_OFFSET_CHECKPOINT_FILE).is_file() or \
        (log_dir / files.RECOVERY_POINT_CHECKPOINT_FILE).is_file()
    if not in_log_dir:
        return Log.open(d, read_only=True)
    return Log.open(d, read_only=True, standalone=False, log_start_offset=log_start_offset)


def open_replicas(paths: Sequence[str | os.PathLike[str]],
                  wanted: Callable[[str, int], bool] | None = None
                  ) -> dict[tuple[str, int], list[Replica]]:
    """The replicas of every partition the ``paths`` hold (log dirs or partition dirs), by
    ``(topic, partition)``, with their state; each is opened read-only when first read
    (:meth:`Replica.log`; :meth:`Replica.close` closes it). ``wanted``: only the partitions
    it accepts.

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
            if wanted is not None and not wanted(topic, pid):
                continue
            found.setdefault((topic, pid), []).append((d, bid, log_dir, label))
    checkpoints: dict[tuple[Path, str], dict[tuple[str, int], int]] = {}

    def checkpointed(log_dir: Path, name: str, tp: tuple[str, int]) -> int | None:
        if (log_dir, name) not in checkpoints:  # one read per log dir, not per partition
            ckpt = log_dir / name
            checkpoints[(log_dir, name)] = OffsetCheckpointFile(ckpt).read() \
                if ckpt.is_file() else {}
        return checkpoints[(log_dir, name)].get(tp)

    out: dict[tuple[str, int], list[Replica]] = {}
    for (topic, pid), dirs in sorted(found.items()):
        ids = [bid for _, bid, _, _ in dirs]
        unique = all(b is not None for b in ids) and len(set(ids)) == len(ids)
        replicas = []
        for d, bid, log_dir, label in dirs:
            start = checkpointed(log_dir, files.LOG_START_OFFSET_CHECKPOINT_FILE, (topic, pid))
            # read the state, then close: the reads reopen it (a log dir of thousands of
            # partitions must not hold them all open)
            with _open_log(d, log_dir, start) as log:
                segs = log.segments
                state = ReplicaLog(
                    log.log_start_offset, log.log_end_offset,
                    tuple((int(e), int(s)) for e, s in log.leader_epoch_entries),
                    checkpointed(log_dir, files.REPLICATION_OFFSET_CHECKPOINT_FILE,
                                 (topic, pid)),
                    segs[0].base_offset if segs else None)
            name = str(bid) if unique else label
            replicas.append(Replica(name, d, bid, state, log_dir, start))
        out[(topic, pid)] = replicas
    return out


# -- reading -----------------------------------------------------------------------------------

def _span(b: Any) -> tuple[int, int]:
    """``(first offset, last offset)`` of an entry (a legacy compressed wrapper carries its
    last offset; its first is its first inner message's, decoded)."""
    return b.base_offset, b.last_offset


def _batches(rep: Replica, start: int, end: int) -> Iterator[Any]:
    """The entries (v2 batches, legacy entries) of a replica that may hold offsets in
    ``[start, end)``, in order, from the offset index's position for ``start`` on, CRCs checked
    (a corrupt one raises with its file and position)."""
    segs = rep.log().segments
    for i, seg in enumerate(segs):
        if i + 1 < len(segs) and segs[i + 1].base_offset <= start:
            continue
        if seg.base_offset >= end:
            return
        pos = seg.lookup_position(start) if seg.base_offset < start else 0
        for b in iter_batches(seg.log_path, start=pos, end=seg.size):
            first, last = _span(b)
            if last < start:
                continue
            if first >= end:
                return
            yield b


def _records_in(b: Any, start: int, end: int) -> int:
    """How many records of the entry lie in ``[start, end)`` (a v2 batch wholly inside is
    counted from its header)."""
    first, last = _span(b)
    if first >= start and last < end:
        return int(b.record_count)
    return sum(1 for r in b if start <= r.offset < end)


def _identity(b: Any) -> tuple[Any, ...]:
    """What makes two entries the same bytes for this comparison: offsets, size, CRC (which
    covers the rest of a v2 batch but for its partition leader epoch, so that too)."""
    if isinstance(b, RecordBatch):
        return (b.base_offset, b.last_offset, b.batch_length, b.crc, b.partition_leader_epoch)
    return ("legacy", b.offset, b.size, b.crc)


def _offsets(rep: Replica, start: int, end: int) -> np.ndarray:
    """The offsets of the records of the entries holding offsets in ``[start, end)``."""
    parts: list[np.ndarray] = []
    for b in _batches(rep, start, end):
        first, last = _span(b)
        if b.record_count == last - first + 1:
            parts.append(np.arange(first, last + 1, dtype=np.int64))  # no offset missing
        else:  # compacted: the offsets are the records'
            parts.append(np.fromiter((r.offset for r in b), dtype=np.int64))
    return np.concatenate(parts) if parts else np.empty(0, np.int64)


# A run of batches that differ is compared in windows of at most this many bytes a side (so a
# wholly divergent log never holds more than one window of decoded columns per side).
_RUN_BYTES = 16 << 20
_NEVER = 2**63  # above every offset


def _table(batches: list[Any], lo: int, hi: int) -> Any:
    """The records of ``batches`` with ``lo <= offset < hi`` as an Arrow table (one columnar
    decode; CRCs were checked by the walk)."""
    from ..records.columnar import decode_columns

    data = b"".join(bytes(x.entry_bytes()) for x in batches)
    cols = decode_columns(data, start_offset=lo, end_offset=hi, validate=False,
                          skip_control=False)
    return cols.to_arrow(["offset", "timestamp", "key", "value", "headers"])


def _same_binary(x: Any, y: Any) -> np.ndarray:
    """Row by row: both null, or both set and equal."""
    import pyarrow.compute as pc

    eq = pc.fill_null(pc.equal(x, y), False)
    both_null = pc.and_(pc.is_null(x), pc.is_null(y))
    return np.asarray(pc.or_(eq, both_null), dtype=bool)


def _compare_window(cmp: PairComparison, run_a: list[Any], run_b: list[Any], lo: int, hi: int,
                    differing: list[np.ndarray]) -> None:
    """Compare the records with ``lo <= offset < hi`` of two runs of batches (vectorized: only
    rows with headers on either side are compared in Python)."""
    ta, tb = _table(run_a, lo, hi), _table(run_b, lo, hi)
    oa = ta.column("offset").to_numpy()
    ob = tb.column("offset").to_numpy()
    common, ia, ib = np.intersect1d(oa, ob, assume_unique=True, return_indices=True)
    cmp.only_a += len(oa) - len(common)
    cmp.only_b += len(ob) - len(common)
    if not len(common):
        return
    same = ta.column("timestamp").to_numpy()[ia] == tb.column("timestamp").to_numpy()[ib]
    for name in ("key", "value"):
        same &= _same_binary(ta.column(name).take(ia), tb.column(name).take(ib))
    import pyarrow.compute as pc

    ha, hb = ta.column("headers").take(ia), tb.column("headers").take(ib)
    na = np.asarray(pc.list_value_length(ha).fill_null(0), dtype=np.int64)
    nb = np.asarray(pc.list_value_length(hb).fill_null(0), dtype=np.int64)
    same &= na == nb
    for i in np.flatnonzero(same & (na > 0)):
        same[i] = ha[int(i)].as_py() == hb[int(i)].as_py()
    cmp.same += int(np.count_nonzero(same))
    diff = common[~same]
    if len(diff):
        differing.append(diff)
        if cmp.first is None:
            i = int(np.flatnonzero(~same)[0])
            ra = _row(ta, int(ia[i]))
            rb = _row(tb, int(ib[i]))
            name = next(n for n in ("timestamp", "key", "value", "headers") if ra[n] != rb[n])
            cmp.first = Difference(int(diff[0]), name, ra[name], rb[name])


def _row(table: Any, i: int) -> dict[str, Any]:
    row = {n: table.column(n)[i].as_py() for n in ("timestamp", "key", "value", "headers")}
    row["headers"] = tuple((h["key"], h["value"]) for h in row["headers"] or ())
    return row


def compare_pair(a: Replica, b: Replica) -> PairComparison:
    """Compare the records of two replicas over the offsets both may hold.

    The batches are walked side by side: a pair with the same header (offsets, size, CRC,
    leader epoch) is the same records; between two such pairs, the batches of each side form
    a run whose records are decoded and compared by offset."""
    start = max(a.state.log_start_offset, b.state.log_start_offset)
    end = min(a.state.log_end_offset, b.state.log_end_offset)
    cmp = PairComparison(a.name, b.name, start, end)
    if start >= end:
        return cmp
    differing: list[np.ndarray] = []
    ia, ib = _batches(a, start, end), _batches(b, start, end)
    ba, bb = next(ia, None), next(ib, None)
    run_a: list[Any] = []
    run_b: list[Any] = []
    size_a = size_b = 0
    lo = start  # records below lo have been compared

    def flush(hi: int) -> None:
        nonlocal run_a, run_b, size_a, size_b, lo
        if hi > lo and (run_a or run_b):
            _compare_window(cmp, run_a, run_b, lo, hi, differing)
        lo = max(lo, hi)
        # a batch reaching past the window stays for the next one
        run_a = [x for x in run_a if _span(x)[1] >= lo]
        run_b = [x for x in run_b if _span(x)[1] >= lo]
        size_a = sum(x.size for x in run_a)
        size_b = sum(x.size for x in run_b)

    while ba is not None or bb is not None:
        if ba is not None and bb is not None and _identity(ba) == _identity(bb):
            # both sides resume at the same batch: everything before it is one window
            flush(_span(ba)[0])
            cmp.same += _records_in(ba, max(start, lo), end)
            lo = max(lo, _span(ba)[1] + 1)
            ba, bb = next(ia, None), next(ib, None)
            continue
        # the side whose next batch ends first joins its run (both on a tie; an exhausted side
        # never holds the other back: a last batch may reach past end)
        la = _span(ba)[1] if ba is not None else _NEVER
        lb = _span(bb)[1] if bb is not None else _NEVER
        if ba is not None and la <= lb:
            run_a.append(ba)
            size_a += ba.size
            ba = next(ia, None)
        if bb is not None and lb <= la:
            run_b.append(bb)
            size_b += bb.size
            bb = next(ib, None)
        if size_a > _RUN_BYTES or size_b > _RUN_BYTES:
            # every record below both heads' first offsets is in the runs by now
            fa = _span(ba)[0] if ba is not None else end
            fb = _span(bb)[0] if bb is not None else end
            flush(min(fa, fb))
    flush(end)
    cmp.differing = np.concatenate(differing) if differing else np.empty(0, np.int64)
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
        cut = np.empty(0, np.int64)
        if kept_end < old_end:
            # a truncation removes the whole batch holding its offset
            cut = _offsets(f, kept_end, old_end)
            discarded = len(cut)
            if f.state.high_watermark is not None:
                discarded_hw = int(np.count_nonzero(cut < f.state.high_watermark))
        pair = pairs.get((leader.name, f.name)) or pairs[(f.name, leader.name)]
        diff = pair.differing
        # lost: what the follower holds where the leader holds other records (differences)
        # or none at all (at or above its log end offset), from the leader's log start on
        beyond = np.empty(0, np.int64)
        if old_end > view.log_end_offset:
            # (the offsets read for the truncation hold them when it cut below that end)
            held = cut if kept_end <= view.log_end_offset else \
                _offsets(f, view.log_end_offset, old_end)
            beyond = held[held >= view.log_end_offset]
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


@dataclass(frozen=True)
class ClusterPartition:
    """A partition as the cluster's controller last recorded it (KRaft metadata or the
    ZooKeeper state znode)."""

    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int
    leader_epoch: int
    elr: tuple[int, ...] = ()  # KRaft's eligible leader replicas (KIP-966)


def cluster_partitions(*, metadata: str | os.PathLike[str] | None = None,
                       zookeeper: str | None = None
                       ) -> tuple[str, dict[tuple[str, int], ClusterPartition]]:
    """``(source name, partitions)`` from a KRaft metadata log or snapshot
    (:func:`kafkalog.cluster.image.metadata_loader.load_metadata`) or a ZooKeeper connect
    string (:func:`kafkalog.cluster.zookeeper.read_cluster`).

    Raises
    ------
    KafkaLogError
        Unreadable metadata, or ZooKeeper unreachable.
    """
    out: dict[tuple[str, int], ClusterPartition] = {}
    if metadata is not None:
        from ..cluster.image.metadata_loader import load_metadata

        image = load_metadata(metadata).image
        for name, t in image.topics_by_name.items():
            for pid, part in t.partitions.items():
                out[(name, pid)] = ClusterPartition(tuple(part.replicas), tuple(part.isr),
                                                    part.leader, part.leader_epoch,
                                                    tuple(part.elr or ()))
        return "the metadata", out
    if zookeeper is not None:
        from ..cluster.zookeeper import read_cluster

        model = read_cluster(zookeeper)
        for name, topic in model.topics.items():
            for pid, part in topic.partitions.items():
                if part.isr:  # a state znode was read
                    out[(name, pid)] = ClusterPartition(tuple(part.replicas), tuple(part.isr),
                                                        part.leader, part.leader_epoch)
        return "ZooKeeper", out
    return "", out


def compare_replicas(paths: Sequence[str | os.PathLike[str]], *, leader: str | None = None,
                     metadata: str | os.PathLike[str] | None = None,
                     zookeeper: str | None = None,
                     topics: Sequence[str] | None = None,
                     partitions: Sequence[int] | None = None) -> list[PartitionReport]:
    """Compare the replicas of every partition held by more than one of ``paths``.

    ``leader`` names the replica to reconcile on (a broker id, or a directory when the ids are
    unknown); else the cluster's leader, from ``metadata`` (a KRaft metadata log or snapshot)
    or ``zookeeper`` (a connect string, ``host:port[/chroot]``), or when it is not among the
    replicas given the one Kafka's election would pick from them; else the replica with the
    highest latest leader epoch, then the highest log end offset. Every replica is also
    evaluated as a candidate.

    Raises
    ------
    KafkaLogError
        ``leader`` names no replica of a partition, a directory cannot be read, the metadata
        cannot be read or ZooKeeper reached.
    """
    source, cluster = cluster_partitions(metadata=metadata, zookeeper=zookeeper)

    def wanted(topic: str, pid: int) -> bool:
        return not (topics and topic not in topics) and (partitions is None
                                                         or pid in partitions)

    reports = []
    for (topic, pid), replicas in open_replicas(paths, wanted).items():
        if len(replicas) < 2:
            continue
        try:
            reports.append(_partition_report(topic, pid, replicas, leader, source, cluster))
        finally:  # one partition's replicas open at a time
            for r in replicas:
                r.close()
    return reports


def _cluster_leader(replicas: list[Replica], part: ClusterPartition, source: str,
                    problems: list[str]) -> tuple[Replica | None, str]:
    """The replica the cluster's controller has, or would elect, as leader (and why)."""
    chosen = next((r for r in replicas if r.broker_id == part.leader), None)
    if chosen is not None:
        return chosen, (f"{source}'s leader (leader epoch {part.leader_epoch}, ISR "
                        f"{list(part.isr)})")
    # the controller elects among the replicas still there: Kafka's offline election,
    # unclean when no ISR member is left
    from ..cluster.election import elect_leader

    live = {r.broker_id for r in replicas if r.broker_id is not None}
    elected = elect_leader(part.replicas, part.isr, live)
    how = ("Kafka's election among the replicas given (the first in assignment order in the "
           f"ISR {list(part.isr)})")
    if elected is None and part.elr:
        # KRaft with ELR: no ISR member left, an eligible leader replica is a clean choice
        # (PartitionChangeBuilder.isValidNewLeader), in assignment order
        elected = next((r for r in part.replicas if r in part.elr and r in live), None)
        how = ("KRaft's election from the eligible leader replicas "
               f"{list(part.elr)} (no replica of the ISR {list(part.isr)} among those given)")
    if elected is None:
        elected = elect_leader(part.replicas, part.isr, live, unclean=True)
        how = (f"an unclean election (no replica of the ISR {list(part.isr)} among those "
               "given: the first in assignment order)")
    problems.append(f"{source}'s leader {part.leader} (leader epoch {part.leader_epoch}) "
                    "is not among the replicas given")
    chosen = next((r for r in replicas if r.broker_id == elected), None)
    return chosen, how if chosen is not None else ""


def _partition_report(topic: str, pid: int, replicas: list[Replica], leader: str | None,
                      source: str, cluster: dict[tuple[str, int], ClusterPartition]
                      ) -> PartitionReport:
    problems: list[str] = []
    pairs: dict[tuple[str, str], PairComparison] = {}
    for i, a in enumerate(replicas):
        for b in replicas[i + 1:]:
            pairs[(a.name, b.name)] = compare_pair(a, b)
    epochs = [r.state.latest_epoch for r in replicas if r.state.latest_epoch is not None]
    new_epoch = (max(epochs) if epochs else -1) + 1
    part = cluster.get((topic, pid))
    if part is not None:
        new_epoch = max(new_epoch, part.leader_epoch + 1)
    elif source:
        problems.append(f"{topic}-{pid} is not in the {source}")
    chosen: Replica | None = None
    reason = ""
    if leader is not None:
        chosen = next((r for r in replicas if leader in (r.name, str(r.directory))), None)
        if chosen is None:
            raise KafkaLogError(
                f"{topic}-{pid}: no replica named {leader!r} (replicas: "
                f"{', '.join(r.name for r in replicas)})")
        reason = "given"
    elif part is not None:
        chosen, reason = _cluster_leader(replicas, part, source, problems)
    if chosen is None:
        chosen = max(replicas, key=lambda r: (
            r.state.latest_epoch if r.state.latest_epoch is not None else -1,
            r.state.log_end_offset))
        reason = "highest leader epoch, then log end offset"
    candidates = [_candidate(chosen, replicas, pairs, new_epoch)]
    candidates += [_candidate(r, replicas, pairs, new_epoch) for r in replicas if r is not chosen]
    return PartitionReport(topic, pid, replicas, list(pairs.values()), candidates,
                           chosen.name, reason, problems)


# -- saving what would be lost -----------------------------------------------------------------

@dataclass
class SavedLost:
    """Where :func:`save_lost` put one follower's lost records: ``directory`` (a partition
    directory), the ``batches`` copied and the ``records`` of them that would be lost."""

    replica: str
    directory: Path
    batches: int
    records: int


def _lost_dir_name(report: PartitionReport, replica: str) -> str:
    index, rep = next((i, r) for i, r in enumerate(report.replicas) if r.name == replica)
    return f"broker-{rep.broker_id}" if rep.name == str(rep.broker_id) else f"replica-{index}"


def save_lost(report: PartitionReport, out_dir: str | os.PathLike[str]) -> list[SavedLost]:
    """Copy the batches holding the records each follower of the chosen leader would lose
    into ``out_dir/<broker-N or replica-I>/<topic>-<partition>``: a partition directory whose
    batches are the follower's bytes (offsets, timestamps, producer ids and leader epochs as
    they were), readable by ``kafkalog dump-segments``/``console-consumer`` and re-producible.

    A batch is copied whole when any of its records would be lost (a truncation removes whole
    batches too); ``records`` counts only the lost ones.

    Raises
    ------
    KafkaLogError
        A destination that already holds files (nothing is overwritten).
    """
    saved = []
    for f in report.candidates[0].followers:
        lost = f.lost_offsets
        if not len(lost):
            continue
        rep = next(r for r in report.replicas if r.name == f.replica)
        dest = Path(out_dir) / _lost_dir_name(report, f.replica) / \
            files.log_dir_name(report.topic, report.partition)
        if dest.exists() and any(dest.iterdir()):
            raise KafkaLogError("the directory for the lost records already holds files; "
                                "nothing is overwritten", path=dest)
        batches = 0
        try:
            with Log.open(dest) as out:
                for b in _batches(rep, int(lost[0]), int(lost[-1]) + 1):
                    first, last = _span(b)
                    i = int(np.searchsorted(lost, first))
                    if not (i < len(lost) and lost[i] <= last):
                        continue
                    if batches == 0:
                        out.truncate_fully_and_start_at(first)
                    out.append_batches(b.entry_bytes())
                    batches += 1
        finally:
            rep.close()
        saved.append(SavedLost(f.replica, dest, batches, len(lost)))
    return saved
