"""Benchmark ``kafkalog tiered-restore`` (remote segments of Aiven's tiered storage plugin back
into partition directories) against the machine's own limits on the same objects.

Run as a script::

    python benchmarks/bench_tiered.py [--quick]

Builds one 256 MiB segment (16 MiB with ``--quick``) of 1 KiB records, half random and half
repeated bytes, and its objects as the plugin uploads them with ``chunk.size`` 4 MiB: plain,
zstd (level 3, zstd-jni's default, one frame per chunk) and zstd + AES-256-GCM. Then, in this
process and on a warm page cache:

* ``restore.<variant>.vs_<limit>``: :func:`kafkalog.tiered.aiven_rsm.restore_segment` (read the
  objects, decrypt, decompress, check every size, write the partition directory, then a CRC
  pass of Kafka's recovery checks over the written ``.log``) in MiB/s of
  restored segment, against the bare work of the same bytes: ``plain`` against copying the
  ``.log`` object to a new file (``shutil.copyfile``); ``zstd`` and ``zstd_aes`` against a
  loop that reads each chunk, decrypts and decompresses it with the same libraries and writes
  it, without manifest, checks or indexes. A ratio near 1 means the restore adds little beyond
  the unavoidable work.

No assertions; figures go to benchmarks/RESULTS.md through ``run()``.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import struct
import tempfile
import time
from pathlib import Path

CHUNK = 4 << 20


def _segment(directory: Path, mib: int) -> Path:
    from kafkalog import Record
    from kafkalog.config import LogConfig
    from kafkalog.log import Log

    log = Log.open(directory, LogConfig.from_properties({"segment.bytes": str(1 << 30)}))
    i = 0
    while log.size < mib << 20:
        rnd = os.urandom(512 * 1000)      # fresh bytes per batch: zstd finds no long matches
        recs = [Record(b"k%d" % (i + j), rnd[j * 512:(j + 1) * 512] + b"v" * 512,
                       1_700_000_000_000 + i + j) for j in range(1000)]
        log.append(recs)
        i += 1000
    log.close()
    return sorted(directory.glob("*.log"))[0]


def _chunk_sizes(values: list[int]) -> bytes:
    if len(values) <= 1:
        return struct.pack(">i", len(values)) + b"".join(struct.pack(">i", v) for v in values)
    base = min(values[:-1])
    width = max(max(1, ((v - base).bit_length() + 7) // 8) for v in values[:-1])
    return (struct.pack(">iib", len(values), base, width)
            + b"".join((v - base).to_bytes(4, "big")[4 - width:] for v in values[:-1])
            + struct.pack(">i", values[-1]))


def _upload(segment: Path, bucket: Path, variant: str) -> tuple[Path, object, list[bytes]]:
    """The plugin's objects for ``segment`` (see the module docstring); returns the manifest,
    the private key (None unless encrypted) and the transformed chunks."""
    import zstandard

    data = segment.read_bytes()
    key = None
    pieces = [data[i:i + CHUNK] for i in range(0, len(data), CHUNK)]
    if variant != "plain":
        cctx = zstandard.ZstdCompressor(level=3, write_content_size=True)
        pieces = [cctx.compress(p) for p in pieces]
    manifest: dict = {"version": "1", "compression": variant != "plain"}
    if variant == "zstd_aes":
        from Crypto.Cipher import AES, PKCS1_OAEP
        from Crypto.Hash import SHA3_512
        from Crypto.PublicKey import RSA
        from Crypto.Signature.pss import MGF1

        key = RSA.generate(2048)
        aes, aad = os.urandom(32), os.urandom(32)
        sealed = []
        for p in pieces:
            nonce = os.urandom(12)
            c = AES.new(aes, AES.MODE_GCM, nonce=nonce)
            c.update(aad)
            body, tag = c.encrypt_and_digest(p)
            sealed.append(nonce + body + tag)
        pieces = sealed
        oaep = PKCS1_OAEP.new(key.publickey(), hashAlgo=SHA3_512,
                              mgfunc=lambda s, n: MGF1(s, n, SHA3_512))
        manifest["encryption"] = {"dataKey": "k:" + base64.b64encode(oaep.encrypt(aes)).decode(),
                                  "aad": base64.b64encode(aad).decode()}
    if variant == "plain":
        manifest["chunkIndex"] = {"type": "fixed", "originalChunkSize": CHUNK,
                                  "originalFileSize": len(data),
                                  "transformedChunkSize": len(pieces[0]),
                                  "finalTransformedChunkSize": len(pieces[-1])}
    else:
        frame = zstandard.ZstdCompressor(write_content_size=True).compress(
            _chunk_sizes([len(p) for p in pieces]))
        manifest["chunkIndex"] = {"type": "variable", "originalChunkSize": CHUNK,
                                  "originalFileSize": len(data),
                                  "transformedChunks": base64.b64encode(frame).decode()}
    manifest["segmentIndexes"] = {"offset": {"position": 0, "size": 0},
                                  "timestamp": {"position": 0, "size": 0},
                                  "producerSnapshot": {"position": 0, "size": 0},
                                  "leaderEpoch": {"position": 0, "size": 0},
                                  "transaction": None}
    where = bucket / variant / "bench-AAAAAAAAAAAAAAAAAAAAAQ" / "0"
    where.mkdir(parents=True)
    stem = where / f"{0:020d}-AAAAAAAAAAAAAAAAAAAAAg"
    Path(f"{stem}.log").write_bytes(b"".join(pieces))
    Path(f"{stem}.indexes").write_bytes(b"")
    Path(f"{stem}.rsm-manifest").write_text(json.dumps(manifest))
    return Path(f"{stem}.rsm-manifest"), key, pieces


def _best(fn, repeat: int, setup=None) -> float:
    best = float("inf")
    for _ in range(repeat):
        if setup is not None:
            setup()
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def _variant_row(seg: Path, tmp: Path, variant: str, repeat: int) -> dict:
    import zstandard

    from kafkalog.tiered.aiven_rsm import parse_manifest
    from kafkalog.tiered.aiven_rsm.detransform import decrypt_data_key
    from kafkalog.tiered.aiven_rsm.restore import restore_segment

    manifest_path, key, pieces = _upload(seg, tmp / "bucket", variant)
    out = tmp / "out"
    obj = Path(str(manifest_path)[:-len(".rsm-manifest")] + ".log")
    keys = {"k": key} if key is not None else None

    def clean() -> None:
        # (untimed, for both sides: every timed run writes new files, as a restore does)
        shutil.rmtree(out, ignore_errors=True)
        for f in ("copy.log", "bare.log"):
            (tmp / f).unlink(missing_ok=True)

    t_ours = _best(lambda: restore_segment(manifest_path, out, keys), repeat, clean)
    if variant == "plain":
        t_base = _best(lambda: shutil.copyfile(obj, tmp / "copy.log"), repeat, clean)
        limit, what = "file_copy", "shutil.copyfile of the .log object"
    else:
        dctx = zstandard.ZstdDecompressor()
        dk = None
        if variant == "zstd_aes":
            dk = decrypt_data_key(parse_manifest(manifest_path.read_bytes()).encryption, keys)

        def bare() -> None:
            # the unavoidable work: each chunk read, opened, decompressed, written
            with open(obj, "rb") as f, open(tmp / "bare.log", "wb") as w:
                for i, p in enumerate(pieces):
                    piece = f.read(len(p))
                    if dk is not None:
                        piece = dk.open(piece, path=None, position=0, what=str(i))
                    w.write(dctx.decompress(piece))

        limit = "decompress" if variant == "zstd" else "decrypt_decompress"
        what = ("a loop reading each chunk, " + ("decrypting (AES-GCM), " if dk else "")
                + "decompressing (zstd) and writing it, with no manifest, checks or indexes")
        t_base = _best(bare, repeat, clean)
    mibs = seg.stat().st_size / (1 << 20)
    note = (f"{mibs:.0f} MiB segment of 1 KiB records (half random), chunk.size 4 MiB, "
            f"{len(pieces)} chunks ({obj.stat().st_size / (1 << 20):.0f} MiB object); "
            f"restore_segment (read, detransform, write the partition directory, then Kafka's "
            f"recovery checks with CRCs over the written .log) vs "
            f"{what}; best of {repeat}, warm page cache")
    return {"name": f"restore.{variant}.vs_{limit}", "value": mibs / t_ours, "unit": "MiB/s",
            "baseline": mibs / t_base, "ratio": t_base / t_ours, "note": note}


def run(quick: bool = False) -> list[dict]:
    """Measure and return the rows (see the module docstring)."""
    mib = 16 if quick else 256
    repeat = 2 if quick else 5
    tmp = Path(tempfile.mkdtemp(prefix="kafkalog-bench-tiered-"))
    try:
        seg = _segment(tmp / "src" / "bench-0", mib)
        return [_variant_row(seg, tmp, v, repeat) for v in ("plain", "zstd", "zstd_aes")]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":  # pragma: no cover
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true")
    for row in run(p.parse_args().quick):
        print(f"{row['name']}: {row['value']:,.1f} {row['unit']} vs {row['baseline']:,.1f} "
              f"({row['ratio']:.2f}x)")
