"""Live mode (extra ``serve``): OTLP receivers, the HTTP API and MCP over the same engine as ``run``.

    agentevals serve --config eval_config.yaml --eval-sets examples/evalsets

Spans and GenAI log records arriving over OTLP/HTTP (4318) or OTLP/gRPC (4317) are assembled into
sessions (``sessions``), evaluated by ``agentevals.engine.run_evaluation`` (``live``) and kept in a
bounded session store (``store``) that the HTTP API (``http_api``) and MCP tools (``mcp_tools``) read.
"""

from __future__ import annotations

from ..errors import MissingDependencyError

__all__ = ["require_serve_extra"]


def require_serve_extra(what: str, *, also: tuple[str, ...] = ()) -> None:
    """Raise ``MissingDependencyError`` (with the pip command) when the ``serve`` extra is missing."""
    import importlib.util

    for module in ("fastapi", "uvicorn", "grpc", "opentelemetry.proto", "google.protobuf", *also):
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            raise MissingDependencyError(what, "serve")
