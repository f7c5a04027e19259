"""Consumer groups through ``kafkalog serve`` with real clients: three consumers of a 6-partition
topic share it under each assignor the library offers; one leaves and the other two take its
partitions; the offsets they commit are in ``__consumer_offsets`` (shown by ``kafkalog groups
describe``) and survive a server restart (a new consumer resumes from them)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import io
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kafkalog import LogDir, Record
from kafkalog.cli import main as cli_main
from kafkalog.groups import GroupMetadataManager

from .conftest import TEST_CONFIG, start_server

TOPIC = "orders"
PARTITIONS = 6
DEADLINE_S = 60
#: session timeout of the test consumers: generous, because the clients share one Python process
#: (and its GIL) with the server: a starved heartbeat thread must not get a member expelled
#: again and again. A leaving member sends LeaveGroup, so no test waits for a session to expire.
SESSION_MS = 20000


def fill(server: Any, per_partition: int, start: int = 0) -> None:
    """Append through the server's loop (waiting fetches are woken there)."""

    def append() -> None:
        for p in range(PARTITIONS):
            server.broker.log(TOPIC, p).append(
                [Record(None, b"%d-%d" % (p, start + i), int(time.time() * 1000))
                 for i in range(per_partition)])
            server.broker.notify((TOPIC, p))

    server.call(append)


def committed(log_dir: Path, group: str) -> dict[tuple[str, int], int]:
    """The group's committed offsets as ``kafkalog groups describe --json`` prints them (the
    server stopped), checked against the engine's GroupMetadataManager."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = cli_main(["groups", "describe", str(log_dir), "--group", group, "--json",
                           "--offsets-topic-partitions",
                           str(TEST_CONFIG.offsets_topic_num_partitions)])
    assert status == 0
    doc = json.loads(out.getvalue())
    shown = {(p["topic"], p["partition"]): p["current_offset"] for p in doc["partitions"]
             if p["current_offset"] is not None}
    with LogDir.open(log_dir, read_only=True) as d:
        assert GroupMetadataManager(d).fetch_offsets(group) == shown
    return shown


def wait_until(cond: Callable[[], bool], what: str,
               state: Callable[[], object] = lambda: "") -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what} {state()}"
        time.sleep(0.05)


class Member:
    """One consumer polled in its own thread (sync clients)."""

    def __init__(self, make: Callable[[], Any], poll: Callable[[Any], list[bytes]],
                 assignment: Callable[[Any], set[int]], commit: Callable[[Any], None]) -> None:
        self.consumer = make()
        self._poll, self._assignment, self._commit = poll, assignment, commit
        self.values: list[bytes] = []
        self.assigned: set[int] = set()
        self.errors: list[BaseException] = []
        self.stop = threading.Event()
        self.commit_now = threading.Event()
        self.committed = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                self.values += self._poll(self.consumer)
            except Exception as e:  # noqa: BLE001 - kept for the failure message
                self.errors.append(e)
                time.sleep(0.1)
            self.assigned = self._assignment(self.consumer)
            if self.commit_now.is_set() and self.assigned:
                try:
                    self._commit(self.consumer)
                except Exception as e:  # noqa: BLE001 - a commit during a rebalance: retry
                    self.errors.append(e)
                    continue
                self.commit_now.clear()
                self.committed.set()
        self.consumer.close()

    def commit(self) -> None:
        self.committed.clear()
        self.commit_now.set()
        wait_until(self.committed.is_set, "a commit",
                   lambda: f"(assigned {sorted(self.assigned)}, {len(self.values)} records, "
                           f"alive {self.thread.is_alive()}, errors {self.errors[-3:]})")

    def leave(self) -> None:
        self.stop.set()
        self.thread.join(30)


def run_scenario(server: Any, log_dir: Path, group: str,
                 member: Callable[[], Member]) -> None:
    """Three members share the topic, all records read, commit; one leaves, the others take
    its partitions and read what follows; offsets are in __consumer_offsets."""
    server.broker.create_topic(TOPIC, PARTITIONS)
    fill(server, 10)
    members = [member() for _ in range(3)]

    def state() -> str:
        return "; ".join(f"member {i}: assigned {sorted(m.assigned)}, {len(m.values)} records, "
                         f"alive {m.thread.is_alive()}, errors {m.errors[-2:]}"
                         for i, m in enumerate(members))

    try:
        wait_until(lambda: sorted(p for m in members for p in m.assigned) == list(range(6))
                   and all(len(m.assigned) == 2 for m in members), "3 x 2 partitions", state)
        # at least once: a record may come twice around a rebalance, none may be missing
        def seen() -> set[bytes]:
            return {v for m in members for v in list(m.values)}

        wait_until(lambda: len(seen()) == 60, "the 60 records", state)
        for m in members:
            m.commit()
        members[0].leave()
        rest = members[1:]
        wait_until(lambda: sorted(p for m in rest for p in m.assigned) == list(range(6)),
                   "the two others to take every partition", state)
        fill(server, 2, start=10)
        wait_until(lambda: len(seen()) == 72, "the 12 new records", state)
        assert seen() == {b"%d-%d" % (p, i) for p in range(6) for i in range(12)}
        for m in rest:
            m.commit()
    finally:
        for m in members:
            m.leave()
    server.stop()
    assert committed(log_dir, group) == {(TOPIC, p): 12 for p in range(6)}


# -- confluent-kafka ---------------------------------------------------------------------------


ck = pytest.importorskip("confluent_kafka", reason="confluent-kafka is not installed")
import confluent_kafka.admin  # noqa: E402,F401 - ck.admin


def _ck_member(address: str, group: str, **config: Any) -> Callable[[], Member]:
    def make() -> Any:
        c = ck.Consumer({"bootstrap.servers": address, "group.id": group,
                         "auto.offset.reset": "earliest", "enable.auto.commit": False,
                         **config})
        c.subscribe([TOPIC])
        return c

    def poll(c: Any) -> list[bytes]:
        m = c.poll(0.05)
        return [m.value()] if m is not None and not m.error() else []

    return lambda: Member(make, poll, lambda c: {tp.partition for tp in c.assignment()},
                          lambda c: c.commit(asynchronous=False))


def ck_member(address: str, group: str, strategy: str) -> Callable[[], Member]:
    return _ck_member(address, group, **{"partition.assignment.strategy": strategy,
                                         "session.timeout.ms": SESSION_MS,
                                         "heartbeat.interval.ms": 200})


def parts(c: Any) -> list[int]:
    """The partitions a librdkafka consumer holds, sorted."""
    return sorted(tp.partition for tp in c.assignment())


def poll_until(consumers: list[Any], cond: Callable[[], bool], what: str) -> None:
    """Poll every consumer until ``cond`` holds (the test fails after DEADLINE_S)."""
    deadline = time.monotonic() + DEADLINE_S
    while not cond():
        assert time.monotonic() < deadline, \
            f"timed out waiting for {what}: {[parts(c) for c in consumers]}"
        for c in consumers:
            c.poll(0.05)


@pytest.mark.parametrize("strategy", ["range", "roundrobin", "cooperative-sticky"])
def test_confluent_kafka_group(server, log_dir, strategy):
    group = f"ck-{strategy}"
    run_scenario(server, log_dir, group, ck_member(server.address, group, strategy))


# -- confluent-kafka with the KIP-848 consumer group protocol ---------------------------------

#: the heartbeat interval the server asks consumer-protocol members for (Kafka's 5 s default
#: would make every reconciliation round trip wait seconds)
KIP848_CONFIG = dataclasses.replace(TEST_CONFIG, group_consumer_heartbeat_interval_ms=250)


def ck_consumer_protocol_member(address: str, group: str) -> Callable[[], Member]:
    """A librdkafka consumer with ``group.protocol=consumer``: ConsumerGroupHeartbeat, the
    server-side assignor, OffsetCommit/OffsetFetch v9 with the member epoch."""
    return _ck_member(address, group, **{"group.protocol": "consumer"})


def test_confluent_kafka_consumer_protocol_group(log_dir):
    """The scenario of the classic assignors, the group formed by KIP-848 heartbeats."""
    server = start_server(log_dir, config=KIP848_CONFIG)
    try:
        run_scenario(server, log_dir, "ck-kip848",
                     ck_consumer_protocol_member(server.address, "ck-kip848"))
    finally:
        server.stop()
    with LogDir.open(log_dir, read_only=True) as d:
        group = GroupMetadataManager(d).consumer_group("ck-kip848")
    assert group is not None and group.state == "empty"   # both left: tombstones replayed
    assert group.group_epoch >= 3 and group.assignment_epoch >= 2


def test_consumer_protocol_static_member_restarts_without_a_rebalance(log_dir):
    """librdkafka with ``group.instance.id``: close() leaves with epoch -2, a new process with
    the same instance id gets the same partitions back and the group epoch does not move."""
    server = start_server(log_dir, config=KIP848_CONFIG)

    def static(instance: str) -> Any:
        c = ck.Consumer({"bootstrap.servers": server.address, "group.id": "kip848-static",
                         "group.protocol": "consumer", "auto.offset.reset": "earliest",
                         "enable.auto.commit": False, "group.instance.id": instance})
        c.subscribe([TOPIC])
        return c

    try:
        server.broker.create_topic(TOPIC, PARTITIONS)
        first, other = static("i1"), static("i2")
        poll_until([first, other], lambda: len(parts(first)) == len(parts(other)) == 3,
                   "2 x 3 partitions")
        held = parts(first)
        group = server.call(lambda: server.broker.groups.coordinator.manager.consumer_group(
            "kip848-static"))
        epoch = group.group_epoch
        first.close()
        assert server.call(lambda: sorted(m.member_epoch for m in group.members.values())) \
            == [-2, epoch]
        again = static("i1")
        poll_until([again, other], lambda: parts(again) == held, "the same partitions back")
        assert server.call(lambda: (group.group_epoch, group.state)) == (epoch, "stable")
        assert parts(other) == sorted(set(range(6)) - set(held))
        again.close()
        other.close()
    finally:
        server.stop()


def test_consumer_protocol_regex_subscription_is_resolved_by_the_server(log_dir):
    """``subscribe(["^orders.*"])`` with the consumer protocol: librdkafka sends the pattern
    (SubscribedTopicRegex) and the coordinator resolves it against the topics served."""
    server = start_server(log_dir, config=KIP848_CONFIG)
    try:
        for topic in ("orders", "orders-eu", "payments"):
            server.broker.create_topic(topic, 2)

        def append() -> None:
            for topic in ("orders", "orders-eu", "payments"):
                for p in range(2):
                    server.broker.log(topic, p).append(
                        [Record(None, f"{topic}-{p}".encode(), int(time.time() * 1000))])
                    server.broker.notify((topic, p))

        server.call(append)
        c = ck.Consumer({"bootstrap.servers": server.address, "group.id": "kip848-regex",
                         "group.protocol": "consumer", "auto.offset.reset": "earliest",
                         "enable.auto.commit": False})
        c.subscribe(["^orders.*"])
        seen: set[bytes] = set()
        deadline = time.monotonic() + DEADLINE_S
        try:
            while len(seen) < 4:
                assert time.monotonic() < deadline, f"timed out: {sorted(seen)}"
                m = c.poll(0.1)
                if m is not None and not m.error():
                    seen.add(m.value())
            assert seen == {b"orders-0", b"orders-1", b"orders-eu-0", b"orders-eu-1"}
            assert sorted((tp.topic, tp.partition) for tp in c.assignment()) == [
                ("orders", 0), ("orders", 1), ("orders-eu", 0), ("orders-eu", 1)]
        finally:
            c.close()
    finally:
        server.stop()
    with LogDir.open(log_dir, read_only=True) as d:
        group = GroupMetadataManager(d).consumer_group("kip848-regex")
    (regex, resolved), = group.resolved_regexes.items()     # replayed from the type-16 record
    assert "orders" in regex and resolved.topics == {"orders", "orders-eu"}


def test_static_consumer_member_restarting_as_classic_downgrades_with_librdkafka(log_dir):
    """A static librdkafka consumer (``group.instance.id``) with ``group.protocol=consumer``
    shares the topic with a classic one; it closes and comes back as a classic consumer with
    the same instance id: the JoinGroup that replaces it turns the group into a classic group
    (``validateOnlineDowngradeWithReplacedMemberId``) and it consumes its old partitions."""
    server = start_server(log_dir, config=KIP848_CONFIG)
    group_id = "kip848-static-downgrade"
    base = {"bootstrap.servers": server.address, "group.id": group_id,
            "auto.offset.reset": "earliest", "enable.auto.commit": False}
    classic_conf = {**base, "partition.assignment.strategy": "range",
                    "session.timeout.ms": SESSION_MS, "heartbeat.interval.ms": 200}

    def state() -> Any:
        coordinator = server.broker.groups.coordinator
        modern = coordinator.manager.consumer_group(group_id)
        return coordinator.group_state(group_id), modern is not None

    try:
        server.broker.create_topic(TOPIC, PARTITIONS)
        other = ck.Consumer(classic_conf)
        other.subscribe([TOPIC])
        poll_until([other], lambda: len(parts(other)) == PARTITIONS, "the classic consumer")
        modern = ck.Consumer({**base, "group.protocol": "consumer",
                              "group.instance.id": "static-1"})
        modern.subscribe([TOPIC])
        both = [other, modern]
        poll_until(both, lambda: sorted(parts(other) + parts(modern)) == list(range(6))
                   and len(parts(modern)) == 3, "3 + 3 (upgraded)")
        assert server.call(state) == ("Stable", True)
        held = parts(modern)
        modern.close()
        restarted = ck.Consumer({**classic_conf, "group.instance.id": "static-1"})
        restarted.subscribe([TOPIC])
        poll_until([other, restarted], lambda: parts(restarted) == held,
                   "the restarted static member holding its partitions")
        assert server.call(state) == ("Stable", False)
        for c in (other, restarted):
            c.close()
    finally:
        server.stop()


def test_online_upgrade_and_downgrade_with_librdkafka(log_dir):
    """Kafka 4.0's bidirectional migration: two classic consumers share the topic; a consumer
    with ``group.protocol=consumer`` joins (the group becomes a consumer group, the classic
    members are reconciled through JoinGroup/SyncGroup, 2 + 2 + 2); it leaves (the group is
    classic again and rebalances, 3 + 3). A classic member commits in between."""
    server = start_server(log_dir, config=KIP848_CONFIG)

    def classic(i: int) -> Any:
        c = ck.Consumer({"bootstrap.servers": server.address, "group.id": "kip848-migration",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False,
                         "partition.assignment.strategy": "range",
                         "session.timeout.ms": SESSION_MS, "heartbeat.interval.ms": 200})
        c.subscribe([TOPIC])
        return c

    def shared(consumers: list[Any], each: int) -> Callable[[], bool]:
        return lambda: sorted(p for c in consumers for p in parts(c)) == list(range(6)) \
            and all(len(parts(c)) == each for c in consumers)

    def state() -> Any:
        coordinator = server.broker.groups.coordinator
        modern = coordinator.manager.consumer_group("kip848-migration")
        return coordinator.group_state("kip848-migration"), modern is not None

    try:
        server.broker.create_topic(TOPIC, PARTITIONS)
        classics = [classic(0), classic(1)]
        poll_until(classics, shared(classics, 3), "3 + 3 (classic)")
        assert server.call(state) == ("Stable", False)
        modern = ck.Consumer({"bootstrap.servers": server.address,
                              "group.id": "kip848-migration", "group.protocol": "consumer",
                              "auto.offset.reset": "earliest", "enable.auto.commit": False})
        modern.subscribe([TOPIC])
        everyone = classics + [modern]
        poll_until(everyone, shared(everyone, 2), "2 + 2 + 2 (upgraded)")
        assert server.call(state) == ("Stable", True)
        first = classics[0]
        first.commit(offsets=[ck.TopicPartition(TOPIC, p, 1) for p in parts(first)],
                     asynchronous=False)
        modern.close()
        poll_until(classics, shared(classics, 3), "3 + 3 (downgraded)")
        assert server.call(state) == ("Stable", False)
        for c in classics:
            c.close()
    finally:
        server.stop()
    with LogDir.open(log_dir, read_only=True) as d:
        manager = GroupMetadataManager(d)
        # a classic group again (both left at the end: Empty), with the commit made while the
        # group was a consumer group
        assert manager.consumer_group("kip848-migration") is None
        gm = manager.group_metadata("kip848-migration")
        assert gm.protocol_type == "consumer" and gm.members == ()
        assert set(manager.fetch_offsets("kip848-migration").values()) == {1}


def test_consumer_protocol_group_is_described_listed_and_deleted(log_dir):
    admin_mod = pytest.importorskip("confluent_kafka.admin")
    server = start_server(log_dir, config=KIP848_CONFIG)
    try:
        server.broker.create_topic(TOPIC, PARTITIONS)
        members = [ck_consumer_protocol_member(server.address, "kip848-admin")()
                   for _ in range(2)]
        try:
            wait_until(lambda: sorted(p for m in members for p in m.assigned) == list(range(6))
                       and all(len(m.assigned) == 3 for m in members), "2 x 3 partitions")
            admin = admin_mod.AdminClient({"bootstrap.servers": server.address})
            listed = admin.list_consumer_groups().result(30)
            assert "kip848-admin" in {g.group_id for g in listed.valid}
            (fut,) = admin.describe_consumer_groups(["kip848-admin"]).values()
            d = fut.result(30)
            assert str(d.type).endswith("CONSUMER") and str(d.state).endswith("STABLE")
            assert d.partition_assignor == "uniform" and len(d.members) == 2
            assert sorted(tp.partition for m in d.members
                          for tp in m.assignment.topic_partitions) == list(range(6))
            (fut,) = admin.delete_consumer_groups(["kip848-admin"]).values()
            with pytest.raises(ck.KafkaException, match="NON_EMPTY_GROUP"):
                fut.result(30)
        finally:
            for m in members:
                m.leave()
        (fut,) = admin.delete_consumer_groups(["kip848-admin"]).values()
        fut.result(30)
    finally:
        server.stop()
    with LogDir.open(log_dir, read_only=True) as d:
        assert not GroupMetadataManager(d).has_group("kip848-admin")


# -- kafka-python ------------------------------------------------------------------------------


kafka = pytest.importorskip("kafka", reason="kafka-python is not installed")


class ProcessMember(Member):
    """A kafka-python member in its own spawned process (see tests/server/kp_process.py); the
    same interface as :class:`Member`, fed by a thread that reads the child's events."""

    def __init__(self, address: str, group: str, strategy: str) -> None:
        import multiprocessing

        from .kp_process import run_member

        ctx = multiprocessing.get_context("spawn")
        self.values, self.assigned, self.errors = [], set(), []
        self.commit_now, self.committed = threading.Event(), threading.Event()
        self._events, self._commands = ctx.Queue(), ctx.Queue()
        self.process = ctx.Process(target=run_member, daemon=True,
                                   args=(address, group, strategy, TOPIC, SESSION_MS,
                                         self._events, self._commands))
        self.process.start()
        self.thread = threading.Thread(target=self._read_events, daemon=True)
        self.thread.start()

    def _read_events(self) -> None:
        import queue

        while self.process.is_alive() or not self._events.empty():
            try:
                kind, data = self._events.get(timeout=0.1)
            except queue.Empty:
                continue
            if kind == "values":
                self.values += data
            elif kind == "assigned":
                self.assigned = set(data)
            elif kind == "error":
                self.errors.append(data)
            elif kind == "committed":
                self.committed.set()

    def commit(self) -> None:
        self.committed.clear()
        self._commands.put("commit")
        wait_until(self.committed.is_set, "a commit",
                   lambda: f"(assigned {sorted(self.assigned)}, {len(self.values)} records, "
                           f"alive {self.process.is_alive()}, errors {self.errors[-3:]})")

    def leave(self) -> None:
        if self.process.is_alive():
            self._commands.put("stop")
            self.process.join(30)
        if self.process.is_alive():
            self.process.kill()
        self.thread.join(30)


def kp_member(address: str, group: str, strategy: str) -> Callable[[], Member]:
    return lambda: ProcessMember(address, group, strategy)


@pytest.mark.parametrize("strategy", ["range", "roundrobin", "sticky", "cooperative-sticky"])
def test_kafka_python_group(server, log_dir, strategy):
    group = f"kp-{strategy}"
    run_scenario(server, log_dir, group, kp_member(server.address, group, strategy))


# -- aiokafka ----------------------------------------------------------------------------------


aiokafka = pytest.importorskip("aiokafka", reason="aiokafka is not installed")


def aio_member(address: str, group: str, strategy: str) -> Callable[[], Member]:
    """An aiokafka consumer on its own event loop in the member's thread."""
    from aiokafka.coordinator.assignors.range import RangePartitionAssignor
    from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
    from aiokafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor

    assignor = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor,
                "sticky": StickyPartitionAssignor}[strategy]

    class AioMember(Member):
        def __init__(self) -> None:
            self.values, self.assigned, self.errors = [], set(), []
            self.stop, self.commit_now = threading.Event(), threading.Event()
            self.committed = threading.Event()
            self.thread = threading.Thread(target=lambda: asyncio.run(self._main()),
                                           daemon=True)
            self.thread.start()

        async def _main(self) -> None:
            c = aiokafka.AIOKafkaConsumer(
                bootstrap_servers=address, group_id=group, auto_offset_reset="earliest",
                enable_auto_commit=False, partition_assignment_strategy=[assignor],
                session_timeout_ms=SESSION_MS, heartbeat_interval_ms=200)
            await c.start()
            c.subscribe([TOPIC])
            try:
                while not self.stop.is_set():
                    batch = await c.getmany(timeout_ms=50)
                    self.values += [m.value for msgs in batch.values() for m in msgs]
                    self.assigned = {tp.partition for tp in c.assignment()}
                    if self.commit_now.is_set() and self.assigned:
                        try:
                            await c.commit()
                        except Exception as e:  # noqa: BLE001 - during a rebalance: retry
                            self.errors.append(e)
                            continue
                        self.commit_now.clear()
                        self.committed.set()
            finally:
                await c.stop()

    return AioMember


@pytest.mark.parametrize("strategy", ["range", "roundrobin", "sticky"])
def test_aiokafka_group(server, log_dir, strategy):
    group = f"aio-{strategy}"
    run_scenario(server, log_dir, group, aio_member(server.address, group, strategy))


# -- restart -----------------------------------------------------------------------------------


@pytest.mark.parametrize("client", ["confluent", "kafka-python", "aiokafka"])
def test_committed_offsets_survive_a_restart(log_dir, client):
    group = f"restart-{client}"
    server = start_server(log_dir)
    make = {"confluent": ck_member, "kafka-python": kp_member, "aiokafka": aio_member}[client]
    run_scenario(server, log_dir, group, make(server.address, group, "range"))
    server = start_server(log_dir)
    try:
        fill(server, 1, start=12)  # one new record per partition after the committed offsets
        m = make(server.address, group, "range")()
        try:
            wait_until(lambda: len(m.values) == 6, "the 6 records after the committed offsets")
            time.sleep(0.5)  # nothing older than the committed offsets arrives
            assert sorted(m.values) == sorted(b"%d-12" % p for p in range(6))
        finally:
            m.leave()
    finally:
        server.stop()


def test_groups_are_described_and_listed(server, log_dir):
    admin_mod = pytest.importorskip("confluent_kafka.admin")
    server.broker.create_topic(TOPIC, PARTITIONS)
    fill(server, 1)
    m = ck_member(server.address, "described", "range")()
    try:
        wait_until(lambda: len(m.assigned) == 6 and len(m.values) == 6, "the 6 records")
        m.commit()
        admin = admin_mod.AdminClient({"bootstrap.servers": server.address})
        listed = admin.list_consumer_groups().result(30)
        assert "described" in {g.group_id for g in listed.valid}
        (desc,) = admin.describe_consumer_groups(["described"]).values()
        d = desc.result(30)
        assert str(d.state).endswith("STABLE") and len(d.members) == 1
        assert {tp.partition for tp in d.members[0].assignment.topic_partitions} == set(
            range(6))
        offsets = admin.list_consumer_group_offsets(
            [ck.ConsumerGroupTopicPartitions("described")])["described"].result(30)
        assert {tp.partition: tp.offset for tp in offsets.topic_partitions} == {
            p: 1 for p in range(6)}
    finally:
        m.leave()
    admin = admin_mod.AdminClient({"bootstrap.servers": server.address})
    (fut,) = admin.delete_consumer_groups(["described"]).values()
    fut.result(30)
    server.stop()
    with LogDir.open(log_dir, read_only=True) as d:
        assert not GroupMetadataManager(d).has_group("described")
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert cli_main(["groups", "describe", str(log_dir), "--group", "described",
                         "--offsets-topic-partitions", "4"]) == 1
    assert "does not exist" in err.getvalue()


def test_offsets_sent_to_a_transaction_follow_its_outcome(server, log_dir):
    """TxnOffsetCommit through AddOffsetsToTxn: committed with the transaction's COMMIT, dropped
    with its ABORT (librdkafka's send_offsets_to_transaction)."""
    server.broker.create_topic(TOPIC, 1)
    server.broker.create_topic("out", 1)
    fill_one = [Record(None, b"in-%d" % i, int(time.time() * 1000)) for i in range(4)]
    server.call(lambda: server.broker.log(TOPIC, 0).append(fill_one))
    consumer = ck.Consumer({"bootstrap.servers": server.address, "group.id": "eos",
                            "auto.offset.reset": "earliest", "enable.auto.commit": False,
                            "isolation.level": "read_committed"})
    consumer.subscribe([TOPIC])
    producer = ck.Producer({"bootstrap.servers": server.address, "transactional.id": "eos-tx"})
    producer.init_transactions(30)
    try:
        got: list[Any] = []
        deadline = time.monotonic() + DEADLINE_S
        while len(got) < 4:
            assert time.monotonic() < deadline
            m = consumer.poll(0.2)
            if m is not None and not m.error():
                got.append(m)
        for outcome, upto in (("commit", 2), ("abort", 4)):
            producer.begin_transaction()
            producer.produce("out", got[upto - 1].value(), partition=0)
            producer.send_offsets_to_transaction(
                [ck.TopicPartition(TOPIC, 0, upto)], consumer.consumer_group_metadata(), 30)
            if outcome == "commit":
                producer.commit_transaction(30)
            else:
                producer.abort_transaction(30)
    finally:
        consumer.close()
    admin = ck.admin.AdminClient({"bootstrap.servers": server.address})
    offsets = admin.list_consumer_group_offsets(
        [ck.ConsumerGroupTopicPartitions("eos")])["eos"].result(30)
    assert [(tp.partition, tp.offset) for tp in offsets.topic_partitions] == [(0, 2)]
    server.stop()
    assert committed(log_dir, "eos") == {(TOPIC, 0): 2}
