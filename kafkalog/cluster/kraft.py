"""Replay a KRaft ``__cluster_metadata`` log into the cluster model.

``read_log_dir(LOGDIR)`` replays ``LOGDIR/__cluster_metadata-0`` (its latest snapshot
``<offset>-<epoch>.checkpoint`` when there is one, then the log from the snapshot's end offset)
the way a KRaft broker builds its metadata image, and ``LOGDIR/__consumer_offsets-*`` the way
the group coordinator loads committed offsets (:mod:`kafkalog.cluster.consumer_offsets`).
``at_offset`` stops the replay before that offset: the state a broker whose metadata log ended
there would hold (a what-if over "before the incident").

Replay rules are Kafka's (``ClusterControlManager``, ``ReplicationControlManager``,
``ConfigurationControlManager``, ``FeatureControlManager`` ``replay`` methods, 3.9):

- records inside a metadata transaction (BeginTransactionRecord ... EndTransactionRecord) apply
  only at its end and are dropped by AbortTransactionRecord;
- ``PartitionChangeRecord`` merges into the partition (``PartitionRegistration.merge``: fields
  left at their "no change" value keep the old value, a leader change bumps the leader epoch,
  every record bumps the partition epoch);
- ``BrokerRegistrationChangeRecord`` fences (1) or unfences (-1) and may mark the broker in
  controlled shutdown (1); a new ``RegisterBrokerRecord`` replaces the registration;
- ``RemoveTopicRecord`` drops the topic, its partitions and its configs; a ``ConfigRecord``
  with a null value deletes the key; a ``FeatureLevelRecord`` at level 0 removes the feature;
- the ``LEADER_CHANGE`` control record names the active controller; its batch's partition
  leader epoch is the controller epoch. A partition's ``controller_epoch`` is the metadata
  log's leader epoch when the partition last changed.

Example
-------
>>> model = read_log_dir("/path/to/log.dirs")        # doctest: +SKIP
>>> sorted(model.live_brokers())                      # doctest: +SKIP
[1, 2, 3]
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .. import files
from ..checkpoint import MetaProperties
from ..decoders import cluster_metadata
from ..errors import KafkaLogError
from .consumer_offsets import offsets_dirs, replay_offsets
from .log_reading import lone_noops_or_batches, segments, snapshots
from .model import (
    NO_LEADER_CHANGE,
    SECURITY_PROTOCOLS,
    Broker,
    ClusterModel,
    Controller,
    Endpoint,
    PartitionChangeRecord,
    PartitionRegistration,
    Topic,
)

__all__ = ["METADATA_DIR", "MetadataReplay", "read_log_dir", "replay_metadata_dir"]

METADATA_DIR = "__cluster_metadata-0"
PRODUCER_ID_BLOCK_SIZE = 1000          # KRaft hands out producer ids in blocks of 1000
# ConfigResource.Type id -> ZooKeeper config entity type
CONFIG_ENTITY_TYPES = {2: "topics", 4: "brokers"}


class MetadataReplay:
    """Applies decoded metadata records to a :class:`ClusterModel`, one at a time."""

    def __init__(self, model: ClusterModel) -> None:
        self.model = model
        self.metadata_epoch = -1
        self._topic_names: dict[str, str] = {}              # topic id -> name

    def apply(self, rec: dict[str, Any], timestamp: int) -> None:
        """Apply one decoded record (``cluster_metadata.decode_record_obj`` output)."""
        handler = getattr(self, "_on_" + rec["name"], None)
        if handler is not None:
            handler(rec["data"], timestamp)

    # -- brokers and controllers --------------------------------------------------------------

    def _on_RegisterBrokerRecord(self, d: dict[str, Any], ts: int) -> None:
        eps = [Endpoint(e["name"], e["host"], e["port"],
                        SECURITY_PROTOCOLS.get(e["securityProtocol"], str(e["securityProtocol"])))
               for e in d.get("endPoints") or []]
        features = {f["name"]: (f["minSupportedVersion"], f["maxSupportedVersion"])
                    for f in d.get("features") or []}
        self.model.brokers[d["brokerId"]] = Broker(
            id=d["brokerId"], endpoints=eps, rack=d.get("rack"), features=features,
            fenced=bool(d.get("fenced", True)),
            in_controlled_shutdown=bool(d.get("inControlledShutdown", False)),
            epoch=d.get("brokerEpoch", -1), incarnation_id=d.get("incarnationId"),
            timestamp=ts, log_dirs=list(d.get("logDirs") or []))

    def _on_UnregisterBrokerRecord(self, d: dict[str, Any], ts: int) -> None:
        self.model.brokers.pop(d["brokerId"], None)

    def _on_FenceBrokerRecord(self, d: dict[str, Any], ts: int) -> None:
        if d["id"] in self.model.brokers:
            self.model.brokers[d["id"]].fenced = True

    def _on_UnfenceBrokerRecord(self, d: dict[str, Any], ts: int) -> None:
        if d["id"] in self.model.brokers:
            self.model.brokers[d["id"]].fenced = False

    def _on_BrokerRegistrationChangeRecord(self, d: dict[str, Any], ts: int) -> None:
        b = self.model.brokers.get(d["brokerId"])
        if b is None:
            self.model.warnings.append(
                f"BrokerRegistrationChangeRecord for unregistered broker {d['brokerId']}")
            return
        # BrokerRegistrationFencingChange: 1 fence, -1 unfence, 0 none;
        # BrokerRegistrationInControlledShutdownChange: 1 in controlled shutdown, 0 none.
        if d.get("fenced") == 1:
            b.fenced = True
        elif d.get("fenced") == -1:
            b.fenced = False
        if d.get("inControlledShutdown") == 1:
            b.in_controlled_shutdown = True
        if d.get("logDirs"):
            b.log_dirs = list(d["logDirs"])

    def _on_RegisterControllerRecord(self, d: dict[str, Any], ts: int) -> None:
        self.model.controllers[d["controllerId"]] = d

    def _on_UnregisterControllerRecord(self, d: dict[str, Any], ts: int) -> None:
        self.model.controllers.pop(d["controllerId"], None)

    # -- topics and partitions ----------------------------------------------------------------

    def _on_TopicRecord(self, d: dict[str, Any], ts: int) -> None:
        self._topic_names[d["topicId"]] = d["name"]
        self.model.topics[d["name"]] = Topic(d["name"], d["topicId"])

    def _on_RemoveTopicRecord(self, d: dict[str, Any], ts: int) -> None:
        name = self._topic_names.pop(d["topicId"], None)
        if name is not None:
            self.model.topics.pop(name, None)
            self.model.configs.pop(("topics", name), None)

    def _topic(self, topic_id: str, what: str) -> Topic | None:
        name = self._topic_names.get(topic_id)
        if name is None:
            self.model.warnings.append(f"{what} for unknown topic id {topic_id}")
            return None
        return self.model.topics[name]

    def _on_PartitionRecord(self, d: dict[str, Any], ts: int) -> None:
        topic = self._topic(d["topicId"], f"PartitionRecord {d['partitionId']}")
        if topic is None:
            return
        topic.partitions[d["partitionId"]] = PartitionRegistration.from_record(
            d, controller_epoch=self.metadata_epoch)

    def _on_PartitionChangeRecord(self, d: dict[str, Any], ts: int) -> None:
        topic = self._topic(d["topicId"], f"PartitionChangeRecord {d['partitionId']}")
        if topic is None:
            return
        part = topic.partitions.get(d["partitionId"])
        if part is None:
            self.model.warnings.append(
                f"PartitionChangeRecord for unknown partition {topic.name}-{d['partitionId']}")
            return
        record = PartitionChangeRecord.from_record(d)
        if record.leader is None:                             # absent in old record versions
            record.leader = NO_LEADER_CHANGE
        merged = part.merge(record)
        merged.controller_epoch = self.metadata_epoch
        topic.partitions[d["partitionId"]] = merged

    # -- configs, features, producer ids --------------------------------------------------------

    def _on_ConfigRecord(self, d: dict[str, Any], ts: int) -> None:
        entity = CONFIG_ENTITY_TYPES.get(d["resourceType"])
        if entity is None:
            return
        key = (entity, d["resourceName"])
        if d.get("value") is None:
            conf = self.model.configs.get(key, {})
            conf.pop(d["name"], None)
            if key in self.model.configs and not conf:
                del self.model.configs[key]
        else:
            self.model.configs.setdefault(key, {})[d["name"]] = d["value"]

    def _on_FeatureLevelRecord(self, d: dict[str, Any], ts: int) -> None:
        if d["featureLevel"] == 0:
            self.model.features.pop(d["name"], None)
        else:
            self.model.features[d["name"]] = d["featureLevel"]

    def _on_RemoveFeatureLevelRecord(self, d: dict[str, Any], ts: int) -> None:
        self.model.features.pop(d["name"], None)

    def _on_ProducerIdsRecord(self, d: dict[str, Any], ts: int) -> None:
        nxt = d["nextProducerId"]
        self.model.producer_id_block = {"broker": d["brokerId"],
                                        "block_start": nxt - PRODUCER_ID_BLOCK_SIZE,
                                        "block_end": nxt - 1}

    def _on_ZkMigrationStateRecord(self, d: dict[str, Any], ts: int) -> None:
        self.model.zk_migration_state = d["zkMigrationState"]


# ------------------------------------------------------------------------------------------
# Reading the partition directory
# ------------------------------------------------------------------------------------------

def _pick_snapshot(directory: Path, at_offset: int | None) -> tuple[int, Path] | None:
    """The latest snapshot ending at or before ``at_offset`` (any when ``None``)."""
    usable = [s for s in snapshots(directory) if at_offset is None or s[0] <= at_offset]
    return usable[-1] if usable else None


def replay_metadata_dir(directory: str | os.PathLike[str], model: ClusterModel, *,
                        at_offset: int | None = None) -> MetadataReplay:
    """Replay one ``__cluster_metadata-0`` directory into ``model``.

    Records at offsets ``>= at_offset`` are not applied (``None``: replay everything).
    Unreadable records become ``model.warnings`` naming file and offset.
    """
    directory = Path(directory)
    replay = MetadataReplay(model)
    picked = _pick_snapshot(directory, at_offset)
    snap: Path | None = None
    sources: list[tuple[Path, int]] = []
    start = 0
    if picked is not None:
        start, snap = picked            # the snapshot holds every record below its end offset
        sources.append((snap, 0))
    logs = segments(directory)
    first = files.offset_from_file(logs[0]) if logs else 0
    if at_offset is not None and start == 0 and first > 0:
        model.warnings.append(f"{directory}: the log starts at offset {first} "
                              f"and no snapshot ends at or before {at_offset}")
    elif first > start:
        # the records below the log's start are in no file read: a state without them
        model.warnings.append(f"{directory}: the log starts at offset {first} and no snapshot "
                              "holds the records below it"
                              + (f" (the snapshot ends at {start})" if start else "")
                              + ": the state misses them")
    sources += [(p, start) for p in logs]
    snapshot_batches = 0
    pending: list[tuple[dict[str, Any], int]] | None = None   # an open metadata transaction
    for path, min_offset in sources:
        is_snapshot = path is snap
        if not is_snapshot and snap is not None and not snapshot_batches:
            snapshot_batches = -1  # (warned once)
            model.warnings.append(f"{snap}: not a readable snapshot: no batch in it (an empty "
                                  f"or cut file); the records below offset {start} are "
                                  "missing from the state")
        for batch in lone_noops_or_batches(path, model.warnings):
            if is_snapshot:
                snapshot_batches += 1
            if type(batch) is tuple:
                # a batch of one NoOpRecord (most of a metadata log): only its epoch counts
                base, epoch, _ = batch
                if base < min_offset:
                    continue
                if not is_snapshot and at_offset is not None and base >= at_offset:
                    return replay
                replay.metadata_epoch = max(replay.metadata_epoch, epoch)
                continue
            if batch.last_offset < min_offset:
                continue
            if not is_snapshot and at_offset is not None and batch.base_offset >= at_offset:
                return replay
            epoch = batch.partition_leader_epoch
            for rec in batch:
                if rec.offset < min_offset:
                    continue
                if not is_snapshot and at_offset is not None and rec.offset >= at_offset:
                    return replay
                if batch.is_control:
                    _apply_control(rec, epoch, replay, path)
                    continue
                replay.metadata_epoch = max(replay.metadata_epoch, epoch)
                try:
                    obj = cluster_metadata.decode_record_obj(rec.key, rec.value)
                except KafkaLogError as e:
                    model.warnings.append(f"{path}: offset {rec.offset}: {e}")
                    continue
                name = obj["name"]
                if name == "BeginTransactionRecord":
                    pending = []
                elif name == "EndTransactionRecord":
                    for o, ts in pending or []:
                        replay.apply(o, ts)
                    pending = None
                elif name == "AbortTransactionRecord":
                    pending = None
                elif pending is not None:
                    pending.append((obj, rec.timestamp))
                else:
                    replay.apply(obj, rec.timestamp)
    if snap is not None and not snapshot_batches:
        model.warnings.append(f"{snap}: not a readable snapshot: no batch in it (an empty or "
                              f"cut file); the records below offset {start} are missing from "
                              "the state")
    if model.controller is None and at_offset is None:
        _controller_from_quorum_state(directory, model)
    return replay


def _controller_from_quorum_state(directory: Path, model: ClusterModel) -> None:
    """The quorum leader of the node's ``quorum-state`` file when no LeaderChange record was
    replayed (a snapshot took it in and the segments before it were deleted, and no election
    came since): the same leader and epoch; the time of the election is unknown (-1)."""
    from .quorum import read_quorum_state

    path = directory / "quorum-state"
    if not path.is_file():
        return
    try:
        state = read_quorum_state(path)
    except (KafkaLogError, OSError) as e:
        model.warnings.append(f"{path}: {e}")
        return
    if state.leader_id < 0:
        return
    model.controller = Controller(id=state.leader_id, epoch=state.leader_epoch, timestamp=None,
                                  kraft=True, znode_version=2)
    model.controller_epoch = state.leader_epoch
    model.notes.append(f"{path}: the controller is the quorum leader it names (no LeaderChange "
                       "record in the files read): the election's time is unknown (-1)")


def _apply_control(rec: Any, epoch: int, replay: MetadataReplay, path: Path) -> None:
    from ..records.batch import parse_control_key

    try:
        ctl = parse_control_key(rec.key)
        if ctl.type != "LEADER_CHANGE":
            return
        msg = cluster_metadata.decode_leader_change(rec.value)
    except KafkaLogError as e:
        replay.model.warnings.append(f"{path}: offset {rec.offset}: control record: {e}")
        return
    replay.metadata_epoch = max(replay.metadata_epoch, epoch)
    replay.model.controller = Controller(id=msg["leaderId"], epoch=epoch,
                                         timestamp=rec.timestamp, kraft=True, znode_version=2)
    replay.model.controller_epoch = epoch


def _cluster_id(logdir: Path, model: ClusterModel) -> str | None:
    path = logdir / MetaProperties.FILE_NAME
    if not path.is_file():
        return None
    try:
        return MetaProperties.read(path).cluster_id
    except KafkaLogError as e:
        model.warnings.append(f"{path}: {e}")
        return None


def read_log_dir(logdir: str | os.PathLike[str], *,
                 at_offset: int | None = None) -> ClusterModel:
    """The cluster held in a KRaft broker's or controller's log directory.

    Replays ``__cluster_metadata-0`` (up to ``at_offset`` when given) and every
    ``__consumer_offsets-N`` partition. Raises ``FileNotFoundError`` when ``logdir`` is not a
    directory; a directory with neither log gives a model with a warning.
    """
    root = Path(logdir)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: not a directory")
    model = ClusterModel(source="kraft")
    model.cluster_id = _cluster_id(root, model)
    meta = root / METADATA_DIR
    if meta.is_dir():
        replay_metadata_dir(meta, model, at_offset=at_offset)
    else:
        model.notes.append(f"{meta}: no metadata log (not a KRaft log directory?)")
    dirs = offsets_dirs(root)
    for d in dirs:
        replay_offsets(d, model)
    if not meta.is_dir() and not dirs:
        model.warnings.append(f"{root}: neither {METADATA_DIR} nor __consumer_offsets-* found")
    return model
