"""What a user looks for on the existing pages (#26): model, tokens, latency and cost per session and case,
latency and token charts with axes and units, a reason on every failed row, the live session ↔ live run case
links, and why a conversation was NOT_EVALUATED. Real ``agentevals run`` and ``agentevals serve`` processes,
plain HTTP; every figure expected is computed here from the trace documents the test sends or reads."""

from __future__ import annotations

import json
import os
import re
import statistics
import time
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Optional

import pytest
import requests
from agentevals.evaluators.pricing import Prices
from support.asgi import serving_store
from support.chromium import Browser, find_chromium
from support.live_server import EXAMPLES, agentevals, listed_runs
from support.polling import wait_for
from support.weather_agent import ANSWER, QUESTION, weather_eval_set

SAMPLES = [EXAMPLES / "traces" / n for n in ("helm.json", "k8s.json", "helm_3.json")]
EVAL_SET = EXAMPLES / "evalsets/eval_set_helm.json"
DASH = "—"

needs_chromium = pytest.mark.skipif(find_chromium() is None, reason="chromium is not installed (apt-get install chromium)")


# ---- what the pages show, read back as tables ----

class _Tables(HTMLParser):
    """Every ``<table>`` of a page: its class and its rows' cell texts (whitespace collapsed)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[tuple[str, list[list[str]]]] = []
        self._cell: Optional[list[str]] = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, Optional[str]]]) -> None:
        if tag == "table":
            self.tables.append((dict(attrs).get("class") or "", []))
        elif tag == "tr" and self.tables:
            self.tables[-1][1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self.tables and self.tables[-1][1]:
            self.tables[-1][1][-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def table(html: str, css: str) -> list[dict[str, str]]:
    """The rows of the first table of class ``css`` as {header: cell}."""
    parser = _Tables()
    parser.feed(html)
    (head, *body) = next(rows for classes, rows in parser.tables if css in classes.split())
    return [dict(zip(head, row, strict=False)) for row in body]


def figure(html: str, css: str) -> str:
    """The SVG chart ``<figure class="chart {css}">…</figure>`` of a page."""
    start = html.index(f'<figure class="chart {css}">')
    return html[start:html.index("</figure>", start)]


# ---- the expected figures, from the traces themselves ----

def fmt_latency(ms: float) -> str:
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.3g} s" if ms < 10_000 else f"{ms / 1000:.1f} s"


def expected_cells(model: Optional[str], tokens_in: Optional[int], tokens_out: Optional[int],
                   latency_ms: Optional[float]) -> dict[str, str]:
    price = Prices().find(model) if model and "," not in model else None
    cost = (price.cost(tokens_in, tokens_out) if price and tokens_in is not None and tokens_out is not None else None)
    return {"Model": model or DASH, "Tokens in": DASH if tokens_in is None else f"{tokens_in:,}",
            "Tokens out": DASH if tokens_out is None else f"{tokens_out:,}",
            "Latency": DASH if latency_ms is None else fmt_latency(latency_ms),
            "Cost": DASH if cost is None else f"${cost:.4f}"}


def jaeger_figures(path: Path) -> tuple[str, dict[str, Any]]:
    """(trace id, figures) of a one-turn ADK trace in Jaeger JSON: its ``call_llm`` spans' model and token
    usage, its ``invocation`` span's duration (µs in Jaeger)."""
    (trace,) = json.loads(path.read_text())["data"]
    spans = [(s["operationName"], s["duration"], {t["key"]: t["value"] for t in s["tags"]}) for s in trace["spans"]]
    llm = [tags for name, _, tags in spans if name == "call_llm"]
    (turn,) = [duration for name, duration, _ in spans if name == "invocation"]
    models = sorted({tags["gen_ai.request.model"] for tags in llm})
    return trace["traceID"], {"model": ", ".join(models), "tokens_in": sum(t["gen_ai.usage.input_tokens"] for t in llm),
                              "tokens_out": sum(t["gen_ai.usage.output_tokens"] for t in llm), "latency_ms": turn / 1000}


def nearest(values: list[float], p: float) -> float:
    """The documented percentile rule: the value at index int(n * p) of the sorted values."""
    ordered = sorted(values)
    return ordered[min(int(len(ordered) * p), len(ordered) - 1)]


# ---- a stored run of the shipped samples ----

@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> tuple[str, str, str]:
    """Two real ``agentevals run``s of the shipped samples (the second with ``-t 0.9``); (store, first, second)."""
    store = str(tmp_path_factory.mktemp("metrics") / "runs.sqlite")
    ids = []
    for extra in ((), ("-t", "0.9")):
        result = agentevals("run", *map(str, SAMPLES), "-e", str(EVAL_SET), "-m", "tool_trajectory_avg_score",
                            "-m", "response_match_score", "--store", store, "-o", "summary", *extra)
        assert result.returncode == 1, result.stdout + result.stderr  # the shipped samples fail on purpose
        ids.append(listed_runs(store)[0]["run_id"])
    return store, ids[0], ids[1]


def ui_get(store: str, *paths: str) -> list[requests.Response]:
    with serving_store(store) as url:
        return [requests.get(url + path, timeout=30) for path in paths]


def test_run_and_case_pages_show_each_cases_figures_from_its_trace(stored):
    store, first, _ = stored
    run_page, *case_pages = ui_get(store, f"/runs/{first}", *(f"/runs/{first}/cases/{i}" for i in range(3)))
    assert run_page.status_code == 200
    expected = {trace_id: expected_cells(**figures) for trace_id, figures in map(jaeger_figures, SAMPLES)}
    assert all(c != DASH for cells in expected.values() for k, c in cells.items() if k != "Cost")  # all known
    shown = {row["Case"]: {"Model": row["Model"], "Tokens in": row["Tokens in / out"].split(" / ")[0],
                           "Tokens out": row["Tokens in / out"].split(" / ")[1], "Latency": row["Latency"],
                           "Cost": row["Cost"]} for row in table(run_page.text, "cases")}
    assert shown == expected
    for page in case_pages:
        case_id = re.search(r"<h1>Case <code>([0-9a-f]+)</code>", page.text).group(1)
        (cells,) = table(page.text, "figures")
        assert {k: cells[k] for k in ("Model", "Tokens in", "Tokens out", "Latency", "Cost")} == expected[case_id]


def test_run_page_charts_the_distribution_over_its_cases(stored):
    store, first, _ = stored
    (page,) = ui_get(store, f"/runs/{first}")
    figures = [jaeger_figures(path)[1] for path in SAMPLES]
    latencies = [f["latency_ms"] for f in figures]
    rows = {r["Per case"]: r for r in table(page.text, "percentiles")}
    assert rows["latency"]["p50"] == fmt_latency(statistics.median(latencies))
    assert rows["latency"]["p95"] == fmt_latency(nearest(latencies, 0.95))
    assert rows["latency"]["p99"] == fmt_latency(nearest(latencies, 0.99))
    assert rows["tokens in"]["p50"] == f"{statistics.median(f['tokens_in'] for f in figures):,.0f}"
    assert rows["tokens out"]["p95"] == f"{nearest([f['tokens_out'] for f in figures], 0.95):,}"
    assert rows["latency"]["Cases with it"] == "3 of 3"

    latency = figure(page.text, "latency")
    assert '<text class="axis-title y"' in latency and ">latency (s)</text>" in latency  # the unit, on the axis
    assert ">cases, fastest left (percentile)</text>" in latency
    ticks = re.findall(r'<text class="tick y"[^>]*>([^<]+)</text>', latency)
    assert ticks[0] == "0" and len(ticks) >= 3 and float(ticks[-1]) * 1000 >= max(latencies)
    marks = re.findall(r'<text class="mark"[^>]*>([^<]+)</text>', latency)  # p95 = p99 of 3 cases: one line
    assert marks == [f"p50 {fmt_latency(statistics.median(latencies))}", f"p95, p99 {fmt_latency(max(latencies))}"]
    assert len(re.findall(r"<circle class=\"dot", latency)) == 3
    tokens = figure(page.text, "tokens")
    assert ">tokens per case (tokens)</text>" in tokens
    assert re.findall(r'<span class="key (s\d)">([^<]+)</span>', page.text[page.text.index('<figure class="chart tokens">'):]
                      )[:2] == [("s1", "tokens in"), ("s2", "tokens out")]


def test_trend_over_runs_has_latency_and_token_charts_with_axes(stored):
    store, first, second = stored
    (page,) = ui_get(store, "/runs/trend?metric=response_match_score")
    latency, tokens, metric = figure(page.text, "latency"), figure(page.text, "tokens"), figure(page.text, "metric")
    for chart in (latency, tokens, metric):
        assert '<line class="axis"' in chart and ">run started, UTC (oldest left)</text>" in chart
        assert len(re.findall(r'<text class="tick x[ "]', chart)) == 2  # one label per run
    assert ">latency per case (s)</text>" in latency and ">tokens per case (tokens)</text>" in tokens
    assert ">pass rate · mean score (0–1)</text>" in metric
    # p50, p95, p99: one point per run each; both runs read the same traces, so the same figures
    p95 = nearest([jaeger_figures(path)[1]["latency_ms"] for path in SAMPLES], 0.95)
    assert re.findall(r"<title>([0-9_a-f-]+): p95 ([^<]+)</title>", latency) == [
        (first, fmt_latency(p95)), (second, fmt_latency(p95))]


def test_every_failed_row_says_why_as_the_cli_does(stored):
    store, first, _ = stored
    run_page, *case_pages = ui_get(store, f"/runs/{first}", *(f"/runs/{first}/cases/{i}" for i in range(3)))
    cli = agentevals("run", *map(str, SAMPLES), "-e", str(EVAL_SET), "-m", "tool_trajectory_avg_score",
                     "-m", "response_match_score", "--no-store", "-o", "table")
    printed = {" ".join(line.split()) for line in cli.stdout.splitlines()}
    failed = 0
    for page in case_pages:
        for row in table(page.text, "results"):
            if row["Status"] in ("FAILED", "ERROR", "NOT_EVALUATED"):
                failed += 1
                assert row["Reason"], row
                # each reason line in the UI is a line the CLI printed under that row
                lines = re.findall(r"<div>([^<]+)</div>", row_html(page.text, row["Evaluator"]))
                assert lines and all(" ".join(line.replace("&#34;", '"').replace("&#39;", "'").split()) in printed
                                     for line in lines), (lines, cli.stdout)
    assert failed >= 2
    for row in table(run_page.text, "cases"):
        if row["Status"] in ("FAILED", "ERROR"):
            for name in re.findall(r"(\w+) [\d.]+", row["Results"]):
                assert f"{name}:" in row["Reasons"], row


def row_html(html: str, evaluator: str) -> str:
    """The HTML of the results table's row for ``evaluator``."""
    start = html.index(f"<tr><td>{evaluator}</td>")
    return html[start:html.index("</tr>", start)]


def test_compare_shows_the_preselected_runs_at_once(stored):
    store, first, second = stored
    (page,) = ui_get(store, "/runs/compare")
    assert f'<option value="{first}" selected>' in page.text and f'<option value="{second}" selected>' in page.text
    assert f"baseline {first}: " in page.text and "regression" in page.text
    regressions = table(page.text, "regression")
    assert regressions and {r[first] for r in regressions} == {"PASSED"} and {r[second] for r in regressions} == {"FAILED"}


# ---- live: sessions sent as OTLP JSON ----

def _attr(key: str, value: Any) -> dict[str, Any]:
    kind = "boolValue" if isinstance(value, bool) else "intValue" if isinstance(value, int) else "stringValue"
    return {"key": key, "value": {kind: value}}


def turn_document(conversation: str, start_ns: int, *, model: str, tokens: tuple[int, int], duration_ms: int,
                  city: str = "Paris", last: bool = True) -> dict[str, Any]:
    """One agent turn (a trace) with a chat span carrying model and token usage, in OTLP JSON."""
    trace_id = f"{abs(hash((conversation, start_ns))):032x}"[-32:]
    messages = lambda role, text: json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])  # noqa: E731
    end = start_ns + duration_ms * 1_000_000
    root = {"traceId": trace_id, "spanId": "1" * 16, "name": "invoke_agent weather", "startTimeUnixNano": str(start_ns),
            "endTimeUnixNano": str(end), "attributes": [
                _attr("gen_ai.operation.name", "invoke_agent"), _attr("gen_ai.conversation.id", conversation),
                _attr("gen_ai.input.messages", messages("user", QUESTION)),
                _attr("gen_ai.output.messages", messages("assistant", ANSWER)),
                *([_attr("agentevals.session.complete", True)] if last else [])]}
    chat = {"traceId": trace_id, "spanId": "2" * 16, "parentSpanId": "1" * 16, "name": f"chat {model}",
            "startTimeUnixNano": str(start_ns + 1_000_000), "endTimeUnixNano": str(end - 2_000_000), "attributes": [
                _attr("gen_ai.operation.name", "chat"), _attr("gen_ai.request.model", model),
                _attr("gen_ai.usage.input_tokens", tokens[0]), _attr("gen_ai.usage.output_tokens", tokens[1])]}
    tool = {"traceId": trace_id, "spanId": "3" * 16, "parentSpanId": "1" * 16, "name": "execute_tool get_weather",
            "startTimeUnixNano": str(end - 2_000_000), "endTimeUnixNano": str(end - 1_000_000), "attributes": [
                _attr("gen_ai.operation.name", "execute_tool"), _attr("gen_ai.tool.name", "get_weather"),
                _attr("gen_ai.tool.call.arguments", json.dumps({"city": city})),
                _attr("gen_ai.tool.call.result", "sunny")]}
    return {"resourceSpans": [{"resource": {"attributes": [_attr("service.name", "weather")]},
                               "scopeSpans": [{"scope": {"name": "weather"}, "spans": [root, chat, tool]}]}]}


def document_figures(documents: list[dict[str, Any]]) -> dict[str, Any]:
    """Model, tokens and the median turn duration of a conversation's documents, read from their spans."""
    spans = [s for d in documents for s in d["resourceSpans"][0]["scopeSpans"][0]["spans"]]
    attrs = [{a["key"]: next(iter(a["value"].values())) for a in s["attributes"]} for s in spans]
    chats = [a for a in attrs if a["gen_ai.operation.name"] == "chat"]
    turns = [(int(s["endTimeUnixNano"]) - int(s["startTimeUnixNano"])) / 1e6
             for s, a in zip(spans, attrs, strict=True) if a["gen_ai.operation.name"] == "invoke_agent"]
    return {"model": ", ".join(sorted({a["gen_ai.request.model"] for a in chats})),
            "tokens_in": sum(a["gen_ai.usage.input_tokens"] for a in chats),
            "tokens_out": sum(a["gen_ai.usage.output_tokens"] for a in chats), "latency_ms": statistics.median(turns)}


def test_live_sessions_show_figures_reasons_and_link_to_their_live_case(serve, tmp_path):
    weather_eval_set(tmp_path)  # one case, one turn: Paris
    store = str(tmp_path / "runs.sqlite")
    server = serve("--eval-sets", str(tmp_path), "--store", store, "--session-idle", "600")
    ui = server.api.removesuffix("/api")
    now = time.time_ns()
    one = [turn_document("conv-one", now, model="gpt-4.1-mini", tokens=(1234, 56), duration_ms=1850)]
    two = [turn_document("conv-two", now, model="gpt-4.1-mini", tokens=(900, 40), duration_ms=700, last=False),
           turn_document("conv-two", now + 2_000_000_000, model="gpt-4.1-mini", tokens=(1500, 80), duration_ms=2300)]
    for document in (*one, *two):
        assert requests.post(f"{server.otlp_http}/v1/traces", json=document, timeout=10).status_code == 200
    for conversation in ("conv-one", "conv-two"):
        server.wait_for_session(lambda s, c=conversation: s["session_id"] == c)

    listed = {row["Session"]: row for row in table(requests.get(f"{ui}/", timeout=10).text, "sessions")}
    for conversation, documents in (("conv-one", one), ("conv-two", two)):
        want = expected_cells(**document_figures(documents))
        assert want["Cost"] != DASH  # gpt-4.1-mini has a price in the table
        assert {k: listed[conversation][k] for k in want} == want, conversation

    # a 2-turn conversation against the 1-turn case: NOT_EVALUATED, and why, on the list and the session page
    hint = "the session has 2 turns, eval case 'paris' has 1: turns are scored in pairs by position"
    assert hint in listed["conv-two"]["Results"]
    session = requests.get(f"{ui}/sessions/conv-two", timeout=10).text
    (row, *_) = [r for r in table(session, "results") if r["Status"] == "NOT_EVALUATED"]
    assert hint in row["Reason"]
    (cells,) = table(session, "figures")
    assert cells["Latency (median of 2 turns)"] == expected_cells(**document_figures(two))["Latency"]

    # the session page links to its case in the live run, and that case page back to the session
    (live,) = listed_runs(store)
    # the live run records the case just after the session is stored
    link = wait_for(lambda: re.search(r'<a class="live-case" href="([^"]+)"',
                                      requests.get(f"{ui}/sessions/conv-two", timeout=10).text),
                    timeout=30, what="live-case link on the session page")
    assert link and re.fullmatch(rf"/runs/{live['run_id']}/cases/\d+", link.group(1))
    case = requests.get(ui + link.group(1), timeout=10)
    assert case.status_code == 200 and "<h1>Case <code>conv-two</code>" in case.text
    assert '<a class="session" href="/sessions/conv-two">' in case.text
    assert hint in " ".join(r["Reason"] for r in table(case.text, "results"))

    # the same hint from the CLI, on the same conversation read from a file
    traces = tmp_path / "conv-two.json"
    traces.write_text(json.dumps({"resourceSpans": [d["resourceSpans"][0] for d in two]}))
    cli = agentevals("run", str(traces), "-e", str(tmp_path / "weather.json"), "-m", "tool_trajectory_avg_score",
                     "--no-store")
    assert f"reason: {hint}" in cli.stdout, cli.stdout + cli.stderr


def test_unknown_figures_show_a_dash(serve, tmp_path):
    """A trace without LLM spans: no model, tokens or cost; its latency is still the turn's duration."""
    server = serve()
    ui = server.api.removesuffix("/api")
    document = turn_document("no-llm", time.time_ns(), model="x", tokens=(1, 1), duration_ms=420)
    spans = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    spans[:] = [s for s in spans if not s["name"].startswith("chat")]
    assert requests.post(f"{server.otlp_http}/v1/traces", json=document, timeout=10).status_code == 200
    server.wait_for_session(lambda s: s["session_id"] == "no-llm")
    (row,) = [r for r in table(requests.get(f"{ui}/", timeout=10).text, "sessions") if r["Session"] == "no-llm"]
    assert {k: row[k] for k in ("Model", "Tokens in", "Tokens out", "Latency", "Cost")} == {
        "Model": DASH, "Tokens in": DASH, "Tokens out": DASH, "Latency": "420 ms", "Cost": DASH}


# ---- in a browser: the charts render under the CSP, styled by app.css, with no console message ----

SCREENSHOTS = os.environ.get("AGENTEVALS_SCREENSHOTS")
"""A folder: the test saves the sessions list, a session page and a run page with its charts there (docs/img)."""


@needs_chromium
def test_pages_with_charts_in_chromium(serve, stored, tmp_path):
    store, first, _ = stored
    weather_eval_set(tmp_path)
    server = serve("--eval-sets", str(tmp_path), "--store", store, "--session-idle", "600")
    ui = server.api.removesuffix("/api")
    now = time.time_ns()
    documents = [turn_document("checkout-42", now, model="gpt-4.1-mini", tokens=(1234, 56), duration_ms=1850),
                 turn_document("checkout-43", now + 10**9, model="gpt-4.1-mini", tokens=(2210, 131), duration_ms=3420,
                               city="Rome"),
                 turn_document("support-7", now + 2 * 10**9, model="gpt-4.1-mini", tokens=(900, 40), duration_ms=700,
                               last=False),
                 turn_document("support-7", now + 5 * 10**9, model="gpt-4.1-mini", tokens=(1500, 80), duration_ms=2300)]
    for document in documents:
        assert requests.post(f"{server.otlp_http}/v1/traces", json=document, timeout=10).status_code == 200
    for session in ("checkout-42", "checkout-43", "support-7"):
        server.wait_for_session(lambda s, c=session: s["session_id"] == c)
    stroke = "getComputedStyle(document.querySelector('figure.chart.{} g.series.s1 .line')).stroke"
    with Browser() as browser:
        browser.open(f"{ui}/")
        cells = browser.js("Array.from(document.querySelectorAll('table.sessions tbody tr')).map(r => r.innerText)")
        assert len(cells) == 3 and all("gpt-4.1-mini" in row for row in cells)
        _shoot(browser, "ui-sessions.png")
        browser.open(f"{ui}/sessions/checkout-43")
        assert "tool_trajectory_avg_score" in browser.js("document.querySelector('table.results').innerText")
        _shoot(browser, "ui-session.png")
        browser.open(f"{ui}/trend?metric=tool_trajectory_avg_score")
        assert browser.js(stroke.format("latency")) == "rgb(47, 111, 219)"  # app.css styles the SVG (no inline style)
        assert browser.js("document.querySelectorAll('figure.chart.tokens g.series circle').length") == 6  # in and out
        browser.open(f"{ui}/runs/{first}")
        for chart in ("latency", "tokens"):
            assert browser.js(stroke.format(chart)) == "rgb(47, 111, 219)"
            box = browser.js(f"(() => {{ const b = document.querySelector('figure.chart.{chart} text.axis-title.y')"
                             ".getBoundingClientRect(); return [b.width, b.height]; })()")
            assert min(box) > 0  # the axis title is drawn (rotated: taller than wide)
        assert browser.js("document.documentElement.scrollWidth <= window.innerWidth")  # no sideways scrolling
        _shoot(browser, "ui-run.png", scroll="table.percentiles")
        browser.open(f"{ui}/runs/trend?metric=response_match_score")
        assert browser.js("document.querySelectorAll('figure.chart.latency g.series').length") == 3  # p50, p95, p99
        _shoot(browser, "ui-runs-trend.png", scroll="figure.chart.latency")
        assert browser.errors == [], browser.messages
        assert browser.messages == []


def _shoot(browser: Browser, name: str, *, scroll: Optional[str] = None) -> None:
    """Save the viewport as ``$AGENTEVALS_SCREENSHOTS/name`` (nothing when the variable is unset)."""
    if not SCREENSHOTS:
        return
    if scroll:  # the element, under its heading
        browser.js(f"window.scrollTo(0, document.querySelector({scroll!r}).getBoundingClientRect().top + scrollY - 60)")
    Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
    browser.screenshot(str(Path(SCREENSHOTS) / name))
