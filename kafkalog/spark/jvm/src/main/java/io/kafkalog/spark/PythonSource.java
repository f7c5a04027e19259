package io.kafkalog.spark;

import java.util.Map;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.execution.datasources.DataSourceManager;
import org.apache.spark.sql.execution.datasources.v2.python.PythonDataSourceV2;
import org.apache.spark.sql.types.StructType;

/**
 * The Python {@code kafkalog} data source, reached from the JVM source for what the JVM reader
 * does not do itself: writing ({@code df.write.format("kafkalog")}) and streaming
 * ({@code spark.readStream.format("kafkalog")}).
 *
 * <p>Why this exists: when the jar is on the classpath, {@code format("kafkalog")} resolves to the
 * JVM class {@code kafkalog.DefaultSource} (Spark's {@code DataSource.lookupDataSource} tries the
 * class {@code <name>.DefaultSource} before Python data sources), so writes and streams come here
 * too. They are handed to Spark's own wrapper of the Python source
 * ({@link PythonDataSourceV2}), looked up under the same name in the session's Python data source
 * registry, where {@code pip install kafkalog} (module {@code pyspark_kafkalog}) or
 * {@code kafkalog.spark.register(spark)} put it. The result is exactly what
 * {@code format("kafkalog")} does without the jar.
 */
final class PythonSource {
  private PythonSource() {}

  /** Names the Python source is registered under, tried in order. */
  static final String[] NAMES = {"kafkalog", "kafkalog_python"};

  static Table table(StructType schema, Map<String, String> properties, String purpose) {
    DataSourceManager manager = SparkSession.active().sessionState().dataSourceManager();
    for (String name : NAMES) {
      if (manager.dataSourceExists(name)) {
        PythonDataSourceV2 py = new PythonDataSourceV2();
        py.setShortName(name);
        return py.getTable(schema, new Transform[0], properties);
      }
    }
    throw new UnsupportedOperationException("kafkalog: " + purpose + " uses the Python data "
        + "source, which is not registered in this session: install kafkalog in the Python "
        + "that runs Spark's Python workers (PYSPARK_PYTHON) so PySpark registers it, or call "
        + "kafkalog.spark.register(spark)");
  }

  static SupportsRead readable(StructType schema, Map<String, String> properties, String why) {
    return (SupportsRead) table(schema, properties, why);
  }

  static SupportsWrite writable(StructType schema, Map<String, String> properties) {
    return (SupportsWrite) table(schema, properties, "writing");
  }

  static SupportsRead streamable(StructType schema, Map<String, String> properties) {
    return (SupportsRead) table(schema, properties, "streaming");
  }
}
