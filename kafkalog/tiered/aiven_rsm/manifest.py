"""The ``.rsm-manifest`` object of Aiven's tiered storage plugin: how one remote segment was cut
into chunks, transformed and stored.

Aiven's ``RemoteStorageManager`` (tiered-storage-for-apache-kafka, ``SegmentManifestV1``)
uploads three objects per log segment, under ``<prefix><topic>-<topic id>/<partition>/
<20-digit start offset>-<segment id>`` (``ObjectKeyFactory``):

* ``.log``: the segment file cut into chunks of ``originalChunkSize`` bytes (the last one
  shorter), each transformed (zstd-compressed, then AES-GCM-encrypted, each step optional) and
  the results concatenated;
* ``.indexes``: the offset, time, producer-snapshot, leader-epoch and (when the segment has
  one) transaction indexes, each encrypted as one piece when encryption is on, concatenated;
* ``.rsm-manifest``: this JSON document.

The manifest's fields (Jackson's names):

``chunkIndex``
    ``{"type": "fixed", "originalChunkSize", "originalFileSize", "transformedChunkSize",
    "finalTransformedChunkSize"}`` when every transformed chunk but the last has the same size
    (no compression), else ``{"type": "variable", "originalChunkSize", "originalFileSize",
    "transformedChunks"}`` where ``transformedChunks`` is base64 of a zstd frame of
    ``ChunkSizesBinaryCodec`` bytes: int32 count, then (count > 1) int32 base, int8 width and
    count - 1 values of ``width`` big-endian bytes above the base, then the last size as an
    int32; all big-endian. Chunk ``i`` holds original bytes ``[i * originalChunkSize, ...)`` at
    transformed position = the sum of the sizes before it (``AbstractChunkIndex``).
``segmentIndexes``
    ``{"offset"|"timestamp"|"producerSnapshot"|"leaderEpoch"|"transaction": {"position",
    "size"}}`` within the ``.indexes`` object (``transaction`` may be null).
``compression``
    whether each chunk is a zstd frame (with its content size).
``encryption``
    absent, or ``{"dataKey": "<key pair id>:<base64 RSA-OAEP(SHA3-512) of the AES key>",
    "aad": "<base64>"}``.
``remoteLogSegmentMetadata``
    the segment's Kafka metadata (topic id and partition, segment id, start/end offsets, max
    timestamp, broker, leader epochs), written by the plugin for readers like this one.

>>> m = parse_manifest(b'{"version":"1","chunkIndex":{"type":"fixed","originalChunkSize":100,'
...     b'"originalFileSize":250,"transformedChunkSize":110,"finalTransformedChunkSize":60},'
...     b'"segmentIndexes":{"offset":{"position":0,"size":8},"timestamp":{"position":8,'
...     b'"size":12},"producerSnapshot":{"position":20,"size":10},"leaderEpoch":{"position":'
...     b'30,"size":6},"transaction":null},"compression":false}')
>>> [(c.original_position, c.original_size, c.transformed_position, c.transformed_size)
...  for c in m.chunks]
[(0, 100, 0, 110), (100, 100, 110, 110), (200, 50, 220, 60)]
>>> m.indexes["timestamp"], "transaction" in m.indexes
((8, 12), False)
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import struct
from dataclasses import dataclass, field
from typing import Any

import zstandard

from ...errors import KafkaLogError

__all__ = ["RemoteSegmentError", "Chunk", "EncryptionMetadata", "SegmentManifest",
           "parse_manifest", "decode_chunk_sizes", "INDEX_TYPES", "MANIFEST_SUFFIX"]

#: the object suffixes (``ObjectKeyFactory.Suffix``)
MANIFEST_SUFFIX, LOG_SUFFIX, INDEXES_SUFFIX = ".rsm-manifest", ".log", ".indexes"
#: ``segmentIndexes`` keys, in the order the plugin concatenates the indexes
INDEX_TYPES = ("offset", "timestamp", "producerSnapshot", "leaderEpoch", "transaction")
#: ``TransformedChunksDeserializer.MAX_DECOMPRESSED_SIZE``
_MAX_CHUNK_SIZES_BYTES = 10 * 1024 * 1024


class RemoteSegmentError(KafkaLogError):
    """A remote segment's objects that cannot be read back: a manifest that does not parse, a
    chunk that does not decrypt or decompress to its declared size, a missing key."""


@dataclass(frozen=True)
class Chunk:
    """One chunk (``manifest.index.Chunk``): where its bytes are in the original segment file
    and in the transformed ``.log`` object."""

    id: int
    original_position: int
    original_size: int
    transformed_position: int
    transformed_size: int


@dataclass(frozen=True)
class EncryptionMetadata:
    """``SegmentEncryptionMetadataV1``: the RSA-encrypted AES data key and the AAD."""

    key_pair_id: str
    encrypted_data_key: bytes
    aad: bytes
    #: ``SegmentEncryptionMetadataV1.IV_SIZE``: each encrypted piece starts with its IV
    iv_size: int = 12


@dataclass
class SegmentManifest:
    """A parsed ``.rsm-manifest`` (see the module docstring)."""

    original_file_size: int
    original_chunk_size: int
    chunks: list[Chunk]
    #: index type -> (position, size) in the ``.indexes`` object; types absent or null are
    #: left out
    indexes: dict[str, tuple[int, int]]
    compression: bool
    encryption: EncryptionMetadata | None = None
    #: ``remoteLogSegmentMetadata`` as written (None when absent)
    segment_metadata: dict[str, Any] | None = None
    path: str | None = field(default=None, compare=False)

    @property
    def transformed_size(self) -> int:
        """The size the ``.log`` object must have."""
        return sum(c.transformed_size for c in self.chunks)


def decode_chunk_sizes(data: bytes, *, path: str | None = None) -> list[int]:
    """``ChunkSizesBinaryCodec.decode`` (see the module docstring).

    >>> decode_chunk_sizes(bytes.fromhex("00000003" "00000064" "01" "00" "0a" "00000020"))
    [100, 110, 32]
    """
    def fail(what: str) -> RemoteSegmentError:
        return RemoteSegmentError(f"chunkIndex.transformedChunks: {what}", path=path)

    if len(data) < 4:
        raise fail(f"{len(data)} bytes (expected at least a 4-byte count)")
    (count,) = struct.unpack_from(">i", data)
    if count < 0:
        raise fail(f"negative chunk count {count}")
    if count == 0:
        return []
    if count == 1:
        if len(data) != 8:
            raise fail(f"{len(data)} bytes for one chunk (expected 8)")
        return [struct.unpack_from(">i", data, 4)[0]]
    if len(data) < 9:
        raise fail(f"{len(data)} bytes (expected count, base and width)")
    (base,) = struct.unpack_from(">i", data, 4)
    width = data[8]
    if not 1 <= width <= 4:
        raise fail(f"value width {width} (expected 1 to 4 bytes)")
    expected = 9 + (count - 1) * width + 4
    if len(data) != expected:
        raise fail(f"{len(data)} bytes for {count} chunks of width {width} "
                   f"(expected {expected})")
    out = [int.from_bytes(data[9 + i * width:9 + (i + 1) * width], "big") + base
           for i in range(count - 1)]
    out.append(struct.unpack_from(">i", data, expected - 4)[0])
    return out


def _chunks(original_chunk_size: int, original_file_size: int,
            transformed: list[int]) -> list[Chunk]:
    """``AbstractChunkIndex.materializeChunks``."""
    out = []
    opos = tpos = 0
    n = len(transformed)
    for i, tsize in enumerate(transformed):
        osize = original_file_size - (n - 1) * original_chunk_size if i == n - 1 \
            else original_chunk_size
        out.append(Chunk(i, opos, osize, tpos, tsize))
        opos += osize
        tpos += tsize
    return out


def _int(obj: dict[str, Any], name: str, where: str, path: str | None) -> int:
    v = obj.get(name)
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise RemoteSegmentError(f"{where}.{name} is {v!r} (expected a non-negative integer)",
                                 path=path)
    return v


def _b64(text: Any, what: str, path: str | None) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, TypeError, ValueError) as e:
        raise RemoteSegmentError(f"{what} is not base64: {e}", path=path) from None


def parse_manifest(data: bytes | str, *, path: str | os.PathLike[str] | None = None
                   ) -> SegmentManifest:
    """Parse an ``.rsm-manifest`` document (version 1); errors name ``path`` and the field."""
    p = os.fspath(path) if path is not None else None
    if isinstance(data, bytes) and data[:4] == b"PFA1":
        raise RemoteSegmentError(
            "a Puffin file: the plugin's segment.format=iceberg manifest, whose records live in "
            "Iceberg tables rather than Kafka segment objects (not read here)", path=p)
    try:
        doc = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise RemoteSegmentError(f"not a JSON manifest: {e}", path=p) from None
    if not isinstance(doc, dict):
        raise RemoteSegmentError("not a JSON object (expected a segment manifest)", path=p)
    version = doc.get("version", "1")
    if str(version) != "1":
        raise RemoteSegmentError(f"manifest version {version!r} (this reader knows 1)", path=p)
    ci = doc.get("chunkIndex")
    if not isinstance(ci, dict):
        raise RemoteSegmentError("no chunkIndex object", path=p)
    ocs = _int(ci, "originalChunkSize", "chunkIndex", p)
    ofs = _int(ci, "originalFileSize", "chunkIndex", p)
    if ocs == 0:
        raise RemoteSegmentError("chunkIndex.originalChunkSize is 0", path=p)
    count = -(-ofs // ocs)
    kind = ci.get("type")
    if kind == "fixed":
        t = _int(ci, "transformedChunkSize", "chunkIndex", p)
        final = _int(ci, "finalTransformedChunkSize", "chunkIndex", p)
        transformed = [t] * (count - 1) + [final] if count else []
    elif kind == "variable":
        raw = _b64(ci.get("transformedChunks"), "chunkIndex.transformedChunks", p)
        try:
            params = zstandard.get_frame_parameters(raw)
            if not 0 <= params.content_size <= _MAX_CHUNK_SIZES_BYTES:
                raise RemoteSegmentError(
                    f"chunkIndex.transformedChunks: declared size {params.content_size} "
                    f"(expected at most {_MAX_CHUNK_SIZES_BYTES})", path=p)
            sizes = zstandard.ZstdDecompressor().decompress(raw)
        except zstandard.ZstdError as e:
            raise RemoteSegmentError(f"chunkIndex.transformedChunks is not a zstd frame: {e}",
                                     path=p) from None
        transformed = decode_chunk_sizes(sizes, path=p)
        if len(transformed) != count:
            raise RemoteSegmentError(
                f"chunkIndex lists {len(transformed)} chunks for {ofs} bytes in chunks of "
                f"{ocs} (expected {count})", path=p)
    else:
        raise RemoteSegmentError(f"chunkIndex.type {kind!r} (expected fixed or variable)",
                                 path=p)
    si = doc.get("segmentIndexes")
    if not isinstance(si, dict):
        raise RemoteSegmentError("no segmentIndexes object", path=p)
    indexes = {}
    for name in INDEX_TYPES:
        entry = si.get(name)
        if entry is None:
            continue
        if not isinstance(entry, dict):
            raise RemoteSegmentError(f"segmentIndexes.{name} is not an object", path=p)
        indexes[name] = (_int(entry, "position", f"segmentIndexes.{name}", p),
                         _int(entry, "size", f"segmentIndexes.{name}", p))
    compression = doc.get("compression")
    if not isinstance(compression, bool):
        raise RemoteSegmentError(f"compression is {compression!r} (expected true or false)",
                                 path=p)
    enc = doc.get("encryption")
    encryption = None
    if enc is not None:
        if not isinstance(enc, dict) or not isinstance(enc.get("dataKey"), str):
            raise RemoteSegmentError("encryption has no dataKey", path=p)
        key_id, sep, key_b64 = enc["dataKey"].rpartition(":")
        if not sep:
            raise RemoteSegmentError("encryption.dataKey is not '<key pair id>:<base64>'",
                                     path=p)
        encryption = EncryptionMetadata(key_id, _b64(key_b64, "encryption.dataKey", p),
                                        _b64(enc.get("aad"), "encryption.aad", p))
    meta = doc.get("remoteLogSegmentMetadata")
    return SegmentManifest(ofs, ocs, _chunks(ocs, ofs, transformed), indexes, compression,
                           encryption, meta if isinstance(meta, dict) else None, p)
