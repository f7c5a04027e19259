package io.kafkalog.spark;

import java.io.Serializable;

/**
 * What every task of a query needs besides its chunks (Python's {@code read.ReadSettings}):
 * shipped once with the reader factory.
 */
final class ReadSettings implements Serializable {
  private static final long serialVersionUID = 1L;

  /** The projected columns, in output order (names from {@link KafkaSchema#COLUMNS}). */
  String[] columns;
  boolean failOnDataLoss = true;
  int maxRecordsPerBatch = ReadOptions.DEFAULT_MAX_RECORDS_PER_BATCH;
  Long timestampLoMs;
  /** Sorted; null: no IN filter on offset. */
  long[] offsetIn;
  /** Sorted. */
  long[] offsetsExcluded = new long[0];
  String metricsDir;
  boolean checkCrcs = true;
  boolean columnar = true;
  int batchRows = ReadOptions.DEFAULT_COLUMNAR_BATCH_ROWS;
}
