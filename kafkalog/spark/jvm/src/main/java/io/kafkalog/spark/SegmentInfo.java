package io.kafkalog.spark;

/**
 * One segment as planning sees it (Python's {@code layout.SegmentInfo}): its {@code .index}
 * and {@code .timeindex} entries as absolute offsets, and what the tail walk found.
 */
final class SegmentInfo {
  long baseOffset;
  String logPath;
  long size;
  /** First byte after the last whole batch found by the tail walk. */
  long dataEnd;
  /** Last offset + 1 of the last whole batch (baseOffset if empty). */
  long nextOffset;
  /** -1 when unknown / none. */
  long maxTimestamp;
  long[] indexOffsets = new long[0];
  long[] indexPositions = new long[0];
  long[] timeTimestamps = new long[0];
  long[] timeOffsets = new long[0];
  String txnIndexPath;
  /** Where the tail walk started. */
  long walkStart;

  /**
   * Byte position of a batch start at or before the batch holding {@code offset} (spec 5.2
   * lookup): greatest entry with offset &lt;= target, position 0 if none. Valid because an entry
   * (O, P) says the append starting at P ends at O.
   */
  long positionFor(long offset) {
    int i = ByteUtils.searchRight(indexOffsets, indexOffsets.length, offset) - 1;
    return i >= 0 ? indexPositions[i] : 0;
  }

  /**
   * A batch-start position from which every batch holds only offsets &gt;= {@code endOffset}:
   * with entries (O_j, P_j), batches at P_{j+1} or later hold offsets &gt; O_j; take the first j
   * with O_j &gt;= endOffset - 1, else the data end.
   */
  long endPositionFor(long endOffset) {
    int j = ByteUtils.searchLeft(indexOffsets, indexOffsets.length, endOffset - 1);
    if (j + 1 < indexPositions.length) {
      return indexPositions[j + 1];
    }
    return dataEnd;
  }

  /** Offset of the greatest {@code .timeindex} entry with timestamp &lt;= {@code ts}, or null. */
  Long timeLookup(long ts) {
    int i = ByteUtils.searchRight(timeTimestamps, timeTimestamps.length, ts) - 1;
    return i >= 0 ? timeOffsets[i] : null;
  }

  /** Whether {@link #maxTimestamp} is exact (time index present or the whole segment walked). */
  boolean exactMax() {
    return timeTimestamps.length > 0 || walkStart == 0;
  }
}
