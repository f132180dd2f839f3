"""Golden table: the deterministic AgentV types scored as AgentV documents them.

Each row re-creates an input of an AgentV example (``examples/features/assert``, ``assert-extended``,
``tool-trajectory-simple``, ``latency-assertions``, ``document-extraction``, ``execution-metrics``,
``agent-skills-evals``, ``composite``, ``threshold-evaluator``) and the score, verdict, hits and misses
AgentV gives it.
"""

from __future__ import annotations

from typing import Any

import pytest
from agentevals.results import Status, Verdict

PASS, BORDERLINE, FAIL = Verdict.PASS, Verdict.BORDERLINE, Verdict.FAIL
ANSWER = "The capital of France is Paris."
INVOICE = ('{"invoice_number": "INV-001", "invoice_date": "15-JAN-2025", "currency": "USD", '
           '"supplier": {"name": "Acme Corp"}, "total": 1250.5, "line_items": [{"amount": 100}]}')
PERF = {"tokens": {"total_prompt": 1500, "total_output": 300, "cache_read_tokens": 1000},
        "counts": {"llm_calls": 3, "tool_calls": 2}, "latency": {"overall": {"max": 4200.5, "count": 1}}}


def row(id: str, entry: dict[str, Any], case: dict[str, Any], score: float, verdict: Verdict,
        hits: tuple[str, ...] = (), misses: tuple[str, ...] = (), spans: tuple[tuple[Any, ...], ...] = ()) -> Any:
    return pytest.param(entry, case, score, verdict, hits, misses, spans, id=id)


def field(path: str, **extra: Any) -> dict[str, Any]:
    return {"path": path, **extra}


GOLDEN = [
    # --- assertions (examples/features/assert, assert-extended) ---
    row("contains/hit", {"type": "contains", "value": "Paris"}, {}, 1, PASS, hits=('Output contains "Paris"',)),
    row("contains/case-sensitive", {"type": "contains", "value": "paris"}, {}, 0, FAIL,
        misses=('Output does not contain "paris"',)),
    row("contains/no-trim", {"type": "contains", "value": "Paris. "}, {}, 0, FAIL),
    row("regex/anchored", {"type": "regex", "value": r"Paris\.$"}, {}, 1, PASS,
        hits=(r"Output matches pattern /Paris\.$/",)),
    row("regex/flags-i", {"type": "regex", "value": "PARIS", "flags": "i"}, {}, 1, PASS,
        hits=("Output matches pattern /PARIS/i (flags: i)",)),
    row("regex/no-flags", {"type": "regex", "value": "PARIS"}, {}, 0, FAIL,
        misses=("Output does not match pattern /PARIS/",)),
    row("regex/named-group", {"type": "regex", "value": r"(?<city>Par)is\.\s*$"}, {}, 1, PASS),
    row("regex/date", {"type": "regex", "value": r"\d{4}-\d{2}-\d{2}"}, {"answer": "Due 2025-01-15."}, 1, PASS),
    row("is_json/object", {"type": "is_json"}, {"answer": '{"status": "ok", "items": [1, 2]}'}, 1, PASS,
        hits=("Output is valid JSON",)),
    row("is_json/prose", {"type": "is-json"}, {}, 0, FAIL, misses=("Output is not valid JSON",)),
    row("is_json/nan-rejected", {"type": "is_json"}, {"answer": "NaN"}, 0, FAIL),
    row("is_json/fenced-rejected", {"type": "is_json"}, {"answer": '```json\n{"a": 1}\n```'}, 0, FAIL),
    row("equals/trimmed", {"type": "equals", "value": " 42 "}, {"answer": "42\n"}, 1, PASS, hits=('Output equals " 42 "',)),
    row("equals/miss", {"type": "equals", "value": 42}, {"answer": "42."}, 0, FAIL, misses=('Output does not equal "42"',)),
    row("regex/js-backreference", {"type": "regex", "value": r"(?<l>s)\k<l>"}, {"answer": "Mississippi"}, 1, PASS,
        hits=(r"Output matches pattern /(?<l>s)\k<l>/",)),
    row("regex/flags-m", {"type": "regex", "value": "^Paris$", "flags": "m"}, {"answer": "Capital:\nParis\nFrance"},
        1, PASS, hits=("Output matches pattern /^Paris$/m (flags: m)",)),
    row("regex/flags-miss", {"type": "regex", "value": "berlin", "flags": "i"}, {}, 0, FAIL,
        misses=("Output does not match pattern /berlin/i (flags: i)",)),
    # --- the other assertion kinds (assert-extended): contains-any/-all, icontains*, starts-with, ends-with ---
    row("contains_any/first-match-named", {"type": "contains_any", "value": ["Berlin", "France", "Paris"]}, {}, 1, PASS,
        hits=('Output contains "France"',)),
    row("contains_any/none", {"type": "contains-any", "value": ["Berlin", "Rome"]}, {}, 0, FAIL,
        misses=('Output does not contain any of: "Berlin", "Rome"',)),
    row("contains_any/case-sensitive", {"type": "contains_any", "value": ["paris"]}, {}, 0, FAIL),
    row("contains_any/numbers-as-text", {"type": "contains_any", "value": [2025]}, {"answer": "Due 2025-01-15."}, 1, PASS,
        hits=('Output contains "2025"',)),
    row("contains_all/all", {"type": "contains_all", "value": ["capital", "Paris"]}, {}, 1, PASS,
        hits=("Output contains all 2 expected strings",)),
    row("contains_all/missing-listed", {"type": "contains-all", "value": ["Paris", "Berlin", "Rome"]}, {}, 0, FAIL,
        misses=('Output missing: "Berlin", "Rome"',)),
    row("icontains/hit", {"type": "icontains", "value": "PARIS"}, {}, 1, PASS,
        hits=('Output contains "PARIS" (case-insensitive)',)),
    row("icontains/miss", {"type": "icontains", "value": "berlin"}, {}, 0, FAIL,
        misses=('Output does not contain "berlin" (case-insensitive)',)),
    row("icontains_any/hit", {"type": "icontains_any", "value": ["BERLIN", "FRANCE"]}, {}, 1, PASS,
        hits=('Output contains "FRANCE" (case-insensitive)',)),
    row("icontains_any/miss", {"type": "icontains-any", "value": ["berlin", "rome"]}, {}, 0, FAIL,
        misses=('Output does not contain any of: "berlin", "rome" (case-insensitive)',)),
    row("icontains_all/hit", {"type": "icontains_all", "value": ["THE", "paris"]}, {}, 1, PASS,
        hits=("Output contains all 2 expected strings (case-insensitive)",)),
    row("icontains_all/miss", {"type": "icontains-all", "value": ["PARIS", "rome"]}, {}, 0, FAIL,
        misses=('Output missing (case-insensitive): "rome"',)),
    row("starts_with/trimmed", {"type": "starts_with", "value": " The capital "}, {"answer": "\n  The capital of France"},
        1, PASS, hits=('Output starts with " The capital "',)),
    row("starts_with/miss", {"type": "starts-with", "value": "Paris"}, {}, 0, FAIL,
        misses=('Output does not start with "Paris"',)),
    row("ends_with/trimmed", {"type": "ends_with", "value": "Paris."}, {"answer": "The capital is Paris.\n"}, 1, PASS,
        hits=('Output ends with "Paris."',)),
    row("ends_with/miss", {"type": "ends-with", "value": "Paris"}, {}, 0, FAIL,
        misses=('Output does not end with "Paris"',)),
    row("negate/icontains", {"type": "icontains", "value": "paris", "negate": True}, {}, 0, FAIL,
        misses=('Output contains "paris" (case-insensitive)',)),
    row("negate/absent-passes", {"type": "contains", "value": "CompetitorA", "negate": True}, {}, 1, PASS,
        hits=('Output does not contain "CompetitorA"',)),
    row("negate/present-fails", {"type": "contains", "value": "Paris", "negate": True}, {}, 0, FAIL,
        misses=('Output contains "Paris"',)),
    row("answer/last-turn", {"type": "contains", "value": "second"},
        {"turns": [("q1", "first answer"), ("q2", "second answer")]}, 1, PASS),
    row("answer/not-earlier-turns", {"type": "contains", "value": "first"},
        {"turns": [("q1", "first answer"), ("q2", "second answer")]}, 0, FAIL),
    row("answer/last-turn-with-content", {"type": "contains", "value": "Paris"},
        {"turns": [("q1", "Paris"), ("q2", None)]}, 1, PASS),
    # --- tool_trajectory (tool-trajectory-simple, latency-assertions) ---
    row("trajectory/any_order", {"type": "tool_trajectory", "mode": "any_order", "minimums": {"search": 2, "analyze": 1}},
        {"tools": ("search", "analyze", "search")}, 1, PASS,
        hits=("search: called 2 times (required >=2)", "analyze: called 1 times (required >=1)")),
    row("trajectory/any_order-partial", {"type": "tool_trajectory", "mode": "any_order", "minimums": {"search": 1, "respond": 1}},
        {"tools": ("search",)}, 0.5, FAIL, misses=("respond: called 0 times (required >=1)",)),
    row("trajectory/in_order-gaps", {"type": "tool_trajectory", "mode": "in_order",
                                     "expected": [{"tool": "search"}, {"tool": "analyze"}, {"tool": "respond"}]},
        {"tools": ("search", "log", "analyze", "respond")}, 1, PASS,
        hits=("Found search at position 0", "Found analyze at position 2", "Found respond at position 3")),
    row("trajectory/in_order-wrong-order", {"type": "tool_trajectory", "mode": "in_order",
                                            "expected": [{"tool": "analyze"}, {"tool": "search"}]},
        {"tools": ("search", "analyze")}, 0.5, FAIL,
        misses=("Expected search at position 1, not found in remaining trace",)),
    row("trajectory/in_order-args-mismatch-consumes", {
        "type": "tool_trajectory", "mode": "in_order",
        "expected": [{"tool": "search", "args": {"q": "a"}}, {"tool": "search", "args": {"q": "b"}}]},
        {"tools": (("search", {"q": "b"}), ("search", {"q": "b"}))}, 0.5, FAIL,
        misses=("Expected search at position 0: tool found at 0 but args mismatch",)),
    row("trajectory/exact", {"type": "tool_trajectory", "mode": "exact", "expected": [{"tool": "search"}, {"tool": "respond"}]},
        {"tools": ("search", "respond")}, 1, PASS, hits=("Position 0: search", "Position 1: respond")),
    row("trajectory/exact-extra-call-scores-positions", {
        "type": "tool_trajectory", "mode": "exact", "expected": [{"tool": "search"}, {"tool": "respond"}]},
        {"tools": ("search", "respond", "log")}, 1, PASS, misses=("Expected 2 tool calls, got 3",)),
    row("trajectory/exact-swapped", {"type": "tool_trajectory", "mode": "exact", "expected": [{"tool": "search"}, {"tool": "respond"}]},
        {"tools": ("respond", "search")}, 0, FAIL, misses=("Position 0: expected search, got respond",)),
    row("trajectory/exact-short", {"type": "tool_trajectory", "mode": "exact", "expected": [{"tool": "search"}, {"tool": "respond"}]},
        {"tools": ("search",)}, 0.5, FAIL, misses=("Position 1: expected respond, got nothing",)),
    row("trajectory/superset", {"type": "tool_trajectory", "mode": "superset", "expected": [{"tool": "search"}, {"tool": "fetch"}]},
        {"tools": ("log", "fetch", "search", "log")}, 1, PASS, hits=("Found search at position 2", "Found fetch at position 1")),
    row("trajectory/superset-consumes", {"type": "tool_trajectory", "mode": "superset",
                                         "expected": [{"tool": "search"}, {"tool": "search"}]},
        {"tools": ("search",)}, 0.5, FAIL, misses=("Expected search not found in actual trajectory",)),
    row("trajectory/subset", {"type": "tool_trajectory", "mode": "subset", "expected": [{"tool": "search"}, {"tool": "fetch"}]},
        {"tools": ("search", "search", "fetch")}, 1, PASS),
    row("trajectory/subset-extra", {"type": "tool_trajectory", "mode": "subset", "expected": [{"tool": "search"}]},
        {"tools": ("search", "delete")}, 0.5, FAIL, misses=("Position 1: delete is not in allowed set",)),
    row("trajectory/subset-no-calls", {"type": "tool_trajectory", "mode": "subset", "expected": [{"tool": "search"}]},
        {}, 1, PASS, hits=("No actual tool calls (trivially a subset)",)),
    row("trajectory/subset-empty-allowed", {"type": "tool_trajectory", "mode": "subset", "expected": []},
        {"tools": ("search",)}, 0, FAIL, misses=("1 unexpected tool call(s) with empty allowed list",)),
    row("args/exact-default", {"type": "tool_trajectory", "mode": "in_order", "expected": [{"tool": "search", "args": {"q": "x"}}]},
        {"tools": (("search", {"q": "x", "limit": 5}),)}, 0, FAIL),
    row("args/superset", {"type": "tool_trajectory", "mode": "in_order", "args_match": "superset",
                          "expected": [{"tool": "search", "args": {"q": "x"}}]},
        {"tools": (("search", {"q": "x", "limit": 5}),)}, 1, PASS),
    row("args/subset", {"type": "tool_trajectory", "mode": "in_order", "argsMatch": "subset",
                        "expected": [{"tool": "search", "args": {"q": "x", "limit": 5}}]},
        {"tools": (("search", {"q": "x"}),)}, 1, PASS),
    row("args/subset-extra-key", {"type": "tool_trajectory", "mode": "in_order", "args_match": "subset",
                                  "expected": [{"tool": "search", "args": {"q": "x"}}]},
        {"tools": (("search", {"q": "x", "limit": 5}),)}, 0, FAIL),
    row("args/ignore", {"type": "tool_trajectory", "mode": "exact", "args_match": "ignore",
                        "expected": [{"tool": "search", "args": {"q": "x"}}]},
        {"tools": (("search", {"q": "other"}),)}, 1, PASS),
    row("args/field-list", {"type": "tool_trajectory", "mode": "exact", "args_match": ["q", "filter.lang"],
                            "expected": [{"tool": "search", "args": {"q": "x", "limit": 1, "filter": {"lang": "py"}}}]},
        {"tools": (("search", {"q": "x", "limit": 9, "filter": {"lang": "py", "x": 1}}),)}, 1, PASS),
    row("args/field-list-mismatch", {"type": "tool_trajectory", "mode": "exact", "args_match": ["filter.lang"],
                                     "expected": [{"tool": "search", "args": {"filter": {"lang": "py"}}}]},
        {"tools": (("search", {"filter": {"lang": "go"}}),)}, 0, FAIL, misses=("Position 0: search args mismatch",)),
    row("args/item-overrides", {"type": "tool_trajectory", "mode": "in_order", "args_match": "exact",
                                "expected": [{"tool": "search", "args": {"q": "x"}, "args_match": "superset"}]},
        {"tools": (("search", {"q": "x", "limit": 5}),)}, 1, PASS),
    row("args/any", {"type": "tool_trajectory", "mode": "exact", "expected": [{"tool": "search", "args": "any"}]},
        {"tools": (("search", {"q": "x"}),)}, 1, PASS),
    row("args/number-equality", {"type": "tool_trajectory", "mode": "exact", "expected": [{"tool": "f", "args": {"n": 1}}]},
        {"tools": (("f", {"n": 1.0}),)}, 1, PASS),
    row("args/bool-is-not-number", {"type": "tool_trajectory", "mode": "exact", "expected": [{"tool": "f", "args": {"on": True}}]},
        {"tools": (("f", {"on": 1}),)}, 0, FAIL),
    row("latency/within", {"type": "tool_trajectory", "mode": "in_order", "expected": [{"tool": "search", "max_duration_ms": 100}]},
        {"tools": ({"name": "search", "id": "c1"},)}, 1, PASS, hits=("search completed in 50ms (max: 100ms)",),
        spans=(("search", "c1", 0, 50),)),
    row("latency/over", {"type": "tool_trajectory", "mode": "exact", "expected": [{"tool": "search", "maxDurationMs": 100}]},
        {"tools": ({"name": "search", "id": "c1"},)}, 0.5, FAIL, misses=("search took 150ms (max: 100ms)",),
        spans=(("search", "c1", 0, 150),)),
    row("latency/no-span-skipped", {"type": "tool_trajectory", "mode": "in_order",
                                    "expected": [{"tool": "search", "max_duration_ms": 100}, {"tool": "respond"}]},
        {"tools": ("search", "respond")}, 1, PASS),
    row("latency/by-name-when-no-id", {"type": "tool_trajectory", "mode": "in_order",
                                       "expected": [{"tool": "search"}, {"tool": "search", "max_duration_ms": 100}]},
        {"tools": ({"name": "search", "id": None}, {"name": "search", "id": None})}, 2 / 3, BORDERLINE,
        misses=("search took 120ms (max: 100ms)",), spans=(("search", "x1", 0, 10), ("search", "x2", 20, 120))),
    row("trajectory/no-turns", {"type": "tool_trajectory", "mode": "any_order", "minimums": {"search": 1}},
        {"turns": []}, 0, FAIL, misses=("No trace available for evaluation",)),
    # --- field_accuracy (document-extraction) ---
    row("fields/exact-all", {"type": "field_accuracy", "fields": [
        field("invoice_number"), field("currency"), field("supplier.name"), field("line_items[0].amount")]},
        {"answer": INVOICE, "expected": INVOICE}, 1, PASS, hits=("invoice_number", "supplier.name")),
    row("fields/numeric-absolute", {"type": "field_accuracy", "fields": [field("total", match="numeric_tolerance", tolerance=1)]},
        {"answer": '{"total": 1250.0}', "expected": INVOICE}, 1, PASS, hits=("total (within tolerance: diff=0.50)",)),
    row("fields/numeric-outside", {"type": "field_accuracy", "fields": [field("total", match="numeric_tolerance", tolerance=0.1)]},
        {"answer": '{"total": "1,250"}', "expected": INVOICE}, 0, FAIL,
        misses=("total (outside tolerance: diff=1249.50, tolerance=0.1)",)),
    row("fields/numeric-relative", {"type": "field_accuracy", "fields": [
        field("total", match="numeric_tolerance", tolerance=0.001, relative=True)]},
        {"answer": '{"total": "1250"}', "expected": INVOICE}, 1, PASS),
    row("fields/date-formats", {"type": "field_accuracy", "fields": [field("invoice_date", match="date")]},
        {"answer": '{"invoice_date": "2025-01-15"}', "expected": INVOICE}, 1, PASS),
    row("fields/date-named-month", {"type": "field_accuracy", "fields": [field("invoice_date", match="date")]},
        {"answer": '{"invoice_date": "Jan 15, 2025"}', "expected": INVOICE}, 1, PASS),
    row("fields/date-ambiguous-us", {"type": "field_accuracy", "fields": [field("d", match="date")]},
        {"answer": '{"d": "01/02/2025"}', "expected": '{"d": "2025-01-02"}'}, 1, PASS),
    row("fields/date-formats-eu", {"type": "field_accuracy", "fields": [field("d", match="date", formats=["DD/MM/YYYY"])]},
        {"answer": '{"d": "01/02/2025"}', "expected": '{"d": "2025-01-02"}'}, 0, FAIL,
        misses=("d (date mismatch: got 2025-02-01, expected 2025-01-02)",)),
    row("fields/date-day-over-12-is-eu", {"type": "field_accuracy", "fields": [field("d", match="date")]},
        {"answer": '{"d": "15/01/2025"}', "expected": '{"d": "2025-01-15"}'}, 1, PASS),
    row("fields/weighted", {"type": "field_accuracy", "fields": [field("total", weight=2), field("currency")]},
        {"answer": '{"total": 99, "currency": "USD"}', "expected": INVOICE}, 1 / 3, FAIL,
        hits=("currency",), misses=("total (value mismatch)",)),
    row("fields/all_or_nothing", {"type": "field_accuracy", "aggregation": "all_or_nothing",
                                  "fields": [field("total"), field("currency")]},
        {"answer": '{"total": 99, "currency": "USD"}', "expected": INVOICE}, 0, FAIL),
    row("fields/required-missing", {"type": "field_accuracy", "fields": [field("currency"), field("invoice_number")]},
        {"answer": '{"currency": "USD"}', "expected": INVOICE}, 0.5, FAIL, misses=("invoice_number (required, missing)",)),
    row("fields/optional-missing", {"type": "field_accuracy", "fields": [field("currency"), field("invoice_number", required=False)]},
        {"answer": '{"currency": "USD"}', "expected": INVOICE}, 1, PASS, hits=("invoice_number: optional field missing",)),
    row("fields/no-expected-value", {"type": "field_accuracy", "fields": [field("po_number")]},
        {"answer": '{"po_number": "X"}', "expected": INVOICE}, 1, PASS, hits=("po_number: no expected value",)),
    row("fields/fenced-answer", {"type": "field_accuracy", "fields": [field("currency")]},
        {"answer": 'Here it is:\n```json\n{"currency": "USD"}\n```', "expected": INVOICE}, 1, PASS),
    row("fields/not-json", {"type": "field_accuracy", "fields": [field("currency")]},
        {"answer": "USD", "expected": INVOICE}, 0, FAIL, misses=("Failed to parse candidate answer as JSON",)),
    row("fields/type-mismatch", {"type": "field_accuracy", "fields": [field("total")]},
        {"answer": '{"total": "1250.5"}', "expected": INVOICE}, 0, FAIL,
        misses=("total (type mismatch: got string, expected number)",)),
    # --- execution_metrics (execution-metrics) ---
    row("metrics/all-within", {"type": "execution_metrics", "max_tool_calls": 10, "max_llm_calls": 5,
                               "max_tokens": 2000, "max_duration_ms": 5000},
        {"tools": ("search", "fetch"), "perf": PERF}, 1, PASS,
        hits=("Tool calls 2 <= 10 max", "LLM calls 3 <= 5 max", "Total tokens 1800 <= 2000 max",
              "Duration 4200.5ms <= 5000ms max")),
    row("metrics/tokens-over", {"type": "execution_metrics", "max_tool_calls": 10, "max_tokens": 1500},
        {"tools": ("search",), "perf": PERF}, 0.5, FAIL, misses=("Total tokens 1800 > 1500 max",)),
    row("metrics/missing-is-miss", {"type": "execution_metrics", "max_cost_usd": 0.1}, {"perf": PERF}, 0, FAIL,
        misses=("Cost data not available",)),
    row("metrics/cost-from-spans", {"type": "execution_metrics", "max_cost_usd": 0.05},
        {"tools": ({"name": "llm", "id": "p"},)}, 1, PASS, hits=("Cost $0.0300 <= $0.0500 max",),
        spans=(("llm", "p", 0, 10, None, 0.03), ("llm", "c1", 1, 2, "s-p", 0.01), ("llm", "c2", 4, 2, "s-p", 0.02))),
    row("metrics/exploration-within", {"type": "execution_metrics", "target_exploration_ratio": 0.5,
                                       "exploration_tolerance": 0.3},
        {"tools": ("Read", "Grep", "Edit", "Write")}, 1, PASS,
        hits=("Exploration ratio 0.50 within tolerance of target 0.5",)),
    row("metrics/exploration-outside", {"type": "execution_metrics", "target_exploration_ratio": 0.9},
        {"tools": ("Read", "Grep", "Edit", "Write")}, 0, FAIL,
        misses=("Exploration ratio 0.50 outside tolerance of target 0.9 (diff: 0.40, tolerance: 0.2)",)),
    row("metrics/exploration-no-calls", {"type": "execution_metrics", "target_exploration_ratio": 0.5}, {}, 0, FAIL,
        misses=("Exploration ratio not available (no tool calls)",)),
    row("metrics/two-of-three-borderline", {"type": "execution_metrics", "max_tool_calls": 1, "max_llm_calls": 5,
                                            "max_duration_ms": 5000}, {"tools": ("a", "b"), "perf": PERF}, 2 / 3, BORDERLINE),
    row("metrics/no-turns", {"type": "execution_metrics", "max_tool_calls": 1}, {"turns": []}, 0, FAIL,
        misses=("No trace summary available",)),
    # --- skill_trigger (agent-skills-evals) ---
    row("skill/skill-tool", {"type": "skill-trigger", "skill": "csv-analyzer"},
        {"tools": (("Skill", {"skill": "csv-analyzer"}), ("Bash", {}))}, 1, PASS,
        hits=('Skill tool invoked with skill="csv-analyzer"',)),
    row("skill/read-tool", {"type": "skill_trigger", "skill": "csv-analyzer"},
        {"tools": (("Read", {"file_path": "/repo/.claude/skills/csv-analyzer/SKILL.md"}),)}, 1, PASS,
        hits=("Read tool loaded skill file: /repo/.claude/skills/csv-analyzer/SKILL.md",)),
    row("skill/only-first-call", {"type": "skill_trigger", "skill": "csv-analyzer"},
        {"tools": (("Bash", {}), ("Skill", {"skill": "csv-analyzer"}))}, 0, FAIL,
        misses=('First tool was "Bash" — not Skill/Read for "csv-analyzer"',)),
    row("skill/no-calls", {"type": "skill_trigger", "skill": "csv-analyzer"}, {}, 0, FAIL, misses=("No tool calls recorded",)),
    row("skill/should-not-and-did-not", {"type": "skill_trigger", "skill": "csv-analyzer", "should_trigger": False},
        {"tools": (("Bash", {}),)}, 1, PASS, hits=('Skill "csv-analyzer" correctly did not trigger',)),
    row("skill/false-trigger", {"type": "skill_trigger", "skill": "csv-analyzer", "should_trigger": False},
        {"tools": (("Skill", {"skill": "csv-analyzer"}),)}, 0, FAIL, misses=('Skill "csv-analyzer" triggered unexpectedly',)),
    row("skill/case-sensitive", {"type": "skill_trigger", "skill": "CSV-Analyzer"},
        {"tools": (("Skill", {"skill": "csv-analyzer"}),)}, 0, FAIL),
    # --- composite (composite, threshold-evaluator) ---
    row("composite/weighted_average", {"type": "composite", "aggregator": {"type": "weighted_average", "weights": {"a": 3, "b": 1}},
                                       "evaluators": [{"name": "a", "type": "contains", "value": "Paris", "weight": 100},
                                                      {"name": "b", "type": "contains", "value": "Berlin"}]},
        {}, 0.75, BORDERLINE, hits=('[a] Output contains "Paris"',), misses=('[b] Output does not contain "Berlin"',)),
    row("composite/threshold-pass", {"type": "composite", "aggregator": {"type": "threshold", "threshold": 0.5},
                                     "assertions": [{"type": "contains", "value": "Paris"}, {"type": "contains", "value": "Rome"},
                                                    {"type": "regex", "value": "France"}]},
        {}, 2 / 3, PASS),
    row("composite/threshold-fail", {"type": "composite", "aggregator": {"type": "threshold", "threshold": 0.75},
                                     "assert": [{"type": "contains", "value": "Paris"}, {"type": "contains", "value": "Rome"},
                                                {"type": "regex", "value": "France"}]},
        {}, 2 / 3, FAIL),
    row("composite/threshold-borderline-counts", {"type": "composite", "aggregator": {"type": "threshold", "threshold": 1},
                                                  "evaluators": [{"type": "execution_metrics", "max_tool_calls": 1,
                                                                  "max_llm_calls": 5, "max_duration_ms": 5000}]},
        {"tools": ("a", "b"), "perf": PERF}, 1, PASS),
    row("composite/nested", {"type": "composite", "aggregator": {"type": "weighted_average", "weights": {"content": 0.7, "safety": 0.3}},
                             "evaluators": [
                                 {"name": "content", "type": "composite",
                                  "aggregator": {"type": "weighted_average", "weights": {"accuracy": 0.6, "clarity": 0.4}},
                                  "evaluators": [{"name": "accuracy", "type": "contains", "value": "Paris"},
                                                 {"name": "clarity", "type": "equals", "value": "Paris"}]},
                                 {"name": "safety", "type": "contains", "value": "bomb", "negate": True}]},
        {}, 0.7 * 0.6 + 0.3, BORDERLINE, hits=("[content] [accuracy] Output contains \"Paris\"",)),
]


@pytest.mark.parametrize(("entry", "spec", "score", "verdict", "hits", "misses", "spans"), GOLDEN)
def test_golden(av: Any, entry: dict[str, Any], spec: dict[str, Any], score: float, verdict: Verdict,
                hits: tuple[str, ...], misses: tuple[str, ...], spans: tuple[tuple[Any, ...], ...]) -> None:
    spec = dict(spec)
    if "turns" in spec:
        spec["turns"] = [av.turn(user, answer) for user, answer in spec["turns"]]
    if "answer" not in spec:
        spec["answer"] = ANSWER
    made = []
    for name, call_id, start, duration, *rest in spans:
        parent = rest[0] if rest else None
        extra = {"gen_ai.usage.cost": rest[1]} if len(rest) > 1 else {}
        made.append(av.span(name, call_id, start, duration, parent, **extra))
    result = av.run(entry, av.case(spans=tuple(made), **spec))
    assert result.score == pytest.approx(score), (result.hits, result.misses)
    assert result.verdict == verdict
    assert result.status == (Status.PASSED if verdict == PASS else Status.FAILED)
    for text in hits:
        assert text in result.hits
    for text in misses:
        assert text in result.misses


def test_field_accuracy_without_golden_is_not_evaluated(av: Any) -> None:
    result = av.run({"type": "field_accuracy", "fields": [{"path": "a"}]}, av.case('{"a": 1}'))
    assert result.status == Status.NOT_EVALUATED
    assert "no eval case matched" in (result.reason or "")


def test_negate_marks_reasoning(av: Any) -> None:
    result = av.run({"type": "skill_trigger", "skill": "x", "negate": True}, av.case())
    assert (result.score, result.verdict) == (1.0, PASS)
    assert result.reasoning == '[Negated] Skill "x" was not triggered (original score: 0.00)'
    assert result.hits == ["No tool calls recorded"]


def test_composite_keeps_member_rows_in_details(av: Any) -> None:
    entry = {"type": "composite", "name": "gate", "aggregator": {"type": "weighted_average"},
             "evaluators": [{"type": "contains", "value": "Paris"}, {"type": "is_json"}]}
    result = av.run(entry, av.case())
    assert result.score == 0.5
    assert [(s["name"], s["score"], s["weight"]) for s in result.details["scores"]] == [
        ("contains-Paris", 1.0, 1.0), ("is-json", 0.0, 1.0)]
    assert result.details["aggregator"] == "weighted_average"


def test_explicit_threshold_decides_status_not_verdict(av: Any) -> None:
    entry = {"type": "execution_metrics", "max_tool_calls": 1, "max_llm_calls": 5, "max_duration_ms": 5000}
    ctx = av.case(tools=("a", "b"), perf=PERF)
    default = av.run(entry, ctx)
    assert (default.status, default.threshold, default.verdict) == (Status.FAILED, 0.8, BORDERLINE)
    lenient = av.run({**entry, "threshold": 0.5}, ctx)
    assert (lenient.status, lenient.threshold, lenient.verdict) == (Status.PASSED, 0.5, BORDERLINE)


def test_latency_checks_sit_next_to_their_call(av: Any) -> None:
    # AgentV pushes each latency hit/miss right after the sequence check of the same expected item.
    entry = {"type": "tool_trajectory", "mode": "exact", "expected": [
        {"tool": "search", "max_duration_ms": 100}, {"tool": "fetch", "max_duration_ms": 100}, {"tool": "respond"}]}
    ctx = av.case(tools=({"name": "search", "id": "c1"}, {"name": "fetch", "id": "c2"}),
                  spans=(av.span("search", "c1", 0, 150), av.span("fetch", "c2", 200, 50)))
    result = av.run(entry, ctx)
    assert result.hits == ["Position 0: search", "Position 1: fetch", "fetch completed in 50ms (max: 100ms)"]
    assert result.misses == ["Expected 3 tool calls, got 2", "search took 150ms (max: 100ms)",
                             "Position 2: expected respond, got nothing"]


def test_args_field_list_reaches_into_lists(av: Any) -> None:
    # AgentV's getNestedValue indexes arrays too: "items.0.id" compares the first item's id.
    entry = {"type": "tool_trajectory", "mode": "exact", "args_match": ["items.0.id"],
             "expected": [{"tool": "f", "args": {"items": [{"id": 1}]}}]}
    assert av.run(entry, av.case(tools=(("f", {"items": [{"id": 1, "x": 2}]}),))).score == 1
    assert av.run(entry, av.case(tools=(("f", {"items": [{"id": 9}]}),))).score == 0


def test_two_decimals_round_like_to_fixed(av: Any) -> None:
    # JavaScript's toFixed rounds a tie up (0.125 → "0.13"); Python's format rounds it to even ("0.12").
    tools = ("Read", "a", "b", "c", "d", "e", "f", "g")
    result = av.run({"type": "execution_metrics", "target_exploration_ratio": 0.125}, av.case(tools=tools))
    assert result.hits == ["Exploration ratio 0.13 within tolerance of target 0.125"]
    assert result.reasoning == "execution_metrics exploration_ratio=0.13"
    negated = av.run({"type": "composite", "name": "c", "negate": True,
                      "aggregator": {"type": "weighted_average", "weights": {"a": 5, "b": 3}},
                      "evaluators": [{"name": "a", "type": "contains", "value": "Paris"},
                                     {"name": "b", "type": "contains", "value": "Rome"}]}, av.case())
    assert negated.score == pytest.approx(0.375)
    assert negated.reasoning == "[Negated] Original score: 0.63"  # AgentV's wording when there is no reasoning


def test_negate_keeps_the_reasoning_as_written(av: Any) -> None:
    entry = {"type": "code_judge", "name": "j", "negate": True,
             "command": "cat > /dev/null; echo '{\"score\": 1, \"reasoning\": \"two  spaces\"}'"}
    assert av.run(entry, av.case()).reasoning == "[Negated] two  spaces (original score: 1.00)"
