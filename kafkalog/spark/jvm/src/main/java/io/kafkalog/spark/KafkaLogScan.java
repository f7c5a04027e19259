package io.kafkalog.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A batch scan: plans InputPartitions on the driver ({@link Planner}) and ships
 * {@link ReadSettings} to the executors. Streaming scans are handed to the Python source
 * ({@link PythonSource}).
 */
final class KafkaLogScan implements Scan, Batch {
  private final CaseInsensitiveStringMap options;
  private final StructType tableSchema;
  private final List<String> columns;
  private final Pushdown.Result pushed;
  private ReadOptions parsed;

  KafkaLogScan(CaseInsensitiveStringMap options, StructType tableSchema, List<String> columns,
      Pushdown.Result pushed) {
    this.options = options;
    this.tableSchema = tableSchema;
    this.columns = columns;
    this.pushed = pushed;
  }

  private ReadOptions opts() {
    if (parsed == null) {
      parsed = ReadOptions.parse(options, false);
    }
    return parsed;
  }

  @Override
  public StructType readSchema() {
    return KafkaSchema.schema(columns);
  }

  @Override
  public String description() {
    List<String> f = new ArrayList<>();
    for (Filter x : pushed.claimed) {
      f.add(x.toString());
    }
    return "kafkalog (JVM reader) " + options.get("path") + " PushedFilters: " + f;
  }

  @Override
  public Batch toBatch() {
    opts();
    return this;
  }

  @Override
  public InputPartition[] planInputPartitions() {
    ReadOptions o = GroupStart.resolve(opts(), options.asCaseSensitiveMap());
    Planner.Plan plan = Planner.plan(o, pushed.bounds);
    InputPartition[] out = new InputPartition[plan.tasks.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = new KafkaLogInputPartition(i, plan.tasks.get(i));
    }
    return out;
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    ReadOptions o = opts();
    Bounds b = pushed.bounds;
    ReadSettings s = new ReadSettings();
    s.columns = columns.toArray(new String[0]);
    s.failOnDataLoss = o.failOnDataLoss;
    s.maxRecordsPerBatch = o.maxRecordsPerBatch;
    s.timestampLoMs = b.timestampLoMs;
    s.offsetIn = b.offsetIn == null ? null : toSorted(b.offsetIn);
    s.offsetsExcluded = toSorted(b.offsetsExcluded);
    s.metricsDir = o.metricsDir;
    s.checkCrcs = o.checkCrcs;
    s.columnar = o.columnarReads;
    s.batchRows = o.columnarBatchRows;
    return new KafkaLogReaderFactory(s);
  }

  private static long[] toSorted(java.util.Set<Long> set) {
    long[] out = new long[set.size()];
    int i = 0;
    for (long v : new java.util.TreeSet<>(set)) {
      out[i++] = v;
    }
    return out;
  }

  @Override
  public MicroBatchStream toMicroBatchStream(String checkpointLocation) {
    return PythonSource.streamable(tableSchema, options.asCaseSensitiveMap())
        .newScanBuilder(options).build().toMicroBatchStream(checkpointLocation);
  }
}
