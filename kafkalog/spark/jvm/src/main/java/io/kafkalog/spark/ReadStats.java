package io.kafkalog.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.UUID;

/**
 * Counters of one task, written as one JSON file to {@code metricsDir} when set: the same file
 * and fields as Python's {@code read.ReadStats}, so tests and benchmarks read either reader's.
 */
final class ReadStats {
  long chunks;
  long batchesScanned;
  long batchesDecoded;
  long batchesSkipped;
  long bytesDecoded;
  long rows;
  long corruptBatchesSkipped;
  long corruptBytesSkipped;
  long missingSegmentsSkipped;
  /** Wall time inside the reader (not the time Spark spends between batches). */
  double seconds;

  void write(String directory, int task) {
    String json = "{\"task\": " + task + ", \"chunks\": " + chunks + ", \"batches_scanned\": "
        + batchesScanned + ", \"batches_decoded\": " + batchesDecoded + ", \"batches_skipped\": "
        + batchesSkipped + ", \"bytes_decoded\": " + bytesDecoded + ", \"rows\": " + rows
        + ", \"corrupt_batches_skipped\": " + corruptBatchesSkipped
        + ", \"corrupt_bytes_skipped\": " + corruptBytesSkipped
        + ", \"missing_segments_skipped\": " + missingSegmentsSkipped + ", \"seconds\": "
        + seconds + ", \"reader\": \"jvm\"}";
    try {
      Path dir = Paths.get(directory);
      Files.createDirectories(dir);
      Files.write(dir.resolve("task-" + UUID.randomUUID().toString().replace("-", "") + ".json"),
          json.getBytes(StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write read statistics to " + directory, e);
    }
  }
}
