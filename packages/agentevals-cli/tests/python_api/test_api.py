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
