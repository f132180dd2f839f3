"""Malformed requests to ``serve``: one-line 4xx answers, body limits enforced while reading, no tracebacks.

    app = FastAPI()
    ...                                      # routes, other middleware
    install_input_guards(app, max_body=40 * 2**20)   # last: its middleware must be the outermost

- A request that does not fit a route's parameters (a query parameter that is not an integer, a form
  field of the wrong kind, a multipart body that does not parse) gets 400 and
  ``{"data": null, "error": "<one line naming the field>"}`` instead of FastAPI's 422 list.
- The request body is counted as it arrives, so a chunked upload (no ``Content-Length``) is refused with
  413 as soon as it passes ``max_body``: at most ``max_body`` bytes are ever read or spooled to disk.
- Anything else that escapes a route is answered 500 with one line, and the log gets one line, never a
  traceback (a 5xx is a bug to fix: the API fuzz test fails on it).
"""

from __future__ import annotations

import logging
import re
from typing import Any, Optional, Union

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ._limits import error_body

__all__ = ["MAX_REF", "InputLimits", "RunOptionsForm", "check_mcp_session", "install_input_guards", "one_line",
           "parse_run_options", "refuse_long_ref"]

log = logging.getLogger("agentevals.serve")

MAX_REF = 200
"""Longest run reference (id, prefix, ``latest``) the API looks up: run ids are a few dozen characters."""

_WHERE = {"query": "query parameter", "path": "path parameter", "body": "form field", "header": "header",
          "cookie": "cookie"}


def one_line(text: object, limit: int = 300) -> str:
    """``text`` on one line, cut to ``limit`` characters (what a log line or an error message may hold)."""
    flat = re.sub(r"\s+", " ", str(text)).strip()
    return flat if len(flat) <= limit else flat[:limit - 1] + "…"


def _shown(value: Any) -> str:
    return one_line(repr(value), 60)


def validation_message(errors: list[Any]) -> str:
    """FastAPI/pydantic validation errors as one line naming the first bad field (and how many more)."""
    if not errors:
        return "invalid request"
    first = errors[0]
    loc = [str(part) for part in first.get("loc", ())]
    if loc and loc[0] in _WHERE:
        where, field = _WHERE[loc[0]], ".".join(loc[1:2]) or loc[0]
    else:
        where, field = "field", ".".join(loc) or "?"
    text = f"{where} '{field}': {first.get('msg', 'invalid')}"
    if first.get("type") not in ("missing",) and "input" in first:
        text += f" (got {_shown(first['input'])})"
    if len(errors) > 1:
        text += f" (and {len(errors) - 1} more error{'s' if len(errors) > 2 else ''})"
    return one_line(text)


class RunOptionsForm(BaseModel):
    """The JSON ``config`` form field of ``/api/evaluate`` (camelCase keys are accepted, as in 0.11)."""

    model_config = ConfigDict(extra="forbid")

    metrics: Optional[list[str]] = None
    """Builtin metric names."""
    evaluators: Optional[list[Any]] = None
    """``eval_config.yaml`` evaluator entries (checked by the config loader, as for ``run -c``)."""
    threshold: Optional[float] = None
    trajectory_match_type: Optional[str] = None
    judge_model: Optional[str] = None
    group_by: Optional[str] = None
    strict: Optional[bool] = None
    repeat_key: Optional[str] = None
    pass_at_k: Optional[Union[int, list[int]]] = None
    trace_format: Optional[str] = None
    concurrency: Optional[int] = None
    """Evaluations in flight (0.11's ``maxConcurrentEvals``)."""
    since: Optional[str] = None
    """Window of the ``sources`` whose URI names none: a duration (``2h``) or an RFC 3339 time (``run --since``)."""


def parse_run_options(config: Any) -> dict[str, Any]:
    """The ``config`` form field → keyword arguments of ``prepare_run`` (only those given).

    Raises ``HTTPException(400)`` with one line naming the key: not JSON, not an object, an unknown key,
    or a value of the wrong type (``{"metrics": 5}``).
    """
    from fastapi import HTTPException

    from .compat_011 import config_options

    raw = config
    if isinstance(raw, (str, bytes)):
        try:
            raw = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise HTTPException(400, f"config: not JSON: {exc}") from None
    if not isinstance(raw, dict):
        raise HTTPException(400, "config: expected a JSON object")
    raw = config_options(raw)  # 0.11's spelling: camelCase keys and entries, maxConcurrent*
    known = sorted(RunOptionsForm.model_fields)
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise HTTPException(400, f"config: unknown key(s) {', '.join(unknown)}; known: {', '.join(known)}")
    try:
        options = RunOptionsForm.model_validate(raw)
    except ValidationError as exc:
        raise HTTPException(400, "config: " + validation_message(list(exc.errors(include_url=False)))) from None
    values = options.model_dump(exclude_none=True)
    if isinstance(values.get("pass_at_k"), int):
        values["pass_at_k"] = [values["pass_at_k"]]
    return values


def parse_credential_refs(raw: Any, *, label: str = "credential_refs") -> Optional[dict[str, dict[str, Any]]]:
    """agentevals-cli 0.11's ``credential_refs`` form field (a JSON object as a string) or ``credentialRefs``
    body key (the object) → ``prepare_run``'s ``credential_refs``; None when absent or empty (0.11: no
    credentials). ``HTTPException(400)``, one line, when it is not JSON or not a map of reference objects."""
    from fastapi import HTTPException

    from ..core.secrets import check_credential_refs
    from ..errors import ConfigError

    if raw is None or raw == "":
        return None
    if isinstance(raw, (str, bytes)):
        try:
            raw = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise HTTPException(400, f"{label}: not JSON: {exc}") from None
    try:
        return check_credential_refs(raw, label=label) or None
    except ConfigError as exc:
        raise HTTPException(400, str(exc)) from None


def refuse_long_ref(ref: str) -> None:
    """Raise ``RunNotFoundError`` for a run reference no run can have (too long to be an id or a prefix),
    before the store is asked: the answer is the API's 404 with one line."""
    from ..errors import RunNotFoundError

    if len(ref) > MAX_REF:
        raise RunNotFoundError(f"no run {one_line(ref, 40)!r} ({len(ref)} characters: longer than any run id; "
                               "see 'agentevals runs list')")


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse(error_body(one_line(message)), status_code=status)


def install_input_guards(app: FastAPI, *, max_body: int) -> None:
    """One-line 400s for malformed requests, the streamed body limit and the last-resort catch on ``app``.

    Call it after every other ``add_middleware``/``@app.middleware``: its middleware must be the outermost
    so it also catches what the others raise.
    """

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(400, validation_message(list(exc.errors())))

    @app.exception_handler(ValidationError)
    async def invalid_value(request: Request, exc: ValidationError) -> JSONResponse:
        # A value from the request that a model of the engine refused (e.g. a metric name that is a number).
        return _error(400, validation_message(list(exc.errors(include_url=False))))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        # Starlette's own (an unparsable multipart body, 404, 405) as well as ours: one envelope for all.
        response = _error(exc.status_code, str(exc.detail))
        response.headers.update(exc.headers or {})
        return response

    app.add_middleware(InputLimits, max_body=max_body)


class InputLimits:
    """ASGI middleware: the request body limit (declared or streamed) and the one-line last resort."""

    def __init__(self, app: ASGIApp, *, max_body: int) -> None:
        self.app = app
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or ()).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.max_body:
            await _send_json(send, 413, f"request body of {int(declared)} bytes is over the {self.max_body}-byte "
                                        "limit (serve --max-upload-mb)")
            return
        state = {"received": 0, "refused": False, "started": False}

        async def counted_receive() -> Message:
            if state["refused"]:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                state["received"] += len(message.get("body", b""))
                if state["received"] > self.max_body:
                    # Answer now, while the client is still sending; the route sees a disconnect and stops
                    # reading, so no more than the limit is ever read (or spooled to a temporary file).
                    state["refused"] = True
                    if not state["started"]:
                        state["started"] = True
                        await _send_json(send, 413, f"request body is over the {self.max_body}-byte limit "
                                                    "(serve --max-upload-mb; chunked uploads count too)")
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: Message) -> None:
            if state["refused"]:
                return  # the 413 went out already: what the route answers to the "disconnect" is dropped
            if message["type"] == "http.response.start":
                state["started"] = True
            await send(message)

        try:
            await self.app(scope, counted_receive, guarded_send)
        except (ClientDisconnect, OSError):
            pass  # the client went away (or was refused): nobody is left to answer
        except Exception as exc:
            log.error("%s %s: internal error: %s: %s", scope.get("method", "?"), one_line(scope.get("path", "?"), 120),
                      type(exc).__name__, one_line(exc))
            if not state["started"] and not state["refused"]:
                await _send_json(send, 500, f"internal error: {type(exc).__name__}: {one_line(exc, 200)}")


async def _send_json(send: Send, status: int, message: str) -> None:
    body = orjson.dumps(error_body(one_line(message)))
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


_SESSION_ID = re.compile(r"[\x21-\x7e]{1,128}")


def check_mcp_session(app: ASGIApp) -> ASGIApp:
    """The MCP (Streamable HTTP) app behind a check of the ``mcp-session-id`` header: an id longer than 128
    characters or with characters outside visible ASCII gets 400 and one JSON-RPC error line, before the
    MCP library sees it (the ids it hands out are 32 hex digits)."""

    async def checked(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            values = [v for k, v in scope.get("headers") or () if k == b"mcp-session-id"]
            if values and not all(_SESSION_ID.fullmatch(v.decode("latin-1")) for v in values):
                size = max(len(v) for v in values)
                body = orjson.dumps({"jsonrpc": "2.0", "id": None, "error": {
                    "code": -32600, "message": f"invalid mcp-session-id header ({size} bytes): expected the id "
                                               "this server handed out (1-128 visible ASCII characters)"}})
                await send({"type": "http.response.start", "status": 400,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)

    return checked
