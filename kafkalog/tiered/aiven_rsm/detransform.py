"""Undo what Aiven's plugin did to a segment's chunks and indexes: decrypt, then decompress.

Per chunk, the upload applied (``KafkaRemoteStorageManager.transformation``): zstd compression
when the manifest says ``compression`` (``CompressionChunkEnumeration``: one frame per chunk,
with its content size), then AES-256-GCM when it has ``encryption``
(``EncryptionChunkEnumeration``: the 12-byte IV, then the ciphertext with its 16-byte tag; the
manifest's AAD authenticated with every piece). Each index is encrypted the same way as one
piece and never compressed. The AES data key is stored in the manifest encrypted with the RSA
public key of a key pair named by id (``RSA/NONE/OAEPWithSHA3-512AndMGF1Padding`` through
BouncyCastle, whose MGF1 uses SHA3-512 too); reading needs that pair's private key.

Every chunk must come back to exactly its original size, and the chunks must cover the
original file: anything else is a :class:`~.manifest.RemoteSegmentError` naming the object,
the chunk and its position in the object.

The cryptography comes from ``pycryptodome`` (the ``tiered`` extra): Python's ``cryptography``
refuses OAEP with SHA3.

>>> from kafkalog.tiered.aiven_rsm.manifest import Chunk, SegmentManifest
>>> m = SegmentManifest(5, 4, [Chunk(0, 0, 4, 0, 4), Chunk(1, 4, 1, 4, 1)], {}, False)
>>> b"".join(iter_chunks(m, b"hello"))
b'hello'
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any, BinaryIO

import zstandard

from .manifest import Chunk, EncryptionMetadata, RemoteSegmentError, SegmentManifest

__all__ = ["DataKey", "load_private_key", "decrypt_data_key", "iter_chunks", "read_index"]

#: ``AesEncryptionProvider.GCM_TAG_LENGTH`` in bytes
GCM_TAG_SIZE = 16


class DataKey:
    """The decrypted AES key of one segment, with the AAD its pieces were sealed with."""

    __slots__ = ("key", "aad", "iv_size")

    def __init__(self, key: bytes, aad: bytes, iv_size: int = 12) -> None:
        self.key, self.aad, self.iv_size = key, aad, iv_size

    def open(self, piece: bytes | memoryview, *, path: str | None, position: int,
             what: str) -> bytes:
        """Decrypt and authenticate one encrypted piece (IV + ciphertext + tag)."""
        from Crypto.Cipher import AES

        if len(piece) < self.iv_size + GCM_TAG_SIZE:
            raise RemoteSegmentError(
                f"{what}: {len(piece)} bytes (an encrypted piece has at least "
                f"{self.iv_size + GCM_TAG_SIZE}: IV and tag)", path=path, position=position)
        data = memoryview(piece)        # (slices without copies: chunks are MiBs)
        cipher = AES.new(self.key, AES.MODE_GCM, nonce=bytes(data[:self.iv_size]),
                         mac_len=GCM_TAG_SIZE)
        cipher.update(self.aad)
        try:
            return cipher.decrypt_and_verify(data[self.iv_size:-GCM_TAG_SIZE],
                                             data[-GCM_TAG_SIZE:])
        except ValueError:
            raise RemoteSegmentError(
                f"{what} does not decrypt: its GCM tag does not match (a different data key "
                f"or AAD, or damaged bytes)", path=path, position=position) from None


def _crypto() -> Any:
    try:
        import Crypto  # noqa: F401
    except ImportError:
        raise RemoteSegmentError(
            "an encrypted segment needs pycryptodome (pip install 'kafkalog[tiered]')") from None


def load_private_key(pem: bytes | str, *, path: str | None = None) -> Any:
    """An RSA private key from PEM (PKCS#1 or PKCS#8, as the plugin's ``RsaKeyReader`` reads
    them)."""
    _crypto()
    from Crypto.PublicKey import RSA

    try:
        key = RSA.import_key(pem)
    except (ValueError, IndexError, TypeError) as e:
        raise RemoteSegmentError(f"not an RSA key in PEM: {e}", path=path) from None
    if not key.has_private():
        raise RemoteSegmentError("an RSA public key (the private key is needed to read)",
                                 path=path)
    return key


def decrypt_data_key(encryption: EncryptionMetadata, private_keys: Mapping[str, Any], *,
                     path: str | None = None) -> DataKey:
    """The segment's AES key: the manifest's ``dataKey`` decrypted with the private key of the
    key pair it names (``private_keys``: key pair id -> :func:`load_private_key`)."""
    _crypto()
    from Crypto.Cipher import PKCS1_OAEP
    from Crypto.Hash import SHA3_512
    from Crypto.Signature.pss import MGF1

    key = private_keys.get(encryption.key_pair_id)
    if key is None:
        known = ", ".join(sorted(private_keys)) or "none"
        raise RemoteSegmentError(
            f"the data key is encrypted with key pair {encryption.key_pair_id!r}; no private "
            f"key given for it (given: {known})", path=path)
    oaep = PKCS1_OAEP.new(key, hashAlgo=SHA3_512,
                          mgfunc=lambda seed, n: MGF1(seed, n, SHA3_512))
    try:
        raw = oaep.decrypt(encryption.encrypted_data_key)
    except (ValueError, TypeError):
        raise RemoteSegmentError(
            f"the data key does not decrypt with key pair {encryption.key_pair_id!r} "
            f"(RSA-OAEP with SHA3-512): another key of that name?", path=path) from None
    if len(raw) not in (16, 24, 32):
        raise RemoteSegmentError(f"the data key is {len(raw)} bytes (expected an AES key)",
                                 path=path)
    return DataKey(raw, encryption.aad, encryption.iv_size)


def _chunk(manifest: SegmentManifest, chunk: Chunk, piece: bytes | memoryview,
           key: DataKey | None, path: str | None) -> bytes:
    what = f"chunk {chunk.id}"
    if manifest.encryption is not None:
        if key is None:
            raise RemoteSegmentError("the segment is encrypted: a data key is needed",
                                     path=path)
        piece = key.open(piece, path=path, position=chunk.transformed_position, what=what)
    if manifest.compression:
        try:
            params = zstandard.get_frame_parameters(piece)
            if params.content_size != chunk.original_size:
                raise RemoteSegmentError(
                    f"{what}: its zstd frame declares {params.content_size} bytes (expected "
                    f"{chunk.original_size})", path=path, position=chunk.transformed_position)
            out = zstandard.ZstdDecompressor().decompress(
                piece, max_output_size=chunk.original_size)
        except zstandard.ZstdError as e:
            raise RemoteSegmentError(f"{what} does not decompress: {e}", path=path,
                                     position=chunk.transformed_position) from None
    else:
        out = bytes(piece)
    if len(out) != chunk.original_size:
        raise RemoteSegmentError(
            f"{what} comes back as {len(out)} bytes (expected {chunk.original_size})",
            path=path, position=chunk.transformed_position)
    return out


def iter_chunks(manifest: SegmentManifest, log_object: bytes | memoryview | BinaryIO, *,
                key: DataKey | None = None, path: str | os.PathLike[str] | None = None
                ) -> Iterator[bytes]:
    """The original segment file, chunk by chunk, from the ``.log`` object: its bytes, or an
    open binary file (read one chunk at a time: memory stays at one chunk)."""
    p = os.fspath(path) if path is not None else None
    if isinstance(log_object, (bytes, bytearray, memoryview)):
        view = memoryview(log_object)
        size = len(view)

        def piece(c: Chunk) -> bytes | memoryview:
            return view[c.transformed_position:c.transformed_position + c.transformed_size]
    else:
        f = log_object
        size = os.fstat(f.fileno()).st_size

        def piece(c: Chunk) -> bytes | memoryview:
            f.seek(c.transformed_position)
            return f.read(c.transformed_size)
    if size != manifest.transformed_size:
        raise RemoteSegmentError(
            f"{size} bytes (the manifest's chunks add up to {manifest.transformed_size})",
            path=p)
    for chunk in manifest.chunks:
        yield _chunk(manifest, chunk, piece(chunk), key, p)


def read_index(manifest: SegmentManifest, indexes_object: bytes | memoryview, index: str, *,
               key: DataKey | None = None, path: str | os.PathLike[str] | None = None
               ) -> bytes | None:
    """One index (``"offset"``, ``"timestamp"``, ``"producerSnapshot"``, ``"leaderEpoch"``,
    ``"transaction"``) from the ``.indexes`` object; None when the manifest has none."""
    p = os.fspath(path) if path is not None else None
    where = manifest.indexes.get(index)
    if where is None:
        return None
    position, size = where
    view = memoryview(indexes_object)
    if position + size > len(view):
        raise RemoteSegmentError(
            f"index {index} at {position}+{size} runs past the object's {len(view)} bytes",
            path=p, position=position)
    piece = view[position:position + size]
    if size and manifest.encryption is not None:
        if key is None:
            raise RemoteSegmentError("the segment is encrypted: a data key is needed", path=p)
        return key.open(piece, path=p, position=position, what=f"index {index}")
    return bytes(piece)
