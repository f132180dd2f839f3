"""``agentevals transpile``: EVAL.yaml suites → Agent Skills evals.json files."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("transpile")
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "-d",
    "--out-dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="Write here instead of next to each input.",
)
@click.option(
    "--stdout",
    "to_stdout",
    is_flag=True,
    help="Print the evals.json instead of writing it (one input, one skill).",
)
def transpile_command(inputs: tuple[Path, ...], out_dir: Path | None, to_stdout: bool) -> None:
    """Transpile EVAL.yaml (or .jsonl) suites into evals.json.

    One skill gives evals.json; several give <skill>.evals.json each. Code judges become
    instructions to run `agentevals eval assert <judge>`.
    """
    from ..errors import ConfigError
    from ..transpile import plan_outputs, transpile_file, write_outputs

    if to_stdout and len(inputs) != 1:
        raise ConfigError("--stdout takes exactly one input file")
    results = [transpile_file(path) for path in inputs]
    for result in results:
        for warning in result.warnings:
            click.echo(f"Warning: {warning}", err=True)
    plan = plan_outputs(results, out_dir=out_dir)
    if to_stdout:
        if len(plan) != 1:
            skills = ", ".join(results[0].files)
            raise ConfigError(
                f"--stdout needs a single skill but {inputs[0]} has {len(plan)} ({skills}); use --out-dir"
            )
        click.echo(next(iter(plan.values())), nl=False)
        return
    for target in write_outputs(plan):
        click.echo(f"Transpiled to {target}")
