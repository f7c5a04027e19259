"""A KRaft metadata quorum as its nodes' files describe it: what ``kafka-metadata-quorum.sh
describe`` asks the running leader, answered offline from the metadata log dirs of one or more
nodes (``meta.properties``, ``__cluster_metadata-0/quorum-state``, its snapshots and log).

Where each answer comes from (Kafka 4.1: ``raft/.../FileQuorumStateStore``, ``ElectionState``,
``LeaderState``, ``KRaftControlRecordStateMachine``; ``tools/.../MetadataQuorumCommand``):

- **leader and epoch**: the highest epoch any node knows, from its ``quorum-state`` file
  (written at each election, so it is the newest word) or from the last ``LeaderChange``
  control record of its log;
- **voters**: the last ``VotersRecord`` (KIP-853, a dynamic quorum) of the leader's snapshot and
  log, else of any node's; a static quorum has none, so they come from a ``data_version`` 0
  ``quorum-state`` (its ``currentVoters``, ids only) or from ``controller.quorum.voters`` of the
  node's ``server.properties`` (then with the endpoints Kafka prints);
- **end offsets**: each node's log, read as recovery would (up to its first corrupt batch), the
  latest snapshot's end offset when that is further. A follower's is the end offset the leader
  would see once it fetches: a follower holding records of an epoch the leader does not have
  truncates them first (Kafka's divergence rule, :func:`kafkalog.replication.fetcher.follow`),
  and :attr:`QuorumDescription.truncations` says so;
- **high watermark**: ``LeaderState.maybeUpdateHighWatermark`` over those end offsets (the
  voters' end offsets sorted down, the one at index ``len(voters) // 2``, counted only above the
  start offset of the leader's epoch); -1 when the leader's files are not among the given ones;
- **observers**: the given nodes that are not voters (brokers fetch the metadata log as
  observers);
- **timestamps** (last fetch, last caught up) are the leader's memory and are not in any file:
  always -1, so ``MaxFollowerLagTimeMs`` is 0 when the leader is the voter furthest behind and
  -1 otherwise, as Kafka prints for a voter without a caught-up time.

Example
-------
>>> q = describe_quorum([read_metadata_node("/var/lib/kafka/meta")])   # doctest: +SKIP
>>> q.leader_id, q.high_watermark                                      # doctest: +SKIP
(1, 4211)
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import files
from ..checkpoint import ZERO_UUID, MetaProperties, Uuid
from ..decoders import cluster_metadata, kraft_control
from ..errors import CorruptCheckpointError, KafkaLogError
from ..leader_epoch import EpochEntry
from ..replication.fetcher import ReplicaLog, follow
from .image.metadata_loader import METADATA_PARTITION, entries
from .log_reading import segments, snapshots

__all__ = ["QuorumState", "read_quorum_state", "Voter", "MetadataNode", "read_metadata_node",
           "ReplicaState", "QuorumDescription", "describe_quorum", "static_voters",
           "NoLeaderKnownError", "QUORUM_STATE_FILE"]

QUORUM_STATE_FILE = "quorum-state"
#: FileQuorumStateStore's supported ``data_version`` range
_LOWEST_VERSION, _HIGHEST_VERSION = 0, 1
_UNKNOWN = -1


class NoLeaderKnownError(KafkaLogError):
    """No file of the given nodes names a leader (a quorum never started, or mid-election)."""


@dataclass(frozen=True)
class QuorumState:
    """A node's ``quorum-state`` file (``QuorumStateData``): the election it last took part
    in. ``leader_id`` is -1 when it knows no leader; ``cluster_id``, ``applied_offset`` and
    ``current_voters`` exist only in ``data_version`` 0 (Kafka 3.x), ``voted_directory_id``
    only in 1."""

    data_version: int
    leader_id: int
    leader_epoch: int
    voted_id: int
    voted_directory_id: Uuid | None = None
    cluster_id: str | None = None
    applied_offset: int | None = None
    current_voters: tuple[int, ...] | None = None


def _mandatory(obj: dict[str, Any], name: str, version: int, path: str) -> Any:
    if name not in obj:
        raise CorruptCheckpointError(
            f"QuorumStateData: unable to locate field '{name}', which is mandatory in version "
            f"{version}", path=path)
    return obj[name]


def _int(value: Any, name: str, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise CorruptCheckpointError(f"QuorumStateData: field '{name}' is not an integer "
                                     f"(found {json.dumps(value)})", path=path)
    return value


def read_quorum_state(path: str | os.PathLike[str]) -> QuorumState:
    """Read a ``quorum-state`` file as ``FileQuorumStateStore.readElectionState`` does: its
    first line is one JSON object with a ``data_version`` of 0 or 1 and that version's
    fields.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "quorum-state"
    >>> _ = p.write_text('{"leaderId":1,"leaderEpoch":7,"votedId":-1,'
    ...                  '"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}')
    >>> s = read_quorum_state(p)
    >>> s.leader_id, s.leader_epoch, s.data_version
    (1, 7, 1)

    Raises
    ------
    CorruptCheckpointError
        Kafka's reasons (an empty file, not a JSON object, no ``data_version``, a version out
        of range, a missing field), naming the file.
    """
    where = os.fspath(path)
    with open(path, "rb") as f:
        raw = f.readline()
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CorruptCheckpointError(f"Error while reading the Quorum status from the file: "
                                     f"not UTF-8 ({e})", path=where) from None
    if not line:
        raise CorruptCheckpointError("Error while reading the Quorum status from the file: "
                                     "File ended prematurely.", path=where)
    try:
        obj = json.loads(line)
    except ValueError as e:
        raise CorruptCheckpointError(f"Error while reading the Quorum status from the file: "
                                     f"{e}", path=where) from None
    if not isinstance(obj, dict):
        raise CorruptCheckpointError(f"Deserialized node {line.strip()} is not an object node",
                                     path=where)
    if "data_version" not in obj:
        raise CorruptCheckpointError(
            f"Deserialized node {line.strip()} does not have data_version field", path=where)
    version = _int(obj["data_version"], "data_version", where)
    if not _LOWEST_VERSION <= version <= _HIGHEST_VERSION:
        raise CorruptCheckpointError(
            f"data_version ({version}) is not within the min ({_LOWEST_VERSION}) and max "
            f"({_HIGHEST_VERSION}) supported version", path=where)
    leader = _int(_mandatory(obj, "leaderId", version, where), "leaderId", where)
    epoch = _int(_mandatory(obj, "leaderEpoch", version, where), "leaderEpoch", where)
    voted = _int(_mandatory(obj, "votedId", version, where), "votedId", where)
    if version == 0:
        cluster = _mandatory(obj, "clusterId", 0, where)
        applied = _int(_mandatory(obj, "appliedOffset", 0, where), "appliedOffset", where)
        raw = _mandatory(obj, "currentVoters", 0, where)
        if raw is not None and not isinstance(raw, list):
            raise CorruptCheckpointError(f"QuorumStateData: field 'currentVoters' is not an "
                                         f"array (found {json.dumps(raw)})", path=where)
        voters = None if raw is None else tuple(
            _int(_mandatory(v, "voterId", 0, where) if isinstance(v, dict) else None,
                 "voterId", where) for v in raw)
        return QuorumState(0, leader, epoch, voted, cluster_id=str(cluster),
                           applied_offset=applied, current_voters=voters)
    raw_dir = _mandatory(obj, "votedDirectoryId", 1, where)
    try:
        voted_dir = Uuid.from_string(str(raw_dir))
    except ValueError:
        raise CorruptCheckpointError(f"QuorumStateData: field 'votedDirectoryId' is not a Uuid "
                                     f"(found {json.dumps(raw_dir)})", path=where) from None
    return QuorumState(1, leader, epoch, voted, voted_directory_id=voted_dir)


@dataclass(frozen=True)
class Voter:
    """One voter: its id, its metadata log dir's id (None: a static quorum's voter has none)
    and its controller endpoints ``(listener, host, port)``."""

    id: int
    directory_id: Uuid | None = None
    endpoints: tuple[tuple[str, str, int], ...] = ()

    def kafka_string(self) -> str:
        """``MetadataQuorumCommand.Node.toString``: ``{"id": 1, "directoryId": "...",
        "endpoints": ["CONTROLLER://host:9093"]}``, the directory id left out when it is
        zero or unknown, the endpoints when there are none (an IPv6 host in brackets).

        >>> Voter(1, None, (("CONTROLLER", "::1", 9093),)).kafka_string()
        '{"id": 1, "endpoints": ["CONTROLLER://[::1]:9093"]}'
        """
        s = f'{{"id": {self.id}'
        if self.directory_id is not None and self.directory_id != ZERO_UUID:
            s += f', "directoryId": "{self.directory_id}"'
        if self.endpoints:
            eps = ", ".join(f'"{e}"' for e in self.endpoint_strings())
            s += f', "endpoints": [{eps}]'
        return s + "}"

    def endpoint_strings(self) -> list[str]:
        """``RaftVoterEndpoint.toString`` of each endpoint: ``LISTENER://host:port``, an IPv6
        host in brackets."""
        return [f"{n}://{f'[{h}]' if ':' in h else h}:{p}" for n, h, p in self.endpoints]


@dataclass
class MetadataNode:
    """One node's metadata log dir as read from its files (:func:`read_metadata_node`).

    ``epochs`` are ``(epoch, start offset)`` of the batches read (the leader-epoch lineage of
    the log); ``voters`` is the last ``VotersRecord`` read and ``voters_offset`` where it is
    (the snapshot's end offset minus one for a snapshot's); ``leader_change`` is the last
    ``LeaderChange`` control record as ``(leader id, epoch)``; ``faults`` name the file and
    position of what could not be read (reading stops there, as recovery would)."""

    log_dir: Path
    node_id: int | None
    directory_id: Uuid | None
    cluster_id: str | None
    quorum_state: QuorumState | None
    log_start_offset: int
    log_end_offset: int
    epochs: tuple[EpochEntry, ...]
    first_segment_base_offset: int | None = None
    latest_snapshot: tuple[int, int] | None = None
    voters: tuple[Voter, ...] | None = None
    voters_offset: int = -1
    kraft_version: int | None = None
    leader_change: tuple[int, int] | None = None
    faults: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"node {self.node_id}" if self.node_id is not None else str(self.log_dir)

    def replica_log(self) -> ReplicaLog:
        """This log as the fetch protocol sees it."""
        return ReplicaLog(self.log_start_offset, self.log_end_offset, self.epochs,
                          None, self.first_segment_base_offset)


def _voters_from_record(data: dict[str, Any]) -> tuple[Voter, ...]:
    out = []
    for v in data.get("voters") or []:
        raw = v.get("voterDirectoryId")
        out.append(Voter(int(v["voterId"]), Uuid.from_string(str(raw)) if raw else None,
                         tuple((e["name"], e["host"], int(e["port"]))
                               for e in v.get("endpoints") or [])))
    return tuple(out)


class _Reader:
    """The control records and the epoch lineage of one metadata partition's files."""

    def __init__(self, node: MetadataNode) -> None:
        self.node = node
        self.end = node.log_start_offset
        self.epochs: list[EpochEntry] = []

    def epoch_at(self, epoch: int, offset: int) -> None:
        # LeaderEpochFileCache.assign: a new epoch starts at its first batch
        if epoch >= 0 and (not self.epochs or epoch > self.epochs[-1][0]):
            self.epochs.append((epoch, offset))

    def read(self, path: Path, *, min_offset: int, snapshot_end: int | None = None) -> None:
        from ..records.batch import parse_control_key

        node = self.node
        try:
            for batch in entries(path):
                if type(batch) is tuple:                # a lone NoOpRecord batch
                    base, epoch, _ = batch
                    if base >= min_offset and snapshot_end is None:
                        self.epoch_at(epoch, base)
                        self.end = max(self.end, base + 1)
                    continue
                if batch.last_offset < min_offset:
                    continue
                if snapshot_end is None:
                    self.epoch_at(batch.partition_leader_epoch, batch.base_offset)
                    self.end = max(self.end, batch.last_offset + 1)
                if not batch.is_control:
                    continue
                for rec in batch:
                    try:
                        ctl = parse_control_key(rec.key)
                        if ctl.type == "LEADER_CHANGE" and snapshot_end is None:
                            msg = cluster_metadata.decode_leader_change(rec.value)
                            node.leader_change = (msg["leaderId"], batch.partition_leader_epoch)
                        elif ctl.type_id == kraft_control.KRAFT_VERSION:
                            node.kraft_version = kraft_control.decode(
                                "KRAFT_VERSION", rec.value)["kRaftVersion"]
                        elif ctl.type_id == kraft_control.KRAFT_VOTERS:
                            at = rec.offset if snapshot_end is None else snapshot_end - 1
                            if node.voters is None or at > node.voters_offset:   # older ones: not
                                node.voters = _voters_from_record(
                                    kraft_control.decode("KRAFT_VOTERS", rec.value))
                                node.voters_offset = at
                    except (KafkaLogError, ValueError, KeyError) as e:
                        node.faults.append(f"{path}: offset {rec.offset}: unable to read "
                                           f"control record: {e}")
        except KafkaLogError as e:
            node.faults.append(f"{path}: stopped reading: {e}")


def read_metadata_node(log_dir: str | os.PathLike[str]) -> MetadataNode:
    """Read a node's metadata log dir: the directory holding its ``meta.properties`` and
    ``__cluster_metadata-0`` (the partition directory itself is accepted too).

    Raises
    ------
    KafkaLogError
        No ``__cluster_metadata-0`` there, or an unreadable ``meta.properties`` or
        ``quorum-state`` (naming the file).
    """
    p = Path(log_dir)
    if p.name == METADATA_PARTITION:
        p = p.parent
    part = p / METADATA_PARTITION
    if not part.is_dir():
        raise KafkaLogError(f"no {METADATA_PARTITION} directory here: not a KRaft node's "
                            f"metadata log dir", path=str(p))
    meta = None
    if (p / MetaProperties.FILE_NAME).is_file():
        meta = MetaProperties.read(p / MetaProperties.FILE_NAME)
    state_path = part / QUORUM_STATE_FILE
    state = read_quorum_state(state_path) if state_path.is_file() else None
    logs = segments(part)
    snaps = snapshots(part)
    first = files.offset_from_file(logs[0]) if logs else None
    latest = snaps[-1] if snaps else None
    snap_id = None if latest is None else files.parse_kraft_snapshot_file_name(latest[1])
    # the log starts at the latest snapshot's end when the segments below it are gone
    start = first if first is not None else 0
    if snap_id is not None and (first is None or snap_id[0] > first):
        start = snap_id[0]
    node = MetadataNode(p, meta.node_id if meta else None, meta.directory_id if meta else None,
                        meta.cluster_id if meta else None, state, start, start, (),
                        first_segment_base_offset=first, latest_snapshot=snap_id)
    reader = _Reader(node)
    if latest is not None and snap_id is not None:
        # its control records only (a KRaftVersionRecord, a dynamic quorum's VotersRecord);
        # the epochs come from the log, which a later VotersRecord overrides
        reader.read(latest[1], min_offset=0, snapshot_end=snap_id[0])
    for seg in logs:
        before = len(node.faults)
        reader.read(seg, min_offset=start)
        if any("stopped reading" in f for f in node.faults[before:]):
            break                               # recovery truncates at the first corrupt batch
    if snap_id is not None:
        end_offset, epoch = snap_id
        if reader.end <= end_offset:
            # a log cut at its snapshot: KafkaMetadataLog.truncateToLatestSnapshot starts the
            # log at the snapshot's end with its epoch
            if not reader.epochs or (reader.epochs[0][1] >= end_offset
                                     and reader.epochs[0][0] > epoch):
                reader.epochs.insert(0, (epoch, end_offset))
            reader.end = max(reader.end, end_offset)
    node.log_end_offset = reader.end
    node.epochs = tuple(reader.epochs)
    return node


def static_voters(voters: dict[int, tuple[str, int]], listener: str) -> tuple[Voter, ...]:
    """A static quorum's voters (``controller.quorum.voters``, as
    :attr:`kafkalog.storage.storage_config.StorageConfig.static_voters` reads it) with the
    first controller listener's name, as Kafka's leader reports them."""
    return tuple(Voter(i, None, ((listener, h, port),)) for i, (h, port) in voters.items())


@dataclass(frozen=True)
class ReplicaState:
    """One row of ``describe --replication``: ``log_end_offset`` -1 when the node's files are
    not among the given ones (Kafka's value for a voter that never fetched)."""

    node_id: int
    directory_id: Uuid
    log_end_offset: int
    status: str                        # Leader, Follower or Observer
    last_fetch_timestamp: int = -1
    last_caught_up_timestamp: int = -1


@dataclass
class QuorumDescription:
    """What ``DescribeQuorum`` would answer, from the files (see the module docstring)."""

    cluster_id: str
    leader_id: int
    leader_epoch: int
    high_watermark: int
    voters: tuple[Voter, ...]
    voters_source: str
    replicas: list[ReplicaState]
    observers: tuple[Voter, ...] = ()
    #: ``(node, from offset, to offset)``: a follower's records the leader does not have
    truncations: list[tuple[str, int, int]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def leader(self) -> ReplicaState:
        return next(r for r in self.replicas if r.status == "Leader")

    @property
    def leader_known(self) -> bool:
        return self.leader.log_end_offset >= 0

    def max_follower_lag(self) -> int:
        """``MaxFollowerLag``: the leader's end offset minus the lowest voter's (-1 when the
        leader's is unknown)."""
        if not self.leader_known:
            return -1
        voter_rows = [r for r in self.replicas if r.status != "Observer"]
        return self.leader.log_end_offset - min(r.log_end_offset for r in voter_rows)

    def max_follower_lag_time_ms(self) -> int:
        """``MaxFollowerLagTimeMs``: 0 when the leader itself is the voter furthest behind;
        otherwise it needs the leader's caught-up times, which no file holds: -1."""
        # Kafka takes the first voter with the lowest end offset in its voter list, which is
        # in id order: with a tie, a follower of lower id than the leader's is "the" one
        voter_rows = sorted((r for r in self.replicas if r.status != "Observer"),
                            key=lambda r: r.node_id)
        lowest = min(voter_rows, key=lambda r: r.log_end_offset)
        return 0 if lowest is self.leader else -1

    def lag(self, r: ReplicaState) -> int:
        """The ``Lag`` column: leader's end offset minus the replica's (-1 when the leader's
        is unknown)."""
        return self.leader.log_end_offset - r.log_end_offset if self.leader_known else -1


def _leader(nodes: list[MetadataNode]) -> tuple[int, int, str]:
    best: tuple[int, int, str] | None = None
    for n in nodes:
        cands = []
        if n.quorum_state is not None and n.quorum_state.leader_id >= 0:
            cands.append((n.quorum_state.leader_epoch, n.quorum_state.leader_id,
                          f"{n.log_dir / METADATA_PARTITION / QUORUM_STATE_FILE}"))
        if n.leader_change is not None:
            cands.append((n.leader_change[1], n.leader_change[0],
                          f"the LeaderChange record of {n.log_dir / METADATA_PARTITION}"))
        for c in cands:
            if best is None or c[0] > best[0]:
                best = c
    if best is None:
        seen = "; ".join(
            f"{n.name}: " + (f"quorum-state epoch {n.quorum_state.leader_epoch}, no leader, "
                             f"voted for {n.quorum_state.voted_id}"
                             if n.quorum_state is not None else "no quorum-state")
            for n in nodes)
        raise NoLeaderKnownError(f"no leader is known: no quorum-state names one and no log "
                                 f"holds a LeaderChange record ({seen})")
    return best[1], best[0], best[2]


def describe_quorum(nodes: list[MetadataNode], *,
                    configured_voters: tuple[Voter, ...] | None = None) -> QuorumDescription:
    """Describe the quorum from the files of ``nodes`` (see the module docstring);
    ``configured_voters``: a static quorum's ``controller.quorum.voters`` (used when no
    ``VotersRecord`` exists, as Kafka does).

    Raises
    ------
    KafkaLogError
        Nodes of different clusters or twice the same node, no leader known, no voter set
        found.
    """
    if not nodes:
        raise ValueError("no metadata log dirs given")
    by_id: dict[int, MetadataNode] = {}
    for n in nodes:
        if n.node_id is None:
            raise KafkaLogError("no meta.properties with node.id: which node's files these are "
                                "is unknown", path=str(n.log_dir))
        if n.node_id in by_id:
            raise KafkaLogError(f"node {n.node_id} given twice ({by_id[n.node_id].log_dir} and "
                                f"{n.log_dir})", path=str(n.log_dir))
        by_id[n.node_id] = n
    clusters = {n.cluster_id for n in nodes if n.cluster_id}
    clusters |= {n.quorum_state.cluster_id for n in nodes
                 if n.quorum_state is not None and n.quorum_state.cluster_id}
    if len(clusters) > 1:
        raise KafkaLogError("the given nodes belong to different clusters: " + ", ".join(
            f"{n.name} {n.cluster_id}" for n in nodes))
    cluster_id = next(iter(clusters), "")
    leader_id, leader_epoch, leader_source = _leader(nodes)
    leader_node = by_id.get(leader_id)
    warnings = [f for n in nodes for f in n.faults]

    # the voter set: the leader's latest VotersRecord, else the latest of any node's, else
    # the static configuration (quorum-state v0, controller.quorum.voters)
    voters: tuple[Voter, ...] | None = None
    source = ""
    if leader_node is not None and leader_node.voters is not None:
        voters = leader_node.voters
        source = f"the VotersRecord at offset {leader_node.voters_offset} of {leader_node.name}"
    else:
        dyn = [n for n in nodes if n.voters is not None]
        if dyn:
            n = max(dyn, key=lambda n: n.voters_offset)
            voters = n.voters
            source = f"the VotersRecord at offset {n.voters_offset} of {n.name}"
    if voters is None and configured_voters is not None:
        voters, source = configured_voters, "controller.quorum.voters"
    if voters is None:
        v0 = [n for n in nodes if n.quorum_state is not None
              and n.quorum_state.current_voters]      # (an empty list names no voter set)
        if v0:
            n = max(v0, key=lambda n: n.quorum_state.leader_epoch)   # type: ignore[union-attr]
            voters = tuple(Voter(i) for i in n.quorum_state.current_voters)  # type: ignore
            source = f"the currentVoters of {n.name}'s quorum-state"
    if voters is None:
        raise KafkaLogError(
            "no voter set found: no VotersRecord in any snapshot or log (a static quorum), no "
            "currentVoters in a quorum-state of data_version 0, and no controller.quorum.voters "
            "(give the controller's server.properties)")
    # in id order, as the leader's voter map (a HashMap of small Integer keys) lists them
    voters = tuple(sorted(voters, key=lambda v: v.id))
    voter_ids = [v.id for v in voters]
    if leader_id not in voter_ids:
        warnings.append(f"the leader {leader_id} (from {leader_source}) is not in the voter set "
                        f"{sorted(voter_ids)} ({source})")

    truncations: list[tuple[str, int, int]] = []
    leader_log = None
    if leader_node is not None:
        leader_log = leader_node.replica_log().as_leader(leader_epoch)
    else:
        warnings.append(f"the leader's (node {leader_id}) metadata log dir is not among the "
                        f"given ones: its log end offset, the lags and the high watermark are "
                        f"unknown (-1)")

    def end_offset(n: MetadataNode) -> int:
        if leader_log is None or n is leader_node:
            return n.log_end_offset
        outcome = follow(leader_log, n.replica_log())
        if outcome.truncated_to is not None and outcome.truncated_to < n.log_end_offset:
            truncations.append((n.name, n.log_end_offset, outcome.truncated_to))
        return min(outcome.follower.log_end_offset, n.log_end_offset)

    replicas = []
    ordered = [v for v in voters if v.id == leader_id] + [v for v in voters if v.id != leader_id]
    if leader_id not in voter_ids:
        ordered.insert(0, Voter(leader_id))
    for v in ordered:
        n = by_id.get(v.id)
        # a voter's directory id is the voter set's (none in a static quorum: Kafka reports
        # the zero Uuid, whatever the node's meta.properties says)
        replicas.append(ReplicaState(v.id, v.directory_id or ZERO_UUID,
                                     end_offset(n) if n is not None else -1,
                                     "Leader" if v.id == leader_id else "Follower"))
    observers = tuple(Voter(n.node_id, n.directory_id) for n in nodes
                      if n.node_id not in voter_ids and n.node_id != leader_id)
    for o in observers:
        replicas.append(ReplicaState(o.id, o.directory_id or ZERO_UUID,
                                     end_offset(by_id[o.id]), "Observer"))

    high_watermark = -1
    if leader_node is not None and leader_log is not None:
        ends = sorted((r.log_end_offset for r in replicas if r.status != "Observer"),
                      reverse=True)
        candidate = ends[len(voters) // 2] if len(ends) > len(voters) // 2 else -1
        epoch_start = next((o for e, o in leader_log.epochs if e == leader_epoch),
                           leader_log.log_end_offset)
        # the leader commits nothing of earlier epochs before a record of its own epoch
        if candidate >= 0 and candidate > epoch_start:
            high_watermark = candidate
    for name, frm, to in truncations:
        warnings.append(f"{name} holds offsets {to}..{frm - 1} of an epoch the leader's log "
                        f"does not have: it truncates to {to} when it fetches from node "
                        f"{leader_id} (its end offset is counted as {to})")
    return QuorumDescription(cluster_id, leader_id, leader_epoch, high_watermark, voters,
                             source, replicas, observers, truncations, warnings)
