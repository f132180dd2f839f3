"""``agentevals sources list``: every trace source ``run`` reads (files, http(s), backends' query URIs, plugins
of the entry-point group ``agentevals.trace_sources``). Not the evaluator sources (``agentevals evaluator
list --source``), which say where evaluators come from."""

from __future__ import annotations

import json
from typing import Any

import click

__all__ = ["sources_command"]

_PLAIN = {  # the sources that are not backends' query APIs: how they are written, what they read
    "files": ("PATH or 'GLOB' (file://PATH)", "trace files: Jaeger JSON, OTLP JSON, Tempo exports, OTLP logs"),
    "http": ("https://HOST/PATH.json", "a trace file downloaded over http(s)"),
    "memory": ("(Python API) Trace or ConvertedTrace objects", "traces already in memory"),
}


@click.group("sources", context_settings={"help_option_names": ["-h", "--help"]})
def sources_command() -> None:
    """Where traces come from: files, URLs and trace backends (Jaeger, Tempo, Phoenix, MLflow, Langfuse, plugins)."""


@sources_command.command("list")
@click.option("-o", "--output", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="A plain table, or one JSON document.")
def list_command(fmt: str) -> None:
    """Every registered trace source: its URI form, what it reads, the environment variables it takes its
    credentials from, and what --write-back creates there. A plugin that cannot be loaded is one line on stderr."""
    rows, broken = describe_sources()
    for line in broken:
        click.echo(f"agentevals: {line}", err=True)
    if fmt == "json":
        click.echo(json.dumps(rows, indent=2))
        return
    table = [("NAME", "URI", "CREDENTIALS", "WRITE-BACK", "SUMMARY")]
    table += [(r["name"], r["uri_form"], " ".join(r["credentials"]) or "-", r["writes_back"] or "-", r["summary"])
              for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]) - 1)]
    for row in table:
        click.echo("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])) + "  " + row[-1])


def describe_sources() -> tuple[list[dict[str, Any]], list[str]]:
    """One dict per registered source (name, aliases, uri_form, summary, credentials, writes_back, parameters,
    plugin), and the one-line errors of those that cannot be loaded."""
    from ..errors import ConfigError
    from ..trace_sources import TRACE_SOURCES
    from ..trace_sources.pull import COMMON_PARAMETERS, PullSource

    rows: list[dict[str, Any]] = []
    broken: list[str] = []
    for name in TRACE_SOURCES.names():
        try:
            cls = TRACE_SOURCES.get(name)
        except ConfigError as exc:
            broken.append(str(exc))
            continue
        pull = cls if issubclass(cls, PullSource) else None
        uri_form, summary = _PLAIN.get(name, ("", ""))
        rows.append({
            "name": name,
            "aliases": list(cls.aliases),
            "uri_form": getattr(cls, "uri_form", "") or uri_form or f"{name}://…",
            "summary": getattr(cls, "summary", "") or summary or (cls.__doc__ or "").strip().split("\n")[0],
            "credentials": list(getattr(cls, "credentials", ())),
            "writes_back": (pull.writes_back or "--emit-otel events") if pull else "",
            "parameters": sorted(COMMON_PARAMETERS | pull.parameters) if pull else [],
            "plugin": not cls.__module__.startswith("agentevals."),
        })
    return rows, broken
