package io.kafkalog.spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * Rows instead of batches ({@code columnarReads=false}): the columnar reader's batches, one
 * {@link InternalRow} view at a time. Kept to measure row versus columnar output (see the
 * benchmark); Spark then projects every row to an {@code UnsafeRow}.
 */
final class KafkaLogRowReader implements PartitionReader<InternalRow> {
  private final KafkaLogColumnarReader batches;
  private ColumnarBatch batch;
  private int row;
  private int rows;

  KafkaLogRowReader(KafkaLogInputPartition task, ReadSettings settings) {
    this.batches = new KafkaLogColumnarReader(task, settings);
  }

  @Override
  public boolean next() {
    while (row + 1 >= rows) {
      if (!batches.next()) {
        return false;
      }
      batch = batches.get();
      rows = batch.numRows();
      row = -1;
    }
    row++;
    return true;
  }

  @Override
  public InternalRow get() {
    return batch.getRow(row);
  }

  @Override
  public void close() {
    batches.close();
  }
}
