"""Kafka's replay rules for metadata records (``MetadataDelta`` and the per-image deltas).

:meth:`MetadataDelta.replay` applies one decoded record (``{"name": ..., "data": ...}`` from
:func:`kafkalog.decoders.cluster_metadata.decode_record_obj`) to an image in place. The rules
are those of Kafka 4.2's ``metadata/src/main/java/org/apache/kafka/image/*Delta.java``:

- a record Kafka rejects (fencing an unknown broker or with another epoch, changing an unknown
  partition, removing an unknown topic or ACL, an unsupported ``metadata.version``, a record
  type the image does not know) raises :class:`MetadataReplayError` with Kafka's text and
  leaves the image unchanged; the loader reports it and goes on, as Kafka's fault handler does;
- ``kraft.version`` feature records are skipped (KAFKA-18979); a feature at level 0 is removed;
- ``RemoveTopicRecord`` drops the topic and its configs; ``ClearElrRecord`` clears the ELR and
  last known ELR of one topic's partitions (or of all topics when its name is empty), each
  cleared partition getting a new partition epoch;
- ``NoOpRecord`` and ``ZkMigrationStateRecord`` change nothing.

Example
-------
>>> from kafkalog.cluster.image.metadata_image import MetadataImage
>>> image = MetadataImage()
>>> MetadataDelta(image).replay({"name": "ProducerIdsRecord",
...                              "data": {"brokerId": 1, "brokerEpoch": 5, "nextProducerId": 2000}})
>>> image.next_producer_id
2000
"""

from __future__ import annotations

from typing import Any

from ..metadata_version import LEVELS, MINIMUM_LEVEL
from ..model import MIGRATING_DIR, NO_LEADER_CHANGE, PartitionChangeRecord, PartitionRegistration
from .metadata_image import ClientQuotaEntity, MetadataImage, TopicImage
from .registrations import (
    BrokerRegistration,
    ControllerRegistration,
    DelegationTokenData,
    ScramCredentialData,
    StandardAcl,
)

__all__ = ["MetadataDelta", "MetadataReplayError"]

METADATA_VERSION = "metadata.version"
KRAFT_VERSION = "kraft.version"
TOPIC_RESOURCE = 2
# records a MetadataDelta accepts and leaves the image as it was
_NO_CHANGE = frozenset({"NoOpRecord", "ZkMigrationStateRecord"})


class MetadataReplayError(ValueError):
    """A record Kafka's image would not apply (the message is Kafka's)."""


class MetadataDelta:
    """Applies records to ``image`` in place (Kafka's ``MetadataDelta.replay`` rules)."""

    def __init__(self, image: MetadataImage) -> None:
        self.image = image

    def replay(self, record: dict[str, Any]) -> None:
        """Apply one decoded record; :class:`MetadataReplayError` when Kafka rejects it."""
        name = record["name"]
        if name in _NO_CHANGE:
            return
        handler = getattr(self, "_" + name, None)
        if handler is None:
            raise MetadataReplayError(f"Unknown metadata record type {record.get('type', name)}")
        handler(record["data"])

    # -- features -----------------------------------------------------------------------------

    def _FeatureLevelRecord(self, d: dict[str, Any]) -> None:
        level = d["featureLevel"]
        if d["name"] == METADATA_VERSION:
            if level < MINIMUM_LEVEL or level not in LEVELS:
                raise MetadataReplayError(
                    "Unsupported metadata version - if you are currently upgrading your "
                    "cluster, please ensure the metadata version is set to "
                    f"{LEVELS[MINIMUM_LEVEL]} (or higher) before updating the "
                    "software version. The metadata version can be updated via the "
                    "`kafka-features` command-line tool.")
            self.image.metadata_version = level
        elif d["name"] == KRAFT_VERSION:
            return                        # KAFKA-18979: never part of the image
        elif level == 0:
            self.image.finalized_features.pop(d["name"], None)
        else:
            self.image.finalized_features[d["name"]] = level

    # -- cluster ------------------------------------------------------------------------------

    def _RegisterBrokerRecord(self, d: dict[str, Any]) -> None:
        b = BrokerRegistration.from_record(d)
        self.image.brokers[b.id] = b

    def _UnregisterBrokerRecord(self, d: dict[str, Any]) -> None:
        self.image.brokers.pop(d["brokerId"], None)

    def _RegisterControllerRecord(self, d: dict[str, Any]) -> None:
        try:
            c = ControllerRegistration.from_record(d)
        except ValueError as e:
            raise MetadataReplayError(str(e)) from e
        self.image.controllers[c.id] = c

    def _broker_or_throw(self, broker_id: int, epoch: int, action: str) -> BrokerRegistration:
        b = self.image.brokers.get(broker_id)
        if b is None:
            raise MetadataReplayError(f"Tried to {action} broker {broker_id}, but that broker "
                                      "was not registered.")
        if b.epoch != epoch:
            raise MetadataReplayError(
                f"Tried to {action} broker {broker_id}, but the given epoch, {epoch}, did not "
                f"match the current broker epoch, {b.epoch}")
        return b

    def _FenceBrokerRecord(self, d: dict[str, Any]) -> None:
        b = self._broker_or_throw(d["id"], d["epoch"], "fence")
        self.image.brokers[b.id] = b.clone_with(True, None, None)

    def _UnfenceBrokerRecord(self, d: dict[str, Any]) -> None:
        b = self._broker_or_throw(d["id"], d["epoch"], "unfence")
        self.image.brokers[b.id] = b.clone_with(False, None, None)

    def _BrokerRegistrationChangeRecord(self, d: dict[str, Any]) -> None:
        b = self._broker_or_throw(d["brokerId"], d["brokerEpoch"], "change")
        # BrokerRegistrationFencingChange: -1 unfence, 0 none, 1 fence;
        # BrokerRegistrationInControlledShutdownChange: 0 none, 1 in controlled shutdown
        fenced = {-1: False, 0: None, 1: True}
        shutdown = {0: None, 1: True}
        if d.get("fenced", 0) not in fenced:
            raise MetadataReplayError(f"Unable to replay {_record_text(d)}: unknown value for "
                                      f"fenced field: {d['fenced']}")
        if d.get("inControlledShutdown", 0) not in shutdown:
            raise MetadataReplayError(
                f"Unable to replay {_record_text(d)}: unknown value for inControlledShutdown "
                f"field: {d['inControlledShutdown']}")
        dirs = d.get("logDirs") or None          # an empty list is "no change"
        self.image.brokers[b.id] = b.clone_with(fenced[d.get("fenced", 0)],
                                                shutdown[d.get("inControlledShutdown", 0)], dirs)

    # -- topics -------------------------------------------------------------------------------

    def _TopicRecord(self, d: dict[str, Any]) -> None:
        old = self.image.topics_by_name.get(d["name"])
        if old is not None and old.id != d["topicId"]:
            self.image.topics_by_id.pop(old.id, None)
        topic = TopicImage(d["name"], d["topicId"])
        self.image.topics_by_id[topic.id] = topic
        self.image.topics_by_name[topic.name] = topic

    def _topic(self, topic_id: str) -> TopicImage:
        topic = self.image.topics_by_id.get(topic_id)
        if topic is None:
            raise MetadataReplayError(f"Unable to find topic with id {topic_id}")
        return topic

    def _PartitionRecord(self, d: dict[str, Any]) -> None:
        topic = self._topic(d["topicId"])
        replicas = list(d["replicas"])
        dirs = list(d.get("directories") or [])
        if dirs and len(dirs) != len(replicas):
            raise MetadataReplayError(
                f"The lengths for replicas and directories do not match: {_record_text(d)}")
        part = PartitionRegistration.from_record(d)
        part.directories = _default_to_migrating(dirs, len(replicas))
        topic.partitions[d["partitionId"]] = part

    def _PartitionChangeRecord(self, d: dict[str, Any]) -> None:
        topic = self.image.topics_by_id.get(d["topicId"])
        part = topic.partitions.get(d["partitionId"]) if topic is not None else None
        if part is None:
            raise MetadataReplayError(f"Unable to find partition {d['topicId']}:"
                                      f"{d['partitionId']}")
        if (d.get("replicas") is not None and d.get("directories")
                and len(d["replicas"]) != len(d["directories"])):
            raise MetadataReplayError(
                f"The lengths for replicas and directories do not match: {_record_text(d)}")
        record = PartitionChangeRecord.from_record(d)
        if record.leader is None:                 # absent in old record versions
            record.leader = NO_LEADER_CHANGE
        merged = part.merge(record)
        merged.directories = _default_to_migrating(merged.directories, len(merged.replicas))
        topic.partitions[d["partitionId"]] = merged

    def _ClearElrRecord(self, d: dict[str, Any]) -> None:
        name = d.get("topicName") or ""
        if name:
            topic = self.image.topics_by_name.get(name)
            if topic is None:
                raise MetadataReplayError(f"Unable to clear elr for topic with name {name}: "
                                          "no such topic found.")
            topics = [topic]
        else:
            topics = list(self.image.topics_by_id.values())
        for topic in topics:
            for pid, part in list(topic.partitions.items()):
                if part.elr or part.last_known_elr:       # TopicDelta.maybeClearElr
                    clear = PartitionChangeRecord(partition_id=pid, topic_id=topic.id,
                                                  eligible_leader_replicas=[],
                                                  last_known_elr=[])
                    topic.partitions[pid] = part.merge(clear)

    def _RemoveTopicRecord(self, d: dict[str, Any]) -> None:
        topic = self.image.topics_by_id.get(d["topicId"])
        if topic is None:
            raise MetadataReplayError(f"Unable to delete topic with id {d['topicId']}: no such "
                                      "topic found.")
        del self.image.topics_by_id[topic.id]
        if self.image.topics_by_name.get(topic.name) is topic:
            del self.image.topics_by_name[topic.name]
        self.image.configs.pop((TOPIC_RESOURCE, topic.name), None)

    # -- configs, quotas, producer ids --------------------------------------------------------

    def _ConfigRecord(self, d: dict[str, Any]) -> None:
        key = (d["resourceType"], d["resourceName"])
        conf = self.image.configs.setdefault(key, {})
        if d.get("value") is None:
            conf.pop(d["name"], None)
        else:
            conf[d["name"]] = d["value"]
        if not conf:                             # an empty resource is not kept
            del self.image.configs[key]

    def _ClientQuotaRecord(self, d: dict[str, Any]) -> None:
        entity: ClientQuotaEntity = tuple(sorted(
            {e["entityType"]: e["entityName"] for e in d["entity"]}.items()))
        quotas = self.image.client_quotas.setdefault(entity, {})
        if d.get("remove"):
            quotas.pop(d["key"], None)
        else:
            quotas[d["key"]] = float(d["value"])
        if not quotas:
            del self.image.client_quotas[entity]

    def _ProducerIdsRecord(self, d: dict[str, Any]) -> None:
        self.image.next_producer_id = d["nextProducerId"]

    # -- security -----------------------------------------------------------------------------

    def _AccessControlEntryRecord(self, d: dict[str, Any]) -> None:
        self.image.acls[d["id"]] = StandardAcl.from_record(d)

    def _RemoveAccessControlEntryRecord(self, d: dict[str, Any]) -> None:
        if self.image.acls.pop(d["id"], None) is None:
            raise MetadataReplayError(f"Failed to find existing ACL with ID {d['id']} in either "
                                      "image or changes")

    def _UserScramCredentialRecord(self, d: dict[str, Any]) -> None:
        users = self.image.scram.setdefault(d["mechanism"], {})
        users[d["name"]] = ScramCredentialData.from_record(d)

    def _RemoveUserScramCredentialRecord(self, d: dict[str, Any]) -> None:
        users = self.image.scram.get(d["mechanism"], {})
        users.pop(d["name"], None)
        if not users:
            self.image.scram.pop(d["mechanism"], None)

    def _DelegationTokenRecord(self, d: dict[str, Any]) -> None:
        self.image.delegation_tokens[d["tokenId"]] = DelegationTokenData.from_record(d)

    def _RemoveDelegationTokenRecord(self, d: dict[str, Any]) -> None:
        self.image.delegation_tokens.pop(d["tokenId"], None)


def _default_to_migrating(directories: list[str], n_replicas: int) -> list[str]:
    """``PartitionRegistration.defaultToMigrating``: no directories, or only MIGRATING ones,
    become MIGRATING for every replica."""
    if all(x == MIGRATING_DIR for x in directories):
        return [MIGRATING_DIR] * n_replicas
    return list(directories)


def _record_text(d: dict[str, Any]) -> str:
    return "(" + ", ".join(f"{k}={v}" for k, v in d.items()) + ")"
