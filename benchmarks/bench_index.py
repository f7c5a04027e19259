"""Index search benchmarks: the numba kernels over big-endian mmapped bytes vs numpy baselines.

Rows (convention of ``benchmarks/run_all.py``: name, value, unit, baseline, ratio, note; ratio =
baseline / value for times, so > 1 means we are faster):

* ``index.batched_kernel``: ``index_slots_for`` answering M random targets over an N-entry
  ``.index`` mapped from disk, vs ``numpy.searchsorted`` on a native-endian int64 copy of the
  offsets (the copy is made outside the timing: the baseline gets its best case).
* ``index.lookup_many``: ``OffsetIndex.lookup_many`` (kernel + decoding the found entries) vs
  ``searchsorted`` + gathering offsets and positions from native-endian copies.
* ``time_index.lookup_many``: the same for a ``.timeindex`` (64-bit keys).
* ``index.lookup_single``: one ``OffsetIndex.lookup`` from Python vs the bare dispatch cost of a
  trivial numba kernel taking one array and one int (the floor any kernel call pays); and
  ``index.lookup_single_vs_same_signature`` against a trivial kernel with the lookup kernel's
  own signature (4 arguments in, a 3-tuple out: dispatch cost grows with the arguments).
* ``index.lookup_single_vs_bisect``: the same lookup vs ``bisect`` over a Python list of
  offsets (what a pure-Python index would do at best).
* ``index.read_only_open.rolled_2MiB`` / ``.preallocated_10MiB``: what a reader in another
  process pays to open an index and answer one lookup (issue 16: read-only indexes are a
  ``pread`` copy, never a mapping, because the writer trims the file at every roll), for a
  rolled 1 GiB segment's index (262,144 entries) and an active segment's preallocated 10 MiB
  index (1,000 entries written); baseline: ``mmap`` of the file and the same kernel lookup
  (what read-only mode did before; it can die of SIGBUS).
* ``index.read_preallocated.10MiB``: the same active index read by the readers that stop at
  the preallocated zero tail (Spark planning, ``Log.open(read_only=True)``,
  ``kafkalog.file_copy.read_preallocated``) vs the same ``mmap`` baseline.

Run: ``python benchmarks/bench_index.py [--quick]``.
"""

from __future__ import annotations

import argparse
import bisect
import mmap
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from kafkalog.native import index_search
from numba import njit

from kafkalog.file_copy import read_preallocated
from kafkalog.index.offset_index import OffsetIndex
from kafkalog.index.time_index import TimeIndex


@njit(cache=True, nogil=True)
def _trivial(buf, x):
    return x


@njit(cache=True, nogil=True)
def _trivial_same_signature(buf, entries, base_offset, target):
    # what offset_index_lookup takes and returns, with no work: its dispatch + boxing floor
    return entries, base_offset, target


def _best(fn: Callable[[], object], repeat: int, number: int) -> float:
    """Best-of-``repeat`` seconds per call, over ``number`` calls each."""
    fn()  # warm-up (JIT compile / cache load, page faults)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def _row(name: str, value: float, baseline: float, unit: str, note: str) -> dict:
    return {
        "name": name,
        "value": value,
        "unit": unit,
        "baseline": baseline,
        "ratio": baseline / value if value else float("inf"),
        "note": note,
    }


def run(quick: bool = False) -> list[dict]:
    """Measure and return the rows (see the module docstring)."""
    n_entries = 100_000 if quick else 1_310_720  # a full default 10 MiB offset index
    n_targets = 100_000 if quick else 1_000_000
    repeat = 3 if quick else 5
    rng = np.random.default_rng(42)
    rows = []
    with tempfile.TemporaryDirectory() as d:
        base = 1_000_000
        rel = np.cumsum(rng.integers(1, 20, n_entries)).astype(np.int64)
        positions = np.arange(n_entries, dtype=np.int64) * 4096
        path = Path(d) / "00000000000000000000.index"
        raw = np.empty(n_entries, dtype=[("r", ">i4"), ("p", ">i4")])
        raw["r"], raw["p"] = rel, positions
        path.write_bytes(raw.tobytes())
        idx = OffsetIndex(path, base, writable=False)
        assert idx.entries == n_entries

        offsets_native = rel + base  # baseline's native-endian copy (not timed)
        pos_native = positions.copy()
        targets = rng.integers(base - 10, base + int(rel[-1]) + 10, n_targets).astype(np.int64)
        out = np.empty(n_targets, dtype=np.int64)
        buf = idx.buffer

        def kernel_batch() -> None:
            index_search.index_slots_for(buf, n_entries, 8, 0, 4, base, targets, 0, out)

        def np_batch() -> None:
            np.searchsorted(offsets_native, targets, side="right")

        kernel_batch()
        expected = np.searchsorted(offsets_native, targets, side="right") - 1
        assert np.array_equal(out, expected)
        t_k = _best(kernel_batch, repeat, 1)
        t_np = _best(np_batch, repeat, 1)
        rows.append(_row("index.batched_kernel", t_k / n_targets * 1e9, t_np / n_targets * 1e9,
                         "ns/target", f"{n_targets} random targets, {n_entries} entries, "
                         "baseline numpy.searchsorted on a native int64 copy"))

        def api_batch() -> None:
            idx.lookup_many(targets)

        def np_api_batch() -> None:
            slots = np.searchsorted(offsets_native, targets, side="right") - 1
            ok = slots >= 0
            s = np.where(ok, slots, 0)
            np.where(ok, offsets_native[s], base), np.where(ok, pos_native[s], 0)

        o, p = idx.lookup_many(targets[:1000])
        assert o.tolist() == [idx.lookup(int(t)).offset for t in targets[:1000]]
        t_api = _best(api_batch, repeat, 1)
        t_np_api = _best(np_api_batch, repeat, 1)
        rows.append(_row("index.lookup_many", t_api / n_targets * 1e9,
                         t_np_api / n_targets * 1e9, "ns/target",
                         "OffsetIndex.lookup_many (results decoded) vs searchsorted + gather"))

        # time index: 64-bit keys
        n_time = n_entries * 2 // 3
        ts = 1_700_000_000_000 + np.cumsum(rng.integers(1, 1000, n_time)).astype(np.int64)
        traw = np.empty(n_time, dtype=[("t", ">i8"), ("r", ">i4")])
        traw["t"], traw["r"] = ts, np.arange(n_time)
        tpath = Path(d) / "00000000000000000000.timeindex"
        tpath.write_bytes(traw.tobytes())
        tidx = TimeIndex(tpath, 0, writable=False)
        ttargets = rng.integers(int(ts[0]) - 5, int(ts[-1]) + 5, n_targets).astype(np.int64)
        t_tk = _best(lambda: tidx.lookup_many(ttargets), repeat, 1)
        t_tnp = _best(lambda: np.searchsorted(ts, ttargets, side="right"), repeat, 1)
        rows.append(_row("time_index.lookup_many", t_tk / n_targets * 1e9,
                         t_tnp / n_targets * 1e9, "ns/target",
                         f"{n_time} entries; baseline searchsorted only (no gather)"))

        # single lookups from Python
        one = int(targets[0])
        number = 20_000 if quick else 100_000
        t_single = _best(lambda: idx.lookup(one), repeat, number)
        t_trivial = _best(lambda: _trivial(buf, one), repeat, number)
        t_same = _best(lambda: _trivial_same_signature(buf, n_entries, base, one), repeat, number)
        rows.append(_row("index.lookup_single", t_single * 1e9, t_trivial * 1e9, "ns/call",
                         "OffsetIndex.lookup vs a trivial 2-argument numba kernel's dispatch "
                         "(target: ratio >= 0.33, i.e. within 3x)"))
        rows.append(_row("index.lookup_single_vs_same_signature", t_single * 1e9, t_same * 1e9,
                         "ns/call", "OffsetIndex.lookup vs a trivial kernel with the lookup "
                         "kernel's signature (4 args in, 3-tuple out)"))
        offsets_list = offsets_native.tolist()
        t_bisect = _best(lambda: bisect.bisect_right(offsets_list, one), repeat, number)
        rows.append(_row("index.lookup_single_vs_bisect", t_single * 1e9, t_bisect * 1e9,
                         "ns/call", "baseline bisect on a Python list (no decode, no I/O)"))
        idx.close()
        tidx.close()
        rows += _read_only_open_rows(Path(d), rng, repeat, 200 if quick else 1000)
    return rows


def _mmap_lookup(path: Path, base: int, target: int) -> int:
    """The baseline: what a read-only index did before (map, search, unmap)."""
    with open(path, "rb") as f:
        m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    buf = np.frombuffer(m, np.uint8)
    slot = int(index_search.index_slot_for(buf, buf.shape[0] // 8, 8, 0, 4, base, target,
                                           index_search.LARGEST_LOWER_BOUND))
    del buf
    m.close()
    return slot


def _read_only_open_rows(d: Path, rng: np.random.Generator, repeat: int, number: int
                         ) -> list[dict]:
    rows = []
    base = 0
    rolled = d / "00000000000000000000.rolled.index"
    n = 262_144
    raw = np.empty(n, dtype=[("r", ">i4"), ("p", ">i4")])
    raw["r"] = np.arange(n) * 4
    raw["p"] = np.arange(n) * 4096
    rolled.write_bytes(raw.tobytes())
    pre = d / "00000000000000000000.pre.index"
    pre.write_bytes(raw[:1000].tobytes() + b"\0" * (10 * 1024 * 1024 - 8000))
    target = 3 * 500

    def copy_open(path: Path) -> int:
        idx = OffsetIndex(path, base, writable=False)
        slot = idx.largest_lower_bound_slot_for(target)
        idx.close()
        return slot

    for name, path in (("rolled_2MiB", rolled), ("preallocated_10MiB", pre)):
        assert copy_open(path) == _mmap_lookup(path, base, target) or name.startswith("pre")
        t_copy = _best(lambda p=path: copy_open(p), repeat, number)
        t_map = _best(lambda p=path: _mmap_lookup(p, base, target), repeat, number)
        rows.append(_row(f"index.read_only_open.{name}", t_copy * 1e6, t_map * 1e6, "us/open",
                         "OffsetIndex(writable=False) + one lookup + close (pread copy) vs mmap "
                         "+ the same kernel lookup + unmap"))
    t_prefix = _best(lambda: read_preallocated(pre, 8), repeat, number)
    t_map = _best(lambda: _mmap_lookup(pre, base, target), repeat, number)
    rows.append(_row("index.read_preallocated.10MiB", t_prefix * 1e6, t_map * 1e6, "us/open",
                     "read up to the zero tail of a preallocated 10 MiB index with 1,000 "
                     "entries (planning, read-only logs) vs mmap + lookup"))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (CI smoke run)")
    args = ap.parse_args()
    for r in run(quick=args.quick):
        print(f"{r['name']:32s} {r['value']:10.1f} {r['unit']:10s} baseline {r['baseline']:10.1f}"
              f"  ratio {r['ratio']:5.2f}  ({r['note']})")


if __name__ == "__main__":
    main()
