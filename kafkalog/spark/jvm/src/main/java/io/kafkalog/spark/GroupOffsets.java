package io.kafkalog.spark;

/**
 * Resolves {@code startingOffsetsFromGroup}: a consumer group's committed offsets, read from the
 * {@code __consumer_offsets} partitions under the paths as Kafka's group coordinator loads them.
 *
 * <p>Implemented in Python by {@code kafkalog.spark.jvm} (a py4j callback installed by
 * {@code kafkalog.spark.register(spark)}), so the group offsets come from the package's one
 * implementation ({@code kafkalog.groups.metadata_manager}, via
 * {@code kafkalog.spark.planning.resolve_group_start}) rather than a second one here.
 */
public interface GroupOffsets {
  /**
   * @param optionsJson the read's options as a JSON object
   * @return {@code {"topic": {"partition": offset}}} for the selected partitions, or
   *     {@code {"__error__": "message"}} when the resolution failed
   */
  String committedOffsets(String optionsJson);
}
