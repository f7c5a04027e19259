#!/usr/bin/env bash
# The project's test command (README, .ci/run): install with dev extras, lint, run the suite,
# then run the kernel tests again with NUMBA_DISABLE_JIT=1 so the plain-Python path of every
# numba kernel is exercised against its reference too.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install -e '.[dev]'
ruff check .
export PYSPARK_PYTHON="${PYSPARK_PYTHON:-$(python -c 'import sys; print(sys.executable)')}"
python -m pytest --durations=25
NUMBA_DISABLE_JIT=1 python -m pytest tests/native -p no:cacheprovider
# the row and append paths again without the optional C extensions (kafkalog.native._rows,
# kafkalog.native._append): the fallback users without a compiler get must give the same
# records and bytes; and file copies without page moves (kafkalog.page_pool), as on kernels
# without mremap(MREMAP_DONTUNMAP)
KAFKALOG_NO_EXTENSIONS=1 KAFKALOG_NO_PAGE_MOVES=1 python -m pytest -p no:cacheprovider \
    tests/test_file_copy.py tests/test_page_pool.py \
    tests/test_builder_rows.py tests/test_builder.py tests/test_log.py \
    tests/test_log_fast_paths.py tests/test_single_batch.py tests/test_segment_reserve.py \
    tests/test_native_extensions.py
