"""``KafkaServer``: a Kafka wire-protocol endpoint over one log directory.

The server opens the directory as a :class:`~kafkalog.log_dir.LogDir`, listens on ``host:port``
(loopback unless another address is asked for; over TLS for an ``SSL``/``SASL_SSL`` listener,
:mod:`~kafkalog.server.listener`), and serves each accepted socket with a
:class:`~kafkalog.server.connection.Connection` on one asyncio event loop. Every engine call
happens on that loop's thread, so requests never race on a log: each request is handled whole
before the next one starts, except while a fetch long-polls (it then awaits, holding nothing).

Two ways to run it:

* :meth:`KafkaServer.start` / :meth:`KafkaServer.stop`: the loop runs in a background thread
  (tests, embedding); ``start`` returns once the socket listens (``port=0`` picks a free port,
  read back from :attr:`KafkaServer.port`) and raises what opening the directory raised.
* :func:`serve` (``kafkalog serve``): the loop runs in the calling (main) thread until SIGINT or
  SIGTERM.

The log dir's maintenance thread (:class:`kafkalog.scheduler.LogDirScheduler`: retention,
flushes and checkpoints on Kafka's ``LogManager`` intervals) runs beside the loop, as a broker's
``KafkaScheduler`` runs beside its request handlers.

Shutdown (Kafka's ``BrokerServer.shutdown`` order): stop accepting, close every connection, stop
the coordinators' timers, then close the log dir (every log flushed and closed, checkpoints and
``.kafka_cleanshutdown`` written), so the next open, here or by a broker, needs no recovery.

Example
-------
>>> import tempfile
>>> with KafkaServer(tempfile.mkdtemp(), port=0) as server:   # started, stopped on exit
...     server.port > 0
True
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import signal
import socket
import threading
from collections.abc import Sequence
from typing import Any

from ..clock import Clock
from ..config import LogConfig
from ..log_dir import LogDir
from ..security.acls import AclStore
from ..security.scram_credentials import MECHANISM_TYPES, ScramCredential, ScramCredentialStore
from ..storage.bootstrap_metadata import BootstrapMetadata, read_bootstrap_directory
from ..storage.kraft_snapshot import BOOTSTRAP_FILE_NAME
from .broker import Broker, ServerConfig
from .client_quotas import ClientQuotas
from .connection import Connection
from .feature_store import FeatureStore
from .group_configs import GroupConfigStore
from .group_service import GroupService
from .listener import Listener, oauthbearer_validator, ssl_context
from .listener import check as check_listener
from .share_service import ShareService
from .txn_coordinator import TransactionCoordinator

__all__ = ["KafkaServer", "serve"]

logger = logging.getLogger("kafkalog.server")

_WILDCARDS = ("", "0.0.0.0", "::")


class KafkaServer:
    """A single-node Kafka endpoint over ``log_dir`` (see the module docstring).

    Parameters
    ----------
    log_dir:
        The log directory (created if absent), or an open writable ``LogDir`` (closed on stop).
    host, port:
        Address to bind; ``port=0`` picks a free port.
    node_id:
        ``node.id`` (also written to a new ``meta.properties``).
    config:
        Broker settings; ``node_id`` overrides its ``node_id``.
    log_config:
        Topic defaults for the log dir (a ``LogConfig`` or Kafka property names).
    clock:
        Time source for the engine and the coordinators.
    add_scram:
        SCRAM credentials ``(mechanism, user, password, iterations)`` stored in the tree once it
        is open (locked) and before serving (``kafkalog serve --add-scram``).
    listeners:
        More listeners (:class:`~kafkalog.server.listener.Listener`: a broker's other
        ``listeners`` entries), each with its own security settings and advertised address;
        ``host``/``port``/``config`` make the main one.
    """

    def __init__(self, log_dir: str | os.PathLike[str] | LogDir, host: str = "127.0.0.1",
                 port: int = 9092, *, node_id: int | None = None,
                 config: ServerConfig | None = None,
                 log_config: LogConfig | dict[str, Any] | None = None,
                 clock: Clock | None = None,
                 add_scram: Sequence[tuple[str, str, str, int]] = (),
                 listeners: Sequence[Listener] = ()) -> None:
        cfg = config if config is not None else ServerConfig()
        if node_id is not None:
            import dataclasses

            cfg = dataclasses.replace(cfg, node_id=node_id)
        self.config = cfg
        self.host = host
        self.port = port
        self._log_dir_arg = log_dir
        self._log_config = log_config
        self._clock = clock
        self._add_scram = list(add_scram)
        self.listeners = list(listeners)
        self.broker: Broker | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stopping: asyncio.Event | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self._error: BaseException | None = None
        self._stopped = threading.Event()

    # -- public API ------------------------------------------------------------------------------

    @property
    def address(self) -> str:
        """``host:port`` to give clients as ``bootstrap.servers``."""
        return f"{self.broker.host if self.broker else self.host}:{self.port}"

    def start(self) -> KafkaServer:
        """Open the directory and serve in a background thread; returns once listening.

        Raises
        ------
        LogLockedError
            Another writer holds the log dir.
        OSError
            The address cannot be bound.
        """
        if self._thread is not None:
            raise RuntimeError("server already started")
        ready = threading.Event()
        self._thread = threading.Thread(target=self._thread_main, args=(ready,),
                                        name=f"kafkalog-serve-{self.port}", daemon=True)
        self._thread.start()
        ready.wait()
        if self._error is not None:
            self._thread.join()
            err, self._error = self._error, None
            self._thread = None
            raise err
        return self

    def stop(self, timeout: float | None = 60.0) -> None:
        """Stop serving and close the log dir cleanly (idempotent)."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        if self._stopping is not None:
            loop.call_soon_threadsafe(self._stopping.set)
        thread.join(timeout)
        if thread.is_alive():
            logger.error("kafkalog server did not stop within %s s", timeout)
            return
        self._thread = None

    def call(self, fn: Any, *args: Any, timeout: float | None = 60.0) -> Any:
        """Run ``fn(*args)`` on the server's loop thread and return its result: the safe way
        for another thread to touch the broker while the server runs (appends that must wake
        waiting fetches, topic changes)."""
        loop = self._loop
        if loop is None or self._thread is None:
            raise RuntimeError("server not started")

        async def run() -> Any:
            return fn(*args)

        return asyncio.run_coroutine_threadsafe(run(), loop).result(timeout)

    def serve_forever(self) -> None:
        """Serve in the calling thread until SIGINT/SIGTERM (main thread) or :meth:`stop`."""
        asyncio.run(self._main(None, install_signals=threading.current_thread()
                               is threading.main_thread()))

    def __enter__(self) -> KafkaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- the loop ------------------------------------------------------------------------------

    def _thread_main(self, ready: threading.Event) -> None:
        try:
            asyncio.run(self._main(ready, install_signals=False))
        except BaseException as e:  # noqa: BLE001 - handed to start()
            if not ready.is_set():
                self._error = e
            else:
                logger.exception("server loop failed")
        finally:
            ready.set()

    def _open_broker(self) -> Broker:
        arg = self._log_dir_arg
        if isinstance(arg, LogDir):
            log_dir = arg
        else:
            log_dir = LogDir.open(arg, self._log_config, clock=self._clock,
                                  node_id=self.config.node_id)
        try:
            _warm_up()
            broker = Broker(log_dir, self.config, clock=self._clock)
            broker.transactions = TransactionCoordinator(broker)
            broker.group_configs = GroupConfigStore(log_dir.root, self.config)
            bootstrap = _read_bootstrap(log_dir.root)
            broker.features = FeatureStore(log_dir.root, self.config.node_id, None if
                                           bootstrap is None else _feature_levels(bootstrap))
            if broker.features.unserved:
                logger.warning("bootstrap.checkpoint finalizes %s; kafkalog serves %s",
                               ", ".join(f"{k}={v}" for k, v in broker.features.unserved.items()),
                               ", ".join(f"{k}={v}" for k, v in
                                         broker.features.control.finalized().items()))
            broker.scram_credentials = ScramCredentialStore(log_dir.root)
            if bootstrap is not None and not broker.scram_credentials.path.exists():
                _replay_bootstrap_scram(broker.scram_credentials, bootstrap)
            broker.acls = AclStore(log_dir.root)
            broker.acls_changed()
            broker.client_quotas = ClientQuotas(
                log_dir.root, self.config.quota_window_num,
                self.config.quota_window_size_seconds * 1000, broker.clock.milliseconds)
            for mechanism, user, password, iterations in self._add_scram:
                broker.scram_credentials.set_password(user, mechanism, password, iterations)
            broker.groups = GroupService(broker)
            broker.topic_listeners.append(broker.groups.topics_changed)
            broker.shares = ShareService(broker, other_group_type=broker.groups.group_type)
            broker.topic_listeners.append(broker.shares.topics_changed)
            broker.transactions.offsets_marker_hook = broker.groups.offsets_marker_written
            # LogManager's periodic work: retention, flushes, checkpoints (Kafka's intervals)
            log_dir.start_maintenance()
            return broker
        except BaseException:
            log_dir.close()
            raise

    async def _main(self, ready: threading.Event | None, *, install_signals: bool) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        check_listener(self.config)
        tls = ssl_context(self.config)
        extra_tls = []
        for extra in self.listeners:
            check_listener(extra.config)
            extra_tls.append(ssl_context(extra.config))
        validators = {}
        for cfg in (self.config, *(extra.config for extra in self.listeners)):
            validator = oauthbearer_validator(cfg)   # (the JWKS read before anything opens)
            if validator is not None:
                validators[id(cfg)] = validator
        broker = self._open_broker()
        broker.oauthbearer_validators = validators
        self.broker = broker
        servers: list[asyncio.AbstractServer] = []
        try:
            servers.append(await asyncio.start_server(self._on_client, self.host, self.port,
                                                      reuse_address=True, ssl=tls))
            for extra, ctx in zip(self.listeners, extra_tls):
                servers.append(await asyncio.start_server(
                    functools.partial(self._on_client, listener=extra), extra.host, extra.port,
                    reuse_address=True, ssl=ctx))
        except BaseException:
            for srv in servers:
                srv.close()
            broker.close()
            raise
        server = servers[0]
        sock = server.sockets[0]
        self.port = sock.getsockname()[1]
        broker.host = self.config.advertised_host or (
            socket.getfqdn() if self.host in _WILDCARDS else self.host)
        broker.port = self.config.advertised_port or self.port
        for extra, srv in zip(self.listeners, servers[1:]):
            extra.port = srv.sockets[0].getsockname()[1]
            extra.advertised = (
                extra.config.advertised_host
                or (socket.getfqdn() if extra.host in _WILDCARDS else extra.host),
                extra.config.advertised_port or extra.port)
        background = [asyncio.create_task(t) for t in _background_tasks(broker)]
        if install_signals:
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._loop.add_signal_handler(sig, self._stopping.set)
        logger.info("kafkalog serving %s on %s://%s:%d (node %d)", broker.log_dir.root,
                    self.config.security_protocol, self.host, self.port, self.config.node_id)
        for extra in self.listeners:
            logger.info("kafkalog also serving on %s %s://%s:%d", extra.name,
                        extra.config.security_protocol, extra.host, extra.port)
        if ready is not None:
            ready.set()
        try:
            await self._stopping.wait()
        finally:
            logger.info("kafkalog shutting down")
            for srv in servers:
                srv.close()
            for t in background:
                t.cancel()
            # connections accepted while shutting down add themselves: cancel until none is left
            while self._connections:
                tasks = list(self._connections)
                for t in tasks:
                    t.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
            await asyncio.gather(*background, return_exceptions=True)
            try:
                await asyncio.wait_for(asyncio.gather(*(srv.wait_closed() for srv in servers)),
                                       5)
            except asyncio.TimeoutError:
                logger.warning("connections still open after shutdown; closing the log dir")
            for component in (broker.groups, broker.transactions):
                if component is not None and hasattr(component, "shutdown"):
                    component.shutdown()
            broker.close()
            self._stopped.set()

    async def _on_client(self, reader: asyncio.StreamReader,
                         writer: asyncio.StreamWriter, listener: Listener | None = None
                         ) -> None:
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            await Connection(self.broker, reader, writer, listener).run()
        except asyncio.CancelledError:
            # shutdown cancels connections; asyncio's stream callback would log a cancelled
            # client task as an error, so the task ends normally
            pass
        finally:
            self._connections.discard(task)


def _read_bootstrap(root: str | os.PathLike[str]) -> BootstrapMetadata | None:
    """The directory's ``bootstrap.checkpoint`` (``kafka-storage.sh format`` or ``kafkalog
    storage format`` wrote it), None without one. Kafka's controller replays it when it starts
    on an empty metadata log: served for the first time, the directory takes its feature levels
    and SCRAM users the same way."""
    if not os.path.exists(os.path.join(root, BOOTSTRAP_FILE_NAME)):
        return None
    return read_bootstrap_directory(root)


def _feature_levels(bootstrap: BootstrapMetadata) -> dict[str, int]:
    return {r.data["name"]: int(r.data["featureLevel"]) for r in bootstrap.records
            if r.name == "FeatureLevelRecord"}


def _replay_bootstrap_scram(store: ScramCredentialStore, bootstrap: BootstrapMetadata) -> None:
    """The bootstrap's ``UserScramCredentialRecord``s into a new credential store."""
    names = {t: m for m, t in MECHANISM_TYPES.items()}
    creds = []
    for r in bootstrap.records:
        mechanism = names.get(r.data.get("mechanism"))
        if r.name == "UserScramCredentialRecord" and mechanism is not None:
            d = r.data
            creds.append((d["name"], ScramCredential(
                mechanism, bytes(d["salt"]), bytes(d["storedKey"]), bytes(d["serverKey"]),
                d["iterations"])))
    if creds:
        store.replay(creds)


def _warm_up() -> None:
    """Load the numba kernels a produce and a fetch use (from numba's cache: ~0.4 s) before
    the first client waits on them."""
    from ..config import LogConfig
    from ..log_validator import validate_and_assign_offsets
    from ..records.builder import encode_batch
    from ..records.record import Record

    validate_and_assign_offsets(encode_batch([Record(b"k", b"v", 0, headers=[("h", b"")])]),
                                base_offset=0, now=0, config=LogConfig())


def _background_tasks(broker: Broker) -> list[Any]:
    """The coordinators' timer loops (each component may offer ``run_timers()``)."""
    out = []
    for component in (broker.transactions, broker.groups, broker.shares):
        if component is not None and hasattr(component, "run_timers"):
            out.append(component.run_timers())
    return out


def serve(log_dir: str | os.PathLike[str], host: str = "127.0.0.1", port: int = 9092, *,
          node_id: int = 1, **kwargs: Any) -> None:
    """Serve ``log_dir`` on ``host:port`` until SIGINT/SIGTERM; the directory is closed cleanly
    (clean-shutdown marker written) before returning.

    Example
    -------
    >>> serve("/var/lib/kafka-logs", "127.0.0.1", 9092)  # doctest: +SKIP
    """
    KafkaServer(log_dir, host, port, node_id=node_id, **kwargs).serve_forever()
