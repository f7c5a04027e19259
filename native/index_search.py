"""Binary search over the big-endian bytes of a memory-mapped ``.index`` / ``.timeindex``.

The kernels read the mapped file directly (``np.frombuffer(mmap, np.uint8)``): no copy, no
byte swap of the file. They are generic over the entry layout the way Kafka's
``AbstractIndex.indexSlotRangeFor`` is generic over ``IndexSearchType`` (KEY/VALUE) and
``SearchResultType`` (LARGEST_LOWER_BOUND/SMALLEST_UPPER_BOUND):

==============  ==========  =========  ========  ==================================
index           entry_size  key_pos    key_size  key_base
==============  ==========  =========  ========  ==================================
offset KEY      8           0          4         base offset (relative -> absolute)
offset VALUE    8           4          4         0 (file position)
time KEY        12          0          8         0 (timestamp)
time VALUE      12          8          4         base offset (relative -> absolute)
==============  ==========  =========  ========  ==================================

Every compared key is ``key_base + signed big-endian int at entry*entry_size + key_pos``.

Search (Kafka's algorithm, step for step, so results and quirks are Kafka's):

* empty index -> ``NOT_FOUND``;
* **warm section first** (KAFKA-6432, Kafka 2.1.0+). Lookups come almost always from in-sync
  followers and consumers, i.e. near the end of the index, while a plain binary search starts in
  the middle: for an index of 13 pages a lookup in the last page touches pages 0, 6, 9, 11, 12,
  and as the index grows into page 13 the path changes to 0, 7, 10, 12, 13 - pages 7 and 10 have
  not been touched for a long time and may have left the page cache, costing a disk read (Kafka
  measured produce latency jumping to about a second). So the last ``8192 // entry_size``
  entries (the "warm" section: 1024 offset entries, 682 time entries) are searched first
  whenever the target is above the first warm entry. 8 KB is small enough that the three
  entries every warm search touches (first warm, last, middle) touch all of the warm pages on a
  4 KB-page machine - so the warm section really stays warm - and large enough that nearly all
  in-sync lookups land in it (about 4 MB of log for the offset index). Results are identical to
  a plain binary search; only which pages are read changes.
* otherwise, target below entry 0 -> ``NOT_FOUND`` (largest lower bound) or 0 (smallest upper
  bound); else binary search the cold section ``[0, firstHot]``.
* The binary search is Kafka's: ``mid = (lo + hi + 1) >>> 1``, returns ``mid`` on an exact match,
  else largest lower bound = ``lo``; smallest upper bound = ``lo + 1`` or ``NOT_FOUND`` when
  ``lo`` is the last entry. Quirk kept on purpose: the loop never compares ``entry[lo]`` for the
  initial ``lo``, so a smallest-upper-bound search for a target *equal to entry 0* (cold branch)
  answers slot 1 (or ``NOT_FOUND`` for a 1-entry index), not slot 0. Kafka only uses that search
  for ``fetchUpperBoundOffset`` ("an offset guaranteed outside the fetched range"), where a
  later slot is still correct.

Return codes: a slot ``>= 0``; ``NOT_FOUND`` (-1); ``ERR_BUFFER_TOO_SHORT`` (-2) when
``entries * entry_size`` bytes are not in the buffer; ``ERR_BAD_LAYOUT`` (-3) for an entry size,
key position/size or search type that is not valid. The batched kernel returns one of the error
codes (or 0) as status and fills ``out`` only when the status is 0.

Example
-------
>>> import numpy as np, struct
>>> buf = np.frombuffer(struct.pack(">iiii", 3, 0, 7, 4096), np.uint8)
>>> int(index_slot_for(buf, 2, 8, 0, 4, 100, 105, LARGEST_LOWER_BOUND))  # key 103 <= 105
0
"""

from __future__ import annotations

import numpy as np

from ._jit import inline, kernel
from .bytes_be import read_i32, read_i64

LARGEST_LOWER_BOUND = 0
SMALLEST_UPPER_BOUND = 1

NOT_FOUND = -1
ERR_BUFFER_TOO_SHORT = -2
ERR_BAD_LAYOUT = -3

#: Kafka's warm-section size in bytes (AbstractIndex.warmEntries = 8192 / entrySize)
WARM_SECTION_BYTES = 8192


@inline
def _key_at(buf, slot, entry_size, key_pos, key_size, key_base):
    p = slot * entry_size + key_pos
    if key_size == 8:
        return read_i64(buf, p) + key_base
    return read_i32(buf, p) + key_base


@inline
def _layout_error(buf, entries, entry_size, key_pos, key_size, search_type):
    if entry_size <= 0 or key_pos < 0 or (key_size != 4 and key_size != 8):
        return ERR_BAD_LAYOUT
    if key_pos + key_size > entry_size:
        return ERR_BAD_LAYOUT
    if search_type != LARGEST_LOWER_BOUND and search_type != SMALLEST_UPPER_BOUND:
        return ERR_BAD_LAYOUT
    if entries < 0:
        return ERR_BAD_LAYOUT
    # every read below is at slot*entry_size + key_pos + key_size <= entries*entry_size;
    # compared by division so a huge `entries` cannot overflow the product past the check
    if entries > buf.shape[0] // entry_size:
        return ERR_BUFFER_TOO_SHORT
    return 0


@inline
def _binary_search(buf, entries, entry_size, key_pos, key_size, key_base, target, search_type,
                   begin, end):
    lo = np.int64(begin)
    hi = np.int64(end)
    while lo < hi:
        mid = (lo + hi + 1) >> 1
        found = _key_at(buf, mid, entry_size, key_pos, key_size, key_base)
        if found > target:
            hi = mid - 1
        elif found < target:
            lo = mid
        else:
            return mid
    if search_type == LARGEST_LOWER_BOUND:
        return lo
    if lo == entries - 1:
        return np.int64(NOT_FOUND)
    return lo + 1


@inline
def _slot_for(buf, entries, entry_size, key_pos, key_size, key_base, target, search_type):
    if entries == 0:
        return np.int64(NOT_FOUND)
    warm_entries = WARM_SECTION_BYTES // entry_size
    first_hot = entries - 1 - warm_entries
    if first_hot < 0:
        first_hot = 0
    # target beyond the first warm entry: search only the warm section (stays in page cache)
    if _key_at(buf, first_hot, entry_size, key_pos, key_size, key_base) < target:
        return _binary_search(buf, entries, entry_size, key_pos, key_size, key_base, target,
                              search_type, first_hot, entries - 1)
    # target before the first entry
    if _key_at(buf, 0, entry_size, key_pos, key_size, key_base) > target:
        if search_type == LARGEST_LOWER_BOUND:
            return np.int64(NOT_FOUND)
        return np.int64(0)
    return _binary_search(buf, entries, entry_size, key_pos, key_size, key_base, target,
                          search_type, 0, first_hot)


@kernel
def index_slot_for(buf, entries, entry_size, key_pos, key_size, key_base, target, search_type):
    """Slot of the largest entry <= ``target`` or smallest entry >= ``target`` (Kafka's search).

    Parameters
    ----------
    buf : uint8[:]
        The index bytes (mmapped file), big-endian entries from position 0.
    entries : int
        Number of valid entries (the search never reads beyond them).
    entry_size, key_pos, key_size, key_base : int
        Entry layout; see the module table. ``key_size`` is 4 or 8.
    target : int
        The key to look for, in the same units as ``key_base + stored key``.
    search_type : int
        ``LARGEST_LOWER_BOUND`` or ``SMALLEST_UPPER_BOUND``.

    Returns
    -------
    int
        Slot, ``NOT_FOUND`` or a negative error code.
    """
    err = _layout_error(buf, entries, entry_size, key_pos, key_size, search_type)
    if err != 0:
        return np.int64(err)
    return _slot_for(buf, np.int64(entries), np.int64(entry_size), np.int64(key_pos),
                     np.int64(key_size), np.int64(key_base), np.int64(target),
                     np.int64(search_type))


#: targets searched in lockstep by the batched kernel (see index_slots_for)
INTERLEAVE = 16
#: index size from which the batched kernel interleaves: below it the entries stay in the CPU
#: caches, there is no miss latency to overlap and the plain loop is cheaper
INTERLEAVE_MIN_BYTES = 1 << 20


@kernel
def index_slots_for(buf, entries, entry_size, key_pos, key_size, key_base, targets, search_type,
                    out):
    """Batched :func:`index_slot_for`: ``out[i]`` = slot for ``targets[i]`` (same rules).

    One call answers many targets (Spark split planning, ``offset_for_timestamp``); targets
    need not be sorted. ``out`` is int64 with ``len(out) >= len(targets)``.

    Each target runs exactly Kafka's search (same probes, same answer, quirks included). On an
    index of ``INTERLEAVE_MIN_BYTES`` or more, ``INTERLEAVE`` targets advance in lockstep, one
    probe each per round: their loads are independent, so the memory latencies of an index
    larger than the CPU caches overlap instead of adding up (a plain loop waits for every
    cache miss in turn). Smaller indexes use the plain loop.

    Returns
    -------
    int
        0, or a negative error code (``out`` untouched).
    """
    err = _layout_error(buf, entries, entry_size, key_pos, key_size, search_type)
    if err != 0:
        return np.int64(err)
    if out.shape[0] < targets.shape[0]:
        return np.int64(ERR_BAD_LAYOUT)
    n = np.int64(entries)
    es = np.int64(entry_size)
    kp = np.int64(key_pos)
    ks = np.int64(key_size)
    kb = np.int64(key_base)
    st = np.int64(search_type)
    m = targets.shape[0]
    if n * es < INTERLEAVE_MIN_BYTES:
        for i in range(m):
            out[i] = _slot_for(buf, n, es, kp, ks, kb, np.int64(targets[i]), st)
        return np.int64(0)
    warm_entries = WARM_SECTION_BYTES // es
    first_hot = n - 1 - warm_entries
    if first_hot < 0:
        first_hot = np.int64(0)
    key_first_hot = _key_at(buf, first_hot, es, kp, ks, kb)
    key_first = _key_at(buf, 0, es, kp, ks, kb)
    lo = np.empty(INTERLEAVE, np.int64)
    hi = np.empty(INTERLEAVE, np.int64)
    tgt = np.empty(INTERLEAVE, np.int64)
    active = np.empty(INTERLEAVE, np.bool_)
    for g0 in range(0, m, INTERLEAVE):
        g = min(INTERLEAVE, m - g0)
        remaining = 0
        for j in range(g):
            t = np.int64(targets[g0 + j])
            tgt[j] = t
            active[j] = True
            # Kafka's entry checks: warm section, then "before the first entry"
            if key_first_hot < t:
                lo[j] = first_hot
                hi[j] = n - 1
            elif key_first > t:
                out[g0 + j] = NOT_FOUND if st == LARGEST_LOWER_BOUND else 0
                active[j] = False
                continue
            else:
                lo[j] = 0
                hi[j] = first_hot
            remaining += 1
        while remaining > 0:
            for j in range(g):
                if not active[j]:
                    continue
                if lo[j] < hi[j]:
                    mid = (lo[j] + hi[j] + 1) >> 1
                    found = _key_at(buf, mid, es, kp, ks, kb)
                    if found > tgt[j]:
                        hi[j] = mid - 1
                    elif found < tgt[j]:
                        lo[j] = mid
                    else:  # exact match: Kafka returns mid for both search types
                        out[g0 + j] = mid
                        active[j] = False
                        remaining -= 1
                    continue
                # loop over: Kafka's end-of-search rule
                if st == LARGEST_LOWER_BOUND:
                    out[g0 + j] = lo[j]
                elif lo[j] == n - 1:
                    out[g0 + j] = NOT_FOUND
                else:
                    out[g0 + j] = lo[j] + 1
                active[j] = False
                remaining -= 1
    return np.int64(0)


@kernel
def offset_index_lookup(buf, entries, base_offset, target):
    """``OffsetIndex.lookup`` in one call: ``(slot, offset, position)`` of the largest entry
    <= ``target``; ``(NOT_FOUND, base_offset, 0)`` when none (Kafka's edge result); a negative
    error code below ``NOT_FOUND`` as ``slot`` when the buffer is shorter than ``entries * 8``.

    Four arguments instead of eight: a single lookup from Python is dominated by the
    dispatcher's per-argument cost.
    """
    b = np.int64(base_offset)
    err = _layout_error(buf, entries, 8, 0, 4, LARGEST_LOWER_BOUND)
    if err != 0:
        return np.int64(err), b, np.int64(0)
    slot = _slot_for(buf, np.int64(entries), np.int64(8), np.int64(0), np.int64(4), b,
                     np.int64(target), np.int64(LARGEST_LOWER_BOUND))
    if slot < 0:
        return slot, b, np.int64(0)
    return slot, read_i32(buf, slot * 8) + b, read_i32(buf, slot * 8 + 4)


@kernel
def time_index_lookup(buf, entries, base_offset, target):
    """``TimeIndex.lookup`` in one call: ``(slot, timestamp, offset)`` of the entry with the
    largest timestamp <= ``target``; ``(NOT_FOUND, -1, base_offset)`` when none; an error code
    as ``slot`` when the buffer is shorter than ``entries * 12``.
    """
    b = np.int64(base_offset)
    err = _layout_error(buf, entries, 12, 0, 8, LARGEST_LOWER_BOUND)
    if err != 0:
        return np.int64(err), np.int64(-1), b
    slot = _slot_for(buf, np.int64(entries), np.int64(12), np.int64(0), np.int64(8),
                     np.int64(0), np.int64(target), np.int64(LARGEST_LOWER_BOUND))
    if slot < 0:
        return slot, np.int64(-1), b
    return slot, read_i64(buf, slot * 12), read_i32(buf, slot * 12 + 8) + b


@inline
def _field_at(buf, p, size):
    if size == 8:
        return read_i64(buf, p)
    return read_i32(buf, p)


@kernel
def gather_entries(buf, entries, entry_size, key_pos, key_size, key_base, value_pos, value_size,
                   value_base, slots, missing_key, missing_value, out_keys, out_values):
    """Decode the entries at ``slots`` (as returned by :func:`index_slots_for`) in one pass.

    ``out_keys[i] = key_base + key of entry slots[i]`` and likewise for values; a slot of
    ``NOT_FOUND`` gives ``(missing_key, missing_value)`` (Kafka's edge result, e.g.
    ``(base_offset, 0)`` for the offset index). ``key_size``/``value_size`` are 4 or 8.

    Returns
    -------
    int
        0; ``ERR_BAD_LAYOUT`` for a bad layout, short outputs or a slot outside
        ``[-1, entries)``; ``ERR_BUFFER_TOO_SHORT`` when ``entries`` do not fit the buffer.
        Outputs are only complete when the status is 0.
    """
    err = _layout_error(buf, entries, entry_size, key_pos, key_size, LARGEST_LOWER_BOUND)
    if err != 0:
        return np.int64(err)
    if value_pos < 0 or (value_size != 4 and value_size != 8):
        return np.int64(ERR_BAD_LAYOUT)
    if value_pos + value_size > entry_size:
        return np.int64(ERR_BAD_LAYOUT)
    m = slots.shape[0]
    if out_keys.shape[0] < m or out_values.shape[0] < m:
        return np.int64(ERR_BAD_LAYOUT)
    es = np.int64(entry_size)
    for i in range(m):
        s = np.int64(slots[i])
        if s == NOT_FOUND:
            out_keys[i] = missing_key
            out_values[i] = missing_value
            continue
        if s < 0 or s >= entries:
            return np.int64(ERR_BAD_LAYOUT)
        out_keys[i] = _field_at(buf, s * es + key_pos, key_size) + key_base
        out_values[i] = _field_at(buf, s * es + value_pos, value_size) + value_base
    return np.int64(0)
