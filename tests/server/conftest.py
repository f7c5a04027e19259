"""Fixtures of the server tests: a real ``KafkaServer`` on 127.0.0.1 (a free port) per test.

Internal topics get 4 partitions instead of Kafka's 50 (fewer files, same code paths) and the
group rebalance delay is 0 so that client tests do not wait 3 s per group.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

if sys.version_info < (3, 11):
    pytest.skip("the server needs kio, which needs Python >= 3.11", allow_module_level=True)
pytest.importorskip("kio", reason="the server extra (kio) is not installed")

from kafkalog.server import KafkaServer, ServerConfig  # noqa: E402

TEST_CONFIG = ServerConfig(offsets_topic_num_partitions=4, transaction_state_num_partitions=4,
                           group_initial_rebalance_delay_ms=0)


def start_server(path: Path, **kw: object) -> KafkaServer:
    """A started server over ``path`` on a free loopback port."""
    kw.setdefault("config", TEST_CONFIG)
    return KafkaServer(path, "127.0.0.1", 0, **kw).start()  # type: ignore[arg-type]


def format_log_dir(root: Path, *args: str) -> None:
    """Format ``root`` as a broker's only log dir with ``kafkalog storage format`` (Kafka's
    ``kafka-storage.sh format``; a static quorum, so no snapshot), ``args`` added."""
    import io

    from kafkalog.storage import command as storage_command

    props = root.parent / f"{root.name}.server.properties"
    props.write_text("process.roles=broker\nnode.id=0\ncontroller.listener.names=CONTROLLER\n"
                     f"controller.quorum.voters=100@localhost:9093\nlog.dirs={root}\n")
    err = io.StringIO()
    assert storage_command.main(["format", "-c", str(props), "-t", "XcZZOzUqS4yHOjhMQB6JLQ",
                                 *args], stdout=io.StringIO(), stderr=err) == 0, err.getvalue()


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    return tmp_path / "kafka-logs"


@pytest.fixture
def server(log_dir: Path) -> Iterator[KafkaServer]:
    s = start_server(log_dir)
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture
def members() -> Iterator[list[Any]]:
    """Client group members started by a test (see tests/server/peer_process.py), each left
    (its ``leave()``) at the end, whatever the test's outcome."""
    out: list[Any] = []
    yield out
    for m in out:
        m.leave()
