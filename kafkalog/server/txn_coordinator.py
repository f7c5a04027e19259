"""The transaction coordinator: transactional ids, producer epochs, and the markers that end
transactions.

A port of Kafka's ``TransactionCoordinator`` + ``TransactionMetadata`` +
``TransactionStateManager`` (core/src/main/scala/kafka/coordinator/transaction/, 3.9) for one
node, with the engine doing what ``TransactionMarkerChannelManager`` asks of partition leaders:

* **State per transactional id** (``TransactionMetadata``): producer id and epoch (and the
  previous ones, for retried epoch bumps), timeout, state (Kafka's ``TransactionState`` ids:
  Empty 0, Ongoing 1, PrepareCommit 2, PrepareAbort 3, CompleteCommit 4, CompleteAbort 5, Dead 6,
  PrepareEpochFence 7), the partitions of the open transaction, start and update times.
* **Durability.** Every transition is appended to ``__transaction_state`` partition
  ``abs(transactionalId.hashCode) % 50`` as Kafka's ``TransactionLogKey`` v0 /
  ``TransactionLogValue`` v0 record (:mod:`kafkalog.decoders.transaction_log`), so ``kafkalog
  dump-segments --transaction-log-decoder`` and a broker read it. At start the topic is replayed
  (the last record of each id wins) and a transaction caught between its ``Prepare*`` record and
  its ``Complete*`` record is completed (``loadTransactionsForTxnTopicPartition`` hands those to
  the marker channel).
* **InitProducerId** (``handleInitProducerId``/``prepareInitProducerIdTransit``): no
  transactional id: a fresh producer id, epoch 0 (idempotent producers); otherwise a new id's
  metadata, or an epoch bump of an existing one (a new producer id when the epoch is exhausted),
  KIP-360's expected id/epoch checks, ``CONCURRENT_TRANSACTIONS`` after fencing an ongoing
  transaction (aborted with a bumped epoch, so that the old producer is fenced).
* **AddPartitionsToTxn / AddOffsetsToTxn** (``handleAddPartitionsToTransaction``): the
  partitions join the open transaction (state Ongoing, start time set on the first).
* **EndTxn** (``endTransaction``): Ongoing -> PrepareCommit/PrepareAbort (logged) -> markers
  written to every partition of the transaction through
  :meth:`kafkalog.log.Log.commit_transaction` / ``abort_transaction`` (control batch,
  ``.txnindex`` entry for an abort, last stable offset moved) -> CompleteCommit/CompleteAbort
  (logged). Retries of a completed end answer NONE, contradictory ones ``INVALID_TXN_STATE``.
  Kafka answers the client once the Prepare record is durable and sends markers afterwards; here
  the markers are written before the answer (same outcome, no window where a retry sees
  ``CONCURRENT_TRANSACTIONS``).
* **Timeouts** (``abortTimedOutTransactions``, every
  ``transaction.abort.timed.out.transaction.cleanup.interval.ms``): an Ongoing transaction older
  than its timeout is aborted with a bumped epoch (the producer is fenced).

The coordinator epoch written into markers is the leader epoch of the transactional id's
``__transaction_state`` partition (Kafka's is the same: the partition's leader epoch).

Deviations: transactional ids are never expired (``transactional.id.expiration.ms``); KIP-890
part 2 (transaction version 2, produce v12+/EndTxn v5) is not served.

Threads: not thread-safe; every call runs on the server's loop thread.

Example
-------
>>> import tempfile
>>> from kafkalog.log_dir import LogDir
>>> from kafkalog.server.broker import Broker, ServerConfig
>>> config = ServerConfig(transaction_state_num_partitions=1)
>>> broker = Broker(LogDir.open(tempfile.mkdtemp()), config)
>>> tc = TransactionCoordinator(broker)
>>> code, pid, epoch = tc.init_producer_id(None, 60000)
>>> int(code), pid, epoch
(0, 0, 0)
>>> int(tc.init_producer_id("tx", 60000)[0]), tc.state_of("tx").name
(0, 'EMPTY')
>>> broker.close()
"""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import logging
import re
from collections.abc import Iterable
from typing import Any

from ..decoders import transaction_log
from ..errors import KafkaLogError
from ..records.record import Record
from ..tools.render import java_string_hash
from .broker import OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC
from .producer_ids import ProducerIdManager
from .protocol import ErrorCode

__all__ = ["TransactionState", "TransactionMetadata", "TransactionCoordinator",
           "partition_for"]

logger = logging.getLogger("kafkalog.server")

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
SHORT_MAX = 32767
TopicPartition = tuple[str, int]


class TransactionState(enum.IntEnum):
    """Kafka's ``TransactionState`` ids (as stored in ``TransactionLogValue``)."""

    EMPTY = 0
    ONGOING = 1
    PREPARE_COMMIT = 2
    PREPARE_ABORT = 3
    COMPLETE_COMMIT = 4
    COMPLETE_ABORT = 5
    DEAD = 6
    PREPARE_EPOCH_FENCE = 7

    @property
    def kafka_name(self) -> str:
        """The name Kafka's admin APIs use (``TransactionState.name``: ``"Ongoing"``, …)."""
        return _STATE_NAMES[self]

    @classmethod
    def from_kafka_name(cls, name: str) -> TransactionState | None:
        """``TransactionState.fromName``: None for a name Kafka does not know."""
        return _STATES_BY_NAME.get(name)


_STATE_NAMES = {
    TransactionState.EMPTY: "Empty", TransactionState.ONGOING: "Ongoing",
    TransactionState.PREPARE_COMMIT: "PrepareCommit",
    TransactionState.PREPARE_ABORT: "PrepareAbort",
    TransactionState.COMPLETE_COMMIT: "CompleteCommit",
    TransactionState.COMPLETE_ABORT: "CompleteAbort", TransactionState.DEAD: "Dead",
    TransactionState.PREPARE_EPOCH_FENCE: "PrepareEpochFence",
}
_STATES_BY_NAME = {v: k for k, v in _STATE_NAMES.items()}


@dataclasses.dataclass
class TransactionMetadata:
    """One transactional id's state (Kafka's ``TransactionMetadata``)."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: TransactionState
    partitions: set[TopicPartition] = dataclasses.field(default_factory=set)
    start_ms: int = -1
    last_update_ms: int = -1
    last_producer_id: int = NO_PRODUCER_ID
    last_producer_epoch: int = NO_PRODUCER_EPOCH

    @property
    def epoch_exhausted(self) -> bool:
        """``isEpochExhausted``: no epoch bump is left for this producer id."""
        return self.producer_epoch >= SHORT_MAX - 1


def partition_for(transactional_id: str, partitions: int) -> int:
    """``TransactionStateManager.partitionFor``: ``Utils.abs(id.hashCode) % partitions``
    (``Utils.abs`` maps Integer.MIN_VALUE to 0).

    >>> partition_for("my-txn", 50)
    45
    """
    h = java_string_hash(transactional_id)
    return (0 if h == -(2**31) else abs(h)) % partitions


class TransactionCoordinator:
    """See the module docstring.

    Parameters
    ----------
    broker:
        The :class:`~kafkalog.server.broker.Broker` (logs, clock, config, fetch wake-ups).
    """

    def __init__(self, broker: Any) -> None:
        self.broker = broker
        self.clock = broker.clock
        self.config = broker.config
        self._txns: dict[str, TransactionMetadata] = {}
        #: called as hook(topic, partition, producer_id, commit) after a marker is written to a
        #: ``__consumer_offsets`` partition (the group coordinator materializes or drops the
        #: transaction's offsets)
        self.offsets_marker_hook: Any = None
        self._load()
        self.producer_ids = ProducerIdManager(broker.log_dir.root, floor=self._max_producer_id())

    # -- loading -----------------------------------------------------------------------------

    def _load(self) -> None:
        broker = self.broker
        for p in broker.partitions_of(TRANSACTION_STATE_TOPIC):
            log = broker.log(TRANSACTION_STATE_TOPIC, p)
            txns, skipped = transaction_log.replay((r.offset, r.key, r.value)
                                                   for r in log.records())
            for offset, why in skipped:
                logger.warning("%s-%d: offset %s: unreadable transaction log record: %s",
                               TRANSACTION_STATE_TOPIC, p, offset, why)
            for txn_id, v in txns.items():
                self._txns[txn_id] = TransactionMetadata(
                    txn_id, v["producerId"], v["producerEpoch"], v["transactionTimeoutMs"],
                    TransactionState(v["transactionStatus"]), set(v["partitions"]),
                    v["transactionStartTimestampMs"], v["transactionLastUpdateTimestampMs"],
                    v.get("previousProducerId", -1))
        for meta in list(self._txns.values()):
            if meta.state in (TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT):
                logger.info("completing transaction %r (%s) found at load",
                            meta.transactional_id, meta.state.name)
                self._write_markers_and_complete(meta)

    def _max_producer_id(self) -> int:
        found = max((m.producer_id for m in self._txns.values()), default=-1)
        for topic, p in self.broker.log_dir.partitions():
            producers = self.broker.log(topic, p).producer_state.producers
            if producers:
                found = max(found, max(producers))
        return found

    # -- persistence ---------------------------------------------------------------------------

    def _partition(self, transactional_id: str) -> int:
        return partition_for(transactional_id, self.config.transaction_state_num_partitions)

    def coordinator_epoch(self, transactional_id: str) -> int:
        """The leader epoch of the id's ``__transaction_state`` partition."""
        self.broker.ensure_internal_topic(TRANSACTION_STATE_TOPIC)
        return self.broker.leader_epoch(TRANSACTION_STATE_TOPIC,
                                        self._partition(transactional_id))

    def _persist(self, meta: TransactionMetadata) -> None:
        """``appendTransactionToLog``: the metadata as one ``__transaction_state`` record."""
        self.broker.ensure_internal_topic(TRANSACTION_STATE_TOPIC)
        parts: list[dict[str, Any]] | None = None
        if meta.state != TransactionState.EMPTY:
            by_topic: dict[str, list[int]] = {}
            for t, p in sorted(meta.partitions):
                by_topic.setdefault(t, []).append(p)
            parts = [{"topic": t, "partitionIds": ps} for t, ps in by_topic.items()]
        key, value = transaction_log.encode_record(
            {"transactionalId": meta.transactional_id},
            {"producerId": meta.producer_id, "producerEpoch": meta.producer_epoch,
             "transactionTimeoutMs": meta.timeout_ms, "transactionStatus": int(meta.state),
             "transactionPartitions": parts,
             "transactionLastUpdateTimestampMs": meta.last_update_ms,
             "transactionStartTimestampMs": meta.start_ms}, version=0)
        p = self._partition(meta.transactional_id)
        log = self.broker.log(TRANSACTION_STATE_TOPIC, p)
        log.append([Record(key, value, meta.last_update_ms)],
                   partition_leader_epoch=self.broker.leader_epoch(TRANSACTION_STATE_TOPIC, p))
        self.broker.notify((TRANSACTION_STATE_TOPIC, p))

    # -- queries -------------------------------------------------------------------------------

    def state_of(self, transactional_id: str) -> TransactionState | None:
        """The id's state (None when unknown)."""
        meta = self._txns.get(transactional_id)
        return None if meta is None else meta.state

    def list_transactions(self, states: Iterable[str] = (), producer_ids: Iterable[int] = (),
                          duration_ms: int = -1, pattern: str | None = None,
                          now: int | None = None) -> tuple[list[TransactionMetadata], list[str]]:
        """``TransactionStateManager.listTransactionStates``: the transactions passing every
        filter given (state names, producer ids, running longer than ``duration_ms`` when that
        is >= 0, transactional id matching the regular expression ``pattern`` in full when
        that is non-empty), Dead ones never; and the state names Kafka does not know (they
        match nothing). Sorted by transactional id.

        Raises
        ------
        re.error
            ``pattern`` is not a regular expression (Kafka: ``INVALID_REGULAR_EXPRESSION``).
        """
        wanted_states, unknown = set(), []
        for name in states:
            st = TransactionState.from_kafka_name(name)
            if st is None:
                unknown.append(name)
            else:
                wanted_states.add(st)
        ids = set(producer_ids)
        regex = re.compile(pattern) if pattern else None
        now = self.clock.milliseconds() if now is None else now
        out = []
        for tid in sorted(self._txns):
            meta = self._txns[tid]
            if meta.state == TransactionState.DEAD:
                continue
            if ids and meta.producer_id not in ids:
                continue
            if (states and meta.state not in wanted_states):
                continue
            if duration_ms >= 0 and now - meta.start_ms <= duration_ms:
                continue
            if regex is not None and regex.fullmatch(tid) is None:
                continue
            out.append(meta)
        return out, unknown

    def metadata(self, transactional_id: str) -> TransactionMetadata | None:
        """The id's metadata (None when unknown); do not mutate."""
        return self._txns.get(transactional_id)

    def verify_partition(self, transactional_id: str, producer_id: int, producer_epoch: int,
                         topic: str, partition: int) -> int:
        """KIP-890 part 1 (``handleVerifyPartitionsInTransaction``): NONE when the partition is
        in the id's open transaction under this producer id and epoch."""
        meta = self._txns.get(transactional_id)
        if meta is None or meta.producer_id != producer_id:
            return ErrorCode.invalid_producer_id_mapping
        if meta.producer_epoch != producer_epoch:
            return ErrorCode.invalid_producer_epoch
        if meta.state != TransactionState.ONGOING or (topic, partition) not in meta.partitions:
            return ErrorCode.invalid_txn_state
        return ErrorCode.none

    # -- InitProducerId ------------------------------------------------------------------------

    def init_producer_id(self, transactional_id: str | None, timeout_ms: int,
                         expected_producer_id: int = NO_PRODUCER_ID,
                         expected_epoch: int = NO_PRODUCER_EPOCH) -> tuple[int, int, int]:
        """``(error code, producer id, producer epoch)`` (``handleInitProducerId``)."""
        if transactional_id is None:
            return ErrorCode.none, self.producer_ids.generate(), 0
        if transactional_id == "":
            return ErrorCode.invalid_request, NO_PRODUCER_ID, NO_PRODUCER_EPOCH
        if not 0 < timeout_ms <= self.config.transaction_max_timeout_ms:
            return ErrorCode.invalid_transaction_timeout, NO_PRODUCER_ID, NO_PRODUCER_EPOCH
        now = self.clock.milliseconds()
        expected = expected_producer_id >= 0
        meta = self._txns.get(transactional_id)
        if meta is None:
            meta = TransactionMetadata(transactional_id, self.producer_ids.generate(),
                                       NO_PRODUCER_EPOCH, timeout_ms, TransactionState.EMPTY,
                                       last_update_ms=now)
            self._txns[transactional_id] = meta
        if expected and not (
                meta.producer_epoch == NO_PRODUCER_EPOCH
                or expected_producer_id == meta.producer_id
                or (expected_producer_id == meta.last_producer_id
                    and expected_epoch >= SHORT_MAX - 1)):
            return ErrorCode.producer_fenced, NO_PRODUCER_ID, NO_PRODUCER_EPOCH
        if meta.state in (TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT):
            return ErrorCode.concurrent_transactions, NO_PRODUCER_ID, NO_PRODUCER_EPOCH
        if meta.state == TransactionState.ONGOING:
            # prepareFenceProducerEpoch, then abort with the bumped epoch; the client retries
            code = self._fence_and_abort(meta)
            return (code or ErrorCode.concurrent_transactions), NO_PRODUCER_ID, \
                NO_PRODUCER_EPOCH
        if meta.epoch_exhausted and (not expected or expected_epoch == meta.producer_epoch):
            # prepareProducerIdRotation
            meta.last_producer_id = meta.producer_id if expected else NO_PRODUCER_ID
            meta.last_producer_epoch = meta.producer_epoch if expected else NO_PRODUCER_EPOCH
            meta.producer_id, meta.producer_epoch = self.producer_ids.generate(), 0
        else:
            # prepareIncrementProducerEpoch
            bumped = meta.producer_epoch + 1
            if not expected:
                meta.producer_epoch, meta.last_producer_epoch = bumped, NO_PRODUCER_EPOCH
            elif meta.producer_epoch == NO_PRODUCER_EPOCH or expected_epoch == meta.producer_epoch:
                meta.producer_epoch, meta.last_producer_epoch = bumped, meta.producer_epoch
            elif expected_epoch != meta.last_producer_epoch:
                return ErrorCode.producer_fenced, NO_PRODUCER_ID, NO_PRODUCER_EPOCH
        meta.timeout_ms = timeout_ms
        meta.state = TransactionState.EMPTY
        meta.partitions = set()
        meta.start_ms = -1
        meta.last_update_ms = now
        self._persist(meta)
        logger.info("initialized transactional id %r with producer id %d epoch %d",
                    transactional_id, meta.producer_id, meta.producer_epoch)
        return ErrorCode.none, meta.producer_id, meta.producer_epoch

    # -- AddPartitionsToTxn / AddOffsetsToTxn ------------------------------------------------------

    def _check_producer(self, meta: TransactionMetadata | None, producer_id: int,
                        producer_epoch: int) -> int:
        if meta is None or meta.producer_id != producer_id:
            return ErrorCode.invalid_producer_id_mapping
        if meta.producer_epoch != producer_epoch:
            return ErrorCode.producer_fenced
        if meta.state in (TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT):
            return ErrorCode.concurrent_transactions
        return ErrorCode.none

    def add_partitions(self, transactional_id: str, producer_id: int, producer_epoch: int,
                       partitions: set[TopicPartition]) -> int:
        """Error code of ``handleAddPartitionsToTransaction`` for ``partitions`` (all exist:
        the handler answers unknown ones itself)."""
        if not transactional_id:
            return ErrorCode.invalid_request
        meta = self._txns.get(transactional_id)
        code = self._check_producer(meta, producer_id, producer_epoch)
        if code:
            return code
        assert meta is not None
        if meta.state == TransactionState.ONGOING and partitions <= meta.partitions:
            return ErrorCode.none
        now = self.clock.milliseconds()
        if meta.state != TransactionState.ONGOING:  # prepareAddPartitions from Empty/Complete*
            meta.start_ms = now
        meta.state = TransactionState.ONGOING
        meta.partitions |= partitions
        meta.last_update_ms = now
        self._persist(meta)
        return ErrorCode.none

    def add_offsets(self, transactional_id: str, producer_id: int, producer_epoch: int,
                    offsets_partition: int) -> int:
        """``AddOffsetsToTxn``: the group's ``__consumer_offsets`` partition joins the
        transaction (KafkaApis.handleAddOffsetsToTxnRequest)."""
        self.broker.ensure_internal_topic(OFFSETS_TOPIC)
        return self.add_partitions(transactional_id, producer_id, producer_epoch,
                                   {(OFFSETS_TOPIC, offsets_partition)})

    # -- EndTxn ----------------------------------------------------------------------------------

    def end_transaction(self, transactional_id: str, producer_id: int, producer_epoch: int,
                        commit: bool, *, from_client: bool = True) -> int:
        """Error code of ``endTransaction`` (markers written before it returns)."""
        if not transactional_id:
            return ErrorCode.invalid_request
        meta = self._txns.get(transactional_id)
        if meta is None or meta.producer_id != producer_id:
            return ErrorCode.invalid_producer_id_mapping
        if (from_client and producer_epoch != meta.producer_epoch) \
                or producer_epoch < meta.producer_epoch:
            return ErrorCode.producer_fenced
        s = meta.state
        if s == TransactionState.ONGOING:
            meta.state = (TransactionState.PREPARE_COMMIT if commit
                          else TransactionState.PREPARE_ABORT)
            meta.producer_epoch = producer_epoch
            meta.last_update_ms = self.clock.milliseconds()
            self._persist(meta)
            self._write_markers_and_complete(meta)
            return ErrorCode.none
        if (s == TransactionState.COMPLETE_COMMIT and commit) \
                or (s == TransactionState.COMPLETE_ABORT and not commit):
            return ErrorCode.none
        if (s == TransactionState.PREPARE_COMMIT and commit) \
                or (s == TransactionState.PREPARE_ABORT and not commit):
            return ErrorCode.concurrent_transactions
        logger.debug("transactional id %r is %s: end with commit=%s refused", transactional_id,
                     s.name, commit)
        return ErrorCode.invalid_txn_state

    def _write_markers_and_complete(self, meta: TransactionMetadata) -> None:
        """``TransactionMarkerChannelManager`` + ``prepareComplete``: one marker per partition,
        then the Complete* record."""
        commit = meta.state == TransactionState.PREPARE_COMMIT
        coordinator_epoch = self.coordinator_epoch(meta.transactional_id)
        for topic, p in sorted(meta.partitions):
            try:
                log = self.broker.log(topic, p)
            except KafkaLogError:
                # Kafka: markers for a deleted partition are dropped (removeMarkersForTxnTopic...)
                logger.info("transaction %r: partition %s-%d is gone, no marker written",
                            meta.transactional_id, topic, p)
                continue
            write = log.commit_transaction if commit else log.abort_transaction
            try:
                write(meta.producer_id, meta.producer_epoch, coordinator_epoch)
            except KafkaLogError as e:
                # Kafka retries markers until they land; the engine's refusals here are
                # permanent (a fenced coordinator epoch or producer epoch): log and go on
                logger.warning("transaction %r: marker to %s-%d refused: %s",
                               meta.transactional_id, topic, p, e)
                continue
            self.broker.notify((topic, p))
            if topic == OFFSETS_TOPIC and self.offsets_marker_hook is not None:
                self.offsets_marker_hook(topic, p, meta.producer_id, commit)
        meta.state = (TransactionState.COMPLETE_COMMIT if commit
                      else TransactionState.COMPLETE_ABORT)
        meta.partitions = set()
        meta.start_ms = -1
        meta.last_update_ms = self.clock.milliseconds()
        self._persist(meta)

    def _fence_and_abort(self, meta: TransactionMetadata) -> int:
        """``prepareFenceProducerEpoch`` + ``endTransaction(ABORT, isFromClient=false)``."""
        if meta.producer_epoch >= SHORT_MAX:
            logger.error("transactional id %r: cannot fence producer epoch %d",
                         meta.transactional_id, meta.producer_epoch)
            return ErrorCode.unknown_server_error
        return self.end_transaction(meta.transactional_id, meta.producer_id,
                                    meta.producer_epoch + 1, False, from_client=False)

    # -- timers --------------------------------------------------------------------------------

    def abort_timed_out(self, now: int | None = None) -> list[str]:
        """``abortTimedOutTransactions``: abort (fencing the producer) every Ongoing
        transaction older than its timeout; returns their ids."""
        now = self.clock.milliseconds() if now is None else now
        aborted = []
        for meta in list(self._txns.values()):
            if meta.state == TransactionState.ONGOING and meta.start_ms >= 0 \
                    and meta.start_ms + meta.timeout_ms < now:
                logger.info("aborting transaction %r of producer %d: timed out after %d ms",
                            meta.transactional_id, meta.producer_id, meta.timeout_ms)
                self._fence_and_abort(meta)
                aborted.append(meta.transactional_id)
        return aborted

    async def run_timers(self) -> None:
        """The timed-out transaction sweep, every
        ``transaction_abort_timed_out_interval_ms``."""
        interval = self.config.transaction_abort_timed_out_interval_ms / 1000
        while True:
            await asyncio.sleep(interval)
            try:
                self.abort_timed_out()
            except Exception:
                logger.exception("transaction timeout sweep failed")
