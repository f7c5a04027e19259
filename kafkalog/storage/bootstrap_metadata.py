"""The metadata a new KRaft cluster starts from (``bootstrap.checkpoint``): feature levels and
SCRAM credentials.

Ported from Kafka 4.2 (``metadata/.../bootstrap/BootstrapMetadata.java``,
``BootstrapDirectory.java``, ``metadata/.../storage/ScramParser.java``):

* :meth:`BootstrapMetadata.from_versions` is what ``kafka-storage.sh format`` writes: a
  ``FeatureLevelRecord`` for ``metadata.version``, then one per other feature whose level is
  above 0, by name (``kraft.version`` never gets one: the quorum itself carries it);
* :func:`parse_scram_arguments` turns ``--add-scram`` arguments into ``UserScramCredentialRecord``
  values as ``ScramParser`` does (``salt``/``saltedpassword`` given or derived, Kafka's errors);
* :func:`read_bootstrap_directory` is ``BootstrapDirectory.read``: the data records of a
  ``bootstrap.checkpoint``, or the latest production ``metadata.version`` when there is none.

A record is a :class:`MetadataRecord` (Kafka's ``ApiMessageAndVersion``): its schema name,
its fields (camelCase, as :mod:`kafkalog.decoders.cluster_metadata` reads and writes them) and
its version; ``str()`` is Kafka's ``toString``, which ``format`` prints.

>>> md = BootstrapMetadata.from_versions(19, {"metadata.version": 19, "group.version": 0})
>>> md.metadata_version_level, [r.data["name"] for r in md.records]
(19, ['metadata.version'])
>>> str(md)
"BootstrapMetadata(records=[ApiMessageAndVersion(FeatureLevelRecord(name='metadata.version', \
featureLevel=19) at version 0)], metadataVersionLevel=19, source=format command)"
"""

from __future__ import annotations

import base64
import binascii
import os
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..cluster.metadata_version import LATEST_PRODUCTION_LEVEL
from ..decoders import cluster_metadata
from ..errors import CorruptRecordError, KafkaLogError
from ..records.batch import iter_batches
from ..security.scram_credentials import (
    MAX_ITERATIONS,
    MECHANISM_TYPES,
    MIN_ITERATIONS,
    ScramCredential,
    salted_password,
)
from ..usage import java_int, java_split
from .kraft_snapshot import BOOTSTRAP_FILE_NAME

__all__ = ["MetadataRecord", "BootstrapMetadata", "FormatterError", "parse_scram_arguments",
           "read_bootstrap_directory", "METADATA_VERSION", "KRAFT_VERSION"]

METADATA_VERSION = "metadata.version"
KRAFT_VERSION = "kraft.version"


class FormatterError(KafkaLogError):
    """Kafka's ``FormatterException``: ``kafka-storage.sh`` refuses, printing this text."""


def _java_bytes(b: bytes) -> str:
    """``Arrays.toString(byte[])``: signed bytes."""
    return "[" + ", ".join(str(x - 256 if x > 127 else x) for x in b) + "]"


@dataclass(frozen=True)
class MetadataRecord:
    """A metadata record and its version (Kafka's ``ApiMessageAndVersion``)."""

    name: str
    data: Mapping[str, Any]
    version: int = 0

    def value(self) -> bytes:
        """The framed record value as written in a metadata log or snapshot."""
        return cluster_metadata.encode_record(self.name, dict(self.data), self.version)

    def __str__(self) -> str:
        schema = cluster_metadata.schema_of(self.name)
        parts = []
        for f in schema.fields:
            if f.versions is not None and not f.versions[0] <= self.version <= f.versions[1]:
                continue
            v = self.data.get(f.json_name)
            if f.type == "string":
                text = "null" if v is None else f"'{v}'"
            elif f.type == "bytes":
                text = "null" if v is None else _java_bytes(bytes(v))
            elif f.type == "bool":
                text = "true" if v else "false"
            else:
                text = str(v)
            parts.append(f"{f.json_name}={text}")
        return (f"ApiMessageAndVersion({self.name}({', '.join(parts)}) "
                f"at version {self.version})")


def _feature_level_record(name: str, level: int) -> MetadataRecord:
    return MetadataRecord("FeatureLevelRecord", {"name": name, "featureLevel": level})


@dataclass(frozen=True)
class BootstrapMetadata:
    """The bootstrap records and the ``metadata.version`` level among them."""

    records: tuple[MetadataRecord, ...]
    metadata_version_level: int
    source: str = field(default="format command")

    @classmethod
    def from_versions(cls, metadata_version: int, feature_levels: Mapping[str, int],
                      source: str = "format command") -> BootstrapMetadata:
        """``BootstrapMetadata.fromVersions``."""
        records = [_feature_level_record(METADATA_VERSION, metadata_version)]
        for name in sorted(n for n in feature_levels if n not in (METADATA_VERSION,
                                                                  KRAFT_VERSION)):
            if feature_levels[name] > 0:
                records.append(_feature_level_record(name, feature_levels[name]))
        return cls(tuple(records), metadata_version, source)

    @classmethod
    def from_records(cls, records: Sequence[MetadataRecord], source: str) -> BootstrapMetadata:
        """``BootstrapMetadata.fromRecords``: the last ``metadata.version`` record wins.

        Raises
        ------
        FormatterError
            No ``FeatureLevelRecord`` for ``metadata.version`` among them.
        """
        level = None
        for r in records:
            if r.name == "FeatureLevelRecord" and r.data.get("name") == METADATA_VERSION:
                level = int(r.data["featureLevel"])
        if level is None:
            raise FormatterError(f"No FeatureLevelRecord for {METADATA_VERSION} was found in "
                                 f"the bootstrap metadata from {source}")
        return cls(tuple(records), level, source)

    def feature_level(self, name: str) -> int:
        """``featureLevel``: the last record's level for ``name``, 0 when there is none."""
        out = 0
        for r in self.records:
            if r.name == "FeatureLevelRecord" and r.data.get("name") == name:
                out = int(r.data["featureLevel"])
        return out

    def values(self) -> list[bytes]:
        """The framed record values, in order."""
        return [r.value() for r in self.records]

    def __str__(self) -> str:
        return (f"BootstrapMetadata(records=[{', '.join(str(r) for r in self.records)}], "
                f"metadataVersionLevel={self.metadata_version_level}, source={self.source})")


def read_bootstrap_directory(directory: str | os.PathLike[str]) -> BootstrapMetadata:
    """``BootstrapDirectory.read``: the records of ``<directory>/bootstrap.checkpoint``
    (control batches skipped), or, with no such file, the latest production
    ``metadata.version`` ("the default bootstrap").

    Raises
    ------
    FormatterError
        ``directory`` is missing or not a directory, or the file has no metadata.version.
    kafkalog.errors.CorruptRecordError
        A batch or record of the file does not decode, or the file ends inside a batch
        (naming the file and the position or offset).
    """
    d = Path(directory)
    if not d.is_dir():
        raise FormatterError(f"Path {directory} exists, but is not a directory." if d.exists()
                             else f"No such directory as {directory}", path=directory)
    path = d / BOOTSTRAP_FILE_NAME
    if not path.exists():
        return BootstrapMetadata((_feature_level_record(METADATA_VERSION,
                                                        LATEST_PRODUCTION_LEVEL),),
                                 LATEST_PRODUCTION_LEVEL, "the default bootstrap")
    records = []
    data = path.read_bytes()
    end = 0
    for batch in iter_batches(data, path=path):
        end = batch.position + batch.size
        if batch.is_control:
            continue
        for r in batch:
            try:
                rec = cluster_metadata.decode_record_obj(r.key, r.value)
            except CorruptRecordError as e:
                raise CorruptRecordError(e.message, path=path, offset=r.offset) from None
            records.append(MetadataRecord(rec["name"], rec["data"], rec["version"]))
    if end != len(data):
        # Kafka's reader stops at a partial batch; a cut bootstrap file is reported instead
        raise CorruptRecordError(f"truncated batch (expected a whole batch, found "
                                 f"{len(data) - end} bytes)", path=path, position=end)
    return BootstrapMetadata.from_records(
        records, f"the binary bootstrap metadata file: {path}")


# ----------------------------------------------------------------------------------------------
# --add-scram (ScramParser)
# ----------------------------------------------------------------------------------------------

#: mechanism name -> the enum constant Kafka prints in errors (ScramMechanism.toString)
_ENUM_NAMES = {m: m.replace("-", "_") for m in MECHANISM_TYPES}


def _secure_random_bytes() -> bytes:
    """``ScramFormatter.secureRandomBytes``: a random 130-bit number in base 36, as ASCII."""
    n = secrets.randbits(130)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return out.encode("ascii")


def _b64(text: str) -> bytes:
    """``Base64.getDecoder().decode`` (strict: padding required, no stray characters)."""
    return base64.b64decode(text, validate=True)


def _scram_record(argument: str, salt_source: Callable[[], bytes]) -> MetadataRecord:
    text = argument.strip()
    eq = text.find("=")
    if eq < 0:
        raise FormatterError(f"Failed to find equals sign in SCRAM argument '{text}'")
    mechanism, config = text[:eq], text[eq + 1:]
    if mechanism not in MECHANISM_TYPES:
        raise FormatterError(f"The add-scram mechanism {mechanism} is not supported.")
    if not config.startswith("["):
        raise FormatterError("Expected configuration string to start with [")
    if not config.endswith("]"):
        raise FormatterError("Expected configuration string to end with ]")
    components: dict[str, str] = {}
    for part in java_split(config[1:-1]):
        eq = part.find("=")
        if eq < 0:
            raise FormatterError(f"No equals sign found in SCRAM component: {part}")
        value = part[eq + 1:]
        if len(value) >= 2 and value.startswith('"') and value.endswith('"'):
            value = value[1:-1]
        components[part[:eq]] = value
    name = components.pop("name", None)
    if name is None:
        raise FormatterError("You must supply 'name' to add-scram")
    salt = None
    salt_text = components.pop("salt", None)
    if salt_text is not None:
        try:
            salt = _b64(salt_text)
        except (binascii.Error, ValueError):
            raise FormatterError(f"Failed to decode given salt: {salt_text}") from None
    iterations = MIN_ITERATIONS
    iterations_text = components.pop("iterations", None)
    if iterations_text is not None:
        try:
            iterations = java_int(iterations_text)
        except ValueError:
            raise FormatterError(
                f"Failed to parse iterations count: {iterations_text}") from None
    password = components.pop("password", None)
    salted_text = components.pop("saltedpassword", None)
    salted = None
    if password is None:
        if salted_text is None:
            raise FormatterError("You must supply one of 'password' or 'saltedpassword' to "
                                 "add-scram")
        if salt is None:
            raise FormatterError("You must supply 'salt' with 'saltedpassword' to add-scram")
        try:
            salted = _b64(salted_text)
        except (binascii.Error, ValueError):
            raise FormatterError(
                f"Failed to decode given saltedPassword: {salted_text}") from None
    if components:
        raise FormatterError("Unknown SCRAM configurations: " + ", ".join(sorted(components)))
    # PerMechanismData.toRecord
    if salt is None:
        salt = salt_source()
    if iterations < MIN_ITERATIONS:
        raise FormatterError(f"The 'iterations' value must be >= {MIN_ITERATIONS} for "
                             f"add-scram using {_ENUM_NAMES[mechanism]}")
    if iterations > MAX_ITERATIONS:
        raise FormatterError(f"The 'iterations' value must be <= {MAX_ITERATIONS} for "
                             f"add-scram using {_ENUM_NAMES[mechanism]}")
    if salted is None:
        assert password is not None
        salted = salted_password(mechanism, password, salt, iterations)
    cred = ScramCredential.from_salted_password(mechanism, salt, salted, iterations)
    return MetadataRecord("UserScramCredentialRecord", {
        "name": name, "mechanism": MECHANISM_TYPES[mechanism], "salt": cred.salt,
        "storedKey": cred.stored_key, "serverKey": cred.server_key,
        "iterations": iterations})


def parse_scram_arguments(arguments: Sequence[str],
                          salt_source: Callable[[], bytes] = _secure_random_bytes
                          ) -> list[MetadataRecord]:
    """``ScramParser.parse``: one ``UserScramCredentialRecord`` per ``--add-scram`` argument
    (``MECHANISM=[name=...,password=...]`` or ``[name=...,salt=<b64>,saltedpassword=<b64>]``,
    optional ``iterations``, values optionally double-quoted).

    >>> r = parse_scram_arguments(['SCRAM-SHA-256=[name=alice,salt="MWx0OHN0",'
    ...                            'saltedpassword="mT0yyUUxnlJaC99HXgRTSYlbuqa4FSGtJCJfTMvjYCE=",'
    ...                            'iterations=8192]'])[0]
    >>> r.data["name"], r.data["iterations"], r.data["salt"]
    ('alice', 8192, b'1lt8st')

    Raises
    ------
    FormatterError
        Kafka's text for a malformed argument.
    """
    return [_scram_record(a, salt_source) for a in arguments]
