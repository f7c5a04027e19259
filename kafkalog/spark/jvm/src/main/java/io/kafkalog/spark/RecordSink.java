package io.kafkalog.spark;

/**
 * Where decoders put records: a {@link ColumnBatchBuilder} (the read path) or
 * {@link DecodedRecords} (planning: timestamp lookups, producer state). Decoders validate every
 * record of an entry; on a corrupt entry they {@link #rollback} to the {@link #mark} taken before
 * it, so a corrupt batch contributes no row (as the Python reader drops it whole).
 */
interface RecordSink {
  /** Room for {@code n} more records. */
  void reserve(int n);

  /**
   * One record: key/value are {@code src[pos .. pos + len)}, length -1 for null; headers are the
   * {@code headerCount} (key, value) pairs encoded from {@code headerPos} (spec 1.3).
   */
  void add(byte[] src, long offset, long timestamp, int timestampType, int keyPos, int keyLen,
      int valuePos, int valueLen, int headerPos, int headerCount);

  int mark();

  void rollback(int mark);
}
