"""The HTTP API of ``serve`` (FastAPI, under ``/api``; the OpenAPI schema is at ``/openapi.json``).

Every answer is ``{"data": …, "error": null}`` as in agentevals 0.11; a bad request is
``{"data": null, "error": "<one line>"}`` with status 400 (413 for an upload over the size limit,
401 without the API token when one is set, 404 for an unknown session or run, 409 for the run routes
when serve runs with ``--no-store``, 403 for a cross-site post or a config that runs code without
``--allow-code-evaluators``, 421 for a Host that is not this server's: ``_guard``, ``_trust``; 503 when
the run store cannot be read). A malformed request (a field of the wrong type, a body that does not
parse) is a 400 naming the field, never a 5xx or a traceback (``_input``). ``/api/health`` needs no
token. The run store is read on worker threads, never on the event loop.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional
from urllib.parse import quote

import orjson
from fastapi import FastAPI, File, Form, HTTPException, Query, Request, UploadFile
from fastapi.responses import JSONResponse, RedirectResponse, Response, StreamingResponse

from ..__about__ import __version__
from ..core.redact import redact_obj
from ..engine.consumers import RunConsumer
from ..errors import AgentevalsError, RunNotFoundError
from ..results import CaseResult, RunResult
from . import compat_011, operations
from ._csrf import CsrfCheck, CsrfTokens
from ._guard import HostPolicy, RequestGuard
from ._input import install_input_guards, one_line, parse_credential_refs, parse_run_options, refuse_long_ref
from ._limits import check_token, error_body
from ._sources import SourceHosts, SourceRefused
from ._trust import code_in_config
from .continuous import ContinuousState
from .judge_usage import judges_json
from .sessions import SessionAssembler
from .store import SessionStore

if TYPE_CHECKING:
    from ..store import RunStore

__all__ = ["ApiContext", "Uploads", "api_app", "ok", "refuse_code", "start_evaluation", "stream_events", "upload_names"]


class ApiContext:
    """What the API serves: the live parts and the limits."""

    def __init__(self, *, assembler: SessionAssembler, store: SessionStore, token: Optional[str] = None,
                 max_upload: int = 10 * 2**20, otlp: Optional[dict[str, Any]] = None,
                 settings: Any = None, ui: bool = True, runs: Optional[RunStore] = None,
                 policy: Optional[HostPolicy] = None, allow_code: bool = False,
                 source_hosts: Optional[SourceHosts] = None, continuous: Optional[ContinuousState] = None,
                 live_run: Optional[str] = None) -> None:
        self.assembler = assembler
        self.store = store
        self.runs = runs
        """The run store (``--store``; the one ``run`` writes), or None with ``--no-store``."""
        self.live_run = live_run
        """The id of this server's live run in ``runs`` (where each evaluated session is a case), or None."""
        self.token = token
        self.max_upload = max_upload
        self.otlp = otlp or {}
        self.settings = settings
        self.ui = ui
        self.policy = policy or HostPolicy()
        """Host names and origins this server answers to (``serve --host``, ``--allowed-host``)."""
        self.allow_code = allow_code
        """``serve --allow-code-evaluators``: uploaded configs may name evaluators that run code."""
        self.csrf = CsrfTokens()
        self.source_hosts = source_hosts or SourceHosts()
        """``serve --allow-source-host``: the hosts the ``sources`` field's URIs may name (none: refused)."""
        self.continuous = continuous if continuous is not None else ContinuousState()
        """Pulled sources, skip counters, rolling outcomes and alerts (``continuous``)."""


_UPLOAD_PATH = re.compile(re.escape(tempfile.gettempdir()) + r"/agentevals-upload-[^/\s]+/(?:\d{3}/)?")


def upload_names(value: Any) -> Any:
    """``value`` with the server's temporary upload paths cut to the uploaded file names."""
    if isinstance(value, str):
        return _UPLOAD_PATH.sub("", value)
    if isinstance(value, list):
        return [upload_names(v) for v in value]
    if isinstance(value, dict):
        return {k: upload_names(v) for k, v in value.items()}
    return value


def refuse_code(kwargs: dict[str, Any], *, allow_code: bool) -> Optional[str]:
    """Why the uploaded config of ``kwargs`` (``Uploads.run_options``) may not run here, uploaded file names in
    place of server paths, or None: a config from the network runs no code without ``--allow-code-evaluators``
    (the API and the upload page answer 403 with it)::

        refusal = refuse_code(kwargs, allow_code=ctx.allow_code)
    """
    config = kwargs.get("config")
    if allow_code or config is None:
        return None
    refusal = code_in_config(config, credential_refs=bool(kwargs.get("credential_refs")))
    return upload_names(refusal) if refusal else None


def ok(data: Any) -> dict[str, Any]:
    """The API's envelope. Trace text is the agent's: keys and tokens in it (and in stored runs, results,
    session records) are redacted here, on every route, as in every report (``agentevals.core.redact``)."""
    return {"data": redact_obj(upload_names(data)), "error": None}


def api_app(ctx: ApiContext) -> FastAPI:
    """The FastAPI app (API under ``/api``); the web UI is mounted beside it by ``serve``."""
    app = FastAPI(title="agentevals", version=__version__, docs_url=None, redoc_url=None,
                  description="Evaluate agent traces; live sessions received over OTLP.")

    @app.middleware("http")
    async def guard(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        path = request.url.path
        if ctx.token and path != "/api/health":
            cookie = request.cookies.get(_COOKIE)
            allowed = check_token(ctx.token, request.headers.get("authorization")) or (
                cookie is not None and check_token(ctx.token, f"Bearer {cookie}"))
            if not allowed and not path.startswith("/api/") and check_token(ctx.token, f"Bearer {request.query_params.get('token', '')}"):
                # A browser cannot send a header: ?token=… once sets an HttpOnly cookie for the UI.
                # Always a path on this server: "//evil.example/" would be another site's address.
                response = RedirectResponse("/" + quote(path.lstrip("/\\"), safe="/:@!$&'()*+,;=-._~"),
                                            status_code=303)
                response.set_cookie(_COOKIE, ctx.token, httponly=True, samesite="strict")
                return response
            if not allowed:
                hint = "Authorization: Bearer …" if path.startswith("/api/") or path == "/openapi.json" else "open /?token=…"
                return JSONResponse(error_body(f"missing or wrong API token ({hint})"), status_code=401)
        return await call_next(request)

    # Outermost first: the Host and Origin checks, then the UI forms' CSRF token, then the token above.
    # A form's body is read whole to find its token: the upload page's files may reach the API's body limit.
    app.add_middleware(CsrfCheck, tokens=ctx.csrf, limit=max(1 << 20, ctx.max_upload * 4))
    app.add_middleware(RequestGuard, policy=ctx.policy, what="API")

    def trusted(kwargs: dict[str, Any]) -> dict[str, Any]:
        """``kwargs`` unless its config names code-running evaluators without ``--allow-code-evaluators`` (403)."""
        refusal = refuse_code(kwargs, allow_code=ctx.allow_code)
        if refusal:
            raise HTTPException(403, refusal)
        return kwargs

    @app.exception_handler(AgentevalsError)
    async def agentevals_error(request: Request, exc: AgentevalsError) -> JSONResponse:
        return JSONResponse(error_body(upload_names(str(exc))), status_code=400)

    @app.exception_handler(RunNotFoundError)
    async def run_not_found(request: Request, exc: RunNotFoundError) -> JSONResponse:
        return JSONResponse(error_body(str(exc)), status_code=404)

    async def from_runs(read: Callable[..., Any], *args: Any) -> dict[str, Any]:
        """``read(run_store, *args)`` on a worker thread, enveloped; 409 without a run store, 503 (one
        line) when the database cannot be read (locked, gone), as the web UI answers."""
        if ctx.runs is None:
            raise HTTPException(409, "this server runs with --no-store: there is no run store to read "
                                     "(restart serve without --no-store)")
        try:
            return ok(await asyncio.to_thread(read, ctx.runs, *args))
        except AgentevalsError:
            raise
        except Exception as exc:
            raise HTTPException(503, f"the run store could not be read: {type(exc).__name__}: {one_line(exc, 200)}"
                                ) from None

    # Answers carry agentevals 0.11's keys beside ours (camelCase, see compat_011); 0.11-only routes are
    # added by compat_011_http.add_compat_routes below.

    @app.get("/api/health", summary="Liveness, version and receiver counters")
    async def health() -> dict[str, Any]:
        sources = [s.as_json() for s in ctx.continuous.sources.values()]
        return ok({"status": "ok", "version": __version__, "receiver": ctx.assembler.stats(), "sources": sources,
                   "sessions": ctx.continuous.counters.as_json()})

    @app.get("/api/config", summary="Receiver endpoints, loaded eval sets and which judge API keys are set")
    async def config() -> dict[str, Any]:
        settings = ctx.settings
        api_keys = {name: bool(os.environ.get(var)) for name, var in
                    (("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY"), ("google", "GOOGLE_API_KEY"))}
        return ok({
            "otlp": {**ctx.otlp, **compat_011.otlp_ports(ctx.otlp)},
            "eval_sets": sorted(settings.eval_sets) if settings else [],
            "config": settings.config if settings else None,
            "metrics": list(settings.metrics) if settings else [],
            "api_keys": api_keys,
            "apiKeys": {**api_keys, "google": api_keys["google"] or bool(os.environ.get("GEMINI_API_KEY"))},
        })

    @app.get("/api/metrics", summary="Builtin metrics and what each needs")
    async def metrics() -> dict[str, Any]:
        # ``judges`` (beside 0.11's ``data``): judge calls, tokens, cost and budget per evaluator (serve.judge_usage)
        judges = judges_json(ctx.continuous, getattr(ctx.settings, "judge_ledger", None))
        return {**ok([compat_011.http_metric(m) for m in operations.list_metrics()]), "judges": judges}

    @app.post("/api/validate/eval-set", summary="Check an ADK eval set file")
    async def validate_eval_set(eval_set_file: UploadFile = File(...)) -> dict[str, Any]:
        with Uploads(ctx.max_upload) as up:
            path = await up.save(eval_set_file)
            return ok(compat_011.with_camel(operations.validate_eval_set(path), "eval_set_id", "num_cases"))

    @app.post("/api/convert", summary="Convert trace files to agent turns, as `run` reads them")
    async def convert(trace_files: list[UploadFile] = File(...), trace_format: Optional[str] = Form(None),
                      group_by: str = Form("trace", description="agentevals 0.11: trace, conversation or auto")) -> dict[str, Any]:
        if group_by not in ("trace", "conversation", "auto"):
            raise HTTPException(400, "group_by must be one of trace, conversation, auto")
        with Uploads(ctx.max_upload) as up:
            paths = [await up.save(f) for f in trace_files]
            converted = await asyncio.to_thread(operations.convert_files, paths, trace_format=trace_format)
            return ok(compat_011.convert_answer(converted, group_by))

    @app.post("/api/evaluate", summary="Evaluate uploaded trace files (or traces in a backend); the whole run result")
    async def evaluate(
        trace_files: Optional[list[UploadFile]] = File(None),
        eval_set_file: Optional[UploadFile] = File(None),
        config_file: Optional[UploadFile] = File(None, description="eval_config.yaml"),
        config: Optional[str] = Form(None, description='JSON options: {"metrics": [...], "threshold": 0.8, …}'),
        sources: Optional[list[str]] = Form(None, description=_SOURCES_HELP),
        credential_refs: Optional[str] = Form(None, description=_CREDENTIAL_REFS_HELP),
    ) -> dict[str, Any]:
        with Uploads(ctx.max_upload) as up:
            kwargs = trusted(await up.run_options(trace_files, eval_set_file, config_file, config,
                                                  sources=_sources(ctx, trace_files, sources),
                                                  credential_refs=credential_refs))
            run = await operations.evaluate_files_async(**kwargs)
            return ok({**run.model_dump(mode="json"), **compat_011.legacy_run(run)})

    @app.post("/api/evaluate/stream", summary="Evaluate uploaded trace files; Server-Sent Events as each case finishes",
              response_class=StreamingResponse)
    async def evaluate_stream(
        request: Request,
        trace_files: Optional[list[UploadFile]] = File(None),
        eval_set_file: Optional[UploadFile] = File(None),
        config_file: Optional[UploadFile] = File(None, description="eval_config.yaml"),
        config: Optional[str] = Form(None),
        sources: Optional[list[str]] = Form(None, description=_SOURCES_HELP),
        credential_refs: Optional[str] = Form(None, description=_CREDENTIAL_REFS_HELP),
    ) -> StreamingResponse:
        up = Uploads(ctx.max_upload).__enter__()
        try:
            kwargs = trusted(await up.run_options(trace_files, eval_set_file, config_file, config,
                                                  sources=_sources(ctx, trace_files, sources),
                                                  credential_refs=credential_refs))
            events = start_evaluation(up, kwargs)
        except BaseException:
            up.__exit__(None, None, None)
            raise
        return StreamingResponse(stream_events(events, request, up), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache"})

    @app.get("/api/sessions", summary="Live sessions, newest first (open ones first)")
    async def sessions(limit: int = 50) -> dict[str, Any]:
        open_ = ctx.assembler.open_sessions()[:limit]
        return ok([*open_, *(r.summary() for r in ctx.store.list(limit=limit))][:max(limit, 0)])

    @app.get("/api/sessions/compare", summary="Two evaluated live sessions' results per metric, with score deltas")
    async def compare_sessions(a: str, b: str) -> dict[str, Any]:
        records = []
        for session_id in (a, b):
            record = ctx.store.get(session_id)
            if record is None or record.result is None:
                raise HTTPException(404, f"no evaluated session '{session_id}' (it may still be collecting, "
                                         "or was forgotten)")
            records.append(record)
        rows = operations.compare_sessions(*records)
        return ok({"a": a, "b": b, "metrics": [
            {**row, "a": row["a"].model_dump(mode="json") if row["a"] else None,
             "b": row["b"].model_dump(mode="json") if row["b"] else None} for row in rows]})

    @app.get("/api/sessions/{session_id:path}", summary="One live session: its turns and its results")
    async def session(session_id: str) -> dict[str, Any]:
        record = ctx.store.get(session_id)
        if record is None:
            raise HTTPException(404, f"no session '{session_id}' (it may still be collecting, or was forgotten)")
        return ok({**operations.summarize(record), "record": record.model_dump(mode="json")})

    @app.get("/api/runs", summary="Runs in the run store, newest first (batch runs and serve's live run)")
    async def runs(limit: int = 20, status: Optional[list[str]] = Query(default=None),
                   before: Optional[str] = None) -> dict[str, Any]:
        """``status`` (repeatable; ours or 0.11's ``succeeded``/``cancelled``…) and ``before`` (RFC 3339: runs
        started earlier) filter as 0.11's ``GET /api/runs`` did."""
        from ..store import RUN_STATUSES

        statuses = compat_011.run_status_filter(status or [])
        if statuses is None:
            raise HTTPException(400, f"status must be among {', '.join(RUN_STATUSES)} (or 0.11's "
                                     f"{', '.join(compat_011.RUN_STATUSES_011)}), got {', '.join(status or [])}")
        if status and not statuses:  # 0.11's `queued`: this server queues nothing
            return ok([])
        stamp = None
        if before is not None:
            from ..trace_sources.pull import parse_time

            try:
                stamp = parse_time(before).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"  # the store's form
            except ValueError as exc:
                raise HTTPException(400, f"before: {exc}") from None
        answer = await from_runs(lambda store: operations.list_runs(store, max(1, min(limit, 1000)),
                                                                    statuses=statuses, before=stamp))
        return {**answer, "data": [compat_011.with_run_fields(r) for r in answer["data"]]}

    @app.get("/api/runs/compare", summary="What changed from run a (the baseline) to run b: regressions, fixes, deltas")
    async def compare(a: str, b: str = "latest") -> dict[str, Any]:
        refuse_long_ref(a)
        refuse_long_ref(b)
        return await from_runs(operations.compare_stored_runs, a, b)

    @app.get("/api/runs/{run}", summary="One stored run (id, unique prefix or latest): the `runs show -o json` document")
    async def run(run: str) -> dict[str, Any]:
        refuse_long_ref(run)
        answer = await from_runs(operations.run_document, run)
        return {**answer, "data": compat_011.with_run_fields(answer["data"])}

    @app.get("/api/metrics/{name}/trend", summary="A metric's pass rate and mean score per run, oldest first")
    async def trend(name: str, limit: int = 20) -> dict[str, Any]:
        from ..store import metric_trend

        return await from_runs(metric_trend, name, max(1, min(limit, 1000)))

    from .compat_011_http import add_compat_routes

    add_compat_routes(app, ctx, trusted=trusted)
    from .alerts import add_alert_routes

    add_alert_routes(app, ctx)
    if ctx.ui:
        from .web_ui import add_web_ui

        add_web_ui(app, ctx)
    install_input_guards(app, max_body=ctx.max_upload * 4)  # last: the outermost middleware
    return app


_COOKIE = "agentevals_token"
_SOURCES_HELP = ("Trace backend query URIs (jaeger+http://HOST:PORT?service=NAME&since=1h, …; repeatable), read "
                 "like uploaded files; only hosts given to serve --allow-source-host")
_CREDENTIAL_REFS_HELP = ('agentevals 0.11: JSON {"NAME": {"kind": "env", "name": "OPENAI_API_KEY"}, …}: secrets resolved '
                         "once for the run; a builtin LLM-judged metric's credential_ref: NAME is its judge's key")


def _sources(ctx: ApiContext, trace_files: Optional[list[UploadFile]], sources: Optional[list[str]]) -> list[str]:
    """The ``sources`` form field, checked against ``--allow-source-host`` (400, one line, when refused)."""
    wanted = [s for s in sources or [] if s.strip()]
    if not wanted and not trace_files:
        raise HTTPException(400, "give trace_files (uploads) or sources (trace backend URIs)")
    try:
        return ctx.source_hosts.check(wanted)
    except SourceRefused as exc:
        raise HTTPException(403, str(exc)) from None
    except AgentevalsError as exc:
        raise HTTPException(400, str(exc)) from None


def start_evaluation(up: Uploads, kwargs: dict[str, Any]) -> asyncio.Queue[tuple[str, Any]]:
    """Start evaluating the uploads; its events (``case``…, then ``done`` or ``error``) arrive on the queue.

    The uploads are removed when the evaluation ends, whatever happens to the response: a client that
    disconnects mid-stream (the generator is then cancelled, or never resumed) leaves nothing behind.
    """
    loop = asyncio.get_running_loop()
    events: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

    class Forward(RunConsumer):
        """Our ``case`` frames, with 0.11's progress ``message`` and ``performance_metrics`` frames around them."""

        total: Optional[int] = None

        def cases_planned(self, total: int, estimated: bool) -> None:
            if not estimated and self.total is None:
                self.total = total
                put(compat_011.progress_frame(f"Evaluating {total} trace{'s' if total != 1 else ''}..."))

        def case_finished(self, index: int, case: CaseResult) -> None:
            short = case.case_id[:12] + "..." if len(case.case_id) > 12 else case.case_id
            put(compat_011.performance_frame(case))
            put(compat_011.progress_frame(f"Trace {index + 1}/{self.total or '?'}: {short}"))
            put(("case", compat_011.stream_frame("case", {"index": index, **case.model_dump(mode="json")}, case=case)))

    def put(frame: tuple[str, Any]) -> None:
        loop.call_soon_threadsafe(events.put_nowait, frame)

    async def work() -> None:
        try:
            run: RunResult = await operations.evaluate_files_async(**kwargs, consumers=[Forward()])
            await events.put(compat_011.progress_frame("Evaluation complete"))
            await events.put(("done", compat_011.stream_frame("done", run.model_dump(mode="json"), run=run)))
        except AgentevalsError as exc:
            await events.put(("error", {"error": str(exc)}))
        except Exception as exc:
            await events.put(("error", {"error": f"internal error: {type(exc).__name__}: {one_line(exc)}"}))
        finally:
            up.__exit__(None, None, None)

    task = asyncio.create_task(work())
    _RUNNING.add(task)  # a strong reference until it ends (the event loop keeps only weak ones)
    task.add_done_callback(_RUNNING.discard)
    return events


_RUNNING: set[asyncio.Task[None]] = set()
_DISCONNECT_POLL = 1.0


async def stream_events(events: asyncio.Queue[tuple[str, Any]], request: Request, up: Uploads) -> AsyncIterator[bytes]:
    """SSE: ``event: case`` per finished case, then ``event: done`` with the run (or ``event: error``).

    A client that goes away between events is noticed within a second: its uploads are removed then (the
    evaluation, on its worker thread, runs to its end and its result is dropped).
    """
    while True:
        try:
            name, data = await asyncio.wait_for(events.get(), _DISCONNECT_POLL)
        except asyncio.TimeoutError:
            if await request.is_disconnected():
                up.__exit__(None, None, None)
                return
            continue
        yield b"event: " + name.encode() + b"\ndata: " + orjson.dumps(redact_obj(upload_names(data))) + b"\n\n"
        if name in ("done", "error"):
            break


class Uploads:
    """A temporary folder for one request's uploads; files over the limit are refused (HTTP 413)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.dir = Path(tempfile.mkdtemp(prefix="agentevals-upload-"))
        self.count = 0

    def __enter__(self) -> Uploads:
        return self

    def __exit__(self, *exc: object) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    async def save(self, upload: UploadFile) -> Path:
        """Write an upload under a safe name (its base name, after an index), counting its size."""
        self.count += 1
        name = os.path.basename((upload.filename or "upload.json").replace("\\", "/")) or "upload.json"
        path = self.dir / f"{self.count:03d}" / name
        path.parent.mkdir()
        size = 0
        with open(path, "wb") as out:
            while chunk := await upload.read(1 << 16):
                size += len(chunk)
                if size > self.limit:
                    raise HTTPException(413, f"{name}: over the {self.limit}-byte upload limit")
                out.write(chunk)
        return path

    def config_options(self, config: Any, *, config_file: bool = False) -> dict[str, Any]:
        """The ``config`` JSON object (a string, or parsed) → keyword arguments of ``operations.evaluate_files``.

        Checked by ``_input.parse_run_options`` (one line naming the key); 0.11's spelling is read too
        (``compat_011.config_options``). Evaluator entries go to a config file in the upload folder.
        """
        options = parse_run_options(config) if config else {}
        evaluators = options.pop("evaluators", None)
        if evaluators is not None:  # eval_config.yaml entries, checked by the same loader as `run -c`
            if config_file:
                raise HTTPException(400, "config: give evaluators either in 'config' or as 'config_file', not both")
            path = self.dir / "config.json"
            path.write_bytes(orjson.dumps({"evaluators": evaluators}))
            options["config"] = path
        return options

    async def run_options(self, trace_files: Optional[list[UploadFile]], eval_set_file: Optional[UploadFile],
                          config_file: Optional[UploadFile], config: Optional[str], *,
                          sources: Sequence[str] = (), credential_refs: Optional[str] = None) -> dict[str, Any]:
        """Uploads, source URIs (checked by the caller), the JSON ``config`` form field and 0.11's
        ``credential_refs`` form field → keyword arguments of ``operations.evaluate_files``."""
        options = self.config_options(config, config_file=config_file is not None and bool(config_file.filename))
        refs = parse_credential_refs(credential_refs)
        if refs is not None:
            options["credential_refs"] = refs
        kwargs: dict[str, Any] = {"paths": [*[await self.save(f) for f in trace_files or []], *sources], **options}
        if eval_set_file is not None and eval_set_file.filename:
            kwargs["eval_set"] = await self.save(eval_set_file)
        if config_file is not None and config_file.filename:
            kwargs["config"] = await self.save(config_file)
        return kwargs


