package kafkalog;

import io.kafkalog.spark.KafkaLogProvider;

/**
 * {@code spark.read.format("kafkalog")}: Spark's {@code DataSource.lookupDataSource} loads the
 * class {@code kafkalog.DefaultSource} when no {@code DataSourceRegister} claims the name and
 * before it looks at Python data sources. Registering the JVM source this way (rather than under
 * the short name "kafkalog" in {@code META-INF/services}) avoids Spark's "found multiple data
 * sources" error when the Python source of the same name is also registered, as
 * {@code pip install kafkalog} does in every session.
 */
public class DefaultSource extends KafkaLogProvider {}
