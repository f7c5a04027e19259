package io.kafkalog.spark;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;

/**
 * Release a file mapping now rather than at the next GC (which may come only after thousands of
 * segments have been mapped): {@code sun.misc.Unsafe.invokeCleaner}, the supported way on Java
 * 9+ (module jdk.unsupported, no --add-opens). Where it is unavailable the mapping is left to
 * the GC.
 */
final class Unmapper {
  private Unmapper() {}

  private static final Object UNSAFE;
  private static final Method INVOKE_CLEANER;

  static {
    Object unsafe = null;
    Method clean = null;
    try {
      Class<?> c = Class.forName("sun.misc.Unsafe");
      Field f = c.getDeclaredField("theUnsafe");
      f.setAccessible(true);
      unsafe = f.get(null);
      clean = c.getMethod("invokeCleaner", ByteBuffer.class);
    } catch (ReflectiveOperationException | RuntimeException e) {
      unsafe = null;
      clean = null;
    }
    UNSAFE = unsafe;
    INVOKE_CLEANER = clean;
  }

  static void unmap(ByteBuffer mapped) {
    if (INVOKE_CLEANER == null || !mapped.isDirect()) {
      return;
    }
    try {
      INVOKE_CLEANER.invoke(UNSAFE, mapped);
    } catch (ReflectiveOperationException | RuntimeException e) {
      // left to the GC
    }
  }
}
