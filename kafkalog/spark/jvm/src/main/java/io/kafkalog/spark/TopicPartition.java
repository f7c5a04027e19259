package io.kafkalog.spark;

import java.io.Serializable;
import java.util.Objects;

/** A topic-partition (Kafka's {@code TopicPartition}), ordered by topic then partition. */
final class TopicPartition implements Serializable, Comparable<TopicPartition> {
  private static final long serialVersionUID = 1L;
  final String topic;
  final int partition;

  TopicPartition(String topic, int partition) {
    this.topic = topic;
    this.partition = partition;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof TopicPartition)) {
      return false;
    }
    TopicPartition t = (TopicPartition) o;
    return partition == t.partition && topic.equals(t.topic);
  }

  @Override
  public int hashCode() {
    return Objects.hash(topic, partition);
  }

  @Override
  public int compareTo(TopicPartition o) {
    int c = topic.compareTo(o.topic);
    return c != 0 ? c : Integer.compare(partition, o.partition);
  }

  @Override
  public String toString() {
    return topic + "-" + partition;
  }
}
