package io.kafkalog.spark;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.CRC32C;

/**
 * Kafka's last stable offset of a partition, for {@code read_committed} readers: the first offset
 * of the oldest transaction still open at the log end (no COMMIT/ABORT marker yet), else the log
 * end offset (Kafka's {@code ProducerStateManager.firstUnstableOffset}, {@code UnifiedLog}).
 *
 * <p>The port of Python's {@code layout.last_stable_offset} with the part of
 * {@code producer_state.ProducerStateManager} it uses: open transactions come from the newest
 * readable {@code .snapshot} in (log start, log end] (spec 4.4: entries whose
 * {@code currentTxnFirstOffset} is not -1), then a header replay of the v2 batches after it:
 * a transactional data batch opens its producer's transaction, an end-transaction control
 * batch closes it. Only transaction state is tracked (sequences do not affect the LSO).
 */
final class LastStableOffset {
  private LastStableOffset() {}

  private static final int SNAPSHOT_HEADER = 10;
  private static final int SNAPSHOT_ENTRY = 46;

  /** {@code {producerId: currentTxnFirstOffset}} of a valid snapshot, or null when unreadable. */
  static Map<Long, Long> readSnapshot(String path) {
    byte[] b;
    try {
      b = Files.readAllBytes(Paths.get(path));
    } catch (IOException e) {
      return null;
    }
    if (b.length < SNAPSHOT_HEADER || ByteUtils.readShort(b, 0) != 1) {
      return null;
    }
    CRC32C crc = new CRC32C();
    crc.update(b, 6, b.length - 6);
    if (crc.getValue() != ByteUtils.readUnsignedInt(b, 2)) {
      return null;
    }
    int count = ByteUtils.readInt(b, 6);
    if (count < 0 || count > (b.length - SNAPSHOT_HEADER) / SNAPSHOT_ENTRY) {
      return null;
    }
    Map<Long, Long> out = new HashMap<>();
    for (int i = 0; i < count; i++) {
      int at = SNAPSHOT_HEADER + i * SNAPSHOT_ENTRY;
      long pid = ByteUtils.readLong(b, at);
      long first = ByteUtils.readLong(b, at + 38);
      out.put(pid, first);
    }
    return out;
  }

  static long compute(PartitionInfo info) {
    long leo = info.logEndOffset();
    if (info.segments.isEmpty()) {
      return leo;
    }
    long logStart = info.logStartOffset();
    // producer id -> first offset of its open transaction; first offset -> producer id
    Map<Long, Long> current = new HashMap<>();
    TreeMap<Long, Long> ongoing = new TreeMap<>();
    long mapEnd = logStart;
    List<Long> snaps = new ArrayList<>();
    String[] names = new File(info.path).list();
    if (names != null) {
      for (String n : names) {
        if (n.endsWith(".snapshot")) {
          Long o = LogLayout.offsetFromFilename(n);
          if (o != null) {
            snaps.add(o);
          }
        }
      }
    }
    Collections.sort(snaps, Collections.reverseOrder());
    for (long off : snaps) {
      if (off > leo || off <= logStart) {
        continue;
      }
      Map<Long, Long> entries = readSnapshot(LogLayout.segmentFile(info.path, off, ".snapshot"));
      if (entries == null) {
        continue; // unreadable: try the next older one (read-only: never deleted here)
      }
      for (Map.Entry<Long, Long> e : entries.entrySet()) {
        if (e.getValue() >= 0) {
          current.put(e.getKey(), e.getValue());
          ongoing.put(e.getValue(), e.getKey());
        }
      }
      mapEnd = off;
      break;
    }
    long start = Math.max(mapEnd, logStart);
    RecordBatchDecoder decoder = new RecordBatchDecoder();
    DecodedRecords recs = new DecodedRecords();
    LogEntry e = new LogEntry();
    try (Codecs codecs = new Codecs(Codecs.DEFAULT_MAX_DECOMPRESSED)) {
      for (int i = 0; i < info.segments.size(); i++) {
        SegmentInfo seg = info.segments.get(i);
        if (info.segmentEnd(i) <= start) {
          continue;
        }
        if (seg.baseOffset >= leo) {
          break;
        }
        long pos = seg.baseOffset < start ? seg.positionFor(start) : 0;
        try (SegmentFile f = new SegmentFile(seg.logPath, 1 << 20)) {
          while (EntryScanner.next(f, pos, f.size, e) == EntryScanner.ENTRY) {
            pos = e.end();
            if (e.lastOffset < start) {
              continue;
            }
            if (e.lastOffset >= leo) {
              break;
            }
            if (!e.isV2() || e.producerId < 0) {
              continue;
            }
            long pid = e.producerId;
            if (e.isControl()) {
              int bi = f.ensure(e.position, e.size);
              if (e.end() > f.size) {
                break; // the file shrank under the batch: a batch being written is not data
              }
              recs.clear();
              decoder.decode(f.buf, bi, e, false, codecs, recs, seg.logPath);
              if (recs.count == 0 || !isEndTxnMarker(recs, seg.logPath, e.position)) {
                continue; // an empty control batch (cleaned) or not a marker: no state change
              }
              Long first = current.remove(pid);
              if (first != null) {
                ongoing.remove(first);
              }
            } else if (e.isTransactional() && !current.containsKey(pid)) {
              current.put(pid, e.baseOffset);
              ongoing.put(e.baseOffset, pid);
            }
          }
        } catch (IOException x) {
          throw new KafkaLogException("cannot read segment: " + x, seg.logPath, null, null);
        }
      }
    }
    return ongoing.isEmpty() ? leo : Math.min(ongoing.firstKey(), leo);
  }

  /** Whether the first control record's key is COMMIT (1) or ABORT (0) (spec 1.5). */
  private static boolean isEndTxnMarker(DecodedRecords recs, String path, long position) {
    int klen = recs.keyLen[0];
    if (klen < 4) {
      throw new CorruptRecordException("Invalid record size for a control record (expected a key "
          + "of at least 4 bytes, found " + Math.max(klen, 0) + ")", path, position, null);
    }
    short version = ByteUtils.readShort(recs.src, recs.keyPos[0]);
    if (version < 0) {
      throw new CorruptRecordException("Invalid version found for control record: " + version
          + ". May indicate data corruption", path, position, null);
    }
    short type = ByteUtils.readShort(recs.src, recs.keyPos[0] + 2);
    return type == 0 || type == 1;
  }
}
