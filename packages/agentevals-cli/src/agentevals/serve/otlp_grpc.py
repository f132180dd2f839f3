"""OTLP/gRPC receiver (port 4317): the standard ``TraceService`` and ``LogsService`` of the collector.

A full buffer answers ``UNAVAILABLE`` (retryable in OTLP: exporters back off and retry), a body that
does not convert ``INVALID_ARGUMENT``, a missing token ``UNAUTHENTICATED``. Messages above the size
limit are refused by gRPC itself (``RESOURCE_EXHAUSTED``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Optional

import grpc
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2, logs_service_pb2_grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

from ..errors import ConfigError
from ._limits import check_token
from .otlp import OtlpDecodeError, decode_logs, decode_spans, message_to_document
from .sessions import SessionAssembler

__all__ = ["start_otlp_grpc"]


async def _export(request: Any, context: grpc.aio.ServicerContext, token: Optional[str],
                  assembler: SessionAssembler, accept: Callable[[dict], bool]) -> None:
    metadata = dict(context.invocation_metadata() or ())
    authorization = metadata.get("authorization")  # str: only "-bin" keys carry bytes
    if not check_token(token, authorization if isinstance(authorization, str) else None):
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong API token (authorization: Bearer …)")
    if not assembler.has_room(1):
        await context.abort(grpc.StatusCode.UNAVAILABLE, "agentevals is busy evaluating: retry later")
    try:
        accepted = await asyncio.to_thread(lambda: accept(message_to_document(request)))
    except (OtlpDecodeError, ValueError) as exc:
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
    if not accepted:
        await context.abort(grpc.StatusCode.UNAVAILABLE, "agentevals is busy evaluating: retry later")


def _service(base: type, response_type: type, accept: Callable[[SessionAssembler, dict], bool]) -> Callable:
    """A servicer of one OTLP collector service (same shape for traces and logs)."""

    class Service(base):
        def __init__(self, assembler: SessionAssembler, token: Optional[str]) -> None:
            self.assembler, self.token = assembler, token

        async def Export(self, request, context):  # the generated service's method name
            await _export(request, context, self.token, self.assembler, lambda doc: accept(self.assembler, doc))
            return response_type()

    return Service


_TraceService = _service(trace_service_pb2_grpc.TraceServiceServicer, trace_service_pb2.ExportTraceServiceResponse,
                         lambda assembler, doc: assembler.add_spans(decode_spans(doc)))
_LogsService = _service(logs_service_pb2_grpc.LogsServiceServicer, logs_service_pb2.ExportLogsServiceResponse,
                        lambda assembler, doc: assembler.add_logs(decode_logs(doc)))


async def start_otlp_grpc(assembler: SessionAssembler, address: str, *, token: Optional[str] = None,
                          max_message: int = 16 * 2**20) -> tuple[grpc.aio.Server, int]:
    """Start the receiver on ``address`` (``host:port``; port 0 picks one); returns the server and its port."""
    server = grpc.aio.server(options=[("grpc.max_receive_message_length", max_message)],
                             maximum_concurrent_rpcs=64)
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(_TraceService(assembler, token), server)
    logs_service_pb2_grpc.add_LogsServiceServicer_to_server(_LogsService(assembler, token), server)
    try:
        port = server.add_insecure_port(address)
    except RuntimeError:  # grpc raises (newer) or returns 0 (older) when the port is taken
        port = 0
    if not port:
        raise ConfigError(f"cannot listen on {address} (OTLP/gRPC): is another server using it? pick another port")
    await server.start()
    return server, port
