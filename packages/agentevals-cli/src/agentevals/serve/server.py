"""Run everything ``agentevals serve`` starts, in one process and one event loop (plus the evaluation thread).

    options = ServeOptions(port=8001, otlp_http_port=4318, otlp_grpc_port=4317)
    asyncio.run(run_server(options, on_ready=print))

Sockets are bound before anything is announced, so port 0 works (tests) and the printed addresses are
the real ones. SIGINT/SIGTERM stop every server, then buffered sessions are flushed and evaluated.

Unless ``--no-store``, the process is one run in the run store (status ``live`` while serving,
``completed`` after a clean stop): every evaluated session is a case of it (``LiveRunRecorder``), and
the API and MCP tools read the same store.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import ipaddress
import logging
import signal
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

from ..engine.consumers import RunConsumer
from ..errors import ConfigError

if TYPE_CHECKING:
    from ..store import LiveRunRecorder, RunStore
    from ._guard import HostPolicy
    from .continuous import ContinuousState

__all__ = ["ServeOptions", "is_loopback", "run_server"]

log = logging.getLogger(__name__)


@dataclass
class ServeOptions:
    """The flags of ``agentevals serve``."""

    host: str = "127.0.0.1"
    port: int = 8001
    otlp_http_port: int = 4318
    otlp_grpc_port: int = 4317
    mcp_port: Optional[int] = None
    config: Optional[str] = None
    metrics: list[str] = field(default_factory=list)
    eval_sets: Optional[str] = None
    token: Optional[str] = None
    session_idle: float = 5.0
    max_buffered: int = 50_000
    max_sessions: int = 1000
    max_upload: int = 10 * 2**20
    emit_otel: bool = False
    ui: bool = True
    """Serve the web UI at ``/`` (``--headless`` turns it off)."""
    store: Optional[str] = None
    """The run store (``--store PATH|URL``; default ``store_location()``, the one ``run`` writes)."""
    no_store: bool = False
    """``--no-store``: keep live results in memory only; no run API, no run tools."""
    allowed_hosts: list[str] = field(default_factory=list)
    """``--allowed-host``: names (besides loopback and ``host``) the API, UI and MCP ports answer to."""
    allow_code: bool = False
    """``--allow-code-evaluators``: configs sent to the API or MCP port may run code on this machine."""
    allow_source_hosts: list[str] = field(default_factory=list)
    """``--allow-source-host``: hosts whose trace backends the API's ``sources`` and MCP ``evaluate_traces``
    may read (``HOST`` or ``HOST:PORT``); none: source URIs are refused (``_sources``)."""
    pull: list[str] = field(default_factory=list)
    """``--pull``: source URIs polled every ``every`` seconds for traces newer than their watermark."""
    every: float = 60.0
    """``--every``: seconds between two polls of each ``--pull`` source."""
    sample: Optional[float] = None
    """``--sample``: share of sessions evaluated (overrides the config's ``sample``)."""
    filter: Optional[str] = None
    """``--filter``: predicate a session must match to be evaluated (overrides the config's ``filter``)."""
    alerts: list[str] = field(default_factory=list)
    """``--alert``: rules such as ``tool_trajectory_avg_score pass_rate < 0.9 over 1h`` (besides the config's)."""
    alert_webhook: Optional[str] = None
    """``--alert-webhook``: URL each alert's JSON body is POSTed to when it fires or clears."""

    def check(self) -> None:
        """Refuse to listen beyond this machine without a token (raises ``ConfigError``)."""
        if not is_loopback(self.host) and not self.token:
            raise ConfigError(f"--host {self.host} accepts connections from other machines: set an API token "
                              "with --api-token or AGENTEVALS_API_TOKEN (clients send 'Authorization: Bearer <token>')")
        if self.session_idle <= 0:
            raise ConfigError(f"--session-idle must be positive, got {self.session_idle}")
        self.policy()
        from ._sources import SourceHosts

        SourceHosts(self.allow_source_hosts)  # a malformed --allow-source-host: ConfigError before listening
        if self.pull:
            from .pull import check_pull_sources

            check_pull_sources(self.pull)

    def policy(self) -> HostPolicy:
        """The Host/Origin policy of the HTTP ports (``ConfigError`` for a malformed ``--allowed-host``)."""
        from ._guard import HostPolicy

        try:
            return HostPolicy(bind=self.host, extra=self.allowed_hosts)
        except ValueError as exc:
            raise ConfigError(f"--allowed-host: {exc} (give a name or address, e.g. evals.internal)") from None


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts local connections (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc} (is another server using it? "
                          "pick another port)") from None
    sock.listen(128)
    sock.setblocking(False)
    return sock


def _port(sock: socket.socket) -> int:
    return sock.getsockname()[1]


async def run_server(options: ServeOptions, *, on_ready: Callable[[dict[str, Any]], None] = lambda _: None,
                     consumers: Sequence[RunConsumer] = ()) -> None:
    """Start the receivers, the API (and MCP), call ``on_ready`` with the bound addresses, serve until a signal."""
    from ..engine.budget import JudgeLedger
    from .live import EvalSettings, LiveEvaluator, load_eval_sets
    from .sessions import SessionAssembler
    from .store import MemorySessionStore

    options.check()
    settings = EvalSettings(config=options.config, metrics=list(options.metrics),
                            eval_sets=load_eval_sets(options.eval_sets) if options.eval_sets else {},
                            sample=options.sample, filter=options.filter, eval_sets_dir=options.eval_sets)
    from .alerts import AlertMonitor
    from .continuous import ContinuousState, StateRecorder
    from .judge_usage import JudgeUsageRecorder

    state = ContinuousState()
    settings.judge_ledger = JudgeLedger(clock=state.outcomes.clock)  # judge budgets span the server's batches
    alerting = AlertMonitor.for_serve(options, settings, state)  # a bad --alert: ConfigError before anything opens
    consumers = [*consumers, StateRecorder(state), JudgeUsageRecorder(state)]
    runs, recorder = _open_run_store(options)
    if options.emit_otel:
        from ..report.otel_events import EvaluationEventEmitter

        consumers.append(EvaluationEventEmitter.from_env())
    alerting.attach(consumers, run_id=recorder.run_id if recorder else None)
    assembler = SessionAssembler(max_units=options.max_buffered, idle=options.session_idle)
    store = MemorySessionStore(options.max_sessions)
    puller = None
    try:
        worker = LiveEvaluator(assembler, store, settings, consumers=[*consumers, *([recorder] if recorder else [])])
        from .pull import pulling

        puller = pulling(options, worker, state, recorder)  # started once serve is ready (the live run has begun)
        ready = alerting.announcing(on_ready)
        await _serve(options, settings, assembler, store, worker, recorder,
                     ready if puller is None else puller.started(ready), state)
    finally:
        alerting.stop()
        if puller is not None:
            puller.stop()
        if runs is not None:
            runs.close()


async def _serve(options: ServeOptions, settings: Any, assembler: Any, store: Any, worker: Any,
                 recorder: Optional[LiveRunRecorder], on_ready: Callable[[dict[str, Any]], None],
                 state: Optional[ContinuousState] = None) -> None:
    import uvicorn

    from ._guard import RequestGuard
    from ._sources import SourceHosts
    from .http_api import ApiContext, api_app
    from .otlp_grpc import start_otlp_grpc
    from .otlp_http import otlp_http_app

    runs = recorder.store if recorder is not None else None
    policy = options.policy()
    api_sock = _bind(options.host, options.port)
    otlp_sock = _bind(options.host, options.otlp_http_port)
    mcp_sock = _bind(options.host, options.mcp_port) if options.mcp_port is not None else None
    if options.otlp_grpc_port:  # say which port is taken in one line, before gRPC logs its own complaint
        _bind(options.host, options.otlp_grpc_port).close()
    grpc_host = f"[{options.host}]" if ":" in options.host else options.host
    grpc_server, grpc_port = await start_otlp_grpc(assembler, f"{grpc_host}:{options.otlp_grpc_port}",
                                                   token=options.token, max_message=options.max_upload)
    addresses = {"host": options.host, "api_port": _port(api_sock), "otlp_http_port": _port(otlp_sock),
                 "otlp_grpc_port": grpc_port, "mcp_port": _port(mcp_sock) if mcp_sock else None,
                 "run_id": recorder.run_id if recorder else None, "store": _shown(runs.location) if runs else None}
    ctx = ApiContext(assembler=assembler, store=store, token=options.token, max_upload=options.max_upload,
                     settings=settings, ui=options.ui, runs=runs, policy=policy, allow_code=options.allow_code,
                     source_hosts=SourceHosts(options.allow_source_hosts), continuous=state,
                     live_run=recorder.run_id if recorder else None,
                     otlp={"http": f"http://{options.host}:{addresses['otlp_http_port']}",
                           "grpc": f"{options.host}:{grpc_port}"})
    apps: list[tuple[Any, socket.socket]] = [
        (api_app(ctx), api_sock),
        # Agents reach the receivers by any name (a container's host alias, a service name): no Host
        # list; but a browser page (which always says its Origin) may not post spans.
        (RequestGuard(otlp_http_app(assembler, token=options.token, max_body=options.max_upload), policy,
                      what="OTLP", check_host=False), otlp_sock),
    ]
    if mcp_sock is not None:
        from ._input import check_mcp_session
        from .mcp_tools import LocalSessions, StoreRuns, build_mcp

        mcp = build_mcp(LocalSessions(store, assembler), runs=StoreRuns(runs), allow_code=options.allow_code,
                        source_hosts=SourceHosts(options.allow_source_hosts))
        apps.append((RequestGuard(check_mcp_session(_mcp_http_app(mcp)), policy, what="MCP", token=options.token),
                     mcp_sock))
    servers = [_QuietServer(uvicorn.Config(app, log_level="warning", lifespan="on" if i == 2 else "off",
                                           timeout_graceful_shutdown=5)) for i, (app, _) in enumerate(apps)]

    loop = asyncio.get_running_loop()

    def stop() -> None:
        for server in servers:
            server.should_exit = True

    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop)
    tasks = [asyncio.create_task(server.serve(sockets=[sock])) for server, (_, sock) in zip(servers, apps, strict=True)]
    try:
        if recorder is not None:  # everything is bound: from now on this process is a run in the store
            await asyncio.to_thread(recorder.begin)
        # What start-up built (modules, models, the servers) lives as long as the process: kept out of the
        # cyclic collector's full collections, which then walk only what serving allocates.
        gc.collect()
        gc.freeze()
        worker.start()
        while not all(s.started for s in servers):
            if any(t.done() for t in tasks):
                break
            await asyncio.sleep(0.02)
        on_ready(addresses)
        await asyncio.gather(*tasks)
    finally:
        gc.unfreeze()  # (a process that serves again, a test, collects them as before)
        stop()
        await asyncio.gather(*tasks, return_exceptions=True)
        await grpc_server.stop(grace=2)
        await asyncio.to_thread(worker.stop)
        if recorder is not None and recorder.begun:  # still evaluating after the deadline: the rest is lost
            await asyncio.to_thread(_close_run, recorder, "interrupted" if worker.running() else "completed")
        for sock in (api_sock, otlp_sock, mcp_sock):
            if sock is not None:
                sock.close()


def _mcp_http_app(mcp: Any) -> Any:
    """The Streamable HTTP app, its own Host/Origin check off: ``RequestGuard`` applies ours (the same
    names as the API's, ``--allowed-host`` included), with the API token."""
    try:
        from mcp.server.transport_security import TransportSecuritySettings

        return mcp.streamable_http_app(
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
    except (ImportError, TypeError):  # mcp 1.x: the settings are the server's, localhost-only by default
        return mcp.streamable_http_app()


def _open_run_store(options: ServeOptions) -> tuple[Optional[RunStore], Optional[LiveRunRecorder]]:
    """The run store and this process's live run in it (as ``run`` does: a store that cannot be opened
    stops serve with one line, ``StoreError``, exit 2; ``--no-store`` runs without it)."""
    if options.no_store:
        return None, None
    from ..store import LiveRunRecorder, RunStore, store_location
    from ..store._recording import run_meta

    runs = RunStore.open(store_location(options.store))
    return runs, LiveRunRecorder(runs, meta=run_meta(
        options={"live": True, "host": options.host, "config": options.config, "metrics": list(options.metrics),
                 "eval_sets": options.eval_sets, "session_idle": options.session_idle},
        config_path=options.config))


def _shown(location: str) -> str:
    from ..core.redact import redact_url

    return redact_url(location)


def _close_run(recorder: LiveRunRecorder, status: str) -> None:
    try:
        recorder.close(status=status)
    except Exception as exc:  # the store went away: say so in one line, the process still exits cleanly
        log.warning("run store %s: could not close run %s: %s: %s", recorder.store.location, recorder.run_id,
                    type(exc).__name__, exc)


def _server_class():
    import uvicorn

    class QuietServer(uvicorn.Server):
        """A uvicorn server that leaves signal handling to ``run_server`` (several share one loop)."""

        @contextlib.contextmanager
        def capture_signals(self):
            yield

    return QuietServer


def _QuietServer(config: Any) -> Any:
    return _server_class()(config)
