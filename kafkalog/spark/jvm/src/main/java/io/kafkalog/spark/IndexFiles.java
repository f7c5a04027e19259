package io.kafkalog.spark;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

/**
 * Read-only readers for a segment's {@code .index}, {@code .timeindex} and {@code .txnindex}
 * (spec section 5), with the trust rules of Python's {@code spark/layout.py}: every whole slot is
 * an entry (entries = length / entry size, spec 5.1), entries stop before the preallocated zero
 * tail of an active segment (the first entry i &gt; 0 whose relative offset is 0, Kafka's
 * DumpLogSegments rule), and an index that is not increasing or points past the {@code .log} is
 * ignored (planning then walks batch headers instead).
 */
final class IndexFiles {
  private IndexFiles() {}

  private static byte[] readAll(String path) {
    try {
      return Files.readAllBytes(Paths.get(path));
    } catch (NoSuchFileException e) {
      return null;
    } catch (IOException e) {
      return null;
    }
  }

  /** {@code [absoluteOffsets, positions]} of a {@code .index} (8-byte entries, spec 5.2), or empty. */
  static long[][] offsetIndex(String path, long base, long logSize) {
    long[][] empty = {new long[0], new long[0]};
    byte[] b = readAll(path);
    if (b == null) {
      return empty;
    }
    int n = b.length / 8;
    long[] rel = new long[n];
    long[] pos = new long[n];
    for (int i = 0; i < n; i++) {
      rel[i] = ByteUtils.readInt(b, i * 8);
      pos[i] = ByteUtils.readInt(b, i * 8 + 4);
    }
    // entries before the preallocated zero tail
    int valid = n;
    if (n > 1) {
      for (int i = 1; i < n; i++) {
        if (rel[i] == 0) {
          valid = i;
          break;
        }
      }
    }
    if (valid > 0) {
      boolean bad = rel[0] < 0 || pos[0] < 0 || pos[valid - 1] >= Math.max(logSize, 1);
      for (int i = 1; i < valid && !bad; i++) {
        bad = rel[i] <= rel[i - 1] || pos[i] < pos[i - 1];
      }
      if (bad) {
        return empty;
      }
    }
    long[] offs = new long[valid];
    long[] poss = new long[valid];
    for (int i = 0; i < valid; i++) {
      offs[i] = rel[i] + base;
      poss[i] = pos[i];
    }
    return new long[][] {offs, poss};
  }

  /** {@code [timestamps, absoluteOffsets]} of a {@code .timeindex} (12-byte entries, spec 5.3), or empty. */
  static long[][] timeIndex(String path, long base) {
    long[][] empty = {new long[0], new long[0]};
    byte[] b = readAll(path);
    if (b == null) {
      return empty;
    }
    int n = b.length / 12;
    long[] ts = new long[n];
    long[] rel = new long[n];
    for (int i = 0; i < n; i++) {
      ts[i] = ByteUtils.readLong(b, i * 12);
      rel[i] = ByteUtils.readInt(b, i * 12 + 8);
    }
    int valid = n;
    if (n > 1) {
      for (int i = 1; i < n; i++) {
        if (ts[i] == 0 && rel[i] == 0) {
          valid = i;
          break;
        }
      }
    }
    for (int i = 1; i < valid; i++) {
      if (ts[i] <= ts[i - 1] || rel[i] < rel[i - 1]) {
        return empty;
      }
    }
    long[] outTs = new long[valid];
    long[] outOff = new long[valid];
    for (int i = 0; i < valid; i++) {
      outTs[i] = ts[i];
      outOff[i] = rel[i] + base;
    }
    return new long[][] {outTs, outOff};
  }

  /**
   * Aborted transactions of a {@code .txnindex} (34-byte entries, spec 5.4): {@code [producerId,
   * firstOffset, lastOffset]} each (records of that producer in [first, last) from transactional
   * batches were aborted; last is the ABORT marker's offset). A trailing partial entry is
   * ignored; the version is the entry's first byte, signed (Kafka's quirk), and must be 0.
   */
  static List<long[]> abortedTxns(String path) {
    List<long[]> out = new ArrayList<>();
    byte[] b = readAll(path);
    if (b == null) {
      return out;
    }
    int n = b.length / 34;
    for (int i = 0; i < n; i++) {
      int at = i * 34;
      int version = b[at];
      if (version > 0) {
        throw new CorruptIndexException("unexpected aborted transaction version (expected at "
            + "most 0, found " + version + ")", path, (long) at, null);
      }
      out.add(new long[] {ByteUtils.readLong(b, at + 2), ByteUtils.readLong(b, at + 10),
          ByteUtils.readLong(b, at + 18)});
    }
    return out;
  }
}
