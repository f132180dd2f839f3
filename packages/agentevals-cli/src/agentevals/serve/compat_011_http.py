"""The HTTP routes only agentevals-cli 0.11 had, at their 0.11 paths, over the current engine and stores.

    add_compat_routes(app, ctx)   # called by ``http_api.api_app``: same app, same token/guard middleware

Served (0.11's request fields, 0.11's camelCase answers in ``{"data", "error"}``):

- ``POST /api/evaluate/json`` and ``/api/evaluate/json/stream``: an OTLP/JSON document in the body;
- ``/api/streaming/*``: ``sessions``, ``create-eval-set``, ``evaluate-sessions``, ``prepare-evaluation``,
  ``download/{file}``, ``sessions/{id}/otlp``, ``get-trace``. A session keeps its turns, not its spans,
  so its OTLP document is rebuilt from the turns (GenAI spans that ``run`` reads back as the same turns);
- ``GET /api/runs/{id}/results``: the stored run's rows as 0.11's ``Result`` records;
- ``GET /stream/ui-updates``: Server-Sent Events, each current session (``upsert``), ``synced``, then
  each change, polled once a second.

Gone, ``410`` with one line naming the replacement: ``/api/debug/*`` (the UI's debug bundle),
``POST /api/runs`` and ``POST /api/runs/{id}/cancel`` (0.11's Postgres run queue).
"""

from __future__ import annotations

import asyncio
import atexit
import hashlib
import json
import re
import shutil
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import orjson
from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import FileResponse, JSONResponse, StreamingResponse

from ..core._names import snake_case
from . import compat_011, operations
from ._input import parse_credential_refs
from ._limits import error_body

if TYPE_CHECKING:
    from .http_api import ApiContext
    from .store import SessionRecord

__all__ = ["add_compat_routes", "eval_set_from_record", "session_document"]

_GONE = {
    "/api/debug/bundle": "the debug bundle is gone: attach `agentevals --version` and the serve log to your report",
    "/api/debug/load": "the debug bundle is gone: load traces with POST /api/evaluate or `agentevals run`",
    "/api/runs": "the Postgres run queue is gone: evaluate with POST /api/evaluate or `agentevals run --store URL`",
    "/api/runs/{run_id}/cancel": "the Postgres run queue is gone: stop `agentevals run` with Ctrl-C (SIGINT) instead",
}
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]")


def eval_set_from_record(record: SessionRecord, eval_set_id: str) -> dict[str, Any]:
    """0.11's ``eval_set_from_turns``: a one-case ADK eval set (case ``case_1``) of the session's turns."""
    return {"eval_set_id": eval_set_id,
            "eval_cases": [{"eval_id": "case_1", "conversation": [compat_011.adk_invocation(i) for i in record.invocations]}]}


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value if isinstance(value, str) else json.dumps(value)}}


def session_document(record: SessionRecord) -> dict[str, Any]:
    """The session as one OTLP/JSON document (``resourceSpans``, ``resourceLogs``), rebuilt from its turns:
    an ``agentevals.session`` root span, one ``invoke_agent`` span per turn with its messages, one
    ``execute_tool`` span per tool call. Every resource carries ``agentevals.session_name`` (as 0.11's did),
    so ``agentevals run`` reads it back as one conversation with the same turns."""
    trace_id = hashlib.sha256(record.session_id.encode()).hexdigest()[:32]
    ids = (hashlib.sha256(f"{record.session_id}/{n}".encode()).hexdigest()[:16] for n in range(1 << 30))
    start = int(record.received_at * 1e9)
    root = next(ids)
    spans: list[dict[str, Any]] = []
    tick = start

    def span(name: str, parent: Optional[str], attrs: dict[str, Any], begin: int, end: int) -> str:
        span_id = next(ids)
        spans.append({"traceId": trace_id, "spanId": span_id, **({"parentSpanId": parent} if parent else {}),
                      "name": name, "kind": 1, "startTimeUnixNano": str(begin), "endTimeUnixNano": str(end),
                      "attributes": [_attr(k, v) for k, v in attrs.items()]})
        return span_id

    def messages(role: str, text: Optional[str]) -> str:
        return json.dumps([{"role": role, "parts": [{"type": "text", "content": text or ""}]}])

    turn_spans = []
    for inv in record.invocations:
        steps = inv.get("intermediate_steps") or {}
        calls, responses = steps.get("tool_calls") or [], steps.get("tool_responses") or []
        begin, tick = tick, tick + 1000 * (len(calls) + 2)
        attrs = {"gen_ai.operation.name": "invoke_agent", "gen_ai.input.messages": messages("user", inv.get("user_content"))}
        if inv.get("final_response") is not None:
            attrs["gen_ai.output.messages"] = messages("assistant", inv["final_response"])
        turn_spans.append((attrs, begin, tick, calls, responses))
    spans.append({"traceId": trace_id, "spanId": root, "name": "agentevals.session", "kind": 1,
                  "startTimeUnixNano": str(start), "endTimeUnixNano": str(tick + 1),
                  "attributes": [_attr("gen_ai.conversation.id", record.session_id),
                                 _attr("agentevals.session.complete", True),
                                 *([_attr("agentevals.eval_set_id", record.eval_set_id)] if record.eval_set_id else [])]})
    for attrs, begin, end, calls, responses in turn_spans:
        turn = span("invoke_agent agent", root, attrs, begin, end)
        for n, call in enumerate(calls):
            result = next((r for r in responses if r.get("id") and r.get("id") == call.get("id")), None)
            if result is None and n < len(responses):
                result = responses[n]
            tool_attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.get("name") or "",
                          "gen_ai.tool.call.arguments": json.dumps(call.get("args") or {})}
            if call.get("id"):
                tool_attrs["gen_ai.tool.call.id"] = call["id"]
            if result is not None:
                value = result.get("output", result.get("response"))
                tool_attrs["gen_ai.tool.call.result"] = value if isinstance(value, str) else json.dumps(value)
            span(f"execute_tool {call.get('name')}", turn, tool_attrs, begin + 1000 * (n + 1), begin + 1000 * (n + 2) - 1)
    resource = {"attributes": [_attr("service.name", "agent"), _attr("agentevals.session_name", record.session_id)]}
    return {"resourceSpans": [{"resource": resource, "scopeSpans": [{"scope": {"name": "agentevals"}, "spans": spans}]}],
            "resourceLogs": []}


def _session_info(entry: dict[str, Any], record: Optional[SessionRecord]) -> dict[str, Any]:
    """0.11's ``SessionInfo`` (camelCase) for one of our session summaries."""
    return {"sessionId": entry["session_id"],
            "traceId": (record.trace_ids[0] if record and record.trace_ids else entry["session_id"]),
            "evalSetId": entry.get("eval_set_id"), "spanCount": entry.get("span_count") or 0,
            "isComplete": entry.get("status") != "collecting",
            "startedAt": compat_011._iso(entry.get("received_at") or time.time()), "metadata": {}}


def _legacy_result(run_id: str, case: dict[str, Any], metric: dict[str, Any], created: str) -> dict[str, Any]:
    """0.11's ``Result`` record (snake_case, as its run routes answered) for one row of a stored run."""
    item = case.get("eval_id") or case["case_id"]
    status = {"PASSED": "passed", "FAILED": "failed", "ERROR": "errored"}.get(metric["status"], "skipped")
    kind = metric.get("type") if metric.get("type") in ("builtin", "remote") else "code"
    payload = f"{str(run_id).lower()}|{item}|{metric['name']}".encode()
    return {"result_id": hashlib.sha256(payload).hexdigest(), "run_id": run_id, "eval_set_item_id": item,
            "eval_set_item_name": item, "evaluator_name": metric["name"], "evaluator_type": kind, "status": status,
            "score": metric.get("score"), "per_invocation_scores": metric.get("per_invocation_scores") or [],
            "trace_id": (case.get("trace_ids") or [None])[0], "span_id": None, "details": metric.get("details") or {},
            "error_text": metric.get("error"), "tokens_used": None,
            "latency_ms": int(metric["duration_ms"]) if metric.get("duration_ms") is not None else None,
            "created_at": created}


def _as_is(kwargs: dict[str, Any]) -> dict[str, Any]:
    return kwargs


def add_compat_routes(app: FastAPI, ctx: ApiContext, *,
                      trusted: Callable[[dict[str, Any]], dict[str, Any]] = _as_is) -> None:
    """Add 0.11's routes that we no longer have under another name (see the module docstring).

    ``trusted`` is the API's own check of an evaluation's keyword arguments (``serve`` refuses uploaded
    configs that run code unless ``--allow-code-evaluators``): every evaluation these routes start goes
    through it, as ``/api/evaluate``'s do.
    """
    from .http_api import Uploads, ok, start_evaluation, stream_events

    def gone(path: str, method: str) -> None:
        async def answer() -> JSONResponse:
            return JSONResponse(error_body(f"{method} {path}: 410 Gone: {_GONE[path]}"), status_code=410)

        app.add_api_route(path, answer, methods=[method], include_in_schema=True, status_code=410,
                          summary=f"agentevals 0.11 only: gone ({_GONE[path]})")

    exports: list[Path] = []  # this process's own folder (mkdtemp: never a path another user prepared)

    def export_dir() -> Path:
        if not exports:
            exports.append(Path(tempfile.mkdtemp(prefix="agentevals-exports-")))
            atexit.register(shutil.rmtree, exports[0], True)  # removed when serve exits
        return exports[0]

    gone("/api/debug/bundle", "POST")
    gone("/api/debug/load", "POST")
    gone("/api/runs", "POST")
    gone("/api/runs/{run_id}/cancel", "POST")

    async def json_body(request: Request) -> dict[str, Any]:
        """The JSON object in the body, read up to the API's body limit (a chunked body too)."""
        limit, chunks, size = ctx.max_upload * 4, [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise HTTPException(413, f"request body over {limit} bytes")
            chunks.append(chunk)
        try:
            body = orjson.loads(b"".join(chunks))
        except orjson.JSONDecodeError as exc:
            raise HTTPException(400, f"request body: not JSON: {exc}") from None
        if not isinstance(body, dict):
            raise HTTPException(400, "request body: expected a JSON object")
        return body

    def fields(body: dict[str, Any], route: str, known: set[str], required: AbstractSet[str] = frozenset()) -> dict[str, Any]:
        """0.11's request fields (either spelling), unknown ones refused in one line."""
        out = {snake_case(k): v for k, v in body.items()}
        unknown = sorted(set(out) - known)
        if unknown:
            raise HTTPException(400, f"{route}: unknown field(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        missing = sorted(required - set(out))
        if missing:
            raise HTTPException(400, f"{route}: missing field(s) {', '.join(missing)}")
        for name, value in out.items():
            if name.endswith("_id") and not isinstance(value, str):
                raise HTTPException(400, f"{route}: {name}: expected a string")
            if name.endswith("_ids") and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
                raise HTTPException(400, f"{route}: {name}: expected a list of strings")
        return out

    async def json_run_options(request: Request, up: Uploads) -> dict[str, Any]:
        """``{traces, config, evalSet, credentialRefs}`` → ``evaluate_files`` keyword arguments."""
        body = fields(await json_body(request), "evaluate/json", {"traces", "config", "eval_set", "credential_refs"},
                      {"traces"})
        if not isinstance(body["traces"], dict) or not body["traces"].get("resourceSpans"):
            raise HTTPException(400, "traces: expected an OTLP/JSON export with resourceSpans")
        options = up.config_options(body.get("config") or None)
        refs = parse_credential_refs(body.get("credential_refs"), label="credentialRefs")
        if refs is not None:
            options["credential_refs"] = refs
        traces = up.dir / "traces.json"
        traces.write_bytes(orjson.dumps(body["traces"]))
        kwargs: dict[str, Any] = {"paths": [traces], **options}
        if body.get("eval_set") is not None:
            if not isinstance(body["eval_set"], dict):
                raise HTTPException(400, "evalSet: expected an ADK eval set object")
            path = up.dir / "eval_set.json"
            path.write_bytes(orjson.dumps(body["eval_set"]))
            kwargs["eval_set"] = path
        return kwargs

    @app.post("/api/evaluate/json", summary="agentevals 0.11: evaluate an OTLP/JSON document sent in the body")
    async def evaluate_json(request: Request) -> dict[str, Any]:
        with Uploads(ctx.max_upload * 4) as up:
            run = await operations.evaluate_files_async(**trusted(await json_run_options(request, up)))
            return ok({**run.model_dump(mode="json"), **compat_011.legacy_run(run)})

    @app.post("/api/evaluate/json/stream", summary="agentevals 0.11: /api/evaluate/json as Server-Sent Events",
              response_class=StreamingResponse)
    async def evaluate_json_stream(request: Request) -> StreamingResponse:
        up = Uploads(ctx.max_upload * 4).__enter__()
        try:
            kwargs = trusted(await json_run_options(request, up))
        except BaseException:
            up.__exit__(None, None, None)
            raise
        return StreamingResponse(stream_events(start_evaluation(up, kwargs), request, up),
                                 media_type="text/event-stream", headers={"Cache-Control": "no-cache"})

    def record_of(session_id: str) -> SessionRecord:
        record = ctx.store.get(session_id)
        if record is None:
            raise HTTPException(404, "Session not found")
        return record

    @app.get("/api/streaming/sessions", summary="agentevals 0.11: live sessions as SessionInfo (camelCase)")
    async def streaming_sessions() -> dict[str, Any]:
        entries = [*ctx.assembler.open_sessions(), *(r.summary() for r in ctx.store.list(limit=1000))]
        return ok([_session_info(e, ctx.store.get(e["session_id"])) for e in entries])

    @app.post("/api/streaming/create-eval-set", summary="agentevals 0.11: a session's turns as an ADK eval set")
    async def create_eval_set(request: Request) -> dict[str, Any]:
        body = fields(await json_body(request), "create-eval-set", {"session_id", "eval_set_id"},
                      {"session_id", "eval_set_id"})
        record = record_of(body["session_id"])
        if not record.invocations:
            raise HTTPException(400, "No turns found in session")
        return ok({"evalSet": _redacted(eval_set_from_record(record, body["eval_set_id"])),
                    "numInvocations": len(record.invocations)})

    @app.post("/api/streaming/evaluate-sessions",
              summary="agentevals 0.11: every evaluated session against a golden one")
    async def evaluate_sessions(request: Request) -> dict[str, Any]:
        body = fields(await json_body(request), "evaluate-sessions", {"golden_session_id", "eval_set_id", "evaluators"},
                      {"golden_session_id", "eval_set_id"})
        golden = ctx.store.get(body["golden_session_id"])
        if golden is None:
            raise HTTPException(404, "Golden session not found")
        records = [r for r in ctx.store.list(limit=1000) if r.status == "evaluated"][::-1]  # 0.11: golden included
        with Uploads(ctx.max_upload) as up:
            options = trusted(up.config_options({"evaluators": body["evaluators"]} if body.get("evaluators") else None))
            run = await operations.evaluate_against_golden(golden, records, eval_set_id=body["eval_set_id"], **options)
        ids = [r.session_id for r in records]
        return ok({**run.model_dump(mode="json"), "goldenSessionId": golden.session_id,
                    "evalSetId": body["eval_set_id"],
                    "results": compat_011.camel_keys(compat_011.session_results(run, ids))})

    @app.post("/api/streaming/prepare-evaluation",
              summary="agentevals 0.11: write the golden eval set and the sessions' traces for download")
    async def prepare_evaluation(request: Request) -> dict[str, Any]:
        body = fields(await json_body(request), "prepare-evaluation", {"golden_session_id", "session_ids"},
                      {"golden_session_id", "session_ids"})
        golden = ctx.store.get(body["golden_session_id"])
        if golden is None:
            raise HTTPException(404, "Golden session not found")
        def write(name: str, document: dict[str, Any]) -> str:
            filename = _SAFE_NAME.sub("_", name)[:200]
            (export_dir() / filename).write_bytes(orjson.dumps(_redacted(document)))
            return f"/api/streaming/download/{filename}"

        eval_set_url = write(f"eval_set_{golden.session_id}.json",
                             eval_set_from_record(golden, f"golden_{golden.session_id}"))
        trace_urls = [write(f"agentevals_{sid}.json", session_document(r))
                      for sid in body["session_ids"] if (r := ctx.store.get(sid)) is not None]
        return ok({"evalSetUrl": eval_set_url, "traceUrls": trace_urls, "numTraces": len(trace_urls)})

    @app.get("/api/streaming/download/{filename}", summary="agentevals 0.11: a file written by prepare-evaluation")
    async def download(filename: str) -> FileResponse:
        if filename in {"", ".", ".."} or _SAFE_NAME.search(filename):
            raise HTTPException(400, "Invalid filename")
        path = export_dir() / filename
        if not path.is_file():
            raise HTTPException(404, "File not found")
        return FileResponse(path, media_type="application/json", filename=filename)

    @app.get("/api/streaming/sessions/{session_id:path}/otlp",
             summary="agentevals 0.11: a session as one OTLP/JSON document (rebuilt from its turns)")
    async def session_otlp(session_id: str) -> dict[str, Any]:
        return _redacted(session_document(record_of(session_id)))

    @app.post("/api/streaming/get-trace", summary="agentevals 0.11: a session's OTLP/JSON document as a string")
    async def get_trace(request: Request) -> dict[str, Any]:
        body = fields(await json_body(request), "get-trace", {"session_id"}, {"session_id"})
        record = record_of(body["session_id"])
        return ok({"sessionId": record.session_id, "traceContent": json.dumps(_redacted(session_document(record))),
                    "numSpans": record.span_count})

    @app.get("/api/runs/{run}/results", summary="agentevals 0.11: a stored run's rows as Result records")
    async def run_results(run: str) -> dict[str, Any]:
        if ctx.runs is None:
            raise HTTPException(409, "this server runs with --no-store: there is no run store to read "
                                     "(restart serve without --no-store)")
        document = await asyncio.to_thread(operations.run_document, ctx.runs, run)
        run_id, created = document.get("run_id") or run, document.get("started_at") or ""
        return ok([_legacy_result(run_id, c, m, created) for c in document.get("cases", []) for m in c["metrics"]])

    @app.get("/stream/ui-updates", summary="agentevals 0.11: live sessions as Server-Sent Events",
             response_class=StreamingResponse)
    async def ui_updates(request: Request) -> StreamingResponse:
        return StreamingResponse(_ui_updates(ctx, request), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache"})


def _redacted(document: dict[str, Any]) -> dict[str, Any]:
    from ..core.redact import redact_obj

    return redact_obj(document)


def _summary_frame(entry: dict[str, Any]) -> dict[str, Any]:
    """A ``WatchSessionsResponse.upsert`` (protojson) with the session's summary."""
    return {"upsert": {"summary": {"id": entry["session_id"], "evalSetId": entry.get("eval_set_id") or "",
                                   "spanCount": entry.get("span_count") or 0,
                                   "complete": entry.get("status") != "collecting",
                                   "turnCount": entry.get("invocation_count") or 0}}}


async def _ui_updates(ctx: ApiContext, request: Request, *, every: float = 1.0,
                      heartbeat: float = 15.0) -> AsyncIterator[bytes]:
    """Every current session, ``synced``, then each change (polled every ``every`` seconds); a comment
    frame after ``heartbeat`` quiet seconds keeps proxies from closing the stream (as 0.11 did)."""
    seen: dict[str, Any] = {}
    synced, quiet = False, 0.0
    while not await request.is_disconnected():
        entries = {e["session_id"]: e for e in [*ctx.assembler.open_sessions(),
                                                 *(r.summary() for r in ctx.store.list(limit=1000))]}
        sent = False
        for sid, entry in entries.items():
            frame = _summary_frame(entry)
            if seen.get(sid) != frame:
                seen[sid] = frame
                sent = True
                yield b"data: " + orjson.dumps(frame) + b"\n\n"
        for sid in [s for s in seen if s not in entries]:
            del seen[sid]
            sent = True
            yield b"data: " + orjson.dumps({"removed": {"id": sid}}) + b"\n\n"
        if not synced:
            synced = True
            yield b'data: {"synced":{}}\n\n'
        quiet = 0.0 if sent else quiet + every
        if quiet >= heartbeat:
            quiet = 0.0
            yield b": keepalive\n\n"
        await asyncio.sleep(every)
