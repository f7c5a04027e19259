"""Small compressed records areas decompressed straight into shared buffers, one codec call each.

A producer with ``linger.ms=0`` under light load writes one batch per record, so a segment can
hold a million batches of a few hundred bytes. Through the codec layer each costs a dispatch,
a frame parsed in Python, a ``bytes`` object and its copy into the buffer the record decoder
reads: 8-10 us a batch, several times the codec's own work (aiokafka reads such segments ~2x
faster). Here :func:`kafkalog.native.codec_frames.frame_payloads` finds every batch's payload
in one kernel call, then each batch is one raw codec call writing into a pack (a buffer of up to
``pack_bytes`` shared by consecutive batches), which the record decoder then reads in one call.

Only frames of the plain shape take this path (see :mod:`kafkalog.native.codec_frames`), and a
batch whose codec call fails, whose output would pass ``max_size``, or whose lz4 checksums do
not match is left to the caller (``pack_id`` -1), which decompresses it through
:func:`kafkalog.records.compression.decompress`: that accepts, or raises its precise error,
exactly as before. A hypothesis test compares both paths on damaged frames.
"""

from __future__ import annotations

from dataclasses import dataclass

import cramjam
import numpy as np

from ..native import codec_frames as _cf
from ..native._jit import kernel_input
from . import compression as _compression

__all__ = ["PackedAreas", "decompress_packed", "PACKED_CODECS"]

#: the codecs this path handles (gzip members are not worth it: its codec is the cost; zstd
#: needs zstandard's reusable context, a dependency the codec layer could run without)
PACKED_CODECS = (_cf.CODEC_SNAPPY, _cf.CODEC_LZ4) + (
    (_cf.CODEC_ZSTD,) if _compression._zstandard is not None else ())


@dataclass
class PackedAreas:
    """Where each area went: ``pack_id[i]`` (-1: not decompressed here), and its bytes
    ``packs[pack_id[i]][lo[i]:hi[i]]``. Packs are read-only and named by the number (in the
    caller's numbering, ``ids``) of the first area tried in them, so parts of a run
    decompressed in different threads never collide."""

    pack_id: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    packs: dict[int, np.ndarray]


def decompress_packed(codec: int, buf: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                      ids: np.ndarray, max_size: int, pack_bytes: int) -> PackedAreas:
    """Decompress the areas ``buf[starts[i]:ends[i]]`` (each one batch's records area,
    compressed with ``codec``) into packs of up to ``pack_bytes`` (an area bigger than that is
    left to the caller).

    >>> from kafkalog.records.compression import compress
    >>> data = np.frombuffer(compress("snappy", b"hello" * 20, magic=2) * 2, np.uint8)
    >>> half = data.size // 2
    >>> p = decompress_packed(2, data, np.array([0, half]), np.array([half, data.size]),
    ...                       np.array([7, 8]), 1 << 20, 1 << 20)
    >>> p.pack_id.tolist(), p.hi.tolist(), p.packs[7][p.lo[1]:p.hi[1]].tobytes()[:10]
    ([7, 7], [100, 200], b'hellohello')
    """
    n = starts.shape[0]
    p_start, p_end, need, kind, desc, check, block_check = (np.empty(n, np.int64)
                                                            for _ in range(7))
    _cf.frame_payloads(kernel_input(buf, np.uint8), kernel_input(starts, np.int64),
                       kernel_input(ends, np.int64), np.int64(codec), p_start, p_end, need,
                       kind, desc, check, block_check)
    if codec == _cf.CODEC_LZ4:
        _check_lz4_descriptors(buf, starts, kind, desc)
        # (a compressed block decoding to more than max_size fails: the caller raises)
        call = kind == _cf.CALL
        need[call] = np.minimum(need[call], max_size)
    # areas whose output cannot fit a pack or the limit are the caller's (it raises, or
    # returns a big area as its own buffer)
    kind[(need > max_size) | (need > pack_bytes)] = _cf.SLOW
    pack_id = np.full(n, -1, np.int64)
    lo = np.zeros(n, np.int64)
    hi = np.zeros(n, np.int64)
    packs: dict[int, np.ndarray] = {}
    take = np.flatnonzero(kind != _cf.SLOW)
    if take.shape[0] == 0:
        return PackedAreas(pack_id, lo, hi, packs)
    checks = check[take].tolist() if codec == _cf.CODEC_LZ4 and bool((check[take] >= 0).any()) \
        else None
    block_checks = block_check[take].tolist() \
        if codec == _cf.CODEC_LZ4 and bool((block_check[take] >= 0).any()) else None
    src = memoryview(buf)
    pack = np.empty(pack_bytes, np.uint8)
    out = memoryview(pack)
    current = int(ids[take[0]])
    at = 0
    done: list[int] = []  # (positions in take, pack names, starts: lists, not array stores)
    names: list[int] = []
    los: list[int] = []
    his: list[int] = []
    # one iteration per batch: this loop is the path's per-batch cost (about 1 us besides the
    # codec call, measured), so the codec branches are inline rather than a call each
    snappy = cramjam.snappy.decompress_raw_into
    lz4 = cramjam.lz4.decompress_block_into
    zstd = _compression._zstd_dctx() if codec == _cf.CODEC_ZSTD else None
    for t, (a, b, k, room) in enumerate(zip(p_start[take].tolist(), p_end[take].tolist(),
                                            kind[take].tolist(), need[take].tolist())):
        if at + room > pack_bytes:  # (room: this batch's bound; the pack is full for it)
            packs[current] = _readonly(pack[:at])
            pack = np.empty(pack_bytes, np.uint8)
            out = memoryview(pack)
            current = int(ids[take[t]])
            at = 0
        if block_checks is not None and block_checks[t] >= 0 and \
                _compression.xxh32(src[a:b]) != block_checks[t]:
            continue  # a block checksum mismatch: the caller raises it
        try:
            if codec == _cf.CODEC_SNAPPY:
                got = snappy(src[a:b], out[at:at + room])
            elif k == _cf.COPY:
                got = b - a
                out[at:at + got] = src[a:b]
            elif codec == _cf.CODEC_LZ4:
                got = lz4(src[a:b], output=out[at:at + room])
            else:
                # zstandard's reused context decodes a small frame in ~1 us, cramjam's
                # decompress_into makes a context per call (~5 us). The kernel walked the
                # frame's blocks: whole, and its output bounded by ``room``.
                dobj = zstd.decompressobj()
                data = dobj.decompress(src[a:b])
                got = len(data)
                if not dobj.eof or dobj.unused_data or got > room:
                    continue
                out[at:at + got] = data
        except Exception:  # noqa: BLE001 - the caller's codec layer words the fault
            continue
        if checks is not None and checks[t] >= 0 and \
                _compression.xxh32(out[at:at + got]) != checks[t]:
            continue  # a content checksum mismatch: the caller raises it
        done.append(t)
        names.append(current)
        los.append(at)
        at += got
        his.append(at)
    if names and names[-1] == current:  # (its areas may all be empty: still a pack)
        packs[current] = _readonly(pack[:at])
    if done:
        rows = take[np.array(done, np.int64)]
        pack_id[rows] = names
        lo[rows] = los
        hi[rows] = his
    return PackedAreas(pack_id, lo, hi, packs)


def _check_lz4_descriptors(buf: np.ndarray, starts: np.ndarray, kind: np.ndarray,
                           desc: np.ndarray) -> None:
    """Frames whose header checksum (xxHash32 of the descriptor) is wrong go to the caller,
    which raises the mismatch. A producer writes one descriptor (FLG, BD): one hash per
    distinct one; a descriptor with a content size differs per frame, hashed per frame."""
    taken = kind != _cf.SLOW
    sized = taken & ((desc >> 24) != 0)
    for d in np.unique(desc[taken & ~sized]).tolist():
        if _compression._lz4_hc(b"", bytes((d & 0xFF, (d >> 8) & 0xFF)), False) != \
                (d >> 16) & 0xFF:
            kind[taken & (desc == d)] = _cf.SLOW
    if sized.any():
        mv = memoryview(buf)
        rows = np.flatnonzero(sized)
        at = starts[rows].tolist()
        hc = ((desc[rows] >> 16) & 0xFF).tolist()
        bad = [r for r, a, h in zip(rows.tolist(), at, hc)
               if (_compression.xxh32(mv[a + 4:a + 14]) >> 8) & 0xFF != h]
        kind[bad] = _cf.SLOW


def _readonly(a: np.ndarray) -> np.ndarray:
    v = a.view()
    v.flags.writeable = False
    return v
