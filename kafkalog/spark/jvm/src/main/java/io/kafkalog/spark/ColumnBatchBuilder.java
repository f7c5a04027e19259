package io.kafkalog.spark;

import org.apache.spark.sql.execution.vectorized.ConstantColumnVector;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Build {@link ColumnarBatch}es of the projected Kafka columns from {@link DecodedRecords}
 * (the JVM twin of Python's {@code arrow.columns_to_batch}).
 *
 * <p>Vectors are Spark's own {@link OnHeapColumnVector} (as the Parquet reader's), reused across
 * batches; {@code topic} and {@code partition} are {@link ConstantColumnVector}s, so one batch
 * holds rows of one chunk (one topic-partition). Key and value bytes are copied out of the
 * {@code .log} window or decompressed buffer, which the reader may then reuse. Timestamps are the
 * record's epoch milliseconds x 1000 (Spark's microseconds, UTC instants whatever the session
 * time zone); {@code headers} is null, not empty, for a record without headers.
 */
final class ColumnBatchBuilder implements AutoCloseable {
  private static final int KEY = 0;
  private static final int VALUE = 1;
  private static final int TOPIC = 2;
  private static final int PARTITION = 3;
  private static final int OFFSET = 4;
  private static final int TIMESTAMP = 5;
  private static final int TIMESTAMP_TYPE = 6;
  private static final int HEADERS = 7;

  final int capacity;
  private final ColumnVector[] vectors;
  private final ColumnarBatch batch;
  private final boolean any;
  private OnHeapColumnVector key;
  private OnHeapColumnVector value;
  private OnHeapColumnVector offset;
  private OnHeapColumnVector timestamp;
  private OnHeapColumnVector timestampType;
  private OnHeapColumnVector headers;
  private ConstantColumnVector topic;
  private ConstantColumnVector partition;
  int rows;

  ColumnBatchBuilder(String[] columns, int capacity) {
    this.capacity = capacity;
    vectors = new ColumnVector[columns.length];
    for (int c = 0; c < columns.length; c++) {
      int kind = KafkaSchema.COLUMNS.indexOf(columns[c]);
      switch (kind) {
        case KEY:
          vectors[c] = key = new OnHeapColumnVector(capacity, DataTypes.BinaryType);
          break;
        case VALUE:
          vectors[c] = value = new OnHeapColumnVector(capacity, DataTypes.BinaryType);
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
    // count(*) projects no column: rows are still counted
    any = columns.length > 0;
    batch = new ColumnarBatch(vectors);
  }

  /** Start a batch for rows of one topic-partition. */
  void begin(String topicName, int partitionId) {
    rows = 0;
    for (OnHeapColumnVector v : new OnHeapColumnVector[] {key, value, offset, timestamp,
        timestampType, headers}) {
      if (v != null) {
        v.reset();
      }
    }
    if (topic != null) {
      topic.setUtf8String(UTF8String.fromString(topicName));
    }
    if (partition != null) {
      partition.setInt(partitionId);
    }
  }

  boolean full() {
    return rows >= capacity;
  }

  /** Append record {@code k} of {@code d}. */
  void add(DecodedRecords d, int k) {
    int r = rows++;
    if (!any) {
      return;
    }
    byte[] src = d.src;
    if (key != null) {
      int len = d.keyLen[k];
      if (len < 0) {
        key.putNull(r);
      } else {
        key.putByteArray(r, src, d.keyPos[k], len);
      }
    }
    if (value != null) {
      int len = d.valueLen[k];
      if (len < 0) {
        value.putNull(r);
      } else {
        value.putByteArray(r, src, d.valuePos[k], len);
      }
    }
    if (offset != null) {
      offset.putLong(r, d.offsets[k]);
    }
    if (timestamp != null) {
      timestamp.putLong(r, d.timestamps[k] * 1000L);
    }
    if (timestampType != null) {
      timestampType.putInt(r, d.timestampTypes[k]);
    }
    if (headers != null) {
      addHeaders(d, k, r);
    }
  }

  private void addHeaders(DecodedRecords d, int k, int r) {
    int n = d.headerCount[k];
    if (n == 0) {
      headers.putNull(r);
      return;
    }
    WritableColumnVector elems = headers.arrayData();
    WritableColumnVector keys = elems.getChild(0);
    WritableColumnVector values = elems.getChild(1);
    int first = elems.getElementsAppended();
    byte[] s = d.src;
    int p = d.headerPos[k];
    // validated by the decoder: plain varint reads (Kafka's ByteUtils.readVarint)
    for (int h = 0; h < n; h++) {
      int[] cur = {p};
      int hk = varint(s, cur);
      p = cur[0];
      elems.appendStruct(false);
      keys.appendByteArray(s, p, hk);
      p += hk;
      cur[0] = p;
      int hv = varint(s, cur);
      p = cur[0];
      if (hv < 0) {
        values.appendNull();
      } else {
        values.appendByteArray(s, p, hv);
        p += hv;
      }
    }
    headers.putArray(r, first, n);
  }

  private static int varint(byte[] s, int[] cur) {
    int value = 0;
    int shift = 0;
    int p = cur[0];
    while (true) {
      int b = s[p++];
      if ((b & 0x80) == 0) {
        value |= b << shift;
        cur[0] = p;
        return (value >>> 1) ^ -(value & 1);
      }
      value |= (b & 0x7f) << shift;
      shift += 7;
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
