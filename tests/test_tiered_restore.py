"""``kafkalog tiered-restore``: remote segments as Aiven's tiered storage plugin stores them,
back into partition directories.

Two sources of objects: ``tests/golden/aiven_tiered_storage/`` holds the objects the plugin's own
Java code wrote for one segment (plain, zstd, zstd + encrypted; see its README), the peer; and
:func:`_upload` below, a re-statement of the plugin's upload path
(``KafkaRemoteStorageManager.copyLogSegmentData``) used only for what the peer fixtures cannot
show (other chunk sizes, damaged bytes, wrong keys, overlaps)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import struct
from pathlib import Path

import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalog import Record
from kafkalog.cli import main as cli_main
from kafkalog.log import Log
from kafkalog.tiered.aiven_rsm import RemoteSegmentError, parse_manifest
from kafkalog.tiered.aiven_rsm.restore import restore_paths, restore_segment

Crypto = pytest.importorskip("Crypto", reason="pycryptodome (the tiered extra) is not installed")
from Crypto.Cipher import AES, PKCS1_OAEP  # noqa: E402
from Crypto.Hash import SHA3_512  # noqa: E402
from Crypto.PublicKey import RSA  # noqa: E402
from Crypto.Signature.pss import MGF1  # noqa: E402

GOLDEN = Path(__file__).parent / "golden" / "aiven_tiered_storage"
TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAQ"
SEGMENT_ID = "AAAAAAAAAAAAAAAAAAAAAg"


# -- a re-statement of the plugin's upload, for the cases the peer fixtures do not cover --------

def _chunk_sizes(values: list[int]) -> bytes:
    """``ChunkSizesBinaryCodec.encode``."""
    if len(values) <= 1:
        return struct.pack(">i", len(values)) + b"".join(struct.pack(">i", v) for v in values)
    base = min(values[:-1])
    width = max(max(1, (v - base).bit_length() + 7) // 8 for v in values[:-1])
    width = max(1, width)
    body = b"".join((v - base).to_bytes(4, "big")[4 - width:] for v in values[:-1])
    return struct.pack(">iib", len(values), base, width) + body + struct.pack(">i", values[-1])


def _seal(key: bytes, aad: bytes, data: bytes) -> bytes:
    nonce = os.urandom(12)
    c = AES.new(key, AES.MODE_GCM, nonce=nonce, mac_len=16)
    c.update(aad)
    body, tag = c.encrypt_and_digest(data)
    return nonce + body + tag


def _upload(partition_dir: Path, bucket: Path, *, chunk_size: int, compress: bool,
            rsa_key=None, key_id: str = "key1", start: int = 0, end: int | None = None,
            leader_epochs: bytes = b"0\n1\n0 0\n", segment_id: str = SEGMENT_ID,
            segment_epochs: dict[int, int] | None = None, event_ms: int = 0) -> Path:
    """Write the three objects of the partition's segment at ``start`` (the first one when
    the directory has no segment there) as the plugin would."""
    log = partition_dir / f"{start:020d}.log"
    if not log.exists():
        log = sorted(partition_dir.glob("*.log"))[0]
    data = log.read_bytes()
    aes = (os.urandom(32), os.urandom(32)) if rsa_key is not None else None
    pieces = []
    for i in range(0, max(len(data), 1), chunk_size):
        piece = data[i:i + chunk_size]
        if compress:
            piece = zstandard.ZstdCompressor(write_content_size=True).compress(piece)
        if aes is not None:
            piece = _seal(*aes, piece)
        pieces.append(piece)
    if not data:
        pieces = []
    if compress:
        frame = zstandard.ZstdCompressor(write_content_size=True).compress(
            _chunk_sizes([len(p) for p in pieces]))
        chunk_index = {"type": "variable", "originalChunkSize": chunk_size,
                       "originalFileSize": len(data),
                       "transformedChunks": base64.b64encode(frame).decode()}
    else:
        chunk_index = {"type": "fixed", "originalChunkSize": chunk_size,
                       "originalFileSize": len(data),
                       "transformedChunkSize": len(pieces[0]) if pieces else 0,
                       "finalTransformedChunkSize": len(pieces[-1]) if pieces else 0}
    stem = log.name[:-4]
    indexes = []
    positions = {}
    pos = 0
    snapshot = sorted(partition_dir.glob("*.snapshot"))
    for name, raw in (("offset", (partition_dir / f"{stem}.index").read_bytes()),
                      ("timestamp", (partition_dir / f"{stem}.timeindex").read_bytes()),
                      ("producerSnapshot", snapshot[0].read_bytes() if snapshot else b""),
                      ("leaderEpoch", leader_epochs)):
        piece = _seal(*aes, raw) if aes is not None and raw else raw
        positions[name] = {"position": pos, "size": len(piece)}
        indexes.append(piece)
        pos += len(piece)
    manifest = {"version": "1", "chunkIndex": chunk_index,
                "segmentIndexes": {**positions, "transaction": None}, "compression": compress,
                "remoteLogSegmentMetadata": {
                    "remoteLogSegmentId": {"topicIdPartition": {
                        "topicId": TOPIC_ID, "topicPartition": {
                            "topic": partition_dir.name.rsplit("-", 1)[0],
                            "partition": int(partition_dir.name.rsplit("-", 1)[1])}},
                        "id": segment_id},
                    "startOffset": start, "endOffset": end, "maxTimestampMs": 0,
                    "brokerId": 0, "eventTimestampMs": event_ms, "segmentLeaderEpochs": {
                        str(e): o for e, o in (segment_epochs or {0: start}).items()}}}
    if aes is not None:
        oaep = PKCS1_OAEP.new(rsa_key.publickey(), hashAlgo=SHA3_512,
                              mgfunc=lambda s, n: MGF1(s, n, SHA3_512))
        manifest["encryption"] = {
            "dataKey": f"{key_id}:" + base64.b64encode(oaep.encrypt(aes[0])).decode(),
            "aad": base64.b64encode(aes[1]).decode()}
    topic, part = partition_dir.name.rsplit("-", 1)
    where = bucket / f"{topic}-{TOPIC_ID}" / part
    where.mkdir(parents=True, exist_ok=True)
    base = where / f"{start:020d}-{segment_id}"
    Path(f"{base}.log").write_bytes(b"".join(pieces))
    Path(f"{base}.indexes").write_bytes(b"".join(indexes))
    Path(f"{base}.rsm-manifest").write_text(json.dumps(manifest))
    return Path(f"{base}.rsm-manifest")


@pytest.fixture(scope="module")
def segment(tmp_path_factory) -> tuple[Path, list[tuple]]:
    """orders-3: one segment of 60 batches, every codec, some headers."""
    d = tmp_path_factory.mktemp("src") / "orders-3"
    log = Log.open(d)
    expected = []
    for b in range(60):
        recs = [Record(b"k%d" % (b * 20 + i), b"v%06d" % (b * 20 + i) * 9,
                       1_700_000_000_000 + b * 100 + i,
                       [("h", b"%d" % i)] if i % 5 == 0 else ()) for i in range(20)]
        log.append(recs, compression=("none", "gzip", "snappy", "lz4", "zstd")[b % 5])
        expected += [(r.key, r.value, r.timestamp, r.headers) for r in recs]
    log.close()
    return d, expected


def _records(directory: Path) -> list[tuple]:
    with Log.open(directory, read_only=True) as log:
        return [(r.key, r.value, r.timestamp, r.headers) for r in log.records()]


@settings(max_examples=12, deadline=None)
@given(chunk_size=st.sampled_from([1, 100, 4096, 65536, 1 << 22]), compress=st.booleans(),
       encrypt=st.booleans())
def test_restore_gives_back_the_segment_and_its_indexes(segment, tmp_path_factory, chunk_size,
                                                        compress, encrypt):
    src, expected = segment
    bucket, out = tmp_path_factory.mktemp("bucket"), tmp_path_factory.mktemp("out")
    key = RSA.generate(2048) if encrypt else None
    m = _upload(src, bucket, chunk_size=chunk_size, compress=compress, rsa_key=key,
                end=len(expected) - 1)
    r = restore_segment(m, out, {"key1": key} if key else None)
    d = out / "orders-3"
    for suffix in (".log", ".index", ".timeindex"):
        assert (d / f"{0:020d}{suffix}").read_bytes() == (src / f"{0:020d}{suffix}").read_bytes()
    assert (d / "partition.metadata").read_text() == f"version: 0\ntopic_id: {TOPIC_ID}\n"
    assert (d / "leader-epoch-checkpoint").read_bytes() == b"0\n1\n0 0\n"
    assert (r.start_offset, r.end_offset, r.compressed, r.encrypted) == (
        0, len(expected) - 1, compress, encrypt)
    assert _records(d) == expected


def test_damage_wrong_keys_and_overlaps_are_named(segment, tmp_path):
    src, expected = segment
    key = RSA.generate(2048)
    m = _upload(src, tmp_path / "b", chunk_size=4096, compress=True, rsa_key=key,
                end=len(expected) - 1)
    manifest = parse_manifest(m.read_bytes())
    # no key, another key, a key of another name
    with pytest.raises(RemoteSegmentError, match="key pair 'key1'; no private key given"):
        restore_segment(m, tmp_path / "o1")
    with pytest.raises(RemoteSegmentError, match="does not decrypt with key pair 'key1'"):
        restore_segment(m, tmp_path / "o1", {"key1": RSA.generate(2048)})
    # a flipped byte in chunk 2: its GCM tag fails, the error names the chunk and where
    logobj = Path(str(m)[:-len(".rsm-manifest")] + ".log")
    raw = bytearray(logobj.read_bytes())
    c2 = manifest.chunks[2]
    raw[c2.transformed_position + 20] ^= 1
    logobj.write_bytes(bytes(raw))
    with pytest.raises(RemoteSegmentError) as e:
        restore_segment(m, tmp_path / "o2", {"key1": key})
    assert e.value.position == c2.transformed_position and "chunk 2" in str(e.value)
    assert str(logobj) in str(e.value)
    assert not list((tmp_path / "o2" / "orders-3").glob("*.log"))     # nothing half-written
    # a truncated object
    logobj.write_bytes(bytes(raw[:-1]))
    with pytest.raises(RemoteSegmentError, match="add up to"):
        restore_segment(m, tmp_path / "o3", {"key1": key})
    # the same offsets twice (another upload of them): refused, naming the first
    m2 = _upload(src, tmp_path / "c", chunk_size=4096, compress=False, end=len(expected) - 1)
    restore_segment(m2, tmp_path / "o4")
    with pytest.raises(RemoteSegmentError, match="already exists: not overwritten"):
        restore_segment(m2, tmp_path / "o4")
    # offsets 100.. uploaded again as another segment (after an unclean election)
    m3 = _upload(src, tmp_path / "d", chunk_size=4096, compress=False, start=100,
                 end=len(expected) + 99)
    with pytest.raises(RemoteSegmentError,
                       match=r"offsets 100\.\.1299 overlap 00000000000000000000.log \(0\.\.1199\)"):
        restore_segment(m3, tmp_path / "o4")


def test_a_restored_segment_must_pass_kafkas_recovery_checks(segment, tmp_path):
    """Objects made from a segment with a damaged batch (the chunks themselves intact) and a
    manifest whose end offset disagrees: refused, nothing left in the output."""
    src, expected = segment
    bad = tmp_path / "bad" / "orders-3"
    shutil.copytree(src, bad)
    log = bad / f"{0:020d}.log"
    raw = bytearray(log.read_bytes())
    raw[3000] ^= 0xFF                       # inside a batch: its CRC no longer matches
    log.write_bytes(bytes(raw))
    m = _upload(bad, tmp_path / "b1", chunk_size=1024, compress=True, end=len(expected) - 1)
    with pytest.raises(RemoteSegmentError, match=r"restored segment .*record is corrupt "
                       r"\(stored crc = \d+, computed crc = \d+\) at position \d+"):
        restore_segment(m, tmp_path / "o1")
    assert not list((tmp_path / "o1" / "orders-3").glob("*"))
    m = _upload(src, tmp_path / "b2", chunk_size=1024, compress=True, end=len(expected) + 5)
    with pytest.raises(RemoteSegmentError, match=f"ends at offset {len(expected) - 1} "
                       f"\\(the manifest's endOffset is {len(expected) + 5}\\)"):
        restore_segment(m, tmp_path / "o2")
    r = restore_segment(_upload(src, tmp_path / "b3", chunk_size=1024, compress=False,
                                end=len(expected) - 1), tmp_path / "o3")
    assert (r.batches, r.last_offset) == (60, len(expected) - 1)


def test_a_manifest_that_is_not_one():
    with pytest.raises(RemoteSegmentError, match="not a JSON manifest"):
        parse_manifest(b"{", path="x.rsm-manifest")
    with pytest.raises(RemoteSegmentError, match="segment.format=iceberg"):
        parse_manifest(b"PFA1\x00\x00", path="x.rsm-manifest")
    with pytest.raises(RemoteSegmentError, match="chunkIndex.type 'other'"):
        parse_manifest(json.dumps({"chunkIndex": {"type": "other", "originalChunkSize": 1,
                                                  "originalFileSize": 1},
                                   "segmentIndexes": {}, "compression": False}))
    with pytest.raises(RemoteSegmentError, match="originalChunkSize is -1"):
        parse_manifest(json.dumps({"chunkIndex": {"type": "fixed", "originalChunkSize": -1,
                                                  "originalFileSize": 1,
                                                  "transformedChunkSize": 1,
                                                  "finalTransformedChunkSize": 1},
                                   "segmentIndexes": {}, "compression": False}))


@given(st.lists(st.integers(0, (1 << 31) - 1), max_size=40))
def test_chunk_sizes_codec_round_trips(values):
    from kafkalog.tiered.aiven_rsm.manifest import decode_chunk_sizes

    assert decode_chunk_sizes(_chunk_sizes(values)) == values


def test_the_cli_restores_a_bucket_copy_that_dump_and_verify_read(segment, tmp_path, capsys):
    src, expected = segment
    m = _upload(src, tmp_path / "bucket", chunk_size=8192, compress=True,
                end=len(expected) - 1)
    assert m.exists()
    out = tmp_path / "restored"
    capsys.readouterr()
    assert cli_main(["tiered-restore", str(tmp_path / "bucket"), "-o", str(out)]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[0].split() == ["TOPIC", "PARTITION", "START-OFFSET", "END-OFFSET", "BYTES",
                               "CHUNKS", "CODEC", "ENCRYPTED"]
    size = (src / f"{0:020d}.log").stat().st_size
    assert text[1].split() == ["orders", "3", "0", str(len(expected) - 1), str(size),
                               str(-(-size // 8192)), "zstd", "no"]
    assert cli_main(["verify", str(out / "orders-3")]) == 0
    capsys.readouterr()
    # a second run: the files exist, nothing is overwritten
    assert cli_main(["tiered-restore", str(tmp_path / "bucket"), "-o", str(out)]) == 1
    assert "already exists: not overwritten" in capsys.readouterr().err
    digest = hashlib.sha256((out / "orders-3" / f"{0:020d}.log").read_bytes()).hexdigest()
    assert digest == hashlib.sha256((src / f"{0:020d}.log").read_bytes()).hexdigest()


def test_every_segment_of_a_partition_in_offset_order(tmp_path):
    """Three segments uploaded one by one restore into one directory a Log opens whole."""
    src = tmp_path / "src" / "jobs-0"
    from kafkalog.config import LogConfig

    log = Log.open(src, LogConfig.from_properties({"segment.bytes": "4096"}))
    for i in range(300):
        log.append([Record(None, b"x%04d" % i * 4, 1_700_000_000_000 + i)])
    log.close()
    segments = sorted(src.glob("*.log"))
    assert len(segments) >= 3
    bucket = tmp_path / "bucket"
    for seg in segments:
        one = tmp_path / "one" / seg.name / "jobs-0"
        one.mkdir(parents=True)
        stem = seg.name[:-4]
        for f in src.glob(stem + ".*"):
            shutil.copy(f, one / f.name)
        with Log.open(src, read_only=True) as whole:
            end = next((s.base_offset for s in whole.segments if s.base_offset > int(stem)),
                       whole.log_end_offset) - 1
        _upload(one, bucket, chunk_size=1000, compress=True, start=int(stem), end=end)
    restored = restore_paths([bucket], tmp_path / "out")
    assert [r.start_offset for r in restored] == [int(s.name[:20]) for s in segments]
    with Log.open(tmp_path / "out" / "jobs-0", read_only=True) as log:
        assert [r.value for r in log.records()] == [b"x%04d" % i * 4 for i in range(300)]


# -- the peer: objects Aiven's own RemoteStorageManager uploaded ---------------------------------

PEER = json.loads((GOLDEN / "expected.json").read_text()) if GOLDEN.exists() else None


@pytest.mark.skipif(PEER is None, reason="tests/golden/aiven_tiered_storage is absent")
@pytest.mark.parametrize("variant", ["plain", "zstd", "encrypted"])
def test_objects_written_by_aivens_plugin_restore_to_the_original_files(variant, tmp_path,
                                                                        capsys):
    """The .log/.indexes/.rsm-manifest that the plugin's RemoteStorageManager.copyLogSegmentData
    wrote (its README: the plugin commit, the Kafka classes, the configuration) come back as
    the broker's files, byte for byte, and the CLI reads the plugin's PEM key file."""
    files = {k: v for k, v in PEER["original"].items() if v is not None}
    orig = {k: hashlib.sha256((GOLDEN / v["path"]).read_bytes()).hexdigest()
            for k, v in files.items()}
    assert orig == {k: v["sha256"] for k, v in files.items()}
    assert PEER["original"]["transaction_index"] is None
    argv = ["tiered-restore", str(GOLDEN / variant / "objects"), "-o", str(tmp_path)]
    if variant == "encrypted":
        argv += ["--private-key", f"key1={GOLDEN / variant / 'private.pem'}"]
    capsys.readouterr()
    assert cli_main(argv) == 0, capsys.readouterr().err
    row = capsys.readouterr().out.splitlines()[1].split()
    assert row == ["orders", "0", "0", "1999", "76106", "5",
                   "none" if variant == "plain" else "zstd",
                   "yes" if variant == "encrypted" else "no"]
    d = tmp_path / "orders-0"

    def sha(name: str) -> str:
        return hashlib.sha256((d / name).read_bytes()).hexdigest()

    assert sha(f"{0:020d}.log") == orig["log"]
    assert sha(f"{0:020d}.index") == orig["offset_index"]
    assert sha(f"{0:020d}.timeindex") == orig["time_index"]
    assert sha(f"{2000:020d}.snapshot") == orig["producer_snapshot"]
    assert sha("leader-epoch-checkpoint") == orig["leader_epoch"]
    assert (d / "partition.metadata").read_text() == \
        f"version: 0\ntopic_id: {PEER['segment']['topic_id']}\n"
    assert not (d / f"{0:020d}.txnindex").exists()         # the segment had none
    with Log.open(d, read_only=True) as log:
        assert log.log_end_offset == 2000 and log.read_table().num_rows == 2000
    assert cli_main(["verify", str(d)]) == 0
    # --check: the same checks, nothing kept
    capsys.readouterr()
    assert cli_main(["tiered-restore", "--check", argv[1], *argv[4:]]) == 0
    assert capsys.readouterr().out.splitlines()[1].split()[4] == "40"    # batches, CRC-checked
    if variant == "encrypted":
        # without the key, or with the public half only: named, nothing written
        out2 = tmp_path / "again"
        assert cli_main(argv[:4] + ["-o", str(out2)]) == 1
        assert "key pair 'key1'; no private key given" in capsys.readouterr().err
        assert cli_main(argv[:4] + ["-o", str(out2), "--private-key",
                                    f"key1={GOLDEN / variant / 'public.pem'}"]) == 1
        assert "public key" in capsys.readouterr().err


def test_usage_errors(tmp_path, capsys):
    capsys.readouterr()
    assert cli_main(["tiered-restore"]) == 2
    assert "required: PATH" in capsys.readouterr().err
    assert cli_main(["tiered-restore", str(tmp_path)]) == 2
    assert "one of the arguments --output/-o --check is required" in capsys.readouterr().err
    assert cli_main(["tiered-restore", str(tmp_path), "-o", str(tmp_path / "o"),
                     "--private-key", "bad"]) == 2
    assert capsys.readouterr().err == (
        "kafkalog tiered-restore: error: --private-key: expected ID=FILE, found 'bad'\n")
    assert cli_main(["tiered-restore", str(tmp_path), "-o", str(tmp_path / "o")]) == 1
    assert capsys.readouterr().err == "kafkalog tiered-restore: no .rsm-manifest found\n"


# -- kafkalog tiered --objects: a bucket copy against the metadata ---------------------------

def _manifest_only(bucket: Path, topic_id: str, segment_id: str, start: int, end: int) -> None:
    where = bucket / f"foo-{topic_id}" / "0"
    where.mkdir(parents=True, exist_ok=True)
    (where / f"{start:020d}-{segment_id}.rsm-manifest").write_text(json.dumps({
        "version": "1", "chunkIndex": {"type": "fixed", "originalChunkSize": 4096,
                                       "originalFileSize": 0, "transformedChunkSize": 0,
                                       "finalTransformedChunkSize": 0},
        "segmentIndexes": {}, "compression": False,
        "remoteLogSegmentMetadata": {"remoteLogSegmentId": {"topicIdPartition": {
            "topicId": topic_id, "topicPartition": {"topic": "foo", "partition": 0}},
            "id": segment_id}, "startOffset": start, "endOffset": end}}))


def test_tiered_objects_reports_missing_orphan_and_mismatched_objects(tmp_path, capsys):
    from tests.test_tiered import TOPIC_ID, _uuid, add, update, write_metadata

    # retention deleted segment 3 (the oldest); 1, 2 and 6 are copied; 4 is being uploaded
    write_metadata(tmp_path / "logs", [
        add(3, 0, 99, {0: 0}), update(3, "COPY_SEGMENT_FINISHED"),
        add(1, 100, 199, {0: 100}), update(1, "COPY_SEGMENT_FINISHED"),
        add(2, 200, 299, {0: 200}), update(2, "COPY_SEGMENT_FINISHED"),
        add(6, 300, 399, {0: 300}), update(6, "COPY_SEGMENT_FINISHED"),
        update(3, "DELETE_SEGMENT_STARTED"), update(3, "DELETE_SEGMENT_FINISHED"),
        add(4, 400, 499, {0: 400}),
    ])
    logs = str(tmp_path / "logs")
    assert cli_main(["tiered", logs]) == 0          # no gap: the metadata alone is fine
    bucket = tmp_path / "bucket"
    _manifest_only(bucket, TOPIC_ID, _uuid(3), 0, 99)          # deleted: orphan
    _manifest_only(bucket, TOPIC_ID, _uuid(1), 100, 199)       # as the metadata says
    _manifest_only(bucket, TOPIC_ID, _uuid(6), 300, 350)       # other offsets: mismatch
    _manifest_only(bucket, TOPIC_ID, _uuid(4), 400, 499)       # copy not finished: orphan
    _manifest_only(bucket, TOPIC_ID, _uuid(5), 500, 599)       # unknown: orphan
    capsys.readouterr()
    code = cli_main(["tiered", logs, "--objects", str(bucket)])
    lines = [ln for ln in capsys.readouterr().out.splitlines() if " object: " in ln]
    assert code == 1                   # segment 2 is missing, segment 6 disagrees
    assert [ln.split(":")[0] for ln in lines] == [
        "Orphan object", "Missing object", "Mismatch object", "Orphan object", "Orphan object"]
    # (a finished delete leaves the segment out of the metadata, as Kafka's cache drops it)
    assert f"segment {_uuid(3)} offsets 0..99 is not in the metadata: deleted" in lines[0]
    assert lines[1] == (f"Missing object: foo-0 segment {_uuid(2)} offsets 200..299 "
                        "(COPY_SEGMENT_FINISHED): no .rsm-manifest in the copy")
    assert "offsets 300..350, the metadata says 300..399" in lines[2]
    assert f"segment {_uuid(4)} is COPY_SEGMENT_STARTED in the metadata" in lines[3]
    assert f"segment {_uuid(5)} offsets 500..599 is not in the metadata" in lines[4]
    assert cli_main(["tiered", logs, "--objects", str(bucket), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert [o["kind"] for o in doc["objects"]] == ["orphan", "missing", "mismatch", "orphan",
                                                  "orphan"]
    # orphans alone do not fail the run
    _manifest_only(bucket, TOPIC_ID, _uuid(2), 200, 299)
    _manifest_only(bucket, TOPIC_ID, _uuid(6), 300, 399)       # (replaces the 300..350 one)
    assert cli_main(["tiered", logs, "--objects", str(bucket)]) == 0
    assert [ln.split(":")[0] for ln in capsys.readouterr().out.splitlines()
            if " object: " in ln] == ["Orphan object"] * 3
    # a manifest that does not parse: named, status 1
    (bucket / f"foo-{TOPIC_ID}" / "0" / "x.rsm-manifest").write_text("{")
    assert cli_main(["tiered", logs, "--objects", str(bucket)]) == 1
    assert "x.rsm-manifest: not a JSON manifest" in capsys.readouterr().err


def _divergent_bucket(tmp_path: Path) -> tuple[Path, dict[str, str], list]:
    """An unclean election: leader A (epoch 0) wrote offsets 0-99 and uploaded [0..49] and
    [50..99]; leader B had only 0-69, took over at epoch 1 and wrote 70-149, uploading
    [50..119] and [120..149]. Kafka reads A's [50..99] never (its epoch-0 records 70-99 are
    not in B's lineage {0: 0, 1: 70}). Returns the bucket, the segment ids (A, B: A's uploads;
    C, D: B's) and B's records."""
    a, b = tmp_path / "a" / "orders-0", tmp_path / "b" / "orders-0"
    with Log.open(a) as log:
        for i in range(0, 100, 10):
            log.append([Record(None, b"A%d" % (i + j), 1000 + i + j) for j in range(10)],
                       partition_leader_epoch=0)
            if i + 10 == 50:
                log.roll()
        log.roll()
    shutil.copytree(a, b)
    with Log.open(b) as log:
        log.truncate_to(70)
        for i in range(70, 150, 10):
            log.append([Record(None, b"B%d" % (i + j), 1000 + i + j) for j in range(10)],
                       partition_leader_epoch=1)
            if i + 10 == 120:
                log.roll()
        log.roll()
        expected = [(r.offset, r.value) for r in log.records(0)]
    bucket = tmp_path / "bucket"
    ids = {k: f"AAAAAAAAAAAAAAAAAAAA{k}w" for k in "ABCD"}
    lineage_a, lineage_b = b"0\n1\n0 0\n", b"0\n2\n0 0\n1 70\n"
    _upload(a, bucket, chunk_size=4096, compress=False, start=0, end=49, segment_id=ids["A"],
            leader_epochs=lineage_a, segment_epochs={0: 0}, event_ms=1)
    _upload(a, bucket, chunk_size=4096, compress=False, start=50, end=99, segment_id=ids["B"],
            leader_epochs=lineage_a, segment_epochs={0: 50}, event_ms=2)
    _upload(b, bucket, chunk_size=4096, compress=True, start=50, end=119, segment_id=ids["C"],
            leader_epochs=lineage_b, segment_epochs={0: 50, 1: 70}, event_ms=3)
    _upload(b, bucket, chunk_size=4096, compress=True, start=120, end=149,
            segment_id=ids["D"], leader_epochs=lineage_b, segment_epochs={1: 120}, event_ms=4)
    return bucket, ids, expected


def test_uploads_of_a_divergent_leader_are_skipped_by_kafkas_lineage_rule(tmp_path, capsys):
    """(See _divergent_bucket.) The restore keeps A's [0..49] and B's two segments, and the
    partition reads back as B's log."""
    bucket, ids, expected = _divergent_bucket(tmp_path)
    out = tmp_path / "out"
    assert cli_main(["tiered-restore", str(bucket), "--output", str(out)]) == 0
    captured = capsys.readouterr()
    assert [line.split()[2:4] for line in captured.out.splitlines()[1:]] == [
        ["0", "49"], ["50", "119"], ["120", "149"]]
    assert captured.err == (
        f"kafkalog tiered-restore: skipped {bucket}/orders-{TOPIC_ID}/0/"
        f"00000000000000000050-{ids['B']}.rsm-manifest: orders-0 offsets 50..99 (segment "
        f"{ids['B']}): outside the leader epoch lineage of segment {ids['D']}: it ends at "
        "offset 99, past the end of its last epoch 0 in the lineage (69; epoch 1 starts at "
        "70)\n")
    with Log.open(out / "orders-0", read_only=True) as log:
        assert [(r.offset, r.value) for r in log.records(0)] == expected
        assert log.leader_epoch_entries == [(0, 0), (1, 70)]
    # --all-segments restores as uploaded: A's and B's uploads both start at 50, refused
    assert cli_main(["tiered-restore", str(bucket), "--output", str(tmp_path / "all"),
                     "--all-segments"]) == 1
    assert "00000000000000000050.log: already exists: not overwritten" in (
        capsys.readouterr().err)
    # the JSON names the skipped segment too
    assert cli_main(["tiered-restore", str(bucket), "--check", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["segment_id"], r.get("skipped") is not None) for r in rows] == [
        (ids["B"], True), (ids["A"], False), (ids["C"], False), (ids["D"], False)]
    assert rows[0]["lineage_of"] == ids["D"]


def test_with_the_metadata_only_segments_whose_copy_finished_are_restored(tmp_path, capsys):
    """``--metadata``: the __remote_log_metadata replay says A's [0..49] and B's [50..119] are
    copied, A's [50..99] is being deleted and B's [120..149] never finished copying, and one
    more copied segment has no objects in the copy: two segments restored, two skipped with
    the metadata's reason, the missing one named."""
    from kafkalog.decoders import remote_log_metadata as rlmm
    from kafkalog.tiered import metadata_partition

    bucket, ids, _ = _divergent_bucket(tmp_path)
    tip = {"name": "orders", "id": TOPIC_ID, "partition": 0}

    def add(sid: str, start: int, end: int, epochs: dict[int, int]) -> bytes:
        return rlmm.encode_record(0, {
            "remoteLogSegmentId": {"topicIdPartition": tip, "id": sid}, "startOffset": start,
            "endOffset": end, "brokerId": 0, "maxTimestampMs": 0, "eventTimestampMs": 1,
            "segmentLeaderEpochs": [{"leaderEpoch": e, "offset": o} for e, o in epochs.items()],
            "segmentSizeInBytes": 1, "remoteLogSegmentState": 0})

    def state(sid: str, st: int) -> bytes:
        return rlmm.encode_record(1, {"remoteLogSegmentId": {"topicIdPartition": tip,
                                                             "id": sid},
                                      "brokerId": 0, "eventTimestampMs": 2,
                                      "remoteLogSegmentState": st})

    lost = "AAAAAAAAAAAAAAAAAAAAEw"
    events = [add(ids["A"], 0, 49, {0: 0}), state(ids["A"], 1),
              add(ids["B"], 50, 99, {0: 50}), state(ids["B"], 1), state(ids["B"], 2),
              add(ids["C"], 50, 119, {0: 50, 1: 70}), state(ids["C"], 1),
              add(ids["D"], 120, 149, {1: 120}),
              add(lost, 150, 199, {1: 150}), state(lost, 1)]
    meta = tmp_path / "brokerlogs"
    with Log.open(meta / f"__remote_log_metadata-{metadata_partition(TOPIC_ID, 0)}") as log:
        log.append([Record(None, v, 0) for v in events])
    out = tmp_path / "out"
    assert cli_main(["tiered-restore", str(bucket), "--output", str(out),
                     "--metadata", str(meta)]) == 0
    captured = capsys.readouterr()
    assert [line.split()[2:4] for line in captured.out.splitlines()[1:]] == [
        ["0", "49"], ["50", "119"]]
    err = captured.err.splitlines()
    assert err[0] == (f"kafkalog tiered-restore: Missing object: orders-0 segment {lost} offsets "
                      "150..199 (COPY_SEGMENT_FINISHED): no .rsm-manifest in the copy (its "
                      "offsets are not restored)")
    assert [line.split(": skipped ")[1].split(": ", 1)[1] for line in err[1:]] == [
        f"orders-0 offsets 50..99 (segment {ids['B']}): orphan object: segment {ids['B']} is "
        "DELETE_SEGMENT_STARTED in the metadata: no broker reads these objects",
        f"orders-0 offsets 120..149 (segment {ids['D']}): orphan object: segment {ids['D']} is "
        "COPY_SEGMENT_STARTED in the metadata: no broker reads these objects"]
    # no metadata partition under the dirs given: refused, nothing restored
    assert cli_main(["tiered-restore", str(bucket), "--output", str(tmp_path / "o2"),
                     "--metadata", str(tmp_path / "a")]) == 1
    assert "no __remote_log_metadata-<n> directory" in capsys.readouterr().err
    assert not (tmp_path / "o2").exists()
