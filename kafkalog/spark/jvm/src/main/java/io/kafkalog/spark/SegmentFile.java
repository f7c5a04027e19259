package io.kafkalog.spark;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;

/**
 * A read-only {@code .log} file seen through a sliding window of heap bytes.
 *
 * <p>Why a heap window rather than a memory map: record parsing reads bytes one at a time, which
 * on a {@code byte[]} compiles to plain loads, and {@link java.util.zip.CRC32C} runs its
 * intrinsic over arrays. The window reads ahead ({@code windowSize} bytes, grown to hold the
 * largest batch asked for), so a sequential walk costs one {@code pread} per window.
 *
 * <p>Invariant: {@code buf[0..len)} holds the file bytes {@code [start, start + len)}. The size is
 * taken once at open, like Python's {@code mmap} of the file at read time: bytes appended later
 * are not seen. Not thread-safe (one per task or planner call).
 */
final class SegmentFile implements Closeable {
  final String path;
  final long size;
  private final FileChannel channel;
  private final int windowSize;
  byte[] buf;
  long start;
  int len;
  /** Bytes read from the file so far (statistics). */
  long bytesRead;

  SegmentFile(String path, int windowSize) throws IOException {
    this.path = path;
    this.channel = FileChannel.open(Paths.get(path), StandardOpenOption.READ);
    this.size = channel.size();
    this.windowSize = windowSize;
    this.buf = new byte[0];
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
    if (buf.length < cap) {
      byte[] nb = new byte[Math.max(cap, Math.min(windowSize, buf.length * 2))];
      buf = nb;
      start = pos;
      len = 0;
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
    try {
      ByteBuffer bb = ByteBuffer.wrap(buf, len, target - len);
      while (len < target) {
        int r = channel.read(bb, start + len);
        if (r < 0) {
          break;
        }
        len += r;
        bytesRead += r;
      }
    } catch (IOException e) {
      throw new UncheckedIOException(path + ": read failed at position " + (start + len), e);
    }
    return 0;
  }

  @Override
  public void close() {
    try {
      channel.close();
    } catch (IOException e) {
      // read-only: nothing was written that a failed close could lose
    }
  }
}
