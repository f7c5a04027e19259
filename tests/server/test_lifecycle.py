"""Start, stop, and the ``kafkalog serve`` command: a clean shutdown on SIGTERM/SIGINT closes
every log with the clean-shutdown marker; a second server on a locked directory is refused."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kafkalog import LogDir, Record
from kafkalog.errors import LogLockedError
from kafkalog.server import KafkaServer
from kafkalog.server.command import main as serve_main

from .conftest import start_server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_stop_closes_every_log_cleanly(log_dir):
    server = start_server(log_dir)
    server.broker.create_topic("t", 2)
    server.broker.log("t", 1).append([Record(None, b"x", 1)])
    assert not (log_dir / ".kafka_cleanshutdown").exists()
    server.stop()
    assert (log_dir / ".kafka_cleanshutdown").exists()
    with LogDir.open(log_dir) as d:
        assert d.clean_shutdown
        assert d.log("t", 1).log_end_offset == 1
        assert d.log("t", 1).loaded.recovered_segments == []


def test_second_server_on_the_same_directory_is_refused(server, log_dir):
    with pytest.raises(LogLockedError):
        KafkaServer(log_dir, port=0).start()


def test_binds_loopback_by_default(server):
    assert server.host == "127.0.0.1"
    assert server.address == f"127.0.0.1:{server.port}"


def serve_process(root: Path, *args: str) -> tuple[subprocess.Popen, int]:
    """A ``kafkalog serve`` process on a free port, once it accepts connections."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "kafkalog", "serve", str(root), "--port",
                             str(port), *args], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, port
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise AssertionError(
                    f"kafkalog serve did not start: {proc.communicate()[1]}") from None
            time.sleep(0.1)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_kafkalog_serve_shuts_down_cleanly_on_signal(tmp_path, sig):
    root = tmp_path / "logs"
    proc, port = serve_process(root)
    try:
        import confluent_kafka as ck

        p = ck.Producer({"bootstrap.servers": f"127.0.0.1:{port}"})
        p.produce("auto-created", b"hello")
        assert p.flush(30) == 0
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "shutting down" in err
    assert (root / ".kafka_cleanshutdown").exists()
    with LogDir.open(root) as d:
        assert [r.value for r in d.log("auto-created", 0).records()] == [b"hello"]


def test_serve_command_reports_a_locked_directory(tmp_path, capsys):
    with LogDir.open(tmp_path / "d"):
        assert serve_main([str(tmp_path / "d"), "--port", str(free_port())]) == 1
    assert "locked" in capsys.readouterr().err


def test_serve_command_usage_errors():
    assert serve_main(["--port", "x"]) == 2
    assert serve_main([]) == 2


def test_the_engine_and_the_cli_load_without_the_server_extra(tmp_path):
    """Without kio: ``import kafkalog`` and its CLI work; ``kafkalog serve`` says what to
    install (exit 1) instead of a traceback."""
    code = ("import sys; sys.modules['kio'] = None\n"
            "import kafkalog, kafkalog.log, kafkalog.log_dir\n"
            "from kafkalog.cli import main\n"
            f"raise SystemExit(main(['serve', {str(tmp_path / 'd')!r}, '--port', '0']))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert "pip install 'kafkalog[server]'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_serve_config_properties(tmp_path, capsys):
    from kafkalog.errors import ConfigError
    from kafkalog.server import ServerConfig

    c = ServerConfig.from_properties({
        "num.partitions": "3", "auto.create.topics.enable": "False",
        "group.consumer.heartbeat.interval.ms": "250",
        "group.consumer.migration.policy": "UPGRADE",
        "offsets.topic.segment.bytes": "1048576"}, node_id=7)
    assert (c.num_partitions, c.auto_create_topics_enable, c.node_id) == (3, False, 7)
    assert (c.group_consumer_heartbeat_interval_ms, c.group_consumer_migration_policy,
            c.internal_topic_segment_bytes) == (250, "upgrade", 1048576)
    c = ServerConfig.from_properties({"share.auto.offset.reset": "Earliest",
                                      "group.share.record.lock.duration.ms": "2000",
                                      "share.coordinator.state.topic.num.partitions": "3"})
    assert (c.share_auto_offset_reset, c.group_share_record_lock_duration_ms,
            c.share_coordinator_state_topic_num_partitions) == ("earliest", 2000, 3)
    for bad, what in [({"num.partitions": "x"}, "num.partitions: expected an integer"),
                      ({"num.partitions": "0"}, "num.partitions: value 0 out of range"),
                      ({"log.retention.hours": "1"}, "unknown property 'log.retention.hours'"),
                      ({"group.consumer.migration.policy": "sideways"}, "expected one of"),
                      ({"share.auto.offset.reset": "middle"}, "expected latest or earliest")]:
        with pytest.raises(ConfigError, match=what):
            ServerConfig.from_properties(bad)
    assert serve_main([str(tmp_path / "d"), "--port", "0", "-c", "num.partitions=x"]) == 2
    assert "num.partitions: expected an integer" in capsys.readouterr().err
    assert serve_main([str(tmp_path / "d"), "--port", "0", "-c", "num.partitions"]) == 2
    assert "expects KEY=VALUE" in capsys.readouterr().err


def test_kafkalog_serve_applies_config_properties(tmp_path):
    """``-c num.partitions=3``: a topic auto-created by a producer gets 3 partitions."""
    root = tmp_path / "logs"
    proc, port = serve_process(root, "-c", "num.partitions=3")
    try:
        import confluent_kafka as ck

        p = ck.Producer({"bootstrap.servers": f"127.0.0.1:{port}"})
        p.produce("auto-created", b"hello")
        assert p.flush(30) == 0
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0
    with LogDir.open(root) as d:
        assert sorted(p for t, p in d.partitions() if t == "auto-created") == [0, 1, 2]
