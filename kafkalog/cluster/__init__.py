"""Cluster metadata: what a Kafka cluster's controller knows, rebuilt from its files.

``cluster_state`` replays a KRaft ``__cluster_metadata`` log into the ZooKeeper znode layout.
"""
