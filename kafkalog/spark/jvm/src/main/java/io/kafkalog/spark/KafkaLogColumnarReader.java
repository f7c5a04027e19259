package io.kafkalog.spark;

import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * The executor side of one task: its chunks, in order, as {@link ColumnarBatch}es of whole Kafka
 * batches, closed once they hold {@code columnarBatchRows} rows (default 16384, capped by
 * {@code maxRecordsPerBatch}): Python's {@code read.read_chunks}. A batch never spans two chunks
 * (its topic/partition columns are constants). The batch object is reused by the next call, as
 * Spark's Parquet reader does.
 */
final class KafkaLogColumnarReader implements PartitionReader<ColumnarBatch> {
  private final KafkaLogInputPartition task;
  private final ReadSettings settings;
  private final ReadStats stats = new ReadStats();
  private final BufferPool pool = new BufferPool();
  private final Codecs codecs = new Codecs(Codecs.DEFAULT_MAX_DECOMPRESSED, pool);
  private final RecordBatchDecoder v2 = new RecordBatchDecoder();
  private final LegacyDecoder legacy = new LegacyDecoder();
  private final ColumnBatchBuilder builder;
  private final int targetRows;
  private ChunkReader current;
  private int nextChunk;
  private ColumnarBatch batch;
  private boolean closed;

  KafkaLogColumnarReader(KafkaLogInputPartition task, ReadSettings settings) {
    this.task = task;
    this.settings = settings;
    this.targetRows = Math.max(1, Math.min(settings.batchRows, settings.maxRecordsPerBatch));
    this.builder = new ColumnBatchBuilder(settings.columns, targetRows, settings.offsetIn,
        settings.offsetsExcluded);
  }

  @Override
  public boolean next() {
    long t0 = System.nanoTime();
    try {
      while (true) {
        if (current == null) {
          if (nextChunk >= task.chunks.length) {
            return false;
          }
          currentChunk = task.chunks[nextChunk++];
          current = new ChunkReader(currentChunk, settings, stats, codecs, v2, legacy, pool);
        }
        // every batch starts empty: the previous one has been consumed by now, so the arrays
        // its rows pointed into are free again
        pool.releasePinned();
        current.unpin();
        builder.begin(currentChunk.topic, currentChunk.partition, currentChunk.startOffset,
            currentChunk.endOffset);
        boolean more = current.fill(builder, targetRows);
        if (!more) {
          current.close();
          current = null;
        }
        if (builder.rows > 0) {
          batch = builder.finish();
          return true;
        }
      }
    } finally {
      stats.seconds += (System.nanoTime() - t0) / 1e9;
    }
  }

  private Chunk currentChunk;

  @Override
  public ColumnarBatch get() {
    return batch;
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (current != null) {
      current.close();
    }
    codecs.close();
    builder.close();
    if (settings.metricsDir != null) {
      stats.write(settings.metricsDir, task.index);
    }
  }
}
