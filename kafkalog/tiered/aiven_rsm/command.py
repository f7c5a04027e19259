"""``kafkalog tiered-restore``: remote segments of Aiven's tiered storage plugin, copied out of
their bucket, written back as Kafka partition directories (:mod:`.restore`).

=====================================================  ==========================================
``kafkalog tiered-restore PATH... --output DIR``       every ``.rsm-manifest`` among PATHs (files,
                                                       or directories searched recursively) with
                                                       its ``.log`` and ``.indexes`` objects ->
                                                       ``DIR/<topic>-<partition>/``; one line per
                                                       segment: TOPIC PARTITION START-OFFSET
                                                       END-OFFSET BYTES CHUNKS CODEC ENCRYPTED
``--check`` (instead of ``--output``)                 every check of a restore (chunks decrypt
                                                       and decompress to their sizes, Kafka's
                                                       recovery checks, the end offset), nothing
                                                       kept; BATCHES instead of BYTES
``--private-key ID=FILE``                              the PEM private key of key pair ID (the
                                                       plugin's ``encryption.key.pair.id``),
                                                       for encrypted segments; repeatable
``--json``                                             one JSON object per segment instead
``--all-segments``                                     restore segments outside their
                                                       partition's leader-epoch lineage too
=====================================================  ==========================================

Of a partition's segments, those outside its leader-epoch lineage (a divergent leader's uploads
after an unclean election, which Kafka never reads and its retention deletes) are skipped, each
named on stderr with the reason (``skipped ...``; with ``--json`` an object with ``"skipped"``);
see :mod:`.lineage_plan`. That is not an error (exit status 0).

``--metadata LOGDIR...`` (log dirs holding the ``__remote_log_metadata`` partitions, as
``kafkalog tiered`` reads them): only segments whose copy finished are restored; the objects of
segments being deleted, never finished or unknown to the metadata, and of segments whose
offsets disagree with it, are skipped the same way (:mod:`.inventory`), and copied segments the
copy lacks are named (``Missing object: ...``).

The restored directories are plain Kafka partition directories: ``kafkalog dump-segments``,
``verify``, ``Log.read_table`` and the Spark source read them. Segments are restored in the order
found; the first that fails stops the run with its error (the object, the chunk and its position)
and exit status 1, leaving the ones before it in place. Exit status 2: usage.

``--check`` verifies a bucket copy before anything depends on it (the AES-GCM tags authenticate
every chunk and index; the batch CRCs the segment itself): each segment is restored into a
scratch directory and removed.

Example
-------
>>> import sys, tempfile
>>> main([tempfile.mkdtemp(), "--output", tempfile.mkdtemp()], out=sys.stdout, err=sys.stdout)
kafkalog tiered-restore: no .rsm-manifest found
1
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from ...errors import KafkaLogError
from ...usage import ArgumentParser, UsageError
from .detransform import load_private_key
from .lineage_plan import SkippedSegment, plan_restore
from .restore import check_segment, find_manifests, restore_segment

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


def _parser() -> ArgumentParser:
    p = ArgumentParser(prog="kafkalog tiered-restore",
                       description="Restore remote segments (Aiven tiered storage objects) "
                                   "as Kafka partition directories.")
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help=".rsm-manifest files, or directories holding them")
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--output", "-o", metavar="DIR",
                       help="where the <topic>-<partition> directories are written")
    where.add_argument("--check", action="store_true",
                       help="check that every segment restores; keep nothing")
    p.add_argument("--private-key", action="append", default=[], metavar="ID=FILE",
                   help="PEM private key of key pair ID (encrypted segments); repeatable")
    p.add_argument("--json", action="store_true", help="one JSON object per segment")
    p.add_argument("--all-segments", action="store_true",
                   help="also restore segments outside their partition's leader-epoch lineage "
                        "(a divergent leader's uploads; overlapping offsets are still refused)")
    p.add_argument("--metadata", nargs="+", metavar="LOGDIR",
                   help="log dirs holding the cluster's __remote_log_metadata partitions: "
                        "restore only the segments whose copy finished there (objects of "
                        "segments being deleted, never finished or unknown are skipped; "
                        "copied segments the copy lacks are named)")
    return p


def private_keys(specs: Sequence[str], prog: str = "kafkalog tiered-restore"
                 ) -> dict[str, Any]:
    """The ``--private-key ID=FILE`` options as key pair id -> private key.

    Raises
    ------
    UsageError
        Not ``ID=FILE``, or the file cannot be read (``prog`` names the command).
    RemoteSegmentError
        The file is not a PEM private key.
    """
    keys = {}
    for spec in specs:
        key_id, sep, file = spec.partition("=")
        if not sep or not key_id or not file:
            raise UsageError(f"{prog}: error: --private-key: expected ID=FILE, found {spec!r}")
        try:
            pem = Path(file).read_bytes()
        except OSError as e:
            raise UsageError(f"{prog}: error: --private-key {key_id}: {e}") from None
        keys[key_id] = load_private_key(pem, path=file)
    return keys


def _by_metadata(manifests: list[Path], log_dirs: list[str], err: IO[str]
                 ) -> tuple[list[Path], list[SkippedSegment]]:
    """The manifests the ``__remote_log_metadata`` replay under ``log_dirs`` says a broker
    reads, and the others as skipped (the finding as the reason); copied segments the copy
    lacks are named on stderr."""
    from ..metadata_store import metadata_partition_dirs, read_log_dirs
    from .inventory import bucket_inventory, unreadable

    if not metadata_partition_dirs(log_dirs):
        raise KafkaLogError("no __remote_log_metadata-<n> directory under the --metadata log "
                            "dirs", path=log_dirs[0])
    objects = bucket_inventory(manifests)
    skip, missing = unreadable(read_log_dirs(log_dirs), objects)
    for f in missing:
        err.write(f"kafkalog tiered-restore: {f} (its offsets are not restored)\n")
    by_manifest = {o.manifest: o for o in objects}
    skipped = [SkippedSegment(**{k: v for k, v in by_manifest[m].__dict__.items()
                                 if k != "manifest"}, manifest=m, reference=None,
                              reason=f"{f.kind} object: {f.message.split(': ', 1)[-1]}")
               for m, f in skip.items()]
    return [m for m in manifests if str(m) not in skip], skipped


def main(argv: Sequence[str], *, out: IO[str] | None = None, err: IO[str] | None = None
         ) -> int:
    """Run the command (see the module docstring); returns the exit status."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        args = _parser().parse_args(list(argv))
        keys = private_keys(args.private_key)
    except UsageError as e:
        err.write(f"{e}\n")
        return EXIT_USAGE
    except SystemExit as e:        # --help
        return int(e.code or 0) if isinstance(e.code, int) else EXIT_USAGE
    except KafkaLogError as e:
        err.write(f"kafkalog tiered-restore: {e}\n")
        return EXIT_ERROR
    manifests = find_manifests(args.paths)
    if not manifests:
        err.write("kafkalog tiered-restore: no .rsm-manifest found\n")
        return EXIT_ERROR
    skipped: list[SkippedSegment] = []
    try:
        if args.metadata:
            manifests, skipped = _by_metadata(manifests, args.metadata, err)
        if not args.all_segments:
            manifests, outside = plan_restore(manifests, keys)
            skipped += outside
    except (KafkaLogError, OSError) as e:
        err.write(f"kafkalog tiered-restore: {e}\n")
        return EXIT_ERROR
    for s in skipped:
        why = (f"outside the leader epoch lineage of segment {s.reference}: {s.reason}"
               if s.reference is not None else s.reason)
        err.write(f"kafkalog tiered-restore: skipped {s.manifest}: {s.topic}-{s.partition} "
                  f"offsets {s.start_offset}..{s.end_offset} (segment {s.segment_id}): "
                  f"{why}\n")
        if args.json:
            out.write(json.dumps({
                "topic": s.topic, "partition": s.partition, "topic_id": s.topic_id,
                "segment_id": s.segment_id, "start_offset": s.start_offset,
                "end_offset": s.end_offset, "manifest": s.manifest,
                "skipped": s.reason, "lineage_of": s.reference}) + "\n")
    fmt = "%-20s %-9s %-20s %-20s %-12s %-7s %-6s %s\n"
    if not args.json:
        out.write(fmt % ("TOPIC", "PARTITION", "START-OFFSET", "END-OFFSET",
                         "BATCHES" if args.check else "BYTES", "CHUNKS", "CODEC", "ENCRYPTED"))
    for m in manifests:
        try:
            r = check_segment(m, keys) if args.check else restore_segment(m, args.output, keys)
        except (KafkaLogError, OSError) as e:
            err.write(f"kafkalog tiered-restore: {e}\n")
            return EXIT_ERROR
        if args.json:
            out.write(json.dumps({
                "topic": r.topic, "partition": r.partition, "topic_id": r.topic_id,
                "segment_id": r.segment_id, "start_offset": r.start_offset,
                "end_offset": r.end_offset, "bytes": r.size, "chunks": r.chunks,
                "batches": r.batches, "last_offset": r.last_offset,
                "compressed": r.compressed, "encrypted": r.encrypted,
                "directory": r.directory, "files": list(r.files), "manifest": str(m)}) + "\n")
        else:
            out.write(fmt % (r.topic, r.partition, r.start_offset,
                             "-" if r.end_offset is None else r.end_offset,
                             r.batches if args.check else r.size, r.chunks,
                             "zstd" if r.compressed else "none",
                             "yes" if r.encrypted else "no"))
    return EXIT_OK
