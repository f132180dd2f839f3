"""The upload page of the web UI: evaluate a trace file from the browser, as ``agentevals run`` would.

    GET  /upload     the form: trace files (Jaeger JSON, OTLP JSON: what ``run`` reads), an optional eval set,
                     builtin metrics, a threshold, an optional eval_config.yaml
    POST /upload     multipart, with the CSRF field: runs the evaluation through the engine ``/api/evaluate``
                     uses (``operations.evaluate_files`` on a worker thread, under ``UPLOAD_DEADLINE``), records
                     it as a run in the run store and redirects (303) to ``/runs/{run_id}``; without a run store
                     (``serve --no-store``) the results are shown on the page

The limits are the API's (``Uploads``: ``serve --max-upload-mb`` per file, HTTP 413), and so is the trust
policy: a config that runs code is refused (403) unless serve runs with ``--allow-code-evaluators``
(``_trust``). A bad file or field gives the form again with one line naming it (400), never a traceback;
a trace file that yields no case records no run.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from fastapi import FastAPI, File, Form, HTTPException, Request, UploadFile
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from ..engine.consumers import RunConsumer
from ..errors import AgentevalsError
from ..results import CaseResult, RunResult, case_status
from . import operations
from ._input import one_line
from ._trust import FLAG
from .http_api import Uploads, refuse_code, upload_names

if TYPE_CHECKING:
    from ..store import RunStore, StoreConsumer

__all__ = ["UPLOAD_DEADLINE", "add_upload_pages"]

log = logging.getLogger(__name__)

UPLOAD_DEADLINE = 600.0
"""Seconds the page waits for an evaluation; a run still going then goes on, recorded in the run store."""
_RUNNING: set[asyncio.Task[Any]] = set()
"""Evaluations past their deadline (the event loop keeps only weak references to tasks)."""


class UploadError(Exception):
    """The form again, with ``message`` (one line) and an HTTP status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def add_upload_pages(app: FastAPI, ctx: Any, page: Any) -> None:
    """Add ``/upload`` (``ctx`` is the API's ``ApiContext``, ``page`` renders a template)."""

    def form(request: Request, status: int = 200, *, error: str = "", chosen: Optional[dict[str, Any]] = None,
             run: Optional[RunResult] = None) -> HTMLResponse:
        chosen = chosen or {}
        return page("upload.html", request, status, error=error, metrics=operations.list_metrics(),
                    chosen_metrics=chosen.get("metrics") or [], threshold=chosen.get("threshold") or "",
                    max_mb=f"{ctx.max_upload / 2**20:g}", allow_code=ctx.allow_code, flag=FLAG,
                    stored=ctx.runs is not None, run=run, rows=_rows(run) if run else [],
                    input_errors=[upload_names(e.error) for e in run.input_errors] if run else [])

    @app.get("/upload", include_in_schema=False)
    async def upload_form(request: Request) -> HTMLResponse:
        return form(request)

    @app.post("/upload", include_in_schema=False)
    async def upload(request: Request, trace_files: Optional[list[UploadFile]] = File(None),
                     eval_set_file: Optional[UploadFile] = File(None), config_file: Optional[UploadFile] = File(None),
                     metrics: list[str] = Form([]), threshold: str = Form("")) -> Response:
        chosen = {"metrics": metrics, "threshold": threshold}
        up = Uploads(ctx.max_upload)
        try:
            kwargs = await _options(up, ctx, trace_files or [], eval_set_file, config_file, metrics, threshold)
        except UploadError as exc:
            up.__exit__(None, None, None)
            return form(request, exc.status, error=upload_names(str(exc)), chosen=chosen)
        try:  # from here the evaluation owns the uploads: it removes them when it ends, also past the deadline
            run_id, run = await _evaluate(up, ctx.runs, kwargs)
        except UploadError as exc:
            return form(request, exc.status, error=upload_names(str(exc)), chosen=chosen)
        if run_id is not None:
            root = str(request.scope.get("root_path", "")).rstrip("/")
            return RedirectResponse(f"{root}/runs/{run_id}", status_code=303)
        return form(request, chosen=chosen, run=run)


async def _options(up: Uploads, ctx: Any, trace_files: list[UploadFile], eval_set_file: Optional[UploadFile],
                   config_file: Optional[UploadFile], metrics: list[str], threshold: str) -> dict[str, Any]:
    """The form → keyword arguments of ``operations.evaluate_files``; ``UploadError`` names the bad field."""
    trace_files = [f for f in trace_files if f.filename]
    if not trace_files:
        raise UploadError(400, "trace files: choose a trace file (Jaeger JSON or OTLP JSON)")
    kwargs: dict[str, Any] = {"metrics": [m for m in metrics if m.strip()]}
    if threshold.strip():
        try:
            value = float(threshold)
        except ValueError:
            value = -1.0
        if not 0.0 <= value <= 1.0:
            raise UploadError(400, f"threshold: {one_line(threshold, 40)!r} is not a number between 0 and 1")
        kwargs["threshold"] = value
    try:  # the API's uploads: the same files, limits and names
        kwargs.update(await up.run_options(trace_files, eval_set_file, config_file, None))
    except HTTPException as exc:  # over the upload limit (413), naming the file
        raise UploadError(exc.status_code, str(exc.detail)) from None
    refusal = refuse_code(kwargs, allow_code=ctx.allow_code)  # the API's policy: a network config runs no code
    if refusal:
        raise UploadError(403, refusal)
    return kwargs


async def _evaluate(up: Uploads, store: Optional[RunStore], kwargs: dict[str, Any]) -> tuple[Optional[str], RunResult]:
    """Run the evaluation on a worker thread, recorded in ``store`` when there is one: (run id or None, run).
    The uploads are removed when the evaluation ends, also when it outlives the page's deadline."""
    try:
        recorder = _Recorder(store, kwargs) if store is not None else None
    except BaseException:
        up.__exit__(None, None, None)
        raise

    async def work() -> RunResult:
        try:
            return await operations.evaluate_files_async(**kwargs, consumers=[recorder] if recorder else [])
        finally:
            up.__exit__(None, None, None)

    task = asyncio.create_task(work())
    _RUNNING.add(task)
    task.add_done_callback(_RUNNING.discard)
    try:
        run = await asyncio.wait_for(asyncio.shield(task), UPLOAD_DEADLINE)
    except asyncio.TimeoutError:
        task.add_done_callback(_log_late_failure)  # nobody awaits it now: say how it ended, in one line
        later = (f"it goes on and is recorded as run {recorder.run_id} (see Runs)" if recorder
                 else "it goes on, but without a run store its results will not be shown")
        raise UploadError(504, f"the evaluation did not finish within {UPLOAD_DEADLINE:g}s: {later}") from None
    except AgentevalsError as exc:  # a bad eval set, config, metric name: one line naming it
        raise UploadError(400, str(exc)) from None
    except Exception as exc:
        log.warning("web UI upload: %s: %s", type(exc).__name__, one_line(exc))
        raise UploadError(500, f"internal error: {type(exc).__name__}: {one_line(exc)}") from None
    if not run.cases:  # nothing readable: the form again, and no run recorded
        errors = [e.error if Path(e.source).name in e.error else f"{Path(e.source).name}: {e.error}"
                  for e in run.input_errors]
        raise UploadError(400, errors[0] if errors else "trace files: no trace in them (Jaeger or OTLP JSON?)")
    if recorder is not None and recorder.failure:
        raise UploadError(503, f"the run store could not record the run: {recorder.failure}")
    return (recorder.run_id if recorder else None), run


def _log_late_failure(task: asyncio.Task[Any]) -> None:
    """Log, in one line, an evaluation that failed after its page's deadline (retrieving the exception, so
    asyncio does not report "Task exception was never retrieved" with a traceback)."""
    if task.cancelled():
        return
    exc = task.exception()
    if exc is not None:
        log.warning("web UI upload past its deadline failed: %s: %s", type(exc).__name__, one_line(exc))


class _Recorder(RunConsumer):
    """The run store's ``StoreConsumer``, begun at the first case (a file with no trace records no run), with the
    server's temporary upload paths cut to the file names before anything is stored."""

    def __init__(self, store: RunStore, kwargs: dict[str, Any]) -> None:
        from ..store import StoreConsumer, new_run_id
        from ..store._recording import run_meta

        self.run_id = new_run_id()
        names: dict[str, str] = {key: Path(kwargs[key]).name for key in ("eval_set", "config") if key in kwargs}
        # What `runs list` shows for this run: the command line that would do the same from a shell.
        words = ["agentevals serve: upload", *(Path(p).name for p in kwargs["paths"])]
        words += [f"{flag} {names[key]}" for key, flag in (("eval_set", "-e"), ("config", "-c")) if key in names]
        words += [f"-m {m}" for m in kwargs.get("metrics", [])]
        if "threshold" in kwargs:
            words.append(f"-t {kwargs['threshold']:g}")
        command = " ".join(words)
        meta = run_meta(options={"upload": True, "metrics": kwargs.get("metrics", []), **names},
                        config_path=kwargs.get("config"), eval_set_path=kwargs.get("eval_set"))
        self.inner: StoreConsumer = StoreConsumer(store, self.run_id, meta={**meta, "command": command})
        self.run: Optional[RunResult] = None
        self.begun = False

    @property
    def failure(self) -> Optional[str]:
        return self.inner.failure

    def run_started(self, run: RunResult) -> None:
        self.run = run

    def case_finished(self, index: int, case: CaseResult) -> None:
        if not self.begun and self.run is not None:
            self.begun = True
            self.inner.run_started(self.run)
        case.sources = upload_names(case.sources)
        self.inner.case_finished(index, case)

    def run_finished(self, run: RunResult) -> None:
        if self.begun:
            for error in run.input_errors:
                error.source, error.error = upload_names(error.source), upload_names(error.error)
            self.inner.run_finished(run)


def _rows(run: RunResult) -> list[dict[str, Any]]:
    """The results shown on the page without a run store: each case with its status and result rows."""
    from ..report._format import reason_lines

    return [{"case": case, "status": case_status(case).value, "sources": upload_names(case.sources),
             "why": [(name, "\n".join(lines)) for name, lines in ((m.name, reason_lines(m)) for m in case.metrics)
                     if lines]}
            for case in run.cases]
