"""The ``meta.properties`` files of all of a node's log directories, read and checked together
(Kafka's ``MetaPropertiesEnsemble``), and the copier that writes new ones.

Ported from Kafka 4.2 (``metadata/.../properties/MetaPropertiesEnsemble.java``,
``MetaProperties.java``, ``MetaPropertiesVersion.java``, ``PropertiesUtils.java``):

* :func:`load` sorts each directory into *empty* (no ``meta.properties``), *error* (it does not
  read or does not validate) or *formatted* (its :class:`~kafkalog.checkpoint.MetaProperties`);
* :meth:`MetaPropertiesEnsemble.verify` applies the broker's start-up rules: one cluster id,
  one node id, no reserved or duplicate directory ids, a readable metadata log directory
  (errors in Kafka's words, naming the file);
* :class:`Copier` assigns new properties and writes them (``Properties.store`` shape, fsynced,
  moved over the old file), in ``HashMap`` order of the directories, as Kafka does.

A file's own checks (and their texts) are :meth:`kafkalog.checkpoint.MetaProperties.
from_properties`'s, Kafka's ``MetaProperties.Builder``'s.

>>> import tempfile
>>> d = tempfile.mkdtemp()
>>> sorted(load([d]).empty_log_dirs) == [d]
True
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from ..checkpoint import MetaProperties, Uuid
from ..decoders.jvm_order import java_hash_map_order
from ..errors import KafkaLogError

__all__ = ["META_PROPERTIES_NAME", "MetaPropertiesError", "MetaPropertiesEnsemble", "Copier",
           "load", "read_meta_properties", "is_reserved_directory_id",
           "REQUIRE_V0", "REQUIRE_METADATA_LOG_DIR", "REQUIRE_AT_LEAST_ONE_VALID"]

META_PROPERTIES_NAME = "meta.properties"
#: MetaPropertiesEnsemble.VerificationFlag
REQUIRE_V0, REQUIRE_METADATA_LOG_DIR, REQUIRE_AT_LEAST_ONE_VALID = (
    "REQUIRE_V0", "REQUIRE_METADATA_LOG_DIR", "REQUIRE_AT_LEAST_ONE_VALID")


class MetaPropertiesError(KafkaLogError):
    """A ``meta.properties`` that does not validate, or an ensemble that breaks a rule
    (Kafka's ``RuntimeException`` text)."""


def is_reserved_directory_id(u: Uuid) -> bool:
    """``DirectoryId.reserved``: the first 100 ids (MIGRATING, UNASSIGNED, LOST, ...)."""
    return u.most_significant_bits == 0 and u.least_significant_bits < 100


def read_meta_properties(path: str | os.PathLike[str]) -> MetaProperties:
    """Read and validate one ``meta.properties`` (FileNotFoundError when there is none;
    :class:`~kafkalog.errors.CorruptCheckpointError` with Kafka's ``MetaProperties.Builder``
    text when it does not validate)."""
    return MetaProperties.read(path)


def meta_properties_str(m: MetaProperties) -> str:
    """``MetaProperties.toString``."""
    out = f"MetaProperties(version={m.version}"
    if m.cluster_id is not None:
        out += f", clusterId={m.cluster_id}"
    if m.node_id is not None:
        out += f", nodeId={m.node_id}"
    if m.directory_id is not None:
        out += f", directoryId={m.directory_id}"
    return out + ")"


@dataclass(frozen=True)
class MetaPropertiesEnsemble:
    """What :func:`load` found in each directory."""

    empty_log_dirs: frozenset[str]
    error_log_dirs: frozenset[str]
    log_dir_props: Mapping[str, MetaProperties]
    metadata_log_dir: str | None = None
    errors: Mapping[str, str] = field(default_factory=dict)
    """Why each error directory is one (beyond Kafka, which only logs it)."""

    def verify(self, expected_cluster_id: str | None = None,
               expected_node_id: int | None = None,
               flags: Iterable[str] = ()) -> None:
        """``MetaPropertiesEnsemble.verify``.

        Raises
        ------
        MetaPropertiesError
            The first broken rule, in Kafka's words (directories in sorted order).
        """
        flags = set(flags)
        seen: dict[Uuid, str] = {}
        if REQUIRE_AT_LEAST_ONE_VALID in flags and not self.log_dir_props:
            raise MetaPropertiesError("No readable meta.properties files found.")
        for log_dir in sorted(self.log_dir_props):
            m = self.log_dir_props[log_dir]
            path = os.path.join(log_dir, META_PROPERTIES_NAME)
            if REQUIRE_V0 in flags and m.version != 0:
                raise MetaPropertiesError(
                    f"Found unexpected version in {path}. ZK-based brokers that are not "
                    "migrating only support version 0 (which is implicit when the `version` "
                    "field is missing).", path=path)
            if m.cluster_id is None:
                if m.version == 1:
                    raise MetaPropertiesError(
                        f"cluster.id was not specified in the v1 file: {path}", path=path)
            elif expected_cluster_id is None:
                expected_cluster_id = m.cluster_id
            elif m.cluster_id != expected_cluster_id:
                raise MetaPropertiesError(
                    f"Invalid cluster.id in: {path}. Expected {expected_cluster_id}, but read "
                    f"{m.cluster_id}", path=path)
            if m.node_id is None:
                if m.version == 1:
                    raise MetaPropertiesError(f"node.id was not specified in {path}", path=path)
            elif expected_node_id is None:
                expected_node_id = m.node_id
            elif m.node_id != expected_node_id:
                raise MetaPropertiesError(
                    f"Stored node id {m.node_id} doesn't match previous node id "
                    f"{expected_node_id} in {path}. If you moved your data, make sure your "
                    "configured node id matches. If you intend to create a new node, you "
                    "should remove all data in your data directories.", path=path)
            if m.directory_id is not None:
                if is_reserved_directory_id(m.directory_id):
                    raise MetaPropertiesError(
                        f"Invalid reserved directory ID {m.directory_id} found in {log_dir}",
                        path=path)
                prev = seen.get(m.directory_id)
                seen[m.directory_id] = log_dir
                if prev is not None:
                    raise MetaPropertiesError(
                        f"Duplicate directory ID Optional[{m.directory_id}] found. It was the "
                        f"ID of {prev}, but also of {log_dir}", path=path)
        if REQUIRE_METADATA_LOG_DIR in flags and self.metadata_log_dir is None:
            raise MetaPropertiesError("No metadata log directory was specified.")
        if self.metadata_log_dir is not None and self.metadata_log_dir in self.error_log_dirs:
            raise MetaPropertiesError(
                f"Encountered I/O error in metadata log directory {self.metadata_log_dir}. "
                "Cannot continue.", path=self.metadata_log_dir)

    def cluster_id(self) -> str | None:
        """The first formatted directory's cluster id (sorted order)."""
        return next((m.cluster_id for _, m in sorted(self.log_dir_props.items())
                     if m.cluster_id is not None), None)

    def node_id(self) -> int | None:
        """The first formatted directory's node id (sorted order)."""
        return next((m.node_id for _, m in sorted(self.log_dir_props.items())
                     if m.node_id is not None), None)


def load(log_dirs: Iterable[str], metadata_log_dir: str | None = None) -> MetaPropertiesEnsemble:
    """``MetaPropertiesEnsemble.Loader.load`` over ``log_dirs`` (and ``metadata_log_dir``).

    Raises
    ------
    MetaPropertiesError
        No directory given ("You must specify at least one log directory.").
    """
    dirs = set(log_dirs)
    if metadata_log_dir is not None:
        dirs.add(metadata_log_dir)
    if not dirs:
        raise MetaPropertiesError("You must specify at least one log directory.")
    empty, error, props, why = set(), set(), {}, {}
    for d in sorted(dirs):
        path = os.path.join(os.path.abspath(d), META_PROPERTIES_NAME)
        try:
            props[d] = read_meta_properties(path)
        except FileNotFoundError:
            empty.add(d)
        except (OSError, KafkaLogError) as e:
            error.add(d)
            why[d] = getattr(e, "message", None) or str(e)
    return MetaPropertiesEnsemble(frozenset(empty), frozenset(error), props, metadata_log_dir,
                                  why)


class Copier:
    """``MetaPropertiesEnsemble.Copier``: new or changed properties per directory, written by
    :meth:`write_log_dir_changes`."""

    def __init__(self, prev: MetaPropertiesEnsemble,
                 random_bits: Callable[[int], int] = secrets.randbits) -> None:
        self.prev = prev
        self.empty_log_dirs = set(prev.empty_log_dirs)
        self.error_log_dirs = set(prev.error_log_dirs)
        self.log_dir_props: dict[str, MetaProperties] = dict(prev.log_dir_props)
        self._random_bits = random_bits
        self.pre_write: Callable[[str, bool, MetaProperties], None] | None = None

    def set_log_dir_props(self, log_dir: str, props: MetaProperties) -> None:
        """Give ``log_dir`` these properties (it is no longer empty or in error)."""
        self.empty_log_dirs.discard(log_dir)
        self.error_log_dirs.discard(log_dir)
        self.log_dir_props[log_dir] = props

    def generate_valid_directory_id(self) -> Uuid:
        """A random id that is not reserved, does not print with a leading ``-`` and is not
        already one of the directories' (``generateValidDirectoryId``)."""
        in_use = {m.directory_id for m in self.log_dir_props.values()}
        while True:
            u = Uuid.from_bytes(self._random_bits(128).to_bytes(16, "big"))
            if not (str(u).startswith("-") or is_reserved_directory_id(u)) and u not in in_use:
                return u

    def write_log_dir_changes(self) -> list[str]:
        """``writeLogDirChanges``: write the properties of every new or changed directory (in
        ``HashMap<String, ...>`` order, each after :attr:`pre_write`); returns them in that
        order. An I/O error moves the directory to the error set and is raised."""
        changed: dict[str, MetaProperties] = {}
        new: set[str] = set()
        for d, m in self.prev.log_dir_props.items():
            if self.log_dir_props.get(d) != m:
                changed[d] = self.log_dir_props[d]
        for d, m in self.log_dir_props.items():
            if d not in self.prev.log_dir_props:
                changed[d] = m
                new.add(d)
        # writeLogDirChanges iterates a HashMap filled from the previous TreeMap then the new
        # directories' HashMap: model the insertion order, then the table's
        first = sorted(d for d in changed if d not in new)
        first += java_hash_map_order(sorted(new))
        order = java_hash_map_order(first)
        for d in order:
            m = changed[d]
            if self.pre_write is not None:
                self.pre_write(d, d in new, m)
            try:
                m.write(os.path.join(os.path.abspath(d), META_PROPERTIES_NAME))
            except OSError:
                self.error_log_dirs.add(d)
                self.log_dir_props.pop(d, None)
                raise
        return order
