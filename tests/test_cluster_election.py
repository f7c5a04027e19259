"""Leader election algorithms: Kafka's own test cases, the documented cases, and properties.

Ported from Kafka 3.9 ``core/src/test/scala/unit/kafka/controller/
PartitionLeaderElectionAlgorithmsTest.scala`` (one test function per Kafka test, same inputs
and expected leader), then the cases the issue documents, then hypothesis properties that
restate each algorithm's contract independently of its implementation.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkalog.cluster import elect_leader
from kafkalog.cluster.election import (
    controlled_shutdown_partition_leader_election,
    offline_partition_leader_election,
    preferred_replica_partition_leader_election,
    reassign_partition_leader_election,
)

# --------------------------------------------------------------------------------------------
# PartitionLeaderElectionAlgorithmsTest (Kafka 3.9)
# --------------------------------------------------------------------------------------------


def test_offline_partition_leader_election() -> None:
    assert offline_partition_leader_election([2, 4], [2, 4], {4}, False) == 4


def test_offline_partition_leader_election_last_isr_offline_unclean_disabled() -> None:
    assert offline_partition_leader_election([2, 4], [2], {4}, False) is None


def test_offline_partition_leader_election_last_isr_offline_unclean_enabled() -> None:
    assert offline_partition_leader_election([2, 4], [2], {4}, True) == 4


def test_reassign_partition_leader_election() -> None:
    assert reassign_partition_leader_election([2, 4], [2, 4], {4}) == 4


def test_reassign_partition_leader_election_with_no_live_isr() -> None:
    assert reassign_partition_leader_election([2, 4], [2], set()) is None


def test_reassign_partition_leader_election_with_empty_isr() -> None:
    assert reassign_partition_leader_election([2, 4], [], {2}) is None


def test_preferred_replica_partition_leader_election() -> None:
    assert preferred_replica_partition_leader_election([2, 4], [2, 4], {2, 4}) == 2


def test_preferred_replica_in_isr_not_live() -> None:
    assert preferred_replica_partition_leader_election([2, 4], [2], set()) is None


def test_preferred_replica_not_in_isr_live() -> None:
    assert preferred_replica_partition_leader_election([2, 4], [4], {2, 4}) is None


def test_preferred_replica_not_in_isr_not_live() -> None:
    assert preferred_replica_partition_leader_election([2, 4], [], set()) is None


def test_controlled_shutdown_partition_leader_election() -> None:
    assert controlled_shutdown_partition_leader_election([2, 4], [2, 4], {2, 4}, {2}) == 4


def test_controlled_shutdown_last_isr_shutting_down() -> None:
    assert controlled_shutdown_partition_leader_election([2, 4], [2], {2, 4}, {2}) is None


def test_controlled_shutdown_all_isr_simultaneously_shutdown() -> None:
    assert controlled_shutdown_partition_leader_election([2, 4], [2, 4], {2, 4}, {2, 4}) is None


# The same Kafka cases through the public entry point.
@pytest.mark.parametrize("replicas, isr, live, kw, expected", [
    ([2, 4], [2, 4], {4}, {}, 4),
    ([2, 4], [2], {4}, {}, None),
    ([2, 4], [2], {4}, {"unclean": True}, 4),
    ([2, 4], [2, 4], {4}, {"reason": "reassignment"}, 4),
    ([2, 4], [2], set(), {"reason": "reassignment"}, None),
    ([2, 4], [], {2}, {"reason": "reassignment"}, None),
    ([2, 4], [2, 4], {2, 4}, {"reason": "preferred"}, 2),
    ([2, 4], [2], set(), {"reason": "preferred"}, None),
    ([2, 4], [4], {2, 4}, {"reason": "preferred"}, None),
    ([2, 4], [], set(), {"reason": "preferred"}, None),
    ([2, 4], [2, 4], {2, 4}, {"reason": "controlled_shutdown", "shutting_down": {2}}, 4),
    ([2, 4], [2], {2, 4}, {"reason": "controlled_shutdown", "shutting_down": {2}}, None),
    ([2, 4], [2, 4], {2, 4}, {"reason": "controlled-shutdown", "shutting_down": {2, 4}}, None),
])
def test_kafka_cases_through_elect_leader(replicas, isr, live, kw, expected) -> None:
    assert elect_leader(replicas, isr, live, **kw) == expected


# --------------------------------------------------------------------------------------------
# The documented cases
# --------------------------------------------------------------------------------------------


def test_documented_offline_election_first_live_isr_member_in_assignment_order() -> None:
    assert elect_leader([1, 2, 3], [2, 3], {1, 2, 3}, reason="offline") == 2


def test_documented_preferred_election() -> None:
    assert elect_leader([1, 2, 3], [1, 2, 3], {1, 2, 3}, reason="preferred") == 1
    assert elect_leader([1, 2, 3], [2, 3], {1, 2, 3}, reason="preferred") is None


def test_documented_controlled_shutdown() -> None:
    assert elect_leader([1, 2, 3], [2, 3], {1, 2, 3}, reason="controlled_shutdown",
                        shutting_down={2}) == 3
    # a broker shutting down counts as live whether or not the caller lists it
    assert elect_leader([1, 2, 3], [2, 3], {1, 3}, reason="controlled_shutdown",
                        shutting_down={2}) == 3


def test_documented_unclean_only_when_allowed() -> None:
    assert elect_leader([1, 2, 3], [], {3}, unclean=True) == 3
    assert elect_leader([1, 2, 3], [], {3}, unclean=False) is None
    assert elect_leader([1, 2, 3], [], {3}) is None


def test_misuse_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="unknown election reason"):
        elect_leader([1], [1], {1}, reason="random")
    with pytest.raises(ValueError, match="offline partitions only"):
        elect_leader([1], [1], {1}, reason="preferred", unclean=True)


# --------------------------------------------------------------------------------------------
# Properties: each algorithm's contract, restated
# --------------------------------------------------------------------------------------------

_ids = st.integers(min_value=0, max_value=6)
_assignment = st.lists(_ids, min_size=1, max_size=5, unique=True)


@given(_assignment, st.sets(_ids), st.sets(_ids), st.booleans())
def test_offline_property(assignment, isr, live, unclean) -> None:
    leader = elect_leader(assignment, isr, live, unclean=unclean)
    clean = [r for r in assignment if r in isr and r in live]
    if clean:
        assert leader == clean[0]           # never unclean while a clean candidate exists
    elif unclean and any(r in live for r in assignment):
        assert leader == next(r for r in assignment if r in live)
    else:
        assert leader is None


@given(_assignment, st.sets(_ids), st.sets(_ids))
def test_preferred_property(assignment, isr, live) -> None:
    leader = elect_leader(assignment, isr, live, reason="preferred")
    ok = assignment[0] in isr and assignment[0] in live
    assert leader == (assignment[0] if ok else None)


@given(_assignment, st.sets(_ids), st.sets(_ids), st.sets(_ids))
def test_controlled_shutdown_property(assignment, isr, live, down) -> None:
    leader = elect_leader(assignment, isr, live, reason="controlled_shutdown",
                          shutting_down=down)
    if leader is None:
        assert not [r for r in assignment if r in isr and r not in down and r in live | down]
    else:
        assert leader in isr and leader not in down and leader in live
        before = assignment[:assignment.index(leader)]
        assert not [r for r in before if r in isr and r not in down and r in live]
