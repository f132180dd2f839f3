"""AgentV's scoring rules by the format a config is written in: v2.19's (``borderline``) or the current ones.

The ``current`` cases port AgentV's own tests at its HEAD (5.3): ``composite-threshold.test.ts`` (the
``threshold`` and ``weighted_average`` aggregators, skipped members) and the ``assert-set`` cases of
``promptfoo-assertions.test.ts``. Members that score a given number are code judges (``script`` in AgentV 5's
spelling) whose command prints it; AgentV's ``skip`` member is one we cannot evaluate (an LLM rubric without
a key: NOT_EVALUATED).
"""

from __future__ import annotations

import asyncio
import textwrap
from typing import Any

import pytest
from agentevals.config import parse_config
from agentevals.results import MetricResult, Status, Verdict

PARIS = "Paris is the capital of France."  # AgentV's test candidate


def script(name: str, score: float, **extra: Any) -> dict[str, Any]:
    """An AgentV 5 ``script`` member that scores ``score``."""
    return {"type": "script", "metric": name, "command": f"cat > /dev/null; echo '{{\"score\": {score}}}'", **extra}


def skipped(name: str) -> dict[str, Any]:
    """A member that cannot be evaluated (AgentV's ``skip``): an LLM rubric whose key variable is unset."""
    return {"type": "llm-rubric", "metric": name, "value": "is correct", "api_key_env": "AGENTEVALS_TEST_NO_SUCH_KEY"}


def load(entry: dict[str, Any], **settings: Any) -> tuple[Any, list[str]]:
    import yaml

    config = parse_config(yaml.safe_dump({**settings, "evaluators": [entry]}), source="eval_config.yaml")
    return config.evaluators[0].evaluator, config.notes


def run(entry: dict[str, Any], av: Any, answer: str = PARIS, **settings: Any) -> MetricResult:
    evaluator, _ = load(entry, **settings)
    result = asyncio.run(evaluator.evaluate(av.case(answer)))
    assert isinstance(result, MetricResult)
    return result


def gate(members: list[dict[str, Any]], aggregator: dict[str, Any], kind: str = "assert-set") -> dict[str, Any]:
    return {"type": kind, "metric": "gate", "assert": members, "aggregator": aggregator}


# -- composite-threshold.test.ts: "CompositeGrader threshold aggregation" ---------------------------------

THRESHOLD_CASES = [
    # (member scores, threshold, AgentV's score, AgentV's verdict)
    pytest.param([1.0, 0.9, 0.85, 0.8], 0.5, 1.0, "pass", id="all children pass, threshold 0.5"),
    pytest.param([1.0, 0.9, 0.3, 0.1], 0.5, 0.5, "pass", id="2/4 pass, threshold 0.5"),
    pytest.param([1.0, 0.3, 0.2, 0.1], 0.5, 0.25, "fail", id="1/4 pass, threshold 0.5"),
    pytest.param([1.0, 0.7, 0.3, 0.1], 0.5, 0.25, "fail", id="score 0.7 child is fail, only pass verdicts count"),
    pytest.param([0.3, 0.1], 0.0, 0.0, "pass", id="no children pass, threshold 0.0"),
    pytest.param([1.0, 0.9, 0.85, 0.3], 1.0, 0.75, "fail", id="3/4 pass, threshold 1.0"),
]


@pytest.mark.parametrize(("scores", "threshold", "score", "verdict"), THRESHOLD_CASES)
def test_threshold_aggregation_as_agentv_now(av, scores, threshold, score, verdict):
    members = [script(name, s) for name, s in zip("abcd", scores, strict=False)]
    result = run(gate(members, {"type": "threshold", "threshold": threshold}), av)
    assert (result.score, result.verdict) == (score, Verdict(verdict))
    assert result.status == (Status.PASSED if verdict == "pass" else Status.FAILED)
    assert [s["name"] for s in result.details["scores"]] == list("abcd")[:len(scores)]
    assert (result.details["aggregator"], result.details["agentv_rules"]) == ("threshold", "current")


def test_the_same_members_under_v2_19s_rules_count_borderline_as_passing(av):
    """What v2.19 did, and still does for a config in its format: 0.7 is borderline, which passes a threshold."""
    members = [{"type": "code_judge", "name": name, "command": script(name, s)["command"]}
               for name, s in zip("abcd", [1.0, 0.7, 0.3, 0.1], strict=True)]
    entry = {"type": "composite", "name": "gate", "evaluators": members,
             "aggregator": {"type": "threshold", "threshold": 0.5}}
    result = run(entry, av)
    assert (result.score, result.verdict, result.status) == (0.5, Verdict.PASS, Status.PASSED)
    assert result.details["agentv_rules"] == "2.19"
    assert [s["verdict"] for s in result.details["scores"]] == ["pass", "borderline", "fail", "fail"]
    forced = run(entry, av, agentv_rules="current")  # the config can choose AgentV's current rules
    assert (forced.score, forced.verdict, forced.status) == (0.25, Verdict.FAIL, Status.FAILED)
    assert [s["verdict"] for s in forced.details["scores"]] == ["pass", "fail", "fail", "fail"]


def test_a_config_in_the_current_format_says_so_once(av):
    _, notes = load(gate([script("a", 1.0)], {"type": "threshold", "threshold": 0.5}))
    assert notes == ["eval_config.yaml:2:3: AgentV entries are scored under AgentV's current rules (no 'borderline' "
                     "verdict: below 0.8 is 'fail'), as this entry is in its later format (type: assert-set); set "
                     "agentv_rules: 2.19 for v2.19's"]
    _, chosen = load(gate([script("a", 1.0)], {"type": "threshold", "threshold": 0.5}), agentv_rules="current")
    assert chosen == []
    _, old = load({"type": "composite", "name": "c", "evaluators": [{"type": "contains", "value": "Paris"}],
                   "aggregator": {"type": "weighted_average"}})
    assert old == []


# -- composite-threshold.test.ts: "CompositeGrader skip-verdict handling" ---------------------------------

def test_weighted_average_leaves_skipped_members_out(av):
    result = run(gate([script("a", 1.0), skipped("b"), script("c", 0.8)], {"type": "weighted_average"}), av)
    assert (result.score, result.verdict, result.status) == (0.9, Verdict.PASS, Status.PASSED)


@pytest.mark.parametrize("aggregator", [{"type": "weighted_average"}, {"type": "threshold", "threshold": 0.5}])
def test_all_members_skipped_is_not_evaluated(av, aggregator):
    result = run(gate([skipped("a"), skipped("b")], aggregator), av)
    assert result.status == Status.NOT_EVALUATED  # AgentV: verdict skip, score 0
    assert result.reason.startswith("no member was evaluated")


def test_threshold_leaves_skipped_members_out_of_the_count(av):
    result = run(gate([script("a", 1.0), skipped("b"), script("c", 0.2)], {"type": "threshold", "threshold": 0.5}), av)
    assert (result.score, result.verdict, result.status) == (0.5, Verdict.PASS, Status.PASSED)
    assert result.reasoning.startswith("1/2 evaluators passed")


def test_skipped_members_still_appear_in_scores(av):
    result = run(gate([script("a", 1.0), skipped("b")], {"type": "weighted_average"}), av)
    assert [(s["name"], s["status"]) for s in result.details["scores"]] == [("a", "PASSED"), ("b", "NOT_EVALUATED")]


# -- promptfoo-assertions.test.ts: assert-set (no aggregator) ---------------------------------------------

def contains(name: str, value: str, **extra: Any) -> dict[str, Any]:
    return {"type": "contains", "metric": name, "value": value, **extra}


def assert_set(members: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"type": "assert-set", "metric": "set", "assert": members, **extra}


def test_assert_set_aggregates_its_children(av):
    result = run(assert_set([contains("contains", "Paris"), {"type": "starts-with", "metric": "starts",
                                                             "value": "Paris"}], threshold=0.5), av)
    assert result.score == 1
    assert [s["type"] for s in result.details["scores"]] == ["contains", "starts_with"]


def test_assert_set_without_threshold_follows_its_childrens_pass_fail(av):
    result = run(assert_set([contains("contains", "Paris"), contains("missing", "Berlin")]), av)
    assert (result.score, result.verdict, result.status) == (0.5, Verdict.FAIL, Status.FAILED)


def test_assert_set_threshold_overrides_the_childrens_pass_fail(av):
    result = run(assert_set([contains("contains", "Paris"), contains("missing", "Berlin")], threshold=0.5), av)
    assert (result.score, result.verdict, result.status) == (0.5, Verdict.PASS, Status.PASSED)


def test_assert_set_weights_its_children(av):
    result = run(assert_set([contains("contains", "Paris", weight=2), contains("missing", "Berlin", weight=1)],
                            threshold=0.6), av)
    assert result.score == pytest.approx(2 / 3)
    assert (result.verdict, result.status) == (Verdict.PASS, Status.PASSED)
    assert [s["weight"] for s in result.details["scores"]] == [2, 1]


def test_a_zero_weight_childs_failure_does_not_fail_an_assert_set_without_threshold(av):
    result = run(assert_set([contains("contains", "Paris"), contains("diagnostic", "Berlin", weight=0)]), av)
    assert (result.score, result.verdict, result.status) == (1, Verdict.PASS, Status.PASSED)


def test_assert_set_children_are_named_by_metric_and_nested_scores_kept(av):
    nested = {"type": "assert-set", "metric": "nested_metric", "threshold": 1,
              "assert": [{"type": "starts-with", "metric": "starts_metric", "value": "Paris"}]}
    result = run(assert_set([contains("text_match", "Paris"), nested], threshold=0.5), av)
    assert [s["name"] for s in result.details["scores"]] == ["text_match", "nested_metric"]
    assert [s["name"] for s in result.details["scores"][1]["details"]["scores"]] == ["starts_metric"]


def test_a_zero_score_script_child_does_not_pass_an_assert_set_threshold(av):
    result = run(assert_set([script("js-zero", 0), contains("contains", "Paris")], threshold=1), av)
    assert (result.score, result.verdict, result.status) == (0.5, Verdict.FAIL, Status.FAILED)
    first = result.details["scores"][0]
    assert (first["name"], first["score"], first["verdict"]) == ("js-zero", 0, "fail")


def test_a_zero_score_javascript_child_does_not_pass_an_assert_set_threshold(av):
    """AgentV's own form of the test above: the member is a ``javascript`` assertion scoring 0."""
    result = run(assert_set([{"type": "javascript", "metric": "js-zero", "value": "0"}, contains("contains", "Paris")],
                            threshold=1), av)
    assert (result.score, result.verdict, result.status) == (0.5, Verdict.FAIL, Status.FAILED)
    first = result.details["scores"][0]
    assert (first["name"], first["type"], first["score"], first["verdict"]) == ("js-zero", "javascript", 0, "fail")


def test_assert_set_config_reaches_its_javascript_members(av):
    result = run(assert_set([{"type": "javascript", "metric": "configured-js",
                              "value": 'context.config.expectedCity === "Paris"'}], config={"expectedCity": "Paris"}), av)
    assert (result.score, result.verdict, result.status) == (1, Verdict.PASS, Status.PASSED)
    wrong = run(assert_set([{"type": "javascript", "metric": "configured-js", "config": {"expectedCity": "Rome"},
                             "value": 'context.config.expectedCity === "Paris"'}], config={"expectedCity": "Paris"}), av)
    assert wrong.status == Status.FAILED  # the member's own config wins


# -- promptfoo-assertions.test.ts: the javascript cases ---------------------------------------------------

JAVASCRIPT_CASES = [
    # (value, threshold, AgentV's score, AgentV's verdict)
    pytest.param("output.includes('Paris') && context.expectedOutput[0].content.includes('Paris')", None, 1, "pass",
                 id="expression over output and context"),
    pytest.param("0.5", 0.75, 0.5, "fail", id="numeric result below the threshold"),
    pytest.param("0", None, 0, "fail", id="numeric zero without threshold fails"),
    pytest.param("0", 0, 0, "pass", id="explicit threshold zero passes"),
    pytest.param("const n = output.length; n > 5", None, 1, "pass", id="declaration then expression"),
    pytest.param("if (output.startsWith('Paris')) {\n  return {score: 0.9, reason: 'starts right'};\n}\nreturn false",
                 0.8, 0.9, "pass", id="function body returning an object"),
    pytest.param("(() => { throw new Error('boom'); })()", None, 0, "fail", id="a throw scores 0"),
    pytest.param("throw new Error('boom')", None, 0, "fail", id="a statement is not an expression, as in AgentV"),
]


@pytest.mark.parametrize("value, threshold, score, verdict", JAVASCRIPT_CASES)
def test_javascript_assertion_as_agentv(av, value, threshold, score, verdict):
    entry = {"type": "javascript", "metric": "js", "value": value.replace("\\n", "\n"),
             **({"threshold": threshold} if threshold is not None else {})}
    ctx = av.case(PARIS, expected="Paris")
    evaluator, _ = load(entry)
    result = asyncio.run(evaluator.evaluate(ctx))
    assert (result.score, result.verdict.value) == (score, verdict), result
    assert result.status == (Status.PASSED if verdict == "pass" else Status.FAILED)
    if "throw" in value:
        assert result.misses == ["Javascript assertion failed: " + ("boom" if "=>" in value else "Unexpected token 'throw'")]


def test_composite_without_aggregator_is_still_an_error():
    """v2.19's ``composite`` needs an aggregator; only AgentV 5's ``assert-set`` has a default."""
    from agentevals.errors import ConfigError

    with pytest.raises(ConfigError, match="aggregator"):
        parse_config(textwrap.dedent("""
            evaluators:
              - {type: composite, name: c, evaluators: [{type: contains, value: Paris}]}
        """))
