"""Evaluators in MASEval's documented style (our own code), used by the Python API tests."""

from __future__ import annotations

from agentevals import Evaluator


class ToolUsageEvaluator(Evaluator):
    """Seed 003's example: was the expected tool used, and did it return the expected result?"""

    def __init__(self, task, environment, user=None):
        super().__init__(task, environment, user)
        self.expected_tool = "helm_list_releases"
        self.expected_result = task.evaluation_data.get("correct_answer")

    def filter_traces(self, traces):
        return traces.get("tools", {}).get(self.expected_tool, {})

    def __call__(self, traces, final_answer=None):
        invocations = traces.get("invocations", [])
        if not invocations:
            return {"tool_used": False, "correct_result": False, "accuracy": 0.0}
        tool_output = invocations[0].get("outputs", [])
        correct = tool_output == self.expected_result
        return {"tool_used": True, "correct_result": correct, "accuracy": 1.0 if correct else 0.0}


class AlternativeToolEvaluator(ToolUsageEvaluator):
    """Same logic, another tool: only filter_traces changes."""

    def filter_traces(self, traces):
        return traces.get("tools", {}).get("k8s_get_resources", {})


class AnswerMentionsEvaluator(Evaluator):
    """Agent-message filter with a `score` metric and extra breakdown data."""

    def __init__(self, task, environment, user=None, *, word="kagent"):
        super().__init__(task, environment, user)
        self.word = word

    def filter_traces(self, traces):
        (agent,) = traces["agents"].values()
        return agent

    def __call__(self, traces, final_answer=None):
        roles = [m["role"] for m in traces["messages"]]
        hit = self.word in (final_answer or "")
        return {"score": 1.0 if hit else 0.0, "roles": roles, "message_count": traces["message_count"]}


class CrashingEvaluator(Evaluator):
    def filter_traces(self, traces):
        return traces

    def __call__(self, traces, final_answer=None):
        raise RuntimeError("judge exploded")


class EnvironmentEvaluator(Evaluator):
    """Reads the environment (resource + session attributes) and the task."""

    def filter_traces(self, traces):
        return traces["environment"]

    def __call__(self, traces, final_answer=None):
        return {"service": self.environment.resource.get("service.name"), "session": self.environment.session_id,
                "query": self.task.query, "has_user": self.user is not None}
