package io.kafkalog.spark;

/** An index file that fails its checks. Python's {@code CorruptIndexError}. */
public class CorruptIndexException extends KafkaLogException {
  private static final long serialVersionUID = 1L;

  public CorruptIndexException(String detail, String path, Long position, Long offset) {
    super(detail, path, position, offset);
  }

  @Override
  KafkaLogException rebuild(String d, String p, Long pos, Long off) {
    return new CorruptIndexException(d, p, pos, off);
  }
}
