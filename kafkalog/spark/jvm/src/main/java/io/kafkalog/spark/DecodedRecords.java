package io.kafkalog.spark;

/**
 * The records of one decoded entry (a v2 batch or a legacy message/wrapper): parallel arrays
 * pointing into {@link #src} (the {@code .log} window or the decompressed bytes). Every record of
 * the entry is validated before any is returned, so a corrupt batch is dropped whole, as the
 * Python reader drops it.
 *
 * <p>Lengths are -1 for a null key/value (spec 1.3). The arrays grow and are reused.
 */
final class DecodedRecords {
  byte[] src;
  int count;
  long[] offsets = new long[0];
  long[] timestamps = new long[0];
  int[] timestampTypes = new int[0];
  int[] keyPos = new int[0];
  int[] keyLen = new int[0];
  int[] valuePos = new int[0];
  int[] valueLen = new int[0];
  /** Position of the first header's key length (only meaningful when {@code headerCount > 0}). */
  int[] headerPos = new int[0];
  int[] headerCount = new int[0];

  void reset(byte[] source, int capacity) {
    src = source;
    count = 0;
    if (offsets.length < capacity) {
      int n = Math.max(capacity, Math.min(Integer.MAX_VALUE - 8, offsets.length * 2L > 0
          ? (int) Math.min(Integer.MAX_VALUE - 8, offsets.length * 2L) : capacity));
      offsets = grow(offsets, n);
      timestamps = grow(timestamps, n);
      timestampTypes = grow(timestampTypes, n);
      keyPos = grow(keyPos, n);
      keyLen = grow(keyLen, n);
      valuePos = grow(valuePos, n);
      valueLen = grow(valueLen, n);
      headerPos = grow(headerPos, n);
      headerCount = grow(headerCount, n);
    }
  }

  /** Room for one more record (legacy wrappers do not declare their count up front). */
  void ensureRoom() {
    if (count == offsets.length) {
      byte[] s = src;
      int c = count;
      reset(s, Math.max(16, count * 2));
      src = s;
      count = c;
    }
  }

  private static long[] grow(long[] a, int n) {
    long[] b = new long[n];
    System.arraycopy(a, 0, b, 0, a.length);
    return b;
  }

  private static int[] grow(int[] a, int n) {
    int[] b = new int[n];
    System.arraycopy(a, 0, b, 0, a.length);
    return b;
  }
}
