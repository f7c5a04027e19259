"""sarama (Shopify's pure-Go Kafka client) against ``kafkalog serve``: a peer that shares no code
with kafkalog, kafka-python, aiokafka or librdkafka.

sarama encodes and decodes RecordBatch v2 with its own code and Go's codecs (``compress/gzip``,
``golang/snappy`` in xerial framing, ``pierrec/lz4``, ``DataDog/zstd``), so:

- its batches, of every codec, are stored as sent and read back by the engine record for record,
  at the offsets sarama was told;
- the engine's batches, of every codec and across segment rolls, are read by sarama;
- its idempotent producer's sequences are kept;
- its consumer groups form through our coordinator: each member gets exactly the plan its Go
  leader computed, they commit offsets that ``kafkalog groups describe`` shows offline, and
  sarama's ClusterAdmin describes them back (member metadata and assignments decoded in Go);
- a group of one sarama member and one librdkafka member shares a topic under whichever
  member the coordinator made leader.

sarama 1.22's ``range`` and ``roundrobin`` are not Kafka's assignors: they order a topic's
members by an FNV-1a hash of topic and member id and split each topic on its own
(``balance_strategy.go``; IBM/sarama#2243, fixed for ``range`` by IBM/sarama#2245 in 2022).
:func:`sarama_plan` ports that code, so that a wrong hand-out by the coordinator (a plan
delivered to the wrong member, or altered) fails, without taking sarama's deviation for ours.

The peer is ``tests/server/sarama_peer/main.go``, built here from Debian's
``golang-github-shopify-sarama-dev`` sources (sarama 1.22.1, GOPATH mode, no network). sarama
1.22 speaks the protocol of Kafka 2.1 (Produce v3, Fetch v4, JoinGroup v1, OffsetCommit v2),
versions Kafka 4 still serves.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from kafkalog import Record
from kafkalog.cli import main as cli_main
from kafkalog.groups import assign

from .peer_process import (
    MemberProcess,
    append_across_rolls,
    as_records,
    assert_columnar_agrees,
    engine_batches,
    engine_records,
    fill,
    produce_lines,
    run_json_lines,
    unb64,
    wait_until,
)
from .peers import CODECS, assert_idempotent_batches, assert_same, by_partition, make_records

GOPATH = Path("/usr/share/gocode")
SARAMA_SRC = GOPATH / "src/github.com/Shopify/sarama"
PEER_SRC = Path(__file__).parent / "sarama_peer"


@pytest.fixture(scope="module")
def sarama_peer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The peer binary, built once per module (a few seconds)."""
    go = shutil.which("go")
    if go is None:
        pytest.skip("the Go toolchain is not installed (Debian package golang-go; CI installs it)")
    if not SARAMA_SRC.is_dir():
        pytest.skip(f"sarama's sources are not at {SARAMA_SRC} (Debian package "
                    "golang-github-shopify-sarama-dev; CI installs it)")
    out = tmp_path_factory.mktemp("sarama") / "sarama_peer"
    env = {**os.environ, "GO111MODULE": "off", "GOPATH": str(GOPATH),
           "GOCACHE": str(out.parent / "gocache"), "GOFLAGS": ""}
    r = subprocess.run([go, "build", "-o", str(out), "."], cwd=PEER_SRC, env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"go build failed:\n{r.stderr}"
    return out


def cli(args: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = cli_main(args)
    return status, out.getvalue()



def run_peer(peer: Path, *args: str, stdin: str = "") -> list[dict[str, Any]]:
    return run_json_lines([str(peer), *args], stdin)


# -- producing ----------------------------------------------------------------------------------


@pytest.mark.parametrize("codec", CODECS)
def test_sarama_batches_of_every_codec_are_stored_and_read_back(server, log_dir, sarama_peer,
                                                                codec):
    server.broker.create_topic("t", 3)
    records = make_records(3000, seed=7)
    t0 = 1_700_000_000_000
    acks = run_peer(sarama_peer, "produce", "-broker", server.address, "-topic", "t",
                    "-codec", codec, stdin=produce_lines(records, 3, t0))
    # the offsets sarama was given are the ones the records have on disk
    assert [a["i"] for a in acks] == list(range(len(records)))
    for p in range(3):
        assert [a["o"] for a in acks if a["p"] == p] == list(range(1000)), p
    server.stop()
    got: dict[int, list[Any]] = {}
    for p in range(3):
        recs = engine_records(log_dir, "t", p)
        assert [r.offset for r in recs] == list(range(1000))
        assert [r.timestamp for r in recs] == [t0 + p + 3 * i for i in range(1000)]
        got[p] = [(r.key, r.value or b"", [(k, v or b"") for k, v in r.headers]) for r in recs]
        # stored as sarama compressed them: several records per batch, never re-encoded
        assert {b.compression for b in engine_batches(log_dir, "t", p)} == {codec}
    assert_same(by_partition(records), got)
    for p in range(3):
        assert_columnar_agrees(log_dir, "t", p)
    # the operator tools take the directory: verify decodes every record, the dump shows them
    assert cli(["verify", "--deep", str(log_dir)])[0] == 0
    status, out = cli(["dump-segments", "--deep-iteration", "--files",
                       str(log_dir / "t-0" / "00000000000000000000.log")])
    assert status == 0
    batches = len(engine_batches(log_dir, "t", 0))
    assert out.count(f"compresscodec: {codec} crc:") == batches
    assert out.count("isvalid: true") == batches
    assert [line.split()[2] for line in out.splitlines() if line.startswith("| offset:")] == \
        [str(o) for o in range(1000)]


def test_sarama_idempotent_producer(server, log_dir, sarama_peer):
    server.broker.create_topic("t", 3)
    records = make_records(3000, seed=8)
    run_peer(sarama_peer, "produce", "-broker", server.address, "-topic", "t", "-codec", "lz4",
             "-idempotent", stdin=produce_lines(records, 3, 1_700_000_000_000))
    server.stop()
    assert_idempotent_batches(log_dir, "t", 3, len(records))


# -- consuming what the engine wrote --------------------------------------------------------------


@pytest.mark.parametrize("codec", CODECS)
def test_sarama_reads_the_engines_batches(server, sarama_peer, codec):
    # small segments: sarama's fetches cross segment rolls
    server.broker.create_topic("t", 1, {"segment.bytes": "16384"})
    records = make_records(2000, seed=9)
    t0 = 1_690_000_000_000

    append_across_rolls(server, "t", records, t0, codec)
    got = run_peer(sarama_peer, "consume", "-broker", server.address, "-topic", "t",
                   "-partition", "0", "-n", str(len(records)))
    assert [g["o"] for g in got] == list(range(len(records)))
    assert [g["ts"] for g in got] == [t0 + i for i in range(len(records))]
    assert_same({0: records}, {0: as_records(got)})


def test_sarama_starts_from_an_offset_in_the_middle_of_a_batch(server, sarama_peer):
    server.broker.create_topic("t", 1)

    def append() -> None:
        log = server.broker.log("t", 0)
        for n in range(5):
            log.append([Record(None, b"%d-%d" % (n, i), 1_700_000_000_000) for i in range(10)],
                       compression="zstd")
        server.broker.log_dir.set_high_watermark("t", 0, log.log_end_offset)

    server.call(append)
    got = run_peer(sarama_peer, "consume", "-broker", server.address, "-topic", "t",
                   "-partition", "0", "-offset", "23", "-n", "27")
    assert [(g["o"], unb64(g["v"])) for g in got] == [
        (o, b"%d-%d" % divmod(o, 10)) for o in range(23, 50)]


@pytest.mark.parametrize("builder", ["kafka-python", "aiokafka"])
def test_sarama_reads_a_peer_built_log_of_every_format(tmp_path, sarama_peer, builder):
    """A segment another library wrote (magic 0, 1 and 2 one after another: every codec,
    compressed legacy wrappers, transactions and control batches, see
    ../shared/fixtures/peer-built) is served as stored: sarama decodes each message set and
    batch with its own code and gets every data record, at its offset.

    Except a magic-0 LZ4 message (kafka-python's): its LZ4 frame has the header checksum Kafka
    0.8-0.9 clients wrote (over the magic bytes too, KAFKA-3160), which Kafka's broker and
    kafkalog accept for magic 0 and sarama 1.22's pierrec/lz4 refuses ("invalid header
    checksum"). sarama reads around it, from the offset after it. Nor are the timestamps of
    records in a LogAppendTime wrapper compared (see below)."""
    from tests.conftest import shared_fixture_path

    from .conftest import start_server

    src = shared_fixture_path("peer-built", builder)
    doc = json.loads((src / "expected.json").read_text())
    control = {o for b in doc["batches"] if b.get("is_control")
               for o in range(b["base_offset"], b["last_offset"] + 1)}
    # legacy entries: "offset" is a wrapper's last inner offset
    skip = {o for b in doc["batches"] if b["magic"] == 0 and b["codec"] == "lz4"
            for o in range(b["offset"] - b["record_count"] + 1, b["offset"] + 1)}
    assert builder == "aiokafka" or skip, "the fixture changed: no magic-0 LZ4 message"
    want = [r for r in doc["records"] if r["offset"] not in control | skip]
    # Records in a magic-1 wrapper a broker set to LogAppendTime take the wrapper's timestamp
    # (Kafka's AbstractLegacyRecordBatch); sarama 1.22 looks for the flag on the inner message
    # (consumer.go parseMessages), which a broker leaves as the producer wrote it, and reports
    # the inner timestamps: not compared there.
    log_append_wrapped = {
        o for b in doc["batches"] if b["magic"] == 1 and b.get("inner_compressed")
        and b["timestamp_type"] == "LogAppendTime"
        for o in range(b["offset"] - b["record_count"] + 1, b["offset"] + 1)}
    assert log_append_wrapped, "the fixture changed: no LogAppendTime wrapper"
    # runs of wanted offsets, each read from its first offset
    runs: list[tuple[int, int]] = []
    for r in want:
        if runs and r["offset"] - 1 not in skip:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((r["offset"], 1))
    part = tmp_path / "logs" / "peer-0"
    part.mkdir(parents=True)
    shutil.copy(src / "00000000000000000000.log", part)
    server = start_server(tmp_path / "logs")
    try:
        # small fetches: the records before the refused message reach sarama before it does
        got = [g for start, n in runs
               for g in run_peer(sarama_peer, "consume", "-broker", server.address, "-topic",
                                 "peer", "-partition", "0", "-offset", str(start), "-n", str(n),
                                 "-fetch-bytes", "512")]
    finally:
        server.stop()
    assert len(runs) == (2 if skip else 1)
    assert len(got) == len(want)
    for g, r in zip(got, want):
        where = f"offset {r['offset']}"
        assert g["o"] == r["offset"], where
        assert unb64(g["k"]) == (None if r["key_hex"] is None else bytes.fromhex(r["key_hex"])), \
            where
        # sarama gives an empty value for a null one
        assert unb64(g["v"]) == bytes.fromhex(r["value_hex"] or ""), where
        assert [(k, unb64(v)) for k, v in g["h"]] == [
            (h[0], None if h[1] is None else bytes.fromhex(h[1])) for h in r["headers"]], where
        if r["timestamp"] is not None and r["timestamp"] >= 0 \
                and r["offset"] not in log_append_wrapped:
            assert g["ts"] == r["timestamp"], where


def test_sarama_read_committed_skips_aborted_transactions(server, log_dir, sarama_peer):
    """librdkafka's transactional producer commits, aborts, commits; sarama's read_committed
    consumer drops the aborted records by Fetch's aborted-transactions list (its own code),
    read_uncommitted gets them all, neither gets the markers."""
    ck = pytest.importorskip("confluent_kafka", reason="confluent-kafka is not installed")
    server.broker.create_topic("tx", 1)
    p = ck.Producer({"bootstrap.servers": server.address, "transactional.id": "sarama-tx"})
    p.init_transactions(30)
    for values, commit in ([b"c%d" % i for i in range(5)], True), \
            ([b"a%d" % i for i in range(5)], False), ([b"last"], True):
        p.begin_transaction()
        for v in values:
            p.produce("tx", value=v, partition=0)
        p.flush(30)
        if commit:
            p.commit_transaction(30)
        else:
            p.abort_transaction(30)
    committed = run_peer(sarama_peer, "consume", "-broker", server.address, "-topic", "tx",
                         "-partition", "0", "-n", "6", "-isolation", "committed")
    # c0-c4 at 0-4, their marker at 5, a0-a4 at 6-10, the abort marker at 11, last at 12
    assert [(g["o"], unb64(g["v"])) for g in committed] == \
        [(i, b"c%d" % i) for i in range(5)] + [(12, b"last")]
    everything = run_peer(sarama_peer, "consume", "-broker", server.address, "-topic", "tx",
                          "-partition", "0", "-n", "11")
    assert [g["o"] for g in everything] == [0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 12]


# -- consumer groups ------------------------------------------------------------------------------


class SaramaMember(MemberProcess):
    """A sarama ConsumerGroup member in its own process (``sarama_peer group``): its
    ``assignment`` is its session's claims, empty between a cleanup and the next setup."""

    def __init__(self, peer: Path, address: str, group: str, topics: list[str],
                 strategy: str) -> None:
        super().__init__([str(peer), "group", "-broker", address, "-group", group, "-topics",
                          ",".join(topics), "-strategy", strategy])

    def on_event(self, ev: dict[str, Any]) -> None:
        if ev["event"] == "setup":
            self.member_id = ev["member"]
            self.assignment = {t: sorted(ps) for t, ps in ev["claims"].items()}
        elif ev["event"] == "cleanup":
            self.assignment = {}
        elif ev["event"] == "error":
            self.errors.append(ev["error"])


def _fnv1a(*parts: str) -> int:
    h = 2166136261
    for s in parts:
        for c in s:
            h = ((h ^ ord(c)) * 16777619) & 0xFFFFFFFF
    return h


def sarama_plan(strategy: str, subscriptions: dict[str, list[str]],
                partitions: dict[str, int]) -> dict[str, set[tuple[str, int]]]:
    """sarama 1.22.1's ``balanceStrategy.Plan`` (``balance_strategy.go``), for comparison."""
    plan: dict[str, set[tuple[str, int]]] = {m: set() for m in subscriptions}
    for topic, n in partitions.items():
        ids = sorted((m for m, ts in subscriptions.items() if topic in ts),
                     key=lambda m: _fnv1a(topic, m))
        if strategy == "range":
            step = n / len(ids)
            for i, m in enumerate(ids):
                lo, hi = math.floor(i * step + 0.5), math.floor((i + 1) * step + 0.5)
                plan[m] |= {(topic, p) for p in range(lo, hi)}
        else:
            for p in range(n):
                plan[ids[p % len(ids)]].add((topic, p))
    return plan


def group_leader(server: Any, group: str) -> str | None:
    return server.call(lambda: server.broker.groups.coordinator.group(group).leader_id)


@pytest.mark.parametrize("strategy", ["range", "roundrobin"])
def test_sarama_group_assigns_commits_and_is_described(server, log_dir, sarama_peer, members,
                                                       strategy):
    from .test_groups import committed

    topics = {"a": 3, "b": 4}
    for t, n in topics.items():
        server.broker.create_topic(t, n)
    fill(server, topics, 20)
    group = f"sarama-{strategy}"
    members += [SaramaMember(sarama_peer, server.address, group, sorted(topics), strategy)
                for _ in range(2)]
    everything = {(t, p) for t, n in topics.items() for p in range(n)}

    def state() -> str:
        return "; ".join(m.state() for m in members)

    def settled() -> bool:
        held = [m.assigned() for m in members]
        return all(held) and sum(map(len, held)) == len(everything) \
            and set().union(*held) == everything
    wait_until(settled, "both members to share every partition", state)
    # each member holds what sarama's leader planned for it, in Go
    assert {m.member_id: m.assigned() for m in members} == \
        sarama_plan(strategy, {m.member_id: sorted(topics) for m in members}, topics)
    want = {f"{t}/{p}/{i}".encode() for t, n in topics.items() for p in range(n)
            for i in range(20)}
    wait_until(lambda: {v for m in members for *_, v in m.values} == want, "every record", state)

    # sarama commits what it marked every 200 ms: the coordinator has the log end offsets
    admin_doc: dict[str, Any] = {}

    def described() -> bool:
        admin_doc.clear()
        admin_doc.update(run_peer(sarama_peer, "admin", "-broker", server.address,
                                  "-group", group)[0])
        return admin_doc["offsets"] == {t: {str(p): 20 for p in range(n)}
                                        for t, n in topics.items()}
    wait_until(described, "the committed offsets", lambda: str(admin_doc))
    assert admin_doc["topics"]["a"] == 3 and admin_doc["topics"]["b"] == 4
    assert admin_doc["groups"][group] == "consumer"
    g = admin_doc["group"]
    assert (g["state"], g["protocol_type"], g["protocol"], g["error"]) == \
        ("Stable", "consumer", strategy, "kafka server: Not an error, why are you printing me?")
    # sarama's admin decodes what sarama's members sent (metadata) and its leader assigned
    assert {d["member"]: ({t: sorted(ps) for t, ps in d["assignment"].items()},
                          sorted(d["subscription"]), d["client_id"]) for d in g["members"]} == \
        {m.member_id: (m.assignment, sorted(topics), "sarama-peer-group") for m in members}

    # one leaves: the other takes every partition and reads what follows from the offsets
    members[0].leave()
    assert members[0].closed, members[0].state()
    rest = members[1]
    wait_until(lambda: rest.assigned() == everything, "the other to take every partition",
               state)
    fill(server, topics, 5, start=20)
    wait_until(lambda: sum(1 for *_, v in rest.values if int(v.split(b"/")[2]) >= 20) == 35,
               "the 35 new records", state)
    wait_until(lambda: run_peer(sarama_peer, "admin", "-broker", server.address, "-group",
                                group)[0]["offsets"] == {t: {str(p): 25 for p in range(n)}
                                                         for t, n in topics.items()},
               "the new offsets", state)
    rest.leave()
    server.stop()
    assert committed(log_dir, group) == {(t, p): 25 for t, n in topics.items()
                                         for p in range(n)}


def test_group_of_a_sarama_and_a_librdkafka_member(server, sarama_peer, members):
    """A Go service and a librdkafka one in one group: either may lead, and the leader's range
    plan (its own code: Kafka's ``RangeAssignor`` in librdkafka, sarama's in Go) is what both
    members hold."""
    from .test_groups import ck_member

    server.broker.create_topic("orders", 6)
    fill(server, {"orders": 6}, 10)
    group = "mixed"
    members.append(SaramaMember(sarama_peer, server.address, group, ["orders"], "range"))
    # test_groups' librdkafka member subscribes to its TOPIC, "orders"
    ck = ck_member(server.address, group, "range")()
    members.append(ck)
    everything = {("orders", p) for p in range(6)}

    def ck_assigned() -> set[tuple[str, int]]:
        return {("orders", p) for p in ck.assigned}

    def state() -> str:
        return f"{members[0].state()}; librdkafka: {sorted(ck.assigned)}, {len(ck.values)} " \
               f"records, errors {ck.errors[-2:]}"

    wait_until(lambda: members[0].assigned() and ck.assigned
               and members[0].assigned() | ck_assigned() == everything
               and not members[0].assigned() & ck_assigned(), "the two to share the topic",
               state)
    # the librdkafka member's id, from the coordinator (``Consumer.memberid()`` would wait on the
    # client's lock while the member's thread polls)
    ids = server.call(lambda: list(server.broker.groups.coordinator.group(group).members))
    (ck_id,) = set(ids) - {members[0].member_id}
    subscriptions = {members[0].member_id: ["orders"], ck_id: ["orders"]}
    held = {members[0].member_id: members[0].assigned(), ck_id: ck_assigned()}
    leader = group_leader(server, group)
    if leader == ck_id:
        assert held == {m: set(tps) for m, tps in
                        assign("range", subscriptions, {"orders": 6}).items()}
    else:
        assert leader == members[0].member_id, (leader, held)
        assert held == sarama_plan("range", subscriptions, {"orders": 6})
    want = {f"orders/{p}/{i}".encode() for p in range(6) for i in range(10)}
    wait_until(lambda: {v for *_, v in members[0].values} | set(ck.values) == want,
               "every record", state)
