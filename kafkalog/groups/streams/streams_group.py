"""A KIP-1071 streams group as its ``__consumer_offsets`` records leave it (Kafka 4.2's
``StreamsGroup``, ``StreamsGroupMember``, ``StreamsTopology``), replayed offline.

What is kept is the hard state a coordinator rebuilds on load: the group epoch, the validated
topology epoch (4.2), the target assignment epoch and per-member targets, each member's
metadata and current assignment (active tasks with the epoch each was assigned at), and the
topology. The soft state (the configured topology, resolved against topic metadata on the next
heartbeat) is not: a coordinator that has just loaded the partition describes the group from
the plain topology too.

The state follows ``StreamsGroup.maybeUpdateGroupState``:

- *Empty*: no members;
- *NotReady*: no topology, or one whose epoch is not the validated topology epoch;
- *Assigning*: the group epoch is ahead of the target assignment epoch;
- *Reconciling*: some member is not *Stable* at the target assignment epoch;
- *Stable*: otherwise.

>>> g = StreamsGroup("app")
>>> g.state
'Empty'
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "MEMBER_STATES",
    "StreamsGroup",
    "StreamsGroupMember",
    "StreamsTopology",
    "Subtopology",
    "TasksTuple",
    "TopicInfo",
    "matches_internal_topic_format",
]

#: ``streams.MemberState``'s byte values (``fromValue``: anything else is UNKNOWN)
MEMBER_STATES = {1: "STABLE", 2: "UNREVOKED_TASKS", 3: "UNRELEASED_TASKS"}

#: ``StreamsGroupMember``'s epoch for a member that left (its current assignment tombstoned)
LEAVE_GROUP_MEMBER_EPOCH = -1

Tasks = Mapping[str, frozenset[int]]


@dataclass(frozen=True)
class TasksTuple:
    """Active, standby and warmup tasks: subtopology id -> partitions. ``active_epochs`` (a
    member's current assignment only, Kafka 4.2's ``TasksTupleWithEpochs``): the epoch each
    active task was assigned at, subtopology id -> partition -> epoch."""

    active: Tasks = field(default_factory=dict)
    standby: Tasks = field(default_factory=dict)
    warmup: Tasks = field(default_factory=dict)
    active_epochs: Mapping[str, Mapping[int, int]] = field(default_factory=dict)

    def is_empty(self) -> bool:
        return not (self.active or self.standby or self.warmup)


EMPTY_TASKS = TasksTuple()


@dataclass(frozen=True)
class TopicInfo:
    """A repartition source or changelog topic of a subtopology (``TopicInfo``): partitions 0
    means "as many as the source topics"; replication factor 0 the broker default."""

    name: str
    partitions: int
    replication_factor: int
    topic_configs: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Subtopology:
    subtopology_id: str
    source_topics: tuple[str, ...] = ()
    source_topic_regex: tuple[str, ...] = ()
    state_changelog_topics: tuple[TopicInfo, ...] = ()
    repartition_sink_topics: tuple[str, ...] = ()
    repartition_source_topics: tuple[TopicInfo, ...] = ()
    copartition_groups: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True)
class StreamsTopology:
    """``StreamsTopology``: the topology epoch and the subtopologies by id."""

    epoch: int
    subtopologies: Mapping[str, Subtopology]

    def source_topic_map(self) -> dict[str, Subtopology]:
        """Source and repartition source topic -> its subtopology (``sourceTopicMap``)."""
        out: dict[str, Subtopology] = {}
        for sub in self.subtopologies.values():
            for t in sub.source_topics:
                out[t] = sub
            for info in sub.repartition_source_topics:
                out[info.name] = sub
        return out

    def required_topics(self) -> set[str]:
        """``requiredTopics``: source, repartition source and changelog topics."""
        out: set[str] = set()
        for sub in self.subtopologies.values():
            out.update(sub.source_topics)
            out.update(i.name for i in sub.repartition_source_topics)
            out.update(i.name for i in sub.state_changelog_topics)
        return out

    def source_topics(self) -> list[str]:
        """The user's input topics (``sourceTopics`` of every subtopology, sorted): what
        ``--all-input-topics`` resets."""
        return sorted({t for s in self.subtopologies.values() for t in s.source_topics})


@dataclass(frozen=True)
class StreamsGroupMember:
    """``StreamsGroupMember``: metadata (type 19) and current assignment (type 22) of one
    member. ``state`` is Kafka's name (``STABLE``, ``UNREVOKED_TASKS``, ``UNRELEASED_TASKS``,
    ``UNKNOWN``)."""

    member_id: str
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: str = "STABLE"
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    rebalance_timeout_ms: int = -1
    topology_epoch: int = 0
    process_id: str = ""
    user_endpoint: tuple[str, int] | None = None
    client_tags: Mapping[str, str] = field(default_factory=dict)
    assigned_tasks: TasksTuple = EMPTY_TASKS
    tasks_pending_revocation: TasksTuple = EMPTY_TASKS

    def is_reconciled_to(self, target_assignment_epoch: int) -> bool:
        """``isReconciledTo``: Stable at the target assignment epoch."""
        return self.state == "STABLE" and self.member_epoch == target_assignment_epoch


@dataclass
class StreamsGroup:
    """One streams group's hard state (see the module docstring)."""

    group_id: str
    group_epoch: int = 0
    metadata_hash: int = 0
    validated_topology_epoch: int = -1
    last_assignment_configs: dict[str, str] = field(default_factory=dict)
    #: 0 until a record sets it; -1 after its tombstone (``setTargetAssignmentEpoch(-1)``)
    target_assignment_epoch: int = 0
    target_assignment: dict[str, TasksTuple] = field(default_factory=dict)
    members: dict[str, StreamsGroupMember] = field(default_factory=dict)
    topology: StreamsTopology | None = None

    @property
    def state(self) -> str:
        """``maybeUpdateGroupState`` (see the module docstring)."""
        if not self.members:
            return "Empty"
        if self.topology is None or self.topology.epoch != self.validated_topology_epoch:
            return "NotReady"
        if self.group_epoch > self.target_assignment_epoch:
            return "Assigning"
        for m in self.members.values():
            if not m.is_reconciled_to(self.target_assignment_epoch):
                return "Reconciling"
        return "Stable"

    def source_topics(self) -> list[str]:
        return [] if self.topology is None else self.topology.source_topics()

    def subscribed_topics(self) -> frozenset[str]:
        """``isSubscribedToTopic``'s topics: the topology's source and repartition source
        topics, none while the group is Empty (its offsets may then expire or be deleted)."""
        if self.topology is None or not self.members:
            return frozenset()
        return frozenset(self.topology.source_topic_map())

    def internal_topics(self) -> list[str]:
        """The topology's repartition source and changelog topics that are not source
        topics and that Kafka infers as this group's (``retrieveInternalTopics`` with
        ``isInferredInternalTopic``): what ``--delete-all-internal-topics`` deletes."""
        if self.topology is None:
            return []
        sources = set(self.source_topics())
        out: list[str] = []
        for _, sub in sorted(self.topology.subtopologies.items()):
            for info in (*sub.repartition_source_topics, *sub.state_changelog_topics):
                if info.name not in sources and info.name not in out \
                        and info.name.startswith(self.group_id + "-") \
                        and matches_internal_topic_format(info.name):
                    out.append(info.name)
        return out

    def input_partitions(self) -> set[tuple[str, int]]:
        """The topic partitions the members' current active tasks read
        (``StreamsGroupCommand.getTopicPartitions``: a task's partition of each source and
        repartition source topic of its subtopology)."""
        out: set[tuple[str, int]] = set()
        if self.topology is None:
            return out
        for m in self.members.values():
            for sub_id, partitions in m.assigned_tasks.active.items():
                sub = self.topology.subtopologies.get(sub_id)
                if sub is None:
                    continue
                topics = [*sub.source_topics, *(i.name for i in sub.repartition_source_topics)]
                out.update((t, p) for t in topics for p in partitions)
        return out


_FK_JOIN = re.compile(r".+-KTABLE-FK-JOIN-SUBSCRIPTION-(REGISTRATION|RESPONSE)-\d+-topic")


def matches_internal_topic_format(topic: str) -> bool:
    """``StreamsGroupCommand.matchesInternalTopicFormat``: a Kafka Streams internal topic's
    name (changelog, repartition, foreign-key join subscription topics).

    >>> matches_internal_topic_format("app-store-changelog"), matches_internal_topic_format("in")
    (True, False)
    """
    return (topic.endswith(("-changelog", "-repartition", "-subscription-registration-topic",
                            "-subscription-response-topic"))
            or _FK_JOIN.fullmatch(topic) is not None)
