"""``kafkalog storage``: Kafka's ``kafka-storage.sh`` (``StorageTool``, Kafka 4.2).

Subcommands, with Kafka's flags and output:

* ``info -c server.properties``: each configured log directory, its ``meta.properties`` and the
  problems a broker would refuse to start with (missing or unformatted directories, mismatched
  cluster or node ids, a legacy layout). Beyond Kafka: ``--log-dir DIR`` (repeatable) inspects
  directories without a config file (a rescue copy), and an unreadable ``meta.properties``
  prints its reason instead of a stack trace.
* ``format -c server.properties -t CLUSTER_ID``: writes ``meta.properties``,
  ``bootstrap.checkpoint`` and, for a dynamic quorum, the bootstrap snapshot
  (``--release-version``, ``--feature``, ``--add-scram``, ``--ignore-formatted``,
  ``--standalone``, ``--initial-controllers``, ``--no-initial-controllers``), byte for byte as
  Kafka writes them (:mod:`kafkalog.storage.formatter`).
* ``version-mapping [-r VERSION]``: the feature levels a release's ``metadata.version``
  bootstraps.
* ``feature-dependencies -f feature=level``: what a feature level depends on.
* ``random-uuid``: a random Kafka Uuid (a cluster id).

Exit status: 0, or 1 with Kafka's message on stderr (a refused format, an ``info`` that found
problems, bad arguments).

>>> main(["version-mapping", "--release-version", "3.7-IV4"])  # doctest: +SKIP
metadata.version=19 (3.7-IV4)
kraft.version=0
...
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import IO

from ..checkpoint import Uuid
from ..cluster.features import FEATURES, default_level
from ..cluster.metadata_version import LATEST_PRODUCTION_LEVEL, MINIMUM_LEVEL
from ..errors import ConfigError, KafkaLogError
from ..usage import ArgumentParser, UsageError, java_short
from .bootstrap_metadata import METADATA_VERSION, FormatterError
from .dynamic_voters import DynamicVoters, VotersError
from .formatter import (
    LATEST_TESTING_LEVEL,
    Formatter,
    feature_level_error,
    metadata_version_from_string,
    metadata_version_name,
)
from .meta_properties_ensemble import (
    META_PROPERTIES_NAME,
    MetaPropertiesError,
    read_meta_properties,
)
from .storage_config import StorageConfig
from .storage_config import load as load_config

__all__ = ["main", "build_parser", "info", "parse_name_and_level"]

EXIT_OK, EXIT_ERROR = 0, 1


def build_parser() -> argparse.ArgumentParser:
    """``StorageTool.parseArguments``' options (plus ``info --log-dir``)."""
    p = ArgumentParser(prog="kafkalog storage", description="The Kafka storage tool.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    info_p = sub.add_parser("info", help="Get information about the Kafka log directories on "
                                         "this node.")
    info_p.add_argument("--config", "-c", help="The Kafka configuration file to use.")
    info_p.add_argument("--log-dir", action="append", metavar="DIR",
                        help="A log directory to inspect (repeatable; instead of --config, "
                             "beyond Kafka).")
    fmt = sub.add_parser("format", help="Format the Kafka log directories on this node.")
    fmt.add_argument("--config", "-c", required=True, help="The Kafka configuration file to use.")
    fmt.add_argument("--cluster-id", "-t", required=True, help="The cluster ID to use.")
    fmt.add_argument("--add-scram", "-S", action="append",
                     help="A SCRAM_CREDENTIAL to add to the __cluster_metadata log e.g. "
                          "'SCRAM-SHA-256=[name=alice,password=alice-secret]' "
                          "'SCRAM-SHA-512=[name=alice,iterations=8192,salt=\"N3E=\","
                          "saltedpassword=\"YCE=\"]'")
    fmt.add_argument("--ignore-formatted", "-g", action="store_true",
                     help="When this option is passed, the format command will skip over "
                          "already formatted directories rather than failing.")
    fmt.add_argument("--release-version", "-r",
                     help="The release version to use for the initial feature settings. The "
                          "minimum is 3.3-IV3; the default is 4.2-IV1")
    fmt.add_argument("--feature", "-f", action="append",
                     help="The setting to use for a specific feature, in feature=level format. "
                          "For example: `kraft.version=1`.")
    quorum = fmt.add_mutually_exclusive_group()
    quorum.add_argument("--standalone", "-s", action="store_true",
                        help="Used to initialize a controller as a single-node dynamic quorum.")
    quorum.add_argument("--no-initial-controllers", "-N", action="store_true",
                        help="Used to initialize a server without specifying a dynamic quorum.")
    quorum.add_argument("--initial-controllers", "-I",
                        help="Used to initialize a server with the specified dynamic quorum: "
                             "a comma-separated list of id@hostname:port:directory.")
    vm = sub.add_parser("version-mapping", help="Look up the corresponding features for a given "
                                                "metadata version.")
    vm.add_argument("--release-version", "-r",
                    help="The release version to use for the corresponding feature mapping. "
                         "The minimum is 3.3-IV3; the default is 4.2-IV1")
    fd = sub.add_parser("feature-dependencies", help="Look up dependencies for a given feature "
                                                     "version.")
    fd.add_argument("--feature", "-f", action="append", required=True,
                    help="The features and their versions to look up dependencies for, in "
                         "feature=version format. For example: `metadata.version=5`.")
    sub.add_parser("random-uuid", help="Print a random UUID.")
    return p


def info(out: IO[str], kraft_mode: bool | None, directories: Sequence[str]) -> int:
    """``StorageTool.infoCommand``: print what each directory holds; 1 when a problem was
    found. ``kraft_mode`` None (no config file: ``--log-dir`` alone) skips the check of the
    directories' layout against the config's mode."""
    problems: list[str] = []
    found: list[str] = []
    prev = None
    for d in sorted(directories):
        path = os.path.normpath(d) if d else d
        if not os.path.isdir(path):
            problems.append(f"{path} does not exist" if not os.path.exists(path)
                            else f"{path} is not a directory")
            continue
        found.append(path)
        meta = os.path.join(path, META_PROPERTIES_NAME)
        if not os.path.exists(meta):
            problems.append(f"{path} is not formatted.")
            continue
        try:
            cur = read_meta_properties(meta)
        except (KafkaLogError, OSError) as e:
            problems.append(f"Error loading {meta}: {getattr(e, 'message', None) or e}")
            continue
        if prev is None:
            prev = cur
        elif prev.cluster_id != cur.cluster_id:
            problems.append("Mismatched cluster IDs between storage directories.")
        elif prev.node_id != cur.node_id:
            problems.append("Mismatched node IDs between storage directories.")
    if prev is not None and kraft_mode is not None:
        if kraft_mode and prev.version == 0:
            problems.append("The kafka configuration file appears to be for a cluster in KRaft "
                            "mode, but the directories are formatted for legacy mode.")
        elif not kraft_mode and prev.version == 1:
            problems.append("The kafka configuration file appears to be for a legacy cluster, "
                            "but the directories are formatted for a cluster in KRaft mode.")
    if not directories:
        print("No directories specified.", file=out)
        return EXIT_OK
    if found:
        print("Found log directory:" if len(found) == 1 else "Found log directories:", file=out)
        for d in found:
            print(f"  {d}", file=out)
        print("", file=out)
    if prev is not None:
        # MetaProperties.toProperties through a TreeMap: keys sorted
        props = dict(sorted(prev.to_properties().items()))
        print("Found metadata: {" + ", ".join(f"{k}={v}" for k, v in props.items()) + "}",
              file=out)
        print("", file=out)
    if problems:
        print("Found problem:" if len(problems) == 1 else "Found problems:", file=out)
        for p in problems:
            print(f"  {p}", file=out)
        print("", file=out)
        return EXIT_ERROR
    return EXIT_OK


def parse_name_and_level(text: str) -> tuple[str, int]:
    """``StorageTool.parseNameAndLevel`` (``--feature name=level``).

    >>> parse_name_and_level("foo.bar=56")
    ('foo.bar', 56)
    """
    eq = text.find("=")
    if eq < 0:
        raise FormatterError(f"Can't parse feature=level string {text}: equals sign not found.")
    name, level = text[:eq].strip(), text[eq + 1:].strip()
    try:
        value = java_short(level)
    except ValueError:
        raise FormatterError(f"Can't parse feature=level string {text}: unable to parse "
                             f"{level} as a short.") from None
    return name, value


def _standalone_voters(config: StorageConfig) -> DynamicVoters:
    """``createStandaloneDynamicVoters``: this node at its first advertised controller
    listener (host ``localhost`` when it has none), with a new directory id."""
    if not config.is_controller:
        raise FormatterError("You can only use --standalone on a controller.")
    listeners = config.advertised_controller_listeners()
    if not listeners:
        raise FormatterError("No controller listeners found.")
    host = listeners[0].host or "localhost"
    return DynamicVoters.parse(f"{config.node_id}@{host}:{listeners[0].port}:{Uuid.random()}")


def run_format(args: argparse.Namespace, config: StorageConfig, out: IO[str]) -> Formatter:
    """``StorageTool.runFormatCommand``: the checks of the command line against the config,
    then :meth:`Formatter.run`."""
    feature_levels: dict[str, int] = {}
    for spec in args.feature or []:
        name, level = parse_name_and_level(spec)
        feature_levels[name] = level
    static_voters_empty = not config.static_voters
    if not static_voters_empty and (args.initial_controllers is not None or args.standalone):
        raise FormatterError(
            "You cannot specify controller.quorum.voters and format the node with "
            "--initial-controllers or --standalone. If you want to use dynamic quorum, please "
            "remove controller.quorum.voters and specify controller.quorum.bootstrap.servers "
            "instead.")
    initial = None
    if args.initial_controllers is not None:
        try:
            initial = DynamicVoters.parse(args.initial_controllers)
        except VotersError as e:
            raise FormatterError(str(e)) from None
    if args.standalone:
        initial = _standalone_voters(config)
    if (not args.no_initial_controllers and config.is_controller and static_voters_empty
            and initial is None):
        raise FormatterError(
            "Because controller.quorum.voters is not set on this controller, you must specify "
            "one of the following: --standalone, --initial-controllers, or "
            "--no-initial-controllers.")
    f = Formatter(node_id=config.node_id, cluster_id=args.cluster_id,
                  directories=config.log_directories(),
                  controller_listener_name=config.controller_listener_names[0],
                  metadata_log_directory=config.metadata_log_dir,
                  release_version=args.release_version, feature_levels=feature_levels,
                  unstable_feature_versions_enabled=config.unstable_feature_versions_enabled,
                  ignore_formatted=args.ignore_formatted, scram_arguments=args.add_scram or (),
                  initial_controllers=initial, has_dynamic_quorum=static_voters_empty, out=out)
    f.run()
    return f


def version_mapping(release: str | None, out: IO[str]) -> None:
    """``runVersionMappingCommand``: ``metadata.version=<level> (<release>)`` then each
    production feature's default level at it."""
    text = release if release is not None else metadata_version_name(LATEST_PRODUCTION_LEVEL)
    level = metadata_version_from_string(text, True)
    out.write(f"metadata.version={level} ({text})\n")
    for name in FEATURES:
        out.write(f"{name}={default_level(name, level)}\n")


def feature_dependencies(specs: Sequence[str], out: IO[str]) -> None:
    """``runFeatureDependenciesCommand``."""
    for spec in specs:
        parts = spec.split("=", 1)
        if len(parts) != 2:
            raise FormatterError(f"Invalid feature format: {spec}. Expected format: "
                                 "'feature=version' (e.g. 'group.version=1')")
        name, version = parts[0].strip(), parts[1].strip()
        try:
            level = java_short(version)
        except ValueError:
            raise FormatterError(f"Invalid version format: {version} for feature "
                                 f"{name}") from None
        if name == METADATA_VERSION:
            if not MINIMUM_LEVEL <= level <= LATEST_TESTING_LEVEL:
                raise FormatterError(f"Unknown metadata.version {level}")
            out.write(f"{name}={level} ({metadata_version_name(level)}) has no "
                      "dependencies.\n")
            continue
        if name not in FEATURES:
            raise FormatterError(f"Unknown feature: {name}")
        if feature_level_error(name, level) is not None:
            raise FormatterError(f"Feature level {level} is not supported for feature {name}")
        deps = next(f for f in FEATURES[name] if f.level == level).dependencies
        if not deps:
            out.write(f"{name}={level} has no dependencies.\n")
            continue
        out.write(f"{name}={level} requires:\n")
        for dep, dep_level in deps.items():
            if dep == METADATA_VERSION:
                out.write(f"    {dep}={dep_level} ({metadata_version_name(dep_level)})\n")
            else:
                out.write(f"    {dep}={dep_level}\n")


def main(argv: Sequence[str] | None = None, *, stdout: IO[str] | None = None,
         stderr: IO[str] | None = None) -> int:
    """Run ``kafkalog storage``; returns the exit status."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    try:
        args = build_parser().parse_args(list(sys.argv[2:] if argv is None else argv))
    except UsageError as e:
        err.write(f"{e}\n")
        return EXIT_ERROR  # argparse4j's handleError: StorageTool exits 1
    except SystemExit as e:  # --help
        return int(e.code or 0) if isinstance(e.code, int) else EXIT_ERROR
    try:
        if args.command == "random-uuid":
            out.write(f"{Uuid.random()}\n")
            return EXIT_OK
        if args.command == "version-mapping":
            version_mapping(args.release_version, out)
            return EXIT_OK
        if args.command == "feature-dependencies":
            feature_dependencies(args.feature, out)
            return EXIT_OK
        if args.command == "info":
            if args.config is None and not args.log_dir:
                err.write("kafkalog storage: error: info needs --config or --log-dir\n")
                return EXIT_ERROR
            if args.config is not None:
                config = load_config(args.config)
                dirs = config.log_directories() + list(args.log_dir or [])
                return info(out, True, sorted(set(dirs)))
            return info(out, None, sorted(set(args.log_dir)))
        config = load_config(args.config)
        run_format(args, config, out)
        return EXIT_OK
    except (FormatterError, MetaPropertiesError) as e:
        err.write(f"{e.message}\n")
        return EXIT_ERROR
    except ConfigError as e:
        err.write(f"{e}\n")
        return EXIT_ERROR
    except (KafkaLogError, OSError) as e:
        err.write(f"kafkalog storage: {e}\n")
        return EXIT_ERROR
