package io.kafkalog.spark;

import java.util.zip.CRC32C;

/**
 * Decode one v2 record batch (spec 1.1-1.4) into {@link DecodedRecords}: CRC-32C check,
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

  /** A record-level failure (stackless: thrown only to unwind one batch). */
  static final class RecordError extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final String what;
    final int at;

    RecordError(String what, int at) {
      super(what, null, false, false);
      this.what = what;
      this.at = at;
    }
  }

  private final CRC32C crc = new CRC32C();
  private byte[] s;
  private int p;

  private int varint(int end, int recStart) {
    int value = 0;
    int shift = 0;
    while (true) {
      if (p >= end) {
        throw new RecordError(ERR_TRUNCATED, recStart);
      }
      int b = s[p++];
      if ((b & 0x80) == 0) {
        value |= b << shift;
        return (value >>> 1) ^ -(value & 1);
      }
      value |= (b & 0x7f) << shift;
      shift += 7;
      if (shift > 28) {
        throw new RecordError(ERR_BAD_VARINT, recStart);
      }
    }
  }

  private long varlong(int end, int recStart) {
    long value = 0L;
    int shift = 0;
    while (true) {
      if (p >= end) {
        throw new RecordError(ERR_TRUNCATED, recStart);
      }
      long b = s[p++];
      if ((b & 0x80) == 0) {
        value |= b << shift;
        return (value >>> 1) ^ -(value & 1);
      }
      value |= (b & 0x7f) << shift;
      shift += 7;
      if (shift > 63) {
        throw new RecordError(ERR_BAD_VARINT, recStart);
      }
    }
  }

  /**
   * Decode the batch {@code e} whose bytes are {@code b[i .. i + e.size)} into {@code out}.
   * Errors are located in {@code path} at the batch (or, uncompressed, record) position.
   */
  void decode(byte[] b, int i, LogEntry e, boolean checkCrc, Codecs codecs, DecodedRecords out,
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
    out.reset(src, count);
    s = src;
    p = start;
    try {
      for (int r = 0; r < count; r++) {
        int recStart = p;
        int length = varint(end, recStart);
        if (length < 0) {
          throw new RecordError(ERR_NEGATIVE_LENGTH, recStart);
        }
        if (length > end - p) {
          throw new RecordError(ERR_TRUNCATED, recStart);
        }
        int bodyEnd = p + length;
        if (p >= bodyEnd) {
          throw new RecordError(ERR_TRUNCATED, recStart);
        }
        p += 1; // attributes: unused
        long tsDelta = varlong(bodyEnd, recStart);
        int offsetDelta = varint(bodyEnd, recStart);
        int klen = varint(bodyEnd, recStart);
        int kpos = p;
        if (klen >= 0) {
          if (klen > bodyEnd - p) {
            throw new RecordError(ERR_TRUNCATED, recStart);
          }
          p += klen;
        }
        int vlen = varint(bodyEnd, recStart);
        int vpos = p;
        if (vlen >= 0) {
          if (vlen > bodyEnd - p) {
            throw new RecordError(ERR_TRUNCATED, recStart);
          }
          p += vlen;
        }
        int nh = varint(bodyEnd, recStart);
        if (nh < 0) {
          throw new RecordError(ERR_NEGATIVE_HEADER_COUNT, recStart);
        }
        int hpos = p;
        for (int h = 0; h < nh; h++) {
          int hk = varint(bodyEnd, recStart);
          if (hk < 0) {
            throw new RecordError(ERR_NEGATIVE_HEADER_KEY, recStart);
          }
          if (hk > bodyEnd - p) {
            throw new RecordError(ERR_TRUNCATED, recStart);
          }
          p += hk;
          int hv = varint(bodyEnd, recStart);
          if (hv >= 0) {
            if (hv > bodyEnd - p) {
              throw new RecordError(ERR_TRUNCATED, recStart);
            }
            p += hv;
          }
        }
        if (p != bodyEnd) {
          throw new RecordError(ERR_RECORD_SIZE, recStart);
        }
        int k = out.count++;
        out.offsets[k] = base + offsetDelta;
        if (logAppend) {
          out.timestamps[k] = maxTs;
          out.timestampTypes[k] = 1;
        } else {
          out.timestamps[k] = baseTs + tsDelta;
          out.timestampTypes[k] = 0;
        }
        out.keyPos[k] = kpos;
        out.keyLen[k] = klen < 0 ? -1 : klen;
        out.valuePos[k] = vpos;
        out.valueLen[k] = vlen < 0 ? -1 : vlen;
        out.headerPos[k] = hpos;
        out.headerCount[k] = nh;
      }
      if (p != end) {
        throw new RecordError(ERR_RECORDS_REMAINING, p);
      }
    } catch (RecordError x) {
      out.count = 0;
      if (codec != 0) {
        throw new CorruptRecordException(x.what + " (at byte " + x.at
            + " of the decompressed records of the batch at this position)", path, pos, base);
      }
      throw new CorruptRecordException(x.what + " (batch at position " + pos + ")", path,
          pos + (x.at - i), base);
    } finally {
      s = null;
    }
  }
}
