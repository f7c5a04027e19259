"""KIP-1071 streams groups (Kafka Streams' broker-side rebalance protocol, GA in Kafka 4.2)
as their ``__consumer_offsets`` records leave them: :class:`StreamsGroup` (state, members,
topology, target assignment) and the record builders and replay of
:mod:`kafkalog.groups.streams.records`.

>>> from kafkalog.groups.streams import StreamsGroup
>>> StreamsGroup("app").state
'Empty'
"""

from .records import STREAMS_GROUP_TYPES, StreamsReplayError, group_tombstones, replay
from .streams_group import (
    StreamsGroup,
    StreamsGroupMember,
    StreamsTopology,
    Subtopology,
    TasksTuple,
    TopicInfo,
    matches_internal_topic_format,
)

__all__ = [
    "STREAMS_GROUP_TYPES",
    "StreamsGroup",
    "StreamsGroupMember",
    "StreamsReplayError",
    "StreamsTopology",
    "Subtopology",
    "TasksTuple",
    "TopicInfo",
    "group_tombstones",
    "matches_internal_topic_format",
    "replay",
]
