"""Read a ZooKeeper-mode Kafka cluster's znodes into the cluster model (with ``kazoo``).

``read_cluster("zk1:2181,zk2:2181/kafka")`` connects (the optional ``/chroot`` suffix is the
cluster's ``zookeeper.connect`` chroot), reads every znode Kafka's controller and brokers keep
(``KafkaZkClient``, Kafka 3.9: broker registrations, topic assignments and partition states,
controller, configs, features, admin requests, old consumers' offsets) and returns a
:class:`~kafkalog.cluster.model.ClusterModel` with ``source="zookeeper"``. Reading is
read-only; a znode that does not decode becomes a warning naming its path, the rest is read.

Where ZooKeeper carries more than the JSON: a broker's epoch is the creation zxid of its
registration znode (KIP-380, ``KafkaZkClient.getAllBrokerAndEpochsInCluster``) and a partition's
epoch is its state znode's data version (``LeaderAndIsr.partitionEpoch``).

``kazoo`` is an optional dependency (``pip install 'kafkalog[cluster]'``).

Example
-------
>>> model = read_cluster("127.0.0.1:2181/kafka")     # doctest: +SKIP
>>> sorted(model.live_brokers())                      # doctest: +SKIP
[1, 2, 3]
"""

from __future__ import annotations

from typing import Any

from ..errors import KafkaLogError
from .model import ClusterModel, PartitionRegistration
from .znodes import (
    InvalidZnodeError,
    decode_broker_id_znode,
    decode_cluster_id_znode,
    decode_config_znode,
    decode_controller_znode,
    decode_feature_znode,
    decode_int_znode,
    decode_partition_state_znode,
    decode_preferred_replica_election_znode,
    decode_producer_id_block_znode,
    decode_reassign_partitions_znode,
    decode_topic_znode,
)

__all__ = ["ZooKeeperError", "read_cluster", "connect"]

DEFAULT_TIMEOUT_S = 10.0


class ZooKeeperError(KafkaLogError):
    """ZooKeeper could not be reached or read (``path`` is the connect string)."""


def connect(connect_string: str, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> Any:
    """A started, read-only ``kazoo`` client for ``HOST:PORT[,HOST:PORT...][/chroot]``.

    Raises :class:`ZooKeeperError` when kazoo is missing or no server answers in time.
    """
    try:
        from kazoo.client import KazooClient
        from kazoo.handlers.threading import KazooTimeoutError
    except ImportError:
        raise ZooKeeperError("reading ZooKeeper needs kazoo: pip install 'kafkalog[cluster]'",
                             path=connect_string) from None
    client = KazooClient(hosts=connect_string, timeout=timeout_s, read_only=True)
    try:
        client.start(timeout=timeout_s)
    except KazooTimeoutError:
        client.close()
        raise ZooKeeperError(f"no ZooKeeper server answered within {timeout_s:g} s",
                             path=connect_string) from None
    return client


class _Reader:
    """One pass over the znodes; decode failures become model warnings."""

    def __init__(self, client: Any, model: ClusterModel) -> None:
        self.client = client
        self.model = model

    def get(self, path: str) -> tuple[bytes | None, Any] | None:
        from kazoo.exceptions import NoNodeError

        try:
            data, stat = self.client.get(path)
        except NoNodeError:
            return None
        return data, stat

    def children(self, path: str) -> list[str]:
        from kazoo.exceptions import NoNodeError

        try:
            return sorted(self.client.get_children(path))
        except NoNodeError:
            return []

    def decode(self, path: str, fn: Any, *args: Any) -> Any:
        got = self.get(path)
        if got is None:
            return None
        try:
            return fn(*args, got[0], path=path) if args else fn(got[0], path=path)
        except InvalidZnodeError as e:
            self.model.warnings.append(str(e))
            return None


def read_cluster(connect_string: str, *, timeout_s: float = DEFAULT_TIMEOUT_S,
                 client: Any = None) -> ClusterModel:
    """Read a ZooKeeper-mode cluster into a :class:`ClusterModel`.

    ``client`` reuses a started kazoo client (its chroot applies); otherwise one is opened on
    ``connect_string`` and closed afterwards. Raises :class:`ZooKeeperError` when ZooKeeper
    cannot be reached; a chroot without Kafka's znodes gives a model with a warning.
    """
    own = client is None
    zk = connect(connect_string, timeout_s=timeout_s) if own else client
    try:
        return _read(zk, connect_string)
    finally:
        if own:
            zk.stop()
            zk.close()


def _read(zk: Any, connect_string: str) -> ClusterModel:
    model = ClusterModel(source="zookeeper")
    r = _Reader(zk, model)
    if r.get("/brokers") is None:
        model.warnings.append(f"{connect_string}: no /brokers znode (not a Kafka cluster's "
                              "ZooKeeper, or the wrong chroot?)")
    model.cluster_id = r.decode("/cluster/id", decode_cluster_id_znode)
    model.controller = r.decode("/controller", decode_controller_znode)
    model.controller_epoch = r.decode("/controller_epoch", decode_int_znode)
    if model.controller is not None and not model.controller.kraft \
            and model.controller_epoch is not None:
        model.controller.epoch = model.controller_epoch      # a ZooKeeper controller's epoch

    for child in r.children("/brokers/ids"):
        if not child.lstrip("-").isdigit():
            model.warnings.append(f"/brokers/ids/{child}: not a broker id")
            continue
        path = f"/brokers/ids/{child}"
        got = r.get(path)
        if got is None:
            continue                                   # the session ended while we read
        try:
            broker = decode_broker_id_znode(int(child), got[0], path=path)
        except InvalidZnodeError as e:
            model.warnings.append(str(e))
            continue
        broker.epoch = got[1].czxid                     # KIP-380 broker epoch
        model.brokers[broker.id] = broker

    for name in r.children("/brokers/topics"):
        _read_topic(r, name)

    for entity in r.children("/config"):
        if entity == "changes":
            continue
        for name in r.children(f"/config/{entity}"):
            conf = r.decode(f"/config/{entity}/{name}", decode_config_znode)
            if conf:
                model.configs[(entity, "" if name == "<default>" else name)] = conf

    feature = r.decode("/feature", decode_feature_znode)
    if feature is not None:
        model.feature_znode_version, _status, model.features = feature
    model.producer_id_block = r.decode("/latest_producer_id_block",
                                       decode_producer_id_block_znode)
    model.reassignments = r.decode("/admin/reassign_partitions",
                                   decode_reassign_partitions_znode) or {}
    model.preferred_replica_election = r.decode("/admin/preferred_replica_election",
                                                decode_preferred_replica_election_znode) or []
    model.topics_being_deleted = r.children("/admin/delete_topics")
    _read_consumer_offsets(r)
    return model


def _read_topic(r: _Reader, name: str) -> None:
    model = r.model
    path = f"/brokers/topics/{name}"
    topic = r.decode(path, decode_topic_znode, name)
    if topic is None:
        return
    for pid, part in sorted(topic.partitions.items()):
        spath = f"{path}/partitions/{pid}/state"
        got = r.get(spath)
        if got is None:
            model.notes.append(f"{spath}: no partition state (the controller has not "
                               "elected a leader yet)")
            continue
        try:
            state: PartitionRegistration = decode_partition_state_znode(
                got[0], got[1].version, path=spath)
        except InvalidZnodeError as e:
            model.warnings.append(str(e))
            continue
        state.replicas = part.replicas
        state.adding_replicas = part.adding_replicas
        state.removing_replicas = part.removing_replicas
        topic.partitions[pid] = state
    model.topics[name] = topic


def _read_consumer_offsets(r: _Reader) -> None:
    for group in r.children("/consumers"):
        for topic in r.children(f"/consumers/{group}/offsets"):
            for part in r.children(f"/consumers/{group}/offsets/{topic}"):
                path = f"/consumers/{group}/offsets/{topic}/{part}"
                got = r.get(path)
                if got is None or not got[0] or not part.isdigit():   # no data: no offset
                    continue
                try:
                    offset = decode_int_znode(got[0], path=path)
                except InvalidZnodeError as e:
                    r.model.warnings.append(str(e))
                    continue
                r.model.consumer_offsets.setdefault(group, {}).setdefault(
                    topic, {})[int(part)] = offset
