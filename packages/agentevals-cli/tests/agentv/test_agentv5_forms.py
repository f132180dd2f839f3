"""AgentV 5's ``metric:`` / ``value:`` forms of ``script`` and ``llm-rubric``, read with AgentV 5's meaning.

AgentV 5 (``grader-parser.ts``): ``metric`` names an assertion; a ``script`` runs ``command`` (argv list, or
a string run by the shell) and gets keys the parser does not know, ``value`` included, in ``config``; an
``llm-rubric``'s text ``value`` is the grading criteria, a list (or one item) is a rubric, ``min_score``
gates a score-range item, and ``criteria:`` / ``rubrics:`` / ``script:`` are refused with its advice.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest
from agentevals.config import parse_config
from agentevals.config.schema import config_json_schema
from agentevals.errors import ConfigError
from agentevals.results import Status, Verdict

from .test_llm_judge import prompts

SUITE = """\
# AgentV 5 assertions as eval_config.yaml entries (the `assert:` list of an EVAL.yaml test).
evaluators:
  - metric: keyword-check
    type: script
    command: [python, judges/payload_echo.py]
    description: Checks that the answer mentions Paris
    value: {keywords: [Paris, France]}
  - metric: names-paris
    type: llm-rubric
    value: Output identifies Paris as the capital of France
  - metric: checklist
    type: llm-rubric
    value:
      - Names Paris
      - {id: brevity, criteria: Answers in one sentence, weight: 2, required: false}
  - metric: correctness
    type: llm-rubric
    value: The answer is correct
    score_ranges: {0: Wrong, 5: Partly right, 8: Right}
    min_score: 0.7
"""


def rubric_judge(server: Any, **entry: Any) -> dict[str, Any]:
    return {"type": "llm-rubric", "metric": "quality", "model": "judge-model", "base_url": server.base_url,
            "api_key_env": "TEST_JUDGE_KEY", **entry}


def test_an_agentv_5_suite_matches_the_published_schema_and_loads(av: Any) -> None:
    import yaml

    jsonschema.validate(yaml.safe_load(SUITE), config_json_schema())
    config = parse_config(SUITE, source="eval_config.yaml", base_dir=av.data)
    script, text, checklist, ranged = (e.evaluator.config for e in config.evaluators)
    assert [c.name for c in (script, text, checklist, ranged)] == ["keyword-check", "names-paris", "checklist",
                                                                    "correctness"]
    assert script.command == ["python", "judges/payload_echo.py"]
    assert script.config == {"value": {"keywords": ["Paris", "France"]}}
    assert (text.criteria, text.prompt, text.rubrics) == ("Output identifies Paris as the capital of France",
                                                          None, None)
    assert [(r.id, r.outcome, r.weight, r.required) for r in checklist.rubrics] == [
        ("rubric-1", "Names Paris", 1.0, None), ("brevity", "Answers in one sentence", 2.0, False)]
    [item] = ranged.rubrics
    assert (item.id, item.outcome, item.min_score) == ("rubric-1", "The answer is correct", 0.7)
    assert [band.score_range for band in item.score_ranges] == [(0, 4), (5, 7), (8, 10)]


@pytest.mark.parametrize(("entry", "message"), [
    ("{metric: fmt, type: script, script: judges/fmt.py}",
     "script 'fmt': 'script' field has been removed. Use 'command' instead."),
    ("{metric: fmt, type: script, value: python judges/fmt.py}",
     "script 'fmt' needs 'command:' (an argv list, or a string run by the shell); in AgentV 5 'value:' is not the "
     "command but reaches the script as config.value"),
    ("{metric: q, type: llm-rubric, rubrics: [Names Paris]}", "llm-rubric 'q': unsupported llm-rubric field 'rubrics'. Use 'value' instead."),
    ("{metric: q, type: llm-rubric, criteria: Names Paris}", "llm-rubric 'q': unsupported llm-rubric field 'criteria'. Use 'value' instead."),
])
def test_what_agentv_5_refuses_is_a_config_error_on_its_line(entry: str, message: str, tmp_path: Path) -> None:
    text = f"evaluators:\n  - {{type: contains, value: Paris}}\n  - {entry}\n"
    with pytest.raises(ConfigError) as info:
        parse_config(text, source="eval_config.yaml", base_dir=tmp_path)
    assert str(info.value) == f"eval_config.yaml:3:5: evaluators[1]: entry: {message}"
    # The published schema refuses them too (a script without a command, a rubric's removed fields).
    if "script:" not in entry:
        import yaml

        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(yaml.safe_load(text), config_json_schema())


def test_script_value_reaches_the_script_as_config_value(av: Any) -> None:
    entry = {"type": "script", "metric": "kw", "command": ["python", "judges/payload_echo.py"],
             "value": ["Paris"], "config": {"max_words": 5}, "description": "echo"}
    result = av.run(entry, av.case("Paris."))
    assert (result.name, result.status) == ("kw", Status.PASSED)
    assert result.details["payload"]["config"] == {"value": ["Paris"], "max_words": 5, "description": "echo"}


def test_script_string_command_runs_through_the_shell(av: Any) -> None:
    entry = {"type": "script", "metric": "sh", "command": """printf '{"score": %s}' 0.25 | cat"""}
    assert av.run(entry, av.case("Paris.")).score == 0.25  # a pipe and a format string: the shell ran it


def test_llm_rubric_text_is_the_criteria_of_the_default_prompt(av: Any, chat_server: Any) -> None:
    chat_server.chat = lambda body: {"score": 0.9, "reasoning": "Names Paris."}
    result = av.run(rubric_judge(chat_server, value="Identifies Paris as the capital"), av.case("Paris."))
    assert (result.name, result.score, result.status) == ("quality", 0.9, Status.PASSED)
    [(_, user)] = prompts(chat_server)
    assert "[[ ## criteria ## ]]\nIdentifies Paris as the capital\n" in user
    assert user.endswith("[[ ## answer ## ]]\nParis.")  # the judge sees the answer it grades


def test_llm_rubric_list_is_a_checklist(av: Any, chat_server: Any) -> None:
    chat_server.chat = lambda body: {"checks": [{"id": "rubric-1", "satisfied": True, "reasoning": "yes"},
                                                {"id": "brevity", "satisfied": False, "reasoning": "two"}],
                                     "overall_reasoning": "."}
    value = ["Names Paris", {"id": "brevity", "criteria": "One sentence", "weight": 3, "required": False}]
    result = av.run(rubric_judge(chat_server, value=value), av.case("Paris."))
    assert (result.score, result.verdict) == (0.25, Verdict.FAIL)
    user = prompts(chat_server)[0][1]
    assert "- [rubric-1] (REQUIRED): Names Paris\n- [brevity] (weight: 3): One sentence" in user


@pytest.mark.parametrize(("score", "verdict"), [(6, Verdict.FAIL), (7, Verdict.BORDERLINE)])
def test_llm_rubric_min_score_gates_a_score_range_item(av: Any, chat_server: Any, score: int,
                                                      verdict: Verdict) -> None:
    chat_server.chat = lambda body: {"checks": [{"id": "rubric-1", "score": score}]}
    entry = rubric_judge(chat_server, value="Correct", score_ranges={0: "Wrong", 5: "Right"}, min_score=0.7)
    result = av.run(entry, av.case())
    assert (result.score, result.verdict) == (score / 10, verdict)
    assert "### Criterion: rubric-1 [REQUIRED: min score 7]" in prompts(chat_server)[0][1]
