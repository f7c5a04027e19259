"""Formatting a KRaft node's log directories (``kafka-storage.sh format``), as Kafka 4.2's
``Formatter`` does.

:meth:`Formatter.run` checks the request, settles the release version and every feature's
level, builds the bootstrap metadata and writes, in each directory that has no
``meta.properties`` yet:

* ``meta.properties`` (version 1, cluster id, node id and a new directory id; a dynamic quorum
  voter's metadata directory takes the directory id its ``--initial-controllers`` entry names);
* ``bootstrap.checkpoint`` (the bootstrap metadata, :mod:`kafkalog.storage.kraft_snapshot`);
* in the metadata directory of a dynamic quorum (``--standalone``/``--initial-controllers``/
  ``--no-initial-controllers``), ``__cluster_metadata-0/00000000000000000000-0000000000
  .checkpoint`` with the kraft.version and the initial voters.

Already formatted directories are an error unless ``ignore_formatted``; they are never
rewritten. The lines Kafka prints go to ``out``; refusals raise
:class:`~kafkalog.storage.bootstrap_metadata.FormatterError` with Kafka's text.

Versions are Kafka 4.2's: ``metadata.version`` from 3.3-IV3 (7) to 4.2-IV1 (29), 4.3-IV0 (30)
only with ``unstable.feature.versions.enable``.

>>> import io, tempfile
>>> d = tempfile.mkdtemp()
>>> f = Formatter(node_id=1, cluster_id="XcZZOzUqS4yHOjhMQB6JLQ", directories=[d],
...               controller_listener_name="CONTROLLER", release_version="3.7-IV4",
...               out=io.StringIO())
>>> f.run().feature_level("metadata.version")
19
>>> sorted(os.listdir(d))
['bootstrap.checkpoint', 'meta.properties']
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterable, Mapping
from typing import IO

from ..checkpoint import MetaProperties, Uuid
from ..cluster.features import FEATURES, default_level
from ..cluster.metadata_version import LATEST_PRODUCTION_LEVEL, LEVELS, MINIMUM_LEVEL
from .bootstrap_metadata import (
    KRAFT_VERSION,
    METADATA_VERSION,
    BootstrapMetadata,
    FormatterError,
    parse_scram_arguments,
)
from .dynamic_voters import DynamicVoters
from .kraft_snapshot import system_clock, write_bootstrap_checkpoint, write_bootstrap_snapshot
from .meta_properties_ensemble import Copier, load

__all__ = ["Formatter", "LATEST_TESTING_LEVEL", "metadata_version_from_string",
           "metadata_version_name", "feature_level_error", "validate_feature_version"]

#: Kafka 4.2's ``MetadataVersion.latestTesting()`` (4.3-IV0): its enum's last level
LATEST_TESTING_LEVEL = 30
#: release -> its latest production level ("3.7" -> 3.7-IV4), as IBP_VERSIONS maps it
_RELEASES: dict[str, int] = {LEVELS[lv].split("-")[0]: lv
                              for lv in range(MINIMUM_LEVEL, LATEST_PRODUCTION_LEVEL + 1)}


def metadata_version_name(level: int) -> str:
    """``MetadataVersion.toString`` (``3.7-IV4``)."""
    return LEVELS[level]


def _versions_text(last: int) -> str:
    return ", ".join(LEVELS[lv] for lv in range(MINIMUM_LEVEL, last + 1))


def metadata_version_from_string(text: str, unstable: bool) -> int:
    """``MetadataVersion.fromVersionString``: a release (``3.7``, its latest production
    level; ``3.7.1`` reads as ``3.7``) or a level name (``3.7-IV2``).

    Raises
    ------
    FormatterError
        Not a known version, or not a production one without ``unstable``.
    """
    parts = text.split(".")
    key = text if len(parts) <= 2 else ".".join(parts[:2])
    by_name = {LEVELS[lv]: lv for lv in range(MINIMUM_LEVEL, LATEST_TESTING_LEVEL + 1)}
    level = _RELEASES.get(key, by_name.get(key))
    if level is None or (not unstable and level > LATEST_PRODUCTION_LEVEL):
        last = LATEST_TESTING_LEVEL if unstable else LATEST_PRODUCTION_LEVEL
        raise FormatterError(f"Unknown metadata.version '{text}'. Supported metadata.version "
                             f"are: {_versions_text(last)}")
    return level


def metadata_version_from_level(level: int) -> int:
    """``MetadataVersion.fromFeatureLevel`` (Kafka 4.2's levels)."""
    if not MINIMUM_LEVEL <= level <= LATEST_TESTING_LEVEL:
        raise FormatterError(f"No MetadataVersion with feature level {level}. Valid feature "
                             f"levels are from {MINIMUM_LEVEL} to {LATEST_TESTING_LEVEL}.")
    return level


def feature_level_error(name: str, level: int) -> str | None:
    """``Feature.fromFeatureLevel``'s refusal, or None when ``name`` has that level (every
    level of Kafka 4.2's features is a production one)."""
    if any(fl.level == level for fl in FEATURES[name]):
        return None
    return f"No feature:{name} with feature level {level}"


def validate_feature_version(name: str, level: int, levels: Mapping[str, int]) -> None:
    """``Feature.validateVersion``: a level above 0 needs a KRaft ``metadata.version``, and
    the level's dependencies must be met by ``levels``."""
    mv = levels.get(METADATA_VERSION)
    if level >= 1 and (mv is None or mv < MINIMUM_LEVEL):
        raise FormatterError(f"{name} could not be set to {level} because it depends on "
                             f"metadata.version={MINIMUM_LEVEL} ({LEVELS[MINIMUM_LEVEL]})")
    fl = next(f for f in FEATURES[name] if f.level == level)
    for dep, dep_level in fl.dependencies.items():
        have = levels.get(dep)
        if have is None or have < dep_level:
            raise FormatterError(f"{name} could not be set to {level} because it depends on "
                                 f"{dep} level {dep_level}")


class Formatter:
    """``org.apache.kafka.metadata.storage.Formatter`` (see the module docstring).

    ``feature_levels`` are ``--feature`` settings (``metadata.version`` among them stands for
    ``--release-version``); ``initial_controllers`` the KIP-853 voters; ``has_dynamic_quorum``
    is true when ``controller.quorum.voters`` is empty. ``clock`` stamps the snapshot batches
    (milliseconds), ``random_bits`` draws directory ids.
    """

    def __init__(self, *, node_id: int, cluster_id: str | None,
                 directories: Iterable[str], controller_listener_name: str | None,
                 metadata_log_directory: str | None = None,
                 release_version: str | None = None,
                 feature_levels: Mapping[str, int] | None = None,
                 unstable_feature_versions_enabled: bool = False,
                 ignore_formatted: bool = False, scram_arguments: Iterable[str] = (),
                 initial_controllers: DynamicVoters | None = None,
                 has_dynamic_quorum: bool = False, out: IO[str] | None = None,
                 clock: Callable[[], int] = system_clock,
                 random_bits: Callable[[int], int] | None = None) -> None:
        self.node_id = node_id
        self.cluster_id = cluster_id
        self.directories = sorted(set(directories))
        self.controller_listener_name = controller_listener_name
        self.metadata_log_directory = metadata_log_directory
        self.release_version = release_version
        self.feature_levels = dict(feature_levels or {})
        self.unstable = unstable_feature_versions_enabled
        self.ignore_formatted = ignore_formatted
        self.scram_arguments = list(scram_arguments)
        self.initial_controllers = initial_controllers
        self.has_dynamic_quorum = has_dynamic_quorum
        self.out = out
        self.clock = clock
        self.random_bits = random_bits
        self.bootstrap_metadata: BootstrapMetadata | None = None
        self.written: list[str] = []
        """The directories formatted by :meth:`run`, in the order written."""

    def _print(self, line: str) -> None:
        if self.out is not None:
            print(line, file=self.out)

    def run(self) -> BootstrapMetadata:
        """Format (see the module docstring); returns the bootstrap metadata written."""
        if self.node_id < 0:
            raise FormatterError("You must specify a valid non-negative node ID.")
        if self.cluster_id is None:
            raise FormatterError("You must specify the cluster id.")
        if not self.directories:
            raise FormatterError("You must specify at least one directory to format")
        if self.controller_listener_name is None:
            raise FormatterError("You must specify the name of the initial controller "
                                 "listener.")
        md = self.metadata_log_directory
        if md is not None and md not in self.directories:
            raise FormatterError(f"The specified metadata log directory, {md} was not one of "
                                 f"the given directories: [{', '.join(self.directories)}]")
        release = self.effective_release_version()
        levels = self.effective_feature_levels(release)
        bootstrap = self.calculate_bootstrap_metadata(release, levels)
        self.bootstrap_metadata = bootstrap
        self._do_format(bootstrap, release, levels)
        return bootstrap

    def effective_release_version(self) -> int:
        """``calculateEffectiveReleaseVersion``: the ``metadata.version`` level."""
        if METADATA_VERSION in self.feature_levels:
            if self.release_version is not None:
                raise FormatterError(f"Use --release-version instead of --feature "
                                     f"{METADATA_VERSION}=X to avoid ambiguity.")
            level = metadata_version_from_level(self.feature_levels[METADATA_VERSION])
        elif self.release_version is not None:
            level = metadata_version_from_string(self.release_version, self.unstable)
        else:
            return LATEST_TESTING_LEVEL if self.unstable else LATEST_PRODUCTION_LEVEL
        if not self.unstable and level > LATEST_PRODUCTION_LEVEL:
            raise FormatterError(f"{METADATA_VERSION} {LEVELS[level]} is not yet stable.")
        return level

    def effective_feature_levels(self, release: int) -> dict[str, int]:
        """``calculateEffectiveFeatureLevels``: every feature's level (the given ones, the
        release's defaults for the rest, kraft.version from the quorum's kind), checked."""
        for name in sorted(self.feature_levels):
            if name != METADATA_VERSION and name not in FEATURES:
                raise FormatterError(f"Unsupported feature: {name}. Supported features are: "
                                     + ", ".join(sorted(FEATURES)))
        levels = dict(self.feature_levels)
        levels[METADATA_VERSION] = release
        for name in FEATURES:
            if name == KRAFT_VERSION:
                levels[name] = self._effective_kraft_version(levels.get(name))
            elif name not in levels:
                levels[name] = default_level(name, release)
        for name in sorted(levels):
            if name == METADATA_VERSION:
                continue
            error = feature_level_error(name, levels[name])
            if error is not None:
                raise FormatterError(error)
            validate_feature_version(name, levels[name], levels)
        return dict(sorted(levels.items()))

    def _effective_kraft_version(self, configured: int | None) -> int:
        if configured is not None:
            if configured == 0:
                if self.has_dynamic_quorum:
                    raise FormatterError(
                        "Cannot set kraft.version to 0 if controller.quorum.voters is empty and "
                        "one of the flags --standalone, --initial-controllers, or "
                        "--no-initial-controllers is used. For dynamic controllers support, "
                        "try removing the --feature flag for kraft.version.")
            elif not self.has_dynamic_quorum:
                raise FormatterError(
                    f"Cannot set kraft.version to {configured} unless controller.quorum.voters "
                    "is empty and one of the flags --standalone, --initial-controllers, or "
                    "--no-initial-controllers is used. For dynamic controllers support, try "
                    "using one of --standalone, --initial-controllers, or "
                    "--no-initial-controllers and removing controller.quorum.voters.")
            return configured
        return 1 if self.has_dynamic_quorum else 0

    def calculate_bootstrap_metadata(self, release: int, levels: Mapping[str, int]
                                     ) -> BootstrapMetadata:
        """``calculateBootstrapMetadata``: the feature records, then any SCRAM records."""
        md = BootstrapMetadata.from_versions(release, levels)
        records = list(md.records)
        if self.scram_arguments:
            if release < 11:  # MetadataVersion.isScramSupported: 3.5-IV2
                raise FormatterError(f"SCRAM is only supported in {METADATA_VERSION} "
                                     f"{LEVELS[11]} or later.")
            records += parse_scram_arguments(self.scram_arguments)
        return BootstrapMetadata.from_records(records, "format command")

    def _directory_type(self, log_dir: str) -> str:
        """``DirectoryType.calculate``'s description."""
        if log_dir != (self.metadata_log_directory or ""):
            return "data directory"
        if self.initial_controllers is None:
            return "metadata directory"
        if self.node_id in self.initial_controllers.voters:
            return "dynamic metadata voter directory"
        return "dynamic metadata directory"

    def _do_format(self, bootstrap: BootstrapMetadata, release: int,
                   levels: Mapping[str, int]) -> None:
        ensemble = load(self.directories)
        ensemble.verify(self.cluster_id, self.node_id)
        copier = Copier(ensemble, self.random_bits or secrets.randbits)
        if not (self.ignore_formatted or not copier.log_dir_props):
            first = sorted(copier.log_dir_props)[0]
            raise FormatterError(f"Log directory {first} is already formatted. Use "
                                 "--ignore-formatted to ignore this directory and format the "
                                 "others.", path=first)
        if copier.error_log_dirs:
            for d in sorted(copier.error_log_dirs):
                self._print(f"I/O error trying to read log directory {d}. Ignoring...")
            if not ensemble.empty_log_dirs and not copier.log_dir_props:
                raise FormatterError("No available log directories to format.")
        if not ensemble.empty_log_dirs:
            self._print("All of the log directories are already formatted.")
            return
        self._print(f"Bootstrap metadata: {bootstrap}")
        types: dict[str, str] = {}
        for d in sorted(ensemble.empty_log_dirs):
            types[d] = self._directory_type(d)
            if types[d] == "dynamic metadata voter directory":
                assert self.initial_controllers is not None
                directory_id: Uuid = self.initial_controllers.voters[self.node_id].directory_id
            else:
                directory_id = copier.generate_valid_directory_id()
            copier.set_log_dir_props(d, MetaProperties(1, self.cluster_id, self.node_id,
                                                       directory_id))
        values = bootstrap.values()

        def pre_write(log_dir: str, _new: bool, _props: MetaProperties) -> None:
            self._print(f"Formatting {types[log_dir]} {log_dir} with {METADATA_VERSION} "
                        f"{LEVELS[release]}.")
            os.makedirs(log_dir, exist_ok=True)
            write_bootstrap_checkpoint(log_dir, values, self.clock)
            if types[log_dir].startswith("dynamic"):
                voters = (None if self.initial_controllers is None else
                          self.initial_controllers.voters_record(
                              self.controller_listener_name or ""))
                write_bootstrap_snapshot(log_dir, levels[KRAFT_VERSION], voters, self.clock)

        copier.pre_write = pre_write
        try:
            self.written = copier.write_log_dir_changes()
        except OSError as e:
            raise FormatterError(f"Error while writing meta.properties file "
                                 f"{e.filename or ''}: {e}") from e
