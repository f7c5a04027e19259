package io.kafkalog.spark;

import java.io.Serializable;

/**
 * A byte range of one segment: batches starting in {@code [startPos, endPos)}, records in
 * {@code [startOffset, endOffset)} (Python's {@code planning.Chunk}). Every piece of a cut
 * segment keeps the exact offset range: records of a batch belong to the piece holding the batch
 * start, so no record is read twice or lost at a cut.
 */
final class Chunk implements Serializable {
  private static final long serialVersionUID = 1L;

  final String topic;
  final int partition;
  final String logPath;
  final long startPos;
  final long endPos;
  final long startOffset;
  final long endOffset;
  final long estRecords;
  /** {@code [producerId, firstOffset, markerOffset]} of aborted transactions (read_committed). */
  final long[][] aborted;

  Chunk(String topic, int partition, String logPath, long startPos, long endPos,
      long startOffset, long endOffset, long estRecords, long[][] aborted) {
    this.topic = topic;
    this.partition = partition;
    this.logPath = logPath;
    this.startPos = startPos;
    this.endPos = endPos;
    this.startOffset = startOffset;
    this.endOffset = endOffset;
    this.estRecords = estRecords;
    this.aborted = aborted;
  }

  long nbytes() {
    return endPos - startPos;
  }

  @Override
  public String toString() {
    return topic + "-" + partition + "[" + startPos + ", " + endPos + ") offsets [" + startOffset
        + ", " + endOffset + ")";
  }
}
