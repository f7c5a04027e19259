package io.kafkalog.spark;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;

/**
 * A read-only {@code .log} file seen through a sliding window of heap bytes, filled with
 * {@code pread}; never a memory map.
 *
 * <p>Why not a map: a writer in another process cuts files while readers look at them (roll trim
 * of a preallocated segment, {@code truncate_to}, recovery), and a mapped page past the new end
 * faults. The project's rule (issue 16, {@code kafkalog/file_copy.py}) is that readers never map
 * such files; this is the JVM side of it. When the file shrinks, a read returns fewer bytes:
 * {@link #size} drops to what was really there and scanners see the data end where it now ends
 * (as Python's {@code FileCopy}).
 *
 * <p>Why a heap window: record parsing reads bytes one at a time, which on a {@code byte[]}
 * compiles to plain loads, {@link java.util.zip.CRC32C} runs its intrinsic over arrays, and rows
 * can point into the array ({@link BinarySliceVector}). The kernel copies into a 256 KiB direct
 * staging buffer (one per thread), which is then copied into the window: measured on the
 * benchmark's 242 MB of segments, {@code FileChannel.read} straight into heap arrays cost 125-160
 * ms of CPU (the JDK's temporary direct buffers are as large as the request and fall out of
 * cache), reads into a 256 KiB direct buffer 40 ms, as much as copying out of a memory map. The
 * window reads ahead {@code windowSize} bytes and grows to hold the largest batch asked for.
 *
 * <p>Invariant: {@code buf[0..len)} holds the file bytes {@code [start, start + len)}. Not
 * thread-safe (one per task or planner call).
 */
final class SegmentFile implements Closeable {
  /** Kernel-to-user copies land in a buffer this size: it stays in the core's cache. */
  private static final int STAGE_BYTES = 256 * 1024;
  private static final ThreadLocal<ByteBuffer> STAGE =
      ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(STAGE_BYTES));

  final String path;
  /** The file's length at open. */
  final long length;
  /** Bytes that exist: the length at open, lowered when a read finds the file shorter. */
  long size;
  private final FileChannel channel;
  private final int windowSize;
  private final BufferPool pool;
  /** Rows of the batch being built point into {@link #buf}: never overwrite it, replace it. */
  boolean pinned;
  byte[] buf;
  long start;
  int len;

  SegmentFile(String path, int windowSize, BufferPool pool) throws IOException {
    this.path = path;
    this.channel = FileChannel.open(Paths.get(path), StandardOpenOption.READ);
    this.length = channel.size();
    this.size = length;
    this.windowSize = windowSize;
    this.pool = pool;
    this.buf = new byte[0];
  }

  SegmentFile(String path, int windowSize) throws IOException {
    this(path, windowSize, new BufferPool());
  }

  /**
   * Make the file bytes {@code [pos, pos + n)} available in {@link #buf} (clipped to the file
   * size, which may drop while reading: check {@link #size} after the call) and return the index
   * of {@code pos} in it.
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
    int target = (int) Math.min(buf.length, Math.max(0, size - start));
    len += read(start + len, buf, len, target - len);
    return 0;
  }

  /** {@code pread} file bytes {@code [from, from + n)} into {@code dst[off..)}; fewer at EOF. */
  private int read(long from, byte[] dst, int off, int n) {
    ByteBuffer stage = STAGE.get();
    int done = 0;
    try {
      while (done < n) {
        stage.clear();
        stage.limit(Math.min(n - done, stage.capacity()));
        int r = channel.read(stage, from + done);
        if (r <= 0) {
          size = Math.min(size, from + done); // the file shrank under us
          break;
        }
        stage.flip();
        stage.get(dst, off + done, r);
        done += r;
      }
    } catch (IOException e) {
      throw new UncheckedIOException(path + ": read failed at position " + (from + done), e);
    }
    return done;
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
    try {
      channel.close();
    } catch (IOException e) {
      // read-only: nothing was written that a failed close could lose
    }
  }
}
