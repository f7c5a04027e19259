"""``kafkalog mirror`` when the source changes under it: a real ``kafkalog serve`` stopped and
started again on its port, a partition's leadership moving to another broker (another node id,
another address, a newer leader epoch), a source topic deleted and recreated, a source that does
not come back, topics and partitions created during a follow. The copy must carry on from the
new leader with the same bytes, never mix two topics' histories, give up (with the reason) only
after the retry timeout, and take in what the source gained."""

from __future__ import annotations

import shutil
import socket
import threading
from pathlib import Path

import pytest

from kafkalog import LogDir, Record
from kafkalog.mirror import Mirror, MirrorResult
from kafkalog.mirror.retry import ExponentialBackoff, error_is_retriable
from kafkalog.server import KafkaServer
from tests.server.peer_process import wait_until

from .conftest import TEST_CONFIG, start_server
from .test_mirror import (
    AdminClient,
    NewTopic,
    batch_bytes,
    copied_up_to,
    engine_topic,
    produce,
    run,
    state,
    topic_id,
)


def free_port() -> int:
    """A loopback port nothing listens on (yet): where a broker is started later."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Running:
    """A :class:`Mirror` run in a thread (its result in :attr:`result` once it ends)."""

    def __init__(self, m: Mirror) -> None:
        self.m = m
        self.results: list[MirrorResult] = []
        self.thread = threading.Thread(target=lambda: self.results.append(m.run()))
        self.thread.start()

    def finish(self, stop: bool = True) -> MirrorResult:
        if stop:
            self.m.stop()
        self.thread.join(30)
        assert not self.thread.is_alive(), "the mirror run did not end"
        [result] = self.results
        return result


def copied(part: Path, offset: int) -> None:
    wait_until(lambda: copied_up_to(part, offset), f"{part.name} copied up to {offset}",
               lambda: "")


def test_follow_carries_on_when_the_source_restarts(tmp_path):
    src, dst = tmp_path / "src", tmp_path / "dst"
    engine_topic(src, "r", [(0, 1)] * 3)
    server = start_server(src)
    port = server.port
    warnings: list[str] = []
    run_ = Running(Mirror(server.address, dst, follow=True, max_wait_ms=100,
                          warn=warnings.append))
    try:
        copied(dst / "r-0", 3)
        server.stop()
        # the partition waits for its leader (the progress says so) instead of failing
        wait_until(lambda: run_.m.progress().retrying == 1, "the partition retrying",
                   lambda: repr(warnings))
        server = KafkaServer(src, "127.0.0.1", port, config=TEST_CONFIG).start()
        produce(server.address, "r", [b"after-restart-%d" % i for i in range(10)])
        copied(dst / "r-0", 13)
        wait_until(lambda: run_.m.progress().retrying == 0, "the retry to end",
                   lambda: repr(warnings))
        result = run_.finish()
    finally:
        server.stop()
        run_.m.stop()
    assert result.ok and result.interrupted
    [rep] = result.partitions
    assert rep.records == 13 and rep.retries >= 1 and rep.leader == server.config.node_id
    assert batch_bytes(dst / "r-0") == batch_bytes(src / "r-0")
    assert warnings[0].startswith(f"r-0: 127.0.0.1:{port}: ") and \
        warnings[0].endswith("; retrying (fetch offset 3)"), warnings
    assert warnings[-1].startswith(f"r-0: fetching again from node {rep.leader} "
                                   f"(127.0.0.1:{port}) at offset 3 after "), warnings


def test_a_moved_leader_is_looked_up_and_fetched_from(tmp_path):
    """The partition's leadership moves to another broker (node 2, another port) with a newer
    leader epoch, as an election gives it: the bootstrap list leads the mirror to it, the copy
    continues there and holds the new epoch as the source does."""
    src, dst = tmp_path / "src", tmp_path / "dst"
    engine_topic(src, "m", [(0, 2)] * 3)
    spare = free_port()
    a = start_server(src, node_id=1)
    b = None
    run_ = Running(Mirror(f"{a.address},127.0.0.1:{spare}", dst, follow=True, max_wait_ms=100))
    try:
        copied(dst / "m-0", 6)
        a.stop()
        # the new leader's term: leader epoch 3, a batch it wrote, then what clients produce
        with LogDir.open(src) as d:
            d.log("m", 0).append([Record(b"k", b"new-leader-%d" % i, 5000) for i in range(2)],
                                 partition_leader_epoch=3)
        b = KafkaServer(src, "127.0.0.1", spare, node_id=2, config=TEST_CONFIG).start()
        produce(b.address, "m", [b"on-node-2-%d" % i for i in range(5)])
        copied(dst / "m-0", 13)
        result = run_.finish()
    finally:
        run_.m.stop()
        a.stop()
        if b is not None:
            b.stop()
    assert result.ok
    [rep] = result.partitions
    assert (rep.leader, rep.records) == (2, 13) and rep.retries >= 1
    assert batch_bytes(dst / "m-0") == batch_bytes(src / "m-0")
    assert state(dst / "m-0")[1:] == state(src / "m-0")[1:]
    assert [e for e, _ in state(dst / "m-0")[2]] == [0, 3]


def test_a_recreated_source_topic_is_not_mixed_into_the_copy(tmp_path):
    src, dst = tmp_path / "src", tmp_path / "dst"
    engine_topic(src, "t", [(0, 1)] * 3)
    server = start_server(src)
    port = server.port
    run_ = Running(Mirror(server.address, dst, follow=True, max_wait_ms=100))
    try:
        copied(dst / "t-0", 3)
        old = topic_id(dst / "t-0")
        server.stop()
        with LogDir.open(src) as d:
            d.delete_topic("t")
        shutil.rmtree(src / "t-0", ignore_errors=True)
        engine_topic(src, "t", [(0, 2)] * 4)  # a new topic of the same name: another id
        new = topic_id(src / "t-0")
        assert new != old
        server = KafkaServer(src, "127.0.0.1", port, config=TEST_CONFIG).start()
        # the partition fails, and with it the run (nothing else to follow)
        result = run_.finish(stop=False)
    finally:
        run_.m.stop()
        server.stop()
    assert not result.ok
    [rep] = result.partitions
    assert rep.error == (f"the source's topic 't' now has topic id {new}, the copy holds "
                         f"{old}: it was deleted and recreated on the source; not mirrored "
                         f"further (the copy keeps the old topic's records up to offset 3)")
    assert topic_id(dst / "t-0") == old and state(dst / "t-0")[1] == 3
    assert (dst / ".kafka_cleanshutdown").exists()


def test_a_source_that_does_not_come_back_is_given_up_after_the_retry_timeout(tmp_path):
    src, dst = tmp_path / "src", tmp_path / "dst"
    engine_topic(src, "g", [(0, 1)] * 2)
    server = start_server(src)
    warnings: list[str] = []
    run_ = Running(Mirror(server.address, dst, follow=True, max_wait_ms=100, retry_timeout=1.0,
                          warn=warnings.append,
                          client_config={"retry.backoff.ms": "50",
                                         "retry.backoff.max.ms": "200"}))
    try:
        copied(dst / "g-0", 2)
        server.stop()
        result = run_.finish(stop=False)
    finally:
        run_.m.stop()
        server.stop()
    assert not result.ok and not result.interrupted
    [rep] = result.partitions
    # (backoffs of at most 200 ms over a second: several attempts, each a retry)
    assert rep.retries >= 4
    assert f"cannot connect to {server.address}" in rep.error
    assert "; retry timeout 1 s)" in rep.error
    assert len(warnings) == 1, warnings  # one warning when the failures start
    assert (dst / ".kafka_cleanshutdown").exists()
    assert batch_bytes(dst / "g-0") == batch_bytes(src / "g-0")


def test_a_follow_takes_in_new_topics_and_partitions(tmp_path):
    """A pattern's new topic (with its own config) and a partition added to a mirrored topic,
    found by the periodic look (metadata.max.age.ms), mirrored from their first offset; a
    topic the pattern does not match stays out."""
    from confluent_kafka.admin import NewPartitions

    src, dst = tmp_path / "src", tmp_path / "dst"
    engine_topic(src, "d1", [(0, 1)] * 2)
    engine_topic(src, "other", [(0, 1)])
    server = start_server(src)
    warnings: list[str] = []
    run_ = Running(Mirror(server.address, dst, topics=["d.*"], follow=True, max_wait_ms=100,
                          warn=warnings.append, client_config={"metadata.max.age.ms": "200"}))
    try:
        copied(dst / "d1-0", 2)
        admin = AdminClient({"bootstrap.servers": server.address})
        new = NewTopic("d2", 2, 1, config={"retention.ms": "123456789"})
        for f in [*admin.create_topics([new]).values(),
                  *admin.create_partitions([NewPartitions("d1", 2)]).values()]:
            f.result(30)
        produce(server.address, "d2", [b"d2-%d" % i for i in range(10)], partitions=2)
        produce(server.address, "d1", [b"d1-late-%d" % i for i in range(6)], partitions=2)
        for part, end in (("d2-0", 5), ("d2-1", 5), ("d1-1", 3), ("d1-0", 5)):
            copied(dst / part, end)
        result = run_.finish()
    finally:
        run_.m.stop()
        server.stop()
    assert result.ok, result.errors
    assert sorted((p.topic, p.partition, p.records) for p in result.partitions) == [
        ("d1", 0, 5), ("d1", 1, 3), ("d2", 0, 5), ("d2", 1, 5)]
    for part in ("d1-0", "d1-1", "d2-0", "d2-1"):
        assert batch_bytes(dst / part) == batch_bytes(src / part), part
        assert topic_id(dst / part) == topic_id(src / part), part
    assert not (dst / "other-0").exists()
    with LogDir.open(dst, read_only=True) as d:
        assert d.topic_overrides("d2") == {"retention.ms": "123456789"}
    d2 = topic_id(src / "d2-0")
    assert f"d2-0: new on the source (topic id {d2}): mirrored from its log start offset 0" \
        in warnings
    assert f"d1-1: new on the source (topic id {topic_id(src / 'd1-0')}): mirrored from its " \
        f"log start offset 0" in warnings


def test_a_topic_deleted_on_the_source_is_kept_and_no_longer_followed(tmp_path):
    src, dst = tmp_path / "src", tmp_path / "dst"
    engine_topic(src, "gone", [(0, 1)] * 3)
    engine_topic(src, "stays", [(0, 1)] * 2)
    server = start_server(src)
    warnings: list[str] = []
    run_ = Running(Mirror(server.address, dst, follow=True, max_wait_ms=100,
                          warn=warnings.append))
    try:
        copied(dst / "gone-0", 3)
        copied(dst / "stays-0", 2)
        before = batch_bytes(src / "gone-0")
        admin = AdminClient({"bootstrap.servers": server.address})
        for f in admin.delete_topics(["gone"]).values():
            f.result(30)
        produce(server.address, "stays", [b"more-%d" % i for i in range(4)])
        copied(dst / "stays-0", 6)
        wait_until(lambda: any("deleted on the source" in w for w in warnings),
                   "the deletion noticed", lambda: repr(warnings))
        result = run_.finish()
    finally:
        run_.m.stop()
        server.stop()
    # a backup of what the topic held: kept, a warning, not an error
    assert result.ok and result.interrupted
    reps = {p.topic: p for p in result.partitions}
    assert reps["gone"].source_deleted and not reps["stays"].source_deleted
    assert batch_bytes(dst / "gone-0") == before and reps["gone"].log_end_offset == 3
    assert batch_bytes(dst / "stays-0") == batch_bytes(src / "stays-0")
    assert "gone-0: the topic was deleted on the source; the copy keeps its records up to " \
        "offset 3" in warnings


# -- the CLI ------------------------------------------------------------------------------------

def test_bootstrap_list_skips_an_unreachable_broker(tmp_path):
    src, dst = tmp_path / "src", tmp_path / "dst"
    engine_topic(src, "b", [(0, 1)] * 4)
    server = start_server(src)
    dead = free_port()
    try:
        status, out, err = run("--bootstrap-server", f"127.0.0.1:{dead},{server.address}",
                               str(dst))
    finally:
        server.stop()
    assert status == 0, err
    assert "b-0  fetched 4 batches, 4 records" in out
    assert batch_bytes(dst / "b-0") == batch_bytes(src / "b-0")


def test_no_bootstrap_server_reachable_names_each_and_writes_nothing(tmp_path):
    d1, d2 = free_port(), free_port()
    status, out, err = run("--bootstrap-server", f"127.0.0.1:{d1}, 127.0.0.1:{d2}",
                           str(tmp_path / "dst"))
    assert status == 1
    assert err.startswith(f"kafkalog mirror: error: no broker answered Metadata: cannot "
                          f"connect to 127.0.0.1:{d1}: ")
    assert f"; cannot connect to 127.0.0.1:{d2}: " in err
    assert not (tmp_path / "dst").exists()


@pytest.mark.parametrize("argv, message", [
    (["-X", "retry.backoff.ms=soon"],
     "retry.backoff.ms: expected a number of milliseconds >= 0, found 'soon'"),
    (["--retry-timeout", "-1"], "retry_timeout must be >= 0 seconds (found -1.0)"),
])
def test_bad_retry_settings_exit_2(tmp_path, argv, message):
    status, out, err = run("--bootstrap-server", "127.0.0.1:1", str(tmp_path / "dst"), *argv)
    assert status == 2
    assert err == f"kafkalog mirror: error: {message}\n"


# -- the rules ---------------------------------------------------------------------------------

def test_backoff_and_retriable_errors_are_kafkas():
    # CommonClientConfigs' defaults: 100 ms doubling to 1000 ms, jitter 0.2 (within +-20%,
    # never above the maximum)
    b = ExponentialBackoff(100, 2, 1000, 0.2)
    for attempts, term in [(0, 100), (1, 200), (2, 400), (3, 800)]:
        got = [b.backoff(attempts) for _ in range(200)]
        assert all(0.8 * term <= g <= 1.2 * term for g in got), (attempts, min(got), max(got))
        assert len(set(got)) > 1  # (jittered)
    assert {b.backoff(n) for n in (4, 10, 100) for _ in range(50)} <= set(range(800, 1001))
    assert ExponentialBackoff(100, 2, 1000, 0.0).backoff(10) == 1000
    with pytest.raises(ValueError, match="jitter must be between 0 and 1"):
        ExponentialBackoff(100, 2, 1000, 1.5)
    # FetchCollector.handleInitializeErrors' metadata-update errors are retried; authorization
    # and corruption fail the partition
    assert all(error_is_retriable(c) for c in (3, 6, 9, 56, 74, 75, 78, 100, 103))
    assert not any(error_is_retriable(c) for c in (0, 1, 2, 29, 35, -1))
