"""Micro-batch reader: tail Kafka log directories as Spark's Kafka source tails topics.

Offsets are Kafka's JSON per topic and partition, ``{"orders": {"0": 42, "1": 17}}`` (the next
offset to read). Between micro-batches the directories are listed again, so new partitions
(starting at their earliest offset, as with Kafka) and new segments are seen. Each partition's
log end offset comes from the last segment's last ``.index`` entry plus a header walk to the end
of the file (:mod:`kafkalog.spark.layout`), never from decoding records.

* ``startingOffsets`` (default ``latest``), ``startingTimestamp``... apply only when a query
  starts without a checkpoint (``initialOffset``).
* ``maxOffsetsPerTrigger`` caps offsets per micro-batch, split across partitions in proportion
  to what each has available (Kafka's ``rateLimit``); ``trigger(availableNow=True)`` freezes the
  end offsets at start and then drains them in capped micro-batches.
* Retention: if a partition's log start offset moved past the checkpointed offset (segments
  deleted) or its directory vanished, ``failOnDataLoss=true`` fails the query naming the
  partition and offsets; ``false`` continues from the earliest available offset.

The driver-side instance lives in one Python process for the whole query, so it may cache; the
copy that runs ``read()`` on executors shares nothing with it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)

from kafkalog.errors import OffsetOutOfRangeError

from .arrow import arrow_schema
from .layout import PartitionInfo, describe_partition, discover_partitions, last_stable_offset
from .options import ReadOptions
from .planning import partition_ranges, resolve_group_start, resolve_range, split_and_group
from .source import KafkaLogInputPartition

__all__ = ["KafkaLogStreamReader", "rate_limit"]

Offsets = dict[str, dict[str, int]]


def _flat(offsets: dict | None) -> dict[tuple[str, int], int]:
    out: dict[tuple[str, int], int] = {}
    for topic, parts in (offsets or {}).items():
        for p, o in parts.items():
            out[(topic, int(p))] = int(o)
    return out


def _nest(flat: dict[tuple[str, int], int]) -> Offsets:
    out: Offsets = {}
    for (t, p), o in sorted(flat.items()):
        out.setdefault(t, {})[str(p)] = int(o)
    return out


def rate_limit(limit: int, start: dict[tuple[str, int], int],
               end: dict[tuple[str, int], int]) -> dict[tuple[str, int], int]:
    """Kafka's ``KafkaMicroBatchStream.rateLimit``: share ``limit`` offsets proportionally.

    >>> rate_limit(10, {("a", 0): 0, ("a", 1): 0}, {("a", 0): 30, ("a", 1): 10})
    {('a', 0): 7, ('a', 1): 2}
    """
    sizes = {tp: max(0, e - start.get(tp, e)) for tp, e in end.items()}
    total = sum(sizes.values())
    if total <= limit:
        return dict(end)
    out = {}
    for tp, e in end.items():
        begin = start.get(tp, e)
        size = sizes[tp]
        if size > 0:
            prorate = limit * (size / total)
            step = math.ceil(prorate) if prorate < 1 else math.floor(prorate)
            out[tp] = min(e, begin + step)
        else:
            out[tp] = e
    return out


class KafkaLogStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """``spark.readStream.format("kafkalog").load(path)``."""

    def __init__(self, options: ReadOptions, columns: tuple[str, ...]) -> None:
        self.options = options
        self.columns = tuple(columns)
        self._frozen: dict[tuple[str, int], int] | None = None
        self._infos: dict[tuple[str, int], PartitionInfo] = {}

    # -- driver side ---------------------------------------------------------------------------

    def _refresh(self) -> dict[tuple[str, int], PartitionInfo]:
        infos = {}
        for topic, partition, directory in discover_partitions(self.options.paths):
            if self.options.selects(topic, partition):
                info = describe_partition(topic, partition, directory)
                if self.options.read_committed:
                    info.stable_end = last_stable_offset(info)
                infos[(topic, partition)] = info
        self._infos = infos
        return infos

    def initialOffset(self) -> Offsets:  # noqa: N802 (PySpark's names)
        infos = self._refresh()
        opts = resolve_group_start(self.options)
        out = {}
        for tp, info in infos.items():
            start, _ = resolve_range(info, opts)
            out[tp] = start
        return _nest(out)

    def getDefaultReadLimit(self) -> ReadLimit:  # noqa: N802
        n = self.options.max_offsets_per_trigger
        return ReadMaxRows(n) if n else ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:  # noqa: N802
        self._frozen = {tp: info.readable_end for tp, info in self._refresh().items()}

    def _available(self) -> dict[tuple[str, int], int]:
        infos = self._refresh()
        ends = {tp: info.readable_end for tp, info in infos.items()}
        if self._frozen is not None:
            ends = {tp: min(e, self._frozen[tp]) for tp, e in ends.items() if tp in self._frozen}
        return ends

    def latestOffset(self, start: dict | None = None, limit: ReadLimit | None = None  # noqa: N802
                     ) -> Offsets:
        begin = _flat(start)
        ends = self._available()
        # partitions new since ``start`` begin at their earliest offset
        for tp in ends:
            if tp not in begin:
                begin[tp] = self._infos[tp].log_start_offset
        # never go backwards (a partition deleted, or a frozen end below the checkpoint)
        ends = {tp: max(e, begin[tp]) for tp, e in ends.items()}
        for tp, o in begin.items():
            ends.setdefault(tp, o)
        if isinstance(limit, ReadMaxRows):
            ends = rate_limit(limit.max_rows, begin, ends)
        return _nest(ends)

    def reportLatestOffset(self) -> Offsets | None:  # noqa: N802
        return _nest({tp: i.readable_end for tp, i in self._infos.items()}) or None

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        begin, stop = _flat(start), _flat(end)
        # list again: retention may have deleted segments since latestOffset
        infos = self._refresh()
        ranges = []
        for tp, e in sorted(stop.items()):
            info = infos.get(tp)
            s = begin.get(tp)
            if info is None:
                if s is not None and e > s and self.options.fail_on_data_loss:
                    raise OffsetOutOfRangeError(
                        f"{tp[0]}-{tp[1]}: partition directory is gone but offsets [{s}, {e}) "
                        "were not read (set failOnDataLoss=false to skip)")
                continue
            if s is None:
                s = info.log_start_offset
            if s < info.log_start_offset:
                if self.options.fail_on_data_loss:
                    raise OffsetOutOfRangeError(
                        f"{tp[0]}-{tp[1]}: offsets [{s}, {info.log_start_offset}) were deleted "
                        "before they were read (retention?); set failOnDataLoss=false to "
                        "continue from the earliest offset", path=info.path, offset=s)
                s = info.log_start_offset
            if e > s:
                ranges.extend(partition_ranges(info, s, e,
                                               read_committed=self.options.read_committed))
        tasks = split_and_group(ranges, self.options)
        return [KafkaLogInputPartition(t) for t in tasks]

    def commit(self, end: dict) -> None:
        """Nothing to do: files are read in place (the checkpoint holds the offsets)."""

    def stop(self) -> None:
        self._infos = {}

    # -- executor side -------------------------------------------------------------------------

    def read(self, partition: InputPartition) -> Iterator[Any]:
        from .read import ReadSettings, read_task_value

        settings = ReadSettings(
            columns=self.columns,
            fail_on_data_loss=self.options.fail_on_data_loss,
            max_records_per_batch=self.options.max_records_per_batch,
            metrics_dir=self.options.metrics_dir,
            check_crcs=self.options.check_crcs,
        )
        yield from read_task_value(getattr(partition, "value", None), settings,
                                   arrow_schema(self.columns))
