"""A kafka-python group member in its own process (spawned), for tests/server/test_groups.py.

Each member runs in its own process, as clients run in the field: the test process hosts the
server, and a client sharing its GIL measures the server's scheduling more than the protocol.

A kafka-python 3.0.12 member was seen to stop heartbeating while it kept fetching (the server,
like a broker, expels it after session.timeout.ms and the group cannot settle). First taken for
GIL starvation; the members' debug logs (``KAFKALOG_TEST_KP_LOG_DIR``) showed a client race in
its join loop instead, which :func:`_close_join_race` closes for these tests.

Protocol: the child puts ``("values", [bytes])``, ``("assigned", [int])``, ``("error", str)``
and ``("committed", None)`` on ``events``; it reads ``"commit"`` and ``"stop"`` from
``commands``.
"""

from __future__ import annotations

import logging
import os
import queue
from typing import Any


def _close_join_race() -> None:
    """Work around a kafka-python 3.0.x client bug that leaves a member half-joined forever.

    ``BaseCoordinator.join_group_async`` loops ``while self.need_rejoin()`` and, when
    ``poll(timeout_ms=...)`` expires first, leaves its JoinGroup/SyncGroup task in flight for
    the next poll. The leader's ``need_rejoin`` is True while its assignment snapshot differs
    from its metadata snapshot (the first metadata answer after ``subscribe`` often lands after
    the first join); performing the assignment makes the two equal, so ``need_rejoin`` turns
    False while the SyncGroup is still in flight. The next poll skips the loop: the task's
    result is never consumed, the member stays REBALANCING with heartbeats disabled, every
    commit raises RebalanceInProgressError, and the coordinator (ours, or a broker's) expels
    it after session.timeout.ms. Seen in this repository's CI (debug logs of the member: the
    leader's SyncGroup answered, then no "Enabling heartbeat" and no assignment applied).
    kafka-python 1.4.5 guarded this (dpkp/kafka-python#1695: "check that join_future is not
    pending in ensure_active_group"); the 3.0 rewrite lost the guard. The fix here is that
    guard: a join task not yet consumed means a rejoin is still needed."""
    from kafka.coordinator.consumer import ConsumerCoordinator

    original = ConsumerCoordinator.need_rejoin
    if getattr(original, "kafkalog_join_race_closed", False):
        return

    def need_rejoin(self: Any) -> bool:
        if getattr(self, "_join_task", None) is not None:
            return True
        return original(self)

    need_rejoin.kafkalog_join_race_closed = True  # type: ignore[attr-defined]
    ConsumerCoordinator.need_rejoin = need_rejoin  # type: ignore[method-assign]


def run_member(address: str, group: str, strategy: str, topic: str, session_ms: int,
               events: Any, commands: Any) -> None:
    if os.environ.get("KAFKALOG_TEST_KP_LOG_DIR"):  # a member's debug log, for a failure's story
        logging.basicConfig(
            filename=os.path.join(os.environ["KAFKALOG_TEST_KP_LOG_DIR"], f"{os.getpid()}.log"),
            level=logging.DEBUG,
            format="%(asctime)s %(threadName)s %(name)s %(levelname)s %(message)s")
    import kafka
    from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
    from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor

    assignor = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor,
                "sticky": StickyPartitionAssignor,
                "cooperative-sticky": CooperativeStickyAssignor}[strategy]
    _close_join_race()
    c = kafka.KafkaConsumer(bootstrap_servers=address, group_id=group,
                            auto_offset_reset="earliest", enable_auto_commit=False,
                            partition_assignment_strategy=[assignor],
                            session_timeout_ms=session_ms, heartbeat_interval_ms=200)
    # kafka-python may join before its first metadata answer for the subscription (the leader
    # then assigns nothing and waits for a metadata refresh to rejoin): ask first
    c.partitions_for_topic(topic)
    c.subscribe([topic])
    assigned: list[int] = []
    commit_wanted = False
    try:
        while True:
            try:
                cmd = commands.get_nowait()
            except queue.Empty:
                cmd = None
            if cmd == "stop":
                return
            if cmd == "commit":
                commit_wanted = True
            try:
                values = [m.value for msgs in c.poll(timeout_ms=50).values() for m in msgs]
                if values:
                    events.put(("values", values))
            except Exception as e:  # noqa: BLE001 - reported to the test
                events.put(("error", repr(e)))
            now = sorted(tp.partition for tp in c.assignment())
            if now != assigned:
                assigned = now
                events.put(("assigned", now))
            if commit_wanted and assigned:
                try:
                    c.commit()
                except Exception as e:  # noqa: BLE001 - a commit during a rebalance: retry
                    events.put(("error", repr(e)))
                    continue
                commit_wanted = False
                events.put(("committed", None))
    finally:
        c.close()
