package io.kafkalog.spark;

import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.sources.EqualNullSafe;
import org.apache.spark.sql.sources.EqualTo;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.sources.GreaterThan;
import org.apache.spark.sql.sources.GreaterThanOrEqual;
import org.apache.spark.sql.sources.In;
import org.apache.spark.sql.sources.LessThan;
import org.apache.spark.sql.sources.LessThanOrEqual;
import org.apache.spark.sql.sources.Not;
import org.apache.spark.sql.sources.StringContains;
import org.apache.spark.sql.sources.StringEndsWith;
import org.apache.spark.sql.sources.StringStartsWith;

/**
 * Turn Spark's pushed filters into read {@link Bounds}, deciding which are claimed: the port of
 * Python's {@code kafkalog/spark/pushdown.py} (same rules), over the JVM filter classes.
 *
 * <p>Spark does not re-apply a claimed filter, so a filter is claimed only when the rows the
 * reader returns satisfy it exactly:
 * <ul>
 *   <li>{@code topic} {@code =, <=>, IN, NOT =, NOT IN, LIKE 'x%' / '%x' / '%x%'} and
 *       {@code partition} {@code =, <=>, IN, NOT =, NOT IN, <, <=, >, >=} select whole
 *       topic-partitions: claimed;
 *   <li>{@code offset} with the same comparisons narrows [start, end) (segments pruned, first
 *       batch found with {@code .index}); IN/NOT keep exact row masks: claimed;
 *   <li>{@code timestamp} {@code >, >=, =} gives a lower bound used to prune segments, seek with
 *       {@code .timeindex} and skip batches whose maxTimestamp is below it. CreateTime is not
 *       monotonic inside a partition, so these are returned for Spark to evaluate;
 *   <li>everything else is returned untouched.
 * </ul>
 * Unlike PySpark's Python sources, a JVM source is always offered filters (no conf needed).
 */
final class Pushdown {
  private Pushdown() {}

  /** The analysis: bounds, the claimed filters, the filters Spark must still apply. */
  static final class Result {
    final Bounds bounds;
    final List<Filter> claimed;
    final List<Filter> rest;

    Result(Bounds bounds, List<Filter> claimed, List<Filter> rest) {
      this.bounds = bounds;
      this.claimed = claimed;
      this.rest = rest;
    }
  }

  private static String attribute(Filter f) {
    if (f instanceof EqualTo) {
      return ((EqualTo) f).attribute();
    }
    if (f instanceof EqualNullSafe) {
      return ((EqualNullSafe) f).attribute();
    }
    if (f instanceof In) {
      return ((In) f).attribute();
    }
    if (f instanceof GreaterThan) {
      return ((GreaterThan) f).attribute();
    }
    if (f instanceof GreaterThanOrEqual) {
      return ((GreaterThanOrEqual) f).attribute();
    }
    if (f instanceof LessThan) {
      return ((LessThan) f).attribute();
    }
    if (f instanceof LessThanOrEqual) {
      return ((LessThanOrEqual) f).attribute();
    }
    if (f instanceof StringStartsWith) {
      return ((StringStartsWith) f).attribute();
    }
    if (f instanceof StringEndsWith) {
      return ((StringEndsWith) f).attribute();
    }
    if (f instanceof StringContains) {
      return ((StringContains) f).attribute();
    }
    return null;
  }

  private static Object value(Filter f) {
    if (f instanceof EqualTo) {
      return ((EqualTo) f).value();
    }
    if (f instanceof EqualNullSafe) {
      return ((EqualNullSafe) f).value();
    }
    if (f instanceof GreaterThan) {
      return ((GreaterThan) f).value();
    }
    if (f instanceof GreaterThanOrEqual) {
      return ((GreaterThanOrEqual) f).value();
    }
    if (f instanceof LessThan) {
      return ((LessThan) f).value();
    }
    if (f instanceof LessThanOrEqual) {
      return ((LessThanOrEqual) f).value();
    }
    if (f instanceof StringStartsWith) {
      return ((StringStartsWith) f).value();
    }
    if (f instanceof StringEndsWith) {
      return ((StringEndsWith) f).value();
    }
    if (f instanceof StringContains) {
      return ((StringContains) f).value();
    }
    return null;
  }

  private static boolean isInt(Object v) {
    return v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte;
  }

  /** A pushed timestamp value to floor milliseconds (null when not a timestamp). */
  static Long tsMsFloor(Object v) {
    long micros;
    if (v instanceof Instant) {
      Instant i = (Instant) v;
      micros = Math.addExact(Math.multiplyExact(i.getEpochSecond(), 1_000_000L),
          i.getNano() / 1000);
    } else if (v instanceof Timestamp) {
      Timestamp t = (Timestamp) v;
      long seconds = Math.floorDiv(t.getTime(), 1000L);
      micros = seconds * 1_000_000L + t.getNanos() / 1000;
    } else {
      return null;
    }
    return Math.floorDiv(micros, 1000L);
  }

  static Result analyze(Filter[] filters) {
    Bounds b = new Bounds();
    List<Filter> claimedList = new ArrayList<>();
    List<Filter> rest = new ArrayList<>();
    for (Filter f : filters) {
      boolean claimed = false;
      boolean negated = f instanceof Not;
      Filter inner = negated ? ((Not) f).child() : f;
      String col = attribute(inner);
      Object value = value(inner);
      boolean isEq = inner instanceof EqualTo || inner instanceof EqualNullSafe;
      if ("topic".equals(col)) {
        if (isEq && value instanceof String) {
          if (negated) {
            b.topicsExcluded.add((String) value);
          } else {
            b.topics = Bounds.intersect(b.topics, Arrays.asList((String) value));
          }
          claimed = true;
        } else if (inner instanceof In && allStrings(((In) inner).values())) {
          List<String> vals = new ArrayList<>();
          for (Object o : ((In) inner).values()) {
            vals.add((String) o);
          }
          if (negated) {
            b.topicsExcluded.addAll(vals);
          } else {
            b.topics = Bounds.intersect(b.topics, vals);
          }
          claimed = true;
        } else if (!negated && value instanceof String) {
          if (inner instanceof StringStartsWith) {
            b.topicPrefixes.add((String) value);
            claimed = true;
          } else if (inner instanceof StringEndsWith) {
            b.topicSuffixes.add((String) value);
            claimed = true;
          } else if (inner instanceof StringContains) {
            b.topicContains.add((String) value);
            claimed = true;
          }
        }
      } else if ("partition".equals(col) || "offset".equals(col)) {
        boolean isPartition = "partition".equals(col);
        List<Long> values = null;
        if (isEq && isInt(value)) {
          values = Arrays.asList(((Number) value).longValue());
        } else if (inner instanceof In && allInts(((In) inner).values())) {
          values = new ArrayList<>();
          for (Object o : ((In) inner).values()) {
            values.add(((Number) o).longValue());
          }
        }
        if (values != null) {
          if (negated) {
            (isPartition ? b.partitionsExcluded : b.offsetsExcluded).addAll(values);
          } else if (isPartition) {
            b.partitions = Bounds.intersect(b.partitions, values);
          } else {
            b.offsetIn = Bounds.intersect(b.offsetIn, values);
          }
          claimed = true;
        } else if (!negated && isInt(value)) {
          long v = ((Number) value).longValue();
          Long lo = null;
          Long hi = null;
          if (inner instanceof GreaterThan) {
            lo = v + 1;
          } else if (inner instanceof GreaterThanOrEqual) {
            lo = v;
          } else if (inner instanceof LessThan) {
            hi = v - 1;
          } else if (inner instanceof LessThanOrEqual) {
            hi = v;
          }
          if (hi != null && !isPartition) {
            hi = hi + 1; // offsets: exclusive upper bound, as endingOffsets
          }
          if (lo != null) {
            if (isPartition) {
              b.partitionLo = b.partitionLo == null ? lo : Math.max(b.partitionLo, lo);
            } else {
              b.offsetLo = b.offsetLo == null ? lo : Math.max(b.offsetLo, lo);
            }
            claimed = true;
          }
          if (hi != null) {
            if (isPartition) {
              b.partitionHi = b.partitionHi == null ? hi : Math.min(b.partitionHi, hi);
            } else {
              b.offsetHi = b.offsetHi == null ? hi : Math.min(b.offsetHi, hi);
            }
            claimed = true;
          }
        }
      } else if ("timestamp".equals(col) && !negated) {
        if (inner instanceof GreaterThan || inner instanceof GreaterThanOrEqual || isEq) {
          Long ms = tsMsFloor(value);
          if (ms != null) {
            b.timestampLoMs = b.timestampLoMs == null ? ms : Math.max(b.timestampLoMs, ms);
          }
        }
      }
      if (claimed) {
        claimedList.add(f);
      } else {
        rest.add(f);
      }
    }
    return new Result(b, claimedList, rest);
  }

  private static boolean allStrings(Object[] vs) {
    for (Object o : vs) {
      if (!(o instanceof String)) {
        return false;
      }
    }
    return true;
  }

  private static boolean allInts(Object[] vs) {
    for (Object o : vs) {
      if (!isInt(o)) {
        return false;
      }
    }
    return true;
  }
}
