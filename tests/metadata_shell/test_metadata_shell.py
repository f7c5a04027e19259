"""``kafkalog metadata-shell``: Kafka's MetadataShellIntegrationTest (the log dir lock), the
command line, and end-to-end runs over a real snapshot file."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from kafkalog import __version__
from kafkalog.errors import CorruptCheckpointError, LogLockedError
from kafkalog.lock import DirectoryLock
from kafkalog.metadata_shell.metadata_shell import (
    MetadataShell,
    main,
    parent,
    parent_parent,
)

from ..conftest import shared_fixture_path
from .fake_tree import image_tree

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT_NAME = "00000000000122906351-0000000226.checkpoint"

# Kafka's FileLock (a broker's or controller's lock on its log dir) is an fcntl record lock;
# kafkalog's own DirectoryLock adds an flock
_FCNTL_HOLDER = """
import fcntl, sys
f = open(sys.argv[1] + "/.lock", "r+")
fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
print("locked", flush=True)
sys.stdin.read()
"""
_KAFKALOG_HOLDER = """
import sys
from kafkalog.lock import DirectoryLock
lock = DirectoryLock.acquire(sys.argv[1], ".lock")
print("locked", flush=True)
sys.stdin.read()
"""


@contextmanager
def _lock_held_by_another_process(directory: Path, holder: str) -> Iterator[None]:
    proc = subprocess.Popen([sys.executable, "-c", holder, str(directory)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            cwd=ROOT)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "locked\n"
        yield
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=30)


def _unable_to_lock(directory: Path) -> str:
    return (f"Unable to lock {directory}. Please ensure that no broker or controller process "
            "is using this directory before proceeding.")


def _fake_loader(path: str):
    return image_tree()


# ---------------------------------------------------------------- MetadataShellIntegrationTest


def test_lock_can_lock(tmp_path: Path) -> None:
    # no .lock in the log dir: nothing to lock, and the missing snapshot fails the run
    shell = MetadataShell(str(tmp_path / "__cluster_metadata-0" / SNAPSHOT_NAME))
    try:
        with pytest.raises(FileNotFoundError):
            shell.run([])
    finally:
        shell.close()
    assert not (tmp_path / ".lock").exists()


@pytest.mark.parametrize("holder", [_FCNTL_HOLDER, _KAFKALOG_HOLDER], ids=["kafka", "kafkalog"])
def test_lock_cannot_lock(tmp_path: Path, holder: str) -> None:
    (tmp_path / ".lock").touch()
    shell = MetadataShell(str(tmp_path / "__cluster_metadata-0" / SNAPSHOT_NAME),
                          image_loader=_fake_loader)
    try:
        with _lock_held_by_another_process(tmp_path, holder):
            # KAFKA-19334: a failed attempt must not leave the shell holding the lock, so a
            # second run fails the same way
            for _ in range(2):
                with pytest.raises(LogLockedError) as e:
                    shell.run([])
                assert str(e.value) == _unable_to_lock(tmp_path)
    finally:
        shell.close()


def test_lock_held_in_this_process(tmp_path: Path) -> None:
    (tmp_path / ".lock").touch()
    snapshot = tmp_path / "__cluster_metadata-0" / SNAPSHOT_NAME
    with DirectoryLock.acquire(tmp_path, ".lock"):
        shell = MetadataShell(str(snapshot), image_loader=_fake_loader)
        with pytest.raises(LogLockedError, match="Unable to lock "):
            shell.run(["ls"])
        shell.close()


def test_lock_is_held_while_reading_and_released(tmp_path: Path) -> None:
    (tmp_path / ".lock").write_text("broker\n")
    snapshot = tmp_path / "__cluster_metadata-0" / SNAPSHOT_NAME
    snapshot.parent.mkdir()
    snapshot.write_bytes(b"")
    seen: list[str] = []

    def loader(path: str):
        seen.append(path)
        with pytest.raises(LogLockedError):  # the shell holds it now
            DirectoryLock.acquire(tmp_path, ".lock")
        return image_tree()

    out = io.StringIO()
    shell = MetadataShell(str(snapshot), image_loader=loader, stdout=out)
    try:
        assert shell.run(["ls", "/image"]) == 0
    finally:
        shell.close()
    assert seen == [str(snapshot)]
    assert out.getvalue() == "features\nprovenance\ntopics\n"
    # released, and the broker's lock file is left as it was
    DirectoryLock.acquire(tmp_path, ".lock", record_holder=False).release()
    assert (tmp_path / ".lock").read_text() == "broker\n"


def test_parent_parent() -> None:
    assert parent_parent("/a/b") == "/"


def test_parent_parent_of_root() -> None:
    assert parent_parent("/") == "/"


def test_parent_follows_java_io_file() -> None:
    assert parent("/a/b/c.checkpoint") == "/a/b"
    assert parent("/a//b///") == "/a"
    assert parent("/a") == "/"
    # a relative name without '/' has no parent: the file itself (Kafka's parent())
    assert parent("x.checkpoint") == "x.checkpoint"
    assert parent_parent("x.checkpoint") == "x.checkpoint"
    assert parent_parent("meta/x.checkpoint") == "meta"
    assert parent_parent("logs/meta/x.checkpoint") == "logs"


def test_relative_snapshot_path_locks_as_kafka(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # "meta/x.checkpoint": Kafka's parentParent stops at "meta", the partition dir itself
    (tmp_path / "meta").mkdir()
    (tmp_path / "meta" / ".lock").touch()
    monkeypatch.chdir(tmp_path)
    with _lock_held_by_another_process(tmp_path / "meta", _FCNTL_HOLDER):
        shell = MetadataShell("meta/x.checkpoint", image_loader=_fake_loader)
        with pytest.raises(LogLockedError) as e:
            shell.run(["ls"])
        shell.close()
    assert str(e.value) == _unable_to_lock(tmp_path / "meta")


# ------------------------------------------------------------------------------ command line


def _main(*argv: str, stdin: str = "", loader=_fake_loader) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), image_loader=loader, stdin=io.StringIO(stdin), stdout=out,
                  stderr=err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    path = tmp_path / "__cluster_metadata-0" / SNAPSHOT_NAME
    path.parent.mkdir()
    path.write_bytes(b"")
    return path


def test_main_one_command(snapshot: Path) -> None:
    assert _main("--snapshot", str(snapshot), "ls", "/image") == (
        0, "features\nprovenance\ntopics\n", "")
    assert _main("-s", str(snapshot), "cat", "/image/provenance", "/local/version") == (
        0, f"offset 2, epoch 1\n{__version__}\n", "")
    # shell-only commands do not exist here; the message is output, the status 0 (as Kafka)
    assert _main("-s", str(snapshot), "pwd") == (
        0, "invalid choice: 'pwd' (choose from 'cat', 'find', 'ls', 'tree')\n", "")
    assert _main(f"--snapshot={snapshot}", "find", "/image/features") == (
        0, "/image/features\n/image/features/metadataVersion\n", "")
    # argparse4j: a unique prefix of a flag, a short flag with its value attached
    assert _main("--snap", str(snapshot), "ls", "/image/features")[1] == "metadataVersion\n"
    assert _main(f"-s{snapshot}", "ls", "/image/features")[1] == "metadataVersion\n"


def test_main_interactive(snapshot: Path) -> None:
    status, out, err = _main("-s", str(snapshot), stdin="cd /image\nls\nexit\n")
    assert (status, err) == (0, "")
    assert out == ("Loading...\nStarting...\n[ Kafka Metadata Shell ]\n"
                   ">> >> features\nprovenance\ntopics\n>> ")


USAGE = ("usage: kafkalog metadata-shell [-h] --snapshot SNAPSHOT\n"
         "                               [--end-offset OFFSET]\n"
         "                               [command [command ...]]\n")


def test_main_usage_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    assert _main() == (1, "", USAGE + "kafkalog metadata-shell: error: argument --snapshot/-s "
                                      "is required\n")
    assert _main("-s", "x", "--verbose") == (
        1, "", USAGE + "kafkalog metadata-shell: error: unrecognized arguments: '--verbose'\n")
    assert _main("-s", "x", "--snapshots", "y") == (
        1, "", USAGE + "kafkalog metadata-shell: error: unrecognized arguments: '--snapshots'\n"
                       "\nDid you mean:\n\t--snapshot\n")
    status, out, err = _main("--snapshot")
    assert (status, out) == (1, "")
    assert err == USAGE + ("kafkalog  metadata-shell:  error:  argument   --snapshot/-s:  "
                           "expected  one\nargument\n")


def test_main_help(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    # argparse4j 0.7.0's parseArgsOrFail exits 1 after printing the help
    assert _main("-h") == (1, USAGE + (
        "\n"
        "The Apache Kafka metadata shell\n"
        "\n"
        "positional arguments:\n"
        "  command                The command to run.\n"
        "\n"
        "optional arguments:\n"
        "  -h, --help             show this help message and exit\n"
        "  --snapshot SNAPSHOT, -s SNAPSHOT\n"
        "                         The metadata  snapshot  file  to  read. (kafkalog:\n"
        "                         also a __cluster_metadata-0  directory,  or  a log\n"
        "                         dir holding one:  its  latest  snapshot,  then its\n"
        "                         log.)\n"
        "  --end-offset OFFSET    (kafkalog) Stop before  this  offset:  the image a\n"
        "                         broker whose metadata log ended there held.\n"), "")


def test_main_unreadable_snapshot(tmp_path: Path) -> None:
    missing = tmp_path / "__cluster_metadata-0" / SNAPSHOT_NAME
    assert _main("-s", str(missing), "ls") == (
        1, "", f"Error: {missing}: No such file or directory\n")
    # a directory is read as a metadata partition (kafkalog's addition): here there is none
    assert _main("-s", str(tmp_path), loader=None) == (
        1, "", f"Error: {tmp_path}: neither a metadata partition directory nor a log dir "
               "holding __cluster_metadata-0\n")


def test_main_locked(snapshot: Path) -> None:
    log_dir = snapshot.parent.parent
    (log_dir / ".lock").touch()
    with DirectoryLock.acquire(log_dir, ".lock"):
        assert _main("-s", str(snapshot), "ls") == (1, "", f"Error: {_unable_to_lock(log_dir)}\n")


def test_main_loader_errors(snapshot: Path) -> None:
    def corrupt(path: str):
        raise CorruptCheckpointError("not a snapshot", path=path)

    assert _main("-s", str(snapshot), "ls", loader=corrupt) == (
        1, "", f"Error: {snapshot}: not a snapshot\n")

    def broken(path: str):
        raise ValueError("boom")

    status, out, err = _main("-s", str(snapshot), "ls", loader=broken)
    assert (status, out) == (1, "")
    assert err.startswith("Unexpected error: boom\nTraceback (most recent call last):\n")


def test_cli_dispatch(snapshot: Path, monkeypatch: pytest.MonkeyPatch,
                      capsys: pytest.CaptureFixture[str]) -> None:
    from kafkalog import cli
    from kafkalog.metadata_shell import metadata_shell as module

    monkeypatch.setattr(module, "default_image_loader",
                        lambda end_offset=None, faults=None: _fake_loader)
    assert cli.main(["metadata-shell", "-s", str(snapshot), "ls", "/image/topics"]) == 0
    assert capsys.readouterr().out == "byName\n"


# ------------------------------------------------------------------------------ end to end

def _write_snapshot(path: Path) -> None:
    from kafkalog.decoders import cluster_metadata as cm
    from kafkalog.records.builder import encode_batch

    topic_id = "AAAAAAAAAAAAAAAAAAAAAQ"
    records = [
        ("FeatureLevelRecord", {"name": "metadata.version", "featureLevel": 20}),
        ("TopicRecord", {"name": "orders", "topicId": topic_id}),
        ("PartitionRecord", {"partitionId": 0, "topicId": topic_id, "replicas": [1],
                             "isr": [1], "removingReplicas": [], "addingReplicas": [],
                             "leader": 1, "leaderEpoch": 0, "partitionEpoch": 0}),
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(encode_batch([(None, cm.encode_record(n, d), 1000) for n, d in records],
                                  base_offset=0, partition_leader_epoch=1))


def _kafkalog(*argv: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COLUMNS="80")
    return subprocess.run([sys.executable, "-m", "kafkalog", "metadata-shell", *argv],
                          input=stdin, capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=60)


def test_interactive_session_over_a_snapshot(tmp_path: Path) -> None:
    path = tmp_path / "__cluster_metadata-0" / "00000000000000000003-0000000001.checkpoint"
    _write_snapshot(path)
    (tmp_path / ".lock").touch()  # a log dir: locked for the run, released at the end
    result = _kafkalog("--snapshot", str(path), stdin=(
        "ls\ncd image/topics/byName\nls\npwd\ncat /local/version\nls -h\nhistory\nexit\nls\n"))
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == (
        "Loading...\n"
        "Starting...\n"
        "[ Kafka Metadata Shell ]\n"
        ">> image\nlocal\n"
        ">> "
        ">> orders\n"
        ">> /image/topics/byName\n"
        f">> {__version__}\n"
        ">> usage:  ls [-h] [targets [targets ...]]\n"
        "\n"
        "positional arguments:\n"
        "  targets                The metadata node paths to list.\n"
        "\n"
        "optional arguments:\n"
        "  -h, --help             show this help message and exit\n"
        ">>     0  ls\n"
        "    1  cd image/topics/byName\n"
        "    2  ls\n"
        "    3  pwd\n"
        "    4  cat /local/version\n"
        "    5  ls -h\n"
        "    6  history\n"
        ">> ")
    DirectoryLock.acquire(tmp_path, ".lock").release()


def test_one_command_over_a_snapshot(tmp_path: Path) -> None:
    path = tmp_path / "__cluster_metadata-0" / "00000000000000000003-0000000001.checkpoint"
    _write_snapshot(path)
    result = _kafkalog("-s", str(path), "find", "/image/topics/byName")
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == ("/image/topics/byName\n"
                             "/image/topics/byName/orders\n"
                             "/image/topics/byName/orders/0\n"
                             "/image/topics/byName/orders/id\n"
                             "/image/topics/byName/orders/name\n")


def test_command_line_errors_in_a_process(tmp_path: Path) -> None:
    missing = tmp_path / "__cluster_metadata-0" / SNAPSHOT_NAME
    result = _kafkalog("-s", str(missing))
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == f"Error: {missing}: No such file or directory\n"
    missing.parent.mkdir()
    missing.write_bytes(b"")
    (tmp_path / ".lock").touch()
    with _lock_held_by_another_process(tmp_path, _FCNTL_HOLDER):
        result = _kafkalog("-s", str(missing), "ls")
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == f"Error: {_unable_to_lock(tmp_path)}\n"


def test_real_kraft_log_segment() -> None:
    # a __cluster_metadata-0 segment written by Kafka 3.7 (LDI-POC)
    segment = shared_fixture_path("kafka-real", "LDI-POC", "__cluster_metadata-0",
                                  "00000000000000000000.log")
    out, err = io.StringIO(), io.StringIO()
    assert main(["-s", str(segment), "ls", "/image/topics/byName"], stdout=out,
                stderr=err) == 0
    assert err.getvalue() == ""
    assert "__consumer_offsets" in out.getvalue().splitlines()


def test_a_metadata_partition_directory_and_end_offset(tmp_path: Path) -> None:
    """kafkalog's additions: ``--snapshot`` may name a log dir or ``__cluster_metadata-0``
    (latest snapshot, then the log); ``--end-offset`` cuts the log; the loader's faults go to
    stderr as Kafka's fault handler logs them, and the image up to them is browsed."""
    from kafkalog.decoders import cluster_metadata as cm
    from kafkalog.records.builder import encode_batch

    part = tmp_path / "__cluster_metadata-0"
    _write_snapshot(part / "00000000000000000003-0000000001.checkpoint")
    later = [("TopicRecord", {"name": "payments", "topicId": "AAAAAAAAAAAAAAAAAAAAAg"}),
             ("FenceBrokerRecord", {"id": 7, "epoch": 1})]
    (part / "00000000000000000003.log").write_bytes(encode_batch(
        [(None, cm.encode_record(n, d), 2000) for n, d in later], base_offset=3,
        partition_leader_epoch=2))
    out, err = io.StringIO(), io.StringIO()
    for where in (tmp_path, part):
        out, err = io.StringIO(), io.StringIO()
        assert main(["-s", str(where), "ls", "/image/topics/byName"], stdout=out,
                    stderr=err) == 0
        assert out.getvalue() == "orders\npayments\n"
        assert err.getvalue() == (
            f"Encountered metadata loading fault: {part / '00000000000000000003.log'}: offset 4: "
            "Error loading metadata log record: Tried to fence broker 7, but that broker was "
            "not registered.\n")
    out, err = io.StringIO(), io.StringIO()
    assert main(["-s", str(tmp_path), "--end-offset", "4", "cat", "/image/provenance"],
                stdout=out, stderr=err) == 0
    assert (out.getvalue(), err.getvalue()) == (
        "offset 3, epoch 2, time 1970-01-01T00:00:02Z[UTC]\n", "")
    out, err = io.StringIO(), io.StringIO()
    assert main(["-s", str(tmp_path), "--end-offset", "3", "ls", "/image/topics/byName"],
                stdout=out, stderr=err) == 0
    assert out.getvalue() == "orders\n"                     # the snapshot alone


def test_directory_snapshots_lock_their_log_dir(tmp_path: Path) -> None:
    from kafkalog.metadata_shell.metadata_shell import lock_directory_of

    part = tmp_path / "__cluster_metadata-0"
    _write_snapshot(part / "00000000000000000003-0000000001.checkpoint")
    assert lock_directory_of(str(tmp_path)) == str(tmp_path)
    assert lock_directory_of(str(part)) == str(tmp_path)
    (tmp_path / ".lock").touch()
    with _lock_held_by_another_process(tmp_path, _FCNTL_HOLDER):
        for where in (tmp_path, part):
            assert _main("-s", str(where), "ls", loader=None) == (
                1, "", f"Error: {_unable_to_lock(tmp_path)}\n")



def test_bootstrap_checkpoints() -> None:
    """``bootstrap.checkpoint`` is a snapshot file too: Kafka 3.7's (LDI-POC), as its shell
    reads it."""
    bootstrap = shared_fixture_path("kafka-real", "LDI-POC", "bootstrap.checkpoint")
    out, err = io.StringIO(), io.StringIO()
    assert main(["-s", str(bootstrap), "cat", "/image/features/metadataVersion",
                 "/image/provenance"], stdout=out, stderr=err) == 0
    assert (out.getvalue(), err.getvalue()) == (
        "Optional[3.7-IV4]\noffset 1, epoch 0, time 2026-01-30T16:43:50.996Z[UTC]\n", "")


def test_storage_format_then_shell(tmp_path: Path) -> None:
    """``kafkalog storage format --add-scram --feature`` writes the bootstrap records; the
    shell shows them: the SCRAM credential's keys are the RFC 5802 ones (computed here with
    hashlib/hmac from the salted password), the features as formatted."""
    import base64
    import hashlib
    import hmac

    from kafkalog.storage import command as storage

    logdir = tmp_path / "logs"
    config = tmp_path / "server.properties"
    config.write_text("process.roles=broker\nnode.id=0\ncontroller.listener.names=CONTROLLER\n"
                      "controller.quorum.voters=100@localhost:9093\n"
                      f"log.dirs={logdir}\n")
    salted = b"\x60\x21"
    rc = storage.main(["format", "-c", str(config), "-t", "XcZZOzUqS4yHOjhMQB6JLQ",
                       "-r", "3.9-IV0", "-f", "group.version=1",
                       "-S", 'SCRAM-SHA-256=[name=alice,iterations=8192,salt="N3E=",'
                             'saltedpassword="YCE="]'],
                      stdout=io.StringIO(), stderr=io.StringIO())
    assert rc == 0
    out, err = io.StringIO(), io.StringIO()
    assert main(["-s", str(logdir / "bootstrap.checkpoint"), "tree", "/image/features",
                 "/image/scram/SCRAM-SHA-256"], stdout=out, stderr=err) == 0
    client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
    stored = hashlib.sha256(client_key).hexdigest()
    server = hmac.new(salted, b"Server Key", hashlib.sha256).hexdigest()
    assert base64.b64decode("YCE=") == salted
    assert err.getvalue() == ""
    # tree prints a node's children, not the node itself (TreeCommandHandler)
    assert out.getvalue() == (
        "finalized_group.version:\n"
        "  1\n"
        "metadataVersion:\n"
        "  Optional[3.9-IV0]\n"
        "alice:\n"
        f"  ScramCredentialData(salt=3771, storedKey={stored}, serverKey={server}, "
        "iterations=8192)\n")
