"""``agentevals labels import|export|add``: human labels of stored cases, in and out of the run store."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import click

from ._store import STORE_HELP, open_store

__all__ = ["labels_command"]


@click.group("labels", context_settings={"help_option_names": ["-h", "--help"]})
def labels_command() -> None:
    """Human labels (pass/fail, a score, a note, who) of stored cases and metrics: import, export, add.

    Files are JSONL or CSV with the columns run, case, metric (empty: the whole case), verdict (pass/fail),
    score, note, labeler (and created_at). 'agentevals runs show RUN' shows them beside the machine verdicts.
    """


@labels_command.command("import")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["jsonl", "csv"]), help="File format (default: by extension).")
@click.option("--run", "run", metavar="RUN", help="The run of rows whose run column is empty or absent (id, unique "
              "prefix or latest).")
@click.option("--store", metavar="PATH|URL", help=STORE_HELP)
def import_command(file: Path, fmt: Optional[str], run: Optional[str], store: Optional[str]) -> None:
    """Import the labels of FILE, all or nothing: a bad row (unknown run, case or metric, a verdict that is not
    pass/fail, a score outside [0, 1]) is one line naming FILE:LINE, and no row is stored. A row for a case,
    metric and labeler already labelled replaces that label."""
    from ..store._label_files import import_labels

    db = open_store(store)
    try:
        records = import_labels(db, file, fmt=fmt, run=run)
    finally:
        db.close()
    runs = len({r.run_id for r in records})
    click.echo(f"imported {len(records)} label{'s' if len(records) != 1 else ''} of {runs} "
               f"run{'s' if runs != 1 else ''} from {file}")


@labels_command.command("export")
@click.argument("run", required=False)
@click.option("-o", "--output", "output", metavar="FILE", help="Write to FILE (default: standard output).")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "csv"]),
              help="File format (default: by the extension of -o, jsonl on standard output).")
@click.option("--store", metavar="PATH|URL", help=STORE_HELP)
def export_command(run: Optional[str], output: Optional[str], fmt: Optional[str], store: Optional[str]) -> None:
    """Export the labels of RUN (id, unique prefix or latest), or of every run, as JSONL or CSV: the file
    'labels import' reads back. In CSV, a text cell a spreadsheet would run as a formula (starting with =, +, -,
    @, a tab or a carriage return) starts with ' (import removes it)."""
    from ..store._label_files import write_labels_file

    db = open_store(store)
    try:
        records = db.labels(db.resolve(run) if run else None)
    finally:
        db.close()
    path = None if output in (None, "-") else Path(output)
    kind = write_labels_file(records, path, fmt=fmt, stream=sys.stdout)
    if path is not None:
        click.echo(f"wrote {len(records)} label{'s' if len(records) != 1 else ''} to {path} ({kind})", err=True)


@labels_command.command("add")
@click.argument("run")
@click.argument("case")
@click.option("--verdict", type=click.Choice(["pass", "fail"]), help="The human verdict.")
@click.option("--score", type=float, help="A human score in [0, 1] (with or instead of --verdict).")
@click.option("--metric", metavar="NAME", help="Label this metric of the case (default: the whole case).")
@click.option("--note", help="Why.")
@click.option("--labeler", metavar="NAME", help="Who labels (default: $AGENTEVALS_LABELER, else the login name).")
@click.option("--store", metavar="PATH|URL", help=STORE_HELP)
def add_command(run: str, case: str, verdict: Optional[str], score: Optional[float], metric: Optional[str],
                note: Optional[str], labeler: Optional[str], store: Optional[str]) -> None:
    """Label CASE (a case id as 'runs show' prints it) of RUN (id, unique prefix or latest), or one --metric of
    it; labelling the same case and metric again replaces your label."""
    db = open_store(store)
    try:
        run_id = db.resolve(run)
        record = db.add_label(run_id, case, verdict=verdict, score=score, metric=metric, note=note,
                              labeler=labeler if labeler is not None else _default_labeler())
    finally:
        db.close()
    label = record.label
    what = f"metric {label.metric} of case {record.case_id}" if label.metric else f"case {record.case_id}"
    given = " · ".join(x for x in (label.verdict, f"score {label.score:g}" if label.score is not None else None) if x)
    click.echo(f"labelled {what} of run {run_id}: {given}" + (f" ({label.labeler})" if label.labeler else ""))


def _default_labeler() -> Optional[str]:
    import getpass
    import os

    try:
        return os.environ.get("AGENTEVALS_LABELER") or getpass.getuser()
    except (OSError, KeyError):  # no login name (a container without a passwd entry)
        return None
