// Test support for tests/groups/test_assignors_java.py: a silent stand-in for slf4j's Logger,
// so that Kafka's assignor sources compile without their logging dependency.
package org.slf4j;

public class Logger {
    public boolean isDebugEnabled() { return false; }
    public boolean isTraceEnabled() { return false; }
    public void trace(String f, Object... a) { }
    public void debug(String f, Object... a) { }
    public void info(String f, Object... a) { }
    public void warn(String f, Object... a) { }
    public void error(String f, Object... a) { }
}
