// Test support: returns the silent Logger.
package org.slf4j;

public final class LoggerFactory {
    private LoggerFactory() { }
    public static Logger getLogger(Class<?> c) { return new Logger(); }
    public static Logger getLogger(String n) { return new Logger(); }
}
