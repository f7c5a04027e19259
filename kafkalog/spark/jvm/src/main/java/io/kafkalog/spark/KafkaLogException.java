package io.kafkalog.spark;

import java.io.ObjectStreamException;

/**
 * Root of every error the JVM reader raises on purpose: the Java twin of Python's
 * {@code kafkalog.errors.KafkaLogError}. Carries where it happened ({@code path}, byte
 * {@code position} in a {@code .log}, logical {@code offset}) and renders its message exactly as
 * the Python error does, {@code "path, position P, offset O: what (expected X, found Y)"}, so the
 * two readers fail with the same text.
 *
 * <p>Subclasses mirror the Python tree: {@link CorruptRecordException} (and
 * {@link RecordTooLargeException}), {@link OffsetOutOfRangeException}, {@link ConfigException},
 * {@link CorruptIndexException}.
 */
public class KafkaLogException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final String detail;
  private final String path;
  private final Long position;
  private final Long offset;

  public KafkaLogException(String detail) {
    this(detail, null, null, null);
  }

  public KafkaLogException(String detail, String path, Long position, Long offset) {
    super(render(detail, path, position, offset));
    this.detail = detail;
    this.path = path;
    this.position = position;
    this.offset = offset;
  }

  static String render(String detail, String path, Long position, Long offset) {
    StringBuilder where = new StringBuilder();
    if (path != null) {
      where.append(path);
    }
    if (position != null) {
      where.append(where.length() > 0 ? ", " : "").append("position ").append(position);
    }
    if (offset != null) {
      where.append(where.length() > 0 ? ", " : "").append("offset ").append(offset);
    }
    return where.length() == 0 ? detail : where + ": " + detail;
  }

  /** What was wrong, without the location prefix. */
  public String detail() {
    return detail;
  }

  public String path() {
    return path;
  }

  public Long position() {
    return position;
  }

  public Long offset() {
    return offset;
  }

  /** A copy located in {@code newPath} (keeps the type, position and offset). */
  public KafkaLogException withPath(String newPath) {
    return rebuild(detail, newPath, position, offset);
  }

  /**
   * Executors send a task's failure to the driver by Java serialization, and the driver
   * deserializes it with Spark's own class loader: when the jar was added to a running session
   * ({@code ADD JAR}) that loader cannot resolve this class, and Java serialization then loses
   * the whole failure ("Could not deserialize TaskEndReason: ClassNotFound"). So the exception
   * travels as a {@link RuntimeException} with the same text, {@code "<class>: <message>"}, and
   * the same stack trace. Exceptions thrown on the driver (planning) keep their type.
   */
  protected Object writeReplace() throws ObjectStreamException {
    RuntimeException r = new RuntimeException(getClass().getName() + ": " + getMessage());
    r.setStackTrace(getStackTrace());
    return r;
  }

  /** A copy of the same type with other fields (subclasses keep their class). */
  KafkaLogException rebuild(String d, String p, Long pos, Long off) {
    return new KafkaLogException(d, p, pos, off);
  }
}
