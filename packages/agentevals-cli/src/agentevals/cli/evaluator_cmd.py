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
def init_command(name: str, runtime: str | None, output_dir: Path) -> None:
    """Create NAME/NAME.<ext> and NAME/evaluator.yaml, ready to run.

    \b
    Examples:
      agentevals evaluator init my_evaluator
      agentevals evaluator init my_evaluator --runtime js
      agentevals evaluator init my_evaluator.ts
    """
    from ..evaluator import scaffold_evaluator

    written = scaffold_evaluator(name, output_dir=output_dir, runtime=runtime)
    code = written[0]
    click.echo(f"Created {code.parent}/")
    for path in written:
        click.echo(f"  {path.name}")
    click.echo("\nAdd it to eval_config.yaml:\n")
    click.echo("  evaluators:")
    click.echo(f"    - name: {code.stem}")
    click.echo("      type: code")
    click.echo(f"      path: ./{code.parent.name}/{code.name}")
    click.echo("      threshold: 0.5")
    click.echo(f"\nTry it: agentevals evaluator run {code} --input <eval_input.json>")


@evaluator_command.command("run")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("-i", "--input", "input_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              required=True, help="An EvalInput JSON document to send to the evaluator.")
@click.option("-t", "--threshold", type=click.FloatRange(0, 1), default=None,
              help="Threshold (default: the input's).")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=30.0, show_default=True,
              help="Seconds for everything (environment setup included).")
@click.option("--executor", default="local", show_default=True, help="Executor to run it with.")
def run_command(path: Path, input_file: Path, threshold: float | None, timeout: float, executor: str) -> None:
    """Run the evaluator PATH once on an EvalInput file and show its validated result."""
    from ..evaluators.code import evaluate_file
    from ..results import Status

    result = evaluate_file(path, input_file, threshold=threshold, timeout=timeout, executor=executor)
    score = "-" if result.score is None else f"{result.score:.3f}"
    click.echo(f"{result.name}: {result.status.value}  score {score}  threshold {result.threshold:g}")
    if result.per_invocation_scores:
        click.echo("per invocation: " + ", ".join("-" if s is None else f"{s:g}" for s in result.per_invocation_scores))
    if result.status is Status.ERROR:
        click.echo(f"Error: {result.error}", err=True)
        stderr = result.details.get("stderr")
        if stderr:
            click.echo("stderr (end):\n" + stderr, err=True)
        raise click.exceptions.Exit(1)
    if result.details:
        import json

        click.echo("details: " + json.dumps(result.details, ensure_ascii=False, default=str))
    if result.status is Status.NOT_EVALUATED:
        click.echo(f"reason: {result.reason}")
    raise click.exceptions.Exit(1 if result.status is Status.FAILED else 0)


@evaluator_command.command("list")
@click.option("-s", "--source", "sources", multiple=True,
              help="Only these sources (builtin, github, local, or a registered one); repeatable.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=20.0, show_default=True,
              help="Seconds to wait for each source.")
def list_command(sources: tuple[str, ...], timeout: float) -> None:
    """List evaluators from every registered source (an unreachable source is one line on stderr)."""
    import asyncio

    from ..sources import SourceNotConfigured, collect_evaluators, get_source

    for name in sources:
        get_source(name)  # unknown names: ConfigError naming the known ones (exit 2)
    collected = asyncio.run(collect_evaluators(list(sources) or None, timeout=timeout))
    rows = []
    failed = 0
    skipped = 0
    for source, outcome in collected:
        if isinstance(outcome, SourceNotConfigured) and not sources:
            skipped += 1  # e.g. no local registry configured: nothing to list, nothing wrong
            continue
        if isinstance(outcome, Exception):
            failed += 1
            lines = str(outcome).strip().splitlines()
            click.echo(f"warning: source '{source}' unavailable: {lines[0] if lines else type(outcome).__name__}",
                       err=True)
            continue
        for info in sorted(outcome, key=lambda i: i.name):
            language = f" [{info.language}]" if info.language else ""
            rows.append((info.source, info.name, info.ref or "-", (info.description + language).strip()))
    if rows:
        widths = [max(len(r[i]) for r in [("SOURCE", "NAME", "REF", ""), *rows]) for i in range(3)]
        header = ("SOURCE", "NAME", "REF", "DESCRIPTION")
        for row in [header, *rows]:
            click.echo("  ".join(cell.ljust(w) for cell, w in zip(row[:3], widths, strict=False)) + "  " + row[3])
    answered = len(collected) - failed - skipped
    click.echo(f"{len(rows)} evaluator(s) from {answered} source(s)" + (f"; {failed} unavailable" if failed else ""))
    if collected and answered == 0:
        raise click.exceptions.Exit(1)


@evaluator_command.command("runtimes")
def runtimes_command() -> None:
    """Show which evaluator files can run here (with versions) and the executors."""
    from ..execution.backends import EXECUTORS
    from ..execution.runtimes import get_runtimes

    available, missing = [], []
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
