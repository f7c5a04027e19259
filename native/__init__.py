"""numba kernels for kafkalog's hot paths, installed as ``kafkalog.native``.

Kernels import only numpy and numba, work on ``uint8`` buffers without copying (an mmapped file
wrapped by ``np.frombuffer``), bounds-check every read and report errors through return codes.
Each kernel has a plain-Python reference of the same name under ``tests/reference/`` and a
property test comparing the two.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

#: the optional C extensions built beside the kernels (``native/*.c``; see each file's opening
#: comment): each has a Python twin that stays the reference and the fallback
OPTIONAL_EXTENSIONS = ("_rows", "_append")


def optional_extension(name: str) -> ModuleType | None:
    """The optional C extension ``kafkalog.native.<name>``, or None when it was not built or
    ``KAFKALOG_NO_EXTENSIONS`` is set: the caller then uses the extension's Python twin.

    >>> optional_extension("_no_such_extension") is None
    True
    """
    if os.environ.get("KAFKALOG_NO_EXTENSIONS"):
        return None
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ImportError:  # not built (no C compiler where it was installed)
        return None
