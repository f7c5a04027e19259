package io.kafkalog.spark;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Find topic-partition directories and describe their segments from indexes and batch headers:
 * the port of Python's {@code kafkalog/spark/layout.py} (and the name rules of
 * {@code kafkalog/files.py}, from Kafka's {@code LocalLog.parseTopicPartitionName} and
 * {@code LogFileUtils}).
 *
 * <p>Planning never decodes records: a segment is its base offset (file name), size, the entries
 * of its {@code .index} and {@code .timeindex}, and a <em>tail walk</em> of batch headers from the
 * last {@code .index} entry to the end of the file, which gives the segment's next offset and true
 * max timestamp even for an active segment. A segment whose index is missing or unusable is
 * walked from position 0 (headers only).
 */
final class LogLayout {
  private LogLayout() {}

  static final String LOG_SUFFIX = ".log";
  static final String LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint";
  /** The engine's own offsets checkpoint in a partition directory ({@code kafkalog.log.OFFSETS_FILE}). */
  static final String ENGINE_OFFSETS_FILE = ".kafkalog-offsets";

  private static final Pattern DELETE_DIR =
      Pattern.compile("(\\S+)-(\\S+)\\.(\\S+)-delete", Pattern.UNICODE_CHARACTER_CLASS);
  private static final Pattern FUTURE_DIR =
      Pattern.compile("(\\S+)-(\\S+)\\.(\\S+)-future", Pattern.UNICODE_CHARACTER_CLASS);
  private static final Pattern STRAY_DIR =
      Pattern.compile("(\\S+)-(\\S+)\\.(\\S+)-stray", Pattern.UNICODE_CHARACTER_CLASS);
  private static final Pattern JAVA_INT = Pattern.compile("[+-]?[0-9]+");

  /** A path string as Python's {@code str(pathlib.Path(p))} renders it (so messages match). */
  static String pyPath(String p) {
    if (p.isEmpty()) {
      return ".";
    }
    boolean abs = p.startsWith("/");
    List<String> parts = new ArrayList<>();
    for (String s : p.split("/")) {
      if (!s.isEmpty() && !s.equals(".")) {
        parts.add(s);
      }
    }
    String joined = String.join("/", parts);
    if (abs) {
      // POSIX: exactly two leading slashes are kept, more collapse to one
      return (p.startsWith("//") && !p.startsWith("///") ? "//" : "/") + joined;
    }
    return joined.isEmpty() ? "." : joined;
  }

  /** {@code (topic, partition)} of a partition directory name, or null (Kafka's rules). */
  static TopicPartition parseTopicPartitionName(String dirName) {
    if (dirName.isEmpty() || dirName.indexOf('-') < 0) {
      return null;
    }
    boolean renamed = false;
    Pattern[] patterns = {DELETE_DIR, FUTURE_DIR, STRAY_DIR};
    String[] suffixes = {"-delete", "-future", "-stray"};
    for (int k = 0; k < 3; k++) {
      if (dirName.endsWith(suffixes[k])) {
        if (!patterns[k].matcher(dirName).matches()) {
          return null;
        }
        renamed = true;
      }
    }
    String name = renamed ? dirName.substring(0, dirName.lastIndexOf('.')) : dirName;
    int dash = name.lastIndexOf('-');
    if (dash < 0) {
      return null;
    }
    String topic = name.substring(0, dash);
    String partText = name.substring(dash + 1);
    if (topic.isEmpty() || partText.isEmpty() || !JAVA_INT.matcher(partText).matches()) {
      return null;
    }
    try {
      return new TopicPartition(topic, Integer.parseInt(partText));
    } catch (NumberFormatException e) {
      return null;
    }
  }

  private static boolean isPartitionDir(String name) {
    return parseTopicPartitionName(name) != null && !DELETE_DIR.matcher(name).matches()
        && !FUTURE_DIR.matcher(name).matches() && !STRAY_DIR.matcher(name).matches();
  }

  /** A partition directory found under the paths: {@code (topic, partition, dir)}. */
  static final class Found {
    final TopicPartition tp;
    final String dir;

    Found(TopicPartition tp, String dir) {
      this.tp = tp;
      this.dir = dir;
    }
  }

  /**
   * Every partition directory under {@code paths}, sorted by topic and partition. A path holding
   * {@code .log} files (or named {@code <topic>-<n>} with no sub-directories) is one partition
   * directory; anything else is a {@code log.dirs} root whose {@code <topic>-<n>} children are the
   * partitions ({@code -delete}/{@code -future}/{@code -stray} and other entries are skipped).
   */
  static List<Found> discoverPartitions(List<String> paths) {
    Map<TopicPartition, String> out = new TreeMap<>();
    for (String raw : paths) {
      String ps = pyPath(raw);
      File p = new File(ps);
      if (!p.isDirectory()) {
        throw new KafkaLogException("no such log directory (expected a partition directory or a "
            + "log.dirs root)", ps, null, null);
      }
      String[] names = p.list();
      if (names == null) {
        names = new String[0];
      }
      Arrays.sort(names);
      boolean hasLogs = false;
      boolean hasDirs = false;
      for (String n : names) {
        File c = new File(p, n);
        if (c.isFile() && n.endsWith(LOG_SUFFIX)) {
          hasLogs = true;
        }
        if (c.isDirectory()) {
          hasDirs = true;
        }
      }
      String pname = p.getName();
      if (hasLogs || (isPartitionDir(pname) && !hasDirs)) {
        if (!isPartitionDir(pname)) {
          throw new KafkaLogException("holds .log files but its name is not <topic>-<partition>",
              ps, null, null);
        }
        out.putIfAbsent(parseTopicPartitionName(pname), ps);
        continue;
      }
      for (String n : names) {
        File c = new File(p, n);
        if (c.isDirectory() && isPartitionDir(n)) {
          out.putIfAbsent(parseTopicPartitionName(n), ps.equals("/") ? "/" + n : ps + "/" + n);
        }
      }
    }
    List<Found> found = new ArrayList<>();
    for (Map.Entry<TopicPartition, String> e : out.entrySet()) {
      found.add(new Found(e.getKey(), e.getValue()));
    }
    return found;
  }

  /** The offset in a segment file name: the text before the first '.', or null. */
  static Long offsetFromFilename(String name) {
    int dot = name.indexOf('.');
    if (dot < 0) {
      return null;
    }
    String digits = name.substring(0, dot);
    if (!JAVA_INT.matcher(digits).matches()) {
      return null;
    }
    try {
      return Long.parseLong(digits);
    } catch (NumberFormatException e) {
      return null;
    }
  }

  static String segmentFile(String dir, long base, String suffix) {
    return dir + "/" + String.format("%020d", base) + suffix;
  }

  /** Base offsets of the {@code .log} files of a partition directory, ascending. */
  static List<Long> listSegmentBases(String dir) {
    List<Long> bases = new ArrayList<>();
    String[] names = new File(dir).list();
    if (names != null) {
      for (String n : names) {
        if (n.endsWith(LOG_SUFFIX)) {
          Long o = offsetFromFilename(n);
          if (o != null) {
            bases.add(o);
          }
        }
      }
    }
    Collections.sort(bases);
    return bases;
  }

  /** Read one segment's indexes and walk its tail (see the class notes). */
  static SegmentInfo describeSegment(String dir, long base) throws IOException {
    String logPath = segmentFile(dir, base, LOG_SUFFIX);
    long size;
    try {
      size = Files.size(Paths.get(logPath));
    } catch (NoSuchFileException e) {
      return null; // deleted by retention between listing and reading
    }
    long[][] idx = IndexFiles.offsetIndex(segmentFile(dir, base, ".index"), base, size);
    long[][] tix = IndexFiles.timeIndex(segmentFile(dir, base, ".timeindex"), base);
    long[] offs = idx[0];
    long[] poss = idx[1];
    long walkStart = poss.length > 0 ? poss[poss.length - 1] : 0;
    SegmentInfo s = new SegmentInfo();
    try (SegmentFile f = new SegmentFile(logPath, 64 * 1024)) {
      Walk w = walk(f, walkStart);
      if (w.count == 0 && walkStart > 0) {
        // the last entry points at a batch we cannot read: walk the whole segment
        walkStart = 0;
        offs = new long[0];
        poss = new long[0];
        w = walk(f, 0);
      }
      size = f.size; // lower if the file shrank while we read it
      long dataEnd = w.count > 0 || walkStart == 0 ? w.stopPosition : walkStart;
      if ((w.stopReason == EntryScanner.STOP_CORRUPT_SIZE
          || w.stopReason == EntryScanner.STOP_BAD_MAGIC
          || w.stopReason == EntryScanner.STOP_SHORT_V2) && anyNonZero(f, dataEnd, 4096)) {
        // not a zero-filled preallocated tail: garbage. Plan up to the file end so the reader
        // meets it and applies failOnDataLoss (fail naming the position, or skip).
        dataEnd = size;
      }
      s.nextOffset = w.count > 0 ? w.lastOffset + 1
          : (offs.length > 0 ? offs[offs.length - 1] + 1 : base);
      long tailMax = w.count > 0 ? w.maxTimestamp : -1;
      s.maxTimestamp = Math.max(tailMax, tix[0].length > 0 ? tix[0][tix[0].length - 1] : -1);
      s.dataEnd = dataEnd;
    }
    s.baseOffset = base;
    s.logPath = logPath;
    s.size = size;
    s.indexOffsets = offs;
    s.indexPositions = poss;
    s.timeTimestamps = tix[0];
    s.timeOffsets = tix[1];
    s.walkStart = walkStart;
    String txn = segmentFile(dir, base, ".txnindex");
    s.txnIndexPath = new File(txn).exists() ? txn : null;
    return s;
  }

  private static boolean anyNonZero(SegmentFile f, long from, int n) {
    if (from >= f.size) {
      return false;
    }
    int len = (int) Math.min(n, f.size - from);
    int i = f.ensure(from, len);
    for (int k = 0; k < len; k++) {
      if (f.buf[i + k] != 0) {
        return true;
      }
    }
    return false;
  }

  /** Result of a header walk to the end of the file. */
  static final class Walk {
    int count;
    long stopPosition;
    int stopReason;
    long lastOffset;
    long maxTimestamp = Long.MIN_VALUE;
  }

  static Walk walk(SegmentFile f, long start) {
    Walk w = new Walk();
    LogEntry e = new LogEntry();
    long pos = Math.max(0, start);
    while (true) {
      int r = EntryScanner.next(f, pos, f.size, e);
      if (r != EntryScanner.ENTRY) {
        w.stopPosition = pos;
        w.stopReason = r;
        return w;
      }
      w.count++;
      w.lastOffset = e.lastOffset;
      w.maxTimestamp = Math.max(w.maxTimestamp, e.maxTimestamp);
      pos = e.end();
    }
  }

  /**
   * Log start offset recorded by a broker ({@code log-start-offset-checkpoint} in the log dir
   * root, written after DeleteRecords) or by the engine (its partition offsets file).
   */
  static Long checkpointedLogStart(TopicPartition tp, String dir) {
    Long found = null;
    Path root = Paths.get(dir).getParent();
    if (root == null) {
      root = Paths.get("."); // pathlib: Path("t-0").parent is "."
    }
    Map<TopicPartition, Long> cp = OffsetCheckpoint.read(root.resolve(LOG_START_OFFSET_CHECKPOINT));
    if (cp != null && cp.get(tp) != null) {
      found = cp.get(tp);
    }
    Map<TopicPartition, Long> own = OffsetCheckpoint.read(Paths.get(dir, ENGINE_OFFSETS_FILE));
    if (own != null) {
      Long v = own.get(new TopicPartition("log-start-offset", 0));
      if (v != null) {
        found = found == null ? v : Math.max(found, v);
      }
    }
    return found;
  }

  /** All segments of one partition directory, described for planning. */
  static PartitionInfo describePartition(TopicPartition tp, String dir) {
    List<SegmentInfo> segs = new ArrayList<>();
    for (long base : listSegmentBases(dir)) {
      try {
        SegmentInfo s = describeSegment(dir, base);
        if (s != null) {
          segs.add(s);
        }
      } catch (NoSuchFileException e) {
        // deleted by retention between listing and reading
      } catch (IOException e) {
        throw new KafkaLogException("cannot read segment: " + e, segmentFile(dir, base,
            LOG_SUFFIX), null, null);
      }
    }
    return new PartitionInfo(tp.topic, tp.partition, dir, segs, checkpointedLogStart(tp, dir));
  }
}
