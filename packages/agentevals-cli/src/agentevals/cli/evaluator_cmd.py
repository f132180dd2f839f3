"""``agentevals evaluator``: scaffold, run, list and inspect custom evaluators."""

from __future__ import annotations

from pathlib import Path

import click

__all__ = ["evaluator_command"]


@click.group("evaluator")
def evaluator_command() -> None:
    """Custom evaluators: scaffold one, try it, list registries, show runtimes."""


@evaluator_command.command("init")
@click.argument("name")
@click.option("-r", "--runtime", default=None, help="Language: py, js or ts (default: from NAME's extension, else py).")
@click.option("-o", "--output-dir", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
              show_default=True, help="Directory in which the NAME/ folder is created.")
@click.option("--force", is_flag=True, help="Overwrite the files of an existing NAME/ folder.")
def init_command(name: str, runtime: str | None, output_dir: Path, force: bool) -> None:
    """Create NAME/NAME.<ext>, its test, NAME/evaluator.yaml and NAME/sample_input.json, ready to run.

    \b
    Examples:
      agentevals evaluator init my_evaluator
      agentevals evaluator init my_evaluator --runtime js
      agentevals evaluator init my_evaluator.ts
    """
    import os
    import shlex

    from ..evaluator import scaffold_evaluator
    from ..evaluator._scaffold import LANGUAGES

    written = scaffold_evaluator(name, output_dir=output_dir, runtime=runtime, force=force)
    code, folder = written[0], written[0].parent

    def shown(path: Path) -> str:
        relative = os.path.relpath(path)
        return str(path) if relative.startswith("..") else relative

    click.echo(f"Created {shown(folder)}/")
    for path in written:
        why = ""
        if path.name == "package.json":
            why = " (tsx: this Node cannot run TypeScript by itself; npm installs it on the first run)"
        elif path.name.startswith("agentevals-evaluator-sdk."):
            why = " (the JS evaluator SDK, vendored: no npm install needed)"
        click.echo(f"  {path.name}{why}")
    sample = folder / "sample_input.json"
    click.echo(f"\nTry it: agentevals evaluator run {shlex.quote(shown(code))} --input {shlex.quote(shown(sample))}")
    language = next(lang for lang in LANGUAGES if lang.extension == code.suffix)
    install = "npm install && " if any(path.name == "package.json" for path in written) else ""  # tsx first
    click.echo(f"Test it: cd {shlex.quote(shown(folder))} && {install}{language.test_command}")
    config_path = shown(code)
    config_path = config_path if Path(config_path).is_absolute() else f"./{config_path}"
    click.echo("\nAdd it to eval_config.yaml (path relative to the config file; this one is for a config in the "
               "current directory):\n")
    click.echo("  evaluators:")
    click.echo(f"    - name: {code.stem}")
    click.echo("      type: code")
    click.echo(f"      path: {config_path}")
    click.echo("      threshold: 0.5")


@evaluator_command.command("run")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("-i", "--input", "input_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              required=True, help="An EvalInput JSON document to send to the evaluator.")
@click.option("-t", "--threshold", type=click.FloatRange(0, 1), default=None,
              help="Threshold (default: the input's).")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=30.0, show_default=True,
              help="Seconds for the run (building its environment has its own limit, AGENTEVALS_SETUP_TIMEOUT).")
@click.option("--executor", default="local", show_default=True, help="Executor to run it with.")
def run_command(path: Path, input_file: Path, threshold: float | None, timeout: float, executor: str) -> None:
    """Run the evaluator PATH once on an EvalInput file and show its validated result."""
    from ..core.redact import redact
    from ..evaluators.code import evaluate_file
    from ..results import Status

    result = evaluate_file(path, input_file, threshold=threshold, timeout=timeout, executor=executor)
    score = "-" if result.score is None else f"{result.score:.3f}"
    click.echo(redact(f"{result.name}: {result.status.value}  score {score}  threshold {result.threshold:g}"))
    if result.per_invocation_scores:
        click.echo("per invocation: " + ", ".join("-" if s is None else f"{s:g}" for s in result.per_invocation_scores))
    if result.status is Status.ERROR:
        click.echo(redact(f"Error: {result.error}"), err=True)
        stderr = result.details.get("stderr")
        if stderr:
            click.echo(redact("stderr (end):\n" + stderr), err=True)
        raise click.exceptions.Exit(1)
    if result.details:
        import json

        click.echo(redact("details: " + json.dumps(result.details, ensure_ascii=False, default=str)))
    if result.status is Status.NOT_EVALUATED:
        click.echo(redact(f"reason: {result.reason}"))
    raise click.exceptions.Exit(1 if result.status is Status.FAILED else 0)


def _age(seconds: float) -> str:
    minutes = max(0, int(seconds // 60))
    if minutes < 60:
        return f"{minutes}m"
    return f"{minutes // 60}h" if minutes < 48 * 60 else f"{minutes // (24 * 60)}d"


def _collect(sources: tuple[str, ...], *, timeout: float, refresh: bool = False) -> tuple[list, int]:
    """(each source's listing, number of sources that gave nothing); warnings go to stderr, one line each."""
    import asyncio
    import time

    from ..sources import SourceNotConfigured, collect_evaluators, get_source

    names = [] if "all" in sources else list(sources)
    for name in names:
        get_source(name)  # unknown names: ConfigError naming the known ones (exit 2)
    listings = asyncio.run(collect_evaluators(names or None, timeout=timeout, refresh=refresh))
    answered, failed = [], 0
    for listing in listings:
        if isinstance(listing.error, SourceNotConfigured) and not names:
            continue  # e.g. no local registry configured: nothing to list, nothing wrong
        if listing.error is not None:
            lines = str(listing.error).strip().splitlines()
            why = lines[0] if lines else type(listing.error).__name__
            if listing.evaluators is None:
                failed += 1
                click.echo(f"warning: source '{listing.source}' unavailable: {why}", err=True)
                continue
            age = _age(time.time() - (listing.cached_at or time.time()))
            click.echo(f"warning: source '{listing.source}' unavailable: {why}; showing its list cached {age} ago",
                       err=True)
        answered.append(listing)
    return answered, failed


@evaluator_command.command("list")
@click.option("-s", "--source", "sources", multiple=True,
              help="Only these sources (all, builtin, github, local, or a registered one); repeatable.")
@click.option("--refresh", is_flag=True, help="Ask every source now instead of using lists cached in the last hour.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=20.0, show_default=True,
              help="Seconds to wait for each source.")
def list_command(sources: tuple[str, ...], refresh: bool, timeout: float) -> None:
    """List evaluators from every registered source (an unreachable source is one line on stderr).

    Lists fetched in the last hour come from the cache; an unreachable source shows its cached list.
    """
    answered, failed = _collect(sources, timeout=timeout, refresh=refresh)
    rows = [
        (info.source, info.name, info.ref or "-",
         (info.description + (f" [{info.language}]" if info.language else "")).strip())
        for listing in answered
        for info in sorted(listing.evaluators, key=lambda i: i.name)
    ]
    if rows:
        widths = [max(len(r[i]) for r in [("SOURCE", "NAME", "REF", ""), *rows]) for i in range(3)]
        header = ("SOURCE", "NAME", "REF", "DESCRIPTION")
        for row in [header, *rows]:
            click.echo("  ".join(cell.ljust(w) for cell, w in zip(row[:3], widths, strict=False)) + "  " + row[3])
    click.echo(f"{len(rows)} evaluator(s) from {len(answered)} source(s)" + (f"; {failed} unavailable" if failed else ""))
    if failed and not answered:
        raise click.exceptions.Exit(1)


@evaluator_command.command("config")
@click.argument("name")
@click.option("-p", "--path", "path", default=None,
              help="The evaluator file, relative to eval_config.yaml (a `type: code` entry).")
@click.option("-t", "--threshold", type=click.FloatRange(0, 1), default=None,
              help="Threshold (default: 0.5).")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=20.0, show_default=True,
              help="Seconds to wait for each source when looking NAME up.")
def config_command(name: str, path: str | None, threshold: float | None, timeout: float) -> None:
    """Print an eval_config.yaml entry for NAME: a builtin metric, an evaluator of a source, or a file.

    \b
    Examples:
      agentevals evaluator config tool_trajectory_avg_score -t 0.8
      agentevals evaluator config response_quality            # from the community registry
      agentevals evaluator config my_evaluator -p ./evaluators/my_evaluator.py
    """
    import yaml

    from ..evaluators.builtin import METRICS
    from ..evaluators.builtin._base import UNIFORM_THRESHOLD

    entry: dict[str, object] = {"name": name}
    note = ""
    if path is None and name in METRICS.names():
        metric = METRICS.get(name)
        default = None if metric.default_threshold is None else UNIFORM_THRESHOLD  # None: informational
        entry.update(type="builtin", threshold=default if threshold is None else threshold)
        if metric.needs_expected:
            note = " (needs an eval set: -e/--eval-set)"
    else:
        found = None
        if path is None:
            answered, _ = _collect((), timeout=timeout)
            found = next((info for listing in answered for info in listing.evaluators
                          if info.name == name and info.ref and info.source != "builtin"), None)
        if found is not None:
            entry.update(type="remote", source=found.source, ref=found.ref)
            if found.sha256:
                entry["sha256"] = found.sha256
        else:
            entry.update(type="code", path=path or f"./{name}/{name}.py")
            note = " (path: relative to eval_config.yaml)"
        entry["threshold"] = 0.5 if threshold is None else threshold
    if entry.get("threshold") is None:
        del entry["threshold"]
    click.echo(f"# Add to eval_config.yaml under 'evaluators:'{note}\nevaluators:")
    for index, (key, value) in enumerate(entry.items()):
        line = yaml.safe_dump({key: value}, default_flow_style=True, width=1000).strip().removeprefix("{").removesuffix("}")
        click.echo(("  - " if index == 0 else "    ") + line)


@evaluator_command.command("runtimes")
def runtimes_command() -> None:
    """Show which evaluator files can run here (with versions) and the executors."""
    from ..execution.backends import EXECUTORS
    from ..execution.runtimes import RuntimeSupport, get_runtimes

    available: list[tuple[str, RuntimeSupport]] = []
    missing: list[tuple[str, RuntimeSupport]] = []
    for runtime in get_runtimes():
        for support in runtime.support(Path.cwd()):
            (available if support.available else missing).append((runtime.name, support))
    click.echo("Runtimes:")
    for name, support in available:
        click.echo(f"  {name:<8} {' '.join(support.extensions):<18} {support.detail}")
    if missing:
        click.echo("Not available:")
        for name, support in missing:
            click.echo(f"  {name:<8} {' '.join(support.extensions):<18} {support.detail}")
    click.echo("Executors: " + ", ".join(EXECUTORS.names()))
