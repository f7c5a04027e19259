package io.kafkalog.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownFilters;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * Filter pushdown ({@link Pushdown}: topic/partition/offset claimed, timestamp used through the
 * {@code .timeindex} and returned) and column pruning (only the columns a query reads are
 * built: {@code count(*)} decodes no key or value bytes into vectors).
 *
 * <p>One case is handed to the Python source whole: {@code startingOffsetsFromGroup} in a JVM
 * where no {@link GroupOffsets} resolver was installed ({@link GroupStart}). Then no filter is
 * claimed and no column pruned (Spark applies them all after the Python scan).
 */
final class KafkaLogScanBuilder
    implements ScanBuilder, SupportsPushDownFilters, SupportsPushDownRequiredColumns {
  private final CaseInsensitiveStringMap options;
  private final StructType tableSchema;
  private List<String> columns;
  private Pushdown.Result pushed = new Pushdown.Result(new Bounds(), new ArrayList<>(),
      new ArrayList<>());

  private final boolean python;

  KafkaLogScanBuilder(CaseInsensitiveStringMap options, StructType tableSchema) {
    this.options = options;
    this.tableSchema = tableSchema;
    this.columns = names(tableSchema);
    this.python = GroupStart.needed(options) && !GroupStart.canResolve();
  }

  private static List<String> names(StructType s) {
    List<String> out = new ArrayList<>();
    for (StructField f : s.fields()) {
      out.add(f.name());
    }
    return out;
  }

  @Override
  public Filter[] pushFilters(Filter[] filters) {
    if (python) {
      return filters;
    }
    pushed = Pushdown.analyze(filters);
    return pushed.rest.toArray(new Filter[0]);
  }

  @Override
  public Filter[] pushedFilters() {
    return pushed.claimed.toArray(new Filter[0]);
  }

  @Override
  public void pruneColumns(StructType requiredSchema) {
    if (python) {
      return;
    }
    List<String> want = names(requiredSchema);
    List<String> out = new ArrayList<>();
    for (String c : names(tableSchema)) {
      if (want.contains(c)) {
        out.add(c);
      }
    }
    columns = out;
  }

  @Override
  public Scan build() {
    if (python) {
      return PythonSource.readable(tableSchema, options.asCaseSensitiveMap(),
          "startingOffsetsFromGroup without kafkalog.spark.register(spark)")
          .newScanBuilder(options).build();
    }
    return new KafkaLogScan(options, tableSchema, columns, pushed);
  }
}
