"""``agentevals evalset from-run|add|merge|diff|validate``: golden eval sets built from stored runs."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any, Optional

import click

from ._store import STORE_HELP, open_store

if TYPE_CHECKING:
    pass

__all__ = ["evalset_command"]

def _cut(value: Any, width: int = 60) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    text = text.replace("\n", "\\n")
    return text if len(text) <= width else text[: width - 1] + "…"


def _echo(text: str, kind: str = "table") -> None:
    from ..report._workflow import defuse

    click.echo(defuse(text, kind))  # eval ids and texts come from traces


@click.group("evalset", context_settings={"help_option_names": ["-h", "--help"]})
def evalset_command() -> None:
    """ADK eval sets from stored runs: build one, add cases, merge, diff and validate."""


@evalset_command.command("from-run")
@click.argument("run", default="latest")
@click.option("--cases", "which", multiple=True, metavar="failed|passed|all|ID",
              help="Which cases: failed (FAILED or ERROR), passed, all (default), or case ids as 'runs show' "
                   "prints them (repeatable, or comma-separated).")
@click.option("--sample", type=click.IntRange(min=1), metavar="N", help="Keep N of the chosen cases at random.")
@click.option("--stratify-by", metavar="METRIC",
              help="With --sample: draw per status of METRIC (PASSED, FAILED, …) in proportion.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of --sample (same seed, same set).")
@click.option("-o", "--output", "output", required=True, type=click.Path(dir_okay=False),
              help="Eval set file to write (its name gives the eval_set_id).")
@click.option("--store", metavar="PATH|URL", help=STORE_HELP)
def from_run_command(run: str, which: tuple[str, ...], sample: Optional[int], stratify_by: Optional[str], seed: int,
                     output: str, store: Optional[str]) -> None:
    """Write an ADK eval set from the cases of a stored RUN (id, unique prefix or latest): each case's user
    turns, tool calls and final responses become the expected values, with its run id, trace ids and source
    in metadata.provenance. Secrets are redacted."""
    from ..errors import ConfigError
    from ..evalsets.builder import build_from_run, set_id_for, write_set

    if stratify_by and not sample:
        raise ConfigError("--stratify-by needs --sample N (how many cases to draw)")
    db = open_store(store)
    try:
        data, summary = build_from_run(db, run, which=which or ("all",), sample=sample, stratify_by=stratify_by,
                                       seed=seed, eval_set_id=set_id_for(output))
    finally:
        db.close()
    write_set(output, data)
    strata = f" ({', '.join(f'{k} {v}' for k, v in summary.strata.items())})" if summary.strata else ""
    _echo(f"wrote {output}: {len(summary.written)} case{'s' if len(summary.written) != 1 else ''} from run "
          f"{summary.run_id}{strata}")
    if summary.no_turns:
        _echo(f"left out {len(summary.no_turns)} case(s) with no stored turns: {', '.join(summary.no_turns[:5])}"
              + (" …" if len(summary.no_turns) > 5 else ""))


@evalset_command.command("add")
@click.argument("eval_set", metavar="SET", type=click.Path(dir_okay=False))
@click.argument("run")
@click.argument("cases", nargs=-1, required=True)
@click.option("--store", metavar="PATH|URL", help=STORE_HELP)
def add_command(eval_set: str, run: str, cases: tuple[str, ...], store: Optional[str]) -> None:
    """Append the CASES of a stored RUN to the eval set SET (rewritten in place, created when missing); a case
    already in SET (same run and case id) is not added twice."""
    from pathlib import Path

    from ..evalsets.builder import add_from_run, read_set, set_id_for, write_set

    data = read_set(eval_set) if Path(eval_set).exists() else {"eval_set_id": set_id_for(eval_set), "eval_cases": []}
    db = open_store(store)
    try:
        data, summary, already = add_from_run(data, db, run, cases)
    finally:
        db.close()
    if summary.written:
        write_set(eval_set, data)
    _echo(f"{eval_set}: added {len(summary.written)} case(s) from run {summary.run_id}"
          + (f" ({', '.join(summary.written)})" if summary.written else ""))
    if already:
        _echo(f"already in the set: {', '.join(already)}")
    if summary.no_turns:
        _echo(f"left out {len(summary.no_turns)} case(s) with no stored turns: {', '.join(summary.no_turns)}")


@evalset_command.command("merge")
@click.argument("set_a", metavar="A", type=click.Path(dir_okay=False))
@click.argument("set_b", metavar="B", type=click.Path(dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="Merged eval set to write.")
@click.option("--on-conflict", type=click.Choice(["error", "keep-a", "keep-b"]), default="error", show_default=True,
              help="When A and B have different cases under one eval id.")
def merge_command(set_a: str, set_b: str, output: str, on_conflict: str) -> None:
    """Write A's cases, then B's cases that A lacks (by eval id), to OUTPUT."""
    from ..evalsets.builder import merge_sets, read_set, set_id_for, write_set

    data, conflicts = merge_sets(read_set(set_a), read_set(set_b), eval_set_id=set_id_for(output),
                                 on_conflict=on_conflict, names=(set_a, set_b))
    write_set(output, data)
    kept = {"keep-a": set_a, "keep-b": set_b}.get(on_conflict, "")
    _echo(f"wrote {output}: {len(data['eval_cases'])} case(s)"
          + (f"; {len(conflicts)} conflict(s) kept from {kept}: {', '.join(conflicts)}" if conflicts else ""))


@evalset_command.command("diff")
@click.argument("old", type=click.Path(dir_okay=False))
@click.argument("new", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="One JSON document: added, removed, changed, unchanged.")
@click.option("--exit-code", is_flag=True, help="Exit 1 when the sets differ (like git diff --exit-code).")
def diff_command(old: str, new: str, as_json: bool, exit_code: bool) -> None:
    """What changed from OLD to NEW, case by case (by eval id): added, removed, and each changed field."""
    from ..evalsets.builder import diff_sets, read_set

    diff = diff_sets(read_set(old), read_set(new))
    if as_json:
        _echo(json.dumps(diff.as_dict(), indent=2, ensure_ascii=False), "json")
    else:
        lines = [f"{old} → {new}: {len(diff.added)} added, {len(diff.removed)} removed, {len(diff.changed)} changed, "
                 f"{diff.unchanged} unchanged"]
        lines += [f"+ {eval_id}" for eval_id in diff.added]
        lines += [f"- {eval_id}" for eval_id in diff.removed]
        for eval_id, changes in diff.changed.items():
            lines.append(f"~ {eval_id}")
            lines += [f"    {c['field']}: {_cut(c['old'])} → {_cut(c['new'])}" for c in changes]
        _echo("\n".join(lines))
    if exit_code and not diff.same:
        sys.exit(1)


@evalset_command.command("validate")
@click.argument("eval_set", metavar="SET", type=click.Path(dir_okay=False))
def validate_command(eval_set: str) -> None:
    """Check SET as 'agentevals run -e' reads it and as ADK's models would; exit 2 with each problem listed."""
    from pathlib import Path

    from ..errors import ConfigError, InputFileError
    from ..evalsets.builder import validate_set
    from ..traces.readers._json import load_json_file

    try:
        data = load_json_file(Path(eval_set))
    except InputFileError as exc:
        raise ConfigError(str(exc)) from None
    problems, counts = validate_set(data, eval_set)
    if len(problems) == 1 and not counts:
        raise ConfigError(problems[0])
    for problem in problems:
        _echo(problem)
    if problems:
        raise ConfigError(f"{eval_set}: {len(problems)} problem(s) (listed above)")
    _echo(f"{eval_set}: valid: {counts['cases']} case(s), {counts['turns']} turn(s), {counts['tool_calls']} "
          "tool call(s)")
