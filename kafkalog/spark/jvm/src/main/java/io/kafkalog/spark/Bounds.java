package io.kafkalog.spark;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * What the claimed filters (and timestamp hints) allow; {@code null} means unrestricted. The
 * port of Python's {@code pushdown.Bounds}; built by {@link Pushdown}.
 */
final class Bounds implements Serializable {
  private static final long serialVersionUID = 1L;

  Set<String> topics;
  Set<String> topicsExcluded = new TreeSet<>();
  List<String> topicPrefixes = new ArrayList<>();
  List<String> topicSuffixes = new ArrayList<>();
  List<String> topicContains = new ArrayList<>();
  Set<Long> partitions;
  Set<Long> partitionsExcluded = new TreeSet<>();
  /** Inclusive. */
  Long partitionLo;
  /** Inclusive. */
  Long partitionHi;
  /** Inclusive. */
  Long offsetLo;
  /** Exclusive. */
  Long offsetHi;
  Set<Long> offsetIn;
  Set<Long> offsetsExcluded = new TreeSet<>();
  /** Pruning hint only (never claimed). */
  Long timestampLoMs;

  static <T> Set<T> intersect(Set<T> a, Collection<T> b) {
    Set<T> out = new TreeSet<>(b);
    if (a != null) {
      out.retainAll(a);
    }
    return out;
  }

  /** Whether a topic-partition can hold rows passing the claimed filters. */
  boolean allows(String topic, int partition) {
    if (topics != null && !topics.contains(topic)) {
      return false;
    }
    if (topicsExcluded.contains(topic)) {
      return false;
    }
    for (String p : topicPrefixes) {
      if (!topic.startsWith(p)) {
        return false;
      }
    }
    for (String p : topicSuffixes) {
      if (!topic.endsWith(p)) {
        return false;
      }
    }
    for (String p : topicContains) {
      if (!topic.contains(p)) {
        return false;
      }
    }
    long pl = partition;
    if (partitions != null && !partitions.contains(pl)) {
      return false;
    }
    if (partitionsExcluded.contains(pl)) {
      return false;
    }
    if (partitionLo != null && pl < partitionLo) {
      return false;
    }
    return partitionHi == null || pl <= partitionHi;
  }

  /** {@code [lo, hi)} implied by every offset filter ({@code IN} included); nulls: unbounded. */
  Long[] offsetRange() {
    Long lo = offsetLo;
    Long hi = offsetHi;
    if (offsetIn != null) {
      if (offsetIn.isEmpty()) {
        return new Long[] {0L, 0L};
      }
      long min = ((TreeSet<Long>) offsetIn).first();
      long top = ((TreeSet<Long>) offsetIn).last() + 1;
      lo = lo != null ? Math.max(lo, min) : min;
      hi = hi != null ? Math.min(hi, top) : top;
    }
    return new Long[] {lo, hi};
  }
}
