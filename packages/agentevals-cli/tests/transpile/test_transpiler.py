"""The transpiler's algorithm: field mapping, ids, skill grouping, suite-level assertions, warnings, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentevals.errors import InputFileError
from agentevals.transpile import NO_SKILL, transpile_file, transpile_suite
from agentevals.transpile._render import code_judge_instruction

CSV_SUITE = {
    "tests": [
        {
            "id": "csv-top-months",
            "criteria": "Agent finds the top 3 months by revenue",
            "input": [
                {
                    "role": "user",
                    "content": [
                        {"type": "file", "value": "evals/files/sales.csv"},
                        {
                            "type": "text",
                            "value": "I have a CSV of monthly sales data. Find the top 3 months by revenue.",
                        },
                    ],
                }
            ],
            "expected_output": "The top 3 months are November, September and December.",
            "assertions": [
                {"type": "skill-trigger", "skill": "csv-analyzer", "should_trigger": True},
                {"type": "rubrics", "criteria": "Output identifies November as the highest revenue month"},
                {"type": "contains", "value": "$22,500"},
            ],
        },
        {
            "id": "irrelevant-query",
            "input": "What time is it?",
            "assertions": [{"type": "skill-trigger", "skill": "csv-analyzer", "should_trigger": False}],
        },
    ]
}


def only(result):
    assert len(result.files) == 1
    return next(iter(result.files.values()))


def test_single_skill_maps_fields_and_numbers_cases_from_one():
    doc = only(transpile_suite(CSV_SUITE))
    assert doc.to_json() == {
        "skill_name": "csv-analyzer",
        "evals": [
            {
                "id": 1,
                "prompt": "I have a CSV of monthly sales data. Find the top 3 months by revenue.",
                "expected_output": "The top 3 months are November, September and December.",
                "files": ["evals/files/sales.csv"],
                "assertions": [
                    "Agent finds the top 3 months by revenue",
                    "Output identifies November as the highest revenue month",
                    "Output contains '$22,500'",
                ],
                "should_trigger": True,
            },
            {"id": 2, "prompt": "What time is it?", "assertions": [], "should_trigger": False},
        ],
    }
    assert list(doc.to_json()["evals"][0]) == [
        "id",
        "prompt",
        "expected_output",
        "files",
        "assertions",
        "should_trigger",
    ]


def test_without_skill_trigger_everything_lands_in_no_skill_without_should_trigger():
    result = transpile_suite(
        {"tests": [{"id": "t", "input": "Hi", "assertions": [{"type": "contains", "value": "Hi"}]}]}
    )
    doc = only(result)
    assert doc.skill_name == NO_SKILL == "_no-skill"
    assert doc.to_json()["evals"] == [{"id": 1, "prompt": "Hi", "assertions": ["Output contains 'Hi'"]}]
    assert result.filenames() == {"_no-skill": "evals.json"}


@pytest.mark.parametrize(
    ("test", "prompt", "files"),
    [
        ({"input": "plain"}, "plain", []),
        (
            {"input": "Analyze this file", "input_files": ["data/file.csv", "data/schema.json", 3]},
            "Analyze this file",
            ["data/file.csv", "data/schema.json"],
        ),
        (
            {
                "input": [
                    {"role": "system", "content": "sys"},
                    {"role": "user", "content": "first"},
                    {"role": "user", "content": "last"},
                ]
            },
            "last",
            [],
        ),
        (
            {
                "input": [
                    {
                        "role": "user",
                        "content": [
                            {"type": "text", "value": "a"},
                            {"type": "text", "value": "b"},
                            {"type": "file", "value": "f.txt"},
                        ],
                    }
                ]
            },
            "b",
            ["f.txt"],
        ),
        ({"input": [{"role": "assistant", "content": [{"type": "file", "value": "ignored.txt"}]}]}, "", []),
        ({"input": {"role": "user", "content": "an object"}}, "", []),
        (
            {"input": [{"role": "user", "content": [{"type": "text"}, {"type": "image", "value": "x.png"}]}]},
            "",
            [],
        ),
    ],
)
def test_prompt_and_files(test, prompt, files):
    case = only(transpile_suite({"tests": [{"id": "t", "criteria": "c", **test}]})).evals[0]
    assert (case.prompt, case.files) == (prompt, files)


@pytest.mark.parametrize(
    ("expected", "flattened"),
    [
        ("kept as is", "kept as is"),
        ([{"role": "assistant", "content": "World"}], "World"),
        (
            [{"role": "assistant", "content": "first"}, {"role": "tool", "content": "last string wins"}],
            "last string wins",
        ),
        ([{"role": "assistant", "content": "str"}, {"role": "assistant", "content": {"a": 1}}], "str"),
        ([{"role": "assistant", "content": {"a": 1}}], None),
        ({"b": 1.0, "2": [True, None], "1": "x"}, '{"1":"x","2":[true,null],"b":1}'),
        (7, "7"),
        (None, None),
    ],
)
def test_expected_output_is_flattened_like_agentv(expected, flattened):
    case = only(transpile_suite({"tests": [{"id": "t", "input": "q", "expected_output": expected}]})).evals[0]
    assert case.expected_output == flattened
    assert ("expected_output" in case.to_json()) is (flattened is not None)


def test_criteria_is_trimmed_first_then_case_then_suite_assertions():
    suite = {
        "assertions": [
            {"type": "contains", "value": "global-check"},
            {"type": "skill-trigger", "skill": "ignored"},
        ],
        "tests": [
            {"id": "a", "criteria": "  first  ", "input": "q", "assertions": [{"type": "is-json"}]},
            {"id": "b", "criteria": "   ", "input": "q"},
        ],
    }
    result = transpile_suite(suite)
    evals = only(result).evals
    assert evals[0].assertions == ["first", "Output is valid JSON", "Output contains 'global-check'"]
    assert evals[1].assertions == ["Output contains 'global-check'"]
    assert evals[0].should_trigger is None  # a suite-level skill-trigger is ignored
    assert any("suite-level skill-triggers are ignored" in w for w in result.warnings)


def test_deprecated_assert_is_read_with_warnings():
    suite = {
        "assert": [{"type": "contains", "value": "suite-level"}],
        "tests": [
            {
                "id": "t1",
                "input": "hello",
                "assert": [
                    {"type": "skill-trigger", "skill": "skill-a"},
                    {"type": "contains", "value": "world"},
                ],
            }
        ],
    }
    result = transpile_suite(suite, source="my-file.yaml")
    doc = only(result)
    assert doc.skill_name == "skill-a"
    assert doc.evals[0].assertions == ["Output contains 'world'", "Output contains 'suite-level'"]
    assert result.warnings == [
        "my-file.yaml: 'assert' is deprecated at the suite level. Use 'assertions' instead.",
        "my-file.yaml: Test 't1': 'assert' is deprecated. Use 'assertions' instead.",
    ]


def test_assertions_win_over_assert_without_warning():
    result = transpile_suite(
        {
            "tests": [
                {
                    "id": "t",
                    "input": "q",
                    "assertions": [{"type": "is-json"}],
                    "assert": [{"type": "contains", "value": "x"}],
                }
            ]
        }
    )
    assert only(result).evals[0].assertions == ["Output is valid JSON"]
    assert result.warnings == []


def test_one_test_with_two_skills_is_copied_into_both_files():
    suite = {
        "tests": [
            {
                "id": "both",
                "input": "q",
                "assertions": [
                    {"type": "skill-trigger", "skill": "skill-a", "should_trigger": True},
                    {"type": "skill-trigger", "skill": "skill-b", "should_trigger": False},
                ],
            },
        ]
    }
    result = transpile_suite(suite)
    assert {k: [c.should_trigger for c in v.evals] for k, v in result.files.items()} == {
        "skill-a": [True],
        "skill-b": [False],
    }
    assert result.filenames() == {"skill-a": "skill-a.evals.json", "skill-b": "skill-b.evals.json"}


def test_tests_without_trigger_join_the_dominant_skill_ties_go_to_the_first():
    trig = lambda skill: {"type": "skill-trigger", "skill": skill}  # noqa: E731
    suite = {
        "tests": [
            {"id": "plain", "input": "p"},
            {"id": "b1", "input": "q", "assertions": [trig("skill-b")]},
            {"id": "a1", "input": "q", "assertions": [trig("skill-a")]},
            {"id": "a2", "input": "q", "assertions": [trig("skill-a")]},
            {"id": "b2", "input": "q", "assertions": [trig("skill-b")]},
        ]
    }
    result = transpile_suite(suite)
    assert list(result.files) == ["skill-b", "skill-a"]
    assert [c.id for c in result.files["skill-b"].evals] == [2, 5, 1]
    assert result.files["skill-b"].evals[-1].should_trigger is None


def test_trigger_without_skill_name_goes_to_no_skill_and_default_is_true():
    result = transpile_suite(
        {
            "tests": [
                {
                    "id": "t",
                    "input": "q",
                    "assertions": [{"type": "skill-trigger", "should_trigger": "false"}],
                }
            ]
        }
    )
    doc = only(result)
    assert (doc.skill_name, doc.evals[0].should_trigger) == ("_no-skill", True)


def test_unsafe_skill_names_are_sanitised_in_file_names():
    trig = [{"type": "skill-trigger", "skill": "a/b c"}, {"type": "skill-trigger", "skill": "pdf😀"}]
    result = transpile_suite({"tests": [{"id": "t", "input": "q", "assertions": trig}]})
    assert result.filenames() == {"a/b c": "a_b_c.evals.json", "pdf😀": "pdf__.evals.json"}


def test_dumps_is_json_stringify_with_two_spaces_and_a_newline():
    text = only(transpile_suite({"tests": [{"id": "t", "input": 'ünï "q"\n', "assertions": []}]})).dumps()
    assert (
        text
        == '{\n  "skill_name": "_no-skill",\n  "evals": [\n    {\n      "id": 1,\n      "prompt": "ünï \\"q\\"\\n",\n      "assertions": []\n    }\n  ]\n}\n'
    )


@pytest.mark.parametrize(
    ("suite", "message"),
    [
        ("not an object", "EVAL.yaml: invalid EVAL.yaml: expected a mapping at the top level, got a string"),
        ({}, "EVAL.yaml: invalid EVAL.yaml: missing 'tests' array"),
        ({"tests": {"a": 1}}, "EVAL.yaml: invalid EVAL.yaml: missing 'tests' array, got a mapping"),
        ({"tests": [None]}, "EVAL.yaml: test 1: a test must be a mapping with 'id' and 'input', got null"),
        (
            {"tests": [{"id": "t", "assertions": {"type": "contains"}}]},
            "EVAL.yaml: 'assertions' must be a list, got a mapping",
        ),
        (
            {"tests": [{"id": "t", "assertions": [None]}]},
            "EVAL.yaml: test 't': an assertion must be a mapping with a 'type', got null",
        ),
    ],
)
def test_invalid_suites_raise_one_line_errors(suite, message):
    with pytest.raises(InputFileError) as info:
        transpile_suite(suite)
    assert str(info.value) == message


def test_plain_string_assertions_are_dropped_with_a_warning():
    result = transpile_suite(
        {"tests": [{"id": "t", "input": "q", "assertions": ["Be polite", {"type": "is-json"}]}]}
    )
    assert only(result).evals[0].assertions == ["Output is valid JSON"]
    assert "plain-string assertion 'Be polite' is not transpiled" in result.warnings[0]


def test_errors_in_files_name_file_line_and_column(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "EVAL.yaml").write_text("tests:\n  - id: ok\n    input: q\n  - just a string\n", "utf-8")
    with pytest.raises(InputFileError) as info:
        transpile_file("EVAL.yaml")
    assert (
        str(info.value)
        == "EVAL.yaml:4:5: test 2: a test must be a mapping with 'id' and 'input', got a string"
    )


def test_yaml_1_2_scalars_render_like_agentv(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(
        "tests:\n  - id: t\n    input: q\n    assertions:\n"
        "      - {type: contains, value: yes}\n      - {type: equals, value: 012}\n"
        "      - {type: contains, value: 2024-01-01}\n      - {type: equals, value: 1.50}\n",
        "utf-8",
    )
    case = only(transpile_file(path)).evals[0]
    assert case.assertions == [
        "Output contains 'yes'",
        "Output exactly equals: 12",
        "Output contains '2024-01-01'",
        "Output exactly equals: 1.5",
    ]


def test_result_round_trips_through_json():
    doc = only(transpile_suite(CSV_SUITE))
    assert json.loads(doc.dumps()) == doc.to_json()


# -- AgentV's later formats -----------------------------------------------------------------------------

AGENTV_5 = Path(__file__).resolve().parent.parent / "data" / "transpile" / "agentv-5" / "csv-analyzer.EVAL.yaml"


def test_agentv_5_suite_reads_assert_without_deprecation_warnings():
    result = transpile_file(AGENTV_5)
    assert result.warnings == []
    (doc,) = result.files.values()
    assert [(case.id, case.should_trigger) for case in doc.evals] == [
        (1, True), (2, False), (3, True), (4, None), (5, None)]


def test_v2_19_assert_key_still_warns():
    suite = {"tests": [{"id": "t", "input": "hi", "assert": [{"type": "contains", "value": "x"}]}]}
    assert transpile_suite(suite).warnings == ["EVAL.yaml: Test 't': 'assert' is deprecated. Use 'assertions' instead."]


@pytest.mark.parametrize(
    ("entry", "texts", "trigger"),
    [
        ({"type": "llm-rubric", "value": "Is polite"}, ["Is polite"], None),
        ({"type": "agent-rubric", "value": ["A", {"outcome": "B"}, {"id": "c"}]}, ["A", "B", "c"], None),
        ({"type": "llm-grader", "prompt": "Clear"}, ["Clear"], None),
        ({"type": "script", "metric": "fmt", "value": "bun run graders/fmt.ts"},
         [code_judge_instruction("fmt")], None),
        ({"type": "code-grader", "command": ["bun", "run", "g/len.ts"]}, [code_judge_instruction("len")], None),
        ({"type": "skill-used", "value": "pdf"}, [], ("pdf", True)),
        ({"type": "not-skill-used", "value": {"name": "pdf"}}, [], ("pdf", False)),
        ({"type": "latency", "value": 300}, ["Response time under 300ms"], None),
        ({"type": "cost", "value": 0.5}, ["Cost under $0.5"], None),
        ({"type": "assert-set", "assert": []}, ["composite assertion"], None),
    ],
)
def test_later_assertion_types_render_as_their_v2_19_equivalents(entry, texts, trigger):
    suite = {"tests": [{"id": "t", "input": "hi", "assert": [entry]}]}
    result = transpile_suite(suite)
    ((skill, doc),) = result.files.items()
    assert doc.evals[0].assertions == texts
    assert (skill, doc.evals[0].should_trigger) == (trigger or (NO_SKILL, None))


def test_file_includes_expand_in_place_and_sorted(tmp_path):
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "b.yaml").write_text("- {id: b, input: B}\n")
    (tmp_path / "t" / "a.yaml").write_text("- {id: a1, input: A1}\n- {id: a2, input: A2}\n")
    (tmp_path / "t" / "c.jsonl").write_text('{"id": "c", "input": "C"}\n')
    (tmp_path / "suite.yaml").write_text("tests:\n  - {id: first, input: F}\n  - file://t/*.yaml\n"
                                          "  - file://t/c.jsonl\n  - file://none/*.yaml\n")
    result = transpile_file(tmp_path / "suite.yaml")
    assert [c.prompt for c in result.files[NO_SKILL].evals] == ["F", "A1", "A2", "B", "C"]
    assert [c.id for c in result.files[NO_SKILL].evals] == [1, 2, 3, 4, 5]
    assert result.warnings == [f"{tmp_path / 'suite.yaml'}:5:5: 'file://none/*.yaml' matches no files"]


def test_missing_file_include_names_file_and_line(tmp_path):
    (tmp_path / "suite.yaml").write_text("tests:\n  - {id: first, input: F}\n  - file://gone.yaml\n")
    with pytest.raises(InputFileError) as info:
        transpile_file(tmp_path / "suite.yaml")
    assert str(info.value) == (f"{tmp_path / 'suite.yaml'}:3:5: tests file 'gone.yaml' not found "
                               f"(looked for {tmp_path / 'gone.yaml'})")
