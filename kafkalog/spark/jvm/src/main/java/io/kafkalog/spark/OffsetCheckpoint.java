package io.kafkalog.spark;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A text offset checkpoint (spec 4.3: version line 0, entry count, {@code topic partition offset}
 * lines), read as Kafka's {@code CheckpointFile} reads it. Used only for the log start offset
 * hint, so any malformed file is simply no hint ({@code null}).
 */
final class OffsetCheckpoint {
  private OffsetCheckpoint() {}

  /** {@code {topic-partition: offset}}, or null when the file is absent or malformed. */
  static Map<TopicPartition, Long> read(Path path) {
    if (!Files.isRegularFile(path)) {
      return null;
    }
    try (BufferedReader r = Files.newBufferedReader(path, StandardCharsets.UTF_8)) {
      List<String> lines = new ArrayList<>();
      String line;
      while ((line = r.readLine()) != null) {
        lines.add(line);
      }
      Map<TopicPartition, Long> out = new HashMap<>();
      if (lines.isEmpty()) {
        return out;
      }
      if (Integer.parseInt(lines.get(0)) != 0) {
        return null;
      }
      if (lines.size() < 2) {
        return out;
      }
      int expected = Integer.parseInt(lines.get(1));
      for (int i = 2; i < lines.size(); i++) {
        String[] parts = lines.get(i).split("[ \\t\\n\\x0B\\f\\r]+");
        if (parts.length != 3) {
          return null;
        }
        out.put(new TopicPartition(parts[0], Integer.parseInt(parts[1])),
            Long.parseLong(parts[2]));
      }
      return lines.size() - 2 == expected ? out : null;
    } catch (IOException | RuntimeException e) {
      return null; // an unreadable checkpoint only loses this hint
    }
  }
}
