package io.kafkalog.spark;

/**
 * Hop over {@code .log} entry headers without decoding records: the port of Python's
 * {@code native/scan.py}, whose stop rule is Kafka's {@code FileLogInputStream.nextBatch}
 * (spec 6.4):
 *
 * <ul>
 *   <li>17 or fewer bytes remain: stop, a partial trailing entry ({@link #STOP_PARTIAL};
 *       exactly 0 remaining is {@link #STOP_END});
 *   <li>size &lt; 14 ({@code LegacyRecord.RECORD_OVERHEAD_V0}): corrupt
 *       ({@link #STOP_CORRUPT_SIZE}), what a zero-filled preallocated tail produces;
 *   <li>the entry extends past {@code end}: partial trailing entry ({@link #STOP_PARTIAL}).
 * </ul>
 *
 * Beyond Kafka (as the Python scan): a magic byte other than 0/1/2 stops with
 * {@link #STOP_BAD_MAGIC}, a v2 entry shorter than the 61-byte header with {@link #STOP_SHORT_V2}.
 */
final class EntryScanner {
  private EntryScanner() {}

  static final int ENTRY = -1;
  static final int STOP_END = 0;
  static final int STOP_PARTIAL = 1;
  static final int STOP_CORRUPT_SIZE = 2;
  static final int STOP_BAD_MAGIC = 3;
  static final int STOP_SHORT_V2 = 4;

  static final int LOG_OVERHEAD = 12;
  static final int HEADER_SIZE_UP_TO_MAGIC = 17;
  static final int MIN_ENTRY_SIZE = 14;
  static final int RECORD_BATCH_OVERHEAD = 61;

  /** Python's {@code STOP_REASONS} texts (they appear in error messages). */
  static String reason(int stop) {
    switch (stop) {
      case STOP_END:
        return "end of data";
      case STOP_PARTIAL:
        return "partial trailing entry";
      case STOP_CORRUPT_SIZE:
        return "entry size below the minimum of 14 bytes";
      case STOP_BAD_MAGIC:
        return "unknown magic byte";
      case STOP_SHORT_V2:
        return "v2 batch shorter than its 61-byte header";
      default:
        return "entry limit reached";
    }
  }

  /**
   * Read the entry header at {@code pos} into {@code e}. Returns {@link #ENTRY} when a whole
   * entry lies in {@code [pos, end)}, else the stop reason. {@code end} is clamped to the file's
   * current size ({@link SegmentFile#size}, lower if the file shrank).
   */
  static int next(SegmentFile f, long pos, long end, LogEntry e) {
    if (end > f.size) {
      end = f.size;
    }
    long remaining = end - pos;
    if (remaining <= 0) {
      return STOP_END;
    }
    if (remaining <= HEADER_SIZE_UP_TO_MAGIC) {
      return STOP_PARTIAL;
    }
    int i = f.ensure(pos, (int) Math.min(RECORD_BATCH_OVERHEAD, remaining));
    if (end > f.size) {
      // the file shrank while we read it: it ends where it now ends
      end = f.size;
      remaining = end - pos;
      if (remaining <= 0) {
        return STOP_END;
      }
      if (remaining <= HEADER_SIZE_UP_TO_MAGIC) {
        return STOP_PARTIAL;
      }
    }
    byte[] b = f.buf;
    int size = ByteUtils.readInt(b, i + 8);
    if (size < MIN_ENTRY_SIZE) {
      return STOP_CORRUPT_SIZE;
    }
    int magic = b[i + 16] & 0xFF;
    if (magic > 2) {
      return STOP_BAD_MAGIC;
    }
    long total = LOG_OVERHEAD + (long) size;
    if (total > remaining) {
      return STOP_PARTIAL;
    }
    if (magic == 2 && total < RECORD_BATCH_OVERHEAD) {
      return STOP_SHORT_V2;
    }
    e.position = pos;
    e.size = (int) total;
    e.magic = (byte) magic;
    long off = ByteUtils.readLong(b, i);
    e.baseOffset = off;
    if (magic == 2) {
      e.lastOffset = off + ByteUtils.readInt(b, i + 23);
      e.crc = ByteUtils.readUnsignedInt(b, i + 17);
      e.attributes = ByteUtils.readShort(b, i + 21);
      e.maxTimestamp = ByteUtils.readLong(b, i + 35);
      e.producerId = ByteUtils.readLong(b, i + 43);
      e.recordCount = ByteUtils.readInt(b, i + 57);
    } else {
      e.lastOffset = off;
      e.crc = ByteUtils.readUnsignedInt(b, i + 12);
      e.attributes = b[i + 17] & 0xFF;
      e.recordCount = 1;
      e.producerId = -1;
      if (magic == 1 && total >= 26) {
        e.maxTimestamp = ByteUtils.readLong(b, i + 18);
      } else {
        e.maxTimestamp = -1;
      }
    }
    return ENTRY;
  }
}
