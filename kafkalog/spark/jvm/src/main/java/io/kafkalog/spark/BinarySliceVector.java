package io.kafkalog.spark;

import java.util.Arrays;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarMap;
import org.apache.spark.unsafe.types.BinaryView;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A binary (or string) column whose values are slices of the arrays the records were decoded
 * from: {@code (array, offset, length)} per row, length -1 for null. Decoding stores three
 * numbers per value instead of copying the bytes; the one copy happens when Spark reads the
 * value ({@link #getBinary}), as with Spark's dictionary-encoded Parquet columns. The arrays stay
 * valid while the batch is being consumed ({@link BufferPool} pins them).
 */
final class BinarySliceVector extends ColumnVector {
  private byte[][] arrays;
  private int[] offsets;
  private int[] lengths;
  private int nulls;

  BinarySliceVector(DataType type, int capacity) {
    super(type);
    arrays = new byte[capacity][];
    offsets = new int[capacity];
    lengths = new int[capacity];
  }

  void ensureCapacity(int n) {
    if (n > lengths.length) {
      int cap = Math.max(n, lengths.length * 2);
      arrays = Arrays.copyOf(arrays, cap);
      offsets = Arrays.copyOf(offsets, cap);
      lengths = Arrays.copyOf(lengths, cap);
    }
  }

  /** Forget the rows (their arrays are released by the pool). */
  void reset(int rows) {
    Arrays.fill(arrays, 0, Math.min(rows, arrays.length), null);
    nulls = 0;
  }

  void put(int row, byte[] array, int offset, int length) {
    arrays[row] = array;
    offsets[row] = offset;
    lengths[row] = length;
  }

  void putNull(int row) {
    arrays[row] = null;
    lengths[row] = -1;
    nulls++;
  }

  /** Recount nulls of rows [0, rows) after rows were rolled back. */
  void recount(int rows) {
    int n = 0;
    for (int i = 0; i < rows; i++) {
      if (lengths[i] < 0) {
        n++;
      }
    }
    nulls = n;
  }

  @Override
  public boolean hasNull() {
    return nulls > 0;
  }

  @Override
  public int numNulls() {
    return nulls;
  }

  @Override
  public boolean isNullAt(int rowId) {
    return lengths[rowId] < 0;
  }

  @Override
  public byte[] getBinary(int rowId) {
    int len = lengths[rowId];
    if (len < 0) {
      return null;
    }
    int off = offsets[rowId];
    return Arrays.copyOfRange(arrays[rowId], off, off + len);
  }

  @Override
  public BinaryView getBinaryView(int rowId) {
    int len = lengths[rowId];
    return len < 0 ? null : BinaryView.fromBytes(arrays[rowId], offsets[rowId], len);
  }

  @Override
  public UTF8String getUTF8String(int rowId) {
    int len = lengths[rowId];
    return len < 0 ? null : UTF8String.fromBytes(arrays[rowId], offsets[rowId], len);
  }

  /** Reused from batch to batch (as Spark's writable vectors): Spark must not free it. */
  @Override
  public void closeIfFreeable() {}

  @Override
  public void close() {
    arrays = new byte[0][];
    offsets = new int[0];
    lengths = new int[0];
  }

  private UnsupportedOperationException unsupported() {
    return new UnsupportedOperationException("binary column: " + type.simpleString());
  }

  @Override
  public boolean getBoolean(int rowId) {
    throw unsupported();
  }

  @Override
  public byte getByte(int rowId) {
    throw unsupported();
  }

  @Override
  public short getShort(int rowId) {
    throw unsupported();
  }

  @Override
  public int getInt(int rowId) {
    throw unsupported();
  }

  @Override
  public long getLong(int rowId) {
    throw unsupported();
  }

  @Override
  public float getFloat(int rowId) {
    throw unsupported();
  }

  @Override
  public double getDouble(int rowId) {
    throw unsupported();
  }

  @Override
  public ColumnarArray getArray(int rowId) {
    throw unsupported();
  }

  @Override
  public ColumnarMap getMap(int ordinal) {
    throw unsupported();
  }

  @Override
  public Decimal getDecimal(int rowId, int precision, int scale) {
    throw unsupported();
  }

  @Override
  public ColumnVector getChild(int ordinal) {
    throw unsupported();
  }
}
