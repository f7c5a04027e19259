package io.kafkalog.spark;

import java.util.zip.CRC32;

/**
 * Decode one legacy entry, magic 0 or 1 (spec 2.1-2.2): a plain message or a compressed wrapper
 * of inner messages, with the reading rules of Kafka's
 * {@code AbstractLegacyRecordBatch.DeepRecordsIterator}:
 *
 * <ul>
 *   <li>the entry CRC-32 (zlib) covers magic through the end of the value;
 *   <li>the whole wrapper is decompressed before any inner message is returned; a partial
 *       trailing inner entry ends the sequence, an inner size below 14, an empty sequence, a null
 *       wrapper value or a compressed inner message is corrupt;
 *   <li>v1 wrappers store relative inner offsets: absolute = wrapperOffset - lastInner + inner,
 *       except a wrapper offset of 0 (some librdkafka producers) meaning absolute; a non-zero
 *       wrapper offset below the last inner offset is corrupt;
 *   <li>a v1 LogAppendTime wrapper's timestamp is every inner v1 message's timestamp;
 *   <li>timestamp type: -1 (NoTimestampType) for magic 0, else the wrapper's bit 3.
 * </ul>
 *
 * The port of Python's {@code records/legacy.py::LegacyEntry}, with its messages. Records reach
 * the {@link RecordSink} only once the whole entry is known to be valid.
 */
final class LegacyDecoder {
  private static final int LOG_OVERHEAD = 12;
  private static final int RECORD_OVERHEAD_V0 = 14;
  private static final int RECORD_OVERHEAD_V1 = 22;

  private final CRC32 crc = new CRC32();
  /** Inner messages of a wrapper, staged until the wrapper offset rule has been checked. */
  private final DecodedRecords inner = new DecodedRecords();

  /** A message body that does not parse (Python's {@code _Malformed}). */
  private static final class Malformed extends Exception {
    private static final long serialVersionUID = 1L;

    Malformed(String what) {
      super(what, null, false, false);
    }
  }

  // parse result of one message (crc .. value), Python's _parse_message
  private int mMagic;
  private int mAttributes;
  private long mTimestamp;
  private int mKeyPos;
  private int mKeyLen;
  private int mValuePos;
  private int mValueLen;

  private void parseMessage(byte[] b, int start, int end) throws Malformed {
    if (end - start < RECORD_OVERHEAD_V0) {
      throw new Malformed("message too small (expected at least " + RECORD_OVERHEAD_V0
          + " bytes, found " + (end - start) + ")");
    }
    mMagic = b[start + 4] & 0xFF;
    mAttributes = b[start + 5] & 0xFF;
    int p = start + 6;
    if (mMagic == 0) {
      mTimestamp = -1;
    } else if (mMagic == 1) {
      if (end - start < RECORD_OVERHEAD_V1) {
        throw new Malformed("v1 message too small (expected at least " + RECORD_OVERHEAD_V1
            + " bytes, found " + (end - start) + ")");
      }
      mTimestamp = ByteUtils.readLong(b, p);
      p += 8;
    } else {
      throw new Malformed("unexpected magic in a legacy message (expected 0 or 1, found "
          + mMagic + ")");
    }
    int klen = ByteUtils.readInt(b, p);
    p += 4;
    if (klen < 0) {
      mKeyPos = p;
      mKeyLen = -1;
    } else {
      if (klen > end - p - 4) {
        throw new Malformed("key length " + klen + " overruns the message (" + (end - p - 4)
            + " bytes left)");
      }
      mKeyPos = p;
      mKeyLen = klen;
      p += klen;
    }
    if (end - p < 4) {
      throw new Malformed("message ends before the value length");
    }
    int vlen = ByteUtils.readInt(b, p);
    p += 4;
    if (vlen < 0) {
      mValuePos = p;
      mValueLen = -1;
    } else {
      if (vlen > end - p) {
        throw new Malformed("value length " + vlen + " overruns the message (" + (end - p)
            + " bytes left)");
      }
      mValuePos = p;
      mValueLen = vlen;
    }
  }

  private static CorruptRecordException error(String what, String path, long pos) {
    return new CorruptRecordException(what, path, pos, null);
  }

  /** Decode the legacy entry {@code e} at {@code b[i .. i + e.size)} into {@code out}. */
  void decode(byte[] b, int i, LogEntry e, boolean checkCrc, Codecs codecs, RecordSink sink,
      String path) {
    long pos = e.position;
    long offset = e.baseOffset;
    if (checkCrc) {
      crc.reset();
      crc.update(b, i + 16, e.size - 16);
      long computed = crc.getValue();
      if (computed != e.crc) {
        throw error("Record is corrupt (stored crc = " + e.crc + ", computed crc = " + computed
            + ")", path, pos);
      }
    }
    try {
      parseMessage(b, i + LOG_OVERHEAD, i + e.size);
    } catch (Malformed m) {
      throw error("corrupt legacy message at offset " + offset + ": " + m.getMessage(), path, pos);
    }
    int magic = mMagic;
    int attributes = mAttributes;
    int type = magic == 0 ? -1 : ((attributes & LogEntry.ATTR_LOG_APPEND_TIME) != 0 ? 1 : 0);
    int cid = attributes & LogEntry.ATTR_CODEC_MASK;
    if (cid == 0) {
      sink.reserve(1);
      sink.add(b, offset, magic == 0 ? -1 : mTimestamp, type, mKeyPos, mKeyLen, mValuePos,
          mValueLen, 0, 0);
      return;
    }
    if (cid > 3) {
      throw error("invalid compression codec for a magic " + magic + " wrapper (expected 0-3, "
          + "found " + cid + ")", path, pos);
    }
    if (mValueLen < 0) {
      throw error("Found invalid compressed record set with null value (magic = " + magic + ")",
          path, pos);
    }
    long wrapperTs = mTimestamp;
    try {
      codecs.decompress(cid, magic, b, mValuePos, mValueLen);
    } catch (KafkaLogException x) {
      throw x.rebuild("wrapper at offset " + offset + ": " + x.detail(), path, pos, null);
    }
    boolean logAppend = magic == 1 && (attributes & LogEntry.ATTR_LOG_APPEND_TIME) != 0;
    byte[] d = codecs.out;
    int n = codecs.outLen;
    DecodedRecords out = inner;
    out.clear();
    int p = 0;
    while (n - p >= LOG_OVERHEAD) {
      long ioff = ByteUtils.readLong(d, p);
      int isize = ByteUtils.readInt(d, p + 8);
      if (isize < RECORD_OVERHEAD_V0) {
        throw error("inner message of wrapper at offset " + offset + ": record size is less "
            + "than the minimum record overhead (expected >= " + RECORD_OVERHEAD_V0 + ", found "
            + isize + ")", path, pos);
      }
      if (isize > n - p - LOG_OVERHEAD) {
        break; // partial trailing inner entry: Kafka's DataLogInputStream stops here
      }
      try {
        parseMessage(d, p + LOG_OVERHEAD, p + LOG_OVERHEAD + isize);
      } catch (Malformed m) {
        throw error("inner message " + out.count + " of wrapper at offset " + offset + ": "
            + m.getMessage(), path, pos);
      }
      if ((mAttributes & LogEntry.ATTR_CODEC_MASK) != 0) {
        throw error("inner message " + out.count + " of wrapper at offset " + offset + ": Inner "
            + "messages must not be compressed (found codec id "
            + (mAttributes & LogEntry.ATTR_CODEC_MASK) + ")", path, pos);
      }
      long its = mTimestamp;
      if (mMagic == 1 && logAppend) {
        its = wrapperTs;
      }
      out.reserve(1);
      out.add(d, ioff, its, type, mKeyPos, mKeyLen, mValuePos, mValueLen, 0, 0);
      p += LOG_OVERHEAD + isize;
    }
    if (out.count == 0) {
      throw error("Found invalid compressed record set with no inner records (wrapper at offset "
          + offset + ")", path, pos);
    }
    long base = 0;
    if (magic == 1) {
      long lastInner = out.offsets[out.count - 1];
      if (offset != 0) {
        if (offset < lastInner) {
          throw error("Found invalid wrapper offset in compressed v1 message set, wrapper offset '"
              + offset + "' is less than the last inner message offset '" + lastInner
              + "' and it is not zero.", path, pos);
        }
        base = offset - lastInner;
      }
    }
    sink.reserve(out.count);
    for (int k = 0; k < out.count; k++) {
      sink.add(d, base + out.offsets[k], out.timestamps[k], out.timestampTypes[k], out.keyPos[k],
          out.keyLen[k], out.valuePos[k], out.valueLen[k], 0, 0);
    }
  }
}
