package io.kafkalog.spark;

import java.io.Serializable;
import java.util.Map;
import java.util.TreeMap;

/**
 * Where reading starts or ends, before it is resolved against the files: Python's
 * {@code options.OffsetSpec}.
 *
 * <p>{@code kind} is {@code earliest}, {@code latest}, {@code offsets} ({@code perPartition} holds
 * offsets with the -2/-1 sentinels of Kafka's offsets JSON), {@code timestamp} (one timestamp for
 * all partitions), {@code timestamps} ({@code perPartition} holds timestamps) or {@code group}
 * (a consumer group's committed offsets, resolved into an {@code offsets} spec by
 * {@link GroupStart} before planning). Partitions absent from {@code perPartition} fall back to
 * {@code defaultOffset}.
 */
final class OffsetSpec implements Serializable {
  private static final long serialVersionUID = 1L;

  static final long EARLIEST = -2;
  static final long LATEST = -1;

  final String kind;
  final Map<TopicPartition, Long> perPartition;
  final long timestamp;
  final long defaultOffset;
  /** {@code group}: the consumer group whose committed offsets start the read. */
  final String group;

  OffsetSpec(String kind, Map<TopicPartition, Long> perPartition, long timestamp,
      long defaultOffset) {
    this(kind, perPartition, timestamp, defaultOffset, null);
  }

  private OffsetSpec(String kind, Map<TopicPartition, Long> perPartition, long timestamp,
      long defaultOffset, String group) {
    this.kind = kind;
    this.perPartition = perPartition == null ? new TreeMap<>() : perPartition;
    this.timestamp = timestamp;
    this.defaultOffset = defaultOffset;
    this.group = group;
  }

  static OffsetSpec group(String group, long defaultOffset) {
    return new OffsetSpec("group", null, 0, defaultOffset, group);
  }

  static OffsetSpec of(String kind, long defaultOffset) {
    return new OffsetSpec(kind, null, 0, defaultOffset);
  }

  /** Whether {@link #forPartition} answers a timestamp (else an offset, maybe a sentinel). */
  boolean isTimestampFor(TopicPartition tp) {
    if (kind.equals("timestamp")) {
      return true;
    }
    return kind.equals("timestamps") && perPartition.containsKey(tp);
  }

  /** The offset (possibly EARLIEST/LATEST) or timestamp for a partition. */
  long forPartition(TopicPartition tp) {
    switch (kind) {
      case "earliest":
        return EARLIEST;
      case "latest":
        return LATEST;
      case "timestamp":
        return timestamp;
      default:
        Long v = perPartition.get(tp);
        return v == null ? defaultOffset : v;
    }
  }
}
