#!/usr/bin/env bash
# The project's test command (README, .ci/run): install with dev extras, lint, run the whole
# suite (the kernel tests beside the rest), then run the kernel tests again with
# NUMBA_DISABLE_JIT=1 so the plain-Python path of every numba kernel is exercised against its
# reference too (beside the rerun without extensions). Exits non-zero if any run failed.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install -e '.[dev]'
ruff check .
export PYSPARK_PYTHON="${PYSPARK_PYTHON:-$(python -c 'import sys; print(sys.executable)')}"
tmp=$(mktemp -d)
# The kernel tests (tests/native: ~200 s on a fresh machine, most of it numba compiling what
# later calls load from its cache) run beside the rest of the suite, on the second core, in
# their own process and basetemp; their output is printed after the main run's.
python -m pytest tests/native -p no:cacheprovider --basetemp="$tmp/native" \
    >"$tmp/native.log" 2>&1 &
native=$!
main_rc=0
python -m pytest --ignore=tests/native --durations=25 --basetemp="$tmp/main" || main_rc=$?
native_rc=0
wait "$native" || native_rc=$?
echo "--- python -m pytest tests/native ---"
cat "$tmp/native.log"
# (an explicit exit: set -e ignores a failing test that is not the last of an && list, and
# `[ a ] && [ b ]` here let a failed main suite through to a zero exit status)
if [ "$main_rc" != 0 ] || [ "$native_rc" != 0 ]; then
    echo "tools/test.sh: pytest failed (main suite rc $main_rc, tests/native rc $native_rc)" >&2
    exit 1
fi
# The two reruns below run side by side too (each one process, ~35 s), each in its own
# basetemp; the first one's output is printed after the second.
NUMBA_DISABLE_JIT=1 python -m pytest tests/native -p no:cacheprovider --basetemp="$tmp/nojit" \
    >"$tmp/nojit.log" 2>&1 &
nojit=$!
# the row and append paths again without the optional C extensions (kafkalog.native._rows,
# kafkalog.native._append): the fallback users without a compiler get must give the same
# records and bytes; and file copies without page moves (kafkalog.page_pool), as on kernels
# without mremap(MREMAP_DONTUNMAP)
noext_rc=0
KAFKALOG_NO_EXTENSIONS=1 KAFKALOG_NO_PAGE_MOVES=1 python -m pytest -p no:cacheprovider \
    --basetemp="$tmp/noext" \
    tests/test_file_copy.py tests/test_page_pool.py \
    tests/test_builder_rows.py tests/test_builder.py tests/test_log.py \
    tests/test_log_fast_paths.py tests/test_single_batch.py tests/test_segment_reserve.py \
    tests/test_segment_append_state.py \
    tests/test_native_extensions.py || noext_rc=$?
nojit_rc=0
wait "$nojit" || nojit_rc=$?
echo "--- NUMBA_DISABLE_JIT=1 python -m pytest tests/native ---"
cat "$tmp/nojit.log"
rm -rf "$tmp"
if [ "$noext_rc" != 0 ] || [ "$nojit_rc" != 0 ]; then
    echo "tools/test.sh: pytest failed (no extensions rc $noext_rc, NUMBA_DISABLE_JIT rc $nojit_rc)" >&2
    exit 1
fi
