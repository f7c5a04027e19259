"""Plain-Python oracle for native/console_lines.py, written from Kafka's
``DefaultMessageFormatter.writeTo`` (tools/.../consumer/DefaultMessageFormatter.java, 4.2)."""

from __future__ import annotations

FIELDS = ("timestamp", "partition", "offset", "delivery", "epoch", "headers", "key", "value")


def format_lines(fields: int, timestamps: list[int], timestamp_types: list[int],
                 offsets: list[int], partition: int, keys: list[bytes | None],
                 values: list[bytes | None], headers_text: list[bytes], key_sep: bytes,
                 line_sep: bytes, null_literal: bytes) -> bytes:
    """Every row's line: the enabled fields (bit i of ``fields`` is ``FIELDS[i]``), each
    followed by ``key_sep`` when a later one is enabled, else by ``line_sep``."""
    on = [bool(fields >> i & 1) for i in range(len(FIELDS))]
    out = bytearray()
    for i in range(len(offsets)):
        texts = []
        for name, enabled in zip(FIELDS, on):
            if not enabled:
                continue
            if name == "timestamp":
                t = timestamp_types[i]
                texts.append(b"CreateTime:%d" % timestamps[i] if t == 0 else
                             b"LogAppendTime:%d" % timestamps[i] if t == 1 else b"NO_TIMESTAMP")
            elif name == "partition":
                texts.append(b"Partition:%d" % partition)
            elif name == "offset":
                texts.append(b"Offset:%d" % offsets[i])
            elif name == "delivery":
                texts.append(b"Delivery:NOT_PRESENT")
            elif name == "epoch":
                texts.append(b"Epoch:NOT_PRESENT")
            elif name == "headers":
                texts.append(headers_text[i])
            elif name == "key":
                texts.append(null_literal if keys[i] is None else keys[i])
            else:
                texts.append(null_literal if values[i] is None else values[i])
        if texts:
            out += key_sep.join(texts) + line_sep
    return bytes(out)
