package io.kafkalog.spark;

import java.io.IOException;
import java.nio.file.NoSuchFileException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decode the batches of one {@link Chunk} into {@link ColumnBatchBuilder}s: the port of Python's
 * {@code read._ChunkReader}, with the same selection, checks and failOnDataLoss behaviour.
 *
 * <p>Batch headers are walked from {@code startPos} ({@link EntryScanner}); only batches that can
 * hold wanted rows are decoded: not control batches, not batches entirely outside
 * {@code [startOffset, endOffset)} or (with {@code offset IN (...)}) holding none of the wanted
 * offsets, not batches whose maxTimestamp is below a pushed {@code timestamp >=} bound, and with
 * {@code read_committed} not the transactional batches of a producer inside one of its aborted
 * transactions ({@code .txnindex}, collected at planning).
 *
 * <p>Corruption: with failOnDataLoss=true the first bad batch throws, naming the {@code .log}
 * and byte position. With false, a batch with a bad CRC or bad records is skipped whole; a bad
 * batch header (size or magic) skips to the next {@code .index} position; a segment deleted or
 * cut by its writer since planning is skipped (the rest of it). Skips are counted
 * ({@code metricsDir}) and logged.
 */
final class ChunkReader implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger("kafkalog.spark");
  /**
   * {@code .log} bytes read ahead per window (grown for a larger batch). Small enough that
   * the bytes are still in cache when CRC-32C and the record parser read them: measured with
   * Spark on the benchmark's uncompressed segments, 1 MiB windows cost 0.43 s of CPU where 8 MiB
   * windows cost 0.64 s.
   */
  static final int WINDOW_BYTES = 1 << 20;

  private final Chunk chunk;
  private final ReadSettings settings;
  private final ReadStats stats;
  private final Codecs codecs;
  private final RecordBatchDecoder v2;
  private final LegacyDecoder legacy;
  private final BufferPool pool;
  private final LogEntry entry = new LogEntry();
  private SegmentFile file;
  private long pos;
  private long end;
  private boolean done;

  ChunkReader(Chunk chunk, ReadSettings settings, ReadStats stats, Codecs codecs,
      RecordBatchDecoder v2, LegacyDecoder legacy, BufferPool pool) {
    this.chunk = chunk;
    this.settings = settings;
    this.stats = stats;
    this.codecs = codecs;
    this.v2 = v2;
    this.legacy = legacy;
    this.pool = pool;
    try {
      file = new SegmentFile(chunk.logPath, WINDOW_BYTES, pool);
    } catch (NoSuchFileException e) {
      failOrSkip(new KafkaLogException("segment deleted before it could be read (retention?); "
          + "offsets [" + chunk.startOffset + ", " + chunk.endOffset + ") of " + chunk.topic + "-"
          + chunk.partition + " are lost", chunk.logPath, null, null));
      stats.missingSegmentsSkipped++;
      done = true;
      return;
    } catch (IOException e) {
      throw new KafkaLogException("cannot open segment: " + e, chunk.logPath, null, null);
    }
    stats.chunks++;
    pos = chunk.startPos;
    end = chunk.endPos;
  }

  private void failOrSkip(KafkaLogException err) {
    if (settings.failOnDataLoss) {
      throw err;
    }
    LOG.warn("kafkalog: skipping corrupt data (failOnDataLoss=false): {}", err.getMessage());
  }

  /** Whether a scanned batch can hold wanted rows (Python's {@code read._select}). */
  private boolean select(LogEntry e) {
    boolean v2batch = e.isV2();
    if (e.lastOffset < chunk.startOffset) {
      return false;
    }
    if (v2batch && e.baseOffset >= chunk.endOffset) {
      return false;
    }
    if (e.isControl()) {
      return false;
    }
    if (settings.timestampLoMs != null && e.maxTimestamp < settings.timestampLoMs) {
      return false;
    }
    long[] in = settings.offsetIn;
    if (in != null && v2batch) {
      int lo = ByteUtils.searchLeft(in, in.length, e.baseOffset);
      int hi = ByteUtils.searchRight(in, in.length, e.lastOffset);
      if (hi <= lo) {
        return false;
      }
    }
    if (chunk.aborted.length > 0 && e.isTransactional()) {
      for (long[] a : chunk.aborted) {
        if (e.producerId == a[0] && e.baseOffset >= a[1] && e.lastOffset < a[2]) {
          return false;
        }
      }
    }
    return true;
  }

  /** The first {@code .index} position past {@code after} (to resume after a corrupt header). */
  private Long nextIndexPosition(long after) {
    String name = chunk.logPath.substring(chunk.logPath.lastIndexOf('/') + 1);
    Long base = LogLayout.offsetFromFilename(name);
    if (base == null) {
      return null;
    }
    String dir = chunk.logPath.substring(0, Math.max(0, chunk.logPath.lastIndexOf('/')));
    byte[] b;
    try {
      b = java.nio.file.Files.readAllBytes(java.nio.file.Paths.get(
          LogLayout.segmentFile(dir, base, ".index")));
    } catch (IOException e) {
      return null;
    }
    Long best = null;
    for (int i = 0; i + 8 <= b.length; i += 8) {
      long p = ByteUtils.readInt(b, i + 4);
      if (p > after && (best == null || p < best)) {
        best = p;
      }
    }
    return best;
  }

  /**
   * Decode the next selected entry into {@code out}; false at the end of the chunk. Arrays that
   * the added rows point into are pinned until the batch has been consumed.
   */
  private boolean advance(ColumnBatchBuilder out) {
    while (pos < end) {
      int r = EntryScanner.next(file, pos, end, entry);
      if (r == EntryScanner.ENTRY) {
        int i = file.ensure(entry.position, entry.size);
        if (entry.end() > file.size) {
          r = EntryScanner.STOP_PARTIAL; // the file shrank under the batch: it ends before it
        } else {
          stats.batchesScanned++;
          pos = entry.end();
          if (!select(entry)) {
            stats.batchesSkipped++;
            continue;
          }
          int mark = out.mark();
          try {
            if (entry.isV2()) {
              v2.decode(file.buf, i, entry, settings.checkCrcs, codecs, out, chunk.logPath);
            } else {
              legacy.decode(file.buf, i, entry, settings.checkCrcs, codecs, out, chunk.logPath);
            }
          } catch (KafkaLogException err) {
            failOrSkip(err);
            stats.corruptBatchesSkipped++;
            stats.corruptBytesSkipped += entry.size;
            continue;
          }
          stats.batchesDecoded++;
          stats.bytesDecoded += entry.size;
          if (out.rows > mark) {
            stats.rows += out.rows - mark;
            if ((entry.attributes & LogEntry.ATTR_CODEC_MASK) != 0) {
              pool.pin(codecs.out); // rows point into the decompressed bytes
              codecs.out = null;
            } else {
              file.pinned = true; // rows point into the window
            }
          }
          return true;
        }
      }
      if (file.size < end) {
        // cut since planning (truncate_to or recovery by its writer): the planned batches past
        // the new end are gone (Python's read._ChunkReader, issue 16)
        failOrSkip(new KafkaLogException("segment shrank to " + file.size + " bytes since "
            + "planning (truncated by its writer); offsets of [" + chunk.startOffset + ", "
            + chunk.endOffset + ") of " + chunk.topic + "-" + chunk.partition + " stored past "
            + "it are lost", chunk.logPath, file.size, null));
        stats.missingSegmentsSkipped++;
        break;
      }
      if (r == EntryScanner.STOP_END || pos >= end) {
        break;
      }
      if (r == EntryScanner.STOP_PARTIAL && end >= file.length) {
        break; // torn tail of an active segment: not (yet) data
      }
      // planning ended the range before a zero-filled preallocated tail, so anything else that
      // stops the walk inside the range is corruption
      failOrSkip(new CorruptRecordException(EntryScanner.reason(r) + " in " + chunk.topic + "-"
          + chunk.partition, chunk.logPath, pos, null));
      Long resume = nextIndexPosition(pos);
      long skippedTo = resume != null && resume < end ? resume : end;
      stats.corruptBatchesSkipped++;
      stats.corruptBytesSkipped += skippedTo - pos;
      pos = skippedTo;
    }
    done = true;
    return false;
  }

  /**
   * Decode whole entries into {@code b} until it holds at least {@code targetRows} rows or the
   * chunk ends (an entry is never split across batches). Returns false once the chunk is done.
   */
  boolean fill(ColumnBatchBuilder b, int targetRows) {
    while (!done) {
      if (b.rows >= targetRows) {
        return true;
      }
      if (!advance(b)) {
        return false;
      }
    }
    return false;
  }

  /** The batch built so far has been consumed: the window may be overwritten again. */
  void unpin() {
    if (file != null) {
      file.pinned = false;
    }
  }

  @Override
  public void close() {
    if (file != null) {
      file.close();
      file = null;
    }
  }
}
