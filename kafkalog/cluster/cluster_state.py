"""Reconstruct a KRaft cluster's state from its logs and print it as ZooKeeper laid it out.

``kafkalog cluster-state LOGDIR`` replays ``LOGDIR/__cluster_metadata-0`` (its latest snapshot
``<offset>-<epoch>.checkpoint`` when there is one, then the log from the snapshot's end offset)
the way a KRaft broker builds its metadata image, and ``LOGDIR/__consumer_offsets-*`` the way the
group coordinator loads committed offsets, then renders the result as the znodes a ZooKeeper-mode
cluster kept (shapes from Kafka 3.x ``kafka/zk/ZkData.scala``):

==========================================  ===================================================
``/cluster/id``                             ``{"version":"1","id":<cluster.id>}`` (meta.properties)
``/controller``                             ``{"version":2,"brokerid":<active controller>,
                                            "timestamp":"<ms>","kraftControllerEpoch":<epoch>}``
                                            from the last LEADER_CHANGE control record
``/controller_epoch``                       the KRaft leader epoch of the metadata log
``/brokers/ids/<id>``                       ``BrokerIdZNode`` v5 (endpoints, listener map,
                                            features, rack) from RegisterBrokerRecord
``/brokers/topics/<topic>``                 ``TopicZNode`` v3: replica assignment, adding/removing
                                            replicas, topic id
``/brokers/topics/<t>/partitions/<p>/state``  ``{"version":1,"leader","leader_epoch",
                                            "controller_epoch","isr"}`` (+ leader_recovery_state)
``/config/topics/<t>``, ``/config/brokers/<b>``  ``{"version":1,"config":{...}}`` (ConfigRecord)
``/feature``                                ``FeatureZNode`` v2 (FeatureLevelRecord)
``/latest_producer_id_block``               from the last ProducerIdsRecord
``/consumers/<g>/offsets/<t>/<p>``          the latest committed offset (tombstones honoured,
                                            aborted transactional commits dropped)
==========================================  ===================================================

Replay rules are Kafka's: records inside a metadata transaction (BeginTransactionRecord ...
EndTransactionRecord) apply only at its end and are dropped by AbortTransactionRecord;
``PartitionChangeRecord`` fields left at their "no change" default keep the old value, and a
leader change bumps the leader epoch (``PartitionRegistration.merge``); ``RemoveTopicRecord``
drops the topic, its partitions and its configs; a FeatureLevelRecord with level 0 removes the
feature. In KRaft the controller epoch of a partition's state is the metadata log's leader epoch
when the partition last changed.

Example
-------
>>> import kafkalog.cluster.cluster_state as cs
>>> state = cs.build("/path/to/log.dirs")            # doctest: +SKIP
>>> state["/brokers/topics/orders"]["partitions"]    # doctest: +SKIP
{'0': [1, 2], '1': [2, 1]}
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..decoders import cluster_metadata, offsets
from ..errors import KafkaLogError

__all__ = ["ClusterState", "build", "build_state", "main", "SECURITY_PROTOCOLS"]

METADATA_DIR = "__cluster_metadata-0"
OFFSETS_PREFIX = "__consumer_offsets-"
SECURITY_PROTOCOLS = {0: "PLAINTEXT", 1: "SSL", 2: "SASL_PLAINTEXT", 3: "SASL_SSL"}
NO_LEADER_CHANGE = -2
PRODUCER_ID_BLOCK_SIZE = 1000           # KRaft allocates producer ids in blocks of 1000
_CONFIG_ENTITY = {2: "topics", 4: "brokers"}   # ConfigResource.Type id -> ZK config entity type
_SNAPSHOT = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")
_SEGMENT = re.compile(r"^(\d{20})\.log$")


@dataclass
class _Partition:
    replicas: list[int]
    isr: list[int]
    removing: list[int]
    adding: list[int]
    leader: int
    leader_epoch: int
    partition_epoch: int
    leader_recovery_state: int
    controller_epoch: int


@dataclass
class ClusterState:
    """The replayed cluster: what :func:`build` renders. ``warnings`` lists records or files that
    could not be read (each names file, position/offset and what was wrong)."""

    cluster_id: str | None = None
    brokers: dict[int, dict[str, Any]] = field(default_factory=dict)
    broker_timestamps: dict[int, int] = field(default_factory=dict)
    fenced: dict[int, bool] = field(default_factory=dict)
    controllers: dict[int, dict[str, Any]] = field(default_factory=dict)
    topics: dict[str, str] = field(default_factory=dict)             # topic id -> name
    partitions: dict[tuple[str, int], _Partition] = field(default_factory=dict)
    configs: dict[tuple[int, str], dict[str, str]] = field(default_factory=dict)
    features: dict[str, int] = field(default_factory=dict)
    producer_ids: dict[str, int] | None = None
    controller: dict[str, int] | None = None
    metadata_epoch: int = -1
    offsets: dict[str, dict[str, dict[int, int]]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    # -- metadata replay ------------------------------------------------------------------

    def apply_metadata(self, rec: dict[str, Any], timestamp: int) -> None:
        """Apply one decoded metadata record (``cluster_metadata.decode_record_obj`` output)."""
        name, d = rec["name"], rec["data"]
        handler = getattr(self, "_on_" + name, None)
        if handler is not None:
            handler(d, timestamp)

    def _on_RegisterBrokerRecord(self, d: dict[str, Any], ts: int) -> None:
        self.brokers[d["brokerId"]] = d
        self.broker_timestamps[d["brokerId"]] = ts
        self.fenced[d["brokerId"]] = bool(d.get("fenced", True))

    def _on_UnregisterBrokerRecord(self, d: dict[str, Any], ts: int) -> None:
        self.brokers.pop(d["brokerId"], None)
        self.fenced.pop(d["brokerId"], None)

    def _on_FenceBrokerRecord(self, d: dict[str, Any], ts: int) -> None:
        self.fenced[d["id"]] = True

    def _on_UnfenceBrokerRecord(self, d: dict[str, Any], ts: int) -> None:
        self.fenced[d["id"]] = False

    def _on_BrokerRegistrationChangeRecord(self, d: dict[str, Any], ts: int) -> None:
        # Fenced: 1 = fenced, -1 = unfenced, 0 = no change (BrokerRegistrationFencingChange).
        if d.get("fenced") == 1:
            self.fenced[d["brokerId"]] = True
        elif d.get("fenced") == -1:
            self.fenced[d["brokerId"]] = False

    def _on_RegisterControllerRecord(self, d: dict[str, Any], ts: int) -> None:
        self.controllers[d["controllerId"]] = d

    def _on_UnregisterControllerRecord(self, d: dict[str, Any], ts: int) -> None:
        self.controllers.pop(d["controllerId"], None)

    def _on_TopicRecord(self, d: dict[str, Any], ts: int) -> None:
        self.topics[d["topicId"]] = d["name"]

    def _on_RemoveTopicRecord(self, d: dict[str, Any], ts: int) -> None:
        name = self.topics.pop(d["topicId"], None)
        for key in [k for k in self.partitions if k[0] == d["topicId"]]:
            del self.partitions[key]
        if name is not None:
            self.configs.pop((2, name), None)

    def _on_PartitionRecord(self, d: dict[str, Any], ts: int) -> None:
        self.partitions[(d["topicId"], d["partitionId"])] = _Partition(
            replicas=list(d["replicas"]), isr=list(d["isr"]),
            removing=list(d.get("removingReplicas") or []),
            adding=list(d.get("addingReplicas") or []),
            leader=d["leader"], leader_epoch=d["leaderEpoch"],
            partition_epoch=d["partitionEpoch"],
            leader_recovery_state=d.get("leaderRecoveryState", 0),
            controller_epoch=self.metadata_epoch)

    def _on_PartitionChangeRecord(self, d: dict[str, Any], ts: int) -> None:
        p = self.partitions.get((d["topicId"], d["partitionId"]))
        if p is None:
            self.warnings.append(
                f"PartitionChangeRecord for unknown partition {d['topicId']}-{d['partitionId']}")
            return
        if d.get("replicas") is not None:
            p.replicas = list(d["replicas"])
        if d.get("isr") is not None:
            p.isr = list(d["isr"])
        if d.get("removingReplicas") is not None:
            p.removing = list(d["removingReplicas"])
        if d.get("addingReplicas") is not None:
            p.adding = list(d["addingReplicas"])
        if d.get("leader", NO_LEADER_CHANGE) != NO_LEADER_CHANGE:
            p.leader = d["leader"]
            p.leader_epoch += 1
        if d.get("leaderRecoveryState", -1) != -1:
            p.leader_recovery_state = d["leaderRecoveryState"]
        p.partition_epoch += 1
        p.controller_epoch = self.metadata_epoch

    def _on_ConfigRecord(self, d: dict[str, Any], ts: int) -> None:
        key = (d["resourceType"], d["resourceName"])
        if d.get("value") is None:
            self.configs.get(key, {}).pop(d["name"], None)
            if key in self.configs and not self.configs[key]:
                del self.configs[key]
        else:
            self.configs.setdefault(key, {})[d["name"]] = d["value"]

    def _on_FeatureLevelRecord(self, d: dict[str, Any], ts: int) -> None:
        if d["featureLevel"] == 0:
            self.features.pop(d["name"], None)
        else:
            self.features[d["name"]] = d["featureLevel"]

    def _on_RemoveFeatureLevelRecord(self, d: dict[str, Any], ts: int) -> None:
        self.features.pop(d["name"], None)

    def _on_ProducerIdsRecord(self, d: dict[str, Any], ts: int) -> None:
        self.producer_ids = {"broker": d["brokerId"], "next": d["nextProducerId"]}

    # -- rendering ------------------------------------------------------------------------

    def znodes(self) -> dict[str, Any]:
        """The cluster as ZooKeeper znodes: ``{path: decoded znode JSON}``, paths sorted."""
        z: dict[str, Any] = {}
        if self.cluster_id is not None:
            z["/cluster/id"] = {"version": "1", "id": self.cluster_id}
        if self.controller is not None:
            z["/controller"] = {"version": 2, "brokerid": self.controller["id"],
                                "timestamp": str(self.controller["timestamp"]),
                                "kraftControllerEpoch": self.controller["epoch"]}
            z["/controller_epoch"] = self.controller["epoch"]
        for bid, reg in self.brokers.items():
            z[f"/brokers/ids/{bid}"] = _broker_znode(reg, self.broker_timestamps.get(bid, -1))
        by_topic: dict[str, dict[int, _Partition]] = {}
        for (tid, pid), p in self.partitions.items():
            by_topic.setdefault(tid, {})[pid] = p
        for tid, name in self.topics.items():
            parts = dict(sorted(by_topic.get(tid, {}).items()))
            z[f"/brokers/topics/{name}"] = {
                "version": 3,
                "partitions": {str(i): p.replicas for i, p in parts.items()},
                "adding_replicas": {str(i): p.adding for i, p in parts.items() if p.adding},
                "removing_replicas": {str(i): p.removing for i, p in parts.items()
                                      if p.removing},
                "topic_id": tid,
            }
            for i, p in parts.items():
                state: dict[str, Any] = {"version": 1, "leader": p.leader,
                                         "leader_epoch": p.leader_epoch,
                                         "controller_epoch": p.controller_epoch, "isr": p.isr}
                if p.leader_recovery_state != 0:
                    state["leader_recovery_state"] = p.leader_recovery_state
                z[f"/brokers/topics/{name}/partitions/{i}/state"] = state
        for (rtype, rname), conf in self.configs.items():
            entity = _CONFIG_ENTITY.get(rtype)
            if entity is not None and conf:
                z[f"/config/{entity}/{rname or '<default>'}"] = {"version": 1,
                                                                  "config": dict(conf)}
        if self.features:
            z["/feature"] = {"version": 2, "status": 1, "features": {
                n: {"max_version_level": lvl} for n, lvl in self.features.items()}}
        if self.producer_ids is not None:
            nxt = self.producer_ids["next"]
            z["/latest_producer_id_block"] = {
                "version": 1, "broker": self.producer_ids["broker"],
                "block_start": str(nxt - PRODUCER_ID_BLOCK_SIZE), "block_end": str(nxt - 1)}
        for group, topics in self.offsets.items():
            for topic, parts in topics.items():
                for part, off in parts.items():
                    z[f"/consumers/{group}/offsets/{topic}/{part}"] = off
        return dict(sorted(z.items()))


def _broker_znode(reg: dict[str, Any], timestamp: int) -> dict[str, Any]:
    """``BrokerIdZNode.encode`` (version 5) from a RegisterBrokerRecord."""
    eps = reg.get("endPoints") or []
    plaintext = next((e for e in eps if e["securityProtocol"] == 0), None)
    node: dict[str, Any] = {
        "version": 5,
        "host": plaintext["host"] if plaintext else None,
        "port": plaintext["port"] if plaintext else -1,
        "endpoints": [f"{e['name']}://{_format_address(e['host'], e['port'])}" for e in eps],
        "jmx_port": -1,
        "timestamp": str(timestamp),
    }
    if reg.get("rack") is not None:
        node["rack"] = reg["rack"]
    node["listener_security_protocol_map"] = {
        e["name"]: SECURITY_PROTOCOLS.get(e["securityProtocol"], str(e["securityProtocol"]))
        for e in eps}
    node["features"] = {f["name"]: {"min_version": f["minSupportedVersion"],
                                    "max_version": f["maxSupportedVersion"]}
                        for f in reg.get("features") or []}
    return node


def _format_address(host: str, port: int) -> str:
    """Kafka's ``Utils.formatAddress``: IPv6 literals in brackets."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


# ------------------------------------------------------------------------------------------
# Reading the partition directories
# ------------------------------------------------------------------------------------------

def _iter_batches(path: Path, state: ClusterState) -> Iterator[Any]:
    """Batches of one file; a corrupt batch ends the file with a warning (as recovery would)."""
    from ..records.batch import iter_batches

    try:
        yield from iter_batches(str(path))
    except KafkaLogError as e:
        state.warnings.append(f"{path}: stopped reading: {e}")


def _segments(directory: Path) -> list[Path]:
    return sorted((p for p in directory.iterdir() if _SEGMENT.match(p.name)),
                  key=lambda p: int(p.name[:20]))


def _read_meta_properties(logdir: Path) -> str | None:
    p = logdir / "meta.properties"
    if not p.is_file():
        return None
    for line in p.read_text(encoding="utf-8", errors="replace").splitlines():
        line = line.strip()
        if line.startswith("cluster.id="):
            return line.split("=", 1)[1].strip()
    return None


def _replay_metadata(directory: Path, state: ClusterState) -> None:
    segments = _segments(directory)
    snapshots = sorted((p for p in directory.iterdir() if _SNAPSHOT.match(p.name)),
                       key=lambda p: int(p.name[:20]))
    sources: list[tuple[Path, int]] = []
    start = 0
    if snapshots:
        snap = snapshots[-1]
        start = int(snap.name[:20])       # the snapshot holds every record below this offset
        sources.append((snap, 0))
    sources += [(p, start) for p in segments]
    pending: list[tuple[dict[str, Any], int]] | None = None   # open metadata transaction
    for path, min_offset in sources:
        for batch in _iter_batches(path, state):
            if batch.last_offset < min_offset:
                continue
            epoch = batch.partition_leader_epoch
            if batch.is_control:
                for rec in batch:
                    if rec.offset < min_offset:
                        continue
                    _apply_control(batch, rec, epoch, state, path)
                continue
            for rec in batch:
                if rec.offset < min_offset:
                    continue
                state.metadata_epoch = max(state.metadata_epoch, epoch)
                try:
                    obj = cluster_metadata.decode_record_obj(rec.key, rec.value)
                except KafkaLogError as e:
                    state.warnings.append(f"{path}: offset {rec.offset}: {e}")
                    continue
                name = obj["name"]
                if name == "BeginTransactionRecord":
                    pending = []
                elif name == "EndTransactionRecord":
                    for o, ts in pending or []:
                        state.apply_metadata(o, ts)
                    pending = None
                elif name == "AbortTransactionRecord":
                    pending = None
                elif pending is not None:
                    pending.append((obj, rec.timestamp))
                else:
                    state.apply_metadata(obj, rec.timestamp)


def _apply_control(batch: Any, rec: Any, epoch: int, state: ClusterState, path: Path) -> None:
    from ..records.batch import parse_control_key

    try:
        ctl = parse_control_key(rec.key)
        if ctl.type != "LEADER_CHANGE":
            return
        msg = cluster_metadata.decode_leader_change(rec.value)
    except KafkaLogError as e:
        state.warnings.append(f"{path}: offset {rec.offset}: control record: {e}")
        return
    state.metadata_epoch = max(state.metadata_epoch, epoch)
    state.controller = {"id": msg["leaderId"], "epoch": epoch, "timestamp": rec.timestamp}


def _replay_offsets(directory: Path, state: ClusterState) -> None:
    pending: dict[int, list[tuple[Any, ...]]] = {}      # producer id -> uncommitted commits
    for path in _segments(directory):
        for batch in _iter_batches(path, state):
            if batch.is_control:
                try:
                    marker = batch.end_txn_marker()
                except KafkaLogError as e:
                    state.warnings.append(f"{path}: {e}")
                    continue
                if marker is not None:
                    ops = pending.pop(batch.producer_id, [])
                    if marker.type == "COMMIT":
                        for op in ops:
                            _apply_offset(state, *op)
                continue
            for rec in batch:
                try:
                    obj = offsets.decode_record_obj(rec.key, rec.value)
                except KafkaLogError as e:
                    state.warnings.append(f"{path}: offset {rec.offset}: {e}")
                    continue
                if obj["type"] not in offsets.OFFSET_COMMIT_TYPES:
                    continue
                k = obj["key"]
                op = (k["group"], k["topic"], k["partition"],
                      None if obj["value"] is None else obj["value"]["offset"])
                if batch.is_transactional:
                    pending.setdefault(batch.producer_id, []).append(op)
                else:
                    _apply_offset(state, *op)


def _apply_offset(state: ClusterState, group: str, topic: str, partition: int,
                  offset: int | None) -> None:
    if offset is None:                                   # tombstone: the commit was deleted
        parts = state.offsets.get(group, {}).get(topic)
        if parts is not None:
            parts.pop(partition, None)
            if not parts:
                del state.offsets[group][topic]
            if not state.offsets[group]:
                del state.offsets[group]
        return
    state.offsets.setdefault(group, {}).setdefault(topic, {})[partition] = offset


def _offsets_dirs(logdir: Path) -> list[Path]:
    dirs = [p for p in logdir.iterdir()
            if p.is_dir() and p.name.startswith(OFFSETS_PREFIX)
            and p.name[len(OFFSETS_PREFIX):].isdigit()]
    return sorted(dirs, key=lambda p: int(p.name[len(OFFSETS_PREFIX):]))


def build_state(logdir: str | os.PathLike[str]) -> ClusterState:
    """Replay ``logdir``'s metadata log and consumer-offsets partitions into a
    :class:`ClusterState` (``FileNotFoundError`` when ``logdir`` is not a directory)."""
    root = Path(logdir)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: not a directory")
    state = ClusterState(cluster_id=_read_meta_properties(root))
    meta = root / METADATA_DIR
    if meta.is_dir():
        _replay_metadata(meta, state)
    else:
        state.notes.append(f"{meta}: no metadata log (not a KRaft log directory?)")
    offsets_dirs = _offsets_dirs(root)
    for d in offsets_dirs:
        _replay_offsets(d, state)
    if not meta.is_dir() and not offsets_dirs:
        state.warnings.append(f"{root}: neither {METADATA_DIR} nor {OFFSETS_PREFIX}* found")
    return state


def build(logdir: str | os.PathLike[str]) -> dict[str, Any]:
    """The cluster in ``logdir`` as ZooKeeper znodes: ``{path: decoded znode JSON}``.

    See the module docstring for the paths and shapes. Unreadable records are skipped (use
    :func:`build_state` to see them in ``warnings``).
    """
    return build_state(logdir).znodes()


def main(argv: Iterable[str] | None = None) -> int:
    """``kafkalog cluster-state LOGDIR [--compact]``: print the znodes as JSON on stdout.

    Exit status 0 when everything was read, 1 when some records or files could not be read
    (listed on stderr) or the directory holds neither log, 2 for usage errors.
    """
    parser = argparse.ArgumentParser(
        prog="kafkalog cluster-state",
        description="Print a KRaft cluster's state (from __cluster_metadata-0 and "
        "__consumer_offsets-*) in ZooKeeper's znode layout, as JSON.")
    parser.add_argument("logdir", help="a broker log directory (log.dirs entry)")
    parser.add_argument("--compact", action="store_true", help="one-line JSON")
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as e:
        return int(e.code or 0)
    try:
        state = build_state(args.logdir)
    except (FileNotFoundError, NotADirectoryError, PermissionError) as e:
        print(f"kafkalog cluster-state: {e}", file=sys.stderr)
        return 1
    z = state.znodes()
    if args.compact:
        print(json.dumps(z, separators=(",", ":"), ensure_ascii=False))
    else:
        print(json.dumps(z, indent=2, ensure_ascii=False))
    for n in state.notes:
        print(f"note: {n}", file=sys.stderr)
    for w in state.warnings:
        print(f"warning: {w}", file=sys.stderr)
    return 1 if state.warnings else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
