"""``kafkalog metadata-quorum``: kafka-metadata-quorum.sh describe over nodes' metadata log dirs.

Rules from Kafka 4.1 (raft/.../FileQuorumStateStore.java and its test, LeaderState.java's
``maybeUpdateHighWatermark``, tools/.../MetadataQuorumCommand.java and its tests); the quorums
are written with the engine's own builders and ``kafkalog storage``'s bootstrap snapshot, and
checked against the real LDI-POC broker directory (Kafka 3.7) in ../shared/fixtures.
"""

from __future__ import annotations

import io
import json
import re
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalog.admin import metadata_quorum_command as mq
from kafkalog.checkpoint import MetaProperties, Uuid
from kafkalog.cli import main as cli_main
from kafkalog.cluster.quorum import (
    Voter,
    describe_quorum,
    read_metadata_node,
    read_quorum_state,
)
from kafkalog.decoders import cluster_metadata as cm
from kafkalog.errors import CorruptCheckpointError, KafkaLogError
from kafkalog.records.builder import encode_batch, encode_control_batch
from kafkalog.storage.dynamic_voters import DynamicVoters
from kafkalog.storage.kraft_snapshot import write_bootstrap_snapshot

LDI = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "kafka-real" / "LDI-POC"
CLUSTER = "MkU3OEVBNTcwNTJENDM2Qg"
DIRS = {1: "JEXY6aqzQY-32P5TStzaFg", 2: "MvDxzVmcRsaTz33bUuRU6A", 3: "vbCjd5vGQTiHzHFcDbEcsQ",
        4: "y5mc8tb2Sa6Zb9iE7ejZcA"}
INITIAL = ",".join(f"{i}@c{i}:9093:{DIRS[i]}" for i in (1, 2, 3))


def _leader_change(leader: int) -> bytes:
    # LeaderChangeMessage v0 (flexible): Version, LeaderId, Voters and GrantingVoters (compact
    # arrays of {VoterId, tagged fields}), tagged fields
    voter = struct.pack(">i", leader) + b"\x00"
    return struct.pack(">hi", 0, leader) + b"\x02" + voter + b"\x02" + voter + b"\x00"


def _noop() -> tuple[None, bytes, int]:
    return (None, cm.encode_record("NoOpRecord", {}), 1_700_000_000_000)


def _node(root: Path, node_id: int, runs: list[tuple[int, int, int]], *,
          state: dict | None = None, snapshot: bool = True) -> Path:
    """A node's metadata log dir: meta.properties, the dynamic quorum's bootstrap snapshot
    (``kafkalog storage format --initial-controllers``), and a log of ``runs``: ``(epoch,
    leader, records)``, each opened by the leader's LeaderChange control record."""
    d = root / f"node{node_id}"
    part = d / "__cluster_metadata-0"
    part.mkdir(parents=True)
    MetaProperties(version=1, cluster_id=CLUSTER, node_id=node_id,
                   directory_id=Uuid.from_string(DIRS[node_id])).write(
        d / MetaProperties.FILE_NAME)
    if snapshot:
        write_bootstrap_snapshot(d, 1, DynamicVoters.parse(INITIAL).voters_record("CONTROLLER"))
    out, offset = [], 0
    for epoch, leader, n in runs:
        out.append(encode_control_batch(2, value=_leader_change(leader), base_offset=offset,
                                        partition_leader_epoch=epoch, timestamp=1))
        offset += 1
        for _ in range(n - 1):
            out.append(encode_batch([_noop()], base_offset=offset, partition_leader_epoch=epoch))
            offset += 1
    (part / "00000000000000000000.log").write_bytes(b"".join(out))
    if state is not None:
        (part / "quorum-state").write_text(json.dumps(state))
    return d


def _state(leader: int, epoch: int, voted: int = -1) -> dict:
    return {"leaderId": leader, "leaderEpoch": epoch, "votedId": voted,
            "votedDirectoryId": "AAAAAAAAAAAAAAAAAAAAAA", "data_version": 1}


@pytest.fixture
def quorum(tmp_path: Path) -> dict[int, Path]:
    """Three controllers and a broker: leader 1 in epoch 2 (from offset 6) with 10 records,
    follower 2 behind at 8, follower 3 still holding epoch 1 up to offset 9 (the leader's
    epoch 1 ended at 6), broker 4 an observer at 9. Node 3's quorum-state is stale."""
    return {
        1: _node(tmp_path, 1, [(1, 3, 6), (2, 1, 4)], state=_state(1, 2)),
        2: _node(tmp_path, 2, [(1, 3, 6), (2, 1, 2)], state=_state(1, 2, voted=1)),
        3: _node(tmp_path, 3, [(1, 3, 10)], state=_state(3, 1)),
        4: _node(tmp_path, 4, [(1, 3, 6), (2, 1, 3)], state=_state(1, 2), snapshot=False),
    }


def _run(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = mq.main(args, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


# -- quorum-state (FileQuorumStateStore) --------------------------------------------------------


def test_quorum_state_versions_0_and_1(tmp_path: Path) -> None:
    p = tmp_path / "quorum-state"
    p.write_text('{"clusterId":"","leaderId":1,"leaderEpoch":1,"votedId":-1,"appliedOffset":0,'
                 '"currentVoters":[{"voterId":1},{"voterId":3}],"data_version":0}\n')
    s = read_quorum_state(p)
    assert (s.data_version, s.leader_id, s.leader_epoch, s.current_voters) == (0, 1, 1, (1, 3))
    p.write_text('{"leaderId":-1,"leaderEpoch":4,"votedId":2,'
                 '"votedDirectoryId":"MvDxzVmcRsaTz33bUuRU6A","data_version":1}')
    s = read_quorum_state(p)
    assert (s.leader_id, s.voted_id, str(s.voted_directory_id)) == (-1, 2,
                                                                     "MvDxzVmcRsaTz33bUuRU6A")
    assert s.current_voters is None


@pytest.mark.parametrize("text, message", [
    # FileQuorumStateStoreTest.testUnsupportedVersion
    ('{"leaderId":9990,"leaderEpoch":3012,"votedId":-1,"appliedOffset":0,"currentVoters":[],'
     '"data_version":2}', "data_version (2) is not within the min (0) and max (1) supported "
                          "version"),
    ('{"leaderId":1,"leaderEpoch":1,"votedId":-1}', "does not have data_version field"),
    ("[1]", "is not an object node"),
    ("", "File ended prematurely"),
    ('{"leaderId":1,"leaderEpoch":1,"data_version":1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA"}',
     "unable to locate field 'votedId', which is mandatory in version 1"),
    ('{"leaderId":1,"leaderEpoch":1,"votedId":-1,"data_version":0,"clusterId":"",'
     '"appliedOffset":0}', "unable to locate field 'currentVoters', which is mandatory in "
                           "version 0"),
    ('{"leaderId":"1","leaderEpoch":1,"votedId":-1,"data_version":1,'
     '"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA"}', "field 'leaderId' is not an integer"),
])
def test_quorum_state_errors_name_the_file(tmp_path: Path, text: str, message: str) -> None:
    p = tmp_path / "quorum-state"
    p.write_text(text)
    with pytest.raises(CorruptCheckpointError, match=re.escape(message)) as e:
        read_quorum_state(p)
    assert e.value.path == str(p)


_JSON = st.recursive(st.none() | st.booleans() | st.integers(-2**40, 2**40) | st.floats()
                     | st.text(max_size=8),
                     lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=6), c,
                                                                        max_size=4),
                     max_leaves=8)
_KEYS = ["leaderId", "leaderEpoch", "votedId", "votedDirectoryId", "data_version", "clusterId",
         "appliedOffset", "currentVoters"]


@settings(max_examples=300, deadline=None)
@given(st.one_of(
    st.binary(max_size=64),
    _JSON.map(lambda v: json.dumps(v).encode()),
    st.dictionaries(st.sampled_from(_KEYS), _JSON | st.integers(-1, 2)).map(
        lambda d: json.dumps(d).encode())))
def test_any_quorum_state_reads_or_is_refused_by_name(data: bytes) -> None:
    """Whatever the file holds: a QuorumState, or a CorruptCheckpointError naming it."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "quorum-state"
        p.write_bytes(data)
        try:
            s = read_quorum_state(p)
        except CorruptCheckpointError as e:
            assert e.path == str(p)
        else:
            assert s.data_version in (0, 1)
            assert all(isinstance(x, int) for x in (s.leader_id, s.leader_epoch, s.voted_id))


# -- a dynamic quorum of three controllers and a broker ------------------------------------------


def test_nodes_read_from_their_files(quorum: dict[int, Path]) -> None:
    n1 = read_metadata_node(quorum[1])
    assert (n1.node_id, str(n1.directory_id), n1.cluster_id) == (1, DIRS[1], CLUSTER)
    assert (n1.log_start_offset, n1.log_end_offset, n1.epochs) == (0, 10, ((1, 0), (2, 6)))
    assert n1.leader_change == (1, 2) and n1.kraft_version == 1 and n1.faults == []
    assert [(v.id, str(v.directory_id), v.endpoints) for v in n1.voters] == [
        (i, DIRS[i], (("CONTROLLER", f"c{i}", 9093),)) for i in (1, 2, 3)]
    # the partition directory itself names the node too
    assert read_metadata_node(quorum[1] / "__cluster_metadata-0").node_id == 1
    n4 = read_metadata_node(quorum[4])
    assert n4.voters is None and n4.log_end_offset == 9


def test_describe_status_is_kafkas(quorum: dict[int, Path]) -> None:
    status, out, err = _run([str(quorum[i]) for i in (1, 2, 3, 4)] + ["describe", "--status"])
    assert status == 0
    voters = ", ".join(f'{{"id": {i}, "directoryId": "{DIRS[i]}", "endpoints": '
                       f'["CONTROLLER://c{i}:9093"]}}' for i in (1, 2, 3))
    assert out == (
        f"ClusterId:              {CLUSTER}\n"
        "LeaderId:               1\n"
        "LeaderEpoch:            2\n"
        # voters' end offsets 10, 8, 6 (node 3 truncated): the one at index 3 // 2 = 1, above
        # the start of epoch 2 (offset 6)
        "HighWatermark:          8\n"
        "MaxFollowerLag:         4\n"
        "MaxFollowerLagTimeMs:   -1\n"
        f"CurrentVoters:          [{voters}]\n"
        f'CurrentObservers:       [{{"id": 4, "directoryId": "{DIRS[4]}"}}]\n')
    # node 3's epoch-1 records 6..9 are not on the leader (its epoch 1 ended at 6)
    assert "node 3 holds offsets 6..9 of an epoch the leader's log does not have: it " \
           "truncates to 6" in err


def test_describe_replication_is_kafkas(quorum: dict[int, Path]) -> None:
    status, out, _ = _run([str(quorum[i]) for i in (4, 3, 2, 1)]
                          + ["describe", "--replication", "--human-readable"])
    assert status == 0
    rows = [line.split("\t") for line in out.splitlines()]
    assert [c.strip() for c in rows[0]] == mq.REPLICATION_HEADERS + [""]
    assert [[c.strip() for c in r][:-1] for r in rows[1:]] == [
        ["1", DIRS[1], "10", "0", "-1", "-1", "Leader"],
        ["2", DIRS[2], "8", "2", "-1", "-1", "Follower"],
        ["3", DIRS[3], "6", "4", "-1", "-1", "Follower"],
        ["4", DIRS[4], "9", "1", "-1", "-1", "Observer"]]
    # prettyPrintTable: every cell padded to its column and tab-terminated
    assert len({len(line) for line in out.splitlines()}) == 1


def test_older_releases_shapes(quorum: dict[int, Path]) -> None:
    """Before 3.9 (KIP-853) the tool printed ids only and no DirectoryId column (3.3.2's Scala
    tool and 3.5-3.8's Java one: ``Utils.mkString(ids, "[", "]", ",")``); --human-readable came
    in 3.6; the tool itself in 3.3."""
    dirs = [str(quorum[i]) for i in (1, 2, 3, 4)]
    status, out, _ = _run(dirs + ["--kafka-version", "3.8.1", "describe", "--status"])
    assert status == 0
    assert out.splitlines()[6:] == ["CurrentVoters:          [1,2,3]",
                                    "CurrentObservers:       [4]"]
    status, out, _ = _run(dirs + ["--kafka-version", "3.6", "describe", "--replication",
                                  "--human-readable"])
    assert status == 0
    assert [c.strip() for c in out.splitlines()[0].split("\t")] == [
        "NodeId", "LogEndOffset", "Lag", "LastFetchTimestamp", "LastCaughtUpTimestamp", "Status",
        ""]
    assert [c.strip() for c in out.splitlines()[3].split("\t")][:-1] == [
        "3", "6", "4", "-1", "-1", "Follower"]
    status, _, err = _run(dirs + ["--kafka-version", "3.5", "describe", "--replication",
                                  "--human-readable"])
    assert status == 1 and "unrecognized arguments: '--human-readable'" in err
    assert _run(dirs + ["--kafka-version", "3.2", "describe", "--status"])[0] == 2
    assert _run(dirs + ["--kafka-version", "three", "describe", "--status"])[0] == 2
    status, out, _ = _run(dirs + ["--kafka-version", "3.9", "describe", "--status"])
    assert f'"directoryId": "{DIRS[1]}"' in out


@pytest.mark.parametrize("leader, lag_time", [(1, 0), (2, -1)])
def test_max_follower_lag_time_on_a_tie(tmp_path: Path, leader: int, lag_time: int) -> None:
    """Every voter at the same end offset: Kafka's ``min`` over its voter list (in id order)
    picks the leader only when no voter of lower id ties with it; a follower's caught-up time
    is not in any file (-1)."""
    nodes = [read_metadata_node(_node(tmp_path, i, [(1, leader, 3)],
                                      state=_state(leader, 1))) for i in (1, 2, 3)]
    q = describe_quorum(nodes)
    assert (q.leader_id, q.max_follower_lag(), q.max_follower_lag_time_ms()) == (leader, 0,
                                                                                 lag_time)


def test_the_leaders_files_missing(quorum: dict[int, Path]) -> None:
    """Without the leader's files its end offset, the lags and the high watermark are unknown;
    the leader and the voters still come from the followers' files."""
    status, out, err = _run([str(quorum[2]), str(quorum[3]), "describe", "--replication"])
    assert status == 0
    cells = [[c.strip() for c in line.split("\t")][:-1] for line in out.splitlines()[1:]]
    assert cells == [["1", DIRS[1], "-1", "-1", "-1", "-1", "Leader"],
                     ["2", DIRS[2], "8", "-1", "-1", "-1", "Follower"],
                     ["3", DIRS[3], "10", "-1", "-1", "-1", "Follower"]]
    assert "the leader's (node 1) metadata log dir is not among the given ones" in err
    q = describe_quorum([read_metadata_node(quorum[2])])
    assert (q.high_watermark, q.max_follower_lag()) == (-1, -1)


def test_high_watermark_waits_for_a_record_of_the_leaders_epoch(tmp_path: Path) -> None:
    """LeaderState: the leader exposes nothing of earlier epochs before the majority holds a
    record of its own epoch. Node 1 leads epoch 3 (its quorum-state) without having written in
    it: its epoch starts at its end offset, so no end offset is above it."""
    n1 = _node(tmp_path, 1, [(2, 1, 5)], state=_state(1, 3))
    n2 = _node(tmp_path, 2, [(2, 1, 5)], state=_state(1, 3))
    q = describe_quorum([read_metadata_node(n1), read_metadata_node(n2)])
    assert (q.leader_id, q.leader_epoch, q.high_watermark) == (1, 3, -1)
    # once node 1's log has a record of epoch 3 and a majority (2 of 3) holds it
    n1b = _node(tmp_path / "b", 1, [(2, 1, 5), (3, 1, 2)], state=_state(1, 3))
    n2b = _node(tmp_path / "b", 2, [(2, 1, 5), (3, 1, 1)], state=_state(1, 3))
    q = describe_quorum([read_metadata_node(n1b), read_metadata_node(n2b)])
    assert q.high_watermark == 6            # ends 7, 6, -1 (node 3 absent): index 1
    assert q.max_follower_lag() == 8        # Kafka's arithmetic: 7 - (-1) for a silent voter


def test_static_quorum_voters_from_config_or_quorum_state_v0(tmp_path: Path) -> None:
    n1 = _node(tmp_path, 1, [(1, 1, 3)], state=_state(1, 1), snapshot=False)
    status, _, err = _run([str(n1), "describe", "--status"])
    assert status == 1 and "no voter set found" in err
    cfg = tmp_path / "server.properties"
    cfg.write_text("process.roles=controller\nnode.id=1\ncontroller.quorum.voters=1@[::1]:9093,"
                   "2@c2:9093\nlisteners=CTRL://:9093\ncontroller.listener.names=CTRL\n"
                   f"log.dirs={tmp_path}\n")
    status, out, _ = _run([str(n1), "--config", str(cfg), "describe", "--status"])
    assert status == 0
    assert ('CurrentVoters:          [{"id": 1, "endpoints": ["CTRL://[::1]:9093"]}, '
            '{"id": 2, "endpoints": ["CTRL://c2:9093"]}]') in out
    assert "HighWatermark:          -1" in out     # node 2 silent: index 1 of [3, -1]
    (n1 / "__cluster_metadata-0" / "quorum-state").write_text(
        '{"clusterId":"","leaderId":1,"leaderEpoch":1,"votedId":-1,"appliedOffset":0,'
        '"currentVoters":[{"voterId":1}],"data_version":0}')
    status, out, _ = _run([str(n1), "describe", "--status"])
    assert status == 0 and 'CurrentVoters:          [{"id": 1}]' in out
    assert "HighWatermark:          3" in out      # the only voter holds 3 > epoch start 0


def test_a_log_cut_at_its_snapshot(tmp_path: Path) -> None:
    """A node whose segments below its latest snapshot were deleted: the log starts at the
    snapshot's end, in the snapshot's epoch when no record follows it, and the snapshot's
    VotersRecord is the voter set (here 1 and 2 only: node 3 was removed)."""
    from kafkalog.storage.kraft_snapshot import bootstrap_snapshot_bytes

    two = DynamicVoters.parse(",".join(f"{i}@c{i}:9093:{DIRS[i]}" for i in (1, 2)))
    node = _node(tmp_path, 1, [], state=_state(1, 3), snapshot=False)
    part = node / "__cluster_metadata-0"
    (part / "00000000000000000000.log").unlink()
    (part / "00000000000000000012-0000000003.checkpoint").write_bytes(
        bootstrap_snapshot_bytes(1, two.voters_record("CONTROLLER"), 1, lambda: 1))
    n = read_metadata_node(node)
    assert (n.log_start_offset, n.log_end_offset, n.epochs) == (12, 12, ((3, 12),))
    assert [v.id for v in n.voters] == [1, 2] and n.voters_offset == 11
    # records after it: the log continues from the snapshot's end
    (part / "00000000000000000012.log").write_bytes(b"".join(
        encode_batch([_noop()], base_offset=o, partition_leader_epoch=4) for o in (12, 13)))
    n = read_metadata_node(node)
    assert (n.log_start_offset, n.log_end_offset, n.epochs) == (12, 14, ((4, 12),))
    q = describe_quorum([n])
    assert [v.id for v in q.voters] == [1, 2] and q.leader_epoch == 3
    assert q.voters_source == "the VotersRecord at offset 11 of node 1"


def test_dirs_formatted_by_kafkalog_storage(tmp_path: Path) -> None:
    """Three controllers formatted with ``kafkalog storage format --initial-controllers`` (what
    kafka-storage.sh writes): the voters come from the bootstrap snapshot with the directory
    ids given; never started, no node knows a leader, and the error says what each holds.
    Once node 2 has led epoch 1 (its quorum-state and a LeaderChange record), it is described
    with only its own end offset known."""
    from kafkalog.storage import command as storage

    dirs = []
    for i in (1, 2, 3):
        d = tmp_path / f"c{i}"
        cfg = tmp_path / f"c{i}.properties"
        cfg.write_text(f"process.roles=controller\nnode.id={i}\ncontroller.listener.names=C\n"
                       f"listeners=C://c{i}:9093\nlog.dirs={d}\n"
                       "controller.quorum.bootstrap.servers=c1:9093\n")
        rc = storage.main(["format", "--cluster-id", CLUSTER, "--config", str(cfg),
                           "--initial-controllers", INITIAL],
                          stdout=io.StringIO(), stderr=io.StringIO())
        assert rc == 0
        dirs.append(d)
    nodes = [read_metadata_node(d) for d in dirs]
    assert [str(n.directory_id) for n in nodes] == [DIRS[i] for i in (1, 2, 3)]
    assert all(n.log_end_offset == 0 and n.kraft_version == 1 for n in nodes)
    with pytest.raises(KafkaLogError, match="no leader is known.*node 1: no quorum-state"):
        describe_quorum(nodes)
    part = dirs[1] / "__cluster_metadata-0"
    (part / "00000000000000000000.log").write_bytes(encode_control_batch(
        2, value=_leader_change(2), base_offset=0, partition_leader_epoch=1, timestamp=1))
    (part / "quorum-state").write_text(json.dumps(_state(2, 1)))
    status, out, err = _run([str(d) for d in dirs] + ["describe", "--replication"])
    assert status == 0 and err == ""
    cells = [[c.strip() for c in line.split("\t")][:-1] for line in out.splitlines()[1:]]
    assert cells == [["2", DIRS[2], "1", "0", "-1", "-1", "Leader"],
                     ["1", DIRS[1], "0", "1", "-1", "-1", "Follower"],
                     ["3", DIRS[3], "0", "1", "-1", "-1", "Follower"]]


def test_a_corrupt_tail_ends_the_log_where_recovery_would(quorum: dict[int, Path]) -> None:
    seg = quorum[2] / "__cluster_metadata-0" / "00000000000000000000.log"
    data = bytearray(seg.read_bytes())
    data[-1] ^= 0xFF                       # the last batch's CRC no longer matches
    seg.write_bytes(bytes(data))
    n2 = read_metadata_node(quorum[2])
    assert n2.log_end_offset == 7 and len(n2.faults) == 1
    assert str(seg) in n2.faults[0] and "stopped reading" in n2.faults[0]
    status, out, err = _run([str(quorum[1]), str(quorum[2]), "describe", "--status"])
    assert status == 0 and f"WARNING: {seg}" in err


def test_errors(quorum: dict[int, Path], tmp_path: Path) -> None:
    other = _node(tmp_path / "x", 2, [(1, 3, 2)], state=_state(3, 1))
    (other / "meta.properties").write_text(f"version=1\nnode.id=5\ncluster.id=other\n"
                                           f"directory.id={DIRS[2]}\n")
    status, _, err = _run([str(quorum[1]), str(other), "describe", "--status"])
    assert status == 1 and "different clusters" in err
    status, _, err = _run([str(quorum[1]), str(quorum[1]), "describe", "--status"])
    assert status == 1 and "node 1 given twice" in err
    status, _, err = _run([str(tmp_path), "describe", "--status"])
    assert status == 1 and "no __cluster_metadata-0 directory here" in err
    lone = _node(tmp_path / "y", 1, [], state={**_state(-1, 4), "votedId": 2})
    (lone / "__cluster_metadata-0" / "00000000000000000000.log").write_bytes(b"")
    with pytest.raises(KafkaLogError, match="no leader is known.*node 1: quorum-state epoch 4, "
                                            "no leader, voted for 2"):
        describe_quorum([read_metadata_node(lone)])


@pytest.mark.parametrize("args, message", [
    # MetadataQuorumCommand's checks, with its texts (MetadataQuorumCommandTest)
    (["describe", "--status", "--replication"],
     "Only one of --status or --replication should be specified with describe sub-command"),
    (["describe"], "One of --status or --replication must be specified with describe "
                   "sub-command"),
    (["describe", "--status", "--human-readable"],
     "The option --human-readable is only supported along with --replication"),
    (["add-controller", "--dry-run"], "add-controller changes the voters through the quorum's "
                                      "leader"),
])
def test_option_errors(quorum: dict[int, Path], args: list[str], message: str) -> None:
    status, out, err = _run([str(quorum[1])] + args)
    assert (status, out) == (1, "") and message in err


def test_usage_error_and_cli_entry(quorum: dict[int, Path], capsys: pytest.CaptureFixture
                                   ) -> None:
    status, _, err = _run(["describe", "--status"])   # no LOGDIR before the subcommand
    assert status == 2 and "error" in err
    assert cli_main(["metadata-quorum", str(quorum[1]), "describe", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["leaderId"], doc["highWatermark"], doc["votersSource"]) == (
        1, -1, "the VotersRecord at offset -1 of node 1")
    assert [r["logEndOffset"] for r in doc["replicas"]] == [10, -1, -1]


def test_voter_string_is_kafkas() -> None:
    # MetadataQuorumCommand.Node.toString: no directoryId when zero, no endpoints when none
    assert Voter(3).kafka_string() == '{"id": 3}'
    assert Voter(3, Uuid(0, 0)).kafka_string() == '{"id": 3}'
    assert Voter(3, Uuid(0, 1), (("A", "h", 1), ("B", "::1", 2))).kafka_string() == \
        '{"id": 3, "directoryId": "AAAAAAAAAAAAAAAAAAAAAQ", "endpoints": ["A://h:1", ' \
        '"B://[::1]:2"]}'


@pytest.mark.skipif(not LDI.is_dir(), reason="../shared/fixtures/kafka-real/LDI-POC is absent")
def test_real_kafka_37_node() -> None:
    """The LDI-POC directory (a Kafka 3.7 combined node, static quorum of itself): quorum-state
    data_version 0, 4,929 records of epoch 1 opened by node 1's LeaderChange."""
    node = read_metadata_node(LDI)
    assert (node.node_id, node.cluster_id, node.log_end_offset) == (1, "q1w2e3r4t5y6u7i8o9p0",
                                                                    4929)
    assert node.leader_change == (1, 1) and node.epochs == ((1, 0),) and node.voters is None
    status, out, err = _run([str(LDI), "describe", "--status"])
    assert (status, err) == (0, "")
    assert out == ("ClusterId:              q1w2e3r4t5y6u7i8o9p0\n"
                   "LeaderId:               1\n"
                   "LeaderEpoch:            1\n"
                   "HighWatermark:          4929\n"
                   "MaxFollowerLag:         0\n"
                   "MaxFollowerLagTimeMs:   0\n"
                   'CurrentVoters:          [{"id": 1}]\n'
                   "CurrentObservers:       []\n")
    # what the Kafka 3.7 that wrote it printed
    status, out, _ = _run([str(LDI), "--kafka-version", "3.7.0", "describe", "--status"])
    assert out.splitlines()[6:] == ["CurrentVoters:          [1]", "CurrentObservers:       []"]
    status, out, _ = _run([str(LDI), "describe", "--replication"])
    assert out.splitlines()[1].split("\t") == [
        "1     ", "AAAAAAAAAAAAAAAAAAAAAA", "4929        ", "0  ", "-1                ",
        "-1                   ", "Leader", ""]


def test_doctests() -> None:
    import doctest

    import kafkalog.admin as admin
    from kafkalog.admin import pretty_table
    from kafkalog.cluster import quorum as quorum_module

    for mod in (quorum_module, mq, pretty_table, admin):
        assert doctest.testmod(mod).failed == 0, mod.__name__


def test_verify_checks_the_quorum_state(quorum: dict[int, Path]) -> None:
    """``kafkalog verify`` of a metadata partition: a quorum-state Kafka cannot read is an
    error (the node would not start); an epoch below the log's last is Kafka's warning."""
    from kafkalog.tools.verify import verify_partition

    part = quorum[1] / "__cluster_metadata-0"
    assert not [f for f in verify_partition(part).findings if f.check.startswith("quorum")]
    (part / "quorum-state").write_text(json.dumps(_state(1, 1)))   # the log is in epoch 2
    (f,) = [f for f in verify_partition(part).findings if f.check.startswith("quorum")]
    assert (f.check, f.severity, f.expected, f.found) == ("quorum_state_epoch", "warning",
                                                           ">= 2", 1)
    (part / "quorum-state").write_text('{"leaderId":1,"leaderEpoch":2,"votedId":-1}')
    (f,) = [f for f in verify_partition(part).findings if f.check.startswith("quorum")]
    assert (f.check, f.severity, f.file) == ("quorum_state", "error",
                                             str(part / "quorum-state"))
    assert "does not have data_version field" in f.message and "would not start" in f.message
