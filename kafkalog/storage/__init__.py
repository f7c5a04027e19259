"""Formatting and inspecting a KRaft node's storage: Kafka's ``kafka-storage.sh``.

A KRaft node refuses to start on directories it cannot account for: each log directory needs a
``meta.properties`` (cluster id, node id, directory id) and the metadata directory a
``bootstrap.checkpoint`` with the cluster's initial feature levels. This package reads and
writes those files as Kafka 4.2 does:

* :mod:`~kafkalog.storage.meta_properties_ensemble`: all of a node's ``meta.properties``,
  checked together (``MetaPropertiesEnsemble``);
* :mod:`~kafkalog.storage.bootstrap_metadata`: the bootstrap records (``BootstrapMetadata``,
  ``--add-scram``'s ``ScramParser``);
* :mod:`~kafkalog.storage.kraft_snapshot`: ``bootstrap.checkpoint`` and a dynamic quorum's
  bootstrap snapshot, byte for byte;
* :mod:`~kafkalog.storage.dynamic_voters`: KIP-853 initial controllers;
* :mod:`~kafkalog.storage.storage_config`: what the tool reads from ``server.properties``;
* :mod:`~kafkalog.storage.formatter`: ``Formatter`` (``kafka-storage.sh format``);
* :mod:`~kafkalog.storage.command`: ``kafkalog storage info|format|version-mapping|
  feature-dependencies|random-uuid``.

Example
-------
>>> import io, os, tempfile
>>> d = tempfile.mkdtemp()
>>> Formatter(node_id=1, cluster_id="XcZZOzUqS4yHOjhMQB6JLQ", directories=[d],
...           controller_listener_name="CONTROLLER").run().metadata_version_level
29
>>> load([d]).log_dir_props[d].cluster_id
'XcZZOzUqS4yHOjhMQB6JLQ'
"""

from .bootstrap_metadata import BootstrapMetadata, FormatterError, MetadataRecord
from .dynamic_voters import DynamicVoter, DynamicVoters
from .formatter import Formatter
from .meta_properties_ensemble import MetaPropertiesEnsemble, load

__all__ = ["BootstrapMetadata", "DynamicVoter", "DynamicVoters", "Formatter", "FormatterError",
           "MetaPropertiesEnsemble", "MetadataRecord", "load"]
