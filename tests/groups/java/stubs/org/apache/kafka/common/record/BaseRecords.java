// Test support: compile-time stand-in (records are never serialized by the assignors).
package org.apache.kafka.common.record;

public interface BaseRecords {
    int sizeInBytes();
}
