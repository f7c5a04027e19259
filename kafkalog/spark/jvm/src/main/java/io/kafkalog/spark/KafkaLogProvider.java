package io.kafkalog.spark;

import java.util.Map;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The JVM {@code kafkalog} data source (Spark DataSource V2): reads Kafka log directories with
 * the schema, options, splits and errors of the Python source, at the speed of Spark's own file
 * readers.
 *
 * <p>Names. {@code format("kafkalog")} reaches this class through {@link kafkalog.DefaultSource}
 * (Spark looks up {@code <name>.DefaultSource} before Python data sources), so the jar on the
 * classpath switches batch reads to the JVM reader, and without it the same name reaches the
 * Python source. {@code format("kafkalog_jvm")} (this class's {@link DataSourceRegister} name)
 * always means the JVM reader.
 *
 * <pre>
 *   spark.read.format("kafkalog").option("subscribe", "orders").load("/var/lib/kafka/data")
 * </pre>
 */
public class KafkaLogProvider implements TableProvider, DataSourceRegister {
  @Override
  public String shortName() {
    return "kafkalog_jvm";
  }

  /** The Kafka schema; options are validated here, as the Python source's {@code schema()} does. */
  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    ReadOptions o = ReadOptions.parse(options, false);
    return KafkaSchema.schema(KafkaSchema.defaultColumns(o.includeHeaders));
  }

  @Override
  public boolean supportsExternalMetadata() {
    return true; // a user .schema(...) naming a subset of the columns is the projection
  }

  @Override
  public Table getTable(StructType schema, Transform[] partitioning,
      Map<String, String> properties) {
    KafkaSchema.projection(schema);
    return new KafkaLogTable(schema, properties);
  }
}
