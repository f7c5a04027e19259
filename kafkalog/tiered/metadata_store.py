"""Tiered storage's state, replayed offline from the ``__remote_log_metadata`` partitions of a
``log.dirs`` tree (what ``TopicBasedRemoteLogMetadataManager`` rebuilds when a broker starts).

:class:`RemoteLogMetadataStore` is Kafka's ``RemotePartitionMetadataStore``: one
:class:`~kafkalog.tiered.metadata_cache.RemoteLogMetadataCache` per topic partition (keyed by
topic id, name and number, as ``TopicIdPartition`` is) and the last partition-delete event of
each; ``DELETE_PARTITION_FINISHED`` forgets the partition. Offline every partition is loaded (a
broker loads only those it hosts, and refuses events of others).

What Kafka would drop or fail on is reported, never silently skipped: a record that does not
decode or that the serde rejects, an invalid state transition, an update of an unknown segment,
an event in another metadata partition than the partitioner's (the topic's partition count
differs from ``remote.log.metadata.topic.num.partitions``), and a corrupt batch (the partition is
read up to it). Each :class:`Finding` names the metadata partition and offset.

Example
-------
>>> import tempfile
>>> from kafkalog import Log, Record
>>> from kafkalog.decoders import remote_log_metadata as rlmm
>>> root = tempfile.mkdtemp()
>>> tip = {"name": "orders", "id": "AAAAAAAAAAAAAAAAAAAAyg", "partition": 7}
>>> value = rlmm.encode_record(2, {"topicIdPartition": tip, "brokerId": 1,
...     "eventTimestampMs": 5, "remotePartitionDeleteState": 0})
>>> with Log.open(f"{root}/__remote_log_metadata-31") as log:
...     _ = log.append([Record(None, value, 5)])
>>> store = read_log_dirs([root])
>>> [(p.topic, p.partition, d.state) for p, d in store.partition_deletes.items()], store.findings
([('orders', 7, 'DELETE_PARTITION_MARKED')], [])
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from ..decoders import remote_log_metadata as rlmm
from ..errors import CorruptRecordError, KafkaLogError
from ..log import Log
from .metadata_cache import RemoteLogMetadataCache, RemoteLogSegmentId, RemoteLogSegmentMetadata
from .partitioner import DEFAULT_METADATA_TOPIC_PARTITIONS, metadata_partition

__all__ = ["METADATA_TOPIC", "Finding", "TopicIdPartition", "PartitionDeleteMetadata",
           "RemoteLogMetadataStore", "metadata_partition_dirs", "read_log_dirs"]

METADATA_TOPIC = "__remote_log_metadata"
DELETE_PARTITION_FINISHED = "DELETE_PARTITION_FINISHED"


class TopicIdPartition(NamedTuple):
    """Kafka's ``TopicIdPartition``: topic id, topic name, partition number."""

    topic_id: str
    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic_id}:{self.topic}-{self.partition}"


@dataclass(frozen=True)
class PartitionDeleteMetadata:
    """The last ``RemotePartitionDeleteMetadata`` event of a partition."""

    state: str
    broker_id: int
    event_timestamp_ms: int
    event_offset: tuple[int, int]


@dataclass(frozen=True)
class Finding:
    """Something Kafka's manager would drop or fail on, at ``offset`` of metadata
    ``partition`` (offset None: a whole-partition finding)."""

    partition: int
    offset: int | None
    message: str

    def __str__(self) -> str:
        at = f"{METADATA_TOPIC}-{self.partition}"
        return f"{at} offset {self.offset}: {self.message}" if self.offset is not None \
            else f"{at}: {self.message}"


class RemoteLogMetadataStore:
    """Apply ``__remote_log_metadata`` records in each metadata partition's offset order.

    ``num_partitions`` (``remote.log.metadata.topic.num.partitions``) is used to check that
    each event sits in the partition the partitioner gives its topic partition; None skips the
    check.
    """

    def __init__(self, num_partitions: int | None = DEFAULT_METADATA_TOPIC_PARTITIONS) -> None:
        self.num_partitions = num_partitions
        self.caches: dict[TopicIdPartition, RemoteLogMetadataCache] = {}
        self.partition_deletes: dict[TopicIdPartition, PartitionDeleteMetadata] = {}
        self.findings: list[Finding] = []
        self.events = 0
        self._placed: set[tuple[TopicIdPartition, int]] = set()

    def cache(self, tip: TopicIdPartition) -> RemoteLogMetadataCache:
        """The cache of ``tip`` (created empty when it has none yet: ``maybeLoadPartition``)."""
        c = self.caches.get(tip)
        if c is None:
            c = self.caches[tip] = RemoteLogMetadataCache()
        return c

    def apply(self, value: bytes | None, partition: int, offset: int) -> None:
        """Apply one record value read at ``offset`` of metadata ``partition``."""
        try:
            rec = rlmm.decode_record_obj(None, value)
            epochs = rlmm.validate(rec)  # the serde's object checks (states, offsets, epochs)
        except CorruptRecordError as e:
            kafka = getattr(e, "kafka_message", None)
            self.findings.append(Finding(partition, offset, f"record not applied: {e.message}"
                                         + (f" (Kafka: {kafka})" if kafka else "")))
            return
        self.events += 1
        at = (partition, offset)
        d, key = rec["data"], rec["api_key"]
        if key == 3:
            self.findings.append(Finding(partition, offset, "a snapshot record "
                                         "(RemoteLogSegmentMetadataSnapshotRecord) in the topic: "
                                         "Kafka writes those only to its snapshot files"))
            return
        tip_data = d["topicIdPartition"] if key == 2 else \
            d["remoteLogSegmentId"]["topicIdPartition"]
        tip = TopicIdPartition(tip_data["id"], tip_data["name"], tip_data["partition"])
        if self.num_partitions is not None and (tip, partition) not in self._placed:
            self._placed.add((tip, partition))  # (one finding per partition pair, the first)
            expected = metadata_partition(tip.topic_id, tip.partition, self.num_partitions)
            if expected != partition:
                self.findings.append(Finding(partition, offset, f"event of {tip} in metadata "
                                             f"partition {partition}, the partitioner gives "
                                             f"{expected} of {self.num_partitions} (first such "
                                             "event; a different partition count?)"))
        if key == 2:
            state = rlmm.PARTITION_DELETE_STATES[d["remotePartitionDeleteState"]]
            if state == DELETE_PARTITION_FINISHED:
                self.caches.pop(tip, None)
                self.partition_deletes.pop(tip, None)
            else:
                self.partition_deletes[tip] = PartitionDeleteMetadata(
                    state, d["brokerId"], d["eventTimestampMs"], at)
            return
        sid = d["remoteLogSegmentId"]
        seg = RemoteLogSegmentId(tip.topic_id, tip.topic, tip.partition, sid["id"])
        cache = self.cache(tip)
        before = len(cache.dropped)
        state = rlmm.SEGMENT_STATES[d["remoteLogSegmentState"]]
        if key == 0:
            cache.add_copy_in_progress_segment(RemoteLogSegmentMetadata(
                seg, d["startOffset"], d["endOffset"], d["maxTimestampMs"], d["brokerId"],
                d["eventTimestampMs"], d["segmentSizeInBytes"], tuple(epochs or ()),
                d["customMetadata"], state, d["txnIndexEmpty"], at))
        else:
            cache.update(seg, state, broker_id=d["brokerId"],
                         event_timestamp_ms=d["eventTimestampMs"],
                         custom_metadata=d["customMetadata"], event_offset=at)
        for _, reason in cache.dropped[before:]:
            self.findings.append(Finding(partition, offset, f"event of {tip} dropped: {reason}"))

    def read_partition(self, directory: str | os.PathLike[str]) -> None:
        """Apply every record of one ``__remote_log_metadata-<n>`` directory (read-only)."""
        path = Path(directory)
        partition = int(path.name.rsplit("-", 1)[1])
        try:
            log = Log.open(path, read_only=True)
        except KafkaLogError as e:
            self.findings.append(Finding(partition, None, f"not read: {e}"))
            return
        with log:
            try:
                for r in log.records():
                    self.apply(r.value, partition, r.offset)
            except KafkaLogError as e:
                # (as a broker's recovery would: the partition up to the corrupt batch)
                self.findings.append(Finding(partition, getattr(e, "offset", None),
                                             f"stopped reading: {e}"))


def metadata_partition_dirs(log_dirs: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """The ``__remote_log_metadata-<n>`` directories under the given ``log.dirs`` entries
    (a metadata partition directory itself is accepted too), by partition number."""
    found: list[Path] = []
    for d in log_dirs:
        p = Path(d)
        candidates = [p] if p.name.startswith(f"{METADATA_TOPIC}-") else \
            (sorted(p.iterdir()) if p.is_dir() else [])
        for c in candidates:
            name, _, num = c.name.rpartition("-")
            if c.is_dir() and name == METADATA_TOPIC and num.isdigit():
                found.append(c)
    return sorted(found, key=lambda c: (int(c.name.rpartition("-")[2]), str(c)))


def read_log_dirs(log_dirs: Iterable[str | os.PathLike[str]], *,
                  num_partitions: int | None = DEFAULT_METADATA_TOPIC_PARTITIONS
                  ) -> RemoteLogMetadataStore:
    """Replay every ``__remote_log_metadata`` partition found under ``log_dirs``.

    The partitions are independent (a topic partition's events all sit in one), so their order
    does not matter; within one, records apply in offset order. A metadata partition present in
    two directories (a copy, a moved replica) is reported and read once, from the first.
    """
    store = RemoteLogMetadataStore(num_partitions)
    seen: dict[int, Path] = {}
    for d in metadata_partition_dirs(log_dirs):
        n = int(d.name.rpartition("-")[2])
        if n in seen:
            store.findings.append(Finding(n, None, f"also found at {d}; read from {seen[n]} only"))
            continue
        seen[n] = d
        store.read_partition(d)
    return store
