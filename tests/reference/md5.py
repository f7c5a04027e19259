"""Plain-Python oracle for native/md5.py: the standard library's MD5 (RFC 1321)."""

from __future__ import annotations

import hashlib


def md5_digest(data: bytes) -> bytes:
    """The 16-byte MD5 digest of ``data``."""
    return hashlib.md5(data).digest()
