"""Client quotas served: AlterClientQuotas / DescribeClientQuotas sent by kafka-python (its
generated protocol classes through its admin client's connection manager), and byte-rate
quotas enforced on produce and fetch as seen by librdkafka (confluent-kafka's ``throttle_cb``:
the broker's throttle time reported to the client).

The servers here measure quotas over ``quota.window.num=2`` windows of 1 s (Kafka's default is
11) so that a throttle lasts about a second instead of ten.
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import Any

import pytest

from kafkalog.quotas import ClientQuotaStore

from .conftest import TEST_CONFIG, start_server

kafka = pytest.importorskip("kafka", reason="kafka-python is not installed")
ck = pytest.importorskip("confluent_kafka", reason="confluent-kafka is not installed")
from kafka.admin import KafkaAdminClient  # noqa: E402
from kafka.protocol.admin import (  # noqa: E402
    AlterClientQuotasRequest,
    DescribeClientQuotasRequest,
)

CONFIG = dataclasses.replace(TEST_CONFIG, quota_window_num=2)
_E = AlterClientQuotasRequest.EntryData
_C = DescribeClientQuotasRequest.ComponentData


def _entry(entity: dict, ops: list[tuple[str, float | None]]) -> Any:
    return _E(entity=[_E.EntityData(entity_type=t, entity_name=n) for t, n in entity.items()],
              ops=[_E.OpData(key=k, value=0.0 if v is None else v, remove=v is None)
                   for k, v in ops])


class _Admin:
    def __init__(self, address: str) -> None:
        self.admin = KafkaAdminClient(bootstrap_servers=address)

    def _send(self, request: Any) -> dict:
        async def go() -> Any:
            return await self.admin._manager.send(request)
        return self.admin._manager.run(go).to_dict()

    def alter(self, entries: list, validate_only: bool = False) -> list[tuple[dict, int, Any]]:
        r = self._send(AlterClientQuotasRequest(entries=entries, validate_only=validate_only))
        return [({e["entity_type"]: e["entity_name"] for e in x["entity"]}, x["error_code"],
                 x["error_message"]) for x in r["entries"]]

    def describe(self, components: list[tuple[str, int, str | None]], strict: bool = False
                 ) -> dict:
        return self._send(DescribeClientQuotasRequest(
            components=[_C(entity_type=t, match_type=m, match=s) for t, m, s in components],
            strict=strict))

    def close(self) -> None:
        self.admin.close()


def _entities(response: dict) -> list[tuple[dict, dict]]:
    assert response["error_code"] == 0, response
    return sorted((({e["entity_type"]: e["entity_name"] for e in x["entity"]},
                    {v["key"]: v["value"] for v in x["values"]}) for x in response["entries"]),
                  key=repr)


def test_alter_and_describe_client_quotas_with_kafka_python(tmp_path: Path) -> None:
    server = start_server(tmp_path / "d", config=CONFIG)
    try:
        admin = _Admin(server.address)
        try:
            results = admin.alter([
                _entry({"client-id": "app"}, [("producer_byte_rate", 1024.0),
                                              ("request_percentage", 12.5)]),
                _entry({"user": "alice", "client-id": None}, [("consumer_byte_rate", 2048.0)]),
                _entry({"user": None}, [("producer_byte_rate", 1.5)]),
                _entry({"user": "bob"}, [("unknown_rate", 1.0)]),
                _entry({"user": ""}, [("producer_byte_rate", 1.0)]),
                _entry({"ip": "127.0.0.1", "user": "x"}, [("connection_creation_rate", 1.0)]),
                _entry({"ip": None}, [("connection_creation_rate", 10.0)]),
                _entry({"client-id": "zero"}, [("consumer_byte_rate", 0.0)]),
            ])
            assert results == [
                ({"client-id": "app"}, 0, None),
                ({"user": "alice", "client-id": None}, 0, None),
                ({"user": None}, 42, "producer_byte_rate cannot be a fractional value."),
                ({"user": "bob"}, 42, "Invalid configuration key unknown_rate"),
                ({"user": ""}, 42, "Empty user not supported"),
                ({"ip": "127.0.0.1", "user": "x"}, 42, "Invalid quota entity combination, IP "
                 "entity shouldnot be combined with User or ClientId"),
                ({"ip": None}, 0, None),
                ({"client-id": "zero"}, 42, "Quota consumer_byte_rate must be greater than 0"),
            ]
            # validate_only: checked, not written
            assert admin.alter([_entry({"client-id": "dry"}, [("producer_byte_rate", 5.0)])],
                               validate_only=True) == [({"client-id": "dry"}, 0, None)]

            every_client = _entities(admin.describe([("client-id", 2, None)]))
            assert every_client == [
                ({"client-id": "app"}, {"producer_byte_rate": 1024.0,
                                        "request_percentage": 12.5}),
                ({"client-id": None, "user": "alice"}, {"consumer_byte_rate": 2048.0})]
            # strict: entities of exactly the filter's types
            assert _entities(admin.describe([("client-id", 2, None)], strict=True)) == [
                ({"client-id": "app"}, {"producer_byte_rate": 1024.0,
                                        "request_percentage": 12.5})]
            assert _entities(admin.describe([("user", 0, "alice"), ("client-id", 1, None)])) \
                == [({"client-id": None, "user": "alice"}, {"consumer_byte_rate": 2048.0})]
            assert _entities(admin.describe([("ip", 1, None)])) == [
                ({"ip": None}, {"connection_creation_rate": 10.0})]

            bad = admin.describe([("group", 2, None)])
            assert (bad["error_code"], bad["error_message"], bad["entries"]) == (
                35, "Unsupported entity type group", None)
            bad = admin.describe([("user", 0, None)])
            assert (bad["error_code"], bad["error_message"]) == (
                42, "Request specified MATCH_TYPE_EXACT, but set match string to null.")
            bad = admin.describe([("ip", 2, None), ("user", 2, None)])
            assert bad["error_code"] == 42 and "IP filter component" in bad["error_message"]

            # remove one key, then the last: the entity goes
            assert admin.alter([_entry({"client-id": "app"}, [("request_percentage", None)])]
                               )[0][1] == 0
            assert admin.alter([_entry({"ip": None}, [("connection_creation_rate", None)])]
                               )[0][1] == 0
        finally:
            admin.close()
    finally:
        server.stop()
    # persisted at the tree's root, read back by a fresh store and a restarted server
    doc = json.loads((tmp_path / "d" / ".kafkalog-client-quotas.json").read_text())
    assert doc["version"] == 1
    assert ClientQuotaStore(tmp_path / "d").entities() == [
        ({"user": "alice", "client-id": None}, {"consumer_byte_rate": 2048.0}),
        ({"client-id": "app"}, {"producer_byte_rate": 1024.0})]
    server = start_server(tmp_path / "d", config=CONFIG)
    try:
        admin = _Admin(server.address)
        try:
            assert len(_entities(admin.describe([]))) == 2
        finally:
            admin.close()
    finally:
        server.stop()


def _produce(address: str, client_id: str, n: int, size: int) -> tuple[list[float], int]:
    throttles: list[float] = []
    delivered = []
    # batches of at most 16 KiB: a fetch returns at least one whole batch, and one larger than
    # a quota window's worth (quota x (quota.window.num - 1) x 1 s) would be throttled on
    # every fetch and never get through (as on a Kafka broker)
    p = ck.Producer({"bootstrap.servers": address, "client.id": client_id, "linger.ms": 20,
                     "batch.size": 16384,
                     "throttle_cb": lambda ev: throttles.append(ev.throttle_time)})
    for i in range(n):
        p.produce("quota-topic", b"%08d" % i + b"x" * (size - 8),
                  on_delivery=lambda err, msg: delivered.append(err is None))
        p.poll(0)
    assert p.flush(60) == 0
    # the throttle callback is served by poll after the response that carried it
    p.poll(0.5)
    return throttles, sum(delivered)


def test_produce_over_its_quota_is_throttled_for_librdkafka(tmp_path: Path) -> None:
    root = tmp_path / "d"
    root.mkdir()
    ClientQuotaStore(root).alter([({"client-id": "slow"}, [("producer_byte_rate", 20_000.0,
                                                             False)])])
    server = start_server(root, config=CONFIG)
    try:
        throttles, delivered = _produce(server.address, "slow", 1000, 100)
        assert delivered == 1000            # throttled, never refused
        assert throttles and max(throttles) > 0, throttles
        other, delivered = _produce(server.address, "fast", 1000, 100)
        assert delivered == 1000 and not any(other), other
        log = server.broker.log("quota-topic", 0)
        assert log.log_end_offset == 2000
    finally:
        server.stop()


def test_fetch_over_its_quota_is_throttled_and_still_gets_everything(tmp_path: Path) -> None:
    root = tmp_path / "d"
    root.mkdir()
    server = start_server(root, config=CONFIG)
    try:
        _produce(server.address, "loader", 1500, 100)
        store = ClientQuotaStore(root)  # the file changed under the running server
        store.alter([({"client-id": "slowc"}, [("consumer_byte_rate", 40_000.0, False)])])
        time.sleep(1.2)  # (the server looks at the file again at most once a second)

        def consume(client_id: str) -> tuple[list[float], list[bytes]]:
            throttles: list[float] = []
            c = ck.Consumer({"bootstrap.servers": server.address, "client.id": client_id,
                             "group.id": f"g-{client_id}", "auto.offset.reset": "earliest",
                             "enable.auto.commit": False,
                             "throttle_cb": lambda ev: throttles.append(ev.throttle_time)})
            got: list[bytes] = []
            try:
                c.subscribe(["quota-topic"])
                deadline = time.monotonic() + 60
                while len(got) < 1500 and time.monotonic() < deadline:
                    m = c.poll(0.5)
                    if m is not None and m.error() is None:
                        got.append(m.value()[:8])
                c.poll(0.2)
            finally:
                c.close()
            return throttles, got

        throttles, got = consume("slowc")
        assert got == [b"%08d" % i for i in range(1500)]  # in order, nothing lost
        assert throttles and max(throttles) > 0, throttles
        free, got = consume("freec")
        assert len(got) == 1500 and not any(free), free
    finally:
        server.stop()


def test_request_time_quota_throttles_busy_clients_not_long_polls(tmp_path: Path) -> None:
    """request_percentage (ClientRequestQuotaManager): the handler's time on the loop thread,
    as a percentage of a second. A producer allowed 0.001 % (10 us a second) is throttled (at
    most one window); a consumer allowed 5 % (50 ms a second) whose fetches long-poll 300 ms
    on an empty topic is not: the wait is not handler time (a broker counts its handler
    thread only; counted, each fetch would be 30 %)."""
    root = tmp_path / "d"
    root.mkdir()
    ClientQuotaStore(root).alter([
        ({"client-id": "busy"}, [("request_percentage", 0.001, False)]),
        ({"client-id": "poller"}, [("request_percentage", 5.0, False)])])
    server = start_server(root, config=CONFIG)
    try:
        throttles, delivered = _produce(server.address, "busy", 200, 100)
        assert delivered == 200
        assert throttles and 0 < max(throttles) <= 1.0, throttles  # seconds, bounded: 1 window
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": server.address})
        admin.create_topics([NewTopic("quota-empty", 1, 1)])["quota-empty"].result(30)

        def poll(client_id: str, seconds: float) -> list[float]:
            polls: list[float] = []
            c = ck.Consumer({"bootstrap.servers": server.address, "client.id": client_id,
                             "group.id": "g-poller", "fetch.wait.max.ms": 300,
                             "throttle_cb": lambda ev: polls.append(ev.throttle_time)})
            try:
                c.assign([ck.TopicPartition("quota-empty", 0, ck.OFFSET_END)])
                deadline = time.monotonic() + seconds
                while time.monotonic() < deadline:
                    c.poll(0.2)
            finally:
                c.close()
            return polls

        # (first, another client's FindCoordinator creates __consumer_offsets: tens of ms of
        # handler time that would count against the poller)
        poll("warm-up", 1)
        polls = poll("poller", 4)
        assert not any(polls), polls
        fetches = server.broker.request_metrics["Fetch"][0]
        assert fetches >= 5  # (it did long-poll: several fetches of ~300 ms)
    finally:
        server.stop()


def test_timed_await_counts_only_the_coroutines_own_steps() -> None:
    import asyncio

    from kafkalog.server.connection import _TimedAwait

    async def handler(fail: bool) -> str:
        t = time.perf_counter()
        while time.perf_counter() - t < 0.02:  # 20 ms of work
            pass
        await asyncio.sleep(0.3)                 # a long poll's wait
        if fail:
            raise ValueError("refused")
        return "done"

    async def main() -> tuple[str, int]:
        timed = _TimedAwait(handler(False))
        value = await timed
        with pytest.raises(ValueError, match="refused"):
            await _TimedAwait(handler(True))
        task = asyncio.ensure_future(_wrap(handler(False)))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return value, timed.ns

    async def _wrap(coro: Any) -> Any:
        return await _TimedAwait(coro)

    value, ns = asyncio.run(main())
    assert value == "done"
    assert 0.015e9 < ns < 0.25e9, ns
