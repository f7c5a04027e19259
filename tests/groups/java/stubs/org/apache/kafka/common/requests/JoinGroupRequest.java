// Test support: the two constants ConsumerGroupMetadata reads.
package org.apache.kafka.common.requests;

public final class JoinGroupRequest {
    public static final int UNKNOWN_GENERATION_ID = -1;
    public static final String UNKNOWN_MEMBER_ID = "";
    private JoinGroupRequest() { }
}
