"""``agentevals calibrate``: an evaluator (usually an LLM judge) against human labels; κ, self-consistency, probes."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Optional

import click

from ._choices import RegistryChoice
from ._store import STORE_HELP

__all__ = ["calibrate_command", "format_calibration", "render_calibration"]


@click.command("calibrate", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("trace_files", nargs=-1, required=True, metavar="TRACES...")
@click.option("-c", "--config", "config_path", required=True, type=click.Path(dir_okay=False),
              help="eval_config.yaml holding the evaluator.")
@click.option("-e", "--eval-set", type=click.Path(dir_okay=False), help="ADK EvalSet JSON with the golden cases.")
@click.option("--evaluator", "evaluator", required=True, metavar="NAME", help="The evaluator (its name in the config).")
@click.option("--labels", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Labels file (JSONL or CSV: case, verdict, score, metric, labeler, and paraphrase for the "
              "paraphrase probe); cases matched by case id.")
@click.option("--run", "run", metavar="RUN", help="Use the run store's labels of RUN (id, unique prefix or latest).")
@click.option("--repeat", type=click.IntRange(min=1), default=1, show_default=True,
              help="Ask the evaluator N times on the same cases: self-consistency (flip rate).")
@click.option("--probes", metavar="LIST", help="Bias probes, comma-separated: position, verbosity, label-order, "
              "paraphrase (docs/trust.md).")
@click.option("--min-kappa", type=click.FloatRange(-1.0, 1.0), metavar="K", help="Exit 1 when κ is below K.")
@click.option("-f", "--format", "trace_format",
              type=RegistryChoice("agentevals.traces.formats:TRACE_FORMATS", case_sensitive=False),
              help="Trace format (default: detected).")
@click.option("-o", "--output", "output", type=click.Choice(["table", "json", "html"]),
              help="What stdout shows: table (default), json, or html (one self-contained page).")
@click.option("--output-file", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Also write the report to FILE (with no -o: the format its extension names, .json .html).")
@click.option("--store", metavar="PATH|URL", help=STORE_HELP)
@click.option("--no-store", is_flag=True, help="Do not record the calibration in the run store.")
def calibrate_command(trace_files: tuple[str, ...], config_path: str, eval_set: Optional[str], evaluator: str,
                      labels: Optional[Path], run: Optional[str], repeat: int, probes: Optional[str],
                      min_kappa: Optional[float], trace_format: Optional[str], output: Optional[str],
                      output_file: Optional[Path], store: Optional[str], no_store: bool) -> None:
    """Score TRACES with one evaluator of the config and compare its verdicts with human labels: agreement,
    Cohen's κ with a bootstrap 95% interval, confusion, precision/recall per verdict, the base rate, score
    correlation and MAE; --repeat gives the flip rate, --probes the judge's biases. The result is stored as a
    run ('runs trend calibration.kappa:NAME' shows κ over time). Exit 1 below --min-kappa or on a failed probe.
    """
    from ..errors import ConfigError
    from ..trace_sources import expand_globs
    from ._calibrate import CalibrateRequest, calibrate, parse_probes

    if (labels is None) == (run is None):
        raise ConfigError("calibrate: give the human labels with exactly one of --labels FILE or --run RUN")
    if output_file is not None and not output_file.parent.is_dir():  # refused before the judge is asked anything
        raise ConfigError(f"--output-file {output_file}: its folder {output_file.parent} does not exist")
    request = CalibrateRequest(inputs=expand_globs(trace_files), config_path=config_path, evaluator=evaluator,
                               labels=labels, run=run, eval_set=eval_set, trace_format=trace_format, repeat=repeat,
                               probes=parse_probes(probes), min_kappa=min_kappa, store=store, no_store=no_store)
    document, code = calibrate(request)
    click.echo(render_calibration(document, output or "table"))
    sys.stdout.flush()
    if output_file is not None:
        fmt = output or _FILE_FORMATS.get(output_file.suffix.lower(), "table")
        from ..core._atomic import replaced

        try:
            with replaced(output_file) as fh:
                fh.write(render_calibration(document, fmt) + "\n")
        except OSError as exc:
            raise ConfigError(f"--output-file {output_file}: cannot write it: {exc.strerror or exc}") from None
    sys.exit(code)


_FILE_FORMATS = {".json": "json", ".html": "html", ".htm": "html"}


def render_calibration(document: dict[str, Any], fmt: str) -> str:
    """The calibration ``document`` as ``fmt`` (table, json or html)."""
    if fmt == "json":
        return json.dumps(document, indent=2)
    if fmt == "html":
        from ..report.calibration_html import render_calibration_html

        return render_calibration_html(document)
    return format_calibration(document)


def format_calibration(doc: dict[str, Any]) -> str:
    """The table ``agentevals calibrate`` prints (the JSON document's figures, one per line)."""
    from ..report.calibration_html import figure_text as _with_interval
    from ..report.calibration_html import number_text as _num
    from ..report.calibration_html import rate_text as _rate

    lines = [f"calibrate {doc['evaluator']} ({doc['type']}): {doc['n']} of {doc['cases']} cases compared with the "
             f"labels of {doc['labels']['source']}"]
    problems = doc["evaluator_problems"]
    if problems["count"]:
        lines.append(f"  {problems['count']} case(s) without a verdict (ERROR/NOT_EVALUATED): {problems['first']}")
    unmatched = doc["unmatched"]["labelled_without_verdict"]
    if unmatched and len(unmatched) > problems["count"]:
        shown = ", ".join(unmatched[:3]) + (", …" if len(unmatched) > 3 else "")
        lines.append(f"  {len(unmatched)} labelled case(s) not compared (not in these traces, or no verdict): {shown}")
    if doc["labels"]["tied"]:
        lines.append(f"  left out, their labels tie: {', '.join(doc['labels']['tied'])}")
    lines += [f"  agreement          {_with_interval(doc['agreement'])}",
              f"  kappa              {_with_interval(doc['kappa'])}",
              f"  base rate          human pass {_rate(doc['base_rate_interval'])} · evaluator pass "
              f"{_rate(doc['evaluator_pass_rate_interval'])}"]
    confusion = doc["confusion"]
    lines += ["  confusion          human \\ evaluator   pass   fail",
              *(f"                     {h:<18} {confusion[h]['pass']:>5}  {confusion[h]['fail']:>5}"
                for h in ("pass", "fail"))]
    per = doc["per_class"]
    lines.append("  per verdict        " + " · ".join(
        f"{c}: precision {_num(per[c]['precision'], '.2f')} recall {_num(per[c]['recall'], '.2f')}" for c in per))
    scores = doc["scores"]
    if scores["n"]:
        lines.append(f"  scores ({scores['n']} cases)  pearson {_num(scores['pearson'])} · spearman "
                     f"{_num(scores['spearman'])} · MAE {_with_interval(scores['mae'])}")
    sc = doc["self_consistency"]
    if sc["repeats"] > 1:
        lines.append(f"  self-consistency   {sc['repeats']} asks: flip rate {_with_interval(sc['flip_rate'])}; "
                     f"{sc['cases_flipped']} of {sc['cases_repeated']} cases flipped")
    if doc["probes"]:
        tol = doc["probe_tolerance"]
        lines.append(f"probes (fail beyond {tol['verdict_change_rate']:.0%} verdicts changed or "
                     f"±{tol['mean_score_shift']:g} mean score shift, by the 95% interval):")
        for p in doc["probes"]:
            mark = f"FAILS: {p['why']}" if p["fails"] else "ok"
            lines.append(f"  {p['probe']:<12} {p['n']} cases · verdicts changed {_with_interval(p['verdict_change_rate'])}"
                         f" · score shift {_with_interval(p['mean_score_shift'], '+.3f')} · {mark}")
    total = doc["judge_usage"]["total"]
    lines.append(f"judge usage: {total.get('calls', 0)} calls, {total.get('input_tokens', 0)} in / "
                 f"{total.get('output_tokens', 0)} out tokens, ${total.get('cost_usd', 0.0):.4f}")
    if doc.get("run_id"):
        lines.append(f"stored as run {doc['run_id']} ('agentevals runs trend calibration.kappa:{doc['evaluator']}')")
    gate = doc.get("gate")
    if gate is not None:
        lines.append(f"gate: kappa {_num(doc['kappa']['value'])} {'>=' if gate['passed'] else '<'} "
                     f"{gate['min_kappa']:g}: {'passed' if gate['passed'] else 'FAILED'}")
    return "\n".join(lines)
