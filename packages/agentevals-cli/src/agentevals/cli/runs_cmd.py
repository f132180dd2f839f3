"""``agentevals runs list|show|compare|trend`` and ``agentevals store migrate``: the run store from the shell."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Optional

import click

from ._choices import RegistryChoice
from ._store import STORE_HELP, open_store

if TYPE_CHECKING:
    pass

__all__ = ["runs_command", "store_command"]

@click.group("runs", context_settings={"help_option_names": ["-h", "--help"]})
def runs_command() -> None:
    """Runs recorded in the run store: list them, show one, compare two, follow a metric over them."""


@runs_command.command("list")
@click.option("-n", "--limit", type=click.IntRange(min=1), default=20, show_default=True, help="How many runs.")
@click.option("--json", "as_json", is_flag=True, help="One JSON document instead of the table.")
@click.option("--store", metavar="PATH|URL", help=STORE_HELP)
def list_command(limit: int, as_json: bool, store: Optional[str]) -> None:
    """The latest runs, newest first: id, start, status, cases, pass rate, exit code, command."""
    from ..results.intervals import format_totals_rate

    db = open_store(store)
    try:
        records = db.list_runs(limit=limit)
    finally:
        db.close()
    if as_json:
        click.echo(json.dumps([r.as_dict() for r in records], indent=2))
        return
    if not records:
        click.echo("no runs recorded yet")
        return
    rows = [("RUN", "STARTED", "STATUS", "CASES", "FAILED", "PASS RATE", "EXIT", "COMMAND")]
    for r in records:
        totals = r.totals or {}
        cases = totals.get("cases", {})
        failed = cases.get("FAILED", 0) + cases.get("ERROR", 0) if cases else "-"
        rows.append((r.run_id, r.started_at[:19].replace("T", " "), r.status, str(cases.get("total", "-")),
                     str(failed), format_totals_rate(totals),
                     "-" if r.exit_code is None else str(r.exit_code), _short(r.command)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        click.echo("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])) + "  " + row[-1])


@runs_command.command("show")
@click.argument("run", default="latest")
@click.option("-o", "--output", "fmt", default="table", show_default=True,
              type=RegistryChoice("agentevals.report:REPORT_FORMATS"),
              help="Report format of the stored run.")
@click.option("--disagreements", "only_disagreements", is_flag=True,
              help="Only the human labels that disagree with the evaluator's PASSED/FAILED, one per line (with "
                   "-o json: a JSON list).")
@click.option("--store", metavar="PATH|URL", help=STORE_HELP)
def show_command(run: str, fmt: str, only_disagreements: bool, store: Optional[str]) -> None:
    """One stored run (id, unique prefix or latest) as any report; an interrupted run is marked incomplete.
    Human labels ('agentevals labels') are shown beside the machine verdicts."""
    from ..core.redact import redact
    from ..report import ReportContext, render
    from ..report._workflow import defuse
    from ..store._store import report_context_values, utc_text

    db = open_store(store)
    try:
        run_id = db.resolve(run)
        record = db.get_run(run_id)
        result = db.load_run(run_id)
        sources = db.sources(run_id)
    finally:
        db.close()
    context = report_context_values(record, result, sources)
    read, differ = context["sources"], context["disagreements"]
    labels = sum(len(c.labels) for c in result.cases)
    if only_disagreements:
        if fmt == "json":
            click.echo(defuse(json.dumps([d.as_dict() for d in differ or ()], indent=2, ensure_ascii=False), "json"))
            return
        lines = [f"run {run_id}: {len(differ or ())} of {labels} human label{'s' if labels != 1 else ''} "
                 "disagree with the evaluator"]
        lines += [f"  {d.describe()}" for d in differ or ()]
        click.echo(defuse(redact("\n".join(lines)), "table"))
        return
    if fmt in ("table", "summary"):
        click.echo(f"run {run_id} · {record.status} · started {record.started_at} · {record.command}")
        for source in sources:  # the backends it read, and the window: what --resume reads again
            click.echo(defuse(f"source {source.uri} · window {utc_text(source.start)} → {utc_text(source.end)} · "
                              f"{source.traces} trace{'s' if source.traces != 1 else ''}"
                              + (f" · failed: {source.error}" if source.error else ""), "table"))
        files = [s for s in read if s["kind"] == "file"]
        if files:  # the files it read (the cases list each one's own)
            more = f" +{len(files) - 5} more" if len(files) > 5 else ""
            click.echo(defuse(f"files {', '.join(s['uri'] for s in files[:5])}{more}", "table"))
    click.echo(render(result, fmt, color=fmt in ("table", "summary") and sys.stdout.isatty(),
                      context=ReportContext(**context)), nl=False)
    if labels and fmt in ("table", "summary"):
        click.echo(f"human labels: {labels} · {len(differ or ())} disagree with the evaluator"
                   + (f" (agentevals runs show {run_id} --disagreements)" if differ else ""))


@runs_command.command("compare")
@click.argument("run_a")
@click.argument("run_b", default="latest")
@click.option("--json", "as_json", is_flag=True,
              help="One JSON document: regressions, fixes, deltas, the paired tests and flaky cases.")
@click.option("--alpha", type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True), default=0.05,
              show_default=True, help="Significance level of the paired tests (McNemar's exact test).")
@click.option("--fail-on", type=click.Choice(["any", "regression"], case_sensitive=False), default="any",
              show_default=True,
              help="Exit 1 on any row that regressed, or only on a significant regression (docs/trust.md).")
@click.option("--store", metavar="PATH|URL", help=STORE_HELP)
def compare_command(run_a: str, run_b: str, as_json: bool, alpha: float, fail_on: str, store: Optional[str]) -> None:
    """What changed from RUN_A (the baseline) to RUN_B: regressions, fixes, score deltas per case and metric,
    and per metric whether the change is a regression, an improvement or within noise (cases paired by id).

    Exit 1 when RUN_B has regressions (with --fail-on regression: only a significant one).
    """
    from ..report._workflow import defuse
    from ..results.compare import compare_stored

    db = open_store(store)
    try:
        comparison = compare_stored(db, run_a, run_b, alpha=alpha)[0]
    finally:
        db.close()
    a, b = comparison.baseline, comparison.current
    if as_json:
        click.echo(defuse(json.dumps(comparison.as_dict(), indent=2), "json"))
    else:
        lines = [f"{a} → {b}", comparison.headline()]
        for label, rows in (("regression", comparison.regressions), ("fix", comparison.fixes)):
            lines += [f"  {label}: {r.describe()}" for r in rows]
        lines += [f"  score {r.delta:+.3f}: {r.describe()}" for r in comparison.moved]
        if comparison.only_before:
            lines.append(f"  {comparison.only_before} result(s) of {a} are not in {b}")
        if comparison.paired:
            lines.append(comparison.paired_line())
            lines += [f"  {p.describe()}" for p in comparison.paired]
        click.echo(defuse("\n".join(lines), "table"))  # case ids and metric names come from traces
    failing = comparison.significant_regressions if fail_on.lower() == "regression" else comparison.regressions
    sys.exit(1 if failing else 0)


@runs_command.command("trend")
@click.argument("metric")
@click.option("-n", "--limit", type=click.IntRange(min=1), default=20, show_default=True, help="How many runs.")
@click.option("--json", "as_json", is_flag=True, help="One JSON document instead of the table.")
@click.option("--store", metavar="PATH|URL", help=STORE_HELP)
def trend_command(metric: str, limit: int, as_json: bool, store: Optional[str]) -> None:
    """METRIC over the latest runs that have it, oldest first: its pass rate and mean score in each.

    A judge's calibration over time: 'runs trend calibration.kappa:NAME' (mean score = κ) and
    'runs trend calibration.agreement:NAME' (pass rate = agreement with the human labels); see docs/trust.md.
    """
    from ..report._workflow import defuse
    from ..results.intervals import format_rate_interval
    from ..store import metric_trend

    db = open_store(store)
    try:
        points = metric_trend(db, metric, limit=limit)
    finally:
        db.close()
    if as_json:
        click.echo(defuse(json.dumps(points, indent=2), "json"))
        return
    if not points:
        click.echo(defuse(f"no stored run has metric {metric}", "table"))
        return
    rows = [("RUN", "STARTED", "STATUS", "ROWS", "PASS RATE", "MEAN SCORE")]
    for p in points:
        mean = "-" if p["mean_score"] is None else f"{p['mean_score']:.3f}"
        rows.append((p["run_id"], str(p["started_at"])[:19].replace("T", " "), p["status"], str(p["rows"]),
                     format_rate_interval(p["passed"], p["evaluated"]) if p["evaluated"] else "-", mean))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    click.echo(defuse("\n".join("  ".join(c.ljust(widths[i]) for i, c in enumerate(row)).rstrip() for row in rows),
                      "table"))


@click.group("store", context_settings={"help_option_names": ["-h", "--help"]})
def store_command() -> None:
    """The run store itself: where it is, its schema."""


@store_command.command("migrate")
@click.option("--store", metavar="PATH|URL", help=STORE_HELP)
def migrate_command(store: Optional[str]) -> None:
    """Create or upgrade the store's schema (needed once per Postgres database and per upgrade)."""
    from ..store import SCHEMA_VERSION, connect, store_location

    location = store_location(store)
    db = connect(location, migrate=False)
    try:
        applied = db.migrate()
    finally:
        db.close()
    done = f"applied migration(s) {', '.join(map(str, applied))}" if applied else "already up to date"
    click.echo(f"run store schema version {SCHEMA_VERSION}: {done}")


@store_command.command("path")
@click.option("--store", metavar="PATH|URL", help=STORE_HELP)
def path_command(store: Optional[str]) -> None:
    """Print where runs are recorded (passwords in URLs hidden)."""
    from ..core.redact import redact_url
    from ..store import store_location

    click.echo(redact_url(store_location(store)))


def _short(command: str, width: int = 60) -> str:
    return command if len(command) <= width else command[: width - 1] + "…"
