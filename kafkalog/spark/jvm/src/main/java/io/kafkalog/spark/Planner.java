package io.kafkalog.spark;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Plan a read: resolve starting/ending offsets per partition, then cut byte ranges into tasks.
 * The port of Python's {@code kafkalog/spark/planning.py}, so both readers produce the same
 * splits (the same InputPartitions, in the same order).
 *
 * <p>Planning reads only directory listings, index files and batch headers
 * ({@link LogLayout}); resolving a timestamp decodes the single batch Kafka's
 * {@code offsetsForTimes} lands on (spec 5.3).
 *
 * <p>Splitting: a selected segment range is cut only at positions taken from its {@code .index}
 * (every index position is a batch start), into pieces of about {@code target} bytes
 * ({@code maxBytesPerPartition}, or total / {@code minPartitions} if smaller) or the estimated
 * {@code maxRecordsPerPartition} offsets; small pieces are then packed together into tasks.
 */
final class Planner {
  private Planner() {}

  /** The tasks plus what planning learned. */
  static final class Plan {
    final List<List<Chunk>> tasks;
    final List<PartitionInfo> partitions;
    final Map<TopicPartition, long[]> ranges;

    Plan(List<List<Chunk>> tasks, List<PartitionInfo> partitions, Map<TopicPartition, long[]> r) {
      this.tasks = tasks;
      this.partitions = partitions;
      this.ranges = r;
    }
  }

  // -- offset resolution ------------------------------------------------------------------------

  /**
   * Kafka's {@code LogSegment.findOffsetByTimestamp} on one segment (spec 5.3): position from
   * {@code .timeindex} then {@code .index}; walk batch headers to the first batch whose
   * maxTimestamp &gt;= ts; decode that batch only and return its first record with timestamp
   * &gt;= ts and offset &gt;= notBefore.
   */
  static Long firstRecordAtOrAfter(SegmentInfo seg, long ts, long notBefore) {
    Long hint = seg.timeLookup(ts);
    long target = Math.max(hint != null ? hint : seg.baseOffset, notBefore);
    long pos = seg.positionFor(target);
    LogEntry e = new LogEntry();
    DecodedRecords recs = new DecodedRecords();
    RecordBatchDecoder v2 = new RecordBatchDecoder();
    LegacyDecoder legacy = new LegacyDecoder();
    SegmentFile f;
    try {
      f = new SegmentFile(seg.logPath, 1 << 20);
    } catch (java.nio.file.NoSuchFileException x) {
      return null; // deleted by retention since planning described it
    } catch (IOException x) {
      throw new KafkaLogException("cannot read segment: " + x, seg.logPath, null, null);
    }
    try (f; Codecs codecs = new Codecs(Codecs.DEFAULT_MAX_DECOMPRESSED)) {
      while (pos < seg.dataEnd) {
        if (EntryScanner.next(f, pos, seg.dataEnd, e) != EntryScanner.ENTRY) {
          return null;
        }
        pos = e.end();
        if (e.maxTimestamp < ts || e.lastOffset < notBefore) {
          continue;
        }
        if (e.isControl()) {
          // a control batch: Kafka would return its record; starting there is the same
          return Math.max(e.baseOffset, notBefore);
        }
        int i = f.ensure(e.position, e.size);
        if (e.end() > f.size) {
          return null; // the file shrank under the batch
        }
        recs.clear();
        if (e.isV2()) {
          v2.decode(f.buf, i, e, true, codecs, recs, seg.logPath);
        } else {
          legacy.decode(f.buf, i, e, true, codecs, recs, seg.logPath);
        }
        for (int k = 0; k < recs.count; k++) {
          if (recs.timestamps[k] >= ts && recs.offsets[k] >= notBefore) {
            return recs.offsets[k];
          }
        }
      }
    }
    return null;
  }

  /** Earliest offset whose record timestamp &gt;= ts (Kafka's offsetsForTimes), or null. */
  static Long offsetForTimestamp(PartitionInfo info, long ts, long notBefore) {
    for (int i = 0; i < info.segments.size(); i++) {
      SegmentInfo seg = info.segments.get(i);
      if (seg.exactMax() && seg.maxTimestamp < ts) {
        continue;
      }
      if (info.segmentEnd(i) <= notBefore) {
        continue;
      }
      Long found = firstRecordAtOrAfter(seg, ts, notBefore);
      if (found != null) {
        return found;
      }
    }
    return null;
  }

  private static long resolve(PartitionInfo info, OffsetSpec spec, boolean isStart,
      String strategy, boolean failOnDataLoss) {
    TopicPartition tp = info.tp();
    long value = spec.forPartition(tp);
    long lso = info.logStartOffset();
    long leo = info.readableEnd();
    String name = info.name();
    if (spec.isTimestampFor(tp)) {
      Long found = offsetForTimestamp(info, value, 0);
      if (found != null) {
        return found;
      }
      if (isStart && strategy.equals("error")) {
        throw new OffsetOutOfRangeException(name + ": no record with timestamp >= " + value
            + " for the starting timestamp (set startingOffsetsByTimestampStrategy=latest to "
            + "start at the end instead)", info.path, null, null);
      }
      return leo;
    }
    if (value == OffsetSpec.EARLIEST) {
      return lso;
    }
    if (value == OffsetSpec.LATEST) {
      return leo;
    }
    if (value < lso) {
      if (failOnDataLoss) {
        throw new OffsetOutOfRangeException(name + ": " + (isStart ? "starting" : "ending")
            + " offset " + value + " is below the log start offset " + lso + " (records were "
            + "deleted); set failOnDataLoss=false to read from the earliest offset instead",
            info.path, null, value);
      }
      return lso;
    }
    return isStart ? value : Math.min(value, leo);
  }

  /** {@code [start, end)} offsets for one partition from the starting/ending options. */
  static long[] resolveRange(PartitionInfo info, ReadOptions opts) {
    long start = resolve(info, opts.starting, true, opts.startingTsStrategy, opts.failOnDataLoss);
    long end = resolve(info, opts.ending, false, "latest", opts.failOnDataLoss);
    if (start > end) {
      if (start > info.readableEnd()) {
        throw new OffsetOutOfRangeException(info.name() + ": starting offset " + start
            + " is after the " + (info.stableEnd != null ? "last stable" : "log end")
            + " offset " + info.readableEnd(), info.path, null, start);
      }
      throw new ConfigException(info.name() + ": starting offset " + start
          + " is after the ending offset " + end);
    }
    return new long[] {start, end};
  }

  // -- byte ranges ------------------------------------------------------------------------------

  /** One segment's selected range and the segment (for cutting at its index entries). */
  static final class Range {
    final SegmentInfo seg;
    final Chunk chunk;

    Range(SegmentInfo seg, Chunk chunk) {
      this.seg = seg;
      this.chunk = chunk;
    }
  }

  private static List<long[]> readAborted(PartitionInfo info) {
    List<long[]> out = new ArrayList<>();
    for (SegmentInfo seg : info.segments) {
      if (seg.txnIndexPath != null) {
        out.addAll(IndexFiles.abortedTxns(seg.txnIndexPath));
      }
    }
    return out;
  }

  /** The segment byte ranges holding offsets [start, end) (one chunk per segment). */
  static List<Range> partitionRanges(PartitionInfo info, long start, long end, Long timestampLo,
      boolean readCommitted) {
    List<Range> out = new ArrayList<>();
    if (start >= end) {
      return out;
    }
    List<long[]> aborted = readCommitted ? readAborted(info) : new ArrayList<>();
    for (int i = 0; i < info.segments.size(); i++) {
      SegmentInfo seg = info.segments.get(i);
      long segEnd = info.segmentEnd(i);
      if (segEnd <= start || seg.baseOffset >= end || seg.dataEnd == 0) {
        continue;
      }
      long seek = Math.max(start, seg.baseOffset);
      if (timestampLo != null) {
        if (seg.exactMax() && seg.maxTimestamp < timestampLo) {
          continue;
        }
        // (T, O) with T <= lo - 1 < lo: every record up to O is older than lo
        Long o = seg.timeLookup(timestampLo - 1);
        if (o != null) {
          seek = Math.max(seek, o + 1);
        }
      }
      long startPos = seek > seg.baseOffset ? seg.positionFor(seek) : 0;
      long endPos = end < segEnd ? seg.endPositionFor(end) : seg.dataEnd;
      endPos = Math.min(endPos, seg.dataEnd);
      if (endPos <= startPos) {
        continue;
      }
      long sOff = Math.max(start, seg.baseOffset);
      long eOff = Math.min(end, segEnd);
      List<long[]> mine = new ArrayList<>();
      for (long[] a : aborted) {
        if (a[1] < eOff && a[2] >= sOff) {
          mine.add(a);
        }
      }
      out.add(new Range(seg, new Chunk(info.topic, info.partition, seg.logPath, startPos, endPos,
          sOff, eOff, eOff - sOff, mine.toArray(new long[0][]))));
    }
    return out;
  }

  /** Cut one segment chunk at {@code .index} positions into pieces of about {@code target} bytes. */
  static List<Chunk> cut(SegmentInfo seg, Chunk c, long target, Long maxRecords) {
    List<Chunk> pieces = new ArrayList<>();
    if (c.nbytes() <= target && (maxRecords == null || c.estRecords <= maxRecords)) {
      pieces.add(c);
      return pieces;
    }
    long[] ip = seg.indexPositions;
    long[] io = seg.indexOffsets;
    int lo = ByteUtils.searchRight(ip, ip.length, c.startPos);
    int hi = ByteUtils.searchLeft(ip, ip.length, c.endPos);
    int n = Math.max(0, hi - lo);
    long[] pos = Arrays.copyOfRange(ip, lo, lo + n);
    // batches at or after index entry j hold offsets above entry j - 1's offset: the estimate
    long[] est = new long[n];
    for (int k = 0; k < n; k++) {
      int j = lo + k;
      long e = j > 0 ? io[j - 1] + 1 : seg.baseOffset;
      est[k] = Math.min(Math.max(e, c.startOffset), c.endOffset);
    }
    long curPos = c.startPos;
    long curOff = c.startOffset;
    int i = 0;
    while (i < n) {
      int k = ByteUtils.searchLeft(pos, n, curPos + target);
      if (maxRecords != null) {
        k = Math.min(k, ByteUtils.searchLeft(est, n, curOff + maxRecords));
      }
      k = Math.max(k, i);
      if (k >= n) {
        break;
      }
      long p = pos[k];
      long e = Math.max(est[k], curOff);
      pieces.add(new Chunk(c.topic, c.partition, c.logPath, curPos, p, c.startOffset,
          c.endOffset, e - curOff, c.aborted));
      curPos = p;
      curOff = e;
      i = k + 1;
    }
    pieces.add(new Chunk(c.topic, c.partition, c.logPath, curPos, c.endPos, c.startOffset,
        c.endOffset, c.endOffset - curOff, c.aborted));
    return pieces;
  }

  /** Cut large ranges at index entries and pack small ones into tasks. */
  static List<List<Chunk>> splitAndGroup(List<Range> ranges, ReadOptions opts) {
    long total = 0;
    for (Range r : ranges) {
      total += r.chunk.nbytes();
    }
    long target = opts.maxBytesPerPartition;
    if (opts.minPartitions != null) {
      long per = (total + opts.minPartitions - 1) / opts.minPartitions;
      target = Math.min(target, Math.max(1, per));
    }
    Long maxRecords = opts.maxRecordsPerPartition;
    List<Chunk> pieces = new ArrayList<>();
    for (Range r : ranges) {
      pieces.addAll(cut(r.seg, r.chunk, target, maxRecords));
    }
    List<List<Chunk>> tasks = new ArrayList<>();
    List<Chunk> cur = new ArrayList<>();
    long curBytes = 0;
    long curRecords = 0;
    for (Chunk c : pieces) {
      boolean overBytes = !cur.isEmpty() && curBytes + c.nbytes() > target;
      boolean overRecords = !cur.isEmpty() && maxRecords != null
          && curRecords + c.estRecords > maxRecords;
      if (overBytes || overRecords) {
        tasks.add(cur);
        cur = new ArrayList<>();
        curBytes = 0;
        curRecords = 0;
      }
      cur.add(c);
      curBytes += c.nbytes();
      curRecords += c.estRecords;
    }
    if (!cur.isEmpty()) {
      tasks.add(cur);
    }
    return tasks;
  }

  /** Discover, resolve and split: the whole batch plan. */
  static Plan plan(ReadOptions opts, Bounds bounds) {
    if (bounds == null) {
      bounds = new Bounds();
    }
    List<PartitionInfo> infos = new ArrayList<>();
    Set<TopicPartition> present = new TreeSet<>();
    for (LogLayout.Found f : LogLayout.discoverPartitions(opts.paths)) {
      present.add(f.tp);
      if (opts.selects(f.tp.topic, f.tp.partition) && bounds.allows(f.tp.topic, f.tp.partition)) {
        PartitionInfo info = LogLayout.describePartition(f.tp, f.dir);
        if (opts.readCommitted) {
          info.stableEnd = LastStableOffset.compute(info);
        }
        infos.add(info);
      }
    }
    checkRequestedPartitions(opts, present);
    Long[] off = bounds.offsetRange();
    List<Range> ranges = new ArrayList<>();
    Map<TopicPartition, long[]> resolved = new LinkedHashMap<>();
    for (PartitionInfo info : infos) {
      long[] r = resolveRange(info, opts);
      resolved.put(info.tp(), r);
      long start = off[0] != null ? Math.max(r[0], off[0]) : r[0];
      long end = off[1] != null ? Math.min(r[1], off[1]) : r[1];
      ranges.addAll(partitionRanges(info, start, end, bounds.timestampLoMs, opts.readCommitted));
    }
    return new Plan(splitAndGroup(ranges, opts), infos, resolved);
  }

  /** Topic-partitions named by {@code assign} or offsets JSON must exist (as with Kafka). */
  private static void checkRequestedPartitions(ReadOptions opts, Set<TopicPartition> present) {
    Set<TopicPartition> wanted = new TreeSet<>();
    if (opts.assign != null) {
      for (Map.Entry<String, List<Integer>> e : opts.assign.entrySet()) {
        for (int p : e.getValue()) {
          wanted.add(new TopicPartition(e.getKey(), p));
        }
      }
    }
    for (OffsetSpec spec : new OffsetSpec[] {opts.starting, opts.ending}) {
      for (TopicPartition tp : spec.perPartition.keySet()) {
        if (opts.selects(tp.topic, tp.partition)) {
          wanted.add(tp);
        }
      }
    }
    wanted.removeAll(present);
    if (!wanted.isEmpty() && opts.failOnDataLoss) {
      List<String> names = new ArrayList<>();
      for (TopicPartition tp : wanted) {
        names.add(tp.toString());
      }
      throw new KafkaLogException("topic-partitions " + String.join(", ", names) + " were "
          + "requested but no such directory exists under " + String.join(", ", opts.paths)
          + " (set failOnDataLoss=false to ignore)");
    }
  }
}
