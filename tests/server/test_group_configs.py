"""Dynamic group configs (``kafka-configs.sh --entity-type groups``): the share-group settings
a group overrides, checked as Kafka's ``GroupConfig`` checks them, kept across restarts, and
applied by the share service. Peers: librdkafka's admin client and share consumer."""

from __future__ import annotations

import json
import time

import pytest

from kafkalog import Record
from kafkalog.errors import ConfigError, CorruptCheckpointError
from kafkalog.server import ServerConfig
from kafkalog.server.group_configs import GROUP_CONFIGS_FILE, GroupConfigStore, parse_reset

from .conftest import start_server

ck = pytest.importorskip("confluent_kafka", reason="confluent-kafka is not installed")
from confluent_kafka.admin import (  # noqa: E402
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ResourceType,
)

CONFIG = ServerConfig(offsets_topic_num_partitions=4, transaction_state_num_partitions=4,
                      group_initial_rebalance_delay_ms=0,
                      share_coordinator_state_topic_num_partitions=4)


def test_store_checks_names_values_and_the_session_rule(tmp_path):
    store = GroupConfigStore(tmp_path, ServerConfig())
    bad = {
        "no.such": "1",
        "streams.session.timeout.ms": "50000",       # Kafka's, not served here
        "share.record.lock.duration.ms": "999",      # at least 1000
        "share.delivery.count.limit": "x",
        "share.auto.offset.reset": "middle",
        "share.isolation.level": "snapshot",
    }
    for name, value in bad.items():
        with pytest.raises(ConfigError, match=name.split(".")[-1] if name != "no.such"
                           else "not a group config"):
            store.validate({name: value})
    with pytest.raises(ConfigError, match="share.session.timeout.ms must be greater than "
                                          "or equal to group.share.min.session.timeout.ms"):
        store.validate({"share.session.timeout.ms": "5000"})
    with pytest.raises(ConfigError, match="share.record.lock.duration.ms must be less than or "
                                          "equal to group.share.max.record.lock.duration.ms"):
        store.validate({"share.record.lock.duration.ms": "70000"})
    # the session must outlast the heartbeat, the broker's value counting where not overridden
    slow = GroupConfigStore(tmp_path / "slow", ServerConfig(
        group_share_heartbeat_interval_ms=50000))
    with pytest.raises(ConfigError, match="share.session.timeout.ms must be greater than "
                                          "share.heartbeat.interval.ms"):
        slow.validate({"share.session.timeout.ms": "45000"})
    store.validate({"consumer.session.timeout.ms": "50000",
                    "consumer.heartbeat.interval.ms": "6000"})
    assert parse_reset("EARLIEST") == ("earliest", 0)
    assert parse_reset("by_duration:P1DT2H0.5S") == ("by_duration", 93_600_500)
    with pytest.raises(ConfigError):
        parse_reset("by_duration:-PT1H")
    store.set("g", {"share.auto.offset.reset": "earliest", "share.delivery.count.limit": "3"})
    again = GroupConfigStore(tmp_path, ServerConfig())
    assert again.overrides("g") == {"share.auto.offset.reset": "earliest",
                                    "share.delivery.count.limit": "3"}
    eff = again.effective("g")
    assert eff["share.record.lock.duration.ms"] == "30000" and again.value(
        "g", "share.delivery.count.limit") == 3
    again.set("g", {})
    assert json.loads((tmp_path / GROUP_CONFIGS_FILE).read_text())["groups"] == {}
    (tmp_path / GROUP_CONFIGS_FILE).write_text('{"version": 1, "groups": {"g": '
                                               '{"share.delivery.count.limit": "1"}}}')
    with pytest.raises(CorruptCheckpointError, match="unreadable group configs"):
        GroupConfigStore(tmp_path, ServerConfig())


def test_a_group_set_to_earliest_through_the_admin_client(tmp_path):
    s = start_server(tmp_path / "logs", config=CONFIG)  # the broker's default: latest
    try:
        s.broker.create_topic("backlog", 1)
        p = ck.Producer({"bootstrap.servers": s.address})
        for i in range(6):
            p.produce("backlog", value=b"old-%d" % i)
        assert p.flush(30) == 0
        admin = AdminClient({"bootstrap.servers": s.address})

        def alter(*entries, validate_only=False):
            res = ConfigResource(ResourceType.GROUP, "late", incremental_configs=list(entries))
            (fut,) = admin.incremental_alter_configs([res],
                                                     validate_only=validate_only).values()
            return fut

        def entry(name, value, op=AlterConfigOpType.SET):
            return ConfigEntry(name, value, incremental_operation=op)

        alter(entry("share.auto.offset.reset", "earliest"),
              entry("share.record.lock.duration.ms", "15000")).result(30)
        with pytest.raises(ck.KafkaException, match="not a group config"):
            alter(entry("share.nonsense", "1")).result(30)
        with pytest.raises(ck.KafkaException, match="because its type is not LIST"):
            alter(entry("share.delivery.count.limit", "3", AlterConfigOpType.APPEND)).result(30)
        alter(entry("share.delivery.count.limit", "3"), validate_only=True).result(30)
        (described,) = admin.describe_configs(
            [ConfigResource(ResourceType.GROUP, "late")]).values()
        got = {n: (e.value, e.source) for n, e in described.result(30).items()}
        GROUP_CONFIG, DEFAULT = 8, 5
        assert got["share.auto.offset.reset"] == ("earliest", GROUP_CONFIG)
        assert got["share.record.lock.duration.ms"] == ("15000", GROUP_CONFIG)
        assert got["share.delivery.count.limit"] == ("5", DEFAULT)  # validate_only: unchanged

        c = ck.ShareConsumer({"bootstrap.servers": s.address, "group.id": "late",
                              "log_level": 3})
        try:
            c.subscribe(["backlog"])
            seen = []
            end = time.monotonic() + 30
            while len(seen) < 6 and time.monotonic() < end:
                seen += [m.value() for m in c.poll(0.5)]
            assert seen == [b"old-%d" % i for i in range(6)]  # from the log start
        finally:
            c.close()
        (sp,) = [sp for (g, *_), sp in s.broker.shares.partitions.items() if g == "late"]
        assert sp.lock_duration_ms == 15000
    finally:
        s.stop()
    s = start_server(tmp_path / "logs", config=CONFIG)
    try:
        assert s.broker.shares.configs.overrides("late")["share.auto.offset.reset"] == "earliest"
    finally:
        s.stop()


def test_by_duration_starts_at_the_first_record_that_recent(tmp_path):
    s = start_server(tmp_path / "logs", config=CONFIG)
    try:
        s.broker.create_topic("timed", 1)
        now = s.broker.clock.milliseconds()
        log = s.broker.log("timed", 0)
        log.append([Record(None, b"day-old", now - 86_400_000)])
        log.append([Record(None, b"hour-old", now - 3_000_000)])
        log.append([Record(None, b"fresh", now - 1000)])
        shares = s.broker.shares
        shares.set_group_config("recent", {"share.auto.offset.reset": "by_duration:PT1H"})
        assert shares.share_partition("recent", "timed", 0).start_offset == 1
        shares.set_group_config("none-yet", {"share.auto.offset.reset": "by_duration:PT0.5S"})
        assert shares.share_partition("none-yet", "timed", 0).start_offset == 3  # log end
    finally:
        s.stop()


def test_read_committed_share_groups_never_see_aborted_records(tmp_path):
    s = start_server(tmp_path / "logs", config=CONFIG)
    try:
        s.broker.create_topic("txns", 1)
        p = ck.Producer({"bootstrap.servers": s.address, "transactional.id": "tx-1"})
        p.init_transactions(30)
        for outcome in ("aborted", "committed"):
            p.begin_transaction()
            for i in range(3):
                p.produce("txns", value=b"%s-%d" % (outcome.encode(), i))
            p.flush(30)
            (p.abort_transaction if outcome == "aborted" else p.commit_transaction)(30)
        plain = ck.Producer({"bootstrap.servers": s.address})
        plain.produce("txns", value=b"plain")
        assert plain.flush(30) == 0
        admin = AdminClient({"bootstrap.servers": s.address})
        for group, isolation in (("rc", "read_committed"), ("ru", "read_uncommitted")):
            res = ConfigResource(ResourceType.GROUP, group, incremental_configs=[
                ConfigEntry("share.auto.offset.reset", "earliest",
                            incremental_operation=AlterConfigOpType.SET),
                ConfigEntry("share.isolation.level", isolation,
                            incremental_operation=AlterConfigOpType.SET)])
            (fut,) = admin.incremental_alter_configs([res]).values()
            fut.result(30)
        got = {}
        for group, want in (("rc", 4), ("ru", 7)):
            c = ck.ShareConsumer({"bootstrap.servers": s.address, "group.id": group,
                                  "log_level": 3})
            try:
                c.subscribe(["txns"])
                seen: list = []
                end = time.monotonic() + 30
                while len(seen) < want and time.monotonic() < end:
                    seen += [m.value() for m in c.poll(0.5)]
                assert len(c.poll(0.5)) == 0  # (and accepts the last poll's records)
                got[group] = seen
            finally:
                c.close()
        assert got["rc"] == [b"committed-0", b"committed-1", b"committed-2", b"plain"]
        assert sorted(got["ru"]) == sorted([b"aborted-0", b"aborted-1", b"aborted-2",
                                            b"committed-0", b"committed-1", b"committed-2",
                                            b"plain"])
        # the aborted records were archived for the read_committed group: its start offset
        # passed them although they were never delivered
        (sp,) = [sp for (g, *_), sp in s.broker.shares.partitions.items() if g == "rc"]
        assert sp.start_offset == s.broker.log("txns", 0).log_end_offset
    finally:
        s.stop()


def test_consumer_group_timeouts_per_group(tmp_path):
    from .wire import WireClient

    s = start_server(tmp_path / "logs", config=CONFIG)
    try:
        s.broker.create_topic("kt", 1)
        admin = AdminClient({"bootstrap.servers": s.address})
        res = ConfigResource(ResourceType.GROUP, "kg", incremental_configs=[
            ConfigEntry("consumer.heartbeat.interval.ms", "6000",
                        incremental_operation=AlterConfigOpType.SET)])
        (fut,) = admin.incremental_alter_configs([res]).values()
        fut.result(30)

        def join(group):
            return w.request(68, 0, {"group_id": group, "member_id": f"m-{group}",
                                     "member_epoch": 0, "instance_id": None, "rack_id": None,
                                     "rebalance_timeout": 30000,
                                     "subscribed_topic_names": ["kt"], "server_assignor": None,
                                     "topic_partitions": []})

        with WireClient(s.address) as w:
            # the group's own heartbeat interval; another group keeps the broker's (5 s)
            assert join("kg").heartbeat_interval.total_seconds() == 6.0
            assert join("other").heartbeat_interval.total_seconds() == 5.0
    finally:
        s.stop()
