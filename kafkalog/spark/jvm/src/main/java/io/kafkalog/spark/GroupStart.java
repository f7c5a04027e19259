package io.kafkalog.spark;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Map;

/**
 * {@code startingOffsetsFromGroup} for the JVM reader: the group's committed offsets as an
 * {@code offsets} start (Python's {@code planning.resolve_group_start}), obtained from the
 * {@link GroupOffsets} resolver the Python package installs. Without a resolver (a session where
 * {@code kafkalog.spark.register} was not called) the scan is handed to the Python source instead
 * ({@link KafkaLogScanBuilder}), so the option never reads other rows than the Python reader.
 */
public final class GroupStart {
  private GroupStart() {}

  private static final ObjectMapper JSON = new ObjectMapper();
  private static volatile GroupOffsets resolver;

  /** Install the resolver (called from Python through py4j). */
  public static void register(GroupOffsets r) {
    resolver = r;
  }

  static boolean canResolve() {
    return resolver != null;
  }

  static boolean needed(Map<String, String> options) {
    String g = ReadOptions.get(options, "startingOffsetsFromGroup");
    return g != null && !g.isEmpty();
  }

  /** {@code opts} with a {@code group} start replaced by the group's committed offsets. */
  static ReadOptions resolve(ReadOptions opts, Map<String, String> options) {
    if (!"group".equals(opts.starting.kind)) {
      return opts;
    }
    GroupOffsets r = resolver;
    if (r == null) {
      throw new ConfigException("option startingOffsetsFromGroup: no resolver in this JVM; call "
          + "kafkalog.spark.register(spark) or read with format('kafkalog_python')");
    }
    String answer;
    try {
      answer = r.committedOffsets(JSON.writeValueAsString(options));
    } catch (JsonProcessingException e) {
      throw new ConfigException("option startingOffsetsFromGroup: " + e.getOriginalMessage());
    }
    JsonNode tree;
    try {
      tree = JSON.readTree(answer);
    } catch (JsonProcessingException e) {
      throw new KafkaLogException("startingOffsetsFromGroup: unreadable answer " + answer);
    }
    if (tree.has("__error__")) {
      throw new KafkaLogException(tree.get("__error__").asText());
    }
    ReadOptions out = opts.copy();
    out.starting = new OffsetSpec("offsets",
        ReadOptions.parsePartitionMap("startingOffsetsFromGroup", answer), 0,
        opts.starting.defaultOffset);
    return out;
  }
}
