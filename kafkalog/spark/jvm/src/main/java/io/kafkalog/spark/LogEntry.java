package io.kafkalog.spark;

/**
 * The header of one {@code .log} entry (a v2 batch or a v0/v1 message or wrapper), as
 * {@link EntryScanner} reads it: Python's {@code native.scan} arrays for one entry.
 *
 * <p>Every entry starts with int64 offset, int32 size (bytes after this field) and the magic byte
 * at 16 (spec 1.1, 2.1), so it is sized and classified before its format is known.
 */
final class LogEntry {
  /** Byte position of the entry in the file. */
  long position;
  /** 12 + declared size. */
  int size;
  byte magic;
  /** v2: the int16 attributes; legacy: the attribute byte. */
  int attributes;
  /** v2: baseOffset; legacy: the entry offset (a wrapper's is its last inner offset). */
  long baseOffset;
  /** v2: baseOffset + lastOffsetDelta; legacy: the entry offset. */
  long lastOffset;
  /** v2: maxTimestamp; v1: timestamp; v0: -1. */
  long maxTimestamp;
  /** v2: recordsCount; legacy: 1. */
  int recordCount;
  /** The stored CRC (unsigned). */
  long crc;
  /** v2 only (legacy: -1). */
  long producerId;

  static final int ATTR_CODEC_MASK = 0x07;
  static final int ATTR_LOG_APPEND_TIME = 0x08;
  static final int ATTR_TRANSACTIONAL = 0x10;
  static final int ATTR_CONTROL = 0x20;

  boolean isV2() {
    return magic == 2;
  }

  boolean isControl() {
    return magic == 2 && (attributes & ATTR_CONTROL) != 0;
  }

  boolean isTransactional() {
    return magic == 2 && (attributes & ATTR_TRANSACTIONAL) != 0;
  }

  long end() {
    return position + size;
  }

  void copyFrom(LogEntry o) {
    position = o.position;
    size = o.size;
    magic = o.magic;
    attributes = o.attributes;
    baseOffset = o.baseOffset;
    lastOffset = o.lastOffset;
    maxTimestamp = o.maxTimestamp;
    recordCount = o.recordCount;
    crc = o.crc;
    producerId = o.producerId;
  }
}
