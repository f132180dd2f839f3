"""``agentevals eval``: run one judge or assertion (``assert``) and print grading views (``prompt eval``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click


@click.group("eval")
def eval_command() -> None:
    """Run a single judge or assertion; show what a grading agent needs for one test."""


def _load_json(text: str, what: str) -> Any:
    from ..errors import ConfigError

    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{what} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


@eval_command.command("assert")
@click.argument("name")
@click.option("--agent-output", help="The agent's full response text.")
@click.option("--agent-input", help="The original user prompt.")
@click.option(
    "--file",
    "file_",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help='JSON file {"output": ..., "input": ...} (also "expected_output", "criteria") instead of the two options.',
)
@click.option(
    "--value", "values", multiple=True, help="Value for a builtin assertion (repeat for contains-any/-all)."
)
@click.option(
    "--config",
    "config_json",
    metavar="JSON",
    help="Config object: a builtin's {value, flags}, or the judge's `config`.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=30.0,
    show_default=True,
    help="Seconds before the judge is killed.",
)
@click.pass_context
def assert_command(
    ctx: click.Context,
    name: str,
    agent_output: str | None,
    agent_input: str | None,
    file_: Path | None,
    values: tuple[str, ...],
    config_json: str | None,
    timeout: float,
) -> None:
    """Score one output with judge or builtin assertion NAME; print {score, reasoning, hits, misses}.

    Judges are .agentevals/judges/NAME.* or .agentv/judges/NAME.* from here up to the repository
    root. Exit 0 when score >= 0.5, 1 below (or when the judge fails), 2 when NAME is unknown.
    """
    from ..errors import ConfigError
    from ..judges import run_assertion

    extra: dict[str, Any] = {}
    if file_ is not None:
        data = _load_json(file_.read_text("utf-8"), str(file_))
        if not isinstance(data, dict):
            raise ConfigError(f'{file_}: expected a JSON object {{"output": ..., "input": ...}}')
        output, prompt = _text(data.get("output")), _text(data.get("input"))
        extra = {
            "expected_output": _text(data.get("expected_output")),
            "criteria": _text(data.get("criteria")),
        }
    elif agent_output is None:
        raise ConfigError("--agent-output is required (or use --file)")
    else:
        output, prompt = agent_output, agent_input or ""
    config: dict[str, Any] | None = None
    if config_json is not None:
        config = _load_json(config_json, "--config")
        if not isinstance(config, dict):
            raise ConfigError("--config must be a JSON object")
    if values:
        config = {**(config or {}), "value": values[0] if len(values) == 1 else list(values)}
    result = run_assertion(name, output=output, input=prompt, config=config, timeout=timeout, **extra)
    from ..core.redact import redact_obj

    click.echo(json.dumps(redact_obj(result.to_json()), indent=2, ensure_ascii=False))
    ctx.exit(0 if result.passed else 1)


@eval_command.group("prompt")
def prompt_group() -> None:
    """Grading views of an EVAL.yaml for agent-orchestrated evals (no API keys needed)."""


@prompt_group.command("eval")
@click.argument("eval_path", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--list", "list_", is_flag=True, help='Print {"eval_path", "test_ids"}.')
@click.option("--input", "input_", is_flag=True, help="Print the test's input messages (needs --test-id).")
@click.option(
    "--expected-output",
    is_flag=True,
    help="Print the test's expected output and assertions (needs --test-id).",
)
@click.option("--grading-brief", is_flag=True, help="Print a human-readable grading brief (needs --test-id).")
@click.option("--test-id", help="The test to show.")
def prompt_eval_command(
    eval_path: Path,
    list_: bool,
    input_: bool,
    expected_output: bool,
    grading_brief: bool,
    test_id: str | None,
) -> None:
    """Show one EVAL.yaml test to a grading agent: --list, --input, --expected-output or --grading-brief."""
    from ..errors import ConfigError
    from ..transpile import load_prompt_suite
    from ..transpile._js import js_stringify

    if [list_, input_, expected_output, grading_brief].count(True) != 1:
        raise ConfigError("specify exactly one of --list, --input, --expected-output or --grading-brief")
    if not list_ and not test_id:
        raise ConfigError("--test-id is required with --input, --expected-output and --grading-brief")
    suite = load_prompt_suite(eval_path)
    for warning in suite.warnings:
        click.echo(f"Warning: {warning}", err=True)
    if list_:
        click.echo(js_stringify(suite.list_view(), indent=2))
    elif grading_brief:
        click.echo(suite.grading_brief(test_id or ""))
    else:
        view = suite.input_view if input_ else suite.expected_output_view
        click.echo(js_stringify(view(test_id or ""), indent=2))
