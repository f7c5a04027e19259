package io.kafkalog.spark;

import java.util.Arrays;

/**
 * Records of decoded entries as parallel arrays pointing into {@link #src} (the {@code .log}
 * window or decompressed bytes of the last entry): the {@link RecordSink} planning uses (timestamp
 * lookups, producer state) and the legacy decoder's staging area. Lengths are -1 for null.
 */
final class DecodedRecords implements RecordSink {
  byte[] src;
  int count;
  long[] offsets = new long[16];
  long[] timestamps = new long[16];
  int[] timestampTypes = new int[16];
  int[] keyPos = new int[16];
  int[] keyLen = new int[16];
  int[] valuePos = new int[16];
  int[] valueLen = new int[16];
  int[] headerPos = new int[16];
  int[] headerCount = new int[16];

  void clear() {
    count = 0;
    src = null;
  }

  @Override
  public void reserve(int n) {
    long need = (long) count + n;
    if (need > offsets.length) {
      int cap = (int) Math.min(Integer.MAX_VALUE - 8, Math.max(need, offsets.length * 2L));
      offsets = Arrays.copyOf(offsets, cap);
      timestamps = Arrays.copyOf(timestamps, cap);
      timestampTypes = Arrays.copyOf(timestampTypes, cap);
      keyPos = Arrays.copyOf(keyPos, cap);
      keyLen = Arrays.copyOf(keyLen, cap);
      valuePos = Arrays.copyOf(valuePos, cap);
      valueLen = Arrays.copyOf(valueLen, cap);
      headerPos = Arrays.copyOf(headerPos, cap);
      headerCount = Arrays.copyOf(headerCount, cap);
    }
  }

  @Override
  public void add(byte[] s, long offset, long timestamp, int timestampType, int kpos, int klen,
      int vpos, int vlen, int hpos, int hcount) {
    int k = count++;
    src = s;
    offsets[k] = offset;
    timestamps[k] = timestamp;
    timestampTypes[k] = timestampType;
    keyPos[k] = kpos;
    keyLen[k] = klen;
    valuePos[k] = vpos;
    valueLen[k] = vlen;
    headerPos[k] = hpos;
    headerCount[k] = hcount;
  }

  @Override
  public int mark() {
    return count;
  }

  @Override
  public void rollback(int mark) {
    count = mark;
  }
}
