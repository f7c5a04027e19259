package io.kafkalog.spark;

import java.util.zip.CRC32C;

/**
 * Decode one v2 record batch (spec 1.1-1.4) into a {@link RecordSink}: CRC-32C check,
 * decompression, then every record validated as Kafka's {@code DefaultRecord.readFrom} /
 * {@code DefaultRecordBatch.RecordIterator} do.
 *
 * <p>The port of Python's {@code records/columnar.py::_decode_v2} and
 * {@code native/records_decode.py::decode_records} for a single batch, with the same checks in
 * the same order and the same messages: CRC, codec id, record count, decompression,
 * {@code recordsCount * 7 > area}, then per record: a body longer than what is left, a malformed
 * varint, a negative header count or header key length, bytes consumed different from the
 * declared length, and bytes left after {@code recordsCount} records. Like Kafka, any negative
 * key/value length means null and the per-record attributes byte is ignored; offset and
 * timestamp arithmetic wraps like Java's {@code long} (which it is, here).
 *
 * <p>Varints follow Kafka's {@code ByteUtils.readVarint/readVarlong}: at most 5 (10) bytes, bits
 * past 32 (64) silently dropped.
 */
final class RecordBatchDecoder {
  static final int ATTRIBUTES_OFFSET = 21;
  static final int BASE_TIMESTAMP_OFFSET = 27;
  static final int RECORD_BATCH_OVERHEAD = 61;
  /** length, attributes, timestampDelta, offsetDelta, keyLength, valueLength, headerCount. */
  static final int MIN_RECORD_SIZE = 7;

  // Python's native/records_decode.py ERROR_MESSAGES
  static final String ERR_TRUNCATED =
      "record truncated: its fields run past the end of the record or records area";
  static final String ERR_BAD_VARINT =
      "malformed varint (longer than 5 bytes, or 10 for a varlong)";
  static final String ERR_NEGATIVE_LENGTH = "negative record length";
  static final String ERR_RECORD_SIZE = "record fields do not fill the declared record length";
  static final String ERR_NEGATIVE_HEADER_COUNT = "negative record header count";
  static final String ERR_NEGATIVE_HEADER_KEY = "negative record header key length";
  static final String ERR_RECORDS_REMAINING =
      "bytes left in the records area after recordsCount records (incorrect declared batch size)";

  private final CRC32C crc = new CRC32C();

  // Varints are read by static helpers on locals (no fields written in the record loop: measured
  // ~2x faster than a cursor field). A result packs (next position << 32) | (value & 0xFFFFFFFF);
  // errors are negative.
  private static final long TRUNCATED = -1L;
  private static final long BAD_VARINT = -2L;

  /** Kafka's {@code ByteUtils.readVarint} at {@code p}, bounded by {@code end}. */
  static long varint(byte[] s, int p, int end) {
    if (p >= end) {
      return TRUNCATED;
    }
    int b = s[p];
    if (b >= 0) {
      return ((long) (p + 1) << 32) | (((b >>> 1) ^ -(b & 1)) & 0xFFFFFFFFL);
    }
    if (p + 1 < end) {
      int b1 = s[p + 1];
      if (b1 >= 0) { // two bytes: most record lengths, value lengths and deltas
        int v = (b & 0x7f) | (b1 << 7);
        return ((long) (p + 2) << 32) | (((v >>> 1) ^ -(v & 1)) & 0xFFFFFFFFL);
      }
    }
    return varintSlow(s, p, end);
  }

  private static long varintSlow(byte[] s, int p, int end) {
    int value = 0;
    int shift = 0;
    while (true) {
      if (p >= end) {
        return TRUNCATED;
      }
      int b = s[p++];
      if ((b & 0x80) == 0) {
        value |= b << shift;
        return ((long) p << 32) | (((value >>> 1) ^ -(value & 1)) & 0xFFFFFFFFL);
      }
      value |= (b & 0x7f) << shift;
      shift += 7;
      if (shift > 28) {
        return BAD_VARINT;
      }
    }
  }

  /** Where Kafka's {@code ByteUtils.readVarlong} at {@code p} ends, or a negative error. */
  static int varlongEnd(byte[] s, int p, int end) {
    int shift = 0;
    while (true) {
      if (p >= end) {
        return (int) TRUNCATED;
      }
      if ((s[p++] & 0x80) == 0) {
        return p;
      }
      shift += 7;
      if (shift > 63) {
        return (int) BAD_VARINT;
      }
    }
  }

  /** The value of a varlong known to be well formed. */
  static long varlongValue(byte[] s, int p) {
    long value = 0L;
    int shift = 0;
    while (true) {
      long b = s[p++];
      if ((b & 0x80) == 0) {
        value |= b << shift;
        return (value >>> 1) ^ -(value & 1);
      }
      value |= (b & 0x7f) << shift;
      shift += 7;
    }
  }

  private static String message(long err) {
    return err == BAD_VARINT ? ERR_BAD_VARINT : ERR_TRUNCATED;
  }

  /**
   * Decode the batch {@code e} whose bytes are {@code b[i .. i + e.size)} into {@code out}.
   * Errors are located in {@code path} at the batch (or, uncompressed, record) position.
   */
  void decode(byte[] b, int i, LogEntry e, boolean checkCrc, Codecs codecs, RecordSink out,
      String path) {
    long pos = e.position;
    long base = e.baseOffset;
    if (checkCrc) {
      crc.reset();
      crc.update(b, i + ATTRIBUTES_OFFSET, e.size - ATTRIBUTES_OFFSET);
      long computed = crc.getValue();
      if (computed != e.crc) {
        throw new CorruptRecordException("record batch CRC mismatch (stored " + e.crc
            + ", computed " + computed + ")", path, pos, base);
      }
    }
    int codec = e.attributes & LogEntry.ATTR_CODEC_MASK;
    if (codec > 4) {
      throw new CorruptRecordException("unknown compression codec id (expected 0-4, found "
          + codec + ")", path, pos, base);
    }
    int count = e.recordCount;
    if (count < 0) {
      throw new CorruptRecordException("invalid record count (expected >= 0, found " + count
          + ")", path, pos, base);
    }
    byte[] src;
    int start;
    int end;
    if (codec != 0) {
      try {
        codecs.decompress(codec, 2, b, i + RECORD_BATCH_OVERHEAD, e.size - RECORD_BATCH_OVERHEAD);
      } catch (KafkaLogException x) {
        throw x.rebuild("batch at offset " + base + ": " + x.detail(), path, pos, base);
      }
      src = codecs.out;
      start = 0;
      end = codecs.outLen;
    } else {
      src = b;
      start = i + RECORD_BATCH_OVERHEAD;
      end = i + e.size;
    }
    long area = end - start;
    if ((long) count * MIN_RECORD_SIZE > area) {
      throw new CorruptRecordException("recordsCount " + count + " cannot fit in a " + area
          + "-byte records area (each record takes at least " + MIN_RECORD_SIZE + " bytes)",
          path, pos, base);
    }
    boolean logAppend = (e.attributes & LogEntry.ATTR_LOG_APPEND_TIME) != 0;
    long baseTs = ByteUtils.readLong(b, i + BASE_TIMESTAMP_OFFSET);
    long maxTs = e.maxTimestamp;
    int mark = out.mark();
    out.reserve(count);
    String err = null;
    int errAt = 0;
    int p = start;
    records:
    for (int r = 0; r < count; r++) {
      int recStart = p;
      long x = varint(src, p, end);
      if (x < 0) {
        err = message(x);
        errAt = recStart;
        break;
      }
      int length = (int) x;
      p = (int) (x >>> 32);
      if (length < 0) {
        err = ERR_NEGATIVE_LENGTH;
        errAt = recStart;
        break;
      }
      if (length > end - p || length == 0) {
        err = ERR_TRUNCATED;
        errAt = recStart;
        break;
      }
      int bodyEnd = p + length;
      p += 1; // attributes: unused
      long tsDelta;
      x = varint(src, p, bodyEnd);
      if (x >= 0 && (int) (x >>> 32) - p <= 2) { // one or two bytes: fits an int
        tsDelta = (int) x;
        p = (int) (x >>> 32);
      } else {
        int q = varlongEnd(src, p, bodyEnd);
        if (q < 0) {
          err = message(q);
          errAt = recStart;
          break;
        }
        tsDelta = varlongValue(src, p);
        p = q;
      }
      x = varint(src, p, bodyEnd);
      if (x < 0) {
        err = message(x);
        errAt = recStart;
        break;
      }
      int offsetDelta = (int) x;
      p = (int) (x >>> 32);
      x = varint(src, p, bodyEnd);
      if (x < 0) {
        err = message(x);
        errAt = recStart;
        break;
      }
      int klen = (int) x;
      p = (int) (x >>> 32);
      int kpos = p;
      if (klen >= 0) {
        if (klen > bodyEnd - p) {
          err = ERR_TRUNCATED;
          errAt = recStart;
          break;
        }
        p += klen;
      }
      x = varint(src, p, bodyEnd);
      if (x < 0) {
        err = message(x);
        errAt = recStart;
        break;
      }
      int vlen = (int) x;
      p = (int) (x >>> 32);
      int vpos = p;
      if (vlen >= 0) {
        if (vlen > bodyEnd - p) {
          err = ERR_TRUNCATED;
          errAt = recStart;
          break;
        }
        p += vlen;
      }
      x = varint(src, p, bodyEnd);
      if (x < 0) {
        err = message(x);
        errAt = recStart;
        break;
      }
      int nh = (int) x;
      p = (int) (x >>> 32);
      if (nh < 0) {
        err = ERR_NEGATIVE_HEADER_COUNT;
        errAt = recStart;
        break;
      }
      int hpos = p;
      for (int h = 0; h < nh; h++) {
        x = varint(src, p, bodyEnd);
        if (x < 0) {
          err = message(x);
          errAt = recStart;
          break records;
        }
        int hk = (int) x;
        p = (int) (x >>> 32);
        if (hk < 0) {
          err = ERR_NEGATIVE_HEADER_KEY;
          errAt = recStart;
          break records;
        }
        if (hk > bodyEnd - p) {
          err = ERR_TRUNCATED;
          errAt = recStart;
          break records;
        }
        p += hk;
        x = varint(src, p, bodyEnd);
        if (x < 0) {
          err = message(x);
          errAt = recStart;
          break records;
        }
        int hv = (int) x;
        p = (int) (x >>> 32);
        if (hv >= 0) {
          if (hv > bodyEnd - p) {
            err = ERR_TRUNCATED;
            errAt = recStart;
            break records;
          }
          p += hv;
        }
      }
      if (p != bodyEnd) {
        err = ERR_RECORD_SIZE;
        errAt = recStart;
        break;
      }
      long offset = base + offsetDelta;
      out.add(src, offset, logAppend ? maxTs : baseTs + tsDelta, logAppend ? 1 : 0, kpos,
          klen < 0 ? -1 : klen, vpos, vlen < 0 ? -1 : vlen, hpos, nh);
    }
    if (err == null && p != end) {
      err = ERR_RECORDS_REMAINING;
      errAt = p;
    }
    if (err != null) {
      out.rollback(mark);
      if (codec != 0) {
        throw new CorruptRecordException(err + " (at byte " + errAt
            + " of the decompressed records of the batch at this position)", path, pos, base);
      }
      throw new CorruptRecordException(err + " (batch at position " + pos + ")", path,
          pos + (errAt - i), base);
    }
  }
}
