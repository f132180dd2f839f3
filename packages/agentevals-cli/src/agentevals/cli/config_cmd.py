"""``agentevals config``: the eval_config.yaml JSON Schema (for editors) and validation."""

from __future__ import annotations

import json

import click

__all__ = ["config_command"]


@click.group("config", context_settings={"help_option_names": ["-h", "--help"]})
def config_command() -> None:
    """Work with eval_config.yaml files."""


@config_command.command("schema")
def schema_command() -> None:
    """Print the JSON Schema of eval_config.yaml (point your editor's YAML plugin at it)."""
    from ..config import config_json_schema

    click.echo(json.dumps(config_json_schema(), indent=2))


@config_command.command("validate")
@click.argument("path", type=click.Path(dir_okay=False))
def validate_command(path: str) -> None:
    """Check a config (unknown keys, types, metric names, evaluator files) without running anything."""
    from ..config import load_config

    config = load_config(path)
    click.echo(f"{path}: OK ({len(config.evaluators)} evaluator{'s' if len(config.evaluators) != 1 else ''})")
