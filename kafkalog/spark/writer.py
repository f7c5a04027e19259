"""Arrow batch writer: DataFrame rows -> segment files under ``path/<topic>-<partition>``.

Columns (Spark's Kafka sink): ``value`` (binary or string, required), ``key`` (optional),
``topic`` (required unless the ``topic`` option is set; the option wins), ``partition``
(optional int; absent or null means partition 0: files have no partition count to hash into),
``timestamp`` (optional; null or absent means the time of writing), ``headers`` (optional
``array<struct<key:string,value:binary>>``). Other columns (``offset``, ``timestampType`` of a
DataFrame read from ``kafkalog``) are ignored: offsets are assigned by the log, from its log
end offset.

Options: ``compression`` (none, gzip, snappy, lz4, zstd), any Kafka topic config with a dot
(``segment.bytes``, ``index.interval.bytes``, ``message.timestamp.type``...), ``topic``,
``recordsPerBatch`` (records per Kafka batch, default 1000, lowered automatically so a batch
fits ``max.message.bytes`` and ``segment.bytes``).

Protocol
--------
1. Every Spark task writes the rows it receives through :class:`kafkalog.log.Log` into a private
   staging directory ``path/_staging/<write id>/task-<partition>-<attempt>/<topic>-<n>/`` (a
   fresh log starting at offset 0) and returns the list of topic-partitions it wrote.
2. The driver's ``commit`` checks that no topic-partition came from two tasks (that would
   interleave offsets from unrelated tasks: repartition first), then publishes each one:
   a new partition directory is **renamed** into place (atomic per partition); an existing one
   (``mode("append")``) gets the staged batches appended through ``Log.append_batches`` after
   their base offsets are shifted to its log end offset (the v2 CRC does not cover
   ``baseOffset``, so batches are not re-encoded). ``mode("overwrite")`` first moves every
   existing partition directory of ``path`` aside and deletes it once the new ones are in place.
3. ``abort`` (and a failed ``commit``) delete ``path/_staging/<write id>`` whole: failed tasks
   report ``None`` instead of a message, so cleanup goes by write id, not by messages.

Names and locks: a row's ``topic`` (and the ``topic`` option) becomes a directory only through
:func:`kafkalog.files.partition_dir`: Kafka's rule (``[a-zA-Z0-9._-]{1,249}``, not ``.``/``..``),
resolved inside the staging directory and inside ``path`` (``../x``, ``/abs`` or a symlinked
``<topic>-<n>`` pointing out of ``path`` fail the task or the commit with
:class:`~kafkalog.errors.InvalidTopicError`, nothing created outside). Publishing takes the lock
of every existing partition directory it appends to or moves aside, all before the first
change: a directory a writer holds refuses the commit with
:class:`~kafkalog.errors.LogLockedError`.

Use ``.mode("append")`` or ``.mode("overwrite")`` (PySpark rejects the default mode for Python
data sources), and give each topic-partition to one task::

    (df.repartition("topic", "partition")
       .sortWithinPartitions("topic", "partition")
       .write.format("kafkalog").mode("append")
       .option("compression", "zstd").option("segment.bytes", str(256 << 20))
       .save("/data/kafka-copy"))
"""

from __future__ import annotations

import os
import shutil
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage

from kafkalog import files
from kafkalog.errors import ConfigError, KafkaLogError

from .options import WriteOptions

__all__ = ["KafkaLogWriter", "KafkaLogCommitMessage", "STAGING_DIR"]

STAGING_DIR = "_staging"


@dataclass
class KafkaLogCommitMessage(WriterCommitMessage):
    """What one task wrote: its staging directory and ``(topic, partition, records)``."""

    task_dir: str
    task: int
    written: list[tuple[str, int, int]] = field(default_factory=list)


def _as_binary(col: Any) -> Any:
    import pyarrow as pa

    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        return col.cast(pa.binary())
    if pa.types.is_large_binary(col.type):
        return col.cast(pa.binary())
    return col


def _records_per_batch(table: Any, config: Any, wanted: int) -> int:
    """``recordsPerBatch``, lowered so one batch fits ``max.message.bytes`` and
    ``segment.bytes`` (both bound a single batch) with room to spare, from the mean record size
    before compression (compression only shrinks the bound's use)."""
    n = table.num_rows
    if n == 0:
        return wanted
    size = sum(table.column(c).nbytes for c in table.column_names) / n + 32
    limit = 0.8 * min(config.max_message_bytes, config.segment_bytes)
    return max(1, min(wanted, int(limit // size)))


def _shift_base_offsets(data: bytearray, delta: int) -> None:
    """Add ``delta`` to every v2 batch's baseOffset in place (outside the CRC)."""
    from kafkalog.native.scan import scan_entries

    buf = np.frombuffer(data, np.uint8)
    sc = scan_entries(buf)
    if np.any(sc["magics"] != 2):
        raise KafkaLogError("staged data holds legacy entries (expected only v2 batches)")
    pos = sc["positions"]
    view = np.ndarray((len(data),), np.uint8, buffer=data)
    for p, b in zip(pos.tolist(), sc["base_offsets"].tolist()):
        view[p:p + 8] = np.frombuffer(int(b + delta).to_bytes(8, "big", signed=True), np.uint8)


class KafkaLogWriter(DataSourceArrowWriter):
    """``df.write.format("kafkalog")``: see the module documentation."""

    def __init__(self, options: dict[str, str], schema: Any, overwrite: bool) -> None:
        self.options = WriteOptions.parse(options)
        self.overwrite = overwrite
        self.write_id = f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:12]}"
        names = set(schema.names)
        if "value" not in names:
            raise ConfigError("writing to kafkalog needs a 'value' column (binary or string)")
        if "topic" not in names and self.options.topic is None:
            raise ConfigError("writing to kafkalog needs a 'topic' column or the 'topic' option")
        if self.options.topic is not None:
            files.validate_topic_name(self.options.topic)  # Kafka's rule, before any task runs
        from kafkalog.config import LogConfig

        self._config_props = dict(self.options.log_config)
        LogConfig.from_properties(self._config_props)  # validate on the driver

    # -- paths ------------------------------------------------------------------------------

    @property
    def staging_root(self) -> Path:
        return Path(self.options.path) / STAGING_DIR / self.write_id

    # -- executor side ------------------------------------------------------------------------

    def write(self, iterator: Any) -> KafkaLogCommitMessage:
        import pyarrow as pa
        import pyarrow.compute as pc
        from pyspark import TaskContext

        from kafkalog.config import LogConfig
        from kafkalog.log import Log

        ctx = TaskContext.get()
        part = ctx.partitionId() if ctx else 0
        attempt = ctx.attemptNumber() if ctx else 0
        task_dir = self.staging_root / f"task-{part:05d}-{attempt}"
        task_dir.mkdir(parents=True, exist_ok=True)
        config = LogConfig.from_properties(self._config_props)
        logs: dict[tuple[str, int], Any] = {}
        counts: dict[tuple[str, int], int] = {}
        opts = self.options
        try:
            for batch in iterator:
                n = batch.num_rows
                if n == 0:
                    continue
                names = batch.schema.names
                if opts.topic is not None:
                    topics = np.full(n, opts.topic, dtype=object)
                else:
                    tcol = batch.column(names.index("topic"))
                    if tcol.null_count:
                        raise ConfigError("a row has a null topic (set the topic column or "
                                          "the 'topic' option)")
                    topics = np.asarray(tcol.to_numpy(zero_copy_only=False), dtype=object)
                if "partition" in names:
                    pcol = batch.column(names.index("partition"))
                    parts = np.asarray(pc.fill_null(pcol, 0).to_numpy(), dtype=np.int64)
                else:
                    parts = np.zeros(n, dtype=np.int64)
                cols = {"value": _as_binary(batch.column(names.index("value")))}
                if "key" in names:
                    cols["key"] = _as_binary(batch.column(names.index("key")))
                else:
                    cols["key"] = pa.nulls(n, pa.binary())
                now = int(time.time() * 1000)
                if "timestamp" in names:
                    ts = batch.column(names.index("timestamp"))
                    if pa.types.is_timestamp(ts.type):
                        ts = pc.divide(ts.cast(pa.timestamp("us", tz="UTC")).cast(pa.int64()),
                                       1000)
                    cols["timestamp"] = pc.fill_null(ts.cast(pa.int64()), now)
                else:
                    cols["timestamp"] = pa.array(np.full(n, now, np.int64))
                if "headers" in names:
                    cols["headers"] = batch.column(names.index("headers"))
                table = pa.table(cols)
                # one group per topic-partition present in this Arrow batch
                keys = np.char.add(topics.astype(str), np.char.add("\x00", parts.astype(str)))
                uniq, inverse = np.unique(keys, return_inverse=True)
                for g in range(len(uniq)):
                    rows = np.flatnonzero(inverse == g)
                    tp = (str(topics[rows[0]]), int(parts[rows[0]]))
                    if tp[1] < 0:
                        raise ConfigError(f"partition must be >= 0, found {tp[1]}")
                    log = logs.get(tp)
                    if log is None:
                        # a row's topic becomes a path only through Kafka's name rule, inside
                        # the task's staging directory (InvalidTopicError fails the task)
                        log = Log.open(files.partition_dir(task_dir, tp[0], tp[1]), config)
                        logs[tp] = log
                    sub = table if len(uniq) == 1 else table.take(pa.array(rows))
                    log.append(sub, compression=opts.compression,
                               records_per_batch=_records_per_batch(sub, config,
                                                                    opts.records_per_batch))
                    counts[tp] = counts.get(tp, 0) + len(rows)
        finally:
            for log in logs.values():
                log.close()
        return KafkaLogCommitMessage(
            task_dir=str(task_dir), task=part,
            written=[(t, p, c) for (t, p), c in sorted(counts.items())])

    # -- driver side --------------------------------------------------------------------------

    def commit(self, messages: list[KafkaLogCommitMessage | None]) -> None:
        try:
            self._publish([m for m in messages if m is not None])
        finally:
            self._cleanup()

    def abort(self, messages: list[KafkaLogCommitMessage | None]) -> None:
        self._cleanup()

    def _cleanup(self) -> None:
        shutil.rmtree(self.staging_root, ignore_errors=True)
        parent = self.staging_root.parent
        try:
            parent.rmdir()  # only when no other write is staging
        except OSError:
            pass

    def _publish(self, messages: list[KafkaLogCommitMessage]) -> None:
        from kafkalog.config import LogConfig

        owner: dict[tuple[str, int], int] = {}
        for m in messages:
            for t, p, _ in m.written:
                if (t, p) in owner and owner[(t, p)] != m.task:
                    raise KafkaLogError(
                        f"topic-partition {t}-{p} was written by Spark tasks {owner[(t, p)]} and "
                        f"{m.task}; nothing was published. Give each topic-partition to one "
                        "task: df.repartition('topic', 'partition')"
                    )
                owner[(t, p)] = m.task
        root = Path(self.options.path)
        root.mkdir(parents=True, exist_ok=True)
        # every destination first: Kafka's name rule, resolved inside the root (a symlinked
        # partition directory pointing out of it is refused) before anything moves
        moves = [(files.partition_dir(m.task_dir, t, p), files.partition_dir(root, t, p))
                 for m in messages for t, p, _ in m.written]
        trash = root / STAGING_DIR / f"{self.write_id}-replaced"
        if self.overwrite:
            # move every existing partition directory aside first; deleted after publishing.
            # Each is locked first (all or none): a directory a writer holds is refused with
            # LogLockedError and nothing moves.
            from kafkalog.lock import LOCK_FILE_NAME, acquire_all

            from .layout import discover_partitions

            existing = [Path(d) for _, _, d in discover_partitions([str(root)])]
            held = acquire_all([(d, LOCK_FILE_NAME) for d in existing])
            try:
                trash.mkdir(parents=True, exist_ok=True)
                for d in existing:
                    os.rename(d, trash / d.name)
            finally:
                for lock in held:
                    lock.release()
        config = LogConfig.from_properties(self._config_props)
        # appends into existing partition directories go through their locks, all taken
        # before the first one is written (a held directory refuses the whole commit)
        from kafkalog.lock import LOCK_FILE_NAME, acquire_all

        appends = [final for _, final in moves if final.exists()]
        held = dict(zip(appends, acquire_all([(d, LOCK_FILE_NAME) for d in appends])))
        try:
            for staged, final in moves:
                if final in held:
                    self._append_existing(staged, final, config, held[final])
                else:
                    os.rename(staged, final)
        finally:
            for lock in held.values():
                lock.release()
        if self.overwrite:
            shutil.rmtree(trash, ignore_errors=True)

    @staticmethod
    def _append_existing(staged: Path, final: Path, config: Any, lock: Any) -> None:
        from kafkalog.log import Log

        from .layout import list_segment_bases

        with Log.open(final, config, lock=lock) as log:
            delta = log.log_end_offset
            for base in list_segment_bases(str(staged)):
                data = bytearray((staged / f"{base:020d}.log").read_bytes())
                if not data:
                    continue
                _shift_base_offsets(data, delta)
                log.append_batches(bytes(data))
