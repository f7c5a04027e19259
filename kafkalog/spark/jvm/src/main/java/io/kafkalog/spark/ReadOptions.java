package io.kafkalog.spark;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * Validated read options: the port of Python's {@code kafkalog/spark/options.py}
 * ({@code ReadOptions.parse}), same names, defaults, precedence, checks and messages, so a query
 * behaves the same whichever reader runs it. Names and meanings mirror Spark's Kafka source
 * ({@code KafkaSourceProvider}); see the Python module's table for the full list.
 *
 * <p>Options only the JVM reader reads (ignored by the Python source): {@code columnarReads}
 * (default true: {@code ColumnarBatch}es; false: rows) and {@code columnarBatchRows} (rows per
 * {@code ColumnarBatch}, default 16384, capped by {@code maxRecordsPerBatch}).
 *
 * <p>One difference by nature: {@code subscribePattern}/{@code topicPattern} is a Java regular
 * expression here (as in Spark's Kafka source) and a Python {@code re} one in the Python source;
 * they agree on ordinary patterns.
 */
final class ReadOptions implements Serializable, Cloneable {
  private static final long serialVersionUID = 1L;

  static final Set<String> INTERNAL_TOPICS = new HashSet<>(Arrays.asList(
      "__consumer_offsets", "__transaction_state", "__cluster_metadata", "__share_group_state"));

  static final long DEFAULT_MAX_BYTES_PER_PARTITION = 128L * 1024 * 1024;
  static final int DEFAULT_MAX_RECORDS_PER_BATCH = 100_000;
  static final int DEFAULT_COLUMNAR_BATCH_ROWS = 16384;

  private static final ObjectMapper JSON = new ObjectMapper();

  List<String> paths;
  List<String> topics;
  String topicPattern;
  Map<String, List<Integer>> assign;
  boolean includeInternal;
  boolean includeHeaders;
  OffsetSpec starting;
  OffsetSpec ending;
  String startingTsStrategy = "error";
  boolean failOnDataLoss = true;
  Integer minPartitions;
  long maxBytesPerPartition = DEFAULT_MAX_BYTES_PER_PARTITION;
  Long maxRecordsPerPartition;
  boolean readCommitted;
  int maxRecordsPerBatch = DEFAULT_MAX_RECORDS_PER_BATCH;
  String metricsDir;
  boolean checkCrcs = true;
  boolean columnarReads = true;
  int columnarBatchRows = DEFAULT_COLUMNAR_BATCH_ROWS;

  private transient Pattern compiled;

  /** Case-insensitive lookup (Spark's map already is one; plain maps in tests may not be). */
  static String get(Map<String, String> options, String name) {
    String v = options.get(name);
    if (v != null) {
      return v;
    }
    for (Map.Entry<String, String> e : options.entrySet()) {
      if (e.getKey().equalsIgnoreCase(name)) {
        return e.getValue();
      }
    }
    return null;
  }

  private static boolean given(String v) {
    return v != null && !v.isEmpty();
  }

  static boolean parseBool(String name, String value, boolean dflt) {
    if (value == null) {
      return dflt;
    }
    String v = value.strip().toLowerCase(Locale.ROOT);
    if (v.equals("true") || v.equals("1") || v.equals("yes")) {
      return true;
    }
    if (v.equals("false") || v.equals("0") || v.equals("no")) {
      return false;
    }
    throw new ConfigException("option " + name + ": expected true or false, found "
        + PyRepr.str(value));
  }

  static Long parseLong(String name, String value, Long dflt, Long minimum) {
    if (value == null) {
      return dflt;
    }
    long out;
    try {
      out = Long.parseLong(value.strip().replace("_", ""));
      if (value.strip().startsWith("_") || value.strip().endsWith("_")
          || value.contains("__")) {
        throw new NumberFormatException();
      }
    } catch (NumberFormatException e) {
      throw new ConfigException("option " + name + ": expected an integer, found "
          + PyRepr.str(value));
    }
    if (minimum != null && out < minimum) {
      throw new ConfigException("option " + name + ": expected an integer >= " + minimum
          + ", found " + out);
    }
    return out;
  }

  private static JsonNode parseJsonObject(String name, String value) {
    JsonNode obj;
    try {
      obj = JSON.readTree(value);
    } catch (JsonProcessingException e) {
      String msg = e.getOriginalMessage();
      throw new ConfigException("option " + name + ": expected JSON, found " + PyRepr.str(value)
          + " (" + (msg == null ? "invalid JSON" : msg.split("\n")[0]) + ")");
    }
    if (obj == null || !obj.isObject()) {
      throw new ConfigException("option " + name + ": expected a JSON object, found "
          + PyRepr.str(value));
    }
    return obj;
  }

  private static boolean isJsonInt(JsonNode n) {
    return n != null && n.isIntegralNumber() && n.canConvertToLong();
  }

  /** Python's {@code int(p)} on a partition key: optional sign, digits, surrounding spaces. */
  private static Integer parsePartitionKey(String p) {
    String t = p.strip();
    if (!t.matches("[+-]?[0-9]+")) {
      return null;
    }
    try {
      return Integer.parseInt(t.startsWith("+") ? t.substring(1) : t);
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /** {@code {"topic": {"0": n, ...}}} to {@code {(topic, partition): n}} (Kafka's JsonUtils). */
  static Map<TopicPartition, Long> parsePartitionMap(String name, String value) {
    Map<TopicPartition, Long> out = new LinkedHashMap<>();
    Iterator<Map.Entry<String, JsonNode>> topics = parseJsonObject(name, value).properties().iterator();
    while (topics.hasNext()) {
      Map.Entry<String, JsonNode> t = topics.next();
      String topic = t.getKey();
      JsonNode parts = t.getValue();
      if (!parts.isObject()) {
        throw new ConfigException("option " + name + ": expected {\"partition\": number} for "
            + "topic " + PyRepr.str(topic) + ", found " + PyRepr.json(parts));
      }
      Iterator<Map.Entry<String, JsonNode>> it = parts.properties().iterator();
      while (it.hasNext()) {
        Map.Entry<String, JsonNode> e = it.next();
        Integer pi = parsePartitionKey(e.getKey());
        if (pi == null) {
          throw new ConfigException("option " + name + ": expected a partition number for topic "
              + PyRepr.str(topic) + ", found " + PyRepr.str(e.getKey()));
        }
        if (!isJsonInt(e.getValue())) {
          throw new ConfigException("option " + name + ": expected an integer for " + topic + "-"
              + pi + ", found " + PyRepr.json(e.getValue()));
        }
        out.put(new TopicPartition(topic, pi), e.getValue().asLong());
      }
    }
    return out;
  }

  private static OffsetSpec startingSpec(Map<String, String> options, boolean streaming) {
    String group = get(options, "startingOffsetsFromGroup");
    if (given(group)) {
      List<String> others = new ArrayList<>();
      for (String n : new String[] {"startingOffsets", "startingTimestamp",
          "startingOffsetsByTimestamp"}) {
        if (given(get(options, n))) {
          others.add(n);
        }
      }
      if (!others.isEmpty()) {
        throw new ConfigException("option startingOffsetsFromGroup: give it alone, not with "
            + String.join(", ", others));
      }
      return OffsetSpec.group(group, streaming ? OffsetSpec.LATEST : OffsetSpec.EARLIEST);
    }
    String ts = get(options, "startingTimestamp");
    if (ts != null) {
      return new OffsetSpec("timestamp", null, parseLong("startingTimestamp", ts, null, null),
          OffsetSpec.EARLIEST);
    }
    String byTs = get(options, "startingOffsetsByTimestamp");
    if (byTs != null) {
      return new OffsetSpec("timestamps", parsePartitionMap("startingOffsetsByTimestamp", byTs),
          0, OffsetSpec.EARLIEST);
    }
    String raw = get(options, "startingOffsets");
    String defaultKind = streaming ? "latest" : "earliest";
    if (raw == null || raw.strip().isEmpty()) {
      return OffsetSpec.of(defaultKind, OffsetSpec.EARLIEST);
    }
    String low = raw.strip().toLowerCase(Locale.ROOT);
    if (low.equals("earliest") || low.equals("latest")) {
      if (low.equals("latest") && !streaming) {
        throw new ConfigException("option startingOffsets: 'latest' is not allowed for batch "
            + "queries (as in Spark's Kafka source); use 'earliest' or JSON offsets");
      }
      return OffsetSpec.of(low, OffsetSpec.EARLIEST);
    }
    Map<TopicPartition, Long> per = parsePartitionMap("startingOffsets", raw);
    for (Map.Entry<TopicPartition, Long> e : per.entrySet()) {
      long n = e.getValue();
      TopicPartition tp = e.getKey();
      if (n < OffsetSpec.EARLIEST) {
        throw new ConfigException("option startingOffsets: offset for " + tp
            + " must be >= -2, found " + n);
      }
      if (n == OffsetSpec.LATEST && !streaming) {
        throw new ConfigException("option startingOffsets: latest (-1) for " + tp
            + " is not allowed for batch queries");
      }
    }
    return new OffsetSpec("offsets", per, 0, OffsetSpec.EARLIEST);
  }

  private static OffsetSpec endingSpec(Map<String, String> options) {
    String ts = get(options, "endingTimestamp");
    if (ts != null) {
      return new OffsetSpec("timestamp", null, parseLong("endingTimestamp", ts, null, null),
          OffsetSpec.LATEST);
    }
    String byTs = get(options, "endingOffsetsByTimestamp");
    if (byTs != null) {
      return new OffsetSpec("timestamps", parsePartitionMap("endingOffsetsByTimestamp", byTs), 0,
          OffsetSpec.LATEST);
    }
    String raw = get(options, "endingOffsets");
    if (raw == null || raw.strip().isEmpty() || raw.strip().equalsIgnoreCase("latest")) {
      return OffsetSpec.of("latest", OffsetSpec.LATEST);
    }
    if (raw.strip().equalsIgnoreCase("earliest")) {
      throw new ConfigException("option endingOffsets: 'earliest' is not allowed (as in Spark's "
          + "Kafka source); use 'latest' or JSON offsets");
    }
    Map<TopicPartition, Long> per = parsePartitionMap("endingOffsets", raw);
    for (Map.Entry<TopicPartition, Long> e : per.entrySet()) {
      long n = e.getValue();
      if (n == OffsetSpec.EARLIEST) {
        throw new ConfigException("option endingOffsets: earliest (-2) for " + e.getKey()
            + " is not allowed as an ending offset");
      }
      if (n < OffsetSpec.LATEST) {
        throw new ConfigException("option endingOffsets: offset for " + e.getKey()
            + " must be >= -1, found " + n);
      }
    }
    return new OffsetSpec("offsets", per, 0, OffsetSpec.LATEST);
  }

  private static List<String> parsePaths(Map<String, String> options) {
    List<String> paths = new ArrayList<>();
    String rawMany = get(options, "paths");
    if (given(rawMany)) {
      JsonNode many;
      try {
        many = JSON.readTree(rawMany);
      } catch (JsonProcessingException e) {
        many = null;
      }
      if (many == null) {
        paths.add(rawMany);
      } else if (many.isTextual()) {
        paths.add(many.asText());
      } else {
        boolean ok = many.isArray();
        if (ok) {
          for (JsonNode n : many) {
            ok &= n.isTextual();
          }
        }
        if (!ok) {
          throw new ConfigException("option paths: expected a JSON list of strings, found "
              + PyRepr.str(rawMany));
        }
        for (JsonNode n : many) {
          paths.add(n.asText());
        }
      }
    }
    String one = get(options, "path");
    if (given(one)) {
      paths.add(0, one);
    }
    if (paths.isEmpty()) {
      throw new ConfigException("no path given: use spark.read.format('kafkalog').load(<log dir "
          + "or partition dir>)");
    }
    return new ArrayList<>(new LinkedHashSet<>(paths));
  }

  /** Validate {@code options}; throw {@link ConfigException} naming the first bad option. */
  static ReadOptions parse(Map<String, String> options, boolean streaming) {
    List<String> selectors = new ArrayList<>();
    for (String n : new String[] {"topics", "subscribe", "topicPattern", "subscribePattern",
        "assign"}) {
      if (given(get(options, n))) {
        selectors.add(n);
      }
    }
    if (selectors.size() > 1) {
      throw new ConfigException("options " + String.join(", ", selectors) + ": give at most one "
          + "of topics/subscribe, topicPattern/subscribePattern and assign");
    }
    ReadOptions o = new ReadOptions();
    for (String n : new String[] {"topics", "subscribe"}) {
      String raw = get(options, n);
      if (given(raw)) {
        List<String> ts = new ArrayList<>();
        for (String t : raw.split(",", -1)) {
          if (!t.strip().isEmpty()) {
            ts.add(t.strip());
          }
        }
        if (ts.isEmpty()) {
          throw new ConfigException("option " + n + ": expected topic names, found "
              + PyRepr.str(raw));
        }
        o.topics = ts;
      }
    }
    for (String n : new String[] {"topicPattern", "subscribePattern"}) {
      String raw = get(options, n);
      if (given(raw)) {
        try {
          Pattern.compile(raw);
        } catch (PatternSyntaxException e) {
          throw new ConfigException("option " + n + ": invalid regular expression "
              + PyRepr.str(raw) + ": " + e.getDescription());
        }
        o.topicPattern = raw;
      }
    }
    String rawAssign = get(options, "assign");
    if (given(rawAssign)) {
      JsonNode obj = parseJsonObject("assign", rawAssign);
      o.assign = new TreeMap<>();
      Iterator<Map.Entry<String, JsonNode>> it = obj.properties().iterator();
      while (it.hasNext()) {
        Map.Entry<String, JsonNode> e = it.next();
        JsonNode parts = e.getValue();
        boolean ok = parts.isArray();
        if (ok) {
          for (JsonNode p : parts) {
            ok &= isJsonInt(p) && p.canConvertToInt();
          }
        }
        if (!ok) {
          throw new ConfigException("option assign: expected a list of partition numbers for "
              + PyRepr.str(e.getKey()) + ", found " + PyRepr.json(parts));
        }
        List<Integer> ps = new ArrayList<>();
        for (JsonNode p : parts) {
          ps.add(p.asInt());
        }
        o.assign.put(e.getKey(), ps);
      }
    }
    if (streaming) {
      for (String n : new String[] {"endingOffsets", "endingTimestamp",
          "endingOffsetsByTimestamp"}) {
        if (get(options, n) != null) {
          throw new ConfigException("option " + n + " is for batch queries only");
        }
      }
    }
    String strategy = get(options, "startingOffsetsByTimestampStrategy");
    strategy = (strategy == null || strategy.isEmpty() ? "error" : strategy).strip()
        .toLowerCase(Locale.ROOT);
    if (!strategy.equals("error") && !strategy.equals("latest")) {
      throw new ConfigException("option startingOffsetsByTimestampStrategy: expected 'error' or "
          + "'latest', found " + PyRepr.str(strategy));
    }
    o.startingTsStrategy = strategy;
    String iso = get(options, "isolationLevel");
    if (iso == null || iso.isEmpty()) {
      iso = get(options, "kafka.isolation.level");
    }
    iso = (iso == null || iso.isEmpty() ? "read_uncommitted" : iso).strip()
        .toLowerCase(Locale.ROOT);
    if (!iso.equals("read_uncommitted") && !iso.equals("read_committed")) {
      throw new ConfigException("option isolationLevel: expected read_uncommitted or "
          + "read_committed, found " + PyRepr.str(iso));
    }
    String push = get(options, "pushFilters");
    push = (push == null || push.isEmpty() ? "auto" : push).strip().toLowerCase(Locale.ROOT);
    if (!push.equals("auto") && !push.equals("true") && !push.equals("false")) {
      throw new ConfigException("option pushFilters: expected auto, true or false, found "
          + PyRepr.str(push));
    }
    o.paths = parsePaths(options);
    o.includeInternal = parseBool("includeInternal", get(options, "includeInternal"), false);
    o.includeHeaders = parseBool("includeHeaders", get(options, "includeHeaders"), false);
    o.starting = startingSpec(options, streaming);
    o.ending = streaming ? OffsetSpec.of("latest", OffsetSpec.LATEST) : endingSpec(options);
    o.failOnDataLoss = parseBool("failOnDataLoss", get(options, "failOnDataLoss"), true);
    Long mp = parseLong("minPartitions", get(options, "minPartitions"), null, 1L);
    o.minPartitions = mp == null ? null : (int) Math.min(mp, Integer.MAX_VALUE);
    o.maxBytesPerPartition = parseLong("maxBytesPerPartition",
        get(options, "maxBytesPerPartition"), DEFAULT_MAX_BYTES_PER_PARTITION, 1L);
    o.maxRecordsPerPartition = parseLong("maxRecordsPerPartition",
        get(options, "maxRecordsPerPartition"), null, 1L);
    o.readCommitted = iso.equals("read_committed");
    parseLong("maxOffsetsPerTrigger", get(options, "maxOffsetsPerTrigger"), null, 1L);
    o.maxRecordsPerBatch = (int) Math.min(Integer.MAX_VALUE, parseLong("maxRecordsPerBatch",
        get(options, "maxRecordsPerBatch"), (long) DEFAULT_MAX_RECORDS_PER_BATCH, 1L));
    String md = get(options, "metricsDir");
    o.metricsDir = md == null || md.isEmpty() ? null : md;
    o.checkCrcs = parseBool("kafka.check.crcs", get(options, "kafka.check.crcs"), true);
    o.columnarReads = parseBool("columnarReads", get(options, "columnarReads"), true);
    o.columnarBatchRows = (int) Math.min(Integer.MAX_VALUE, parseLong("columnarBatchRows",
        get(options, "columnarBatchRows"), (long) DEFAULT_COLUMNAR_BATCH_ROWS, 1L));
    return o;
  }

  /** A shallow copy (fields are replaced, never mutated, after parsing). */
  ReadOptions copy() {
    try {
      return (ReadOptions) super.clone();
    } catch (CloneNotSupportedException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Whether a topic-partition passes topics/topicPattern/assign/includeInternal. */
  boolean selects(String topic, int partition) {
    if (assign != null) {
      List<Integer> ps = assign.get(topic);
      return ps != null && ps.contains(partition);
    }
    if (topics != null) {
      return topics.contains(topic);
    }
    if (INTERNAL_TOPICS.contains(topic) && !includeInternal) {
      return false;
    }
    if (topicPattern != null) {
      if (compiled == null) {
        compiled = Pattern.compile(topicPattern);
      }
      return compiled.matcher(topic).matches();
    }
    return true;
  }
}
