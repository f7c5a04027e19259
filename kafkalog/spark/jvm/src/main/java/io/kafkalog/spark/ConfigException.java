package io.kafkalog.spark;

/** A bad option value, naming the option. Python's {@code ConfigError}. */
public class ConfigException extends KafkaLogException {
  private static final long serialVersionUID = 1L;

  public ConfigException(String detail) {
    super(detail, null, null, null);
  }

  @Override
  KafkaLogException rebuild(String d, String p, Long pos, Long off) {
    return new ConfigException(d);
  }
}
