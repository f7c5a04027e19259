"""Fixtures of the mirror tests: a real ``kafkalog serve`` (``KafkaServer``) on 127.0.0.1 as the
source, started as the server tests start theirs (few internal partitions, no rebalance delay;
skipped without kio)."""

from __future__ import annotations

from tests.server.conftest import TEST_CONFIG, start_server

__all__ = ["TEST_CONFIG", "start_server"]
