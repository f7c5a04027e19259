package io.kafkalog.spark;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;

/**
 * A read-only {@code .log} file seen through a sliding window of heap bytes.
 *
 * <p>Why a heap window: record parsing reads bytes one at a time, which on a {@code byte[]}
 * compiles to plain loads, {@link java.util.zip.CRC32C} runs its intrinsic over arrays, and rows
 * can point into the array ({@link BinarySliceVector}). The window is filled from a read-only
 * memory map of the file, not with {@code FileChannel.read}: measured on the benchmark's 242 MB of
 * segments, {@code read} into a heap array cost 140 ms of CPU (the kernel copies into a
 * temporary direct buffer, then the JDK copies again) against 36 ms for copying out of the map.
 * The window reads ahead {@code windowSize} bytes and grows to hold the largest batch asked for.
 *
 * <p>Invariant: {@code buf[0..len)} holds the file bytes {@code [start, start + len)}. The size is
 * taken once at open, like Python's {@code mmap} of the file at read time: bytes appended later
 * are not seen. A file truncated under the reader fails with a {@link KafkaLogException} (the
 * JVM turns the fault on the vanished pages into an {@link InternalError}). Not thread-safe (one
 * per task or planner call).
 */
final class SegmentFile implements Closeable {
  /** Bytes mapped at once (a segment is at most 2 GiB; most are mapped whole). */
  private static final long MAP_BYTES = 1L << 30;

  final String path;
  final long size;
  private final FileChannel channel;
  private final int windowSize;
  private final BufferPool pool;
  private MappedByteBuffer map;
  private long mapStart;
  /** Rows of the batch being built point into {@link #buf}: never overwrite it, replace it. */
  boolean pinned;
  byte[] buf;
  long start;
  int len;
  /** Bytes copied out of the file so far (statistics). */
  long bytesRead;

  SegmentFile(String path, int windowSize, BufferPool pool) throws IOException {
    this.path = path;
    this.channel = FileChannel.open(Paths.get(path), StandardOpenOption.READ);
    this.size = channel.size();
    this.windowSize = windowSize;
    this.pool = pool;
    this.buf = new byte[0];
  }

  SegmentFile(String path, int windowSize) throws IOException {
    this(path, windowSize, new BufferPool());
  }

  /**
   * Make the file bytes {@code [pos, pos + n)} available in {@link #buf} (clipped to the file
   * size) and return the index of {@code pos} in it.
   */
  int ensure(long pos, int n) {
    long want = Math.min((long) n, size - pos);
    if (want < 0) {
      want = 0;
    }
    if (pos >= start && pos + want <= start + len) {
      return (int) (pos - start);
    }
    int cap = (int) Math.max(want, Math.min(windowSize, Math.max(size - pos, want)));
    if (pinned || buf.length < cap) {
      // a new array; keep the bytes already read past pos
      byte[] nb = pool.take(Math.max(cap, buf.length));
      int keep = pos >= start && pos < start + len ? (int) (start + len - pos) : 0;
      if (keep > 0) {
        System.arraycopy(buf, (int) (pos - start), nb, 0, keep);
      }
      if (pinned) {
        pool.pin(buf);
      } else {
        pool.giveBack(buf);
      }
      pinned = false;
      buf = nb;
      start = pos;
      len = keep;
    } else if (pos >= start && pos < start + len) {
      // keep the bytes already read past pos: move them to the front
      int keep = (int) (start + len - pos);
      System.arraycopy(buf, (int) (pos - start), buf, 0, keep);
      start = pos;
      len = keep;
    } else {
      start = pos;
      len = 0;
    }
    int target = (int) Math.min(buf.length, size - start);
    copyOut(start + len, buf, len, target - len);
    bytesRead += target - len;
    len = target;
    return 0;
  }

  /** Copy file bytes {@code [from, from + n)} into {@code dst[off..)} through the map. */
  private void copyOut(long from, byte[] dst, int off, int n) {
    try {
      while (n > 0) {
        if (map == null || from < mapStart || from >= mapStart + map.limit()) {
          remap(from);
        }
        int at = (int) (from - mapStart);
        int k = Math.min(n, map.limit() - at);
        map.get(at, dst, off, k);
        from += k;
        off += k;
        n -= k;
      }
    } catch (IOException e) {
      throw new UncheckedIOException(path + ": read failed at position " + from, e);
    } catch (InternalError e) {
      throw new KafkaLogException("the file changed while being read (truncated?): " + e,
          path, from, null);
    }
  }

  private void remap(long from) throws IOException {
    unmap();
    long n = Math.min(MAP_BYTES, size - from);
    map = channel.map(FileChannel.MapMode.READ_ONLY, from, n);
    mapStart = from;
  }

  private void unmap() {
    if (map != null) {
      Unmapper.unmap(map);
      map = null;
    }
  }

  /** Close the file; a pinned window goes to the pool's pinned arrays (rows still use it). */
  @Override
  public void close() {
    if (pinned) {
      pool.pin(buf);
    } else {
      pool.giveBack(buf);
    }
    buf = new byte[0];
    len = 0;
    unmap();
    try {
      channel.close();
    } catch (IOException e) {
      // read-only: nothing was written that a failed close could lose
    }
  }
}
