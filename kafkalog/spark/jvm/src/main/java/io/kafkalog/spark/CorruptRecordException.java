package io.kafkalog.spark;

/**
 * Bytes that are not a valid record batch or legacy message: bad length, CRC mismatch (both
 * values in the message), truncated body, malformed varint, unknown magic or codec. Python's
 * {@code CorruptRecordError}.
 */
public class CorruptRecordException extends KafkaLogException {
  private static final long serialVersionUID = 1L;

  public CorruptRecordException(String detail, String path, Long position, Long offset) {
    super(detail, path, position, offset);
  }

  @Override
  KafkaLogException rebuild(String d, String p, Long pos, Long off) {
    return new CorruptRecordException(d, p, pos, off);
  }
}
