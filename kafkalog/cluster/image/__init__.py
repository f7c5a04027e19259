"""KRaft's metadata image, rebuilt from a ``__cluster_metadata`` log or snapshot, and browsed
as Kafka's node tree (``org.apache.kafka.image`` and ``org.apache.kafka.image.node``).

=====================  ============================================================================
``node``               the node tree's base: directories, files, printers, redaction criteria
``registrations``      the image's values (brokers, controllers, partitions, ACLs, ...) and
                       their Java ``toString`` texts
``metadata_image``     the image: features, cluster, topics, configs, quotas, producer ids,
                       ACLs, SCRAM, delegation tokens, provenance
``metadata_delta``     Kafka's replay rules: one record applied to the image
``metadata_loader``    a segment, snapshot or metadata partition read into an image (with
                       metadata transactions and faults)
``image_nodes``        the image as ``/image/...`` nodes (what ``kafkalog metadata-shell`` shows)
=====================  ============================================================================

Example
-------
>>> image = load_metadata_image("/var/kafka-logs/__cluster_metadata-0")   # doctest: +SKIP
>>> MetadataImageNode(image).child("producerIds").stringify()              # doctest: +SKIP
'nextProducerId(2000)'
"""

from __future__ import annotations

from .image_nodes import MetadataImageNode
from .metadata_delta import MetadataDelta, MetadataReplayError
from .metadata_image import MetadataImage, MetadataProvenance, TopicImage
from .metadata_loader import LoadedMetadata, load_metadata, load_metadata_image
from .node import (
    DISABLED,
    STRICT,
    MetadataLeafNode,
    MetadataNode,
    MetadataNodePrinter,
    MetadataNodeRedactionCriteria,
    NodeStringifier,
)

__all__ = [
    "DISABLED",
    "STRICT",
    "LoadedMetadata",
    "MetadataDelta",
    "MetadataImage",
    "MetadataImageNode",
    "MetadataLeafNode",
    "MetadataNode",
    "MetadataNodePrinter",
    "MetadataNodeRedactionCriteria",
    "MetadataProvenance",
    "MetadataReplayError",
    "NodeStringifier",
    "TopicImage",
    "load_metadata",
    "load_metadata_image",
]
