package io.kafkalog.spark;

/** An offset outside [log start offset, log end offset]. Python's {@code OffsetOutOfRangeError}. */
public class OffsetOutOfRangeException extends KafkaLogException {
  private static final long serialVersionUID = 1L;

  public OffsetOutOfRangeException(String detail, String path, Long position, Long offset) {
    super(detail, path, position, offset);
  }

  @Override
  KafkaLogException rebuild(String d, String p, Long pos, Long off) {
    return new OffsetOutOfRangeException(d, p, pos, off);
  }
}
