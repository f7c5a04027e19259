package io.kafkalog.spark;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Spark's Kafka source schema (KafkaRecordToRowConverter): key binary, value binary, topic
 * string, partition int, offset long, timestamp timestamp, timestampType int, plus headers
 * {@code array<struct<key:string,value:binary>>} with includeHeaders (null, not empty, when a
 * record has none). The port of Python's {@code kafkalog/spark/schema.py}.
 */
final class KafkaSchema {
  private KafkaSchema() {}

  static final List<String> COLUMNS = Arrays.asList(
      "key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers");

  static final DataType HEADERS = DataTypes.createArrayType(DataTypes.createStructType(
      new StructField[] {
          DataTypes.createStructField("key", DataTypes.StringType, true),
          DataTypes.createStructField("value", DataTypes.BinaryType, true)}), true);

  static DataType type(String column) {
    switch (column) {
      case "key":
      case "value":
        return DataTypes.BinaryType;
      case "topic":
        return DataTypes.StringType;
      case "partition":
      case "timestampType":
        return DataTypes.IntegerType;
      case "offset":
        return DataTypes.LongType;
      case "timestamp":
        return DataTypes.TimestampType;
      case "headers":
        return HEADERS;
      default:
        throw new IllegalArgumentException(column);
    }
  }

  /** The 7 Kafka columns, plus headers if asked (the schema the source infers). */
  static List<String> defaultColumns(boolean includeHeaders) {
    return includeHeaders ? COLUMNS : COLUMNS.subList(0, 7);
  }

  static StructType schema(List<String> columns) {
    List<StructField> fields = new ArrayList<>();
    for (String c : columns) {
      fields.add(DataTypes.createStructField(c, type(c), true));
    }
    return DataTypes.createStructType(fields);
  }

  /**
   * Check a user {@code .schema(...)} and return its column names: every field must be a Kafka
   * column with Spark's Kafka type; order is free (Python's {@code projection_from_schema}).
   */
  static List<String> projection(StructType schema) {
    List<String> names = new ArrayList<>();
    for (StructField f : schema.fields()) {
      if (!COLUMNS.contains(f.name())) {
        throw new ConfigException("schema: unknown column " + PyRepr.str(f.name())
            + " (expected a subset of " + String.join(", ", COLUMNS) + ")");
      }
      String want = type(f.name()).simpleString();
      if (!f.dataType().simpleString().equals(want)) {
        throw new ConfigException("schema: column " + PyRepr.str(f.name()) + " must be " + want
            + ", found " + f.dataType().simpleString());
      }
      names.add(f.name());
    }
    Set<String> unique = new HashSet<>(names);
    if (unique.size() != names.size()) {
      throw new ConfigException("schema: duplicate column names in " + pyList(names));
    }
    return names;
  }

  private static String pyList(List<String> names) {
    StringBuilder b = new StringBuilder("[");
    for (int i = 0; i < names.size(); i++) {
      b.append(i == 0 ? "" : ", ").append(PyRepr.str(names.get(i)));
    }
    return b.append(']').toString();
  }
}
