"""The input every assignor reads, validated once (``AssignmentInput``), and shared helpers.

Kafka's client assignors see ``Map<String, Subscription>`` (member id -> topics, owned partitions,
generation, ``group.instance.id``) and the partition count of each *subscribed* topic
(``AbstractPartitionAssignor.assign`` drops topics nobody subscribes to, and topics without
partitions); the KIP-848 server assignors see a ``GroupSpec`` (members with subscribed topic ids,
instance ids and current assignment) and a ``SubscribedTopicDescriber``. Both are built here from
the plain dicts :func:`kafkalog.groups.assign` takes.

Racks (KIP-881): ``consumer_racks`` is each member's ``client.rack`` (``Subscription.rackId``; an
empty rack counts as none, as Kafka filters it), ``partition_racks`` the racks of each
partition's replicas (``PartitionInfo.replicas()`` ``Node.rack()``, replicas without a rack
omitted). They are only read by the rack-aware ``range``, ``sticky`` and ``cooperative-sticky``
assignors.

Member order: where Kafka iterates a ``HashMap`` keyed by member id, the map is rebuilt here
from the caller's dict order (its insertion order) with :class:`~kafkalog.groups.java_order.
JavaHashMap`, so ties break as in Java.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..errors import AssignmentError

__all__ = ["AssignmentInput", "TopicPartition", "DEFAULT_GENERATION", "use_rack_aware_assignment"]

TopicPartition = tuple[str, int]

#: AbstractStickyAssignor.DEFAULT_GENERATION
DEFAULT_GENERATION = -1


@dataclass
class AssignmentInput:
    """Validated assignor input.

    ``members`` keeps the caller's order; ``topics`` maps each member to its subscribed topics
    (deduplicated, in the order given); ``partitions`` holds only the topics somebody subscribes
    to and that have at least one partition (as Kafka's ``AbstractPartitionAssignor``);
    ``owned`` the previous assignment (only partitions of topics still present);
    ``generations`` None where unknown; ``instance_ids`` the static members'
    ``group.instance.id``; ``topic_ids`` Kafka ``Uuid`` (most, least) pairs where known;
    ``consumer_racks`` every member's rack (None: no rack, or an empty one); ``partition_racks``
    for each topic of ``partitions`` the replica racks of each partition (empty sets where
    unknown). ``prefer_rack_aware`` is Kafka's test-only ``AbstractPartitionAssignor.
    preferRackAwareLogic`` (rack-aware logic even when every partition has a replica on every
    rack); :func:`~kafkalog.groups.assign` never sets it.
    """

    members: list[str]
    topics: dict[str, list[str]]
    partitions: dict[str, int]
    owned: dict[str, list[TopicPartition]]
    generations: dict[str, int | None]
    instance_ids: dict[str, str | None]
    topic_ids: dict[str, tuple[int, int]]
    consumer_racks: dict[str, str | None] = field(default_factory=dict)
    partition_racks: dict[str, list[frozenset[str]]] = field(default_factory=dict)
    prefer_rack_aware: bool = False

    @classmethod
    def build(
        cls,
        subscriptions: Mapping[str, Sequence[str]],
        partitions: Mapping[str, int],
        *,
        owned: Mapping[str, Sequence[TopicPartition]] | None = None,
        generations: Mapping[str, int | None] | None = None,
        group_instance_ids: Mapping[str, str | None] | None = None,
        topic_ids: Mapping[str, object] | None = None,
        consumer_racks: Mapping[str, str | None] | None = None,
        partition_racks: Mapping[str, Sequence[Iterable[str]]] | None = None,
    ) -> AssignmentInput:
        """Validate the public arguments of :func:`kafkalog.groups.assign`.

        Raises
        ------
        AssignmentError
            A member subscribed to a topic absent from ``partitions``, a negative or
            non-integer partition count, an owned partition out of range, a rack given for an
            unknown member or topic, a topic whose replica racks do not list each of its
            partitions, a rack that is not a string, a malformed argument.
        """
        if not isinstance(subscriptions, Mapping):
            raise AssignmentError(
                "subscriptions must map member id -> topics "
                f"(found {type(subscriptions).__name__})")
        if not isinstance(partitions, Mapping):
            raise AssignmentError(
                f"partitions must map topic -> partition count (found {type(partitions).__name__})")
        counts: dict[str, int] = {}
        for topic, n in partitions.items():
            if not isinstance(topic, str):
                raise AssignmentError(f"topic names must be strings (found {topic!r})")
            if isinstance(n, bool) or not isinstance(n, int):
                raise AssignmentError(
                    f"partition count of topic {topic!r} must be an integer (found {n!r})")
            if n < 0:
                raise AssignmentError(
                    f"partition count of topic {topic!r} must be >= 0 (found {n})")
            counts[topic] = n
        members: list[str] = []
        topics: dict[str, list[str]] = {}
        for member, subscribed in subscriptions.items():
            if not isinstance(member, str):
                raise AssignmentError(f"member ids must be strings (found {member!r})")
            if isinstance(subscribed, str) or not isinstance(subscribed,
                                                             (Sequence, set, frozenset)):
                raise AssignmentError(
                    f"member {member!r}: subscription must be a list of topics "
                    f"(found {subscribed!r})")
            seen = list(dict.fromkeys(subscribed))
            for t in seen:
                if not isinstance(t, str):
                    raise AssignmentError(f"member {member!r}: topic names must be strings "
                                          f"(found {t!r})")
                if t not in counts:
                    raise AssignmentError(
                        f"member {member!r} is subscribed to topic {t!r}, which is not in the "
                        f"partition counts (known topics: {', '.join(sorted(counts)) or 'none'})")
            members.append(member)
            topics[member] = seen
        subscribed_topics = {t for ts in topics.values() for t in ts}
        kept = {t: n for t, n in counts.items() if t in subscribed_topics and n > 0}
        owned_out: dict[str, list[TopicPartition]] = {m: [] for m in members}
        for member, tps in (owned or {}).items():
            if member not in topics:
                continue            # a member that left: its partitions are simply free
            for tp in tps:
                try:
                    t, p = tp
                except (TypeError, ValueError):
                    raise AssignmentError(
                        f"member {member!r}: owned partitions must be (topic, partition) pairs "
                        f"(found {tp!r})") from None
                if t not in kept:
                    continue        # Kafka drops owned partitions of topics no longer assigned
                if isinstance(p, bool) or not isinstance(p, int) or not 0 <= p < kept[t]:
                    raise AssignmentError(
                        f"member {member!r} owns {t}-{p}, but topic {t!r} has partitions "
                        f"0..{kept[t] - 1}")
                owned_out[member].append((t, p))
        gens = {m: (None if generations is None else generations.get(m)) for m in members}
        if generations is None and owned:
            # Without generations every member that reports owned partitions is taken to be of
            # the same (current) generation, as the members of a stable group are.
            gens = {m: 0 for m in members}
        inst = {m: (group_instance_ids or {}).get(m) for m in members}
        tids: dict[str, tuple[int, int]] = {}
        for t, tid in (topic_ids or {}).items():
            tids[t] = _uuid_pair(t, tid)
        racks = _consumer_racks(consumer_racks, topics)
        replica_racks = _partition_racks(partition_racks, counts, kept)
        return cls(members, topics, kept, owned_out, gens, inst, tids, racks, replica_racks)


def _consumer_racks(consumer_racks: Mapping[str, str | None] | None,
                    topics: dict[str, list[str]]) -> dict[str, str | None]:
    racks: dict[str, str | None] = {m: None for m in topics}
    if consumer_racks is None:
        return racks
    if not isinstance(consumer_racks, Mapping):
        raise AssignmentError("consumer_racks must map member id -> client.rack "
                              f"(found {type(consumer_racks).__name__})")
    for member, rack in consumer_racks.items():
        if member not in topics:
            raise AssignmentError(f"consumer_racks names member {member!r}, which is not in the "
                                  "subscriptions")
        if rack is not None and not isinstance(rack, str):
            raise AssignmentError(f"member {member!r}: client.rack must be a string or None "
                                  f"(found {rack!r})")
        racks[member] = rack or None        # Kafka ignores an empty rack id
    return racks


def _partition_racks(partition_racks: Mapping[str, Sequence[Iterable[str]]] | None,
                     counts: dict[str, int], kept: dict[str, int]
                     ) -> dict[str, list[frozenset[str]]]:
    out: dict[str, list[frozenset[str]]] = {}
    if partition_racks is not None:
        if not isinstance(partition_racks, Mapping):
            raise AssignmentError("partition_racks must map topic -> replica racks of each "
                                  f"partition (found {type(partition_racks).__name__})")
        for topic, per_partition in partition_racks.items():
            if topic not in counts:
                raise AssignmentError(f"partition_racks names topic {topic!r}, which is not in "
                                      "the partition counts")
            if isinstance(per_partition, (str, bytes)) or not isinstance(per_partition,
                                                                         Sequence):
                raise AssignmentError(f"topic {topic!r}: replica racks must be a list with one "
                                      f"collection of racks per partition (found "
                                      f"{per_partition!r})")
            if len(per_partition) != counts[topic]:
                raise AssignmentError(f"topic {topic!r} has {counts[topic]} partitions, but "
                                      f"partition_racks lists {len(per_partition)}")
            sets: list[frozenset[str]] = []
            for p, racks in enumerate(per_partition):
                if isinstance(racks, (str, bytes)) or not isinstance(racks, Iterable):
                    raise AssignmentError(f"{topic}-{p}: replica racks must be a collection of "
                                          f"rack names (found {racks!r})")
                racks = list(racks)
                for r in racks:
                    if not isinstance(r, str):
                        raise AssignmentError(f"{topic}-{p}: rack names must be strings "
                                              f"(found {r!r})")
                sets.append(frozenset(racks))
            if topic in kept:
                out[topic] = sets
    empty: frozenset[str] = frozenset()
    for topic, n in kept.items():
        out.setdefault(topic, [empty] * n)
    return out


def use_rack_aware_assignment(inp: AssignmentInput, consumer_racks: Iterable[str],
                              partition_racks: Iterable[str],
                              racks_per_partition: Iterable[frozenset[str]]) -> bool:
    """``AbstractPartitionAssignor.useRackAwareAssignment``: racks are used when some consumer
    rack holds replicas and some partition has replicas on only a subset of the racks (or always,
    under the test-only ``preferRackAwareLogic``)."""
    consumer_set = set(consumer_racks)
    partition_set = frozenset(partition_racks)
    if not consumer_set or consumer_set.isdisjoint(partition_set):
        return False
    if inp.prefer_rack_aware:
        return True
    return not all(r == partition_set for r in racks_per_partition)


def _uuid_pair(topic: str, tid: object) -> tuple[int, int]:
    from ...checkpoint import Uuid

    if isinstance(tid, Uuid):
        return tid.most_significant_bits, tid.least_significant_bits
    if isinstance(tid, str):
        u = Uuid.from_string(tid)
        return u.most_significant_bits, u.least_significant_bits
    raise AssignmentError(f"topic id of {topic!r} must be a Kafka Uuid or its string "
                          f"(found {tid!r})")
