package io.kafkalog.spark;

import java.util.ArrayList;
import java.util.List;

/**
 * Byte arrays for one task's reader: {@code .log} windows and decompressed batches.
 *
 * <p>Rows of a {@link org.apache.spark.sql.vectorized.ColumnarBatch} point into these arrays
 * (no copy of keys and values at decode time), so an array that a batch's rows reference is
 * <em>pinned</em> until Spark has consumed the batch, that is until the reader builds the next
 * one ({@link #releasePinned}). Free arrays are reused (best fit), so a task allocates a few
 * arrays rather than one per batch. Not thread-safe: one per reader.
 */
final class BufferPool {
  private static final int MAX_FREE = 64;

  private final List<byte[]> free = new ArrayList<>();
  private final List<byte[]> pinned = new ArrayList<>();

  /** An array of at least {@code min} bytes (contents undefined). */
  byte[] take(int min) {
    int best = -1;
    for (int i = 0; i < free.size(); i++) {
      int len = free.get(i).length;
      if (len >= min && (best < 0 || len < free.get(best).length)) {
        best = i;
      }
    }
    if (best >= 0) {
      return free.remove(best);
    }
    return new byte[min];
  }

  /** Return an array nothing references. */
  void giveBack(byte[] b) {
    if (b != null && b.length > 0 && free.size() < MAX_FREE) {
      free.add(b);
    }
  }

  /** Keep {@code b} until {@link #releasePinned}: rows of the current batch point into it. */
  void pin(byte[] b) {
    for (byte[] p : pinned) {
      if (p == b) {
        return;
      }
    }
    pinned.add(b);
  }

  /** The previous batch has been consumed: its arrays are free again. */
  void releasePinned() {
    for (byte[] b : pinned) {
      giveBack(b);
    }
    pinned.clear();
  }
}
