"""Cluster metadata: what a Kafka cluster's controller knows, rebuilt from its files or its
ZooKeeper, and what it would do next.

==========================  ====================================================================
``model``                   the cluster model: brokers, topics, partitions (replicas, ISR,
                            leader, epochs, ELR), controller, configs, features
``kraft``                   replay of a KRaft ``__cluster_metadata`` log into the model
``consumer_offsets``        committed offsets from ``__consumer_offsets`` (old consumers' znodes)
``zookeeper``               a ZooKeeper-mode cluster's znodes into the model (kazoo)
``znodes``                  the znode layout in every shape Kafka wrote (encode, decode, render)
``election``                Kafka's leader election algorithms; :func:`elect_leader`
``partition_change``        KRaft's ``PartitionChangeBuilder`` (ISR, ELR, epochs, reassignment)
``metadata_version``        KRaft ``metadata.version`` levels and what each switches on
``features``                cluster features (KIP-584/1022): levels, defaults, update rules
``replication_control``     the KRaft controller's reactions (fence, controlled shutdown, ...)
``zk_controller``           the ZooKeeper-mode controller's reactions
``what_if``                 scenarios ("broker 2 down") over a copy of the model
``command``                 ``kafkalog cluster-state``
==========================  ====================================================================

Example
-------
>>> from kafkalog.cluster import elect_leader
>>> elect_leader([1, 2, 3], [2, 3], {1, 2, 3})
2
"""

from __future__ import annotations

from typing import Any

from .election import elect_leader
from .model import Broker, ClusterModel, PartitionRegistration, Topic

__all__ = [
    "elect_leader",
    "Broker",
    "ClusterModel",
    "PartitionRegistration",
    "Topic",
    "PartitionChangeBuilder",
    "read_log_dir",
    "read_cluster",
    "render",
    "ZnodeFormat",
]

_LAZY = {
    "PartitionChangeBuilder": ("partition_change", "PartitionChangeBuilder"),
    "read_log_dir": ("kraft", "read_log_dir"),
    "read_cluster": ("zookeeper", "read_cluster"),
    "render": ("znodes", "render"),
    "ZnodeFormat": ("znodes", "ZnodeFormat"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        return getattr(importlib.import_module(f"{__name__}.{module}"), attr)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
