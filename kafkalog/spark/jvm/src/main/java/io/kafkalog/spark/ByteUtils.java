package io.kafkalog.spark;

/**
 * Big-endian reads from byte arrays (every integer in {@code .log}, {@code .index},
 * {@code .timeindex}, {@code .txnindex} and {@code .snapshot} files is big-endian, spec
 * "Global conventions"). Varints are decoded inside {@link RecordBatchDecoder}, where the cursor
 * lives.
 */
final class ByteUtils {
  private ByteUtils() {}

  static int readInt(byte[] b, int i) {
    return ((b[i] & 0xFF) << 24) | ((b[i + 1] & 0xFF) << 16) | ((b[i + 2] & 0xFF) << 8)
        | (b[i + 3] & 0xFF);
  }

  static long readUnsignedInt(byte[] b, int i) {
    return readInt(b, i) & 0xFFFFFFFFL;
  }

  static short readShort(byte[] b, int i) {
    return (short) (((b[i] & 0xFF) << 8) | (b[i + 1] & 0xFF));
  }

  static long readLong(byte[] b, int i) {
    return ((long) readInt(b, i) << 32) | (readInt(b, i + 4) & 0xFFFFFFFFL);
  }

  /** Little-endian int32 (only LZ4 frames use little-endian, spec section 3). */
  static int readIntLE(byte[] b, int i) {
    return (b[i] & 0xFF) | ((b[i + 1] & 0xFF) << 8) | ((b[i + 2] & 0xFF) << 16)
        | ((b[i + 3] & 0xFF) << 24);
  }

  /** First index {@code i} in sorted {@code a[0..n)} with {@code a[i] >= x} (numpy searchsorted left). */
  static int searchLeft(long[] a, int n, long x) {
    int lo = 0;
    int hi = n;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (a[mid] < x) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  /** First index {@code i} in sorted {@code a[0..n)} with {@code a[i] > x} (numpy searchsorted right). */
  static int searchRight(long[] a, int n, long x) {
    int lo = 0;
    int hi = n;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (a[mid] <= x) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }
}
