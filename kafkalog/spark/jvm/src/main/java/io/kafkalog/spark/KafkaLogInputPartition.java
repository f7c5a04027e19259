package io.kafkalog.spark;

import java.util.List;
import org.apache.spark.sql.connector.read.InputPartition;

/** What one Spark task reads: paths, byte ranges and offsets only (Python's {@code planning.ReadTask}). */
final class KafkaLogInputPartition implements InputPartition {
  private static final long serialVersionUID = 1L;

  final int index;
  final Chunk[] chunks;

  KafkaLogInputPartition(int index, List<Chunk> chunks) {
    this.index = index;
    this.chunks = chunks.toArray(new Chunk[0]);
  }

  long nbytes() {
    long n = 0;
    for (Chunk c : chunks) {
      n += c.nbytes();
    }
    return n;
  }
}
