"""Tiered storage (KIP-405) metadata, offline: the ``__remote_log_metadata`` topic replayed as
Kafka's topic-based remote log metadata manager replays it.

* :mod:`~kafkalog.tiered.partitioner`: which metadata partition holds a topic partition
  (``RemoteLogMetadataTopicPartitioner``);
* :mod:`~kafkalog.tiered.metadata_cache`: one topic partition's remote segments and their
  lifecycle (``RemoteLogMetadataCache``, ``RemoteLogLeaderEpochState``);
* :mod:`~kafkalog.tiered.metadata_store`: every partition's, read from a ``log.dirs`` tree
  (``RemotePartitionMetadataStore``), with what Kafka would drop reported;
* :mod:`~kafkalog.tiered.coverage`: offsets neither a copied remote segment nor the local log
  holds (gaps), against the tree's partition directories;
* :mod:`~kafkalog.tiered.remote_offsets`: a partition's highest remote offset and remote log
  start offset as its leader finds them (ListOffsets' tiered values, ``kafkalog get-offsets``);
* :mod:`~kafkalog.tiered.command`: ``kafkalog tiered``;
* :mod:`~kafkalog.tiered.aiven_rsm`: the remote segment objects themselves as Aiven's plugin
  stores them, restored as partition directories (``kafkalog tiered-restore``).

The records themselves are :mod:`kafkalog.decoders.remote_log_metadata`.
"""

from .metadata_cache import RemoteLogMetadataCache, RemoteLogSegmentId, RemoteLogSegmentMetadata
from .metadata_store import Finding, RemoteLogMetadataStore, TopicIdPartition, read_log_dirs
from .partitioner import metadata_partition

__all__ = ["Finding", "RemoteLogMetadataCache", "RemoteLogMetadataStore", "RemoteLogSegmentId",
           "RemoteLogSegmentMetadata", "TopicIdPartition", "metadata_partition", "read_log_dirs"]
