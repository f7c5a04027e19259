"""KRaft's metadata image: everything the controller quorum has committed, as a broker holds it.

Kafka's ``MetadataImage`` is a set of immutable sub-images (features, cluster, topics, configs,
client quotas, producer ids, ACLs, SCRAM, delegation tokens) plus its provenance (the offset,
epoch and append time of the last record it contains). Here the sub-images are plain maps kept
by :class:`~kafkalog.cluster.image.metadata_delta.MetadataDelta`, which applies records in the
order of the log; the image is what the shell and other readers browse.

Invariants: ``topics_by_id[t.id] is topics_by_name[t.name]`` for every topic; a config
resource or client-quota entity with no keys is not kept (Kafka drops empty ones); a
``metadata_version`` of ``None`` means no ``metadata.version`` record was seen.

Example
-------
>>> image = MetadataImage()
>>> image.provenance
MetadataProvenance(last_contained_offset=-1, last_contained_epoch=-1, last_contained_log_time_ms=-1)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model import PartitionRegistration
from .registrations import (
    BrokerRegistration,
    ControllerRegistration,
    DelegationTokenData,
    ScramCredentialData,
    StandardAcl,
)

__all__ = ["MetadataImage", "MetadataProvenance", "TopicImage", "ClientQuotaEntity",
           "CONFIG_RESOURCE_TYPES"]

# ConfigResource.Type: id -> name, in the enum's declaration order (Kafka 4.2), which is the
# order ConfigurationsImageNode.resourceFromName tries prefixes in
CONFIG_RESOURCE_TYPES: dict[int, str] = {32: "GROUP", 16: "CLIENT_METRICS", 8: "BROKER_LOGGER",
                                         4: "BROKER", 2: "TOPIC", 0: "UNKNOWN"}

#: a client-quota entity: its (entity type, name) pairs, sorted; a ``None`` name is the default
ClientQuotaEntity = tuple[tuple[str, "str | None"], ...]


@dataclass(frozen=True)
class MetadataProvenance:
    """Where an image ends in the log (``MetadataProvenance``)."""

    last_contained_offset: int = -1
    last_contained_epoch: int = -1
    last_contained_log_time_ms: int = -1


@dataclass
class TopicImage:
    """A topic: its name, id and partitions (``TopicImage``)."""

    name: str
    id: str
    partitions: dict[int, PartitionRegistration] = field(default_factory=dict)


@dataclass
class MetadataImage:
    """The metadata image (``MetadataImage``); see the module docstring for the invariants."""

    provenance: MetadataProvenance = field(default_factory=MetadataProvenance)
    # features: finalized levels of the features other than metadata.version and kraft.version
    finalized_features: dict[str, int] = field(default_factory=dict)
    metadata_version: int | None = None
    brokers: dict[int, BrokerRegistration] = field(default_factory=dict)
    controllers: dict[int, ControllerRegistration] = field(default_factory=dict)
    topics_by_id: dict[str, TopicImage] = field(default_factory=dict)
    topics_by_name: dict[str, TopicImage] = field(default_factory=dict)
    # (ConfigResource.Type id, resource name) -> key -> value; "" names a default resource
    configs: dict[tuple[int, str], dict[str, str]] = field(default_factory=dict)
    client_quotas: dict[ClientQuotaEntity, dict[str, float]] = field(default_factory=dict)
    next_producer_id: int = -1
    acls: dict[str, StandardAcl] = field(default_factory=dict)
    # SCRAM mechanism type (1 SHA-256, 2 SHA-512) -> user -> credential
    scram: dict[int, dict[str, ScramCredentialData]] = field(default_factory=dict)
    delegation_tokens: dict[str, DelegationTokenData] = field(default_factory=dict)

    def is_empty(self) -> bool:
        """True when no record has been applied (``MetadataImage.EMPTY``)."""
        return self == MetadataImage()
