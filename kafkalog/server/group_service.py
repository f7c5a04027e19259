"""Drives the sans-IO group coordinator (:mod:`kafkalog.groups`) from the event loop.

:class:`kafkalog.groups.GroupCoordinator` answers requests as method calls, returns a handle for
JoinGroup/SyncGroup (their responses wait for the other members), hands completed responses out
through ``take_responses()``, and runs its timers on ``tick()`` at ``next_deadline()``.
:class:`GroupService` is the I/O around it, as Kafka's ``GroupCoordinatorService`` +
``CoordinatorRuntime`` + the delayed-operation purgatory are around its shards:

* a delayed call gets an asyncio future under its handle; every call is followed by a drain of
  the completed responses into their futures (a JoinGroup often completes the *other* members'
  JoinGroups);
* one timer task sleeps until ``next_deadline()`` (re-armed after every call, which may move
  it), ticks, drains;
* the coordinator is created on first use (that creates ``__consumer_offsets`` with
  ``offsets.topic.num.partitions`` partitions, as Kafka creates it on the first FindCoordinator)
  or at start when the topic already exists, so that the groups stored there resume and their
  timers run;
* topic partition counts and ids are fed to it at creation and after every topic
  creation/deletion (``update_metadata``); transaction markers written into
  ``__consumer_offsets`` by the transaction coordinator are replayed
  (``on_transaction_markers``).

Threads: everything runs on the server's loop thread.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from .broker import OFFSETS_TOPIC, Broker

__all__ = ["GroupService"]

logger = logging.getLogger("kafkalog.server")


class GroupService:
    """The group coordinator of a :class:`~kafkalog.server.broker.Broker` (see the module
    docstring)."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self._coordinator: Any = None
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self._rearm: asyncio.Event | None = None
        if broker.partitions_of(OFFSETS_TOPIC):
            _ = self.coordinator  # resume the stored groups now (their timers must run)

    # -- the coordinator -----------------------------------------------------------------------

    @property
    def coordinator(self) -> Any:
        """The :class:`kafkalog.groups.GroupCoordinator` (created on first use)."""
        if self._coordinator is None:
            from ..groups import GroupCoordinator, GroupMetadataManager
            from ..groups.config import GroupConfig

            c = self.broker.config
            config = GroupConfig.from_properties({
                "offsets.topic.num.partitions": str(c.offsets_topic_num_partitions),
                "offsets.topic.segment.bytes": str(c.internal_topic_segment_bytes),
                "group.initial.rebalance.delay.ms": str(c.group_initial_rebalance_delay_ms),
                "group.min.session.timeout.ms": str(c.group_min_session_timeout_ms),
                "group.max.session.timeout.ms": str(c.group_max_session_timeout_ms),
                "group.consumer.session.timeout.ms": str(c.group_consumer_session_timeout_ms),
                "group.consumer.heartbeat.interval.ms":
                    str(c.group_consumer_heartbeat_interval_ms),
                "group.consumer.migration.policy": c.group_consumer_migration_policy,
            })
            manager = GroupMetadataManager(self.broker.log_dir, config=config,
                                           clock=self.broker.clock)
            self._coordinator = GroupCoordinator(manager, clock=self.broker.clock,
                                                 config=config)
            store = self.broker.group_configs
            if store is not None:  # consumer.* group configs (kafka-configs.sh, groups)
                self._coordinator.group_overrides = store.overrides
            self._coordinator.update_metadata(*self._topics())
            self._kick()
        return self._coordinator

    def partition_for(self, group_id: str) -> int:
        """The group's ``__consumer_offsets`` partition."""
        from ..groups import offsets_partition

        return int(offsets_partition(group_id, self.broker.config.offsets_topic_num_partitions))

    def _topics(self) -> tuple[dict[str, int], dict[str, str],
                               dict[str, list[tuple[str, ...]]] | None]:
        """Partition counts, topic ids (Kafka's string form) and replica racks per partition
        (this broker's ``broker.rack``, else none) of every topic."""
        from ..decoders.message import uuid_to_str

        counts = self.broker.partition_counts()
        rack = self.broker.config.broker_rack
        return (counts, {t: uuid_to_str(self.broker.topic_id(t).to_bytes()) for t in counts},
                {t: [(rack,)] * n for t, n in counts.items()} if rack else None)

    def group_type(self, group_id: str) -> str | None:
        """``"consumer"``, ``"streams"`` or ``"classic"`` when a group of that type uses
        ``group_id`` (a share group may not take it), else None."""
        c = self._coordinator
        if c is None:
            return None
        if c.manager.consumer_group(group_id) is not None:
            return "consumer"
        if c.manager.streams_group(group_id) is not None:
            return "streams"
        if c.group(group_id) is not None or c.manager.has_group(group_id):
            return "classic"
        return None

    # -- calls ---------------------------------------------------------------------------------

    def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``fn(coordinator, *args, **kwargs)`` for an immediate response; completed delayed
        responses are drained and the timer re-armed."""
        try:
            return fn(self.coordinator, *args, **kwargs)
        finally:
            self._drain()
            self._kick()

    async def call_delayed(self, fn: Callable[..., int], *args: Any, **kwargs: Any) -> Any:
        """``fn`` returns a handle (JoinGroup, SyncGroup): wait for its response."""
        handle = fn(self.coordinator, *args, **kwargs)
        fut = asyncio.get_running_loop().create_future()
        self._waiting[handle] = fut
        self._drain()
        self._kick()
        try:
            return await fut
        finally:
            self._waiting.pop(handle, None)

    def _drain(self) -> None:
        if self._coordinator is None:
            return
        for handle, response in self._coordinator.take_responses():
            fut = self._waiting.pop(handle, None)
            if fut is not None and not fut.done():
                fut.set_result(response)

    def _kick(self) -> None:
        if self._rearm is not None:
            self._rearm.set()

    # -- events from the broker ----------------------------------------------------------------

    def topics_changed(self) -> None:
        """Topic created or deleted: new partition counts (a subscribed group rebalances)."""
        if self._coordinator is not None:
            self.call(lambda c: c.update_metadata(*self._topics()))

    def offsets_marker_written(self, topic: str, partition: int, producer_id: int,
                               commit: bool) -> None:
        """A transaction marker landed in ``__consumer_offsets``: pending transactional
        offsets become visible (COMMIT) or are dropped (ABORT)."""
        if self._coordinator is not None:
            self.call(lambda c: c.on_transaction_markers())

    # -- timers --------------------------------------------------------------------------------

    async def run_timers(self) -> None:
        """Tick the coordinator at its deadlines until cancelled."""
        self._rearm = asyncio.Event()
        clock = self.broker.clock
        while True:
            deadline = None if self._coordinator is None else self._coordinator.next_deadline()
            timeout = None if deadline is None else max(0.0, (deadline - clock.milliseconds())
                                                        / 1000)
            self._rearm.clear()
            if timeout is None or timeout > 0:
                # asyncio.timeout, not wait_for: Python 3.11's wait_for can swallow a
                # cancellation that races with the event (the server's shutdown would hang)
                try:
                    async with asyncio.timeout(timeout):
                        await self._rearm.wait()
                    continue  # re-armed: the deadline may have moved
                except TimeoutError:
                    pass
            try:
                self._coordinator.tick()
            except Exception:
                logger.exception("group coordinator timer failed")
            self._drain()

    def shutdown(self) -> None:
        """Fail the waiting calls (their connections are closing)."""
        for fut in self._waiting.values():
            if not fut.done():
                fut.cancel()
        self._waiting.clear()
