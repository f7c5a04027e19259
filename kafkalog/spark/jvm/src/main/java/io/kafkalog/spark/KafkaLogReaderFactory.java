package io.kafkalog.spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/** Makes a task's reader on the executor: columnar by default ({@code columnarReads}). */
final class KafkaLogReaderFactory implements PartitionReaderFactory {
  private static final long serialVersionUID = 1L;

  private final ReadSettings settings;

  KafkaLogReaderFactory(ReadSettings settings) {
    this.settings = settings;
  }

  @Override
  public boolean supportColumnarReads(InputPartition partition) {
    return settings.columnar;
  }

  @Override
  public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition partition) {
    return new KafkaLogColumnarReader((KafkaLogInputPartition) partition, settings);
  }

  @Override
  public PartitionReader<InternalRow> createReader(InputPartition partition) {
    return new KafkaLogRowReader((KafkaLogInputPartition) partition, settings);
  }
}
