"""Golden table: every assertion type (and alias, and option) → the strings AgentV v2.19 writes."""

from __future__ import annotations

import pytest
from agentevals.transpile import (
    assertion_to_natural_language,
    code_judge_instruction,
    judge_name_from_command,
)

TAIL = (
    " The command accepts --agent-output (the agent's full response text) and --agent-input (the original"
    ' user prompt). It returns JSON on stdout: {"score": 0-1, "reasoning": "..."}. A score >= 0.5 means pass'
    " (exit 0); below 0.5 means fail (exit 1)."
)


def instruction(name: str, description: str = "") -> str:
    head = f"Run `agentevals eval assert {name} --agent-output <agent_output> --agent-input <original_prompt>` and check the result."
    return head + (f" This judge: {description}." if description else "") + TAIL


GOLDEN = [
    # skill-trigger becomes should_trigger, never an assertion string
    ({"type": "skill-trigger", "skill": "csv-analyzer", "should_trigger": True}, []),
    # rubrics: a string criteria is kept, a list vanishes
    ({"type": "rubrics", "criteria": "Output identifies November"}, ["Output identifies November"]),
    ({"type": "rubrics", "criteria": ["a", {"id": "b", "outcome": "B"}]}, []),
    ({"type": "contains", "value": "$22,500"}, ["Output contains '$22,500'"]),
    ({"type": "contains"}, ["Output contains 'undefined'"]),
    ({"type": "contains", "value": None}, ["Output contains 'null'"]),
    ({"type": "contains", "value": 3.0}, ["Output contains '3'"]),
    ({"type": "contains", "value": True}, ["Output contains 'true'"]),
    ({"type": "contains-any", "value": ["a", "b"]}, ["Output contains any of: 'a', 'b'"]),
    ({"type": "contains_any", "value": "solo"}, ["Output contains any of: 'solo'"]),
    ({"type": "contains-all", "value": ["x", 1, None]}, ["Output contains all of: 'x', '1', ''"]),
    ({"type": "contains_all", "value": ["x"]}, ["Output contains all of: 'x'"]),
    ({"type": "icontains", "value": "Paris"}, ["Output contains (case-insensitive) 'Paris'"]),
    ({"type": "icontains-any", "value": ["a"]}, ["icontains-any assertion"]),
    ({"type": "icontains_all", "value": ["a"]}, ["icontains_all assertion"]),
    ({"type": "regex", "value": r"\d{4}-\d{2}-\d{2}"}, [r"Output matches regex: \d{4}-\d{2}-\d{2}"]),
    ({"type": "regex", "value": "^hi", "flags": "i"}, ["Output matches regex: ^hi"]),
    ({"type": "equals", "value": "exact answer"}, ["Output exactly equals: exact answer"]),
    ({"type": "equals", "value": 42}, ["Output exactly equals: 42"]),
    ({"type": "is-json"}, ["Output is valid JSON"]),
    ({"type": "is_json", "required": True}, ["Output is valid JSON"]),
    ({"type": "starts-with", "value": "Hello"}, ["Output starts with 'Hello'"]),
    ({"type": "starts_with", "value": "Hi"}, ["Output starts with 'Hi'"]),
    ({"type": "ends-with", "value": "."}, ["Output ends with '.'"]),
    ({"type": "ends_with", "value": "!"}, ["Output ends with '!'"]),
    # negate, weight and required are ignored: the assertion reads positively
    ({"type": "contains", "value": "x", "negate": True, "weight": 2}, ["Output contains 'x'"]),
    ({"type": "llm-judge", "prompt": "The answer is clear and concise"}, ["The answer is clear and concise"]),
    ({"type": "llm_judge", "prompt": "prompts/quality.md"}, ["prompts/quality.md"]),
    ({"type": "llm-judge", "name": "q"}, []),
    (
        {
            "type": "llm-judge",
            "rubrics": [
                {"id": "r1", "outcome": "Correct result returned"},
                {"id": "r2", "outcome": "No unnecessary steps"},
            ],
        },
        ["Correct result returned", "No unnecessary steps"],
    ),
    (
        {
            "type": "llm-judge",
            "prompt": "ignored",
            "rubrics": [
                {"criteria": "c"},
                {"id": "only-id"},
                "plain",
                {"outcome": None, "criteria": "fallback"},
                {"outcome": 7},
            ],
        },
        ["c", "only-id", "fallback"],
    ),
    ({"type": "llm-judge", "rubrics": [], "prompt": "P"}, ["P"]),
    (
        {
            "type": "tool-trajectory",
            "mode": "in_order",
            "expected": [{"tool": "read_file"}, {"tool": "write_file"}],
        },
        ["Agent called tools in order: read_file, write_file"],
    ),
    (
        {"type": "tool_trajectory", "mode": "any_order", "minimums": {"search": 1}},
        ["Agent followed expected tool trajectory"],
    ),
    (
        {"type": "tool-trajectory", "expected": [{"args": "any"}, {"tool": ""}]},
        ["Agent followed expected tool trajectory"],
    ),
    (
        {
            "type": "code-judge",
            "name": "format-checker",
            "description": "Validates output CSV format",
            "command": ["bun", "run", ".agentv/judges/format-checker.ts"],
        },
        [instruction("format-checker", "Validates output CSV format")],
    ),
    (
        {"type": "code_judge", "name": "skill-trigger", "description": "checks"},
        [instruction("skill-trigger", "checks")],
    ),
    (
        {"type": "code-judge", "command": ["bun", "run", ".agentv/judges/output-validator.ts"]},
        [instruction("output-validator")],
    ),
    ({"type": "code-judge", "command": ["node", "j/first.mjs", "j/second.js"]}, [instruction("first")]),
    ({"type": "code-judge", "command": ["python", "judges/check.py"]}, [instruction("code-judge")]),
    ({"type": "code-judge", "name": "n", "description": ""}, [instruction("n")]),
    ({"type": "code-judge", "name": "n", "description": 5}, [instruction("n")]),
    (
        {"type": "field-accuracy", "fields": [{"path": "invoice.total"}, {"path": "invoice.date"}]},
        ["Fields invoice.total, invoice.date match expected values"],
    ),
    ({"type": "field_accuracy", "fields": []}, ["Fields match expected values"]),
    ({"type": "latency", "threshold": 5000}, ["Response time under 5000ms"]),
    ({"type": "latency", "threshold": "5000"}, ["Response time within threshold"]),
    ({"type": "cost", "budget": 0.1}, ["Cost under $0.1"]),
    ({"type": "cost", "budget": 2.0}, ["Cost under $2"]),
    ({"type": "cost"}, ["Cost within budget"]),
    ({"type": "token-usage", "max_total": 100}, ["Token usage within limits"]),
    ({"type": "token_usage"}, ["Token usage within limits"]),
    ({"type": "execution-metrics", "max_tool_calls": 5}, ["Execution within metric bounds"]),
    ({"type": "execution_metrics"}, ["Execution within metric bounds"]),
    # anything else: custom types
    ({"type": "custom-validator", "command": ["bun", "run", "validate.ts"]}, [instruction("validate")]),
    ({"type": "custom-validator", "command": ["./validate"]}, [instruction("custom-validator")]),
    ({"type": "custom-validator", "command": None}, [instruction("custom-validator")]),
    (
        {"type": "composite", "assertions": [{"name": "a", "type": "contains", "value": "x"}]},
        ["composite assertion"],
    ),
    ({"type": "word-count", "criteria": "At most 100 words", "prompt": "p"}, ["At most 100 words"]),
    ({"type": "word-count", "prompt": "p"}, ["p"]),
    ({"type": "word-count", "max": 100}, ["word-count assertion"]),
    ({"type": "skill_trigger", "skill": "s"}, ["skill_trigger assertion"]),
    ({"value": "no type"}, []),
    ({"command": ["bun", "x.ts"]}, []),
]


@pytest.mark.parametrize(("entry", "expected"), GOLDEN, ids=[str(i) for i in range(len(GOLDEN))])
def test_golden_rendering(entry, expected):
    assert assertion_to_natural_language(entry) == expected


def test_code_judge_instruction_is_the_seed_wording_with_our_command():
    assert code_judge_instruction("format-checker", "Validates output CSV format") == (
        "Run `agentevals eval assert format-checker --agent-output <agent_output> --agent-input <original_prompt>`"
        " and check the result. This judge: Validates output CSV format. The command accepts --agent-output (the"
        " agent's full response text) and --agent-input (the original user prompt). It returns JSON on stdout:"
        ' {"score": 0-1, "reasoning": "..."}. A score >= 0.5 means pass (exit 0); below 0.5 means fail (exit 1).'
    )


@pytest.mark.parametrize(
    ("command", "name"),
    [
        (["bun", "run", ".agentv/judges/format-checker.ts"], "format-checker"),
        (["node", "a/b/c.mjs"], "c"),
        (["tsx", "x.mts", "y.ts"], "x"),
        (["bun", "run", "script.ts.bak"], None),
        (["python", "check.py"], None),
        ("bun run x.ts", None),
        ([], None),
        ([1, "z.js"], "z"),
        (["bun", ".ts"], None),
    ],
)
def test_judge_name_from_command(command, name):
    assert judge_name_from_command(command) == name
