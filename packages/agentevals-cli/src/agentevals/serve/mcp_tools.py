"""MCP tools over the engine and the live sessions (the official ``mcp`` package).

``agentevals mcp`` serves them on stdio and reads sessions from a running ``serve`` over its HTTP API
(``RemoteSessions``); ``serve --mcp-port`` serves them over Streamable HTTP and reads its own store
(``LocalSessions``). Tools: ``list_metrics``, ``evaluate_traces``, ``list_sessions``,
``summarize_session``, ``evaluate_sessions``, and over the run store (``StoreRuns``; both read it
directly): ``list_runs``, ``show_run``, ``compare_runs``.

The five tools agentevals-cli 0.11 had take its argument names too (``evaluate_traces``'s
``eval_config_file``, ``evaluate_sessions``'s ``eval_set_id`` and ``judge_model``) and return its fields
beside ours (``compat_011``). An argument a tool does not know is an error naming the known ones, never
ignored.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Optional, Protocol

from ..core.redact import redact_obj
from ..errors import AgentevalsError
from . import compat_011, operations
from ._sources import SourceHosts
from .sessions import SessionAssembler
from .store import SessionRecord, SessionStore

if TYPE_CHECKING:
    from ..store import RunStore

__all__ = ["LocalSessions", "RemoteSessions", "SessionSource", "StoreRuns", "build_mcp"]


class SessionSource(Protocol):
    """Where the session tools read sessions from."""

    def list(self, limit: int) -> list[dict[str, Any]]: ...

    def get(self, session_id: str) -> SessionRecord: ...


class LocalSessions:
    """The sessions of this process (``serve --mcp-port``)."""

    def __init__(self, store: SessionStore, assembler: Optional[SessionAssembler] = None) -> None:
        self.store, self.assembler = store, assembler

    def list(self, limit: int) -> list[dict[str, Any]]:
        open_ = self.assembler.open_sessions() if self.assembler else []
        return [*open_, *(r.summary() for r in self.store.list(limit=limit))][:limit]

    def get(self, session_id: str) -> SessionRecord:
        record = self.store.get(session_id)
        if record is None:
            raise AgentevalsError(f"no session '{session_id}' (list_sessions shows the known ones)")
        return record


class RemoteSessions:
    """The sessions of a running ``agentevals serve``, read over its HTTP API (10 s deadline per call)."""

    def __init__(self, url: str, *, token: Optional[str] = None) -> None:
        self.url = url.rstrip("/")
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}

    def _get(self, path: str, **params: Any) -> Any:
        import json
        from urllib.parse import urlencode

        from ..core._http import HttpError, request

        query = f"?{urlencode(params)}" if params else ""
        try:
            response = request("GET", f"{self.url}/api{path}{query}", headers=self.headers, timeout=10, deadline=10)
        except HttpError as exc:
            raise AgentevalsError(f"cannot reach agentevals serve at {self.url}: {exc.detail} "
                                  "(start it with `agentevals serve`, or pass --server-url)") from None
        is_json = response.headers.get("content-type", "").startswith("application/json")
        body = json.loads(response.body) if is_json else {}
        if response.status != 200:
            raise AgentevalsError(body.get("error") or f"{self.url}/api{path}: HTTP {response.status}")
        return body["data"]

    def list(self, limit: int) -> list[dict[str, Any]]:
        return self._get("/sessions", limit=limit)

    def get(self, session_id: str) -> SessionRecord:
        from urllib.parse import quote

        return SessionRecord.model_validate(self._get(f"/sessions/{quote(session_id, safe='')}")["record"])


class StoreRuns:
    """The run store the run tools read: an open one (``serve --mcp-port``), or a location opened at the
    first run tool call (``agentevals mcp --store``), so the other tools work without it. Reads run on
    a worker thread. Neither given: the tools answer that there is no run store (``--no-store``)."""

    def __init__(self, store: Optional[RunStore] = None, *, location: Optional[str] = None) -> None:
        self.store, self.location = store, location
        self._lock = threading.Lock()

    def _open(self) -> RunStore:
        with self._lock:
            if self.store is None:
                if self.location is None:
                    raise AgentevalsError("this server runs with --no-store: there is no run store to read")
                from ..store import RunStore

                self.store = RunStore.open(self.location)
            return self.store

    async def read(self, read: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``read(store, *args, **kwargs)`` on a worker thread."""
        return await asyncio.to_thread(lambda: read(self._open(), *args, **kwargs))


def _server_class() -> Any:
    try:  # mcp 2.x
        from mcp.server.mcpserver import MCPServer
    except ImportError:  # mcp 1.x
        from mcp.server.fastmcp import (  # type: ignore[attr-defined, no-redef]  # mcp 1.x's name, absent in 2.x
            FastMCP as MCPServer,
        )
    return MCPServer


def _tool_error() -> type[Exception]:
    """The MCP SDK's anticipated-failure exception (its message reaches the client; others are hidden)."""
    try:  # mcp 2.x
        from mcp.server.mcpserver.exceptions import ToolError
    except ImportError:  # mcp 1.x
        from mcp.server.fastmcp.exceptions import ToolError  # type: ignore[import-not-found, no-redef]  # mcp 1.x
    return ToolError


class _Tools:
    """The MCP server, its ``tool()`` decorator giving each tool its signature with the annotations evaluated:
    this module's are strings (``from __future__ import annotations``), which mcp before 1.20 took for classes
    (``issubclass()`` failed on the first one, so the server did not start)."""

    def __init__(self, server: Any) -> None:
        self.server = server

    def tool(self) -> Callable[[Callable[..., Any]], Any]:
        register = self.server.tool()

        def decorate(fn: Callable[..., Any]) -> Any:
            fn.__signature__ = inspect.signature(fn, eval_str=True)  # type: ignore[attr-defined]
            return register(fn)

        return decorate


def build_mcp(sessions: SessionSource, runs: Optional[StoreRuns] = None, *, allow_code: bool = True,
              source_hosts: Optional[SourceHosts] = None) -> Any:
    """The MCP server with the eight tools; ``.run_stdio_async()`` or ``.streamable_http_app()`` to serve it.

    ``allow_code=False`` (``serve --mcp-port`` without ``--allow-code-evaluators``): ``evaluate_traces``
    refuses a config naming evaluators that run code (``serve._trust``). Stdio (``agentevals mcp``) runs
    as the user who started it, for that user's own agent, so it allows them as ``agentevals run`` does.
    ``source_hosts`` (``serve --mcp-port``): URIs among ``evaluate_traces``'s ``trace_files`` must name one
    of these hosts (``serve --allow-source-host``; ``_sources``); ``None`` (stdio): any, as for ``run``.
    """
    runs = runs or StoreRuns()
    server = _Tools(_server_class()("agentevals", instructions=(
        "Evaluate AI-agent traces (OpenTelemetry) against golden eval sets. list_metrics first; "
        "evaluate_traces for files; list_sessions / summarize_session / evaluate_sessions for live sessions "
        "received by `agentevals serve`; list_runs / show_run / compare_runs for recorded runs (batch runs "
        "and serve's live run).")))

    @server.tool()
    def list_metrics() -> list[dict[str, Any]]:
        """The builtin metrics, with what each needs (an eval set, an LLM judge): a list, as in agentevals
        0.11 (one text item per metric; the structured result is ``{"result": [...]}``)."""
        return [{**m, **compat_011.metric_fields(m)} for m in operations.list_metrics()]

    @server.tool()
    async def evaluate_traces(trace_files: list[str], metrics: Optional[list[str]] = None,
                              eval_set_file: Optional[str] = None, config_file: Optional[str] = None,
                              trace_format: Optional[str] = None, threshold: Optional[float] = None,
                              trajectory_match_type: Optional[str] = None,
                              judge_model: Optional[str] = None,
                              eval_config_file: Optional[str] = None, since: Optional[str] = None) -> dict[str, Any]:
        """Evaluate trace files (Jaeger JSON, OTLP JSON) or trace backend URIs (jaeger+http://HOST:PORT?service=NAME&since=1h,
        tempo+, phoenix+, mlflow+, langfuse+https://) exactly like `agentevals run`; returns the run result
        (cases with each metric's status, score and reason) and its exit code, and agentevals 0.11's
        `passed`, `traces`, `errors`. `eval_config_file` is 0.11's name for `config_file`. `since` (a duration
        such as 2h, or an RFC 3339 time) is the window of the URIs that name none, as `run --since`."""
        if eval_config_file is not None:
            if config_file is not None and config_file != eval_config_file:
                return {"error": "evaluate_traces: give the config as config_file or eval_config_file, not both"}
            config_file = eval_config_file
        if source_hosts is not None:
            try:
                source_hosts.check([f for f in trace_files if "://" in str(f)], what="trace_files")
            except AgentevalsError as exc:
                return {"error": str(exc)}
        if config_file and not allow_code:
            from ._trust import code_in_config

            refusal = code_in_config(config_file)
            if refusal:
                return {"error": refusal}
        try:
            run = await operations.evaluate_files_async(
                trace_files, metrics=list(metrics or []), eval_set=eval_set_file, config=config_file,
                trace_format=trace_format, threshold=threshold, trajectory_match_type=trajectory_match_type,
                judge_model=judge_model, **({"since": since} if since is not None else {}))
        except AgentevalsError as exc:
            return {"error": str(exc)}
        return redact_obj({"exit_code": run.exit_code(), **run.model_dump(mode="json"),
                           **compat_011.mcp_evaluate_traces(run)})

    @server.tool()
    def list_sessions(limit: int = 20) -> list[dict[str, Any]]:
        """Live sessions received by `agentevals serve`, newest first, with their status and scores: a list,
        as in agentevals 0.11. A server that cannot be reached is a tool error naming it."""
        try:
            return [compat_011.mcp_session_entry(s) for s in sessions.list(max(1, min(limit, 500)))]
        except AgentevalsError as exc:  # a list cannot carry 0.11's {"error": …}: a tool error with the line
            raise _tool_error()(str(exc)) from None

    @server.tool()
    def summarize_session(session_id: str) -> dict[str, Any]:
        """One session's turns (user input, tool calls, response) and its evaluation results."""
        try:
            record = sessions.get(session_id)
            summary = operations.summarize(record)
            return redact_obj({**summary, **compat_011.mcp_summary(summary, record)})
        except AgentevalsError as exc:
            return {"error": str(exc)}

    @server.tool()
    async def evaluate_sessions(golden_session_id: str, session_ids: Optional[list[str]] = None,
                                metrics: Optional[list[str]] = None, threshold: Optional[float] = None,
                                trajectory_match_type: Optional[str] = None, eval_set_id: Optional[str] = None,
                                judge_model: Optional[str] = None) -> dict[str, Any]:
        """Evaluate sessions against a golden one (its turns become the expected conversation, an eval set
        named `eval_set_id`). Without ``session_ids``, every evaluated session is compared, oldest first, the
        golden one included (it scores as a match against itself), as in 0.11. Returns the run result and
        0.11's `golden_session_id`, `eval_set_id`, `results`."""
        label = eval_set_id or f"eval-{golden_session_id[:12]}"  # 0.11's default label
        try:
            golden = sessions.get(golden_session_id)
            ids = session_ids or [s["session_id"] for s in sessions.list(500) if s.get("status") == "evaluated"][::-1]
            records = [sessions.get(i) for i in ids]
            run = await operations.evaluate_against_golden(
                golden, records, eval_set_id=label, metrics=list(metrics or []), threshold=threshold,
                trajectory_match_type=trajectory_match_type, judge_model=judge_model)
        except AgentevalsError as exc:
            return {"error": str(exc)}
        return redact_obj({"exit_code": run.exit_code(), **run.model_dump(mode="json"),
                           **compat_011.mcp_session_results(run, golden_session_id=golden_session_id,
                                                            eval_set_id=label, session_ids=ids)})

    @server.tool()
    async def list_runs(limit: int = 20) -> dict[str, Any]:
        """Runs recorded in the run store, newest first: id, status (`live` for a serving `agentevals serve`),
        start, command, totals (cases by status, pass rate)."""
        try:
            return {"runs": await runs.read(operations.list_runs, max(1, min(limit, 200)))}
        except AgentevalsError as exc:
            return {"error": str(exc)}

    @server.tool()
    async def show_run(run: str = "latest", full: bool = False, rows: int = 50) -> dict[str, Any]:
        """One stored run (id, unique prefix or `latest`) in brief: totals and their 95% `intervals`, then its
        result rows with the failing ones first (at most `rows`). `full=true` returns the whole `runs show -o json`
        document."""
        try:
            if full:
                return {"run": await runs.read(operations.run_document, run)}
            return await runs.read(operations.run_summary, run, rows=max(0, min(rows, 1000)))
        except AgentevalsError as exc:
            return {"error": str(exc)}

    @server.tool()
    async def compare_runs(a: str, b: str = "latest") -> dict[str, Any]:
        """What changed from stored run `a` (the baseline) to run `b`: regressions, fixes, score deltas per
        case and metric, and a one-line headline."""
        try:
            return await runs.read(operations.compare_stored_runs, a, b)
        except AgentevalsError as exc:
            return {"error": str(exc)}

    _refuse_unknown_arguments(server.server)
    return server.server


def _refuse_unknown_arguments(server: Any) -> None:
    """Make every tool refuse an argument it does not declare (the ``mcp`` package drops them silently:
    a 0.11 client's ``eval_config_file`` once ran the default metric instead of the config). The tools'
    input schemas say ``additionalProperties: false`` too, so clients can see it."""
    from pydantic import ConfigDict, model_validator

    for tool in server._tool_manager.list_tools():
        meta = tool.fn_metadata
        base = meta.arg_model
        known = sorted(f.alias or name for name, f in base.model_fields.items())

        def check(cls: Any, data: Any, *, _tool: str = tool.name, _known: list[str] = known) -> Any:
            if isinstance(data, dict):
                unknown = sorted(set(data) - set(_known))
                if unknown:
                    raise ValueError(f"{_tool}: unknown argument(s) {', '.join(unknown)}; "
                                     f"known: {', '.join(_known) or 'none'}")
            return data

        meta.arg_model = type(base.__name__, (base,), {
            "__module__": base.__module__,
            "model_config": ConfigDict(**{**base.model_config, "extra": "forbid"}),
            # pydantic's stubs do not list a classmethod object, which it accepts (and unwraps) at run time
            "_check_unknown": model_validator(mode="before")(classmethod(check)),  # type: ignore[arg-type]
        })
        tool.parameters = {**tool.parameters, "additionalProperties": False}

