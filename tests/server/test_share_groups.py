"""KIP-932 share groups against a real server, with librdkafka's share consumer
(confluent-kafka's ``ShareConsumer``, librdkafka >= 2.13) as the peer: records shared between
members and delivered once, explicit RELEASE and REJECT, redelivery after a consumer process is
killed, and the protocol's odd inputs as raw requests."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from kafkalog.server import ServerConfig
from kafkalog.server.protocol import ErrorCode as E

from .conftest import start_server
from .wire import WireClient

ck = pytest.importorskip("confluent_kafka", reason="confluent-kafka is not installed")
if not hasattr(ck, "ShareConsumer"):
    pytest.skip("this confluent-kafka has no ShareConsumer (KIP-932 needs >= 2.13)",
                allow_module_level=True)
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

CONFIG = ServerConfig(offsets_topic_num_partitions=4, transaction_state_num_partitions=4,
                      group_initial_rebalance_delay_ms=0, share_auto_offset_reset="earliest",
                      group_share_record_lock_duration_ms=3000,
                      share_coordinator_state_topic_num_partitions=4)


@pytest.fixture
def log_dir(tmp_path):
    return tmp_path / "logs"


@pytest.fixture
def server(log_dir):
    s = start_server(log_dir, config=CONFIG)
    try:
        yield s
    finally:
        s.stop()


def _topic(server, name: str, partitions: int, records: int) -> None:
    admin = AdminClient({"bootstrap.servers": server.address})
    for f in admin.create_topics([NewTopic(name, partitions, 1)]).values():
        f.result(30)
    _produce(server, name, partitions, records)


def _produce(server, name: str, partitions: int, records: int) -> None:
    p = ck.Producer({"bootstrap.servers": server.address, "linger.ms": 5})
    for i in range(records):
        p.produce(name, value=b"v%d" % i, partition=i % partitions)
    assert p.flush(30) == 0


def _consumer(server, group: str, **conf) -> ck.ShareConsumer:
    c = ck.ShareConsumer({"bootstrap.servers": server.address, "group.id": group,
                          "log_level": 3, **conf})
    return c


def _drain(consumers, want: int, deadline_s: float = 30.0, on_message=None) -> dict:
    """Poll the consumers in turn until ``want`` records arrived; ``name -> [(p, offset,
    delivery count)]``."""
    got: dict = {name: [] for name in consumers}
    end = time.monotonic() + deadline_s
    while sum(map(len, got.values())) < want and time.monotonic() < end:
        for name, c in consumers.items():
            for m in c.poll(0.2):
                assert m.error() is None, m.error()
                got[name].append((m.partition(), m.offset(), m.delivery_count()))
                if on_message is not None:
                    on_message(name, c, m)
    return got


def test_two_members_share_partitions_and_each_record_is_delivered_once(server):
    _topic(server, "jobs", 2, 0)
    consumers = {n: _consumer(server, "workers", **{"max.poll.records": 20}) for n in "ab"}
    try:
        for c in consumers.values():
            c.subscribe(["jobs"])
        # both members in, each with its partition, before any record exists (a member alone
        # in the group would hold both partitions)
        group = None
        end = time.monotonic() + 30
        while time.monotonic() < end:
            for c in consumers.values():
                assert len(c.poll(0.1)) == 0
            group = server.broker.shares.coordinator.group("workers")
            sessions = [s for (g, _m), s in server.broker.shares.sessions.items()
                        if g == "workers"]
            # (and each member's share session fetches only its partition: a member that
            # has not yet dropped a partition it lost would still fetch it)
            if group is not None and len(group.members) == 2 and all(
                    len(m.assignment.get("jobs", ())) == 1 for m in group.members.values()) \
                    and len(sessions) == 2 and all(len(s.partitions) == 1 for s in sessions):
                break
        else:
            raise AssertionError(f"the group did not settle: {group}, {sessions}")
        _produce(server, "jobs", 2, 400)
        got = _drain(consumers, 400)
        everything = [r[:2] for rs in got.values() for r in rs]
        assert len(everything) == len(set(everything)) == 400  # once each, none lost
        assert sorted(everything) == sorted((i % 2, i // 2) for i in range(400))
        assert {dc for rs in got.values() for *_, dc in rs} == {1}
        for c in consumers.values():  # implicit acks of the last poll go with the next one
            c.poll(0.5)
        shares = server.broker.shares
        assert [sp[3] for sp in shares.describe_partition_state()] == [200, 200]
        group = shares.coordinator.group("workers")
        assert len(group.members) == 2 and group.state == "Stable"
        # two members, two partitions: one each (the simple assignor balances), and each
        # member got exactly the records of its partition
        held = sorted(tuple(m.assignment["jobs"]) for m in group.members.values())
        assert held == [(0,), (1,)]
        assert sorted(tuple(sorted({p for p, _o, _dc in rs})) for rs in got.values()) \
            == [(0,), (1,)]
    finally:
        for c in consumers.values():
            c.close()


def test_release_redelivers_and_reject_archives(server):
    _topic(server, "tasks", 1, 10)
    c = _consumer(server, "explicit", **{"share.acknowledgement.mode": "explicit"})
    try:
        c.subscribe(["tasks"])
        first: list = []
        end = time.monotonic() + 30
        while len(first) < 10 and time.monotonic() < end:
            batch = c.poll(0.5)
            for m in batch:
                first.append((m.offset(), m.delivery_count()))
                kind = (ck.AcknowledgeType.RELEASE if m.offset() in (2, 3)
                        else ck.AcknowledgeType.REJECT if m.offset() == 5
                        else ck.AcknowledgeType.ACCEPT)
                c.acknowledge(m, kind)
            if batch:
                c.commit_sync(10)
        assert sorted(first) == [(i, 1) for i in range(10)]
        again: list = []
        end = time.monotonic() + 30
        while len(again) < 2 and time.monotonic() < end:
            batch = c.poll(0.5)
            for m in batch:
                again.append((m.offset(), m.delivery_count()))
                c.acknowledge(m, ck.AcknowledgeType.ACCEPT)
            if batch:
                c.commit_sync(10)
        assert sorted(again) == [(2, 2), (3, 2)]  # released: delivered a second time
        (state,) = server.broker.shares.describe_partition_state()
        assert state[3] == 10  # accepted or rejected: the start offset passed them all
        assert len(c.poll(1.0)) == 0  # the rejected offset 5 never comes back
    finally:
        c.close()


KILLED_CONSUMER = textwrap.dedent("""
    import sys, time, confluent_kafka as ck
    c = ck.ShareConsumer({"bootstrap.servers": sys.argv[1], "group.id": "crashers",
                          "share.acknowledgement.mode": "explicit", "log_level": 0})
    c.subscribe(["crash"])
    while True:
        msgs = c.poll(0.5)
        if len(msgs):
            print(len(msgs), flush=True)  # holds them, acknowledges nothing
            time.sleep(600)
""")


def test_records_of_a_killed_consumer_are_redelivered(server):
    _topic(server, "crash", 1, 5)
    proc = subprocess.Popen([sys.executable, "-c", KILLED_CONSUMER, server.address],
                            stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert int(line) == 5
        (state,) = server.broker.shares.describe_partition_state()
        assert state[4] == 5  # all five held by the doomed consumer
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        c = _consumer(server, "crashers")
        try:
            c.subscribe(["crash"])
            got = _drain({"c": c}, 5)["c"]
            # its connection dropped: its share session ended and the records came back
            assert sorted((o, dc) for _p, o, dc in got) == [(i, 2) for i in range(5)]
        finally:
            c.close()
    finally:
        if proc.poll() is None:
            proc.kill()


def test_share_protocol_odd_inputs_on_the_wire(server):
    _topic(server, "w", 1, 3)
    tid = server.broker.topic_id("w").to_bytes()
    import uuid

    topic_id = uuid.UUID(bytes=tid)
    with WireClient(server.address) as w:
        hb = w.request(76, 1, {"group_id": "wg", "member_id": "m-1", "member_epoch": 0,
                               "rack_id": None, "subscribed_topic_names": ["w"]})
        assert (hb.error_code, hb.member_epoch) == (E.none, 1)
        assert [(t.topic_id, list(t.partitions)) for t in hb.assignment.topic_partitions] \
            == [(topic_id, [0])]

        def fetch(epoch, acks=(), version=1, topics=True):
            parts = [{"partition_index": 0, "acknowledgement_batches": list(acks)}]
            return w.request(78, version, {
                "group_id": "wg", "member_id": "m-1", "share_session_epoch": epoch,
                "max_wait": 0, "min_bytes": 1, "max_bytes": 1 << 20, "max_records": 500,
                "batch_size": 500,
                "topics": [{"topic_id": topic_id, "partitions": parts}] if topics else [],
                "forgotten_topics_data": []})

        assert fetch(1).error_code == E.share_session_not_found
        ack = {"first_offset": 0, "last_offset": 0, "acknowledge_types": [1]}
        assert fetch(0, [ack]).error_code == E.invalid_request
        r = fetch(0)
        part = r.responses[0].partitions[0]
        assert [(a.first_offset, a.last_offset, a.delivery_count)
                for a in part.acquired_records] == [(0, 2, 1)]
        assert r.acquisition_lock_timeout.total_seconds() == 3.0
        assert fetch(5).error_code == E.invalid_share_session_epoch
        bad = {"first_offset": 7, "last_offset": 7, "acknowledge_types": [1]}
        r = fetch(1, [bad])
        assert r.responses[0].partitions[0].acknowledge_error_code == E.invalid_record_state
        good = {"first_offset": 0, "last_offset": 2, "acknowledge_types": [1]}
        ackr = w.request(79, 1, {"group_id": "wg", "member_id": "m-1",
                                 "share_session_epoch": 2, "topics": [
                                     {"topic_id": topic_id, "partitions": [
                                         {"partition_index": 0,
                                          "acknowledgement_batches": [good]}]}]})
        assert ackr.responses[0].partitions[0].error_code == E.none
        (state,) = server.broker.shares.describe_partition_state()
        assert state[3] == 3
        unknown = uuid.uuid4()
        r = w.request(78, 1, {
            "group_id": "wg", "member_id": "m-1", "share_session_epoch": 3, "max_wait": 0,
            "min_bytes": 1, "max_bytes": 1 << 20, "max_records": 10, "batch_size": 10,
            "topics": [{"topic_id": unknown, "partitions": [
                {"partition_index": 0, "acknowledgement_batches": []}]}],
            "forgotten_topics_data": []})
        assert [(t.topic_id, t.partitions[0].error_code) for t in r.responses] == [
            (unknown, E.unknown_topic_id)]
        d = w.request(77, 1, {"group_ids": ["wg", "nope"], "include_authorized_operations": False})
        wg, nope = d.groups
        assert (wg.group_state, wg.assignor_name, [m.member_id for m in wg.members]) == (
            "Stable", "simple", ["m-1"])
        assert wg.members[0].assignment.topic_partitions[0].topic_name == "w"
        assert (nope.error_code, nope.error_message) == (E.group_id_not_found,
                                                         "Group nope not found.")
        # the id is a share group's: classic and consumer protocols are refused
        jg = w.request(11, 5, {"group_id": "wg", "session_timeout": 10000,
                               "rebalance_timeout": 10000, "member_id": "",
                               "group_instance_id": None, "protocol_type": "consumer",
                               "protocols": [{"name": "range", "metadata": b""}]})
        assert jg.error_code == E.inconsistent_group_protocol
        cg = w.request(68, 0, {"group_id": "wg", "member_id": "x", "member_epoch": 0,
                               "instance_id": None, "rack_id": None, "rebalance_timeout": 1000,
                               "subscribed_topic_names": ["w"], "server_assignor": None,
                               "topic_partitions": []})
        assert (cg.error_code, cg.error_message) == (E.group_id_not_found,
                                                     "Group wg is not a consumer group.")
        lg = w.request(16, 5, {"states_filter": [], "types_filter": ["Share"]})
        assert [(g.group_id, g.group_type, g.group_state) for g in lg.groups] == [
            ("wg", "share", "Stable")]
        lg = w.request(16, 5, {"states_filter": [], "types_filter": ["classic"]})
        assert [g.group_id for g in lg.groups] == []
        leave = w.request(76, 1, {"group_id": "wg", "member_id": "m-1", "member_epoch": -1,
                                  "rack_id": None, "subscribed_topic_names": None})
        assert (leave.error_code, leave.member_epoch) == (E.none, -1)


def test_share_state_survives_a_restart_in_kafkas_record_format(log_dir):
    s = start_server(log_dir, config=CONFIG)
    try:
        _topic(s, "durable", 1, 10)
        c = _consumer(s, "keep", **{"share.acknowledgement.mode": "explicit"})
        try:
            c.subscribe(["durable"])
            seen = 0
            end = time.monotonic() + 30
            while seen < 10 and time.monotonic() < end:
                batch = c.poll(0.5)
                for m in batch:
                    seen += 1
                    c.acknowledge(m, ck.AcknowledgeType.ACCEPT if m.offset() < 4 or
                                  m.offset() == 6 else ck.AcknowledgeType.RELEASE)
                if batch:
                    c.commit_sync(10)
            assert seen == 10
        finally:
            c.close()
        (state,) = s.broker.shares.describe_partition_state()
        assert state[3] == 4
    finally:
        s.stop()
    # Kafka's own dump tool shape of the records written
    from kafkalog.cli import main

    files = sorted(str(f) for f in log_dir.glob("__share_group_state-*/*.log")
                   if f.stat().st_size)
    assert files
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["dump-segments", "--files", *files, "--share-group-state-decoder"]) == 0
    last = [line for line in out.getvalue().splitlines() if "ShareSnapshot" in line
            or '"type":"0"' in line][-1]
    assert '"startOffset":4' in last
    assert '{"firstOffset":4,"lastOffset":5,"deliveryState":0,"deliveryCount":1}' in last
    assert '{"firstOffset":6,"lastOffset":6,"deliveryState":2,"deliveryCount":1}' in last
    s = start_server(log_dir, config=CONFIG)
    try:
        c = _consumer(s, "keep")
        try:
            c.subscribe(["durable"])
            got = _drain({"c": c}, 5)["c"]
            # offsets 4, 5, 7, 8, 9 (released, a second delivery); 6 was accepted
            assert sorted((o, dc) for _p, o, dc in got) == [(4, 2), (5, 2), (7, 2), (8, 2),
                                                            (9, 2)]
        finally:
            c.close()
    finally:
        s.stop()


def test_share_group_offsets_described_and_the_group_deleted(server, log_dir):
    _topic(server, "offs", 2, 10)  # 5 records a partition
    c = _consumer(server, "sg", **{"share.acknowledgement.mode": "explicit"})
    admin = AdminClient({"bootstrap.servers": server.address})
    try:
        c.subscribe(["offs"])
        acked = 0
        end = time.monotonic() + 30
        while acked < 10 and time.monotonic() < end:
            batch = c.poll(0.5)
            for m in batch:
                # partition 1: offset 1 rejected, offset 3 released (comes back)
                kind = (ck.AcknowledgeType.REJECT if (m.partition(), m.offset()) == (1, 1)
                        else ck.AcknowledgeType.RELEASE if (m.partition(), m.offset()) == (1, 3)
                        and m.delivery_count() == 1 else ck.AcknowledgeType.ACCEPT)
                c.acknowledge(m, kind)
                acked += kind != ck.AcknowledgeType.RELEASE
            if batch:
                c.commit_sync(10)
        assert acked == 10
        # a group with a member cannot be deleted
        (fut,) = admin.delete_consumer_groups(["sg"]).values()
        with pytest.raises(ck.KafkaException) as e:
            fut.result(30)
        assert e.value.args[0].code() == ck.KafkaError.NON_EMPTY_GROUP
    finally:
        c.close()
    with WireClient(server.address) as w:
        r = w.request(90, 1, {"groups": [{"group_id": "sg", "topics": None},
                                         {"group_id": "ghost", "topics": None}]})
        sg, ghost = r.groups
        assert [(t.topic_name, [(p.partition_index, p.start_offset, p.lag)
                                for p in t.partitions]) for t in sg.topics] == [
            ("offs", [(0, 5, 0), (1, 5, 0)])]
        assert ghost.error_code == E.group_id_not_found
        r = w.request(90, 0, {"groups": [{"group_id": "sg", "topics": [
            {"topic_name": "offs", "partitions": [0, 9]}]}]})
        assert [(p.partition_index, p.start_offset, p.error_code)
                for p in r.groups[0].topics[0].partitions] == [
            (0, 5, E.none), (9, -1, E.unknown_topic_or_partition)]
    # the member left when it closed: now the group and its stored state can go
    end = time.monotonic() + 10
    while server.broker.shares.coordinator.group("sg").members and time.monotonic() < end:
        time.sleep(0.1)
    (fut,) = admin.delete_consumer_groups(["sg"]).values()
    fut.result(30)
    assert server.broker.shares.group_offsets("sg") == {}
    (fut,) = admin.delete_consumer_groups(["sg"]).values()
    with pytest.raises(ck.KafkaException) as e:
        fut.result(30)
    assert e.value.args[0].code() == ck.KafkaError.GROUP_ID_NOT_FOUND
    server.stop()
    from kafkalog import LogDir
    from kafkalog.groups.share import state_topic

    with LogDir.open(log_dir) as d:  # tombstones: a restart finds no state for the group
        assert [k for k in state_topic.load(d) if k[0] == "sg"] == []


def test_share_group_offsets_altered_and_deleted_on_the_wire(server):
    _topic(server, "alt", 1, 10)
    shares = server.broker.shares
    with WireClient(server.address) as w:
        hb = w.request(76, 1, {"group_id": "ag", "member_id": "m", "member_epoch": 0,
                               "rack_id": None, "subscribed_topic_names": ["alt"]})
        assert hb.error_code == E.none

        def alter(offset, topic="alt", partition=0):
            return w.request(91, 0, {"group_id": "ag", "topics": [
                {"topic_name": topic, "partitions": [
                    {"partition_index": partition, "start_offset": offset}]}]})

        r = alter(3)
        assert (r.error_code, r.error_message) == (E.non_empty_group,
                                                   "The group has active members.")
        w.request(76, 1, {"group_id": "ag", "member_id": "m", "member_epoch": -1,
                          "rack_id": None, "subscribed_topic_names": None})
        r = alter(3)
        assert [(p.partition_index, p.error_code) for p in r.responses[0].partitions] == [
            (0, E.none)]
        assert shares.group_offsets("ag") == {("alt", 0): (3, 0)}
        assert alter(11).responses[0].partitions[0].error_code == E.offset_out_of_range
        assert alter(-1).responses[0].partitions[0].error_code == E.invalid_request
        assert alter(0, "nope").responses[0].partitions[0].error_code \
            == E.unknown_topic_or_partition
        # a member joining now starts at offset 3
        data, acquired = shares.acquire("ag", "m2", "alt", 0, 100, 1 << 20)
        assert acquired == [(3, 9, 1)]
        d = w.request(92, 0, {"group_id": "ag", "topics": [{"topic_name": "alt"},
                                                           {"topic_name": "nope"}]})
        assert [(t.topic_name, t.error_code) for t in d.responses] == [
            ("alt", E.none), ("nope", E.unknown_topic_or_partition)]
        assert shares.group_offsets("ag") == {}
        # an id no group uses: state may be set before any member joins (as in Kafka)
        assert w.request(91, 0, {"group_id": "fresh", "topics": []}).error_code == E.none
        # a classic group's id is not a share group's
        server.broker.groups.coordinator.manager.commit_offsets("classic-g", {("alt", 0): 1})
        cg = w.request(91, 0, {"group_id": "classic-g", "topics": []})
        assert (cg.error_code, cg.error_message) == (E.group_id_not_found,
                                                     "Group classic-g is not a share group.")


# -- membership in __consumer_offsets (records 10-14), restored at restart ---------------------

def _share_records(log_dir, group: str) -> list:
    """The group's decoded share records in ``__consumer_offsets``, in log order."""
    from kafkalog.decoders.offsets import CODEC
    from kafkalog.log_dir import LogDir

    out = []
    with LogDir.open(log_dir, read_only=True) as d:
        for topic, p in d.partitions():
            if topic != "__consumer_offsets":
                continue
            for r in d.log(topic, p).records():
                if r.key and int.from_bytes(r.key[:2], "big") in range(9, 16):
                    rec = CODEC.decode(r.key, r.value)
                    if rec["key"]["groupId"] == group:
                        out.append(rec)
    return out


def _describe(s, group: str):
    with WireClient(s.address) as w:
        (g,) = w.request(77, 1, {"group_ids": [group],
                                 "include_authorized_operations": False}).groups
    return g


def test_share_group_members_are_stored_as_kafka_stores_them_and_restored(log_dir):
    """librdkafka share consumers join; the server writes Kafka 4.2's member (10), epoch (11,
    with the KIP-1101 hash), target (13, 12) and current assignment (14) records; after a
    restart the group is back with both members (ShareGroupDescribe), a member carries on at
    its epoch with no rebalance (same hash), and the silent one times out: its tombstones."""
    from kafkalog.groups.metadata_hash import metadata_hash

    cfg = dataclasses.replace(CONFIG, group_share_session_timeout_ms=6000,
                              group_share_heartbeat_interval_ms=500)
    s = start_server(log_dir, config=cfg)
    try:
        _topic(s, "members", 2, 20)
        tid = str(s.broker.topic_id("members"))
        consumers = {n: _consumer(s, "team", **{"client.id": n}) for n in ("c1", "c2")}
        try:
            for c in consumers.values():
                c.subscribe(["members"])
            end = time.monotonic() + 30
            while time.monotonic() < end:
                for c in consumers.values():
                    c.poll(0.2)
                g = _describe(s, "team")
                if len(g.members) == 2 and all(
                        m.member_epoch == g.assignment_epoch for m in g.members):
                    break
            assert len(g.members) == 2 and g.group_state == "Stable"
            before = {m.member_id: (m.member_epoch, m.client_id, sorted(
                p for tp in m.assignment.topic_partitions for p in tp.partitions))
                for m in g.members}
            epoch = g.group_epoch
        finally:
            s.stop()       # the members are still in the group when the broker goes
            for c in consumers.values():
                c.close()
    finally:
        s.stop()
    # each member has two partitions of one (simple assignor: both members share both)
    assert {v[1] for v in before.values()} == {"c1", "c2"}
    recs = _share_records(log_dir, "team")
    types = [r["type"] for r in recs]
    assert {10, 11, 12, 13, 14} <= set(types)
    last = {}
    for r in recs:
        last[(r["type"], r["key"].get("memberId"))] = r["value"]
    for mid, (m_epoch, client_id, parts) in before.items():
        sub = last[(10, mid)]
        assert (sub["clientId"], sub["subscribedTopicNames"], sub["rackId"]) == (
            client_id, ["members"], None)
        cur = last[(14, mid)]
        assert (cur["memberEpoch"], cur["state"]) == (m_epoch, 0)
        assert [(p["topicId"], sorted(p["partitions"])) for p in cur["assignedPartitions"]] \
            == [(tid, parts)]
        assert [(p["topicId"], sorted(p["partitions"])) for p in
                last[(13, mid)]["topicPartitions"]] == [(tid, parts)]
    assert last[(12, None)]["assignmentEpoch"] == epoch
    # record 11: the epoch and Kafka's hash of the subscribed topic (id, name, 2 partitions)
    assert last[(11, None)]["epoch"] == epoch
    assert last[(11, None)]["metadataHash"] == metadata_hash(
        ["members"], {"members": (tid, [[], []])}) != 0
    # one heartbeat's records come in Kafka's order: 10 (the member), 11, 13s, 12, 14s
    first_join = types[:types.index(14) + 1]
    assert first_join[:2] == [10, 11] and first_join[-2:] == [12, 14]

    s = start_server(log_dir, config=cfg)
    try:
        g = _describe(s, "team")
        assert g.group_epoch == epoch and g.group_state == "Stable"
        assert {m.member_id: (m.member_epoch, m.client_id, sorted(
            p for tp in m.assignment.topic_partitions for p in tp.partitions))
            for m in g.members} == before
        # a member heartbeating at its epoch after the restart: same hash, no new epoch
        mid = next(iter(before))
        r = s.broker.shares.heartbeat("team", mid, before[mid][0], None)
        assert (r.error_code, r.member_epoch) == (0, before[mid][0])
        assert s.broker.shares.coordinator.group("team").group_epoch == epoch
        # the other, silent since the restart, times out (6 s); then the first one too
        end = time.monotonic() + 30
        while time.monotonic() < end and _describe(s, "team").members:
            time.sleep(0.5)
        g = _describe(s, "team")
        assert g.members == () and g.group_state == "Empty" and g.group_epoch == epoch + 2
    finally:
        s.stop()
    recs = _share_records(log_dir, "team")
    tail = [(r["type"], r["value"] is None) for r in recs[-8:]]
    # per member: tombstones of 14, 13, 10, then the group's new epoch (shareGroupFenceMember)
    assert tail == [(14, True), (13, True), (10, True), (11, False)] * 2
    assert recs[-1]["value"]["epoch"] == epoch + 2 and recs[-1]["value"]["metadataHash"] == 0
    s = start_server(log_dir, config=cfg)
    try:     # nothing left to restore but the empty group at its epoch
        g = _describe(s, "team")
        assert (g.group_state, g.group_epoch, g.members) == ("Empty", epoch + 2, ())
    finally:
        s.stop()
