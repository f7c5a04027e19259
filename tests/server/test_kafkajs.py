"""kafkajs (pure-JavaScript Kafka client) against ``kafkalog serve``: a peer that shares no code
with kafkalog, kafka-python, aiokafka, librdkafka or sarama.

kafkajs 2.2.4 has its own protocol code, RecordBatch encoder and decoder, group membership,
RoundRobin assigner, idempotent and transactional producer, and admin client (all in
JavaScript); its codecs are node's zlib (gzip), snappyjs (through kafkajs-snappy: *raw* snappy,
not the xerial framing Kafka's Java producer writes), and two small codecs in the peer over
lz4js (LZ4 blocks; the peer writes the frame as Kafka does, with independent 64 KiB blocks) and
zstd-codec (libzstd built to wasm; streaming decompression, as Kafka's frames may carry no
content size). So:

- its batches, of every codec, are stored byte for byte as sent (each payload's digest is one
  kafkajs's codec produced), batch for batch as it sent them, at the offsets kafkajs was told,
  and read back by the engine record for record and by kafkajs itself;
- its idempotent producer's sequences are kept;
- the engine's batches, of every codec and across segment rolls, are read by kafkajs, also from
  a committed offset in the middle of a batch;
- its transactions (records on two partitions and ``sendOffsets`` in one, committed; another
  aborted; a third committed) leave the commit/abort markers on disk, a read_committed kafkajs
  consumer skips the aborted records through the fetch's aborted-transaction list (a
  read_uncommitted one sees them), and only the committed transaction's offsets are the
  group's, online (``admin.fetchOffsets``) and offline (``kafkalog groups describe``);
- a group of two kafkajs members forms through our coordinator with exactly the plan kafkajs's
  RoundRobin leader computes, consumes everything, commits the log end offsets (shown offline),
  is described back by kafkajs's admin, and survives one member leaving;
- kafkajs's admin creates topics and partitions, reads metadata and configs, and deletes
  records, as the engine sees them.

kafkajs 2.2.4 speaks Produce v7, Fetch v11, ListOffsets v3, Metadata v6, OffsetCommit v5,
OffsetFetch v4, JoinGroup v5, TxnOffsetCommit v1, CreateTopics v3, DeleteRecords v1 (seen in its
debug log): each within what Kafka 4 still serves (KIP-896), so nothing is configured around.
kafkajs's own limits, met here and worked around in the peer or the tests, not the server:

- it ships no snappy, lz4 or zstd codec; ``kafkajs-lz4`` needs the native ``lz4`` package (a
  build), and lz4js's own frame writer leaves FLG's block-independence bit clear, which Kafka
  refuses ("Dependent block stream is unsupported", ``Lz4BlockOutputStream.FLG.validate``) and
  so does the engine: hence the peer's frame writer over lz4js's block compressor;
- ``admin.deleteTopicRecords`` looks the partition leaders up in metadata it never loads
  (``KafkaJSTopicMetadataNotLoaded`` on a fresh admin): ``fetchTopicMetadata`` goes first;
- ``admin.fetchOffsets`` turns the empty metadata the server sends ("", as Kafka) into null;
- ``admin.setOffsets`` runs a paused consumer that stops only after its 5 s fetch wait.

The peer is ``tests/server/kafkajs_peer/peer.js``; its pinned packages (``package-lock.json``)
are installed by ``npm ci`` into a temporary directory once per module.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kafkalog import Record
from kafkalog.log_dir import LogDir

from .peer_process import (
    MemberProcess,
    append_across_rolls,
    as_records,
    assert_columnar_agrees,
    b64,
    engine_batches,
    engine_records,
    fill,
    produce_lines,
    run_json_lines,
    unb64,
    wait_until,
)
from .peers import CODECS, assert_idempotent_batches, assert_same, by_partition, make_records

PEER_SRC = Path(__file__).parent / "kafkajs_peer"
#: a RecordBatch's header before its records (Kafka's ``DefaultRecordBatch.RECORDS_OFFSET``)
RECORDS_OFFSET = 61
#: npm's words for "the registry cannot be reached"
OFFLINE = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENETUNREACH",
           "network request", "request to http")


@pytest.fixture(scope="module")
def kafkajs_peer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``peer.js`` beside its pinned packages, installed once per module (never in the repo)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are not installed (Debian packages nodejs and npm)")
    out = tmp_path_factory.mktemp("kafkajs")
    for name in ("package.json", "package-lock.json", "peer.js"):
        shutil.copy(PEER_SRC / name, out / name)
    r = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=out, capture_output=True,
                       text=True, timeout=300)
    if r.returncode != 0:
        offline = [line for line in r.stderr.splitlines() if any(w in line for w in OFFLINE)]
        if offline:
            pytest.skip(f"npm cannot reach the registry: {offline[0].strip()}")
        pytest.fail(f"npm ci failed:\n{r.stderr}")
    return out / "peer.js"



def run_peer(peer: Path, *args: str, stdin: str = "") -> list[dict[str, Any]]:
    return run_json_lines(["node", str(peer), *args], stdin)


def admin(peer: Path, address: str, *ops: tuple[str, Any]) -> list[Any]:
    """Run kafkajs admin operations in order; their results (an error fails the test)."""
    out = run_peer(peer, "admin", "--broker", address,
                   stdin="".join(json.dumps({"op": op, "args": a}) + "\n" for op, a in ops))
    assert [o["op"] for o in out] == [op for op, _ in ops]
    for o in out:
        assert "error" not in o, o
    return [o["result"] for o in out]


def payload_digest(batch: Any) -> str:
    """sha256 of a batch's records area as stored (compressed bytes for a compressed batch)."""
    return hashlib.sha256(bytes(batch.entry_bytes()[RECORDS_OFFSET:])).hexdigest()


# -- producing ----------------------------------------------------------------------------------


@pytest.mark.parametrize("codec", CODECS)
def test_kafkajs_batches_of_every_codec_are_stored_and_read_back(server, log_dir, kafkajs_peer,
                                                                 codec):
    server.broker.create_topic("t", 3)
    records = make_records(3000, seed=17)
    t0 = 1_700_000_000_000
    out = run_peer(kafkajs_peer, "produce", "--broker", server.address, "--topic", "t",
                   "--codec", codec, "--chunk", "300", stdin=produce_lines(records, 3, t0))
    acks, digests = out[:-1], out[-1]["compressed"]
    # the offsets kafkajs was given are the ones the records have on disk
    assert [a["i"] for a in acks] == list(range(len(records)))
    for p in range(3):
        assert [a["o"] for a in acks if a["p"] == p] == list(range(1000)), p
    # every record kafkajs sent comes back through the server's fetch path, as kafkajs sent it
    got = run_peer(kafkajs_peer, "consume", "--broker", server.address, "--topic", "t",
                   "--n", str(len(records)))
    assert [(g["p"], g["o"]) for g in got] == [(p, o) for p in range(3) for o in range(1000)]
    assert [g["ts"] for g in got] == [t0 + p + 3 * i for p in range(3) for i in range(1000)]
    assert_same(by_partition(records),
                {p: as_records([g for g in got if g["p"] == p]) for p in range(3)})
    server.stop()

    stored: list[str] = []
    for p in range(3):
        recs = engine_records(log_dir, "t", p)
        assert [r.offset for r in recs] == list(range(1000))
        assert [r.timestamp for r in recs] == [t0 + p + 3 * i for i in range(1000)]
        assert_same({p: by_partition(records)[p]},
                    {p: [(r.key, r.value or b"", [(k, v or b"") for k, v in r.headers])
                         for r in recs]})
        batches = engine_batches(log_dir, "t", p)
        # one batch per send() (300 records, 100 a partition), as kafkajs cut them
        assert sorted({a["base"] for a in acks if a["p"] == p}) == \
            [b.base_offset for b in batches] == list(range(0, 1000, 100))
        assert [b.record_count for b in batches] == [100] * 10
        assert {b.compression for b in batches} == {codec}
        # kafkajs's header fields as it wrote them (CreateTime, its first and max timestamps,
        # no producer id), and its CRC still right
        assert [(b.timestamp_type, b.base_timestamp, b.max_timestamp) for b in batches] == [
            ("CreateTime", t0 + p + 3 * o, t0 + p + 3 * (o + 99)) for o in range(0, 1000, 100)]
        assert {(b.producer_id, b.producer_epoch, b.base_sequence) for b in batches} == \
            {(-1, 0, 0)}
        assert all(b.is_valid for b in batches)
        stored += [payload_digest(b) for b in batches]
        assert_columnar_agrees(log_dir, "t", p)
    if codec != "none":
        # stored as kafkajs compressed them, never re-encoded: each stored payload is one that
        # kafkajs's codec produced (kafkajs-snappy's raw snappy stays raw, not xerial-framed)
        assert len(digests) == 30
        assert Counter(stored) == Counter(digests)
        if codec == "snappy":
            first = engine_batches(log_dir, "t", 0)[0].entry_bytes()[RECORDS_OFFSET:]
            assert bytes(first[:8]) != b"\x82SNAPPY\x00"


def test_kafkajs_idempotent_producer(server, log_dir, kafkajs_peer):
    server.broker.create_topic("t", 3)
    records = make_records(3000, seed=18)
    acks = run_peer(kafkajs_peer, "produce", "--broker", server.address, "--topic", "t",
                    "--codec", "lz4", "--idempotent", "--chunk", "300",
                    stdin=produce_lines(records, 3, 1_700_000_000_000))[:-1]
    for p in range(3):
        assert [a["o"] for a in acks if a["p"] == p] == list(range(1000)), p
    server.stop()
    # ten batches a partition: the sequences run on across batches
    assert [len(engine_batches(log_dir, "t", p)) for p in range(3)] == [10, 10, 10]
    assert_idempotent_batches(log_dir, "t", 3, len(records))


# -- consuming what the engine wrote --------------------------------------------------------------


@pytest.mark.parametrize("codec", CODECS)
def test_kafkajs_reads_the_engines_batches(server, kafkajs_peer, codec):
    # small segments: kafkajs's fetches cross segment rolls
    server.broker.create_topic("t", 1, {"segment.bytes": "16384"})
    records = make_records(2000, seed=19)
    t0 = 1_690_000_000_000

    append_across_rolls(server, "t", records, t0, codec)
    got = run_peer(kafkajs_peer, "consume", "--broker", server.address, "--topic", "t",
                   "--n", str(len(records)))
    assert [(g["p"], g["o"]) for g in got] == [(0, o) for o in range(len(records))]
    assert [g["ts"] for g in got] == [t0 + i for i in range(len(records))]
    assert_same({0: records}, {0: as_records(got)})


def test_kafkajs_starts_from_a_committed_offset_in_the_middle_of_a_batch(server, kafkajs_peer):
    server.broker.create_topic("t", 1)

    def append() -> None:
        log = server.broker.log("t", 0)
        for n in range(5):
            log.append([Record(None, b"%d-%d" % (n, i), 1_700_000_000_000) for i in range(10)],
                       compression="zstd")
        server.broker.log_dir.set_high_watermark("t", 0, log.log_end_offset)

    server.call(append)
    admin(kafkajs_peer, server.address,
          ("setOffsets", {"groupId": "mid", "topic": "t",
                          "partitions": [{"partition": 0, "offset": "23"}]}))
    got = run_peer(kafkajs_peer, "consume", "--broker", server.address, "--topic", "t",
                   "--group", "mid", "--n", "27")
    # the fetch starts at batch 20..29: kafkajs drops 20..22 itself
    assert [(g["o"], unb64(g["v"])) for g in got] == [
        (o, b"%d-%d" % divmod(o, 10)) for o in range(23, 50)]
    # and commits where it stopped
    (offsets,) = admin(kafkajs_peer, server.address,
                       ("fetchOffsets", {"groupId": "mid", "topics": ["t"]}))
    assert offsets == [{"topic": "t", "partitions": [
        {"partition": 0, "offset": "50", "metadata": None}]}]


# -- transactions ---------------------------------------------------------------------------------


def test_kafkajs_transactions_commit_abort_markers_and_offsets(server, log_dir, kafkajs_peer):
    """Consume-transform-produce as kafkajs does it: records to two partitions of ``out`` and
    ``sendOffsets`` for group ``ctp`` over ``in`` in one transaction, committed; a second one
    (other records, other offsets) aborted; a third, committed."""
    from .test_groups import committed

    server.broker.create_topic("out", 2)
    server.broker.create_topic("in", 3)

    def txn(name: str, n: int, end: str, offsets: dict[int, int] | None) -> dict[str, Any]:
        doc: dict[str, Any] = {"records": [
            {"topic": "out", "p": i % 2, "k": b64(f"{name}-k{i}".encode()),
             "v": b64(f"{name}-{i}".encode()), "h": [["txn", b64(name.encode())]],
             "ts": 1_700_000_000_000 + i} for i in range(n)], "end": end}
        if offsets is not None:
            doc["offsets"] = {"group": "ctp", "topics": {"in": offsets}}
        return doc

    plan = [txn("a", 20, "commit", {0: 5, 1: 7}), txn("b", 10, "abort", {0: 50, 2: 9}),
            txn("c", 10, "commit", None)]
    done = run_peer(kafkajs_peer, "txn", "--broker", server.address, "--transactional-id",
                    "kjs-ctp", "--codec", "gzip",
                    stdin="".join(json.dumps(t) + "\n" for t in plan))
    assert [(d["txn"], d["end"]) for d in done] == [(0, "commit"), (1, "abort"), (2, "commit")]
    # per partition: a's 10 records, COMMIT, b's 5, ABORT, c's 5, COMMIT
    want_offsets = {"a": list(range(10)), "b": list(range(11, 16)), "c": list(range(17, 22))}
    for d, name in zip(done, "abc"):
        for p in range(2):
            assert [a["o"] for a in d["acks"] if a["p"] == p] == want_offsets[name], (name, p)

    values = {name: {f"{name}-{i}".encode() for i in range(n)}
              for name, n in (("a", 20), ("b", 10), ("c", 10))}
    # read_committed (kafkajs's default): b's records are dropped by the fetch's aborted
    # transactions; control records are never handed out
    got = run_peer(kafkajs_peer, "consume", "--broker", server.address, "--topic", "out",
                   "--n", "30")
    assert len(got) == 30
    assert {unb64(g["v"]) for g in got} == values["a"] | values["c"]
    assert sorted((g["p"], g["o"]) for g in got) == [
        (p, o) for p in range(2) for o in want_offsets["a"] + want_offsets["c"]]
    # read_uncommitted: the aborted records are there
    got = run_peer(kafkajs_peer, "consume", "--broker", server.address, "--topic", "out",
                   "--n", "40", "--read-uncommitted")
    assert len(got) == 40
    assert {unb64(g["v"]) for g in got} == values["a"] | values["b"] | values["c"]
    # the group's offsets are the committed transaction's, online
    (offsets, groups) = admin(kafkajs_peer, server.address,
                              ("fetchOffsets", {"groupId": "ctp", "topics": ["in"]}),
                              ("listGroups", {}))
    assert offsets == [{"topic": "in", "partitions": [
        {"partition": 0, "offset": "5", "metadata": None},
        {"partition": 1, "offset": "7", "metadata": None},
        {"partition": 2, "offset": "-1", "metadata": None}]}]
    # a group that only has offsets (no member ever joined) has no protocol type, as in Kafka
    assert {"groupId": "ctp", "protocolType": ""} in groups["groups"]
    server.stop()

    for p in range(2):
        batches = engine_batches(log_dir, "out", p)
        assert [(b.base_offset, b.record_count, b.is_transactional, b.is_control,
                 b.control_type() if b.is_control else None) for b in batches] == [
            (0, 10, True, False, None), (10, 1, True, True, "COMMIT"),
            (11, 5, True, False, None), (16, 1, True, True, "ABORT"),
            (17, 5, True, False, None), (22, 1, True, True, "COMMIT")], p
        assert len({(b.producer_id, b.producer_epoch) for b in batches}) == 1
        assert {b.compression for b in batches if not b.is_control} == {"gzip"}
    # offline too: the aborted transaction's offsets (in-0 at 50, in-2 at 9) are not the group's
    assert committed(log_dir, "ctp") == {("in", 0): 5, ("in", 1): 7}


# -- consumer groups ------------------------------------------------------------------------------


class KafkajsMember(MemberProcess):
    """A kafkajs consumer-group member in its own process (``peer.js group``), with the
    leader and protocol of its last join; kafkajs's crash events are its ``errors``."""

    def __init__(self, peer: Path, address: str, group: str, topics: list[str]) -> None:
        self.leader_id = ""
        self.protocol = ""
        super().__init__(["node", str(peer), "group", "--broker", address, "--group", group,
                          "--topics", ",".join(topics)])

    def on_event(self, ev: dict[str, Any]) -> None:
        if ev["event"] == "join":
            self.member_id, self.leader_id = ev["member"], ev["leader"]
            self.protocol = ev["protocol"]
            self.assignment = {t: sorted(ps) for t, ps in ev["assignment"].items()}
        elif ev["event"] == "crash":
            self.errors.append(ev["error"])


def kafkajs_round_robin(members: list[str], topics: dict[str, int]) -> dict[str, dict]:
    """kafkajs 2.2.4's ``RoundRobinAssigner.assign``: the leader's subscribed topics in order,
    each topic's partitions in metadata order, dealt to the member ids sorted."""
    ids = sorted(members)
    plan: dict[str, dict[str, list[int]]] = {m: {} for m in ids}
    tps = [(t, p) for t, n in topics.items() for p in range(n)]
    for i, (t, p) in enumerate(tps):
        plan[ids[i % len(ids)]].setdefault(t, []).append(p)
    return plan


def test_kafkajs_group_assigns_commits_and_is_described(server, log_dir, kafkajs_peer, members):
    from .test_groups import committed

    topics = {"a": 3, "b": 4}
    for t, n in topics.items():
        server.broker.create_topic(t, n)
    group = "kafkajs-rr"
    members += [KafkajsMember(kafkajs_peer, server.address, group, list(topics))
                for _ in range(2)]
    everything = {(t, p) for t, n in topics.items() for p in range(n)}

    def state() -> str:
        return "; ".join(m.state() for m in members)

    def settled() -> bool:
        held = [m.assigned() for m in members]
        return all(held) and sum(map(len, held)) == len(everything) \
            and set().union(*held) == everything
    wait_until(settled, "both members to share every partition", state)
    # both joined the same generation under one leader, the coordinator's
    leader = server.call(lambda: server.broker.groups.coordinator.group(group).leader_id)
    assert {m.leader_id for m in members} == {leader}
    assert leader in {m.member_id for m in members}
    assert {m.protocol for m in members} == {"RoundRobinAssigner"}
    # each member holds what kafkajs's leader planned for it, in JavaScript
    assert {m.member_id: m.assignment for m in members} == \
        kafkajs_round_robin([m.member_id for m in members], topics)
    # the records come once the group is stable: each is read once, by its partition's holder
    fill(server, topics, 20, compression="lz4")
    want = {f"{t}/{p}/{i}".encode() for t, n in topics.items() for p in range(n)
            for i in range(20)}
    wait_until(lambda: {v for m in members for *_, v in m.values} == want, "every record", state)
    for m in members:
        assert {(t, p) for t, p, _, _ in m.values} <= m.assigned()
    assert sum(len(m.values) for m in members) == len(want)

    # kafkajs commits after each batch: the coordinator has the log end offsets
    at_end = [{"topic": t, "partitions": [{"partition": p, "offset": "20", "metadata": None}
                                           for p in range(n)]} for t, n in topics.items()]
    found: list[Any] = []

    def fetched(expected: list[Any]) -> Callable[[], bool]:
        def check() -> bool:
            found[:] = admin(kafkajs_peer, server.address,
                             ("fetchOffsets", {"groupId": group, "topics": list(topics)}))
            return found[0] == expected
        return check
    wait_until(fetched(at_end), "the committed offsets", lambda: str(found))
    # kafkajs's admin decodes what kafkajs's members sent (metadata) and its leader assigned
    (described,) = admin(kafkajs_peer, server.address, ("describeGroups", [[group]]))
    (g,) = described["groups"]
    assert (g["groupId"], g["state"], g["protocolType"], g["protocol"], g["errorCode"]) == \
        (group, "Stable", "consumer", "RoundRobinAssigner", 0)
    assert {d["memberId"]: ({t: sorted(ps) for t, ps in d["assignment"].items()},
                            d["subscription"], d["clientId"]) for d in g["members"]} == \
        {m.member_id: (m.assignment, list(topics), "kafkajs-peer-group") for m in members}

    # one leaves: the other takes every partition and reads what follows from the offsets
    members[0].leave()
    assert members[0].closed and members[0].proc.returncode == 0, members[0].state()
    rest = members[1]
    wait_until(lambda: rest.assigned() == everything, "the other to take every partition",
               state)
    assert rest.leader_id == rest.member_id
    fill(server, topics, 5, start=20, compression="lz4")
    wait_until(lambda: sum(1 for *_, v in rest.values if int(v.split(b"/")[2]) >= 20) == 35,
               "the 35 new records", state)
    at_end = [{"topic": t, "partitions": [{"partition": p, "offset": "25", "metadata": None}
                                           for p in range(n)]} for t, n in topics.items()]
    wait_until(fetched(at_end), "the new offsets", lambda: str(found))
    rest.leave()
    assert rest.closed and rest.proc.returncode == 0, rest.state()
    assert not any(m.errors for m in members), state()
    server.stop()
    assert committed(log_dir, group) == {(t, p): 25 for t, n in topics.items()
                                         for p in range(n)}


# -- admin ----------------------------------------------------------------------------------------


def test_kafkajs_admin_topics_configs_and_delete_records(server, log_dir, kafkajs_peer):
    created, topics, meta, configs = admin(
        kafkajs_peer, server.address,
        ("createTopics", {"topics": [{"topic": "adm", "numPartitions": 3, "configEntries": [
            {"name": "segment.bytes", "value": "16384"},
            {"name": "retention.ms", "value": "86400000"}]}]}),
        ("listTopics", {}),
        ("fetchTopicMetadata", {"topics": ["adm"]}),
        ("describeConfigs", {"resources": [{"type": 2, "name": "adm",
                                            "configNames": ["segment.bytes", "cleanup.policy",
                                                            "retention.ms"]}]}))
    assert created is True
    assert "adm" in topics
    # the engine made the topic kafkajs asked for
    assert server.call(lambda: server.broker.partitions_of("adm")) == [0, 1, 2]
    cfg = server.call(lambda: server.broker.log_dir.topic_config("adm"))
    assert (cfg.segment_bytes, cfg.retention_ms) == (16384, 86_400_000)
    (t,) = meta["topics"]
    assert t["name"] == "adm"
    assert sorted((p["partitionId"], p["partitionErrorCode"], p["replicas"], p["isr"])
                  for p in t["partitions"]) == [(p, 0, [1], [1]) for p in range(3)]
    (res,) = configs["resources"]
    assert {c["configName"]: (c["configValue"], c["isDefault"]) for c in res["configEntries"]} \
        == {"segment.bytes": ("16384", False), "retention.ms": ("86400000", False),
            "cleanup.policy": ("delete", True)}

    records = make_records(90, seed=20)
    run_peer(kafkajs_peer, "produce", "--broker", server.address, "--topic", "adm",
             "--codec", "snappy", "--chunk", "30",
             stdin=produce_lines(records, 3, 1_700_000_000_000))
    # kafkajs's deleteTopicRecords looks the leaders up in the metadata it holds without
    # loading it (KafkaJSTopicMetadataNotLoaded on a fresh admin): fetch it first
    _, _, offsets, _, meta = admin(
        kafkajs_peer, server.address,
        ("fetchTopicMetadata", {"topics": ["adm"]}),
        ("deleteTopicRecords", {"topic": "adm", "partitions": [
            {"partition": 0, "offset": "10"}, {"partition": 2, "offset": "25"}]}),
        ("fetchTopicOffsets", ["adm"]),
        ("createPartitions", {"topicPartitions": [{"topic": "adm", "count": 5}]}),
        ("fetchTopicMetadata", {"topics": ["adm"]}))
    # the engine's log start offsets moved where kafkajs asked
    assert server.call(lambda: [server.broker.log("adm", p).log_start_offset
                                for p in range(3)]) == [10, 0, 25]
    assert sorted((o["partition"], o["low"], o["high"], o["offset"]) for o in offsets) == [
        (0, "10", "30", "30"), (1, "0", "30", "30"), (2, "25", "30", "30")]
    assert server.call(lambda: server.broker.partitions_of("adm")) == [0, 1, 2, 3, 4]
    assert sorted(p["partitionId"] for p in meta["topics"][0]["partitions"]) == [0, 1, 2, 3, 4]
    # kafkajs reads what is left: 20 + 30 + 5 records
    got = run_peer(kafkajs_peer, "consume", "--broker", server.address, "--topic", "adm",
                   "--n", "55")
    assert Counter(g["p"] for g in got) == {0: 20, 1: 30, 2: 5}
    assert [g["o"] for g in got if g["p"] == 2] == list(range(25, 30))
    server.stop()
    # kept across the restart in log-start-offset-checkpoint, as Kafka keeps it
    with LogDir.open(log_dir, read_only=True) as d:
        assert [d.log("adm", p).log_start_offset for p in range(5)] == [10, 0, 25, 0, 0]
