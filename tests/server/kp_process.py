"""A kafka-python group member in its own process (spawned), for tests/server/test_groups.py.

kafka-python's consumers and the server in one test process share one GIL: under CPU
starvation a kafka-python 3.0.12 member was seen to stop heartbeating while it kept fetching
(the server, like a broker, then expels it after session.timeout.ms and the group cannot settle;
dpkp/kafka-python#1435 and #2149 describe the same zombie state). A client in its own process,
as clients run in the field, does not compete with the server for the GIL.

Protocol: the child puts ``("values", [bytes])``, ``("assigned", [int])``, ``("error", str)``
and ``("committed", None)`` on ``events``; it reads ``"commit"`` and ``"stop"`` from
``commands``.
"""

from __future__ import annotations

import queue
from typing import Any


def run_member(address: str, group: str, strategy: str, topic: str, session_ms: int,
               events: Any, commands: Any) -> None:
    import kafka
    from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
    from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor

    assignor = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor,
                "sticky": StickyPartitionAssignor,
                "cooperative-sticky": CooperativeStickyAssignor}[strategy]
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
