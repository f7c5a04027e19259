// Test support: the few org.apache.kafka.common.utils.Utils methods the assignors and the
// protocol type classes call (the real class pulls in most of kafka-clients).
package org.apache.kafka.common.utils;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;

public final class Utils {
    private Utils() { }

    public static byte[] utf8(String s) { return s.getBytes(StandardCharsets.UTF_8); }

    /** Reads ``length`` bytes at the buffer's position without moving it (as Kafka's). */
    public static String utf8(ByteBuffer buffer, int length) {
        byte[] b = new byte[length];
        buffer.duplicate().get(b);
        return new String(b, StandardCharsets.UTF_8);
    }

    public static int utf8Length(CharSequence s) { return utf8(s.toString()).length; }

    public static <T extends Comparable<? super T>> List<T> sorted(Collection<T> collection) {
        List<T> res = new ArrayList<>(collection);
        Collections.sort(res);
        return Collections.unmodifiableList(res);
    }

    public static <T> Class<? extends T> loadClass(String klass, Class<T> base)
            throws ClassNotFoundException {
        throw new ClassNotFoundException(klass);
    }

    public static <T> T newInstance(Class<T> c) { throw new UnsupportedOperationException(); }
}
