"""OTLP/HTTP receiver (port 4318): ``POST /v1/traces`` and ``POST /v1/logs``, protobuf or JSON.

Answers as the OTLP/HTTP specification says, so any OpenTelemetry SDK or Collector can export here
unchanged: 200 with an empty export response in the request's encoding; 400 for a body that does not
decode; 413 over the size limit; 401 without the API token (when one is set); and 503 with
``Retry-After`` when the session buffer is full, which exporters retry with backoff.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ._limits import BodyTooLarge, check_token, read_body
from .otlp import OtlpDecodeError, decode_logs, decode_spans, logs_document, spans_document
from .sessions import SessionAssembler

__all__ = ["RETRY_AFTER_SECONDS", "otlp_http_app"]

RETRY_AFTER_SECONDS = 2


def otlp_http_app(assembler: SessionAssembler, *, token: str | None = None, max_body: int = 16 * 2**20) -> Starlette:
    """The ASGI app of the OTLP/HTTP receiver, feeding ``assembler``."""

    def handler(document_of: Callable, accept: Callable, response_type: type) -> Callable:
        async def endpoint(request: Request) -> Response:
            is_json = request.headers.get("content-type", "").split(";")[0].strip().lower() == "application/json"
            if not check_token(token, request.headers.get("authorization")):
                return _status(401, "missing or wrong API token (Authorization: Bearer …)", is_json)
            if not assembler.has_room(1):
                return _unavailable(is_json)
            try:
                body = await read_body(request, max_body)
                accepted = await asyncio.to_thread(_decode_and_add, body, is_json, document_of, accept)
            except BodyTooLarge as exc:
                return _status(413, str(exc), is_json)
            except (OtlpDecodeError, ValueError) as exc:
                return _status(400, str(exc), is_json)
            if not accepted:
                return _unavailable(is_json)
            if is_json:
                return Response(b"{}", media_type="application/json")
            return Response(response_type().SerializeToString(), media_type="application/x-protobuf")
        return endpoint

    def accept_spans(document: dict[str, Any]) -> bool:
        return assembler.add_spans(decode_spans(document))

    def accept_logs(document: dict[str, Any]) -> bool:
        return assembler.add_logs(decode_logs(document))

    return Starlette(routes=[
        Route("/v1/traces", handler(spans_document, accept_spans, ExportTraceServiceResponse), methods=["POST"]),
        Route("/v1/logs", handler(logs_document, accept_logs, ExportLogsServiceResponse), methods=["POST"]),
    ])


def _decode_and_add(body: bytes, is_json: bool, document_of: Callable, accept: Callable) -> bool:
    return accept(document_of(body, json=is_json))


def _unavailable(is_json: bool) -> Response:
    response = _status(503, "agentevals is busy evaluating: retry later", is_json)
    response.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def _status(code: int, message: str, is_json: bool) -> Response:
    """An OTLP error response: a ``google.rpc.Status`` with the message, in the request's encoding."""
    if is_json:
        import orjson

        return Response(orjson.dumps({"code": code, "message": message}), status_code=code,
                        media_type="application/json")
    return Response(_rpc_status(code, message), status_code=code, media_type="application/x-protobuf")


def _rpc_status(code: int, message: str) -> bytes:
    """``google.rpc.Status{code = 1, message = 2}`` encoded by hand: two fields do not justify a dependency."""
    text = message.encode()
    return b"\x08" + _varint(code) + b"\x12" + _varint(len(text)) + text


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)
