"""KIP-932 share groups ("queues for Kafka"): records of a partition handed to whichever member
fetches, each locked to it until acknowledged.

* :mod:`.share_partition`: the per-(group, partition) record states, acquisition locks and
  delivery counts (Kafka's ``SharePartition``).
* :mod:`.share_group`: membership, heartbeats and the target assignment of the ``simple``
  assignor (Kafka's ``ShareGroup`` and the share-group paths of ``GroupMetadataManager``).
"""

from __future__ import annotations

from .share_partition import AcknowledgeType, InvalidRecordStateError, RecordState, SharePartition

__all__ = ["SharePartition", "RecordState", "AcknowledgeType", "InvalidRecordStateError"]
