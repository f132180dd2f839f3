"""``agentevals calibrate -o html``: the calibration as one self-contained page (jinja2, autoescaped, inline
CSS, no script, no network) with the figures the table prints.

Example:
    ```python
    document, code = calibrate(request)            # cli/_calibrate.py: the -o json document
    Path("calibration.html").write_text(render_calibration_html(document))
    figure_text({"value": 0.8, "interval": [0.7, 0.9]})   # "0.800 (95% CI 0.700 to 0.900)"
    ```
"""

from __future__ import annotations

from typing import Any, Optional

from ..results.intervals import format_rate_interval

__all__ = ["figure_text", "number_text", "rate_text", "render_calibration_html"]

VERDICTS = ("pass", "fail")


def number_text(value: Optional[float], fmt: str = ".3f") -> str:
    """``0.812``; ``n/a`` for None."""
    return "n/a" if value is None else format(value, fmt)


def figure_text(figure: dict[str, Any], fmt: str = ".3f") -> str:
    """A ``{value, interval}`` figure of the calibration document with its bootstrap 95% interval."""
    interval = figure.get("interval")
    around = f" (95% CI {interval[0]:{fmt}} to {interval[1]:{fmt}})" if interval else ""
    return f"{number_text(figure.get('value'), fmt)}{around}"


def rate_text(rate: dict[str, Any]) -> str:
    """A ``rate_interval`` dict as every report prints a pass rate: ``50.00% (2/4, 95% CI 15.00–85.00%)``."""
    return format_rate_interval(rate["passed"], rate["evaluated"])


def render_calibration_html(doc: dict[str, Any]) -> str:
    """The page of ``doc`` (the ``calibrate -o json`` document); trace and label text is escaped."""
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("agentevals.report", "templates"),
                             autoescape=True, trim_blocks=True, lstrip_blocks=True)
    scores, sc = doc["scores"], doc["self_consistency"]
    rows = [("agreement", figure_text(doc["agreement"])), ("Cohen's κ", figure_text(doc["kappa"])),
            ("human pass rate (base rate)", rate_text(doc["base_rate_interval"])),
            ("evaluator pass rate", rate_text(doc["evaluator_pass_rate_interval"]))]
    if scores["n"]:
        rows += [(f"score correlation ({scores['n']} cases)", f"pearson {number_text(scores['pearson'])} · "
                  f"spearman {number_text(scores['spearman'])}"), ("score MAE", figure_text(scores["mae"]))]
    if sc["repeats"] > 1:
        rows.append((f"flip rate ({sc['repeats']} asks)", f"{figure_text(sc['flip_rate'])}; "
                     f"{sc['cases_flipped']} of {sc['cases_repeated']} cases flipped"))
    per = doc["per_class"]
    probes = [{**p, "changed": figure_text(p["verdict_change_rate"]),
               "shift": figure_text(p["mean_score_shift"], "+.3f")} for p in doc["probes"]]
    total = doc["judge_usage"]["total"]
    gate = doc.get("gate")
    return env.get_template("calibration.html.j2").render(
        doc=doc, rows=rows, verdicts=VERDICTS, confusion=doc["confusion"], probes=probes,
        per_class=[(c, number_text(per[c]["precision"], ".2f"), number_text(per[c]["recall"], ".2f"),
                    int(per[c].get("support") or 0)) for c in per],
        usage=f"{total.get('calls', 0)} calls, {total.get('input_tokens', 0)} in / "
              f"{total.get('output_tokens', 0)} out tokens, ${total.get('cost_usd', 0.0):.4f}",
        gate=None if gate is None else f"κ {number_text(doc['kappa']['value'])} "
                                       f"{'>=' if gate['passed'] else '<'} {gate['min_kappa']:g}: "
                                       f"{'passed' if gate['passed'] else 'FAILED'}",
        failed=bool(gate and not gate["passed"]) or any(p["fails"] for p in doc["probes"]))
