"""numba kernels for kafkalog's hot paths, installed as ``kafkalog.native``.

Kernels import only numpy and numba, work on ``uint8`` buffers without copying (an mmapped file
wrapped by ``np.frombuffer``), bounds-check every read and report errors through return codes.
Each kernel has a plain-Python reference of the same name under ``tests/reference/`` and a
property test comparing the two.
"""
