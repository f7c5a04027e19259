package io.kafkalog.spark;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdDecompressCtx;
import com.github.luben.zstd.ZstdException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.zip.GZIPInputStream;
import net.jpountz.lz4.LZ4Exception;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;
import net.jpountz.xxhash.XXHash32;
import net.jpountz.xxhash.XXHashFactory;
import org.xerial.snappy.Snappy;

/**
 * Kafka's four codecs, read as Kafka reads them (spec section 3), with the libraries already on
 * Spark's classpath: {@code java.util.zip} (gzip), snappy-java (xerial stream framing, parsed
 * here), lz4-java (Kafka's LZ4 frame, parsed here: {@link #lz4}) and zstd-jni.
 *
 * <p>The port of Python's {@code kafkalog/records/compression.py}: decompression is bounded
 * ({@code maxSize}, 256 MiB by default: {@link RecordTooLargeException} above it) and every
 * failure is a {@link CorruptRecordException} without a location (the caller adds the batch's).
 *
 * <p>One instance per reader (it keeps a zstd context; outputs come from the reader's
 * {@link BufferPool}); not thread-safe.
 */
final class Codecs implements AutoCloseable {
  static final int NONE = 0;
  static final int GZIP = 1;
  static final int SNAPPY = 2;
  static final int LZ4 = 3;
  static final int ZSTD = 4;

  /** Python's {@code DEFAULT_MAX_DECOMPRESSED}: bound on one batch's decompressed bytes. */
  static final int DEFAULT_MAX_DECOMPRESSED = 256 * 1024 * 1024;

  static String name(int codec) {
    switch (codec) {
      case NONE:
        return "none";
      case GZIP:
        return "gzip";
      case SNAPPY:
        return "snappy";
      case LZ4:
        return "lz4";
      case ZSTD:
        return "zstd";
      default:
        return "unknown(" + codec + ")";
    }
  }

  private static final LZ4SafeDecompressor LZ4_BLOCKS =
      LZ4Factory.fastestInstance().safeDecompressor();
  private static final XXHash32 XXH32 = XXHashFactory.fastestInstance().hash32();

  private final int maxSize;
  private final BufferPool pool;
  private ZstdDecompressCtx zstd;

  /**
   * The last output: {@code out[0..outLen)}, an array from the pool. The next call reuses it
   * unless the caller took it (set {@code out = null} after pinning it: rows point into it).
   */
  byte[] out;
  int outLen;
  /**
   * The previous output size: the first guess for the next one. Batches of a segment have similar
   * sizes, and a guess that is too small costs zstd a second decompression (frames written by
   * Kafka's streaming compressor carry no content size) and lz4/snappy/gzip a copy.
   */
  private int lastOutLen;

  Codecs(int maxSize, BufferPool pool) {
    this.maxSize = maxSize;
    this.pool = pool;
  }

  Codecs(int maxSize) {
    this(maxSize, new BufferPool());
  }

  private static CorruptRecordException corrupt(String detail) {
    return new CorruptRecordException(detail, null, null, null);
  }

  private RecordTooLargeException tooLarge(String codec) {
    return new RecordTooLargeException(codec + " data decompresses to more than " + maxSize
        + " bytes (limit max_decompressed_bytes=" + maxSize + ")", null, null, null);
  }

  /** Decompress {@code src[off..off+len)} into {@link #out}; {@code magic} matters for lz4. */
  void decompress(int codec, int magic, byte[] src, int off, int len) {
    decompress0(codec, magic, src, off, len);
    lastOutLen = outLen;
  }

  private void decompress0(int codec, int magic, byte[] src, int off, int len) {
    switch (codec) {
      case GZIP:
        gzip(src, off, len);
        break;
      case SNAPPY:
        snappy(src, off, len);
        break;
      case LZ4:
        lz4(src, off, len, magic);
        break;
      case ZSTD:
        zstd(src, off, len);
        break;
      default:
        throw corrupt("unknown compression codec id " + codec + " (expected 0-4)");
    }
  }

  private void grow(int need) {
    if (need > maxSize) {
      throw new IllegalStateException("caller checks the bound");
    }
    if (out.length < need) {
      long n = Math.max((long) need, Math.min((long) maxSize, (long) out.length * 2));
      byte[] nb = pool.take((int) n);
      System.arraycopy(out, 0, nb, 0, outLen);
      pool.giveBack(out);
      out = nb;
    }
  }

  private void start(int guess) {
    long adaptive = (long) lastOutLen + (lastOutLen >> 3) + 64;
    int want = (int) Math.max(64, Math.min(Math.max(guess, adaptive), maxSize));
    if (out == null || out.length < want) {
      pool.giveBack(out);
      out = pool.take(want);
    }
    outLen = 0;
  }

  // -- gzip: GZIPInputStream, which is what Kafka's GzipCompression reads with. After a member
  // it reads another only if a whole valid header follows; trailing bytes are ignored.

  private void gzip(byte[] src, int off, int len) {
    start(len * 4);
    try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(src, off, len), 8192)) {
      while (true) {
        if (outLen == out.length) {
          if (outLen >= maxSize) {
            if (in.read() < 0) {
              return;
            }
            throw tooLarge("gzip");
          }
          grow(Math.min(maxSize, outLen + 1));
        }
        int r = in.read(out, outLen, out.length - outLen);
        if (r < 0) {
          return;
        }
        outLen += r;
      }
    } catch (IOException e) {
      throw corrupt("corrupt gzip data: " + e.getMessage());
    }
  }

  // -- snappy: xerial snappy-java stream framing (Python's _snappy_decompress, from
  // SnappyInputStream 1.1.10.x): 16-byte header 0x82 "SNAPPY" 0x00 + version + compatible
  // version, then [int32 BE length][raw block]; input without the header is one raw block.

  private static final byte[] SNAPPY_MAGIC = {(byte) 0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
  private static final int SNAPPY_MAGIC_HEAD = 0x82534e41;

  private static boolean snappyMagicAt(byte[] b, int i) {
    for (int k = 0; k < 8; k++) {
      if (b[i + k] != SNAPPY_MAGIC[k]) {
        return false;
      }
    }
    return true;
  }

  private void snappyRaw(byte[] src, int off, int len) {
    int declared;
    try {
      declared = Snappy.uncompressedLength(src, off, len);
    } catch (IOException | RuntimeException e) {
      throw corrupt("corrupt snappy block: " + e.getMessage());
    }
    if (declared < 0 || declared > maxSize - outLen) {
      throw new RecordTooLargeException("snappy data decompresses to more than " + maxSize
          + " bytes (limit max_decompressed_bytes=" + maxSize + ", block declares "
          + (declared & 0xFFFFFFFFL) + ")", null, null, null);
    }
    grow(outLen + declared);
    try {
      outLen += Snappy.uncompress(src, off, len, out, outLen);
    } catch (IOException | RuntimeException e) {
      throw corrupt("corrupt snappy block: " + e.getMessage());
    }
  }

  private void snappy(byte[] src, int off, int n) {
    start(n * 4);
    if (n == 0) {
      throw corrupt("empty snappy data (expected at least one byte)");
    }
    if (n < 16 || !snappyMagicAt(src, off)) {
      snappyRaw(src, off, n);
      return;
    }
    int pos = 0;
    while (true) {
      if (n - pos < 16) {
        throw corrupt("truncated snappy stream header (expected 16 bytes, found " + (n - pos)
            + ")");
      }
      if (!snappyMagicAt(src, off + pos)) {
        return; // snappy-java's hasNextChunk: a non-matching concatenated header ends the stream
      }
      int version = ByteUtils.readInt(src, off + pos + 8);
      if (version < 1) {
        throw corrupt("unsupported snappy stream version (expected >= 1, found " + version + ")");
      }
      pos += 16;
      while (true) {
        if (n - pos < 4) {
          return;
        }
        int chunk = ByteUtils.readInt(src, off + pos);
        if (chunk == SNAPPY_MAGIC_HEAD) {
          break; // a concatenated stream starts here
        }
        pos += 4;
        if (chunk < 0 || chunk > n - pos) {
          throw corrupt("bad snappy chunk length (expected 0.." + (n - pos) + ", found " + chunk
              + ")");
        }
        snappyRaw(src, off + pos, chunk);
        pos += chunk;
      }
    }
  }

  // -- lz4: one LZ4 frame (spec section 3; Kafka's Lz4BlockInputStream): independent blocks,
  // header checksum over FLG||BD verified for magic 1/2 and skipped for magic 0 (KAFKA-3160).

  private static final int LZ4_MAGIC = 0x184D2204;

  private void lz4(byte[] src, int off, int n, int magic) {
    start(n * 4);
    if (n < 7) {
      throw corrupt("truncated lz4 frame header (expected >= 7 bytes, found " + n + ")");
    }
    int m = ByteUtils.readIntLE(src, off);
    if (m != LZ4_MAGIC) {
      throw corrupt(String.format("bad lz4 frame magic (expected 0x%08x, found 0x%08x)",
          LZ4_MAGIC, m));
    }
    int flg = src[off + 4] & 0xFF;
    int bd = src[off + 5] & 0xFF;
    if ((flg & 0x03) != 0) {
      throw corrupt(String.format("lz4 FLG reserved bits must be 0 (found FLG 0x%02x)", flg));
    }
    if ((flg & 0x20) == 0) {
      throw corrupt(String.format("lz4 linked (dependent) blocks are unsupported (expected FLG "
          + "bit 5 set, found FLG 0x%02x)", flg));
    }
    if ((flg >> 6) != 1) {
      throw corrupt("lz4 frame version " + (flg >> 6) + " is unsupported (expected 1)");
    }
    if ((bd & 0x8F) != 0) {
      throw corrupt(String.format("lz4 BD reserved bits must be 0 (found BD 0x%02x)", bd));
    }
    int code = (bd >> 4) & 0x07;
    if (code < 4) {
      throw corrupt("lz4 block size code must be 4-7 (found " + code + ")");
    }
    int maxBlock = 1 << (2 * code + 8);
    boolean contentChecksum = (flg & 0x04) != 0;
    boolean hasSize = (flg & 0x08) != 0;
    boolean blockChecksum = (flg & 0x10) != 0;
    int pos = 6;
    if (hasSize) {
      if (n - pos < 8) {
        throw corrupt("truncated lz4 frame header (content size field)");
      }
      pos += 8;
    }
    if (pos >= n) {
      throw corrupt("truncated lz4 frame header (header checksum)");
    }
    if (magic != 0) {
      int expected = (XXH32.hash(src, off + 4, pos - 4, 0) >> 8) & 0xFF;
      int found = src[off + pos] & 0xFF;
      if (found != expected) {
        throw corrupt(String.format("lz4 frame descriptor checksum mismatch (expected 0x%02x, "
            + "found 0x%02x)", expected, found));
      }
    }
    pos += 1;
    while (true) {
      if (n - pos < 4) {
        throw corrupt("truncated lz4 frame (expected a block size or end mark)");
      }
      int word = ByteUtils.readIntLE(src, off + pos);
      pos += 4;
      int size = word & 0x7FFFFFFF;
      if (size == 0) {
        if (contentChecksum) {
          if (n - pos < 4) {
            throw corrupt("truncated lz4 frame (content checksum)");
          }
          long stored = ByteUtils.readIntLE(src, off + pos) & 0xFFFFFFFFL;
          long computed = XXH32.hash(out, 0, outLen, 0) & 0xFFFFFFFFL;
          if (stored != computed) {
            throw corrupt("lz4 content checksum mismatch (stored " + stored + ", computed "
                + computed + ")");
          }
        }
        return;
      }
      if (size > maxBlock) {
        throw corrupt("lz4 block size " + size + " exceeds the frame's maximum block size "
            + maxBlock);
      }
      if (n - pos < size) {
        throw corrupt("truncated lz4 block (expected " + size + " bytes, found " + (n - pos)
            + ")");
      }
      int blockOff = off + pos;
      pos += size;
      if (blockChecksum) {
        if (n - pos < 4) {
          throw corrupt("truncated lz4 frame (block checksum)");
        }
        long stored = ByteUtils.readIntLE(src, off + pos) & 0xFFFFFFFFL;
        pos += 4;
        long computed = XXH32.hash(src, blockOff, size, 0) & 0xFFFFFFFFL;
        if (stored != computed) {
          throw corrupt("lz4 block checksum mismatch (stored " + stored + ", computed " + computed
              + ")");
        }
      }
      // room for a whole block, bounded by maxSize (a bomb stops at the bound)
      int room = (int) Math.min((long) maxBlock, (long) maxSize - outLen);
      if ((word & 0x80000000) != 0) {
        if (size > maxSize - outLen) {
          throw tooLarge("lz4");
        }
        grow(outLen + size);
        System.arraycopy(src, blockOff, out, outLen, size);
        outLen += size;
      } else {
        if (room <= 0) {
          throw tooLarge("lz4");
        }
        grow(outLen + room);
        try {
          outLen += LZ4_BLOCKS.decompress(src, blockOff, size, out, outLen, room);
        } catch (LZ4Exception e) {
          if (room < maxBlock) {
            throw tooLarge("lz4");
          }
          throw corrupt("corrupt lz4 block: " + e.getMessage());
        }
      }
    }
  }

  // -- zstd: zstd-jni, one-shot into a growing buffer (frames written by Kafka's streaming
  // compressor carry no content size); ZSTD_decompressDCtx also reads concatenated frames.

  private void zstd(byte[] src, int off, int n) {
    if (n == 0) {
      start(64);
      throw corrupt("empty zstd data (expected a zstd frame)");
    }
    if (zstd == null) {
      zstd = new ZstdDecompressCtx();
    }
    long declared = Zstd.getFrameContentSize(src, off, n);
    int guess = declared > 0 && declared <= maxSize ? (int) declared : Math.max(n * 8, 1 << 16);
    start(guess);
    while (true) {
      try {
        outLen = zstd.decompressByteArray(out, 0, out.length, src, off, n);
        return;
      } catch (ZstdException e) {
        boolean small = e.getErrorCode() == Zstd.errDstSizeTooSmall()
            || String.valueOf(e.getMessage()).toLowerCase().contains("too small");
        if (!small) {
          throw corrupt("corrupt zstd data: " + e.getMessage());
        }
        if (out.length >= maxSize) {
          throw tooLarge("zstd");
        }
        pool.giveBack(out);
        out = pool.take((int) Math.min((long) maxSize, (long) out.length * 4));
        zstd.reset();
      } catch (RuntimeException e) {
        throw corrupt("corrupt zstd data: " + e.getMessage());
      }
    }
  }

  @Override
  public void close() {
    if (zstd != null) {
      zstd.close();
      zstd = null;
    }
  }
}
