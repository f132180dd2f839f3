"""``agentevals mcp``: an MCP server on stdio (for Claude Code and other MCP clients)."""

from __future__ import annotations

from typing import Optional

import click

__all__ = ["mcp_command"]


@click.command("mcp", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--server-url", envvar="AGENTEVALS_SERVER_URL", show_envvar=True,
              help="A running `agentevals serve` whose sessions the session tools read "
                   "(default: http://localhost:8001).")
@click.option("--api-token", envvar="AGENTEVALS_API_TOKEN", show_envvar=True, help="That server's API token.")
@click.option("--store", metavar="PATH|URL", help="Run store the run tools read: a SQLite file or postgresql:// URL "
              "(default: $AGENTEVALS_STORE, else runs.sqlite in the user data folder).")
def mcp_command(server_url: Optional[str], api_token: Optional[str], store: Optional[str]) -> None:
    """Serve the tools list_metrics, evaluate_traces, list_sessions, summarize_session, evaluate_sessions,
    list_runs, show_run, compare_runs on stdio."""
    from ..serve import require_serve_extra

    require_serve_extra("agentevals mcp", also=("mcp", "anyio"))
    import anyio

    from ..serve.mcp_tools import RemoteSessions, StoreRuns, build_mcp
    from ..store import store_location

    server = build_mcp(RemoteSessions(server_url or "http://localhost:8001", token=api_token),
                       runs=StoreRuns(location=store_location(store)))
    anyio.run(server.run_stdio_async)
