package io.kafkalog.spark;

import java.util.Arrays;
import org.apache.spark.sql.execution.vectorized.ConstantColumnVector;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The {@link RecordSink} of the read path: decoders write records straight into the
 * {@link ColumnarBatch} of the projected Kafka columns (the JVM twin of Python's
 * {@code arrow.columns_to_batch}), keeping only rows in the chunk's offset range and the pushed
 * offset sets.
 *
 * <p>{@code key} and {@code value} are {@link BinarySliceVector}s pointing into the source arrays
 * (no copy at decode time; measured faster than Spark's {@link OnHeapColumnVector}, whose
 * per-value append dominated the decode profile); {@code offset}, {@code timestamp},
 * {@code timestampType} and {@code headers} are {@link OnHeapColumnVector}s; {@code topic} and
 * {@code partition} are {@link ConstantColumnVector}s, so one batch holds rows of one chunk.
 * Timestamps are epoch milliseconds x 1000 (Spark's microseconds: UTC instants whatever the
 * session time zone); {@code headers} is null, not empty, for a record without headers.
 * Vectors are reused from batch to batch and grow to hold the largest Kafka batch.
 */
final class ColumnBatchBuilder implements RecordSink, AutoCloseable {
  private static final int KEY = 0;
  private static final int VALUE = 1;
  private static final int TOPIC = 2;
  private static final int PARTITION = 3;
  private static final int OFFSET = 4;
  private static final int TIMESTAMP = 5;
  private static final int TIMESTAMP_TYPE = 6;
  private static final int HEADERS = 7;

  private final ColumnarBatch batch;
  private final OnHeapColumnVector[] onHeap;
  private BinarySliceVector key;
  private BinarySliceVector value;
  private OnHeapColumnVector offset;
  private OnHeapColumnVector timestamp;
  private OnHeapColumnVector timestampType;
  private OnHeapColumnVector headers;
  private ConstantColumnVector topic;
  private ConstantColumnVector partition;
  private int capacity;
  // row filter of the current chunk: [lo, hi), pushed IN set and NOT IN set (sorted)
  private long lo;
  private long hi;
  private final long[] offsetIn;
  private final long[] offsetsExcluded;
  int rows;

  ColumnBatchBuilder(String[] columns, int capacity, long[] offsetIn, long[] offsetsExcluded) {
    this.capacity = capacity;
    this.offsetIn = offsetIn;
    this.offsetsExcluded = offsetsExcluded == null ? new long[0] : offsetsExcluded;
    ColumnVector[] vectors = new ColumnVector[columns.length];
    for (int c = 0; c < columns.length; c++) {
      switch (KafkaSchema.COLUMNS.indexOf(columns[c])) {
        case KEY:
          vectors[c] = key = new BinarySliceVector(DataTypes.BinaryType, capacity);
          break;
        case VALUE:
          vectors[c] = value = new BinarySliceVector(DataTypes.BinaryType, capacity);
          break;
        case TOPIC:
          vectors[c] = topic = new ConstantColumnVector(capacity, DataTypes.StringType);
          break;
        case PARTITION:
          vectors[c] = partition = new ConstantColumnVector(capacity, DataTypes.IntegerType);
          break;
        case OFFSET:
          vectors[c] = offset = new OnHeapColumnVector(capacity, DataTypes.LongType);
          break;
        case TIMESTAMP:
          vectors[c] = timestamp = new OnHeapColumnVector(capacity, DataTypes.TimestampType);
          break;
        case TIMESTAMP_TYPE:
          vectors[c] = timestampType = new OnHeapColumnVector(capacity, DataTypes.IntegerType);
          break;
        case HEADERS:
          vectors[c] = headers = new OnHeapColumnVector(capacity, KafkaSchema.HEADERS);
          break;
        default:
          throw new IllegalArgumentException("unknown column " + columns[c]);
      }
    }
    onHeap = Arrays.stream(new OnHeapColumnVector[] {offset, timestamp, timestampType, headers})
        .filter(v -> v != null).toArray(OnHeapColumnVector[]::new);
    batch = new ColumnarBatch(vectors); // no column (count(*)): rows are still counted
  }

  /** Start a batch for rows of one chunk: one topic-partition, offsets in [lo, hi). */
  void begin(String topicName, int partitionId, long startOffset, long endOffset) {
    if (key != null) {
      key.reset(rows);
    }
    if (value != null) {
      value.reset(rows);
    }
    for (OnHeapColumnVector v : onHeap) {
      v.reset();
    }
    rows = 0;
    lo = startOffset;
    hi = endOffset;
    if (topic != null) {
      topic.setUtf8String(UTF8String.fromString(topicName));
    }
    if (partition != null) {
      partition.setInt(partitionId);
    }
  }

  @Override
  public void reserve(int n) {
    long need = (long) rows + n;
    if (need > capacity) {
      int cap = (int) Math.min(Integer.MAX_VALUE - 8, Math.max(need, capacity * 2L));
      if (key != null) {
        key.ensureCapacity(cap);
      }
      if (value != null) {
        value.ensureCapacity(cap);
      }
      for (OnHeapColumnVector v : onHeap) {
        v.reserve(cap);
      }
      capacity = cap;
    }
  }

  @Override
  public void add(byte[] src, long off, long ts, int tsType, int keyPos, int keyLen,
      int valuePos, int valueLen, int headerPos, int headerCount) {
    if (off < lo || off >= hi) {
      return;
    }
    if (offsetIn != null && Arrays.binarySearch(offsetIn, off) < 0) {
      return;
    }
    if (offsetsExcluded.length > 0 && Arrays.binarySearch(offsetsExcluded, off) >= 0) {
      return;
    }
    int r = rows++;
    if (key != null) {
      if (keyLen < 0) {
        key.putNull(r);
      } else {
        key.put(r, src, keyPos, keyLen);
      }
    }
    if (value != null) {
      if (valueLen < 0) {
        value.putNull(r);
      } else {
        value.put(r, src, valuePos, valueLen);
      }
    }
    if (offset != null) {
      offset.putLong(r, off);
    }
    if (timestamp != null) {
      timestamp.putLong(r, ts * 1000L);
    }
    if (timestampType != null) {
      timestampType.putInt(r, tsType);
    }
    if (headers != null) {
      addHeaders(src, headerPos, headerCount, r);
    }
  }

  private void addHeaders(byte[] s, int pos, int n, int r) {
    if (n == 0) {
      headers.putNull(r);
      return;
    }
    WritableColumnVector elems = headers.arrayData();
    WritableColumnVector keys = elems.getChild(0);
    WritableColumnVector values = elems.getChild(1);
    int first = elems.getElementsAppended();
    int p = pos;
    // validated by the decoder: Kafka's ByteUtils.readVarint without bound checks
    for (int h = 0; h < n; h++) {
      long kv = varint(s, p);
      int hk = (int) kv;
      p = (int) (kv >>> 32);
      elems.appendStruct(false);
      keys.appendByteArray(s, p, hk);
      p += hk;
      long vv = varint(s, p);
      int hv = (int) vv;
      p = (int) (vv >>> 32);
      if (hv < 0) {
        values.appendNull();
      } else {
        values.appendByteArray(s, p, hv);
        p += hv;
      }
    }
    headers.putNotNull(r);
    headers.putArray(r, first, n);
  }

  /** A zig-zag varint at {@code p}: the value in the low 32 bits, the next position above. */
  private static long varint(byte[] s, int p) {
    int v = 0;
    int shift = 0;
    while (true) {
      int b = s[p++];
      if ((b & 0x80) == 0) {
        v |= b << shift;
        int value = (v >>> 1) ^ -(v & 1);
        return ((long) p << 32) | (value & 0xFFFFFFFFL);
      }
      v |= (b & 0x7f) << shift;
      shift += 7;
    }
  }

  @Override
  public int mark() {
    return rows;
  }

  @Override
  public void rollback(int mark) {
    if (mark == rows) {
      return;
    }
    rows = mark;
    if (key != null) {
      key.recount(rows);
    }
    if (value != null) {
      value.recount(rows);
    }
  }

  ColumnarBatch finish() {
    batch.setNumRows(rows);
    return batch;
  }

  @Override
  public void close() {
    batch.close();
  }
}
