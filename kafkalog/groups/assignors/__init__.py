"""Kafka's partition assignors: :func:`assign` runs one by name.

=======================  ======================================================================
strategy                 Kafka class (release ported)
=======================  ======================================================================
``range``                clients ``RangeAssignor`` (3.9)
``roundrobin``           clients ``RoundRobinAssignor`` (3.9)
``sticky``               clients ``StickyAssignor`` / ``AbstractStickyAssignor`` (3.9)
``cooperative-sticky``   clients ``CooperativeStickyAssignor`` (3.9)
``uniform``              group-coordinator ``UniformAssignor`` (KIP-848 server side, 4.0)
``server-range``         group-coordinator ``RangeAssignor`` (KIP-848 server side, 4.0)
``simple``               group-coordinator ``SimpleAssignor`` (KIP-932 share groups, 4.1)
=======================  ======================================================================

``range``, ``sticky`` and ``cooperative-sticky`` are rack-aware (KIP-881, Kafka 3.5+) when given
the members' ``client.rack`` (``consumer_racks``) and the racks of each partition's replicas
(``partition_racks``); the others ignore racks, as in Kafka.

>>> assign("range", {"c1": ["t"], "c2": ["t"], "c3": ["t"]}, {"t": 7})
{'c1': [('t', 0), ('t', 1), ('t', 2)], 'c2': [('t', 3), ('t', 4)], 'c3': [('t', 5), ('t', 6)]}
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from ..errors import AssignmentError
from .model import AssignmentInput, TopicPartition
from .range import assign_range
from .roundrobin import assign_roundrobin
from .server_range import assign_server_range
from .share_simple import assign_share_simple
from .sticky import assign_cooperative_sticky, assign_sticky
from .uniform import assign_uniform

__all__ = ["assign", "STRATEGIES", "CLIENT_STRATEGIES", "SERVER_STRATEGIES", "AssignmentInput"]

_Assignor = Callable[[AssignmentInput], dict[str, list[TopicPartition]]]

#: the consumer-side assignors (``partition.assignment.strategy`` names)
CLIENT_STRATEGIES: dict[str, _Assignor] = {
    "range": assign_range,
    "roundrobin": assign_roundrobin,
    "sticky": assign_sticky,
    "cooperative-sticky": assign_cooperative_sticky,
}
#: the KIP-848 server-side assignors (``group.consumer.assignors``; named here to avoid the clash
#: between the two ``range`` assignors)
SERVER_STRATEGIES: dict[str, _Assignor] = {
    "uniform": assign_uniform,
    "server-range": assign_server_range,
    "simple": assign_share_simple,
}
STRATEGIES: dict[str, _Assignor] = {**CLIENT_STRATEGIES, **SERVER_STRATEGIES}


def assign(
    strategy: str,
    subscriptions: Mapping[str, Sequence[str]],
    partitions: Mapping[str, int],
    *,
    owned: Mapping[str, Sequence[TopicPartition]] | None = None,
    generations: Mapping[str, int | None] | None = None,
    group_instance_ids: Mapping[str, str | None] | None = None,
    topic_ids: Mapping[str, object] | None = None,
    consumer_racks: Mapping[str, str | None] | None = None,
    partition_racks: Mapping[str, Sequence[Iterable[str]]] | None = None,
) -> dict[str, list[tuple[str, int]]]:
    """Assign the partitions of the subscribed topics to the members, as Kafka's assignor does.

    Parameters
    ----------
    strategy:
        One of :data:`STRATEGIES` (``range``, ``roundrobin``, ``sticky``,
        ``cooperative-sticky``, ``uniform``, ``server-range``, ``simple``: KIP-932 share
        groups, where members may share a partition).
    subscriptions:
        member id -> subscribed topics. Its order is the order the members joined in (Kafka's
        member maps are ``HashMap``\\ s: where their iteration decides a tie, that order is
        reproduced from this one).
    partitions:
        topic -> partition count (topics nobody subscribes to are ignored).
    owned:
        member id -> its previous assignment (the sticky assignors keep what they can; the
        server-side ``uniform`` assignor starts from it).
    generations:
        member id -> the generation its ``owned`` partitions come from (None: unknown, as a
        subscription without generation). Default: every member of the same generation.
    group_instance_ids:
        member id -> ``group.instance.id`` of static members (sorts them first in ``range``,
        ``roundrobin`` and ``server-range``).
    topic_ids:
        topic -> Kafka ``Uuid`` (string or :class:`~kafkalog.checkpoint.Uuid`), for the server
        assignors' topic order.
    consumer_racks:
        member id -> its ``client.rack`` (``Subscription.rackId``; None or empty: no rack).
    partition_racks:
        topic -> for each partition, in order, the racks of its replicas (``PartitionInfo.
        replicas()``; replicas without a rack left out; a topic missing here has no rack
        information). With ``consumer_racks`` it makes ``range``, ``sticky`` and
        ``cooperative-sticky`` rack-aware (``AbstractPartitionAssignor.useRackAwareAssignment``:
        only when some member's rack holds replicas and some partition's replicas are not on
        every rack): members are given partitions with a replica on their rack where the
        balance allows (``range``: per-topic quotas and co-partitioning first; the sticky
        assignors: owned partitions off the member's rack are given up). Members without a rack
        take any partition.

    Returns
    -------
    dict
        Every member (in ``subscriptions`` order) -> its ``(topic, partition)`` list, in the
        order Kafka's assignor builds it (sorted by topic and partition for the server
        assignors, which produce sets).

    Raises
    ------
    AssignmentError
        An unknown strategy, a member subscribed to a topic missing from ``partitions``, a
        negative count, a rack for an unknown member or topic, replica racks not listing every
        partition of their topic, a rack that is not a string, a malformed argument.

    Examples
    --------
    >>> assign("roundrobin", {"c1": ["t"], "c2": ["t"], "c3": ["t"]}, {"t": 6})["c1"]
    [('t', 0), ('t', 3)]
    >>> assign("sticky", {"c1": ["t"], "c2": ["t"]}, {"t": 6},
    ...        owned={"c1": [("t", 0), ("t", 1)], "c2": [("t", 2), ("t", 3)]})["c2"]
    [('t', 2), ('t', 3), ('t', 5)]

    With racks, partitions go to members on a rack of their replicas (here even partitions on
    rack ``a``, odd ones on ``b``):

    >>> racks = {"t": [{"a"}, {"b"}, {"a"}, {"b"}]}
    >>> assign("range", {"c1": ["t"], "c2": ["t"]}, {"t": 4},
    ...        consumer_racks={"c1": "a", "c2": "b"}, partition_racks=racks)
    {'c1': [('t', 0), ('t', 2)], 'c2': [('t', 1), ('t', 3)]}
    """
    fn = STRATEGIES.get(strategy) if isinstance(strategy, str) else None
    if fn is None:
        raise AssignmentError(
            f"unknown assignment strategy {strategy!r} (expected one of "
            f"{', '.join(STRATEGIES)})")
    inp = AssignmentInput.build(subscriptions, partitions, owned=owned, generations=generations,
                                group_instance_ids=group_instance_ids, topic_ids=topic_ids,
                                consumer_racks=consumer_racks, partition_racks=partition_racks)
    return fn(inp)
