"""Kafka's generated-message schemas for the internal topics, transcribed into Python tables.

Derived from Apache Kafka's message definitions (Licensed to the Apache Software Foundation (ASF)
under the Apache License, Version 2.0, http://www.apache.org/licenses/LICENSE-2.0):

* ``group-coordinator/src/main/resources/common/message/*.json`` (``__consumer_offsets`` keys and
  values; the key's leading int16 is the record type, see ``CoordinatorRecordSerde``),
* ``transaction-coordinator/src/main/resources/common/message/TransactionLog{Key,Value}.json``,
* ``clients/src/main/resources/common/message/ConsumerProtocol{Subscription,Assignment}.json`` and
  ``LeaderChangeMessage.json``,
* ``metadata/src/main/resources/common/metadata/*.json`` (KRaft ``__cluster_metadata`` records),
* ``storage/src/main/resources/message/Remote*Record.json`` (tiered storage's
  ``__remote_log_metadata`` records).

Changes from the originals: the ``about`` texts and ``entityType``/``mapKey``/``zeroCopy``/
``ignorable`` hints are dropped (they do not affect the encoding or the JSON converters); names,
types, version ranges, tags, defaults and field order are Kafka's. Where Kafka's history has
several shapes, the newest one read is kept (it reads every older version; the KIP-932
exceptions are below). A Kafka ``"default": null`` (JSON null, not the string ``"null"``)
is *no* default: the type's own (an empty array or struct), as ``FieldSpec`` reads it.

Which Kafka files were read (apache/kafka, the stored versions named by their commit; a version
with an ``apiKey`` is a 4.1+ "coordinator-key"/"coordinator-value" one): the 4.0 transcription was
brought up to date in November 2026 from ``ConsumerGroupMetadataValue.json`` @266ed846
(KIP-1101 ``MetadataHash``, KIP-1282 ``CreationTimeMs``),
``ConsumerGroupCurrentMemberAssignmentValue.json`` @6541f940 (KIP-1251 ``AssignmentEpochs``),
``ConsumerGroupTargetAssignmentMetadataValue.json`` @07b06d06 (KIP-1263) and the
``StreamsGroup*.json`` files @75a150ae, @5096058a, @59bf751f, @5c1644fc, @14440d21 (KIP-1071);
``TransactionLogValue.json`` @054b66e3 was already matched. Only fields read in a stored JSON
file are transcribed: a newer tagged field whose JSON was not found is skipped as an unknown tag
(as Kafka's own older readers do), never guessed.

Release tags read (the 4.0.0, 4.1.1 and 4.2.0-rc1 tags of Kafka's history, as mirrored in
aiven/inkless; ``tests/golden/kafka_schemas`` holds the files and
``tests/test_decoders_share_layouts.py`` compares every table here with 4.2.0-rc1's field by
field, listing what the tables hold beyond that release). That comparison added 4.1's tagged
``OffsetCommitValue.topicId`` and ``TransactionLogValue.NextProducerEpoch``, 4.2's streams
``AssignmentEpochs`` and ``LastAssignmentConfigs``, and ``LeaderChangeMessage`` version 1. The
KIP-932 share-group records and ``__share_group_state`` values: Kafka 4.1
changed records 11 (``MetadataHash`` added) and 15 (``InitializingTopics`` added first) and the
``Share{Snapshot,Update}Value``s (``SnapshotEpoch`` uint16 -> int32, ``CreateTimestamp`` and
``WriteTimestamp`` added) without new versions; 4.2 added the tagged ``DeliveryCompleteCount``
(KIP-1226). The tables hold 4.2's shapes, and ``GROUP_VALUES_4_0``/``SHARE_VALUES_4_0`` 4.0's:
:class:`~kafkalog.decoders._coordinator.CoordinatorCodec` reads a value with the newest shape
and falls back to 4.0's when only that one reads its bytes exactly. The KRaft and
``Remote*Record.json`` files did not change in any release up to 4.2.0-rc1 (diffed against
4.0.0); the version 1 of ``Remote*Record.json`` (tagged ``BrokerLeaderEpoch``/``EndOffset``,
@1acb5232) is on trunk only and not transcribed: the ``toString`` texts of
:mod:`kafkalog.decoders.remote_log_metadata` know version 0 only.

Each schema is a dict shaped like Kafka's JSON: ``name``, ``validVersions``, ``flexibleVersions``,
optional ``apiKey``, ``fields`` (each ``name``, ``type``, ``versions`` and optionally
``nullableVersions``, ``taggedVersions``, ``tag``, ``default``, nested ``fields``) and optional
``commonStructs``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["GROUP_KEYS", "GROUP_VALUES", "GROUP_VALUES_4_0", "TXN_KEYS", "TXN_VALUES",
           "METADATA", "CLIENT", "SHARE_KEYS", "SHARE_VALUES", "SHARE_VALUES_4_0",
           "REMOTE_LOG_METADATA"]


def _f(name: str, type_: str, versions: str = "0+", **kw: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"name": name, "type": type_, "versions": versions}
    for k, v in kw.items():
        d[{"nullable": "nullableVersions", "tagged": "taggedVersions"}.get(k, k)] = v
    return d


def _m(name: str, valid: str, flexible: str, fields: list, api_key: int | None = None,
       common: list | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {"name": name, "validVersions": valid, "flexibleVersions": flexible,
                         "fields": fields}
    if api_key is not None:
        d["apiKey"] = api_key
    if common:
        d["commonStructs"] = common
    return d


# --------------------------------------------------------------------------------------------
# __consumer_offsets (group coordinator). Key record type (int16) -> schema. The key's message is
# read at version = record type when the schema lists it (Kafka <= 4.0 schemas), else at its
# lowest version (the 4.1+ "coordinator-key" schemas are all version 0; fields are identical).
# --------------------------------------------------------------------------------------------

_OFFSET_COMMIT_KEY = _m("OffsetCommitKey", "0-1", "none", [
    _f("group", "string", "0-1"),
    _f("topic", "string", "0-1"),
    _f("partition", "int32", "0-1"),
])

_OFFSET_COMMIT_VALUE = _m("OffsetCommitValue", "0-4", "4+", [
    _f("offset", "int64", "0+"),
    _f("leaderEpoch", "int32", "3+", default=-1),
    _f("metadata", "string", "0+"),
    _f("commitTimestamp", "int64", "0+"),
    _f("expireTimestamp", "int64", "1", default=-1),
    # 4.1+ (KIP-848 commits by topic id); Kafka 4.1+ writes version 4 with it
    _f("topicId", "uuid", "4+", tagged="4+", tag=0),
])

_GROUP_METADATA_KEY = _m("GroupMetadataKey", "2", "none", [_f("group", "string", "2")])

# KIP-915 (3.5) made version 4 the first flexible version; brokers keep writing version 3 until
# the metadata version allows otherwise.
_GROUP_METADATA_VALUE = _m("GroupMetadataValue", "0-4", "4+", [
    _f("protocolType", "string", "0+"),
    _f("generation", "int32", "0+"),
    _f("protocol", "string", "0+", nullable="0+"),
    _f("leader", "string", "0+", nullable="0+"),
    _f("currentStateTimestamp", "int64", "2+", default=-1),
    _f("members", "[]MemberMetadata", "0+"),
], common=[{"name": "MemberMetadata", "versions": "0+", "fields": [
    _f("memberId", "string", "0+"),
    _f("groupInstanceId", "string", "3+", default="null", nullable="3+"),
    _f("clientId", "string", "0+"),
    _f("clientHost", "string", "0+"),
    _f("rebalanceTimeout", "int32", "1+", default=-1),
    _f("sessionTimeout", "int32", "0+"),
    _f("subscription", "bytes", "0+"),
    _f("assignment", "bytes", "0+"),
]}])


def _group_key(name: str, version: int, *fields: str) -> dict[str, Any]:
    """A key schema whose only valid version is ``version`` (the record type in <= 4.0 schemas,
    0 in the newer "coordinator-key" ones)."""
    v = str(version)
    return _m(name, v, "none", [_f(f, "string", v) for f in fields])


def _topic_partitions(*extra: dict[str, Any]) -> dict[str, Any]:
    return {"name": "TopicPartitions", "versions": "0+", "fields": [
        _f("TopicId", "uuid"), _f("Partitions", "[]int32"), *extra]}


def _task_ids(*extra: dict[str, Any]) -> dict[str, Any]:
    """KIP-1071's ``TaskIds`` common struct (a subtopology and its partitions)."""
    return {"name": "TaskIds", "versions": "0+", "fields": [
        _f("SubtopologyId", "string"), _f("Partitions", "[]int32"), *extra]}


# KIP-1251 (ConsumerGroupCurrentMemberAssignmentValue.json @6541f940): the epoch each partition
# was assigned at, aligned with Partitions. Kafka's "default": null (JSON null) is the empty array.
_ASSIGNMENT_EPOCHS = _f("AssignmentEpochs", "[]int32", nullable="0+", tagged="0+", tag=0)

GROUP_KEYS: dict[int, dict[str, Any]] = {
    0: _OFFSET_COMMIT_KEY,      # (4.1+: LegacyOffsetCommitKey, v0 only, the same fields)
    1: _OFFSET_COMMIT_KEY,
    2: _GROUP_METADATA_KEY,
    3: _group_key("ConsumerGroupMetadataKey", 3, "GroupId"),
    4: _group_key("ConsumerGroupPartitionMetadataKey", 4, "GroupId"),
    5: _group_key("ConsumerGroupMemberMetadataKey", 5, "GroupId", "MemberId"),
    6: _group_key("ConsumerGroupTargetAssignmentMetadataKey", 6, "GroupId"),
    7: _group_key("ConsumerGroupTargetAssignmentMemberKey", 7, "GroupId", "MemberId"),
    8: _group_key("ConsumerGroupCurrentMemberAssignmentKey", 8, "GroupId", "MemberId"),
    16: _group_key("ConsumerGroupRegularExpressionKey", 16, "GroupId", "RegularExpression"),
    # KIP-932 share groups (4.0 early access, GA in 4.1). Record type 9 (partition metadata) is
    # 4.0's only: 4.1 replaced it by ShareGroupMetadataValue's MetadataHash and dropped it from
    # CoordinatorRecordType (kept here so 4.0 logs still decode).
    9: _group_key("ShareGroupPartitionMetadataKey", 0, "GroupId"),
    10: _group_key("ShareGroupMemberMetadataKey", 0, "GroupId", "MemberId"),
    11: _group_key("ShareGroupMetadataKey", 0, "GroupId"),
    12: _group_key("ShareGroupTargetAssignmentMetadataKey", 0, "GroupId"),
    13: _group_key("ShareGroupTargetAssignmentMemberKey", 0, "GroupId", "MemberId"),
    14: _group_key("ShareGroupCurrentMemberAssignmentKey", 0, "GroupId", "MemberId"),
    15: _group_key("ShareGroupStatePartitionMetadataKey", 0, "GroupId"),
    # KIP-1071 streams groups (4.1 early access): "coordinator-key" schemas, version 0, the
    # record type is their apiKey (StreamsGroupMetadataKey.json @c940dbbf 17,
    # ...MemberMetadataKey @7e11ea85 19, ...TargetAssignmentMetadataValue @5c1644fc 20,
    # ...TargetAssignmentMemberKey @b617af2a 21, ...CurrentMemberAssignmentKey @75a150ae 22,
    # ...TopologyKey @59bf751f 23 (its pre-4.1 key version), ...ResolvedTopicIdsKey @14440d21
    # 24). 18, the pre-4.1 StreamsGroupPartitionMetadata, is gone from 4.1's
    # GroupCoordinatorShard.replay (as share groups' 9), so it stays unknown here.
    17: _group_key("StreamsGroupMetadataKey", 0, "GroupId"),
    19: _group_key("StreamsGroupMemberMetadataKey", 0, "GroupId", "MemberId"),
    20: _group_key("StreamsGroupTargetAssignmentMetadataKey", 0, "GroupId"),
    21: _group_key("StreamsGroupTargetAssignmentMemberKey", 0, "GroupId", "MemberId"),
    22: _group_key("StreamsGroupCurrentMemberAssignmentKey", 0, "GroupId", "MemberId"),
    23: _group_key("StreamsGroupTopologyKey", 0, "GroupId"),
    24: _group_key("StreamsGroupTargetAssignmentResolvedTopicIdsKey", 0, "GroupId"),
}

_SHARE_STATE_PARTITION_STRUCTS = [
    {"name": "TopicPartitionsInfo", "versions": "0+", "fields": [
        _f("TopicId", "uuid"), _f("TopicName", "string"), _f("Partitions", "[]int32")]},
    {"name": "TopicInfo", "versions": "0+", "fields": [
        _f("TopicId", "uuid"), _f("TopicName", "string")]},
]

GROUP_VALUES: dict[int, dict[str, Any]] = {
    0: _OFFSET_COMMIT_VALUE,
    1: _OFFSET_COMMIT_VALUE,
    2: _GROUP_METADATA_VALUE,
    # @266ed846: MetadataHash (4.1, KIP-1101), CreationTimeMs (KIP-1282)
    3: _m("ConsumerGroupMetadataValue", "0", "0+", [
        _f("Epoch", "int32"),
        _f("MetadataHash", "int64", default=0, tagged="0+", tag=0),
        _f("CreationTimeMs", "int64", default=-1, tagged="0+", tag=1),
    ]),
    4: _m("ConsumerGroupPartitionMetadataValue", "0", "0+", [
        _f("Topics", "[]TopicMetadata", fields=[
            _f("TopicId", "uuid"),
            _f("TopicName", "string"),
            _f("NumPartitions", "int32"),
            _f("PartitionMetadata", "[]PartitionMetadata", fields=[
                _f("Partition", "int32"),
                _f("Racks", "[]string"),
            ]),
        ]),
    ]),
    5: _m("ConsumerGroupMemberMetadataValue", "0", "0+", [
        _f("InstanceId", "string", nullable="0+"),
        _f("RackId", "string", nullable="0+"),
        _f("ClientId", "string"),
        _f("ClientHost", "string"),
        _f("SubscribedTopicNames", "[]string"),
        _f("SubscribedTopicRegex", "string", nullable="0+"),
        _f("RebalanceTimeoutMs", "int32", default=-1),
        _f("ServerAssignor", "string", nullable="0+"),
        # Kafka's JSON says "default": null, the JSON null, which FieldSpec reads as the empty
        # struct, not null: a record without the tag reads as an empty ClassicMemberMetadata
        # (a classic member), and a consumer-protocol member is written with the tag holding
        # the null marker, which the JSON converter prints as "classicMemberMetadata":null.
        _f("ClassicMemberMetadata", "ClassicMemberMetadata", nullable="0+",
           tagged="0+", tag=0, fields=[
               _f("SessionTimeoutMs", "int32"),
               _f("SupportedProtocols", "[]ClassicProtocol", fields=[
                   _f("Name", "string"),
                   _f("Metadata", "bytes"),
               ]),
           ]),
    ]),
    # @07b06d06: AssignmentTimestamp ("Added in 4.3 (KIP-1263)")
    6: _m("ConsumerGroupTargetAssignmentMetadataValue", "0", "0+", [
        _f("AssignmentEpoch", "int32"),
        _f("AssignmentTimestamp", "int64", default=0, tagged="0+", tag=0),
    ]),
    # (3.7's early-access shape also had Error, MetadataVersion and MetadataBytes; Kafka
    # dropped them for 3.8 (#15545, "upgrade won't be supported from the KIP-848 EA"))
    7: _m("ConsumerGroupTargetAssignmentMemberValue", "0", "0+", [
        _f("TopicPartitions", "[]TopicPartition", fields=[
            _f("TopicId", "uuid"), _f("Partitions", "[]int32")]),
    ]),
    8: _m("ConsumerGroupCurrentMemberAssignmentValue", "0", "0+", [
        _f("MemberEpoch", "int32"),
        _f("PreviousMemberEpoch", "int32"),
        _f("State", "int8"),
        _f("AssignedPartitions", "[]TopicPartitions"),
        _f("PartitionsPendingRevocation", "[]TopicPartitions"),
    ], common=[_topic_partitions(_ASSIGNMENT_EPOCHS)]),
    16: _m("ConsumerGroupRegularExpressionValue", "0", "0+", [
        _f("Topics", "[]string"), _f("Version", "int64"), _f("Timestamp", "int64")]),
    9: _m("ShareGroupPartitionMetadataValue", "0", "0+", [
        _f("Topics", "[]TopicMetadata", fields=[
            _f("TopicId", "uuid"),
            _f("TopicName", "string"),
            _f("NumPartitions", "int32"),
            _f("PartitionMetadata", "[]PartitionMetadata", fields=[
                _f("Partition", "int32"), _f("Racks", "[]string")]),
        ]),
    ]),
    10: _m("ShareGroupMemberMetadataValue", "0", "0+", [
        _f("RackId", "string", nullable="0+"),
        _f("ClientId", "string"),
        _f("ClientHost", "string"),
        _f("SubscribedTopicNames", "[]string"),
    ]),
    # 11 and 15 as Kafka 4.1.1 and 4.2.0-rc1 define them; 4.1 changed both without a new
    # version (GROUP_VALUES_4_0 holds 4.0's shapes, see the module docstring)
    11: _m("ShareGroupMetadataValue", "0", "0+", [
        _f("Epoch", "int32"), _f("MetadataHash", "int64")]),
    12: _m("ShareGroupTargetAssignmentMetadataValue", "0", "0+", [
        _f("AssignmentEpoch", "int32")]),
    13: _m("ShareGroupTargetAssignmentMemberValue", "0", "0+", [
        _f("TopicPartitions", "[]TopicPartition", fields=[
            _f("TopicId", "uuid"), _f("Partitions", "[]int32")]),
    ]),
    14: _m("ShareGroupCurrentMemberAssignmentValue", "0", "0+", [
        _f("MemberEpoch", "int32"),
        _f("PreviousMemberEpoch", "int32"),
        _f("State", "int8"),
        _f("AssignedPartitions", "[]TopicPartitions"),
    ], common=[_topic_partitions()]),
    15: _m("ShareGroupStatePartitionMetadataValue", "0", "0+", [
        _f("InitializingTopics", "[]TopicPartitionsInfo"),
        _f("InitializedTopics", "[]TopicPartitionsInfo"),
        _f("DeletingTopics", "[]TopicInfo"),
    ], common=_SHARE_STATE_PARTITION_STRUCTS),
    # ---- KIP-1071 streams groups ----
    # as in 4.2.0-rc1: LastAssignmentConfigs gives no "versions" (FieldSpec then takes its
    # taggedVersions) and a JSON-null default (the empty array: a null one is written, tagged)
    17: _m("StreamsGroupMetadataValue", "0", "0+", [
        _f("Epoch", "int32"),
        _f("MetadataHash", "int64"),
        _f("ValidatedTopologyEpoch", "int32", default=-1, tagged="0+", tag=0),
        _f("LastAssignmentConfigs", "[]LastAssignmentConfig", tagged="0+", nullable="0+",
           tag=1),
    ], common=[{"name": "LastAssignmentConfig", "versions": "0+", "fields": [
        _f("Key", "string"), _f("Value", "string")]}]),
    # @59bf751f
    19: _m("StreamsGroupMemberMetadataValue", "0", "0+", [
        _f("InstanceId", "string", nullable="0+"),
        _f("RackId", "string", nullable="0+"),
        _f("ClientId", "string"),
        _f("ClientHost", "string"),
        _f("RebalanceTimeoutMs", "int32", default=-1),
        _f("TopologyEpoch", "int32"),
        _f("ProcessId", "string"),
        _f("UserEndpoint", "Endpoint", nullable="0+", default="null"),
        _f("ClientTags", "[]KeyValue"),
    ], common=[
        {"name": "Endpoint", "versions": "0+", "fields": [
            _f("Host", "string"), _f("Port", "uint16")]},
        {"name": "KeyValue", "versions": "0+", "fields": [
            _f("Key", "string"), _f("Value", "string")]},
    ]),
    # @5c1644fc
    20: _m("StreamsGroupTargetAssignmentMetadataValue", "0", "0+", [
        _f("AssignmentEpoch", "int32"),
    ]),
    # @75a150ae
    21: _m("StreamsGroupTargetAssignmentMemberValue", "0", "0+", [
        _f("ActiveTasks", "[]TaskIds"),
        _f("StandbyTasks", "[]TaskIds"),
        _f("WarmupTasks", "[]TaskIds"),
    ], common=[_task_ids()]),
    # @5096058a
    22: _m("StreamsGroupCurrentMemberAssignmentValue", "0", "0+", [
        _f("MemberEpoch", "int32"),
        _f("PreviousMemberEpoch", "int32"),
        _f("State", "int8"),
        _f("ActiveTasks", "[]TaskIds"),
        _f("StandbyTasks", "[]TaskIds"),
        _f("WarmupTasks", "[]TaskIds"),
        _f("ActiveTasksPendingRevocation", "[]TaskIds"),
        _f("StandbyTasksPendingRevocation", "[]TaskIds"),
        _f("WarmupTasksPendingRevocation", "[]TaskIds"),
    ], common=[_task_ids(_ASSIGNMENT_EPOCHS)]),     # (AssignmentEpochs: 4.2, KIP-1251)
    # @59bf751f
    23: _m("StreamsGroupTopologyValue", "0", "0+", [
        _f("Epoch", "int32"),
        _f("Subtopologies", "[]Subtopology", fields=[
            _f("SubtopologyId", "string"),
            _f("SourceTopics", "[]string"),
            _f("SourceTopicRegex", "[]string"),
            _f("StateChangelogTopics", "[]TopicInfo"),
            _f("RepartitionSinkTopics", "[]string"),
            _f("RepartitionSourceTopics", "[]TopicInfo"),
            _f("CopartitionGroups", "[]CopartitionGroup", fields=[
                _f("SourceTopics", "[]int16"),
                _f("SourceTopicRegex", "[]int16"),
                _f("RepartitionSourceTopics", "[]int16"),
            ]),
        ]),
    ], common=[
        {"name": "TopicConfig", "versions": "0+", "fields": [
            _f("key", "string"), _f("value", "string")]},
        {"name": "TopicInfo", "versions": "0+", "fields": [
            _f("Name", "string"),
            _f("Partitions", "int32"),
            _f("ReplicationFactor", "int16"),
            _f("TopicConfigs", "[]TopicConfig"),
        ]},
    ]),
    # @14440d21
    24: _m("StreamsGroupTargetAssignmentResolvedTopicIdsValue", "0", "0+", [
        _f("AssignmentEpoch", "int32"),
        _f("ResolvedTopicIdsBySubtopology", "[]ResolvedTopicIds"),
    ], common=[{"name": "ResolvedTopicIds", "versions": "0+", "fields": [
        _f("SubtopologyId", "string"), _f("TopicIds", "[]uuid")]}]),
}

# --------------------------------------------------------------------------------------------
# Embedded consumer protocol (GroupMetadataValue member subscription/assignment bytes).
# --------------------------------------------------------------------------------------------

CLIENT: dict[str, dict[str, Any]] = {
    "ConsumerProtocolSubscription": _m("ConsumerProtocolSubscription", "0-3", "none", [
        _f("Topics", "[]string", "0+"),
        _f("UserData", "bytes", "0+", nullable="0+", default="null"),
        _f("OwnedPartitions", "[]TopicPartition", "1+", fields=[
            _f("Topic", "string", "1+"), _f("Partitions", "[]int32", "1+")]),
        _f("GenerationId", "int32", "2+", default=-1),
        _f("RackId", "string", "3+", nullable="3+", default="null"),
    ]),
    "ConsumerProtocolAssignment": _m("ConsumerProtocolAssignment", "0-3", "none", [
        _f("AssignedPartitions", "[]TopicPartition", "0+", fields=[
            _f("Topic", "string", "0+"), _f("Partitions", "[]int32", "0+")]),
        _f("UserData", "bytes", "0+", nullable="0+", default="null"),
    ]),
    # KRaft LEADER_CHANGE control record value (after its int16 version).
    # (version 1, KIP-853, adds VoterDirectoryId; Kafka up to 4.2 writes and reads version 0:
    # ControlRecordUtils.LEADER_CHANGE_CURRENT_VERSION)
    "LeaderChangeMessage": _m("LeaderChangeMessage", "0-1", "0+", [
        _f("Version", "int16"),
        _f("LeaderId", "int32"),
        _f("Voters", "[]Voter"),
        _f("GrantingVoters", "[]Voter"),
    ], common=[{"name": "Voter", "versions": "0+", "fields": [
        _f("VoterId", "int32"), _f("VoterDirectoryId", "uuid", "1+")]}]),
}

# --------------------------------------------------------------------------------------------
# __transaction_state
# --------------------------------------------------------------------------------------------

TXN_KEYS: dict[int, dict[str, Any]] = {
    0: _m("TransactionLogKey", "0", "none", [_f("TransactionalId", "string", "0")]),
}

TXN_VALUES: dict[int, dict[str, Any]] = {
    0: _m("TransactionLogValue", "0-1", "1+", [
        _f("ProducerId", "int64", "0+"),
        _f("PreviousProducerId", "int64", "1+", tagged="1+", tag=0, default=-1),
        _f("NextProducerId", "int64", "1+", tagged="1+", tag=1, default=-1),
        _f("ProducerEpoch", "int16", "0+"),
        # 4.1+ (no "versions": FieldSpec takes its taggedVersions)
        _f("NextProducerEpoch", "int16", "1+", tagged="1+", tag=3, default=-1),
        _f("TransactionTimeoutMs", "int32", "0+"),
        _f("TransactionStatus", "int8", "0+"),
        _f("TransactionPartitions", "[]PartitionsSchema", "0+", nullable="0+", fields=[
            _f("Topic", "string", "0+"), _f("PartitionIds", "[]int32", "0+")]),
        _f("TransactionLastUpdateTimestampMs", "int64", "0+"),
        _f("TransactionStartTimestampMs", "int64", "0+"),
        _f("ClientTransactionVersion", "int16", "1+", tagged="1+", tag=2, default=0),
    ]),
}

# --------------------------------------------------------------------------------------------
# KRaft __cluster_metadata records (apiKey -> schema). Every metadata record is flexible.
# --------------------------------------------------------------------------------------------

_ENDPOINT = [_f("Name", "string"), _f("Host", "string"), _f("Port", "uint16"),
             _f("SecurityProtocol", "int16")]
_FEATURE = [_f("Name", "string"), _f("MinSupportedVersion", "int16"),
            _f("MaxSupportedVersion", "int16")]

_METADATA_LIST = [
    _m("RegisterBrokerRecord", "0-3", "0+", [
        _f("BrokerId", "int32"),
        _f("IsMigratingZkBroker", "bool", "2+", default="false"),
        _f("IncarnationId", "uuid"),
        _f("BrokerEpoch", "int64"),
        _f("EndPoints", "[]BrokerEndpoint", fields=_ENDPOINT),
        _f("Features", "[]BrokerFeature", fields=_FEATURE),
        _f("Rack", "string", nullable="0+"),
        _f("Fenced", "bool", default="true"),
        _f("InControlledShutdown", "bool", "1+", default="false"),
        _f("LogDirs", "[]uuid", "3+", tagged="3+", tag=0),
    ], api_key=0),
    _m("UnregisterBrokerRecord", "0", "0+", [
        _f("BrokerId", "int32"), _f("BrokerEpoch", "int64")], api_key=1),
    _m("TopicRecord", "0", "0+", [_f("Name", "string"), _f("TopicId", "uuid")], api_key=2),
    _m("PartitionRecord", "0-2", "0+", [
        _f("PartitionId", "int32", default=-1),
        _f("TopicId", "uuid"),
        _f("Replicas", "[]int32"),
        _f("Isr", "[]int32"),
        _f("RemovingReplicas", "[]int32"),
        _f("AddingReplicas", "[]int32"),
        _f("Leader", "int32", default=-1),
        _f("LeaderRecoveryState", "int8", default=0, tagged="0+", tag=0),
        _f("LeaderEpoch", "int32", default=-1),
        _f("PartitionEpoch", "int32", default=-1),
        _f("Directories", "[]uuid", "1+"),
        _f("EligibleLeaderReplicas", "[]int32", "2+", default="null", nullable="2+",
           tagged="2+", tag=1),
        _f("LastKnownElr", "[]int32", "2+", default="null", nullable="2+", tagged="2+", tag=2),
    ], api_key=3),
    _m("ConfigRecord", "0", "0+", [
        _f("ResourceType", "int8"), _f("ResourceName", "string"), _f("Name", "string"),
        _f("Value", "string", nullable="0+")], api_key=4),
    _m("PartitionChangeRecord", "0-2", "0+", [
        _f("PartitionId", "int32", default=-1),
        _f("TopicId", "uuid"),
        _f("Isr", "[]int32", default="null", nullable="0+", tagged="0+", tag=0),
        _f("Leader", "int32", default=-2, tagged="0+", tag=1),
        _f("Replicas", "[]int32", default="null", nullable="0+", tagged="0+", tag=2),
        _f("RemovingReplicas", "[]int32", default="null", nullable="0+", tagged="0+", tag=3),
        _f("AddingReplicas", "[]int32", default="null", nullable="0+", tagged="0+", tag=4),
        _f("LeaderRecoveryState", "int8", default=-1, tagged="0+", tag=5),
        _f("Directories", "[]uuid", "1+", default="null", nullable="1+", tagged="1+", tag=8),
        _f("EligibleLeaderReplicas", "[]int32", "2+", default="null", nullable="2+",
           tagged="2+", tag=6),
        _f("LastKnownElr", "[]int32", "2+", default="null", nullable="2+", tagged="2+", tag=7),
    ], api_key=5),
    _m("FenceBrokerRecord", "0", "0+", [_f("Id", "int32"), _f("Epoch", "int64")], api_key=7),
    _m("UnfenceBrokerRecord", "0", "0+", [_f("Id", "int32"), _f("Epoch", "int64")], api_key=8),
    _m("RemoveTopicRecord", "0", "0+", [_f("TopicId", "uuid")], api_key=9),
    _m("DelegationTokenRecord", "0", "0+", [
        _f("Owner", "string"), _f("Requester", "string"), _f("Renewers", "[]string"),
        _f("IssueTimestamp", "int64"), _f("MaxTimestamp", "int64"),
        _f("ExpirationTimestamp", "int64"), _f("TokenId", "string")], api_key=10),
    _m("UserScramCredentialRecord", "0", "0+", [
        _f("Name", "string"), _f("Mechanism", "int8"), _f("Salt", "bytes"),
        _f("StoredKey", "bytes"), _f("ServerKey", "bytes"), _f("Iterations", "int32")],
       api_key=11),
    _m("FeatureLevelRecord", "0", "0+", [
        _f("Name", "string"), _f("FeatureLevel", "int16")], api_key=12),
    _m("ClientQuotaRecord", "0", "0+", [
        _f("Entity", "[]EntityData", fields=[
            _f("EntityType", "string"), _f("EntityName", "string", nullable="0+")]),
        _f("Key", "string"), _f("Value", "float64"), _f("Remove", "bool")], api_key=14),
    _m("ProducerIdsRecord", "0", "0+", [
        _f("BrokerId", "int32"), _f("BrokerEpoch", "int64", default=-1),
        _f("NextProducerId", "int64")], api_key=15),
    _m("RemoveFeatureLevelRecord", "0", "0+", [_f("Name", "string")], api_key=16),
    _m("BrokerRegistrationChangeRecord", "0-2", "0+", [
        _f("BrokerId", "int32"),
        _f("BrokerEpoch", "int64"),
        _f("Fenced", "int8", tagged="0+", tag=0),
        _f("InControlledShutdown", "int8", "1+", tagged="1+", tag=1),
        _f("LogDirs", "[]uuid", "2+", tagged="2+", tag=2),
    ], api_key=17),
    _m("AccessControlEntryRecord", "0", "0+", [
        _f("Id", "uuid"), _f("ResourceType", "int8"), _f("ResourceName", "string"),
        _f("PatternType", "int8"), _f("Principal", "string"), _f("Host", "string"),
        _f("Operation", "int8"), _f("PermissionType", "int8")], api_key=18),
    _m("RemoveAccessControlEntryRecord", "0", "0+", [_f("Id", "uuid")], api_key=19),
    _m("NoOpRecord", "0", "0+", [], api_key=20),
    _m("ZkMigrationStateRecord", "0", "0+", [_f("ZkMigrationState", "int8")], api_key=21),
    _m("RemoveUserScramCredentialRecord", "0", "0+", [
        _f("Name", "string"), _f("Mechanism", "int8")], api_key=22),
    _m("BeginTransactionRecord", "0", "0+", [
        _f("Name", "string", default="null", nullable="0+", tagged="0+", tag=0)], api_key=23),
    _m("EndTransactionRecord", "0", "0+", [], api_key=24),
    _m("AbortTransactionRecord", "0", "0+", [
        _f("Reason", "string", default="null", nullable="0+", tagged="0+", tag=0)],
       api_key=25),
    _m("RemoveDelegationTokenRecord", "0", "0+", [_f("TokenId", "string")], api_key=26),
    _m("RegisterControllerRecord", "0", "0+", [
        _f("ControllerId", "int32"),
        _f("IncarnationId", "uuid"),
        _f("ZkMigrationReady", "bool"),
        _f("EndPoints", "[]ControllerEndpoint", fields=_ENDPOINT),
        _f("Features", "[]ControllerFeature", fields=_FEATURE),
    ], api_key=27),
    _m("ClearElrRecord", "0", "0+", [_f("TopicName", "string")], api_key=28),
    _m("UnregisterControllerRecord", "0", "0+", [_f("ControllerId", "int32")], api_key=29),
]

METADATA: dict[int, dict[str, Any]] = {s["apiKey"]: s for s in _METADATA_LIST}

# --------------------------------------------------------------------------------------------
# __share_group_state (KIP-932 share coordinator; 4.0 early access, schemas still changing).
# Record type 0 ShareSnapshot, 1 ShareUpdate.
# --------------------------------------------------------------------------------------------

_STATE_BATCH = [_f("FirstOffset", "int64"), _f("LastOffset", "int64"),
                _f("DeliveryState", "int8"), _f("DeliveryCount", "int16")]
_STATE_BATCH_4_0 = [_f("FirstOffset", "int64", "0"), _f("LastOffset", "int64", "0"),
                    _f("DeliveryState", "int8", "0"), _f("DeliveryCount", "int16", "0")]
# KIP-1226 (4.2): "default": "-1", a string, which FieldSpec reads as the number
_DELIVERY_COMPLETE_COUNT = _f("DeliveryCompleteCount", "int32", tagged="0+", tag=0, default=-1)


def _share_key(name: str, version: int) -> dict[str, Any]:
    v = str(version)
    return _m(name, v, "none", [_f("GroupId", "string", v), _f("TopicId", "uuid", v),
                                _f("Partition", "int32", v)])


SHARE_KEYS: dict[int, dict[str, Any]] = {
    0: _share_key("ShareSnapshotKey", 0),
    1: _share_key("ShareUpdateKey", 1),
}

# Share{Snapshot,Update}Value.json as in 4.2.0-rc1 (4.1.1's plus the tagged
# DeliveryCompleteCount); 4.0's in SHARE_VALUES_4_0
SHARE_VALUES: dict[int, dict[str, Any]] = {
    0: _m("ShareSnapshotValue", "0", "0+", [
        _f("SnapshotEpoch", "int32"),
        _f("StateEpoch", "int32"),
        _f("LeaderEpoch", "int32"),
        _f("StartOffset", "int64"),
        _DELIVERY_COMPLETE_COUNT,
        _f("CreateTimestamp", "int64"),
        _f("WriteTimestamp", "int64"),
        _f("StateBatches", "[]StateBatch", fields=_STATE_BATCH),
    ]),
    1: _m("ShareUpdateValue", "0", "0+", [
        _f("SnapshotEpoch", "int32"),
        _f("LeaderEpoch", "int32"),
        _f("StartOffset", "int64"),
        _DELIVERY_COMPLETE_COUNT,
        _f("StateBatches", "[]StateBatch", fields=_STATE_BATCH),
    ]),
}

# --------------------------------------------------------------------------------------------
# Kafka 4.0's KIP-932 shapes (early access; the same version numbers as 4.1's, other bytes):
# read where the newest shape does not read the bytes exactly (CoordinatorCodec), written only
# when asked for (a 4.0 cluster's files).
# --------------------------------------------------------------------------------------------

SHARE_VALUES_4_0: dict[int, dict[str, Any]] = {
    0: _m("ShareSnapshotValue", "0", "0+", [
        _f("SnapshotEpoch", "uint16", "0"),
        _f("StateEpoch", "int32", "0+"),
        _f("LeaderEpoch", "int32", "0+"),
        _f("StartOffset", "int64", "0"),
        _f("StateBatches", "[]StateBatch", "0", fields=_STATE_BATCH_4_0),
    ]),
    1: _m("ShareUpdateValue", "0", "0+", [
        _f("SnapshotEpoch", "uint16", "0"),
        _f("LeaderEpoch", "int32", "0+"),
        _f("StartOffset", "int64", "0"),
        _f("StateBatches", "[]StateBatch", "0", fields=_STATE_BATCH_4_0),
    ]),
}

GROUP_VALUES_4_0: dict[int, dict[str, Any]] = {
    11: _m("ShareGroupMetadataValue", "0", "0+", [_f("Epoch", "int32")]),
    15: _m("ShareGroupStatePartitionMetadataValue", "0", "0+", [
        _f("InitializedTopics", "[]TopicPartitionsInfo"),
        _f("DeletingTopics", "[]TopicInfo"),
    ], common=_SHARE_STATE_PARTITION_STRUCTS),
}

# --------------------------------------------------------------------------------------------
# __remote_log_metadata (KIP-405 tiered storage, TopicBasedRemoteLogMetadataManager), from
# storage/src/main/resources/message/*.json. Api key -> schema; framed like KRaft records
# (RemoteLogMetadataSerde's BytesApiMessageSerde is an AbstractApiMessageSerde).
# --------------------------------------------------------------------------------------------


def _topic_id_partition() -> dict[str, Any]:
    return _f("TopicIdPartition", "TopicIdPartitionEntry", fields=[
        _f("Name", "string"), _f("Id", "uuid"), _f("Partition", "int32")])


def _segment_fields() -> list[dict[str, Any]]:
    """The fields RemoteLogSegmentMetadataRecord and its snapshot share after the segment id."""
    return [
        _f("StartOffset", "int64"),
        _f("EndOffset", "int64"),
        _f("BrokerId", "int32"),
        _f("MaxTimestampMs", "int64"),
        _f("EventTimestampMs", "int64"),
        _f("SegmentLeaderEpochs", "[]SegmentLeaderEpochEntry", fields=[
            _f("LeaderEpoch", "int32"), _f("Offset", "int64")]),
        _f("SegmentSizeInBytes", "int32"),
        _f("CustomMetadata", "bytes", nullable="0+", default="null"),
        _f("RemoteLogSegmentState", "int8"),
        # 4.0 (KAFKA-16780): a tagged field, so 3.9's readers skip it and the version stays 0
        _f("TxnIndexEmpty", "bool", tagged="0+", tag=0),
    ]


def _segment_id() -> dict[str, Any]:
    return _f("RemoteLogSegmentId", "RemoteLogSegmentIdEntry", fields=[
        _topic_id_partition(), _f("Id", "uuid")])


REMOTE_LOG_METADATA: dict[int, dict[str, Any]] = {
    0: _m("RemoteLogSegmentMetadataRecord", "0", "0+", [_segment_id(), *_segment_fields()],
          api_key=0),
    1: _m("RemoteLogSegmentMetadataUpdateRecord", "0", "0+", [
        _segment_id(),
        _f("BrokerId", "int32"),
        _f("EventTimestampMs", "int64"),
        _f("CustomMetadata", "bytes", nullable="0+", default="null"),
        _f("RemoteLogSegmentState", "int8"),
    ], api_key=1),
    2: _m("RemotePartitionDeleteMetadataRecord", "0", "0+", [
        _topic_id_partition(),
        _f("BrokerId", "int32"),
        _f("EventTimestampMs", "int64"),
        _f("RemotePartitionDeleteState", "int8"),
    ], api_key=2),
    3: _m("RemoteLogSegmentMetadataSnapshotRecord", "0", "0+",
          [_f("SegmentId", "uuid"), *_segment_fields()], api_key=3),
}
