"""Bytes to text as Java decodes UTF-8: ``new String(bytes, UTF_8)``, ``InputStreamReader``.

Kafka reads every string it did not write itself this way (record header keys, a
``StringDecoder``'s keys and values in kafka-dump-log.sh, the lines kafka-console-producer.sh
reads, a ``StringDeserializer``'s records), and Java replaces ill-formed bytes by U+FFFD with
its own rule for how many bytes one replacement covers (``sun.nio.cs.UTF_8.Decoder.malformedN``
and ``String.decodeUTF8_UTF16``, JDK 17), which is not always Python's:

* an encoded surrogate (``ED A0 80``, what CESU-8 and "modified UTF-8" write) is one
  replacement in Java, three in Python;
* a sequence cut by the end of the input is one replacement for all its bytes (both agree);
* otherwise the replacement covers the bytes that could still begin a valid sequence, as in
  Python.

:data:`JAVA_REPLACE` is a codec error handler with Java's rule; valid input decodes exactly as
``bytes.decode("utf-8")`` (the handler runs only where the bytes are ill-formed).

>>> b"a\\xed\\xa0\\x80b".decode("utf-8", JAVA_REPLACE)
'a\\ufffdb'
>>> b"a\\xed\\xa0\\x80b".decode("utf-8", "replace")
'a\\ufffd\\ufffd\\ufffdb'
>>> decode_utf8(b"\\xf0\\x90\\x80")  # cut at the end: one replacement
'\\ufffd'
"""

from __future__ import annotations

import codecs

__all__ = ["JAVA_REPLACE", "decode_utf8", "java_malformed_length"]

#: the codec error handler's name: ``data.decode("utf-8", JAVA_REPLACE)``
JAVA_REPLACE = "kafkalog-java-replace"


def _cont(b: int) -> bool:
    return (b & 0xC0) == 0x80


def java_malformed_length(data: bytes | bytearray | memoryview, i: int) -> int:
    """How many bytes from ``data[i]`` (the first byte of an ill-formed sequence) Java's UTF-8
    decoder replaces by one U+FFFD."""
    n = len(data)
    b1 = data[i]
    rem = n - i
    if 0xC2 <= b1 <= 0xDF:
        return rem if rem < 2 else 1
    if 0xE0 <= b1 <= 0xEF:
        if rem < 3:
            if rem > 1 and ((b1 == 0xE0 and (data[i + 1] & 0xE0) == 0x80)
                            or not _cont(data[i + 1])):
                return 1  # isMalformed3_2
            return rem  # cut by the end: the rest, once
        b2, b3 = data[i + 1], data[i + 2]
        if (b1 == 0xE0 and (b2 & 0xE0) == 0x80) or not _cont(b2) or not _cont(b3):
            # isMalformed3 -> malformedN(3)
            return 1 if (b1 == 0xE0 and (b2 & 0xE0) == 0x80) or not _cont(b2) else 2
        return 3  # a surrogate: malformedForLength(3)
    if 0xF0 <= b1 <= 0xF7:
        if rem < 4:
            if b1 > 0xF4 or (rem > 1 and _malformed4_2(b1, data[i + 1])):
                return 1
            if rem > 2 and not _cont(data[i + 2]):
                return 2
            return rem
        b2, b3 = data[i + 1], data[i + 2]
        if b1 > 0xF4 or _malformed4_2(b1, b2):  # malformedN(4)
            return 1
        return 2 if not _cont(b3) else 3
    return 1


def _malformed4_2(b1: int, b2: int) -> bool:
    return ((b1 == 0xF0 and (b2 < 0x90 or b2 > 0xBF)) or (b1 == 0xF4 and (b2 & 0xF0) != 0x80)
            or not _cont(b2))


def _java_replace(e: UnicodeError) -> tuple[str, int]:
    if not isinstance(e, UnicodeDecodeError):
        raise e
    return "\ufffd", e.start + java_malformed_length(e.object, e.start)


codecs.register_error(JAVA_REPLACE, _java_replace)


def decode_utf8(data: bytes | bytearray | memoryview) -> str:
    """``new String(data, UTF_8)``."""
    return bytes(data).decode("utf-8", JAVA_REPLACE)
