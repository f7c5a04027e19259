// Test support: compile-time stand-in.
package org.apache.kafka.common.record;

import java.nio.ByteBuffer;

public final class MemoryRecords implements BaseRecords {
    private final ByteBuffer buffer;
    private MemoryRecords(ByteBuffer b) { buffer = b; }
    public static MemoryRecords readableRecords(ByteBuffer b) { return new MemoryRecords(b); }
    public ByteBuffer buffer() { return buffer; }
    public int sizeInBytes() { return buffer.limit(); }
}
