// Test support: the two constants protocol.types.Struct imports.
package org.apache.kafka.common.protocol;

public final class MessageUtil {
    public static final long UNSIGNED_INT_MAX = 4294967295L;
    public static final int UNSIGNED_SHORT_MAX = 65535;
    private MessageUtil() { }
}
