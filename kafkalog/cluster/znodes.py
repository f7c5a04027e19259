"""The ZooKeeper layout of a Kafka cluster, in every shape Kafka wrote it.

Encoders and decoders for each znode Kafka kept in ZooKeeper (``core/src/main/scala/kafka/zk/
ZkData.scala`` 1.1 .. 3.9; ``kafka/utils/ZkUtils.scala`` before 1.1), and :func:`render`, which
lays a :class:`~kafkalog.cluster.model.ClusterModel` out as ``{path: znode value}`` in the shape
of a chosen Kafka version (:class:`ZnodeFormat`):

==================================================  =====================================
``/brokers/ids/<id>`` (ephemeral: live brokers)      BrokerIdZNode v1 (0.8: host, port,
                                                     jmx_port, timestamp), v2 (0.9:
                                                     + endpoints), v3 (0.10.0: + rack),
                                                     v4 (0.10.2: +
                                                     listener_security_protocol_map),
                                                     v5 (2.7: + features)
``/brokers/topics/<t>``                              TopicZNode v1 ``{"version":1,
                                                     "partitions":{...}}``, v2 (2.4: +
                                                     adding_replicas, removing_replicas),
                                                     v3 (2.8: + topic_id)
``/brokers/topics/<t>/partitions/<p>/state``         ``{"version":1,"leader",
                                                     "leader_epoch","controller_epoch",
                                                     "isr"}`` (+ leader_recovery_state when
                                                     RECOVERING, 3.2)
``/controller`` (ephemeral)                          v1 ``{"version":1,"brokerid",
                                                     "timestamp"}``, v2 (3.4: +
                                                     kraftControllerEpoch)
``/controller_epoch``                                the epoch, as text
``/cluster/id``                                      ``{"version":"1","id"}`` (0.10.1)
``/feature``                                         FeatureZNode v1 (2.7), v2 (3.3)
``/latest_producer_id_block``                        ``{"version":1,"broker","block_start",
                                                     "block_end"}`` (0.11)
``/config/<entity type>/<name>``                     ``{"version":1,"config":{...}}``
``/admin/reassign_partitions``                       ``{"version":1,"partitions":[{"topic",
                                                     "partition","replicas"}]}`` while a
                                                     reassignment is in flight
``/admin/preferred_replica_election``                ``{"version":1,"partitions":[...]}``
``/admin/delete_topics/<t>``                         (no data) a deletion in progress
``/consumers/<g>/offsets/<t>/<p>``                   the committed offset, as text
==================================================  =====================================

Values are the decoded JSON (integers for the text znodes, ``None`` for data-less ones).
Decoders accept ``bytes``, ``str`` or already-parsed JSON and raise :class:`InvalidZnodeError`
(naming the znode path) on a value Kafka itself would refuse.

Example
-------
>>> decode_partition_state_znode(
...     b'{"controller_epoch":7,"leader":1,"version":1,"leader_epoch":0,"isr":[1]}').isr
[1]
>>> ZnodeFormat.for_kafka_version("2.4").topic
2
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ..errors import KafkaLogError
from .model import (
    RECOVERED,
    Broker,
    ClusterModel,
    Controller,
    Endpoint,
    PartitionRegistration,
    Topic,
)

__all__ = [
    "InvalidZnodeError",
    "ZnodeFormat",
    "KAFKA_ZNODE_FORMATS",
    "render",
    "broker_id_znode",
    "topic_znode",
    "partition_state_znode",
    "controller_znode",
    "feature_znode",
    "reassign_partitions_znode",
    "preferred_replica_election_znode",
    "config_znode",
    "cluster_id_znode",
    "producer_id_block_znode",
    "decode_broker_id_znode",
    "decode_topic_znode",
    "decode_partition_state_znode",
    "decode_controller_znode",
    "decode_feature_znode",
    "decode_reassign_partitions_znode",
    "decode_preferred_replica_election_znode",
    "decode_config_znode",
    "decode_cluster_id_znode",
    "decode_producer_id_block_znode",
    "decode_int_znode",
]


class InvalidZnodeError(KafkaLogError, ValueError):
    """A znode value that does not parse, or lacks what Kafka requires (``path`` is the
    znode's path when known)."""


# --------------------------------------------------------------------------------------------
# Formats
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ZnodeFormat:
    """Which shape of each znode to write.

    ``topic`` (1-3), ``broker`` (1-5) and ``controller`` (1-2) are JSON versions; ``feature``
    is the FeatureZNode version or ``None`` (no ``/feature`` before 2.7);
    ``leader_recovery_state``: partition states may carry it (3.2); ``cluster_id`` (0.10.1)
    and ``producer_id_block`` (0.11): those znodes exist.
    """

    name: str
    topic: int = 3
    broker: int = 5
    controller: int = 2
    feature: int | None = 2
    leader_recovery_state: bool = True
    cluster_id: bool = True
    producer_id_block: bool = True

    @classmethod
    def for_kafka_version(cls, version: str) -> ZnodeFormat:
        """The shapes a ZooKeeper-mode cluster of Kafka ``version`` (``"2.4"``, ``"0.10.2.1"``,
        ...) wrote. ZooKeeper mode ended with 3.9.

        Raises ``ValueError`` for a version Kafka never shipped with ZooKeeper.
        """
        key = _version_key(version)
        if key >= (4, 0):
            raise ValueError(f"Kafka {version} has no ZooKeeper mode (the last was 3.9)")
        if key < (0, 8):
            raise ValueError(f"Kafka {version}: no znode layout before 0.8")
        chosen = KAFKA_ZNODE_FORMATS[0][1]
        for first, fmt in KAFKA_ZNODE_FORMATS:
            if key >= first:
                chosen = fmt
        return cls(name=f"kafka {version}", topic=chosen.topic, broker=chosen.broker,
                   controller=chosen.controller, feature=chosen.feature,
                   leader_recovery_state=chosen.leader_recovery_state,
                   cluster_id=chosen.cluster_id, producer_id_block=chosen.producer_id_block)

    @classmethod
    def for_zk_version(cls, spec: str) -> ZnodeFormat:
        """From ``--zk-version``: ``N`` is TopicZNode version N with the other shapes of the
        last Kafka release that wrote it (1: 2.3, 2: 2.7, 3: 3.9); ``topic=N,broker=M,
        controller=K`` sets those versions explicitly on top of 3.9's shapes.
        """
        spec = spec.strip()
        if spec.isdigit():
            last = {"1": "2.3", "2": "2.7", "3": "3.9"}.get(spec)
            if last is None:
                raise ValueError(f"TopicZNode versions are 1, 2 and 3 (found {spec})")
            return cls.for_kafka_version(last)
        fields: dict[str, int] = {}
        limits = {"topic": 3, "broker": 5, "controller": 2, "feature": 2}
        for part in spec.split(","):
            key, sep, value = part.partition("=")
            key = key.strip()
            if not sep or key not in limits or not value.strip().isdigit():
                raise ValueError(f"bad --zk-version part {part!r} "
                                 "(expected N or topic=N,broker=M,controller=K,feature=F)")
            n = int(value)
            if not 1 <= n <= limits[key]:
                raise ValueError(f"{key} znode versions are 1..{limits[key]} (found {n})")
            fields[key] = n
        base = cls.for_kafka_version("3.9")
        return cls(name=f"zk-version {spec}", topic=fields.get("topic", base.topic),
                   broker=fields.get("broker", base.broker),
                   controller=fields.get("controller", base.controller),
                   feature=fields.get("feature", base.feature))


# (first Kafka version, the shapes it wrote); each row changes what the one before it wrote
KAFKA_ZNODE_FORMATS: list[tuple[tuple[int, ...], ZnodeFormat]] = [
    ((0, 8), ZnodeFormat("0.8", topic=1, broker=1, controller=1, feature=None,
                         leader_recovery_state=False, cluster_id=False,
                         producer_id_block=False)),
    ((0, 9), ZnodeFormat("0.9", topic=1, broker=2, controller=1, feature=None,
                         leader_recovery_state=False, cluster_id=False,
                         producer_id_block=False)),
    ((0, 10, 0), ZnodeFormat("0.10.0", topic=1, broker=3, controller=1, feature=None,
                             leader_recovery_state=False, cluster_id=False,
                             producer_id_block=False)),
    ((0, 10, 1), ZnodeFormat("0.10.1", topic=1, broker=3, controller=1, feature=None,
                             leader_recovery_state=False, producer_id_block=False)),
    ((0, 10, 2), ZnodeFormat("0.10.2", topic=1, broker=4, controller=1, feature=None,
                             leader_recovery_state=False, producer_id_block=False)),
    ((0, 11), ZnodeFormat("0.11", topic=1, broker=4, controller=1, feature=None,
                          leader_recovery_state=False)),
    ((2, 4), ZnodeFormat("2.4", topic=2, broker=4, controller=1, feature=None,
                         leader_recovery_state=False)),
    ((2, 7), ZnodeFormat("2.7", topic=2, broker=5, controller=1, feature=1,
                         leader_recovery_state=False)),
    ((2, 8), ZnodeFormat("2.8", topic=3, broker=5, controller=1, feature=1,
                         leader_recovery_state=False)),
    ((3, 2), ZnodeFormat("3.2", topic=3, broker=5, controller=1, feature=1)),
    ((3, 3), ZnodeFormat("3.3", topic=3, broker=5, controller=1, feature=2)),
    ((3, 4), ZnodeFormat("3.4", topic=3, broker=5, controller=2, feature=2)),
]


def _version_key(version: str) -> tuple[int, ...]:
    m = re.fullmatch(r"(\d+)\.(\d+)(?:\.(\d+))?(?:\.(\d+))?", version.strip())
    if m is None:
        raise ValueError(f"not a Kafka version: {version!r} (expected e.g. 2.4 or 0.10.2.1)")
    return tuple(int(g) for g in m.groups() if g is not None)


# --------------------------------------------------------------------------------------------
# Encoders (value of one znode)
# --------------------------------------------------------------------------------------------

def broker_id_znode(broker: Broker, version: int = 5) -> dict[str, Any]:
    """``BrokerIdZNode.encode``: ``host``/``port`` are the first PLAINTEXT endpoint's (``None``
    and -1 without one), kept for old clients; later versions add fields."""
    if not 1 <= version <= 5:
        raise ValueError(f"broker registration versions are 1..5 (found {version})")
    plaintext = next((e for e in broker.endpoints if e.security_protocol == "PLAINTEXT"), None)
    node: dict[str, Any] = {
        "version": version,
        "host": plaintext.host if plaintext else None,
        "port": plaintext.port if plaintext else -1,
    }
    if version >= 2:
        node["endpoints"] = [e.connection_string() for e in broker.endpoints]
    node["jmx_port"] = broker.jmx_port
    node["timestamp"] = str(broker.timestamp if broker.timestamp is not None else -1)
    if version >= 3 and broker.rack is not None:
        node["rack"] = broker.rack
    if version >= 4:
        node["listener_security_protocol_map"] = {e.name: e.security_protocol
                                                  for e in broker.endpoints}
    if version >= 5:
        node["features"] = {name: {"min_version": lo, "max_version": hi}
                            for name, (lo, hi) in broker.features.items()}
    return node


def topic_znode(topic: Topic, version: int = 3) -> dict[str, Any]:
    """``TopicZNode.encode``: the assignment (v1), reassignment sets (v2), topic id (v3)."""
    if not 1 <= version <= 3:
        raise ValueError(f"TopicZNode versions are 1..3 (found {version})")
    parts = sorted(topic.partitions.items())
    node: dict[str, Any] = {"version": version,
                            "partitions": {str(i): list(p.replicas) for i, p in parts}}
    if version >= 2:
        node["adding_replicas"] = {str(i): list(p.adding_replicas) for i, p in parts
                                   if p.adding_replicas}
        node["removing_replicas"] = {str(i): list(p.removing_replicas) for i, p in parts
                                     if p.removing_replicas}
    if version >= 3 and topic.topic_id is not None:
        node["topic_id"] = topic.topic_id
    return node


def partition_state_znode(part: PartitionRegistration, *,
                          leader_recovery_state: bool = True) -> dict[str, Any]:
    """``TopicPartitionStateZNode.encode``; ``leader_recovery_state`` only when RECOVERING
    (and only from 3.2: pass ``False`` for older shapes)."""
    node: dict[str, Any] = {"version": 1, "leader": part.leader,
                            "leader_epoch": part.leader_epoch,
                            "controller_epoch": part.controller_epoch, "isr": list(part.isr)}
    if leader_recovery_state and part.leader_recovery_state != RECOVERED:
        node["leader_recovery_state"] = part.leader_recovery_state
    return node


def controller_znode(controller: Controller, version: int = 2) -> dict[str, Any]:
    """``ControllerZNode.encode``: v2 adds ``kraftControllerEpoch`` (-1 for a ZK controller)."""
    node: dict[str, Any] = {"version": version, "brokerid": controller.id,
                            "timestamp": str(controller.timestamp
                                             if controller.timestamp is not None else -1)}
    if version >= 2:
        node["kraftControllerEpoch"] = controller.epoch if controller.kraft else -1
    return node


def feature_znode(features: dict[str, int], version: int = 2, status: int = 1) -> dict[str, Any]:
    """``FeatureZNode.encode``: v1 writes ``min_version_level`` too (equal to the level)."""
    if version == 1:
        fs = {n: {"max_version_level": lvl, "min_version_level": lvl}
              for n, lvl in features.items()}
    else:
        fs = {n: {"max_version_level": lvl} for n, lvl in features.items()}
    return {"version": version, "status": status, "features": fs}


def reassign_partitions_znode(reassignments: dict[tuple[str, int], list[int]]) -> dict[str, Any]:
    """``ReassignPartitionsZNode.encode``: target replicas per partition."""
    return {"version": 1, "partitions": [
        {"topic": t, "partition": p, "replicas": list(r)}
        for (t, p), r in sorted(reassignments.items())]}


def preferred_replica_election_znode(partitions: list[tuple[str, int]]) -> dict[str, Any]:
    """``PreferredReplicaElectionZNode.encode``."""
    return {"version": 1, "partitions": [{"topic": t, "partition": p}
                                         for t, p in sorted(partitions)]}


def config_znode(config: dict[str, str]) -> dict[str, Any]:
    """``ConfigEntityZNode.encode``."""
    return {"version": 1, "config": dict(config)}


def cluster_id_znode(cluster_id: str) -> dict[str, Any]:
    """``ClusterIdZNode.toJson`` (the version is a string there)."""
    return {"version": "1", "id": cluster_id}


def producer_id_block_znode(block: dict[str, int]) -> dict[str, Any]:
    """``ProducerIdBlockZNode.generateProducerIdBlockJson`` (block bounds as strings)."""
    return {"version": 1, "broker": block["broker"], "block_start": str(block["block_start"]),
            "block_end": str(block["block_end"])}


# --------------------------------------------------------------------------------------------
# The whole layout
# --------------------------------------------------------------------------------------------

def render(model: ClusterModel, fmt: ZnodeFormat | None = None) -> dict[str, Any]:
    """The cluster as ``{znode path: value}`` in the shapes of ``fmt`` (3.9's by default),
    paths sorted.

    Only brokers that hold a session are listed under ``/brokers/ids`` (registrations are
    ephemeral): fenced or unregistered brokers are not. Reassignments in flight appear in
    ``/admin/reassign_partitions``: as read from ZooKeeper for a ZooKeeper model; derived from
    the adding/removing replicas of a KRaft model.
    """
    fmt = fmt or ZnodeFormat.for_kafka_version("3.9")
    z: dict[str, Any] = {}
    if model.cluster_id is not None and fmt.cluster_id:
        z["/cluster/id"] = cluster_id_znode(model.cluster_id)
    if model.controller is not None:
        z["/controller"] = controller_znode(model.controller, fmt.controller)
    if model.controller_epoch is not None:
        z["/controller_epoch"] = model.controller_epoch
    for bid in sorted(model.brokers):
        b = model.brokers[bid]
        if not b.fenced:
            z[f"/brokers/ids/{bid}"] = broker_id_znode(b, fmt.broker)
    for name, topic in sorted(model.topics.items()):
        z[f"/brokers/topics/{name}"] = topic_znode(topic, fmt.topic)
        for pid, part in sorted(topic.partitions.items()):
            z[f"/brokers/topics/{name}/partitions/{pid}/state"] = partition_state_znode(
                part, leader_recovery_state=fmt.leader_recovery_state)
    for (entity, name), conf in sorted(model.configs.items()):
        if conf:
            z[f"/config/{entity}/{name or '<default>'}"] = config_znode(conf)
    has_features = bool(model.features) or model.feature_znode_version is not None
    if has_features and fmt.feature is not None:
        z["/feature"] = feature_znode(model.features, fmt.feature)
    if model.producer_id_block is not None and fmt.producer_id_block:
        z["/latest_producer_id_block"] = producer_id_block_znode(model.producer_id_block)
    reassignments = (dict(model.reassignments) if model.source == "zookeeper" else
                     {(t, p): part.target_replicas for t, p, part in model.partitions()
                      if part.is_reassigning})
    if reassignments:
        z["/admin/reassign_partitions"] = reassign_partitions_znode(reassignments)
    if model.preferred_replica_election:
        z["/admin/preferred_replica_election"] = preferred_replica_election_znode(
            model.preferred_replica_election)
    for t in model.topics_being_deleted:
        z[f"/admin/delete_topics/{t}"] = None
    for group, committed in model.consumer_offsets.items():
        for topic_name, parts in committed.items():
            for part_id, off in parts.items():
                z[f"/consumers/{group}/offsets/{topic_name}/{part_id}"] = off
    return dict(sorted(z.items()))


# --------------------------------------------------------------------------------------------
# Decoders
# --------------------------------------------------------------------------------------------

def _json(data: bytes | str | dict[str, Any] | None, path: str | None) -> Any:
    if isinstance(data, dict):
        return data
    if data is None:
        raise InvalidZnodeError("no data", path=path)
    try:
        text = data.decode("utf-8") if isinstance(data, (bytes, bytearray)) else data
        return json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InvalidZnodeError(f"not JSON: {e}", path=path) from None


def _obj(data: Any, path: str | None) -> dict[str, Any]:
    js = _json(data, path)
    if not isinstance(js, dict):
        raise InvalidZnodeError(f"expected a JSON object, found {type(js).__name__}", path=path)
    return js


def _field(js: dict[str, Any], key: str, kind: type | tuple[type, ...], path: str | None) -> Any:
    if key not in js:
        raise InvalidZnodeError(f"missing {key!r}", path=path)
    value = js[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise InvalidZnodeError(f"{key!r} has the wrong type (found {value!r})", path=path)
    return value


def _int_list(value: Any, key: str, path: str | None) -> list[int]:
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool)
                                              for v in value):
        raise InvalidZnodeError(f"{key!r} must be a list of ints (found {value!r})", path=path)
    return list(value)


_ENDPOINT = re.compile(r"^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$", re.DOTALL)
_DEFAULT_PROTOCOLS = {p: p for p in ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")}


def parse_endpoints(endpoints: list[str], protocols: dict[str, str],
                    path: str | None = None) -> list[Endpoint]:
    """``SocketServerConfigs.listenerListToEndPoints``: ``NAME://host:port`` (IPv6 in
    brackets; an empty host is the wildcard, ``None``); the listener name is upper-cased and
    must have a security protocol."""
    out = []
    for entry in endpoints:
        m = _ENDPOINT.match(str(entry).strip())
        if m is None:
            raise InvalidZnodeError(f"unable to parse {entry!r} to a broker endpoint", path=path)
        name = m.group(1).upper()
        proto = protocols.get(name)
        if proto is None:
            raise InvalidZnodeError(f"no security protocol defined for listener {name}",
                                    path=path)
        out.append(Endpoint(name, m.group(2) or None, int(m.group(3)), proto))
    return out


def decode_broker_id_znode(broker_id: int, data: Any, path: str | None = None) -> Broker:
    """``BrokerIdZNode.decode``: any version >= 1 (later versions' unknown keys ignored)."""
    js = _obj(data, path)
    version = _field(js, "version", int, path)
    if version < 1:
        raise InvalidZnodeError(f"unsupported version of broker registration: {version}",
                                path=path)
    jmx_port = _field(js, "jmx_port", int, path)
    if version == 1:
        eps = [Endpoint("PLAINTEXT", _field(js, "host", str, path),
                        _field(js, "port", int, path), "PLAINTEXT")]
    else:
        protocols = js.get("listener_security_protocol_map")
        if protocols is None:
            protocols = _DEFAULT_PROTOCOLS
        elif not isinstance(protocols, dict):
            raise InvalidZnodeError("'listener_security_protocol_map' must be an object",
                                    path=path)
        protocols = {str(k).upper(): str(v) for k, v in protocols.items()}
        raw = _field(js, "endpoints", list, path)
        eps = parse_endpoints(raw, protocols, path)
    rack = js.get("rack")
    features: dict[str, tuple[int, int]] = {}
    for name, rng in (js.get("features") or {}).items():
        if not isinstance(rng, dict) or "min_version" not in rng or "max_version" not in rng:
            raise InvalidZnodeError(f"feature {name!r} needs min_version and max_version",
                                    path=path)
        features[name] = (int(rng["min_version"]), int(rng["max_version"]))
    ts = js.get("timestamp")
    return Broker(id=broker_id, endpoints=eps, rack=rack if isinstance(rack, str) else None,
                  features=features, jmx_port=jmx_port,
                  timestamp=int(ts) if isinstance(ts, str) and ts.lstrip("-").isdigit()
                  else None)


def decode_topic_znode(name: str, data: Any, path: str | None = None) -> Topic:
    """``TopicZNode.decode``: the assignment, adding/removing replicas, topic id (if any).

    Partition states are not in this znode; partitions get their replicas only (ISR empty,
    no leader) until their ``state`` znode is read.
    """
    js = _obj(data, path)
    parts_js = js.get("partitions") or {}
    if not isinstance(parts_js, dict):
        raise InvalidZnodeError("'partitions' must be an object", path=path)
    adding = js.get("adding_replicas") or {}
    removing = js.get("removing_replicas") or {}
    topic = Topic(name=name, topic_id=js.get("topic_id"))
    for key, replicas in parts_js.items():
        if not str(key).lstrip("-").isdigit():
            raise InvalidZnodeError(f"partition key {key!r} is not a number", path=path)
        topic.partitions[int(key)] = PartitionRegistration(
            replicas=_int_list(replicas, f"partitions.{key}", path), isr=[],
            adding_replicas=_int_list(adding.get(key, []), f"adding_replicas.{key}", path),
            removing_replicas=_int_list(removing.get(key, []), f"removing_replicas.{key}",
                                        path))
    return topic


def decode_partition_state_znode(data: Any, zk_version: int = 0,
                                 path: str | None = None) -> PartitionRegistration:
    """``TopicPartitionStateZNode.decode``: leader, leader epoch, ISR, controller epoch,
    leader recovery state (RECOVERED when absent). The znode's ZooKeeper data version is the
    partition epoch (``LeaderAndIsr.partitionEpoch``). Replicas are left empty (they live in
    the topic znode)."""
    js = _obj(data, path)
    return PartitionRegistration(
        replicas=[], isr=_int_list(_field(js, "isr", list, path), "isr", path),
        leader=_field(js, "leader", int, path),
        leader_epoch=_field(js, "leader_epoch", int, path),
        controller_epoch=_field(js, "controller_epoch", int, path),
        leader_recovery_state=int(js.get("leader_recovery_state", RECOVERED)),
        partition_epoch=zk_version)


def decode_controller_znode(data: Any, path: str | None = None) -> Controller:
    """``ControllerZNode.decodeController``: broker id, KRaft controller epoch when present
    (a KRaft controller claimed the znode during a migration)."""
    js = _obj(data, path)
    brokerid = _field(js, "brokerid", int, path)
    raw_epoch = js.get("kraftControllerEpoch")
    kraft_epoch = raw_epoch if isinstance(raw_epoch, int) and not isinstance(raw_epoch, bool) \
        else -1
    ts = js.get("timestamp")
    kraft = kraft_epoch >= 0
    return Controller(id=brokerid, epoch=kraft_epoch,
                      timestamp=int(ts) if isinstance(ts, str) and ts.lstrip("-").isdigit()
                      else None,
                      kraft=kraft, znode_version=int(js.get("version", 1)))


def decode_feature_znode(data: Any, path: str | None = None) -> tuple[int, int, dict[str, int]]:
    """``FeatureZNode.decode``: ``(version, status, {feature: max level})`` with Kafka's
    checks (version 1 or 2; status 0 or 1; a features map; v1 needs ``min_version_level`` with
    ``1 <= min <= max``; every max level >= 1)."""
    js = _obj(data, path)
    version = _field(js, "version", int, path)
    if version not in (1, 2):
        raise InvalidZnodeError(f"unsupported feature znode version {version}", path=path)
    status = js.get("status")
    if not isinstance(status, int) or isinstance(status, bool):
        raise InvalidZnodeError("status can not be absent in feature information", path=path)
    if status not in (0, 1):
        raise InvalidZnodeError(f"malformed status {status} in feature information", path=path)
    fs = js.get("features")
    if not isinstance(fs, dict):
        raise InvalidZnodeError("features map can not be absent", path=path)
    out: dict[str, int] = {}
    for name, info in fs.items():
        if not isinstance(info, dict):
            raise InvalidZnodeError(f"feature {name!r}: expected an object", path=path)
        if version == 1 and "min_version_level" not in info:
            raise InvalidZnodeError(f"feature {name!r}: min_version_level absent", path=path)
        if "max_version_level" not in info:
            raise InvalidZnodeError(f"feature {name!r}: max_version_level absent", path=path)
        hi = info["max_version_level"]
        if version == 1 and (info["min_version_level"] < 1 or hi < info["min_version_level"]):
            raise InvalidZnodeError(
                f"feature {name!r}: expected 1 <= min_version_level <= max_version_level "
                f"(found {info['min_version_level']}, {hi})", path=path)
        if hi < 1:
            raise InvalidZnodeError(f"feature {name!r}: expected max_version_level >= 1 "
                                    f"(found {hi})", path=path)
        out[name] = hi
    return version, status, out


def decode_reassign_partitions_znode(data: Any,
                                     path: str | None = None) -> dict[tuple[str, int], list[int]]:
    """``ReassignPartitionsZNode.decode``: target replicas per (topic, partition)."""
    js = _obj(data, path)
    out: dict[tuple[str, int], list[int]] = {}
    for entry in _field(js, "partitions", list, path):
        if not isinstance(entry, dict):
            raise InvalidZnodeError("each partition must be an object", path=path)
        key = (_field(entry, "topic", str, path), _field(entry, "partition", int, path))
        out[key] = _int_list(_field(entry, "replicas", list, path), "replicas", path)
    return out


def decode_preferred_replica_election_znode(data: Any,
                                            path: str | None = None) -> list[tuple[str, int]]:
    """``PreferredReplicaElectionZNode.decode``."""
    js = _obj(data, path)
    out = []
    for entry in _field(js, "partitions", list, path):
        if not isinstance(entry, dict):
            raise InvalidZnodeError("each partition must be an object", path=path)
        out.append((_field(entry, "topic", str, path), _field(entry, "partition", int, path)))
    return sorted(out)


def decode_config_znode(data: Any, path: str | None = None) -> dict[str, str]:
    """``ConfigEntityZNode.decode``: the ``config`` map (empty when absent)."""
    js = _obj(data, path)
    conf = js.get("config") or {}
    if not isinstance(conf, dict):
        raise InvalidZnodeError("'config' must be an object", path=path)
    return {str(k): str(v) for k, v in conf.items()}


def decode_cluster_id_znode(data: Any, path: str | None = None) -> str:
    """``ClusterIdZNode.fromJson``."""
    return str(_field(_obj(data, path), "id", str, path))


def decode_producer_id_block_znode(data: Any, path: str | None = None) -> dict[str, int]:
    """``ProducerIdBlockZNode.parseProducerIdBlockData``."""
    js = _obj(data, path)
    try:
        return {"broker": _field(js, "broker", int, path),
                "block_start": int(_field(js, "block_start", str, path)),
                "block_end": int(_field(js, "block_end", str, path))}
    except ValueError as e:
        if isinstance(e, InvalidZnodeError):
            raise
        raise InvalidZnodeError(f"block bounds are not numbers: {e}", path=path) from None


def decode_int_znode(data: bytes | str | None, path: str | None = None) -> int:
    """A znode holding a number as text (``/controller_epoch``, consumer offsets)."""
    if data is None:
        raise InvalidZnodeError("no data", path=path)
    text = data.decode("utf-8", "replace") if isinstance(data, (bytes, bytearray)) else data
    try:
        return int(text.strip())
    except ValueError:
        raise InvalidZnodeError(f"expected a number, found {text!r}", path=path) from None
