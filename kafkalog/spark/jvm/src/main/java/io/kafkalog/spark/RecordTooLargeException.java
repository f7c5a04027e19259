package io.kafkalog.spark;

/** A decompressed size above the bound (a decompression bomb). Python's {@code RecordTooLargeError}. */
public class RecordTooLargeException extends CorruptRecordException {
  private static final long serialVersionUID = 1L;

  public RecordTooLargeException(String detail, String path, Long position, Long offset) {
    super(detail, path, position, offset);
  }

  @Override
  KafkaLogException rebuild(String d, String p, Long pos, Long off) {
    return new RecordTooLargeException(d, p, pos, off);
  }
}
