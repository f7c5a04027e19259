package io.kafkalog.spark;

import java.util.List;

/** A topic-partition directory and its segments, sorted by base offset (Python's {@code layout.PartitionInfo}). */
final class PartitionInfo {
  final String topic;
  final int partition;
  final String path;
  final List<SegmentInfo> segments;
  /** From the log-start-offset checkpoints, if any. */
  final Long checkpointLogStart;
  /** The last stable offset, set for read_committed readers. */
  Long stableEnd;

  PartitionInfo(String topic, int partition, String path, List<SegmentInfo> segments,
      Long checkpointLogStart) {
    this.topic = topic;
    this.partition = partition;
    this.path = path;
    this.segments = segments;
    this.checkpointLogStart = checkpointLogStart;
  }

  TopicPartition tp() {
    return new TopicPartition(topic, partition);
  }

  String name() {
    return topic + "-" + partition;
  }

  long logEndOffset() {
    if (segments.isEmpty()) {
      return 0;
    }
    SegmentInfo last = segments.get(segments.size() - 1);
    return Math.max(last.nextOffset, last.baseOffset);
  }

  /** Kafka's rule: max(checkpointed log start offset, first segment's base offset). */
  long logStartOffset() {
    long first = segments.isEmpty() ? 0 : segments.get(0).baseOffset;
    if (checkpointLogStart == null) {
      return first;
    }
    return Math.min(Math.max(first, checkpointLogStart), logEndOffset());
  }

  /** Where "latest" is: the last stable offset under read_committed, else the log end offset. */
  long readableEnd() {
    return stableEnd == null ? logEndOffset() : stableEnd;
  }

  /** Exclusive upper bound on offsets in segment {@code i} (next base offset, or log end). */
  long segmentEnd(int i) {
    if (i + 1 < segments.size()) {
      return segments.get(i + 1).baseOffset;
    }
    return logEndOffset();
  }
}
