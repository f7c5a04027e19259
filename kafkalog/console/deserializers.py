"""Kafka's deserializers (``org.apache.kafka.common.serialization``), as the console
consumer's ``DefaultMessageFormatter`` uses them: bytes in, the Java object's ``toString()``
out.

Source: ``clients/src/main/java/org/apache/kafka/common/serialization/*Deserializer.java``
and ``common/utils/Bytes.java`` (Kafka 4.2). The formatter prints ``toString()`` of what the
deserializer returns, so each function here returns that text; a deserializer's error is a
:class:`SerializationError` carrying Kafka's message (the console consumer stops on it, or
skips the record with ``--skip-message-on-error``).

The formatter never hands a deserializer ``null``: a missing key or value is replaced by the
``null.literal`` bytes first (``"null"``), so ``IntegerDeserializer`` reads a null key as the
int ``0x6e756c6c`` and ``VoidDeserializer`` always fails, exactly as Kafka's tool does.

``ByteArrayDeserializer`` is refused: Java prints a ``byte[]`` as its identity
(``[B@1b6d3586``), which is no data (leave the deserializer out to print the raw bytes).

Example
-------
>>> deserializer("org.apache.kafka.common.serialization.LongDeserializer")(
...     b"\\x00\\x00\\x00\\x00\\x00\\x00\\x01\\x00")
'256'
>>> deserializer("BytesDeserializer")(b"a\\\\b\\x00")
'a\\\\x5Cb\\\\x00'
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable

from ..decoders.message import java_double, java_float
from ..errors import KafkaLogError
from ..java_utf8 import JAVA_REPLACE

__all__ = ["SerializationError", "deserializer", "DESERIALIZERS"]

_PACKAGE = "org.apache.kafka.common.serialization."


class SerializationError(KafkaLogError, ValueError):
    """Kafka's ``SerializationException`` (or the exception a deserializer throws): the
    message is Kafka's text."""

    def __init__(self, message: str, java_class: str = "org.apache.kafka.common.errors."
                 "SerializationException") -> None:
        super().__init__(message)
        #: the Java exception class Kafka's tool would log
        self.java_class = java_class


def _sized(name: str, size: int, fmt: str, show: Callable[[object], str] = str,
           label: str | None = None) -> Callable[[bytes], str]:
    text = f"Size of data received by {label or name} is not {size}"

    def read(data: bytes) -> str:
        if len(data) != size:
            raise SerializationError(text)
        return show(struct.unpack(fmt, data)[0])
    return read


def _string(data: bytes) -> str:
    # new String(data, UTF_8): malformed sequences become U+FFFD (Java's replacement)
    return data.decode("utf-8", errors=JAVA_REPLACE)


def _uuid(data: bytes) -> str:
    # UUIDDeserializer parses the UUID's text form (UUID.fromString), not 16 raw bytes
    text = data.decode("utf-8", errors=JAVA_REPLACE)
    try:
        parts = text.split("-")
        if len(parts) != 5 or len(text) > 36 or not all(parts):
            raise ValueError(text)
        # Java's fromString takes 1-8, 1-4, 1-4, 1-4, 1-12 hex digits per field
        widths = (8, 4, 4, 4, 12)
        if any(len(p) > w for p, w in zip(parts, widths)):
            raise ValueError(text)
        value = uuid.UUID("-".join(p.rjust(w, "0") for p, w in zip(parts, widths)))
    except ValueError:
        raise SerializationError("Error parsing data into UUID") from None
    return str(value)


def _boolean(data: bytes) -> str:
    if len(data) != 1:
        raise SerializationError("Size of data received by BooleanDeserializer is not 1")
    if data[0] == 1:
        return "true"
    if data[0] == 0:
        return "false"
    # Java prints the byte signed
    raise SerializationError("Unexpected byte received by BooleanDeserializer: "
                             f"{struct.unpack('b', data)[0]}")


def _void(data: bytes) -> str:
    raise SerializationError("Data should be null for a VoidDeserializer.",
                             java_class="java.lang.IllegalArgumentException")


def _bytes_text(data: bytes) -> str:
    # Bytes.toString: printable ASCII but the backslash as is, every other byte \\xHH
    return "".join(chr(b) if 0x20 <= b <= 0x7E and b != 0x5C else f"\\x{b:02X}"
                   for b in data)


def _byte_buffer(data: bytes) -> str:
    # a heap ByteBuffer wrapping the array: Buffer.toString
    return f"java.nio.HeapByteBuffer[pos=0 lim={len(data)} cap={len(data)}]"


#: simple class name -> bytes -> toString() of the deserialized object
DESERIALIZERS: dict[str, Callable[[bytes], str]] = {
    "StringDeserializer": _string,
    "IntegerDeserializer": _sized("IntegerDeserializer", 4, ">i"),
    "LongDeserializer": _sized("LongDeserializer", 8, ">q"),
    "ShortDeserializer": _sized("ShortDeserializer", 2, ">h"),
    # (Float/DoubleDeserializer's byte[] paths name no class in their message)
    "FloatDeserializer": _sized("FloatDeserializer", 4, ">f", java_float, "Deserializer"),
    "DoubleDeserializer": _sized("DoubleDeserializer", 8, ">d", java_double, "Deserializer"),
    "UUIDDeserializer": _uuid,
    "BooleanDeserializer": _boolean,
    "VoidDeserializer": _void,
    "BytesDeserializer": _bytes_text,
    "ByteBufferDeserializer": _byte_buffer,
}


def deserializer(name: str) -> Callable[[bytes], str]:
    """The deserializer of class ``name`` (``org.apache.kafka.common.serialization.X`` or
    ``X``) as a function of the bytes.

    Raises
    ------
    ValueError
        A class this tool does not have (Kafka's tool loads any class on its classpath).
    """
    simple = name[len(_PACKAGE):] if name.startswith(_PACKAGE) else name
    if simple == "ByteArrayDeserializer":
        raise ValueError(
            f"{name} prints a Java array's identity ([B@...), not its bytes: leave the "
            "deserializer out to print the raw bytes")
    found = DESERIALIZERS.get(simple)
    if found is None:
        raise ValueError(
            f"Unknown deserializer class {name} (known: "
            f"{', '.join(_PACKAGE + n for n in sorted(DESERIALIZERS))})")
    return found
