"""``agentevals.evaluate``: arguments are checked like the CLI's flags before anything runs."""

from __future__ import annotations

from pathlib import Path

import agentevals
import pytest

ADK = Path(__file__).resolve().parent.parent / "data" / "adk"
HELM = ADK / "helm.json"
ES_HELM = ADK / "eval_set_helm.json"


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"threshold": 3}, "threshold must be a number between 0 and 1, got 3"),
    ({"threshold": float("nan")}, "threshold must be a number between 0 and 1, got nan"),
    ({"group_by": "session"}, "group_by must be one of auto, trace, conversation, got 'session'"),
    ({"trajectory_match_type": "fuzzy"}, "trajectory_match_type must be one of exact, in_order, any_order, got 'fuzzy'"),
    ({"pass_at_k": [0]}, "pass_at_k values must be integers >= 1, got 0"),
    ({"metrics": "response_match_score"}, "metrics must be a list of metric names, not a string"),
])
def test_bad_arguments_are_config_errors(kwargs, message):
    with pytest.raises(agentevals.ConfigError) as info:
        agentevals.evaluate([HELM], eval_set=ES_HELM, **kwargs)
    assert str(info.value) == message


@pytest.mark.parametrize("single", [str(HELM), HELM])
def test_one_trace_path_is_one_input(single):
    run = agentevals.evaluate(single, eval_set=ES_HELM)
    assert run.input_errors == []
    assert [(c.case_id, [m.status.value for m in c.metrics]) for c in run.cases] == [
        ("3e289017fe03ffd7c4145316d2eb3d0d", ["PASSED"])]


def test_credential_refs_reach_the_run_and_say_which_keys_cannot_be_used(tmp_path, monkeypatch):
    """``evaluate(credential_refs=…)``: a metric naming a reference that cannot be resolved is an ERROR row (one
    line naming the reference and the evaluator) and the others are scored; where a judge key cannot be used, a
    note says why (no LLM judge, Vertex AI, ``judge_base_url`` without ``credential_ref``)."""
    monkeypatch.delenv("AE_TEST_NO_SUCH_KEY", raising=False)
    config = tmp_path / "eval_config.yaml"
    config.write_text(
        "evaluators:\n"
        "  - {name: final_response_match_v2, type: builtin, credential_ref: judge}\n"
        "  - {name: hallucinations_v1, type: builtin, judge_base_url: 'http://127.0.0.1:9/v1'}\n"
        "  - {name: safety_v1, type: builtin, credential_ref: judge}\n"
        "  - {name: tool_trajectory_avg_score, type: builtin, credentialRef: judge}\n")
    run = agentevals.evaluate(HELM, eval_set=ES_HELM, config=config,
                              credential_refs={"judge": {"kind": "env", "name": "AE_TEST_NO_SUCH_KEY"}})
    (case,) = run.cases
    rows = {m.name: (m.status.value, m.error) for m in case.metrics}
    assert rows["final_response_match_v2"] == (
        "ERROR", "evaluator 'final_response_match_v2': credential_ref 'judge' could not be resolved: env: "
                 "environment variable 'AE_TEST_NO_SUCH_KEY' is not set")
    assert rows["tool_trajectory_avg_score"] == ("PASSED", None)
    where = f"{config}"
    assert run.notes == [
        f"{where}:3:5: evaluator 'hallucinations_v1': 'judge_base_url' not used without 'credential_ref' (as in "
        "agentevals-cli 0.11): the judge reads its credentials and endpoint from the environment",
        f"{where}:4:5: evaluator 'safety_v1': 'credential_ref' not used: metric 'safety_v1' has no LLM judge "
        "(scored through Vertex AI with the environment's credentials)",
        f"{where}:5:5: evaluator 'tool_trajectory_avg_score': 'credential_ref' not used: metric "
        "'tool_trajectory_avg_score' has no LLM judge",
    ]


def test_malformed_credential_refs_are_a_config_error():
    with pytest.raises(agentevals.ConfigError) as info:
        agentevals.evaluate([HELM], eval_set=ES_HELM, credential_refs={"judge": {"name": "X"}})
    assert str(info.value) == "credential_refs: 'judge': missing 'kind' (e.g. \"env\")"
