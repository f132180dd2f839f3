"""``agentevals serve``: OTLP receivers, HTTP API and (optionally) MCP over the engine; runs until Ctrl-C."""

from __future__ import annotations

from typing import Optional

import click

__all__ = ["serve_command"]


@click.command("serve", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--dev", is_flag=True, help="Print the receiver endpoints and the exporter settings to use.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. Anything but loopback needs an API token (--api-token).")
@click.option("-p", "--port", default=8001, show_default=True, type=click.IntRange(0, 65535), help="HTTP API port.")
@click.option("--otlp-http-port", default=4318, show_default=True, type=click.IntRange(0, 65535),
              help="OTLP/HTTP receiver port (protobuf and JSON).")
@click.option("--otlp-grpc-port", default=4317, show_default=True, type=click.IntRange(0, 65535),
              help="OTLP/gRPC receiver port.")
@click.option("--mcp-port", type=click.IntRange(0, 65535), help="Also serve MCP (Streamable HTTP) on this port, at /mcp.")
@click.option("--eval-sets", type=click.Path(file_okay=False), help="Folder of ADK eval set JSON files to match sessions against.")
@click.option("-c", "--config", "config_path", type=click.Path(dir_okay=False),
              help="eval_config.yaml with the evaluators (as for `run`).")
@click.option("-m", "--metric", "metrics", multiple=True,
              help="Builtin metric (repeatable). Default: tool_trajectory_avg_score (when no -c).")
@click.option("--headless", is_flag=True, help="No web UI: the API and the receivers only.")
@click.option("--emit-otel", is_flag=True,
              help="Send results as OpenTelemetry gen_ai.evaluation.result events, parented to the evaluated "
                   "spans; the exporter is set by the standard OTEL_EXPORTER_OTLP_* variables.")
@click.option("--api-token", envvar="AGENTEVALS_API_TOKEN", show_envvar=True,
              help="Require 'Authorization: Bearer <token>' on the API, MCP and the receivers.")
@click.option("--session-idle", default=5.0, show_default=True, type=click.FloatRange(min=0.1),
              help="Seconds without a new span after which a conversation is complete and evaluated.")
@click.option("--max-buffered", default=50_000, show_default=True, type=click.IntRange(min=100),
              help="Spans and log records held at most; beyond it receivers answer 'retry later'.")
@click.option("--max-upload-mb", default=10, show_default=True, type=click.IntRange(min=1),
              help="Largest accepted upload or OTLP request body, in MiB.")
@click.option("--store", "store", metavar="PATH|URL", help="Run store where this server's sessions are recorded, as one "
              "run: a SQLite file or postgresql:// URL (default: $AGENTEVALS_STORE, else runs.sqlite in the user data "
              "folder; the store `run` writes).")
@click.option("--no-store", is_flag=True, help="Do not record sessions in the run store (no /api/runs, no run tools).")
@click.option("--allowed-host", "allowed_hosts", multiple=True, metavar="NAME",
              help="Also answer to this Host name on the API, UI and MCP ports, and take posts from its pages "
                   "(repeatable; loopback names and --host are always allowed). Other names get HTTP 421.")
@click.option("--allow-code-evaluators", is_flag=True,
              help="Let configs sent to the API or MCP port name evaluators that run code on this machine "
                   "(code, remote, python, code_judge…). Off: such configs are refused (HTTP 403).")
@click.option("--allow-source-host", "allow_source_hosts", multiple=True, metavar="HOST[:PORT]",
              help="Let the API's 'sources' field and MCP evaluate_traces read trace backend URIs "
                   "(jaeger+http://…, phoenix+http://…) on this host (repeatable). None: source URIs are refused.")
@click.option("--pull", "pull", multiple=True, metavar="SOURCE_URI",
              help="Poll this trace backend (jaeger+http://…, phoenix+http://…: see 'agentevals sources list') for "
                   "traces newer than its watermark in the run store, and evaluate them (repeatable).")
@click.option("--every", default="1m", show_default=True, metavar="DURATION",
              help="Time between two polls of each --pull source (30s, 5m, 1h).")
@click.option("--sample", type=click.FloatRange(0.0, 1.0, min_open=True), metavar="RATE",
              help="Evaluate this share of sessions (0-1], chosen by a hash of the conversation (else trace) id "
                   "(overrides the config's 'sample').")
@click.option("--filter", "filter_expr", metavar="EXPR",
              help="Evaluate only sessions matching EXPR (overrides the config's 'filter'); the others are counted.")
@click.option("--alert", "alerts", multiple=True, metavar="RULE",
              help="Alert rule, e.g. 'tool_trajectory_avg_score pass_rate < 0.9 over 1h' (repeatable; adds to the "
                   "config's 'alerts').")
@click.option("--alert-webhook", metavar="URL", help="POST each alert's JSON body here when it fires or clears.")
def serve_command(dev: bool, host: str, port: int, otlp_http_port: int, otlp_grpc_port: int, mcp_port: Optional[int],
                  eval_sets: Optional[str], config_path: Optional[str], metrics: tuple[str, ...], headless: bool,
                  emit_otel: bool, api_token: Optional[str], session_idle: float, max_buffered: int,
                  max_upload_mb: int, store: Optional[str], no_store: bool, allowed_hosts: tuple[str, ...],
                  allow_code_evaluators: bool, allow_source_hosts: tuple[str, ...], pull: tuple[str, ...] = (),
                  every: str = "1m", sample: Optional[float] = None, filter_expr: Optional[str] = None,
                  alerts: tuple[str, ...] = (), alert_webhook: Optional[str] = None) -> None:
    """Receive agent traces over OTLP, evaluate each session as it completes, and serve the results."""
    import asyncio

    from ..serve import require_serve_extra

    require_serve_extra("agentevals serve")
    from ..errors import ConfigError
    from ..serve.server import ServeOptions, run_server
    from ..trace_sources.pull import parse_duration

    try:
        every_seconds = parse_duration(every).total_seconds()
    except ValueError as exc:
        raise ConfigError(f"--every: {exc}") from None

    options = ServeOptions(host=host, port=port, otlp_http_port=otlp_http_port, otlp_grpc_port=otlp_grpc_port,
                           mcp_port=mcp_port, config=config_path, metrics=list(metrics), eval_sets=eval_sets,
                           token=api_token or None, session_idle=session_idle, max_buffered=max_buffered,
                           max_upload=max_upload_mb * 2**20, emit_otel=emit_otel, ui=not headless,
                           store=store, no_store=no_store, allowed_hosts=list(allowed_hosts),
                           allow_code=allow_code_evaluators, allow_source_hosts=list(allow_source_hosts),
                           pull=list(pull), every=every_seconds, sample=sample, filter=filter_expr,
                           alerts=list(alerts), alert_webhook=alert_webhook)

    def announce(a: dict) -> None:
        shown = f"[{a['host']}]" if ":" in a["host"] else a["host"]
        if not headless:
            click.echo(f"agentevals UI:   http://{shown}:{a['api_port']}/")
        click.echo(f"agentevals API:  http://{shown}:{a['api_port']}/api")
        click.echo(f"  OTLP HTTP: http://{shown}:{a['otlp_http_port']}")
        click.echo(f"  OTLP gRPC: {shown}:{a['otlp_grpc_port']}")
        if a["mcp_port"] is not None:
            click.echo(f"  MCP:       http://{shown}:{a['mcp_port']}/mcp")
        if a.get("run_id"):
            click.echo(f"  Run store: {a['store']} (sessions are recorded as run {a['run_id']})")
        if dev:
            click.echo(f"\n  export OTEL_EXPORTER_OTLP_ENDPOINT=http://{shown}:{a['otlp_http_port']}")
            click.echo("  (or OTEL_EXPORTER_OTLP_PROTOCOL=grpc with the gRPC address)")
            if eval_sets:
                click.echo(f"  Eval sets: {eval_sets}")
            click.echo("\nWaiting for agent connections...")
        click.echo("", nl=True)

    asyncio.run(run_server(options, on_ready=announce))
